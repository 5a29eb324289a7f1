/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The table of known-bad software combinations and the version comparison that matches rows
 * against what a caller found installed (include/flagprism/compat.h). Only facts that were
 * reproduced belong in the table, each with the versions checked. Not a place for detecting
 * versions, printing advice or deciding what a caller does about a row.
 */
#include "fp-setup.h"

#include <flagprism/compat.h>

/*
 * One row per known-bad combination. Keep `breaks` and `workaround` one sentence each: the
 * doctor prints them after "but", and the test suite uses them as skip reasons. Add the row's
 * line to docs/guide/compatibility.md (tests/python/test_compat.py compares them).
 */
static const struct fp_compat_issue issues[] = {
	{
		/* The supported range's lower end (pyproject.toml's triton extra says the same). */
		.id = "triton-older-than-supported",
		.modes = FP_COMPAT_ANY,
		.when = {{"triton", NULL, FP_COMPAT_TRITON_MIN}},
		.feature = "triton",
		.breaks = "FlagPrism supports Triton " FP_COMPAT_TRITON_MIN
			  " up to (not including) " FP_COMPAT_TRITON_BELOW
			  ", and older releases lack the hooks, language features "
			  "and compiler entry points it uses",
		.workaround =
			"install a supported Triton (pip install 'triton>=" FP_COMPAT_TRITON_MIN
			",<" FP_COMPAT_TRITON_BELOW "')",
	},
	{
		/* The upper end: releases not tried yet (3.10 removes reshape's can_reorder). */
		.id = "triton-newer-than-supported",
		.modes = FP_COMPAT_ANY,
		.when = {{"triton", FP_COMPAT_TRITON_BELOW, NULL}},
		.feature = "triton",
		.breaks =
			"FlagPrism supports Triton " FP_COMPAT_TRITON_MIN
			" up to (not including) " FP_COMPAT_TRITON_BELOW
			", and this newer release has not been tried: its "
			"interpreter and compiler may differ in ways FlagPrism does not handle yet",
		.workaround =
			"install a supported Triton (pip install 'triton>=" FP_COMPAT_TRITON_MIN
			",<" FP_COMPAT_TRITON_BELOW "'), or try it and report what fails",
	},
	{
		/*
		 * Checked: Triton 3.9.0's interpreter (a C++ load/store since 3.9) raises
		 * ValueError("mask has unsupported dtype") for an integer mask; its scalar comparisons
		 * keep the operands' integer dtype, which a broadcast to a block then materialises.
		 * 3.8.0 accepts the same kernels; compiled kernels are not affected.
		 */
		.id = "triton3.9-interpreter-scalar-masks",
		.modes = FP_COMPAT_INTERPRETER,
		.when = {{"triton", "3.9", "3.10"}},
		.feature = "scalar-masks",
		.breaks =
			"Triton 3.9's interpreter fails with \"mask has unsupported dtype\" where a "
			"scalar condition is broadcast to a block mask (`tl.load(p + offs, mask=pid < n)`, "
			"`mask=offs_ok & (pid < n)`): its scalar comparisons stay integers",
		.workaround =
			"compare a block instead (`mask = (pid + tl.zeros_like(offs)) < n`), or run "
			"the interpreter with Triton 3.8, or the kernel on a GPU",
	},
	{
		/* Checked: Triton 3.9.0's tl.make_block_ptr and tl.advance raise NotImplementedError. */
		.id = "triton3.9-no-block-pointers",
		.modes = FP_COMPAT_ANY,
		.when = {{"triton", "3.9", NULL}},
		.feature = "block-pointers",
		.breaks =
			"Triton 3.9 removed block pointers: tl.make_block_ptr and tl.advance raise "
			"NotImplementedError, so kernels written with them do not run at all",
		.workaround =
			"use tensor descriptors (tl.make_tensor_descriptor), which the Debugger "
			"observes the same way, or Triton 3.8 or older",
	},
	{
		/*
		 * Checked with triton-ascend 3.2.0 (tests/python/test_ascend.py): its language is
		 * Triton 3.2's, without tuple values (Triton 3.3's tl.tuple), and every twin fails in
		 * the code generator ("unsupported tensor index: constexpr[0]" where a helper indexes
		 * the record words it was passed, "'constexpr' object is not subscriptable" where a
		 * check indexes its candidates); the kernels themselves compile to Linalg. Its
		 * interpreter fails too, earlier: Triton-Ascend's patched `|`/`&`/`^` reject a Python
		 * int on the left ("'int' object has no attribute 'type'"), and past that its builder
		 * lacks operations the helpers use (get_int1_ty).
		 */
		.id = "triton-ascend3.2-no-tuple-values",
		.modes = FP_COMPAT_ANY,
		.when = {{"triton-ascend", FP_COMPAT_TRITON_ASCEND_MIN,
			  FP_COMPAT_TRITON_ASCEND_BELOW}},
		.feature = "tuple-values",
		.breaks =
			"Triton-Ascend 3.2's language (Triton 3.2) cannot pass tuples to @jit "
			"functions or index them there, which FlagPrism's device helpers do (Triton "
			"3.3+), and its bitwise operators reject a Python int on the left, so the "
			"Debugger's instrumented kernels do not compile and the kernels run unobserved",
		.workaround = "debug the kernel with upstream Triton " FP_COMPAT_TRITON_MIN
			      " up to " FP_COMPAT_TRITON_BELOW
			      " on its interpreter (TRITON_INTERPRET=1) or on an NVIDIA GPU; what "
			      "works on Ascend is in docs/guide/backends.md",
	},
	{
		/* The tested range's upper end: later Triton-Ascend releases were never tried. */
		.id = "triton-ascend-newer-than-tested",
		.modes = FP_COMPAT_ANY,
		.when = {{"triton-ascend", FP_COMPAT_TRITON_ASCEND_BELOW, NULL}},
		.feature = "triton-ascend",
		.breaks =
			"FlagPrism's Ascend tests run with Triton-Ascend " FP_COMPAT_TRITON_ASCEND_MIN
			" only, and this newer release has not been tried: its language and compiler "
			"stages may differ in ways FlagPrism does not handle yet",
		.workaround =
			"run tests/python/test_ascend.py with it (scripts/ascend.sh) and report "
			"what fails",
	},
	{
		/* Checked: NumPy 2.4.6 and 2.5.2 fail, 2.3.5 works (Triton 3.6.0). */
		.id = "triton3.6-interpreter-numpy2.4",
		.modes = FP_COMPAT_INTERPRETER,
		.when = {{"triton", "3.6", "3.7"}, {"numpy", "2.4", NULL}},
		.feature = "runtime-loops",
		.breaks =
			"Triton 3.6's interpreter fails on loops with runtime bounds "
			"(`for k in range(0, K, BLOCK)`, `tl.range`) with \"only 0-dimensional arrays "
			"can be converted to Python scalars\" under NumPy 2.4 and later",
		.workaround = "use numpy<2.4 where the interpreter runs (pip install 'numpy<2.4'), "
			      "or run the kernels on a GPU",
	},
};

