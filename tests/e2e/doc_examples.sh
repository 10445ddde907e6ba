#!/usr/bin/env bash
# The examples of README.md and docs/*.md run as shown on the simulated GPU
# (scripts/check-doc-examples; the convention is in docs/development.md). The checker
# is tried first on pages of its own: a wrong option, a wrong exit code, a line of
# output the command does not print and an unmarked example must each fail.
set -uo pipefail
: "${GPUWHY:?GPUWHY must name the gpuwhy binary}"
: "${GPUWHY_SRC:?GPUWHY_SRC must name the source tree}"
check="$(cd "$GPUWHY_SRC" && pwd)/scripts/check-doc-examples"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: python3 is missing (scripts/install-deps)" >&2; exit 77; }

# page NAME BODY: a page of its own with one example
page() { printf '# gpuwhy x — a page\n\n```\ngpuwhy x [OPTIONS]\n```\n\n%s\n' "$2" >"$tmp/$1.md"; }
page good '```console
$ gpuwhy --sim h100x1 status
...
GPU 0  NVIDIA H100 80GB HBM3        00000000:1B:00.0  P0
       util    7%  mem 0 / 81559 MiB  power 71 / 700 W  temp 33C (slowdown 90C)
```

<!-- example: sim=h100x1 exit=2 -->
```console
$ gpuwhy status --bogus
gpuwhy: --bogus: unknown option (see gpuwhy status --help)
```

<!-- example: needs-gpu -->
```sh
gpuwhy run -- python train.py
```'
"$check" --gpuwhy "$GPUWHY" "$tmp/good.md" >"$tmp/out" 2>&1 || fail "a page whose examples hold fails: $(cat "$tmp/out")"
grep -q '^examples: 2 run, 1 need a GPU, 0 need a cluster, 1 usage blocks; 0 failed' "$tmp/out" ||
	fail "the counts are wrong: $(cat "$tmp/out")"

expect_fail() { # NAME WHAT: the page must fail, naming its line and WHAT
	"$check" --gpuwhy "$GPUWHY" "$tmp/$1.md" >"$tmp/out" 2>&1 && fail "$1 passes: $(cat "$tmp/out")"
	grep -q -- "$2" "$tmp/out" || fail "$1 does not say '$2': $(cat "$tmp/out")"
}
page badopt '```console
$ gpuwhy --sim h100x1 status --formta json
```'
expect_fail badopt "badopt.md:8: exit 2, the page says 0"
page badexit '<!-- example: exit=1 -->
```console
$ gpuwhy --sim h100x1 status
```'
expect_fail badexit "exit 0, the page says 1"
page badout '```console
$ gpuwhy --sim h100x1 status
GPU 0  NVIDIA H100 80GB PCIe        00000000:1B:00.0  P0
```'
expect_fail badout "the output lacks the shown line"
page unmarked '```sh
gpuwhy --sim h100x1 status
```'
expect_fail unmarked "not marked needs-gpu"
page badword '<!-- example: needs-gpus -->
```sh
gpuwhy status
```'
expect_fail badword "unknown example word 'needs-gpus'"

# The pages themselves.
cd "$GPUWHY_SRC" || fail "no source tree"
pages=(README.md README.zh_CN.md); for p in docs/*.md; do case "$p" in docs/pending-*) ;; *) pages+=("$p") ;; esac; done
"$check" --gpuwhy "$GPUWHY" "${pages[@]}" >"$tmp/out" 2>&1 || fail "$(cat "$tmp/out")"
cat "$tmp/out"
