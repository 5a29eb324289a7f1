/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `flagprism merge A B ... -o OUT`: profiles of several processes or ranks (ours or Proton's)
 * into one tree over the union of their call paths, each summed metric M becoming the mean (or,
 * with --op sum, the sum) of the inputs plus "M (min)", "M (max)", "M (sum)" and the rank of the
 * max (fp_ranks_merge_op()), written as a Hatchet profile; or, given Chrome traces or the
 * Debugger's summaries, those merged across ranks (merge-ranks.c).
 * docs/cli/flagprism-merge.md is its manual.
 */
#include "view-common.h"

#include "merge-ranks.h"

#include <stdlib.h>
#include <string.h>

#include <flagprism/json.h>

/* More inputs than any job has ranks on one host, fewer than would exhaust file handles. */
#define MAX_INPUTS 4096

int cmd_merge(int argc, char **argv)
{
	const char *out_path = NULL, *op_name = NULL, *align = NULL;
	bool pretty = false, quiet = false, to_stdout;
	enum fp_merge_op op = FP_MERGE_MEAN;
	long world_opt = 0;
	const struct fpt_option opts[] = {
		FPT_OPT_STRING("output", 'o', &out_path, "OUT",
			       "the merged profile ('-' for standard output), trace, or summary "
			       "directory (required)"),
		FPT_OPT_STRING("op", 0, &op_name, "OP",
			       "profiles: 'mean' (a typical input; default) or 'sum' (all inputs "
			       "together)"),
		FPT_OPT_INT("world-size", 0, &world_opt, "N",
			    "ranks in the job (default: from the inputs); those without an input "
			    "are reported missing",
			    1, FP_RANKS_MAX),
		FPT_OPT_STRING("align", 0, &align, "HOW",
			       "traces: auto, clock, barrier or wall (default auto)"),
		FPT_OPT_BOOL("pretty", 0, &pretty, "indent the JSON"),
		FPT_OPT_BOOL("quiet", 'q', &quiet, "print no summary"),
		FPT_OPT_END(),
	};
	struct fp_calltree **in = NULL, *merged = NULL;
	struct fp_view_read_info info;
	struct fp_diag diag;
	enum fpt_merge_kind kind;
	int64_t *ranks = NULL, world = 0;
	char ranks_text[128];
	size_t n = 0, i, incomplete = 0;
	int rc, nargs;

	rc = fpt_parse_options(argc, argv, opts, 0, &nargs);
	if (rc != FPT_CONTINUE)
		return rc;
	if (nargs == 0)
		return fpt_usage(argv[0], "expected the profiles to merge");
	if (nargs > MAX_INPUTS)
		return fpt_usage(argv[0], "at most %d profiles can be merged at once", MAX_INPUTS);
	if (!out_path)
		return fpt_usage(argv[0], "option '--output OUT' is required");
	rc = fpt_check_output_option(argv[0], out_path);
	if (rc != FPT_CONTINUE)
		return rc;
	to_stdout = fpt_output_is_stdout(out_path);
	if (op_name && strcmp(op_name, "sum") == 0)
		op = FP_MERGE_SUM;
	else if (op_name && strcmp(op_name, "mean") != 0)
		return fpt_usage(argv[0], "option '--op' expects 'mean' or 'sum', not '%s'",
				 op_name);
	rc = fpt_merge_kind_of(argv[0], &argv[1], (size_t)nargs, &kind);
	if (rc != FPT_CONTINUE)
		return rc;
	if (align && kind != FPT_MERGE_TRACES)
		return fpt_usage(argv[0], "option '--align' applies to Chrome traces only");
	if (op_name && kind != FPT_MERGE_PROFILES)
		return fpt_usage(argv[0], "option '--op' applies to profiles only");
	if (to_stdout && kind != FPT_MERGE_PROFILES)
		return fpt_usage(argv[0], "'-o -' (standard output) applies to profiles only");
	if (world_opt && kind == FPT_MERGE_SUMMARIES)
		return fpt_usage(argv[0], "option '--world-size' applies to profiles and traces (a "
					  "summary says its world size)");
	if (kind == FPT_MERGE_TRACES)
		return fpt_merge_traces(&argv[1], (size_t)nargs, out_path, align, world_opt, pretty,
					quiet);
	if (kind == FPT_MERGE_SUMMARIES)
		return fpt_merge_summaries(&argv[1], (size_t)nargs, out_path, quiet);
	in = calloc((size_t)nargs, sizeof(*in));
	ranks = calloc((size_t)nargs, sizeof(*ranks));
	if (!in || !ranks) {
		free(in);
		free(ranks);
		return fpt_die("out of memory");
	}
	rc = fpt_merge_profile_ranks(&argv[1], (size_t)nargs, world_opt, ranks, &world);
	if (rc != FPT_CONTINUE)
		goto out;
	for (i = 0; i < (size_t)nargs; i++) {
		rc = fpt_load_profile(argv[1 + i], &in[i], &info);
		if (rc != FPT_CONTINUE)
			goto out;
		n++;
		fpt_warn_incomplete(argv[1 + i], &info);
		incomplete += info.incomplete;
	}
	memset(&diag, 0, sizeof(diag));
	rc = fp_ranks_merge_op(in, ranks, n, world, op, &merged);
	if (rc == FP_EINVAL) {
		char why[512];

		if (fpt_metric_kind_conflict(in, (const char *const *)&argv[1], n, why,
					     sizeof(why)))
			rc = fpt_die("cannot merge: %s", why);
		else
			rc = fpt_die("cannot merge: the profiles disagree on the kind of a metric");
		goto out;
	}
	if (rc == FP_OK)
		rc = fp_calltree_save_hatchet(
			merged, out_path,
			(pretty ? FP_JSONW_PRETTY : 0) | FP_CALLTREE_SAVE_DASH_STDOUT, &diag);
	if (rc != FP_OK) {
		rc = fpt_die("%s", diag.msg[0] ? diag.msg : fp_strerror(rc));
		goto out;
	}
	fpt_merge_warn_missing(ranks, n, world, "profile");
	{
		int64_t *sorted = calloc(n, sizeof(*sorted));
		size_t k, j;

		ranks_text[0] = '\0';
		for (k = 0; sorted && k < n; k++) {
			for (j = k; j > 0 && sorted[j - 1] > ranks[k]; j--)
				sorted[j] = sorted[j - 1];
			sorted[j] = ranks[k];
		}
		if (sorted)
			fp_ranks_format(sorted, n, ranks_text, sizeof(ranks_text));
		free(sorted);
	}
	/* With -o - the profile is standard output: the summary goes to stderr. */
	if (!quiet)
		fprintf(to_stdout ? stderr : stdout,
			"merged %zu profile%s (rank%s %s of world size %lld) into %s (%s): %zu "
			"nodes%s\n",
			n, n == 1 ? "" : "s", n == 1 ? "" : "s", ranks_text, (long long)world,
			to_stdout ? "standard output" : out_path,
			op == FP_MERGE_SUM ? "sum" : "mean", fp_calltree_node_count(merged),
			incomplete ? " (some inputs are incomplete)" : "");
	rc = FPT_EXIT_OK;
out:
	fp_calltree_free(merged);
	for (i = 0; i < n; i++)
		fp_calltree_free(in[i]);
	free(in);
	free(ranks);
	return rc;
}
