/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the advice's files share (include/flagprism/advise.h is the interface): the advice
 * object, the evidence of one kernel gathered from every profile given, the rule table's row,
 * the helpers rules call to record findings and say why they could not run, and the table of
 * GPU architectures. advise.c builds the context and runs the table; advise-kernel.c holds the
 * per-kernel rules, advise-run.c the rules about the whole run (and the trace they read),
 * advise-gpu.c the architecture table and occupancy, advise-write.c the text, plan and JSON.
 * Not a public header.
 */
#ifndef FP_ADVISE_INTERNAL_H
#define FP_ADVISE_INTERNAL_H

#include <math.h>

#include <flagprism/advise.h>
#include <flagprism/calltree.h>
#include <flagprism/json.h>
#include <flagprism/roofline.h>
#include <flagprism/view.h>

#include "core/arena-internal.h"

/* ---- thresholds (docs/guide/advise.md lists each with its source) ---------------------------- */

#define FP__ADV_SOL_LOW 60.0     /* % of peak: below on both units, latency-bound */
#define FP__ADV_SOL_HIGH 80.0    /* % of peak: at or above, bound by that unit */
#define FP__ADV_ROOF_REACH 0.8   /* share of the roof a tuned kernel reaches: saving floor */
#define FP__ADV_EXCESS 2.0       /* sector bytes per byte the IR names: uncoalesced */
#define FP__ADV_SECTORS_REQ 16.0 /* sectors per request no access width <= 16 B explains */
#define FP__ADV_OCC_LOW 0.5      /* theoretical occupancy below it, limited by a resource */
#define FP__ADV_TAIL 0.2         /* share of a launch the partial wave may idle SMs */
#define FP__ADV_LINE_SHARE 0.1   /* a line's share of its kernel's PC samples */
#define FP__ADV_STALL_SHARE 0.3  /* a stall reason's share of its line's samples */
#define FP__ADV_WIDENED 0.5      /* widened work's share of the kernel's dot (or fp32) work */
#define FP__ADV_LAUNCHES 8       /* launches of one kernel for a launch-bound verdict */
#define FP__ADV_GRAPH_NS 2000.0  /* per-kernel gap left in a CUDA graph or fused loop */
#define FP__ADV_OUTSIDE 0.1      /* share of the run's span outside Triton kernels on a line */
#define FP__ADV_TUNE_FLAT 0.03   /* autotune configs this close: tuning buys nothing */
#define FP__ADV_IMBALANCE 1.2    /* max / mean across ranks: a straggler */
#define FP__ADV_MAX_LINES 3      /* stall findings per kernel */
#define FP__ADV_MAX_SITES 5      /* Python lines the run rules list */

/* ---- evidence ------------------------------------------------------------------------------ */

/* Metrics read under "hw:" (in-process counters) and "ncu:" (Nsight Compute), by base name. */
enum fp__adv_metric {
	FP__M_DRAM_READ,
	FP__M_DRAM_WRITE,
	FP__M_SM_PCT,
	FP__M_MEM_PCT,
	FP__M_WARPS_ACTIVE_PCT,
	FP__M_LD_SECTORS,
	FP__M_LD_REQUESTS,
	FP__M_LOCAL_LD_SECTORS,
	FP__M_LOCAL_ST_SECTORS,
	FP__M_REGS,
	FP__M_BLOCK,
	FP__M_GRID,
	FP__M_SMS,
	FP__M_WAVES,
	FP__M_LIM_REGS,
	FP__M_LIM_SHARED,
	FP__M_LIM_WARPS,
	FP__M_LIM_BLOCKS,
	FP__M_SHARED_BLOCK,
	FP__M_COUNT
};

/* The base name of metric `m` ("dram__bytes_read.sum"). */
const char *fp__adv_metric_name(enum fp__adv_metric m);

/* What a rule lacked, for its status and the plan. */
#define FP__NEED_GPU (1u << 0)      /* a GPU profile (device peaks, SM count) */
#define FP__NEED_COUNTERS (1u << 1) /* hardware counters: the metrics in the mask */
#define FP__NEED_PCS (1u << 2)      /* PC sampling */
#define FP__NEED_TRACE (1u << 3)    /* the Chrome trace */
#define FP__NEED_PYTHON (1u << 4)   /* Python call paths (context="python") */
#define FP__NEED_FACTS (1u << 5)    /* the IR's facts (estimates on) */
#define FP__NEED_COMPILED (1u << 6) /* the compiled kernel's resources (a GPU run) */
#define FP__NEED_TIME (1u << 7)     /* kernel times (a profile with kernels) */

