/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for reading Nsight Compute CSV (include/flagprism/ncu.h): values with thousands
 * separators, unit scaling, the sum/mean rule, tree metric names, the raw page with its units
 * row, the details page, tool lines and degradations, odd rows, and the OOM sweep. The inputs
 * in tests/data/ncu are synthetic (see the README there). */
#include <math.h>

#include <flagprism/alloc.h>
#include <flagprism/ncu.h>

#include "test.h"

static struct fp_ncu_report *parse_str(const char *text)
{
	struct fp_ncu_report *r = NULL;
	struct fp_diag d;

	ASSERT_OK(fp_ncu_parse(text, strlen(text), NULL, &r, &d));
	ASSERT_NOT_NULL(r);
	return r;
}

static struct fp_ncu_report *read_data(const char *name)
{
	struct fp_ncu_report *r = NULL;
	struct fp_diag d;

	if (fp_ncu_read(fpt_data_path(name), NULL, &r, &d) != FP_OK)
		fpt_fail(__FILE__, __LINE__, "%s: %s", name, d.msg);
	return r;
}

static const struct fp_ncu_metric *metric(const struct fp_ncu_launch *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->nmetrics; i++)
		if (strcmp(l->metrics[i].name, name) == 0)
			return &l->metrics[i];
	return NULL;
}

static const struct fp_ncu_degradation *deg(const struct fp_ncu_report *r, const char *kind)
{
	size_t i;

	for (i = 0; i < fp_ncu_report_degradation_count(r); i++)
		if (strcmp(fp_ncu_report_degradation(r, i)->kind, kind) == 0)
			return fp_ncu_report_degradation(r, i);
	return NULL;
}

TEST(ncu_parse_value)
{
	double v;

	ASSERT(fp_ncu_parse_value("1,234", 5, &v));
	ASSERT_DEQ(v, 1234);
	ASSERT(fp_ncu_parse_value("16,777,216", 10, &v));
	ASSERT_DEQ(v, 16777216);
	ASSERT(fp_ncu_parse_value("12,345.67", 9, &v));
	ASSERT_DEQ(v, 12345.67);
	ASSERT(fp_ncu_parse_value(" -0.5 ", 6, &v));
	ASSERT_DEQ(v, -0.5);
	ASSERT(fp_ncu_parse_value("2.5e+03", 7, &v));
	ASSERT_DEQ(v, 2500);
	ASSERT(fp_ncu_parse_value(".5", 2, &v));
	ASSERT_DEQ(v, 0.5);
	ASSERT(fp_ncu_parse_value("+7", 2, &v));
	ASSERT_DEQ(v, 7);
	ASSERT(!fp_ncu_parse_value("n/a", 3, &v));
	ASSERT(!fp_ncu_parse_value("", 0, &v));
	ASSERT(!fp_ncu_parse_value("1,23", 4, &v));
	ASSERT(!fp_ncu_parse_value("1234,567", 8, &v));
	ASSERT(!fp_ncu_parse_value(",123", 4, &v));
	ASSERT(!fp_ncu_parse_value("1,234,56", 8, &v));
	ASSERT(!fp_ncu_parse_value("(128, 1, 1)", 11, &v));
	ASSERT(!fp_ncu_parse_value("1e", 2, &v));
	ASSERT(!fp_ncu_parse_value("1e999", 5, &v));
	ASSERT(!fp_ncu_parse_value("-", 1, &v));
	ASSERT(!fp_ncu_parse_value("12 3", 4, &v));
	ASSERT(!fp_ncu_parse_value("0x10", 4, &v));
	ASSERT(!fp_ncu_parse_value("inf", 3, &v));
	{
		/* Digits up to the internal buffer's size, then "." and an exponent. */
		char big[200];
		size_t k;

		for (k = 120; k < 130; k++) {
			memset(big, '9', k);
			memcpy(big + k, ".e+1", 4);
			(void)fp_ncu_parse_value(big, k + 4, &v);
			memcpy(big + k, ".5e-1", 5);
			(void)fp_ncu_parse_value(big, k + 5, &v);
		}
		memset(big, '1', 100);
		ASSERT(fp_ncu_parse_value(big, 100, &v));
		ASSERT_NEAR(v, 1.111111111111111e99, 1e85);
	}
}

