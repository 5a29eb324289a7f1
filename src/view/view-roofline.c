/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Roofline positions of kernel nodes (include/flagprism/roofline.h): which numbers a profile
 * has for a node's work and DRAM traffic (hardware counters, Nsight Compute, launch metadata,
 * IR estimates, in that order), the device's peaks, and the table `flagprism view --roofline`
 * prints. Reads a finalized tree only; the column machinery of the viewer is view-metric.c.
 */
#include "fp-setup.h"

#define NAME_MAX_SHOWN 4096 /* bytes of a kernel name shown */

#include <math.h>

#include <flagprism/roofline.h>
#include <flagprism/view.h>

#define FFMA "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
#define FADD "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"
#define FMUL "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"
#define DRAM_READ "dram__bytes_read.sum"
#define DRAM_WRITE "dram__bytes_write.sum"

const char *fp_roofline_source_name(enum fp_roofline_source s)
{
	switch (s) {
	case FP_ROOFLINE_COUNTERS:
		return "counters";
	case FP_ROOFLINE_NCU:
		return "ncu";
	case FP_ROOFLINE_METADATA:
		return "metadata";
	case FP_ROOFLINE_ESTIMATE:
		return "estimate";
	case FP_ROOFLINE_NONE:
		break;
	}
	return "-";
}

/* The value of the metric named exactly `name` ("hw:...") or "name (unit)" ("ncu:... (byte)")
 * at `node`: total for inclusive metrics, else the node's own. NaN when absent. */
static double value(const struct fp_calltree *t, uint32_t node, const char *prefix,
		    const char *name)
{
	size_t plen = strlen(prefix), nlen = strlen(name), len;
	uint32_t m, n = fp_calltree_metric_count(t);
	struct fp_calltree_value v;

	for (m = 0; m < n; m++) {
		const char *s = fp_calltree_metric_name(t, m, &len, NULL);

		if (!s || len < plen + nlen || memcmp(s, prefix, plen) ||
		    memcmp(s + plen, name, nlen))
			continue;
		if (len != plen + nlen && s[plen + nlen] != ' ')
			continue;
		if (fp_calltree_get(t, node, m, &v) != FP_OK || v.is_string)
			return NAN;
		return v.kind == FP_METRIC_INCLUSIVE ? v.total : v.self;
	}
	return NAN;
}

static const char *string(const struct fp_calltree *t, uint32_t node, const char *name)
{
	struct fp_calltree_value v;
	uint32_t m;

	if (fp_calltree_metric_find(t, name, strlen(name), &m) ||
	    fp_calltree_get(t, node, m, &v) != FP_OK || !v.is_string)
		return NULL;
	return v.str;
}

/* 2 x FFMA + FADD + FMUL from one source prefix; NaN without FFMA. */
static double fp32_work(const struct fp_calltree *t, uint32_t node, const char *prefix)
{
	double ffma = value(t, node, prefix, FFMA), add, mul;

	if (isnan(ffma))
		return NAN;
	add = value(t, node, prefix, FADD);
	mul = value(t, node, prefix, FMUL);
	return 2 * ffma + (isnan(add) ? 0 : add) + (isnan(mul) ? 0 : mul);
}

static double traffic(const struct fp_calltree *t, uint32_t node, const char *prefix)
{
	double r = value(t, node, prefix, DRAM_READ), w = value(t, node, prefix, DRAM_WRITE);

	if (isnan(r) && isnan(w))
		return value(t, node, prefix, "dram__bytes.sum");
	return (isnan(r) ? 0 : r) + (isnan(w) ? 0 : w);
}

/* A numeric attribute of the device table, NaN when absent. */
static double device_attr(const struct fp_calltree *t, const char *type, const char *index,
			  const char *key)
{
	struct fp_calltree_device_attr a;
	size_t i, n = fp_calltree_device_count(t);

	for (i = 0; i < n; i++)
		if (fp_calltree_device_at(t, i, &a) == FP_OK && !a.is_string &&
		    (!type || !strcmp(a.type, type)) && index && !strcmp(a.index, index) &&
		    !strcmp(a.key, key))
			return a.value;
	return NAN;
}

/*
 * Peak FP32 FLOP/s of the CUDA cores (FFMA, not tensor cores): SMs x FP32 lanes per SM x 2 x
 * clock. Lanes: 64 on sm_80, 128 on sm_89, sm_90 and sm_100 (H100 SXM: 132 x 128 x 2 x 1.98
 * GHz = 66.9 TFLOP/s, its datasheet's 67). NaN for other archs or missing fields.
 */
