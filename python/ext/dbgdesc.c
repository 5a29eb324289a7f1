// SPDX-License-Identifier: Apache-2.0
/*
 * Part `dbgdesc`: the replayed launch's description, three types with named, typed fields
 * (dbgdesc.h lists them). Made from one field list each: the C struct, the read-only Python
 * attributes, the keyword-only constructor that checks each field's kind, and garbage-collector
 * support (a plan's sizings hold compiled kernels, whose caches may lead back here).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <stddef.h>
#include <string.h>

#include "dbgdesc.h"
#include "ext.h"

PyTypeObject *fpy_replay_kernel_type, *fpy_replay_plan_type, *fpy_replay_sizing_type;

enum kind {
	K_ANY,
	K_TUPLE,
	K_DICT,
	K_LIST,
	K_STR,
	K_BYTES,
	K_CALL,
	K_LL,
	K_BOOL
};

struct field {
	const char *name;
	enum kind kind;
	Py_ssize_t offset;
};

#define MT_ANY T_OBJECT_EX
#define MT_TUPLE T_OBJECT_EX
#define MT_DICT T_OBJECT_EX
#define MT_LIST T_OBJECT_EX
#define MT_STR T_OBJECT_EX
#define MT_BYTES T_OBJECT_EX
#define MT_CALL T_OBJECT_EX
#define MT_LL T_LONGLONG
#define MT_BOOL T_BOOL

#define FIELD(T) FIELD_##T
#define FIELD_K(name, kind, doc) {#name, K_##kind, offsetof(struct fpy_replay_kernel, name)},
#define FIELD_P(name, kind, doc) {#name, K_##kind, offsetof(struct fpy_replay_plan, name)},
#define FIELD_S(name, kind, doc) {#name, K_##kind, offsetof(struct fpy_replay_sizing, name)},
#define MEMBER_K(name, kind, doc) \
	{#name, MT_##kind, offsetof(struct fpy_replay_kernel, name), READONLY, doc},
#define MEMBER_P(name, kind, doc) \
	{#name, MT_##kind, offsetof(struct fpy_replay_plan, name), READONLY, doc},
#define MEMBER_S(name, kind, doc) \
	{#name, MT_##kind, offsetof(struct fpy_replay_sizing, name), READONLY, doc},

static const struct field kernel_fields[] = {FPY_REPLAY_KERNEL_FIELDS(FIELD_K){NULL, K_ANY, 0}};
static const struct field plan_fields[] = {FPY_REPLAY_PLAN_FIELDS(FIELD_P){NULL, K_ANY, 0}};
static const struct field sizing_fields[] = {FPY_REPLAY_SIZING_FIELDS(FIELD_S){NULL, K_ANY, 0}};

static PyMemberDef kernel_members[] = {FPY_REPLAY_KERNEL_FIELDS(MEMBER_K){NULL}};
static PyMemberDef plan_members[] = {FPY_REPLAY_PLAN_FIELDS(MEMBER_P){NULL}};
static PyMemberDef sizing_members[] = {FPY_REPLAY_SIZING_FIELDS(MEMBER_S){NULL}};

static const struct field *fields_of(PyTypeObject *type)
{
	if (type == fpy_replay_kernel_type)
		return kernel_fields;
	if (type == fpy_replay_plan_type)
		return plan_fields;
	if (type == fpy_replay_sizing_type)
		return sizing_fields;
	return NULL; /* cannot happen: the types are made once */
}

static bool is_object(enum kind k)
{
	return k != K_LL && k != K_BOOL;
}

static const char *kind_name(enum kind k)
{
	static const char *const names[] = {"any object", "a tuple",  "a dict", "a list", "a str",
					    "bytes",      "callable", "an int", "a bool"};
	return names[k];
}

/* Set one field from its keyword value: 0, or -1 with TypeError/OverflowError naming it. */
static int set_field(PyObject *self, const struct field *f, PyObject *v)
{
	char *at = (char *)self + f->offset;
	int ok;

	switch (f->kind) {
	case K_TUPLE:
		ok = PyTuple_Check(v);
		break;
	case K_DICT:
		ok = PyDict_Check(v);
		break;
	case K_LIST:
		ok = PyList_Check(v);
		break;
	case K_STR:
		ok = PyUnicode_Check(v);
		break;
	case K_BYTES:
		ok = PyBytes_Check(v);
		break;
	case K_CALL:
		ok = PyCallable_Check(v);
		break;
	case K_LL:
		ok = PyLong_Check(v) && !PyBool_Check(v);
		break;
	case K_BOOL:
		ok = PyBool_Check(v);
		break;
	default:
		ok = 1;
		break;
	}
	if (!ok) {
		PyErr_Format(PyExc_TypeError, "%s: field %s must be %s, not %.100s",
			     Py_TYPE(self)->tp_name, f->name, kind_name(f->kind),
			     Py_TYPE(v)->tp_name);
		return -1;
	}
	if (f->kind == K_LL) {
		long long x = PyLong_AsLongLong(v);

		if (x == -1 && PyErr_Occurred())
			return -1;
		memcpy(at, &x, sizeof(x));
	} else if (f->kind == K_BOOL) {
		*at = (char)(v == Py_True);
	} else {
		PyObject **slot = (PyObject **)(void *)at;

		Py_XSETREF(*slot, Py_NewRef(v));
	}
	return 0;
}

