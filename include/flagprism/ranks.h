/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Jobs of many processes (ranks of a torch.distributed job launched by torchrun, or any set of
 * processes that each wrote their own outputs): naming each rank's outputs so that ranks never
 * overwrite each other, the rank's identity in a profiling session's metadata and trace, and
 * putting the ranks' outputs back together: profiles merged with per-rank statistics per node
 * (mean, min, max, sum and the rank of the max), Chrome traces merged into one trace with one
 * process per rank on an aligned clock, the Debugger's summaries merged with every kernel and
 * finding naming its rank, and the text view of a merged profile's imbalance.
 *
 * Not here: launching or coordinating processes (torchrun does that; FlagPrism builds nothing
 * of its own for process management), the collectives themselves (<flagprism/comm.h>), and
 * reading single profiles (<flagprism/view.h>).
 *
 * Every function reading files treats them as untrusted: errors come back as FP_E* with a
 * diag naming the file and the place; a rank that is absent is reported, never fatal.
 */
#ifndef FLAGPRISM_RANKS_H
#define FLAGPRISM_RANKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <flagprism/calltree.h>
#include <flagprism/export.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Ranks of one job at most (world size), for every merge. */
#define FP_RANKS_MAX 65536

/** The placeholder a name may contain to place the rank explicitly. */
#define FP_RANKS_PLACEHOLDER "{rank}"

/* ---- naming -------------------------------------------------------------------------------- */

/** Where fp_ranks_name() puts the rank when the name has no "{rank}". */
enum fp_ranks_place {
	FP_RANKS_SUFFIX = 0, /* "out/prof" -> "out/prof.rank3" (profiles: then ".hatchet"...) */
	FP_RANKS_SUBDIR = 1, /* "out" -> "out/rank3" (the Debugger's output directory) */
};

/**
 * The output name of rank `rank` (>= 0) for `name`: every "{rank}" in `name` replaced by the
 * decimal rank, or, when there is none, the rank added as `place` says. Writes a NUL-terminated
 * string to `out`. FP_OK; FP_EINVAL (NULL or empty name, negative rank, cap 0); FP_ELIMIT (does
 * not fit in `cap`: `out` then holds "").
 */
FP_EXTERN int fp_ranks_name(const char *name, int64_t rank, enum fp_ranks_place place, char *out,
			    size_t cap);

/**
 * The rank a path names: the last "rank<digits>" in the path's last component (or, when that
 * is "summary.json", in its directory) that starts the component or follows '.', '_' or '-',
 * and ends it or is followed by one of ".-_/". "out/prof.rank12.hatchet", "rank3.hatchet",
 * "dbg/rank1/summary.json" -> 12, 3, 1. FP_OK, or FP_ENOENT (none, or over FP_RANKS_MAX).
 */
FP_EXTERN int fp_ranks_of_path(const char *path, int64_t *rank);

/**
 * A sorted list of distinct ranks as compact text: runs of three or more become "a-b", others
 * are listed ("0-3,5,7-9", "" for none). `ranks` must be sorted ascending without duplicates.
 * FP_OK; FP_ELIMIT when it does not fit (`out` then ends in "..."); FP_EINVAL (NULL out, cap 0).
 */
FP_EXTERN int fp_ranks_format(const int64_t *ranks, size_t n, char *out, size_t cap);

/* ---- one rank's identity ------------------------------------------------------------------- */

/**
 * Who a process is in its job. Strings are borrowed for the duration of the call that takes the
 * struct; numbers are -1 when unknown. Initialise with fp_ranks_info_init().
 */