static double ffma_peak(const struct fp_calltree *t, const char *type, const char *index,
			const char *arch)
{
	double sms = device_attr(t, type, index, "num_sms");
	double khz = device_attr(t, type, index, "clock_rate");
	int lanes = 0;

	if (!strcmp(arch, "80"))
		lanes = 64;
	else if (!strcmp(arch, "89") || !strcmp(arch, "90") || !strcmp(arch, "100"))
		lanes = 128;
	if (!lanes || isnan(sms) || isnan(khz) || sms <= 0 || khz <= 0)
		return NAN;
	return sms * lanes * 2 * khz * 1e3;
}

double fp_roofline_fp32_peak(const struct fp_calltree *t, const char *type, const char *index)
{
	struct fp_view_peaks pk;

	if (!t || !index)
		return NAN;
	fp_view_peaks_of(t, type, index, &pk);
	if (!pk.known)
		return NAN;
	return ffma_peak(t, type, index, pk.arch);
}

int fp_roofline_point(const struct fp_calltree *t, uint32_t node, struct fp_roofline_point *out)
{
	static const int widths[4] = {8, 16, 32, 64};
	struct fp_view_peaks pk;
	double ns, best = 0;
	int w;

	if (!t || !out || node >= fp_calltree_node_count(t))
		return FP_EINVAL;
	memset(out, 0, sizeof(*out));
	out->flops = out->bytes = out->flop_per_s = out->byte_per_s = out->intensity = NAN;
	out->peak_flops = out->peak_bytes_per_s = out->ridge = out->roof = NAN;
	out->pct_of_roof = NAN;
	out->bound = "unknown";
	ns = value(t, node, "", "time (ns)");
	if (isnan(ns) || ns <= 0)
		return FP_ENOENT;
	out->seconds = ns * 1e-9;

	/* Work. */
	out->flops_width = 32;
	if (!isnan(out->flops = fp32_work(t, node, "hw:"))) {
		out->flops_src = FP_ROOFLINE_COUNTERS;
	} else if (!isnan(out->flops = fp32_work(t, node, "ncu:"))) {
		out->flops_src = FP_ROOFLINE_NCU;
	} else {
		double sum = 0;
		bool any = false;

		for (w = 0; w < 4; w++) {
			char name[16];
			double v;

			snprintf(name, sizeof(name), "flops%d", widths[w]);
			v = value(t, node, "", name);
			if (!isnan(v) && v > 0) {
				sum += v;
				any = true;
				if (v > best) {
					best = v;
					out->flops_width = widths[w];
				}
			}
		}
		if (any) {
			out->flops = sum;
			out->flops_src = FP_ROOFLINE_METADATA;
		} else if (!isnan(out->flops = value(t, node, "", "est_flops"))) {
			out->flops_src = FP_ROOFLINE_ESTIMATE;
			out->flops_width = 16;
		}
	}
	/* Traffic. */
	if (!isnan(out->bytes = traffic(t, node, "hw:")))
		out->bytes_src = FP_ROOFLINE_COUNTERS;
	else if (!isnan(out->bytes = traffic(t, node, "ncu:")))
		out->bytes_src = FP_ROOFLINE_NCU;
	else if (!isnan(out->bytes = value(t, node, "", "bytes")))
		out->bytes_src = FP_ROOFLINE_METADATA;
	else if (!isnan(out->bytes = value(t, node, "", "est_bytes")))
		out->bytes_src = FP_ROOFLINE_ESTIMATE;

	if (!isnan(out->flops))
		out->flop_per_s = out->flops / out->seconds;
	if (!isnan(out->bytes))
		out->byte_per_s = out->bytes / out->seconds;
	if (!isnan(out->flops) && !isnan(out->bytes) && out->bytes > 0)
		out->intensity = out->flops / out->bytes;

	fp_view_peaks_of(t, string(t, node, "device_type"), string(t, node, "device_id"), &pk);
	if (!pk.known)
		return FP_OK;
	out->peaks_known = true;
	for (w = 0; w < 4 && widths[w] != out->flops_width; w++)
		;
	out->peak_flops = pk.flops[w < 4 ? w : 1];
	if (out->flops_src == FP_ROOFLINE_COUNTERS || out->flops_src == FP_ROOFLINE_NCU) {
		/* Counted FFMA/FADD/FMUL run on the CUDA cores: their roof, not the tensor one. */
		out->peak_flops = ffma_peak(t, string(t, node, "device_type"),
					    string(t, node, "device_id"), pk.arch);
		if (isnan(out->peak_flops)) {
			out->peaks_known = false;
			return FP_OK;
		}
	}
	out->peak_bytes_per_s = pk.bytes_per_s;
	out->ridge = out->peak_flops / out->peak_bytes_per_s;
	if (!isnan(out->intensity)) {
		out->roof = FP_MIN(out->peak_flops, out->intensity * out->peak_bytes_per_s);
		out->pct_of_roof = 100 * out->flop_per_s / out->roof;
		out->bound = out->intensity < out->ridge ? "memory" : "compute";
	} else if (!isnan(out->byte_per_s)) {
		out->pct_of_roof = 100 * out->byte_per_s / out->peak_bytes_per_s;
	} else if (!isnan(out->flop_per_s)) {
		out->pct_of_roof = 100 * out->flop_per_s / out->peak_flops;
	}
	return FP_OK;
}

