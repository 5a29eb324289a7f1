/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The viewer's metrics: parsing specs such as "time/ms", "avg_time/us", "tflop16/s", "gbyte/s",
 * "time/%" or "util" against the metrics a tree has (case-insensitive, units ignored, as
 * proton-viewer does), the arithmetic of one value, the device peak table behind "util", and
 * the --list text. It does not walk views or render trees (view.c) and does not read files.
 *
 * Peaks follow the device model proton-viewer uses, so that both tools agree on "util":
 * per-arch FP8 tensor throughput halved for each doubling of operand width, with sm_90 scaled
 * from the H100 PCIe (114 SMs at 1755 MHz: 1513 TFLOP/s FP8) by SM count and clock and sm_100
 * at 16384 FP8 FLOP per SM per clock; DRAM bandwidth from bus width and memory clock.
 */
#include "fp-setup.h"

#include <math.h>

#include "view/view-internal.h"

/* ---- small string helpers (ASCII only: metric names are ours or Proton's) ------------------ */

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static bool eq_nocase(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t i;

	if (alen != blen)
		return false;
	for (i = 0; i < alen; i++)
		if (lower((unsigned char)a[i]) != lower((unsigned char)b[i]))
			return false;
	return true;
}

static bool starts_nocase(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && eq_nocase(s, n, prefix, n);
}

/* The metric's name without its units and type suffixes: "cpu_time (ns)(exc)" -> "cpu_time". */
static size_t short_len(const char *name, size_t len)
{
	const char *paren = memchr(name, '(', len);
	size_t n = paren ? (size_t)(paren - name) : len;

	while (n > 0 && name[n - 1] == ' ')
		n--;
	return n;
}

/* Seconds per unit of a metric whose first parenthesised unit is s, ms, us or ns; 0 if none. */
static double time_unit(const char *name, size_t len)
{
	const char *paren = memchr(name, '(', len), *close;
	size_t n;

	if (!paren)
		return 0;
	close = memchr(paren, ')', len - (size_t)(paren - name));
	if (!close)
		return 0;
	paren++;
	n = (size_t)(close - paren);
	if (eq_nocase(paren, n, "s", 1))
		return 1;
	if (eq_nocase(paren, n, "ms", 2))
		return 1e-3;
	if (eq_nocase(paren, n, "us", 2))
		return 1e-6;
	if (eq_nocase(paren, n, "ns", 2))
		return 1e-9;
	return 0;
}

static double unit_scale(const char *u, size_t n)
{
	if (eq_nocase(u, n, "s", 1))
		return 1;
	if (eq_nocase(u, n, "ms", 2))
		return 1e-3;
	if (eq_nocase(u, n, "us", 2))
		return 1e-6;
	if (eq_nocase(u, n, "ns", 2))
		return 1e-9;
	return 0;
}

/* Whether a metric holds only strings (a text property): not usable as a column. */
static bool is_text(const struct fp_calltree *t, uint32_t m)
{
	enum fp_metric_kind kind;
	size_t n = fp_calltree_node_count(t), i;
	struct fp_calltree_value v;
	bool text = false;

	fp_calltree_metric_name(t, m, NULL, &kind);
	if (kind != FP_METRIC_PROPERTY)
		return false;
	/* A property is text when its first value is; scanning stops at the first value. */
	for (i = 0; i < n; i++) {
		if (fp_calltree_get(t, (uint32_t)i, m, &v) == FP_OK) {
			text = v.is_string;
			break;
		}
	}
	return text;
}

/*
 * The metric a name selects: an exact (case-insensitive) match of the full name first, else of
 * the short name, preferring inclusive, then exclusive metrics, then the others, then the first
 * registered. FP_VIEW_NONE when nothing matches.
 */
static uint32_t find_metric(const struct fp_calltree *t, const char *s, size_t len)
{
	uint32_t n = fp_calltree_metric_count(t), m, best = FP_VIEW_NONE;
	int best_rank = 99;

	for (m = 0; m < n; m++) {
		enum fp_metric_kind kind;
		size_t nlen;
		const char *name = fp_calltree_metric_name(t, m, &nlen, &kind);
		int rank;

		if (eq_nocase(name, nlen, s, len))
			return m;
		if (!eq_nocase(name, short_len(name, nlen), s, len))
			continue;
		rank = kind == FP_METRIC_INCLUSIVE ? 0 : kind == FP_METRIC_EXCLUSIVE ? 1 : 2;
		if (rank < best_rank) {
			best_rank = rank;
			best = m;
		}
	}
	return best;
}

static uint32_t find_cstr(const struct fp_calltree *t, const char *s)
{
	return find_metric(t, s, strlen(s));
}

