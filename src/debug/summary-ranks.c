/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Merging the Debugger's summaries of a program that ran as several processes: each process's
 * summary.json, as summary.c writes it, is read back, checked, and the processes are written
 * as one summary in the same schema, where every kernel and every finding carries the process
 * it happened in, totals are summed, and missing or incomplete processes are said, both as
 * JSON and as text. Two kinds of processes are merged: the ranks of a job
 * (fp_ranks_merge_summaries(), known by their "distributed" object) and the pytest-xdist
 * workers of a test session (known by their "worker" object; fp_dbg_summary_write_parts()
 * merges them under the controlling process's own summary, and fp_ranks_merge_summaries()
 * merges them when given them). Not here: writing one process's summary (summary.c) or
 * deciding findings.
 */
#include "fp-setup.h"

#include <errno.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <flagprism/debug-keys.h>
#include <flagprism/debug-summary.h>
#include <flagprism/json.h>
#include <flagprism/ranks.h>
#include <flagprism/strbuf.h>
#include <flagprism/version.h>

#include "core/core-internal.h"
#include "core/hashmap-internal.h"
#include "debug/report-internal.h"

#define SCHEMA "flagprism.debug.summary"
/* A summary lists at most 65,536 kernels and findings with short strings: far below this. */
#define MAX_SUMMARY_BYTES ((size_t)1 << 30)
#define MAX_COUNT_KEYS 32
/* A worker's id ("gw0") is short; longer ones are refused as not a worker's. */
#define MAX_WORKER_ID 64
/* What the text and the "missing" member name at most: a session has a few dozen workers. */
#define MAX_MISSING 64
/* The controlling process's own kernels and findings, when it launched any. */
#define CONTROLLER "controller"

static const struct fp_json_limits summary_limits = {MAX_SUMMARY_BYTES, 64, 0};

struct sin {
	const char *name;
	struct fp_json_doc *doc;
	const struct fp_json_value *root, *kernels, *findings;
	int64_t rank, world;
	bool complete;
	const char *host, *reason;
	bool has_exit;
	int64_t exit_status;
	const char *worker; /* the pytest-xdist worker's id, or NULL */
	int64_t wcount;     /* the session's workers (-1: unknown) */
};

/* Summed counters of one object ("totals", "dropped"): keys in first-seen order. */
struct counts {
	const char *key[MAX_COUNT_KEYS];
	uint64_t v[MAX_COUNT_KEYS];
	size_t n;
};

static int add_counts(struct counts *c, const struct sin *in, const char *member,
		      struct fp_diag *diag)
{
	const struct fp_json_value *o = fp_json_get(in->root, member);
	size_t i, k;

	if (!o)
		return FP_OK;
	if (fp_json_type(o) != FP_JSON_OBJECT)
		return fp__json_error(diag, FP_EFORMAT, in->name, in->doc, o,
				      "\"%s\" must be an object of counts", member);
	for (i = 0; i < fp_json_len(o); i++) {
		const char *key;
		const struct fp_json_value *v = fp_json_member(o, i, &key, NULL);
		uint64_t x;

		if (!fp_json_uint64(v, &x))
			return fp__json_error(diag, FP_EFORMAT, in->name, in->doc, v,
					      "\"%s\".\"%s\" must be a non-negative integer",
					      member, key);
		for (k = 0; k < c->n && strcmp(c->key[k], key); k++)
			;
		if (k == c->n) {
			if (c->n == MAX_COUNT_KEYS)
				continue; /* not ours: at most a few counters exist */
			c->key[c->n] = key;
			c->v[c->n++] = 0;
		}
		c->v[k] = x > UINT64_MAX - c->v[k] ? UINT64_MAX : c->v[k] + x;
	}
	return FP_OK;
}

static uint64_t count_of(const struct counts *c, const char *key)
{
	size_t k;

	for (k = 0; k < c->n; k++)
		if (!strcmp(c->key[k], key))
			return c->v[k];
	return 0;
}

/* Check one summary and pick out what the merge needs. */
static int read_one(struct sin *in, size_t pos, struct fp_diag *diag)
{
	const struct fp_json_value *r = in->root, *v, *d;
	const char *schema;
	int64_t x;
	bool b = true;
	size_t i;

	if (fp_json_type(r) != FP_JSON_OBJECT)
		return fp__json_error(diag, FP_EFORMAT, in->name, in->doc, r,
				      "expected a Debugger summary (a JSON object)");
	schema = fp_json_string(fp_json_get(r, "schema"), NULL);
	if (!schema || strcmp(schema, SCHEMA))
		return fp__json_error(diag, FP_EFORMAT, in->name, in->doc, r,
				      "not a Debugger summary (\"schema\" is not \"" SCHEMA "\")");
	v = fp_json_get(r, "version");
	if (!fp_json_int64(v, &x))
		return fp__json_error(diag, FP_EFORMAT, in->name, in->doc, v ? v : r,
				      "\"version\" must be an integer");
	if (x != 1)
		return fp__json_error(diag, FP_EVERSION, in->name, in->doc, v,
				      "summary version %" PRId64 " (this FlagPrism reads 1)", x);
	in->kernels = fp_json_get(r, "kernels");
	in->findings = fp_json_get(r, FP_DBG_KEY_SUMMARY_FINDINGS);
	if (fp_json_type(in->kernels) != FP_JSON_ARRAY ||
	    fp_json_type(in->findings) != FP_JSON_ARRAY)
		return fp__json_error(diag, FP_EFORMAT, in->name, in->doc, r,
				      "\"kernels\" and \"findings\" must be arrays");
	for (i = 0; i < fp_json_len(in->kernels); i++)
		if (fp_json_type(fp_json_at(in->kernels, i)) != FP_JSON_OBJECT)
			return fp__json_error(diag, FP_EFORMAT, in->name, in->doc,
					      fp_json_at(in->kernels, i),
					      "kernel %zu must be an object", i);
	for (i = 0; i < fp_json_len(in->findings); i++)
		if (fp_json_type(fp_json_at(in->findings, i)) != FP_JSON_OBJECT)
			return fp__json_error(diag, FP_EFORMAT, in->name, in->doc,
					      fp_json_at(in->findings, i),
					      "finding %zu must be an object", i);
	fp_json_bool(fp_json_get(r, "complete"), &b);
	in->complete = b;
	in->reason = fp_json_string(fp_json_get(r, "incomplete_reason"), NULL);
	in->has_exit = fp_json_int64(fp_json_get(r, "exit_status"), &in->exit_status);
	in->rank = -1;
	in->world = -1;
	d = fp_json_get(r, "distributed");
	if (d && fp_json_type(d) != FP_JSON_NULL) {
		if (fp_json_type(d) != FP_JSON_OBJECT)
			return fp__json_error(diag, FP_EFORMAT, in->name, in->doc, d,
					      "\"distributed\" must be an object or null");
		v = fp_json_get(d, "rank");
		if (!fp_json_int64(v, &in->rank) || in->rank < 0 || in->rank >= FP_RANKS_MAX)
			return fp__json_error(diag, FP_EFORMAT, in->name, in->doc, v ? v : d,
					      "\"distributed\".\"rank\" must be an integer "
					      "from 0 to %d",
					      FP_RANKS_MAX - 1);
		v = fp_json_get(d, "world_size");
		if (v && fp_json_type(v) != FP_JSON_NULL &&
		    (!fp_json_int64(v, &in->world) || in->world < 1 || in->world > FP_RANKS_MAX))
			return fp__json_error(diag, FP_EFORMAT, in->name, in->doc, v,
					      "\"distributed\".\"world_size\" must be an "
					      "integer from 1 to %d",
					      FP_RANKS_MAX);
		in->host = fp_json_string(fp_json_get(d, "host"), NULL);
	}
	if (in->rank < 0 && fp_ranks_of_path(in->name, &in->rank) != FP_OK)
		in->rank = (int64_t)pos;
	in->worker = NULL;
	in->wcount = -1;
	d = fp_json_get(r, "worker");
	if (d && fp_json_type(d) != FP_JSON_NULL) {
		size_t len = 0;

		if (fp_json_type(d) != FP_JSON_OBJECT)
			return fp__json_error(diag, FP_EFORMAT, in->name, in->doc, d,
					      "\"worker\" must be an object or null");
		v = fp_json_get(d, "id");
		in->worker = fp_json_string(v, &len);
		if (!in->worker || !len || len > MAX_WORKER_ID || strlen(in->worker) != len ||
		    !strcmp(in->worker, CONTROLLER))
			return fp__json_error(
				diag, FP_EFORMAT, in->name, in->doc, v ? v : d,
				"\"worker\".\"id\" must be a worker's name of 1 to %d "
				"bytes (\"gw0\")",
				MAX_WORKER_ID);
		v = fp_json_get(d, "count");
		if (v && fp_json_type(v) != FP_JSON_NULL &&
		    (!fp_json_int64(v, &in->wcount) || in->wcount < 1 || in->wcount > FP_RANKS_MAX))
			return fp__json_error(
				diag, FP_EFORMAT, in->name, in->doc, v,
				"\"worker\".\"count\" must be an integer from 1 to %d",
				FP_RANKS_MAX);
	}
	return FP_OK;
}

