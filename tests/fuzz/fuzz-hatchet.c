/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the Hatchet reader (fp_calltree_parse_hatchet): any bytes are read as a
 * profile. A failure must come back as a status with a filled diagnostic; a success must give a
 * tree that writes to valid Hatchet JSON which reads back to an equal tree and, written again,
 * to the same bytes (when every value is finite: a sum that overflows to infinity is written as
 * null and then skipped). Any mismatch aborts, which libFuzzer reports as a crash.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/alloc.h>
#include <flagprism/calltree.h>
#include <flagprism/json.h>
#include <flagprism/strbuf.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                          \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "fuzz-hatchet: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                   \
			abort();                                                             \
		}                                                                            \
	} while (0)

static bool all_finite(const struct fp_calltree *t)
{
	struct fp_calltree_value v[64];
	size_t i, j, n;

	for (i = 0; i < fp_calltree_node_count(t); i++) {
		n = fp_calltree_node_metrics(t, (uint32_t)i, v, 64);
		if (n > 64)
			return false;
		for (j = 0; j < n; j++)
			if (!isfinite(v[j].self) || !isfinite(v[j].total))
				return false;
	}
	for (i = 0; i < fp_calltree_device_count(t); i++) {
		struct fp_calltree_device_attr d;

		CHECK(fp_calltree_device_at(t, i, &d) == FP_OK);
		if (!d.is_string && !isfinite(d.value))
			return false;
	}
	return true;
}

static char *write_tree(struct fp_calltree *t, size_t *len)
{
	struct fp_strbuf sb;
	struct fp_jsonw *w;

	fp_strbuf_init(&sb, 0);
	w = fp_jsonw_new_strbuf(&sb, 0);
	CHECK(w != NULL);
	CHECK(fp_calltree_write_hatchet(t, w) == FP_OK);
	CHECK(fp_jsonw_finish(w) == FP_OK);
	fp_jsonw_free(w);
	return fp_strbuf_detach(&sb, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fp_calltree_limits lim = {.max_nodes = 20000, .max_depth = 64, .max_metrics = 256};
	struct fp_calltree *t = NULL, *t2 = NULL;
	struct fp_hatchet_info info;
	struct fp_diag d;
	char *a, *b;
	size_t alen, blen;
	int rc;

	fp_diag_clear(&d);
	rc = fp_calltree_parse_hatchet((const char *)data, size, &lim, FP_HATCHET_STRICT, &t, &info,
				       &d);
	if (rc != FP_OK) {
		CHECK(t == NULL);
		CHECK(rc == FP_EFORMAT || rc == FP_ELIMIT || rc == FP_ENOMEM || rc == FP_EINVAL);
		CHECK(d.status == rc);
		CHECK(d.msg[0] != '\0');
		CHECK(d.offset <= size);
		return 0;
	}
	CHECK(fp_calltree_node_count(t) >= 1);
	CHECK(info.nodes >= fp_calltree_node_count(t));
	a = write_tree(t, &alen);
	fp_diag_clear(&d);
	rc = fp_calltree_parse_hatchet(a, alen, &lim, FP_HATCHET_STRICT, &t2, NULL, &d);
	if (rc != FP_OK) {
		fprintf(stderr, "fuzz-hatchet: our own output does not read back: %s\n", d.msg);
		abort();
	}
	if (all_finite(t)) {
		CHECK(fp_calltree_equal(t, t2, 0, &d));
		b = write_tree(t2, &blen);
		CHECK(alen == blen && memcmp(a, b, alen) == 0);
		fp_free(b);
	}
	fp_free(a);
	fp_calltree_free(t);
	fp_calltree_free(t2);
	return 0;
}
