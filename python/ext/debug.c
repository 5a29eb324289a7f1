/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Part `debug` of flagprism._ext: `debug_report()`, the one call the Python Debugger makes after
 * a launch. It hands the record buffer, the site table and the launch JSON to libflagprism,
 * which decodes and validates the buffer and writes every report (fp_dbg_decode(),
 * fp_dbg_report()); the GIL is released for all of that. Python gets back the written
 * paths. Also the whole-program summary (<flagprism/debug-summary.h>), held in a capsule that
 * the Debugger keeps and feeds with every launch it sees. Nothing is decoded, formatted or
 * written here.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <flagprism/debug-pipe.h>
#include <flagprism/debug-summary.h>
#include <flagprism/debug.h>
#include <flagprism/status.h>

#include "ext.h"

/* A written path as str (file-system encoding), or None. NULL with an exception on failure. */
static PyObject *path_or_none(const char *path)
{
	if (!path)
		Py_RETURN_NONE;
	return PyUnicode_DecodeFSDefault(path);
}

/* The result dict; `refused` is the reason level-2 artifacts were refused, or NULL. */
static PyObject *result_dict(const struct fp_dbg_outputs *out, const char *refused)
{
	PyObject *d = PyDict_New();

	if (!d)
		return NULL;
	if (fpy_set_item(d, "txt", path_or_none(out->txt)) ||
	    fpy_set_item(d, "json", path_or_none(out->json)) ||
	    fpy_set_item(d, "op_log_txt", path_or_none(out->op_log_txt)) ||
	    fpy_set_item(d, "op_log_json", path_or_none(out->op_log_json)) ||
	    fpy_set_item(d, "raw", path_or_none(out->raw)) ||
	    fpy_set_item(d, "artifacts_dir", path_or_none(out->artifacts_dir)) ||
	    fpy_set_item(d, "tensor_index", path_or_none(out->tensor_index)) ||
	    fpy_set_item(d, "artifact_count", PyLong_FromSize_t(out->artifact_count)) ||
	    fpy_set_item(d, "overflow_count", PyLong_FromUnsignedLongLong(out->overflow_count)) ||
	    fpy_set_item(d, "dump_overflow", PyLong_FromUnsignedLongLong(out->dump_overflow)) ||
	    fpy_set_item(d, "dump_words_requested",
			 PyLong_FromUnsignedLongLong(out->dump_cursor)) ||
	    fpy_set_item(d, "complete", PyBool_FromLong(out->complete)) ||
	    fpy_set_item(d, "artifacts_error",
			 refused ? PyUnicode_DecodeUTF8(refused, (Py_ssize_t)strlen(refused),
							"replace") :
				   Py_NewRef(Py_None))) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

#define SUMMARY_CAPSULE "flagprism.debug_summary"

static void summary_capsule_free(PyObject *cap)
{
	fp_dbg_summary_free(PyCapsule_GetPointer(cap, SUMMARY_CAPSULE));
}

/* The summary in a capsule argument (None allowed when `none_ok`). NULL without an exception
 * for None; NULL with one for a wrong object. */
static struct fp_dbg_summary *summary_arg(PyObject *obj, bool none_ok, bool *err)
{
	*err = false;
	if (obj == Py_None && none_ok)
		return NULL;
	if (!PyCapsule_IsValid(obj, SUMMARY_CAPSULE)) {
		PyErr_SetString(PyExc_TypeError, "expected a summary from debug_summary_new()");
		*err = true;
		return NULL;
	}
	return PyCapsule_GetPointer(obj, SUMMARY_CAPSULE);
}

PyDoc_STRVAR(
	debug_report_doc,
	"debug_report(buffer, site_table_json, launch_json, summary=None, launch_index=0,\n"
	"             findings_only=False) -> dict\n\n"
	"Decode a Debugger record buffer (any C-contiguous bytes-like object holding the\n"
	"whole buffer, docs/formats/record-format.md) with its site table, and write the reports\n"
	"the launch JSON asks for (docs/formats/debugger-report-schema.md); with a summary, add the\n"
	"launch's findings to it under launch_index; with findings_only, write the files only\n"
	"when the launch has findings or did not record everything. Returns a dict with the\n"
	"written paths 'txt', 'json', 'op_log_txt', 'op_log_json', 'raw', 'artifacts_dir',\n"
	"'tensor_index' (str, or None when not written), 'artifact_count',\n"
	"'overflow_count', 'dump_overflow', 'complete', 'findings' (count), and\n"
	"'artifacts_error': None, or why level-2 artifacts were refused (the run overflowed;\n"
	"the summary reports are still written and marked incomplete). Raises FormatError for\n"
	"a corrupt buffer, site table or launch JSON, OSError when a report cannot be written.");

static PyObject *debug_report(PyObject *module, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = {"buffer",       "site_table_json", "launch_json", "summary",
				 "launch_index", "findings_only",   NULL};
	const char *sites, *launch;
	Py_ssize_t sites_len, launch_len;
	struct fp_dbg_outputs out;
	struct fp_dbg_run *run = NULL;
	struct fp_dbg_summary *summary;
	struct fp_diag diag;
	PyObject *sobj = Py_None, *res = NULL;
	unsigned long long index = 0;
	int findings_only = 0;
	size_t nfindings = 0;
	bool bad;
	Py_buffer buf;
	int st;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*s#s#|OKp:debug_report", kwlist, &buf,
					 &sites, &sites_len, &launch, &launch_len, &sobj, &index,
					 &findings_only))
		return NULL;
	summary = summary_arg(sobj, true, &bad);
	if (bad) {
		PyBuffer_Release(&buf);
		return NULL;
	}
	fp_dbg_outputs_init(&out);
	fp_diag_clear(&diag);
	/* The buffer export, both str objects and the capsule stay alive through the call. */
	Py_BEGIN_ALLOW_THREADS st =
		fp_dbg_decode(buf.buf, (size_t)buf.len, sites, (size_t)sites_len, &run, &diag);
	if (!st)
		st = fp_dbg_report(run, launch, (size_t)launch_len, summary, index,
				   findings_only ? FP_DBG_REPORT_FINDINGS_ONLY : 0, &out,
				   &nfindings, &diag);
	fp_dbg_run_free(run);
	Py_END_ALLOW_THREADS PyBuffer_Release(&buf);
	if (st == FP_OK || st == FP_EOVERFLOW) {
		res = result_dict(&out, st == FP_EOVERFLOW ? diag.msg : NULL);
		if (res && fpy_set_item(res, "findings", PyLong_FromSize_t(nfindings)))
			Py_CLEAR(res);
	} else {
		fpy_raise(module, st, &diag);
	}
	fp_dbg_outputs_release(&out);
	return res;
}

