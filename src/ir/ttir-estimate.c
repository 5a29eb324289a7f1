/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Static per-program cost estimates from a parsed TTIR module: memory traffic of loads, stores
 * and atomics, dot FLOPs, reductions, and elementwise work by dtype class, with ops in scf.for
 * loops with constant bounds multiplied by the trip count and callees of tt.call included.
 * docs/internals/ir-estimates.md is the specification of every number; keep the two in step. This is a
 * model of the IR, not of the hardware: no caches, no masking ratios, no layouts.
 */
#include "fp-setup.h"

#include "ir/ttir-internal.h"

#define MAX_CALL_DEPTH 32u

enum op_kind {
	K_NONE,
	K_FLOP1,   /* elementwise, 1 FLOP per element for floats */
	K_FLOP2,   /* math.fma */
	K_ELEM,    /* elementwise without FLOPs (integer ops are here too via the class) */
	K_CMP,     /* comparison: class from the operands */
	K_SPECIAL, /* transcendental / sqrt */
	K_CONVERT,
};

struct kind_entry {
	const char *name;
	enum op_kind kind;
};

/* Kept sorted by name for bsearch. */
static const struct kind_entry kinds[] = {
	{"arith.addf", K_FLOP1},
	{"arith.addi", K_ELEM},
	{"arith.andi", K_ELEM},
	{"arith.bitcast", K_CONVERT},
	{"arith.ceildivsi", K_ELEM},
	{"arith.cmpf", K_CMP},
	{"arith.cmpi", K_CMP},
	{"arith.divf", K_FLOP1},
	{"arith.divsi", K_ELEM},
	{"arith.divui", K_ELEM},
	{"arith.extf", K_CONVERT},
	{"arith.extsi", K_CONVERT},
	{"arith.extui", K_CONVERT},
	{"arith.floordivsi", K_ELEM},
	{"arith.fptosi", K_CONVERT},
	{"arith.fptoui", K_CONVERT},
	{"arith.index_cast", K_CONVERT},
	{"arith.maximumf", K_FLOP1},
	{"arith.maxnumf", K_FLOP1},
	{"arith.maxsi", K_ELEM},
	{"arith.maxui", K_ELEM},
	{"arith.minimumf", K_FLOP1},
	{"arith.minnumf", K_FLOP1},
	{"arith.minsi", K_ELEM},
	{"arith.minui", K_ELEM},
	{"arith.mulf", K_FLOP1},
	{"arith.muli", K_ELEM},
	{"arith.negf", K_FLOP1},
	{"arith.ori", K_ELEM},
	{"arith.remf", K_FLOP1},
	{"arith.remsi", K_ELEM},
	{"arith.remui", K_ELEM},
	{"arith.select", K_ELEM},
	{"arith.shli", K_ELEM},
	{"arith.shrsi", K_ELEM},
	{"arith.shrui", K_ELEM},
	{"arith.sitofp", K_CONVERT},
	{"arith.subf", K_FLOP1},
	{"arith.subi", K_ELEM},
	{"arith.truncf", K_CONVERT},
	{"arith.trunci", K_CONVERT},
	{"arith.uitofp", K_CONVERT},
	{"arith.xori", K_ELEM},
	{"math.absf", K_FLOP1},
	{"math.absi", K_ELEM},
	{"math.atan", K_SPECIAL},
	{"math.atan2", K_SPECIAL},
	{"math.cbrt", K_SPECIAL},
	{"math.ceil", K_ELEM},
	{"math.copysign", K_ELEM},
	{"math.cos", K_SPECIAL},
	{"math.erf", K_SPECIAL},
	{"math.exp", K_SPECIAL},
	{"math.exp2", K_SPECIAL},
	{"math.expm1", K_SPECIAL},
	{"math.floor", K_ELEM},
	{"math.fma", K_FLOP2},
	{"math.log", K_SPECIAL},
	{"math.log10", K_SPECIAL},
	{"math.log1p", K_SPECIAL},
	{"math.log2", K_SPECIAL},
	{"math.powf", K_SPECIAL},
	{"math.round", K_ELEM},
	{"math.roundeven", K_ELEM},
	{"math.rsqrt", K_SPECIAL},
	{"math.sin", K_SPECIAL},
	{"math.sqrt", K_SPECIAL},
	{"math.tan", K_SPECIAL},
	{"math.tanh", K_SPECIAL},
	{"math.trunc", K_ELEM},
	{"tt.addptr", K_ELEM},
	{"tt.bitcast", K_CONVERT},
	{"tt.extern_elementwise", K_SPECIAL},
	{"tt.fp_to_fp", K_CONVERT},
	{"tt.int_to_ptr", K_CONVERT},
	{"tt.mulhiui", K_ELEM},
	{"tt.precise_divf", K_FLOP1},
	{"tt.precise_sqrt", K_SPECIAL},
	{"tt.ptr_to_int", K_CONVERT},
};

