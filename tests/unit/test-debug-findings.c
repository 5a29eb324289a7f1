/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the Debugger's findings (src/debug/findings.c) on synthetic runs built with the
 * record buffer builder of test-debug.h: view extents of strided tensors; every out-of-bounds
 * rule (inside the view, past the end inside the storage, before the start, in another
 * argument's view or allocation, unknown and ambiguous bases, masked-off lanes, non-address
 * statuses, level-2 lane counts, aggregation over programs); NaN/Inf origin through `reads`
 * with load padding; the numerical rules on operand sites and checks by reference (casts that
 * overflow or flush, zero and subnormal divisors, sqrt/log of negatives); the launch JSON's
 * `args`; the JSON report of a sanitize launch; an out-of-memory sweep.
 */
#define _GNU_SOURCE 1
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include <flagprism/alloc.h>
#include <flagprism/debug.h>
#include <flagprism/json.h>

#include "test.h"
#include "test-debug.h"

static struct fp_dbg_run *decode(struct dbgb *b, const char *sites)
{
	struct fp_dbg_run *run = NULL;
	struct fp_diag d;

	fp_diag_clear(&d);
	if (fp_dbg_decode(b->w, dbgb_bytes(b), sites, strlen(sites), &run, &d))
		fprintf(stderr, "decode: %s\n", d.msg);
	ASSERT_NOT_NULL(run);
	return run;
}

/* The finding of `kind` on site id `site` (NULL if none). */
static const struct fp_dbg_finding *find(const struct fp_dbg_findings *fs,
					 const struct fp_dbg_run *run,
					 enum fp_dbg_finding_kind kind, uint32_t site)
{
	size_t i;

	for (i = 0; i < fp_dbg_findings_count(fs); i++) {
		const struct fp_dbg_finding *f = fp_dbg_findings_at(fs, i);

		if (f->kind == kind && fp_dbg_run_site(run, f->site)->id == site)
			return f;
	}
	return NULL;
}

static void view(struct fp_dbg_arg *a, const char *name, uint64_t ptr, uint64_t bytes, uint64_t slo,
		 uint64_t shi)
{
	int64_t shape[1] = {(int64_t)(bytes / 4)}, strides[1] = {1};

	memset(a, 0, sizeof(*a));
	a->name = name;
	ASSERT_OK(fp_dbg_arg_set_view(a, ptr, 4, 1, shape, strides));
	a->storage_lo = slo;
	a->storage_hi = shi;
}

TEST(debug_findings_arg_view)
{
	struct fp_dbg_arg a;
	int64_t sh2[2] = {2, 3}, st2[2] = {3, 1}, tr[2] = {1, 2}, col[1] = {50}, cs[1] = {8};
	int64_t empty[2] = {4, 0}, neg[1] = {-4}, big[1] = {INT64_MAX}, bad[1] = {-1};

	memset(&a, 0, sizeof(a));
	ASSERT_OK(fp_dbg_arg_set_view(&a, 0x1000, 4, 2, sh2, st2)); /* contiguous 2x3 */
	ASSERT_UEQ(a.view_lo, 0x1000);
	ASSERT_UEQ(a.view_hi, 0x1000 + 24);
	ASSERT_OK(fp_dbg_arg_set_view(&a, 0x1000, 4, 2, sh2, tr)); /* a 3x2's transpose */
	ASSERT_UEQ(a.view_hi, 0x1000 + (1 * 1 + 2 * 2 + 1) * 4);
	ASSERT_OK(fp_dbg_arg_set_view(&a, 0x2000, 2, 1, col, cs)); /* a column of a 50x8 fp16 */
	ASSERT_UEQ(a.view_lo, 0x2000);
	ASSERT_UEQ(a.view_hi, 0x2000 + (49 * 8 + 1) * 2);
	ASSERT_UEQ(a.element_size, 2);
	ASSERT_OK(fp_dbg_arg_set_view(&a, 0x3000, 4, 2, empty, st2));
	ASSERT_UEQ(a.view_lo, 0x3000);
	ASSERT_UEQ(a.view_hi, 0x3000);
	ASSERT_OK(fp_dbg_arg_set_view(&a, 0x4000, 4, 0, NULL, NULL)); /* a scalar tensor */
	ASSERT_UEQ(a.view_hi - a.view_lo, 4);
	ASSERT_OK(fp_dbg_arg_set_view(&a, 0x4000, 4, 1, col, neg)); /* flipped: below data_ptr */
	ASSERT_UEQ(a.view_lo, 0x4000 - 49 * 4 * 4);
	ASSERT_UEQ(a.view_hi, 0x4004);
	ASSERT_EQ(fp_dbg_arg_set_view(&a, 0x4000, 4, 1, sh2, big), FP_ELIMIT);
	ASSERT_EQ(fp_dbg_arg_set_view(&a, 0x10, 4, 1, col, neg), FP_ELIMIT); /* below address 0 */
	ASSERT_EQ(fp_dbg_arg_set_view(&a, 0x10, 4, 1, bad, cs), FP_EINVAL);
	ASSERT_EQ(fp_dbg_arg_set_view(&a, 0x10, 0, 1, col, cs), FP_EINVAL);
	ASSERT_UEQ(a.view_lo, 0x4000 - 49 * 4 * 4); /* unchanged by the failures */
}

