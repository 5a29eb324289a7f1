/* SPDX-License-Identifier: Apache-2.0 */
/*
 * First include of every library .c file: feature-test macros, compiler attributes, the
 * internal allocation names and the list of banned functions. Not a public header.
 */
#ifndef FP_SETUP_H
#define FP_SETUP_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/alloc.h>
#include <flagprism/status.h>

#if defined(__GNUC__)
#define FP_UNUSED __attribute__((unused))
#define FP_LIKELY(x) __builtin_expect(!!(x), 1)
#define FP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define FP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FP_UNUSED
#define FP_LIKELY(x) (x)
#define FP_UNLIKELY(x) (x)
#define FP_PRINTF(a, b)
#endif

/* Internal functions that unit tests call are non-static but hidden: mark them so. */
#define FP_UNITTEST

#define FP_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define FP_MIN(a, b) ((a) < (b) ? (a) : (b))
#define FP_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Checked size arithmetic: return false on overflow. */
static inline bool fp__mul_ok(size_t a, size_t b, size_t *out)
{
	if (a != 0 && b > SIZE_MAX / a)
		return false;
	*out = a * b;
	return true;
}

static inline bool fp__add_ok(size_t a, size_t b, size_t *out)
{
	if (b > SIZE_MAX - a)
		return false;
	*out = a + b;
	return true;
}

#include "banned.h"

#endif /* FP_SETUP_H */
