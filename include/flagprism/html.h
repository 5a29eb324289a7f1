/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTML report: one self-contained page for a Debugger run (its per-launch reports, a
 * summary.json, level-2 dumps) or a profile (a call tree, optionally compared with another, and
 * its Chrome trace). The library reads the inputs, aggregates them (per-statement summaries over
 * the program grid as compact arrays, the call tree cut to the nodes a picture can show, trace
 * slices), and writes one HTML file in which the page's own stylesheet and script (src/html/,
 * compiled in) and the data (JSON inside <script type="application/json"> blocks) are inline: it
 * opens from file:// and makes no network request. Every cap is counted and the page says what
 * it left out. `flagprism report` is a thin client; docs/internals/report-page.md documents the data.
 *
 * It does not render anything itself (the page's script does, in the browser), it never prints,
 * and it does not write the Debugger's or the Profiler's own files.
 *
 * Ownership: a page is a heap object (fp_html_page_new() / fp_html_page_free()); trees and texts
 * given to it are borrowed for the duration of the call only: what the page needs is copied.
 * Not thread-safe per page.
 */
#ifndef FLAGPRISM_HTML_H
#define FLAGPRISM_HTML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <flagprism/calltree.h>
#include <flagprism/export.h>
#include <flagprism/status.h>
#include <flagprism/strbuf.h>
#include <flagprism/view.h>

#ifdef __cplusplus
extern "C" {
#endif

enum fp_html_kind {
	FP_HTML_DEBUGGER = 1, /* launches of the Debugger */
	FP_HTML_PROFILE = 2,  /* a profile, or the comparison of two */
};

/* Defaults of struct fp_html_options (a 0 field takes its default). */
#define FP_HTML_DEFAULT_MAX_CELLS 65536u       /* heatmap cells per site */
#define FP_HTML_DEFAULT_MAX_SERIES 4096u       /* executions per per-execution series */
#define FP_HTML_DEFAULT_MAX_NODES 20000u       /* call-tree rows embedded */
#define FP_HTML_DEFAULT_MAX_FINDINGS 1000u     /* findings embedded, over all launches */
#define FP_HTML_DEFAULT_MAX_LAUNCHES 256u      /* reports read */
#define FP_HTML_DEFAULT_MAX_DUMPS 256u         /* level-2 dump histograms per launch */
#define FP_HTML_DEFAULT_MAX_SLICES 200000u     /* trace slices embedded */
#define FP_HTML_DEFAULT_MAX_SOURCE_LINES 2000u /* kernel source lines shown per launch */
#define FP_HTML_DEFAULT_MAX_ROOFLINE 500u      /* kernel nodes placed on the roofline */
#define FP_HTML_HIST_BINS 64u                  /* bins of a dump histogram */

/** What to embed. Initialise with fp_html_options_init(); strings are borrowed until the page
 *  is freed. */
struct fp_html_options {
	const char *title;       /* the page's title; NULL: made from the input */
	size_t max_cells;        /* heatmap cells per site: larger grids are binned */
	size_t max_series;       /* executions per series of a statement in a loop */
	size_t max_nodes;        /* call-tree rows: the heaviest, closed under parents */
	size_t max_findings;     /* findings over all launches */
	size_t max_launches;     /* reports read from a directory or a summary */
	size_t max_dumps;        /* level-2 dump histograms per launch */
	size_t max_slices;       /* trace slices */
	size_t max_source_lines; /* kernel source lines per launch */
	size_t max_roofline;     /* kernel nodes on the roofline */
	const char *metrics;     /* profile table columns (view specs, comma-separated); NULL:
				    every derived metric the profile allows, then its raw ones */
	bool read_sources; /* read each kernel's source file (a .py file named by the report) to
			      annotate it; false: only the statements' own text is shown */
};

FP_EXTERN void fp_html_options_init(struct fp_html_options *o);

/** Opaque heap object: the data of one page, gathered by the calls below. */
struct fp_html_page;

/**
 * New empty page of `kind`. `o` NULL takes the defaults; it is copied (its strings borrowed).
 * FP_OK and *out (free with fp_html_page_free()), FP_EINVAL, FP_ENOMEM.
 */
FP_EXTERN int fp_html_page_new(enum fp_html_kind kind, const struct fp_html_options *o,
			       struct fp_html_page **out);

/** Free a page. NULL is a no-op. */
FP_EXTERN void fp_html_page_free(struct fp_html_page *p);

/** Add a line to the page's notes (shown at its top). FP_OK, FP_ENOMEM, FP_ELIMIT. */
FP_EXTERN int fp_html_page_note(struct fp_html_page *p, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/** Notes so far (what was left out, inputs skipped and why): count, and note `i` (borrowed). */
FP_EXTERN size_t fp_html_page_note_count(const struct fp_html_page *p);
FP_EXTERN const char *fp_html_page_note_at(const struct fp_html_page *p, size_t i);

/* ---- Debugger pages ------------------------------------------------------------------------ */

/**
 * Add one launch from the text of a Debugger report (`<stem>.json`,
 * docs/formats/debugger-report-schema.md). `path` is where it was read from: files it names (the
 * kernel's source, level-2 artifacts) are looked up relative to it; NULL reads no other file.
 * FP_OK; FP_EFORMAT (diag: "<path>:<line>:<col>: statements[2].results[0]...: what is wrong"),
 * FP_EVERSION (a schema_version other than 1), FP_ELIMIT (more than max_launches launches),
 * FP_ENOMEM, FP_EINVAL. On failure the page is unchanged.
 */
FP_EXTERN int fp_html_debug_add_report(struct fp_html_page *p, const char *text, size_t len,
				       const char *path, struct fp_diag *diag);

/**
 * Add a Debugger run's summary.json (read tolerantly: its objects are shown as they are; the
 * reports it names in `launches[].report` or `reports[]` are NOT read here: see
 * fp_html_debug_read()). FP_OK, FP_EFORMAT (not a JSON object), FP_ENOMEM.
 */
FP_EXTERN int fp_html_debug_add_summary(struct fp_html_page *p, const char *text, size_t len,
					const char *path, struct fp_diag *diag);

/**
 * Read a Debugger output: a directory (its summary.json when there is one, and the reports it
 * names; otherwise every `*.json` report in it, by name), a summary.json, or one report. Files
 * that are not reports are skipped with a note; a report that cannot be read fails the call with
 * its error (the page keeps the launches added before). FP_OK, FP_ENOENT (no report found:
 * diag says where it looked), FP_EIO, and the errors of fp_html_debug_add_report().
 */
FP_EXTERN int fp_html_debug_read(struct fp_html_page *p, const char *path, struct fp_diag *diag);

/* ---- profile pages ------------------------------------------------------------------------- */

/**
 * Set the page's profile: tree `t` read from `path` (`info` as fp_view_read_profile() filled
 * it, may be NULL), and, when `other` is not NULL, the comparison with `other` (from
 * `other_path`): the page then shows other - this. Trees are finalized if needed, hence not
 * const; they are not kept. FP_OK, FP_EINVAL (a bad `metrics` spec: diag says which; or a
 * profile set twice), FP_ENOENT (no numeric metric), FP_ENOMEM, FP_ELIMIT.
 */
FP_EXTERN int fp_html_profile_set(struct fp_html_page *p, struct fp_calltree *t, const char *path,
				  const struct fp_view_read_info *info, struct fp_calltree *other,
				  const char *other_path,
				  const struct fp_view_read_info *other_info, struct fp_diag *diag);

/**
 * Add the timeline of a Chrome trace (the profile's `<stem>.chrome_trace.json`): its complete
 * ("X") slices on their tracks (threads, streams, per-SM or per-program scope tracks), at most
 * max_slices (the earliest; the rest counted). `path` names it in the page and in errors.
 * FP_OK, FP_EFORMAT (not a trace: diag names the place), FP_ENOMEM, FP_ELIMIT.
 */
FP_EXTERN int fp_html_profile_add_trace(struct fp_html_page *p, const char *text, size_t len,
					const char *path, struct fp_diag *diag);

struct fp_advice;

/**
 * Add the advice on the page's profile (include/flagprism/advise.h): its findings, the rules
 * that could not run and the plan, shown as the page's "Advice" section. The advice is
 * borrowed for the call (its JSON is copied). FP_OK, FP_EINVAL (not a profile page, or an
 * advice set twice), FP_ENOMEM, FP_ELIMIT.
 */
FP_EXTERN int fp_html_profile_add_advice(struct fp_html_page *p, const struct fp_advice *a,
					 struct fp_diag *diag);

/* ---- writing ------------------------------------------------------------------------------- */

/** What a page holds, for the CLI's summary line and tests. */
struct fp_html_stats {
	size_t launches, findings, findings_total, statements, sites, dumps;
	size_t rows, rows_total; /* call-tree rows embedded / in the profile */
	size_t slices, slices_total;
	size_t notes;
	uint64_t data_bytes; /* bytes of embedded data */
};

FP_EXTERN void fp_html_page_stats(const struct fp_html_page *p, struct fp_html_stats *out);

/**
 * Write the page to `f`: the template with its stylesheet, the data blocks and its script.
 * FP_OK, FP_EIO (a write failed), FP_EINVAL (a page without any launch or profile).
 */
FP_EXTERN int fp_html_page_write(const struct fp_html_page *p, FILE *f);

/**
 * Write the page to `path` through fp_outfile (include/flagprism/outfile.h): a temporary file
 * renamed onto a regular file, a device or FIFO written through and never replaced, a symbolic
 * link's target written, a directory refused. FP_OK, FP_EIO (diag names the path, the step and
 * the errno), FP_EINVAL (a page without any launch or profile, or a refused destination),
 * FP_ENOMEM. Nothing is replaced on failure.
 */
FP_EXTERN int fp_html_page_save(const struct fp_html_page *p, const char *path,
				struct fp_diag *diag);

/**
 * Append `len` bytes of JSON text to `sb` so that it may sit inside an HTML
 * <script type="application/json"> element: '<', '>' and '&' (which valid JSON has only inside
 * strings) become \u003c, \u003e and \u0026, and U+2028/U+2029 become \u2028/\u2029.
 * FP_OK, FP_ENOMEM, FP_ELIMIT.
 */
FP_EXTERN int fp_html_escape_json(struct fp_strbuf *sb, const char *json, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_HTML_H */
