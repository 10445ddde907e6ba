/*
 * slurm_alloc.c - where and when a Slurm job ran, from the text scontrol
 * and sacct print: its nodes (hostlists expanded), each node's GPU indices
 * (scontrol -d's GRES IDX) and its start and end. Pure: the commands are
 * run by whoever asks (fleet/window_slurm.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/slurm.h"
#include "util/xalloc.h"

/* Longest name a hostlist may expand to before it is refused. */
#define HL_MAX_RANGE 100000

static int expand(const char *item, size_t len, char (*out)[QUEUE_SLURM_HOST], int n, int max);

/* prefix + number (padded to width) + suffix, expanded further (later bracket groups). */
static int expand_one(const char *pre, size_t plen, long v, int width, const char *suf, size_t slen,
                      char (*out)[QUEUE_SLURM_HOST], int n, int max)
{
	char buf[512];
	int k =
	    snprintf(buf, sizeof buf, "%.*s%0*ld%.*s", (int)plen, pre, width, v, (int)slen, suf);
	if (k < 0 || (size_t)k >= sizeof buf)
		return -1;
	return expand(buf, (size_t)k, out, n, max);
}

/* One range of a bracket, "01-03" or "7", for every number in it. */
static int expand_range(const char *r, size_t rl, const char *pre, size_t plen, const char *suf,
                        size_t slen, char (*out)[QUEUE_SLURM_HOST], int n, int max)
{
	char a[24] = "", b[24] = "";
	const char *dash = memchr(r, '-', rl);
	size_t al = dash ? (size_t)(dash - r) : rl, bl = dash ? rl - al - 1 : 0;
	if (al == 0 || al >= sizeof a || bl >= sizeof b || (dash && bl == 0))
		return -1;
	memcpy(a, r, al);
	memcpy(b, dash ? dash + 1 : r, dash ? bl : al);
	for (const char *p = a; *p; p++)
		if (!isdigit((unsigned char)*p))
			return -1;
	for (const char *p = b; *p; p++)
		if (!isdigit((unsigned char)*p))
			return -1;
	long lo = strtol(a, NULL, 10), hi = strtol(b, NULL, 10);
	if (hi < lo || hi - lo > HL_MAX_RANGE)
		return -1;
	for (long v = lo; v <= hi && n >= 0; v++)
		n = expand_one(pre, plen, v, (int)al, suf, slen, out, n, max);
	return n;
}

/* One name without a comma outside brackets: its first bracket group expanded. */
static int expand(const char *item, size_t len, char (*out)[QUEUE_SLURM_HOST], int n, int max)
{
	const char *lb = memchr(item, '[', len);
	if (!lb) {
		if (len == 0 || len >= QUEUE_SLURM_HOST || n >= max || memchr(item, ']', len))
			return -1;
		memcpy(out[n], item, len);
		out[n][len] = '\0';
		return n + 1;
	}
	const char *rb = memchr(lb, ']', len - (size_t)(lb - item));
	if (!rb || rb == lb + 1)
		return -1;
	const char *suf = rb + 1;
	size_t plen = (size_t)(lb - item), slen = len - (size_t)(suf - item);
	for (const char *r = lb + 1; r < rb && n >= 0;) {
		const char *c = memchr(r, ',', (size_t)(rb - r));
		size_t rl = c ? (size_t)(c - r) : (size_t)(rb - r);
		n = expand_range(r, rl, item, plen, suf, slen, out, n, max);
		r += rl + 1;
	}
	return n;
}

int queue_slurm_hostlist(const char *list, char (*out)[QUEUE_SLURM_HOST], int max)
{
	if (!list || !*list)
		return -1;
	int n = 0, depth = 0;
	const char *item = list;
	for (const char *p = list;; p++) {
		if (*p == '[')
			depth++;
		else if (*p == ']' && --depth < 0)
			return -1;
		if ((*p == ',' && depth == 0) || !*p) {
			if ((n = expand(item, (size_t)(p - item), out, n, max)) < 0)
				return -1;
			item = p + 1;
		}
		if (!*p)
			break;
	}
	return depth ? -1 : n;
}

bool queue_slurm_idx_mask(const char *idx, uint64_t *mask)
{
	*mask = 0;
	if (!idx || !*idx)
		return false;
	for (const char *p = idx; *p;) {
		char *end;
		if (!isdigit((unsigned char)*p))
			return false;
		long lo = strtol(p, &end, 10), hi = lo;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return false;
			hi = strtol(end + 1, &end, 10);
		}
		if (lo > hi || hi > 63)
			return false;
		for (long i = lo; i <= hi; i++)
			*mask |= 1ull << i;
		if (*end && *end != ',')
			return false;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return false;
	}
	return true;
}

static queue_slurm_alloc_node *node_named(queue_slurm_alloc *a, const char *host)
{
	for (int i = 0; i < a->nnodes; i++)
		if (!strcmp(a->node[i].host, host))
			return &a->node[i];
	return NULL;
}

/* The value of the token " KEY=" at p (p points at KEY), up to white space. */
static size_t value_len(const char *v)
{
	size_t n = 0;
	while (v[n] && !isspace((unsigned char)v[n]))
		n++;
	return n;
}