/*
 * One load statement per site; args: x (view 0x1000..0x1100 in storage 0x1000..0x2000), y (its
 * own allocation 0x3000..0x3100), z (a view 0x1400..0x1500 inside x's storage).
 */
static const char OOB_SITES[] =
	"{\"version\": 1, \"kernel\": \"k\", \"statements\": ["
	" {\"id\": 1, \"line\": 11, \"source\": \"a1 = tl.load(x_ptr + o)\"},"
	" {\"id\": 2, \"line\": 12, \"source\": \"a2 = tl.load(x_ptr + o + 64)\"},"
	" {\"id\": 3, \"line\": 13, \"source\": \"a3 = tl.load(x_ptr + zoff + o)\"},"
	" {\"id\": 4, \"line\": 14, \"source\": \"a4 = tl.load(x_ptr + o - 2)\"},"
	" {\"id\": 5, \"line\": 15, \"source\": \"a5 = tl.load(y_ptr + o - d)\"},"
	" {\"id\": 6, \"line\": 16, \"source\": \"a6 = tl.load(p)\"},"
	" {\"id\": 7, \"line\": 17, \"source\": \"a7 = tl.load(q)\"},"
	" {\"id\": 8, \"line\": 18, \"source\": \"a8 = tl.load(x_ptr + o, mask=m)\"},"
	" {\"id\": 9, \"line\": 19, \"source\": \"a9 = tl.load(x_ptr + y_ptr - x_ptr + o)\"},"
	" {\"id\": 10, \"line\": 20, \"source\": \"a10 = tl.load(bp)\"},"
	" {\"id\": 11, \"line\": 21, \"source\": \"tl.store(x_ptr + o + 64, v)\"}],"
	" \"sites\": ["
	" {\"id\": 1, \"statement\": 1, \"kind\": \"load\", \"name\": \"s1\", \"base_param\": \"x_ptr\"},"
	" {\"id\": 2, \"statement\": 2, \"kind\": \"load\", \"name\": \"s2\","
	"  \"base_params\": [\"x_ptr\", \"n\"]},"
	" {\"id\": 3, \"statement\": 3, \"kind\": \"load\", \"name\": \"s3\", \"base_param\": \"x_ptr\"},"
	" {\"id\": 4, \"statement\": 4, \"kind\": \"load\", \"name\": \"s4\", \"base_param\": \"x_ptr\"},"
	" {\"id\": 5, \"statement\": 5, \"kind\": \"load\", \"name\": \"s5\", \"base_param\": \"y_ptr\"},"
	" {\"id\": 6, \"statement\": 6, \"kind\": \"load\", \"name\": \"s6\", \"base_params\": [\"n\"]},"
	" {\"id\": 7, \"statement\": 7, \"kind\": \"load\", \"name\": \"s7\", \"base_param\": null},"
	" {\"id\": 8, \"statement\": 8, \"kind\": \"load\", \"name\": \"s8\", \"base_param\": \"x_ptr\"},"
	" {\"id\": 9, \"statement\": 9, \"kind\": \"load\", \"name\": \"s9\","
	"  \"base_params\": [\"x_ptr\", \"y_ptr\"]},"
	" {\"id\": 10, \"statement\": 10, \"kind\": \"load\", \"name\": \"s10\", \"base_param\": \"x_ptr\"},"
	" {\"id\": 11, \"statement\": 11, \"kind\": \"store\", \"name\": \"s11\","
	"  \"base_param\": \"x_ptr\"}]}";

/* Four lanes at base, base+4, ... of site `site` in slot `k` (site 11 is the store). */
static void slot_lanes(struct dbgb *b, uint64_t p, uint64_t k, unsigned site, uint64_t base,
		       const bool *mask, bool dump)
{
	uint64_t shape[1] = {4}, a[4] = {base, base + 4, base + 8, base + 12};

	dbgb_addr(b, p, k, site, site == 11 ? 3 : 2, FP_DTYPE_FLOAT32, shape, 1, a, mask, dump);
}

/* The same in slot `site - 1` (one slot per site). */
static void lanes(struct dbgb *b, uint64_t p, unsigned site, uint64_t base, const bool *mask,
		  bool dump)
{
	slot_lanes(b, p, site - 1, site, base, mask, dump);
}

static void oob_args(struct fp_dbg_arg args[3])
{
	view(&args[0], "x_ptr", 0x1000, 0x100, 0x1000, 0x2000);
	view(&args[1], "y_ptr", 0x3000, 0x100, 0x3000, 0x3100);
	view(&args[2], "z_ptr", 0x1400, 0x100, 0x1000, 0x2000);
}

