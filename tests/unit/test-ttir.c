/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the TTIR parser and estimator (include/flagprism/ttir.h), on the real TTIR that
 * tests/data/ttir/generate.py compiled from tests/data/ttir/kernels.py, plus hand-written and
 * hostile snippets. Source lines are looked up in kernels.py by their text, so the tests check
 * the IR's locations against the actual file rather than against remembered numbers.
 */
#include <stdlib.h>
#include <string.h>

#include <flagprism/alloc.h>
#include <flagprism/status.h>
#include <flagprism/ttir.h>

#include "test.h"

static struct fp_ttir *load(const char *name)
{
	char path[256];
	struct fp_diag diag;
	struct fp_ttir *m = NULL;
	size_t len;
	char *text;
	int rc;

	snprintf(path, sizeof(path), "ttir/%s", name);
	text = fpt_slurp(fpt_data_path(path), &len);
	rc = fp_ttir_parse(text, len, &m, &diag);
	if (rc)
		fprintf(stderr, "%s:%u:%u: %s\n", name, diag.line, diag.col, diag.msg);
	ASSERT_OK(rc);
	ASSERT_NOT_NULL(m);
	free(text);
	return m;
}

/* 1-based line of kernels.py holding `needle` (the first one). */
static uint32_t kline(const char *needle)
{
	size_t len;
	char *text = fpt_slurp(fpt_data_path("ttir/kernels.py"), &len);
	char *hit = strstr(text, needle), *p;
	uint32_t line = 1;

	ASSERT_NOT_NULL(hit);
	for (p = text; p < hit; p++)
		line += *p == '\n';
	free(text);
	return line;
}

/* First op called `name` with index >= from. */
static const struct fp_ttir_op *find_op(const struct fp_ttir *m, const char *name, size_t from)
{
	size_t i;

	for (i = from; i < fp_ttir_op_count(m); i++)
		if (strcmp(fp_ttir_op_at(m, i)->name, name) == 0)
			return fp_ttir_op_at(m, i);
	return NULL;
}

static size_t count_ops(const struct fp_ttir *m, const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < fp_ttir_op_count(m); i++)
		n += strcmp(fp_ttir_op_at(m, i)->name, name) == 0;
	return n;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int parse_str(const char *text, struct fp_ttir **m, struct fp_diag *diag)
{
	return fp_ttir_parse(text, strlen(text), m, diag);
}

TEST(ttir_add_ops)
{
	struct fp_ttir *m = load("add.ttir");
	const struct fp_ttir_func *f;
	const struct fp_ttir_op *op;

	ASSERT_EQ(fp_ttir_func_count(m), 1);
	ASSERT_EQ(fp_ttir_op_count(m), 19);
	ASSERT_EQ(count_ops(m, "tt.load"), 2);
	ASSERT_EQ(count_ops(m, "tt.store"), 1);
	f = fp_ttir_func_at(m, 0);
	ASSERT_STREQ(f->name, "add_kernel");
	ASSERT(f->is_public);
	ASSERT(!f->noinline);
	ASSERT(f->has_body);
	ASSERT_EQ(f->first_op, 0);
	ASSERT_EQ(f->end_op, 19);
	ASSERT_EQ(f->loc.line, kline("def add_kernel"));
	ASSERT_EQ(f->n_args, 4);
	ASSERT_STREQ(f->args[0].name, "%x_ptr");
	ASSERT_STREQ(f->args[0].type.text, "!tt.ptr<f32>");
	ASSERT_EQ(f->args[0].divisibility, 16);
	ASSERT_STREQ(f->args[0].loc.name, "x_ptr");
	ASSERT_STREQ(f->args[3].type.text, "i32");
	ASSERT_EQ(f->args[3].divisibility, 0);
	ASSERT_EQ(fp_ttir_func_find(m, "add_kernel"), 0);
	ASSERT_EQ(fp_ttir_entry(m), 0);
	ASSERT_UEQ(fp_ttir_func_find(m, "nope"), FP_TTIR_NPOS);

	/* the load assigned to x */
	op = find_op(m, "tt.load", 0);
	ASSERT_NOT_NULL(op);
	ASSERT_STREQ(op->var_name, "x");
	ASSERT_STREQ(op->loc.name, "x");
	ASSERT(ends_with(op->loc.file, "kernels.py"));
	ASSERT_EQ(op->loc.line, kline("x = tl.load(x_ptr + offsets"));
	ASSERT_EQ(op->loc.col, 16);
	ASSERT_EQ(op->caller.line, op->loc.line);
	ASSERT(!(op->flags & FP_TTIR_OP_CALLSITE));
	ASSERT(op->flags & FP_TTIR_OP_MASKED);
	ASSERT_STREQ(op->func_name, "add_kernel");
	ASSERT_EQ(op->func, 0);
	ASSERT_EQ(op->depth, 0);
	ASSERT_EQ(op->parent, FP_TTIR_NONE);
	ASSERT_EQ(op->end, op->index + 1);
	ASSERT_EQ(op->n_results, 1);
	ASSERT_STREQ(op->results[0].name, "%x_5");
	ASSERT_STREQ(op->results[0].type.text, "tensor<1024xf32>");
	ASSERT_STREQ(op->results[0].type.elem, "f32");
	ASSERT_EQ(op->results[0].type.rank, 1);
	ASSERT_EQ(op->results[0].type.shape[0], 1024);
	ASSERT_UEQ(op->results[0].type.numel, 1024);
	ASSERT_EQ(op->n_operands, 2);
	ASSERT_STREQ(op->operands[0], "%x_4");
	ASSERT_STREQ(op->operands[1], "%mask_3");
	ASSERT_EQ(op->n_sig_types, 1);
	ASSERT_STREQ(op->sig_types[0].elem, "!tt.ptr<f32>");
	ASSERT_EQ(op->ir_line, 18);

	/* the first op: a constant without a location */
	op = fp_ttir_op_at(m, 0);
	ASSERT_STREQ(op->name, "arith.constant");
	ASSERT(op->flags & FP_TTIR_OP_CONST_INT);
	ASSERT_EQ(op->int_value, 1024);
	ASSERT_NULL(op->loc.file);
	ASSERT_NULL(op->var_name);

	/* comparisons produce i1 of the operands' shape */
	op = find_op(m, "arith.cmpi", 0);
	ASSERT_STREQ(op->results[0].type.text, "tensor<1024xi1>");
	ASSERT_STREQ(op->var_name, "mask");

	op = find_op(m, "tt.store", 0);
	ASSERT_EQ(op->n_results, 0);
	ASSERT_EQ(op->loc.line, kline("tl.store(out_ptr + offsets, output"));
	ASSERT_NULL(fp_ttir_op_at(m, 19));
	fp_ttir_free(m);
}

