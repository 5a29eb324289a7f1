/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Part `prof` of flagprism._ext: the Profiler's binding of include/flagprism/prof.h and
 * backend.h (sessions, scopes, states, host-timed launches), the Python call path read from the
 * running frames, and `ttir_estimate()`, which parses a kernel's TTIR and returns its per-program
 * estimate (include/flagprism/ttir.h). Python decides *when* to call these (python/flagprism/
 * profiler.py and _profhook.py); nothing is aggregated, formatted or written here.
 *
 * The call path is read in C because a launch hook runs on every launch: PyEval_GetFrame() and
 * PyFrame_GetBack() walk the stack, and a cache keyed by (code object, line) of every frame turns
 * a repeated stack into its interned call-path id without touching a string. The cache and the
 * list of skipped file prefixes are process-wide and guarded by the GIL (the profiler core's
 * names are process-wide too); this part does not support free-threaded builds.
 *
 * Scope pairing for calls that target every session is checked here, per thread, with a stack
 * of open scope names kept in the thread state's dict: it catches an exit without an enter and
 * a mismatched name even when no session is open, and reports both as FP_ESTATE through
 * fpy_raise(), with the same wording as the core.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

#include <flagprism/backend.h>
#include <flagprism/inductor.h>
#include <flagprism/prof.h>
#include <flagprism/status.h>
#include <flagprism/ttir.h>

#include "ext.h"

#define CP_MAX_WALK 512      /* frames examined per launch; deeper stacks keep the innermost */
#define CP_MAX_FRAMES 256    /* frames kept in one call path (the innermost ones) */
#define CP_CACHE_SLOTS 8192u /* power of two; at most half are filled */
#define CP_MAX_PREFIXES 16
#define SCOPE_STACK_MAX 4096 /* open scopes per thread, all sessions together */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define FP_ARRAY_SIZE_FPY(a) ARRAY_SIZE(a)

/* ---- arguments -------------------------------------------------------------------------------- */

/* A session argument: None means every session (FP_PROF_ALL). 0 or -1 with an exception. */
static int session_arg(PyObject *obj, int *out)
{
	long v;

	if (!obj || obj == Py_None) {
		*out = FP_PROF_ALL;
		return 0;
	}
	v = PyLong_AsLong(obj);
	if (v == -1 && PyErr_Occurred())
		return -1;
	if (v < FP_PROF_ALL || v > INT_MAX) {
		PyErr_Format(PyExc_ValueError, "invalid session id %ld", v);
		return -1;
	}
	*out = (int)v;
	return 0;
}

#if defined(__GNUC__)
#define FPY_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FPY_PRINTF(a, b)
#endif

/* fpy_raise() for NULL-returning functions. */
static PyObject *raise_diag(PyObject *module, int status, const char *fmt, ...) FPY_PRINTF(3, 4);

/* Raise `status` with a diagnostic message made here (not by the library). */
static PyObject *raise_diag(PyObject *module, int status, const char *fmt, ...)
{
	struct fp_diag diag;
	va_list ap;

	fp_diag_clear(&diag);
	diag.status = status;
	va_start(ap, fmt);
	PyOS_vsnprintf(diag.msg, sizeof(diag.msg), fmt, ap);
	va_end(ap);
	fpy_raise(module, status, &diag);
	return NULL;
}

/* ---- call paths --------------------------------------------------------------------------------- */

/*
 * Where a frame is, cheaply: the line number is only computed (a scan of the code's line
 * table) when a call path is built on a cache miss, not on every launch.
 */
#if PY_VERSION_HEX >= 0x030B0000
#define POS_LINE(co, pos) ((pos) >= 0 ? PyCode_Addr2Line((co), (pos)) : (co)->co_firstlineno)
#else
#define POS_LINE(co, pos) (pos)
#endif

static struct fpy_fcache cp_cache = {.nslots = CP_CACHE_SLOTS};
static struct fpy_prefixes cp_prefixes;

/* Intern the call path of raw frames (innermost first), skipping flagprism/triton frames. */
static int callpath_build(const struct fpy_frame_key *raw, size_t n, bool truncated, uint32_t *id)
{
	struct fp_prof_frame fr[CP_MAX_FRAMES + 1];
	size_t kept = 0, i, j;

	/* Innermost first, then reversed: a deep stack keeps the frames nearest the launch. */
	for (i = 0; i < n; i++) {
		PyCodeObject *co = (PyCodeObject *)raw[i].code;
		Py_ssize_t flen, nlen;
		const char *file = PyUnicode_AsUTF8AndSize(co->co_filename, &flen);
		const char *func;
		int line;

		if (!file)
			return -1;
		if (fpy_prefixes_match(&cp_prefixes, file, (size_t)flen))
			continue;
		if (kept == CP_MAX_FRAMES) {
			truncated = true;
			break;
		}
		func = PyUnicode_AsUTF8AndSize(co->co_name, &nlen);
		if (!func)
			return -1;
		fr[kept].file = file;
		fr[kept].file_len = (size_t)flen;
		fr[kept].func = func;
		fr[kept].func_len = (size_t)nlen;
		line = POS_LINE(co, raw[i].pos);
		fr[kept].line = line > 0 ? (uint32_t)line : 0;
		kept++;
	}
	if (truncated) {
		/* Say that outer frames are missing rather than pretend the path is complete. */
		fr[kept].file = "[flagprism]";
		fr[kept].file_len = strlen("[flagprism]");
		fr[kept].func = "truncated";
		fr[kept].func_len = strlen("truncated");
		fr[kept].line = 0;
		kept++;
	}
	for (i = 0, j = kept; i < j / 2; i++) {
		struct fp_prof_frame t = fr[i];

		fr[i] = fr[j - 1 - i];
		fr[j - 1 - i] = t;
	}
	return fp_prof_callpath_intern(fr, kept, id);
}

/*
 * The call-path id of the calling Python code: FP_OK and *id, or a negative status (-1 with a
 * Python exception set when a string could not be read). Part `cupti` uses it too (ext.h).
 */
int fpy_prof_callpath_read(uint32_t *id)
{
	struct fpy_frame_key raw[CP_MAX_WALK];
	struct fpy_fcache_entry *e;
	bool truncated;
	uint64_t h;
	size_t n;
	int rc;

	/* A framework's launch wrapper knows better (fp_prof_callpath_override_set()). */
	*id = fp_prof_callpath_override();
	if (*id != FP_PROF_NO_CALLPATH)
		return FP_OK;
	/* Every frame on the stack is executing, so its code object outlives this call. */
	n = fpy_frames_read(raw, CP_MAX_WALK, &truncated);
	h = fpy_fcache_hash(raw, n, truncated);
	e = fpy_fcache_find(&cp_cache, raw, n, truncated, h);
	if (!e)
		return -1;
	if (e->keys) {
		*id = e->id;
		return FP_OK;
	}
	rc = callpath_build(raw, n, truncated, id);
	if (rc)
		return rc;
	/* callpath_build runs no Python code: e is still the slot. A full cache only costs speed:
	 * the path is interned again on the next miss. */
	fpy_fcache_put(&cp_cache, e, raw, n, truncated, h, NULL, *id);
	return FP_OK;
}

PyDoc_STRVAR(
	prof_set_skip_prefixes_doc,
	"prof_set_skip_prefixes(prefixes)\n\n"
	"Frames whose file name starts with one of these strings (at most 16) are left out of\n"
	"Python call paths. Replaces the previous list and forgets cached call paths.");

