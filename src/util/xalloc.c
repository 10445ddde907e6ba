/* xalloc.c - allocation that does not return NULL (policy in xalloc.h). */
#include "util/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Noreturn void gw_out_of_memory(void)
{
	/* write(2), not stdio: stdio may itself need memory. */
	static const char msg[] = "gpuwhy: out of memory\n";
	ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
	(void)w;
	abort();
}

void *gw_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		gw_out_of_memory();
	return p;
}

void *gw_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		gw_out_of_memory();
	return p;
}

void *gw_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		gw_out_of_memory();
	return q;
}

void *gw_xreallocarray(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		gw_out_of_memory();
	return gw_xrealloc(p, n * size);
}

char *gw_xstrdup(const char *s)
{
	return gw_xstrndup(s, strlen(s));
}

char *gw_xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = gw_xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}
