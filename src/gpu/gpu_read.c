/* gpu_read.c - the metric readers: one per NVML call group (the READER column of metrics.def). */
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_int.h"
#include "util/timeutil.h"

#define GPM_MIN_INTERVAL_NS 100000000LL
#define MIB (1024ULL * 1024ULL)

typedef void (*reader_fn)(gpu_ctx *c, gpu_dev *d, gpu_values *o);
typedef nvmlReturn_t (*uint_getter)(nvmlDevice_t, unsigned *);
typedef nvmlReturn_t (*ull_getter)(nvmlDevice_t, unsigned long long *);
typedef nvmlReturn_t (*state_getter)(nvmlDevice_t, nvmlEnableState_t *);

/* Keep why a read failed where nvidia-smi prints more than [N/A]. */
static void why_absent(gpu_values *o, gpu_metric_id id, nvmlReturn_t rc)
{
	if (rc == NVML_ERROR_DEPRECATED)
		o->why[id] = GPU_WHY_DEPRECATED;
}

double gpu_nvml_value(nvmlValueType_t t, nvmlValue_t v)
{
	switch (t) {
	case NVML_VALUE_TYPE_DOUBLE:
		return v.dVal;
	case NVML_VALUE_TYPE_UNSIGNED_LONG:
		return (double)v.ulVal;
	case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
		return (double)v.ullVal;
	case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
		return (double)v.sllVal;
	case NVML_VALUE_TYPE_SIGNED_INT:
		return v.siVal;
	case NVML_VALUE_TYPE_UNSIGNED_SHORT:
		return v.usVal;
	default:
		return v.uiVal;
	}
}

/* The many getters of one unsigned: metric = value / div. */
static void read_uint(gpu_dev *d, gpu_values *o, uint_getter fn, gpu_metric_id id, double div)
{
	unsigned u;
	if (fn && gpu_ok(d, fn(d->h, &u)))
		gpu_set(o, id, div == 1 ? u : u / div);
}

/* The getters of one 64-bit count or mask. */
static void read_ull(gpu_dev *d, gpu_values *o, ull_getter fn, gpu_metric_id id)
{
	unsigned long long u;
	if (fn && gpu_ok(d, fn(d->h, &u)))
		gpu_set(o, id, (double)u);
}

/* An on/off state as 1/0. */
static void read_flag(gpu_dev *d, gpu_values *o, state_getter fn, gpu_metric_id id)
{
	nvmlEnableState_t e;
	if (fn && gpu_ok(d, fn(d->h, &e)))
		gpu_set(o, id, e == NVML_FEATURE_ENABLED);
}

bool gpu_read_text(gpu_text_getter fn, nvmlDevice_t h, bool *lost, char *buf, size_t len)
{
	if (fn && gpu_rc_ok(lost, fn(h, buf, (unsigned)len)))
		return true;
	buf[0] = '\0';
	return false;
}

nvmlReturn_t gpu_read_mem(gpu_ctx *c, nvmlDevice_t h, bool *lost, gpu_memory *m)
{
	nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
	memset(m, 0, sizeof *m);
	if (c->api.nvmlDeviceGetMemoryInfo_v2) {
		nvmlMemory_v2_t v2 = {.version = nvmlMemory_v2};
		rc = c->api.nvmlDeviceGetMemoryInfo_v2(h, &v2);
		if (gpu_rc_ok(lost, rc)) {
			*m = (gpu_memory){v2.total, v2.reserved, v2.used, v2.free, true};
			return rc;
		}
		if (__atomic_load_n(lost, __ATOMIC_RELAXED))
			return rc;
	}
	if (c->api.nvmlDeviceGetMemoryInfo) {
		nvmlMemory_t v1;
		/* v1's used includes reserved memory; reserved itself is unknown. */
		rc = c->api.nvmlDeviceGetMemoryInfo(h, &v1);
		if (gpu_rc_ok(lost, rc))
			*m = (gpu_memory){v1.total, 0, v1.used, v1.free, false};
	}
	return rc;
}

nvmlReturn_t gpu_read_mig_mode(gpu_ctx *c, nvmlDevice_t h, unsigned *cur, unsigned *pend)
{
	if (!c->api.nvmlDeviceGetMigMode)
		return NVML_ERROR_FUNCTION_NOT_FOUND;
	return c->api.nvmlDeviceGetMigMode(h, cur, pend);
}

static void rd_identity(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	gpu_set(o, GM_INDEX, d->st.index);
	gpu_set(o, GM_COUNT, c->n_all);
	read_uint(d, o, c->api.nvmlDeviceGetMinorNumber, GM_MINOR, 1);
	if (d->st.arch)
		gpu_set(o, GM_ARCH, d->st.arch);
	int maj, min;
	if (c->api.nvmlDeviceGetCudaComputeCapability &&
	    gpu_ok(d, c->api.nvmlDeviceGetCudaComputeCapability(d->h, &maj, &min)))
		gpu_set(o, GM_COMPUTE_CAP, maj + min / 10.0);
}