PyDoc_STRVAR(debug_summary_new_doc,
	     "debug_summary_new() -> summary\n\n"
	     "A new, empty whole-program summary (an opaque capsule) for the other\n"
	     "debug_summary_* functions and debug_report().");

static PyObject *debug_summary_new(PyObject *module, PyObject *Py_UNUSED(ignored))
{
	struct fp_dbg_summary *s = NULL;
	PyObject *cap;
	int st = fp_dbg_summary_new(&s);

	if (st)
		return fpy_raise_null(module, st, NULL);
	cap = PyCapsule_New(s, SUMMARY_CAPSULE, summary_capsule_free);
	if (!cap)
		fp_dbg_summary_free(s);
	return cap;
}

PyDoc_STRVAR(debug_summary_launch_doc,
	     "debug_summary_launch(summary, kernel, source_file, status, reason=None, count=1,\n"
	     "                     index=None) -> int\n\n"
	     "Account for `count` launches of `kernel` with status 0 instrumented, 1 excluded,\n"
	     "2 unobservable, 3 failed or 4 nothing to observe, and why (None for instrumented).\n"
	     "`index`: a launch index from debug_summary_reserve() (count must be 1), or None for\n"
	     "new ones. Returns the index of the first of them.");

static PyObject *debug_summary_launch(PyObject *module, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = {"summary", "kernel", "source_file", "status",
				 "reason",  "count",  "index",       NULL};
	PyObject *sobj, *iobj = Py_None;
	const char *kernel, *file, *reason = NULL;
	unsigned long long count = 1, index = FP_DBG_SUMMARY_NEW_INDEX;
	uint64_t first = 0;
	struct fp_dbg_summary *s;
	int status, st;
	bool bad;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Ossi|zKO:debug_summary_launch", kwlist,
					 &sobj, &kernel, &file, &status, &reason, &count, &iobj))
		return NULL;
	s = summary_arg(sobj, false, &bad);
	if (!s)
		return NULL;
	if (iobj != Py_None) {
		index = PyLong_AsUnsignedLongLong(iobj);
		if (PyErr_Occurred())
			return NULL;
	}
	if (status < 0 || status >= FP_DBG_LAUNCH_NSTATUS) {
		PyErr_Format(PyExc_ValueError, "status must be 0..%d, got %d",
			     FP_DBG_LAUNCH_NSTATUS - 1, status);
		return NULL;
	}
	st = fp_dbg_summary_launch(s, kernel, file, (enum fp_dbg_launch_status)status, reason,
				   count, index, &first);
	if (st)
		return fpy_raise_null(module, st, NULL);
	return PyLong_FromUnsignedLongLong(first);
}

