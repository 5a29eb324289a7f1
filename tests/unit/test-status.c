/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for status codes, diagnostics and the allocator hook. */
#include <flagprism/alloc.h>
#include <flagprism/status.h>
#include <flagprism/version.h>

#include "test.h"

TEST(status_names)
{
	ASSERT_STREQ(fp_status_name(FP_OK), "FP_OK");
	ASSERT_STREQ(fp_status_name(FP_EFORMAT), "FP_EFORMAT");
	ASSERT_STREQ(fp_strerror(FP_ENOMEM), "out of memory");
	ASSERT_STREQ(fp_strerror(12345), "unknown status");
	ASSERT_STREQ(fp_status_name(-999), "FP_EUNKNOWN");
	ASSERT_STREQ(fp_version_string(), FP_VERSION_STRING);
	ASSERT_EQ(fp_version() >> 16, FP_VERSION_MAJOR);
}

TEST(status_diag)
{
	struct fp_diag d;

	fp_diag_clear(&d);
	ASSERT_EQ(d.status, 0);
	ASSERT_EQ(fp_diag_set_pos(&d, FP_EFORMAT, 17, 2, 5, "expected %s", "','"), FP_EFORMAT);
	ASSERT_EQ(d.status, FP_EFORMAT);
	ASSERT_UEQ(d.offset, 17);
	ASSERT_EQ(d.line, 2);
	ASSERT_EQ(d.col, 5);
	ASSERT_STREQ(d.msg, "expected ','");
	/* NULL diag is accepted and the status still comes back. */
	ASSERT_EQ(fp_diag_set(NULL, FP_ELIMIT, 0, "x"), FP_ELIMIT);
	fp_diag_clear(NULL);
}

TEST(alloc_hook)
{
	char *s;

	ASSERT_EQ(fp_set_allocator(NULL, fp_realloc, NULL), FP_EINVAL);
	fpt_oom_install(0);
	ASSERT_NULL(fp_malloc(10));
	ASSERT_NULL(fp_strdup("abc"));
	fpt_oom_uninstall();
	fpt_oom_install(-1);
	s = fp_strdup("abc");
	ASSERT_STREQ(s, "abc");
	ASSERT_EQ(fpt_oom_live(), 1);
	fp_free(s);
	ASSERT_EQ(fpt_oom_live(), 0);
	fpt_oom_uninstall();
	ASSERT_NULL(fp_calloc(SIZE_MAX / 2, 4));
	ASSERT_NULL(fp_reallocarray(NULL, SIZE_MAX / 2, 4));
	fp_free(NULL);
}
