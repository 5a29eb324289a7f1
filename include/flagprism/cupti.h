/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NVIDIA's CUPTI library, loaded at run time: the probe (which libcupti would be used, does it
 * answer, which API version is it), the "cupti" profiler backend built on it, and the check of
 * whether hardware counters and PC sampling are permitted. FlagPrism never links CUPTI and needs
 * no CUDA header; without a libcupti everything here still builds, and the backend's start says
 * why it cannot run. docs/internals/cupti-backend.md describes the backend.
 */
#ifndef FLAGPRISM_CUPTI_H
#define FLAGPRISM_CUPTI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flagprism/backend.h>
#include <flagprism/export.h>
#include <flagprism/sink.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FP_CUPTI_PATH_MAX 4096 /* bytes in fp_cupti_probe_result.path, NUL included */
#define FP_CUPTI_ERROR_MAX 512 /* bytes in fp_cupti_probe_result.error, NUL included */

/* Environment variable naming a libcupti file, or a directory holding one. */
#define FP_CUPTI_PATH_ENV "FLAGPRISM_CUPTI_PATH"

/* Where the library the probe settled on came from. */
enum fp_cupti_origin {
	FP_CUPTI_ORIGIN_NONE = 0,    /* nothing found */
	FP_CUPTI_ORIGIN_PROCESS = 1, /* a copy the process had already loaded */
	FP_CUPTI_ORIGIN_ENV = 2,     /* $FLAGPRISM_CUPTI_PATH */
	FP_CUPTI_ORIGIN_EXTRA = 3,   /* one of the caller's extra directories */
	FP_CUPTI_ORIGIN_TOOLKIT = 4, /* /usr/local/cuda */
	FP_CUPTI_ORIGIN_LOADER = 5, /* the dynamic loader's search (LD_LIBRARY_PATH, ld.so.cache) */
};

/*
 * What the probe found. Caller-owned, filled completely by fp_cupti_probe() (strings always
 * NUL-terminated, possibly truncated to their buffer); nothing in it needs releasing.
 */
struct fp_cupti_probe_result {
	bool found;                   /* a libcupti was loaded and cuptiGetVersion() answered */
	bool already_loaded;          /* that copy was in the process before the probe */
	bool nvperf_host;             /* libnvperf_host.so sits in the same directory (counters) */
	bool pcsampling;              /* the library has the PC-sampling API (cupti_pcsampling.h) */
	enum fp_cupti_origin origin;  /* where `path` came from; NONE when no file was loaded */
	uint32_t api_version;         /* cuptiGetVersion(): e.g. 26 (CUDA 12.8), 130001 (13.0) */
	unsigned tried;               /* candidate files or names the probe tried to load */
	char path[FP_CUPTI_PATH_MAX]; /* the loaded file as the loader names it; "" if none */
	char error[FP_CUPTI_ERROR_MAX]; /* why not found or not usable; notes on success; "" */
};

/**
 * Find libcupti, load it, call cuptiGetVersion() and describe the result in `out`.
 *
 * Order, first hit wins:
 *  0. a libcupti the process already holds (found by walking the loaded objects): a process
 *     must never hold two CUPTI copies, so this wins even over $FLAGPRISM_CUPTI_PATH;
 *  1. $FLAGPRISM_CUPTI_PATH, a file or a directory; when set (and non-empty) it is the only
 *     place looked at, and a failure there is final (no silent fallback to another copy);
 *  2. the caller's `extra_dirs` in order (NULL entries and missing directories are skipped);
 *  3. /usr/local/cuda/lib64, then /usr/local/cuda/targets/x86_64-linux/lib;
 *  4. the loader's search for "libcupti.so", "libcupti.so.13", "libcupti.so.12".
 * In a directory the names tried are libcupti.so, libcupti.so.13, libcupti.so.12.
 *
 * The library is opened RTLD_NOW | RTLD_LOCAL and closed again before returning, unless the
 * process already held it (then only the probe's own reference is dropped). The probe prints
 * nothing; loader messages are copied into `out->error`. Not thread-safe against concurrent
 * dlopen/dlerror users (dlerror() state).
 *
 * Returns FP_OK (found, api_version set); FP_ENOENT (no candidate could be loaded: `error`
 * says where it looked and the loader's last complaint); FP_EVENDOR (a library loaded but
 * cuptiGetVersion() is missing or failed: `path` names it); FP_EINVAL (`out` NULL, or
 * `n_extra` > 0 with `extra_dirs` NULL).
 */
