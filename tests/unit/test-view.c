/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for the viewer library (include/flagprism/view.h): number and name formatting,
 * device peaks, metric specs and their arithmetic, filters, comparisons, rendering, and the
 * streaming profile reader against the DOM reader (same trees, same errors), plus OOM sweeps. */
#define _GNU_SOURCE 1
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flagprism/alloc.h>
#include <flagprism/calltree.h>
#include <flagprism/roofline.h>
#include <flagprism/strbuf.h>
#include <flagprism/view.h>

#include "test-tree.h"
#include "test.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static void vt_kernel(struct fp_calltree *t, uint32_t node, double ns, double count,
		      const char *dev)
{
	fpt_tree_add(t, node, "time (ns)", ns);
	fpt_tree_add(t, node, "count", count);
	fpt_tree_str(t, node, "device_id", dev);
	fpt_tree_str(t, node, "device_type", "CUDA");
}

/*
 * ROOT / step / attn (2 ms, 4 launches, flops16 1e12, bytes 2e9)
 *             / mlp  (1 ms, 2 launches, flops16 4e11, bytes 1e9)
 *      / __proton_launch_metadata / mlp (0.5 ms, 1 launch)
 *      / eval (scope, cpu_time (ns)(exc) 3e6) / attn (1 ms, 1 launch)
 * on an H100-like device 0.
 */
static struct fp_calltree *vt_sample(void)
{
	static const char *const p1[] = {"step", "attn"};
	static const char *const p2[] = {"step", "mlp"};
	static const char *const p3[] = {"__proton_launch_metadata", "mlp"};
	static const char *const p4[] = {"eval", "attn"};
	static const char *const p5[] = {"eval"};
	struct fp_calltree *t = fp_calltree_new(NULL);
	uint32_t n;

	ASSERT_NOT_NULL(t);
	n = fpt_tree_path(t, p1, 2);
	vt_kernel(t, n, 2e6, 4, "0");
	fpt_tree_add(t, n, "flops16", 1e12);
	fpt_tree_add(t, n, "bytes", 2e9);
	n = fpt_tree_path(t, p2, 2);
	vt_kernel(t, n, 1e6, 2, "0");
	fpt_tree_add(t, n, "flops16", 4e11);
	fpt_tree_add(t, n, "bytes", 1e9);
	n = fpt_tree_path(t, p3, 2);
	vt_kernel(t, n, 5e5, 1, "0");
	n = fpt_tree_path(t, p4, 2);
	vt_kernel(t, n, 1e6, 1, "0");
	n = fpt_tree_path(t, p5, 1);
	fpt_tree_add(t, n, "cpu_time (ns)(exc)", 3e6);
	ASSERT_OK(fp_calltree_device_set_str(t, "CUDA", "0", "arch", "90"));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "0", "num_sms", 132));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "0", "clock_rate", 1980000));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "0", "bus_width", 5120));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "0", "memory_clock_rate", 2619000));
	ASSERT_OK(fp_calltree_finalize(t));
	return t;
}

static uint32_t vt_find(struct fp_calltree *t, const char *const *names, size_t n)
{
	uint32_t node = FP_CALLTREE_ROOT, fr;
	size_t i;

	for (i = 0; i < n; i++) {
		ASSERT_OK(fp_calltree_intern(t, names[i], strlen(names[i]), &fr));
		ASSERT_OK(fp_calltree_child_find(t, node, fr, &node));
	}
	return node;
}

static double vt_value(struct fp_calltree *t, const char *spec, uint32_t node)
{
	struct fp_view_metric m;
	struct fp_diag d;

	if (fp_view_metric_parse(t, spec, strlen(spec), &m, &d) != FP_OK)
		fpt_fail(__FILE__, __LINE__, "spec '%s': %s", spec, d.msg);
	return fp_view_metric_value(t, &m, node);
}

/* Render a view into a malloc'd string. */
static char *vt_render(struct fp_view *v)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ASSERT_NOT_NULL(f);
	ASSERT_OK(fp_view_render(v, f));
	fclose(f);
	return buf;
}

static char *vt_view(struct fp_calltree *t, struct fp_calltree *other,
		     const struct fp_view_options *o)
{
	struct fp_view *v = NULL;
	struct fp_diag d;
	char *s;

	if (fp_view_new(t, other, o, &v, &d) != FP_OK)
		fpt_fail(__FILE__, __LINE__, "fp_view_new: %s", d.msg);
	s = vt_render(v);
	fp_view_free(v);
	return s;
}

static char *vt_read_file(const char *name, size_t *len)
{
	struct fp_strbuf sb;
	char *s;

	fp_strbuf_init(&sb, (size_t)1 << 30);
	ASSERT_OK(fp_strbuf_read_file(&sb, fpt_data_path(name), NULL));
	s = fp_strbuf_detach(&sb, len);
	ASSERT_NOT_NULL(s);
	return s;
}

/* ---- numbers and names -------------------------------------------------------------------- */

static void vt_num(double v, const char *want)
{
	char buf[32];
	int n = fp_view_format_number(v, buf, sizeof(buf));

	ASSERT_EQ(n, (int64_t)strlen(want));
	ASSERT_STREQ(buf, want);
}

TEST(view_format_number)
{
	char small[8];

	vt_num(0, "0");
	vt_num(183000, "183000");
	vt_num(-42, "-42");
	vt_num(12.3456, "12.35");
	vt_num(0.12345678, "0.1235");
	vt_num(0.001234567, "0.001235");
	vt_num(1234.5678, "1234.6");
	vt_num(3999.99999, "4000");
	vt_num(2.5, "2.5");
	vt_num(-0.25, "-0.25");
	vt_num(0.5e-4, "5.000e-05");
	vt_num(1e15, "1.000e+15");
	vt_num(123456789.25, "123456789.3");
	vt_num(NAN, "n/a");
	vt_num(INFINITY, "inf");
	vt_num(-INFINITY, "-inf");
	ASSERT_EQ(fp_view_format_number(1, small, sizeof(small)), FP_EINVAL);
}

static void vt_name(const char *name, enum fp_view_format f, const char *want)
{
	char buf[128];
	size_t n = fp_view_format_name(name, strlen(name), f, buf, sizeof(buf));

	ASSERT_EQ(n, (int64_t)strlen(want));
	ASSERT_STREQ(buf, want);
}

TEST(view_format_name)
{
	const char *fr = "/home/u/proj/train.py:step@25";
	enum fp_view_format f;
	char tiny[6];

	vt_name(fr, FP_VIEW_FORMAT_FULL, fr);
	vt_name(fr, FP_VIEW_FORMAT_FILE_FUNCTION_LINE, "train.py:step@25");
	vt_name(fr, FP_VIEW_FORMAT_FUNCTION_LINE, "step@25");
	vt_name(fr, FP_VIEW_FORMAT_FILE_FUNCTION, "train.py:step");
	vt_name("train.py:step@25", FP_VIEW_FORMAT_FILE_FUNCTION, "train.py:step");
	/* Not "file:function@line": unchanged. */
	vt_name("matmul_kernel", FP_VIEW_FORMAT_FUNCTION_LINE, "matmul_kernel");
	vt_name("a@b", FP_VIEW_FORMAT_FUNCTION_LINE, "a@b");
	vt_name("x:y@12z", FP_VIEW_FORMAT_FUNCTION_LINE, "x:y@12z");
	vt_name("user@host:8080", FP_VIEW_FORMAT_FUNCTION_LINE, "user@host:8080");
	vt_name("C:/x/a.py:f@3", FP_VIEW_FORMAT_FILE_FUNCTION_LINE, "a.py:f@3");
	/* A small buffer gets a prefix and the full length back. */
	ASSERT_EQ(fp_view_format_name(fr, strlen(fr), FP_VIEW_FORMAT_FULL, tiny, sizeof(tiny)),
		  (int64_t)strlen(fr));
	ASSERT_STREQ(tiny, "/home");
	ASSERT_OK(fp_view_format_parse("file_function", &f));
	ASSERT_EQ(f, FP_VIEW_FORMAT_FILE_FUNCTION);
	ASSERT_OK(fp_view_format_parse("full", &f));
	ASSERT_EQ(f, FP_VIEW_FORMAT_FULL);
	ASSERT_EQ(fp_view_format_parse("File_Function", &f), FP_EINVAL);
	ASSERT_EQ(fp_view_format_parse(NULL, &f), FP_EINVAL);
}

