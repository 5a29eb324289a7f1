/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libfakecupti.so: a test double for NVIDIA's libcupti, so the CUPTI backend's record handling,
 * attribution, graph bookkeeping and error paths run in CI without a GPU. It implements the
 * CUPTI calls the backend makes (subscription with the single-subscriber error, callbacks,
 * activity buffers through the registered request/complete callbacks, a record iterator, dropped
 * counts, timestamps, graph ids) plus the few CUDA driver calls of the device table, and the
 * control functions of fake-cupti.h. Kernel records are written in CUpti_ActivityKernel10's
 * layout (216 bytes) or, when the reported version is older than 13.0, Kernel9's first 208
 * bytes; the layout is declared here from the CUPTI header's field list, independently of
 * src/backend/cuda/cupti-abi.h, so the two check each other. Compile-time variants: FAKE_NO_FLUSH
 * leaves out cuptiActivityFlushAll (the missing-symbol test), FAKE_OLD leaves out
 * cuptiSubscribe_v2 and the timestamp callback and reports API version 26 (CUDA 12.8).
 * Not part of FlagPrism and not thread-safe against its own reset.
 */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake-cupti.h"
#include "fake-cupti-pcs.h"
#include "fake-cupti-profiler.h"

#define EXPORT __attribute__((visibility("default")))

/* CUPTI values (cupti_result.h, cupti_activity.h, cupti_callbacks.h). */
#define OK 0
#define E_INVALID_PARAMETER 1
#define E_MAX_LIMIT_REACHED 12
#define E_INVALID_KIND 21
#define E_MULTIPLE_SUBSCRIBERS 39
#define KIND_CONCURRENT_KERNEL 10
#define DOMAINS 7
#define CBIDS 1024
#define MAX_NAMES 256

#include "fake-cupti-record.h"

/* CUpti_CallbackData, CUpti_ResourceData, CUpti_GraphData, CUpti_SubscriberParams */
struct cbdata {
	int callbackSite;
	const char *functionName;
	const void *functionParams;
	void *functionReturnValue;
	const char *symbolName;
	void *context;
	uint32_t contextUid;
	uint64_t *correlationData;
	uint32_t correlationId;
};

struct resource_data {
	void *context;
	union {
		void *stream;
	} resourceHandle;
	void *resourceDescriptor;
};

struct graph_data {
	void *graph;
	void *originalGraph;
	void *node;
	void *originalNode;
	int nodeType;
	void *dependency;
	void *graphExec;
};

struct subscriber_params {
	size_t structSize;
	const char *subscriberName;
	char *oldSubscriberName;
	size_t oldSubscriberSize;
};

typedef void (*callback_fn)(void *userdata, int domain, uint32_t cbid, const void *cbdata);
typedef void (*request_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*complete_fn)(void *ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid);
typedef uint64_t (*timestamp_fn)(void);

