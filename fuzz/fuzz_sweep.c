/*
 * fuzz_sweep.c - the sweep's parsers on arbitrary bytes: --vary and --search
 * values, placeholders in the command and environment (with and without a
 * shell script to quote into), the plan they make, and DIR/sweep.json as
 * `--resume` reads it. The input is split at NUL bytes: a variable spec, a
 * second one, a command template, an --env template; the whole input is
 * also the state file.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sweep/plan.h"
#include "sweep/state.h"
#include "sweep/subst.h"

/* The k-th NUL-separated piece of data (empty when there are fewer). */
static char *piece(const uint8_t *data, size_t size, int k)
{
	size_t start = 0;
	for (int i = 0; i < k; i++) {
		const uint8_t *z = memchr(data + start, 0, size - start);
		if (!z)
			return strdup("");
		start = (size_t)(z - data) + 1;
	}
	const uint8_t *z = memchr(data + start, 0, size - start);
	size_t n = z ? (size_t)(z - data) - start : size - start;
	char *s = malloc(n + 1);
	if (!s)
		abort();
	memcpy(s, data + start, n);
	s[n] = '\0';
	return s;
}

static void plan_and_subst(sweep_spec *sp)
{
	gw_fail err;
	if (sweep_spec_check(sp, &err) != 0)
		return;
	sweep_plan pl;
	if (sweep_plan_build(sp, &pl, &err) != 0)
		return;
	for (int i = 0; i < pl.n && i < 64; i++) {
		sweep_strv_free(sweep_argv(sp, &pl.c[i], &err));
		sweep_strv_free(sweep_envv(sp, &pl.c[i], &err));
	}
	if (sp->nvars > 0)
		sweep_plan_add(&pl, sp, 0, "4096");
	sweep_plan_free(&pl);
}

static void state_file(const uint8_t *data, size_t size)
{
	static char dir[64];
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "/tmp/fuzz-sweep-%d", (int)getpid());
		mkdir(dir, 0700);
	}
	char path[128];
	snprintf(path, sizeof path, "%s/sweep.json", dir);
	FILE *f = fopen(path, "wb");
	if (!f)
		return;
	fwrite(data, 1, size, f);
	fclose(f);
	sweep_state st;
	fflush(stderr);
	sweep_state_load(dir, &st);
	sweep_state_free(&st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *a = piece(data, size, 0), *b = piece(data, size, 1), *c = piece(data, size, 2),
	     *e = piece(data, size, 3);
	gw_fail err;
	sweep_spec sp;
	sweep_spec_init(&sp);
	sp.max_values = 16;
	sp.max_runs = 256;
	sweep_var_parse(&sp, a, false, &err);
	sweep_var_parse(&sp, b, size % 2 == 0, &err);
	char *cmd[] = {"sh", "-c", c, c};
	char env[600];
	snprintf(env, sizeof env, "X=%s", e);
	char *envv[] = {env};
	sp.cmd = cmd;
	sp.ncmd = 4;
	sp.env = envv;
	sp.nenv = 1;
	plan_and_subst(&sp);
	sp.grid = true;
	plan_and_subst(&sp);
	cmd[0] = "python";
	plan_and_subst(&sp);
	sweep_spec_free(&sp);
	free(a);
	free(b);
	free(c);
	free(e);
	state_file(data, size);
	return 0;
}
