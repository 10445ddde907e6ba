/* report.c - doctor results: collecting, printing as text or JSON, the exit code. */
#include <stdbool.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/report.h"
#include "util/i18n.h"
#include "util/jsonw.h"
#include "util/xalloc.h"

const char *doctor_status_name(doctor_status s)
{
	switch (s) {
	case DOCTOR_PASS:
		return "PASS";
	case DOCTOR_WARN:
		return "WARN";
	case DOCTOR_FAIL:
		return "FAIL";
	default:
		return "SKIP";
	}
}

static bool doctor_translate;

void doctor_set_translate(bool on)
{
	doctor_translate = on;
}

const char *doctor_tr(const char *msgid)
{
	return doctor_translate ? _(msgid) : msgid;
}

/* A format of bare "%s" directives glues pieces translated one by one. */
static const char *format_tr(const char *fmt)
{
	const char *p = fmt;
	while (p[0] == '%' && p[1] == 's')
		p += 2;
	return *p ? doctor_tr(fmt) : fmt;
}

const char *doctor_ntr(const char *one, const char *many, unsigned long n)
{
	return doctor_translate ? P_(one, many, n) : n == 1 ? one : many;
}

/* The status word of text output (JSON keeps doctor_status_name's). */
static const char *status_text(doctor_status s)
{
	switch (s) {
	case DOCTOR_PASS:
		return DOCTOR_("PASS");
	case DOCTOR_WARN:
		return DOCTOR_("WARN");
	case DOCTOR_FAIL:
		return DOCTOR_("FAIL");
	default:
		return DOCTOR_("SKIP");
	}
}

static char *vformat(const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	return s;
}

doctor_result *doctor_addf(doctor_report *r, const char *check, doctor_status st,
                           const char *found_fmt, ...)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		doctor_result *v = gw_xrealloc(r->v, cap * sizeof *v);
		r->v = v;
		r->cap = cap;
	}
	doctor_result *res = &r->v[r->n++];
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

void doctor_fixf(doctor_result *res, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = vformat(format_tr(fmt), ap);
	va_end(ap);
	free(res->fix);
	res->fix = s;
}

void doctor_report_free(doctor_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].found);
		free(r->v[i].fix);
	}
	free(r->v);
	memset(r, 0, sizeof *r);
}

int doctor_exit_code(const doctor_report *r)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].status == DOCTOR_FAIL)
			return 1;
	return 0;
}

void doctor_print_text(FILE *f, const doctor_report *r, bool color)
{
	static const char *colors[] = {"\033[32m", "\033[33m", "\033[1;31m", "\033[2m"};
	int counts[4] = {0};
	size_t width = 0;
	for (size_t i = 0; i < r->n; i++)
		if (strlen(r->v[i].check) > width)
			width = strlen(r->v[i].check);
	for (size_t i = 0; i < r->n; i++) {
		const doctor_result *x = &r->v[i];
		counts[x->status]++;
		if (color)
			fprintf(f, "%s%s\033[0m", colors[x->status], status_text(x->status));
		else
			fputs(status_text(x->status), f);
		fprintf(f, "  %-*s  %s", (int)width, x->check, x->found);
		if (x->fix && *x->fix)
			fprintf(f, DOCTOR_("  fix: %s"), x->fix);
		fputc('\n', f);
	}
	fputc('\n', f);
	fprintf(f,
	        DOCTOR_P("%zu check: %d FAIL, %d WARN, %d PASS, %d SKIP\n",
	                 "%zu checks: %d FAIL, %d WARN, %d PASS, %d SKIP\n", r->n),
	        r->n, counts[DOCTOR_FAIL], counts[DOCTOR_WARN], counts[DOCTOR_PASS],
	        counts[DOCTOR_SKIP]);
}

void doctor_print_json(FILE *f, const doctor_report *r)
{
	jsonw w;
	jsonw_init(&w, f, true);
	jsonw_arr_begin(&w);
	for (size_t i = 0; i < r->n; i++) {
		const doctor_result *x = &r->v[i];
		jsonw_obj_begin(&w);
		jsonw_key(&w, "check");
		jsonw_str(&w, x->check);
		jsonw_key(&w, "status");
		jsonw_str(&w, doctor_status_name(x->status));
		jsonw_key(&w, "found");
		jsonw_str(&w, x->found);
		jsonw_key(&w, "fix");
		jsonw_str(&w, x->fix && *x->fix ? x->fix : NULL);
		jsonw_obj_end(&w);
	}
	jsonw_arr_end(&w);
	fputc('\n', f);
}