/* One profile given: its tree, the ids of the metrics rules read, its meta and trace. */
struct fp__adv_src {
	struct fp_calltree *t;
	const char *path;
	uint32_t ids[FP__M_COUNT][2]; /* [metric][0: hw:, 1: ncu:], FP_CALLTREE_NONE if absent */
	uint32_t m_time, m_count, m_dev_id, m_dev_type, m_samples, m_mangled;
	uint32_t m_est_bytes, m_source_nodes;
	uint32_t m_time_max, m_time_rank; /* merged across ranks: "time (ns) (max)", "(max rank)" */
	uint32_t *stall;                  /* "stalled_<reason>" ids (not the _not_issued twins) */
	size_t nstall;
	struct fp_json_doc *meta;        /* NULL: none, or not ours */
	const struct fp_json_value *env; /* meta's "environment", or NULL */
	bool notes; /* env holds estimate notes: the session wrote one per Triton kernel */
	struct fp_json_doc *trace;          /* NULL: none */
	const char *backend, *context;      /* meta's session (borrowed), or NULL */
	const char *meta_name, *trace_name; /* how errors name the sidecars (arena) */
	double wall_ns;                     /* meta's time span, NaN when unknown */
};

/* A kernel of the trace: one "X" event of category "kernel". */
struct fp__adv_event {
	double ts, dur;                    /* microseconds, as the trace gives them */
	uint64_t stream;                   /* one key per track (pid, tid): track_key() */
	const char *name;                  /* borrowed from the trace document */
	const struct fp_json_value *stack; /* args.call_stack, or NULL */
	double programs;                   /* product of args.grid, NaN when absent */
	double gap; /* idle time on its track before it (us), NaN for a track's first */
};

/* An advised kernel: its nodes, time and evidence. */
struct fp__adv_kernel {
	uint32_t node;                       /* in the main tree */
	uint32_t xnode[FP_ADVISE_MAX_EXTRA]; /* the same path in each extra, or NONE */
	const char *name;                    /* frame name (borrowed from the main tree) */
	const char *shown;                   /* the name a person reads (arena) */
	double ns, count, share;
	const char *dev_type, *dev_id; /* borrowed from the tree, or NULL */
	struct fp_view_peaks pk;
	double fp32_peak, num_sms;
	const struct fp__adv_gpu *gpu; /* the architecture's row, or NULL */
	struct fp_roofline_point rp;
	bool rp_ok;
	const struct fp_json_value *facts;    /* the IR's facts object, or NULL */
	const struct fp_json_value *compiled; /* facts.compiled, or NULL */
	const struct fp_json_value *autotune; /* the autotuner's object, or NULL */
	double programs;                      /* per launch (trace, ncu or IR), NaN */
	const char *programs_src;
	const char *site_file; /* the launching Python line (call path), or NULL */
	uint32_t site_line;
	bool triton;  /* a Triton kernel: it has IR facts, an estimate or Inductor origins */
	bool foreign; /* a library's kernel (PyTorch's, cuBLAS's): a C++ name, or no estimate
			 note where the session wrote them: the kernel rules do not apply */
};

/* ---- GPU architectures (advise-gpu.c) --------------------------------------------------------- */

struct fp__adv_gpu {
	const char *arch;   /* "90": compute capability without the dot, as device tables say */
	const char *name;   /* "Hopper (sm_90)" */
	unsigned max_warps; /* resident warps per SM */
	unsigned max_blocks;
	unsigned regs;     /* 32-bit registers per SM */
	unsigned shared;   /* shared memory per SM usable by blocks, bytes */
	unsigned reserved; /* shared memory the system keeps per block, bytes */
	unsigned reg_unit; /* registers are allocated per warp in units of this many */
};

/* The row of an arch ("90", "sm_90a", "100"...), or NULL. */
const struct fp__adv_gpu *fp__adv_gpu_of(const char *arch);

/* Resident blocks per SM and what limits them. */
struct fp__adv_occ {
	double blocks;         /* resident blocks per SM */
	double occupancy;      /* resident warps / max warps */
	const char *limiter;   /* "registers", "shared memory", "warps", "blocks" */
	double next_occupancy; /* occupancy if the limiter were lifted (the next limit) */
};

