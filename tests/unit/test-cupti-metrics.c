/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hardware metrics (include/flagprism/cupti-metrics.h): the request parser, the aggregation
 * rules and tree names, and the CUPTI backend's range-profiler flow end to end on libfakecupti.so's fake range profiler
 * (tests/unit/fake-cupti/fake-cupti-profiler.c): configuration, auto range + kernel replay,
 * ranges paired with kernel records by start time, values in the written Hatchet file and the
 * metadata, and the error paths (no permission, unsupported names, a missing entry point,
 * range/record mismatch, dropped ranges, a second collecting session), each leaving CUPTI's
 * profiler state torn down.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include <flagprism/calltree.h>
#include <flagprism/cupti-metrics.h>
#include <flagprism/cupti.h>
#include <flagprism/prof.h>

#include "backend/cuda/cupti-internal.h"
#include "fake-cupti/fake-bind.h"
#include "fake-cupti/fake-cupti.h"
#include "fake-cupti/fake-cupti-profiler.h"
#include "test.h"

/* ---- request ---------------------------------------------------------------------------------- */

TEST(cupti_metrics_request_parse)
{
	struct fp_diag d;

	ASSERT_OK(fp_cupti_metrics_request("default", 0, &d));
	ASSERT_OK(fp_cupti_metrics_request(" dram__bytes_read.sum , lts__t_sector_hit_rate.pct ", 8,
					   &d));
	ASSERT_OK(fp_cupti_metrics_request("", 0, &d));
	ASSERT_OK(fp_cupti_metrics_request(NULL, 0, &d));
	ASSERT_EQ(fp_cupti_metrics_request("dram__bytes.sum,dram bytes", 0, &d), FP_EINVAL);
	ASSERT(strstr(d.msg, "'dram bytes' is not a metric name") != NULL);
	ASSERT_EQ(fp_cupti_metrics_request("a.sum,b.sum,a.sum", 0, &d), FP_EINVAL);
	ASSERT(strstr(d.msg, "'a.sum' is listed twice") != NULL);
	ASSERT_EQ(fp_cupti_metrics_request("x.sum", FP_CUPTI_METRICS_MAX_RANGES + 1, &d),
		  FP_ELIMIT);
	{
		char big[FP_CUPTI_METRICS_MAX * 8 + 64];
		size_t o = 0;
		int i;

		for (i = 0; i <= FP_CUPTI_METRICS_MAX; i++)
			o += (size_t)snprintf(big + o, sizeof(big) - o, "m%d.sum,", i);
		ASSERT_EQ(fp_cupti_metrics_request(big, 0, &d), FP_ELIMIT);
	}
	ASSERT_OK(fp_cupti_metrics_request(NULL, 0, NULL));
}

TEST(cupti_metrics_agg_rules)
{
	char buf[64];

	ASSERT_EQ(fp_cupti_metric_agg("dram__bytes_read.sum", 0), FP_CUPTI_METRIC_SUM);
	ASSERT_EQ(fp_cupti_metric_agg("sm__cycles_elapsed.avg", -1), FP_CUPTI_METRIC_SUM);
	ASSERT_EQ(fp_cupti_metric_agg("dram__bytes_read.sum.per_second", 0), FP_CUPTI_METRIC_MEAN);
	ASSERT_EQ(fp_cupti_metric_agg("sm__throughput.avg.pct_of_peak_sustained_elapsed", 2),
		  FP_CUPTI_METRIC_MEAN);
	ASSERT_EQ(fp_cupti_metric_agg("lts__t_sector_hit_rate.pct", 1), FP_CUPTI_METRIC_MEAN);
	/* A ratio type wins over a ".sum"-looking name; ".max" rollups are not summed. */
	ASSERT_EQ(fp_cupti_metric_agg("odd.sum", 1), FP_CUPTI_METRIC_MEAN);
	ASSERT_EQ(fp_cupti_metric_agg("sm__warps_active.max", 0), FP_CUPTI_METRIC_MEAN);
	ASSERT_EQ(fp_cupti_metric_agg("launch__registers_per_thread", -1), FP_CUPTI_METRIC_MEAN);
	ASSERT_EQ(
		fp_cupti_metric_tree_name("dram__bytes.sum", FP_CUPTI_METRIC_SUM, buf, sizeof(buf)),
		18);
	ASSERT_STREQ(buf, "hw:dram__bytes.sum");
	fp_cupti_metric_tree_name("x.pct", FP_CUPTI_METRIC_MEAN, buf, sizeof(buf));
	ASSERT_STREQ(buf, "hw:x.pct (pty)");
	ASSERT_EQ(fp_cupti_metric_tree_name("abcdef", FP_CUPTI_METRIC_SUM, buf, 4), 3);
	ASSERT_STREQ(buf, "hw:");
	ASSERT_EQ(fp_cupti_metric_tree_name("x", FP_CUPTI_METRIC_SUM, buf, 0), FP_EINVAL);
}

