/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The error helpers shared by the Debugger's JSON parsers (the site table, sites.c, and the
 * launch JSON, launch.c): they turn a JSON value into the diag's offset, line and column. Kept
 * apart from debug-internal.h so that the launch parser and the report writers can use them
 * without seeing the run's internals.
 */
#ifndef FP_DEBUG_DIAG_INTERNAL_H
#define FP_DEBUG_DIAG_INTERNAL_H

#include <stdarg.h>

#include <flagprism/json.h>
#include <flagprism/status.h>

/*
 * Fill `diag` (may be NULL) with "<prefix>: <message>" and the position of `v` in `doc` (offset
 * 0, line and column 0 when `v` is NULL). The message is cut at 200 bytes. Returns `status`.
 */
int fp__dbg_json_verr(const struct fp_json_doc *doc, struct fp_diag *diag, int status,
		      const struct fp_json_value *v, const char *prefix, const char *fmt,
		      va_list ap) FP_PRINTF(6, 0);

/* A launch JSON being read, for fp__dbg_launch_err. */
struct fp__dbg_jctx {
	const struct fp_json_doc *doc;
	struct fp_diag *diag;
};

/* fp__dbg_json_verr with the prefix "launch", for the launch JSON's readers. */
int fp__dbg_launch_err(struct fp__dbg_jctx *c, int status, const struct fp_json_value *v,
		       const char *fmt, ...) FP_PRINTF(4, 5);

#endif /* FP_DEBUG_DIAG_INTERNAL_H */
