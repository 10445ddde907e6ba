#!/usr/bin/env bash
# Diagnosis and report rendering on long synthetic recordings (1 h and 24 h,
# 8 GPUs at 1 Hz), as ratios to one plain pass over the same samples.
set -euo pipefail
: "${GPUWHY_BUILD:?run through bench/run-all}" "${GPUWHY_SRC:?}"
out="$GPUWHY_SRC/bench/out"
mkdir -p "$out"
cc -std=c11 -O2 -D_GNU_SOURCE -DGPUWHY_VERSION='"bench"' -I"$GPUWHY_SRC/src" -I"$GPUWHY_SRC/include" \
	"$GPUWHY_SRC/bench/diagnose_bench.c" $(cat "$GPUWHY_BUILD/gpuwhy-archives.txt") \
	$(pkg-config --libs sqlite3 jansson yajl libmicrohttpd ncursesw zlib) -lpthread -ldl -lm \
	-o "$out/diagnose_bench"
for n in 3600 86400; do
	"$out/diagnose_bench" "$n" | tee "$out/diagnose_$n.txt"
	echo
done
