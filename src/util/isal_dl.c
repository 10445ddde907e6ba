/*
 * isal_dl.c - load ISA-L's igzip on first use (see isal_dl.h for why).
 */
#include "util/isal_dl.h"

#ifdef GPUWHY_HAVE_ISAL
#include <pthread.h>
#include <stdio.h>

#include "util/dl.h"

static char load_error[sizeof((gw_fail *)0)->why_text] = "libisal is not loaded";
static const char *error_now = load_error;
static gw_isal_api api;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const gw_dl_sym syms[] = {
    GW_DL_SYM(gw_isal_api, inflate_init, "isal_inflate_init"),
    GW_DL_SYM(gw_isal_api, inflate_reset, "isal_inflate_reset"),
    GW_DL_SYM(gw_isal_api, gzip_header_init, "isal_gzip_header_init"),
    GW_DL_SYM(gw_isal_api, read_gzip_header, "isal_read_gzip_header"),
    GW_DL_SYM(gw_isal_api, inflate, "isal_inflate"),
};

static void load(void)
{
	static const char *const names[] = {GW_ISAL_SONAME, "libisal.so"};
	const gw_dl_lib lib = {
	    .names = names,
	    .n_names = sizeof names / sizeof *names,
	    .install = GW_ISAL_INSTALL,
	    .minimum = "isa-l 2.30",
	    .syms = syms,
	    .n_syms = sizeof syms / sizeof *syms,
	};
	gw_fail f = {0};
	if (gw_dl_load(&lib, &api, &f) == 0)
		error_now = NULL;
	else
		snprintf(load_error, sizeof load_error, "%s", f.why_text);
}

const gw_isal_api *gw_isal(void)
{
	pthread_once(&once, load);
	return &api;
}

const char *gw_isal_error(void)
{
	pthread_once(&once, load);
	return error_now;
}
#endif