/* "unknown metric 'x'; this profile has: a, b, c (--list shows derived ones)" */
static int unknown(const struct fp_calltree *t, struct fp_diag *diag, const char *why,
		   const char *spec, size_t len)
{
	char list[200];
	size_t used = 0;
	uint32_t m, n = fp_calltree_metric_count(t);

	list[0] = '\0';
	for (m = 0; m < n && used + 1 < sizeof(list); m++) {
		size_t nlen;
		const char *name = fp_calltree_metric_name(t, m, &nlen, NULL);
		int k = snprintf(list + used, sizeof(list) - used, "%s'%.*s'", used ? ", " : "",
				 (int)FP_MIN(nlen, 60), name);

		if (k < 0)
			break;
		used = FP_MIN(used + (size_t)k, sizeof(list) - 1);
	}
	fp__view_clean(list, strlen(list));
	fp_diag_set(diag, FP_EINVAL, 0,
		    "%s '%.*s'; this profile has %s%s (run with --list for derived metrics)", why,
		    (int)FP_MIN(len, 60), spec, n ? "" : "no metrics", list);
	if (diag)
		fp__view_clean(diag->msg, strlen(diag->msg));
	return FP_EINVAL;
}

void fp__view_clean(char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			s[i] = '?';
}

static void set_label(struct fp_view_metric *out, const char *s, size_t len)
{
	size_t n = FP_MIN(len, sizeof(out->label) - 1);

	memcpy(out->label, s, n);
	out->label[n] = '\0';
	fp__view_clean(out->label, n);
}

static void init_metric(struct fp_view_metric *m)
{
	size_t i;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < FP_VIEW_MAX_SRC; i++)
		m->src[i] = FP_VIEW_NONE;
	m->scale = 1;
	m->time_scale = 1;
}

static bool is_summed(const struct fp_calltree *t, uint32_t m)
{
	enum fp_metric_kind kind = FP_METRIC_PROPERTY;

	fp_calltree_metric_name(t, m, NULL, &kind);
	return kind == FP_METRIC_INCLUSIVE || kind == FP_METRIC_EXCLUSIVE;
}

/* The "time" metric that rates divide by: FP_OK with its id and seconds per unit. */
static int find_time(const struct fp_calltree *t, uint32_t *id, double *secs)
{
	size_t len;
	const char *name;

	*id = find_cstr(t, "time");
	if (*id == FP_VIEW_NONE)
		return FP_ENOENT;
	name = fp_calltree_metric_name(t, *id, &len, NULL);
	*secs = time_unit(name, len);
	return *secs > 0 ? FP_OK : FP_ENOENT;
}

/*
 * "[est_][g|t]flop[8|16|32|64]" or "[est_][g|t]byte" before "/s". FP_OK with the numerator
 * metrics; FP_ENOENT when `left` is not of that form; FP_EINVAL when it is but the metrics are
 * missing (diag set).
 */
/* Whether the tree has a measured flops metric ("flops" or a width). */
static bool has_flops(const struct fp_calltree *t)
{
	static const char *const names[] = {"flops", "flops8", "flops16", "flops32", "flops64"};
	size_t i;

	for (i = 0; i < FP_ARRAY_SIZE(names); i++)
		if (find_cstr(t, names[i]) != FP_VIEW_NONE)
			return true;
	return false;
}

