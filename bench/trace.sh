#!/usr/bin/env bash
# Benchmark of `gpuwhy trace` against HolisticTraceAnalysis, side by side in one run: both as
# whole processes (wall time from fork to exit, CPU user+sys and peak RSS from wait4, to the
# microsecond: bench/runstat.c),
# interleaved, medians of RUNS, on each shared trace (tests/fixtures/traces), on a generated trace
# HTA can still load (MID_MB, default 64), and on a generated 1 GiB trace (plain and gzip; gpuwhy
# alone: HTA would need about ten times the file in memory). HTA runs when its source is present
# (../shared/peers/HolisticTraceAnalysis, with Debian's python3-pandas etc.); else this says so
# and prints gpuwhy's figures alone. Prints a markdown report.
#
#   bench/trace.sh [BUILD_DIR]      (default build/; RUNS=3, BIG_MB=1024, MID_MB=64)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
gpuwhy="$build/gpuwhy"
shared="${SHARED_DIR:-../shared}"
traces="${TRACES:-tests/fixtures/traces}"
hta_src="$shared/peers/HolisticTraceAnalysis"
hta_run="$shared/peers/hta_run.py"
runs="${RUNS:-3}"
big_mb="${BIG_MB:-1024}"
mid_mb="${MID_MB:-64}"
tmp="${TMPDIR:-/tmp}/gpuwhy-trace-bench"
[ -x "$gpuwhy" ] || { echo "bench/trace.sh: build first (make build)" >&2; exit 2; }
mkdir -p "$tmp"

hta=""
if [ -d "$hta_src/hta" ] && [ -f "$hta_run" ] &&
   PYTHONPATH="$hta_src" /usr/bin/python3 -c 'import hta.trace_analysis' 2>/dev/null; then
  hta=yes
else
  echo "HTA could not be run (needs $hta_src, $hta_run and python3-pandas python3-numpy"
  echo "python3-plotly python3-networkx python3-psutil): gpuwhy's figures alone."
  echo
fi

# Generated traces live in /tmp only (never committed). HTA reads directories.
cc -O2 -o "$tmp/trace_gen" bench/trace_gen.c
cc -O2 -o "$tmp/runstat" bench/runstat.c
gen() { # gen FILE MB
  if [ ! -s "$1" ] || [ "$(( $(stat -c %s "$1") >> 20 ))" -ne "$2" ]; then
    "$tmp/trace_gen" "$1" "$2" 2>/dev/null
  fi
}
mkdir -p "$tmp/mid"
gen "$tmp/mid/mid.json" "$mid_mb"
gen "$tmp/big.json" "$big_mb"
[ "$tmp/big.json.gz" -nt "$tmp/big.json" ] || gzip -1 -c "$tmp/big.json" > "$tmp/big.json.gz"
# gzip -9 as well: three of the four shared .gz traces were written at the best compression
# (XFL 2), which inflates faster per byte of JSON than gzip -1's.
[ "$tmp/big9.json.gz" -nt "$tmp/big.json" ] || gzip -9 -c "$tmp/big.json" > "$tmp/big9.json.gz"