static int kind_cmp(const void *key, const void *entry)
{
	return strcmp(key, ((const struct kind_entry *)entry)->name);
}

static enum op_kind kind_of(const char *name)
{
	const struct kind_entry *e =
		bsearch(name, kinds, FP_ARRAY_SIZE(kinds), sizeof(kinds[0]), kind_cmp);

	return e ? e->kind : K_NONE;
}

static bool is(const char *name, const char *what)
{
	return strcmp(name, what) == 0;
}

struct est {
	const struct fp_ttir *m;
	struct fp_ttir_estimate *memo;
	uint8_t *state; /* per function: 0 not yet, 1 in progress, 2 done */
};

/* Add src x mult into dst (loop and call bookkeeping is added once, not multiplied). */
static void accumulate(struct fp_ttir_estimate *dst, const struct fp_ttir_estimate *src,
		       uint64_t mult)
{
	bool *sat = &dst->saturated;
	unsigned c;

#define ADD(f) dst->f = fp__ttir_sat_add(dst->f, fp__ttir_sat_mul(src->f, mult, sat), sat)
	ADD(loads);
	ADD(load_bytes);
	ADD(masked_loads);
	ADD(stores);
	ADD(store_bytes);
	ADD(masked_stores);
	ADD(atomics);
	ADD(atomic_bytes);
	ADD(dots);
	ADD(dot_flops);
	ADD(reductions);
	ADD(reduce_elems);
	ADD(scans);
	ADD(scan_elems);
	ADD(conversions);
	ADD(calls);
	for (c = 0; c < FP_TTIR_NCLASS; c++) {
		ADD(dot_flops_by_class[c]);
		ADD(elem_ops[c]);
		ADD(flops[c]);
		ADD(special[c]);
	}
#undef ADD
#define ADD32(f) dst->f = (src->f > UINT32_MAX - dst->f) ? UINT32_MAX : dst->f + src->f
	ADD32(static_loops);
	ADD32(dynamic_loops);
	ADD32(conditionals);
	ADD32(unresolved_calls);
#undef ADD32
	dst->saturated |= src->saturated;
}

static void add(uint64_t *field, uint64_t a, uint64_t b, bool *sat)
{
	*field = fp__ttir_sat_add(*field, fp__ttir_sat_mul(a, b, sat), sat);
}

static void inc32(uint32_t *v)
{
	if (*v < UINT32_MAX)
		(*v)++;
}

static const struct fp_ttir_type *result0(const struct fp_ttir_op *op)
{
	return op->n_results ? &op->results[0].type : NULL;
}

static const struct fp_ttir_type *sig0(const struct fp_ttir_op *op)
{
	return op->n_sig_types ? &op->sig_types[0] : NULL;
}

/* Static trip count of an scf.for whose bounds and step are integer constants. */
static bool static_trips(const struct fp_ttir *m, const struct fp__ttir_strmap *consts,
			 const struct fp_ttir_op *op, uint64_t *trips)
{
	int64_t v[3];
	uint64_t diff, step;
	unsigned i;

	if (op->n_operands < 3)
		return false;
	for (i = 0; i < 3; i++) {
		const struct fp__ttir_slot *hit =
			fp__ttir_strmap_get(consts, op->operands[i], strlen(op->operands[i]));

		if (!hit)
			return false;
		v[i] = m->ops[hit->value].int_value;
	}
	if (v[2] <= 0)
		return false;
	if (v[1] <= v[0]) {
		*trips = 0;
		return true;
	}
	diff = (uint64_t)v[1] - (uint64_t)v[0];
	step = (uint64_t)v[2];
	*trips = diff / step + (diff % step != 0);
	return true;
}

