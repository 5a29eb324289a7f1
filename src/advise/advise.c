/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The advice (include/flagprism/advise.h): the rule table, the context rules read (the kernels
 * that take the time, their nodes in every profile given, the metric ids, the meta files' facts
 * and the trace), running the table, ranking what it found, and the accessors. The rules
 * themselves are advise-kernel.c and advise-run.c; the outputs advise-write.c. It reads trees
 * and texts it is given and changes none of them.
 */
#include "fp-setup.h"

#include <flagprism/ttir.h>

#include "advise/advise-internal.h"

#define META_MAX_BYTES ((size_t)256 << 20)
#define ARENA_CAP ((size_t)1 << 30)

/* ---- the rules ------------------------------------------------------------------------------ */

static const struct fp__adv_rule rules[] = {
	{{"roofline", "where the kernel sits against its device's roofs", "kernel",
	  "time; work and DRAM traffic from counters, ncu, launch_metadata or the IR estimate; SM "
	  "and memory throughput (% of peak) when counted; the device's peaks",
	  "memory- or compute-bound when that unit is at >= 80% of peak or the intensity is on "
	  "its side of the ridge; latency-bound when both units are below 60%",
	  "Nsight Compute's Speed Of Light breakdown (60% / 80% of peak); Williams et al., "
	  "Roofline (CACM 2009); peaks from the device table (fp_view_peaks_compute)",
	  "a GPU run: flagprism profile -b cupti (peaks); -m dram__bytes_read.sum,... (traffic)"},
	 fp__adv_roofline,
	 NULL},
	{{"uncoalesced", "global loads that move more sectors than the data they read", "kernel",
	  "L1 global-load sectors and requests (l1tex__t_sectors/requests_pipe_lsu_mem_global_op_ld)"
	  " against the bytes the IR's loads name; the line from PC sampling or the heaviest load",
	  "sector bytes >= 2x the IR's load bytes, or > 16 sectors per request",
	  "CUDA C++ Best Practices Guide, coalesced access to global memory (32-byte sectors); "
	  "Nsight Compute's memory workload analysis (sectors per request)",
	  "-m l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,"
	  "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"},
	 fp__adv_uncoalesced,
	 NULL},
	{{"spills", "registers spilled to local memory", "kernel",
	  "local memory per thread of the compiled kernel (the cubin's, as the driver loads it); "
	  "local-memory sectors when counted; the IR's largest tensor and its line",
	  "any local memory per thread, or local-memory traffic",
	  "CUDA C++ Programming Guide, local memory; ptxas spill reports",
	  "a GPU run (the compiled kernel); -m l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,"
	  "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"},
	 fp__adv_spills,
	 NULL},
	{{"occupancy", "occupancy limited by registers or shared memory", "kernel",
	  "registers per thread, shared memory and warps per program (compiled kernel or ncu "
	  "launch statistics), the architecture's per-SM limits, achieved occupancy when counted",
	  "theoretical occupancy below 50% limited by registers or shared memory, in a kernel that "
	  "is not near a roof",
	  "CUDA C++ Programming Guide, technical specifications per compute capability; Nsight "
	  "Compute's occupancy section",
	  "a GPU run (the compiled kernel), or --ncu (launch statistics)"},
	 fp__adv_occupancy_rule,
	 NULL},
	{{"tail_effect", "launches whose last wave leaves SMs idle, or grids smaller than the GPU",
	  "kernel",
	  "programs per launch (trace grid, ncu or the IR estimate), SM count (device table or "
	  "ncu), blocks per SM (occupancy)",
	  "fewer programs than SMs, or a partial last wave after 1 to 3 full ones idling SMs for "
	  ">= 20% of the launch",
	  "Nsight Compute's launch statistics (waves per SM, tail effect)",
	  "a GPU run with -d trace (grids) or --ncu"},
	 fp__adv_tail,
	 NULL},
	{{"stall", "the dominant stall reason of a source line", "kernel",
	  "PC samples per source line and stall reason (mode=pcsampling)",
	  "a line with >= 10% of its kernel's samples where one reason has >= 30% of them",
	  "Nsight Compute's warp state statistics and source view (stall reasons)",
	  "--mode pcsampling"},
	 fp__adv_stall,
	 NULL},
	{{"half_math",
	  "float32 math on 16- or 8-bit data where tl.dot could take the narrow inputs", "kernel",
	  "the IR: dots whose operands are converted to float32 from float16/bfloat16/fp8, float32 "
	  "products of such values; the device's 16-bit and tf32/FP32 peaks for the saving",
	  ">= 50% of the kernel's dot FLOPs on widened operands, or widened products >= 50% of its "
	  "float32 FLOPs without a dot",
	  "the GPU's datasheet ratio of 16-bit tensor to tf32 tensor / FP32 throughput; Triton's "
	  "tl.dot (input_precision, out_dtype)",
	  "estimates on (the default); a GPU run for the saving"},
	 fp__adv_half_math,
	 NULL},
	{{"autotune", "an autotuner's choice against the configs it measured", "kernel",
	  "the autotuner's measured configs and times, its choice and its benchmarking time "
	  "(recorded at finalize)",
	  "the chosen config is not the fastest measured; the fastest is at the edge of a "
	  "parameter's range; or every config is within 3%",
	  "Triton's autotuner (configs_timings, best_config)",
	  "a run that autotunes, profiled by flagprism (any backend)"},
	 fp__adv_autotune,
	 NULL},
	{{"launch_bound", "kernels shorter than the gaps between their launches", "run",
	  "kernel events of the trace: durations and the idle time before each launch on its "
	  "stream, the launching Python line",
	  ">= 8 launches of one kernel whose median gap is at least its median duration",
	  "Nsight Systems' GPU-utilization view; Holistic Trace Analysis (idle time); CUDA Graphs "
	  "(about 2 us per kernel left)",
	  "-d trace (and -c python for the line)"},
	 NULL,
	 fp__adv_launch_bound},
	{{"outside_triton", "time outside Triton kernels, on the Python lines that cause it", "run",
	  "the trace: time in kernels that are not Triton's (PyTorch ops, libraries) and GPU idle "
	  "time before launches, each on the innermost Python frame of its launch",
	  "a Python line with >= 10% of the traced span in such time",
	  "Holistic Trace Analysis (idle time, kernel breakdown); PyTorch profiler recipes",
	  "-d trace -c python"},
	 NULL,
	 fp__adv_outside},
	{{"ranks", "ranks that are slower than the others (merged profiles)", "run",
	  "per-node max and mean over ranks and the rank of the max (flagprism merge)",
	  "a kernel's slowest rank >= 1.2x the mean",
	  "the straggler analysis of flagprism view --ranks",
	  "flagprism merge of every rank's profile"},
	 NULL,
	 fp__adv_ranks},
};

