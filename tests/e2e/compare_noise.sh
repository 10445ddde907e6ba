# compare on identical runs and on a 10 % slower one: five recordings of the same job claim
# no change in any of their 10 pairs; a configuration 10 % slower is found against each.
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
command -v python3 >/dev/null || skip "python3 missing"

# rec NAME GPU_MS: a job without a data path (its step time is the GPU phase), recorded.
rec() {
	env GPUWHY_SIM_STATE="$T/state-$1" "$GPUWHY" --sim h100x1 run -o "$T/$1.gpuwhy" -i 200ms \
		--no-summary -- "$GPUWHY" sim train --workers 0 --cpu-ms 0 --gpu-ms "$2" --steps 25 \
		>"$T/$1.log" 2>&1 || fail "$1: recording failed: $(tail -2 "$T/$1.log")"
}
for i in 1 2 3 4 5; do rec "same$i" 200; done
rec slower 220

verdict() {
	"$GPUWHY" compare "$T/$1.gpuwhy" "$T/$2.gpuwhy" --format json |
		python3 -c 'import json,sys; c=json.load(sys.stdin); print(c["verdict"], "%.2f" % c["step_mean_diff_pct"])'
}
for i in 1 2 3 4 5; do
	for j in 1 2 3 4 5; do
		[ "$i" -lt "$j" ] || continue
		v=$(verdict "same$i" "same$j")
		echo "same$i -> same$j: $v %"
		case "$v" in no-difference*) ;; *) fail "same$i -> same$j: expected no change, got $v" ;; esac
	done
	v=$(verdict "same$i" slower)
	echo "same$i -> slower: $v %"
	case "$v" in slower*) ;; *) fail "same$i -> slower: expected slower, got $v" ;; esac
done
# The text says why a small significant difference is no change.
out=$("$GPUWHY" compare "$T/same1.gpuwhy" "$T/same2.gpuwhy")
assert_contains "$out" "minimum meaningful" "compare names the minimum meaningful difference"
# And the threshold is settable: at 15 % the 10 % change is no meaningful change either.
v=$("$GPUWHY" compare "$T/same1.gpuwhy" "$T/slower.gpuwhy" --set compare_min_diff_pct=15 --format json |
	python3 -c 'import json,sys; c=json.load(sys.stdin); print(c["verdict"], c["below_min_meaningful_diff"])')
assert_eq "$v" "no-difference True" "compare_min_diff_pct=15"
exit 0
