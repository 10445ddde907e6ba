/*
 * curl_dl.c - load libcurl on first use (see curl_dl.h for why).
 */
#include "util/curl_dl.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "util/dl.h"

static char load_error[sizeof((gw_fail *)0)->why_text] = "libcurl is not loaded";
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

static CURLcode no_easy_perform(CURL *e)
{
	(void)e;
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

static CURLU *no_url(void)
{
	return NULL;
}

static void no_url_cleanup(CURLU *u)
{
	(void)u;
}

/* libcurl 8 made the source const; the cast in the table fits either. */
static CURLU *no_url_dup(CURLU *u)
{
	(void)u;
	return NULL;
}

static CURLUcode no_url_set(CURLU *u, CURLUPart what, const char *part, unsigned int flags)
{
	(void)u, (void)what, (void)part, (void)flags;
	return CURLUE_OUT_OF_MEMORY;
}

/* libcurl 8 made the handle const; the cast in the table fits either. */
static CURLUcode no_url_get(CURLU *u, CURLUPart what, char **part, unsigned int flags)
{
	(void)u, (void)what, (void)flags;
	if (part)
		*part = NULL;
	return CURLUE_OUT_OF_MEMORY;
}

static void no_free(void *p)
{
	(void)p;
}

static gw_curl_api api = {
    .global_init = no_global_init,
    .global_cleanup = no_void,
    .easy_init = no_easy_init,
    .easy_setopt = no_easy_setopt,
    .easy_perform = no_easy_perform,
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
    .url = no_url,
    .url_cleanup = no_url_cleanup,
    .url_dup = (__typeof__(curl_url_dup) *)no_url_dup,
    .url_set = no_url_set,
    .url_get = (__typeof__(curl_url_get) *)no_url_get,
    .free = no_free,
};
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Every function the table holds, with the symbol that fills it. */
static const gw_dl_sym syms[] = {
    GW_DL_SYM(gw_curl_api, global_init, "curl_global_init"),
    GW_DL_SYM(gw_curl_api, global_cleanup, "curl_global_cleanup"),
    GW_DL_SYM(gw_curl_api, easy_init, "curl_easy_init"),
    GW_DL_SYM(gw_curl_api, easy_setopt, "curl_easy_setopt"),
    GW_DL_SYM(gw_curl_api, easy_perform, "curl_easy_perform"),
    GW_DL_SYM(gw_curl_api, easy_getinfo, "curl_easy_getinfo"),
    GW_DL_SYM(gw_curl_api, easy_pause, "curl_easy_pause"),
    GW_DL_SYM(gw_curl_api, easy_reset, "curl_easy_reset"),
    GW_DL_SYM(gw_curl_api, easy_cleanup, "curl_easy_cleanup"),
    GW_DL_SYM(gw_curl_api, easy_strerror, "curl_easy_strerror"),
    GW_DL_SYM(gw_curl_api, slist_append, "curl_slist_append"),
    GW_DL_SYM(gw_curl_api, slist_free_all, "curl_slist_free_all"),
    GW_DL_SYM(gw_curl_api, multi_init, "curl_multi_init"),
    GW_DL_SYM(gw_curl_api, multi_setopt, "curl_multi_setopt"),
    GW_DL_SYM(gw_curl_api, multi_add_handle, "curl_multi_add_handle"),
    GW_DL_SYM(gw_curl_api, multi_remove_handle, "curl_multi_remove_handle"),
    GW_DL_SYM(gw_curl_api, multi_assign, "curl_multi_assign"),
    GW_DL_SYM(gw_curl_api, multi_socket_action, "curl_multi_socket_action"),
    GW_DL_SYM(gw_curl_api, multi_info_read, "curl_multi_info_read"),
    GW_DL_SYM(gw_curl_api, multi_cleanup, "curl_multi_cleanup"),
    GW_DL_SYM(gw_curl_api, url, "curl_url"),
    GW_DL_SYM(gw_curl_api, url_cleanup, "curl_url_cleanup"),
    GW_DL_SYM(gw_curl_api, url_dup, "curl_url_dup"),
    GW_DL_SYM(gw_curl_api, url_set, "curl_url_set"),
    GW_DL_SYM(gw_curl_api, url_get, "curl_url_get"),
    GW_DL_SYM(gw_curl_api, free, "curl_free"),
};

static void load(void)
{
	/* Debian ships the same ABI built against OpenSSL (libcurl4) or GnuTLS. */
	static const char *const names[] = {"libcurl.so.4", "libcurl-gnutls.so.4", "libcurl.so"};
	const gw_dl_lib lib = {
	    .names = names,
	    .n_names = sizeof names / sizeof *names,
	    .install = "apt-get install libcurl4",
	    .minimum = "libcurl 7.68",
	    .syms = syms,
	    .n_syms = sizeof syms / sizeof *syms,
	};
	gw_fail f = {0};
	if (gw_dl_load(&lib, &api, &f) == 0)
		error_now = NULL;
	else
		snprintf(load_error, sizeof load_error, "%s", f.why_text);
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
