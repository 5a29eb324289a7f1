/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internals shared by the Debugger's report writers (src/debug/report*.c, summary.c) and the
 * launch parser (launch.c): the parsed launch, the writer table (one entry per output format,
 * one file per format), the small text-output helpers and the fast number formatting they
 * share. The writers see the run only through <flagprism/debug.h>, not debug-internal.h. Not for
 * the profiler's writers.
 */
#ifndef FP_DEBUG_REPORT_INTERNAL_H
#define FP_DEBUG_REPORT_INTERNAL_H

#include <flagprism/debug.h>

/* This header is included by the unit tests too, without fp-setup.h. */
#ifndef FP_PRINTF
#if defined(__GNUC__)
#define FP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FP_PRINTF(a, b)
#endif
#endif

/* The launch JSON, checked and copied (docs/formats/debugger-report-schema.md, "Launch JSON"). */
struct fp_dbg_launch {
	char *output_dir;
	char *stem; /* file name stem, already sanitised */
	char *script, *kernel, *timestamp;
	int64_t run_index;
	uint64_t grid[3];
	unsigned grid_ndim; /* 1..3 as given (missing dims are 1) */
	char *backend;
	char *source_file;   /* the user's file (op log locations are mapped to it) */
	char *twin_file;     /* the instrumented twin's cache file, or NULL */
	char **helper_files; /* files whose ops are instrumentation (record helpers) */
	size_t nhelper_files;
	char **frame_files; /* frame_files[i]: the twin of helper call site i + 1 (or NULL) */
	size_t nframe_files;
	uint64_t record_capacity; /* as the launch says (the header's S is authoritative) */
	bool export_raw_records;
	char *ttir; /* TTIR text of the compiled twin, or NULL */
	size_t ttir_len;
	char *ttir_unavailable_reason; /* why ttir is NULL, or NULL */
	bool findings_only; /* `sanitize`: the reports hold the findings, no statements */
	/* warps of the kernel as launched and of the twin that ran (0: not given), and why */
	int64_t nw_kernel, nw_twin;
	char *nw_reason;
	/* registers per thread of the twin: Triton's maxnreg cap it was compiled with (0: none) and
	 * what it took without one (0: not known), and why; has_registers: the launch said */
	bool has_registers;
	int64_t reg_cap, reg_uncapped;
	char *reg_reason;
	struct fp_dbg_arg *args; /* the tensor arguments' extents (names owned) */
	size_t nargs;
	char *arg_texts; /* the args' desc_text strings */
	/* Where the launch came from (optional): the pytest node id, the Python stack of the
	 * launch (innermost last), the launch path ("JITFunction.run", "Inductor", ...), the
	 * autotuner's role and config, and the exception the launch raised (the report is then
	 * partial). NULL/0 when not given. */
	char *test;
	char **stack;
	size_t nstack;
	char *launch_path;
	char *autotune_role, *autotune_config;
	char *error;
	/* check mode: the kinds of findings its checks ask for (1 << kind), 0: every kind */
	unsigned check_kinds;
};

/* What every writer gets: the run, the parsed launch and its findings (NULL: none). */
struct fp__dbg_wctx {
	const struct fp_dbg_run *run;
	const struct fp_dbg_run_info *info;
	const struct fp_dbg_launch *launch;
	const struct fp_dbg_findings *findings;
	bool want_artifacts; /* level 2: the run has (or was meant to have) dumps */
	bool link_artifacts; /* artifacts will be written: the JSON names each instance's file */
	struct fp_diag *diag;
};

/*
 * One output format. `write` streams the whole report to `f` and returns FP_OK or a status
 * (FP_EIO is detected by the caller from the stream as well). `wanted` (NULL: always) says
 * whether fp_dbg_write_reports() writes it for this launch; `out_offset` is where its path goes
 * in struct fp_dbg_outputs.
 */
