/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Debugger's host side: decode a record buffer (docs/formats/record-format.md, format v1) together
 * with the rewriter's site table into an in-memory run, and write the reports of that run
 * (statement report .txt/.json, op log .txt/.json, raw records, level-2 .npy artifacts; the JSON
 * schema is docs/formats/debugger-report-schema.md). The decoder validates every header word and every
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

/* ---- the record buffer format (normative text: docs/formats/record-format.md) ----------------------- */

#define FP_DBG_MAGIC UINT64_C(0x0031764742445046) /* "FPDBGv1\0" as a little-endian u64 */
#define FP_DBG_FORMAT_VERSION 1
#define FP_DBG_HEADER_WORDS 8
#define FP_DBG_RECORD_WORDS 8
#define FP_DBG_FLAG_DUMP_ARENA (1u << 0) /* header word 1, bits 48-63: dump arena present */
/* header word 1, bits 48-63: a check area (extended header, tensor table, check slots) lies
 * between the header and the record slots (docs/formats/record-format.md, "Check area") */
#define FP_DBG_FLAG_CHECKS (1u << 1)
#define FP_DBG_EXT_WORDS 8               /* the extended header: words 8-15 */
#define FP_DBG_ENTRY_WORDS 4             /* a tensor-table entry */
#define FP_DBG_SLOT_WORDS 32             /* a check slot */
#define FP_DBG_SLOT_PROGRAMS 8           /* programs a check slot lists */
#define FP_DBG_MAX_PARAMS 4096u          /* tensor-table entries (kernel parameters) */
#define FP_DBG_MAX_CHECKS 65536u         /* check slots of one kernel */
#define FP_DBG_SHAPE_FLATTENED (1u << 0) /* record word 0, bits 36-39: dims hold [numel] */
/* record word 0, bits 36-39: closed-form record (words 2-7 hold the scalars of index arithmetic;
 * fp_dbg_decode() expands it into the ordinary words and clears the flag) */
#define FP_DBG_REC_CLOSED (1u << 1)
/* Record word 0 flags bit 2 (value records): a counts-only record (check mode's nan/inf checks):
 * word 2 holds the NaN and Inf counts, word 3 says "no dump", everything else is 0 and means
 * "not recorded" (no zero count, sum, min or max). */
#define FP_DBG_REC_COUNTS (1u << 2)
#define FP_DBG_NO_DUMP UINT64_MAX /* fp_dbg_record_dump_offset(): no dump */

/* ---- sizing a launch's record buffer: the one decision every launch path takes -------------- */

#define FP_DBG_MAX_RECORD_BYTES \
	(INT64_C(256) << 20)                      /* record slots of a buffer sized from a launch */
#define FP_DBG_MAX_DUMP_WORDS (INT64_C(16) << 20) /* a dump arena sized from a launch */
#define FP_DBG_DUMP_WORDS_PER_RECORD 4096         /* arena words wanted per dumping record */

/* What sizes one launch's record buffer. */
struct fp_dbg_buffer_spec {
	int64_t programs;                 /* the grid's product (>= 0) */
	int64_t records_per_program;      /* the sites' executions per program (loop trips) */
	int64_t dump_records_per_program; /* those of sites that dump */
	int64_t record_capacity; /* record slots shared by the programs; < 0: from the launch */
	int64_t dump_capacity;   /* words of the dump arena; < 0: from the launch */
	uint32_t nsites;         /* the twin's sites (header word 7) */
	uint32_t nparams;        /* with checks: tensor-table entries (the kernel's parameters) */
	uint32_t nchecks;        /* check slots; 0: no check area */
	bool records;            /* the twin writes record slots (false: check mode) */
	bool dumps;              /* the twin dumps (it has an arena, even of 0 words) */
	bool suppress;           /* lanes found out of bounds are suppressed (ext word 10) */
};

/* The buffer fp_dbg_buffer_layout() decides. */
struct fp_dbg_buffer_layout {
	int64_t slots;        /* record slots per program (header word 2) */
	int64_t arena_words;  /* words of the dump arena (header word 6) */
	int64_t prefix_words; /* where the record slots start: the header and the check area */
	int64_t total_words;  /* the whole buffer */
	size_t host_words;    /* words the host writes: the header, and the extended header and the
			       * tensor table of a twin with checks (check slots start zeroed) */
};

/**
 * Size a launch's record buffer: record slots per program (`record_capacity` shared by the
 * programs, else the sites' needs within FP_DBG_MAX_RECORD_BYTES; none in check mode), the dump
 * arena (`dump_capacity`, else FP_DBG_DUMP_WORDS_PER_RECORD per dumping record within
 * FP_DBG_MAX_DUMP_WORDS, at least 1 word), the check area and the total. Both of the Debugger's
 * launch paths (the Python one and the replayed one) size through this. FP_OK, FP_EINVAL (NULL,
 * a negative count, nparams over FP_DBG_MAX_PARAMS or nchecks over FP_DBG_MAX_CHECKS) or
 * FP_ELIMIT (the buffer does not fit in 63 bits of bytes).
 */
