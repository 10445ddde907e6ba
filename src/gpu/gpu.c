/* gpu.c - the NVML device layer: loading, static facts, sampling, processes, topology. */
#include "gpu/gpu.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpu/calls.h"
#include "nvml_abi.h"
#include "util/err.h"
#include "util/timeutil.h"

/* NVML returns PIDs; the kernel's pid_max can be at most 2^22. */
#define GPU_PID_MAX 4194304U
#define GPM_MIN_INTERVAL_NS 100000000LL
#define RATE_WINDOW_NS 100000000LL
#define DEFAULT_SLOW_PERIOD_NS 5000000000LL

typedef struct {
#define X(ret, name, args) ret(*name) args;
	NVML_ENTRY_POINTS(X)
#undef X
} nvml_api;

typedef struct {
	nvmlDevice_t h;
	gpu_static st;
	bool lost;
	int proc_layout; /* 0 unknown, 24 or 32: bytes per nvmlProcessInfo from _v3 */
	/* rate state, touched only by the sampling thread */
	unsigned long long util_last_ts, proc_last_ts;
	bool nvl_prev_ok;
	int64_t nvl_t;
	unsigned long long nvl_tx, nvl_rx;
	nvmlGpmSample_t gpm_prev, gpm_cur;
	int64_t gpm_prev_t;
	bool gpm_have_vals;
	double gpm_v[7];
	uint8_t gpm_ok[7];
	/* rate state of the slow readers, touched only under slow_mu */
	bool pcie_prev_ok;
	int64_t pcie_t;
	unsigned long long pcie_tx, pcie_rx;
	/* STATIC and SLOW values, shared with the slow thread */
	pthread_mutex_t mu;
	double cache_v[GM__COUNT];
	uint8_t cache_ok[GM__COUNT];
	uint8_t cache_why[GM__COUNT];
	int64_t slow_t;
	pthread_mutex_t slow_mu;        /* one slow refresh at a time */
	bool xid_ok;                    /* registered for Xid events */
	unsigned long long xid_last;    /* 0 until an Xid is seen */
	unsigned long long xid_new[16]; /* Xids seen since the last gpu_xid_take() */
	int nxid_new;
} gpu_dev;

struct gpu_ctx {
	void *lib;
	char lib_path[512];
	nvml_api api;
	char driver[96];
	char cuda[16];
	char nvml_version[96];
	int n_all;
	int n;
	gpu_dev *dev; /* selected devices, n entries */
	int64_t opened_ns;
	int64_t slow_period_ns;
	nvmlGpmMetricsGet_t *gpm_req;
	nvmlEventSet_t xid_set; /* Xid events of every selected GPU, NULL when unsupported */
	pthread_t slow_thread;
	bool slow_running;
	pthread_mutex_t stop_mu;
	pthread_cond_t stop_cv;
	bool stopping;
};

typedef enum { RK_STATIC, RK_SLOW, RK_FAST } reader_kind;
static reader_kind reader_kinds[R__COUNT];
static pthread_once_t reader_once = PTHREAD_ONCE_INIT;

static void reader_kinds_init(void)
{
	for (int r = 0; r < R__COUNT; r++)
		reader_kinds[r] = RK_STATIC;
	for (int i = 0; i < GM__COUNT; i++) {
		reader_kind k = gpu_metrics[i].cadence == GMC_FAST   ? RK_FAST
		                : gpu_metrics[i].cadence == GMC_SLOW ? RK_SLOW
		                                                     : RK_STATIC;
		if (k > reader_kinds[gpu_metrics[i].reader])
			reader_kinds[gpu_metrics[i].reader] = k;
	}
}

/* ---- helpers ---- */

/* Report an open failure: print it (unless quiet) and keep it for the caller. */
static int open_fail(const gpu_open_opts *o, gpu_fail_kind kind, int nvret, int code,
                     const char *what, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
static int open_fail(const gpu_open_opts *o, gpu_fail_kind kind, int nvret, int code,
                     const char *what, const char *hint, const char *fmt, ...)
{
	char why[384];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	if (o && o->failure) {
		o->failure->kind = kind;
		o->failure->nvml_return = nvret;
		snprintf(o->failure->msg, sizeof o->failure->msg, "%s: %s%s%s%s", what, why,
		         hint ? " (" : "", hint ? hint : "", hint ? ")" : "");
	}
	if (!(o && o->quiet))
		gw_error(code, what, hint, "%s", why);
	return code;
}

static void set(gpu_values *o, gpu_metric_id id, double v)
{
	o->v[id] = v;
	o->ok[id] = 1;
}

/* Keep why a read failed where nvidia-smi prints more than [N/A]. */
static void why_absent(gpu_values *o, gpu_metric_id id, nvmlReturn_t rc)
{
	if (rc == NVML_ERROR_DEPRECATED)
		o->why[id] = GPU_WHY_DEPRECATED;
}

/* True on success. Remembers a lost GPU so later reads stop early. */
static bool ok_rc(gpu_dev *d, nvmlReturn_t rc)
{
	if (rc == NVML_ERROR_GPU_IS_LOST)
		d->lost = true;
	return rc == NVML_SUCCESS;
}

static const char *nvml_err(const gpu_ctx *c, nvmlReturn_t rc)
{
	static char buf[32];
	if (c->api.nvmlErrorString) {
		const char *s = c->api.nvmlErrorString(rc);
		if (s)
			return s;
	}
	snprintf(buf, sizeof buf, "NVML error %d", rc);
	return buf;
}

/* ---- readers: one per NVML call group (the READER column of metrics.def) ---- */

typedef void (*reader_fn)(gpu_ctx *c, gpu_dev *d, gpu_values *o);

static void rd_identity(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned u;
	set(o, GM_INDEX, d->st.index);
	set(o, GM_COUNT, c->n_all);
	if (c->api.nvmlDeviceGetMinorNumber && ok_rc(d, c->api.nvmlDeviceGetMinorNumber(d->h, &u)))
		set(o, GM_MINOR, u);
	if (d->st.arch)
		set(o, GM_ARCH, d->st.arch);
	int maj, min;
	if (c->api.nvmlDeviceGetCudaComputeCapability &&
	    ok_rc(d, c->api.nvmlDeviceGetCudaComputeCapability(d->h, &maj, &min)))
		set(o, GM_COMPUTE_CAP, maj + min / 10.0);
}

static void rd_modes(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	nvmlEnableState_t e;
	nvmlComputeMode_t m;
	unsigned cur, pend;
	if (c->api.nvmlDeviceGetPersistenceMode &&
	    ok_rc(d, c->api.nvmlDeviceGetPersistenceMode(d->h, &e)))
		set(o, GM_PERSISTENCE, e);
	if (c->api.nvmlDeviceGetComputeMode && ok_rc(d, c->api.nvmlDeviceGetComputeMode(d->h, &m)))
		set(o, GM_COMPUTE_MODE, m);
	if (c->api.nvmlDeviceGetMigMode &&
	    ok_rc(d, c->api.nvmlDeviceGetMigMode(d->h, &cur, &pend))) {
		set(o, GM_MIG_CURRENT, cur);
		set(o, GM_MIG_PENDING, pend);
	}
}

static void rd_util(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	nvmlUtilization_t u;
	if (c->api.nvmlDeviceGetUtilizationRates &&
	    ok_rc(d, c->api.nvmlDeviceGetUtilizationRates(d->h, &u))) {
		set(o, GM_UTIL_GPU, u.gpu);
		set(o, GM_UTIL_MEM, u.memory);
	}
}

static void rd_codec(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned u, p;
	if (c->api.nvmlDeviceGetEncoderUtilization &&
	    ok_rc(d, c->api.nvmlDeviceGetEncoderUtilization(d->h, &u, &p)))
		set(o, GM_UTIL_ENC, u);
	if (c->api.nvmlDeviceGetDecoderUtilization &&
	    ok_rc(d, c->api.nvmlDeviceGetDecoderUtilization(d->h, &u, &p)))
		set(o, GM_UTIL_DEC, u);
	if (c->api.nvmlDeviceGetJpgUtilization &&
	    ok_rc(d, c->api.nvmlDeviceGetJpgUtilization(d->h, &u, &p)))
		set(o, GM_UTIL_JPG, u);
	if (c->api.nvmlDeviceGetOfaUtilization &&
	    ok_rc(d, c->api.nvmlDeviceGetOfaUtilization(d->h, &u, &p)))
		set(o, GM_UTIL_OFA, u);
}

static double sample_value(nvmlValueType_t t, nvmlValue_t v)
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
		ok_rc(d, rc);
		return;
	}
	if (n == 0 || n > 100000)
		return;
	nvmlSample_t *s = calloc(n, sizeof *s);
	if (!s)
		return;
	rc = c->api.nvmlDeviceGetSamples(d->h, NVML_GPU_UTILIZATION_SAMPLES, d->util_last_ts, &vt,
	                                 &n, s);
	if (ok_rc(d, rc) && n > 0) {
		double mn = 1e300, mx = -1e300;
		unsigned idle = 0;
		for (unsigned k = 0; k < n; k++) {
			double v = sample_value(vt, s[k].sampleValue);
			mn = v < mn ? v : mn;
			mx = v > mx ? v : mx;
			idle += v <= 5.0;
			if (s[k].timeStamp > d->util_last_ts)
				d->util_last_ts = s[k].timeStamp;
		}
		set(o, GM_UTIL_SAMPLES_MIN, mn);
		set(o, GM_UTIL_SAMPLES_MAX, mx);
		set(o, GM_UTIL_SAMPLES_IDLE, 100.0 * idle / n);
	}
	free(s);
}

