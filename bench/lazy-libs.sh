#!/usr/bin/env bash
# What linking libcurl and libmicrohttpd costs every gpuwhy command: an OLD
# binary that links them against this build's, which opens them with dlopen
# only in gate, sim serve and the exporter. Both measured in one run.
#   bench/lazy-libs.sh OLD_GPUWHY [BUILD_DIR] [TOP_SECONDS]
# OLD_GPUWHY needs its sim/libnvidia-ml.so.1 beside it (copy both aside).
# Figures: libraries the loader initialises for `status` (LD_DEBUG=files),
# the libraries ldd lists, peak RSS of `status` (/usr/bin/time) and of `top`
# in a 160x50 pseudo-terminal for TOP_SECONDS (default 70, after a 3 s
# warm-up; bench/top_pty.py), and the start-up time of
# `gpuwhy --sim h100x1 status` and of `gpuwhy --version` (start and exit,
# what a short command such as `queue add` pays on top of its work):
# hyperfine, 200 runs each, one command after the other; else a timed loop.
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
old="${1:?usage: bench/lazy-libs.sh OLD_GPUWHY [BUILD_DIR] [TOP_SECONDS]}"
build="$(cd "${2:-$src/build}" && pwd)"
secs="${3:-70}"
new="$build/gpuwhy"
for g in "$old" "$new"; do [ -x "$g" ] || { echo "bench/lazy-libs.sh: $g is not built"; exit 3; }; done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export GPUWHY_SIM_STATE="$work/sim" XDG_CONFIG_HOME="$work/config" LANG=C.UTF-8 TERM=xterm-256color

inits() { LD_DEBUG=files "$1" --sim h100x1 status 2>&1 >/dev/null | grep -c 'calling init'; }
lddn() { ldd "$1" | grep -c '=> /'; }
rss_status() { /usr/bin/time -f %M "$1" --sim h100x8-nvlink status 2>&1 >/dev/null | tail -1; }
top_rss() { # GPUWHY OUT: peak RSS (KiB) of top
	python3 "$src/bench/top_pty.py" 160 50 3 "$secs" -- "$1" --sim h100x8-nvlink top -i 1s >"$2"
}
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "n/a" }'; }

top_rss "$old" "$work/old.json" &
a=$!
top_rss "$new" "$work/new.json" &
b=$!
wait $a $b

if command -v hyperfine >/dev/null; then
	hyperfine -N -w 20 -r 200 --export-json "$work/hf.json" \
		"$old --sim h100x1 status" "$new --sim h100x1 status" "$old --version" "$new --version" \
		>/dev/null 2>&1
	read -r t_old t_new v_old v_new < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print(*(x["median"]*1000 for x in r))' "$work/hf.json")
	how="hyperfine -N, 200 runs each after 20 warm-up runs, median"
else
	loop() { local s e i; s=$(date +%s%N); for i in $(seq 200); do "$@" >/dev/null; done; e=$(date +%s%N); echo $(((e - s) / 200000))e-3; }
	t_old=$(loop "$old" --sim h100x1 status) t_new=$(loop "$new" --sim h100x1 status)
	v_old=$(loop "$old" --version) v_new=$(loop "$new" --version)
	how="a loop of 200 runs each, mean"
fi

echo "### lazy libcurl and libmicrohttpd ($(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1 /proc/loadavg))"
echo
echo "| | libraries linked (ldd) | libraries initialised by \`status\` | peak RSS \`status\` MiB | peak RSS \`top\` MiB (${secs} s) | \`--sim h100x1 status\` ms | \`--version\` ms |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for w in old new; do
	g=$old; [ $w = new ] && g=$new
	t=$t_old v=$v_old
	[ $w = new ] && t=$t_new v=$v_new
	printf '| %s | %s | %s | %s | %s | %.2f | %.2f |\n' "$w" "$(lddn "$g")" "$(inits "$g")" \
		"$(mib "$(rss_status "$g")")" "$(mib "$(field "$work/$w.json" hwm_kib)")" "$t" "$v"
done
echo
echo "new / old: top peak RSS $(ratio "$(field "$work/new.json" hwm_kib)" "$(field "$work/old.json" hwm_kib)"), \`status\` $(ratio "$t_new" "$t_old"), \`--version\` $(ratio "$v_new" "$v_old") ($how)."
