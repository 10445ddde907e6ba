/*
 * gpu_amd.c - AMD GPUs behind gpu_open: the amdgpu reader (amdgpu*.c) as the
 * device layer's second vendor.
 *
 * Where they are read: GPUWHY_SYSFS_ROOT=DIR reads DIR/sys/class/drm (and
 * processes from DIR/proc when it exists), "" or unset the real /sys and
 * /proc. Under --sim, a scenario's AMD GPUs are a tree this file writes
 * (sim/sim_amdfs.c) below a private directory in the scenario's state
 * directory, refreshed at every reading from the shared scenario clock; a
 * scenario without AMD GPUs shows none (the real machine's cards are not
 * mixed into a simulated one) unless GPUWHY_SYSFS_ROOT names a tree.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "gpu/amdgpu_map.h"
#include "gpu/amdsmi.h"
#include "gpu/gpu_int.h"
#include "sim_amdfs.h"
#include "sim_amdkmsg.h"
#include "sim_scenario.h"
#include "sim_state.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

/* The simulated tree of a scenario's AMD GPUs. */
typedef struct {
	sim_scenario *scn;
	char root[PATH_MAX];
	sim_epoch epoch;
	bool pinned;
	double pin_t;
	pthread_mutex_t mu;   /* one refresh of the tree at a time */
	char state[PATH_MAX]; /* the scenario's state directory (workloads) */
	char klog[PATH_MAX];  /* the simulated kernel log (ROOT/dev/kmsg) */
	double klog_t;        /* its lines up to this scenario time are written */
} amd_sim;

/* dst = a + b; false (dst "") when it does not fit. */
static bool join(char *dst, size_t n, const char *a, const char *b)
{
	int w = snprintf(dst, n, "%s%s", a, b);
	if (w < 0 || (size_t)w >= n) {
		dst[0] = '\0';
		return false;
	}
	return true;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	remove(p);
	return 0;
}

static void rm_tree(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Trees of processes that are gone (killed before their close) are removed. */
static void reap_trees(const char *state)
{
	DIR *d = opendir(state);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		unsigned long pid;
		char tail;
		if (sscanf(e->d_name, "amd-%lu%c", &pid, &tail) != 1 || pid == 0)
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		char p[PATH_MAX], name[300];
		snprintf(name, sizeof name, "/%s", e->d_name);
		if (join(p, sizeof p, state, name))
			rm_tree(p);
	}
	closedir(d);
}

/* Scenario time now (GPUWHY_SIM_TIME pins it) and the real seconds since its origin. */
static void sim_now(const amd_sim *s, double *t, double *real_s)
{
	*real_s = (double)(gw_mono_ns() - s->epoch.mono_ns) / 1e9;
	*t = s->pinned ? s->pin_t : *real_s;
}

/* GPUWHY_SIM_TIME: the scenario clock pinned at that time. */
static void read_pin(amd_sim *s)
{
	const char *pin = getenv("GPUWHY_SIM_TIME");
	char *end;
	if (pin && *pin) {
		s->pin_t = strtod(pin, &end);
		s->pinned = *end == '\0' && isfinite(s->pin_t) && s->pin_t >= 0;
	}
}

static bool scenario_has_amd(const sim_scenario *s)
{
	return s->n_nvidia < s->n_gpus;
}

/* The simulated kernel log, with its lines up to t: the machine booted at scenario time 0. */
static void klog_open(amd_sim *s, double t)
{
	char dev[PATH_MAX];
	s->klog_t = t;
	if (!join(dev, sizeof dev, s->root, "/dev") || (mkdir(dev, 0700) != 0 && errno != EEXIST) ||
	    !join(s->klog, sizeof s->klog, dev, "/kmsg") ||
	    sim_amdkmsg_append(s->scn, s->klog, -1, t) != 0)
		s->klog[0] = '\0';
}

/* The kernel log's lines since the last call (under s->mu). */
static void klog_advance(amd_sim *s, double t)
{
	if (!s->klog[0] || t <= s->klog_t)
		return;
	if (sim_amdkmsg_append(s->scn, s->klog, s->klog_t, t) == 0)
		s->klog_t = t;
}

/* The scenario file --sim set, or NULL when gpuwhy is not simulating. */
static const char *scenario_path(void)
{
	const char *path = getenv("GPUWHY_SIM_SCENARIO");
	return path && *path && getenv("GPUWHY_NVML") ? path : NULL;
}

