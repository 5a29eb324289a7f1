/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `flagprism merge A B ... -o OUT`: profiles of several processes or ranks (ours or Proton's)
 * into one tree over the union of their call paths, each summed metric M becoming the mean (or,
 * with --op sum, the sum) of the inputs plus "M (min)" and "M (max)" (fp_calltree_merge_op()),
 * written as a Hatchet profile.
 * docs/cli/flagprism-merge.md is its manual.
 */
#include "view-common.h"

#include <stdlib.h>
#include <string.h>

#include <flagprism/json.h>

/* More inputs than any job has ranks on one host, fewer than would exhaust file handles. */
#define MAX_INPUTS 4096

int cmd_merge(int argc, char **argv)
{
	const char *out_path = NULL, *op_name = NULL;
	bool pretty = false, quiet = false, to_stdout;
	enum fp_merge_op op = FP_MERGE_MEAN;
	const struct fpt_option opts[] = {
		FPT_OPT_STRING("output", 'o', &out_path, "OUT",
			       "the merged profile (required; '-' for standard output)"),
		FPT_OPT_STRING("op", 0, &op_name, "OP",
			       "'mean' (a typical input; default) or 'sum' (all inputs together)"),
		FPT_OPT_BOOL("pretty", 0, &pretty, "indent the JSON"),
		FPT_OPT_BOOL("quiet", 'q', &quiet, "print no summary"),
		FPT_OPT_END(),
	};
	struct fp_calltree **in = NULL, *merged = NULL;
	struct fp_view_read_info info;
	struct fp_diag diag;
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
	in = calloc((size_t)nargs, sizeof(*in));
	if (!in)
		return fpt_die("out of memory");
	for (i = 0; i < (size_t)nargs; i++) {
		rc = fpt_load_profile(argv[1 + i], &in[i], &info);
		if (rc != FPT_CONTINUE)
			goto out;
		n++;
		fpt_warn_incomplete(argv[1 + i], &info);
		incomplete += info.incomplete;
	}
	memset(&diag, 0, sizeof(diag));
	rc = fp_calltree_merge_op(in, n, op, &merged);
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
	/* With -o - the profile is standard output: the summary goes to stderr. */
	if (!quiet)
		fprintf(to_stdout ? stderr : stdout, "merged %zu profile%s into %s (%s): %zu nodes%s\n",
			n, n == 1 ? "" : "s", to_stdout ? "standard output" : out_path,
			op == FP_MERGE_SUM ? "sum" : "mean", fp_calltree_node_count(merged),
			incomplete ? " (some inputs are incomplete)" : "");
	rc = FPT_EXIT_OK;
out:
	fp_calltree_free(merged);
	for (i = 0; i < n; i++)
		fp_calltree_free(in[i]);
	free(in);
	return rc;
}