static PyObject *prof_set_skip_prefixes(PyObject *module, PyObject *arg)
{
	int rc = fpy_prefixes_set(&cp_prefixes, arg, CP_MAX_PREFIXES, "prof_set_skip_prefixes");

	if (rc == -2)
		return raise_diag(module, FP_ELIMIT, "at most %d skipped prefixes",
				  CP_MAX_PREFIXES);
	if (rc)
		return NULL;
	fpy_fcache_clear(&cp_cache);
	Py_RETURN_NONE;
}

/* The frame names of a call-path id as a tuple of str. */
static PyObject *callpath_tuple(uint32_t id)
{
	uint32_t ids[CP_MAX_FRAMES + 1];
	size_t n = fp_prof_callpath_frames(id, ids, ARRAY_SIZE(ids)), i;
	PyObject *t;

	if (n > ARRAY_SIZE(ids))
		n = ARRAY_SIZE(ids);
	t = PyTuple_New((Py_ssize_t)n);
	if (!t)
		return NULL;
	for (i = 0; i < n; i++) {
		size_t len;
		const char *s = fp_prof_name_str(ids[i], &len);
		PyObject *str =
			PyUnicode_DecodeUTF8(s ? s : "", s ? (Py_ssize_t)len : 0, "replace");

		if (!str) {
			Py_DECREF(t);
			return NULL;
		}
		PyTuple_SET_ITEM(t, (Py_ssize_t)i, str);
	}
	return t;
}

PyDoc_STRVAR(prof_callpath_doc,
	     "prof_callpath() -> tuple[str, ...]\n\n"
	     "The call path a launch from here would be filed under with context \"python\":\n"
	     "\"file:function@line\" frames, outermost first, skipped prefixes left out.");

static PyObject *prof_callpath(PyObject *module, PyObject *unused)
{
	uint32_t id;
	int rc = fpy_prof_callpath_read(&id);

	if (rc == -1 && PyErr_Occurred())
		return NULL;
	if (rc)
		return fpy_raise_null(module, rc, NULL);
	return callpath_tuple(id);
}

PyDoc_STRVAR(prof_callpath_id_doc,
	     "prof_callpath_id() -> int\n\n"
	     "The interned id of the call path a launch from here would be filed under (what\n"
	     "prof_callpath() names).");

static PyObject *prof_callpath_id(PyObject *module, PyObject *unused)
{
	uint32_t id;
	int rc = fpy_prof_callpath_read(&id);

	(void)unused;
	if (rc == -1 && PyErr_Occurred())
		return NULL;
	if (rc)
		return fpy_raise_null(module, rc, NULL);
	return PyLong_FromUnsignedLong(id);
}

PyDoc_STRVAR(prof_callpath_frames_doc,
	     "prof_callpath_frames(id) -> tuple[str, ...]\n\n"
	     "The frames of call path `id` (from prof_callpath_id()), outermost first.");

static PyObject *prof_callpath_frames(PyObject *module, PyObject *arg)
{
	unsigned long v = PyLong_AsUnsignedLong(arg);
	size_t n;
	int rc;

	if (v == (unsigned long)-1 && PyErr_Occurred())
		return NULL;
	if (v > UINT32_MAX)
		return PyErr_Format(PyExc_OverflowError, "call-path id out of range");
	rc = fp_prof_callpath_length((uint32_t)v, &n);
	if (rc)
		return fpy_raise_null(module, rc, NULL);
	return callpath_tuple((uint32_t)v);
}

PyDoc_STRVAR(prof_callpath_extend_doc,
	     "prof_callpath_extend(base, frames=(), note=None) -> int\n\n"
	     "Intern the call path `base` (an id from prof_callpath_id(), or None: no frames)\n"
	     "followed by `frames` (\"file:function@line\" strings), carrying `note`: lines\n"
	     "\"key\\tvalue\" that become string properties of the launches' kernel nodes\n"
	     "(include/flagprism/prof.h, fp_prof_callpath_intern_noted). Returns its id.");

static PyObject *prof_callpath_extend(PyObject *module, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"base", "frames", "note", NULL};
	PyObject *base = Py_None, *frames = NULL, *seq = NULL;
	const char *note = NULL;
	Py_ssize_t note_len = 0, i, nf = 0;
	uint32_t small[64], *ids = small, id;
	size_t nb = 0;
	int rc = FP_OK;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOz#:prof_callpath_extend", kwlist, &base,
					 &frames, &note, &note_len))
		return NULL;
	if (frames && frames != Py_None) {
		seq = PySequence_Fast(frames, "frames must be a sequence of str");
		if (!seq)
			return NULL;
		nf = PySequence_Fast_GET_SIZE(seq);
	}
	if (base != Py_None) {
		unsigned long v = PyLong_AsUnsignedLong(base);

		if (v == (unsigned long)-1 && PyErr_Occurred())
			goto fail_ids;
		if (v > UINT32_MAX) {
			PyErr_SetString(PyExc_OverflowError, "call-path id out of range");
			goto fail_ids;
		}
		rc = fp_prof_callpath_length((uint32_t)v, &nb);
		if (rc)
			goto fail_rc;
		if (nb + (size_t)nf > FP_ARRAY_SIZE_FPY(small)) {
			ids = PyMem_Malloc((nb + (size_t)nf) * sizeof(*ids));
			if (!ids) {
				PyErr_NoMemory();
				goto fail_ids;
			}
		}
		if (nb && fp_prof_callpath_frames((uint32_t)v, ids, nb) != nb) {
			rc = FP_EINVAL;
			goto fail_rc;
		}
	} else if ((size_t)nf > FP_ARRAY_SIZE_FPY(small)) {
		ids = PyMem_Malloc((size_t)nf * sizeof(*ids));
		if (!ids) {
			PyErr_NoMemory();
			goto fail_ids;
		}
	}
	for (i = 0; i < nf; i++) {
		PyObject *f = PySequence_Fast_GET_ITEM(seq, i);
		Py_ssize_t len;
		const char *str = PyUnicode_Check(f) ? PyUnicode_AsUTF8AndSize(f, &len) : NULL;

		if (!str) {
			if (!PyErr_Occurred())
				PyErr_SetString(PyExc_TypeError, "frames must be str");
			goto fail_ids;
		}
		rc = fp_prof_name_intern(str, (size_t)len, &ids[nb + (size_t)i]);
		if (rc)
			goto fail_rc;
	}
	rc = fp_prof_callpath_intern_noted(ids, nb + (size_t)nf, note, (size_t)note_len, &id);
	if (rc)
		goto fail_rc;
	if (ids != small)
		PyMem_Free(ids);
	Py_XDECREF(seq);
	return PyLong_FromUnsignedLong(id);
fail_rc:
	fpy_raise(module, rc, NULL);
fail_ids:
	if (ids != small)
		PyMem_Free(ids);
	Py_XDECREF(seq);
	return NULL;
}

PyDoc_STRVAR(prof_callpath_override_doc,
	     "prof_callpath_override(id) -> int | None\n\n"
	     "Make `id` (None: none) the call path of every launch this thread makes until it is\n"
	     "replaced; returns the previous one, to be restored (fp_prof_callpath_override_set).");

