/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internals of the CUPTI PC-sampling collector (cupti-pcsampling.c), shared with cupti.c and the
 * unit tests: the sample aggregator (PC records -> counts per launch, cubin, function, PC and
 * stall reason; cubins -> line tables; delivery to the sink) and the CUPTI driver
 * (enable, configure, drain, disable) working through a table of function pointers, so tests
 * can drive it without a libcupti. Not a public header.
 */
#ifndef FP_CUPTI_PCS_INTERNAL_H
#define FP_CUPTI_PCS_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flagprism/sink.h>
#include <flagprism/status.h>

#include "backend/cuda/cupti-pcs-abi.h"

#define FP__PCS_MAX_REASONS 256u
#define FP__PCS_MAX_CUBINS 4096u
#define FP__PCS_DEFAULT_MAX_ENTRIES ((size_t)1 << 20) /* (launch, PC, reason) counters */
/* PC records per GetData; Disable copies what CUPTI still holds into this buffer and discards
 * what does not fit, so it is sized for a session's distinct PCs (~380 bytes each with 40
 * reasons) */
#define FP__PCS_DEFAULT_COLLECT_PCS 16384u
#define FP__PCS_MAX_KERNEL_NODES ((size_t)1 << 20) /* (function, kernel node) pairs noted */
#define FP__PCS_MAX_SPLIT 64u /* nodes one function's samples are split among (largest first) */

/* Frame names of samples that cannot be put on a source line (never dropped). */
#define FP__PCS_NO_LINE "<no line info>"       /* the cubin has no line for this PC */
#define FP__PCS_NO_CUBIN "<unknown cubin>"     /* no cubin with this CRC was registered */
#define FP__PCS_NO_LAUNCH FP_SINK_PC_NO_LAUNCH /* no kernel node for the correlation */

/* The stall-reason prefix CUPTI gives every reason; metric names drop it for "stalled_". */
#define FP__PCS_REASON_PREFIX "smsp__pcsamp_warps_issue_stalled_"

struct fp__pcs_stats {
	uint64_t total_samples;   /* CUPTI's totalSamples, summed over drains */
	uint64_t dropped_samples; /* CUPTI's droppedSamples (hardware backpressure) */
	uint64_t nonuser_samples; /* CUPTI's nonUsrKernelsTotalSamples (no PC records) */
	uint64_t pc_records;      /* PC records read */
	uint64_t samples;        /* samples kept (issue-stall reasons, not the _not_issued twins) */
	uint64_t table_full;     /* samples not counted: counter table full (or no memory) */
	uint64_t unfiled;        /* counted samples not filed into the tree (tree caps, memory) */
	uint64_t bad_records;    /* PC records rejected: unknown reason index, no function name */
	uint64_t hw_buffer_full; /* drains that found the hardware buffer full */
	uint64_t drains;         /* GetData calls that returned data */
	uint64_t kernels_unnoted; /* launches fp__pcs_note_kernel could not keep (caps, memory) */
	/* set by fp__pcs_attribute(): samples put on a line, and where the others went */
	uint64_t on_lines, no_line, no_cubin, no_launch;
};

/* The aggregator. Not thread-safe: its owner serialises calls. */
struct fp__pcs;

/** A new aggregator keeping at most `max_entries` counters (0: the default) and interning
 *  function names through `sink`. NULL: no sink, or memory. */
struct fp__pcs *fp__pcs_new(size_t max_entries, const struct fp_sink *sink);
void fp__pcs_free(struct fp__pcs *p);

/**
 * The stall reasons CUPTI reported (cuptiPCSamplingGetStallReasons): `n` indexes and names.
 * Must precede fp__pcs_add_data(). FP_OK, FP_EINVAL (n 0 or over FP__PCS_MAX_REASONS, a NULL
 * name), FP_ENOMEM.
 */
int fp__pcs_set_reasons(struct fp__pcs *p, size_t n, const uint32_t *index,
			const char *const *names);

/** Number of reasons, and the metric name ("stalled_<reason>") of reason slot i. */
size_t fp__pcs_reason_count(const struct fp__pcs *p);
const char *fp__pcs_reason_metric(const struct fp__pcs *p, size_t i);

