/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Part `pcsampling` of flagprism._ext: the CUPTI backend's PC sampling
 * (include/flagprism/cupti-pcsampling.h): ask the next CUPTI session to sample, hand a kernel's
 * cubin over for its source lines, and read what the sampling session saw. A thin client; the
 * sampling, line mapping and attribution are in C.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <flagprism/cupti-pcsampling.h>

#include "ext.h"

#define KW (METH_VARARGS | METH_KEYWORDS)
#define FN(f) ((PyCFunction)(void (*)(void))(f))

PyDoc_STRVAR(request_doc,
	     "cupti_pcsampling_request(sampling_period=0, serialized=False) -> None\n\n"
	     "PC sampling for the next CUPTI session started in this process. sampling_period:\n"
	     "2^N cycles between samples per SM, N in 5..31 (0: CUPTI's default). serialized:\n"
	     "CUPTI's kernel-serialized mode (samples carry launch ids; collected nothing on an\n"
	     "H200 with CUDA 13.0). Raises ValueError for a bad period.");

static PyObject *request(PyObject *module, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"sampling_period", "serialized", NULL};
	struct fp_cupti_pcsampling_options o;
	unsigned int period = 0;
	int serialized = 0, rc;
	struct fp_diag d;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|Ip:cupti_pcsampling_request", kwlist, &period,
					 &serialized))
		return NULL;
	memset(&o, 0, sizeof(o));
	o.sampling_period = period;
	o.serialized = serialized != 0;
	rc = fp_cupti_pcsampling_request(&o, &d);
	if (rc)
		return fpy_raise_null(module, rc, &d);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(cancel_doc, "cupti_pcsampling_cancel() -> None\n\n"
			 "Withdraw a request that no CUPTI start consumed.");

static PyObject *cancel(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	fp_cupti_pcsampling_cancel();
	Py_RETURN_NONE;
}

PyDoc_STRVAR(add_cubin_doc,
	     "cupti_pcsampling_add_cubin(cubin: bytes) -> None\n\n"
	     "Hand over a kernel's cubin (Triton: CompiledKernel.asm['cubin']) so that its PC\n"
	     "samples get source lines although its module was loaded before sampling started.");

static PyObject *add_cubin(PyObject *module, PyObject *arg)
{
	Py_buffer b;
	int rc;

	if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE))
		return NULL;
	rc = fp_cupti_pcsampling_add_cubin(b.buf, (size_t)b.len);
	PyBuffer_Release(&b);
	if (rc)
		return fpy_raise_null(module, rc, NULL);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(stats_doc,
	     "cupti_pcsampling_stats() -> dict\n\n"
	     "What the last (or running) PC-sampling session saw: active, total_samples,\n"
	     "dropped_samples, nonuser_samples, samples, on_lines, no_line, no_cubin, no_launch,\n"
	     "lost, bad_records, hw_buffer_full, cubins, cubins_unreadable, launches; and what\n"
	     "CUPTI answered: enable_status, stall_reasons_status, config_status,\n"
	     "config_attribute, config_attribute_status, disable_status, last_getdata_status\n"
	     "(CUptiResult, 0 ok, -1 not called), stall_reasons, sampling_period, serialized,\n"
	     "getdata_calls, getdata_errors, getdata_records, max_remaining_pcs, drains.");

static PyObject *stats(PyObject *module, PyObject *unused)
{
	struct fp_cupti_pcsampling_stats s;
	PyObject *d;

	(void)module;
	(void)unused;
	fp_cupti_pcsampling_get_stats(&s);
	d = PyDict_New();
	if (!d)
		return NULL;
#define U(k) fpy_set_item(d, #k, PyLong_FromUnsignedLongLong(s.k))
#define I(k) fpy_set_item(d, #k, PyLong_FromLong(s.k))
	if (fpy_set_item(d, "active", PyBool_FromLong(s.active)) || U(total_samples) ||
	    U(dropped_samples) || U(nonuser_samples) || U(samples) || U(on_lines) || U(no_line) ||
	    U(no_cubin) || U(no_launch) || U(lost) || U(unfiled) || U(bad_records) ||
	    U(hw_buffer_full) || U(cubins) || U(cubins_unreadable) || U(launches) ||
	    I(enable_status) || I(stall_reasons_status) || I(config_status) ||
	    I(config_attribute) || I(config_attribute_status) || I(disable_status) ||
	    I(last_getdata_status) || U(stall_reasons) || U(sampling_period) ||
	    fpy_set_item(d, "serialized", PyBool_FromLong(s.serialized)) || U(getdata_calls) ||
	    U(getdata_errors) || U(getdata_records) || U(max_remaining_pcs) || U(drains)) {
		Py_DECREF(d);
		return NULL;
	}
#undef U
#undef I
	return d;
}

static PyMethodDef pcsampling_methods[] = {
	{"cupti_pcsampling_request", FN(request), KW, request_doc},
	{"cupti_pcsampling_cancel", cancel, METH_NOARGS, cancel_doc},
	{"cupti_pcsampling_add_cubin", add_cubin, METH_O, add_cubin_doc},
	{"cupti_pcsampling_stats", stats, METH_NOARGS, stats_doc},
	{NULL, NULL, 0, NULL},
};

int fpy_pcsampling_exec(PyObject *module)
{
	return PyModule_AddFunctions(module, pcsampling_methods);
}
