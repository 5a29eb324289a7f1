/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Advice from a profile: for the kernels that take the time, ranked findings that say what to
 * change in Triton terms, each with the evidence it rests on (metrics, samples, IR counts, with
 * their values), the source line where it applies, an estimate of the time a fix would save and
 * how that estimate was made. `flagprism advise` prints it, writes it as JSON, and
 * `flagprism report` puts it on the profile's page.
 *
 * Rules are a table (fp_advise_rule_at()): each has a name, the evidence it needs, where its
 * threshold comes from and the profiling run that collects what it needs. A rule runs wherever
 * the profile holds its evidence and says where it could not run and why; the advice's plan
 * (fp_advice_render_plan()) is the `flagprism profile` commands that would let the rest run.
 * Device numbers (peaks, SMs, occupancy limits) come from the profile's device table and a
 * table per GPU architecture (docs/guide/advise.md), never from constants of one card.
 *
 * What it reads: a finalized call tree (ours, Proton's, merged across ranks, with imported
 * Nsight Compute metrics), optionally the session's meta file (the IR's and the compiled
 * kernel's facts, autotuners' measurements) and Chrome trace (launch gaps), and other profiles
 * of the same program whose nodes add evidence (a hardware-counter run, a PC-sampling run).
 * It never changes a tree, never prints anywhere but the FILE * it is given, and reads no file
 * itself: the caller hands it texts.
 *
 * Ownership: an advice is a heap object (fp_advise_run() / fp_advice_free()); inputs are
 * borrowed for the duration of fp_advise_run() only (what the advice shows is copied). Strings
 * returned by the accessors are borrowed from the advice. Not thread-safe per advice.
 */
#ifndef FLAGPRISM_ADVISE_H
#define FLAGPRISM_ADVISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <flagprism/calltree.h>
#include <flagprism/export.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fp_jsonw;

/* Defaults of struct fp_advise_options (a 0 field takes its default). */
#define FP_ADVISE_DEFAULT_MAX_KERNELS 10u /* kernels advised, the heaviest first */
#define FP_ADVISE_DEFAULT_MIN_SHARE 0.01  /* of the profile's kernel time */
#define FP_ADVISE_MAX_EXTRA 8u            /* other profiles of the same program */
#define FP_ADVISE_MAX_FINDINGS 4096u      /* findings kept in one advice (the rest counted) */

/** What to advise on. Initialise with fp_advise_options_init(). */
struct fp_advise_options {
	size_t max_kernels; /* kernels advised: those taking the most time */
	double min_share;   /* kernels below this share of the kernel time are not advised (the
			       heaviest one always is) */
	bool full_names;    /* C++ kernel names in full (default: short, as `flagprism view`) */
};

FP_EXTERN void fp_advise_options_init(struct fp_advise_options *o);

/** One profile given to fp_advise_run(). Everything is borrowed for the call. */
struct fp_advise_profile {
	struct fp_calltree *tree; /* finalized here if needed (hence not const) */
	const char *path;         /* names it in the advice and the plan; may be NULL */
	const char *meta;         /* the text of its <stem>.meta.json, or NULL */
	size_t meta_len;
	const char *meta_path; /* names it in errors; NULL: "<path>'s meta file" */
	const char *trace;     /* the text of its <stem>.chrome_trace.json, or NULL */
	size_t trace_len;
	const char *trace_path; /* names it in errors; NULL: "<path>'s trace" */
};

/** The profile to advise on and up to FP_ADVISE_MAX_EXTRA more of the same program whose
 *  kernel nodes (matched by their path of names) add evidence: metrics, PC samples, facts. */
struct fp_advise_input {
	struct fp_advise_profile main;
	const struct fp_advise_profile *extra;
	size_t nextra;
};

/** Opaque heap object: the advice on one profile. */
struct fp_advice;

/**
 * Run every rule on `in` with options `o` (NULL: defaults). FP_OK and *out (free with
 * fp_advice_free()); FP_EINVAL (NULL tree, too many extra profiles); FP_EFORMAT (a meta file,
 * trace or facts note that is not what the Profiler writes: diag->msg names the file, the
 * place and what was expected); FP_ENOMEM; FP_ELIMIT. A profile that lacks evidence is not an
 * error: the advice says which rules could not run.
 */
FP_EXTERN int fp_advise_run(const struct fp_advise_input *in, const struct fp_advise_options *o,
			    struct fp_advice **out, struct fp_diag *diag);

/** Free an advice. NULL is a no-op. */
FP_EXTERN void fp_advice_free(struct fp_advice *a);

/* ---- the rules ------------------------------------------------------------------------------ */

