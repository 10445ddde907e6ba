/* i18n.c - language choice and catalogue lookup for gpuwhy's messages. */
#include "util/i18n.h"

#include <dirent.h>
#include <libintl.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/selfexe.h"

#ifndef GPUWHY_LOCALEDIR
#define GPUWHY_LOCALEDIR "/usr/local/share/locale"
#endif

static bool i18n_on;
static char i18n_langbuf[64] = "en";
static char i18n_dir[PATH_MAX];
static char i18n_avail[512];

const char *gw_gettext(const char *msgid)
{
	/* The empty msgid is the catalogue's header, never a message. */
	if (!i18n_on || !msgid || !msgid[0])
		return msgid;
	return dgettext(GW_TEXTDOMAIN, msgid);
}

const char *gw_ngettext(const char *one, const char *many, unsigned long n)
{
	if (!i18n_on)
		return n == 1 ? one : many;
	return dngettext(GW_TEXTDOMAIN, one, many, n);
}

const char *gw_i18n_lang(void)
{
	return i18n_on ? i18n_langbuf : "en";
}
bool gw_i18n_active(void)
{
	return i18n_on;
}
const char *gw_i18n_localedir(void)
{
	return i18n_dir;
}

static bool has_catalogue(const char *dir, const char *lang)
{
	char path[PATH_MAX];
	struct stat st;
	int n = snprintf(path, sizeof path, "%s/%s/LC_MESSAGES/" GW_TEXTDOMAIN ".mo", dir, lang);
	return n > 0 && (size_t)n < sizeof path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The first directory holding any catalogue: an override for tests and
 * packagers, the build tree (BUILD/gpuwhy beside BUILD/locale), an install
 * (PREFIX/bin/gpuwhy beside PREFIX/share/locale), the configured prefix. */
static bool find_localedir(const char *lang)
{
	char exe[PATH_MAX / 2];
	char cand[4][PATH_MAX];
	int n = 0;
	const char *env = getenv("GPUWHY_LOCALEDIR");
	if (env && env[0] && strlen(env) < sizeof cand[0])
		memcpy(cand[n++], env, strlen(env) + 1);
	if (gw_self_dir(exe, sizeof exe) == 0) {
		snprintf(cand[n++], sizeof cand[0], "%s/locale", exe);
		snprintf(cand[n++], sizeof cand[0], "%s/../share/locale", exe);
	}
	snprintf(cand[n++], sizeof cand[0], "%s", GPUWHY_LOCALEDIR);
	for (int i = 0; i < n; i++) {
		if (has_catalogue(cand[i], lang)) {
			memcpy(i18n_dir, cand[i], sizeof i18n_dir);
			return true;
		}
	}
	return false;
}

/* "zh_CN.UTF-8@x" -> "zh_CN"; "zh" -> "zh_CN" (the one Chinese catalogue). */
static void lang_base(const char *in, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s", in);
	out[strcspn(out, ".@:")] = '\0';
	if (!strcmp(out, "zh") || !strcmp(out, "zh_SG") || !strcmp(out, "zh_Hans"))
		snprintf(out, outlen, "zh_CN");
}

static bool is_english(const char *l)
{
	return !l[0] || !strcmp(l, "C") || !strcmp(l, "POSIX") || !strncmp(l, "en", 2);
}

/* What the environment asks for, in gettext's order. LANGUAGE is a list:
 * its first entry with a catalogue wins. */
static const char *env_lang(char *buf, size_t buflen)
{
	const char *vars[] = {"LC_ALL", "LC_MESSAGES", "LANG"};
	const char *loc = NULL;
	for (size_t i = 0; i < sizeof vars / sizeof *vars && !loc; i++) {
		const char *v = getenv(vars[i]);
		if (v && v[0])
			loc = v;
	}
	const char *language = getenv("LANGUAGE");
	/* gettext ignores LANGUAGE when the locale is C; so does gpuwhy, except
	 * that an unset locale with LANGUAGE set still means LANGUAGE. */
	if (language && language[0] && !(loc && (!strcmp(loc, "C") || !strcmp(loc, "POSIX")))) {
		char list[256];
		snprintf(list, sizeof list, "%s", language);
		for (char *save = NULL, *t = strtok_r(list, ":", &save); t;
		     t = strtok_r(NULL, ":", &save)) {
			lang_base(t, buf, buflen);
			if (is_english(buf) || find_localedir(buf))
				return buf;
		}
	}
	if (!loc)
		return "";
	lang_base(loc, buf, buflen);
	return buf;
}

/* Messages of the chosen language even where its system locale was never
 * generated: glibc honours LANGUAGE under any LC_MESSAGES but "C". */
static void select_messages(const char *lang)
{
	const char *m = setlocale(LC_MESSAGES, "");
	if (!m || !strcmp(m, "C") || !strcmp(m, "POSIX"))
		setlocale(LC_MESSAGES, "C.UTF-8");
	const char *c = setlocale(LC_CTYPE, NULL);
	if (!c || !strcmp(c, "C") || !strcmp(c, "POSIX"))
		setlocale(LC_CTYPE, "C.UTF-8");
	setenv("LANGUAGE", lang, 1);
}

int gw_i18n_init(const char *lang)
{
	char buf[64];
	const char *want;
	i18n_on = false;
	if (lang) {
		lang_base(lang, buf, sizeof buf);
		want = buf;
	} else {
		want = env_lang(buf, sizeof buf);
	}
	if (is_english(want)) {
		if (lang) /* children started by this run speak English too */
			setenv("LANGUAGE", "en", 1);
		return 0;
	}
	if (!find_localedir(want))
		return lang ? -1 : 0; /* a locale without a catalogue: English */
	snprintf(i18n_langbuf, sizeof i18n_langbuf, "%s", want);
	select_messages(want);
	bindtextdomain(GW_TEXTDOMAIN, i18n_dir);
	/* Output is UTF-8 whatever LC_CTYPE says. */
	bind_textdomain_codeset(GW_TEXTDOMAIN, "UTF-8");
	i18n_on = true;
	return 0;
}

const char *gw_i18n_available(void)
{
	snprintf(i18n_avail, sizeof i18n_avail, "en");
	char dir[PATH_MAX / 2];
	if (gw_self_dir(dir, sizeof dir) != 0)
		return i18n_avail;
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/locale", dir);
	const char *env = getenv("GPUWHY_LOCALEDIR");
	if (env && env[0] && strlen(env) < sizeof path)
		memcpy(path, env, strlen(env) + 1);
	DIR *d = opendir(path);
	if (!d) {
		snprintf(path, sizeof path, "%s/../share/locale", dir);
		d = opendir(path);
	}
	if (!d) {
		snprintf(path, sizeof path, "%s", GPUWHY_LOCALEDIR);
		d = opendir(path);
	}
	if (!d)
		return i18n_avail;
	size_t n = strlen(i18n_avail);
	for (struct dirent *e; (e = readdir(d)) != NULL && strlen(e->d_name) < 64;) {
		if (e->d_name[0] == '.' || !has_catalogue(path, e->d_name))
			continue;
		n += (size_t)snprintf(i18n_avail + n, sizeof i18n_avail - n, ", %s", e->d_name);
		if (n >= sizeof i18n_avail)
			break;
	}
	closedir(d);
	return i18n_avail;
}
