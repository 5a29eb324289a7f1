/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The trace's side of the HTML report: reads a Chrome trace (the profile's
 * `<stem>.chrome_trace.json`, docs/formats/profiler-formats.md) and keeps what a timeline picture needs:
 * complete ("X") slices with their track (pid, tid, named by the "M" metadata events: host
 * threads, device streams, per-SM or per-program scope tracks), name, category, start, duration,
 * nesting depth on the track, and the program of intra-kernel scopes. At most max_slices slices
 * are kept (the earliest), the rest counted. It does not check the format strictly
 * (tests/python/trace_event_check.py does) and ignores events it does not draw.
 */
#include "fp-setup.h"

#include <math.h>

#include <flagprism/json.h>

#include "core/intern-internal.h"
#include "html/html-internal.h"

#define TRACE_MAX_DEPTH 64

struct slice {
	double ts, dur;
	int64_t pid, tid, program;
	uint32_t name, cat, depth, track;
};

struct meta {
	int64_t pid, tid; /* tid INT64_MIN for process events */
	int kind;         /* 0 thread_name, 1 process_name, 2 thread_sort_index */
	const char *s;
	int64_t sort;
};

static int cmp_ts(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->dur > y->dur ? -1 : x->dur < y->dur;
}

static int cmp_track(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return cmp_ts(a, b);
}

