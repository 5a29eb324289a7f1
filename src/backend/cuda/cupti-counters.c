/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whether this process may use CUPTI's profiling APIs (PC sampling, range and PM sampling): the
 * NVIDIA driver restricts them to admins unless NVreg_RestrictProfilingToAdminUsers=0, which it
 * shows as "RmProfilingAdminOnly" in /proc/driver/nvidia/params; admins are root or holders of
 * CAP_SYS_ADMIN (CAP_PERFMON as well from driver R565). Reads two procfs files, loads nothing,
 * needs no GPU: `flagprism doctor` asks before anything starts. Kernel tracing is not affected.
 */
#include "fp-setup.h"

#include <unistd.h>

#include <flagprism/cupti.h>

#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38

FP_UNITTEST int fp__cupti_counters_check_at(const char *params, const char *status, int euid,
					    struct fp_cupti_counters_info *out);

/* The value after "<key>:" on a line of `path`, or -1. */
static long long read_key(const char *path, const char *key, int base)
{
	char line[512];
	size_t klen = strlen(key);
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;

		if (strncmp(p, key, klen) != 0 || p[klen] != ':')
			continue;
		p += klen + 1;
		while (*p == ' ' || *p == '\t')
			p++;
		v = strtoll(p, &end, base);
		if (end == p)
			v = -1;
		break;
	}
	fclose(f);
	return v;
}

int fp__cupti_counters_check_at(const char *params, const char *status, int euid,
				struct fp_cupti_counters_info *out)
{
	long long admin, cap;

	if (!out)
		return FP_EINVAL;
	memset(out, 0, sizeof(*out));
	admin = read_key(params, "RmProfilingAdminOnly", 10);
	cap = read_key(status, "CapEff", 16);
	out->admin_only = admin == 0 || admin == 1 ? (int)admin : -1;
	out->privileged =
		euid == 0 ||
		(cap > 0 && ((cap >> CAP_SYS_ADMIN_BIT) & 1 || (cap >> CAP_PERFMON_BIT) & 1));
	if (out->admin_only < 0) {
		out->access = FP_CUPTI_COUNTERS_UNKNOWN;
		snprintf(out->detail, sizeof(out->detail),
			 "no NVIDIA driver parameters at %s: cannot tell whether hardware counters "
			 "and PC sampling are permitted",
			 params);
	} else if (!out->admin_only) {
		out->access = FP_CUPTI_COUNTERS_ALLOWED;
		snprintf(out->detail, sizeof(out->detail),
			 "the driver lets every user read hardware counters "
			 "(RmProfilingAdminOnly=0)");
	} else if (out->privileged) {
		out->access = FP_CUPTI_COUNTERS_ALLOWED;
		snprintf(out->detail, sizeof(out->detail),
			 "hardware counters are admin-only (RmProfilingAdminOnly=1) and this "
			 "process is privileged (root, CAP_SYS_ADMIN or CAP_PERFMON)");
	} else {
		out->access = FP_CUPTI_COUNTERS_ADMIN_ONLY;
		snprintf(out->detail, sizeof(out->detail),
			 "hardware counters and PC sampling are admin-only "
			 "(RmProfilingAdminOnly=1): run as root or load nvidia with "
			 "NVreg_RestrictProfilingToAdminUsers=0");
	}
	return FP_OK;
}

int fp_cupti_counters_check(struct fp_cupti_counters_info *out)
{
	return fp__cupti_counters_check_at("/proc/driver/nvidia/params", "/proc/self/status",
					   (int)geteuid(), out);
}
