/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The range profiler and profiler host API of libfakecupti.so (CUDA 13.0's
 * cupti_range_profiler.h, cupti_profiler_host.h, cupti_target.h and the two calls of
 * cupti_profiler_target.h it still needs), so the hardware-metrics collector
 * (src/backend/cuda/cupti-metrics.c) runs its whole flow in CI: initialize, chip name, counter
 * availability, host object, metric properties, configuration and pass count, enable, counter
 * data image, set config, start/stop, decode, range count, evaluate, disable, deinitialize. The
 * params structs are declared here from the headers' field lists, independently of
 * src/backend/cuda/cupti-profiler-abi.h. Tests play the GPU with the fake_prof_* controls
 * (fake-cupti-profiler.h): ranges with values, dropped ranges, unsupported metric names, an
 * error from any named call, and what becomes of kernel activity records while the profiler
 * runs (by default they lose their times, as CUPTI 13.0's do on the H200; or they are not
 * emitted; or they keep them). Not part of FlagPrism.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-cupti-profiler.h"

#define EXPORT __attribute__((visibility("default")))
#define OK 0
#define E_INVALID_PARAMETER 1
#define E_INVALID_METRIC_NAME 17
#define E_NOT_INITIALIZED 15

struct init_p {
	size_t structSize;
	void *pPriv;
};
struct chip_p {
	size_t structSize;
	void *pPriv;
	size_t deviceIndex;
	const char *pChipName;
};
struct avail_p {
	size_t structSize;
	void *pPriv;
	void *ctx;
	size_t size;
	uint8_t *image;
};
struct host_init_p {
	size_t structSize;
	void *pPriv;
	int profilerType;
	const char *pChipName;
	const uint8_t *avail;
	void *pHostObject;
};
struct host_deinit_p {
	size_t structSize;
	void *pPriv;
	void *pHostObject;
};
struct props_p {
	size_t structSize;
	void *pPriv;
	void *pHostObject;
	const char *pMetricName;
	const char *pDescription;
	const char *pHwUnit;
	const char *pDimUnit;
	int metricType;
};
struct add_p {
	size_t structSize;
	void *pPriv;
	void *pHostObject;
	const char **names;
	size_t n;
};
struct csize_p {
	size_t structSize;
	void *pPriv;
	void *pHostObject;
	size_t size;
};
struct cimage_p {
	size_t structSize;
	void *pPriv;
	void *pHostObject;
	size_t size;
	uint8_t *image;
};
struct passes_p {
	size_t structSize;
	void *pPriv;
	size_t size;
	uint8_t *image;
	size_t passes;
};
struct eval_p {
	size_t structSize;
	void *pPriv;
	void *pHostObject;
	const uint8_t *image;
	size_t size;
	size_t rangeIndex;
	const char **names;
	size_t n;
	double *values;
};
struct enable_p {
	size_t structSize;
	void *pPriv;
	void *ctx;
	void *obj;
};
struct obj_p {
	size_t structSize;
	void *pPriv;
	void *obj;
};
struct stop_p {
	size_t structSize;
	void *pPriv;
	void *obj;
	size_t passIndex;
	size_t targetNestingLevel;
	uint8_t isAllPassSubmitted;
};
struct setcfg_p {
	size_t structSize;
	void *pPriv;
	void *obj;
	size_t configSize;
	const uint8_t *pConfig;
	size_t dataSize;
	uint8_t *data;
	int range;
	int replayMode;
	size_t maxRangesPerPass;
	uint16_t numNestingLevels;
	uint16_t minNestingLevel;
	size_t passIndex;
	uint16_t targetNestingLevel;
};
struct decode_p {
	size_t structSize;
	void *pPriv;
	void *obj;
	size_t dropped;
};
struct dsize_p {
	size_t structSize;
	void *pPriv;
	void *obj;
	const char **names;
	size_t n;
	size_t maxRanges;
	uint32_t maxNodes;
	size_t size;
};
struct dinit_p {
	size_t structSize;
	void *pPriv;
	void *obj;
	size_t size;
	uint8_t *data;
};
struct dinfo_p {
	size_t structSize;
	void *pPriv;
	const uint8_t *image;
	size_t size;
	size_t numTotalRanges;
};

#define MAX_METRICS 64
#define MAX_RANGES 4096
#define MAX_UNSUP 8

