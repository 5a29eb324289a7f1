/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Nsight Compute data in FlagPrism profiles: read the CSV that `ncu --csv` prints (the "raw"
 * page, one row per kernel launch with a row of units, or the "details" page, one row per
 * metric), attach every metric of every launch to the kernel node of a profile tree it belongs
 * to, and keep everything the tree cannot show in a `<name>.vendor.json` side file. Also builds
 * the `ncu` command line `flagprism profile --ncu` runs. It does not run ncu, read `.ncu-rep`
 * files, or talk to the GPU; docs/formats/profiler-formats.md ("Nsight Compute import") is the
 * normative description of the rules summarised here.
 *
 * Reading. The input may mix CSV with ncu's own lines ("==PROF== ...", "==WARNING== ...",
 * "==ERROR== ...") and the profiled program's output: a line that does not start with '"' where
 * a row should start is kept as a tool message, never parsed. A row whose first field is "ID"
 * and that has a "Kernel Name" column is a header (there may be several, e.g. one per process);
 * it has "Metric Name" and "Metric Value" columns on the details page. On the raw page the row
 * after the header whose ID is empty holds the units. Every other row is a record; records are
 * kept verbatim. Values: thousands separators ("1,234.5") are removed; "n/a" and "" mean no
 * value; units with SI prefixes are scaled to their base ("Kbyte" -> byte, "usecond" ->
 * nsecond, "Gbyte/second" -> byte/second, "cycle/nsecond" -> cycle/second).
 *
 * Memory: a report owns everything reachable from it (one arena) until fp_ncu_report_free().
 * Not thread-safe; nothing here is global.
 */
#ifndef FLAGPRISM_NCU_H
#define FLAGPRISM_NCU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flagprism/calltree.h>
#include <flagprism/csv.h>
#include <flagprism/export.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fp_jsonw;

/** "No index" for record and launch indices. */
#define FP_NCU_NONE SIZE_MAX

/** The metrics `flagprism profile --ncu` collects unless told otherwise: time, DRAM traffic
 *  and a few utilisation ratios (not checked on every GPU: ncu reports the ones it lacks). */
#define FP_NCU_DEFAULT_METRICS                                               \
	"gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum," \
	"sm__throughput.avg.pct_of_peak_sustained_elapsed,"                  \
	"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,"  \
	"sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread"

/* Defaults applied when a field of struct fp_ncu_limits is 0. */
#define FP_NCU_DEFAULT_MAX_BYTES ((size_t)1 << 32)   /* 4 GiB of CSV */
#define FP_NCU_DEFAULT_MAX_RECORDS ((size_t)1 << 24) /* 16 Mi rows */
#define FP_NCU_DEFAULT_MAX_MESSAGES ((size_t)1000)   /* tool lines kept verbatim */
#define FP_NCU_DEFAULT_MAX_MEMORY ((size_t)16 << 30) /* arena bytes */

/** Caps on one report; a 0 field means its default. Over a cap: FP_ELIMIT (messages past
 *  max_messages are only counted). */
struct fp_ncu_limits {
	size_t max_bytes;    /* input size */
	size_t max_records;  /* CSV rows, headers included */
	size_t max_messages; /* non-CSV lines kept (the rest are counted) */
	size_t max_memory;   /* bytes the report's arena may take */
	struct fp_csv_limits csv;
};

enum fp_ncu_page {
	FP_NCU_PAGE_NONE = 0,    /* no header seen */
	FP_NCU_PAGE_RAW = 1,     /* one row per launch, metric names as columns */
	FP_NCU_PAGE_DETAILS = 2, /* one row per metric: Section/Metric Name/Unit/Value */
	FP_NCU_PAGE_MIXED = 3,   /* headers of both kinds (several outputs concatenated) */
};

/** How the launches that land on one node combine (docs/formats/profiler-formats.md says which). */
enum fp_ncu_agg {
	FP_NCU_AGG_SUM = 0,  /* counters: bytes, time, cycles, instructions... */
	FP_NCU_AGG_MEAN = 1, /* ratios, percentages, rates, per-launch configuration */
};

enum fp_ncu_record_kind {
	FP_NCU_RECORD_HEADER = 0, /* a header row */
	FP_NCU_RECORD_UNITS = 1,  /* the raw page's units row */
	FP_NCU_RECORD_DATA = 2,   /* a row that belongs to a launch */
	FP_NCU_RECORD_OTHER = 3,  /* a row kept verbatim only (rule rows, rows without an ID) */
	FP_NCU_RECORD_BAD = 4,    /* a row that could not be interpreted; a degradation says why */
};