/* Theoretical occupancy of blocks of `warps` warps with `regs` registers per thread and
 * `shared` bytes of shared memory. False when a number is missing or out of range. */
bool fp__adv_occupancy(const struct fp__adv_gpu *g, double warps, double regs, double shared,
		       struct fp__adv_occ *out);

/* ---- the advice ------------------------------------------------------------------------------ */

struct fp__adv_ev {
	const char *name, *text, *unit, *source;
	double value;
};

enum fp__adv_kind {
	FP__ADV_CAUSE = 0,    /* something to change */
	FP__ADV_POSITION = 1, /* where the kernel stands (roofline): listed after its causes */
};

struct fp__adv_finding {
	size_t rule;
	size_t kernel; /* index into kernels, or SIZE_MAX for the run */
	enum fp__adv_kind kind;
	const char *title, *file, *line_source, *method, *suggestion;
	uint32_t line;
	double saving_ns;
	size_t ev_first, nev;
	size_t order; /* creation order: ties keep it */
};

struct fp__adv_status {
	size_t ran, skipped, findings;
	const char *why;
	unsigned needs;   /* FP__NEED_* it lacked somewhere */
	uint32_t metrics; /* bit per enum fp__adv_metric it lacked */
};

struct fp_advice {
	struct fp_arena arena; /* every string and array of the advice */
	int rc;                /* the first failure while running rules (FP_ENOMEM...) */
	struct fp_advise_options o;
	struct fp__adv_src src[1 + FP_ADVISE_MAX_EXTRA];
	size_t nsrc;
	const char *path;     /* the main profile's path (arena), or NULL */
	double total_ns;      /* kernel time of the main profile */
	size_t nkernel_nodes; /* kernel nodes in the main profile */
	double launches;
	struct fp__adv_kernel *kernels;
	size_t nkernels;
	struct fp__adv_event *events; /* the main trace's kernels, by track then time */
	size_t nevents;
	double span_us; /* first kernel start to last kernel end in the trace */
	double run_ns;  /* what savings are a share of: the traced span, else the kernel time */
	const char *run_what; /* "the traced span" or "the kernel time" */
	struct fp__adv_finding *findings;
	size_t nfindings, findings_cap;
	size_t cur; /* the finding evidence goes to (the last one started), SIZE_MAX: none */
	uint64_t findings_dropped;
	struct fp__adv_ev *ev;
	size_t nev, ev_cap;
	struct fp__adv_status *status; /* one per rule */
	char **notes;
	size_t nnotes, notes_cap;
	struct fp_json_doc **docs; /* facts and autotune documents parsed per kernel */
	size_t ndocs, docs_cap;
	bool merged; /* the main profile is a merge across ranks */
	/* the (kernel, launching line) groups launch_bound reported: outside_triton leaves their
	 * gaps to it */
	struct fp__adv_site {
		const char *name, *site;
		size_t site_len;
	} lb[FP__ADV_MAX_SITES];
	size_t nlb;
};

/* One row of the rule table. Exactly one of kernel_fn / run_fn. */
struct fp__adv_rule {
	struct fp_advise_rule_info info;
	void (*kernel_fn)(struct fp_advice *a, size_t rule, struct fp__adv_kernel *k);
	void (*run_fn)(struct fp_advice *a, size_t rule);
};

/* The rules (advise.c), referring to the functions of the files below. */
const struct fp__adv_rule *fp__adv_rule(size_t i);
size_t fp__adv_nrules(void);

/* Kernel rules (advise-kernel.c). */
void fp__adv_roofline(struct fp_advice *a, size_t rule, struct fp__adv_kernel *k);
void fp__adv_uncoalesced(struct fp_advice *a, size_t rule, struct fp__adv_kernel *k);
void fp__adv_spills(struct fp_advice *a, size_t rule, struct fp__adv_kernel *k);
void fp__adv_occupancy_rule(struct fp_advice *a, size_t rule, struct fp__adv_kernel *k);
void fp__adv_tail(struct fp_advice *a, size_t rule, struct fp__adv_kernel *k);
void fp__adv_stall(struct fp_advice *a, size_t rule, struct fp__adv_kernel *k);
void fp__adv_half_math(struct fp_advice *a, size_t rule, struct fp__adv_kernel *k);
void fp__adv_autotune(struct fp_advice *a, size_t rule, struct fp__adv_kernel *k);

