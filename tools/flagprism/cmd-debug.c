/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `flagprism debug`: run a Python script (or pytest) with the Debugger active from its first
 * line to its last. With --sanitize every load and store of every kernel is observed (address
 * summaries, no markers needed) and only the findings are reported; the command then exits
 * non-zero when any finding exists, so it can gate CI. This file checks the options and replaces
 * itself with the Python interpreter running the shared bootstrap flagprism._run with the
 * `debug` tool (flagprism.debugger._cli_begin/_cli_end), which prints where the reports went.
 * Nothing is instrumented or decoded here.
 */
#include "tool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cmd_debug_summary[] = "run a Python script or pytest under the Debugger";
const char cmd_debug_usage[] =
	"flagprism debug [--level N] [--addr-level N] [-o DIR] [--sanitize] SCRIPT [ARGS...]\n"
	"flagprism debug [OPTIONS] pytest [PYTEST-ARGS...]";

/* As in cmd-profile.c: drop '' (the current directory) from sys.path, then hand over. */
static const char bootstrap[] = "import sys\n"
				"if sys.path and sys.path[0] == '':\n"
				"    del sys.path[0]\n"
				"from flagprism._run import main\n"
				"main()\n";

int cmd_debug(int argc, char **argv)
{
	long level = 1, addr_level = 1;
	const char *out = "fp_debug";
	bool sanitize = false;
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
		FPT_OPT_END(),
	};
	char level_s[8], addr_s[8];
	const char **args;
	struct fpt_python py;
	size_t n = 0;
	int rc, nargs, i;

	rc = fpt_parse_options(argc, argv, opts, FPT_PARSE_STOP_AT_POSITIONAL, &nargs);
	if (rc != FPT_CONTINUE)
		return rc;
	if (nargs == 0)
		return fpt_usage(argv[0], "missing the script to run (or 'pytest')");
	if (!out[0])
		return fpt_usage(argv[0], "option '--output' needs a non-empty directory");
	if (strcmp(argv[1], "pytest") != 0 && access(argv[1], R_OK) != 0)
		return fpt_die("cannot read script '%s': %s", argv[1], strerror(errno));
	rc = fpt_python_find(&py);
	if (rc != FP_OK)
		return fpt_die("%s", py.error);
	snprintf(level_s, sizeof(level_s), "%ld", level);
	snprintf(addr_s, sizeof(addr_s), "%ld", addr_level);
	/* Our 13 words, the program's arguments, and a spare. */
	args = calloc((size_t)nargs + 16, sizeof(*args));
	if (!args)
		return fpt_die("out of memory");
	args[n++] = "-c";
	args[n++] = bootstrap;
	args[n++] = "debug";
	args[n++] = "--level";
	args[n++] = level_s;
	args[n++] = "--addr-level";
	args[n++] = addr_s;
	args[n++] = "--output";
	args[n++] = out;
	args[n++] = "--sanitize";
	args[n++] = sanitize ? "1" : "0";
	args[n++] = "--";
	for (i = 1; i <= nargs; i++)
		args[n++] = argv[i];
	fpt_python_exec(&py, args, n);
	free(args);
	return fpt_die("%s", py.error);
}