/* ---- the backend on the fake range profiler -------------------------------------------------- */

static struct {
	void *h;
#define X(ret, name, params) ret(*name) params;
	FAKE_CUPTI_CONTROL(X)
	FAKE_PROF_CONTROL(X)
#undef X
} fk;

static char dir[] = "/tmp/fp-hwm-test-XXXXXX";

static void open_fake(void)
{
	fk.h = fake_cupti_load(FP_FAKE_CUPTI_PATH);
	FAKE_CUPTI_CONTROL(FAKE_BIND_X)
	FAKE_PROF_CONTROL(FAKE_BIND_X)
	fk.fake_cupti_reset();
	fk.fake_prof_reset();
	ASSERT_OK(fp_cupti_register());
	if (dir[sizeof(dir) - 2] == 'X')
		ASSERT_NOT_NULL(mkdtemp(dir));
}

static const char *path(const char *suffix)
{
	static char buf[300];

	snprintf(buf, sizeof(buf), "%s/hwm%s", dir, suffix);
	return buf;
}

/* Every profiler object the collector made is gone. */
static void assert_torn_down(void)
{
	ASSERT_EQ(fk.fake_prof_state(FAKE_PROF_INIT), 0);
	ASSERT_EQ(fk.fake_prof_state(FAKE_PROF_HOSTS), 0);
	ASSERT_EQ(fk.fake_prof_state(FAKE_PROF_ENABLED), 0);
	ASSERT_EQ(fk.fake_prof_state(FAKE_PROF_STARTED), 0);
	ASSERT(!fp_cupti_metrics_active());
}

static void close_fake(void)
{
	static const char *const sfx[] = {".hatchet", ".chrome_trace.json", ".meta.json",
					  ".vendor.json"};
	size_t i;

	fp_prof_shutdown();
	fp__cupti_reset();
	fk.fake_cupti_reset();
	fk.fake_prof_reset();
	dlclose(fk.h);
	unsetenv(FP_CUPTI_PATH_ENV);
	unsetenv("FLAGPRISM_CUDA_DRIVER_PATH");
	for (i = 0; i < (sizeof(sfx) / sizeof(sfx[0])); i++)
		unlink(path(sfx[i]));
	rmdir(dir);
	memcpy(dir + sizeof(dir) - 7, "XXXXXX", 6);
}

static int start_session(struct fp_diag *d)
{
	static unsigned n;
	struct fp_prof_options o = {0};
	char suffix[32] = "";
	int id = -1, rc;

	/* A second open session gets a name of its own (two sessions never share one). */
	if (fp_prof_session_count())
		snprintf(suffix, sizeof(suffix), "-%u", ++n);
	o.name = path(suffix);
	o.backend = FP_CUPTI_BACKEND;
	rc = fp_prof_start(&o, &id, d);
	return rc ? rc : id;
}

/*
 * A kernel launch (cuLaunchKernelEx, grid g x 1 x 1, result `ret`) with correlation `corr`
 * inside the current scopes, then, when it succeeded, its activity record at `start` lasting
 * `dur`: while the fake range profiler runs the record loses its times (the H200's CUPTI 13.0),
 * is not emitted, or keeps them (fake_prof_set_records).
 */