FP_EXTERN int fp_cupti_probe(const char *const *extra_dirs, size_t n_extra,
			     struct fp_cupti_probe_result *out);

/** Short name of an origin ("process", "env", "extra", "toolkit", "loader", "none"). */
FP_EXTERN const char *fp_cupti_origin_name(enum fp_cupti_origin origin);

/* ---- the "cupti" profiler backend ------------------------------------------------------------ */

/*
 * Kernel activity records (CONCURRENT_KERNEL) correlated to the launching thread's context. The
 * launch callbacks (driver cuLaunchKernel/Ex, cooperative launches, cuGraphLaunch, and their
 * runtime counterparts for PyTorch's kernels) only store, per correlation id, the thread's
 * launch context (captured through the sink, include/flagprism/sink.h) and the call path /
 * metadata the Python hook set with fp_cupti_set_thread_launch(): no lock, no allocation.
 * Records are read when CUPTI hands a buffer back and delivered to every active "cupti" session
 * through its sink. CUDA graphs: kernels captured while
 * profiling remember their capture context and land under the replaying scope, then the capture
 * scope (docs/internals/cupti-backend.md shows the tree). One CUPTI subscriber may exist per process:
 * start fails with FP_EBUSY, naming the other subscriber when CUPTI says who, if one exists.
 *
 * Environment (read at the first start): $FLAGPRISM_CUPTI_PATH (the probe's override),
 * $FLAGPRISM_CUPTI_BUFFER_SIZE (bytes per activity buffer), $FLAGPRISM_CUPTI_BUFFERS (how many,
 * at most 64), $FLAGPRISM_CUDA_DRIVER_PATH (libcuda for the device table; tests).
 */

#define FP_CUPTI_BACKEND "cupti"
#define FP_CUPTI_DEFAULT_BUFFER_SIZE ((size_t)4 << 20)
#define FP_CUPTI_DEFAULT_BUFFERS 16u
#define FP_CUPTI_MAX_BUFFERS 64u
#define FP_CUPTI_DEFAULT_CORR_SLOTS ((size_t)1 << 18)
#define FP_CUPTI_DEFAULT_GRAPH_NODES ((size_t)1 << 15)

/** The backend's ops (include/flagprism/backend.h), named FP_CUPTI_BACKEND. */
FP_EXTERN const struct fp_backend_ops *fp_backend_cupti(void);

/** Add the backend to the registry (idempotent): FP_OK, or fp_backend_register()'s error. */
FP_EXTERN int fp_cupti_register(void);

/** Settings taken at the first start; zero fields keep the environment's value or default. */
struct fp_cupti_config {
	const char *const *extra_dirs; /* probe directories (Triton's bundled copy, torch's
					* nvidia/cu13/lib), copied */
	size_t n_extra;
	size_t buffer_size; /* bytes per activity buffer, >= 1 KiB (use MiBs), multiple of 8 */
	unsigned buffers;   /* activity buffers in the pool, <= FP_CUPTI_MAX_BUFFERS */
	size_t corr_slots;  /* launches remembered until their records come, a power of two */
	size_t graph_nodes; /* CUDA-graph kernel nodes tracked at once */
};

/**
 * Set what the first start uses. FP_OK, FP_EINVAL (a bad value), FP_ESTATE (the backend has
 * already started once in this process: its tables exist), FP_ENOMEM.
 */
FP_EXTERN int fp_cupti_configure(const struct fp_cupti_config *cfg);