TEST(debug_findings_oob_rules)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	struct fp_dbg_arg args[3];
	const struct fp_dbg_finding *f;
	bool mask[4] = {true, true, true, false};
	uint64_t p;

	dbgb_init(&b, 11, 2, 11, false, 0);
	for (p = 0; p < 2; p++) {
		lanes(&b, p, 1, 0x1000 + p * 16, NULL, false);     /* inside: nothing */
		lanes(&b, p, 2, p ? 0x10f8 : 0x10f4, NULL, false); /* past the end */
		lanes(&b, p, 3, 0x1400, NULL, false);  /* in z's view: moved to another argument */
		lanes(&b, p, 4, 0x0ff8, NULL, false);  /* before x's start and its storage */
		lanes(&b, p, 5, 0x1800, NULL, false);  /* y's pointer in x's allocation */
		lanes(&b, p, 6, 0x1200, NULL, false);  /* unknown base, inside x's storage */
		lanes(&b, p, 7, 0x9000, NULL, false);  /* unknown base, outside: nearest is y */
		lanes(&b, p, 8, 0x10f4, mask, false);  /* the lane past the end is masked off */
		lanes(&b, p, 9, 0x3000, NULL, false);  /* ambiguous base, inside y's view */
		lanes(&b, p, 10, 0x9000, NULL, false); /* a block pointer: addresses not observed */
		dbgb_slot(&b, p, 9)[2] |= (uint64_t)FP_DBG_ADDR_BLOCK_POINTER << 32;
		if (p == 1)
			lanes(&b, p, 11, 0x1100, NULL, false); /* a store, in program 1 only */
		else
			lanes(&b, p, 11, 0x1000, NULL, false);
	}
	run = decode(&b, OOB_SITES);
	oob_args(args);
	ASSERT_OK(fp_dbg_findings_new(run, args, 3, &fs, NULL));
	ASSERT_EQ(fp_dbg_findings_count(fs), 6);

	f = find(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 2);
	ASSERT_NOT_NULL(f);
	ASSERT_STREQ(f->param, "x_ptr");
	ASSERT(f->param_known);
	ASSERT_EQ(f->where, FP_DBG_OOB_INSIDE_STORAGE);
	ASSERT_UEQ(f->bytes_past, 0x10f8 + 12 + 4 - 0x1100); /* the furthest of both programs */
	ASSERT_UEQ(f->bytes_before, 0);
	ASSERT_UEQ(f->program, 0);
	ASSERT_UEQ(f->program_count, 2);
	ASSERT_UEQ(f->instance_count, 2);
	ASSERT_EQ(f->nprograms, 2);
	ASSERT_UEQ(f->programs[1], 1);
	ASSERT_UEQ(f->address, 0x10fc + 4); /* program 0: last lane, 0x1100, is the first out */
	ASSERT(!f->lanes_known);
	ASSERT_UEQ(f->view_lo, 0x1000);
	ASSERT_UEQ(f->storage_hi, 0x2000);
	ASSERT(strstr(f->message, "reads up to 8 bytes past the end of the tensor `x_ptr`"));
	ASSERT(strstr(f->message, "same allocation"));
	ASSERT_STREQ(f->subject, "s2");

	ASSERT_NULL(find(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 1));
	ASSERT_NULL(find(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 3));
	ASSERT_NULL(find(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 8));
	ASSERT_NULL(find(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 9));
	ASSERT_NULL(find(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 10));

	f = find(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 4);
	ASSERT_NOT_NULL(f);
	ASSERT_EQ(f->where, FP_DBG_OOB_OUTSIDE);
	ASSERT_UEQ(f->bytes_before, 8);
	ASSERT_UEQ(f->bytes_past, 0);
	ASSERT_UEQ(f->address, 0x0ff8);
	ASSERT(strstr(f->message, "8 bytes before the start"));
	ASSERT(strstr(f->message, "leaves every allocation"));

	f = find(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 5);
	ASSERT_NOT_NULL(f);
	ASSERT_STREQ(f->param, "y_ptr");
	ASSERT_EQ(f->where, FP_DBG_OOB_OTHER_STORAGE);
	ASSERT_STREQ(f->other_param, "x_ptr");
	ASSERT_UEQ(f->bytes_before, 0x3000 - 0x1800);

	f = find(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 6);
	ASSERT_NOT_NULL(f);
	ASSERT_STREQ(f->param, "x_ptr");
	ASSERT(!f->param_known);
	ASSERT_EQ(f->where, FP_DBG_OOB_INSIDE_STORAGE);
	ASSERT(strstr(f->message, "base is not known"));

	f = find(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 7);
	ASSERT_NOT_NULL(f);
	ASSERT_STREQ(f->param, "y_ptr");
	ASSERT(!f->param_known);
	ASSERT_EQ(f->where, FP_DBG_OOB_OUTSIDE);
	ASSERT_UEQ(f->bytes_past, 0x9010 - 0x3100);

	f = find(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 11);
	ASSERT_NOT_NULL(f);
	ASSERT_UEQ(f->program, 1);
	ASSERT_UEQ(f->program_count, 1);
	ASSERT(strstr(f->message, "tl.store to `s11` writes"));
	ASSERT(strstr(f->message, "overwrites neighbouring data"));

	/* ordered by statement: sites 2, 4, 5, 6, 7, 11 */
	ASSERT_EQ(fp_dbg_run_site(run, fp_dbg_findings_at(fs, 0)->site)->id, 2);
	ASSERT_EQ(fp_dbg_run_site(run, fp_dbg_findings_at(fs, 5)->site)->id, 11);
	fp_dbg_findings_free(fs);

	/* without arguments there is nothing to check against */
	ASSERT_OK(fp_dbg_findings_new(run, NULL, 0, &fs, NULL));
	ASSERT_EQ(fp_dbg_findings_count(fs), 0);
	fp_dbg_findings_free(fs);
	fp_dbg_findings_free(NULL);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