struct row {
	uint32_t node;
	struct fp_roofline_point p;
};

static int by_time(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->p.seconds != y->p.seconds)
		return x->p.seconds > y->p.seconds ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

static void num(double v, double scale, char *buf, size_t size)
{
	if (isnan(v))
		snprintf(buf, size, "n/a");
	else
		fp_view_format_number(v / scale, buf, size);
}

int fp_roofline_render(const struct fp_calltree *t, size_t max_rows, bool full_names, FILE *f)
{
	struct row *rows;
	size_t n = 0, i, nodes;
	char dev_seen[8][48];
	size_t ndev = 0;
	int rc = FP_OK;

	if (!t || !f)
		return FP_EINVAL;
	nodes = fp_calltree_node_count(t);
	rows = fp_calloc(nodes ? nodes : 1, sizeof(*rows));
	if (!rows)
		return FP_ENOMEM;
	for (i = 1; i < nodes; i++) {
		if (!string(t, (uint32_t)i, "device_id"))
			continue;
		if (fp_roofline_point(t, (uint32_t)i, &rows[n].p) != FP_OK)
			continue;
		rows[n++].node = (uint32_t)i;
	}
	qsort(rows, n, sizeof(*rows), by_time);
	for (i = 0; i < n; i++) {
		const char *type = string(t, rows[i].node, "device_type");
		const char *id = string(t, rows[i].node, "device_id");
		struct fp_view_peaks pk;
		char key[48], a[32], b[32], c[32], d[32];
		size_t j;

		snprintf(key, sizeof(key), "%s %s", type ? type : "?", id ? id : "?");
		for (j = 0; j < ndev && strcmp(dev_seen[j], key); j++)
			;
		if (j < ndev || ndev == FP_ARRAY_SIZE(dev_seen))
			continue;
		snprintf(dev_seen[ndev++], sizeof(dev_seen[0]), "%s", key);
		fp_view_peaks_of(t, type, id, &pk);
		if (!pk.known) {
			fprintf(f, "device %s: no peaks (%s)\n", key, pk.note);
			continue;
		}
		num(pk.flops[1], 1e12, a, sizeof(a));
		num(ffma_peak(t, type, id, pk.arch), 1e12, b, sizeof(b));
		num(pk.bytes_per_s, 1e12, c, sizeof(c));
		num(pk.flops[1] / pk.bytes_per_s, 1, d, sizeof(d));
		fprintf(f,
			"device %s: arch %s, peak %s TFLOP/s (16-bit tensor), %s TFLOP/s (FP32 "
			"FFMA), %s TB/s; 16-bit ridge at %s FLOP/byte\n",
			key, pk.arch, a, b, c, d);
	}
	fprintf(f, "%-32s %10s %10s %10s %9s %10s %7s %-8s %s\n", "kernel", "time/ms", "GFLOP/s",
		"GB/s", "FLOP/B", "roof GF/s", "%roof", "bound", "sources (flops, bytes)");
	for (i = 0; i < n && i < max_rows; i++) {
		const struct fp_roofline_point *p = &rows[i].p;
		char tm[32], fl[32], by[32], ai[32], rf[32], pc[32], name[NAME_MAX_SHOWN + 1];
		size_t len;

		/* C++ kernels short (template arguments elided) unless full_names; a name too
		 * long for the column gets a line of its own, above its row */
		fp_calltree_node_display(t, rows[i].node, full_names, name, sizeof(name), &len);
		if (len > 32) {
			fprintf(f, "%s%s\n", name, len > NAME_MAX_SHOWN ? "..." : "");
			name[0] = '\0';
		}
		num(p->seconds, 1e-3, tm, sizeof(tm));
		num(p->flop_per_s, 1e9, fl, sizeof(fl));
		num(p->byte_per_s, 1e9, by, sizeof(by));
		num(p->intensity, 1, ai, sizeof(ai));
		num(p->roof, 1e9, rf, sizeof(rf));
		num(p->pct_of_roof, 1, pc, sizeof(pc));
		fprintf(f, "%-32s %10s %10s %10s %9s %10s %7s %-8s %s, %s\n", name, tm, fl, by, ai,
			rf, pc, p->bound, fp_roofline_source_name(p->flops_src),
			fp_roofline_source_name(p->bytes_src));
	}
	if (n > max_rows)
		fprintf(f, "(%zu more kernel nodes)\n", n - max_rows);
	if (!n)
		fprintf(f, "(no kernel node with a time and a device)\n");
	if (ferror(f))
		rc = FP_EIO;
	fp_free(rows);
	return rc;
}