static void launch_ex(uint32_t corr, const char *name, uint64_t start, uint64_t dur, uint32_t dev,
		      uint32_t g, int ret, int other_context)
{
	uint32_t grid[3] = {g, 1, 1};
	struct fake_kernel k;

	fk.fake_cupti_launch_kernel(FP__CUPTI_CB_DOMAIN_DRIVER_API,
				    FP__CUPTI_DRIVER_cuLaunchKernelEx, corr, name, grid, ret,
				    other_context);
	if (ret)
		return;
	memset(&k, 0, sizeof(k));
	k.corr = corr;
	k.start = start;
	k.end = start + dur;
	k.device = dev;
	k.stream = 7;
	k.grid[0] = (int32_t)g;
	k.grid[1] = k.grid[2] = 1;
	k.block[0] = k.block[1] = k.block[2] = 1;
	k.name = name;
	ASSERT_OK(fk.fake_cupti_kernel(&k));
}

static void launch(uint32_t corr, const char *name, uint64_t start, uint64_t dur, uint32_t dev)
{
	launch_ex(corr, name, start, dur, dev, 1, 0, 0);
}

/* The whole file at p, NUL-terminated; valid until the next call (one file is read at a time). */
static const char *slurp(const char *p)
{
	static char *last;
	size_t len;

	free(last);
	last = fpt_slurp(p, &len);
	return last;
}

static double hval(struct fp_calltree *t, const char *p, const char *m)
{
	uint32_t node = FP_CALLTREE_ROOT, fr, id;
	struct fp_calltree_value v;
	char part[64];
	const char *s = p;

	while (*s) {
		const char *e = strchr(s, '/');
		size_t len = e ? (size_t)(e - s) : strlen(s);

		memcpy(part, s, len);
		part[len] = '\0';
		if (fp_calltree_intern(t, part, len, &fr) ||
		    fp_calltree_child_find(t, node, fr, &node))
			return -1;
		s = e ? e + 1 : s + len;
	}
	if (fp_calltree_metric_find(t, m, strlen(m), &id) || fp_calltree_get(t, node, id, &v))
		return -1;
	return v.self;
}

/*
 * Three kernels executed (and launched) in the order add, add, mm inside scope "step"; the
 * range profiler measured one range each, in that order. Whatever becomes of the activity
 * records (`records`: FAKE_PROF_RECORDS_*), each kernel is filed once, under its launch's scope,
 * with its symbol's name, its range's values and a time: the record's when it has one (here
 * 1.1 x the counter's), else gpu__time_duration.sum.
 */