static int parse_rate(const struct fp_calltree *t, const char *spec, size_t speclen,
		      const char *left, size_t n, struct fp_view_metric *out, struct fp_diag *diag)
{
	static const char *const widths[] = {"8", "16", "32", "64"};
	bool est = false, flop;
	char name[16];
	size_t i;

	if (starts_nocase(left, n, "est_")) {
		est = true;
		left += 4;
		n -= 4;
	}
	out->scale = 1;
	if (n > 0 && lower((unsigned char)left[0]) == 'g' &&
	    (starts_nocase(left + 1, n - 1, "flop") || starts_nocase(left + 1, n - 1, "byte"))) {
		out->scale = 1e9;
		left++;
		n--;
	} else if (n > 0 && lower((unsigned char)left[0]) == 't' &&
		   (starts_nocase(left + 1, n - 1, "flop") ||
		    starts_nocase(left + 1, n - 1, "byte"))) {
		out->scale = 1e12;
		left++;
		n--;
	}
	if (eq_nocase(left, n, "byte", 4)) {
		flop = false;
	} else if (starts_nocase(left, n, "flop")) {
		flop = true;
		left += 4;
		n -= 4;
	} else {
		return FP_ENOENT;
	}
	out->op = FP_VIEW_OP_RATE;
	out->nsrc = 1;
	if (!est && (flop ? n == 0 && !has_flops(t) : find_cstr(t, "bytes") == FP_VIEW_NONE) &&
	    find_cstr(t, flop ? "est_flops" : "est_bytes") != FP_VIEW_NONE) {
		/* Nothing measured (no launch_metadata): FlagPrism's IR estimate, and a note. */
		est = true;
		out->estimated = true;
	}
	if (!flop) {
		out->src[out->nsrc] = find_cstr(t, est ? "est_bytes" : "bytes");
		if (out->src[out->nsrc] == FP_VIEW_NONE)
			return unknown(t, diag,
				       est ? "no 'est_bytes' metric for" :
					     "no 'bytes' metric (kernels report bytes through "
					     "launch_metadata with hook=\"triton\") for",
				       spec, speclen);
		out->nsrc++;
	} else if (n > 0) {
		if (est)
			return unknown(t, diag, "no width-specific estimate for", spec, speclen);
		for (i = 0; i < FP_ARRAY_SIZE(widths); i++)
			if (eq_nocase(left, n, widths[i], strlen(widths[i])))
				break;
		if (i == FP_ARRAY_SIZE(widths))
			return FP_ENOENT;
		snprintf(name, sizeof(name), "flops%s", widths[i]);
		out->src[out->nsrc] = find_cstr(t, name);
		if (out->src[out->nsrc] == FP_VIEW_NONE)
			return unknown(t, diag,
				       find_cstr(t, "est_flops") != FP_VIEW_NONE ?
					       "no matching flops metric (est_tflop/s uses the IR "
					       "estimate, which has no width) for" :
					       "no matching flops metric for",
				       spec, speclen);
		out->nsrc++;
	} else if (est) {
		out->src[out->nsrc] = find_cstr(t, "est_flops");
		if (out->src[out->nsrc] == FP_VIEW_NONE)
			return unknown(t, diag, "no 'est_flops' metric for", spec, speclen);
		out->nsrc++;
	} else {
		/* "flop/s": the metric "flops" if there is one, else every width present. */
		out->src[out->nsrc] = find_cstr(t, "flops");
		if (out->src[out->nsrc] != FP_VIEW_NONE) {
			out->nsrc++;
		} else {
			for (i = 0; i < FP_ARRAY_SIZE(widths); i++) {
				snprintf(name, sizeof(name), "flops%s", widths[i]);
				out->src[out->nsrc] = find_cstr(t, name);
				if (out->src[out->nsrc] != FP_VIEW_NONE)
					out->nsrc++;
			}
			out->src[out->nsrc] = FP_VIEW_NONE;
			if (out->nsrc == 1)
				return unknown(t, diag, "no flops metric for", spec, speclen);
		}
	}
	if (find_time(t, &out->src[0], &out->time_scale))
		return unknown(t, diag, "no 'time' metric with a time unit for", spec, speclen);
	return FP_OK;
}

static int parse_util(const struct fp_calltree *t, bool est, const char *spec, size_t len,
		      struct fp_view_metric *out, struct fp_diag *diag)
{
	static const char *const names[FP_VIEW_U_COUNT] = {
		[FP_VIEW_U_FLOPS8] = "flops8",       [FP_VIEW_U_FLOPS16] = "flops16",
		[FP_VIEW_U_FLOPS32] = "flops32",     [FP_VIEW_U_FLOPS64] = "flops64",
		[FP_VIEW_U_BYTES] = "bytes",         [FP_VIEW_U_EST_FLOPS] = "est_flops",
		[FP_VIEW_U_EST_BYTES] = "est_bytes", [FP_VIEW_U_DEVICE_TYPE] = "device_type",
		[FP_VIEW_U_DEVICE_ID] = "device_id",
	};
	size_t i;
	bool any = false;

	out->op = est ? FP_VIEW_OP_EST_UTIL : FP_VIEW_OP_UTIL;
	out->nsrc = FP_VIEW_U_COUNT;
	for (i = FP_VIEW_U_FLOPS8; i < FP_VIEW_U_COUNT; i++) {
		if (est && i < FP_VIEW_U_EST_FLOPS)
			continue;
		out->src[i] = find_cstr(t, names[i]);
		if (out->src[i] != FP_VIEW_NONE && i < FP_VIEW_U_DEVICE_TYPE)
			any = true;
	}
	if (!any)
		return unknown(t, diag,
			       est ? "no est_flops or est_bytes metric for" :
				     "no flops, bytes or estimate metric for",
			       spec, len);
	if (out->src[FP_VIEW_U_DEVICE_ID] == FP_VIEW_NONE)
		return unknown(t, diag,
			       "no 'device_id' metric (kernel nodes name their device) for", spec,
			       len);
	if (find_time(t, &out->src[FP_VIEW_U_TIME], &out->time_scale))
		return unknown(t, diag, "no 'time' metric with a time unit for", spec, len);
	return FP_OK;
}