/*
 * The kernels (or findings) of a test session's parts folded into one entry each, as one
 * process's summary would have them: a kernel by (name, source file), a finding by (kernel,
 * kind, file, line, subject). Each group chains its occurrences, one per part, in part order.
 */
struct occ {
	const struct fp_json_value *obj;
	size_t part; /* k of part(m, k) */
	size_t next; /* the group's next occurrence, NONE at its end */
};

struct group {
	size_t head, tail;
	uint64_t findings; /* kernels: the finding groups of this kernel */
};

struct fold {
	struct occ *occ;
	size_t nocc;
	struct group *g;
	size_t ng;
	struct fp_hashmap ix; /* hash of the key (probed on) -> group */
};

#define NONE SIZE_MAX

struct merged {
	struct sin *in;
	size_t n;
	size_t *order; /* by rank, or by worker */
	int64_t *ranks;
	int64_t world;
	int64_t missing[MAX_MISSING];
	size_t nmissing;
	char missing_text[256], ranks_text[256];
	struct counts totals, dropped;
	size_t incomplete;
	/* pytest-xdist workers' parts (every input has a "worker") rather than ranks */
	bool workers;
	int64_t wcount; /* the session's workers (0: unknown) */
	/* the controlling process's summary (fp_dbg_summary_write_parts()), or NULL: its
	 * settings are the merged summary's, its own kernels and findings are listed too */
	struct sin *base;
	char **names; /* the inputs' paths, owned (merge_files()) */
	size_t nnames;
	struct fold kernels, findings; /* the parts' folded (workers only) */
};

/* Object `obj` with its input's tag first: "rank" (an integer) or, where `worker` is not NULL,
 * "worker" (a string); a member of the same name in `obj` is replaced. */
static int write_tagged(struct fp_jsonw *w, const struct fp_json_value *obj, int64_t rank,
			const char *worker)
{
	const char *tag = worker ? "worker" : "rank";
	size_t i, tl = strlen(tag);
	int rc = FP_OK;

	fp_jsonw_object_begin(w);
	if (worker)
		fp_jsonw_kv_string(w, tag, worker);
	else
		fp_jsonw_kv_int(w, tag, rank);
	for (i = 0; !rc && i < fp_json_len(obj); i++) {
		const char *key;
		size_t kl;
		const struct fp_json_value *v = fp_json_member(obj, i, &key, &kl);

		if (kl == tl && !memcmp(key, tag, tl))
			continue;
		fp_jsonw_key_n(w, key, kl);
		rc = fp__jsonw_value(w, v);
	}
	return rc ? rc : fp_jsonw_object_end(w);
}

static int write_with_rank(struct fp_jsonw *w, const struct fp_json_value *obj, int64_t rank)
{
	return write_tagged(w, obj, rank, NULL);
}

/* Every input's incomplete launches (its summary's "incomplete"), each with its rank or worker;
 * the controlling process's (workers) first. */
static int write_incomplete(struct fp_jsonw *w, const struct merged *m)
{
	size_t k, i;
	int rc = FP_OK;

	fp_jsonw_key(w, FP_DBG_KEY_SUMMARY_INCOMPLETE);
	fp_jsonw_array_begin(w);
	for (k = 0; !rc && k <= m->n; k++) {
		const struct sin *in = k == 0 ? m->base : &m->in[m->order[k - 1]];
		const struct fp_json_value *a;

		if (!in)
			continue;
		a = fp_json_get(in->root, FP_DBG_KEY_SUMMARY_INCOMPLETE);
		for (i = 0; !rc && fp_json_type(a) == FP_JSON_ARRAY && i < fp_json_len(a); i++)
			if (fp_json_type(fp_json_at(a, i)) == FP_JSON_OBJECT)
				rc = in == m->base ? fp__jsonw_value(w, fp_json_at(a, i)) :
						     write_tagged(w, fp_json_at(a, i), in->rank,
								  in->worker);
	}
	return rc ? rc : fp_jsonw_array_end(w);
}

static void kv_copy_or_null(struct fp_jsonw *w, const char *k, const struct fp_json_value *v)
{
	fp_jsonw_key(w, k);
	if (v)
		fp__jsonw_value(w, v);
	else
		fp_jsonw_null(w);
}

/* An input's own state: complete, why not, its exit status (null where unknown). */
static void write_status(struct fp_jsonw *w, const struct sin *in)
{
	fp_jsonw_kv_bool(w, "complete", in->complete);
	if (in->reason)
		fp_jsonw_kv_string(w, "incomplete_reason", in->reason);
	else
		fp_jsonw_kv_null(w, "incomplete_reason");
	if (in->has_exit)
		fp_jsonw_kv_int(w, "exit_status", in->exit_status);
	else
		fp_jsonw_kv_null(w, "exit_status");
}

/* The summed "totals" and "dropped" of the inputs. */
static void write_counts(struct fp_jsonw *w, const struct merged *m)
{
	size_t i;

	fp_jsonw_key(w, "totals");
	fp_jsonw_object_begin(w);
	for (i = 0; i < m->totals.n; i++)
		fp_jsonw_kv_uint(w, m->totals.key[i], m->totals.v[i]);
	fp_jsonw_object_end(w);
	fp_jsonw_key(w, "dropped");
	fp_jsonw_object_begin(w);
	for (i = 0; i < m->dropped.n; i++)
		fp_jsonw_kv_uint(w, m->dropped.key[i], m->dropped.v[i]);
	fp_jsonw_object_end(w);
}