static void rd_modes(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	nvmlEnableState_t e;
	nvmlComputeMode_t m;
	unsigned cur, pend;
	if (c->api.nvmlDeviceGetPersistenceMode &&
	    gpu_ok(d, c->api.nvmlDeviceGetPersistenceMode(d->h, &e)))
		gpu_set(o, GM_PERSISTENCE, e);
	if (c->api.nvmlDeviceGetComputeMode && gpu_ok(d, c->api.nvmlDeviceGetComputeMode(d->h, &m)))
		gpu_set(o, GM_COMPUTE_MODE, m);
	if (gpu_ok(d, gpu_read_mig_mode(c, d->h, &cur, &pend))) {
		gpu_set(o, GM_MIG_CURRENT, cur);
		gpu_set(o, GM_MIG_PENDING, pend);
	}
}

static void rd_util(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	nvmlUtilization_t u;
	if (c->api.nvmlDeviceGetUtilizationRates &&
	    gpu_ok(d, c->api.nvmlDeviceGetUtilizationRates(d->h, &u))) {
		gpu_set(o, GM_UTIL_GPU, u.gpu);
		gpu_set(o, GM_UTIL_MEM, u.memory);
	}
}

static void rd_codec(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	const struct {
		nvmlReturn_t (*fn)(nvmlDevice_t, unsigned *, unsigned *);
		gpu_metric_id id;
	} engines[] = {
	    {c->api.nvmlDeviceGetEncoderUtilization, GM_UTIL_ENC},
	    {c->api.nvmlDeviceGetDecoderUtilization, GM_UTIL_DEC},
	    {c->api.nvmlDeviceGetJpgUtilization, GM_UTIL_JPG},
	    {c->api.nvmlDeviceGetOfaUtilization, GM_UTIL_OFA},
	};
	for (size_t k = 0; k < sizeof engines / sizeof *engines; k++) {
		unsigned u, period;
		if (engines[k].fn && gpu_ok(d, engines[k].fn(d->h, &u, &period)))
			gpu_set(o, engines[k].id, u);
	}
}

/* The driver's own high-rate utilization history: shows 0<->100 % at 1 Hz polling. */
static void rd_samples(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	if (!c->api.nvmlDeviceGetSamples)
		return;
	nvmlValueType_t vt;
	unsigned n = 0;
	nvmlReturn_t rc = c->api.nvmlDeviceGetSamples(d->h, NVML_GPU_UTILIZATION_SAMPLES,
	                                              d->util_last_ts, &vt, &n, NULL);
	if (rc != NVML_SUCCESS && rc != NVML_ERROR_INSUFFICIENT_SIZE) {
		gpu_ok(d, rc);
		return;
	}
	if (n == 0 || n > 100000)
		return;
	nvmlSample_t *s = calloc(n, sizeof *s);
	if (!s)
		return;
	rc = c->api.nvmlDeviceGetSamples(d->h, NVML_GPU_UTILIZATION_SAMPLES, d->util_last_ts, &vt,
	                                 &n, s);
	if (gpu_ok(d, rc) && n > 0) {
		double mn = 1e300, mx = -1e300;
		unsigned idle = 0;
		for (unsigned k = 0; k < n; k++) {
			double v = gpu_nvml_value(vt, s[k].sampleValue);
			mn = v < mn ? v : mn;
			mx = v > mx ? v : mx;
			idle += v <= 5.0;
			if (s[k].timeStamp > d->util_last_ts)
				d->util_last_ts = s[k].timeStamp;
		}
		gpu_set(o, GM_UTIL_SAMPLES_MIN, mn);
		gpu_set(o, GM_UTIL_SAMPLES_MAX, mx);
		gpu_set(o, GM_UTIL_SAMPLES_IDLE, 100.0 * idle / n);
	}
	free(s);
}

static void rd_mem(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	gpu_memory m;
	if (!gpu_ok(d, gpu_read_mem(c, d->h, &d->lost, &m)))
		return;
	gpu_set(o, GM_MEM_TOTAL, gpu_mib_up(m.total));
	if (m.reserved_ok)
		gpu_set(o, GM_MEM_RESERVED, gpu_mib_up(m.reserved));
	gpu_set(o, GM_MEM_USED, gpu_mib_up(m.used));
	gpu_set(o, GM_MEM_FREE, gpu_mib_up(m.free));
	o->mem_total_b = m.total;
	o->mem_used_b = m.used;
	o->mem_free_b = m.free;
}

static void rd_bar1(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	nvmlBAR1Memory_t b;
	if (c->api.nvmlDeviceGetBAR1MemoryInfo &&
	    gpu_ok(d, c->api.nvmlDeviceGetBAR1MemoryInfo(d->h, &b))) {
		gpu_set(o, GM_BAR1_TOTAL, (double)(b.bar1Total / MIB));
		gpu_set(o, GM_BAR1_USED, (double)(b.bar1Used / MIB));
	}
}

static void rd_power(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	read_uint(d, o, c->api.nvmlDeviceGetPowerUsage, GM_POWER_DRAW, 1000.0);
}

static void rd_power_limits(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	read_uint(d, o, c->api.nvmlDeviceGetPowerManagementLimit, GM_POWER_LIMIT, 1000.0);
	read_uint(d, o, c->api.nvmlDeviceGetPowerManagementDefaultLimit, GM_POWER_DEFAULT_LIMIT,
	          1000.0);
	read_uint(d, o, c->api.nvmlDeviceGetEnforcedPowerLimit, GM_POWER_ENFORCED_LIMIT, 1000.0);
	unsigned mn, mx;
	if (c->api.nvmlDeviceGetPowerManagementLimitConstraints &&
	    gpu_ok(d, c->api.nvmlDeviceGetPowerManagementLimitConstraints(d->h, &mn, &mx))) {
		gpu_set(o, GM_POWER_MIN_LIMIT, mn / 1000.0);
		gpu_set(o, GM_POWER_MAX_LIMIT, mx / 1000.0);
	}
}

