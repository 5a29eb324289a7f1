/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Intra-kernel timelines: the decoder of the timeline buffer an instrumented kernel fills with
 * one enter/exit record per program and scope (docs/formats/timeline-format.md), the per-scope
 * statistics over programs, and the intake of a decoded launch into profiling sessions (scope
 * nodes under the kernel's node in the call tree, scope slices on per-SM or per-program tracks
 * of the Chrome trace, see docs/guide/intra-kernel.md). It does not rewrite kernels or allocate device
 * buffers: the Python layer does (python/flagprism/_timeline.py).
 *
 * Ownership: fp_timeline_decode() returns a heap object the caller frees with
 * fp_timeline_free(); the pointers its accessors return are borrowed from it. The decoder never
 * trusts a size read from the buffer: everything it allocates is bounded by the buffer's length.
 */
#ifndef FLAGPRISM_TIMELINE_H
#define FLAGPRISM_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <flagprism/calltree.h>
#include <flagprism/export.h>
#include <flagprism/prof.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The buffer format, version 1 (little-endian int64 words; docs/formats/timeline-format.md). */
#define FP_TIMELINE_MAGIC UINT64_C(0x000000314C545046) /* "FPTL1" */
#define FP_TIMELINE_VERSION 1u
#define FP_TIMELINE_HEADER_WORDS 8u
#define FP_TIMELINE_RECORD_WORDS 4u
#define FP_TIMELINE_MAX_SCOPES 65535u
#define FP_TIMELINE_MAX_DEPTH 64u /* nested scopes open at once in one program */

/*
 * Header word 1: version | clock << 8 | record words << 16. The decoder's times are ns whatever
 * the clock: AMD ticks are converted with the rate in header word 5 (kHz, as HIP's
 * hipDeviceAttributeWallClockRate reports it: 25,000 on gfx90a, 100,000 on gfx942).
 */
enum fp_timeline_clock {
	FP_TIMELINE_CLOCK_HOST = 0,   /* host CLOCK_MONOTONIC ns (the interpreter), no cycles */
	FP_TIMELINE_CLOCK_NVIDIA = 1, /* %globaltimer ns and %clock64 cycles, %smid */
	FP_TIMELINE_CLOCK_AMD = 2,    /* s_memrealtime ticks, s_memtime cycles, HW_ID bits 8-15 */
};
#define FP_TIMELINE_MAX_TICK_KHZ 10000000u /* AMD tick rates above 10 GHz are refused */

/* Record kinds (tag bits 16..23). */
enum fp_timeline_kind {
	FP_TIMELINE_ENTER = 0,
	FP_TIMELINE_EXIT = 1,
	FP_TIMELINE_BEGIN = 2, /* the program's first record, written by the twin's prologue */
	FP_TIMELINE_END = 3, /* after the kernel's last statement (absent after an early return) */
};

/** What the decoder found besides the intervals. */
struct fp_timeline_info {
	uint32_t clock;    /* enum fp_timeline_clock */
	uint32_t nscopes;  /* scope ids 1..nscopes are valid */
	uint64_t programs; /* P */
	uint64_t slots;    /* S: records per program */
	uint64_t records;  /* records decoded (begin records included) */
	uint64_t overflow; /* records programs wanted to write beyond S (exact) */
	uint64_t overflowed_programs;
	uint64_t missing;   /* programs that wrote nothing (did not run, or the launch failed) */
	uint64_t unclosed;  /* scopes still open at a program's last record, without overflow */
	uint64_t truncated; /* scopes left open because the program overflowed */
	uint64_t backwards; /* intervals whose exit time was before their enter time (set to 0) */
	uint64_t t_min;     /* earliest timestamp of the launch (ns, the buffer's clock) */
	uint64_t t_max;     /* latest */
	double span_sum;    /* sum over programs of last - first timestamp (ns) */
	uint64_t tick_khz;  /* FP_TIMELINE_CLOCK_AMD: the header's tick rate (kHz); 0 otherwise */
};

/** One closed scope of one program. */
struct fp_timeline_interval {
	uint64_t begin_ns, end_ns; /* the buffer's clock */
	uint64_t cycles;           /* %clock64 or s_memtime difference (0 on the host clock) */
	uint32_t program;          /* linear program id */
	uint32_t smid;             /* %smid (AMD: HW_ID bits 8-15) of the exit record (0: host) */
	uint16_t scope;            /* 1..nscopes */
	uint16_t parent;           /* enclosing open scope, 0 for none */
	uint32_t depth;            /* 0 for an outermost scope */
};

