/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internals shared by the TTIR parser files (ttir.c, ttir-loc.c, ttir-type.c, ttir-strmap.c,
 * ttir-estimate.c): the module object, its bump allocator and string map, the parser state and
 * the location graph. Not a public header and not for any other module.
 */
#ifndef FP_IR_TTIR_INTERNAL_H
#define FP_IR_TTIR_INTERNAL_H

#include <flagprism/ttir.h>

#include "core/arena-internal.h"
#include "core/core-internal.h"

/* ---- string -> uint32 map (open addressing); keys are borrowed and must outlive the map ---- */

struct fp__ttir_slot {
	const char *key;
	uint32_t len;
	uint32_t value;
	uint64_t hash;
};

struct fp__ttir_strmap {
	struct fp__ttir_slot *slots;
	size_t mask; /* capacity - 1 (capacity is a power of two), 0 when empty */
	size_t count;
};

uint64_t fp__ttir_hash(const char *s, size_t n);
void fp__ttir_strmap_release(struct fp__ttir_strmap *m);
/* The slot holding `s`, or NULL. */
const struct fp__ttir_slot *fp__ttir_strmap_get(const struct fp__ttir_strmap *m, const char *s,
						size_t n);
/*
 * Insert `s` -> `value` unless present. *slot gets the slot (new or existing); *added tells which.
 * The key pointer is stored as given. FP_ENOMEM.
 */
int fp__ttir_strmap_put(struct fp__ttir_strmap *m, const char *s, size_t n, uint32_t value,
			struct fp__ttir_slot **slot, bool *added);

/* ---- the module ------------------------------------------------------------------------- */

struct fp_ttir {
	struct fp_arena arena; /* everything the module hands out (capped: ARENA_CAP, ttir.c) */
	struct fp_ttir_op *ops;
	size_t n_ops;
	size_t cap_ops;
	struct fp_ttir_func *funcs;
	size_t n_funcs;
	size_t cap_funcs;
	struct fp__ttir_strmap func_map; /* name -> function index */
};

/* ---- types ------------------------------------------------------------------------------- */

/* Bytes of one element of `elem` ("f32" 4, "bf16" 2, "i1" 1, "!tt.ptr<..>" 8); 0 if unknown. */
uint32_t fp__ttir_elem_size(const char *elem);
/* Class of an element type; FP_TTIR_NCLASS when it is none of them. */
enum fp_ttir_dclass fp__ttir_elem_class(const char *elem);
/*
 * The pointee of a pointer type: for "!tt.ptr<f32>" or "!tt.ptr<f32, 1>" points *s, *n at "f32" and
 * returns true; false if `text` is not a !tt.ptr type.
 */
bool fp__ttir_pointee(const char *text, const char **s, size_t *n);

/* Length of a shaped type's "tensor<" / "!ttg.memdesc<" prefix if s[0..n) is one, else 0. */
size_t fp__ttir_shaped_prefix(const char *s, size_t n);
/*
 * What an access through a pointer-typed value touches: for "tensor<4x!tt.ptr<f16>>" 4 elements
 * of 2 bytes, for "!tt.ptr<tensor<8x8xf32>>" 64 of 4, for "!tt.ptr<i8>" 1 of 1. A type that is
 * not a pointer describes itself (numel and element of `t`). False only for a NULL type.
 */
bool fp__ttir_access(const struct fp_ttir_type *t, uint64_t *numel, uint32_t *elem_size,
		     enum fp_ttir_dclass *cls);

/* ---- estimates (ttir-estimate.c), for the other readers of a module (ttir-facts.c) ----- */

/*
 * How many times each op of function `fi` runs per program, as the estimate counts it (static
 * scf.for trip counts multiplied in, combine regions by their applications, everything else 1):
 * *out gets an array of end_op - first_op counts, indexed by op index - first_op (caller frees
 * with fp_free()). FP_OK, FP_EINVAL, FP_ENOMEM.
 */
int fp__ttir_op_mults(const struct fp_ttir *m, size_t fi, uint64_t **out);

/* ---- parser state ------------------------------------------------------------------------ */

enum fp__ttir_loc_kind {
	FP__LOC_UNKNOWN,
	FP__LOC_FILE,     /* str = file, a = line, b = col */
	FP__LOC_NAME,     /* str = name, a = child node */
	FP__LOC_CALLSITE, /* a = callee node, b = caller node */
	FP__LOC_FUSED,    /* a list cell: a = element, b = next cell or FP_TTIR_NONE */
	FP__LOC_ALIAS,    /* a = alias index */
};

struct fp__ttir_loc_node {
	uint32_t kind;
	uint32_t a;
	uint32_t b;
	const char *str;
};

/* What a location resolves to. */
struct fp__ttir_frames {
	struct fp_ttir_loc inner;
	struct fp_ttir_loc outer;
	bool callsite;
	/* every frame, innermost first (chain[0] == inner, chain[nchain - 1] == outer); a deeper
	 * chain keeps its innermost frame and its outermost FP_TTIR_MAX_FRAMES - 1 */
	uint32_t nchain;
	struct fp_ttir_loc chain[FP_TTIR_MAX_FRAMES];
};