/* ---- peaks -------------------------------------------------------------------------------- */

TEST(view_peaks_table)
{
	struct fp_view_peaks p;

	/* A100: 624 TFLOP/s at 8 bits, halving per width; HBM2e 5120-bit at 1215 MHz. */
	fp_view_peaks_compute("CUDA", "0", "80", 108, 1410000, 5120, 1215000, &p);
	ASSERT(p.known);
	ASSERT_DEQ(p.flops[0], 624e12);
	ASSERT_DEQ(p.flops[1], 312e12);
	ASSERT_DEQ(p.flops[3], 78e12);
	ASSERT_NEAR(p.bytes_per_s, 1.5552e12, 1e6);
	ASSERT_STREQ(p.arch, "80");
	/* sm_89 (L4/RTX 4090 class): fixed peaks. */
	fp_view_peaks_compute("CUDA", "0", "sm_89", 58, 2040000, 192, 6251000, &p);
	ASSERT(p.known);
	ASSERT_DEQ(p.flops[1], 330.3e12 / 2);
	ASSERT_NEAR(p.bytes_per_s, 300.048e9, 1e3);
	/* H100 SXM: the 114-SM 1755 MHz reference scaled to 132 SMs at 1980 MHz. */
	fp_view_peaks_compute("CUDA", "0", "90a", 132, 1980000, 5120, 2619000, &p);
	ASSERT(p.known);
	ASSERT_STREQ(p.arch, "90");
	ASSERT_NEAR(p.flops[1], 132.0 / 114 * 1980000 / 1755000 * 1513e12 / 2, 1e3);
	ASSERT_NEAR(p.flops[1] / 1e12, 988.2, 0.1);
	ASSERT_NEAR(p.bytes_per_s, 3.352e12, 1e9);
	/* B200: 16384 FP8 FLOP per SM per clock. */
	fp_view_peaks_compute("CUDA", "3", "100", 148, 1965000, 8192, 3996000, &p);
	ASSERT(p.known);
	ASSERT_DEQ(p.flops[0], 148.0 * 16384 * 1965000 * 1e3);
	ASSERT_NEAR(p.bytes_per_s, 8.184e12, 1e9);
	/* HIP MI300X. */
	fp_view_peaks_compute("HIP", "0", "gfx942", 304, 2100000, 8192, 1300000, &p);
	ASSERT(p.known);
	ASSERT_DEQ(p.flops[0], 4096.0 * 304 * 2100000 * 1e3);
	ASSERT_DEQ(p.bytes_per_s, 5.3e12);
	/* No peaks: the interpreter, unknown archs, missing fields. */
	fp_view_peaks_compute("CPU", "0", "interpreter", NAN, NAN, NAN, NAN, &p);
	ASSERT(!p.known);
	ASSERT_STREQ(p.note, "CPU 0 (interpreter) has no device peaks");
	fp_view_peaks_compute("CUDA", "1", "75", 40, 1590000, 256, 5001000, &p);
	ASSERT(!p.known);
	ASSERT(strstr(p.note, "no peak table for arch '75'") != NULL);
	fp_view_peaks_compute("CUDA", "0", "90", NAN, 1980000, 5120, 2619000, &p);
	ASSERT(!p.known);
	ASSERT(strstr(p.note, "num_sms or clock_rate") != NULL);
	fp_view_peaks_compute("CUDA", "0", "80", 108, 1410000, NAN, NAN, &p);
	ASSERT(!p.known);
	ASSERT(strstr(p.note, "bus_width or memory_clock_rate") != NULL);
	fp_view_peaks_compute(NULL, NULL, NULL, NAN, NAN, NAN, NAN, &p);
	ASSERT(!p.known);
}

TEST(view_peaks_of_tree)
{
	struct fp_calltree *t = vt_sample();
	struct fp_view_peaks p;

	fp_view_peaks_of(t, "CUDA", "0", &p);
	ASSERT(p.known);
	ASSERT_NEAR(p.flops[1] / 1e12, 988.2, 0.1);
	fp_view_peaks_of(t, NULL, "0", &p); /* any type with that index */
	ASSERT(p.known);
	fp_view_peaks_of(t, "CUDA", "7", &p);
	ASSERT(!p.known);
	ASSERT_STREQ(p.note, "CUDA 7 is not in the device table");
	/* A numeric arch reads like a string one. */
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "1", "arch", 80));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "1", "bus_width", 5120));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "1", "memory_clock_rate", 1215000));
	fp_view_peaks_of(t, "CUDA", "1", &p);
	ASSERT(p.known);
	ASSERT_STREQ(p.arch, "80");
	fp_calltree_free(t);
}

/* ---- metric specs ------------------------------------------------------------------------- */

TEST(view_metric_parse_specs)
{
	struct fp_calltree *t = vt_sample();
	struct fp_view_metric m;
	struct fp_diag d;
	uint32_t id;

	ASSERT_OK(fp_view_metric_parse(t, "time/ms", 7, &m, &d));
	ASSERT_EQ(m.op, FP_VIEW_OP_SCALE);
	ASSERT_NEAR(m.scale, 1e-6, 1e-20);
	ASSERT_STREQ(m.label, "time/ms");
	ASSERT_OK(fp_calltree_metric_find(t, "time (ns)", 9, &id));
	ASSERT_EQ(m.src[0], id);
	/* Case-insensitive, units ignored, spaces trimmed. */
	ASSERT_OK(fp_view_metric_parse(t, " TIME/Us ", 9, &m, &d));
	ASSERT_NEAR(m.scale, 1e-3, 1e-18);
	ASSERT_OK(fp_view_metric_parse(t, "Time", 4, &m, &d));
	ASSERT_EQ(m.op, FP_VIEW_OP_RAW);
	ASSERT_STREQ(m.label, "time (ns)");
	ASSERT_OK(fp_view_metric_parse(t, "time (NS)", 9, &m, &d));
	ASSERT_EQ(m.src[0], id);
	ASSERT_OK(fp_view_metric_parse(t, "avg_time/us", 11, &m, &d));
	ASSERT_EQ(m.op, FP_VIEW_OP_AVG);
	ASSERT_EQ(m.nsrc, 2);
	ASSERT_OK(fp_view_metric_parse(t, "tflop16/s", 9, &m, &d));
	ASSERT_EQ(m.op, FP_VIEW_OP_RATE);
	ASSERT_DEQ(m.scale, 1e12);
	ASSERT_DEQ(m.time_scale, 1e-9);
	ASSERT_OK(fp_view_metric_parse(t, "gflop/s", 7, &m, &d)); /* every width present */
	ASSERT_EQ(m.nsrc, 2);
	ASSERT_OK(fp_view_metric_parse(t, "gbyte/s", 7, &m, &d));
	ASSERT_DEQ(m.scale, 1e9);
	ASSERT_OK(fp_view_metric_parse(t, "time/%", 6, &m, &d));
	ASSERT_EQ(m.op, FP_VIEW_OP_PERCENT);
	ASSERT(!m.exclusive_sum);
	ASSERT_OK(fp_view_metric_parse(t, "cpu_time/%", 10, &m, &d));
	ASSERT(m.exclusive_sum);
	ASSERT_OK(fp_view_metric_parse(t, "cpu_time/ms", 11, &m, &d));
	ASSERT_OK(fp_view_metric_parse(t, "util", 4, &m, &d));
	ASSERT_EQ(m.op, FP_VIEW_OP_UTIL);
	ASSERT_EQ(m.nsrc, FP_VIEW_U_COUNT);
	ASSERT_NE(m.src[FP_VIEW_U_FLOPS16], FP_VIEW_NONE);
	ASSERT_EQ(m.src[FP_VIEW_U_FLOPS8], FP_VIEW_NONE);
	ASSERT_NE(m.src[FP_VIEW_U_DEVICE_ID], FP_VIEW_NONE);

	/* Errors name the problem and what the file has. */
	ASSERT_EQ(fp_view_metric_parse(t, "nosuch", 6, &m, &d), FP_EINVAL);
	ASSERT(strstr(d.msg, "unknown metric 'nosuch'") != NULL);
	ASSERT(strstr(d.msg, "'time (ns)'") != NULL);
	ASSERT_EQ(fp_view_metric_parse(t, "time/h", 6, &m, &d), FP_EINVAL);
	ASSERT(strstr(d.msg, "unsupported unit") != NULL);
	ASSERT_EQ(fp_view_metric_parse(t, "count/ms", 8, &m, &d), FP_EINVAL);
	ASSERT(strstr(d.msg, "not a time metric") != NULL);
	ASSERT_EQ(fp_view_metric_parse(t, "flop8/s", 7, &m, &d), FP_EINVAL);
	ASSERT_EQ(fp_view_metric_parse(t, "est_gbyte/s", 11, &m, &d), FP_EINVAL);
	ASSERT_EQ(fp_view_metric_parse(t, "est_util", 8, &m, &d), FP_EINVAL);
	ASSERT_EQ(fp_view_metric_parse(t, "device_type", 11, &m, &d), FP_EINVAL);
	ASSERT(strstr(d.msg, "text metric") != NULL);
	ASSERT_EQ(fp_view_metric_parse(t, "", 0, &m, &d), FP_EINVAL);
	ASSERT_EQ(fp_view_metric_parse(t, "  ", 2, &m, NULL), FP_EINVAL);
	fp_calltree_free(t);
}

