/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The rules about one kernel (the rows of advise.c's table with a kernel function): roofline
 * position, uncoalesced loads, spills, occupancy, tail effect, stall reasons per line, float32
 * math on narrow data, the autotuner's choice. Each reads the evidence of advise-internal.h's
 * struct fp__adv_kernel, says why it could not run when the profile lacks it, and records
 * findings with their evidence, line, saving and suggestion. docs/guide/advise.md documents
 * every rule; keep the two in step.
 */
#include "fp-setup.h"

#include <flagprism/ttir.h>

#include "advise/advise-internal.h"

/* ---- shared pieces -------------------------------------------------------------------------- */

static size_t kidx(const struct fp_advice *a, const struct fp__adv_kernel *k)
{
	return (size_t)(k - a->kernels);
}

static double compiled(const struct fp__adv_kernel *k, const char *key)
{
	return fp__adv_num(k->compiled, key);
}

/* The kernel's def line from the IR's facts. */
static bool def_line(const struct fp__adv_kernel *k, const char **file, uint32_t *line)
{
	return fp__adv_loc(k->facts, FP_TTIR_FACT_DEF, file, line);
}

/* Where a finding about the kernel as a whole goes: its def line, else its launch. */
static void at_kernel(struct fp__adv_finding *f, const struct fp__adv_kernel *k)
{
	const char *file;
	uint32_t line;

	if (def_line(k, &file, &line))
		fp__adv_at(f, file, line, "ir: the kernel's def line");
	else if (k->site_file)
		fp__adv_at(f, k->site_file, k->site_line, "call path: the launch");
}

/* Where a finding about the launch goes (grid, num_warps): the launching line, else def. */
static void at_launch(struct fp__adv_finding *f, const struct fp__adv_kernel *k)
{
	const char *file;
	uint32_t line;

	if (k->site_file)
		fp__adv_at(f, k->site_file, k->site_line, "call path: the launch");
	else if (def_line(k, &file, &line))
		fp__adv_at(f, file, line, "ir: the kernel's def line");
}

/* The profile (index) whose node of `k` has PC samples, its node and its sample count. */
static bool pcs_node(const struct fp_advice *a, const struct fp__adv_kernel *k, size_t *src,
		     uint32_t *node, double *samples)
{
	size_t i;

	for (i = 0; i < a->nsrc; i++) {
		uint32_t n = i ? k->xnode[i - 1] : k->node;
		struct fp_calltree_value v;

		if (n == FP_CALLTREE_NONE || a->src[i].m_samples == FP_CALLTREE_NONE ||
		    fp_calltree_get(a->src[i].t, n, a->src[i].m_samples, &v) != FP_OK ||
		    v.is_string || v.total <= 0)
			continue;
		*src = i;
		*node = n;
		*samples = v.total;
		return true;
	}
	return false;
}

static double child_value(const struct fp__adv_src *s, uint32_t node, uint32_t metric)
{
	struct fp_calltree_value v;

	if (metric == FP_CALLTREE_NONE || fp_calltree_get(s->t, node, metric, &v) != FP_OK ||
	    v.is_string)
		return 0;
	return v.total;
}

/* The source line of `k` with the most samples of the stall reasons named (NULL-ended list;
 * NULL list: all samples). */
static bool pcs_line(struct fp_advice *a, const struct fp__adv_kernel *k, const char *const *why,
		     const char **file, uint32_t *line, double *share)
{
	double total, best = 0;
	uint32_t node, c, best_c = FP_CALLTREE_NONE;
	size_t si, len;
	const struct fp__adv_src *s;

	if (!pcs_node(a, k, &si, &node, &total))
		return false;
	s = &a->src[si];
	for (c = fp_calltree_node_first_child(s->t, node); c != FP_CALLTREE_NONE;
	     c = fp_calltree_node_next_sibling(s->t, c)) {
		double v = 0;
		size_t j, w;

		if (!why) {
			v = child_value(s, c, s->m_samples);
		} else {
			for (j = 0; j < s->nstall; j++) {
				const char *mn =
					fp_calltree_metric_name(s->t, s->stall[j], &len, NULL);

				for (w = 0; why[w]; w++)
					if (mn && !strcmp(mn + strlen("stalled_"), why[w]))
						v += child_value(s, c, s->stall[j]);
			}
		}
		if (v > best) {
			best = v;
			best_c = c;
		}
	}
	if (best_c == FP_CALLTREE_NONE)
		return false;
	{
		const char *name = fp_calltree_node_name(s->t, best_c, &len);

		if (!name || !fp__adv_split_frame(a, name, len, file, line))
			return false;
	}
	*share = best / total;
	return true;
}

static const char *pct(struct fp_advice *a, double v)
{
	char b[32];

	fp__adv_fmt(100 * v, b, sizeof(b));
	return fp__adv_str(a, "%s%%", b);
}

/* ---- roofline ------------------------------------------------------------------------------- */

void fp__adv_roofline(struct fp_advice *a, size_t rule, struct fp__adv_kernel *k)
{
	const struct fp_roofline_point *p = &k->rp;
	const char *sm_src = NULL, *mem_src = NULL, *bound;
	double sm = fp__adv_metric(a, k, FP__M_SM_PCT, &sm_src);
	double mem = fp__adv_metric(a, k, FP__M_MEM_PCT, &mem_src);
	double bw = NAN, fl = NAN, floor, reach;
	struct fp__adv_finding *f;
	char b1[32], b2[32], b3[32];
	const char *title, *sugg, *method;

	if (!k->rp_ok) {
		fp__adv_skip(a, rule, FP__NEED_TIME, 0, "%s has no kernel time", k->shown);
		return;
	}
	if (!p->peaks_known && isnan(sm) && isnan(mem)) {
		fp__adv_skip(a, rule, FP__NEED_GPU, 0, "%s",
			     k->pk.note[0] ? k->pk.note : "the device has no peaks");
		return;
	}
	if (p->peaks_known) {
		if (!isnan(p->byte_per_s))
			bw = 100 * p->byte_per_s / p->peak_bytes_per_s;
		if (!isnan(p->flop_per_s))
			fl = 100 * p->flop_per_s / p->peak_flops;
	}
	if (isnan(bw) && isnan(fl) && isnan(sm) && isnan(mem)) {
		fp__adv_skip(a, rule, FP__NEED_COUNTERS,
			     (1u << FP__M_DRAM_READ) | (1u << FP__M_DRAM_WRITE) |
				     (1u << FP__M_SM_PCT) | (1u << FP__M_MEM_PCT),
			     "%s: no work or traffic numbers (no counters, launch_metadata or "
			     "estimate)",
			     k->shown);
		return;
	}
	fp__adv_ran(a, rule);
	/* Counted throughputs (% of each unit's peak) decide first: they see every unit. */
	if (!isnan(sm) || !isnan(mem)) {
		double s = isnan(sm) ? 0 : sm, m = isnan(mem) ? 0 : mem;

		bound = m >= FP__ADV_SOL_HIGH                        ? "memory" :
			s >= FP__ADV_SOL_HIGH                        ? "compute" :
			(s < FP__ADV_SOL_LOW && m < FP__ADV_SOL_LOW) ? "latency" :
			m >= s                                       ? "memory" :
								       "compute";
		reach = FP_MAX(s, m) / 100;
	} else {
		double r = isnan(p->pct_of_roof) ? NAN : p->pct_of_roof / 100;

		bound = !isnan(r) && r * 100 < FP__ADV_SOL_LOW ? "latency" : p->bound;
		reach = r;
	}
	fp__adv_fmt(bw, b1, sizeof(b1));
	fp__adv_fmt(fl, b2, sizeof(b2));
	if (!isnan(bw) && !isnan(fl))
		title = fp__adv_str(a, "%s-bound: %s%% of peak DRAM bandwidth, %s%% of peak FLOP/s",
				    bound, b1, b2);
	else if (!isnan(bw))
		title = fp__adv_str(a, "%s-bound: %s%% of peak DRAM bandwidth", bound, b1);
	else if (!isnan(fl))
		title = fp__adv_str(a, "%s-bound: %s%% of peak FLOP/s", bound, b2);
	else
		title = fp__adv_str(a, "%s-bound (SM and memory throughput as counted)", bound);
	f = fp__adv_find(a, rule, kidx(a, k), FP__ADV_POSITION, title);
	if (!f)
		return;
	at_kernel(f, k);
	fp__adv_ev_num(a, "kernel time", k->ns, "ns", "tree");
	fp__adv_ev_num(a, "share of the kernel time", 100 * k->share, "%", "tree");
	if (!isnan(p->byte_per_s)) {
		fp__adv_ev_num(a, "DRAM traffic", p->bytes, "B",
			       fp_roofline_source_name(p->bytes_src));
		fp__adv_ev_num(a, "achieved bandwidth", p->byte_per_s, "B/s",
			       fp_roofline_source_name(p->bytes_src));
	}
	if (!isnan(bw))
		fp__adv_ev_num(a, "% of peak bandwidth", bw, "%", "device");
	if (!isnan(p->flop_per_s)) {
		fp__adv_ev_num(a, "work", p->flops, "FLOP", fp_roofline_source_name(p->flops_src));
		fp__adv_ev_num(a, "achieved FLOP/s", p->flop_per_s, "FLOP/s",
			       fp_roofline_source_name(p->flops_src));
	}
	if (!isnan(fl))
		fp__adv_ev_num(a, "% of peak FLOP/s", fl, "%", "device");
	if (!isnan(p->intensity)) {
		fp__adv_ev_num(a, "arithmetic intensity", p->intensity, "FLOP/B", "tree");
		fp__adv_ev_num(a, "ridge point", p->ridge, "FLOP/B", "device");
	}
	if (p->peaks_known) {
		fp__adv_ev_num(a, "peak bandwidth", p->peak_bytes_per_s, "B/s", "device");
		fp__adv_ev_num(a, "peak FLOP/s used", p->peak_flops, "FLOP/s", "device");
	}
	if (!isnan(sm))
		fp__adv_ev_num(a, "SM throughput", sm, "% of peak", sm_src);
	if (!isnan(mem))
		fp__adv_ev_num(a, "memory throughput", mem, "% of peak", mem_src);
	if (p->bytes_src == FP_ROOFLINE_ESTIMATE || p->flops_src == FP_ROOFLINE_ESTIMATE)
		fp__adv_ev_text(
			a, "note",
			"IR estimates: masked lanes count as loaded (an upper bound), loops "
			"with runtime bounds count once",
			"ir");
	floor = fp__adv_floor_ns(k);
	if (!isnan(floor)) {
		fp__adv_fmt_ns(floor, b3, sizeof(b3));
		method = fp__adv_str(a,
				     "time at %g%% of the roofline for the same work and traffic "
				     "(%s)",
				     100 * FP__ADV_ROOF_REACH, b3);
		fp__adv_saving(a, f, k->ns - floor, method);
	} else if (!isnan(reach) && reach > 0) {
		fp__adv_saving(a, f, k->ns * FP_MAX(0.0, 1 - reach / FP__ADV_ROOF_REACH),
			       "time if the busiest unit reached 80% of its peak (throughput % "
			       "scaled)");
	} else {
		fp__adv_saving(a, f, NAN, "not estimated: no roof for this kernel");
	}
	if (!strcmp(bound, "memory"))
		sugg = "it moves bytes at the device's pace: save bytes, not instructions. Fuse it "
		       "with its producer or consumer so intermediates stay in registers, load "
		       "narrower types (bf16, fp8) where precision allows, and keep loads "
		       "contiguous and wide (BLOCK along the stride-1 axis; tl.multiple_of / "
		       "tl.max_contiguous hints).";
	else if (!strcmp(bound, "compute"))
		sugg = "its math units are the limit: put the work on the tensor cores (tl.dot "
		       "with fp16/bf16 or fp8 inputs and a float32 accumulator), avoid float32 "
		       "elementwise products of narrow data, and replace exp/div with exp2 and "
		       "precomputed reciprocals.";
	else if (!strcmp(bound, "latency"))
		sugg = "neither memory nor math is near its peak: it waits. Put more work in "
		       "flight: more programs (smaller BLOCK, split-K), more warps (num_warps), "
		       "pipelined loads in loops (num_stages=3-4, or tl.range(..., "
		       "num_stages=)), TMA descriptors on Hopper (tl.make_tensor_descriptor).";
	else
		sugg = "collect hardware counters to tell memory from compute (see --plan).";
	f->suggestion = sugg;
}

/* ---- uncoalesced ------------------------------------------------------------------------------ */

void fp__adv_uncoalesced(struct fp_advice *a, size_t rule, struct fp__adv_kernel *k)
{
	static const char *const ld_stalls[] = {"long_scoreboard", "lg_throttle", NULL};
	const char *ssrc = NULL, *file, *title, *method;
	double sectors = fp__adv_metric(a, k, FP__M_LD_SECTORS, &ssrc);
	double req = fp__adv_metric(a, k, FP__M_LD_REQUESTS, NULL);
	double est = NAN, per = fp__adv_num(k->facts, FP_TTIR_FACT_BYTES);
	double ld = fp__adv_num(k->facts, FP_TTIR_FACT_LOAD_BYTES), ir_load = NAN;
	double ratio = NAN, spr = NAN, saving, share, floor_c = NAN;
	struct fp__adv_finding *f;
	uint32_t line;
	char b1[32], b2[32];

	if (isnan(sectors)) {
		fp__adv_skip(a, rule, FP__NEED_COUNTERS,
			     (1u << FP__M_LD_SECTORS) | (1u << FP__M_LD_REQUESTS),
			     "%s: no L1 global-load sector counts", k->shown);
		return;
	}
	{
		struct fp_calltree_value v;
		const struct fp__adv_src *s = &a->src[0];

		if (s->m_est_bytes != FP_CALLTREE_NONE &&
		    fp_calltree_get(s->t, k->node, s->m_est_bytes, &v) == FP_OK && !v.is_string)
			est = v.total;
	}
	if (!isnan(est) && !isnan(per) && per > 0 && !isnan(ld))
		ir_load = est * ld / per;
	if (!isnan(ir_load) && ir_load > 0)
		ratio = sectors * 32 / ir_load;
	if (!isnan(req) && req > 0)
		spr = sectors / req;
	fp__adv_ran(a, rule);
	if (!(ratio >= FP__ADV_EXCESS) && !(spr > FP__ADV_SECTORS_REQ))
		return;
	fp__adv_fmt(ratio, b1, sizeof(b1));
	fp__adv_fmt(spr, b2, sizeof(b2));
	title = !isnan(ratio) ? fp__adv_str(a,
					    "uncoalesced global loads: %sx the bytes the loads "
					    "read go through L1 (%s sectors per request)",
					    b1, b2) :
				fp__adv_str(a,
					    "uncoalesced global loads: %s sectors per request "
					    "(coalesced loads of <= 16 B per thread need <= 16)",
					    b2);
	f = fp__adv_find(a, rule, kidx(a, k), FP__ADV_CAUSE, title);
	if (!f)
		return;
	if (pcs_line(a, k, ld_stalls, &file, &line, &share)) {
		fp__adv_at(f, file, line, "pcsampling: most load stalls");
		fp__adv_ev_num(a, "load stalls on that line", 100 * share, "% of samples",
			       "pcsampling");
	} else if (fp__adv_loc(k->facts, FP_TTIR_FACT_TOP_LOAD_AT, &file, &line)) {
		fp__adv_at(f, file, line, "ir: the heaviest load");
	} else {
		at_kernel(f, k);
	}
	fp__adv_ev_num(a, "L1 global-load sectors", sectors, "", ssrc);
	if (!isnan(req))
		fp__adv_ev_num(a, "requests", req, "", ssrc);
	if (!isnan(spr))
		fp__adv_ev_num(a, "sectors per request", spr, "", ssrc);
	if (!isnan(ir_load)) {
		fp__adv_ev_num(a, "bytes the IR's loads read", ir_load, "B", "ir");
		fp__adv_ev_num(a, "sector bytes per byte read", ratio, "x", "ir");
	}
	if (fp__adv_num(k->facts, FP_TTIR_FACT_TOP_LOAD_BYTES) > 0)
		fp__adv_ev_num(a, "heaviest load, per program",
			       fp__adv_num(k->facts, FP_TTIR_FACT_TOP_LOAD_BYTES), "B", "ir");
	if (k->rp_ok && k->rp.peaks_known && !isnan(k->rp.flops))
		floor_c = k->rp.flops / k->rp.peak_flops * 1e9 / FP__ADV_ROOF_REACH;
	if (!isnan(ratio)) {
		saving = k->ns * (1 - 1 / ratio);
		method = "time scaled by the bytes read over the sector bytes moved (the kernel's "
			 "time follows its global-load traffic), capped at its compute roof";
	} else {
		saving = k->ns * (1 - FP__ADV_SECTORS_REQ / spr);
		method = "time scaled by 16 over the sectors per request (the most a coalesced "
			 "load of <= 16 B per thread needs): a lower bound";
	}
	if (!isnan(floor_c))
		saving = FP_MIN(saving, k->ns - floor_c);
	fp__adv_saving(a, f, saving, method);
	f->suggestion =
		"make the load's stride-1 axis the fastest-varying one of the block: offsets "
		"along the contiguous dimension in the last axis (ptr + rm[:, None] * stride + "
		"rk[None, :] with stride-1 rk), load the tile as it lies and use tl.trans() (or "
		"the transposed operand of tl.dot) instead of loading it transposed, or pass a "
		"contiguous copy; on Hopper a TMA descriptor (tl.make_tensor_descriptor) loads "
		"whole tiles.";
}

/* ---- spills --------------------------------------------------------------------------------- */

void fp__adv_spills(struct fp_advice *a, size_t rule, struct fp__adv_kernel *k)
{
	const char *lsrc = NULL, *file, *title;
	double spill = compiled(k, FP_TTIR_FACT_SPILL_BYTES);
	double regs = compiled(k, FP_TTIR_FACT_REGISTERS);
	double warps = compiled(k, FP_TTIR_FACT_NUM_WARPS);
	double lld = fp__adv_metric(a, k, FP__M_LOCAL_LD_SECTORS, &lsrc);
	double lst = fp__adv_metric(a, k, FP__M_LOCAL_ST_SECTORS, NULL);
	double glob = fp__adv_metric(a, k, FP__M_LD_SECTORS, NULL);
	double local = NAN, tile = fp__adv_num(k->facts, FP_TTIR_FACT_TOP_TILE_BYTES);
	struct fp__adv_finding *f;
	uint32_t line;
	char b1[32], b2[32];

	if (!isnan(lld) || !isnan(lst))
		local = (isnan(lld) ? 0 : lld) + (isnan(lst) ? 0 : lst);
	if (isnan(regs))
		regs = fp__adv_metric(a, k, FP__M_REGS, NULL);
	if (isnan(spill) && isnan(local)) {
		fp__adv_skip(a, rule, FP__NEED_COMPILED | FP__NEED_COUNTERS,
			     (1u << FP__M_LOCAL_LD_SECTORS) | (1u << FP__M_LOCAL_ST_SECTORS),
			     "%s: neither the compiled kernel's local memory nor local-memory "
			     "counters",
			     k->shown);
		return;
	}
	fp__adv_ran(a, rule);
	if (!(spill > 0) && !(local > 0))
		return;
	if (spill > 0) {
		fp__adv_fmt_bytes(spill, b1, sizeof(b1));
		fp__adv_fmt(regs, b2, sizeof(b2));
		title = fp__adv_str(a,
				    "registers spill to local memory: %s per thread (%s registers "
				    "per thread)",
				    b1, b2);
	} else {
		fp__adv_fmt(local, b1, sizeof(b1));
		title = fp__adv_str(a,
				    "local-memory traffic: %s sectors (spills or dynamically "
				    "indexed arrays)",
				    b1);
	}
	f = fp__adv_find(a, rule, kidx(a, k), FP__ADV_CAUSE, title);
	if (!f)
		return;
	if (fp__adv_loc(k->facts, FP_TTIR_FACT_TOP_TILE_AT, &file, &line))
		fp__adv_at(f, file, line, "ir: the largest tensor");
	else
		at_kernel(f, k);
	if (!isnan(spill))
		fp__adv_ev_num(a, "local memory per thread", spill, "B", "compiled");
	if (!isnan(regs))
		fp__adv_ev_num(a, "registers per thread", regs, "", "compiled");
	if (!isnan(warps))
		fp__adv_ev_num(a, "num_warps", warps, "", "compiled");
	if (!isnan(local))
		fp__adv_ev_num(a, "local-memory sectors", local, "", lsrc);
	if (!isnan(tile)) {
		fp__adv_ev_num(a, "largest tensor, per program", tile, "B", "ir");
		if (!isnan(warps) && warps > 0)
			fp__adv_ev_num(a, "largest tensor, per thread", tile / (warps * 32), "B",
				       "ir");
	}
	if (!isnan(local) && !isnan(glob) && local + glob > 0)
		fp__adv_saving(a, f, fp__adv_cap(k, k->ns * local / (local + glob)),
			       "time scaled by local sectors over all L1 load/store sectors (the "
			       "spill traffic's share of the memory work), capped at the roofline");
	else
		fp__adv_saving(a, f, NAN,
			       "not estimated: needs local- and global-memory sector counts (see "
			       "--plan)");
	f->suggestion = fp__adv_str(
		a,
		"give each thread less to hold: a smaller BLOCK_* (the largest tensor is %s per "
		"program), more warps per program (num_warps=%g) so the tile is spread over more "
		"threads, or a smaller BLOCK_K in a K loop; capping registers (maxnreg) only moves "
		"the spill.",
		isnan(tile) ? "unknown" : (fp__adv_fmt_bytes(tile, b1, sizeof(b1)), b1),
		isnan(warps) ? 8.0 : FP_MIN(warps * 2, 32.0));
}

/* ---- occupancy ------------------------------------------------------------------------------- */

void fp__adv_occupancy_rule(struct fp_advice *a, size_t rule, struct fp__adv_kernel *k)
{
	const char *rsrc = "compiled", *wsrc = "compiled", *ssrc = "compiled", *asrc = NULL;
	double warps = compiled(k, FP_TTIR_FACT_NUM_WARPS),
	       regs = compiled(k, FP_TTIR_FACT_REGISTERS);
	double shared = compiled(k, FP_TTIR_FACT_SHARED_BYTES), stages = NAN;
	double achieved = fp__adv_metric(a, k, FP__M_WARPS_ACTIVE_PCT, &asrc);
	double sm = fp__adv_metric(a, k, FP__M_SM_PCT, NULL),
	       mem = fp__adv_metric(a, k, FP__M_MEM_PCT, NULL);
	double busy = NAN, saving, fl;
	const char *busy_src = "counters";
	struct fp__adv_occ occ;
	struct fp__adv_finding *f;
	char b1[32], b2[32];
	const char *title;

	if (!k->gpu) {
		fp__adv_skip(a, rule, FP__NEED_GPU, 0,
			     "%s: no occupancy limits for this device (%s)", k->shown,
			     k->pk.arch[0] ? k->pk.arch :
					     (k->dev_type ? k->dev_type : "no device"));
		return;
	}
	if (isnan(warps)) {
		warps = fp__adv_metric(a, k, FP__M_BLOCK, &wsrc) / 32;
	}
	if (isnan(regs))
		regs = fp__adv_metric(a, k, FP__M_REGS, &rsrc);
	if (isnan(shared))
		shared = fp__adv_metric(a, k, FP__M_SHARED_BLOCK, &ssrc);
	stages = compiled(k, FP_TTIR_FACT_NUM_STAGES);
	if (isnan(warps) || isnan(regs)) {
		fp__adv_skip(a, rule, FP__NEED_COMPILED, 0,
			     "%s: registers or warps per program unknown (no compiled kernel, no "
			     "ncu launch statistics)",
			     k->shown);
		return;
	}
	if (!fp__adv_occupancy(k->gpu, warps, regs, shared, &occ)) {
		fp__adv_skip(a, rule, FP__NEED_COMPILED, 0,
			     "%s: %g warps and %g registers per thread are outside the "
			     "architecture's limits",
			     k->shown, warps, regs);
		return;
	}
	fp__adv_ran(a, rule);
	if (!isnan(sm) || !isnan(mem))
		busy = FP_MAX(isnan(sm) ? 0 : sm, isnan(mem) ? 0 : mem);
	else if (k->rp_ok && !isnan(k->rp.pct_of_roof)) {
		busy = k->rp.pct_of_roof;
		busy_src = "roofline";
	}
	if (!(occ.occupancy < FP__ADV_OCC_LOW) ||
	    (strcmp(occ.limiter, "registers") && strcmp(occ.limiter, "shared memory")) ||
	    busy >= FP__ADV_SOL_HIGH)
		return;
	fp__adv_fmt(100 * occ.occupancy, b1, sizeof(b1));
	title = fp__adv_str(a,
			    "occupancy limited by %s: %s%% of the SM's warps (%g block%s of %g "
			    "warps per SM)",
			    occ.limiter, b1, occ.blocks, occ.blocks == 1 ? "" : "s", warps);
	f = fp__adv_find(a, rule, kidx(a, k), FP__ADV_CAUSE, title);
	if (!f)
		return;
	at_launch(f, k);
	fp__adv_ev_num(a, "theoretical occupancy", 100 * occ.occupancy, "%", "device");
	fp__adv_ev_text(a, "limited by", occ.limiter, "device");
	fp__adv_ev_num(a, "registers per thread", regs, "", rsrc);
	fp__adv_ev_num(a, "warps per program", warps, "", wsrc);
	if (!isnan(shared))
		fp__adv_ev_num(a, "shared memory per program", shared, "B", ssrc);
	if (!isnan(stages))
		fp__adv_ev_num(a, "num_stages", stages, "", "compiled");
	if (!isnan(achieved))
		fp__adv_ev_num(a, "achieved occupancy", achieved, "%", asrc);
	if (!isnan(busy))
		fp__adv_ev_num(a, "busiest unit", busy, "% of peak", busy_src);
	fp__adv_ev_text(a, "architecture", k->gpu->name, "device");
	saving = k->ns * (1 - occ.occupancy / occ.next_occupancy);
	fl = fp__adv_cap(k, saving);
	fp__adv_fmt(100 * occ.next_occupancy, b2, sizeof(b2));
	fp__adv_saving(a, f, fl,
		       fp__adv_str(a,
				   "a latency-bound kernel's time scales with the warps in flight: "
				   "time x occupancy / %s%% (the next limit), capped at the "
				   "roofline; an upper bound",
				   b2));
	if (!strcmp(occ.limiter, "registers"))
		f->suggestion = fp__adv_str(
			a,
			"use fewer registers per thread: a smaller BLOCK_* (fewer elements per "
			"thread), or num_warps=%g so each thread holds half as much; fewer live "
			"values in a loop (accumulate in place). Check that the kernel then does "
			"not spill.",
			FP_MIN(warps * 2, 32.0));
	else
		f->suggestion = fp__adv_str(
			a,
			"use less shared memory per program: num_stages=%g (each stage buffers a "
			"tile of every pipelined load) or a smaller BLOCK_K / BLOCK_N.",
			isnan(stages) ? 2.0 : FP_MAX(1.0, stages - 1));
}

/* ---- tail effect ----------------------------------------------------------------------------- */

void fp__adv_tail(struct fp_advice *a, size_t rule, struct fp__adv_kernel *k)
{
	const char *msrc = "device", *title;
	double sms = k->num_sms, p = k->programs, bps = NAN, waves, full, idle, saving;
	double warps = compiled(k, FP_TTIR_FACT_NUM_WARPS),
	       regs = compiled(k, FP_TTIR_FACT_REGISTERS);
	struct fp__adv_occ occ;
	struct fp__adv_finding *f;
	char b1[32], b2[32];
	bool small;

	if (isnan(sms))
		sms = fp__adv_metric(a, k, FP__M_SMS, &msrc);
	if (isnan(p)) {
		fp__adv_skip(a, rule, FP__NEED_TRACE, 0,
			     "%s: programs per launch unknown (no trace grid, ncu grid size or IR "
			     "estimate)",
			     k->shown);
		return;
	}
	if (isnan(sms) || sms <= 0) {
		fp__adv_skip(a, rule, FP__NEED_GPU, 0, "%s: the device's SM count is unknown (%s)",
			     k->shown, k->dev_type ? k->dev_type : "no device");
		return;
	}
	if (isnan(warps))
		warps = fp__adv_metric(a, k, FP__M_BLOCK, NULL) / 32;
	if (isnan(regs))
		regs = fp__adv_metric(a, k, FP__M_REGS, NULL);
	if (k->gpu &&
	    fp__adv_occupancy(k->gpu, warps, regs, compiled(k, FP_TTIR_FACT_SHARED_BYTES), &occ))
		bps = occ.blocks;
	fp__adv_ran(a, rule);
	small = p < sms;
	if (small) {
		idle = 1 - p / sms;
		waves = NAN;
	} else {
		if (isnan(bps) || bps < 1)
			return; /* a wave's size needs the blocks per SM */
		waves = p / (sms * bps);
		full = ceil(waves);
		idle = (full - waves) / full;
		/* less than one wave of at least one program per SM idles no SM (the scheduler
		 * spreads them): lower occupancy, the occupancy rule's business; past 4 waves
		 * the tail is a small part */
		if (full < 2 || full > 4 || idle < FP__ADV_TAIL)
			return;
	}
	if (small && idle < FP__ADV_TAIL)
		return;
	fp__adv_fmt(p, b1, sizeof(b1));
	fp__adv_fmt(sms, b2, sizeof(b2));
	title = small ? fp__adv_str(a, "grid of %s programs on %s SMs: %s of the SMs stay idle", b1,
				    b2, pct(a, idle)) :
			fp__adv_str(a,
				    "tail effect: %s programs make %.2f waves on %s SMs; the last "
				    "wave leaves SMs idle for up to %s of the launch",
				    b1, waves, b2, pct(a, idle));
	f = fp__adv_find(a, rule, kidx(a, k), FP__ADV_CAUSE, title);
	if (!f)
		return;
	at_launch(f, k);
	fp__adv_ev_num(a, "programs per launch", p, "", k->programs_src);
	fp__adv_ev_num(a, "SMs", sms, "", msrc);
	if (!isnan(bps))
		fp__adv_ev_num(a, "blocks per SM", bps, "", "device");
	if (!isnan(waves))
		fp__adv_ev_num(a, "waves", waves, "", "device");
	saving = fp__adv_cap(k, k->ns * idle);
	fp__adv_saving(a, f, saving,
		       small ? "time if the same work were spread over every SM (time x programs "
			       "/ SMs), capped at the roofline" :
			       "time if every wave were full (time x waves / ceil(waves)), capped "
			       "at the roofline");
	if (small)
		f->suggestion = fp__adv_str(
			a,
			"give each program less work so that the grid covers the GPU: a smaller "
			"BLOCK (more programs), split the reduction axis over programs (a second "
			"pass, or tl.atomic_add of partial results: split-K), or loop a persistent "
			"kernel over tiles with a grid of %s programs.",
			b2);
	else
		f->suggestion = fp__adv_str(
			a,
			"make the programs fill whole waves: choose BLOCK so the grid is a multiple "
			"of %g (SMs x blocks per SM), or loop a persistent kernel over tiles with "
			"that many programs.",
			sms * bps);
}

/* ---- stall reasons per line ------------------------------------------------------------------- */

struct reason_advice {
	const char *reason, *what, *fix;
};

static const struct reason_advice reasons[] = {
	{"long_scoreboard", "waits for global or local memory (an L1TEX result)",
	 "pipeline the loads: num_stages=3 or 4 for the loop (or tl.range(..., num_stages=)), "
	 "issue the next tile's loads before using this one, and check that they are coalesced; "
	 "on Hopper, TMA descriptors (tl.make_tensor_descriptor)"},
	{"barrier", "waits at a barrier for the program's other warps",
	 "less synchronisation: fewer warps per program (num_warps), reductions along one "
	 "warp's axis, no tl.debug_barrier in the loop, more work between barriers"},
	{"mio_throttle", "the memory input/output queue is full (shared memory, special math)",
	 "fewer shared-memory round trips: larger tiles per tl.dot, no layout conversions "
	 "(tl.trans, tl.reshape) inside the loop"},
	{"short_scoreboard", "waits for shared memory or a special-function result",
	 "keep values in registers, fewer layout conversions, exp2 with a scaled input instead "
	 "of exp, precomputed reciprocals instead of division"},
	{"math_pipe_throttle", "a math pipe is saturated",
	 "move the work to the tensor cores (tl.dot with 16-bit inputs) or to a narrower type; "
	 "fewer exp/div (exp2, reciprocals)"},
	{"lg_throttle", "the queue of global-memory instructions is full",
	 "fewer, wider accesses: contiguous offsets (tl.multiple_of, tl.max_contiguous), a "
	 "larger BLOCK per program, no per-element loops of tl.load"},
	{"wait", "waits on fixed-latency dependencies",
	 "more independent work per thread: a larger BLOCK per program, several accumulators"},
	{"no_instructions", "waits for instructions (instruction cache, branch targets)",
	 "less code: a constexpr loop unrolled too far, too many specialisations in one kernel"},
	{"branch_resolving", "resolves divergent branches",
	 "replace data-dependent `if` with tl.where and masks"},
	{"imc_miss", "misses the constant cache",
	 "scalar arguments indexed per thread: pass them as a tensor"},
	{"membar", "waits at a memory fence (atomics, tl.debug_barrier)",
	 "fewer fences: accumulate in registers and issue one tl.atomic_* per program"},
	{"drain", "drains memory stores at exit", "fewer, wider stores"},
	{"tex_throttle", "the texture/L1 pipe is saturated",
	 "fewer, wider global accesses; gather less"},
	{"dispatch_stall", "the dispatcher stalled", "see the Nsight Compute stall reasons"},
	{"sleeping", "sleeps (nanosleep, yield)", "see the Nsight Compute stall reasons"},
	{"misc", "misc stall", "see the Nsight Compute stall reasons"},
};

static const struct reason_advice *reason_of(const char *r)
{
	size_t i;

	for (i = 0; i < FP_ARRAY_SIZE(reasons); i++)
		if (!strcmp(reasons[i].reason, r))
			return &reasons[i];
	return NULL;
}

struct hot {
	uint32_t child;
	const char *reason;
	double count, line_samples;
};

static int by_count(const void *x, const void *y)
{
	const struct hot *p = x, *q = y;

	if (p->count != q->count)
		return p->count > q->count ? -1 : 1;
	return p->child < q->child ? -1 : p->child > q->child;
}

void fp__adv_stall(struct fp_advice *a, size_t rule, struct fp__adv_kernel *k)
{
	struct hot hot[64];
	size_t nhot = 0, si, i, j, len;
	double total;
	uint32_t node, c;
	const struct fp__adv_src *s;

	if (!pcs_node(a, k, &si, &node, &total)) {
		fp__adv_skip(a, rule, FP__NEED_PCS, 0, "%s: no PC samples", k->shown);
		return;
	}
	fp__adv_ran(a, rule);
	s = &a->src[si];
	for (c = fp_calltree_node_first_child(s->t, node); c != FP_CALLTREE_NONE;
	     c = fp_calltree_node_next_sibling(s->t, c)) {
		double lines = child_value(s, c, s->m_samples), best = 0;
		const char *br = NULL;

		if (lines < FP__ADV_LINE_SHARE * total)
			continue;
		for (j = 0; j < s->nstall; j++) {
			const char *mn = fp_calltree_metric_name(s->t, s->stall[j], &len, NULL);
			double v = child_value(s, c, s->stall[j]);

			if (!mn || !strcmp(mn, "stalled_selected") ||
			    !strcmp(mn, "stalled_not_selected"))
				continue;
			if (v > best) {
				best = v;
				br = mn + strlen("stalled_");
			}
		}
		if (!br || best < FP__ADV_STALL_SHARE * lines || nhot == FP_ARRAY_SIZE(hot))
			continue;
		hot[nhot].child = c;
		hot[nhot].reason = br;
		hot[nhot].count = best;
		hot[nhot++].line_samples = lines;
	}
	qsort(hot, nhot, sizeof(*hot), by_count);
	for (i = 0; i < nhot && i < FP__ADV_MAX_LINES; i++) {
		const struct reason_advice *ra = reason_of(hot[i].reason);
		const char *name = fp_calltree_node_name(s->t, hot[i].child, &len), *file = NULL;
		struct fp__adv_finding *f;
		uint32_t line = 0;
		char b1[32];

		fp__adv_fmt(100 * hot[i].count / hot[i].line_samples, b1, sizeof(b1));
		f = fp__adv_find(
			a, rule, kidx(a, k), FP__ADV_CAUSE,
			fp__adv_str(a, "stall on %.*s: %s (%s%% of the line's samples): %s",
				    (int)len, name, hot[i].reason, b1,
				    ra ? ra->what : "see the Nsight Compute stall reasons"));
		if (!f)
			return;
		if (fp__adv_split_frame(a, name, len, &file, &line))
			fp__adv_at(f, file, line, "pcsampling");
		fp__adv_ev_num(a, "samples on the line", hot[i].line_samples, "", "pcsampling");
		fp__adv_ev_num(a, "line's share of the kernel's samples",
			       100 * hot[i].line_samples / total, "%", "pcsampling");
		fp__adv_ev_num(a, fp__adv_str(a, "stalled_%s", hot[i].reason), hot[i].count, "",
			       "pcsampling");
		fp__adv_saving(
			a, f, fp__adv_cap(k, k->ns * hot[i].count / total),
			"time x the share of the kernel's samples stalled for this reason on "
			"this line (an upper bound: another stall may take its place), capped "
			"at the roofline");
		f->suggestion = ra ? ra->fix : "see the Nsight Compute stall reasons";
	}
}

/* ---- float32 math on narrow data --------------------------------------------------------------- */

void fp__adv_half_math(struct fp_advice *a, size_t rule, struct fp__adv_kernel *k)
{
	double wdf = fp__adv_num(k->facts, FP_TTIR_FACT_WIDENED_DOT_FLOPS);
	double df = fp__adv_num(k->facts, FP_TTIR_FACT_DOT_FLOPS);
	double wmf = fp__adv_num(k->facts, FP_TTIR_FACT_WIDENED_MUL_FLOPS);
	double f32 = fp__adv_num(k->facts, FP_TTIR_FACT_FP32_FLOPS);
	double tot = fp__adv_num(k->facts, FP_TTIR_FACT_TOTAL_FLOPS);
	const char *from = NULL, *prec = NULL, *file, *key, *title, *method;
	double p_now = NAN, p_new = NAN, w, t_now, t_new, t_mem = 0, saving = NAN;
	bool dot, mul;
	struct fp__adv_finding *f;
	uint32_t line;
	char b1[32];

	if (!k->facts) { /* a library's kernel (no IR to judge) never gets here */
		fp__adv_skip(a, rule, FP__NEED_FACTS, 0,
			     "%s: no IR facts (no meta file, estimates off, or not a Triton "
			     "kernel)",
			     k->shown);
		return;
	}
	fp__adv_ran(a, rule);
	dot = wdf > 0 && wdf >= FP__ADV_WIDENED * df;
	mul = !dot && (isnan(df) || df == 0) && wmf > 0 && wmf >= FP__ADV_WIDENED * f32;
	if (!dot && !mul)
		return;
	from = fp_json_string(fp_json_get(k->facts, FP_TTIR_FACT_WIDENED_FROM), NULL);
	prec = fp_json_string(fp_json_get(k->facts, FP_TTIR_FACT_PRECISION), NULL);
	if (!from)
		from = "16-bit";
	if (dot)
		title = fp__adv_str(a,
				    "tl.dot on float32 operands converted from %s (input precision "
				    "%s): the %s tensor cores could take the narrow inputs",
				    from, prec ? prec : "unknown", from);
	else
		title = fp__adv_str(a,
				    "float32 products of %s data without tl.dot: %s of the "
				    "kernel's float32 FLOPs",
				    from, pct(a, wmf / f32));
	f = fp__adv_find(a, rule, kidx(a, k), FP__ADV_CAUSE, title);
	if (!f)
		return;
	key = dot ? FP_TTIR_FACT_WIDENED_DOT_AT : FP_TTIR_FACT_WIDENED_MUL_AT;
	if (fp__adv_loc(k->facts, key, &file, &line))
		fp__adv_at(f, file, line, dot ? "ir: the dot" : "ir: the widened product");
	else
		at_kernel(f, k);
	if (dot) {
		fp__adv_ev_num(a, "widened dot FLOPs per program", wdf, "FLOP", "ir");
		fp__adv_ev_num(a, "share of the kernel's dot FLOPs", 100 * wdf / df, "%", "ir");
		if (prec)
			fp__adv_ev_text(a, "input precision", prec, "ir");
	} else {
		fp__adv_ev_num(a, "widened float32 FLOPs per program", wmf, "FLOP", "ir");
		fp__adv_ev_num(a, "float32 FLOPs per program", f32, "FLOP", "ir");
	}
	fp__adv_ev_text(a, "narrow type", from, "ir");
	/* The saving: a roofline model of the kernel with the widened work at the rate it runs now
	 * and at the narrow type's tensor rate. */
	if (k->pk.known) {
		p_new = !strcmp(from, "fp8") ? k->pk.flops[0] : k->pk.flops[1];
		if (!dot || (prec && !strcmp(prec, "ieee")))
			p_now = k->fp32_peak;
		else if (prec && !strcmp(prec, "tf32"))
			p_now = k->pk.flops[2];
		else if (prec && !strcmp(prec, "tf32x3"))
			p_now = k->pk.flops[2] / 3;
	}
	w = dot ? wdf : wmf;
	if (!isnan(p_now) && !isnan(p_new) && k->rp_ok && !isnan(k->rp.flops) && tot > 0) {
		double total = w / tot * k->rp.flops; /* the widened work of every launch */

		if (!isnan(k->rp.bytes) && k->rp.peaks_known)
			t_mem = k->rp.bytes / k->rp.peak_bytes_per_s;
		t_now = FP_MAX(total / p_now, t_mem);
		t_new = FP_MAX(total / p_new, t_mem);
		saving = t_now > 0 ? k->ns * (1 - t_new / t_now) : NAN;
		fp__adv_ev_num(a, "peak now", p_now, "FLOP/s", "device");
		fp__adv_ev_num(a, "peak with narrow inputs", p_new, "FLOP/s", "device");
		fp__adv_fmt(p_new / p_now, b1, sizeof(b1));
		method = fp__adv_str(a,
				     "roofline model of the widened work at the current peak and "
				     "at the %s tensor peak (%sx), against the kernel's DRAM time",
				     from, b1);
	} else {
		method =
			k->pk.known ?
				"not estimated: the kernel's work in FLOPs or the peaks are unknown" :
				"not estimated on this device (no peaks): on an H100 the 16-bit "
				"tensor peak is 2x tf32's and about 15x the FP32 CUDA cores'";
	}
	fp__adv_saving(a, f, saving, method);
	f->suggestion =
		dot ? "pass the narrow tiles to tl.dot as they are loaded (acc = tl.dot(a, b, acc) "
		      "with a float32 accumulator; out_dtype=tl.float32 is the default) instead of "
		      "converting them with .to(tl.float32) first; a tl.sum(a[:, :, None] * "
		      "b[None, :, :], axis=1) is such a dot too." :
		      "compute the product with tl.dot on the narrow inputs if it is a contraction "
		      "(a[:, :, None] * b[None, :, :] summed over an axis), or multiply in the "
		      "narrow type and convert the result once.";
}

/* ---- the autotuner ------------------------------------------------------------------------------ */

static double median_ms(const struct fp_json_value *cfg)
{
	double v;

	if (!fp_json_number(fp_json_at(fp_json_get(cfg, "ms"), 0), &v) || !isfinite(v))
		return NAN;
	return v;
}

static const char *config_text(struct fp_advice *a, const struct fp_json_value *cfg)
{
	const struct fp_json_value *c = fp_json_get(cfg, "config");
	char buf[512], num[32];
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < fp_json_len(c) && used + 1 < sizeof(buf); i++) {
		const char *key;
		const struct fp_json_value *v = fp_json_member(c, i, &key, NULL);
		const char *s = fp_json_string(v, NULL);
		double d;
		int n;

		if (!s) {
			if (!fp_json_number(v, &d))
				continue;
			fp__adv_fmt(d, num, sizeof(num));
			s = num;
		}
		n = snprintf(buf + used, sizeof(buf) - used, "%s%s=%s", used ? " " : "", key, s);
		if (n < 0)
			break;
		used = FP_MIN(used + (size_t)n, sizeof(buf) - 1);
	}
	return fp__adv_str(a, "%s", buf[0] ? buf : "(empty config)");
}

