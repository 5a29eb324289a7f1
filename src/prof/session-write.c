/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The outputs of a profiling session and its end: the table of writers (made from
 * FP__PROF_WRITERS in prof-internal.h: one row per output format, each format in its own file),
 * writing one session's file, the reasons a session did not end cleanly, and finalize: of one
 * claimed session (backend flush and stop, the metadata first, the data files, the metadata
 * again), of one or every session (FP_PROF_ALL), and shutdown. Claiming a session is the
 * registry's (session.c).
 */
#include "fp-setup.h"

#include <stdlib.h>
#include <unistd.h>

#include <flagprism/outfile.h>
#include <flagprism/strbuf.h>

#include "prof/calltree-internal.h"
#include "prof/session-internal.h"

/* ---- writers and finalize ----------------------------------------------------------------------- */

static const struct fp_writer_ops writers[] = {
#define FP__PROF_WRITER_ROW(name, suffix, writer, when) {name, suffix, writer},
	FP__PROF_WRITERS(FP__PROF_WRITER_ROW)
#undef FP__PROF_WRITER_ROW
};

/* When each row is written: FP__PROF_OUT_* (prof-internal.h). */
static const unsigned char writer_when[] = {
#define FP__PROF_WRITER_WHEN(name, suffix, writer, when) when,
	FP__PROF_WRITERS(FP__PROF_WRITER_WHEN)
#undef FP__PROF_WRITER_WHEN
};

_Static_assert(FP_ARRAY_SIZE(writers) == FP__PROF_NWRITERS, "a session keeps one output a row");

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

/* `stem` + the writer's suffix, newly allocated, or NULL. */
static char *output_path(const char *stem, const struct fp_writer_ops *wr)
{
	size_t n = strlen(stem) + strlen(wr->suffix) + 1;
	char *p = fp_malloc(n);

	if (p)
		snprintf(p, n, "%s%s", stem, wr->suffix);
	return p;
}

/* Record that `wr`'s file was written at `shown` (taken over). */
static void note_written(struct fp_prof_session *s, const struct fp_writer_ops *wr, char *shown)
{
	if (s->nwritten < FP_ARRAY_SIZE(s->written)) {
		s->written[s->nwritten] = (char *)wr->name;
		s->written_at[s->nwritten++] = shown;
	} else {
		fp_free(shown);
	}
}

static void forget_written(struct fp_prof_session *s)
{
	size_t i;

	for (i = 0; i < s->nwritten; i++)
		fp_free(s->written_at[i]);
	s->nwritten = 0;
}

/* Write `wr`'s file at `stem` + suffix; shown in the metadata and to the caller as `shown_stem`
 * + suffix. */
static int write_at(struct fp_prof_session *s, const struct fp_writer_ops *wr, const char *stem,
		    const char *shown_stem, struct fp_diag *diag)
{
	char *path = output_path(stem, wr), *shown = NULL;
	int rc;

	if (!path)
		return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	rc = fp_prof_session_write(s, wr, path, diag);
	if (!rc) {
		shown = output_path(shown_stem, wr);
		if (!shown)
			rc = fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	}
	fp_free(path);
	if (!rc)
		note_written(s, wr, shown);
	return rc;
}

static int write_one(struct fp_prof_session *s, const struct fp_writer_ops *wr,
		     struct fp_diag *diag)
{
	return write_at(s, wr, s->path, s->name, diag);
}

/*
 * Write `wr`'s file into the session's rescue directory (made on first use: a new private
 * directory under $TMPDIR, else /tmp), after it could not be written where it belongs. FP_OK
 * with the rescued path appended to diag's message, or the rescue's failure (diag untouched).
 */