/* The exported CUPTI and driver API (prototypes for -Wmissing-prototypes). */
EXPORT int cuptiGetVersion(uint32_t *version);
EXPORT int cuptiGetResultString(int result, const char **str);
EXPORT int cuptiSubscribe(void **sub, callback_fn cb, void *user);
EXPORT int cuptiSubscribe_v2(void **sub, callback_fn cb, void *user, struct subscriber_params *p);
EXPORT int cuptiUnsubscribe(void *sub);
EXPORT int cuptiEnableCallback(uint32_t enable, void *sub, int domain, uint32_t cbid);
EXPORT int cuptiActivityRegisterCallbacks(request_fn req, complete_fn done);
EXPORT int cuptiActivityEnable(int kind);
EXPORT int cuptiActivityDisable(int kind);
EXPORT int cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, void **record);
EXPORT int cuptiActivityGetNumDroppedRecords(void *ctx, uint32_t stream, size_t *n);
EXPORT int cuptiActivityFlushAll(uint32_t flag);
EXPORT int cuptiActivitySetAttribute(int attr, size_t *size, void *value);
EXPORT int cuptiActivityRegisterTimestampCallback(timestamp_fn fn);
EXPORT int cuptiGetTimestamp(uint64_t *ts);
EXPORT int cuptiGetGraphNodeId(void *node, uint64_t *id);
EXPORT int cuptiGetGraphId(void *graph, uint32_t *id);
EXPORT int cuptiGetGraphExecId(void *exec, uint32_t *id);
EXPORT int cuInit(unsigned flags);
EXPORT int cuDeviceGetCount(int *count);
EXPORT int cuDeviceGet(int *dev, int ordinal);
EXPORT int cuDeviceGetAttribute(int *value, int attr, int dev);
EXPORT int cuCtxGetCurrent(void **ctx);
EXPORT int cuCtxSynchronize(void);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint32_t version;
	char busy[64];
	bool is_busy, ignore_ts;
	bool subscribed;
	callback_fn cb;
	void *user;
	request_fn request;
	complete_fn complete;
	timestamp_fn ts;
	bool zeroed;
	bool kinds[64];
	/* the buffer being filled (mu) */
	uint8_t *cur;
	size_t cur_size, cur_used;
	/* full buffers kept back while `hold` is on, as a slow CUPTI worker would */
	bool hold;
	struct {
		uint8_t *b;
		size_t size, used;
	} held[64];
	size_t nheld;
	char *names[MAX_NAMES];
	size_t nnames;
} f;
static _Atomic uint8_t enabled[DOMAINS][CBIDS];
static atomic_size_t dropped;
static atomic_uint_fast64_t lost, syncs;

static size_t rec_size(void)
{
#ifdef FAKE_OLD
	return 208;
#else
	return f.version && f.version < 130000 ? 208 : sizeof(struct fake_kernel10);
#endif
}

/* ---- control --------------------------------------------------------------------------------- */

EXPORT void fake_cupti_reset(void)
{
	size_t i;
	int d, c;

	pthread_mutex_lock(&mu);
	for (i = 0; i < f.nnames; i++)
		free(f.names[i]);
	memset(&f, 0, sizeof(f));
	pthread_mutex_unlock(&mu);
	for (d = 0; d < DOMAINS; d++)
		for (c = 0; c < CBIDS; c++)
			atomic_store(&enabled[d][c], 0);
	atomic_store(&dropped, 0);
	atomic_store(&lost, 0);
	atomic_store(&syncs, 0);
}

EXPORT void fake_cupti_set_version(uint32_t version)
{
	f.version = version;
}

EXPORT void fake_cupti_set_busy(const char *other)
{
	f.is_busy = other != NULL;
	snprintf(f.busy, sizeof(f.busy), "%s", other ? other : "");
}

EXPORT void fake_cupti_set_ignore_timestamp_callback(int on)
{
	f.ignore_ts = on != 0;
}

EXPORT int fake_cupti_subscribed(void)
{
	return f.subscribed;
}

EXPORT int fake_cupti_callback_enabled(int domain, uint32_t cbid)
{
	return domain >= 0 && domain < DOMAINS && cbid < CBIDS &&
	       atomic_load(&enabled[domain][cbid]);
}

EXPORT int fake_cupti_kind_enabled(int kind)
{
	return kind >= 0 && kind < 64 && f.kinds[kind];
}

EXPORT int fake_cupti_zeroed_attr(void)
{
	return f.zeroed;
}

EXPORT int fake_cupti_timestamp_callback(void)
{
	return f.ts != NULL;
}

static void fire(int domain, uint32_t cbid, const void *data)
{
	if (f.cb && fake_cupti_callback_enabled(domain, cbid))
		f.cb(f.user, domain, cbid, data);
}

static void launch_site(int domain, uint32_t cbid, uint32_t corr, int site)
{
	struct cbdata d;

	memset(&d, 0, sizeof(d));
	d.callbackSite = site;
	d.functionName = "fakeLaunch";
	d.symbolName = "fake_kernel";
	d.correlationId = corr;
	fire(domain, cbid, &d);
}

EXPORT void fake_cupti_launch_enter(int domain, uint32_t cbid, uint32_t corr)
{
	launch_site(domain, cbid, corr, 0);
}