TEST(ncu_parse_unit_base)
{
	char base[32];
	double f;

	ASSERT(fp_ncu_unit_base("Kbyte", &f, base, sizeof(base)));
	ASSERT_STREQ(base, "byte");
	ASSERT_DEQ(f, 1e3);
	ASSERT(fp_ncu_unit_base("Gbyte", &f, base, sizeof(base)));
	ASSERT_DEQ(f, 1e9);
	ASSERT(fp_ncu_unit_base("usecond", &f, base, sizeof(base)));
	ASSERT_STREQ(base, "nsecond");
	ASSERT_DEQ(f, 1e3);
	ASSERT(fp_ncu_unit_base("second", &f, base, sizeof(base)));
	ASSERT_STREQ(base, "nsecond");
	ASSERT_DEQ(f, 1e9);
	ASSERT(fp_ncu_unit_base("Gbyte/second", &f, base, sizeof(base)));
	ASSERT_STREQ(base, "byte/second");
	ASSERT_DEQ(f, 1e9);
	ASSERT(fp_ncu_unit_base("cycle/nsecond", &f, base, sizeof(base)));
	ASSERT_STREQ(base, "cycle/second");
	ASSERT_NEAR(f, 1e9, 1e-3);
	ASSERT(fp_ncu_unit_base("cycle/usecond", &f, base, sizeof(base)));
	ASSERT_NEAR(f, 1e6, 1e-6);
	ASSERT(fp_ncu_unit_base("Msector", &f, base, sizeof(base)));
	ASSERT_STREQ(base, "sector");
	ASSERT_DEQ(f, 1e6);
	ASSERT(fp_ncu_unit_base("%", &f, base, sizeof(base)));
	ASSERT_STREQ(base, "%");
	ASSERT_DEQ(f, 1);
	ASSERT(fp_ncu_unit_base("register/thread", &f, base, sizeof(base)));
	ASSERT_STREQ(base, "register/thread");
	ASSERT(fp_ncu_unit_base("", &f, base, sizeof(base)));
	ASSERT_STREQ(base, "");
	ASSERT(fp_ncu_unit_base("KB", &f, base, sizeof(base))); /* not ncu's spelling: as is */
	ASSERT_STREQ(base, "KB");
	ASSERT_DEQ(f, 1);
	ASSERT(!fp_ncu_unit_base("Gbyte/second", &f, base, 8));
}

TEST(ncu_parse_aggregation_rule)
{
	ASSERT_EQ(fp_ncu_metric_agg("", "dram__bytes_read.sum", "byte"), FP_NCU_AGG_SUM);
	ASSERT_EQ(fp_ncu_metric_agg("", "gpu__time_duration.sum", "nsecond"), FP_NCU_AGG_SUM);
	ASSERT_EQ(fp_ncu_metric_agg("", "sm__cycles_elapsed.avg", "cycle"), FP_NCU_AGG_SUM);
	ASSERT_EQ(fp_ncu_metric_agg("", "smsp__inst_executed.sum", ""), FP_NCU_AGG_SUM);
	ASSERT_EQ(fp_ncu_metric_agg("", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "%"),
		  FP_NCU_AGG_MEAN);
	ASSERT_EQ(fp_ncu_metric_agg("", "dram__bytes.sum.per_second", "byte/second"),
		  FP_NCU_AGG_MEAN);
	ASSERT_EQ(fp_ncu_metric_agg("", "lts__t_sector_hit_rate.pct", "%"), FP_NCU_AGG_MEAN);
	ASSERT_EQ(fp_ncu_metric_agg("", "launch__registers_per_thread", "register/thread"),
		  FP_NCU_AGG_MEAN);
	ASSERT_EQ(fp_ncu_metric_agg("", "launch__shared_mem_per_block_static", "byte"),
		  FP_NCU_AGG_MEAN);
	ASSERT_EQ(fp_ncu_metric_agg("", "sm__cycles_active.max", "cycle"), FP_NCU_AGG_MEAN);
	ASSERT_EQ(fp_ncu_metric_agg("GPU Speed Of Light Throughput", "Duration", "nsecond"),
		  FP_NCU_AGG_SUM);
	ASSERT_EQ(fp_ncu_metric_agg("GPU Speed Of Light Throughput", "Elapsed Cycles", "cycle"),
		  FP_NCU_AGG_SUM);
	ASSERT_EQ(fp_ncu_metric_agg("GPU Speed Of Light Throughput", "DRAM Throughput", "%"),
		  FP_NCU_AGG_MEAN);
	ASSERT_EQ(
		fp_ncu_metric_agg("Launch Statistics", "Shared Memory Configuration Size", "byte"),
		FP_NCU_AGG_MEAN);
	ASSERT_EQ(fp_ncu_metric_agg("Warp State Statistics", "Warp Cycles Per Issued Instruction",
				    "cycle"),
		  FP_NCU_AGG_MEAN);
	ASSERT_EQ(fp_ncu_metric_agg("Occupancy", "Achieved Active Warps", "warp"), FP_NCU_AGG_MEAN);
	ASSERT_EQ(fp_ncu_metric_agg("Launch Statistics", "Waves Per SM", ""), FP_NCU_AGG_MEAN);
}