FP_EXTERN int fp_dbg_buffer_layout(const struct fp_dbg_buffer_spec *spec,
				   struct fp_dbg_buffer_layout *out);

/**
 * Write the words the host puts at the start of the buffer (`layout->host_words` of them, into
 * `words`, which holds `cap`): the header and, with checks, the extended header and a zeroed
 * tensor table (fp_dbg_table_entry() fills its entries, FP_DBG_ENTRY_WORDS per parameter, from
 * word 16). FP_OK, FP_EINVAL (NULL) or FP_ELIMIT (`cap` too small).
 */
FP_EXTERN int fp_dbg_buffer_header(const struct fp_dbg_buffer_spec *spec,
				   const struct fp_dbg_buffer_layout *layout, int64_t *words,
				   size_t cap);

/**
 * A tensor argument's tensor-table entry (docs/formats/record-format.md, "Tensor table"): its
 * view's first and past-the-end byte (fp_dbg_arg_set_view() of data_ptr, element_size, shape and
 * strides), then its storage's [storage_ptr, storage_ptr + storage_bytes) when `has_storage`,
 * else (or for a storage past 2^64) the view again. The one place an entry is made. FP_OK;
 * FP_EINVAL or FP_ELIMIT (as fp_dbg_arg_set_view()) leave `out` all zero: not a tensor the
 * checks know.
 */
FP_EXTERN int fp_dbg_table_entry(uint64_t data_ptr, uint32_t element_size, size_t ndim,
				 const int64_t *shape, const int64_t *strides, bool has_storage,
				 uint64_t storage_ptr, uint64_t storage_bytes, uint64_t out[4]);

/* Version of the JSON reports written by fp_dbg_write_reports() (field `schema_version`). */
#define FP_DBG_SCHEMA_VERSION 1

/* Site and record kinds; the values are the record's kind field. */
enum fp_dbg_kind {
	FP_DBG_KIND_VALUE = 1,  /* numerical summary of a tensor value */
	FP_DBG_KIND_LOAD = 2,   /* address summary of a tl.load (or a descriptor load, gather) */
	FP_DBG_KIND_STORE = 3,  /* address summary of a tl.store (or a descriptor store, scatter) */
	FP_DBG_KIND_ATOMIC = 4, /* address summary of a tl.atomic_* (reads and writes) */
	/* the memory a tensor descriptor made on the device can address (its whole shape): active
	 * lanes count its elements (capped at 2^32 - 1), not the lanes of the record's shape */
	FP_DBG_KIND_DESCRIPTOR = 5,
};

/* Load, store, atomic or descriptor: a record whose words 2-7 are an address summary. */
#define FP_DBG_KIND_IS_ADDR(k) ((k) >= FP_DBG_KIND_LOAD && (k) <= FP_DBG_KIND_DESCRIPTOR)

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

/*
 * A statement of the site table: one Triton source statement inside the collected region, or
 * inside a @triton.jit helper called from it (then `frame` names the call site, and `line` is a
 * line of the helper's file, fp_dbg_run_frame(run, frame)->file).
 */
struct fp_dbg_statement {
	uint32_t id;           /* statement id of the site table */
	uint32_t line;         /* 1-based line in the user's file (the helper's, in a frame) */
	uint32_t col;          /* column as the rewriter gave it */
	uint32_t end_line;     /* last line of the statement (>= line) */
	uint32_t loop_depth;   /* loops around it inside the kernel */
	uint32_t frame;        /* 0: the kernel's own body; else the helper call site (frame id) */
	const char *source;    /* statement text, NUL-terminated */
	const uint32_t *sites; /* indices of its sites (fp_dbg_run_site()), by ascending site id */
	size_t nsites;
};

/*
 * A name a site reads that an earlier statement defined (site table `reads`). Inside a helper,
 * a parameter the caller passed a variable stands for that variable: `frame`/`var` say which
 * (`frame` is then the caller's frame); otherwise `frame` is the site's own and `var` = `name`.
 */
struct fp_dbg_read {
	const char *name;
	uint32_t statement; /* index of the defining statement, or UINT32_MAX if none was found */
	uint32_t frame;     /* frame of the variable read */
	const char *var;    /* its name there */
};

/*
 * A @triton.jit helper call site the twin observes inside (site table `frames`). Frame ids are
 * 1..n, parents before their callees; frame 0 is the kernel's own body and has no entry.
 */
