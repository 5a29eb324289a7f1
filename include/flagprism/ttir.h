/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Triton IR (TTIR) text: an operation table with resolved source locations, and per-program
 * cost estimates built from it. The input is what `kernel.asm["ttir"]` holds (MLIR textual form
 * with debug locations; TTGIR parses too). This is not a general MLIR parser: it records, for
 * every operation, what the Debugger's op log and the Profiler's estimates need (name, SSA
 * results and their types, operands, the printed type signature, the source location behind
 * `#loc` aliases, the Python variable name, and the region nesting), and nothing else. It never
 * verifies the IR and never looks at a GPU.
 *
 * Ownership: fp_ttir_parse() returns a heap object; every pointer reachable from it (strings,
 * arrays, struct fp_ttir_op / fp_ttir_func) is borrowed and stays valid until fp_ttir_free().
 * The object is immutable after parsing, so concurrent readers need no lock.
 */
#ifndef FLAGPRISM_TTIR_H
#define FLAGPRISM_TTIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flagprism/export.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "No such index" for size_t results, and "none" for the uint32_t index fields below. */
#define FP_TTIR_NPOS SIZE_MAX
#define FP_TTIR_NONE UINT32_MAX

/* Defaults for struct fp_ttir_limits (a 0 field means "use the default"). */
#define FP_TTIR_DEFAULT_MAX_BYTES ((size_t)64 << 20)  /* input text */
#define FP_TTIR_DEFAULT_MAX_OPS ((size_t)1 << 20)     /* operations */
#define FP_TTIR_DEFAULT_MAX_ALIASES ((size_t)1 << 20) /* #loc alias definitions */
#define FP_TTIR_DEFAULT_MAX_NESTING 64u /* nested regions (module, func, scf.for...) */
#define FP_TTIR_MAX_NESTING_CAP 1024u   /* larger max_nesting values are clamped */
#define FP_TTIR_MAX_RANK 16u            /* tensor rank */

/* Caps on what one parse may consume; exceeding one fails with FP_ELIMIT. */
struct fp_ttir_limits {
	size_t max_bytes;
	size_t max_ops;
	size_t max_aliases;
	uint32_t max_nesting;
};

/*
 * A source position. `file` is NULL (and line/col 0) for loc(unknown) or a missing location.
 * Columns are copied as printed (Triton 3.6: 0-based and relative to the dedented function
 * source; 3.8: 1-based absolute). `name` is the NameLoc name wrapping this position, which Triton
 * sets to the Python variable the value was assigned to, or NULL.
 */
struct fp_ttir_loc {
	const char *file;
	uint32_t line;
	uint32_t col;
	const char *name;
};

/*
 * A type as printed, decomposed. For `tensor<64x32x!tt.ptr<f16>>`: text is the whole string,
 * elem "!tt.ptr<f16>", rank 2, shape {64, 32}, numel 2048. A layout encoding after the element
 * type (TTGIR) is dropped from `elem`. Anything that is not a ranked tensor is a scalar: rank 0,
 * elem == text, numel 1. Dynamic dims (`?`) are -1 and make numel 0 ("unknown"); a product that
 * overflows is clamped to UINT64_MAX. A type that could not be determined has text "" and numel 0.
 */
struct fp_ttir_type {
	const char *text;
	const char *elem;
	uint32_t rank;
	const int64_t *shape; /* rank entries; NULL when rank is 0 */
	uint64_t numel;
};

/*
 * One SSA result. `name` is how later ops refer to it: "%x_5", or "%acc_25#2" for the third
 * result of a multi-result op printed as `%acc_25:3 = ...`.
 */
struct fp_ttir_value {
	const char *name;
	struct fp_ttir_type type;
};

/* Most frames kept per location (fp_ttir_op.frames). */
#define FP_TTIR_MAX_FRAMES 16