static PyObject *debug_summary_reserve(PyObject *module, PyObject *sobj)
{
	bool bad;
	struct fp_dbg_summary *s = summary_arg(sobj, false, &bad);

	(void)module;
	if (!s)
		return NULL;
	return PyLong_FromUnsignedLongLong(fp_dbg_summary_reserve(s));
}

static PyObject *debug_summary_set(PyObject *module, PyObject *args)
{
	PyObject *sobj, *value;
	const char *key;
	struct fp_dbg_summary *s;
	bool bad;
	int st;

	if (!PyArg_ParseTuple(args, "OsO:debug_summary_set", &sobj, &key, &value))
		return NULL;
	s = summary_arg(sobj, false, &bad);
	if (!s)
		return NULL;
	if (PyLong_Check(value) && !PyBool_Check(value)) {
		long long v = PyLong_AsLongLong(value);

		if (v == -1 && PyErr_Occurred())
			return NULL;
		st = fp_dbg_summary_set_int(s, key, v);
	} else if (value == Py_None || PyUnicode_Check(value)) {
		const char *str = value == Py_None ? NULL : PyUnicode_AsUTF8(value);

		if (value != Py_None && !str)
			return NULL;
		st = fp_dbg_summary_set(s, key, str);
	} else {
		PyErr_SetString(PyExc_TypeError, "value must be str, int or None");
		return NULL;
	}
	if (st == FP_EINVAL) {
		PyErr_Format(PyExc_ValueError, "unknown summary field %R for this value",
			     PyTuple_GET_ITEM(args, 1));
		return NULL;
	}
	if (st)
		return fpy_raise_null(module, st, NULL);
	Py_RETURN_NONE;
}

