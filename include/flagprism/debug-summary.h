/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Debugger's account of a whole program: every kernel launched while the Debugger was
 * active, how many of its launches were instrumented, why each other launch was not, and every
 * finding of every instrumented launch (deduplicated across launches). It is written as
 * `summary.json` (schema: docs/formats/debugger-report-schema.md, "Summary") and `summary.txt` at the top
 * of the output directory, and is what `flagprism debug` prints at exit, so that a launch the
 * Debugger could not observe is never silently missing from its answer.
 *
 * Not here: decoding and per-launch reports (<flagprism/debug.h>), which feed the summary through
 * fp_dbg_report(). The object is thread-safe: launches may be added from any thread.
 */
#ifndef FLAGPRISM_DEBUG_SUMMARY_H
#define FLAGPRISM_DEBUG_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <flagprism/debug.h>
#include <flagprism/export.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What happened to one launch. The order is part of the format (summary.json "status"). */
enum fp_dbg_launch_status {
	FP_DBG_LAUNCH_INSTRUMENTED = 0, /* observed as asked */
	/* Not selected by the user's own choice: no markers (marker mode), a --kernel/--launch
	 * filter, the repeated launches of an autotuner benchmark (its first one is observed). */
	FP_DBG_LAUNCH_EXCLUDED = 1,
	/* Ran where the Debugger cannot observe it: inside CUDA graph capture or replay, launched
	 * through a path FlagPrism does not hook. */
	FP_DBG_LAUNCH_UNOBSERVABLE = 2,
	/* Selected, but instrumenting it failed: source not readable, a construct the rewriter does
	 * not support, an error while launching or decoding the instrumented kernel. */
	FP_DBG_LAUNCH_FAILED = 3,
	/* Selected, and there was nothing to observe (no load or store for the bounds check). */
	FP_DBG_LAUNCH_NOTHING = 4,
};
#define FP_DBG_LAUNCH_NSTATUS 5

/* "instrumented", "excluded", "unobservable", "failed", "nothing_to_observe" (static). */
FP_EXTERN const char *fp_dbg_launch_status_name(enum fp_dbg_launch_status st);

/* Caps: what does not fit is counted in the summary's "dropped" object, never lost silently. */
#define FP_DBG_SUMMARY_MAX_KERNELS 65536u
#define FP_DBG_SUMMARY_MAX_REASONS 65536u  /* distinct (kernel, status, reason) */
#define FP_DBG_SUMMARY_MAX_FINDINGS 65536u /* distinct (kernel, kind, line, subject) */
#define FP_DBG_SUMMARY_MAX_STRING 4096u    /* longer strings are cut, with "..." */

struct fp_dbg_summary; /* opaque */

/** A new, empty summary (free with fp_dbg_summary_free()). FP_OK, FP_ENOMEM or FP_EINVAL. */
FP_EXTERN int fp_dbg_summary_new(struct fp_dbg_summary **out);

/** Free it. NULL is a no-op. */
FP_EXTERN void fp_dbg_summary_free(struct fp_dbg_summary *s);

/** Forget every launch and finding (settings set by fp_dbg_summary_set*() stay). */
FP_EXTERN void fp_dbg_summary_clear(struct fp_dbg_summary *s);

/**
 * Set a top-level string field written into summary.json/.txt: "mode" (markers, sanitize,
 * check), "checks", "command", "output_dir", "incomplete" (why the summary is partial: a signal,
 * an exception; NULL clears it), in a multi-process job "host" and "device" (written in the
 * "distributed" object with the rank), and in a pytest-xdist worker "worker", its id ("gw0":
 * the summary is the worker's part of a test session, written as the "worker" object;
 * fp_dbg_summary_write_parts() merges the parts). Unknown keys return FP_EINVAL. The value is
 * copied.
 */
FP_EXTERN int fp_dbg_summary_set(struct fp_dbg_summary *s, const char *key, const char *value);

/**
 * Set an integer field: "exit_status" (of the program; absent until set), in a multi-process
 * job "rank", "local_rank", "world_size" (-1: unknown; "distributed" is written once "rank" is
 * set, see fp_ranks_merge_summaries() in <flagprism/ranks.h>), or in a pytest-xdist worker
 * "worker_count", the session's workers (-1: unknown). FP_EINVAL otherwise.
 */
FP_EXTERN int fp_dbg_summary_set_int(struct fp_dbg_summary *s, const char *key, int64_t value);

/**
 * Reserve the next program-wide launch index (launches are numbered from 0 in the order they are
 * reserved or accounted), for a launch whose outcome is known only later: its reports and
 * findings carry the index, fp_dbg_summary_launch() accounts it when the outcome is known.
 */
FP_EXTERN uint64_t fp_dbg_summary_reserve(struct fp_dbg_summary *s);

/* fp_dbg_summary_launch(): take a new index (not one from fp_dbg_summary_reserve()) */
#define FP_DBG_SUMMARY_NEW_INDEX UINT64_MAX

/**
 * Account for `count` launches of `kernel` (defined in `source_file`, "" when unknown) with
 * status `st` and `reason` (plain words; NULL for instrumented launches). `index` is a reserved
 * index (then count must be 1) or FP_DBG_SUMMARY_NEW_INDEX; `*launch_index` (if not NULL) gets
 * the index of the first of them. Returns FP_OK, FP_EINVAL, FP_ENOMEM; a kernel or reason beyond
 * the caps is counted as dropped and still returns FP_OK.
 */
