/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the Debugger's findings (src/debug/findings.c): turning the check slots the
 * device folded its rules into (docs/formats/record-format.md, "Check area") into findings, on
 * buffers made with the builder of test-debug.h. View extents of strided tensors; every
 * out-of-bounds outcome against the tensor table (past the end in the same storage, inside
 * another argument's view or allocation, before the start, outside everything, unknown and
 * several candidates, lanes and reach from the slot's words, suppressed lanes); where the first
 * instance was (execution from a marker-mode run's records, unknown in check mode, the loop
 * iteration, the program list); NaN/Inf origins and their descendants; the numerical rules; host
 * tensor descriptors from the launch JSON's `args`; the JSON and text reports of findings; an
 * out-of-memory sweep. Not here: the decoder's checks of the area (test-debug-decode.c).
 */
#define _GNU_SOURCE 1
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include <flagprism/alloc.h>
#include <flagprism/debug-summary.h>
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

/* The findings of a run with no launch arguments (the tensor table is all bounds need). */
static struct fp_dbg_findings *findings(const struct fp_dbg_run *run)
{
	struct fp_dbg_findings *fs = NULL;
	struct fp_diag d;

	fp_diag_clear(&d);
	if (fp_dbg_findings_new(run, NULL, 0, &fs, &d))
		fprintf(stderr, "findings: %s\n", d.msg);
	ASSERT_NOT_NULL(fs);
	return fs;
}

/* The finding of `kind` at statement line `line` (NULL if none). */
static const struct fp_dbg_finding *at_line(const struct fp_dbg_findings *fs,
					    const struct fp_dbg_run *run,
					    enum fp_dbg_finding_kind kind, uint32_t line)
{
	size_t i;

	for (i = 0; i < fp_dbg_findings_count(fs); i++) {
		const struct fp_dbg_finding *f = fp_dbg_findings_at(fs, i);

		if (f->kind == kind && fp_dbg_run_statement(run, f->statement)->line == line)
			return f;
	}
	return NULL;
}

static void expect_msg(const struct fp_dbg_finding *f, const char *needle)
{
	if (!strstr(f->message, needle)) {
		fprintf(stderr, "missing \"%s\" in:\n%s\n", needle, f->message);
		ASSERT(0);
	}
}

static void expect_prefix(const struct fp_dbg_finding *f, const char *prefix)
{
	if (strncmp(f->message, prefix, strlen(prefix))) {
		fprintf(stderr, "expected \"%s...\", got:\n%s\n", prefix, f->message);
		ASSERT(0);
	}
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

/* ---- out of bounds ------------------------------------------------------------------------- */

/*
 * One access per statement (line 10 + n), slot n - 1 its bounds check. The tensor table, in
 * parameter order: x_ptr (view 0x1000..0x1100 in storage 0x1000..0x2000), y_ptr (its own
 * allocation 0x3000..0x3100), z_ptr (a view 0x1400..0x1500 whose storage the host could not
 * read: all zero, so its view stands for it), n (a scalar: all zero), w_ptr (its own
 * allocation 0x500..0x600: a candidate nothing reaches).
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
	" {\"id\": 9, \"line\": 19, \"source\": \"a9 = tl.load(tl.where(c, x_ptr, y_ptr) + o)\"},"
	" {\"id\": 10, \"line\": 20, \"source\": \"a10 = tl.load(bp)\"},"
	" {\"id\": 11, \"line\": 21, \"source\": \"tl.store(x_ptr + o + 64, v)\"}],"
	" \"sites\": ["
	" {\"id\": 1, \"statement\": 1, \"kind\": \"load\", \"name\": \"s1\"},"
	" {\"id\": 2, \"statement\": 2, \"kind\": \"load\", \"name\": \"s2\"},"
	" {\"id\": 3, \"statement\": 3, \"kind\": \"load\", \"name\": \"s3\"},"
	" {\"id\": 4, \"statement\": 4, \"kind\": \"load\", \"name\": \"s4\"},"
	" {\"id\": 5, \"statement\": 5, \"kind\": \"load\", \"name\": \"s5\"},"
	" {\"id\": 6, \"statement\": 6, \"kind\": \"load\", \"name\": \"s6\"},"
	" {\"id\": 7, \"statement\": 7, \"kind\": \"load\", \"name\": \"s7\"},"
	" {\"id\": 8, \"statement\": 8, \"kind\": \"load\", \"name\": \"s8\"},"
	" {\"id\": 9, \"statement\": 9, \"kind\": \"load\", \"name\": \"s9\"},"
	" {\"id\": 10, \"statement\": 10, \"kind\": \"load\", \"name\": \"s10\","
	"  \"form\": \"block_pointer\"},"
	" {\"id\": 11, \"statement\": 11, \"kind\": \"store\", \"name\": \"s11\"}],"
	" \"params\": [\"x_ptr\", \"y_ptr\", \"z_ptr\", \"n\", \"w_ptr\"],"
	" \"check_slots\": ["
	" {\"slot\": 0, \"rule\": \"bounds\", \"statement\": 1, \"subject\": \"s1\", \"site\": 1,"
	"  \"cands\": [\"x_ptr\"]},"
	" {\"slot\": 1, \"rule\": \"bounds\", \"statement\": 2, \"subject\": \"s2\", \"site\": 2,"
	"  \"cands\": [\"x_ptr\"]},"
	" {\"slot\": 2, \"rule\": \"bounds\", \"statement\": 3, \"subject\": \"s3\", \"site\": 3,"
	"  \"cands\": [\"x_ptr\"]},"
	" {\"slot\": 3, \"rule\": \"bounds\", \"statement\": 4, \"subject\": \"s4\", \"site\": 4,"
	"  \"cands\": [\"x_ptr\"]},"
	" {\"slot\": 4, \"rule\": \"bounds\", \"statement\": 5, \"subject\": \"s5\", \"site\": 5,"
	"  \"cands\": [\"y_ptr\"]},"
	" {\"slot\": 5, \"rule\": \"bounds\", \"statement\": 6, \"subject\": \"s6\", \"site\": 6,"
	"  \"cands\": [\"n\"]},"
	" {\"slot\": 6, \"rule\": \"bounds\", \"statement\": 7, \"subject\": \"s7\", \"site\": 7},"
	" {\"slot\": 7, \"rule\": \"bounds\", \"statement\": 8, \"subject\": \"s8\", \"site\": 8,"
	"  \"cands\": [\"x_ptr\"]},"
	" {\"slot\": 8, \"rule\": \"bounds\", \"statement\": 9, \"subject\": \"s9\", \"site\": 9,"
	"  \"cands\": [\"x_ptr\", \"y_ptr\", \"w_ptr\"]},"
	" {\"slot\": 9, \"rule\": \"bounds\", \"statement\": 10, \"subject\": \"s10\", \"site\": 10,"
	"  \"cands\": [\"x_ptr\"], \"form\": \"block_pointer\"},"
	" {\"slot\": 10, \"rule\": \"bounds\", \"statement\": 11, \"subject\": \"s11\", \"site\": 11,"
	"  \"cands\": [\"x_ptr\"], \"access\": \"store\"}]}";

#define OOB_NP 5
#define OOB_NC 11

static void oob_table(struct dbgb *b)
{
	dbgb_table(b, 0, 0x1000, 0x1100, 0x1000, 0x2000);
	dbgb_table(b, 1, 0x3000, 0x3100, 0x3000, 0x3100);
	dbgb_table(b, 2, 0x1400, 0x1500, 0, 0);
	dbgb_table(b, 4, 0x500, 0x600, 0x500, 0x600);
}

/* An access's instance in check mode (sequence 0): `count` lanes out, the first at `addr`. */
static void oob(struct dbgb *b, uint64_t slot, uint64_t p, uint64_t count, uint64_t lane,
		uint64_t addr, uint64_t lo, uint64_t hi)
{
	dbgb_fire(b, slot, p, 0, count, lane, addr, lo, hi, 0);
}

/* The check-mode run of OOB_SITES: two programs, one suppressing or not. */
static void oob_run(struct dbgb *b, bool suppress)
{
	dbgb_init_checks(b, 0, 2, 11, false, 0, OOB_NP, OOB_NC, suppress);
	oob_table(b);
	/* s2, past x's end: program 1 (lanes 2, 3 of 0x10f8..) then program 0 (lane 3 of
	 * 0x10f4..), folded in that order; the first instance is program 0's all the same */
	oob(b, 1, 1, 2, 2, 0x1100, 0x1100, 0x1108);
	oob(b, 1, 0, 1, 3, 0x1100, 0x1100, 0x1104);
	/* s3: x's pointer moved into z's view (a view of x's storage) */
	oob(b, 2, 0, 4, 0, 0x1400, 0x1400, 0x1410);
	/* s4: two lanes before x's start, and before its storage */
	oob(b, 3, 0, 2, 0, 0xff8, 0xff8, 0x1000);
	/* s5: y's pointer in x's allocation */
	oob(b, 4, 1, 4, 0, 0x1800, 0x1800, 0x1810);
	/* s6: a base that is not a tensor: checked against every tensor; in x's storage */
	oob(b, 5, 0, 4, 0, 0x1200, 0x1200, 0x1210);
	/* s7: no candidate at all, nowhere near anything: y's view is the nearest */
	oob(b, 6, 0, 4, 0, 0x9000, 0x9000, 0x9010);
	/* s9: three candidates, lanes 1-3 just past y's view (the nearest of them) */
	oob(b, 8, 0, 3, 1, 0x3100, 0x3100, 0x310c);
	/* s10: a block pointer's box past x's end */
	oob(b, 9, 1, 4, 0, 0x1100, 0x1100, 0x1110);
	/* s11: a store past x's end, in program 1 only */
	oob(b, 10, 1, 4, 0, 0x1100, 0x1100, 0x1110);
}

TEST(debug_findings_oob_rules)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	const struct fp_dbg_finding *f;
	size_t i;

	oob_run(&b, false);
	run = decode(&b, OOB_SITES);
	fs = findings(run);
	/* every slot that fired, and only those (s1 and s8 did not) */
	ASSERT_EQ(fp_dbg_findings_count(fs), 9);
	ASSERT_NULL(at_line(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 11));
	ASSERT_NULL(at_line(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 18));
	for (i = 0; i < fp_dbg_findings_count(fs); i++) {
		f = fp_dbg_findings_at(fs, i);
		ASSERT_EQ(f->kind, FP_DBG_FINDING_OUT_OF_BOUNDS);
		ASSERT_EQ(f->execution, FP_DBG_EXECUTION_UNKNOWN); /* check mode: no records */
		ASSERT(f->lanes_known);
		ASSERT_UEQ(f->suppressed, 0); /* the run kept the accesses */
		ASSERT(!strstr(f->message, "not performed"));
		ASSERT_NULL(f->loop_var);
		ASSERT(!f->programs_more);
		/* ordered by statement */
		if (i)
			ASSERT_LT(fp_dbg_findings_at(fs, i - 1)->statement, f->statement);
	}

	/* past the end of the candidate, inside its storage: the whole message */
	f = at_line(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 12);
	ASSERT_NOT_NULL(f);
	ASSERT_STREQ(f->subject, "s2");
	ASSERT_EQ(fp_dbg_run_site(run, f->site)->id, 2);
	ASSERT_STREQ(f->param, "x_ptr");
	ASSERT(f->param_known);
	ASSERT_NULL(f->other_param);
	ASSERT_EQ(f->where, FP_DBG_OOB_INSIDE_STORAGE);
	ASSERT_UEQ(f->address, 0x1100);
	ASSERT_UEQ(f->bytes_past, 8); /* the furthest of both instances: 0x1108 */
	ASSERT_UEQ(f->bytes_before, 0);
	ASSERT_UEQ(f->lanes_out, 3);
	ASSERT_UEQ(f->program, 0);
	ASSERT_EQ(f->nprograms, 2);
	ASSERT_UEQ(f->programs[0], 0);
	ASSERT_UEQ(f->programs[1], 1);
	ASSERT_UEQ(f->program_count, 2);
	ASSERT_UEQ(f->instance_count, 2);
	ASSERT_UEQ(f->view_lo, 0x1000);
	ASSERT_UEQ(f->view_hi, 0x1100);
	ASSERT_UEQ(f->storage_lo, 0x1000);
	ASSERT_UEQ(f->storage_hi, 0x2000);
	ASSERT_STREQ(f->message,
		     "tl.load from `s2` reads up to 8 bytes past the end of the tensor `x_ptr` (a "
		     "view of 256 bytes). It stays inside the same allocation (4096 bytes), so it "
		     "silently reads neighbouring data that is not part of the view (first "
		     "offending address 0x1100, 3 active lanes outside the view).");

	/* inside another parameter's view in the same storage: named */
	f = at_line(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 13);
	ASSERT_NOT_NULL(f);
	ASSERT_STREQ(f->param, "x_ptr");
	ASSERT_EQ(f->where, FP_DBG_OOB_INSIDE_STORAGE);
	ASSERT_STREQ(f->other_param, "z_ptr");
	ASSERT_UEQ(f->bytes_past, 0x1410 - 0x1100);
	expect_msg(f, "Its first offending address lies inside `z_ptr`, another tensor of the "
		      "launch in the same allocation (4096 bytes): it silently reads that tensor's "
		      "data (first offending address 0x1400, 4 active lanes");

	/* before the start, outside every allocation */
	f = at_line(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 14);
	ASSERT_NOT_NULL(f);
	ASSERT_EQ(f->where, FP_DBG_OOB_OUTSIDE);
	ASSERT_NULL(f->other_param);
	ASSERT_UEQ(f->bytes_before, 8);
	ASSERT_UEQ(f->bytes_past, 0);
	ASSERT_UEQ(f->address, 0xff8);
	ASSERT_UEQ(f->lanes_out, 2);
	expect_msg(f, "reads up to 8 bytes before the start of the tensor `x_ptr`");
	expect_msg(f, "It leaves every allocation the launch knows of: on a GPU it reads memory "
		      "that belongs to something else, or faults");

	/* in another parameter's allocation */
	f = at_line(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 15);
	ASSERT_NOT_NULL(f);
	ASSERT_STREQ(f->param, "y_ptr");
	ASSERT(f->param_known);
	ASSERT_EQ(f->where, FP_DBG_OOB_OTHER_STORAGE);
	ASSERT_STREQ(f->other_param, "x_ptr");
	ASSERT_UEQ(f->bytes_before, 0x3000 - 0x1800);
	ASSERT_UEQ(f->program, 1);
	expect_msg(f, "lies inside `x_ptr`, another argument (the allocator put it next to "
		      "`y_ptr`): it silently reads that tensor's data");

	/* unknown provenance: checked against every tensor, the nearest view named */
	f = at_line(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 16);
	ASSERT_NOT_NULL(f);
	ASSERT_STREQ(f->param, "x_ptr");
	ASSERT(!f->param_known);
	ASSERT_EQ(f->where, FP_DBG_OOB_INSIDE_STORAGE);
	ASSERT_NULL(f->other_param);
	ASSERT_UEQ(f->bytes_past, 0x1210 - 0x1100);
	expect_msg(f, "reads up to 272 bytes past the end of every tensor argument's view (the "
		      "pointer's base is not known, so it was checked against every tensor of the "
		      "launch; nearest: `x_ptr`, a view of 256 bytes)");

	/* no candidate, outside everything: the nearest is y */
	f = at_line(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 17);
	ASSERT_NOT_NULL(f);
	ASSERT_STREQ(f->param, "y_ptr");
	ASSERT(!f->param_known);
	ASSERT_EQ(f->where, FP_DBG_OOB_OUTSIDE);
	ASSERT_UEQ(f->bytes_past, 0x9010 - 0x3100);
	expect_msg(f, "checked against every tensor of the launch; nearest: `y_ptr`");

	/* several candidates: measured against the nearest of them, which is known */
	f = at_line(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 19);
	ASSERT_NOT_NULL(f);
	ASSERT_STREQ(f->param, "y_ptr");
	ASSERT(f->param_known);
	ASSERT_EQ(f->where, FP_DBG_OOB_OUTSIDE);
	ASSERT_UEQ(f->bytes_past, 12);
	ASSERT_UEQ(f->address, 0x3100);
	ASSERT_UEQ(f->lanes_out, 3);
	expect_msg(f, "up to 12 bytes past the end of the tensor `y_ptr` (a view of 256 bytes)");

	/* the access's form and kind come from its site */
	f = at_line(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 20);
	ASSERT_NOT_NULL(f);
	expect_prefix(f,
		      "tl.load through the block pointer `s10` reads up to 16 bytes past the end");
	f = at_line(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 21);
	ASSERT_NOT_NULL(f);
	ASSERT_UEQ(f->program, 1);
	ASSERT_EQ(f->nprograms, 1);
	ASSERT_UEQ(f->programs[0], 1);
	expect_prefix(f, "tl.store to `s11` writes up to 16 bytes past the end");
	expect_msg(f, "so it silently overwrites neighbouring data");
	fp_dbg_findings_free(fs);
	fp_dbg_findings_free(NULL);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

/*
 * An access past the end of its tensor that stays inside the tensor's own storage, while that
 * storage also holds another argument (z, a view of the same allocation, as slicing one buffer
 * gives): the address lies in no other argument's view, so the finding must not name one.
 */
TEST(debug_findings_oob_shared_storage)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	const struct fp_dbg_finding *f;

	oob_run(&b, false);
	dbgb_table(&b, 2, 0x1400, 0x1500, 0x1000, 0x2000); /* z's storage is x's */
	run = decode(&b, OOB_SITES);
	fs = findings(run);
	/* s3 lands inside z's view: named, as before */
	f = at_line(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 13);
	ASSERT_NOT_NULL(f);
	ASSERT_STREQ(f->other_param, "z_ptr");
	/* s2 lands in the gap between x's and z's views: inside the storage, in nobody's view */
	f = at_line(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 12);
	ASSERT_NOT_NULL(f);
	ASSERT_EQ(f->where, FP_DBG_OOB_INSIDE_STORAGE);
	if (f->other_param)
		fprintf(stderr, "other_param: %s\nmessage: %s\n", f->other_param, f->message);
	ASSERT_NULL(f->other_param);
	expect_msg(f, "It stays inside the same allocation (4096 bytes)");
	ASSERT(!strstr(f->message, "lies inside `z_ptr`"));
	fp_dbg_findings_free(fs);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

/*
 * Exact words: lanes out and reach from words 2-4 over every instance, the first address from
 * word 7 of the first instance; lanes a suppressing run did not perform (ext. flags bit 0).
 */
static const char LANES_SITES[] =
	"{\"version\": 1, \"kernel\": \"k\", \"statements\": ["
	" {\"id\": 0, \"line\": 5, \"source\": \"a = tl.load(x_ptr + o)\"},"
	" {\"id\": 1, \"line\": 6, \"source\": \"tl.store(x_ptr + o, a)\"},"
	" {\"id\": 2, \"line\": 7, \"source\": \"d = tl.make_tensor_descriptor(x_ptr, ...)\"}],"
	" \"sites\": ["
	" {\"id\": 1, \"statement\": 0, \"kind\": \"load\", \"name\": \"x_ptr + o\"},"
	" {\"id\": 2, \"statement\": 1, \"kind\": \"store\", \"name\": \"x_ptr + o\"},"
	" {\"id\": 3, \"statement\": 2, \"kind\": \"descriptor\", \"name\": \"x_ptr\","
	"  \"form\": \"tensor_descriptor\"}],"
	" \"params\": [\"x_ptr\"],"
	" \"check_slots\": ["
	" {\"slot\": 0, \"rule\": \"bounds\", \"statement\": 0, \"subject\": \"x_ptr + o\","
	"  \"site\": 1, \"cands\": [\"x_ptr\"], \"suppressed\": true},"
	" {\"slot\": 1, \"rule\": \"bounds\", \"statement\": 1, \"subject\": \"x_ptr + o\","
	"  \"site\": 2, \"cands\": [\"x_ptr\"], \"suppressed\": true},"
	" {\"slot\": 2, \"rule\": \"descriptor_extent\", \"statement\": 2, \"subject\": \"x_ptr\","
	"  \"site\": 3, \"cands\": [\"x_ptr\"]}]}";

static void lanes_run(struct dbgb *b, bool suppress)
{
	dbgb_init_checks(b, 0, 4, 3, false, 0, 1, 3, suppress);
	dbgb_table(b, 0, 0x1000, 0x1100, 0x1000, 0x2000);
	/* program 2: lanes 5 and 6 before the start, down to 0xfe0 */
	dbgb_fire(b, 0, 2, 0, 2, 5, 0xff0, 0xfe0, 0x1000, 0);
	/* program 1: lanes 7, 8, 9 past the end, up to 0x1120; its first lane outside is not
	 * the lowest address */
	dbgb_fire(b, 0, 1, 0, 3, 7, 0x1104, 0x1100, 0x1120, 0);
	/* the store: one lane */
	dbgb_fire(b, 1, 3, 0, 1, 0, 0x1100, 0x1100, 0x1104, 0);
	/* a device descriptor addressing 0x1000..0x1200: an extent, no lane suppressed */
	dbgb_fire(b, 2, 0, 0, 1, 0, 0x1000, 0x1000, 0x1200, 0);
}

TEST(debug_findings_oob_lanes)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	const struct fp_dbg_finding *f;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		bool sup = pass == 1;

		lanes_run(&b, sup);
		run = decode(&b, LANES_SITES);
		ASSERT_EQ(fp_dbg_run_info(run)->suppress, sup);
		fs = findings(run);
		ASSERT_EQ(fp_dbg_findings_count(fs), 3);
		f = at_line(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 5);
		ASSERT_NOT_NULL(f);
		ASSERT_UEQ(f->program, 1); /* the lowest program, not the first folded in */
		ASSERT_UEQ(f->address, 0x1104);
		ASSERT_UEQ(f->lanes_out, 5);
		ASSERT_UEQ(f->bytes_before, 0x20);
		ASSERT_UEQ(f->bytes_past, 0x20);
		ASSERT_UEQ(f->instance_count, 2);
		ASSERT_UEQ(f->suppressed, sup ? 5 : 0);
		expect_msg(f, "reads up to 32 bytes before the start and 32 bytes past the end of "
			      "the tensor `x_ptr`");
		if (sup)
			expect_msg(f, "(first offending address 0x1104, 5 active lanes outside the "
				      "view, not performed: the check gave them `other`).");
		else
			expect_msg(f, "(first offending address 0x1104, 5 active lanes outside the "
				      "view).");
		f = at_line(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 6);
		ASSERT_NOT_NULL(f);
		ASSERT_UEQ(f->lanes_out, 1);
		ASSERT_UEQ(f->suppressed, sup ? 1 : 0);
		if (sup)
			expect_msg(f, "1 active lane outside the view, not performed: the check "
				      "dropped them).");
		else
			expect_msg(f, "1 active lane outside the view).");
		/* an extent is not an access: nothing to suppress */
		f = at_line(fs, run, FP_DBG_FINDING_DESCRIPTOR_EXTENT, 7);
		ASSERT_NOT_NULL(f);
		ASSERT_STREQ(f->param, "x_ptr");
		ASSERT(f->param_known);
		ASSERT_UEQ(f->bytes_past, 0x100);
		ASSERT_UEQ(f->bytes_before, 0);
		ASSERT_UEQ(f->suppressed, 0);
		expect_prefix(f,
			      "the tensor descriptor made from `x_ptr` addresses up to 256 bytes "
			      "past the end of the tensor `x_ptr` it was built from (a view of 256 "
			      "bytes): its shape and strides are larger than the tensor");
		expect_msg(f, "so it silently reads or overwrites neighbouring data of the same "
			      "allocation");
		fp_dbg_findings_free(fs);
		fp_dbg_run_free(run);
		dbgb_free(&b);
	}
}