static void rd_energy(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	read_ull(d, o, c->api.nvmlDeviceGetTotalEnergyConsumption, GM_ENERGY);
}

static void rd_temp(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned t;
	/* Readings above 200 C are sensor garbage, not temperatures. */
	if (c->api.nvmlDeviceGetTemperature &&
	    gpu_ok(d, c->api.nvmlDeviceGetTemperature(d->h, NVML_TEMPERATURE_GPU, &t)) && t <= 200)
		gpu_set(o, GM_TEMP_GPU, t);
}

/*
 * Two cumulative byte counters read at moments now: the deltas since the
 * previous reading, false on the first one or after a counter went back.
 */
/*
 * The rates of two cumulative counters since the reference reading, when it
 * lies at least min_ns back; a younger reference is kept (the rate is absent
 * until one spans a whole window), a counter that went back starts again.
 */
static bool pair_delta(gpu_pair_rate *p, unsigned long long tx, unsigned long long rx, int64_t now,
                       int64_t min_ns, unsigned long long *dtx, unsigned long long *drx, double *dt)
{
	bool mono = p->ok && now >= p->t && tx >= p->tx && rx >= p->rx;
	if (mono && now - p->t < min_ns)
		return false;
	bool ok = mono && now > p->t;
	if (ok) {
		*dtx = tx - p->tx;
		*drx = rx - p->rx;
		*dt = (double)(now - p->t) / 1e9;
	}
	*p = (gpu_pair_rate){true, now, tx, rx};
	return ok;
}

static void rd_fields(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	if (!c->api.nvmlDeviceGetFieldValues)
		return;
	nvmlFieldValue_t f[3];
	memset(f, 0, sizeof f);
	f[0].fieldId = NVML_FI_DEV_MEMORY_TEMP;
	f[1].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
	f[1].scopeId = 0xFFFFFFFFu;
	f[2].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
	f[2].scopeId = 0xFFFFFFFFu;
	if (!gpu_ok(d, c->api.nvmlDeviceGetFieldValues(d->h, 3, f)))
		return;
	/* NVML fills uiVal for memory temperature whatever valueType says. */
	if (f[0].nvmlReturn == NVML_SUCCESS && f[0].value.uiVal <= 200)
		gpu_set(o, GM_TEMP_MEM, f[0].value.uiVal);
	if (f[1].nvmlReturn != NVML_SUCCESS || f[2].nvmlReturn != NVML_SUCCESS)
		return;
	unsigned long long tx = (unsigned long long)gpu_nvml_value(f[1].valueType, f[1].value);
	unsigned long long rx = (unsigned long long)gpu_nvml_value(f[2].valueType, f[2].value);
	unsigned long long dtx, drx;
	double dt;
	/* A rate, as dcgm-exporter exports it despite the name: KiB/s / 1000. */
	if (pair_delta(&d->nvl, tx, rx, gw_mono_ns(), GPU_NVML_RATE_NS, &dtx, &drx, &dt))
		gpu_set(o, GM_NVLINK_BW,
		        (double)(unsigned long long)((double)(dtx + drx) / dt / 1000.0));
}

static void rd_thresholds(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	static const struct {
		gpu_metric_id id;
		nvmlTemperatureThresholds_t which;
	} th[] = {
	    {GM_TEMP_SLOWDOWN, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN},
	    {GM_TEMP_SHUTDOWN, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN},
	};
	if (!c->api.nvmlDeviceGetTemperatureThreshold)
		return;
	for (size_t k = 0; k < sizeof th / sizeof *th; k++) {
		unsigned t;
		if (gpu_ok(d, c->api.nvmlDeviceGetTemperatureThreshold(d->h, th[k].which, &t)))
			gpu_set(o, th[k].id, t);
	}
}

static void rd_fan(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	read_uint(d, o, c->api.nvmlDeviceGetFanSpeed, GM_FAN, 1);
}

/* The four clock getters differ in entry point, not in shape. */
typedef enum { CLK_CURRENT, CLK_MAX, CLK_APP, CLK_DEFAULT_APP } clock_kind;

typedef struct {
	gpu_metric_id id;
	nvmlClockType_t type;
} clock_map;

/* false when the driver lacks the entry point of kind k. */
static bool get_clock(gpu_ctx *c, nvmlDevice_t h, clock_kind k, nvmlClockType_t t, unsigned *mhz,
                      nvmlReturn_t *rc)
{
	if (k == CLK_DEFAULT_APP) {
		if (!c->api.nvmlDeviceGetClock)
			return false;
		*rc = c->api.nvmlDeviceGetClock(h, t, NVML_CLOCK_ID_APP_CLOCK_DEFAULT, mhz);
		return true;
	}
	nvmlReturn_t (*fn)(nvmlDevice_t, nvmlClockType_t, unsigned *) =
	    k == CLK_CURRENT ? c->api.nvmlDeviceGetClockInfo
	    : k == CLK_MAX   ? c->api.nvmlDeviceGetMaxClockInfo
	                     : c->api.nvmlDeviceGetApplicationsClock;
	if (!fn)
		return false;
	*rc = fn(h, t, mhz);
	return true;
}

