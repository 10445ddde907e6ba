/* parse.h - strict parsers for command-line values: numbers, durations, sizes, lists. */
#ifndef GPUWHY_UTIL_PARSE_H
#define GPUWHY_UTIL_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/* Whole string must be a base-10 integer in [min, max]. */
bool gw_parse_int(const char *s, long long min, long long max, long long *out);
/* Locale-independent double ("4.25" is 4.25 whatever LC_NUMERIC says). */
bool gw_parse_double(const char *s, double *out);
double gw_strtod_c(const char *s, char **end);
/* "100ms", "1s", "1.5s", "10m", "2h", "3d"; a bare number means default_unit_ns. */
bool gw_parse_duration_ns(const char *s, int64_t default_unit_ns, int64_t *out_ns);
/* "12G", "512M", "1.5GiB", "2048" (bytes), "800MB" (1000-based only with B suffix after M/G). */
bool gw_parse_size_bytes(const char *s, uint64_t *out);
/* The bytes of one unit letter of a size: K, M, G or T (binary, either
 * case); 0 for any other character. */
double gw_size_unit(char c);

#endif
