#include "host/host_pidbrief.h"

#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void host_pid_brief_read(const char *proc_root, unsigned pid, host_pid_brief *out)
{
	memset(out, 0, sizeof *out);
	char path[256];
	struct stat st;
	snprintf(path, sizeof path, "%s/%u", proc_root, pid);
	if (stat(path, &st) != 0)
		return;
	out->exists = true;
	struct passwd pw, *res = NULL;
	char buf[1024];
	if (getpwuid_r(st.st_uid, &pw, buf, sizeof buf, &res) == 0 && res)
		snprintf(out->user, sizeof out->user, "%s", pw.pw_name);
	else
		snprintf(out->user, sizeof out->user, "%u", (unsigned)st.st_uid);
	snprintf(path, sizeof path, "%s/%u/cmdline", proc_root, pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, out->cmd, sizeof out->cmd - 1);
	close(fd);
	if (n <= 0) {
		out->cmd[0] = '\0';
		return;
	}
	out->cmd[n] = '\0';
	while (n > 0 && out->cmd[n - 1] == '\0')
		n--;
	for (ssize_t k = 0; k < n; k++)
		if (out->cmd[k] == '\0' || out->cmd[k] == '\n')
			out->cmd[k] = ' ';
}

bool host_pidns_nested(const char *proc_root)
{
	char path[256], line[256];
	snprintf(path, sizeof path, "%s/self/status", proc_root);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool nested = false;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		/* One PID per namespace level: more than one means we are nested. */
		int fields = 0;
		for (char *tok = strtok(line + 6, " \t\n"); tok; tok = strtok(NULL, " \t\n"))
			fields++;
		nested = fields > 1;
		break;
	}
	fclose(f);
	return nested;
}
