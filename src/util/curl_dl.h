/*
 * curl_dl.h - libcurl, loaded by `gpuwhy gate` and `gpuwhy fleet` when they start.
 *
 * Linking it would map libcurl, its TLS, SSH, LDAP and HTTP/2 libraries
 * (about twenty) into every gpuwhy process and relocate them at every
 * start, while only the gate talks to upstreams. Include this header
 * instead of <curl/curl.h>: the curl functions the gate calls go through a
 * table filled by dlopen on first use. The variadic setters are plain
 * functions here (CURL_DISABLE_TYPECHECK), forwarded by macros that keep
 * curl's own check that each call passes exactly three arguments.
 * When the library cannot be loaded, gw_curl_error() says why and every
 * function fails (NULL handles, CURLE_FAILED_INIT).
 */
#ifndef GPUWHY_UTIL_CURL_DL_H
#define GPUWHY_UTIL_CURL_DL_H

#ifndef CURL_DISABLE_TYPECHECK
#define CURL_DISABLE_TYPECHECK
#endif
#include <curl/curl.h>

typedef struct {
	__typeof__(curl_global_init) *global_init;
	__typeof__(curl_global_cleanup) *global_cleanup;
	__typeof__(curl_easy_init) *easy_init;
	__typeof__(curl_easy_setopt) *easy_setopt;
	__typeof__(curl_easy_perform) *easy_perform;
	__typeof__(curl_easy_getinfo) *easy_getinfo;
	__typeof__(curl_easy_pause) *easy_pause;
	__typeof__(curl_easy_reset) *easy_reset;
	__typeof__(curl_easy_cleanup) *easy_cleanup;
	__typeof__(curl_easy_strerror) *easy_strerror;
	__typeof__(curl_slist_append) *slist_append;
	__typeof__(curl_slist_free_all) *slist_free_all;
	__typeof__(curl_multi_init) *multi_init;
	__typeof__(curl_multi_setopt) *multi_setopt;
	__typeof__(curl_multi_add_handle) *multi_add_handle;
	__typeof__(curl_multi_remove_handle) *multi_remove_handle;
	__typeof__(curl_multi_assign) *multi_assign;
	__typeof__(curl_multi_socket_action) *multi_socket_action;
	__typeof__(curl_multi_info_read) *multi_info_read;
	__typeof__(curl_multi_cleanup) *multi_cleanup;
	__typeof__(curl_url) *url;
	__typeof__(curl_url_cleanup) *url_cleanup;
	__typeof__(curl_url_dup) *url_dup;
	__typeof__(curl_url_set) *url_set;
	__typeof__(curl_url_get) *url_get;
	__typeof__(curl_free) *free;
} gw_curl_api;

/* The table (loaded once, thread-safe); its functions fail when loading failed. */
const gw_curl_api *gw_curl(void);

/* NULL once the library is loaded, else why it is not: "cannot load
 * libcurl.so.4 (apt-get install libcurl4)" or similar, for
 * "gpuwhy: <command>: <this>". Loads it when not tried yet. */
const char *gw_curl_error(void);

#define curl_global_init(...) (gw_curl()->global_init(__VA_ARGS__))
#define curl_global_cleanup() (gw_curl()->global_cleanup())
#define curl_easy_init() (gw_curl()->easy_init())
#undef curl_easy_setopt
#define curl_easy_setopt(h, o, p) (gw_curl()->easy_setopt(h, o, p))
#undef curl_easy_getinfo
#define curl_easy_getinfo(h, o, p) (gw_curl()->easy_getinfo(h, o, p))
#define curl_easy_perform(...) (gw_curl()->easy_perform(__VA_ARGS__))
#define curl_easy_pause(...) (gw_curl()->easy_pause(__VA_ARGS__))
#define curl_easy_reset(...) (gw_curl()->easy_reset(__VA_ARGS__))
#define curl_easy_cleanup(...) (gw_curl()->easy_cleanup(__VA_ARGS__))
#define curl_easy_strerror(...) (gw_curl()->easy_strerror(__VA_ARGS__))
#define curl_slist_append(...) (gw_curl()->slist_append(__VA_ARGS__))
#define curl_slist_free_all(...) (gw_curl()->slist_free_all(__VA_ARGS__))
#define curl_multi_init() (gw_curl()->multi_init())
#undef curl_multi_setopt
#define curl_multi_setopt(h, o, p) (gw_curl()->multi_setopt(h, o, p))
#define curl_multi_add_handle(...) (gw_curl()->multi_add_handle(__VA_ARGS__))
#define curl_multi_remove_handle(...) (gw_curl()->multi_remove_handle(__VA_ARGS__))
#define curl_multi_assign(...) (gw_curl()->multi_assign(__VA_ARGS__))
#define curl_multi_socket_action(...) (gw_curl()->multi_socket_action(__VA_ARGS__))
#define curl_multi_info_read(...) (gw_curl()->multi_info_read(__VA_ARGS__))
#define curl_multi_cleanup(...) (gw_curl()->multi_cleanup(__VA_ARGS__))
#define curl_url() (gw_curl()->url())
#define curl_url_cleanup(...) (gw_curl()->url_cleanup(__VA_ARGS__))
#define curl_url_dup(...) (gw_curl()->url_dup(__VA_ARGS__))
#define curl_url_set(...) (gw_curl()->url_set(__VA_ARGS__))
#define curl_url_get(...) (gw_curl()->url_get(__VA_ARGS__))
#define curl_free(...) (gw_curl()->free(__VA_ARGS__))

#endif
