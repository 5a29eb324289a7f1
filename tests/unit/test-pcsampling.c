/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the CUPTI PC-sampling collector (src/backend/cuda/cupti-pcsampling.c): the
 * aggregator and its attribution to Triton source lines (through the profiler's filing rules,
 * src/prof/sink.c, on a bare tree), on a real cubin (tests/data/cubin/,
 * hot_loop's loop body is lines 27-28 of make_cubins.py), and the CUPTI driver's call sequence
 * and error paths, run against stand-in PC-sampling functions defined here (no libcupti).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/alloc.h>
#include <flagprism/calltree.h>
#include <flagprism/prof.h>
#include <flagprism/status.h>

#include "backend/cuda/cupti-pcs-internal.h"
#include "ir/cubin-lines-internal.h"
#include "prof/prof-internal.h"
#include "test.h"

#define FP_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define CRC 0x1234abcdull

static const char *const reason_names[] = {
	"smsp__pcsamp_warps_issue_stalled_selected",
	"smsp__pcsamp_warps_issue_stalled_long_scoreboard",
	"smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued",
	"smsp__pcsamp_warps_issue_stalled_math_pipe_throttle",
};
/* CUPTI's indexes need not be 0..n-1 */
static const uint32_t reason_index[] = {10, 3, 4, 7};

/* The first PC of the first row of `line` in hot_loop. */
static uint64_t pc_of_line(uint32_t line)
{
	size_t len, i;
	uint8_t *data = fpt_slurp(fpt_data_path("cubin/hot_loop.cubin"), &len);
	struct fp_cubin_lines *cl = NULL;
	struct fp_cubin_loc loc;
	uint64_t pc = UINT64_MAX;

	ASSERT_OK(fp_cubin_lines_parse(data, len, &cl, NULL));
	for (i = 0; i < fp_cubin_lines_count(cl); i++) {
		ASSERT_OK(fp_cubin_lines_row(cl, i, &loc));
		if (loc.line == line) {
			pc = loc.pc_lo;
			break;
		}
	}
	fp_cubin_lines_free(cl);
	free(data);
	ASSERT_NE(pc, UINT64_MAX);
	return pc;
}

struct pcspec {
	uint32_t corr;
	uint64_t crc, pc;
	const char *fn;
	uint32_t samples[4]; /* per reason_index[] */
};

/* Fill `d` with PC records (stall arrays in `st`). */
static void make_data(struct fp__cupti_pcs_data *d, struct fp__cupti_pcs_pc *pcs,
		      struct fp__cupti_pcs_stall *st, const struct pcspec *spec, size_t n)
{
	size_t i, k;

	memset(d, 0, sizeof(*d));
	d->size = sizeof(*d);
	d->collectNumPcs = n;
	d->totalNumPcs = n;
	d->pPcData = pcs;
	for (i = 0; i < n; i++) {
		memset(&pcs[i], 0, sizeof(pcs[i]));
		pcs[i].size = sizeof(pcs[i]);
		pcs[i].cubinCrc = spec[i].crc;
		pcs[i].pcOffset = spec[i].pc;
		pcs[i].functionName = (char *)spec[i].fn;
		pcs[i].correlationId = spec[i].corr;
		pcs[i].stallReason = st + i * 4;
		pcs[i].stallReasonCount = 4;
		for (k = 0; k < 4; k++) {
			st[i * 4 + k].pcSamplingStallReasonIndex = reason_index[k];
			st[i * 4 + k].samples = spec[i].samples[k];
			d->totalSamples += spec[i].samples[k];
		}
	}
}

/*
 * A sink session whose PC samples go into a bare tree by the profiler's own rules
 * (fp__prof_pc_reasons(), fp__prof_pc_file()); everything else is the profiler's sink.
 */
static struct {
	struct fp_sink_session h;
	struct fp_sink sink;
	struct fp_calltree *t;
} tree_sink;

static int tree_pc_reasons(struct fp_sink_session *h, const char *const *reasons, size_t n)
{
	(void)h;
	return fp__prof_pc_reasons(tree_sink.t, reasons, n);
}

static int tree_pc_sample(struct fp_sink_session *h, const struct fp_sink_pc_sample *v)
{
	(void)h;
	return fp__prof_pc_file(tree_sink.t, v);
}

static struct fp_sink_session *on_tree(struct fp_calltree *t)
{
	tree_sink.sink = *fp_prof_sink();
	tree_sink.sink.pc_reasons = tree_pc_reasons;
	tree_sink.sink.pc_sample = tree_pc_sample;
	tree_sink.h.sink = &tree_sink.sink;
	tree_sink.t = t;
	return &tree_sink.h;
}

struct nodes {
	uint32_t kernel; /* of correlation 7 */
};

static uint32_t node_of(void *arg, uint32_t corr)
{
	struct nodes *n = arg;

	return corr == 7 ? n->kernel : FP_CALLTREE_NONE;
}

static double metric(struct fp_calltree *t, uint32_t node, const char *name)
{
	struct fp_calltree_value v;
	uint32_t m;

	if (fp_calltree_metric_find(t, name, strlen(name), &m))
		return -1;
	if (fp_calltree_get(t, node, m, &v))
		return 0;
	return v.self;
}

static uint32_t named_child(struct fp_calltree *t, uint32_t parent, const char *name)
{
	uint32_t frame, node;

	if (fp_calltree_intern(t, name, strlen(name), &frame) ||
	    fp_calltree_child_find(t, parent, frame, &node))
		return FP_CALLTREE_NONE;
	return node;
}

TEST(pcsampling_reason_names)
{
	struct fp__pcs *p = fp__pcs_new(0, fp_prof_sink());

	ASSERT_NOT_NULL(p);
	ASSERT_EQ(fp__pcs_set_reasons(p, 0, reason_index, reason_names), FP_EINVAL);
	ASSERT_OK(fp__pcs_set_reasons(p, 4, reason_index, reason_names));
	ASSERT_EQ(fp__pcs_reason_count(p), 4);
	ASSERT_STREQ(fp__pcs_reason_metric(p, 0), "stalled_selected");
	ASSERT_STREQ(fp__pcs_reason_metric(p, 2), "stalled_long_scoreboard_not_issued");
	ASSERT_NULL(fp__pcs_reason_metric(p, 4));
	fp__pcs_free(p);
}

/* The loop's lines get the loop's samples, and every sample ends somewhere, counted. */
TEST(pcsampling_attributes_to_triton_lines)
{
	uint64_t pc27 = pc_of_line(27), pc28 = pc_of_line(28), pc24 = pc_of_line(24);
	const struct pcspec spec[] = {
		{7, CRC, pc27, "hot_loop", {5, 40, 30, 10}},
		{7, CRC, pc28, "hot_loop", {2, 0, 0, 20}},
		{7, CRC, pc27, "hot_loop", {1, 0, 0, 0}}, /* same PC again: merged */
		{7, CRC, pc24, "hot_loop", {0, 3, 3, 0}},
		{7, CRC, 1u << 24, "hot_loop", {0, 4, 0, 0}},  /* past the code: no line */
		{7, 0x99, 0x10, "other_kernel", {0, 0, 0, 6}}, /* unknown cubin */
		{0, CRC, pc27, "hot_loop", {0, 0, 0, 8}},      /* no launch (continuous mode) */
	};
	struct fp__cupti_pcs_pc pcs[FP_ARRAY_SIZE(spec)];
	struct fp__cupti_pcs_stall st[FP_ARRAY_SIZE(spec) * 4];
	struct fp__cupti_pcs_data d;
	struct fp__pcs_stats s;
	struct fp_calltree *t = fp_calltree_new(NULL);
	struct fp__pcs *p = fp__pcs_new(0, fp_prof_sink());
	struct nodes n;
	uint32_t scope, frame, l27, l28, l24, none, nocubin, nolaunch;
	char name27[512], name28[512], name24[512];
	size_t len;
	uint8_t *cubin = fpt_slurp(fpt_data_path("cubin/hot_loop.cubin"), &len);

	ASSERT_NOT_NULL(t);
	ASSERT_NOT_NULL(p);
	ASSERT_OK(fp_calltree_intern(t, "scope", 5, &frame));
	ASSERT_OK(fp_calltree_child(t, FP_CALLTREE_ROOT, frame, &scope));
	ASSERT_OK(fp_calltree_intern(t, "hot_loop", 8, &frame));
	ASSERT_OK(fp_calltree_child(t, scope, frame, &n.kernel));

	ASSERT_EQ(fp__pcs_add_data(p, &d), FP_EINVAL); /* no reasons yet */
	ASSERT_OK(fp__pcs_set_reasons(p, 4, reason_index, reason_names));
	ASSERT_OK(fp__pcs_add_cubin(p, CRC, cubin, len, NULL));
	ASSERT_OK(fp__pcs_add_cubin(p, CRC, cubin, len, NULL)); /* again: no-op */
	ASSERT(fp__pcs_has_cubin(p, CRC));
	make_data(&d, pcs, st, spec, FP_ARRAY_SIZE(spec));
	d.droppedSamples = 3;
	ASSERT_OK(fp__pcs_add_data(p, &d));
	ASSERT_OK(fp__pcs_attribute(p, on_tree(t), node_of, &n));
	ASSERT_OK(fp_calltree_finalize(t));

	/* the line frames carry the directory from the line table */
	l27 = l28 = l24 = FP_CALLTREE_NONE;
	{
		uint32_t c;

		for (c = fp_calltree_node_first_child(t, n.kernel); c != FP_CALLTREE_NONE;
		     c = fp_calltree_node_next_sibling(t, c)) {
			const char *nm = fp_calltree_node_name(t, c, NULL);
			size_t nl = strlen(nm);

			if (nl > 18 && strcmp(nm + nl - 18, "/make_cubins.py:27") == 0)
				l27 = c, snprintf(name27, sizeof(name27), "%s", nm);
			if (nl > 18 && strcmp(nm + nl - 18, "/make_cubins.py:28") == 0)
				l28 = c, snprintf(name28, sizeof(name28), "%s", nm);
			if (nl > 18 && strcmp(nm + nl - 18, "/make_cubins.py:24") == 0)
				l24 = c, snprintf(name24, sizeof(name24), "%s", nm);
		}
	}
	ASSERT_NE(l27, FP_CALLTREE_NONE);
	ASSERT_NE(l28, FP_CALLTREE_NONE);
	ASSERT_NE(l24, FP_CALLTREE_NONE);
	ASSERT(strstr(name27, "tests/data/cubin/make_cubins.py:27") != NULL);
	/* line 27: selected 5+1, long_scoreboard 40 (+30 not issued), math 10 */
	ASSERT_DEQ(metric(t, l27, "num_samples"), 56);
	ASSERT_DEQ(metric(t, l27, "num_stalled_samples"), 50);
	ASSERT_DEQ(metric(t, l27, "stalled_selected"), 6);
	ASSERT_DEQ(metric(t, l27, "stalled_long_scoreboard"), 40);
	ASSERT_DEQ(metric(t, l27, "stalled_long_scoreboard_not_issued"), 30);
	ASSERT_DEQ(metric(t, l27, "stalled_math_pipe_throttle"), 10);
	ASSERT_DEQ(metric(t, l28, "num_samples"), 22);
	ASSERT_DEQ(metric(t, l28, "num_stalled_samples"), 20);
	ASSERT_DEQ(metric(t, l24, "num_samples"), 3);
	none = named_child(t, n.kernel, FP__PCS_NO_LINE);
	nocubin = named_child(t, n.kernel, FP__PCS_NO_CUBIN);
	ASSERT_NE(none, FP_CALLTREE_NONE);
	ASSERT_NE(nocubin, FP_CALLTREE_NONE);
	ASSERT_DEQ(metric(t, none, "num_samples"), 4);
	ASSERT_DEQ(metric(t, nocubin, "num_samples"), 6);
	nolaunch = named_child(t, FP_CALLTREE_ROOT, FP__PCS_NO_LAUNCH);
	ASSERT_NE(nolaunch, FP_CALLTREE_NONE);
	nolaunch = named_child(t, nolaunch, "hot_loop");
	ASSERT_NE(nolaunch, FP_CALLTREE_NONE);
	ASSERT_DEQ(metric(t, named_child(t, nolaunch, name27), "num_samples"), 8);

	fp__pcs_get_stats(p, &s);
	ASSERT_UEQ(s.pc_records, FP_ARRAY_SIZE(spec));
	ASSERT_UEQ(s.total_samples, 56 + 30 + 22 + 6 + 4 + 6 + 8);
	ASSERT_UEQ(s.dropped_samples, 3);
	/* kept = every issue-stall sample (not the _not_issued twins), all filed somewhere */
	ASSERT_UEQ(s.samples, 56 + 22 + 3 + 4 + 6 + 8);
	ASSERT_UEQ(s.on_lines + s.no_line + s.no_cubin, s.samples);
	ASSERT_UEQ(s.no_line, 4);
	ASSERT_UEQ(s.no_cubin, 6);
	ASSERT_UEQ(s.no_launch, 8);
	ASSERT_UEQ(s.table_full, 0);
	ASSERT_UEQ(s.bad_records, 0);
	/* the kernel's inclusive total is the sum of its lines */
	{
		struct fp_calltree_value v;
		uint32_t m;

		ASSERT_OK(fp_calltree_metric_find(t, "num_samples", 11, &m));
		ASSERT_OK(fp_calltree_get(t, n.kernel, m, &v));
		ASSERT_DEQ(v.total, 56 + 22 + 3 + 4 + 6);
	}
	/* consumed: a second attribution adds nothing */
	ASSERT_OK(fp__pcs_attribute(p, on_tree(t), node_of, &n));
	ASSERT_OK(fp_calltree_finalize(t));
	ASSERT_DEQ(metric(t, l27, "num_samples"), 56);
	fp__pcs_free(p);
	fp_calltree_free(t);
	free(cubin);
}

TEST(pcsampling_bad_records_and_full_table_are_counted)
{
	const struct pcspec spec[] = {
		{7, CRC, 0x10, "k", {1, 0, 0, 0}},
		{7, CRC, 0x20, "k", {0, 2, 0, 0}},
		{7, CRC, 0x30, "k", {0, 0, 0, 4}},  /* second counter: over the cap of 1 */
		{7, CRC, 0x40, NULL, {9, 0, 0, 0}}, /* no function name */
	};
	struct fp__cupti_pcs_pc pcs[4];
	struct fp__cupti_pcs_stall st[16];
	struct fp__cupti_pcs_data d;
	struct fp__pcs_stats s;
	struct fp__pcs *p = fp__pcs_new(1, fp_prof_sink());
	struct fp_calltree *t = fp_calltree_new(NULL);

	ASSERT_OK(fp__pcs_set_reasons(p, 4, reason_index, reason_names));
	make_data(&d, pcs, st, spec, 4);
	st[4].pcSamplingStallReasonIndex = 99; /* unknown index, 0 samples: ignored */
	st[5].pcSamplingStallReasonIndex = 98; /* unknown index with samples: bad */
	st[5].samples = 5;
	ASSERT_OK(fp__pcs_add_data(p, &d));
	fp__pcs_get_stats(p, &s);
	ASSERT_UEQ(s.bad_records, 2);
	ASSERT_UEQ(s.table_full, 4);
	ASSERT_UEQ(s.samples, 1);
	/* kept: only "selected" of PC 0x10 (PC 0x20's samples had a bad index, PC 0x30's did not
	 * fit the cap of one counter) */
	ASSERT_OK(fp__pcs_attribute(p, on_tree(t), NULL, NULL));
	fp__pcs_get_stats(p, &s);
	ASSERT_UEQ(s.no_cubin, 1);
	ASSERT_UEQ(s.no_launch, 1);
	d.totalNumPcs = 1;
	d.pPcData = NULL;
	ASSERT_EQ(fp__pcs_add_data(p, &d), FP_EFORMAT);
	fp__pcs_free(p);
	fp_calltree_free(t);
}

TEST(pcsampling_unreadable_cubin_goes_to_no_line)
{
	static const uint8_t junk[] = "\177ELF not really";
	struct fp__pcs *p = fp__pcs_new(0, fp_prof_sink());
	struct fp_diag diag;

	ASSERT_EQ(fp__pcs_add_cubin(p, 5, junk, sizeof(junk), &diag), FP_EFORMAT);
	ASSERT(fp__pcs_has_cubin(p, 5));
	fp__pcs_free(p);
}

TEST(pcsampling_oom_sweep)
{
	uint64_t pc27 = pc_of_line(27);
	const struct pcspec spec[] = {
		{7, CRC, pc27, "hot_loop", {5, 40, 30, 10}},
		{0, 0x77, 0x10, "x", {1, 1, 1, 1}},
	};
	struct fp__cupti_pcs_pc pcs[2];
	struct fp__cupti_pcs_stall st[8];
	struct fp__cupti_pcs_data d;
	size_t len;
	uint8_t *cubin = fpt_slurp(fpt_data_path("cubin/hot_loop.cubin"), &len);
	long fail_at;
	struct nodes n;

	/* names are process-wide and stay: intern them before counting allocations */
	ASSERT_OK(fp_prof_name_intern("hot_loop", 8, &n.kernel));
	ASSERT_OK(fp_prof_name_intern("x", 1, &n.kernel));
	make_data(&d, pcs, st, spec, 2);
	for (fail_at = 0;; fail_at++) {
		struct fp_calltree *t;
		struct fp__pcs *p;
		int rc = FP_ENOMEM;

		fpt_oom_install(fail_at);
		t = fp_calltree_new(NULL);
		p = fp__pcs_new(0, fp_prof_sink());
		if (t && p) {
			n.kernel = FP_CALLTREE_ROOT;
			rc = fp__pcs_set_reasons(p, 4, reason_index, reason_names);
			if (!rc)
				rc = fp__pcs_add_cubin(p, CRC, cubin, len, NULL);
			if (!rc)
				rc = fp__pcs_add_data(p, &d);
			if (!rc)
				rc = fp__pcs_attribute(p, on_tree(t), node_of, &n);
			if (!rc) {
				struct fp__pcs_stats s;

				fp__pcs_get_stats(p, &s);
				/* a counter lost to memory is counted, never silent */
				if (s.table_full || s.unfiled)
					rc = FP_ENOMEM;
			}
		}
		fp__pcs_free(p);
		fp_calltree_free(t);
		ASSERT_EQ(fpt_oom_live(), 0);
		fpt_oom_uninstall();
		if (rc == FP_OK)
			break;
		ASSERT(rc == FP_ENOMEM || rc == FP_ELIMIT);
		ASSERT_LT(fail_at, 10000);
	}
	ASSERT_GT(fail_at, 5);
	free(cubin);
}

/* ---- the driver, against stand-in CUPTI functions ------------------------------------------- */

static struct {
	int enable_rc, reasons_rc, config_rc, getdata_rc;
	int enabled, disabled, configured, getdata_calls;
	int mode;
	void *buffer;
	uint32_t period;
	size_t batches;    /* GetData calls that return one PC each */
	size_t on_disable; /* PCs Disable hands over */
} fk;

static int fk_enable(struct fp__cupti_pcs_ctx_params *p)
{
	if (p->size != 24)
		return FP__CUPTI_ERROR_INVALID_PARAMETER;
	if (fk.enable_rc)
		return fk.enable_rc;
	fk.enabled++;
	return 0;
}

static void fk_fill(struct fp__cupti_pcs_data *d, uint32_t corr, uint64_t pc)
{
	ASSERT_GE(d->collectNumPcs, 1);
	ASSERT_GE(d->pPcData[0].size, sizeof(struct fp__cupti_pcs_pc));
	d->totalNumPcs = 1;
	d->pPcData[0].cubinCrc = CRC;
	d->pPcData[0].pcOffset = pc;
	d->pPcData[0].functionName = (char *)"hot_loop";
	d->pPcData[0].correlationId = corr;
	d->pPcData[0].stallReasonCount = 1;
	d->pPcData[0].stallReason[0].pcSamplingStallReasonIndex = 3;
	d->pPcData[0].stallReason[0].samples = 10;
	d->totalSamples += 12;
	d->droppedSamples += 2;
}

static int fk_disable(struct fp__cupti_pcs_ctx_params *p)
{
	(void)p;
	fk.disabled++;
	if (fk.on_disable && fk.buffer)
		fk_fill(fk.buffer, 9, 0x40);
	return 0;
}

static int fk_config(struct fp__cupti_pcs_config_params *p)
{
	size_t i;

	for (i = 0; i < p->numAttributes; i++) {
		struct fp__cupti_pcs_config_info *a = &p->pPCSamplingConfigurationInfo[i];

		if (a->attributeType == FP__CUPTI_PCS_ATTR_COLLECTION_MODE)
			fk.mode = a->attributeData.collectionMode;
		if (a->attributeType == FP__CUPTI_PCS_ATTR_SAMPLING_DATA_BUFFER)
			fk.buffer = a->attributeData.samplingDataBuffer;
		if (a->attributeType == FP__CUPTI_PCS_ATTR_SAMPLING_PERIOD) {
			fk.period = a->attributeData.samplingPeriod;
			if (fk.config_rc)
				a->attributeStatus = fk.config_rc;
		}
		if (a->attributeType == FP__CUPTI_PCS_ATTR_STALL_REASON &&
		    a->attributeData.stallReason.stallReasonCount != 4)
			return FP__CUPTI_ERROR_INVALID_PARAMETER;
	}
	if (fk.config_rc)
		return fk.config_rc;
	fk.configured++;
	return 0;
}

static int fk_getdata(struct fp__cupti_pcs_get_data_params *p)
{
	struct fp__cupti_pcs_data *d = p->pcSamplingData;

	fk.getdata_calls++;
	if (fk.getdata_rc)
		return fk.getdata_rc;
	if (!fk.batches)
		return 0;
	fk.batches--;
	fk_fill(d, 7, 0x10);
	d->remainingNumPcs = fk.batches;
	return 0;
}

static int fk_num(struct fp__cupti_pcs_num_stall_params *p)
{
	if (!fk.enabled)
		return FP__CUPTI_ERROR_NOT_INITIALIZED; /* Enable must come first */
	*p->numStallReasons = 4;
	return 0;
}

static int fk_reasons(struct fp__cupti_pcs_stall_params *p)
{
	size_t i;

	if (fk.reasons_rc)
		return fk.reasons_rc;
	for (i = 0; i < p->numStallReasons; i++) {
		p->stallReasonIndex[i] = reason_index[i];
		snprintf(p->stallReasons[i], FP__CUPTI_STALL_REASON_STRING_SIZE, "%s",
			 reason_names[i]);
	}
	return 0;
}

static int fk_crc(struct fp__cupti_cubin_crc_params *p)
{
	p->cubinCrc = CRC;
	return 0;
}

static void fk_fns(struct fp__pcs_fns *f)
{
	memset(&fk, 0, sizeof(fk));
	memset(f, 0, sizeof(*f));
	f->cuptiPCSamplingEnable = fk_enable;
	f->cuptiPCSamplingDisable = fk_disable;
	f->cuptiPCSamplingSetConfigurationAttribute = fk_config;
	f->cuptiPCSamplingGetData = fk_getdata;
	f->cuptiPCSamplingGetNumStallReasons = fk_num;
	f->cuptiPCSamplingGetStallReasons = fk_reasons;
	f->cuptiGetCubinCrc = fk_crc;
}

/* Continuous mode: no correlation ids; a function's samples are split among the nodes that
 * launched it, by GPU time. A function nobody launched stays under FP__PCS_NO_LAUNCH. */
TEST(pcsampling_continuous_splits_by_gpu_time)
{
	const struct pcspec spec[] = {
		{0, 0x77, 0x10, "split_me", {0, 0, 0, 40}},
		{0, 0x77, 0x20, "split_me", {4, 0, 0, 0}},
		{0, 0x77, 0x10, "nobody", {0, 0, 0, 5}},
	};
	struct fp__cupti_pcs_pc pcs[FP_ARRAY_SIZE(spec)];
	struct fp__cupti_pcs_stall st[FP_ARRAY_SIZE(spec) * 4];
	struct fp__cupti_pcs_data d;
	struct fp__pcs_stats s;
	struct fp_calltree *t = fp_calltree_new(NULL);
	struct fp__pcs *p = fp__pcs_new(0, fp_prof_sink());
	uint32_t frame, a, b, fn, la, lb, nl;

	ASSERT_NOT_NULL(t);
	ASSERT_NOT_NULL(p);
	ASSERT_OK(fp_calltree_intern(t, "a", 1, &frame));
	ASSERT_OK(fp_calltree_child(t, FP_CALLTREE_ROOT, frame, &a));
	ASSERT_OK(fp_calltree_intern(t, "b", 1, &frame));
	ASSERT_OK(fp_calltree_child(t, FP_CALLTREE_ROOT, frame, &b));
	ASSERT_OK(fp_prof_name_intern("split_me", 8, &fn));
	ASSERT_OK(fp__pcs_set_reasons(p, 4, reason_index, reason_names));
	/* two launches under a (3 us, 1 us ... 4 us in all), one under b (4 us): half each */
	ASSERT_OK(fp__pcs_note_kernel(p, fn, a, 3000));
	ASSERT_OK(fp__pcs_note_kernel(p, fn, a, 1000));
	ASSERT_OK(fp__pcs_note_kernel(p, fn, b, 4000));
	ASSERT_EQ(fp__pcs_note_kernel(p, fn, FP_CALLTREE_NONE, 1), FP_EINVAL);
	make_data(&d, pcs, st, spec, FP_ARRAY_SIZE(spec));
	ASSERT_OK(fp__pcs_add_data(p, &d));
	ASSERT_OK(fp__pcs_attribute(p, on_tree(t), NULL, NULL));
	ASSERT_OK(fp_calltree_finalize(t));
	la = named_child(t, a, FP__PCS_NO_CUBIN);
	lb = named_child(t, b, FP__PCS_NO_CUBIN);
	ASSERT_DEQ(metric(t, la, "num_samples"), 22);
	ASSERT_DEQ(metric(t, lb, "num_samples"), 22);
	ASSERT_DEQ(metric(t, la, "stalled_math_pipe_throttle"), 20);
	ASSERT_DEQ(metric(t, lb, "stalled_selected"), 2);
	nl = named_child(t, named_child(t, FP_CALLTREE_ROOT, FP__PCS_NO_LAUNCH), "nobody");
	ASSERT_DEQ(metric(t, named_child(t, nl, FP__PCS_NO_CUBIN), "num_samples"), 5);
	fp__pcs_get_stats(p, &s);
	/* the stats count each sample once, wherever its shares went */
	ASSERT_UEQ(s.samples, 49);
	ASSERT_UEQ(s.no_cubin, 49);
	ASSERT_UEQ(s.no_launch, 5);
	fp__pcs_free(p);
	fp_calltree_free(t);
}

TEST(pcsampling_driver_flow)
{
	struct fp__pcs_session ps;
	struct fp__pcs_fns f;
	struct fp__pcs_config cfg = {.sampling_period = 10, .collect_pcs = 8};
	struct fp__pcs_stats s;
	struct fp_diag diag;

	fk_fns(&f);
	ASSERT_OK(fp__pcs_session_start(&ps, &f, fp_prof_sink(), (fp__cu_context)0x1, &cfg, &diag));
	ASSERT_EQ(fk.enabled, 1);
	ASSERT_EQ(fk.configured, 1);
	ASSERT_EQ(fk.mode, FP__CUPTI_PCS_MODE_CONTINUOUS); /* the default */
	ASSERT_EQ(fk.period, 10);
	ASSERT_EQ(ps.calls.enable, 0);
	ASSERT_EQ(ps.calls.config, 0);
	ASSERT_EQ(ps.calls.disable, FP__PCS_NOT_CALLED);
	ASSERT(fk.buffer == &ps.data);
	fk.batches = 3;
	ASSERT_OK(fp__pcs_session_drain(&ps));
	ASSERT_EQ(fk.getdata_calls, 3); /* until nothing remains */
	ASSERT_UEQ(ps.calls.getdata, 3);
	ASSERT_UEQ(ps.calls.getdata_errors, 0);
	fk.on_disable = 1;
	ASSERT_OK(fp__pcs_session_stop(&ps));
	ASSERT_EQ(fk.disabled, 1);
	ASSERT_EQ(ps.calls.disable, 0);
	fp__pcs_get_stats(ps.agg, &s);
	ASSERT_UEQ(s.pc_records, 4);
	ASSERT_UEQ(s.samples, 40);
	ASSERT_UEQ(s.total_samples, 48);
	ASSERT_UEQ(s.dropped_samples, 8);
	ASSERT_UEQ(s.total_samples - s.dropped_samples, s.samples);
	fp__pcs_session_release(&ps);
	ASSERT_EQ(fk.disabled, 1);
}

TEST(pcsampling_driver_permission_denied_says_how_to_fix)
{
	struct fp__pcs_session ps;
	struct fp__pcs_fns f;
	struct fp_diag diag;

	fk_fns(&f);
	fk.enable_rc = FP__CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
	ASSERT_EQ(fp__pcs_session_start(&ps, &f, fp_prof_sink(), NULL, NULL, &diag), FP_ENOTSUP);
	ASSERT(strstr(diag.msg, "NVreg_RestrictProfilingToAdminUsers=0") != NULL);
	ASSERT(strstr(diag.msg, "CAP_PERFMON") != NULL);
	ASSERT_EQ(fk.disabled, 0);
}

TEST(pcsampling_driver_undoes_enable_on_failure)
{
	struct fp__pcs_session ps;
	struct fp__pcs_fns f;
	struct fp__pcs_config cfg = {.sampling_period = 4};
	struct fp_diag diag;

	fk_fns(&f);
	ASSERT_EQ(fp__pcs_session_start(&ps, &f, fp_prof_sink(), NULL, &cfg, &diag), FP_EINVAL);
	ASSERT(strstr(diag.msg, "5 to 31") != NULL);
	ASSERT_EQ(fk.enabled, 0);

	fk_fns(&f);
	fk.reasons_rc = FP__CUPTI_ERROR_UNKNOWN;
	ASSERT_EQ(fp__pcs_session_start(&ps, &f, fp_prof_sink(), NULL, NULL, &diag), FP_EVENDOR);
	ASSERT(strstr(diag.msg, "cuptiPCSamplingGetStallReasons") != NULL);
	ASSERT_EQ(fk.enabled, 1);
	ASSERT_EQ(fk.disabled, 1);

	fk_fns(&f);
	fk.config_rc = FP__CUPTI_ERROR_INVALID_PARAMETER;
	cfg.sampling_period = 31;
	ASSERT_EQ(fp__pcs_session_start(&ps, &f, fp_prof_sink(), NULL, &cfg, &diag), FP_EVENDOR);
	ASSERT(strstr(diag.msg, "sampling period") != NULL);
	ASSERT_EQ(fk.disabled, 1);

	fk_fns(&f);
	fk.enable_rc = FP__CUPTI_ERROR_NOT_SUPPORTED;
	ASSERT_EQ(fp__pcs_session_start(&ps, &f, fp_prof_sink(), NULL, NULL, &diag), FP_ENOTSUP);
	ASSERT(strstr(diag.msg, "not supported") != NULL);
}

TEST(pcsampling_driver_hardware_buffer_full_is_counted)
{
	struct fp__pcs_session ps;
	struct fp__pcs_fns f;
	struct fp__pcs_stats s;

	fk_fns(&f);
	ASSERT_OK(fp__pcs_session_start(&ps, &f, fp_prof_sink(), NULL, NULL, NULL));
	fk.getdata_rc = FP__CUPTI_ERROR_OUT_OF_MEMORY;
	ASSERT_OK(fp__pcs_session_drain(&ps));
	fk.getdata_rc = FP__CUPTI_ERROR_UNKNOWN;
	ASSERT_EQ(fp__pcs_session_drain(&ps), FP_EVENDOR);
	ASSERT_UEQ(ps.calls.getdata_errors, 1); /* a full buffer is no error */
	ASSERT_EQ(ps.calls.last_getdata, FP__CUPTI_ERROR_UNKNOWN);
	fk.getdata_rc = 0;
	fp__pcs_get_stats(ps.agg, &s);
	ASSERT_UEQ(s.hw_buffer_full, 1);
	fp__pcs_session_release(&ps);
	ASSERT_EQ(fk.disabled, 1);
}