/* fp_ttir_op.flags: what the op is. */
#define FP_TTIR_OP_REGIONS (1u << 0)   /* owns regions: ops [index + 1, end) are nested in it */
#define FP_TTIR_OP_GENERIC (1u << 1)   /* printed in generic form: "tt.reduce"(%x) <{...}> ({ }) */
#define FP_TTIR_OP_CALLSITE (1u << 2)  /* location is a callsite (inlined code): loc != caller */
#define FP_TTIR_OP_CONST_INT (1u << 3) /* arith.constant with a scalar integer value (int_value) */
#define FP_TTIR_OP_MASKED (1u << 4)    /* tt.load/tt.store with a mask operand or boundaryCheck */
/* fp_ttir_op.flags: where the op is (set from every enclosing op, not only the parent). */
#define FP_TTIR_IN_FOR (1u << 8)             /* inside an scf.for body */
#define FP_TTIR_IN_WHILE (1u << 9)           /* inside either region of an scf.while */
#define FP_TTIR_IN_LOOP (1u << 10)           /* inside scf.for, scf.while or another loop op */
#define FP_TTIR_IN_IF (1u << 11)             /* inside a branch of scf.if */
#define FP_TTIR_IN_COMBINE_REGION (1u << 12) /* inside the combine region of tt.reduce/tt.scan */

/*
 * One operation, in textual (pre-order) order: an op with regions comes before the ops nested in
 * it, and those are exactly the indices [index + 1, end). Read-only.
 */
struct fp_ttir_op {
	uint32_t index;
	uint32_t parent; /* index of the op whose region holds this one; FP_TTIR_NONE at top */
	uint32_t region; /* which region of the parent (scf.if: 0 then, 1 else; scf.while: 0, 1) */
	uint32_t depth;  /* enclosing ops inside the function: 0 for the function body */
	uint32_t end;    /* one past the last nested op (index + 1 without regions) */
	uint32_t n_regions;    /* regions this op owns */
	uint32_t func;         /* function index; FP_TTIR_NONE for ops outside any tt.func */
	uint32_t flags;        /* FP_TTIR_OP_* and FP_TTIR_IN_* */
	const char *name;      /* "tt.load", "scf.for", "tt.reduce" (also for the generic form) */
	const char *func_name; /* enclosing function's name, or NULL */

	uint32_t n_results;
	const struct fp_ttir_value *results;
	/* SSA values the op uses, outside its regions, in textual order ("%x_4", "%am#1"). */
	uint32_t n_operands;
	const char *const *operands;
	/*
	 * The types printed after the op's last top-level ':' and before any '->' or 'to' (for most
	 * ops: the operand types). `tt.load %p : tensor<1024x!tt.ptr<f32>>` gives the pointer type,
	 * `tt.dot ... : A * B -> C` gives {A, B}, the generic form `: (A, B) -> R` gives {A, B}.
	 */
	uint32_t n_sig_types;
	const struct fp_ttir_type *sig_types;

	/*
	 * Source location. `loc` is the innermost position: for code inlined from a @triton.jit
	 * helper, the line inside the helper (or inside triton/language for tl.sum and co.).
	 * `caller` is the outermost call site, i.e. the line in the kernel's own source. Without a
	 * callsite both are the same position.
	 */
	struct fp_ttir_loc loc;
	struct fp_ttir_loc caller;
	/*
	 * Every frame of the location, innermost first: frames[0] is `loc`, frames[n_frames - 1]
	 * is `caller`, and between them the call sites of the @triton.jit functions the op was
	 * inlined through (a helper's line when the op comes from a tl.sum inside that helper).
	 * At most FP_TTIR_MAX_FRAMES; a deeper chain keeps its innermost frame and the outermost
	 * ones (the kernel's and its helpers' call sites are the outer frames).
	 */
	uint32_t n_frames;
	const struct fp_ttir_loc *frames;
	/* The Python variable name: loc.name if set, else caller.name, else NULL. */
	const char *var_name;

	const char *callee; /* tt.call: the called function's name; else NULL */
	int64_t int_value;  /* valid when FP_TTIR_OP_CONST_INT (true/false give 1/0) */
	int32_t axis;       /* an `axis = N` attribute (reduce, scan, expand_dims...); -1 if none */
	uint32_t ir_line;   /* 1-based line of the op in the IR text */
	uint64_t offset;    /* byte offset of the op in the IR text */
};

/* A function argument. `loc.name` is the Python parameter name. */
struct fp_ttir_arg {
	const char *name; /* "%x_ptr" */
	struct fp_ttir_type type;
	struct fp_ttir_loc loc;
	uint32_t divisibility; /* tt.divisibility attribute, 0 if absent */
};

