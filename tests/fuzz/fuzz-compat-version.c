/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the version comparison of the known-bad table (compat.h): the versions
 * come from whatever the installed packages report. The input is split at its first NUL into
 * two strings a and b. Comparison must be antisymmetric (cmp(a, b) == -cmp(b, a)) and agree with
 * fp_compat_version_in(); a version without a leading digit must be refused; the table check
 * must not crash on any version. Any violation aborts, which libFuzzer reports as a crash.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/compat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                          \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "fuzz-compat-version: check failed: %s (line %d)\n", \
				#cond, __LINE__);                                            \
			abort();                                                             \
		}                                                                            \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 2), *a, *b;
	const struct fp_compat_issue *hit[8];
	struct fp_compat_have have[4];
	int ab = 0, ba = 0, rab, rba;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = buf[size + 1] = '\0';
	a = buf;
	b = buf + strlen(buf) + 1;
	if (b > buf + size)
		b = buf + size + 1; /* no NUL in the input: b is empty */
	rab = fp_compat_version_cmp(a, b, &ab);
	rba = fp_compat_version_cmp(b, a, &ba);
	CHECK(rab == rba);
	if (rab == FP_OK) {
		CHECK(ab == -ba);
		CHECK(fp_compat_version_in(a, b, NULL) == (ab >= 0));
		CHECK(fp_compat_version_in(a, NULL, b) == (ab < 0));
	} else {
		CHECK(rab == FP_EINVAL);
	}
	if (!(a[0] >= '0' && a[0] <= '9'))
		CHECK(!fp_compat_version_in(a, NULL, NULL));
	have[0] = (struct fp_compat_have){"triton", a};
	have[1] = (struct fp_compat_have){"numpy", b};
	have[2] = (struct fp_compat_have){"torch", a};
	have[3] = (struct fp_compat_have){"python", b};
	CHECK(fp_compat_check(have, 4, FP_COMPAT_ANY, hit, 8) <= fp_compat_issue_count());
	free(buf);
	return 0;
}