FP_EXTERN int fp_dbg_summary_launch(struct fp_dbg_summary *s, const char *kernel,
				    const char *source_file, enum fp_dbg_launch_status st,
				    const char *reason, uint64_t count, uint64_t index,
				    uint64_t *launch_index);

/* Totals, for callers that decide an exit status. */
struct fp_dbg_summary_totals {
	uint64_t kernels;
	uint64_t launches;
	uint64_t by_status[FP_DBG_LAUNCH_NSTATUS];
	uint64_t findings;         /* distinct findings */
	uint64_t finding_launches; /* launches with at least one finding */
	uint64_t reports;          /* per-launch reports written */
	uint64_t dropped_kernels, dropped_reasons, dropped_findings;
	/* instrumented launches whose records or dumps did not all fit (marker mode's record
	 * slots and dump arena; check mode cannot overflow): what they did not record was not
	 * checked */
	uint64_t incomplete_launches;
};

FP_EXTERN void fp_dbg_summary_totals(struct fp_dbg_summary *s, struct fp_dbg_summary_totals *t);

/**
 * Write "json" (summary.json) or "txt" (summary.txt) to an open stream. FP_OK, FP_ENOENT
 * (unknown format), FP_EIO, FP_ENOMEM.
 */
FP_EXTERN int fp_dbg_summary_write_format(struct fp_dbg_summary *s, const char *format, FILE *f,
					  struct fp_diag *diag);

/**
 * Write `dir`/summary.json and `dir`/summary.txt (created if missing), each through a temporary
 * file renamed into place. FP_OK, FP_EIO (diag names the path and the cause), FP_ENOMEM.
 */
FP_EXTERN int fp_dbg_summary_write(struct fp_dbg_summary *s, const char *dir, struct fp_diag *diag);

/** What fp_dbg_summary_write_parts() merged. Caller-owned; filled by the call. */
struct fp_dbg_summary_parts_report {
	struct fp_dbg_summary_totals totals; /* summed over the parts and the summary itself */
	size_t parts;                        /* the parts' summaries read */
	size_t nmissing;                     /* workers that ran without a part */
	char missing[256];                   /* their ids, "gw1,gw3" ("..." when cut) */
	size_t incomplete;                   /* parts whose summary says it is incomplete */
};

/**
 * Write `dir`/summary.json and `dir`/summary.txt for a program whose work ran in other
 * processes, the workers of a pytest-xdist session, each of which wrote its part as a summary
 * with a "worker" object (fp_dbg_summary_set() "worker"): `parts` are those summaries (each a
 * summary.json or a directory holding one), merged as fp_ranks_merge_summaries() merges ranks
 * (totals and dropped counts summed, every kernel and finding listed once per part with a
 * "worker" member, in the workers' natural order), under `s`, the controlling process's own
 * summary: its mode, checks, command, output directory, exit status (the session's, else the
 * first non-zero part status) and incomplete reason are the merged summary's, and its own
 * kernels and findings, when it has any, are listed as worker "controller". `expected` names
 * the workers that ran (with gw0 .. gw<count - 1> of the parts' "count"): those without a part
 * are missing, said in "workers": {merged, count, missing, inputs} and in the text, and make
 * the summary incomplete; a part is never looked for by name, so an earlier session's file is
 * not taken for a worker that died. `s` itself is not written to `dir`: the merged summary
 * replaces it. FP_OK; FP_EFORMAT / FP_EVERSION (a part that is not a summary, diag names it and
 * the place), FP_EINVAL (a part without "worker", two parts of one worker, NULL arguments),
 * FP_EIO (a part that cannot be read or an output that cannot be written, diag names the path),
 * FP_ENOMEM, FP_ELIMIT.
 */
FP_EXTERN int fp_dbg_summary_write_parts(struct fp_dbg_summary *s, const char *dir,
					 const char *const *parts, size_t n,
					 const char *const *expected, size_t nexpected,
					 struct fp_dbg_summary_parts_report *rep,
					 struct fp_diag *diag);

/* fp_dbg_report() flags */
#define FP_DBG_REPORT_FINDINGS_ONLY 1u /* write per-launch files only when there are findings */
#define FP_DBG_REPORT_NO_FILES 2u      /* write no per-launch file (findings reach the summary) */

/**
 * The whole host side of one instrumented launch: parse `launch_json` for `run`, compute the
 * findings, add them to `summary` (may be NULL) under launch `launch_index`, and write the
 * launch's reports as fp_dbg_write_reports() does, unless FP_DBG_REPORT_FINDINGS_ONLY is set and
 * there is no finding and nothing overflowed (then `out` holds no path). `*nfindings` (if not
 * NULL) gets the launch's finding count. Returns what fp_dbg_write_reports() returns.
 */
FP_EXTERN int fp_dbg_report(const struct fp_dbg_run *run, const char *launch_json, size_t len,
			    struct fp_dbg_summary *summary, uint64_t launch_index, unsigned flags,
			    struct fp_dbg_outputs *out, size_t *nfindings, struct fp_diag *diag);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_DEBUG_SUMMARY_H */