/**
 * For the next kernel launch API call on the calling thread only (then it reverts): file it
 * under Python call path `callpath` (fp_prof_callpath_intern(); FP_SINK_NO_CALLPATH for none)
 * with launch metadata `md` (NULL: none). The Python launch hook calls this just before each
 * Triton launch. No lock, no allocation; callable while no session is open.
 */
FP_EXTERN void fp_cupti_set_thread_launch(uint32_t callpath, const struct fp_sink_metadata *md);

/** fp_cupti_set_thread_launch(callpath, NULL). */
FP_EXTERN void fp_cupti_set_thread_callpath(uint32_t callpath);

/** Flag of fp_cupti_set_thread_launch_ex(): md's est_bytes / est_flops are per program; the
 * backend multiplies them by the grid of the kernel's activity record (so the launch hook need
 * not know the grid, and a replayed graph node is multiplied by its own grid). */
#define FP_CUPTI_LAUNCH_EST_PER_PROGRAM 1u

/** fp_cupti_set_thread_launch() with flags (FP_CUPTI_LAUNCH_*; unknown bits are ignored). */
FP_EXTERN void fp_cupti_set_thread_launch_ex(uint32_t callpath, const struct fp_sink_metadata *md,
					     unsigned flags);

/** Process-wide counters of the backend: what it saw, delivered and lost. */
struct fp_cupti_stats {
	bool loaded;     /* a libcupti is bound */
	bool subscribed; /* our subscriber exists (kept for the life of the process) */
	bool enabled;    /* callbacks and activity on: at least one session open */
	uint32_t api_version;
	unsigned sessions;            /* open "cupti" sessions */
	uint64_t kernels;             /* kernel records delivered */
	uint64_t misses;              /* records with no remembered launch: filed at ROOT (graph
				       * kernels: under their capture context) and, outside
				       * graphs, counted as the sessions' `unmatched` */
	uint64_t no_timing;           /* records with start = end = 0, dropped (reported) */
	uint64_t cupti_dropped;       /* cuptiActivityGetNumDroppedRecords() (reported) */
	uint64_t buffers_denied;      /* buffer requests that found the pool empty */
	uint64_t buffers_completed;   /* buffers CUPTI handed back */
	uint64_t graph_unknown;       /* graph kernels whose node was not captured while profiling:
				       * filed under the replaying context only */
	uint64_t graph_nodes;         /* graph kernel nodes tracked now */
	uint64_t graph_untracked;     /* nodes not tracked: table full */
	uint64_t md_lost;             /* launch metadata overwritten before the record came */
	uint64_t corr_collisions;     /* launches not remembered: their slot was being written */
	uint64_t other_records;       /* records of other kinds, skipped */
	uint64_t bad_buffers;         /* buffers whose walk stopped at a bad record */
	uint64_t orphaned;            /* kernel records that arrived with no session open */
	int64_t clock_offset_ns;      /* CUPTI's clock minus the sink's, subtracted */
	char path[FP_CUPTI_PATH_MAX]; /* the bound library, "" if none */
};

/** Fill *out. FP_OK or FP_EINVAL. */
FP_EXTERN int fp_cupti_get_stats(struct fp_cupti_stats *out);

/* ---- capturing raw activity buffers ---------------------------------------------------------- */

/*
 * For backend developers and fuzzing (tests/fuzz/fuzz-cupti-records.c takes such files as seeds
 * through scripts/fuzz-seed-cupti.sh): while a capture is set, the valid bytes of every
 * activity buffer CUPTI hands back are written, as they are, to a file
 * `<dir>/cupti-<api_version>-<pid>-<seq>.rec` (api_version: the loaded CUPTI's, the one the
 * records are read with; seq counts the files of the process from 0), until the files hold
 * `max_bytes` in all: the first buffer that would pass the cap ends the capture, and it and every
 * later buffer are counted as skipped. Files are written through fp_outfile (a temporary file
 * renamed into place) from CUPTI's thread, after the buffer was read; a file that cannot be
 * written is counted and the profile is not affected. The records hold kernel names as pointers
 * only, no names or arguments. Process-wide, like the backend.
 */

