/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the Debugger's findings (src/debug/findings.c) and the `args` of the
 * launch JSON. Input: one byte that picks a fixed site table (bits 0-1: tables 0 and 1 carry the
 * older findings inputs, roles, checks by reference, base parameters, load padding; tables 2
 * and 3 a check area, `params` and `check_slots`, from which the findings come: every rule once,
 * and accesses of every form with a host descriptor), two bytes (little-endian) giving the
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

static const char *const site_tables[4] = {
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
	/* 2: check mode, every rule once on one statement, 3 parameters (x_ptr, d, z_ptr) */
	"{\"version\":1,\"kernel\":\"k5\",\"statements\":["
	"{\"id\":0,\"line\":7,\"source\":\"z = tl.sqrt(tl.load(x_ptr) / d).to(tl.float16)\"}],"
	"\"sites\":[{\"id\":1,\"statement\":0,\"kind\":\"value\",\"name\":\"z\"}],"
	"\"params\":[\"x_ptr\",\"d\",\"z_ptr\"],\"check_slots\":["
	"{\"slot\":0,\"rule\":\"bounds\",\"statement\":0,\"subject\":\"x_ptr\"},"
	"{\"slot\":1,\"rule\":\"descriptor_extent\",\"statement\":0,\"subject\":\"x_ptr\","
	"\"cands\":[\"x_ptr\",\"z_ptr\"]},"
	"{\"slot\":2,\"rule\":\"nan\",\"statement\":0,\"subject\":\"z\",\"site\":1,"
	"\"reads\":[\"d\"],\"stores\":[\"z_ptr\",\"x_ptr\"]},"
	"{\"slot\":3,\"rule\":\"inf\",\"statement\":0,\"subject\":\"z\",\"site\":1},"
	"{\"slot\":4,\"rule\":\"nan_mem\",\"statement\":0,\"subject\":\"tl.load(x_ptr)\","
	"\"cands\":[\"x_ptr\"]},"
	"{\"slot\":5,\"rule\":\"inf_mem\",\"statement\":0,\"subject\":\"tl.load(x_ptr)\"},"
	"{\"slot\":6,\"rule\":\"division_by_zero\",\"statement\":0,\"subject\":\"d\"},"
	"{\"slot\":7,\"rule\":\"division_by_tiny\",\"statement\":0,\"subject\":\"d\"},"
	"{\"slot\":8,\"rule\":\"sqrt_negative\",\"statement\":0,\"subject\":\"q\"},"
	"{\"slot\":9,\"rule\":\"log_negative\",\"statement\":0,\"subject\":\"q\"},"
	"{\"slot\":10,\"rule\":\"cast_overflow\",\"statement\":0,\"subject\":\"r\","
	"\"target_dtype\":\"float16\"},"
	"{\"slot\":11,\"rule\":\"cast_flush\",\"statement\":0,\"subject\":\"r\","
	"\"target_dtype\":\"bfloat16\",\"loop\":{\"var\":\"k\",\"line\":6}},"
	"{\"slot\":12,\"rule\":\"cast_subnormal\",\"statement\":0,\"subject\":\"r\","
	"\"target_dtype\":\"float8e4nv\"}]}",
	/* 3: accesses of every form, a helper's atomic with two candidates, a host descriptor
	 * (params a, h, p) */
	"{\"version\":1,\"kernel\":\"k6\",\"frames\":[{\"id\":1,\"function\":\"h\","
	"\"parent\":0,\"call\":{\"line\":5,\"source\":\"h(p, a)\"}}],\"statements\":["
	"{\"id\":0,\"line\":3,\"source\":\"t = tl.load(bp)\"},"
	"{\"id\":1,\"line\":2,\"source\":\"d = tl.make_tensor_descriptor(a, ...)\"},"
	"{\"id\":2,\"line\":4,\"source\":\"u = hd.load([0, 0])\"},"
	"{\"id\":3,\"line\":5,\"source\":\"h(p, a)\"},"
	"{\"id\":4,\"line\":9,\"frame\":1,\"source\":\"tl.atomic_add(q + o, 1)\"}],"
	"\"sites\":["
	"{\"id\":1,\"statement\":0,\"kind\":\"load\",\"name\":\"bp\",\"form\":\"block_pointer\"},"
	"{\"id\":2,\"statement\":1,\"kind\":\"descriptor\",\"name\":\"a\","
	"\"form\":\"tensor_descriptor\"},"
	"{\"id\":3,\"statement\":2,\"kind\":\"load\",\"name\":\"hd\",\"form\":\"tensor_descriptor\","
	"\"desc_param\":\"h\"},"
	"{\"id\":4,\"statement\":4,\"kind\":\"atomic\",\"name\":\"q + o\",\"op\":\"add\"}],"
	"\"params\":[\"a\",\"h\",\"p\"],\"check_slots\":["
	"{\"slot\":0,\"rule\":\"bounds\",\"statement\":0,\"subject\":\"bp\",\"site\":1,"
	"\"cands\":[\"a\"],\"form\":\"block_pointer\",\"suppressed\":true},"
	"{\"slot\":1,\"rule\":\"descriptor_extent\",\"statement\":1,\"subject\":\"a\","
	"\"site\":2,\"cands\":[\"a\"]},"
	"{\"slot\":2,\"rule\":\"bounds\",\"statement\":2,\"subject\":\"hd\",\"site\":3,"
	"\"cands\":[\"h\"]},"
	"{\"slot\":3,\"rule\":\"bounds\",\"statement\":4,\"subject\":\"q + o\",\"site\":4,"
	"\"access\":\"atomic\",\"op\":\"add\",\"cands\":[\"p\",\"a\"],\"suppressed\":true}]}",
};

