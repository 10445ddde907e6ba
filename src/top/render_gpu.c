/* render_gpu.c - top's GPU panel: one meter block per GPU, and the utilization history. */
#include "top/render_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/i18n.h"
#include "util/textwidth.h"

/* ------------------------------------------------------------------ GPUs */

/*
 * Words of a name that say least about which GPU it is: the vendor every GPU
 * shares, then product lines ("GeForce RTX 4090" says more as "RTX 4090" than
 * as "GeForce RTX").
 */
static const char *const name_brands[] = {"NVIDIA", "GeForce", "Tesla", "Quadro"};

static bool is_brand(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof name_brands / sizeof *name_brands; i++)
		if (strlen(name_brands[i]) == n && !strncmp(s, name_brands[i], n))
			return true;
	return false;
}

void top_r_gpu_name(char *out, size_t len, const char *name, int cols)
{
	if (!len)
		return;
	snprintf(out, len, "%s", name);
	/* the vendor prefix always goes: every GPU here has it */
	if (!strncmp(out, "NVIDIA ", 7))
		memmove(out, out + 7, strlen(out + 7) + 1);
	for (;;) {
		size_t n = strcspn(out, " ");
		if (gw_text_width(out) <= cols || !out[n] || !is_brand(out, n))
			break;
		memmove(out, out + n + 1, strlen(out + n + 1) + 1);
	}
	/* then whole words (or parts of "A100-SXM4-80GB") from the end, never part of one */
	while (gw_text_width(out) > cols) {
		char *cut = strrchr(out, ' '), *dash = strrchr(out, '-');
		if (!cut || (dash && dash > cut))
			cut = dash;
		if (!cut) {
			out[0] = '\0';
			break;
		}
		*cut = '\0';
	}
}

static double power_limit(const gpu_values *v)
{
	if (v->ok[GM_POWER_ENFORCED_LIMIT] && v->v[GM_POWER_ENFORCED_LIMIT] > 0)
		return v->v[GM_POWER_ENFORCED_LIMIT];
	if (v->ok[GM_POWER_LIMIT] && v->v[GM_POWER_LIMIT] > 0)
		return v->v[GM_POWER_LIMIT];
	return NAN;
}

static double ratio(const gpu_values *v, gpu_metric_id a, gpu_metric_id b)
{
	if (!v->ok[a] || !v->ok[b] || v->v[b] <= 0)
		return NAN;
	return v->v[a] / v->v[b];
}

static double val(const gpu_values *v, gpu_metric_id id)
{
	return v->ok[id] ? v->v[id] : NAN;
}

static void fmt_pct(double v, char *out, size_t len)
{
	if (isnan(v))
		snprintf(out, len, "n/a");
	else
		top_r_fmt_f0(out, len, "%3.0f%%", v);
}

static void fmt_mem_pair(const gpu_values *v, char *out, size_t len)
{
	char a[16], b[16];
	top_r_fmt_mib(val(v, GM_MEM_USED), a, sizeof a);
	top_r_fmt_mib(val(v, GM_MEM_TOTAL), b, sizeof b);
	/* Padded, so the fields after it line up from GPU to GPU. */
	snprintf(out, len, "%5s/%s", a, b);
}

static void fmt_power(const gpu_values *v, char *out, size_t len)
{
	char a[16], b[16];
	top_r_fmt_num(v, GM_POWER_DRAW, "%.0f", a, sizeof a);
	double lim = power_limit(v);
	/* the unit goes with a value, never with n/a (an APU's power has no cap) */
	if (isnan(lim)) {
		snprintf(out, len, v->ok[GM_POWER_DRAW] ? "%3sW/n/a" : "%3s", a);
		return;
	}
	top_r_fmt_f0(b, sizeof b, "%.0f", lim);
	snprintf(out, len, "%3s/%sW", a, b);
}

