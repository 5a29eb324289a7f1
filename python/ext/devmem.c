/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Part `devmem` of flagprism._ext: zero, write and read FlagPrism's own device buffers through
 * the vendor driver (<flagprism/devmem.h>), so that the Debugger and timelines never run a
 * framework operator on them (a kernel library could serve it with a Triton kernel, which would
 * then be instrumented or profiled as the user's). The GIL is released around each transfer.
 * Nothing is allocated here: the framework's allocator owns the memory.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <flagprism/devmem.h>
#include <flagprism/status.h>

#include "ext.h"

static PyObject *devmem_available(PyObject *module, PyObject *Py_UNUSED(ignored))
{
	struct fp_diag diag;
	int st;

	(void)module;
	fp_diag_clear(&diag);
	Py_BEGIN_ALLOW_THREADS st = fp_devmem_open(&diag);
	Py_END_ALLOW_THREADS if (st == FP_OK) return Py_BuildValue("(OO)", Py_True, Py_None);
	return Py_BuildValue("(Os)", Py_False, diag.msg);
}

static PyObject *devmem_zero(PyObject *module, PyObject *args)
{
	unsigned long long ptr, nbytes, stream;
	struct fp_diag diag;
	int st;

	if (!PyArg_ParseTuple(args, "KKK:devmem_zero", &ptr, &nbytes, &stream))
		return NULL;
	fp_diag_clear(&diag);
	Py_BEGIN_ALLOW_THREADS st = fp_devmem_zero(ptr, (size_t)nbytes, stream, &diag);
	Py_END_ALLOW_THREADS if (st) return fpy_raise_null(module, st, &diag);
	Py_RETURN_NONE;
}

static PyObject *devmem_write(PyObject *module, PyObject *args)
{
	unsigned long long ptr, stream;
	struct fp_diag diag;
	Py_buffer buf;
	int st;

	if (!PyArg_ParseTuple(args, "Ky*K:devmem_write", &ptr, &buf, &stream))
		return NULL;
	fp_diag_clear(&diag);
	Py_BEGIN_ALLOW_THREADS st = fp_devmem_write(ptr, buf.buf, (size_t)buf.len, stream, &diag);
	Py_END_ALLOW_THREADS PyBuffer_Release(&buf);
	if (st)
		return fpy_raise_null(module, st, &diag);
	Py_RETURN_NONE;
}

static PyObject *devmem_read_into(PyObject *module, PyObject *args)
{
	unsigned long long ptr, stream;
	struct fp_diag diag;
	Py_buffer buf;
	int st;

	if (!PyArg_ParseTuple(args, "w*KK:devmem_read_into", &buf, &ptr, &stream))
		return NULL;
	fp_diag_clear(&diag);
	Py_BEGIN_ALLOW_THREADS st = fp_devmem_read(buf.buf, ptr, (size_t)buf.len, stream, &diag);
	Py_END_ALLOW_THREADS PyBuffer_Release(&buf);
	if (st)
		return fpy_raise_null(module, st, &diag);
	Py_RETURN_NONE;
}

static PyMethodDef devmem_methods[] = {
	{"devmem_available", devmem_available, METH_NOARGS,
	 "devmem_available() -> (bool, why): can the driver move FlagPrism's device buffers?"},
	{"devmem_zero", devmem_zero, METH_VARARGS,
	 "devmem_zero(ptr, nbytes, stream): zero device memory, ordered on the stream."},
	{"devmem_write", devmem_write, METH_VARARGS,
	 "devmem_write(ptr, data, stream): copy host bytes to device memory on the stream."},
	{"devmem_read_into", devmem_read_into, METH_VARARGS,
	 "devmem_read_into(buffer, ptr, stream): fill a writable buffer from device memory after\n"
	 "the stream's queued work, and wait for it (VendorError names a device fault)."},
	{NULL, NULL, 0, NULL},
};

int fpy_devmem_exec(PyObject *module)
{
	return PyModule_AddFunctions(module, devmem_methods);
}
