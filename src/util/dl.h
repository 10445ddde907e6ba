/*
 * dl.h - fill a table of function pointers from a library opened with dlopen.
 *
 * The commands that need libmicrohttpd or libcurl load them on first use
 * (mhd_dl.h, curl_dl.h); this is the loader both share. A table is a struct
 * of function pointers; each entry names a field by its offset and the
 * symbol that fills it. Loading is all or nothing: when the library is
 * missing or lacks a symbol the table keeps what it held (the stand-ins)
 * and the error says which, in the words the failing command prints.
 */
#ifndef GPUWHY_UTIL_DL_H
#define GPUWHY_UTIL_DL_H

#include <stddef.h>

#include "util/fail.h"

typedef struct {
	size_t offset;      /* of the function pointer inside the table */
	const char *symbol; /* its name in the library */
} gw_dl_sym;

/* One table entry: GW_DL_SYM(gw_curl_api, easy_init, "curl_easy_init"). */
#define GW_DL_SYM(type, field, name)                                                               \
	{                                                                                          \
		offsetof(type, field), (name)                                                      \
	}

typedef struct {
	const char *const
	    *names; /* sonames to try, in order; names[0] is the one named in errors */
	size_t n_names;
	const char *install; /* how to get it: "apt-get install libcurl4" */
	const char *minimum; /* the oldest version with every symbol: "libcurl 7.68" */
	const gw_dl_sym *syms;
	size_t n_syms;
} gw_dl_lib;

/*
 * Open the first of lib->names that loads and fill every symbol into table.
 * Returns 0, or GW_EXIT_ENV with *err filled: what is NAME (the first of the
 * names), why "cannot load NAME (INSTALL)" or "NAME has no SYMBOL (MINIMUM or
 * newer is needed)", whole, since the loaders keep and print it as one
 * sentence; the table is then unchanged and the library closed again.
 */
int gw_dl_load(const gw_dl_lib *lib, void *table, gw_fail *err);

#endif