static PyObject *prof_callpath_override(PyObject *module, PyObject *arg)
{
	uint32_t id = FP_PROF_NO_CALLPATH, old;

	(void)module;
	if (arg != Py_None) {
		unsigned long v = PyLong_AsUnsignedLong(arg);

		if (v == (unsigned long)-1 && PyErr_Occurred())
			return NULL;
		if (v > UINT32_MAX) {
			PyErr_SetString(PyExc_OverflowError, "call-path id out of range");
			return NULL;
		}
		id = (uint32_t)v;
	}
	old = fp_prof_callpath_override_set(id);
	if (old == FP_PROF_NO_CALLPATH)
		Py_RETURN_NONE;
	return PyLong_FromUnsignedLong(old);
}

PyDoc_STRVAR(
	inductor_origin_doc,
	"inductor_origin(module, kernel, graph=None) -> tuple[str, str | None] | None\n\n"
	"Where Inductor kernel `kernel` came from, read from its generated module's text and\n"
	"the compiled graph's post-grad graph text (include/flagprism/inductor.h): (note, frame)\n"
	"with the note in prof_callpath_extend()'s format and the first model line as a\n"
	"\"file:function@line\" frame (None without one); None when the module does not\n"
	"define the kernel.");

static PyObject *inductor_origin(PyObject *module, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"module", "kernel", "graph", NULL};
	const char *text, *kernel, *graph = NULL;
	Py_ssize_t tlen, klen, glen = 0;
	struct fp_inductor_origin o;
	struct fp_strbuf note;
	PyObject *res = NULL;
	int rc;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "s#s#|z#:inductor_origin", kwlist, &text, &tlen,
					 &kernel, &klen, &graph, &glen))
		return NULL;
	if (!klen)
		return PyErr_Format(PyExc_ValueError, "inductor_origin: empty kernel name");
	fp_strbuf_init(&note, FP_PROF_MAX_NOTE);
	Py_BEGIN_ALLOW_THREADS rc = fp_inductor_origin(text, (size_t)tlen, kernel, (size_t)klen,
						       graph, (size_t)glen, &note, &o);
	Py_END_ALLOW_THREADS if (rc == FP_ENOENT)
	{
		res = Py_NewRef(Py_None);
	}
	else if (rc == FP_ELIMIT)
	{
		/* a note past the call path's cap: what fits, cut at a line */
		size_t keep = note.len;

		while (keep && note.buf[keep - 1] != '\n')
			keep--;
		res = Py_BuildValue("(s#z)", note.buf, (Py_ssize_t)(keep ? keep - 1 : 0),
				    o.frame[0] ? o.frame : NULL);
	}
	else if (rc)
	{
		fpy_raise(module, rc, NULL);
	}
	else
	{
		res = Py_BuildValue("(s#z)", note.buf, (Py_ssize_t)note.len,
				    o.frame[0] ? o.frame : NULL);
	}
	fp_strbuf_release(&note);
	return res;
}

PyDoc_STRVAR(
	internal_mark_doc,
	"internal_mark(delta) -> int\n\n"
	"+1 / -1 around FlagPrism's own work on this thread (flagprism._intercept.internal()):\n"
	"launches made while the depth is above 0 are dropped by every backend and counted\n"
	"(metadata lost.flagprism_internal_launches). Returns the new depth.");

static PyObject *internal_mark(PyObject *module, PyObject *arg)
{
	long d = PyLong_AsLong(arg);
	int rc;

	if (d == -1 && PyErr_Occurred())
		return NULL;
	if (d < -1 || d > 1)
		return PyErr_Format(PyExc_ValueError, "internal_mark takes +1 or -1, not %ld", d);
	rc = fp_prof_internal_mark((int)d);
	if (rc < 0)
		return raise_diag(module, rc, "internal_mark(%ld): the depth would leave 0..2^20",
				  d);
	return PyLong_FromLong(rc);
}

PyDoc_STRVAR(
	prof_frames_doc,
	"prof_frames(method=None) -> tuple[str, str | None]\n\n"
	"How Python call paths read the stack: (\"interpreter\", None) when the interpreter's\n"
	"frame chain is read directly (CPython 3.11-3.13, checked against the public API on\n"
	"first use), else (\"public\", why). method \"public\" or \"auto\" selects first.");

static PyObject *prof_frames(PyObject *module, PyObject *args)
{
	const char *method = NULL, *why, *used;

	(void)module;
	if (!PyArg_ParseTuple(args, "|z:prof_frames", &method))
		return NULL;
	if (method && fpy_frames_select(method) < 0) {
		PyErr_Format(PyExc_ValueError, "method must be \"auto\" or \"public\", not \"%s\"",
			     method);
		return NULL;
	}
	used = fpy_frames_method(&why);
	return Py_BuildValue("(sz)", used, why);
}

/* ---- sessions ---------------------------------------------------------------------------------- */

/* The index of `value` among the library's names (name_at: fp_prof_context_name, ...), or -1
 * with ValueError naming them. */
static int parse_choice(const char *what, const char *value, const char *(*name_at)(unsigned))
{
	unsigned i;

	for (i = 0; name_at(i); i++)
		if (strcmp(value, name_at(i)) == 0)
			return (int)i;
	PyErr_Format(PyExc_ValueError, "%s must be one of %s, %s; not '%s'", what, name_at(0),
		     name_at(1), value);
	return -1;
}

PyDoc_STRVAR(prof_choices_doc,
	     "prof_choices() -> dict\n\n"
	     "The names a session's choices take, from the library (src/prof/choices.c):\n"
	     "{'context': (...), 'data': (...), 'hook': (...)}, each in enum order.");

static PyObject *prof_choices(PyObject *module, PyObject *unused)
{
	const char *(*const fns[3])(unsigned) = {fp_prof_context_name, fp_prof_data_name,
						 fp_prof_hook_name};
	static const char *const keys[3] = {"context", "data", "hook"};
	PyObject *out = PyDict_New();
	unsigned k, i;

	(void)module;
	(void)unused;
	for (k = 0; out && k < 3; k++) {
		PyObject *t = PyTuple_New(0);

		for (i = 0; t && fns[k](i); i++) {
			PyObject *name = PyUnicode_FromString(fns[k](i));

			if (!name || _PyTuple_Resize(&t, (Py_ssize_t)i + 1)) {
				Py_XDECREF(name);
				Py_CLEAR(t);
				break;
			}
			PyTuple_SET_ITEM(t, (Py_ssize_t)i, name);
		}
		if (!t || PyDict_SetItemString(out, keys[k], t))
			Py_CLEAR(out);
		Py_XDECREF(t);
	}
	return out;
}

PyDoc_STRVAR(prof_start_doc,
	     "prof_start(name=None, context='shadow', data='tree', backend=None, hook=None, *,\n"
	     "           max_trace_events=0, max_pending_launches=0, max_scope_depth=0,\n"
	     "           max_threads=0, max_nodes=0, max_depth=0) -> int\n\n"
	     "Start and activate a profiling session (fp_prof_start()); returns its id. name is\n"
	     "the output path without suffix; backend a registered backend name (None: 'host').\n"
	     "Limits of 0 take the library defaults.");