TEST(ncu_parse_tree_metric_names)
{
	struct fp_ncu_metric m;
	char buf[256];

	memset(&m, 0, sizeof(m));
	m.section = "";
	m.name = "dram__bytes_read.sum";
	m.base_unit = "byte";
	m.agg = FP_NCU_AGG_SUM;
	ASSERT_EQ(fp_ncu_tree_metric_name(&m, buf, sizeof(buf)), 31);
	ASSERT_STREQ(buf, "ncu:dram__bytes_read.sum (byte)");
	m.section = "Command line profiler metrics"; /* ncu names do not take the section */
	fp_ncu_tree_metric_name(&m, buf, sizeof(buf));
	ASSERT_STREQ(buf, "ncu:dram__bytes_read.sum (byte)");
	m.section = "GPU Speed Of Light Throughput";
	m.name = "L1/TEX Cache Throughput";
	m.base_unit = "%";
	m.agg = FP_NCU_AGG_MEAN;
	fp_ncu_tree_metric_name(&m, buf, sizeof(buf));
	ASSERT_STREQ(buf, "ncu:GPU Speed Of Light Throughput:L1-TEX Cache Throughput (%) (pty)");
	m.name = "Compute (SM) Throughput, all";
	fp_ncu_tree_metric_name(&m, buf, sizeof(buf));
	ASSERT_STREQ(buf,
		     "ncu:GPU Speed Of Light Throughput:Compute [SM] Throughput; all (%) (pty)");
	m.section = "";
	m.name = "Waves";
	m.base_unit = "";
	fp_ncu_tree_metric_name(&m, buf, sizeof(buf));
	ASSERT_STREQ(buf, "ncu:Waves (pty)");
	ASSERT_EQ(fp_ncu_tree_metric_name(&m, buf, 6), 5);
	ASSERT_STREQ(buf, "ncu:W");
	ASSERT_EQ(fp_ncu_tree_metric_name(&m, buf, 0), FP_EINVAL);
}