TEST(ttir_add_estimate)
{
	struct fp_ttir *m = load("add.ttir");
	struct fp_ttir_estimate e;

	ASSERT_OK(fp_ttir_estimate(m, NULL, &e));
	ASSERT_UEQ(e.loads, 2);
	ASSERT_UEQ(e.load_bytes, 2 * 1024 * 4);
	ASSERT_UEQ(e.masked_loads, 2);
	ASSERT_UEQ(e.stores, 1);
	ASSERT_UEQ(e.store_bytes, 1024 * 4);
	ASSERT_UEQ(e.masked_stores, 1);
	ASSERT_UEQ(e.flops[FP_TTIR_FP32], 1024);
	ASSERT_UEQ(e.elem_ops[FP_TTIR_FP32], 1024);
	ASSERT_UEQ(e.total_flops, 1024);
	ASSERT_UEQ(e.dots, 0);
	ASSERT_EQ(e.static_loops, 0);
	ASSERT(!e.has_dynamic_loops);
	ASSERT(!e.saturated);
	ASSERT_OK(fp_ttir_estimate(m, "add_kernel", &e));
	ASSERT_UEQ(e.loads, 2);
	ASSERT_EQ(fp_ttir_estimate(m, "other", &e), FP_ENOENT);
	ASSERT_EQ(fp_ttir_estimate(NULL, NULL, &e), FP_EINVAL);
	ASSERT_EQ(fp_ttir_estimate(m, NULL, NULL), FP_EINVAL);
	fp_ttir_free(m);
}

TEST(ttir_matmul_loop)
{
	struct fp_ttir *m = load("matmul.ttir");
	const struct fp_ttir_op *loop = find_op(m, "scf.for", 0), *op;
	uint32_t i;

	ASSERT_NOT_NULL(loop);
	ASSERT_EQ(count_ops(m, "scf.for"), 1);
	ASSERT(loop->flags & FP_TTIR_OP_REGIONS);
	ASSERT_EQ(loop->n_regions, 1);
	ASSERT_EQ(loop->n_results, 3);
	ASSERT_STREQ(loop->results[0].name, "%acc_25#0");
	ASSERT_STREQ(loop->results[2].name, "%acc_25#2");
	ASSERT_STREQ(loop->results[2].type.text, "tensor<64x64xf32>");
	ASSERT_STREQ(loop->results[0].type.elem, "!tt.ptr<f16>");
	ASSERT_STREQ(loop->var_name, "acc");
	ASSERT_EQ(loop->loc.line, kline("for k in range(0, K, BLOCK_K)"));
	/* lower bound, upper bound, step, then the iter_args inits */
	ASSERT_EQ(loop->n_operands, 6);
	ASSERT_STREQ(loop->operands[0], "%c0_i32");
	ASSERT_STREQ(loop->operands[1], "%c256_i32");
	ASSERT_STREQ(loop->operands[2], "%c32_i32");
	ASSERT(loop->end > loop->index + 1);
	for (i = loop->index + 1; i < loop->end; i++) {
		op = fp_ttir_op_at(m, i);
		ASSERT_EQ(op->parent, loop->index);
		ASSERT_EQ(op->depth, 1);
		ASSERT(op->flags & FP_TTIR_IN_FOR);
		ASSERT(op->flags & FP_TTIR_IN_LOOP);
		ASSERT(!(op->flags & FP_TTIR_IN_WHILE));
	}
	op = find_op(m, "tt.dot", 0);
	ASSERT_NOT_NULL(op);
	ASSERT_EQ(op->parent, loop->index);
	ASSERT_STREQ(op->var_name, "acc");
	ASSERT_EQ(op->loc.line, kline("acc = tl.dot(a, b, acc)"));
	ASSERT_EQ(op->n_sig_types, 2);
	ASSERT_STREQ(op->sig_types[0].text, "tensor<64x32xf16>");
	ASSERT_STREQ(op->sig_types[1].text, "tensor<32x64xf16>");
	ASSERT_STREQ(op->results[0].type.text, "tensor<64x64xf32>");
	/* the use of the loop's third result after the loop */
	op = find_op(m, "arith.truncf", 0);
	ASSERT_STREQ(op->operands[0], "%acc_25#2");
	ASSERT_STREQ(op->results[0].type.elem, "f16");
	ASSERT(!(op->flags & FP_TTIR_IN_LOOP));
	/* tl.zeros is inlined from triton/language: a callsite back to the kernel's line */
	op = fp_ttir_op_at(m, 0);
	ASSERT(op->flags & FP_TTIR_OP_CALLSITE);
	ASSERT(ends_with(op->loc.file, "triton/language/standard.py"));
	ASSERT(ends_with(op->caller.file, "kernels.py"));
	ASSERT_EQ(op->caller.line, kline("acc = tl.zeros((BLOCK_M, BLOCK_N)"));
	ASSERT_STREQ(op->var_name, "acc");
	fp_ttir_free(m);
}

TEST(ttir_matmul_estimate)
{
	struct fp_ttir *m = load("matmul.ttir");
	struct fp_ttir_estimate e;
	const uint64_t BM = 64, BN = 64, BK = 32, K = 256, trips = K / BK;

	ASSERT_OK(fp_ttir_estimate(m, NULL, &e));
	ASSERT_UEQ(e.dots, trips);
	ASSERT_UEQ(e.dot_flops, 2 * BM * BN * BK * trips);
	ASSERT_UEQ(e.dot_flops_by_class[FP_TTIR_FP16], 2 * BM * BN * BK * trips);
	ASSERT_UEQ(e.total_flops, e.dot_flops);
	ASSERT_UEQ(e.loads, 2 * trips);
	ASSERT_UEQ(e.load_bytes, (BM * BK + BK * BN) * 2 * trips);
	ASSERT_UEQ(e.masked_loads, 0);
	ASSERT_UEQ(e.stores, 1);
	ASSERT_UEQ(e.store_bytes, BM * BN * 2);
	ASSERT_UEQ(e.conversions, BM * BN);
	ASSERT_EQ(e.static_loops, 1);
	ASSERT_EQ(e.dynamic_loops, 0);
	ASSERT(!e.has_dynamic_loops);
	fp_ttir_free(m);

	/* runtime K: the loop body counts once and the estimate says so */
	m = load("matmul_dynk.ttir");
	ASSERT_OK(fp_ttir_estimate(m, NULL, &e));
	ASSERT_UEQ(e.dots, 1);
	ASSERT_UEQ(e.dot_flops, 2 * 32 * 32 * 32);
	ASSERT_UEQ(e.loads, 2);
	ASSERT_UEQ(e.masked_loads, 2);
	ASSERT_EQ(e.static_loops, 0);
	ASSERT_EQ(e.dynamic_loops, 1);
	ASSERT(e.has_dynamic_loops);
	fp_ttir_free(m);
}