/** Per-scope statistics over the programs of one launch. */
struct fp_timeline_scope_stats {
	uint64_t intervals;        /* closed intervals, all programs */
	uint64_t programs;         /* programs with at least one */
	double time_sum;           /* ns, summed over programs */
	double time_min, time_max; /* per-program total ns */
	double cycles_sum, cycles_min, cycles_max;
	uint16_t parent; /* enclosing scope at its first interval, 0 for none */
};

/** Opaque decoded launch. */
struct fp_timeline;

/**
 * Decode and validate a timeline buffer of `len` bytes. FP_OK and *out (free with
 * fp_timeline_free()); FP_EFORMAT (diag names the byte offset, program and record: bad magic,
 * clock, AMD tick rate, sizes, kind, scope id, an exit that does not match the open scope,
 * nesting deeper than FP_TIMELINE_MAX_DEPTH, an AMD time beyond 2^64 ns), FP_EVERSION,
 * FP_ENOMEM. Overflow is not an error: it is counted. Times come out in ns on every clock.
 */
FP_EXTERN int fp_timeline_decode(const void *buf, size_t len, struct fp_timeline **out,
				 struct fp_diag *diag);

/** Free a decoded launch; NULL is a no-op. */
FP_EXTERN void fp_timeline_free(struct fp_timeline *t);

/** The launch's counters (borrowed). */
FP_EXTERN const struct fp_timeline_info *fp_timeline_get_info(const struct fp_timeline *t);

/** The intervals, ordered by program then by exit (borrowed); returns their count. */
FP_EXTERN size_t fp_timeline_intervals(const struct fp_timeline *t,
				       const struct fp_timeline_interval **out);

/**
 * Statistics of scope `scope` (1..nscopes). FP_OK (a scope no program entered has
 * programs == 0) or FP_EINVAL.
 */
FP_EXTERN int fp_timeline_scope_stats(const struct fp_timeline *t, uint32_t scope,
				      struct fp_timeline_scope_stats *out);

/* ---- intake into profiling sessions ----------------------------------------------------------- */

#define FP_PROF_TL_PIPELINED \
	(1u << 0)                           /* scope flag: inside or around a loop the compiler may
					* software-pipeline; its boundaries may have moved */
#define FP_PROF_TL_PROGRAM_TRACKS (1u << 0) /* add flag: one trace track per program, not per SM */

/** The name and flags of scope id i + 1 (names are copied). */
struct fp_prof_tl_scope {
	const char *name;
	size_t len;
	unsigned flags;
};

/**
 * File one decoded launch in `session` (or every active session with FP_PROF_ALL), on the
 * calling thread: the kernel's node is the one a launch `l` on this thread lands on now (its
 * scopes, state, call path and name), and under it each scope gets a node (nested scopes under
 * their parent) with the metrics of docs/guide/intra-kernel.md. With trace data, every interval also
 * becomes a slice on its SM's (or program's) track, aligned at write time to the kernel's event
 * found on the same node between host_begin_ns and host_end_ns (the host clock around the
 * launch and its synchronisation). FP_OK, FP_EINVAL, FP_ENOENT (no such session); per-session
 * failures and caps are counted (metadata "intra_kernel"), not returned.
 */
FP_EXTERN int fp_prof_timeline_add(int session, const struct fp_sink_launch *l,
				   const struct fp_timeline *t,
				   const struct fp_prof_tl_scope *scopes, size_t nscopes,
				   uint64_t host_begin_ns, uint64_t host_end_ns, unsigned flags);

/* ---- the viewer's section -------------------------------------------------------------------- */

/**
 * Write the intra-kernel section of `flagprism view` for tree `t` (a session's or one read
 * from a .hatchet file): per kernel node with timelines, its scope nodes with programs,
 * mean/min/max time per program, mean cycles, share and warnings. Writes nothing when the tree
 * has no timelines. FP_OK, FP_EINVAL, FP_EIO (write error), FP_ENOMEM.
 */
FP_EXTERN int fp_view_timeline_summary(const struct fp_calltree *t, FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_TIMELINE_H */