size_t fp__adv_nrules(void)
{
	return FP_ARRAY_SIZE(rules);
}

const struct fp__adv_rule *fp__adv_rule(size_t i)
{
	return i < FP_ARRAY_SIZE(rules) ? &rules[i] : NULL;
}

size_t fp_advise_rule_count(void)
{
	return FP_ARRAY_SIZE(rules);
}

const struct fp_advise_rule_info *fp_advise_rule_at(size_t i)
{
	return i < FP_ARRAY_SIZE(rules) ? &rules[i].info : NULL;
}

/* ---- metric names ----------------------------------------------------------------------------- */

static const char *const metric_names[FP__M_COUNT] = {
	[FP__M_DRAM_READ] = "dram__bytes_read.sum",
	[FP__M_DRAM_WRITE] = "dram__bytes_write.sum",
	[FP__M_SM_PCT] = "sm__throughput.avg.pct_of_peak_sustained_elapsed",
	[FP__M_MEM_PCT] = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
	[FP__M_WARPS_ACTIVE_PCT] = "sm__warps_active.avg.pct_of_peak_sustained_active",
	[FP__M_LD_SECTORS] = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
	[FP__M_LD_REQUESTS] = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
	[FP__M_LOCAL_LD_SECTORS] = "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
	[FP__M_LOCAL_ST_SECTORS] = "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
	[FP__M_REGS] = "launch__registers_per_thread",
	[FP__M_BLOCK] = "launch__block_size",
	[FP__M_GRID] = "launch__grid_size",
	[FP__M_SMS] = "launch__sm_count",
	[FP__M_WAVES] = "launch__waves_per_multiprocessor",
	[FP__M_LIM_REGS] = "launch__occupancy_limit_registers",
	[FP__M_LIM_SHARED] = "launch__occupancy_limit_shared_mem",
	[FP__M_LIM_WARPS] = "launch__occupancy_limit_warps",
	[FP__M_LIM_BLOCKS] = "launch__occupancy_limit_blocks",
	[FP__M_SHARED_BLOCK] = "launch__shared_mem_per_block",
};

const char *fp__adv_metric_name(enum fp__adv_metric m)
{
	return (unsigned)m < FP__M_COUNT ? metric_names[m] : "";
}

/* ---- small helpers ------------------------------------------------------------------------------ */

static void fail(struct fp_advice *a, int rc)
{
	if (!a->rc)
		a->rc = rc;
}

const char *fp__adv_str(struct fp_advice *a, const char *fmt, ...)
{
	va_list ap;
	char small[256], *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		fail(a, FP_EINVAL);
		return NULL;
	}
	if ((size_t)n < sizeof(small)) {
		s = fp_arena_strndup(&a->arena, small, (size_t)n);
	} else {
		s = fp_arena_alloc_align(&a->arena, (size_t)n + 1, 1);
		if (s) {
			va_start(ap, fmt);
			vsnprintf(s, (size_t)n + 1, fmt, ap);
			va_end(ap);
		}
	}
	if (!s)
		fail(a, fp_arena_last_error(&a->arena));
	return s;
}

void fp__adv_fmt(double v, char *buf, size_t size)
{
	char tmp[32];

	fp_view_format_number(v, tmp, sizeof(tmp));
	snprintf(buf, size, "%s", tmp);
}

void fp__adv_fmt_ns(double ns, char *buf, size_t size)
{
	char tmp[32];
	const char *unit = "ns";
	double v = ns;

	if (isnan(ns)) {
		snprintf(buf, size, "n/a");
		return;
	}
	if (fabs(ns) >= 1e9) {
		v = ns / 1e9;
		unit = "s";
	} else if (fabs(ns) >= 1e6) {
		v = ns / 1e6;
		unit = "ms";
	} else if (fabs(ns) >= 1e3) {
		v = ns / 1e3;
		unit = "us";
	}
	fp_view_format_number(v, tmp, sizeof(tmp));
	snprintf(buf, size, "%s %s", tmp, unit);
}

void fp__adv_fmt_bytes(double b, char *buf, size_t size)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	char tmp[32];
	size_t u = 0;

	while (fabs(b) >= 1024 && u + 1 < FP_ARRAY_SIZE(units)) {
		b /= 1024;
		u++;
	}
	fp_view_format_number(b, tmp, sizeof(tmp));
	snprintf(buf, size, "%s %s", tmp, units[u]);
}

