/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `flagprism profile`: run a Python script (or pytest) with a profiling session open from the
 * first line to the last. This file checks the options and replaces itself with the Python
 * interpreter running the bootstrap module flagprism._run, which starts the session, runs the
 * program (calls to start()/finalize() inside it are then no-ops), writes the profile even when
 * the program fails, prints where it went and exits with the program's status. Nothing is
 * profiled here: the session lives in the Python process. With --ncu the same Python command
 * runs under Nsight Compute instead (fp_ncu_command_argv()), and the CSV it writes is imported
 * into the profile afterwards (fpt_ncu_import(), as `flagprism import-ncu` does).
 */
#include "tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/alloc.h>
#include <flagprism/prof.h>

#include "import-ncu.h"
#include "merge-ranks.h"

#define MAX_NCU_ARGS 64

const char cmd_profile_summary[] = "run a Python script or pytest under the profiler";
const char cmd_profile_usage[] =
	"flagprism profile [-n NAME] [-c CONTEXT] [-d DATA] [-b BACKEND] [-k HOOK] [-m METRICS]\n"
	"                  SCRIPT [ARGS...]\n"
	"flagprism profile [OPTIONS] pytest [PYTEST-ARGS...]\n"
	"flagprism profile --ncu [--ncu-metrics LIST] [--ncu-args ARGS] [--ncu-path NCU] [OPTIONS]\n"
	"                  SCRIPT [ARGS...]\n"
	"flagprism profile --mode pcsampling [--sampling-period N] [OPTIONS] SCRIPT [ARGS...]";

/* FPT_CONTINUE when `value` is one of the library's names (name_at(0), name_at(1), ... until
 * NULL: fp_prof_context_name and its neighbours), else a usage error. */
static int check_choice(const char *cmd, const char *opt, const char *value,
			const char *(*name_at)(unsigned))
{
	const char *best = NULL, *c;
	unsigned bestd = ~0u, d, i;

	for (i = 0; (c = name_at(i)); i++) {
		if (strcmp(value, c) == 0)
			return FPT_CONTINUE;
		d = fpt_edit_distance(value, c);
		if (d < bestd) {
			bestd = d;
			best = c;
		}
	}
	if (best && fpt_close_enough(value, best, bestd))
		return fpt_usage(cmd, "option '%s' does not take '%s' (did you mean '%s'?)", opt,
				 value, best);
	return fpt_usage(cmd, "option '%s' takes %s%s%s, not '%s'", opt, name_at(0),
			 name_at(1) ? " or " : "", name_at(1) ? name_at(1) : "", value);
}

/*
 * Run the Python command under ncu and import its CSV into the profile. The script's own
 * failure wins the exit status; otherwise the import's.
 */
