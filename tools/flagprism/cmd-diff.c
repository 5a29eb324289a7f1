/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `flagprism diff A B`: how profile B differs from profile A, node by node (B - A). Without -o
 * it prints the comparison view (`flagprism view A --diff B`, with the same view options);
 * with -o it writes the difference as a Hatchet profile (fp_calltree_diff()), which every
 * viewer can open. docs/cli/flagprism-diff.md is its manual.
 */
#include "view-common.h"

#include <string.h>

#include <flagprism/json.h>

static char out_buf[1 << 18];

int cmd_diff(int argc, char **argv)
{
	struct fpt_view_args va;
	const char *out_path = NULL;
	bool pretty = false;
	const struct fpt_option opts[] = {
		FPT_OPT_STRING("output", 'o', &out_path, "OUT",
			       "write B - A as a Hatchet profile to OUT ('-': standard output) "
			       "instead of printing the comparison"),
		FPT_OPT_BOOL("pretty", 0, &pretty, "with -o: indent the JSON"),
		FPT_VIEW_OPTIONS(va),
		FPT_OPT_END(),
	};
	struct fp_view_read_info ia, ib;
	struct fp_calltree *a = NULL, *b = NULL, *d = NULL;
	struct fp_view_options o;
	struct fp_view *v = NULL;
	struct fp_diag diag;
	int rc, nargs;

	setvbuf(stdout, out_buf, _IOFBF, sizeof(out_buf));
	fpt_view_args_init(&va);
	rc = fpt_parse_options(argc, argv, opts, 0, &nargs);
	if (rc != FPT_CONTINUE)
		return rc;
	if (nargs != 2)
		return nargs < 2 ? fpt_usage(argv[0], "expected two profiles A and B") :
				   fpt_usage(argv[0], "unexpected argument '%s'", argv[3]);
	rc = fpt_view_args_apply(argv[0], &va, &o);
	if (rc == FPT_CONTINUE)
		rc = fpt_check_output_option(argv[0], out_path);
	if (rc != FPT_CONTINUE)
		return rc;
	rc = fpt_load_profile(argv[1], &a, &ia);
	if (rc != FPT_CONTINUE)
		return rc;
	rc = fpt_load_profile(argv[2], &b, &ib);
	if (rc != FPT_CONTINUE)
		goto out;
	memset(&diag, 0, sizeof(diag));
	if (out_path) {
		rc = fp_calltree_diff(a, b, &d);
		if (rc == FP_EINVAL) {
			struct fp_calltree *both[2] = {a, b};
			const char *names[2] = {argv[1], argv[2]};
			char why[512];

			if (fpt_metric_kind_conflict(both, names, 2, why, sizeof(why)))
				rc = fpt_die("cannot diff: %s", why);
			else
				rc = fpt_die("cannot diff: the profiles disagree on the kind of a "
					     "metric");
			goto out;
		}
		if (rc == FP_OK)
			rc = fp_calltree_save_hatchet(d, out_path,
						      (pretty ? FP_JSONW_PRETTY : 0) |
							      FP_CALLTREE_SAVE_DASH_STDOUT,
						      &diag);
		rc = rc == FP_OK ? FPT_EXIT_OK :
				   fpt_die("%s", diag.msg[0] ? diag.msg : fp_strerror(rc));
	} else {
		rc = fp_view_new(a, b, &o, &v, &diag);
		if (rc != FP_OK) {
			rc = fpt_view_error(argv[0], rc, &diag);
			goto out;
		}
		printf("comparing %s (this) with %s (other): values are other - this\n", argv[1],
		       argv[2]);
		rc = fp_view_render(v, stdout);
		rc = rc == FP_OK ? FPT_EXIT_OK :
				   fpt_die("cannot write the view: %s", fp_strerror(rc));
	}
	fflush(stdout);
	fpt_warn_incomplete(argv[1], &ia);
	fpt_warn_incomplete(argv[2], &ib);
out:
	fp_view_free(v);
	fp_calltree_free(d);
	fp_calltree_free(b);
	fp_calltree_free(a);
	return rc;
}
