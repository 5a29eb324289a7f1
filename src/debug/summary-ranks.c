/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Merging the Debugger's summaries of a job's ranks (fp_ranks_merge_summaries()): each rank's
 * summary.json, as summary.c writes it, is read back, checked, and the ranks are written as
 * one summary in the same schema, where every kernel and every finding carries the rank it
 * happened on, totals are summed, and missing or incomplete ranks are said, both as JSON and as
 * text. Not here: writing one process's summary (summary.c) or deciding findings.
 */
#include "fp-setup.h"

#include <errno.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <flagprism/json.h>
#include <flagprism/ranks.h>
#include <flagprism/version.h>

#include "core/core-internal.h"

#define SCHEMA "flagprism.debug.summary"
/* A summary lists at most 65,536 kernels and findings with short strings: far below this. */
#define MAX_SUMMARY_BYTES ((size_t)1 << 30)
#define MAX_COUNT_KEYS 32

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
	in->findings = fp_json_get(r, "findings");
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
	return FP_OK;
}

struct merged {
	struct sin *in;
	size_t n;
	size_t *order; /* by rank */
	int64_t *ranks;
	int64_t world;
	int64_t missing[64];
	size_t nmissing;
	char missing_text[256], ranks_text[256];
	struct counts totals, dropped;
	size_t incomplete;
};

static int write_with_rank(struct fp_jsonw *w, const struct fp_json_value *obj, int64_t rank)
{
	size_t i;
	int rc = FP_OK;

	fp_jsonw_object_begin(w);
	fp_jsonw_kv_int(w, "rank", rank);
	for (i = 0; !rc && i < fp_json_len(obj); i++) {
		const char *key;
		size_t kl;
		const struct fp_json_value *v = fp_json_member(obj, i, &key, &kl);

		if (kl == 4 && !memcmp(key, "rank", 4))
			continue;
		fp_jsonw_key_n(w, key, kl);
		rc = fp__jsonw_value(w, v);
	}
	return rc ? rc : fp_jsonw_object_end(w);
}

static void kv_copy_or_null(struct fp_jsonw *w, const char *k, const struct fp_json_value *v)
{
	fp_jsonw_key(w, k);
	if (v)
		fp__jsonw_value(w, v);
	else
		fp_jsonw_null(w);
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
	fp_jsonw_key(w, "ranks");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "merged", m->ranks_text);
	fp_jsonw_kv_int(w, "world_size", m->world);
	fp_jsonw_kv_string(w, "missing", m->missing_text);
	fp_jsonw_key(w, "inputs");
	fp_jsonw_array_begin(w);
	for (k = 0; k < m->n; k++) {
		const struct sin *in = &m->in[m->order[k]];

		fp_jsonw_object_begin(w);
		fp_jsonw_kv_int(w, "rank", in->rank);
		if (in->host)
			fp_jsonw_kv_string(w, "host", in->host);
		else
			fp_jsonw_kv_null(w, "host");
		fp_jsonw_kv_string(w, "summary", in->name);
		fp_jsonw_kv_bool(w, "complete", in->complete);
		if (in->reason)
			fp_jsonw_kv_string(w, "incomplete_reason", in->reason);
		else
			fp_jsonw_kv_null(w, "incomplete_reason");
		if (in->has_exit)
			fp_jsonw_kv_int(w, "exit_status", in->exit_status);
		else
			fp_jsonw_kv_null(w, "exit_status");
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_object_end(w);
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
	fp_jsonw_key(w, "kernels");
	fp_jsonw_array_begin(w);
	for (k = 0; !rc && k < m->n; k++) {
		const struct sin *in = &m->in[m->order[k]];

		for (i = 0; !rc && i < fp_json_len(in->kernels); i++)
			rc = write_with_rank(w, fp_json_at(in->kernels, i), in->rank);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_key(w, "findings");
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
			if (str_of(e, "report", NULL))
				fprintf(f, "      report: %s\n", str_of(e, "report", ""));
		}
	}
	return ferror(f) ? FP_EIO : FP_OK;
}

static void free_inputs(struct sin *in, size_t n)
{
	size_t i;

	for (i = 0; in && i < n; i++)
		fp_json_doc_free(in[i].doc);
	fp_free(in);
}

