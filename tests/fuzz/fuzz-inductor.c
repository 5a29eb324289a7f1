/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the reader of Inductor's generated comments (include/flagprism/
 * inductor.h). The input is split at its first NUL byte into a module text and a post-grad
 * graph text; the kernel name is "k0" (what the seeds define). The call must succeed or fail
 * with a known status; on success the note has no control byte but its line and field
 * separators, and every line holds exactly one tab. A violated check aborts.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/inductor.h>
#include <flagprism/status.h>
#include <flagprism/strbuf.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                           \
	do {                                                                                  \
		if (!(cond)) {                                                                \
			fprintf(stderr, "fuzz-inductor: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                    \
			abort();                                                              \
		}                                                                             \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *nul = memchr(text, '\0', size);
	size_t mlen = nul ? (size_t)(nul - text) : size, i, tabs = 0;
	const char *graph = nul ? nul + 1 : NULL;
	size_t glen = nul ? size - mlen - 1 : 0;
	struct fp_inductor_origin o;
	struct fp_strbuf note;
	int rc;

	fp_strbuf_init(&note, 1 << 16);
	rc = fp_inductor_origin(text, mlen, "k0", 2, graph, glen, &note, &o);
	CHECK(rc == FP_OK || rc == FP_ENOENT || rc == FP_ELIMIT || rc == FP_ENOMEM);
	if (rc == FP_OK) {
		for (i = 0; i < note.len; i++) {
			unsigned char c = (unsigned char)note.buf[i];

			CHECK(c >= 0x20 || c == '\t' || c == '\n');
			if (c == '\t')
				tabs++;
			if (c == '\n' || i + 1 == note.len) {
				CHECK(tabs == 1);
				tabs = 0;
			}
		}
		CHECK(strlen(o.frame) < sizeof(o.frame));
	}
	fp_strbuf_release(&note);
	return 0;
}