void fp__adv_note(struct fp_advice *a, const char *fmt, ...)
{
	va_list ap;
	char buf[512];
	const char *s;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	s = fp__adv_str(a, "%s", buf);
	if (!s)
		return;
	if (a->nnotes == 256)
		return; /* notes are few by construction; a flood says nothing more */
	if (a->nnotes == a->notes_cap) {
		size_t cap = a->notes_cap ? a->notes_cap * 2 : 16;
		char **n = fp_arena_calloc(&a->arena, cap, sizeof(*n));

		if (!n) {
			fail(a, fp_arena_last_error(&a->arena));
			return;
		}
		if (a->nnotes)
			memcpy(n, a->notes, a->nnotes * sizeof(*n));
		a->notes = n;
		a->notes_cap = cap;
	}
	a->notes[a->nnotes++] = (char *)s;
}

/* Grow an arena array to hold `need` elements (old contents copied; the old block is left in
 * the arena). Capacity doubles. */
static void *arena_grow(struct fp_advice *a, void *arr, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return arr;
	while (n < need)
		n *= 2;
	p = fp_arena_calloc(&a->arena, n, size);
	if (!p) {
		fail(a, fp_arena_last_error(&a->arena));
		return NULL;
	}
	if (*cap)
		memcpy(p, arr, *cap * size);
	*cap = n;
	return p;
}

struct fp__adv_finding *fp__adv_find(struct fp_advice *a, size_t rule, size_t kernel,
				     enum fp__adv_kind kind, const char *title)
{
	struct fp__adv_finding *f, *arr;

	a->cur = SIZE_MAX;
	if (a->rc || !title)
		return NULL;
	if (a->nfindings == FP_ADVISE_MAX_FINDINGS) {
		a->findings_dropped++;
		return NULL;
	}
	arr = arena_grow(a, a->findings, &a->findings_cap, a->nfindings + 1, sizeof(*arr));
	if (!arr)
		return NULL;
	a->findings = arr;
	f = &a->findings[a->nfindings];
	memset(f, 0, sizeof(*f));
	f->rule = rule;
	f->kernel = kernel;
	f->kind = kind;
	f->title = title;
	f->saving_ns = NAN;
	f->ev_first = a->nev;
	f->order = a->nfindings;
	a->cur = a->nfindings++;
	a->status[rule].findings++;
	return f;
}

static void add_ev(struct fp_advice *a, const char *name, double v, const char *text,
		   const char *unit, const char *source)
{
	struct fp__adv_ev *arr;
	struct fp__adv_finding *f;

	if (a->rc || a->cur >= a->nfindings)
		return;
	f = &a->findings[a->cur];
	arr = arena_grow(a, a->ev, &a->ev_cap, a->nev + 1, sizeof(*arr));
	if (!arr)
		return;
	a->ev = arr;
	a->ev[a->nev].name = name;
	a->ev[a->nev].value = v;
	a->ev[a->nev].text = text;
	a->ev[a->nev].unit = unit ? unit : "";
	a->ev[a->nev].source = source ? source : "";
	a->nev++;
	f->nev++;
}

void fp__adv_ev_num(struct fp_advice *a, const char *name, double v, const char *unit,
		    const char *source)
{
	add_ev(a, name, v, NULL, unit, source);
}

void fp__adv_ev_text(struct fp_advice *a, const char *name, const char *text, const char *source)
{
	if (text)
		add_ev(a, name, NAN, text, "", source);
}

void fp__adv_saving(struct fp_advice *a, struct fp__adv_finding *f, double ns, const char *method)
{
	(void)a;
	if (!f)
		return;
	f->saving_ns = isnan(ns) ? NAN : FP_MAX(ns, 0.0);
	f->method = method;
}

void fp__adv_at(struct fp__adv_finding *f, const char *file, uint32_t line, const char *how)
{
	if (!f || !file || !line)
		return;
	f->file = file;
	f->line = line;
	f->line_source = how;
}

void fp__adv_ran(struct fp_advice *a, size_t rule)
{
	a->status[rule].ran++;
}

void fp__adv_skip(struct fp_advice *a, size_t rule, unsigned needs, uint32_t metrics,
		  const char *fmt, ...)
{
	struct fp__adv_status *st = &a->status[rule];
	va_list ap;
	char buf[512];

	st->skipped++;
	st->needs |= needs;
	st->metrics |= metrics;
	if (st->why)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	st->why = fp__adv_str(a, "%s", buf);
}

double fp__adv_floor_ns(const struct fp__adv_kernel *k)
{
	double t = NAN, tc, tm;

	if (!k->rp_ok || !k->rp.peaks_known)
		return NAN;
	tc = k->rp.flops / k->rp.peak_flops;
	tm = k->rp.bytes / k->rp.peak_bytes_per_s;
	if (!isnan(tc))
		t = tc;
	if (!isnan(tm))
		t = isnan(t) ? tm : FP_MAX(t, tm);
	return isnan(t) ? NAN : t * 1e9 / FP__ADV_ROOF_REACH;
}

double fp__adv_cap(const struct fp__adv_kernel *k, double saving)
{
	double fl = fp__adv_floor_ns(k);

	if (isnan(saving))
		return NAN;
	if (!isnan(fl))
		saving = FP_MIN(saving, k->ns - fl);
	return FP_MAX(saving, 0.0);
}

bool fp__adv_split_frame(struct fp_advice *a, const char *s, size_t n, const char **file,
			 uint32_t *line)
{
	size_t i, colon = SIZE_MAX, at;
	uint64_t v = 0;

	/* "file:function@line" (Python frames) or "file:line" (PC-sampling lines) */
	for (at = n; at > 0 && s[at - 1] >= '0' && s[at - 1] <= '9'; at--)
		;
	if (at == n || at == 0 || (s[at - 1] != '@' && s[at - 1] != ':'))
		return false;
	for (i = at; i < n; i++) {
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > UINT32_MAX)
			return false;
	}
	if (s[at - 1] == ':') {
		colon = at - 1;
	} else {
		for (i = at - 1; i > 0; i--)
			if (s[i - 1] == ':') {
				colon = i - 1;
				break;
			}
	}
	if (colon == SIZE_MAX || colon == 0 || !v)
		return false;
	*file = fp_arena_strndup(&a->arena, s, colon);
	if (!*file) {
		fail(a, fp_arena_last_error(&a->arena));
		return false;
	}
	*line = (uint32_t)v;
	return true;
}