/* scontrol -d's per-node lines: "Nodes=node[01-02] CPU_IDs=0-3 Mem=0 GRES=gpu:2(IDX:0-1)". */
static void node_gres(const char *text, queue_slurm_alloc *a)
{
	char(*hosts)[QUEUE_SLURM_HOST] = gw_xmalloc(QUEUE_SLURM_MAX_NODES * sizeof *hosts);
	for (const char *p = text; (p = strstr(p, "Nodes=")); p += 6) {
		if (p != text && !isspace((unsigned char)p[-1]))
			continue;
		char list[1024], idx[128] = "";
		size_t n = value_len(p + 6);
		if (n == 0 || n >= sizeof list)
			continue;
		memcpy(list, p + 6, n);
		list[n] = '\0';
		/* this line's GRES, before the next node line */
		const char *next = strstr(p + 6, "Nodes="), *g = strstr(p + 6, "(IDX:");
		if (g && (!next || g < next)) {
			size_t k = strcspn(g + 5, ")");
			if (k < sizeof idx && g[5 + k] == ')')
				memcpy(idx, g + 5, k), idx[k] = '\0';
		}
		uint64_t mask;
		if (!idx[0] || !queue_slurm_idx_mask(idx, &mask))
			continue;
		int nh = queue_slurm_hostlist(list, hosts, QUEUE_SLURM_MAX_NODES);
		for (int i = 0; i < nh; i++) {
			queue_slurm_alloc_node *nd = node_named(a, hosts[i]);
			if (nd) {
				nd->gpus = mask;
				a->have_idx = true;
			}
		}
	}
	free(hosts);
}

/* A completing job's NodeList is empty (its nodes are being released) while scontrol -d
 * still lists them per line ("Nodes=node[01-02] CPU_IDs=..."): those, comma-joined. */
static void nodes_of_lines(const char *text, char *out, size_t len)
{
	size_t n = 0;
	out[0] = '\0';
	for (const char *p = text; (p = strstr(p, "Nodes=")); p += 6) {
		size_t v = value_len(p + 6);
		if ((p != text && !isspace((unsigned char)p[-1])) || v == 0 || n + v + 2 > len)
			continue;
		n += (size_t)snprintf(out + n, len - n, "%s%.*s", n ? "," : "", (int)v, p + 6);
	}
}

/* A finished job's scontrol keeps only the count: "JOB_GRES=gpu:2" or "gpu:a100:2"; -1 none. */
static int job_gres_count(const char *text)
{
	for (const char *p = text; (p = strstr(p, "JOB_GRES=gpu")); p++) {
		if (p != text && !isspace((unsigned char)p[-1]))
			continue;
		size_t n = value_len(p);
		const char *c = p + n;
		while (c > p && isdigit((unsigned char)c[-1]))
			c--;
		if (c < p + n && c[-1] == ':')
			return atoi(c);
	}
	return -1;
}

/* The fields a job line gives into the allocation; false without a node list. */
static bool from_job(const queue_slurm_job *j, queue_slurm_alloc *out)
{
	char(*hosts)[QUEUE_SLURM_HOST] = gw_xmalloc(QUEUE_SLURM_MAX_NODES * sizeof *hosts);
	int n =
	    j->nodelist[0] ? queue_slurm_hostlist(j->nodelist, hosts, QUEUE_SLURM_MAX_NODES) : -1;
	if (n <= 0) {
		free(hosts);
		return false;
	}
	snprintf(out->job_id, sizeof out->job_id, "%s", j->job_id);
	snprintf(out->user, sizeof out->user, "%s", j->user);
	snprintf(out->state, sizeof out->state, "%s", j->state);
	queue_slurm_class c = queue_slurm_classify(j->state);
	/* a pending job's times are estimates; a running job's end is its time limit */
	out->start = c == QSL_PENDING ? 0 : j->start;
	out->end = c == QSL_PENDING || c == QSL_RUNNING ? 0 : j->end;
	out->gpus = j->gpus;
	for (int i = 0; i < n; i++)
		memcpy(out->node[i].host, hosts[i], QUEUE_SLURM_HOST);
	out->nnodes = n;
	free(hosts);
	return true;
}

/* The last sacct line for job (a requeued job is listed more than once). */
static bool sacct_last(const char *job, const char *sacct, queue_slurm_job *out)
{
	bool found = false;
	for (const char *p = sacct; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t ll = nl ? (size_t)(nl - p) : strlen(p);
		char line[2048];
		if (ll < sizeof line) {
			memcpy(line, p, ll);
			line[ll] = '\0';
			queue_slurm_job j;
			if (queue_slurm_parse_sacct(line, &j) && !strcmp(j.job_id, job)) {
				*out = j;
				found = true;
			}
		}
		p = nl ? nl + 1 : NULL;
	}
	return found;
}

bool queue_slurm_parse_alloc(const char *job, const char *scontrol, const char *sacct,
                             queue_slurm_alloc *out)
{
	memset(out, 0, sizeof *out);
	out->gpus = -1;
	queue_slurm_job j;
	bool sc = scontrol && queue_slurm_parse_scontrol(scontrol, &j) && !strcmp(j.job_id, job);
	if (sc && !j.nodelist[0])
		nodes_of_lines(scontrol, j.nodelist, sizeof j.nodelist);
	if (sc && from_job(&j, out)) {
		/* the GPU indices only while the job runs; after, their count */
		node_gres(scontrol, out);
		out->gpus = job_gres_count(scontrol);
		if (out->have_idx) {
			out->gpus = 0;
			for (int i = 0; i < out->nnodes; i++)
				out->gpus += __builtin_popcountll(out->node[i].gpus);
		}
		return true;
	}
	memset(out, 0, sizeof *out);
	out->gpus = -1;
	return sacct && sacct_last(job, sacct, &j) && from_job(&j, out);
}
