/*
 * report.h - the doctor's results: one per check, a status, what was found and the fix;
 * their language, and the text and JSON printers (report.c).
 */
#ifndef GPUWHY_DOCTOR_REPORT_H
#define GPUWHY_DOCTOR_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum { DOCTOR_PASS, DOCTOR_WARN, DOCTOR_FAIL, DOCTOR_SKIP } doctor_status;

const char *doctor_status_name(doctor_status s); /* "PASS", "WARN", "FAIL", "SKIP" */

/*
 * The language of the results. Text output speaks the user's language; JSON
 * is for machines and keeps English, so the report is built in the language
 * of the output it is for: doctor_set_translate(true) before the checks run for
 * text. doctor_addf and doctor_fixf translate their formats; DOCTOR_("...") marks a piece
 * of a result (an argument, an appended clause) and translates it likewise.
 */
void doctor_set_translate(bool on);
const char *doctor_tr(const char *msgid) __attribute__((format_arg(1)));
#define DOCTOR_(s) doctor_tr(s)
const char *doctor_ntr(const char *one, const char *many, unsigned long n)
    __attribute__((format_arg(1), format_arg(2)));
#define DOCTOR_P(one, many, n) doctor_ntr((one), (many), (unsigned long)(n))

typedef struct {
	char check[32];
	doctor_status status;
	char *found; /* never NULL */
	char *fix;   /* NULL when there is nothing to do */
} doctor_result;

typedef struct {
	doctor_result *v;
	size_t n, cap;
} doctor_report;

doctor_result *doctor_addf(doctor_report *r, const char *check, doctor_status st,
                           const char *found_fmt, ...) __attribute__((format(printf, 4, 5)));
void doctor_fixf(doctor_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void doctor_report_free(doctor_report *r);
/* 1 when any check failed, else 0 (WARN does not change the exit code). */
int doctor_exit_code(const doctor_report *r);
void doctor_print_text(FILE *f, const doctor_report *r, bool color);
void doctor_print_json(FILE *f, const doctor_report *r);

#endif
