/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Part `core` of flagprism._ext: the library version and the status-code tables, plus
 * `_raise_status`, which exists so the tests can check the status-to-exception mapping of
 * fpy_raise() without a failing library call, `check_output`, the check of an output location
 * before a long run (fp_outfile_check()), and the signal guard of the writing of a tool's
 * outputs (`guard_signals`/`release_signals`: a signal then sets fp_outfile_interrupt()'s
 * deadline, at the C level, since a Python handler cannot run while C writes). Nothing about
 * the Debugger or the Profiler here.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <signal.h>
#include <string.h>

#include <flagprism/outfile.h>
#include <flagprism/status.h>
#include <flagprism/version.h>

#include "ext.h"

/* A Python int that must fit a C int status code; -1 with an exception otherwise. */
static int status_arg(PyObject *arg, int *out)
{
	long v = PyLong_AsLong(arg);

	if (v == -1 && PyErr_Occurred())
		return -1;
	if (v < INT_MIN || v > INT_MAX) {
		PyErr_SetString(PyExc_OverflowError, "status code out of range");
		return -1;
	}
	*out = (int)v;
	return 0;
}

PyDoc_STRVAR(version_doc,
	     "version() -> str\n\nVersion of the linked libflagprism, \"MAJOR.MINOR.PATCH\".");

static PyObject *core_version(PyObject *module, PyObject *unused)
{
	return PyUnicode_FromString(fp_version_string());
}

PyDoc_STRVAR(status_name_doc,
	     "status_name(code) -> str\n\nSymbolic name of a status code, e.g. 'FP_EFORMAT'.");

static PyObject *core_status_name(PyObject *module, PyObject *arg)
{
	int code;

	if (status_arg(arg, &code) < 0)
		return NULL;
	return PyUnicode_FromString(fp_status_name(code));
}

PyDoc_STRVAR(strerror_doc, "strerror(code) -> str\n\nHuman-readable message for a status code.");

static PyObject *core_strerror(PyObject *module, PyObject *arg)
{
	int code;

	if (status_arg(arg, &code) < 0)
		return NULL;
	return PyUnicode_FromString(fp_strerror(code));
}

PyDoc_STRVAR(raise_status_doc,
	     "_raise_status(code, msg=None, offset=0, line=0, col=0)\n\n"
	     "Raise the exception FlagPrism raises for a failed call that returned `code` and\n"
	     "filled a diagnostic with `msg` and the position. Without msg and position, no\n"
	     "diagnostic is passed. For tests.");

static PyObject *core_raise_status(PyObject *module, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = {"code", "msg", "offset", "line", "col", NULL};
	const char *msg = NULL;
	unsigned long long offset = 0;
	unsigned int line = 0, col = 0;
	struct fp_diag diag;
	int code;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "i|zKII:_raise_status", kwlist, &code, &msg,
					 &offset, &line, &col))
		return NULL;
	if (!msg && !offset && !line && !col) {
		fpy_raise(module, code, NULL);
		return NULL;
	}
	fp_diag_set_pos(&diag, code, offset, line, col, "%s", msg ? msg : "");
	fpy_raise(module, code, &diag);
	return NULL;
}

PyDoc_STRVAR(check_output_doc,
	     "check_output(path)\n\n"
	     "Check that a file could be written at `path` later (fp_outfile_check()): its\n"
	     "directory exists and takes a new file, its name fits the file system, and it is\n"
	     "not a directory or another destination FlagPrism refuses. Writes nothing. Raises\n"
	     "OSError (the message names the errno: EROFS, EACCES, ENOENT...) or ValueError.");

static PyObject *core_check_output(PyObject *module, PyObject *arg)
{
	struct fp_diag diag;
	const char *path;
	int rc;

	if (!PyUnicode_Check(arg))
		return PyErr_Format(PyExc_TypeError, "check_output() takes a str path, not %s",
				    Py_TYPE(arg)->tp_name);
	path = PyUnicode_AsUTF8(arg);
	if (!path)
		return NULL;
	fp_diag_clear(&diag);
	rc = fp_outfile_check(path, &diag);
	if (rc)
		return fpy_raise_null(module, rc, &diag);
	Py_RETURN_NONE;
}

/* ---- the signal guard of a tool's writing ------------------------------------------------------ */

/* SIGTERM, SIGHUP, SIGINT: what batch schedulers, `timeout`, a closed terminal and Ctrl-C send. */
static const int guarded[] = {SIGTERM, SIGHUP, SIGINT};
static struct sigaction saved[3];
static bool installed[3];
static volatile sig_atomic_t arrived;

/* How long the outputs being written get after a signal before the writing ends. */
#define WRITE_GRACE_MS 1000

static void on_signal_while_writing(int sig)
{
	if (!arrived)
		arrived = sig;
	fp_outfile_interrupt(WRITE_GRACE_MS); /* async-signal-safe */
}

PyDoc_STRVAR(guard_signals_doc,
	     "guard_signals()\n\n"
	     "While a tool writes its outputs: SIGTERM, SIGHUP and SIGINT (those not ignored)\n"
	     "are caught in C and give the writing one more second (fp_outfile_interrupt()):\n"
	     "what is complete by then stays, the rest is not written, nothing waits on a\n"
	     "stalled reader. release_signals() puts the previous handlers back.");

static PyObject *core_guard_signals(PyObject *module, PyObject *unused)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal_while_writing;
	sigemptyset(&sa.sa_mask);
	arrived = 0;
	for (i = 0; i < sizeof(guarded) / sizeof(guarded[0]); i++) {
		if (installed[i])
			continue;
		if (sigaction(guarded[i], NULL, &saved[i]) != 0 || saved[i].sa_handler == SIG_IGN)
			continue; /* ignored by the parent (nohup): stays ignored */
		installed[i] = sigaction(guarded[i], &sa, NULL) == 0;
	}
	Py_RETURN_NONE;
}

PyDoc_STRVAR(release_signals_doc,
	     "release_signals() -> int\n\n"
	     "Undo guard_signals(): the previous handlers back, the writing deadline cleared.\n"
	     "Returns the first guarded signal that arrived meanwhile, 0 if none.");

static PyObject *core_release_signals(PyObject *module, PyObject *unused)
{
	size_t i;
	int sig;

	for (i = 0; i < sizeof(guarded) / sizeof(guarded[0]); i++) {
		if (installed[i])
			sigaction(guarded[i], &saved[i], NULL);
		installed[i] = false;
	}
	sig = arrived;
	arrived = 0;
	fp_outfile_interrupt_reset();
	return PyLong_FromLong(sig);
}

static PyMethodDef core_methods[] = {
	{"check_output", core_check_output, METH_O, check_output_doc},
	{"guard_signals", core_guard_signals, METH_NOARGS, guard_signals_doc},
	{"release_signals", core_release_signals, METH_NOARGS, release_signals_doc},
	{"version", core_version, METH_NOARGS, version_doc},
	{"status_name", core_status_name, METH_O, status_name_doc},
	{"strerror", core_strerror, METH_O, strerror_doc},
	{"_raise_status", (PyCFunction)(void (*)(void))core_raise_status,
	 METH_VARARGS | METH_KEYWORDS, raise_status_doc},
	{NULL, NULL, 0, NULL},
};

int fpy_core_exec(PyObject *module)
{
	return PyModule_AddFunctions(module, core_methods);
}
