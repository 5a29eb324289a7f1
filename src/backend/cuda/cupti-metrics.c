/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hardware metrics per kernel for the CUPTI backend (include/flagprism/cupti-metrics.h): the
 * range profiler in auto-range + kernel-replay mode on the current CUDA context, the profiler
 * host API that builds the configuration and evaluates the counter data, and the aggregation
 * of per-launch values onto call-tree nodes. cupti.c calls in at start (lock held), at every
 * launch API callback and kernel record while a session collects, and at stop (lock held).
 * One session at a time collects metrics. It does not sample PCs, profile CUDA graphs' kernels
 * individually, or lock clocks (CUPTI 13.0 cannot).
 *
 * Pairing. Auto range makes one range per kernel of the profiled context, in launch order (each
 * launch is serialised: the launch call returns after its kernel ran, once per pass). So range i
 * belongs to the i-th successful launch the launch callback saw in that context; the launch
 * callback also gives the kernel's name (symbolName), the call path / metadata hand-over and the
 * launch context. The kernel activity records are not needed: on the H200 (CUPTI 13.0, GH100)
 * the CONCURRENT_KERNEL record of a profiled kernel arrives with start = end = 0, and another
 * version may not emit it at all. This session therefore files its profiled kernels itself, at
 * stop: the kernel time is the record's when a record with times came, else the range's
 * gpu__time_duration.sum (always collected). cupti.c hands each record of a recorded launch
 * here instead of filing it (fp__cupti_metrics_claim), so a kernel is counted once whatever
 * arrives. A range that cannot be paired (count mismatch, CUDA graph launches, launches past
 * the table) is kept in the vendor file with the reason and attached to nothing.
 *
 * The launch path in this mode takes a mutex and may intern a kernel name once: the launch is
 * about to be serialised and replayed by CUPTI (milliseconds), so this costs nothing measurable,
 * and a name pointer kept until stop could dangle after a module unload.
 */
#include "fp-setup.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include <flagprism/cupti-metrics.h>
#include <flagprism/json.h>
#include <flagprism/outfile.h>
#include <flagprism/sink.h>

#include "backend/cuda/cupti-abi.h"
#include "backend/cuda/cupti-internal.h" /* fp__cupti_sink */
#include "backend/cuda/cupti-metrics-internal.h"
#include "backend/cuda/cupti-profiler-abi.h"

#define LAUNCH_CAP_FACTOR 2 /* launches kept per session: ranges x this */
#define NAME_CACHE 64
#define NAME_MAX_LEN ((size_t)1 << 16)
#define TIME_METRIC "gpu__time_duration.sum"

struct prof_fns {
#define X(name, params) fp__cupti_##name##_fn name;
	FP__CUPTI_PROF_FUNCS(X)
#undef X
};

typedef int (*cu_ctx_get_device_fn)(int *dev);
typedef int (*cu_primary_retain_fn)(void **ctx, int dev);
typedef int (*cu_ctx_set_current_fn)(void *ctx);
typedef int (*cu_ctx_get_current_fn)(void **ctx);

/* The driver API's parameter blocks (cuda.h / generated_cuda_meta.h) the grid is read from. */
struct cu_launch_kernel_params { /* cuLaunchKernel(_ptsz)_params */
	void *f;
	unsigned grid[3], block[3], smem;
	void *stream;
	void **params, **extra;
};
struct cu_launch_config { /* CUlaunchConfig */
	unsigned grid[3], block[3], smem;
	void *stream;
	void *attrs;
	unsigned nattrs;
};
struct cu_launch_kernel_ex_params { /* cuLaunchKernelEx(_ptsz)_params */
	const struct cu_launch_config *config;
	void *f;
	void **params, **extra;
};
struct cuda_dim3 {
	unsigned x, y, z;
};
struct cuda_launch_kernel_params { /* cudaLaunchKernel(_ptsz)_v7000_params */
	const void *func;
	struct cuda_dim3 grid, block;
	void **args;
	size_t smem;
	void *stream;
};

/* One launch of the profiled context, in launch-callback order. */
struct mlaunch {
	uint32_t corr[2]; /* correlation ids of the nest (runtime, driver); 0: none */
	uint32_t lctx, callpath;
	uint32_t name; /* name id from symbolName, FP_SINK_NO_NAME: none given */
	uint32_t grid[3];
	bool grid_known, has_md, active, failed;
	struct fp_sink_metadata md;
	uint64_t enter_ns;
	/* the kernel record, if one came */
	bool rec, rec_timed;
	uint32_t rec_device, rec_name, rec_grid[3];
	uint64_t rec_stream, rec_begin, rec_end;
};

/* The request for the next session (fp_cupti_metrics_request()). */
static struct {
	bool set;
	size_t n;
	size_t max_ranges;
	char names[FP_CUPTI_METRICS_MAX][FP_CUPTI_METRIC_NAME_MAX];
} req;

/* The collecting session: written under cupti.c's lock; launches under ml_lock. */
static struct {
	struct fp_sink_session *_Atomic session;
	struct prof_fns f;
	bool prof_init;
	struct fp__cupti_host_object *host;
	struct fp__cupti_rp_object *rp;
	bool started;
	int device;
	void *ctx;
	size_t n;    /* metrics configured */
	size_t tdur; /* index of gpu__time_duration.sum, SIZE_MAX: not on this chip */
	const char *names[FP_CUPTI_METRICS_MAX];
	char name_buf[FP_CUPTI_METRICS_MAX][FP_CUPTI_METRIC_NAME_MAX];
	enum fp_cupti_metric_agg agg[FP_CUPTI_METRICS_MAX];
	size_t max_ranges;
	uint8_t *avail, *config, *data;
	size_t config_size, data_size;
	/* launches of the profiled context (ml_lock) */
	struct mlaunch *L;
	size_t nl, lcap;
	uint64_t l_lost, graphs, other_ctx, dup_records;
	uint32_t *hkey, *hval; /* correlation id -> index in L (key 0: empty) */
	size_t hcap;
	unsigned gen;
	struct {
		const char *ptr, *str;
		uint32_t id;
	} nc[NAME_CACHE];
} m;

atomic_bool fp__cupti_metrics_on;
static pthread_mutex_t ml_lock = PTHREAD_MUTEX_INITIALIZER;
/* The launching thread's launch in L (its outermost call is in progress). */
static _Thread_local size_t tl_slot = SIZE_MAX;
static _Thread_local unsigned tl_gen;
static struct fp_cupti_metrics_status last;

static int launches_init(void);

/* ---- names and aggregation (no CUPTI) --------------------------------------------------------- */

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.';
}