/* Exported CUPTI and driver entry points (prototypes for -Wmissing-prototypes). */
EXPORT int cuptiProfilerInitialize(struct init_p *a);
EXPORT int cuptiProfilerDeInitialize(struct init_p *a);
EXPORT int cuptiDeviceGetChipName(struct chip_p *a);
EXPORT int cuptiProfilerGetCounterAvailability(struct avail_p *a);
EXPORT int cuptiProfilerHostInitialize(struct host_init_p *a);
EXPORT int cuptiProfilerHostDeinitialize(struct host_deinit_p *a);
EXPORT int cuptiProfilerHostGetMetricProperties(struct props_p *a);
EXPORT int cuptiProfilerHostConfigAddMetrics(struct add_p *a);
EXPORT int cuptiProfilerHostGetConfigImageSize(struct csize_p *a);
EXPORT int cuptiProfilerHostGetConfigImage(struct cimage_p *a);
EXPORT int cuptiProfilerHostGetNumOfPasses(struct passes_p *a);
EXPORT int cuptiProfilerHostEvaluateToGpuValues(struct eval_p *a);
EXPORT int cuptiRangeProfilerEnable(struct enable_p *a);
EXPORT int cuptiRangeProfilerDisable(struct obj_p *a);
EXPORT int cuptiRangeProfilerGetCounterDataSize(struct dsize_p *a);
EXPORT int cuptiRangeProfilerCounterDataImageInitialize(struct dinit_p *a);
EXPORT int cuptiRangeProfilerSetConfig(struct setcfg_p *a);
EXPORT int cuptiRangeProfilerStart(struct obj_p *a);
EXPORT int cuptiRangeProfilerStop(struct stop_p *a);
EXPORT int cuptiRangeProfilerDecodeData(struct decode_p *a);
EXPORT int cuptiRangeProfilerGetCounterDataInfo(struct dinfo_p *a);
EXPORT int cuCtxGetDevice(int *dev);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int state[FAKE_PROF_STATES];
	char err_fn[64];
	int err_rc;
	char unsup[MAX_UNSUP][128];
	size_t nunsup;
	size_t passes;
	size_t dropped;
	char cfg[MAX_METRICS][128];
	size_t ncfg;
	double ranges[MAX_RANGES][MAX_METRICS];
	size_t nranges;
	size_t max_ranges;
	int host_obj, rp_obj;
	int records; /* FAKE_PROF_RECORDS_* */
} p;

static int fail(const char *fn)
{
	return p.err_fn[0] && !strcmp(p.err_fn, fn) ? p.err_rc : OK;
}

#define CHECK(name)                  \
	do {                         \
		int r_ = fail(name); \
		if (r_)              \
			return r_;   \
	} while (0)

EXPORT void fake_prof_reset(void)
{
	pthread_mutex_lock(&mu);
	memset(&p, 0, sizeof(p));
	p.passes = 1;
	pthread_mutex_unlock(&mu);
}

EXPORT void fake_prof_set_error(const char *fn, int rc)
{
	snprintf(p.err_fn, sizeof(p.err_fn), "%s", fn ? fn : "");
	p.err_rc = rc;
}

EXPORT void fake_prof_set_unsupported(const char *metric)
{
	if (p.nunsup < MAX_UNSUP)
		snprintf(p.unsup[p.nunsup++], sizeof(p.unsup[0]), "%s", metric);
}

EXPORT void fake_prof_set_passes(size_t n)
{
	p.passes = n;
}

EXPORT void fake_prof_set_records(int mode)
{
	p.records = mode;
}

int fake_prof__profiling(void)
{
	return p.state[FAKE_PROF_STARTED];
}

int fake_prof__records(void)
{
	return p.records;
}

EXPORT void fake_prof_set_dropped(size_t n)
{
	p.dropped = n;
}

EXPORT int fake_prof_add_range(const double *values, size_t n)
{
	size_t i;

	pthread_mutex_lock(&mu);
	if (!p.state[FAKE_PROF_STARTED] || p.nranges >= MAX_RANGES || p.nranges >= p.max_ranges) {
		pthread_mutex_unlock(&mu);
		return -1;
	}
	for (i = 0; i < MAX_METRICS; i++)
		p.ranges[p.nranges][i] = i < n ? values[i] : 0;
	p.nranges++;
	pthread_mutex_unlock(&mu);
	return 0;
}

