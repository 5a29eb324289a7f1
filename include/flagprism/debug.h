/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Debugger's host side: decode a record buffer (docs/record-format.md, format v1) together
 * with the rewriter's site table into an in-memory run, and write the reports of that run
 * (statement report .txt/.json, op log .txt/.json, raw records, level-2 .npy artifacts; the JSON
 * schema is docs/debugger-report-schema.md). The decoder validates every header word and every
 * used record slot and rejects anything inconsistent with FP_EFORMAT/FP_EVERSION and a diagnostic
 * naming the byte offset, the field, the slot, the program and the site: a corrupt buffer never
 * turns into a plausible-looking report.
 *
 * The decoded run is the model later analyses (findings: out-of-bounds, NaN origin, precision)
 * work on: statements in source order, each with its sites; each site with its records ordered
 * by program linear id, then execution; every record keeps its 8 words as stored. Not here: the
 * instrumentation itself (Python rewriter, device helpers) and the buffer transfer.
 */
#ifndef FLAGPRISM_DEBUG_H
#define FLAGPRISM_DEBUG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <flagprism/dtype.h>
#include <flagprism/export.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the record buffer format (normative text: docs/record-format.md) ----------------------- */

#define FP_DBG_MAGIC UINT64_C(0x0031764742445046) /* "FPDBGv1\0" as a little-endian u64 */
#define FP_DBG_FORMAT_VERSION 1
#define FP_DBG_HEADER_WORDS 8
#define FP_DBG_RECORD_WORDS 8
#define FP_DBG_FLAG_DUMP_ARENA (1u << 0) /* header word 1, bits 48-63: dump arena present */
#define FP_DBG_SHAPE_FLATTENED (1u << 0) /* record word 0, bits 36-39: dims hold [numel] */
#define FP_DBG_NO_DUMP UINT64_MAX        /* fp_dbg_record_dump_offset(): no dump */

/* Version of the JSON reports written by fp_dbg_write_reports() (field `schema_version`). */
#define FP_DBG_SCHEMA_VERSION 1

/* Site and record kinds; the values are the record's kind field. */
enum fp_dbg_kind {
	FP_DBG_KIND_VALUE = 1, /* numerical summary of a tensor value */
	FP_DBG_KIND_LOAD = 2,  /* address summary of a tl.load */
	FP_DBG_KIND_STORE = 3, /* address summary of a tl.store */
};

/* Status of an address summary (record word 2, bits 32-63). */
enum fp_dbg_addr_status {
	FP_DBG_ADDR_COMPLETE = 0,
	FP_DBG_ADDR_BLOCK_POINTER = 1,     /* block pointer: addresses not observed */
	FP_DBG_ADDR_TENSOR_DESCRIPTOR = 2, /* tensor descriptor: addresses not observed */
	FP_DBG_ADDR_UNSUPPORTED = 3,       /* pointer pattern the helpers cannot summarise */
};

/* ---- the decoded run ------------------------------------------------------------------------ */

/*
 * One stored record. `words` are the record's 8 words exactly as the device wrote them (host
 * byte order); the other fields are where the decoder found it. Everything else (dtype, shape,
 * summaries) is derived from `words` by the fp_dbg_record_*() accessors below, which never fail
 * on a record that came out of fp_dbg_decode() (it validated them).
 */
struct fp_dbg_record {
	uint64_t words[FP_DBG_RECORD_WORDS];
	uint64_t numel;     /* element count of the (pointer) tensor: product of the shape */
	uint64_t program;   /* linear program id x + gx*(y + gy*z) */
	uint32_t site;      /* index of the site in the run (fp_dbg_run_site()), not the site id */
	uint32_t execution; /* 0-based: earlier records of this site in the same program */
	uint32_t slot;      /* slot index within the program (= the program's sequence number) */
	uint32_t reserved;
};

/* A statement of the site table: one Triton source statement inside the collected region. */
struct fp_dbg_statement {
	uint32_t id;           /* statement id of the site table */
	uint32_t line;         /* 1-based line in the user's file */
	uint32_t col;          /* column as the rewriter gave it */
	uint32_t end_line;     /* last line of the statement (>= line) */
	uint32_t loop_depth;   /* loops around it inside the kernel */
	const char *source;    /* statement text, NUL-terminated */
	const uint32_t *sites; /* indices of its sites (fp_dbg_run_site()), by ascending site id */
	size_t nsites;
};