static void end_to_end(int records)
{
	struct fp_cupti_metrics_status ms;
	struct fp_calltree *t;
	struct fp_diag d;
	uint64_t t0;
	const char *meta;
	int id;
	bool timed = records == FAKE_PROF_RECORDS_TIMED;
	/* per range: dram__bytes_read.sum, sm__throughput...pct (mean), hit rate (mean), and the
	 * gpu__time_duration.sum the collector adds */
	double r0[] = {1000, 80, 50, 1000}, r1[] = {2000, 20, 70, 3000}, r2[] = {500, 60, 10, 2000};

	open_fake();
	fk.fake_prof_set_passes(3);
	fk.fake_prof_set_records(records);
	ASSERT_OK(fp_cupti_metrics_request("dram__bytes_read.sum,"
					   "sm__throughput.avg.pct_of_peak_sustained_elapsed,"
					   "lts__t_sector_hit_rate.pct",
					   16, &d));
	id = start_session(&d);
	ASSERT_GE(id, 0);
	ASSERT(fp_cupti_metrics_active());
	ASSERT_EQ(fk.fake_prof_state(FAKE_PROF_STARTED), 1);
	ASSERT_EQ(fk.fake_prof_state(FAKE_PROF_RANGE_MODE), 1);  /* auto range */
	ASSERT_EQ(fk.fake_prof_state(FAKE_PROF_REPLAY_MODE), 2); /* kernel replay */
	ASSERT_STREQ(fk.fake_prof_metric(1), "sm__throughput.avg.pct_of_peak_sustained_elapsed");
	ASSERT_STREQ(fk.fake_prof_metric(3), "gpu__time_duration.sum"); /* always collected */
	t0 = fp_prof_clock_ns() + 1000000;
	ASSERT_OK(fp_prof_scope_enter(id, "step", 4, 0));
	launch(1, "add", t0, 1100, 0);
	launch(2, "add", t0 + 10000, 3300, 0);
	launch(3, "mm", t0 + 20000, 2200, 0);
	ASSERT_OK(fp_prof_scope_exit(id, "step", 4, NULL));
	ASSERT_OK(fk.fake_prof_add_range(r0, 4));
	ASSERT_OK(fk.fake_prof_add_range(r1, 4));
	ASSERT_OK(fk.fake_prof_add_range(r2, 4));
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	assert_torn_down();
	ASSERT_EQ(fk.fake_prof_state(FAKE_PROF_STOPS), 1);
	ASSERT_EQ(fk.fake_prof_state(FAKE_PROF_DECODES), 1);

	fp_cupti_metrics_last(&ms);
	ASSERT(ms.collected);
	ASSERT_EQ(ms.passes, 3);
	ASSERT_EQ(ms.metrics, 4);
	ASSERT_UEQ(ms.ranges, 3);
	ASSERT_UEQ(ms.kernels, 3);
	ASSERT_UEQ(ms.records, records == FAKE_PROF_RECORDS_NONE ? 0 : 3);
	ASSERT_UEQ(ms.records_timed, timed ? 3 : 0);
	ASSERT_UEQ(ms.attach.attached, 3);
	ASSERT_STREQ(ms.chip, "GH100");
	ASSERT_UEQ(ms.nreasons, 0);

	ASSERT_OK(fp_calltree_read_hatchet(path(".hatchet"), NULL, &t, NULL, &d));
	/* Each kernel once: count, time (record or counter), values. */
	ASSERT_DEQ(hval(t, "step/add", "count"), 2);
	ASSERT_DEQ(hval(t, "step/mm", "count"), 1);
	ASSERT_DEQ(hval(t, "step/add", "time (ns)"), timed ? 4400 : 4000);
	ASSERT_DEQ(hval(t, "step/mm", "time (ns)"), timed ? 2200 : 2000);
	ASSERT_DEQ(hval(t, "step/add", "hw:dram__bytes_read.sum"), 3000);
	ASSERT_DEQ(hval(t, "step/mm", "hw:dram__bytes_read.sum"), 500);
	ASSERT_DEQ(hval(t, "step/add", "hw:gpu__time_duration.sum"), 4000);
	ASSERT_DEQ(hval(t, "step/add", "hw:launches"), 2);
	/* (80 x 1000 + 20 x 3000) / 4000, the same with the records' 1.1x times */
	ASSERT_NEAR(
		hval(t, "step/add", "hw:sm__throughput.avg.pct_of_peak_sustained_elapsed (pty)"),
		35, 1e-9);
	ASSERT_NEAR(hval(t, "step/add", "hw:lts__t_sector_hit_rate.pct (pty)"), 65, 1e-9);
	ASSERT_DEQ(hval(t, "step/mm", "hw:lts__t_sector_hit_rate.pct (pty)"), 10);
	ASSERT_DEQ(hval(t, "fake_kernel", "count"), -1); /* no node from another name */
	fp_calltree_free(t);
	meta = slurp(path(".meta.json"));
	ASSERT(strstr(meta, "\"hw_metrics_passes\": \"3\"") != NULL ||
	       strstr(meta, "\"hw_metrics_passes\":\"3\"") != NULL);
	ASSERT(strstr(meta, "dram__bytes_read.sum=sum") != NULL);
	ASSERT(strstr(meta, "lts__t_sector_hit_rate.pct=mean") != NULL);
	ASSERT(strstr(meta, "gpu__time_duration.sum=sum") != NULL);
	ASSERT(strstr(meta, "kernel replay") != NULL);
	ASSERT(strstr(meta, "hw_metrics_degraded") == NULL);
	ASSERT(strstr(meta, "without timestamps") == NULL); /* untimed records are not drops */
	ASSERT(strstr(meta, "hwm.vendor.json") != NULL);
	{
		const char *v = slurp(path(".vendor.json"));
		const char *r0p = strstr(v, "\"range\": 0");
		const char *r2p = strstr(v, "\"range\": 2");

		ASSERT(strstr(v, "\"vendor\": \"cupti-range-profiler\"") != NULL);
		ASSERT(strstr(v, "\"passes\": 3") != NULL);
		ASSERT(strstr(v, "\"aggregation\": \"time-weighted mean\"") != NULL);
		/* Ranges in launch order, each with its launch's kernel and node. */
		ASSERT_NOT_NULL(r0p);
		ASSERT_NOT_NULL(r2p);
		ASSERT(strstr(r0p, "\"kernel\": \"add\"") != NULL);
		ASSERT(strstr(r0p, "\"node\": \"step/add\"") != NULL);
		ASSERT(strstr(r2p, "\"node\": \"step/mm\"") != NULL);
		ASSERT(strstr(r2p, "\"dram__bytes_read.sum\": 500") != NULL);
		ASSERT(strstr(r0p, timed ? "\"time_source\": \"activity_record\"" :
					   "\"time_source\": \"gpu__time_duration.sum\"") != NULL);
		ASSERT(strstr(v, "\"kernels_without_range\": []") != NULL);
	}
	close_fake();
}