static int run_ncu(const char *cmd, const char *name, const char *const *words, size_t nwords,
		   char *const *prog, int nprog, const char *ncu, const char *metrics,
		   const char *extra)
{
	struct fpt_python py;
	struct fp_ncu_command c;
	struct fpt_ncu_import im;
	const char **target = NULL, **all = NULL;
	char **argv = NULL, *extra_copy = NULL, *tok, *save = NULL;
	char csv[FPT_PATH_MAX], hatchet[FPT_PATH_MAX];
	size_t ntarget, nargv, n = 0, i, first_target;
	int rc, status = 0, signalled = 0;

	char ranked[FPT_PATH_MAX]; /* the Python layer names each rank's files the same way */

	if (!fpt_rank_output_name(name, ranked, sizeof(ranked)) ||
	    (size_t)snprintf(csv, sizeof(csv), "%s.ncu.csv", ranked) >= sizeof(csv) ||
	    (size_t)snprintf(hatchet, sizeof(hatchet), "%s.hatchet", ranked) >= sizeof(hatchet))
		return fpt_usage(cmd, "option '--name' is too long");
	rc = fpt_python_tool_argv(&py, words, nwords, prog, nprog, &target, &ntarget);
	if (rc != FPT_CONTINUE)
		return rc;
	memset(&c, 0, sizeof(c));
	c.ncu = ncu;
	c.log_file = csv;
	c.metrics = metrics;
	if (fp_ncu_command_argv(&c, target, ntarget, &argv, &nargv) != FP_OK) {
		free(target);
		return fpt_die("cannot build the ncu command line");
	}
	/* Splice --ncu-args in front of the target. */
	all = calloc(nargv + MAX_NCU_ARGS + 1, sizeof(*all));
	extra_copy = extra ? strdup(extra) : NULL;
	if (!all || (extra && !extra_copy)) {
		rc = fpt_die("out of memory");
		goto out;
	}
	first_target = nargv - ntarget;
	for (i = 0; i < first_target; i++)
		all[n++] = argv[i];
	for (tok = extra_copy ? strtok_r(extra_copy, " \t", &save) : NULL; tok;
	     tok = strtok_r(NULL, " \t", &save)) {
		if (n - first_target >= MAX_NCU_ARGS) {
			rc = fpt_usage(cmd, "option '--ncu-args' has more than %d words",
				       MAX_NCU_ARGS);
			goto out;
		}
		all[n++] = tok;
	}
	for (i = first_target; i < nargv; i++)
		all[n++] = argv[i];
	all[n] = NULL;
	remove(csv);
	if (fpt_ncu_run((char *const *)all, &status, &signalled) != FP_OK) {
		rc = FPT_EXIT_FAILURE;
		goto out;
	}
	if (status != 0)
		fprintf(stderr, "flagprism: %s exited with status %d; importing what it wrote\n",
			all[0], status);
	memset(&im, 0, sizeof(im));
	im.csv = csv;
	im.into = hatchet;
	rc = fpt_ncu_import(&im);
	if (status > 0)
		rc = status;
	else if (status < 0)
		rc = 128 - status;
	if (signalled) {
		/* Passed on to ncu and the program, which wrote what they had: the signal's status. */
		fprintf(stderr,
			"flagprism: profile: ended by signal %d; what was recorded was written\n",
			signalled);
		rc = 128 + signalled;
	}
out:
	free(extra_copy);
	free(all);
	fp_free(argv);
	free(target);
	return rc;
}

