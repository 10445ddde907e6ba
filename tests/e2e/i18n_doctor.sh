#!/usr/bin/env bash
# doctor and error lines speak the user's language: under a test language whose
# catalogue brackets every message ("◊" + message + "◆", built from the template),
# no English prose is left once the bracketed spans are cut out, so not one piece
# of a composed doctor result, fix or error line escapes gettext. Under zh_CN the
# text is Chinese, `--lang en` is English, `doctor --format json` is byte-identical
# and exit codes do not change.
set -uo pipefail
: "${GPUWHY:?}" "${GPUWHY_BUILD:?}" "${GPUWHY_SRC:?}"
. "$GPUWHY_SRC/tests/e2e/i18n_lib.bash"
[ -e "$GPUWHY_BUILD/sim/libnvidia-ml.so.1" ] || { echo "no simulated NVML built"; exit 77; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export GPUWHY_SIM_STATE="$tmp/state"
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER GPUWHY_SIM_TIME GPUWHY_GPUS LANGUAGE LC_ALL LC_MESSAGES

# The bracket catalogue ("qab": ISO 639's range for local use), from BUILD/gpuwhy.pot.
bracket_catalogue() {
	local dir="$1"
	mkdir -p "$dir/qab/LC_MESSAGES"
	sed -e 's/charset=CHARSET/charset=UTF-8/' \
		-e 's/^"Plural-Forms: .*"$/"Plural-Forms: nplurals=2; plural=(n != 1);\\n"/' \
		"$GPUWHY_BUILD/gpuwhy.pot" | msgen - 2>/dev/null |
		msgfilter --keep-header -o "$dir/qab.po" sed -e 's/%[-0-9.*]*s/◆&◊/g' -e '1s/^/◊/' \
			-e '$s/$/◆/' 2>/dev/null &&
		msgfmt -o "$dir/qab/LC_MESSAGES/gpuwhy.mo" "$dir/qab.po"
}
bracket_catalogue "$tmp/loc" || fail "the bracket catalogue does not build from the template"
marked() { GPUWHY_LOCALEDIR="$tmp/loc" LANG=C timeout 120 "$GPUWHY" --lang qab "$@"; }

# FILE -> FILE.rest: the text left outside every bracketed message (innermost first:
# a translated piece can be the argument of another). The catalogue closes the
# bracket around each %s, so an argument's text counts as outside unless it is a
# translated message itself. "gpuwhy: WHAT: " names the input and doctor's check
# ids are names: neither is translated.
outside() {
	perl -CSD -Mutf8 -0777 -pe '1 while s/◊[^◊◆]*◆//g; s/[◊◆]//g' "$1" |
		sed -E -e 's/^gpuwhy: [^:]+: //' -e 's/^ *[a-z]+\.[a-z_]+ {2,}//' >"$1.rest"
}
# unmarked FILE [IGNORE]: fail on English prose outside the marked messages.
unmarked() {
	outside "$1"
	i18n_unmarked "$1.rest" "${2:-}" && return 0
	echo "--- $1:" >&2
	cat "$1" >&2
	fail "English text that escapes gettext in $1 (lines above)"
}

# ---- doctor against simulated machines: every check, and --port/--need-mem ----
n=0
for s in h100x1 a100x2-pcie-degraded rtx4090-throttle h100x1-lost l4x2-foreign h100x8-nvlink apu-780m; do
	"$GPUWHY" sim list | grep -qx "$s" || continue
	out="$tmp/doctor-$s"
	timeout 120 "$GPUWHY" --sim "$s" doctor --port 1 --need-mem 20G >"$out.en" 2>&1
	rc_en=$?
	marked --sim "$s" doctor --port 1 --need-mem 20G >"$out" 2>&1
	rc=$?
	[ "$rc" -eq "$rc_en" ] || fail "doctor on $s: exit $rc in the test language, $rc_en in English"
	[ "$(wc -l <"$out")" -eq "$(wc -l <"$out.en")" ] || fail "doctor on $s: line count changed"
	unmarked "$out"
	n=$((n + 1))
done
[ "$n" -ge 3 ] || fail "only $n simulated scenarios found"
marked doctor --list >"$tmp/list" || fail "doctor --list"
unmarked "$tmp/list"

# ---- doctor without a driver (no simulated GPU either) ----
if [ ! -e /proc/driver/nvidia/version ]; then
	(
		unset GPUWHY_NVML GPUWHY_SIM_SCENARIO
		marked doctor >"$tmp/nodriver" 2>&1
		echo $? >"$tmp/nodriver.rc"
	)
	[ "$(cat "$tmp/nodriver.rc")" -eq 1 ] || fail "doctor without a driver: exit $(cat "$tmp/nodriver.rc")"
	# The device layer's own reason (it names the missing library) is quoted as evidence.
	unmarked "$tmp/nodriver" 'libnvidia-ml\.so\.1 not found'
fi

# ---- a sample of errors from different commands: one line, same exit code ----
echo junk >"$tmp/bad.gpuwhy"
mkdir -p "$tmp/sw"
errors=(
	"doctor --port 0" "doctor --port 80,x" "doctor --need-mem lots" "doctor --python="
	"report $tmp/missing.gpuwhy" "report $tmp/bad.gpuwhy" "export --table bogus $tmp/bad.gpuwhy"
	"export" "dmon -d x" "dmon -c x" "exporter --collectors $tmp/missing.csv"
	"exporter --listen nonsense" "--sim h100x1 sim train --gpu 5" "sim train --gpu 0"
	"sim check" "sweep" "sweep -o $tmp/sw/a -- true"
	"sweep -o $tmp/sw/b --vary x=1,1 -- true {x}" "sweep -o $tmp/sw/c --vary x=1,2 -- true"
	"sweep -o $tmp/sw/d --search x=a..b -- true {x}" "sweep --resume $tmp/nowhere"
	"sweep -o $tmp/sw/e --duration x --vary x=1,2 -- true {x}"
	"sweep -o $tmp/sw/f --vary x=1,2 -- true {y}" "--sim h100x1 sim serve --listen bogus"
)
for args in "${errors[@]}"; do
	# shellcheck disable=SC2086
	"$GPUWHY" $args >/dev/null 2>"$tmp/err.en" </dev/null
	rc_en=$?
	# shellcheck disable=SC2086
	marked $args >/dev/null 2>"$tmp/err" </dev/null
	rc=$?
	[ "$rc_en" -ge 2 ] || fail "$args: exit $rc_en, want an error"
	[ "$rc" -eq "$rc_en" ] || fail "$args: exit $rc in the test language, $rc_en in English"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$args: not one line: $(cat "$tmp/err")"
	grep -q '^gpuwhy: [^:]*: ◊' "$tmp/err" || fail "$args: the reason is not translated: $(cat "$tmp/err")"
	# strerror's text is the C library's (translated by its own catalogues).
	unmarked "$tmp/err" 'No such file or directory|Permission denied|Is a directory'

done

# ---- sweep's human output: plan, progress, table, best, knee, why ----
sweep_args() { # DIR [OPTION...]
	local d=$1
	shift
	echo --sim h100x1 sweep -o "$d" "$@" --vary workers=1,2 --interval 100ms -- \
		"$GPUWHY" sim train --steps 15 --workers {workers} --cpu-ms 1 --gpu-ms 20
}
# shellcheck disable=SC2046
marked $(sweep_args "$tmp/sweep-plan" --dry-run) >"$tmp/plan" 2>&1 || fail "sweep --dry-run"
# Its lines of recording and command are the sweep's own data.
unmarked "$tmp/plan" '^  [^ ]+\.gpuwhy '
# shellcheck disable=SC2046
marked $(sweep_args "$tmp/sweep-marked") >"$tmp/sweep" 2>&1 || fail "sweep: $(cat "$tmp/sweep")"
# The top finding's title is the diagnosis's text (results.json has it): cut it out.
python3 - "$tmp/sweep-marked/results.json" "$tmp/sweep" <<'PY' || fail "results.json"
import json, sys
configs = json.load(open(sys.argv[1]))["configurations"]
titles = {c.get("top_finding_title") for c in configs} - {None}
text = open(sys.argv[2], encoding="utf-8").read()
for t in titles:
    text = text.replace(t, "")
open(sys.argv[2], "w", encoding="utf-8").write(text)
PY
sed -i -E 's/^gpuwhy sweep: //' "$tmp/sweep"
unmarked "$tmp/sweep"
# shellcheck disable=SC2046
LANG=zh_CN.UTF-8 "$GPUWHY" $(sweep_args "$tmp/sweep-zh") >"$tmp/sweep.zh" 2>&1 ||
	fail "sweep under zh_CN: $(cat "$tmp/sweep.zh")"
LC_ALL=C.UTF-8 grep -qP '^原因  .*[\x{4e00}-\x{9fff}]' "$tmp/sweep-zh/results.txt" ||
	fail "results.txt has no Chinese why: $(cat "$tmp/sweep-zh/results.txt")"
LC_ALL=C.UTF-8 grep -qP '[\x{4e00}-\x{9fff}]' "$tmp/sweep-zh/results.json" &&
	fail "results.json holds Chinese"

# ---- Chinese: doctor and errors; exit codes and JSON unchanged; --lang en ----
# Scenario time pinned, so that runs moments apart read the same values.
export GPUWHY_SIM_TIME=30
cjk='[\x{4e00}-\x{9fff}]'
LANG=zh_CN.UTF-8 "$GPUWHY" --sim a100x2-pcie-degraded doctor >"$tmp/zh" 2>&1
rc_zh=$?
LANG=C "$GPUWHY" --sim a100x2-pcie-degraded doctor >"$tmp/c" 2>&1
rc_c=$?
[ "$rc_zh" -eq "$rc_c" ] || fail "doctor exit $rc_zh under zh_CN, $rc_c in C"
grep -q '^警告  gpus\.pcie_link  .*修复：' "$tmp/zh" || fail "no Chinese pcie_link warning: $(cat "$tmp/zh")"
grep -q '^共 [0-9]* 项检查' "$tmp/zh" || fail "no Chinese summary"
LANG=zh_CN.UTF-8 "$GPUWHY" --lang en --sim a100x2-pcie-degraded doctor >"$tmp/en" 2>&1
LC_ALL=C.UTF-8 grep -qP "$cjk" "$tmp/en" && fail "--lang en under zh_CN prints Chinese"
cmp -s "$tmp/en" "$tmp/c" || fail "--lang en differs from the C locale"
for s in a100x2-pcie-degraded h100x1-lost; do
	LANG=zh_CN.UTF-8 "$GPUWHY" --sim "$s" doctor --format json --port 1 --need-mem 20G >"$tmp/zh.json"
	a=$?
	LANG=C "$GPUWHY" --sim "$s" doctor --format json --port 1 --need-mem 20G >"$tmp/c.json"
	b=$?
	[ "$a" -eq "$b" ] || fail "doctor --format json on $s: exit $a under zh_CN, $b in C"
	cmp -s "$tmp/zh.json" "$tmp/c.json" || fail "doctor --format json on $s differs under zh_CN"
done
LANG=zh_CN.UTF-8 "$GPUWHY" doctor --need-mem lots 2>"$tmp/err"
[ $? -eq 2 ] || fail "doctor --need-mem lots: exit code under zh_CN"
grep -q '^gpuwhy: --need-mem: 无效的大小“lots”（例如 20G 或 512M 这样的大小）$' "$tmp/err" ||
	fail "Chinese error: $(cat "$tmp/err")"
LANG=zh_CN.UTF-8 "$GPUWHY" report "$tmp/missing.gpuwhy" 2>"$tmp/err"
[ $? -eq 3 ] || fail "report of a missing file: exit code under zh_CN"
LC_ALL=C.UTF-8 grep -qP "^gpuwhy: \Q$tmp/missing.gpuwhy\E: .*$cjk" "$tmp/err" || fail "Chinese error: $(cat "$tmp/err")"
# ---- the Python probe's notes, against the stand-in frameworks (no GPU, then the
# simulated one): ONNX Runtime's providers and its CUDA library, TensorFlow's fix,
# torch installed twice. The library's own loader error is its text, not ours.
if command -v python3 >/dev/null && python3 -c 'import sys; sys.exit(sys.version_info < (3, 8))'; then
	site="$GPUWHY_SRC/tests/fixtures/doctor/pysite"
	for sim in "" "--sim h100x1"; do
		# shellcheck disable=SC2086
		PYTHONPATH="$site/site:$site/site2" marked $sim doctor --python python3 >"$tmp/py" 2>&1
		grep -q 'python\.onnxruntime' "$tmp/py" || fail "no onnxruntime result: $(cat "$tmp/py")"
		sed -i -E 's/: file too short//; s/: invalid ELF header//' "$tmp/py"
		# The device layer's own reason is quoted as evidence (as without a driver above).
		unmarked "$tmp/py" 'libnvidia-ml\.so\.1 not found'
	done
fi
echo "PASS"