static int write_json(const struct merged *m, FILE *f)
{
	struct fp_jsonw *w = fp_jsonw_new_file(f, FP_JSONW_PRETTY);
	const struct sin *first = &m->in[m->order[0]];
	bool complete = m->nmissing == 0 && m->incomplete == 0, unknown_exit = false;
	int64_t exit_status = 0;
	char reason[512];
	size_t k, i, used = 0;
	int rc = FP_OK;

	if (!w)
		return FP_ENOMEM;
	reason[0] = '\0';
	for (k = 0; k < m->n; k++) {
		const struct sin *in = &m->in[m->order[k]];

		if (!in->has_exit)
			unknown_exit = true;
		else if (!exit_status && in->exit_status)
			exit_status = in->exit_status;
		if (!in->complete && used < sizeof(reason) - 1) {
			int n = snprintf(reason + used, sizeof(reason) - used,
					 "%srank %" PRId64 ": %s", used ? "; " : "", in->rank,
					 in->reason ? in->reason : "incomplete");

			used = n < 0 ? used : FP_MIN(used + (size_t)n, sizeof(reason) - 1);
		}
	}
	if (m->nmissing && used < sizeof(reason) - 1)
		snprintf(reason + used, sizeof(reason) - used, "%smissing rank%s %s (no summary)",
			 used ? "; " : "", m->nmissing == 1 ? "" : "s", m->missing_text);
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "schema", SCHEMA);
	fp_jsonw_kv_int(w, "version", 1);
	fp_jsonw_kv_string(w, "flagprism_version", FP_VERSION_STRING);
	kv_copy_or_null(w, "mode", fp_json_get(first->root, "mode"));
	kv_copy_or_null(w, "checks", fp_json_get(first->root, "checks"));
	kv_copy_or_null(w, "command", fp_json_get(first->root, "command"));
	fp_jsonw_kv_null(w, "output_dir");
	fp_jsonw_kv_bool(w, "complete", complete);
	if (complete)
		fp_jsonw_kv_null(w, "incomplete_reason");
	else
		fp_jsonw_kv_string(w, "incomplete_reason", reason);
	if (unknown_exit)
		fp_jsonw_kv_null(w, "exit_status");
	else
		fp_jsonw_kv_int(w, "exit_status", exit_status);
	fp_jsonw_kv_null(w, "distributed");
	fp_jsonw_key(w, FP_DBG_KEY_SUMMARY_RANKS);
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "merged", m->ranks_text);
	fp_jsonw_kv_int(w, "world_size", m->world);
	fp_jsonw_kv_string(w, "missing", m->missing_text);
	fp_jsonw_key(w, FP_DBG_KEY_MERGE_INPUTS);
	fp_jsonw_array_begin(w);
	for (k = 0; k < m->n; k++) {
		const struct sin *in = &m->in[m->order[k]];

		fp_jsonw_object_begin(w);
		fp_jsonw_kv_int(w, "rank", in->rank);
		if (in->host)
			fp_jsonw_kv_string(w, "host", in->host);
		else
			fp_jsonw_kv_null(w, "host");
		fp_jsonw_kv_string(w, FP_DBG_KEY_MERGE_INPUT_SUMMARY, in->name);
		write_status(w, in);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_object_end(w);
	write_counts(w, m);
	rc = write_incomplete(w, m);
	fp_jsonw_key(w, "kernels");
	fp_jsonw_array_begin(w);
	for (k = 0; !rc && k < m->n; k++) {
		const struct sin *in = &m->in[m->order[k]];

		for (i = 0; !rc && i < fp_json_len(in->kernels); i++)
			rc = write_with_rank(w, fp_json_at(in->kernels, i), in->rank);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_key(w, FP_DBG_KEY_SUMMARY_FINDINGS);
	fp_jsonw_array_begin(w);
	for (k = 0; !rc && k < m->n; k++) {
		const struct sin *in = &m->in[m->order[k]];

		for (i = 0; !rc && i < fp_json_len(in->findings); i++)
			rc = write_with_rank(w, fp_json_at(in->findings, i), in->rank);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_object_end(w);
	if (!rc)
		rc = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	if (!rc && fputc('\n', f) == EOF)
		rc = FP_EIO;
	return rc;
}

static const char *str_of(const struct fp_json_value *obj, const char *key, const char *dflt)
{
	const char *s = fp_json_string(fp_json_get(obj, key), NULL);

	return s && s[0] ? s : dflt;
}

static uint64_t num_of(const struct fp_json_value *obj, const char *key)
{
	uint64_t x = 0;

	fp_json_uint64(fp_json_get(obj, key), &x);
	return x;
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

static int write_txt(const struct merged *m, FILE *f)
{
	const struct sin *first = &m->in[m->order[0]];
	const char *tag = str_of(first->root, "command", "flagprism debug");
	uint64_t launches = count_of(&m->totals, "launches");
	uint64_t instr = count_of(&m->totals, "instrumented");
	uint64_t nfind = 0;
	size_t k, i, j;

	fprintf(f,
		"%s: %zu rank%s merged (world size %" PRId64 "; missing: %s): %" PRIu64
		" kernel%s, %" PRIu64 " launch%s: %" PRIu64 " instrumented",
		tag, m->n, m->n == 1 ? "" : "s", m->world, m->nmissing ? m->missing_text : "none",
		count_of(&m->totals, "kernels"), count_of(&m->totals, "kernels") == 1 ? "" : "s",
		launches, launches == 1 ? "" : "es", instr);
	if (launches > instr)
		fprintf(f, ", %" PRIu64 " not", launches - instr);
	fputc('\n', f);
	for (k = 0; k < m->n; k++) {
		const struct sin *in = &m->in[m->order[k]];

		if (!in->complete)
			fprintf(f, "%s: rank %" PRId64 " INCOMPLETE: %s\n", tag, in->rank,
				in->reason ? in->reason : "no reason given");
		if (in->has_exit && in->exit_status)
			fprintf(f, "%s: rank %" PRId64 " exited with status %" PRId64 "\n", tag,
				in->rank, in->exit_status);
	}
	if (m->nmissing)
		fprintf(f,
			"%s: rank%s %s missing: no summary (the rank did not run, or died "
			"before writing it)\n",
			tag, m->nmissing == 1 ? "" : "s", m->missing_text);
	fprintf(f, "  rank  %-32s  launches  instrumented  findings  file\n", "kernel");
	for (k = 0; k < m->n; k++) {
		const struct sin *in = &m->in[m->order[k]];

		for (i = 0; i < fp_json_len(in->kernels); i++) {
			const struct fp_json_value *e = fp_json_at(in->kernels, i);

			fprintf(f,
				"  %4" PRId64 "  %-32.60s  %8" PRIu64 "  %12" PRIu64 "  %8" PRIu64
				"  %s\n",
				in->rank, str_of(e, "name", "?"), num_of(e, "launches"),
				num_of(e, "instrumented"), num_of(e, "findings"),
				str_of(e, "source_file", "-"));
		}
		nfind += fp_json_len(in->findings);
	}
	if (!nfind) {
		fprintf(f, "%s: no findings on any rank\n", tag);
		return ferror(f) ? FP_EIO : FP_OK;
	}
	fprintf(f, "%s: %" PRIu64 " finding%s:\n", tag, nfind, nfind == 1 ? "" : "s");
	for (k = 0; k < m->n; k++) {
		const struct sin *in = &m->in[m->order[k]];

		for (i = 0; i < fp_json_len(in->findings); i++) {
			const struct fp_json_value *e = fp_json_at(in->findings, i), *st;

			fprintf(f,
				"  rank %" PRId64 ": %s in %s at %s:%" PRIu64 ", program %" PRIu64
				", launch %" PRIu64 ": %s\n",
				in->rank, str_of(e, "kind", "?"), str_of(e, "kernel", "?"),
				base_name(str_of(e, "file", "?")), num_of(e, "line"),
				num_of(e, "program"), num_of(e, "launch"),
				str_of(e, "message", ""));
			if (str_of(e, "source", NULL))
				fprintf(f, "      %" PRIu64 " | %s\n", num_of(e, "line"),
					str_of(e, "source", ""));
			st = fp_json_get(e, "stack");
			for (j = 0; j < fp_json_len(st); j++)
				if (fp_json_string(fp_json_at(st, j), NULL))
					fprintf(f, "      %s %s\n", j ? "  " : "at",
						fp_json_string(fp_json_at(st, j), NULL));
			if (str_of(e, FP_DBG_KEY_SUMMARY_FINDING_REPORT, NULL))
				fprintf(f, "      report: %s\n",
					str_of(e, FP_DBG_KEY_SUMMARY_FINDING_REPORT, ""));
		}
	}
	return ferror(f) ? FP_EIO : FP_OK;
}

/* Append `name` to `buf` (comma-separated; "..." once it no longer fits). */
static void append_name(char *buf, size_t cap, const char *name)
{
	size_t used = strlen(buf);

	if (used >= 3 && !strcmp(buf + used - 3, "..."))
		return;
	if (used + strlen(name) + 2 + 4 > cap) {
		snprintf(buf + used, cap - used, "%s...", used ? "," : "");
		return;
	}
	snprintf(buf + used, cap - used, "%s%s", used ? "," : "", name);
}

/* ---- a test session's pytest-xdist workers -------------------------------------------------- */

/* The parts in order: the controlling process's (when it has kernels) first, then the workers. */
static size_t nparts(const struct merged *m)
{
	return m->n + (m->base && fp_json_len(m->base->kernels) ? 1 : 0);
}

static const struct sin *part(const struct merged *m, size_t k)
{
	if (m->base && fp_json_len(m->base->kernels)) {
		if (k == 0)
			return m->base;
		k--;
	}
	return &m->in[m->order[k]];
}

static const char *part_name(const struct merged *m, const struct sin *in)
{
	return in == m->base ? CONTROLLER : in->worker;
}

/* Member `ka` of `a` and member `kb` of `b` are the same string, or both absent (or null). */
static bool same_name(const struct fp_json_value *a, const char *ka, const struct fp_json_value *b,
		      const char *kb)
{
	size_t la = 0, lb = 0;
	const char *x = fp_json_string(fp_json_get(a, ka), &la);
	const char *y = fp_json_string(fp_json_get(b, kb), &lb);

	return x && y ? la == lb && !memcmp(x, y, la) : !x && !y;
}

static bool same_member(const struct fp_json_value *a, const struct fp_json_value *b,
			const char *key)
{
	return same_name(a, key, b, key);
}

static uint64_t hash_member(const struct fp_json_value *o, const char *key, uint64_t h)
{
	size_t n = 0;
	const char *x = fp_json_string(fp_json_get(o, key), &n);

	return fp_hash_u64(h ^ (x ? fp_hash_bytes(x, n) : 0x9e3779b97f4a7c15u));
}

/* The fold's key of a kernel or a finding, and whether two have the same. */
static uint64_t key_of(const struct fp_json_value *o, bool kernels)
{
	if (kernels)
		return hash_member(o, "source_file", hash_member(o, "name", 1));
	return fp_hash_u64(
		hash_member(o, "subject",
			    hash_member(o, "file",
					hash_member(o, "kind", hash_member(o, "kernel", 2)))) ^
		num_of(o, "line"));
}

static bool same_key(const struct fp_json_value *a, const struct fp_json_value *b, bool kernels)
{
	if (kernels)
		return same_member(a, b, "name") && same_member(a, b, "source_file");
	return same_member(a, b, "kernel") && same_member(a, b, "kind") &&
	       same_member(a, b, "file") && same_member(a, b, "subject") &&
	       num_of(a, "line") == num_of(b, "line");
}

static void fold_release(struct fold *f)
{
	fp_free(f->occ);
	fp_free(f->g);
	fp_hashmap_release(&f->ix);
	memset(f, 0, sizeof(*f));
}

/* Fold the parts' kernels (or findings). */
static int fold_build(struct fold *f, const struct merged *m, bool kernels)
{
	size_t k, i, total = 0;

	fp_hashmap_init(&f->ix);
	for (k = 0; k < nparts(m); k++)
		total += fp_json_len(kernels ? part(m, k)->kernels : part(m, k)->findings);
	f->occ = fp_calloc(total ? total : 1, sizeof(*f->occ));
	f->g = fp_calloc(total ? total : 1, sizeof(*f->g));
	if (!f->occ || !f->g)
		return FP_ENOMEM;
	for (k = 0; k < nparts(m); k++) {
		const struct fp_json_value *arr =
			kernels ? part(m, k)->kernels : part(m, k)->findings;

		for (i = 0; i < fp_json_len(arr); i++) {
			const struct fp_json_value *o = fp_json_at(arr, i);
			uint64_t key = key_of(o, kernels), v;
			struct occ *oc = &f->occ[f->nocc];
			int rc;

			oc->obj = o;
			oc->part = k;
			oc->next = NONE;
			while (fp_hashmap_get(&f->ix, key, &v) &&
			       !same_key(f->occ[f->g[v].head].obj, o, kernels))
				key++;
			if (fp_hashmap_get(&f->ix, key, &v)) {
				f->occ[f->g[v].tail].next = f->nocc;
				f->g[v].tail = f->nocc;
			} else {
				if ((rc = fp_hashmap_put(&f->ix, key, f->ng)))
					return rc;
				f->g[f->ng].head = f->g[f->ng].tail = f->nocc;
				f->ng++;
			}
			f->nocc++;
		}
	}
	return FP_OK;
}

/* Set a summed counter to `v` (the folded kernels and findings are fewer than the sum). */
static void set_count(struct counts *c, const char *key, uint64_t v)
{
	size_t k;

	for (k = 0; k < c->n && strcmp(c->key[k], key); k++)
		;
	if (k < c->n)
		c->v[k] = v;
}

/* Fold the kernels and findings of a session's parts; the totals count the folded ones. */
static int fold_workers(struct merged *m)
{
	struct fp_hashmap names; /* hash of a kernel's name (probed on) -> its first group */
	size_t i;
	uint64_t v;
	int rc;

	if ((rc = fold_build(&m->kernels, m, true)) || (rc = fold_build(&m->findings, m, false)))
		return rc;
	/* a kernel's findings: the finding groups that name it (by name: findings carry no file
	 * of the kernel's; of two kernels of one name, the first counts them) */
	fp_hashmap_init(&names);
	for (i = 0; !rc && i < m->kernels.ng; i++) {
		const struct fp_json_value *k = m->kernels.occ[m->kernels.g[i].head].obj;
		uint64_t key = hash_member(k, "name", 3);

		while (fp_hashmap_get(&names, key, &v) &&
		       !same_name(m->kernels.occ[m->kernels.g[v].head].obj, "name", k, "name"))
			key++;
		if (!fp_hashmap_get(&names, key, &v))
			rc = fp_hashmap_put(&names, key, i);
	}
	for (i = 0; !rc && i < m->findings.ng; i++) {
		const struct fp_json_value *f = m->findings.occ[m->findings.g[i].head].obj;
		uint64_t key = hash_member(f, "kernel", 3);

		while (fp_hashmap_get(&names, key, &v)) {
			if (same_name(m->kernels.occ[m->kernels.g[v].head].obj, "name", f,
				      "kernel")) {
				m->kernels.g[v].findings++;
				break;
			}
			key++;
		}
	}
	fp_hashmap_release(&names);
	if (rc)
		return rc;
	set_count(&m->totals, "kernels", m->kernels.ng + count_of(&m->dropped, "kernels"));
	set_count(&m->totals, "findings", m->findings.ng + count_of(&m->dropped, "findings"));
	return FP_OK;
}

/* "worker": the part whose entry is shown, "workers": every part it is in. */
static void write_workers_of(struct fp_jsonw *w, const struct merged *m, const struct fold *f,
			     const struct group *g)
{
	size_t o;

	fp_jsonw_kv_string(w, "worker", part_name(m, part(m, f->occ[g->head].part)));
	fp_jsonw_key(w, "workers");
	fp_jsonw_array_begin(w);
	for (o = g->head; o != NONE; o = f->occ[o].next)
		if (o == g->head || f->occ[o].part != f->occ[g->head].part)
			fp_jsonw_string(w, part_name(m, part(m, f->occ[o].part)));
	fp_jsonw_array_end(w);
}

static uint64_t sum_of(const struct fold *f, const struct group *g, const char *key)
{
	uint64_t s = 0;
	size_t o;

	for (o = g->head; o != NONE; o = f->occ[o].next) {
		uint64_t x = num_of(f->occ[o].obj, key);

		s = x > UINT64_MAX - s ? UINT64_MAX : s + x;
	}
	return s;
}

static bool same_reason(const struct fp_json_value *a, const struct fp_json_value *b)
{
	return same_member(a, b, "status") && same_member(a, b, "reason");
}

/* A kernel's "not_instrumented", each (status, reason) once with its launches summed. */
static void write_reasons(struct fp_jsonw *w, const struct fold *f, const struct group *g)
{
	size_t o, i, o2, i2;

	fp_jsonw_array_begin(w);
	for (o = g->head; o != NONE; o = f->occ[o].next) {
		const struct fp_json_value *arr = fp_json_get(f->occ[o].obj, "not_instrumented");

		for (i = 0; i < fp_json_len(arr); i++) {
			const struct fp_json_value *e = fp_json_at(arr, i);
			uint64_t launches = 0;
			bool seen = false;

			if (fp_json_type(e) != FP_JSON_OBJECT)
				continue;
			for (o2 = g->head; o2 != NONE && !seen;
			     o2 = o2 == o ? NONE : f->occ[o2].next) {
				const struct fp_json_value *a2 =
					fp_json_get(f->occ[o2].obj, "not_instrumented");

				for (i2 = 0; i2 < (o2 == o ? i : fp_json_len(a2)) && !seen; i2++)
					seen = same_reason(fp_json_at(a2, i2), e);
			}
			if (seen)
				continue;
			for (o2 = o; o2 != NONE; o2 = f->occ[o2].next) {
				const struct fp_json_value *a2 =
					fp_json_get(f->occ[o2].obj, "not_instrumented");

				for (i2 = o2 == o ? i : 0; i2 < fp_json_len(a2); i2++)
					if (same_reason(fp_json_at(a2, i2), e))
						launches += num_of(fp_json_at(a2, i2), "launches");
			}
			fp_jsonw_object_begin(w);
			kv_copy_or_null(w, "status", fp_json_get(e, "status"));
			kv_copy_or_null(w, "reason", fp_json_get(e, "reason"));
			fp_jsonw_kv_uint(w, "launches", launches);
			kv_copy_or_null(w, "first_launch", fp_json_get(e, "first_launch"));
			fp_jsonw_object_end(w);
		}
	}
	fp_jsonw_array_end(w);
}

/*
 * One folded kernel or finding: the first part's entry with the counts summed over the parts
 * ("launches", "instrumented"; "programs", "instances", "descendants"), a kernel's "findings"
 * those of the fold, its "coverage" the first part's that has one, its "not_instrumented"
 * merged; "first_launch", "launch", "program", "report", "test" and "stack" are the first
 * part's (launch numbers are per process).
 */
static int write_group(struct fp_jsonw *w, const struct merged *m, const struct fold *f,
		       const struct group *g, bool kernels)
{
	static const char *const ksum[] = {"launches", "instrumented"};
	static const char *const fsum[] = {"launches", "programs", "instances", "descendants"};
	const struct fp_json_value *obj = f->occ[g->head].obj;
	size_t i, o, j;
	int rc = FP_OK;

	fp_jsonw_object_begin(w);
	write_workers_of(w, m, f, g);
	for (i = 0; !rc && i < fp_json_len(obj); i++) {
		const char *key;
		size_t kl;
		const struct fp_json_value *v = fp_json_member(obj, i, &key, &kl);
		bool summed = false;

		if ((kl == 6 && !memcmp(key, "worker", 6)) ||
		    (kl == 7 && !memcmp(key, "workers", 7)))
			continue;
		fp_jsonw_key_n(w, key, kl);
		for (j = 0; j < (kernels ? FP_ARRAY_SIZE(ksum) : FP_ARRAY_SIZE(fsum)); j++)
			if (strlen(kernels ? ksum[j] : fsum[j]) == kl &&
			    !memcmp(key, kernels ? ksum[j] : fsum[j], kl))
				summed = true;
		if (summed) {
			fp_jsonw_uint(w, sum_of(f, g, key));
		} else if (kernels && kl == 8 && !memcmp(key, "findings", 8)) {
			fp_jsonw_uint(w, g->findings);
		} else if (kernels && kl == 16 && !memcmp(key, "not_instrumented", 16)) {
			write_reasons(w, f, g);
		} else if (kernels && kl == 8 && !memcmp(key, "coverage", 8)) {
			for (o = g->head; o != NONE; o = f->occ[o].next)
				if (fp_json_type(fp_json_get(f->occ[o].obj, "coverage")) ==
				    FP_JSON_OBJECT)
					break;
			rc = fp__jsonw_value(w, o == NONE ? v :
							    fp_json_get(f->occ[o].obj, "coverage"));
		} else {
			rc = fp__jsonw_value(w, v);
		}
	}
	return rc ? rc : fp_jsonw_object_end(w);
}

/* The workers of a folded entry as text: "gw0,gw2" (at most `cap` bytes, "..." when cut). */
static void workers_text(const struct merged *m, const struct fold *f, const struct group *g,
			 char *buf, size_t cap)
{
	size_t o;

	buf[0] = '\0';
	for (o = g->head; o != NONE; o = f->occ[o].next)
		append_name(buf, cap, part_name(m, part(m, f->occ[o].part)));
}

/* Why the merged summary is incomplete ("" when it is not). */
static void workers_reason(const struct merged *m, char *reason, size_t cap)
{
	size_t k, used = 0;

	reason[0] = '\0';
	if (m->base && !m->base->complete) {
		int c = snprintf(reason, cap, "%s",
				 m->base->reason ? m->base->reason : "the session did not finish");

		used = c < 0 ? 0 : FP_MIN((size_t)c, cap - 1);
	}
	for (k = 0; k < m->n && used < cap - 1; k++) {
		const struct sin *in = &m->in[m->order[k]];
		int c;

		if (in->complete)
			continue;
		c = snprintf(reason + used, cap - used, "%sworker %s: %s", used ? "; " : "",
			     in->worker, in->reason ? in->reason : "incomplete");
		used = c < 0 ? used : FP_MIN(used + (size_t)c, cap - 1);
	}
	if (m->nmissing && used < cap - 1)
		snprintf(reason + used, cap - used, "%smissing worker%s %s (no summary)",
			 used ? "; " : "", m->nmissing == 1 ? "" : "s", m->missing_text);
}

static int write_json_workers(const struct merged *m, FILE *f)
{
	struct fp_jsonw *w = fp_jsonw_new_file(f, FP_JSONW_PRETTY);
	const struct sin *meta = m->base ? m->base : &m->in[m->order[0]];
	bool complete = m->nmissing == 0 && m->incomplete == 0 && (!m->base || m->base->complete);
	bool unknown_exit = false;
	int64_t exit_status = 0;
	char reason[512];
	size_t k, i;
	int rc = FP_OK;

	if (!w)
		return FP_ENOMEM;
	if (m->base && m->base->has_exit) {
		exit_status = m->base->exit_status;
	} else {
		for (k = 0; k < m->n; k++) {
			const struct sin *in = &m->in[m->order[k]];

			if (!in->has_exit)
				unknown_exit = true;
			else if (!exit_status && in->exit_status)
				exit_status = in->exit_status;
		}
	}
	workers_reason(m, reason, sizeof(reason));
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "schema", SCHEMA);
	fp_jsonw_kv_int(w, "version", 1);
	fp_jsonw_kv_string(w, "flagprism_version", FP_VERSION_STRING);
	kv_copy_or_null(w, "mode", fp_json_get(meta->root, "mode"));
	kv_copy_or_null(w, "checks", fp_json_get(meta->root, "checks"));
	kv_copy_or_null(w, "command", fp_json_get(meta->root, "command"));
	kv_copy_or_null(w, "output_dir", m->base ? fp_json_get(m->base->root, "output_dir") : NULL);
	fp_jsonw_kv_bool(w, "complete", complete);
	if (complete)
		fp_jsonw_kv_null(w, "incomplete_reason");
	else
		fp_jsonw_kv_string(w, "incomplete_reason", reason);
	if (unknown_exit)
		fp_jsonw_kv_null(w, "exit_status");
	else
		fp_jsonw_kv_int(w, "exit_status", exit_status);
	/* the workers of one process of a job share its rank */
	kv_copy_or_null(w, "distributed", fp_json_get(meta->root, "distributed"));
	fp_jsonw_kv_null(w, "worker");
	fp_jsonw_key(w, FP_DBG_KEY_SUMMARY_WORKERS);
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "merged", m->ranks_text);
	if (m->wcount > 0)
		fp_jsonw_kv_int(w, "count", m->wcount);
	else
		fp_jsonw_kv_null(w, "count");
	fp_jsonw_kv_string(w, "missing", m->missing_text);
	fp_jsonw_key(w, FP_DBG_KEY_MERGE_INPUTS);
	fp_jsonw_array_begin(w);
	for (k = 0; k < nparts(m); k++) {
		const struct sin *in = part(m, k);

		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "worker", part_name(m, in));
		if (in == m->base)
			fp_jsonw_kv_null(w, FP_DBG_KEY_MERGE_INPUT_SUMMARY);
		else
			fp_jsonw_kv_string(w, FP_DBG_KEY_MERGE_INPUT_SUMMARY, in->name);
		write_status(w, in);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_object_end(w);
	write_counts(w, m);
	rc = write_incomplete(w, m);
	fp_jsonw_key(w, "kernels");
	fp_jsonw_array_begin(w);
	for (i = 0; !rc && i < m->kernels.ng; i++)
		rc = write_group(w, m, &m->kernels, &m->kernels.g[i], true);
	fp_jsonw_array_end(w);
	fp_jsonw_key(w, FP_DBG_KEY_SUMMARY_FINDINGS);
	fp_jsonw_array_begin(w);
	for (i = 0; !rc && i < m->findings.ng; i++)
		rc = write_group(w, m, &m->findings, &m->findings.g[i], false);
	fp_jsonw_array_end(w);
	fp_jsonw_object_end(w);
	if (!rc)
		rc = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	if (!rc && fputc('\n', f) == EOF)
		rc = FP_EIO;
	return rc;
}

static int write_txt_workers(const struct merged *m, FILE *f)
{
	const struct sin *meta = m->base ? m->base : &m->in[m->order[0]];
	const char *tag = str_of(meta->root, "command", "flagprism debug");
	uint64_t launches = count_of(&m->totals, "launches");
	uint64_t instr = count_of(&m->totals, "instrumented");
	uint64_t nk = count_of(&m->totals, "kernels"), nf = count_of(&m->totals, "findings");
	char who[128];
	size_t k, i, j;

	fprintf(f,
		"%s: %zu pytest-xdist worker%s merged (%s; missing: %s): %" PRIu64
		" kernel%s, %" PRIu64 " launch%s: %" PRIu64 " instrumented",
		tag, m->n, m->n == 1 ? "" : "s", m->n ? m->ranks_text : "none",
		m->nmissing ? m->missing_text : "none", nk, nk == 1 ? "" : "s", launches,
		launches == 1 ? "" : "es", instr);
	if (launches > instr)
		fprintf(f, ", %" PRIu64 " not", launches - instr);
	fputc('\n', f);
	if (m->base && !m->base->complete)
		fprintf(f, "%s: INCOMPLETE: %s\n", tag,
			m->base->reason ? m->base->reason : "the session did not finish");
	for (k = 0; k < m->n; k++) {
		const struct sin *in = &m->in[m->order[k]];

		if (!in->complete)
			fprintf(f, "%s: worker %s INCOMPLETE: %s\n", tag, in->worker,
				in->reason ? in->reason : "no reason given");
	}
	if (m->nmissing)
		fprintf(f,
			"%s: worker%s %s missing: no summary (the worker crashed or was killed "
			"before writing it; what it ran is not in this summary)\n",
			tag, m->nmissing == 1 ? "" : "s", m->missing_text);
	if (m->kernels.ng)
		fprintf(f, "  %-32s  launches  instrumented  findings  workers     file\n",
			"kernel");
	for (i = 0; i < m->kernels.ng; i++) {
		const struct group *g = &m->kernels.g[i];
		const struct fp_json_value *e = m->kernels.occ[g->head].obj;

		workers_text(m, &m->kernels, g, who, sizeof(who));
		fprintf(f, "  %-32.60s  %8" PRIu64 "  %12" PRIu64 "  %8" PRIu64 "  %-10s  %s\n",
			str_of(e, "name", "?"), sum_of(&m->kernels, g, "launches"),
			sum_of(&m->kernels, g, "instrumented"), g->findings, who,
			str_of(e, "source_file", "-"));
	}
	if (!m->findings.ng) {
		fprintf(f, "%s: no findings in any worker\n", tag);
		return ferror(f) ? FP_EIO : FP_OK;
	}
	fprintf(f, "%s: %" PRIu64 " finding%s:\n", tag, nf, nf == 1 ? "" : "s");
	for (i = 0; i < m->findings.ng; i++) {
		const struct group *g = &m->findings.g[i];
		const struct fp_json_value *e = m->findings.occ[g->head].obj, *st;
		uint64_t nl = sum_of(&m->findings, g, "launches");

		workers_text(m, &m->findings, g, who, sizeof(who));
		fprintf(f,
			"  %s in %s at %s:%" PRIu64 ", program %" PRIu64 ", launch %" PRIu64
			" of worker %s",
			str_of(e, "kind", "?"), str_of(e, "kernel", "?"),
			base_name(str_of(e, "file", "?")), num_of(e, "line"), num_of(e, "program"),
			num_of(e, "launch"), part_name(m, part(m, m->findings.occ[g->head].part)));
		if (nl > 1 || m->findings.occ[g->head].next != NONE)
			fprintf(f, " (in %" PRIu64 " launch%s, worker%s %s)", nl,
				nl == 1 ? "" : "es",
				m->findings.occ[g->head].next != NONE ? "s" : "", who);
		fprintf(f, ": %s\n", str_of(e, "message", ""));
		if (str_of(e, "source", NULL))
			fprintf(f, "      %" PRIu64 " | %s\n", num_of(e, "line"),
				str_of(e, "source", ""));
		if (str_of(e, "test", NULL))
			fprintf(f, "      test: %s\n", str_of(e, "test", ""));
		st = fp_json_get(e, "stack");
		for (j = 0; j < fp_json_len(st); j++)
			if (fp_json_string(fp_json_at(st, j), NULL))
				fprintf(f, "      %s %s\n", j ? "  " : "at",
					fp_json_string(fp_json_at(st, j), NULL));
		if (str_of(e, FP_DBG_KEY_SUMMARY_FINDING_REPORT, NULL))
			fprintf(f, "      report: %s\n",
				str_of(e, FP_DBG_KEY_SUMMARY_FINDING_REPORT, ""));
	}
	return ferror(f) ? FP_EIO : FP_OK;
}

static int write_json_any(const struct merged *m, FILE *f)
{
	return m->workers ? write_json_workers(m, f) : write_json(m, f);
}

static int write_txt_any(const struct merged *m, FILE *f)
{
	return m->workers ? write_txt_workers(m, f) : write_txt(m, f);
}

static void free_inputs(struct sin *in, size_t n)
{
	size_t i;

	for (i = 0; in && i < n; i++)
		fp_json_doc_free(in[i].doc);
	fp_free(in);
}

/* Parse and check one input. */
static int parse_one(struct sin *in, const char *text, size_t len, const char *name, size_t pos,
		     struct fp_diag *diag)
{
	int rc;

	in->name = name;
	rc = fp_json_parse(text, len, &summary_limits, &in->doc, diag);
	if (rc == FP_EFORMAT || rc == FP_ELIMIT) {
		char msg[sizeof(diag->msg)];

		if (diag) {
			memcpy(msg, diag->msg, sizeof(msg));
			snprintf(diag->msg, sizeof(diag->msg), "%.100s:%u:%u: %.130s", name,
				 diag->line, diag->col, msg);
		}
		return rc;
	}
	if (rc)
		return rc;
	in->root = fp_json_root(in->doc);
	return read_one(in, pos, diag);
}

/* Order ranks, find the missing ones. */
static int prepare_ranks(struct merged *m, int64_t maxr, struct fp_diag *diag)
{
	size_t i, k, n = m->n;

	for (i = 0; i < n; i++) {
		const struct sin *in = &m->in[i];

		for (k = 0; k < i; k++)
			if (m->in[k].rank == in->rank)
				return fp_diag_set(diag, FP_EINVAL, 0,
						   "%s and %s are both rank %" PRId64
						   " (summaries of two jobs?)",
						   m->in[k].name, in->name, in->rank);
		if (in->world > 0) {
			if (m->world && m->world != in->world)
				return fp_diag_set(diag, FP_EINVAL, 0,
						   "%s has world size %" PRId64
						   ", an earlier summary %" PRId64
						   " (summaries of two jobs?)",
						   in->name, in->world, m->world);
			m->world = in->world;
		}
	}
	if (!m->world)
		m->world = maxr + 1;
	if (maxr >= m->world)
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "rank %" PRId64 " is not below the world size %" PRId64, maxr,
				   m->world);
	for (i = 0; i < n; i++) {
		for (k = i; k > 0 && m->in[m->order[k - 1]].rank > m->in[i].rank; k--)
			m->order[k] = m->order[k - 1];
		m->order[k] = i;
	}
	for (k = 0; k < n; k++)
		m->ranks[k] = m->in[m->order[k]].rank;
	fp_ranks_format(m->ranks, n, m->ranks_text, sizeof(m->ranks_text));
	m->nmissing =
		fp_ranks_missing(m->ranks, n, m->world, m->missing, FP_ARRAY_SIZE(m->missing));
	fp_ranks_format(m->missing, FP_MIN(m->nmissing, FP_ARRAY_SIZE(m->missing)), m->missing_text,
			sizeof(m->missing_text) - 8);
	if (m->nmissing > FP_ARRAY_SIZE(m->missing)) {
		size_t used = strlen(m->missing_text);

		snprintf(m->missing_text + used, sizeof(m->missing_text) - used, ",...");
	}
	return FP_OK;
}