struct fp_dbg_frame {
	uint32_t id;
	uint32_t parent;         /* calling frame (0: the kernel's body) */
	uint32_t depth;          /* frames from the kernel to this one: 1 for a direct call */
	uint32_t call_line;      /* line of the calling statement (in call_file) */
	uint32_t call_col;       /* its column */
	const char *function;    /* the helper's name */
	const char *file;        /* the helper's file (its statements' lines are lines of it) */
	const char *call_file;   /* the calling statement's file */
	const char *call_source; /* the calling statement's text */
};

/* What an unobserved entry is (site table `unobserved`). */
enum fp_dbg_unobserved_what {
	FP_DBG_UNOBSERVED_MEMORY = 1,    /* a load, store, atomic or descriptor access */
	FP_DBG_UNOBSERVED_STATEMENT = 2, /* a statement (or a helper call) */
};

/* Something the region holds that the twin does not observe, and why (the coverage account). */
struct fp_dbg_unobserved {
	enum fp_dbg_unobserved_what what;
	uint32_t line;
	uint32_t col;
	uint32_t frame; /* as in fp_dbg_statement */
	const char *source;
	const char *reason;
};

/*
 * The coverage account of a run (docs/guide/debugger.md, "Coverage"): memory sites are the loads,
 * stores, atomics and descriptor accesses of the observed code (helpers included, once per call
 * site), observed ones those with an address site; statements are the statements with something
 * to observe at the run's levels, observed ones those with a site (a statement whose accesses
 * are all unobserved entries counts once, as not observed).
 */
struct fp_dbg_coverage {
	uint64_t memory_sites;
	uint64_t memory_sites_observed;
	uint64_t statements;
	uint64_t statements_observed;
};

/*
 * What a value site is to the findings analyses (site table `role`, docs/guide/debugger.md,
 * "Findings"). An ordinary result has none; the others are operands the rewriter observes so
 * that a rule can be checked on them.
 */
enum fp_dbg_role {
	FP_DBG_ROLE_NONE = 0,
	FP_DBG_ROLE_LOADED = 1, /* the result of `x = tl.load(...)`: its NaN/Inf came from memory */
	FP_DBG_ROLE_CAST_SRC = 2, /* the operand of .to(<fp16|bf16|fp8>); see `target_dtype` */
	FP_DBG_ROLE_DIVISOR = 3,  /* the denominator of `/`, tl.fdiv, tl.div_rn */
	FP_DBG_ROLE_SQRT_ARG = 4, /* the argument of tl.sqrt, tl.sqrt_rn, tl.rsqrt */
	FP_DBG_ROLE_LOG_ARG = 5,  /* the argument of tl.log, tl.log2 */
};

/* What the masked-off lanes of a load hold (site table `other`; FP_DBG_ROLE_LOADED sites). */
enum fp_dbg_other {
	FP_DBG_OTHER_NONE = 0, /* no `other`: zeros (Triton fills masked-off lanes with 0) */
	FP_DBG_OTHER_FINITE = 1,
	FP_DBG_OTHER_NAN = 2,
	FP_DBG_OTHER_INF = 3,
	FP_DBG_OTHER_UNKNOWN = 4, /* an expression the rewriter could not evaluate */
};

/*
 * A check by reference (site table `checks`): apply the rule of `role` to the latest value of
 * the variable `name` before the site's record, in the same program. The rewriter uses it when
 * the operand is a variable the region already observes, so that no record is spent on it.
 */
struct fp_dbg_check {
	enum fp_dbg_role role;
	enum fp_dtype target_dtype; /* FP_DBG_ROLE_CAST_SRC: the dtype converted to */
	const char *name;
	uint32_t frame;  /* frame of the variable (as in fp_dbg_read) */
	const char *var; /* its name there */
};

/*
 * A site: one observation point (a value, or the addresses of a load or store). Sites are
 * indexed 0..n-1 in ascending id order; ids are 1..n (dense, as the record format requires).
 */
struct fp_dbg_site {
	uint32_t id;        /* site id written in the records (>= 1) */
	uint32_t statement; /* index of its statement (fp_dbg_run_statement()) */
	uint32_t frame;     /* its statement's frame */
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
	/* Inputs of the findings analyses, from the site table (optional there; zero when absent). */
	enum fp_dbg_role role;      /* value sites */
	enum fp_dtype target_dtype; /* FP_DBG_ROLE_CAST_SRC; FP_DTYPE_UNKNOWN when not given */
	enum fp_dbg_other other;    /* FP_DBG_ROLE_LOADED */
	uint32_t load_site;         /* FP_DBG_ROLE_LOADED: index of its load site, or UINT32_MAX */
	const char *const *base_params; /* load/store: parameters the pointer may derive from */
	size_t nbase_params;
	const struct fp_dbg_check *checks; /* rules applied to earlier values at this site */
	size_t nchecks;
	/* Memory sites, from the site table (optional there): */
	const char *op;   /* FP_DBG_KIND_ATOMIC: "add", "cas", "xchg", ... ("" when not given) */
	const char *form; /* "pointer", "block_pointer", "tensor_descriptor" ("" when not given) */
	/* block pointers and descriptors: what a load gives the lanes outside the shape (masked
	 * off): "zero" or "nan"; "" when not given */
	const char *padding;
	const char *desc_param; /* a host TensorDescriptor's parameter, or NULL */
	/* value sites: the statement writes an infinity literal (float("-inf")...): its Inf
	 * values are meant, not an origin (site table `inf_literal`) */
	bool inf_literal;
};

