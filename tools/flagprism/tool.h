/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared declarations of the `flagprism` command-line tool: the command table, the one place
 * that turns failures into messages and exit codes, the option parser and the Python launcher.
 * It is the FIRST include of every .c file of the tool (it sets the feature-test macros). The
 * tool is a client of the library: it includes only <flagprism/...> headers, never src/ internals.
 *
 * Adding a command: write cmd-<name>.c with `int cmd_<name>(int argc, char **argv)`, declare it
 * below, add one row to commands[] in main.c and a page docs/cli/flagprism-<name>.md.
 */
#ifndef FLAGPRISM_TOOL_H
#define FLAGPRISM_TOOL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <flagprism/status.h>
#include <flagprism/strbuf.h>

#if defined(__GNUC__)
#define FPT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FPT_PRINTF(a, b)
#endif

#define FPT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- exit codes ------------------------------------------------------------------------------ */

#define FPT_EXIT_OK 0      /* the command did what was asked */
#define FPT_EXIT_FAILURE 1 /* it could not (bad input file, missing Python, I/O error...) */
#define FPT_EXIT_USAGE 2   /* the command line itself was wrong */

/* ---- commands -------------------------------------------------------------------------------- */

/* A command's entry point; argv[0] is the command's name. Returns an FPT_EXIT_* code. */
typedef int (*fpt_command_fn)(int argc, char **argv);

struct fpt_command {
	const char *name;    /* what the user types: "doctor" */
	fpt_command_fn fn;   /* cmd_<name> */
	const char *summary; /* one line for `flagprism --help`, no final period */
	const char *usage; /* synopsis line(s) after "usage: ", e.g. "flagprism doctor [--json]" */
};

/** The command called `name`, or NULL. */
const struct fpt_command *fpt_find_command(const char *name);