/*
 * A fresh tree of this process's own below the scenario's state directory
 * (root gets its path), with every AMD GPU's files at scenario time t. False
 * when the path does not fit or a file cannot be written.
 */
static bool write_tree(const sim_scenario *scn, const char *state, char *root, size_t len, double t,
                       double real_s)
{
	char leaf[32];
	snprintf(leaf, sizeof leaf, "/amd-%ld", (long)getpid());
	if (!join(root, len, state, leaf))
		return false; /* root is "" */
	rm_tree(root);
	bool ok = true;
	for (int g = 0; g < scn->n_gpus; g++)
		if (scn->gpus[g].amd)
			ok &= sim_amdfs_write(scn, g, root, t, real_s, true, NULL) == 0;
	return ok;
}

/*
 * Under --sim: load the scenario and, when it has AMD GPUs, write their tree
 * and point the reader at it. Returns true when the sources are the
 * scenario's (with or without AMD GPUs).
 */
static bool sim_setup(gpu_ctx *c)
{
	const char *path = scenario_path();
	if (!path)
		return false;
	char err[512], state[PATH_MAX];
	sim_scenario *scn;
	if (sim_scenario_load(path, &scn, err, sizeof err) != 0)
		return true; /* NVML's start reports the scenario's error */
	amd_sim *s = gw_xcalloc(1, sizeof *s);
	s->scn = scn;
	read_pin(s);
	if (!scenario_has_amd(scn) || sim_state_dir(path, state, sizeof state, err, sizeof err) ||
	    sim_clock_open(state, &s->epoch, err, sizeof err)) {
		sim_scenario_free(scn);
		free(s);
		return true;
	}
	reap_trees(state);
	memcpy(s->state, state, sizeof s->state);
	double t, real_s;
	sim_now(s, &t, &real_s);
	/* a file that cannot be written reads as absent: the reader says n/a */
	if (!write_tree(scn, state, s->root, sizeof c->amd.sys_root, t, real_s) && !s->root[0]) {
		sim_scenario_free(scn);
		free(s);
		return true;
	}
	pthread_mutex_init(&s->mu, NULL);
	klog_open(s, t);
	join(c->amd.sys_root, sizeof c->amd.sys_root, s->root, "");
	join(c->amd.proc_root, sizeof c->amd.proc_root, s->root, "/proc");
	c->amd.sim = s;
	return true;
}

int gpu_amd_discover(gpu_ctx *c)
{
	snprintf(c->amd.proc_root, sizeof c->amd.proc_root, "/proc");
	const char *root = getenv("GPUWHY_SYSFS_ROOT");
	bool simulated = sim_setup(c);
	c->amd.simulated = simulated;
	if (simulated && !c->amd.sim && !(root && *root))
		return 0;
	if (!c->amd.sim && root && *root) {
		if (!join(c->amd.sys_root, sizeof c->amd.sys_root, root, ""))
			return 0; /* a root too long for the reader's paths */
		char proc[sizeof c->amd.proc_root];
		struct stat sb;
		if (join(proc, sizeof proc, root, "/proc") && stat(proc, &sb) == 0 &&
		    S_ISDIR(sb.st_mode))
			memcpy(c->amd.proc_root, proc, sizeof proc);
	}
	c->amd.cards = gw_xcalloc(AMDGPU_MAX_CARDS, sizeof *c->amd.cards);
	c->amd.n = amdgpu_discover(c->amd.sys_root, c->amd.cards, AMDGPU_MAX_CARDS);
	if (c->amd.n > 0) {
		c->amd.nkfd = amdgpu_kfd_nodes(c->amd.sys_root, c->amd.kfd, AMDGPU_KFD_MAX_NODES);
		gpu_amd_driver_version(c, c->amd.driver, sizeof c->amd.driver);
		/* amd-smi only fills what the files lack: opened once there are cards */
		c->amd.smi =
		    amdsmi_lib_open_default(!c->amd.sim && !c->amd.sys_root[0], &c->amd.smi_fail);
	}
	return c->amd.n;
}

void gpu_amd_static(const gpu_ctx *c, int k, int index, gpu_static *st)
{
	amdgpu_static(&c->amd.cards[k], index, st);
	snprintf(st->vendor, sizeof st->vendor, "amd");
}

