/*
 * test_tmpdir.h - a private folder under /tmp for a unit-test binary, made
 * in its group setup and removed with all it holds in the teardown.
 */
#ifndef GPUWHY_TEST_TMPDIR_H
#define GPUWHY_TEST_TMPDIR_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* dir = /tmp/gpuwhy-NAME-XXXXXX made by mkdtemp; 0, or -1 when it could not be. */
static inline int test_tmpdir_make(char *dir, size_t len, const char *name)
{
	int n = snprintf(dir, len, "/tmp/gpuwhy-%s-XXXXXX", name);
	if (n < 0 || (size_t)n >= len)
		return -1;
	return mkdtemp(dir) ? 0 : -1;
}

static inline int test_tmpdir_rm(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

/* A folder as test_tmpdir_make, filled by the fixture script (sh SCRIPT DIR); 0 or -1. */
static inline int test_tmpdir_script(char *dir, size_t len, const char *name, const char *script)
{
	if (test_tmpdir_make(dir, len, name) != 0)
		return -1;
	char cmd[1024];
	int n = snprintf(cmd, sizeof cmd, "sh '%s' '%s'", script, dir);
	return n > 0 && (size_t)n < sizeof cmd && system(cmd) == 0 ? 0 : -1;
}

/* Remove dir and everything below it (links are removed, never followed); 0 when all went. */
static inline int test_tmpdir_remove(const char *dir)
{
	return nftw(dir, test_tmpdir_rm, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

#endif
