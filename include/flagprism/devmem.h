/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Moving the bytes of FlagPrism's own device buffers (the Debugger's record buffers, the
 * timelines' buffers) through the vendor driver directly: zero a buffer, write its header, read it
 * back. The Python side allocates the buffer with the framework (so the framework's allocator
 * owns it) but never runs a framework operator on it: an operator could be served by a Triton
 * kernel library (FlagGems' torch.zeros is a Triton kernel), which the Debugger would then
 * instrument and the Profiler record as the user's work. These calls launch no kernel.
 *
 * Each vendor lends its own implementation through the library's vendor table
 * (docs/internals/backend-adaptation.md), and the first vendor whose driver opens serves every
 * call. Today that is NVIDIA's driver API (libcuda.so.1 through dlopen;
 * FLAGPRISM_CUDA_DRIVER_PATH overrides the path, for tests). Callers fall back to the framework,
 * inside flagprism._intercept.internal(), where none opens.
 *
 * Addresses and streams are the driver's (CUdeviceptr, CUstream) as integers; 0 is the default
 * stream. The calls are ordered on `stream` after the work already queued there. Thread-safe.
 */
#ifndef FLAGPRISM_DEVMEM_H
#define FLAGPRISM_DEVMEM_H

#include <stddef.h>
#include <stdint.h>

#include <flagprism/export.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Load the driver (once). FP_OK, or FP_ENOTSUP with `diag` saying why (no driver library, a
 * missing entry point, cuInit failed).
 */
FP_EXTERN int fp_devmem_open(struct fp_diag *diag);

/** Set `nbytes` bytes at device address `dptr` to zero, asynchronously on `stream`. */
FP_EXTERN int fp_devmem_zero(uint64_t dptr, size_t nbytes, uint64_t stream, struct fp_diag *diag);

/** Copy `n` host bytes to `dptr` on `stream`; returns once `src` may be reused. */
FP_EXTERN int fp_devmem_write(uint64_t dptr, const void *src, size_t n, uint64_t stream,
			      struct fp_diag *diag);

/**
 * Copy `n` bytes from `dptr` to host memory `dst`, after everything queued on `stream`, and wait
 * for the copy. FP_EVENDOR when the device reports an error (a kernel earlier on the stream
 * faulted, say): `diag` carries the driver's name for it.
 */
FP_EXTERN int fp_devmem_read(void *dst, uint64_t dptr, size_t n, uint64_t stream,
			     struct fp_diag *diag);

/**
 * Remember the context that owns the `size` bytes at `base` (an allocation that lives until
 * fp_devmem_span_remove()): later calls on addresses inside skip the driver's pointer query, and
 * make the context current only where the calling thread has another. At most 16 spans:
 * FP_ELIMIT beyond (calls then query as before); FP_EINVAL for memory the driver does not know.
 */
FP_EXTERN int fp_devmem_span_add(uint64_t base, size_t size, struct fp_diag *diag);

/** Forget the span at `base` (before its memory is freed). Unknown bases are a no-op. */
FP_EXTERN void fp_devmem_span_remove(uint64_t base);

/* ---- asynchronous reads (the Debugger's pipeline: no host stall per launch) ------------------- */

/**
 * Page-locked host memory of `n` bytes (so that reads into it are truly asynchronous), usable
 * from every context; `dptr` is any device address of the context to allocate in. Free it with
 * fp_devmem_host_free(). FP_OK, FP_ENOTSUP (no driver), FP_EVENDOR, FP_EINVAL.
 */
FP_EXTERN int fp_devmem_host_alloc(uint64_t dptr, size_t n, void **out, struct fp_diag *diag);

/** Free memory from fp_devmem_host_alloc(). NULL is a no-op. */
FP_EXTERN void fp_devmem_host_free(void *p);

struct fp_devmem_event; /* opaque: the point on a stream after an asynchronous read */

/**
 * Queue a copy of `n` bytes from `dptr` into host memory `dst` (from fp_devmem_host_alloc()) on
 * `stream`, after the work already queued there, and return at once with *ev set to the point
 * where it completes (wait for it with fp_devmem_event_wait(), free it with
 * fp_devmem_event_free()). `dst` must not be touched until then. *ev is NULL for a new event,
 * or an earlier call's event to record again (after its wait): the driver's event is reused. On
 * failure a new event is not made (*ev NULL); one given stays the caller's.
 */
FP_EXTERN int fp_devmem_read_async(void *dst, uint64_t dptr, size_t n, uint64_t stream,
				   struct fp_devmem_event **ev, struct fp_diag *diag);

/**
 * Wait, from any thread, until the event's stream has reached it. FP_OK, or FP_EVENDOR with the
 * driver's name for the error (a kernel queued before it faulted, say).
 */
FP_EXTERN int fp_devmem_event_wait(struct fp_devmem_event *ev, struct fp_diag *diag);

/** Free an event (after waiting for it, or when giving up on it). NULL is a no-op. */
FP_EXTERN void fp_devmem_event_free(struct fp_devmem_event *ev);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_DEVMEM_H */
