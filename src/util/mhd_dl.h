/*
 * mhd_dl.h - libmicrohttpd, loaded by the commands that serve HTTP.
 *
 * Linking it would load it, GnuTLS and seven more libraries into every
 * gpuwhy process (about a millisecond of relocations per start and 2 MiB
 * of `gpuwhy top`'s memory), while only the exporter, `gpuwhy gate` and
 * `gpuwhy sim serve` serve HTTP. Include this header instead of
 * <microhttpd.h>: the MHD functions they call go through a table filled by
 * dlopen on first use. When the library cannot be loaded, gw_mhd_error()
 * says why and MHD_start_daemon returns NULL after printing that line.
 */
#ifndef GPUWHY_UTIL_MHD_DL_H
#define GPUWHY_UTIL_MHD_DL_H

#include <microhttpd.h>

typedef struct {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_quiesce_daemon) *quiesce_daemon;
	__typeof__(MHD_run) *run;
	__typeof__(MHD_get_timeout) *get_timeout;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_get_connection_values) *get_connection_values;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_suspend_connection) *suspend_connection;
	__typeof__(MHD_resume_connection) *resume_connection;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_create_response_from_buffer_with_free_callback_cls)
	    *create_response_from_buffer_with_free_callback_cls;
	__typeof__(MHD_create_response_from_callback) *create_response_from_callback;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_create_response_for_upgrade) *create_response_for_upgrade;
	__typeof__(MHD_upgrade_action) *upgrade_action;
} gw_mhd_api;

/* The table (loaded once, thread-safe); its functions do nothing when loading failed. */
const gw_mhd_api *gw_mhd(void);

/* NULL once the library is loaded, else why it is not: "cannot load
 * libmicrohttpd.so.12 (apt-get install libmicrohttpd12)" or similar, for
 * "gpuwhy: <command>: <this>". Loads it when not tried yet. */
const char *gw_mhd_error(void);

#define MHD_start_daemon(...) (gw_mhd()->start_daemon(__VA_ARGS__))
#define MHD_stop_daemon(...) (gw_mhd()->stop_daemon(__VA_ARGS__))
#define MHD_quiesce_daemon(...) (gw_mhd()->quiesce_daemon(__VA_ARGS__))
#define MHD_run(...) (gw_mhd()->run(__VA_ARGS__))
#define MHD_get_timeout(...) (gw_mhd()->get_timeout(__VA_ARGS__))
#define MHD_get_daemon_info(...) (gw_mhd()->get_daemon_info(__VA_ARGS__))
#define MHD_get_connection_info(...) (gw_mhd()->get_connection_info(__VA_ARGS__))
#define MHD_get_connection_values(...) (gw_mhd()->get_connection_values(__VA_ARGS__))
#define MHD_lookup_connection_value(...) (gw_mhd()->lookup_connection_value(__VA_ARGS__))
#define MHD_suspend_connection(...) (gw_mhd()->suspend_connection(__VA_ARGS__))
#define MHD_resume_connection(...) (gw_mhd()->resume_connection(__VA_ARGS__))
#define MHD_create_response_from_buffer(...) (gw_mhd()->create_response_from_buffer(__VA_ARGS__))
#define MHD_create_response_from_buffer_with_free_callback_cls(...)                                \
	(gw_mhd()->create_response_from_buffer_with_free_callback_cls(__VA_ARGS__))
#define MHD_create_response_from_callback(...)                                                     \
	(gw_mhd()->create_response_from_callback(__VA_ARGS__))
#define MHD_add_response_header(...) (gw_mhd()->add_response_header(__VA_ARGS__))
#define MHD_queue_response(...) (gw_mhd()->queue_response(__VA_ARGS__))
#define MHD_destroy_response(...) (gw_mhd()->destroy_response(__VA_ARGS__))
#define MHD_create_response_for_upgrade(...) (gw_mhd()->create_response_for_upgrade(__VA_ARGS__))
#define MHD_upgrade_action(...) (gw_mhd()->upgrade_action(__VA_ARGS__))

#endif