EXPORT void fake_cupti_launch_exit(int domain, uint32_t cbid, uint32_t corr)
{
	launch_site(domain, cbid, corr, 1);
}

EXPORT void fake_cupti_launch(int domain, uint32_t cbid, uint32_t corr)
{
	launch_site(domain, cbid, corr, 0);
	launch_site(domain, cbid, corr, 1);
}

/* cuLaunchKernelEx's parameter block and CUlaunchConfig (cuda.h), for the grid. */
struct launch_config {
	unsigned grid[3], block[3], smem;
	void *stream;
	void *attrs;
	unsigned nattrs;
};
struct launch_ex_params {
	const struct launch_config *config;
	void *f;
	void **params, **extra;
};

static uint64_t launch_function;

/* The CUfunction that fake_cupti_launch_kernel() puts into cuLaunchKernelEx's parameters. */
EXPORT void fake_cupti_set_launch_function(uint64_t fn)
{
	launch_function = fn;
}

/*
 * One launch call as the driver makes it: enter and exit callbacks with the kernel's symbol
 * name, the current context (or another one), cuLaunchKernelEx's parameters with `grid` (for
 * that call's cbids), and `ret` as the call's result. While the fake range profiler runs, the launch also counts as a
 * profiled kernel (fake-cupti-profiler.c).
 */
EXPORT void fake_cupti_launch_kernel(int domain, uint32_t cbid, uint32_t corr, const char *symbol,
				     const uint32_t *grid, int ret, int other_context)
{
	static int other;
	struct launch_config cfg;
	struct launch_ex_params prm;
	struct cbdata d;
	int site;

	memset(&cfg, 0, sizeof(cfg));
	memset(&prm, 0, sizeof(prm));
	if (grid)
		memcpy(cfg.grid, grid, sizeof(cfg.grid));
	prm.config = &cfg;
	prm.f = (void *)(uintptr_t)launch_function; /* fake_cupti_set_launch_function() */
	for (site = 0; site < 2; site++) {
		memset(&d, 0, sizeof(d));
		d.callbackSite = site;
		d.functionName = "cuLaunchKernelEx";
		/* the parameter block is cuLaunchKernelEx(_ptsz)'s: only those get one */
		d.functionParams =
			grid && domain == 1 && (cbid == 652 || cbid == 653) ? &prm : NULL;
		d.functionReturnValue = site ? &ret : NULL;
		d.symbolName = symbol;
		d.context = other_context ? (void *)&other : (void *)&f;
		d.correlationId = corr;
		fire(domain, cbid, &d);
	}
}

/*
 * One launch call of CUfunction `fn` (sites 0: enter and exit, 1: enter only, 2: exit only),
 * with the parameter block of `cbid`:
 * cuLaunchKernelEx's (config first, then f) or cuLaunchKernel's (f first; also the cooperative
 * launches'). Other cbids get cuLaunchKernel's block too.
 */
EXPORT void fake_cupti_launch_fn(int domain, uint32_t cbid, uint32_t corr, uint64_t fn, int sites)
{
	struct launch_config cfg;
	struct launch_ex_params ex;
	struct {
		void *f;
		unsigned grid[3], block[3], smem;
		void *stream, **params, **extra;
	} plain;
	struct cbdata d;
	int site;

	memset(&cfg, 0, sizeof(cfg));
	memset(&ex, 0, sizeof(ex));
	memset(&plain, 0, sizeof(plain));
	ex.config = &cfg;
	ex.f = (void *)(uintptr_t)fn;
	plain.f = ex.f;
	for (site = sites == 2 ? 1 : 0; site < (sites == 1 ? 1 : 2); site++) {
		memset(&d, 0, sizeof(d));
		d.callbackSite = site;
		d.functionName = "fakeLaunch";
		d.functionParams =
			cbid == 652 || cbid == 653 ? (const void *)&ex : (const void *)&plain;
		d.symbolName = "fake_kernel";
		d.correlationId = corr;
		fire(domain, cbid, &d);
	}
}