TEST(debug_findings_oob_lanes)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	struct fp_dbg_arg args[3];
	const struct fp_dbg_finding *f;
	bool mask[4] = {true, false, true, true};
	uint64_t shape[1] = {4}, a[4] = {0x10fc, 0x1200, 0x1104, 0x1100};
	size_t i;

	/* only site 2 has records: lanes 0x10fc (in), 0x1200 (masked), 0x1104, 0x1100 (out) */
	dbgb_init(&b, 1, 1, 11, true, 64);
	dbgb_addr(&b, 0, 0, 2, 2, FP_DTYPE_FLOAT32, shape, 1, a, mask, true);
	run = decode(&b, OOB_SITES);
	oob_args(args);
	ASSERT_OK(fp_dbg_findings_new(run, args, 3, &fs, NULL));
	ASSERT_EQ(fp_dbg_findings_count(fs), 1);
	f = find(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 2);
	ASSERT_NOT_NULL(f);
	ASSERT(f->lanes_known);
	ASSERT_UEQ(f->lanes_out, 2);
	ASSERT_UEQ(f->address, 0x1104); /* the first out lane in lane order, not the lowest */
	ASSERT_UEQ(f->bytes_past, 8);
	ASSERT(strstr(f->message, "2 active lanes outside the view"));
	/* the arguments were copied */
	ASSERT_STREQ(fp_dbg_findings_args(fs, &i)[1].name, "y_ptr");
	ASSERT_EQ(i, 3);
	fp_dbg_findings_free(fs);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

/*
 * NaN/Inf origin: x = tl.load(p, other=nan) (site 2, role loaded, load site 1), y = x * 2
 * (site 3, reads x), z = w / v (site 4, reads nothing observed), u = z + 1 (site 5, reads z).
 */
static const char ORIGIN_SITES[] =
	"{\"version\": 1, \"kernel\": \"k\", \"statements\": ["
	" {\"id\": 0, \"line\": 10, \"source\": \"x = tl.load(p, mask=m, other=float('nan'))\"},"
	" {\"id\": 1, \"line\": 11, \"source\": \"y = x * 2\"},"
	" {\"id\": 2, \"line\": 12, \"source\": \"z = w / v\"},"
	" {\"id\": 3, \"line\": 13, \"source\": \"u = z + 1\"}],"
	" \"sites\": ["
	" {\"id\": 1, \"statement\": 0, \"kind\": \"load\", \"name\": \"p\"},"
	" {\"id\": 2, \"statement\": 0, \"kind\": \"value\", \"name\": \"x\", \"role\": \"loaded\","
	"  \"load_site\": 1, \"other\": \"nan\"},"
	" {\"id\": 3, \"statement\": 1, \"kind\": \"value\", \"name\": \"y\", \"reads\": [\"x\"]},"
	" {\"id\": 4, \"statement\": 2, \"kind\": \"value\", \"name\": \"z\", \"reads\": [\"w\", \"v\"]},"
	" {\"id\": 5, \"statement\": 3, \"kind\": \"value\", \"name\": \"u\", \"reads\": [\"z\"]}]}";

static void origin_run(struct dbgb *b)
{
	uint64_t shape[1] = {4}, a[4] = {0x1000, 0x1004, 0x1008, 0x100c}, p;
	bool three[4] = {true, true, true, false};
	double fin[4] = {1, 2, 3, 4}, one_nan[4] = {1, NAN, 3, 4}, one_inf[4] = {1, INFINITY, 3, 4};

	dbgb_init(b, 5, 3, 5, false, 0);
	for (p = 0; p < 3; p++) {
		/* p0: x has a NaN from memory; p1: x's NaN is the padding lane, z makes a new one;
		 * p2: z makes an Inf */
		dbgb_addr(b, p, 0, 1, 2, FP_DTYPE_FLOAT32, shape, 1, a, p == 1 ? three : NULL,
			  false);
		dbgb_value(b, p, 1, 2, FP_DTYPE_FLOAT32, shape, 1, p < 2 ? one_nan : fin, false);
		dbgb_value(b, p, 2, 3, FP_DTYPE_FLOAT32, shape, 1, p < 2 ? one_nan : fin, false);
		dbgb_value(b, p, 3, 4, FP_DTYPE_FLOAT32, shape, 1,
			   p == 0 || p == 1 ? one_nan : one_inf, false);
		dbgb_value(b, p, 4, 5, FP_DTYPE_FLOAT32, shape, 1, p < 2 ? one_nan : one_inf,
			   false);
	}
}

