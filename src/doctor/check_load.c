/* check_load.c - load.*: who else is on the GPUs, memory nobody owns, ports, free memory. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doctor/check_cuda.h"
#include "doctor/checks.h"
#include "doctor/doctor_int.h"
#include "host/host_parse.h"
#include "host/host_pidbrief.h"
#include "util/strbuf.h"

#define MIB 1048576.0

static bool have_gpus(doctor_ctx *c, const char *check)
{
	if (c->m->nvml != DOCTOR_NVML_OK || c->m->n == 0) {
		doctor_addf(c->r, check, DOCTOR_SKIP, "no GPUs to look at (see driver.nvml)");
		return false;
	}
	return true;
}

/* Process state letter from /proc/PID/stat ('Z' zombie), and its parent; 0 when unknown. */
static char pid_state(const char *proc_root, unsigned pid, unsigned *ppid)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%u/stat", proc_root, pid);
	char *s = doctor_slurp(path, 4096);
	host_pid_stat ps;
	*ppid = 0;
	if (!s)
		return 0;
	int rc = host_parse_pid_stat(s, strlen(s), &ps);
	free(s);
	if (rc != 0)
		return 0;
	*ppid = (unsigned)ps.ppid;
	return ps.state;
}

/* ---- load.processes ---- */

void doctor_check_load_processes(doctor_ctx *c)
{
	if (!have_gpus(c, "load.processes"))
		return;
	const doctor_machine *m = c->m;
	const doctor_where *w = doctor_ctx_where(c);
	gw_strbuf b = {0}, free_gpus = {0}, unknown = {0};
	int nproc = 0, ngpu = 0;
	char mem[32];
	for (int i = 0; i < m->n; i++) {
		const doctor_gpu *g = &m->gpu[i];
		if (!doctor_gpu_selected(m, i) || g->lost)
			continue;
		ngpu++;
		if (!g->procs_ok) {
			gw_sb_sep(&unknown, ",");
			gw_sb_printf(&unknown, "%d", g->st.index);
			continue;
		}
		if (g->nproc == 0) {
			gw_sb_sep(&free_gpus, ",");
			gw_sb_printf(&free_gpus, "%d", g->st.index);
			continue;
		}
		for (int k = 0; k < g->nproc; k++) {
			const gpu_proc *p = &g->procs[k];
			host_pid_brief pb;
			gpu_proc_brief(p, c->p->proc_root, &pb);
			gw_sb_sep(&b, "; ");
			gw_sb_printf(&b, DOCTOR_("GPU %d: pid %u"), g->st.index, p->pid);
			char cmd[96];
			if (pb.exists)
				gw_sb_printf(
				    &b, " %s '%s'", pb.user[0] ? pb.user : "?",
				    doctor_short(pb.cmd[0] ? pb.cmd : "?", 80, cmd, sizeof cmd));
			else if (w->pidns_nested)
				gw_sb_printf(&b, DOCTOR_(" (not visible from this PID namespace)"));
			else
				gw_sb_printf(&b, DOCTOR_(" (no such process here)"));
			if (p->mem_ok)
				gw_sb_printf(&b, " %s",
				             doctor_bytes(p->mem_bytes, mem, sizeof mem));
			nproc++;
		}
	}
	if (nproc == 0) {
		doctor_addf(c->r, "load.processes", DOCTOR_PASS,
		            ngpu > 1 ? DOCTOR_("no processes on any of the %d GPUs%s%s")
		                     : DOCTOR_P("no processes on %d GPU%s%s",
		                                "no processes on %d GPUs%s%s", ngpu),
		            ngpu, unknown.len ? DOCTOR_("; process list unavailable for GPU ") : "",
		            gw_sb_str(&unknown));
	} else {
		doctor_result *r = doctor_addf(
		    c->r, "load.processes", DOCTOR_WARN,
		    DOCTOR_P("%d process on the GPUs: %s", "%d processes on the GPUs: %s", nproc),
		    nproc, gw_sb_str(&b));
		if (free_gpus.len)
			doctor_fixf(
			    r,
			    "they compete for SM time and memory: run on a free GPU "
			    "(CUDA_VISIBLE_DEVICES=%s), wait, or stop the ones that are yours "
			    "(kill PID)",
			    gw_sb_str(&free_gpus));
		else
			doctor_fixf(
			    r, "no GPU is free: wait, agree with the owners, or stop the ones that "
			       "are yours (kill PID)");
	}
	gw_sb_free(&b);
	gw_sb_free(&free_gpus);
	gw_sb_free(&unknown);
}

