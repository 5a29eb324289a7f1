/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `flagprism profile`: run a Python script (or pytest) with a profiling session open from the
 * first line to the last. This file checks the options and replaces itself with the Python
 * interpreter running the bootstrap module flagprism._run, which starts the session, runs the
 * program (calls to start()/finalize() inside it are then no-ops), writes the profile even when
 * the program fails, prints where it went and exits with the program's status. Nothing is
 * profiled here: the session lives in the Python process.
 */
#include "tool.h"

#include <string.h>

const char cmd_profile_summary[] = "run a Python script or pytest under the profiler";
const char cmd_profile_usage[] =
	"flagprism profile [-n NAME] [-c CONTEXT] [-d DATA] [-b BACKEND] [-k HOOK] SCRIPT [ARGS...]\n"
	"flagprism profile [OPTIONS] pytest [PYTEST-ARGS...]";

/* FPT_CONTINUE when `value` is one of `choices` (NULL-terminated), else a usage error. */
static int check_choice(const char *cmd, const char *opt, const char *value,
			const char *const *choices)
{
	const char *best = NULL;
	unsigned bestd = ~0u, d;
	size_t i;

	for (i = 0; choices[i]; i++) {
		if (strcmp(value, choices[i]) == 0)
			return FPT_CONTINUE;
		d = fpt_edit_distance(value, choices[i]);
		if (d < bestd) {
			bestd = d;
			best = choices[i];
		}
	}
	if (best && fpt_close_enough(value, best, bestd))
		return fpt_usage(cmd, "option '%s' does not take '%s' (did you mean '%s'?)", opt,
				 value, best);
	return fpt_usage(cmd, "option '%s' takes %s%s%s, not '%s'", opt, choices[0],
			 choices[1] ? " or " : "", choices[1] ? choices[1] : "", value);
}

int cmd_profile(int argc, char **argv)
{
	static const char *const contexts[] = {"shadow", "python", NULL};
	static const char *const datas[] = {"tree", "trace", NULL};
	static const char *const hooks[] = {"triton", NULL};
	const char *name = "flagprism", *context = "shadow", *data = "tree", *backend = NULL;
	const char *hook = NULL;
	const struct fpt_option opts[] = {
		FPT_OPT_STRING("name", 'n', &name, "NAME",
			       "output path without suffix (default: flagprism)"),
		FPT_OPT_STRING("context", 'c', &context, "CONTEXT",
			       "shadow (scopes only, default) or python (call paths)"),
		FPT_OPT_STRING("data", 'd', &data, "DATA",
			       "tree (NAME.hatchet, default) or trace (also a Chrome trace)"),
		FPT_OPT_STRING("backend", 'b', &backend, "BACKEND",
			       "host or cupti (default: picked for the device)"),
		FPT_OPT_STRING("hook", 'k', &hook, "HOOK",
			       "triton: record each kernel's launch_metadata values"),
		FPT_OPT_END(),
	};
	const char *words[11];
	size_t n = 0;
	int rc, nargs;

	rc = fpt_parse_options(argc, argv, opts, FPT_PARSE_STOP_AT_POSITIONAL, &nargs);
	if (rc != FPT_CONTINUE)
		return rc;
	if (nargs == 0)
		return fpt_usage(argv[0], "missing the script to run (or 'pytest')");
	if (!name[0])
		return fpt_usage(argv[0], "option '--name' needs a non-empty path");
	rc = check_choice(argv[0], "--context", context, contexts);
	if (rc == FPT_CONTINUE)
		rc = check_choice(argv[0], "--data", data, datas);
	if (rc == FPT_CONTINUE && hook)
		rc = check_choice(argv[0], "--hook", hook, hooks);
	if (rc != FPT_CONTINUE)
		return rc;
	if (backend && !backend[0])
		return fpt_usage(argv[0], "option '--backend' needs a name");
	words[n++] = "profile";
	words[n++] = "--name";
	words[n++] = name;
	words[n++] = "--context";
	words[n++] = context;
	words[n++] = "--data";
	words[n++] = data;
	if (backend) {
		words[n++] = "--backend";
		words[n++] = backend;
	}
	if (hook) {
		words[n++] = "--hook";
		words[n++] = hook;
	}
	return fpt_python_run_tool(words, n, &argv[1], nargs);
}