static void rd_mem(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	if (c->api.nvmlDeviceGetMemoryInfo_v2) {
		nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
		nvmlReturn_t rc = c->api.nvmlDeviceGetMemoryInfo_v2(d->h, &m);
		if (ok_rc(d, rc)) {
			set(o, GM_MEM_TOTAL, (double)(m.total / (1024 * 1024)));
			set(o, GM_MEM_RESERVED, (double)(m.reserved / (1024 * 1024)));
			set(o, GM_MEM_USED, (double)(m.used / (1024 * 1024)));
			set(o, GM_MEM_FREE, (double)(m.free / (1024 * 1024)));
			return;
		}
		if (d->lost)
			return;
	}
	if (c->api.nvmlDeviceGetMemoryInfo) {
		nvmlMemory_t m;
		/* v1's used includes reserved memory; reserved itself is unknown. */
		if (ok_rc(d, c->api.nvmlDeviceGetMemoryInfo(d->h, &m))) {
			set(o, GM_MEM_TOTAL, (double)(m.total / (1024 * 1024)));
			set(o, GM_MEM_USED, (double)(m.used / (1024 * 1024)));
			set(o, GM_MEM_FREE, (double)(m.free / (1024 * 1024)));
		}
	}
}

static void rd_bar1(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	nvmlBAR1Memory_t b;
	if (c->api.nvmlDeviceGetBAR1MemoryInfo &&
	    ok_rc(d, c->api.nvmlDeviceGetBAR1MemoryInfo(d->h, &b))) {
		set(o, GM_BAR1_TOTAL, (double)(b.bar1Total / (1024 * 1024)));
		set(o, GM_BAR1_USED, (double)(b.bar1Used / (1024 * 1024)));
	}
}

static void rd_power(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned mw;
	if (c->api.nvmlDeviceGetPowerUsage && ok_rc(d, c->api.nvmlDeviceGetPowerUsage(d->h, &mw)))
		set(o, GM_POWER_DRAW, mw / 1000.0);
}

static void rd_power_limits(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned mw;
	if (c->api.nvmlDeviceGetPowerManagementLimit &&
	    ok_rc(d, c->api.nvmlDeviceGetPowerManagementLimit(d->h, &mw)))
		set(o, GM_POWER_LIMIT, mw / 1000.0);
	if (c->api.nvmlDeviceGetPowerManagementDefaultLimit &&
	    ok_rc(d, c->api.nvmlDeviceGetPowerManagementDefaultLimit(d->h, &mw)))
		set(o, GM_POWER_DEFAULT_LIMIT, mw / 1000.0);
	if (c->api.nvmlDeviceGetEnforcedPowerLimit &&
	    ok_rc(d, c->api.nvmlDeviceGetEnforcedPowerLimit(d->h, &mw)))
		set(o, GM_POWER_ENFORCED_LIMIT, mw / 1000.0);
	unsigned mn, mx;
	if (c->api.nvmlDeviceGetPowerManagementLimitConstraints &&
	    ok_rc(d, c->api.nvmlDeviceGetPowerManagementLimitConstraints(d->h, &mn, &mx))) {
		set(o, GM_POWER_MIN_LIMIT, mn / 1000.0);
		set(o, GM_POWER_MAX_LIMIT, mx / 1000.0);
	}
}

static void rd_energy(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned long long mj;
	if (c->api.nvmlDeviceGetTotalEnergyConsumption &&
	    ok_rc(d, c->api.nvmlDeviceGetTotalEnergyConsumption(d->h, &mj)))
		set(o, GM_ENERGY, (double)mj);
}

static void rd_temp(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned t;
	/* Readings above 200 C are sensor garbage, not temperatures. */
	if (c->api.nvmlDeviceGetTemperature &&
	    ok_rc(d, c->api.nvmlDeviceGetTemperature(d->h, NVML_TEMPERATURE_GPU, &t)) && t <= 200)
		set(o, GM_TEMP_GPU, t);
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
	if (!ok_rc(d, c->api.nvmlDeviceGetFieldValues(d->h, 3, f)))
		return;
	/* NVML fills uiVal for memory temperature whatever valueType says. */
	if (f[0].nvmlReturn == NVML_SUCCESS && f[0].value.uiVal <= 200)
		set(o, GM_TEMP_MEM, f[0].value.uiVal);
	if (f[1].nvmlReturn == NVML_SUCCESS && f[2].nvmlReturn == NVML_SUCCESS) {
		unsigned long long tx =
		    (unsigned long long)sample_value(f[1].valueType, f[1].value);
		unsigned long long rx =
		    (unsigned long long)sample_value(f[2].valueType, f[2].value);
		int64_t now = gw_mono_ns();
		/* A rate, as dcgm-exporter exports it despite the name: KiB/s / 1000. */
		if (d->nvl_prev_ok && now > d->nvl_t && tx >= d->nvl_tx && rx >= d->nvl_rx) {
			double dt = (double)(now - d->nvl_t) / 1e9;
			set(o, GM_NVLINK_BW,
			    (double)(unsigned long long)((double)((tx - d->nvl_tx) +
			                                          (rx - d->nvl_rx)) /
			                                 dt / 1000.0));
		}
		d->nvl_prev_ok = true;
		d->nvl_t = now;
		d->nvl_tx = tx;
		d->nvl_rx = rx;
	}
}

static void rd_thresholds(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned t;
	if (!c->api.nvmlDeviceGetTemperatureThreshold)
		return;
	if (ok_rc(d, c->api.nvmlDeviceGetTemperatureThreshold(
	                 d->h, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &t)))
		set(o, GM_TEMP_SLOWDOWN, t);
	if (ok_rc(d, c->api.nvmlDeviceGetTemperatureThreshold(
	                 d->h, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &t)))
		set(o, GM_TEMP_SHUTDOWN, t);
}

static void rd_fan(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned s;
	if (c->api.nvmlDeviceGetFanSpeed && ok_rc(d, c->api.nvmlDeviceGetFanSpeed(d->h, &s)))
		set(o, GM_FAN, s);
}

static void rd_clocks(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned mhz;
	if (!c->api.nvmlDeviceGetClockInfo)
		return;
	if (ok_rc(d, c->api.nvmlDeviceGetClockInfo(d->h, NVML_CLOCK_GRAPHICS, &mhz)))
		set(o, GM_CLK_GR, mhz);
	if (ok_rc(d, c->api.nvmlDeviceGetClockInfo(d->h, NVML_CLOCK_SM, &mhz)))
		set(o, GM_CLK_SM, mhz);
	if (ok_rc(d, c->api.nvmlDeviceGetClockInfo(d->h, NVML_CLOCK_MEM, &mhz)))
		set(o, GM_CLK_MEM, mhz);
	if (ok_rc(d, c->api.nvmlDeviceGetClockInfo(d->h, NVML_CLOCK_VIDEO, &mhz)))
		set(o, GM_CLK_VIDEO, mhz);
}

static void rd_max_clocks(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned mhz;
	if (!c->api.nvmlDeviceGetMaxClockInfo)
		return;
	if (ok_rc(d, c->api.nvmlDeviceGetMaxClockInfo(d->h, NVML_CLOCK_GRAPHICS, &mhz)))
		set(o, GM_CLK_MAX_GR, mhz);
	if (ok_rc(d, c->api.nvmlDeviceGetMaxClockInfo(d->h, NVML_CLOCK_SM, &mhz)))
		set(o, GM_CLK_MAX_SM, mhz);
	if (ok_rc(d, c->api.nvmlDeviceGetMaxClockInfo(d->h, NVML_CLOCK_MEM, &mhz)))
		set(o, GM_CLK_MAX_MEM, mhz);
}

static void rd_app_clocks(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned mhz;
	nvmlReturn_t rc;
	if (!c->api.nvmlDeviceGetApplicationsClock)
		return;
	if (ok_rc(d, rc = c->api.nvmlDeviceGetApplicationsClock(d->h, NVML_CLOCK_GRAPHICS, &mhz)))
		set(o, GM_CLK_APP_GR, mhz);
	else
		why_absent(o, GM_CLK_APP_GR, rc);
	if (ok_rc(d, rc = c->api.nvmlDeviceGetApplicationsClock(d->h, NVML_CLOCK_MEM, &mhz)))
		set(o, GM_CLK_APP_MEM, mhz);
	else
		why_absent(o, GM_CLK_APP_MEM, rc);
}

static void rd_def_app_clocks(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned mhz;
	nvmlReturn_t rc;
	if (!c->api.nvmlDeviceGetClock)
		return;
	if (ok_rc(d, rc = c->api.nvmlDeviceGetClock(d->h, NVML_CLOCK_GRAPHICS,
	                                            NVML_CLOCK_ID_APP_CLOCK_DEFAULT, &mhz)))
		set(o, GM_CLK_DEF_APP_GR, mhz);
	else
		why_absent(o, GM_CLK_DEF_APP_GR, rc);
	if (ok_rc(d, rc = c->api.nvmlDeviceGetClock(d->h, NVML_CLOCK_MEM,
	                                            NVML_CLOCK_ID_APP_CLOCK_DEFAULT, &mhz)))
		set(o, GM_CLK_DEF_APP_MEM, mhz);
	else
		why_absent(o, GM_CLK_DEF_APP_MEM, rc);
}

static void rd_supported_reasons(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned long long mask;
	if (c->api.nvmlDeviceGetSupportedClocksEventReasons &&
	    ok_rc(d, c->api.nvmlDeviceGetSupportedClocksEventReasons(d->h, &mask)))
		set(o, GM_CLK_R_SUPPORTED, (double)mask);
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
	if (rc != NVML_SUCCESS && !d->lost && c->api.nvmlDeviceGetCurrentClocksThrottleReasons)
		rc = c->api.nvmlDeviceGetCurrentClocksThrottleReasons(d->h, &mask);
	if (!ok_rc(d, rc))
		return;
	set(o, GM_CLK_REASONS, (double)mask);
	for (unsigned k = 0; k < sizeof bits / sizeof *bits; k++)
		set(o, bits[k].id, (mask & bits[k].bit) ? 1 : 0);
}

