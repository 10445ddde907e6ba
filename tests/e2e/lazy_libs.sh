#!/usr/bin/env bash
# libcurl and libmicrohttpd are opened by the commands that use them
# (gate, sim serve, the exporter), and ISA-L by the trace reader, never linked: the binary does not name
# them, other commands do not load them, the gate still serves through them,
# and a gate without libcurl stops at start with one line and exit 3.
set -u
T=$(mktemp -d /tmp/gpuwhy-lazy-libs.XXXXXX)
. "$(dirname "$0")/gate_lib.bash"
command -v readelf >/dev/null || skip "readelf missing"

needed=$(readelf -d "$GPUWHY" | awk '/NEEDED/ { print $NF }')
[ -n "$needed" ] || fail "readelf lists no NEEDED entry of $GPUWHY"
for lib in libcurl libmicrohttpd libgnutls libssl libnghttp2 libisal; do
	if grep -q "\[$lib" <<<"$needed"; then
		fail "$GPUWHY links $lib: $(tr '\n' ' ' <<<"$needed")"
	fi
done

# A command that serves nothing loads neither (LD_DEBUG names every file the
# dynamic loader opens, dlopen included).
LD_DEBUG=files "$GPUWHY" --sim h100x1 status >"$T/status.out" 2>"$T/status.ld" ||
	fail "gpuwhy status failed: $(tail -3 "$T/status.ld")"
grep -q 'calling init' "$T/status.ld" || fail "LD_DEBUG=files printed nothing to check"
if grep -E 'file=[^ ]*(libcurl|libmicrohttpd|libisal)' "$T/status.ld" >"$T/found"; then
	fail "gpuwhy status loaded: $(head -2 "$T/found")"
fi

# The gate loads both when it starts and still forwards requests.
start_sim up
start_gate ok --upstream "http://127.0.0.1:$SIM_PORT@0"
[ "$(code "http://127.0.0.1:$GATE_PORT/v1/embeddings" -d '{"input":["a","b"]}')" = 200 ] ||
	fail "a request through the gate"
[ "$(code "http://127.0.0.1:$METRICS_PORT/metrics")" = 200 ] || fail "the gate's /metrics"

# Without a loadable libcurl (files by its names that are not libraries, found
# first on LD_LIBRARY_PATH): one line naming the library and the package, exit 3.
mkdir -p "$T/nolib"
for n in libcurl.so.4 libcurl-gnutls.so.4 libcurl.so; do : >"$T/nolib/$n"; done
LD_LIBRARY_PATH="$T/nolib" timeout 20 "$GPUWHY" --sim h100x1 gate --listen 127.0.0.1:0 \
	--metrics-listen 127.0.0.1:0 --upstream "http://127.0.0.1:$SIM_PORT@0" \
	>"$T/nocurl.out" 2>"$T/nocurl.err"
rc=$?
[ "$rc" = 3 ] || fail "gate without libcurl: exit $rc, expected 3: $(cat "$T/nocurl.err")"
[ "$(wc -l <"$T/nocurl.err")" = 1 ] || fail "gate without libcurl: not one line: $(cat "$T/nocurl.err")"
grep -qx 'gpuwhy: gate: cannot load libcurl.so.4 (apt-get install libcurl4)' "$T/nocurl.err" ||
	fail "gate without libcurl said: $(cat "$T/nocurl.err")"

# A library by the right name without the functions (another library under
# libmicrohttpd's name): sim serve and the exporter name the first function
# missing, exit 3.
other=$(ldd "$GPUWHY" | awk '/libm\.so/ { print $3 }')
[ -f "$other" ] || fail "no libm.so.6 in ldd $GPUWHY"
mkdir -p "$T/badmhd"
for n in libmicrohttpd.so.12 libmicrohttpd.so; do cp "$other" "$T/badmhd/$n"; done
LD_LIBRARY_PATH="$T/badmhd" timeout 20 "$GPUWHY" --sim h100x1 sim serve --listen 127.0.0.1:0 \
	>"$T/nomhd.out" 2>"$T/nomhd.err"
rc=$?
[ "$rc" = 3 ] || fail "sim serve without libmicrohttpd: exit $rc, expected 3: $(cat "$T/nomhd.err")"
grep -qx 'gpuwhy: sim serve: libmicrohttpd.so.12 has no MHD_start_daemon (.*)' "$T/nomhd.err" ||
	fail "sim serve without libmicrohttpd said: $(cat "$T/nomhd.err")"
LD_LIBRARY_PATH="$T/badmhd" timeout 20 "$GPUWHY" --sim h100x1 exporter --listen 127.0.0.1:0 \
	>"$T/expmhd.out" 2>"$T/expmhd.err"
rc=$?
[ "$rc" = 3 ] || fail "exporter without libmicrohttpd: exit $rc, expected 3: $(cat "$T/expmhd.err")"
grep -q '^gpuwhy: exporter: libmicrohttpd.so.12 has no MHD_start_daemon' "$T/expmhd.err" ||
	fail "exporter without libmicrohttpd said: $(cat "$T/expmhd.err")"
# ISA-L's igzip (where the build has it) is opened by the trace reader for
# gzip input only: a plain trace does not load it, a .gz one does; without it
# a .gz trace fails with one line naming the library and the package, exit 3.
gz="$(dirname "$0")/../fixtures/traces/kinetoold/worker0.pt.trace.json.gz"
zcat "$gz" >"$T/plain.json"
LD_DEBUG=files "$GPUWHY" trace -q "$T/plain.json" >/dev/null 2>"$T/plain.ld" || fail "a plain trace"
grep -q 'file=[^ ]*libisal' "$T/plain.ld" && fail "a plain trace loaded libisal"
LD_DEBUG=files "$GPUWHY" trace -q "$gz" >/dev/null 2>"$T/gz.ld" || fail "a .gz trace"
if grep -q 'file=[^ ]*libisal' "$T/gz.ld"; then
	mkdir -p "$T/noisal"
	for n in libisal.so.2 libisal.so; do : >"$T/noisal/$n"; done
	LD_LIBRARY_PATH="$T/noisal" "$GPUWHY" trace -q "$gz" >"$T/noisal.out" 2>"$T/noisal.err"
	rc=$?
	[ "$rc" = 3 ] || fail "trace without libisal: exit $rc, expected 3: $(cat "$T/noisal.err")"
	[ "$(wc -l <"$T/noisal.err")" = 1 ] || fail "trace without libisal: not one line: $(cat "$T/noisal.err")"
	grep -q ': cannot load libisal.so.2 (apt-get install libisal2)' "$T/noisal.err" ||
		fail "trace without libisal said: $(cat "$T/noisal.err")"
	LD_LIBRARY_PATH="$T/noisal" "$GPUWHY" trace -q "$T/plain.json" >/dev/null 2>&1 ||
		fail "a plain trace needs libisal"
fi
echo "PASS"
