/* query.c - `gpuwhy query`: nvidia-smi --query-gpu compatible fields, CSV/JSON, loops, dmon. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "gpu/cell.h"
#include "gpu/gpu.h"
#include "util/err.h"
#include "util/jsonw.h"
#include "util/parse.h"
#include "util/timeutil.h"

#define QUERY_MAX_FIELDS 128
#define FIELD_TIMESTAMP (-2)

static volatile sig_atomic_t query_stop;

static void on_signal(int sig)
{
	(void)sig;
	query_stop = 1;
}

typedef struct {
	int fields[QUERY_MAX_FIELDS];
	int nfields;
	bool json, noheader, nounits, dmon;
	int64_t interval_ns; /* 0 = once */
	long long count;     /* 0 = unlimited when looping */
} query_opts;

static void usage(FILE *out)
{
	fputs("usage: gpuwhy query --query-gpu=FIELD[,FIELD...] [--format=csv[,noheader][,nounits]|json]\n"
	      "                    [-l SECONDS | -lms MILLISECONDS] [--count N]\n"
	      "       gpuwhy query --dmon [-l SECONDS | -lms MILLISECONDS] [--count N]\n"
	      "       gpuwhy query --help-query\n"
	      "\n"
	      "Field names and units follow nvidia-smi --query-gpu; unsupported values print [N/A]\n"
	      "(null in JSON). --format=json prints one JSON object per sample (JSON Lines when\n"
	      "looping). --dmon streams the compact `nvidia-smi dmon -s pucct` columns plus SM\n"
	      "activity. -l/-lms repeat at a fixed cadence until Ctrl-C or --count samples.\n",
	      out);
}

static void help_query(void)
{
	printf("Fields for --query-gpu (unit in brackets; aliases after '='):\n\n");
	printf("  %-52s %s\n", "timestamp", "Time of the sample, \"YYYY/MM/DD HH:MM:SS.mmm\".");
	for (int i = 0; i < GM__COUNT; i++) {
		char name[160];
		const gpu_metric_desc *d = &gpu_metrics[i];
		int n = snprintf(name, sizeof name, "%s", d->key);
		if (d->unit[0])
			n += snprintf(name + n, sizeof name - (size_t)n, " [%s]", d->unit);
		for (int a = 0; gpu_metric_aliases[a][0]; a++)
			if (!strcmp(gpu_metric_aliases[a][1], d->key) && (size_t)n < sizeof name)
				n += snprintf(name + n, sizeof name - (size_t)n, " =%s",
					      gpu_metric_aliases[a][0]);
		printf("  %-52s %s%s%s\n", name, d->help, d->dcgm ? " DCGM: " : "",
		       d->dcgm ? d->dcgm : "");
	}
}

static int parse_fields(const char *list, query_opts *q)
{
	char *copy = strdup(list), *save = NULL;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		while (*t == ' ')
			t++;
		if (!*t)
			continue;
		int id = !strcmp(t, "timestamp") ? FIELD_TIMESTAMP : gpu_metric_lookup(t);
		if (id == -1) {
			int rc = gw_error(GW_EXIT_USAGE, t, "gpuwhy query --help-query lists them",
					  "unknown --query-gpu field");
			free(copy);
			return rc;
		}
		if (q->nfields >= QUERY_MAX_FIELDS) {
			free(copy);
			return gw_error(GW_EXIT_USAGE, "--query-gpu", NULL, "more than %d fields",
					QUERY_MAX_FIELDS);
		}
		q->fields[q->nfields++] = id;
	}
	free(copy);
	if (q->nfields == 0)
		return gw_error(GW_EXIT_USAGE, "--query-gpu", "e.g. --query-gpu=index,utilization.gpu",
				"no fields given");
	return 0;
}

static int parse_format(const char *s, query_opts *q)
{
	char *copy = strdup(s), *save = NULL;
	int rc = 0;
	for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
		while (*t == ' ')
			t++;
		if (!strcmp(t, "csv"))
			q->json = false;
		else if (!strcmp(t, "json"))
			q->json = true;
		else if (!strcmp(t, "noheader"))
			q->noheader = true;
		else if (!strcmp(t, "nounits"))
			q->nounits = true;
		else
			rc = gw_error(GW_EXIT_USAGE, "--format", "use csv[,noheader][,nounits] or json",
				      "unknown format '%s'", t);
	}
	free(copy);
	return rc;
}