/* Commands, one file each (cmd-<name>.c). Keep in the order of commands[] in main.c. */
int cmd_profile(int argc, char **argv);
extern const char cmd_profile_summary[], cmd_profile_usage[];
int cmd_debug(int argc, char **argv);
extern const char cmd_debug_summary[], cmd_debug_usage[];
int cmd_doctor(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_import_ncu(int argc, char **argv);
int cmd_report(int argc, char **argv);
extern const char cmd_report_summary[], cmd_report_usage[];
int cmd_advise(int argc, char **argv);
extern const char cmd_advise_summary[], cmd_advise_usage[];

/* ---- messages and exit codes: the only place a failure becomes an exit status ---------------- */

/** Print `usage` (a command's, or the global one when NULL) as "usage: ..." lines to `f`. */
void fpt_print_usage(FILE *f, const char *usage);

/** Print "flagprism: error: <msg>" to stderr; returns FPT_EXIT_FAILURE. */
int fpt_die(const char *fmt, ...) FPT_PRINTF(1, 2);

/** Print "flagprism: warning: <msg>" to stderr. */
void fpt_warn(const char *fmt, ...) FPT_PRINTF(1, 2);

/**
 * Print "flagprism <cmd>: <msg>" and the command's "usage: ..." line(s) to stderr, plus a hint
 * to run `flagprism <cmd> --help`; returns FPT_EXIT_USAGE. `cmd` NULL means the global usage.
 */
int fpt_usage(const char *cmd, const char *fmt, ...) FPT_PRINTF(2, 3);

/**
 * Report a library failure: "flagprism: error: <what>: <fp_strerror(status)>", followed by the
 * diagnostic when `diag` holds one ("file:line:col: msg" when it has a line and `file` is not
 * NULL, "at byte offset N: msg" otherwise). Returns FPT_EXIT_FAILURE. `what` and `diag` may
 * be NULL.
 */
int fpt_status_error(int status, const struct fp_diag *diag, const char *file, const char *what);

/**
 * Damerau-Levenshtein (optimal string alignment) distance between two short strings, used for
 * "did you mean". Strings longer than 63 bytes compare as far apart (returns 64 or more).
 */
unsigned fpt_edit_distance(const char *a, const char *b);

/** Whether `dist` between `input` and a candidate is close enough to suggest it. */
bool fpt_close_enough(const char *input, const char *candidate, unsigned dist);

/* ---- option parsing (opts.c) ----------------------------------------------------------------- */

enum fpt_opt_type {
	FPT_OPT_END = 0, /* terminates an option table */
	FPT_OPT_BOOL,    /* bool *: set to true, takes no value */
	FPT_OPT_STRING,  /* const char **: the value (borrowed from argv) */
	FPT_OPT_INT,     /* long *: a base-10 integer within [min, max] */
	FPT_OPT_CALLBACK /* fn(user, value): for repeatable or structured options */
};

/* Called for FPT_OPT_CALLBACK with the value (NULL when `arg` is NULL: no value taken). Returns
 * FPT_CONTINUE to go on, or an exit code (after printing, e.g. with fpt_usage). */
typedef int (*fpt_opt_fn)(void *user, const char *value);

struct fpt_option {
	enum fpt_opt_type type;
	const char *long_name; /* without "--"; NULL if none */
	char short_name;       /* 0 if none */
	void *value;           /* bool *, const char **, long *, or the callback's `user` */
	const char *arg;       /* value placeholder for help ("FILE"); NULL for BOOL */
	const char *help;      /* one line */
	long min, max;         /* FPT_OPT_INT bounds (both 0: any long) */
	fpt_opt_fn fn;         /* FPT_OPT_CALLBACK only */
};

/* One initializer per line: clang-format would spread each over four. */
/* clang-format off */
#define FPT_OPT_BOOL(l, s, v, h) {FPT_OPT_BOOL, (l), (s), (v), NULL, (h), 0, 0, NULL}
#define FPT_OPT_STRING(l, s, v, a, h) {FPT_OPT_STRING, (l), (s), (v), (a), (h), 0, 0, NULL}
#define FPT_OPT_INT(l, s, v, a, h, lo, hi) {FPT_OPT_INT, (l), (s), (v), (a), (h), (lo), (hi), NULL}
#define FPT_OPT_CALLBACK(l, s, u, a, h, f) {FPT_OPT_CALLBACK, (l), (s), (u), (a), (h), 0, 0, (f)}
#define FPT_OPT_END() {FPT_OPT_END, NULL, 0, NULL, NULL, NULL, 0, 0, NULL}
/* clang-format on */

/* Returned by the parser (and option callbacks) when the command should go on. */
#define FPT_CONTINUE (-1)

/* Flags for fpt_parse_options(). STOP_AT_POSITIONAL: the first positional and everything after
 * it are kept verbatim (`flagprism debug [options] script.py [args]`). */
#define FPT_PARSE_STOP_AT_POSITIONAL (1u << 0)

/**
 * Parse argv[1..argc) against `opts` (argv[0] is the command name, used for help and
 * messages). Accepts `--name=value`, `--name value`, `-x value`, `-xvalue`, bundled short
 * booleans (`-abc`), `--` (everything after is positional) and a lone `-` as a positional.
 * `-h`/`--help` are built in: they print the command's help to stdout.
 *
 * Positionals are moved, in order, to argv[1 .. 1 + *nargs) (option slots are overwritten).
 * Without FPT_PARSE_STOP_AT_POSITIONAL options and positionals may be interleaved.
 *
 * Returns FPT_CONTINUE to go on; FPT_EXIT_OK after printing help; FPT_EXIT_USAGE after
 * printing a usage error (unknown option, with a suggestion; missing or unexpected value; bad
 * integer); or what an option callback returned.
 */
int fpt_parse_options(int argc, char **argv, const struct fpt_option *opts, unsigned flags,
		      int *nargs);

/** Print the help of command `cmd` (usage, summary and, when `opts` is not NULL, options). */
void fpt_print_command_help(FILE *f, const struct fpt_command *cmd, const struct fpt_option *opts);

/* ---- Python (python.c) ----------------------------------------------------------------------- */

#define FPT_PATH_MAX 4096

/* The interpreter the tool runs. Caller-owned, filled by fpt_python_find(). */
struct fpt_python {
	char path[FPT_PATH_MAX];        /* the executable */
	const char *origin;             /* static text naming where it came from, e.g. "PATH" */
	char error[FPT_PATH_MAX + 256]; /* why it cannot be found or run; "" otherwise */
};

/**
 * Find the Python interpreter: $FLAGPRISM_PYTHON when set and non-empty (a path, or a name
 * searched on PATH; never second-guessed: if it is not executable that is the answer), else
 * `python3` next to the running executable (/proc/self/exe), else, for an executable inside
 * <prefix>/lib/pythonX.Y/site-packages/, <prefix>/bin/pythonX.Y or python3, else `python3` on
 * PATH.
 * Returns FP_OK, or FP_ENOENT with `py->error` saying what was tried.
 */
int fpt_python_find(struct fpt_python *py);

/* What a captured run produced. Release with fpt_capture_release(). */
struct fpt_capture {
	struct fp_strbuf out; /* the child's stdout, at most `max_bytes` */
	struct fp_strbuf err; /* the child's stderr, at most `max_bytes` */
	bool out_truncated;   /* stdout went past max_bytes (the rest was read and dropped) */
	bool err_truncated;
	bool timed_out; /* killed (SIGKILL) after timeout_ms */
	int exit_code;  /* the exit status, or -N when killed by signal N */
};

void fpt_capture_release(struct fpt_capture *cap);

/**
 * Run `py->path args...` without a shell, stdin from /dev/null, and capture stdout and stderr
 * (each up to `max_bytes`; a child that writes more is not blocked). Kills the child after
 * `timeout_ms` (<= 0: wait forever). `cap` is initialised here and must be released even on
 * failure. Returns FP_OK when the child ran (whatever its exit status); FP_ENOENT when it could
 * not be started (`py->error` says why); FP_ENOMEM; FP_EIO (pipe or wait failure, in
 * `py->error`).
 */
int fpt_python_capture(struct fpt_python *py, const char *const *args, size_t nargs,
		       size_t max_bytes, int timeout_ms, struct fpt_capture *cap);

/**
 * Replace the process with `py->path args...` (argv[0] is the interpreter's path). Returns
 * only on failure: FP_ENOENT or FP_ENOMEM, with `py->error` set.
 */
int fpt_python_exec(struct fpt_python *py, const char *const *args, size_t nargs);

/**
 * Hand a program to the bootstrap module flagprism._run: `prog[0]` is the script (or "pytest"),
 * then its `nprog - 1` arguments; `words` are the tool's own (the subcommand and its options).
 * Says a missing script before Python starts, finds the interpreter and replaces the process
 * with `python -c BOOTSTRAP words... -- prog...`. Returns only on failure, the exit status of
 * fpt_die() after it printed why.
 */
int fpt_python_run_tool(const char *const *words, size_t nwords, char *const *prog, int nprog);

/**
 * The command fpt_python_run_tool() would exec (`python -c BOOTSTRAP words... -- prog...`,
 * argv[0] the interpreter's path), for running it under a wrapper (`flagprism profile --ncu`).
 * On success *argv is a NULL-terminated calloc'd array (free() it; the strings are borrowed
 * from `py`, `words` and `prog`) and FPT_CONTINUE is returned; otherwise the exit status of a
 * printed error.
 */
int fpt_python_tool_argv(struct fpt_python *py, const char *const *words, size_t nwords,
			 char *const *prog, int nprog, const char ***argv, size_t *argc);

#endif /* FLAGPRISM_TOOL_H */