void fp__adv_autotune(struct fp_advice *a, size_t rule, struct fp__adv_kernel *k)
{
	const struct fp_json_value *cs, *chosen_cfg, *best_cfg;
	double best = INFINITY, worst = -INFINITY, chosen_ms = NAN, bench;
	size_t n, i, best_i = SIZE_MAX, timed = 0;
	uint64_t chosen = UINT64_MAX;
	struct fp__adv_finding *f;
	char b1[32], b2[32];

	for (i = 0; i < kidx(a, k); i++)
		if (k->autotune && a->kernels[i].autotune && !strcmp(a->kernels[i].name, k->name)) {
			fp__adv_ran(a, rule); /* said once, on the kernel's heaviest node */
			return;
		}
	if (!k->autotune) {
		if (!a->src[0].meta)
			fp__adv_skip(a, rule, FP__NEED_FACTS, 0,
				     "no meta file: autotuners unknown");
		else
			fp__adv_ran(a, rule); /* not autotuned, or never benchmarked */
		return;
	}
	fp__adv_ran(a, rule);
	cs = fp_json_get(k->autotune, "configs");
	n = fp_json_len(cs);
	fp_json_uint64(fp_json_get(k->autotune, "chosen"), &chosen);
	for (i = 0; i < n; i++) {
		double v = median_ms(fp_json_at(cs, i));

		if (isnan(v))
			continue;
		timed++;
		if (v < best) {
			best = v;
			best_i = i;
		}
		worst = FP_MAX(worst, v);
	}
	if (best_i == SIZE_MAX)
		return;
	best_cfg = fp_json_at(cs, best_i);
	chosen_cfg = chosen < n ? fp_json_at(cs, (size_t)chosen) : NULL;
	chosen_ms = chosen_cfg ? median_ms(chosen_cfg) : NAN;

	/* 1: the config it runs is not the fastest it measured */
	if (chosen_cfg && !isnan(chosen_ms) && chosen_ms > best && chosen != best_i) {
		fp__adv_fmt(chosen_ms, b1, sizeof(b1));
		fp__adv_fmt(best, b2, sizeof(b2));
		f = fp__adv_find(
			a, rule, kidx(a, k), FP__ADV_CAUSE,
			fp__adv_str(a,
				    "the autotuner runs %s (%s ms) but measured %s faster (%s "
				    "ms)",
				    config_text(a, chosen_cfg), b1, config_text(a, best_cfg), b2));
		if (!f)
			return;
		at_kernel(f, k);
		fp__adv_ev_num(a, "chosen config, median", chosen_ms, "ms", "autotune");
		fp__adv_ev_num(a, "fastest config, median", best, "ms", "autotune");
		fp__adv_saving(a, f, k->ns * (1 - best / chosen_ms),
			       "time x (1 - fastest / chosen median), as the autotuner measured "
			       "them");
		f->suggestion =
			"the choice came from a cache (cache_results, a key that matched "
			"another shape) or a pruning model: re-tune for this shape (add the "
			"arguments that change it to key=) or pin the faster config.";
	}
	/* 2: the fastest config is at the edge of a parameter's measured range (when the configs
	 * differ at all: in a flat space the edge is noise) */
	if (!(timed >= 3 && (worst - best) / best < FP__ADV_TUNE_FLAT)) {
		const struct fp_json_value *bc = fp_json_get(best_cfg, "config");

		for (i = 0; i < fp_json_len(bc); i++) {
			const char *key;
			const struct fp_json_value *bv = fp_json_member(bc, i, &key, NULL);
			double v, lo = INFINITY, hi = -INFINITY, x, vals[64];
			size_t j, nv = 0, m;

			if (fp_json_type(bv) != FP_JSON_NUMBER || !fp_json_number(bv, &v))
				continue;
			for (j = 0; j < n; j++) {
				if (!fp_json_number(
					    fp_json_get(fp_json_get(fp_json_at(cs, j), "config"),
							key),
					    &x))
					continue;
				for (m = 0; m < nv && vals[m] != x; m++)
					;
				if (m == nv && nv < FP_ARRAY_SIZE(vals))
					vals[nv++] = x;
				lo = FP_MIN(lo, x);
				hi = FP_MAX(hi, x);
			}
			if (nv < 3 || (v != hi && v != lo))
				continue;
			fp__adv_fmt(v, b1, sizeof(b1));
			f = fp__adv_find(
				a, rule, kidx(a, k), FP__ADV_CAUSE,
				fp__adv_str(a,
					    "the fastest config has the %s %s measured (%s): "
					    "the best may lie beyond",
					    v == hi ? "largest" : "smallest", key, b1));
			if (!f)
				return;
			at_kernel(f, k);
			fp__adv_ev_num(a, "configs measured", (double)timed, "", "autotune");
			fp__adv_ev_num(a, fp__adv_str(a, "distinct %s", key), (double)nv, "",
				       "autotune");
			fp__adv_ev_num(a, "fastest, median", best, "ms", "autotune");
			fp__adv_ev_text(a, "fastest config", config_text(a, best_cfg), "autotune");
			fp__adv_saving(a, f, NAN, "not estimated: outside the measured range");
			f->suggestion = fp__adv_str(a,
						    "add configs with %s %s %s to the autotuner's "
						    "list (triton.Config) and keep the best.",
						    key, v == hi ? "above" : "below", b1);
			break; /* one parameter is enough to say it */
		}
	}
	/* 3: every config within a few percent: tuning buys nothing */
	bench = fp__adv_num(k->autotune, "bench_s");
	if (timed >= 3 && (worst - best) / best < FP__ADV_TUNE_FLAT) {
		f = fp__adv_find(
			a, rule, kidx(a, k), FP__ADV_CAUSE,
			fp__adv_str(a,
				    "all %zu measured configs are within %s of each other: "
				    "tuning buys nothing here",
				    timed, pct(a, (worst - best) / best)));
		if (!f)
			return;
		at_kernel(f, k);
		fp__adv_ev_num(a, "fastest, median", best, "ms", "autotune");
		fp__adv_ev_num(a, "slowest, median", worst, "ms", "autotune");
		if (!isnan(bench))
			fp__adv_ev_num(a, "benchmarking time", bench * 1e9, "ns", "autotune");
		fp__adv_saving(a, f, isnan(bench) ? NAN : bench * 1e9,
			       isnan(bench) ? "not estimated: the benchmarking time is unknown" :
					      "the autotuner's benchmarking time (host wall time, "
					      "as Triton measured it), spent again for every new "
					      "key");
		f->suggestion =
			fp__adv_str(a,
				    "pin one config (%s) and drop @triton.autotune, or keep "
				    "fewer configs (prune_configs_by); cache_results=True "
				    "keeps the choice across runs.",
				    config_text(a, best_cfg));
	}
}
