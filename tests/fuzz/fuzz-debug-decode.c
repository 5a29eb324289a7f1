/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the Debugger's record buffer decoder and report writers. The first input
 * byte picks one of a few fixed site tables (low 2 bits) and what to write (the other bits); the
 * rest is the record buffer. Decoding must succeed or fail cleanly (FP_EFORMAT/FP_EVERSION with
 * the offset inside the buffer, or FP_ELIMIT/FP_ENOMEM). A decoded run is checked against the
 * model's invariants (record order, counts, dumps in range) and every report format is written
 * to /dev/null; small runs also go through fp_dbg_write_reports() into a scratch directory, which
 * exercises the level-2 artifact writer. A violated invariant aborts.
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

static const char *const site_tables[4] = {
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
	sites = site_tables[data[0] & 3];
	mode = data[0] >> 2;
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