/* A metric whose name has a '/' ("bytes/iter", from scope("step", {"bytes/iter": 3})) is that
 * metric, whole; its share is "bytes/iter/%". */
TEST(view_metric_name_with_a_slash)
{
	struct fp_calltree *t = vt_sample();
	struct fp_view_metric m;
	struct fp_diag d;
	uint32_t id;

	ASSERT_OK(fp_calltree_metric_auto(t, "bytes/iter", 10, &id));
	ASSERT_OK(fp_calltree_add_metric(t, FP_CALLTREE_ROOT, id, 3));
	ASSERT_OK(fp_view_metric_parse(t, "bytes/iter", 10, &m, &d));
	ASSERT_EQ(m.op, FP_VIEW_OP_RAW);
	ASSERT_EQ(m.src[0], id);
	ASSERT_STREQ(m.label, "bytes/iter");
	ASSERT_OK(fp_view_metric_parse(t, "BYTES/ITER/%", 12, &m, &d));
	ASSERT_EQ(m.op, FP_VIEW_OP_PERCENT);
	ASSERT_EQ(m.src[0], id);
	ASSERT_OK(fp_view_metric_parse(t, "time/ms", 7, &m, &d)); /* units still units */
	ASSERT_EQ(m.op, FP_VIEW_OP_SCALE);
	fp_calltree_free(t);
}

TEST(view_metric_math)
{
	static const char *const attn[] = {"step", "attn"};
	static const char *const step[] = {"step"};
	static const char *const eval[] = {"eval"};
	struct fp_calltree *t = vt_sample();
	uint32_t a = vt_find(t, attn, 2), s = vt_find(t, step, 1), e = vt_find(t, eval, 1);
	double peak16 = 132.0 / 114 * 1980000 / 1755000 * 1513e12 / 2;
	double bw = 2.0 * 5120 * 2619000 * 1e3 / 8;

	ASSERT_NEAR(vt_value(t, "time/ms", a), 2.0, 1e-12);
	ASSERT_NEAR(vt_value(t, "time/s", FP_CALLTREE_ROOT), 4.5e-3, 1e-15);
	ASSERT_NEAR(vt_value(t, "time/ns", s), 3e6, 1e-6);
	ASSERT_NEAR(vt_value(t, "avg_time/us", a), 500, 1e-9);
	ASSERT_NEAR(vt_value(t, "avg_time/us", s), 3000.0 / 6, 1e-9);
	ASSERT_NEAR(vt_value(t, "tflop16/s", a), 1e12 / 2e-3 / 1e12, 1e-9);
	ASSERT_NEAR(vt_value(t, "gflop/s", s), 1.4e12 / 3e-3 / 1e9, 1e-6);
	ASSERT_NEAR(vt_value(t, "gbyte/s", a), 2e9 / 2e-3 / 1e9, 1e-9);
	ASSERT_NEAR(vt_value(t, "time/%", a), 100 * 2e6 / 4.5e6, 1e-9);
	ASSERT_NEAR(vt_value(t, "time/%", FP_CALLTREE_ROOT), 100, 1e-12);
	ASSERT_NEAR(vt_value(t, "cpu_time/%", e), 100, 1e-12);
	ASSERT_NEAR(vt_value(t, "cpu_time/ms", e), 3, 1e-12);
	/* A summed metric a node lacks reads 0; a rate without a numerator is n/a. */
	ASSERT_DEQ(vt_value(t, "cpu_time/ms", a), 0);
	ASSERT(isnan(
		vt_value(t, "tflop16/s", vt_find(t, (const char *const[]){"eval", "attn"}, 2))));
	/* util: max(flops/peak, bytes/bw) / time, kernels only. */
	ASSERT_NEAR(vt_value(t, "util", a), fmax(1e12 / peak16, 2e9 / bw) / 2e-3, 1e-9);
	ASSERT(isnan(vt_value(t, "util", s)));
	ASSERT(isnan(vt_value(t, "util", FP_CALLTREE_ROOT)));
	fp_calltree_free(t);
}

TEST(view_metric_estimates)
{
	static const char *const k[] = {"run", "add_kernel"};
	static const char *const g[] = {"run", "gpu_kernel"};
	struct fp_calltree *t = fp_calltree_new(NULL);
	uint32_t n = fpt_tree_path(t, k, 2), gn;
	double peak16 = 312e12, bw = 2.0 * 5120 * 1215000 * 1e3 / 8;

	vt_kernel(t, n, 1e6, 1, "0");
	fpt_tree_str(t, n, "device_type", "CPU");
	fpt_tree_add(t, n, "est_bytes", 4e9);
	fpt_tree_add(t, n, "est_flops", 2e9);
	gn = fpt_tree_path(t, g, 2);
	vt_kernel(t, gn, 1e6, 1, "1");
	fpt_tree_add(t, gn, "est_bytes", 1e9);
	fpt_tree_add(t, gn, "est_flops", 1e11);
	ASSERT_OK(fp_calltree_device_set_str(t, "CPU", "0", "arch", "interpreter"));
	ASSERT_OK(fp_calltree_device_set_str(t, "CUDA", "1", "arch", "80"));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "1", "bus_width", 5120));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "1", "memory_clock_rate", 1215000));
	ASSERT_OK(fp_calltree_finalize(t));
	ASSERT_NEAR(vt_value(t, "est_gbyte/s", n), 4e9 / 1e-3 / 1e9, 1e-9);
	ASSERT_NEAR(vt_value(t, "est_tflop/s", n), 2e9 / 1e-3 / 1e12, 1e-12);
	/* The interpreter has no peaks. */
	ASSERT(isnan(vt_value(t, "est_util", n)));
	ASSERT(isnan(vt_value(t, "util", n)));
	/* On a GPU the estimate is compared with the 16-bit peak and the bandwidth. */
	ASSERT_NEAR(vt_value(t, "est_util", gn), fmax(1e11 / peak16, 1e9 / bw) / 1e-3, 1e-12);
	/* util falls back on estimates where nothing is measured... */
	ASSERT_NEAR(vt_value(t, "util", gn), vt_value(t, "est_util", gn), 1e-15);
	/* ... and prefers measured numbers. */
	fpt_tree_add(t, gn, "bytes", 1.5e9);
	ASSERT_OK(fp_calltree_finalize(t));
	ASSERT_NEAR(vt_value(t, "util", gn), 1.5e9 / bw / 1e-3, 1e-12);
	fp_calltree_free(t);
}

/* ---- views -------------------------------------------------------------------------------- */

