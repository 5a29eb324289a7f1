/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hooks cupti.c calls into cupti-metrics.c (include/flagprism/cupti-metrics.h has the
 * public side). Not a public header.
 */
#ifndef FP_CUPTI_METRICS_INTERNAL_H
#define FP_CUPTI_METRICS_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct fp_sink_session;
struct fp_sink_metadata;
struct fp_diag;
struct fp__cupti_cbdata;

/* Set while a session collects metrics: cupti.c calls the launch and claim hooks only then. */
extern atomic_bool fp__cupti_metrics_on;

/* Bit of fp_sink_metadata.reserved in the copies the backend keeps: estimates per program. */
#define FP__CUPTI_MD_PER_PROGRAM 1u

/*
 * cupti.c's lock held, after the backend is enabled: when metrics were requested, set the range
 * profiler up on the current context (or device 0's primary one) and start it for session `s`.
 * `lib` and `cuda` are the dlopen handles of libcupti and libcuda. FP_OK when nothing was
 * requested; FP_ENOTSUP (no permission: the message says how to enable counters; no range
 * profiler; no known metric), FP_EBUSY (another session collects), FP_EVENDOR, FP_ENOMEM.
 */
int fp__cupti_metrics_start(struct fp_sink_session *s, void *lib, void *cuda, struct fp_diag *diag);

/*
 * A launch API callback (enter or exit) on the launching thread, while fp__cupti_metrics_on.
 * `outermost`: the first call of a runtime -> driver nest (enter) or its last exit. `lctx`,
 * `callpath` and `md` (NULL: none; reserved & FP__CUPTI_MD_PER_PROGRAM: per program) are what
 * the thread handed over for this launch. Records the launch in launch order: auto range makes
 * one range per kernel of the profiled context, in that order (cupti-metrics.c says why this
 * path takes a lock and may intern a name).
 */
void fp__cupti_metrics_launch(int domain, uint32_t cbid, const struct fp__cupti_cbdata *d,
			      bool outermost, uint32_t lctx, uint32_t callpath,
			      const struct fp_sink_metadata *md);

/* What deliver() read from a kernel activity record, for the claim below. */
struct fp__cupti_metrics_rec {
	uint32_t correlation;
	uint32_t device;
	uint32_t kernel; /* name id */
	uint32_t grid[3];
	uint64_t stream;
	bool timed; /* start/end present (CUPTI 13.0 on GH100 gives 0/0 under the range profiler) */
	uint64_t begin_ns, end_ns; /* host clock */
};

/*
 * deliver_lock held: true when the record belongs to a launch the metrics session recorded; the
 * session files that kernel itself at stop (once, whether the record came, came without times,
 * or never came), so cupti.c must not file it to that session.
 */
bool fp__cupti_metrics_claim(const struct fp__cupti_metrics_rec *r);

/* True when `s` is the session collecting metrics. */
bool fp__cupti_metrics_session(const struct fp_sink_session *s);

/* cupti.c's lock held, after the session's records were flushed and it left the delivery
 * list: stop, decode, evaluate, file the kernels and their values to the session's tree, write
 * the vendor file and the metadata, tear down. */
void fp__cupti_metrics_stop(struct fp_sink_session *s, void *lib);

/* Tests: forget the request and the last status, tear down a session left running. */
void fp__cupti_metrics_reset(void);

#endif /* FP_CUPTI_METRICS_INTERNAL_H */
