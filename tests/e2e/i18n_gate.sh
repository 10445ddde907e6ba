#!/usr/bin/env bash
# gpuwhy gate speaks the user's language on its own lines (serving, loops,
# metrics, draining, stopped), in its refusals' messages and in its start-up
# errors, under the marker language of i18n_lib.bash; the access log, the
# error body's code and the Prometheus names stay English.
set -u
T=$(mktemp -d /tmp/gpuwhy-i18n-gate.XXXXXX)
. "$(dirname "$0")/gate_lib.bash"
: "${GPUWHY_BUILD:?}" "${GPUWHY_SRC:?}"
. "$GPUWHY_SRC/tests/e2e/i18n_lib.bash"
command -v msgfmt >/dev/null || skip "gettext tools missing"

i18n_marker_catalogue "$T/mark" || fail "marker catalogue"
export GPUWHY_LOCALEDIR="$T/mark" LANGUAGE=qaa
# unmarked FILE WHAT [IGNORE]: fail on lines of English prose without the mark.
unmarked() {
	i18n_unmarked "$1" "${2:-}" >"$T/bad" || fail "gate: lines outside gettext:
$(cat "$T/bad")"
}

start_sim up --batch-ms 0 --item-ms 0
printf '{"keys": {"sk-alice": {"name": "alice"}}}\n' >"$T/keys.json"
start_gate mk --upstream "http://127.0.0.1:$SIM_PORT@0" --keys "$T/keys.json" --require-keys
G="http://127.0.0.1:$GATE_PORT"
# 401 without a key: the message is for the person who sent it, the code for machines.
curl -sS --max-time 10 -o "$T/body.json" "$G/v1/embeddings" -d '{"input":["x"]}'
grep -q '"message":"◊an API key' "$T/body.json" || fail "401 body not translated: $(cat "$T/body.json")"
grep -q '"code":"unknown_key"' "$T/body.json" || fail "401 body lost its code: $(cat "$T/body.json")"
curl -fsS --max-time 10 "http://127.0.0.1:$METRICS_PORT/metrics" >"$T/metrics"
grep -q '^gpuwhy_gate_requests_total ' "$T/metrics" || fail "metrics names changed"
grep -q '◊' "$T/metrics" && fail "metrics hold translated text"
kill -TERM "$GATE_PID_mk"
wait "$GATE_PID_mk" || fail "gate exit $?"
grep -q '"reason":"an API key' "$T/access-mk.jsonl" || fail "access log not English: $(cat "$T/access-mk.jsonl")"
grep -q '◊' "$T/access-mk.jsonl" && fail "access log holds translated text"
grep -q 'stopped' "$T/gate-mk.log" || fail "gate did not say it stopped: $(cat "$T/gate-mk.log")"
unmarked "$T/gate-mk.log"

# An upstream that is down: the 502's message in the user's language (the reason
# built from the upstream's URL and libcurl's words), the access log in English.
start_gate dn --upstream "http://127.0.0.1:1"
curl -sS --max-time 10 -o "$T/down.json" "http://127.0.0.1:$GATE_PORT/health"
grep -q '"message":"◊upstream http://127.0.0.1:1 is unreachable' "$T/down.json" ||
	fail "502 body not translated: $(cat "$T/down.json")"
kill -TERM "$GATE_PID_dn"
wait "$GATE_PID_dn" || fail "gate exit $?"
grep -q '"reason":"upstream http://127.0.0.1:1 is unreachable' "$T/access-dn.jsonl" ||
	fail "access log not English: $(cat "$T/access-dn.jsonl")"

# Start-up errors: the why and the hint (what the user typed stays).
U="--upstream http://127.0.0.1:1"
for args in "--upstream ftp://x" "$U --goal fast" "$U --listen 0.0.0.0:0" "$U --batch-delay 5ms" \
	"$U --batch v1"; do
	# shellcheck disable=SC2086
	timeout 20 "$GPUWHY" --sim h100x1 gate $args 2>"$T/err" && fail "gate $args exited 0"
	[ -s "$T/err" ] || fail "gate $args: no message"
	grep -q '◊' "$T/err" || fail "gate $args: not translated: $(cat "$T/err")"
	unmarked "$T/err"
done
exit 0