TEST(debug_findings_origin)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	const struct fp_dbg_finding *f;

	origin_run(&b);
	run = decode(&b, ORIGIN_SITES);
	ASSERT_OK(fp_dbg_findings_new(run, NULL, 0, &fs, NULL));
	ASSERT_EQ(fp_dbg_findings_count(fs), 3);

	f = fp_dbg_findings_at(fs, 0);
	ASSERT_EQ(f->kind, FP_DBG_FINDING_NAN_ORIGIN);
	ASSERT_STREQ(f->subject, "x");
	ASSERT(f->from_memory);
	ASSERT_UEQ(f->program_count, 1); /* program 1's NaN may be the padding lane */
	ASSERT_UEQ(f->program, 0);
	ASSERT_UEQ(f->count, 1);
	ASSERT(!f->count_is_lower_bound);
	ASSERT(strstr(f->message, "loaded from memory"));

	f = fp_dbg_findings_at(fs, 1);
	ASSERT_EQ(f->kind, FP_DBG_FINDING_NAN_ORIGIN);
	ASSERT_STREQ(f->subject, "z");
	ASSERT(!f->from_memory);
	ASSERT_UEQ(f->program, 1); /* program 0 had its first NaN at x already */
	ASSERT_UEQ(f->program_count, 1);
	ASSERT(strstr(f->message, "inputs not observed in this program: w, v"));

	f = fp_dbg_findings_at(fs, 2);
	ASSERT_EQ(f->kind, FP_DBG_FINDING_INF_ORIGIN);
	ASSERT_STREQ(f->subject, "z");
	ASSERT_UEQ(f->program, 2);
	ASSERT_EQ(fp_dbg_run_statement(run, f->statement)->line, 12);
	ASSERT_NULL(find(fs, run, FP_DBG_FINDING_NAN_ORIGIN, 3)); /* y reads x's NaN */
	ASSERT_NULL(find(fs, run, FP_DBG_FINDING_INF_ORIGIN, 5)); /* u reads z's Inf */
	fp_dbg_findings_free(fs);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

/*
 * Operand sites and checks by reference. Statement 0 defines a; statement 1 `b = a.to(fp16)`
 * checks a by reference on its site b; the others are operand sites of each role.
 */
static const char RULE_SITES[] =
	"{\"version\": 1, \"kernel\": \"k\", \"statements\": ["
	" {\"id\": 0, \"line\": 10, \"source\": \"a = f()\"},"
	" {\"id\": 1, \"line\": 11, \"source\": \"b = a.to(tl.float16)\"},"
	" {\"id\": 2, \"line\": 12, \"source\": \"q = n / d\"},"
	" {\"id\": 3, \"line\": 13, \"source\": \"r = tl.sqrt(v)\"},"
	" {\"id\": 4, \"line\": 14, \"source\": \"l = tl.log(w)\"},"
	" {\"id\": 5, \"line\": 15, \"source\": \"c8 = c.to(tl.float8e4nv)\"},"
	" {\"id\": 6, \"line\": 16, \"source\": \"tb = t.to(tl.bfloat16)\"},"
	" {\"id\": 7, \"line\": 17, \"source\": \"e = n / s\"},"
	" {\"id\": 8, \"line\": 18, \"source\": \"i = n // k\"},"
	" {\"id\": 9, \"line\": 19, \"source\": \"mh = m.to(tl.float16)\"},"
	" {\"id\": 10, \"line\": 20, \"source\": \"ok = g.to(tl.float16) / h\"}],"
	" \"sites\": ["
	" {\"id\": 1, \"statement\": 0, \"kind\": \"value\", \"name\": \"a\"},"
	" {\"id\": 2, \"statement\": 1, \"kind\": \"value\", \"name\": \"b\", \"reads\": [\"a\"],"
	"  \"checks\": [{\"role\": \"cast_src\", \"name\": \"a\", \"target_dtype\": \"float16\"},"
	"              {\"role\": \"divisor\", \"name\": \"never_defined\"}]},"
	" {\"id\": 3, \"statement\": 2, \"kind\": \"value\", \"name\": \"d\", \"role\": \"divisor\"},"
	" {\"id\": 4, \"statement\": 3, \"kind\": \"value\", \"name\": \"v\", \"role\": \"sqrt_arg\"},"
	" {\"id\": 5, \"statement\": 4, \"kind\": \"value\", \"name\": \"w\", \"role\": \"log_arg\"},"
	" {\"id\": 6, \"statement\": 5, \"kind\": \"value\", \"name\": \"c\", \"role\": \"cast_src\","
	"  \"target_dtype\": \"float8e4nv\"},"
	" {\"id\": 7, \"statement\": 6, \"kind\": \"value\", \"name\": \"t\", \"role\": \"cast_src\","
	"  \"target_dtype\": \"bfloat16\"},"
	" {\"id\": 8, \"statement\": 7, \"kind\": \"value\", \"name\": \"s\", \"role\": \"divisor\"},"
	" {\"id\": 9, \"statement\": 8, \"kind\": \"value\", \"name\": \"k\", \"role\": \"divisor\"},"
	" {\"id\": 10, \"statement\": 9, \"kind\": \"value\", \"name\": \"m\", \"role\": \"cast_src\","
	"  \"target_dtype\": \"float16\"},"
	" {\"id\": 11, \"statement\": 10, \"kind\": \"value\", \"name\": \"g\", \"role\": \"cast_src\","
	"  \"target_dtype\": \"float16\"},"
	" {\"id\": 12, \"statement\": 10, \"kind\": \"value\", \"name\": \"h\", \"role\": \"divisor\","
	"  \"unknown_member\": 1},"
	" {\"id\": 13, \"statement\": 10, \"kind\": \"value\", \"name\": \"ok\", \"role\": \"future\"}]}";

