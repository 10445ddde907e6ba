# A program in a real terminal, for the e2e tests of top (sourced after
# lib.bash, not a test itself): one tmux session at a time, each on a tmux
# server of its own, killed on exit before lib.bash's cleanup.
command -v tmux >/dev/null || skip "tmux is not installed"

S=""
cleanup_tmux() { [ -n "$S" ] && tmux $S kill-server 2>/dev/null; cleanup; }
trap cleanup_tmux EXIT

# tmux_session NAME W H CMD [OPTION...]: CMD in session t, W x H, on a fresh
# server (a new server on the socket of one being killed can die with it);
# the OPTIONs go to new-session (-e VAR=VALUE); the pane stays when CMD ends.
TMUX_NSERVER=0
tmux_session() {
	local name=$1 w=$2 h=$3 cmd=$4
	shift 4
	[ -n "$S" ] && tmux $S kill-server 2>/dev/null
	TMUX_NSERVER=$((TMUX_NSERVER + 1))
	S="-L $name-$$-$TMUX_NSERVER"
	tmux $S -f /dev/null new-session -d -s t -x "$w" -y "$h" "$@" "$cmd"
	tmux $S set-option -t t remain-on-exit on
}
screen() { tmux $S capture-pane -p -t t; }
# wait_for REGEX [tries of 0.1 s]: until the screen shows REGEX, else fail showing it
wait_for() {
	local n=${2:-100}
	for _ in $(seq "$n"); do screen | grep -Eq -- "$1" && return 0; sleep 0.1; done
	echo "--- screen ---" >&2
	screen >&2
	fail "never saw /$1/"
}
keys() { tmux $S send-keys -t t "$@"; }
