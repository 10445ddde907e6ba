/*
 * dl.c - the loader of the libraries gpuwhy opens on first use (see dl.h).
 */
#include "util/dl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "util/i18n.h"

static void *open_first(const gw_dl_lib *lib)
{
	void *h = NULL;
	for (size_t i = 0; i < lib->n_names && !h; i++)
		h = dlopen(lib->names[i], RTLD_NOW | RTLD_LOCAL);
	return h;
}

int gw_dl_load(const gw_dl_lib *lib, void *table, char *err, size_t errlen)
{
	void *h = open_first(lib);
	if (!h) {
		/* Said when the command fails, after the language is chosen. */
		snprintf(err, errlen, _("cannot load %s (%s)"), lib->names[0], lib->install);
		return -1;
	}
	/* Every symbol first, so a library that lacks one leaves the table as it was. */
	for (size_t i = 0; i < lib->n_syms; i++) {
		if (!dlsym(h, lib->syms[i].symbol)) {
			snprintf(err, errlen, _("%s has no %s (%s or newer is needed)"),
			         lib->names[0], lib->syms[i].symbol, lib->minimum);
			dlclose(h);
			return -1;
		}
	}
	for (size_t i = 0; i < lib->n_syms; i++) {
		/* POSIX guarantees a symbol's address converts to a function pointer. */
		void *p = dlsym(h, lib->syms[i].symbol);
		memcpy((char *)table + lib->syms[i].offset, &p, sizeof p);
	}
	return 0;
}
