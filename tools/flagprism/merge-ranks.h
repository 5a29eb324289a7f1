/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The parts of the CLI that know about ranks (merge-ranks.c): for `flagprism merge`, what kind
 * of outputs the inputs are (profiles, Chrome traces, the Debugger's summaries), which rank each
 * profile belongs to, and the trace and summary merges; for `flagprism profile --ncu`, the
 * per-rank name of its files. The merges themselves are the library's (<flagprism/ranks.h>);
 * cmd-merge.c reads the command line.
 */
#ifndef FLAGPRISM_TOOL_MERGE_RANKS_H
#define FLAGPRISM_TOOL_MERGE_RANKS_H

#include "tool.h"

#include <flagprism/ranks.h>

enum fpt_merge_kind {
	FPT_MERGE_PROFILES,  /* Hatchet files (or their meta files) */
	FPT_MERGE_TRACES,    /* *.chrome_trace.json */
	FPT_MERGE_SUMMARIES, /* the Debugger's summary.json, or its output directory */
};

/* The kind of every input, or a usage error (after printing) when they are mixed: then
 * returns FPT_EXIT_USAGE, else FPT_CONTINUE with *kind set. */
int fpt_merge_kind_of(const char *cmd, char *const *paths, size_t n, enum fpt_merge_kind *kind);

/* "auto", "clock", "barrier", "wall" -> FPT_CONTINUE, else a usage error. */
int fpt_merge_align_parse(const char *cmd, const char *s, enum fp_ranks_align *out);

/*
 * The rank of each profile (its meta file's "distributed" object, else its path, else its
 * position) into ranks[], and the world size into *world (`world_opt` when > 0, else the meta
 * files', else the largest rank + 1). Prints the error and returns FPT_EXIT_FAILURE for an
 * unreadable meta file, two profiles of one rank or meta files that disagree on the world size;
 * FPT_CONTINUE otherwise.
 */
int fpt_merge_profile_ranks(char *const *paths, size_t n, long world_opt, int64_t *ranks,
			    int64_t *world);

/* Say which ranks below `world` have no profile (a warning), nothing when none. */
void fpt_merge_warn_missing(const int64_t *ranks, size_t n, int64_t world, const char *what);

/* `flagprism merge` of Chrome traces / Debugger summaries: the whole command after parsing. */
int fpt_merge_traces(char *const *paths, size_t n, const char *out, const char *align, long world,
		     bool pretty, bool quiet);
int fpt_merge_summaries(char *const *paths, size_t n, const char *out, bool quiet);

/*
 * The output name of this process in a torchrun job (RANK and WORLD_SIZE set, 0 <= RANK <
 * WORLD_SIZE): `name` with the rank placed as fp_ranks_name() does (rank 0 for a "{rank}" outside
 * a job), the same rule the Python layer applies (flagprism/_dist.py). Writes to `out`; returns
 * false when it does not fit.
 */
bool fpt_rank_output_name(const char *name, char *out, size_t cap);

#endif /* FLAGPRISM_TOOL_MERGE_RANKS_H */