/*
 * A descriptor made on the device (`descriptor_extent`): the device stores the descriptor's
 * base as the slot's value (_checks.desc_extent passes `lo`), which lies inside the tensor when
 * only the far end reaches past it. The finding's address is documented as the first offending
 * address, and its message says "first address outside": it must lie outside the view, as a
 * host descriptor's does (the last byte past the end, or the first before the start).
 */
TEST(debug_findings_device_descriptor_address)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	const struct fp_dbg_finding *f;

	lanes_run(&b, false);
	run = decode(&b, LANES_SITES);
	fs = findings(run);
	f = at_line(fs, run, FP_DBG_FINDING_DESCRIPTOR_EXTENT, 7);
	ASSERT_NOT_NULL(f);
	ASSERT_UEQ(f->view_lo, 0x1000);
	ASSERT_UEQ(f->view_hi, 0x1100);
	if (f->address >= f->view_lo && f->address < f->view_hi)
		fprintf(stderr, "address 0x%" PRIx64 " is inside the view; message: %s\n",
			f->address, f->message);
	ASSERT(f->address < f->view_lo || f->address >= f->view_hi);
	ASSERT(!strstr(f->message, "first address outside 0x1000)"));
	fp_dbg_findings_free(fs);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

/*
 * A bounds slot fired but the launch had no tensor with addresses (every entry zero, as for
 * device tensors on the interpreter), or the kernel has no parameter at all: nothing to
 * measure against, and no finding (findings.c: "the device found nothing to check against").
 */
