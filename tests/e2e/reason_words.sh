#!/usr/bin/env bash
# Clock event reasons read the same in every human face: the driver's names
# from nvidia-smi -q's "Clocks Event Reasons" (Idle, SW Power Cap, ...), in
# status and in top (a real terminal, tmux), at pinned scenario times.
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"

held() { # SCENARIO TIME: the reasons status prints for GPU 0
	GPUWHY_SIM_TIME=$2 "$GPUWHY" --sim "$1" status | sed -n 's/^ *clocks held by: //p' | sed 's/  .*//;s/ *$//' | head -1
}
assert_eq "$(held a100x4-pcie 90)" "Idle" "status on an idle A100"
assert_eq "$(held rtx4090-throttle 90)" "SW Power Cap" "status in the power-cap episode"
assert_eq "$(held rtx4090-throttle 40)" "SW Thermal Slowdown, HW Thermal Slowdown" "status in the thermal episode"
echo "ok: status uses the driver's reason names"

command -v tmux >/dev/null || { echo "tmux is not installed: top not checked"; exit 0; }
SOCKS=()
trap 'for s in "${SOCKS[@]}"; do tmux -L "$s" kill-server 2>/dev/null; done; cleanup' EXIT
# top_reasons SOCKET SCENARIO TIME: the reasons top shows for GPU 0, on a tmux server of its own
top_reasons() {
	local S="-L $1" r
	tmux $S -f /dev/null new-session -d -s t -x 160 -y 50 -e LANG=C.UTF-8 \
		-e GPUWHY_SIM_STATE="$GPUWHY_SIM_STATE" -e GPUWHY_SIM_TIME="$3" \
		"$GPUWHY --sim $2 top -i 500ms; sleep 30"
	for _ in $(seq 100); do
		r=$(tmux $S capture-pane -p -t t | sed -n 's/.*clocks held by //p' | sed 's/  .*//' | head -1)
		[ -n "$r" ] && { printf '%s\n' "$r"; return; }
		sleep 0.1
	done
	tmux $S capture-pane -p -t t >&2
	fail "top never showed the clock event reasons"
}
SOCKS=("gwreason-$$-1" "gwreason-$$-2")
assert_eq "$(top_reasons "${SOCKS[0]}" a100x4-pcie 90)" "Idle" "top on an idle A100"
assert_eq "$(top_reasons "${SOCKS[1]}" rtx4090-throttle 90)" "SW Power Cap" "top in the power-cap episode"
echo "ok: top uses the same names"
