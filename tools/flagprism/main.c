/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `flagprism`: the command table and the dispatcher. It handles the global options (--help,
 * --version), `help [COMMAND]` and unknown commands (with a suggestion from the same table),
 * then hands the rest of argv to the command. Commands live one per file (cmd-<name>.c); this
 * file knows nothing about what they do, except that a signal ending any of them removes the
 * temporary files of the outputs being written (end_on_signal).
 */
#include "tool.h"

#include <signal.h>
#include <string.h>

#include <flagprism/outfile.h>
#include <flagprism/version.h>

static int cmd_help(int argc, char **argv);

/* Adding a command is one file (cmd-<name>.c) and one line here. Help lists them in this order. */
static const struct fpt_command commands[] = {
	{"profile", cmd_profile, cmd_profile_summary, cmd_profile_usage},
	{"debug", cmd_debug, cmd_debug_summary, cmd_debug_usage},
	{"doctor", cmd_doctor, "check Python, Triton, PyTorch, the GPU and CUPTI for FlagPrism",
	 "flagprism doctor [--json] [--timeout SECONDS]"},
	{"version", cmd_version, "print the version of flagprism", "flagprism version [--json]"},
	{"view", cmd_view, "show a profile's call tree with raw and derived metrics",
	 "flagprism view [-l] [-m METRICS] [-d DEPTH] [-t THRESHOLD] [-i REGEX] [-e REGEX]\n"
	 "               [-f FORMAT] [-s value|name] [--print-sorted] [--keep-launch-metadata]\n"
	 "               [--full-names] [--roofline] [--ranks] [--diff OTHER] FILE"},
	{"diff", cmd_diff, "compare two profiles node by node (B - A)",
	 "flagprism diff [-m METRICS] [-d DEPTH] [-t THRESHOLD] [-i REGEX] [-e REGEX] [-f FORMAT]\n"
	 "               [-s value|name] [--print-sorted] [--keep-launch-metadata] [--full-names] A B\n"
	 "flagprism diff -o OUT [--pretty] A B"},
	{"merge", cmd_merge,
	 "merge the profiles, traces or Debugger summaries of several processes or ranks",
	 "flagprism merge -o OUT [--op mean|sum] [--world-size N] [--pretty] [-q] PROFILE...\n"
	 "flagprism merge -o OUT.chrome_trace.json [--align HOW] [--world-size N] [--pretty] [-q] "
	 "TRACE...\n"
	 "flagprism merge -o DIR [-q] DEBUG-DIR|summary.json..."},
	{"report", cmd_report, cmd_report_summary, cmd_report_usage},
	{"advise", cmd_advise, cmd_advise_summary, cmd_advise_usage},
	{"import-ncu", cmd_import_ncu, "attach Nsight Compute metrics (ncu --csv) to a profile",
	 "flagprism import-ncu REPORT.csv --into PROFILE.hatchet [-o OUT.hatchet]\n"
	 "                     [--trace TRACE.json | --no-trace] [--vendor-json FILE] [--json] [-q]"},
	{"help", cmd_help, "show help for flagprism or one of its commands",
	 "flagprism help [COMMAND]"},
};

const struct fpt_command *fpt_find_command(const char *name)
{
	size_t i;

	for (i = 0; i < FPT_ARRAY_SIZE(commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static void print_global_help(FILE *f)
{
	size_t i, width = 0;

	fpt_print_usage(f, NULL);
	fputs("\nFlagPrism debugs and profiles Triton kernels.\n\nCommands:\n", f);
	for (i = 0; i < FPT_ARRAY_SIZE(commands); i++)
		if (strlen(commands[i].name) > width)
			width = strlen(commands[i].name);
	for (i = 0; i < FPT_ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-*s  %s\n", (int)width, commands[i].name, commands[i].summary);
	fputs("\nGlobal options:\n"
	      "  -h, --help     show this help and exit\n"
	      "  -V, --version  print the version and exit\n"
	      "\nRun 'flagprism help COMMAND' or 'flagprism COMMAND --help' for a command's options.\n"
	      "Exit status: 0 success, 1 failure, 2 usage error.\n",
	      f);
}

/* "'x' is not a command", with the closest names from the table. */
static int not_a_command(const char *name)
{
	unsigned best = ~0u, d;
	size_t i, n = 0;

	for (i = 0; i < FPT_ARRAY_SIZE(commands); i++) {
		d = fpt_edit_distance(name, commands[i].name);
		if (d < best)
			best = d;
	}
	fflush(stdout);
	fprintf(stderr, "flagprism: '%s' is not a command.", name);
	for (i = 0; i < FPT_ARRAY_SIZE(commands); i++) {
		if (fpt_edit_distance(name, commands[i].name) != best ||
		    !fpt_close_enough(name, commands[i].name, best))
			continue;
		fprintf(stderr, n++ ? ", '%s'" : " Did you mean '%s'", commands[i].name);
	}
	fputs(n ? "?\n" : " See 'flagprism --help'.\n", stderr);
	return FPT_EXIT_USAGE;
}

static int cmd_help(int argc, char **argv)
{
	static const struct fpt_option opts[] = {FPT_OPT_END()};
	const struct fpt_command *c;
	char *sub_argv[3];
	int rc, nargs;

	rc = fpt_parse_options(argc, argv, opts, 0, &nargs);
	if (rc != FPT_CONTINUE)
		return rc;
	if (nargs == 0) {
		print_global_help(stdout);
		return FPT_EXIT_OK;
	}
	if (nargs > 1)
		return fpt_usage(argv[0], "expected one command name, got %d arguments", nargs);
	c = fpt_find_command(argv[1]);
	if (!c)
		return not_a_command(argv[1]);
	/* Every command prints its own help, so `help X` and `X --help` cannot drift apart. */
	sub_argv[0] = (char *)c->name;
	sub_argv[1] = (char *)"--help";
	sub_argv[2] = NULL;
	return c->fn(2, sub_argv);
}

static int finish(int rc)
{
	/* A report that could not be written is a failure, not a success with missing output. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (rc == FPT_EXIT_OK)
			rc = fpt_die("cannot write to standard output");
	}
	return rc;
}

/* SIGTERM, SIGINT, SIGHUP: remove the temporary files of the outputs being written (the files
 * themselves keep what they had), then end as the signal would have ended us. */
static void end_on_signal(int sig)
{
	fp_outfile_remove_temporaries();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void handle_signals(void)
{
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = end_on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		/* a signal the parent ignores (nohup) stays ignored, here and in what we exec */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

int main(int argc, char **argv)
{
	const struct fpt_command *c;
	const char *arg;

	handle_signals();
	if (argc < 2) {
		print_global_help(stderr);
		return FPT_EXIT_USAGE;
	}
	arg = argv[1];
	if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
		/* `flagprism --help doctor` reads as `flagprism help doctor`. */
		argv[1] = (char *)"help";
		return finish(cmd_help(argc - 1, argv + 1));
	}
	if (strcmp(arg, "--version") == 0 || strcmp(arg, "-V") == 0) {
		if (argc > 2)
			return fpt_usage(NULL, "unexpected argument '%s' after %s", argv[2], arg);
		argv[1] = (char *)"version";
		return finish(cmd_version(1, argv + 1));
	}
	if (arg[0] == '-')
		return fpt_usage(NULL, "unknown option '%s'", arg);
	c = fpt_find_command(arg);
	if (!c)
		return not_a_command(arg);
	return finish(c->fn(argc - 1, argv + 1));
}