# uncompressed JSON bytes of a path (file or directory); SQLite counts as its size
json_bytes() {
  local total=0 f
  for f in $( [ -d "$1" ] && ls "$1"/*.json "$1"/*.gz "$1"/*.sqlite 2>/dev/null || echo "$1" ); do
    case "$f" in
      *.gz) total=$(( total + $(gzip -dc "$f" | wc -c) )) ;;
      *) total=$(( total + $(stat -c %s "$f") )) ;;
    esac
  done
  echo "$total"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# timed FILE CMD...: appends "wall_s cpu_s rss_kb" of one whole-process run to FILE
timed() {
  local out="$1"; shift
  "$tmp/runstat" "$out" "$@" > /dev/null 2>&1 || echo "(run failed: $*)" >&2
}

col() { awk -v c="$1" '{print $c}' "$2" | median; }

# measure NAME PATH HTA(yes|no) [gpuwhy options...]
measure() {
  local name="$1" path="$2" with_hta="$3"; shift 3
  local i
  : > "$tmp/ours"; : > "$tmp/hta"
  find "$path" -type f -exec cat {} + > /dev/null # warm the page cache
  [ "$with_hta" = yes ] && [ -n "$hta" ] || with_hta=no
  for i in $(seq "$runs"); do
    timed "$tmp/ours" "$gpuwhy" trace -q "$@" --format csv "$path"
    [ "$with_hta" = no ] || PYTHONPATH="$hta_src" timed "$tmp/hta" /usr/bin/python3 "$hta_run" "$path"
  done
  local w c m hw=0 hc=0 hm=0 bytes
  w=$(col 1 "$tmp/ours"); c=$(col 2 "$tmp/ours"); m=$(col 3 "$tmp/ours")
  if [ "$with_hta" = yes ]; then hw=$(col 1 "$tmp/hta"); hc=$(col 2 "$tmp/hta"); hm=$(col 3 "$tmp/hta"); fi
  bytes=$(json_bytes "$path")
  awk -v name="$name" -v w="$w" -v c="$c" -v m="$m" -v hw="$hw" -v hc="$hc" -v hm="$hm" \
      -v bytes="$bytes" 'BEGIN {
    mb = bytes / 1048576
    cc = (c < 1e-6) ? 1e-6 : c
    if (hw > 0)
      printf "| %s | %.1f MiB | %.3f s | %.3f s | %.0f MiB/s | %.0f MiB/CPU-s | %.1f MiB (%.0f %%) | %.2f s | %.2f s | %.0f MiB | %.0fx | %.0fx | %.0fx less |\n",
        name, mb, w, c, mb / w, mb / cc, m / 1024, 100 * m / 1024 / mb, hw, hc, hm / 1024, hw / w, hc / cc, hm / m
    else
      printf "| %s | %.1f MiB | %.3f s | %.3f s | %.0f MiB/s | %.0f MiB/CPU-s | %.1f MiB (%.0f %%) | not run | | | | | |\n",
        name, mb, w, c, mb / w, mb / cc, m / 1024, 100 * m / 1024 / mb
  }'
}

echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(. /etc/os-release; echo "$PRETTY_NAME"); load average before: $(cut -d' ' -f1-3 /proc/loadavg); medians of $runs, interleaved"
echo
echo "| input | JSON | wall | CPU user+sys | MiB/s (wall) | MiB per CPU-s | peak RSS (of JSON) | HTA wall | HTA CPU | HTA RSS | speed-up (wall) | speed-up (CPU) | memory |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
if [ -d "$traces" ]; then
  measure "sampled2 (2 ranks)" "$traces/sampled2" yes
  measure "nccl" "$traces/nccl" yes
  measure "kinetoold (2021)" "$traces/kinetoold" yes
  measure "nsys SQLite (HTA cannot read it)" "$traces/nsys/saxpy-mpi-cuda_nsys_perlmutter0.sqlite" no
else
  echo "| (no shared traces at $traces) | | | | | | | | | | | | |"
fi
measure "generated $mid_mb MiB" "$tmp/mid" yes
measure "generated $big_mb MiB (.json)" "$tmp/big.json" no
measure "generated $big_mb MiB (.json.gz)" "$tmp/big.json.gz" no
measure "generated $big_mb MiB (.json.gz, gzip -9)" "$tmp/big9.json.gz" no
measure "generated $big_mb MiB (.json), 1 thread" "$tmp/big.json" no -j 1
measure "generated $big_mb MiB (.json.gz), 1 thread" "$tmp/big.json.gz" no -j 1
measure "generated $big_mb MiB (.json.gz, gzip -9), 1 thread" "$tmp/big9.json.gz" no -j 1
echo
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