TEST(debug_findings_oob_without_tensors)
{
	static const char no_params[] =
		"{\"version\": 1, \"statements\": [{\"id\": 0, \"line\": 1, \"source\": \"s\"}],"
		" \"sites\": [], \"check_slots\": [{\"slot\": 0, \"rule\": \"bounds\","
		" \"statement\": 0, \"subject\": \"p\"}]}";
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;

	dbgb_init_checks(&b, 0, 2, 11, false, 0, OOB_NP, OOB_NC, false);
	oob(&b, 1, 0, 1, 3, 0x1100, 0x1100, 0x1104);
	run = decode(&b, OOB_SITES);
	fs = findings(run);
	ASSERT_EQ(fp_dbg_findings_count(fs), 0);
	fp_dbg_findings_free(fs);
	fp_dbg_run_free(run);
	dbgb_free(&b);

	dbgb_init_checks(&b, 0, 1, 0, false, 0, 0, 1, false);
	oob(&b, 0, 0, 1, 0, 0x1100, 0x1100, 0x1104);
	run = decode(&b, no_params);
	fs = findings(run);
	ASSERT_EQ(fp_dbg_findings_count(fs), 0);
	fp_dbg_findings_free(fs);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

/* ---- where the first instance was ---------------------------------------------------------- */

/*
 * A loop `for i in range(...)` (line 7) around line 8 `v = tl.load(p + i)` (site 1 load, site 2
 * value v) and line 9 `w = 1 / v` (an operand without a site of its own). Marker mode: each
 * program records load, value, load, value... so execution e of site 1 is slot 2e, of site 2
 * slot 2e + 1.
 */
static const char LOOP_SITES[] =
	"{\"version\": 1, \"kernel\": \"k\", \"statements\": ["
	" {\"id\": 0, \"line\": 8, \"source\": \"v = tl.load(p + i)\", \"loop_depth\": 1},"
	" {\"id\": 1, \"line\": 9, \"source\": \"w = 1 / v\", \"loop_depth\": 1}],"
	" \"sites\": ["
	" {\"id\": 1, \"statement\": 0, \"kind\": \"load\", \"name\": \"p + i\"},"
	" {\"id\": 2, \"statement\": 0, \"kind\": \"value\", \"name\": \"v\"}],"
	" \"params\": [\"p\"],"
	" \"check_slots\": ["
	" {\"slot\": 0, \"rule\": \"bounds\", \"statement\": 0, \"subject\": \"p + i\", \"site\": 1,"
	"  \"cands\": [\"p\"], \"loop\": {\"var\": \"i\", \"line\": 7}, \"suppressed\": true},"
	" {\"slot\": 1, \"rule\": \"nan_mem\", \"statement\": 0, \"subject\": \"v\", \"site\": 2,"
	"  \"loop\": {\"var\": \"i\", \"line\": 7}},"
	" {\"slot\": 2, \"rule\": \"division_by_zero\", \"statement\": 1, \"subject\": \"v\","
	"  \"loop\": {\"var\": \"i\", \"line\": 7}},"
	" {\"slot\": 3, \"rule\": \"inf_mem\", \"statement\": 0, \"subject\": \"v\", \"site\": 2},"
	" {\"slot\": 4, \"rule\": \"bounds\", \"statement\": 0, \"subject\": \"p + i\", \"site\": 1,"
	"  \"cands\": [\"p\"]}]}";

#define LOOP_S 6
#define LOOP_P 24

static void loop_run(struct dbgb *b)
{
	uint64_t shape[1] = {2}, p, a[2];
	double v[2] = {1, 2};
	unsigned k;

	dbgb_init_checks(b, LOOP_S, LOOP_P, 2, false, 0, 1, 5, false);
	dbgb_table(b, 0, 0x1000, 0x1100, 0x1000, 0x1100);
	for (p = 0; p < LOOP_P; p++)
		for (k = 0; k < LOOP_S; k += 2) {
			a[0] = 0x1000 + 8 * k;
			a[1] = a[0] + 4;
			dbgb_addr(b, p, k, 1, FP_DBG_KIND_LOAD, FP_DTYPE_FLOAT32, shape, 1, a, NULL,
				  false);
			dbgb_value(b, p, k + 1, 2, FP_DTYPE_FLOAT32, shape, 1, v, false);
		}
	/* the load's third execution (slot 4) in program 5, i = 12; then program 9's second */
	dbgb_fire(b, 0, 9, 2, 1, 0, 0x1100, 0x1100, 0x1104, 8);
	dbgb_fire(b, 0, 5, 4, 2, 1, 0x1104, 0x1104, 0x110c, 12);
	/* v's second execution (slot 3) of program 0, at a negative i; program 0's later one
	 * does not replace it */
	dbgb_fire_value(b, 1, 0, 5, 1, 1, NAN, -1);
	dbgb_fire_value(b, 1, 0, 3, 1, 1, NAN, -5);
	/* w = 1 / v: no site, so no record to find its execution by */
	dbgb_fire_value(b, 2, 3, 1, 1, 0, 0.0, 4);
	/* inf_mem in programs 7, 3 and 5: listed ascending, the device keeps them unordered */
	dbgb_fire_value(b, 3, 7, 1, 1, 0, INFINITY, 0);
	dbgb_fire_value(b, 3, 3, 1, 1, 0, INFINITY, 0);
	dbgb_fire_value(b, 3, 5, 1, 1, 0, INFINITY, 0);
	/* the other bounds slot, in 12 programs from 23 down to 12: the lowest 8 are listed,
	 * the 4 that came when the list was full are counted (word 12) */
	for (p = LOOP_P - 1; p >= 12; p--)
		dbgb_fire(b, 4, p, 0, 1, 0, 0x1100, 0x1100, 0x1104, 0);
}

TEST(debug_findings_instances)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	const struct fp_dbg_finding *f;
	size_t i;

	loop_run(&b);
	run = decode(&b, LOOP_SITES);
	fs = findings(run);
	ASSERT_EQ(fp_dbg_findings_count(fs), 5);

	/* the execution comes from the record of the slot's site at the first instance's slot */
	f = fp_dbg_findings_at(fs, 0);
	ASSERT_EQ(f->kind, FP_DBG_FINDING_OUT_OF_BOUNDS);
	ASSERT_EQ(f->site, 0);
	ASSERT_UEQ(f->program, 5);
	ASSERT_EQ(f->execution, 2);
	ASSERT_STREQ(f->loop_var, "i");
	ASSERT_EQ(f->loop_line, 7);
	ASSERT_EQ(f->loop_value, 12);
	ASSERT_UEQ(f->address, 0x1104);
	ASSERT_EQ(f->nprograms, 2);
	ASSERT_UEQ(f->programs[0], 5);
	ASSERT_UEQ(f->programs[1], 9);

	/* the second bounds slot: more programs than it lists */
	f = fp_dbg_findings_at(fs, 1);
	ASSERT_EQ(f->kind, FP_DBG_FINDING_OUT_OF_BOUNDS);
	ASSERT_UEQ(f->program, 12);
	ASSERT_EQ(f->nprograms, FP_DBG_FINDING_MAX_PROGRAMS);
	for (i = 0; i < f->nprograms; i++)
		ASSERT_UEQ(f->programs[i], 12 + i);
	ASSERT(f->programs_more);
	ASSERT_UEQ(f->program_count, 8); /* what is listed: a lower bound */
	ASSERT_UEQ(f->instance_count, 12);
	ASSERT_NULL(f->loop_var); /* no loop around this slot */
	ASSERT_EQ(f->loop_value, 0);
	ASSERT_EQ(f->execution, 0); /* slot 0 of program 12 holds the load's first execution */

	f = at_line(fs, run, FP_DBG_FINDING_NAN_ORIGIN, 8);
	ASSERT_NOT_NULL(f);
	ASSERT(f->from_memory);
	ASSERT_UEQ(f->program, 0);
	ASSERT_EQ(f->execution, 1);
	ASSERT_EQ(f->loop_value, -5);
	ASSERT_UEQ(f->instance_count, 2);
	ASSERT_EQ(f->nprograms, 1);

	f = at_line(fs, run, FP_DBG_FINDING_INF_ORIGIN, 8);
	ASSERT_NOT_NULL(f);
	ASSERT_EQ(f->nprograms, 3);
	ASSERT_UEQ(f->programs[0], 3);
	ASSERT_UEQ(f->programs[1], 5);
	ASSERT_UEQ(f->programs[2], 7);
	ASSERT_UEQ(f->program, 3);
	ASSERT(!f->programs_more);
	ASSERT_EQ(f->execution, 0);

	f = at_line(fs, run, FP_DBG_FINDING_DIVISION_BY_ZERO, 9);
	ASSERT_NOT_NULL(f);
	ASSERT_EQ(f->site, UINT32_MAX);
	ASSERT_EQ(f->execution, FP_DBG_EXECUTION_UNKNOWN);
	ASSERT_EQ(f->loop_value, 4);
	fp_dbg_findings_free(fs);
	fp_dbg_run_free(run);

	/* the record at the first instance's slot belongs to another site, or it did not fit
	 * (sequence >= S): the execution is not known */
	memset(dbgb_check(&b, 0), 0, 32 * 8);
	dbgb_fire(&b, 0, 5, 3, 1, 0, 0x1100, 0x1100, 0x1104, 0);
	memset(dbgb_check(&b, 1), 0, 32 * 8);
	dbgb_fire_value(&b, 1, 0, LOOP_S + 2, 1, 0, NAN, 0);
	b.w[4] = 1; /* program 0 (full) had a record more than its slots */
	run = decode(&b, LOOP_SITES);
	fs = findings(run);
	f = fp_dbg_findings_at(fs, 0);
	ASSERT_UEQ(f->program, 5);
	ASSERT_EQ(f->execution, FP_DBG_EXECUTION_UNKNOWN);
	f = at_line(fs, run, FP_DBG_FINDING_NAN_ORIGIN, 8);
	ASSERT_NOT_NULL(f);
	ASSERT_EQ(f->execution, FP_DBG_EXECUTION_UNKNOWN);
	fp_dbg_findings_free(fs);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

/* ---- NaN and Inf --------------------------------------------------------------------------- */

/*
 * Line 10 `x = tl.load(p, mask=m)` (site 1 load, site 2 value x), line 11 `y = x * 2` (site 3,
 * reads x), line 12 `z = w / v` (site 4, reads w and v), line 13 `u = z + 1` (site 5, reads z),
 * line 14 `t = tl.load(q)` (site 6 load, site 7 value t), line 15 `s = a * b` (site 8, reads
 * nothing observed). Slots: 0 nan_mem x, 1 inf_mem x, 2 nan y, 3 nan z, 4 inf z, 5 nan u,
 * 6 nan_mem t, 7 inf s.
 */
static const char ORIGIN_SITES[] =
	"{\"version\": 1, \"kernel\": \"k\", \"statements\": ["
	" {\"id\": 0, \"line\": 10, \"source\": \"x = tl.load(p, mask=m)\"},"
	" {\"id\": 1, \"line\": 11, \"source\": \"y = x * 2\"},"
	" {\"id\": 2, \"line\": 12, \"source\": \"z = w / v\"},"
	" {\"id\": 3, \"line\": 13, \"source\": \"u = z + 1\"},"
	" {\"id\": 4, \"line\": 14, \"source\": \"t = tl.load(q)\"},"
	" {\"id\": 5, \"line\": 15, \"source\": \"s = a * b\"},"
	" {\"id\": 6, \"line\": 16, \"source\": \"tl.store(p, u)\"}],"
	" \"sites\": ["
	" {\"id\": 1, \"statement\": 0, \"kind\": \"load\", \"name\": \"p\"},"
	" {\"id\": 2, \"statement\": 0, \"kind\": \"value\", \"name\": \"x\"},"
	" {\"id\": 3, \"statement\": 1, \"kind\": \"value\", \"name\": \"y\", \"reads\": [\"x\"]},"
	" {\"id\": 4, \"statement\": 2, \"kind\": \"value\", \"name\": \"z\", \"reads\": [\"w\", \"v\"]},"
	" {\"id\": 5, \"statement\": 3, \"kind\": \"value\", \"name\": \"u\", \"reads\": [\"z\"]},"
	" {\"id\": 6, \"statement\": 4, \"kind\": \"load\", \"name\": \"q\"},"
	" {\"id\": 7, \"statement\": 4, \"kind\": \"value\", \"name\": \"t\"},"
	" {\"id\": 8, \"statement\": 5, \"kind\": \"value\", \"name\": \"s\"},"
	" {\"id\": 9, \"statement\": 6, \"kind\": \"value\", \"name\": \"u\"}],"
	" \"params\": [\"p\", \"q\"],"
	" \"check_slots\": ["
	" {\"slot\": 0, \"rule\": \"nan_mem\", \"statement\": 0, \"subject\": \"x\", \"site\": 2,"
	"  \"cands\": [\"p\"]},"
	" {\"slot\": 1, \"rule\": \"inf_mem\", \"statement\": 0, \"subject\": \"x\", \"site\": 2,"
	"  \"cands\": [\"p\"]},"
	" {\"slot\": 2, \"rule\": \"nan\", \"statement\": 1, \"subject\": \"y\", \"site\": 3,"
	"  \"reads\": [\"x\"]},"
	" {\"slot\": 3, \"rule\": \"nan\", \"statement\": 2, \"subject\": \"z\", \"site\": 4,"
	"  \"reads\": [\"w\", \"v\"]},"
	" {\"slot\": 4, \"rule\": \"inf\", \"statement\": 2, \"subject\": \"z\", \"site\": 4,"
	"  \"reads\": [\"w\", \"v\"]},"
	" {\"slot\": 5, \"rule\": \"nan\", \"statement\": 3, \"subject\": \"u\", \"site\": 5,"
	"  \"reads\": [\"z\"]},"
	" {\"slot\": 6, \"rule\": \"nan_mem\", \"statement\": 4, \"subject\": \"t\", \"site\": 7,"
	"  \"cands\": [\"q\"]},"
	" {\"slot\": 7, \"rule\": \"inf\", \"statement\": 5, \"subject\": \"s\", \"site\": 8},"
	" {\"slot\": 8, \"rule\": \"nan\", \"statement\": 6, \"subject\": \"u\", \"site\": 9,"
	"  \"reads\": [\"u\"], \"stores\": [\"p\", \"q\"]},"
	" {\"slot\": 9, \"rule\": \"inf\", \"statement\": 6, \"subject\": \"u\", \"site\": 9,"
	"  \"reads\": [\"u\"], \"stores\": [\"p\"]}]}";

#define ORIGIN_NC 10

/* p and q: two allocations (a load descends from this launch's origin only from one the launch
 * wrote NaN or Inf into) */
static void origin_tables(struct dbgb *b)
{
	dbgb_table(b, 0, 0x1000, 0x1100, 0x1000, 0x2000);
	dbgb_table(b, 1, 0x3000, 0x3100, 0x3000, 0x4000);
}

TEST(debug_findings_origin_from_memory)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	const struct fp_dbg_finding *f;

	/* only the load found NaN (programs 0 and 2); what y and u read from it descends */
	dbgb_init_checks(&b, 0, 3, 9, false, 0, 2, ORIGIN_NC, false);
	origin_tables(&b);
	dbgb_fire_value(&b, 0, 2, 0, 2, 0, NAN, 0);
	dbgb_fire_value(&b, 0, 0, 0, 1, 3, NAN, 0);
	dbgb_descend(&b, 2, 3);
	dbgb_descend(&b, 2, 1);
	run = decode(&b, ORIGIN_SITES);
	fs = findings(run);
	ASSERT_EQ(fp_dbg_findings_count(fs), 1);
	f = fp_dbg_findings_at(fs, 0);
	ASSERT_EQ(f->kind, FP_DBG_FINDING_NAN_ORIGIN);
	ASSERT(f->from_memory);
	ASSERT_STREQ(f->subject, "x");
	ASSERT_EQ(fp_dbg_run_site(run, f->site)->id, 2);
	ASSERT_UEQ(f->count, 3);
	ASSERT(!f->count_is_lower_bound);
	ASSERT_UEQ(f->program, 0);
	ASSERT_UEQ(f->instance_count, 2);
	ASSERT_EQ(f->nprograms, 2);
	ASSERT_UEQ(f->programs[1], 2);
	ASSERT_UEQ(f->descendants, 0);
	ASSERT(isnan(f->value));
	ASSERT_STREQ(f->message, "`x` holds 3 NaN values loaded from memory (in the lanes the load "
				 "read): the input data already contains NaN (it is not computed "
				 "by this launch).");
	fp_dbg_findings_free(fs);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

TEST(debug_findings_origin_computed)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	const struct fp_dbg_finding *f;

	dbgb_init_checks(&b, 0, 3, 9, false, 0, 2, ORIGIN_NC, false);
	origin_tables(&b);
	/* z = w / v makes NaN in program 1 (lane 1) and Inf in program 2 (lane 3) */
	dbgb_fire_value(&b, 3, 1, 0, 1, 1, NAN, 0);
	dbgb_fire_value(&b, 4, 2, 0, 2, 3, -INFINITY, 0);
	/* what y and u then held descends: 3 + 2 instances (words 10), of 7 elements */
	dbgb_descend(&b, 2, 2);
	dbgb_descend(&b, 2, 2);
	dbgb_descend(&b, 2, 1);
	dbgb_descend(&b, 5, 1);
	dbgb_descend(&b, 5, 1);
	/* u, holding both, is stored into p and q (NaN) and p (Inf) */
	dbgb_descend(&b, 8, 1);
	dbgb_descend(&b, 9, 1);
	/* loads of NaN (x in program 0 from p, t in programs 0 and 1 from q) and of Inf (x in
	 * program 1): stores of what the launch made, read back: they descend from the origins */
	dbgb_fire_value(&b, 0, 0, 0, 1, 0, NAN, 0);
	dbgb_fire_value(&b, 6, 0, 0, 4, 0, NAN, 0);
	dbgb_fire_value(&b, 6, 1, 0, 4, 0, NAN, 0);
	dbgb_fire_value(&b, 1, 1, 0, 1, 2, INFINITY, 0);
	run = decode(&b, ORIGIN_SITES);
	fs = findings(run);
	ASSERT_EQ(fp_dbg_findings_count(fs), 2); /* no from-memory finding of its own */

	f = fp_dbg_findings_at(fs, 0);
	ASSERT_EQ(f->kind, FP_DBG_FINDING_NAN_ORIGIN);
	ASSERT(!f->from_memory);
	ASSERT_STREQ(f->subject, "z");
	ASSERT_EQ(fp_dbg_run_statement(run, f->statement)->line, 12);
	ASSERT_UEQ(f->program, 1);
	ASSERT_UEQ(f->count, 1);
	ASSERT(isnan(f->value));
	/* y's 3 and u's 2 descended instances, the loads' 1 + 2 instances */
	ASSERT_UEQ(f->descendants, 9);
	ASSERT_STREQ(f->message,
		     "`z` holds NaN (1 element where it was born) while no value the statement "
		     "reads (w, v) held NaN (infinities it reads make NaN in inf - inf, 0 * inf "
		     "and inf / inf): the NaN is produced here; 9 later values or loads descend "
		     "from it.");

	f = fp_dbg_findings_at(fs, 1);
	ASSERT_EQ(f->kind, FP_DBG_FINDING_INF_ORIGIN);
	ASSERT(!f->from_memory);
	ASSERT_STREQ(f->subject, "z");
	ASSERT_UEQ(f->program, 2);
	ASSERT_UEQ(f->count, 2);
	ASSERT_DEQ(f->value, -INFINITY);
	ASSERT_UEQ(f->descendants, 2); /* the stored u, x's load */
	expect_msg(f,
		   "`z` holds Inf (2 elements where it was born) while no value the statement "
		   "reads (w, v) held an infinity of that sign, and it writes none itself (an "
		   "overflow, a division by zero or a narrowing cast): the Inf is produced here; "
		   "2 later values or loads descend from it.");
	ASSERT_NULL(at_line(fs, run, FP_DBG_FINDING_NAN_ORIGIN, 10));
	ASSERT_NULL(at_line(fs, run, FP_DBG_FINDING_NAN_ORIGIN, 14));
	fp_dbg_findings_free(fs);
	fp_dbg_run_free(run);
	dbgb_free(&b);

	/* an origin reading nothing observed, without descendants */
	dbgb_init_checks(&b, 0, 1, 9, false, 0, 2, ORIGIN_NC, false);
	origin_tables(&b);
	dbgb_fire_value(&b, 7, 0, 0, 1, 0, INFINITY, 0);
	/* an Inf loaded from p, which this launch wrote no Inf into: the data held it */
	dbgb_fire_value(&b, 1, 0, 0, 1, 0, -INFINITY, 0);
	run = decode(&b, ORIGIN_SITES);
	fs = findings(run);
	ASSERT_EQ(fp_dbg_findings_count(fs), 2);
	f = at_line(fs, run, FP_DBG_FINDING_INF_ORIGIN, 15);
	ASSERT_NOT_NULL(f);
	ASSERT_STREQ(f->subject, "s");
	ASSERT_UEQ(f->descendants, 0);
	expect_msg(f, "`s` holds Inf (1 element where it was born) while nothing the statement "
		      "reads held an infinity of that sign");
	f = at_line(fs, run, FP_DBG_FINDING_INF_ORIGIN, 10);
	ASSERT_NOT_NULL(f);
	ASSERT(f->from_memory);
	ASSERT_EQ(f->ncands, 1);
	ASSERT_STREQ(f->cands[0], "p");
	fp_dbg_findings_free(fs);
	fp_dbg_run_free(run);
	dbgb_free(&b);

	/* the same, where the launch stored an Inf into p: the load reads it back, it descends */
	dbgb_init_checks(&b, 0, 1, 9, false, 0, 2, ORIGIN_NC, false);
	origin_tables(&b);
	dbgb_fire_value(&b, 7, 0, 0, 1, 0, INFINITY, 0);
	dbgb_descend(&b, 9, 1);
	dbgb_fire_value(&b, 1, 0, 0, 1, 0, -INFINITY, 0);
	run = decode(&b, ORIGIN_SITES);
	fs = findings(run);
	ASSERT_EQ(fp_dbg_findings_count(fs), 1);
	f = fp_dbg_findings_at(fs, 0);
	ASSERT_STREQ(f->subject, "s");
	ASSERT_UEQ(f->descendants, 2); /* the store's value and the load */
	fp_dbg_findings_free(fs);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

/* ---- division, domain, precision ----------------------------------------------------------- */

/* One operand per statement, none with a site of its own (the rewriter checks operands). */
static const char RULE_SITES[] =
	"{\"version\": 1, \"kernel\": \"k\", \"statements\": ["
	" {\"id\": 0, \"line\": 10, \"source\": \"q = n / d\"},"
	" {\"id\": 1, \"line\": 11, \"source\": \"e = n / s\"},"
	" {\"id\": 2, \"line\": 12, \"source\": \"r = tl.sqrt(v)\"},"
	" {\"id\": 3, \"line\": 13, \"source\": \"l = tl.log(w)\"},"
	" {\"id\": 4, \"line\": 14, \"source\": \"b = a.to(tl.float16)\"},"
	" {\"id\": 5, \"line\": 15, \"source\": \"c8 = c.to(tl.float8e4nv)\"},"
	" {\"id\": 6, \"line\": 16, \"source\": \"tb = t.to(tl.bfloat16)\"},"
	" {\"id\": 7, \"line\": 17, \"source\": \"mh = m.to(tl.float16)\"},"
	" {\"id\": 8, \"line\": 18, \"source\": \"i = n // k\"},"
	" {\"id\": 9, \"line\": 19, \"source\": \"ok = g.to(tl.float16) / h\"}],"
	" \"sites\": [],"
	" \"check_slots\": ["
	" {\"slot\": 0, \"rule\": \"division_by_zero\", \"statement\": 0, \"subject\": \"d\"},"
	" {\"slot\": 1, \"rule\": \"division_by_tiny\", \"statement\": 0, \"subject\": \"d\"},"
	" {\"slot\": 2, \"rule\": \"division_by_tiny\", \"statement\": 1, \"subject\": \"s\"},"
	" {\"slot\": 3, \"rule\": \"sqrt_negative\", \"statement\": 2, \"subject\": \"v\"},"
	" {\"slot\": 4, \"rule\": \"log_negative\", \"statement\": 3, \"subject\": \"w\"},"
	" {\"slot\": 5, \"rule\": \"cast_overflow\", \"statement\": 4, \"subject\": \"a\","
	"  \"target_dtype\": \"float16\"},"
	" {\"slot\": 6, \"rule\": \"cast_overflow\", \"statement\": 5, \"subject\": \"c\","
	"  \"target_dtype\": \"float8e4nv\"},"
	" {\"slot\": 7, \"rule\": \"cast_flush\", \"statement\": 6, \"subject\": \"t\","
	"  \"target_dtype\": \"bfloat16\"},"
	" {\"slot\": 8, \"rule\": \"cast_subnormal\", \"statement\": 7, \"subject\": \"m\","
	"  \"target_dtype\": \"float16\"},"
	" {\"slot\": 9, \"rule\": \"division_by_zero\", \"statement\": 8, \"subject\": \"k\"},"
	" {\"slot\": 10, \"rule\": \"cast_overflow\", \"statement\": 9, \"subject\": \"g\","
	"  \"target_dtype\": \"float16\"},"
	" {\"slot\": 11, \"rule\": \"division_by_zero\", \"statement\": 9, \"subject\": \"h\"}]}";

static void rule_run(struct dbgb *b)
{
	dbgb_init_checks(b, 0, 2, 0, false, 0, 0, 12, false);
	dbgb_fire_value(b, 0, 1, 0, 2, 1, 0.0, 0); /* d: zeros in lanes 1 and 3 */
	dbgb_fire_value(b, 0, 0, 0, 1, 2, -0.0, 0);
	dbgb_fire_value(b, 2, 0, 0, 4, 0, 1e-39, 0); /* s: four subnormal divisors */
	dbgb_fire_value(b, 3, 1, 0, 1, 1, -0.5, 0);  /* sqrt(-0.5): a negative value's bits */
	dbgb_fire_value(b, 4, 0, 0, 1, 0, -3.0, 0);
	dbgb_fire_value(b, 5, 0, 0, 1, 0, 1e5, 0);   /* beyond fp16's 65504 */
	dbgb_fire_value(b, 6, 0, 0, 2, 0, 500.0, 0); /* beyond fp8e4nv's 448 */
	dbgb_fire_value(b, 7, 0, 0, 3, 0, 1e-42, 0); /* flushed by bf16 */
	dbgb_fire_value(b, 8, 1, 0, 5, 2, -1e-9, 0); /* subnormal in fp16 */
	dbgb_fire_value(b, 9, 1, 0, 1, 1, 0.0, 0);   /* an integer divisor (as float64) */
}

TEST(debug_findings_rules)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	const struct fp_dbg_finding *f;
	size_t i;

	rule_run(&b);
	run = decode(&b, RULE_SITES);
	fs = findings(run);
	ASSERT_EQ(fp_dbg_findings_count(fs), 9);
	for (i = 0; i < fp_dbg_findings_count(fs); i++) {
		f = fp_dbg_findings_at(fs, i);
		ASSERT_EQ(f->site, UINT32_MAX); /* operands: no site of their own */
		ASSERT(!f->count_is_lower_bound);
		ASSERT_EQ(f->execution, FP_DBG_EXECUTION_UNKNOWN);
	}

	f = at_line(fs, run, FP_DBG_FINDING_DIVISION_BY_ZERO, 10);
	ASSERT_NOT_NULL(f);
	ASSERT_STREQ(f->subject, "d");
	ASSERT_UEQ(f->count, 3);
	ASSERT_UEQ(f->instance_count, 2);
	ASSERT_UEQ(f->program, 0);
	ASSERT_DEQ(f->value, 0.0);
	ASSERT(signbit(f->value)); /* program 0's first element: -0.0 */
	ASSERT_STREQ(f->message, "divides by zero: the divisor `d` holds 3 zero elements (x/0 "
				 "gives inf, 0/0 gives NaN).");

	f = at_line(fs, run, FP_DBG_FINDING_DIVISION_BY_ZERO, 11);
	ASSERT_NOT_NULL(f);
	ASSERT_DEQ(f->value, 1e-39);
	ASSERT_STREQ(f->message, "divides by values within the smallest normal of zero: the "
				 "divisor `s` holds 4 such elements (first: 1e-39).");

	f = at_line(fs, run, FP_DBG_FINDING_INVALID_DOMAIN, 12);
	ASSERT_NOT_NULL(f);
	ASSERT_DEQ(f->value, -0.5);
	ASSERT_STREQ(f->message, "takes the square root of negative values: `v` holds 1 negative "
				 "element (first: -0.5; the result is NaN there).");
	f = at_line(fs, run, FP_DBG_FINDING_INVALID_DOMAIN, 13);
	ASSERT_NOT_NULL(f);
	ASSERT_DEQ(f->value, -3.0);
	expect_msg(f, "takes the logarithm of negative values: `w` holds 1 negative element "
		      "(first: -3;");

	f = at_line(fs, run, FP_DBG_FINDING_PRECISION_LOSS, 14);
	ASSERT_NOT_NULL(f);
	ASSERT_EQ(f->target_dtype, FP_DTYPE_FLOAT16);
	ASSERT_DEQ(f->value, 1e5);
	ASSERT_STREQ(f->message, "converts `a` to float16 although 1 of its finite values are "
				 "beyond float16's largest finite value 65504 (first: 100000): "
				 "those elements become inf.");
	f = at_line(fs, run, FP_DBG_FINDING_PRECISION_LOSS, 15);
	ASSERT_NOT_NULL(f);
	ASSERT_EQ(f->target_dtype, FP_DTYPE_FLOAT8E4NV);
	ASSERT_UEQ(f->count, 2);
	expect_msg(f, "largest finite value 448 (first: 500): those elements become NaN (or "
		      "saturate).");
	f = at_line(fs, run, FP_DBG_FINDING_PRECISION_LOSS, 16);
	ASSERT_NOT_NULL(f);
	ASSERT_EQ(f->target_dtype, FP_DTYPE_BFLOAT16);
	ASSERT_STREQ(f->message, "converts `t` to bfloat16 and 3 of its nonzero values (at least "
				 "half) are below bfloat16's smallest subnormal (9.18e-41) by half "
				 "or more: they flush to zero.");
	f = at_line(fs, run, FP_DBG_FINDING_PRECISION_LOSS, 17);
	ASSERT_NOT_NULL(f);
	ASSERT_UEQ(f->program, 1);
	ASSERT_DEQ(f->value, -1e-9);
	ASSERT_STREQ(f->message, "converts `m` to float16 and 5 of its nonzero values (at least "
				 "half) are below float16's smallest normal (6.1e-05): they keep "
				 "only a few significant bits.");

	f = at_line(fs, run, FP_DBG_FINDING_DIVISION_BY_ZERO, 18);
	ASSERT_NOT_NULL(f);
	ASSERT_UEQ(f->count, 1);
	/* slots that never fired give nothing */
	ASSERT_NULL(at_line(fs, run, FP_DBG_FINDING_PRECISION_LOSS, 19));
	ASSERT_NULL(at_line(fs, run, FP_DBG_FINDING_DIVISION_BY_ZERO, 19));

	/* ordered by kind, then statement */
	for (i = 1; i < fp_dbg_findings_count(fs); i++) {
		const struct fp_dbg_finding *p = fp_dbg_findings_at(fs, i - 1);

		f = fp_dbg_findings_at(fs, i);
		ASSERT(p->kind < f->kind || (p->kind == f->kind && p->statement <= f->statement));
	}
	fp_dbg_findings_free(fs);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

/* ---- the launch's arguments and host tensor descriptors ------------------------------------ */

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

	oob_run(&b, false);
	run = decode(&b, OOB_SITES);
	ASSERT_OK(fp_dbg_findings_from_launch(run, LAUNCH_ARGS, strlen(LAUNCH_ARGS), &fs, &d));
	a = fp_dbg_findings_args(fs, &n);
	ASSERT_EQ(n, 2); /* g has no address; scalars and constexprs have no extent */
	ASSERT_STREQ(a[0].name, "x_ptr");
	ASSERT_UEQ(a[0].view_hi, 4096 + 256);
	ASSERT_UEQ(a[0].storage_hi, 8192);
	ASSERT_UEQ(a[1].storage_lo, 0); /* unknown storage */
	/* the arguments say nothing to bounds: the buffer's tensor table does */
	ASSERT_EQ(fp_dbg_findings_count(fs), 9);
	fp_dbg_findings_free(fs);
	ASSERT_OK(fp_dbg_findings_from_launch(run, "{}", 2, &fs, NULL));
	ASSERT_EQ(fp_dbg_findings_count(fs), 9);
	ASSERT_NULL(fp_dbg_findings_args(fs, &n));
	ASSERT_EQ(n, 0);
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
	ASSERT_STREQ(fp_dbg_finding_kind_name(FP_DBG_FINDING_DESCRIPTOR_EXTENT),
		     "descriptor_extent");
	ASSERT_STREQ(fp_dbg_finding_kind_name((enum fp_dbg_finding_kind)0), "unknown");
	ASSERT_STREQ(fp_dbg_oob_where_name(FP_DBG_OOB_OUTSIDE), "outside_allocations");
	ASSERT_STREQ(fp_dbg_oob_where_name(FP_DBG_OOB_NONE), "none");
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

/*
 * Host tensor descriptors are checked at launch from the launch JSON (`descriptor`), not on the
 * device: the finding goes to the first access through the descriptor (site `desc_param`),
 * records or not. `h` is 16 floats at 0x2000 in a 256-byte storage; its descriptor 6 x 4
 * reaches 32 bytes past; `e` fits its descriptor; `o` has no access through it.
 */
static const char DESC_SITES[] =
	"{\"version\": 1, \"kernel\": \"k\", \"statements\": ["
	" {\"id\": 0, \"line\": 4, \"source\": \"u = h_desc.load([0, 0])\"},"
	" {\"id\": 1, \"line\": 5, \"source\": \"h_desc.store([4, 0], u)\"},"
	" {\"id\": 2, \"line\": 6, \"source\": \"v = e_desc.load([0, 0])\"}],"
	" \"sites\": ["
	" {\"id\": 1, \"statement\": 0, \"kind\": \"load\", \"name\": \"h_desc\","
	"  \"form\": \"tensor_descriptor\", \"desc_param\": \"h\"},"
	" {\"id\": 2, \"statement\": 1, \"kind\": \"store\", \"name\": \"h_desc\","
	"  \"form\": \"tensor_descriptor\", \"desc_param\": \"h\"},"
	" {\"id\": 3, \"statement\": 2, \"kind\": \"load\", \"name\": \"e_desc\","
	"  \"form\": \"tensor_descriptor\", \"desc_param\": \"e\"}],"
	" \"params\": [\"h\", \"e\", \"o\"],"
	" \"check_slots\": ["
	" {\"slot\": 0, \"rule\": \"bounds\", \"statement\": 1, \"subject\": \"h_desc\", \"site\": 2,"
	"  \"cands\": [\"h\"], \"form\": \"tensor_descriptor\"}]}";

static const char DESC_LAUNCH[] =
	"{\"output_dir\": \"/tmp\", \"grid\": [1], \"args\": ["
	" {\"name\": \"h\", \"kind\": \"tensor\", \"data_ptr\": 8192, \"element_size\": 4,"
	"  \"shape\": [4, 4], \"strides\": [4, 1], \"storage_ptr\": 8192, \"storage_nbytes\": 256,"
	"  \"descriptor\": {\"shape\": [6, 4], \"strides\": [4, 1], \"block_shape\": [4, 4]}},"
	" {\"name\": \"e\", \"kind\": \"tensor\", \"data_ptr\": 16384, \"element_size\": 4,"
	"  \"shape\": [8], \"strides\": [1], \"descriptor\": {\"shape\": [8], \"strides\": [1]}},"
	" {\"name\": \"o\", \"kind\": \"tensor\", \"data_ptr\": 32768, \"element_size\": 2,"
	"  \"shape\": [8], \"strides\": [1], \"descriptor\": {\"shape\": [9], \"strides\": [1]}}]}";

static void desc_check(const struct fp_dbg_run *run, bool store_fired)
{
	struct fp_dbg_findings *fs;
	const struct fp_dbg_finding *f;
	struct fp_diag d;

	ASSERT_OK(fp_dbg_findings_from_launch(run, DESC_LAUNCH, strlen(DESC_LAUNCH), &fs, &d));
	ASSERT_EQ(fp_dbg_findings_count(fs), store_fired ? 2 : 1);
	f = at_line(fs, run, FP_DBG_FINDING_DESCRIPTOR_EXTENT, 4);
	ASSERT_NOT_NULL(f);
	ASSERT_EQ(fp_dbg_run_site(run, f->site)->id, 1); /* the first access through it */
	ASSERT_STREQ(f->param, "h");
	ASSERT(f->param_known);
	ASSERT_STREQ(f->subject, "h");
	ASSERT_EQ(f->where, FP_DBG_OOB_INSIDE_STORAGE);
	ASSERT_UEQ(f->view_lo, 8192);
	ASSERT_UEQ(f->view_hi, 8192 + 64);
	ASSERT_UEQ(f->bytes_past, 32);
	ASSERT_UEQ(f->bytes_before, 0);
	ASSERT_UEQ(f->address, 8192 + 64); /* the first byte outside the view */
	ASSERT_UEQ(f->instance_count, 1);
	ASSERT_EQ(f->nprograms, 1); /* checked at launch: shown at program 0 */
	ASSERT_EQ(f->execution, FP_DBG_EXECUTION_UNKNOWN);
	ASSERT_STREQ(f->message,
		     "the tensor descriptor `h` (shape [6, 4], strides [4, 1]) addresses up to 32 "
		     "bytes past the end of the tensor it was built from (its base, a view of 64 "
		     "bytes): its shape and strides are larger than the tensor, and a TMA load or "
		     "store inside the descriptor's shape is not checked against the tensor, so it "
		     "silently reads or overwrites neighbouring data of the same allocation (first "
		     "address outside 0x2040).");
	if (store_fired) {
		f = at_line(fs, run, FP_DBG_FINDING_OUT_OF_BOUNDS, 5);
		ASSERT_NOT_NULL(f);
		expect_prefix(f, "the descriptor store to `h_desc` writes up to 32 bytes past");
	}
	/* no finding of e (it fits) nor of o (no access goes through it) */
	ASSERT_EQ(fp_dbg_findings_count(fs), store_fired ? 2 : 1);
	fp_dbg_findings_free(fs);
}

TEST(debug_findings_host_descriptors)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	uint64_t shape[2] = {4, 4}, a[16];
	unsigned i;

	/* check mode: no records at all */
	dbgb_init_checks(&b, 0, 1, 3, false, 0, 3, 1, true);
	dbgb_table(&b, 0, 8192, 8192 + 64, 8192, 8192 + 256);
	run = decode(&b, DESC_SITES);
	desc_check(run, false);
	fp_dbg_run_free(run);
	/* the store's box, rows 4-5, past the view: the device's own bounds finding beside it */
	dbgb_fire(&b, 0, 0, 0, 8, 0, 8192 + 64, 8192 + 64, 8192 + 96, 0);
	run = decode(&b, DESC_SITES);
	desc_check(run, true);
	fp_dbg_run_free(run);
	dbgb_free(&b);

	/* marker mode: the load's record is there; the same finding */
	for (i = 0; i < 16; i++)
		a[i] = 8192 + 4 * i;
	dbgb_init_checks(&b, 1, 1, 3, false, 0, 3, 1, false);
	dbgb_table(&b, 0, 8192, 8192 + 64, 8192, 8192 + 256);
	dbgb_addr(&b, 0, 0, 1, FP_DBG_KIND_LOAD, FP_DTYPE_FLOAT32, shape, 2, a, NULL, false);
	run = decode(&b, DESC_SITES);
	desc_check(run, false);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

/*
 * A host descriptor's finding happened at launch, before any program ran: it is reported for
 * program 0, the whole launch, as before the check area came (one program, one instance). The
 * text report must not print an empty program list ("program  (0 programs, 1 instance)").
 */
TEST(debug_findings_host_descriptor_programs)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	struct fp_dbg_launch *l;
	const struct fp_dbg_finding *f;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	dbgb_init_checks(&b, 0, 1, 3, false, 0, 3, 1, false);
	dbgb_table(&b, 0, 8192, 8192 + 64, 8192, 8192 + 256);
	run = decode(&b, DESC_SITES);
	ASSERT_OK(fp_dbg_launch_parse(run, DESC_LAUNCH, strlen(DESC_LAUNCH), &l, NULL));
	ASSERT_OK(fp_dbg_launch_findings(run, l, &fs, NULL));
	ASSERT_EQ(fp_dbg_findings_count(fs), 1);
	f = fp_dbg_findings_at(fs, 0);
	ASSERT_EQ(f->kind, FP_DBG_FINDING_DESCRIPTOR_EXTENT);
	ASSERT_UEQ(f->program, 0);
	out = open_memstream(&buf, &len);
	ASSERT_NOT_NULL(out);
	ASSERT_OK(fp_dbg_write_format(run, l, fs, "txt", out, NULL));
	fclose(out);
	if (strstr(buf, "(0 programs"))
		fprintf(stderr, "%s\n", strstr(buf, "FINDINGS"));
	ASSERT_NULL(strstr(buf, "(0 programs"));
	ASSERT_NOT_NULL(strstr(buf, "     program 0 (1 program, 1 instance)\n"));
	free(buf);
	ASSERT_EQ(f->nprograms, 1);
	ASSERT_UEQ(f->programs[0], 0);
	ASSERT_UEQ(f->program_count, 1);
	fp_dbg_findings_free(fs);
	fp_dbg_launch_free(l);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

/*
 * A bounds slot without a site (the site table gives none): the message names the subject
 * without an access kind, the JSON's site is null and its access the default.
 */
TEST(debug_findings_oob_without_site)
{
	static const char sites[] =
		"{\"version\": 1, \"kernel\": \"k\", \"statements\": ["
		" {\"id\": 0, \"line\": 3, \"source\": \"v = f(p + o)\"}], \"sites\": [],"
		" \"params\": [\"p\"], \"check_slots\": [{\"slot\": 0, \"rule\": \"bounds\","
		" \"statement\": 0, \"subject\": \"p + o\", \"cands\": [\"p\"]}]}";
	static const char lj[] = "{\"output_dir\": \"/tmp\", \"grid\": [2]}";
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_findings *fs;
	struct fp_dbg_launch *l;
	const struct fp_dbg_finding *f;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	dbgb_init_checks(&b, 0, 2, 0, false, 0, 1, 1, false);
	dbgb_table(&b, 0, 0x1000, 0x1100, 0x1000, 0x1100);
	dbgb_fire(&b, 0, 1, 0, 2, 0, 0x1100, 0x1100, 0x1108, 0);
	run = decode(&b, sites);
	ASSERT_OK(fp_dbg_launch_parse(run, lj, strlen(lj), &l, NULL));
	ASSERT_OK(fp_dbg_launch_findings(run, l, &fs, NULL));
	ASSERT_EQ(fp_dbg_findings_count(fs), 1);
	f = fp_dbg_findings_at(fs, 0);
	ASSERT_EQ(f->site, UINT32_MAX);
	ASSERT_STREQ(
		f->message,
		"the access through `p + o` reaches up to 8 bytes past the end of the tensor "
		"`p` (a view of 256 bytes). It leaves every allocation the launch knows of: on "
		"a GPU it reads memory that belongs to something else, or faults (first "
		"offending address 0x1100, 2 active lanes outside the view).");
	out = open_memstream(&buf, &len);
	ASSERT_NOT_NULL(out);
	ASSERT_OK(fp_dbg_write_format(run, l, fs, "json", out, NULL));
	fclose(out);
	ASSERT_NOT_NULL(strstr(buf, "\"site\": null"));
	ASSERT_NOT_NULL(strstr(buf, "\"access\": \"load\""));
	ASSERT_NOT_NULL(strstr(buf, "\"execution\": null"));
	free(buf);
	fp_dbg_findings_free(fs);
	fp_dbg_launch_free(l);
	fp_dbg_run_free(run);
	dbgb_free(&b);
}

/* ---- reports ------------------------------------------------------------------------------- */

/* The JSON report's finding members that the check area adds, and the text's lines. */
TEST(debug_findings_report)
{
	struct dbgb b;
	struct fp_dbg_run *run;
	struct fp_dbg_outputs out;
	struct fp_json_doc *doc;
	const struct fp_json_value *root, *fa, *f, *it;
	char dir[64], lj[2048], *text;
	uint64_t u;
	int64_t i;
	size_t n;

	snprintf(dir, sizeof(dir), "/tmp/fp-test-findings-XXXXXX");
	ASSERT_NOT_NULL(mkdtemp(dir));
	loop_run(&b);
	b.w[10] = 1;                          /* a suppressing run */
	memset(dbgb_check(&b, 1), 0, 32 * 8); /* no nan_mem: four findings */
	run = decode(&b, LOOP_SITES);
	snprintf(lj, sizeof(lj),
		 "{\"output_dir\": \"%s\", \"stem\": \"s\", \"grid\": [%d], \"sanitize\": true,"
		 " \"source_file\": \"/u/k.py\"}",
		 dir, LOOP_P);
	fp_dbg_outputs_init(&out);
	ASSERT_OK(fp_dbg_write_reports(run, lj, strlen(lj), &out, NULL));
	ASSERT_OK(fp_json_parse_file(out.json, NULL, &doc, NULL));
	root = fp_json_root(doc);
	ASSERT_EQ(fp_json_len(fp_json_get(root, "statements")), 0); /* sanitize: findings only */
	fa = fp_json_get(root, "findings");
	ASSERT_EQ(fp_json_len(fa), 4);

	/* the load's bounds finding: execution, iteration, suppressed lanes */
	f = fp_json_at(fa, 0);
	ASSERT_STREQ(fp_json_string(fp_json_get(f, "kind"), NULL), "out_of_bounds");
	ASSERT(fp_json_uint64(fp_json_get(f, "site"), &u) && u == 1);
	ASSERT(fp_json_int64(fp_json_at(fp_json_get(f, "program"), 0), &i) && i == 5);
	ASSERT(fp_json_uint64(fp_json_get(f, "execution"), &u) && u == 2);
	it = fp_json_get(f, "iteration");
	ASSERT(fp_json_type(it) == FP_JSON_OBJECT);
	ASSERT_STREQ(fp_json_string(fp_json_get(it, "var"), NULL), "i");
	ASSERT(fp_json_uint64(fp_json_get(it, "loop_line"), &u) && u == 7);
	ASSERT(fp_json_int64(fp_json_get(it, "value"), &i) && i == 12);
	ASSERT(fp_json_type(fp_json_get(f, "programs_more")) == FP_JSON_FALSE);
	ASSERT(fp_json_uint64(fp_json_get(f, "lanes_out"), &u) && u == 3);
	ASSERT(fp_json_uint64(fp_json_get(f, "suppressed"), &u) && u == 3);
	ASSERT(fp_json_uint64(fp_json_get(f, "instance_count"), &u) && u == 2);
	ASSERT_STREQ(fp_json_string(fp_json_get(f, "access"), NULL), "load");
	ASSERT_STREQ(fp_json_string(fp_json_get(f, "param"), NULL), "p");

	/* the other: more programs than listed, no loop */
	f = fp_json_at(fa, 1);
	ASSERT(fp_json_type(fp_json_get(f, "programs_more")) == FP_JSON_TRUE);
	ASSERT_EQ(fp_json_len(fp_json_get(f, "programs")), 8);
	ASSERT(fp_json_uint64(fp_json_get(f, "program_count"), &u) && u == 8);
	ASSERT(fp_json_type(fp_json_get(f, "iteration")) == FP_JSON_NULL);

	/* the loaded Inf: an origin from memory, no descendants */
	f = fp_json_at(fa, 2);
	ASSERT_STREQ(fp_json_string(fp_json_get(f, "kind"), NULL), "inf_origin");
	ASSERT(fp_json_type(fp_json_get(f, "from_memory")) == FP_JSON_TRUE);
	ASSERT(fp_json_uint64(fp_json_get(f, "descendants"), &u) && u == 0);
	ASSERT(fp_json_uint64(fp_json_get(f, "execution"), &u) && u == 0);

	/* an operand without a site: site and execution null */
	f = fp_json_at(fa, 3);
	ASSERT_STREQ(fp_json_string(fp_json_get(f, "kind"), NULL), "division_by_zero");
	ASSERT(fp_json_type(fp_json_get(f, "site")) == FP_JSON_NULL);
	ASSERT(fp_json_type(fp_json_get(f, "execution")) == FP_JSON_NULL);
	ASSERT(fp_json_int64(fp_json_get(fp_json_get(f, "iteration"), "value"), &i) && i == 4);
	ASSERT_NULL(fp_json_get(f, "descendants")); /* only origins have descendants */
	fp_json_doc_free(doc);

	/* the text report: where the first instance was, and "more than" */
	text = fpt_slurp(out.txt, &n);
	ASSERT_NOT_NULL(strstr(text, "FINDINGS: 4\n"));
	if (!strstr(text, "first: program 5, execution 2, i = 12 (loop at line 7)\n") ||
	    !strstr(text, "programs 12, 13, 14, 15, 16, 17, 18, 19, ... (more than 8 programs, "
			  "12 instances)\n") ||
	    !strstr(text, "first: program 3, i = 4 (loop at line 7)\n") ||
	    !strstr(text, "not performed: the check gave them `other`"))
		fprintf(stderr, "%s\n", text);
	ASSERT_NOT_NULL(strstr(text, "first: program 5, execution 2, i = 12 (loop at line 7)\n"));
	ASSERT_NOT_NULL(strstr(text, "programs 12, 13, 14, 15, 16, 17, 18, 19, ... (more than 8 "
				     "programs, 12 instances)\n"));
	ASSERT_NOT_NULL(strstr(text, "first: program 3, i = 4 (loop at line 7)\n"));
	ASSERT_NOT_NULL(strstr(text, "not performed: the check gave them `other`"));
	free(text);
	fp_dbg_outputs_release(&out);
	fp_dbg_run_free(run);
	dbgb_free(&b);
	snprintf(lj, sizeof(lj), "rm -rf '%s'", dir);
	ASSERT_EQ(system(lj), 0);
}

/* ---- in the whole-program summary ------------------------------------------------------------ */

/* Report `run` as launch `index` (launch JSON test name `test`) into `s`; no files. */
static void summary_add(struct fp_dbg_summary *s, const struct fp_dbg_run *run, uint64_t index,
			const char *test)
{
	struct fp_dbg_outputs out;
	char lj[512];

	snprintf(lj, sizeof(lj),
		 "{\"output_dir\": \"/nonexistent\", \"stem\": \"s\", \"grid\": [2],"
		 " \"sanitize\": true, \"source_file\": \"/u/k.py\", \"kernel\": \"k\","
		 " \"test\": \"%s\"}",
		 test);
	fp_dbg_outputs_init(&out);
	ASSERT_OK(fp_dbg_report(run, lj, strlen(lj), s, index, FP_DBG_REPORT_NO_FILES, &out, NULL,
				NULL));
	fp_dbg_outputs_release(&out);
}

/* The summary as parsed JSON (free the doc). */
static struct fp_json_doc *summary_findings(struct fp_dbg_summary *s)
{
	struct fp_json_doc *doc = NULL;
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);

	ASSERT_NOT_NULL(f);
	ASSERT_OK(fp_dbg_summary_write_format(s, "json", f, NULL));
	ASSERT_EQ(fclose(f), 0);
	ASSERT_OK(fp_json_parse(text, n, NULL, &doc, NULL));
	free(text);
	return doc;
}

