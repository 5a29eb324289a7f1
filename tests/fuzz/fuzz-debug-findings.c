/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the Debugger's findings (src/debug/findings.c) and the `args` of the
 * launch JSON. Input: one byte that picks a fixed site table carrying findings inputs (roles,
 * checks by reference, base parameters, load padding), two bytes (little-endian) giving the
 * length L of the next part, L bytes spliced into `{"args": ...}` as the launch's tensor
 * arguments, then the record buffer. A buffer that decodes must give findings or a clean error
 * (FP_EFORMAT naming `args`, FP_ELIMIT, FP_ENOMEM); every finding must satisfy the model's
 * invariants, and the text and JSON reports that print them are written to /dev/null. A
 * violated invariant aborts.
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

#define CHECK(cond)                                                                          \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "fuzz-debug-findings: check failed: %s (line %d)\n", \
				#cond, __LINE__);                                            \
			abort();                                                             \
		}                                                                            \
	} while (0)

static const char *const site_tables[2] = {
	/* 0: loads and a store with base parameters (known, candidates, unknown) */
	"{\"version\":1,\"kernel\":\"k\",\"addr_level\":2,\"statements\":["
	"{\"id\":0,\"line\":10,\"source\":\"a = tl.load(x_ptr + o)\"},"
	"{\"id\":1,\"line\":11,\"source\":\"b = tl.load(p)\"},"
	"{\"id\":2,\"line\":12,\"source\":\"tl.store(y_ptr + o, v)\"}],\"sites\":["
	"{\"id\":1,\"statement\":0,\"kind\":\"load\",\"name\":\"x_ptr + o\",\"base_param\":\"x_ptr\"},"
	"{\"id\":2,\"statement\":1,\"kind\":\"load\",\"name\":\"p\","
	"\"base_params\":[\"x_ptr\",\"n\",\"y_ptr\"]},"
	"{\"id\":3,\"statement\":2,\"kind\":\"store\",\"name\":\"y_ptr + o\",\"base_param\":null}]}",
	/* 1: every value role, a check by reference and a padded load */
	"{\"version\":1,\"kernel\":\"k\",\"statements\":["
	"{\"id\":0,\"line\":10,\"source\":\"x = tl.load(p, mask=m, other=float('nan'))\"},"
	"{\"id\":1,\"line\":11,\"source\":\"y = x / d\"},"
	"{\"id\":2,\"line\":12,\"source\":\"z = tl.sqrt(y).to(tl.float16)\"}],\"sites\":["
	"{\"id\":1,\"statement\":0,\"kind\":\"load\",\"name\":\"p\"},"
	"{\"id\":2,\"statement\":0,\"kind\":\"value\",\"name\":\"x\",\"role\":\"loaded\","
	"\"load_site\":1,\"other\":\"nan\"},"
	"{\"id\":3,\"statement\":1,\"kind\":\"value\",\"name\":\"d\",\"role\":\"divisor\"},"
	"{\"id\":4,\"statement\":1,\"kind\":\"value\",\"name\":\"y\",\"reads\":[\"x\",\"d\"],"
	"\"checks\":[{\"role\":\"divisor\",\"name\":\"x\"},{\"role\":\"log_arg\",\"name\":\"y\"}]},"
	"{\"id\":5,\"statement\":2,\"kind\":\"value\",\"name\":\"y\",\"role\":\"sqrt_arg\"},"
	"{\"id\":6,\"statement\":2,\"kind\":\"value\",\"name\":\"tl.sqrt(y)\",\"role\":\"cast_src\","
	"\"target_dtype\":\"float16\"},"
	"{\"id\":7,\"statement\":2,\"kind\":\"value\",\"name\":\"z\",\"reads\":[\"y\"],"
	"\"checks\":[{\"role\":\"cast_src\",\"name\":\"y\",\"target_dtype\":\"float8e4nv\"}]}]}",
};