/* A tt.func (or func.func). Its ops are the contiguous range [first_op, end_op). */
struct fp_ttir_func {
	const char *name; /* without '@' and quotes */
	bool is_public;
	bool noinline; /* attributes {noinline = true} */
	bool has_body;
	uint32_t n_args;
	const struct fp_ttir_arg *args;
	uint32_t n_results;
	const struct fp_ttir_type *results;
	struct fp_ttir_loc loc; /* the `def` line */
	uint32_t first_op;
	uint32_t end_op;
	uint32_t ir_line;
};

struct fp_ttir; /* opaque: the parsed module */

/**
 * Parse TTIR text (`len` bytes, need not be NUL-terminated) with the default limits. On success
 * stores a new module in *out (caller frees with fp_ttir_free()) and returns FP_OK. Otherwise
 * *out is left NULL and the return is FP_EFORMAT (malformed text, an undefined or cyclic #loc
 * alias, unbalanced brackets; `diag` names line, column and offset), FP_ELIMIT (a limit above),
 * FP_ENOMEM, or FP_EINVAL (NULL text with len > 0, or NULL out).
 */
FP_EXTERN int fp_ttir_parse(const char *text, size_t len, struct fp_ttir **out,
			    struct fp_diag *diag);

/** fp_ttir_parse() with explicit limits; `lim` may be NULL (defaults). */
FP_EXTERN int fp_ttir_parse_ex(const char *text, size_t len, const struct fp_ttir_limits *lim,
			       struct fp_ttir **out, struct fp_diag *diag);

/** Free a module and everything it owns. NULL is a no-op. */
FP_EXTERN void fp_ttir_free(struct fp_ttir *m);

/** Number of operations (all functions together). 0 for NULL. */
FP_EXTERN size_t fp_ttir_op_count(const struct fp_ttir *m);

/** Operation `i` (0-based), or NULL if out of range. */
FP_EXTERN const struct fp_ttir_op *fp_ttir_op_at(const struct fp_ttir *m, size_t i);

/** Number of functions, in textual order. 0 for NULL. */
FP_EXTERN size_t fp_ttir_func_count(const struct fp_ttir *m);

/** Function `i`, or NULL if out of range. */
FP_EXTERN const struct fp_ttir_func *fp_ttir_func_at(const struct fp_ttir *m, size_t i);

/** Index of the function called `name` (without '@'), or FP_TTIR_NPOS. */
FP_EXTERN size_t fp_ttir_func_find(const struct fp_ttir *m, const char *name);

/**
 * The kernel entry: the first public function, else the first function; FP_TTIR_NPOS if the
 * module has none.
 */
FP_EXTERN size_t fp_ttir_entry(const struct fp_ttir *m);

/* fp_ttir_find_line() `match` bits. */
#define FP_TTIR_MATCH_LOC 1u    /* compare op->loc (innermost position) */
#define FP_TTIR_MATCH_CALLER 2u /* compare op->caller (the kernel's own line) */

/**
 * First op with index >= `from` whose location (as selected by `match`) is at `line` of `file`,
 * or FP_TTIR_NPOS. `file` NULL matches any file; otherwise the two paths must be equal or one
 * must end with "/" + the other (so "kernels.py" finds "/home/u/kernels.py"). Linear in the
 * number of ops; iterate with from = previous + 1 to get all of them.
 */
FP_EXTERN size_t fp_ttir_find_line(const struct fp_ttir *m, const char *file, uint32_t line,
				   unsigned match, size_t from);

/* ---- estimates ------------------------------------------------------------------------- */

/* Element dtype classes of the estimate's per-class counters. */
enum fp_ttir_dclass {
	FP_TTIR_FP64 = 0,
	FP_TTIR_FP32 = 1, /* f32 and tf32 */
	FP_TTIR_FP16 = 2, /* f16 and bf16 */
	FP_TTIR_FP8 = 3,  /* every f8 variant */
	FP_TTIR_INT = 4,  /* iN, index and pointers (address arithmetic) */
	FP_TTIR_NCLASS = 5
};

/** "fp64", "fp32", "fp16", "fp8", "int"; "unknown" otherwise. Never NULL. */
FP_EXTERN const char *fp_ttir_dclass_name(enum fp_ttir_dclass c);