static const struct fp_json_value *summary_at_line(const struct fp_json_doc *doc, uint64_t line,
						   const char *needle)
{
	const struct fp_json_value *fs = fp_json_get(fp_json_root(doc), "findings");
	size_t i;
	uint64_t l;

	for (i = 0; i < fp_json_len(fs); i++) {
		const struct fp_json_value *f = fp_json_at(fs, i);

		if (fp_json_uint64(fp_json_get(f, "line"), &l) && l == line &&
		    strstr(fp_json_string(fp_json_get(f, "message"), NULL), needle))
			return f;
	}
	return NULL;
}

/*
 * One access out of bounds in two launches: in launch 1 past the end of x inside its allocation,
 * in launch 2 outside every allocation (x's allocation is only its view there). The summary
 * keeps them apart, each with its own message; and a launch reported after a later one (launches
 * end out of order on several threads) describes the finding: program, message and test all
 * from the earliest launch, never one launch's words under another's number.
 */
TEST(debug_findings_summary_first_launch_and_consequence)
{
	struct dbgb inside, outside;
	struct fp_dbg_run *ri, *ro;
	struct fp_dbg_summary *s;
	struct fp_json_doc *doc;
	const struct fp_json_value *f;
	uint64_t u;

	oob_run(&inside, false);
	oob_run(&outside, false);
	dbgb_table(&outside, 0, 0x1000, 0x1100, 0x1000, 0x1100);
	ri = decode(&inside, OOB_SITES);
	ro = decode(&outside, OOB_SITES);

	/* launch 2 (outside) is reported first, then launch 1 (inside), then launch 0 (outside) */
	ASSERT_OK(fp_dbg_summary_new(&s));
	summary_add(s, ro, 2, "t.py::two");
	summary_add(s, ri, 1, "t.py::one");
	summary_add(s, ro, 0, "t.py::zero");
	doc = summary_findings(s);
	f = summary_at_line(doc, 12, "It stays inside the same allocation");
	ASSERT_NOT_NULL(f);
	ASSERT(fp_json_uint64(fp_json_get(f, "launch"), &u) && u == 1);
	ASSERT(fp_json_uint64(fp_json_get(f, "launches"), &u) && u == 1);
	ASSERT_STREQ(fp_json_string(fp_json_get(f, "test"), NULL), "t.py::one");
	ASSERT_NOT_NULL(summary_at_line(doc, 12, "")); /* and one more at line 12, no other: */
	{
		const struct fp_json_value *fs = fp_json_get(fp_json_root(doc), "findings");
		size_t i, at12 = 0;

		for (i = 0; i < fp_json_len(fs); i++)
			at12 += fp_json_uint64(fp_json_get(fp_json_at(fs, i), "line"), &u) &&
				u == 12;
		ASSERT_EQ(at12, 2);
	}
	f = summary_at_line(doc, 12, "It leaves every allocation the launch knows of");
	ASSERT_NOT_NULL(f);
	ASSERT(fp_json_uint64(fp_json_get(f, "launch"), &u) && u == 0);
	ASSERT(fp_json_uint64(fp_json_get(f, "launches"), &u) && u == 2);
	ASSERT(fp_json_uint64(fp_json_get(f, "program"), &u) && u == 0);
	ASSERT_STREQ(fp_json_string(fp_json_get(f, "test"), NULL), "t.py::zero");
	fp_json_doc_free(doc);
	fp_dbg_summary_free(s);
	fp_dbg_run_free(ri);
	fp_dbg_run_free(ro);
	dbgb_free(&inside);
	dbgb_free(&outside);
}