/* A name a site reads that an earlier statement defined (site table `reads`). */
struct fp_dbg_read {
	const char *name;
	uint32_t statement; /* index of the defining statement, or UINT32_MAX if none was found */
};

/*
 * A site: one observation point (a value, or the addresses of a load or store). Sites are
 * indexed 0..n-1 in ascending id order; ids are 1..n (dense, as the record format requires).
 */
struct fp_dbg_site {
	uint32_t id;        /* site id written in the records (>= 1) */
	uint32_t statement; /* index of its statement (fp_dbg_run_statement()) */
	enum fp_dbg_kind kind;
	const char *name; /* value name or pointer expression, NUL-terminated */
	const struct fp_dbg_read *reads;
	size_t nreads;
	/* From the records (all records of a site agree; the decoder checks it). Zero without any. */
	enum fp_dtype dtype; /* value dtype; pointee dtype for load/store sites */
	uint32_t ndim;       /* rank as recorded (may exceed 3 when `flattened`) */
	bool flattened;      /* shape recorded as [numel] only */
	uint64_t shape[3];   /* dims 0..min(ndim,3)-1, or shape[0] = numel when flattened */
	uint64_t numel;
	size_t nrecords; /* records of this site (fp_dbg_run_records()) */
	size_t ndumps;   /* of which carry a level-2 dump */
};

/* Everything about the run that is not per statement or per site. */
struct fp_dbg_run_info {
	uint64_t slots_per_program; /* S (header word 2) */
	uint64_t programs;          /* P (header word 3) */
	uint64_t overflow_count;    /* records that did not fit (header word 4) */
	uint64_t dump_cursor;       /* words of dump arena handed out (header word 5) */
	uint64_t dump_capacity;     /* words in the dump arena (header word 6) */
	uint64_t dump_overflow;     /* dump words that did not fit: max(0, cursor - capacity) */
	uint64_t record_count;      /* records stored in the buffer */
	uint64_t dump_count;        /* of which carry a dump */
	uint32_t flags;             /* header word 1 bits 48-63 */
	int level;                  /* site table `level` (0 when absent) */
	int addr_level;             /* site table `addr_level` (0 when absent) */
	const char *kernel;         /* site table `kernel` ("" when absent) */
	const char *file;           /* site table `file` ("" when absent) */
	bool complete;              /* no record overflow and no dump overflow */
};

struct fp_dbg_run; /* opaque; owns copies of everything it needs (not the caller's buffer) */

/**
 * Decode a record buffer and its site table into a new run.
 *
 * `buf`/`len`: the whole buffer (header, P*S record slots, dump arena when header flag bit 0 is
 * set); its length must match the header exactly. It is only read, never kept: the run copies
 * the used part of the dump arena. `site_table_json`/`site_len`: the rewriter's site table.
 *
 * Returns FP_OK and sets *out (free with fp_dbg_run_free()), or:
 *  - FP_EFORMAT: malformed buffer; `diag->offset` is the byte offset of the offending word (for a
 *    buffer too short or too long: where the missing or extra bytes begin) and `diag->msg` names
 *    the field, slot, program and site. Malformed site table: FP_EFORMAT with `diag->msg`
 *    starting "site table:", `diag->offset` the byte offset in the site table and line/col set.
 *  - FP_EVERSION: buffer format version (or site table version) other than 1.
 *  - FP_ENOMEM, FP_ELIMIT, FP_EINVAL (NULL arguments).
 * Allocation is bounded by `len` and `site_len`, never by sizes read from the buffer.
 */
FP_EXTERN int fp_dbg_decode(const void *buf, size_t len, const char *site_table_json,
			    size_t site_len, struct fp_dbg_run **out, struct fp_diag *diag);

/** Free a run and everything it owns. NULL is a no-op. */
FP_EXTERN void fp_dbg_run_free(struct fp_dbg_run *run);

/** Header facts and totals; borrowed, valid until fp_dbg_run_free(). Never NULL for a run. */
FP_EXTERN const struct fp_dbg_run_info *fp_dbg_run_info(const struct fp_dbg_run *run);

/** Number of statements; they are indexed in source order (line, then column, then id). */
FP_EXTERN size_t fp_dbg_run_statement_count(const struct fp_dbg_run *run);