TEST(view_render_default)
{
	struct fp_calltree *t = vt_sample();
	char *s = vt_view(t, NULL, NULL);

	/* Hidden metadata frames leave the totals: 4 ms, not 4.5. */
	ASSERT_STREQ(s, "time/ms  count  name\n"
			"      4      7  ROOT\n"
			"      3      6  \u251c\u2500 step\n"
			"      2      4  \u2502  \u251c\u2500 attn\n"
			"      1      2  \u2502  \u2514\u2500 mlp\n"
			"      1      1  \u2514\u2500 eval\n"
			"      1      1     \u2514\u2500 attn\n"
			"note: 1 Proton launch-metadata frame (__proton_launch_metadata) hidden "
			"with its subtree, as proton-viewer does\n");
	free(s);
	fp_calltree_free(t);
}

TEST(view_filters)
{
	struct fp_calltree *t = vt_sample();
	struct fp_view_options o;
	char *s;

	/* Metadata frames kept: totals include them. */
	fp_view_options_init(&o);
	o.metrics = "time/ms";
	o.keep_launch_metadata = true;
	o.sort = FP_VIEW_SORT_NAME;
	s = vt_view(t, NULL, &o);
	ASSERT_STREQ(s, "time/ms  name\n"
			"    4.5  ROOT\n"
			"    0.5  \u251c\u2500 __proton_launch_metadata\n"
			"    0.5  \u2502  \u2514\u2500 mlp\n"
			"      1  \u251c\u2500 eval\n"
			"      1  \u2502  \u2514\u2500 attn\n"
			"      3  \u2514\u2500 step\n"
			"      2     \u251c\u2500 attn\n"
			"      1     \u2514\u2500 mlp\n");
	free(s);
	/* Depth. */
	fp_view_options_init(&o);
	o.metrics = "time/ms";
	o.max_depth = 1;
	s = vt_view(t, NULL, &o);
	ASSERT_STREQ(s, "time/ms  name\n"
			"      4  ROOT\n"
			"      3  \u251c\u2500 step\n"
			"      1  \u2514\u2500 eval\n"
			"note: 1 Proton launch-metadata frame (__proton_launch_metadata) hidden "
			"with its subtree, as proton-viewer does\n"
			"note: 3 rows deeper than depth 1 not shown (-d shows more)\n");
	free(s);
	fp_view_options_init(&o);
	o.max_depth = 0;
	o.metrics = "count";
	s = vt_view(t, NULL, &o);
	ASSERT(strncmp(s, "count  name\n    7  ROOT\nnote: ", 30) == 0);
	free(s);
	/* Include: paths through "attn"; totals recomputed without the rest. */
	fp_view_options_init(&o);
	o.metrics = "time/ms,time/%";
	o.include = "^attn$";
	s = vt_view(t, NULL, &o);
	ASSERT_STREQ(s, "time/ms  time/%  name\n"
			"      3     100  ROOT\n"
			"      2   66.67  \u251c\u2500 step\n"
			"      2   66.67  \u2502  \u2514\u2500 attn\n"
			"      1   33.33  \u2514\u2500 eval\n"
			"      1   33.33     \u2514\u2500 attn\n"
			"note: 1 Proton launch-metadata frame (__proton_launch_metadata) hidden "
			"with its subtree, as proton-viewer does\n");
	free(s);
	/* Exclude drops a subtree. */
	fp_view_options_init(&o);
	o.metrics = "time/ms";
	o.exclude = "ev.l";
	o.keep_launch_metadata = true;
	s = vt_view(t, NULL, &o);
	ASSERT_STREQ(s, "time/ms  name\n"
			"    3.5  ROOT\n"
			"      3  \u251c\u2500 step\n"
			"      2  \u2502  \u251c\u2500 attn\n"
			"      1  \u2502  \u2514\u2500 mlp\n"
			"    0.5  \u2514\u2500 __proton_launch_metadata\n"
			"    0.5     \u2514\u2500 mlp\n");
	free(s);
	/* Threshold: 30% of the root's 4 ms keeps step (3) and step/attn (2) only. */
	fp_view_options_init(&o);
	o.metrics = "time/ms";
	o.threshold = 0.3;
	s = vt_view(t, NULL, &o);
	ASSERT_STREQ(s, "time/ms  name\n"
			"      4  ROOT\n"
			"      3  \u2514\u2500 step\n"
			"      2     \u2514\u2500 attn\n"
			"note: 1 Proton launch-metadata frame (__proton_launch_metadata) hidden "
			"with its subtree, as proton-viewer does\n"
			"note: 3 nodes below the threshold (0.3 of the root's time/ms) hidden\n");
	free(s);
	/* Sorted leaves. */
	fp_view_options_init(&o);
	o.metrics = "time/ms";
	o.print_sorted = true;
	o.format = FP_VIEW_FORMAT_FUNCTION_LINE;
	s = vt_view(t, NULL, &o);
	ASSERT(strstr(s, "\nLeaves sorted by time/ms:\n"
			 "      2  attn\n"
			 "      1  attn\n"
			 "      1  mlp\n") != NULL);
	free(s);
	fp_calltree_free(t);
}

TEST(view_bad_options)
{
	struct fp_calltree *t = vt_sample(), *empty = fp_calltree_new(NULL);
	struct fp_view_options o;
	struct fp_view *v = NULL;
	struct fp_diag d;

	fp_view_options_init(&o);
	o.include = "(";
	ASSERT_EQ(fp_view_new(t, NULL, &o, &v, &d), FP_EINVAL);
	ASSERT(strstr(d.msg, "bad include regex") != NULL);
	ASSERT_NULL(v);
	fp_view_options_init(&o);
	o.exclude = "[z-a]";
	ASSERT_EQ(fp_view_new(t, NULL, &o, &v, &d), FP_EINVAL);
	fp_view_options_init(&o);
	o.threshold = -1;
	ASSERT_EQ(fp_view_new(t, NULL, &o, &v, &d), FP_EINVAL);
	o.threshold = NAN;
	ASSERT_EQ(fp_view_new(t, NULL, &o, &v, &d), FP_EINVAL);
	fp_view_options_init(&o);
	o.metrics = "time/ms,,count";
	ASSERT_EQ(fp_view_new(t, NULL, &o, &v, &d), FP_EINVAL);
	o.metrics = "util";
	o.threshold = 0.1; /* util has no value at the root */
	ASSERT_EQ(fp_view_new(t, NULL, &o, &v, &d), FP_EINVAL);
	ASSERT(strstr(d.msg, "threshold") != NULL);
	ASSERT_EQ(fp_view_new(empty, NULL, NULL, &v, &d), FP_ENOENT);
	ASSERT_EQ(fp_view_new(NULL, NULL, NULL, &v, &d), FP_EINVAL);
	fp_calltree_free(empty);
	fp_calltree_free(t);
}

TEST(view_diff_rows)
{
	static const char *const p1[] = {"step", "attn"};
	static const char *const p2[] = {"step", "fused"};
	static const char *const p4[] = {"eval", "attn"};
	struct fp_calltree *a = vt_sample(), *b = fp_calltree_new(NULL);
	struct fp_view_options o;
	struct fp_view *v = NULL;
	struct fp_view_row row;
	struct fp_diag d;
	char *s;

	/* b: step/attn 1 ms faster, step/mlp replaced by step/fused, no metadata frames. */
	vt_kernel(b, fpt_tree_path(b, p1, 2), 1e6, 4, "0");
	vt_kernel(b, fpt_tree_path(b, p2, 2), 1e6, 2, "0");
	vt_kernel(b, fpt_tree_path(b, p4, 2), 1e6, 1, "0");
	ASSERT_OK(fp_calltree_finalize(b));
	fp_view_options_init(&o);
	o.metrics = "time/ms,count";
	ASSERT_OK(fp_view_new(a, b, &o, &v, &d));
	s = vt_render(v);
	ASSERT_STREQ(s, "time/ms  count  name\n"
			"     -1      0  ROOT\n"
			"     -1      0  \u251c\u2500 step\n"
			"     -1      0  \u2502  \u251c\u2500 attn\n"
			"     +1     +2  \u2502  \u251c\u2500 fused  [added]\n"
			"     -1     -2  \u2502  \u2514\u2500 mlp  [removed]\n"
			"      0      0  \u2514\u2500 eval\n"
			"      0      0     \u2514\u2500 attn\n"
			"note: 1 Proton launch-metadata frame (__proton_launch_metadata) hidden "
			"with its subtree, as proton-viewer does\n");
	ASSERT_EQ(fp_view_row_count(v), 7);
	ASSERT_OK(fp_view_row(v, 3, &row));
	ASSERT_EQ(row.node, FP_CALLTREE_NONE);
	ASSERT_NE(row.other_node, FP_CALLTREE_NONE);
	ASSERT_EQ(row.depth, 2);
	ASSERT_DEQ(row.values[1], 2);
	ASSERT_EQ(fp_view_row(v, 7, &row), FP_ENOENT);
	ASSERT_EQ(fp_view_column_count(v), 2);
	ASSERT_STREQ(fp_view_column_label(v, 1), "count");
	ASSERT_EQ(fp_view_column(v, 0)->op, FP_VIEW_OP_SCALE);
	ASSERT_NULL(fp_view_column_label(v, 2));
	ASSERT_EQ(fp_view_note_count(v), 1);
	ASSERT_NULL(fp_view_note(v, 1));
	free(s);
	fp_view_free(v);
	/* A spec the other profile cannot evaluate is named as such. */
	o.metrics = "tflop16/s";
	ASSERT_EQ(fp_view_new(a, b, &o, &v, &d), FP_EINVAL);
	ASSERT(strncmp(d.msg, "the other profile: ", 19) == 0);
	fp_calltree_free(a);
	fp_calltree_free(b);
}