/*
 * The rule a check slot applies (site table `check_slots[].rule`; docs/guide/debugger.md,
 * "Findings"). The device evaluates it per instance (program, execution) and folds what it
 * found into the slot.
 */
enum fp_dbg_rule {
	FP_DBG_RULE_UNKNOWN = 0,
	FP_DBG_RULE_BOUNDS = 1,            /* lanes of an access outside the candidates' views */
	FP_DBG_RULE_DESCRIPTOR_EXTENT = 2, /* a device descriptor addressing outside its tensor */
	FP_DBG_RULE_NAN = 3,               /* NaN born in a statement (no read held NaN) */
	FP_DBG_RULE_INF = 4,               /* Inf born in a statement */
	FP_DBG_RULE_NAN_MEM = 5,           /* NaN in the lanes a load read from memory */
	FP_DBG_RULE_INF_MEM = 6,           /* Inf in the lanes a load read from memory */
	FP_DBG_RULE_DIV_ZERO = 7,          /* zeros in a divisor */
	FP_DBG_RULE_DIV_TINY = 8,          /* nonzero divisor values below the smallest normal */
	FP_DBG_RULE_SQRT_NEGATIVE = 9,     /* negative arguments of sqrt/rsqrt */
	FP_DBG_RULE_LOG_NEGATIVE = 10,     /* negative arguments of log/log2 */
	FP_DBG_RULE_CAST_OVERFLOW = 11,    /* a narrowing cast's finite values beyond its range */
	FP_DBG_RULE_CAST_FLUSH = 12,       /* ... at least half the nonzero values flush to zero */
	FP_DBG_RULE_CAST_SUBNORMAL = 13,   /* ... at least half go subnormal */
};

/*
 * One check slot: what the site table says of it and what the device folded into it. Strings
 * are the run's.
 */
struct fp_dbg_check_slot {
	enum fp_dbg_rule rule;
	uint32_t statement;       /* index of the statement (fp_dbg_run_statement()) */
	uint32_t site;            /* index of its site, or UINT32_MAX */
	const char *subject;      /* the pointer, value or operand the rule is about */
	const char *const *cands; /* bounds: parameters the pointer may derive from */
	size_t ncands;
	const char *const *reads; /* nan/inf: the names the statement reads (its own variables) */
	size_t nreads;
	const char *loop_var;       /* the innermost `for` loop's variable around it, or NULL */
	uint32_t loop_line;         /* that loop's line */
	enum fp_dtype target_dtype; /* casts: the dtype converted to */
	/* bounds: the access's lanes outside the views are not performed (the site table's
	 * "suppressed": only where the rewriter could mask the access itself) */
	bool suppressed;
	/* nan/inf of a value a store or atomic writes: the parameters the pointer may derive from
	 * (the site table's "stores"): where a NaN or Inf it holds went */
	const char *const *stores;
	size_t nstores;
	/* the device's words */
	uint64_t fired;         /* instances where the rule fired */
	uint64_t count;         /* elements (lanes) involved, summed over them */
	bool has_range;         /* lo/hi hold something */
	uint64_t lo, hi;        /* bounds: lowest offending address, highest one's end */
	bool has_first;         /* the first instance (in program, sequence order) is known */
	uint64_t first_program; /* its program (linear id) */
	uint32_t first_seq;     /* its place in that program: the program's record counter */
	uint64_t first_lane;    /* its first offending lane (row-major) */
	uint64_t first_value;   /* that lane's address (bounds) or value as float64 bits */
	int64_t first_iter;     /* the loop variable's value there (loop_var only) */
	uint64_t descended;     /* nan/inf: instances holding it that a read held too */
	uint64_t descended_elems;
	uint64_t programs[FP_DBG_SLOT_PROGRAMS]; /* lowest programs where it fired, ascending */
	size_t nprograms;
	bool programs_more; /* more programs fired than listed */
	bool unobservable;  /* bounds: an access the check could not see (word 13) */
};

