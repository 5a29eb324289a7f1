/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The option parser every command shares: a table of options per command, long and short
 * forms, values attached or separate, `--`, built-in -h/--help, and an optional stop at the
 * first positional for commands that pass the rest of the line to a program. It prints usage
 * errors through fpt_usage(); it does not know what any option means.
 */
#include "tool.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* An option as the user spelled it, for messages: "--timeout" or "-t". */
struct spelling {
	char text[80];
};

static void spell(struct spelling *s, const struct fpt_option *o, bool as_long)
{
	if (as_long || !o->short_name)
		snprintf(s->text, sizeof(s->text), "--%s", o->long_name ? o->long_name : "?");
	else
		snprintf(s->text, sizeof(s->text), "-%c", o->short_name);
}

static int set_value(const char *cmd, const struct fpt_option *o, const char *name,
		     const char *value)
{
	char *end;
	long v;

	switch (o->type) {
	case FPT_OPT_BOOL:
		*(bool *)o->value = true;
		return FPT_CONTINUE;
	case FPT_OPT_STRING:
		*(const char **)o->value = value;
		return FPT_CONTINUE;
	case FPT_OPT_INT:
		errno = 0;
		v = strtol(value, &end, 10);
		if (errno || end == value || *end) {
			return fpt_usage(cmd, "option '%s' expects an integer, not '%s'", name,
					 value);
		}
		if ((o->min || o->max) && (v < o->min || v > o->max)) {
			return fpt_usage(cmd, "option '%s' must be between %ld and %ld, not %ld",
					 name, o->min, o->max, v);
		}
		*(long *)o->value = v;
		return FPT_CONTINUE;
	case FPT_OPT_CALLBACK:
		return o->fn(o->value, value);
	case FPT_OPT_END:
		break;
	}
	return fpt_usage(cmd, "internal error: bad option table entry for '%s'", name);
}

static bool takes_value(const struct fpt_option *o)
{
	return o->type == FPT_OPT_STRING || o->type == FPT_OPT_INT ||
	       (o->type == FPT_OPT_CALLBACK && o->arg);
}

static int help(const char *cmd, const struct fpt_option *opts)
{
	const struct fpt_command *c = fpt_find_command(cmd);
	struct fpt_command fallback = {cmd, NULL, NULL, NULL};

	fpt_print_command_help(stdout, c ? c : &fallback, opts);
	return FPT_EXIT_OK;
}

/* "unknown option '--jsn'" plus the closest long names. */
static int unknown_long(const char *cmd, const struct fpt_option *opts, const char *name,
			size_t len)
{
	char word[64];
	const char *best = NULL;
	unsigned bestd = ~0u, d;
	const struct fpt_option *o;

	snprintf(word, sizeof(word), "%.*s", (int)(len < 63 ? len : 63), name);
	for (o = opts;; o++) {
		const char *cand = o->type == FPT_OPT_END ? "help" : o->long_name;

		if (cand) {
			d = fpt_edit_distance(word, cand);
			if (d < bestd) {
				bestd = d;
				best = cand;
			}
		}
		if (o->type == FPT_OPT_END)
			break;
	}
	if (best && fpt_close_enough(word, best, bestd))
		return fpt_usage(cmd, "unknown option '--%s' (did you mean '--%s'?)", word, best);
	return fpt_usage(cmd, "unknown option '--%s'", word);
}

static int parse_long(const char *cmd, const struct fpt_option *opts, int argc, char **argv, int *i)
{
	const char *name = argv[*i] + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const struct fpt_option *o;
	struct spelling sp;
	const char *value = NULL;

	for (o = opts; o->type != FPT_OPT_END; o++)
		if (o->long_name && strlen(o->long_name) == len &&
		    strncmp(o->long_name, name, len) == 0)
			break;
	if (o->type == FPT_OPT_END) {
		if (len == 4 && strncmp(name, "help", 4) == 0 && !eq)
			return help(cmd, opts);
		return unknown_long(cmd, opts, name, len);
	}
	spell(&sp, o, true);
	if (!takes_value(o)) {
		if (eq)
			return fpt_usage(cmd, "option '%s' takes no value", sp.text);
		return set_value(cmd, o, sp.text, NULL);
	}
	if (eq) {
		value = eq + 1;
	} else {
		if (*i + 1 >= argc)
			return fpt_usage(cmd, "option '%s' needs a value (%s)", sp.text, o->arg);
		value = argv[++*i];
	}
	return set_value(cmd, o, sp.text, value);
}

