/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Debugger's report driver: the table of report writers (one entry per format, each
 * implemented in its own report-<format>.c), fp_dbg_write_format() for one format to any
 * stream, and fp_dbg_report() / fp_dbg_write_reports(), which parse the launch JSON once
 * (launch.c), run the findings analyses on it (fp_dbg_launch_findings()), and hand both to every
 * report the launch asks for, written into its output directory (each file under a temporary
 * name and renamed into place), then the level-2 artifacts, which it refuses with FP_EOVERFLOW
 * for a run that overflowed. Layout and contents of each format are the writers' business, not
 * this file's; no writer parses the launch or runs an analysis.
 */
#include "fp-setup.h"

#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <flagprism/debug-summary.h>
#include <flagprism/outfile.h>

#include "debug/report-internal.h"

static bool want_raw(const struct fp_dbg_launch *l)
{
	return l->export_raw_records;
}

/* A sanitize run reports findings only: its op log would describe instrumentation of no use. */
static bool want_op_log(const struct fp_dbg_launch *l)
{
	return !l->findings_only;
}

static const struct fp__dbg_writer writers[] = {
	{"txt", ".txt", fp__dbg_write_txt, NULL, offsetof(struct fp_dbg_outputs, txt)},
	{"json", ".json", fp__dbg_write_json, NULL, offsetof(struct fp_dbg_outputs, json)},
	{"op_log_txt", "_op_log.txt", fp__dbg_write_op_log_txt, want_op_log,
	 offsetof(struct fp_dbg_outputs, op_log_txt)},
	{"op_log_json", "_op_log.json", fp__dbg_write_op_log_json, want_op_log,
	 offsetof(struct fp_dbg_outputs, op_log_json)},
	{"raw", "_raw_records.txt", fp__dbg_write_raw, want_raw,
	 offsetof(struct fp_dbg_outputs, raw)},
};

void fp_dbg_outputs_init(struct fp_dbg_outputs *out)
{
	memset(out, 0, sizeof(*out));
}

void fp_dbg_outputs_release(struct fp_dbg_outputs *out)
{
	if (!out)
		return;
	fp_free(out->txt);
	fp_free(out->json);
	fp_free(out->op_log_txt);
	fp_free(out->op_log_json);
	fp_free(out->raw);
	fp_free(out->artifacts_dir);
	fp_free(out->tensor_index);
	fp_dbg_outputs_init(out);
}

static void wctx_init(struct fp__dbg_wctx *c, const struct fp_dbg_run *run,
		      const struct fp_dbg_launch *l, const struct fp_dbg_findings *fs,
		      struct fp_diag *diag)
{
	const struct fp_dbg_run_info *in = fp_dbg_run_info(run);

	c->run = run;
	c->info = in;
	c->launch = l;
	c->findings = fs;
	c->diag = diag;
	c->want_artifacts = in->level >= 2 || in->addr_level >= 2 || in->dump_count ||
			    (in->flags & FP_DBG_FLAG_DUMP_ARENA);
	c->link_artifacts = c->want_artifacts && in->complete;
}

static const struct fp__dbg_writer *find_writer(const char *name)
{
	size_t i;

	for (i = 0; i < FP_ARRAY_SIZE(writers); i++)
		if (!strcmp(writers[i].name, name))
			return &writers[i];
	return NULL;
}

int fp_dbg_write_format(const struct fp_dbg_run *run, const struct fp_dbg_launch *launch,
			const struct fp_dbg_findings *findings, const char *format, FILE *f,
			struct fp_diag *diag)
{
	const struct fp__dbg_writer *wr;
	struct fp__dbg_wctx c;
	int st;

	if (!run || !launch || !format || !f)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_dbg_write_format: NULL argument");
	wr = find_writer(format);
	if (!wr)
		return fp_diag_set(diag, FP_ENOENT, 0,
				   "unknown report format \"%s\" (txt, json, op_log_txt, "
				   "op_log_json, raw)",
				   format);
	wctx_init(&c, run, launch, findings, diag);
	st = wr->write(&c, f);
	if (!st && ferror(f))
		st = fp_diag_set(diag, FP_EIO, 0, "write error in the %s report", format);
	return st;
}