struct fp_ranks_info {
	int64_t rank;             /* global rank (torchrun's RANK), >= 0 */
	int64_t local_rank;       /* rank on its host (LOCAL_RANK) */
	int64_t world_size;       /* ranks in the job (WORLD_SIZE), >= 1 */
	int64_t local_world_size; /* ranks on its host (LOCAL_WORLD_SIZE) */
	const char *host;         /* host name */
	const char *device;       /* the device it used ("cuda:0", "cpu"), NULL: unknown */
	const char *backend;      /* torch.distributed backend ("nccl", "gloo"), NULL: none */
	const char *boot_id;      /* the host's boot id (Linux: /proc/sys/kernel/random/boot_id):
				     processes with one boot id share CLOCK_MONOTONIC. NULL: unknown */
	/*
	 * Clock alignment across hosts: every rank left one barrier at (nearly) the same instant.
	 * barrier_exit_ns is fp_prof_clock_ns() when it returned on this rank, barrier_ns how long
	 * it took here: no two ranks left it further apart than the largest barrier_ns of the job
	 * (each left after the last one entered), which bounds the alignment error.
	 */
	bool has_barrier;
	uint64_t barrier_exit_ns;
	uint64_t barrier_ns;
};

/** Set every number to -1, every string to NULL, no barrier. */
FP_EXTERN void fp_ranks_info_init(struct fp_ranks_info *ri);

/**
 * Attach the identity to profiling session `session` (an id from fp_prof_start(), or
 * FP_PROF_ALL for every open session); it replaces an earlier one. It is written as the
 * "distributed" object of `<name>.meta.json` and into the Chrome trace's "otherData" (the trace
 * merger aligns clocks with it). FP_OK, FP_EINVAL (rank < 0, world size < 1, rank >= world
 * size), FP_ENOENT (no such session), FP_ENOMEM.
 */
FP_EXTERN int fp_ranks_attach(int session, const struct fp_ranks_info *ri);

/** A rank's identity as read back from a file; strings are NUL-terminated copies (cut). */
struct fp_ranks_read {
	bool found; /* the file said who wrote it */
	int64_t rank, local_rank, world_size, local_world_size;
	char host[256];
	char device[64];
	char backend[32];
	char boot_id[64];
	bool has_barrier;
	uint64_t barrier_exit_ns, barrier_ns;
	uint64_t origin_ns;      /* the session's clock origin (monotonic ns); 0: unknown */
	uint64_t origin_unix_ns; /* the same instant on the wall clock; 0: unknown */
	bool incomplete;         /* the session did not end cleanly */
};

/**
 * Read the "distributed" object of a FlagPrism meta file (`<stem>.meta.json`; `path` may also
 * be the Hatchet file beside it). FP_OK with out->found set when it has one (false for a session
 * outside a job, or a missing meta file: FP_OK too); FP_EFORMAT with diag naming the file and
 * place for a meta file that is not JSON or whose "distributed" object is malformed; FP_EIO.
 */
FP_EXTERN int fp_ranks_read_meta(const char *path, struct fp_ranks_read *out, struct fp_diag *diag);

/** fp_ranks_read_meta() on the text of a meta file (`name` for messages; may be NULL). */
FP_EXTERN int fp_ranks_parse_meta(const char *text, size_t len, const char *name,
				  struct fp_ranks_read *out, struct fp_diag *diag);

/* ---- merging profiles ---------------------------------------------------------------------- */

/**
 * Merge the profiles of `n` ranks (n >= 1, ranks[i] the rank of in[i], distinct, each
 * < world_size) into a new tree over the union of their call paths. On top of
 * fp_calltree_merge() (each summed metric M: the mean over the n inputs, "M (min)",
 * "M (max)"), every summed metric gets
 *   "M (sum)"       the sum over the inputs (inclusive metrics stay inclusive), and
 *   "M (max rank)"  the rank whose value is the "M (max)" (inclusive totals for inclusive
 *                   metrics, own values otherwise; ties: the lowest rank; among the ranks
 *                   that have the node),
 * and the root gets the job: "ranks (pty)" (fp_ranks_format() of the ranks), "world_size
 * (pty)", "missing_ranks (pty)" (those below world_size that are not among the inputs; "" for
 * none). `world_size` 0 means the largest rank + 1. Inputs are finalized (hence not const).
 * FP_OK; FP_EINVAL (duplicate or negative ranks, a rank >= world_size, inputs that disagree on
 * a metric's kind); FP_ENOMEM; FP_ELIMIT.
 */
