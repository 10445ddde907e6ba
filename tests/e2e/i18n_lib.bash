# i18n_lib.bash - sourced by tests that check gpuwhy's messages go through gettext.
#
# i18n_marker_catalogue DIR builds DIR/qaa/LC_MESSAGES/gpuwhy.mo from the build's
# template (BUILD/gpuwhy.pot): every message translated to itself behind the mark
# "◊" ("qaa" is ISO 639's code reserved for local use). Run gpuwhy with
# GPUWHY_LOCALEDIR=DIR and --lang qaa (or LANGUAGE=qaa); then every line of human
# text it prints holds the mark, and i18n_unmarked lists the lines that do not.
I18N_MARK="◊"

i18n_marker_catalogue() {
	local dir="$1" pot="${GPUWHY_BUILD:?}/gpuwhy.pot"
	[ -s "$pot" ] || { echo "FAIL: no message template $pot (build first)" >&2; return 1; }
	mkdir -p "$dir/qaa/LC_MESSAGES"
	# The template's header has placeholders msgfmt refuses: fill them in.
	sed -e 's/charset=CHARSET/charset=UTF-8/' \
		-e 's/^"Plural-Forms: .*"$/"Plural-Forms: nplurals=2; plural=(n != 1);\\n"/' "$pot" |
		msgen - 2>/dev/null |
		msgfilter --keep-header -o "$dir/qaa.po" sed -e "1s/^/$I18N_MARK/" 2>/dev/null &&
		msgfmt -o "$dir/qaa/LC_MESSAGES/gpuwhy.mo" "$dir/qaa.po"
}

# i18n_sim_test [COMMAND...]: the start of a test that runs the simulated GPU
# under the marker language (sourced after lib.bash): skip unless the simulated
# GPU is built and gettext's tools and each COMMAND are there, then build the
# marker catalogue in $T/mark.
i18n_sim_test() {
	local c
	have_sim || skip "simulated GPU not built"
	command -v msgfmt >/dev/null || skip "gettext tools missing"
	for c in "$@"; do
		command -v "$c" >/dev/null || skip "$c missing"
	done
	i18n_marker_catalogue "$T/mark" || fail "marker catalogue"
}

# i18n_unmarked FILE [IGNORE_ERE]: print each line of FILE that reads as English
# prose (two lowercase words of two or more letters in a row, or a capitalised
# word followed by a lowercase one) but holds no mark. Lines matching IGNORE_ERE
# (data the test knows is not prose: process names, paths) are skipped.
# Returns 0 when there is none.
i18n_unmarked() {
	local file="$1" ignore="${2:-^\$^}"
	LC_ALL=C.UTF-8 awk -v mark="$I18N_MARK" -v ignore="$ignore" '
		index($0, mark) { next }
		ignore != "" && $0 ~ ignore { next }
		{
			line = $0
			gsub(/\033\[[0-9;?]*[A-Za-z]/, "", line)      # terminal escapes
			gsub(/[A-Za-z0-9._~\/-]*\/[A-Za-z0-9._~\/-]*/, "", line)  # paths
			if (line ~ /(^|[^A-Za-z])[A-Za-z][a-z]+ +[a-z][a-z]+([^A-Za-z]|$)/) {
				print FILENAME ":" FNR ": " $0
				bad = 1
			}
		}
		END { exit bad }' "$file"
}