/* Times the regions of `op` run per execution of `op` (0 for combine regions never applied). */
static uint64_t region_factor(const struct fp_ttir *m, const struct fp__ttir_strmap *consts,
			      const struct fp_ttir_op *op, struct fp_ttir_estimate *out)
{
	const struct fp_ttir_type *in = sig0(op), *res = result0(op);
	uint64_t trips;

	if (is(op->name, "scf.for")) {
		if (static_trips(m, consts, op, &trips)) {
			inc32(&out->static_loops);
			return trips;
		}
		inc32(&out->dynamic_loops);
		return 1;
	}
	if (is(op->name, "scf.while")) {
		inc32(&out->dynamic_loops);
		return 1;
	}
	if (is(op->name, "scf.if")) {
		inc32(&out->conditionals);
		return 1;
	}
	if (is(op->name, "tt.reduce")) {
		/* combining N values into M results takes N - M applications */
		uint64_t n = in ? in->numel : 0, r = res ? res->numel : 0;

		return n > r ? n - r : 0;
	}
	if (is(op->name, "tt.scan")) {
		uint64_t n = in ? in->numel : 0;

		if (in && op->axis >= 0 && (uint32_t)op->axis < in->rank && in->shape[op->axis] > 0)
			return n - n / (uint64_t)in->shape[op->axis];
		return n;
	}
	return 1;
}

static int estimate_func(struct est *st, size_t fi, unsigned depth);

static void count_call(struct est *st, const struct fp_ttir_op *op, uint64_t mult, unsigned depth,
		       struct fp_ttir_estimate *out, int *rc)
{
	size_t callee = fp_ttir_func_find(st->m, op->callee);

	add(&out->calls, 1, mult, &out->saturated);
	if (callee == FP_TTIR_NPOS || st->state[callee] == 1 || depth >= MAX_CALL_DEPTH ||
	    !st->m->funcs[callee].has_body) {
		inc32(&out->unresolved_calls);
		return;
	}
	*rc = estimate_func(st, callee, depth + 1);
	if (*rc == FP_OK)
		accumulate(out, &st->memo[callee], mult);
}

static void count_op(struct est *st, const struct fp_ttir_op *op, uint64_t mult, unsigned depth,
		     struct fp_ttir_estimate *out, int *rc)
{
	const struct fp_ttir_type *res = result0(op), *in = sig0(op);
	bool *sat = &out->saturated;
	enum fp_ttir_dclass cls;
	uint64_t numel;
	uint32_t esize;
	enum op_kind k;
	const char *n = op->name;

