/*
 * html_check.h - checks on a generated HTML page for the report tests:
 * well-formed tags (HTML void elements aside, SVG elements closed), only
 * known entities, and no external reference (no http:, https:, protocol-
 * relative URL, and src=/href= only to "#fragment" or data: URIs).
 * Returns NULL when the page passes, else a static message.
 */
#ifndef GPUWHY_TESTS_HTML_CHECK_H
#define GPUWHY_TESTS_HTML_CHECK_H

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static inline bool hc_void(const char *name, size_t n)
{
	static const char *const v[] = {"area", "base", "br", "col", "embed", "hr", "img", "input",
					"link", "meta", "source", "track", "wbr"};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++)
		if (strlen(v[i]) == n && !strncasecmp(v[i], name, n))
			return true;
	return false;
}

/* The value of attribute attr inside the tag text [p, end) is checked for external targets. */
static inline const char *hc_refs(const char *p, const char *end)
{
	static const char *const attrs[] = {" src=", " href=", " xlink:href=", " action=",
					    " srcset=", " poster="};
	for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++) {
		const char *a = p;
		while ((a = strstr(a, attrs[i])) && a < end) {
			const char *v = a + strlen(attrs[i]);
			if (*v == '"' || *v == '\'')
				v++;
			if (!(v[0] == '#' || !strncmp(v, "data:", 5)))
				return "a src/href points outside the page";
			a = v;
		}
	}
	return NULL;
}

static inline const char *html_check(const char *html)
{
	static char msg[160];
	if (strncmp(html, "<!DOCTYPE html>", 15))
		return "no <!DOCTYPE html>";
	if (strstr(html, "http:") || strstr(html, "https:") || strstr(html, "url(") ||
	    strstr(html, "\"//") || strstr(html, "@import") || strstr(html, "<script"))
		return "external reference or script";
	const char *stack[256];
	size_t len[256];
	int depth = 0;
	const char *p = html + 15;
	while (*p) {
		if (*p == '&') {
			const char *e = p + 1;
			if (*e == '#') {
				e++;
				while (isdigit((unsigned char)*e))
					e++;
			} else {
				while (isalpha((unsigned char)*e))
					e++;
			}
			if (*e != ';' || e == p + 1)
				return "a bare & (not an entity)";
			p = e + 1;
			continue;
		}
		if (*p != '<') {
			p++;
			continue;
		}
		if (!strncmp(p, "<!--", 4)) {
			const char *e = strstr(p, "-->");
			if (!e)
				return "unterminated comment";
			p = e + 3;
			continue;
		}
		bool closing = p[1] == '/';
		const char *name = p + 1 + closing;
		size_t n = 0;
		while (isalnum((unsigned char)name[n]) || name[n] == '-' || name[n] == ':')
			n++;
		if (!n)
			return "a bare < (not a tag)";
		/* find the end of the tag, honouring quoted attribute values */
		const char *e = name + n;
		char q = 0;
		while (*e && (q || *e != '>')) {
			if (q && *e == q)
				q = 0;
			else if (!q && (*e == '"' || *e == '\''))
				q = *e;
			e++;
		}
		if (!*e)
			return "unterminated tag";
		const char *bad = hc_refs(p, e);
		if (bad)
			return bad;
		bool self = e[-1] == '/';
		if (closing) {
			if (!depth || len[depth - 1] != n || strncasecmp(stack[depth - 1], name, n)) {
				snprintf(msg, sizeof msg, "mismatched </%.*s>", (int)n, name);
				return msg;
			}
			depth--;
		} else if (!self && !hc_void(name, n)) {
			if (depth == 256)
				return "nesting too deep";
			stack[depth] = name;
			len[depth++] = n;
			if (n == 5 && !strncasecmp(name, "style", 5)) {
				/* CSS: skip to its end tag */
				const char *s = strstr(e, "</style>");
				if (!s)
					return "unterminated <style>";
				p = s;
				continue;
			}
		}
		p = e + 1;
	}
	if (depth) {
		snprintf(msg, sizeof msg, "unclosed <%.*s>", (int)len[depth - 1], stack[depth - 1]);
		return msg;
	}
	return NULL;
}

#endif