int fp_cupti_metrics_request(const char *list, size_t max_ranges, struct fp_diag *diag)
{
	const char *p, *e;
	size_t n = 0, i;

	memset(&req, 0, sizeof(req));
	if (!list)
		return FP_OK;
	if (max_ranges > FP_CUPTI_METRICS_MAX_RANGES)
		return fp_diag_set(diag, FP_ELIMIT, 0,
				   "at most %u kernels can be profiled (asked %zu)",
				   FP_CUPTI_METRICS_MAX_RANGES, max_ranges);
	while (*list == ' ')
		list++;
	if (!strcmp(list, "default"))
		list = FP_CUPTI_METRICS_DEFAULT;
	for (p = list; *p;) {
		size_t len;

		while (*p == ' ')
			p++;
		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		len = (size_t)(e - p);
		while (len && p[len - 1] == ' ')
			len--;
		if (len) {
			for (i = 0; i < len; i++)
				if (!name_char(p[i]))
					goto fail_name;
			if (len >= FP_CUPTI_METRIC_NAME_MAX)
				return fp_diag_set(diag, FP_ELIMIT, 0,
						   "metric name of %zu bytes (at most %d)", len,
						   FP_CUPTI_METRIC_NAME_MAX - 1);
			if (n == FP_CUPTI_METRICS_MAX)
				return fp_diag_set(diag, FP_ELIMIT, 0,
						   "more than %d metrics in one session",
						   FP_CUPTI_METRICS_MAX);
			memcpy(req.names[n], p, len);
			req.names[n][len] = '\0';
			for (i = 0; i < n; i++)
				if (!strcmp(req.names[i], req.names[n]))
					return fp_diag_set(diag, FP_EINVAL, 0,
							   "metric '%s' is listed twice",
							   req.names[n]);
			n++;
		}
		p = *e ? e + 1 : e;
		continue;
fail_name:
		memset(&req, 0, sizeof(req));
		return fp_diag_set(
			diag, FP_EINVAL, 0,
			"'%.*s' is not a metric name (letters, digits, '_' and '.', e.g. "
			"dram__bytes_read.sum)",
			(int)FP_MIN(len, 100), p);
	}
	if (!n)
		return FP_OK;
	/* The kernel time of a profiled kernel when its activity record has none (file top). */
	for (i = 0; i < n && strcmp(req.names[i], TIME_METRIC); i++)
		;
	if (i == n) {
		if (n == FP_CUPTI_METRICS_MAX) {
			memset(&req, 0, sizeof(req));
			return fp_diag_set(diag, FP_ELIMIT, 0,
					   "more than %d metrics in one session (" TIME_METRIC
					   " is always added)",
					   FP_CUPTI_METRICS_MAX);
		}
		snprintf(req.names[n++], sizeof(req.names[0]), "%s", TIME_METRIC);
	}
	req.n = n;
	req.set = true;
	req.max_ranges = max_ranges ? max_ranges : FP_CUPTI_METRICS_DEFAULT_RANGES;
	return FP_OK;
}

bool fp_cupti_metrics_active(void)
{
	return atomic_load(&m.session) != NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !memcmp(s + a - b, suffix, b);
}

enum fp_cupti_metric_agg fp_cupti_metric_agg(const char *name, int metric_type)
{
	if (!name)
		return FP_CUPTI_METRIC_MEAN;
	if (metric_type == FP__CUPTI_METRIC_TYPE_RATIO ||
	    metric_type == FP__CUPTI_METRIC_TYPE_THROUGHPUT)
		return FP_CUPTI_METRIC_MEAN;
	if (!strncmp(name, "launch__", 8))
		return FP_CUPTI_METRIC_MEAN;
	if (ends_with(name, ".sum") || ends_with(name, ".avg"))
		return FP_CUPTI_METRIC_SUM;
	return FP_CUPTI_METRIC_MEAN;
}

int fp_cupti_metric_tree_name(const char *name, enum fp_cupti_metric_agg agg, char *buf,
			      size_t size)
{
	int k;

	if (!name || !buf || !size)
		return FP_EINVAL;
	k = snprintf(buf, size, "hw:%s%s", name, agg == FP_CUPTI_METRIC_MEAN ? " (pty)" : "");
	if (k < 0)
		return FP_EINVAL;
	return (size_t)k >= size ? (int)(size - 1) : k;
}

void fp_cupti_metrics_last(struct fp_cupti_metrics_status *out)
{
	if (out)
		*out = last;
}

/* ---- collection (cupti.c calls these) -------------------------------------------------------- */

static void reason(const char *fmt, ...) FP_PRINTF(1, 2);
static void reason(const char *fmt, ...)
{
	va_list ap;

	if (last.nreasons >= FP_CUPTI_METRICS_REASONS)
		return;
	va_start(ap, fmt);
	vsnprintf(last.reasons[last.nreasons++], sizeof(last.reasons[0]), fmt, ap);
	va_end(ap);
}

static void *sym(void *h, const char *name)
{
	dlerror();
	return h ? dlsym(h, name) : NULL;
}

static const char *err_text(void *lib, int rc)
{
	typedef int (*str_fn)(int, const char **);
	const char *s = NULL;
	str_fn f;
	void *p = sym(lib, "cuptiGetResultString");

	if (!p)
		return "unknown error";
	memcpy(&f, &p, sizeof(p));
	if (f(rc, &s) != 0 || !s)
		return "unknown error";
	return s;
}

#define PRIV_HINT                                                                              \
	"hardware counters are restricted to administrators on this system: load the NVIDIA "  \
	"driver with NVreg_RestrictProfilingToAdminUsers=0 (e.g. 'options nvidia "             \
	"NVreg_RestrictProfilingToAdminUsers=0' in /etc/modprobe.d, then reload the module), " \
	"or run as root / with CAP_SYS_ADMIN (see 'flagprism doctor')"

/* Undo whatever start() got to; safe at any step. */
static void teardown(void)
{
	if (m.rp) {
		struct fp__cupti_rp_object_params p = {FP__CUPTI_SZ_RP_OBJECT, NULL, m.rp};

		if (m.started) {
			struct fp__cupti_rp_stop_params sp;

			memset(&sp, 0, sizeof(sp));
			sp.structSize = FP__CUPTI_SZ_RP_STOP;
			sp.pRangeProfilerObject = m.rp;
			m.f.cuptiRangeProfilerStop(&sp);
		}
		m.f.cuptiRangeProfilerDisable(&p);
	}
	if (m.host) {
		struct fp__cupti_host_deinit_params p = {FP__CUPTI_SZ_HOST_DEINIT, NULL, m.host};

		m.f.cuptiProfilerHostDeinitialize(&p);
	}
	if (m.prof_init) {
		struct fp__cupti_prof_init_params p = {FP__CUPTI_SZ_PROF_INIT, NULL};

		m.f.cuptiProfilerDeInitialize(&p);
	}
	fp_free(m.avail);
	fp_free(m.config);
	fp_free(m.data);
	atomic_store(&fp__cupti_metrics_on, false);
	pthread_mutex_lock(&ml_lock);
	atomic_store(&m.session, NULL);
	fp_free(m.L);
	fp_free(m.hkey);
	fp_free(m.hval);
	m.L = NULL;
	m.hkey = m.hval = NULL;
	m.nl = m.lcap = m.hcap = 0;
	m.l_lost = m.graphs = m.other_ctx = m.dup_records = 0;
	m.gen++;
	pthread_mutex_unlock(&ml_lock);
	m.avail = m.config = m.data = NULL;
	m.rp = NULL;
	m.host = NULL;
	m.ctx = NULL;
	m.prof_init = m.started = false;
}