TEST(cupti_metrics_fake_end_to_end)
{
	end_to_end(FAKE_PROF_RECORDS_UNTIMED); /* what the H200 does */
}

TEST(cupti_metrics_fake_no_kernel_records)
{
	end_to_end(FAKE_PROF_RECORDS_NONE);
}

TEST(cupti_metrics_fake_timed_records_counted_once)
{
	end_to_end(FAKE_PROF_RECORDS_TIMED);
}

TEST(cupti_metrics_fake_no_permission)
{
	struct fp_diag d;

	open_fake();
	fk.fake_prof_set_error("cuptiRangeProfilerEnable", 35);
	ASSERT_OK(fp_cupti_metrics_request("default", 0, &d));
	ASSERT_EQ(start_session(&d), FP_ENOTSUP);
	ASSERT(strstr(d.msg, "cuptiRangeProfilerEnable failed") != NULL);
	ASSERT(strstr(d.msg, "NVreg_RestrictProfilingToAdminUsers=0") != NULL);
	ASSERT_EQ(fp_prof_session_count(), 0);
	assert_torn_down();
	/* The request was consumed: the next session runs without metrics. */
	fk.fake_prof_set_error(NULL, 0);
	ASSERT_GE(start_session(&d), 0);
	ASSERT(!fp_cupti_metrics_active());
	ASSERT_EQ(fk.fake_prof_state(FAKE_PROF_INIT), 0);
	close_fake();
}

TEST(cupti_metrics_fake_each_call_fails_cleanly)
{
	static const char *const calls[] = {"cuptiProfilerInitialize",
					    "cuptiDeviceGetChipName",
					    "cuptiProfilerGetCounterAvailability",
					    "cuptiProfilerHostInitialize",
					    "cuptiProfilerHostConfigAddMetrics",
					    "cuptiProfilerHostGetConfigImageSize",
					    "cuptiProfilerHostGetConfigImage",
					    "cuptiProfilerHostGetNumOfPasses",
					    "cuptiRangeProfilerEnable",
					    "cuptiRangeProfilerGetCounterDataSize",
					    "cuptiRangeProfilerCounterDataImageInitialize",
					    "cuptiRangeProfilerSetConfig",
					    "cuptiRangeProfilerStart"};
	struct fp_diag d;
	size_t i;

	open_fake();
	for (i = 0; i < (sizeof(calls) / sizeof(calls[0])); i++) {
		fk.fake_prof_reset();
		fk.fake_prof_set_error(calls[i], 999);
		ASSERT_OK(fp_cupti_metrics_request("dram__bytes_read.sum", 0, &d));
		ASSERT_EQ(start_session(&d), FP_EVENDOR);
		ASSERT(strstr(d.msg, calls[i]) != NULL);
		ASSERT_EQ(fp_prof_session_count(), 0);
		assert_torn_down();
	}
	close_fake();
}