/* The scenario's GPU a card of the simulated tree stands for (-1: none). */
static int sim_gpu_of(const amd_sim *s, const amdgpu_card *card)
{
	for (int g = 0; g < s->scn->n_gpus; g++) {
		const sim_pci *p = &s->scn->gpus[g].pci;
		char bdf[16];
		snprintf(bdf, sizeof bdf, "%04x:%02x:%02x.%x", p->domain, p->bus, p->device,
		         p->function);
		if (s->scn->gpus[g].amd && !strcmp(bdf, card->bdf))
			return g;
	}
	return -1;
}

/* The card's files at the scenario time now, with `gpuwhy sim train`'s work on GPU index. */
static void sim_refresh(gpu_ctx *c, const amdgpu_card *card, int index)
{
	amd_sim *s = c->amd.sim;
	int g = s ? sim_gpu_of(s, card) : -1;
	if (g < 0)
		return;
	double t, real_s;
	sim_now(s, &t, &real_s);
	double window = s->scn->gpus[g].util_period > 0 ? s->scn->gpus[g].util_period : 1;
	sim_amdwl wl;
	sim_amdwl_read(s->state, (unsigned)index, gw_mono_ns(), window, &wl);
	pthread_mutex_lock(&s->mu);
	sim_amdfs_write(s->scn, g, s->root, t, real_s, false, &wl);
	klog_advance(s, t);
	pthread_mutex_unlock(&s->mu);
}

/* A card whose vendor file is gone has left the bus (or the driver let it go). */
static bool card_present(const amdgpu_card *card)
{
	char p[sizeof card->dev_path + 16];
	snprintf(p, sizeof p, "%s/vendor", card->dev_path);
	return access(p, R_OK) == 0;
}

/*
 * MI300 (gpu_metrics v1.6) has no throttle status, only residency counters:
 * its reasons are those whose counters advanced since this card's previous
 * sample. The first sample, and one after a reading without counters, has
 * none (n/a, not 0).
 */
static void residency_reasons(gpu_dev *d, amdgpu_values *a)
{
	uint64_t reasons, known;
	if (!a->ok[AMD_THROTTLE_REASONS] &&
	    amdgpu_residency_reasons(&d->amd_resid, &a->resid, &reasons, &known) && known) {
		a->v[AMD_THROTTLE_REASONS] = (double)reasons;
		a->ok[AMD_THROTTLE_REASONS] = 1;
		a->v[AMD_THROTTLE_KNOWN] = (double)known;
		a->ok[AMD_THROTTLE_KNOWN] = 1;
	}
	d->amd_resid = a->resid;
}

/* One reading; step: advance the card's residency state (the sampling thread alone does). */
static void amd_read(gpu_ctx *c, gpu_dev *d, gpu_values *o, bool step)
{
	sim_refresh(c, d->amd, d->st.index);
	/* A card the driver let go comes back when its reset succeeds (sysfs again). */
	bool present = card_present(d->amd);
	if (gpu_lost(d) == present)
		__atomic_store_n(&d->lost, !present, __ATOMIC_RELAXED);
	if (gpu_lost(d)) {
		memset(o->ok, 0, sizeof o->ok);
		o->lost = true;
		gpu_set(o, GM_INDEX, d->st.index);
		return;
	}
	amdgpu_values a;
	amdgpu_read(d->amd, &a);
	if (step)
		residency_reasons(d, &a);
	amdgpu_to_gpu_values(&d->st, &a, o);
	if (a.ok[AMD_VRAM_TOTAL])
		o->mem_total_b = (unsigned long long)a.v[AMD_VRAM_TOTAL];
	if (a.ok[AMD_VRAM_USED])
		o->mem_used_b = (unsigned long long)a.v[AMD_VRAM_USED];
	if (a.ok[AMD_VRAM_TOTAL] && a.ok[AMD_VRAM_USED])
		o->mem_free_b = o->mem_total_b > o->mem_used_b ? o->mem_total_b - o->mem_used_b : 0;
	if (c->amd.smi)
		amdsmi_fill(c->amd.smi, d->amd->bdf, o);
}

void gpu_amd_sample(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	amd_read(c, d, o, true);
}

int gpu_amd_read_memory(gpu_ctx *c, gpu_dev *d, gpu_memory *out)
{
	memset(out, 0, sizeof *out);
	gpu_values v;
	memset(&v, 0, sizeof v);
	/* not a sample: the residency interval stays the sampler's */
	amd_read(c, d, &v, false);
	if (v.lost)
		return NVML_ERROR_GPU_IS_LOST;
	if (!v.ok[GM_MEM_TOTAL] || !v.ok[GM_MEM_USED])
		return NVML_ERROR_NOT_SUPPORTED;
	out->total = v.mem_total_b;
	out->used = v.mem_used_b;
	out->free = v.mem_free_b;
	return 0;
}