/* Workers' names in their natural order: "gw2" before "gw10". */
static int worker_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			size_t la, lb;

			while (*a == '0' && a[1] >= '0' && a[1] <= '9')
				a++;
			while (*b == '0' && b[1] >= '0' && b[1] <= '9')
				b++;
			for (la = 0; a[la] >= '0' && a[la] <= '9'; la++)
				;
			for (lb = 0; b[lb] >= '0' && b[lb] <= '9'; lb++)
				;
			if (la != lb)
				return la < lb ? -1 : 1;
			if (memcmp(a, b, la))
				return memcmp(a, b, la);
			a += la;
			b += lb;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

static bool has_worker(const struct merged *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (!strcmp(m->in[i].worker, name))
			return true;
	return false;
}

/*
 * Order the workers' parts and find the missing ones: every name of `expected` (the workers the
 * session started) and gw0 .. gw<count - 1> without a part.
 */
static int prepare_workers(struct merged *m, const char *const *expected, size_t nexpected,
			   struct fp_diag *diag)
{
	const char *miss[MAX_MISSING];
	char gen[MAX_MISSING][24], probe[24];
	size_t i, k, n = m->n, nmiss = 0, more = 0;

	for (i = 0; i < n; i++) {
		const struct sin *in = &m->in[i];

		for (k = 0; k < i; k++)
			if (!strcmp(m->in[k].worker, in->worker))
				return fp_diag_set(
					diag, FP_EINVAL, 0,
					"%s and %s are both worker %s (parts of two test "
					"sessions?)",
					m->in[k].name, in->name, in->worker);
		if (in->wcount > m->wcount)
			m->wcount = in->wcount;
		for (k = i; k > 0 && worker_cmp(m->in[m->order[k - 1]].worker, in->worker) > 0; k--)
			m->order[k] = m->order[k - 1];
		m->order[k] = i;
	}
	for (k = 0; k < n; k++)
		append_name(m->ranks_text, sizeof(m->ranks_text), m->in[m->order[k]].worker);
	for (i = 0; i < nexpected + (size_t)m->wcount; i++) {
		const char *name;
		bool seen = false;

		if (i < nexpected) {
			name = expected[i];
			if (!name || !name[0])
				continue;
		} else if (nmiss < MAX_MISSING) {
			snprintf(gen[nmiss], sizeof(gen[nmiss]), "gw%zu", i - nexpected);
			name = gen[nmiss]; /* the slot stays this name's if it is kept */
		} else {
			snprintf(probe, sizeof(probe), "gw%zu", i - nexpected);
			name = probe; /* only counted, never kept */
		}
		if (has_worker(m, name))
			continue;
		for (k = 0; k < nmiss && !seen; k++)
			seen = !strcmp(miss[k], name);
		if (seen)
			continue;
		if (nmiss == MAX_MISSING) {
			more++;
			continue;
		}
		for (k = nmiss; k > 0 && worker_cmp(miss[k - 1], name) > 0; k--)
			miss[k] = miss[k - 1];
		miss[k] = name;
		nmiss++;
	}
	for (k = 0; k < nmiss; k++)
		append_name(m->missing_text, sizeof(m->missing_text), miss[k]);
	if (more)
		append_name(m->missing_text, sizeof(m->missing_text) - 8, "...");
	m->nmissing = nmiss + more;
	return FP_OK;
}