static PyObject *desc_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	const struct field *fields = fields_of(type), *f;
	PyObject *self;
	Py_ssize_t n = 0;

	if (!fields) {
		PyErr_Format(PyExc_TypeError, "%s cannot be subclassed", type->tp_name);
		return NULL;
	}
	if (PyTuple_GET_SIZE(args)) {
		PyErr_Format(PyExc_TypeError, "%s() takes keyword arguments only", type->tp_name);
		return NULL;
	}
	self = type->tp_alloc(type, 0);
	if (!self)
		return NULL;
	for (f = fields; f->name; f++, n++) {
		PyObject *v = kw ? PyDict_GetItemString(kw, f->name) : NULL; /* borrowed */

		if (!v) {
			PyErr_Format(PyExc_TypeError, "%s() missing field %s", type->tp_name,
				     f->name);
			goto fail_field;
		}
		if (set_field(self, f, v))
			goto fail_field;
	}
	if (kw && PyDict_GET_SIZE(kw) != n) {
		PyObject *k, *v;
		Py_ssize_t pos = 0;

		while (PyDict_Next(kw, &pos, &k, &v)) {
			for (f = fields; f->name; f++)
				if (PyUnicode_Check(k) &&
				    PyUnicode_CompareWithASCIIString(k, f->name) == 0)
					break;
			if (!f->name) {
				PyErr_Format(PyExc_TypeError, "%s() has no field %R", type->tp_name,
					     k);
				goto fail_field;
			}
		}
	}
	return self;
fail_field:
	Py_DECREF(self);
	return NULL;
}

static int desc_traverse(PyObject *self, visitproc visit, void *arg)
{
	const struct field *f;

	Py_VISIT(Py_TYPE(self));
	for (f = fields_of(Py_TYPE(self)); f && f->name; f++)
		if (is_object(f->kind))
			Py_VISIT(*(PyObject **)(void *)((char *)self + f->offset));
	return 0;
}

static int desc_clear(PyObject *self)
{
	const struct field *f;

	for (f = fields_of(Py_TYPE(self)); f && f->name; f++)
		if (is_object(f->kind))
			Py_CLEAR(*(PyObject **)(void *)((char *)self + f->offset));
	return 0;
}

static void desc_dealloc(PyObject *self)
{
	PyTypeObject *tp = Py_TYPE(self);

	PyObject_GC_UnTrack(self);
	(void)desc_clear(self);
	tp->tp_free(self);
	Py_DECREF(tp);
}

#define SPEC(var, cname, struct_t, members, doc)                                       \
	static PyType_Slot var##_slots[] = {{Py_tp_doc, (void *)(doc)},                \
					    {Py_tp_new, (void *)desc_new},             \
					    {Py_tp_dealloc, (void *)desc_dealloc},     \
					    {Py_tp_traverse, (void *)desc_traverse},   \
					    {Py_tp_clear, (void *)desc_clear},         \
					    {Py_tp_members, (void *)(members)},        \
					    {0, NULL}};                                \
	static PyType_Spec var##_spec = {"flagprism._ext." cname, sizeof(struct_t), 0, \
					 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, var##_slots}

SPEC(kernel, "ReplayKernel", struct fpy_replay_kernel, kernel_members,
     "ReplayKernel(**fields): what every replayed launch of a kernel repeats (python/ext/\n"
     "dbgdesc.h lists the fields); made by _replay._kernel(). Every field is required, by\n"
     "keyword, and read-only.");
SPEC(plan, "ReplayPlan", struct fpy_replay_plan, plan_members,
     "ReplayPlan(**fields): what every replayed launch of one specialization repeats (a\n"
     "_plans.Plan's `fast`); made by _replay.learn().");
SPEC(sizing, "ReplaySizing", struct fpy_replay_sizing, sizing_members,
     "ReplaySizing(**fields): what every replayed launch of one sizing repeats (a\n"
     "_plans.Sizing's `fast`): the compiled twin, its launcher and guards, the launch JSON's\n"
     "and run dict's parts; made by _replay.learn().");

/* Made once per process and kept (a strong reference never given back): a module made again
 * (a second import after the first was dropped from sys.modules) hands out the same types, so
 * objects made before keep the field list their type says (fields_of). */
static int add_type(PyObject *module, PyType_Spec *spec, PyTypeObject **out)
{
	if (!*out) {
		PyObject *t = PyType_FromSpec(spec);

		if (!t)
			return -1;
		*out = (PyTypeObject *)t;
	}
	return PyModule_AddObjectRef(module, strrchr(spec->name, '.') + 1, (PyObject *)*out);
}

int fpy_dbgdesc_exec(PyObject *module)
{
	if (add_type(module, &kernel_spec, &fpy_replay_kernel_type) ||
	    add_type(module, &plan_spec, &fpy_replay_plan_type) ||
	    add_type(module, &sizing_spec, &fpy_replay_sizing_type))
		return -1;
	return 0;
}