/* A tensor-table entry: the view and the storage of a kernel parameter's tensor ([lo, hi)). */
struct fp_dbg_table_entry {
	uint64_t view_lo, view_hi, storage_lo, storage_hi;
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
	/*
	 * Programs that used all S slots: only they can have dropped records. The buffer counts
	 * dropped records per run (overflow_count), not per site, so a site of an overflowed run
	 * may have had more records than it shows, and one without records may have had some.
	 */
	uint64_t full_programs;
	/* the check area (docs/formats/record-format.md, "Check area"): */
	bool has_checks;     /* header flag FP_DBG_FLAG_CHECKS */
	bool suppress;       /* lanes found out of bounds did not perform their access */
	uint64_t records_at; /* word where the record slots start (8 without a check area) */
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

/**
 * Number of statements; they are indexed in source order: by the (line, column) of the call
 * statements leading to them and then their own (line, column), so that a helper's statements
 * follow the statement that calls it; then frame, then id.
 */
FP_EXTERN size_t fp_dbg_run_statement_count(const struct fp_dbg_run *run);

/** Statement `i` in source order, or NULL if out of range. Borrowed. */
FP_EXTERN const struct fp_dbg_statement *fp_dbg_run_statement(const struct fp_dbg_run *run,
							      size_t i);

/** Number of helper call frames (ids 1..n). */
FP_EXTERN size_t fp_dbg_run_frame_count(const struct fp_dbg_run *run);

/** Frame `id` (1..n), or NULL (also for 0, the kernel's body). Borrowed. */
FP_EXTERN const struct fp_dbg_frame *fp_dbg_run_frame(const struct fp_dbg_run *run, uint32_t id);

/** Number of unobserved entries of the site table. */
FP_EXTERN size_t fp_dbg_run_unobserved_count(const struct fp_dbg_run *run);

/** Unobserved entry `i`, in site table order, or NULL. Borrowed. */
FP_EXTERN const struct fp_dbg_unobserved *fp_dbg_run_unobserved(const struct fp_dbg_run *run,
								size_t i);

/**
 * The run's coverage account. A load, store or atomic site whose every record says its
 * addresses are not observable (fp_dbg_run_site_unobservable()) counts as a memory site that
 * was not observed.
 */
FP_EXTERN void fp_dbg_run_coverage(const struct fp_dbg_run *run, struct fp_dbg_coverage *out);

/**
 * For a load, store or atomic site with records that all carry an address status other than
 * complete (a block pointer or descriptor the rewriter could not follow): that status; else 0
 * (FP_DBG_ADDR_COMPLETE). Reports list such sites as unobserved, with
 * fp_dbg_addr_status_reason().
 */
FP_EXTERN uint32_t fp_dbg_run_site_unobservable(const struct fp_dbg_run *run, size_t i);

/** Why addresses with `status` are not observable, in plain words. Static storage. */
FP_EXTERN const char *fp_dbg_addr_status_reason(uint32_t status);

/** The run's check slots; `*n` gets their count (0 without a check area). Borrowed. */
FP_EXTERN const struct fp_dbg_check_slot *fp_dbg_run_checks(const struct fp_dbg_run *run,
							    size_t *n);

/**
 * The kernel's parameter names (site table `params`, signature order) and, with a check area,
 * the tensor table the device checked against (one entry per parameter; all zero: not a
 * tensor of this launch). Returns their count; *table is NULL without a check area. Borrowed.
 */
FP_EXTERN size_t fp_dbg_run_params(const struct fp_dbg_run *run, const char *const **names,
				   const struct fp_dbg_table_entry **table);

/** The name of a rule ("bounds", "nan", ...), "unknown" for others. Static storage. */
FP_EXTERN const char *fp_dbg_rule_name(enum fp_dbg_rule rule);

/** The rule a site table names (fp_dbg_rule_name()'s inverse); FP_DBG_RULE_UNKNOWN for others. */
FP_EXTERN enum fp_dbg_rule fp_dbg_rule_find(const char *name);

/** The kind of finding a rule reports; 0 for FP_DBG_RULE_UNKNOWN and values beyond the last. */
FP_EXTERN enum fp_dbg_finding_kind fp_dbg_rule_kind(enum fp_dbg_rule rule);

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
	/* a counts-only record (FP_DBG_REC_COUNTS): only the NaN and Inf counts (and what follows
	 * from them) were recorded; zero_count, sum, sumsq, mean, min and max are not known */
	bool counts_only;
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

/** "value", "load", "store", "atomic", "descriptor" or "unknown". Static storage. */
FP_EXTERN const char *fp_dbg_kind_name(enum fp_dbg_kind kind);

/** "complete", "block_pointer", "tensor_descriptor", "unsupported" or "unknown". */
FP_EXTERN const char *fp_dbg_addr_status_name(uint32_t status);

/* ---- findings (docs/guide/debugger.md, "Findings") ----------------------------------------------- */

/*
 * The findings analyses turn a decoded run (and the extents of the launch's tensor arguments)
 * into verdicts a kernel author can act on: out-of-bounds accesses, where NaN/Inf first appear,
 * precision loss on narrowing casts, division by zero and sqrt/log of negative values. They
 * only read the run; every rule is documented with what is exact and what is a bound.
 */

enum fp_dbg_finding_kind {
	FP_DBG_FINDING_OUT_OF_BOUNDS = 1,
	FP_DBG_FINDING_NAN_ORIGIN = 2,
	FP_DBG_FINDING_INF_ORIGIN = 3,
	FP_DBG_FINDING_DIVISION_BY_ZERO = 4,
	FP_DBG_FINDING_INVALID_DOMAIN = 5,
	FP_DBG_FINDING_PRECISION_LOSS = 6,
	/* a tensor descriptor whose shape and strides reach outside the tensor it was built from
	 * (host descriptors: checked at launch; device ones: at their creation) */
	FP_DBG_FINDING_DESCRIPTOR_EXTENT = 7,
};

/* Where an out-of-bounds access went, once it left the view its pointer derives from. */
enum fp_dbg_oob_where {
	FP_DBG_OOB_NONE = 0,
	FP_DBG_OOB_INSIDE_STORAGE = 1, /* still inside the same allocation: neighbouring data */
	FP_DBG_OOB_OTHER_STORAGE = 2,  /* inside the allocation of another argument */
	FP_DBG_OOB_OUTSIDE = 3,        /* outside every allocation the launch knows of */
};

/*
 * A tensor argument of the launch, by kernel parameter name: the bytes its view can address and
 * the bytes of its underlying storage (allocation). Ranges are half-open [lo, hi); an empty view
 * has lo == hi. storage_lo == storage_hi == 0: storage unknown (the view is used instead).
 */
struct fp_dbg_arg {
	const char *name; /* borrowed by fp_dbg_findings_new() for the findings' lifetime */
	uint64_t data_ptr;
	uint64_t view_lo, view_hi;
	uint64_t storage_lo, storage_hi;
	uint32_t element_size;
	/*
	 * A host tensor descriptor (triton.tools.tensor_descriptor.TensorDescriptor): the view is
	 * its base tensor's; [desc_lo, desc_hi) are the bytes its own shape and strides address
	 * from the same data_ptr (fp_dbg_arg_set_view() on them). `desc_text` describes them
	 * ("shape [64, 64], strides [64, 1]") for the message; borrowed like `name`.
	 */
	bool descriptor;
	uint64_t desc_lo, desc_hi;
	const char *desc_text;
};

/**
 * Set `arg->data_ptr`, `element_size`, `view_lo` and `view_hi` from a strided view: every
 * element i has byte offset sum(i_d * strides[d]) * element_size from `data_ptr`, so the view
 * spans from the smallest to the largest such offset plus one element (a bounding range; it
 * includes the gaps of a sliced or strided view). A dimension of size 0 makes the view empty.
 * Returns FP_OK, FP_EINVAL (NULL, element_size 0, a negative size) or FP_ELIMIT (the range does
 * not fit in 64 bits). `arg` is unchanged on failure.
 */
FP_EXTERN int fp_dbg_arg_set_view(struct fp_dbg_arg *arg, uint64_t data_ptr, uint32_t element_size,
				  size_t ndim, const int64_t *shape, const int64_t *strides);

/* At most this many program ids are listed per finding (the lowest ones). */
#define FP_DBG_FINDING_MAX_PROGRAMS FP_DBG_SLOT_PROGRAMS
/* fp_dbg_finding.execution when it is not known (check mode keeps no record per execution) */
#define FP_DBG_EXECUTION_UNKNOWN UINT32_MAX

/*
 * One finding: one rule that fired at one place (a check slot), aggregated on the device over
 * every instance (program, execution) where it did. Strings are owned by the findings object.
 */
struct fp_dbg_finding {
	enum fp_dbg_finding_kind kind;
	uint32_t statement; /* index of the statement (fp_dbg_run_statement()) */
	uint32_t site; /* index of its site, or UINT32_MAX (an operand with no site of its own) */
	uint64_t program; /* first program (linear id) where it happened */
	/* its execution of the statement there (from the records of a marker-mode run), or
	 * FP_DBG_EXECUTION_UNKNOWN */
	uint32_t execution;
	const char *loop_var; /* the innermost `for` loop's variable around it (NULL: none) */
	uint32_t loop_line;   /* that loop's line */
	int64_t loop_value;   /* loop_var's value in the first instance */
	uint64_t programs[FP_DBG_FINDING_MAX_PROGRAMS]; /* the lowest programs, ascending */
	size_t nprograms;                               /* entries of programs[] */
	bool programs_more; /* it happened in more programs than programs[] lists */
	uint64_t
		program_count; /* distinct programs: nprograms (a lower bound with programs_more) */
	uint64_t instance_count; /* instances (program, execution) where it happened */
	const char *message;     /* one paragraph in plain words, no trailing newline */
	const char *subject; /* the value or operand the rule is about ("x", "var + eps"), or "" */
	/* out_of_bounds */
	const char *param; /* parameter the pointer derives from (or the nearest one), or NULL */
	bool param_known;  /* `param` is the pointer's base (not a guess from the addresses) */
	/* the argument whose view or allocation the first offending address lies in (another
	 * tensor of the launch: "inside `V`"), or NULL */
	const char *other_param;
	enum fp_dbg_oob_where where;
	uint64_t address;      /* first offending address: first instance, first lane */
	uint64_t bytes_before; /* furthest reach before the view's first byte, over all instances */
	uint64_t bytes_past;   /* furthest reach past the view's last byte, over all instances */
	bool lanes_known;      /* lanes_out is known (always, with a check area) */
	uint64_t lanes_out;    /* active lanes outside the view, summed over the instances */
	uint64_t suppressed;   /* of those, lanes that did not perform their access */
	uint64_t view_lo, view_hi, storage_lo, storage_hi; /* of `param` (0 when NULL) */
	/* numerical findings */
	uint64_t count;             /* NaN/Inf/zero elements, summed; 0 when the rule counts none */
	bool count_is_lower_bound;  /* `count` is a lower bound (never, with a check area) */
	double value;               /* the first offending element's value */
	enum fp_dtype target_dtype; /* precision_loss: the dtype converted to */
	bool from_memory;           /* nan/inf origin at a load: the data already held it */
	/* from_memory: the parameters the load's pointer may derive from (the site table's
	 * "cands"; borrowed from the run): whose memory held it */
	const char *const *cands;
	size_t ncands;
	/* nan/inf origin: later values of this launch that held it because a read did, and loads
	 * of it (not findings of their own) */
	uint64_t descendants;
};

struct fp_dbg_findings; /* opaque; owns the findings and their strings */

/**
 * Run every findings analysis on `run`. `args`/`nargs`: the launch's tensor arguments (NULL/0:
 * out-of-bounds checks are skipped, the others still run); names and ranges are copied.
 * Findings are ordered by kind (enum order), then statement (source order), then site.
 * Returns FP_OK and *out (free with fp_dbg_findings_free()), FP_ENOMEM, FP_ELIMIT (more
 * programs x slots than can be indexed) or FP_EINVAL.
 */
FP_EXTERN int fp_dbg_findings_new(const struct fp_dbg_run *run, const struct fp_dbg_arg *args,
				  size_t nargs, struct fp_dbg_findings **out, struct fp_diag *diag);

#define FP_DBG_MAX_ARGS 4096u /* tensor arguments of one launch */

/**
 * Same, with the tensor arguments read from a launch JSON's `args` member (schema in
 * docs/formats/debugger-report-schema.md; entries of kind "tensor" with data_ptr, element_size, shape
 * and strides count, others are skipped; no `args`: no out-of-bounds checks). Returns what
 * fp_dbg_findings_new() returns, or FP_EFORMAT for a malformed `args` (diag "launch: args[i]...").
 */
FP_EXTERN int fp_dbg_findings_from_launch(const struct fp_dbg_run *run, const char *launch_json,
					  size_t len, struct fp_dbg_findings **out,
					  struct fp_diag *diag);

/** Free the findings. NULL is a no-op. */
FP_EXTERN void fp_dbg_findings_free(struct fp_dbg_findings *f);

/**
 * Keep only the findings whose kind has its bit (1 << kind) set in `kinds`, in their order
 * (check mode reports what its checks asked for). NULL is a no-op.
 */
FP_EXTERN void fp_dbg_findings_keep(struct fp_dbg_findings *f, unsigned kinds);

/** Number of findings (0 for NULL). */
FP_EXTERN size_t fp_dbg_findings_count(const struct fp_dbg_findings *f);

/** Finding `i`, or NULL when out of range. Borrowed. */
FP_EXTERN const struct fp_dbg_finding *fp_dbg_findings_at(const struct fp_dbg_findings *f,
							  size_t i);

/** Tensor arguments the findings were computed with (copies). `*n` gets their count. */
FP_EXTERN const struct fp_dbg_arg *fp_dbg_findings_args(const struct fp_dbg_findings *f, size_t *n);

/** "out_of_bounds", "nan_origin", "inf_origin", "division_by_zero", "invalid_domain",
 *  "precision_loss", "descriptor_extent", or "unknown". Static storage. */
FP_EXTERN const char *fp_dbg_finding_kind_name(enum fp_dbg_finding_kind kind);

/* ---- the registry of check mode's checks (src/debug/checks.c) ------------------------------ */

/* What a check needs the twin to record (fp_dbg_check_info.records). */
#define FP_DBG_CHECK_ADDRESSES (1u << 0)   /* the addresses of loads and stores */
#define FP_DBG_CHECK_VALUES (1u << 1)      /* values (NaN and Inf counts suffice alone) */
#define FP_DBG_CHECK_FULL_VALUES (1u << 2) /* values with their full summaries */

/* One check a user may ask for (flagprism debug --check, configure(check=...)). */
struct fp_dbg_check_info {
	const char *name;    /* "bounds", "nan", ... */
	unsigned kinds;      /* 1u << each enum fp_dbg_finding_kind it reports */
	unsigned records;    /* FP_DBG_CHECK_* */
	const char *summary; /* one line: what it finds */
};

/** Checks in the registry (their order is the order lists print them in). */
FP_EXTERN size_t fp_dbg_check_count(void);

/** Check `i`, or NULL past the last. Static storage. */
FP_EXTERN const struct fp_dbg_check_info *fp_dbg_check_at(size_t i);

/** The check named by name[0..len), or NULL. */
FP_EXTERN const struct fp_dbg_check_info *fp_dbg_check_find(const char *name, size_t len);

/**
 * Every check's name joined by `sep` (NULL: ", "), into `buf` of `cap` bytes, NUL-terminated and
 * cut to fit; returns the length the whole list needs (as snprintf does), so a caller can tell it
 * was cut. For messages that list the checks.
 */
FP_EXTERN size_t fp_dbg_check_names(char *buf, size_t cap, const char *sep);

/** "inside_storage", "other_storage", "outside_allocations" or "none". Static storage. */
FP_EXTERN const char *fp_dbg_oob_where_name(enum fp_dbg_oob_where where);

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
	uint64_t dump_cursor;    /* dump words the launch asked for (header word 5) */
	bool complete;           /* no overflow of any kind */
};

