/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the record buffer's layout (src/debug/layout.c): record slots per program from
 * the sites' needs, a capacity, or nothing in check mode; the dump arena's default, cap and
 * floor; the check area; overflow refused; the header words, checked by decoding a buffer made
 * from them; the tensor-table entry of a view and its storage.
 */
#include <stdlib.h>
#include <string.h>

#include <flagprism/debug.h>

#include "test-debug.h"
#include "test.h"

static struct fp_dbg_buffer_spec spec_of(int64_t programs, int64_t rpp)
{
	struct fp_dbg_buffer_spec s;

	memset(&s, 0, sizeof(s));
	s.programs = programs;
	s.records_per_program = rpp;
	s.record_capacity = -1;
	s.dump_capacity = -1;
	s.nsites = 3;
	s.records = true;
	return s;
}

TEST(debug_layout_slots)
{
	struct fp_dbg_buffer_spec s = spec_of(4, 10);
	struct fp_dbg_buffer_layout l;

	ASSERT_OK(fp_dbg_buffer_layout(&s, &l));
	ASSERT_EQ(l.slots, 10);
	ASSERT_EQ(l.arena_words, 0);
	ASSERT_EQ(l.prefix_words, FP_DBG_HEADER_WORDS);
	ASSERT_EQ(l.total_words, 8 + 4 * 10 * 8);
	ASSERT_EQ(l.host_words, FP_DBG_HEADER_WORDS);
	/* the default cap: FP_DBG_MAX_RECORD_BYTES shared by the programs */
	s.programs = 1 << 20;
	s.records_per_program = 1 << 20;
	ASSERT_OK(fp_dbg_buffer_layout(&s, &l));
	ASSERT_EQ(l.slots, FP_DBG_MAX_RECORD_BYTES / (64 * (1 << 20)));
	/* a capacity (records) shared by the programs, whatever the sites need */
	s = spec_of(4, 10);
	s.record_capacity = 7;
	ASSERT_OK(fp_dbg_buffer_layout(&s, &l));
	ASSERT_EQ(l.slots, 1);
	s.record_capacity = 3;
	ASSERT_OK(fp_dbg_buffer_layout(&s, &l));
	ASSERT_EQ(l.slots, 0);
	/* no programs: one program's share */
	s = spec_of(0, 5);
	ASSERT_OK(fp_dbg_buffer_layout(&s, &l));
	ASSERT_EQ(l.slots, 5);
	ASSERT_EQ(l.total_words, 8);
	/* check mode: no record slots, whatever the capacity */
	s = spec_of(4, 10);
	s.records = false;
	s.record_capacity = 1000;
	ASSERT_OK(fp_dbg_buffer_layout(&s, &l));
	ASSERT_EQ(l.slots, 0);
}

TEST(debug_layout_arena)
{
	struct fp_dbg_buffer_spec s = spec_of(2, 4);
	struct fp_dbg_buffer_layout l;

	s.dumps = true;
	s.dump_records_per_program = 3;
	ASSERT_OK(fp_dbg_buffer_layout(&s, &l));
	ASSERT_EQ(l.arena_words, 2 * 3 * FP_DBG_DUMP_WORDS_PER_RECORD);
	ASSERT_EQ(l.total_words, 8 + 2 * 4 * 8 + l.arena_words);
	s.dump_records_per_program = 0; /* a dumping twin has at least one word */
	ASSERT_OK(fp_dbg_buffer_layout(&s, &l));
	ASSERT_EQ(l.arena_words, 1);
	s.programs = INT64_C(1) << 40; /* capped, also where the product overflows */
	s.dump_records_per_program = INT64_C(1) << 40;
	s.records_per_program = 0;
	ASSERT_OK(fp_dbg_buffer_layout(&s, &l));
	ASSERT_EQ(l.arena_words, FP_DBG_MAX_DUMP_WORDS);
	s = spec_of(2, 4);
	s.dumps = true;
	s.dump_capacity = 0; /* asked for: none, and the decoder counts what did not fit */
	ASSERT_OK(fp_dbg_buffer_layout(&s, &l));
	ASSERT_EQ(l.arena_words, 0);
	s.dump_capacity = 12345;
	ASSERT_OK(fp_dbg_buffer_layout(&s, &l));
	ASSERT_EQ(l.arena_words, 12345);
	s.dumps = false; /* a twin that does not dump has no arena */
	ASSERT_OK(fp_dbg_buffer_layout(&s, &l));
	ASSERT_EQ(l.arena_words, 0);
}