/* Application clocks are deprecated on new drivers, and nvidia-smi says so. */
static void read_clocks(gpu_ctx *c, gpu_dev *d, gpu_values *o, clock_kind kind, const clock_map *m,
                        size_t n)
{
	for (size_t k = 0; k < n; k++) {
		unsigned mhz;
		nvmlReturn_t rc;
		if (!get_clock(c, d->h, kind, m[k].type, &mhz, &rc))
			return;
		if (gpu_ok(d, rc))
			gpu_set(o, m[k].id, mhz);
		else if (kind == CLK_APP || kind == CLK_DEFAULT_APP)
			why_absent(o, m[k].id, rc);
	}
}

static void rd_clocks(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	static const clock_map m[] = {{GM_CLK_GR, NVML_CLOCK_GRAPHICS},
	                              {GM_CLK_SM, NVML_CLOCK_SM},
	                              {GM_CLK_MEM, NVML_CLOCK_MEM},
	                              {GM_CLK_VIDEO, NVML_CLOCK_VIDEO}};
	read_clocks(c, d, o, CLK_CURRENT, m, sizeof m / sizeof *m);
}

static void rd_max_clocks(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	static const clock_map m[] = {{GM_CLK_MAX_GR, NVML_CLOCK_GRAPHICS},
	                              {GM_CLK_MAX_SM, NVML_CLOCK_SM},
	                              {GM_CLK_MAX_MEM, NVML_CLOCK_MEM}};
	read_clocks(c, d, o, CLK_MAX, m, sizeof m / sizeof *m);
}

static void rd_app_clocks(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	static const clock_map m[] = {{GM_CLK_APP_GR, NVML_CLOCK_GRAPHICS},
	                              {GM_CLK_APP_MEM, NVML_CLOCK_MEM}};
	read_clocks(c, d, o, CLK_APP, m, sizeof m / sizeof *m);
}

static void rd_def_app_clocks(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	static const clock_map m[] = {{GM_CLK_DEF_APP_GR, NVML_CLOCK_GRAPHICS},
	                              {GM_CLK_DEF_APP_MEM, NVML_CLOCK_MEM}};
	read_clocks(c, d, o, CLK_DEFAULT_APP, m, sizeof m / sizeof *m);
}

static void rd_supported_reasons(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	read_ull(d, o, c->api.nvmlDeviceGetSupportedClocksEventReasons, GM_CLK_R_SUPPORTED);
}

static void rd_reasons(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	static const struct {
		gpu_metric_id id;
		unsigned long long bit;
	} bits[] = {
	    {GM_CLK_R_IDLE, nvmlClocksEventReasonGpuIdle},
	    {GM_CLK_R_APP, nvmlClocksEventReasonApplicationsClocksSetting},
	    {GM_CLK_R_SW_POWER, nvmlClocksEventReasonSwPowerCap},
	    {GM_CLK_R_HW_SLOW, nvmlClocksThrottleReasonHwSlowdown},
	    {GM_CLK_R_SYNC_BOOST, nvmlClocksEventReasonSyncBoost},
	    {GM_CLK_R_SW_THERMAL, nvmlClocksEventReasonSwThermalSlowdown},
	    {GM_CLK_R_HW_THERMAL, nvmlClocksThrottleReasonHwThermalSlowdown},
	    {GM_CLK_R_HW_POWER_BRAKE, nvmlClocksThrottleReasonHwPowerBrakeSlowdown},
	};
	unsigned long long mask;
	nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
	if (c->api.nvmlDeviceGetCurrentClocksEventReasons)
		rc = c->api.nvmlDeviceGetCurrentClocksEventReasons(d->h, &mask);
	if (rc != NVML_SUCCESS && !gpu_lost(d) && c->api.nvmlDeviceGetCurrentClocksThrottleReasons)
		rc = c->api.nvmlDeviceGetCurrentClocksThrottleReasons(d->h, &mask);
	if (!gpu_ok(d, rc))
		return;
	gpu_set(o, GM_CLK_REASONS, (double)mask);
	for (unsigned k = 0; k < sizeof bits / sizeof *bits; k++)
		gpu_set(o, bits[k].id, (mask & bits[k].bit) ? 1 : 0);
}

static void rd_pstate(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	nvmlPstates_t p;
	if (c->api.nvmlDeviceGetPerformanceState &&
	    gpu_ok(d, c->api.nvmlDeviceGetPerformanceState(d->h, &p)) && p >= 0 && p <= 15)
		gpu_set(o, GM_PSTATE, p);
}

static void rd_pcie_link(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	read_uint(d, o, c->api.nvmlDeviceGetCurrPcieLinkGeneration, GM_PCIE_GEN_CUR, 1);
	if (o->ok[GM_PCIE_GEN_CUR])
		gpu_set(o, GM_PCIE_GEN_GPUCUR, o->v[GM_PCIE_GEN_CUR]);
	read_uint(d, o, c->api.nvmlDeviceGetCurrPcieLinkWidth, GM_PCIE_WIDTH_CUR, 1);
}

