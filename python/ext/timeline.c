/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Part `timeline` of flagprism._ext: the two calls of intra-kernel timelines. timeline_decode()
 * decodes a timeline buffer and returns its counters and per-scope statistics (tests and tools);
 * prof_timeline_add() decodes one launch's buffer and files it in profiling sessions
 * (fp_prof_timeline_add()). Decoding runs without the GIL. Nothing is aggregated here.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <limits.h>

#include <flagprism/prof.h>
#include <flagprism/status.h>
#include <flagprism/timeline.h>

#include "ext.h"

#define MAX_NAME 4096

static int decode(PyObject *module, Py_buffer *buf, struct fp_timeline **out)
{
	struct fp_diag diag;
	int st;

	fp_diag_clear(&diag);
	Py_BEGIN_ALLOW_THREADS st = fp_timeline_decode(buf->buf, (size_t)buf->len, out, &diag);
	Py_END_ALLOW_THREADS if (st) return fpy_raise(module, st, &diag);
	return 0;
}

static const char *clock_name(uint32_t clock)
{
	switch (clock) {
	case FP_TIMELINE_CLOCK_NVIDIA:
		return "nvidia";
	case FP_TIMELINE_CLOCK_AMD:
		return "amd";
	default:
		return "host";
	}
}

static PyObject *info_dict(const struct fp_timeline *t, bool with_scopes)
{
	const struct fp_timeline_info *in = fp_timeline_get_info(t);
	PyObject *d = PyDict_New(), *list;
	uint32_t sc;

	if (!d)
		return NULL;
	if (fpy_set_item(d, "clock", PyUnicode_FromString(clock_name(in->clock))) ||
	    fpy_set_item(d, "tick_khz", PyLong_FromUnsignedLongLong(in->tick_khz)) ||
	    fpy_set_item(d, "nscopes", PyLong_FromUnsignedLong(in->nscopes)) ||
	    fpy_set_item(d, "programs", PyLong_FromUnsignedLongLong(in->programs)) ||
	    fpy_set_item(d, "slots", PyLong_FromUnsignedLongLong(in->slots)) ||
	    fpy_set_item(d, "records", PyLong_FromUnsignedLongLong(in->records)) ||
	    fpy_set_item(d, "overflow", PyLong_FromUnsignedLongLong(in->overflow)) ||
	    fpy_set_item(d, "overflowed_programs",
			 PyLong_FromUnsignedLongLong(in->overflowed_programs)) ||
	    fpy_set_item(d, "missing", PyLong_FromUnsignedLongLong(in->missing)) ||
	    fpy_set_item(d, "unclosed", PyLong_FromUnsignedLongLong(in->unclosed)) ||
	    fpy_set_item(d, "truncated", PyLong_FromUnsignedLongLong(in->truncated)) ||
	    fpy_set_item(d, "intervals", PyLong_FromSize_t(fp_timeline_intervals(t, NULL))) ||
	    fpy_set_item(d, "t_min", PyLong_FromUnsignedLongLong(in->t_min)) ||
	    fpy_set_item(d, "t_max", PyLong_FromUnsignedLongLong(in->t_max)) ||
	    fpy_set_item(d, "span_sum", PyFloat_FromDouble(in->span_sum))) {
		Py_DECREF(d);
		return NULL;
	}
	if (!with_scopes)
		return d;
	list = PyList_New(0);
	if (!list || fpy_set_item(d, "scopes", Py_NewRef(list))) {
		Py_XDECREF(list);
		Py_DECREF(d);
		return NULL;
	}
	for (sc = 1; sc <= in->nscopes; sc++) {
		struct fp_timeline_scope_stats st;
		PyObject *e;
		int bad;

		fp_timeline_scope_stats(t, sc, &st);
		e = Py_BuildValue("{s:I,s:K,s:K,s:d,s:d,s:d,s:d,s:d,s:d,s:I}", "id", (unsigned)sc,
				  "intervals", (unsigned long long)st.intervals, "programs",
				  (unsigned long long)st.programs, "time_sum", st.time_sum,
				  "time_min", st.time_min, "time_max", st.time_max, "cycles_sum",
				  st.cycles_sum, "cycles_min", st.cycles_min, "cycles_max",
				  st.cycles_max, "parent", (unsigned)st.parent);
		bad = !e || PyList_Append(list, e) < 0;
		Py_XDECREF(e);
		if (bad) {
			Py_DECREF(list);
			Py_DECREF(d);
			return NULL;
		}
	}
	Py_DECREF(list);
	return d;
}

