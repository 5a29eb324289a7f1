/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Part `compat` of flagprism._ext: the library's table of known-bad software combinations
 * (include/flagprism/compat.h) for Python: every row as a dict, and which rows apply to a set of
 * installed versions. flagprism.compat finds the versions and the test suite turns the rows into
 * skip reasons. Nothing is decided here beyond what the library answers.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string.h>

#include <flagprism/compat.h>

#include "ext.h"

#define COMPAT_MAX_HAVE 32

static PyObject *str_or_none(const char *s)
{
	if (!s)
		Py_RETURN_NONE;
	return PyUnicode_FromString(s);
}

static PyObject *modes_list(unsigned modes)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = {{FP_COMPAT_INTERPRETER, "interpreter"}, {FP_COMPAT_GPU, "gpu"}};
	PyObject *l = PyList_New(0);
	size_t i;

	for (i = 0; l && i < sizeof(names) / sizeof(names[0]); i++) {
		PyObject *s;
		int rc;

		if (!(modes & names[i].bit))
			continue;
		s = PyUnicode_FromString(names[i].name);
		rc = s ? PyList_Append(l, s) : -1;
		Py_XDECREF(s);
		if (rc < 0)
			Py_CLEAR(l);
	}
	return l;
}

/* {"id", "modes": [...], "when": [(component, min, below)], "feature", "breaks", "workaround"} */
static PyObject *issue_dict(const struct fp_compat_issue *r)
{
	PyObject *d = PyDict_New(), *when;
	size_t i;

	if (!d)
		return NULL;
	when = PyList_New(0);
	if (!when)
		goto fail_dict;
	for (i = 0; i < FP_COMPAT_MAX_RANGES && r->when[i].component; i++) {
		PyObject *t = Py_BuildValue("(szz)", r->when[i].component, r->when[i].min,
					    r->when[i].below);
		int rc = t ? PyList_Append(when, t) : -1;

		Py_XDECREF(t);
		if (rc < 0) {
			Py_DECREF(when);
			goto fail_dict;
		}
	}
	if (fpy_set_item(d, "id", PyUnicode_FromString(r->id)) ||
	    fpy_set_item(d, "modes", modes_list(r->modes)) || fpy_set_item(d, "when", when) ||
	    fpy_set_item(d, "feature", str_or_none(r->feature)) ||
	    fpy_set_item(d, "breaks", str_or_none(r->breaks)) ||
	    fpy_set_item(d, "workaround", str_or_none(r->workaround)))
		goto fail_dict;
	return d;
fail_dict:
	Py_DECREF(d);
	return NULL;
}

/* "interpreter", "gpu", "any" -> FP_COMPAT_* bits; 0 with ValueError set otherwise. */
static unsigned parse_mode(const char *mode)
{
	if (strcmp(mode, "interpreter") == 0)
		return FP_COMPAT_INTERPRETER;
	if (strcmp(mode, "gpu") == 0)
		return FP_COMPAT_GPU;
	if (strcmp(mode, "any") == 0)
		return FP_COMPAT_ANY;
	PyErr_Format(PyExc_ValueError, "mode must be 'interpreter', 'gpu' or 'any', not '%s'",
		     mode);
	return 0;
}

PyDoc_STRVAR(compat_issues_doc,
	     "compat_issues() -> list[dict]\n\n"
	     "Every row of the known-bad combinations table, in its order: {'id', 'modes'\n"
	     "(['interpreter', 'gpu']), 'when' ([(component, min, below)], min inclusive, below\n"
	     "exclusive, None open), 'feature', 'breaks', 'workaround'}.");

static PyObject *compat_issues(PyObject *module, PyObject *unused)
{
	size_t i, n = fp_compat_issue_count();
	PyObject *l = PyList_New((Py_ssize_t)n);

	for (i = 0; l && i < n; i++) {
		PyObject *d = issue_dict(fp_compat_issue_at(i));

		if (!d) {
			Py_CLEAR(l);
			break;
		}
		PyList_SET_ITEM(l, (Py_ssize_t)i, d);
	}
	return l;
}

PyDoc_STRVAR(compat_check_doc,
	     "compat_check(versions, mode='any') -> list[str]\n\n"
	     "Ids of the rows that apply, in table order. `versions` maps a component ('triton',\n"
	     "'numpy', ...) to its installed version, or None when it is not installed; `mode` is\n"
	     "'interpreter', 'gpu' or 'any' (where the kernels run).");

static PyObject *compat_check(PyObject *module, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = {"versions", "mode", NULL};
	struct fp_compat_have have[COMPAT_MAX_HAVE];
	const struct fp_compat_issue **hits;
	PyObject *versions, *key, *value, *out;
	const char *mode = "any";
	Py_ssize_t pos = 0;
	size_t n = 0, nhit, i;
	unsigned modes;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|s:compat_check", kwlist, &PyDict_Type,
					 &versions, &mode))
		return NULL;
	modes = parse_mode(mode);
	if (!modes)
		return NULL;
	if (PyDict_Size(versions) > COMPAT_MAX_HAVE)
		return PyErr_Format(PyExc_ValueError, "compat_check: more than %d components",
				    COMPAT_MAX_HAVE);
	/* The strings stay owned by the dict, which the caller holds for this call. */
	while (PyDict_Next(versions, &pos, &key, &value)) {
		if (!PyUnicode_Check(key) || (value != Py_None && !PyUnicode_Check(value)))
			return PyErr_Format(PyExc_TypeError,
					    "compat_check: versions must map str to str or None");
		have[n].component = PyUnicode_AsUTF8(key);
		have[n].version = value == Py_None ? NULL : PyUnicode_AsUTF8(value);
		if (!have[n].component || (value != Py_None && !have[n].version))
			return NULL;
		n++;
	}
	/* room for every row: nothing that applies can be left out */
	hits = PyMem_New(const struct fp_compat_issue *, fp_compat_issue_count() + 1);
	if (!hits)
		return PyErr_NoMemory();
	nhit = fp_compat_check(have, n, modes, hits, fp_compat_issue_count() + 1);
	out = PyList_New((Py_ssize_t)nhit);
	for (i = 0; out && i < nhit; i++) {
		PyObject *s = PyUnicode_FromString(hits[i]->id);

		if (!s) {
			Py_CLEAR(out);
			break;
		}
		PyList_SET_ITEM(out, (Py_ssize_t)i, s);
	}
	PyMem_Free(hits);
	return out;
}

static PyMethodDef compat_methods[] = {
	{"compat_issues", compat_issues, METH_NOARGS, compat_issues_doc},
	{"compat_check", (PyCFunction)(void (*)(void))compat_check, METH_VARARGS | METH_KEYWORDS,
	 compat_check_doc},
	{NULL, NULL, 0, NULL},
};

int fpy_compat_exec(PyObject *module)
{
	return PyModule_AddFunctions(module, compat_methods);
}
