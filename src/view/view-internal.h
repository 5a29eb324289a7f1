/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pieces shared by the viewer's files (view-metric.c: specs, peaks and the arithmetic of one
 * value; view.c: views, filters and rendering). Not a public header; include/flagprism/view.h
 * is the interface.
 */
#ifndef FP_VIEW_INTERNAL_H
#define FP_VIEW_INTERNAL_H

#include <flagprism/view.h>

/*
 * A source value of `metric` at `node` as a column reads it: the inclusive total of inclusive
 * metrics, the node's own value otherwise; NaN when the node has no value (or it is a string,
 * or `metric` is FP_VIEW_NONE).
 */
double fp__view_source(const struct fp_calltree *t, uint32_t metric, uint32_t node);

/* Whether a source of metric id `metric` is summed up the tree (inclusive). */
bool fp__view_source_inclusive(const struct fp_calltree *t, uint32_t metric);

/*
 * Value of `m` from its gathered sources v[0 .. m->nsrc) (NaN = absent). `denom` is the
 * PERCENT denominator; `pk` the peaks of the node's device for UTIL/EST_UTIL (NULL or not
 * known: NaN).
 */
double fp__view_eval(const struct fp_view_metric *m, const double *v, double denom,
		     const struct fp_view_peaks *pk);

/* The string property `metric` at `node` (NUL-terminated, borrowed) or NULL. */
const char *fp__view_string(const struct fp_calltree *t, uint32_t metric, uint32_t node);

/* Replace control bytes (below 0x20, and DEL) in s[0 .. n) with '?': text from a file never
 * reaches a terminal as escape sequences. */
void fp__view_clean(char *s, size_t n);

#endif /* FP_VIEW_INTERNAL_H */
