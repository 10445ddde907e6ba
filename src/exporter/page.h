/*
 * page.h - one rendered exposition shared by every scrape, and the board that holds
 * the latest one (page.c).
 */
#ifndef GPUWHY_EXPORTER_PAGE_H
#define GPUWHY_EXPORTER_PAGE_H

#include <stddef.h>
#include <stdint.h>

/* One rendered exposition. Immutable once published, freed by its last reader. */
typedef struct exporter_page exporter_page;

/* Takes ownership of text (malloc'd). NULL on ENOMEM (text is freed). */
exporter_page *exporter_page_new(char *text, size_t len, double t_wall, int64_t t_mono_ns);
void exporter_page_ref(exporter_page *p);
void exporter_page_unref(exporter_page *p);
const char *exporter_page_text(const exporter_page *p, size_t *len);
/* gzip of the text, compressed on first use and kept; NULL when compression failed. */
const char *exporter_page_gzip(exporter_page *p, size_t *len);
int64_t exporter_page_mono_ns(const exporter_page *p);

/* The latest page, swapped by the sampler and read by the server. */
typedef struct exporter_board exporter_board;
exporter_board *exporter_board_new(void);
void exporter_board_free(exporter_board *b);
/* Publish p (the board takes the caller's reference). */
void exporter_board_publish(exporter_board *b, exporter_page *p);
/* A new reference to the latest page, or NULL before the first publish. */
exporter_page *exporter_board_get(exporter_board *b);

#endif