TEST(view_list_metrics)
{
	struct fp_calltree *t = vt_sample();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ASSERT_OK(fp_view_list_metrics(t, f));
	fclose(f);
	ASSERT(strstr(buf, "  time (ns)           inclusive; -m time;") != NULL);
	ASSERT(strstr(buf, "  cpu_time (ns)(exc)  exclusive; -m cpu_time;") != NULL);
	ASSERT(strstr(buf, "  device_id           property, text\n") != NULL);
	ASSERT(strstr(buf, "tflop16/s") != NULL);
	ASSERT(strstr(buf, "est_") == NULL);
	ASSERT(strstr(buf, "  CUDA 0: arch 90, peak 988.2 TFLOP/s (16-bit), 3.352 TB/s\n") != NULL);
	free(buf);
	fp_calltree_free(t);
}

TEST(view_control_bytes_are_not_printed)
{
	static const char *const p[] = {"evil\x1b[2Jname"};
	struct fp_calltree *t = fp_calltree_new(NULL);
	char *s;

	fpt_tree_add(t, fpt_tree_path(t, p, 1), "time (ns)", 1e6);
	ASSERT_OK(fp_calltree_finalize(t));
	s = vt_view(t, NULL, NULL);
	ASSERT(strchr(s, '\x1b') == NULL);
	ASSERT(strstr(s, "evil?[2Jname") != NULL);
	free(s);
	fp_calltree_free(t);
}

/* ---- the streaming reader ----------------------------------------------------------------- */

/* Both readers on `text` (the streaming one as `flags` says): same status; when it parses,
 * equal trees and counters. */
static void vt_same_flags(const char *text, size_t len, bool expect_fast, unsigned flags)
{
	struct fp_calltree *fast = NULL, *strict = NULL;
	struct fp_hatchet_info fi, si;
	struct fp_diag fd, sd, why;
	int rf, rs;

	rf = fp_calltree_parse_hatchet(text, len, NULL, flags, &fast, &fi, &fd);
	rs = fp_calltree_parse_hatchet(text, len, NULL, FP_HATCHET_STRICT, &strict, &si, &sd);
	ASSERT_EQ(rf, rs);
	ASSERT_EQ(fi.fast_path, expect_fast);
	ASSERT(!si.fast_path);
	if (rs != FP_OK) {
		ASSERT_UEQ(fd.offset, sd.offset);
		ASSERT_STREQ(fd.msg, sd.msg);
		return;
	}
	if (!fp_calltree_equal(fast, strict, 0, &why))
		fpt_fail(__FILE__, __LINE__, "trees differ: %s", why.msg);
	ASSERT_EQ(fp_calltree_node_count(fast), fp_calltree_node_count(strict));
	ASSERT_EQ(fp_calltree_metric_count(fast), fp_calltree_metric_count(strict));
	for (uint32_t m = 0; m < fp_calltree_metric_count(fast); m++) {
		enum fp_metric_kind ka, kb;

		ASSERT_STREQ(fp_calltree_metric_name(fast, m, NULL, &ka),
			     fp_calltree_metric_name(strict, m, NULL, &kb));
		ASSERT_EQ(ka, kb);
	}
	ASSERT_UEQ(fi.nodes, si.nodes);
	ASSERT_UEQ(fi.merged_siblings, si.merged_siblings);
	ASSERT_UEQ(fi.skipped_metrics, si.skipped_metrics);
	ASSERT_EQ(fi.has_device_info, si.has_device_info);
	fp_calltree_free(fast);
	fp_calltree_free(strict);
}

static void vt_same(const char *text, size_t len, bool expect_fast)
{
	vt_same_flags(text, len, expect_fast, 0);
	vt_same_flags(text, len, expect_fast, FP_HATCHET_NO_THREAD);
	vt_same_flags(text, len, expect_fast, FP_HATCHET_THREADED);
}

static void vt_same_str(const char *text, bool expect_fast)
{
	vt_same(text, strlen(text), expect_fast);
}

TEST(view_read_fast_matches_strict_on_files)
{
	static const char *const files[] = {
		"profiles/proton-h100.json",  "profiles/proton-h100-run2.json",
		"profiles/proton-archs.json", "profiles/proton-python.json",
		"profiles/proton-rank0.json", "profiles/flagprism-interp.json",
	};
	size_t i, len;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *text = vt_read_file(files[i], &len);

		vt_same(text, len, true);
		fp_free(text);
	}
}