PyDoc_STRVAR(
	timeline_decode_doc,
	"timeline_decode(buffer) -> dict\n\n"
	"Decode a timeline buffer (docs/formats/timeline-format.md; any C-contiguous bytes-like\n"
	"object) and return its counters ('clock': 'host', 'nvidia' or 'amd'; 'tick_khz':\n"
	"the AMD tick rate, 0 otherwise; 'programs', 'slots', 'records', 'overflow',\n"
	"'missing', 'unclosed', 'truncated', 'intervals', 't_min', 't_max' (ns),\n"
	"'span_sum') and 'scopes': per scope id 1..n its 'intervals', 'programs',\n"
	"'time_sum', 'time_min', 'time_max', 'cycles_*' and 'parent'. Raises FormatError\n"
	"naming the byte offset, program and record for a corrupt buffer.");

static PyObject *timeline_decode(PyObject *module, PyObject *arg)
{
	struct fp_timeline *t = NULL;
	Py_buffer buf;
	PyObject *res;

	if (PyObject_GetBuffer(arg, &buf, PyBUF_C_CONTIGUOUS) < 0)
		return NULL;
	if (decode(module, &buf, &t) < 0) {
		PyBuffer_Release(&buf);
		return NULL;
	}
	PyBuffer_Release(&buf);
	res = info_dict(t, true);
	fp_timeline_free(t);
	return res;
}

/* The scope table: a sequence of (name: str, flags: int). 0, or -1 with an exception. */
static int scopes_arg(PyObject *obj, struct fp_prof_tl_scope **out, Py_ssize_t *n, PyObject **keep)
{
	PyObject *seq = PySequence_Fast(obj, "scopes must be a sequence of (name, flags)");
	struct fp_prof_tl_scope *v;
	Py_ssize_t i;

	if (!seq)
		return -1;
	*n = PySequence_Fast_GET_SIZE(seq);
	v = PyMem_Calloc((size_t)(*n ? *n : 1), sizeof(*v));
	if (!v) {
		Py_DECREF(seq);
		PyErr_NoMemory();
		return -1;
	}
	for (i = 0; i < *n; i++) {
		PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
		const char *name;
		Py_ssize_t len;
		unsigned int flags;

		/* The names are borrowed from the sequence's str objects, kept alive by seq. */
		if (!PyArg_ParseTuple(item, "s#I:scope", &name, &len, &flags))
			goto fail_names;
		if (len == 0 || len > MAX_NAME) {
			PyErr_Format(PyExc_ValueError, "scope %zd: a name of 1 to %d bytes", i + 1,
				     MAX_NAME);
			goto fail_names;
		}
		v[i].name = name;
		v[i].len = (size_t)len;
		v[i].flags = flags;
	}
	*out = v;
	*keep = seq; /* the names are borrowed from its items: the caller drops it after use */
	return 0;
fail_names:
	PyMem_Free(v);
	Py_DECREF(seq);
	return -1;
}

PyDoc_STRVAR(
	prof_timeline_add_doc,
	"prof_timeline_add(session, kernel, grid, buffer, scopes, begin_ns, end_ns,\n"
	"                  callpath=False, device_id=0, program_tracks=False) -> dict\n\n"
	"Decode one launch's timeline buffer and file it (fp_prof_timeline_add()) in a session\n"
	"(None: every active one) under the node kernel `kernel` lands on from this thread now.\n"
	"scopes: (name, flags) of scope ids 1..n (flags bit 0: may be software-pipelined).\n"
	"begin_ns/end_ns: host clock around the launch and its synchronisation. callpath: read\n"
	"the Python call path for sessions with context 'python'. Returns the decoder's\n"
	"counters (see timeline_decode(), without 'scopes').");