/** A rule as the table describes it (static strings). */
struct fp_advise_rule_info {
	const char *name;      /* "uncoalesced" */
	const char *title;     /* one line: what it looks for */
	const char *scope;     /* "kernel" (per advised kernel) or "run" */
	const char *evidence;  /* what it reads, in the order it prefers sources */
	const char *threshold; /* when it fires */
	const char *source;    /* where the threshold and the method come from */
	const char *enable;    /* the `flagprism profile` options that collect its evidence */
};

/** Number of rules, and rule `i` of the table (NULL past the end). */
FP_EXTERN size_t fp_advise_rule_count(void);
FP_EXTERN const struct fp_advise_rule_info *fp_advise_rule_at(size_t i);

/* ---- reading an advice ---------------------------------------------------------------------- */

/** How one rule went on one advice. */
struct fp_advice_rule_status {
	const char *rule;
	size_t ran;         /* kernels (or 1 for a run rule) it ran on */
	size_t skipped;     /* kernels it could not run on */
	size_t findings;    /* findings it made */
	const char *why;    /* why it could not run (the first reason), or NULL */
	const char *enable; /* the command line that would collect what it lacked, or NULL */
};

/** Status of rule `i` (fp_advise_rule_at(i)) in `a`: FP_OK or FP_ENOENT. */
FP_EXTERN int fp_advice_rule_status(const struct fp_advice *a, size_t i,
				    struct fp_advice_rule_status *out);

/** One piece of evidence: a number (NaN when it is text) or a text, with its unit and source. */
struct fp_advice_evidence {
	const char *name;   /* "sectors per request" */
	double value;       /* NaN for text evidence */
	const char *text;   /* text evidence, or NULL */
	const char *unit;   /* "", "%", "ns", "B"... */
	const char *source; /* "counters", "ncu", "ir", "compiled", "pcsampling", "trace", "tree",
			       "device", "autotune", "meta" */
};

/** One finding. */
struct fp_advice_finding {
	size_t rank;        /* 1-based, in the order the advice lists them */
	const char *rule;   /* the rule's name */
	const char *kernel; /* the kernel node's name, NULL for a finding about the run */
	uint32_t node;      /* the kernel node in the main tree, FP_CALLTREE_NONE for the run */
	const char *title;  /* one line */
	const char *file;   /* where it applies, or NULL */
	uint32_t line;      /* 0 when unknown */
	const char *line_source; /* how the line was found ("pcsampling", "ir", "call path") */
	double saving_ns;        /* estimated time saved; NaN when not estimated */
	double saving_share;     /* of the run (the traced span; without a trace the kernel
				    time); NaN when not estimated */
	const char *method;      /* how the saving was estimated, or why it was not */
	const char *suggestion;  /* what to change, in Triton terms */
	size_t nevidence;
};

/** Number of findings, in ranking order (kernels by time, then each kernel's by saving). */
FP_EXTERN size_t fp_advice_finding_count(const struct fp_advice *a);
FP_EXTERN int fp_advice_finding_at(const struct fp_advice *a, size_t i,
				   struct fp_advice_finding *out);
/** Evidence `j` of finding `i`: FP_OK or FP_ENOENT. */
FP_EXTERN int fp_advice_evidence_at(const struct fp_advice *a, size_t i, size_t j,
				    struct fp_advice_evidence *out);

/** Notes: what the inputs lacked or how they were read ("no trace: ..."). */
FP_EXTERN size_t fp_advice_note_count(const struct fp_advice *a);
FP_EXTERN const char *fp_advice_note_at(const struct fp_advice *a, size_t i);

/* ---- writing -------------------------------------------------------------------------------- */

/**
 * The advice as text: a header (the profile, its kernels and time), each advised kernel with
 * its findings (evidence, line, saving and method, suggestion), the run's findings, then the
 * rules that could not run and why. FP_OK, FP_EIO (a write failed).
 */
FP_EXTERN int fp_advice_render(const struct fp_advice *a, FILE *f);

/**
 * The plan: the `flagprism profile` commands that would collect the evidence the advice lacked
 * (hardware counters, PC sampling, the trace and Python call paths), with the rules each
 * enables, and the `flagprism advise ... --with ...` line that combines them. "# nothing
 * missing" when every rule ran. FP_OK, FP_EIO.
 */
FP_EXTERN int fp_advice_render_plan(const struct fp_advice *a, FILE *f);

/** The advice as one JSON object (docs/guide/advise.md, "JSON"). The writer's status. */
FP_EXTERN int fp_advice_write_json(const struct fp_advice *a, struct fp_jsonw *w);

/**
 * Write the JSON object to `path` through fp_outfile (include/flagprism/outfile.h): a temporary
 * file renamed onto a regular file, a device or FIFO written through, a directory refused;
 * "-" is standard output. FP_OK, FP_EIO (diag names the path and the errno), FP_EINVAL,
 * FP_ENOMEM.
 */
FP_EXTERN int fp_advice_save_json(const struct fp_advice *a, const char *path,
				  struct fp_diag *diag);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_ADVISE_H */