static void rule_run(struct dbgb *b)
{
	uint64_t s4[1] = {4}, s8[1] = {8};
	double a[4] = {1e5, 2, 3, 4}, d[4] = {1, 0, 2, 0}, v[4] = {1, -0.5, 4, 9};
	double w[4] = {-3, 1, 2, 3}, c[4] = {500, 1, 2, 3}, t[4] = {1e-42, -1e-42, 2e-42, 0};
	double s[4] = {1e-39, 2e-39, 3e-39, 4e-39}, k[4] = {1, 0, 3, 4}, ok[4] = {1, 2, 3, 4};
	double m[8] = {1e-9, 1e-9, -1e-9, 1e-9, 1e-9, 1e-9, 1e-9, 1e-4};

	dbgb_init(b, 13, 1, 13, false, 0);
	dbgb_value(b, 0, 0, 1, FP_DTYPE_FLOAT32, s4, 1, a, false);
	dbgb_value(b, 0, 1, 2, FP_DTYPE_FLOAT16, s4, 1, ok, false);
	dbgb_value(b, 0, 2, 3, FP_DTYPE_FLOAT32, s4, 1, d, false);
	dbgb_value(b, 0, 3, 4, FP_DTYPE_FLOAT32, s4, 1, v, false);
	dbgb_value(b, 0, 4, 5, FP_DTYPE_FLOAT32, s4, 1, w, false);
	dbgb_value(b, 0, 5, 6, FP_DTYPE_FLOAT32, s4, 1, c, false);
	dbgb_value(b, 0, 6, 7, FP_DTYPE_FLOAT32, s4, 1, t, false);
	dbgb_value(b, 0, 7, 8, FP_DTYPE_FLOAT32, s4, 1, s, false);
	dbgb_value(b, 0, 8, 9, FP_DTYPE_INT32, s4, 1, k, false);
	dbgb_value(b, 0, 9, 10, FP_DTYPE_FLOAT32, s8, 1, m, false);
	dbgb_value(b, 0, 10, 11, FP_DTYPE_FLOAT32, s4, 1, ok, false);
	dbgb_value(b, 0, 11, 12, FP_DTYPE_FLOAT32, s4, 1, ok, false);
	dbgb_value(b, 0, 12, 13, FP_DTYPE_FLOAT32, s4, 1, ok, false);
}

TEST(debug_findings_rules)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	const struct fp_dbg_finding *f;

	rule_run(&b);
	run = decode(&b, RULE_SITES);
	ASSERT_EQ(fp_dbg_run_site(run, 1)->nchecks, 2);
	ASSERT_EQ(fp_dbg_run_site(run, 12)->role, FP_DBG_ROLE_NONE); /* unknown roles are ignored */
	ASSERT_OK(fp_dbg_findings_new(run, NULL, 0, &fs, NULL));
	ASSERT_EQ(fp_dbg_findings_count(fs), 9);

	f = find(fs, run, FP_DBG_FINDING_PRECISION_LOSS, 2); /* by reference, filed under b */
	ASSERT_NOT_NULL(f);
	ASSERT_STREQ(f->subject, "a");
	ASSERT_EQ(f->target_dtype, FP_DTYPE_FLOAT16);
	ASSERT_DEQ(f->value, 1e5);
	ASSERT(strstr(f->message, "largest finite value 65504"));

	f = find(fs, run, FP_DBG_FINDING_DIVISION_BY_ZERO, 3);
	ASSERT_NOT_NULL(f);
	ASSERT_UEQ(f->count, 2);
	ASSERT(strstr(f->message, "divides by zero"));

	f = find(fs, run, FP_DBG_FINDING_INVALID_DOMAIN, 4);
	ASSERT_NOT_NULL(f);
	ASSERT_DEQ(f->value, -0.5);
	ASSERT(strstr(f->message, "square root"));
	f = find(fs, run, FP_DBG_FINDING_INVALID_DOMAIN, 5);
	ASSERT_NOT_NULL(f);
	ASSERT(strstr(f->message, "logarithm"));

	f = find(fs, run, FP_DBG_FINDING_PRECISION_LOSS, 6); /* 500 > 464 for e4m3 */
	ASSERT_NOT_NULL(f);
	ASSERT(strstr(f->message, "NaN (or saturate)"));

	f = find(fs, run, FP_DBG_FINDING_PRECISION_LOSS, 7); /* every nonzero value flushes */
	ASSERT_NOT_NULL(f);
	ASSERT_UEQ(f->count, 3);
	ASSERT(!f->count_is_lower_bound);
	ASSERT(strstr(f->message, "flush to zero"));

	f = find(fs, run, FP_DBG_FINDING_DIVISION_BY_ZERO, 8); /* 1e-39 < FLT_MIN */
	ASSERT_NOT_NULL(f);
	ASSERT_DEQ(f->value, 1e-39);
	ASSERT(strstr(f->message, "within"));

	f = find(fs, run, FP_DBG_FINDING_DIVISION_BY_ZERO, 9); /* an integer zero */
	ASSERT_NOT_NULL(f);
	ASSERT_UEQ(f->count, 1);

	/*
	 * fp16's smallest normal is 6.1e-5; 1e-4 is above it, so all that the summary tells is the
	 * bound: at most floor(sumsq / 6.1e-5^2) = 2.7 -> 3 values exceed it, at least 5 do not
	 */
	f = find(fs, run, FP_DBG_FINDING_PRECISION_LOSS, 10);
	ASSERT_NOT_NULL(f);
	ASSERT_UEQ(f->count, 5);
	ASSERT(f->count_is_lower_bound);
	ASSERT(strstr(f->message, "at least 5 of its nonzero values"));
	ASSERT(strstr(f->message, "smallest normal"));

	ASSERT_NULL(find(fs, run, FP_DBG_FINDING_PRECISION_LOSS, 11)); /* 1..4 fit fp16 */
	ASSERT_NULL(find(fs, run, FP_DBG_FINDING_DIVISION_BY_ZERO, 12));
	fp_dbg_findings_free(fs);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

