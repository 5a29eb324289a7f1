/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Closed-form records (docs/formats/record-format.md): the decoder expands the scalars of index
 * arithmetic into ordinary summaries. Each case writes closed-form records into one buffer and
 * the ordinary records of the materialised arrays (tests/unit/test-debug.h's builder, written
 * from the format, not from the decoder) into another; the decoded words must agree (sums of
 * squares to 1e-12 relative, everything else exactly). Cases cover increasing, decreasing and
 * constant sequences, prefix/suffix/empty/full masks, int32 wrap-around (the per-element path)
 * and int64 sequences, plus positioned errors for malformed closed-form words.
 */
#include "fp-setup.h"

#include <math.h>

#include <flagprism/debug.h>

#include "test-debug.h"
#include "test.h"

static const char CSITES[] =
	"{\"version\": 1, \"kernel\": \"add_kernel\", \"file\": \"/u/add.py\", \"level\": 1,"
	" \"addr_level\": 1, \"statements\": ["
	"  {\"id\": 0, \"line\": 3, \"col\": 4,"
	"   \"source\": \"offs = pid * BLOCK + tl.arange(0, BLOCK)\"},"
	"  {\"id\": 1, \"line\": 4, \"col\": 4, \"source\": \"mask = offs < n\"},"
	"  {\"id\": 2, \"line\": 5, \"col\": 4,"
	"   \"source\": \"x = tl.load(x_ptr + offs, mask=mask)\"},"
	"  {\"id\": 3, \"line\": 6, \"col\": 4,"
	"   \"source\": \"o64 = s64 + 7 * tl.arange(0, BLOCK)\"}],"
	" \"sites\": ["
	"  {\"id\": 1, \"statement\": 0, \"kind\": \"value\", \"name\": \"offs\"},"
	"  {\"id\": 2, \"statement\": 1, \"kind\": \"value\", \"name\": \"mask\","
	"   \"reads\": [\"offs\"]},"
	"  {\"id\": 3, \"statement\": 2, \"kind\": \"load\", \"name\": \"x_ptr + offs\"},"
	"  {\"id\": 4, \"statement\": 3, \"kind\": \"value\", \"name\": \"o64\"}]}";

#define CN 64 /* lanes */
#define CS 4  /* slots per program */
#define CBASE UINT64_C(0x7f0000001000)

struct ccase {
	int64_t f, k;
	unsigned op;
	int64_t bound;
	int64_t f64; /* first value of the int64 sequence (step 7) */
};

static const struct ccase CASES[] = {
	{3072, 1, 1, 3100, INT64_C(1) << 40},    /* prefix of 28 lanes */
	{-9, 3, 4, 100, -300},                   /* suffix, one zero */
	{INT32_MAX - 5, 1, 1, 0, 0},             /* int32 wrap-around: the per-element path */
	{100, -2, 2, 50, -(INT64_C(1) << 50)},   /* decreasing: suffix */
	{0, 0, 3, -1, 0},                        /* constant zeros, every lane */
	{10, 5, 3, 100000, 5},                   /* no active lane */
	{-(INT64_C(1) << 31), 1 << 20, 2, 0, 1}, /* large steps */
};
#define NCASES (sizeof(CASES) / sizeof(CASES[0]))

static uint64_t cword0(unsigned site, unsigned kind, enum fp_dtype dt, uint64_t seq, bool closed)
{
	return site | (uint64_t)kind << 16 | (uint64_t)dt << 24 | UINT64_C(1) << 32 |
	       (uint64_t)(closed ? FP_DBG_REC_CLOSED : 0) << 36 | seq << 40;
}

static int64_t wrap32(int64_t f, int64_t k, uint64_t i)
{
	return (int32_t)(uint32_t)((uint64_t)f + (uint64_t)k * i);
}

static bool pred(unsigned op, int64_t v, int64_t b)
{
	return op == 1 ? v < b : op == 2 ? v <= b : op == 3 ? v > b : v >= b;
}

