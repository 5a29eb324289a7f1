/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `flagprism version` (and `flagprism --version`): the version of this command and of the
 * library it is linked with. It says nothing about Python or the installed packages; that is
 * `flagprism doctor`'s job.
 */
#include "tool.h"

#include <flagprism/json.h>
#include <flagprism/version.h>

int cmd_version(int argc, char **argv)
{
	bool json = false;
	const struct fpt_option opts[] = {
		FPT_OPT_BOOL("json", 0, &json, "print a JSON object"),
		FPT_OPT_END(),
	};
	struct fp_jsonw *w;
	int rc, nargs;

	rc = fpt_parse_options(argc, argv, opts, 0, &nargs);
	if (rc != FPT_CONTINUE)
		return rc;
	if (nargs > 0)
		return fpt_usage(argv[0], "unexpected argument '%s'", argv[1]);
	if (!json) {
		printf("flagprism %s\n", FP_VERSION_STRING);
		return FPT_EXIT_OK;
	}
	w = fp_jsonw_new_file(stdout, 0);
	if (!w)
		return fpt_status_error(FP_ENOMEM, NULL, NULL, "cannot write JSON");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "version", FP_VERSION_STRING);
	/* The library is linked statically, but say which one: they could differ one day. */
	fp_jsonw_kv_string(w, "library_version", fp_version_string());
	fp_jsonw_object_end(w);
	rc = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	if (rc != FP_OK)
		return fpt_status_error(rc, NULL, NULL, "cannot write JSON");
	putchar('\n');
	return FPT_EXIT_OK;
}
