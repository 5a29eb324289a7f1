/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `flagprism debug`: run a Python script (or pytest) with the Debugger active from its first
 * line to its last. With --sanitize every load and store of every kernel is observed (address
 * summaries, no markers needed) and only the findings are reported; the command then exits
 * non-zero when any finding exists, so it can gate CI; with --strict it also exits non-zero when a
 * launch could not be observed. This file checks the options and replaces
 * itself with the Python interpreter running the shared bootstrap flagprism._run with the
 * `debug` tool (flagprism.debugger._cli_begin/_cli_end), which prints where the reports went.
 * Nothing is instrumented or decoded here.
 */
#include "tool.h"

#include <string.h>

const char cmd_debug_summary[] = "run a Python script or pytest under the Debugger";
const char cmd_debug_usage[] =
	"flagprism debug [--level N] [--addr-level N] [-o DIR] [--sanitize] [--strict]\n"
	"                [--export-on-error] [--record-capacity N] SCRIPT [ARGS...]\n"
	"flagprism debug [OPTIONS] pytest [PYTEST-ARGS...]";

int cmd_debug(int argc, char **argv)
{
	long level = 1, addr_level = 1;
	const char *out = "fp_debug";
	bool sanitize = false, strict = false, export_on_error = false;
	long record_capacity = -1;
	const struct fpt_option opts[] = {
		FPT_OPT_INT("level", 0, &level, "N",
			    "0 no values, 1 value summaries (default), 2 also every element", 0, 2),
		FPT_OPT_INT("addr-level", 0, &addr_level, "N",
			    "0 no addresses, 1 address summaries (default), 2 also every lane", 0,
			    2),
		FPT_OPT_STRING("output", 'o', &out, "DIR",
			       "directory for the reports (default: fp_debug)"),
		FPT_OPT_BOOL(
			"sanitize", 0, &sanitize,
			"observe every load/store of every kernel, report findings only, exit 3 "
			"when there is any"),
		FPT_OPT_BOOL("strict", 0, &strict,
			     "exit 4 when a launch the Debugger was asked to observe could not be "
			     "(graph replays, failed instrumentation, unhooked launch paths)"),
		FPT_OPT_BOOL("export-on-error", 0, &export_on_error,
			     "when a kernel raises, still write the records it made (marked partial)"),
		FPT_OPT_INT("record-capacity", 0, &record_capacity, "N",
			    "records of one launch (default: sized from the launch); what does not "
			    "fit is counted as overflow",
			    0, 1L << 40),
		FPT_OPT_END(),
	};
	char level_s[8], addr_s[8], cap_s[24];
	const char *words[17];
	int rc, nargs;

	rc = fpt_parse_options(argc, argv, opts, FPT_PARSE_STOP_AT_POSITIONAL, &nargs);
	if (rc != FPT_CONTINUE)
		return rc;
	if (nargs == 0)
		return fpt_usage(argv[0], "missing the script to run (or 'pytest')");
	if (!out[0])
		return fpt_usage(argv[0], "option '--output' needs a non-empty directory");
	snprintf(level_s, sizeof(level_s), "%ld", level);
	snprintf(addr_s, sizeof(addr_s), "%ld", addr_level);
	words[0] = "debug";
	words[1] = "--level";
	words[2] = level_s;
	words[3] = "--addr-level";
	words[4] = addr_s;
	words[5] = "--output";
	words[6] = out;
	words[7] = "--sanitize";
	words[8] = sanitize ? "1" : "0";
	words[9] = "--strict";
	words[10] = strict ? "1" : "0";
	words[11] = "--export-on-error";
	words[12] = export_on_error ? "1" : "0";
	cap_s[0] = '\0';
	if (record_capacity >= 0)
		snprintf(cap_s, sizeof(cap_s), "%ld", record_capacity);
	words[13] = "--record-capacity";
	words[14] = cap_s;
	return fpt_python_run_tool(words, 15, &argv[1], nargs);
}
