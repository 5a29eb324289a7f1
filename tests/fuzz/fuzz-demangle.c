/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the C++ demangler (include/flagprism/demangle.h), which reads kernel
 * names from CUPTI records and profile files. Any input, in both forms and with small and large
 * output buffers: the call must succeed or fail with a known status; on success the text must
 * be NUL-terminated, as long as *out_len says, within the buffer, free of the internal marker
 * bytes and not empty. A violated check aborts, which libFuzzer reports as a crash.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/demangle.h>
#include <flagprism/status.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                           \
	do {                                                                                  \
		if (!(cond)) {                                                                \
			fprintf(stderr, "fuzz-demangle: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                    \
			abort();                                                              \
		}                                                                             \
	} while (0)

static int run(const char *name, size_t n, enum fp_demangle_form form, char *out, size_t cap,
	       size_t *len)
{
	size_t i;
	int rc = fp_demangle(name, n, form, out, cap, len);

	CHECK(rc == FP_OK || rc == FP_EFORMAT || rc == FP_ENOTSUP || rc == FP_ELIMIT ||
	      rc == FP_ENOMEM);
	if (rc)
		return rc;
	CHECK(*len < cap);
	CHECK(out[*len] == '\0');
	CHECK(strlen(out) == *len);
	for (i = 0; i < *len; i++)
		CHECK((unsigned char)out[i] >= 0x20);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char full[FP_DEMANGLE_MAX + 1], brief[FP_DEMANGLE_MAX + 1], tiny[24];
	const char *name = (const char *)data;
	size_t fl = 0, bl = 0, tl = 0;
	int rf, rb;

	if (size > 8192)
		return 0;
	rf = run(name, size, FP_DEMANGLE_FULL, full, sizeof(full), &fl);
	rb = run(name, size, FP_DEMANGLE_SHORT, brief, sizeof(brief), &bl);
	/* the forms read the same grammar: both succeed or fail the same way */
	CHECK((rf == FP_OK) == (rb == FP_OK) || rf == FP_ELIMIT || rb == FP_ELIMIT);
	if (rf == FP_OK && rb == FP_OK)
		CHECK(bl > 0 && fl > 0);
	if (run(name, size, FP_DEMANGLE_FULL, tiny, sizeof(tiny), &tl) == FP_OK)
		CHECK(rf == FP_OK && tl == fl && !memcmp(tiny, full, tl));
	return 0;
}
