/* `add --from FILE`: text, JSON Lines, arrays and the batch config shape with input_dir. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "queue/state.h"
#include "queue/spec.h"
#include "util/err.h"
#include "util/fail.h"

static queue_spec tmpl;
static char dir[256];

static int setup(void **state)
{
	(void)state;
	queue_spec_init(&tmpl);
	snprintf(dir, sizeof dir, "/tmp/gw-spec-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	tmpl.cwd = strdup(dir);
	char sub[300];
	snprintf(sub, sizeof sub, "%s/sub", dir);
	if (mkdir(sub, 0700) != 0)
		return -1;
	tmpl.gpus = 2;
	tmpl.retries = 1;
	tmpl.env_json = strdup("{\"HOME\":\"/root\"}");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	queue_spec_free(&tmpl);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Parse text; err gets the failure's English line (what JSON and logs keep). */
static int parse_n(const char *text, size_t len, bool text_mode, queue_spec **out, char *err)
{
	gw_fail f = {0};
	int n = queue_spec_parse_file("tasks.json", text, len, text_mode, &tmpl, out, &f);
	snprintf(err, 512, "%.511s", f.why);
	if (n < 0) {
		assert_int_equal(f.code, GW_EXIT_USAGE);
		assert_string_equal(f.what, "tasks.json");
	}
	return n;
}

static int parse(const char *text, bool text_mode, queue_spec **out, char *err)
{
	return parse_n(text, strlen(text), text_mode, out, err);
}

static void free_specs(queue_spec *s, int n)
{
	for (int i = 0; i < n; i++)
		queue_spec_free(&s[i]);
	free(s);
}

static void test_text(void **state)
{
	(void)state;
	queue_spec *s;
	char err[512];
	int n = parse("# shards\n\npython run.py --shard 0\n  python run.py --shard 1  \r\n", true,
	              &s, err);
	assert_int_equal(n, 2);
	assert_int_equal(s[0].argc, 3);
	assert_string_equal(s[0].argv[0], "sh");
	assert_string_equal(s[0].argv[1], "-c");
	assert_string_equal(s[0].argv[2], "python run.py --shard 0");
	assert_string_equal(s[1].argv[2], "python run.py --shard 1");
	assert_null(s[1].argv[3]);
	assert_int_equal(s[1].gpus, 2); /* from the command line */
	assert_string_equal(s[1].cwd, dir);
	free_specs(s, n);
	assert_int_equal(parse("# nothing\n\n", true, &s, err), -1);
	assert_non_null(strstr(err, "no tasks"));
	const char nul[] = "ok\nbad\0line\n";
	assert_int_equal(parse_n(nul, sizeof nul - 1, true, &s, err), -1);
	assert_non_null(strstr(err, "line 2"));
}

static void test_jsonl(void **state)
{
	(void)state;
	queue_spec *s;
	char err[512];
	int n = parse(
	    "{\"cmd\": [\"python\", \"a.py\"], \"gpus\": 1, \"mem\": \"12G\", \"retries\": 3,"
	    " \"retry_delay\": \"10s\", \"timeout\": 7200, \"name\": \"a\", \"per_gpu\": 2,"
	    " \"env\": {\"X\": \"1\"}, \"backend\": \"slurm\", \"slurm_args\": [\"-p\", \"gpu\"]}\n"
	    "\n"
	    "{\"cmd\": \"echo hi | tr a-z A-Z\", \"mem\": 2048, \"cwd\": \"sub\","
	    " \"allow_foreign\": true, \"after\": 4, \"host_mem\": \"1G\"}\n",
	    false, &s, err);
	assert_int_equal(n, 2);
	assert_int_equal(s[0].argc, 2);
	assert_string_equal(s[0].argv[1], "a.py");
	assert_int_equal(s[0].gpus, 1);
	assert_int_equal(s[0].mem_mib, 12288);
	assert_int_equal(s[0].retries, 3);
	assert_int_equal(s[0].retry_delay_ms, 10000);
	assert_int_equal(s[0].timeout_ms, 7200000);
	assert_int_equal(s[0].per_gpu, 2);
	assert_string_equal(s[0].name, "a");
	assert_int_equal(s[0].backend, QB_SLURM);
	assert_string_equal(s[0].slurm_args, "[\"-p\",\"gpu\"]");
	json_t *env = json_loads(s[0].env_json, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(env, "X")), "1");
	assert_string_equal(json_string_value(json_object_get(env, "HOME")), "/root");
	json_decref(env);
	assert_string_equal(s[1].argv[2], "echo hi | tr a-z A-Z");
	assert_int_equal(s[1].gpus, 2);
	assert_int_equal(s[1].retries, 1);
	assert_int_equal(s[1].mem_mib, 2048);
	assert_true(s[1].allow_foreign);
	assert_int_equal(s[1].after_id, 4);
	assert_int_equal(s[1].host_mem_mib, 1024);
	char want[300];
	snprintf(want, sizeof want, "%s/sub", dir);
	assert_string_equal(s[1].cwd, want);
	free_specs(s, n);
}