static PyObject *prof_start(PyObject *module, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = {"name",
				 "context",
				 "data",
				 "backend",
				 "hook",
				 "max_trace_events",
				 "max_pending_launches",
				 "max_scope_depth",
				 "max_threads",
				 "max_nodes",
				 "max_depth",
				 NULL};
	const char *name = NULL, *context = "shadow", *data = "tree", *backend = NULL, *hook = NULL;
	unsigned long long max_trace = 0, max_pending = 0, max_nodes = 0;
	unsigned int max_scope = 0, max_threads = 0, max_depth = 0;
	struct fp_prof_options opt;
	struct fp_diag diag;
	PyThreadState *ts;
	int c, d, sid, rc;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|zsszz$KKIIKI:prof_start", kwlist, &name,
					 &context, &data, &backend, &hook, &max_trace, &max_pending,
					 &max_scope, &max_threads, &max_nodes, &max_depth))
		return NULL;
	c = parse_choice("context", context, fp_prof_context_name);
	if (c < 0)
		return NULL;
	d = parse_choice("data", data, fp_prof_data_name);
	if (d < 0)
		return NULL;
	memset(&opt, 0, sizeof(opt));
	opt.name = name;
	opt.context = (enum fp_prof_context)c;
	opt.data = (enum fp_prof_data)d;
	opt.backend = backend;
	opt.hook = hook;
	opt.max_trace_events = max_trace;
	opt.max_pending_launches = max_pending;
	opt.max_scope_depth = max_scope;
	opt.max_threads = max_threads;
	opt.tree.max_nodes = (size_t)max_nodes;
	opt.tree.max_depth = max_depth;
	fp_diag_clear(&diag);
	/* A backend's start may talk to a vendor library: let other threads run meanwhile. */
	ts = PyEval_SaveThread();
	rc = fp_prof_start(&opt, &sid, &diag);
	PyEval_RestoreThread(ts);
	if (rc)
		return fpy_raise_null(module, rc, &diag);
	return PyLong_FromLong(sid);
}

PyDoc_STRVAR(
	prof_finalize_doc,
	"prof_finalize(session=None, format=None) -> list[tuple[str, str]]\n\n"
	"Stop a session (None: every open one), write its files and free it\n"
	"(fp_prof_finalize_each()). format: None for the data option's files, or a comma list\n"
	"of 'hatchet', 'chrome_trace'. Returns (writer, path) for each file written, the\n"
	"metadata last; a file rescued from a full disk has its rescue path. The session is\n"
	"gone even when this raises.");

/* The files a finalize wrote, gathered without the GIL (PyMem_Raw*). */
struct written {
	char **items; /* "writer\0path\0" pairs */
	size_t n, cap;
	bool nomem;
};

static void on_output(void *arg, const char *writer, const char *path)
{
	struct written *w = arg;
	size_t a = strlen(writer) + 1, b = strlen(path) + 1;
	char *item;

	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 8;
		char **items = PyMem_RawRealloc(w->items, cap * sizeof(*items));

		if (!items) {
			w->nomem = true;
			return;
		}
		w->items = items;
		w->cap = cap;
	}
	item = PyMem_RawMalloc(a + b);
	if (!item) {
		w->nomem = true;
		return;
	}
	memcpy(item, writer, a);
	memcpy(item + a, path, b);
	w->items[w->n++] = item;
}

static PyObject *prof_finalize(PyObject *module, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = {"session", "format", NULL};
	PyObject *sobj = Py_None, *list = NULL;
	struct written w = {0};
	const char *format = NULL;
	struct fp_diag diag;
	PyThreadState *ts;
	int sid, rc;
	size_t i;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|Oz:prof_finalize", kwlist, &sobj, &format))
		return NULL;
	if (session_arg(sobj, &sid) < 0)
		return NULL;
	fp_diag_clear(&diag);
	ts = PyEval_SaveThread();
	rc = fp_prof_finalize_each(sid, format, on_output, &w, &diag);
	PyEval_RestoreThread(ts);
	if (rc) {
		fpy_raise_null(module, rc, &diag);
	} else if (w.nomem) {
		PyErr_NoMemory();
	} else {
		list = PyList_New((Py_ssize_t)w.n);
		for (i = 0; list && i < w.n; i++) {
			const char *writer = w.items[i], *path = writer + strlen(writer) + 1;
			PyObject *t =
				Py_BuildValue("(sN)", writer, PyUnicode_DecodeFSDefault(path));

			if (!t) {
				Py_CLEAR(list);
				break;
			}
			PyList_SET_ITEM(list, (Py_ssize_t)i, t);
		}
	}
	for (i = 0; i < w.n; i++)
		PyMem_RawFree(w.items[i]);
	PyMem_RawFree(w.items);
	return list;
}