/* "Gen5x16", or "Gen3x8<Gen5x16" when the link trained below its maximum. */
static bool fmt_link(const gpu_values *v, char *out, size_t len)
{
	char g[8], w[8], gm[8], wm[8];
	top_r_fmt_num(v, GM_PCIE_GEN_CUR, "%.0f", g, sizeof g);
	top_r_fmt_num(v, GM_PCIE_WIDTH_CUR, "%.0f", w, sizeof w);
	bool down = (v->ok[GM_PCIE_GEN_CUR] && v->ok[GM_PCIE_GEN_MAX] &&
	             v->v[GM_PCIE_GEN_CUR] < v->v[GM_PCIE_GEN_MAX]) ||
	            (v->ok[GM_PCIE_WIDTH_CUR] && v->ok[GM_PCIE_WIDTH_MAX] &&
	             v->v[GM_PCIE_WIDTH_CUR] < v->v[GM_PCIE_WIDTH_MAX]);
	if (down) {
		top_r_fmt_num(v, GM_PCIE_GEN_MAX, "%.0f", gm, sizeof gm);
		top_r_fmt_num(v, GM_PCIE_WIDTH_MAX, "%.0f", wm, sizeof wm);
		snprintf(out, len, "Gen%sx%s<Gen%sx%s", g, w, gm, wm);
	} else {
		snprintf(out, len, "Gen%sx%s", g, w);
	}
	return down;
}

static void fmt_pcie_io(const gpu_values *v, char *out, size_t len)
{
	char rx[16], tx[16];
	top_r_fmt_rate(v->ok[GM_PCIE_RX] ? v->v[GM_PCIE_RX] * 1048576.0 : NAN, rx, sizeof rx);
	top_r_fmt_rate(v->ok[GM_PCIE_TX] ? v->v[GM_PCIE_TX] * 1048576.0 : NAN, tx, sizeof tx);
	snprintf(out, len, "rx %s/s tx %s/s", rx, tx);
}

/* The clock event reasons in the driver's words, as status shows them. */
static void fmt_reasons(const gpu_values *v, char *out, size_t len)
{
	if (!v->ok[GM_CLK_REASONS]) {
		snprintf(out, len, "n/a");
		return;
	}
	gpu_reasons_display((uint64_t)v->v[GM_CLK_REASONS], out, len);
}

static bool reasons_bad(const gpu_values *v)
{
	static const gpu_metric_id bad[] = {GM_CLK_R_HW_SLOW, GM_CLK_R_HW_THERMAL,
	                                    GM_CLK_R_HW_POWER_BRAKE, GM_CLK_R_SW_THERMAL};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (v->ok[bad[i]] && v->v[bad[i]] >= 0.5)
			return true;
	return false;
}

static top_style temp_style(const gpu_values *v)
{
	if (!v->ok[GM_TEMP_GPU])
		return TOP_S_DIM;
	double slow = v->ok[GM_TEMP_SLOWDOWN] ? v->v[GM_TEMP_SLOWDOWN] : 85;
	return v->v[GM_TEMP_GPU] >= slow        ? TOP_S_HIGH
	       : v->v[GM_TEMP_GPU] >= slow - 10 ? TOP_S_MID
	                                        : TOP_S_NORMAL;
}

/* One line per GPU: everything that fits, most important first. */
static void gpu_compact(top_rctx *x, top_rect r, int y, int g, const gpu_values *v)
{
	const top_gpu_info *gi = &x->f->m->gpu[g];
	top_line l = top_r_line_at(x, r, r.x, y);
	char buf[64], val_s[32];
	snprintf(buf, sizeof buf, "%2d", gi->index);
	top_r_text(&l, TOP_S_ACCENT, buf);
	double util = val(v, GM_UTIL_GPU);
	fmt_pct(util, val_s, sizeof val_s);
	top_r_bar_field(&l, 1, "", 10, util / 100, TOP_S_OK, top_r_st_of(val_s, TOP_S_NORMAL),
	                val_s);
	if (v->ok[GM_GPM_SM_ACTIVE]) {
		top_r_fmt_f0(buf, sizeof buf, "%3.0f%%", v->v[GM_GPM_SM_ACTIVE]);
		top_r_pair(&l, 1, _("sm"), TOP_S_NORMAL, buf);
	}
	double mf = ratio(v, GM_MEM_USED, GM_MEM_TOTAL);
	fmt_mem_pair(v, buf, sizeof buf);
	top_r_bar_field(&l, 1, TOP_C_("GPU memory", "mem"), 5, mf,
	                top_r_load_style(mf * 100, 80, 95), top_r_st_of(buf, TOP_S_NORMAL), buf);
	fmt_power(v, buf, sizeof buf);
	top_r_pair(&l, 1, "",
	           top_r_load_style(100 * val(v, GM_POWER_DRAW) / power_limit(v), 90, 100), buf);
	top_r_fmt_num(v, GM_TEMP_GPU, "%.0fC", buf, sizeof buf);
	top_r_pair(&l, 1, "", temp_style(v), buf);
	top_r_fmt_num(v, GM_CLK_SM, "%4.0fMHz", buf, sizeof buf);
	top_r_pair(&l, 1, "", reasons_bad(v) ? TOP_S_HIGH : top_r_st_of(buf, TOP_S_NORMAL), buf);
	bool down = fmt_link(v, buf, sizeof buf);
	top_r_pair(&l, 1, "", down ? TOP_S_MID : TOP_S_NORMAL, buf);
	fmt_pcie_io(v, buf, sizeof buf);
	top_r_pair(&l, 1, "", TOP_S_NORMAL, buf);
	/* last on the line: whatever words of the name the room left */
	char name[sizeof gi->name];
	top_r_gpu_name(name, sizeof name, gi->name, top_r_room(&l) - 1);
	if (name[0])
		top_r_pair(&l, 1, "", TOP_S_DIM, name);
}

