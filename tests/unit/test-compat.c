/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for the known-bad combinations table and its version comparison (compat.h). */
#include <string.h>

#include <flagprism/compat.h>

#include "test.h"

static int cmp(const char *a, const char *b)
{
	int c = 99;

	ASSERT_OK(fp_compat_version_cmp(a, b, &c));
	return c;
}

TEST(compat_version_cmp)
{
	int c;

	ASSERT_EQ(cmp("2.4.6", "2.4"), 1);
	ASSERT_EQ(cmp("2.4", "2.4.0"), 0);
	ASSERT_EQ(cmp("2.3.5", "2.4"), -1);
	ASSERT_EQ(cmp("2.10", "2.9"), 1); /* numbers, not text */
	ASSERT_EQ(cmp("3.6.0+git1a2b", "3.6"), 0);
	ASSERT_EQ(cmp("2.13.0+cpu", "2.13.0"), 0);
	ASSERT_EQ(cmp("2.4.0rc1", "2.4"), 0); /* a release candidate counts as its release */
	ASSERT_EQ(cmp("3.7.0.dev20260101", "3.7"), 0);
	ASSERT_EQ(cmp("1.2.3.4", "1.2.3"), 1);
	ASSERT_EQ(cmp("0", "0.0.0"), 0);
	ASSERT_EQ(fp_compat_version_cmp("unknown", "2.4", &c), FP_EINVAL);
	ASSERT_EQ(fp_compat_version_cmp("2.4", "", &c), FP_EINVAL);
	ASSERT_EQ(fp_compat_version_cmp(NULL, "2.4", &c), FP_EINVAL);
	ASSERT_EQ(fp_compat_version_cmp("99999999999.1", "2.4", &c), FP_EINVAL);
	ASSERT_EQ(fp_compat_version_cmp("2.4", "2.4", NULL), FP_EINVAL);
}

TEST(compat_version_in)
{
	ASSERT(fp_compat_version_in("3.6.0", "3.6", "3.7"));
	ASSERT(!fp_compat_version_in("3.7.0", "3.6", "3.7")); /* the upper bound is exclusive */
	ASSERT(!fp_compat_version_in("3.5.1", "3.6", "3.7"));
	ASSERT(fp_compat_version_in("2.5.2", "2.4", NULL));
	ASSERT(fp_compat_version_in("1.0", NULL, NULL));
	ASSERT(!fp_compat_version_in("not installed", NULL, NULL));
	ASSERT(!fp_compat_version_in("", "2.4", NULL));
	ASSERT(!fp_compat_version_in(NULL, NULL, NULL));
}

TEST(compat_table_rows_are_well_formed)
{
	size_t i, j, n = fp_compat_issue_count();

	ASSERT_GT(n, 0);
	ASSERT_NULL(fp_compat_issue_at(n));
	for (i = 0; i < n; i++) {
		const struct fp_compat_issue *r = fp_compat_issue_at(i);
		int c;

		ASSERT_NOT_NULL(r);
		ASSERT(r->id && r->id[0] && r->breaks && r->breaks[0] && r->workaround &&
		       r->workaround[0] && r->feature && r->feature[0]);
		ASSERT(r->modes && !(r->modes & ~(unsigned)FP_COMPAT_ANY));
		ASSERT(r->when[0].component != NULL);
		ASSERT(fp_compat_issue_find(r->id) == r); /* ids are unique */
		for (j = 0; j < FP_COMPAT_MAX_RANGES && r->when[j].component; j++) {
			const struct fp_compat_range *g = &r->when[j];

			ASSERT(g->min || g->below);
			if (g->min && g->below) {
				ASSERT_OK(fp_compat_version_cmp(g->min, g->below, &c));
				ASSERT_LT(c, 0); /* the range is not empty */
			}
		}
	}
	ASSERT_NULL(fp_compat_issue_find("no-such-row"));
	ASSERT_NULL(fp_compat_issue_find(NULL));
}