static int parse_short(const char *cmd, const struct fpt_option *opts, int argc, char **argv,
		       int *i)
{
	const char *p = argv[*i] + 1;
	const struct fpt_option *o;
	struct spelling sp;
	int rc;

	for (; *p; p++) {
		for (o = opts; o->type != FPT_OPT_END; o++)
			if (o->short_name && o->short_name == *p)
				break;
		if (o->type == FPT_OPT_END) {
			if (*p == 'h')
				return help(cmd, opts);
			return fpt_usage(cmd, "unknown option '-%c'", *p);
		}
		spell(&sp, o, false);
		if (!takes_value(o)) {
			rc = set_value(cmd, o, sp.text, NULL);
			if (rc != FPT_CONTINUE)
				return rc;
			continue;
		}
		/* A valued short option takes the rest of the word, or the next word. */
		if (p[1])
			return set_value(cmd, o, sp.text, p + 1);
		if (*i + 1 >= argc)
			return fpt_usage(cmd, "option '%s' needs a value (%s)", sp.text, o->arg);
		return set_value(cmd, o, sp.text, argv[++*i]);
	}
	return FPT_CONTINUE;
}

int fpt_parse_options(int argc, char **argv, const struct fpt_option *opts, unsigned flags,
		      int *nargs)
{
	const char *cmd = argv[0];
	bool positional_only = false;
	int i, w = 1, rc;
	char *a;

	*nargs = 0;
	for (i = 1; i < argc; i++) {
		a = argv[i];
		/* Positionals move down over consumed option slots; w <= i keeps this safe. */
		if (positional_only || a[0] != '-' || a[1] == '\0') {
			argv[w++] = a;
			if (flags & FPT_PARSE_STOP_AT_POSITIONAL)
				positional_only = true;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			positional_only = true;
			continue;
		}
		rc = a[1] == '-' ? parse_long(cmd, opts, argc, argv, &i) :
				   parse_short(cmd, opts, argc, argv, &i);
		if (rc != FPT_CONTINUE)
			return rc;
	}
	*nargs = w - 1;
	if (w < argc)
		argv[w] = NULL; /* keep argv NULL-terminated after the positionals */
	return FPT_CONTINUE;
}

/* "-t, --timeout=SECONDS" */
static void option_label(char *buf, size_t size, const struct fpt_option *o)
{
	char val[64] = "";

	if (takes_value(o))
		snprintf(val, sizeof(val), "%s%s", o->long_name ? "=" : " ", o->arg ? o->arg : "X");
	if (o->short_name && o->long_name)
		snprintf(buf, size, "-%c, --%s%s", o->short_name, o->long_name, val);
	else if (o->long_name)
		snprintf(buf, size, "--%s%s", o->long_name, val);
	else
		snprintf(buf, size, "-%c%s", o->short_name, val);
}

void fpt_print_command_help(FILE *f, const struct fpt_command *cmd, const struct fpt_option *opts)
{
	static const struct fpt_option help_opt =
		FPT_OPT_BOOL("help", 'h', NULL, "show this help and exit");
	const struct fpt_option *o;
	char label[160];
	size_t width = 0, n;
	bool last;

	if (cmd->usage)
		fpt_print_usage(f, cmd->usage);
	else
		fprintf(f, "usage: flagprism %s\n", cmd->name);
	if (cmd->summary && cmd->summary[0])
		fprintf(f, "\n%c%s.\n", toupper((unsigned char)cmd->summary[0]), cmd->summary + 1);
	/* Two passes over the table plus the built-in help: measure, then print aligned. */
	for (o = opts;; o++) {
		last = !opts || o->type == FPT_OPT_END;
		option_label(label, sizeof(label), last ? &help_opt : o);
		n = strlen(label);
		if (n > width)
			width = n;
		if (last)
			break;
	}
	if (width > 28)
		width = 28;
	fputs("\nOptions:\n", f);
	for (o = opts;; o++) {
		last = !opts || o->type == FPT_OPT_END;
		option_label(label, sizeof(label), last ? &help_opt : o);
		if (strlen(label) > width)
			fprintf(f, "  %s\n  %-*s  %s\n", label, (int)width, "",
				(last ? &help_opt : o)->help);
		else
			fprintf(f, "  %-*s  %s\n", (int)width, label, (last ? &help_opt : o)->help);
		if (last)
			break;
	}
}
