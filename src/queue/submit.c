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
 *   client -> worker   {"token": T, "backend_default": B, "tasks": [SPEC]} NUL ENV NUL ...
 *   worker -> client   "ok DRAINING ID..." | "no" (the client adds them itself)
 *
 * The captured environments (a JSON object as text, most of the message) follow the
 * header as they are, one after each NUL, for the tasks whose "env" is true: escaping
 * them into the header would cost more than the rest of the client's work.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "queue/queue.h"
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

/* ---- the spec on the wire ---- */

static json_t *jstr(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *spec_json(const queue_spec *sp)
{
	json_t *argv = json_array();
	for (int i = 0; i < sp->argc; i++)
		json_array_append_new(argv, json_string(sp->argv[i]));
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(sp->name));
	json_object_set_new(o, "argv", argv);
	json_object_set_new(o, "cwd", jstr(sp->cwd));
	json_object_set_new(o, "env", json_boolean(sp->env_json != NULL));
	json_object_set_new(o, "gpus", json_integer(sp->gpus));
	json_object_set_new(o, "mem_mib", json_integer(sp->mem_mib));
	json_object_set_new(o, "per_gpu", json_integer(sp->per_gpu));
	json_object_set_new(o, "retries", json_integer(sp->retries));
	json_object_set_new(o, "retry_delay_ms", json_integer(sp->retry_delay_ms));
	json_object_set_new(o, "timeout_ms", json_integer(sp->timeout_ms));
	json_object_set_new(o, "after_id", json_integer(sp->after_id));
	json_object_set_new(o, "allow_foreign", json_boolean(sp->allow_foreign));
	json_object_set_new(o, "backend", json_string(queue_backend_name(sp->backend)));
	json_object_set_new(o, "host_mem_mib", json_integer(sp->host_mem_mib));
	json_object_set_new(o, "slurm_args", jstr(sp->slurm_args));
	json_object_set_new(o, "input", jstr(sp->input));
	json_object_set_new(o, "output", jstr(sp->output));
	json_object_set_new(o, "record_file", jstr(sp->record_file));
	return o;
}

static char *dup_or_null(json_t *v)
{
	return json_is_string(v) ? strdup(json_string_value(v)) : NULL;
}

