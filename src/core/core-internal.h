/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What core/ gives the library's other folders beyond its public headers: growing an array under
 * a cap, matching a path by its trailing components, saving a file through fp_outfile with a
 * callback, reading a whole file, copying a parsed JSON value to a writer, and a positioned
 * error about a JSON input. Not a public header; not for the JSON parser's or writer's own
 * internals (json-internal.h).
 */
#ifndef FP_CORE_INTERNAL_H
#define FP_CORE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <flagprism/json.h>
#include <flagprism/status.h>

/*
 * Make *arr (elements of `size` bytes, *cap of them) hold at least `need` elements, at most
 * `max`: the capacity doubles from 16 (or jumps to `need`) and never exceeds `max`. FP_OK (the
 * array may have moved), FP_ELIMIT (`need` > `max`) or FP_ENOMEM; on failure *arr and *cap are
 * unchanged.
 */
int fp__grow(void **arr, size_t *cap, size_t need, size_t size, size_t max);

/*
 * Whether `a` and `b` name the same source file as tools write paths: equal, or one ends with
 * "/" + the other (a path given relative to some directory of the other). NULL never matches;
 * an empty string matches only an empty string. For TTIR locations, DWARF line tables, Python
 * code objects (core/path.c).
 */
bool fp__path_suffix_match(const char *a, const char *b);

/*
 * Write `path` through fp_outfile (a temporary file renamed onto it, a device or FIFO written
 * through): fn(arg, f) writes the contents. FP_OK, FP_EIO (diag names the path and the errno),
 * FP_EINVAL (a destination fp_outfile refuses), or fn's error (nothing replaced).
 */
int fp__outfile_save(const char *path, int (*fn)(void *arg, FILE *f), void *arg,
		     struct fp_diag *diag);

/* Read a whole file into a NUL-terminated buffer (fp_free() it), as fp_strbuf_read_path() with
 * `flags` reads it. FP_OK, FP_EIO (diag), FP_ENOMEM, FP_ELIMIT (over `max` bytes). */
int fp__strbuf_slurp(const char *path, size_t max, unsigned flags, char **out, size_t *len,
		     struct fp_diag *diag);

/* Copy a parsed value (any type, recursively) to `w`. Numbers keep their literal text. */
int fp__jsonw_value(struct fp_jsonw *w, const struct fp_json_value *v);

/* `status` with diag "<name>:<line>:<col>: <message>" at value `v` of `doc` (1:1 for NULL). */
int fp__json_error(struct fp_diag *diag, int status, const char *name,
		   const struct fp_json_doc *doc, const struct fp_json_value *v, const char *fmt,
		   ...) FP_PRINTF(6, 7);

#endif /* FP_CORE_INTERNAL_H */
