/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The profile viewer as a library: read a profile quickly (ours or Proton's Hatchet file, plus
 * our meta file beside it), turn metric specs such as "time/ms", "gbyte/s" or "util" into
 * columns, filter and format the call tree, and render it as text; also the comparison of two
 * profiles ("other - this" per node). The `flagprism view` and `flagprism diff` commands are thin
 * clients of it, and the Python extension can use it the same way. It does not write profiles
 * (see calltree.h for merge, diff and the Hatchet writer) and it never prints anywhere but the
 * FILE * it is given.
 *
 * Metric specs (case-insensitive; a unit in parentheses is ignored, so "time" names
 * "time (ns)"), documented in full in docs/cli/flagprism-view.md:
 *   NAME                     a metric of the file: its inclusive total, or its own value for
 *                            exclusive, min/max and numeric property metrics
 *   NAME/s|ms|us|ns          a metric whose unit is a time unit, converted ("time/ms")
 *   avg_NAME/s|ms|us|ns      the same divided by the node's "count" total ("avg_time/us")
 *   [g|t]flop[8|16|32|64]/s  flops metric(s) per second of "time" ("tflop16/s")
 *   [g|t]byte/s              "bytes" per second of "time"
 *   est_[g|t]flop/s, est_[g|t]byte/s   the same from FlagPrism's IR estimates est_flops/est_bytes
 *                            ([g|t]byte/s and [g|t]flop/s use them, marked `estimated`, when
 *                            the profile has no measured bytes or flops)
 *   NAME/%                   share of the root (inclusive) or of the sum over nodes (others)
 *   util, est_util           fraction of the device's peak (see struct fp_view_peaks)
 * Values that cannot be computed (no device peaks, a zero time, a missing count) are NaN and
 * render as "n/a".
 *
 * Not thread-safe per object; distinct objects may be used from distinct threads.
 */
#ifndef FLAGPRISM_VIEW_H
#define FLAGPRISM_VIEW_H

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

/* ---- reading a profile ---------------------------------------------------------------------- */

/** What fp_view_read_profile() learned besides the tree. Caller-owned; filled by the call. */
struct fp_view_read_info {
	uint64_t bytes; /* size of the Hatchet text read */
	struct fp_hatchet_info
		hatchet;        /* as the Hatchet reader reports it (fast path, truncated) */
	bool has_meta;          /* a FlagPrism meta file (<stem>.meta.json) was read */
	bool incomplete;        /* the meta file says the session did not end cleanly */
	char reasons[512];      /* the meta file's incomplete_reasons, "; "-separated, or "" */
	char meta_warning[256]; /* why a meta file beside the profile was ignored, or "" */
};

/**
 * Read the profile at `path`: a Hatchet file (`x.hatchet`, or any name), or a FlagPrism meta
 * file (`x.meta.json`, then `x.hatchet` is read). When `<stem>.meta.json` exists beside the
 * Hatchet file it is read for its "incomplete" flag and reasons (a meta file that cannot be
 * used only sets info->meta_warning). The text is parsed by fp_calltree_parse_hatchet() with
 * `flags` (FP_HATCHET_*), so errors are its, plus FP_EIO (the file cannot be read: "cannot open
 * '<path>': <reason>", with the meta file's reasons appended when it calls the profile
 * incomplete) and FP_ELIMIT (over 4 GiB). For errors inside the text diag->msg starts with
 * "<path>:<line>:<col>: "; an empty file is an FP_EFORMAT at 1:1. A text that ends early (or an
 * empty file) sets info->hatchet.truncated.
 */
FP_EXTERN int fp_view_read_profile(const char *path, const struct fp_calltree_limits *lim,
				   unsigned flags, struct fp_calltree **out,
				   struct fp_view_read_info *info, struct fp_diag *diag);

/* ---- device peaks --------------------------------------------------------------------------- */