/* Run rules and the trace (advise-run.c). */
void fp__adv_launch_bound(struct fp_advice *a, size_t rule);
void fp__adv_outside(struct fp_advice *a, size_t rule);
void fp__adv_ranks(struct fp_advice *a, size_t rule);
/* Read the main profile's trace into a->events. FP_OK, FP_EFORMAT (diag), FP_ENOMEM. */
int fp__adv_read_trace(struct fp_advice *a, struct fp_diag *diag);
/* Whether trace event `e` was launched from kernel `k`'s node (its name and call path). */
bool fp__adv_event_is(const struct fp_advice *a, const struct fp__adv_event *e,
		      const struct fp__adv_kernel *k);

/* ---- helpers for rules (advise.c) ------------------------------------------------------------ */

/* A value of metric `m` for kernel `k` from the first profile that has it (counters before
 * ncu, the main profile before the extras); NaN when none. *src gets "counters" or "ncu". */
double fp__adv_metric(const struct fp_advice *a, const struct fp__adv_kernel *k,
		      enum fp__adv_metric m, const char **src);

/* A number of the facts object (`obj` may be NULL): NaN when absent. */
double fp__adv_num(const struct fp_json_value *obj, const char *key);
/* Whether a kernel name is C++'s (mangled, or with a scope): a library's kernel, never Triton's. */
bool fp__adv_cxx_name(const char *name);
/* A location member ({"file", "line"}) of the facts: false when absent. */
bool fp__adv_loc(const struct fp_json_value *obj, const char *key, const char **file,
		 uint32_t *line);

/* printf into the advice's arena (NULL after a failure, recorded in a->rc). */
const char *fp__adv_str(struct fp_advice *a, const char *fmt, ...) FP_PRINTF(2, 3);
/* A compact number ("12.35", "1.2e+09"), a duration ("1.23 ms"), bytes ("4 KiB"). */
void fp__adv_fmt(double v, char *buf, size_t size);
void fp__adv_fmt_ns(double ns, char *buf, size_t size);
void fp__adv_fmt_bytes(double b, char *buf, size_t size);

/* Start a finding; evidence and the rest follow. NULL after a failure (a->rc). */
struct fp__adv_finding *fp__adv_find(struct fp_advice *a, size_t rule, size_t kernel,
				     enum fp__adv_kind kind, const char *title);
/* Add evidence to the last finding. */
void fp__adv_ev_num(struct fp_advice *a, const char *name, double v, const char *unit,
		    const char *source);
void fp__adv_ev_text(struct fp_advice *a, const char *name, const char *text, const char *source);
/* Set the last finding's saving (ns; NaN: not estimated) and how it was estimated. */
void fp__adv_saving(struct fp_advice *a, struct fp__adv_finding *f, double ns, const char *method);
/* The line of a finding. */
void fp__adv_at(struct fp__adv_finding *f, const char *file, uint32_t line, const char *how);

/* The rule ran on kernel `k` (or the run), or could not: why, and what it lacked. */
void fp__adv_ran(struct fp_advice *a, size_t rule);
void fp__adv_skip(struct fp_advice *a, size_t rule, unsigned needs, uint32_t metrics,
		  const char *fmt, ...) FP_PRINTF(5, 6);

/* Add a note. */
void fp__adv_note(struct fp_advice *a, const char *fmt, ...) FP_PRINTF(2, 3);

/* Parse a JSON text the advice keeps (facts, autotune), naming `what` in errors. NULL on
 * failure, with a->rc and `diag` set. */
const struct fp_json_value *fp__adv_parse(struct fp_advice *a, const char *text, size_t len,
					  const char *what, struct fp_diag *diag);

/* The time floor of kernel `k` at FP__ADV_ROOF_REACH of its roofline (the time it could not
 * go below by any change that keeps its work and traffic), NaN when not known. */
double fp__adv_floor_ns(const struct fp__adv_kernel *k);
/* min(saving, ns - floor) and >= 0, NaN stays NaN. */
double fp__adv_cap(const struct fp__adv_kernel *k, double saving);

/* Split "file:function@line" or "file:line" into file and line (arena copy of the file). */
bool fp__adv_split_frame(struct fp_advice *a, const char *s, size_t n, const char **file,
			 uint32_t *line);

#endif /* FP_ADVISE_INTERNAL_H */
