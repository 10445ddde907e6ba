/*
 * page.c - a rendered exposition shared by every scrape, and the board that
 * holds the latest one. Scrapes take a reference and never wait for the
 * sampler; the sampler swaps the board's pointer and never waits for a
 * scrape. The gzip form is made by the first scrape that asks for it.
 */
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "exporter/page.h"

struct exporter_page {
	atomic_int refs;
	char *text;
	size_t len;
	double t_wall;
	int64_t t_mono_ns;
	pthread_mutex_t gz_mu;
	bool gz_done;
	unsigned char *gz;
	size_t gz_len;
};

exporter_page *exporter_page_new(char *text, size_t len, double t_wall, int64_t t_mono_ns)
{
	exporter_page *p = calloc(1, sizeof *p);
	if (!p) {
		free(text);
		return NULL;
	}
	atomic_init(&p->refs, 1);
	p->text = text;
	p->len = len;
	p->t_wall = t_wall;
	p->t_mono_ns = t_mono_ns;
	pthread_mutex_init(&p->gz_mu, NULL);
	return p;
}

void exporter_page_ref(exporter_page *p)
{
	atomic_fetch_add(&p->refs, 1);
}

void exporter_page_unref(exporter_page *p)
{
	if (!p || atomic_fetch_sub(&p->refs, 1) != 1)
		return;
	pthread_mutex_destroy(&p->gz_mu);
	free(p->gz);
	free(p->text);
	free(p);
}

const char *exporter_page_text(const exporter_page *p, size_t *len)
{
	*len = p->len;
	return p->text;
}

int64_t exporter_page_mono_ns(const exporter_page *p)
{
	return p->t_mono_ns;
}

/* gzip (RFC 1952) of in, or NULL. */
static unsigned char *gzip_bytes(const char *in, size_t len, size_t *out_len)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	/* windowBits 15 + 16: a gzip header and trailer instead of zlib's. */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	uLong cap = deflateBound(&z, (uLong)len);
	unsigned char *out = malloc(cap);
	if (!out) {
		deflateEnd(&z);
		return NULL;
	}
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	int rc = deflate(&z, Z_FINISH);
	*out_len = z.total_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	return out;
}

const char *exporter_page_gzip(exporter_page *p, size_t *len)
{
	pthread_mutex_lock(&p->gz_mu);
	if (!p->gz_done) {
		p->gz = gzip_bytes(p->text, p->len, &p->gz_len);
		p->gz_done = true;
	}
	pthread_mutex_unlock(&p->gz_mu);
	*len = p->gz_len;
	return (const char *)p->gz;
}

struct exporter_board {
	pthread_mutex_t mu;
	exporter_page *latest;
};

exporter_board *exporter_board_new(void)
{
	exporter_board *b = calloc(1, sizeof *b);
	if (b)
		pthread_mutex_init(&b->mu, NULL);
	return b;
}

void exporter_board_free(exporter_board *b)
{
	if (!b)
		return;
	exporter_page_unref(b->latest);
	pthread_mutex_destroy(&b->mu);
	free(b);
}

void exporter_board_publish(exporter_board *b, exporter_page *p)
{
	pthread_mutex_lock(&b->mu);
	exporter_page *old = b->latest;
	b->latest = p;
	pthread_mutex_unlock(&b->mu);
	exporter_page_unref(old);
}

exporter_page *exporter_board_get(exporter_board *b)
{
	pthread_mutex_lock(&b->mu);
	exporter_page *p = b->latest;
	if (p)
		exporter_page_ref(p);
	pthread_mutex_unlock(&b->mu);
	return p;
}