static const char LAUNCH_ARGS[] =
	"{\"output_dir\": \"/tmp\", \"grid\": [2], \"args\": ["
	" {\"name\": \"x_ptr\", \"kind\": \"tensor\", \"dtype\": \"float32\", \"shape\": [64],"
	"  \"strides\": [1], \"data_ptr\": 4096, \"storage_ptr\": 4096, \"storage_nbytes\": 4096,"
	"  \"element_size\": 4},"
	" {\"name\": \"y_ptr\", \"kind\": \"tensor\", \"shape\": [64], \"strides\": [1],"
	"  \"data_ptr\": 12288, \"storage_ptr\": null, \"storage_nbytes\": null,"
	"  \"element_size\": 4},"
	" {\"name\": \"g\", \"kind\": \"tensor\", \"shape\": [4], \"strides\": [1],"
	"  \"data_ptr\": null, \"element_size\": 4},"
	" {\"name\": \"n\", \"kind\": \"scalar\", \"value\": 3},"
	" {\"name\": \"BLOCK\", \"kind\": \"constexpr\", \"value\": 4}]}";

TEST(debug_findings_launch_args)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	const struct fp_dbg_arg *a;
	struct fp_diag d;
	size_t n;
	static const char *const bad[] = {
		"{\"args\": {}}",
		"{\"args\": [1]}",
		"{\"args\": [{\"kind\": \"tensor\", \"data_ptr\": 1, \"element_size\": 4}]}",
		"{\"args\": [{\"name\": \"x\", \"kind\": \"tensor\", \"data_ptr\": 1, "
		"\"element_size\": 4, \"shape\": [2], \"strides\": [1, 1]}]}",
		"{\"args\": [{\"name\": \"x\", \"kind\": \"tensor\", \"data_ptr\": 1, "
		"\"element_size\": 0, \"shape\": [2], \"strides\": [1]}]}",
		"{\"args\": [{\"name\": \"x\", \"kind\": \"tensor\", \"data_ptr\": -1, "
		"\"element_size\": 4, \"shape\": [2], \"strides\": [1]}]}",
		"{\"args\": [{\"name\": \"x\", \"kind\": \"tensor\", \"data_ptr\": 1, "
		"\"element_size\": 4, \"shape\": [-2], \"strides\": [1]}]}",
	};
	size_t i;

	/* two programs of the OOB fixture's site 2: the first inside x, the second past it */
	dbgb_init(&b, 1, 2, 11, false, 0);
	slot_lanes(&b, 0, 0, 2, 0x1000, NULL, false);
	slot_lanes(&b, 1, 0, 2, 0x10f8, NULL, false);
	run = decode(&b, OOB_SITES);
	ASSERT_OK(fp_dbg_findings_from_launch(run, LAUNCH_ARGS, strlen(LAUNCH_ARGS), &fs, &d));
	a = fp_dbg_findings_args(fs, &n);
	ASSERT_EQ(n, 2); /* g has no address; scalars and constexprs have no extent */
	ASSERT_STREQ(a[0].name, "x_ptr");
	ASSERT_UEQ(a[0].view_hi, 4096 + 256);
	ASSERT_UEQ(a[0].storage_hi, 8192);
	ASSERT_UEQ(a[1].storage_lo, 0); /* unknown storage */
	ASSERT_EQ(fp_dbg_findings_count(fs), 1);
	ASSERT_EQ(fp_dbg_findings_at(fs, 0)->where, FP_DBG_OOB_INSIDE_STORAGE);
	ASSERT_UEQ(fp_dbg_findings_at(fs, 0)->program, 1);
	fp_dbg_findings_free(fs);
	ASSERT_OK(fp_dbg_findings_from_launch(run, "{}", 2, &fs, NULL)); /* no args: no checks */
	ASSERT_EQ(fp_dbg_findings_count(fs), 0);
	fp_dbg_findings_free(fs);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fs = (struct fp_dbg_findings *)&d; /* must be reset to NULL */
		ASSERT_EQ(fp_dbg_findings_from_launch(run, bad[i], strlen(bad[i]), &fs, &d),
			  FP_EFORMAT);
		ASSERT_NULL(fs);
		ASSERT(!strncmp(d.msg, "launch: ", 8));
	}
	ASSERT_EQ(fp_dbg_findings_from_launch(run, NULL, 0, &fs, &d), FP_EINVAL);
	ASSERT_EQ(fp_dbg_findings_new(NULL, NULL, 0, &fs, &d), FP_EINVAL);
	ASSERT_STREQ(fp_dbg_finding_kind_name(FP_DBG_FINDING_PRECISION_LOSS), "precision_loss");
	ASSERT_STREQ(fp_dbg_finding_kind_name((enum fp_dbg_finding_kind)0), "unknown");
	ASSERT_STREQ(fp_dbg_oob_where_name(FP_DBG_OOB_OUTSIDE), "outside_allocations");
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