/* ---- out of memory ------------------------------------------------------------------------- */

struct oom_case {
	struct dbgb *b;
	const char *sites;
	const char *launch; /* NULL: fp_dbg_findings_new() without arguments */
};

static int oom_scenario(void *arg)
{
	const struct oom_case *c = arg;
	struct fp_dbg_run *run = NULL;
	struct fp_dbg_findings *fs = NULL;
	int st;

	st = fp_dbg_decode(c->b->w, dbgb_bytes(c->b), c->sites, strlen(c->sites), &run, NULL);
	if (st)
		return st;
	if (c->launch)
		st = fp_dbg_findings_from_launch(run, c->launch, strlen(c->launch), &fs, NULL);
	else
		st = fp_dbg_findings_new(run, NULL, 0, &fs, NULL);
	if (!st && !fp_dbg_findings_count(fs))
		st = FP_EINVAL; /* every scenario has findings: the clean run must find them */
	fp_dbg_findings_free(fs);
	fp_dbg_run_free(run);
	return st;
}

/* Decode + findings with a check area, each allocation failing in turn. */
TEST(debug_findings_oom)
{
	struct dbgb b1, b2, b3, b4, b5;
	struct oom_case cases[5] = {
		{&b1, OOB_SITES, NULL},  {&b2, ORIGIN_SITES, NULL},      {&b3, RULE_SITES, NULL},
		{&b4, LOOP_SITES, NULL}, {&b5, DESC_SITES, DESC_LAUNCH},
	};
	size_t i;

	oob_run(&b1, true);
	dbgb_init_checks(&b2, 0, 3, 9, false, 0, 2, ORIGIN_NC, false);
	origin_tables(&b2);
	dbgb_fire_value(&b2, 3, 1, 0, 1, 1, NAN, 0);
	dbgb_fire_value(&b2, 0, 0, 0, 1, 0, NAN, 0);
	dbgb_fire_value(&b2, 4, 2, 0, 2, 3, INFINITY, 0);
	dbgb_descend(&b2, 5, 1);
	rule_run(&b3);
	loop_run(&b4);
	dbgb_init_checks(&b5, 0, 1, 3, false, 0, 3, 1, false);
	dbgb_table(&b5, 0, 8192, 8192 + 64, 8192, 8192 + 256);
	dbgb_fire(&b5, 0, 0, 0, 8, 0, 8192 + 64, 8192 + 64, 8192 + 96, 0);
	for (i = 0; i < 5; i++)
		ASSERT_GT(fpt_oom_sweep(oom_scenario, &cases[i], 0, 5, NULL), 5);
	dbgb_free(&b1);
	dbgb_free(&b2);
	dbgb_free(&b3);
	dbgb_free(&b4);
	dbgb_free(&b5);
}