/* ---- facts ------------------------------------------------------------------------------------- */

double fp__adv_num(const struct fp_json_value *obj, const char *key)
{
	double v;

	if (!obj || !fp_json_number(fp_json_get(obj, key), &v) || !isfinite(v))
		return NAN;
	return v;
}

bool fp__adv_cxx_name(const char *name)
{
	return !strncmp(name, "_Z", 2) || strstr(name, "::") != NULL;
}

bool fp__adv_loc(const struct fp_json_value *obj, const char *key, const char **file,
		 uint32_t *line)
{
	const struct fp_json_value *l = obj ? fp_json_get(obj, key) : NULL;
	uint64_t n;

	if (!l || !(*file = fp_json_string(fp_json_get(l, FP_TTIR_FACT_FILE), NULL)) ||
	    !fp_json_uint64(fp_json_get(l, FP_TTIR_FACT_LINE), &n) || !n || n > UINT32_MAX)
		return false;
	*line = (uint32_t)n;
	return true;
}

const struct fp_json_value *fp__adv_parse(struct fp_advice *a, const char *text, size_t len,
					  const char *what, struct fp_diag *diag)
{
	struct fp_json_limits lim = {META_MAX_BYTES, 64, 0};
	struct fp_json_doc *doc = NULL, **docs;
	struct fp_diag d;
	int rc;

	rc = fp_json_parse(text, len, &lim, &doc, &d);
	if (rc) {
		fail(a, rc);
		if (rc == FP_EFORMAT || rc == FP_ELIMIT)
			fp_diag_set(diag, rc, d.offset, "%s: %s", what, d.msg);
		else
			fp_diag_set(diag, rc, 0, "%s: %s", what, fp_strerror(rc));
		return NULL;
	}
	if (fp_json_type(fp_json_root(doc)) != FP_JSON_OBJECT) {
		fp_json_doc_free(doc);
		fail(a, FP_EFORMAT);
		fp_diag_set(diag, FP_EFORMAT, 0, "%s: expected a JSON object", what);
		return NULL;
	}
	docs = arena_grow(a, a->docs, &a->docs_cap, a->ndocs + 1, sizeof(*docs));
	if (!docs) {
		fp_json_doc_free(doc);
		return NULL;
	}
	a->docs = docs;
	a->docs[a->ndocs++] = doc;
	return fp_json_root(doc);
}

/* The env value "<prefix><name>" of a source, or NULL. */
static const char *env_value(const struct fp__adv_src *s, const char *prefix, const char *name,
			     size_t *len)
{
	char key[1024];

	if (!s->env || snprintf(key, sizeof(key), "%s%s", prefix, name) >= (int)sizeof(key))
		return NULL;
	return fp_json_string(fp_json_get(s->env, key), len);
}

/* The kernel's facts and autotune objects from the first source whose meta has them. */
static int kernel_facts(struct fp_advice *a, struct fp__adv_kernel *k, struct fp_diag *diag)
{
	size_t i, len;
	const char *v, *mark;

	for (i = 0; i < a->nsrc && !k->facts; i++) {
		const char *what;

		v = env_value(&a->src[i], "estimate:", k->name, &len);
		if (!v)
			continue;
		mark = strstr(v, FP_TTIR_FACTS_MARK);
		if (!mark)
			continue;
		mark += strlen(FP_TTIR_FACTS_MARK);
		what = fp__adv_str(a, "%s: environment[\"estimate:%s\"], after \"facts: \"",
				   a->src[i].meta_name, k->name);
		if (!what)
			return a->rc;
		k->facts = fp__adv_parse(a, mark, len - (size_t)(mark - v), what, diag);
		if (!k->facts)
			return a->rc;
	}
	for (i = 0; i < a->nsrc && !k->autotune; i++) {
		const char *what;

		v = env_value(&a->src[i], "autotune:", k->name, &len);
		if (!v)
			continue;
		what = fp__adv_str(a, "%s: environment[\"autotune:%s\"]", a->src[i].meta_name,
				   k->name);
		if (!what)
			return a->rc;
		k->autotune = fp__adv_parse(a, v, len, what, diag);
		if (!k->autotune)
			return a->rc;
	}
	if (k->facts) {
		k->compiled = fp_json_get(k->facts, FP_TTIR_FACT_COMPILED);
		if (fp_json_type(k->compiled) != FP_JSON_OBJECT)
			k->compiled = NULL;
	}
	return FP_OK;
}

/* ---- sources ---------------------------------------------------------------------------------- */

static bool starts(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && memcmp(s, prefix, k) == 0;
}