/** Peak throughput of one device, for `util`. */
struct fp_view_peaks {
	bool known;         /* false: no peaks (CPU/interpreter, unknown arch, missing fields) */
	double flops[4];    /* peak FLOP/s for 8-, 16-, 32- and 64-bit operands */
	double bytes_per_s; /* peak DRAM bandwidth in bytes/s */
	char arch[16];      /* normalised arch ("90", "100", "gfx942") or "" */
	char note[128];     /* when !known: why ("CPU 0 (interpreter) has no device peaks") */
};

/**
 * Peaks from a device description as Hatchet files carry it (clock rates in kHz, bus width in
 * bits). CUDA: arch 80 (A100), 89 (L4/RTX 4090 class), 90 (H100/H200, scaled by num_sms and
 * clock_rate), 100 (B200, from num_sms and clock_rate); "sm_90", "90a" are accepted. Bandwidth
 * is 2 * bus_width * memory_clock_rate * 1e3 / 8. HIP: gfx90a, gfx942, gfx950. Anything else
 * (type "CPU", arch "interpreter") gives known = false and a note. Pass NaN for absent
 * numbers. Never fails.
 */
FP_EXTERN void fp_view_peaks_compute(const char *type, const char *index, const char *arch,
				     double num_sms, double clock_khz, double bus_width,
				     double memory_clock_khz, struct fp_view_peaks *out);

/** Peaks of device (type, index) of a tree's device table; known = false when absent. A NULL
 *  `type` takes the first device type that has `index` (nodes without a device_type). */
FP_EXTERN void fp_view_peaks_of(const struct fp_calltree *t, const char *type, const char *index,
				struct fp_view_peaks *out);

/* ---- metric specs --------------------------------------------------------------------------- */

enum fp_view_op {
	FP_VIEW_OP_RAW,      /* a metric as stored (total for inclusive ones) */
	FP_VIEW_OP_SCALE,    /* src[0] * scale: time units */
	FP_VIEW_OP_AVG,      /* src[0] * scale / src[1] (count) */
	FP_VIEW_OP_RATE,     /* (src[1] + ... ) / (src[0] * time_scale) / scale */
	FP_VIEW_OP_PERCENT,  /* 100 * src[0] / denominator */
	FP_VIEW_OP_UTIL,     /* measured flops/bytes vs peaks; estimates where none measured */
	FP_VIEW_OP_EST_UTIL, /* est_flops/est_bytes vs peaks */
};

#define FP_VIEW_MAX_SRC 10
#define FP_VIEW_NONE UINT32_MAX

/* Source slots of UTIL and EST_UTIL (src[] layout; absent metrics are FP_VIEW_NONE). */
enum {
	FP_VIEW_U_TIME,
	FP_VIEW_U_FLOPS8,
	FP_VIEW_U_FLOPS16,
	FP_VIEW_U_FLOPS32,
	FP_VIEW_U_FLOPS64,
	FP_VIEW_U_BYTES,
	FP_VIEW_U_EST_FLOPS,
	FP_VIEW_U_EST_BYTES,
	FP_VIEW_U_DEVICE_TYPE,
	FP_VIEW_U_DEVICE_ID,
	FP_VIEW_U_COUNT
};

/**
 * A parsed metric spec, bound to one tree's metric ids. Caller-owned plain data: copy freely.
 * src[] are metric ids (FP_VIEW_NONE for "absent"); UTIL and EST_UTIL use the FP_VIEW_U_*
 * layout. est_flops are compared with the 16-bit peak (dense FP16/BF16 tensor throughput):
 * the estimate does not say which unit runs them.
 */
struct fp_view_metric {
	char label[64]; /* the column header: the spec as written, or the metric's name */
	enum fp_view_op op;
	uint32_t nsrc;
	uint32_t src[FP_VIEW_MAX_SRC];
	double scale;       /* see enum fp_view_op */
	double time_scale;  /* seconds per unit of the time metric (RATE, UTIL) */
	bool exclusive_sum; /* PERCENT of a non-inclusive metric: share of the sum over nodes */
	bool summed;        /* src[0] is summed (inclusive or exclusive): a node without a value
			       reads 0 in RAW, SCALE and AVG; otherwise it is n/a */
	bool estimated;     /* a measured rate ([g|t]byte/s, [g|t]flop/s) whose measured metric
			       the profile lacks (no launch_metadata): computed from the IR
			       estimate (est_bytes, est_flops) instead; views add a note */
};