/* Environment variables the Python profiler reads at a "cupti" start (not the library). */
#define FP_CUPTI_CAPTURE_ENV "FLAGPRISM_CUPTI_CAPTURE"
#define FP_CUPTI_CAPTURE_BYTES_ENV "FLAGPRISM_CUPTI_CAPTURE_BYTES"

/**
 * Capture the activity buffers into directory `dir` (copied), at most `max_bytes` in all; `dir`
 * NULL or "" stops capturing (the counters are kept). Setting a capture starts its counters
 * afresh. `dir` must be an existing directory a file can be created in now (a probe file is
 * created and removed). FP_OK; FP_EINVAL (max_bytes 0 with a directory, or a path too long for
 * the file names); FP_EIO (not a directory, missing, or not writable: diag names the path and
 * the errno name); FP_ENOMEM. Callable at any time, sessions open or not.
 */
FP_EXTERN int fp_cupti_capture(const char *dir, uint64_t max_bytes, struct fp_diag *diag);

/** What the capture did since it was last set. */
struct fp_cupti_capture_stats {
	bool active;                    /* a capture is set and has not reached its cap */
	uint64_t max_bytes;             /* the cap; 0 when none was ever set */
	uint64_t files;                 /* files written */
	uint64_t bytes;                 /* bytes in them */
	uint64_t skipped;               /* buffers not captured: the cap was reached */
	uint64_t skipped_bytes;         /* their valid bytes */
	uint64_t failures;              /* files that could not be written (nothing left behind) */
	char dir[FP_CUPTI_PATH_MAX];    /* the directory; "" when none was ever set */
	char error[FP_CUPTI_ERROR_MAX]; /* the first failure's reason; "" */
};

/** Fill *out. FP_OK or FP_EINVAL. */
FP_EXTERN int fp_cupti_capture_get_stats(struct fp_cupti_capture_stats *out);

/* ---- per-kernel IR estimates, looked up in the launch callback ------------------------------ */

/*
 * A table CUfunction -> per-program IR estimate (bytes, FLOPs) that the launch callback reads:
 * while lookups are enabled, a driver launch (cuLaunchKernel, cuLaunchKernelEx, the cooperative
 * launches) that was not handed anything by fp_cupti_set_thread_launch*() gets the estimate of
 * its kernel, multiplied by the grid of its activity record (also a graph node captured from
 * such a launch, by its replay's grid). So a session needs no per-launch call from Python to get
 * estimates: the Python layer fills the table once per kernel, when Triton loads it. Entries live
 * for the process (Triton 3.6 never unloads a kernel); the table holds FP_CUPTI_KEST_SLOTS / 2
 * kernels, and a launch of a kernel it does not know gets no estimate and is counted (`misses`).
 * Lookups are lock-free; setting takes a lock (never call it from a CUPTI callback).
 */
#define FP_CUPTI_KEST_SLOTS 4096u

/**
 * Remember kernel `function` (its CUfunction handle, as Triton's CompiledKernel.function) with
 * per-program estimate est[0] = bytes, est[1] = FLOPs, or with none (`est` NULL: launches of it
 * are known, get nothing and are not misses). Replaces an earlier entry of the same handle.
 * FP_OK, FP_EINVAL (function 0), FP_ELIMIT (table full; counted in `full`).
 */
FP_EXTERN int fp_cupti_kernel_estimate_set(uint64_t function, const double *est);

/** Turn the launch callback's lookups on or off (off initially; entries are kept). */
FP_EXTERN void fp_cupti_kernel_estimates_enable(bool on);

/**
 * Start a new epoch and return its number (>= 1). Every lookup marks its entry with the current
 * epoch, so fp_cupti_kernel_estimates_seen(e) later lists the kernels launched since epoch e
 * began (a session takes one at start to know, at its end, which kernels it saw).
 */
FP_EXTERN uint32_t fp_cupti_kernel_estimates_epoch(void);

/**
 * The handles of the kernels launched (looked up) in epoch `since` or later: up to `cap` into
 * `out` (may be NULL with cap 0). Returns how many there are, which may exceed `cap`.
 */
