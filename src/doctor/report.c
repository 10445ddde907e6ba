/* report.c - doctor results: collecting, printing as text or JSON, the exit code. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/doctor.h"
#include "util/i18n.h"
#include "util/jsonw.h"
#include "util/xalloc.h"

const char *dr_status_name(dr_status s)
{
	switch (s) {
	case DR_PASS:
		return "PASS";
	case DR_WARN:
		return "WARN";
	case DR_FAIL:
		return "FAIL";
	default:
		return "SKIP";
	}
}

static bool dr_translate;

void dr_set_translate(bool on)
{
	dr_translate = on;
}

const char *dr_tr(const char *msgid)
{
	return dr_translate ? _(msgid) : msgid;
}

/* A format of bare "%s" directives glues pieces translated one by one. */
static const char *format_tr(const char *fmt)
{
	const char *p = fmt;
	while (p[0] == '%' && p[1] == 's')
		p += 2;
	return *p ? dr_tr(fmt) : fmt;
}

const char *dr_ntr(const char *one, const char *many, unsigned long n)
{
	return dr_translate ? P_(one, many, n) : n == 1 ? one : many;
}

/* The status word of text output (JSON keeps dr_status_name's). */
static const char *status_text(dr_status s)
{
	switch (s) {
	case DR_PASS:
		return DR_("PASS");
	case DR_WARN:
		return DR_("WARN");
	case DR_FAIL:
		return DR_("FAIL");
	default:
		return DR_("SKIP");
	}
}

static char *vformat(const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	return s;
}

dr_result *dr_addf(dr_report *r, const char *check, dr_status st, const char *found_fmt, ...)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		dr_result *v = gw_xrealloc(r->v, cap * sizeof *v);
		r->v = v;
		r->cap = cap;
	}
	dr_result *res = &r->v[r->n++];
	memset(res, 0, sizeof *res);
	snprintf(res->check, sizeof res->check, "%s", check);
	res->status = st;
	va_list ap;
	va_start(ap, found_fmt);
	res->found = vformat(format_tr(found_fmt), ap);
	va_end(ap);
	if (!res->found)
		res->found = strdup("");
	return res;
}

void dr_fixf(dr_result *res, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = vformat(format_tr(fmt), ap);
	va_end(ap);
	free(res->fix);
	res->fix = s;
}

void dr_report_free(dr_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].found);
		free(r->v[i].fix);
	}
	free(r->v);
	memset(r, 0, sizeof *r);
}

int dr_exit_code(const dr_report *r)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].status == DR_FAIL)
			return 1;
	return 0;
}

void dr_print_text(FILE *f, const dr_report *r, bool color)
{
	static const char *colors[] = {"\033[32m", "\033[33m", "\033[1;31m", "\033[2m"};
	int counts[4] = {0};
	size_t width = 0;
	for (size_t i = 0; i < r->n; i++)
		if (strlen(r->v[i].check) > width)
			width = strlen(r->v[i].check);
	for (size_t i = 0; i < r->n; i++) {
		const dr_result *x = &r->v[i];
		counts[x->status]++;
		if (color)
			fprintf(f, "%s%s\033[0m", colors[x->status], status_text(x->status));
		else
			fputs(status_text(x->status), f);
		fprintf(f, "  %-*s  %s", (int)width, x->check, x->found);
		if (x->fix && *x->fix)
			fprintf(f, DR_("  fix: %s"), x->fix);
		fputc('\n', f);
	}
	fputc('\n', f);
	fprintf(f,
	        DR_P("%zu check: %d FAIL, %d WARN, %d PASS, %d SKIP\n",
	             "%zu checks: %d FAIL, %d WARN, %d PASS, %d SKIP\n", r->n),
	        r->n, counts[DR_FAIL], counts[DR_WARN], counts[DR_PASS], counts[DR_SKIP]);
}

void dr_print_json(FILE *f, const dr_report *r)
{
	jsonw w;
	jsonw_init(&w, f, true);
	jsonw_arr_begin(&w);
	for (size_t i = 0; i < r->n; i++) {
		const dr_result *x = &r->v[i];
		jsonw_obj_begin(&w);
		jsonw_key(&w, "check");
		jsonw_str(&w, x->check);
		jsonw_key(&w, "status");
		jsonw_str(&w, dr_status_name(x->status));
		jsonw_key(&w, "found");
		jsonw_str(&w, x->found);
		jsonw_key(&w, "fix");
		jsonw_str(&w, x->fix && *x->fix ? x->fix : NULL);
		jsonw_obj_end(&w);
	}
	jsonw_arr_end(&w);
	fputc('\n', f);
}