EXPORT int fake_prof_state(int what)
{
	return what >= 0 && what < FAKE_PROF_STATES ? p.state[what] : -1;
}

EXPORT const char *fake_prof_metric(size_t i)
{
	return i < p.ncfg ? p.cfg[i] : NULL;
}

static int unsupported(const char *name)
{
	size_t i;

	for (i = 0; i < p.nunsup; i++)
		if (!strcmp(p.unsup[i], name))
			return 1;
	return 0;
}

EXPORT int cuptiProfilerInitialize(struct init_p *a)
{
	CHECK("cuptiProfilerInitialize");
	if (!a || !a->structSize)
		return E_INVALID_PARAMETER;
	p.state[FAKE_PROF_INIT]++;
	return OK;
}

EXPORT int cuptiProfilerDeInitialize(struct init_p *a)
{
	(void)a;
	p.state[FAKE_PROF_INIT]--;
	return OK;
}

EXPORT int cuptiDeviceGetChipName(struct chip_p *a)
{
	CHECK("cuptiDeviceGetChipName");
	a->pChipName = "GH100";
	return OK;
}

EXPORT int cuptiProfilerGetCounterAvailability(struct avail_p *a)
{
	CHECK("cuptiProfilerGetCounterAvailability");
	if (!p.state[FAKE_PROF_INIT])
		return E_NOT_INITIALIZED;
	if (!a->image)
		a->size = 64;
	else
		memset(a->image, 0xa5, a->size);
	return OK;
}

EXPORT int cuptiProfilerHostInitialize(struct host_init_p *a)
{
	CHECK("cuptiProfilerHostInitialize");
	if (a->profilerType != 0 || !a->pChipName || strcmp(a->pChipName, "GH100") || !a->avail)
		return E_INVALID_PARAMETER;
	a->pHostObject = &p.host_obj;
	p.state[FAKE_PROF_HOSTS]++;
	return OK;
}

EXPORT int cuptiProfilerHostDeinitialize(struct host_deinit_p *a)
{
	if (a->pHostObject != &p.host_obj)
		return E_INVALID_PARAMETER;
	p.state[FAKE_PROF_HOSTS]--;
	return OK;
}

EXPORT int cuptiProfilerHostGetMetricProperties(struct props_p *a)
{
	CHECK("cuptiProfilerHostGetMetricProperties");
	if (a->pHostObject != &p.host_obj || !a->pMetricName)
		return E_INVALID_PARAMETER;
	if (unsupported(a->pMetricName))
		return E_INVALID_METRIC_NAME;
	a->pDescription = "fake metric";
	a->pHwUnit = "fake";
	a->pDimUnit = "";
	a->metricType = strstr(a->pMetricName, "throughput")                               ? 2 :
			strstr(a->pMetricName, ".pct") || strstr(a->pMetricName, ".ratio") ? 1 :
											     0;
	return OK;
}

EXPORT int cuptiProfilerHostConfigAddMetrics(struct add_p *a)
{
	size_t i;

	CHECK("cuptiProfilerHostConfigAddMetrics");
	for (i = 0; i < a->n; i++) {
		if (unsupported(a->names[i]))
			return E_INVALID_METRIC_NAME;
		if (p.ncfg < MAX_METRICS)
			snprintf(p.cfg[p.ncfg++], sizeof(p.cfg[0]), "%s", a->names[i]);
	}
	return OK;
}

EXPORT int cuptiProfilerHostGetConfigImageSize(struct csize_p *a)
{
	CHECK("cuptiProfilerHostGetConfigImageSize");
	a->size = 128 + p.ncfg;
	return OK;
}

EXPORT int cuptiProfilerHostGetConfigImage(struct cimage_p *a)
{
	CHECK("cuptiProfilerHostGetConfigImage");
	if (a->size != 128 + p.ncfg || !a->image)
		return E_INVALID_PARAMETER;
	memset(a->image, 0x5a, a->size);
	return OK;
}

EXPORT int cuptiProfilerHostGetNumOfPasses(struct passes_p *a)
{
	CHECK("cuptiProfilerHostGetNumOfPasses");
	a->passes = p.passes ? p.passes : 1; /* 1 before any reset */
	return OK;
}