/* Closed-form records of case c into program p of `b`. */
static void write_closed(struct dbgb *b, uint64_t p, const struct ccase *c)
{
	uint64_t *w;

	w = dbgb_slot(b, p, 0);
	w[0] = cword0(1, 1, FP_DTYPE_INT32, 0, true);
	w[1] = CN;
	w[2] = 1 | (uint64_t)FP_DTYPE_INT32 << 16;
	w[3] = (uint64_t)c->f;
	w[4] = (uint64_t)c->k;
	w = dbgb_slot(b, p, 1);
	w[0] = cword0(2, 1, FP_DTYPE_BOOL, 1, true);
	w[1] = CN;
	w[2] = 2 | (uint64_t)c->op << 8 | (uint64_t)FP_DTYPE_INT32 << 16;
	w[3] = (uint64_t)c->f;
	w[4] = (uint64_t)c->k;
	w[5] = (uint64_t)c->bound;
	w = dbgb_slot(b, p, 2);
	w[0] = cword0(3, 2, FP_DTYPE_FLOAT32, 2, true);
	w[1] = CN;
	w[2] = 3 | (uint64_t)c->op << 8 | (uint64_t)FP_DTYPE_INT32 << 16;
	w[3] = CBASE;
	w[4] = (uint64_t)c->f;
	w[5] = (uint64_t)c->k;
	w[6] = (uint64_t)c->bound;
	w = dbgb_slot(b, p, 3);
	w[0] = cword0(4, 1, FP_DTYPE_INT64, 3, true);
	w[1] = CN;
	w[2] = 1 | (uint64_t)FP_DTYPE_INT64 << 16;
	w[3] = (uint64_t)c->f64;
	w[4] = 7;
}

/* The ordinary records of the same arrays into program p of `b`. */
static void write_ref(struct dbgb *b, uint64_t p, const struct ccase *c)
{
	double v[CN], m[CN], v64[CN];
	uint64_t addrs[CN], shape[1] = {CN};
	bool act[CN];
	unsigned i;

	for (i = 0; i < CN; i++) {
		int64_t x = wrap32(c->f, c->k, i);

		v[i] = (double)x;
		act[i] = pred(c->op, x, c->bound);
		m[i] = act[i];
		addrs[i] = CBASE + (uint64_t)x * 4;
		v64[i] = (double)(c->f64 + 7 * (int64_t)i);
	}
	dbgb_value(b, p, 0, 1, FP_DTYPE_INT32, shape, 1, v, false);
	dbgb_value(b, p, 1, 2, FP_DTYPE_BOOL, shape, 1, m, false);
	dbgb_addr(b, p, 2, 3, 2, FP_DTYPE_FLOAT32, shape, 1, addrs, act, false);
	dbgb_value(b, p, 3, 4, FP_DTYPE_INT64, shape, 1, v64, false);
}

static double f64(uint64_t w)
{
	double d;

	memcpy(&d, &w, sizeof(d));
	return d;
}

static int cdecode(struct dbgb *b, struct fp_dbg_run **run, struct fp_diag *d)
{
	return fp_dbg_decode(b->w, dbgb_bytes(b), CSITES, strlen(CSITES), run, d);
}

TEST(debug_closed_expands_exactly)
{
	struct dbgb cb, rb;
	struct fp_dbg_run *run;
	struct fp_diag d;
	uint64_t p;
	size_t s, n, j;
	int rc;

	dbgb_init(&cb, CS, NCASES, 4, false, 0);
	dbgb_init(&rb, CS, NCASES, 4, false, 0);
	for (p = 0; p < NCASES; p++) {
		write_closed(&cb, p, &CASES[p]);
		write_ref(&rb, p, &CASES[p]);
	}
	rc = cdecode(&cb, &run, &d);
	if (rc)
		fprintf(stderr, "diag: %s\n", d.msg);
	ASSERT_OK(rc);
	for (s = 0; s < 4; s++) {
		const struct fp_dbg_record *r = fp_dbg_run_records(run, s, &n);

		ASSERT_UEQ(n, NCASES);
		for (j = 0; j < n; j++) {
			const uint64_t *want = dbgb_slot(&rb, r[j].program, r[j].slot);
			unsigned i;

			for (i = 0; i < FP_DBG_RECORD_WORDS; i++) {
				bool sums = fp_dbg_record_kind(&r[j]) == FP_DBG_KIND_VALUE &&
					    (i == 4 || i == 5);

				if (sums ? fabs(f64(r[j].words[i]) - f64(want[i])) >
						    1e-12 * fabs(f64(want[i])) :
					   r[j].words[i] != want[i])
					fprintf(stderr,
						"site %zu program %" PRIu64 " word %u: 0x%" PRIx64
						" want 0x%" PRIx64 "\n",
						s + 1, r[j].program, i, r[j].words[i], want[i]);
				if (sums)
					ASSERT(fabs(f64(r[j].words[i]) - f64(want[i])) <=
					       1e-12 * fabs(f64(want[i])));
				else
					ASSERT_UEQ(r[j].words[i], want[i]);
			}
		}
	}
	/* spot checks against hand-computed values: case 0 has 28 active lanes from 3072 */
	{
		struct fp_dbg_addr_summary a;
		struct fp_dbg_value_summary v;
		const struct fp_dbg_record *r = fp_dbg_run_records(run, 2, &n);

		fp_dbg_record_addr_summary(&r[0], &a);
		ASSERT_UEQ(a.active_lane_count, 28);
		ASSERT_UEQ(a.first_addr, CBASE + 3072 * 4);
		ASSERT_UEQ(a.max_addr, CBASE + 3099 * 4);
		r = fp_dbg_run_records(run, 0, &n);
		fp_dbg_record_value_summary(&r[1], &v); /* -9 + 3i: one zero, sum exact */
		ASSERT_UEQ(v.zero_count, 1);
		ASSERT(v.sum == -9.0 * CN + 3.0 * CN * (CN - 1) / 2);
	}
	fp_dbg_run_free(run);
	dbgb_free(&cb);
	dbgb_free(&rb);
}

