/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one place where the tool turns a failure into words on stderr and an exit code: errors
 * (1), usage errors (2) and library statuses with their diagnostics. Also the edit distance
 * behind every "did you mean". Normal output (reports, help) does not go through here.
 */
#include "tool.h"

#include <string.h>

FPT_PRINTF(2, 0)
static void vmessage(const char *prefix, const char *fmt, va_list ap)
{
	fflush(stdout); /* keep the order right when both go to one terminal or file */
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int fpt_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("flagprism: error: ", fmt, ap);
	va_end(ap);
	return FPT_EXIT_FAILURE;
}

void fpt_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("flagprism: warning: ", fmt, ap);
	va_end(ap);
}

/*
 * Print `usage` as "usage: line1\n   or: line2...". A line that starts with a space continues the
 * form above it (a synopsis wrapped as docs/cli/ wraps it) and keeps its indentation.
 */
static void print_usage_lines(FILE *f, const char *usage)
{
	const char *p = usage, *nl;
	const char *lead = "usage: ";

	while (*p) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		fprintf(f, "%s%.*s\n", *p == ' ' ? "       " : lead, (int)(nl - p), p);
		lead = "   or: ";
		p = *nl ? nl + 1 : nl;
	}
}

/* The global synopsis (main.c prints the full help). */
static const char global_usage[] = "flagprism [--version] [--help] COMMAND [ARGS...]";

int fpt_usage(const char *cmd, const char *fmt, ...)
{
	const struct fpt_command *c = cmd ? fpt_find_command(cmd) : NULL;
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "flagprism%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	print_usage_lines(stderr, c ? c->usage : global_usage);
	if (c)
		fprintf(stderr, "Run 'flagprism %s --help' for its options.\n", c->name);
	else
		fputs("Run 'flagprism --help' for the list of commands.\n", stderr);
	return FPT_EXIT_USAGE;
}

void fpt_print_usage(FILE *f, const char *usage)
{
	print_usage_lines(f, usage ? usage : global_usage);
}

int fpt_status_error(int status, const struct fp_diag *diag, const char *file, const char *what)
{
	bool has_diag = diag && diag->status != 0 && diag->msg[0];

	fflush(stdout);
	if (has_diag && !file && !diag->offset && !diag->line) {
		/* A message that names its own place (a file that cannot be written): say it as
		 * it is, not as "input/output error at byte offset 0". */
		fprintf(stderr, "flagprism: error: %s%s%s\n", what ? what : "", what ? ": " : "",
			diag->msg);
		return FPT_EXIT_FAILURE;
	}
	fprintf(stderr, "flagprism: error: %s%s%s", what ? what : "", what ? ": " : "",
		fp_strerror(status));
	if (has_diag) {
		if (diag->line && file)
			fprintf(stderr, "\n  %s:%u:%u: %s", file, (unsigned)diag->line,
				(unsigned)diag->col, diag->msg);
		else if (file)
			fprintf(stderr, "\n  %s: at byte offset %llu: %s", file,
				(unsigned long long)diag->offset, diag->msg);
		else
			fprintf(stderr, "\n  at byte offset %llu: %s",
				(unsigned long long)diag->offset, diag->msg);
	}
	fputc('\n', stderr);
	return FPT_EXIT_FAILURE;
}

#define DIST_MAXLEN 63

unsigned fpt_edit_distance(const char *a, const char *b)
{
	/* Three rows suffice for the optimal-string-alignment recurrence. */
	unsigned rows[3][DIST_MAXLEN + 2];
	unsigned *prev2 = rows[0], *prev = rows[1], *cur = rows[2], *tmp;
	size_t la = strlen(a), lb = strlen(b), i, j;

	if (la > DIST_MAXLEN || lb > DIST_MAXLEN)
		return DIST_MAXLEN + 1;
	for (j = 0; j <= lb; j++)
		prev[j] = (unsigned)j;
	for (i = 1; i <= la; i++) {
		cur[0] = (unsigned)i;
		for (j = 1; j <= lb; j++) {
			unsigned cost = a[i - 1] == b[j - 1] ? 0 : 1;
			unsigned best = prev[j] + 1;

			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (prev[j - 1] + cost < best)
				best = prev[j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best;
		}
		tmp = prev2;
		prev2 = prev;
		prev = cur;
		cur = tmp;
	}
	return prev[lb];
}

bool fpt_close_enough(const char *input, const char *candidate, unsigned dist)
{
	size_t li = strlen(input), lc = strlen(candidate);
	size_t longer = li > lc ? li : lc;

	/* One or two slips in a word of some length; never "everything changed". */
	if (dist == 0)
		return true;
	if (dist > 2)
		return dist * 3 <= longer; /* long words may take a third of their letters wrong */
	return dist * 2 < longer || (dist == 1 && longer >= 2);
}
