/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Part `metrics` of flagprism._ext: the CUPTI backend's hardware metrics
 * (include/flagprism/cupti-metrics.h): ask the next CUPTI session for a metric list, read what
 * the last metrics session did (pass count, ranges, degradation reasons), and the aggregation
 * rule of a metric name. A thin client; the collection and aggregation are in C.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <flagprism/cupti-metrics.h>

#include "ext.h"

#define KW (METH_VARARGS | METH_KEYWORDS)
#define FN(f) ((PyCFunction)(void (*)(void))(f))

PyDoc_STRVAR(request_doc,
	     "cupti_metrics_request(metrics=None, max_ranges=0) -> None\n\n"
	     "Metrics for the next CUPTI session started in this process: a comma-separated\n"
	     "string, \"default\", or None for none. max_ranges caps the kernels profiled (0:\n"
	     "4096). Raises flagprism._ext.Error (FP_EINVAL) for a malformed name.");

static PyObject *request(PyObject *module, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"metrics", "max_ranges", NULL};
	const char *list = NULL;
	Py_ssize_t max_ranges = 0;
	struct fp_diag d;
	int rc;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|zn:cupti_metrics_request", kwlist, &list,
					 &max_ranges))
		return NULL;
	if (max_ranges < 0) {
		PyErr_SetString(PyExc_ValueError, "max_ranges must be >= 0");
		return NULL;
	}
	rc = fp_cupti_metrics_request(list, (size_t)max_ranges, &d);
	if (rc)
		return fpy_raise_null(module, rc, &d);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(
	last_doc,
	"cupti_metrics_last() -> dict\n\n"
	"What the last metrics session did: collected, metrics, passes, ranges, dropped,\n"
	"kernels (launches of the profiled context), records, records_timed (their kernel\n"
	"activity records, with times), attached, nodes, chip, reasons (degradation reasons).");

static int set_u64(PyObject *d, const char *key, uint64_t v)
{
	return fpy_set_item(d, key, PyLong_FromUnsignedLongLong(v));
}

static PyObject *last(PyObject *module, PyObject *unused)
{
	struct fp_cupti_metrics_status s;
	PyObject *d, *reasons;
	size_t i;

	(void)module;
	(void)unused;
	fp_cupti_metrics_last(&s);
	reasons = PyList_New(0);
	if (!reasons)
		return NULL;
	for (i = 0; i < s.nreasons; i++) {
		PyObject *r = PyUnicode_DecodeUTF8(s.reasons[i], (Py_ssize_t)strlen(s.reasons[i]),
						   "replace");

		if (!r || PyList_Append(reasons, r)) {
			Py_XDECREF(r);
			Py_DECREF(reasons);
			return NULL;
		}
		Py_DECREF(r);
	}
	d = PyDict_New();
	if (!d) {
		Py_DECREF(reasons);
		return NULL;
	}
	if (fpy_set_item(d, "collected", PyBool_FromLong(s.collected)) ||
	    set_u64(d, "metrics", s.metrics) || set_u64(d, "passes", s.passes) ||
	    set_u64(d, "ranges", s.ranges) || set_u64(d, "dropped", s.dropped) ||
	    set_u64(d, "kernels", s.kernels) || set_u64(d, "records", s.records) ||
	    set_u64(d, "records_timed", s.records_timed) ||
	    set_u64(d, "attached", s.attach.attached) || set_u64(d, "nodes", s.attach.nodes) ||
	    fpy_set_item(d, "chip", PyUnicode_FromString(s.chip)) ||
	    fpy_set_item(d, "reasons", reasons)) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

PyDoc_STRVAR(agg_doc, "cupti_metric_agg(name, metric_type=-1) -> 'sum' | 'mean'\n\n"
		      "How a metric's per-launch values combine on one call-tree node.");

static PyObject *agg(PyObject *module, PyObject *args)
{
	const char *name;
	int type = -1;

	(void)module;
	if (!PyArg_ParseTuple(args, "s|i:cupti_metric_agg", &name, &type))
		return NULL;
	return PyUnicode_FromString(
		fp_cupti_metric_agg(name, type) == FP_CUPTI_METRIC_SUM ? "sum" : "mean");
}

static PyMethodDef metrics_methods[] = {
	{"cupti_metrics_request", FN(request), KW, request_doc},
	{"cupti_metrics_last", last, METH_NOARGS, last_doc},
	{"cupti_metric_agg", agg, METH_VARARGS, agg_doc},
	{NULL, NULL, 0, NULL},
};

int fpy_metrics_exec(PyObject *module)
{
	if (PyModule_AddStringConstant(module, "CUPTI_METRICS_DEFAULT", FP_CUPTI_METRICS_DEFAULT))
		return -1;
	return PyModule_AddFunctions(module, metrics_methods);
}
