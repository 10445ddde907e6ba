/* trace_kineto_split.c - large Kineto traces parsed in pieces on several cores.
 *
 * The decompressed text is cut into pieces of about BLOCK bytes at guessed element boundaries
 * ("}" "," "{" with optional whitespace). The first piece goes to the document parser, the
 * middle ones to worker threads as stand-alone arrays of elements, and the rest of the document
 * back to the document parser, which carries on as if it had read the middle. A guess can only
 * be wrong inside a string or a nested object, and then a piece does not parse on its own or the
 * document parser is not between elements: the file is read again in one piece. Pieces in
 * flight are bounded, so memory stays bounded too. Where the text is inflated or read rather
 * than mapped, the reading thread is one of the threads asked for and parses pieces itself
 * whenever it is ahead.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_jscan.h"
#include "trace/trace_kineto_int.h"
#include "util/parse.h"

enum { BLOCK = 4 << 20, WINDOW = 1 << 20, READ = 256 << 10 };

typedef struct {
	const unsigned char *buf; /* the pool's to free, unless borrowed */
	size_t len;
	size_t end; /* in a mapping: the offset just past it */
	kstate k;
	trace_rank r;
	bool ok;
	bool done; /* parsed (under the pool's lock) */
} piece;

typedef struct {
	pthread_mutex_t lock;
	pthread_cond_t work, space;
	piece **all; /* every middle piece, in order */
	size_t n_all, cap_all;
	size_t next; /* next piece to hand out */
	size_t in_flight, max_in_flight;
	bool closed;
	bool inline_parse; /* no workers: the reading thread parses each piece itself */
	bool help;         /* the reading thread parses waiting pieces instead of waiting */
	bool borrowed;     /* the pieces lie in the file's mapping: nothing to free */
} pool;

static void piece_drop_text(const pool *pl, piece *p)
{
	if (!pl->borrowed)
		free((void *)(uintptr_t)p->buf);
	p->buf = NULL;
}