TEST(ncu_parse_raw_page)
{
	struct fp_ncu_report *r = read_data("ncu/raw-base.csv");
	const struct fp_ncu_launch *l;
	const struct fp_ncu_metric *m;
	const struct fp_ncu_record *rec;
	const struct fp_ncu_degradation *d;

	ASSERT_EQ(fp_ncu_report_page(r), FP_NCU_PAGE_RAW);
	ASSERT_EQ(fp_ncu_report_launch_count(r), 7);
	ASSERT_EQ(fp_ncu_report_record_count(r), 9); /* header, units, 7 launches */
	ASSERT_EQ(fp_ncu_report_message_count(r), 9);
	ASSERT_UEQ(fp_ncu_report_messages_seen(r), 9);
	ASSERT(strncmp(fp_ncu_report_message(r, 0), "==PROF== Connected", 18) == 0);
	rec = fp_ncu_report_record(r, 0);
	ASSERT_EQ(rec->kind, FP_NCU_RECORD_HEADER);
	ASSERT_EQ(rec->line, 10);
	ASSERT_EQ(fp_ncu_report_record(r, 1)->kind, FP_NCU_RECORD_UNITS);
	rec = fp_ncu_report_record(r, 2);
	ASSERT_EQ(rec->kind, FP_NCU_RECORD_DATA);
	ASSERT_UEQ(rec->launch, 0);
	ASSERT_UEQ(rec->header, 0);
	ASSERT_EQ(rec->nfields, 16);

	l = fp_ncu_report_launch(r, 0);
	ASSERT_STREQ(l->id, "0");
	ASSERT_STREQ(l->process_id, "4242");
	ASSERT_STREQ(l->kernel, "add_kernel");
	ASSERT_STREQ(l->device, "0");
	ASSERT(l->has_grid && l->has_block);
	ASSERT_EQ(l->grid[0], 4096);
	ASSERT_EQ(l->grid[1], 1);
	ASSERT_EQ(l->block[0], 1024);
	ASSERT_UEQ(l->first_record, 2);
	ASSERT_EQ(l->nrecords, 1);
	ASSERT_EQ(l->nmetrics, 5);
	ASSERT_DEQ(l->duration_ns, 10000);
	m = metric(l, "dram__bytes_read.sum");
	ASSERT_NOT_NULL(m);
	ASSERT_STREQ(m->text, "16,777,216");
	ASSERT_STREQ(m->unit, "byte");
	ASSERT_STREQ(m->base_unit, "byte");
	ASSERT_STREQ(m->section, "");
	ASSERT(m->has_value);
	ASSERT_DEQ(m->value, 16777216);
	ASSERT_EQ(m->agg, FP_NCU_AGG_SUM);
	ASSERT_UEQ(m->record, 2);
	m = metric(l, "sm__throughput.avg.pct_of_peak_sustained_elapsed");
	ASSERT_EQ(m->agg, FP_NCU_AGG_MEAN);
	ASSERT_DEQ(m->value, 20);

	l = fp_ncu_report_launch(r, 2);
	ASSERT_EQ(l->grid[0], 8);
	ASSERT_EQ(l->grid[1], 8);
	ASSERT_EQ(l->grid[2], 1);
	l = fp_ncu_report_launch(r, 5);
	ASSERT(strncmp(l->kernel, "void at::native::vectorized_elementwise_kernel<4,", 49) == 0);
	m = metric(l, "dram__bytes_read.sum");
	ASSERT(!m->has_value);
	d = deg(r, "metric_not_available");
	ASSERT_NOT_NULL(d);
	ASSERT_STREQ(d->detail, "dram__bytes_read.sum");
	ASSERT_UEQ(d->count, 1);
	ASSERT_UEQ(d->first_record, 7);
	ASSERT_NULL(deg(r, "counter_permission"));
	fp_ncu_report_free(r);
}

TEST(ncu_parse_raw_auto_units_crlf)
{
	struct fp_ncu_report *r = read_data("ncu/raw-auto-crlf.csv");
	const struct fp_ncu_launch *l = fp_ncu_report_launch(r, 0);

	ASSERT_EQ(fp_ncu_report_launch_count(r), 2);
	ASSERT_EQ(fp_ncu_report_message_count(r), 0);
	ASSERT_NEAR(metric(l, "dram__bytes_read.sum")->value, 16.78e6, 1e-3);
	ASSERT_STREQ(metric(l, "dram__bytes_read.sum")->unit, "Mbyte");
	ASSERT_NEAR(metric(l, "dram__bytes_write.sum")->value, 8388610, 1e-3);
	ASSERT_DEQ(metric(l, "gpu__time_duration.sum")->value, 10000);
	ASSERT_STREQ(metric(l, "gpu__time_duration.sum")->base_unit, "nsecond");
	ASSERT_DEQ(l->duration_ns, 10000);
	ASSERT_STREQ(l->kernel, "add_kernel");
	fp_ncu_report_free(r);
}

