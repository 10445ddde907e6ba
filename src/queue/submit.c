/*
 * submit.c - handing a new task to the running worker over DIR/submit.sock.
 *
 * A one-command `queue add` is a short process of its own; opening the
 * database (the schema parsed per connection) and committing there cost it
 * more than the rest of its work. When a worker runs, the client sends it
 * the task instead: one SOCK_SEQPACKET message each way. The worker adds it
 * in its own connection, answers with the id, and starts it in the same
 * pass. The rule that a task's record is committed before `add` says its id
 * holds: the worker answers after its commit.
 *
 * Every submission carries a random token stored with its tasks (a unique
 * column). A client that gets no answer (the worker was killed, or did not
 * reply in time) adds the tasks itself under the same token: whichever
 * insert comes second finds the token taken and reads the ids the first
 * one stored, so a task is added once whatever fails when.
 *
 *   client -> worker   the task's fields, NUL-terminated (below)
 *   worker -> client   "ok DRAINING ID..." | "no" (the client adds them itself)
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "queue/state.h"
#include "queue/spec.h"
#include "queue/db.h"
#include "queue/submit.h"
#include "util/timeutil.h"

enum {
	SUBMIT_MAX = 128 << 10, /* one message; a bigger submission goes to the database */
	SUBMIT_MAX_TASKS = 64,
	ANSWER_MAX = 24 + SUBMIT_MAX_TASKS * 21,
	ANSWER_WAIT_MS = 10000, /* a worker busy for longer than this is treated as gone */
	RECV_WAIT_MS = 50,      /* a client that connected but did not send is dropped */
};

static bool sock_addr(const char *dir, struct sockaddr_un *a)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	int n = snprintf(a->sun_path, sizeof a->sun_path, "%s/submit.sock", dir);
	return n > 0 && (size_t)n < sizeof a->sun_path; /* a longer path: no socket */
}

void queue_submit_token(char *out, size_t len)
{
	unsigned char r[16];
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
		/* No entropy source: time and PID are unique enough among one queue's clients. */
		snprintf(out, len, "t%.6f-%d", gw_wall_s(), (int)getpid());
		return;
	}
	size_t k = 0;
	for (size_t i = 0; i < sizeof r && k + 3 <= len; i++)
		k += (size_t)snprintf(out + k, len - k, "%02x", r[i]);
}

/* ---- the spec on the wire ----
 *
 * A message is a list of NUL-terminated fields: "gpuwhy-submit 1", the token, 1 or 0 for
 * "take the queue's back end", the number of tasks, then per task its fields in a fixed
 * order (spec_put). A text that may be absent is "-" or "+" and the text. The environment,
 * most of the message, goes in as it is: any JSON encoding of it would cost the client
 * more than the rest of its work.
 */

#define WIRE_MAGIC "gpuwhy-submit 1"

typedef struct {
	char *buf;
	size_t len, cap;
	bool fail;
} wire_out;