static void *handle(uint64_t id)
{
	return (void *)(uintptr_t)id;
}

EXPORT void fake_cupti_graph_event(uint32_t cbid, uint64_t graph, uint64_t node, uint64_t orig_node,
				   int node_type, uint64_t exec)
{
	struct resource_data r;
	struct graph_data g;

	memset(&r, 0, sizeof(r));
	memset(&g, 0, sizeof(g));
	g.graph = handle(graph);
	g.node = handle(node);
	g.originalNode = handle(orig_node);
	g.nodeType = node_type;
	g.graphExec = handle(exec);
	r.resourceDescriptor = &g;
	fire(3, cbid, &r);
}

/* Any resource callback with this descriptor (PC sampling's MODULE_LOADED: fake-cupti-pcs.h). */
EXPORT void fake_cupti_resource(uint32_t cbid, const void *descriptor)
{
	struct resource_data r;

	memset(&r, 0, sizeof(r));
	r.resourceDescriptor = (void *)(uintptr_t)descriptor;
	fire(3, cbid, &r);
}

/* mu held on entry and exit; dropped while the backend reads a full buffer. */
static void complete_locked(void)
{
	uint8_t *b = f.cur;
	size_t size = f.cur_size, used = f.cur_used;
	complete_fn done = f.complete;

	f.cur = NULL;
	f.cur_size = f.cur_used = 0;
	if (!b || !done)
		return;
	if (f.hold && f.nheld < 64) {
		f.held[f.nheld].b = b;
		f.held[f.nheld].size = size;
		f.held[f.nheld].used = used;
		f.nheld++;
		return;
	}
	pthread_mutex_unlock(&mu);
	done(NULL, 0, b, size, used);
	pthread_mutex_lock(&mu);
}

static int append(const void *bytes, size_t n)
{
	size_t max = 0;

	pthread_mutex_lock(&mu);
	/* complete_locked() lets go of mu: another thread may have started a buffer since. */
	while (f.cur && f.cur_size - f.cur_used < n)
		complete_locked();
	if (!f.cur && f.request) {
		f.request(&f.cur, &f.cur_size, &max);
		f.cur_used = 0;
		if (f.cur && f.cur_size < n) {
			/* Too small to ever hold a record: give it straight back. */
			complete_locked();
		}
	}
	if (f.cur && f.cur_size - f.cur_used < n) {
		/* Lost a race for the new buffer: try again from the top. */
		pthread_mutex_unlock(&mu);
		return append(bytes, n);
	}
	if (!f.cur) {
		pthread_mutex_unlock(&mu);
		atomic_fetch_add(&dropped, 1);
		atomic_fetch_add(&lost, 1);
		return 1;
	}
	memcpy(f.cur + f.cur_used, bytes, n);
	f.cur_used += n;
	pthread_mutex_unlock(&mu);
	return 0;
}

static const char *keep_name(const char *name)
{
	size_t i;
	const char *out = NULL;

	if (!name)
		return NULL;
	pthread_mutex_lock(&mu);
	for (i = 0; i < f.nnames && !out; i++)
		if (!strcmp(f.names[i], name))
			out = f.names[i];
	if (!out && f.nnames < MAX_NAMES) {
		f.names[f.nnames] = strdup(name);
		out = f.names[f.nnames++];
	}
	pthread_mutex_unlock(&mu);
	return out;
}

