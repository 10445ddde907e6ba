/*
 * isal_dl.h - ISA-L's igzip, loaded by the trace reader for .gz input.
 *
 * libisal is linked with immediate binding: mapping it into every gpuwhy
 * process resolved its 210 symbols at each start (more than half of the
 * dynamic loader's lookups, about 0.17 M instructions of a `queue add` or
 * a `--version`), while only gzip traces inflate with it. The reader calls
 * these through a table filled by dlopen on first use; gw_isal_error() says
 * whether the table is filled.
 */
#ifndef GPUWHY_UTIL_ISAL_DL_H
#define GPUWHY_UTIL_ISAL_DL_H

#ifdef GPUWHY_HAVE_ISAL
#include <isa-l/igzip_lib.h>

#define GW_ISAL_SONAME "libisal.so.2"
#define GW_ISAL_INSTALL "apt-get install libisal2"

typedef struct {
	__typeof__(isal_inflate_init) *inflate_init;
	__typeof__(isal_inflate_reset) *inflate_reset;
	__typeof__(isal_gzip_header_init) *gzip_header_init;
	__typeof__(isal_read_gzip_header) *read_gzip_header;
	__typeof__(isal_inflate) *inflate;
} gw_isal_api;

/* The table (loaded once, thread-safe); empty until gw_isal_error() is NULL. */
const gw_isal_api *gw_isal(void);

/* NULL once the library is loaded, else why not, in the user's language
 * ("cannot load libisal.so.2 (apt-get install libisal2)" or "libisal.so.2
 * has no isal_inflate (...)"). The trace reader, whose errors are stored in
 * English, says "cannot load GW_ISAL_SONAME (GW_ISAL_INSTALL)" itself. */
const char *gw_isal_error(void);
#endif

#endif