/* The scenario's name and user for a simulated process on this card. */
static void sim_proc_names(const gpu_ctx *c, const amdgpu_card *card, gpu_proc *p)
{
	const amd_sim *s = c->amd.sim;
	int g = s ? sim_gpu_of(s, card) : -1;
	for (int k = 0; g >= 0 && k < s->scn->n_procs; k++) {
		const sim_fproc *f = &s->scn->procs[k];
		if (f->gpu != g || f->pid != p->pid)
			continue;
		p->sim = true;
		snprintf(p->sim_name, sizeof p->sim_name, "%s", f->name);
		snprintf(p->sim_user, sizeof p->sim_user, "%s", f->user);
	}
}

/* A process's engine time at the previous call, or false when it had none. */
static bool prev_busy(const gpu_dev *d, unsigned pid, uint64_t *ns)
{
	for (int k = 0; k < d->amd_nprev; k++)
		if (d->amd_prev[k].pid == pid) {
			*ns = d->amd_prev[k].busy_ns;
			return true;
		}
	return false;
}

/*
 * Add what the KFD accounts on this card to the fdinfo processes out[0..n):
 * the VRAM of processes fdinfo does not show (another user's) and that hold
 * some here, and the VRAM of those whose fdinfo gives none. Scratch holds cap entries. Returns the
 * new count.
 */
static int add_kfd_procs(gpu_ctx *c, gpu_dev *d, amdgpu_proc *scratch, int cap, gpu_proc *out,
                         int n, int max)
{
	int nk = amdgpu_kfd_procs_read(c->amd.sys_root, c->amd.kfd, c->amd.nkfd, scratch, cap);
	for (int k = 0; k < nk; k++) {
		const amdgpu_proc *a = &scratch[k];
		if (strcasecmp(a->pdev, d->amd->bdf) != 0)
			continue;
		int i = 0;
		while (i < n && out[i].pid != a->pid)
			i++;
		/* ROCm opens every GPU it may use: none held there means not on it */
		if (i == n && (n == max || a->vram_bytes == 0))
			continue;
		gpu_proc *p = &out[i];
		if (i == n) {
			memset(p, 0, sizeof *p);
			p->pid = a->pid;
			p->type = GPU_PROC_COMPUTE; /* the KFD accounts compute (ROCm) processes */
			sim_proc_names(c, d->amd, p);
			n++;
		}
		if (!p->mem_ok) {
			p->mem_ok = true;
			p->mem_bytes = a->vram_bytes;
		}
	}
	return n;
}

/*
 * Processes from DRM fdinfo on this card, then from the KFD (above). Their utilization is the
 * change of drm-engine-gfx + drm-engine-compute over the time since the previous call: the first
 * call (or a process first seen) has none.
 */
int gpu_amd_processes(gpu_ctx *c, gpu_dev *d, gpu_proc *out, int max)
{
	if (gpu_lost(d))
		return -1;
	int cap = 256;
	amdgpu_proc *all = gw_xcalloc((size_t)cap, sizeof *all);
	int na = amdgpu_procs_read(c->amd.proc_root, all, cap);
	int64_t now = gw_mono_ns();
	double dt = d->amd_prev_t ? (double)(now - d->amd_prev_t) : 0;
	gpu_amd_prev next[GPU_AMD_PROC_PREV] = {{0, 0}};
	int nn = 0, n = 0;
	for (int k = 0; k < na && n < max; k++) {
		const amdgpu_proc *a = &all[k];
		if (strcasecmp(a->pdev, d->amd->bdf) != 0)
			continue;
		gpu_proc *p = &out[n++];
		memset(p, 0, sizeof *p);
		p->pid = a->pid;
		p->type = a->gfx_ok && a->gfx_ns ? GPU_PROC_GRAPHICS : 0;
		p->type |= a->compute_ok && a->compute_ns ? GPU_PROC_COMPUTE : 0;
		if (!p->type)
			p->type = GPU_PROC_COMPUTE;
		p->mem_ok = a->vram_ok;
		p->mem_bytes = a->vram_bytes;
		uint64_t busy = (a->gfx_ok ? a->gfx_ns : 0) + (a->compute_ok ? a->compute_ns : 0),
		         was;
		if ((a->gfx_ok || a->compute_ok) && dt > 0 && prev_busy(d, a->pid, &was) &&
		    busy >= was) {
			double pct = 100.0 * (double)(busy - was) / dt;
			p->util_ok = p->util_sampled = true;
			p->sm_pct = (unsigned)(pct > 100 ? 100 : pct + 0.5);
		}
		if (nn < GPU_AMD_PROC_PREV)
			next[nn++] = (gpu_amd_prev){a->pid, busy};
		sim_proc_names(c, d->amd, p);
	}
	n = add_kfd_procs(c, d, all, cap, out, n, max);
	free(all);
	memcpy(d->amd_prev, next, (size_t)nn * sizeof *next);
	d->amd_nprev = nn;
	d->amd_prev_t = now;
	return n;
}