TEST(view_read_fast_cases)
{
	/* Pretty-printed, keys in any order, unknown keys and values of every kind skipped. */
	vt_same_str(
		" [ {\"metrics\" : {\"count\" : 1 , \"x\": [1, {\"a\": null}], \"t\": true},\n"
		"  \"extra\": {\"deep\": [[[]]], \"n\": -0.5e-3},\r\n"
		"  \"frame\": {\"type\": \"function\", \"name\": \"ROOT\"},\t\"children\": []} ] ",
		true);
	/* Proton's order, duplicate siblings merged, _hatchet_nid, strings in numeric metrics. */
	vt_same_str("[{\"children\":[{\"children\":[],\"frame\":{\"name\":\"k\"},\"metrics\":"
		    "{\"_hatchet_nid\":3,\"time (ns)\":5,\"s\":\"x\"}},{\"children\":[],\"frame\":"
		    "{\"name\":\"k\"},\"metrics\":{\"time (ns)\":\"slow\",\"s\":\"y\",\"n\":2}}],"
		    "\"frame\":{\"name\":\"R\"},\"metrics\":{\"n\":\"text\"}},{}]",
		    true);
	/* A name holding a string first and a number later (and the reverse): kinds guessed by
	 * the threaded reader are checked and the tree rebuilt. */
	vt_same_str("[{\"children\":[{\"frame\":{\"name\":\"a\"},\"metrics\":{\"x\":\"s\"}},"
		    "{\"frame\":{\"name\":\"b\"},\"metrics\":{\"x\":1,\"y\":2}},{\"frame\":"
		    "{\"name\":\"c\"},\"metrics\":{\"y\":\"t\"}}],\"frame\":{\"name\":\"R\"},"
		    "\"metrics\":{}}]",
		    true);
	/* Numbers: exponents, fractions, big integers, -0, underflow. */
	vt_same_str("[{\"frame\":{\"name\":\"R\"},\"metrics\":{\"a\":1e300,\"b\":-0,\"c\":"
		    "123456789012345678901234,\"d\":0.1,\"e\":1E-400,\"f\":-12.5e+2,\"g\":"
		    "999999999999999999}}]",
		    true);
	/* Device tables, numbers and strings, with odd values skipped. */
	vt_same_str(
		"[{\"frame\":{\"name\":\"R\"},\"metrics\":{}},{\"CUDA\":{\"0\":{\"arch\":\"90\","
		"\"num_sms\":132,\"x\":null}},\"CPU\":{}}]",
		true);
	/* Handed to the DOM reader: escapes, non-ASCII, a BOM, node-level names, duplicates. */
	vt_same_str("[{\"frame\":{\"name\":\"R\\u00e9\"},\"metrics\":{}}]", false);
	vt_same_str("[{\"frame\":{\"name\":\"R\xc3\xa9\"},\"metrics\":{}}]", false);
	vt_same_str("\xef\xbb\xbf[{\"frame\":{\"name\":\"R\"},\"metrics\":{}}]", false);
	vt_same_str("[{\"frame\":{\"type\":\"f\"},\"name\":\"R\",\"metrics\":{}}]", false);
	vt_same_str("[{\"frame\":{\"name\":\"R\"},\"frame\":{\"name\":\"S\"},\"metrics\":{}}]",
		    false);
	vt_same_str("[{\"frame\":{\"name\":\"R\",\"name\":\"S\"},\"metrics\":{}}]", false);
	vt_same_str("[{\"frame\":{\"name\":\"R\"},\"metrics\":{\"a\":1e400}}]", false);
	/* Errors, all worded by the DOM reader. */
	vt_same_str("", false);
	vt_same_str("[", false);
	vt_same_str("[]", false);
	vt_same_str("{}", false);
	vt_same_str("[{\"frame\":{\"name\":\"R\"},\"metrics\":{},}]", false);
	vt_same_str("[{\"frame\":{\"name\":\"R\"},\"metrics\":{},\"children\":[],}]", false);
	vt_same_str("[{\"frame\":{\"name\":\"R\"},\"metrics\":{\"a\":01}}]", false);
	vt_same_str("[{\"frame\":{\"name\":\"R\"},\"metrics\":{\"a\":1.}}]", false);
	vt_same_str("[{\"frame\":{\"name\":\"R\"},\"metrics\":{\"a\":tru}}]", false);
	vt_same_str("[{\"frame\":{\"name\":\"R\"}}]", false);
	vt_same_str("[{\"frame\":{},\"metrics\":{}}]", false);
	vt_same_str("[{\"frame\":\"R\",\"metrics\":{}}]", false);
	vt_same_str("[{\"frame\":{\"name\":\"R\"},\"metrics\":{},\"children\":{}}]", false);
	vt_same_str("[{\"frame\":{\"name\":\"R\"},\"metrics\":{},\"children\":[1]}]", false);
	vt_same_str("[{\"frame\":{\"name\":\"R\"},\"metrics\":{}},{\"frame\":{}}]", false);
	vt_same_str("[{\"frame\":{\"name\":\"R\"},\"metrics\":{}},{},{}]", false);
	vt_same_str("[{\"frame\":{\"name\":\"R\"},\"metrics\":{}},[]]", false);
	vt_same_str("[{\"frame\":{\"name\":\"R\"},\"metrics\":{}}] x", false);
	vt_same_str("[{\"frame\":{\"name\":\"R\"},\"metrics\":{}},{\"CUDA\":1}]", false);
	vt_same_str("[{\"frame\":{\"name\":\"R\"},\"metrics\":{\"a\":\"\x01\"}}]", false);
}

/* Duplicate metric keys in one node: the last value wins in both readers, as in llnl-hatchet
 * and JSON readers (never their sum). */
TEST(view_read_duplicate_metric_keys_last_wins)
{
	const char *dup = "[{\"frame\":{\"name\":\"R\"},\"metrics\":{\"count\":1,\"x\":2,"
			  "\"count\":7},\"children\":[{\"frame\":{\"name\":\"k\"},\"metrics\":"
			  "{\"s\":\"first\",\"s\":\"last\",\"count\":3}}]}]";
	struct fp_calltree *t = NULL;
	struct fp_hatchet_info info;
	struct fp_calltree_value v;
	struct fp_diag d;
	uint32_t m, k;
	unsigned flags[] = {0, FP_HATCHET_STRICT, FP_HATCHET_NO_THREAD};
	size_t i;

	vt_same_str(dup, false); /* the streaming reader hands duplicates to the DOM reader */
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		ASSERT_OK(
			fp_calltree_parse_hatchet(dup, strlen(dup), NULL, flags[i], &t, &info, &d));
		ASSERT_OK(fp_calltree_metric_find(t, "count", 5, &m));
		ASSERT_OK(fp_calltree_finalize(t));
		ASSERT_OK(fp_calltree_get(t, FP_CALLTREE_ROOT, m, &v));
		ASSERT_DEQ(v.self, 7);
		ASSERT_DEQ(v.total, 10);
		ASSERT_EQ(fp_calltree_node_child_count(t, FP_CALLTREE_ROOT), 1);
		k = fp_calltree_node_first_child(t, FP_CALLTREE_ROOT);
		ASSERT_OK(fp_calltree_metric_find(t, "s", 1, &m));
		ASSERT_OK(fp_calltree_get(t, k, m, &v));
		ASSERT_NOT_NULL(v.str);
		ASSERT_MEMEQ(v.str, "last", 4);
		fp_calltree_free(t);
	}
}

/* A FIFO where the meta file would be is not read (it would block); a device as the profile
 * is refused before anything is read. */
TEST(view_read_fifo_meta_and_device_input)
{
	char dir[] = "/tmp/fp-view-fifo-XXXXXX", path[256], meta[256];
	struct fp_calltree *t = NULL;
	struct fp_view_read_info info;
	struct fp_diag d;
	FILE *f;

	ASSERT_NOT_NULL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p.hatchet", dir);
	snprintf(meta, sizeof(meta), "%s/p.meta.json", dir);
	f = fopen(path, "w");
	fputs("[{\"frame\":{\"name\":\"ROOT\"},\"metrics\":{}}]", f);
	fclose(f);
	ASSERT_OK(mkfifo(meta, 0600));
	ASSERT_OK(fp_view_read_profile(path, NULL, 0, &t, &info, &d));
	ASSERT(!info.has_meta);
	ASSERT(strstr(info.meta_warning, "not a regular file (a FIFO)") != NULL);
	fp_calltree_free(t);
	ASSERT_EQ(fp_view_read_profile("/dev/zero", NULL, 0, &t, &info, &d), FP_EIO);
	ASSERT(strstr(d.msg, "a character device, not a file") != NULL);
	ASSERT_EQ(fp_view_read_profile(dir, NULL, 0, &t, &info, &d), FP_EIO);
	ASSERT(strstr(d.msg, "a directory") != NULL);
	unlink(meta);
	unlink(path);
	rmdir(dir);
}

TEST(view_read_limits_fall_back)
{
	const char *deep = "[{\"frame\":{\"name\":\"R\"},\"metrics\":{},\"children\":[{\"frame\":"
			   "{\"name\":\"a\"},\"metrics\":{},\"children\":[{\"frame\":{\"name\":"
			   "\"b\"},\"metrics\":{}}]}]}]";
	const char *many = "[{\"frame\":{\"name\":\"R\"},\"metrics\":{\"a\":1,\"b\":2,\"c\":3}}]";
	struct fp_calltree_limits lim = {0};
	struct fp_calltree *t = NULL;
	struct fp_hatchet_info info;
	struct fp_diag d;

	lim.max_depth = 1;
	ASSERT_EQ(fp_calltree_parse_hatchet(deep, strlen(deep), &lim, 0, &t, &info, &d), FP_ELIMIT);
	ASSERT(!info.fast_path);
	ASSERT_EQ(d.line, 1);
	lim.max_depth = 0;
	lim.max_nodes = 2;
	ASSERT_EQ(fp_calltree_parse_hatchet(deep, strlen(deep), &lim, 0, &t, &info, &d), FP_ELIMIT);
	lim.max_nodes = 0;
	lim.max_metrics = 2;
	ASSERT_EQ(fp_calltree_parse_hatchet(many, strlen(many), &lim, 0, &t, &info, &d), FP_ELIMIT);
	ASSERT_NULL(t);
	/* FAST_ONLY reports what would have fallen back. */
	ASSERT_EQ(fp_calltree_parse_hatchet(many, strlen(many), &lim, FP_HATCHET_FAST_ONLY, &t,
					    &info, &d),
		  FP_ENOTSUP);
	ASSERT_OK(fp_calltree_parse_hatchet(many, strlen(many), NULL, FP_HATCHET_FAST_ONLY, &t,
					    &info, &d));
	ASSERT(info.fast_path);
	fp_calltree_free(t);
	ASSERT_EQ(fp_calltree_parse_hatchet(NULL, 1, NULL, 0, &t, NULL, NULL), FP_EINVAL);
}