static void rd_pstate(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	nvmlPstates_t p;
	if (c->api.nvmlDeviceGetPerformanceState &&
	    ok_rc(d, c->api.nvmlDeviceGetPerformanceState(d->h, &p)) && p >= 0 && p <= 15)
		set(o, GM_PSTATE, p);
}

static void rd_pcie_link(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned v;
	if (c->api.nvmlDeviceGetCurrPcieLinkGeneration &&
	    ok_rc(d, c->api.nvmlDeviceGetCurrPcieLinkGeneration(d->h, &v))) {
		set(o, GM_PCIE_GEN_CUR, v);
		set(o, GM_PCIE_GEN_GPUCUR, v);
	}
	if (c->api.nvmlDeviceGetCurrPcieLinkWidth &&
	    ok_rc(d, c->api.nvmlDeviceGetCurrPcieLinkWidth(d->h, &v)))
		set(o, GM_PCIE_WIDTH_CUR, v);
}

static void rd_pcie_link_max(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned v;
	if (c->api.nvmlDeviceGetMaxPcieLinkGeneration &&
	    ok_rc(d, c->api.nvmlDeviceGetMaxPcieLinkGeneration(d->h, &v)))
		set(o, GM_PCIE_GEN_MAX, v);
	if (c->api.nvmlDeviceGetGpuMaxPcieLinkGeneration &&
	    ok_rc(d, c->api.nvmlDeviceGetGpuMaxPcieLinkGeneration(d->h, &v)))
		set(o, GM_PCIE_GEN_GPUMAX, v);
	if (c->api.nvmlDeviceGetMaxPcieLinkWidth &&
	    ok_rc(d, c->api.nvmlDeviceGetMaxPcieLinkWidth(d->h, &v)))
		set(o, GM_PCIE_WIDTH_MAX, v);
}

/*
 * PCIe throughput: the cumulative byte counters (non-blocking) when the
 * driver has them, else nvmlDeviceGetPcieThroughput, which blocks ~20 ms
 * per call; that is why this reader is on the slow cadence.
 */
static void rd_pcie_throughput(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	if (c->api.nvmlDeviceGetFieldValues) {
		nvmlFieldValue_t f[2];
		memset(f, 0, sizeof f);
		f[0].fieldId = NVML_FI_DEV_PCIE_COUNT_TX_BYTES;
		f[1].fieldId = NVML_FI_DEV_PCIE_COUNT_RX_BYTES;
		nvmlReturn_t rc = c->api.nvmlDeviceGetFieldValues(d->h, 2, f);
		if (d->lost || (ok_rc(d, rc) && f[0].nvmlReturn == NVML_SUCCESS &&
		                f[1].nvmlReturn == NVML_SUCCESS)) {
			if (d->lost)
				return;
			unsigned long long tx =
			    (unsigned long long)sample_value(f[0].valueType, f[0].value);
			unsigned long long rx =
			    (unsigned long long)sample_value(f[1].valueType, f[1].value);
			int64_t now = gw_mono_ns();
			if (d->pcie_prev_ok && now > d->pcie_t && tx >= d->pcie_tx &&
			    rx >= d->pcie_rx) {
				double dt = (double)(now - d->pcie_t) / 1e9;
				set(o, GM_PCIE_TX, (double)(tx - d->pcie_tx) / dt / 1048576.0);
				set(o, GM_PCIE_RX, (double)(rx - d->pcie_rx) / dt / 1048576.0);
			}
			d->pcie_prev_ok = true;
			d->pcie_t = now;
			d->pcie_tx = tx;
			d->pcie_rx = rx;
			return;
		}
	}
	unsigned kb;
	if (!c->api.nvmlDeviceGetPcieThroughput)
		return;
	if (ok_rc(d, c->api.nvmlDeviceGetPcieThroughput(d->h, NVML_PCIE_UTIL_TX_BYTES, &kb)))
		set(o, GM_PCIE_TX, kb / 1024.0);
	if (ok_rc(d, c->api.nvmlDeviceGetPcieThroughput(d->h, NVML_PCIE_UTIL_RX_BYTES, &kb)))
		set(o, GM_PCIE_RX, kb / 1024.0);
}

static void rd_pcie_replay(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned v;
	if (c->api.nvmlDeviceGetPcieReplayCounter &&
	    ok_rc(d, c->api.nvmlDeviceGetPcieReplayCounter(d->h, &v)))
		set(o, GM_PCIE_REPLAY, v);
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
	for (unsigned k = 0; k < sizeof e / sizeof *e && !d->lost; k++) {
		unsigned long long n;
		if (ok_rc(d, c->api.nvmlDeviceGetTotalEccErrors(d->h, e[k].err, e[k].counter, &n)))
			set(o, e[k].id, (double)n);
	}
}

static void rd_retired(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned n;
	nvmlReturn_t rc;
	if (c->api.nvmlDeviceGetRetiredPages) {
		/* pageCount 0 asks for the count only; drivers answer SUCCESS or INSUFFICIENT_SIZE.
		 */
		n = 0;
		rc = c->api.nvmlDeviceGetRetiredPages(
		    d->h, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, &n, NULL);
		if (rc == NVML_SUCCESS || rc == NVML_ERROR_INSUFFICIENT_SIZE)
			set(o, GM_RETIRED_SBE, n);
		else
			ok_rc(d, rc);
		n = 0;
		rc = c->api.nvmlDeviceGetRetiredPages(
		    d->h, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, &n, NULL);
		if (rc == NVML_SUCCESS || rc == NVML_ERROR_INSUFFICIENT_SIZE)
			set(o, GM_RETIRED_DBE, n);
		else
			ok_rc(d, rc);
	}
	nvmlEnableState_t p;
	if (c->api.nvmlDeviceGetRetiredPagesPendingStatus &&
	    ok_rc(d, c->api.nvmlDeviceGetRetiredPagesPendingStatus(d->h, &p)))
		set(o, GM_RETIRED_PENDING, p);
}

static void rd_remap(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned cor, unc, pend, fail;
	if (c->api.nvmlDeviceGetRemappedRows &&
	    ok_rc(d, c->api.nvmlDeviceGetRemappedRows(d->h, &cor, &unc, &pend, &fail))) {
		set(o, GM_REMAP_CORR, cor);
		set(o, GM_REMAP_UNCORR, unc);
		set(o, GM_REMAP_PENDING, pend);
		set(o, GM_REMAP_FAILURE, fail);
	}
}

static const struct {
	gpu_metric_id id;
	unsigned gpm;
	double scale; /* GPM gives MiB/s for bandwidth; the table keeps bytes/s */
} gpm_map[7] = {
    {GM_GPM_GR_ACTIVE, NVML_GPM_METRIC_GRAPHICS_UTIL, 1},
    {GM_GPM_SM_ACTIVE, NVML_GPM_METRIC_SM_UTIL, 1},
    {GM_GPM_SM_OCCUPANCY, NVML_GPM_METRIC_SM_OCCUPANCY, 1},
    {GM_GPM_TENSOR_ACTIVE, NVML_GPM_METRIC_ANY_TENSOR_UTIL, 1},
    {GM_GPM_DRAM_ACTIVE, NVML_GPM_METRIC_DRAM_BW_UTIL, 1},
    {GM_GPM_PCIE_TX, NVML_GPM_METRIC_PCIE_TX_PER_SEC, 1048576.0},
    {GM_GPM_PCIE_RX, NVML_GPM_METRIC_PCIE_RX_PER_SEC, 1048576.0},
};

/*
 * GPM: two samples at least 100 ms apart give the activity ratios of the
 * interval between them. Faster callers get the last interval's values.
 */
static void rd_gpm(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	if (!d->st.gpm_supported || !c->gpm_req || !d->gpm_prev || !d->gpm_cur)
		return;
	int64_t now = gw_mono_ns();
	if (d->gpm_prev_t && now - d->gpm_prev_t >= GPM_MIN_INTERVAL_NS) {
		if (ok_rc(d, c->api.nvmlGpmSampleGet(d->h, d->gpm_cur))) {
			nvmlGpmMetricsGet_t *m = c->gpm_req;
			memset(m, 0,
			       offsetof(nvmlGpmMetricsGet_t, metrics) + 7 * sizeof m->metrics[0]);
			m->version = NVML_GPM_METRICS_GET_VERSION;
			m->numMetrics = 7;
			m->sample1 = d->gpm_prev;
			m->sample2 = d->gpm_cur;
			for (int k = 0; k < 7; k++)
				m->metrics[k].metricId = gpm_map[k].gpm;
			if (c->api.nvmlGpmMetricsGet(m) == NVML_SUCCESS) {
				for (int k = 0; k < 7; k++) {
					double v = m->metrics[k].value;
					d->gpm_ok[k] = m->metrics[k].nvmlReturn == NVML_SUCCESS &&
					               v == v; /* NaN is absent */
					d->gpm_v[k] = v * gpm_map[k].scale;
				}
				d->gpm_have_vals = true;
			}
			nvmlGpmSample_t t = d->gpm_prev;
			d->gpm_prev = d->gpm_cur;
			d->gpm_cur = t;
			d->gpm_prev_t = now;
		}
	} else if (!d->gpm_prev_t) {
		if (ok_rc(d, c->api.nvmlGpmSampleGet(d->h, d->gpm_prev)))
			d->gpm_prev_t = now;
	}
	if (d->gpm_have_vals)
		for (int k = 0; k < 7; k++)
			if (d->gpm_ok[k])
				set(o, gpm_map[k].id, d->gpm_v[k]);
}