struct fp__dbg_writer {
	const char *name;
	const char *suffix;
	int (*write)(const struct fp__dbg_wctx *c, FILE *f);
	bool (*wanted)(const struct fp_dbg_launch *l);
	size_t out_offset;
};

int fp__dbg_write_txt(const struct fp__dbg_wctx *c, FILE *f);
int fp__dbg_write_json(const struct fp__dbg_wctx *c, FILE *f);
int fp__dbg_write_op_log_txt(const struct fp__dbg_wctx *c, FILE *f);
int fp__dbg_write_op_log_json(const struct fp__dbg_wctx *c, FILE *f);
int fp__dbg_write_raw(const struct fp__dbg_wctx *c, FILE *f);

/*
 * Write the level-2 artifacts (one .npy per dump, address dumps as address + mask arrays, and
 * tensor_index.json) into `dir`, which exists. Sets *count to the .npy files written.
 */
int fp__dbg_write_artifacts(const struct fp__dbg_wctx *c, const char *dir, size_t *count);

/* Artifact file name of a record's dump ("value", "addr" or "mask" part), into buf. */
void fp__dbg_artifact_name(const struct fp__dbg_wctx *c, const struct fp_dbg_record *rec,
			   const char *part, char *buf, size_t size);

struct fp_dbg_summary;
struct fp_strbuf;

/* The summary's JSON document (summary.json without its final newline), appended to `sb`:
 * what fp_dbg_summary_write_parts() merges the parts under. FP_OK, FP_ENOMEM, FP_ELIMIT. */
int fp__dbg_summary_json(struct fp_dbg_summary *s, struct fp_strbuf *sb);

/*
 * Memory NaN and Inf travel through: a load from memory that held one descends from an origin
 * only if that origin's launch wrote one into the same allocation (docs/guide/debugger.md, "NaN
 * and Inf origin"). Ranges are allocations [lo, hi) from a run's tensor table.
 */
struct fp__dbg_range {
	uint64_t lo, hi;
};
#define FP__DBG_MAX_RANGES 64u /* per query; more are left out (the link is then not made) */

/* The allocations of the named parameters (tensor-table storages, zero entries skipped,
 * duplicates once) into out[cap]; returns how many. */
size_t fp__dbg_param_storages(const struct fp_dbg_run *run, const char *const *names, size_t n,
			      struct fp__dbg_range *out, size_t cap);

/* The allocations this run's stores and atomics wrote a NaN (inf false) or an Inf (inf true)
 * into: the "stores" parameters of the value checks of stored values that held one (born there
 * or descended). */
size_t fp__dbg_written(const struct fp_dbg_run *run, bool inf, struct fp__dbg_range *out,
		       size_t cap);

/* Whether any range of a overlaps any of b. */
bool fp__dbg_overlap(const struct fp__dbg_range *a, size_t na, const struct fp__dbg_range *b,
		     size_t nb);

/* Fold a launch's NaN/Inf findings at loads of memory an earlier launch wrote one into (a
 * store of the summary's ranges) into that launch's origin: counted there as descendants and
 * removed from `fs`. folded[inf]: the origin (findings index + 1) this launch's NaN (0) or Inf
 * (1) descended from, 0 for none. No-op (zeros) for a NULL summary. */
void fp__dbg_summary_fold(struct fp_dbg_summary *s, const struct fp_dbg_run *run,
			  struct fp_dbg_findings *fs, uint64_t launch, size_t folded[2]);

/* Add a launch's findings to a summary, under launch `launch` and its report path (NULL: no
 * report file was written), and where its stores put NaN and Inf (folded: from
 * fp__dbg_summary_fold). Counts the report. No-op for a NULL summary. */
int fp__dbg_summary_add_launch_findings(struct fp_dbg_summary *s, const struct fp_dbg_run *run,
					const struct fp_dbg_launch *l,
					const struct fp_dbg_findings *fs, uint64_t launch,
					const char *report, const size_t folded[2]);

