/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Roofline positions (include/flagprism/roofline.h): which source each number comes from
 * (hardware counters, Nsight Compute, launch metadata, IR estimates, in that order), the peaks
 * used (CUDA-core FP32 for counted FFMA, the table's width-specific peak otherwise), the bound,
 * and the rendered table's order. Expected values are computed here from the inputs.
 */
#define _GNU_SOURCE 1
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <flagprism/calltree.h>
#include <flagprism/roofline.h>

#include "test.h"

#define SMS 132.0
#define CLOCK_KHZ 1980000.0
#define BUS 6144.0
#define MCLOCK_KHZ 3201000.0

static struct fp_calltree *tree_with_device(void)
{
	struct fp_calltree *t = fp_calltree_new(NULL);

	ASSERT_NOT_NULL(t);
	ASSERT_OK(fp_calltree_device_set_str(t, "CUDA", "0", "arch", "90"));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "0", "num_sms", SMS));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "0", "clock_rate", CLOCK_KHZ));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "0", "bus_width", BUS));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "0", "memory_clock_rate", MCLOCK_KHZ));
	ASSERT_OK(fp_calltree_device_set_str(t, "CPU", "0", "arch", "interpreter"));
	return t;
}

static void put(struct fp_calltree *t, uint32_t node, const char *name, double v)
{
	uint32_t m;

	ASSERT_OK(fp_calltree_metric_auto(t, name, strlen(name), &m));
	ASSERT_OK(fp_calltree_add_metric(t, node, m, v));
}

static uint32_t kernel(struct fp_calltree *t, const char *name, const char *type, double ns)
{
	uint32_t f, node, m;

	ASSERT_OK(fp_calltree_intern(t, name, strlen(name), &f));
	ASSERT_OK(fp_calltree_child(t, FP_CALLTREE_ROOT, f, &node));
	ASSERT_OK(fp_calltree_metric(t, "device_id", 9, FP_METRIC_PROPERTY, &m));
	ASSERT_OK(fp_calltree_set_string(t, node, m, "0", 1));
	ASSERT_OK(fp_calltree_metric(t, "device_type", 11, FP_METRIC_PROPERTY, &m));
	ASSERT_OK(fp_calltree_set_string(t, node, m, type, strlen(type)));
	put(t, node, "time (ns)", ns);
	put(t, node, "count", 1);
	return node;
}