/*
 * Xid errors arrive as NVML events on one set shared by all GPUs: drain it
 * without waiting (timeout 0) and keep the last Xid of each GPU, the value
 * dcgm-exporter publishes. 0 means none seen since gpuwhy started.
 */
static void rd_xid(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	if (!d->xid_ok)
		return;
	nvmlEventData_t ev;
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
	set(o, GM_XID_LAST, (double)d->xid_last);
}

static void rd_pci(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	(void)c;
	if (!d->st.pci_ok)
		return;
	set(o, GM_PCI_DOMAIN, d->st.pci_domain);
	set(o, GM_PCI_BUS, d->st.pci_bus);
	set(o, GM_PCI_DEVICE, d->st.pci_device);
	set(o, GM_PCI_DEVICE_ID, d->st.pci_device_id);
	set(o, GM_PCI_SUB_DEVICE_ID, d->st.pci_subsystem_id);
}

static void rd_display(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	nvmlEnableState_t e;
	/* nvidia-smi's display_attached is NVML's display mode: a monitor is connected. */
	if (c->api.nvmlDeviceGetDisplayMode && ok_rc(d, c->api.nvmlDeviceGetDisplayMode(d->h, &e)))
		set(o, GM_DISPLAY_ATTACHED, e == NVML_FEATURE_ENABLED);
	if (c->api.nvmlDeviceGetDisplayActive &&
	    ok_rc(d, c->api.nvmlDeviceGetDisplayActive(d->h, &e)))
		set(o, GM_DISPLAY_ACTIVE, e == NVML_FEATURE_ENABLED);
}

static void rd_accounting(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	nvmlEnableState_t e;
	unsigned n;
	if (c->api.nvmlDeviceGetAccountingMode &&
	    ok_rc(d, c->api.nvmlDeviceGetAccountingMode(d->h, &e)))
		set(o, GM_ACCOUNTING_MODE, e == NVML_FEATURE_ENABLED);
	if (c->api.nvmlDeviceGetAccountingBufferSize &&
	    ok_rc(d, c->api.nvmlDeviceGetAccountingBufferSize(d->h, &n)))
		set(o, GM_ACCOUNTING_BUFFER, n);
}