EXPORT int fake_cupti_kernel(const struct fake_kernel *k)
{
	struct fake_kernel10 r;

	memset(&r, 0, sizeof(r));
	r.kind = k->kind ? k->kind : KIND_CONCURRENT_KERNEL;
	r.registersPerThread = k->registers;
	r.start = k->start;
	r.end = k->end;
	r.completed = k->end;
	/* What CUPTI 13.0 does on the H200 under the range profiler: no times (or no record) */
	if (fake_prof__profiling()) {
		if (fake_prof__records() == FAKE_PROF_RECORDS_NONE)
			return 0;
		if (fake_prof__records() == FAKE_PROF_RECORDS_UNTIMED)
			r.start = r.end = r.completed = 0;
	}
	r.deviceId = k->device;
	r.contextId = k->context;
	r.streamId = k->stream;
	r.gridX = k->grid[0];
	r.gridY = k->grid[1];
	r.gridZ = k->grid[2];
	r.blockX = k->block[0];
	r.blockY = k->block[1];
	r.blockZ = k->block[2];
	r.staticSharedMemory = k->static_smem;
	r.dynamicSharedMemory = k->dynamic_smem;
	r.correlationId = k->corr;
	r.gridId = (int64_t)k->corr;
	r.name = keep_name(k->name);
	r.graphNodeId = k->graph_node;
	r.graphId = k->graph_id;
	r.isDeviceLaunched = 0;
	return append(&r, rec_size());
}

EXPORT void fake_cupti_set_hold(int on)
{
	size_t i, n;

	pthread_mutex_lock(&mu);
	f.hold = on != 0;
	if (!f.hold) {
		n = f.nheld;
		f.nheld = 0;
		for (i = 0; i < n; i++) {
			uint8_t *b = f.held[i].b;
			size_t size = f.held[i].size, used = f.held[i].used;

			pthread_mutex_unlock(&mu);
			f.complete(NULL, 0, b, size, used);
			pthread_mutex_lock(&mu);
		}
	}
	pthread_mutex_unlock(&mu);
}

EXPORT int fake_cupti_raw(const void *bytes, size_t n)
{
	return append(bytes, n);
}

EXPORT void fake_cupti_add_dropped(size_t n)
{
	atomic_fetch_add(&dropped, n);
}

EXPORT void fake_cupti_complete(void)
{
	pthread_mutex_lock(&mu);
	complete_locked();
	pthread_mutex_unlock(&mu);
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

EXPORT uint64_t fake_cupti_now(void)
{
	return f.ts && !f.ignore_ts ? f.ts() : realtime_ns();
}

EXPORT uint64_t fake_cupti_syncs(void)
{
	return atomic_load(&syncs);
}

EXPORT size_t fake_cupti_record_size(void)
{
	return rec_size();
}

EXPORT uint64_t fake_cupti_records_lost(void)
{
	return atomic_load(&lost);
}

/* ---- the CUPTI API --------------------------------------------------------------------------- */

EXPORT int cuptiGetVersion(uint32_t *version)
{
	if (!version)
		return E_INVALID_PARAMETER;
#ifdef FAKE_OLD
	*version = 26;
#else
	*version = f.version ? f.version : 130001;
#endif
	return OK;
}

EXPORT int cuptiGetResultString(int result, const char **str)
{
	if (!str)
		return E_INVALID_PARAMETER;
	switch (result) {
	case OK:
		*str = "CUPTI_SUCCESS";
		break;
	case E_MULTIPLE_SUBSCRIBERS:
		*str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
		break;
	default:
		*str = "CUPTI_ERROR_UNKNOWN";
		break;
	}
	return OK;
}

static int subscribe(void **sub, callback_fn cb, void *user)
{
	if (!sub)
		return E_INVALID_PARAMETER;
	if (f.is_busy || f.subscribed)
		return E_MULTIPLE_SUBSCRIBERS;
	f.subscribed = true;
	f.cb = cb;
	f.user = user;
	*sub = &f;
	return OK;
}

EXPORT int cuptiSubscribe(void **sub, callback_fn cb, void *user)
{
	return subscribe(sub, cb, user);
}

#ifndef FAKE_OLD
EXPORT int cuptiSubscribe_v2(void **sub, callback_fn cb, void *user, struct subscriber_params *p)
{
	int rc;

	if (p && p->structSize < sizeof(*p))
		return E_INVALID_PARAMETER;
	rc = subscribe(sub, cb, user);
	if (rc == E_MULTIPLE_SUBSCRIBERS && p && p->oldSubscriberName && p->oldSubscriberSize)
		snprintf(p->oldSubscriberName, p->oldSubscriberSize, "%s", f.busy);
	return rc;
}
#endif

EXPORT int cuptiUnsubscribe(void *sub)
{
	if (sub != &f || !f.subscribed)
		return E_INVALID_PARAMETER;
	f.subscribed = false;
	f.cb = NULL;
	return OK;
}

EXPORT int cuptiEnableCallback(uint32_t enable, void *sub, int domain, uint32_t cbid)
{
	if (sub != &f || domain <= 0 || domain >= DOMAINS || cbid >= CBIDS)
		return E_INVALID_PARAMETER;
	atomic_store(&enabled[domain][cbid], enable ? 1 : 0);
	return OK;
}

EXPORT int cuptiActivityRegisterCallbacks(request_fn req, complete_fn done)
{
	if (!req || !done)
		return E_INVALID_PARAMETER;
	f.request = req;
	f.complete = done;
	return OK;
}

EXPORT int cuptiActivityEnable(int kind)
{
	if (kind <= 0 || kind >= 64)
		return E_INVALID_KIND;
	f.kinds[kind] = true;
	return OK;
}

EXPORT int cuptiActivityDisable(int kind)
{
	if (kind <= 0 || kind >= 64)
		return E_INVALID_KIND;
	f.kinds[kind] = false;
	return OK;
}

EXPORT int cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, void **record)
{
	uint8_t *p;
	uint32_t kind;

	if (!buffer || !record)
		return E_INVALID_PARAMETER;
	if (!*record) {
		p = buffer;
	} else {
		p = *record;
		memcpy(&kind, p, sizeof(kind));
		if (kind != 3 && kind != KIND_CONCURRENT_KERNEL)
			return E_INVALID_KIND;
		p += rec_size();
	}
	if (p >= buffer + valid)
		return E_MAX_LIMIT_REACHED;
	memcpy(&kind, p, sizeof(kind));
	if ((kind != 3 && kind != KIND_CONCURRENT_KERNEL) || (size_t)(buffer + valid - p) < 4)
		return E_INVALID_KIND;
	*record = p;
	return OK;
}