/*
 * Parse, check and order the inputs (and `base`, the controlling process's summary, when not
 * NULL); fills everything of `m` but the output. Inputs that all have a "worker" are merged as
 * a test session's workers (`expected` names the workers that ran), else as ranks.
 */
static int prepare(struct merged *m, const char *const *texts, const size_t *lens,
		   const char *const *names, size_t n, const char *const *expected,
		   size_t nexpected, const char *base_text, size_t base_len, struct fp_diag *diag)
{
	size_t i, nworkers = 0;
	int64_t maxr = -1;
	int rc = FP_OK;

	memset(m, 0, sizeof(*m));
	if ((n == 0 && !base_text) || n > FP_RANKS_MAX || nexpected > FP_RANKS_MAX)
		return fp_diag_set(diag, FP_EINVAL, 0, "expected 1 to %d summaries", FP_RANKS_MAX);
	m->in = fp_calloc(n + 1, sizeof(*m->in));
	m->order = fp_calloc(n + 1, sizeof(*m->order));
	m->ranks = fp_calloc(n + 1, sizeof(*m->ranks));
	if (!m->in || !m->order || !m->ranks)
		return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	m->n = n;
	m->world = 0;
	for (i = 0; !rc && i < n; i++) {
		struct sin *in = &m->in[i];

		rc = parse_one(in, texts[i], lens[i], names[i], i, diag);
		if (rc)
			break;
		maxr = FP_MAX(maxr, in->rank);
		nworkers += in->worker != NULL;
		if ((rc = add_counts(&m->totals, in, "totals", diag)) ||
		    (rc = add_counts(&m->dropped, in, "dropped", diag)))
			break;
		m->incomplete += !in->complete;
	}
	if (!rc && base_text) {
		/* kept after the inputs, so that release() frees it with them */
		m->base = &m->in[n];
		rc = parse_one(m->base, base_text, base_len, CONTROLLER, n, diag);
		if (!rc)
			rc = add_counts(&m->totals, m->base, "totals", diag);
		if (!rc)
			rc = add_counts(&m->dropped, m->base, "dropped", diag);
	}
	if (rc)
		return rc;
	if ((nworkers || m->base) && nworkers < n) {
		const struct sin *a = NULL, *b = NULL;

		for (i = 0; i < n; i++) {
			if (m->in[i].worker && !a)
				a = &m->in[i];
			if (!m->in[i].worker && !b)
				b = &m->in[i];
		}
		if (!a)
			return fp_diag_set(
				diag, FP_EINVAL, 0,
				"%s is not the summary of a pytest-xdist worker (it has no "
				"\"worker\")",
				b->name);
		return fp_diag_set(
			diag, FP_EINVAL, 0,
			"%s is pytest-xdist worker %s's part of a test session and %s is "
			"not: merge a session's parts with each other",
			a->name, a->worker, b->name);
	}
	m->workers = nworkers > 0 || m->base;
	if (!m->workers)
		return prepare_ranks(m, maxr, diag);
	rc = prepare_workers(m, expected, nexpected, diag);
	if (!rc && (rc = fold_workers(m)))
		rc = fp_diag_set(diag, rc, 0, "cannot fold the workers' summaries: %s",
				 fp_strerror(rc));
	return rc;
}