/**
 * Register the cubin whose cuptiGetCubinCrc() is `crc` and read its line table (the bytes are
 * not kept). A CRC already registered is a no-op. FP_OK; the line reader's errors (diag says
 * where; the cubin is then registered without lines so its samples go to "<no line info>");
 * FP_ELIMIT (FP__PCS_MAX_CUBINS); FP_ENOMEM.
 */
int fp__pcs_add_cubin(struct fp__pcs *p, uint64_t crc, const void *cubin, size_t size,
		      struct fp_diag *diag);
bool fp__pcs_has_cubin(const struct fp__pcs *p, uint64_t crc);

/**
 * Count one buffer of parsed PC-sampling data: the first min(totalNumPcs, collectNumPcs)
 * records of d->pPcData (CUDA 12.4+ layout: 64-byte records with correlationId), and the
 * buffer's totals. FP_OK, FP_EINVAL (no reasons set, NULL data), FP_EFORMAT (records announced
 * but no array).
 */
int fp__pcs_add_data(struct fp__pcs *p, const struct fp__cupti_pcs_data *d);

/**
 * A launch of function `func` (fp_prof name id, as in the PC records' functionName) ran `ns` of
 * GPU time and was filed under call-tree node `node`. Continuous mode has no correlation ids:
 * fp__pcs_attribute() splits a function's samples among its nodes in proportion to their GPU
 * time. FP_OK, FP_EINVAL, FP_ELIMIT (FP__PCS_MAX_KERNEL_NODES), FP_ENOMEM (both counted in
 * kernels_unnoted).
 */
int fp__pcs_note_kernel(struct fp__pcs *p, uint32_t func, uint32_t node, uint64_t ns);

/** The kernel node of the launch with CUPTI correlation id `corr`, or FP_SINK_NO_NODE. */
typedef uint32_t (*fp__pcs_node_fn)(void *arg, uint32_t corr);

/**
 * Deliver every counted sample through session `s`'s sink (pc_reasons(), then pc_sample() per
 * count): under the kernel node `node_fn` gives for its correlation
 * or, for records without one (continuous mode), split among the nodes fp__pcs_note_kernel()
 * noted for the function (metrics then hold fractions); ROOT / FP__PCS_NO_LAUNCH / <function>
 * when neither knows a node; one child per source line ("<file>:<line>"
 * with the directory when the line table has one), or FP__PCS_NO_LINE / FP__PCS_NO_CUBIN.
 * Metrics: num_samples, num_stalled_samples (all but "selected"), stalled_<reason> (the
 * _not_issued twins too, as stalled_<reason>_not_issued; they are not added to num_samples).
 * The counters are consumed (a second call adds nothing). FP_OK or the sink's first error
 * (FP_ENOMEM, FP_ELIMIT); samples that could not be filed are counted in `unfiled`.
 */
int fp__pcs_attribute(struct fp__pcs *p, struct fp_sink_session *s, fp__pcs_node_fn node_fn,
		      void *arg);

void fp__pcs_get_stats(const struct fp__pcs *p, struct fp__pcs_stats *out);

/* ---- the CUPTI driver ------------------------------------------------------------------------ */

struct fp__pcs_fns {
#define FP__PCS_FN_MEMBER(req, name, params) fp__cupti_##name##_fn name;
	FP__CUPTI_PCS_FUNCS(FP__PCS_FN_MEMBER)
#undef FP__PCS_FN_MEMBER
	fp__cupti_cuptiGetResultString_fn result_string; /* may be NULL */
};

/** Resolve the PC-sampling functions in the dlopen'd libcupti `lib`. FP_OK or FP_ENOTSUP. */
int fp__pcs_bind(void *lib, struct fp__pcs_fns *f, struct fp_diag *diag);

struct fp__pcs_config {
	uint32_t sampling_period; /* 2^N cycles, N in 5..31; 0: CUPTI's default */
	bool serialized;          /* KERNEL_SERIALIZED instead of CONTINUOUS (launch ids) */
	size_t collect_pcs;       /* PC records per GetData (0: default) */
	size_t max_entries;       /* aggregator counters (0: default) */
};