static bool ends(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

static uint32_t find_metric(const struct fp_calltree *t, const char *name)
{
	uint32_t m;

	return fp_calltree_metric_find(t, name, strlen(name), &m) == FP_OK ? m : FP_CALLTREE_NONE;
}

/* Metric ids of one tree: the named ones, and each base name under hw: and ncu: ("hw:NAME",
 * "hw:NAME (pty)", "ncu:NAME (unit)", "ncu:NAME (unit) (pty)"). */
static int index_metrics(struct fp_advice *a, struct fp__adv_src *s)
{
	uint32_t m, n = fp_calltree_metric_count(s->t);
	size_t j, p, len;

	for (j = 0; j < FP__M_COUNT; j++)
		s->ids[j][0] = s->ids[j][1] = FP_CALLTREE_NONE;
	s->m_time = find_metric(s->t, "time (ns)");
	s->m_count = find_metric(s->t, "count");
	s->m_dev_id = find_metric(s->t, "device_id");
	s->m_dev_type = find_metric(s->t, "device_type");
	s->m_samples = find_metric(s->t, "num_samples");
	s->m_mangled = find_metric(s->t, "mangled_name");
	s->m_est_bytes = find_metric(s->t, "est_bytes");
	s->m_source_nodes = find_metric(s->t, "source_nodes");
	s->m_time_max = find_metric(s->t, "time (ns) (max)");
	s->m_time_rank = find_metric(s->t, "time (ns) (max rank) (pty)");
	s->stall = fp_arena_calloc(&a->arena, n ? n : 1, sizeof(*s->stall));
	if (!s->stall)
		return fp_arena_last_error(&a->arena);
	for (m = 0; m < n; m++) {
		const char *name = fp_calltree_metric_name(s->t, m, &len, NULL);

		if (!name)
			continue;
		if (starts(name, len, "stalled_") && !ends(name, len, "_not_issued")) {
			s->stall[s->nstall++] = m;
			continue;
		}
		for (p = 0; p < 2; p++) {
			const char *prefix = p ? "ncu:" : "hw:";
			size_t pl = strlen(prefix);

			if (!starts(name, len, prefix))
				continue;
			for (j = 0; j < FP__M_COUNT; j++) {
				size_t bl = strlen(metric_names[j]);

				if (len >= pl + bl && !memcmp(name + pl, metric_names[j], bl) &&
				    (len == pl + bl || name[pl + bl] == ' ') &&
				    s->ids[j][p] == FP_CALLTREE_NONE)
					s->ids[j][p] = m;
			}
		}
	}
	return FP_OK;
}

static int read_meta(struct fp_advice *a, struct fp__adv_src *s, const struct fp_advise_profile *p,
		     struct fp_diag *diag)
{
	struct fp_json_limits lim = {META_MAX_BYTES, 0, 0};
	const struct fp_json_value *root, *sess, *tm;
	const char *fmt;
	double t0, t1;
	struct fp_diag d;
	size_t i;
	int rc;

	s->wall_ns = NAN;
	if (!p->meta)
		return FP_OK;
	rc = fp_json_parse(p->meta, p->meta_len, &lim, &s->meta, &d);
	if (rc) {
		if (rc == FP_ENOMEM)
			return fp_diag_set(diag, rc, 0, "out of memory");
		return fp_diag_set_pos(diag, rc, d.offset, d.line, d.col, "%s:%u:%u: %s",
				       s->meta_name, d.line, d.col, d.msg);
	}
	root = fp_json_root(s->meta);
	fmt = fp_json_string(fp_json_get(root, "format"), NULL);
	if (!fmt || strcmp(fmt, "flagprism-profile-meta") != 0) {
		fp__adv_note(a,
			     "%s is not FlagPrism's meta file (no \"format\": "
			     "\"flagprism-profile-meta\"): not read",
			     s->meta_name);
		fp_json_doc_free(s->meta);
		s->meta = NULL;
		return FP_OK;
	}
	s->env = fp_json_get(root, "environment");
	if (fp_json_type(s->env) != FP_JSON_OBJECT)
		s->env = NULL;
	for (i = 0; s->env && i < fp_json_len(s->env) && !s->notes; i++) {
		const char *key;

		fp_json_member(s->env, i, &key, NULL);
		s->notes = key && !strncmp(key, "estimate:", 9);
	}
	sess = fp_json_get(root, "session");
	s->backend = fp_json_string(fp_json_get(sess, "backend"), NULL);
	s->context = fp_json_string(fp_json_get(sess, "context"), NULL);
	tm = fp_json_get(root, "time");
	if (fp_json_number(fp_json_get(tm, "start_unix_ns"), &t0) &&
	    fp_json_number(fp_json_get(tm, "end_unix_ns"), &t1) && t1 >= t0)
		s->wall_ns = t1 - t0;
	return FP_OK;
}

/* ---- kernels ------------------------------------------------------------------------------------ */

static const char *node_string(const struct fp_calltree *t, uint32_t metric, uint32_t node)
{
	struct fp_calltree_value v;

	if (metric == FP_CALLTREE_NONE || fp_calltree_get(t, node, metric, &v) != FP_OK ||
	    !v.is_string)
		return NULL;
	return v.str;
}

static double node_value(const struct fp_calltree *t, uint32_t metric, uint32_t node)
{
	struct fp_calltree_value v;

	if (metric == FP_CALLTREE_NONE || fp_calltree_get(t, node, metric, &v) != FP_OK ||
	    v.is_string)
		return NAN;
	return v.kind == FP_METRIC_INCLUSIVE ? v.total : v.self;
}

double fp__adv_metric(const struct fp_advice *a, const struct fp__adv_kernel *k,
		      enum fp__adv_metric m, const char **src)
{
	size_t p, i;

	for (p = 0; p < 2; p++)
		for (i = 0; i < a->nsrc; i++) {
			uint32_t node = i ? k->xnode[i - 1] : k->node;
			double v;

			if (node == FP_CALLTREE_NONE)
				continue;
			v = node_value(a->src[i].t, a->src[i].ids[m][p], node);
			if (!isnan(v)) {
				if (src)
					*src = p ? "ncu" : "counters";
				return v;
			}
		}
	return NAN;
}

/* The node of `t` at the path of names of main-tree node `node`, or NONE. */
static uint32_t same_path(const struct fp_calltree *main, uint32_t node,
			  const struct fp_calltree *t)
{
	uint32_t path[FP_CALLTREE_DEFAULT_MAX_DEPTH], cur = FP_CALLTREE_ROOT;
	size_t n = 0, len;
	uint32_t x;

	for (x = node; x != FP_CALLTREE_ROOT && x != FP_CALLTREE_NONE;
	     x = fp_calltree_node_parent(main, x)) {
		if (n == FP_ARRAY_SIZE(path))
			return FP_CALLTREE_NONE;
		path[n++] = x;
	}
	while (n--) {
		const char *name = fp_calltree_node_name(main, path[n], &len);
		uint32_t child = fp_calltree_node_first_child(t, cur);

		for (; child != FP_CALLTREE_NONE; child = fp_calltree_node_next_sibling(t, child)) {
			size_t l2;
			const char *n2 = fp_calltree_node_name(t, child, &l2);

			if (l2 == len && !memcmp(n2, name, len))
				break;
		}
		if (child == FP_CALLTREE_NONE)
			return FP_CALLTREE_NONE;
		cur = child;
	}
	return cur;
}

struct cand {
	uint32_t node;
	double ns;
};

static int by_time(const void *x, const void *y)
{
	const struct cand *p = x, *q = y;

	if (p->ns != q->ns)
		return p->ns > q->ns ? -1 : 1;
	return p->node < q->node ? -1 : p->node > q->node;
}

/* The launching Python line: the nearest ancestor named "file:function@line". */
static void launch_site(struct fp_advice *a, struct fp__adv_kernel *k)
{
	const struct fp_calltree *t = a->src[0].t;
	uint32_t x;
	size_t len;

	for (x = fp_calltree_node_parent(t, k->node);
	     x != FP_CALLTREE_ROOT && x != FP_CALLTREE_NONE; x = fp_calltree_node_parent(t, x)) {
		const char *name = fp_calltree_node_name(t, x, &len);

		if (name && memchr(name, '@', len) &&
		    fp__adv_split_frame(a, name, len, &k->site_file, &k->site_line))
			return;
	}
}

static int pick_kernels(struct fp_advice *a, struct fp_diag *diag)
{
	struct fp__adv_src *s = &a->src[0];
	size_t n = fp_calltree_node_count(s->t), i, nc = 0;
	struct cand *c;
	int rc = FP_OK;

	c = fp_malloc((n ? n : 1) * sizeof(*c));
	if (!c)
		return FP_ENOMEM;
	/* kernel nodes: a device_id (every launch a session files has one), or a count of their
	 * own with a time (Proton's older files) */
	for (i = 1; i < n; i++) {
		double ns = node_value(s->t, s->m_time, (uint32_t)i);
		struct fp_calltree_value v;

		if (isnan(ns) || ns <= 0)
			continue;
		if (!node_string(s->t, s->m_dev_id, (uint32_t)i) &&
		    !(s->m_count != FP_CALLTREE_NONE &&
		      fp_calltree_get(s->t, (uint32_t)i, s->m_count, &v) == FP_OK && v.self > 0 &&
		      !fp_calltree_node_child_count(s->t, (uint32_t)i)))
			continue;
		c[nc].node = (uint32_t)i;
		c[nc++].ns = ns;
		a->total_ns += ns;
		a->launches += FP_MAX(0.0, node_value(s->t, s->m_count, (uint32_t)i));
	}
	a->nkernel_nodes = nc;
	qsort(c, nc, sizeof(*c), by_time);
	a->kernels = fp_arena_calloc(&a->arena, FP_MAX((size_t)1, FP_MIN(nc, a->o.max_kernels)),
				     sizeof(*a->kernels));
	if (!a->kernels) {
		rc = fp_arena_last_error(&a->arena);
		goto out;
	}
	for (i = 0; i < nc && a->nkernels < a->o.max_kernels; i++) {
		struct fp__adv_kernel *k = &a->kernels[a->nkernels];
		char shown[512];
		size_t j, len;

		if (i && c[i].ns < a->o.min_share * a->total_ns)
			break; /* the heaviest kernel is advised whatever its share */
		memset(k, 0, sizeof(*k));
		k->node = c[i].node;
		k->ns = c[i].ns;
		k->share = a->total_ns > 0 ? k->ns / a->total_ns : NAN;
		k->count = node_value(s->t, s->m_count, k->node);
		k->name = fp_calltree_node_name(s->t, k->node, &len);
		fp_calltree_node_display(s->t, k->node, a->o.full_names, shown, sizeof(shown),
					 NULL);
		k->shown = fp__adv_str(a, "%s", shown);
		k->dev_type = node_string(s->t, s->m_dev_type, k->node);
		k->dev_id = node_string(s->t, s->m_dev_id, k->node);
		k->programs = k->fp32_peak = k->num_sms = NAN;
		k->rp_ok = fp_roofline_point(s->t, k->node, &k->rp) == FP_OK;
		if (k->dev_id) {
			fp_view_peaks_of(s->t, k->dev_type, k->dev_id, &k->pk);
			k->fp32_peak = fp_roofline_fp32_peak(s->t, k->dev_type, k->dev_id);
			k->gpu = fp__adv_gpu_of(k->pk.arch);
			for (j = 0; j < fp_calltree_device_count(s->t); j++) {
				struct fp_calltree_device_attr d;

				if (fp_calltree_device_at(s->t, j, &d) == FP_OK && !d.is_string &&
				    !strcmp(d.index, k->dev_id) &&
				    (!k->dev_type || !strcmp(d.type, k->dev_type)) &&
				    !strcmp(d.key, "num_sms"))
					k->num_sms = d.value;
			}
		} else {
			snprintf(k->pk.note, sizeof(k->pk.note),
				 "the kernel node has no device_id");
		}
		for (j = 0; j + 1 < a->nsrc; j++)
			k->xnode[j] = same_path(s->t, k->node, a->src[j + 1].t);
		launch_site(a, k);
		rc = kernel_facts(a, k, diag);
		if (rc)
			goto out;
		k->triton = k->facts || env_value(s, "estimate:", k->name, NULL) ||
			    !isnan(node_value(s->t, s->m_est_bytes, k->node)) ||
			    node_string(s->t, s->m_source_nodes, k->node);
		k->foreign = !k->triton && (node_string(s->t, s->m_mangled, k->node) ||
					    fp__adv_cxx_name(k->name) || s->notes);
		a->nkernels++;
	}
	rc = a->rc;
out:
	fp_free(c);
	return rc;
}

/* Programs per launch: the trace's grids (median over this node's launches), else ncu's
 * grid size, else the IR: est_bytes / (launches x bytes per program). */
static int by_double(const void *x, const void *y)
{
	double p = *(const double *)x, q = *(const double *)y;

	return p < q ? -1 : p > q;
}

static int kernel_programs(struct fp_advice *a, struct fp__adv_kernel *k)
{
	double *v = NULL, est, per;
	size_t n = 0, i;

	if (a->nevents) {
		v = fp_malloc(a->nevents * sizeof(*v));
		if (!v)
			return FP_ENOMEM;
		for (i = 0; i < a->nevents; i++)
			if (!isnan(a->events[i].programs) && fp__adv_event_is(a, &a->events[i], k))
				v[n++] = a->events[i].programs;
		if (n) {
			qsort(v, n, sizeof(*v), by_double);
			k->programs = v[n / 2];
			k->programs_src = "trace";
		}
		fp_free(v);
		if (n)
			return FP_OK;
	}
	k->programs = fp__adv_metric(a, k, FP__M_GRID, &k->programs_src);
	if (!isnan(k->programs))
		return FP_OK;
	est = node_value(a->src[0].t, a->src[0].m_est_bytes, k->node);
	per = fp__adv_num(k->facts, FP_TTIR_FACT_BYTES);
	if (!isnan(est) && !isnan(per) && per > 0 && k->count > 0) {
		k->programs = nearbyint(est / (per * k->count));
		k->programs_src = "ir";
	}
	return FP_OK;
}

/* ---- running ------------------------------------------------------------------------------------ */

static int cmp_findings(const void *x, const void *y)
{
	const struct fp__adv_finding *p = x, *q = y;
	bool pn, qn;

	/* the run's findings after the kernels'; kernels in their (time) order */
	if (p->kernel != q->kernel)
		return p->kernel < q->kernel ? -1 : 1;
	if (p->kind != q->kind)
		return p->kind < q->kind ? -1 : 1;
	pn = isnan(p->saving_ns);
	qn = isnan(q->saving_ns);
	if (pn != qn)
		return pn ? 1 : -1;
	if (!pn && p->saving_ns != q->saving_ns)
		return p->saving_ns > q->saving_ns ? -1 : 1;
	return p->order < q->order ? -1 : p->order > q->order;
}

void fp_advise_options_init(struct fp_advise_options *o)
{
	memset(o, 0, sizeof(*o));
	o->max_kernels = FP_ADVISE_DEFAULT_MAX_KERNELS;
	o->min_share = FP_ADVISE_DEFAULT_MIN_SHARE;
}

static int open_source(struct fp_advice *a, struct fp__adv_src *s,
		       const struct fp_advise_profile *p, struct fp_diag *diag)
{
	int rc;

	if (!p->tree)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_advise_run: a profile without a tree");
	s->t = p->tree;
	s->path = p->path ? fp__adv_str(a, "%s", p->path) : NULL;
	s->meta_name = p->meta_path ?
			       fp__adv_str(a, "%s", p->meta_path) :
			       fp__adv_str(a, "%s's meta file", p->path ? p->path : "the profile");
	s->trace_name = p->trace_path ?
				fp__adv_str(a, "%s", p->trace_path) :
				fp__adv_str(a, "%s's trace", p->path ? p->path : "the profile");
	if (a->rc)
		return a->rc;
	rc = fp_calltree_finalize(s->t);
	if (!rc)
		rc = index_metrics(a, s);
	if (!rc)
		rc = read_meta(a, s, p, diag);
	return rc;
}

int fp_advise_run(const struct fp_advise_input *in, const struct fp_advise_options *o,
		  struct fp_advice **out, struct fp_diag *diag)
{
	struct fp_advice *a;
	size_t i, r, nr = FP_ARRAY_SIZE(rules);
	int rc;

	fp_diag_clear(diag);
	if (!in || !out || !in->main.tree || in->nextra > FP_ADVISE_MAX_EXTRA ||
	    (in->nextra && !in->extra))
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "fp_advise_run: no profile, or more than %u others",
				   FP_ADVISE_MAX_EXTRA);
	*out = NULL;
	a = fp_calloc(1, sizeof(*a));
	if (!a)
		return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	fp_arena_init(&a->arena, 0, ARENA_CAP);
	a->cur = SIZE_MAX;
	fp_advise_options_init(&a->o);
	if (o) {
		if (o->max_kernels)
			a->o.max_kernels = o->max_kernels;
		if (o->min_share > 0 && o->min_share <= 1)
			a->o.min_share = o->min_share;
		a->o.full_names = o->full_names;
	}
	a->status = fp_arena_calloc(&a->arena, nr, sizeof(*a->status));
	if (!a->status) {
		rc = fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
		goto fail_run;
	}
	a->nsrc = 1 + in->nextra;
	rc = open_source(a, &a->src[0], &in->main, diag);
	for (i = 0; !rc && i < in->nextra; i++)
		rc = open_source(a, &a->src[1 + i], &in->extra[i], diag);
	if (rc)
		goto fail_run;
	a->path = a->src[0].path;
	a->merged = node_string(a->src[0].t, find_metric(a->src[0].t, "ranks (pty)"),
				FP_CALLTREE_ROOT) != NULL;
	if (in->main.trace) {
		struct fp_diag d;

		rc = fp_json_parse(in->main.trace, in->main.trace_len, NULL, &a->src[0].trace, &d);
		if (rc) {
			if (rc == FP_ENOMEM)
				fp_diag_set(diag, rc, 0, "out of memory");
			else
				fp_diag_set_pos(diag, rc, d.offset, d.line, d.col, "%s:%u:%u: %s",
						a->src[0].trace_name, d.line, d.col, d.msg);
			goto fail_run;
		}
		rc = fp__adv_read_trace(a, diag);
		if (rc)
			goto fail_run;
	} else {
		fp__adv_note(a, "no trace: launch gaps and Python lines of launches are unknown "
				"(profile with -d trace)");
	}
	if (!a->src[0].meta)
		fp__adv_note(a, "no meta file: the IR's facts, compiled kernels and autotuners "
				"are unknown");
	rc = pick_kernels(a, diag);
	if (rc)
		goto fail_run;
	if (a->span_us > 0) {
		a->run_ns = a->span_us * 1e3;
		a->run_what = "the traced span";
	} else {
		a->run_ns = a->total_ns;
		a->run_what = "the kernel time";
	}
	for (i = 0; i < a->nkernels && !rc; i++)
		rc = kernel_programs(a, &a->kernels[i]);
	if (rc)
		goto fail_run;
	for (r = 0; r < nr && !a->rc; r++) {
		if (rules[r].kernel_fn) {
			for (i = 0; i < a->nkernels && !a->rc; i++)
				if (!a->kernels[i].foreign)
					rules[r].kernel_fn(a, r, &a->kernels[i]);
			if (!a->nkernels)
				fp__adv_skip(a, r, FP__NEED_TIME, 0,
					     "the profile has no kernel node with a time");
		} else {
			rules[r].run_fn(a, r);
		}
	}
	rc = a->rc;
	if (rc) {
		fp_diag_set(diag, rc, 0, "%s", fp_strerror(rc));
		goto fail_run;
	}
	if (a->nfindings)
		qsort(a->findings, a->nfindings, sizeof(*a->findings), cmp_findings);
	if (a->findings_dropped)
		fp__adv_note(a, "%" PRIu64 " findings past the first %u were left out",
			     a->findings_dropped, FP_ADVISE_MAX_FINDINGS);
	if (a->rc) {
		rc = fp_diag_set(diag, a->rc, 0, "%s", fp_strerror(a->rc));
		goto fail_run;
	}
	*out = a;
	return FP_OK;
fail_run:
	fp_advice_free(a);
	return rc ? rc : FP_ENOMEM;
}