TEST(view_read_profile_files)
{
	struct fp_calltree *t = NULL;
	struct fp_view_read_info info;
	struct fp_diag d;
	char path[4096];

	ASSERT_OK(fp_view_read_profile(fpt_data_path("profiles/flagprism-interp.json"), NULL, 0, &t,
				       &info, &d));
	ASSERT(info.hatchet.fast_path);
	ASSERT(info.has_meta);
	ASSERT(!info.incomplete);
	ASSERT_STREQ(info.meta_warning, "");
	ASSERT_EQ(fp_calltree_node_count(t), 7);
	fp_calltree_free(t);
	/* Given the meta file, the profile is <stem>.hatchet (absent here: the .json holds it). */
	ASSERT_EQ(fp_view_read_profile(fpt_data_path("profiles/flagprism-crashed.meta.json"), NULL,
				       0, &t, &info, &d),
		  FP_EIO);
	ASSERT(info.incomplete);
	ASSERT(strstr(d.msg, "flagprism-crashed.hatchet") != NULL);
	ASSERT_OK(fp_view_read_profile(fpt_data_path("profiles/flagprism-crashed.json"), NULL, 0,
				       &t, &info, &d));
	ASSERT(info.has_meta);
	ASSERT(info.incomplete);
	ASSERT_STREQ(info.reasons, "shutdown without finalize; scopes still open at finalize");
	fp_calltree_free(t);
	/* Proton's files have no meta file. */
	ASSERT_OK(fp_view_read_profile(fpt_data_path("profiles/proton-h100.json"), NULL, 0, &t,
				       &info, &d));
	ASSERT(!info.has_meta);
	fp_calltree_free(t);
	/* Errors are "path:line:col: message". */
	t = NULL;
	ASSERT_EQ(fp_view_read_profile(fpt_data_path("profiles/bad-node.json"), NULL, 0, &t, &info,
				       &d),
		  FP_EFORMAT);
	snprintf(path, sizeof(path), "%s:5:14: node: 'frame' must be an object, not a string",
		 fpt_data_path("profiles/bad-node.json"));
	ASSERT_STREQ(d.msg, path);
	ASSERT_EQ(d.line, 5);
	ASSERT_EQ(d.col, 14);
	ASSERT(!info.hatchet.truncated);
	ASSERT_NULL(t);
	ASSERT_EQ(fp_view_read_profile(fpt_data_path("profiles/bad-truncated.json"), NULL, 0, &t,
				       &info, &d),
		  FP_EFORMAT);
	ASSERT(info.hatchet.truncated);
	ASSERT_EQ(d.line, 1);
	ASSERT_EQ(fp_view_read_profile(fpt_data_path("profiles/bad-empty.json"), NULL, 0, &t, &info,
				       &d),
		  FP_EFORMAT);
	ASSERT_EQ(d.line, 1);
	ASSERT_EQ(d.col, 1);
	ASSERT_EQ(fp_view_read_profile(fpt_data_path("profiles/bad-foreign.json"), NULL, 0, &t,
				       &info, &d),
		  FP_EFORMAT);
	ASSERT(strstr(d.msg, ":1:1: top level: expected an array") != NULL);
	ASSERT_EQ(fp_view_read_profile(fpt_data_path("profiles/no-such-file.json"), NULL, 0, &t,
				       &info, &d),
		  FP_EIO);
	ASSERT_EQ(fp_view_read_profile(NULL, NULL, 0, &t, &info, &d), FP_EINVAL);
}

TEST(view_read_meta_problems)
{
	char dir[] = "/tmp/fp-view-meta-XXXXXX", path[256], meta[256];
	struct fp_calltree *t = NULL;
	struct fp_view_read_info info;
	struct fp_diag d;
	FILE *f;

	ASSERT_NOT_NULL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p.hatchet", dir);
	snprintf(meta, sizeof(meta), "%s/p.meta.json", dir);
	f = fopen(path, "w");
	fputs("[{\"frame\":{\"name\":\"ROOT\"},\"metrics\":{}}]", f);
	fclose(f);
	f = fopen(meta, "w");
	fputs("{\"format\": \"something-else\"}", f);
	fclose(f);
	ASSERT_OK(fp_view_read_profile(path, NULL, 0, &t, &info, &d));
	ASSERT(!info.has_meta);
	ASSERT(strstr(info.meta_warning, "not a FlagPrism meta file") != NULL);
	fp_calltree_free(t);
	f = fopen(meta, "w");
	fputs("{\"format\": ", f);
	fclose(f);
	ASSERT_OK(fp_view_read_profile(path, NULL, 0, &t, &info, &d));
	ASSERT(strstr(info.meta_warning, "p.meta.json:1:12:") != NULL);
	fp_calltree_free(t);
	/* A crashed session: meta says incomplete, no Hatchet file at all. */
	f = fopen(meta, "w");
	fputs("{\"format\":\"flagprism-profile-meta\",\"incomplete\":true,"
	      "\"incomplete_reasons\":[\"shutdown without finalize\"]}",
	      f);
	fclose(f);
	unlink(path);
	ASSERT_EQ(fp_view_read_profile(meta, NULL, 0, &t, &info, &d), FP_EIO);
	ASSERT(info.incomplete);
	ASSERT(strstr(d.msg, "the meta file says the profile is incomplete: shutdown without "
			     "finalize") != NULL);
	unlink(meta);
	rmdir(dir);
}

/* ---- OOM sweeps --------------------------------------------------------------------------- */

TEST(view_oom_read)
{
	size_t len;
	char *text = vt_read_file("profiles/proton-h100.json", &len);
	struct fp_calltree *t = NULL;
	long n, total;
	int rc;

	fpt_oom_install(-1);
	ASSERT_OK(fp_calltree_parse_hatchet(text, len, NULL, 0, &t, NULL, NULL));
	fp_calltree_free(t);
	total = fpt_oom_count();
	ASSERT_EQ(fpt_oom_live(), 0);
	fpt_oom_uninstall();
	for (n = 0; n < total; n++) {
		struct fp_diag d;

		t = NULL;
		fpt_oom_install(n);
		rc = fp_calltree_parse_hatchet(text, len, NULL, 0, &t, NULL, &d);
		if (rc == FP_OK)
			fp_calltree_free(t);
		else if (rc != FP_ENOMEM || t != NULL)
			fpt_fail(__FILE__, __LINE__, "allocation %ld: status %d (%s)", n, rc,
				 d.msg);
		ASSERT_EQ(fpt_oom_live(), 0);
		fpt_oom_uninstall();
	}
	fp_free(text);
}

TEST(view_oom_view)
{
	static const char *const specs[] = {"time/ms,count,util,time/%", NULL};
	struct fp_calltree *a = vt_sample(), *b = vt_sample();
	struct fp_view_options o;
	long n, total, pass;
	int rc;

	for (pass = 0; pass < 3; pass++) {
		struct fp_view *v = NULL;
		char *buf = NULL;
		size_t len = 0;
		FILE *f;

		fp_view_options_init(&o);
		o.metrics = specs[0];
		o.include = pass == 1 ? "attn" : NULL;
		o.print_sorted = pass == 2;
		fpt_oom_install(-1);
		ASSERT_OK(fp_view_new(a, pass == 2 ? b : NULL, &o, &v, NULL));
		f = open_memstream(&buf, &len);
		ASSERT_OK(fp_view_render(v, f));
		fclose(f);
		free(buf);
		fp_view_free(v);
		total = fpt_oom_count();
		ASSERT_EQ(fpt_oom_live(), 0);
		fpt_oom_uninstall();
		for (n = 0; n < total; n++) {
			v = NULL;
			fpt_oom_install(n);
			rc = fp_view_new(a, pass == 2 ? b : NULL, &o, &v, NULL);
			if (rc == FP_OK) {
				f = open_memstream(&buf, &len);
				rc = fp_view_render(v, f);
				fclose(f);
				free(buf);
				fp_view_free(v);
			} else {
				ASSERT_NULL(v);
			}
			if (rc != FP_OK && rc != FP_ENOMEM)
				fpt_fail(__FILE__, __LINE__, "pass %ld allocation %ld: status %d",
					 pass, n, rc);
			ASSERT_EQ(fpt_oom_live(), 0);
			fpt_oom_uninstall();
		}
	}
	fp_calltree_free(a);
	fp_calltree_free(b);
}