/* The context kernels will run in: the current one, else device 0's primary context. */
static int pick_context(void *cuda, void **ctx, int *dev, struct fp_diag *diag)
{
	cu_ctx_get_current_fn get_cur;
	cu_ctx_get_device_fn get_dev;
	cu_primary_retain_fn retain;
	cu_ctx_set_current_fn set_cur;
	void *p;

	*ctx = NULL;
	*dev = 0;
	p = sym(cuda, "cuCtxGetCurrent");
	if (p) {
		memcpy(&get_cur, &p, sizeof(p));
		if (get_cur(ctx) != 0)
			*ctx = NULL;
	}
	if (!*ctx) {
		void *q = sym(cuda, "cuDevicePrimaryCtxRetain");

		p = sym(cuda, "cuCtxSetCurrent");
		if (!p || !q)
			return fp_diag_set(
				diag, FP_ENOTSUP, 0,
				"hardware metrics need a CUDA context and the driver has "
				"no cuDevicePrimaryCtxRetain/cuCtxSetCurrent");
		memcpy(&retain, &q, sizeof(q));
		memcpy(&set_cur, &p, sizeof(p));
		if (retain(ctx, 0) != 0 || !*ctx || set_cur(*ctx) != 0)
			return fp_diag_set(diag, FP_ENOTSUP, 0,
					   "hardware metrics: cannot make device 0's primary CUDA "
					   "context current");
	}
	p = sym(cuda, "cuCtxGetDevice");
	if (p) {
		memcpy(&get_dev, &p, sizeof(p));
		if (get_dev(dev) != 0)
			*dev = 0;
	}
	return FP_OK;
}

#define CALL(fn, params, what)                                                                   \
	do {                                                                                     \
		int r_ = m.f.fn(params);                                                         \
		if (r_ != FP__CUPTI_SUCCESS) {                                                   \
			rc = fp_diag_set(                                                        \
				diag,                                                            \
				r_ == FP__CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? FP_ENOTSUP :     \
										FP_EVENDOR,      \
				0, "hardware metrics: %s failed: %s (CUPTI error %d)%s%s", what, \
				err_text(lib, r_), r_,                                           \
				r_ == FP__CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? "; " : "",       \
				r_ == FP__CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? PRIV_HINT : ""); \
			goto fail_setup;                                                         \
		}                                                                                \
	} while (0)