/** Statement `i` in source order, or NULL if out of range. Borrowed. */
FP_EXTERN const struct fp_dbg_statement *fp_dbg_run_statement(const struct fp_dbg_run *run,
							      size_t i);

/** Number of sites (= header word 7). */
FP_EXTERN size_t fp_dbg_run_site_count(const struct fp_dbg_run *run);

/** Site `i` (0-based; its id is i + 1), or NULL if out of range. Borrowed. */
FP_EXTERN const struct fp_dbg_site *fp_dbg_run_site(const struct fp_dbg_run *run, size_t i);

/**
 * The records of site `i`, ordered by program linear id, then execution; `*n` gets their count.
 * NULL (and *n = 0) when the site has none or `i` is out of range. Borrowed.
 */
FP_EXTERN const struct fp_dbg_record *fp_dbg_run_records(const struct fp_dbg_run *run, size_t i,
							 size_t *n);

/** The record of site `i` in `program` at `execution` (binary search), or NULL. Borrowed. */
FP_EXTERN const struct fp_dbg_record *fp_dbg_run_find(const struct fp_dbg_run *run, size_t i,
						      uint64_t program, uint32_t execution);

/**
 * The level-2 dump of a record: `*nwords` (= rec->numel) 64-bit words as the device stored them
 * (floats as float64 bits, integers and bools as int64, addresses with bit 63 set on masked-off
 * lanes). NULL (and *nwords = 0) when the record has no dump. Borrowed.
 */
FP_EXTERN const uint64_t *fp_dbg_run_dump(const struct fp_dbg_run *run,
					  const struct fp_dbg_record *rec, size_t *nwords);

/* ---- record accessors (pure; valid for records of a decoded run) ---------------------------- */

/* Derived numerical summary of a value record. */
struct fp_dbg_value_summary {
	uint64_t element_count;
	uint64_t nan_count;
	uint64_t inf_count;
	uint64_t zero_count;
	uint64_t finite_count; /* element_count - nan_count - inf_count */
	double sum;            /* of finite elements */
	double sumsq;          /* of finite elements */
	double mean;           /* sum / finite_count; meaningful only when finite_count > 0 */
	double min;            /* as double (integers converted); only when finite_count > 0 */
	double max;
	double l2_norm;   /* sqrt(sumsq) */
	bool is_float;    /* min/max were stored as float64 bits */
	bool is_unsigned; /* imin/imax are uint64 bit patterns (uint64 dtype) */
	int64_t imin;     /* exact min/max for integer, bool and pointer dtypes */
	int64_t imax;
};

/* Derived address summary of a load/store record. */
struct fp_dbg_addr_summary {
	uint64_t lanes; /* elements of the pointer tensor */
	uint64_t active_lane_count;
	uint32_t status;    /* enum fp_dbg_addr_status */
	bool has_addresses; /* active_lane_count > 0: the four addresses are valid */
	uint64_t first_addr;
	uint64_t last_addr;
	uint64_t min_addr;
	uint64_t max_addr;
	uint64_t address_span_bytes; /* max - min + pointee size; 0 without active lanes */
};

/** Kind of the record (word 0 bits 16-23). */
FP_EXTERN enum fp_dbg_kind fp_dbg_record_kind(const struct fp_dbg_record *rec);

/** Dtype (pointee dtype for address records). */
FP_EXTERN enum fp_dtype fp_dbg_record_dtype(const struct fp_dbg_record *rec);

/**
 * Shape as recorded: writes up to 3 dims into `dims` and returns how many (0 for a scalar).
 * `*flattened` (if not NULL) says the true rank exceeded 3 or a dim did not fit, and dims[0]
 * holds numel instead; `*ndim` (if not NULL) gets the recorded rank.
 */
FP_EXTERN unsigned fp_dbg_record_shape(const struct fp_dbg_record *rec, uint64_t dims[3],
				       bool *flattened, unsigned *ndim);

/** Summary of a value record (zeroed for other kinds). */
FP_EXTERN void fp_dbg_record_value_summary(const struct fp_dbg_record *rec,
					   struct fp_dbg_value_summary *out);

/** Summary of a load/store record (zeroed for value records). */
FP_EXTERN void fp_dbg_record_addr_summary(const struct fp_dbg_record *rec,
					  struct fp_dbg_addr_summary *out);

