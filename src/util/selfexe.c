/* selfexe.c - the running binary's path, read once. */
#include "util/selfexe.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t self_once = PTHREAD_ONCE_INIT;
static char self_path[PATH_MAX];
static int self_ok;

static void self_read(void)
{
	ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path);
	/* n == sizeof: the path was cut, so it is not this binary's path. */
	if (n <= 0 || (size_t)n >= sizeof self_path)
		return;
	self_path[n] = '\0';
	self_ok = 1;
}

const char *gw_self_exe(void)
{
	pthread_once(&self_once, self_read);
	return self_ok ? self_path : NULL;
}

int gw_self_dir(char *out, size_t outlen)
{
	const char *exe = gw_self_exe();
	const char *slash = exe ? strrchr(exe, '/') : NULL;
	if (!slash || (size_t)(slash - exe) >= outlen)
		return -1;
	snprintf(out, outlen, "%.*s", (int)(slash - exe), exe);
	return 0;
}