static void timestamp_text(double wall, char *out, size_t len)
{
	time_t t = (time_t)wall;
	struct tm tm;
	localtime_r(&t, &tm);
	char b[32];
	strftime(b, sizeof b, "%Y/%m/%d %H:%M:%S", &tm);
	snprintf(out, len, "%s.%03d", b, (int)((wall - (double)t) * 1000));
}

static void print_csv_header(const query_opts *q)
{
	for (int f = 0; f < q->nfields; f++) {
		int id = q->fields[f];
		if (id == FIELD_TIMESTAMP) {
			printf("%stimestamp", f ? ", " : "");
			continue;
		}
		printf("%s%s", f ? ", " : "", gpu_metrics[id].key);
		if (!q->nounits && gpu_metrics[id].unit[0])
			printf(" [%s]", gpu_metrics[id].unit);
	}
	putchar('\n');
}

static void print_csv_row(gpu_ctx *c, int i, const gpu_values *v, const query_opts *q)
{
	char buf[256];
	for (int f = 0; f < q->nfields; f++) {
		int id = q->fields[f];
		if (id == FIELD_TIMESTAMP)
			timestamp_text(v->t_wall, buf, sizeof buf);
		else
			gpu_cell_text(c, i, v, (gpu_metric_id)id, !q->nounits, buf, sizeof buf);
		printf("%s%s", f ? ", " : "", buf);
	}
	putchar('\n');
}

static void print_json(gpu_ctx *c, const gpu_values *vals, int n, const query_opts *q)
{
	jsonw w;
	char ts[64];
	jsonw_init(&w, stdout, false);
	jsonw_obj_begin(&w);
	jsonw_key(&w, "timestamp");
	jsonw_num(&w, n > 0 ? vals[0].t_wall : gw_wall_s());
	jsonw_key(&w, "gpus");
	jsonw_arr_begin(&w);
	for (int i = 0; i < n; i++) {
		jsonw_obj_begin(&w);
		for (int f = 0; f < q->nfields; f++) {
			int id = q->fields[f];
			if (id == FIELD_TIMESTAMP) {
				timestamp_text(vals[i].t_wall, ts, sizeof ts);
				jsonw_key(&w, "timestamp");
				jsonw_str(&w, ts);
				continue;
			}
			jsonw_key(&w, gpu_metrics[id].key);
			gpu_cell_json(c, i, &vals[i], (gpu_metric_id)id, &w);
		}
		jsonw_obj_end(&w);
	}
	jsonw_arr_end(&w);
	jsonw_obj_end(&w);
	putchar('\n');
}

/* dmon: the columns of `nvidia-smi dmon -s pucct`, plus GPM SM activity. */
static const struct {
	const char *name, *unit;
	gpu_metric_id id;
} dmon_cols[] = {
	{"pwr", "W", GM_POWER_DRAW},	 {"gtemp", "C", GM_TEMP_GPU}, {"mtemp", "C", GM_TEMP_MEM},
	{"sm", "%", GM_UTIL_GPU},	 {"mem", "%", GM_UTIL_MEM},   {"enc", "%", GM_UTIL_ENC},
	{"dec", "%", GM_UTIL_DEC},	 {"mclk", "MHz", GM_CLK_MEM}, {"pclk", "MHz", GM_CLK_SM},
	{"rxpci", "MB/s", GM_PCIE_RX},	 {"txpci", "MB/s", GM_PCIE_TX},
	{"smact", "%", GM_GPM_SM_ACTIVE},
};
#define DMON_NCOLS (sizeof dmon_cols / sizeof *dmon_cols)

static void print_dmon_header(void)
{
	printf("# gpu");
	for (size_t k = 0; k < DMON_NCOLS; k++)
		printf(" %6s", dmon_cols[k].name);
	printf("\n# Idx");
	for (size_t k = 0; k < DMON_NCOLS; k++)
		printf(" %6s", dmon_cols[k].unit);
	putchar('\n');
}

