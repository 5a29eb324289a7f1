/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The advice (include/flagprism/advise.h) on synthetic profiles: every rule fires on the evidence
 * it documents and not without it, says why when it cannot run, estimates its saving as
 * docs/guide/advise.md says (expected values computed here from the inputs and the device's
 * peaks), ranks a kernel's causes by saving with its roofline position last, reads evidence from
 * other profiles (--with), and refuses malformed meta files, facts and traces with their place.
 * The devices are an H100 SXM (sm_90) as the CUPTI backend describes it and the interpreter.
 */
#define _GNU_SOURCE 1
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/advise.h>
#include <flagprism/calltree.h>
#include <flagprism/json.h>
#include <flagprism/strbuf.h>
#include <flagprism/view.h>

#include "test-tree.h"
#include "test.h"

#define SMS 132.0
#define CLOCK_KHZ 1980000.0
#define BUS 5120.0
#define MCLOCK_KHZ 2619000.0

static struct fp_calltree *gpu_tree(void)
{
	struct fp_calltree *t = fp_calltree_new(NULL);

	ASSERT_NOT_NULL(t);
	ASSERT_OK(fp_calltree_device_set_str(t, "CUDA", "0", "arch", "90"));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "0", "num_sms", SMS));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "0", "clock_rate", CLOCK_KHZ));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "0", "bus_width", BUS));
	ASSERT_OK(fp_calltree_device_set(t, "CUDA", "0", "memory_clock_rate", MCLOCK_KHZ));
	return t;
}

static struct fp_calltree *cpu_tree(void)
{
	struct fp_calltree *t = fp_calltree_new(NULL);

	ASSERT_NOT_NULL(t);
	ASSERT_OK(fp_calltree_device_set_str(t, "CPU", "0", "arch", "interpreter"));
	return t;
}

/* ROOT / main.py:run@10 / name, a kernel node of device 0 of `type`. */
static uint32_t kernel_at(struct fp_calltree *t, const char *frame, const char *name,
			  const char *type, double ns, double count)
{
	const char *path[2] = {frame, name};
	uint32_t node = fpt_tree_path(t, path, 2);

	fpt_tree_str(t, node, "device_id", "0");
	fpt_tree_str(t, node, "device_type", type);
	fpt_tree_add(t, node, "time (ns)", ns);
	fpt_tree_add(t, node, "count", count);
	return node;
}

static uint32_t kernel(struct fp_calltree *t, const char *name, double ns, double count)
{
	return kernel_at(t, "main.py:run@10", name, "CUDA", ns, count);
}

static struct fp_view_peaks h100(void)
{
	struct fp_view_peaks pk;

	fp_view_peaks_compute("CUDA", "0", "90", SMS, CLOCK_KHZ, BUS, MCLOCK_KHZ, &pk);
	ASSERT(pk.known);
	return pk;
}

/* A meta file whose environment holds `n` key/value pairs (values escaped here). */
static char *meta_text(const char *backend, const char *const *kv, size_t n, size_t *len)
{
	struct fp_strbuf sb;
	struct fp_jsonw *w;
	size_t i;

	fp_strbuf_init(&sb, 0);
	w = fp_jsonw_new_strbuf(&sb, 0);
	ASSERT_NOT_NULL(w);
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "format", "flagprism-profile-meta");
	fp_jsonw_kv_int(w, "format_version", 1);
	fp_jsonw_key(w, "session");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "backend", backend);
	fp_jsonw_kv_string(w, "context", "python");
	fp_jsonw_object_end(w);
	fp_jsonw_key(w, "environment");
	fp_jsonw_object_begin(w);
	for (i = 0; i < n; i++)
		fp_jsonw_kv_string(w, kv[2 * i], kv[2 * i + 1]);
	fp_jsonw_object_end(w);
	fp_jsonw_key(w, "time");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, "start_unix_ns", 1000000000);
	fp_jsonw_kv_uint(w, "end_unix_ns", 3000000000);
	fp_jsonw_object_end(w);
	fp_jsonw_object_end(w);
	ASSERT_OK(fp_jsonw_finish(w));
	fp_jsonw_free(w);
	*len = sb.len;
	return fp_strbuf_detach(&sb, NULL);
}

/* "note\nfacts: {json}" as the Profiler writes it. */
static char *note(const char *facts)
{
	size_t n = strlen(facts) + 64;
	char *s = malloc(n);

	ASSERT_NOT_NULL(s);
	snprintf(s, n, "per program: ...\nfacts: %s", facts);
	return s;
}

struct run {
	struct fp_calltree *t;
	char *meta;
	size_t meta_len;
	const char *trace;
	struct fp_advise_profile extra[FP_ADVISE_MAX_EXTRA];
	size_t nextra;
	struct fp_advice *adv;
};

static struct fp_advice *advise(struct run *r)
{
	struct fp_advise_input in;
	struct fp_diag diag;
	int rc;

	memset(&in, 0, sizeof(in));
	in.main.tree = r->t;
	in.main.path = "p.hatchet";
	in.main.meta = r->meta;
	in.main.meta_len = r->meta_len;
	in.main.trace = r->trace;
	in.main.trace_len = r->trace ? strlen(r->trace) : 0;
	in.extra = r->extra;
	in.nextra = r->nextra;
	rc = fp_advise_run(&in, NULL, &r->adv, &diag);
	if (rc)
		fprintf(stderr, "advise: %s\n", diag.msg);
	ASSERT_OK(rc);
	return r->adv;
}

static void done(struct run *r)
{
	fp_advice_free(r->adv);
	fp_calltree_free(r->t);
	free(r->meta);
	memset(r, 0, sizeof(*r));
}

/* The index of the first finding of `rule` (about kernel `kernel`, NULL: any), or -1. */
static long find(const struct fp_advice *a, const char *rule, const char *kernel,
		 struct fp_advice_finding *out)
{
	size_t i;

	for (i = 0; i < fp_advice_finding_count(a); i++) {
		ASSERT_OK(fp_advice_finding_at(a, i, out));
		if (!strcmp(out->rule, rule) &&
		    (!kernel || (out->kernel && !strcmp(out->kernel, kernel))))
			return (long)i;
	}
	return -1;
}

static size_t rule_index(const char *name)
{
	size_t i;

	for (i = 0; i < fp_advise_rule_count(); i++)
		if (!strcmp(fp_advise_rule_at(i)->name, name))
			return i;
	fpt_fail(__FILE__, __LINE__, "no rule %s", name);
	return 0;
}

static struct fp_advice_rule_status status(const struct fp_advice *a, const char *rule)
{
	struct fp_advice_rule_status st;

	ASSERT_OK(fp_advice_rule_status(a, rule_index(rule), &st));
	return st;
}

