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

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/debug.h>

const char cmd_debug_summary[] = "run a Python script or pytest under the Debugger";
const char cmd_debug_usage[] =
	"flagprism debug [--level N] [--addr-level N] [-o DIR] [--sanitize | --check LIST]\n"
	"                [--strict] [--all-reports] [--kernel REGEX] [--launch N[-M]]\n"
	"                [--max-reports N] [--export-on-error] [--record-capacity N]\n"
	"                [--check-continue suppress|run] [--exact-sums] SCRIPT [ARGS...]\n"
	"flagprism debug [OPTIONS] pytest [PYTEST-ARGS...]";

/* A comma list of known checks (the library's registry, fp_dbg_check_find()), each once: 0, or
 * the usage error's exit status. */
static int check_list(const char *cmd, const char *list)
{
	char word[32], names[128], seen[64] = {0};
	const struct fp_dbg_check_info *ck;
	const char *p = list, *end;
	size_t n, i;

	fp_dbg_check_names(names, sizeof(names), ",");
	if (!list[0])
		return fpt_usage(cmd, "option '--check' needs a list (%s)", names);
	for (;;) {
		end = strchr(p, ',');
		n = end ? (size_t)(end - p) : strlen(p);
		ck = fp_dbg_check_find(p, n);
		snprintf(word, sizeof(word), "%.*s", (int)(n < 31 ? n : 31), p);
		if (!ck) {
			fp_dbg_check_names(names, sizeof(names), ", ");
			return fpt_usage(cmd, "unknown check '%s' in '--check' (%s)", word, names);
		}
		for (i = 0; fp_dbg_check_at(i) != ck; i++)
			;
		if (i < sizeof(seen) && seen[i]++)
			return fpt_usage(cmd, "check '%s' given twice in '--check'", word);
		if (!end)
			return 0;
		p = end + 1;
	}
}

/* N or N-M with 0 <= N <= M: 0, or the usage error's exit status. */
static int launch_range(const char *cmd, const char *s)
{
	char *end;
	long long lo, hi;

	errno = 0;
	lo = strtoll(s, &end, 10);
	hi = lo;
	if (end != s && *end == '-')
		hi = strtoll(end + 1, &end, 10);
	if (errno || end == s || *end || lo < 0 || hi < lo || !isdigit((unsigned char)s[0]))
		return fpt_usage(
			cmd, "option '--launch' needs N or N-M (launch indices from 0, N <= M)");
	return 0;
}

int cmd_debug(int argc, char **argv)
{
	long level = 1, addr_level = 1, record_capacity = -1, max_reports = -1;
	const char *out = "fp_debug", *check = NULL, *kernel = NULL, *launch = NULL;
	const char *cont = "suppress";
	bool sanitize = false, strict = false, export_on_error = false, all_reports = false;
	bool exact_sums = false;
	const struct fpt_option opts[] = {
		FPT_OPT_INT("level", 0, &level, "N",
			    "0 no values, 1 value summaries (default), 2 also every element", 0, 2),
		FPT_OPT_INT("addr-level", 0, &addr_level, "N",
			    "0 no addresses, 1 address summaries (default), 2 also every lane", 0,
			    2),
		FPT_OPT_STRING("output", 'o', &out, "DIR",
			       "directory for the reports (default: fp_debug)"),
		FPT_OPT_STRING("check", 0, &check, "LIST",
			       "check mode: every kernel, no markers; LIST of bounds, nan, inf, "
			       "precision, domain; exit 3 on findings"),
		FPT_OPT_BOOL("sanitize", 0, &sanitize, "the same as --check bounds"),
		FPT_OPT_BOOL("strict", 0, &strict,
			     "exit 4 when a launch the Debugger was asked to observe could not be "
			     "(graph replays, failed instrumentation, unhooked launch paths)"),
		FPT_OPT_BOOL(
			"all-reports", 0, &all_reports,
			"in check mode, write every launch's report files, not only those with "
			"findings"),
		FPT_OPT_STRING("kernel", 0, &kernel, "REGEX",
			       "instrument only kernels whose name matches (Python re.search)"),
		FPT_OPT_STRING("launch", 0, &launch, "N[-M]",
			       "instrument only these launch indices (from 0, in launch order)"),
		FPT_OPT_INT("max-reports", 0, &max_reports, "N",
			    "write at most N per-launch reports (findings still reach the summary)",
			    0, 1L << 40),
		FPT_OPT_BOOL(
			"export-on-error", 0, &export_on_error,
			"when a kernel raises, still write the records it made (marked partial)"),
		FPT_OPT_INT("record-capacity", 0, &record_capacity, "N",
			    "records of one launch (default: sized from the launch); what does not "
			    "fit is counted as overflow",
			    0, 1L << 31),
		FPT_OPT_STRING(
			"check-continue", 0, &cont, "MODE",
			"what a lane found out of bounds does: suppress (default: the access "
			"is not performed) or run (performed, as without the Debugger)"),
		FPT_OPT_BOOL("exact-sums", 0, &exact_sums,
			     "sum float values in float64 per element for mean and L2 norm "
			     "(default: float32 per block, relative error about 1e-6)"),
		FPT_OPT_END(),
	};
	char level_s[8], addr_s[8], cap_s[24], maxr_s[24];
	const char *words[32];
	size_t n = 0;
	int rc, nargs;

	rc = fpt_parse_options(argc, argv, opts, FPT_PARSE_STOP_AT_POSITIONAL, &nargs);
	if (rc != FPT_CONTINUE)
		return rc;
	if (nargs == 0)
		return fpt_usage(argv[0], "missing the script to run (or 'pytest')");
	if (!out[0])
		return fpt_usage(argv[0], "option '--output' needs a non-empty directory");
	if (check && (rc = check_list(argv[0], check)))
		return rc;
	if (launch && (rc = launch_range(argv[0], launch)))
		return rc;
	if (kernel && !kernel[0])
		return fpt_usage(argv[0], "option '--kernel' needs a regular expression");
	if (strcmp(cont, "suppress") && strcmp(cont, "run"))
		return fpt_usage(argv[0],
				 "option '--check-continue' needs 'suppress' or 'run', not '%s'",
				 cont);
	snprintf(level_s, sizeof(level_s), "%ld", level);
	snprintf(addr_s, sizeof(addr_s), "%ld", addr_level);
	cap_s[0] = maxr_s[0] = '\0';
	if (record_capacity >= 0)
		snprintf(cap_s, sizeof(cap_s), "%ld", record_capacity);
	if (max_reports >= 0)
		snprintf(maxr_s, sizeof(maxr_s), "%ld", max_reports);
#define WORD(k, v)                \
	do {                      \
		words[n++] = (k); \
		words[n++] = (v); \
	} while (0)
	words[n++] = "debug";
	WORD("--level", level_s);
	WORD("--addr-level", addr_s);
	WORD("--output", out);
	WORD("--sanitize", sanitize ? "1" : "0");
	WORD("--check", check ? check : "");
	WORD("--strict", strict ? "1" : "0");
	WORD("--all-reports", all_reports ? "1" : "0");
	WORD("--kernel", kernel ? kernel : "");
	WORD("--launch", launch ? launch : "");
	WORD("--max-reports", maxr_s);
	WORD("--export-on-error", export_on_error ? "1" : "0");
	WORD("--record-capacity", cap_s);
	WORD("--check-continue", cont);
	WORD("--exact-sums", exact_sums ? "1" : "0");
#undef WORD
	return fpt_python_run_tool(words, n, &argv[1], nargs);
}