static void gpu_full(top_rctx *x, top_rect r, int y, int rows, int g, const gpu_values *v)
{
	const top_gpu_info *gi = &x->f->m->gpu[g];
	char buf[96], vs[48];
	/* line 1: identity, util, SM active, memory */
	top_line l = top_r_line_at(x, r, r.x, y);
	snprintf(buf, sizeof buf, "GPU %d", gi->index);
	top_r_text(&l, TOP_S_ACCENT, buf);
	/* Narrow blocks: shorter name and bars, SM active as a number. */
	bool wide = r.w >= 100;
	char name[sizeof gi->name];
	top_r_gpu_name(name, sizeof name, gi->name, wide ? 16 : 12);
	buf[0] = ' ';
	gw_text_cell(buf + 1, sizeof buf - 1, name, wide ? 16 : 12, GW_ALIGN_LEFT, NULL);
	top_r_text(&l, TOP_S_DIM, buf);
	int bw = r.w >= 110 ? 14 : wide ? 10 : 8;
	double util = val(v, GM_UTIL_GPU);
	fmt_pct(util, vs, sizeof vs);
	/* MIG on: no whole-GPU utilization exists; say why instead of a bare n/a */
	if (gi->nmig > 0 && !v->ok[GM_UTIL_GPU])
		snprintf(vs, sizeof vs, "MIG");
	top_r_bar_field(&l, 1, _("util"), bw, util / 100, TOP_S_OK, top_r_st_of(vs, TOP_S_NORMAL),
	                vs);
	double sm = val(v, GM_GPM_SM_ACTIVE);
	fmt_pct(sm, vs, sizeof vs);
	if (wide)
		top_r_bar_field(&l, 2, "SM", bw / 2, sm / 100, TOP_S_OK,
		                top_r_st_of(vs, TOP_S_NORMAL), vs);
	else
		top_r_pair(&l, 2, "SM", top_r_st_of(vs, TOP_S_NORMAL), vs);
	double mf = ratio(v, GM_MEM_USED, GM_MEM_TOTAL);
	fmt_mem_pair(v, vs, sizeof vs);
	top_r_bar_field(&l, 2, TOP_C_("GPU memory", "mem"), bw, mf,
	                top_r_load_style(mf * 100, 80, 95), top_r_st_of(vs, TOP_S_NORMAL), vs);
	if (rows < 2)
		return;
	/* line 2: power, temperature, clocks, PCIe */
	l = top_r_line_at(x, r, r.x + 6, y + 1);
	double lim = power_limit(v), pw = val(v, GM_POWER_DRAW);
	fmt_power(v, vs, sizeof vs);
	top_r_bar_field(&l, 0, _("pwr"), bw / 2, pw / lim,
	                top_r_load_style(100 * pw / lim, 90, 100), top_r_st_of(vs, TOP_S_NORMAL),
	                vs);
	top_r_fmt_num(v, GM_TEMP_GPU, "%.0fC", vs, sizeof vs);
	top_r_pair(&l, 2, _("temp"), temp_style(v), vs);
	char a[16], b[16];
	top_r_fmt_num(v, GM_CLK_SM, "%4.0f", a, sizeof a);
	top_r_fmt_num(v, GM_CLK_MAX_SM, "%.0f", b, sizeof b);
	snprintf(vs, sizeof vs, "%s/%sMHz", a, b);
	top_r_pair(&l, 2, _("sm clk"), reasons_bad(v) ? TOP_S_HIGH : top_r_st_of(vs, TOP_S_NORMAL),
	           vs);
	bool down = fmt_link(v, vs, sizeof vs);
	top_r_pair(&l, 2, "PCIe", down ? TOP_S_MID : TOP_S_NORMAL, vs);
	fmt_pcie_io(v, vs, sizeof vs);
	top_r_pair(&l, 1, "", TOP_S_NORMAL, vs);
	top_r_fmt_num(v, GM_CLK_MEM, "%.0fMHz", vs, sizeof vs);
	top_r_pair(&l, 2, _("mem clk"), top_r_st_of(vs, TOP_S_NORMAL), vs);
	if (rows < 3)
		return;
	/* line 3: state and reasons, fan, ECC, codecs */
	l = top_r_line_at(x, r, r.x + 6, y + 2);
	top_r_fmt_num(v, GM_PSTATE, "P%.0f", vs, sizeof vs);
	top_r_pair(&l, 0, _("pstate"), top_r_st_of(vs, TOP_S_NORMAL), vs);
	fmt_reasons(v, buf, sizeof buf);
	top_r_pair(&l, 2, _("clocks held by"),
	           reasons_bad(v) ? TOP_S_HIGH : top_r_st_of(buf, TOP_S_NORMAL), buf);
	top_r_fmt_num(v, GM_FAN, "%.0f%%", vs, sizeof vs);
	top_r_pair(&l, 2, _("fan"), top_r_st_of(vs, TOP_S_NORMAL), vs);
	top_r_fmt_num(v, GM_ECC_UNCORR_VOL, "%.0f", vs, sizeof vs);
	bool ecc = v->ok[GM_ECC_UNCORR_VOL] && v->v[GM_ECC_UNCORR_VOL] > 0;
	top_r_pair(&l, 2, _("ECC uncorr"), ecc ? TOP_S_HIGH : top_r_st_of(vs, TOP_S_NORMAL), vs);
	top_r_fmt_num(v, GM_PCIE_REPLAY, "%.0f", vs, sizeof vs);
	top_r_pair(&l, 2, _("replays"), top_r_st_of(vs, TOP_S_NORMAL), vs);
	if (gi->nmig > 0) {
		/* MIG on: the driver has no whole-GPU utilization (util shows n/a) */
		snprintf(vs, sizeof vs,
		         P_("%d instance, no GPU util", "%d instances, no GPU util", gi->nmig),
		         gi->nmig);
		top_r_pair(&l, 2, "MIG", TOP_S_MID, vs);
	}
	if (rows < 4)
		return;
	/* line 4: where it sits, and its MIG instances */
	l = top_r_line_at(x, r, r.x + 6, y + 3);
	/* TRANSLATORS: the PCI bus id follows */
	top_r_pair(&l, 0, _("bus"), TOP_S_DIM, gi->pci_bus_id[0] ? gi->pci_bus_id : "n/a");
	if (gi->nmig > 0)
		top_r_pair(&l, 2, "MIG", TOP_S_DIM, gi->mig);
	else
		top_r_pair(&l, 2, "", TOP_S_DIM, gi->uuid[0] ? gi->uuid : "n/a");
}