static void check_findings(const struct fp_dbg_run *run, const struct fp_dbg_findings *fs)
{
	const struct fp_dbg_run_info *in = fp_dbg_run_info(run);
	size_t i, j;

	for (i = 0; i < fp_dbg_findings_count(fs); i++) {
		const struct fp_dbg_finding *f = fp_dbg_findings_at(fs, i);

		CHECK(f->kind >= FP_DBG_FINDING_OUT_OF_BOUNDS &&
		      f->kind <= FP_DBG_FINDING_PRECISION_LOSS);
		CHECK(f->statement < fp_dbg_run_statement_count(run));
		CHECK(f->site < fp_dbg_run_site_count(run));
		CHECK(fp_dbg_run_site(run, f->site)->statement == f->statement);
		CHECK(f->program < in->programs && f->programs[0] == f->program);
		CHECK(f->nprograms >= 1 && f->nprograms <= FP_DBG_FINDING_MAX_PROGRAMS);
		CHECK(f->program_count >= f->nprograms && f->instance_count >= f->program_count);
		for (j = 1; j < f->nprograms; j++)
			CHECK(f->programs[j - 1] < f->programs[j]);
		CHECK(f->message && f->message[0] && f->subject);
		if (i) {
			const struct fp_dbg_finding *p = fp_dbg_findings_at(fs, i - 1);

			CHECK(p->kind < f->kind ||
			      (p->kind == f->kind && p->statement <= f->statement));
		}
		if (f->kind == FP_DBG_FINDING_OUT_OF_BOUNDS) {
			CHECK(f->param && f->where != FP_DBG_OOB_NONE);
			CHECK(f->bytes_before || f->bytes_past);
			CHECK(f->view_lo <= f->view_hi);
			CHECK((f->where == FP_DBG_OOB_OTHER_STORAGE) == (f->other_param != NULL));
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fp_dbg_run *run = NULL;
	struct fp_dbg_findings *fs = NULL;
	struct fp_dbg_launch *launch = NULL;
	struct fp_diag d;
	const char *sites;
	size_t alen, n;
	char *lj;
	FILE *null;
	int st;

	if (size < 3)
		return 0;
	sites = site_tables[data[0] & 1];
	alen = (size_t)data[1] | (size_t)data[2] << 8;
	if (alen > size - 3)
		return 0;
	st = fp_dbg_decode(data + 3 + alen, size - 3 - alen, sites, strlen(sites), &run, &d);
	if (st)
		return 0; /* the decoder has its own harness */
	n = alen + 96;
	lj = malloc(n);
	CHECK(lj);
	snprintf(lj, n, "{\"output_dir\":\"/nonexistent\",\"grid\":[%" PRIu64 "],\"args\":%.*s}",
		 fp_dbg_run_info(run)->programs, (int)alen, (const char *)data + 3);
	st = fp_dbg_findings_from_launch(run, lj, strlen(lj), &fs, &d);
	if (st) {
		CHECK(!fs);
		CHECK(st == FP_EFORMAT || st == FP_ELIMIT || st == FP_ENOMEM || st == FP_EVERSION);
		CHECK(d.msg[0]);
	} else {
		check_findings(run, fs);
		if (fp_dbg_run_info(run)->programs >= 1 &&
		    fp_dbg_run_info(run)->programs <= UINT32_MAX &&
		    fp_dbg_launch_parse(run, lj, strlen(lj), &launch, &d) == FP_OK) {
			null = fopen("/dev/null", "w");
			CHECK(null);
			/* the launch's parsed arguments give the findings the JSON's gave */
			{
				struct fp_dbg_findings *lf = NULL;

				st = fp_dbg_launch_findings(run, launch, &lf, &d);
				CHECK(st == FP_OK || st == FP_ENOMEM);
				CHECK(st || fp_dbg_findings_count(lf) == fp_dbg_findings_count(fs));
				fp_dbg_findings_free(lf);
			}
			st = fp_dbg_write_format(run, launch, fs, "txt", null, &d);
			CHECK(st == FP_OK || st == FP_ENOMEM);
			st = fp_dbg_write_format(run, launch, fs, "json", null, &d);
			CHECK(st == FP_OK || st == FP_ENOMEM);
			fclose(null);
			fp_dbg_launch_free(launch);
		}
		fp_dbg_findings_free(fs);
	}
	free(lj);
	fp_dbg_run_free(run);
	return 0;
}
