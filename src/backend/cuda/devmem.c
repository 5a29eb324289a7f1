/* SPDX-License-Identifier: Apache-2.0 */
/*
 * <flagprism/devmem.h> on NVIDIA GPUs: the few driver-API calls that zero, write and read
 * FlagPrism's own device buffers, loaded from libcuda.so.1 once. Each call makes the buffer's own
 * context current for its duration (the calling thread may have another one, or none), so it
 * works from any thread. Not here: allocation (the framework's allocator owns the memory) and
 * anything the profiler's CUPTI backend does with the driver.
 */
#include "fp-setup.h"

#include <dlfcn.h>
#include <pthread.h>

#include <flagprism/devmem.h>

#include "backend/cuda/cupti-internal.h" /* FP__LSAN_DISABLE/ENABLE around dlopen */

typedef void *fp__cuctx;

#define FP__DEVMEM_FUNCS(X)                                                               \
	X(cuInit, (unsigned flags))                                                       \
	X(cuPointerGetAttribute, (void *data, int attr, uint64_t ptr))                    \
	X(cuCtxPushCurrent_v2, (fp__cuctx ctx))                                           \
	X(cuCtxPopCurrent_v2, (fp__cuctx * ctx))                                          \
	X(cuCtxGetCurrent, (fp__cuctx * ctx))                                             \
	X(cuMemsetD8Async, (uint64_t dptr, unsigned char v, size_t n, uint64_t stream))   \
	X(cuMemcpyHtoDAsync_v2, (uint64_t dst, const void *src, size_t n, uint64_t strm)) \
	X(cuMemcpyDtoHAsync_v2, (void *dst, uint64_t src, size_t n, uint64_t strm))       \
	X(cuStreamSynchronize, (uint64_t stream))                                         \
	X(cuGetErrorName, (int err, const char **name))                                   \
	X(cuMemHostAlloc, (void **pp, size_t n, unsigned flags))                          \
	X(cuMemFreeHost, (void *p))                                                       \
	X(cuEventCreate, (void **ev, unsigned flags))                                     \
	X(cuEventRecord, (void *ev, uint64_t stream))                                     \
	X(cuEventSynchronize, (void *ev))                                                 \
	X(cuEventDestroy_v2, (void *ev))

#define X(name, params) typedef int(*fp__devmem_##name##_fn) params;
FP__DEVMEM_FUNCS(X)
#undef X

/* CU_POINTER_ATTRIBUTE_CONTEXT */
#define FP__CU_POINTER_ATTRIBUTE_CONTEXT 1
/* CU_MEMHOSTALLOC_PORTABLE, CU_EVENT_DISABLE_TIMING */
#define FP__CU_MEMHOSTALLOC_PORTABLE 1u
#define FP__CU_EVENT_DISABLE_TIMING 2u

struct fp_devmem_event {
	void *ev;  /* CUevent */
	void *ctx; /* CUcontext it was recorded in */
};

static struct {
	pthread_once_t once;
	int status;
	char why[256];
#define X(name, params) fp__devmem_##name##_fn name;
	FP__DEVMEM_FUNCS(X)
#undef X
} drv = {.once = PTHREAD_ONCE_INIT};