/* Every value gpu_full and gpu_compact read: a block whose values are all the same is kept. */
static const gpu_metric_id key_metrics[] = {
    GM_UTIL_GPU,
    GM_GPM_SM_ACTIVE,
    GM_MEM_USED,
    GM_MEM_TOTAL,
    GM_POWER_DRAW,
    GM_POWER_ENFORCED_LIMIT,
    GM_POWER_LIMIT,
    GM_TEMP_GPU,
    GM_TEMP_SLOWDOWN,
    GM_CLK_SM,
    GM_CLK_MAX_SM,
    GM_CLK_MEM,
    GM_PCIE_GEN_CUR,
    GM_PCIE_GEN_MAX,
    GM_PCIE_WIDTH_CUR,
    GM_PCIE_WIDTH_MAX,
    GM_PCIE_RX,
    GM_PCIE_TX,
    GM_CLK_REASONS,
    GM_CLK_R_HW_SLOW,
    GM_CLK_R_HW_THERMAL,
    GM_CLK_R_HW_POWER_BRAKE,
    GM_CLK_R_SW_THERMAL,
    GM_PSTATE,
    GM_FAN,
    GM_ECC_UNCORR_VOL,
    GM_PCIE_REPLAY,
};
#define NKEY (int)(sizeof key_metrics / sizeof *key_metrics)
_Static_assert(sizeof key_metrics / sizeof *key_metrics <= TOP_GPU_KEY_N,
               "TOP_GPU_KEY_N holds every value a GPU block shows");

