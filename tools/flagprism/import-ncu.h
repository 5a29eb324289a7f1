/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Nsight Compute import as the tool runs it, shared by `flagprism import-ncu` and
 * `flagprism profile --ncu`: read the CSV and the profile, attach, write the vendor file and the
 * profile, print a summary; and run ncu itself (the command line comes from
 * fp_ncu_command_argv() in <flagprism/ncu.h>). Include after tool.h.
 */
#ifndef FLAGPRISM_TOOL_IMPORT_NCU_H
#define FLAGPRISM_TOOL_IMPORT_NCU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <flagprism/ncu.h>

/* What to import where. Zero it, then set csv and into (the rest is optional). */
struct fpt_ncu_import {
	const char *csv;    /* the ncu CSV output */
	const char *into;   /* the profile to read (<name>.hatchet) */
	const char *out;    /* the profile to write; NULL: replace `into` (atomically) */
	const char *trace;  /* Chrome trace giving the launch order; NULL: <into name>
			     * .chrome_trace.json when that file exists */
	bool no_trace;      /* use no trace even if one exists */
	const char *vendor; /* the vendor file; NULL: <out name>.vendor.json */
	bool json;          /* print the summary as one JSON object */
	bool quiet;         /* print nothing but warnings and errors */
};

/**
 * Do the import and print the summary to stdout. The vendor file is written first, so the ncu
 * data is on disk even when the profile cannot be written. Returns FPT_EXIT_OK, or
 * FPT_EXIT_FAILURE after printing why (unreadable input, a profile that already has ncu
 * metrics, no launch in the CSV: the vendor file then still says what ncu printed).
 */
int fpt_ncu_import(const struct fpt_ncu_import *opt);

/**
 * Run `argv` (argv[0] searched on PATH, as ncu) and wait for it, stdin inherited. SIGTERM,
 * SIGHUP and SIGINT arriving meanwhile are passed on to it (so that it and the program write
 * what they have) instead of ending this process; *signalled gets the first (0: none). Returns
 * FP_OK with its exit status in *status (-N for signal N), FP_ENOENT when it cannot start or
 * FP_EIO when waiting fails (a message was printed in both cases).
 */
int fpt_ncu_run(char *const *argv, int *status, int *signalled);

/** `<name>` of a `<name>.hatchet` path (the path itself without that suffix) followed by
 *  `suffix`, in `buf`. False when it does not fit. */
bool fpt_ncu_sibling(const char *path, const char *suffix, char *buf, size_t size);

#endif /* FLAGPRISM_TOOL_IMPORT_NCU_H */