static void test_errors_name_the_line(void **state)
{
	(void)state;
	queue_spec *s;
	char err[512];
	assert_int_equal(
	    parse("{\"cmd\": \"a\"}\n{\"cmd\": \"b\", \"gpus\": \"two\"}\n", false, &s, err), -1);
	assert_non_null(strstr(err, "line 2"));
	assert_non_null(strstr(err, "'gpus' must be an integer"));
	assert_int_equal(parse("{\"cmd\": \"a\", \"retires\": 3}\n", false, &s, err), -1);
	assert_non_null(strstr(err, "'retires' is not a task field"));
	assert_int_equal(parse("{\"cmd\": \"a\"}\n{not json\n", false, &s, err), -1);
	assert_non_null(strstr(err, "line 2: not JSON"));
	assert_int_equal(parse("{\"gpus\": 1}\n", false, &s, err), -1);
	assert_non_null(strstr(err, "no 'cmd'"));
	assert_int_equal(parse("{\"cmd\": []}\n", false, &s, err), -1);
	assert_int_equal(parse("{\"cmd\": \"a\", \"mem\": \"lots\"}\n", false, &s, err), -1);
	assert_non_null(strstr(err, "'mem' must be a size"));
	assert_int_equal(parse("{\"cmd\": \"a\", \"backend\": \"k8s\"}\n", false, &s, err), -1);
	assert_int_equal(parse("[{\"cmd\": \"a\"}, 3]", false, &s, err), -1);
	assert_non_null(strstr(err, "task 2"));
	assert_int_equal(parse("{\"cmd\": \"a\", \"env\": {\"A\": 1}}", false, &s, err), -1);
	assert_int_equal(parse("{\"cmd\": \"a\", \"x\": {\"nested\": 1}}", false, &s, err), -1);
	assert_non_null(strstr(err, "unknown key 'x'"));
}

/* The checks of the command line hold for task files too. */
static void test_file_checks_match_the_command_line(void **state)
{
	(void)state;
	queue_spec *s;
	char err[512], name[200], line[400];
	memset(name, 'n', 128);
	name[128] = '\0';
	snprintf(line, sizeof line, "{\"cmd\": \"a\", \"name\": \"%s\"}\n", name);
	assert_int_equal(parse(line, false, &s, err), -1);
	assert_non_null(strstr(err, "'name' is longer than 127 bytes"));
	name[127] = '\0';
	snprintf(line, sizeof line, "{\"cmd\": \"a\", \"name\": \"%s\"}\n", name);
	assert_int_equal(parse(line, false, &s, err), 1);
	free_specs(s, 1);
	assert_int_equal(
	    parse("{\"cmd\": \"a\"}\n{\"cmd\": \"a\", \"cwd\": \"nowhere\"}\n", false, &s, err),
	    -1);
	assert_non_null(strstr(err, "line 2: 'cwd'"));
	assert_non_null(strstr(err, "nowhere"));
	/* The same checks, called as the command line calls them. */
	queue_spec one;
	queue_spec_copy(&one, &tmpl);
	gw_fail f;
	assert_int_equal(queue_spec_set_name(&one, name, &f), 0);
	name[127] = 'n';
	assert_int_equal(queue_spec_set_name(&one, name, &f), GW_EXIT_USAGE);
	assert_string_equal(f.what, "--name");
	assert_int_equal(queue_spec_set_cwd(&one, "nowhere", &f), GW_EXIT_USAGE);
	assert_string_equal(f.what, "--cwd");
	assert_int_equal(queue_spec_set_cwd(&one, "sub", &f), 0);
	char *argv[] = {"true"};
	queue_spec_set_argv(&one, argv, 1);
	assert_int_equal(queue_spec_validate(&one, &f), 0);
	free(one.cwd);
	one.cwd = strdup("/no/such/dir");
	assert_int_equal(queue_spec_validate(&one, &f), GW_EXIT_USAGE);
	assert_non_null(strstr(f.why, "'cwd'"));
	queue_spec_free(&one);
}