bool top_r_gpu_metric_drawn(gpu_metric_id id)
{
	for (int i = 0; i < NKEY; i++)
		if (key_metrics[i] == id)
			return true;
	return false;
}

enum { BLOCK_WAITING, BLOCK_LOST, BLOCK_METERS };

static top_gpu_key key_of(int g, int kind, const gpu_values *v)
{
	top_gpu_key k;
	memset(&k, 0, sizeof k); /* padding too: keys compare with memcmp */
	k.g = g;
	k.kind = kind;
	if (kind == BLOCK_METERS)
		for (int i = 0; i < NKEY; i++) {
			k.ok[i] = v->ok[key_metrics[i]];
			k.v[i] = k.ok[i] ? v->v[key_metrics[i]] : 0;
		}
	return k;
}

/*
 * Whether block i must be drawn: always without a memo, else when what it
 * shows changed (it is then blanked first). Records the new key.
 */
static bool block_changed(top_rctx *x, int i, const top_gpu_key *k, top_rect block)
{
	top_render_memo *memo = x->f->memo;
	if (!memo)
		return true;
	bool same = x->keep && i < memo->ngpu && !memcmp(&memo->gpu[i], k, sizeof *k);
	memo->gpu[i] = *k;
	if (same) {
		memo->kept++;
		return false;
	}
	memo->redrawn++;
	if (x->keep)
		top_fill(x->c, block, TOP_S_NORMAL, L' ');
	return true;
}

/* The GPU positions on screen, in order: the shown ones that fit. */
static int visible_gpus(const top_frame *f, int *pos)
{
	int n = 0;
	for (int g = 0; g < f->m->ngpu && n < f->L->gpus_shown; g++)
		if (f->m->shown_gpu[g])
			pos[n++] = g;
	return n;
}

void top_r_gpus(top_rctx *x)
{
	const top_frame *f = x->f;
	top_rect r = f->L->p[TOP_P_GPUS];
	const snapshot *s = top_model_shown(f->m);
	int pos[GPU_MAX], n = f->m->ngpu ? visible_gpus(f, pos) : 0;
	if (f->memo && (!x->keep || f->memo->ngpu != n || n == 0)) {
		/* Another set of blocks: all of them again. */
		top_r_blank(x, TOP_P_GPUS);
		f->memo->ngpu = 0;
	}
	if (f->m->ngpu == 0) {
		top_r_text(&(top_line){x, r, r.x, r.y, false}, TOP_S_DIM,
		           f->no_gpu ? f->no_gpu : _("no GPU: showing the host only"));
		return;
	}
	if (n == 0) {
		top_r_text(&(top_line){x, r, r.x, r.y, false}, TOP_S_DIM,
		           _("no GPU selected (g, then 'all')"));
		return;
	}
	int gh = f->L->gpu_rows;
	for (int i = 0; i < n; i++) {
		int g = pos[i], y = r.y + i * gh;
		bool have = s && g < s->ngpu;
		const gpu_values *v = have ? &s->gpu[g] : NULL;
		int kind = !have ? BLOCK_WAITING : v->lost ? BLOCK_LOST : BLOCK_METERS;
		top_gpu_key k = key_of(g, kind, v);
		top_rect block = {r.x, y, r.w, y + gh <= r.y + r.h ? gh : r.y + r.h - y};
		if (!block_changed(x, i, &k, block))
			continue;
		if (kind == BLOCK_WAITING) {
			top_line l = top_r_line_at(x, r, r.x, y);
			char buf[64];
			snprintf(buf, sizeof buf, _("GPU %d  waiting for the first sample"),
			         f->m->gpu[g].index);
			top_r_text(&l, TOP_S_DIM, buf);
			continue;
		}
		if (kind == BLOCK_LOST) {
			top_line l = top_r_line_at(x, r, r.x, y);
			char buf[192];
			/* Xid is NVIDIA's word: an AMD card is worded from what amdgpu logs */
			bool amd = !strcmp(f->m->gpu[g].vendor, "amd");
			snprintf(buf, sizeof buf,
			         amd ? _("GPU %d  LOST: the card is gone; check the kernel log for "
			                 "amdgpu resets")
			             : _("GPU %d  LOST: fell off the bus; check the kernel log for "
			                 "Xid 79"),
			         f->m->gpu[g].index);
			top_r_text(&l, TOP_S_ERR, buf);
			continue;
		}
		if (gh == 1)
			gpu_compact(x, r, y, g, v);
		else
			gpu_full(x, r, y, gh, g, v);
	}
	if (f->memo)
		f->memo->ngpu = n;
}