int fp_view_metric_parse(const struct fp_calltree *t, const char *spec, size_t len,
			 struct fp_view_metric *out, struct fp_diag *diag)
{
	const char *s = spec, *slash;
	size_t n = len;
	uint32_t m;
	int rc;

	if (!t || !out || (!spec && len))
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_view_metric_parse: NULL argument");
	init_metric(out);
	while (n > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (n == 0)
		return fp_diag_set(diag, FP_EINVAL, 0, "empty metric name");
	set_label(out, s, n);
	if (eq_nocase(s, n, "util", 4))
		return parse_util(t, false, s, n, out, diag);
	if (eq_nocase(s, n, "est_util", 8))
		return parse_util(t, true, s, n, out, diag);

	slash = NULL;
	for (size_t i = n; i-- > 0;) {
		if (s[i] == '/') {
			slash = s + i;
			break;
		}
	}
	/* A metric whose own name has a '/' ("bytes/iter") is that metric, not "bytes" in the
	 * unit "iter": the whole name is looked up before the slash is read as a unit. */
	if (slash && find_metric(t, s, n) != FP_VIEW_NONE)
		slash = NULL;
	if (slash) {
		const char *left = s, *unit = slash + 1;
		size_t ln = (size_t)(slash - s), un = n - ln - 1;
		double secs;
		bool avg = false;

		if (eq_nocase(unit, un, "%", 1)) {
			m = find_metric(t, left, ln);
			if (m == FP_VIEW_NONE)
				return unknown(t, diag, "unknown metric", s, n);
			if (is_text(t, m))
				return unknown(t, diag, "text metric cannot be a percentage:", s,
					       n);
			out->op = FP_VIEW_OP_PERCENT;
			out->nsrc = 1;
			out->src[0] = m;
			out->exclusive_sum = !fp__view_source_inclusive(t, m);
			return FP_OK;
		}
		if (unit_scale(unit, un) == 0)
			return unknown(t, diag, "unsupported unit in", s, n);
		if (eq_nocase(unit, un, "s", 1)) {
			rc = parse_rate(t, s, n, left, ln, out, diag);
			if (rc != FP_ENOENT)
				return rc;
			init_metric(out);
			set_label(out, s, n);
		}
		if (starts_nocase(left, ln, "avg_")) {
			avg = true;
			left += 4;
			ln -= 4;
		}
		m = find_metric(t, left, ln);
		if (m == FP_VIEW_NONE)
			return unknown(t, diag, "unknown metric", s, n);
		{
			size_t nlen;
			const char *name = fp_calltree_metric_name(t, m, &nlen, NULL);

			secs = time_unit(name, nlen);
		}
		if (secs == 0)
			return unknown(t, diag, "not a time metric (no s/ms/us/ns unit):", s, n);
		out->src[0] = m;
		out->summed = is_summed(t, m);
		out->scale = secs / unit_scale(unit, un);
		out->nsrc = 1;
		out->op = FP_VIEW_OP_SCALE;
		if (avg) {
			out->op = FP_VIEW_OP_AVG;
			out->src[1] = find_cstr(t, "count");
			if (out->src[1] == FP_VIEW_NONE)
				return unknown(t, diag, "no 'count' metric for", s, n);
			out->nsrc = 2;
		}
		return FP_OK;
	}
	m = find_metric(t, s, n);
	if (m == FP_VIEW_NONE)
		return unknown(t, diag, "unknown metric", s, n);
	if (is_text(t, m))
		return unknown(t, diag, "text metric cannot be a column:", s, n);
	out->op = FP_VIEW_OP_RAW;
	out->nsrc = 1;
	out->src[0] = m;
	out->summed = is_summed(t, m);
	{
		size_t nlen;
		const char *name = fp_calltree_metric_name(t, m, &nlen, NULL);

		set_label(out, name, nlen);
	}
	return FP_OK;
}

/* ---- values ------------------------------------------------------------------------------- */

bool fp__view_source_inclusive(const struct fp_calltree *t, uint32_t metric)
{
	enum fp_metric_kind kind = FP_METRIC_PROPERTY;

	if (metric == FP_VIEW_NONE || !fp_calltree_metric_name(t, metric, NULL, &kind))
		return false;
	return kind == FP_METRIC_INCLUSIVE;
}

double fp__view_source(const struct fp_calltree *t, uint32_t metric, uint32_t node)
{
	struct fp_calltree_value v;

	if (metric == FP_VIEW_NONE || fp_calltree_get(t, node, metric, &v) != FP_OK || v.is_string)
		return NAN;
	return v.kind == FP_METRIC_INCLUSIVE ? v.total : v.self;
}

const char *fp__view_string(const struct fp_calltree *t, uint32_t metric, uint32_t node)
{
	struct fp_calltree_value v;

	if (metric == FP_VIEW_NONE || fp_calltree_get(t, node, metric, &v) != FP_OK || !v.is_string)
		return NULL;
	return v.str;
}

static double or0(double v)
{
	return isnan(v) ? 0 : v;
}

/* max(sum flops_w / peak_w, bytes / peak_bw) / seconds, from the given slots. */
static double util_of(const double *v, double secs, const struct fp_view_peaks *pk, bool est)
{
	double need_flops = 0, need_bytes = 0;
	bool any = false;
	int w;

	if (!est) {
		for (w = 0; w < 4; w++) {
			if (!isnan(v[FP_VIEW_U_FLOPS8 + w])) {
				need_flops += v[FP_VIEW_U_FLOPS8 + w] / pk->flops[w];
				any = true;
			}
		}
		if (!isnan(v[FP_VIEW_U_BYTES])) {
			need_bytes = v[FP_VIEW_U_BYTES] / pk->bytes_per_s;
			any = true;
		}
	} else {
		if (!isnan(v[FP_VIEW_U_EST_FLOPS])) {
			need_flops = v[FP_VIEW_U_EST_FLOPS] / pk->flops[1];
			any = true;
		}
		if (!isnan(v[FP_VIEW_U_EST_BYTES])) {
			need_bytes = v[FP_VIEW_U_EST_BYTES] / pk->bytes_per_s;
			any = true;
		}
	}
	if (!any)
		return NAN;
	return FP_MAX(need_flops, need_bytes) / secs;
}

double fp__view_eval(const struct fp_view_metric *m, const double *v, double denom,
		     const struct fp_view_peaks *pk)
{
	double secs, sum;
	uint32_t i;
	bool any;

	switch (m->op) {
	case FP_VIEW_OP_RAW:
		return m->summed ? or0(v[0]) : v[0];
	case FP_VIEW_OP_SCALE:
		return (m->summed ? or0(v[0]) : v[0]) * m->scale;
	case FP_VIEW_OP_AVG:
		if (isnan(v[1]) || v[1] == 0)
			return NAN;
		return (m->summed ? or0(v[0]) : v[0]) * m->scale / v[1];
	case FP_VIEW_OP_RATE:
		secs = v[0] * m->time_scale;
		if (isnan(secs) || secs <= 0)
			return NAN;
		sum = 0;
		any = false;
		for (i = 1; i < m->nsrc; i++) {
			if (!isnan(v[i])) {
				sum += v[i];
				any = true;
			}
		}
		return any ? sum / secs / m->scale : NAN;
	case FP_VIEW_OP_PERCENT:
		if (isnan(denom) || denom == 0)
			return NAN;
		return 100.0 * or0(v[0]) / denom;
	case FP_VIEW_OP_UTIL:
	case FP_VIEW_OP_EST_UTIL:
		secs = v[FP_VIEW_U_TIME] * m->time_scale;
		if (!pk || !pk->known || isnan(secs) || secs <= 0)
			return NAN;
		if (m->op == FP_VIEW_OP_UTIL) {
			/* Measured numbers when the node has any, else the IR estimates. */
			double u = util_of(v, secs, pk, false);

			return isnan(u) ? util_of(v, secs, pk, true) : u;
		}
		return util_of(v, secs, pk, true);
	}
	return NAN;
}

/* ---- device peaks ------------------------------------------------------------------------- */

/* "sm_90a" -> "90", "GFX942" -> "gfx942"; at most size - 1 bytes. */
static void normalise_arch(const char *arch, char *out, size_t size)
{
	size_t i = 0, n;

	if (!arch)
		arch = "";
	if (starts_nocase(arch, strlen(arch), "sm_"))
		arch += 3;
	for (n = 0; arch[n] && i + 1 < size; n++)
		out[i++] = (char)lower((unsigned char)arch[n]);
	out[i] = '\0';
	/* CUDA arch-specific suffixes ("90a", "100f") do not change the peaks. */
	if (i > 1 && out[0] >= '0' && out[0] <= '9' && (out[i - 1] == 'a' || out[i - 1] == 'f'))
		out[i - 1] = '\0';
}

static bool have(double x)
{
	return !isnan(x) && x > 0;
}

void fp_view_peaks_compute(const char *type, const char *index, const char *arch, double num_sms,
			   double clock_khz, double bus_width, double memory_clock_khz,
			   struct fp_view_peaks *out)
{
	double fp8 = NAN, bw = NAN;
	const char *dev = type ? type : "?";
	const char *idx = index ? index : "?";
	int w;