static void load(void)
{
	const char *path = secure_getenv("FLAGPRISM_CUDA_DRIVER_PATH"), *e;
	void *h, *p;
	int rc;

	if (!path || !*path)
		path = "libcuda.so.1";
	FP__LSAN_DISABLE();
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (!h)
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	FP__LSAN_ENABLE();
	if (!h) {
		e = dlerror();
		snprintf(drv.why, sizeof(drv.why), "no CUDA driver: %s", e ? e : path);
		drv.status = FP_ENOTSUP;
		return;
	}
#define X(name, params)                                                          \
	p = dlsym(h, #name);                                                     \
	if (!p) {                                                                \
		snprintf(drv.why, sizeof(drv.why), "%s has no %s", path, #name); \
		drv.status = FP_ENOTSUP;                                         \
		return;                                                          \
	}                                                                        \
	memcpy(&drv.name, &p, sizeof(p));
	FP__DEVMEM_FUNCS(X)
#undef X
	rc = drv.cuInit(0);
	if (rc) {
		snprintf(drv.why, sizeof(drv.why), "cuInit failed with CUDA error %d", rc);
		drv.status = FP_ENOTSUP;
		return;
	}
	drv.status = FP_OK;
}

int fp_devmem_open(struct fp_diag *diag)
{
	pthread_once(&drv.once, load);
	if (drv.status)
		return fp_diag_set(diag, drv.status, 0, "%s", drv.why);
	return FP_OK;
}

static int cu_fail(struct fp_diag *diag, const char *what, int rc, uint64_t dptr)
{
	const char *name = NULL;

	if (drv.cuGetErrorName(rc, &name) || !name)
		name = "unknown error";
	return fp_diag_set(diag, FP_EVENDOR, 0, "%s of device buffer 0x%" PRIx64 ": %s (%d)", what,
			   dptr, name, rc);
}

/*
 * Spans: allocations whose context was looked up once (fp_devmem_span_add), so calls on memory
 * inside them (the pipeline's pool, at every launch) skip the driver's pointer query.
 */
#define FP__DEVMEM_SPANS 16

static struct {
	pthread_mutex_t mu;
	struct {
		uint64_t base;
		size_t size;
		fp__cuctx ctx;
	} s[FP__DEVMEM_SPANS];
	size_t n;
} spans = {.mu = PTHREAD_MUTEX_INITIALIZER};

static fp__cuctx span_ctx(uint64_t dptr)
{
	fp__cuctx ctx = NULL;
	size_t i;

	pthread_mutex_lock(&spans.mu);
	for (i = 0; i < spans.n; i++)
		if (dptr >= spans.s[i].base && dptr - spans.s[i].base < spans.s[i].size) {
			ctx = spans.s[i].ctx;
			break;
		}
	pthread_mutex_unlock(&spans.mu);
	return ctx;
}

int fp_devmem_span_add(uint64_t base, size_t size, struct fp_diag *diag)
{
	fp__cuctx ctx = NULL;
	int st, rc;

	if (!base || !size)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_devmem_span_add: empty span");
	if ((st = fp_devmem_open(diag)))
		return st;
	rc = drv.cuPointerGetAttribute(&ctx, FP__CU_POINTER_ATTRIBUTE_CONTEXT, base);
	if (rc || !ctx)
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "0x%" PRIx64 " is not device memory the driver knows (%d)", base,
				   rc);
	pthread_mutex_lock(&spans.mu);
	if (spans.n == FP__DEVMEM_SPANS) {
		pthread_mutex_unlock(&spans.mu);
		return fp_diag_set(diag, FP_ELIMIT, 0, "more than %d device memory spans",
				   FP__DEVMEM_SPANS);
	}
	spans.s[spans.n].base = base;
	spans.s[spans.n].size = size;
	spans.s[spans.n].ctx = ctx;
	spans.n++;
	pthread_mutex_unlock(&spans.mu);
	return FP_OK;
}

void fp_devmem_span_remove(uint64_t base)
{
	size_t i;

	pthread_mutex_lock(&spans.mu);
	for (i = 0; i < spans.n; i++)
		if (spans.s[i].base == base) {
			spans.s[i] = spans.s[--spans.n];
			break;
		}
	pthread_mutex_unlock(&spans.mu);
}

/* Make `ctx` current unless it is; *pushed says whether to pop it afterwards. */
static int enter_ctx(fp__cuctx ctx, const char *what, bool *pushed, uint64_t dptr,
		     struct fp_diag *diag)
{
	fp__cuctx cur = NULL;
	int rc;

	*pushed = false;
	if (!drv.cuCtxGetCurrent(&cur) && cur == ctx)
		return FP_OK; /* the launching thread's own context: nothing to switch */
	rc = drv.cuCtxPushCurrent_v2(ctx);
	if (rc)
		return cu_fail(diag, what, rc, dptr);
	*pushed = true;
	return FP_OK;
}

/* Make the context that owns `dptr` current; *pushed says whether to pop it afterwards. */
static int enter(uint64_t dptr, const char *what, bool *pushed, struct fp_diag *diag)
{
	fp__cuctx ctx;
	int rc, st;

	*pushed = false;
	if ((st = fp_devmem_open(diag)))
		return st;
	ctx = span_ctx(dptr);
	if (!ctx) {
		rc = drv.cuPointerGetAttribute(&ctx, FP__CU_POINTER_ATTRIBUTE_CONTEXT, dptr);
		if (rc || !ctx)
			return fp_diag_set(diag, FP_EINVAL, 0,
					   "%s: 0x%" PRIx64
					   " is not device memory the driver knows (%d)",
					   what, dptr, rc);
	}
	return enter_ctx(ctx, what, pushed, dptr, diag);
}

static void leave(bool pushed)
{
	fp__cuctx ctx;

	if (pushed)
		drv.cuCtxPopCurrent_v2(&ctx);
}

int fp_devmem_zero(uint64_t dptr, size_t nbytes, uint64_t stream, struct fp_diag *diag)
{
	bool pushed;
	int st, rc;

	if (!nbytes)
		return FP_OK;
	if ((st = enter(dptr, "zeroing", &pushed, diag)))
		return st;
	rc = drv.cuMemsetD8Async(dptr, 0, nbytes, stream);
	leave(pushed);
	return rc ? cu_fail(diag, "zeroing", rc, dptr) : FP_OK;
}

int fp_devmem_write(uint64_t dptr, const void *src, size_t n, uint64_t stream, struct fp_diag *diag)
{
	bool pushed;
	int st, rc;

	if (!n)
		return FP_OK;
	if (!src)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_devmem_write: NULL source");
	if ((st = enter(dptr, "writing", &pushed, diag)))
		return st;
	/* from pageable memory the driver stages the bytes before returning: src is free again */
	rc = drv.cuMemcpyHtoDAsync_v2(dptr, src, n, stream);
	leave(pushed);
	return rc ? cu_fail(diag, "writing", rc, dptr) : FP_OK;
}

int fp_devmem_read(void *dst, uint64_t dptr, size_t n, uint64_t stream, struct fp_diag *diag)
{
	bool pushed;
	int st, rc;

	if (!n)
		return FP_OK;
	if (!dst)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_devmem_read: NULL destination");
	if ((st = enter(dptr, "reading", &pushed, diag)))
		return st;
	rc = drv.cuMemcpyDtoHAsync_v2(dst, dptr, n, stream);
	if (!rc)
		rc = drv.cuStreamSynchronize(stream);
	leave(pushed);
	return rc ? cu_fail(diag, "reading", rc, dptr) : FP_OK;
}

/* ---- asynchronous reads ----------------------------------------------------------------------- */

int fp_devmem_host_alloc(uint64_t dptr, size_t n, void **out, struct fp_diag *diag)
{
	bool pushed;
	int st, rc;

	if (!out || !n)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_devmem_host_alloc: no size or output");
	*out = NULL;
	if ((st = enter(dptr, "allocating host memory for", &pushed, diag)))
		return st;
	rc = drv.cuMemHostAlloc(out, n, FP__CU_MEMHOSTALLOC_PORTABLE);
	leave(pushed);
	if (rc) {
		*out = NULL;
		return cu_fail(diag, "page-locked host allocation for", rc, dptr);
	}
	return FP_OK;
}

void fp_devmem_host_free(void *p)
{
	if (p && drv.status == FP_OK)
		drv.cuMemFreeHost(p);
}

int fp_devmem_read_async(void *dst, uint64_t dptr, size_t n, uint64_t stream,
			 struct fp_devmem_event **ev, struct fp_diag *diag)
{
	struct fp_devmem_event *e;
	fp__cuctx ctx;
	bool pushed, fresh;
	int st, rc;

	if (!dst || !ev)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_devmem_read_async: NULL argument");
	e = *ev;
	fresh = !e;
	if (fresh) {
		e = fp_calloc(1, sizeof(*e));
		if (!e)
			return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	}
	if ((st = fp_devmem_open(diag)))
		goto fail_event;
	ctx = span_ctx(dptr);
	if (!ctx &&
	    (drv.cuPointerGetAttribute(&ctx, FP__CU_POINTER_ATTRIBUTE_CONTEXT, dptr) || !ctx)) {
		st = fp_diag_set(diag, FP_EINVAL, 0,
				 "reading: 0x%" PRIx64 " is not device memory the driver knows",
				 dptr);
		goto fail_event;
	}
	if (e->ev && e->ctx != ctx) {
		/* an event of another context cannot be recorded here: a new one */
		fp_devmem_event_free(e);
		e = fp_calloc(1, sizeof(*e));
		fresh = true;
		if (!e) {
			*ev = NULL;
			return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
		}
	}
	if ((st = enter_ctx(ctx, "reading", &pushed, dptr, diag)))
		goto fail_event;
	e->ctx = ctx;
	rc = n ? drv.cuMemcpyDtoHAsync_v2(dst, dptr, n, stream) : 0;
	if (!rc && !e->ev)
		rc = drv.cuEventCreate(&e->ev, FP__CU_EVENT_DISABLE_TIMING);
	if (!rc)
		rc = drv.cuEventRecord(e->ev, stream);
	leave(pushed);
	if (rc) {
		st = cu_fail(diag, "queueing the read", rc, dptr);
		goto fail_event;
	}
	*ev = e;
	return FP_OK;

fail_event:
	if (fresh) {
		if (e->ev)
			fp_devmem_event_free(e);
		else
			fp_free(e);
		*ev = NULL;
	}
	return st;
}

int fp_devmem_event_wait(struct fp_devmem_event *ev, struct fp_diag *diag)
{
	fp__cuctx prev;
	int rc;

	if (!ev)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_devmem_event_wait: NULL event");
	rc = drv.cuCtxPushCurrent_v2(ev->ctx);
	if (rc)
		return cu_fail(diag, "waiting for the read", rc, 0);
	rc = drv.cuEventSynchronize(ev->ev);
	drv.cuCtxPopCurrent_v2(&prev);
	return rc ? cu_fail(diag, "waiting for the read", rc, 0) : FP_OK;
}

void fp_devmem_event_free(struct fp_devmem_event *ev)
{
	fp__cuctx prev;

	if (!ev)
		return;
	if (ev->ev && !drv.cuCtxPushCurrent_v2(ev->ctx)) {
		drv.cuEventDestroy_v2(ev->ev);
		drv.cuCtxPopCurrent_v2(&prev);
	}
	fp_free(ev);
}