/* Remove finding `i` from `fs` (the later ones move up). */
void fp__dbg_findings_remove(struct fp_dbg_findings *fs, size_t i);

/*
 * Where `line` of `frame` is: "line 12" in the kernel's body, "attn.py:43 _inner -> attn.py:12"
 * inside helpers (report-where.c). Writes at most size - 1 bytes and a NUL; returns the length.
 */
size_t fp__dbg_where(const struct fp_dbg_run *run, uint32_t frame, uint32_t line, char *buf,
		     size_t size);

/* The file a frame's lines belong to (the launch's source file for frame 0). */
const char *fp__dbg_frame_file(const struct fp_dbg_run *run, const struct fp_dbg_launch *l,
			       uint32_t frame);

struct fp_jsonw;

/* The call chain down to `frame` as a JSON array of {file, line, col, source, function}. */
void fp__dbg_json_chain(struct fp_jsonw *w, const struct fp_dbg_run *run, uint32_t frame);

/* Program coordinates from a linear id and the launch grid. */
void fp__dbg_program_xyz(const struct fp_dbg_launch *l, uint64_t p, uint64_t xyz[3]);

/* ---- text output: a line buffer that streams to a FILE* with few stdio calls ---------------- */

struct fp__tbuf {
	FILE *f;
	size_t n;
	int err; /* FP_EIO once a write failed (sticky) */
	char b[16384];
};

void fp__tb_init(struct fp__tbuf *t, FILE *f);
int fp__tb_flush(struct fp__tbuf *t);
void fp__tb_str(struct fp__tbuf *t, const char *s);
void fp__tb_mem(struct fp__tbuf *t, const char *s, size_t n);
void fp__tb_ch(struct fp__tbuf *t, char c);
void fp__tb_pad(struct fp__tbuf *t, size_t n); /* n spaces */
void fp__tb_printf(struct fp__tbuf *t, const char *fmt, ...) FP_PRINTF(2, 3);
/* Right-aligned in `width` columns (0: no padding). */
void fp__tb_u64(struct fp__tbuf *t, uint64_t v, unsigned width);
void fp__tb_i64(struct fp__tbuf *t, int64_t v, unsigned width);
/* 0x + 16 hex digits, always that wide. */
void fp__tb_hex(struct fp__tbuf *t, uint64_t v);
/* %.6g-like, right-aligned in width; "-" when !present. */
void fp__tb_g(struct fp__tbuf *t, double v, bool present, unsigned width);
/* Left-aligned string padded to width. */
void fp__tb_left(struct fp__tbuf *t, const char *s, unsigned width);

/* Decimal digits of v. */
unsigned fp__dec_len(uint64_t v);

/* The text of an instance column: "x", "x,y" or "x,y,z" per grid rank. Returns its length. */
size_t fp__dbg_program_label(const struct fp_dbg_launch *l, uint64_t p, char *buf, size_t size);

/* ---- report-num.c: fast number formatting ------------------------------------------------------ */

/*
 * A 64M-element launch puts about a million doubles into each report; libc's printf/strtod spend
 * a microsecond on each. These produce exactly the same text as the slow paths they replace
 * (they fall back to them whenever 64-bit fixed-point arithmetic cannot decide a rounding for
 * sure), so reports do not depend on which path ran. Not a general-purpose formatter.
 */
/*
 * `v` as fp_json_format_double() writes it (shortest of %.15g/%.16g/%.17g that reads back,
 * ".0" for integral values); finite `v` only. `buf` holds at least 32 bytes. Returns the length,
 * or a negative status for a non-finite value.
 */
int fp__dbg_fmt_json(double v, char *buf, size_t size);

/* `v` as snprintf("%.6g") writes it in the "C" locale; `buf` holds at least 32 bytes. */
int fp__dbg_fmt_g6(double v, char *buf, size_t size);

#endif /* FP_DEBUG_REPORT_INTERNAL_H */
