/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The unit-test framework: typed assertions that print both sides, and the registry macros.
 * Each test is `TEST(name) { ... }` at the start of a line in some tests/unit/test-*.c file;
 * CMake finds it and registers it (no list to edit). The runner (runner.c) forks per test with a
 * timeout unless told otherwise.
 */
#ifndef FP_TEST_H
#define FP_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST(name)              \
	void test_##name(void); \
	void test_##name(void)

void fpt_fail(const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4), noreturn))
#endif
	;

#define ASSERT(cond)                                                              \
	do {                                                                      \
		if (!(cond))                                                      \
			fpt_fail(__FILE__, __LINE__, "ASSERT(%s) failed", #cond); \
	} while (0)

#define FPT__CMP(a, op, b, T, fmt)                                                             \
	do {                                                                                   \
		T fpt_a = (T)(a), fpt_b = (T)(b);                                              \
		if (!(fpt_a op fpt_b))                                                         \
			fpt_fail(__FILE__, __LINE__, "%s " #op " %s: " fmt " vs " fmt, #a, #b, \
				 fpt_a, fpt_b);                                                \
	} while (0)

#define ASSERT_EQ(a, b) FPT__CMP(a, ==, b, int64_t, "%" PRId64)
#define ASSERT_NE(a, b) FPT__CMP(a, !=, b, int64_t, "%" PRId64)
#define ASSERT_LT(a, b) FPT__CMP(a, <, b, int64_t, "%" PRId64)
#define ASSERT_LE(a, b) FPT__CMP(a, <=, b, int64_t, "%" PRId64)
#define ASSERT_GT(a, b) FPT__CMP(a, >, b, int64_t, "%" PRId64)
#define ASSERT_GE(a, b) FPT__CMP(a, >=, b, int64_t, "%" PRId64)
#define ASSERT_UEQ(a, b) FPT__CMP(a, ==, b, uint64_t, "%" PRIu64)
#define ASSERT_DEQ(a, b) FPT__CMP(a, ==, b, double, "%.17g")
#define ASSERT_NEAR(a, b, tol)                                                                 \
	do {                                                                                   \
		double fpt_a = (a), fpt_b = (b);                                               \
		if (!(fpt_a - fpt_b <= (tol) && fpt_b - fpt_a <= (tol)))                       \
			fpt_fail(__FILE__, __LINE__, "%s ~ %s: %.17g vs %.17g", #a, #b, fpt_a, \
				 fpt_b);                                                       \
	} while (0)
#define ASSERT_OK(expr) FPT__CMP(expr, ==, 0, int64_t, "%" PRId64)
#define ASSERT_NULL(p) ASSERT((p) == NULL)
#define ASSERT_NOT_NULL(p) ASSERT((p) != NULL)
#define ASSERT_STREQ(a, b)                                                                 \
	do {                                                                               \
		const char *fpt_a = (a), *fpt_b = (b);                                     \
		if (!fpt_a || !fpt_b || strcmp(fpt_a, fpt_b) != 0)                         \
			fpt_fail(__FILE__, __LINE__, "%s == %s: \"%s\" vs \"%s\"", #a, #b, \
				 fpt_a ? fpt_a : "(null)", fpt_b ? fpt_b : "(null)");      \
	} while (0)
#define ASSERT_MEMEQ(a, b, n)                                                                \
	do {                                                                                 \
		if (memcmp((a), (b), (n)) != 0)                                              \
			fpt_fail(__FILE__, __LINE__, "memcmp(%s, %s, %s) != 0", #a, #b, #n); \
	} while (0)

/*
 * Out-of-memory sweep support (test-oom.c and others): a counting allocator that fails the
 * N-th allocation and tracks live blocks, so a test can assert FP_ENOMEM and no leaks.
 */
void fpt_oom_install(long fail_at); /* -1: never fail */
void fpt_oom_uninstall(void);
long fpt_oom_count(void); /* allocations seen since install */
long fpt_oom_live(void);  /* blocks allocated and not yet freed */

/*
 * The whole sweep for one scenario: run(arg) once with no failure (it must return FP_OK, make at
 * least min_allocs allocations and free all it allocated), then once for each allocation it
 * made, with that one failing: each run must return FP_OK, FP_ENOMEM or also_ok (0: none) and
 * leave no block live. Returns the number of allocations of the clean run; *n_ok (may be NULL)
 * gets how many of the failing runs still returned FP_OK.
 */
long fpt_oom_sweep(int (*run)(void *arg), void *arg, int also_ok, long min_allocs, long *n_ok);

/* Path of a file in tests/data (set by CMake as FP_TEST_DATA_DIR). */
const char *fpt_data_path(const char *name);

/*
 * The whole file at `path` (not empty) in a malloc'd buffer, with a NUL after its *len bytes;
 * release it with free(). Fails the test when the file cannot be read.
 */
void *fpt_slurp(const char *path, size_t *len);

/*
 * `name` inside this test's scratch directory (/tmp/fp-unit-XXXXXX, made on first use): valid
 * until the fourth call after this one. fpt_tmp_cleanup() removes the directory; the next
 * fpt_tmp_path() makes a new one.
 */
const char *fpt_tmp_path(const char *name);
void fpt_tmp_cleanup(void);

struct fp_json_doc;
struct fp_calltree;

/* The JSON file at `path`, parsed (free with fp_json_doc_free()); a parse error fails the test
 * with the parser's message. */
struct fp_json_doc *fpt_json_file(const char *path);

/* The string value of `metric` at `node` (borrowed from the tree); fails the test when the
 * metric is missing or not a string. */
const char *fpt_metric_str(struct fp_calltree *t, uint32_t node, const char *metric);

#endif /* FP_TEST_H */