/*
 * The model's invariants of every finding. With a check area the decoder validates what the
 * format says it does (docs/formats/record-format.md, "Check area"), not every relation between
 * a slot's words (its first program and the lowest one listed, its fired count and the list,
 * word 12 and a full list), so only what follows from the former is checked here.
 */
static void check_findings(const struct fp_dbg_run *run, const struct fp_dbg_findings *fs)
{
	const struct fp_dbg_run_info *in = fp_dbg_run_info(run);
	size_t i, j;

	for (i = 0; i < fp_dbg_findings_count(fs); i++) {
		const struct fp_dbg_finding *f = fp_dbg_findings_at(fs, i);

		CHECK(f->kind >= FP_DBG_FINDING_OUT_OF_BOUNDS &&
		      f->kind <= FP_DBG_FINDING_DESCRIPTOR_EXTENT);
		CHECK(f->statement < fp_dbg_run_statement_count(run));
		CHECK(f->site == UINT32_MAX || f->site < fp_dbg_run_site_count(run));
		if (f->site != UINT32_MAX)
			CHECK(fp_dbg_run_site(run, f->site)->statement == f->statement);
		CHECK(f->program < in->programs);
		CHECK(f->execution == FP_DBG_EXECUTION_UNKNOWN ||
		      f->execution < in->slots_per_program);
		CHECK(f->nprograms <= FP_DBG_FINDING_MAX_PROGRAMS);
		/* only a host descriptor's finding (checked at launch) lists no program */
		CHECK(f->nprograms >= 1 || f->kind == FP_DBG_FINDING_DESCRIPTOR_EXTENT);
		CHECK(f->program_count >= f->nprograms && f->instance_count >= 1);
		for (j = 0; j < f->nprograms; j++) {
			CHECK(f->programs[j] < in->programs);
			if (j)
				CHECK(f->programs[j - 1] < f->programs[j]);
		}
		CHECK(f->message && f->message[0] && f->subject);
		if (i) {
			const struct fp_dbg_finding *p = fp_dbg_findings_at(fs, i - 1);

			CHECK(p->kind < f->kind ||
			      (p->kind == f->kind && p->statement <= f->statement));
		}
		if (f->kind == FP_DBG_FINDING_OUT_OF_BOUNDS ||
		    f->kind == FP_DBG_FINDING_DESCRIPTOR_EXTENT) {
			CHECK(f->param && f->where != FP_DBG_OOB_NONE);
			CHECK(f->view_lo <= f->view_hi && f->storage_lo <= f->storage_hi);
			CHECK(f->where != FP_DBG_OOB_OTHER_STORAGE || f->other_param);
			CHECK(f->suppressed <= f->lanes_out);
		}
		if (f->kind != FP_DBG_FINDING_NAN_ORIGIN && f->kind != FP_DBG_FINDING_INF_ORIGIN)
			CHECK(!f->descendants && !f->from_memory);
		if (f->from_memory)
			CHECK(!f->descendants);
		/* the loads' parameters travel with a from-memory finding, and only with one */
		CHECK(f->from_memory ? (f->ncands == 0) == (f->cands == NULL) : !f->ncands);
		if (f->kind == FP_DBG_FINDING_DESCRIPTOR_EXTENT)
			CHECK(!f->suppressed); /* an extent is not an access: nothing to suppress */
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
	sites = site_tables[data[0] & 3];
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
