/*
 * mhd_dl.h - libmicrohttpd, loaded when the exporter starts its server.
 *
 * Linking it would load it, GnuTLS and seven more libraries into every
 * gpuwhy process (about a millisecond of relocations per start), while only
 * the exporter serves HTTP. Include this header instead of <microhttpd.h>:
 * the MHD functions the server calls go through a table filled by dlopen on
 * first use. When the library cannot be loaded, MHD_start_daemon returns
 * NULL after one line on stderr naming the package to install.
 */
#ifndef GPUWHY_EXPORTER_MHD_DL_H
#define GPUWHY_EXPORTER_MHD_DL_H

#include <microhttpd.h>

typedef struct {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_create_response_from_buffer_with_free_callback_cls)
	    *create_response_from_buffer_with_free_callback_cls;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
} gw_mhd_api;

/* The table (loaded once, thread-safe); its functions do nothing when loading failed. */
const gw_mhd_api *gw_mhd(void);

#define MHD_start_daemon(...) (gw_mhd()->start_daemon(__VA_ARGS__))
#define MHD_stop_daemon(...) (gw_mhd()->stop_daemon(__VA_ARGS__))
#define MHD_get_connection_info(...) (gw_mhd()->get_connection_info(__VA_ARGS__))
#define MHD_lookup_connection_value(...) (gw_mhd()->lookup_connection_value(__VA_ARGS__))
#define MHD_create_response_from_buffer(...) (gw_mhd()->create_response_from_buffer(__VA_ARGS__))
#define MHD_create_response_from_buffer_with_free_callback_cls(...)                                \
	(gw_mhd()->create_response_from_buffer_with_free_callback_cls(__VA_ARGS__))
#define MHD_add_response_header(...) (gw_mhd()->add_response_header(__VA_ARGS__))
#define MHD_queue_response(...) (gw_mhd()->queue_response(__VA_ARGS__))
#define MHD_destroy_response(...) (gw_mhd()->destroy_response(__VA_ARGS__))

#endif