EXPORT int cuptiActivityGetNumDroppedRecords(void *ctx, uint32_t stream, size_t *n)
{
	(void)ctx;
	(void)stream;
	if (!n)
		return E_INVALID_PARAMETER;
	*n = atomic_exchange(&dropped, 0);
	return OK;
}

#ifndef FAKE_NO_FLUSH
EXPORT int cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	fake_cupti_complete();
	return OK;
}
#endif

EXPORT int cuptiActivitySetAttribute(int attr, size_t *size, void *value)
{
	if (!size || !value)
		return E_INVALID_PARAMETER;
	if (attr == 5 && *size >= 1) {
		f.zeroed = *(uint8_t *)value != 0;
		return OK;
	}
	return E_INVALID_PARAMETER;
}

#ifndef FAKE_OLD
EXPORT int cuptiActivityRegisterTimestampCallback(timestamp_fn fn)
{
	f.ts = fn;
	return OK;
}
#endif

EXPORT int cuptiGetTimestamp(uint64_t *ts)
{
	if (!ts)
		return E_INVALID_PARAMETER;
	*ts = fake_cupti_now();
	return OK;
}

EXPORT int cuptiGetGraphNodeId(void *node, uint64_t *id)
{
	if (!node || !id)
		return E_INVALID_PARAMETER;
	*id = (uint64_t)(uintptr_t)node;
	return OK;
}

EXPORT int cuptiGetGraphId(void *graph, uint32_t *id)
{
	if (!graph || !id)
		return E_INVALID_PARAMETER;
	*id = (uint32_t)(uintptr_t)graph;
	return OK;
}

EXPORT int cuptiGetGraphExecId(void *exec, uint32_t *id)
{
	if (!exec || !id)
		return E_INVALID_PARAMETER;
	*id = (uint32_t)(uintptr_t)exec;
	return OK;
}

/* ---- the CUDA driver calls of the device table (FLAGPRISM_CUDA_DRIVER_PATH) ---------------- */

