/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fast number formatting for the Debugger's reports (dbg-num.c). A 64M-element launch puts about
 * a million doubles into each report; libc's printf/strtod spend a microsecond on each. These
 * produce exactly the same text as the slow paths they replace (they fall back to them whenever
 * 64-bit fixed-point arithmetic cannot decide a rounding for sure), so reports do not depend on
 * which path ran. Not a general-purpose formatter.
 */
#ifndef FP_DBG_NUM_H
#define FP_DBG_NUM_H

#include <stddef.h>

/*
 * `v` as fp_json_format_double() writes it (shortest of %.15g/%.16g/%.17g that reads back,
 * ".0" for integral values); finite `v` only. `buf` holds at least 32 bytes. Returns the length,
 * or a negative status for a non-finite value.
 */
int fp__dbg_fmt_json(double v, char *buf, size_t size);

/* `v` as snprintf("%.6g") writes it in the "C" locale; `buf` holds at least 32 bytes. */
int fp__dbg_fmt_g6(double v, char *buf, size_t size);

#endif /* FP_DBG_NUM_H */