TEST(cupti_metrics_fake_unsupported_dropped_failed_other_context)
{
	struct fp_cupti_metrics_status ms;
	struct fp_calltree *t;
	struct fp_diag d;
	uint64_t t0;
	const char *meta, *v;
	double r0[] = {1, 700}; /* dram__bytes_write.sum, gpu__time_duration.sum */
	int id;

	open_fake();
	fk.fake_prof_set_records(FAKE_PROF_RECORDS_TIMED);
	fk.fake_prof_set_unsupported("nope__x.sum");
	ASSERT_OK(fp_cupti_metrics_request("nope__x.sum,dram__bytes_write.sum", 0, &d));
	id = start_session(&d);
	ASSERT_GE(id, 0);
	ASSERT_STREQ(fk.fake_prof_metric(0), "dram__bytes_write.sum");
	ASSERT_STREQ(fk.fake_prof_metric(1), "gpu__time_duration.sum");
	ASSERT_NULL(fk.fake_prof_metric(2));
	t0 = fp_prof_clock_ns() + 1000000;
	launch(1, "k", t0, 100, 0);
	launch_ex(2, "bad", 0, 0, 0, 1, 1, 0); /* the launch failed: no kernel, no range */
	launch(3, "k", t0 + 1000, 300, 0);
	launch_ex(4, "other", t0 + 500, 50, 0, 1, 0, 1); /* another context: not profiled */
	ASSERT_OK(fk.fake_prof_add_range(r0, 2));
	fk.fake_prof_set_dropped(1); /* the second k's range did not fit */
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	assert_torn_down();
	fp_cupti_metrics_last(&ms);
	ASSERT_UEQ(ms.kernels, 2);
	ASSERT_UEQ(ms.records, 2);
	ASSERT_UEQ(ms.attach.attached, 1);
	ASSERT_UEQ(ms.dropped, 1);
	ASSERT_UEQ(ms.nreasons, 2);
	ASSERT(strstr(ms.reasons[0], "metric_unsupported: nope__x.sum on GH100") != NULL);
	ASSERT(strstr(ms.reasons[1], "ranges_dropped: 1 kernels") != NULL);
	ASSERT_OK(fp_calltree_read_hatchet(path(".hatchet"), NULL, &t, NULL, &d));
	ASSERT_DEQ(hval(t, "k", "count"), 2);
	ASSERT_DEQ(hval(t, "k", "time (ns)"), 400); /* both from their records */
	ASSERT_DEQ(hval(t, "k", "hw:launches"), 1);
	ASSERT_DEQ(hval(t, "k", "hw:dram__bytes_write.sum"), 1);
	ASSERT_DEQ(hval(t, "other", "count"), 1); /* the normal path filed it */
	ASSERT_DEQ(hval(t, "other", "time (ns)"), 50);
	ASSERT_DEQ(hval(t, "other", "hw:launches"), -1);
	ASSERT_DEQ(hval(t, "bad", "count"), -1);
	fp_calltree_free(t);
	meta = slurp(path(".meta.json"));
	ASSERT(strstr(meta, "ranges_dropped") != NULL);
	v = slurp(path(".vendor.json"));
	ASSERT(strstr(v, "\"failed_launches\": 1") != NULL);
	ASSERT(strstr(v, "\"other_context_launches\": 1") != NULL);
	ASSERT(strstr(v, "\"attached\": true") != NULL);
	/* the second k (launch 2: the failed one is launch 1) has no range, and says so */
	{
		const char *kw = strstr(v, "\"kernels_without_range\"");

		ASSERT_NOT_NULL(kw);
		ASSERT(strstr(kw, "\"launch\": 2") != NULL);
		ASSERT(strstr(kw, "\"node\": \"k\"") != NULL);
	}
	close_fake();
}