size_t fp_compat_issue_count(void)
{
	return FP_ARRAY_SIZE(issues);
}

const struct fp_compat_issue *fp_compat_issue_at(size_t i)
{
	return i < FP_ARRAY_SIZE(issues) ? &issues[i] : NULL;
}

const struct fp_compat_issue *fp_compat_issue_find(const char *id)
{
	size_t i;

	if (!id)
		return NULL;
	for (i = 0; i < FP_ARRAY_SIZE(issues); i++)
		if (strcmp(issues[i].id, id) == 0)
			return &issues[i];
	return NULL;
}

/*
 * The next dotted number of a version: *s points at a digit on entry (or at the end of the
 * numeric prefix, then the part is 0). Advances past it and one following '.' that is followed
 * by a digit. FP_EINVAL when a part does not fit 32 bits.
 */
static int next_part(const char **s, uint32_t *part)
{
	uint64_t v = 0;
	const char *p = *s;

	*part = 0;
	if (!(*p >= '0' && *p <= '9'))
		return FP_OK; /* past the numeric prefix: missing parts are 0 */
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > UINT32_MAX)
			return FP_EINVAL;
		p++;
	}
	if (p[0] == '.' && p[1] >= '0' && p[1] <= '9')
		p++;
	else
		while (*p)
			p++; /* a suffix ("rc1", "+cpu", ".dev0") ends the numbers */
	*part = (uint32_t)v;
	*s = p;
	return FP_OK;
}

int fp_compat_version_cmp(const char *a, const char *b, int *out)
{
	uint32_t x, y;
	int rc;

	if (!out)
		return FP_EINVAL;
	*out = 0;
	if (!a || !b || !(*a >= '0' && *a <= '9') || !(*b >= '0' && *b <= '9'))
		return FP_EINVAL;
	while (*a || *b) {
		if ((rc = next_part(&a, &x)) || (rc = next_part(&b, &y)))
			return rc;
		if (x != y) {
			*out = x < y ? -1 : 1;
			return FP_OK;
		}
	}
	return FP_OK;
}

bool fp_compat_version_in(const char *version, const char *min, const char *below)
{
	int c;

	if (!version || !(*version >= '0' && *version <= '9'))
		return false;
	if (min && (fp_compat_version_cmp(version, min, &c) || c < 0))
		return false;
	if (below && (fp_compat_version_cmp(version, below, &c) || c >= 0))
		return false;
	return true;
}

static const char *have_version(const struct fp_compat_have *have, size_t n, const char *name)
{
	size_t i;

	for (i = 0; have && i < n; i++)
		if (have[i].component && strcmp(have[i].component, name) == 0)
			return have[i].version;
	return NULL;
}

bool fp_compat_issue_applies(const struct fp_compat_issue *issue, const struct fp_compat_have *have,
			     size_t n, unsigned modes)
{
	size_t i;

	if (!issue || !(issue->modes & modes))
		return false;
	for (i = 0; i < FP_COMPAT_MAX_RANGES && issue->when[i].component; i++) {
		const struct fp_compat_range *r = &issue->when[i];

		if (!fp_compat_version_in(have_version(have, n, r->component), r->min, r->below))
			return false;
	}
	return i > 0; /* a row without ranges would match everything: never */
}

size_t fp_compat_check(const struct fp_compat_have *have, size_t n, unsigned modes,
		       const struct fp_compat_issue **out, size_t cap)
{
	size_t i, found = 0;

	for (i = 0; i < FP_ARRAY_SIZE(issues); i++) {
		if (!fp_compat_issue_applies(&issues[i], have, n, modes))
			continue;
		if (out && found < cap)
			out[found] = &issues[i];
		found++;
	}
	return found;
}
