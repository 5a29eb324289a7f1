/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Process-wide names and call paths for the profiler: kernel names, device types and Python
 * frames interned once for every session (core's string table), and call paths (sequences of
 * frame name ids, core's sequence table) interned to one id each, so that a launch hook passes
 * two integers instead of strings. One mutex guards both tables; lookups are a hash and a
 * compare. Sessions translate these ids into their own trees' ids (session-event.c). Not for
 * per-session data.
 */
#include "fp-setup.h"

#include <flagprism/demangle.h>
#include <flagprism/strbuf.h>

#include "core/intern-internal.h"
#include "core/seqtab-internal.h"
#include "prof/prof-internal.h"

#define MAX_PATHS ((uint32_t)1 << 24)
#define MAX_PATH_FRAMES ((size_t)1 << 28)
#define MAX_PATH_LEN 4096u

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fp_intern *names;
/* call paths: frame name ids, tagged with the name id of the path's note (FP_PROF_NO_NAME) */
static struct fp__seqtab paths = {.max_count = MAX_PATHS, .max_words = MAX_PATH_FRAMES};
static _Thread_local uint32_t cp_override = FP_PROF_NO_CALLPATH;
static struct fp_hashmap demangled_map; /* kernel name id -> its full demangled name id */
static bool demangled_init;
static char *demangle_buf; /* FP_DEMANGLE_MAX + 1 bytes, names_lock held */

static int names_ready(void)
{
	if (!names) {
		names = fp_intern_new();
		if (!names)
			return FP_ENOMEM;
	}
	return FP_OK;
}

int fp_prof_name_intern(const char *s, size_t len, uint32_t *id)
{
	int rc;

	if (!s && len)
		return FP_EINVAL;
	pthread_mutex_lock(&names_lock);
	rc = names_ready();
	if (!rc)
		rc = fp_intern_add(names, s, len, id);
	pthread_mutex_unlock(&names_lock);
	return rc;
}

const char *fp_prof_name_str(uint32_t id, size_t *len)
{
	const char *s;

	pthread_mutex_lock(&names_lock);
	s = names ? fp_intern_str(names, id, len) : NULL;
	pthread_mutex_unlock(&names_lock);
	return s;
}

static int intern_ids_locked(const uint32_t *ids, size_t n, uint32_t note, uint32_t *id)
{
	return fp__seqtab_add(&paths, ids, n, note, id);
}

/* names_lock held: the frames and note of path `id`; NULL for an unknown id. */
static const uint32_t *path_get(uint32_t id, uint32_t *n, uint32_t *note)
{
	return fp__seqtab_get(&paths, id, n, note);
}

int fp_prof_callpath_intern_ids(const uint32_t *ids, size_t n, uint32_t *id)
{
	uint32_t out;
	size_t i;
	int rc;

	if ((!ids && n) || !id || n > MAX_PATH_LEN)
		return n > MAX_PATH_LEN ? FP_ELIMIT : FP_EINVAL;
	pthread_mutex_lock(&names_lock);
	rc = names_ready();
	for (i = 0; !rc && i < n; i++)
		if (ids[i] >= fp_intern_count(names))
			rc = FP_EINVAL;
	if (!rc)
		rc = intern_ids_locked(ids, n, FP_PROF_NO_NAME, &out);
	pthread_mutex_unlock(&names_lock);
	if (!rc)
		*id = out;
	return rc;
}

int fp_prof_callpath_intern_noted(const uint32_t *ids, size_t n, const char *note, size_t note_len,
				  uint32_t *id)
{
	uint32_t out, nid = FP_PROF_NO_NAME;
	size_t i;
	int rc;

	if ((!ids && n) || !id || (!note && note_len))
		return FP_EINVAL;
	if (n > MAX_PATH_LEN || note_len > FP_PROF_MAX_NOTE)
		return FP_ELIMIT;
	pthread_mutex_lock(&names_lock);
	rc = names_ready();
	for (i = 0; !rc && i < n; i++)
		if (ids[i] >= fp_intern_count(names))
			rc = FP_EINVAL;
	if (!rc && note && note_len)
		rc = fp_intern_add(names, note, note_len, &nid);
	if (!rc)
		rc = intern_ids_locked(ids, n, nid, &out);
	pthread_mutex_unlock(&names_lock);
	if (!rc)
		*id = out;
	return rc;
}

const char *fp_prof_callpath_note(uint32_t id, size_t *len)
{
	const char *s = NULL;
	uint32_t note;

	pthread_mutex_lock(&names_lock);
	if (path_get(id, NULL, &note) && note != FP_PROF_NO_NAME && names)
		s = fp_intern_str(names, note, len);
	pthread_mutex_unlock(&names_lock);
	return s;
}

uint32_t fp__prof_kernel_display(uint32_t kernel)
{
	uint32_t out = kernel, did;
	const char *s;
	size_t len, dlen;
	uint64_t v;

	pthread_mutex_lock(&names_lock);
	if (!names || kernel >= fp_intern_count(names))
		goto out;
	if (!demangled_init) {
		fp_hashmap_init(&demangled_map);
		demangled_init = true;
	}
	if (fp_hashmap_get(&demangled_map, kernel, &v)) {
		out = (uint32_t)v;
		goto out;
	}
	s = fp_intern_str(names, kernel, &len);
	if (s && fp_demangle_is_mangled(s, len)) {
		if (!demangle_buf)
			demangle_buf = fp_malloc(FP_DEMANGLE_MAX + 1);
		/* A name we cannot demangle (or memory) stays as it is: still exact, just raw. */
		if (demangle_buf &&
		    fp_demangle(s, len, FP_DEMANGLE_FULL, demangle_buf, FP_DEMANGLE_MAX + 1,
				&dlen) == FP_OK &&
		    fp_intern_add(names, demangle_buf, dlen, &did) == FP_OK)
			out = did;
	}
	fp_hashmap_put(&demangled_map, kernel, out); /* a failed put only costs a redo */
out:
	pthread_mutex_unlock(&names_lock);
	return out;
}

uint32_t fp__prof_callpath_note_id(uint32_t id)
{
	uint32_t note;

	pthread_mutex_lock(&names_lock);
	if (!path_get(id, NULL, &note))
		note = FP_PROF_NO_NAME;
	pthread_mutex_unlock(&names_lock);
	return note;
}

int fp_prof_callpath_join(uint32_t outer, uint32_t inner, uint32_t *id)
{
	uint32_t *w = NULL, out, olen, ilen, onote, inote;
	const uint32_t *of, *inf;
	size_t skip = 0, n;
	int rc = FP_OK;

	if (!id)
		return FP_EINVAL;
	if (outer == FP_PROF_NO_CALLPATH || inner == FP_PROF_NO_CALLPATH || outer == inner) {
		*id = outer == FP_PROF_NO_CALLPATH ? inner : outer;
		return FP_OK;
	}
	pthread_mutex_lock(&names_lock);
	of = path_get(outer, &olen, &onote);
	inf = path_get(inner, &ilen, &inote);
	if (!of || !inf) {
		pthread_mutex_unlock(&names_lock);
		return FP_EINVAL;
	}
	while (skip < olen && skip < ilen && of[skip] == inf[skip])
		skip++;
	n = (size_t)olen + ilen - skip;
	if (n > MAX_PATH_LEN) {
		rc = FP_ELIMIT;
	} else {
		w = fp_reallocarray(NULL, n ? n : 1, sizeof(*w));
		if (!w)
			rc = FP_ENOMEM;
	}
	if (!rc) {
		/* the table's words may move while interning: copy first */
		memcpy(w, of, olen * sizeof(*w));
		memcpy(w + olen, inf + skip, (ilen - skip) * sizeof(*w));
		rc = intern_ids_locked(w, n, inote != FP_PROF_NO_NAME ? inote : onote, &out);
	}
	pthread_mutex_unlock(&names_lock);
	fp_free(w);
	if (!rc)
		*id = out;
	return rc;
}

uint32_t fp_prof_callpath_override_set(uint32_t id)
{
	uint32_t old = cp_override;

	cp_override = id;
	return old;
}

uint32_t fp_prof_callpath_override(void)
{
	return cp_override;
}

int fp_prof_callpath_intern(const struct fp_prof_frame *fr, size_t n, uint32_t *id)
{
	uint32_t small[64], *ids = small, out;
	char buf[512];
	struct fp_strbuf big;
	size_t i;
	int rc;

	if ((!fr && n) || !id)
		return FP_EINVAL;
	if (n > MAX_PATH_LEN)
		return FP_ELIMIT;
	if (n > FP_ARRAY_SIZE(small)) {
		ids = fp_reallocarray(NULL, n, sizeof(*ids));
		if (!ids)
			return FP_ENOMEM;
	}
	fp_strbuf_init(&big, 0);
	pthread_mutex_lock(&names_lock);
	rc = names_ready();
	for (i = 0; !rc && i < n; i++) {
		const struct fp_prof_frame *f = &fr[i];
		const char *text = buf;
		size_t len;
		int k;

		if ((!f->file && f->file_len) || (!f->func && f->func_len)) {
			rc = FP_EINVAL;
			break;
		}
		/* "file:func@line", Proton's frame convention. */
		k = snprintf(buf, sizeof(buf), "%.*s:%.*s@%" PRIu32, (int)FP_MIN(f->file_len, 4096),
			     f->file ? f->file : "", (int)FP_MIN(f->func_len, 4096),
			     f->func ? f->func : "", f->line);
		if (k < 0) {
			rc = FP_EINVAL;
			break;
		}
		len = (size_t)k;
		if (len >= sizeof(buf) || f->file_len > 4096 || f->func_len > 4096) {
			fp_strbuf_reset(&big);
			if ((rc = fp_strbuf_add(&big, f->file, f->file_len)) ||
			    (rc = fp_strbuf_addch(&big, ':')) ||
			    (rc = fp_strbuf_add(&big, f->func, f->func_len)) ||
			    (rc = fp_strbuf_addf(&big, "@%" PRIu32, f->line)))
				break;
			text = big.buf;
			len = big.len;
		}
		rc = fp_intern_add(names, text, len, &ids[i]);
	}
	if (!rc)
		rc = intern_ids_locked(ids, n, FP_PROF_NO_NAME, &out);
	pthread_mutex_unlock(&names_lock);
	fp_strbuf_release(&big);
	if (ids != small)
		fp_free(ids);
	if (!rc)
		*id = out;
	return rc;
}

int fp__prof_callpath_get(uint32_t id, uint32_t *out, size_t cap, size_t *n)
{
	const uint32_t *w;
	uint32_t len = 0;
	int rc = FP_EINVAL;

	*n = 0;
	pthread_mutex_lock(&names_lock);
	w = path_get(id, &len, NULL);
	if (w) {
		*n = len;
		if (*n <= cap && *n)
			memcpy(out, w, *n * sizeof(*out));
		rc = FP_OK;
	}
	pthread_mutex_unlock(&names_lock);
	return rc;
}

int fp_prof_callpath_length(uint32_t id, size_t *n)
{
	uint32_t one;

	if (!n)
		return FP_EINVAL;
	return fp__prof_callpath_get(id, &one, 0, n);
}

size_t fp_prof_callpath_frames(uint32_t id, uint32_t *out, size_t cap)
{
	size_t n;

	return fp__prof_callpath_get(id, out, cap, &n) ? 0 : n;
}

void fp__prof_names_release(void)
{
	pthread_mutex_lock(&names_lock);
	fp_intern_free(names);
	names = NULL;
	fp__seqtab_release(&paths);
	if (demangled_init)
		fp_hashmap_release(&demangled_map);
	demangled_init = false;
	fp_free(demangle_buf);
	demangle_buf = NULL;
	pthread_mutex_unlock(&names_lock);
}