void fp_advice_free(struct fp_advice *a)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->ndocs; i++)
		fp_json_doc_free(a->docs[i]);
	for (i = 0; i < a->nsrc; i++) {
		fp_json_doc_free(a->src[i].meta);
		fp_json_doc_free(a->src[i].trace);
	}
	fp_arena_release(&a->arena);
	fp_free(a);
}

/* ---- reading ------------------------------------------------------------------------------------ */

int fp_advice_rule_status(const struct fp_advice *a, size_t i, struct fp_advice_rule_status *out)
{
	if (!a || !out || i >= FP_ARRAY_SIZE(rules))
		return FP_ENOENT;
	out->rule = rules[i].info.name;
	out->ran = a->status[i].ran;
	out->skipped = a->status[i].skipped;
	out->findings = a->status[i].findings;
	out->why = a->status[i].why;
	out->enable = a->status[i].skipped ? rules[i].info.enable : NULL;
	return FP_OK;
}

size_t fp_advice_finding_count(const struct fp_advice *a)
{
	return a ? a->nfindings : 0;
}

int fp_advice_finding_at(const struct fp_advice *a, size_t i, struct fp_advice_finding *out)
{
	const struct fp__adv_finding *f;

	if (!a || !out || i >= a->nfindings)
		return FP_ENOENT;
	f = &a->findings[i];
	memset(out, 0, sizeof(*out));
	out->rank = i + 1;
	out->rule = rules[f->rule].info.name;
	out->kernel = f->kernel < a->nkernels ? a->kernels[f->kernel].shown : NULL;
	out->node = f->kernel < a->nkernels ? a->kernels[f->kernel].node : FP_CALLTREE_NONE;
	out->title = f->title;
	out->file = f->file;
	out->line = f->line;
	out->line_source = f->line_source;
	out->saving_ns = f->saving_ns;
	out->saving_share = a->run_ns > 0 ? f->saving_ns / a->run_ns : NAN;
	out->method = f->method;
	out->suggestion = f->suggestion;
	out->nevidence = f->nev;
	return FP_OK;
}

int fp_advice_evidence_at(const struct fp_advice *a, size_t i, size_t j,
			  struct fp_advice_evidence *out)
{
	const struct fp__adv_ev *e;

	if (!a || !out || i >= a->nfindings || j >= a->findings[i].nev)
		return FP_ENOENT;
	e = &a->ev[a->findings[i].ev_first + j];
	out->name = e->name;
	out->value = e->value;
	out->text = e->text;
	out->unit = e->unit;
	out->source = e->source;
	return FP_OK;
}

size_t fp_advice_note_count(const struct fp_advice *a)
{
	return a ? a->nnotes : 0;
}

const char *fp_advice_note_at(const struct fp_advice *a, size_t i)
{
	return a && i < a->nnotes ? a->notes[i] : NULL;
}