FP_EXTERN int fp_ranks_merge(struct fp_calltree *const *in, const int64_t *ranks, size_t n,
			     int64_t world_size, struct fp_calltree **out);

/**
 * fp_ranks_merge() with a choice of M (fp_calltree_merge_op()): FP_MERGE_MEAN as
 * fp_ranks_merge(), FP_MERGE_SUM makes M the sum over the ranks ("M (sum)" then equals it).
 * FP_EINVAL also for an unknown `op`.
 */
FP_EXTERN int fp_ranks_merge_op(struct fp_calltree *const *in, const int64_t *ranks, size_t n,
				int64_t world_size, enum fp_merge_op op, struct fp_calltree **out);

/**
 * Missing ranks: the ranks in [0, world_size) not among `ranks` (n entries, any order), stored
 * ascending, up to `cap` of them; returns how many there are. Never fails.
 */
FP_EXTERN size_t fp_ranks_missing(const int64_t *ranks, size_t n, int64_t world_size, int64_t *out,
				  size_t cap);

/* ---- merging Chrome traces ----------------------------------------------------------------- */

/** How the ranks' clocks are put on one time line. */
enum fp_ranks_align {
	FP_RANKS_ALIGN_AUTO = 0,    /* CLOCK when every rank ran on one host (the same boot id,
				     * or, where one is not recorded, the same host name), else
				     * BARRIER when every rank has one, else WALL */
	FP_RANKS_ALIGN_CLOCK = 1,   /* the host's monotonic clock (exact on one host) */
	FP_RANKS_ALIGN_BARRIER = 2, /* the instant each rank left the start barrier */
	FP_RANKS_ALIGN_WALL = 3,    /* each session's wall-clock start (error unknown) */
};

/** "auto", "clock", "barrier", "wall" (static strings; "?" for others). */
FP_EXTERN const char *fp_ranks_align_name(enum fp_ranks_align a);

/** Options of fp_ranks_merge_traces(); zero-initialise. */
struct fp_ranks_trace_options {
	enum fp_ranks_align align;
	int64_t world_size;  /* 0: from the traces (their otherData), else the largest rank + 1 */
	unsigned json_flags; /* fp_jsonw flags of the output (FP_JSONW_PRETTY) */
};

/** What a trace merge did. Caller-owned; filled by the call (also on most failures). */
struct fp_ranks_trace_report {
	size_t ranks; /* traces merged */
	int64_t world_size;
	enum fp_ranks_align used; /* the alignment applied */
	int64_t error_ns;         /* bound on the alignment error; -1: unknown (WALL) */
	uint64_t events;          /* events written (metadata events excluded) */
	size_t nmissing;          /* ranks below world_size without a trace */
	char missing[256];        /* fp_ranks_format() of them */
	char note[512];           /* how the clocks were aligned, in words */
};

/**
 * Merge Chrome traces of ranks (as `flagprism profile -d trace` writes them, one per rank) into
 * one trace written to `out`: one process per rank (pid rank + 1, named "rank R (HOST)", sorted
 * by rank), each input process's threads as that process's threads (named "<input process>
 * <input thread>", e.g. "CUDA 0 stream 7 communication"), every other event copied with its pid
 * and tid replaced and its "ts" moved onto the common time line (integer nanoseconds, written
 * exactly as microseconds with three decimals). A trace's rank comes from its "otherData"
 * (written by fp_ranks_attach()), else from its path (fp_ranks_of_path()), else its position.
 * `texts[i]` (`lens[i]` bytes) is the trace read from `names[i]` (used in messages).
 * FP_OK; FP_EFORMAT (diag: "<name>:<line>:<col>: ..."), FP_EINVAL (two traces of one rank,
 * BARRIER asked for but a rank has no barrier, disagreeing world sizes), FP_ELIMIT, FP_ENOMEM,
 * FP_EIO (writing).
 */
FP_EXTERN int fp_ranks_merge_trace_texts(const char *const *texts, const size_t *lens,
					 const char *const *names, size_t n,
					 const struct fp_ranks_trace_options *o, FILE *out,
					 struct fp_ranks_trace_report *rep, struct fp_diag *diag);