TEST(ttir_callsite)
{
	struct fp_ttir *m = load("helpers.ttir");
	const struct fp_ttir_func *f;
	const struct fp_ttir_op *op;
	struct fp_ttir_estimate e;
	uint32_t inner = kline("y = x * factor"), outer = kline("c = nested_inline(b)");
	size_t i, hits = 0, callee;

	ASSERT_EQ(fp_ttir_func_count(m), 2);
	callee = fp_ttir_func_find(m, "kernels.factor_noinline__i32__(1,)cconstexpr_2_d_0_");
	ASSERT_EQ(callee, 1);
	f = fp_ttir_func_at(m, callee);
	ASSERT(!f->is_public);
	ASSERT(f->noinline);
	ASSERT_EQ(f->n_results, 1);
	ASSERT_STREQ(f->results[0].text, "f32");
	ASSERT_EQ(f->loc.line, kline("def factor_noinline"));
	ASSERT_EQ(fp_ttir_entry(m), 0);

	/* the non-inlined helper is a tt.call with a plain location */
	op = find_op(m, "tt.call", 0);
	ASSERT_NOT_NULL(op);
	ASSERT_STREQ(op->callee, f->name);
	ASSERT_STREQ(op->var_name, "a");
	ASSERT(!(op->flags & FP_TTIR_OP_CALLSITE));
	ASSERT_STREQ(op->results[0].type.text, "f32");
	for (i = f->first_op; i < f->end_op; i++)
		ASSERT_STREQ(fp_ttir_op_at(m, i)->func_name, f->name);

	/* scale_inline inlined twice into nested_inline into the kernel */
	for (i = 0; i < fp_ttir_op_count(m); i++) {
		op = fp_ttir_op_at(m, i);
		if (!(op->flags & FP_TTIR_OP_CALLSITE) || strcmp(op->name, "arith.mulf") != 0 ||
		    op->loc.line != inner || op->caller.line != outer)
			continue;
		ASSERT_STREQ(op->loc.name, "y");
		ASSERT_STREQ(op->caller.name, "c");
		ASSERT_STREQ(op->var_name, "y");
		ASSERT(ends_with(op->loc.file, "kernels.py"));
		/* the middle frame is nested_inline's call of scale_inline */
		ASSERT_EQ(op->n_frames, 3);
		ASSERT_EQ(op->frames[0].line, inner);
		ASSERT_EQ(op->frames[2].line, outer);
		ASSERT(op->frames[1].line > 0 && op->frames[1].line != inner &&
		       op->frames[1].line != outer);
		hits++;
	}
	ASSERT_EQ(hits, 1);

	/* the callee's work is part of the kernel's estimate */
	ASSERT_OK(fp_ttir_estimate(m, NULL, &e));
	ASSERT_UEQ(e.calls, 1);
	ASSERT_EQ(e.unresolved_calls, 0);
	ASSERT_UEQ(e.flops[FP_TTIR_FP32], 6 * 128);
	ASSERT_UEQ(e.elem_ops[FP_TTIR_FP32], 6 * 128 + 1);
	fp_ttir_free(m);
}

TEST(ttir_control_flow)
{
	struct fp_ttir *m = load("control_flow.ttir");
	const struct fp_ttir_op *w = find_op(m, "scf.while", 0), *ifop, *red, *op;
	struct fp_ttir_estimate e;
	size_t i;

	ASSERT_NOT_NULL(w);
	ASSERT_EQ(w->n_regions, 2);
	ASSERT_EQ(w->n_results, 2);
	ASSERT_STREQ(w->results[0].name, "%total_9#0");
	ASSERT_STREQ(w->results[0].type.text, "tensor<256xf32>");
	ASSERT_STREQ(w->results[1].type.text, "i32");
	ASSERT_EQ(w->loc.line, kline("while total < limit"));
	op = find_op(m, "scf.condition", 0);
	ASSERT_EQ(op->parent, w->index);
	ASSERT_EQ(op->region, 0);
	ASSERT(op->flags & FP_TTIR_IN_WHILE);
	ASSERT(op->flags & FP_TTIR_IN_LOOP);
	op = find_op(m, "arith.mulf", w->index);
	ASSERT_EQ(op->region, 1);
	ASSERT_EQ(op->loc.line, kline("x = x * 2.0"));

	/* the reduction inside the loop body, and its combine region */
	red = find_op(m, "tt.reduce", w->index);
	ASSERT_NOT_NULL(red);
	ASSERT(red->flags & FP_TTIR_OP_GENERIC);
	ASSERT(red->flags & FP_TTIR_IN_WHILE);
	ASSERT_EQ(red->axis, 0);
	ASSERT_EQ(red->depth, 1);
	ASSERT_EQ(red->caller.line, kline("total = tl.sum(x, axis=0)\n        steps"));
	ASSERT_STREQ(red->var_name, "total");
	op = fp_ttir_op_at(m, red->index + 1);
	ASSERT_STREQ(op->name, "arith.addf");
	ASSERT_EQ(op->depth, 2);
	ASSERT(op->flags & FP_TTIR_IN_COMBINE_REGION);
	ASSERT(op->flags & FP_TTIR_IN_WHILE);
	ASSERT_STREQ(op->results[0].type.text, "f32");

	/* if / else */
	ifop = find_op(m, "scf.if", 0);
	ASSERT_EQ(ifop->n_regions, 2);
	ASSERT_EQ(ifop->n_results, 1);
	ASSERT_STREQ(ifop->results[0].type.text, "tensor<256xf32>");
	ASSERT_EQ(ifop->loc.line, kline("if pid == 0"));
	for (i = ifop->index + 1; i < ifop->end; i++) {
		op = fp_ttir_op_at(m, i);
		ASSERT(op->flags & FP_TTIR_IN_IF);
		ASSERT(!(op->flags & FP_TTIR_IN_LOOP));
	}
	op = find_op(m, "arith.subf", ifop->index);
	ASSERT_EQ(op->region, 1);
	ASSERT_EQ(op->loc.line, kline("x = x - 1.0"));
	ifop = find_op(m, "scf.if", ifop->index + 1);
	ASSERT_EQ(ifop->n_regions, 1);
	ASSERT_EQ(ifop->n_results, 0);
	op = find_op(m, "tt.store", ifop->index);
	ASSERT(op->flags & FP_TTIR_IN_IF);

	ASSERT_OK(fp_ttir_estimate(m, NULL, &e));
	ASSERT(e.has_dynamic_loops);
	ASSERT_EQ(e.dynamic_loops, 1);
	ASSERT_EQ(e.conditionals, 2);
	ASSERT_UEQ(e.reductions, 2);
	ASSERT_UEQ(e.reduce_elems, 2 * 256);
	ASSERT_UEQ(e.stores, 1);
	fp_ttir_free(m);
}

