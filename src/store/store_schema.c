/* store_schema.c - a recording's tables: created once, and recognised in older files. */
#include <stdio.h>
#include <string.h>

#include "store/sql.h"
#include "store/store.h"
#include "store/store_int.h"
#include "util/strbuf.h"

const char *const store_table_names[ST__COUNT] = {
    [ST_META] = "meta",
    [ST_GPUS] = "gpus",
    [ST_GPU_LINKS] = "gpu_links",
    [ST_GPU_SAMPLES] = "gpu_samples",
    [ST_HOST_SAMPLES] = "host_samples",
    [ST_PROCESSES] = "processes",
    [ST_PROCESS_SAMPLES] = "process_samples",
    [ST_STEPS] = "steps",
    [ST_EVENTS] = "events",
};

/* The meta table and the start of gpu_samples exactly as every gpuwhy wrote them. */
#define META_SQL "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)"
#define GPU_SAMPLES_SQL                                                                            \
	"CREATE TABLE gpu_samples(t REAL NOT NULL, gpu INTEGER NOT NULL, lost INTEGER"

bool store_gpu_metric_stored(int id)
{
	/* the gpu column already holds the index */
	return gpu_metrics[id].fmt != GMF_STR && id != GM_INDEX &&
	       gpu_metrics[id].cadence != GMC_NONE;
}

void store_host_column(int id, char *out, size_t len)
{
	snprintf(out, len, "%s", host_metrics[id].key);
	for (char *p = out; *p; p++)
		if (*p == '.')
			*p = '_';
}

int store_schema_create(sqlite3 *db, gw_fail *err)
{
	gw_strbuf sql = {0};
	char col[128];
	gw_sb_printf(&sql, "PRAGMA application_id = %u; PRAGMA user_version = %d;",
	             SQL_APP_RECORDING, STORE_SCHEMA_VERSION);
	gw_sb_printf(
	    &sql, META_SQL
	    ";"
	    "CREATE TABLE gpus(idx INTEGER PRIMARY KEY, uuid TEXT, name TEXT, pci_bus_id TEXT,"
	    " serial TEXT, vbios TEXT, architecture TEXT, numa_node INTEGER, cpu_affinity TEXT,"
	    " vendor TEXT);"
	    "CREATE TABLE gpu_links(a INTEGER, b INTEGER, nvlinks INTEGER, topo INTEGER,"
	    " xgmi INTEGER, PRIMARY KEY(a, b));" GPU_SAMPLES_SQL);
	for (int i = 0; i < GM__COUNT; i++) {
		if (!store_gpu_metric_stored(i))
			continue;
		gpu_metric_column((gpu_metric_id)i, col, sizeof col);
		gw_sb_printf(&sql, ", \"%s\" REAL", col);
	}
	gw_sb_printf(&sql, ");CREATE INDEX gpu_samples_t ON gpu_samples(t);"
	                   "CREATE TABLE host_samples(t REAL NOT NULL, interval REAL");
	for (int i = 0; i < HM__COUNT; i++) {
		store_host_column(i, col, sizeof col);
		gw_sb_printf(&sql, ", \"%s\" REAL", col);
	}
	gw_sb_printf(
	    &sql,
	    ", core_busy TEXT, core_iowait TEXT);"
	    "CREATE INDEX host_samples_t ON host_samples(t);"
	    "CREATE TABLE processes(pid INTEGER NOT NULL, cmd TEXT NOT NULL, user TEXT,"
	    " first_t REAL, PRIMARY KEY(pid, cmd));"
	    "CREATE TABLE process_samples(t REAL NOT NULL, pid INTEGER NOT NULL, ppid INTEGER,"
	    " gpu INTEGER, in_tree INTEGER, alive INTEGER, gpu_mem_mib REAL, sm_pct REAL,"
	    " cpu_pct REAL, rss_mib REAL, cmd TEXT, state TEXT);"
	    "CREATE INDEX process_samples_t ON process_samples(t);"
	    "CREATE TABLE steps(t REAL NOT NULL, step INTEGER, line TEXT);"
	    "CREATE TABLE events(t REAL NOT NULL, kind TEXT NOT NULL, gpu INTEGER,"
	    " value INTEGER, text TEXT);");
	int rc = sql_exec(db, gw_sb_str(&sql), err);
	gw_sb_free(&sql);
	return rc;
}

static bool known_table(const char *name)
{
	for (int t = 0; t < ST__COUNT; t++)
		if (!strcmp(name, store_table_names[t]))
			return true;
	return false;
}

int store_schema_kind(sqlite3 *db)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, "SELECT name, sql FROM sqlite_master WHERE type = 'table'", -1,
	                       &s, NULL) != SQLITE_OK)
		return STORE_SCHEMA_DAMAGED;
	bool any = false, meta = false, gpu = false, host = false, other = false;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 0);
		const char *sql = (const char *)sqlite3_column_text(s, 1);
		if (name && !strncmp(name, "sqlite_", 7))
			continue; /* SQLite's own (statistics after an ANALYZE) */
		any = true;
		if (!name || !sql || !known_table(name))
			other = true;
		else if (!strcmp(name, "meta"))
			meta = !strcmp(sql, META_SQL);
		else if (!strcmp(name, "gpu_samples"))
			gpu = !strncmp(sql, GPU_SAMPLES_SQL, strlen(GPU_SAMPLES_SQL));
		else if (!strcmp(name, "host_samples"))
			host = true;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return STORE_SCHEMA_DAMAGED;
	if (!any)
		return STORE_SCHEMA_EMPTY;
	return meta && gpu && host && !other ? STORE_SCHEMA_OURS : STORE_SCHEMA_OTHER;
}
