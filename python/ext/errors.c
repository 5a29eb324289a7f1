/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one place where a FlagPrism status becomes a Python exception: the exception types of
 * flagprism._ext (created per module, kept in the module state) and fpy_raise(). Every other
 * file of the extension reports failures through fpy_raise(), so the mapping, the message layout
 * and the attributes are the same everywhere. Not for raising errors that did not come from the
 * library (argument parsing errors use the usual CPython calls).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <flagprism/status.h>

#include "ext.h"

struct error_type {
	const char *name; /* qualified name given to the type */
	const char *doc;
	size_t slot;     /* offset of the type in struct fpy_state */
	int value_error; /* also a subclass of ValueError */
};

#define STATE_SLOT(field) offsetof(struct fpy_state, field)

/* The base class comes first: the others derive from it. */
static const struct error_type error_types[] = {
	{"flagprism._ext.Error",
	 "Base class of the errors FlagPrism reports. Attributes: status, status_name, detail, "
	 "offset, line, column.",
	 STATE_SLOT(error), 0},
	{"flagprism._ext.FormatError",
	 "Malformed input or an unsupported format version (FP_EFORMAT, FP_EVERSION).",
	 STATE_SLOT(format_error), 1},
	{"flagprism._ext.LimitError", "A size limit was exceeded (FP_ELIMIT).",
	 STATE_SLOT(limit_error), 0},
	{"flagprism._ext.OverflowRecordsError",
	 "A record buffer overflowed, so the data is incomplete (FP_EOVERFLOW).",
	 STATE_SLOT(overflow_error), 0},
	{"flagprism._ext.VendorError", "A vendor library (e.g. CUPTI) failed (FP_EVENDOR).",
	 STATE_SLOT(vendor_error), 0},
	{"flagprism._ext.NotSupportedError", "Not supported by this build or device (FP_ENOTSUP).",
	 STATE_SLOT(notsupported_error), 0},
};

static PyObject **state_slot(struct fpy_state *st, size_t slot)
{
	return (PyObject **)(void *)((char *)st + slot);
}