/** The same, reading `paths` and writing `out_path` through a temporary file and a rename. */
FP_EXTERN int fp_ranks_merge_traces(const char *const *paths, size_t n,
				    const struct fp_ranks_trace_options *o, const char *out_path,
				    struct fp_ranks_trace_report *rep, struct fp_diag *diag);

/* ---- merging the Debugger's summaries ------------------------------------------------------- */

/** What a summary merge did. Caller-owned; filled by the call. */
struct fp_ranks_summary_report {
	size_t ranks;
	int64_t world_size; /* 0: the inputs were a pytest-xdist session's workers' parts, merged
			       as fp_dbg_summary_write_parts() says; `missing` names workers */
	uint64_t kernels, findings; /* listed in the merged summary */
	size_t nmissing;
	char missing[256];
	size_t incomplete; /* ranks whose summary says it is incomplete */
};

/**
 * Merge the Debugger's summaries of several ranks (`summary.json` texts, schema
 * docs/formats/debugger-report-schema.md "Summary") into one in the same schema, written as JSON to
 * `json` and as text to `txt` (either may be NULL): totals and dropped counts summed, every
 * kernel and every finding listed once per rank with a "rank" member, plus "ranks": {merged,
 * world_size, missing, inputs: [{rank, host, summary, complete, incomplete_reason,
 * exit_status}]}. A summary's rank comes from its "distributed" object, else from its path,
 * else its position. complete is false when a rank's summary is incomplete or a rank is
 * missing; exit_status is the first non-zero rank status (0 when all are 0, null when one is
 * unknown). Summaries that all have a "worker" object (the parts of a pytest-xdist session,
 * <flagprism/debug-summary.h>) are merged by worker instead: a "worker" member, "workers"
 * instead of "ranks", missing workers gw0 .. gw<count - 1> without a part. FP_OK; FP_EFORMAT (diag names the input and place: not JSON, not a summary, a
 * member of the wrong type), FP_EVERSION (a summary version other than 1), FP_EINVAL (two
 * summaries of one rank, disagreeing world sizes), FP_ENOMEM, FP_ELIMIT, FP_EIO.
 */
FP_EXTERN int fp_ranks_merge_summary_texts(const char *const *texts, const size_t *lens,
					   const char *const *names, size_t n, FILE *json,
					   FILE *txt, struct fp_ranks_summary_report *rep,
					   struct fp_diag *diag);

/**
 * The same from files: each of `paths` is a summary.json or a Debugger output directory holding
 * one; writes `out_dir`/summary.json and `out_dir`/summary.txt (the directory is created; each
 * file through a temporary name and a rename).
 */
FP_EXTERN int fp_ranks_merge_summaries(const char *const *paths, size_t n, const char *out_dir,
				       struct fp_ranks_summary_report *rep, struct fp_diag *diag);

/* ---- viewing a merged profile --------------------------------------------------------------- */

/** Options of fp_ranks_view_render(). Zero-initialise; strings are borrowed. */
struct fp_ranks_view_options {
	const char *metric;  /* the summed metric shown (default "time (ns)"; in ms when its
				name says ns) */
	uint32_t max_depth;  /* 0: the viewer's default */
	double threshold;    /* as struct fp_view_options */
	const char *include; /* as struct fp_view_options */
	const char *exclude;
	int format; /* enum fp_view_format */
	bool sort_by_name;
};

/**
 * Render a profile made by fp_ranks_merge() as the imbalance across ranks: a header with the
 * ranks, world size and missing ranks, then the tree with, per node, the mean, min and max over
 * ranks, max/mean and the rank of the max, then the job's straggler (the rank of the root's
 * max) and the nodes with the largest max/mean. FP_OK; FP_ENOENT (the tree has no "M (max)":
 * not a merged profile, diag says so); FP_EINVAL (bad option, diag says which); FP_EIO, FP_ENOMEM.
 */
FP_EXTERN int fp_ranks_view_render(struct fp_calltree *t, const struct fp_ranks_view_options *o,
				   FILE *f, struct fp_diag *diag);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_RANKS_H */
