#!/usr/bin/env bash
# Shell completion, generated from the option tables: the bash script is driven
# as bash drives it (COMP_WORDS, COMP_CWORD, the function, COMPREPLY) for
# commands, options, enum values, scenarios after --sim, GPUs after --gpus and
# recordings after report; zsh's and fish's scripts are checked where those
# shells are installed (scripts/install-deps --extra), and answer the same.
. "$(dirname "$0")/lib.bash"
: "${GPUWHY_BUILD:?}"
SRC=${GPUWHY_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
C=$GPUWHY_BUILD/completion
[ -s "$C/gpuwhy.bash" ] || fail "no $C/gpuwhy.bash (the build target gpuwhy_man writes it)"
# shellcheck disable=SC1091
. "$C/gpuwhy.bash"

# comp WORD... : what bash offers for the last word (empty: a word being started).
comp() {
	COMP_WORDS=("$GPUWHY" "$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_gpuwhy
	printf '%s\n' "${COMPREPLY[@]}" | sort -u
}
# has WORD LIST: WORD is one of LIST's lines.
has() { printf '%s\n' "$2" | grep -qx -- "$1"; }

r=$(comp '')
has report "$r" && has status "$r" && has help "$r" || fail "gpuwhy <TAB>: $r"
assert_eq "$(comp re)" "$(printf 'record\nreport')" "gpuwhy re<TAB>"
assert_eq "$(comp report --for)" "--format" "gpuwhy report --for<TAB>"
# The choices are the table's, in the table's order in the dump.
want=$("$GPUWHY" help --dump report | python3 -c '
import json, sys
print("\n".join(sorted(next(o for o in json.load(sys.stdin)["options"] if o.get("long") == "format")["choices"])))')
has html "$want" || fail "report --format has no html choice: $want"
assert_eq "$(comp report --format '')" "$want" "gpuwhy report --format <TAB>"
assert_eq "$(comp report --format = j)" "json" "gpuwhy report --format=j<TAB>"
assert_eq "$(comp queue add --retry-d)" "--retry-delay" "gpuwhy queue add --retry-d<TAB>"
assert_eq "$(comp queue -q "$T/q" add --backend '')" "$(printf 'local\nslurm')" "queue add --backend <TAB>"
r=$(comp queue '')
has add "$r" && has ls "$r" && has worker "$r" || fail "gpuwhy queue <TAB>: $r"
has train "$(comp sim '')" || fail "gpuwhy sim <TAB>: $(comp sim '')"
assert_eq "$(comp help queue a)" "add" "gpuwhy help queue a<TAB>"
# After `--` run's own options end: what follows is the program's.
has --format "$(comp run -- ls --f)" && fail "gpuwhy run -- ls --f<TAB> offers gpuwhy's options"

# Recordings where report expects one: .gpuwhy files and directories, no others.
mkdir -p "$T/w/sub"
: >"$T/w/a.gpuwhy"
: >"$T/w/b.txt"
r=$(cd "$T/w" && comp report '')
has a.gpuwhy "$r" && has sub "$r" || fail "gpuwhy report <TAB>: $r"
has b.txt "$r" && fail "gpuwhy report <TAB> offers b.txt: $r"
r=$(cd "$T/w" && comp compare a.gpuwhy -- '')
has a.gpuwhy "$r" && ! has b.txt "$r" || fail "gpuwhy compare A -- <TAB>: $r"

# Scenarios after --sim, as gpuwhy lists them; GPUs after --gpus, of the --sim on the line.
scen=$("$GPUWHY" sim list 2>/dev/null) || skip "no scenario directory"
r=$(cd "$T/w" && comp --sim '')
for s in $scen; do has "$s" "$r" || fail "gpuwhy --sim <TAB> lacks $s: $r"; done
has h100x8-nvlink "$(cd "$T/w" && comp --sim h100x8)" || fail "gpuwhy --sim h100x8<TAB>"
if have_sim; then
	assert_eq "$(comp --sim h100x8-nvlink --gpus '' | tr '\n' ' ')" "0 1 2 3 4 5 6 7 " \
		"gpuwhy --sim h100x8-nvlink --gpus <TAB>"
	assert_eq "$(comp --sim h100x1 --gpus '' | tr '\n' ' ')" "0 " "gpuwhy --sim h100x1 --gpus <TAB>"
fi

# zsh and fish: the scripts parse, and answer as bash does.
missing=()
if command -v zsh >/dev/null; then
	zsh -n "$C/_gpuwhy" || fail "zsh -n _gpuwhy"
	# The shared walk, without zsh's completion system (its last line calls compadd).
	r=$(zsh -fc 'setopt ksharrays shwordsplit; eval "$(sed "\$d" "$1")"
		_gpuwhy_complete gpuwhy 3 gpuwhy report --format ""; print -l -- "${_gw_reply[@]}"' zsh "$C/_gpuwhy" | sort)
	assert_eq "$r" "$want" "zsh: gpuwhy report --format <TAB>"
else
	missing+=(zsh)
fi
if command -v fish >/dev/null; then
	fish -n "$C/gpuwhy.fish" || fail "fish -n gpuwhy.fish"
	r=$(fish -c "source '$C/gpuwhy.fish'; complete -C 'gpuwhy report --format '" | cut -f1 | sort)
	assert_eq "$r" "$want" "fish: gpuwhy report --format <TAB>"
	r=$(fish -c "source '$C/gpuwhy.fish'; complete -C 'gpuwhy queue -q /tmp/q a'" | cut -f1)
	assert_eq "$r" "add" "fish: gpuwhy queue -q DIR a<TAB>"
else
	missing+=(fish)
fi
if [ ${#missing[@]} -gt 0 ]; then
	[ "${GPUWHY_NO_SKIP:-0}" = 1 ] && fail "${missing[*]} missing: scripts/install-deps --extra"
	skip "bash completion checked; ${missing[*]} missing (scripts/install-deps --extra)"
fi
echo "ok: bash, zsh and fish completion"