int fp__cupti_metrics_start(struct fp_sink_session *s, void *lib, void *cuda, struct fp_diag *diag)
{
	struct fp__cupti_prof_init_params ip;
	struct fp__cupti_chip_name_params cp;
	struct fp__cupti_avail_params ap;
	struct fp__cupti_host_init_params hp;
	struct fp__cupti_add_metrics_params amp;
	struct fp__cupti_config_size_params csp;
	struct fp__cupti_config_image_params cip;
	struct fp__cupti_passes_params pp;
	struct fp__cupti_rp_enable_params ep;
	struct fp__cupti_rp_datasize_params dsp;
	struct fp__cupti_rp_datainit_params dip;
	struct fp__cupti_rp_setconfig_params scp;
	struct fp__cupti_rp_object_params sp;
	void *ctx, *p;
	size_t i, nreq;
	int rc;

	if (!req.set)
		return FP_OK;
	nreq = req.n;
	req.set = false;
	if (atomic_load(&m.session))
		return fp_diag_set(diag, FP_EBUSY, 0,
				   "hardware metrics are already collected by another session; one "
				   "session at a time can collect them");
	memset(&last, 0, sizeof(last));
	/* Resolve the profiling API from the libcupti the backend loaded. */
#define X(name, params)                                                                         \
	p = sym(lib, #name);                                                                    \
	if (!p)                                                                                 \
		return fp_diag_set(diag, FP_ENOTSUP, 0,                                         \
				   "hardware metrics need CUPTI's range profiler (CUDA 13.0's " \
				   "libcupti); the loaded one has no %s",                       \
				   #name);                                                      \
	memcpy(&m.f.name, &p, sizeof(p));
	FP__CUPTI_PROF_FUNCS(X)
#undef X
	rc = pick_context(cuda, &ctx, &m.device, diag);
	if (rc)
		return rc;
	m.ctx = ctx;
	m.max_ranges = req.max_ranges;

	ip = (struct fp__cupti_prof_init_params){FP__CUPTI_SZ_PROF_INIT, NULL};
	CALL(cuptiProfilerInitialize, &ip, "cuptiProfilerInitialize");
	m.prof_init = true;
	memset(&cp, 0, sizeof(cp));
	cp.structSize = FP__CUPTI_SZ_CHIP_NAME;
	cp.deviceIndex = (size_t)m.device;
	CALL(cuptiDeviceGetChipName, &cp, "cuptiDeviceGetChipName");
	snprintf(last.chip, sizeof(last.chip), "%s", cp.pChipName ? cp.pChipName : "");
	memset(&ap, 0, sizeof(ap));
	ap.structSize = FP__CUPTI_SZ_AVAIL;
	ap.ctx = ctx;
	CALL(cuptiProfilerGetCounterAvailability, &ap,
	     "cuptiProfilerGetCounterAvailability (size)");
	m.avail = fp_malloc(ap.counterAvailabilityImageSize ? ap.counterAvailabilityImageSize : 1);
	if (!m.avail) {
		rc = FP_ENOMEM;
		goto fail_setup;
	}
	ap.pCounterAvailabilityImage = m.avail;
	CALL(cuptiProfilerGetCounterAvailability, &ap, "cuptiProfilerGetCounterAvailability");
	memset(&hp, 0, sizeof(hp));
	hp.structSize = FP__CUPTI_SZ_HOST_INIT;
	hp.profilerType = FP__CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	hp.pChipName = cp.pChipName;
	hp.pCounterAvailabilityImage = m.avail;
	CALL(cuptiProfilerHostInitialize, &hp, "cuptiProfilerHostInitialize");
	m.host = hp.pHostObject;

	/* Keep the names this chip knows; the others become degradation reasons. */
	m.n = 0;
	for (i = 0; i < nreq; i++) {
		struct fp__cupti_metric_props_params mp;
		int r;

		memset(&mp, 0, sizeof(mp));
		mp.structSize = FP__CUPTI_SZ_METRIC_PROPS;
		mp.pHostObject = m.host;
		mp.pMetricName = req.names[i];
		r = m.f.cuptiProfilerHostGetMetricProperties(&mp);
		if (r != FP__CUPTI_SUCCESS) {
			reason("metric_unsupported: %s on %s (%s, CUPTI error %d)", req.names[i],
			       last.chip, err_text(lib, r), r);
			continue;
		}
		memcpy(m.name_buf[m.n], req.names[i], sizeof(m.name_buf[0]));
		m.names[m.n] = m.name_buf[m.n];
		m.agg[m.n] = fp_cupti_metric_agg(req.names[i], mp.metricType);
		m.n++;
	}
	m.tdur = SIZE_MAX;
	for (i = 0; i < m.n; i++)
		if (!strcmp(m.names[i], TIME_METRIC))
			m.tdur = i;
	if (!m.n) {
		rc = fp_diag_set(diag, FP_ENOTSUP, 0,
				 "hardware metrics: none of the %zu requested metrics exists on %s "
				 "(first: %s)",
				 nreq, last.chip, req.names[0]);
		goto fail_setup;
	}
	memset(&amp, 0, sizeof(amp));
	amp.structSize = FP__CUPTI_SZ_ADD_METRICS;
	amp.pHostObject = m.host;
	amp.ppMetricNames = m.names;
	amp.numMetrics = m.n;
	CALL(cuptiProfilerHostConfigAddMetrics, &amp, "cuptiProfilerHostConfigAddMetrics");
	memset(&csp, 0, sizeof(csp));
	csp.structSize = FP__CUPTI_SZ_CONFIG_SIZE;
	csp.pHostObject = m.host;
	CALL(cuptiProfilerHostGetConfigImageSize, &csp, "cuptiProfilerHostGetConfigImageSize");
	m.config_size = csp.configImageSize;
	m.config = fp_malloc(m.config_size ? m.config_size : 1);
	if (!m.config) {
		rc = FP_ENOMEM;
		goto fail_setup;
	}
	memset(&cip, 0, sizeof(cip));
	cip.structSize = FP__CUPTI_SZ_CONFIG_IMAGE;
	cip.pHostObject = m.host;
	cip.configImageSize = m.config_size;
	cip.pConfigImage = m.config;
	CALL(cuptiProfilerHostGetConfigImage, &cip, "cuptiProfilerHostGetConfigImage");
	memset(&pp, 0, sizeof(pp));
	pp.structSize = FP__CUPTI_SZ_PASSES;
	pp.configImageSize = m.config_size;
	pp.pConfigImage = m.config;
	CALL(cuptiProfilerHostGetNumOfPasses, &pp, "cuptiProfilerHostGetNumOfPasses");
	last.passes = (uint32_t)pp.numOfPasses;
	last.metrics = (uint32_t)m.n;

	memset(&ep, 0, sizeof(ep));
	ep.structSize = FP__CUPTI_SZ_RP_ENABLE;
	ep.ctx = ctx;
	CALL(cuptiRangeProfilerEnable, &ep, "cuptiRangeProfilerEnable");
	m.rp = ep.pRangeProfilerObject;
	memset(&dsp, 0, sizeof(dsp));
	dsp.structSize = FP__CUPTI_SZ_RP_DATASIZE;
	dsp.pRangeProfilerObject = m.rp;
	dsp.pMetricNames = m.names;
	dsp.numMetrics = m.n;
	dsp.maxNumOfRanges = m.max_ranges;
	dsp.maxNumRangeTreeNodes = (uint32_t)m.max_ranges;
	CALL(cuptiRangeProfilerGetCounterDataSize, &dsp, "cuptiRangeProfilerGetCounterDataSize");
	m.data_size = dsp.counterDataSize;
	m.data = fp_malloc(m.data_size ? m.data_size : 1);
	if (!m.data) {
		rc = fp_diag_set(
			diag, FP_ENOMEM, 0,
			"hardware metrics: cannot allocate the counter data image (%zu bytes "
			"for %zu kernels)",
			m.data_size, m.max_ranges);
		goto fail_setup;
	}
	memset(&dip, 0, sizeof(dip));
	dip.structSize = FP__CUPTI_SZ_RP_DATAINIT;
	dip.pRangeProfilerObject = m.rp;
	dip.counterDataSize = m.data_size;
	dip.pCounterData = m.data;
	CALL(cuptiRangeProfilerCounterDataImageInitialize, &dip,
	     "cuptiRangeProfilerCounterDataImageInitialize");
	memset(&scp, 0, sizeof(scp));
	scp.structSize = FP__CUPTI_SZ_RP_SETCONFIG;
	scp.pRangeProfilerObject = m.rp;
	scp.configSize = m.config_size;
	scp.pConfig = m.config;
	scp.counterDataImageSize = m.data_size;
	scp.pCounterDataImage = m.data;
	scp.range = FP__CUPTI_AUTO_RANGE;
	scp.replayMode = FP__CUPTI_KERNEL_REPLAY;
	scp.maxRangesPerPass = m.max_ranges;
	scp.numNestingLevels = 1;
	scp.minNestingLevel = 1;
	scp.passIndex = 0;
	scp.targetNestingLevel = 1;
	CALL(cuptiRangeProfilerSetConfig, &scp, "cuptiRangeProfilerSetConfig");
	rc = launches_init();
	if (rc)
		goto fail_setup;
	sp = (struct fp__cupti_rp_object_params){FP__CUPTI_SZ_RP_OBJECT, NULL, m.rp};
	CALL(cuptiRangeProfilerStart, &sp, "cuptiRangeProfilerStart");
	m.started = true;
	pthread_mutex_lock(&ml_lock);
	m.gen++;
	atomic_store(&m.session, s);
	pthread_mutex_unlock(&ml_lock);
	atomic_store(&fp__cupti_metrics_on, true);
	return FP_OK;

fail_setup:
	teardown();
	return rc;
}

/* ---- launches and records (application threads, CUPTI's buffer thread) ---------------------- */

static bool is_graph_launch(int domain, uint32_t cbid)
{
	if (domain == FP__CUPTI_CB_DOMAIN_DRIVER_API)
		return cbid == FP__CUPTI_DRIVER_cuGraphLaunch ||
		       cbid == FP__CUPTI_DRIVER_cuGraphLaunch_ptsz;
	return cbid == FP__CUPTI_RUNTIME_cudaGraphLaunch_v10000 ||
	       cbid == FP__CUPTI_RUNTIME_cudaGraphLaunch_ptsz_v10000;
}

/* The grid from the parameter block of the launch calls Triton and PyTorch use. */
static bool grid_of(int domain, uint32_t cbid, const void *params, uint32_t g[3])
{
	const unsigned *v = NULL;
	size_t i;

	if (!params)
		return false;
	if (domain == FP__CUPTI_CB_DOMAIN_DRIVER_API) {
		if (cbid == FP__CUPTI_DRIVER_cuLaunchKernel ||
		    cbid == FP__CUPTI_DRIVER_cuLaunchKernel_ptsz) {
			v = ((const struct cu_launch_kernel_params *)params)->grid;
		} else if (cbid == FP__CUPTI_DRIVER_cuLaunchKernelEx ||
			   cbid == FP__CUPTI_DRIVER_cuLaunchKernelEx_ptsz) {
			const struct cu_launch_config *c =
				((const struct cu_launch_kernel_ex_params *)params)->config;

			if (c)
				v = c->grid;
		}
	} else if (domain == FP__CUPTI_CB_DOMAIN_RUNTIME_API &&
		   (cbid == FP__CUPTI_RUNTIME_cudaLaunchKernel_v7000 ||
		    cbid == FP__CUPTI_RUNTIME_cudaLaunchKernel_ptsz_v7000)) {
		v = &((const struct cuda_launch_kernel_params *)params)->grid.x;
	}
	if (!v)
		return false;
	for (i = 0; i < 3; i++)
		g[i] = v[i];
	return true;
}

/* ml_lock held: the name id of a launch's symbol (cached by pointer, checked by text). */
static uint32_t symbol_id(const char *sym)
{
	size_t h = ((uintptr_t)sym >> 4) % NAME_CACHE, len;
	uint32_t id;

	if (!sym || !*sym)
		return FP_SINK_NO_NAME;
	if (m.nc[h].ptr == sym && m.nc[h].str && !strcmp(m.nc[h].str, sym))
		return m.nc[h].id;
	len = strnlen(sym, NAME_MAX_LEN);
	if (fp__cupti_sink->name_intern(sym, len, &id))
		return FP_SINK_NO_NAME;
	m.nc[h].ptr = sym;
	m.nc[h].str = fp__cupti_sink->name_str(id, NULL);
	m.nc[h].id = id;
	return id;
}

static size_t hslot(uint32_t corr)
{
	return (size_t)(corr * 2654435761u) & (m.hcap - 1);
}

/* ml_lock held. */
static void hput(uint32_t corr, uint32_t idx)
{
	size_t i, k;

	for (i = hslot(corr), k = 0; k < m.hcap; i = (i + 1) & (m.hcap - 1), k++) {
		if (!m.hkey[i] || m.hkey[i] == corr) {
			m.hkey[i] = corr;
			m.hval[i] = idx;
			return;
		}
	}
}

/* ml_lock held: the launch of `corr`, or NULL. */
static struct mlaunch *hget(uint32_t corr)
{
	size_t i, k;

	if (!corr || !m.hcap)
		return NULL;
	for (i = hslot(corr), k = 0; k < m.hcap && m.hkey[i]; i = (i + 1) & (m.hcap - 1), k++)
		if (m.hkey[i] == corr)
			return m.hval[i] < m.nl ? &m.L[m.hval[i]] : NULL;
	return NULL;
}

/* At start: the launch table (ranges x LAUNCH_CAP_FACTOR) and its correlation index. */
static int launches_init(void)
{
	size_t cap = m.max_ranges * LAUNCH_CAP_FACTOR, h = 16;

	while (h < cap * 4)
		h <<= 1;
	pthread_mutex_lock(&ml_lock);
	m.L = fp_calloc(cap, sizeof(*m.L));
	m.hkey = fp_calloc(h, sizeof(*m.hkey));
	m.hval = fp_calloc(h, sizeof(*m.hval));
	m.nl = 0;
	m.lcap = cap;
	m.hcap = h;
	m.l_lost = m.graphs = m.other_ctx = m.dup_records = 0;
	memset(m.nc, 0, sizeof(m.nc));
	pthread_mutex_unlock(&ml_lock);
	return m.L && m.hkey && m.hval ? FP_OK : FP_ENOMEM;
}

void fp__cupti_metrics_launch(int domain, uint32_t cbid, const struct fp__cupti_cbdata *d,
			      bool outermost, uint32_t lctx, uint32_t callpath,
			      const struct fp_sink_metadata *md)
{
	struct fp_sink_session *s;
	struct mlaunch *x;

	if (!d)
		return;
	pthread_mutex_lock(&ml_lock);
	s = atomic_load(&m.session);
	if (!s || !m.L || !atomic_load(&fp__cupti_metrics_on))
		goto out; /* (stop reads the table once this is off) */
	if (d->callbackSite == FP__CUPTI_API_ENTER) {
		if (outermost) {
			tl_slot = SIZE_MAX;
			tl_gen = m.gen;
			/* A context CUPTI does not name is the current one: the profiled one. */
			if (d->context && d->context != m.ctx) {
				m.other_ctx++;
				goto out;
			}
			if (is_graph_launch(domain, cbid)) {
				m.graphs++;
				goto out;
			}
			if (m.nl == m.lcap) {
				m.l_lost++;
				goto out;
			}
			x = &m.L[m.nl];
			memset(x, 0, sizeof(*x));
			x->lctx = lctx;
			x->callpath = callpath;
			x->name = FP_SINK_NO_NAME;
			x->has_md = md != NULL;
			if (md)
				x->md = *md;
			x->active = s->sink->active(s);
			x->enter_ns = fp__cupti_sink->clock_ns();
			tl_slot = m.nl++;
		}
		if (tl_slot < m.nl && tl_gen == m.gen) {
			x = &m.L[tl_slot];
			if (d->correlationId && x->corr[0] != d->correlationId &&
			    x->corr[1] != d->correlationId) {
				x->corr[x->corr[0] ? 1 : 0] = d->correlationId;
				hput(d->correlationId, (uint32_t)tl_slot);
			}
			if (x->name == FP_SINK_NO_NAME)
				x->name = symbol_id(d->symbolName);
			if (!x->grid_known)
				x->grid_known = grid_of(domain, cbid, d->functionParams, x->grid);
		}
	} else if (outermost) {
		if (tl_slot < m.nl && tl_gen == m.gen) {
			int ret = 0;

			/* CUresult / cudaError_t: no kernel ran, so no range either */
			if (d->functionReturnValue)
				memcpy(&ret, d->functionReturnValue, sizeof(ret));
			m.L[tl_slot].failed = ret != 0;
		}
		tl_slot = SIZE_MAX;
	}
out:
	pthread_mutex_unlock(&ml_lock);
}

bool fp__cupti_metrics_claim(const struct fp__cupti_metrics_rec *r)
{
	struct mlaunch *x;
	size_t i;

	if (!r || !atomic_load(&m.session))
		return false;
	pthread_mutex_lock(&ml_lock);
	x = atomic_load(&fp__cupti_metrics_on) ? hget(r->correlation) : NULL;
	if (x && x->rec) {
		m.dup_records++; /* a second record of one launch: counted once already */
	} else if (x) {
		x->rec = true;
		x->rec_timed = r->timed;
		x->rec_device = r->device;
		x->rec_name = r->kernel;
		for (i = 0; i < 3; i++)
			x->rec_grid[i] = r->grid[i];
		x->rec_stream = r->stream;
		x->rec_begin = r->begin_ns;
		x->rec_end = r->end_ns;
	}
	pthread_mutex_unlock(&ml_lock);
	return x != NULL;
}

bool fp__cupti_metrics_session(const struct fp_sink_session *s)
{
	return s && atomic_load(&m.session) == s;
}

/* ---- stop: ranges, kernels, values ----------------------------------------------------------- */

static void set_meta(struct fp_sink_session *s, const char *key, const char *fmt, ...)
	FP_PRINTF(3, 4);
static void set_meta(struct fp_sink_session *s, const char *key, const char *fmt, ...)
{
	char v[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	s->sink->set_meta(s, key, v);
}

enum time_source {
	TIME_NONE = 0,
	TIME_RECORD,
	TIME_COUNTER
};

static const char *const time_source_name[] = {"none", "activity_record", TIME_METRIC};

/* What stop read and filed, for the tree and the vendor file. */
struct collected {
	size_t n;          /* ranges evaluated */
	bool paired;       /* range i belongs to the i-th successful launch */
	double *vals;      /* n x m.n values (NaN: not evaluated) */
	size_t nk;         /* successful launches (kernels) of the profiled context */
	size_t *kl;        /* nk: index in m.L of kernel k */
	uint32_t *node;    /* nk: node the kernel was filed to (FP_SINK_NO_NODE: not) */
	uint8_t *tsrc;     /* nk: enum time_source */
	uint64_t *begin;   /* nk */
	uint64_t *end;     /* nk */
	uint64_t failed;   /* launches that returned an error */
	uint64_t untimed;  /* kernels with neither a timed record nor a time counter */
	uint64_t inactive; /* kernels launched while the session was inactive */
	uint64_t no_grid;  /* per-program estimates dropped: no grid known */
	uint64_t records;  /* kernel records that came */
	uint64_t timed;    /* of which with times */
};

/*
 * The ranges' values onto the nodes their kernels were filed to, through the sink: per node,
 * counters summed and the rest time-weighted, as "hw:NAME" / "hw:NAME (pty)", plus
 * "hw:launches".
 */
static int attach(struct fp_sink_session *s, const struct fp_sink_range *rr, size_t n)
{
	char tn[FP_CUPTI_METRICS_MAX][FP_CUPTI_METRIC_NAME_MAX + 16];
	const char *names[FP_CUPTI_METRICS_MAX];
	enum fp_sink_agg agg[FP_CUPTI_METRICS_MAX];
	struct fp_sink_metrics sm;
	size_t j;

	for (j = 0; j < m.n && j < FP_CUPTI_METRICS_MAX; j++) {
		int k = fp_cupti_metric_tree_name(m.names[j], m.agg[j], tn[j], sizeof(tn[j]));

		if (k < 0)
			return k;
		names[j] = tn[j];
		agg[j] = m.agg[j] == FP_CUPTI_METRIC_SUM ? FP_SINK_AGG_SUM : FP_SINK_AGG_MEAN;
	}
	memset(&sm, 0, sizeof(sm));
	sm.names = names;
	sm.agg = agg;
	sm.nmetrics = j;
	sm.launches = "hw:launches";
	sm.ranges = rr;
	sm.nranges = n;
	return s->sink->metrics(s, &sm, &last.attach);
}

/* Stop the range profiler and evaluate every range into c->vals; false when none could be. */
static bool read_ranges(void *lib, struct collected *c)
{
	struct fp__cupti_rp_stop_params stp;
	struct fp__cupti_rp_decode_params dp;
	struct fp__cupti_rp_datainfo_params ip;
	size_t nr, i, j;
	int r;

	memset(&stp, 0, sizeof(stp));
	stp.structSize = FP__CUPTI_SZ_RP_STOP;
	stp.pRangeProfilerObject = m.rp;
	r = m.f.cuptiRangeProfilerStop(&stp);
	m.started = false;
	if (r != FP__CUPTI_SUCCESS) {
		reason("cupti_error: cuptiRangeProfilerStop failed: %s (CUPTI error %d)",
		       err_text(lib, r), r);
		return false;
	}
	memset(&dp, 0, sizeof(dp));
	dp.structSize = FP__CUPTI_SZ_RP_DECODE;
	dp.pRangeProfilerObject = m.rp;
	r = m.f.cuptiRangeProfilerDecodeData(&dp);
	if (r != FP__CUPTI_SUCCESS) {
		reason("cupti_error: cuptiRangeProfilerDecodeData failed: %s (CUPTI error %d)",
		       err_text(lib, r), r);
		return false;
	}
	last.dropped = dp.numOfRangeDropped;
	if (dp.numOfRangeDropped)
		reason("ranges_dropped: %zu kernels past the counter data image's %zu ranges "
		       "(raise max_ranges)",
		       dp.numOfRangeDropped, m.max_ranges);
	memset(&ip, 0, sizeof(ip));
	ip.structSize = FP__CUPTI_SZ_RP_DATAINFO;
	ip.pCounterDataImage = m.data;
	ip.counterDataImageSize = m.data_size;
	r = m.f.cuptiRangeProfilerGetCounterDataInfo(&ip);
	if (r != FP__CUPTI_SUCCESS) {
		reason("cupti_error: cuptiRangeProfilerGetCounterDataInfo failed: %s (CUPTI error %d)",
		       err_text(lib, r), r);
		return false;
	}
	nr = FP_MIN(ip.numTotalRanges, m.max_ranges);
	last.ranges = ip.numTotalRanges;
	if (!nr)
		return true;
	c->vals = fp_calloc(nr * m.n, sizeof(*c->vals));
	if (!c->vals) {
		reason("out_of_memory: while evaluating %zu ranges", nr);
		return false;
	}
	c->n = nr;
	for (i = 0; i < nr; i++) {
		struct fp__cupti_evaluate_params ev;

		memset(&ev, 0, sizeof(ev));
		ev.structSize = FP__CUPTI_SZ_EVALUATE;
		ev.pHostObject = m.host;
		ev.pCounterDataImage = m.data;
		ev.counterDataImageSize = m.data_size;
		ev.rangeIndex = i;
		ev.ppMetricNames = m.names;
		ev.numMetrics = m.n;
		ev.pMetricValues = c->vals + i * m.n;
		r = m.f.cuptiProfilerHostEvaluateToGpuValues(&ev);
		if (r != FP__CUPTI_SUCCESS) {
			for (j = 0; j < m.n; j++)
				c->vals[i * m.n + j] = NAN;
			reason("evaluate_failed: range %zu: %s (CUPTI error %d)", i,
			       err_text(lib, r), r);
		}
	}
	return true;
}

/* The kernel time of kernel k from its range's time counter, or NaN. */
static double counter_time(const struct collected *c, size_t k)
{
	if (!c->paired || k >= c->n || m.tdur == SIZE_MAX)
		return NAN;
	return c->vals[k * m.n + m.tdur];
}

/*
 * File every kernel of the profiled context to the session (count, time, launch metadata,
 * trace event), once: the launch gives the node (launch context, call path) and the name, the
 * record (when one came with times) or the range's gpu__time_duration.sum the time.
 */
static void file_kernels(struct fp_sink_session *s, struct collected *c, uint32_t cuda_name)
{
	size_t k;

	for (k = 0; k < c->nk; k++) {
		const struct mlaunch *x = &m.L[c->kl[k]];
		struct fp_sink_event ev;
		double dur = counter_time(c, k);
		bool grid_known;
		size_t i;

		c->node[k] = FP_SINK_NO_NODE;
		memset(&ev, 0, sizeof(ev));
		ev.kind = FP_SINK_EVENT_KERNEL;
		ev.device_id = x->rec ? x->rec_device : (uint32_t)m.device;
		ev.device_type = cuda_name;
		ev.kernel = x->name != FP_SINK_NO_NAME ? x->name :
			    x->rec                     ? x->rec_name :
							 FP_SINK_NO_NAME;
		ev.callpath = x->callpath;
		grid_known = x->rec || x->grid_known;
		for (i = 0; i < 3; i++)
			ev.grid[i] = x->rec ? x->rec_grid[i] : x->grid[i];
		ev.stream = x->rec ? x->rec_stream : 0;
		ev.correlation = x->corr[0];
		if (x->rec && x->rec_timed) {
			c->tsrc[k] = TIME_RECORD;
			ev.begin_ns = x->rec_begin;
			ev.end_ns = x->rec_end >= x->rec_begin ? x->rec_end : x->rec_begin;
		} else if (isfinite(dur) && dur >= 0) {
			c->tsrc[k] = TIME_COUNTER;
			ev.begin_ns = x->enter_ns;
			ev.end_ns = x->enter_ns + (uint64_t)llround(dur);
		} else {
			c->tsrc[k] = TIME_NONE;
			ev.begin_ns = ev.end_ns = x->enter_ns;
			c->untimed++;
		}
		c->begin[k] = ev.begin_ns;
		c->end[k] = ev.end_ns;
		if (x->has_md) {
			ev.md = x->md;
			if (ev.md.reserved & FP__CUPTI_MD_PER_PROGRAM) {
				double programs = (double)ev.grid[0] * ev.grid[1] * ev.grid[2];

				if (grid_known) {
					ev.md.est_bytes *= programs;
					ev.md.est_flops *= programs;
				} else if (ev.md.flags &
					   (FP_SINK_MD_EST_BYTES | FP_SINK_MD_EST_FLOPS)) {
					ev.md.flags &=
						~(FP_SINK_MD_EST_BYTES | FP_SINK_MD_EST_FLOPS);
					c->no_grid++;
				}
			}
			ev.md.reserved = 0;
		}
		if (ev.kernel == FP_SINK_NO_NAME &&
		    fp__cupti_sink->name_intern("<unknown kernel>", 16, &ev.kernel))
			continue;
		if (!x->active) {
			c->inactive++;
			continue;
		}
		s->sink->kernel(s, &ev, FP_SINK_LCTX_NONE, x->lctx, NULL, &c->node[k]);
	}
}

/* Pair, file the kernels, attach the paired ranges' values. */
static void collect(struct fp_sink_session *s, void *lib, struct collected *c)
{
	struct fp_sink_range *rr = NULL;
	bool ranges_ok;
	uint32_t cuda_name = FP_SINK_NO_NAME;
	size_t i, k;
	int r;

	memset(c, 0, sizeof(*c));
	ranges_ok = read_ranges(lib, c);
	pthread_mutex_lock(&ml_lock);
	/* No launch or record changes from here: the session left the delivery list. */
	atomic_store(&fp__cupti_metrics_on, false);
	pthread_mutex_unlock(&ml_lock);
	for (i = 0; i < m.nl; i++) {
		if (m.L[i].failed)
			c->failed++;
		c->records += m.L[i].rec;
		c->timed += m.L[i].rec && m.L[i].rec_timed;
	}
	c->nk = m.nl - (size_t)c->failed;
	last.kernels = c->nk;
	last.records = c->records;
	last.records_timed = c->timed;
	c->kl = fp_calloc(c->nk ? c->nk : 1, sizeof(*c->kl));
	c->node = fp_calloc(c->nk ? c->nk : 1, sizeof(*c->node));
	c->tsrc = fp_calloc(c->nk ? c->nk : 1, sizeof(*c->tsrc));
	c->begin = fp_calloc(c->nk ? c->nk : 1, sizeof(*c->begin));
	c->end = fp_calloc(c->nk ? c->nk : 1, sizeof(*c->end));
	if (!c->kl || !c->node || !c->tsrc || !c->begin || !c->end) {
		reason("out_of_memory: while filing %zu kernels", c->nk);
		c->nk = 0;
		return;
	}
	for (i = 0, k = 0; i < m.nl; i++)
		if (!m.L[i].failed)
			c->kl[k++] = i;
	c->paired = ranges_ok && !m.graphs && !m.l_lost && c->n + last.dropped == c->nk;
	if (m.graphs)
		reason("graph_launch: %" PRIu64 " CUDA graph launches in the profiled context; "
		       "their kernels' ranges cannot be told apart, so no range is attached",
		       m.graphs);
	if (m.l_lost)
		reason("launches_lost: %" PRIu64 " launches past the %zu kept; no range is "
		       "attached (raise max_ranges)",
		       m.l_lost, m.lcap);
	if (ranges_ok && !m.graphs && !m.l_lost && !c->paired)
		reason("range_mismatch: %zu ranges (+%zu dropped) for %zu kernel launches in the "
		       "profiled context of device %d; metrics not attached, ranges kept in the "
		       "vendor file",
		       c->n, (size_t)last.dropped, c->nk, m.device);
	if (m.dup_records)
		reason("duplicate_records: %" PRIu64 " further kernel records of already "
		       "recorded launches ignored",
		       m.dup_records);
	fp__cupti_sink->name_intern("CUDA", 4, &cuda_name);
	file_kernels(s, c, cuda_name);
	if (c->untimed)
		reason("kernel_time_unknown: %" PRIu64 " kernels without a timed activity record "
		       "or a " TIME_METRIC " value are filed with time 0",
		       c->untimed);
	if (c->inactive)
		reason("session_inactive: %" PRIu64 " kernels launched while the session was "
		       "deactivated are not filed",
		       c->inactive);
	if (c->no_grid)
		reason("estimate_dropped: %" PRIu64 " launches' per-program IR estimates dropped "
		       "(no kernel record and no grid in the launch parameters)",
		       c->no_grid);
	if (!c->paired || !c->n)
		return;
	rr = fp_calloc(c->n, sizeof(*rr));
	if (!rr) {
		reason("out_of_memory: while attaching %zu ranges", c->n);
		c->paired = false;
		return;
	}
	for (k = 0; k < c->n; k++) {
		rr[k].node = c->node[k];
		rr[k].weight = (double)(c->end[k] - c->begin[k]);
		rr[k].values = c->vals + k * m.n;
	}
	r = attach(s, rr, c->n);
	if (r)
		reason("attach_failed: %s", fp_strerror(r));
	fp_free(rr);
}

static void collected_release(struct collected *c)
{
	fp_free(c->vals);
	fp_free(c->kl);
	fp_free(c->node);
	fp_free(c->tsrc);
	fp_free(c->begin);
	fp_free(c->end);
	memset(c, 0, sizeof(*c));
}

/* "a/b/kernel" below ROOT as the sink names it, or null for FP_SINK_NO_NODE. */
static int write_path(struct fp_jsonw *w, struct fp_sink_session *s, uint32_t node)
{
	char buf[4096];
	int n;

	if (node == FP_SINK_NO_NODE)
		return fp_jsonw_null(w);
	n = s->sink->node_path(s, node, buf, sizeof(buf));
	return fp_jsonw_string_n(w, buf, n > 0 ? (size_t)n : 0);
}

static int number_or_null(struct fp_jsonw *w, double v)
{
	return isfinite(v) ? fp_jsonw_double(w, v) : fp_jsonw_null(w);
}

/* One range's kernel: launch index, name, correlation, time and its source. */
static void write_kernel(struct fp_jsonw *w, struct fp_sink_session *s, const struct collected *c,
			 size_t k)
{
	const struct mlaunch *x = &m.L[c->kl[k]];
	uint32_t name = x->name != FP_SINK_NO_NAME ? x->name :
			x->rec                     ? x->rec_name :
						     FP_SINK_NO_NAME;
	const char *str = name != FP_SINK_NO_NAME ? fp__cupti_sink->name_str(name, NULL) : NULL;

	fp_jsonw_kv_uint(w, "launch", c->kl[k]);
	fp_jsonw_key(w, "kernel");
	if (str)
		fp_jsonw_string(w, str);
	else
		fp_jsonw_null(w);
	fp_jsonw_kv_uint(w, "correlation", x->corr[0]);
	fp_jsonw_key(w, "node");
	write_path(w, s, c->node[k]);
	fp_jsonw_kv_string(w, "time_source", time_source_name[c->tsrc[k]]);
	fp_jsonw_kv_uint(w, "begin_ns", c->begin[k]);
	fp_jsonw_kv_uint(w, "end_ns", c->end[k]);
	fp_jsonw_kv_bool(w, "activity_record", x->rec);
}

/*
 * <name>.vendor.json: every range's values as CUPTI evaluated them, with the launch it was
 * paired with (or none, and why), how each metric was aggregated, and the degradation reasons,
 * so the tree's values can be re-derived and nothing the tree cannot show is lost.
 */
static int write_vendor(struct fp_jsonw *w, struct fp_sink_session *s, const struct collected *c)
{
	char tn[FP_CUPTI_METRIC_NAME_MAX + 16];
	size_t i, j;

	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "format", "flagprism-vendor");
	fp_jsonw_kv_int(w, "format_version", 1);
	fp_jsonw_kv_string(w, "vendor", "cupti-range-profiler");
	fp_jsonw_kv_string(w, "chip", last.chip);
	fp_jsonw_kv_string(w, "range_mode", "auto");
	fp_jsonw_kv_string(w, "replay_mode", "kernel");
	fp_jsonw_kv_string(w, "pairing", "launch order in the profiled context");
	fp_jsonw_kv_uint(w, "passes", last.passes);
	fp_jsonw_kv_int(w, "device", m.device);
	fp_jsonw_kv_bool(w, "attached", c->paired && c->n);
	fp_jsonw_key(w, "counts");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, "ranges", last.ranges);
	fp_jsonw_kv_uint(w, "dropped", last.dropped);
	fp_jsonw_kv_uint(w, "kernel_launches", c->nk);
	fp_jsonw_kv_uint(w, "failed_launches", c->failed);
	fp_jsonw_kv_uint(w, "graph_launches", m.graphs);
	fp_jsonw_kv_uint(w, "launches_lost", m.l_lost);
	fp_jsonw_kv_uint(w, "other_context_launches", m.other_ctx);
	fp_jsonw_kv_uint(w, "kernel_records", c->records);
	fp_jsonw_kv_uint(w, "kernel_records_timed", c->timed);
	fp_jsonw_kv_uint(w, "attached", last.attach.attached);
	fp_jsonw_object_end(w);
	fp_jsonw_key(w, "metrics");
	fp_jsonw_array_begin(w);
	for (j = 0; j < m.n; j++) {
		fp_cupti_metric_tree_name(m.names[j], m.agg[j], tn, sizeof(tn));
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "name", m.names[j]);
		fp_jsonw_kv_string(w, "aggregation",
				   m.agg[j] == FP_CUPTI_METRIC_SUM ? "sum" : "time-weighted mean");
		fp_jsonw_kv_string(w, "tree_metric", tn);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_key(w, "ranges");
	fp_jsonw_array_begin(w);
	for (i = 0; i < c->n; i++) {
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_uint(w, "range", i);
		if (c->paired && i < c->nk) {
			write_kernel(w, s, c, i);
		} else {
			fp_jsonw_key(w, "node");
			fp_jsonw_null(w);
			fp_jsonw_kv_string(w, "unpaired",
					   m.graphs ? "graph_launch" :
					   m.l_lost ? "launches_lost" :
						      "range_mismatch");
		}
		fp_jsonw_key(w, "values");
		fp_jsonw_object_begin(w);
		for (j = 0; j < m.n; j++) {
			fp_jsonw_key(w, m.names[j]);
			number_or_null(w, c->vals[i * m.n + j]);
		}
		fp_jsonw_object_end(w);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	/* Kernels without a range of their own: dropped ranges, or no pairing. */
	fp_jsonw_key(w, "kernels_without_range");
	fp_jsonw_array_begin(w);
	for (i = c->paired ? c->n : 0; i < c->nk; i++) {
		fp_jsonw_object_begin(w);
		write_kernel(w, s, c, i);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_key(w, "degradation_reasons");
	fp_jsonw_array_begin(w);
	for (i = 0; i < last.nreasons; i++) {
		const char *r = last.reasons[i], *colon = strstr(r, ": ");

		fp_jsonw_object_begin(w);
		fp_jsonw_key(w, "kind");
		if (colon)
			fp_jsonw_string_n(w, r, (size_t)(colon - r));
		else
			fp_jsonw_string(w, "other");
		fp_jsonw_kv_string(w, "detail", colon ? colon + 2 : r);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_object_end(w);
	return fp_jsonw_finish(w);
}

static int save_vendor(struct fp_sink_session *s, const struct collected *c, char *path,
		       size_t size)
{
	const char *name = s->sink->output_name(s);
	struct fp_outfile of;
	struct fp_jsonw *w;
	int rc;

	if (!name || !*name)
		return FP_EINVAL;
	if ((size_t)snprintf(path, size, "%s.vendor.json", name) >= size)
		return FP_ELIMIT;
	rc = fp_outfile_open(&of, path, 0, NULL);
	if (rc)
		return rc;
	w = fp_jsonw_new_file(of.f, FP_JSONW_PRETTY);
	if (!w) {
		fp_outfile_abort(&of);
		return FP_ENOMEM;
	}
	rc = write_vendor(w, s, c);
	fp_jsonw_free(w);
	return fp_outfile_finish(&of, rc, NULL);
}

void fp__cupti_metrics_stop(struct fp_sink_session *s, void *lib)
{
	char list[FP_CUPTI_METRICS_MAX * (FP_CUPTI_METRIC_NAME_MAX + 8)];
	char vpath[4096];
	struct collected c;
	size_t i, off = 0;
	int rc;

	if (!s || atomic_load(&m.session) != s)
		return;
	collect(s, lib, &c);
	last.collected = true;
	rc = save_vendor(s, &c, vpath, sizeof(vpath));
	collected_release(&c);
	list[0] = '\0';
	for (i = 0; i < m.n && off < sizeof(list); i++) {
		int k = snprintf(list + off, sizeof(list) - off, "%s%s=%s", i ? "," : "",
				 m.names[i], m.agg[i] == FP_CUPTI_METRIC_SUM ? "sum" : "mean");

		if (k > 0)
			off += (size_t)k;
	}
	set_meta(s, "hw_metrics", "%s", list);
	set_meta(s, "hw_metrics_chip", "%s", last.chip);
	set_meta(s, "hw_metrics_passes", "%" PRIu32, last.passes);
	set_meta(s, "hw_metrics_ranges",
		 "%" PRIu64 " ranges, %" PRIu64 " dropped, %" PRIu64 " kernel launches, %" PRIu64
		 " kernel records (%" PRIu64 " with times), %" PRIu64 " attached",
		 last.ranges, last.dropped, last.kernels, last.records, last.records_timed,
		 last.attach.attached);
	set_meta(s, "hw_metrics_mode",
		 "auto range, kernel replay (kernels serialised, %" PRIu32
		 " pass(es) each); ranges paired with launches in launch order; kernel time from "
		 "the activity record when it has times, else " TIME_METRIC,
		 last.passes);
	if (rc)
		set_meta(s, "hw_metrics_vendor", "not written: %s", fp_strerror(rc));
	else
		set_meta(s, "hw_metrics_vendor", "%s", vpath);
	if (last.nreasons) {
		char buf[FP_CUPTI_METRICS_REASONS * 202];
		size_t o = 0;

		buf[0] = '\0';
		for (i = 0; i < last.nreasons && o < sizeof(buf); i++) {
			int k = snprintf(buf + o, sizeof(buf) - o, "%s%s", i ? "; " : "",
					 last.reasons[i]);

			if (k > 0)
				o += (size_t)k;
		}
		set_meta(s, "hw_metrics_degraded", "%s", buf);
	}
	teardown();
}

void fp__cupti_metrics_reset(void)
{
	if (atomic_load(&m.session))
		teardown();
	memset(&req, 0, sizeof(req));
	memset(&last, 0, sizeof(last));
}
