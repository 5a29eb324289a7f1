/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Debugger's launch pipeline on a device: instrumented launches do not wait for their records.
 * A bounded pool holds the record buffers of the launches in flight (a device pool the caller
 * owns, and a page-locked host pool of the same size here, at the same offsets); each launch
 * reserves a slice, has it zeroed and its header written on its stream, launches, and submits the
 * slice: its read back is queued on the stream, and one background thread waits for it, decodes
 * it, writes the reports (by default only for launches with findings) and accounts for the
 * launch in the summary. The host synchronises only when the pool is full (it then waits for the
 * oldest launch), and when the caller drains the pipeline (at exit, or to take results).
 *
 * A launch whose buffer does not fit the pool is the caller's to run synchronously. A device
 * error seen while waiting (a faulting kernel) fails that launch and every later one on the
 * device with the driver's name for it; the launches before it are reported. Thread-safe; the
 * background thread never calls back into the caller.
 */
#ifndef FLAGPRISM_DEBUG_PIPE_H
#define FLAGPRISM_DEBUG_PIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flagprism/debug-summary.h>
#include <flagprism/debug.h>
#include <flagprism/export.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fp_dbg_pipe; /* opaque */

struct fp_dbg_pipe_options {
	size_t pool_bytes;     /* bytes of the pool (host and device); at least 4096 */
	uint64_t device_pool;  /* device address of the caller's device pool, or 0: host only
				* (the caller fills the host slice itself; tests, other backends) */
	unsigned report_flags; /* FP_DBG_REPORT_* for every launch */
	uint64_t max_reports;  /* per-launch report files at most (0: no limit); findings of
				* later launches still reach the summary */
	size_t max_results;    /* finished results kept until taken (older ones are dropped and
				* counted); 0: 4096 */
};

/**
 * A new pipeline feeding `summary` (borrowed: it must outlive the pipeline). Allocates the host
 * pool (page-locked through <flagprism/devmem.h> when `device_pool` is set) and starts the
 * background thread. FP_OK, FP_EINVAL, FP_ENOMEM, FP_ENOTSUP/FP_EVENDOR (driver).
 */
FP_EXTERN int fp_dbg_pipe_new(struct fp_dbg_pipe **out, struct fp_dbg_summary *summary,
			      const struct fp_dbg_pipe_options *opt, struct fp_diag *diag);

/**
 * Drain, stop the thread and free everything (results not taken are lost). NULL: no-op. A
 * page-locked host pool is kept as the process's one spare instead (the larger one when there
 * are two), and the next fp_dbg_pipe_new() whose pool fits in it takes it: page-locking is slow,
 * and a program that switches the Debugger on and off would pay it at every switch.
 */
FP_EXTERN void fp_dbg_pipe_free(struct fp_dbg_pipe *p);

/** Free the spare page-locked pool, if any; returns its bytes (0: there was none). */
FP_EXTERN size_t fp_dbg_pipe_release_spare(void);

/**
 * Reserve `bytes` of the pool for one launch's record buffer: `*offset` is the byte offset in the
 * pool (device and host alike). Waits while the pool is full, until enough older launches are
 * done. FP_ELIMIT when `bytes` exceeds the pool (run that launch without the pipeline).
 */
FP_EXTERN int fp_dbg_pipe_reserve(struct fp_dbg_pipe *p, size_t bytes, size_t *offset,
				  struct fp_diag *diag);

/** Give back a reserved slice that no launch used. */
FP_EXTERN void fp_dbg_pipe_unreserve(struct fp_dbg_pipe *p, size_t offset);

/**
 * Prepare the reserved slice for a launch on `stream`: zero its `bytes` and write `header`
 * (`header_len` bytes) at its start, both queued on the stream (device pools), or done at once
 * (host only). FP_OK or a devmem error.
 */
FP_EXTERN int fp_dbg_pipe_prepare(struct fp_dbg_pipe *p, size_t offset, size_t bytes,
				  const void *header, size_t header_len, uint64_t stream,
				  struct fp_diag *diag);

/** The host memory of a reserved slice (host-only pipelines fill it themselves). Borrowed. */
FP_EXTERN void *fp_dbg_pipe_host(struct fp_dbg_pipe *p, size_t offset);

/**
 * Copy `len` bytes into the reserved slice at `offset` (a host record buffer, for a host-only
 * pipeline). FP_EINVAL when no slice is reserved there or it is shorter than `len`.
 */
FP_EXTERN int fp_dbg_pipe_fill(struct fp_dbg_pipe *p, size_t offset, const void *data, size_t len,
			       struct fp_diag *diag);

/* One launch handed to the pipeline; every string is copied. */
struct fp_dbg_pipe_job {
	const char *kernel, *source_file; /* for the summary */
	const char *site_table;           /* JSON */
	size_t site_len;
	const char *launch_json; /* docs/formats/debugger-report-schema.md, "Launch JSON" */
	size_t launch_len;
	uint64_t launch_index; /* reserved with fp_dbg_summary_reserve() */
};

/**
 * Submit the launch whose record buffer is the slice at `offset` (`bytes` long): for a device
 * pool the read back is queued on `stream` now; the rest happens in the background. The slice
 * goes back to the pool when the job is done. FP_OK, FP_ENOMEM, FP_EINVAL, devmem errors (then
 * the slice is given back and nothing was queued).
 */
FP_EXTERN int fp_dbg_pipe_submit(struct fp_dbg_pipe *p, size_t offset, size_t bytes,
				 uint64_t stream, const struct fp_dbg_pipe_job *job,
				 struct fp_diag *diag);

/** Wait until every submitted launch is done. */
FP_EXTERN void fp_dbg_pipe_drain(struct fp_dbg_pipe *p);

/* A finished launch. */
struct fp_dbg_pipe_result {
	uint64_t launch_index;
	int status;    /* FP_OK, FP_EOVERFLOW (reports written, level-2 artifacts refused), or
			 * why the launch could not be reported (decoding failed, device error) */
	char *message; /* the diagnostic for a status other than FP_OK, or NULL */
	char *kernel;
	size_t nfindings;
	struct fp_dbg_outputs
		out; /* paths written (none for a clean launch in findings-only mode) */
};

/**
 * Take the finished results, in submission order: *results (free with
 * fp_dbg_pipe_results_free()) and the count returned. Does not wait.
 */
FP_EXTERN size_t fp_dbg_pipe_take(struct fp_dbg_pipe *p, struct fp_dbg_pipe_result **results);

FP_EXTERN void fp_dbg_pipe_results_free(struct fp_dbg_pipe_result *results, size_t n);

struct fp_dbg_pipe_stats {
	uint64_t submitted, done, failed; /* launches */
	uint64_t pool_waits;              /* reservations that had to wait for the pool */
	uint64_t results_dropped;         /* finished results dropped before anyone took them */
	uint64_t reports_suppressed;      /* launches with findings over max_reports */
	size_t pool_bytes, in_flight_bytes;
};

FP_EXTERN void fp_dbg_pipe_stats(struct fp_dbg_pipe *p, struct fp_dbg_pipe_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_DEBUG_PIPE_H */