int cmd_profile(int argc, char **argv)
{
	const char *name = "flagprism", *context = "shadow", *data = "tree", *backend = NULL;
	const char *hook = NULL, *metrics = NULL, *ncu_path = NULL, *ncu_metrics = NULL;
	const char *ncu_args = NULL, *mode = NULL, *period = NULL;
	bool ncu = false;
	const struct fpt_option opts[] = {
		FPT_OPT_STRING("name", 'n', &name, "NAME",
			       "output path without suffix (default: flagprism)"),
		FPT_OPT_STRING("context", 'c', &context, "CONTEXT",
			       "shadow (scopes only, default) or python (call paths)"),
		FPT_OPT_STRING("data", 'd', &data, "DATA",
			       "tree (NAME.hatchet, default) or trace (also a Chrome trace)"),
		FPT_OPT_STRING("backend", 'b', &backend, "BACKEND",
			       "host, cupti, or instrumentation (+ fpl.scope timelines inside "
			       "kernels; default: picked for the device)"),
		FPT_OPT_STRING("hook", 'k', &hook, "HOOK",
			       "triton: record each kernel's launch_metadata values"),
		FPT_OPT_STRING("metrics", 'm', &metrics, "METRICS",
			       "hardware counters per kernel (CUPTI range profiler): comma list "
			       "or 'default'; kernels are serialised and replayed"),
		FPT_OPT_STRING("mode", 0, &mode, "MODE",
			       "pcsampling: CUPTI PC sampling with stall reasons on source lines "
			       "(cupti backend; needs counter access)"),
		FPT_OPT_STRING("sampling-period", 0, &period, "N",
			       "with --mode pcsampling: a sample every 2^N cycles per SM (5..31)"),
		FPT_OPT_BOOL("ncu", 0, &ncu,
			     "run under Nsight Compute and import its metrics (NAME.ncu.csv)"),
		FPT_OPT_STRING("ncu-metrics", 0, &ncu_metrics, "LIST",
			       "metrics ncu collects (default: time, DRAM bytes, throughputs)"),
		FPT_OPT_STRING("ncu-args", 0, &ncu_args, "ARGS",
			       "more ncu arguments, split on spaces (e.g. '--launch-count 10')"),
		FPT_OPT_STRING("ncu-path", 0, &ncu_path, "NCU",
			       "the ncu executable (default: $FLAGPRISM_NCU, else ncu)"),
		FPT_OPT_END(),
	};
	const char *words[17];
	size_t n = 0;
	int rc, nargs;

	rc = fpt_parse_options(argc, argv, opts, FPT_PARSE_STOP_AT_POSITIONAL, &nargs);
	if (rc != FPT_CONTINUE)
		return rc;
	if (nargs == 0)
		return fpt_usage(argv[0], "missing the script to run (or 'pytest')");
	if (!name[0])
		return fpt_usage(argv[0], "option '--name' needs a non-empty path");
	rc = check_choice(argv[0], "--context", context, fp_prof_context_name);
	if (rc == FPT_CONTINUE)
		rc = check_choice(argv[0], "--data", data, fp_prof_data_name);
	if (rc == FPT_CONTINUE && hook)
		rc = check_choice(argv[0], "--hook", hook, fp_prof_hook_name);
	if (rc != FPT_CONTINUE)
		return rc;
	if (backend && !backend[0])
		return fpt_usage(argv[0], "option '--backend' needs a name");
	if (metrics && !metrics[0])
		return fpt_usage(argv[0], "option '--metrics' needs a list of names or 'default'");
	if (metrics && backend && strcmp(backend, "cupti") != 0)
		return fpt_usage(argv[0], "option '--metrics' needs the cupti backend, not '%s'",
				 backend);
	if (mode && strcmp(mode, "pcsampling") != 0)
		return fpt_usage(argv[0], "option '--mode' takes 'pcsampling', not '%s'", mode);
	if (period && !mode)
		return fpt_usage(argv[0], "option '--sampling-period' needs '--mode pcsampling'");
	if (period) {
		char *end;
		long v = strtol(period, &end, 10);

		if (*end || end == period || v < 5 || v > 31)
			return fpt_usage(argv[0],
					 "option '--sampling-period' takes 5 to 31, not '%s'",
					 period);
	}
	if (mode && metrics)
		return fpt_usage(argv[0],
				 "options '--mode pcsampling' and '--metrics' exclude each "
				 "other: both need the GPU's profiling hardware");
	if (mode && ncu)
		return fpt_usage(argv[0], "options '--mode pcsampling' and '--ncu' exclude each "
					  "other: Nsight Compute holds the GPU's counters");
	if (mode && backend && strcmp(backend, "cupti") != 0)
		return fpt_usage(argv[0],
				 "option '--mode pcsampling' needs the cupti backend, not "
				 "'%s'",
				 backend);
	if (!ncu && (ncu_metrics || ncu_args || ncu_path))
		return fpt_usage(argv[0], "options '--ncu-*' need '--ncu'");
	if (ncu && metrics)
		return fpt_usage(argv[0], "options '--ncu' and '--metrics' exclude each other: "
					  "Nsight Compute holds the GPU's counters while it runs");
	if (ncu && backend && strcmp(backend, "host") != 0)
		return fpt_usage(argv[0],
				 "under '--ncu' the profile uses the host backend "
				 "(ncu is the process's CUPTI subscriber), not '%s'",
				 backend);
	if (ncu) {
		/* ncu subscribes to CUPTI; the launch order for the import comes from the trace. */
		backend = "host";
		data = "trace";
	}
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
	if (metrics) {
		words[n++] = "--metrics";
		words[n++] = metrics;
	}
	if (mode) {
		words[n++] = "--mode";
		words[n++] = mode;
	}
	if (period) {
		words[n++] = "--sampling-period";
		words[n++] = period;
	}
	if (ncu)
		return run_ncu(argv[0], name, words, n, &argv[1], nargs,
			       ncu_path ? ncu_path : getenv("FLAGPRISM_NCU"), ncu_metrics,
			       ncu_args);
	return fpt_python_run_tool(words, n, &argv[1], nargs);
}
