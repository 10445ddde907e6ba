/* hash.c - FNV-1a over strings, 32 and 64 bits. */
#include "util/hash.h"

uint32_t gw_fnv1a32(const char *s, uint32_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

uint64_t gw_fnv1a64(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}
