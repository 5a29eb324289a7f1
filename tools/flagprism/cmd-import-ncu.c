/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `flagprism import-ncu REPORT.csv --into PROFILE.hatchet`: attach what `ncu --csv` measured
 * to the kernel nodes of a FlagPrism (or Proton) profile and keep the rest in a vendor file.
 * This file only reads the command line; import-ncu.c does the work, which `flagprism profile
 * --ncu` shares. docs/cli/flagprism-import-ncu.md is its manual.
 */
#include "tool.h"

#include <string.h>

#include "import-ncu.h"
#include "view-common.h"

int cmd_import_ncu(int argc, char **argv)
{
	struct fpt_ncu_import o;
	const struct fpt_option opts[] = {
		FPT_OPT_STRING("into", 'i', &o.into, "FILE",
			       "the profile (.hatchet) to attach the metrics to (required)"),
		FPT_OPT_STRING("output", 'o', &o.out, "FILE",
			       "write the profile there ('-': standard output, without the "
			       "summary; default: replace the --into file)"),
		FPT_OPT_STRING("trace", 't', &o.trace, "FILE",
			       "Chrome trace giving the launch order (default: the profile's own "
			       "<name>.chrome_trace.json when it exists)"),
		FPT_OPT_BOOL("no-trace", 0, &o.no_trace,
			     "ignore any trace: match launches by node counts"),
		FPT_OPT_STRING("vendor-json", 0, &o.vendor, "FILE",
			       "vendor file (default: <output name>.vendor.json)"),
		FPT_OPT_BOOL("json", 0, &o.json, "print the summary as a JSON object"),
		FPT_OPT_BOOL("quiet", 'q', &o.quiet, "print no summary"),
		FPT_OPT_END(),
	};
	int rc, nargs;

	memset(&o, 0, sizeof(o));
	rc = fpt_parse_options(argc, argv, opts, 0, &nargs);
	if (rc != FPT_CONTINUE)
		return rc;
	if (nargs == 0)
		return fpt_usage(argv[0], "expected the Nsight Compute CSV file");
	if (nargs > 1)
		return fpt_usage(argv[0], "unexpected argument '%s'", argv[2]);
	if (!o.into)
		return fpt_usage(argv[0], "option '--into PROFILE.hatchet' is required");
	rc = fpt_check_output_option(argv[0], o.out);
	if (rc != FPT_CONTINUE)
		return rc;
	if (o.trace && o.no_trace)
		return fpt_usage(argv[0], "options '--trace' and '--no-trace' exclude each other");
	o.csv = argv[1];
	return fpt_ncu_import(&o);
}