EXPORT int cuptiProfilerHostEvaluateToGpuValues(struct eval_p *a)
{
	size_t i, j;

	CHECK("cuptiProfilerHostEvaluateToGpuValues");
	if (a->structSize != offsetof(struct eval_p, values) + sizeof(double *))
		return E_INVALID_PARAMETER;
	if (a->rangeIndex >= p.nranges)
		return E_INVALID_PARAMETER;
	for (i = 0; i < a->n; i++) {
		for (j = 0; j < p.ncfg; j++)
			if (!strcmp(p.cfg[j], a->names[i]))
				break;
		if (j == p.ncfg)
			return E_INVALID_METRIC_NAME;
		a->values[i] = p.ranges[a->rangeIndex][j];
	}
	return OK;
}

EXPORT int cuptiRangeProfilerEnable(struct enable_p *a)
{
	CHECK("cuptiRangeProfilerEnable");
	if (!a->ctx)
		return E_INVALID_PARAMETER;
	a->obj = &p.rp_obj;
	p.state[FAKE_PROF_ENABLED]++;
	return OK;
}

EXPORT int cuptiRangeProfilerDisable(struct obj_p *a)
{
	if (a->obj != &p.rp_obj)
		return E_INVALID_PARAMETER;
	p.state[FAKE_PROF_ENABLED]--;
	return OK;
}

EXPORT int cuptiRangeProfilerGetCounterDataSize(struct dsize_p *a)
{
	CHECK("cuptiRangeProfilerGetCounterDataSize");
	if (a->maxNodes < a->maxRanges || !a->n)
		return E_INVALID_PARAMETER;
	a->size = 256 + a->maxRanges * 16;
	p.max_ranges = a->maxRanges;
	return OK;
}

EXPORT int cuptiRangeProfilerCounterDataImageInitialize(struct dinit_p *a)
{
	CHECK("cuptiRangeProfilerCounterDataImageInitialize");
	if (a->size != 256 + p.max_ranges * 16)
		return E_INVALID_PARAMETER;
	memset(a->data, 0, a->size);
	return OK;
}

EXPORT int cuptiRangeProfilerSetConfig(struct setcfg_p *a)
{
	CHECK("cuptiRangeProfilerSetConfig");
	/* CUPTI checks structSize against the header's *_STRUCT_SIZE (up to the last field). */
	if (a->structSize != offsetof(struct setcfg_p, targetNestingLevel) + sizeof(uint16_t))
		return E_INVALID_PARAMETER;
	if (!a->pConfig || !a->data || a->numNestingLevels != 1 || a->targetNestingLevel != 1)
		return E_INVALID_PARAMETER;
	p.state[FAKE_PROF_RANGE_MODE] = a->range;
	p.state[FAKE_PROF_REPLAY_MODE] = a->replayMode;
	return OK;
}

EXPORT int cuptiRangeProfilerStart(struct obj_p *a)
{
	CHECK("cuptiRangeProfilerStart");
	(void)a;
	p.state[FAKE_PROF_STARTED] = 1;
	return OK;
}

EXPORT int cuptiRangeProfilerStop(struct stop_p *a)
{
	CHECK("cuptiRangeProfilerStop");
	if (a->structSize != offsetof(struct stop_p, isAllPassSubmitted) + sizeof(uint8_t))
		return E_INVALID_PARAMETER;
	p.state[FAKE_PROF_STARTED] = 0;
	p.state[FAKE_PROF_STOPS]++;
	a->passIndex = 0;
	a->targetNestingLevel = 1;
	a->isAllPassSubmitted = 1;
	return OK;
}

EXPORT int cuptiRangeProfilerDecodeData(struct decode_p *a)
{
	CHECK("cuptiRangeProfilerDecodeData");
	a->dropped = p.dropped;
	p.state[FAKE_PROF_DECODES]++;
	return OK;
}

EXPORT int cuptiRangeProfilerGetCounterDataInfo(struct dinfo_p *a)
{
	CHECK("cuptiRangeProfilerGetCounterDataInfo");
	a->numTotalRanges = p.nranges;
	return OK;
}

/* CUDA driver calls the collector adds to the backend's. */
EXPORT int cuCtxGetDevice(int *dev)
{
	*dev = 0;
	return 0;
}