/**
 * Parse one spec against tree `t` (finalized or not). FP_OK; FP_EINVAL for an unknown or
 * unusable spec, with diag->msg naming the problem and the metrics the file offers. `len` is the
 * spec's length (specs need not be NUL-terminated).
 */
FP_EXTERN int fp_view_metric_parse(const struct fp_calltree *t, const char *spec, size_t len,
				   struct fp_view_metric *out, struct fp_diag *diag);

/**
 * The value of metric `m` at `node` of the (finalized) tree it was parsed against, from the
 * tree's own totals; NaN when it cannot be computed. PERCENT and UTIL walk the tree or the
 * device table on each call: for many nodes use a view instead. For tests and single lookups.
 */
FP_EXTERN double fp_view_metric_value(const struct fp_calltree *t, const struct fp_view_metric *m,
				      uint32_t node);

/* ---- names and numbers ---------------------------------------------------------------------- */

/** How frame names "path/file.py:function@line" are shown (Proton's -f choices). */
enum fp_view_format {
	FP_VIEW_FORMAT_FULL,               /* as recorded */
	FP_VIEW_FORMAT_FILE_FUNCTION_LINE, /* file.py:function@line (directories dropped) */
	FP_VIEW_FORMAT_FUNCTION_LINE,      /* function@line */
	FP_VIEW_FORMAT_FILE_FUNCTION,      /* file.py:function */
};

/** "full", "file_function_line", "function_line", "file_function" -> FP_OK; else FP_EINVAL. */
FP_EXTERN int fp_view_format_parse(const char *s, enum fp_view_format *out);

/**
 * Format frame name `name` (`len` bytes) into `buf` (NUL-terminated when `cap` > 0). Names that
 * are not of the form "file:function@line" (kernels, scopes) are copied unchanged. Returns the
 * full length of the formatted name, which may exceed `cap` - 1 (then `buf` holds a prefix).
 */
FP_EXTERN size_t fp_view_format_name(const char *name, size_t len, enum fp_view_format f, char *buf,
				     size_t cap);

/**
 * Format a value compactly and deterministically: "n/a" for NaN, "inf"/"-inf", integral values
 * below 1e15 as integers ("183000"), magnitudes in [1e-4, 1e15) rounded to four significant
 * digits but never to fewer than one decimal, then trailing zeros (and a bare point) dropped
 * ("12.35", "0.001235", "1234.6", "4000"), others as "1.235e-05". Returns the length written
 * (always < 32; `size` must be >= 32, else FP_EINVAL).
 */
FP_EXTERN int fp_view_format_number(double v, char *buf, size_t size);

/* ---- views ---------------------------------------------------------------------------------- */

#define FP_VIEW_MAX_COLUMNS 16
#define FP_VIEW_DEFAULT_DEPTH 100u

/** How children are ordered on screen. */
enum fp_view_sort {
	FP_VIEW_SORT_VALUE, /* first column, largest first (n/a last), then by name; in a
			       comparison the largest change first, whatever its sign */
	FP_VIEW_SORT_NAME,  /* bytewise by name, as the files store them */
};

/** What to show. Initialise with fp_view_options_init(), then change fields. Strings are
 *  borrowed for the duration of fp_view_new(). */
