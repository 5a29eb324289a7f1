/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the Debugger's record buffer decoder and report writers. The first input
 * byte picks one of a few fixed site tables (bits 0-1, and bit 7 for the tables with a check
 * area: `params` and `check_slots`) and what to write (bits 2-4); the rest is the record buffer.
 * Decoding must succeed or fail cleanly (FP_EFORMAT/FP_EVERSION with the offset inside the
 * buffer, or FP_ELIMIT/FP_ENOMEM). A decoded run is checked against the model's invariants
 * (record order, counts, dumps in range; the check slots and tensor table as the format says the
 * decoder validates them) and every report format, findings included, is written to /dev/null;
 * small runs also go through fp_dbg_write_reports() into a scratch directory, which exercises
 * the level-2 artifact writer. A violated invariant aborts.
 */
#define _GNU_SOURCE 1
#include <dirent.h>
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

#define CHECK(cond)                                                                               \
	do {                                                                                      \
		if (!(cond)) {                                                                    \
			fprintf(stderr, "fuzz-debug-decode: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                        \
			abort();                                                                  \
		}                                                                                 \
	} while (0)

static const char *const site_tables[8] = {
	/* 0: add_kernel: load + value, value reading it, store */
	"{\"version\":1,\"kernel\":\"add_kernel\",\"file\":\"/u/add.py\",\"level\":1,"
	"\"addr_level\":1,\"statements\":["
	"{\"id\":0,\"line\":12,\"col\":4,\"source\":\"x = tl.load(x_ptr + offs)\"},"
	"{\"id\":2,\"line\":15,\"col\":4,\"source\":\"tl.store(y_ptr + offs, y)\"},"
	"{\"id\":1,\"line\":14,\"col\":4,\"source\":\"y = x * 2\"}],\"sites\":["
	"{\"id\":1,\"statement\":0,\"kind\":\"load\",\"name\":\"x_ptr + offs\"},"
	"{\"id\":2,\"statement\":0,\"kind\":\"value\",\"name\":\"x\"},"
	"{\"id\":3,\"statement\":1,\"kind\":\"value\",\"name\":\"y\",\"reads\":[\"x\"]},"
	"{\"id\":4,\"statement\":2,\"kind\":\"store\",\"name\":\"y_ptr + offs\","
	"\"reads\":[\"y\",\"offs\"]}]}",
	/* 1: one value site */
	"{\"version\":1,\"kernel\":\"k\",\"statements\":[{\"id\":0,\"line\":3,\"source\":\"a = b\"}],"
	"\"sites\":[{\"id\":1,\"statement\":0,\"kind\":\"value\",\"name\":\"a\"}]}",
	/* 2: level 2, every kind in one multi-line statement inside a loop */
	"{\"version\":1,\"kernel\":\"k2\",\"level\":2,\"addr_level\":2,\"statements\":["
	"{\"id\":7,\"line\":5,\"end_line\":6,\"col\":8,\"loop_depth\":1,"
	"\"source\":\"acc += tl.load(p,\\n mask=m)\"}],\"sites\":["
	"{\"id\":1,\"statement\":7,\"kind\":\"load\",\"name\":\"p\"},"
	"{\"id\":2,\"statement\":7,\"kind\":\"value\",\"name\":\"acc\",\"reads\":[\"acc\",\"m\"]},"
	"{\"id\":3,\"statement\":7,\"kind\":\"store\",\"name\":\"q\"}]}",
	/* 3: no sites at all */
	"{\"version\":1,\"statements\":[],\"sites\":[]}",
	/* 4: table 0 with its check area: 4 parameters, 6 slots (bounds in a loop, nan_mem, nan
	 * and inf of a value reading it, the store's bounds, a divisor without a site) */
	"{\"version\":1,\"kernel\":\"add_kernel\",\"file\":\"/u/add.py\",\"level\":1,"
	"\"addr_level\":1,\"statements\":["
	"{\"id\":0,\"line\":12,\"col\":4,\"source\":\"x = tl.load(x_ptr + offs)\"},"
	"{\"id\":2,\"line\":15,\"col\":4,\"source\":\"tl.store(y_ptr + offs, y)\"},"
	"{\"id\":1,\"line\":14,\"col\":4,\"source\":\"y = x * 2\"}],\"sites\":["
	"{\"id\":1,\"statement\":0,\"kind\":\"load\",\"name\":\"x_ptr + offs\"},"
	"{\"id\":2,\"statement\":0,\"kind\":\"value\",\"name\":\"x\"},"
	"{\"id\":3,\"statement\":1,\"kind\":\"value\",\"name\":\"y\",\"reads\":[\"x\"]},"
	"{\"id\":4,\"statement\":2,\"kind\":\"store\",\"name\":\"y_ptr + offs\","
	"\"reads\":[\"y\",\"offs\"]}],\"params\":[\"x_ptr\",\"y_ptr\",\"n\",\"BLOCK\"],"
	"\"check_slots\":["
	"{\"slot\":0,\"rule\":\"bounds\",\"statement\":0,\"subject\":\"x_ptr + offs\","
	"\"site\":1,\"cands\":[\"x_ptr\"],\"loop\":{\"var\":\"i\",\"line\":11}},"
	"{\"slot\":1,\"rule\":\"nan_mem\",\"statement\":0,\"subject\":\"x\",\"site\":2},"
	"{\"slot\":2,\"rule\":\"nan\",\"statement\":1,\"subject\":\"y\",\"site\":3,"
	"\"reads\":[\"x\"]},"
	"{\"slot\":3,\"rule\":\"bounds\",\"statement\":2,\"subject\":\"y_ptr + offs\","
	"\"site\":4,\"access\":\"store\",\"cands\":[\"y_ptr\"]},"
	"{\"slot\":4,\"rule\":\"inf\",\"statement\":1,\"subject\":\"y\",\"site\":3,"
	"\"reads\":[\"x\"]},"
	"{\"slot\":5,\"rule\":\"division_by_zero\",\"statement\":1,\"subject\":\"x\"}]}",
	/* 5: check mode, every rule once on one statement (no records), 3 parameters */
	"{\"version\":1,\"kernel\":\"k5\",\"statements\":["
	"{\"id\":0,\"line\":7,\"source\":\"z = tl.sqrt(tl.load(x_ptr) / d).to(tl.float16)\"}],"
	"\"sites\":[{\"id\":1,\"statement\":0,\"kind\":\"value\",\"name\":\"z\"}],"
	"\"params\":[\"x_ptr\",\"d\",\"z_ptr\"],\"check_slots\":["
	"{\"slot\":0,\"rule\":\"bounds\",\"statement\":0,\"subject\":\"x_ptr\"},"
	"{\"slot\":1,\"rule\":\"descriptor_extent\",\"statement\":0,\"subject\":\"x_ptr\","
	"\"cands\":[\"x_ptr\",\"z_ptr\"]},"
	"{\"slot\":2,\"rule\":\"nan\",\"statement\":0,\"subject\":\"z\",\"site\":1,"
	"\"reads\":[\"d\"]},"
	"{\"slot\":3,\"rule\":\"inf\",\"statement\":0,\"subject\":\"z\",\"site\":1},"
	"{\"slot\":4,\"rule\":\"nan_mem\",\"statement\":0,\"subject\":\"tl.load(x_ptr)\"},"
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
	/* 6: accesses of every form, a helper's atomic with two candidates, a host descriptor */
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
	"\"cands\":[\"a\"],\"form\":\"block_pointer\"},"
	"{\"slot\":1,\"rule\":\"descriptor_extent\",\"statement\":1,\"subject\":\"a\","
	"\"site\":2,\"cands\":[\"a\"]},"
	"{\"slot\":2,\"rule\":\"bounds\",\"statement\":2,\"subject\":\"hd\",\"site\":3,"
	"\"cands\":[\"h\"]},"
	"{\"slot\":3,\"rule\":\"bounds\",\"statement\":4,\"subject\":\"q + o\",\"site\":4,"
	"\"access\":\"atomic\",\"op\":\"add\",\"cands\":[\"p\",\"a\"]}]}",
	/* 7: parameters and no check slot (a check area of a tensor table alone) */
	"{\"version\":1,\"statements\":[],\"sites\":[],\"params\":[\"a\",\"b\"]}",
};

/* A little TTIR whose locations point at the twin and at the record helpers (JSON-escaped). */
static const char ttir_json[] =
	"\"#loc = loc(\\\"/cache/twin.py\\\":10:0)\\nmodule {\\n  tt.func public @k(%x: "
	"!tt.ptr<f32> loc(#loc)) {\\n    %a = tt.make_range {end = 4 : i32, start = 0 : i32} : "
	"tensor<4xi32> loc(#loc1)\\n    %b = arith.addi %a, %a : tensor<4xi32> loc(#loc3)\\n    "
	"tt.return loc(#loc)\\n  } loc(#loc)\\n} loc(#loc)\\n#loc1 = loc(\\\"/cache/twin.py\\\":12:4)"
	"\\n#loc2 = loc(\\\"/x/flagprism/_records.py\\\":9:1)\\n#loc3 = loc(callsite(#loc2 at "
	"#loc1))\\n\"";

static const char *const formats[] = {"txt", "json", "op_log_txt", "op_log_json", "raw"};

static char scratch[64];

/* Empty the artifacts directory, so a long run does not pile up files. */
static void clean_dir(const char *dir)
{
	char path[512];
	struct dirent *e;
	DIR *dp = opendir(dir);

	if (!dp)
		return;
	while ((e = readdir(dp))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		remove(path);
	}
	closedir(dp);
}

/* At exit: remove the scratch directory and what the reports left in it. */
static void remove_scratch(void)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/f_artifacts", scratch);
	clean_dir(path);
	remove(path);
	clean_dir(scratch);
	remove(scratch);
}

/* What the decoder promises of a check area (docs/formats/record-format.md, "Check area"). */
static void check_area(const struct fp_dbg_run *run)
{
	const struct fp_dbg_run_info *in = fp_dbg_run_info(run);
	const struct fp_dbg_table_entry *tab;
	const struct fp_dbg_check_slot *k;
	const char *const *names;
	size_t np = fp_dbg_run_params(run, &names, &tab), nk, i, j;

	k = fp_dbg_run_checks(run, &nk);
	if (!in->has_checks) {
		CHECK(in->records_at == FP_DBG_HEADER_WORDS && !in->suppress && !tab && !nk);
		return;
	}
	CHECK(in->flags & FP_DBG_FLAG_CHECKS);
	CHECK(in->records_at == 16 + FP_DBG_ENTRY_WORDS * np + FP_DBG_SLOT_WORDS * nk);
	CHECK(!np || tab);
	for (i = 0; i < np; i++)
		CHECK(names[i] && tab[i].view_lo <= tab[i].view_hi &&
		      tab[i].storage_lo <= tab[i].storage_hi);
	for (i = 0; i < nk; i++) {
		CHECK(k[i].rule != FP_DBG_RULE_UNKNOWN);
		CHECK(strcmp(fp_dbg_rule_name(k[i].rule), "unknown"));
		CHECK(k[i].statement < fp_dbg_run_statement_count(run));
		CHECK(k[i].site == UINT32_MAX || k[i].site < fp_dbg_run_site_count(run));
		CHECK(k[i].nprograms <= FP_DBG_SLOT_PROGRAMS);
		if (k[i].fired)
			CHECK(k[i].has_first && k[i].nprograms >= 1);
		else
			CHECK(!k[i].count && !k[i].has_range && !k[i].has_first &&
			      !k[i].programs_more);
		if (k[i].has_first)
			CHECK(k[i].first_program < in->programs && k[i].first_lane < (1ull << 31));
		if (k[i].has_range)
			CHECK(k[i].lo <= k[i].hi);
		for (j = 0; j < k[i].nprograms; j++) {
			CHECK(k[i].programs[j] < in->programs);
			if (j)
				CHECK(k[i].programs[j - 1] < k[i].programs[j]);
		}
	}
}

static void check_run(const struct fp_dbg_run *run)
{
	const struct fp_dbg_run_info *in = fp_dbg_run_info(run);
	size_t ns = fp_dbg_run_site_count(run), i, j, n, total = 0, dumps = 0, nw;

	for (i = 0; i + 1 < fp_dbg_run_statement_count(run); i++)
		CHECK(fp_dbg_run_statement(run, i)->line <= fp_dbg_run_statement(run, i + 1)->line);
	for (i = 0; i < ns; i++) {
		const struct fp_dbg_site *s = fp_dbg_run_site(run, i);
		const struct fp_dbg_record *r = fp_dbg_run_records(run, i, &n);

		CHECK(s->id == i + 1 && s->nrecords == n);
		for (j = 0; j < n; j++) {
			const uint64_t *dump = fp_dbg_run_dump(run, &r[j], &nw);

			CHECK(r[j].site == i && r[j].numel == s->numel);
			CHECK(r[j].program < in->programs && r[j].slot < in->slots_per_program);
			CHECK(fp_dbg_record_kind(&r[j]) == s->kind);
			if (j)
				CHECK(r[j - 1].program < r[j].program ||
				      (r[j - 1].program == r[j].program &&
				       r[j - 1].execution + 1 == r[j].execution));
			CHECK(fp_dbg_run_find(run, i, r[j].program, r[j].execution) == &r[j]);
			if (fp_dbg_record_dump_offset(&r[j]) != FP_DBG_NO_DUMP) {
				CHECK(dump && nw == r[j].numel);
				dumps++;
			}
		}
		total += n;
	}
	CHECK(total == in->record_count && dumps == in->dump_count);
	check_area(run);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fp_dbg_run *run = NULL;
	struct fp_dbg_findings *fs = NULL;
	struct fp_dbg_launch *launch = NULL;
	struct fp_diag d;
	const char *sites;
	char lj[2048];
	unsigned mode;
	size_t i;
	FILE *null;
	int st;

	if (size < 1)
		return 0;
	sites = site_tables[(data[0] & 3) | ((data[0] >> 5) & 4)];
	mode = (data[0] >> 2) & 7;
	st = fp_dbg_decode(data + 1, size - 1, sites, strlen(sites), &run, &d);
	if (st) {
		CHECK(!run);
		CHECK(st == FP_EFORMAT || st == FP_EVERSION || st == FP_ELIMIT || st == FP_ENOMEM);
		CHECK(d.status == st && memchr(d.msg, '\0', sizeof(d.msg)) && d.msg[0]);
		CHECK(d.offset <= size - 1);
		return 0;
	}
	check_run(run);
	if (fp_dbg_run_info(run)->programs == 0 || fp_dbg_run_info(run)->programs > UINT32_MAX)
		goto out;
	if (!scratch[0]) {
		snprintf(scratch, sizeof(scratch), "/tmp/fuzz-debug-decode-XXXXXX");
		CHECK(mkdtemp(scratch));
		atexit(remove_scratch);
	}
	snprintf(lj, sizeof(lj),
		 "{\"output_dir\":\"%s\",\"stem\":\"f\",\"grid\":[%" PRIu64
		 "],\"backend\":\"fuzz\","
		 "\"twin_file\":\"/cache/twin.py\",\"export_raw_records\":%s,\"ttir\":%s}",
		 scratch, fp_dbg_run_info(run)->programs, mode & 2 ? "true" : "false",
		 mode & 4 ? ttir_json : "null");
	st = fp_dbg_launch_parse(run, lj, strlen(lj), &launch, &d);
	CHECK(st == FP_OK);
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
	/* whole reports (and artifacts) on disk only for small runs: files are slow */
	if ((mode & 1) && fp_dbg_run_info(run)->record_count <= 32) {
		struct fp_dbg_outputs out;

		fp_dbg_outputs_init(&out);
		st = fp_dbg_write_reports(run, lj, strlen(lj), &out, &d);
		CHECK(st == FP_OK || st == FP_EOVERFLOW || st == FP_ENOMEM);
		CHECK(out.txt || st == FP_ENOMEM);
		if (out.artifacts_dir)
			clean_dir(out.artifacts_dir);
		fp_dbg_outputs_release(&out);
	}
	fp_dbg_launch_free(launch);
out:
	fp_dbg_run_free(run);
	return 0;
}
