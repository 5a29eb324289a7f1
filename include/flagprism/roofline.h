/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where a kernel node sits on its device's roofline: achieved FLOP/s and DRAM bytes/s (from
 * measured hardware counters where the profile has them, else launch metadata, else FlagPrism's
 * IR estimates), arithmetic intensity, the attainable roof min(peak FLOP/s, intensity x peak
 * bandwidth) from the device table's peaks (fp_view_peaks_of()), the share of that roof reached,
 * and which roof bounds it. `flagprism view --roofline` renders it. It reads a finalized tree;
 * it never changes one. docs/cli/flagprism-view.md ("Roofline") lists the sources in order.
 */
#ifndef FLAGPRISM_ROOFLINE_H
#define FLAGPRISM_ROOFLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <flagprism/calltree.h>
#include <flagprism/export.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Where a number came from. */
enum fp_roofline_source {
	FP_ROOFLINE_NONE = 0,     /* no number */
	FP_ROOFLINE_COUNTERS = 1, /* in-process hardware counters ("hw:" metrics) */
	FP_ROOFLINE_NCU = 2,      /* Nsight Compute ("ncu:" metrics) */
	FP_ROOFLINE_METADATA = 3, /* launch_metadata ("flops*", "bytes") */
	FP_ROOFLINE_ESTIMATE = 4, /* IR estimates ("est_flops", "est_bytes") */
};

/** One node's roofline position. NaN where a number cannot be had. */
struct fp_roofline_point {
	double seconds;      /* the node's kernel time */
	double flops, bytes; /* work and DRAM traffic */
	enum fp_roofline_source flops_src, bytes_src;
	int flops_width; /* operand width of the peak used: 8, 16, 32 or 64 */
	double flop_per_s, byte_per_s;
	double intensity; /* flops / bytes (FLOP per byte) */
	bool peaks_known;
	double peak_flops, peak_bytes_per_s;
	double ridge;       /* peak_flops / peak_bytes_per_s: where the roofs meet */
	double roof;        /* attainable FLOP/s at this intensity */
	double pct_of_roof; /* 100 x flop_per_s / roof (memory-bound: byte/s vs peak) */
	const char *bound;  /* "memory", "compute" or "unknown" */
};

/** Name of a source: "counters", "ncu", "metadata", "estimate", "-". */
FP_EXTERN const char *fp_roofline_source_name(enum fp_roofline_source s);

/**
 * The roofline position of `node` of the finalized tree `t`. Work: 2 x FFMA + FADD + FMUL
 * thread instructions (fp32, from "hw:" then "ncu:" smsp__sass_thread_inst_executed_op_*
 * metrics), else launch metadata flops (the widest-count width's peak), else est_flops (16-bit
 * peak, as `util`). Traffic: dram__bytes_read.sum + dram__bytes_write.sum ("hw:" then "ncu:"),
 * else "bytes", else "est_bytes". Time: "time (ns)" (inclusive). Peaks from the node's
 * device_type/device_id. FP_OK; FP_EINVAL (NULL, unknown node); FP_ENOENT when the node has no
 * time.
 */
FP_EXTERN int fp_roofline_point(const struct fp_calltree *t, uint32_t node,
				struct fp_roofline_point *out);

/**
 * Peak FP32 FLOP/s of the CUDA cores (FFMA, not the tensor cores) of device (type, index) of
 * tree `t`'s device table: SMs x FP32 lanes per SM x 2 x clock (lanes: 64 on sm_80, 128 on
 * sm_89, sm_90 and sm_100). NaN when the arch is another or the table lacks num_sms or
 * clock_rate. A NULL `type` takes the first device type with that index.
 */
FP_EXTERN double fp_roofline_fp32_peak(const struct fp_calltree *t, const char *type,
				       const char *index);

/**
 * A table of the `max_rows` kernel nodes (nodes with a device_id) that take the most time,
 * largest first: name, time, GFLOP/s, GB/s, FLOP/byte, roof, % of roof, bound and sources,
 * after a line per device with its peaks and ridge point. C++ kernel names are shown short
 * (fp_calltree_node_display()), in full with `full_names`; a name longer than the column gets
 * a line of its own above its row. FP_OK, FP_EIO (write error), FP_ENOMEM.
 */
FP_EXTERN int fp_roofline_render(const struct fp_calltree *t, size_t max_rows, bool full_names,
				 FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_ROOFLINE_H */
