/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for intra-kernel timelines: the buffer decoder on buffers recorded on the Triton
 * interpreter (tests/data/timeline/) and on synthetic NVIDIA- and AMD-clock buffers (AMD ticks
 * converted to ns with the header's rate), its positioned
 * rejections and OOM sweep, the intake into a session's call tree, the trace slices aligned to
 * the kernel's event, the metadata counters and the viewer's section. */
#define _GNU_SOURCE 1
#include <stdlib.h>
#include <unistd.h>

#include <flagprism/alloc.h>
#include <flagprism/backend.h>
#include <flagprism/calltree.h>
#include <flagprism/prof.h>
#include <flagprism/strbuf.h>
#include <flagprism/timeline.h>

#include "test.h"

static int read_data(const char *name, struct fp_strbuf *sb)
{
	fp_strbuf_init(sb, 0);
	return fp_strbuf_read_file(sb, fpt_data_path(name), NULL);
}

/* A synthetic buffer on the NVIDIA clock. */
struct buf {
	uint64_t w[4096];
	size_t n;
	uint64_t S, P;
};

static void buf_init(struct buf *b, uint64_t S, uint64_t P, uint64_t nscopes)
{
	memset(b, 0, sizeof(*b));
	b->S = S;
	b->P = P;
	b->w[0] = FP_TIMELINE_MAGIC;
	b->w[1] = FP_TIMELINE_VERSION | (FP_TIMELINE_CLOCK_NVIDIA << 8) |
		  (FP_TIMELINE_RECORD_WORDS << 16);
	b->w[2] = S;
	b->w[3] = P;
	b->w[4] = nscopes;
	b->n = 8 + P * (1 + 4 * S);
}

static void buf_rec(struct buf *b, uint64_t p, uint32_t scope, uint32_t kind, uint32_t sm,
		    uint64_t t, uint64_t cyc)
{
	uint64_t base = 8 + p * (1 + 4 * b->S), n = b->w[base];

	if (n < b->S) {
		uint64_t *r = &b->w[base + 1 + 4 * n];

		r[0] = scope | ((uint64_t)kind << 16) | ((uint64_t)sm << 32);
		r[1] = t;
		r[2] = cyc;
	}
	b->w[base] = n + 1;
}

/* Switch a buffer to the AMD clock: its times become s_memrealtime ticks at `khz` kHz. */
static void buf_amd(struct buf *b, uint64_t khz)
{
	b->w[1] = FP_TIMELINE_VERSION | (FP_TIMELINE_CLOCK_AMD << 8) |
		  (FP_TIMELINE_RECORD_WORDS << 16);
	b->w[5] = khz;
}

/* Two programs on SMs 3 and 5: scope 1 "load" [t, t+300] with scope 2 "inner" inside it
 * [t+100, t+150], then scope 3 "math" [t+400, t+500]; program 1 twice as slow. */
static void two_programs(struct buf *b, uint64_t t0)
{
	uint64_t p;

	buf_init(b, 8, 2, 3);
	for (p = 0; p < 2; p++) {
		uint64_t t = t0 + p * 7, k = p + 1;
		uint32_t sm = p ? 5 : 3;

		buf_rec(b, p, 0, FP_TIMELINE_BEGIN, sm, t, 1000);
		buf_rec(b, p, 1, FP_TIMELINE_ENTER, sm, t, 1000);
		buf_rec(b, p, 2, FP_TIMELINE_ENTER, sm, t + 100 * k, 1000 + 200 * k);
		buf_rec(b, p, 2, FP_TIMELINE_EXIT, sm, t + 150 * k, 1000 + 300 * k);
		buf_rec(b, p, 1, FP_TIMELINE_EXIT, sm, t + 300 * k, 1000 + 600 * k);
		buf_rec(b, p, 3, FP_TIMELINE_ENTER, sm, t + 400 * k, 1000 + 800 * k);
		buf_rec(b, p, 3, FP_TIMELINE_EXIT, sm, t + 500 * k, 1000 + 1000 * k);
	}
}

TEST(timeline_decode_recorded_interpreter_buffer)
{
	struct fp_timeline_scope_stats st;
	const struct fp_timeline_interval *iv;
	const struct fp_timeline_info *in;
	struct fp_timeline *t = NULL;
	struct fp_strbuf sb;
	size_t n, i;

	ASSERT_OK(read_data("timeline/k3-host.bin", &sb));
	ASSERT_OK(fp_timeline_decode(sb.buf, sb.len, &t, NULL));
	in = fp_timeline_get_info(t);
	ASSERT_EQ(in->clock, FP_TIMELINE_CLOCK_HOST);
	ASSERT_EQ(in->programs, 2);
	ASSERT_EQ(in->nscopes, 3);
	ASSERT_EQ(in->overflow, 0);
	ASSERT_EQ(in->unclosed + in->truncated + in->missing, 0);
	/* per program: begin + loads + 3 x one_load + math + end = 1 + 2 + 6 + 2 + 1 records */
	ASSERT_EQ(in->records, 24);
	n = fp_timeline_intervals(t, &iv);
	ASSERT_EQ(n, 10);
	for (i = 0; i < n; i++) {
		ASSERT(iv[i].end_ns >= iv[i].begin_ns);
		ASSERT(iv[i].begin_ns >= in->t_min && iv[i].end_ns <= in->t_max);
		if (iv[i].scope == 2) {
			ASSERT_EQ(iv[i].parent, 1);
			ASSERT_EQ(iv[i].depth, 1);
		}
	}
	ASSERT_OK(fp_timeline_scope_stats(t, 1, &st));
	ASSERT_EQ(st.intervals, 2);
	ASSERT_EQ(st.programs, 2);
	ASSERT_EQ(st.parent, 0);
	ASSERT_OK(fp_timeline_scope_stats(t, 2, &st));
	ASSERT_EQ(st.intervals, 6);
	ASSERT_EQ(st.parent, 1);
	ASSERT(st.time_min <= st.time_max);
	ASSERT(st.time_sum >= st.time_min * 2);
	ASSERT_OK(fp_timeline_scope_stats(t, 3, &st));
	ASSERT_EQ(st.intervals, 2);
	ASSERT_EQ(fp_timeline_scope_stats(t, 4, &st), FP_EINVAL);
	ASSERT_EQ(fp_timeline_scope_stats(t, 0, &st), FP_EINVAL);
	fp_timeline_free(t);
	fp_strbuf_release(&sb);
}

TEST(timeline_decode_recorded_overflow_is_counted)
{
	const struct fp_timeline_info *in;
	struct fp_timeline *t = NULL;
	struct fp_strbuf sb;

	ASSERT_OK(read_data("timeline/k3-host-overflow.bin", &sb));
	ASSERT_OK(fp_timeline_decode(sb.buf, sb.len, &t, NULL));
	in = fp_timeline_get_info(t);
	ASSERT_EQ(in->slots, 4);
	/* each program wanted 12 records and kept 4 */
	ASSERT_EQ(in->overflow, 16);
	ASSERT_EQ(in->overflowed_programs, 2);
	ASSERT_EQ(in->truncated, 2); /* "loads" left open in both */
	ASSERT_EQ(in->unclosed, 0);
	ASSERT_EQ(fp_timeline_intervals(t, NULL), 2);
	fp_timeline_free(t);
	fp_strbuf_release(&sb);
}

TEST(timeline_decode_synthetic_stats)
{
	struct fp_timeline_scope_stats st;
	const struct fp_timeline_interval *iv;
	struct fp_timeline *t = NULL;
	struct buf b;
	size_t n;

	two_programs(&b, 1000000);
	ASSERT_OK(fp_timeline_decode(b.w, b.n * 8, &t, NULL));
	ASSERT_EQ(fp_timeline_get_info(t)->clock, FP_TIMELINE_CLOCK_NVIDIA);
	ASSERT_EQ(fp_timeline_get_info(t)->t_min, 1000000);
	ASSERT_NEAR(fp_timeline_get_info(t)->span_sum, 500 + 1000, 0);
	n = fp_timeline_intervals(t, &iv);
	ASSERT_EQ(n, 6);
	/* program 0: inner closes first */
	ASSERT_EQ(iv[0].scope, 2);
	ASSERT_EQ(iv[0].smid, 3);
	ASSERT_EQ(iv[0].cycles, 100);
	ASSERT_EQ(iv[5].program, 1);
	ASSERT_EQ(iv[5].smid, 5);
	ASSERT_OK(fp_timeline_scope_stats(t, 1, &st));
	ASSERT_NEAR(st.time_min, 300, 0);
	ASSERT_NEAR(st.time_max, 600, 0);
	ASSERT_NEAR(st.time_sum, 900, 0);
	ASSERT_NEAR(st.cycles_min, 600, 0);
	ASSERT_NEAR(st.cycles_max, 1200, 0);
	ASSERT_OK(fp_timeline_scope_stats(t, 2, &st));
	ASSERT_EQ(st.parent, 1);
	ASSERT_NEAR(st.time_sum, 50 + 100, 0);
	fp_timeline_free(t);

	/* an end record extends each program's span; it is not an interval */
	buf_rec(&b, 0, 0, FP_TIMELINE_END, 3, 1000000 + 900, 0);
	buf_rec(&b, 1, 0, FP_TIMELINE_END, 5, 1000007 + 1800, 0);
	ASSERT_OK(fp_timeline_decode(b.w, b.n * 8, &t, NULL));
	ASSERT_NEAR(fp_timeline_get_info(t)->span_sum, 900 + 1800, 0);
	ASSERT_EQ(fp_timeline_intervals(t, NULL), 6);
	fp_timeline_free(t);
	/* an end record naming a scope is corrupt */
	b.w[8 + 1 + 4 * 7] |= 1;
	ASSERT_EQ(fp_timeline_decode(b.w, b.n * 8, &t, NULL), FP_EFORMAT);
}

TEST(timeline_decode_rejections_name_the_place)
{
	struct fp_timeline *t = NULL;
	struct fp_diag d;
	struct buf b;

	two_programs(&b, 5000);
	fp_diag_clear(&d);
	ASSERT_EQ(fp_timeline_decode(b.w, b.n * 8 - 8, &t, &d), FP_EFORMAT);
	ASSERT_EQ(d.offset, 24);
	ASSERT_NULL(t);

	b.w[0] ^= 1;
	ASSERT_EQ(fp_timeline_decode(b.w, b.n * 8, &t, &d), FP_EFORMAT);
	ASSERT_EQ(d.offset, 0);
	b.w[0] ^= 1;

	b.w[1] = 2 | (1 << 8) | (4 << 16);
	ASSERT_EQ(fp_timeline_decode(b.w, b.n * 8, &t, &d), FP_EVERSION);
	two_programs(&b, 5000);

	/* program 1's exit of scope 2 turned into an exit of scope 1 while 2 is open */
	{
		size_t base = 8 + 1 * (1 + 4 * 8), rec = base + 1 + 4 * 3;

		b.w[rec] = 1 | (1u << 16) | ((uint64_t)5 << 32);
		ASSERT_EQ(fp_timeline_decode(b.w, b.n * 8, &t, &d), FP_EFORMAT);
		ASSERT_EQ(d.offset, rec * 8);
		ASSERT(strstr(d.msg, "program 1 record 3") != NULL);
		ASSERT(strstr(d.msg, "does not match the open scope 2") != NULL);
		/* a scope id beyond the table */
		b.w[rec] = 9 | (1u << 16);
		ASSERT_EQ(fp_timeline_decode(b.w, b.n * 8, &t, &d), FP_EFORMAT);
		ASSERT(strstr(d.msg, "bad tag") != NULL);
		/* an unknown kind */
		b.w[rec] = 2 | (7u << 16);
		ASSERT_EQ(fp_timeline_decode(b.w, b.n * 8, &t, &d), FP_EFORMAT);
		/* no begin record first */
		two_programs(&b, 5000);
		b.w[base + 1] = 1;
		ASSERT_EQ(fp_timeline_decode(b.w, b.n * 8, &t, &d), FP_EFORMAT);
		ASSERT_EQ(d.offset, (base + 1) * 8);
	}
	/* sizes that do not match the length */
	two_programs(&b, 5000);
	b.w[2] = UINT64_MAX;
	ASSERT_EQ(fp_timeline_decode(b.w, b.n * 8, &t, &d), FP_EFORMAT);
	ASSERT_EQ(d.offset, 16);
	two_programs(&b, 5000);
	b.w[3] = 3;
	ASSERT_EQ(fp_timeline_decode(b.w, b.n * 8, &t, &d), FP_EFORMAT);
	ASSERT_EQ(fp_timeline_decode(b.w, 12, &t, &d), FP_EFORMAT);
	ASSERT_EQ(fp_timeline_decode(NULL, 0, &t, &d), FP_EFORMAT);
	ASSERT_NULL(t);
}

TEST(timeline_decode_every_truncation_and_bitflip_is_safe)
{
	struct fp_timeline *t;
	struct fp_strbuf sb;
	size_t len, i;

	ASSERT_OK(read_data("timeline/k3-host.bin", &sb));
	for (len = 0; len < sb.len; len++) {
		t = NULL;
		ASSERT_EQ(fp_timeline_decode(sb.buf, len, &t, NULL), FP_EFORMAT);
		ASSERT_NULL(t);
	}
	for (i = 0; i < sb.len * 8; i++) {
		int rc;

		sb.buf[i / 8] ^= (char)(1u << (i % 8));
		t = NULL;
		rc = fp_timeline_decode(sb.buf, sb.len, &t, NULL);
		ASSERT(rc == FP_OK || rc == FP_EFORMAT || rc == FP_EVERSION);
		fp_timeline_free(t);
		sb.buf[i / 8] ^= (char)(1u << (i % 8));
	}
	fp_strbuf_release(&sb);
}

TEST(timeline_decode_oom_sweep)
{
	struct fp_timeline *t;
	struct buf b;
	long fail_at;
	int rc;

	two_programs(&b, 42);
	for (fail_at = 0;; fail_at++) {
		t = NULL;
		fpt_oom_install(fail_at);
		rc = fp_timeline_decode(b.w, b.n * 8, &t, NULL);
		fp_timeline_free(t);
		fpt_oom_uninstall();
		if (rc == FP_OK)
			break;
		ASSERT_EQ(rc, FP_ENOMEM);
		ASSERT_NULL(t);
		ASSERT_EQ(fpt_oom_live(), 0);
	}
	ASSERT(fail_at > 0);
}

TEST(timeline_decode_amd_ticks_become_ns)
{
	struct fp_timeline_scope_stats st;
	const struct fp_timeline_interval *iv;
	const struct fp_timeline_info *in;
	struct fp_timeline *t = NULL;
	struct fp_diag d;
	struct buf b;
	size_t n;

	/* gfx942: 100 MHz, 10 ns per tick; the same records as the NVIDIA test, in ticks */
	two_programs(&b, 1000000);
	buf_amd(&b, 100000);
	ASSERT_OK(fp_timeline_decode(b.w, b.n * 8, &t, NULL));
	in = fp_timeline_get_info(t);
	ASSERT_EQ(in->clock, FP_TIMELINE_CLOCK_AMD);
	ASSERT_EQ(in->tick_khz, 100000);
	ASSERT_EQ(in->t_min, 10000000);
	ASSERT_EQ(in->t_max, 10000000 + 10 * (7 + 1000));
	ASSERT_NEAR(in->span_sum, 10 * (500 + 1000), 0);
	n = fp_timeline_intervals(t, &iv);
	ASSERT_EQ(n, 6);
	ASSERT_EQ(iv[0].scope, 2);
	ASSERT_EQ(iv[0].begin_ns, 10 * (1000000 + 100));
	ASSERT_EQ(iv[0].end_ns, 10 * (1000000 + 150));
	ASSERT_EQ(iv[0].smid, 3);
	ASSERT_EQ(iv[0].cycles, 100); /* s_memtime cycles are not converted */
	ASSERT_EQ(iv[5].smid, 5);
	ASSERT_OK(fp_timeline_scope_stats(t, 1, &st));
	ASSERT_NEAR(st.time_min, 3000, 0);
	ASSERT_NEAR(st.time_max, 6000, 0);
	ASSERT_NEAR(st.cycles_sum, 600 + 1200, 0);
	fp_timeline_free(t);
	t = NULL;

	/* gfx90a: 25 MHz, 40 ns per tick */
	buf_amd(&b, 25000);
	ASSERT_OK(fp_timeline_decode(b.w, b.n * 8, &t, NULL));
	ASSERT_EQ(fp_timeline_get_info(t)->t_min, 40000000);
	ASSERT_OK(fp_timeline_scope_stats(t, 3, &st));
	ASSERT_NEAR(st.time_sum, 40 * (100 + 200), 0);
	fp_timeline_free(t);
	t = NULL;

	/* a rate that does not divide 1 ms: ns rounded down, exactly, from the tick count */
	two_programs(&b, 0);
	buf_amd(&b, 3);
	ASSERT_OK(fp_timeline_decode(b.w, b.n * 8, &t, NULL));
	n = fp_timeline_intervals(t, &iv);
	ASSERT_EQ(iv[0].begin_ns, 33333333); /* 100 ticks at 3 kHz */
	ASSERT_EQ(iv[0].end_ns, 50000000);   /* 150 */
	ASSERT_EQ(iv[5].end_ns, 335666666);  /* 7 + 1000 */
	fp_timeline_free(t);
	t = NULL;

	/* the rate must be there and plausible: the offset is header word 5's */
	two_programs(&b, 1000);
	buf_amd(&b, 0);
	fp_diag_clear(&d);
	ASSERT_EQ(fp_timeline_decode(b.w, b.n * 8, &t, &d), FP_EFORMAT);
	ASSERT_EQ(d.offset, 40);
	ASSERT(strstr(d.msg, "AMD timeline clock rate") != NULL);
	buf_amd(&b, FP_TIMELINE_MAX_TICK_KHZ + 1);
	ASSERT_EQ(fp_timeline_decode(b.w, b.n * 8, &t, &d), FP_EFORMAT);
	ASSERT_EQ(d.offset, 40);
	buf_amd(&b, FP_TIMELINE_MAX_TICK_KHZ);
	ASSERT_OK(fp_timeline_decode(b.w, b.n * 8, &t, NULL));
	fp_timeline_free(t);
	t = NULL;
	/* on other clocks word 5 is not read */
	two_programs(&b, 1000);
	b.w[5] = 7;
	ASSERT_OK(fp_timeline_decode(b.w, b.n * 8, &t, NULL));
	ASSERT_EQ(fp_timeline_get_info(t)->tick_khz, 0);
	ASSERT_EQ(fp_timeline_get_info(t)->t_min, 1000);
	fp_timeline_free(t);
	t = NULL;

	/* a tick count whose ns do not fit in 64 bits is refused at its time word */
	two_programs(&b, 1000);
	buf_amd(&b, 100000);
	{
		size_t rec = 8 + 1 * (1 + 4 * 8) + 1 + 4 * 2;

		b.w[rec + 1] = UINT64_MAX / 10 + 1;
		ASSERT_EQ(fp_timeline_decode(b.w, b.n * 8, &t, &d), FP_EFORMAT);
		ASSERT_NULL(t);
		ASSERT_EQ(d.offset, (rec + 1) * 8);
		ASSERT(strstr(d.msg, "program 1 record 2") != NULL);
		/* the largest that fits */
		b.w[rec + 1] = UINT64_MAX / 10;
		b.w[rec + 5] = UINT64_MAX / 10;
		ASSERT_OK(fp_timeline_decode(b.w, b.n * 8, &t, NULL));
		ASSERT_EQ(fp_timeline_get_info(t)->t_max, UINT64_MAX / 10 * 10);
		fp_timeline_free(t);
	}
}

/* ---- sessions -------------------------------------------------------------------------------- */

static const struct fp_prof_tl_scope scopes3[] = {
	{"load", 4, 0},
	{"inner", 5, FP_PROF_TL_PIPELINED},
	{"math", 4, 0},
};

static double metric_of(struct fp_calltree *tree, uint32_t node, const char *name)
{
	struct fp_calltree_value v;
	uint32_t m;

	ASSERT_OK(fp_calltree_metric_find(tree, name, strlen(name), &m));
	ASSERT_OK(fp_calltree_get(tree, node, m, &v));
	return v.self;
}

static uint32_t child(struct fp_calltree *tree, uint32_t parent, const char *name)
{
	uint32_t frame, node;

	ASSERT_OK(fp_calltree_intern(tree, name, strlen(name), &frame));
	ASSERT_OK(fp_calltree_child_find(tree, parent, frame, &node));
	return node;
}

/* A trace session `name` on the host backend with one 2-program launch of "kern" (*l) whose
 * kernel event runs [begin, begin + dur); its id in *sid. */
static void kern_session(const char *name, uint64_t begin, uint64_t dur, struct fp_sink_launch *l,
			 int *sid)
{
	struct fp_prof_options o = {0};

	o.name = fpt_tmp_path(name);
	o.data = FP_PROF_DATA_TRACE;
	o.backend = "host";
	ASSERT_OK(fp_prof_start(&o, sid, NULL));
	memset(l, 0, sizeof(*l));
	ASSERT_OK(fp_prof_name_intern("kern", 4, &l->kernel));
	l->callpath = FP_PROF_NO_CALLPATH;
	l->grid[0] = 2;
	l->grid[1] = l->grid[2] = 1;
	ASSERT_OK(fp_host_launch(*sid, l, begin, begin + dur));
}

TEST(timeline_session_tree_trace_and_meta)
{
	struct fp_sink_launch l;
	struct fp_calltree *tree;
	struct fp_timeline *t = NULL;
	struct fp_strbuf trace, meta;
	char *text = NULL;
	size_t text_len = 0;
	uint32_t k, load, inner, math;
	uint64_t now = fp_prof_clock_ns(), kbegin = now + 2000000;
	const char *p, *q;
	char path[300];
	FILE *f;
	struct buf b;
	int sid;

	/* the kernel's event (host backend), then its timeline: device clock far from the host's */
	kern_session("tl", kbegin, 5000, &l, &sid);
	two_programs(&b, 777000000000ull);
	ASSERT_OK(fp_timeline_decode(b.w, b.n * 8, &t, NULL));
	ASSERT_EQ(fp_prof_timeline_add(sid, &l, t, scopes3, 2, now, now + 10000000, 0), FP_EINVAL);
	ASSERT_OK(fp_prof_timeline_add(sid, &l, t, scopes3, 3, now, now + 10000000, 0));
	ASSERT_OK(fp_prof_timeline_add(sid, &l, t, scopes3, 3, now, now + 10000000, 0));

	tree = fp_prof_session_tree(fp_prof_session_get(sid));
	k = child(tree, FP_CALLTREE_ROOT, "kern");
	load = child(tree, k, "load");
	inner = child(tree, load, "inner");
	math = child(tree, k, "math");
	/* two launches of two programs each */
	ASSERT_NEAR(metric_of(tree, load, "scope_time (ns)(exc)"), 2 * 900, 0);
	ASSERT_NEAR(metric_of(tree, load, "scope_programs(exc)"), 4, 0);
	ASSERT_NEAR(metric_of(tree, load, "scope_time_mean (ns) (pty)"), 450, 0);
	ASSERT_NEAR(metric_of(tree, load, "scope_time (ns) (min)"), 300, 0);
	ASSERT_NEAR(metric_of(tree, load, "scope_time (ns) (max)"), 600, 0);
	ASSERT_NEAR(metric_of(tree, load, "scope_cycles_mean (pty)"), 900, 0);
	ASSERT_NEAR(metric_of(tree, k, "program_span (ns)(exc)"), 2 * 1500, 0);
	ASSERT_NEAR(metric_of(tree, math, "scope_share (pty)"), 300.0 / 1500, 1e-12);
	ASSERT_NEAR(metric_of(tree, inner, "scope_count(exc)"), 4, 0);
	ASSERT_NEAR(metric_of(tree, k, "count"), 1, 0);

	/* the viewer's section, from the same tree */
	f = open_memstream(&text, &text_len);
	ASSERT_NOT_NULL(f);
	ASSERT_OK(fp_view_timeline_summary(tree, f));
	fclose(f);
	ASSERT(strstr(text, "kernel kern: 2 instrumented launches") != NULL);
	ASSERT(strstr(text, "    inner") != NULL); /* nested under load */
	ASSERT(strstr(text, "(!) may be software-pipelined") != NULL);
	ASSERT(strstr(text, "0.450") != NULL); /* load: 450 ns mean per program */
	free(text);
	fp_timeline_free(t);
	ASSERT_OK(fp_prof_finalize(sid, NULL, NULL));

	snprintf(path, sizeof(path), "%s", fpt_tmp_path("tl.chrome_trace.json"));
	fp_strbuf_init(&trace, 1 << 24);
	fp_strbuf_init(&meta, 1 << 24);
	ASSERT_OK(fp_strbuf_read_file(&trace, path, NULL));
	/* SM tracks named after the SM, slices of the kernel_scope category */
	ASSERT(strstr(trace.buf, "\"name\":\"SM 3\"") != NULL);
	ASSERT(strstr(trace.buf, "\"name\":\"SM 5\"") != NULL);
	ASSERT(strstr(trace.buf, "\"cat\":\"kernel_scope\"") != NULL);
	/* program 0's "load" starts at its first record: aligned to the kernel event's start */
	p = strstr(trace.buf, "\"cat\":\"kernel\"");
	ASSERT_NOT_NULL(p);
	p = strstr(p, "\"ts\":");
	q = strstr(trace.buf, "\"name\":\"load\",\"cat\":\"kernel_scope\"");
	ASSERT_NOT_NULL(q);
	q = strstr(q, "\"ts\":");
	ASSERT_NOT_NULL(p);
	ASSERT_NOT_NULL(q);
	ASSERT(strncmp(p, q, strcspn(p, ",")) == 0);

	snprintf(path, sizeof(path), "%s", fpt_tmp_path("tl.meta.json"));
	ASSERT_OK(fp_strbuf_read_file(&meta, path, NULL));
	ASSERT(strstr(meta.buf, "\"intra_kernel\"") != NULL);
	ASSERT(strstr(meta.buf, "\"launches\":2") != NULL);
	ASSERT(strstr(meta.buf, "\"aligned_to_kernel_event\":2") != NULL);
	ASSERT(strstr(meta.buf, "kern / inner: inside or around a loop") != NULL);
	fp_strbuf_release(&trace);
	fp_strbuf_release(&meta);
	fpt_tmp_cleanup();
}

TEST(timeline_session_amd_clock)
{
	struct fp_sink_launch l;
	struct fp_calltree *tree;
	struct fp_timeline *t = NULL;
	struct fp_strbuf trace, meta;
	uint64_t now = fp_prof_clock_ns(), kbegin = now + 3000000;
	uint32_t k, load;
	const char *p, *q;
	char path[300];
	struct buf b;
	int sid;

	kern_session("tlamd", kbegin, 50000, &l, &sid);
	/* s_memrealtime ticks of a gfx942 (100 MHz) that has been up for a while */
	two_programs(&b, 360000000000ull);
	buf_amd(&b, 100000);
	ASSERT_OK(fp_timeline_decode(b.w, b.n * 8, &t, NULL));
	ASSERT_OK(fp_prof_timeline_add(sid, &l, t, scopes3, 3, now, now + 10000000, 0));
	tree = fp_prof_session_tree(fp_prof_session_get(sid));
	k = child(tree, FP_CALLTREE_ROOT, "kern");
	load = child(tree, k, "load");
	/* times in ns (ticks x 10), cycles as read (s_memtime) */
	ASSERT_NEAR(metric_of(tree, load, "scope_time (ns)(exc)"), 9000, 0);
	ASSERT_NEAR(metric_of(tree, load, "scope_time_mean (ns) (pty)"), 4500, 0);
	ASSERT_NEAR(metric_of(tree, load, "scope_cycles(exc)"), 1800, 0);
	ASSERT_NEAR(metric_of(tree, load, "scope_cycles_mean (pty)"), 900, 0);
	ASSERT_NEAR(metric_of(tree, k, "program_span (ns)(exc)"), 15000, 0);
	fp_timeline_free(t);
	ASSERT_OK(fp_prof_finalize(sid, NULL, NULL));

	/* aligned like NVIDIA's: the launch's first record at the kernel event's start */
	snprintf(path, sizeof(path), "%s", fpt_tmp_path("tlamd.chrome_trace.json"));
	fp_strbuf_init(&trace, 1 << 24);
	fp_strbuf_init(&meta, 1 << 24);
	ASSERT_OK(fp_strbuf_read_file(&trace, path, NULL));
	ASSERT(strstr(trace.buf, "\"name\":\"SM 3\"") != NULL);
	p = strstr(trace.buf, "\"cat\":\"kernel\"");
	ASSERT_NOT_NULL(p);
	p = strstr(p, "\"ts\":");
	q = strstr(trace.buf, "\"name\":\"load\",\"cat\":\"kernel_scope\"");
	ASSERT_NOT_NULL(q);
	q = strstr(q, "\"ts\":");
	ASSERT_NOT_NULL(p);
	ASSERT_NOT_NULL(q);
	ASSERT(strncmp(p, q, strcspn(p, ",")) == 0);
	snprintf(path, sizeof(path), "%s", fpt_tmp_path("tlamd.meta.json"));
	ASSERT_OK(fp_strbuf_read_file(&meta, path, NULL));
	ASSERT(strstr(meta.buf, "\"aligned_to_kernel_event\":1") != NULL);
	fp_strbuf_release(&trace);
	fp_strbuf_release(&meta);
	fpt_tmp_cleanup();
}

/* One whole session with a timeline intake and trace; every allocation may fail. */
static int tl_session_run(void *unused)
{
	struct fp_prof_options o = {0};
	struct fp_timeline *t = NULL;
	struct fp_sink_launch l;
	static struct buf b;
	int id, rc;

	(void)unused;
	o.name = fpt_tmp_path("oom");
	o.data = FP_PROF_DATA_TRACE;
	rc = fp_prof_start(&o, &id, NULL);
	if (rc)
		goto out;
	memset(&l, 0, sizeof(l));
	l.callpath = FP_PROF_NO_CALLPATH;
	if ((rc = fp_prof_name_intern("kern", 4, &l.kernel)))
		goto out;
	if ((rc = fp_host_launch(id, &l, 100, 200)))
		goto out;
	two_programs(&b, 1000);
	if ((rc = fp_timeline_decode(b.w, b.n * 8, &t, NULL)))
		goto out;
	if ((rc = fp_prof_timeline_add(id, &l, t, scopes3, 3, 50, 300, FP_PROF_TL_PROGRAM_TRACKS)))
		goto out;
	rc = fp_prof_finalize(id, NULL, NULL);
out:
	fp_timeline_free(t);
	fp_prof_shutdown();
	return rc;
}

TEST(timeline_session_oom)
{
	fpt_oom_sweep(tl_session_run, NULL, FP_EIO, 11, NULL);
	fpt_tmp_cleanup();
}