int fpy_errors_exec(PyObject *module)
{
	struct fpy_state *st = fpy_state(module);
	size_t i;

	if (!st) {
		PyErr_SetString(PyExc_SystemError, "flagprism._ext: module state missing");
		return -1;
	}
	for (i = 0; i < sizeof(error_types) / sizeof(error_types[0]); i++) {
		const struct error_type *et = &error_types[i];
		PyObject **slot = state_slot(st, et->slot);
		PyObject *bases;
		int rc;

		if (i == 0)
			bases = Py_NewRef(PyExc_Exception);
		else if (et->value_error)
			bases = PyTuple_Pack(2, st->error, PyExc_ValueError);
		else
			bases = Py_NewRef(st->error);
		if (!bases)
			return -1;
		*slot = PyErr_NewExceptionWithDoc(et->name, et->doc, bases, NULL);
		Py_DECREF(bases);
		if (!*slot)
			return -1;
		/* The short name, after the last dot. */
		rc = PyModule_AddObjectRef(module, strrchr(et->name, '.') + 1, *slot);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The exception type for a status; a borrowed reference. */
static PyObject *type_for(const struct fpy_state *st, int status)
{
	switch (status) {
	case FP_ENOMEM:
		return PyExc_MemoryError;
	case FP_EINVAL:
		return PyExc_ValueError;
	case FP_EIO:
	case FP_ENOENT:
		return PyExc_OSError;
	case FP_EFORMAT:
	case FP_EVERSION:
		return st->format_error;
	case FP_ELIMIT:
		return st->limit_error;
	case FP_EOVERFLOW:
		return st->overflow_error;
	case FP_EVENDOR:
		return st->vendor_error;
	case FP_ENOTSUP:
		return st->notsupported_error;
	default:
		return st->error;
	}
}

static PyObject *build_message(int status, const struct fp_diag *diag)
{
	const char *detail = diag && diag->msg[0] ? diag->msg : NULL;
	PyObject *msg;

	if (!diag || (!detail && !diag->line && !diag->offset))
		return PyUnicode_FromString(fp_strerror(status));
	if (diag->line)
		msg = PyUnicode_FromFormat("%s%s%s (line %u, column %u)", fp_strerror(status),
					   detail ? ": " : "", detail ? detail : "",
					   (unsigned)diag->line, (unsigned)diag->col);
	else if (diag->offset)
		msg = PyUnicode_FromFormat("%s%s%s (byte offset %llu)", fp_strerror(status),
					   detail ? ": " : "", detail ? detail : "",
					   (unsigned long long)diag->offset);
	else
		msg = PyUnicode_FromFormat("%s: %s", fp_strerror(status), detail);
	/* A message that is not valid UTF-8 must not hide the error itself. */
	if (!msg && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
		PyErr_Clear();
		msg = PyUnicode_FromString(fp_strerror(status));
	}
	return msg;
}

/* Set attribute `name` to `value` (a new reference, may be NULL after a failure) and drop it. */
static int set_attr(PyObject *exc, const char *name, PyObject *value)
{
	int rc;

	if (!value)
		return -1;
	rc = PyObject_SetAttrString(exc, name, value);
	Py_DECREF(value);
	return rc;
}

static PyObject *uint_or_none(unsigned long long v)
{
	return v ? PyLong_FromUnsignedLongLong(v) : Py_NewRef(Py_None);
}

/* Take the pending exception, if any (a new reference or NULL); PEP 490 chaining without the
 * deprecated PyErr_Fetch on 3.12+. */
static PyObject *take_pending(void)
{
#if PY_VERSION_HEX >= 0x030C0000
	return PyErr_GetRaisedException();
#else
	PyObject *type, *value, *tb;

	PyErr_Fetch(&type, &value, &tb);
	if (!type)
		return NULL;
	PyErr_NormalizeException(&type, &value, &tb);
	if (tb && value)
		PyException_SetTraceback(value, tb);
	Py_XDECREF(type);
	Py_XDECREF(tb);
	return value;
#endif
}

int fpy_raise(PyObject *module, int status, const struct fp_diag *diag)
{
	struct fpy_state *st = fpy_state(module);
	PyObject *cause, *msg, *exc;
	const char *detail;

	if (!st) {
		PyErr_SetString(PyExc_SystemError, "flagprism._ext: module state missing");
		return -1;
	}
	if (status >= 0) {
		PyErr_Format(PyExc_SystemError, "flagprism._ext: raise for non-error status %d",
			     status);
		return -1;
	}
	cause = take_pending();
	msg = build_message(status, diag);
	if (!msg)
		goto fail_message;
	exc = PyObject_CallOneArg(type_for(st, status), msg);
	Py_DECREF(msg);
	if (!exc)
		goto fail_message;

	detail = diag && diag->msg[0] ? diag->msg : NULL;
	if (set_attr(exc, "status", PyLong_FromLong(status)) < 0 ||
	    set_attr(exc, "status_name", PyUnicode_FromString(fp_status_name(status))) < 0 ||
	    set_attr(exc, "detail",
		     detail ? PyUnicode_DecodeUTF8(detail, (Py_ssize_t)strlen(detail), "replace") :
			      Py_NewRef(Py_None)) < 0 ||
	    set_attr(exc, "offset",
		     diag ? PyLong_FromUnsignedLongLong(diag->offset) : Py_NewRef(Py_None)) < 0 ||
	    set_attr(exc, "line", uint_or_none(diag ? diag->line : 0)) < 0 ||
	    set_attr(exc, "column", uint_or_none(diag ? diag->col : 0)) < 0)
		goto fail_attrs;

	if (cause)
		PyException_SetCause(exc, cause); /* steals cause */
	PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
	Py_DECREF(exc);
	return -1;

fail_attrs:
	Py_DECREF(exc);
fail_message:
	Py_XDECREF(cause);
	return -1;
}

PyObject *fpy_raise_null(PyObject *module, int status, const struct fp_diag *diag)
{
	fpy_raise(module, status, diag);
	return NULL;
}