	memset(out, 0, sizeof(*out));
	normalise_arch(arch, out->arch, sizeof(out->arch));
	if (type && strcmp(type, "CUDA") == 0) {
		if (strcmp(out->arch, "80") == 0) {
			fp8 = 624e12; /* A100: 312 TFLOP/s dense FP16 tensor */
		} else if (strcmp(out->arch, "89") == 0) {
			fp8 = 330.3e12; /* L4 / RTX 4090 class, as proton-viewer counts it */
		} else if (strcmp(out->arch, "90") == 0) {
			if (have(num_sms) && have(clock_khz))
				fp8 = num_sms / 114.0 * (clock_khz / 1755e3) * 1513e12;
		} else if (strcmp(out->arch, "100") == 0) {
			if (have(num_sms) && have(clock_khz))
				fp8 = num_sms * 16384.0 * clock_khz * 1e3;
		} else {
			snprintf(out->note, sizeof(out->note),
				 "%s %s: no peak table for arch '%s' (known: 80, 89, 90, 100)", dev,
				 idx, out->arch);
			return;
		}
		if (have(bus_width) && have(memory_clock_khz))
			bw = 2.0 * bus_width * memory_clock_khz * 1e3 / 8.0;
	} else if (type && strcmp(type, "HIP") == 0) {
		double per_cu = 0;

		if (strcmp(out->arch, "gfx90a") == 0) {
			per_cu = 1024; /* INT8: no FP8 matrix units */
			bw = 3.2e12;
		} else if (strcmp(out->arch, "gfx942") == 0) {
			per_cu = 4096;
			bw = 5.3e12;
		} else if (strcmp(out->arch, "gfx950") == 0) {
			per_cu = 8192;
			bw = 8.0e12;
		} else {
			snprintf(
				out->note, sizeof(out->note),
				"%s %s: no peak table for arch '%s' (known: gfx90a, gfx942, gfx950)",
				dev, idx, out->arch);
			return;
		}
		if (have(num_sms) && have(clock_khz))
			fp8 = per_cu * num_sms * clock_khz * 1e3;
	} else {
		snprintf(out->note, sizeof(out->note), "%s %s%s%s%s has no device peaks", dev, idx,
			 out->arch[0] ? " (" : "", out->arch, out->arch[0] ? ")" : "");
		return;
	}
	if (isnan(fp8) || isnan(bw)) {
		snprintf(out->note, sizeof(out->note), "%s %s (arch %s): the device info lacks %s",
			 dev, idx, out->arch,
			 isnan(fp8) ? "num_sms or clock_rate" : "bus_width or memory_clock_rate");
		return;
	}
	for (w = 0; w < 4; w++)
		out->flops[w] = fp8 / (double)(1 << w);
	out->bytes_per_s = bw;
	out->known = true;
}

void fp_view_peaks_of(const struct fp_calltree *t, const char *type, const char *index,
		      struct fp_view_peaks *out)
{
	double num_sms = NAN, clock = NAN, bus = NAN, mclock = NAN;
	char arch_num[32];
	const char *arch = NULL;
	bool found = false;
	size_t i, n = fp_calltree_device_count(t);