/** One CSV row, verbatim. Strings are NUL-terminated, borrowed from the report. */
struct fp_ncu_record {
	enum fp_ncu_record_kind kind;
	size_t header;   /* record index of the header naming its columns, or FP_NCU_NONE */
	size_t launch;   /* launch index for DATA records, else FP_NCU_NONE */
	uint64_t offset; /* byte offset of the row in the input */
	uint32_t line;   /* 1-based line where it starts */
	size_t nfields;
	const char *const *fields;
	const size_t *lens; /* field lengths (fields may contain NUL bytes) */
};

/** One metric value of one launch. Strings are borrowed from the report. */
struct fp_ncu_metric {
	const char *section;   /* details page: "Section Name" (may be ""); raw page: "" */
	const char *name;      /* metric name (raw page column, details "Metric Name") */
	const char *unit;      /* unit as printed ("" when none) */
	const char *text;      /* value as printed */
	const char *base_unit; /* unit after removing the SI prefix */
	double value;          /* the value in base_unit; meaningful when has_value */
	bool has_value;        /* false for "n/a", "" and text that is not a number */
	enum fp_ncu_agg agg;   /* how launches combine, from the unit, name and section */
	size_t record;         /* the record it came from */
};

/** One kernel launch as ncu reported it, plus where fp_ncu_attach() put it. */
struct fp_ncu_launch {
	const char *id;         /* "ID" as printed ("" when the header has none) */
	const char *process_id; /* "Process ID" or "" */
	const char *kernel;     /* "Kernel Name", exactly as printed (demangled by default) */
	const char *device;     /* "Device" or "" */
	bool has_grid, has_block;
	uint32_t grid[3], block[3]; /* parsed from "(x, y, z)" */
	size_t first_record;        /* its first record */
	size_t nrecords;            /* how many records it has (1 on the raw page) */
	const struct fp_ncu_metric *metrics;
	size_t nmetrics;
	double duration_ns; /* gpu__time_duration.sum (or the details "Duration"); 0 if none */
	/* Set by fp_ncu_attach(): */
	uint32_t node;         /* the profile node it was attached to, or FP_CALLTREE_NONE */
	const char *unmatched; /* why it was not attached (NULL when attached or not tried) */
};

/** Something ncu could not collect, or the importer could not use; merged by (kind, detail). */
struct fp_ncu_degradation {
	const char *kind;    /* see docs/formats/profiler-formats.md: "counter_permission",
			      * "metric_unsupported", "replay", "metric_not_available", "ncu_error",
			      * "ncu_warning", "row_shape", "value_not_numeric", "duplicate_metric",
			      * "no_header", "no_launches" */
	const char *detail;  /* the tool's line, the metric, or the row problem */
	uint64_t count;      /* how many times it happened */
	size_t first_record; /* record where it was first seen, or FP_NCU_NONE */
};

/** Opaque parsed report; heap object. */
struct fp_ncu_report;

/* ---- reading ------------------------------------------------------------------------------ */

/**
 * Parse ncu CSV output (see the top of this file). `lim` may be NULL. On success *out is a new
 * report (caller frees) and FP_OK is returned, even when it holds no launch (only messages, or
 * an empty input): the degradations then say why. Errors: FP_EFORMAT for CSV syntax errors
 * (diag has offset, line, column), FP_ELIMIT, FP_ENOMEM, FP_EINVAL (NULL `out`). *out is
 * untouched on failure.
 */
FP_EXTERN int fp_ncu_parse(const char *text, size_t len, const struct fp_ncu_limits *lim,
			   struct fp_ncu_report **out, struct fp_diag *diag);

/** Read and parse the file at `path`; as fp_ncu_parse() plus FP_EIO. Diag messages start
 *  with the path. */
FP_EXTERN int fp_ncu_read(const char *path, const struct fp_ncu_limits *lim,
			  struct fp_ncu_report **out, struct fp_diag *diag);

/** Free a report. NULL is a no-op. */
FP_EXTERN void fp_ncu_report_free(struct fp_ncu_report *r);

FP_EXTERN enum fp_ncu_page fp_ncu_report_page(const struct fp_ncu_report *r);

/** Launches in the order ncu reported them (the order of their first record). */
FP_EXTERN size_t fp_ncu_report_launch_count(const struct fp_ncu_report *r);
/** Launch `i` (borrowed), or NULL when out of range. */
FP_EXTERN const struct fp_ncu_launch *fp_ncu_report_launch(const struct fp_ncu_report *r, size_t i);

FP_EXTERN size_t fp_ncu_report_record_count(const struct fp_ncu_report *r);
FP_EXTERN const struct fp_ncu_record *fp_ncu_report_record(const struct fp_ncu_report *r, size_t i);

