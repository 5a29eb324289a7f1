/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The facts of a kernel's IR that `flagprism advise` needs beyond the estimate (include/
 * flagprism/ttir.h, fp_ttir_facts()): dots and float32 multiplies fed by values widened from
 * 16- or 8-bit floats, the heaviest load, the largest tensor, and the lines where they are. It
 * follows SSA values back through layout ops only (a widened value that went through arithmetic
 * first is not "the narrow data"), and does not follow calls. It is not the estimate
 * (ttir-estimate.c) and it judges nothing: the advice decides what the facts mean.
 */
#include "fp-setup.h"

#include <flagprism/json.h>

#include "ir/ttir-internal.h"

#define MAX_HOPS 16 /* layout ops followed back from an operand */

struct ctx {
	const struct fp_ttir *m;
	const struct fp_ttir_func *f;
	struct fp__ttir_strmap defs; /* SSA result name -> op index */
	const uint64_t *mult;        /* per op of f, from fp__ttir_op_mults() */
	bool *sat;
};

static bool is(const char *name, const char *what)
{
	return strcmp(name, what) == 0;
}

/* Ops that only move or relayout values: a widened value stays "the widened data". */
static bool layout_op(const char *n)
{
	static const char *const ops[] = {
		"tt.trans",           "tt.broadcast",    "tt.expand_dims", "tt.reshape",
		"ttg.convert_layout", "ttg.local_alloc", "ttg.local_load", "ttg.memdesc_trans",
	};
	size_t i;

	for (i = 0; i < FP_ARRAY_SIZE(ops); i++)
		if (is(n, ops[i]))
			return true;
	return false;
}

static const struct fp_ttir_op *producer(const struct ctx *c, const char *value)
{
	const struct fp__ttir_slot *s;

	if (!value)
		return NULL;
	s = fp__ttir_strmap_get(&c->defs, value, strlen(value));
	return s ? &c->m->ops[s->value] : NULL;
}

/*
 * The class of the narrow float `value` was widened from (through layout ops), or
 * FP_TTIR_NCLASS when it was not widened: arith.extf from f16/bf16, tt.fp_to_fp from an f8.
 */
static enum fp_ttir_dclass widened_from(const struct ctx *c, const char *value)
{
	const struct fp_ttir_op *op = producer(c, value);
	unsigned hops;

	for (hops = 0; op && hops < MAX_HOPS; hops++) {
		if ((is(op->name, "arith.extf") || is(op->name, "tt.fp_to_fp")) &&
		    op->n_sig_types && op->n_results) {
			enum fp_ttir_dclass from = fp__ttir_elem_class(op->sig_types[0].elem);
			enum fp_ttir_dclass to = fp__ttir_elem_class(op->results[0].type.elem);

			if (to == FP_TTIR_FP32 && (from == FP_TTIR_FP16 || from == FP_TTIR_FP8))
				return from;
			return FP_TTIR_NCLASS;
		}
		if (!layout_op(op->name) || !op->n_operands)
			return FP_TTIR_NCLASS;
		op = producer(c, op->operands[0]);
	}
	return FP_TTIR_NCLASS;
}

/*
 * The inputPrecision attribute printed on the op's line of `text`. MLIR leaves an attribute at
 * its default out, and Triton's default is IEEE (tl.dot(..., input_precision="ieee") prints
 * nothing, "tf32" prints `inputPrecision = tf32`), so a dot line without one says "ieee".
 */
static void precision_of(const struct fp_ttir_op *op, const char *text, size_t len, char *buf,
			 size_t size)
{
	static const char key[] = "inputPrecision = ";
	size_t i, k = sizeof(key) - 1, o = 0;

	buf[0] = '\0';
	if (!text || op->offset >= len)
		return;
	for (i = (size_t)op->offset; i + k <= len && text[i] != '\n'; i++) {
		if (memcmp(text + i, key, k) != 0)
			continue;
		for (i += k; i < len && o + 1 < size && fp__ttir_is_idchar(text[i]); i++)
			buf[o++] = text[i];
		buf[o] = '\0';
		return;
	}
	snprintf(buf, size, "ieee");
}

static const struct fp_ttir_type *sig(const struct fp_ttir_op *op, uint32_t i)
{
	return i < op->n_sig_types ? &op->sig_types[i] : NULL;
}

static uint64_t mul(const struct ctx *c, uint64_t a, uint64_t b)
{
	return fp__ttir_sat_mul(a, b, c->sat);
}