static double evidence(const struct fp_advice *a, long i, const char *name)
{
	struct fp_advice_finding f;
	struct fp_advice_evidence e;
	size_t j;

	ASSERT_OK(fp_advice_finding_at(a, (size_t)i, &f));
	for (j = 0; j < f.nevidence; j++) {
		ASSERT_OK(fp_advice_evidence_at(a, (size_t)i, j, &e));
		if (!strcmp(e.name, name))
			return e.value;
	}
	fpt_fail(__FILE__, __LINE__, "no evidence '%s'", name);
	return NAN;
}

static char *render(const struct fp_advice *a, bool plan)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	ASSERT_NOT_NULL(f);
	ASSERT_OK(plan ? fp_advice_render_plan(a, f) : fp_advice_render(a, f));
	fclose(f);
	return buf;
}

/* ---- the table --------------------------------------------------------------------------------- */

TEST(advise_rule_table)
{
	size_t i, j, n = fp_advise_rule_count();

	ASSERT_GE(n, 11);
	for (i = 0; i < n; i++) {
		const struct fp_advise_rule_info *r = fp_advise_rule_at(i);

		ASSERT(r->name[0] && r->title[0] && r->evidence[0] && r->threshold[0] &&
		       r->source[0] && r->enable[0]);
		ASSERT(!strcmp(r->scope, "kernel") || !strcmp(r->scope, "run"));
		for (j = 0; j < i; j++)
			ASSERT(strcmp(fp_advise_rule_at(j)->name, r->name) != 0);
	}
	ASSERT_NULL(fp_advise_rule_at(n));
}

/* ---- roofline ---------------------------------------------------------------------------------- */

TEST(advise_roofline_bounds)
{
	struct fp_view_peaks pk = h100();
	struct run r = {0};
	struct fp_advice_finding f;
	uint32_t k;
	long i;

	/* memory-bound at 40% of peak bandwidth (DRAM bytes counted), intensity far below the
	 * ridge: the position, saving to 80% of the roof */
	r.t = gpu_tree();
	k = kernel(r.t, "copy", 1e6, 1);
	fpt_tree_add(r.t, k, "hw:dram__bytes_read.sum", 0.4 * pk.bytes_per_s * 1e-3);
	fpt_tree_add(r.t, k, "hw:dram__bytes_write.sum", 0);
	fpt_tree_add(r.t, k, "est_flops", 1e6);
	advise(&r);
	i = find(r.adv, "roofline", "copy", &f);
	ASSERT_GE(i, 0);
	ASSERT(strstr(f.title, "latency-bound")); /* 40% < 60%: waiting, not streaming */
	ASSERT_NEAR(evidence(r.adv, i, "% of peak bandwidth"), 40, 1e-6);
	/* the floor is the DRAM time at 80% of the peak: 0.4 ms / 0.8 */
	ASSERT_NEAR(f.saving_ns, 1e6 - 0.4e6 / 0.8, 1);
	ASSERT(strstr(f.suggestion, "num_stages"));
	ASSERT_EQ(status(r.adv, "roofline").ran, 1);
	done(&r);

	/* counted SOL throughputs decide: memory at 85% */
	r.t = gpu_tree();
	k = kernel(r.t, "stream", 1e6, 1);
	fpt_tree_add(r.t, k, "hw:dram__bytes_read.sum", 0.85 * pk.bytes_per_s * 1e-3);
	fpt_tree_add(r.t, k, "hw:sm__throughput.avg.pct_of_peak_sustained_elapsed (pty)", 10);
	fpt_tree_add(r.t, k,
		     "hw:gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed (pty)",
		     85);
	advise(&r);
	ASSERT_GE(find(r.adv, "roofline", "stream", &f), 0);
	ASSERT(strstr(f.title, "memory-bound: 85% of peak DRAM bandwidth"));
	ASSERT(!strstr(f.title, "FLOP/s")); /* no FLOP count: no FLOP/s share said */
	ASSERT_NEAR(f.saving_ns, 0, 1e-6);  /* already past 80% of the roof */
	done(&r);

	/* the interpreter: no peaks, the rule says so and asks for a GPU run */
	r.t = cpu_tree();
	k = kernel_at(r.t, "main.py:run@10", "k", "CPU", 1e6, 1);
	fpt_tree_add(r.t, k, "est_bytes", 1e6);
	advise(&r);
	ASSERT_EQ(find(r.adv, "roofline", NULL, &f), -1);
	ASSERT_EQ(status(r.adv, "roofline").skipped, 1);
	ASSERT(strstr(status(r.adv, "roofline").why, "interpreter"));
	{
		char *plan = render(r.adv, true);

		ASSERT(strstr(plan, "flagprism profile -n p-gpu -b cupti"));
		ASSERT(strstr(plan, "flagprism advise p-gpu.hatchet"));
		free(plan);
	}
	done(&r);
}

/* ---- uncoalesced ------------------------------------------------------------------------------ */