void gpu_amd_driver_version(const gpu_ctx *c, char *buf, size_t len)
{
	buf[0] = '\0';
	if (c->amd.sim) {
		snprintf(buf, len, "amdgpu (simulated)");
		return;
	}
	char p[600];
	snprintf(p, sizeof p, "%s/sys/module/amdgpu/version", c->amd.sys_root);
	FILE *f = fopen(p, "r");
	if (f) {
		if (fgets(buf, (int)len, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	struct utsname u;
	/* in-tree amdgpu has no version of its own: the kernel's release is its version */
	if (!buf[0] && !c->amd.sys_root[0] && uname(&u) == 0)
		snprintf(buf, len, "%s", u.release);
}

const char *gpu_amdsmi_note(const gpu_ctx *c, char *buf, size_t len)
{
	buf[0] = '\0';
	const amdsmi_lib *l = c->amd.smi;
	if (l)
		snprintf(buf, len, "%s: version %s, %d %s", amdsmi_lib_name(l),
		         amdsmi_lib_version(l), amdsmi_lib_gpus(l),
		         amdsmi_lib_gpus(l) == 1 ? "GPU" : "GPUs");
	else if (c->amd.smi_fail.code)
		gw_fail_text(&c->amd.smi_fail, buf, len);
	return buf;
}

void gpu_amd_close(gpu_ctx *c)
{
	amdsmi_lib_close(c->amd.smi);
	c->amd.smi = NULL;
	amd_sim *s = c->amd.sim;
	if (s) {
		rm_tree(s->root);
		sim_scenario_free(s->scn);
		pthread_mutex_destroy(&s->mu);
		free(s);
		c->amd.sim = NULL;
	}
	free(c->amd.cards);
	c->amd.cards = NULL;
	c->amd.n = 0;
}

bool gpu_sim_kernel_log(const gpu_ctx *c, char *path, size_t len)
{
	const amd_sim *s = c->amd.sim;
	snprintf(path, len, "%s", s ? s->klog : "");
	return c->amd.simulated;
}

bool gpu_sim_amd_tree(char *root, size_t len)
{
	const char *path = scenario_path();
	char err[512], state[PATH_MAX];
	sim_scenario *scn;
	root[0] = '\0';
	if (!path || sim_scenario_load(path, &scn, err, sizeof err) != 0)
		return false;
	amd_sim s = {.scn = scn};
	read_pin(&s);
	bool ok =
	    scenario_has_amd(scn) && sim_state_dir(path, state, sizeof state, err, sizeof err) == 0;
	if (ok) {
		double t = 0, real_s = 0;
		if (s.pinned || sim_clock_read(state, &s.epoch) == 0)
			sim_now(&s, &t, &real_s);
		ok = write_tree(scn, state, root, len, t, real_s);
		if (!ok && root[0])
			rm_tree(root);
	}
	if (!ok)
		root[0] = '\0';
	sim_scenario_free(scn);
	return ok;
}

void gpu_sim_amd_tree_remove(const char *root)
{
	if (root && *root)
		rm_tree(root);
}

char *gpu_sim_kernel_log_text(void)
{
	const char *path = scenario_path();
	char err[512], state[PATH_MAX];
	sim_scenario *scn;
	if (!path || sim_scenario_load(path, &scn, err, sizeof err) != 0)
		return NULL;
	amd_sim s = {.scn = scn};
	read_pin(&s);
	double t = 0, real_s;
	if (s.pinned || (sim_state_dir(path, state, sizeof state, err, sizeof err) == 0 &&
	                 sim_clock_read(state, &s.epoch) == 0))
		sim_now(&s, &t, &real_s);
	char *text = sim_amdkmsg_text(scn, -1, t);
	sim_scenario_free(scn);
	return text;
}