EXPORT int cuInit(unsigned flags)
{
	(void)flags;
	return 0;
}

EXPORT int cuDeviceGetCount(int *count)
{
	*count = 2;
	return 0;
}

EXPORT int cuDeviceGet(int *dev, int ordinal)
{
	*dev = ordinal;
	return ordinal >= 0 && ordinal < 2 ? 0 : 101;
}

EXPORT int cuDeviceGetAttribute(int *value, int attr, int dev)
{
	switch (attr) {
	case 75: /* compute capability major */
		*value = 9;
		return 0;
	case 76:
		*value = 0;
		return 0;
	case 37: /* bus width */
		*value = 6144;
		return 0;
	case 13: /* clock kHz */
		*value = 1980000 - dev;
		return 0;
	case 36: /* memory clock kHz */
		*value = 2619000;
		return 0;
	case 16: /* SMs */
		*value = 132;
		return 0;
	default:
		return 1;
	}
}

/* Whether a context is current on every thread (the framework made it so: the default), or
 * only where pushed (fake_devmem_set_current(0): a thread of FlagPrism's own). */
static _Atomic int ctx_current = 1;
static _Thread_local int ctx_depth;

EXPORT void fake_devmem_set_current(int on);
EXPORT void fake_devmem_set_current(int on)
{
	atomic_store(&ctx_current, on);
}

EXPORT int cuCtxGetCurrent(void **ctx)
{
	*ctx = atomic_load(&ctx_current) || ctx_depth > 0 ? (void *)&f : NULL;
	return 0;
}

EXPORT int cuCtxSynchronize(void)
{
	atomic_fetch_add(&syncs, 1);
	return 0;
}

/* ---- the driver calls of <flagprism/devmem.h>: "device" addresses are host addresses -------- */

EXPORT int cuPointerGetAttribute(void *data, int attr, uint64_t ptr);
EXPORT int cuCtxPushCurrent_v2(void *ctx);
EXPORT int cuCtxPopCurrent_v2(void **ctx);
EXPORT int cuMemsetD8Async(uint64_t dptr, unsigned char v, size_t n, uint64_t stream);
EXPORT int cuMemcpyHtoDAsync_v2(uint64_t dst, const void *src, size_t n, uint64_t stream);
EXPORT int cuMemcpyDtoHAsync_v2(void *dst, uint64_t src, size_t n, uint64_t stream);
EXPORT int cuStreamSynchronize(uint64_t stream);
EXPORT int cuGetErrorName(int err, const char **name);
EXPORT void fake_devmem_fail_next(int rc);
EXPORT long fake_devmem_calls(void);

static _Atomic int devmem_fail;   /* the next devmem call returns this (once), 0: succeed */
static _Atomic long devmem_calls; /* memset/memcpy calls made */
static _Atomic long ctx_pushes;   /* cuCtxPushCurrent calls */
static _Atomic long ctx_queries;  /* cuPointerGetAttribute calls */

EXPORT long fake_devmem_pushes(void);
EXPORT long fake_devmem_pushes(void)
{
	return atomic_load(&ctx_pushes);
}

EXPORT long fake_devmem_ctx_queries(void);
EXPORT long fake_devmem_ctx_queries(void)
{
	return atomic_load(&ctx_queries);
}

/* No context current on this thread: what the driver's calls fail with then. */
static int no_ctx(void)
{
	return ctx_depth <= 0 && !atomic_load(&ctx_current);
}

static int devmem_result(void)
{
	atomic_fetch_add(&devmem_calls, 1);
	return atomic_exchange(&devmem_fail, 0);
}

EXPORT void fake_devmem_fail_next(int rc)
{
	atomic_store(&devmem_fail, rc);
}

EXPORT long fake_devmem_calls(void)
{
	return atomic_load(&devmem_calls);
}

EXPORT int cuPointerGetAttribute(void *data, int attr, uint64_t ptr)
{
	atomic_fetch_add(&ctx_queries, 1);
	if (attr != 1 || !ptr)
		return 1; /* CUDA_ERROR_INVALID_VALUE */
	*(void **)data = &f;
	return 0;
}