/* The one character of a glyph (the graph's levels are one column each, our own UTF-8). */
static wchar_t glyph_char(const char *glyph)
{
	const unsigned char *p = (const unsigned char *)glyph;
	if (p[0] < 0x80)
		return p[0];
	if ((p[0] & 0xe0) == 0xc0)
		return (wchar_t)((p[0] & 0x1fu) << 6 | (p[1] & 0x3fu));
	if ((p[0] & 0xf0) == 0xe0)
		return (wchar_t)((p[0] & 0x0fu) << 12 | (p[1] & 0x3fu) << 6 | (p[2] & 0x3fu));
	return L'?';
}

/* Utilization history: one column per sample, the newest on the right. */
static void draw_history(top_rctx *x, top_rect area, int g, const wchar_t *level)
{
	const top_model *m = x->f->m;
	int rows = area.h;
	for (int k = 0; k < area.w; k++) {
		double u;
		if (!top_model_util(m, k, g, &u))
			break;
		int col = area.x + area.w - 1 - k;
		if (isnan(u)) {
			/* Absent is not 0 %: a dim dot on the base line. */
			top_put(x->c, area, col, area.y + rows - 1, TOP_S_DIM, x->g->dot);
			continue;
		}
		u = u < 0 ? 0 : u > 100 ? 100 : u;
		int total = (int)lround(u / 100.0 * rows * 8);
		/* Above the column the cells stay blank (and unstyled: a styled blank
		 * looks the same but would count as a change on the next frame). */
		for (int r = 0; r < rows && total - r * 8 > 0; r++) {
			int fill = total - r * 8;
			fill = fill > 8 ? 8 : fill;
			top_putw(x->c, area, col, area.y + rows - 1 - r, TOP_S_OK, level[fill]);
		}
	}
}

void top_r_graph(top_rctx *x)
{
	const top_frame *f = x->f;
	top_rect r = f->L->p[TOP_P_GRAPH];
	if (!r.w || !r.h)
		return;
	int pos[GPU_MAX], n = visible_gpus(f, pos);
	int each = f->L->graph_rows;
	/* The canvas holds the glyphs as wide characters: decode them once, not per cell. */
	wchar_t level[9];
	for (int i = 0; i < 9; i++)
		level[i] = glyph_char(x->g->level[i]);
	for (int i = 0; i < n; i++) {
		top_rect area = {r.x + 1, r.y + i * each, r.w - 1, each};
		if (!f->L->graph_beside) {
			char lab[16];
			snprintf(lab, sizeof lab, "%2d ", f->m->gpu[pos[i]].index);
			top_put(x->c, r, r.x, area.y, TOP_S_DIM, lab);
			area.x = r.x + 3;
			area.w = r.w - 3;
		}
		if (area.h > r.y + r.h - area.y)
			area.h = r.y + r.h - area.y;
		draw_history(x, area, pos[i], level);
	}
}
