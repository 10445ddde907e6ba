/*
 * mhd_dl.c - load libmicrohttpd on first use (see mhd_dl.h for why).
 */
#include "exporter/mhd_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

/* Stand-ins when the library is missing: the server does not start, nothing else runs. */
static struct MHD_Daemon *no_start(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
                                   void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	(void)flags, (void)port, (void)apc, (void)apc_cls, (void)dh, (void)dh_cls;
	return NULL;
}

static void no_stop(struct MHD_Daemon *d)
{
	(void)d;
}

static const union MHD_ConnectionInfo *no_info(struct MHD_Connection *c,
                                               enum MHD_ConnectionInfoType t, ...)
{
	(void)c, (void)t;
	return NULL;
}

static const char *no_lookup(struct MHD_Connection *c, enum MHD_ValueKind k, const char *key)
{
	(void)c, (void)k, (void)key;
	return NULL;
}

static struct MHD_Response *no_buffer(size_t size, void *buffer, enum MHD_ResponseMemoryMode mode)
{
	(void)size, (void)buffer, (void)mode;
	return NULL;
}

static struct MHD_Response *no_buffer_cb(size_t size, void *buffer,
                                         MHD_ContentReaderFreeCallback cb, void *cls)
{
	(void)size, (void)buffer, (void)cb, (void)cls;
	return NULL;
}

static enum MHD_Result no_header(struct MHD_Response *r, const char *h, const char *v)
{
	(void)r, (void)h, (void)v;
	return MHD_NO;
}

static enum MHD_Result no_queue(struct MHD_Connection *c, unsigned int status,
                                struct MHD_Response *r)
{
	(void)c, (void)status, (void)r;
	return MHD_NO;
}

static void no_destroy(struct MHD_Response *r)
{
	(void)r;
}

static gw_mhd_api api = {no_start,     no_stop,   no_info,  no_lookup, no_buffer,
                         no_buffer_cb, no_header, no_queue, no_destroy};
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define LOAD(field, name)                                                                          \
	do {                                                                                       \
		*(void **)&t.field = dlsym(h, name);                                               \
		if (!t.field)                                                                      \
			missing = name;                                                            \
	} while (0)

static void load(void)
{
	const char *names[] = {"libmicrohttpd.so.12", "libmicrohttpd.so"};
	void *h = NULL;
	for (size_t i = 0; i < sizeof names / sizeof *names && !h; i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr,
		        "gpuwhy: libmicrohttpd.so.12: cannot load: %s (apt-get install "
		        "libmicrohttpd12)\n",
		        dlerror());
		return;
	}
	gw_mhd_api t = api;
	const char *missing = NULL;
	LOAD(start_daemon, "MHD_start_daemon");
	LOAD(stop_daemon, "MHD_stop_daemon");
	LOAD(get_connection_info, "MHD_get_connection_info");
	LOAD(lookup_connection_value, "MHD_lookup_connection_value");
	LOAD(create_response_from_buffer, "MHD_create_response_from_buffer");
	LOAD(create_response_from_buffer_with_free_callback_cls,
	     "MHD_create_response_from_buffer_with_free_callback_cls");
	LOAD(add_response_header, "MHD_add_response_header");
	LOAD(queue_response, "MHD_queue_response");
	LOAD(destroy_response, "MHD_destroy_response");
	if (missing) {
		fprintf(stderr,
		        "gpuwhy: libmicrohttpd.so.12: has no %s (libmicrohttpd 0.9.71 or newer is "
		        "needed)\n",
		        missing);
		dlclose(h);
		return;
	}
	api = t;
}

const gw_mhd_api *gw_mhd(void)
{
	pthread_once(&once, load);
	return &api;
}
