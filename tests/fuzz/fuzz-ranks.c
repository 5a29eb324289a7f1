/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the readers of a job's per-rank files (<flagprism/ranks.h>): the bytes,
 * split at each 0xFF byte into up to three inputs, are merged as Chrome traces
 * (fp_ranks_merge_trace_texts()) and as the Debugger's summaries
 * (fp_ranks_merge_summary_texts()), and the first one is read as a meta file
 * (fp_ranks_parse_meta()). A rejection must come back as a status with a message; a success
 * must write JSON that our own reader accepts. Any violation aborts (a crash for libFuzzer).
 */
#define _GNU_SOURCE 1
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/json.h>
#include <flagprism/ranks.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "fuzz-ranks: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                 \
			abort();                                                           \
		}                                                                          \
	} while (0)

static void check_json(char *buf, size_t len)
{
	struct fp_json_doc *doc = NULL;
	struct fp_diag d;

	if (fp_json_parse(buf, len, NULL, &doc, &d) != FP_OK) {
		fprintf(stderr, "fuzz-ranks: our output is not JSON: %s\n", d.msg);
		abort();
	}
	fp_json_doc_free(doc);
}

static void check_error(int rc, const struct fp_diag *d)
{
	CHECK(rc == FP_EFORMAT || rc == FP_ELIMIT || rc == FP_ENOMEM || rc == FP_EINVAL ||
	      rc == FP_EVERSION);
	CHECK(d->msg[0] != '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"a.rank0.json", "b.json", "rank2/summary.json"};
	const char *texts[3];
	size_t lens[3], n = 0, i, start = 0;
	struct fp_ranks_read rr;
	struct fp_ranks_trace_options o;
	struct fp_diag d;
	char *buf = NULL, *txt = NULL;
	size_t len = 0, tlen = 0;
	FILE *f, *t;
	int rc;

	for (i = 0; i <= size && n < 3; i++) {
		if (i == size || data[i] == 0xFF) {
			texts[n] = (const char *)data + start;
			lens[n++] = i - start;
			start = i + 1;
		}
	}

	memset(&o, 0, sizeof(o));
	o.align = size ? (enum fp_ranks_align)(data[0] % 4) : FP_RANKS_ALIGN_AUTO;
	f = open_memstream(&buf, &len);
	CHECK(f != NULL);
	fp_diag_clear(&d);
	rc = fp_ranks_merge_trace_texts(texts, lens, names, n, &o, f, NULL, &d);
	CHECK(fclose(f) == 0);
	if (rc == FP_OK)
		check_json(buf, len);
	else
		check_error(rc, &d);
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	t = open_memstream(&txt, &tlen);
	CHECK(f != NULL && t != NULL);
	fp_diag_clear(&d);
	rc = fp_ranks_merge_summary_texts(texts, lens, names, n, f, t, NULL, &d);
	CHECK(fclose(f) == 0);
	CHECK(fclose(t) == 0);
	if (rc == FP_OK)
		check_json(buf, len);
	else
		check_error(rc, &d);
	free(buf);
	free(txt);

	fp_diag_clear(&d);
	rc = fp_ranks_parse_meta(texts[0], lens[0], names[0], &rr, &d);
	if (rc != FP_OK)
		check_error(rc, &d);
	else
		CHECK(!rr.found || (rr.rank >= 0 && rr.rank < FP_RANKS_MAX));
	return 0;
}