FP_EXTERN size_t fp_cupti_kernel_estimates_seen(uint32_t since, uint64_t *out, size_t cap);

struct fp_cupti_kest_stats {
	bool enabled;      /* lookups on */
	uint64_t known;    /* kernels in the table */
	uint64_t capacity; /* kernels it can hold */
	uint64_t full;     /* kernels refused: table full */
	uint64_t misses;   /* lookups of a kernel the table did not know (no estimate) */
	uint32_t epoch;    /* the current epoch */
};

/** Fill *out. FP_OK or FP_EINVAL. */
FP_EXTERN int fp_cupti_kernel_estimates_stats(struct fp_cupti_kest_stats *out);

/* ---- reading activity buffers ---------------------------------------------------------------- */

/* One kernel activity record (KERNEL or CONCURRENT_KERNEL) in the record's own units. */
struct fp_cupti_kernel_record {
	uint32_t kind;       /* 3 (KERNEL) or 10 (CONCURRENT_KERNEL) */
	uint16_t registers;  /* per thread */
	uint64_t start, end; /* ns on CUPTI's clock; both 0: no timing was collected */
	uint32_t device_id, context_id, stream_id;
	int32_t grid[3], block[3];
	int32_t static_smem, dynamic_smem; /* bytes */
	uint32_t correlation;   /* of the launching API call (graphs: of cuGraphLaunch) */
	uint64_t name;          /* the record's kernel-name pointer, as a number: only meaningful
				 * in the process that CUPTI wrote the buffer in */
	uint64_t graph_node_id; /* 0 unless a graph launched it */
	uint32_t graph_id;
};

typedef int (*fp_cupti_record_fn)(void *arg, const struct fp_cupti_kernel_record *k);

/**
 * Read a raw buffer of activity records, as a CUPTI of API version `api_version` writes them,
 * with FlagPrism's own bounds-checked reader (not CUPTI's): each record's size comes from its
 * kind and the version, and must fit. Calls `fn` (may be NULL) for each kernel record. The
 * buffer needs no alignment. Returns FP_OK at the end of the buffer; FP_EFORMAT at the first
 * record of an unknown kind or one that does not fit (diag gives its offset); FP_ENOTSUP for a
 * version older than CUDA 11.8's; FP_EINVAL; or the first error `fn` returned. *consumed (may
 * be NULL) receives the bytes read in every case.
 */
FP_EXTERN int fp_cupti_read_records(const void *buf, size_t len, uint32_t api_version,
				    fp_cupti_record_fn fn, void *arg, size_t *consumed,
				    struct fp_diag *diag);

/* ---- hardware counters and PC sampling: permitted? ------------------------------------------- */

enum fp_cupti_counters {
	FP_CUPTI_COUNTERS_UNKNOWN = 0,    /* no NVIDIA driver parameters to read */
	FP_CUPTI_COUNTERS_ALLOWED = 1,    /* open to all users, or this process is privileged */
	FP_CUPTI_COUNTERS_ADMIN_ONLY = 2, /* RmProfilingAdminOnly=1 and this process lacks
					   * root / CAP_SYS_ADMIN / CAP_PERFMON */
};

struct fp_cupti_counters_info {
	enum fp_cupti_counters access;
	int admin_only;   /* the driver's RmProfilingAdminOnly: 0, 1, or -1 when unknown */
	bool privileged;  /* euid 0, or CAP_SYS_ADMIN or CAP_PERFMON in the effective set */
	char detail[256]; /* one sentence for `flagprism doctor` */
};

/**
 * Whether this process may use the profiling APIs (PC sampling, range profiling, PM sampling),
 * which the driver restricts to admins by default (NVreg_RestrictProfilingToAdminUsers). Reads
 * /proc/driver/nvidia/params and /proc/self/status; loads nothing and needs no GPU. Tracing
 * (the "cupti" backend) is not affected. FP_OK (even when the answer is UNKNOWN) or FP_EINVAL.
 */
FP_EXTERN int fp_cupti_counters_check(struct fp_cupti_counters_info *out);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_CUPTI_H */