/** Empty outputs (all paths NULL). */
FP_EXTERN void fp_dbg_outputs_init(struct fp_dbg_outputs *out);

/** Free the paths and return to the empty state. NULL is a no-op. */
FP_EXTERN void fp_dbg_outputs_release(struct fp_dbg_outputs *out);

/*
 * Launch description (JSON, written by the Python side per launch; documented in
 * docs/formats/debugger-report-schema.md, "Launch JSON"). Parsed once, checked against a run
 * (grid product = P), into one launch structure that the analyses and the writers share.
 */
struct fp_dbg_launch; /* opaque */

/**
 * Parse a launch JSON for `run`, its tensor arguments (`args`) included. Returns FP_OK and *out
 * (free with fp_dbg_launch_free()), FP_EFORMAT (diag: "launch:" message, offset/line/col in the
 * launch JSON; also when the grid does not multiply to the run's program count), FP_ELIMIT
 * (more than FP_DBG_MAX_ARGS arguments), FP_ENOMEM or FP_EINVAL. Runs no analysis.
 */
FP_EXTERN int fp_dbg_launch_parse(const struct fp_dbg_run *run, const char *launch_json, size_t len,
				  struct fp_dbg_launch **out, struct fp_diag *diag);

/**
 * Run the findings analyses on `run` for a parsed launch: out-of-bounds checks against its
 * tensor arguments, and in check mode only the kinds its `checks` ask for. Returns what
 * fp_dbg_findings_new() returns; *out is freed with fp_dbg_findings_free().
 */
FP_EXTERN int fp_dbg_launch_findings(const struct fp_dbg_run *run,
				     const struct fp_dbg_launch *launch,
				     struct fp_dbg_findings **out, struct fp_diag *diag);

/** Free a parsed launch. NULL is a no-op. */
FP_EXTERN void fp_dbg_launch_free(struct fp_dbg_launch *launch);

/**
 * Write one report format to an open stream: `format` is "txt", "json", "op_log_txt",
 * "op_log_json" or "raw" (the writer table; see docs/formats/debugger-report-schema.md), for a parsed
 * launch and its findings (fp_dbg_launch_findings(); NULL: a report without findings). The
 * writers never parse or analyse. The stream is not closed. Returns FP_OK, FP_ENOENT (unknown
 * format), FP_EIO, FP_ENOMEM or FP_ELIMIT.
 */
FP_EXTERN int fp_dbg_write_format(const struct fp_dbg_run *run, const struct fp_dbg_launch *launch,
				  const struct fp_dbg_findings *findings, const char *format,
				  FILE *f, struct fp_diag *diag);

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
