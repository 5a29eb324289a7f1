// SPDX-License-Identifier: Apache-2.0
/*
 * The registry of check mode's checks, their rules and the kinds of findings they report: the one
 * list the CLI (--check), the launch JSON's "checks", the extension, the Python API and the
 * pytest plugin read (docs/internals/debugger.md, "Adding a check"). A rule is what one check
 * slot of a twin tests (the site table's "rule"); a check is what a user asks for; a finding
 * kind is what the report says.
 */

#include "fp-setup.h"

#include <string.h>

#include <flagprism/debug.h>

#define KIND(k) (1u << FP_DBG_FINDING_##k)

static const struct fp_dbg_check_info checks[] = {
	{"bounds", KIND(OUT_OF_BOUNDS) | KIND(DESCRIPTOR_EXTENT), FP_DBG_CHECK_ADDRESSES,
	 "accesses outside the view of the tensor their pointer derives from"},
	{"nan", KIND(NAN_ORIGIN), FP_DBG_CHECK_VALUES, "the statement where a NaN first appears"},
	{"inf", KIND(INF_ORIGIN), FP_DBG_CHECK_VALUES, "the statement where an Inf first appears"},
	{"precision", KIND(PRECISION_LOSS), FP_DBG_CHECK_VALUES | FP_DBG_CHECK_FULL_VALUES,
	 "narrowing casts that overflow or flush to zero or subnormals"},
	{"domain", KIND(DIVISION_BY_ZERO) | KIND(INVALID_DOMAIN),
	 FP_DBG_CHECK_VALUES | FP_DBG_CHECK_FULL_VALUES,
	 "division by zero or tiny values, log and sqrt of negative values"},
};

/* Rules by enum value: the site table's name and the finding kind it reports. */
static const struct {
	const char *name;
	enum fp_dbg_finding_kind kind;
} rules[] = {
	[FP_DBG_RULE_BOUNDS] = {"bounds", FP_DBG_FINDING_OUT_OF_BOUNDS},
	[FP_DBG_RULE_DESCRIPTOR_EXTENT] = {"descriptor_extent", FP_DBG_FINDING_DESCRIPTOR_EXTENT},
	[FP_DBG_RULE_NAN] = {"nan", FP_DBG_FINDING_NAN_ORIGIN},
	[FP_DBG_RULE_INF] = {"inf", FP_DBG_FINDING_INF_ORIGIN},
	[FP_DBG_RULE_NAN_MEM] = {"nan_mem", FP_DBG_FINDING_NAN_ORIGIN},
	[FP_DBG_RULE_INF_MEM] = {"inf_mem", FP_DBG_FINDING_INF_ORIGIN},
	[FP_DBG_RULE_DIV_ZERO] = {"division_by_zero", FP_DBG_FINDING_DIVISION_BY_ZERO},
	[FP_DBG_RULE_DIV_TINY] = {"division_by_tiny", FP_DBG_FINDING_DIVISION_BY_ZERO},
	[FP_DBG_RULE_SQRT_NEGATIVE] = {"sqrt_negative", FP_DBG_FINDING_INVALID_DOMAIN},
	[FP_DBG_RULE_LOG_NEGATIVE] = {"log_negative", FP_DBG_FINDING_INVALID_DOMAIN},
	[FP_DBG_RULE_CAST_OVERFLOW] = {"cast_overflow", FP_DBG_FINDING_PRECISION_LOSS},
	[FP_DBG_RULE_CAST_FLUSH] = {"cast_flush", FP_DBG_FINDING_PRECISION_LOSS},
	[FP_DBG_RULE_CAST_SUBNORMAL] = {"cast_subnormal", FP_DBG_FINDING_PRECISION_LOSS},
};

/* Finding kinds by enum value: the reports' name. */
static const char *const kind_names[] = {
	[FP_DBG_FINDING_OUT_OF_BOUNDS] = "out_of_bounds",
	[FP_DBG_FINDING_NAN_ORIGIN] = "nan_origin",
	[FP_DBG_FINDING_INF_ORIGIN] = "inf_origin",
	[FP_DBG_FINDING_DIVISION_BY_ZERO] = "division_by_zero",
	[FP_DBG_FINDING_INVALID_DOMAIN] = "invalid_domain",
	[FP_DBG_FINDING_PRECISION_LOSS] = "precision_loss",
	[FP_DBG_FINDING_DESCRIPTOR_EXTENT] = "descriptor_extent",
};

size_t fp_dbg_check_count(void)
{
	return FP_ARRAY_SIZE(checks);
}

const struct fp_dbg_check_info *fp_dbg_check_at(size_t i)
{
	return i < FP_ARRAY_SIZE(checks) ? &checks[i] : NULL;
}

const struct fp_dbg_check_info *fp_dbg_check_find(const char *name, size_t len)
{
	size_t i;

	if (!name)
		return NULL;
	for (i = 0; i < FP_ARRAY_SIZE(checks); i++)
		if (strlen(checks[i].name) == len && !memcmp(checks[i].name, name, len))
			return &checks[i];
	return NULL;
}

const char *fp_dbg_rule_name(enum fp_dbg_rule rule)
{
	if ((size_t)rule < FP_ARRAY_SIZE(rules) && rules[rule].name)
		return rules[rule].name;
	return "unknown";
}

enum fp_dbg_rule fp_dbg_rule_find(const char *name)
{
	size_t i;

	for (i = 1; name && i < FP_ARRAY_SIZE(rules); i++)
		if (rules[i].name && !strcmp(rules[i].name, name))
			return (enum fp_dbg_rule)i;
	return FP_DBG_RULE_UNKNOWN;
}

enum fp_dbg_finding_kind fp_dbg_rule_kind(enum fp_dbg_rule rule)
{
	if ((size_t)rule < FP_ARRAY_SIZE(rules) && rules[rule].name)
		return rules[rule].kind;
	return (enum fp_dbg_finding_kind)0;
}

const char *fp_dbg_finding_kind_name(enum fp_dbg_finding_kind kind)
{
	if ((size_t)kind < FP_ARRAY_SIZE(kind_names) && kind_names[kind])
		return kind_names[kind];
	return "unknown";
}

size_t fp_dbg_check_names(char *buf, size_t cap, const char *sep)
{
	size_t i, len = 0, n;

	if (!sep)
		sep = ", ";
	if (buf && cap)
		buf[0] = '\0';
	for (i = 0; i < FP_ARRAY_SIZE(checks); i++) {
		const char *parts[2] = {i ? sep : "", checks[i].name};
		size_t k;

		for (k = 0; k < 2; k++) {
			n = strlen(parts[k]);
			if (buf && cap && len < cap - 1) {
				size_t fit = n < cap - 1 - len ? n : cap - 1 - len;

				memcpy(buf + len, parts[k], fit);
				buf[len + fit] = '\0';
			}
			len += n;
		}
	}
	return len;
}
