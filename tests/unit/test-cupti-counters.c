/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The check of whether CUPTI's profiling APIs (PC sampling, counters) are permitted, on
 * hand-written copies of /proc/driver/nvidia/params and /proc/self/status, and once on this
 * machine's real files (whatever they say, the answer must be well-formed).
 */
#define _GNU_SOURCE 1
#include <stdlib.h>
#include <unistd.h>

#include <flagprism/cupti.h>

#include "test.h"

int fp__cupti_counters_check_at(const char *params, const char *status, int euid,
				struct fp_cupti_counters_info *out);

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ASSERT_NOT_NULL(f);
	fputs(text, f);
	fclose(f);
}

TEST(cupti_counters_check)
{
	char params[] = "/tmp/fp-cupti-params-XXXXXX", status[] = "/tmp/fp-cupti-status-XXXXXX";
	struct fp_cupti_counters_info c;
	int fd;

	fd = mkstemp(params);
	ASSERT_GE(fd, 0);
	close(fd);
	fd = mkstemp(status);
	ASSERT_GE(fd, 0);
	close(fd);

	write_file(params, "ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\nRmLogonRC: 1\n");
	write_file(status, "Name:\tx\nCapEff:\t0000000000000000\n");
	ASSERT_OK(fp__cupti_counters_check_at(params, status, 1000, &c));
	ASSERT_EQ(c.access, FP_CUPTI_COUNTERS_ADMIN_ONLY);
	ASSERT_EQ(c.admin_only, 1);
	ASSERT(!c.privileged);
	ASSERT(strstr(c.detail, "NVreg_RestrictProfilingToAdminUsers=0") != NULL);
	/* root */
	ASSERT_OK(fp__cupti_counters_check_at(params, status, 0, &c));
	ASSERT_EQ(c.access, FP_CUPTI_COUNTERS_ALLOWED);
	ASSERT(c.privileged);
	/* CAP_PERFMON (bit 38) without root */
	write_file(status, "CapEff:\t0000004000000000\n");
	ASSERT_OK(fp__cupti_counters_check_at(params, status, 1000, &c));
	ASSERT_EQ(c.access, FP_CUPTI_COUNTERS_ALLOWED);
	/* CAP_SYS_ADMIN (bit 21) */
	write_file(status, "CapEff:\t0000000000200000\n");
	ASSERT_OK(fp__cupti_counters_check_at(params, status, 1000, &c));
	ASSERT(c.privileged);
	/* open to all */
	write_file(params, "RmProfilingAdminOnly: 0\n");
	write_file(status, "CapEff:\t0000000000000000\n");
	ASSERT_OK(fp__cupti_counters_check_at(params, status, 1000, &c));
	ASSERT_EQ(c.access, FP_CUPTI_COUNTERS_ALLOWED);
	ASSERT_EQ(c.admin_only, 0);
	/* no driver */
	ASSERT_OK(fp__cupti_counters_check_at("/nonexistent/params", status, 1000, &c));
	ASSERT_EQ(c.access, FP_CUPTI_COUNTERS_UNKNOWN);
	ASSERT_EQ(c.admin_only, -1);
	ASSERT(strstr(c.detail, "/nonexistent/params") != NULL);
	write_file(params, "RmProfilingAdminOnly: banana\n");
	ASSERT_OK(fp__cupti_counters_check_at(params, status, 1000, &c));
	ASSERT_EQ(c.access, FP_CUPTI_COUNTERS_UNKNOWN);
	ASSERT_EQ(fp__cupti_counters_check_at(params, status, 0, NULL), FP_EINVAL);
	unlink(params);
	unlink(status);
}

TEST(cupti_counters_this_machine)
{
	struct fp_cupti_counters_info c;

	ASSERT_OK(fp_cupti_counters_check(&c));
	ASSERT(c.access == FP_CUPTI_COUNTERS_UNKNOWN || c.access == FP_CUPTI_COUNTERS_ALLOWED ||
	       c.access == FP_CUPTI_COUNTERS_ADMIN_ONLY);
	ASSERT(c.detail[0] != '\0');
	ASSERT_EQ(fp_cupti_counters_check(NULL), FP_EINVAL);
}
