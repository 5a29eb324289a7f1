/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the registry of checks, rules and finding kinds (src/debug/checks.c) and of the
 * profiler's choice names (src/prof/choices.c): every check is found by its name and reports
 * kinds with names, every rule's name comes back to it and reports a kind one check asks for, the
 * joined list is cut safely, the choices end with NULL.
 */
#include <string.h>

#include <flagprism/debug.h>
#include <flagprism/prof.h>

#include "test.h"

TEST(debug_checks_registry)
{
	unsigned all = 0;
	size_t i, n = fp_dbg_check_count();

	ASSERT_EQ(n, 5);
	ASSERT_NULL(fp_dbg_check_at(n));
	for (i = 0; i < n; i++) {
		const struct fp_dbg_check_info *c = fp_dbg_check_at(i);
		unsigned k;

		ASSERT_NOT_NULL(c);
		ASSERT(fp_dbg_check_find(c->name, strlen(c->name)) == c);
		ASSERT(c->kinds != 0 && c->records != 0 && c->summary && c->summary[0]);
		ASSERT_EQ(all & c->kinds, 0); /* a finding kind belongs to one check */
		all |= c->kinds;
		for (k = 0; k < 32; k++)
			if (c->kinds & (1u << k))
				ASSERT(strcmp(fp_dbg_finding_kind_name((enum fp_dbg_finding_kind)k),
					      "unknown") != 0);
	}
	ASSERT_STREQ(fp_dbg_check_at(0)->name, "bounds");
	ASSERT_EQ(fp_dbg_check_at(0)->records, FP_DBG_CHECK_ADDRESSES);
	ASSERT_NULL(fp_dbg_check_find("bound", 5));
	ASSERT_NULL(fp_dbg_check_find("bounds,", 7));
	ASSERT_NOT_NULL(fp_dbg_check_find("nan,inf", 3)); /* the first word of a list */
	ASSERT_NULL(fp_dbg_check_find(NULL, 0));
	ASSERT_STREQ(fp_dbg_finding_kind_name((enum fp_dbg_finding_kind)0), "unknown");
	ASSERT_STREQ(fp_dbg_finding_kind_name((enum fp_dbg_finding_kind)99), "unknown");
}

TEST(debug_checks_rules)
{
	unsigned asked = 0;
	size_t i;
	int r;

	for (i = 0; fp_dbg_check_at(i); i++)
		asked |= fp_dbg_check_at(i)->kinds;
	for (r = FP_DBG_RULE_BOUNDS; r <= FP_DBG_RULE_CAST_SUBNORMAL; r++) {
		const char *name = fp_dbg_rule_name((enum fp_dbg_rule)r);

		ASSERT(strcmp(name, "unknown") != 0);
		ASSERT_EQ(fp_dbg_rule_find(name), r);
		ASSERT(asked & (1u << fp_dbg_rule_kind((enum fp_dbg_rule)r)));
	}
	ASSERT_EQ(fp_dbg_rule_kind(FP_DBG_RULE_NAN_MEM), FP_DBG_FINDING_NAN_ORIGIN);
	ASSERT_EQ(fp_dbg_rule_kind(FP_DBG_RULE_CAST_FLUSH), FP_DBG_FINDING_PRECISION_LOSS);
	ASSERT_EQ(fp_dbg_rule_find("no_such_rule"), FP_DBG_RULE_UNKNOWN);
	ASSERT_EQ(fp_dbg_rule_find(""), FP_DBG_RULE_UNKNOWN);
	ASSERT_EQ(fp_dbg_rule_find(NULL), FP_DBG_RULE_UNKNOWN);
	ASSERT_STREQ(fp_dbg_rule_name(FP_DBG_RULE_UNKNOWN), "unknown");
	ASSERT_STREQ(fp_dbg_rule_name((enum fp_dbg_rule)1000), "unknown");
	ASSERT_EQ(fp_dbg_rule_kind((enum fp_dbg_rule)1000), 0);
}

TEST(debug_checks_names)
{
	char buf[64], small[8];
	size_t need = fp_dbg_check_names(buf, sizeof(buf), ", ");

	ASSERT_STREQ(buf, "bounds, nan, inf, precision, domain");
	ASSERT_EQ(need, strlen(buf));
	ASSERT_EQ(fp_dbg_check_names(small, sizeof(small), NULL), need);
	ASSERT_STREQ(small, "bounds,"); /* cut to fit, terminated */
	ASSERT_EQ(fp_dbg_check_names(NULL, 0, ","), strlen("bounds,nan,inf,precision,domain"));
	ASSERT_EQ(fp_dbg_check_names(buf, 1, ","), need - 4);
	ASSERT_STREQ(buf, "");
}

TEST(prof_choice_names)
{
	ASSERT_STREQ(fp_prof_context_name(FP_PROF_CONTEXT_SHADOW), "shadow");
	ASSERT_STREQ(fp_prof_context_name(FP_PROF_CONTEXT_PYTHON), "python");
	ASSERT_NULL(fp_prof_context_name(2));
	ASSERT_STREQ(fp_prof_data_name(FP_PROF_DATA_TREE), "tree");
	ASSERT_STREQ(fp_prof_data_name(FP_PROF_DATA_TRACE), "trace");
	ASSERT_NULL(fp_prof_data_name(2));
	ASSERT_STREQ(fp_prof_hook_name(0), "triton");
	ASSERT_NULL(fp_prof_hook_name(1));
}
