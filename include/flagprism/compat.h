/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Known-bad combinations of the software FlagPrism runs with: one table of {components and
 * version ranges, where it breaks (the interpreter, a GPU), what breaks, what to do}, read by
 * `flagprism doctor`, by the Python package (flagprism._ext.compat_issues(),
 * flagprism.compat) and by the test suite, which skips what the environment cannot run with the
 * row's words as the reason. It only compares version strings that callers give it: finding the
 * installed versions is the caller's job (the doctor's Python probe, importlib.metadata).
 *
 * Adding a row is adding one initializer to the table in src/core/compat.c and its line to
 * docs/guide/compatibility.md (a test compares the two); nothing else changes. `id` is the stable name
 * that scripts and tests use; rows are found by it, never by position.
 *
 * Versions are compared by their leading dotted numbers ("2.4.6", "3.6.0+git12ab", "2.13.0+cpu",
 * "2.4.0rc1" -> 2.4.0, "3.6" == "3.6.0"); pre-release, post-release and local suffixes are
 * ignored, so a release candidate counts as its release. A version without a leading number
 * matches no range.
 */
#ifndef FLAGPRISM_COMPAT_H
#define FLAGPRISM_COMPAT_H

#include <stdbool.h>
#include <stddef.h>

#include <flagprism/export.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a combination breaks (bits of struct fp_compat_issue.modes and of a query). */
#define FP_COMPAT_INTERPRETER 0x1u /* kernels run on Triton's interpreter (TRITON_INTERPRET=1) */
#define FP_COMPAT_GPU 0x2u         /* kernels are compiled for and run on a device */
#define FP_COMPAT_ANY (FP_COMPAT_INTERPRETER | FP_COMPAT_GPU)

/*
 * The Triton versions FlagPrism supports: FP_COMPAT_TRITON_MIN <= version < FP_COMPAT_TRITON_BELOW.
 * The table's rows "triton-older-than-supported" and "triton-newer-than-supported" are the two
 * sides of it (so the doctor and flagprism.compat read the range from the table);
 * pyproject.toml's "triton" extra declares the same range (a test compares them).
 */
#define FP_COMPAT_TRITON_MIN "3.4"
#define FP_COMPAT_TRITON_BELOW "3.10"

/*
 * Triton-Ascend (the "triton-ascend" distribution, a Triton of its own with the Ascend compiler
 * backend; its base is older than FP_COMPAT_TRITON_MIN) is a component of its own, "triton-ascend",
 * never "triton": the releases FlagPrism's Ascend tests run with are
 * FP_COMPAT_TRITON_ASCEND_MIN <= version < FP_COMPAT_TRITON_ASCEND_BELOW. What works there is
 * docs/guide/backends.md's; the rows "triton-ascend3.2-no-tuple-values" (what cannot) and
 * "triton-ascend-newer-than-tested" bound the range.
 */
#define FP_COMPAT_TRITON_ASCEND_MIN "3.2"
#define FP_COMPAT_TRITON_ASCEND_BELOW "3.3"

/* Ranges one row may have (components that must all be in range together). */
#define FP_COMPAT_MAX_RANGES 3

/** One component's versions: min <= version < below. A NULL bound is open. */
struct fp_compat_range {
	const char *component; /* "triton", "triton-ascend", "numpy", "torch", "python", ...; NULL
				  ends the list */
	const char *min;       /* inclusive lower bound, or NULL */
	const char *below;     /* exclusive upper bound, or NULL */
};

/** One known-bad combination: every range in `when` must hold, in one of `modes`. */
struct fp_compat_issue {
	const char *id; /* stable name, e.g. "triton3.6-interpreter-numpy2.4" */
	unsigned modes; /* FP_COMPAT_* where it breaks */
	struct fp_compat_range when[FP_COMPAT_MAX_RANGES]; /* unused entries have component NULL */
	const char *feature;    /* what stops working, as tests name it: "runtime-loops" */
	const char *breaks;     /* one sentence: what fails and how it shows */
	const char *workaround; /* one sentence: what to do */
};

/** An installed component, as a caller found it. */
struct fp_compat_have {
	const char *component; /* as in struct fp_compat_range */
	const char *version;   /* NULL or "" when not installed */
};

/** Number of rows in the table. */
FP_EXTERN size_t fp_compat_issue_count(void);

/** Row `i` (0-based, the table's order), or NULL past the end. Static storage, never freed. */
FP_EXTERN const struct fp_compat_issue *fp_compat_issue_at(size_t i);

/** The row named `id`, or NULL. */
FP_EXTERN const struct fp_compat_issue *fp_compat_issue_find(const char *id);

/**
 * Compare two versions by their leading dotted numbers (missing parts are 0). Returns <0, 0 or
 * >0 in *out and FP_OK, or FP_EINVAL when either has no leading number (or a part overflows).
 */
FP_EXTERN int fp_compat_version_cmp(const char *a, const char *b, int *out);

/** True when `version` is parseable and min <= version < below (NULL bounds are open). */
FP_EXTERN bool fp_compat_version_in(const char *version, const char *min, const char *below);

/**
 * True when row `issue` applies: `modes` shares a bit with the row's, and every range of the
 * row names a component present in `have` (n entries) whose version is inside the range. A
 * component missing from `have`, or with no version, never matches.
 */
FP_EXTERN bool fp_compat_issue_applies(const struct fp_compat_issue *issue,
				       const struct fp_compat_have *have, size_t n, unsigned modes);

/**
 * The rows that apply (fp_compat_issue_applies()) in table order: stores up to `cap` of them in
 * `out` (which may be NULL when cap is 0) and returns how many apply, which may exceed `cap`.
 */
FP_EXTERN size_t fp_compat_check(const struct fp_compat_have *have, size_t n, unsigned modes,
				 const struct fp_compat_issue **out, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_COMPAT_H */
