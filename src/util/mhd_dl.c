/*
 * mhd_dl.c - load libmicrohttpd on first use (see mhd_dl.h for why).
 */
#include "util/mhd_dl.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "util/dl.h"

static char load_error[sizeof((gw_fail *)0)->why_text] = "libmicrohttpd is not loaded";
static const char *error_now = load_error;

/* Stand-ins when the library is missing: no server starts, so nothing else runs. */
static struct MHD_Daemon *no_start(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
                                   void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	(void)flags, (void)port, (void)apc, (void)apc_cls, (void)dh, (void)dh_cls;
	fprintf(stderr, "gpuwhy: %s\n", load_error);
	return NULL;
}

static void no_daemon(struct MHD_Daemon *d)
{
	(void)d;
}

static MHD_socket no_quiesce(struct MHD_Daemon *d)
{
	(void)d;
	return MHD_INVALID_SOCKET;
}

static enum MHD_Result no_run(struct MHD_Daemon *d)
{
	(void)d;
	return MHD_NO;
}

static enum MHD_Result no_timeout(struct MHD_Daemon *d, MHD_UNSIGNED_LONG_LONG *t)
{
	(void)d, (void)t;
	return MHD_NO;
}

static const union MHD_DaemonInfo *no_daemon_info(struct MHD_Daemon *d, enum MHD_DaemonInfoType t,
                                                  ...)
{
	(void)d, (void)t;
	return NULL;
}

static const union MHD_ConnectionInfo *no_info(struct MHD_Connection *c,
                                               enum MHD_ConnectionInfoType t, ...)
{
	(void)c, (void)t;
	return NULL;
}

static int no_values(struct MHD_Connection *c, enum MHD_ValueKind k, MHD_KeyValueIterator it,
                     void *cls)
{
	(void)c, (void)k, (void)it, (void)cls;
	return 0;
}

static const char *no_lookup(struct MHD_Connection *c, enum MHD_ValueKind k, const char *key)
{
	(void)c, (void)k, (void)key;
	return NULL;
}

static void no_connection(struct MHD_Connection *c)
{
	(void)c;
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

static struct MHD_Response *no_callback(uint64_t size, size_t block, MHD_ContentReaderCallback crc,
                                        void *cls, MHD_ContentReaderFreeCallback crfc)
{
	(void)size, (void)block, (void)crc, (void)cls, (void)crfc;
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

static struct MHD_Response *no_upgrade(MHD_UpgradeHandler h, void *cls)
{
	(void)h, (void)cls;
	return NULL;
}

static enum MHD_Result no_action(struct MHD_UpgradeResponseHandle *urh, enum MHD_UpgradeAction a,
                                 ...)
{
	(void)urh, (void)a;
	return MHD_NO;
}

static gw_mhd_api api = {
    .start_daemon = no_start,
    .stop_daemon = no_daemon,
    .quiesce_daemon = no_quiesce,
    .run = no_run,
    .get_timeout = no_timeout,
    .get_daemon_info = no_daemon_info,
    .get_connection_info = no_info,
    .get_connection_values = no_values,
    .lookup_connection_value = no_lookup,
    .suspend_connection = no_connection,
    .resume_connection = no_connection,
    .create_response_from_buffer = no_buffer,
    .create_response_from_buffer_with_free_callback_cls = no_buffer_cb,
    .create_response_from_callback = no_callback,
    .add_response_header = no_header,
    .queue_response = no_queue,
    .destroy_response = no_destroy,
    .create_response_for_upgrade = no_upgrade,
    .upgrade_action = no_action,
};
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Every function the table holds, with the symbol that fills it. */
static const gw_dl_sym syms[] = {
    GW_DL_SYM(gw_mhd_api, start_daemon, "MHD_start_daemon"),
    GW_DL_SYM(gw_mhd_api, stop_daemon, "MHD_stop_daemon"),
    GW_DL_SYM(gw_mhd_api, quiesce_daemon, "MHD_quiesce_daemon"),
    GW_DL_SYM(gw_mhd_api, run, "MHD_run"),
    GW_DL_SYM(gw_mhd_api, get_timeout, "MHD_get_timeout"),
    GW_DL_SYM(gw_mhd_api, get_daemon_info, "MHD_get_daemon_info"),
    GW_DL_SYM(gw_mhd_api, get_connection_info, "MHD_get_connection_info"),
    GW_DL_SYM(gw_mhd_api, get_connection_values, "MHD_get_connection_values"),
    GW_DL_SYM(gw_mhd_api, lookup_connection_value, "MHD_lookup_connection_value"),
    GW_DL_SYM(gw_mhd_api, suspend_connection, "MHD_suspend_connection"),
    GW_DL_SYM(gw_mhd_api, resume_connection, "MHD_resume_connection"),
    GW_DL_SYM(gw_mhd_api, create_response_from_buffer, "MHD_create_response_from_buffer"),
    GW_DL_SYM(gw_mhd_api, create_response_from_buffer_with_free_callback_cls,
              "MHD_create_response_from_buffer_with_free_callback_cls"),
    GW_DL_SYM(gw_mhd_api, create_response_from_callback, "MHD_create_response_from_callback"),
    GW_DL_SYM(gw_mhd_api, add_response_header, "MHD_add_response_header"),
    GW_DL_SYM(gw_mhd_api, queue_response, "MHD_queue_response"),
    GW_DL_SYM(gw_mhd_api, destroy_response, "MHD_destroy_response"),
    GW_DL_SYM(gw_mhd_api, create_response_for_upgrade, "MHD_create_response_for_upgrade"),
    GW_DL_SYM(gw_mhd_api, upgrade_action, "MHD_upgrade_action"),
};

static void load(void)
{
	static const char *const names[] = {"libmicrohttpd.so.12", "libmicrohttpd.so"};
	const gw_dl_lib lib = {
	    .names = names,
	    .n_names = sizeof names / sizeof *names,
	    .install = "apt-get install libmicrohttpd12",
	    .minimum = "libmicrohttpd 0.9.71",
	    .syms = syms,
	    .n_syms = sizeof syms / sizeof *syms,
	};
	gw_fail f = {0};
	if (gw_dl_load(&lib, &api, &f) == 0)
		error_now = NULL;
	else
		snprintf(load_error, sizeof load_error, "%s", f.why_text);
}

const gw_mhd_api *gw_mhd(void)
{
	pthread_once(&once, load);
	return &api;
}

const char *gw_mhd_error(void)
{
	pthread_once(&once, load);
	return error_now;
}