/* ---- load.orphan_memory ---- */

/* Memory used beyond what listed processes hold, worth a warning: max(1 GiB, 5 %). */
static double unowned_threshold_mib(double total_mib)
{
	double t = total_mib * 0.05;
	return t > 1024 ? t : 1024;
}

void doctor_check_load_orphan_memory(doctor_ctx *c)
{
	if (!have_gpus(c, "load.orphan_memory"))
		return;
	const doctor_machine *m = c->m;
	const doctor_where *w = doctor_ctx_where(c);
	gw_strbuf b = {0}, fix = {0};
	int looked = 0;
	char mem[32], mem2[32];
	bool zombie = false, orphan = false;
	for (int i = 0; i < m->n; i++) {
		const doctor_gpu *g = &m->gpu[i];
		double used, total, mig;
		if (!doctor_gpu_selected(m, i) || g->lost || !g->procs_ok ||
		    !doctor_val(g, GM_MEM_USED, &used) || !doctor_val(g, GM_MEM_TOTAL, &total))
			continue;
		if (doctor_val(g, GM_MIG_CURRENT, &mig) && mig > 0)
			continue; /* MIG: processes are listed per instance, not per GPU */
		double owned = 0;
		bool all_known = true;
		for (int k = 0; k < g->nproc; k++) {
			const gpu_proc *p = &g->procs[k];
			all_known &= p->mem_ok;
			if (p->mem_ok)
				owned += (double)p->mem_bytes / MIB;
			/* A PID the kernel does not know, or a zombie, still holding memory. */
			if (w->pidns_nested)
				continue;
			unsigned ppid;
			char st = pid_state(c->p->proc_root, p->pid, &ppid);
			host_pid_brief pb;
			gpu_proc_brief(p, c->p->proc_root, &pb);
			if (!pb.exists) {
				gw_sb_sep(&b, "; ");
				gw_sb_printf(
				    &b, DOCTOR_("GPU %d: pid %u is gone but NVML still lists it"),
				    g->st.index, p->pid);
				if (p->mem_ok)
					gw_sb_printf(&b, DOCTOR_(" with %s"),
					             doctor_bytes(p->mem_bytes, mem, sizeof mem));
				orphan = true;
			} else if (st == 'Z') {
				gw_sb_sep(&b, "; ");
				gw_sb_printf(
				    &b,
				    DOCTOR_(
				        "GPU %d: pid %u is a zombie (defunct) still holding %s"),
				    g->st.index, p->pid,
				    p->mem_ok ? doctor_bytes(p->mem_bytes, mem, sizeof mem)
				              : DOCTOR_("memory"));
				gw_sb_sep(&fix, "; ");
				gw_sb_printf(
				    &fix,
				    DOCTOR_(
				        "its parent pid %u must reap it: stop or restart pid %u"),
				    ppid, ppid);
				zombie = true;
			}
		}
		if (!all_known)
			continue; /* WDDM/WSL and some vGPUs hide per-process memory */
		looked++;
		double unowned = used - owned;
		if (unowned > unowned_threshold_mib(total)) {
			gw_sb_sep(&b, "; ");
			gw_sb_printf(
			    &b, DOCTOR_("GPU %d: %s of %s used is held by no listed process"),
			    g->st.index, doctor_bytes((uint64_t)(unowned * MIB), mem, sizeof mem),
			    doctor_bytes((uint64_t)(used * MIB), mem2, sizeof mem2));
			orphan = true;
		}
	}
	if (!looked && !b.len) {
		doctor_addf(c->r, "load.orphan_memory", DOCTOR_SKIP,
		            "memory use or per-process memory not reported");
	} else if (b.len) {
		if (orphan) {
			gw_sb_sep(&fix, "; ");
			gw_sb_printf(
			    &fix,
			    DOCTOR_(
			        "memory without a live owner: find holders with sudo fuser -v "
			        "/dev/nvidia* (or lsof /dev/nvidia*) and stop them; if nothing "
			        "holds it, reset the GPU when idle (sudo nvidia-smi -r -i N) or "
			        "reboot"));
		}
		doctor_result *r =
		    doctor_addf(c->r, "load.orphan_memory", DOCTOR_WARN, "%s", gw_sb_str(&b));
		doctor_fixf(r, "%s", gw_sb_str(&fix));
	} else {
		doctor_addf(c->r, "load.orphan_memory", DOCTOR_PASS,
		            DOCTOR_P("used memory belongs to listed processes on %d GPU%s",
		                     "used memory belongs to listed processes on all %d GPUs%s",
		                     looked),
		            looked,
		            w->pidns_nested
		                ? DOCTOR_(" (gone processes cannot be told from hidden ones here)")
		                : "");
	}
	(void)zombie;
	gw_sb_free(&b);
	gw_sb_free(&fix);
}