/* What CUPTI answered, for a session that collects nothing to explain itself. Statuses are
 * CUptiResult values (0: success), FP__PCS_NOT_CALLED where the call was not made. */
#define FP__PCS_NOT_CALLED (-1)
struct fp__pcs_calls {
	int enable, num_reasons, reasons, config, disable, last_getdata;
	int config_attr;          /* the first attribute CUPTI refused (its type), 0: none */
	int config_attr_status;   /* and its attributeStatus */
	uint64_t getdata;         /* GetData calls */
	uint64_t getdata_errors;  /* of which failed (not counting OUT_OF_MEMORY: buffer full) */
	uint64_t getdata_records; /* of which returned PC records */
	uint64_t max_remaining;   /* the largest remainingNumPcs seen */
};

/* One context being sampled. */
struct fp__pcs_session {
	struct fp__pcs_fns f;
	fp__cu_context ctx;
	struct fp__pcs_config cfg;
	struct fp__pcs *agg;
	struct fp__cupti_pcs_data data;
	struct fp__cupti_pcs_pc *pcs;
	struct fp__cupti_pcs_stall *stalls; /* collect_pcs x reasons */
	size_t nreasons;
	bool enabled;
	struct fp__pcs_calls calls;
};

/**
 * Enable PC sampling on `ctx`, read the stall reasons, configure (every reason, period, mode,
 * parsed output, our data buffer) and make the aggregator (names interned through `sink`).
 * FP_OK; FP_ENOTSUP with a message
 * saying how to enable profiling counters (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) or that the
 * device cannot sample; FP_EBUSY (another profiling session holds the context); FP_EVENDOR;
 * FP_ENOMEM. On failure everything is undone.
 */
int fp__pcs_session_start(struct fp__pcs_session *ps, const struct fp__pcs_fns *f,
			  const struct fp_sink *sink, fp__cu_context ctx,
			  const struct fp__pcs_config *cfg, struct fp_diag *diag);

/** Drain what CUPTI has (GetData until nothing remains) into the aggregator. FP_OK/FP_EVENDOR. */
int fp__pcs_session_drain(struct fp__pcs_session *ps);

/** Drain, disable (CUPTI then hands its last PCs to our buffer: counted too), free buffers.
 * The aggregator stays (fp__pcs_session_release frees it). */
int fp__pcs_session_stop(struct fp__pcs_session *ps);
void fp__pcs_session_release(struct fp__pcs_session *ps);

/* ---- the backend's "pcsampling" mode (cupti.c calls these) --------------------------------- */

struct fp_sink_session;

/* True while a session samples: cupti.c's launch and resource callbacks test it first. */
extern atomic_bool fp__cupti_pcs_on;

/**
 * cupti.c's lock held, after the metrics start: if PC sampling was requested, bind the API in
 * `lib`, pick the current CUDA context (`cuda`: libcuda's handle) and start sampling it for `s`.
 * FP_OK when not requested. Errors are the driver's (fp__pcs_session_start()), FP_EBUSY when
 * hardware metrics are active or another session samples.
 */
int fp__cupti_pcs_start(struct fp_sink_session *s, void *lib, void *cuda, struct fp_diag *diag);

/** deliver_lock held: the kernel record of `corr` (function name id `kernel`, `ns` of GPU time)
 * was filed to `node` of session `s`. */
void fp__cupti_pcs_note(struct fp_sink_session *s, uint32_t corr, uint32_t node, uint32_t kernel,
			uint64_t ns);

/** Resource callback MODULE_LOADED: copy the module's cubin (resourceDescriptor). */
void fp__cupti_pcs_module(const void *resource_descriptor);

/** Launch API exit on the launching thread: drains what CUPTI has (at most every 50 ms). */
void fp__cupti_pcs_after_launch(void);

/** cupti.c's lock held, after the activity flush: drain and file the samples into s's tree. */
int fp__cupti_pcs_flush(struct fp_sink_session *s);

/** cupti.c's lock held, `s` stops: drain, disable, file the rest, keep the stats. */
void fp__cupti_pcs_stop(struct fp_sink_session *s);

/** fp__cupti_reset(): forget everything (no session may sample). */
void fp__cupti_pcs_reset(void);

#endif /* FP_CUPTI_PCS_INTERNAL_H */