static void expect_closed_fail(struct dbgb *b, uint64_t off, const char *needle)
{
	struct fp_dbg_run *run = (struct fp_dbg_run *)1;
	struct fp_diag d;

	ASSERT_EQ(cdecode(b, &run, &d), FP_EFORMAT);
	ASSERT_NULL(run);
	if (d.offset != off || !strstr(d.msg, needle))
		fprintf(stderr, "diag at %" PRIu64 ": %s (expected \"%s\" at %" PRIu64 ")\n",
			(uint64_t)d.offset, d.msg, needle, off);
	ASSERT_UEQ(d.offset, off);
	ASSERT(strstr(d.msg, needle) != NULL);
}

TEST(debug_closed_bad_words)
{
	struct dbgb b;
	uint64_t *w, save[CS][8];
	unsigned k;

	dbgb_init(&b, CS, 1, 4, false, 0);
	write_closed(&b, 0, &CASES[0]);
	for (k = 0; k < CS; k++)
		memcpy(save[k], dbgb_slot(&b, 0, k), sizeof(save[k]));
#define CRESTORE()                                                             \
	do {                                                                   \
		for (k = 0; k < CS; k++)                                       \
			memcpy(dbgb_slot(&b, 0, k), save[k], sizeof(save[k])); \
	} while (0)
	w = dbgb_slot(&b, 0, 0);
	w[2] = 7 | (uint64_t)FP_DTYPE_INT32 << 16;
	expect_closed_fail(&b, dbgb_off(&b, 0, 0, 2), "closed-form kind 7");
	CRESTORE();
	w[2] |= UINT64_C(1) << 40;
	expect_closed_fail(&b, dbgb_off(&b, 0, 0, 2), "reserved bits");
	CRESTORE();
	w[2] = 1 | (uint64_t)FP_DTYPE_FLOAT32 << 16;
	expect_closed_fail(&b, dbgb_off(&b, 0, 0, 2), "sequence dtype");
	CRESTORE();
	w[3] = UINT64_C(1) << 40; /* int32 sequence starting outside int32 */
	expect_closed_fail(&b, dbgb_off(&b, 0, 0, 3), "outside int32");
	CRESTORE();
	w[6] = 1;
	expect_closed_fail(&b, dbgb_off(&b, 0, 0, 6), "word 6 is not 0");
	CRESTORE();
	w[0] = (w[0] & ~(UINT64_C(0xf) << 32)) | UINT64_C(2) << 32;
	w[1] = CN | (uint64_t)2 << 21;
	expect_closed_fail(&b, dbgb_off(&b, 0, 0, 0), "2 dims");
	CRESTORE();
	w = dbgb_slot(&b, 0, 1);
	w[2] = 2 | (uint64_t)5 << 8 | (uint64_t)FP_DTYPE_INT32 << 16;
	expect_closed_fail(&b, dbgb_off(&b, 0, 1, 2), "comparison 5");
	CRESTORE();
	w = dbgb_slot(&b, 0, 2);
	w[2] = 1 | (uint64_t)FP_DTYPE_INT32 << 16;
	expect_closed_fail(&b, dbgb_off(&b, 0, 2, 2), "address record");
	CRESTORE();
	w[7] = 3;
	expect_closed_fail(&b, dbgb_off(&b, 0, 2, 7), "word 7 is not 0");
	CRESTORE();
	w[2] = 3 | (uint64_t)FP_DTYPE_INT32 << 16; /* no comparison but a bound */
	expect_closed_fail(&b, dbgb_off(&b, 0, 2, 6), "without a comparison");
	CRESTORE();
	w = dbgb_slot(&b, 0, 3);
	w[2] = 1 | (uint64_t)FP_DTYPE_INT32 << 16; /* int64 record, int32 sequence */
	expect_closed_fail(&b, dbgb_off(&b, 0, 3, 2), "disagree");
#undef CRESTORE
	dbgb_free(&b);
}
