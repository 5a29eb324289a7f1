/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the files behind <flagprism/ranks.h> share (ranks.c, ranks-trace.c, and in src/report/
 * ranks-summary.c and view-ranks.c): saving a file through a temporary name, copying a parsed
 * JSON value to a writer, and positioned errors about JSON inputs. Not a public header.
 */
#ifndef FP_PROF_RANKS_INTERNAL_H
#define FP_PROF_RANKS_INTERNAL_H

#include <stdio.h>

#include <flagprism/json.h>
#include <flagprism/ranks.h>

/* Write `path` through `<path>.tmp.<pid>` and a rename: fn(arg, f) writes the contents. FP_OK,
 * FP_EIO (diag names the path and the cause), or fn's error (the temporary file is removed). */
int fp__ranks_save(const char *path, int (*fn)(void *arg, FILE *f), void *arg,
		   struct fp_diag *diag);

/* Copy a parsed value (any type, recursively) to `w`. Numbers keep their literal text. */
int fp__ranks_json_copy(struct fp_jsonw *w, const struct fp_json_value *v);

/* FP_EFORMAT (or `status`) with diag "<name>:<line>:<col>: <message>" at value `v` of `doc`. */
int fp__ranks_json_error(struct fp_diag *diag, int status, const char *name,
			 const struct fp_json_doc *doc, const struct fp_json_value *v,
			 const char *fmt, ...) FP_PRINTF(6, 7);

/* Read a whole file into a NUL-terminated buffer (fp_free() it). FP_OK, FP_EIO (diag), FP_ENOMEM,
 * FP_ELIMIT (over `max` bytes). */
int fp__ranks_slurp(const char *path, size_t max, char **out, size_t *len, struct fp_diag *diag);

#endif /* FP_PROF_RANKS_INTERNAL_H */
