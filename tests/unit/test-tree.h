/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the unit tests that build call trees by hand (tests/unit/tree-helpers.c).
 * Each asserts success, so a test reads as the tree it builds. */
#ifndef FP_TEST_TREE_H
#define FP_TEST_TREE_H

#include <stddef.h>
#include <stdint.h>

#include <flagprism/calltree.h>

/* Node at the path names[0] / names[1] / ... (at most 8 names), created as needed. */
uint32_t fpt_tree_path(struct fp_calltree *t, const char *const *names, size_t n);
/* Add v to the metric named `metric` (kind from its name) of node. */
void fpt_tree_add(struct fp_calltree *t, uint32_t node, const char *metric, double v);
/* Set the string property `metric` of node. */
void fpt_tree_str(struct fp_calltree *t, uint32_t node, const char *metric, const char *s);

#endif /* FP_TEST_TREE_H */