static PyObject *debug_summary_clear(PyObject *module, PyObject *sobj)
{
	bool bad;
	struct fp_dbg_summary *s = summary_arg(sobj, false, &bad);

	(void)module;
	if (!s)
		return NULL;
	fp_dbg_summary_clear(s);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(debug_summary_format_doc,
	     "debug_summary_format(summary, format) -> str\n\n"
	     "The summary as text: format 'txt' (what flagprism debug prints) or 'json'\n"
	     "(summary.json).");

static PyObject *debug_summary_format(PyObject *module, PyObject *args)
{
	PyObject *sobj, *res = NULL;
	const char *format;
	struct fp_dbg_summary *s;
	struct fp_diag diag;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	bool bad;
	int st;

	if (!PyArg_ParseTuple(args, "Os:debug_summary_format", &sobj, &format))
		return NULL;
	s = summary_arg(sobj, false, &bad);
	if (!s)
		return NULL;
	f = open_memstream(&text, &len);
	if (!f)
		return PyErr_NoMemory();
	fp_diag_clear(&diag);
	Py_BEGIN_ALLOW_THREADS st = fp_dbg_summary_write_format(s, format, f, &diag);
	Py_END_ALLOW_THREADS if (fclose(f) && !st) st = FP_EIO;
	if (!st)
		res = PyUnicode_DecodeUTF8(text, (Py_ssize_t)len, "replace");
	else
		fpy_raise(module, st, &diag);
	free(text); /* open_memstream's buffer comes from the C library's malloc */
	return res;
}

static PyObject *debug_summary_write(PyObject *module, PyObject *args)
{
	PyObject *sobj, *dir;
	struct fp_dbg_summary *s;
	struct fp_diag diag;
	bool bad;
	int st;

	if (!PyArg_ParseTuple(args, "OO&:debug_summary_write", &sobj, PyUnicode_FSConverter, &dir))
		return NULL;
	s = summary_arg(sobj, false, &bad);
	if (!s) {
		Py_DECREF(dir);
		return NULL;
	}
	fp_diag_clear(&diag);
	Py_BEGIN_ALLOW_THREADS st = fp_dbg_summary_write(s, PyBytes_AS_STRING(dir), &diag);
	Py_END_ALLOW_THREADS Py_DECREF(dir);
	if (st)
		return fpy_raise_null(module, st, &diag);
	Py_RETURN_NONE;
}

/* The totals as debug_summary_totals() returns them; NULL with an exception. */
static PyObject *totals_dict(const struct fp_dbg_summary_totals *t)
{
	PyObject *d, *by;
	int i;

	d = PyDict_New();
	by = PyDict_New();
	if (!d || !by)
		goto fail_dict;
	for (i = 0; i < FP_DBG_LAUNCH_NSTATUS; i++)
		if (fpy_set_item(by, fp_dbg_launch_status_name((enum fp_dbg_launch_status)i),
				 PyLong_FromUnsignedLongLong(t->by_status[i])))
			goto fail_dict;
	if (fpy_set_item(d, "kernels", PyLong_FromUnsignedLongLong(t->kernels)) ||
	    fpy_set_item(d, "launches", PyLong_FromUnsignedLongLong(t->launches)) ||
	    fpy_set_item(d, "findings", PyLong_FromUnsignedLongLong(t->findings)) ||
	    fpy_set_item(d, "launches_with_findings",
			 PyLong_FromUnsignedLongLong(t->finding_launches)) ||
	    fpy_set_item(d, "reports", PyLong_FromUnsignedLongLong(t->reports)) ||
	    fpy_set_item(d, "incomplete_launches",
			 PyLong_FromUnsignedLongLong(t->incomplete_launches)) ||
	    fpy_set_item(d, "by_status", Py_NewRef(by)))
		goto fail_dict;
	Py_DECREF(by);
	return d;
fail_dict:
	Py_XDECREF(by);
	Py_XDECREF(d);
	return NULL;
}

static PyObject *debug_summary_totals(PyObject *module, PyObject *sobj)
{
	struct fp_dbg_summary_totals t;
	bool bad;
	struct fp_dbg_summary *s = summary_arg(sobj, false, &bad);

	(void)module;
	if (!s)
		return NULL;
	fp_dbg_summary_totals(s, &t);
	return totals_dict(&t);
}

/* A list of str as a NULL-terminated array of borrowed UTF-8 strings (freed with PyMem_Free;
 * the strings live as long as `seq`, which no other thread may see); NULL with an exception. */
static const char **str_array(PyObject *seq, const char *what, size_t *n)
{
	const char **a;
	Py_ssize_t i, len;

	if (!PyList_Check(seq)) {
		PyErr_Format(PyExc_TypeError, "%s must be a list of str", what);
		return NULL;
	}
	len = PyList_GET_SIZE(seq);
	a = PyMem_Calloc((size_t)len + 1, sizeof(*a));
	if (!a) {
		PyErr_NoMemory();
		return NULL;
	}
	for (i = 0; i < len; i++) {
		PyObject *it = PyList_GET_ITEM(seq, i);

		a[i] = PyUnicode_Check(it) ? PyUnicode_AsUTF8(it) : NULL;
		if (!a[i]) {
			if (!PyErr_Occurred())
				PyErr_Format(PyExc_TypeError, "%s must be a list of str", what);
			PyMem_Free(a);
			return NULL;
		}
	}
	*n = (size_t)len;
	return a;
}

PyDoc_STRVAR(
	debug_summary_write_parts_doc,
	"debug_summary_write_parts(summary, dir, parts, expected) -> dict\n\n"
	"Write dir/summary.json and dir/summary.txt: the summaries of a pytest-xdist\n"
	"session's workers (`parts`: a list of summary.json paths or their directories)\n"
	"merged under `summary`, the controlling process's own (fp_dbg_summary_write_parts());\n"
	"`expected`: the ids of the workers that ran (those without a part are missing).\n"
	"Returns the merged totals (as debug_summary_totals()) plus parts, missing (the\n"
	"missing workers' ids as text, \"\" for none), nmissing and incomplete.");

static PyObject *debug_summary_write_parts(PyObject *module, PyObject *args)
{
	PyObject *sobj, *dir, *plist, *elist, *d = NULL, *pcopy = NULL, *ecopy = NULL;
	struct fp_dbg_summary_parts_report rep;
	const char **parts = NULL, **expected = NULL;
	size_t np = 0, ne = 0;
	struct fp_dbg_summary *s;
	struct fp_diag diag;
	bool bad;
	int st;

	if (!PyArg_ParseTuple(args, "OO&OO:debug_summary_write_parts", &sobj, PyUnicode_FSConverter,
			      &dir, &plist, &elist))
		return NULL;
	s = summary_arg(sobj, false, &bad);
	if (!s)
		goto out;
	/* copies: the lists' strings must outlive the call, which releases the GIL */
	pcopy = PySequence_List(plist);
	ecopy = pcopy ? PySequence_List(elist) : NULL;
	if (!ecopy)
		goto out;
	parts = str_array(pcopy, "parts", &np);
	if (!parts)
		goto out;
	expected = str_array(ecopy, "expected", &ne);
	if (!expected)
		goto out;
	fp_diag_clear(&diag);
	Py_BEGIN_ALLOW_THREADS st = fp_dbg_summary_write_parts(s, PyBytes_AS_STRING(dir), parts, np,
							       expected, ne, &rep, &diag);
	Py_END_ALLOW_THREADS if (st)
	{
		fpy_raise(module, st, &diag);
		goto out;
	}
	d = totals_dict(&rep.totals);
	if (d && (fpy_set_item(d, "parts", PyLong_FromSize_t(rep.parts)) ||
		  fpy_set_item(d, "nmissing", PyLong_FromSize_t(rep.nmissing)) ||
		  fpy_set_item(d, "missing",
			       PyUnicode_DecodeUTF8(rep.missing, strlen(rep.missing), "replace")) ||
		  fpy_set_item(d, "incomplete", PyLong_FromSize_t(rep.incomplete))))
		Py_CLEAR(d);
out:
	PyMem_Free(parts);
	PyMem_Free(expected);
	Py_XDECREF(pcopy);
	Py_XDECREF(ecopy);
	Py_DECREF(dir);
	return d;
}

/* ---- the launch pipeline (<flagprism/debug-pipe.h>) ----------------------------------------- */

#define PIPE_CAPSULE "flagprism.debug_pipe"

/* The pipeline keeps a reference to its summary's capsule so that the summary outlives it. */
struct pipe_box {
	struct fp_dbg_pipe *pipe;
	PyObject *summary; /* strong reference */
};

static void pipe_capsule_free(PyObject *cap)
{
	struct pipe_box *b = PyCapsule_GetPointer(cap, PIPE_CAPSULE);

	if (!b)
		return;
	Py_BEGIN_ALLOW_THREADS fp_dbg_pipe_free(b->pipe);
	Py_END_ALLOW_THREADS Py_XDECREF(b->summary);
	PyMem_Free(b);
}

static struct fp_dbg_pipe *pipe_arg(PyObject *obj)
{
	struct pipe_box *b;

	if (!PyCapsule_IsValid(obj, PIPE_CAPSULE)) {
		PyErr_SetString(PyExc_TypeError, "expected a pipeline from debug_pipe_new()");
		return NULL;
	}
	b = PyCapsule_GetPointer(obj, PIPE_CAPSULE);
	return b ? b->pipe : NULL;
}

struct fp_dbg_pipe *fpy_debug_pipe(PyObject *capsule)
{
	return pipe_arg(capsule);
}

PyDoc_STRVAR(
	debug_pipe_new_doc,
	"debug_pipe_new(summary, pool_bytes, device_pool, findings_only, max_reports) -> pipe\n\n"
	"A launch pipeline feeding `summary`: a host pool of pool_bytes (page-locked, paired\n"
	"with the device pool at address device_pool; 0: host only), one background thread.");

static PyObject *debug_pipe_new(PyObject *module, PyObject *args)
{
	struct fp_dbg_pipe_options opt = {0};
	unsigned long long pool, dev, max_reports;
	struct fp_dbg_summary *s;
	struct fp_diag diag;
	struct pipe_box *b;
	PyObject *sobj, *cap;
	int findings_only, st;
	bool bad;

	if (!PyArg_ParseTuple(args, "OKKpK:debug_pipe_new", &sobj, &pool, &dev, &findings_only,
			      &max_reports))
		return NULL;
	s = summary_arg(sobj, false, &bad);
	if (!s)
		return NULL;
	opt.pool_bytes = (size_t)pool;
	opt.device_pool = dev;
	opt.report_flags = findings_only ? FP_DBG_REPORT_FINDINGS_ONLY : 0;
	opt.max_reports = max_reports;
	b = PyMem_Calloc(1, sizeof(*b));
	if (!b)
		return PyErr_NoMemory();
	fp_diag_clear(&diag);
	Py_BEGIN_ALLOW_THREADS st = fp_dbg_pipe_new(&b->pipe, s, &opt, &diag);
	Py_END_ALLOW_THREADS if (st)
	{
		PyMem_Free(b);
		return fpy_raise_null(module, st, &diag);
	}
	b->summary = Py_NewRef(sobj);
	cap = PyCapsule_New(b, PIPE_CAPSULE, pipe_capsule_free);
	if (!cap) {
		fp_dbg_pipe_free(b->pipe);
		Py_DECREF(b->summary);
		PyMem_Free(b);
	}
	return cap;
}

static PyObject *debug_pipe_reserve(PyObject *module, PyObject *args)
{
	unsigned long long bytes;
	struct fp_dbg_pipe *p;
	struct fp_diag diag;
	PyObject *pobj;
	size_t off = 0;
	int st;

	if (!PyArg_ParseTuple(args, "OK:debug_pipe_reserve", &pobj, &bytes) ||
	    !(p = pipe_arg(pobj)))
		return NULL;
	fp_diag_clear(&diag);
	/* may wait for older launches: without the GIL */
	Py_BEGIN_ALLOW_THREADS st = fp_dbg_pipe_reserve(p, (size_t)bytes, &off, &diag);
	Py_END_ALLOW_THREADS if (st == FP_ELIMIT) Py_RETURN_NONE;
	if (st)
		return fpy_raise_null(module, st, &diag);
	return PyLong_FromSize_t(off);
}

static PyObject *debug_pipe_unreserve(PyObject *module, PyObject *args)
{
	unsigned long long off;
	struct fp_dbg_pipe *p;
	PyObject *pobj;

	(void)module;
	if (!PyArg_ParseTuple(args, "OK:debug_pipe_unreserve", &pobj, &off) ||
	    !(p = pipe_arg(pobj)))
		return NULL;
	fp_dbg_pipe_unreserve(p, (size_t)off);
	Py_RETURN_NONE;
}

static PyObject *debug_pipe_fill(PyObject *module, PyObject *args)
{
	unsigned long long off;
	struct fp_dbg_pipe *p;
	struct fp_diag diag;
	PyObject *pobj;
	Py_buffer buf;
	int st;

	if (!PyArg_ParseTuple(args, "OKy*:debug_pipe_fill", &pobj, &off, &buf))
		return NULL;
	if (!(p = pipe_arg(pobj))) {
		PyBuffer_Release(&buf);
		return NULL;
	}
	fp_diag_clear(&diag);
	st = fp_dbg_pipe_fill(p, (size_t)off, buf.buf, (size_t)buf.len, &diag);
	PyBuffer_Release(&buf);
	if (st)
		return fpy_raise_null(module, st, &diag);
	Py_RETURN_NONE;
}

int fpy_debug_pipe_reserve_prepare(struct fp_dbg_pipe *p, size_t bytes, const void *hdr,
				   size_t hdr_len, uint64_t stream, size_t *off,
				   struct fp_diag *diag)
{
	int st;

	fp_diag_clear(diag);
	/* may wait for older launches: without the GIL */
	Py_BEGIN_ALLOW_THREADS st = fp_dbg_pipe_reserve(p, bytes, off, diag);
	if (!st) {
		st = fp_dbg_pipe_prepare(p, *off, bytes, hdr, hdr_len, stream, diag);
		if (st)
			fp_dbg_pipe_unreserve(p, *off);
	}
	Py_END_ALLOW_THREADS return st;
}

/* Reserve a slice and prepare it (fp_dbg_pipe_prepare) in one call: the launch path's one
 * crossing before the launch. */
static PyObject *debug_pipe_reserve_prepare(PyObject *module, PyObject *args)
{
	unsigned long long bytes, stream;
	struct fp_dbg_pipe *p;
	struct fp_diag diag;
	PyObject *pobj;
	Py_buffer hdr;
	size_t off = 0;
	int st;

	if (!PyArg_ParseTuple(args, "OKy*K:debug_pipe_reserve_prepare", &pobj, &bytes, &hdr,
			      &stream))
		return NULL;
	if (!(p = pipe_arg(pobj))) {
		PyBuffer_Release(&hdr);
		return NULL;
	}
	st = fpy_debug_pipe_reserve_prepare(p, (size_t)bytes, hdr.buf, (size_t)hdr.len, stream,
					    &off, &diag);
	PyBuffer_Release(&hdr);
	if (st == FP_ELIMIT)
		Py_RETURN_NONE;
	if (st)
		return fpy_raise_null(module, st, &diag);
	return PyLong_FromSize_t(off);
}

PyDoc_STRVAR(
	debug_pipe_submit_doc,
	"debug_pipe_submit(pipe, offset, bytes, stream, kernel, source_file, site_table_json,\n"
	"                  launch_json, launch_index)\n\n"
	"Hand the launch whose record buffer is the reserved slice at offset to the pipeline:\n"
	"its read back is queued on the stream; it is decoded, reported and accounted for in\n"
	"the summary in the background.");

static PyObject *debug_pipe_submit(PyObject *module, PyObject *args)
{
	unsigned long long off, bytes, stream, index;
	const char *kernel, *file, *sites, *launch;
	Py_ssize_t site_len, launch_len;
	struct fp_dbg_pipe_job job;
	struct fp_dbg_pipe *p;
	struct fp_diag diag;
	PyObject *pobj;
	int st;

	if (!PyArg_ParseTuple(args, "OKKKsss#s#K:debug_pipe_submit", &pobj, &off, &bytes, &stream,
			      &kernel, &file, &sites, &site_len, &launch, &launch_len, &index) ||
	    !(p = pipe_arg(pobj)))
		return NULL;
	job = (struct fp_dbg_pipe_job){.kernel = kernel,
				       .source_file = file,
				       .site_table = sites,
				       .site_len = (size_t)site_len,
				       .launch_json = launch,
				       .launch_len = (size_t)launch_len,
				       .launch_index = index};
	fp_diag_clear(&diag);
	Py_BEGIN_ALLOW_THREADS st =
		fp_dbg_pipe_submit(p, (size_t)off, (size_t)bytes, stream, &job, &diag);
	Py_END_ALLOW_THREADS if (st) return fpy_raise_null(module, st, &diag);
	Py_RETURN_NONE;
}

static PyObject *debug_pipe_drain(PyObject *module, PyObject *pobj)
{
	struct fp_dbg_pipe *p = pipe_arg(pobj);

	(void)module;
	if (!p)
		return NULL;
	Py_BEGIN_ALLOW_THREADS fp_dbg_pipe_drain(p);
	Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

static PyObject *pipe_result_dict(const struct fp_dbg_pipe_result *r)
{
	PyObject *d = result_dict(&r->out, r->status == FP_EOVERFLOW ? r->message : NULL);

	if (!d)
		return NULL;
	if (fpy_set_item(d, "launch_index", PyLong_FromUnsignedLongLong(r->launch_index)) ||
	    fpy_set_item(d, "findings", PyLong_FromSize_t(r->nfindings)) ||
	    fpy_set_item(d, "status", PyUnicode_FromString(fp_status_name(r->status))) ||
	    fpy_set_item(d, "error",
			 r->message && r->status != FP_EOVERFLOW ?
				 PyUnicode_DecodeUTF8(r->message, (Py_ssize_t)strlen(r->message),
						      "replace") :
				 Py_NewRef(Py_None))) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

static PyObject *debug_pipe_take(PyObject *module, PyObject *pobj)
{
	struct fp_dbg_pipe_result *r = NULL;
	struct fp_dbg_pipe *p = pipe_arg(pobj);
	PyObject *list;
	size_t n, i;

	(void)module;
	if (!p)
		return NULL;
	n = fp_dbg_pipe_take(p, &r);
	list = PyList_New((Py_ssize_t)n);
	for (i = 0; list && i < n; i++) {
		PyObject *d = pipe_result_dict(&r[i]);

		if (!d) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, d);
	}
	fp_dbg_pipe_results_free(r, n);
	return list;
}

static PyObject *debug_pipe_stats(PyObject *module, PyObject *pobj)
{
	struct fp_dbg_pipe_stats st;
	struct fp_dbg_pipe *p = pipe_arg(pobj);
	PyObject *d;

	(void)module;
	if (!p)
		return NULL;
	fp_dbg_pipe_stats(p, &st);
	d = PyDict_New();
	if (d &&
	    (fpy_set_item(d, "submitted", PyLong_FromUnsignedLongLong(st.submitted)) ||
	     fpy_set_item(d, "done", PyLong_FromUnsignedLongLong(st.done)) ||
	     fpy_set_item(d, "failed", PyLong_FromUnsignedLongLong(st.failed)) ||
	     fpy_set_item(d, "pool_waits", PyLong_FromUnsignedLongLong(st.pool_waits)) ||
	     fpy_set_item(d, "results_dropped", PyLong_FromUnsignedLongLong(st.results_dropped)) ||
	     fpy_set_item(d, "reports_suppressed",
			  PyLong_FromUnsignedLongLong(st.reports_suppressed)) ||
	     fpy_set_item(d, "pool_bytes", PyLong_FromSize_t(st.pool_bytes)) ||
	     fpy_set_item(d, "in_flight_bytes", PyLong_FromSize_t(st.in_flight_bytes))))
		Py_CLEAR(d);
	return d;
}

static PyObject *debug_pipe_release_spare(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return PyLong_FromSize_t(fp_dbg_pipe_release_spare());
}

PyDoc_STRVAR(
	debug_checks_doc,
	"debug_checks() -> list of dict\n\n"
	"The library's registry of check mode's checks (fp_dbg_check_at), in order: per check\n"
	"its name, the kinds of findings it reports, what it needs the twin to record\n"
	"(addresses; values; full_values: value summaries, not NaN/Inf counts alone) and a\n"
	"one-line summary. The one list the CLI, the Python API and the pytest plugin read.");

static PyObject *debug_checks(PyObject *module, PyObject *unused)
{
	PyObject *out = PyList_New(0);
	size_t i;

	(void)module;
	(void)unused;
	for (i = 0; out && fp_dbg_check_at(i); i++) {
		const struct fp_dbg_check_info *ck = fp_dbg_check_at(i);
		PyObject *kinds = PyList_New(0), *d = NULL;
		unsigned k;

		for (k = 0; kinds && k < 32; k++) {
			PyObject *name;

			if (!(ck->kinds & (1u << k)))
				continue;
			name = PyUnicode_FromString(
				fp_dbg_finding_kind_name((enum fp_dbg_finding_kind)k));
			if (!name || PyList_Append(kinds, name)) {
				Py_XDECREF(name);
				Py_CLEAR(kinds);
				break;
			}
			Py_DECREF(name);
		}
		if (kinds)
			d = Py_BuildValue(
				"{s:s,s:N,s:O,s:O,s:O,s:s}", "name", ck->name, "kinds", kinds,
				"addresses",
				(ck->records & FP_DBG_CHECK_ADDRESSES) ? Py_True : Py_False,
				"values", (ck->records & FP_DBG_CHECK_VALUES) ? Py_True : Py_False,
				"full_values",
				(ck->records & FP_DBG_CHECK_FULL_VALUES) ? Py_True : Py_False,
				"summary", ck->summary);
		if (!d || PyList_Append(out, d))
			Py_CLEAR(out);
		Py_XDECREF(d);
	}
	return out;
}

static PyMethodDef debug_methods[] = {
	{"debug_checks", debug_checks, METH_NOARGS, debug_checks_doc},
	{"debug_report", (PyCFunction)(void (*)(void))debug_report, METH_VARARGS | METH_KEYWORDS,
	 debug_report_doc},
	{"debug_summary_new", debug_summary_new, METH_NOARGS, debug_summary_new_doc},
	{"debug_summary_launch", (PyCFunction)(void (*)(void))debug_summary_launch,
	 METH_VARARGS | METH_KEYWORDS, debug_summary_launch_doc},
	{"debug_summary_reserve", debug_summary_reserve, METH_O,
	 "debug_summary_reserve(summary) -> int: the next launch index, reserved."},
	{"debug_summary_set", debug_summary_set, METH_VARARGS,
	 "debug_summary_set(summary, key, value): a top-level field (mode, checks, command,\n"
	 "output_dir, incomplete, worker: str or None; exit_status, worker_count: int)."},
	{"debug_summary_clear", debug_summary_clear, METH_O,
	 "debug_summary_clear(summary): forget every launch and finding."},
	{"debug_summary_format", debug_summary_format, METH_VARARGS, debug_summary_format_doc},
	{"debug_summary_write", debug_summary_write, METH_VARARGS,
	 "debug_summary_write(summary, dir): write dir/summary.json and dir/summary.txt."},
	{"debug_summary_totals", debug_summary_totals, METH_O,
	 "debug_summary_totals(summary) -> dict: kernels, launches, by_status, findings,\n"
	 "launches_with_findings, reports."},
	{"debug_summary_write_parts", debug_summary_write_parts, METH_VARARGS,
	 debug_summary_write_parts_doc},
	{"debug_pipe_new", debug_pipe_new, METH_VARARGS, debug_pipe_new_doc},
	{"debug_pipe_reserve", debug_pipe_reserve, METH_VARARGS,
	 "debug_pipe_reserve(pipe, bytes) -> offset, or None when it does not fit the pool\n"
	 "(waits while the pool is full)."},
	{"debug_pipe_unreserve", debug_pipe_unreserve, METH_VARARGS,
	 "debug_pipe_unreserve(pipe, offset): give back a slice no launch used."},
	{"debug_pipe_reserve_prepare", debug_pipe_reserve_prepare, METH_VARARGS,
	 "debug_pipe_reserve_prepare(pipe, bytes, header, stream) -> offset or None: reserve a\n"
	 "slice (None: it does not fit the pool), zero it and write `header` at its start on\n"
	 "`stream`; a slice whose preparation fails is given back and the error raised."},
	{"debug_pipe_submit", debug_pipe_submit, METH_VARARGS, debug_pipe_submit_doc},
	{"debug_pipe_fill", debug_pipe_fill, METH_VARARGS,
	 "debug_pipe_fill(pipe, offset, buffer): copy a host record buffer into a reserved slice\n"
	 "of a host-only pipeline."},
	{"debug_pipe_drain", debug_pipe_drain, METH_O,
	 "debug_pipe_drain(pipe): wait until every submitted launch is done."},
	{"debug_pipe_take", debug_pipe_take, METH_O,
	 "debug_pipe_take(pipe) -> [dict]: the finished launches, in order (paths, findings,\n"
	 "status, error)."},
	{"debug_pipe_stats", debug_pipe_stats, METH_O,
	 "debug_pipe_stats(pipe) -> dict: submitted, done, failed, pool_waits,\n"
	 "results_dropped, reports_suppressed, pool_bytes, in_flight_bytes."},
	{"debug_pipe_release_spare", debug_pipe_release_spare, METH_NOARGS,
	 "debug_pipe_release_spare() -> int: free the page-locked pool a closed pipeline left\n"
	 "for the next one; its bytes (0: none was kept)."},
	{NULL, NULL, 0, NULL},
};

int fpy_debug_exec(PyObject *module)
{
	return PyModule_AddFunctions(module, debug_methods);
}