FP_EXTERN size_t fp_ncu_report_degradation_count(const struct fp_ncu_report *r);
FP_EXTERN const struct fp_ncu_degradation *fp_ncu_report_degradation(const struct fp_ncu_report *r,
								     size_t i);

/** Non-CSV lines kept verbatim (ncu's "==PROF==" lines, program output), in input order. */
FP_EXTERN size_t fp_ncu_report_message_count(const struct fp_ncu_report *r);
FP_EXTERN const char *fp_ncu_report_message(const struct fp_ncu_report *r, size_t i);
/** Non-CSV lines seen in all (more than the messages kept when over max_messages). */
FP_EXTERN uint64_t fp_ncu_report_messages_seen(const struct fp_ncu_report *r);

/* ---- values and units (exposed for tests and other importers) ------------------------------ */

/**
 * Parse a value as ncu prints it: optional sign, digits with optional thousands separators
 * (groups of exactly three after the first), optional fraction and exponent ("1,234.5",
 * "-3", "2.5e+03"). Leading and trailing spaces are allowed. Returns true and *out, or false
 * ("n/a", "", "(128, 1, 1)", "1,23"...). Independent of the locale.
 */
FP_EXTERN bool fp_ncu_parse_value(const char *s, size_t len, double *out);

/**
 * Scale a unit to its base: stores the factor (value_in_base = value * factor) and the base
 * unit (NUL-terminated, at most `size` - 1 bytes) and returns true; false when `size` is too
 * small. Unknown units scale by 1 and stay as they are. See the top of this file.
 */
FP_EXTERN bool fp_ncu_unit_base(const char *unit, double *factor, char *base, size_t size);

/** How values of a metric combine across launches (see enum fp_ncu_agg). */
FP_EXTERN enum fp_ncu_agg fp_ncu_metric_agg(const char *section, const char *name,
					    const char *base_unit);

/**
 * The name a metric gets in a profile tree: "ncu:[<section>:]<name>[ (<base unit>)]" (the
 * section only for details-page labels, not for ncu metric names, which contain "__"), with a
 * trailing " (pty)" for FP_NCU_AGG_MEAN (a property: one mean value per node, not summed into
 * parents). '/', ',', '(' and ')' in the section and name become '-', ';', '[' and ']' so
 * proton-viewer's metric syntax can name it. Returns the length written (truncated to
 * `size` - 1) or FP_EINVAL when `size` is 0.
 */
FP_EXTERN int fp_ncu_tree_metric_name(const struct fp_ncu_metric *m, char *buf, size_t size);

/* ---- attaching to a profile ---------------------------------------------------------------- */

/** Per-launch order of a profile, read from its Chrome trace (opaque heap object). */
struct fp_ncu_order;

/**
 * Read the kernel events ("ph": "X", "cat": "kernel") of a FlagPrism Chrome trace and resolve
 * each to its node of `t` (args.call_stack + name, below ROOT). Launch order is by
 * args.correlation when every event has a non-zero one, else by ts. Events whose path is not
 * in the tree are counted, not errors (fp_ncu_attach() then ignores the order). FP_OK,
 * FP_EFORMAT (not a trace: diag says why), FP_ENOMEM, FP_ELIMIT, FP_EIO (read only).
 */
FP_EXTERN int fp_ncu_order_from_trace(struct fp_calltree *t, const char *text, size_t len,
				      struct fp_ncu_order **out, struct fp_diag *diag);
FP_EXTERN int fp_ncu_order_read_trace(struct fp_calltree *t, const char *path,
				      struct fp_ncu_order **out, struct fp_diag *diag);
FP_EXTERN void fp_ncu_order_free(struct fp_ncu_order *o);
/** Kernel events read, and those whose node was not found. */
FP_EXTERN size_t fp_ncu_order_count(const struct fp_ncu_order *o);
FP_EXTERN size_t fp_ncu_order_unresolved(const struct fp_ncu_order *o);

/** What fp_ncu_attach() did. */
struct fp_ncu_attach_stats {
	uint64_t launches;          /* launches in the report */
	uint64_t matched;           /* attached to a node */
	uint64_t unmatched;         /* not attached; each launch says why */
	uint64_t by_base_name;      /* matched by the name without return type and parameters */
	uint64_t nodes;             /* distinct nodes that received metrics */
	uint64_t metrics;           /* distinct tree metrics added, "ncu:launches" included */
	uint64_t summed;            /* ... of which summed (the rest are means) */
	uint64_t values;            /* metric values attached, over all launches */
	uint64_t values_missing;    /* metric values of matched launches without a number */
	uint64_t profile_launches;  /* launches the profile's kernel nodes count */
	uint64_t profile_unmatched; /* ... that received no ncu launch */
	uint64_t split_kernels;     /* kernels on several nodes matched without a trace: their
				   * split between those nodes follows the count rule only */
	bool used_trace;            /* the order came from the trace */
	char order_note[200];       /* why a given trace was not used, else "" */
};