/** Dump offset in words into the arena, or FP_DBG_NO_DUMP. */
FP_EXTERN uint64_t fp_dbg_record_dump_offset(const struct fp_dbg_record *rec);

/** "value", "load", "store" or "unknown". Static storage. */
FP_EXTERN const char *fp_dbg_kind_name(enum fp_dbg_kind kind);

/** "complete", "block_pointer", "tensor_descriptor", "unsupported" or "unknown". */
FP_EXTERN const char *fp_dbg_addr_status_name(uint32_t status);

/* ---- reports -------------------------------------------------------------------------------- */

/*
 * What fp_dbg_write_reports() wrote. Caller-owned: fp_dbg_outputs_init() before the call,
 * fp_dbg_outputs_release() after (it frees the paths). Each path is NULL when that output was
 * not written (not requested, or refused).
 */
struct fp_dbg_outputs {
	char *txt;               /* <stem>.txt */
	char *json;              /* <stem>.json */
	char *op_log_txt;        /* <stem>_op_log.txt */
	char *op_log_json;       /* <stem>_op_log.json */
	char *raw;               /* <stem>_raw_records.txt (launch export_raw_records) */
	char *artifacts_dir;     /* <stem>_artifacts (level 2 / addr_level 2 with dumps) */
	char *tensor_index;      /* <stem>_artifacts/tensor_index.json */
	size_t artifact_count;   /* .npy files written */
	uint64_t overflow_count; /* records that did not fit */
	uint64_t dump_overflow;  /* dump words that did not fit */
	bool complete;           /* no overflow of any kind */
};

/** Empty outputs (all paths NULL). */
FP_EXTERN void fp_dbg_outputs_init(struct fp_dbg_outputs *out);

/** Free the paths and return to the empty state. NULL is a no-op. */
FP_EXTERN void fp_dbg_outputs_release(struct fp_dbg_outputs *out);

/*
 * Launch description (JSON, written by the Python side per launch; documented in
 * docs/debugger-report-schema.md, "Launch JSON"). Parsed once, checked against a run
 * (grid product = P).
 */
struct fp_dbg_launch; /* opaque */

/**
 * Parse a launch JSON for `run`. Returns FP_OK and *out (free with fp_dbg_launch_free()),
 * FP_EFORMAT (diag: "launch:" message, offset/line/col in the launch JSON; also when the grid
 * does not multiply to the run's program count), FP_ENOMEM or FP_EINVAL.
 */
FP_EXTERN int fp_dbg_launch_parse(const struct fp_dbg_run *run, const char *launch_json, size_t len,
				  struct fp_dbg_launch **out, struct fp_diag *diag);

/** Free a parsed launch. NULL is a no-op. */
FP_EXTERN void fp_dbg_launch_free(struct fp_dbg_launch *launch);

/**
 * Write one report format to an open stream: `format` is "txt", "json", "op_log_txt",
 * "op_log_json" or "raw" (the writer table; see docs/debugger-report-schema.md). The stream is
 * not closed. Returns FP_OK, FP_ENOENT (unknown format), FP_EIO, FP_ENOMEM or FP_ELIMIT.
 */
FP_EXTERN int fp_dbg_write_format(const struct fp_dbg_run *run, const struct fp_dbg_launch *launch,
				  const char *format, FILE *f, struct fp_diag *diag);

/**
 * Write every report the launch asks for into its `output_dir`: <stem>.txt, <stem>.json,
 * <stem>_op_log.txt, <stem>_op_log.json always; <stem>_raw_records.txt when
 * `export_raw_records` is true; <stem>_artifacts/ (.npy files and tensor_index.json) when the
 * run holds level-2 dumps. `out` (initialised by the caller) receives the written paths and the
 * overflow facts even when the call fails part way.
 *
 * Returns FP_OK; FP_EOVERFLOW when the run holds level-2 dumps but its records or dump arena
 * overflowed: the summary reports are still written (marked incomplete) and listed in `out`, but
 * no artifact is, and `diag->msg` says why; FP_EFORMAT (bad launch JSON), FP_EIO (diag names the
 * path), FP_ENOMEM, FP_ELIMIT, FP_EINVAL.
 */
FP_EXTERN int fp_dbg_write_reports(const struct fp_dbg_run *run, const char *launch_json,
				   size_t len, struct fp_dbg_outputs *out, struct fp_diag *diag);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_DEBUG_H */
