/*
 * amdgpu_parse.c - the text formats of the amdgpu driver, parsed without I/O.
 *
 * Numbers are parsed by hand, not with strtod: the user's locale may write
 * decimals with a comma, the kernel never does.
 */
#include "gpu/amdgpu.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Digits at *p as an unsigned 64-bit value; false when none or overflow. */
static bool take_u64(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	while (s < end && *s >= '0' && *s <= '9') {
		unsigned d = (unsigned)(*s - '0');
		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
		s++;
	}
	if (s == *p)
		return false;
	*p = s;
	*v = x;
	return true;
}

/* "16", "16.0", "2.5": the value in tenths (one decimal kept, more ignored). */
static bool take_tenths(const char **p, const char *end, uint64_t *tenths)
{
	uint64_t whole;
	if (!take_u64(p, end, &whole) || whole > UINT64_MAX / 10 - 10)
		return false;
	uint64_t t = whole * 10;
	const char *s = *p;
	if (s < end && *s == '.') {
		s++;
		if (s < end && *s >= '0' && *s <= '9')
			t += (uint64_t)(*s - '0');
		while (s < end && *s >= '0' && *s <= '9')
			s++;
	}
	*p = s;
	*tenths = t;
	return true;
}

static const char *skip_blank(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

static bool starts_ci(const char *s, const char *end, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(end - s) < n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (tolower((unsigned char)s[i]) != tolower((unsigned char)word[i]))
			return false;
	return true;
}

/* One pp_dpm line: "1: 1900Mhz *" (level may be "S" for deep sleep). */
static bool dpm_line(const char *s, const char *end, double *mhz, bool *cur)
{
	s = skip_blank(s, end);
	const char *colon = memchr(s, ':', (size_t)(end - s));
	if (!colon || colon == s)
		return false;
	for (const char *q = s; q < colon; q++)
		if (!isalnum((unsigned char)*q))
			return false;
	s = skip_blank(colon + 1, end);
	uint64_t tenths;
	if (!take_tenths(&s, end, &tenths))
		return false;
	s = skip_blank(s, end);
	if (!starts_ci(s, end, "mhz"))
		return false;
	s = skip_blank(s + 3, end);
	*cur = s < end && *s == '*';
	if (*cur)
		s = skip_blank(s + 1, end);
	if (s != end)
		return false;
	*mhz = (double)tenths / 10.0;
	return true;
}

bool amdgpu_is_number(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

bool amdgpu_parse_dpm(const char *text, size_t len, amdgpu_dpm *out)
{
	memset(out, 0, sizeof *out);
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		while (le > p && (le[-1] == '\r' || le[-1] == ' ' || le[-1] == '\t'))
			le--;
		double mhz;
		bool cur;
		if (dpm_line(p, le, &mhz, &cur)) {
			if (out->levels == 0 || mhz > out->max_mhz)
				out->max_mhz = mhz;
			out->levels++;
			/* two marks would be a driver bug: keep the first, the kernel's order */
			if (cur && !out->cur_ok) {
				out->cur_ok = true;
				out->cur_mhz = mhz;
			}
		}
		p = nl ? nl + 1 : end;
	}
	return out->levels > 0;
}

int amdgpu_link_gen(const char *s)
{
	static const unsigned tenths_of_gen[] = {25, 50, 80, 160, 320, 640, 1280};
	if (!s)
		return 0;
	const char *end = s + strlen(s);
	const char *p = skip_blank(s, end);
	uint64_t t;
	if (!take_tenths(&p, end, &t))
		return 0;
	p = skip_blank(p, end);
	if (!starts_ci(p, end, "GT/s"))
		return 0;
	for (size_t g = 0; g < sizeof tenths_of_gen / sizeof tenths_of_gen[0]; g++)
		if (t == tenths_of_gen[g])
			return (int)g + 1;
	return 0;
}

/* "0000:03:00.0" in any case -> lower case; false when it is no PCI address. */
static bool norm_pdev(const char *s, const char *end, char *out, size_t outlen)
{
	char tmp[32];
	size_t n = (size_t)(end - s);
	if (n == 0 || n >= sizeof tmp)
		return false;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	unsigned dom, bus, dev, fn;
	char tail;
	if (tmp[strspn(tmp, "0123456789abcdefABCDEF:.")] != '\0' ||
	    sscanf(tmp, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4 || dom > 0xffff ||
	    bus > 0xff || dev > 0x1f || fn > 7)
		return false;
	snprintf(out, outlen, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return true;
}

/* The shift of a DRM size unit ("KiB" 10, "MiB" 20, ...); false when it is none. */
static bool unit_shift(const char *s, const char *end, unsigned *shift)
{
	static const struct {
		const char *unit;
		unsigned shift;
	} units[] = {{"KiB", 10}, {"kB", 10}, {"MiB", 20}, {"GiB", 30}, {"B", 0}};
	size_t n = (size_t)(end - s);
	for (size_t k = 0; k < sizeof units / sizeof units[0]; k++)
		if (n == strlen(units[k].unit) && !memcmp(s, units[k].unit, n)) {
			*shift = units[k].shift;
			return true;
		}
	return false;
}

/* "123 KiB" and the other size units of the DRM format (none: bytes), in bytes. */
static bool size_value(const char *s, const char *end, uint64_t *bytes)
{
	uint64_t v;
	if (!take_u64(&s, end, &v))
		return false;
	s = skip_blank(s, end);
	unsigned shift = 0;
	if (s < end && !unit_shift(s, end, &shift))
		return false;
	if (shift && v > (UINT64_MAX >> shift))
		return false;
	*bytes = v << shift;
	return true;
}

/* "123456 ns" (the unit may be left out). */
static bool ns_value(const char *s, const char *end, uint64_t *ns)
{
	if (!take_u64(&s, end, ns))
		return false;
	s = skip_blank(s, end);
	return s == end || ((size_t)(end - s) == 2 && !memcmp(s, "ns", 2));
}

static bool key_is(const char *k, size_t kn, const char *want)
{
	return kn == strlen(want) && !memcmp(k, want, kn);
}

/* One "key: value" line into *o. Preferred keys overwrite fallbacks, never the reverse. */
static void fdinfo_line(const char *k, size_t kn, const char *v, const char *ve, amdgpu_fdinfo *o,
                        bool *vram_pref, bool *gtt_pref)
{
	uint64_t x;
	if (key_is(k, kn, "drm-driver"))
		o->is_amdgpu = (size_t)(ve - v) == 6 && !memcmp(v, "amdgpu", 6);
	else if (key_is(k, kn, "drm-pdev"))
		norm_pdev(v, ve, o->pdev, sizeof o->pdev);
	else if (key_is(k, kn, "drm-client-id") && take_u64(&v, ve, &x) && v == ve) {
		o->client_ok = true;
		o->client_id = x;
	} else if (key_is(k, kn, "drm-memory-vram") && size_value(v, ve, &x)) {
		o->vram_ok = *vram_pref = true;
		o->vram_bytes = x;
	} else if (key_is(k, kn, "drm-resident-vram") && !*vram_pref && size_value(v, ve, &x)) {
		o->vram_ok = true;
		o->vram_bytes = x;
	} else if (key_is(k, kn, "drm-memory-gtt") && size_value(v, ve, &x)) {
		o->gtt_ok = *gtt_pref = true;
		o->gtt_bytes = x;
	} else if (key_is(k, kn, "drm-resident-gtt") && !*gtt_pref && size_value(v, ve, &x)) {
		o->gtt_ok = true;
		o->gtt_bytes = x;
	} else if (key_is(k, kn, "drm-engine-gfx") && ns_value(v, ve, &x)) {
		o->gfx_ok = true;
		o->gfx_ns = x;
	} else if (key_is(k, kn, "drm-engine-compute") && ns_value(v, ve, &x)) {
		o->compute_ok = true;
		o->compute_ns = x;
	}
}

bool amdgpu_parse_fdinfo(const char *text, size_t len, amdgpu_fdinfo *out)
{
	memset(out, 0, sizeof *out);
	bool vram_pref = false, gtt_pref = false;
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *colon = memchr(p, ':', (size_t)(le - p));
		if (colon) {
			const char *v = skip_blank(colon + 1, le);
			const char *ve = le;
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t' || ve[-1] == '\r'))
				ve--;
			fdinfo_line(p, (size_t)(colon - p), v, ve, out, &vram_pref, &gtt_pref);
		}
		p = nl ? nl + 1 : end;
	}
	return out->is_amdgpu;
}