/*
 * Static per-program counts for one function (docs/internals/ir-estimates.md says exactly how each is
 * derived). Counts inside an scf.for with constant bounds are multiplied by its trip count; any
 * other loop counts its body once (see dynamic_loops). Both branches of scf.if are counted.
 * Every counter saturates at UINT64_MAX (and sets `saturated`).
 */
struct fp_ttir_estimate {
	uint64_t loads;      /* tt.load and descriptor loads executed */
	uint64_t load_bytes; /* numel x element size of each load */
	uint64_t
		masked_loads; /* loads with a mask or boundaryCheck: load_bytes is an upper bound */
	uint64_t stores;
	uint64_t store_bytes;
	uint64_t masked_stores;
	uint64_t atomics;                            /* tt.atomic_rmw and tt.atomic_cas */
	uint64_t atomic_bytes;                       /* numel x element size of each atomic */
	uint64_t dots;                               /* tt.dot / tt.dot_scaled */
	uint64_t dot_flops;                          /* 2 x M x N x K (x batch) per dot */
	uint64_t dot_flops_by_class[FP_TTIR_NCLASS]; /* by the class of the first operand */
	uint64_t reductions;                         /* tt.reduce */
	uint64_t reduce_elems; /* elements entering reductions (first operand) */
	uint64_t scans;        /* tt.scan */
	uint64_t scan_elems;
	uint64_t elem_ops[FP_TTIR_NCLASS]; /* elements through elementwise arithmetic, per class */
	uint64_t flops[FP_TTIR_NCLASS];    /* FLOPs of elementwise float arithmetic (not dots) */
	uint64_t special[FP_TTIR_NCLASS];  /* elements through exp/log/sqrt/rsqrt/sin/... */
	uint64_t conversions;   /* elements through casts (extf, truncf, fp_to_fp, sitofp, ...) */
	uint64_t total_flops;   /* dot_flops + all flops[] */
	uint64_t calls;         /* tt.call executed; the callee's counts are included */
	uint32_t static_loops;  /* scf.for ops with constant bounds */
	uint32_t dynamic_loops; /* scf.for without constant bounds, plus scf.while */
	uint32_t conditionals;  /* scf.if ops (both branches counted) */
	uint32_t unresolved_calls; /* calls to unknown or recursive functions (not counted) */
	bool has_dynamic_loops;    /* dynamic_loops > 0: counts are a lower bound for those loops */
	bool saturated;
};

/**
 * Estimate function `func` (NULL: fp_ttir_entry()). Fills *out and returns FP_OK, FP_ENOENT if
 * there is no such function, FP_EINVAL for a NULL module or out, FP_ENOMEM.
 */
FP_EXTERN int fp_ttir_estimate(const struct fp_ttir *m, const char *func,
			       struct fp_ttir_estimate *out);

/* ---- facts for advice ------------------------------------------------------------------ */

/*
 * What `flagprism advise` (include/flagprism/advise.h) reads from a kernel's IR besides the
 * estimate: the places where a change would act, each with the kernel's own source line (the
 * outermost frame of the op's location, so code inlined from triton/language names the line
 * that called it). Counts are per program and use the estimate's multipliers (static loops
 * multiplied in). Locations' strings are borrowed from the module.
 */
struct fp_ttir_facts {
	struct fp_ttir_loc def; /* the function's def line */
	/* from fp_ttir_estimate(), so that the advice needs no second note: bytes of loads, stores
	 * and atomics, load bytes, all FLOPs, float32 elementwise FLOPs */
	uint64_t bytes, load_bytes, total_flops, fp32_flops;
	uint64_t dot_flops; /* every dot, as the estimate counts them */
	/* Dots with a float32 operand converted (arith.extf, tt.fp_to_fp) from a 16- or 8-bit
	 * float, through layout ops only: tl.dot(a.to(tl.float32), ...) or the broadcast-multiply-
	 * sum Triton turns into a dot. */
	uint64_t widened_dots;
	uint64_t widened_dot_flops;
	enum fp_ttir_dclass widened_from; /* FP_TTIR_FP16 or FP_TTIR_FP8; NCLASS when none */
	char precision[16];               /* the first such dot's inputPrecision ("tf32", "ieee",
					     "tf32x3"), "" when not printed or no text given */
	struct fp_ttir_loc widened_dot_at;
	/* float32 multiplies and FMAs whose operand is widened the same way (no dot): FLOPs */
	uint64_t widened_mul_flops;
	struct fp_ttir_loc widened_mul_at; /* the op with the most of them */
	/* The load that moves the most bytes per program (x its multiplier). */
	uint64_t top_load_bytes;
	const char *top_load_elem; /* its element type ("f32"), or NULL */
	struct fp_ttir_loc top_load_at;
	/* The largest tensor any op produces (numel x element size, once): what a program keeps
	 * live at least once, the first suspect of register pressure. */
	uint64_t top_tile_bytes;
	struct fp_ttir_loc top_tile_at;
	bool saturated;
};

