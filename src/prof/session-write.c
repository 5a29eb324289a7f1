/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The outputs of a profiling session: the table of writers (one row per output format, each
 * format in its own file), writing one session's file, the reasons a session did not end
 * cleanly, and the finalize of one claimed session (backend flush and stop, the metadata
 * first, the data files, the metadata again). The registry's side of finalize (claiming a
 * session, FP_PROF_ALL, shutdown) is in session.c.
 */
#include "fp-setup.h"

#include <flagprism/strbuf.h>

#include "prof/calltree-internal.h"
#include "prof/session-internal.h"

/* ---- writers and finalize ----------------------------------------------------------------------- */

static const struct fp_writer_ops writers[] = {
	{"hatchet", ".hatchet", fp__prof_write_hatchet},
	{"chrome_trace", ".chrome_trace.json", fp__prof_write_chrome_trace},
	{"meta", ".meta.json", fp__prof_write_meta},
};

const struct fp_writer_ops *fp_prof_writer_at(size_t i)
{
	return i < FP_ARRAY_SIZE(writers) ? &writers[i] : NULL;
}

const struct fp_writer_ops *fp_prof_writer_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < FP_ARRAY_SIZE(writers); i++)
		if (!strcmp(writers[i].name, name))
			return &writers[i];
	return NULL;
}

struct write_arg {
	struct fp_prof_session *s;
	const struct fp_writer_ops *wr;
};

static int write_cb(void *argp, struct fp_jsonw *w)
{
	struct write_arg *a = argp;

	return a->wr->write(a->s, w);
}

int fp_prof_session_write(struct fp_prof_session *s, const struct fp_writer_ops *wr,
			  const char *path, struct fp_diag *diag)
{
	struct write_arg a = {s, wr};
	int rc;

	if (!s || !wr || !path)
		return FP_EINVAL;
	pthread_mutex_lock(&s->lock);
	rc = fp__prof_save_json(path, 0, write_cb, &a, diag);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* Session lock held, or the session is ours alone (finalize). A reason is kept once; the ones
 * past the eighth, or past FP__INCOMPLETE_LEN bytes, are cut. */
void fp__prof_note_incomplete(struct fp_prof_session *s, const char *why)
{
	size_t i;

	for (i = 0; i < s->nincomplete; i++)
		if (!strncmp(s->incomplete[i], why, FP__INCOMPLETE_LEN - 1))
			return;
	if (s->nincomplete < FP_ARRAY_SIZE(s->incomplete))
		snprintf(s->incomplete[s->nincomplete++], FP__INCOMPLETE_LEN, "%s", why);
}

static int incomplete_fn(struct fp_prof_session *s, void *arg)
{
	fp__prof_note_incomplete(s, arg);
	return FP_OK;
}

int fp_prof_mark_incomplete(int session, const char *reason)
{
	if (!reason || !*reason)
		return FP_EINVAL;
	return fp__prof_for_sessions(session, incomplete_fn, (void *)reason);
}

static int write_one(struct fp_prof_session *s, const struct fp_writer_ops *wr,
		     struct fp_diag *diag)
{
	struct fp_strbuf path;
	int rc;

	fp_strbuf_init(&path, 0);
	rc = fp_strbuf_addstr(&path, s->name);
	if (!rc)
		rc = fp_strbuf_addstr(&path, wr->suffix);
	if (!rc)
		rc = fp_prof_session_write(s, wr, path.buf, diag);
	fp_strbuf_release(&path);
	if (!rc && s->nwritten < FP_ARRAY_SIZE(s->written))
		s->written[s->nwritten++] = (char *)wr->name;
	return rc;
}

/* Parse "a,b" into writer rows (meta excluded: always written last). */
static int pick_formats(struct fp_prof_session *s, const char *format,
			const struct fp_writer_ops **out, size_t *n, struct fp_diag *diag)
{
	const char *p = format;

	*n = 0;
	if (!format || !*format) {
		out[(*n)++] = fp_prof_writer_find("hatchet");
		if (s->opt.data == FP_PROF_DATA_TRACE)
			out[(*n)++] = fp_prof_writer_find("chrome_trace");
		return FP_OK;
	}
	while (*p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p), i;
		const struct fp_writer_ops *wr = NULL;

		for (i = 0; i < FP_ARRAY_SIZE(writers); i++)
			if (strlen(writers[i].name) == len && !memcmp(writers[i].name, p, len) &&
			    strcmp(writers[i].name, "meta") != 0)
				wr = &writers[i];
		if (!wr)
			return fp_diag_set(diag, FP_EINVAL, (uint64_t)(p - format),
					   "unknown output format '%.*s' (hatchet, chrome_trace)",
					   (int)FP_MIN(len, 64), p);
		for (i = 0; i < *n; i++)
			if (out[i] == wr)
				break;
		if (i == *n)
			out[(*n)++] = wr;
		p = e ? e + 1 : p + len;
	}
	return FP_OK;
}

int fp__prof_finalize_session(struct fp_prof_session *s, const char *format, struct fp_diag *diag)
{
	const struct fp_writer_ops *fmts[FP_ARRAY_SIZE(writers)];
	struct fp_prof_stats st;
	size_t i, n = 0;
	int rc = FP_OK, r;

	if (s->backend->flush && s->backend->flush(&s->sink) != FP_OK)
		fp__prof_note_incomplete(s, "backend flush failed");
	if (s->backend->stop(&s->sink) != FP_OK)
		fp__prof_note_incomplete(s, "backend stop failed");
	fp__prof_unregister(s);

	/* The session is ours alone from here. */
	fp__prof_stats_locked(s, &st);
	if (st.open_scopes)
		fp__prof_note_incomplete(s, "scopes still open at finalize");
	r = pick_formats(s, format, fmts, &n, diag);
	if (r) {
		rc = r;
		fp__prof_note_incomplete(s, "unknown output format requested");
	}
	/*
	 * The metadata first, marked incomplete, then the data files, then the metadata again: a
	 * process killed while writing (SIGKILL, a crash) leaves a meta file that says so, never
	 * a set of files that looks whole. Its failure here is reported by the last write.
	 */
	if (n) {
		size_t keep = s->nincomplete;

		fp__prof_note_incomplete(s, "finalize did not finish: the process ended while "
					    "writing the outputs");
		write_one(s, fp_prof_writer_find("meta"), NULL);
		s->nincomplete = keep;
		s->nwritten = 0;
	}
	for (i = 0; i < n; i++) {
		r = write_one(s, fmts[i], rc ? NULL : diag);
		if (r) {
			fp__prof_note_incomplete(s, "an output file could not be written");
			if (!rc)
				rc = r;
		}
	}
	r = write_one(s, fp_prof_writer_find("meta"), rc ? NULL : diag);
	if (r && !rc)
		rc = r;
	fp__prof_session_free(s);
	return rc;
}