static void report(const struct merged *m, struct fp_ranks_summary_report *rep)
{
	size_t k;

	if (!rep)
		return;
	memset(rep, 0, sizeof(*rep));
	rep->ranks = m->n;
	rep->world_size = m->workers ? 0 : m->world;
	for (k = 0; !m->workers && k < m->n; k++) {
		rep->kernels += fp_json_len(m->in[k].kernels);
		rep->findings += fp_json_len(m->in[k].findings);
	}
	if (m->workers) {
		rep->kernels = m->kernels.ng;
		rep->findings = m->findings.ng;
	}
	rep->nmissing = m->nmissing;
	snprintf(rep->missing, sizeof(rep->missing), "%s", m->missing_text);
	rep->incomplete = m->incomplete;
}

static void release(struct merged *m)
{
	fold_release(&m->kernels);
	fold_release(&m->findings);
	free_inputs(m->in, m->n + (m->base != NULL));
	fp_free(m->order);
	fp_free(m->ranks);
}

int fp_ranks_merge_summary_texts(const char *const *texts, const size_t *lens,
				 const char *const *names, size_t n, FILE *json, FILE *txt,
				 struct fp_ranks_summary_report *rep, struct fp_diag *diag)
{
	struct merged m;
	size_t i;
	int rc;

	if (!texts || !lens || !names)
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "fp_ranks_merge_summary_texts: NULL argument");
	for (i = 0; i < n; i++)
		if ((!texts[i] && lens[i]) || !names[i])
			return fp_diag_set(diag, FP_EINVAL, 0,
					   "fp_ranks_merge_summary_texts: NULL input %zu", i);
	rc = prepare(&m, texts, lens, names, n, NULL, 0, NULL, 0, diag);
	if (!rc && json)
		rc = write_json_any(&m, json);
	if (!rc && txt)
		rc = write_txt_any(&m, txt);
	if (rc == FP_EIO)
		fp_diag_set(diag, FP_EIO, 0, "write error");
	if (!rc)
		report(&m, rep);
	release(&m);
	return rc;
}