static void rd_enc_stats(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	unsigned n, fps, lat;
	if (c->api.nvmlDeviceGetEncoderStats &&
	    ok_rc(d, c->api.nvmlDeviceGetEncoderStats(d->h, &n, &fps, &lat))) {
		set(o, GM_ENC_SESSIONS, n);
		set(o, GM_ENC_FPS, fps);
		set(o, GM_ENC_LATENCY, lat);
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
	if (!ok_rc(d, c->api.nvmlDeviceGetFieldValues(d->h, n, f)))
		return;
	for (int k = 0; k < n; k++)
		if (f[k].nvmlReturn == NVML_SUCCESS)
			set(o, m[k].id, sample_value(f[k].valueType, f[k].value) * m[k].scale);
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
	    ok_rc(d, c->api.nvmlDeviceGetEccMode(d->h, &cur, &pend))) {
		set(o, GM_ECC_MODE_CUR, cur == NVML_FEATURE_ENABLED);
		set(o, GM_ECC_MODE_PEND, pend == NVML_FEATURE_ENABLED);
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
			for (int l = 0; l < 8 && !d->lost; l++, id++) {
				unsigned long long n;
				if (ok_rc(d, c->api.nvmlDeviceGetMemoryErrorCounter(
				                 d->h, types[t], counters[k], locs[l], &n)))
					set(o, (gpu_metric_id)id, (double)n);
			}
}

static void rd_remap_hist(gpu_ctx *c, gpu_dev *d, gpu_values *o)
{
	nvmlRowRemapperHistogramValues_t h;
	if (!c->api.nvmlDeviceGetRowRemapperHistogram ||
	    !ok_rc(d, c->api.nvmlDeviceGetRowRemapperHistogram(d->h, &h)))
		return;
	set(o, GM_REMAP_HIST_MAX, h.max);
	set(o, GM_REMAP_HIST_HIGH, h.high);
	set(o, GM_REMAP_HIST_PARTIAL, h.partial);
	set(o, GM_REMAP_HIST_LOW, h.low);
	set(o, GM_REMAP_HIST_NONE, h.none);
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
    [R_XID] = rd_xid,
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

/* Run every reader of one kind into o, stopping once the GPU is lost. */
static void run_readers(gpu_ctx *c, gpu_dev *d, reader_kind kind, gpu_values *o)
{
	for (int r = 0; r < R__COUNT && !d->lost; r++)
		if (reader_kinds[r] == kind && readers[r])
			readers[r](c, d, o);
}

/* Copy the STATIC/SLOW metrics filled by readers of `kind` into the cache. */
static void cache_store(gpu_dev *d, reader_kind kind, const gpu_values *o)
{
	pthread_mutex_lock(&d->mu);
	for (int i = 0; i < GM__COUNT; i++) {
		if (reader_kinds[gpu_metrics[i].reader] != kind)
			continue;
		d->cache_v[i] = o->v[i];
		d->cache_ok[i] = o->ok[i];
		d->cache_why[i] = o->why[i];
	}
	pthread_mutex_unlock(&d->mu);
}

static void refresh_slow(gpu_ctx *c, gpu_dev *d)
{
	gpu_values tmp;
	memset(&tmp, 0, sizeof tmp);
	pthread_mutex_lock(&d->slow_mu);
	run_readers(c, d, RK_SLOW, &tmp);
	pthread_mutex_unlock(&d->slow_mu);
	cache_store(d, RK_SLOW, &tmp);
	pthread_mutex_lock(&d->mu);
	d->slow_t = gw_mono_ns();
	pthread_mutex_unlock(&d->mu);
}

/* ---- static facts ---- */

static void cpuset_to_ranges(const unsigned long *set, unsigned words, char *out, size_t outlen)
{
	size_t n = 0;
	out[0] = '\0';
	unsigned bits = words * (unsigned)(8 * sizeof(unsigned long));
	for (unsigned b = 0; b < bits;) {
		if (!(set[b / (8 * sizeof(unsigned long))] &
		      (1UL << (b % (8 * sizeof(unsigned long)))))) {
			b++;
			continue;
		}
		unsigned e = b;
		while (e + 1 < bits && (set[(e + 1) / (8 * sizeof(unsigned long))] &
		                        (1UL << ((e + 1) % (8 * sizeof(unsigned long))))))
			e++;
		int w = (e == b) ? snprintf(out + n, outlen - n, "%s%u", n ? "," : "", b)
		                 : snprintf(out + n, outlen - n, "%s%u-%u", n ? "," : "", b, e);
		if (w < 0 || (size_t)w >= outlen - n)
			return;
		n += (size_t)w;
		b = e + 1;
	}
}

static void read_static(gpu_ctx *c, gpu_dev *d, unsigned index)
{
	gpu_static *s = &d->st;
	s->index = (int)index;
	if (c->api.nvmlDeviceGetName)
		ok_rc(d, c->api.nvmlDeviceGetName(d->h, s->name, sizeof s->name));
	if (c->api.nvmlDeviceGetUUID)
		ok_rc(d, c->api.nvmlDeviceGetUUID(d->h, s->uuid, sizeof s->uuid));
	if (c->api.nvmlDeviceGetSerial &&
	    !ok_rc(d, c->api.nvmlDeviceGetSerial(d->h, s->serial, sizeof s->serial)))
		s->serial[0] = '\0';
	if (c->api.nvmlDeviceGetVbiosVersion &&
	    !ok_rc(d, c->api.nvmlDeviceGetVbiosVersion(d->h, s->vbios, sizeof s->vbios)))
		s->vbios[0] = '\0';
	nvmlPciInfo_t pci;
	memset(&pci, 0, sizeof pci);
	nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
	if (c->api.nvmlDeviceGetPciInfo_v3)
		rc = c->api.nvmlDeviceGetPciInfo_v3(d->h, &pci);
	if (rc != NVML_SUCCESS && c->api.nvmlDeviceGetPciInfo_v2)
		rc = c->api.nvmlDeviceGetPciInfo_v2(d->h, &pci);
	if (ok_rc(d, rc)) {
		snprintf(s->pci_bus_id, sizeof s->pci_bus_id, "%.31s", pci.busId);
		s->pci_ok = true;
		s->pci_domain = pci.domain;
		s->pci_bus = pci.bus;
		s->pci_device = pci.device;
		s->pci_device_id = pci.pciDeviceId;
		s->pci_subsystem_id = pci.pciSubSystemId;
	}
	nvmlDeviceArchitecture_t arch;
	if (c->api.nvmlDeviceGetArchitecture &&
	    ok_rc(d, c->api.nvmlDeviceGetArchitecture(d->h, &arch)))
		s->arch = arch;
	nvmlGpmSupport_t gs = {.version = NVML_GPM_SUPPORT_VERSION};
	if (c->api.nvmlGpmQueryDeviceSupport && c->api.nvmlGpmSampleAlloc &&
	    c->api.nvmlGpmSampleGet && c->api.nvmlGpmMetricsGet &&
	    ok_rc(d, c->api.nvmlGpmQueryDeviceSupport(d->h, &gs)) && gs.isSupportedDevice)
		s->gpm_supported = true;
	unsigned node;
	if (c->api.nvmlDeviceGetNumaNodeId &&
	    ok_rc(d, c->api.nvmlDeviceGetNumaNodeId(d->h, &node))) {
		s->numa_ok = true;
		s->numa_node = (int)node;
	}
	unsigned long set[16];
	memset(set, 0, sizeof set);
	if (c->api.nvmlDeviceGetCpuAffinity &&
	    ok_rc(d, c->api.nvmlDeviceGetCpuAffinity(d->h, 16, set)))
		cpuset_to_ranges(set, 16, s->cpu_affinity, sizeof s->cpu_affinity);
}

/* ---- open / close ---- */

static void register_xid(gpu_ctx *c)
{
	if (!c->api.nvmlEventSetCreate || !c->api.nvmlDeviceRegisterEvents ||
	    !c->api.nvmlEventSetWait_v2 || !c->api.nvmlEventSetFree ||
	    c->api.nvmlEventSetCreate(&c->xid_set) != NVML_SUCCESS) {
		c->xid_set = NULL;
		return;
	}
	bool any = false;
	for (int k = 0; k < c->n; k++) {
		gpu_dev *d = &c->dev[k];
		if (d->lost)
			continue;
		d->xid_ok = c->api.nvmlDeviceRegisterEvents(d->h, nvmlEventTypeXidCriticalError,
		                                            c->xid_set) == NVML_SUCCESS;
		any |= d->xid_ok;
	}
	if (!any) {
		c->api.nvmlEventSetFree(c->xid_set);
		c->xid_set = NULL;
	}
}

static int load_library(gpu_ctx *c, const gpu_open_opts *o)
{
	const char *want = getenv("GPUWHY_NVML");
	const char *tries[] = {want, want ? NULL : "libnvidia-ml.so.1",
	                       want ? NULL : "libnvidia-ml.so"};
	char first_err[256] = "";
	for (int i = 0; i < 3; i++) {
		if (!tries[i])
			continue;
		c->lib = dlopen(tries[i], RTLD_NOW | RTLD_LOCAL);
		if (c->lib) {
			snprintf(c->lib_path, sizeof c->lib_path, "%s", tries[i]);
			break;
		}
		if (!first_err[0]) {
			const char *e = dlerror();
			snprintf(first_err, sizeof first_err, "%s", e ? e : "dlopen failed");
		}
	}
	if (!c->lib) {
		if (want)
			return open_fail(o, GPU_FAIL_NO_LIBRARY, 0, GW_EXIT_ENV, want,
			                 "check --nvml / GPUWHY_NVML",
			                 "cannot load NVML library: %s", first_err);
		return open_fail(o, GPU_FAIL_NO_LIBRARY, 0, GW_EXIT_ENV, "no NVIDIA driver",
		                 "try --sim h100x1 to explore on a simulated GPU",
		                 "libnvidia-ml.so.1 not found");
	}
#define X(ret, name, args)                                                                         \
	*(void **)(&c->api.name) = gpu_calls_wrap(GPU_CALL_##name, dlsym(c->lib, #name));
	NVML_ENTRY_POINTS(X)
#undef X
	if (!(c->api.nvmlInit_v2 || c->api.nvmlInit) ||
	    !(c->api.nvmlDeviceGetCount_v2 || c->api.nvmlDeviceGetCount) ||
	    !(c->api.nvmlDeviceGetHandleByIndex_v2 || c->api.nvmlDeviceGetHandleByIndex) ||
	    !c->api.nvmlErrorString)
		return open_fail(o, GPU_FAIL_BAD_LIBRARY, 0, GW_EXIT_ENV, c->lib_path,
		                 "is it a real libnvidia-ml.so.1?",
		                 "library lacks the NVML entry points gpuwhy needs");
	return 0;
}

static int init_error(gpu_ctx *c, nvmlReturn_t rc, const gpu_open_opts *o)
{
	const char *scen = getenv("GPUWHY_SIM_SCENARIO");
	if (scen && *scen)
		return open_fail(o, GPU_FAIL_SIMULATOR, rc, GW_EXIT_ENV, scen,
		                 "fix the scenario (its error is above)",
		                 "the simulated GPU did not start: %s", nvml_err(c, rc));
	switch (rc) {
	case NVML_ERROR_DRIVER_NOT_LOADED:
		return open_fail(o, GPU_FAIL_NOT_LOADED, rc, GW_EXIT_ENV,
		                 "NVIDIA driver not loaded",
		                 "load the kernel module (modprobe nvidia) or check dmesg",
		                 "NVML could not talk to the driver");
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
		return open_fail(
		    o, GPU_FAIL_MISMATCH, rc, GW_EXIT_ENV, "driver/library version mismatch",
		    "reboot, or reload the nvidia kernel modules after the driver upgrade",
		    "libnvidia-ml.so.1 and the loaded kernel module differ");
	case NVML_ERROR_NO_PERMISSION:
		return open_fail(
		    o, GPU_FAIL_NO_PERMISSION, rc, GW_EXIT_ENV, "no permission on /dev/nvidia*",
		    "add your user to the group that owns /dev/nvidia* (ls -l /dev/nvidia*)",
		    "NVML was refused access to the GPU devices");
	default:
		return open_fail(o, GPU_FAIL_OTHER, rc, GW_EXIT_ENV, "NVML init failed",
		                 "gpuwhy doctor explains more", "%s", nvml_err(c, rc));
	}
}

static void read_system(gpu_ctx *c)
{
	if (c->api.nvmlSystemGetDriverVersion &&
	    c->api.nvmlSystemGetDriverVersion(c->driver, sizeof c->driver) != NVML_SUCCESS)
		c->driver[0] = '\0';
	if (c->api.nvmlSystemGetNVMLVersion &&
	    c->api.nvmlSystemGetNVMLVersion(c->nvml_version, sizeof c->nvml_version) !=
	        NVML_SUCCESS)
		c->nvml_version[0] = '\0';
	int v = 0;
	nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
	if (c->api.nvmlSystemGetCudaDriverVersion_v2)
		rc = c->api.nvmlSystemGetCudaDriverVersion_v2(&v);
	if (rc != NVML_SUCCESS && c->api.nvmlSystemGetCudaDriverVersion)
		rc = c->api.nvmlSystemGetCudaDriverVersion(&v);
	if (rc == NVML_SUCCESS && v > 0)
		snprintf(c->cuda, sizeof c->cuda, "%d.%d", v / 1000, (v % 1000) / 10);
}

int gpu_open(const gpu_open_opts *opts, gpu_ctx **out)
{
	pthread_once(&reader_once, reader_kinds_init);
	gpu_ctx *c = calloc(1, sizeof *c);
	if (!c)
		return open_fail(opts, GPU_FAIL_OTHER, 0, GW_EXIT_ENV, "memory", NULL,
		                 "out of memory");
	pthread_mutex_init(&c->stop_mu, NULL);
	pthread_cond_init(&c->stop_cv, NULL);
	c->slow_period_ns =
	    opts && opts->slow_period_ns > 0 ? opts->slow_period_ns : DEFAULT_SLOW_PERIOD_NS;
	if (opts && opts->failure)
		memset(opts->failure, 0, sizeof *opts->failure);
	int rc = load_library(c, opts);
	if (rc) {
		if (c->lib)
			dlclose(c->lib);
		free(c);
		return rc;
	}
	nvmlReturn_t nr = c->api.nvmlInit_v2 ? c->api.nvmlInit_v2() : c->api.nvmlInit();
	if (nr != NVML_SUCCESS) {
		rc = init_error(c, nr, opts);
		dlclose(c->lib);
		free(c);
		return rc;
	}
	read_system(c);
	unsigned count = 0;
	nr = c->api.nvmlDeviceGetCount_v2 ? c->api.nvmlDeviceGetCount_v2(&count)
	                                  : c->api.nvmlDeviceGetCount(&count);
	if (nr != NVML_SUCCESS) {
		rc = open_fail(opts, GPU_FAIL_OTHER, nr, GW_EXIT_ENV, "NVML",
		               "gpuwhy doctor explains more", "cannot count GPUs: %s",
		               nvml_err(c, nr));
		gpu_close(c);
		return rc;
	}
	if (count > GPU_MAX)
		count = GPU_MAX;
	gpu_dev *all = calloc(count ? count : 1, sizeof *all);
	gpu_ident *ids = calloc(count ? count : 1, sizeof *ids);
	for (unsigned i = 0; i < count; i++) {
		pthread_mutex_init(&all[i].mu, NULL);
		pthread_mutex_init(&all[i].slow_mu, NULL);
		nr = c->api.nvmlDeviceGetHandleByIndex_v2
		         ? c->api.nvmlDeviceGetHandleByIndex_v2(i, &all[i].h)
		         : c->api.nvmlDeviceGetHandleByIndex(i, &all[i].h);
		if (nr != NVML_SUCCESS) {
			/* A GPU we cannot even get a handle for is reported lost. */
			all[i].lost = true;
			all[i].st.index = (int)i;
			continue;
		}
		read_static(c, &all[i], i);
		snprintf(ids[i].uuid, sizeof ids[i].uuid, "%s", all[i].st.uuid);
	}
	c->n_all = (int)count;
	int sel[GPU_MAX];
	int nsel = (int)count;
	for (int i = 0; i < nsel; i++)
		sel[i] = i;
	const char *list = opts ? opts->gpus : NULL;
	if (list && *list) {
		char err[256];
		nsel = gpu_parse_selection(list, ids, (int)count, sel, GPU_MAX, err, sizeof err);
		if (nsel < 0) {
			free(ids);
			for (unsigned i = 0; i < count; i++) {
				pthread_mutex_destroy(&all[i].mu);
				pthread_mutex_destroy(&all[i].slow_mu);
			}
			free(all);
			rc =
			    open_fail(opts, GPU_FAIL_SELECTION, 0, GW_EXIT_USAGE, "--gpus",
			              "use indices or (short) UUIDs from gpuwhy status", "%s", err);
			gpu_close(c);
			return rc;
		}
	}
	free(ids);
	c->dev = calloc(nsel ? (size_t)nsel : 1, sizeof *c->dev);
	for (int k = 0; k < nsel; k++) {
		c->dev[k] = all[sel[k]];
		pthread_mutex_init(&c->dev[k].mu, NULL);
		pthread_mutex_init(&c->dev[k].slow_mu, NULL);
	}
	for (unsigned i = 0; i < count; i++) {
		pthread_mutex_destroy(&all[i].mu);
		pthread_mutex_destroy(&all[i].slow_mu);
	}
	free(all);
	c->n = nsel;
	bool any_gpm = false;
	for (int k = 0; k < nsel; k++)
		any_gpm |= c->dev[k].st.gpm_supported;
	if (any_gpm)
		c->gpm_req = calloc(1, sizeof *c->gpm_req);
	for (int k = 0; k < nsel; k++) {
		gpu_dev *d = &c->dev[k];
		if (d->lost)
			continue;
		if (d->st.gpm_supported && c->gpm_req) {
			if (c->api.nvmlGpmSampleAlloc(&d->gpm_prev) != NVML_SUCCESS ||
			    c->api.nvmlGpmSampleAlloc(&d->gpm_cur) != NVML_SUCCESS)
				d->st.gpm_supported = false;
		}
		gpu_values tmp;
		memset(&tmp, 0, sizeof tmp);
		run_readers(c, d, RK_STATIC, &tmp);
		cache_store(d, RK_STATIC, &tmp);
		/* Prime the rate readers so the next sample has an interval. */
		memset(&tmp, 0, sizeof tmp);
		rd_samples(c, d, &tmp);
		rd_fields(c, d, &tmp);
		rd_gpm(c, d, &tmp);
		if (c->api.nvmlDeviceGetFieldValues) {
			/* Only the byte counters: the 20 ms fallback is left to the slow cadence.
			 */
			nvmlFieldValue_t f[2];
			memset(f, 0, sizeof f);
			f[0].fieldId = NVML_FI_DEV_PCIE_COUNT_TX_BYTES;
			f[1].fieldId = NVML_FI_DEV_PCIE_COUNT_RX_BYTES;
			if (c->api.nvmlDeviceGetFieldValues(d->h, 2, f) == NVML_SUCCESS &&
			    f[0].nvmlReturn == NVML_SUCCESS && f[1].nvmlReturn == NVML_SUCCESS) {
				d->pcie_prev_ok = true;
				d->pcie_t = gw_mono_ns();
				d->pcie_tx =
				    (unsigned long long)sample_value(f[0].valueType, f[0].value);
				d->pcie_rx =
				    (unsigned long long)sample_value(f[1].valueType, f[1].value);
			}
		}
	}
	register_xid(c);
	c->opened_ns = gw_mono_ns();
	*out = c;
	return 0;
}

void gpu_close(gpu_ctx *c)
{
	if (!c)
		return;
	if (c->slow_running) {
		pthread_mutex_lock(&c->stop_mu);
		c->stopping = true;
		pthread_cond_broadcast(&c->stop_cv);
		pthread_mutex_unlock(&c->stop_mu);
		pthread_join(c->slow_thread, NULL);
	}
	for (int k = 0; k < c->n; k++) {
		gpu_dev *d = &c->dev[k];
		if (d->gpm_prev && c->api.nvmlGpmSampleFree)
			c->api.nvmlGpmSampleFree(d->gpm_prev);
		if (d->gpm_cur && c->api.nvmlGpmSampleFree)
			c->api.nvmlGpmSampleFree(d->gpm_cur);
		pthread_mutex_destroy(&d->mu);
		pthread_mutex_destroy(&d->slow_mu);
	}
	if (c->xid_set)
		c->api.nvmlEventSetFree(c->xid_set);
	if (c->api.nvmlShutdown)
		c->api.nvmlShutdown();
	if (gpu_calls_report(c->lib_path) != 0)
		gw_error(GW_EXIT_ENV, getenv("GPUWHY_NVML_CALLS"),
		         "set GPUWHY_NVML_CALLS to a writable file, or - for stderr",
		         "cannot write the NVML call census: %s", strerror(errno));
	if (c->lib)
		dlclose(c->lib);
	pthread_mutex_destroy(&c->stop_mu);
	pthread_cond_destroy(&c->stop_cv);
	free(c->gpm_req);
	free(c->dev);
	free(c);
}

int gpu_count(const gpu_ctx *c)
{
	return c->n;
}

int gpu_count_all(const gpu_ctx *c)
{
	return c->n_all;
}

const gpu_static *gpu_static_info(const gpu_ctx *c, int i)
{
	return &c->dev[i].st;
}

const char *gpu_driver_version(const gpu_ctx *c)
{
	return c->driver;
}

const char *gpu_cuda_driver_version(const gpu_ctx *c)
{
	return c->cuda;
}

const char *gpu_nvml_version(const gpu_ctx *c)
{
	return c->nvml_version;
}

const char *gpu_library_path(const gpu_ctx *c)
{
	return c->lib_path;
}

bool gpu_is_lost(const gpu_ctx *c, int i)
{
	return c->dev[i].lost;
}

const char *gpu_metric_text(const gpu_ctx *c, int i, gpu_metric_id id)
{
	const gpu_static *s = &c->dev[i].st;
	const char *t = NULL;
	switch (id) {
	case GM_NAME:
		t = s->name;
		break;
	case GM_UUID:
		t = s->uuid;
		break;
	case GM_SERIAL:
		t = s->serial;
		break;
	case GM_PCI_BUS_ID:
		t = s->pci_bus_id;
		break;
	case GM_VBIOS:
		t = s->vbios;
		break;
	case GM_DRIVER:
		t = c->driver;
		break;
	case GM_CUDA_DRIVER:
		t = c->cuda;
		break;
	default:
		return NULL;
	}
	return t && *t ? t : NULL;
}

void gpu_wait_rate_window(gpu_ctx *c)
{
	int64_t until = c->opened_ns + RATE_WINDOW_NS;
	gw_sleep_ns(until - gw_mono_ns());
}

int gpu_sample(gpu_ctx *c, int i, gpu_values *o)
{
	gpu_dev *d = &c->dev[i];
	memset(o, 0, sizeof *o);
	o->t_mono_ns = gw_mono_ns();
	o->t_wall = gw_wall_s();
	if (!d->lost) {
		run_readers(c, d, RK_FAST, o);
		bool stale;
		pthread_mutex_lock(&d->mu);
		stale = !c->slow_running &&
		        (d->slow_t == 0 || o->t_mono_ns - d->slow_t >= c->slow_period_ns);
		pthread_mutex_unlock(&d->mu);
		if (stale && !d->lost)
			refresh_slow(c, d);
	}
	if (d->lost) {
		/* Fell off the bus: identity stays, every measurement is absent. */
		memset(o->ok, 0, sizeof o->ok);
		o->lost = true;
		set(o, GM_INDEX, d->st.index);
		/* The Xid that came with the loss (79: fallen off the bus) is still news. */
		rd_xid(c, d, o);
		for (int k = 0; k < GM__COUNT; k++)
			if (gpu_metrics[k].fmt == GMF_STR &&
			    gpu_metric_text(c, i, (gpu_metric_id)k))
				o->ok[k] = 1;
		return 0;
	}
	pthread_mutex_lock(&d->mu);
	for (int k = 0; k < GM__COUNT; k++) {
		if (reader_kinds[gpu_metrics[k].reader] == RK_FAST)
			continue;
		o->v[k] = d->cache_v[k];
		o->ok[k] = d->cache_ok[k];
		o->why[k] = d->cache_why[k];
	}
	pthread_mutex_unlock(&d->mu);
	for (int k = 0; k < GM__COUNT; k++)
		if (gpu_metrics[k].fmt == GMF_STR)
			o->ok[k] = gpu_metric_text(c, i, (gpu_metric_id)k) != NULL;
	return 0;
}

static void *slow_main(void *arg)
{
	gpu_ctx *c = arg;
	for (;;) {
		for (int k = 0; k < c->n; k++)
			if (!c->dev[k].lost)
				refresh_slow(c, &c->dev[k]);
		int64_t until = gw_mono_ns() + c->slow_period_ns;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		int64_t abs_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec + c->slow_period_ns;
		ts.tv_sec = abs_ns / 1000000000LL;
		ts.tv_nsec = abs_ns % 1000000000LL;
		pthread_mutex_lock(&c->stop_mu);
		while (!c->stopping && gw_mono_ns() < until)
			if (pthread_cond_timedwait(&c->stop_cv, &c->stop_mu, &ts) == ETIMEDOUT)
				break;
		bool stop = c->stopping;
		pthread_mutex_unlock(&c->stop_mu);
		if (stop)
			return NULL;
	}
}

int gpu_slow_thread_start(gpu_ctx *c)
{
	if (c->slow_running)
		return 0;
	/* Fill the cache once first so the first fast sample has slow fields. */
	for (int k = 0; k < c->n; k++)
		if (!c->dev[k].lost)
			refresh_slow(c, &c->dev[k]);
	if (pthread_create(&c->slow_thread, NULL, slow_main, c) != 0)
		return -1;
	c->slow_running = true;
	return 0;
}

/* ---- processes ---- */

static bool plausible_proc(unsigned pid, unsigned long long mem, unsigned long long total)
{
	if (pid == 0 || pid > GPU_PID_MAX)
		return false;
	return mem == NVML_VALUE_NOT_AVAILABLE || total == 0 || mem <= total;
}

static int merge_proc(gpu_proc *out, int n, int max, unsigned pid, unsigned long long mem,
                      unsigned type)
{
	for (int k = 0; k < n; k++) {
		if (out[k].pid == pid) {
			out[k].type |= type;
			return n;
		}
	}
	if (n >= max)
		return n;
	memset(&out[n], 0, sizeof out[n]);
	out[n].pid = pid;
	out[n].type = type;
	if (mem != NVML_VALUE_NOT_AVAILABLE) {
		out[n].mem_ok = true;
		out[n].mem_bytes = mem;
	}
	return n + 1;
}

/*
 * One process list call. _v3 has written a 32-byte layout on drivers
 * 535.43-535.8x; the buffer is sized for either and the answer is checked
 * for plausible PIDs and memory before it is believed.
 */
typedef nvmlReturn_t (*proc_fn)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);

static int list_procs(gpu_ctx *c, gpu_dev *d, proc_fn fn, unsigned type, gpu_proc *out, int n,
                      int max, unsigned long long total)
{
	unsigned cnt = 0;
	nvmlReturn_t rc = fn(d->h, &cnt, NULL);
	if (rc == NVML_SUCCESS && cnt == 0)
		return n;
	if (rc != NVML_ERROR_INSUFFICIENT_SIZE) {
		ok_rc(d, rc);
		return rc == NVML_SUCCESS ? n : -1;
	}
	cnt += 8; /* processes may start between the two calls */
	unsigned char *buf = calloc(cnt, sizeof(nvmlProcessInfo_535_t));
	if (!buf)
		return -1;
	unsigned got = cnt;
	rc = fn(d->h, &got, (nvmlProcessInfo_t *)buf);
	if (!ok_rc(d, rc)) {
		free(buf);
		return -1;
	}
	const nvmlProcessInfo_t *p24 = (const nvmlProcessInfo_t *)buf;
	const nvmlProcessInfo_535_t *p32 = (const nvmlProcessInfo_535_t *)buf;
	bool ok24 = true, ok32 = true;
	for (unsigned k = 0; k < got; k++) {
		ok24 &= plausible_proc(p24[k].pid, p24[k].usedGpuMemory, total);
		ok32 &= plausible_proc(p32[k].pid, p32[k].usedGpuMemory, total);
	}
	if (d->proc_layout == 0 && got > 0)
		d->proc_layout = ok24 ? 24 : ok32 ? 32 : 0;
	for (unsigned k = 0; k < got; k++) {
		if (d->proc_layout == 32)
			n = merge_proc(out, n, max, p32[k].pid, p32[k].usedGpuMemory, type);
		else if (plausible_proc(p24[k].pid, p24[k].usedGpuMemory, total))
			n = merge_proc(out, n, max, p24[k].pid, p24[k].usedGpuMemory, type);
	}
	free(buf);
	return n;
}

static int list_procs_v1(gpu_ctx *c, gpu_dev *d, gpu_proc *out, int n, int max,
                         unsigned long long total)
{
	unsigned cnt = 0;
	nvmlReturn_t rc = c->api.nvmlDeviceGetComputeRunningProcesses(d->h, &cnt, NULL);
	if (rc == NVML_SUCCESS && cnt == 0)
		return n;
	if (rc != NVML_ERROR_INSUFFICIENT_SIZE)
		return ok_rc(d, rc) ? n : -1;
	cnt += 8;
	nvmlProcessInfo_v1_t *p = calloc(cnt, sizeof *p);
	if (!p)
		return -1;
	if (ok_rc(d, c->api.nvmlDeviceGetComputeRunningProcesses(d->h, &cnt, p)))
		for (unsigned k = 0; k < cnt; k++)
			if (plausible_proc(p[k].pid, p[k].usedGpuMemory, total))
				n = merge_proc(out, n, max, p[k].pid, p[k].usedGpuMemory,
				               GPU_PROC_COMPUTE);
	free(p);
	return n;
}

static void proc_utilization(gpu_ctx *c, gpu_dev *d, gpu_proc *out, int n)
{
	if (!c->api.nvmlDeviceGetProcessUtilization || n == 0)
		return;
	unsigned cnt = 0;
	nvmlReturn_t rc = c->api.nvmlDeviceGetProcessUtilization(d->h, NULL, &cnt, d->proc_last_ts);
	if (rc == NVML_ERROR_NOT_FOUND) {
		/* No samples newer than the last one seen: nothing ran, 0 %. */
		for (int k = 0; k < n; k++)
			out[k].util_ok = true;
		return;
	}
	if (rc != NVML_ERROR_INSUFFICIENT_SIZE && rc != NVML_SUCCESS) {
		ok_rc(d, rc);
		return;
	}
	if (cnt == 0 || cnt > 100000)
		return;
	nvmlProcessUtilizationSample_t *s = calloc(cnt, sizeof *s);
	if (!s)
		return;
	rc = c->api.nvmlDeviceGetProcessUtilization(d->h, s, &cnt, d->proc_last_ts);
	if (rc == NVML_SUCCESS) {
		unsigned long long newest = d->proc_last_ts;
		for (int k = 0; k < n; k++) {
			double sm = 0, mem = 0, enc = 0, dec = 0;
			unsigned m = 0;
			for (unsigned j = 0; j < cnt; j++) {
				if (s[j].pid != out[k].pid)
					continue;
				sm += s[j].smUtil;
				mem += s[j].memUtil;
				enc += s[j].encUtil;
				dec += s[j].decUtil;
				m++;
			}
			out[k].util_ok = true;
			out[k].util_sampled = m > 0;
			if (m) {
				out[k].sm_pct = (unsigned)(sm / m + 0.5);
				out[k].mem_pct = (unsigned)(mem / m + 0.5);
				out[k].enc_pct = (unsigned)(enc / m + 0.5);
				out[k].dec_pct = (unsigned)(dec / m + 0.5);
			}
		}
		for (unsigned j = 0; j < cnt; j++)
			if (s[j].timeStamp > newest)
				newest = s[j].timeStamp;
		d->proc_last_ts = newest;
	} else {
		ok_rc(d, rc);
	}
	free(s);
}

int gpu_xid_take(gpu_ctx *c, int i, unsigned long long *out, int max)
{
	if (i < 0 || i >= c->n)
		return 0;
	gpu_dev *d = &c->dev[i];
	int n = d->nxid_new < max ? d->nxid_new : max;
	for (int k = 0; k < n; k++)
		out[k] = d->xid_new[k];
	d->nxid_new = 0;
	return n;
}

int gpu_processes(gpu_ctx *c, int i, gpu_proc *out, int max)
{
	gpu_dev *d = &c->dev[i];
	if (d->lost)
		return -1;
	unsigned long long total = 0;
	pthread_mutex_lock(&d->mu);
	if (d->cache_ok[GM_MEM_TOTAL])
		total = (unsigned long long)d->cache_v[GM_MEM_TOTAL] * 1024ULL * 1024ULL;
	pthread_mutex_unlock(&d->mu);
	int n = 0;
	if (c->api.nvmlDeviceGetComputeRunningProcesses_v3)
		n = list_procs(c, d, c->api.nvmlDeviceGetComputeRunningProcesses_v3,
		               GPU_PROC_COMPUTE, out, n, max, total);
	else if (c->api.nvmlDeviceGetComputeRunningProcesses_v2)
		n = list_procs(c, d, c->api.nvmlDeviceGetComputeRunningProcesses_v2,
		               GPU_PROC_COMPUTE, out, n, max, total);
	else if (c->api.nvmlDeviceGetComputeRunningProcesses)
		n = list_procs_v1(c, d, out, n, max, total);
	if (n < 0)
		return d->lost ? -1 : 0;
	if (c->api.nvmlDeviceGetGraphicsRunningProcesses_v3) {
		int m = list_procs(c, d, c->api.nvmlDeviceGetGraphicsRunningProcesses_v3,
		                   GPU_PROC_GRAPHICS, out, n, max, total);
		if (m >= 0)
			n = m;
	}
	proc_utilization(c, d, out, n);
	return d->lost ? -1 : n;
}

/* NVML names a MIG device "<GPU name> MIG <profile>". */
static void mig_profile(const char *name, char *out, size_t len)
{
	const char *p = strstr(name, " MIG ");
	snprintf(out, len, "%s", p ? p + 5 : "");
}

static void read_mig(gpu_ctx *c, nvmlDevice_t h, gpu_mig *m)
{
	unsigned v;
	if (c->api.nvmlDeviceGetGpuInstanceId && c->api.nvmlDeviceGetComputeInstanceId &&
	    c->api.nvmlDeviceGetGpuInstanceId(h, &m->gi) == NVML_SUCCESS &&
	    c->api.nvmlDeviceGetComputeInstanceId(h, &v) == NVML_SUCCESS) {
		m->ci = v;
		m->ids_ok = true;
	}
	if (c->api.nvmlDeviceGetUUID &&
	    c->api.nvmlDeviceGetUUID(h, m->uuid, sizeof m->uuid) != NVML_SUCCESS)
		m->uuid[0] = '\0';
	if (c->api.nvmlDeviceGetName &&
	    c->api.nvmlDeviceGetName(h, m->name, sizeof m->name) == NVML_SUCCESS)
		mig_profile(m->name, m->profile, sizeof m->profile);
	else
		m->name[0] = '\0';
	nvmlMemory_v2_t mem = {.version = nvmlMemory_v2};
	if (c->api.nvmlDeviceGetMemoryInfo_v2 &&
	    c->api.nvmlDeviceGetMemoryInfo_v2(h, &mem) == NVML_SUCCESS) {
		m->mem_ok = true;
		m->mem_total_mib = (double)(mem.total / (1024 * 1024));
		m->mem_used_mib = (double)(mem.used / (1024 * 1024));
		m->mem_free_mib = (double)(mem.free / (1024 * 1024));
	}
	nvmlDeviceAttributes_t a;
	if (c->api.nvmlDeviceGetAttributes_v2 &&
	    c->api.nvmlDeviceGetAttributes_v2(h, &a) == NVML_SUCCESS) {
		m->attr_ok = true;
		m->sm_count = a.multiprocessorCount;
		m->ce_count = a.sharedCopyEngineCount;
		m->dec_count = a.sharedDecoderCount;
		m->enc_count = a.sharedEncoderCount;
		m->jpg_count = a.sharedJpegCount;
		m->ofa_count = a.sharedOfaCount;
	}
}

int gpu_mig_devices(gpu_ctx *c, int i, gpu_mig *out, int max)
{
	gpu_dev *d = &c->dev[i];
	unsigned cur, pend, slots;
	if (d->lost || !c->api.nvmlDeviceGetMigMode || !c->api.nvmlDeviceGetMaxMigDeviceCount ||
	    !c->api.nvmlDeviceGetMigDeviceHandleByIndex ||
	    c->api.nvmlDeviceGetMigMode(d->h, &cur, &pend) != NVML_SUCCESS || !cur ||
	    c->api.nvmlDeviceGetMaxMigDeviceCount(d->h, &slots) != NVML_SUCCESS)
		return 0;
	int n = 0;
	for (unsigned k = 0; k < slots && n < max; k++) {
		nvmlDevice_t h;
		/* empty slots answer NOT_FOUND; the devices need not be contiguous */
		if (c->api.nvmlDeviceGetMigDeviceHandleByIndex(d->h, k, &h) != NVML_SUCCESS)
			continue;
		memset(&out[n], 0, sizeof out[n]);
		out[n].index = (int)k;
		read_mig(c, h, &out[n]);
		n++;
	}
	return n;
}

bool gpu_process_name(gpu_ctx *c, unsigned pid, char *out, int len)
{
	if (len <= 0)
		return false;
	out[0] = '\0';
	if (!c->api.nvmlSystemGetProcessName ||
	    c->api.nvmlSystemGetProcessName(pid, out, (unsigned)len) != NVML_SUCCESS) {
		out[0] = '\0';
		return false;
	}
	out[len - 1] = '\0';
	return out[0] != '\0';
}

int gpu_retired_pages(gpu_ctx *c, int i, int cause, unsigned long long *addrs, int max)
{
	gpu_dev *d = &c->dev[i];
	if (d->lost || !c->api.nvmlDeviceGetRetiredPages || max < 0)
		return -1;
	unsigned n = 0;
	nvmlReturn_t rc = c->api.nvmlDeviceGetRetiredPages(d->h, cause, &n, NULL);
	if (rc != NVML_SUCCESS && rc != NVML_ERROR_INSUFFICIENT_SIZE) {
		ok_rc(d, rc);
		return -1;
	}
	if (n == 0 || max == 0)
		return (int)n;
	unsigned want = n < (unsigned)max ? n : (unsigned)max;
	unsigned long long *buf = calloc(n, sizeof *buf);
	if (!buf)
		return -1;
	unsigned got = n;
	rc = c->api.nvmlDeviceGetRetiredPages(d->h, cause, &got, buf);
	if (!ok_rc(d, rc)) {
		free(buf);
		return -1;
	}
	if (got < want)
		want = got;
	memcpy(addrs, buf, want * sizeof *buf);
	free(buf);
	return (int)got;
}

/* ---- topology ---- */

int gpu_topology_level(gpu_ctx *c, int i, int j)
{
	if (i == j)
		return NVML_TOPOLOGY_INTERNAL;
	gpu_dev *a = &c->dev[i], *b = &c->dev[j];
	nvmlGpuTopologyLevel_t lvl;
	if (a->lost || b->lost || !c->api.nvmlDeviceGetTopologyCommonAncestor)
		return -1;
	if (c->api.nvmlDeviceGetTopologyCommonAncestor(a->h, b->h, &lvl) != NVML_SUCCESS)
		return -1;
	return lvl;
}

/* "00000000:3B:00.0" and "0000:3b:00.0" name the same device. */
static bool same_bus_id(const char *x, const char *y)
{
	const char *cx = strchr(x, ':'), *cy = strchr(y, ':');
	if (!cx || !cy)
		return strcasecmp(x, y) == 0;
	unsigned long dx = strtoul(x, NULL, 16), dy = strtoul(y, NULL, 16);
	return dx == dy && strcasecmp(cx, cy) == 0;
}

int gpu_nvlink_states(gpu_ctx *c, int i, int *states, int max)
{
	gpu_dev *d = &c->dev[i];
	if (d->lost || !c->api.nvmlDeviceGetNvLinkState)
		return 0;
	int n = 0;
	/* The link count differs by driver (18 or 36): ask until the driver says no. */
	for (unsigned l = 0; l < GPU_NVLINK_MAX && (int)l < max; l++) {
		nvmlEnableState_t st;
		nvmlReturn_t rc = c->api.nvmlDeviceGetNvLinkState(d->h, l, &st);
		if (rc != NVML_SUCCESS)
			break;
		states[n++] = st == NVML_FEATURE_ENABLED;
	}
	return n;
}

/* Active links of GPU i that end at an NVSwitch (-1: unknown). */
static int switch_links(gpu_ctx *c, int i, const int *states, int nl)
{
	gpu_dev *d = &c->dev[i];
	if (!c->api.nvmlDeviceGetNvLinkRemoteDeviceType)
		return -1;
	int n = 0;
	for (int l = 0; l < nl; l++) {
		nvmlIntNvLinkDeviceType_t t;
		if (states[l] &&
		    c->api.nvmlDeviceGetNvLinkRemoteDeviceType(d->h, (unsigned)l, &t) ==
		        NVML_SUCCESS &&
		    t == NVML_NVLINK_DEVICE_TYPE_SWITCH)
			n++;
	}
	return n;
}

/*
 * Links from i that reach j: direct links whose far end is j, plus, on
 * NVSwitch systems (HGX), every switch link of i when j hangs off the same
 * fabric, which is how nvidia-smi arrives at NV18 between every pair.
 */
int gpu_nvlink_count(gpu_ctx *c, int i, int j)
{
	gpu_dev *d = &c->dev[i];
	if (i == j || d->lost || c->dev[j].lost)
		return 0;
	if (!c->api.nvmlDeviceGetNvLinkState || !c->api.nvmlDeviceGetNvLinkRemotePciInfo_v2)
		return -1;
	int states[GPU_NVLINK_MAX];
	int nl = gpu_nvlink_states(c, i, states, GPU_NVLINK_MAX);
	int cnt = 0;
	for (int l = 0; l < nl; l++) {
		if (!states[l])
			continue;
		nvmlPciInfo_t pci;
		memset(&pci, 0, sizeof pci);
		if (c->api.nvmlDeviceGetNvLinkRemotePciInfo_v2(d->h, (unsigned)l, &pci) ==
		        NVML_SUCCESS &&
		    same_bus_id(pci.busId, c->dev[j].st.pci_bus_id))
			cnt++;
	}
	int si = switch_links(c, i, states, nl);
	if (si > 0) {
		int sj_states[GPU_NVLINK_MAX];
		int nj = gpu_nvlink_states(c, j, sj_states, GPU_NVLINK_MAX);
		if (switch_links(c, j, sj_states, nj) > 0)
			cnt += si;
	}
	return cnt;
}

/* ---- --gpus ---- */

static bool uuid_matches(const char *uuid, const char *want, bool *exact)
{
	const char *u = uuid, *w = want;
	if (!strncasecmp(u, "GPU-", 4))
		u += 4;
	if (!strncasecmp(w, "GPU-", 4))
		w += 4;
	size_t wl = strlen(w);
	if (wl == 0)
		return false;
	*exact = strcasecmp(u, w) == 0;
	return strncasecmp(u, w, wl) == 0;
}

int gpu_parse_selection(const char *list, const gpu_ident *ids, int n, int *sel, int max_sel,
                        char *err, int errlen)
{
	char *copy = strdup(list);
	if (!copy) {
		snprintf(err, (size_t)errlen, "out of memory");
		return -1;
	}
	int cnt = 0;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		char *end = tok + strlen(tok);
		while (end > tok && end[-1] == ' ')
			*--end = '\0';
		if (!*tok)
			continue;
		int idx = -1;
		char *e;
		long v = strtol(tok, &e, 10);
		bool numeric = !*e && tok[0] != '-' && tok[0] != '+';
		if (numeric && v < n) {
			idx = (int)v;
		} else {
			int matches = 0;
			for (int k = 0; k < n; k++) {
				bool exact = false;
				if (uuid_matches(ids[k].uuid, tok, &exact)) {
					if (exact) {
						idx = k;
						matches = 1;
						break;
					}
					idx = k;
					matches++;
				}
			}
			if (matches == 0 && numeric) {
				/* All digits and no UUID starts so: it was meant as an index. */
				snprintf(err, (size_t)errlen,
				         "GPU index %s does not exist (%d GPU%s)", tok, n,
				         n == 1 ? "" : "s");
				free(copy);
				return -1;
			}
			if (matches == 0) {
				snprintf(err, (size_t)errlen,
				         "no GPU has a UUID starting with '%s'", tok);
				free(copy);
				return -1;
			}
			if (matches > 1) {
				snprintf(err, (size_t)errlen,
				         "'%s' matches %d GPUs: give more of the UUID", tok,
				         matches);
				free(copy);
				return -1;
			}
		}
		bool dup = false;
		for (int k = 0; k < cnt; k++)
			dup |= sel[k] == idx;
		if (!dup && cnt < max_sel)
			sel[cnt++] = idx;
	}
	free(copy);
	if (cnt == 0) {
		snprintf(err, (size_t)errlen, "empty GPU list");
		return -1;
	}
	return cnt;
}