/* ---- load.port ---- */

typedef struct {
	unsigned long inode;
	unsigned uid;
	char addr[64];
} listener;

/* "0100007F" (little-endian IPv4) or 32 hex digits (IPv6 as four little-endian words). */
static void decode_addr(const char *hex, char *out, size_t len)
{
	size_t l = strspn(hex, "0123456789abcdefABCDEF");
	unsigned char b[16];
	if (l != 8 && l != 32) {
		snprintf(out, len, "?");
		return;
	}
	for (size_t w = 0; w < l / 8; w++) {
		char word[9];
		memcpy(word, hex + 8 * w, 8);
		word[8] = '\0';
		unsigned long v = strtoul(word, NULL, 16);
		/* the kernel prints each 32-bit word in host (little-endian) order */
		b[4 * w] = (unsigned char)(v & 0xff);
		b[4 * w + 1] = (unsigned char)((v >> 8) & 0xff);
		b[4 * w + 2] = (unsigned char)((v >> 16) & 0xff);
		b[4 * w + 3] = (unsigned char)((v >> 24) & 0xff);
	}
	if (!inet_ntop(l == 8 ? AF_INET : AF_INET6, b, out, (socklen_t)len))
		snprintf(out, len, "?");
}

/* Sockets listening on port in /proc/net/tcp and tcp6. Returns count, -1 when unreadable. */
static int find_listeners(const char *proc_root, int port, listener *out, int max)
{
	static const char *const files[] = {"/net/tcp", "/net/tcp6"};
	int n = 0, readable = 0;
	for (size_t f = 0; f < 2; f++) {
		char path[256];
		doctor_pathf(path, sizeof path, proc_root, "%s", files[f]);
		char *s = doctor_slurp(path, 16u << 20);
		if (!s)
			continue;
		readable++;
		char *save = NULL;
		for (char *line = strtok_r(s, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
			char local[80], rem[80], st[8];
			unsigned uid;
			unsigned long inode;
			if (sscanf(line, " %*[^:]: %79s %79s %7s %*s %*s %*s %u %*s %lu", local,
			           rem, st, &uid, &inode) != 5)
				continue;
			char *colon = strrchr(local, ':');
			if (!colon || strtol(colon + 1, NULL, 16) != port || strcmp(st, "0A"))
				continue;
			*colon = '\0';
			if (n < max) {
				out[n].inode = inode;
				out[n].uid = uid;
				decode_addr(local, out[n].addr, sizeof out[n].addr);
				n++;
			}
		}
		free(s);
	}
	return readable ? n : -1;
}

/* The PID with an fd on socket:[inode], 0 when none is visible. */
static unsigned socket_owner(const char *proc_root, unsigned long inode)
{
	char want[64];
	snprintf(want, sizeof want, "socket:[%lu]", inode);
	DIR *d = opendir(proc_root);
	if (!d)
		return 0;
	unsigned found = 0;
	struct dirent *e;
	while (!found && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		char fddir[512];
		snprintf(fddir, sizeof fddir, "%s/%s/fd", proc_root, e->d_name);
		DIR *fds = opendir(fddir);
		if (!fds)
			continue;
		struct dirent *fe;
		while ((fe = readdir(fds))) {
			char link[1024], target[128];
			snprintf(link, sizeof link, "%s/%s", fddir, fe->d_name);
			ssize_t l = readlink(link, target, sizeof target - 1);
			if (l <= 0)
				continue;
			target[l] = '\0';
			if (!strcmp(target, want)) {
				found = (unsigned)strtoul(e->d_name, NULL, 10);
				break;
			}
		}
		closedir(fds);
	}
	closedir(d);
	return found;
}

static void check_port(doctor_ctx *c, int port)
{
	listener ls[8];
	int n = find_listeners(c->p->proc_root, port, ls, 8);
	if (n < 0) {
		doctor_addf(c->r, "load.port", DOCTOR_SKIP, "port %d: %s/net/tcp not readable",
		            port, c->p->proc_root);
		return;
	}
	if (n == 0) {
		doctor_addf(c->r, "load.port", DOCTOR_PASS,
		            "port %d is free (nothing listens on it)", port);
		return;
	}
	gw_strbuf b = {0};
	unsigned pid = 0;
	for (int i = 0; i < n; i++) {
		unsigned p = socket_owner(c->p->proc_root, ls[i].inode);
		if (p && !pid)
			pid = p;
		gw_sb_sep(&b, "; ");
		gw_sb_printf(&b, "%s", ls[i].addr);
		if (p) {
			host_pid_brief pb;
			host_pid_brief_read(c->p->proc_root, p, &pb);
			char cmd[96];
			gw_sb_printf(&b, DOCTOR_(" by pid %u (%s: '%s')"), p,
			             pb.user[0] ? pb.user : "?",
			             doctor_short(pb.cmd[0] ? pb.cmd : "?", 80, cmd, sizeof cmd));
		} else {
			struct passwd pw, *res = NULL;
			char buf[1024];
			if (getpwuid_r(ls[i].uid, &pw, buf, sizeof buf, &res) == 0 && res)
				gw_sb_printf(
				    &b, DOCTOR_(" by a process of %s (not visible to this user)"),
				    pw.pw_name);
			else
				gw_sb_printf(
				    &b,
				    DOCTOR_(" by a process of uid %u (not visible to this user)"),
				    ls[i].uid);
		}
	}
	doctor_result *r = doctor_addf(c->r, "load.port", DOCTOR_WARN,
	                               "port %d is taken: listened on at %s", port, gw_sb_str(&b));
	if (pid)
		doctor_fixf(
		    r,
		    "if it is a leftover, stop it (kill %u, then kill -9 %u if it stays), or "
		    "start your service on another port",
		    pid, pid);
	else
		doctor_fixf(
		    r,
		    "see who it is with sudo ss -ltnp 'sport = :%d' (or run gpuwhy doctor as "
		    "root), or start your service on another port",
		    port);
	gw_sb_free(&b);
}

void doctor_check_load_ports(doctor_ctx *c)
{
	if (c->o->nports == 0) {
		doctor_addf(c->r, "load.port", DOCTOR_SKIP,
		            "no --port given (--port 7860 says who listens on a port)");
		return;
	}
	for (int i = 0; i < c->o->nports; i++)
		check_port(c, c->o->ports[i]);
}

/* ---- load.need_mem ---- */

void doctor_check_load_need_mem(doctor_ctx *c)
{
	if (!c->o->need_mem_set) {
		doctor_addf(c->r, "load.need_mem", DOCTOR_SKIP,
		            "no --need-mem given (--need-mem 20G lists GPUs with that much free)");
		return;
	}
	if (!have_gpus(c, "load.need_mem"))
		return;
	const doctor_machine *m = c->m;
	double need = (double)c->o->need_mem;
	char want[32], a[32], b2[32];
	doctor_bytes(c->o->need_mem, want, sizeof want);
	/* Which GPUs CUDA shows this environment. */
	doctor_cvd_gpu g[DOCTOR_CVD_MAX];
	int n = m->n < DOCTOR_CVD_MAX ? m->n : DOCTOR_CVD_MAX;
	for (int i = 0; i < n; i++) {
		memset(&g[i], 0, sizeof g[i]);
		g[i].uuid = m->gpu[i].st.uuid;
		g[i].name = m->gpu[i].st.name;
	}
	const char *ord = doctor_env(c, "CUDA_DEVICE_ORDER");
	const char *cvd = doctor_env(c, "CUDA_VISIBLE_DEVICES");
	doctor_cvd_map map;
	doctor_cvd_resolve(cvd, g, n, ord && !strcmp(ord, "PCI_BUS_ID"), &map);
	bool mixed = false;
	for (int i = 1; i < n; i++)
		mixed |= strcmp(g[i].name, g[0].name) != 0;
	gw_strbuf fits = {0}, fits_visible = {0}, all = {0}, sel = {0};
	bool any_total = false;
	int known = 0;
	for (int i = 0; i < n; i++) {
		const doctor_gpu *x = &m->gpu[i];
		double fr, tot;
		if (!doctor_gpu_selected(m, i) || !doctor_val(x, GM_MEM_FREE, &fr))
			continue;
		known++;
		double free_b = fr * MIB;
		gw_sb_sep(&all, ", ");
		gw_sb_printf(&all, DOCTOR_("GPU %d %s free"), x->st.index,
		             doctor_bytes((uint64_t)free_b, a, sizeof a));
		if (doctor_val(x, GM_MEM_TOTAL, &tot)) {
			gw_sb_printf(&all, DOCTOR_(" of %s"),
			             doctor_bytes((uint64_t)(tot * MIB), b2, sizeof b2));
			any_total |= tot * MIB >= need;
		}
		if (free_b < need)
			continue;
		gw_sb_sep(&fits, ", ");
		gw_sb_printf(&fits, "%d", x->st.index);
		gw_sb_sep(&sel, ",");
		if (mixed)
			gw_sb_printf(&sel, "%.12s", x->st.uuid);
		else
			gw_sb_printf(&sel, "%d", x->st.index);
		for (int k = 0; k < map.n; k++)
			if (map.phys[k] == i) {
				gw_sb_sep(&fits_visible, ", ");
				gw_sb_printf(&fits_visible, "%d", x->st.index);
			}
	}
	if (!known) {
		doctor_addf(c->r, "load.need_mem", DOCTOR_SKIP, "free memory not reported");
	} else if (!fits.len) {
		doctor_result *r = doctor_addf(c->r, "load.need_mem", DOCTOR_FAIL,
		                               "no GPU has %s free: %s", want, gw_sb_str(&all));
		if (any_total)
			doctor_fixf(
			    r, "free memory (see load.processes and load.orphan_memory) or wait; "
			       "or need less: smaller batch, mixed precision, gradient "
			       "checkpointing, offload");
		else
			doctor_fixf(
			    r,
			    "no GPU here has %s in total: shard the model (tensor or pipeline "
			    "parallel), quantize, or offload to the CPU",
			    want);
	} else if (map.set && !fits_visible.len) {
		doctor_result *r =
		    doctor_addf(c->r, "load.need_mem", DOCTOR_WARN,
		                strchr(gw_sb_str(&fits), ',')
		                    ? DOCTOR_("GPU %s have %s free, but "
		                              "CUDA_VISIBLE_DEVICES='%s' selects none of them")
		                    : DOCTOR_("GPU %s has %s free, but "
		                              "CUDA_VISIBLE_DEVICES='%s' selects none of them"),
		                gw_sb_str(&fits), want, cvd);
		doctor_fixf(r, "CUDA_VISIBLE_DEVICES=%s", gw_sb_str(&sel));
	} else {
		doctor_addf(c->r, "load.need_mem", DOCTOR_PASS,
		            strchr(gw_sb_str(&fits), ',')
		                ? DOCTOR_("GPU %s have %s free (CUDA_VISIBLE_DEVICES=%s%s)")
		                : DOCTOR_("GPU %s has %s free (CUDA_VISIBLE_DEVICES=%s%s)"),
		            gw_sb_str(&fits), want, gw_sb_str(&sel),
		            mixed ? DOCTOR_(", by UUID prefix because the models differ") : "");
	}
	gw_sb_free(&fits);
	gw_sb_free(&fits_visible);
	gw_sb_free(&all);
	gw_sb_free(&sel);
}