TEST(cupti_metrics_fake_mismatch_keeps_ranges_apart)
{
	struct fp_cupti_metrics_status ms;
	struct fp_calltree *t;
	struct fp_diag d;
	uint64_t t0;
	const char *meta;
	double r0[] = {1, 700};
	int id;

	open_fake();
	ASSERT_OK(fp_cupti_metrics_request("dram__bytes_write.sum", 0, &d));
	id = start_session(&d);
	ASSERT_GE(id, 0);
	t0 = fp_prof_clock_ns() + 1000000;
	launch(1, "k", t0, 100, 0);
	launch(2, "k", t0 + 1000, 100, 0);
	ASSERT_OK(fk.fake_prof_add_range(r0, 2)); /* one range for two kernels */
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	assert_torn_down();
	fp_cupti_metrics_last(&ms);
	ASSERT_UEQ(ms.kernels, 2);
	ASSERT_UEQ(ms.records, 2);
	ASSERT_UEQ(ms.records_timed, 0);
	ASSERT_UEQ(ms.attach.attached, 0);
	meta = slurp(path(".meta.json"));
	ASSERT(strstr(meta, "range_mismatch: 1 ranges (+0 dropped) for 2 kernel launches") != NULL);
	/* untimed records and no paired counter: the time is unknown, and said so */
	ASSERT(strstr(meta, "kernel_time_unknown: 2 kernels") != NULL);
	/* The kernels are in the tree (counted exactly); no value is attached to a guess. */
	ASSERT(strstr(slurp(path(".hatchet")), "hw:") == NULL);
	ASSERT_OK(fp_calltree_read_hatchet(path(".hatchet"), NULL, &t, NULL, &d));
	ASSERT_DEQ(hval(t, "k", "count"), 2);
	ASSERT_DEQ(hval(t, "k", "time (ns)"), 0);
	fp_calltree_free(t);
	{
		const char *v = slurp(path(".vendor.json"));

		ASSERT(strstr(v, "\"node\": null") != NULL);
		ASSERT(strstr(v, "\"unpaired\": \"range_mismatch\"") != NULL);
		ASSERT(strstr(v, "\"dram__bytes_write.sum\": 1") != NULL);
		ASSERT(strstr(v, "\"attached\": false") != NULL);
		ASSERT(strstr(v, "\"time_source\": \"none\"") != NULL);
	}
	unlink(path(".vendor.json"));

	/* All names unknown: start fails and says which. */
	fk.fake_prof_set_unsupported("nope__x.sum");
	fk.fake_prof_set_unsupported("nope__y.pct");
	fk.fake_prof_set_unsupported("gpu__time_duration.sum");
	ASSERT_OK(fp_cupti_metrics_request("nope__x.sum,nope__y.pct", 0, &d));
	ASSERT_EQ(start_session(&d), FP_ENOTSUP);
	ASSERT(strstr(d.msg, "none of the 3 requested metrics exists on GH100") != NULL);
	assert_torn_down();
	close_fake();
}

TEST(cupti_metrics_fake_graph_launch_not_paired)
{
	struct fp_cupti_metrics_status ms;
	struct fp_diag d;
	double r0[] = {1, 700};
	int id;

	open_fake();
	ASSERT_OK(fp_cupti_metrics_request("dram__bytes_write.sum", 0, &d));
	id = start_session(&d);
	ASSERT_GE(id, 0);
	launch(1, "k", fp_prof_clock_ns(), 100, 0);
	fk.fake_cupti_launch_kernel(FP__CUPTI_CB_DOMAIN_DRIVER_API, FP__CUPTI_DRIVER_cuGraphLaunch,
				    2, NULL, NULL, 0, 0);
	ASSERT_OK(fk.fake_prof_add_range(r0, 2));
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	fp_cupti_metrics_last(&ms);
	ASSERT_UEQ(ms.kernels, 1);
	ASSERT_UEQ(ms.attach.attached, 0);
	ASSERT(strstr(ms.reasons[0], "graph_launch: 1 CUDA graph launches") != NULL);
	ASSERT(strstr(slurp(path(".vendor.json")), "\"unpaired\": \"graph_launch\"") != NULL);
	close_fake();
}

/* No record at all: the grid of the per-program estimate comes from the launch's parameters;
 * the trace shows the kernel at its launch, lasting gpu__time_duration.sum; a kernel launched
 * while the session is inactive is not filed. */