static int64_t jint(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* Back into a spec; false when the message is not one a client of this program sends. */
static bool spec_from_json(json_t *o, queue_spec *sp)
{
	json_t *argv = json_object_get(o, "argv"), *name = json_object_get(o, "name");
	json_t *be = json_object_get(o, "backend");
	if (!json_is_array(argv) || json_array_size(argv) == 0 || !json_is_string(name) ||
	    !json_is_string(json_object_get(o, "cwd")) || !json_is_string(be) ||
	    strlen(json_string_value(name)) >= sizeof sp->name)
		return false;
	size_t n = json_array_size(argv);
	char **v = calloc(n + 1, sizeof *v);
	for (size_t i = 0; i < n; i++) {
		json_t *w = json_array_get(argv, i);
		v[i] = (char *)(json_is_string(w) ? json_string_value(w) : "");
	}
	queue_spec_set_argv(sp, v, (int)n);
	free(v);
	snprintf(sp->name, sizeof sp->name, "%s", json_string_value(name));
	sp->cwd = dup_or_null(json_object_get(o, "cwd"));

	sp->gpus = (int)jint(o, "gpus");
	sp->mem_mib = jint(o, "mem_mib");
	sp->per_gpu = (int)jint(o, "per_gpu");
	sp->retries = (int)jint(o, "retries");
	sp->retry_delay_ms = jint(o, "retry_delay_ms");
	sp->timeout_ms = jint(o, "timeout_ms");
	sp->after_id = jint(o, "after_id");
	sp->allow_foreign = json_is_true(json_object_get(o, "allow_foreign"));
	sp->backend = !strcmp(json_string_value(be), "slurm") ? QB_SLURM : QB_LOCAL;
	sp->host_mem_mib = jint(o, "host_mem_mib");
	sp->slurm_args = dup_or_null(json_object_get(o, "slurm_args"));
	sp->input = dup_or_null(json_object_get(o, "input"));
	sp->output = dup_or_null(json_object_get(o, "output"));
	sp->record_file = dup_or_null(json_object_get(o, "record_file"));
	return true;
}

/* ---- the client ---- */

/* The header, then each environment after a NUL. */
static char *request_text(const queue_spec *specs, int n, bool backend_default, const char *token,
                          size_t *len)
{
	json_t *tasks = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(tasks, spec_json(&specs[i]));
	json_t *req = json_object();
	json_object_set_new(req, "token", json_string(token));
	json_object_set_new(req, "backend_default", json_boolean(backend_default));
	json_object_set_new(req, "tasks", tasks);
	char *txt = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (!txt)
		return NULL;
	size_t k = strlen(txt), total = k;
	for (int i = 0; i < n; i++)
		if (specs[i].env_json)
			total += 1 + strlen(specs[i].env_json);
	char *msg = realloc(txt, total + 1);
	if (!msg) {
		free(txt);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		if (specs[i].env_json) {
			size_t e = strlen(specs[i].env_json);
			msg[k++] = '\0';
			memcpy(msg + k, specs[i].env_json, e);
			k += e;
		}
	msg[k] = '\0';
	*len = k;
	return msg;
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

/* The environment of a task whose "env" is true: the next NUL-separated text of the
 * message after *pos; false when the message has none left. */
static bool take_env(const char *buf, size_t len, size_t *pos, queue_spec *sp)
{
	if (*pos >= len || buf[*pos] != '\0')
		return false;
	const char *e = buf + *pos + 1;
	size_t n = strnlen(e, len - *pos - 1);
	sp->env_json = strndup(e, n);
	*pos += 1 + n;
	return sp->env_json != NULL;
}

/* The tasks of one request (header req, environments in buf from pos) added; the answer
 * into out. */
static void add_request(queue_store *st, json_t *req, const char *buf, size_t len, size_t pos,
                        void (*on_error)(const queue_err *), char *out, size_t outlen)
{
	snprintf(out, outlen, "no");
	json_t *tasks = json_object_get(req, "tasks");
	json_t *tok = json_object_get(req, "token");
	size_t n = json_array_size(tasks);
	if (!json_is_string(tok) || strlen(json_string_value(tok)) > QUEUE_TOKEN_MAX || n < 1 ||
	    n > SUBMIT_MAX_TASKS)
		return;
	queue_spec specs[SUBMIT_MAX_TASKS];
	int64_t ids[SUBMIT_MAX_TASKS];
	size_t k = 0;
	bool ok = true;
	char be[16] = "";
	if (json_is_true(json_object_get(req, "backend_default")))
		queue_store_config_get(st, "backend", be, sizeof be);
	for (; k < n && ok; k++) {
		queue_spec_init(&specs[k]);
		json_t *t = json_array_get(tasks, k);
		ok = spec_from_json(t, &specs[k]);
		if (ok && json_is_true(json_object_get(t, "env")))
			ok = take_env(buf, len, &pos, &specs[k]);
		if (be[0])
			specs[k].backend = !strcmp(be, "slurm") ? QB_SLURM : QB_LOCAL;
	}
	/* A failure (an `after` naming no task, the database) is the client's to report, in its
	 * own words and language: it adds the tasks itself and meets the same failure. */
	queue_store_on_error(st, NULL);
	if (ok && queue_store_add_token(st, specs, (int)n, json_string_value(tok), ids) == 0) {
		int m = snprintf(out, outlen, "ok %d",
		                 queue_store_config_int(st, "draining") != 0 ? 1 : 0);
		for (size_t i = 0; i < n && m > 0 && (size_t)m < outlen; i++)
			m += snprintf(out + m, outlen - (size_t)m, " %lld", (long long)ids[i]);
	}
	queue_store_on_error(st, on_error);
	for (size_t i = 0; i < k; i++)
		queue_spec_free(&specs[i]);
}

/* One connection: its request read, added, answered. True when tasks were added. */
static bool serve_one(queue_store *st, int c, void (*on_error)(const queue_err *), char *buf)
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
	size_t head = strnlen(buf, (size_t)r);
	json_t *req = json_loadb(buf, head, 0, NULL);
	char answer[ANSWER_MAX + 1];
	snprintf(answer, sizeof answer, "no");
	if (json_is_object(req))
		add_request(st, req, buf, (size_t)r, head, on_error, answer, sizeof answer);
	json_decref(req);
	if (send(c, answer, strlen(answer), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* The client gave up; its own insert under the token finds the task there. */
	}
	return answer[0] == 'o';
}

bool queue_submit_serve(queue_store *st, int lfd, void (*on_error)(const queue_err *))
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
