/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Logging callback. The library never prints; when something worth telling happens (a vendor
 * library missing, a record dropped) it calls the function set here, if any. The CLI prints to
 * stderr; the Python extension forwards to the `logging` module.
 */
#ifndef FLAGPRISM_LOG_H
#define FLAGPRISM_LOG_H

#include <flagprism/export.h>

#ifdef __cplusplus
extern "C" {
#endif

enum fp_log_level {
	FP_LOG_ERROR = 0,
	FP_LOG_WARN = 1,
	FP_LOG_INFO = 2,
	FP_LOG_DEBUG = 3,
};

/* Domains name the part of the library a message comes from. */
enum fp_log_domain {
	FP_LOG_CORE = 0,
	FP_LOG_DEBUGGER = 1,
	FP_LOG_PROFILER = 2,
	FP_LOG_IR = 3,
	FP_LOG_VENDOR = 4,
};

/** `msg` is borrowed for the duration of the call. Called from any thread, never on a hot path. */
typedef void (*fp_log_fn)(void *user, enum fp_log_level level, enum fp_log_domain domain,
			  const char *msg);

/** Install (or with NULL, remove) the callback; messages above `max_level` are not formatted. */
FP_EXTERN void fp_log_set(fp_log_fn fn, void *user, enum fp_log_level max_level);

/** Emit a message (used by the library; clients may use it too). */
FP_EXTERN void fp_log(enum fp_log_level level, enum fp_log_domain domain, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/** Name of a level ("error", "warn", ...) or domain ("core", ...); never NULL. */
FP_EXTERN const char *fp_log_level_name(enum fp_log_level level);
FP_EXTERN const char *fp_log_domain_name(enum fp_log_domain domain);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_LOG_H */