TEST(ncu_parse_details_page)
{
	struct fp_ncu_report *r = read_data("ncu/details.csv");
	const struct fp_ncu_launch *l;
	const struct fp_ncu_metric *m;
	const struct fp_ncu_degradation *d;

	ASSERT_EQ(fp_ncu_report_page(r), FP_NCU_PAGE_DETAILS);
	ASSERT_EQ(fp_ncu_report_launch_count(r), 2);
	ASSERT_EQ(fp_ncu_report_record_count(r), 1 + 2 * 13);
	l = fp_ncu_report_launch(r, 0);
	ASSERT_STREQ(l->kernel, "add_kernel");
	ASSERT_EQ(l->nrecords, 13);
	ASSERT_EQ(l->nmetrics, 13);
	ASSERT_UEQ(l->first_record, 1);
	ASSERT_EQ(l->grid[0], 4096);
	ASSERT_NEAR(l->duration_ns, 10020, 1e-6); /* "Duration" in usecond */
	m = metric(l, "Elapsed Cycles");
	ASSERT_STREQ(m->section, "GPU Speed Of Light Throughput");
	ASSERT_DEQ(m->value, 15913);
	ASSERT_EQ(m->agg, FP_NCU_AGG_SUM);
	m = metric(l, "SM Active Cycles");
	ASSERT_NEAR(m->value, 12345.67, 1e-9);
	m = metric(l, "DRAM Frequency");
	ASSERT_STREQ(m->base_unit, "cycle/second");
	ASSERT_NEAR(m->value, 2.62e9, 1e-3);
	ASSERT_EQ(m->agg, FP_NCU_AGG_MEAN);
	m = metric(l, "dram__bytes_write.sum");
	ASSERT_NEAR(m->value, 8.39e6, 1e-6);
	ASSERT_STREQ(m->section, "Command line profiler metrics");
	m = metric(l, "lts__t_sector_hit_rate.pct");
	ASSERT(!m->has_value);
	l = fp_ncu_report_launch(r, 1);
	ASSERT_STREQ(l->kernel, "matmul_kernel");
	ASSERT_UEQ(l->first_record, 14);
	ASSERT_NEAR(metric(l, "dram__bytes_write.sum")->value, 262140, 1e-6);
	ASSERT_NEAR(metric(l, "lts__t_sector_hit_rate.pct")->value, 91.2, 1e-12);
	d = deg(r, "metric_not_available");
	ASSERT_STREQ(d->detail, "Command line profiler metrics: lts__t_sector_hit_rate.pct");
	ASSERT_UEQ(d->count, 1);
	fp_ncu_report_free(r);
}

TEST(ncu_parse_details_interleaved_and_duplicates)
{
	/* Launch rows need not be adjacent; a repeated metric counts once. */
	static const char text[] =
		"\"ID\",\"Process ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\","
		"\"Metric Unit\",\"Metric Value\"\n"
		"\"0\",\"1\",\"k\",\"S\",\"m__a.sum\",\"byte\",\"1\"\n"
		"\"1\",\"1\",\"k\",\"S\",\"m__a.sum\",\"byte\",\"2\"\n"
		"\"0\",\"1\",\"k\",\"S\",\"m__b.sum\",\"byte\",\"3\"\n"
		"\"0\",\"1\",\"k\",\"T\",\"m__a.sum\",\"byte\",\"99\"\n"
		"\"0\",\"2\",\"k\",\"S\",\"m__a.sum\",\"byte\",\"4\"\n"
		"\"0\",\"1\",\"k\",\"Rules\",\"\",\"\",\"\"\n";
	struct fp_ncu_report *r = parse_str(text);
	const struct fp_ncu_launch *l;
	const struct fp_ncu_degradation *d;

	ASSERT_EQ(fp_ncu_report_launch_count(r), 3); /* (pid 1, 0), (1, 1), (2, 0) */
	l = fp_ncu_report_launch(r, 0);
	ASSERT_EQ(l->nrecords, 3);
	ASSERT_EQ(l->nmetrics, 2);
	ASSERT_DEQ(metric(l, "m__a.sum")->value, 1);
	ASSERT_DEQ(metric(l, "m__b.sum")->value, 3);
	ASSERT_DEQ(metric(fp_ncu_report_launch(r, 1), "m__a.sum")->value, 2);
	ASSERT_DEQ(metric(fp_ncu_report_launch(r, 2), "m__a.sum")->value, 4);
	ASSERT_STREQ(fp_ncu_report_launch(r, 2)->process_id, "2");
	d = deg(r, "duplicate_metric");
	ASSERT_NOT_NULL(d);
	ASSERT_STREQ(d->detail, "T: m__a.sum");
	ASSERT_UEQ(d->first_record, 4);
	ASSERT_EQ(fp_ncu_report_record(r, 6)->kind, FP_NCU_RECORD_OTHER);
	fp_ncu_report_free(r);
}

