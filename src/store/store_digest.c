/*
 * store_digest.c - the digests of a recording's tables (store_int.h).
 *
 * A row's hash covers each value's type and exact bytes, so any value that
 * reads back differently, a row too many or too few, changes its table's
 * digest; the sum makes it independent of the order rows are read in (the
 * readers read by time, the writer by rowid). SQLite finds a damaged page
 * structure; only the digests find a damaged value.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sql.h"
#include "store/store_int.h"
#include "util/strbuf.h"

static uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x;
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 32);
}

static uint64_t mix_bytes(uint64_t h, const unsigned char *p, int n)
{
	h = mix(h, (uint64_t)n);
	if (!p || n <= 0)
		return h;
	for (; n >= 8; p += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = mix(h, w);
	}
	uint64_t w = 0;
	memcpy(&w, p, (size_t)n);
	return mix(h, w);
}

/* The murmur3 finaliser: every input bit reaches every output bit. */
static uint64_t finish(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

void store_digest_row(store_digest *d, sqlite3_stmt *s, int first, int ncol)
{
	uint64_t h = mix(0x9e3779b97f4a7c15ULL, (uint64_t)(ncol - first));
	for (int c = first; c < ncol; c++) {
		/* The type first: reading a value as another type converts it. */
		int type = sqlite3_column_type(s, c);
		h = mix(h, (uint64_t)type);
		if (type == SQLITE_INTEGER) {
			h = mix(h, (uint64_t)sqlite3_column_int64(s, c));
		} else if (type == SQLITE_FLOAT) {
			double v = sqlite3_column_double(s, c);
			uint64_t bits;
			memcpy(&bits, &v, sizeof bits);
			h = mix(h, bits);
		} else if (type == SQLITE_TEXT) {
			const unsigned char *t = sqlite3_column_text(s, c);
			h = mix_bytes(h, t, t ? sqlite3_column_bytes(s, c) : -1);
		} else if (type == SQLITE_BLOB) {
			const unsigned char *b = sqlite3_column_blob(s, c);
			h = mix_bytes(h, b, sqlite3_column_bytes(s, c));
		}
	}
	d->rows++;
	d->sum += finish(h);
}

bool store_digest_key(const char *key)
{
	return key && !strncmp(key, STORE_DIGEST_PREFIX, strlen(STORE_DIGEST_PREFIX));
}

static void digest_text(const store_digest *d, char *out, size_t len)
{
	snprintf(out, len, "%" PRId64 " %016" PRIx64, d->rows, d->sum);
}

bool store_digest_parse(const char *key, const char *value, store_digests *dg)
{
	const char *name = key + strlen(STORE_DIGEST_PREFIX);
	store_digest d;
	int used = -1;
	if (!value || sscanf(value, "%" SCNd64 " %16" SCNx64 "%n", &d.rows, &d.sum, &used) != 2 ||
	    used < 0 || value[used] || d.rows < 0)
		return false;
	/* Only the exact text gpuwhy writes: one flipped byte must not read as the same. */
	char back[64];
	digest_text(&d, back, sizeof back);
	if (strcmp(back, value))
		return false;
	if (!strcmp(name, "schema")) {
		dg->schema = d;
		dg->have |= 1u << ST__COUNT;
		return true;
	}
	for (int t = 0; t < ST__COUNT; t++)
		if (!strcmp(name, store_table_names[t])) {
			dg->table[t] = d;
			dg->have |= 1u << t;
			return true;
		}
	return false;
}

/* Fold every row of sql into d (columns from first on); *last = the largest column 0. */
static int digest_query(sqlite3 *db, const char *sql, int64_t after, store_digest *d, int first,
                        int64_t *last)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return rc;
	if (sqlite3_bind_parameter_count(s) > 0)
		sqlite3_bind_int64(s, 1, after);
	int ncol = sqlite3_column_count(s);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (last && sqlite3_column_int64(s, 0) > *last)
			*last = sqlite3_column_int64(s, 0);
		store_digest_row(d, s, first, ncol);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int store_digest_schema(sqlite3 *db, store_digest *d)
{
	*d = (store_digest){0};
	return digest_query(db, "SELECT type, name, tbl_name, sql FROM main.sqlite_master", 0, d, 0,
	                    NULL);
}

/* Tables whose rows a flush may replace (INSERT OR REPLACE): summed whole each time. */
static bool summed_whole(int t)
{
	return t == ST_META || t == ST_GPUS || t == ST_GPU_LINKS;
}

/* cur's digest of table t plus the rows after cur's last rowid, or all rows anew. */
static int digest_table(sqlite3 *db, int t, const store_digests *cur, store_digests *next)
{
	char sql[200];
	if (t == ST_META)
		snprintf(sql, sizeof sql,
		         "SELECT key, value FROM main.meta WHERE key IS NULL OR"
		         " substr(key, 1, %zu) <> '%s'",
		         strlen(STORE_DIGEST_PREFIX), STORE_DIGEST_PREFIX);
	else if (summed_whole(t))
		snprintf(sql, sizeof sql, "SELECT * FROM main.%s", store_table_names[t]);
	else
		snprintf(sql, sizeof sql, "SELECT rowid, * FROM main.%s WHERE rowid > ?",
		         store_table_names[t]);
	if (summed_whole(t)) {
		next->table[t] = (store_digest){0};
		return digest_query(db, sql, 0, &next->table[t], 0, NULL);
	}
	next->table[t] = cur->table[t];
	next->last_rowid[t] = cur->last_rowid[t];
	return digest_query(db, sql, cur->last_rowid[t], &next->table[t], 1, &next->last_rowid[t]);
}

int store_digests_scan(sqlite3 *db, store_digests *dg)
{
	store_digests zero = {0};
	*dg = zero;
	int rc = store_digest_schema(db, &dg->schema);
	for (int t = 0; t < ST__COUNT && rc == SQLITE_OK; t++)
		rc = digest_table(db, t, &zero, dg);
	return rc;
}

static int write_digest(sqlite3 *db, const char *name, const store_digest *d)
{
	sqlite3_stmt *s;
	char key[64], value[64];
	snprintf(key, sizeof key, STORE_DIGEST_PREFIX "%s", name);
	digest_text(d, value, sizeof value);
	int rc =
	    sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO main.meta VALUES(?, ?)", -1, &s, NULL);
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_text(s, 1, key, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 2, value, -1, SQLITE_TRANSIENT);
	rc = sql_step_done(s);
	sqlite3_finalize(s);
	return rc;
}

int store_digests_update(sqlite3 *db, const store_digests *cur, store_digests *next)
{
	*next = *cur;
	int rc = SQLITE_OK;
	for (int t = 0; t < ST__COUNT && rc == SQLITE_OK; t++) {
		rc = digest_table(db, t, cur, next);
		const store_digest *a = &cur->table[t], *b = &next->table[t];
		if (rc == SQLITE_OK && (!cur->written || a->rows != b->rows || a->sum != b->sum))
			rc = write_digest(db, store_table_names[t], b);
	}
	if (rc == SQLITE_OK && !cur->written)
		rc = write_digest(db, "schema", &next->schema);
	next->written = rc == SQLITE_OK;
	return rc;
}