static PyObject *prof_timeline_add(PyObject *module, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = {"session",   "kernel",         "grid",   "buffer",
				 "scopes",    "begin_ns",       "end_ns", "callpath",
				 "device_id", "program_tracks", NULL};
	PyObject *sobj, *gobj, *bobj, *scobj, *res = NULL, *keep = NULL;
	struct fp_prof_tl_scope *scopes = NULL;
	struct fp_timeline *t = NULL;
	unsigned long long begin, end;
	unsigned int device = 0;
	struct fp_sink_launch l;
	const char *kernel;
	Py_ssize_t klen, nsc = 0, i;
	int cp = 0, progtracks = 0, sid = FP_PROF_ALL, rc;
	Py_buffer buf;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Os#OOOKK|pIp:prof_timeline_add", kwlist,
					 &sobj, &kernel, &klen, &gobj, &bobj, &scobj, &begin, &end,
					 &cp, &device, &progtracks))
		return NULL;
	if (sobj != Py_None) {
		long v = PyLong_AsLong(sobj);

		if (v == -1 && PyErr_Occurred())
			return NULL;
		if (v < 0 || v > INT_MAX)
			return PyErr_Format(PyExc_ValueError, "invalid session id %ld", v);
		sid = (int)v;
	}
	memset(&l, 0, sizeof(l));
	l.callpath = FP_PROF_NO_CALLPATH;
	l.device_id = device;
	{
		PyObject *seq = PySequence_Fast(gobj, "grid must be a sequence of 1 to 3 ints");

		if (!seq)
			return NULL;
		l.grid[0] = l.grid[1] = l.grid[2] = 1;
		if (PySequence_Fast_GET_SIZE(seq) < 1 || PySequence_Fast_GET_SIZE(seq) > 3) {
			Py_DECREF(seq);
			return PyErr_Format(PyExc_ValueError, "grid must have 1 to 3 dimensions");
		}
		for (i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
			unsigned long v = PyLong_AsUnsignedLong(PySequence_Fast_GET_ITEM(seq, i));

			if ((v == (unsigned long)-1 && PyErr_Occurred()) || v > UINT32_MAX) {
				Py_DECREF(seq);
				if (!PyErr_Occurred())
					PyErr_SetString(PyExc_OverflowError, "grid too large");
				return NULL;
			}
			l.grid[i] = (uint32_t)v;
		}
		Py_DECREF(seq);
	}
	if (end < begin)
		return PyErr_Format(PyExc_ValueError, "end_ns %llu is before begin_ns %llu", end,
				    begin);
	if (scopes_arg(scobj, &scopes, &nsc, &keep) < 0)
		return NULL;
	if (PyObject_GetBuffer(bobj, &buf, PyBUF_C_CONTIGUOUS) < 0)
		goto out_scopes;
	if (decode(module, &buf, &t) < 0)
		goto out_buf;
	if ((size_t)nsc != fp_timeline_get_info(t)->nscopes) {
		PyErr_Format(PyExc_ValueError,
			     "the scope table has %zd entries, the buffer's header says %u", nsc,
			     (unsigned)fp_timeline_get_info(t)->nscopes);
		goto out_t;
	}
	rc = fp_prof_name_intern(kernel, (size_t)klen, &l.kernel);
	if (!rc && cp) {
		rc = fpy_prof_callpath_read(&l.callpath);
		if (rc == -1 && PyErr_Occurred())
			goto out_t;
	}
	if (!rc)
		rc = fp_prof_timeline_add(sid, &l, t, scopes, (size_t)nsc, begin, end,
					  progtracks ? FP_PROF_TL_PROGRAM_TRACKS : 0);
	if (rc) {
		fpy_raise(module, rc, NULL);
		goto out_t;
	}
	res = info_dict(t, false);
out_t:
	fp_timeline_free(t);
out_buf:
	PyBuffer_Release(&buf);
out_scopes:
	PyMem_Free(scopes);
	Py_XDECREF(keep);
	return res;
}

#define FN(f) ((PyCFunction)(void (*)(void))(f))

static PyMethodDef timeline_methods[] = {
	{"timeline_decode", timeline_decode, METH_O, timeline_decode_doc},
	{"prof_timeline_add", FN(prof_timeline_add), METH_VARARGS | METH_KEYWORDS,
	 prof_timeline_add_doc},
	{NULL, NULL, 0, NULL},
};

int fpy_timeline_exec(PyObject *module)
{
	return PyModule_AddFunctions(module, timeline_methods);
}