TEST(ncu_parse_tool_lines_and_permission)
{
	struct fp_ncu_report *r = read_data("ncu/no-permission.csv");
	const struct fp_ncu_degradation *d;

	ASSERT_EQ(fp_ncu_report_page(r), FP_NCU_PAGE_NONE);
	ASSERT_EQ(fp_ncu_report_launch_count(r), 0);
	ASSERT_EQ(fp_ncu_report_message_count(r), 4);
	d = deg(r, "counter_permission");
	ASSERT_NOT_NULL(d);
	ASSERT(strstr(d->detail, "ERR_NVGPUCTRPERM") != NULL);
	ASSERT_UEQ(d->first_record, FP_NCU_NONE);
	ASSERT_NOT_NULL(deg(r, "ncu_warning"));
	ASSERT_NOT_NULL(deg(r, "no_launches"));
	fp_ncu_report_free(r);

	r = parse_str("==ERROR== Failed to find metric dram__bogus.sum\n"
		      "==WARNING== Kernel replay failed: kernel modifies its own inputs\n"
		      "==WARNING== Kernel replay failed: kernel modifies its own inputs\n"
		      "hello from the program\n");
	ASSERT_STREQ(deg(r, "metric_unsupported")->detail,
		     "==ERROR== Failed to find metric dram__bogus.sum");
	ASSERT_UEQ(deg(r, "replay")->count, 2);
	ASSERT_NULL(deg(r, "ncu_error"));
	ASSERT_EQ(fp_ncu_report_message_count(r), 4);
	fp_ncu_report_free(r);
}

TEST(ncu_parse_messages_cap_and_odd_rows)
{
	struct fp_ncu_limits lim = {.max_messages = 2};
	struct fp_ncu_report *r = NULL;
	struct fp_diag d;
	static const char text[] = "one\n\"orphan\",\"row\"\ntwo\r\nthree\n"
				   "\"ID\",\"Kernel Name\",\"Grid Size\",\"x__y.sum\"\n"
				   "\"\",\"\",\"\",\"Kbyte\"\n"
				   "\"0\",\"k\",\"(2, 3, 4)\",\"1.5\"\n"
				   "\"1\",\"k\"\n"
				   "\"2\",\"k\",\"(2, 3)\",\"big\"\n"
				   "\n";

	ASSERT_OK(fp_ncu_parse(text, sizeof(text) - 1, &lim, &r, &d));
	ASSERT_EQ(fp_ncu_report_message_count(r), 2);
	ASSERT_UEQ(fp_ncu_report_messages_seen(r), 3);
	ASSERT_STREQ(fp_ncu_report_message(r, 1), "two"); /* CR dropped */
	ASSERT_EQ(fp_ncu_report_record(r, 0)->kind, FP_NCU_RECORD_OTHER);
	ASSERT_NOT_NULL(deg(r, "no_header"));
	ASSERT_EQ(fp_ncu_report_launch_count(r), 2);
	ASSERT_EQ(fp_ncu_report_launch(r, 0)->grid[2], 4);
	ASSERT_DEQ(fp_ncu_report_launch(r, 0)->metrics[0].value, 1500);
	ASSERT(!fp_ncu_report_launch(r, 1)->has_grid);
	ASSERT_EQ(fp_ncu_report_record(r, 4)->kind, FP_NCU_RECORD_BAD);
	ASSERT_STREQ(deg(r, "row_shape")->detail, "row has 2 fields, its header 4");
	ASSERT_STREQ(deg(r, "value_not_numeric")->detail, "x__y.sum");
	fp_ncu_report_free(r);
}

