/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The module object of flagprism._ext: multi-phase initialisation (PEP 489), the module state
 * and its GC hooks, and the exec slot that runs every part listed in FPY_PARTS. Functions and
 * types live in the parts (core.c, ...), the exception mapping in errors.c; this file wires
 * them together and holds the one dict helper every part uses (fpy_set_item).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "ext.h"

PyMODINIT_FUNC PyInit__ext(void);

struct fpy_state *fpy_state(PyObject *module)
{
	return (struct fpy_state *)PyModule_GetState(module);
}

int fpy_set_item(PyObject *dict, const char *key, PyObject *value)
{
	int rc;

	if (!value)
		return -1;
	rc = PyDict_SetItemString(dict, key, value);
	Py_DECREF(value);
	return rc;
}

static int module_exec(PyObject *module)
{
	if (fpy_errors_exec(module) < 0)
		return -1;
#define FPY__EXEC_PART(part)               \
	if (fpy_##part##_exec(module) < 0) \
		return -1;
	FPY_PARTS(FPY__EXEC_PART)
#undef FPY__EXEC_PART
	return 0;
}

static int module_traverse(PyObject *module, visitproc visit, void *arg)
{
	struct fpy_state *st = fpy_state(module);

	if (!st)
		return 0;
	Py_VISIT(st->error);
	Py_VISIT(st->format_error);
	Py_VISIT(st->limit_error);
	Py_VISIT(st->overflow_error);
	Py_VISIT(st->vendor_error);
	Py_VISIT(st->notsupported_error);
	return 0;
}

static int module_clear(PyObject *module)
{
	struct fpy_state *st = fpy_state(module);

	if (!st)
		return 0;
	Py_CLEAR(st->error);
	Py_CLEAR(st->format_error);
	Py_CLEAR(st->limit_error);
	Py_CLEAR(st->overflow_error);
	Py_CLEAR(st->vendor_error);
	Py_CLEAR(st->notsupported_error);
	return 0;
}

static void module_free(void *module)
{
	module_clear((PyObject *)module);
}

static PyModuleDef_Slot module_slots[] = {
	{Py_mod_exec, (void *)module_exec},
	{0, NULL},
};

PyDoc_STRVAR(module_doc, "Native core of FlagPrism: a thin binding of libflagprism.\n\n"
			 "Private: use the `flagprism` package instead.");

static struct PyModuleDef module_def = {
	.m_base = PyModuleDef_HEAD_INIT,
	.m_name = "flagprism._ext",
	.m_doc = module_doc,
	.m_size = sizeof(struct fpy_state),
	.m_methods = NULL, /* each part adds its own */
	.m_slots = module_slots,
	.m_traverse = module_traverse,
	.m_clear = module_clear,
	.m_free = module_free,
};

PyMODINIT_FUNC PyInit__ext(void)
{
	return PyModuleDef_Init(&module_def);
}
