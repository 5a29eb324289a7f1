/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What core/ gives the library's other folders beyond its public headers: saving a file through
 * fp_outfile with a callback, reading a whole file, copying a parsed JSON value to a writer, and
 * a positioned error about a JSON input. Shared by the merges of a job's ranks (prof/ranks*.c,
 * debug/summary-ranks.c) and anything else that reads and writes whole JSON files. Not a public
 * header; not for the JSON parser's or writer's own internals (json-internal.h).
 */
#ifndef FP_CORE_INTERNAL_H
#define FP_CORE_INTERNAL_H

#include <stdio.h>

#include <flagprism/json.h>
#include <flagprism/status.h>

/*
 * Write `path` through fp_outfile (a temporary file renamed onto it, a device or FIFO written
 * through): fn(arg, f) writes the contents. FP_OK, FP_EIO (diag names the path and the errno),
 * FP_EINVAL (a destination fp_outfile refuses), or fn's error (nothing replaced).
 */
int fp__outfile_save(const char *path, int (*fn)(void *arg, FILE *f), void *arg,
		     struct fp_diag *diag);

/* Read a whole file into a NUL-terminated buffer (fp_free() it). FP_OK, FP_EIO (diag),
 * FP_ENOMEM, FP_ELIMIT (over `max` bytes). */
int fp__strbuf_slurp(const char *path, size_t max, char **out, size_t *len, struct fp_diag *diag);

/* Copy a parsed value (any type, recursively) to `w`. Numbers keep their literal text. */
int fp__jsonw_value(struct fp_jsonw *w, const struct fp_json_value *v);

/* `status` with diag "<name>:<line>:<col>: <message>" at value `v` of `doc` (1:1 for NULL). */
int fp__json_error(struct fp_diag *diag, int status, const char *name,
		   const struct fp_json_doc *doc, const struct fp_json_value *v, const char *fmt,
		   ...) FP_PRINTF(6, 7);

#endif /* FP_CORE_INTERNAL_H */
