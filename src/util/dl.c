/*
 * dl.c - the loader of the libraries gpuwhy opens on first use (see dl.h).
 */
#include "util/dl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "util/err.h"

static void *open_first(const gw_dl_lib *lib)
{
	void *h = NULL;
	for (size_t i = 0; i < lib->n_names && !h; i++)
		h = dlopen(lib->names[i], RTLD_NOW | RTLD_LOCAL);
	return h;
}

int gw_dl_load(const gw_dl_lib *lib, void *table, gw_fail *err)
{
	void *h = open_first(lib);
	if (!h)
		/* Said when the command fails, after the language is chosen. */
		return gw_fail_set(err, GW_EXIT_ENV, lib->names[0], NULL, "cannot load %s (%s)",
		                   lib->names[0], lib->install);
	/* Every symbol first, so a library that lacks one leaves the table as it was. */
	for (size_t i = 0; i < lib->n_syms; i++) {
		if (!dlsym(h, lib->syms[i].symbol)) {
			dlclose(h);
			return gw_fail_set(err, GW_EXIT_ENV, lib->names[0], NULL,
			                   "%s has no %s (%s or newer is needed)", lib->names[0],
			                   lib->syms[i].symbol, lib->minimum);
		}
	}
	for (size_t i = 0; i < lib->n_syms; i++) {
		/* POSIX guarantees a symbol's address converts to a function pointer. */
		void *p = dlsym(h, lib->syms[i].symbol);
		memcpy((char *)table + lib->syms[i].offset, &p, sizeof p);
	}
	return 0;
}
