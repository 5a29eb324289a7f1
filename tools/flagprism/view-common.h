/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What `flagprism view`, `diff` and `merge` share: opening a profile (with a progress note for
 * large files, positioned errors and the "incomplete" warnings) and the view options both view
 * and diff accept. Not a general profile API: that is include/flagprism/view.h.
 */
#ifndef FLAGPRISM_TOOL_VIEW_COMMON_H
#define FLAGPRISM_TOOL_VIEW_COMMON_H

#include "tool.h"

#include <flagprism/view.h>

/* The options of a view, as parsed; `threshold` is the raw text of -t. */
struct fpt_view_args {
	const char *metrics, *threshold, *include, *exclude, *format, *sort;
	long depth;
	bool print_sorted, keep_metadata, full_names;
};

/* Option table entries for struct fpt_view_args `a` (a macro: the table is the caller's). */
/* clang-format off */
#define FPT_VIEW_OPTIONS(a)                                                                      \
	FPT_OPT_STRING("metrics", 'm', &(a).metrics, "METRICS",                                  \
		       "comma-separated metrics, raw or derived (time/ms, gbyte/s, util, ...)"), \
	FPT_OPT_INT("depth", 'd', &(a).depth, "DEPTH", "deepest level shown (root = 0; default 100)", \
		    0, 1000000),                                                                 \
	FPT_OPT_STRING("threshold", 't', &(a).threshold, "FRACTION",                             \
		       "hide nodes under this share of the root's first metric (0.01 or 1%)"),   \
	FPT_OPT_STRING("include", 'i', &(a).include, "REGEX",                                    \
		       "keep only paths through frames matching REGEX (POSIX extended)"),        \
	FPT_OPT_STRING("exclude", 'e', &(a).exclude, "REGEX",                                    \
		       "drop frames matching REGEX and everything below them"),                  \
	FPT_OPT_STRING("format", 'f', &(a).format, "FORMAT",                                     \
		       "frame names: full, file_function_line, function_line, file_function"),   \
	FPT_OPT_STRING("sort", 's', &(a).sort, "ORDER",                                          \
		       "children by 'value' (first metric, largest first; default) or 'name'"),  \
	FPT_OPT_BOOL("print-sorted", 0, &(a).print_sorted,                                       \
		     "also list the leaves sorted by the first metric"),                         \
	FPT_OPT_BOOL("keep-launch-metadata", 0, &(a).keep_metadata,                              \
		     "keep Proton's __proton_launch_metadata frames (hidden by default)"),       \
	FPT_OPT_BOOL("full-names", 0, &(a).full_names,                                           \
		     "C++ kernel names in full (default: short, template arguments elided)")
/* clang-format on */

/** Defaults for the view options (depth 100). */
void fpt_view_args_init(struct fpt_view_args *a);

/**
 * Turn parsed options into library options. Returns FPT_CONTINUE, or FPT_EXIT_USAGE after
 * printing what is wrong (bad threshold, format or sort order) for command `cmd`.
 */
int fpt_view_args_apply(const char *cmd, const struct fpt_view_args *a, struct fp_view_options *o);

/**
 * Read the profile at `path` into *out. Prints a progress note on stderr for files over 64 MB
 * when stderr is a terminal; on failure prints "flagprism: error: FILE:LINE:COL: message" (and
 * a note when the file ends early) and returns FPT_EXIT_FAILURE; FPT_CONTINUE on success.
 * `info` may be NULL.
 */
int fpt_load_profile(const char *path, struct fp_calltree **out, struct fp_view_read_info *info);

/** Print the warning for a profile its meta file calls incomplete, or whose meta file could not
 *  be used (nothing when neither). */
void fpt_warn_incomplete(const char *path, const struct fp_view_read_info *info);

/**
 * Print a library failure of command `cmd`: FP_EINVAL (a bad metric, regex, threshold) is a
 * usage error (exit 2), anything else a failure (exit 1). Returns the exit code.
 */
int fpt_view_error(const char *cmd, int status, const struct fp_diag *diag);

/**
 * Explain why profiles cannot be combined (merge, diff): the first metric whose kind differs
 * between two of the `n` trees, as "metric 'M' is KIND in A but KIND in B" in `buf`. False when
 * every metric agrees.
 */
bool fpt_metric_kind_conflict(struct fp_calltree *const *trees, const char *const *paths, size_t n,
			      char *buf, size_t size);

/**
 * Check an output path option (-o): FPT_CONTINUE, or a usage error for an empty one.
 */
int fpt_check_output_option(const char *cmd, const char *path);

/** Whether output path `path` is this process's standard output ("-", /dev/stdout, or the file
 *  standard output is redirected to): summaries must then go elsewhere. */
bool fpt_output_is_stdout(const char *path);

#endif /* FLAGPRISM_TOOL_VIEW_COMMON_H */