EXPORT int cuCtxPushCurrent_v2(void *ctx)
{
	(void)ctx;
	atomic_fetch_add(&ctx_pushes, 1);
	ctx_depth++;
	return 0;
}

EXPORT int cuCtxPopCurrent_v2(void **ctx)
{
	if (no_ctx())
		return 201; /* CUDA_ERROR_INVALID_CONTEXT */
	ctx_depth--;
	*ctx = &f;
	return 0;
}

EXPORT int cuMemsetD8Async(uint64_t dptr, unsigned char v, size_t n, uint64_t stream)
{
	int rc = devmem_result();

	(void)stream;
	if (no_ctx())
		return 201;
	if (!rc)
		memset((void *)(uintptr_t)dptr, v, n);
	return rc;
}

EXPORT int cuMemcpyHtoDAsync_v2(uint64_t dst, const void *src, size_t n, uint64_t stream)
{
	int rc = devmem_result();

	(void)stream;
	if (no_ctx())
		return 201;
	if (!rc)
		memcpy((void *)(uintptr_t)dst, src, n);
	return rc;
}

EXPORT int cuMemcpyDtoHAsync_v2(void *dst, uint64_t src, size_t n, uint64_t stream)
{
	int rc = devmem_result();

	(void)stream;
	if (no_ctx())
		return 201;
	if (!rc)
		memcpy(dst, (const void *)(uintptr_t)src, n);
	return rc;
}

EXPORT int cuStreamSynchronize(uint64_t stream)
{
	(void)stream;
	return 0;
}

EXPORT int cuGetErrorName(int err, const char **name)
{
	*name = err == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS" : "CUDA_ERROR_UNKNOWN";
	return 0;
}

EXPORT int cuMemHostAlloc(void **pp, size_t n, unsigned flags);
EXPORT int cuMemFreeHost(void *p);
EXPORT int cuEventCreate(void **ev, unsigned flags);
EXPORT int cuEventRecord(void *ev, uint64_t stream);
EXPORT int cuEventSynchronize(void *ev);
EXPORT int cuEventDestroy_v2(void *ev);
EXPORT void fake_devmem_fail_event(int rc);
EXPORT long fake_devmem_events_live(void);
EXPORT long fake_devmem_host_allocs(void);

static _Atomic int event_fail;   /* the next event wait returns this (once) */
static _Atomic long events_live; /* created, not destroyed */

EXPORT void fake_devmem_fail_event(int rc)
{
	atomic_store(&event_fail, rc);
}

EXPORT long fake_devmem_events_live(void)
{
	return atomic_load(&events_live);
}

static _Atomic long host_allocs; /* cuMemHostAlloc calls that succeeded */

EXPORT long fake_devmem_host_allocs(void)
{
	return atomic_load(&host_allocs);
}

EXPORT int cuMemHostAlloc(void **pp, size_t n, unsigned flags)
{
	(void)flags;
	if (no_ctx())
		return 201;
	*pp = malloc(n);
	if (*pp)
		atomic_fetch_add(&host_allocs, 1);
	return *pp ? 0 : 2; /* CUDA_ERROR_OUT_OF_MEMORY */
}

EXPORT int cuMemFreeHost(void *p)
{
	free(p);
	return 0;
}

EXPORT int cuEventCreate(void **ev, unsigned flags)
{
	(void)flags;
	if (no_ctx())
		return 201;
	*ev = malloc(1);
	if (!*ev)
		return 2;
	atomic_fetch_add(&events_live, 1);
	return 0;
}

EXPORT int cuEventRecord(void *ev, uint64_t stream)
{
	(void)ev;
	(void)stream;
	return no_ctx() ? 201 : 0;
}

EXPORT int cuEventSynchronize(void *ev)
{
	(void)ev;
	return atomic_exchange(&event_fail, 0);
}

EXPORT int cuEventDestroy_v2(void *ev)
{
	free(ev);
	atomic_fetch_sub(&events_live, 1);
	return 0;
}