struct fp_view_options {
	const char *metrics; /* comma-separated specs; NULL or "" = time/ms and count, plus
				est_gbyte/s, est_tflop/s and util when the tree has IR estimates
				(those both trees can show), else the first summed metric */
	uint32_t max_depth;  /* deepest depth shown (root = 0); default FP_VIEW_DEFAULT_DEPTH */
	double threshold;    /* hide subtrees whose first column is below threshold x the root's
				 value (a fraction; 0 = off) unless a descendant passes */
	const char *include; /* POSIX extended regex: keep paths through a matching frame */
	const char *exclude; /* POSIX extended regex: drop matching frames and their subtrees */
	enum fp_view_format format;
	enum fp_view_sort sort;
	bool print_sorted;         /* also list the leaves, sorted by the first column */
	bool keep_launch_metadata; /* keep Proton's "__proton_launch_metadata" frames (hidden by
				      default, as proton-viewer does; totals then exclude them) */
	bool full_names; /* C++ kernel names in full (demangled, with template arguments and
			    parameters); default: the short form (fp_calltree_node_display()) */
};

FP_EXTERN void fp_view_options_init(struct fp_view_options *o);

/** Opaque heap object: the evaluated, filtered rows of one tree or of a comparison. */
struct fp_view;

/**
 * Evaluate tree `t` (and, when `other` is not NULL, the comparison "other - this": rows over the
 * union of both trees' name paths, each column's value being other's minus this one's, a node
 * missing on one side counting as 0 there) with options `o` (NULL for the defaults). Both trees
 * are finalized here if needed, hence not const; they must outlive the view (names are
 * borrowed). Include/exclude filters and hidden metadata frames remove data: inclusive totals
 * are recomputed without it. Depth and threshold only hide rows.
 * FP_OK and *out (free with fp_view_free()); FP_EINVAL (bad spec, regex or threshold; diag says
 * which); FP_ENOENT (no metrics given and the tree has no numeric one); FP_ENOMEM; FP_ELIMIT.
 */
FP_EXTERN int fp_view_new(struct fp_calltree *t, struct fp_calltree *other,
			  const struct fp_view_options *o, struct fp_view **out,
			  struct fp_diag *diag);

/** Free a view. NULL is a no-op. */
FP_EXTERN void fp_view_free(struct fp_view *v);

/**
 * Render the view to `f`: a header line with the column labels, one line per shown row (columns
 * right-aligned, then the name indented as a tree; "[added]"/"[removed]" mark rows present only
 * in the other/this profile of a comparison), the sorted leaves if asked, then "note:" lines.
 * Output depends only on the trees and options. FP_OK, FP_EIO (a write failed), FP_ENOMEM.
 */
FP_EXTERN int fp_view_render(const struct fp_view *v, FILE *f);

/** One shown row, in display order. Pointers are borrowed from the view. */
struct fp_view_row {
	const char *name; /* the frame name as recorded */
	size_t name_len;
	uint32_t depth;       /* 0 for the root */
	uint32_t node;        /* node id in `t`, or FP_CALLTREE_NONE (only in `other`) */
	uint32_t other_node;  /* node id in `other`, or FP_CALLTREE_NONE */
	const double *values; /* fp_view_column_count() values, NaN = n/a; valid until the
				  next fp_view_row() call of this thread */
};

FP_EXTERN size_t fp_view_column_count(const struct fp_view *v);
FP_EXTERN const char *fp_view_column_label(const struct fp_view *v, size_t col);
FP_EXTERN const struct fp_view_metric *fp_view_column(const struct fp_view *v, size_t col);
/** Rows shown by fp_view_render() (after filters and the depth limit). */
FP_EXTERN size_t fp_view_row_count(const struct fp_view *v);
/** Row `i` in display order: FP_OK, or FP_ENOENT past the end. */
FP_EXTERN int fp_view_row(const struct fp_view *v, size_t i, struct fp_view_row *out);
/** Notes gathered while evaluating (n/a reasons, hidden frames): count and text (borrowed). */
FP_EXTERN size_t fp_view_note_count(const struct fp_view *v);
FP_EXTERN const char *fp_view_note(const struct fp_view *v, size_t i);

/**
 * Print what `t` offers to -m: its metrics with their kinds and short spec names, the derived
 * metrics its metrics allow, and its devices with their peaks. FP_OK, FP_EINVAL (NULL
 * argument), FP_ENOMEM or FP_EIO (a write failed).
 */
FP_EXTERN int fp_view_list_metrics(const struct fp_calltree *t, FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_VIEW_H */