struct fp__ttir_alias {
	const char *name; /* "#loc12" (arena) */
	uint32_t node;    /* definition, FP_TTIR_NONE while undefined */
	uint32_t state;   /* resolution: 0 not yet, 1 in progress, 2 done */
	size_t def_off;   /* where it is defined */
	size_t ref_off;   /* first reference, for "undefined alias" errors */
	struct fp__ttir_frames res;
};

/* A piece of the input: [off, off + len), plus a count (results of a `%x:N` group). */
struct fp__ttir_span {
	size_t off;
	size_t len;
	uint32_t count;
};

struct fp__ttir_parser {
	const char *s;
	size_t n;
	size_t pos;
	struct fp_ttir *m;
	struct fp_diag *diag;
	struct fp_ttir_limits lim;
	bool errored;           /* diag holds the first error; later ones are not recorded */
	size_t n_results_total; /* results of all ops, capped against result-group blowups */

	/* incremental line counter for op positions (offsets only grow) */
	size_t line_off;
	uint32_t line_no;

	/* interned strings (op names, file names, type texts...), values index types[] or unused */
	struct fp__ttir_strmap strs;
	/* decomposed types, one per distinct type text */
	struct fp__ttir_strmap type_map;
	struct fp_ttir_type *types;
	size_t n_types, cap_types;

	/* location graph */
	struct fp__ttir_loc_node *nodes;
	size_t n_nodes, cap_nodes;
	struct fp__ttir_alias *aliases;
	size_t n_aliases, cap_aliases;
	struct fp__ttir_strmap alias_map;

	/* per op / per function / per argument location node, resolved after the whole parse */
	uint32_t *op_loc;
	size_t cap_op_loc;
	uint32_t *func_loc;
	size_t cap_func_loc;
	uint32_t *arg_loc; /* flat: arguments of all functions in order */
	size_t n_arg_loc, cap_arg_loc;

	/* scratch stacks for the op being parsed (inner ops push above and pop back) */
	struct fp__ttir_span *spans;
	size_t n_spans, cap_spans;
};

/* Identifier characters: [A-Za-z0-9_.$] (bare ids, op names, keywords). */
bool fp__ttir_is_idchar(char c);
/* Length of the suffix-id ([A-Za-z0-9_.$-]*) at offset `at`: SSA, alias and block names. */
size_t fp__ttir_suffix_len(const struct fp__ttir_parser *p, size_t at);
/* Skip spaces, tabs, CR and LF. */
void fp__ttir_skip_space(struct fp__ttir_parser *p);
/*
 * Parse the string literal at p->pos (which is '"'), decoding MLIR escapes; *out is interned.
 * FP_EFORMAT for an unterminated string or a bad escape.
 */
int fp__ttir_string(struct fp__ttir_parser *p, const char **out, size_t *len);
/* Record a format error at `off` (line/col computed) and return `status`. */
int fp__ttir_error(struct fp__ttir_parser *p, int status, size_t off, const char *fmt, ...)
	FP_PRINTF(4, 5);
/* Intern n bytes (copied into the module arena once); NULL on OOM. */
const char *fp__ttir_intern(struct fp__ttir_parser *p, const char *s, size_t n);

/*
 * Parse a location expression; p->pos is just after "loc(", and on success just after the
 * matching ')'. *node receives the graph node.
 */
int fp__ttir_loc_parse(struct fp__ttir_parser *p, uint32_t *node);
/* `#name = loc(...)`: p->pos is just after "loc(" of the definition at `def_off`. */
int fp__ttir_loc_define(struct fp__ttir_parser *p, const char *name, size_t len, size_t def_off);
/* After the parse: fail on references to aliases that were never defined. */
int fp__ttir_loc_check(struct fp__ttir_parser *p);
/* Resolve a node (FP_TTIR_NONE gives unknown frames); `at` is the offset errors point to. */
int fp__ttir_loc_resolve(struct fp__ttir_parser *p, uint32_t node, size_t at,
			 struct fp__ttir_frames *out);

/*
 * Decompose the type text s[0..n) (interned and cached): fills *out with borrowed pointers.
 * FP_ENOMEM, FP_ELIMIT (rank above FP_TTIR_MAX_RANK).
 */
int fp__ttir_type_get(struct fp__ttir_parser *p, const char *s, size_t n, struct fp_ttir_type *out);

/* Clamp-on-overflow arithmetic for estimates. */
static inline uint64_t fp__ttir_sat_mul(uint64_t a, uint64_t b, bool *sat)
{
	if (a != 0 && b > UINT64_MAX / a) {
		*sat = true;
		return UINT64_MAX;
	}
	return a * b;
}

static inline uint64_t fp__ttir_sat_add(uint64_t a, uint64_t b, bool *sat)
{
	if (b > UINT64_MAX - a) {
		*sat = true;
		return UINT64_MAX;
	}
	return a + b;
}

#endif /* FP_IR_TTIR_INTERNAL_H */