TEST(advise_uncoalesced)
{
	const char *kv[2];
	struct run r = {0};
	struct fp_advice_finding f;
	uint32_t k, line;
	long i;
	char *n;

	/* the IR's loads read 1 MB (half of 2000 B per program x 1000 programs x 1 launch); L1
	 * moved 4 MB of sectors: 4x, uncoalesced, saving 3/4 of the time */
	r.t = gpu_tree();
	k = kernel(r.t, "transpose", 1e6, 1);
	fpt_tree_add(r.t, k, "est_bytes", 2e6);
	fpt_tree_add(r.t, k, "hw:l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 4e6 / 32);
	fpt_tree_add(r.t, k, "hw:l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 4e6 / 32 / 32);
	n = note("{\"bytes\":2000,\"load_bytes\":1000,\"top_load_bytes\":1000,"
		 "\"top_load_at\":{\"file\":\"k.py\",\"line\":14},\"def\":{\"file\":\"k.py\","
		 "\"line\":5}}");
	kv[0] = "estimate:transpose";
	kv[1] = n;
	r.meta = meta_text("cupti", kv, 1, &r.meta_len);
	advise(&r);
	i = find(r.adv, "uncoalesced", "transpose", &f);
	ASSERT_EQ(i, 0); /* the first advice: the position comes after the causes */
	ASSERT_NEAR(evidence(r.adv, i, "sector bytes per byte read"), 4, 1e-9);
	ASSERT_NEAR(evidence(r.adv, i, "sectors per request"), 32, 1e-9);
	ASSERT_STREQ(f.file, "k.py");
	ASSERT_EQ(f.line, 14);
	ASSERT_STREQ(f.line_source, "ir: the heaviest load");
	ASSERT_NEAR(f.saving_ns, 0.75e6, 1);
	ASSERT(strstr(f.suggestion, "tl.trans"));
	done(&r);

	/* PC samples name the line with the load stalls */
	r.t = gpu_tree();
	k = kernel(r.t, "transpose", 1e6, 1);
	fpt_tree_add(r.t, k, "hw:l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 3200);
	fpt_tree_add(r.t, k, "hw:l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 100);
	{
		const char *p1[3] = {"main.py:run@10", "transpose", "/src/k.py:14"};
		const char *p2[3] = {"main.py:run@10", "transpose", "/src/k.py:20"};
		uint32_t l1 = fpt_tree_path(r.t, p1, 3), l2 = fpt_tree_path(r.t, p2, 3);

		fpt_tree_add(r.t, l1, "num_samples", 100);
		fpt_tree_add(r.t, l1, "stalled_long_scoreboard", 80);
		fpt_tree_add(r.t, l2, "num_samples", 300);
		fpt_tree_add(r.t, l2, "stalled_selected", 300);
	}
	advise(&r);
	i = find(r.adv, "uncoalesced", "transpose", &f);
	ASSERT_GE(i, 0);
	ASSERT_STREQ(f.file, "/src/k.py");
	ASSERT_EQ(f.line, 14);
	ASSERT_STREQ(f.line_source, "pcsampling: most load stalls");
	ASSERT_NEAR(f.saving_ns, 0.5e6, 1); /* 16 of 32 sectors per request: a lower bound */
	line = f.line;
	(void)line;
	done(&r);
	free(n);

	/* coalesced: 4 sectors per request, sector bytes = the loads' bytes: nothing */
	r.t = gpu_tree();
	k = kernel(r.t, "add", 1e6, 1);
	fpt_tree_add(r.t, k, "hw:l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 400);
	fpt_tree_add(r.t, k, "hw:l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 100);
	advise(&r);
	ASSERT_EQ(find(r.adv, "uncoalesced", NULL, &f), -1);
	ASSERT_EQ(status(r.adv, "uncoalesced").ran, 1);
	done(&r);

	/* no counters: could not run, and the plan asks for the sector counters */
	r.t = gpu_tree();
	kernel(r.t, "add", 1e6, 1);
	advise(&r);
	ASSERT_EQ(status(r.adv, "uncoalesced").skipped, 1);
	{
		char *plan = render(r.adv, true);

		ASSERT(strstr(plan, "-m dram__bytes_read.sum"));
		ASSERT(strstr(plan, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"));
		ASSERT(strstr(plan, "--with p-metrics.hatchet"));
		free(plan);
	}
	done(&r);
}

/* ---- spills and occupancy ---------------------------------------------------------------------- */

TEST(advise_spills)
{
	const char *kv[2];
	struct run r = {0};
	struct fp_advice_finding f;
	uint32_t k;
	long i;
	char *n = note(
		"{\"bytes\":4096,\"top_tile_bytes\":262144,\"top_tile_at\":{\"file\":\"k.py\","
		"\"line\":31},\"compiled\":{\"num_warps\":4,\"num_stages\":3,\"registers\":255,"
		"\"spill_bytes\":512,\"shared_bytes\":0}}");

	kv[0] = "estimate:big";
	kv[1] = n;
	r.t = gpu_tree();
	k = kernel(r.t, "big", 1e6, 1);
	r.meta = meta_text("cupti", kv, 1, &r.meta_len);
	advise(&r);
	i = find(r.adv, "spills", "big", &f);
	ASSERT_GE(i, 0);
	ASSERT(strstr(f.title, "512 B per thread"));
	ASSERT_EQ(f.line, 31);
	ASSERT_STREQ(f.line_source, "ir: the largest tensor");
	ASSERT_NEAR(evidence(r.adv, i, "largest tensor, per thread"), 262144.0 / 128, 1e-9);
	ASSERT(isnan(f.saving_ns)); /* no local-memory counters */
	ASSERT(strstr(f.suggestion, "num_warps=8"));
	done(&r);

	/* with the counters: the local sectors' share of the L1 sectors */
	r.t = gpu_tree();
	k = kernel(r.t, "big", 1e6, 1);
	fpt_tree_add(r.t, k, "hw:l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", 300);
	fpt_tree_add(r.t, k, "hw:l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", 100);
	fpt_tree_add(r.t, k, "hw:l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 600);
	r.meta = meta_text("cupti", kv, 1, &r.meta_len);
	advise(&r);
	ASSERT_GE(find(r.adv, "spills", "big", &f), 0);
	ASSERT_NEAR(f.saving_ns, 0.4e6, 1);
	done(&r);

	/* no spill: ran, nothing */
	free(n);
	n = note("{\"compiled\":{\"num_warps\":4,\"registers\":40,\"spill_bytes\":0}}");
	kv[1] = n;
	r.t = gpu_tree();
	kernel(r.t, "big", 1e6, 1);
	r.meta = meta_text("cupti", kv, 1, &r.meta_len);
	advise(&r);
	ASSERT_EQ(find(r.adv, "spills", NULL, &f), -1);
	ASSERT_EQ(status(r.adv, "spills").ran, 1);
	done(&r);
	free(n);
}

TEST(advise_occupancy)
{
	const char *kv[2];
	struct run r = {0};
	struct fp_advice_finding f;
	uint32_t k;
	long i;
	/* 128 registers x 32 threads = 4096 per warp: 16 warps fit, 2 blocks of 8 warps: 25%; the
	 * next limit (warps: 64 / 8 = 8 blocks) would allow 100% */
	char *n = note("{\"compiled\":{\"num_warps\":8,\"num_stages\":3,\"registers\":128,"
		       "\"spill_bytes\":0,\"shared_bytes\":0}}");

	kv[0] = "estimate:heavy";
	kv[1] = n;
	r.t = gpu_tree();
	k = kernel(r.t, "heavy", 1e6, 1);
	fpt_tree_add(r.t, k, "hw:sm__throughput.avg.pct_of_peak_sustained_elapsed (pty)", 20);
	fpt_tree_add(r.t, k, "hw:sm__warps_active.avg.pct_of_peak_sustained_active (pty)", 24);
	r.meta = meta_text("cupti", kv, 1, &r.meta_len);
	advise(&r);
	i = find(r.adv, "occupancy", "heavy", &f);
	ASSERT_GE(i, 0);
	ASSERT(strstr(f.title, "limited by registers"));
	ASSERT_NEAR(evidence(r.adv, i, "theoretical occupancy"), 25, 1e-9);
	ASSERT_NEAR(evidence(r.adv, i, "achieved occupancy"), 24, 1e-9);
	ASSERT_NEAR(f.saving_ns, 0.75e6, 1); /* no roofline here: uncapped */
	ASSERT(strstr(f.suggestion, "num_warps=16"));
	ASSERT_STREQ(f.file, "main.py"); /* the launch, where num_warps is chosen */
	ASSERT_EQ(f.line, 10);
	done(&r);

	/* the same kernel near a roof: occupancy is not its problem */
	r.t = gpu_tree();
	k = kernel(r.t, "heavy", 1e6, 1);
	fpt_tree_add(r.t, k, "hw:sm__throughput.avg.pct_of_peak_sustained_elapsed (pty)", 90);
	r.meta = meta_text("cupti", kv, 1, &r.meta_len);
	advise(&r);
	ASSERT_EQ(find(r.adv, "occupancy", NULL, &f), -1);
	done(&r);

	/* the interpreter: no limits */
	r.t = cpu_tree();
	kernel_at(r.t, "main.py:run@10", "heavy", "CPU", 1e6, 1);
	r.meta = meta_text("host", kv, 1, &r.meta_len);
	advise(&r);
	ASSERT_EQ(status(r.adv, "occupancy").skipped, 1);
	done(&r);
	free(n);
}

/* ---- tail effect ------------------------------------------------------------------------------- */

TEST(advise_tail_effect)
{
	static const char trace_small[] =
		"{\"traceEvents\":["
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"reduce\",\"pid\":1000,\"tid\":1,"
		"\"ts\":0,\"dur\":500,\"args\":{\"call_stack\":[\"main.py:run@10\"],"
		"\"grid\":[16,1,1]}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"reduce\",\"pid\":1000,\"tid\":1,"
		"\"ts\":600,\"dur\":500,\"args\":{\"call_stack\":[\"main.py:run@10\"],"
		"\"grid\":[16,1,1]}}]}";
	static const char trace_waves[] =
		"{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"blocks\",\"pid\":1000,"
		"\"tid\":1,\"ts\":0,\"dur\":1000,\"args\":{\"call_stack\":[\"main.py:run@10\"],"
		"\"grid\":[2500,1,1]}}]}";
	static const char trace_under_a_wave[] =
		"{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"blocks\",\"pid\":1000,"
		"\"tid\":1,\"ts\":0,\"dur\":1000,\"args\":{\"call_stack\":[\"main.py:run@10\"],"
		"\"grid\":[1000,1,1]}}]}";
	const char *kv[2];
	struct run r = {0};
	struct fp_advice_finding f;
	long i;
	char *n;

	/* 16 programs on 132 SMs: 116 idle; saving 1 - 16/132 of the time (no roofline) */
	r.t = gpu_tree();
	kernel(r.t, "reduce", 1e6, 2);
	r.trace = trace_small;
	advise(&r);
	i = find(r.adv, "tail_effect", "reduce", &f);
	ASSERT_GE(i, 0);
	ASSERT(strstr(f.title, "grid of 16 programs on 132 SMs"));
	ASSERT_NEAR(evidence(r.adv, i, "programs per launch"), 16, 0);
	ASSERT_NEAR(f.saving_ns, 1e6 * (1 - 16 / SMS), 1);
	ASSERT_STREQ(f.file, "main.py");
	ASSERT_EQ(f.line, 10);
	done(&r);

	/* 2500 programs, 16 blocks of 4 warps per SM (registers 32): 2112 per wave, 1.18 waves:
	 * the second wave idles 41% */
	n = note("{\"compiled\":{\"num_warps\":4,\"registers\":32,\"shared_bytes\":0}}");
	kv[0] = "estimate:blocks";
	kv[1] = n;
	r.t = gpu_tree();
	kernel(r.t, "blocks", 1e6, 1);
	r.trace = trace_waves;
	r.meta = meta_text("cupti", kv, 1, &r.meta_len);
	advise(&r);
	i = find(r.adv, "tail_effect", "blocks", &f);
	ASSERT_GE(i, 0);
	ASSERT_NEAR(evidence(r.adv, i, "blocks per SM"), 16, 0);
	ASSERT_NEAR(evidence(r.adv, i, "waves"), 2500 / (SMS * 16), 1e-12);
	ASSERT_NEAR(f.saving_ns, 1e6 * (1 - 2500 / (SMS * 16) / 2), 1);
	done(&r);

	/* 1000 programs, under one wave of 2112 but more than the SMs: every SM has programs,
	 * none idles (lower occupancy is not a tail) */
	r.t = gpu_tree();
	kernel(r.t, "blocks", 1e6, 1);
	r.trace = trace_under_a_wave;
	r.meta = meta_text("cupti", kv, 1, &r.meta_len);
	advise(&r);
	ASSERT_EQ(find(r.adv, "tail_effect", NULL, &f), -1);
	ASSERT_EQ(status(r.adv, "tail_effect").ran, 1);
	done(&r);
	free(n);

	/* no grid anywhere: could not run */
	r.t = gpu_tree();
	kernel(r.t, "blocks", 1e6, 1);
	advise(&r);
	ASSERT_EQ(status(r.adv, "tail_effect").skipped, 1);
	done(&r);
}

/* ---- stalls ------------------------------------------------------------------------------------ */

TEST(advise_stall)
{
	struct run r = {0};
	struct fp_advice_finding f;
	const char *p1[3] = {"main.py:run@10", "loop", "/src/k.py:42"};
	const char *p2[3] = {"main.py:run@10", "loop", "/src/k.py:50"};
	const char *p3[3] = {"main.py:run@10", "loop", "/src/k.py:51"};
	uint32_t l;
	long i;

	r.t = gpu_tree();
	kernel(r.t, "loop", 1e6, 1);
	l = fpt_tree_path(r.t, p1, 3);
	fpt_tree_add(r.t, l, "num_samples", 700);
	fpt_tree_add(r.t, l, "stalled_long_scoreboard", 500);
	fpt_tree_add(r.t, l, "stalled_long_scoreboard_not_issued", 9999); /* a twin: ignored */
	fpt_tree_add(r.t, l, "stalled_selected", 200);
	l = fpt_tree_path(r.t, p2, 3);
	fpt_tree_add(r.t, l, "num_samples", 250);
	fpt_tree_add(r.t, l, "stalled_barrier", 200);
	l = fpt_tree_path(r.t, p3, 3); /* 5% of the samples: below the line share */
	fpt_tree_add(r.t, l, "num_samples", 50);
	fpt_tree_add(r.t, l, "stalled_math_pipe_throttle", 50);
	advise(&r);
	i = find(r.adv, "stall", "loop", &f);
	ASSERT_EQ(i, 0);
	ASSERT_EQ(f.line, 42);
	ASSERT(strstr(f.title, "long_scoreboard"));
	ASSERT_NEAR(f.saving_ns, 1e6 * 500 / 1000, 1);
	ASSERT(strstr(f.suggestion, "num_stages"));
	ASSERT_OK(fp_advice_finding_at(r.adv, 1, &f));
	ASSERT_STREQ(f.rule, "stall");
	ASSERT_EQ(f.line, 50);
	ASSERT(strstr(f.title, "barrier"));
	ASSERT_EQ(status(r.adv, "stall").findings, 2);
	done(&r);

	r.t = gpu_tree();
	kernel(r.t, "loop", 1e6, 1);
	advise(&r);
	ASSERT_EQ(status(r.adv, "stall").skipped, 1);
	ASSERT(strstr(status(r.adv, "stall").enable, "pcsampling"));
	done(&r);
}

/* ---- float32 math on narrow data --------------------------------------------------------------- */

TEST(advise_half_math)
{
	struct fp_view_peaks pk = h100();
	const char *kv[2];
	struct run r = {0};
	struct fp_advice_finding f;
	uint32_t k;
	double w = 1e12, t_now, t_new;
	long i;
	char *n =
		note("{\"bytes\":1000,\"total_flops\":1000,\"dot_flops\":1000,"
		     "\"widened_dots\":1,\"widened_dot_flops\":1000,\"widened_from\":\"fp16\","
		     "\"precision\":\"tf32\",\"widened_dot_at\":{\"file\":\"k.py\",\"line\":20}}");

	kv[0] = "estimate:gemm";
	kv[1] = n;
	r.t = gpu_tree();
	k = kernel(r.t, "gemm", 4e6, 1);
	fpt_tree_add(r.t, k, "est_flops", w);
	fpt_tree_add(r.t, k, "est_bytes", 1e6);
	r.meta = meta_text("cupti", kv, 1, &r.meta_len);
	advise(&r);
	i = find(r.adv, "half_math", "gemm", &f);
	ASSERT_EQ(i, 0);
	ASSERT_EQ(f.line, 20);
	ASSERT_STREQ(f.line_source, "ir: the dot");
	/* tf32 runs at half the 16-bit tensor peak: the roofline model halves the dot's time */
	t_now = fmax(w / pk.flops[2], 1e6 / pk.bytes_per_s);
	t_new = fmax(w / pk.flops[1], 1e6 / pk.bytes_per_s);
	ASSERT_NEAR(f.saving_ns, 4e6 * (1 - t_new / t_now), 1);
	ASSERT_NEAR(evidence(r.adv, i, "share of the kernel's dot FLOPs"), 100, 0);
	ASSERT(strstr(f.suggestion, "tl.dot(a, b, acc)"));
	done(&r);

	/* the interpreter: the rule runs on the IR, the saving is not estimated */
	r.t = cpu_tree();
	kernel_at(r.t, "main.py:run@10", "gemm", "CPU", 4e6, 1);
	r.meta = meta_text("host", kv, 1, &r.meta_len);
	advise(&r);
	ASSERT_GE(find(r.adv, "half_math", "gemm", &f), 0);
	ASSERT(isnan(f.saving_ns));
	ASSERT(strstr(f.method, "no peaks"));
	done(&r);
	free(n);

	/* an fp16 dot (nothing widened): nothing */
	n = note("{\"total_flops\":1000,\"dot_flops\":1000}");
	kv[1] = n;
	r.t = gpu_tree();
	kernel(r.t, "gemm", 4e6, 1);
	r.meta = meta_text("cupti", kv, 1, &r.meta_len);
	advise(&r);
	ASSERT_EQ(find(r.adv, "half_math", NULL, &f), -1);
	ASSERT_EQ(status(r.adv, "half_math").ran, 1);
	done(&r);
	free(n);

	/* no facts: could not run */
	r.t = gpu_tree();
	kernel(r.t, "gemm", 4e6, 1);
	advise(&r);
	ASSERT_EQ(status(r.adv, "half_math").skipped, 1);
	done(&r);
}

/* ---- the autotuner ------------------------------------------------------------------------------ */

TEST(advise_autotune)
{
	const char *kv[2];
	struct run r = {0};
	struct fp_advice_finding f;
	long i;

	/* the chosen config (index 1) measured 2.0 ms, config 2 1.0 ms; BLOCK 128 is the largest */
	kv[0] = "autotune:mm";
	kv[1] = "{\"kernel\":\"mm\",\"key\":[\"M\"],\"chosen\":1,\"bench_s\":2.5,"
		"\"configs\":[{\"config\":{\"BLOCK\":32,\"num_warps\":4},\"ms\":[3.0,2.9,3.1]},"
		"{\"config\":{\"BLOCK\":64,\"num_warps\":4},\"ms\":[2.0,1.9,2.1]},"
		"{\"config\":{\"BLOCK\":128,\"num_warps\":4},\"ms\":[1.0,0.9,1.1]}]}";
	r.t = gpu_tree();
	kernel(r.t, "mm", 1e6, 10);
	r.meta = meta_text("cupti", kv, 1, &r.meta_len);
	advise(&r);
	i = find(r.adv, "autotune", "mm", &f);
	ASSERT_EQ(i, 0);
	ASSERT(strstr(f.title, "runs BLOCK=64 num_warps=4 (2 ms) but measured BLOCK=128"));
	ASSERT_NEAR(f.saving_ns, 0.5e6, 1);
	ASSERT_OK(fp_advice_finding_at(r.adv, 1, &f));
	ASSERT_STREQ(f.rule, "autotune");
	ASSERT(strstr(f.title, "largest BLOCK measured (128)"));
	ASSERT(isnan(f.saving_ns));
	ASSERT(strstr(f.suggestion, "BLOCK above 128"));
	done(&r);

	/* every config within 1%: tuning buys nothing; the saving is the benchmarking time */
	kv[1] = "{\"kernel\":\"mm\",\"chosen\":0,\"bench_s\":2.5,\"configs\":["
		"{\"config\":{\"num_warps\":2},\"ms\":[1.0]},{\"config\":{\"num_warps\":4},"
		"\"ms\":[1.005]},{\"config\":{\"num_warps\":8},\"ms\":[1.009]}]}";
	r.t = gpu_tree();
	kernel(r.t, "mm", 1e6, 10);
	r.meta = meta_text("cupti", kv, 1, &r.meta_len);
	advise(&r);
	i = find(r.adv, "autotune", "mm", &f);
	ASSERT_GE(i, 0);
	/* num_warps 2 is the smallest of three, but in a flat space that says nothing */
	ASSERT(strstr(f.title, "within 0.9%"));
	ASSERT_EQ(status(r.adv, "autotune").findings, 1);
	ASSERT_NEAR(f.saving_ns, 2.5e9, 1);
	done(&r);

	/* not autotuned: ran, nothing */
	r.t = gpu_tree();
	kernel(r.t, "mm", 1e6, 10);
	r.meta = meta_text("cupti", NULL, 0, &r.meta_len);
	advise(&r);
	ASSERT_EQ(find(r.adv, "autotune", NULL, &f), -1);
	ASSERT_EQ(status(r.adv, "autotune").ran, 1);
	done(&r);
}

/* ---- launch-bound and outside Triton ------------------------------------------------------------- */

/* `n` launches of `name` from `site`, `dur` us each, `gap` us apart, starting at `t0`. */
static void launches(struct fp_strbuf *sb, const char *name, const char *site, int n, double t0,
		     double dur, double gap, int tid)
{
	int i;

	for (i = 0; i < n; i++)
		ASSERT_OK(fp_strbuf_addf(
			sb,
			"%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":1000,\"tid\":%d,"
			"\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"call_stack\":[\"%s\"],\"grid\":[1,1,1]}}",
			sb->len > 16 ? "," : "", name, tid, t0 + i * (dur + gap), dur, site));
}

TEST(advise_launch_bound)
{
	struct fp_strbuf sb;
	struct run r = {0};
	struct fp_advice_finding f;
	long i;

	fp_strbuf_init(&sb, 0);
	ASSERT_OK(fp_strbuf_addstr(&sb, "{\"traceEvents\":["));
	launches(&sb, "tiny", "main.py:loop@7", 20, 0, 5, 40, 1);
	launches(&sb, "big", "main.py:run@10", 8, 10000, 500, 1, 2); /* busy: no gaps */
	ASSERT_OK(fp_strbuf_addstr(&sb, "]}"));
	r.t = gpu_tree();
	kernel_at(r.t, "main.py:loop@7", "tiny", "CUDA", 20 * 5e3, 20);
	kernel(r.t, "big", 8 * 500e3, 8);
	r.trace = sb.buf;
	advise(&r);
	i = find(r.adv, "launch_bound", "tiny", &f);
	ASSERT_GE(i, 0);
	ASSERT(strstr(f.title, "20 launches of tiny"));
	ASSERT_EQ(f.line, 7);
	ASSERT_STREQ(f.line_source, "call path: the launching line");
	ASSERT_NEAR(evidence(r.adv, i, "median gap before a launch"), 40e3, 1e-6);
	ASSERT_NEAR(f.saving_ns, 19 * (40e3 - 2e3), 1e-3);
	ASSERT(strstr(f.suggestion, "CUDA graph"));
	/* it is tiny's first advice */
	{
		struct fp_advice_finding g;
		size_t j;

		for (j = 0; j < fp_advice_finding_count(r.adv); j++) {
			ASSERT_OK(fp_advice_finding_at(r.adv, j, &g));
			if (g.kernel && !strcmp(g.kernel, "tiny")) {
				ASSERT_STREQ(g.rule, "launch_bound");
				break;
			}
		}
	}
	ASSERT_EQ(find(r.adv, "launch_bound", "big", &f), -1);
	done(&r);
	fp_strbuf_release(&sb);

	/* one long gap (a compilation before the second launch) is not the loop's: the saving
	 * is the median gap's, 19 times, not the gaps' sum */
	fp_strbuf_init(&sb, 0);
	ASSERT_OK(fp_strbuf_addstr(&sb, "{\"traceEvents\":["));
	launches(&sb, "tiny", "main.py:loop@7", 1, 0, 5, 0, 1);
	launches(&sb, "tiny", "main.py:loop@7", 19, 100000, 5, 40, 1);
	ASSERT_OK(fp_strbuf_addstr(&sb, "]}"));
	r.t = gpu_tree();
	kernel_at(r.t, "main.py:loop@7", "tiny", "CUDA", 20 * 5e3, 20);
	r.trace = sb.buf;
	advise(&r);
	i = find(r.adv, "launch_bound", "tiny", &f);
	ASSERT_GE(i, 0);
	ASSERT_NEAR(evidence(r.adv, i, "median gap before a launch"), 40e3, 1e-6);
	ASSERT_NEAR(f.saving_ns, 19 * (40e3 - 2e3), 1e-3);
	done(&r);
	fp_strbuf_release(&sb);

	/* no trace: could not run */
	r.t = gpu_tree();
	kernel(r.t, "big", 1e6, 8);
	advise(&r);
	ASSERT_EQ(status(r.adv, "launch_bound").skipped, 1);
	ASSERT_EQ(status(r.adv, "outside_triton").skipped, 1);
	{
		char *text = render(r.adv, false);

		ASSERT(strstr(text, "launch_bound    could not run: no kernel events"));
		free(text);
	}
	done(&r);
}

TEST(advise_outside_triton)
{
	const char *kv[2] = {"estimate:tri", "per program: ..."};
	struct fp_strbuf sb;
	struct run r = {0};
	struct fp_advice_finding f;
	long i;

	fp_strbuf_init(&sb, 0);
	ASSERT_OK(fp_strbuf_addstr(&sb, "{\"traceEvents\":["));
	launches(&sb, "tri", "main.py:step@30", 4, 0, 100, 10, 1);
	/* a PyTorch copy kernel from line 20 takes 600 us of a ~1 ms span */
	launches(&sb, "_ZN2at6native18copy_kernelEv", "main.py:step@20", 2, 500, 300, 0, 2);
	ASSERT_OK(fp_strbuf_addstr(&sb, "]}"));
	r.t = gpu_tree();
	kernel_at(r.t, "main.py:step@30", "tri", "CUDA", 400e3, 4);
	kernel_at(r.t, "main.py:step@20", "_ZN2at6native18copy_kernelEv", "CUDA", 600e3, 2);
	r.meta = meta_text("cupti", kv, 1, &r.meta_len);
	r.trace = sb.buf;
	advise(&r);
	i = find(r.adv, "outside_triton", NULL, &f);
	ASSERT_GE(i, 0);
	ASSERT_NULL(f.kernel);
	ASSERT_EQ(f.line, 20);
	ASSERT_NEAR(evidence(r.adv, i, "time in other kernels"), 600e3, 1e-6);
	ASSERT(strstr(f.suggestion, "PyTorch"));
	ASSERT(isnan(f.saving_ns)); /* no idle time before them: not estimated */
	done(&r);
	fp_strbuf_release(&sb);
}

/* ---- library kernels and the kernels advised -------------------------------------------------- */

TEST(advise_library_kernels)
{
	const char *kv[2] = {"estimate:tri", "per program: ..."};
	struct fp_view_peaks pk = h100();
	struct run r = {0};
	struct fp_advice_finding f;
	char *text;
	size_t j;
	uint32_t k;

	/* a C++ kernel and, where the session wrote estimate notes, a kernel without one: neither
	 * gets the kernel rules, whatever its counters say (the roofline would fire on both) */
	r.t = gpu_tree();
	k = kernel(r.t, "_ZN2at6native18copy_kernelEv", 2e6, 1);
	fpt_tree_add(r.t, k, "hw:dram__bytes_read.sum", 0.4 * pk.bytes_per_s * 2e-3);
	k = kernel(r.t, "vectorized_elementwise_kernel", 1.5e6, 1);
	fpt_tree_add(r.t, k, "hw:dram__bytes_read.sum", 0.4 * pk.bytes_per_s * 1.5e-3);
	k = kernel(r.t, "tri", 1e6, 1);
	fpt_tree_add(r.t, k, "hw:dram__bytes_read.sum", 0.4 * pk.bytes_per_s * 1e-3);
	r.meta = meta_text("cupti", kv, 1, &r.meta_len);
	advise(&r);
	for (j = 0; j < fp_advice_finding_count(r.adv); j++) {
		ASSERT_OK(fp_advice_finding_at(r.adv, j, &f));
		ASSERT(!f.kernel || !strcmp(f.kernel, "tri"));
	}
	ASSERT_GE(find(r.adv, "roofline", "tri", &f), 0);
	text = render(r.adv, false);
	ASSERT(strstr(text, "a library's kernel, not Triton's"));
	free(text);
	done(&r);

	/* without estimate notes a plain name may be Triton's: it is advised */
	r.t = gpu_tree();
	k = kernel(r.t, "vectorized_elementwise_kernel", 1.5e6, 1);
	fpt_tree_add(r.t, k, "hw:dram__bytes_read.sum", 0.4 * pk.bytes_per_s * 1.5e-3);
	advise(&r);
	ASSERT_GE(find(r.adv, "roofline", "vectorized_elementwise_kernel", &f), 0);
	done(&r);
}

TEST(advise_heaviest_always_advised)
{
	struct fp_advise_options o;
	struct fp_advise_input in;
	struct fp_calltree *t = gpu_tree();
	struct fp_advice *a = NULL;
	struct fp_diag diag;
	char *buf = NULL;
	size_t n = 0;
	FILE *f;

	/* 60% and 40%: below a minimum share of 90%, the heaviest is still advised, alone */
	kernel(t, "first", 6e5, 1);
	kernel(t, "second", 4e5, 1);
	memset(&in, 0, sizeof(in));
	in.main.tree = t;
	in.main.path = "p.hatchet";
	fp_advise_options_init(&o);
	o.min_share = 0.9;
	ASSERT_OK(fp_advise_run(&in, &o, &a, &diag));
	f = open_memstream(&buf, &n);
	ASSERT_NOT_NULL(f);
	ASSERT_OK(fp_advice_render(a, f));
	fclose(f);
	ASSERT(strstr(buf, "#1 first"));
	ASSERT(!strstr(buf, "second"));
	free(buf);
	fp_advice_free(a);
	fp_calltree_free(t);
}

/* ---- ranks ------------------------------------------------------------------------------------- */

TEST(advise_ranks)
{
	struct run r = {0};
	struct fp_advice_finding f;
	uint32_t k;
	long i;

	r.t = gpu_tree();
	fpt_tree_str(r.t, FP_CALLTREE_ROOT, "ranks (pty)", "0-3");
	fpt_tree_str(r.t, FP_CALLTREE_ROOT, "world_size (pty)", "4");
	k = kernel(r.t, "attn", 1e6, 1); /* the mean */
	fpt_tree_add(r.t, k, "time (ns) (max)", 1.6e6);
	fpt_tree_add(r.t, k, "time (ns) (min)", 0.8e6);
	fpt_tree_str(r.t, k, "time (ns) (max rank) (pty)", "3");
	advise(&r);
	i = find(r.adv, "ranks", "attn", &f);
	ASSERT_GE(i, 0);
	ASSERT(strstr(f.title, "rank 3 is the straggler"));
	ASSERT_NEAR(f.saving_ns, 0.6e6, 1);
	{
		char *text = render(r.adv, false);

		ASSERT(strstr(text, "a merge across ranks"));
		free(text);
	}
	done(&r);

	/* one process: not applicable */
	r.t = gpu_tree();
	kernel(r.t, "attn", 1e6, 1);
	advise(&r);
	ASSERT_EQ(status(r.adv, "ranks").ran, 0);
	ASSERT_EQ(status(r.adv, "ranks").skipped, 0);
	done(&r);
}

/* ---- evidence from other profiles ------------------------------------------------------------- */

TEST(advise_with_profiles)
{
	struct run r = {0};
	struct fp_advice_finding f;
	struct fp_calltree *metrics = gpu_tree(), *pcs = gpu_tree();
	const char *lp[3] = {"main.py:run@10", "transpose", "/src/k.py:14"};
	uint32_t k, l;

	/* the main profile has times; the counters run has sectors; the PC-sampling run lines */
	r.t = gpu_tree();
	kernel(r.t, "transpose", 1e6, 1);
	k = kernel(metrics, "transpose", 9e6, 1); /* serialised launches: not the time used */
	fpt_tree_add(metrics, k, "hw:l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 3200);
	fpt_tree_add(metrics, k, "hw:l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 100);
	kernel(pcs, "transpose", 1e6, 1);
	l = fpt_tree_path(pcs, lp, 3);
	fpt_tree_add(pcs, l, "num_samples", 10);
	fpt_tree_add(pcs, l, "stalled_long_scoreboard", 9);
	r.extra[0].tree = metrics;
	r.extra[0].path = "p-metrics.hatchet";
	r.extra[1].tree = pcs;
	r.extra[1].path = "p-pcs.hatchet";
	r.nextra = 2;
	advise(&r);
	ASSERT_GE(find(r.adv, "uncoalesced", "transpose", &f), 0);
	ASSERT_EQ(f.line, 14);
	ASSERT_STREQ(f.line_source, "pcsampling: most load stalls");
	ASSERT_GE(find(r.adv, "stall", "transpose", &f), 0);
	{
		char *text = render(r.adv, false);

		ASSERT(strstr(text, "with evidence from p-metrics.hatchet"));
		free(text);
	}
	done(&r);
	fp_calltree_free(metrics);
	fp_calltree_free(pcs);
}

/* ---- outputs ----------------------------------------------------------------------------------- */

TEST(advise_outputs)
{
	const char *kv[2];
	struct run r = {0};
	struct fp_strbuf sb;
	struct fp_jsonw *w;
	struct fp_json_doc *doc;
	const struct fp_json_value *root, *fs, *rules;
	char *text, *n = note("{\"widened_dots\":1,\"widened_dot_flops\":10,\"dot_flops\":10,"
			      "\"total_flops\":10,\"widened_from\":\"fp16\",\"precision\":\"ieee\","
			      "\"widened_dot_at\":{\"file\":\"k.py\",\"line\":20}}");
	size_t i;

	kv[0] = "estimate:gemm";
	kv[1] = n;
	r.t = gpu_tree();
	kernel(r.t, "gemm", 1e6, 1);
	kernel(r.t, "small", 1e3, 1); /* 0.1%: below the share advised */
	r.meta = meta_text("cupti", kv, 1, &r.meta_len);
	advise(&r);
	fp_strbuf_init(&sb, 0);
	w = fp_jsonw_new_strbuf(&sb, 0);
	ASSERT_OK(fp_advice_write_json(r.adv, w));
	ASSERT_OK(fp_jsonw_finish(w));
	fp_jsonw_free(w);
	ASSERT_OK(fp_json_parse(sb.buf, sb.len, NULL, &doc, NULL));
	root = fp_json_root(doc);
	ASSERT_STREQ(fp_json_string(fp_json_get(root, "format"), NULL), "flagprism-advice");
	ASSERT_EQ(fp_json_len(fp_json_get(root, "kernels")), 1);
	fs = fp_json_get(root, "findings");
	ASSERT_EQ(fp_json_len(fs), fp_advice_finding_count(r.adv));
	ASSERT_STREQ(fp_json_string(fp_json_get(fp_json_at(fs, 0), "rule"), NULL), "half_math");
	ASSERT_EQ(fp_json_len(fp_json_get(fp_json_get(fp_json_at(fs, 0), "line"), "file")), 0);
	rules = fp_json_get(root, "rules");
	ASSERT_EQ(fp_json_len(rules), fp_advise_rule_count());
	for (i = 0; i < fp_json_len(rules); i++)
		ASSERT_NOT_NULL(fp_json_string(fp_json_get(fp_json_at(rules, i), "status"), NULL));
	ASSERT_GE(fp_json_len(fp_json_get(root, "plan")), 2);
	fp_json_doc_free(doc);
	fp_strbuf_release(&sb);
	text = render(r.adv, false);
	ASSERT(strstr(text, "#1 gemm"));
	ASSERT(strstr(text, "[half_math]"));
	ASSERT(strstr(text, "at k.py:20 (ir: the dot)"));
	ASSERT(!strstr(text, "small"));
	free(text);
	/* the saved file, and "-" refused nowhere but as stdout */
	ASSERT_OK(fp_advice_save_json(r.adv, fpt_tmp_path("a.json"), NULL));
	doc = fpt_json_file(fpt_tmp_path("a.json"));
	ASSERT_STREQ(fp_json_string(fp_json_get(fp_json_root(doc), "profile"), NULL), "p.hatchet");
	fp_json_doc_free(doc);
	ASSERT_EQ(fp_advice_save_json(r.adv, fpt_tmp_path(""), NULL), FP_EINVAL); /* a directory */
	fpt_tmp_cleanup();
	done(&r);
	free(n);
}

/* ---- bad inputs -------------------------------------------------------------------------------- */

static int advise_status(struct fp_calltree *t, const char *meta, const char *trace,
			 struct fp_diag *diag)
{
	struct fp_advise_input in;
	struct fp_advice *a = NULL;
	int rc;

	memset(&in, 0, sizeof(in));
	in.main.tree = t;
	in.main.path = "p.hatchet";
	in.main.meta = meta;
	in.main.meta_len = meta ? strlen(meta) : 0;
	in.main.meta_path = "p.meta.json";
	in.main.trace = trace;
	in.main.trace_len = trace ? strlen(trace) : 0;
	in.main.trace_path = "p.chrome_trace.json";
	rc = fp_advise_run(&in, NULL, &a, diag);
	if (rc)
		ASSERT_NULL(a);
	fp_advice_free(a);
	return rc;
}

TEST(advise_bad_inputs)
{
	struct fp_calltree *t = gpu_tree();
	struct fp_advise_input in;
	struct fp_advice *a = NULL;
	struct fp_diag diag;
	size_t len;
	char *meta;
	const char *kv[2] = {"estimate:k", "note\nfacts: {\"def\": [1, 2"};

	kernel(t, "k", 1e6, 1);
	ASSERT_EQ(advise_status(t, "{\"format\": ", NULL, &diag), FP_EFORMAT);
	ASSERT(strstr(diag.msg, "p.meta.json:1:"));
	meta = meta_text("cupti", kv, 1, &len);
	ASSERT_EQ(advise_status(t, meta, NULL, &diag), FP_EFORMAT);
	ASSERT(strstr(diag.msg, "environment[\"estimate:k\"]"));
	free(meta);
	ASSERT_EQ(advise_status(t, NULL, "[1, 2", &diag), FP_EFORMAT);
	ASSERT(strstr(diag.msg, "p.chrome_trace.json:1:"));
	ASSERT_EQ(advise_status(t, NULL,
				"{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\","
				"\"ts\":1}]}",
				&diag),
		  FP_EFORMAT);
	ASSERT(strstr(diag.msg, "needs a name, a ts and a dur"));
	/* not ours: noted, not an error */
	ASSERT_OK(advise_status(t, "{\"format\":\"other\"}", "{\"foo\":1}", &diag));
	memset(&in, 0, sizeof(in));
	ASSERT_EQ(fp_advise_run(&in, NULL, &a, &diag), FP_EINVAL);
	in.main.tree = t;
	in.nextra = FP_ADVISE_MAX_EXTRA + 1;
	ASSERT_EQ(fp_advise_run(&in, NULL, &a, &diag), FP_EINVAL);
	ASSERT_NULL(a);
	ASSERT_EQ(fp_advice_finding_count(NULL), 0);
	fp_advice_free(NULL);
	fp_calltree_free(t);
}

/* ---- out of memory ------------------------------------------------------------------------------ */

struct oom_case {
	struct fp_calltree *t, *extra;
	char *meta;
	size_t meta_len;
	const char *trace;
};

static int oom_run(void *arg)
{
	struct oom_case *c = arg;
	struct fp_advise_input in;
	struct fp_advise_profile x;
	struct fp_advice *a = NULL;
	struct fp_strbuf sb;
	struct fp_jsonw *w;
	int rc;

	memset(&in, 0, sizeof(in));
	memset(&x, 0, sizeof(x));
	in.main.tree = c->t;
	in.main.meta = c->meta;
	in.main.meta_len = c->meta_len;
	in.main.trace = c->trace;
	in.main.trace_len = strlen(c->trace);
	x.tree = c->extra;
	in.extra = &x;
	in.nextra = 1;
	rc = fp_advise_run(&in, NULL, &a, NULL);
	if (rc)
		return rc;
	fp_strbuf_init(&sb, 0);
	w = fp_jsonw_new_strbuf(&sb, 0);
	rc = w ? fp_advice_write_json(a, w) : FP_ENOMEM;
	if (!rc)
		rc = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	fp_strbuf_release(&sb);
	fp_advice_free(a);
	return rc;
}

TEST(advise_oom_sweep)
{
	struct oom_case c;
	const char *kv[4] = {
		"estimate:mm",
		"n\nfacts: {\"widened_dots\":1,\"widened_dot_flops\":10,\"dot_flops\":10,"
		"\"compiled\":{\"num_warps\":8,\"registers\":200,\"spill_bytes\":8}}",
		"autotune:mm",
		"{\"chosen\":0,\"configs\":[{\"config\":{\"B\":1},\"ms\":[2]},"
		"{\"config\":{\"B\":2},\"ms\":[1]},{\"config\":{\"B\":4},\"ms\":[1.5]}]}"};
	struct fp_strbuf sb;
	uint32_t k;

	c.t = gpu_tree();
	c.extra = gpu_tree();
	k = kernel(c.t, "mm", 1e6, 10);
	fpt_tree_add(c.t, k, "est_bytes", 1e6);
	kernel(c.extra, "mm", 1e6, 10);
	fpt_tree_add(c.extra, k, "hw:l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 1e6);
	c.meta = meta_text("cupti", kv, 2, &c.meta_len);
	fp_strbuf_init(&sb, 0);
	ASSERT_OK(fp_strbuf_addstr(&sb, "{\"traceEvents\":["));
	launches(&sb, "mm", "main.py:run@10", 10, 0, 5, 40, 1);
	ASSERT_OK(fp_strbuf_addstr(&sb, "]}"));
	c.trace = sb.buf;
	ASSERT_OK(fp_calltree_finalize(c.t));
	ASSERT_OK(fp_calltree_finalize(c.extra));
	ASSERT_GT(fpt_oom_sweep(oom_run, &c, 0, 10, NULL), 10);
	fp_strbuf_release(&sb);
	free(c.meta);
	fp_calltree_free(c.t);
	fp_calltree_free(c.extra);
}