static int rescue(struct fp_prof_session *s, const struct fp_writer_ops *wr, struct fp_diag *diag)
{
	const char *tmp = getenv("TMPDIR"), *base = strrchr(s->path, '/');
	struct fp_diag d;
	char *stem;
	size_t n, used;
	int rc;

	if (fp_outfile_interrupted())
		return FP_EIO; /* a signal asked for the end: nothing more is written */
	if (!tmp || tmp[0] != '/')
		tmp = "/tmp";
	if (!s->rescue_dir) {
		n = strlen(tmp) + 32;
		s->rescue_dir = fp_malloc(n);
		if (!s->rescue_dir)
			return FP_ENOMEM;
		snprintf(s->rescue_dir, n, "%s/flagprism-rescue-XXXXXX", tmp);
		if (!mkdtemp(s->rescue_dir)) {
			fp_free(s->rescue_dir);
			s->rescue_dir = NULL;
			return FP_EIO;
		}
	}
	n = strlen(s->rescue_dir) + strlen(base) + 1;
	stem = fp_malloc(n);
	if (!stem)
		return FP_ENOMEM;
	snprintf(stem, n, "%s%s", s->rescue_dir, base);
	fp_diag_clear(&d);
	rc = write_at(s, wr, stem, stem, &d);
	if (!rc && diag) {
		/* where the file went matters more than the whole cause: the cause is cut so that the
		 * rescued path fits whole (a path longer than the message itself is cut at its
		 * start, keeping the file's name) */
		char tail[sizeof(diag->msg)];
		size_t tl, cap = sizeof(diag->msg);

		tl = (size_t)snprintf(tail, sizeof(tail), "; written to %s%s instead", stem,
				      wr->suffix);
		used = strlen(diag->msg);
		if (tl >= sizeof(tail)) { /* the path alone does not fit: keep its end */
			size_t full = strlen(stem) + strlen(wr->suffix), keep = cap - 1 - 24;

			snprintf(tail, sizeof(tail), "; written to ...%s%s instead",
				 full > keep ? (stem + strlen(stem) - (keep - strlen(wr->suffix))) :
					       stem,
				 wr->suffix);
			tl = strlen(tail);
			used = 0;
		} else if (used + tl >= cap) {
			/* the cause's middle goes (its path, usually): its start says what failed,
			 * its end why, with the errno; the end is longer ("no process is reading
			 * this FIFO (ENXIO)" must fit beside a long path) */
			size_t room = cap - 1 - tl, start = room > 8 ? (room - 3) / 3 : 0;
			size_t end = room >= 3 + start ? room - 3 - start : 0;

			memmove(diag->msg + start + 3, diag->msg + used - end, end);
			memcpy(diag->msg + start, "...", room >= 3 ? 3 : room);
			used = room;
		}
		memcpy(diag->msg + used, tail, tl < cap - used ? tl + 1 : cap - used);
		diag->msg[cap - 1] = '\0';
	}
	fp_free(stem);
	return rc;
}

/* The reason a file could not be written, for the metadata's incomplete_reasons. */
static void note_failure(struct fp_prof_session *s, const struct fp_diag *d)
{
	char why[FP__INCOMPLETE_LEN];

	snprintf(why, sizeof(why), "an output file could not be written: %.*s",
		 (int)(sizeof(why) - 40), d->msg[0] ? d->msg : "unknown reason");
	fp__prof_note_incomplete(s, why);
}

/* The names of the formats that can be named (all but the metadata), for a message. */
static void format_names(char *buf, size_t size)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < FP_ARRAY_SIZE(writers) && used < size; i++)
		if (writer_when[i] != FP__PROF_OUT_META)
			used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "",
						 writers[i].name);
}

/* Parse "a,b" into writer rows (meta excluded: always written last); none named: the rows
 * written by default for the session's data. */
static int pick_formats(struct fp_prof_session *s, const char *format,
			const struct fp_writer_ops **out, size_t *n, struct fp_diag *diag)
{
	const char *p = format;
	size_t i;

	*n = 0;
	if (!format || !*format) {
		for (i = 0; i < FP_ARRAY_SIZE(writers); i++)
			if (writer_when[i] == FP__PROF_OUT_DEFAULT ||
			    (writer_when[i] == FP__PROF_OUT_TRACE &&
			     s->opt.data == FP_PROF_DATA_TRACE))
				out[(*n)++] = &writers[i];
		return FP_OK;
	}
	while (*p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		const struct fp_writer_ops *wr = NULL;

		for (i = 0; i < FP_ARRAY_SIZE(writers); i++)
			if (strlen(writers[i].name) == len && !memcmp(writers[i].name, p, len) &&
			    writer_when[i] != FP__PROF_OUT_META)
				wr = &writers[i];
		if (!wr) {
			char names[256];

			format_names(names, sizeof(names));
			return fp_diag_set(diag, FP_EINVAL, (uint64_t)(p - format),
					   "unknown output format '%.*s' (%s)",
					   (int)FP_MIN(len, 64), p, names);
		}
		for (i = 0; i < *n; i++)
			if (out[i] == wr)
				break;
		if (i == *n)
			out[(*n)++] = wr;
		p = e ? e + 1 : p + len;
	}
	return FP_OK;
}