static void rd_pcie_link_max(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	read_uint(d, o, c->api.nvmlDeviceGetMaxPcieLinkGeneration, GM_PCIE_GEN_MAX, 1);
	read_uint(d, o, c->api.nvmlDeviceGetGpuMaxPcieLinkGeneration, GM_PCIE_GEN_GPUMAX, 1);
	read_uint(d, o, c->api.nvmlDeviceGetMaxPcieLinkWidth, GM_PCIE_WIDTH_MAX, 1);
}

/* The cumulative PCIe byte counters (non-blocking), when the driver has them. */
static bool pcie_counters(gpu_ctx *c, gpu_dev *d, unsigned long long *tx, unsigned long long *rx)
{
	if (!c->api.nvmlDeviceGetFieldValues)
		return false;
	nvmlFieldValue_t f[2];
	memset(f, 0, sizeof f);
	f[0].fieldId = NVML_FI_DEV_PCIE_COUNT_TX_BYTES;
	f[1].fieldId = NVML_FI_DEV_PCIE_COUNT_RX_BYTES;
	if (!gpu_ok(d, c->api.nvmlDeviceGetFieldValues(d->h, 2, f)) ||
	    f[0].nvmlReturn != NVML_SUCCESS || f[1].nvmlReturn != NVML_SUCCESS)
		return false;
	*tx = (unsigned long long)gpu_nvml_value(f[0].valueType, f[0].value);
	*rx = (unsigned long long)gpu_nvml_value(f[1].valueType, f[1].value);
	return true;
}

/*
 * PCIe throughput: the byte counters when the driver has them, else
 * nvmlDeviceGetPcieThroughput, which blocks ~20 ms per call; that is why
 * this reader is on the slow cadence.
 */
static void rd_pcie_throughput(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned long long tx, rx, dtx, drx;
	double dt;
	if (pcie_counters(c, d, &tx, &rx)) {
		if (pair_delta(&d->pcie, tx, rx, gw_mono_ns(), c->pcie_min_ns, &dtx, &drx, &dt)) {
			gpu_set(o, GM_PCIE_TX, (double)dtx / dt / 1048576.0);
			gpu_set(o, GM_PCIE_RX, (double)drx / dt / 1048576.0);
		}
		return;
	}
	unsigned kb;
	if (gpu_lost(d) || !c->api.nvmlDeviceGetPcieThroughput)
		return;
	if (gpu_ok(d, c->api.nvmlDeviceGetPcieThroughput(d->h, NVML_PCIE_UTIL_TX_BYTES, &kb)))
		gpu_set(o, GM_PCIE_TX, kb / 1024.0);
	if (gpu_ok(d, c->api.nvmlDeviceGetPcieThroughput(d->h, NVML_PCIE_UTIL_RX_BYTES, &kb)))
		gpu_set(o, GM_PCIE_RX, kb / 1024.0);
}

static void rd_pcie_replay(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	read_uint(d, o, c->api.nvmlDeviceGetPcieReplayCounter, GM_PCIE_REPLAY, 1);
}

static void rd_ecc(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	static const struct {
		gpu_metric_id id;
		int err, counter;
	} e[] = {
	    {GM_ECC_CORR_VOL, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC},
	    {GM_ECC_UNCORR_VOL, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC},
	    {GM_ECC_CORR_AGG, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC},
	    {GM_ECC_UNCORR_AGG, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC},
	};
	if (!c->api.nvmlDeviceGetTotalEccErrors)
		return;
	for (unsigned k = 0; k < sizeof e / sizeof *e && !gpu_lost(d); k++) {
		unsigned long long n;
		if (gpu_ok(d, c->api.nvmlDeviceGetTotalEccErrors(d->h, e[k].err, e[k].counter, &n)))
			gpu_set(o, e[k].id, (double)n);
	}
}

static void rd_retired(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	static const struct {
		gpu_metric_id id;
		nvmlPageRetirementCause_t cause;
	} causes[] = {
	    {GM_RETIRED_SBE, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS},
	    {GM_RETIRED_DBE, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR},
	};
	for (size_t k = 0; c->api.nvmlDeviceGetRetiredPages && k < 2; k++) {
		/* pageCount 0 asks for the count only; drivers answer SUCCESS or INSUFFICIENT_SIZE.
		 */
		unsigned n = 0;
		nvmlReturn_t rc = c->api.nvmlDeviceGetRetiredPages(d->h, causes[k].cause, &n, NULL);
		if (rc == NVML_SUCCESS || rc == NVML_ERROR_INSUFFICIENT_SIZE)
			gpu_set(o, causes[k].id, n);
		else
			gpu_ok(d, rc);
	}
	nvmlEnableState_t p;
	if (c->api.nvmlDeviceGetRetiredPagesPendingStatus &&
	    gpu_ok(d, c->api.nvmlDeviceGetRetiredPagesPendingStatus(d->h, &p)))
		gpu_set(o, GM_RETIRED_PENDING, p);
}

static void rd_remap(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned cor, unc, pend, fail;
	if (c->api.nvmlDeviceGetRemappedRows &&
	    gpu_ok(d, c->api.nvmlDeviceGetRemappedRows(d->h, &cor, &unc, &pend, &fail))) {
		gpu_set(o, GM_REMAP_CORR, cor);
		gpu_set(o, GM_REMAP_UNCORR, unc);
		gpu_set(o, GM_REMAP_PENDING, pend);
		gpu_set(o, GM_REMAP_FAILURE, fail);
	}
}

