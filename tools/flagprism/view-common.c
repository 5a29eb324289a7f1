/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The parts `flagprism view`, `diff` and `merge` share: the view options, and opening a profile
 * the same way everywhere (a one-line progress note for large files on a terminal, errors as
 * "FILE:LINE:COL: message", a note when a file ends early, a warning for profiles their meta
 * file calls incomplete). The work itself is the library's (include/flagprism/view.h).
 */
#include "view-common.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROGRESS_BYTES ((long long)64 << 20)

void fpt_view_args_init(struct fpt_view_args *a)
{
	memset(a, 0, sizeof(*a));
	a->depth = FP_VIEW_DEFAULT_DEPTH;
}

/* "0.05", "5%" -> 0.05; false for anything else or a value outside [0, 1]. */
static bool parse_fraction(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return false;
	if (*end == '%') {
		v /= 100;
		end++;
	}
	if (*end || v < 0 || v > 1)
		return false;
	*out = v;
	return true;
}

int fpt_view_args_apply(const char *cmd, const struct fpt_view_args *a, struct fp_view_options *o)
{
	fp_view_options_init(o);
	o->metrics = a->metrics;
	o->max_depth = (uint32_t)a->depth;
	o->include = a->include;
	o->exclude = a->exclude;
	o->print_sorted = a->print_sorted;
	o->keep_launch_metadata = a->keep_metadata;
	o->full_names = a->full_names;
	if (a->threshold && !parse_fraction(a->threshold, &o->threshold))
		return fpt_usage(cmd,
				 "option '--threshold' expects a share of the root between 0 and 1 "
				 "(0.01 or 1%%), not '%s'",
				 a->threshold);
	if (a->format && fp_view_format_parse(a->format, &o->format) != FP_OK)
		return fpt_usage(
			cmd,
			"option '--format' expects full, file_function_line, function_line "
			"or file_function, not '%s'",
			a->format);
	if (a->sort) {
		if (strcmp(a->sort, "value") == 0)
			o->sort = FP_VIEW_SORT_VALUE;
		else if (strcmp(a->sort, "name") == 0)
			o->sort = FP_VIEW_SORT_NAME;
		else
			return fpt_usage(cmd, "option '--sort' expects 'value' or 'name', not '%s'",
					 a->sort);
	}
	return FPT_CONTINUE;
}

int fpt_load_profile(const char *path, struct fp_calltree **out, struct fp_view_read_info *info)
{
	struct fp_view_read_info local;
	struct fp_diag diag;
	struct stat st;
	int rc;

	if (!info)
		info = &local;
	memset(&diag, 0, sizeof(diag));
	if (stat(path, &st) == 0 && st.st_size > PROGRESS_BYTES && isatty(STDERR_FILENO)) {
		fprintf(stderr, "flagprism: reading %s (%lld MB)...\n", path,
			(long long)st.st_size >> 20);
		fflush(stderr);
	}
	rc = fp_view_read_profile(path, NULL, 0, out, info, &diag);
	if (rc == FP_OK)
		return FPT_CONTINUE;
	fflush(stdout);
	if (diag.msg[0])
		fprintf(stderr, "flagprism: error: %s\n", diag.msg);
	else
		fprintf(stderr, "flagprism: error: %s: %s\n", path, fp_strerror(rc));
	if (rc == FP_EFORMAT && info->hatchet.truncated)
		fprintf(stderr,
			"flagprism: note: %s ends early: the profile is incomplete (written by a "
			"process that did not finish?)\n",
			path);
	fpt_warn_incomplete(path, info);
	return FPT_EXIT_FAILURE;
}

void fpt_warn_incomplete(const char *path, const struct fp_view_read_info *info)
{
	if (info->incomplete)
		fpt_warn("%s: the profile is incomplete: %s", path,
			 info->reasons[0] ? info->reasons : "no reason recorded");
	if (info->meta_warning[0])
		fpt_warn("ignoring the meta file: %s", info->meta_warning);
}

int fpt_view_error(const char *cmd, int status, const struct fp_diag *diag)
{
	const char *msg = diag && diag->msg[0] ? diag->msg : fp_strerror(status);

	if (status == FP_EINVAL)
		return fpt_usage(cmd, "%s", msg);
	return fpt_die("%s", msg);
}

static const char *kind_words(enum fp_metric_kind k)
{
	switch (k) {
	case FP_METRIC_INCLUSIVE:
		return "a number summed over subtrees (inclusive)";
	case FP_METRIC_EXCLUSIVE:
		return "a number of the node alone (exclusive)";
	case FP_METRIC_PROPERTY:
		return "a property (text or a value not summed)";
	case FP_METRIC_MIN:
		return "a minimum";
	case FP_METRIC_MAX:
		return "a maximum";
	}
	return "of an unknown kind";
}

bool fpt_metric_kind_conflict(struct fp_calltree *const *trees, const char *const *paths, size_t n,
			      char *buf, size_t size)
{
	size_t i, j;
	uint32_t m, k;

	for (i = 0; i < n; i++) {
		for (m = 0; m < fp_calltree_metric_count(trees[i]); m++) {
			enum fp_metric_kind ki, kj;
			size_t li, lj;
			const char *ni = fp_calltree_metric_name(trees[i], m, &li, &ki);

			for (j = i + 1; j < n; j++) {
				for (k = 0; k < fp_calltree_metric_count(trees[j]); k++) {
					const char *nj =
						fp_calltree_metric_name(trees[j], k, &lj, &kj);

					if (li != lj || memcmp(ni, nj, li) != 0 || ki == kj)
						continue;
					snprintf(buf, size,
						 "metric '%.*s' is %s in %s but %s in %s",
						 (int)(li < 200 ? li : 200), ni, kind_words(ki),
						 paths[i], kind_words(kj), paths[j]);
					return true;
				}
			}
		}
	}
	return false;
}

int fpt_check_output_option(const char *cmd, const char *path)
{
	if (path && !path[0])
		return fpt_usage(cmd,
				 "option '--output' needs a path (or '-' for standard output)");
	return FPT_CONTINUE;
}

bool fpt_output_is_stdout(const char *path)
{
	struct stat a, b;

	if (!strcmp(path, "-"))
		return true;
	return stat(path, &a) == 0 && fstat(STDOUT_FILENO, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}
