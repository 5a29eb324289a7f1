/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Status codes and diagnostics shared by every FlagPrism module.
 *
 * Every fallible library function returns 0 (FP_OK) or a negative FP_E* code from the single
 * X-macro list below; functions that produce a count return it as a non-negative value instead.
 * Parsers and decoders also fill an optional, caller-provided `struct fp_diag` that says where
 * the input went wrong. The library never prints, exits or aborts because of its input: clients
 * (the CLI, the Python extension) turn a status into an exit code or exception in one place.
 */
#ifndef FLAGPRISM_STATUS_H
#define FLAGPRISM_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include <flagprism/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/* name, value, message. Values are stable: they are part of the ABI and of reports. */
#define FP_STATUS_MAP(X)                                                 \
	X(NOMEM, -1, "out of memory")                                    \
	X(INVAL, -2, "invalid argument")                                 \
	X(IO, -3, "input/output error")                                  \
	X(FORMAT, -4, "malformed input")                                 \
	X(VERSION, -5, "unsupported format version")                     \
	X(NOTSUP, -6, "not supported by this build or device")           \
	X(VENDOR, -7, "vendor library error")                            \
	X(LIMIT, -8, "size limit exceeded")                              \
	X(NOENT, -9, "not found")                                        \
	X(STATE, -10, "operation not valid in the current state")        \
	X(OVERFLOW, -11, "record buffer overflowed; data is incomplete") \
	X(BUSY, -12, "resource already in use")

enum fp_status {
	FP_OK = 0,
#define FP__STATUS_ENUM(name, val, msg) FP_E##name = val,
	FP_STATUS_MAP(FP__STATUS_ENUM)
#undef FP__STATUS_ENUM
};

/** Human-readable message for a status; never NULL ("unknown status" for foreign values). */
FP_EXTERN const char *fp_strerror(int status);

/** Symbolic name of a status ("FP_EFORMAT", "FP_OK"); never NULL. */
FP_EXTERN const char *fp_status_name(int status);

/*
 * Where and why an input was rejected. Always caller-owned; the library only writes into it.
 * Fields that do not apply are 0. `msg` is always NUL-terminated after a failure.
 */
struct fp_diag {
	int status;      /* the value the function returned */
	uint32_t line;   /* 1-based line of the offending input, 0 if not a text input */
	uint32_t col;    /* 1-based column in bytes, 0 if not applicable */
	uint64_t offset; /* 0-based byte offset of the offending input */
	char msg[256];   /* human-readable detail naming what was expected */
};

/** Reset a diagnostic to "no error". NULL is accepted. */
FP_EXTERN void fp_diag_clear(struct fp_diag *diag);

/**
 * Record a failure in `diag` (which may be NULL) and return `status`, so that callers can write
 * `return fp_diag_set(diag, FP_EFORMAT, off, "expected ','");`. printf-style message.
 */
FP_EXTERN int fp_diag_set(struct fp_diag *diag, int status, uint64_t offset, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;

/** Like fp_diag_set(), with a text position as well. */
FP_EXTERN int fp_diag_set_pos(struct fp_diag *diag, int status, uint64_t offset, uint32_t line,
			      uint32_t col, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 6, 7)))
#endif
	;

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_STATUS_H */