/*
 * C++ kernels: a node filed under its demangled name with "mangled_name" (what sessions write)
 * and a node named by the mangled symbol itself (an older profile) both show the short form;
 * full_names shows the full one; Python frames ("<module>") are not mistaken for templates.
 */
TEST(view_cpp_kernel_names)
{
	static const char mangled[] = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10Abs"
				      "FunctorIfEESt5arrayIPcLm2EEEEviT0_T1_";
	static const char full[] = "void at::native::vectorized_elementwise_kernel<4, "
				   "at::native::AbsFunctor<float>, std::array<char*, 2ul> >(int, "
				   "at::native::AbsFunctor<float>, std::array<char*, 2ul>)";
	static const char *const p1[] = {"/w/main.py:<module>@3", full};
	static const char *const p2[] = {"old", mangled};
	struct fp_calltree *t = fp_calltree_new(NULL);
	struct fp_view_options o;
	uint32_t n, n1, m;
	char *s;

	ASSERT_NOT_NULL(t);
	n1 = fpt_tree_path(t, p1, 2);
	vt_kernel(t, n1, 2e6, 4, "0");
	ASSERT_OK(fp_calltree_metric(t, "mangled_name", 12, FP_METRIC_PROPERTY, &m));
	ASSERT_OK(fp_calltree_set_string(t, n1, m, mangled, strlen(mangled)));
	n = fpt_tree_path(t, p2, 2);
	vt_kernel(t, n, 1e6, 1, "0");
	ASSERT_OK(fp_calltree_finalize(t));
	fp_view_options_init(&o);
	o.metrics = "time/ms";
	o.sort = FP_VIEW_SORT_NAME;
	s = vt_view(t, NULL, &o);
	ASSERT_STREQ(
		s, "time/ms  name\n"
		   "      3  ROOT\n"
		   "      2  \u251c\u2500 /w/main.py:<module>@3\n"
		   "      2  \u2502  \u2514\u2500 at::native::vectorized_elementwise_kernel<...>\n"
		   "      1  \u2514\u2500 old\n"
		   "      1     \u2514\u2500 at::native::vectorized_elementwise_kernel<...>\n");
	free(s);
	o.full_names = true;
	s = vt_view(t, NULL, &o);
	ASSERT(strstr(s, "\u2502  \u2514\u2500 void at::native::vectorized_elementwise_kernel<4, "
			 "at::native::AbsFunctor<float>, std::array<char*, 2ul> >(int, ") != NULL);
	ASSERT(strstr(s, "   \u2514\u2500 void at::native::vectorized_elementwise_kernel<4,") !=
	       NULL);
	free(s);
	/* a comparison shows them the same way */
	o.full_names = false;
	s = vt_view(t, t, &o);
	ASSERT(strstr(s, "at::native::vectorized_elementwise_kernel<...>") != NULL);
	ASSERT(strstr(s, "_ZN2at") == NULL);
	free(s);
	/* the roofline table too (a name longer than its column on a line of its own) */
	{
		char *rb = NULL;
		size_t rl = 0;
		FILE *f = open_memstream(&rb, &rl);

		ASSERT_NOT_NULL(f);
		ASSERT_OK(fp_roofline_render(t, 10, false, f));
		fclose(f);
		ASSERT(strstr(rb, "\nat::native::vectorized_elementwise_kernel<...>\n") != NULL);
		ASSERT(strstr(rb, "_ZN2at") == NULL);
		free(rb);
	}
	/* and the library helper itself */
	{
		char buf[64];
		size_t len;

		ASSERT(fp_calltree_node_display(t, n, false, buf, sizeof(buf), &len));
		ASSERT_STREQ(buf, "at::native::vectorized_elementwise_kernel<...>");
		ASSERT(!fp_calltree_node_display(t, FP_CALLTREE_ROOT, false, buf, sizeof(buf),
						 &len));
		ASSERT_STREQ(buf, "ROOT");
		ASSERT(fp_calltree_node_display(t, n1, true, buf, sizeof(buf), &len));
		ASSERT_EQ(len, strlen(full)); /* cut to the buffer, length untruncated */
		ASSERT_EQ(strlen(buf), sizeof(buf) - 1);
	}
	fp_calltree_free(t);
}

/* A profile without launch_metadata: gbyte/s and tflop/s come from the IR estimates, said in a
 * note; width-specific rates cannot, and the error says which spec can. */
TEST(view_rates_fall_back_to_estimates)
{
	static const char *const p[] = {"k"};
	struct fp_calltree *t = fp_calltree_new(NULL), *bare = fp_calltree_new(NULL);
	struct fp_view_options o;
	struct fp_view_metric m;
	struct fp_diag d;
	uint32_t n;
	char *s;

	ASSERT_NOT_NULL(t);
	ASSERT_NOT_NULL(bare);
	n = fpt_tree_path(t, p, 1);
	vt_kernel(t, n, 1e6, 1, "0");
	fpt_tree_add(t, n, "est_bytes", 4e9);
	fpt_tree_add(t, n, "est_flops", 2e12);
	ASSERT_OK(fp_calltree_finalize(t));
	ASSERT_OK(fp_view_metric_parse(t, "gbyte/s", 7, &m, &d));
	ASSERT(m.estimated);
	ASSERT_NEAR(vt_value(t, "gbyte/s", n), 4e9 / 1e-3 / 1e9, 1e-9);
	ASSERT_NEAR(vt_value(t, "tflop/s", n), 2e12 / 1e-3 / 1e12, 1e-9);
	ASSERT_OK(fp_view_metric_parse(t, "est_gbyte/s", 11, &m, &d));
	ASSERT(!m.estimated);
	ASSERT_EQ(fp_view_metric_parse(t, "tflop16/s", 9, &m, &d), FP_EINVAL);
	ASSERT(strstr(d.msg, "est_tflop/s") != NULL);
	fp_view_options_init(&o);
	o.metrics = "time/ms,gbyte/s";
	s = vt_view(t, NULL, &o);
	ASSERT(strstr(s, "note: gbyte/s: no measured bytes in this profile") != NULL);
	ASSERT(strstr(s, "as est_gbyte/s") != NULL);
	free(s);
	/* nothing to fall back to: the error says where bytes come from */
	n = fpt_tree_path(bare, p, 1);
	vt_kernel(bare, n, 1e6, 1, "0");
	ASSERT_OK(fp_calltree_finalize(bare));
	ASSERT_EQ(fp_view_metric_parse(bare, "gbyte/s", 7, &m, &d), FP_EINVAL);
	ASSERT(strstr(d.msg, "launch_metadata") != NULL);
	fp_calltree_free(t);
	fp_calltree_free(bare);
}

/* A scope that launched nothing and got no metric carries nothing: hidden, with a note. */
TEST(view_empty_nodes_hidden)
{
	static const char *const full[] = {"step", "k"};
	static const char *const empty[] = {"tokenize", "inner"};
	static const char *const timed[] = {"load"};
	struct fp_calltree *t = fp_calltree_new(NULL);
	struct fp_view_options o;
	uint32_t n;
	char *s;

	ASSERT_NOT_NULL(t);
	n = fpt_tree_path(t, full, 2);
	vt_kernel(t, n, 1e6, 1, "0");
	fpt_tree_path(t, empty, 2);
	n = fpt_tree_path(t, timed, 1);
	fpt_tree_add(t, n, "cpu_time (ns)(exc)", 5e5);
	ASSERT_OK(fp_calltree_finalize(t));
	fp_view_options_init(&o);
	o.metrics = "time/ms";
	o.sort = FP_VIEW_SORT_NAME;
	s = vt_view(t, NULL, &o);
	ASSERT_STREQ(s, "time/ms  name\n"
			"      1  ROOT\n"
			"      0  \u251c\u2500 load\n"
			"      1  \u2514\u2500 step\n"
			"      1     \u2514\u2500 k\n"
			"note: 2 nodes without any metric value in their subtree hidden\n");
	free(s);
	fp_calltree_free(t);
}