/* The JSON report of a sanitize launch: findings, no statements, no op log. */
TEST(debug_findings_report)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_outputs out;
	struct fp_json_doc *doc;
	const struct fp_json_value *root, *f;
	char dir[64], lj[2048];
	uint64_t u;
	int64_t i;

	snprintf(dir, sizeof(dir), "/tmp/fp-test-findings-XXXXXX");
	ASSERT_NOT_NULL(mkdtemp(dir));
	dbgb_init(&b, 1, 2, 11, false, 0);
	slot_lanes(&b, 0, 0, 2, 0x1000, NULL, false);
	slot_lanes(&b, 1, 0, 2, 0x10f8, NULL, false);
	run = decode(&b, OOB_SITES);
	snprintf(lj, sizeof(lj),
		 "{\"output_dir\": \"%s\", \"stem\": \"s\", \"grid\": [2], \"sanitize\": true,"
		 " \"args\": [{\"name\": \"x_ptr\", \"kind\": \"tensor\", \"shape\": [64],"
		 " \"strides\": [1], \"data_ptr\": 4096, \"storage_ptr\": 4096,"
		 " \"storage_nbytes\": 4096, \"element_size\": 4}]}",
		 dir);
	fp_dbg_outputs_init(&out);
	ASSERT_OK(fp_dbg_write_reports(run, lj, strlen(lj), &out, NULL));
	ASSERT_NULL(out.op_log_txt);
	ASSERT_NULL(out.op_log_json);
	ASSERT_OK(fp_json_parse_file(out.json, NULL, &doc, NULL));
	root = fp_json_root(doc);
	ASSERT_EQ(fp_json_len(fp_json_get(root, "statements")), 0);
	ASSERT(fp_json_type(fp_json_get(fp_json_get(root, "config"), "sanitize")) == FP_JSON_TRUE);
	ASSERT_EQ(fp_json_len(fp_json_get(root, "findings")), 1);
	f = fp_json_at(fp_json_get(root, "findings"), 0);
	ASSERT_STREQ(fp_json_string(fp_json_get(f, "kind"), NULL), "out_of_bounds");
	ASSERT_STREQ(fp_json_string(fp_json_get(f, "param"), NULL), "x_ptr");
	ASSERT_STREQ(fp_json_string(fp_json_get(f, "location"), NULL), "inside_storage");
	ASSERT_STREQ(fp_json_string(fp_json_get(f, "statement"), NULL),
		     "a2 = tl.load(x_ptr + o + 64)");
	ASSERT(fp_json_int64(fp_json_get(f, "line"), &i) && i == 12);
	ASSERT(fp_json_uint64(fp_json_get(f, "bytes_past_end"), &u) && u == 8);
	ASSERT(fp_json_uint64(fp_json_get(f, "distance_bytes"), &u) && u == 8);
	ASSERT(fp_json_int64(fp_json_at(fp_json_get(f, "program"), 0), &i) && i == 1);
	ASSERT(fp_json_type(fp_json_get(f, "lanes_out")) == FP_JSON_NULL);
	fp_json_doc_free(doc);
	fp_dbg_outputs_release(&out);
	fp_dbg_run_free(run);
	dbgb_free(&b);
	snprintf(lj, sizeof(lj), "rm -rf '%s'", dir);
	ASSERT_EQ(system(lj), 0);
}

TEST(debug_findings_oom)
{
	struct dbgb b1, b2, b3;
	struct fp_dbg_run *r1, *r2, *r3;
	struct fp_dbg_findings *fs;
	struct fp_dbg_arg args[3];
	long fail_at;
	int st = FP_ENOMEM, pass;

	origin_run(&b1);
	rule_run(&b2);
	dbgb_init(&b3, 11, 1, 11, false, 0);
	lanes(&b3, 0, 1, 0x1000, NULL, false);
	lanes(&b3, 0, 2, 0x10f8, NULL, false);
	lanes(&b3, 0, 3, 0x1400, NULL, false);
	lanes(&b3, 0, 4, 0x0ff8, NULL, false);
	lanes(&b3, 0, 5, 0x1800, NULL, false);
	lanes(&b3, 0, 6, 0x1200, NULL, false);
	lanes(&b3, 0, 7, 0x9000, NULL, false);
	lanes(&b3, 0, 8, 0x1000, NULL, false);
	lanes(&b3, 0, 9, 0x3000, NULL, false);
	lanes(&b3, 0, 10, 0x1000, NULL, false);
	lanes(&b3, 0, 11, 0x1100, NULL, false);
	r1 = decode(&b1, ORIGIN_SITES);
	r2 = decode(&b2, RULE_SITES);
	r3 = decode(&b3, OOB_SITES);
	oob_args(args);
	for (pass = 0; pass < 3; pass++) {
		const struct fp_dbg_run *run = pass == 0 ? r1 : (pass == 1 ? r2 : r3);

		for (fail_at = 0; fail_at < 2000; fail_at++) {
			fs = NULL;
			fpt_oom_install(fail_at);
			st = fp_dbg_findings_new(run, args, 3, &fs, NULL);
			fp_dbg_findings_free(fs);
			ASSERT_EQ(fpt_oom_live(), 0);
			fpt_oom_uninstall();
			if (!st)
				break;
			ASSERT_EQ(st, FP_ENOMEM);
			ASSERT_NULL(fs);
		}
		ASSERT_OK(st);
	}
	fp_dbg_run_free(r1);
	fp_dbg_run_free(r2);
	fp_dbg_run_free(r3);
	dbgb_free(&b1);
	dbgb_free(&b2);
	dbgb_free(&b3);
}