/* The metadata's row. */
static const struct fp_writer_ops *meta_writer(void)
{
	size_t i;

	for (i = 0; i < FP_ARRAY_SIZE(writers); i++)
		if (writer_when[i] == FP__PROF_OUT_META)
			return &writers[i];
	return NULL;
}

/* Finalize a claimed session: backend flush and stop, out of the registry, its files (each
 * reported to `fn` when not NULL); frees it. */
static int finalize_session(struct fp_prof_session *s, const char *format, fp_prof_output_fn fn,
			    void *arg, struct fp_diag *diag)
{
	const struct fp_writer_ops *fmts[FP_ARRAY_SIZE(writers)], *meta = meta_writer();
	struct fp_prof_stats st;
	struct fp_diag d;
	size_t i, n = 0;
	bool first_meta = false;
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
	 * process killed while writing (SIGKILL, a crash, a signal's deadline) leaves a meta file
	 * that says so, never a set of files that looks whole. Its failure here is reported by
	 * the last write.
	 */
	if (n) {
		size_t keep = s->nincomplete;

		fp__prof_note_incomplete(s, "finalize did not finish: the process ended or was "
					    "interrupted while writing the outputs");
		first_meta = write_one(s, meta, NULL) == FP_OK;
		s->nincomplete = keep;
		forget_written(s);
	}
	for (i = 0; i < n; i++) {
		fp_diag_clear(&d);
		r = write_one(s, fmts[i], &d);
		if (!r)
			continue;
		/* Nothing recorded is lost for a full disk or a directory gone: the file goes to
		 * a rescue directory, and the metadata says why and where. */
		if (r == FP_EIO)
			rescue(s, fmts[i], &d);
		note_failure(s, &d);
		if (!rc) {
			rc = r;
			if (diag)
				*diag = d;
		}
	}
	fp_diag_clear(&d);
	r = write_one(s, meta, &d);
	if (r && first_meta && !fp_outfile_interrupted()) {
		/* The first metadata file would say the process ended while writing: take it
		 * away (which may also free the room the second one needs) and try again. */
		char *path = output_path(s->path, meta);

		if (path)
			unlink(path);
		fp_free(path);
		fp_diag_clear(&d);
		r = write_one(s, meta, &d);
	}
	if (r == FP_EIO) {
		note_failure(s, &d);
		rescue(s, meta, &d);
	}
	if (r && !rc) {
		rc = r;
		if (diag)
			*diag = d;
	}
	for (i = 0; fn && i < s->nwritten; i++)
		fn(arg, s->written[i], s->written_at[i]);
	fp__prof_session_free(s);
	return rc;
}

/* ---- finalize and shutdown ------------------------------------------------------------------ */

int fp_prof_finalize_each(int session, const char *format, fp_prof_output_fn fn, void *arg,
			  struct fp_diag *diag)
{
	struct fp_prof_session *s;
	int rc = FP_OK;

	if (session == FP_PROF_ALL) {
		int ids[FP_PROF_MAX_SESSIONS], n = fp__prof_open_ids(ids), i;

		for (i = 0; i < n; i++) {
			int r = fp_prof_finalize_each(ids[i], format, fn, arg, rc ? NULL : diag);

			if (r && r != FP_ENOENT && r != FP_ESTATE && !rc)
				rc = r;
		}
		return rc;
	}
	s = fp__prof_claim(session, &rc);
	if (!s)
		return rc;
	return finalize_session(s, format, fn, arg, diag);
}

int fp_prof_finalize(int session, const char *format, struct fp_diag *diag)
{
	return fp_prof_finalize_each(session, format, NULL, NULL, diag);
}

void fp_prof_shutdown(void)
{
	int ids[FP_PROF_MAX_SESSIONS], n = fp__prof_open_ids(ids), i, rc;

	for (i = 0; i < n; i++) {
		struct fp_prof_session *s = fp__prof_claim(ids[i], &rc);

		if (!s)
			continue;
		fp__prof_note_incomplete(s, "shutdown without finalize");
		finalize_session(s, NULL, NULL, NULL, NULL);
	}
	fp__prof_lctx_release();
	fp__prof_names_release();
}