static void put(wire_out *w, const char *s)
{
	size_t n = strlen(s) + 1;
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 4096;
		while (cap < w->len + n)
			cap *= 2;
		char *b = realloc(w->buf, cap);
		if (!b) {
			w->fail = true;
			return;
		}
		w->buf = b;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static void put_int(wire_out *w, long long v)
{
	char b[24];
	snprintf(b, sizeof b, "%lld", v);
	put(w, b);
}

static void put_opt(wire_out *w, const char *s)
{
	if (!s) {
		put(w, "-");
		return;
	}
	put(w, "+");
	w->len--; /* the text follows the "+" in the same field */
	put(w, s);
}

static void spec_put(wire_out *w, const queue_spec *sp)
{
	put(w, sp->name);
	put(w, sp->cwd ? sp->cwd : "/");
	put_int(w, sp->gpus);
	put_int(w, sp->mem_mib);
	put_int(w, sp->per_gpu);
	put_int(w, sp->retries);
	put_int(w, sp->retry_delay_ms);
	put_int(w, sp->timeout_ms);
	put_int(w, sp->after_id);
	put_int(w, sp->allow_foreign);
	put(w, queue_backend_name(sp->backend));
	put_int(w, sp->host_mem_mib);
	put_opt(w, sp->slurm_args);
	put_opt(w, sp->input);
	put_opt(w, sp->output);
	put_opt(w, sp->record_file);
	put_opt(w, sp->env_json);
	put_int(w, sp->argc);
	for (int i = 0; i < sp->argc; i++)
		put(w, sp->argv[i]);
}

typedef struct {
	const char *p, *end;
	bool fail;
} wire_in;

/* The next field; "" (and fail set) past the end or on a field without its NUL. */
static const char *get(wire_in *r)
{
	const char *nul = r->p < r->end ? memchr(r->p, '\0', (size_t)(r->end - r->p)) : NULL;
	if (!nul) {
		r->fail = true;
		return "";
	}
	const char *f = r->p;
	r->p = nul + 1;
	return f;
}

static long long get_int(wire_in *r)
{
	const char *f = get(r);
	char *e;
	long long v = strtoll(f, &e, 10);
	if (e == f || *e)
		r->fail = true;
	return v;
}

static char *get_opt(wire_in *r)
{
	const char *f = get(r);
	if (f[0] == '+')
		return strdup(f + 1);
	if (strcmp(f, "-") != 0)
		r->fail = true;
	return NULL;
}

/* Back into a spec; false when the message is not one a client of this program sends. */
static bool spec_get(wire_in *r, queue_spec *sp)
{
	const char *name = get(r);
	if (strlen(name) >= sizeof sp->name)
		return false;
	snprintf(sp->name, sizeof sp->name, "%s", name);
	sp->cwd = strdup(get(r));
	sp->gpus = (int)get_int(r);
	sp->mem_mib = get_int(r);
	sp->per_gpu = (int)get_int(r);
	sp->retries = (int)get_int(r);
	sp->retry_delay_ms = get_int(r);
	sp->timeout_ms = get_int(r);
	sp->after_id = get_int(r);
	sp->allow_foreign = get_int(r) != 0;
	sp->backend = !strcmp(get(r), "slurm") ? QB_SLURM : QB_LOCAL;
	sp->host_mem_mib = get_int(r);
	sp->slurm_args = get_opt(r);
	sp->input = get_opt(r);
	sp->output = get_opt(r);
	sp->record_file = get_opt(r);
	sp->env_json = get_opt(r);
	long long argc = get_int(r);
	if (r->fail || argc < 1 || argc > 1 << 16)
		return false;
	char **v = calloc((size_t)argc + 1, sizeof *v);
	if (!v)
		return false;
	for (long long i = 0; i < argc; i++)
		v[i] = (char *)get(r);
	queue_spec_set_argv(sp, v, (int)argc);
	free(v);
	return !r->fail;
}

/* ---- the client ---- */

static char *request_text(const queue_spec *specs, int n, bool backend_default, const char *token,
                          size_t *len)
{
	wire_out w = {0};
	put(&w, WIRE_MAGIC);
	put(&w, token);
	put_int(&w, backend_default);
	put_int(&w, n);
	for (int i = 0; i < n; i++)
		spec_put(&w, &specs[i]);
	if (w.fail) {
		free(w.buf);
		return NULL;
	}
	*len = w.len;
	return w.buf;
}

/* "ok D ID..." -> ids and draining; false for anything else. */
static bool parse_answer(char *buf, int n, int64_t *ids, bool *draining)
{
	char *p = buf, *end;
	if (strncmp(p, "ok ", 3) != 0)
		return false;
	p += 3;
	long d = strtol(p, &end, 10);
	if (end == p)
		return false;
	*draining = d != 0;
	for (int i = 0; i < n; i++) {
		p = end;
		long long id = strtoll(p, &end, 10);
		if (end == p || id <= 0)
			return false;
		ids[i] = id;
	}
	return true;
}

int queue_submit_send(const char *dir, const queue_spec *specs, int n, bool backend_default,
                      const char *token, int64_t *ids, bool *draining)
{
	struct sockaddr_un a;
	if (n < 1 || n > SUBMIT_MAX_TASKS || !sock_addr(dir, &a))
		return QUEUE_SUBMIT_NOT_SENT;
	size_t len;
	char *req = request_text(specs, n, backend_default, token, &len);
	if (!req || len > SUBMIT_MAX) {
		free(req);
		return QUEUE_SUBMIT_NOT_SENT;
	}
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		/* No worker listens (none runs, or it was killed and left its socket file). */
		if (fd >= 0)
			close(fd);
		free(req);
		return QUEUE_SUBMIT_NOT_SENT;
	}
	struct ucred cr;
	socklen_t crl = sizeof cr;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl) != 0 ||
	    (cr.uid != geteuid() && cr.uid != 0)) {
		close(fd); /* not this user's worker: say nothing to it */
		free(req);
		return QUEUE_SUBMIT_NOT_SENT;
	}
	ssize_t w = send(fd, req, len, MSG_NOSIGNAL);
	free(req);
	if (w != (ssize_t)len) {
		close(fd);
		/* EMSGSIZE or the like: nothing was sent, or not a whole message the worker
		 * would take; either way the token decides. */
		return QUEUE_SUBMIT_UNANSWERED;
	}
	char buf[ANSWER_MAX + 1];
	struct pollfd pf = {.fd = fd, .events = POLLIN};
	ssize_t r = -1;
	if (poll(&pf, 1, ANSWER_WAIT_MS) == 1)
		r = recv(fd, buf, ANSWER_MAX, 0);
	close(fd);
	if (r <= 0)
		return QUEUE_SUBMIT_UNANSWERED;
	buf[r] = '\0';
	return parse_answer(buf, n, ids, draining) ? QUEUE_SUBMIT_ADDED : QUEUE_SUBMIT_UNANSWERED;
}