static void dot(const struct ctx *c, const struct fp_ttir_op *op, uint64_t k, const char *text,
		size_t len, struct fp_ttir_facts *out)
{
	const struct fp_ttir_type *a = sig(op, 0),
				  *res = op->n_results ? &op->results[0].type : NULL;
	enum fp_ttir_dclass wa, wb;
	uint64_t flops = 0;

	if (res && a && a->rank >= 2 && a->shape[a->rank - 1] > 0)
		flops = mul(c, mul(c, mul(c, 2, res->numel), (uint64_t)a->shape[a->rank - 1]), k);
	out->dot_flops = fp__ttir_sat_add(out->dot_flops, flops, c->sat);
	if (!a || fp__ttir_elem_class(a->elem) != FP_TTIR_FP32 || op->n_operands < 2)
		return;
	wa = widened_from(c, op->operands[0]);
	wb = widened_from(c, op->operands[1]);
	if (wa == FP_TTIR_NCLASS && wb == FP_TTIR_NCLASS)
		return;
	if (!out->widened_dots) {
		out->widened_from = wa != FP_TTIR_NCLASS ? wa : wb;
		out->widened_dot_at = op->caller;
		precision_of(op, text, len, out->precision, sizeof(out->precision));
	}
	out->widened_dots = fp__ttir_sat_add(out->widened_dots, k, c->sat);
	out->widened_dot_flops = fp__ttir_sat_add(out->widened_dot_flops, flops, c->sat);
}

int fp_ttir_facts(const struct fp_ttir *m, const char *func, const char *text, size_t len,
		  struct fp_ttir_facts *out)
{
	struct ctx c;
	struct fp__ttir_slot *slot;
	uint64_t *mults = NULL, best_mul = 0;
	bool added;
	size_t fi, i;
	int rc;

	if (!m || !out)
		return FP_EINVAL;
	fi = func ? fp_ttir_func_find(m, func) : fp_ttir_entry(m);
	if (fi == FP_TTIR_NPOS)
		return FP_ENOENT;
	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	out->widened_from = FP_TTIR_NCLASS;
	c.m = m;
	c.f = &m->funcs[fi];
	c.sat = &out->saturated;
	out->def = c.f->loc;
	{
		struct fp_ttir_estimate e;

		rc = fp_ttir_estimate(m, c.f->name, &e);
		if (rc)
			return rc;
		out->bytes = fp__ttir_sat_add(fp__ttir_sat_add(e.load_bytes, e.store_bytes, c.sat),
					      e.atomic_bytes, c.sat);
		out->load_bytes = e.load_bytes;
		out->total_flops = e.total_flops;
		out->fp32_flops = e.flops[FP_TTIR_FP32];
		out->saturated |= e.saturated;
	}
	rc = fp__ttir_op_mults(m, fi, &mults);
	if (rc)
		return rc;
	c.mult = mults;
	for (i = c.f->first_op; i < c.f->end_op && rc == FP_OK; i++) {
		const struct fp_ttir_op *op = &m->ops[i];
		uint32_t r;

		for (r = 0; r < op->n_results && rc == FP_OK; r++)
			rc = fp__ttir_strmap_put(&c.defs, op->results[r].name,
						 strlen(op->results[r].name), (uint32_t)i, &slot,
						 &added);
	}
	if (rc)
		goto out;
	for (i = c.f->first_op; i < c.f->end_op; i++) {
		const struct fp_ttir_op *op = &m->ops[i];
		const struct fp_ttir_type *res = op->n_results ? &op->results[0].type : NULL;
		uint64_t k = mults[i - c.f->first_op], numel, bytes;
		enum fp_ttir_dclass cls;
		uint32_t esize;

		if (op->func != fi)
			continue;
		if (is(op->name, "tt.dot") || is(op->name, "tt.dot_scaled") ||
		    is(op->name, "ttng.warp_group_dot")) {
			dot(&c, op, k, text, len, out);
			continue;
		}
		if (res && (is(op->name, "tt.load") || is(op->name, "tt.descriptor_load")) &&
		    fp__ttir_access(res, &numel, &esize, &cls)) {
			bytes = mul(&c, mul(&c, numel, esize), k);
			if (bytes > out->top_load_bytes) {
				out->top_load_bytes = bytes;
				out->top_load_elem = res->elem;
				out->top_load_at = op->caller;
			}
		}
		if ((is(op->name, "arith.mulf") || is(op->name, "math.fma")) && res &&
		    fp__ttir_elem_class(res->elem) == FP_TTIR_FP32 && op->n_operands >= 2 &&
		    (widened_from(&c, op->operands[0]) != FP_TTIR_NCLASS ||
		     widened_from(&c, op->operands[1]) != FP_TTIR_NCLASS)) {
			uint64_t f =
				mul(&c, mul(&c, res->numel, is(op->name, "math.fma") ? 2 : 1), k);

			out->widened_mul_flops = fp__ttir_sat_add(out->widened_mul_flops, f, c.sat);
			if (f > best_mul) {
				best_mul = f;
				out->widened_mul_at = op->caller;
			}
		}
		if (res && res->rank >= 1 && !(op->flags & FP_TTIR_IN_COMBINE_REGION)) {
			bytes = mul(&c, res->numel, fp__ttir_elem_size(res->elem));
			if (bytes > out->top_tile_bytes) {
				out->top_tile_bytes = bytes;
				out->top_tile_at = op->caller;
			}
		}
	}
out:
	fp__ttir_strmap_release(&c.defs);
	fp_free(mults);
	if (rc) {
		memset(out, 0, sizeof(*out));
		out->widened_from = FP_TTIR_NCLASS;
	}
	return rc;
}

