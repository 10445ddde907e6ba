/*
 * curl_dl.c - load libcurl on first use (see curl_dl.h for why).
 */
#include "util/curl_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

static char load_error[160] = "libcurl is not loaded";
static const char *error_now = load_error;

/* Stand-ins when the library is missing: every call fails as libcurl's own do. */
static CURLcode no_global_init(long flags)
{
	(void)flags;
	return CURLE_FAILED_INIT;
}

static void no_void(void)
{
}

static CURL *no_easy_init(void)
{
	return NULL;
}

static CURLcode no_easy_setopt(CURL *e, CURLoption o, ...)
{
	(void)e, (void)o;
	return CURLE_FAILED_INIT;
}

static CURLcode no_easy_getinfo(CURL *e, CURLINFO i, ...)
{
	(void)e, (void)i;
	return CURLE_FAILED_INIT;
}

static CURLcode no_easy_pause(CURL *e, int mask)
{
	(void)e, (void)mask;
	return CURLE_FAILED_INIT;
}

static void no_easy(CURL *e)
{
	(void)e;
}

static const char *no_strerror(CURLcode c)
{
	(void)c;
	return load_error;
}

static struct curl_slist *no_slist_append(struct curl_slist *l, const char *s)
{
	(void)l, (void)s;
	return NULL;
}

static void no_slist_free(struct curl_slist *l)
{
	(void)l;
}

static CURLM *no_multi_init(void)
{
	return NULL;
}

static CURLMcode no_multi_setopt(CURLM *m, CURLMoption o, ...)
{
	(void)m, (void)o;
	return CURLM_BAD_HANDLE;
}

static CURLMcode no_multi_handle(CURLM *m, CURL *e)
{
	(void)m, (void)e;
	return CURLM_BAD_HANDLE;
}

static CURLMcode no_multi_assign(CURLM *m, curl_socket_t s, void *p)
{
	(void)m, (void)s, (void)p;
	return CURLM_BAD_HANDLE;
}

static CURLMcode no_socket_action(CURLM *m, curl_socket_t s, int mask, int *running)
{
	(void)m, (void)s, (void)mask;
	if (running)
		*running = 0;
	return CURLM_BAD_HANDLE;
}

static CURLMsg *no_info_read(CURLM *m, int *left)
{
	(void)m;
	if (left)
		*left = 0;
	return NULL;
}

static CURLMcode no_multi_cleanup(CURLM *m)
{
	(void)m;
	return CURLM_BAD_HANDLE;
}

static gw_curl_api api = {
    .global_init = no_global_init,
    .global_cleanup = no_void,
    .easy_init = no_easy_init,
    .easy_setopt = no_easy_setopt,
    .easy_getinfo = no_easy_getinfo,
    .easy_pause = no_easy_pause,
    .easy_reset = no_easy,
    .easy_cleanup = no_easy,
    .easy_strerror = no_strerror,
    .slist_append = no_slist_append,
    .slist_free_all = no_slist_free,
    .multi_init = no_multi_init,
    .multi_setopt = no_multi_setopt,
    .multi_add_handle = no_multi_handle,
    .multi_remove_handle = no_multi_handle,
    .multi_assign = no_multi_assign,
    .multi_socket_action = no_socket_action,
    .multi_info_read = no_info_read,
    .multi_cleanup = no_multi_cleanup,
};
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define LOAD(field, name)                                                                          \
	do {                                                                                       \
		*(void **)&t.field = dlsym(h, name);                                               \
		if (!t.field && !missing)                                                          \
			missing = name;                                                            \
	} while (0)

/* Fill *out with every symbol, or leave it as it is and name the first one missing. */
static int load_all(void *h, gw_curl_api *out, const char **missingp)
{
	gw_curl_api t = *out;
	const char *missing = NULL;
	LOAD(global_init, "curl_global_init");
	LOAD(global_cleanup, "curl_global_cleanup");
	LOAD(easy_init, "curl_easy_init");
	LOAD(easy_setopt, "curl_easy_setopt");
	LOAD(easy_getinfo, "curl_easy_getinfo");
	LOAD(easy_pause, "curl_easy_pause");
	LOAD(easy_reset, "curl_easy_reset");
	LOAD(easy_cleanup, "curl_easy_cleanup");
	LOAD(easy_strerror, "curl_easy_strerror");
	LOAD(slist_append, "curl_slist_append");
	LOAD(slist_free_all, "curl_slist_free_all");
	LOAD(multi_init, "curl_multi_init");
	LOAD(multi_setopt, "curl_multi_setopt");
	LOAD(multi_add_handle, "curl_multi_add_handle");
	LOAD(multi_remove_handle, "curl_multi_remove_handle");
	LOAD(multi_assign, "curl_multi_assign");
	LOAD(multi_socket_action, "curl_multi_socket_action");
	LOAD(multi_info_read, "curl_multi_info_read");
	LOAD(multi_cleanup, "curl_multi_cleanup");
	*missingp = missing;
	if (missing)
		return -1;
	*out = t;
	return 0;
}

static void load(void)
{
	/* Debian ships the same ABI built against OpenSSL (libcurl4) or GnuTLS. */
	const char *names[] = {"libcurl.so.4", "libcurl-gnutls.so.4", "libcurl.so"};
	void *h = NULL;
	for (size_t i = 0; i < sizeof names / sizeof *names && !h; i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(load_error, sizeof load_error,
		         "cannot load libcurl.so.4 (apt-get install libcurl4)");
		return;
	}
	const char *missing = NULL;
	if (load_all(h, &api, &missing) != 0) {
		snprintf(load_error, sizeof load_error,
		         "libcurl.so.4 has no %s (libcurl 7.68 or newer is needed)", missing);
		dlclose(h);
		return;
	}
	error_now = NULL;
}

const gw_curl_api *gw_curl(void)
{
	pthread_once(&once, load);
	return &api;
}

const char *gw_curl_error(void)
{
	pthread_once(&once, load);
	return error_now;
}