static void print_dmon_row(const gpu_static *s, const gpu_values *v)
{
	printf("  %3d", s->index);
	for (size_t k = 0; k < DMON_NCOLS; k++) {
		if (v->ok[dmon_cols[k].id])
			printf(" %6.0f", v->v[dmon_cols[k].id]);
		else
			printf(" %6s", "-");
	}
	putchar('\n');
}

static int parse_args(int argc, char **argv, query_opts *q)
{
	static const struct option opts[] = {
		{"query-gpu", required_argument, NULL, 'q'}, {"format", required_argument, NULL, 'f'},
		{"l", required_argument, NULL, 'l'},	     {"loop", required_argument, NULL, 'l'},
		{"lms", required_argument, NULL, 'm'},	     {"loop-ms", required_argument, NULL, 'm'},
		{"count", required_argument, NULL, 'c'},     {"dmon", no_argument, NULL, 'd'},
		{"help-query", no_argument, NULL, 'H'},	     {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	int ch, rc;
	long long n;
	while ((ch = getopt_long_only(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'q':
			if ((rc = parse_fields(optarg, q)))
				return rc;
			break;
		case 'f':
			if ((rc = parse_format(optarg, q)))
				return rc;
			break;
		case 'l':
			if (!gw_parse_duration_ns(optarg, 1000000000LL, &q->interval_ns) ||
			    q->interval_ns < 1000000LL)
				return gw_error(GW_EXIT_USAGE, "-l", "give seconds, e.g. -l 1 or -l 0.5",
						"invalid loop interval '%s'", optarg);
			break;
		case 'm':
			if (!gw_parse_int(optarg, 1, 86400000LL, &n))
				return gw_error(GW_EXIT_USAGE, "-lms", "give milliseconds, e.g. -lms 100",
						"invalid loop interval '%s'", optarg);
			q->interval_ns = n * 1000000LL;
			break;
		case 'c':
			if (!gw_parse_int(optarg, 1, 1LL << 40, &q->count))
				return gw_error(GW_EXIT_USAGE, "--count", "a positive whole number",
						"invalid count '%s'", optarg);
			break;
		case 'd': q->dmon = true; break;
		case 'H': help_query(); return -1;
		case 'h': usage(stdout); return -1;
		default: usage(stderr); return GW_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return gw_error(GW_EXIT_USAGE, argv[optind], "see gpuwhy query --help",
				"unexpected argument");
	if (!q->dmon && q->nfields == 0) {
		usage(stderr);
		return GW_EXIT_USAGE;
	}
	if (q->dmon && !q->interval_ns)
		q->interval_ns = 1000000000LL;
	return 0;
}

int cmd_query(int argc, char **argv, const gw_global *g)
{
	query_opts q;
	memset(&q, 0, sizeof q);
	int rc = parse_args(argc, argv, &q);
	if (rc)
		return rc < 0 ? GW_EXIT_OK : rc;
	gpu_ctx *c;
	gpu_open_opts oo = {.gpus = g->gpus};
	if ((rc = gpu_open(&oo, &c)))
		return rc;
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	int n = gpu_count(c);
	gpu_values *vals = calloc(n ? (size_t)n : 1, sizeof *vals);
	/* Rates (GPM, PCIe, driver samples) need an interval even for one sample. */
	gpu_wait_rate_window(c);
	if (q.interval_ns)
		gpu_slow_thread_start(c);
	int64_t next = gw_mono_ns();
	long long done = 0;
	if (q.dmon)
		print_dmon_header();
	else if (!q.json && !q.noheader)
		print_csv_header(&q);
	while (!query_stop) {
		for (int i = 0; i < n; i++)
			gpu_sample(c, i, &vals[i]);
		if (q.dmon)
			for (int i = 0; i < n; i++)
				print_dmon_row(gpu_static_info(c, i), &vals[i]);
		else if (q.json)
			print_json(c, vals, n, &q);
		else
			for (int i = 0; i < n; i++)
				print_csv_row(c, i, &vals[i], &q);
		fflush(stdout);
		done++;
		if (!q.interval_ns || (q.count && done >= q.count))
			break;
		/* Fixed cadence: the next deadline follows the schedule, not the last wake-up. */
		next += q.interval_ns;
		int64_t now = gw_mono_ns();
		if (next < now)
			next = now;
		gw_sleep_until_ns(next);
	}
	free(vals);
	gpu_close(c);
	return GW_EXIT_OK;
}