	if (is(n, "tt.load") || is(n, "tt.descriptor_load") ||
	    is(n, "tt.experimental_descriptor_load") || is(n, "tt.descriptor_gather")) {
		add(&out->loads, 1, mult, sat);
		if (res && fp__ttir_access(res, &numel, &esize, &cls))
			add(&out->load_bytes, fp__ttir_sat_mul(numel, esize, sat), mult, sat);
		if (op->flags & FP_TTIR_OP_MASKED)
			add(&out->masked_loads, 1, mult, sat);
		return;
	}
	if (is(n, "tt.store")) {
		add(&out->stores, 1, mult, sat);
		if (in && fp__ttir_access(in, &numel, &esize, &cls))
			add(&out->store_bytes, fp__ttir_sat_mul(numel, esize, sat), mult, sat);
		if (op->flags & FP_TTIR_OP_MASKED)
			add(&out->masked_stores, 1, mult, sat);
		return;
	}
	if (is(n, "tt.descriptor_store") || is(n, "tt.experimental_descriptor_store") ||
	    is(n, "tt.descriptor_scatter")) {
		const struct fp_ttir_type *val =
			op->n_sig_types ? &op->sig_types[op->n_sig_types - 1] : NULL;

		add(&out->stores, 1, mult, sat);
		if (val && fp__ttir_access(val, &numel, &esize, &cls))
			add(&out->store_bytes, fp__ttir_sat_mul(numel, esize, sat), mult, sat);
		return;
	}
	if (is(n, "tt.atomic_rmw") || is(n, "tt.atomic_cas")) {
		const struct fp_ttir_type *t = res ? res : in;

		add(&out->atomics, 1, mult, sat);
		if (t && fp__ttir_access(t, &numel, &esize, &cls))
			add(&out->atomic_bytes, fp__ttir_sat_mul(numel, esize, sat), mult, sat);
		return;
	}
	if (is(n, "tt.dot") || is(n, "tt.dot_scaled") || is(n, "ttng.warp_group_dot")) {
		add(&out->dots, 1, mult, sat);
		if (res && in && in->rank >= 2 && in->shape[in->rank - 1] > 0) {
			uint64_t kdim = (uint64_t)in->shape[in->rank - 1];
			uint64_t f =
				fp__ttir_sat_mul(fp__ttir_sat_mul(2, res->numel, sat), kdim, sat);

			add(&out->dot_flops, f, mult, sat);
			cls = fp__ttir_elem_class(in->elem);
			if (cls < FP_TTIR_NCLASS)
				add(&out->dot_flops_by_class[cls], f, mult, sat);
		}
		return;
	}
	if (is(n, "tt.reduce")) {
		add(&out->reductions, 1, mult, sat);
		add(&out->reduce_elems, in ? in->numel : 0, mult, sat);
		return;
	}
	if (is(n, "tt.scan")) {
		add(&out->scans, 1, mult, sat);
		add(&out->scan_elems, in ? in->numel : 0, mult, sat);
		return;
	}
	if (op->callee && (is(n, "tt.call") || is(n, "func.call"))) {
		count_call(st, op, mult, depth, out, rc);
		return;
	}
	k = kind_of(n);
	if (k == K_NONE || !res)
		return;
	numel = res->numel;
	cls = fp__ttir_elem_class(k == K_CMP && in ? in->elem : res->elem);
	if (k == K_CONVERT) {
		add(&out->conversions, numel, mult, sat);
		return;
	}
	if (cls >= FP_TTIR_NCLASS)
		return;
	if (k == K_SPECIAL) {
		add(&out->special[cls], numel, mult, sat);
		return;
	}
	add(&out->elem_ops[cls], numel, mult, sat);
	if (cls != FP_TTIR_INT && (k == K_FLOP1 || k == K_FLOP2 || k == K_CMP))
		add(&out->flops[cls], numel, fp__ttir_sat_mul(mult, k == K_FLOP2 ? 2 : 1, sat),
		    sat);
}

static int estimate_func(struct est *st, size_t fi, unsigned depth)
{
	const struct fp_ttir *m = st->m;
	const struct fp_ttir_func *f = &m->funcs[fi];
	struct fp_ttir_estimate *out = &st->memo[fi];
	struct fp__ttir_strmap consts = {0};
	struct fp__ttir_slot *slot;
	size_t n = f->end_op - f->first_op, i;
	uint64_t *inner = NULL;
	bool added;
	int rc = FP_OK;

	if (st->state[fi] == 2)
		return FP_OK;
	st->state[fi] = 1;
	memset(out, 0, sizeof(*out));
	if (n) {
		inner = fp_calloc(n, sizeof(*inner));
		if (!inner) {
			rc = FP_ENOMEM;
			goto fail_alloc;
		}
	}
	for (i = f->first_op; i < f->end_op; i++) {
		const struct fp_ttir_op *op = &m->ops[i];

		if ((op->flags & FP_TTIR_OP_CONST_INT) && op->n_results == 1) {
			rc = fp__ttir_strmap_put(&consts, op->results[0].name,
						 strlen(op->results[0].name), (uint32_t)i, &slot,
						 &added);
			if (rc)
				goto fail_consts;
		}
	}
	for (i = f->first_op; i < f->end_op && rc == FP_OK; i++) {
		const struct fp_ttir_op *op = &m->ops[i];
		uint64_t mult = 1;

		if (op->func != fi)
			continue;
		if (op->parent != FP_TTIR_NONE && op->parent >= f->first_op && op->parent < i)
			mult = inner[op->parent - f->first_op];
		if (op->flags & FP_TTIR_OP_REGIONS)
			inner[i - f->first_op] = fp__ttir_sat_mul(
				mult, region_factor(m, &consts, op, out), &out->saturated);
		count_op(st, op, mult, depth, out, &rc);
	}
	if (rc)
		goto fail_consts;
	out->has_dynamic_loops = out->dynamic_loops > 0;
	fp__ttir_strmap_release(&consts);
	fp_free(inner);
	st->state[fi] = 2;
	return FP_OK;

fail_consts:
	fp__ttir_strmap_release(&consts);
	fp_free(inner);
fail_alloc:
	st->state[fi] = 0;
	return rc;
}

