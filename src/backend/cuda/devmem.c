/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Device memory on NVIDIA GPUs: the CUDA folder's device-memory calls (struct fp__devmem_ops,
 * which the vendor-neutral <flagprism/devmem.h> functions of src/backend/devmem.c call once
 * they have checked the arguments and the driver opened), the few driver-API calls that zero,
 * write and read FlagPrism's own device buffers, through the one driver loader (driver.c). Each
 * call makes the buffer's own context current for its duration (the calling thread may have
 * another one, or none), so it works from any thread. The folder's row of the vendor table is
 * here too. Not here: allocation (the framework's allocator owns the memory) and anything the
 * profiler's CUPTI backend does with the driver.
 */
#include "fp-setup.h"

#include <pthread.h>

#include "backend/backend-internal.h"
#include "backend/cuda/cuda-internal.h"

struct fp_devmem_event {
	void *ev;  /* CUevent */
	void *ctx; /* CUcontext it was recorded in */
};

/* The loaded driver: every call here runs after cuda_open() succeeded. */
static const struct fp__cu_driver *driver(void)
{
	const struct fp__cu_driver *cu = NULL;

	fp__cu_driver_open(&cu, NULL);
	return cu;
}

static int cuda_open(struct fp_diag *diag)
{
	const struct fp__cu_driver *cu;
	const char *why = "";
	int rc = fp__cu_driver_open(&cu, &why);

	if (rc == FP_ENOENT)
		return fp_diag_set(diag, FP_ENOTSUP, 0, "no CUDA driver: %s", why);
	if (rc)
		return fp_diag_set(diag, FP_ENOTSUP, 0, "%s", why);
	return FP_OK;
}

static int cu_fail(struct fp_diag *diag, const char *what, int rc, uint64_t dptr)
{
	const char *name = NULL;

	if (driver()->cuGetErrorName(rc, &name) || !name)
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
		fp__cu_context ctx;
	} s[FP__DEVMEM_SPANS];
	size_t n;
} spans = {.mu = PTHREAD_MUTEX_INITIALIZER};