TEST(ttir_reductions)
{
	struct fp_ttir *m = load("reductions.ttir");
	const struct fp_ttir_op *op = NULL;
	struct fp_ttir_estimate e;
	size_t i;

	ASSERT_EQ(count_ops(m, "tt.reduce"), 4);
	for (i = 0; i < fp_ttir_op_count(m); i++) {
		op = fp_ttir_op_at(m, i);
		if (strcmp(op->name, "tt.reduce") == 0 && op->n_results == 2)
			break;
	}
	ASSERT(i < fp_ttir_op_count(m));
	ASSERT_STREQ(op->results[0].name, "%am#0");
	ASSERT_STREQ(op->results[1].name, "%am#1");
	ASSERT_STREQ(op->results[1].type.text, "tensor<16xi32>");
	ASSERT_EQ(op->n_operands, 2);
	ASSERT_EQ(op->axis, 1);
	ASSERT_STREQ(op->var_name, "am");
	ASSERT_EQ(op->caller.line, kline("am = tl.argmax(x, axis=1)"));

	ASSERT_OK(fp_ttir_estimate(m, NULL, &e));
	ASSERT_UEQ(e.reductions, 4);
	ASSERT_UEQ(e.reduce_elems, 3 * 16 * 64 + 16);
	/* sum, max and total: one op per combine; argmax: two cmpf per combine */
	ASSERT_UEQ(e.flops[FP_TTIR_FP32], 16 * 63 * 4 + 15);
	ASSERT_UEQ(e.stores, 4);
	ASSERT_UEQ(e.store_bytes, 3 * 16 * 4 + 4);
	fp_ttir_free(m);
}

TEST(ttir_block_ptr)
{
	struct fp_ttir *m = load("block_ptr_source.ttir");
	const struct fp_ttir_op *op = find_op(m, "tt.make_tensor_ptr", 0);
	struct fp_ttir_estimate e;

	ASSERT_NOT_NULL(op);
	ASSERT_STREQ(op->results[0].type.text, "!tt.ptr<tensor<32x64xf32>>");
	ASSERT_STREQ(op->var_name, "src");
	op = find_op(m, "tt.load", 0);
	ASSERT_STREQ(op->results[0].type.text, "tensor<32x64xf32>");
	ASSERT(op->flags & FP_TTIR_OP_MASKED); /* boundary_check */
	ASSERT_EQ(op->loc.line, kline("tile = tl.load(src"));
	op = find_op(m, "tt.store", 0);
	ASSERT(op->flags & FP_TTIR_OP_MASKED);
	ASSERT_OK(fp_ttir_estimate(m, NULL, &e));
	ASSERT_UEQ(e.load_bytes, 32 * 64 * 4);
	ASSERT_UEQ(e.store_bytes, 32 * 64 * 4);
	fp_ttir_free(m);

	/* after RewriteTensorPointer: plain pointer tensors, same traffic */
	m = load("block_ptr.ttir");
	ASSERT_EQ(count_ops(m, "tt.make_tensor_ptr"), 0);
	ASSERT_OK(fp_ttir_estimate(m, NULL, &e));
	ASSERT_UEQ(e.load_bytes, 32 * 64 * 4);
	ASSERT_UEQ(e.store_bytes, 32 * 64 * 4);
	fp_ttir_free(m);
}

TEST(ttir_casts_atomics)
{
	struct fp_ttir *m = load("casts.ttir");
	const struct fp_ttir_op *op;
	struct fp_ttir_estimate e;

	op = find_op(m, "tt.fp_to_fp", 0);
	ASSERT_STREQ(op->results[0].type.elem, "f8E4M3FN");
	ASSERT_STREQ(op->var_name, "f8");
	op = find_op(m, "arith.truncf", 0);
	ASSERT_STREQ(op->results[0].type.elem, "bf16");
	op = find_op(m, "arith.fptosi", 0);
	ASSERT_STREQ(op->results[0].type.text, "tensor<256xi8>");
	ASSERT_OK(fp_ttir_estimate(m, NULL, &e));
	ASSERT_UEQ(e.stores, 4);
	ASSERT_UEQ(e.store_bytes, 256 * (1 + 2 + 1 + 4));
	ASSERT_UEQ(e.conversions, 6 * 256);
	fp_ttir_free(m);

	m = load("atomics.ttir");
	ASSERT_EQ(count_ops(m, "tt.atomic_rmw"), 4);
	op = find_op(m, "arith.constant", 0);
	op = find_op(m, "tt.atomic_cas", 0);
	ASSERT_STREQ(op->results[0].type.text, "i32");
	ASSERT_STREQ(op->var_name, "old");
	ASSERT_OK(fp_ttir_estimate(m, NULL, &e));
	ASSERT_UEQ(e.atomics, 5);
	ASSERT_UEQ(e.atomic_bytes, 4 * 4 + 256 * 4);
	fp_ttir_free(m);
}

TEST(ttir_all_samples)
{
	static const char *const files[] = {
		"add.ttir",        "softmax.ttir",     "layernorm.ttir",
		"matmul.ttir",     "matmul_dynk.ttir", "control_flow.ttir",
		"helpers.ttir",    "block_ptr.ttir",   "block_ptr_source.ttir",
		"reductions.ttir", "atomics.ttir",     "casts.ttir",
	};
	struct fp_ttir_estimate e;
	size_t i, j;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct fp_ttir *m = load(files[i]);

		ASSERT_GT(fp_ttir_op_count(m), 5);
		for (j = 0; j < fp_ttir_op_count(m); j++) {
			const struct fp_ttir_op *op = fp_ttir_op_at(m, j);

			ASSERT_EQ(op->index, j);
			ASSERT_LE(op->end, fp_ttir_op_count(m));
			ASSERT_GT(op->end, op->index);
			ASSERT_NE(op->func, FP_TTIR_NONE);
			if (op->parent != FP_TTIR_NONE) {
				const struct fp_ttir_op *p = fp_ttir_op_at(m, op->parent);

				ASSERT_LT(op->parent, op->index);
				ASSERT_LE(op->end, p->end);
				ASSERT_EQ(op->depth, p->depth + 1);
				ASSERT_LT(op->region, p->n_regions);
			}
			/* every op that has a file position is in kernels.py or triton's files */
			if (op->loc.file)
				ASSERT(ends_with(op->loc.file, ".py"));
			ASSERT(op->n_results == 0 || op->results[0].type.text[0] != '\0');
		}
		ASSERT_OK(fp_ttir_estimate(m, NULL, &e));
		ASSERT_GE(e.loads, 1);
		ASSERT(!e.saturated);
		fp_ttir_free(m);
	}
}