/* ---- files --------------------------------------------------------------------------------- */

static int json_cb(void *arg, FILE *f)
{
	return write_json_any(arg, f);
}

static int txt_cb(void *arg, FILE *f)
{
	return write_txt_any(arg, f);
}

/* mkdir -p */
static int make_dirs(const char *dir, struct fp_diag *diag)
{
	size_t n = strlen(dir), i;
	char *p = fp_strdup(dir);
	struct stat sb;
	int rc = FP_OK;

	if (!p)
		return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	for (i = 1; i <= n && !rc; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		p[i] = '\0';
		if (mkdir(p, 0777) &&
		    !(errno == EEXIST && stat(p, &sb) == 0 && S_ISDIR(sb.st_mode)))
			rc = fp_diag_set(diag, FP_EIO, 0, "cannot create directory %s: %s", p,
					 strerror(errno));
		if (i < n)
			p[i] = '/';
	}
	fp_free(p);
	return rc;
}

/*
 * Read the summaries at `paths` (files, or directories holding summary.json), merge them (under
 * `base` when not NULL) and write out_dir/summary.json and summary.txt. `m` is released by the
 * caller, after it read what it reports.
 */
static int merge_files(struct merged *m, const char *const *paths, size_t n,
		       const char *const *expected, size_t nexpected, const char *base_text,
		       size_t base_len, const char *out_dir, struct fp_diag *diag)
{
	char **texts = NULL, **names = NULL;
	size_t *lens = NULL, i;
	struct stat sb;
	int rc = FP_OK;

	memset(m, 0, sizeof(*m));
	texts = fp_calloc(n + 1, sizeof(*texts));
	names = fp_calloc(n + 1, sizeof(*names));
	lens = fp_calloc(n + 1, sizeof(*lens));
	if (!texts || !names || !lens) {
		rc = fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
		goto out;
	}
	for (i = 0; !rc && i < n; i++) {
		size_t pl = strlen(paths[i]) + 16;

		names[i] = fp_malloc(pl);
		if (!names[i]) {
			rc = fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
			break;
		}
		if (stat(paths[i], &sb) == 0 && S_ISDIR(sb.st_mode))
			snprintf(names[i], pl, "%s%ssummary.json", paths[i],
				 paths[i][strlen(paths[i]) - 1] == '/' ? "" : "/");
		else
			snprintf(names[i], pl, "%s", paths[i]);
		rc = fp__strbuf_slurp(names[i], MAX_SUMMARY_BYTES, FP_STRBUF_READ_REGULAR,
				      &texts[i], &lens[i], diag);
	}
	/* the inputs' names are kept by `m`: they are freed with it (release_names()) */
	if (!rc)
		rc = prepare(m, (const char *const *)texts, lens, (const char *const *)names, n,
			     expected, nexpected, base_text, base_len, diag);
	if (!rc)
		rc = make_dirs(out_dir, diag);
	if (!rc) {
		size_t pl = strlen(out_dir) + 16;
		char *p = fp_malloc(pl);

		if (!p) {
			rc = fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
		} else {
			snprintf(p, pl, "%s/summary.json", out_dir);
			rc = fp__outfile_save(p, json_cb, m, diag);
			if (!rc) {
				snprintf(p, pl, "%s/summary.txt", out_dir);
				rc = fp__outfile_save(p, txt_cb, m, diag);
			}
			fp_free(p);
		}
	}
out:
	for (i = 0; i < n; i++) {
		if (texts)
			fp_free(texts[i]);
	}
	fp_free(texts);
	fp_free(lens);
	m->names = names;
	m->nnames = n;
	return rc;
}