static const struct {
	gpu_metric_id id;
	unsigned gpm;
	double scale; /* GPM gives MiB/s for bandwidth; the table keeps bytes/s */
} gpm_map[GPU_GPM_METRICS] = {
    {GM_GPM_GR_ACTIVE, NVML_GPM_METRIC_GRAPHICS_UTIL, 1},
    {GM_GPM_SM_ACTIVE, NVML_GPM_METRIC_SM_UTIL, 1},
    {GM_GPM_SM_OCCUPANCY, NVML_GPM_METRIC_SM_OCCUPANCY, 1},
    {GM_GPM_TENSOR_ACTIVE, NVML_GPM_METRIC_ANY_TENSOR_UTIL, 1},
    {GM_GPM_DRAM_ACTIVE, NVML_GPM_METRIC_DRAM_BW_UTIL, 1},
    {GM_GPM_PCIE_TX, NVML_GPM_METRIC_PCIE_TX_PER_SEC, 1048576.0},
    {GM_GPM_PCIE_RX, NVML_GPM_METRIC_PCIE_RX_PER_SEC, 1048576.0},
};

/* The metrics of the interval between d's two GPM samples into d->gpm_v. */
static void gpm_compute(gpu_ctx *c, gpu_dev *d)
{
	nvmlGpmMetricsGet_t *m = d->gpm_req;
	memset(m, 0,
	       offsetof(nvmlGpmMetricsGet_t, metrics) + GPU_GPM_METRICS * sizeof m->metrics[0]);
	m->version = NVML_GPM_METRICS_GET_VERSION;
	m->numMetrics = GPU_GPM_METRICS;
	m->sample1 = d->gpm_prev;
	m->sample2 = d->gpm_cur;
	for (int k = 0; k < GPU_GPM_METRICS; k++)
		m->metrics[k].metricId = gpm_map[k].gpm;
	if (c->api.nvmlGpmMetricsGet(m) != NVML_SUCCESS)
		return;
	for (int k = 0; k < GPU_GPM_METRICS; k++) {
		double v = m->metrics[k].value;
		d->gpm_ok[k] =
		    m->metrics[k].nvmlReturn == NVML_SUCCESS && v == v; /* NaN is absent */
		d->gpm_v[k] = v * gpm_map[k].scale;
	}
	d->gpm_have_vals = true;
}

/*
 * GPM: two samples at least 100 ms apart give the activity ratios of the
 * interval between them. Faster callers get the last interval's values.
 */
static void rd_gpm(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	if (!d->st.gpm_supported || !d->gpm_req || !d->gpm_prev || !d->gpm_cur)
		return;
	int64_t now = gw_mono_ns();
	if (d->gpm_prev_t && now - d->gpm_prev_t >= GPM_MIN_INTERVAL_NS) {
		if (gpu_ok(d, c->api.nvmlGpmSampleGet(d->h, d->gpm_cur))) {
			gpm_compute(c, d);
			nvmlGpmSample_t t = d->gpm_prev;
			d->gpm_prev = d->gpm_cur;
			d->gpm_cur = t;
			d->gpm_prev_t = now;
		}
	} else if (!d->gpm_prev_t) {
		if (gpu_ok(d, c->api.nvmlGpmSampleGet(d->h, d->gpm_prev)))
			d->gpm_prev_t = now;
	}
	if (d->gpm_have_vals)
		for (int k = 0; k < GPU_GPM_METRICS; k++)
			if (d->gpm_ok[k])
				gpu_set(o, gpm_map[k].id, d->gpm_v[k]);
}

/*
 * Xid errors arrive as NVML events on one set shared by all GPUs: drain it
 * without waiting (timeout 0) and keep the last Xid of each GPU, the value
 * dcgm-exporter publishes. 0 means none seen since gpuwhy started.
 */
void gpu_read_xid(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	if (!d->xid_ok)
		return;
	nvmlEventData_t ev;
	pthread_mutex_lock(&c->xid_mu);
	for (int k = 0; k < 64 && c->api.nvmlEventSetWait_v2(c->xid_set, &ev, 0) == NVML_SUCCESS;
	     k++) {
		if (!(ev.eventType & nvmlEventTypeXidCriticalError))
			continue;
		for (int i = 0; i < c->n; i++)
			if (c->dev[i].h == ev.device) {
				gpu_dev *x = &c->dev[i];
				x->xid_last = ev.eventData;
				/* Kept for the events table; a flood past 16 per sample is cut. */
				if (x->nxid_new < (int)(sizeof x->xid_new / sizeof *x->xid_new))
					x->xid_new[x->nxid_new++] = ev.eventData;
			}
	}
	gpu_set(o, GM_XID_LAST, (double)d->xid_last);
	pthread_mutex_unlock(&c->xid_mu);
}

static void rd_pci(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	(void)c;
	if (!d->st.pci_ok)
		return;
	gpu_set(o, GM_PCI_DOMAIN, d->st.pci_domain);
	gpu_set(o, GM_PCI_BUS, d->st.pci_bus);
	gpu_set(o, GM_PCI_DEVICE, d->st.pci_device);
	gpu_set(o, GM_PCI_DEVICE_ID, d->st.pci_device_id);
	gpu_set(o, GM_PCI_SUB_DEVICE_ID, d->st.pci_subsystem_id);
}