TEST(debug_layout_check_area)
{
	struct fp_dbg_buffer_spec s = spec_of(3, 2);
	struct fp_dbg_buffer_layout l;
	int64_t w[64];

	s.nparams = 5;
	s.nchecks = 2;
	s.suppress = true;
	ASSERT_OK(fp_dbg_buffer_layout(&s, &l));
	ASSERT_EQ(l.prefix_words, 16 + 4 * 5 + 32 * 2);
	ASSERT_EQ(l.host_words, 16 + 4 * 5);
	ASSERT_EQ(l.total_words, l.prefix_words + 3 * 2 * 8);
	memset(w, 0x5a, sizeof(w));
	ASSERT_OK(fp_dbg_buffer_header(&s, &l, w, 64));
	ASSERT_UEQ((uint64_t)w[0], FP_DBG_MAGIC);
	ASSERT_UEQ((uint64_t)w[1], FP_DBG_FORMAT_VERSION | (8u << 16) | (UINT64_C(8) << 32) |
					   ((uint64_t)FP_DBG_FLAG_CHECKS << 48));
	ASSERT_EQ(w[2], 2);
	ASSERT_EQ(w[3], 3);
	ASSERT_EQ(w[4] | w[5] | w[6], 0);
	ASSERT_EQ(w[7], 3);
	ASSERT_EQ(w[8], 5);
	ASSERT_EQ(w[9], 2);
	ASSERT_EQ(w[10], 1);
	ASSERT_EQ(w[11], l.prefix_words);
	for (int i = 12; i < 36; i++)
		ASSERT_EQ(w[i], 0);
	ASSERT_EQ(w[36], 0x5a5a5a5a5a5a5a5a); /* nothing past host_words */
	ASSERT_EQ(fp_dbg_buffer_header(&s, &l, w, (size_t)l.host_words - 1), FP_ELIMIT);
	/* a dumping twin says so in the flags, with or without an arena */
	s = spec_of(1, 1);
	s.dumps = true;
	s.dump_capacity = 0;
	ASSERT_OK(fp_dbg_buffer_layout(&s, &l));
	ASSERT_OK(fp_dbg_buffer_header(&s, &l, w, 64));
	ASSERT_UEQ((uint64_t)w[1] >> 48, FP_DBG_FLAG_DUMP_ARENA);
}

/* A buffer made from the header words (and zeros) decodes with the fixture's site table: no
 * records, nothing lost; with checks, the check area is where the decoder looks for it. */
static void decode_empty(struct fp_dbg_buffer_spec *s, const char *sites)
{
	struct fp_dbg_buffer_layout l;
	struct fp_dbg_run *run = NULL;
	int64_t *buf;

	ASSERT_OK(fp_dbg_buffer_layout(s, &l));
	buf = calloc((size_t)l.total_words, 8);
	ASSERT_NOT_NULL(buf);
	ASSERT_OK(fp_dbg_buffer_header(s, &l, buf, (size_t)l.total_words));
	ASSERT_OK(fp_dbg_decode(buf, (size_t)l.total_words * 8, sites, strlen(sites), &run, NULL));
	ASSERT_EQ(fp_dbg_run_info(run)->programs, s->programs);
	fp_dbg_run_free(run);
	free(buf);
}