/* ---- the worker ---- */

int queue_submit_listen(const char *dir)
{
	struct sockaddr_un a;
	if (!sock_addr(dir, &a))
		return -1;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	/* The worker holds the queue's lock: a socket file left here is an earlier worker's. */
	unlink(a.sun_path);
	mode_t old = umask(077); /* the directory is the owner's alone; so is the socket */
	int rc = bind(fd, (struct sockaddr *)&a, sizeof a);
	umask(old);
	if (rc != 0 || listen(fd, 64) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

void queue_submit_close(const char *dir, int fd)
{
	struct sockaddr_un a;
	if (fd < 0)
		return;
	close(fd);
	if (sock_addr(dir, &a))
		unlink(a.sun_path);
}

/* The tasks of one request added; the answer into out. */
static void add_request(queue_db *st, wire_in *r, void (*on_error)(const gw_fail *), char *out,
                        size_t outlen)
{
	snprintf(out, outlen, "no");
	if (strcmp(get(r), WIRE_MAGIC) != 0)
		return;
	char token[QUEUE_TOKEN_MAX + 1];
	const char *t = get(r);
	bool backend_default = get_int(r) != 0;
	long long n = get_int(r);
	if (r->fail || strlen(t) > QUEUE_TOKEN_MAX || !t[0] || n < 1 || n > SUBMIT_MAX_TASKS)
		return;
	snprintf(token, sizeof token, "%s", t);
	queue_spec specs[SUBMIT_MAX_TASKS];
	int64_t ids[SUBMIT_MAX_TASKS];
	int k = 0;
	bool ok = true;
	char be[16] = "";
	if (backend_default)
		queue_db_config_get(st, "backend", be, sizeof be);
	for (; k < n && ok; k++) {
		queue_spec_init(&specs[k]);
		ok = spec_get(r, &specs[k]);
		if (be[0])
			specs[k].backend = !strcmp(be, "slurm") ? QB_SLURM : QB_LOCAL;
	}
	ok = ok && r->p == r->end; /* nothing after the last task */
	/* A failure (an `after` naming no task, the database) is the client's to report, in its
	 * own words and language: it adds the tasks itself and meets the same failure. */
	queue_db_on_error(st, NULL);
	if (ok && queue_db_add_token(st, specs, (int)n, token, ids) == 0) {
		int m = snprintf(out, outlen, "ok %d",
		                 queue_db_config_int(st, "draining") != 0 ? 1 : 0);
		for (long long i = 0; i < n && m > 0 && (size_t)m < outlen; i++)
			m += snprintf(out + m, outlen - (size_t)m, " %lld", (long long)ids[i]);
	}
	queue_db_on_error(st, on_error);
	for (int i = 0; i < k; i++)
		queue_spec_free(&specs[i]);
}

/* One connection: its request read, added, answered. True when tasks were added. */
static bool serve_one(queue_db *st, int c, void (*on_error)(const gw_fail *), char *buf)
{
	struct ucred cr;
	socklen_t crl = sizeof cr;
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &crl) != 0 || cr.uid != geteuid())
		return false; /* only the queue's owner submits (the directory is theirs alone) */
	ssize_t r = recv(c, buf, SUBMIT_MAX + 1, MSG_DONTWAIT | MSG_TRUNC);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		struct pollfd pf = {.fd = c, .events = POLLIN};
		if (poll(&pf, 1, RECV_WAIT_MS) == 1)
			r = recv(c, buf, SUBMIT_MAX + 1, MSG_DONTWAIT | MSG_TRUNC);
	}
	if (r <= 0 || r > SUBMIT_MAX)
		return false;
	wire_in in = {buf, buf + r, false};
	char answer[ANSWER_MAX + 1];
	add_request(st, &in, on_error, answer, sizeof answer);
	if (send(c, answer, strlen(answer), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* The client gave up; its own insert under the token finds the task there. */
	}
	return answer[0] == 'o';
}

bool queue_submit_serve(queue_db *st, int lfd, void (*on_error)(const gw_fail *))
{
	bool added = false;
	char *buf = NULL;
	/* A bounded number per wake-up, so a flood of clients cannot stall the loop. */
	for (int i = 0; i < 64; i++) {
		int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			break;
		if (!buf)
			buf = malloc(SUBMIT_MAX + 1);
		if (buf)
			added |= serve_one(st, c, on_error, buf);
		close(c);
	}
	free(buf);
	return added;
}