/* Parse, check and order the inputs; fills everything of `m` but the output. */
static int prepare(struct merged *m, const char *const *texts, const size_t *lens,
		   const char *const *names, size_t n, struct fp_diag *diag)
{
	size_t i, k;
	int64_t maxr = -1;
	int rc = FP_OK;

	memset(m, 0, sizeof(*m));
	if (n == 0 || n > FP_RANKS_MAX)
		return fp_diag_set(diag, FP_EINVAL, 0, "expected 1 to %d summaries", FP_RANKS_MAX);
	m->in = fp_calloc(n, sizeof(*m->in));
	m->order = fp_calloc(n, sizeof(*m->order));
	m->ranks = fp_calloc(n, sizeof(*m->ranks));
	if (!m->in || !m->order || !m->ranks)
		return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	m->n = n;
	m->world = 0;
	for (i = 0; !rc && i < n; i++) {
		struct sin *in = &m->in[i];

		in->name = names[i];
		rc = fp_json_parse(texts[i], lens[i], &summary_limits, &in->doc, diag);
		if (rc == FP_EFORMAT || rc == FP_ELIMIT) {
			char msg[sizeof(diag->msg)];

			if (diag) {
				memcpy(msg, diag->msg, sizeof(msg));
				snprintf(diag->msg, sizeof(diag->msg), "%.100s:%u:%u: %.130s",
					 names[i], diag->line, diag->col, msg);
			}
			break;
		}
		if (rc)
			break;
		in->root = fp_json_root(in->doc);
		rc = read_one(in, i, diag);
		if (rc)
			break;
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
		maxr = FP_MAX(maxr, in->rank);
		if ((rc = add_counts(&m->totals, in, "totals", diag)) ||
		    (rc = add_counts(&m->dropped, in, "dropped", diag)))
			break;
		m->incomplete += !in->complete;
	}
	if (rc)
		return rc;
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

static void report(const struct merged *m, struct fp_ranks_summary_report *rep)
{
	size_t k;

	if (!rep)
		return;
	memset(rep, 0, sizeof(*rep));
	rep->ranks = m->n;
	rep->world_size = m->world;
	for (k = 0; k < m->n; k++) {
		rep->kernels += fp_json_len(m->in[k].kernels);
		rep->findings += fp_json_len(m->in[k].findings);
	}
	rep->nmissing = m->nmissing;
	snprintf(rep->missing, sizeof(rep->missing), "%s", m->missing_text);
	rep->incomplete = m->incomplete;
}

static void release(struct merged *m)
{
	free_inputs(m->in, m->n);
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
	rc = prepare(&m, texts, lens, names, n, diag);
	if (!rc && json)
		rc = write_json(&m, json);
	if (!rc && txt)
		rc = write_txt(&m, txt);
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
	return write_json(arg, f);
}

static int txt_cb(void *arg, FILE *f)
{
	return write_txt(arg, f);
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

int fp_ranks_merge_summaries(const char *const *paths, size_t n, const char *out_dir,
			     struct fp_ranks_summary_report *rep, struct fp_diag *diag)
{
	char **texts = NULL, **names = NULL;
	size_t *lens = NULL, i;
	struct merged m;
	struct stat sb;
	int rc = FP_OK;

	memset(&m, 0, sizeof(m));
	if (!paths || !out_dir || !out_dir[0] || n == 0 || n > FP_RANKS_MAX)
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "fp_ranks_merge_summaries: no inputs or no output directory");
	texts = fp_calloc(n, sizeof(*texts));
	names = fp_calloc(n, sizeof(*names));
	lens = fp_calloc(n, sizeof(*lens));
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
	if (!rc)
		rc = prepare(&m, (const char *const *)texts, lens, (const char *const *)names, n,
			     diag);
	if (!rc)
		rc = make_dirs(out_dir, diag);
	if (!rc) {
		size_t pl = strlen(out_dir) + 16;
		char *p = fp_malloc(pl);

		if (!p) {
			rc = fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
		} else {
			snprintf(p, pl, "%s/summary.json", out_dir);
			rc = fp__outfile_save(p, json_cb, &m, diag);
			if (!rc) {
				snprintf(p, pl, "%s/summary.txt", out_dir);
				rc = fp__outfile_save(p, txt_cb, &m, diag);
			}
			fp_free(p);
		}
	}
	if (!rc)
		report(&m, rep);
out:
	release(&m);
	for (i = 0; i < n; i++) {
		if (texts)
			fp_free(texts[i]);
		if (names)
			fp_free(names[i]);
	}
	fp_free(texts);
	fp_free(names);
	fp_free(lens);
	return rc;
}
