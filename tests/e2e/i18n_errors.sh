#!/usr/bin/env bash
# A sample of errors, one per face (bad options, missing files, a PID that is not
# there, a command that does not run, no terminal, a bad task, an unsafe queue
# directory, a library that does not load): the why and the hint come in
# the user's language under the marker language of i18n_lib.bash ("gpuwhy:" and
# what the user typed stay), and each has its documented exit code.
. "$(dirname "$0")/lib.bash"
: "${GPUWHY_BUILD:?}" "${GPUWHY_SRC:?}"
. "$GPUWHY_SRC/tests/e2e/i18n_lib.bash"
i18n_sim_test

export GPUWHY_QUEUE=$T/q
# err RC ARGS...: gpuwhy ARGS exits RC with one line, translated why and hint.
err() {
	local want=$1 rc
	shift
	GPUWHY_LOCALEDIR="$T/mark" timeout 30 "$GPUWHY" --lang qaa "$@" </dev/null >/dev/null 2>"$T/e"
	rc=$?
	[ "$rc" = "$want" ] || fail "gpuwhy $*: exit $rc, not $want: $(cat "$T/e")"
	grep -q "^gpuwhy: .*: $I18N_MARK" "$T/e" || fail "gpuwhy $*: why not translated: $(cat "$T/e")"
	if grep -q ' (' "$T/e"; then
		grep -q "$I18N_MARK (${I18N_MARK}" "$T/e" || fail "gpuwhy $*: hint not translated: $(cat "$T/e")"
	fi
	i18n_unmarked "$T/e" >"$T/bad" || fail "gpuwhy $*: lines outside gettext:
$(cat "$T/bad")"
}
S=(--sim h100x1)
err 2 report --format foo x
err 3 report "$T/none.gpuwhy"
err 2 compare "$T/none.gpuwhy"
err 2 "${S[@]}" record --pid 999999 -o "$T/x.gpuwhy"
echo not-a-recording >"$T/text"
err 3 "${S[@]}" record -o "$T/text" -d 1s
err 127 "${S[@]}" run -o "$T/y.gpuwhy" --no-summary -- "$T/no-such-command"
err 2 "${S[@]}" top --sort foo --once
err 2 "${S[@]}" top
err 2 "${S[@]}" query --format=xml --query-gpu=index
err 2 "${S[@]}" dmon -o X
err 2 "${S[@]}" sweep
err 2 queue ls --state foo
mkdir "$T/empty"
err 3 trace "$T/empty"
# Hints built with the value in them ("did you mean ...?") and reasons made below the
# faces (the GPU selection, a task's fields, a queue directory's permissions, a library
# that does not load): each inner reason marked too, not only the line around it.
# has WHAT ERE: the last error holds ERE.
has() { grep -q -- "$2" "$T/e" || fail "$1: $(cat "$T/e")"; }
err 2 sim foo
err 2 queue lss
has "queue lss" "◊ (◊did you mean 'gpuwhy queue ls'?)"
err 2 "${S[@]}" --gpus 7 status
has "--gpus 7" "^gpuwhy: --gpus: ◊*◊GPU index 7 does not exist (1 GPU)"
err 2 queue config per-gpu x
has "config per-gpu x" "^gpuwhy: per-gpu: ◊'x' is not ◊an integer from 1 to 1024$"
err 2 queue add --gpus 99 -- true
err 2 queue add -- ""
has "queue add ''" "^gpuwhy: queue add: ◊no command◊ (◊"
err 2 queue add --after 77 -- true
has "--after 77" "^gpuwhy: after 77: ◊*◊there is no task 77"
printf '{"cmd":"x","foo":1}\n' >"$T/spec.jsonl"
err 2 queue add --from "$T/spec.jsonl"
has "spec foo" "^gpuwhy: $T/spec.jsonl: ◊◊line 1: ◊key 'foo' is not a task field"
printf '[{"cmd":"x"},{"cmd":"x","retries":-1}]' >"$T/spec.json"
err 2 queue add --from "$T/spec.json"
has "spec retries" "◊◊task 2: ◊'retries' must be between 0 and 1000"
mkdir -m 0777 "$T/open"
chmod 0777 "$T/open" # past the umask
err 3 queue --queue "$T/open" ls
has "unsafe queue" "◊refusing an unsafe queue location: ◊writable by all users (mode 0777)"
# A library by its name that does not load (an empty file found first on LD_LIBRARY_PATH).
mkdir "$T/nolib"
: >"$T/nolib/libmicrohttpd.so.12"
: >"$T/nolib/libmicrohttpd.so"
LD_LIBRARY_PATH="$T/nolib" GPUWHY_LOCALEDIR="$T/mark" timeout 30 "$GPUWHY" --lang qaa "${S[@]}" \
	sim serve --listen 127.0.0.1:0 </dev/null >/dev/null 2>"$T/e"