static void loc_member(struct fp_jsonw *w, const char *key, const struct fp_ttir_loc *l)
{
	if (!l->file || !l->line)
		return;
	fp_jsonw_key(w, key);
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, FP_TTIR_FACT_FILE, l->file);
	fp_jsonw_kv_uint(w, FP_TTIR_FACT_LINE, l->line);
	fp_jsonw_object_end(w);
}

int fp_ttir_facts_write(const struct fp_ttir_facts *f, struct fp_jsonw *w)
{
	if (!f || !w)
		return FP_EINVAL;
	fp_jsonw_object_begin(w);
	loc_member(w, FP_TTIR_FACT_DEF, &f->def);
	fp_jsonw_kv_uint(w, FP_TTIR_FACT_BYTES, f->bytes);
	fp_jsonw_kv_uint(w, FP_TTIR_FACT_LOAD_BYTES, f->load_bytes);
	fp_jsonw_kv_uint(w, FP_TTIR_FACT_TOTAL_FLOPS, f->total_flops);
	fp_jsonw_kv_uint(w, FP_TTIR_FACT_FP32_FLOPS, f->fp32_flops);
	fp_jsonw_kv_uint(w, FP_TTIR_FACT_DOT_FLOPS, f->dot_flops);
	if (f->widened_dots) {
		fp_jsonw_kv_uint(w, FP_TTIR_FACT_WIDENED_DOTS, f->widened_dots);
		fp_jsonw_kv_uint(w, FP_TTIR_FACT_WIDENED_DOT_FLOPS, f->widened_dot_flops);
		fp_jsonw_kv_string(w, FP_TTIR_FACT_WIDENED_FROM,
				   fp_ttir_dclass_name(f->widened_from));
		if (f->precision[0])
			fp_jsonw_kv_string(w, FP_TTIR_FACT_PRECISION, f->precision);
		loc_member(w, FP_TTIR_FACT_WIDENED_DOT_AT, &f->widened_dot_at);
	}
	if (f->widened_mul_flops) {
		fp_jsonw_kv_uint(w, FP_TTIR_FACT_WIDENED_MUL_FLOPS, f->widened_mul_flops);
		loc_member(w, FP_TTIR_FACT_WIDENED_MUL_AT, &f->widened_mul_at);
	}
	if (f->top_load_bytes) {
		fp_jsonw_kv_uint(w, FP_TTIR_FACT_TOP_LOAD_BYTES, f->top_load_bytes);
		if (f->top_load_elem)
			fp_jsonw_kv_string(w, FP_TTIR_FACT_TOP_LOAD_ELEM, f->top_load_elem);
		loc_member(w, FP_TTIR_FACT_TOP_LOAD_AT, &f->top_load_at);
	}
	if (f->top_tile_bytes) {
		fp_jsonw_kv_uint(w, FP_TTIR_FACT_TOP_TILE_BYTES, f->top_tile_bytes);
		loc_member(w, FP_TTIR_FACT_TOP_TILE_AT, &f->top_tile_at);
	}
	return fp_jsonw_object_end(w);
}