static bool is_ws(unsigned char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The '{' of an element start guessed from the end of b backwards, or 0. */
static size_t find_cut(const unsigned char *b, size_t len)
{
	size_t lo = len > WINDOW ? len - WINDOW : 0;
	for (size_t i = len; i-- > lo + 2;) {
		if (b[i] != '{')
			continue;
		size_t j = i;
		while (j > lo && is_ws(b[j - 1]))
			j--;
		if (j == lo || b[j - 1] != ',')
			continue;
		j--;
		while (j > lo && is_ws(b[j - 1]))
			j--;
		if (j > lo && b[j - 1] == '}')
			return i;
	}
	return 0;
}

/* A piece's reader state: inside the traceEvents array. */
static void piece_start(piece *p)
{
	trace_rank_init(&p->r, "");
	trace_kstate_init(&p->k, &p->r);
	p->k.fragment = true;
	p->k.depth = 1;
	p->k.top = TOP_EVENTS;
	p->k.top_is_map = true;
}

/* A middle piece: its elements, without the trailing comma, as an array of their own. */
static void parse_piece(piece *p)
{
	size_t end = p->len;
	while (end > 0 && is_ws(p->buf[end - 1]))
		end--;
	if (end == 0 || p->buf[end - 1] != ',')
		return;
	end--;
	piece_start(p);
	/* The fast scanner first: the elements, as if inside the array yajl is given below. */
	trace_kineto_callbacks.yajl_start_array(&p->k);
	static const trace_jscan_mode elements = {.open = "[", .end_depth = 1};
	if (trace_jscan_skipping(p->buf, end, &trace_kineto_callbacks, &p->k, &elements,
	                         &trace_kineto_skip) &&
	    trace_kineto_callbacks.yajl_end_array(&p->k) && !p->k.err[0] && p->k.depth == 1) {
		p->ok = true;
		return;
	}
	trace_kstate_free(&p->k);
	trace_rank_free(&p->r);
	piece_start(p);
	yajl_handle h = trace_kineto_parser(&p->k);
	if (!h)
		return;
	p->ok = yajl_parse(h, (const unsigned char *)"[", 1) == yajl_status_ok &&
	        yajl_parse(h, p->buf, end) == yajl_status_ok &&
	        yajl_parse(h, (const unsigned char *)"]", 1) == yajl_status_ok &&
	        yajl_complete_parse(h) == yajl_status_ok && !p->k.err[0] && p->k.depth == 1;
	yajl_free(h);
}

/* Parses the next piece not taken yet, the pool's lock held (released meanwhile). */
static void pool_take_one(pool *pl)
{
	piece *p = pl->all[pl->next++];
	pthread_mutex_unlock(&pl->lock);
	parse_piece(p);
	piece_drop_text(pl, p);
	pthread_mutex_lock(&pl->lock);
	p->done = true;
	pl->in_flight--;
	pthread_cond_signal(&pl->space);
}

static void *piece_worker(void *arg)
{
	pool *pl = arg;
	pthread_mutex_lock(&pl->lock);
	for (;;) {
		while (pl->next == pl->n_all && !pl->closed)
			pthread_cond_wait(&pl->work, &pl->lock);
		if (pl->next == pl->n_all)
			break;
		pool_take_one(pl);
	}
	pthread_mutex_unlock(&pl->lock);
	return NULL;
}

/* A middle piece to parse; the pool takes buf (and frees it, unless borrowed) either way. */
static bool pool_add(pool *pl, const unsigned char *buf, size_t len, size_t end)
{
	piece *p = calloc(1, sizeof *p);
	if (!p) {
		if (!pl->borrowed)
			free((void *)(uintptr_t)buf);
		return false;
	}
	p->buf = buf;
	p->len = len;
	p->end = end;
	if (pl->inline_parse) {
		parse_piece(p);
		piece_drop_text(pl, p);
		p->done = true;
	}
	pthread_mutex_lock(&pl->lock);
	while (!pl->inline_parse && pl->in_flight >= pl->max_in_flight) {
		if (pl->help && pl->next < pl->n_all)
			pool_take_one(pl);
		else
			pthread_cond_wait(&pl->space, &pl->lock);
	}
	bool ok = true;
	if (pl->n_all == pl->cap_all) {
		size_t cap = pl->cap_all ? pl->cap_all * 2 : 64;
		piece **a = realloc(pl->all, cap * sizeof *a);
		if (a) {
			pl->all = a;
			pl->cap_all = cap;
		} else {
			ok = false;
		}
	}
	if (ok) {
		pl->all[pl->n_all++] = p;
		if (pl->inline_parse) {
			pl->next = pl->n_all;
		} else {
			pl->in_flight++;
			pthread_cond_signal(&pl->work);
		}
	}
	pthread_mutex_unlock(&pl->lock);
	if (!ok) {
		piece_drop_text(pl, p);
		free(p);
	}
	return ok;
}

/* Moves the events of from (a piece or the tail) into r, renumbering names. */
static bool merge_rank(trace_rank *r, trace_rank *from)
{
	uint32_t *remap = malloc(((size_t)from->names.count + 1) * sizeof *remap);
	if (!remap)
		return false;
	for (uint32_t i = 0; i < from->names.count; i++) {
		remap[i] = trace_names_intern(&r->names, trace_name_str(&from->names, i),
		                              from->names.names[i].len);
		if (remap[i] == UINT32_MAX) {
			free(remap);
			return false;
		}
	}
	for (size_t i = 0; i < from->n; i++) {
		trace_event e = from->ev[i];
		e.name = remap[e.name];
		bool ok = e.flags & TRACE_EV_HAS_BW
		              ? trace_rank_push_bw(r, &e, trace_event_bw(from, i))
		              : trace_rank_push(r, &e);
		if (!ok) {
			free(remap);
			return false;
		}
	}
	free(remap);
	r->ts_float |= from->ts_float;
	r->n_rows += from->n_rows;
	if (from->have_span) {
		if (!r->have_span || from->first_ts < r->first_ts)
			r->first_ts = from->first_ts;
		if (!r->have_span || from->last_end > r->last_end)
			r->last_end = from->last_end;
		r->have_span = true;
	}
	for (int i = 0; i < from->n_profstep_syms; i++)
		trace_rank_note_profstep(r, from->profstep_syms[i], strlen(from->profstep_syms[i]));
	if (!r->rank_found && from->rank_found) {
		r->rank = from->rank;
		r->rank_found = true;
	}
	if (!r->device_name[0])
		memcpy(r->device_name, from->device_name, sizeof r->device_name);
	if (!r->world_size)
		r->world_size = from->world_size;
	return true;
}

static void merge_counts(kstate *k, const kstate *from)
{
	k->ord += from->ord;
	k->no_ts += from->no_ts;
	k->bad_value += from->bad_value;
	k->old_cats |= from->old_cats;
	k->base_time |= from->base_time;
}

/* One parallel read: the document parser's state, the pool of middle pieces, the text not
 * yet cut. */
typedef struct {
	trace_gzin *g;
	pool pl;
	pthread_t th[64];
	int nth;
	kstate k0;          /* the document parser */
	trace_rank tail;    /* the events after the middle pieces */
	unsigned char *cur; /* read text not cut yet (none with a mapping) */
	size_t cap, len;
	const unsigned char *map; /* the whole text, where the file is mapped */
	size_t map_len;
	const unsigned char *tail_text; /* the len bytes not cut: cur, or in the mapping */
	uint64_t total, reported;
	size_t merged; /* pieces already moved into the rank, in order */
	bool first;    /* no piece cut yet */
	_Atomic uint64_t *progress;
	const char *path; /* the file, what a failure names */
} splitter;

static int oom(const char *path, gw_fail *err)
{
	return trace_kineto_fail(err, path, "out of memory");
}

static int split_open(splitter *sp, const char *path, trace_rank *r, int threads, gw_fail *err)
{
	memset(sp, 0, sizeof *sp);
	sp->path = path;
	sp->g = trace_gzin_open(path, READ);
	if (!sp->g)
		return trace_kineto_fail(err, path, "cannot open: %s",
		                         strerror(errno ? errno : ENOMEM));
	sp->map = trace_gzin_map(sp->g, &sp->map_len);
	/* A mapped text costs the reading thread next to nothing, so every thread asked for
	 * parses. Inflated or read text keeps it busy: one worker fewer, and it parses the pieces
	 * waiting whenever it is ahead, so that no thread waits for a core another one holds
	 * (three threads on two cores left the workers waiting for text half the time). */
	sp->pl = (pool){.max_in_flight = (size_t)threads + 1,
	                .inline_parse = threads <= 1,
	                .help = !sp->map,
	                .borrowed = sp->map != NULL};
	pthread_mutex_init(&sp->pl.lock, NULL);
	pthread_cond_init(&sp->pl.work, NULL);
	pthread_cond_init(&sp->pl.space, NULL);
	int workers = sp->map ? threads : threads - 1;
	for (; !sp->pl.inline_parse && sp->nth < workers && sp->nth < 64; sp->nth++)
		if (pthread_create(&sp->th[sp->nth], NULL, piece_worker, &sp->pl))
			break;
	trace_kstate_init(&sp->k0, r);
	trace_rank_init(&sp->tail, path);
	sp->first = true;
	if (!sp->map) {
		sp->cap = BLOCK + 2 * READ;
		sp->cur = malloc(sp->cap);
	}
	if ((!sp->map && !sp->cur) || !(sp->nth > 0 || sp->pl.inline_parse))
		return trace_kineto_fail(err, path, "out of memory or threads");
	return 0;
}

/* Moves the parsed pieces at the front into r, in order, as soon as they are done, so that
 * the events are not held twice (in their pieces and in the rank) until the end. A piece that
 * did not parse stops the merge: the file is read again in one piece anyway. */
static bool split_merge(splitter *sp, trace_rank *r)
{
	for (;;) {
		pthread_mutex_lock(&sp->pl.lock);
		piece *p = sp->merged < sp->pl.n_all ? sp->pl.all[sp->merged] : NULL;
		bool ready = p && p->done && p->ok;
		pthread_mutex_unlock(&sp->pl.lock);
		if (!ready)
			return true;
		if (!merge_rank(r, &p->r))
			return false;
		trace_rank_free(&p->r);
		sp->merged++;
		if (sp->map) /* its text is read, and so is all before it */
			trace_gzin_map_done(sp->g, p->end);
	}
}

/* A piece cut off the text (buf is the pool's unless the pool borrows): the document parser's
 * first piece (comma included), or a middle piece. end: its end's offset in a mapping. */
static int split_piece(splitter *sp, const unsigned char *buf, size_t len, size_t end, gw_fail *err)
{
	int rc = 0;
	if (sp->first) {
		/* The fast scanner reads the first piece; where it gives up, yajl reads the whole
		 * file again in one piece. */
		static const trace_jscan_mode head = {
		    .open = "", .end_depth = 2, .end_after_comma = true};
		kstate *k0 = &sp->k0;
		if (!trace_jscan_skipping(buf, len, &trace_kineto_callbacks, k0, &head,
		                          &trace_kineto_skip) ||
		    k0->err[0] || k0->depth != 2 || !k0->events_open || k0->in_event)
			rc = TRACE_KINETO_RETRY;
		if (sp->map)
			trace_gzin_map_done(sp->g, end);
		else
			free((void *)(uintptr_t)buf);
		sp->first = false;
	} else if (!pool_add(&sp->pl, buf, len, end)) {
		rc = oom(sp->path, err);
	} else if (!split_merge(sp, sp->k0.r)) {
		rc = oom(sp->path, err);
	}
	return rc;
}

/* The read text up to cut, as a piece; the rest stays. */
static int split_take(splitter *sp, size_t cut, gw_fail *err)
{
	unsigned char *rest = malloc(sp->cap);
	if (!rest)
		return oom(sp->path, err);
	memcpy(rest, sp->cur + cut, sp->len - cut);
	int rc = split_piece(sp, sp->cur, cut, 0, err);
	sp->cur = rest;
	sp->len -= cut;
	return rc;
}

/* A mapped text cut in place, as split_read cuts what it reads: after BLOCK bytes at least, at
 * a guessed element start within the last WINDOW, looking READ bytes further while none is
 * found. The rest is left to split_finish. */
static int split_mapped(splitter *sp, gw_fail *err)
{
	size_t pos = 0, look = BLOCK;
	while (sp->map_len - pos >= look + READ) {
		size_t cut = find_cut(sp->map + pos, look);
		if (!cut) {
			look += READ;
			continue;
		}
		int rc = split_piece(sp, sp->map + pos, cut, pos + cut, err);
		if (rc)
			return rc;
		pos += cut;
		look = BLOCK;
		trace_kineto_add_progress(sp->g, sp->progress, &sp->reported);
	}
	sp->cur = NULL;
	sp->len = sp->map_len - pos;
	sp->total = sp->map_len;
	sp->tail_text = sp->map + pos;
	return 0;
}

/* Reads the text, cutting pieces of about BLOCK bytes as it goes, to the end of the file. */
static int split_read(splitter *sp, _Atomic uint64_t *progress, gw_fail *err)
{
	sp->progress = progress;
	if (sp->map)
		return split_mapped(sp, err);
	for (;;) {
		if (sp->cap - sp->len < READ) {
			unsigned char *b = realloc(sp->cur, sp->cap * 2);
			if (!b)
				return oom(sp->path, err);
			sp->cur = b;
			sp->cap *= 2;
		}
		int n = trace_gzin_read(sp->g, sp->cur + sp->len, READ);
		trace_kineto_add_progress(sp->g, progress, &sp->reported);
		if (n <= 0)
			return trace_kineto_read_status(sp->g, n, sp->path, err) < 0 ? -1 : 0;
		sp->len += (size_t)n;
		sp->total += (uint64_t)n;
		if (sp->len < BLOCK)
			continue;
		size_t cut = find_cut(sp->cur, sp->len);
		int rc = cut ? split_take(sp, cut, err) : 0;
		if (rc)
			return rc;
	}
}

/* Stops the workers; TRACE_KINETO_RETRY when a middle piece did not parse on its own. */
static int split_join(splitter *sp, int rc)
{
	pthread_mutex_lock(&sp->pl.lock);
	sp->pl.closed = true;
	pthread_cond_broadcast(&sp->pl.work);
	pthread_mutex_unlock(&sp->pl.lock);
	for (int i = 0; i < sp->nth; i++)
		pthread_join(sp->th[i], NULL);
	for (size_t i = 0; !rc && i < sp->pl.n_all; i++)
		if (!sp->pl.all[i]->ok)
			rc = TRACE_KINETO_RETRY;
	return rc;
}

/* The rest of the document to the document parser (into tail when pieces went elsewhere, so
 * that the events stay in order), then the pieces and the tail merged into r in order. */
static int split_finish(splitter *sp, trace_rank *r, gw_fail *err)
{
	if (!sp->first)
		sp->k0.r = &sp->tail;
	static const trace_jscan_mode tail_mode = {.open = "{[", .end_depth = 0};
	const unsigned char *text = sp->map ? sp->tail_text : sp->cur;
	bool fast = trace_jscan_skipping(text, sp->len, &trace_kineto_callbacks, &sp->k0,
	                                 sp->first ? NULL : &tail_mode, &trace_kineto_skip);
	sp->k0.r = r;
	if (!fast || sp->k0.err[0])
		return TRACE_KINETO_RETRY;
	if (!split_merge(sp, r) || sp->merged != sp->pl.n_all)
		return oom(sp->path, err);
	/* The counts only now: the document parser counted the tail's elements after the first
	 * piece's, as if it had read the middle. */
	for (size_t i = 0; i < sp->pl.n_all; i++)
		merge_counts(&sp->k0, &sp->pl.all[i]->k);
	if (!merge_rank(r, &sp->tail))
		return oom(sp->path, err);
	if (sp->map) {
		trace_gzin_map_done(sp->g, sp->map_len);
		trace_kineto_add_progress(sp->g, sp->progress, &sp->reported);
	}
	return 0;
}

static void split_close(splitter *sp)
{
	for (size_t i = 0; i < sp->pl.n_all; i++) {
		if (sp->pl.all[i]->k.r)
			trace_kstate_free(&sp->pl.all[i]->k);
		trace_rank_free(&sp->pl.all[i]->r);
		piece_drop_text(&sp->pl, sp->pl.all[i]);
		free(sp->pl.all[i]);
	}
	free(sp->pl.all);
	pthread_cond_destroy(&sp->pl.work);
	pthread_cond_destroy(&sp->pl.space);
	pthread_mutex_destroy(&sp->pl.lock);
	trace_rank_free(&sp->tail);
	trace_kstate_free(&sp->k0);
	free(sp->cur);
	trace_gzin_close(sp->g);
}

int trace_kineto_read_parallel(const char *path, trace_rank *r, _Atomic uint64_t *progress,
                               int threads, gw_fail *err)
{
	gw_strtod_c("0", NULL); /* its C locale is made once, before the threads share it */
	splitter *sp = malloc(sizeof *sp);
	if (!sp)
		return oom(path, err);
	int rc = split_open(sp, path, r, threads, err);
	if (rc && !sp->g) {
		free(sp);
		return rc;
	}
	if (!rc)
		rc = split_read(sp, progress, err);
	rc = split_join(sp, rc);
	if (!rc)
		rc = split_finish(sp, r, err);
	r->bytes = sp->total;
	if (!rc)
		rc = trace_kineto_finish(&sp->k0, err);
	split_close(sp);
	free(sp);
	return rc;
}