TEST(ttir_find_line)
{
	struct fp_ttir *m = load("helpers.ttir");
	uint32_t outer = kline("c = nested_inline(b)"), inner = kline("y = x * factor");
	size_t i, n = 0;

	/* inlined code is found by the kernel's line through the caller location */
	for (i = fp_ttir_find_line(m, "kernels.py", outer, FP_TTIR_MATCH_CALLER, 0);
	     i != FP_TTIR_NPOS;
	     i = fp_ttir_find_line(m, "kernels.py", outer, FP_TTIR_MATCH_CALLER, i + 1)) {
		ASSERT_EQ(fp_ttir_op_at(m, i)->caller.line, outer);
		n++;
	}
	ASSERT_GE(n, 4);
	/* not by its innermost location */
	ASSERT_UEQ(fp_ttir_find_line(m, "kernels.py", outer, FP_TTIR_MATCH_LOC, 0), FP_TTIR_NPOS);
	/* the helper's own line through the innermost location, any file */
	i = fp_ttir_find_line(m, NULL, inner, FP_TTIR_MATCH_LOC, 0);
	ASSERT_NE(i, FP_TTIR_NPOS);
	ASSERT_STREQ(fp_ttir_op_at(m, i)->loc.name, "y");
	/* path matching: full relative path, basename, not a partial name */
	ASSERT_NE(fp_ttir_find_line(m, "tests/data/ttir/kernels.py", inner, FP_TTIR_MATCH_LOC, 0),
		  FP_TTIR_NPOS);
	ASSERT_NE(fp_ttir_find_line(m, "/abs/tests/data/ttir/kernels.py", inner, FP_TTIR_MATCH_LOC,
				    0),
		  FP_TTIR_NPOS);
	ASSERT_UEQ(fp_ttir_find_line(m, "nels.py", inner, FP_TTIR_MATCH_LOC, 0), FP_TTIR_NPOS);
	ASSERT_UEQ(fp_ttir_find_line(m, "other.py", inner, FP_TTIR_MATCH_LOC, 0), FP_TTIR_NPOS);
	ASSERT_UEQ(fp_ttir_find_line(m, NULL, inner, 0, 0), FP_TTIR_NPOS);
	ASSERT_UEQ(fp_ttir_find_line(NULL, NULL, inner, FP_TTIR_MATCH_LOC, 0), FP_TTIR_NPOS);
	fp_ttir_free(m);
}

TEST(ttir_handwritten)
{
	static const char text[] =
		"// a comment\n"
		"#a = loc(\"k.py\":3:4)\n"
		"tt.func @k(%p: !tt.ptr<f16, 1>, %n: i32 loc(\"n\"(#a))) {\n"
		"  %c = arith.constant -5 : i64 loc(fused[unknown, \"k.py\":7:1])\n"
		"  %t = arith.constant true loc(\"flag\")\n"
		"  %x, %y = test.pair %c : i64, i64 loc(fused<\"meta\">[#b, #a])\n"
		"  %r = \"tt.load\"(%p) <{cache = 1 : i32}> : (!tt.ptr<f16, 1>) -> f16 "
		"loc(\"k.py\":9:2 to 9:8)\n"
		"  %s = tt.call @\"q\\22uoted\"(%n) : (i32) -> f32 loc(callsite(\"a.py\":1:2 at "
		"callsite(\"b.py\":3:4 at \"k.py\":10:5)))\n"
		"  tt.return\n"
		"}\n"
		"#b = loc(\"v\"(\"k.py\":8:0))\n"
		"{-#\n  dialect_resources: { }\n#-}\n";
	struct fp_diag diag;
	struct fp_ttir *m;
	const struct fp_ttir_op *op;
	const struct fp_ttir_func *f;

	ASSERT_OK(parse_str(text, &m, &diag));
	ASSERT_EQ(fp_ttir_func_count(m), 1);
	f = fp_ttir_func_at(m, 0);
	ASSERT_STREQ(f->name, "k");
	ASSERT(!f->is_public);
	ASSERT_EQ(fp_ttir_entry(m), 0);
	ASSERT_STREQ(f->args[0].type.text, "!tt.ptr<f16, 1>");
	ASSERT_NULL(f->args[0].loc.file);
	ASSERT_STREQ(f->args[1].loc.name, "n");
	ASSERT_EQ(f->args[1].loc.line, 3);
	ASSERT_EQ(fp_ttir_op_count(m), 6);

	op = fp_ttir_op_at(m, 0);
	ASSERT(op->flags & FP_TTIR_OP_CONST_INT);
	ASSERT_EQ(op->int_value, -5);
	ASSERT_EQ(op->loc.line, 7); /* fused: the first element with a file */
	op = fp_ttir_op_at(m, 1);
	ASSERT(op->flags & FP_TTIR_OP_CONST_INT);
	ASSERT_EQ(op->int_value, 1);
	ASSERT_STREQ(op->results[0].type.text, "i1");
	ASSERT_STREQ(op->var_name, "flag");
	ASSERT_NULL(op->loc.file);
	op = fp_ttir_op_at(m, 2);
	ASSERT_EQ(op->n_results, 2);
	ASSERT_STREQ(op->results[1].name, "%y");
	ASSERT_STREQ(op->results[1].type.text, "i64");
	ASSERT_STREQ(op->var_name, "v");
	ASSERT_EQ(op->loc.line, 8);
	op = fp_ttir_op_at(m, 3);
	ASSERT(op->flags & FP_TTIR_OP_GENERIC);
	ASSERT_STREQ(op->name, "tt.load");
	ASSERT_STREQ(op->results[0].type.text, "f16");
	ASSERT(!(op->flags & FP_TTIR_OP_MASKED));
	ASSERT_EQ(op->loc.line, 9);
	ASSERT_EQ(op->loc.col, 2);
	op = fp_ttir_op_at(m, 4);
	ASSERT_STREQ(op->callee, "q\"uoted");
	ASSERT(op->flags & FP_TTIR_OP_CALLSITE);
	ASSERT(ends_with(op->loc.file, "a.py"));
	ASSERT_EQ(op->caller.line, 10);
	ASSERT_EQ(op->caller.col, 5);
	/* every frame of the chain, innermost first: a.py (callee), b.py, k.py (the kernel) */
	ASSERT_EQ(op->n_frames, 3);
	ASSERT(ends_with(op->frames[0].file, "a.py"));
	ASSERT(ends_with(op->frames[1].file, "b.py"));
	ASSERT_EQ(op->frames[1].line, 3);
	ASSERT(ends_with(op->frames[2].file, "k.py"));
	ASSERT_EQ(fp_ttir_op_at(m, 3)->n_frames, 1);
	ASSERT(fp_ttir_op_at(m, 3)->frames == &fp_ttir_op_at(m, 3)->loc);
	op = fp_ttir_op_at(m, 5);
	ASSERT_STREQ(op->name, "tt.return");
	ASSERT_NULL(op->loc.file);
	fp_ttir_free(m);

	/* no module, no function: ops at top level; an empty input */
	ASSERT_OK(parse_str("%0 = arith.constant 1 : i32\n", &m, &diag));
	ASSERT_EQ(fp_ttir_op_count(m), 1);
	ASSERT_EQ(fp_ttir_op_at(m, 0)->func, FP_TTIR_NONE);
	ASSERT_NULL(fp_ttir_op_at(m, 0)->func_name);
	ASSERT_UEQ(fp_ttir_entry(m), FP_TTIR_NPOS);
	ASSERT_EQ(fp_ttir_estimate(m, NULL, &(struct fp_ttir_estimate){0}), FP_ENOENT);
	fp_ttir_free(m);
	ASSERT_OK(fp_ttir_parse(NULL, 0, &m, &diag));
	ASSERT_EQ(fp_ttir_op_count(m), 0);
	fp_ttir_free(m);
	ASSERT_EQ(fp_ttir_parse(NULL, 3, &m, &diag), FP_EINVAL);
	ASSERT_EQ(fp_ttir_parse("", 0, NULL, &diag), FP_EINVAL);
	fp_ttir_free(NULL);
	ASSERT_EQ(fp_ttir_op_count(NULL), 0);
	ASSERT_EQ(fp_ttir_func_count(NULL), 0);
	ASSERT_NULL(fp_ttir_func_at(NULL, 0));
	ASSERT_NULL(fp_ttir_op_at(NULL, 0));
}

