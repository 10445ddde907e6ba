#!/usr/bin/env bash
# Build bench/fleet_serve.c against a build's archives: bench/fleet_build_serve.sh BUILD OUT
set -euo pipefail
SRC=${GPUWHY_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
cc -std=c11 -O2 -Wall -Wextra -D_GNU_SOURCE -DGPUWHY_VERSION='"bench"' -I"$SRC/src" -I"$SRC/include" \
	"$SRC/bench/fleet_serve.c" $(cat "$1/gpuwhy-archives.txt") \
	$(pkg-config --libs sqlite3 jansson yajl libmicrohttpd ncursesw zlib libcurl) -lpthread -ldl -lm -o "$2"
