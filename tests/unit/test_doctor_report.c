/* The doctor's results, their text and JSON forms, the exit code, and small helpers. */
#include <stdbool.h>
#include <stdio.h>
#include "test_doctor_common.h"
#include "util/strbuf.h"

#include <jansson.h>

static char *capture(void (*print)(FILE *, const doctor_report *), const doctor_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	print(f, r);
	fclose(f);
	return buf;
}

static void print_text_plain(FILE *f, const doctor_report *r)
{
	doctor_print_text(f, r, false);
}

static void text_is_one_line_per_check_with_fix(void **state)
{
	(void)state;
	doctor_report r = {0};
	doctor_addf(&r, "a.pass", DOCTOR_PASS, "all %d good", 2);
	doctor_result *w = doctor_addf(&r, "b.longer_name", DOCTOR_WARN, "something odd");
	doctor_fixf(w, "do %s", "this");
	doctor_addf(&r, "c.skip", DOCTOR_SKIP, "not here");
	char *t = capture(print_text_plain, &r);
	assert_non_null(strstr(t, "PASS  a.pass         all 2 good\n"));
	assert_non_null(strstr(t, "WARN  b.longer_name  something odd  fix: do this\n"));
	assert_non_null(strstr(t, "SKIP  c.skip         not here\n"));
	assert_non_null(strstr(t, "3 checks: 0 FAIL, 1 WARN, 1 PASS, 1 SKIP"));
	assert_null(strstr(t, "\033["));
	free(t);
	assert_int_equal(doctor_exit_code(&r), 0);
	doctor_addf(&r, "d.fail", DOCTOR_FAIL, "broken");
	assert_int_equal(doctor_exit_code(&r), 1);
	t = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&t, &len);
	doctor_print_text(f, &r, true);
	fclose(f);
	assert_non_null(strstr(t, "\033[1;31mFAIL\033[0m"));
	free(t);
	doctor_report_free(&r);
}

static void json_is_an_array_of_check_status_found_fix(void **state)
{
	(void)state;
	doctor_report r = {0};
	doctor_addf(&r, "x.one", DOCTOR_PASS, "quote \" and backslash \\");
	doctor_result *e = doctor_addf(&r, "x.two", DOCTOR_FAIL, "bad");
	doctor_fixf(e, "fix it");
	char *t = capture(doctor_print_json, &r);
	json_error_t err;
	json_t *a = json_loads(t, 0, &err);
	assert_non_null(a);
	assert_true(json_is_array(a));
	assert_int_equal(json_array_size(a), 2);
	json_t *o = json_array_get(a, 0);
	assert_string_equal(json_string_value(json_object_get(o, "check")), "x.one");
	assert_string_equal(json_string_value(json_object_get(o, "status")), "PASS");
	assert_string_equal(json_string_value(json_object_get(o, "found")),
	                    "quote \" and backslash \\");
	assert_true(json_is_null(json_object_get(o, "fix")));
	o = json_array_get(a, 1);
	assert_string_equal(json_string_value(json_object_get(o, "status")), "FAIL");
	assert_string_equal(json_string_value(json_object_get(o, "fix")), "fix it");
	json_decref(a);
	free(t);
	doctor_report_free(&r);
}

static void string_builder(void **state)
{
	(void)state;
	gw_strbuf b = {0};
	assert_string_equal(gw_sb_str(&b), "");
	gw_sb_sep(&b, ", ");
	gw_sb_printf(&b, "%d", 1);
	for (int i = 2; i <= 200; i++) {
		gw_sb_sep(&b, ",");
		gw_sb_printf(&b, "%d", i);
	}
	assert_true(!strncmp(gw_sb_str(&b), "1,2,3,", 6));
	assert_non_null(strstr(gw_sb_str(&b), ",199,200"));
	gw_sb_free(&b);
}

static void helpers(void **state)
{
	(void)state;
	char *env[] = {"A=1", "AB=2", "EMPTY=", NULL};
	assert_string_equal(doctor_env_from_list(env, "A"), "1");
	assert_string_equal(doctor_env_from_list(env, "AB"), "2");
	assert_string_equal(doctor_env_from_list(env, "EMPTY"), "");
	assert_null(doctor_env_from_list(env, "B"));
	assert_int_equal(doctor_cuda_version_int("12.4"), 12040);
	assert_int_equal(doctor_cuda_version_int("11.8"), 11080);
	assert_int_equal(doctor_cuda_version_int("12"), 12000);
	assert_int_equal(doctor_cuda_version_int(""), -1);
	assert_int_equal(doctor_cuda_version_int("cpu"), -1);
	assert_true(doctor_same_pci("00000000:3B:00.0", "0000:3b:00.0"));
	assert_true(doctor_same_pci("0000:3b:00", "00000000:3B:00.0"));
	assert_true(doctor_same_pci("3b:00.0", "0000:3b:00.0"));
	assert_false(doctor_same_pci("0000:3b:00.0", "0000:3c:00.0"));
	assert_false(doctor_same_pci("0000:3b:00.1", "0000:3b:00.0"));
	assert_false(doctor_same_pci("garbage", "0000:3b:00.0"));
	char bdf[16];
	assert_true(doctor_sysfs_bdf("00000000:3B:00.0", bdf));
	assert_string_equal(bdf, "0000:3b:00.0");
	char b[32];
	assert_string_equal(doctor_bytes(80ULL << 30, b, sizeof b), "80.0 GiB");
	assert_string_equal(doctor_bytes(512ULL << 20, b, sizeof b), "512 MiB");
	assert_string_equal(
	    doctor_lib_version("/usr/lib/libnvidia-ml.so.550.54.14", "libnvidia-ml.so", b, sizeof b)
	        ? b
	        : "",
	    "550.54.14");
	assert_false(
	    doctor_lib_version("/usr/lib/libnvidia-ml.so.1", "libnvidia-ml.so", b, sizeof b));
}

static void every_check_is_listed_once(void **state)
{
	(void)state;
	assert_true(doctor_ncheck >= 39);
	for (size_t i = 0; i < doctor_ncheck; i++) {
		assert_non_null(doctor_checks[i].fn);
		assert_true(strlen(doctor_checks[i].what) > 10);
		for (size_t j = i + 1; j < doctor_ncheck; j++)
			assert_true(strcmp(doctor_checks[i].name, doctor_checks[j].name) != 0);
	}
}

/* The whole run over an empty machine: every check speaks exactly once (load.port once without
 * ports). */
static void run_all_on_an_empty_machine(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
	snprintf(f->m.error, sizeof f->m.error, "no NVIDIA driver: libnvidia-ml.so.1 not found");
	doctor_ctx_init(&f->c, &f->p, &f->o, &f->m, &f->r);
	f->ctx_live = true;
	doctor_run_all(&f->c);
	assert_int_equal(f->r.n, doctor_ncheck);
	for (size_t i = 0; i < doctor_ncheck; i++) {
		assert_string_equal(f->r.v[i].check, doctor_checks[i].name);
		if (f->r.v[i].status != DOCTOR_PASS && f->r.v[i].status != DOCTOR_SKIP)
			assert_non_null(f->r.v[i].fix);
	}
	assert_int_equal(f->r.v[0].status, DOCTOR_FAIL);
	assert_int_equal(doctor_exit_code(&f->r), 1);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(text_is_one_line_per_check_with_fix),
	    cmocka_unit_test(json_is_an_array_of_check_status_found_fix),
	    cmocka_unit_test(string_builder),
	    cmocka_unit_test(helpers),
	    cmocka_unit_test(every_check_is_listed_once),
	    cmocka_unit_test(run_all_on_an_empty_machine),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
