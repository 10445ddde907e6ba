/* trace_kevent_diff.c - the whole-event reader against the callbacks: what each leaves in the
 * reader's state and the rank, written out field by field and compared as text. */
#include "support/trace_kevent_diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_kineto_int.h"

/* Everything a reading leaves that the rest of the program can see. */
static char *digest(const kstate *k, const trace_rank *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fprintf(f, "err=%s ord=%llu bad=%llu no_ts=%llu old=%d base=%d depth=%d open=%d ev=%d\n",
	        k->err, (unsigned long long)k->ord, (unsigned long long)k->bad_value,
	        (unsigned long long)k->no_ts, k->old_cats, k->base_time, k->depth, k->events_open,
	        k->in_event);
	fprintf(f, "rank=%d/%d world=%d dev=%s tsf=%d rows=%llu span=%d %lld %lld\n", r->rank,
	        r->rank_found, r->world_size, r->device_name, r->ts_float,
	        (unsigned long long)r->n_rows, r->have_span, (long long)r->first_ts,
	        (long long)r->last_end);
	for (int i = 0; i < r->n_profstep_syms; i++)
		fprintf(f, "step %s\n", r->profstep_syms[i]);
	for (uint32_t i = 0; i < r->names.count; i++)
		fprintf(f, "name %u %s %u %u\n", i, trace_name_str(&r->names, i),
		        r->names.names[i].ktype, r->names.names[i].nflags);
	for (size_t i = 0; i < r->n; i++) {
		const trace_event *e = &r->ev[i];
		fprintf(f, "ev %lld %lld %lld %lld %u %u %u\n", (long long)e->ts, (long long)e->dur,
		        (long long)e->corr, (long long)e->stream, e->name, e->cat, e->flags);
	}
	for (size_t i = 0; i < r->n_bw; i++)
		fprintf(f, "bw %u %.17g\n", r->bw_ev[i], r->bw_val[i]);
	for (int i = 0; i < r->n_warnings; i++)
		fprintf(f, "warn %s\n", r->warnings[i]);
	fclose(f);
	return buf;
}

static const unsigned char *(*inner)(void *, const unsigned char *, const unsigned char *, int);
static long taken;

/* The whole-event reader, counting what it takes. */
static const unsigned char *counting(void *ctx, const unsigned char *p, const unsigned char *end,
                                     int depth)
{
	const unsigned char *q = inner(ctx, p, end, depth);
	taken += q != NULL;
	return q;
}

static bool read_once(const unsigned char *text, size_t len, const trace_jscan_skip *skip,
                      char **out)
{
	trace_rank r;
	trace_rank_init(&r, "diff.json");
	kstate k;
	trace_kstate_init(&k, &r);
	bool ok =
	    trace_jscan_skipping(text, len, &trace_kineto_callbacks, &k, NULL, skip) && !k.err[0];
	*out = ok ? digest(&k, &r) : NULL;
	trace_kstate_free(&k);
	trace_rank_free(&r);
	return ok;
}

trace_kevent_diff trace_kevent_compare(const unsigned char *text, size_t len)
{
	trace_kevent_diff d = {0};
	trace_jscan_skip fast = trace_kineto_skip;
	inner = fast.element;
	fast.element = counting;
	taken = 0;
	char *a = NULL, *b = NULL;
	d.sax_ok = read_once(text, len, &trace_kineto_skip_sax, &a);
	d.fast_ok = read_once(text, len, &fast, &b);
	d.taken = taken;
	d.same = d.sax_ok && d.fast_ok && a && b && !strcmp(a, b);
	free(a);
	free(b);
	return d;
}