TEST(cupti_metrics_fake_estimates_trace_inactive)
{
	struct fp_prof_options o = {0};
	struct fp_sink_metadata md;
	struct fp_calltree *t;
	struct fp_diag d;
	double r0[] = {8, 1500}, r1[] = {9, 700};
	const char *tr;
	int id;

	open_fake();
	fk.fake_prof_set_records(FAKE_PROF_RECORDS_NONE);
	ASSERT_OK(fp_cupti_metrics_request("dram__bytes_write.sum", 0, &d));
	o.name = path("");
	o.backend = FP_CUPTI_BACKEND;
	o.data = FP_PROF_DATA_TRACE;
	ASSERT_OK(fp_prof_start(&o, &id, &d));
	memset(&md, 0, sizeof(md));
	md.flags = FP_SINK_MD_EST_FLOPS;
	md.est_flops = 10;
	fp_cupti_set_thread_launch_ex(FP_PROF_NO_CALLPATH, &md, FP_CUPTI_LAUNCH_EST_PER_PROGRAM);
	launch_ex(1, "est", 0, 0, 0, 6, 0, 0);
	ASSERT_OK(fp_prof_deactivate(id));
	launch_ex(2, "hidden", 0, 0, 0, 1, 0, 0);
	ASSERT_OK(fp_prof_activate(id));
	ASSERT_OK(fk.fake_prof_add_range(r0, 2));
	ASSERT_OK(fk.fake_prof_add_range(r1, 2));
	ASSERT_OK(fp_prof_finalize(id, NULL, &d));
	ASSERT_OK(fp_calltree_read_hatchet(path(".hatchet"), NULL, &t, NULL, &d));
	ASSERT_DEQ(hval(t, "est", "est_flops"), 60); /* 10 per program x 6 programs */
	ASSERT_DEQ(hval(t, "est", "time (ns)"), 1500);
	ASSERT_DEQ(hval(t, "est", "hw:dram__bytes_write.sum"), 8);
	ASSERT_DEQ(hval(t, "hidden", "count"), -1);
	fp_calltree_free(t);
	ASSERT(strstr(slurp(path(".meta.json")), "session_inactive: 1 kernels") != NULL);
	tr = slurp(path(".chrome_trace.json"));
	ASSERT(strstr(tr, "\"est\"") != NULL);
	ASSERT(strstr(tr, "\"hidden\"") == NULL);
	ASSERT(strstr(tr, "\"dur\": 1.5") != NULL || strstr(tr, "\"dur\":1.5") != NULL);
	close_fake();
}

TEST(cupti_metrics_fake_one_session_at_a_time)
{
	struct fp_diag d;
	int a, b;

	open_fake();
	ASSERT_OK(fp_cupti_metrics_request("dram__bytes_read.sum", 0, &d));
	a = start_session(&d);
	ASSERT_GE(a, 0);
	ASSERT_OK(fp_cupti_metrics_request("dram__bytes_read.sum", 0, &d));
	ASSERT_EQ(start_session(&d), FP_EBUSY);
	ASSERT(strstr(d.msg, "one session at a time") != NULL);
	/* Without metrics a second CUPTI session is fine. */
	b = start_session(&d);
	ASSERT_GE(b, 0);
	ASSERT_OK(fp_prof_finalize(b, NULL, &d));
	ASSERT(fp_cupti_metrics_active());
	ASSERT_OK(fp_prof_finalize(a, NULL, &d));
	assert_torn_down();
	close_fake();
}

static struct fp_cupti_metrics_status oom_last;

/* One metrics session under the failing allocator: start, two launches, their ranges, stop;
 * everything torn down before returning. */
static int metrics_oom_scenario(void)
{
	double r[] = {5, 100};
	struct fp_diag d;
	int id, rc;

	fk.fake_cupti_reset();
	fk.fake_prof_reset();
	rc = fp_cupti_metrics_request("dram__bytes_read.sum", 4, &d);
	if (rc)
		goto out;
	id = start_session(&d);
	if (id < 0) {
		rc = id;
		goto out;
	}
	launch(1, "k", fp_prof_clock_ns(), 10, 0);
	launch(2, "k", fp_prof_clock_ns(), 10, 0);
	fk.fake_prof_add_range(r, 2);
	fk.fake_prof_add_range(r, 2);
	rc = fp_prof_finalize(id, NULL, &d);
	fp_cupti_metrics_last(&oom_last);
out:
	fp__cupti_reset();
	fp_prof_shutdown();
	return rc;
}

TEST(cupti_metrics_fake_oom)
{
	long i, total;
	int rc;

	open_fake();
	fpt_oom_install(-1);
	ASSERT_OK(metrics_oom_scenario());
	total = fpt_oom_count();
	ASSERT_EQ(fpt_oom_live(), 0);
	fpt_oom_uninstall();
	ASSERT_UEQ(oom_last.attach.attached, 2);
	for (i = 0; i < total; i++) {
		fpt_oom_install(i);
		rc = metrics_oom_scenario();
		if (fpt_oom_live() != 0)
			fpt_fail(__FILE__, __LINE__, "fail_at %ld: %ld blocks leaked", i,
				 fpt_oom_live());
		fpt_oom_uninstall();
		/* Losses after start are reasons and counts, not errors. */
		ASSERT(rc == FP_OK || rc == FP_ENOMEM);
		assert_torn_down();
	}
	ASSERT_OK(fp_cupti_register());
	close_fake();
}