assert_eq "$?" 3 "sim serve without libmicrohttpd: exit status"
has "no libmicrohttpd" "^gpuwhy: sim serve: ◊cannot load libmicrohttpd.so.12 (apt-get install libmicrohttpd12)$"
LD_LIBRARY_PATH="$T/nolib" LANG=zh_CN.UTF-8 LC_ALL='' LANGUAGE='' timeout 30 "$GPUWHY" "${S[@]}" \
	sim serve --listen 127.0.0.1:0 </dev/null >/dev/null 2>"$T/e"
has "no libmicrohttpd in Chinese" "^gpuwhy: sim serve: 无法加载 libmicrohttpd.so.12（apt-get install libmicrohttpd12）$"
LD_LIBRARY_PATH="$T/nolib" timeout 30 "$GPUWHY" --lang en "${S[@]}" sim serve --listen 127.0.0.1:0 \
	</dev/null >/dev/null 2>"$T/e"
has "no libmicrohttpd in English" "^gpuwhy: sim serve: cannot load libmicrohttpd.so.12 (apt-get install libmicrohttpd12)$"
# The same in Chinese, and in English with --lang en.
zh() { LANG=zh_CN.UTF-8 LC_ALL='' LANGUAGE='' timeout 30 "$GPUWHY" "$@" </dev/null >/dev/null 2>"$T/e"; }
zh queue add --from "$T/spec.jsonl"
has "spec in Chinese" "^gpuwhy: $T/spec.jsonl: 第 1 行：键 'foo' 不是任务字段"
zh queue --queue "$T/open" ls
has "unsafe queue in Chinese" "拒绝使用不安全的队列位置：所有用户都可写（权限 0777）"
zh --lang en queue --queue "$T/open" ls
has "unsafe queue in English" "refusing an unsafe queue location: writable by all users (mode 0777) (use"
zh "${S[@]}" --gpus 7 status
has "--gpus 7 in Chinese" "^gpuwhy: --gpus: GPU 序号 7 不存在（共 1 张 GPU）"
# A trace reader's own errors (kept in English for JSON, said where they are printed).
printf '{"traceEvents":[{"ph":"X"' >"$T/cut.json"
err 3 trace "$T/cut.json"
printf '{"traceEvents":[]}' >"$T/none.json"
err 3 trace "$T/none.json"
# A task's stored error after an out-of-memory failure: the queue's words in the user's
# language where queue ls and show print them, the program's own OOM line (brackets and
# all) as it was logged, English in JSON.
export GPUWHY_QUEUE=$T/qo
trap '"$GPUWHY" queue stop >/dev/null 2>&1; cleanup' EXIT
OOM='torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.10 GiB total capacity; 77.0 GiB already allocated)'
"$GPUWHY" queue config sample-interval 200ms
"$GPUWHY" "${S[@]}" queue add --gpus 1 -n oom --retries 1 --retry-delay 100ms -- \
	sh -c 'echo "$0" >&2; exit 1' "$OOM" >/dev/null || fail "queue add oom"
"$GPUWHY" queue wait --timeout 60s 2>/dev/null
"$GPUWHY" "${S[@]}" queue add --gpus 1 --mem 1G -n oom2 --retries 1 --retry-delay 10m -- \
	sh -c 'echo "$0" >&2; exit 1' "$OOM" >/dev/null || fail "queue add oom2"
for _ in $(seq 300); do
	"$GPUWHY" queue show 2 --json 2>/dev/null | grep -q '"error": "GPU out of memory; retry 1 of 1' && break
	sleep 0.1
done
"$GPUWHY" queue show 1 --json | grep -qF "\"error\": \"GPU out of memory; no retry left (2 attempts) ($OOM)\"" ||
	fail "queue show --json: the stored error: $("$GPUWHY" queue show 1 --json | grep error)"
"$GPUWHY" queue show 2 --json | grep -qF " MiB reserved, at most 1 task per GPU ($OOM)\"" ||
	fail "queue show --json: the stored retry: $("$GPUWHY" queue show 2 --json | grep error)"
rec='^    (=== gpuwhy|torch)'
for v in ls "show 1" "show 2"; do
	# shellcheck disable=SC2086
	GPUWHY_LOCALEDIR="$T/mark" "$GPUWHY" --lang qaa queue $v >"$T/o.m" || fail "queue $v under the marker language"
	i18n_unmarked "$T/o.m" "$rec" >"$T/bad" || fail "queue $v: lines outside gettext:
$(cat "$T/bad")"
	# shellcheck disable=SC2086
	LANG=zh_CN.UTF-8 LC_ALL='' LANGUAGE='' "$GPUWHY" queue $v >"$T/o.z$v"
done
GPUWHY_LOCALEDIR="$T/mark" "$GPUWHY" --lang qaa queue show 1 | grep -qF "◊◊GPU out of memory; no retry left (2 attempts)" ||
	fail "queue show 1: the OOM error not translated: $(GPUWHY_LOCALEDIR="$T/mark" "$GPUWHY" --lang qaa queue show 1 | grep -i memory)"
grep -qF "显存不足 (OOM)；没有剩余重试次数（已尝试 2 次）（$OOM）" "$T/o.zls" ||
	fail "queue ls in Chinese: the OOM error: $(cat "$T/o.zls")"
grep -qF "进行第 1 次重试（共 1 次）（$OOM）" "$T/o.zshow 2" ||
	fail "queue show 2 in Chinese: the retry after an OOM: $(grep -F "$OOM" "$T/o.zshow 2")"
grep -F "$OOM" "$T/o.zshow 1" | grep -q '^    1 ' || fail "queue show 1 in Chinese: the attempt's own OOM line changed: $(cat "$T/o.zshow 1")"
LANG=zh_CN.UTF-8 LC_ALL='' LANGUAGE='' "$GPUWHY" --lang en queue ls >"$T/o.en"
grep -qF "GPU out of memory; no retry left (2 attempts) ($OOM)" "$T/o.en" || fail "queue ls --lang en: $(cat "$T/o.en")"
"$GPUWHY" queue cancel --all >/dev/null
# The worker's other stored forms (a lost shim, Slurm's ends, placement and dependency
# failures, wait reasons), written into a finished task as the worker would: in Chinese
# no English words are left but those of the system (strerror) and the names kept.
if command -v sqlite3 >/dev/null; then
	"$GPUWHY" queue stop >/dev/null 2>&1
	while IFS= read -r e; do
		sqlite3 "$T/qo/queue.db" "UPDATE tasks SET error='${e//\'/\'\'}' WHERE id=1" || fail "sqlite3"
		LANG=zh_CN.UTF-8 LC_ALL='' LANGUAGE='' "$GPUWHY" queue show 1 | grep '^  错误' >"$T/se"
		[ -s "$T/se" ] || fail "queue show 1 with error '$e': no error line"
		# A command named in the text (gpuwhy queue gpus) and strerror's words are kept.
		if sed -e 's/gpuwhy [a-z ]*//g' -e 's/Resource temporarily unavailable//' "$T/se" |
			LC_ALL=C.UTF-8 grep -E '[a-z]{2,} [a-z]{2,}'; then
			fail "stored '$e' shown with English words in Chinese"
		fi
	done <<'EOF_FORMS'
lost (its process vanished without a status); no retry left (2 attempts) (its shim (pid 42) ended without recording how the command ended; its orphaned process group 42 was killed)
failed (cannot start: Resource temporarily unavailable)
host out of memory (Slurm: OUT_OF_MEMORY (host memory limit))
exit 1; retry 1 of 2 after 30s (Slurm ran this attempt 2 times (job 77 was started again, e.g. after a controller restart))
ran past its time limit (not retried) (Slurm: TIMEOUT (time limit))
lost (Slurm no longer knows job 12)
failed (sbatch failed: no output)
waits for task 9, which does not exist
task 3, which it waits for, ended failed
needs 2 GPUs; the queue sees 1 usable GPU
needs 1 GPU with 90000 MiB; the largest GPU has 81559 MiB
no GPU: NVML not available (see /tmp/q/worker.log)
no usable GPU in the queue's view (see gpuwhy queue gpus)
waiting for the first GPU sample
EOF_FORMS
fi
# No driver: the phrase standing where an input would ("no NVIDIA driver") is said
# in the user's language too (on a machine with a driver there is nothing to check).
if ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1'; then
	GPUWHY_LOCALEDIR="$T/mark" env -u GPUWHY_NVML -u GPUWHY_SIM_SCENARIO "$GPUWHY" --lang qaa \
		status </dev/null >/dev/null 2>"$T/e"
	assert_eq "$?" 3 "status without a driver: exit status"
	grep -q "^gpuwhy: ${I18N_MARK}no NVIDIA driver: ${I18N_MARK}.*(${I18N_MARK}" "$T/e" ||
		fail "no driver: what, why and hint not all translated: $(cat "$T/e")"
fi
exit 0