static void rd_display(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	/* nvidia-smi's display_attached is NVML's display mode: a monitor is connected. */
	read_flag(d, o, c->api.nvmlDeviceGetDisplayMode, GM_DISPLAY_ATTACHED);
	read_flag(d, o, c->api.nvmlDeviceGetDisplayActive, GM_DISPLAY_ACTIVE);
}

static void rd_accounting(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	read_flag(d, o, c->api.nvmlDeviceGetAccountingMode, GM_ACCOUNTING_MODE);
	read_uint(d, o, c->api.nvmlDeviceGetAccountingBufferSize, GM_ACCOUNTING_BUFFER, 1);
}

static void rd_enc_stats(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned n, fps, lat;
	if (c->api.nvmlDeviceGetEncoderStats &&
	    gpu_ok(d, c->api.nvmlDeviceGetEncoderStats(d->h, &n, &fps, &lat))) {
		gpu_set(o, GM_ENC_SESSIONS, n);
		gpu_set(o, GM_ENC_FPS, fps);
		gpu_set(o, GM_ENC_LATENCY, lat);
	}
}

/* Field values read by id into metrics; scale turns NVML's unit into the table's. */
typedef struct {
	gpu_metric_id id;
	unsigned field;
	double scale;
} field_map;

static void read_fields(gpu_ctx *c, gpu_dev *d, gpu_values *o, const field_map *m, int n)
{
	nvmlFieldValue_t f[16];
	if (!c->api.nvmlDeviceGetFieldValues || n > 16)
		return;
	memset(f, 0, sizeof f);
	for (int k = 0; k < n; k++)
		f[k].fieldId = m[k].field;
	if (!gpu_ok(d, c->api.nvmlDeviceGetFieldValues(d->h, n, f)))
		return;
	for (int k = 0; k < n; k++)
		if (f[k].nvmlReturn == NVML_SUCCESS)
			gpu_set(o, m[k].id,
			        gpu_nvml_value(f[k].valueType, f[k].value) * m[k].scale);
}

static void rd_power_fields(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	static const field_map m[] = {
	    {GM_POWER_AVG, NVML_FI_DEV_POWER_AVERAGE, 0.001},
	    {GM_POWER_INSTANT, NVML_FI_DEV_POWER_INSTANT, 0.001},
	};
	read_fields(c, d, o, m, 2);
}

static void rd_pcie_errors(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	static const field_map m[] = {
	    {GM_PCIE_ERR_CORRECTABLE, NVML_FI_DEV_PCIE_COUNT_CORRECTABLE_ERRORS, 1},
	    {GM_PCIE_ERR_RECEIVER, NVML_FI_DEV_PCIE_COUNT_RECEIVER_ERROR, 1},
	    {GM_PCIE_ERR_BAD_TLP, NVML_FI_DEV_PCIE_COUNT_BAD_TLP, 1},
	    {GM_PCIE_ERR_BAD_DLLP, NVML_FI_DEV_PCIE_COUNT_BAD_DLLP, 1},
	    {GM_PCIE_ERR_NAKS_RECEIVED, NVML_FI_DEV_PCIE_COUNT_NAKS_RECEIVED, 1},
	    {GM_PCIE_ERR_NAKS_SENT, NVML_FI_DEV_PCIE_COUNT_NAKS_SENT, 1},
	    {GM_PCIE_ERR_L0_TO_RECOVERY, NVML_FI_DEV_PCIE_L0_TO_RECOVERY_COUNTER, 1},
	};
	read_fields(c, d, o, m, 7);
}

static void rd_ecc_mode(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	nvmlEnableState_t cur, pend;
	if (c->api.nvmlDeviceGetEccMode &&
	    gpu_ok(d, c->api.nvmlDeviceGetEccMode(d->h, &cur, &pend))) {
		gpu_set(o, GM_ECC_MODE_CUR, cur == NVML_FEATURE_ENABLED);
		gpu_set(o, GM_ECC_MODE_PEND, pend == NVML_FEATURE_ENABLED);
	}
}

/* ecc.errors.<type>.<counter>.<location>: the table's rows run location-fastest. */
_Static_assert(GM_ECC_UNCORR_AGG_SRAM == GM_ECC_CORR_VOL_DEVICE_MEMORY + 31,
               "metrics.def keeps the ECC detail rows together");

static void rd_ecc_detail(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	static const int locs[8] = {
	    NVML_MEMORY_LOCATION_DEVICE_MEMORY, NVML_MEMORY_LOCATION_DRAM,
	    NVML_MEMORY_LOCATION_REGISTER_FILE, NVML_MEMORY_LOCATION_L1_CACHE,
	    NVML_MEMORY_LOCATION_L2_CACHE,      NVML_MEMORY_LOCATION_TEXTURE_MEMORY,
	    NVML_MEMORY_LOCATION_CBU,           NVML_MEMORY_LOCATION_SRAM,
	};
	static const int types[2] = {NVML_MEMORY_ERROR_TYPE_CORRECTED,
	                             NVML_MEMORY_ERROR_TYPE_UNCORRECTED};
	static const int counters[2] = {NVML_VOLATILE_ECC, NVML_AGGREGATE_ECC};
	if (!c->api.nvmlDeviceGetMemoryErrorCounter)
		return;
	int id = GM_ECC_CORR_VOL_DEVICE_MEMORY;
	for (int t = 0; t < 2; t++)
		for (int k = 0; k < 2; k++)
			for (int l = 0; l < 8 && !gpu_lost(d); l++, id++) {
				unsigned long long n;
				if (gpu_ok(d, c->api.nvmlDeviceGetMemoryErrorCounter(
				                  d->h, types[t], counters[k], locs[l], &n)))
					gpu_set(o, (gpu_metric_id)id, (double)n);
			}
}