TEST(ncu_parse_several_headers)
{
	/* Two outputs concatenated: a raw page then a details page. */
	struct fp_ncu_report *r = parse_str(
		"\"ID\",\"Kernel Name\",\"a__b.sum\"\n\"\",\"\",\"byte\"\n\"0\",\"k\",\"5\"\n"
		"\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\","
		"\"Metric Value\"\n\"0\",\"k2\",\"\",\"a__b.sum\",\"byte\",\"7\"\n");

	ASSERT_EQ(fp_ncu_report_page(r), FP_NCU_PAGE_MIXED);
	ASSERT_EQ(fp_ncu_report_launch_count(r), 2);
	ASSERT_STREQ(fp_ncu_report_launch(r, 1)->kernel, "k2");
	ASSERT_UEQ(fp_ncu_report_record(r, 4)->header, 3);
	fp_ncu_report_free(r);
}

TEST(ncu_parse_errors)
{
	struct fp_ncu_report *r = NULL;
	struct fp_ncu_limits lim = {.max_records = 2};
	struct fp_diag d;
	static const char bad[] = "==PROF== x\n\"ID\",\"Kernel Name\"\n\"0\",\"k\"x\n";

	ASSERT_EQ(fp_ncu_parse(bad, sizeof(bad) - 1, NULL, &r, &d), FP_EFORMAT);
	ASSERT_NULL(r);
	ASSERT_EQ(d.line, 3);
	ASSERT_EQ(d.col, 8);
	ASSERT_EQ(fp_ncu_parse("\"a\"\n\"b\"\n\"c\"\n", 12, &lim, &r, &d), FP_ELIMIT);
	ASSERT_EQ(d.line, 3);
	ASSERT_EQ(fp_ncu_parse(NULL, 3, NULL, &r, &d), FP_EINVAL);
	ASSERT_EQ(fp_ncu_read("/nonexistent/x.csv", NULL, &r, &d), FP_EIO);
	ASSERT(strstr(d.msg, "/nonexistent/x.csv") != NULL);
	ASSERT_OK(fp_ncu_parse("", 0, NULL, &r, &d));
	ASSERT_EQ(fp_ncu_report_launch_count(r), 0);
	fp_ncu_report_free(r);
	fp_ncu_report_free(NULL);
}

TEST(ncu_parse_oom_sweep)
{
	static const char text[] =
		"==PROF== hi\n==ERROR== ERR_NVGPUCTRPERM\n"
		"\"ID\",\"Process ID\",\"Kernel Name\",\"Grid Size\",\"Section Name\","
		"\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
		"\"0\",\"1\",\"k\",\"(1, 1, 1)\",\"S\",\"a__b.sum\",\"Kbyte\",\"1,000\"\n"
		"\"0\",\"1\",\"k\",\"(1, 1, 1)\",\"S\",\"a__b.sum\",\"Kbyte\",\"1,000\"\n"
		"\"1\",\"1\",\"k\",\"(1, 1, 1)\",\"S\",\"Duration\",\"usecond\",\"n/a\"\n";
	long fail_at;

	for (fail_at = 0;; fail_at++) {
		struct fp_ncu_report *r = NULL;
		struct fp_diag d;
		int rc;

		fpt_oom_install(fail_at);
		rc = fp_ncu_parse(text, sizeof(text) - 1, NULL, &r, &d);
		fp_ncu_report_free(r);
		ASSERT_EQ(fpt_oom_live(), 0);
		fpt_oom_uninstall();
		if (rc == FP_OK)
			break;
		ASSERT_EQ(rc, FP_ENOMEM);
		ASSERT_EQ(d.status, FP_ENOMEM);
	}
	ASSERT_GT(fail_at, 5);
}