static int cmp_meta(const void *a, const void *b)
{
	const struct meta *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static const struct meta *meta_find(const struct meta *m, size_t n, int kind, int64_t pid,
				    int64_t tid)
{
	struct meta key;

	key.kind = kind;
	key.pid = pid;
	key.tid = tid;
	return n ? bsearch(&key, m, n, sizeof(*m), cmp_meta) : NULL;
}

static int num_array(struct fp_strbuf *sb, const struct slice *s, size_t n, int which)
{
	size_t i;
	int rc = fp_strbuf_addch(sb, '[');

	for (i = 0; i < n && !rc; i++) {
		if (i)
			rc = fp_strbuf_addch(sb, ',');
		if (rc)
			break;
		switch (which) {
		case 0:
			rc = fp_strbuf_addf(sb, "%.3f", s[i].ts);
			break;
		case 1:
			rc = fp_strbuf_addf(sb, "%.3f", s[i].dur);
			break;
		case 2:
			rc = fp_strbuf_addf(sb, "%" PRIu32, s[i].track);
			break;
		case 3:
			rc = fp_strbuf_addf(sb, "%" PRIu32, s[i].name);
			break;
		case 4:
			rc = fp_strbuf_addf(sb, "%" PRIu32, s[i].cat);
			break;
		case 5:
			rc = fp_strbuf_addf(sb, "%" PRIu32, s[i].depth);
			break;
		default:
			rc = fp_strbuf_addf(sb, "%" PRId64, s[i].program);
			break;
		}
	}
	return rc ? rc : fp_strbuf_addch(sb, ']');
}

static int strings(struct fp_strbuf *sb, const struct fp_intern *in)
{
	struct fp_jsonw *w = fp_jsonw_new_strbuf(sb, 0);
	uint32_t i;
	size_t len;
	const char *s;
	int rc;

	if (!w)
		return FP_ENOMEM;
	fp_jsonw_array_begin(w);
	for (i = 0; i < fp_intern_count(in); i++) {
		s = fp_intern_str(in, i, &len);
		fp_jsonw_string_n(w, s, len);
	}
	fp_jsonw_array_end(w);
	rc = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	return rc;
}

/* Tracks of the kept slices (sorted by track), with their names; sets slice->track. */
static int tracks(struct fp_strbuf *sb, struct slice *s, size_t n, const struct meta *m, size_t nm,
		  size_t *ntracks)
{
	struct fp_jsonw *w = fp_jsonw_new_strbuf(sb, 0);
	const struct meta *tn, *pn, *so;
	uint32_t t = 0;
	size_t i;
	char buf[64];
	int rc;

	if (!w)
		return FP_ENOMEM;
	fp_jsonw_array_begin(w);
	for (i = 0; i < n; i++) {
		if (i && s[i].pid == s[i - 1].pid && s[i].tid == s[i - 1].tid) {
			s[i].track = t - 1;
			continue;
		}
		s[i].track = t++;
		tn = meta_find(m, nm, 0, s[i].pid, s[i].tid);
		pn = meta_find(m, nm, 1, s[i].pid, INT64_MIN);
		so = meta_find(m, nm, 2, s[i].pid, s[i].tid);
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_int(w, "pid", s[i].pid);
		fp_jsonw_kv_int(w, "tid", s[i].tid);
		if (tn) {
			fp_jsonw_kv_string(w, "name", tn->s);
		} else {
			snprintf(buf, sizeof(buf), "thread %" PRId64, s[i].tid);
			fp_jsonw_kv_string(w, "name", buf);
		}
		if (pn) {
			fp_jsonw_kv_string(w, "process", pn->s);
		} else {
			snprintf(buf, sizeof(buf), "process %" PRId64, s[i].pid);
			fp_jsonw_kv_string(w, "process", buf);
		}
		fp_jsonw_kv_int(w, "sort", so ? so->sort : s[i].tid);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	rc = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	*ntracks = t;
	return rc;
}

/* Nesting depth of each slice on its track (slices sorted by track, start, longer first). */
static void depths(struct slice *s, size_t n)
{
	double end[TRACE_MAX_DEPTH];
	size_t i, sp = 0;

	for (i = 0; i < n; i++) {
		if (i && s[i].track != s[i - 1].track)
			sp = 0;
		while (sp > 0 && s[i].ts >= end[sp - 1])
			sp--;
		s[i].depth = (uint32_t)sp;
		if (sp < TRACE_MAX_DEPTH)
			end[sp++] = s[i].ts + s[i].dur;
	}
}

static int bad_event(struct fp_diag *diag, const struct fp_json_doc *doc,
		     const struct fp_json_value *e, const char *path, size_t i, const char *what)
{
	return fp__html_bad(diag, doc, e, path, "traceEvents[%zu]: %s", i, what);
}

int fp_html_profile_add_trace(struct fp_html_page *p, const char *text, size_t len,
			      const char *path, struct fp_diag *diag)
{
	const struct fp_json_value *root, *events, *e, *args;
	struct fp_json_doc *doc = NULL;
	struct fp_intern *names = NULL, *cats = NULL;
	struct slice *s = NULL;
	struct meta *m = NULL;
	size_t i, n, ns = 0, nm = 0, kept, ntracks = 0, block;
	const char *ph, *name, *cat, *mname;
	struct fp_strbuf sb;
	double t0 = 0, t1 = 0, d;
	size_t nlen;
	int rc;

	fp_diag_clear(diag);
	if (!p || p->kind != FP_HTML_PROFILE || (!text && len))
		return fp_diag_set(diag, FP_EINVAL, 0, "not a profile page, or no text");
	if (p->timeline_block >= 0)
		return fp_diag_set(diag, FP_EINVAL, 0, "the page already has a timeline");
	fp_strbuf_init(&sb, 0);
	rc = fp_json_parse(text, len, NULL, &doc, diag);
	if (rc) {
		if (diag && path) {
			char msg[sizeof(diag->msg)];

			snprintf(msg, sizeof(msg), "%s", diag->msg);
			fp_diag_set_pos(diag, rc, diag->offset, diag->line, diag->col,
					"%s:%u:%u: %s", path, diag->line, diag->col, msg);
		}
		return rc;
	}
	root = fp_json_root(doc);
	events = fp_json_type(root) == FP_JSON_ARRAY ? root : fp_json_get(root, "traceEvents");
	if (fp_json_type(events) != FP_JSON_ARRAY) {
		rc = fp__html_bad(diag, doc, root, path,
				  "not a Chrome trace: no 'traceEvents' array");
		goto out;
	}
	n = fp_json_len(events);
	s = fp_reallocarray(NULL, n ? n : 1, sizeof(*s));
	m = fp_reallocarray(NULL, n ? n : 1, sizeof(*m));
	names = fp_intern_new();
	cats = fp_intern_new();
	if (!s || !m || !names || !cats) {
		rc = FP_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		e = fp_json_at(events, i);
		ph = fp_json_string(fp_json_get(e, "ph"), NULL);
		if (!ph)
			continue;
		args = fp_json_get(e, "args");
		if (strcmp(ph, "M") == 0) {
			struct meta *x = &m[nm];

			mname = fp_json_string(fp_json_get(e, "name"), NULL);
			if (!mname || !fp_json_int64(fp_json_get(e, "pid"), &x->pid))
				continue;
			x->tid = INT64_MIN;
			x->s = fp_json_string(fp_json_get(args, "name"), NULL);
			x->sort = 0;
			if (strcmp(mname, "thread_name") == 0 && x->s &&
			    fp_json_int64(fp_json_get(e, "tid"), &x->tid))
				x->kind = 0;
			else if (strcmp(mname, "process_name") == 0 && x->s)
				x->kind = 1;
			else if (strcmp(mname, "thread_sort_index") == 0 &&
				 fp_json_int64(fp_json_get(e, "tid"), &x->tid) &&
				 fp_json_int64(fp_json_get(args, "sort_index"), &x->sort))
				x->kind = 2;
			else
				continue;
			nm++;
			continue;
		}
		if (strcmp(ph, "X") != 0)
			continue;
		name = fp_json_string(fp_json_get(e, "name"), &nlen);
		cat = fp_json_string(fp_json_get(e, "cat"), NULL);
		if (!name || !fp_json_int64(fp_json_get(e, "pid"), &s[ns].pid) ||
		    !fp_json_int64(fp_json_get(e, "tid"), &s[ns].tid) ||
		    !fp_json_number(fp_json_get(e, "ts"), &s[ns].ts) ||
		    !fp_json_number(fp_json_get(e, "dur"), &d) || !(d >= 0) ||
		    !isfinite(s[ns].ts)) {
			rc = bad_event(diag, doc, e, path, i,
				       "an X event needs 'name', integer 'pid' and 'tid', and "
				       "numbers 'ts' and 'dur' >= 0");
			goto out;
		}
		s[ns].dur = d;
		rc = fp_intern_add(names, name, nlen, &s[ns].name);
		if (!rc)
			rc = fp_intern_add_str(cats, cat ? cat : "", &s[ns].cat);
		if (rc)
			goto out;
		if (!fp_json_int64(fp_json_get(args, "program"), &s[ns].program))
			s[ns].program = -1;
		ns++;
	}
	kept = ns;
	if (ns > p->o.max_slices) {
		qsort(s, ns, sizeof(*s), cmp_ts);
		kept = p->o.max_slices;
	}
	for (i = 0; i < kept; i++) {
		if (i == 0 || s[i].ts < t0)
			t0 = s[i].ts;
		if (i == 0 || s[i].ts + s[i].dur > t1)
			t1 = s[i].ts + s[i].dur;
	}
	for (i = 0; i < kept; i++)
		s[i].ts -= t0;
	if (nm)
		qsort(m, nm, sizeof(*m), cmp_meta);
	if (kept)
		qsort(s, kept, sizeof(*s), cmp_track);

	rc = fp_strbuf_addstr(&sb, "{\"tracks\":");
	rc = rc ? rc : tracks(&sb, s, kept, m, nm, &ntracks);
	depths(s, kept);
	rc = rc ? rc : fp_strbuf_addstr(&sb, ",\"names\":");
	rc = rc ? rc : strings(&sb, names);
	rc = rc ? rc : fp_strbuf_addstr(&sb, ",\"cats\":");
	rc = rc ? rc : strings(&sb, cats);
	rc = rc ? rc :
		  fp_strbuf_addf(&sb, ",\"total\":%zu,\"kept\":%zu,\"t0\":%.3f,\"span\":%.3f", ns,
				 kept, t0, t1 - t0);
	{
		static const char *const keys[] = {"ts",  "dur",   "track",  "name",
						   "cat", "depth", "program"};

		for (i = 0; i < 7 && !rc; i++) {
			rc = fp_strbuf_addf(&sb, ",\"%s\":", keys[i]);
			rc = rc ? rc : num_array(&sb, s, kept, (int)i);
		}
	}
	rc = rc ? rc : fp_strbuf_addch(&sb, '}');
	if (!rc && path) {
		struct fp_strbuf tail;
		struct fp_jsonw *w;

		/* the path as a JSON string, before the closing brace */
		sb.len--;
		fp_strbuf_init(&tail, 0);
		w = fp_jsonw_new_strbuf(&tail, 0);
		if (!w) {
			rc = FP_ENOMEM;
		} else {
			fp_jsonw_string(w, path);
			rc = fp_jsonw_finish(w);
			fp_jsonw_free(w);
		}
		rc = rc ? rc : fp_strbuf_addstr(&sb, ",\"path\":");
		rc = rc ? rc : fp_strbuf_add(&sb, tail.buf, tail.len);
		rc = rc ? rc : fp_strbuf_addch(&sb, '}');
		fp_strbuf_release(&tail);
	}
	if (rc)
		goto out;
	rc = fp__html_block_add(p, &sb, &block);
	if (rc)
		goto out;
	p->timeline_block = (long)block;
	p->st.slices = kept;
	p->st.slices_total = ns;
	if (kept < ns)
		fp_html_page_note(p,
				  "timeline: the first %zu of %zu slices are shown (--max-slices)",
				  kept, ns);
out:
	fp_strbuf_release(&sb);
	fp_intern_free(names);
	fp_intern_free(cats);
	fp_free(m);
	fp_free(s);
	fp_json_doc_free(doc);
	return rc;
}