/**
 * Attach the report's launches to kernel nodes of `t` and add their metrics (see
 * docs/formats/profiler-formats.md). Kernel nodes are nodes with a "count" > 0; a launch goes to a
 * node of the same name (exact, else the same base name). With a usable `order` (NULL: none)
 * the k-th ncu launch of a kernel goes to the k-th profile launch of that kernel with the same
 * grid; otherwise kernel nodes are taken in tree order (depth first, children by name) and a
 * node with count n takes the next n launches. Launches left over, or of kernels the profile
 * does not have, stay unattached with a reason. Fills *st (may be NULL).
 *
 * Returns FP_OK; FP_ESTATE if the tree already has "ncu:" metrics or the report was attached
 * before (importing twice would double the sums); FP_EINVAL; FP_ENOMEM or FP_ELIMIT (the tree
 * may then hold part of the metrics: discard it). Marks the tree's totals stale.
 */
FP_EXTERN int fp_ncu_attach(struct fp_ncu_report *r, struct fp_calltree *t,
			    const struct fp_ncu_order *order, struct fp_ncu_attach_stats *st,
			    struct fp_diag *diag);

/* ---- <name>.vendor.json ------------------------------------------------------------------- */

/** Where the data came from, for the vendor file. Any field may be NULL. */
struct fp_ncu_vendor_info {
	const char *source;  /* the CSV's path */
	const char *profile; /* the profile written */
	const char *trace;   /* the trace used for launch order */
};

/**
 * Write the vendor document (docs/formats/profiler-formats.md): every record verbatim as an object
 * column -> string, launches with their node paths in `t` (may be NULL before attaching), the
 * unattached launches with reasons, how each tree metric was aggregated, degradations and tool
 * messages. Returns FP_OK or the writer's error.
 */
FP_EXTERN int fp_ncu_write_vendor(const struct fp_ncu_report *r, const struct fp_calltree *t,
				  const struct fp_ncu_vendor_info *info, struct fp_jsonw *w);

/** Write it to `path` (through a temporary file and a rename). FP_OK, FP_EIO (diag names the
 *  path), FP_ENOMEM. `flags` are fp_jsonw flags. */
FP_EXTERN int fp_ncu_save_vendor(const struct fp_ncu_report *r, const struct fp_calltree *t,
				 const struct fp_ncu_vendor_info *info, const char *path,
				 unsigned flags, struct fp_diag *diag);

/* ---- the ncu command line ----------------------------------------------------------------- */

/** What `flagprism profile --ncu` asks of ncu. Zero it, then set what you need. */
struct fp_ncu_command {
	const char *ncu;           /* the executable; NULL: "ncu" */
	const char *log_file;      /* required: the CSV goes there (--log-file) */
	const char *metrics;       /* --metrics list; NULL: FP_NCU_DEFAULT_METRICS; "": none */
	const char *sections;      /* comma list, one --section each; NULL: none */
	const char *set;           /* --set NAME; NULL: none */
	const char *kernel_name;   /* --kernel-name VALUE ("regex:add_.*"); NULL: every kernel */
	uint64_t launch_skip;      /* --launch-skip N when > 0 */
	uint64_t launch_count;     /* --launch-count N when > 0 */
	const char *replay_mode;   /* --replay-mode (kernel, application, range...); NULL: ncu's */
	const char *clock_control; /* --clock-control; NULL: "none" (clocks as the program sees) */
	const char *print_kernel_base; /* --print-kernel-base (function, demangled, mangled) */
	bool details_page;             /* --page details instead of --page raw */
};

/**
 * Build `ncu --csv --page raw --print-units base --clock-control none --target-processes all
 * [--metrics M] [--section S]... [--set X] [--kernel-name K] [--launch-skip N]
 * [--launch-count N] [--replay-mode R] [--print-kernel-base B] --log-file CSV target...`.
 * On success *argv is a NULL-terminated array in one allocation (free it with fp_free()) and
 * *argc its length. FP_EINVAL when log_file or the target is missing, or the target's first
 * word starts with '-' (ncu would read it as an option); FP_ENOMEM.
 */
FP_EXTERN int fp_ncu_command_argv(const struct fp_ncu_command *c, const char *const *target,
				  size_t ntarget, char ***argv, size_t *argc);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_NCU_H */