static char *join(const char *dir, const char *stem, const char *suffix)
{
	size_t n = strlen(dir) + strlen(stem) + strlen(suffix) + 2;
	char *p = fp_malloc(n);

	if (p)
		snprintf(p, n, "%s/%s%s", dir, stem, suffix);
	return p;
}

static int make_dir(const char *path, struct fp_diag *diag)
{
	struct stat sb;

	if (mkdir(path, 0777) == 0)
		return FP_OK;
	if (errno == EEXIST && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		return FP_OK;
	return fp_diag_set(diag, FP_EIO, 0, "cannot create directory %s: %s", path,
			   strerror(errno));
}

/* Write one report to `path` through fp_outfile (a temporary file renamed into place). */
static int write_file(const struct fp__dbg_writer *wr, const struct fp__dbg_wctx *c,
		      const char *path)
{
	struct fp_outfile of;
	int st;

	st = fp_outfile_open(&of, path, 0, c->diag);
	if (st)
		return st;
	st = wr->write(c, of.f);
	if (!st && ferror(of.f))
		st = fp_diag_set(c->diag, FP_EIO, 0, "%s: cannot write", path);
	return fp_outfile_finish(&of, st, c->diag);
}

/* FP_EOVERFLOW with a message that names what overflowed. */
static int refuse_artifacts(const struct fp__dbg_wctx *c)
{
	const struct fp_dbg_run_info *in = c->info;
	char rec[96] = "", dump[96] = "";

	if (in->overflow_count)
		snprintf(rec, sizeof(rec),
			 "%" PRIu64 " records did not fit (record_capacity=%" PRIu64 ")",
			 in->overflow_count, in->slots_per_program);
	if (in->dump_overflow)
		snprintf(dump, sizeof(dump),
			 "%" PRIu64 " dump words did not fit (dump capacity=%" PRIu64 " words)",
			 in->dump_overflow, in->dump_capacity);
	return fp_diag_set(c->diag, FP_EOVERFLOW, 0,
			   "level-2 artifacts refused: %s%s%s; the summary reports were written "
			   "and marked incomplete",
			   rec, rec[0] && dump[0] ? " and " : "", dump);
}

/* One report file written by its own thread (big runs) or in turn. */
struct wjob {
	const struct fp__dbg_writer *wr;
	struct fp__dbg_wctx c; /* a copy with its own diagnostic */
	struct fp_diag diag;
	char *path;
	int st;
	pthread_t thread;
	bool threaded;
};

static void *wjob_run(void *arg)
{
	struct wjob *j = arg;

	j->st = write_file(j->wr, &j->c, j->path);
	return NULL;
}

/*
 * Runs with more records than this write their report files in parallel threads, one per
 * format (the writers only read the run and the launch): the 64M-element add's text, JSON and
 * op log take about half the time together that they take one after the other.
 */
#define FP__PARALLEL_RECORDS 65536u

static int write_reports(const struct fp__dbg_wctx *c, struct fp_dbg_outputs *out)
{
	const struct fp_dbg_launch *l = c->launch;
	struct wjob jobs[FP_ARRAY_SIZE(writers)];
	bool parallel = c->info->record_count >= FP__PARALLEL_RECORDS;
	size_t i, n = 0;
	int st = FP_OK;

	memset(jobs, 0, sizeof(jobs));
	for (i = 0; i < FP_ARRAY_SIZE(writers); i++) {
		const struct fp__dbg_writer *wr = &writers[i];
		struct wjob *j;

		if (wr->wanted && !wr->wanted(l))
			continue;
		j = &jobs[n++];
		j->wr = wr;
		j->c = *c;
		j->c.diag = &j->diag;
		fp_diag_clear(&j->diag);
		j->path = join(l->output_dir, l->stem, wr->suffix);
		if (!j->path) {
			st = fp_diag_set(c->diag, FP_ENOMEM, 0, "out of memory");
			break;
		}
		if (parallel && n > 1 && pthread_create(&j->thread, NULL, wjob_run, j) == 0)
			j->threaded = true;
	}
	/* the first writer runs here, the others in their threads (or here, one after another) */
	for (i = 0; i < n; i++) {
		struct wjob *j = &jobs[i];

		if (!j->path)
			continue;
		if (j->threaded)
			pthread_join(j->thread, NULL);
		else if (!st)
			wjob_run(j);
		else
			j->st = st;
	}
	for (i = 0; i < n; i++) {
		struct wjob *j = &jobs[i];

		if (!st && j->st) {
			st = j->st;
			if (c->diag)
				*c->diag = j->diag;
		}
		if (!j->st && j->path && !st) {
			*(char **)((char *)out + j->wr->out_offset) = j->path;
			j->path = NULL;
		}
	}
	for (i = 0; i < n; i++)
		fp_free(jobs[i].path);
	return st;
}

static int write_all(const struct fp__dbg_wctx *c, struct fp_dbg_outputs *out)
{
	const struct fp_dbg_launch *l = c->launch;
	int st;

	if ((st = make_dir(l->output_dir, c->diag)))
		return st;
	if ((st = write_reports(c, out)))
		return st;
	if (!c->want_artifacts)
		return FP_OK;
	if (!c->info->complete)
		return refuse_artifacts(c);
	out->artifacts_dir = join(l->output_dir, l->stem, "_artifacts");
	if (!out->artifacts_dir)
		return fp_diag_set(c->diag, FP_ENOMEM, 0, "out of memory");
	if ((st = make_dir(out->artifacts_dir, c->diag)))
		goto fail_dir;
	out->tensor_index = join(out->artifacts_dir, "tensor_index", ".json");
	if (!out->tensor_index) {
		st = fp_diag_set(c->diag, FP_ENOMEM, 0, "out of memory");
		goto fail_dir;
	}
	if ((st = fp__dbg_write_artifacts(c, out->artifacts_dir, &out->artifact_count)))
		goto fail_dir;
	return FP_OK;

fail_dir:
	fp_free(out->tensor_index);
	out->tensor_index = NULL;
	fp_free(out->artifacts_dir);
	out->artifacts_dir = NULL;
	return st;
}

int fp_dbg_report(const struct fp_dbg_run *run, const char *launch_json, size_t len,
		  struct fp_dbg_summary *summary, uint64_t launch_index, unsigned flags,
		  struct fp_dbg_outputs *out, size_t *nfindings, struct fp_diag *diag)
{
	struct fp_dbg_launch *l = NULL;
	struct fp_dbg_findings *fs = NULL;
	struct fp__dbg_wctx c;
	size_t n, folded[2];
	int st, st2;

	if (!run || !launch_json || !out)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_dbg_report: NULL argument");
	fp_diag_clear(diag);
	out->overflow_count = fp_dbg_run_info(run)->overflow_count;
	out->dump_overflow = fp_dbg_run_info(run)->dump_overflow;
	out->dump_cursor = fp_dbg_run_info(run)->dump_cursor;
	out->complete = fp_dbg_run_info(run)->complete;
	/* the launch JSON parsed once; the analyses run on it; the writers get both */
	if ((st = fp_dbg_launch_parse(run, launch_json, len, &l, diag)))
		return st;
	if ((st = fp_dbg_launch_findings(run, l, &fs, diag))) {
		fp_dbg_launch_free(l);
		return st;
	}
	if (l->error)
		out->complete = false;
	/* NaN/Inf this launch loaded from memory an earlier launch wrote one into are that
	 * launch's origin's descendants: counted there, not findings of this launch */
	fp__dbg_summary_fold(summary, run, fs, launch_index, folded);
	n = fp_dbg_findings_count(fs);
	if (nfindings)
		*nfindings = n;
	st = FP_OK;
	if (!(flags & FP_DBG_REPORT_NO_FILES) &&
	    (!(flags & FP_DBG_REPORT_FINDINGS_ONLY) || !out->complete || n > 0)) {
		wctx_init(&c, run, l, fs, diag);
		st = write_all(&c, out);
	}
	/* the findings count even when a report could not be written */
	st2 = fp__dbg_summary_add_launch_findings(summary, run, l, fs, launch_index, out->txt,
						  folded);
	fp_dbg_findings_free(fs);
	fp_dbg_launch_free(l);
	if (!st && st2)
		st = fp_diag_set(diag, st2, 0, "summary: %s", fp_strerror(st2));
	return st;
}

int fp_dbg_write_reports(const struct fp_dbg_run *run, const char *launch_json, size_t len,
			 struct fp_dbg_outputs *out, struct fp_diag *diag)
{
	if (!run || !launch_json || !out)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_dbg_write_reports: NULL argument");
	return fp_dbg_report(run, launch_json, len, NULL, 0, 0, out, NULL, diag);
}