TEST(ttir_ttgir_types)
{
	/* TTGIR: layout encodings on tensors, shared-memory descriptors, a wgmma dot */
	static const char text[] =
		"#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32]}>\n"
		"module attributes {\"ttg.num-warps\" = 4 : i32} {\n"
		"  tt.func public @k(%p: tensor<128x!tt.ptr<f32>, #blocked>) {\n"
		"    %a = arith.cmpi slt, %x, %y : tensor<128xi32, #blocked>\n"
		"    %b = arith.cmpf oeq, %u, %v : tensor<f32>\n"
		"    %c = tt.load %p : tensor<128x!tt.ptr<f32>, #blocked>\n"
		"    %d = ttng.warp_group_dot %m, %n, %acc {isAsync = true} : "
		"!ttg.memdesc<64x32xf16, #shared, #smem> * !ttg.memdesc<32x64xf16, #shared1, #smem> "
		"-> tensor<64x64xf32, #mma>\n"
		"    tt.return\n"
		"  }\n"
		"}\n";
	struct fp_ttir_estimate e;
	struct fp_diag diag;
	struct fp_ttir *m;
	const struct fp_ttir_op *op;

	ASSERT_OK(parse_str(text, &m, &diag));
	op = fp_ttir_op_at(m, 0);
	ASSERT_STREQ(op->results[0].type.text, "tensor<128xi1, #blocked>");
	ASSERT_STREQ(op->results[0].type.elem, "i1");
	ASSERT_UEQ(op->results[0].type.numel, 128);
	op = fp_ttir_op_at(m, 1);
	ASSERT_STREQ(op->results[0].type.text, "tensor<i1>");
	ASSERT_EQ(op->results[0].type.rank, 0);
	op = fp_ttir_op_at(m, 2);
	ASSERT_STREQ(op->results[0].type.text, "tensor<128xf32, #blocked>");
	ASSERT_STREQ(op->results[0].type.elem, "f32");
	op = fp_ttir_op_at(m, 3);
	ASSERT_STREQ(op->sig_types[0].elem, "f16");
	ASSERT_EQ(op->sig_types[0].rank, 2);
	ASSERT_OK(fp_ttir_estimate(m, NULL, &e));
	ASSERT_UEQ(e.load_bytes, 128 * 4);
	fp_ttir_free(m);

	/* odd dims (a fuzzer find): the element type is not where the dims end */
	ASSERT_OK(parse_str("%a = arith.cmpi slt, %x, %y : tensor<32x?1xi32>\n"
			    "%b = tt.load %p : tensor<4x?x!tt.ptr<f32>>\n",
			    &m, &diag));
	op = fp_ttir_op_at(m, 0);
	ASSERT_STREQ(op->results[0].type.text, "tensor<32xi1>");
	op = fp_ttir_op_at(m, 1);
	ASSERT_STREQ(op->results[0].type.text, "tensor<4x?xf32>");
	ASSERT_UEQ(op->results[0].type.numel, 0);
	ASSERT_UEQ(e.dot_flops, 2 * 64 * 64 * 32);
	ASSERT_UEQ(e.dot_flops_by_class[FP_TTIR_FP16], 2 * 64 * 64 * 32);
	fp_ttir_free(m);
}

TEST(ttir_estimate_loops)
{
	/* nested constant loops multiply; a zero-trip loop contributes nothing */
	static const char text[] = "tt.func public @k(%p: !tt.ptr<f32>) {\n"
				   "  %c0 = arith.constant 0 : i32\n"
				   "  %c3 = arith.constant 3 : i32\n"
				   "  %c10 = arith.constant 10 : i32\n"
				   "  %c4 = arith.constant 4 : i32\n"
				   "  %m5 = arith.constant -5 : i32\n"
				   "  scf.for %i = %c0 to %c10 step %c3 : i32 {\n"
				   "    scf.for %j = %m5 to %c3 step %c4 : i32 {\n"
				   "      %v = tt.load %p : !tt.ptr<f32>\n"
				   "      %w = math.fma %v, %v, %v : f32\n"
				   "      %e = math.exp %w : f32\n"
				   "      tt.store %p, %e : !tt.ptr<f32>\n"
				   "    }\n"
				   "    scf.for %j = %c10 to %c3 step %c4 : i32 {\n"
				   "      %u = tt.load %p : !tt.ptr<f32>\n"
				   "    }\n"
				   "  }\n"
				   "  tt.return\n"
				   "}\n";
	static const char rec[] = "tt.func @r(%n: i32) {\n"
				  "  %x = tt.call @r(%n) : (i32) -> i32\n"
				  "  %y = tt.call @missing(%n) : (i32) -> i32\n"
				  "  tt.return\n"
				  "}\n";
	struct fp_ttir_estimate e;
	struct fp_diag diag;
	struct fp_ttir *m;

	ASSERT_OK(parse_str(text, &m, &diag));
	ASSERT_OK(fp_ttir_estimate(m, "k", &e));
	/* outer: ceil(10 / 3) = 4 trips; inner: ceil(8 / 4) = 2; the third loop: 0 */
	ASSERT_UEQ(e.loads, 8);
	ASSERT_UEQ(e.load_bytes, 32);
	ASSERT_UEQ(e.stores, 8);
	ASSERT_UEQ(e.flops[FP_TTIR_FP32], 16);
	ASSERT_UEQ(e.special[FP_TTIR_FP32], 8);
	ASSERT_EQ(e.static_loops, 3);
	ASSERT(!e.has_dynamic_loops);
	fp_ttir_free(m);

	ASSERT_OK(parse_str(rec, &m, &diag));
	ASSERT_OK(fp_ttir_estimate(m, NULL, &e));
	ASSERT_UEQ(e.calls, 2);
	ASSERT_EQ(e.unresolved_calls, 2);
	fp_ttir_free(m);
}

