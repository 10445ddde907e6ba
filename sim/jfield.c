/*
 * jfield.c - the strict, typed reader of a JSON object's fields (see jfield.h).
 */
#include "jfield.h"

#include <stdint.h>
#include <string.h>

static bool type_ok(jf_type t, const json_t *v)
{
	switch (t) {
	case JF_INT:
		return json_is_integer(v);
	case JF_NUM:
		return json_is_number(v);
	case JF_BOOL:
		return json_is_boolean(v);
	default:
		return json_is_string(v);
	}
}

jf_fault jf_check(const jf_field *f, const json_t *v)
{
	if (!type_ok(f->type, v))
		return JF_TYPE;
	if (f->type == JF_INT) {
		long long x = json_integer_value(v);
		return x < f->lo || x > f->hi ? JF_RANGE : JF_OK;
	}
	if (f->type == JF_NUM) {
		double d = json_number_value(v);
		return d >= f->dlo && d <= f->dhi ? JF_OK : JF_RANGE;
	}
	if (f->type == JF_STR) {
		size_t n = json_string_length(v), max = f->hi > 0 ? (size_t)f->hi : f->size - 1;
		if (n > max || n >= f->size)
			return JF_TOO_LONG;
		if (strlen(json_string_value(v)) != n)
			return JF_NUL;
	}
	return JF_OK;
}

void jf_store(const jf_field *f, const json_t *v, void *dst)
{
	char *at = (char *)dst + f->off;
	switch (f->type) {
	case JF_INT:
		if (f->size == sizeof(int32_t)) {
			int32_t x = (int32_t)json_integer_value(v);
			memcpy(at, &x, sizeof x);
		} else {
			int64_t x = (int64_t)json_integer_value(v);
			memcpy(at, &x, sizeof x);
		}
		break;
	case JF_NUM: {
		double d = json_number_value(v);
		memcpy(at, &d, sizeof d);
		break;
	}
	case JF_BOOL: {
		bool b = json_is_true(v);
		memcpy(at, &b, sizeof b);
		break;
	}
	case JF_STR:
		memcpy(at, json_string_value(v), json_string_length(v) + 1);
		break;
	case JF_TEXT: {
		const char *s = json_string_value(v);
		memcpy(at, &s, sizeof s);
		break;
	}
	}
}

jf_fault jf_read(const jf_field *rows, size_t n, const json_t *obj, unsigned flags, void *dst,
                 const jf_field **bad, const json_t **val)
{
	for (size_t i = 0; i < n; i++) {
		const json_t *v = json_object_get(obj, rows[i].key);
		if (flags & JF_NULL_ABSENT && json_is_null(v))
			v = NULL;
		jf_fault r = v ? jf_check(&rows[i], v) : rows[i].req ? JF_MISSING : JF_OK;
		if (r == JF_NUL && flags & JF_NUL_CUTS)
			r = JF_OK;
		if (r != JF_OK) {
			*bad = &rows[i];
			*val = v;
			return r;
		}
		if (v)
			jf_store(&rows[i], v, dst);
	}
	return JF_OK;
}

const jf_field *jf_find(const jf_field *rows, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].key, key))
			return &rows[i];
	return NULL;
}

const char *jf_unknown(const json_t *obj, const jf_field *rows, size_t n, const char *const *more)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)obj, k, v)
	{
		bool known = jf_find(rows, n, k) != NULL;
		for (const char *const *q = more; q && *q && !known; q++)
			known = !strcmp(*q, k);
		if (!known)
			return k;
	}
	return NULL;
}
