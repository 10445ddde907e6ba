/*
 * hash.h - FNV-1a, the one string hash of gpuwhy: short names made from
 * long ones, a key's stand-in in logs, spreading work deterministically.
 * Not for anything an attacker may choose to collide with on purpose.
 */
#ifndef GPUWHY_UTIL_HASH_H
#define GPUWHY_UTIL_HASH_H

#include <stdint.h>

#define GW_FNV32_BASIS 2166136261u
#define GW_FNV64_BASIS 14695981039346656037ULL

/* FNV-1a of the string s, continuing from h (a basis, or a hash so far). */
uint32_t gw_fnv1a32(const char *s, uint32_t h);
uint64_t gw_fnv1a64(const char *s, uint64_t h);

#endif