TEST(ttir_estimate_saturates)
{
	static const char text[] = "tt.func @k(%p: !tt.ptr<f32>) {\n"
				   "  %a = arith.constant 0 : i64\n"
				   "  %b = arith.constant 9223372036854775807 : i64\n"
				   "  %s = arith.constant 1 : i64\n"
				   "  scf.for %i = %a to %b step %s : i64 {\n"
				   "    scf.for %j = %a to %b step %s : i64 {\n"
				   "      %v = tt.load %p : !tt.ptr<f32>\n"
				   "    }\n"
				   "  }\n"
				   "  tt.return\n"
				   "}\n";
	struct fp_ttir_estimate e;
	struct fp_diag diag;
	struct fp_ttir *m;

	ASSERT_OK(parse_str(text, &m, &diag));
	ASSERT_OK(fp_ttir_estimate(m, NULL, &e));
	ASSERT(e.saturated);
	ASSERT_UEQ(e.loads, UINT64_MAX);
	fp_ttir_free(m);
}

/* Expect `status` with the error at line:col. */
static void bad(const char *text, int status, uint32_t line, uint32_t col)
{
	struct fp_diag diag;
	struct fp_ttir *m = (struct fp_ttir *)&diag; /* must come back NULL */
	int rc = parse_str(text, &m, &diag);

	if (rc != status || diag.line != line || diag.col != col)
		fprintf(stderr, "input: %s\ngot %s at %u:%u (%s)\n", text, fp_status_name(rc),
			diag.line, diag.col, diag.msg);
	ASSERT_EQ(rc, status);
	ASSERT_NULL(m);
	ASSERT_EQ(diag.status, status);
	ASSERT_EQ(diag.line, line);
	ASSERT_EQ(diag.col, col);
	ASSERT_GT(strlen(diag.msg), 0);
}

TEST(ttir_bad_inputs)
{
	/* undefined alias: reported where it is used */
	bad("tt.func @k() {\n  tt.return loc(#loc9)\n}\n", FP_EFORMAT, 2, 17);
	bad("#a = loc(#b)\n%x = arith.constant 1 : i32 loc(#a)\n", FP_EFORMAT, 1, 10);
	/* cycles and duplicates: reported at the definition */
	bad("#a = loc(#b)\n#b = loc(\"n\"(#a))\ntt.return loc(#a)\n", FP_EFORMAT, 1, 1);
	bad("#a = loc(unknown)\n#a = loc(unknown)\n", FP_EFORMAT, 2, 1);
	/* braces */
	bad("tt.func @k() {\n  tt.return\n", FP_EFORMAT, 3, 1);
	bad("}\n", FP_EFORMAT, 1, 1);
	bad("module {\n  tt.func @k() {\n    tt.return\n  }\n}\n}\n", FP_EFORMAT, 6, 1);
	bad("%x = foo.bar (%a]\n", FP_EFORMAT, 1, 17);
	bad("%x = foo.bar %a)\n", FP_EFORMAT, 1, 16);
	bad("%x = foo.bar (%a\n", FP_EFORMAT, 2, 1);
	/* garbage */
	bad("\x01\x02\x03", FP_EFORMAT, 1, 1);
	bad("%x = = 3\n", FP_EFORMAT, 1, 6);
	bad("%x 3\n", FP_EFORMAT, 1, 4);
	bad("%x = my.op \"unterminated\n", FP_EFORMAT, 1, 12);
	bad("tt.return loc(\"f\":x)\n", FP_EFORMAT, 1, 19);
	bad("tt.return loc(nonsense)\n", FP_EFORMAT, 1, 15);
	bad("tt.return loc(callsite(#a to #b))\n", FP_EFORMAT, 1, 27);
	bad("tt.return loc(\"f\":99999999999:1)\n", FP_EFORMAT, 1, 19);
	bad("tt.return loc(\"a\\q\")\n", FP_EFORMAT, 1, 17);
	bad("tt.func @k(%a i32) {\n}\n", FP_EFORMAT, 1, 15);
	bad("tt.func k() {\n}\n", FP_EFORMAT, 1, 9);
	bad("module attributes {x = 1} ;\n", FP_EFORMAT, 1, 27);
	bad("#a = loc(unknown) x\n", FP_EFORMAT, 1, 19);
	bad("%x = tt.load %p : tensor<1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1xf32>\n", FP_ELIMIT, 1, 19);
}

TEST(ttir_truncated)
{
	static const char *const files[] = {"add.ttir", "matmul.ttir", "control_flow.ttir",
					    "helpers.ttir"};
	struct fp_diag diag;
	struct fp_ttir *m;
	size_t f, len, cut, module;
	char *text;
	int rc;

	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char path[64];

		snprintf(path, sizeof(path), "ttir/%s", files[f]);
		text = fpt_slurp(fpt_data_path(path), &len);
		module = (size_t)(strstr(text, "\nmodule {") - text) + 1;
		for (cut = 0; cut < len; cut++) {
			rc = fp_ttir_parse(text, cut, &m, &diag);
			if (rc == FP_OK) {
				/*
				 * Only a prefix of complete alias lines before the module, or the
				 * whole file without its last newline, is a valid file; any other
				 * cut leaves a region open or a used alias undefined.
				 */
				ASSERT(cut <= module || cut == len - 1);
				fp_ttir_free(m);
				continue;
			}
			ASSERT_EQ(rc, FP_EFORMAT);
			ASSERT_NULL(m);
			ASSERT_GE(diag.line, 1);
			ASSERT_GE(diag.col, 1);
			ASSERT_LE(diag.offset, cut);
			ASSERT_GT(strlen(diag.msg), 0);
		}
		free(text);
	}
}