static fp__cu_context span_ctx(uint64_t dptr)
{
	fp__cu_context ctx = NULL;
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

static int cuda_span_add(uint64_t base, size_t size, struct fp_diag *diag)
{
	fp__cu_context ctx = NULL;
	int rc;

	rc = driver()->cuPointerGetAttribute(&ctx, FP__CU_POINTER_ATTRIBUTE_CONTEXT, base);
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

static void cuda_span_remove(uint64_t base)
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
static int enter_ctx(fp__cu_context ctx, const char *what, bool *pushed, uint64_t dptr,
		     struct fp_diag *diag)
{
	fp__cu_context cur = NULL;
	int rc;

	*pushed = false;
	if (!driver()->cuCtxGetCurrent(&cur) && cur == ctx)
		return FP_OK; /* the launching thread's own context: nothing to switch */
	rc = driver()->cuCtxPushCurrent_v2(ctx);
	if (rc)
		return cu_fail(diag, what, rc, dptr);
	*pushed = true;
	return FP_OK;
}

/* Make the context that owns `dptr` current; *pushed says whether to pop it afterwards. */
static int enter(uint64_t dptr, const char *what, bool *pushed, struct fp_diag *diag)
{
	fp__cu_context ctx;
	int rc;

	*pushed = false;
	ctx = span_ctx(dptr);
	if (!ctx) {
		rc = driver()->cuPointerGetAttribute(&ctx, FP__CU_POINTER_ATTRIBUTE_CONTEXT, dptr);
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
	fp__cu_context ctx;

	if (pushed)
		driver()->cuCtxPopCurrent_v2(&ctx);
}

static int cuda_zero(uint64_t dptr, size_t nbytes, uint64_t stream, struct fp_diag *diag)
{
	bool pushed;
	int st, rc;

	if ((st = enter(dptr, "zeroing", &pushed, diag)))
		return st;
	rc = driver()->cuMemsetD8Async(dptr, 0, nbytes, stream);
	leave(pushed);
	return rc ? cu_fail(diag, "zeroing", rc, dptr) : FP_OK;
}

static int cuda_write(uint64_t dptr, const void *src, size_t n, uint64_t stream,
		      struct fp_diag *diag)
{
	bool pushed;
	int st, rc;

	if ((st = enter(dptr, "writing", &pushed, diag)))
		return st;
	/* from pageable memory the driver stages the bytes before returning: src is free again */
	rc = driver()->cuMemcpyHtoDAsync_v2(dptr, src, n, stream);
	leave(pushed);
	return rc ? cu_fail(diag, "writing", rc, dptr) : FP_OK;
}

static int cuda_read(void *dst, uint64_t dptr, size_t n, uint64_t stream, struct fp_diag *diag)
{
	bool pushed;
	int st, rc;

	if ((st = enter(dptr, "reading", &pushed, diag)))
		return st;
	rc = driver()->cuMemcpyDtoHAsync_v2(dst, dptr, n, stream);
	if (!rc)
		rc = driver()->cuStreamSynchronize(stream);
	leave(pushed);
	return rc ? cu_fail(diag, "reading", rc, dptr) : FP_OK;
}

/* ---- asynchronous reads ----------------------------------------------------------------------- */

static int cuda_host_alloc(uint64_t dptr, size_t n, void **out, struct fp_diag *diag)
{
	bool pushed;
	int st, rc;

	if ((st = enter(dptr, "allocating host memory for", &pushed, diag)))
		return st;
	rc = driver()->cuMemHostAlloc(out, n, FP__CU_MEMHOSTALLOC_PORTABLE);
	leave(pushed);
	if (rc) {
		*out = NULL;
		return cu_fail(diag, "page-locked host allocation for", rc, dptr);
	}
	return FP_OK;
}

static void cuda_host_free(void *p)
{
	driver()->cuMemFreeHost(p);
}

static void cuda_event_free(struct fp_devmem_event *ev);

static int cuda_read_async(void *dst, uint64_t dptr, size_t n, uint64_t stream,
			   struct fp_devmem_event **ev, struct fp_diag *diag)
{
	struct fp_devmem_event *e;
	fp__cu_context ctx;
	bool pushed, fresh;
	int st, rc;

	e = *ev;
	fresh = !e;
	if (fresh) {
		e = fp_calloc(1, sizeof(*e));
		if (!e)
			return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	}
	ctx = span_ctx(dptr);
	if (!ctx &&
	    (driver()->cuPointerGetAttribute(&ctx, FP__CU_POINTER_ATTRIBUTE_CONTEXT, dptr) ||
	     !ctx)) {
		st = fp_diag_set(diag, FP_EINVAL, 0,
				 "reading: 0x%" PRIx64 " is not device memory the driver knows",
				 dptr);
		goto fail_event;
	}
	if (e->ev && e->ctx != ctx) {
		/* an event of another context cannot be recorded here: a new one */
		cuda_event_free(e);
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
	rc = n ? driver()->cuMemcpyDtoHAsync_v2(dst, dptr, n, stream) : 0;
	if (!rc && !e->ev)
		rc = driver()->cuEventCreate(&e->ev, FP__CU_EVENT_DISABLE_TIMING);
	if (!rc)
		rc = driver()->cuEventRecord(e->ev, stream);
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
			cuda_event_free(e);
		else
			fp_free(e);
		*ev = NULL;
	}
	return st;
}

static int cuda_event_wait(struct fp_devmem_event *ev, struct fp_diag *diag)
{
	fp__cu_context prev;
	int rc;

	rc = driver()->cuCtxPushCurrent_v2(ev->ctx);
	if (rc)
		return cu_fail(diag, "waiting for the read", rc, 0);
	rc = driver()->cuEventSynchronize(ev->ev);
	driver()->cuCtxPopCurrent_v2(&prev);
	return rc ? cu_fail(diag, "waiting for the read", rc, 0) : FP_OK;
}

static void cuda_event_free(struct fp_devmem_event *ev)
{
	fp__cu_context prev;

	if (ev->ev && !driver()->cuCtxPushCurrent_v2(ev->ctx)) {
		driver()->cuEventDestroy_v2(ev->ev);
		driver()->cuCtxPopCurrent_v2(&prev);
	}
	fp_free(ev);
}

/* ---- the folder's row of the vendor table ---------------------------------------------------- */

static const struct fp__devmem_ops cuda_devmem = {
	.open = cuda_open,
	.zero = cuda_zero,
	.write = cuda_write,
	.read = cuda_read,
	.span_add = cuda_span_add,
	.span_remove = cuda_span_remove,
	.host_alloc = cuda_host_alloc,
	.host_free = cuda_host_free,
	.read_async = cuda_read_async,
	.event_wait = cuda_event_wait,
	.event_free = cuda_event_free,
};

/* CUPTI, the profiler backend, is not listed: a client registers it (fp_cupti_register()). */
const struct fp__vendor fp__vendor_cuda = {
	.name = "cuda",
	.backends = NULL,
	.devmem = &cuda_devmem,
};
