/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `flagprism view FILE`: a profile's call tree in the terminal, with raw and derived metrics
 * (proton-viewer's flags and metric names), or `--list` of what the file offers, or with
 * `--diff OTHER` the comparison "other - this". Reading, evaluating and rendering are the
 * library's (include/flagprism/view.h); this file reads the command line and reports.
 * docs/cli/flagprism-view.md is its manual.
 */
#include "view-common.h"

#include <string.h>

#include <flagprism/ranks.h>
#include <flagprism/roofline.h>
#include <flagprism/timeline.h>

/* Big blocks for the tree text: a million-line view should not cost a million writes. */
static char out_buf[1 << 18];

int cmd_view(int argc, char **argv)
{
	struct fpt_view_args va;
	const char *other_path = NULL;
	bool list = false, roofline = false, ranks = false;
	const struct fpt_option opts[] = {
		FPT_OPT_BOOL("list", 'l', &list, "list the metrics, derived metrics and devices"),
		FPT_OPT_BOOL("roofline", 0, &roofline,
			     "roofline position of the kernels taking most time (FLOP/s, bytes/s, "
			     "intensity, roof, bound)"),
		FPT_OPT_BOOL("ranks", 0, &ranks,
			     "a profile merged across ranks: per node mean, min, max, max/mean "
			     "and the rank of the max of one metric (-m NAME, default time), and "
			     "the straggler"),
		FPT_VIEW_OPTIONS(va),
		FPT_OPT_STRING("diff", 0, &other_path, "OTHER",
			       "compare with profile OTHER: show OTHER - FILE per node"),
		FPT_OPT_STRING("diff-profile", 0, &other_path, "OTHER", "the same as --diff"),
		FPT_OPT_END(),
	};
	struct fp_view_read_info info, other_info;
	struct fp_calltree *t = NULL, *other = NULL;
	struct fp_view_options o;
	struct fp_view *v = NULL;
	struct fp_diag diag;
	int rc, nargs;

	setvbuf(stdout, out_buf, _IOFBF, sizeof(out_buf));
	fpt_view_args_init(&va);
	rc = fpt_parse_options(argc, argv, opts, 0, &nargs);
	if (rc != FPT_CONTINUE)
		return rc;
	if (nargs == 0)
		return fpt_usage(argv[0], "expected a profile FILE");
	if (nargs > 1)
		return fpt_usage(argv[0], "unexpected argument '%s'", argv[2]);
	rc = fpt_view_args_apply(argv[0], &va, &o);
	if (rc != FPT_CONTINUE)
		return rc;

	rc = fpt_load_profile(argv[1], &t, &info);
	if (rc != FPT_CONTINUE)
		return rc;
	if (other_path && !list) {
		rc = fpt_load_profile(other_path, &other, &other_info);
		if (rc != FPT_CONTINUE)
			goto out;
	}
	if (list) {
		rc = fp_view_list_metrics(t, stdout) == FP_OK ? FPT_EXIT_OK :
								fpt_die("cannot write the list");
		goto warn;
	}
	if (ranks) {
		struct fp_ranks_view_options ro;

		if (other || roofline) {
			rc = fpt_usage(argv[0],
				       "option '--ranks' excludes '--diff' and '--roofline'");
			goto out;
		}
		memset(&ro, 0, sizeof(ro));
		ro.metric = va.metrics;
		ro.max_depth = o.max_depth;
		ro.threshold = o.threshold;
		ro.include = o.include;
		ro.exclude = o.exclude;
		ro.format = (int)o.format;
		ro.sort_by_name = o.sort == FP_VIEW_SORT_NAME;
		memset(&diag, 0, sizeof(diag));
		rc = fp_ranks_view_render(t, &ro, stdout, &diag);
		rc = rc == FP_OK ? FPT_EXIT_OK : fpt_view_error(argv[0], rc, &diag);
		goto warn;
	}
	if (roofline) {
		if (other) {
			rc = fpt_usage(argv[0],
				       "options '--roofline' and '--diff' exclude each other");
			goto out;
		}
		rc = fp_roofline_render(t, 30, va.full_names, stdout) == FP_OK ?
			     FPT_EXIT_OK :
			     fpt_die("cannot write the roofline");
		goto warn;
	}
	memset(&diag, 0, sizeof(diag));
	rc = fp_view_new(t, other, &o, &v, &diag);
	if (rc != FP_OK) {
		rc = fpt_view_error(argv[0], rc, &diag);
		goto out;
	}
	if (other)
		printf("comparing %s (this) with %s (other): values are other - this\n", argv[1],
		       other_path);
	rc = fp_view_render(v, stdout);
	if (rc == FP_OK && !other) /* the intra-kernel section, when the profile has timelines */
		rc = fp_view_timeline_summary(t, stdout);
	rc = rc == FP_OK ? FPT_EXIT_OK : fpt_die("cannot write the view: %s", fp_strerror(rc));
warn:
	fflush(stdout);
	fpt_warn_incomplete(argv[1], &info);
	if (other)
		fpt_warn_incomplete(other_path, &other_info);
out:
	fp_view_free(v);
	fp_calltree_free(other);
	fp_calltree_free(t);
	return rc;
}
