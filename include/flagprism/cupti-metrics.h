/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hardware metrics per kernel, in-process: the CUPTI backend's range profiler mode (auto range +
 * kernel replay, CUPTI 13.0's cupti_range_profiler.h and profiler host API), and the rules that
 * turn per-launch metric values into values of call-tree nodes. A session asks for metrics with
 * fp_cupti_metrics_request() before fp_prof_start(backend "cupti"); the backend then profiles
 * every kernel of the current CUDA context (serialised, replayed once per pass), pairs range i
 * with the i-th kernel launch the launch callback saw in that context, files each such kernel
 * once (name from the launch, time from its activity record when it has times, else from
 * gpu__time_duration.sum) and hands the values to the profiler through the session's sink
 * (include/flagprism/sink.h: metrics()), which adds them to the kernels' nodes. docs/guide/profiler.md
 * ("Hardware metrics") is the user-facing description; docs/internals/cupti-backend.md says how it is
 * built. It does not import Nsight Compute files (that is
 * <flagprism/ncu.h>) and does not sample PCs.
 *
 * Tree names. A summed metric M becomes the inclusive metric "hw:M" (summed into parents);
 * a mean becomes "hw:M (pty)": a property holding, per node, the mean over that node's
 * launches weighted by each launch's kernel time (the time filed for the kernel; equal weights
 * when every duration is 0). "hw:launches" counts the launches that received metric values.
 * Thread safety: the request is not thread-safe against a starting session; the backend
 * serialises the rest with its own lock.
 */
#ifndef FLAGPRISM_CUPTI_METRICS_H
#define FLAGPRISM_CUPTI_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flagprism/export.h>
#include <flagprism/sink.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * metrics="default": DRAM bytes read and written, SM and memory throughput as % of peak, L2
 * hit rate, achieved occupancy (warps active as % of the peak sustained). Names valid on GH100
 * (sm_90) per the profiler host API; a GPU lacking one reports it as a degradation.
 */
#define FP_CUPTI_METRICS_DEFAULT                                            \
	"dram__bytes_read.sum,dram__bytes_write.sum,"                       \
	"sm__throughput.avg.pct_of_peak_sustained_elapsed,"                 \
	"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed," \
	"lts__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active"

#define FP_CUPTI_METRICS_MAX 32              /* metrics per session */
#define FP_CUPTI_METRIC_NAME_MAX 128         /* bytes per metric name, NUL included */
#define FP_CUPTI_METRICS_DEFAULT_RANGES 4096 /* kernels one session can profile */
#define FP_CUPTI_METRICS_MAX_RANGES (1u << 20)
#define FP_CUPTI_METRICS_REASONS 8 /* degradation reasons kept per session */

/** How the launches on one node combine. */
enum fp_cupti_metric_agg {
	FP_CUPTI_METRIC_SUM = 0,  /* counters (".sum"/".avg" rollups without a submetric) */
	FP_CUPTI_METRIC_MEAN = 1, /* ratios, percentages, rates, min/max rollups */
};

/**
 * Ask the next CUPTI session started in this process to collect `list`: metric names separated
 * by commas (spaces around them ignored), or "default" (FP_CUPTI_METRICS_DEFAULT), or NULL/""
 * to ask for none. "gpu__time_duration.sum" is always added when missing (the kernel time of a
 * profiled kernel whose activity record has no times), so a list holds at most
 * FP_CUPTI_METRICS_MAX - 1 others. `max_ranges` caps the kernels profiled per session (0: default; ranges past
 * it are dropped by CUPTI and reported). Names are checked for shape only here (letters, digits,
 * '_' and '.'; no duplicates); the GPU's own list is consulted at start. The request is consumed
 * by the next successful or failed start. FP_OK, FP_EINVAL (diag says which name), FP_ELIMIT.
 */
FP_EXTERN int fp_cupti_metrics_request(const char *list, size_t max_ranges, struct fp_diag *diag);

/** True while a session collects metrics (another one, or PC sampling, must refuse). */
FP_EXTERN bool fp_cupti_metrics_active(void);

/**
 * How a metric combines across launches. `metric_type` is CUPTI's CUpti_MetricType (0 counter,
 * 1 ratio, 2 throughput) or -1 when unknown; names decide the rest: a counter whose name ends
 * in ".sum" or ".avg" (rollup without submetric) is summed; everything else is a mean
 * (".pct", ".ratio", ".per_second", ".pct_of_peak_*", ".min", ".max", "launch__*").
 */
FP_EXTERN enum fp_cupti_metric_agg fp_cupti_metric_agg(const char *name, int metric_type);

/** The tree metric name: "hw:NAME" (sum) or "hw:NAME (pty)" (mean). Returns the length
 *  written (truncated to size - 1) or FP_EINVAL when size is 0 or name NULL. */
FP_EXTERN int fp_cupti_metric_tree_name(const char *name, enum fp_cupti_metric_agg agg, char *buf,
					size_t size);

/** What the last metrics session did (for tests, doctor and the Python layer). */
struct fp_cupti_metrics_status {
	bool collected;         /* a session with metrics ran to its stop */
	uint32_t metrics;       /* metrics collected (after dropping unsupported ones) */
	uint32_t passes;        /* replay passes per kernel the configuration needs */
	uint64_t ranges;        /* ranges CUPTI returned */
	uint64_t dropped;       /* ranges CUPTI dropped (counter data image full) */
	uint64_t kernels;       /* kernel launches of the profiled context (launch callback) */
	uint64_t records;       /* their kernel activity records that came */
	uint64_t records_timed; /* of which with start/end times */
	struct fp_sink_metrics_stats attach; /* what the sink attached (metrics()) */
	char chip[32];                       /* "GH100" */
	size_t nreasons;
	char reasons[FP_CUPTI_METRICS_REASONS][200]; /* degradation reasons */
};

FP_EXTERN void fp_cupti_metrics_last(struct fp_cupti_metrics_status *out);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_CUPTI_METRICS_H */