TEST(roofline_sources_and_bounds)
{
	const double bw = 2.0 * BUS * MCLOCK_KHZ * 1e3 / 8.0;
	const double ffma_peak = SMS * 128 * 2 * CLOCK_KHZ * 1e3;
	struct fp_calltree *t = tree_with_device();
	struct fp_roofline_point p;
	uint32_t hw, ncu, md, est, cpu, notime;

	hw = kernel(t, "hw_k", "CUDA", 1e6); /* 1 ms */
	put(t, hw, "hw:smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 1e10);
	put(t, hw, "hw:smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 1e9);
	put(t, hw, "hw:dram__bytes_read.sum", 3e8);
	put(t, hw, "hw:dram__bytes_write.sum", 1e8);
	put(t, hw, "est_flops", 1); /* counters win over estimates */
	ncu = kernel(t, "ncu_k", "CUDA", 2e6);
	put(t, ncu, "ncu:dram__bytes_read.sum (byte)", 4e9);
	put(t, ncu, "ncu:dram__bytes_write.sum (byte)", 2e9);
	put(t, ncu, "ncu:smsp__sass_thread_inst_executed_op_ffma_pred_on.sum (inst)", 1e9);
	md = kernel(t, "md_k", "CUDA", 1e6);
	put(t, md, "flops16", 5e11);
	put(t, md, "flops32", 1e9);
	put(t, md, "bytes", 1e9);
	est = kernel(t, "est_k", "CUDA", 4e6);
	put(t, est, "est_flops", 1e9);
	put(t, est, "est_bytes", 1e10);
	cpu = kernel(t, "cpu_k", "CPU", 1e3);
	put(t, cpu, "est_bytes", 100);
	{
		uint32_t f;

		ASSERT_OK(fp_calltree_intern(t, "scope", 5, &f));
		ASSERT_OK(fp_calltree_child(t, FP_CALLTREE_ROOT, f, &notime));
	}
	ASSERT_OK(fp_calltree_finalize(t));

	ASSERT_OK(fp_roofline_point(t, hw, &p));
	ASSERT_EQ(p.flops_src, FP_ROOFLINE_COUNTERS);
	ASSERT_EQ(p.bytes_src, FP_ROOFLINE_COUNTERS);
	ASSERT_DEQ(p.flops, 2e10 + 1e9);
	ASSERT_DEQ(p.bytes, 4e8);
	ASSERT_NEAR(p.flop_per_s, 2.1e13, 1e3);
	ASSERT_NEAR(p.intensity, 52.5, 1e-12);
	ASSERT_NEAR(p.peak_flops, ffma_peak, 1);
	ASSERT_NEAR(p.peak_bytes_per_s, bw, 1);
	ASSERT_STREQ(p.bound, 52.5 < ffma_peak / bw ? "memory" : "compute");
	ASSERT_NEAR(p.pct_of_roof, 100 * 2.1e13 / fmin(ffma_peak, 52.5 * bw), 1e-9);
	ASSERT_STREQ(fp_roofline_source_name(p.flops_src), "counters");

	ASSERT_OK(fp_roofline_point(t, ncu, &p));
	ASSERT_EQ(p.flops_src, FP_ROOFLINE_NCU);
	ASSERT_EQ(p.bytes_src, FP_ROOFLINE_NCU);
	ASSERT_DEQ(p.bytes, 6e9);
	ASSERT_DEQ(p.flops, 2e9);
	ASSERT_STREQ(p.bound, "memory");

	ASSERT_OK(fp_roofline_point(t, md, &p));
	ASSERT_EQ(p.flops_src, FP_ROOFLINE_METADATA);
	ASSERT_EQ(p.flops_width, 16); /* the width with the most FLOPs */
	ASSERT_DEQ(p.flops, 5e11 + 1e9);
	ASSERT_EQ(p.bytes_src, FP_ROOFLINE_METADATA);
	ASSERT_STREQ(p.bound, "compute");

	ASSERT_OK(fp_roofline_point(t, est, &p));
	ASSERT_EQ(p.flops_src, FP_ROOFLINE_ESTIMATE);
	ASSERT_EQ(p.bytes_src, FP_ROOFLINE_ESTIMATE);
	ASSERT_NEAR(p.intensity, 0.1, 1e-15);
	ASSERT_STREQ(p.bound, "memory");
	ASSERT_NEAR(p.roof, 0.1 * bw, 1);

	ASSERT_OK(fp_roofline_point(t, cpu, &p));
	ASSERT(!p.peaks_known);
	ASSERT(isnan(p.pct_of_roof));
	ASSERT(isnan(p.flops));
	ASSERT_STREQ(p.bound, "unknown");
	ASSERT_STREQ(fp_roofline_source_name(p.flops_src), "-");

	ASSERT_EQ(fp_roofline_point(t, notime, &p), FP_ENOENT);
	ASSERT_EQ(fp_roofline_point(t, 9999, &p), FP_EINVAL);
	ASSERT_EQ(fp_roofline_point(NULL, hw, &p), FP_EINVAL);

	{
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		const char *a, *b;

		ASSERT_NOT_NULL(f);
		ASSERT_OK(fp_roofline_render(t, 3, false, f));
		fclose(f);
		ASSERT(strstr(buf, "device CUDA 0: arch 90") != NULL);
		ASSERT(strstr(buf, "device CPU 0: no peaks") != NULL);
		/* Largest time first: est_k (4 ms), ncu_k (2 ms), then hw_k/md_k (1 ms, by id). */
		a = strstr(buf, "est_k");
		b = strstr(buf, "ncu_k");
		ASSERT(a && b && a < b);
		ASSERT(strstr(buf, "hw_k") != NULL);
		ASSERT(strstr(buf, "md_k") == NULL);
		ASSERT(strstr(buf, "(2 more kernel nodes)") != NULL);
		free(buf);
	}
	fp_calltree_free(t);
}