TEST(debug_layout_decodes)
{
	struct fp_dbg_buffer_spec s = spec_of(DBGB_NP, DBGB_NS);

	s.nsites = 4;
	decode_empty(&s, DBGB_SITES);
	s.nparams = 4;
	s.nchecks = 4;
	decode_empty(&s, DBGB_SITES_CHECKS);
	s.records = false; /* check mode */
	decode_empty(&s, DBGB_SITES_CHECKS);
}

TEST(debug_layout_refuses)
{
	struct fp_dbg_buffer_spec s = spec_of(4, 1);
	struct fp_dbg_buffer_layout l;

	ASSERT_EQ(fp_dbg_buffer_layout(NULL, &l), FP_EINVAL);
	ASSERT_EQ(fp_dbg_buffer_layout(&s, NULL), FP_EINVAL);
	s.programs = -1;
	ASSERT_EQ(fp_dbg_buffer_layout(&s, &l), FP_EINVAL);
	s = spec_of(4, -1);
	ASSERT_EQ(fp_dbg_buffer_layout(&s, &l), FP_EINVAL);
	s = spec_of(4, 1);
	s.nchecks = 1;
	s.nparams = FP_DBG_MAX_PARAMS + 1;
	ASSERT_EQ(fp_dbg_buffer_layout(&s, &l), FP_EINVAL);
	s.nparams = 1;
	s.nchecks = FP_DBG_MAX_CHECKS + 1;
	ASSERT_EQ(fp_dbg_buffer_layout(&s, &l), FP_EINVAL);
	/* more than 2^63 bytes: refused, not wrapped */
	s = spec_of(INT64_C(1) << 40, 1);
	s.record_capacity = INT64_MAX;
	ASSERT_EQ(fp_dbg_buffer_layout(&s, &l), FP_ELIMIT);
	ASSERT_EQ(fp_dbg_buffer_header(NULL, &l, NULL, 0), FP_EINVAL);
}

TEST(debug_layout_table_entry)
{
	int64_t shape[2] = {4, 8}, strides[2] = {16, 1}, neg[2] = {8, -1};
	uint64_t e[4];

	/* a 4x8 view of rows 16 apart, 4-byte elements, in a storage of 1 KiB */
	ASSERT_OK(fp_dbg_table_entry(0x1000, 4, 2, shape, strides, true, 0xf00, 1024, e));
	ASSERT_UEQ(e[0], 0x1000);
	ASSERT_UEQ(e[1], 0x1000 + (3 * 16 + 7 + 1) * 4);
	ASSERT_UEQ(e[2], 0xf00);
	ASSERT_UEQ(e[3], 0xf00 + 1024);
	/* no storage: the view stands for it; so does a storage past 2^64 */
	ASSERT_OK(fp_dbg_table_entry(0x1000, 4, 2, shape, strides, false, 0, 0, e));
	ASSERT_UEQ(e[2], e[0]);
	ASSERT_UEQ(e[3], e[1]);
	ASSERT_OK(fp_dbg_table_entry(0x1000, 4, 2, shape, strides, true, UINT64_MAX - 4, 64, e));
	ASSERT_UEQ(e[2], e[0]);
	/* a negative stride reaches below data_ptr */
	ASSERT_OK(fp_dbg_table_entry(0x1000, 2, 1, neg + 0, neg + 1, true, 0x1000 - 14, 16, e));
	ASSERT_UEQ(e[0], 0x1000 - 14);
	ASSERT_UEQ(e[1], 0x1002);
	/* what fp_dbg_arg_set_view refuses leaves a zero entry */
	e[0] = 7;
	ASSERT_EQ(fp_dbg_table_entry(0x1000, 0, 2, shape, strides, true, 0, 0, e), FP_EINVAL);
	ASSERT_UEQ(e[0] | e[1] | e[2] | e[3], 0);
	ASSERT_EQ(fp_dbg_table_entry(0, 4, 0, NULL, NULL, false, 0, 0, NULL), FP_EINVAL);
}
