/* SPDX-License-Identifier: Apache-2.0 */
/* Call-tree building helpers shared by the unit tests (declared in test-tree.h). */
#include <string.h>

#include "test-tree.h"
#include "test.h"

uint32_t fpt_tree_path(struct fp_calltree *t, const char *const *names, size_t n)
{
	uint32_t fr[8], node;
	size_t i;

	ASSERT(n <= 8);
	for (i = 0; i < n; i++)
		ASSERT_OK(fp_calltree_intern(t, names[i], strlen(names[i]), &fr[i]));
	ASSERT_OK(fp_calltree_add_path(t, fr, n, &node));
	return node;
}

void fpt_tree_add(struct fp_calltree *t, uint32_t node, const char *metric, double v)
{
	uint32_t m;

	ASSERT_OK(fp_calltree_metric_auto(t, metric, strlen(metric), &m));
	ASSERT_OK(fp_calltree_add_metric(t, node, m, v));
}

void fpt_tree_str(struct fp_calltree *t, uint32_t node, const char *metric, const char *s)
{
	uint32_t m;

	ASSERT_OK(fp_calltree_metric_auto(t, metric, strlen(metric), &m));
	ASSERT_OK(fp_calltree_set_string(t, node, m, s, strlen(s)));
}