TEST(compat_numpy_row_matches_only_its_combination)
{
	const struct fp_compat_issue *r = fp_compat_issue_find("triton3.6-interpreter-numpy2.4");
	const struct fp_compat_issue *out[4];
	struct fp_compat_have bad[] = {
		{"torch", "2.13.0+cpu"}, {"triton", "3.6.0"}, {"numpy", "2.5.2"}};
	struct fp_compat_have good[] = {{"triton", "3.6.0"}, {"numpy", "2.3.5"}};
	struct fp_compat_have other[] = {{"triton", "3.7.1"}, {"numpy", "2.5.2"}};
	struct fp_compat_have no_numpy[] = {{"triton", "3.6.0"}, {"numpy", NULL}};

	ASSERT_NOT_NULL(r);
	ASSERT_STREQ(r->feature, "runtime-loops");
	ASSERT(fp_compat_issue_applies(r, bad, 3, FP_COMPAT_INTERPRETER));
	ASSERT(fp_compat_issue_applies(r, bad, 3, FP_COMPAT_ANY));
	ASSERT(!fp_compat_issue_applies(r, bad, 3, FP_COMPAT_GPU)); /* the GPU path is fine */
	ASSERT(!fp_compat_issue_applies(r, good, 2, FP_COMPAT_INTERPRETER));
	ASSERT(!fp_compat_issue_applies(r, other, 2, FP_COMPAT_INTERPRETER));
	ASSERT(!fp_compat_issue_applies(r, no_numpy, 2, FP_COMPAT_INTERPRETER));
	ASSERT(!fp_compat_issue_applies(r, bad, 1, FP_COMPAT_INTERPRETER)); /* triton not given */
	ASSERT(!fp_compat_issue_applies(NULL, bad, 3, FP_COMPAT_ANY));

	ASSERT_UEQ(fp_compat_check(bad, 3, FP_COMPAT_INTERPRETER, out, 4), 1);
	ASSERT(out[0] == r);
	ASSERT_UEQ(fp_compat_check(bad, 3, FP_COMPAT_INTERPRETER, NULL, 0), 1);
	ASSERT_UEQ(fp_compat_check(good, 2, FP_COMPAT_ANY, out, 4), 0);
	ASSERT_UEQ(fp_compat_check(NULL, 0, FP_COMPAT_ANY, out, 4), 0);
}

/* Is row `id` among those that apply to Triton `version` in `modes`? */
static bool triton_row(const char *id, const char *version, unsigned modes)
{
	const struct fp_compat_issue *r = fp_compat_issue_find(id);
	struct fp_compat_have have[] = {{"triton", version}};

	return r && fp_compat_issue_applies(r, have, 1, modes);
}

TEST(compat_triton_supported_range)
{
	static const char *const inside[] = {"3.4.0", "3.5.1", "3.6.0",         "3.7.1",
					     "3.8.0", "3.9.0", "3.9.9+git1234", "3.5.0+fb"};
	size_t i;

	for (i = 0; i < sizeof(inside) / sizeof(inside[0]); i++) {
		ASSERT(!triton_row("triton-older-than-supported", inside[i], FP_COMPAT_ANY));
		ASSERT(!triton_row("triton-newer-than-supported", inside[i], FP_COMPAT_ANY));
	}
	ASSERT(triton_row("triton-older-than-supported", "3.3.1", FP_COMPAT_GPU));
	ASSERT(triton_row("triton-older-than-supported", "2.1.0", FP_COMPAT_INTERPRETER));
	ASSERT(triton_row("triton-newer-than-supported", "3.10.0", FP_COMPAT_GPU));
	ASSERT(triton_row("triton-newer-than-supported", "4.0.0", FP_COMPAT_INTERPRETER));
	/* the rows' bounds are the macros */
	ASSERT_STREQ(fp_compat_issue_find("triton-older-than-supported")->when[0].below,
		     FP_COMPAT_TRITON_MIN);
	ASSERT_STREQ(fp_compat_issue_find("triton-newer-than-supported")->when[0].min,
		     FP_COMPAT_TRITON_BELOW);
}

TEST(compat_triton39_rows)
{
	ASSERT(triton_row("triton3.9-interpreter-scalar-masks", "3.9.0", FP_COMPAT_INTERPRETER));
	ASSERT(!triton_row("triton3.9-interpreter-scalar-masks", "3.9.0", FP_COMPAT_GPU));
	ASSERT(!triton_row("triton3.9-interpreter-scalar-masks", "3.8.0", FP_COMPAT_INTERPRETER));
	ASSERT(triton_row("triton3.9-no-block-pointers", "3.9.0", FP_COMPAT_GPU));
	ASSERT(triton_row("triton3.9-no-block-pointers", "3.9.0", FP_COMPAT_INTERPRETER));
	ASSERT(!triton_row("triton3.9-no-block-pointers", "3.8.0", FP_COMPAT_ANY));
}
