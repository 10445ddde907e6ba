/* follow.c - a task's log as it grows (`queue log`) and tasks counted until they end
 * (`queue wait`). */
#include <fcntl.h>
#include <unistd.h>

#include "queue/follow.h"
#include "queue/state.h"
#include "queue/submit.h"

int queue_log_span(queue_db *st, int64_t id, int attempt, int64_t *from, int64_t *until)
{
	*from = 0;
	*until = -1;
	if (attempt <= 0)
		return 0;
	queue_attempt a, next;
	if (queue_db_attempt_get(st, id, attempt, &a) != 0)
		return 1;
	*from = a.log_offset;
	if (queue_db_attempt_get(st, id, attempt + 1, &next) == 0)
		*until = next.log_offset;
	return 0;
}

bool queue_log_copy(const char *path, int64_t *off, int64_t until, FILE *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool grew = false;
	if (fd < 0)
		return false;
	char buf[65536];
	for (;;) {
		size_t want = sizeof buf;
		if (until >= 0 && *off + (int64_t)want > until)
			want = until > *off ? (size_t)(until - *off) : 0;
		if (want == 0)
			break;
		ssize_t n = pread(fd, buf, want, *off);
		if (n <= 0)
			break;
		fwrite(buf, 1, (size_t)n, out);
		*off += n;
		grew = true;
	}
	close(fd);
	return grew;
}

int queue_wait_count(queue_db *st, const int64_t *ids, int n, int *pending, int *bad)
{
	*pending = *bad = 0;
	if (n > 0) {
		for (int i = 0; i < n; i++) {
			int s = queue_db_state_of(st, ids[i]);
			if (s < 0)
				return i + 1;
			*pending += !queue_state_final((queue_state)s);
			*bad += queue_state_final((queue_state)s) && s != QS_DONE;
		}
		return 0;
	}
	queue_task *t;
	int nt;
	if (queue_db_list(st, -1, &t, &nt) == 0) {
		for (int i = 0; i < nt; i++) {
			*pending += !queue_state_final(t[i].state);
			*bad += queue_state_final(t[i].state) && t[i].state != QS_DONE;
		}
		queue_tasks_free(t, nt);
	}
	return 0;
}
