/* `queue ls` and `queue show` as queue/listing.h renders them, from hand-built tasks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/listing.h"

/* A task as the database would give it: everything unknown is absent. */
static void task_init(queue_task *t, int64_t id, const char *cmd)
{
	memset(t, 0, sizeof *t);
	queue_spec_init(&t->spec);
	char *argv[] = {"sh", "-c", (char *)cmd};
	queue_spec_set_argv(&t->spec, argv, 3);
	t->id = id;
	t->mem_hint_mib = -1;
	t->peak_gpu_mib = -1;
	t->peak_rss_kib = -1;
}

static char *render_ls(const queue_task *t, int n, double now)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	queue_ls_render(f, t, n, now);
	fclose(f);
	return text;
}

/* One row per task: the budget after a retry, the GPUs used or asked, memory, the run
 * time of an ended task, the command as written, and what the task brought escaped. */
static void test_ls_rows(void **state)
{
	(void)state;
	queue_task t[2];
	task_init(&t[0], 1, "python train.py");
	t[0].state = QS_DONE;
	t[0].attempts = 2;
	t[0].budget_from = 1;
	t[0].spec.retries = 1;
	t[0].spec.mem_mib = 2048;
	snprintf(t[0].gpus_used, sizeof t[0].gpus_used, "0,1");
	t[0].started = 100;
	t[0].ended = 165.5;
	t[0].exit_ok = true;
	task_init(&t[1], 2, "echo hi");
	t[1].state = QS_QUEUED;
	t[1].spec.gpus = 2;
	snprintf(t[1].spec.name, sizeof t[1].spec.name, "a\033[31mred");
	snprintf(t[1].wait_reason, sizeof t[1].wait_reason, "waiting for the first GPU sample");
	char *text = render_ls(t, 2, 1000);
	const char *want =
	    "   ID  STATE     TRY   GPU     MEM    PEAK   TIME    COMMAND                          "
	    "INFO\n"
	    "    1  done      2/3   0,1     2.0G   -      1m05s   python train.py                  "
	    "exit 0\n"
	    "    2  queued    0/1   2x      -      -      -       a\\x1b[31mred                    "
	    " "
	    "waiting for the first GPU sample\n";
	assert_string_equal(text, want);
	free(text);
	queue_task_free(&t[0]);
	queue_task_free(&t[1]);
}

/* JSON keeps absent values absent (null), never 0. */
static void test_ls_json_absent(void **state)
{
	(void)state;
	queue_task t;
	task_init(&t, 7, "true");
	t.state = QS_RUNNING;
	t.started = 12.5;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	queue_json_print(f, queue_ls_json(&t, 1), false);
	fclose(f);
	assert_non_null(strstr(text, "\"id\":7"));
	assert_non_null(strstr(text, "\"state\":\"running\""));
	assert_non_null(strstr(text, "\"mem_mib\":null"));
	assert_non_null(strstr(text, "\"exit_code\":null"));
	assert_non_null(strstr(text, "\"ended\":null"));
	assert_non_null(strstr(text, "\"started\":12.5"));
	free(text);
	queue_task_free(&t);
}

static void test_last_lines(void **state)
{
	(void)state;
	const char *log = "a\nb\nc\n";
	assert_string_equal(queue_last_lines(log, strlen(log), 2), "b\nc\n");
	assert_string_equal(queue_last_lines(log, strlen(log), 5), log);
	assert_string_equal(queue_last_lines("", 0, 3), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ls_rows),
	    cmocka_unit_test(test_ls_json_absent),
	    cmocka_unit_test(test_last_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