/**
 * The facts of function `func` (NULL: fp_ttir_entry()). `text`/`len` is the IR text the module
 * was parsed from (for attributes the op table does not keep: a dot's inputPrecision); NULL
 * leaves `precision` empty. Callees of tt.call are not followed. FP_OK; FP_ENOENT (no such
 * function), FP_EINVAL, FP_ENOMEM.
 */
FP_EXTERN int fp_ttir_facts(const struct fp_ttir *m, const char *func, const char *text, size_t len,
			    struct fp_ttir_facts *out);

/*
 * Member names of the facts object (a JSON object the Profiler stores per kernel in its meta
 * file, docs/formats/profiler-formats.md): fp_ttir_facts_write() spells the IR's, the Python
 * layer adds the compiled kernel's under FP_TTIR_FACT_COMPILED, the advice reads both.
 */
#define FP_TTIR_FACT_DEF "def"
#define FP_TTIR_FACT_BYTES "bytes"
#define FP_TTIR_FACT_LOAD_BYTES "load_bytes"
#define FP_TTIR_FACT_TOTAL_FLOPS "total_flops"
#define FP_TTIR_FACT_FP32_FLOPS "fp32_flops"
#define FP_TTIR_FACT_DOT_FLOPS "dot_flops"
#define FP_TTIR_FACT_WIDENED_DOTS "widened_dots"
#define FP_TTIR_FACT_WIDENED_DOT_FLOPS "widened_dot_flops"
#define FP_TTIR_FACT_WIDENED_FROM "widened_from"
#define FP_TTIR_FACT_PRECISION "precision"
#define FP_TTIR_FACT_WIDENED_DOT_AT "widened_dot_at"
#define FP_TTIR_FACT_WIDENED_MUL_FLOPS "widened_mul_flops"
#define FP_TTIR_FACT_WIDENED_MUL_AT "widened_mul_at"
#define FP_TTIR_FACT_TOP_LOAD_BYTES "top_load_bytes"
#define FP_TTIR_FACT_TOP_LOAD_ELEM "top_load_elem"
#define FP_TTIR_FACT_TOP_LOAD_AT "top_load_at"
#define FP_TTIR_FACT_TOP_TILE_BYTES "top_tile_bytes"
#define FP_TTIR_FACT_TOP_TILE_AT "top_tile_at"
/* a location: {"file": F, "line": L} */
#define FP_TTIR_FACT_FILE "file"
#define FP_TTIR_FACT_LINE "line"
/* the compiled kernel's (Python: CompiledKernel and its metadata) */
#define FP_TTIR_FACT_COMPILED "compiled"
#define FP_TTIR_FACT_NUM_WARPS "num_warps"
#define FP_TTIR_FACT_NUM_STAGES "num_stages"
#define FP_TTIR_FACT_REGISTERS "registers"     /* per thread */
#define FP_TTIR_FACT_SPILL_BYTES "spill_bytes" /* local memory per thread */
#define FP_TTIR_FACT_SHARED_BYTES "shared_bytes"
/* where the facts ride: after this marker in the meta file's "estimate:<kernel>" note */
#define FP_TTIR_FACTS_MARK "\nfacts: "

struct fp_jsonw;

/** Write `f` as the facts object (members above; absent facts left out). The writer's status. */
FP_EXTERN int fp_ttir_facts_write(const struct fp_ttir_facts *f, struct fp_jsonw *w);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_TTIR_H */
