#!/usr/bin/env bash
# How often `gpuwhy compare` is right, on the simulated GPU: N pairs of each kind, each pair
# two fresh recordings (and N comparisons of three recordings a side), counted by verdict.
#   identical   the same job twice: any claim is a false one
#   +10 %       a GPU phase of 22 ms against 20 (no data path): "slower" is right
#   workers     1 -> 2 data-loading workers that need the CPU (60 ms of one core per batch,
#               a 20 ms GPU phase): on two free cores "faster" is right
#   loaded      the same, with two busy loops (`sim hog --cores 2`) during both runs: a claim
#               withheld for load, or none, must say why (the named processes, the interval)
# This is a benchmark, not a test: it counts what a machine's load does to the verdicts.
#   bench/compare.sh [BUILD] [N] [N3]   (N comparisons of one run a side, N3 of three; 10 each)
set -uo pipefail
build="${1:-build}"
n1="${2:-10}"
n3="${3:-$n1}"
G="$(cd "$build" && pwd)/gpuwhy"
[ -x "$G" ] || { echo "compare.sh: no $G (make build)" >&2; exit 3; }
T="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT

# rec FILE WORKERS CPU_MS GPU_MS
rec() {
	env GPUWHY_SIM_STATE="$T/state" "$G" --sim h100x1 run -o "$T/$1.gpuwhy" -i 200ms \
		--no-summary -- "$G" sim train --workers "$2" --cpu-ms "$3" --cpu-ms-per-item 0 \
		--gpu-ms-per-item 0 --gpu-ms "$4" --steps 40 >/dev/null 2>&1
}

# verdict FILES...: "faster", "slower", "none", "withheld" (load), or "error".
verdict() {
	"$G" compare "$@" --format json 2>/dev/null | python3 -c '
import json, sys
c = json.load(sys.stdin)
print("withheld" if c["withheld_by_host_load"] else
      {"faster": "faster", "slower": "slower"}.get(c["verdict"], "none"))' 2>/dev/null || echo error
}

# kind NAME RUNS WORKERS_A CPU_A GPU_A WORKERS_B CPU_B GPU_B: one row of counts.
kind() {
	local name=$1 runs=$2 f=0 s=0 none=0 w=0 e=0 a b n
	n=$([ "$runs" -gt 1 ] && echo "$n3" || echo "$n1")
	shift 2
	for ((i = 1; i <= n; i++)); do
		a=() b=()
		for ((r = 1; r <= runs; r++)); do
			rec "a$i.$r" "$1" "$2" "$3" && a+=("$T/a$i.$r.gpuwhy")
			rec "b$i.$r" "$4" "$5" "$6" && b+=("$T/b$i.$r.gpuwhy")
		done
		if [ "$runs" -gt 1 ]; then v=$(verdict "${a[@]}" -- "${b[@]}"); else v=$(verdict "${a[0]}" "${b[0]}"); fi
		case $v in faster) f=$((f + 1)) ;; slower) s=$((s + 1)) ;; none) none=$((none + 1)) ;;
		withheld) w=$((w + 1)) ;; *) e=$((e + 1)) ;; esac
		rm -f "$T"/a"$i".* "$T"/b"$i".*
	done
	printf '| %s | %d | %d | %d | %d | %d | %d | %d |\n' "$name" "$runs" "$n" "$f" "$s" "$none" "$w" "$e"
}

echo "### compare's verdicts ($(date +%F), $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1 /proc/loadavg) at start)"
echo
echo "$n1 comparisons of each kind with one run a side, $n3 with three; fresh recordings each"
echo
echo "| kind | runs a side | comparisons | faster | slower | no claim | withheld (load) | error |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for runs in 1 3; do
	kind "identical (workers 1)" "$runs" 1 60 20 1 60 20
	kind "+10 % (GPU 20 -> 22 ms)" "$runs" 0 0 20 0 0 22
	kind "workers 1 -> 2, CPU loaders" "$runs" 1 60 20 2 60 20
	"$G" sim hog --cores 2 >/dev/null 2>&1 &
	hog=$!
	sleep 0.5
	kind "workers 1 -> 2, two busy loops" "$runs" 1 60 20 2 60 20
	kill "$hog" 2>/dev/null
	wait "$hog" 2>/dev/null
done