static void release_names(struct merged *m)
{
	size_t i;

	for (i = 0; m->names && i < m->nnames; i++)
		fp_free(m->names[i]);
	fp_free(m->names);
}

int fp_ranks_merge_summaries(const char *const *paths, size_t n, const char *out_dir,
			     struct fp_ranks_summary_report *rep, struct fp_diag *diag)
{
	struct merged m;
	int rc;

	if (!paths || !out_dir || !out_dir[0] || n == 0 || n > FP_RANKS_MAX)
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "fp_ranks_merge_summaries: no inputs or no output directory");
	rc = merge_files(&m, paths, n, NULL, 0, NULL, 0, out_dir, diag);
	if (!rc)
		report(&m, rep);
	release(&m);
	release_names(&m);
	return rc;
}

static void parts_report(const struct merged *m, struct fp_dbg_summary_parts_report *rep)
{
	struct fp_dbg_summary_totals *t = &rep->totals;
	size_t i;

	memset(rep, 0, sizeof(*rep));
	t->kernels = count_of(&m->totals, "kernels");
	t->launches = count_of(&m->totals, "launches");
	for (i = 0; i < FP_DBG_LAUNCH_NSTATUS; i++)
		t->by_status[i] = count_of(&m->totals,
					   fp_dbg_launch_status_name((enum fp_dbg_launch_status)i));
	t->findings = count_of(&m->totals, "findings");
	t->finding_launches = count_of(&m->totals, "launches_with_findings");
	t->reports = count_of(&m->totals, "reports");
	t->incomplete_launches = count_of(&m->totals, "incomplete_launches");
	t->dropped_kernels = count_of(&m->dropped, "kernels");
	t->dropped_reasons = count_of(&m->dropped, "reasons");
	t->dropped_findings = count_of(&m->dropped, "findings");
	rep->parts = m->n;
	rep->nmissing = m->nmissing;
	snprintf(rep->missing, sizeof(rep->missing), "%s", m->missing_text);
	rep->incomplete = m->incomplete;
}

int fp_dbg_summary_write_parts(struct fp_dbg_summary *s, const char *dir, const char *const *parts,
			       size_t n, const char *const *expected, size_t nexpected,
			       struct fp_dbg_summary_parts_report *rep, struct fp_diag *diag)
{
	struct fp_strbuf sb;
	struct merged m;
	size_t i;
	int rc;

	if (!s || !dir || !dir[0] || (n && !parts) || (nexpected && !expected) ||
	    n > FP_RANKS_MAX || nexpected > FP_RANKS_MAX)
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "fp_dbg_summary_write_parts: no summary, no directory or too "
				   "many parts");
	for (i = 0; i < n; i++)
		if (!parts[i] || !parts[i][0])
			return fp_diag_set(diag, FP_EINVAL, 0,
					   "fp_dbg_summary_write_parts: part %zu has no path", i);
	fp_strbuf_init(&sb, 0);
	rc = fp__dbg_summary_json(s, &sb);
	if (rc) {
		fp_strbuf_release(&sb);
		return fp_diag_set(diag, rc, 0, "the summary could not be formatted: %s",
				   fp_strerror(rc));
	}
	rc = merge_files(&m, parts, n, expected, nexpected, sb.buf, sb.len, dir, diag);
	if (!rc && rep)
		parts_report(&m, rep);
	release(&m);
	release_names(&m);
	fp_strbuf_release(&sb);
	return rc;
}