static void test_array(void **state)
{
	(void)state;
	queue_spec *s;
	char err[512];
	int n = parse("[{\"cmd\": \"a\"}, {\"cmd\": \"b\", \"gpus\": 0}]", false, &s, err);
	assert_int_equal(n, 2);
	assert_int_equal(s[1].gpus, 0);
	free_specs(s, n);
}

static void touch(const char *name)
{
	char p[400];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
}

static void test_batch_config_shape(void **state)
{
	(void)state;
	char p[400];
	snprintf(p, sizeof p, "%s/inputs", dir);
	mkdir(p, 0700);
	touch("inputs/b.png");
	touch("inputs/a.png");
	touch("inputs/.hidden");
	touch("inputs/notes.txt");
	snprintf(p, sizeof p, "%s/outputs", dir);
	mkdir(p, 0700);
	touch("outputs/b.png");
	queue_spec *s;
	char err[512];
	/* The seed's shape: input/output dirs, retry settings, a record file; batch_size is used.
	 */
	const char *cfg =
	    "{\n  \"cmd\": \"python infer.py --bs {batch_size} {input} {output}\",\n"
	    "  \"input_dir\": \"./inputs\", \"output_dir\": \"./outputs\",\n"
	    "  \"pattern\": \"*.png\", \"batch_size\": 1, \"max_retries\": 3,\n"
	    "  \"retry_interval_seconds\": 10, \"log_file\": \"./logs/batch.log\"\n}\n";
	int n = parse(cfg, false, &s, err);
	assert_int_equal(n, 2);
	char want[600];
	snprintf(want, sizeof want, "python infer.py --bs 1 %s/inputs/a.png %s/outputs/a.png", dir,
	         dir);
	assert_string_equal(s[0].argv[2], want);
	assert_string_equal(s[0].name, "a.png");
	assert_int_equal(s[0].retries, 3);
	assert_int_equal(s[0].retry_delay_ms, 10000);
	snprintf(want, sizeof want, "%s/inputs/b.png", dir);
	assert_string_equal(s[1].input, want);
	snprintf(want, sizeof want, "%s/outputs/b.png", dir);
	assert_string_equal(s[1].output, want);
	snprintf(want, sizeof want, "%s/logs/batch.log", dir);
	assert_string_equal(s[1].record_file, want);
	free_specs(s, n);
	/* Rerun with skip_existing: b.png has its output already. */
	const char *again =
	    "{\"cmd\": [\"conv\", \"{input}\", \"{stem}.jpg\"], \"input_dir\": \"inputs\","
	    " \"output_dir\": \"outputs\", \"pattern\": \"*.png\","
	    " \"skip_existing\": true}";
	n = parse(again, false, &s, err);
	assert_int_equal(n, 1);
	assert_string_equal(s[0].argv[2], "a.jpg");
	free_specs(s, n);
	/* Quoting: names with spaces or quotes stay one word for sh -c. */
	touch("inputs/it's here.png");
	n = parse("{\"cmd\": \"cat {input}\", \"input_dir\": \"inputs\", \"pattern\": \"it*\"}",
	          false, &s, err);
	assert_int_equal(n, 1);
	assert_non_null(strstr(s[0].argv[2], "'\\''s here.png'"));
	free_specs(s, n);
	/* An extra key that cmd does not use is a typo, not a placeholder. */
	assert_int_equal(
	    parse("{\"cmd\": \"x {input}\", \"input_dir\": \"inputs\", \"batch_sise\": 2}", false,
	          &s, err),
	    -1);
	assert_non_null(strstr(err, "'batch_sise'"));
	assert_int_equal(parse("{\"cmd\": \"x\", \"input_dir\": \"missing\"}", false, &s, err), -1);
	assert_non_null(strstr(err, "input_dir"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_text, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_jsonl, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_errors_name_the_line, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_file_checks_match_the_command_line, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_array, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_batch_config_shape, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
