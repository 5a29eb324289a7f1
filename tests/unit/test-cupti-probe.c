/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the CUPTI probe. They run without a GPU or CUDA: a bad FLAGPRISM_CUPTI_PATH
 * must fail cleanly with a message, a non-CUPTI library must be recognised as such, and the
 * plain search must never crash whether or not this machine has a libcupti.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <flagprism/cupti.h>
#include <flagprism/status.h>

#include "test.h"

/* Loading libcupti leaks its C++ runtime's pool once unloaded: not ours (see cupti-probe.c). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(TEST_ASAN)
#define TEST_ASAN 1
#endif
#ifdef TEST_ASAN
#include <sanitizer/lsan_interface.h>
#define LSAN_OFF() __lsan_disable()
#define LSAN_ON() __lsan_enable()
#else
#define LSAN_OFF() ((void)0)
#define LSAN_ON() ((void)0)
#endif

static const char toolkit_cupti[] = "/usr/local/cuda/lib64/libcupti.so";

TEST(cupti_probe_env_missing)
{
	struct fp_cupti_probe_result r;

	ASSERT_OK(setenv(FP_CUPTI_PATH_ENV, "/nonexistent/flagprism/libcupti.so", 1));
	ASSERT_EQ(fp_cupti_probe(NULL, 0, &r), FP_ENOENT);
	ASSERT(!r.found);
	ASSERT_EQ(r.origin, FP_CUPTI_ORIGIN_NONE);
	ASSERT_UEQ(r.api_version, 0);
	ASSERT_STREQ(r.path, "");
	ASSERT(strstr(r.error, "FLAGPRISM_CUPTI_PATH=/nonexistent/flagprism/libcupti.so") != NULL);
	ASSERT(strstr(r.error, "no such file") != NULL);
	unsetenv(FP_CUPTI_PATH_ENV);
}

TEST(cupti_probe_env_dir_without_cupti)
{
	struct fp_cupti_probe_result r;
	char dir[] = "/tmp/fp-cupti-probe-XXXXXX";

	/* An empty directory: searched, nothing there. */
	ASSERT_NOT_NULL(mkdtemp(dir));
	ASSERT_OK(setenv(FP_CUPTI_PATH_ENV, dir, 1));
	ASSERT_EQ(fp_cupti_probe(NULL, 0, &r), FP_ENOENT);
	ASSERT(!r.found);
	ASSERT_EQ(r.tried, 0);
	ASSERT(strstr(r.error, "no libcupti.so") != NULL);
	unsetenv(FP_CUPTI_PATH_ENV);
	rmdir(dir);
}

TEST(cupti_probe_env_not_a_library)
{
	struct fp_cupti_probe_result r;
	char path[] = "/tmp/fp-cupti-probe-XXXXXX";
	int fd = mkstemp(path);

	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, "not an ELF file\n", 16), 16);
	close(fd);
	ASSERT_OK(setenv(FP_CUPTI_PATH_ENV, path, 1));
	ASSERT_EQ(fp_cupti_probe(NULL, 0, &r), FP_ENOENT);
	ASSERT(!r.found);
	ASSERT_EQ(r.tried, 1);
	ASSERT(strstr(r.error, path) != NULL);
	unsetenv(FP_CUPTI_PATH_ENV);
	unlink(path);
}

TEST(cupti_probe_env_not_cupti)
{
	struct fp_cupti_probe_result r;
	Dl_info info;

	/* libc is loaded and has no cuptiGetVersion: found a library, but not CUPTI. */
	ASSERT(dladdr((void *)&setenv, &info) != 0);
	ASSERT_NOT_NULL(info.dli_fname);
	ASSERT_OK(setenv(FP_CUPTI_PATH_ENV, info.dli_fname, 1));
	ASSERT_EQ(fp_cupti_probe(NULL, 0, &r), FP_EVENDOR);
	ASSERT(!r.found);
	ASSERT(r.already_loaded);
	ASSERT_EQ(r.origin, FP_CUPTI_ORIGIN_ENV);
	ASSERT(strstr(r.error, "is not CUPTI") != NULL);
	unsetenv(FP_CUPTI_PATH_ENV);
}

TEST(cupti_probe_search)
{
	static const char *const extra[] = {"/nonexistent/a", NULL, "", "/nonexistent/b"};
	struct fp_cupti_probe_result r;
	int rc;

	unsetenv(FP_CUPTI_PATH_ENV);
	rc = fp_cupti_probe(extra, 4, &r);
	if (rc == FP_OK) {
		ASSERT(r.found);
		ASSERT_GT(r.api_version, 0);
		ASSERT(r.path[0] != '\0');
		ASSERT(r.origin != FP_CUPTI_ORIGIN_NONE);
		ASSERT_GE(r.tried, 1);
	} else {
		/* Nothing (usable) on this machine: a message, never a crash. */
		ASSERT(rc == FP_ENOENT || rc == FP_EVENDOR);
		ASSERT(!r.found);
		ASSERT(r.error[0] != '\0');
	}
}

TEST(cupti_probe_toolkit_file)
{
	struct fp_cupti_probe_result r;

	if (access(toolkit_cupti, F_OK) != 0)
		return; /* no CUDA toolkit here: nothing to check */
	ASSERT_OK(setenv(FP_CUPTI_PATH_ENV, toolkit_cupti, 1));
	ASSERT_OK(fp_cupti_probe(NULL, 0, &r));
	ASSERT(r.found);
	ASSERT(!r.already_loaded);
	ASSERT_EQ(r.origin, FP_CUPTI_ORIGIN_ENV);
	ASSERT_GT(r.api_version, 0);
	ASSERT(strstr(r.path, "libcupti.so") != NULL);
	unsetenv(FP_CUPTI_PATH_ENV);
}

TEST(cupti_probe_already_loaded_wins)
{
	struct fp_cupti_probe_result r;
	void *h;

	if (access(toolkit_cupti, F_OK) != 0)
		return;
	LSAN_OFF();
	h = dlopen(toolkit_cupti, RTLD_NOW | RTLD_LOCAL);
	ASSERT_NOT_NULL(h);
	/* A copy in the process is the one to use, whatever the variable says. */
	ASSERT_OK(setenv(FP_CUPTI_PATH_ENV, "/nonexistent/libcupti.so", 1));
	ASSERT_OK(fp_cupti_probe(NULL, 0, &r));
	ASSERT(r.found);
	ASSERT(r.already_loaded);
	ASSERT_EQ(r.origin, FP_CUPTI_ORIGIN_PROCESS);
	ASSERT(strstr(r.error, "ignored") != NULL);
	/* The probe dropped only its own reference: the library is still there. */
	ASSERT_NOT_NULL(dlopen(toolkit_cupti, RTLD_NOW | RTLD_NOLOAD));
	dlclose(h);
	dlclose(h);
	LSAN_ON();
	unsetenv(FP_CUPTI_PATH_ENV);
}

TEST(cupti_probe_args)
{
	struct fp_cupti_probe_result r;

	ASSERT_EQ(fp_cupti_probe(NULL, 0, NULL), FP_EINVAL);
	ASSERT_EQ(fp_cupti_probe(NULL, 2, &r), FP_EINVAL);
	ASSERT(r.error[0] != '\0');
	ASSERT_STREQ(fp_cupti_origin_name(FP_CUPTI_ORIGIN_ENV), "env");
	ASSERT_STREQ(fp_cupti_origin_name((enum fp_cupti_origin)99), "unknown");
}