	for (i = 0; i < n; i++) {
		struct fp_calltree_device_attr a;

		if (fp_calltree_device_at(t, i, &a) || (type && strcmp(a.type, type) != 0) ||
		    strcmp(a.index, index) != 0)
			continue;
		if (!type)
			type = a.type; /* the first device type with that index */
		found = true;
		if (strcmp(a.key, "arch") == 0) {
			if (a.is_string) {
				arch = a.str;
			} else {
				snprintf(arch_num, sizeof(arch_num), "%.0f", a.value);
				arch = arch_num;
			}
		} else if (!a.is_string) {
			if (strcmp(a.key, "num_sms") == 0)
				num_sms = a.value;
			else if (strcmp(a.key, "clock_rate") == 0)
				clock = a.value;
			else if (strcmp(a.key, "bus_width") == 0)
				bus = a.value;
			else if (strcmp(a.key, "memory_clock_rate") == 0)
				mclock = a.value;
		}
	}
	if (!found) {
		memset(out, 0, sizeof(*out));
		snprintf(out->note, sizeof(out->note), "%s %s is not in the device table",
			 type ? type : "device", index);
		return;
	}
	fp_view_peaks_compute(type, index, arch, num_sms, clock, bus, mclock, out);
}

/* ---- single values ------------------------------------------------------------------------ */

static double exclusive_sum(const struct fp_calltree *t, uint32_t metric)
{
	size_t n = fp_calltree_node_count(t), i;
	double sum = 0;

	for (i = 0; i < n; i++)
		sum += or0(fp__view_source(t, metric, (uint32_t)i));
	return sum;
}

double fp_view_metric_value(const struct fp_calltree *t, const struct fp_view_metric *m,
			    uint32_t node)
{
	double v[FP_VIEW_MAX_SRC], denom = NAN;
	struct fp_view_peaks pk, *ppk = NULL;
	uint32_t i;

	if (!t || !m || node >= fp_calltree_node_count(t) || m->nsrc > FP_VIEW_MAX_SRC)
		return NAN;
	for (i = 0; i < m->nsrc; i++)
		v[i] = fp__view_source(t, m->src[i], node);
	if (m->op == FP_VIEW_OP_PERCENT)
		denom = m->exclusive_sum ? exclusive_sum(t, m->src[0]) :
					   fp__view_source(t, m->src[0], FP_CALLTREE_ROOT);
	if (m->op == FP_VIEW_OP_UTIL || m->op == FP_VIEW_OP_EST_UTIL) {
		const char *type = fp__view_string(t, m->src[FP_VIEW_U_DEVICE_TYPE], node);
		const char *id = fp__view_string(t, m->src[FP_VIEW_U_DEVICE_ID], node);
		char idbuf[32];

		if (!id && !isnan(v[FP_VIEW_U_DEVICE_ID])) {
			snprintf(idbuf, sizeof(idbuf), "%.0f", v[FP_VIEW_U_DEVICE_ID]);
			id = idbuf;
		}
		if (!id)
			return NAN;
		fp_view_peaks_of(t, type, id, &pk);
		ppk = &pk;
	}
	return fp__view_eval(m, v, denom, ppk);
}

/* ---- --list ------------------------------------------------------------------------------- */

static const char *kind_name(enum fp_metric_kind k)
{
	switch (k) {
	case FP_METRIC_INCLUSIVE:
		return "inclusive";
	case FP_METRIC_EXCLUSIVE:
		return "exclusive";
	case FP_METRIC_PROPERTY:
		return "property";
	case FP_METRIC_MIN:
		return "min";
	case FP_METRIC_MAX:
		return "max";
	}
	return "?";
}

/* Whether `spec` parses against `t` (for listing only what works). */
static bool works(const struct fp_calltree *t, const char *spec)
{
	struct fp_view_metric m;

	return fp_view_metric_parse(t, spec, strlen(spec), &m, NULL) == FP_OK;
}

#define LIST_ROWS 64

/* A two-column listing: left cells padded to the widest one. */
struct listing {
	char left[LIST_ROWS][96];
	char right[LIST_ROWS][160];
	size_t n;
};

static void list_row(struct listing *l, const char *left, const char *right)
{
	if (l->n == LIST_ROWS)
		return;
	snprintf(l->left[l->n], sizeof(l->left[0]), "%s", left);
	snprintf(l->right[l->n], sizeof(l->right[0]), "%s", right);
	fp__view_clean(l->left[l->n], strlen(l->left[l->n]));
	fp__view_clean(l->right[l->n], strlen(l->right[l->n]));
	l->n++;
}

static void list_print(FILE *f, const char *title, const struct listing *l)
{
	size_t i, w = 0;

	fprintf(f, "%s\n", title);
	for (i = 0; i < l->n; i++)
		w = FP_MAX(w, strlen(l->left[i]));
	if (l->n == 0)
		fprintf(f, "  (none)\n");
	for (i = 0; i < l->n; i++)
		fprintf(f, "  %-*s  %s\n", (int)w, l->left[i], l->right[i]);
}

/* "a, b, c" from the specs of `specs` that work, as one row explained by `what`. */
static void list_group(const struct fp_calltree *t, struct listing *l, const char *const *specs,
		       size_t n, const char *what)
{
	char left[96];
	size_t i, used = 0;

	left[0] = '\0';
	for (i = 0; i < n; i++) {
		if (!works(t, specs[i]))
			continue;
		used += (size_t)snprintf(left + used, sizeof(left) - used, "%s%s", used ? ", " : "",
					 specs[i]);
		if (used >= sizeof(left))
			break;
	}
	if (left[0])
		list_row(l, left, what);
}

int fp_view_list_metrics(const struct fp_calltree *t, FILE *f)
{
	static const char *const rates[][3] = {
		{"flop/s", "gflop/s", "tflop/s"},
		{"flop8/s", "gflop8/s", "tflop8/s"},
		{"flop16/s", "gflop16/s", "tflop16/s"},
		{"flop32/s", "gflop32/s", "tflop32/s"},
		{"flop64/s", "gflop64/s", "tflop64/s"},
		{"byte/s", "gbyte/s", "tbyte/s"},
		{"est_flop/s", "est_gflop/s", "est_tflop/s"},
		{"est_byte/s", "est_gbyte/s", "est_tbyte/s"},
	};
	static const char *const rate_what[] = {
		"FLOP per second of time (\"flops\", else every flops<width>, else the IR estimate)",
		"flops8 / time",
		"flops16 / time",
		"flops32 / time",
		"flops64 / time",
		"bytes / time (the IR estimate when no bytes were measured)",
		"est_flops / time (FlagPrism's IR estimate)",
		"est_bytes / time (FlagPrism's IR estimate)",
	};
	static const char *const util[] = {"util"};
	static const char *const est_util[] = {"est_util"};
	struct listing *l;
	uint32_t m, n;
	size_t i, j, nseen = 0;
	char seen_dev[16][64];

	if (!t || !f)
		return FP_EINVAL;
	l = fp_malloc(sizeof(*l));
	if (!l)
		return FP_ENOMEM;

	l->n = 0;
	n = fp_calltree_metric_count(t);
	for (m = 0; m < n; m++) {
		enum fp_metric_kind kind;
		size_t len, sl;
		const char *name = fp_calltree_metric_name(t, m, &len, &kind);
		double secs = time_unit(name, len);
		char left[96], right[160];
		int k;

		sl = short_len(name, len);
		snprintf(left, sizeof(left), "%.*s", (int)FP_MIN(len, 90), name);
		k = snprintf(right, sizeof(right), "%s%s", kind_name(kind),
			     is_text(t, m) ? ", text" : "");
		if (sl != len && find_metric(t, name, sl) == m && k > 0 &&
		    (size_t)k < sizeof(right))
			k += snprintf(right + k, sizeof(right) - (size_t)k, "; -m %.*s",
				      (int)FP_MIN(sl, 40), name);
		if (secs > 0 && k > 0 && (size_t)k < sizeof(right))
			snprintf(right + k, sizeof(right) - (size_t)k,
				 "; %.*s/s|ms|us|ns, avg_%.*s/s|ms|us|ns", (int)FP_MIN(sl, 30),
				 name, (int)FP_MIN(sl, 30), name);
		list_row(l, left, right);
	}
	list_print(f, "Metrics:", l);

	l->n = 0;
	for (i = 0; i < FP_ARRAY_SIZE(rates); i++)
		list_group(t, l, rates[i], 3, rate_what[i]);
	for (m = 0; m < n; m++) {
		if (!is_text(t, m)) {
			list_row(l, "NAME/%",
				 "share of the root (inclusive) or of the sum (others), "
				 "e.g. time/%");
			break;
		}
	}
	list_group(t, l, util, 1,
		   "max(flops / peak FLOP/s, bytes / peak bandwidth) / time, per kernel "
		   "(estimates where nothing is measured)");
	list_group(t, l, est_util, 1, "the same from est_flops and est_bytes");
	list_print(f, "Derived metrics:", l);

	fprintf(f, "Devices:\n");
	n = (uint32_t)fp_calltree_device_count(t);
	if (n == 0)
		fprintf(f, "  (no device table)\n");
	for (i = 0; i < n; i++) {
		struct fp_calltree_device_attr a;
		struct fp_view_peaks pk;
		char key[64], b1[32], b2[32], line[256];
		bool dup = false;

		if (fp_calltree_device_at(t, i, &a))
			continue;
		snprintf(key, sizeof(key), "%s/%s", a.type, a.index);
		for (j = 0; j < nseen; j++)
			dup = dup || strcmp(seen_dev[j], key) == 0;
		if (dup)
			continue;
		if (nseen < FP_ARRAY_SIZE(seen_dev))
			snprintf(seen_dev[nseen++], sizeof(seen_dev[0]), "%s", key);
		fp_view_peaks_of(t, a.type, a.index, &pk);
		if (pk.known) {
			fp_view_format_number(pk.flops[1] / 1e12, b1, sizeof(b1));
			fp_view_format_number(pk.bytes_per_s / 1e12, b2, sizeof(b2));
			snprintf(line, sizeof(line),
				 "%s %s: arch %s, peak %s TFLOP/s (16-bit), %s TB/s", a.type,
				 a.index, pk.arch, b1, b2);
		} else {
			snprintf(line, sizeof(line), "%s: util is n/a", pk.note);
		}
		fp__view_clean(line, strlen(line));
		fprintf(f, "  %s\n", line);
	}
	fp_free(l);
	return ferror(f) ? FP_EIO : FP_OK;
}