static void rd_remap_hist(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	nvmlRowRemapperHistogramValues_t h;
	if (!c->api.nvmlDeviceGetRowRemapperHistogram ||
	    !gpu_ok(d, c->api.nvmlDeviceGetRowRemapperHistogram(d->h, &h)))
		return;
	gpu_set(o, GM_REMAP_HIST_MAX, h.max);
	gpu_set(o, GM_REMAP_HIST_HIGH, h.high);
	gpu_set(o, GM_REMAP_HIST_PARTIAL, h.partial);
	gpu_set(o, GM_REMAP_HIST_LOW, h.low);
	gpu_set(o, GM_REMAP_HIST_NONE, h.none);
}

static const reader_fn readers[R__COUNT] = {
    [R_IDENTITY] = rd_identity,
    [R_MODES] = rd_modes,
    [R_UTIL] = rd_util,
    [R_CODEC] = rd_codec,
    [R_SAMPLES] = rd_samples,
    [R_MEM] = rd_mem,
    [R_BAR1] = rd_bar1,
    [R_POWER] = rd_power,
    [R_POWER_LIMITS] = rd_power_limits,
    [R_ENERGY] = rd_energy,
    [R_TEMP] = rd_temp,
    [R_FIELDS] = rd_fields,
    [R_THRESHOLDS] = rd_thresholds,
    [R_FAN] = rd_fan,
    [R_CLOCKS] = rd_clocks,
    [R_MAX_CLOCKS] = rd_max_clocks,
    [R_APP_CLOCKS] = rd_app_clocks,
    [R_REASONS] = rd_reasons,
    [R_PSTATE] = rd_pstate,
    [R_PCIE_LINK] = rd_pcie_link,
    [R_PCIE_LINK_MAX] = rd_pcie_link_max,
    [R_PCIE_THROUGHPUT] = rd_pcie_throughput,
    [R_PCIE_REPLAY] = rd_pcie_replay,
    [R_ECC] = rd_ecc,
    [R_RETIRED] = rd_retired,
    [R_REMAP] = rd_remap,
    [R_GPM] = rd_gpm,
    [R_XID] = gpu_read_xid,
    [R_PCI] = rd_pci,
    [R_DISPLAY] = rd_display,
    [R_ACCOUNTING] = rd_accounting,
    [R_ENC_STATS] = rd_enc_stats,
    [R_POWER_FIELDS] = rd_power_fields,
    [R_DEF_APP_CLOCKS] = rd_def_app_clocks,
    [R_SUPPORTED_REASONS] = rd_supported_reasons,
    [R_PCIE_ERRORS] = rd_pcie_errors,
    [R_ECC_MODE] = rd_ecc_mode,
    [R_ECC_DETAIL] = rd_ecc_detail,
    [R_REMAP_HIST] = rd_remap_hist,
    [R_NONE] = NULL, /* names gpuwhy accepts but cannot read: always absent */
};

static gpu_reader_kind reader_kinds[R__COUNT];
static pthread_once_t reader_once = PTHREAD_ONCE_INIT;

static void reader_kinds_init(void)
{
	for (int r = 0; r < R__COUNT; r++)
		reader_kinds[r] = RK_STATIC;
	for (int i = 0; i < GM__COUNT; i++) {
		gpu_reader_kind k = gpu_metrics[i].cadence == GMC_FAST   ? RK_FAST
		                    : gpu_metrics[i].cadence == GMC_SLOW ? RK_SLOW
		                                                         : RK_STATIC;
		if (k > reader_kinds[gpu_metrics[i].reader])
			reader_kinds[gpu_metrics[i].reader] = k;
	}
}

gpu_reader_kind gpu_reader_kind_of(gpu_reader id)
{
	pthread_once(&reader_once, reader_kinds_init);
	return reader_kinds[id];
}

void gpu_run_readers(gpu_ctx *c, gpu_dev *d, gpu_reader_kind kind, gpu_values *o)
{
	for (int r = 0; r < R__COUNT && !gpu_lost(d); r++)
		if (gpu_reader_kind_of((gpu_reader)r) == kind && readers[r])
			readers[r](c, d, o);
}

void gpu_prime_rates(gpu_ctx *c, gpu_dev *d)
{
	gpu_values tmp;
	memset(&tmp, 0, sizeof tmp);
	rd_samples(c, d, &tmp);
	rd_fields(c, d, &tmp);
	rd_gpm(c, d, &tmp);
	/* Only the byte counters: the 20 ms fallback is left to the slow cadence. */
	unsigned long long tx, rx;
	if (pcie_counters(c, d, &tx, &rx))
		d->pcie = (gpu_pair_rate){true, gw_mono_ns(), tx, rx};
}
