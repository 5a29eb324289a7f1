/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the Debugger's site table parser (src/debug/sites.c): helper call frames,
 * statements in call-chain order, reads that stand for a caller's variable, the unobserved list
 * and the memory-site members. Input: one byte giving the site count the record buffer's header
 * claims (0..63), then the site table JSON. The buffer has one program and no slots, so the
 * table is parsed whole and nothing else: parsing must succeed or fail cleanly (FP_EFORMAT,
 * FP_EVERSION, FP_ELIMIT, FP_ENOMEM, with "site table:" messages). A parsed run is checked
 * against the model's invariants (indices in range, frames before their callees, a statement's
 * key in source order, coverage counts consistent), and its text and JSON reports (coverage,
 * frames, chains) and findings are written to /dev/null. A violated invariant aborts.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/debug.h>
#include <flagprism/status.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "fuzz-debug-sites: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                       \
			abort();                                                                 \
		}                                                                                \
	} while (0)

static void check_run(const struct fp_dbg_run *run)
{
	size_t nst = fp_dbg_run_statement_count(run), ns = fp_dbg_run_site_count(run);
	size_t nf = fp_dbg_run_frame_count(run), i, j;
	struct fp_dbg_coverage c;

	for (i = 1; i <= nf; i++) {
		const struct fp_dbg_frame *f = fp_dbg_run_frame(run, (uint32_t)i);

		CHECK(f && f->id == i && f->parent < i && f->depth >= 1);
		CHECK(f->function && f->file && f->call_file && f->call_source);
		if (f->parent)
			CHECK(f->depth == fp_dbg_run_frame(run, f->parent)->depth + 1);
	}
	for (i = 0; i < nst; i++) {
		const struct fp_dbg_statement *st = fp_dbg_run_statement(run, i);

		CHECK(st->frame <= nf && st->source && st->end_line >= st->line);
		for (j = 0; j < st->nsites; j++) {
			CHECK(st->sites[j] < ns);
			CHECK(fp_dbg_run_site(run, st->sites[j])->statement == i);
		}
		/* a kernel statement's successor in the same frame is at or after it */
		if (i + 1 < nst && fp_dbg_run_statement(run, i + 1)->frame == st->frame &&
		    !st->frame)
			CHECK(fp_dbg_run_statement(run, i + 1)->line >= st->line);
	}
	for (i = 0; i < ns; i++) {
		const struct fp_dbg_site *s = fp_dbg_run_site(run, i);

		CHECK(s->id == i + 1 && s->statement < nst && s->frame <= nf);
		CHECK(s->op && s->form && s->padding);
		for (j = 0; j < s->nreads; j++) {
			CHECK(s->reads[j].name && s->reads[j].var && s->reads[j].frame <= nf);
			CHECK(s->reads[j].statement == UINT32_MAX || s->reads[j].statement < nst);
		}
		for (j = 0; j < s->nchecks; j++)
			CHECK(s->checks[j].var && s->checks[j].frame <= nf);
	}
	for (i = 0; i < fp_dbg_run_unobserved_count(run); i++) {
		const struct fp_dbg_unobserved *u = fp_dbg_run_unobserved(run, i);

		CHECK(u->source && u->reason && u->frame <= nf && u->line >= 1);
	}
	fp_dbg_run_coverage(run, &c);
	CHECK(c.memory_sites_observed <= c.memory_sites && c.statements_observed <= c.statements);
	CHECK(c.statements_observed == nst);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const formats[] = {"txt", "json", "op_log_txt", "op_log_json"};
	static const char launch_json[] =
		"{\"output_dir\": \"/tmp\", \"stem\": \"f\", \"grid\": [1], \"source_file\": \"/u/k.py\","
		" \"frame_files\": [\"/c/h1.py\", null],"
		" \"args\": [{\"name\": \"x\", \"kind\": \"tensor\", \"data_ptr\": 4096, \"element_size\": 4,"
		" \"shape\": [8], \"strides\": [1], \"descriptor\": {\"shape\": [16], \"strides\": [1]}}]}";
	uint64_t buf[8] = {UINT64_C(0x0031764742445046),
			   1 | (uint64_t)8 << 16 | (uint64_t)8 << 32,
			   0,
			   1,
			   0,
			   0,
			   0,
			   0};
	struct fp_dbg_run *run = NULL;
	struct fp_dbg_findings *fs = NULL;
	struct fp_dbg_launch *launch = NULL;
	struct fp_diag d;
	FILE *null;
	size_t i;
	int st;

	if (size < 1)
		return 0;
	buf[7] = data[0] & 63;
	st = fp_dbg_decode(buf, sizeof(buf), (const char *)data + 1, size - 1, &run, &d);
	if (st) {
		CHECK(!run);
		CHECK(st == FP_EFORMAT || st == FP_EVERSION || st == FP_ELIMIT || st == FP_ENOMEM);
		CHECK(d.status == st && memchr(d.msg, '\0', sizeof(d.msg)) && d.msg[0]);
		return 0;
	}
	check_run(run);
	st = fp_dbg_launch_parse(run, launch_json, strlen(launch_json), &launch, &d);
	CHECK(st == FP_OK || st == FP_ENOMEM || st == FP_ELIMIT);
	if (st)
		goto out;
	st = fp_dbg_launch_findings(run, launch, &fs, &d);
	CHECK(st == FP_OK || st == FP_ENOMEM || st == FP_ELIMIT);
	null = fopen("/dev/null", "w");
	CHECK(null);
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		st = fp_dbg_write_format(run, launch, fs, formats[i], null, &d);
		CHECK(st == FP_OK || st == FP_ENOMEM);
	}
	fclose(null);
	fp_dbg_findings_free(fs);
	fp_dbg_launch_free(launch);
out:
	fp_dbg_run_free(run);
	return 0;
}
