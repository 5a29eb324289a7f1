/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Finding NVIDIA's CUPTI library at run time. FlagPrism never links CUPTI: the profiler's CUPTI
 * backend loads it with dlopen, and `flagprism doctor` asks the same question before any
 * profiling starts: which libcupti would be used, does it answer, and which API version is it.
 * This header is only the probe; it needs no CUDA header and no GPU (cuptiGetVersion() works
 * without a driver). The activity and callback backend lives elsewhere.
 */
#ifndef FLAGPRISM_CUPTI_H
#define FLAGPRISM_CUPTI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flagprism/export.h>

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

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_CUPTI_H */