int fp__ttir_op_mults(const struct fp_ttir *m, size_t fi, uint64_t **out)
{
	const struct fp_ttir_func *f;
	struct fp__ttir_strmap consts = {0};
	struct fp__ttir_slot *slot;
	struct fp_ttir_estimate scratch; /* the loop counters region_factor() keeps */
	uint64_t *mult, *inner;
	size_t n, i;
	bool added;
	int rc = FP_OK;

	if (!m || !out || fi >= m->n_funcs)
		return FP_EINVAL;
	*out = NULL;
	f = &m->funcs[fi];
	n = f->end_op - f->first_op;
	mult = fp_calloc(n ? n : 1, sizeof(*mult));
	inner = fp_calloc(n ? n : 1, sizeof(*inner));
	if (!mult || !inner) {
		rc = FP_ENOMEM;
		goto out;
	}
	memset(&scratch, 0, sizeof(scratch));
	for (i = f->first_op; i < f->end_op && rc == FP_OK; i++) {
		const struct fp_ttir_op *op = &m->ops[i];

		if ((op->flags & FP_TTIR_OP_CONST_INT) && op->n_results == 1)
			rc = fp__ttir_strmap_put(&consts, op->results[0].name,
						 strlen(op->results[0].name), (uint32_t)i, &slot,
						 &added);
	}
	for (i = f->first_op; i < f->end_op && rc == FP_OK; i++) {
		const struct fp_ttir_op *op = &m->ops[i];
		uint64_t k = 1;

		if (op->parent != FP_TTIR_NONE && op->parent >= f->first_op && op->parent < i)
			k = inner[op->parent - f->first_op];
		mult[i - f->first_op] = k;
		if (op->flags & FP_TTIR_OP_REGIONS)
			inner[i - f->first_op] = fp__ttir_sat_mul(
				k, region_factor(m, &consts, op, &scratch), &scratch.saturated);
	}
out:
	fp__ttir_strmap_release(&consts);
	fp_free(inner);
	if (rc)
		fp_free(mult);
	else
		*out = mult;
	return rc;
}

int fp_ttir_estimate(const struct fp_ttir *m, const char *func, struct fp_ttir_estimate *out)
{
	struct est st;
	size_t fi;
	unsigned c;
	int rc;

	if (!m || !out)
		return FP_EINVAL;
	fi = func ? fp_ttir_func_find(m, func) : fp_ttir_entry(m);
	if (fi == FP_TTIR_NPOS)
		return FP_ENOENT;
	st.m = m;
	st.memo = fp_calloc(m->n_funcs, sizeof(*st.memo));
	st.state = fp_calloc(m->n_funcs, sizeof(*st.state));
	if (!st.memo || !st.state) {
		rc = FP_ENOMEM;
		goto out;
	}
	rc = estimate_func(&st, fi, 0);
	if (rc)
		goto out;
	*out = st.memo[fi];
	out->total_flops = out->dot_flops;
	for (c = 0; c < FP_TTIR_NCLASS; c++)
		out->total_flops =
			fp__ttir_sat_add(out->total_flops, out->flops[c], &out->saturated);
	out->has_dynamic_loops = out->dynamic_loops > 0;
out:
	fp_free(st.memo);
	fp_free(st.state);
	return rc;
}
