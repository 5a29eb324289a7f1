/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Part `debug` of flagprism._ext: `debug_report()`, the one call the Python Debugger makes after
 * a launch. It hands the record buffer, the site table and the launch JSON to libflagprism,
 * which decodes and validates the buffer and writes every report (fp_dbg_decode(),
 * fp_dbg_write_reports()); the GIL is released for all of that. Python gets back the written
 * paths. Nothing is decoded, formatted or written here.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

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
	    fpy_set_item(d, "complete", PyBool_FromLong(out->complete)) ||
	    fpy_set_item(d, "artifacts_error",
		     refused ?
			     PyUnicode_DecodeUTF8(refused, (Py_ssize_t)strlen(refused), "replace") :
			     Py_NewRef(Py_None))) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

PyDoc_STRVAR(debug_report_doc,
	     "debug_report(buffer, site_table_json, launch_json) -> dict\n\n"
	     "Decode a Debugger record buffer (any C-contiguous bytes-like object holding the\n"
	     "whole buffer, docs/record-format.md) with its site table, and write the reports\n"
	     "the launch JSON asks for (docs/debugger-report-schema.md). Returns a dict with the\n"
	     "written paths 'txt', 'json', 'op_log_txt', 'op_log_json', 'raw', 'artifacts_dir',\n"
	     "'tensor_index' (str, or None when not written), 'artifact_count',\n"
	     "'overflow_count', 'dump_overflow', 'complete', and 'artifacts_error': None, or why\n"
	     "level-2 artifacts were refused (the run overflowed; the summary reports are still\n"
	     "written and marked incomplete). Raises FormatError for a corrupt buffer, site table\n"
	     "or launch JSON, OSError when a report cannot be written.");

static PyObject *debug_report(PyObject *module, PyObject *args)
{
	const char *sites, *launch;
	Py_ssize_t sites_len, launch_len;
	struct fp_dbg_outputs out;
	struct fp_dbg_run *run = NULL;
	struct fp_diag diag;
	Py_buffer buf;
	PyObject *res = NULL;
	int st;

	if (!PyArg_ParseTuple(args, "y*s#s#:debug_report", &buf, &sites, &sites_len, &launch,
			      &launch_len))
		return NULL;
	fp_dbg_outputs_init(&out);
	fp_diag_clear(&diag);
	/* The buffer export and both str objects stay alive (and unchanged) through the call. */
	Py_BEGIN_ALLOW_THREADS st =
		fp_dbg_decode(buf.buf, (size_t)buf.len, sites, (size_t)sites_len, &run, &diag);
	if (!st)
		st = fp_dbg_write_reports(run, launch, (size_t)launch_len, &out, &diag);
	fp_dbg_run_free(run);
	Py_END_ALLOW_THREADS PyBuffer_Release(&buf);
	if (st == FP_OK || st == FP_EOVERFLOW)
		res = result_dict(&out, st == FP_EOVERFLOW ? diag.msg : NULL);
	else
		fpy_raise(module, st, &diag);
	fp_dbg_outputs_release(&out);
	return res;
}

static PyMethodDef debug_methods[] = {
	{"debug_report", debug_report, METH_VARARGS, debug_report_doc},
	{NULL, NULL, 0, NULL},
};

int fpy_debug_exec(PyObject *module)
{
	return PyModule_AddFunctions(module, debug_methods);
}