static PyObject *session_call(PyObject *module, PyObject *arg, int (*fn)(int))
{
	int sid, rc;

	if (session_arg(arg, &sid) < 0)
		return NULL;
	rc = fn(sid);
	if (rc)
		return fpy_raise_null(module, rc, NULL);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(prof_activate_doc, "prof_activate(session)\n\nActivate a session (None: all).");

static PyObject *prof_activate(PyObject *module, PyObject *arg)
{
	return session_call(module, arg, fp_prof_activate);
}

PyDoc_STRVAR(prof_deactivate_doc,
	     "prof_deactivate(session)\n\nDeactivate a session (None: all): it keeps its scope\n"
	     "stacks in step but ignores launches and metrics until activated again.");

static PyObject *prof_deactivate(PyObject *module, PyObject *arg)
{
	return session_call(module, arg, fp_prof_deactivate);
}

PyDoc_STRVAR(prof_shutdown_doc,
	     "prof_shutdown()\n\n"
	     "Finalize every open session as abandoned (files written, metadata marked\n"
	     "incomplete) and free the process-wide names and call paths (fp_prof_shutdown()).");

static PyObject *prof_shutdown(PyObject *module, PyObject *unused)
{
	PyThreadState *ts;

	ts = PyEval_SaveThread();
	fp_prof_shutdown();
	PyEval_RestoreThread(ts);
	/* Cached call-path ids named the tables just freed. */
	fpy_fcache_clear(&cp_cache);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(prof_set_meta_doc,
	     "prof_set_meta(session, key, value)\n\n"
	     "Attach a string to the metadata file's \"environment\" object (None: all sessions).");

static PyObject *prof_set_meta(PyObject *module, PyObject *args)
{
	const char *key, *value;
	PyObject *sobj;
	int sid, rc;

	if (!PyArg_ParseTuple(args, "Oss:prof_set_meta", &sobj, &key, &value))
		return NULL;
	if (session_arg(sobj, &sid) < 0)
		return NULL;
	rc = fp_prof_set_meta(sid, key, value);
	if (rc)
		return fpy_raise_null(module, rc, NULL);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(prof_mark_incomplete_doc,
	     "prof_mark_incomplete(session, reason)\n\n"
	     "Mark a session (None: all) incomplete with `reason` in its metadata file\n"
	     "(fp_prof_mark_incomplete()): a signal that ended the program, launches still\n"
	     "running at finalize.");

static PyObject *prof_mark_incomplete(PyObject *module, PyObject *args)
{
	const char *reason;
	PyObject *sobj;
	int sid, rc;

	if (!PyArg_ParseTuple(args, "Os:prof_mark_incomplete", &sobj, &reason))
		return NULL;
	if (session_arg(sobj, &sid) < 0)
		return NULL;
	rc = fp_prof_mark_incomplete(sid, reason);
	if (rc)
		return fpy_raise_null(module, rc, NULL);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(
	prof_stats_doc,
	"prof_stats(session) -> dict\n\n"
	"Counters of an open session: kernels, scopes, trace_records, nodes, open_scopes and\n"
	"every loss counter (dropped_trace, dropped_launches, dropped_backend, unmatched,\n"
	"pending, ignored_inactive, exits_without_enter, scopes_too_deep, clamped_timestamps,\n"
	"failed), plus\n"
	"name, active and backend.");

static PyObject *prof_stats(PyObject *module, PyObject *arg)
{
	struct fp_prof_session *s;
	struct fp_prof_stats st;
	PyObject *d;
	int sid;

	if (session_arg(arg, &sid) < 0)
		return NULL;
	s = sid == FP_PROF_ALL ? NULL : fp_prof_session_get(sid);
	if (!s)
		return raise_diag(module, FP_ENOENT, "no open profiling session %d", sid);
	if (fp_prof_session_stats(s, &st))
		return fpy_raise_null(module, FP_EINVAL, NULL);
	d = PyDict_New();
	if (!d)
		return NULL;
	if (fpy_set_item(d, "kernels", PyLong_FromUnsignedLongLong(st.kernels)) ||
	    fpy_set_item(d, "scopes", PyLong_FromUnsignedLongLong(st.scopes)) ||
	    fpy_set_item(d, "trace_records", PyLong_FromUnsignedLongLong(st.trace_records)) ||
	    fpy_set_item(d, "dropped_trace", PyLong_FromUnsignedLongLong(st.dropped_trace)) ||
	    fpy_set_item(d, "dropped_launches", PyLong_FromUnsignedLongLong(st.dropped_launches)) ||
	    fpy_set_item(d, "dropped_backend", PyLong_FromUnsignedLongLong(st.dropped_backend)) ||
	    fpy_set_item(d, "unmatched", PyLong_FromUnsignedLongLong(st.unmatched)) ||
	    fpy_set_item(d, "pending", PyLong_FromUnsignedLongLong(st.pending)) ||
	    fpy_set_item(d, "ignored_inactive", PyLong_FromUnsignedLongLong(st.ignored_inactive)) ||
	    fpy_set_item(d, "exits_without_enter",
			 PyLong_FromUnsignedLongLong(st.exits_without_enter)) ||
	    fpy_set_item(d, "scopes_too_deep", PyLong_FromUnsignedLongLong(st.scopes_too_deep)) ||
	    fpy_set_item(d, "clamped_timestamps",
			 PyLong_FromUnsignedLongLong(st.clamped_timestamps)) ||
	    fpy_set_item(d, "failed", PyLong_FromUnsignedLongLong(st.failed)) ||
	    fpy_set_item(d, "open_scopes", PyLong_FromUnsignedLongLong(st.open_scopes)) ||
	    fpy_set_item(d, "nodes", PyLong_FromUnsignedLongLong(st.nodes)) ||
	    fpy_set_item(d, "name", PyUnicode_DecodeFSDefault(fp_prof_session_name(s))) ||
	    fpy_set_item(d, "active", PyBool_FromLong(fp_prof_session_active(s))) ||
	    fpy_set_item(d, "backend", PyUnicode_FromString(fp_prof_session_backend(s)->name))) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

PyDoc_STRVAR(prof_backends_doc,
	     "prof_backends() -> tuple[str, ...]\n\nNames of the registered profiler backends.");

static PyObject *prof_backends(PyObject *module, PyObject *unused)
{
	const struct fp_backend_ops *ops;
	PyObject *list = PyList_New(0), *t;
	size_t i;

	if (!list)
		return NULL;
	for (i = 0; (ops = fp_backend_at(i)) != NULL; i++) {
		PyObject *s = PyUnicode_FromString(ops->name);

		if (!s || PyList_Append(list, s) < 0) {
			Py_XDECREF(s);
			Py_DECREF(list);
			return NULL;
		}
		Py_DECREF(s);
	}
	t = PyList_AsTuple(list);
	Py_DECREF(list);
	return t;
}

PyDoc_STRVAR(prof_clock_ns_doc,
	     "prof_clock_ns() -> int\n\nThe profiler's clock (CLOCK_MONOTONIC) in nanoseconds.");

static PyObject *prof_clock_ns(PyObject *module, PyObject *unused)
{
	return PyLong_FromUnsignedLongLong(fp_prof_clock_ns());
}

/* ---- scopes and states ------------------------------------------------------------------------ */

static PyObject *scope_key; /* the thread-state dict key of the open-scope stack */

/*
 * The UTF-8 text of the name `o` (a str): a str may hold lone surrogates ('\ud800', or what
 * surrogateescape made of undecodable bytes) that UTF-8 cannot, and those are written as their
 * escape ('\\ud800') instead of failing, so every str is a name. *keep is the bytes object made
 * for that (NULL when none); the caller releases it with Py_XDECREF after using the text.
 */
static const char *name_utf8(PyObject *o, Py_ssize_t *len, PyObject **keep)
{
	const char *s;

	*keep = NULL;
	if (!PyUnicode_Check(o)) {
		PyErr_Format(PyExc_TypeError, "a name must be str, not %.100s",
			     Py_TYPE(o)->tp_name);
		return NULL;
	}
	s = PyUnicode_AsUTF8AndSize(o, len);
	if (s || !PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
		return s;
	PyErr_Clear();
	*keep = PyUnicode_AsEncodedString(o, "utf-8", "backslashreplace");
	if (!*keep)
		return NULL;
	*len = PyBytes_GET_SIZE(*keep);
	return PyBytes_AS_STRING(*keep);
}

/* This thread's stack of open scope names (borrowed), or NULL: none yet (no error) or error. */
static PyObject *scope_stack(bool create)
{
	PyObject *d = PyThreadState_GetDict(), *l;

	if (!d) {
		if (create && !PyErr_Occurred())
			PyErr_SetString(PyExc_RuntimeError, "no thread state dictionary");
		return NULL;
	}
	l = PyDict_GetItemWithError(d, scope_key);
	if (l || PyErr_Occurred() || !create)
		return l;
	l = PyList_New(0);
	if (!l)
		return NULL;
	if (PyDict_SetItem(d, scope_key, l) < 0) {
		Py_DECREF(l);
		return NULL;
	}
	Py_DECREF(l); /* the dict holds it */
	return l;
}

PyDoc_STRVAR(prof_scope_enter_doc,
	     "prof_scope_enter(session, name, cpu_time=False)\n\n"
	     "Open scope `name` on this thread in a session (None: all). cpu_time adds\n"
	     "'cpu_time (ns)(exc)' to the scope at its exit. Returns True when the scope was\n"
	     "deeper than a session's max_scope_depth: counted there and dropped (the caller\n"
	     "warns once), None otherwise.");

static PyObject *prof_scope_enter(PyObject *module, PyObject *args)
{
	PyObject *sobj, *nobj, *stack = NULL, *keep;
	const char *name;
	Py_ssize_t len;
	int cpu = 0, sid, rc;

	if (!PyArg_ParseTuple(args, "OU|p:prof_scope_enter", &sobj, &nobj, &cpu))
		return NULL;
	if (session_arg(sobj, &sid) < 0)
		return NULL;
	if (sid == FP_PROF_ALL) {
		stack = scope_stack(true);
		if (!stack)
			return NULL;
		if (PyList_GET_SIZE(stack) >= SCOPE_STACK_MAX)
			return raise_diag(module, FP_ELIMIT,
					  "more than %d scopes open on this thread",
					  SCOPE_STACK_MAX);
	}
	name = name_utf8(nobj, &len, &keep);
	if (!name)
		return NULL;
	rc = fp_prof_scope_enter(sid, name, (size_t)len, cpu ? FP_PROF_SCOPE_CPU_TIME : 0);
	Py_XDECREF(keep);
	if (rc < 0)
		return fpy_raise_null(module, rc, NULL);
	if (stack && PyList_Append(stack, nobj) < 0)
		return NULL;
	if (rc > 0)
		Py_RETURN_TRUE;
	Py_RETURN_NONE;
}

PyDoc_STRVAR(
	prof_scope_exit_doc,
	"prof_scope_exit(session, name=None)\n\n"
	"Close this thread's innermost scope in a session (None: all). With a name it must be\n"
	"the innermost open scope's. Raises flagprism.Error (status FP_ESTATE) for an exit\n"
	"without an enter or a mismatched name; the stack is then left as it was.");

/* prof_scope_exit() once the name (NULL for none) is UTF-8 text. */
static PyObject *scope_exit(PyObject *module, int sid, PyObject *nobj, const char *name,
			    Py_ssize_t len)
{
	PyObject *stack = NULL;
	Py_ssize_t depth = 0;
	struct fp_diag diag;
	int rc;

	if (sid == FP_PROF_ALL) {
		stack = scope_stack(false);
		if (!stack && PyErr_Occurred())
			return NULL;
		depth = stack ? PyList_GET_SIZE(stack) : 0;
		if (depth == 0)
			return raise_diag(module, FP_ESTATE,
					  "scope exit%s%.100s%s without a matching enter on this "
					  "thread",
					  name ? " '" : "", name ? name : "", name ? "'" : "");
		if (name) {
			PyObject *top = PyList_GET_ITEM(stack, depth - 1);
			int eq = PyUnicode_Compare(top, nobj);

			if (eq == -1 && PyErr_Occurred())
				return NULL;
			if (eq != 0)
				return raise_diag(
					module, FP_ESTATE,
					"scope exit '%.100s' does not match the innermost "
					"open scope '%.100s'",
					name, PyUnicode_AsUTF8(top));
		}
	} else {
		uint32_t d = 0;

		rc = fp_prof_scope_depth(sid, &d);
		if (rc)
			return fpy_raise_null(module, rc, NULL);
		if (d == 0)
			return raise_diag(module, FP_ESTATE,
					  "scope exit%s%.100s%s without a matching enter on this "
					  "thread in session %d",
					  name ? " '" : "", name ? name : "", name ? "'" : "", sid);
	}
	fp_diag_clear(&diag);
	rc = fp_prof_scope_exit(sid, name, (size_t)len, &diag);
	if (rc)
		return fpy_raise_null(module, rc, &diag);
	if (stack && PyList_SetSlice(stack, depth - 1, depth, NULL) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *prof_scope_exit(PyObject *module, PyObject *args)
{
	PyObject *sobj, *nobj = Py_None, *keep = NULL, *res;
	const char *name = NULL;
	Py_ssize_t len = 0;
	int sid;

	if (!PyArg_ParseTuple(args, "O|O:prof_scope_exit", &sobj, &nobj))
		return NULL;
	if (session_arg(sobj, &sid) < 0)
		return NULL;
	if (nobj != Py_None) {
		if (!PyUnicode_Check(nobj))
			return PyErr_Format(PyExc_TypeError, "scope name must be str, not %.100s",
					    Py_TYPE(nobj)->tp_name);
		name = name_utf8(nobj, &len, &keep);
		if (!name)
			return NULL;
	}
	res = scope_exit(module, sid, nobj, name, len);
	Py_XDECREF(keep);
	return res;
}

PyDoc_STRVAR(prof_scope_metric_doc,
	     "prof_scope_metric(session, name, value)\n\n"
	     "Add a number to metric `name` of this thread's innermost scope (ROOT outside\n"
	     "scopes); the name's suffix picks how values combine: '(exc)', '(pty)', '(min)',\n"
	     "'(max)' or none (summed and propagated).");

static PyObject *prof_scope_metric(PyObject *module, PyObject *args)
{
	PyObject *sobj, *nobj, *keep, *res = NULL;
	const char *name;
	Py_ssize_t len;
	double value;
	int sid, rc;

	if (!PyArg_ParseTuple(args, "OUd:prof_scope_metric", &sobj, &nobj, &value))
		return NULL;
	if (session_arg(sobj, &sid) < 0)
		return NULL;
	name = name_utf8(nobj, &len, &keep);
	if (!name)
		return NULL;
	rc = fp_prof_scope_metric(sid, name, (size_t)len, value);
	if (rc == FP_EINVAL)
		raise_diag(module, rc,
			   "metric '%.100s' is already registered with another kind "
			   "(its type suffix differs)",
			   name);
	else if (rc)
		fpy_raise_null(module, rc, NULL);
	else
		res = Py_NewRef(Py_None);
	Py_XDECREF(keep);
	return res;
}

PyDoc_STRVAR(prof_state_enter_doc,
	     "prof_state_enter(session, name)\n\n"
	     "Tag this thread's launches with state `name` (replaces the current state).");

static PyObject *prof_state_enter(PyObject *module, PyObject *args)
{
	PyObject *sobj, *nobj, *keep;
	const char *name;
	Py_ssize_t len;
	int sid, rc;

	if (!PyArg_ParseTuple(args, "OU:prof_state_enter", &sobj, &nobj))
		return NULL;
	if (session_arg(sobj, &sid) < 0)
		return NULL;
	name = name_utf8(nobj, &len, &keep);
	if (!name)
		return NULL;
	rc = fp_prof_state_enter(sid, name, (size_t)len);
	Py_XDECREF(keep);
	if (rc)
		return fpy_raise_null(module, rc, NULL);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(prof_state_exit_doc, "prof_state_exit(session)\n\nClear this thread's state.");

static PyObject *prof_state_exit(PyObject *module, PyObject *arg)
{
	return session_call(module, arg, fp_prof_state_exit);
}

PyDoc_STRVAR(prof_scope_depth_doc,
	     "prof_scope_depth(session) -> int\n\nScopes open on this thread in one session.");

static PyObject *prof_scope_depth(PyObject *module, PyObject *arg)
{
	uint32_t depth = 0;
	int sid, rc;

	if (session_arg(arg, &sid) < 0)
		return NULL;
	if (sid == FP_PROF_ALL)
		return PyErr_Format(PyExc_ValueError, "prof_scope_depth needs one session id");
	rc = fp_prof_scope_depth(sid, &depth);
	if (rc)
		return fpy_raise_null(module, rc, NULL);
	return PyLong_FromUnsignedLong(depth);
}

/* ---- launches ------------------------------------------------------------------------------------ */

static const struct {
	const char *key;
	uint32_t flag;
	size_t off;
} md_fields[] = {
	{"flops8", FP_SINK_MD_FLOPS8, offsetof(struct fp_sink_metadata, flops8)},
	{"flops16", FP_SINK_MD_FLOPS16, offsetof(struct fp_sink_metadata, flops16)},
	{"flops32", FP_SINK_MD_FLOPS32, offsetof(struct fp_sink_metadata, flops32)},
	{"flops64", FP_SINK_MD_FLOPS64, offsetof(struct fp_sink_metadata, flops64)},
	{"bytes", FP_SINK_MD_BYTES, offsetof(struct fp_sink_metadata, bytes)},
};

/* md_fields' keys as interned str objects, made once: no temporary str per key and launch. */
static PyObject *md_keys[ARRAY_SIZE(md_fields)];

int fpy_prof_metadata_read(PyObject *dict, struct fp_sink_metadata *md)
{
	size_t i;

	if (!dict || dict == Py_None)
		return 0;
	if (!md_keys[ARRAY_SIZE(md_fields) - 1]) {
		for (i = 0; i < ARRAY_SIZE(md_fields); i++) {
			if (!md_keys[i])
				md_keys[i] = PyUnicode_InternFromString(md_fields[i].key);
			if (!md_keys[i])
				return -1;
		}
	}
	if (!PyDict_Check(dict)) {
		PyErr_Format(PyExc_TypeError, "launch metadata must be a dict, not %.100s",
			     Py_TYPE(dict)->tp_name);
		return -1;
	}
	for (i = 0; i < ARRAY_SIZE(md_fields); i++) {
		PyObject *v = PyDict_GetItemWithError(dict, md_keys[i]);
		double x;

		if (!v && PyErr_Occurred())
			return -1;
		if (!v || v == Py_None)
			continue;
		x = PyFloat_AsDouble(v);
		if (x == -1.0 && PyErr_Occurred()) {
			PyErr_Format(PyExc_TypeError,
				     "launch metadata '%s' must be a number, not %.100s",
				     md_fields[i].key, Py_TYPE(v)->tp_name);
			return -1;
		}
		*(double *)(void *)((char *)md + md_fields[i].off) = x;
		md->flags |= md_fields[i].flag;
	}
	return 0;
}

static int grid_arg(PyObject *obj, uint32_t grid[3])
{
	PyObject *seq = PySequence_Fast(obj, "grid must be a sequence of 1 to 3 ints");
	Py_ssize_t n, i;

	if (!seq)
		return -1;
	n = PySequence_Fast_GET_SIZE(seq);
	if (n < 1 || n > 3) {
		Py_DECREF(seq);
		PyErr_SetString(PyExc_ValueError, "grid must have 1 to 3 dimensions");
		return -1;
	}
	grid[0] = grid[1] = grid[2] = 1;
	for (i = 0; i < n; i++) {
		unsigned long long v = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(seq, i));

		if (v == (unsigned long long)-1 && PyErr_Occurred()) {
			Py_DECREF(seq);
			return -1;
		}
		if (v > UINT32_MAX) {
			Py_DECREF(seq);
			PyErr_Format(PyExc_OverflowError, "grid dimension %llu too large", v);
			return -1;
		}
		grid[i] = (uint32_t)v;
	}
	Py_DECREF(seq);
	return 0;
}

PyDoc_STRVAR(
	prof_host_launch_doc,
	"prof_host_launch(session, kernel, grid, begin_ns, end_ns, metadata=None, est=None,\n"
	"                 callpath=False, device_id=0)\n\n"
	"Record one host-timed launch (fp_host_launch()) in a session (None: every active one).\n"
	"metadata: a launch_metadata dict; its numeric 'flops8', 'flops16', 'flops32',\n"
	"'flops64' and 'bytes' become metrics. est: (bytes, flops) per program, multiplied here\n"
	"by the number of programs of the grid into 'est_bytes' and 'est_flops'. callpath:\n"
	"read the calling Python frames for sessions with context 'python'.");

static PyObject *prof_host_launch(PyObject *module, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = {"session",  "kernel", "grid",     "begin_ns",  "end_ns",
				 "metadata", "est",    "callpath", "device_id", NULL};
	PyObject *sobj, *gobj, *mdobj = Py_None, *estobj = Py_None;
	unsigned long long begin, end;
	unsigned int device = 0;
	struct fp_sink_launch l;
	const char *kernel;
	Py_ssize_t klen;
	int cp = 0, sid, rc;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Os#OKK|OOpI:prof_host_launch", kwlist,
					 &sobj, &kernel, &klen, &gobj, &begin, &end, &mdobj,
					 &estobj, &cp, &device))
		return NULL;
	if (session_arg(sobj, &sid) < 0)
		return NULL;
	memset(&l, 0, sizeof(l));
	l.callpath = FP_PROF_NO_CALLPATH;
	l.device_id = device;
	if (grid_arg(gobj, l.grid) < 0 || fpy_prof_metadata_read(mdobj, &l.md) < 0)
		return NULL;
	if (estobj != Py_None) {
		double b, f, programs = (double)l.grid[0] * l.grid[1] * l.grid[2];

		if (!PyArg_ParseTuple(estobj, "dd:est", &b, &f))
			return NULL;
		l.md.est_bytes = b * programs;
		l.md.est_flops = f * programs;
		l.md.flags |= FP_SINK_MD_EST_BYTES | FP_SINK_MD_EST_FLOPS;
	}
	if (end < begin)
		return PyErr_Format(PyExc_ValueError, "end_ns %llu is before begin_ns %llu", end,
				    begin);
	rc = fp_prof_name_intern(kernel, (size_t)klen, &l.kernel);
	if (!rc && cp) {
		rc = fpy_prof_callpath_read(&l.callpath);
		if (rc == -1 && PyErr_Occurred())
			return NULL;
	} else {
		/* shadow context: no frames, but a framework wrapper's path carries its note */
		l.callpath = fp_prof_callpath_override();
	}
	if (!rc)
		rc = fp_host_launch(sid, &l, begin, end);
	if (rc)
		return fpy_raise_null(module, rc, NULL);
	Py_RETURN_NONE;
}

/* ---- TTIR estimates ------------------------------------------------------------------------------ */

static PyObject *class_dict(const uint64_t *v)
{
	PyObject *d = PyDict_New();
	int c;

	if (!d)
		return NULL;
	for (c = 0; c < FP_TTIR_NCLASS; c++) {
		if (fpy_set_item(d, fp_ttir_dclass_name((enum fp_ttir_dclass)c),
				 PyLong_FromUnsignedLongLong(v[c]))) {
			Py_DECREF(d);
			return NULL;
		}
	}
	return d;
}

#define U64(x) PyLong_FromUnsignedLongLong(x)

/* The estimate's counters saturate; so does their sum. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static PyObject *estimate_dict(const struct fp_ttir_estimate *e, const char *func)
{
	PyObject *d = PyDict_New();

	if (!d)
		return NULL;
	if (fpy_set_item(d, "function", PyUnicode_FromString(func ? func : "")) ||
	    fpy_set_item(d, "loads", U64(e->loads)) ||
	    fpy_set_item(d, "load_bytes", U64(e->load_bytes)) ||
	    fpy_set_item(d, "masked_loads", U64(e->masked_loads)) ||
	    fpy_set_item(d, "stores", U64(e->stores)) ||
	    fpy_set_item(d, "store_bytes", U64(e->store_bytes)) ||
	    fpy_set_item(d, "masked_stores", U64(e->masked_stores)) ||
	    fpy_set_item(d, "atomics", U64(e->atomics)) ||
	    fpy_set_item(d, "atomic_bytes", U64(e->atomic_bytes)) ||
	    fpy_set_item(d, "dots", U64(e->dots)) ||
	    fpy_set_item(d, "dot_flops", U64(e->dot_flops)) ||
	    fpy_set_item(d, "dot_flops_by_class", class_dict(e->dot_flops_by_class)) ||
	    fpy_set_item(d, "reductions", U64(e->reductions)) ||
	    fpy_set_item(d, "reduce_elems", U64(e->reduce_elems)) ||
	    fpy_set_item(d, "scans", U64(e->scans)) ||
	    fpy_set_item(d, "scan_elems", U64(e->scan_elems)) ||
	    fpy_set_item(d, "elem_ops", class_dict(e->elem_ops)) ||
	    fpy_set_item(d, "flops", class_dict(e->flops)) ||
	    fpy_set_item(d, "special", class_dict(e->special)) ||
	    fpy_set_item(d, "conversions", U64(e->conversions)) ||
	    fpy_set_item(d, "total_flops", U64(e->total_flops)) ||
	    fpy_set_item(d, "calls", U64(e->calls)) ||
	    fpy_set_item(d, "static_loops", PyLong_FromUnsignedLong(e->static_loops)) ||
	    fpy_set_item(d, "dynamic_loops", PyLong_FromUnsignedLong(e->dynamic_loops)) ||
	    fpy_set_item(d, "conditionals", PyLong_FromUnsignedLong(e->conditionals)) ||
	    fpy_set_item(d, "unresolved_calls", PyLong_FromUnsignedLong(e->unresolved_calls)) ||
	    fpy_set_item(d, "has_dynamic_loops", PyBool_FromLong(e->has_dynamic_loops)) ||
	    fpy_set_item(d, "saturated", PyBool_FromLong(e->saturated)) ||
	    fpy_set_item(d, "bytes",
			 U64(sat_add(sat_add(e->load_bytes, e->store_bytes), e->atomic_bytes)))) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

#undef U64

PyDoc_STRVAR(ttir_estimate_doc,
	     "ttir_estimate(text, function=None) -> dict\n\n"
	     "Parse TTIR text and estimate one function (None: the kernel entry) per program\n"
	     "instance (fp_ttir_estimate(), docs/internals/ir-estimates.md): loads, load_bytes,\n"
	     "masked_loads, stores, store_bytes, masked_stores, atomics, atomic_bytes, dots,\n"
	     "dot_flops, reductions, scans, per-class elem_ops/flops/special, conversions,\n"
	     "total_flops, loop counters, 'bytes' (loads + stores + atomics) and 'function'.\n"
	     "Raises FormatError naming the line for malformed IR, OSError (ENOENT) for an\n"
	     "unknown function.");

static PyObject *ttir_estimate(PyObject *module, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = {"text", "function", NULL};
	const char *text, *func = NULL, *entry = NULL;
	struct fp_ttir_estimate est;
	struct fp_ttir *m = NULL;
	struct fp_diag diag;
	Py_ssize_t len;
	PyObject *res = NULL;
	PyThreadState *ts;
	int rc;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s#|z:ttir_estimate", kwlist, &text, &len,
					 &func))
		return NULL;
	fp_diag_clear(&diag);
	memset(&est, 0, sizeof(est));
	/* The str object (and so `text`) stays alive and unchanged through the call. */
	ts = PyEval_SaveThread();
	rc = fp_ttir_parse(text, (size_t)len, &m, &diag);
	if (!rc) {
		rc = fp_ttir_estimate(m, func, &est);
		if (!rc && !func) {
			const struct fp_ttir_func *f = fp_ttir_func_at(m, fp_ttir_entry(m));

			entry = f ? f->name : NULL;
		}
	}
	PyEval_RestoreThread(ts);
	if (rc == FP_ENOENT) {
		fp_ttir_free(m);
		return raise_diag(module, rc, "no function '%.100s' in the TTIR",
				  func ? func : "(entry)");
	}
	if (rc) {
		fp_ttir_free(m);
		return fpy_raise_null(module, rc, &diag);
	}
	res = estimate_dict(&est, func ? func : entry);
	fp_ttir_free(m);
	return res;
}

/* ---- the part ------------------------------------------------------------------------------------ */

#define KW (METH_VARARGS | METH_KEYWORDS)
#define FN(f) ((PyCFunction)(void (*)(void))(f))

static PyMethodDef prof_methods[] = {
	{"prof_choices", prof_choices, METH_NOARGS, prof_choices_doc},
	{"prof_start", FN(prof_start), KW, prof_start_doc},
	{"prof_finalize", FN(prof_finalize), KW, prof_finalize_doc},
	{"prof_activate", prof_activate, METH_O, prof_activate_doc},
	{"prof_deactivate", prof_deactivate, METH_O, prof_deactivate_doc},
	{"prof_shutdown", prof_shutdown, METH_NOARGS, prof_shutdown_doc},
	{"prof_set_meta", prof_set_meta, METH_VARARGS, prof_set_meta_doc},
	{"prof_mark_incomplete", prof_mark_incomplete, METH_VARARGS, prof_mark_incomplete_doc},
	{"prof_stats", prof_stats, METH_O, prof_stats_doc},
	{"prof_backends", prof_backends, METH_NOARGS, prof_backends_doc},
	{"prof_clock_ns", prof_clock_ns, METH_NOARGS, prof_clock_ns_doc},
	{"prof_scope_enter", prof_scope_enter, METH_VARARGS, prof_scope_enter_doc},
	{"prof_scope_exit", prof_scope_exit, METH_VARARGS, prof_scope_exit_doc},
	{"prof_scope_metric", prof_scope_metric, METH_VARARGS, prof_scope_metric_doc},
	{"prof_state_enter", prof_state_enter, METH_VARARGS, prof_state_enter_doc},
	{"prof_state_exit", prof_state_exit, METH_O, prof_state_exit_doc},
	{"prof_scope_depth", prof_scope_depth, METH_O, prof_scope_depth_doc},
	{"prof_host_launch", FN(prof_host_launch), KW, prof_host_launch_doc},
	{"prof_frames", prof_frames, METH_VARARGS, prof_frames_doc},
	{"prof_callpath", prof_callpath, METH_NOARGS, prof_callpath_doc},
	{"prof_callpath_id", prof_callpath_id, METH_NOARGS, prof_callpath_id_doc},
	{"prof_callpath_extend", FN(prof_callpath_extend), KW, prof_callpath_extend_doc},
	{"prof_callpath_frames", prof_callpath_frames, METH_O, prof_callpath_frames_doc},
	{"prof_callpath_override", prof_callpath_override, METH_O, prof_callpath_override_doc},
	{"internal_mark", internal_mark, METH_O, internal_mark_doc},
	{"inductor_origin", FN(inductor_origin), KW, inductor_origin_doc},
	{"prof_set_skip_prefixes", prof_set_skip_prefixes, METH_O, prof_set_skip_prefixes_doc},
	{"ttir_estimate", FN(ttir_estimate), KW, ttir_estimate_doc},
	{NULL, NULL, 0, NULL},
};

int fpy_prof_exec(PyObject *module)
{
	if (!scope_key) {
		scope_key = PyUnicode_InternFromString("flagprism._ext.prof_scopes");
		if (!scope_key)
			return -1;
	}
	if (PyModule_AddIntConstant(module, "PROF_ALL", FP_PROF_ALL) < 0)
		return -1;
	return PyModule_AddFunctions(module, prof_methods);
}