TEST(ttir_limits)
{
	static const char nested[] = "scf.if %a {\n  scf.if %b {\n    scf.if %c {\n    }\n  }\n}\n";
	struct fp_ttir_limits lim;
	struct fp_diag diag;
	struct fp_ttir *m;
	size_t len;
	char *text = fpt_slurp(fpt_data_path("ttir/matmul.ttir"), &len);

	memset(&lim, 0, sizeof(lim));
	lim.max_ops = 10;
	ASSERT_EQ(fp_ttir_parse_ex(text, len, &lim, &m, &diag), FP_ELIMIT);
	ASSERT_NULL(m);
	memset(&lim, 0, sizeof(lim));
	lim.max_aliases = 5;
	ASSERT_EQ(fp_ttir_parse_ex(text, len, &lim, &m, &diag), FP_ELIMIT);
	memset(&lim, 0, sizeof(lim));
	lim.max_bytes = len - 1;
	ASSERT_EQ(fp_ttir_parse_ex(text, len, &lim, &m, &diag), FP_ELIMIT);
	lim.max_bytes = len;
	ASSERT_OK(fp_ttir_parse_ex(text, len, &lim, &m, &diag));
	fp_ttir_free(m);
	memset(&lim, 0, sizeof(lim));
	lim.max_nesting = 2; /* module + function: the loop body is one too many */
	ASSERT_EQ(fp_ttir_parse_ex(text, len, &lim, &m, &diag), FP_ELIMIT);
	lim.max_nesting = 3;
	ASSERT_OK(fp_ttir_parse_ex(text, len, &lim, &m, &diag));
	fp_ttir_free(m);
	free(text);

	lim.max_nesting = 2;
	ASSERT_EQ(fp_ttir_parse_ex(nested, strlen(nested), &lim, &m, &diag), FP_ELIMIT);
	ASSERT_EQ(diag.line, 3);
	lim.max_nesting = 3;
	ASSERT_OK(fp_ttir_parse_ex(nested, strlen(nested), &lim, &m, &diag));
	ASSERT_EQ(fp_ttir_op_at(m, 2)->depth, 2);
	fp_ttir_free(m);
}

TEST(ttir_deep_input)
{
	/* deep brackets, deep location nesting and a long alias chain fail cleanly */
	size_t n = 100000, i, k = 0;
	char *buf = malloc(n * 16 + 64);
	struct fp_diag diag;
	struct fp_ttir *m;

	ASSERT_NOT_NULL(buf);
	k += (size_t)sprintf(buf, "%%x = my.op ");
	for (i = 0; i < 1000; i++)
		buf[k++] = '(';
	buf[k++] = '\n';
	ASSERT_EQ(fp_ttir_parse(buf, k, &m, &diag), FP_ELIMIT);

	k = (size_t)sprintf(buf, "tt.return loc(");
	for (i = 0; i < 1000; i++)
		k += (size_t)sprintf(buf + k, "callsite(");
	ASSERT_EQ(fp_ttir_parse(buf, k, &m, &diag), FP_ELIMIT);

	k = (size_t)sprintf(buf, "tt.return loc(#l0)\n");
	for (i = 0; i < 5000; i++)
		k += (size_t)sprintf(buf + k, "#l%zu = loc(#l%zu)\n", i, i + 1);
	k += (size_t)sprintf(buf + k, "#l%zu = loc(unknown)\n", i);
	ASSERT_EQ(fp_ttir_parse(buf, k, &m, &diag), FP_ELIMIT);
	free(buf);
}

TEST(ttir_oom_sweep)
{
	size_t len;
	char *text = fpt_slurp(fpt_data_path("ttir/helpers.ttir"), &len);
	struct fp_ttir_estimate e;
	struct fp_ttir *m;
	long fail_at;
	int rc;

	for (fail_at = 0;; fail_at++) {
		fpt_oom_install(fail_at);
		m = NULL;
		rc = fp_ttir_parse(text, len, &m, NULL);
		if (rc == FP_OK) {
			rc = fp_ttir_estimate(m, NULL, &e);
			fp_ttir_free(m);
			if (rc == FP_OK) {
				ASSERT_EQ(fpt_oom_live(), 0);
				fpt_oom_uninstall();
				break;
			}
		}
		ASSERT_EQ(rc, FP_ENOMEM);
		ASSERT_EQ(fpt_oom_live(), 0);
		fpt_oom_uninstall();
		ASSERT_LT(fail_at, 100000);
	}
	ASSERT_GT(fail_at, 5);
	free(text);
}

/* The facts the advice reads (fp_ttir_facts()): widened dots with their precision and line, the
 * widened product, the heaviest load and largest tensor; the matmul's fp16 dot is not widened. */
TEST(ttir_facts)
{
	size_t len;
	char *text = fpt_slurp(fpt_data_path("ttir/widened.ttir"), &len);
	struct fp_ttir_facts f;
	struct fp_ttir *m = NULL;

	ASSERT_OK(fp_ttir_parse(text, len, &m, NULL));
	ASSERT_OK(fp_ttir_facts(m, NULL, text, len, &f));
	ASSERT_EQ(f.def.line, kline("def widened_kernel"));
	ASSERT_UEQ(f.widened_dots, 1);
	ASSERT_UEQ(f.widened_dot_flops, 2ull * 32 * 32 * 32);
	ASSERT_UEQ(f.dot_flops, f.widened_dot_flops);
	ASSERT_EQ(f.widened_from, FP_TTIR_FP16);
	ASSERT_STREQ(f.precision, "ieee"); /* the default, left out of the text */
	ASSERT_EQ(f.widened_dot_at.line, kline("c = tl.dot(a.to(tl.float32)"));
	ASSERT_UEQ(f.widened_mul_flops, 32 * 32);
	ASSERT_EQ(f.widened_mul_at.line, kline("s = a.to(tl.float32) * 2.0"));
	ASSERT_UEQ(f.top_load_bytes, 32 * 32 * 2);
	ASSERT_STREQ(f.top_load_elem, "f16");
	ASSERT(!f.saturated);
	/* without the text: no precision */
	ASSERT_OK(fp_ttir_facts(m, NULL, NULL, 0, &f));
	ASSERT_STREQ(f.precision, "");
	ASSERT_EQ(fp_ttir_facts(m, "nope", NULL, 0, &f), FP_ENOENT);
	ASSERT_EQ(fp_ttir_facts(NULL, NULL, NULL, 0, &f), FP_EINVAL);
	fp_ttir_free(m);
	free(text);

	m = load("matmul.ttir");
	ASSERT_OK(fp_ttir_facts(m, NULL, NULL, 0, &f));
	ASSERT_UEQ(f.widened_dots, 0);
	ASSERT_UEQ(f.dot_flops, 2097152);
	ASSERT_UEQ(f.top_load_bytes, 64 * 32 * 2 * 8); /* 8 static trips of the K loop */
	ASSERT_EQ(f.widened_from, FP_TTIR_NCLASS);
	fp_ttir_free(m);
}

TEST(ttir_facts_oom_sweep)
{
	size_t len;
	char *text = fpt_slurp(fpt_data_path("ttir/widened.ttir"), &len);
	struct fp_ttir_facts f;
	struct fp_ttir *m = NULL;
	long fail_at;
	int rc;

	ASSERT_OK(fp_ttir_parse(text, len, &m, NULL));
	for (fail_at = 0;; fail_at++) {
		fpt_oom_install(fail_at);
		rc = fp_ttir_facts(m, NULL, text, len, &f);
		fpt_oom_uninstall();
		if (rc == FP_OK)
			break;
		ASSERT_EQ(rc, FP_ENOMEM);
		ASSERT_LT(fail_at, 10000);
	}
	ASSERT_GT(fail_at, 1);
	ASSERT_UEQ(f.widened_dots, 1);
	fp_ttir_free(m);
	free(text);
}
