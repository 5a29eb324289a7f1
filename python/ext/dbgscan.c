// SPDX-License-Identifier: Apache-2.0
/*
 * Part `dbgscan`: one pass over an instrumented launch's arguments, for the Debugger's launch
 * fast path (python/flagprism/_plans.py, whose scan() is the reference this must equal): the
 * arguments' part of the launch's specialization key, and per argument the part of its launch
 * JSON entry that changes between launches of one specialization (a tensor's shape, strides and
 * addresses, a scalar's value). What it does not describe (tensor descriptors, other classes,
 * a tensor whose storage cannot be read) it leaves to Python by returning None. Not here: the
 * key's other parts, the templates the JSON pieces join (Python, once per plan).
 *
 * Tensors are read through their Python methods (data_ptr(), untyped_storage(), stride(), ...):
 * the extension does not link the framework. The GIL is held throughout.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <string.h>

#include <flagprism/debug.h>

#include "ext.h"

#define SC_MAX_DIMS 32

/* The key part of an int: (int, width class, == 1, 16 divides it), as _plans._int_class. */
static PyObject *int_part(PyObject *v)
{
	int ovf = 0, cls, eq1, m16;
	long long x = PyLong_AsLongLongAndOverflow(v, &ovf);

	if (x == -1 && PyErr_Occurred())
		return NULL;
	if (ovf) {
		/* outside int64: the unsigned class; 16 divides it as Python's v % 16 == 0 says */
		PyObject *sixteen = PyLong_FromLong(16), *r;

		if (!sixteen)
			return NULL;
		r = PyNumber_Remainder(v, sixteen);
		Py_DECREF(sixteen);
		if (!r)
			return NULL;
		m16 = PyLong_AsLong(r) == 0;
		Py_DECREF(r);
		cls = 2;
		eq1 = 0;
	} else {
		cls = (x >= -2147483648LL && x < 2147483648LL) ? 0 : 1;
		eq1 = x == 1;
		m16 = (x & 15) == 0;
	}
	return Py_BuildValue("(OiOO)", (PyObject *)&PyLong_Type, cls, eq1 ? Py_True : Py_False,
			     m16 ? Py_True : Py_False);
}

/* A float's "value" as json.dumps(_launch._json_value(v)) writes it, then "}". */
static PyObject *float_dyn(PyObject *v)
{
	double d = PyFloat_AS_DOUBLE(v);

	if (isnan(d))
		return PyUnicode_FromString("\"nan\"}");
	if (isinf(d))
		return PyUnicode_FromString(d > 0 ? "\"inf\"}" : "\"-inf\"}");
	return PyUnicode_FromFormat("%R}", v);
}

/* Attribute and method names, interned once (the module's exec): a lookup per launch and
 * argument must not build its name. Immortal enough: the extension is never unloaded. */
static PyObject *s_data_ptr, *s_untyped_storage, *s_nbytes, *s_stride, *s_shape, *s_dtype,
	*s_device, *s_type, *s_value, *s_element_size, *s_base, *s_block_shape;

static int intern_names(void)
{
	struct {
		PyObject **slot;
		const char *name;
	} names[] = {{&s_data_ptr, "data_ptr"}, {&s_untyped_storage, "untyped_storage"},
		     {&s_nbytes, "nbytes"},     {&s_stride, "stride"},
		     {&s_shape, "shape"},       {&s_dtype, "dtype"},
		     {&s_device, "device"},     {&s_type, "type"},
		     {&s_value, "value"},       {&s_element_size, "element_size"},
		     {&s_base, "base"},         {&s_block_shape, "block_shape"}};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (*names[i].slot)
			continue;
		*names[i].slot = PyUnicode_InternFromString(names[i].name);
		if (!*names[i].slot)
			return -1;
	}
	return 0;
}

static PyObject *call0(PyObject *obj, PyObject *name)
{
	return PyObject_CallMethodNoArgs(obj, name);
}

/* A bounded text writer: snprintf costs more than the rest of a tensor's scan, so integers are
 * written by hand. The buffer is sized for the longest entry; `over` says it was not. */
struct wr {
	char *buf;
	size_t cap, len;
	bool over;
};

static void w_str(struct wr *w, const char *s, size_t n)
{
	if (w->over || n > w->cap - w->len) {
		w->over = true;
		return;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

#define W_LIT(w, lit) w_str((w), (lit), sizeof(lit) - 1)

size_t fpy_fmt_u64(char out[FPY_I64_CHARS], unsigned long long x)
{
	char t[FPY_I64_CHARS];
	size_t i = sizeof(t), n;

	do {
		t[--i] = (char)('0' + x % 10);
		x /= 10;
	} while (x);
	n = sizeof(t) - i;
	memcpy(out, t + i, n);
	return n;
}

size_t fpy_fmt_i64(char out[FPY_I64_CHARS], long long x)
{
	char t[FPY_I64_CHARS];
	size_t n;

	if (x >= 0)
		return fpy_fmt_u64(out, (unsigned long long)x);
	n = fpy_fmt_u64(t, 0ULL - (unsigned long long)x); /* at most 20 digits */
	out[0] = '-';
	memcpy(out + 1, t, n);
	return n + 1;
}

static void w_u64(struct wr *w, unsigned long long x)
{
	char t[FPY_I64_CHARS];

	w_str(w, t, fpy_fmt_u64(t, x));
}

static void w_i64(struct wr *w, long long x)
{
	char t[FPY_I64_CHARS];

	w_str(w, t, fpy_fmt_i64(t, x));
}

/* Append "[a, b, ...]" of a sequence of ints, keeping them in `vals` (at most SC_MAX_DIMS) and
 * their count in *nvals when those are given. 0, or -1 (an error set, or more than SC_MAX_DIMS
 * dimensions: then no error, the caller gives up). */
static int put_ints(struct wr *w, PyObject *seq_obj, int64_t *vals, Py_ssize_t *nvals)
{
	PyObject *seq = PySequence_Fast(seq_obj, "not a sequence");
	Py_ssize_t n, i;

	if (!seq)
		return -1;
	n = PySequence_Fast_GET_SIZE(seq);
	if (n > SC_MAX_DIMS) {
		Py_DECREF(seq);
		return -1;
	}
	W_LIT(w, "[");
	for (i = 0; i < n; i++) {
		long long x = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));

		if (x == -1 && PyErr_Occurred()) {
			Py_DECREF(seq);
			return -1;
		}
		if (i)
			W_LIT(w, ", ");
		w_i64(w, x);
		if (vals)
			vals[i] = x;
	}
	W_LIT(w, "]");
	if (nvals)
		*nvals = n;
	Py_DECREF(seq);
	return 0;
}

/*
 * A tensor argument: *part (when want_part) = (dtype, data_ptr % 16 == 0), *dyn = its JSON
 * entry's changing fields. 1 on success; 0 when it cannot be described here (no error set);
 * -1 with an error set.
 */
static int tensor_arg(PyObject *v, bool interp, bool want_part, PyObject **part, PyObject **dyn,
		      uint64_t *entry)
{
	/* "shape" and "strides" of up to SC_MAX_DIMS 20-digit numbers each, and three addresses */
	char buf[160 + 2 * SC_MAX_DIMS * 22];
	int64_t shp[SC_MAX_DIMS], str[SC_MAX_DIMS];
	Py_ssize_t nshp = -1, nstr = -2;
	PyObject *ptr = NULL, *st = NULL, *sptr = NULL, *nb = NULL, *shape = NULL, *strides = NULL;
	unsigned long long p, sp = 0, n;
	bool null_ptrs = false, soft = false;
	struct wr w = {buf, sizeof(buf), 0, false};
	int rc = -1;

	*part = *dyn = NULL;
	if (!(ptr = call0(v, s_data_ptr)))
		goto out;
	p = PyLong_AsUnsignedLongLong(ptr);
	if (p == (unsigned long long)-1 && PyErr_Occurred())
		goto out;
	if (want_part) {
		PyObject *dtype = PyObject_GetAttr(v, s_dtype);

		if (!dtype)
			goto out;
		*part = Py_BuildValue("(NO)", dtype, (p % 16 == 0) ? Py_True : Py_False);
		if (!*part)
			goto out;
	}
	/* from here on, what cannot be read is left to Python (its scan says None: the slow path
	 * describes the tensor as far as it can) */
	soft = true;
	if (!(st = call0(v, s_untyped_storage)))
		goto out;
	if (interp) {
		PyObject *dev = PyObject_GetAttr(v, s_device), *type;
		int cmp;

		if (!dev)
			goto out;
		type = PyObject_GetAttr(dev, s_type);
		Py_DECREF(dev);
		if (!type)
			goto out;
		cmp = PyUnicode_Check(type) ? PyUnicode_CompareWithASCIIString(type, "cpu") : 0;
		Py_DECREF(type);
		null_ptrs = cmp != 0;
	}
	if (!(sptr = call0(st, s_data_ptr)) || !(nb = call0(st, s_nbytes)))
		goto out;
	sp = PyLong_AsUnsignedLongLong(sptr);
	n = PyLong_AsUnsignedLongLong(nb);
	if (PyErr_Occurred())
		goto out;
	if (!(shape = PyObject_GetAttr(v, s_shape)) || !(strides = call0(v, s_stride)))
		goto out;
	W_LIT(&w, "\"shape\": ");
	if (put_ints(&w, shape, shp, &nshp))
		goto fail_scan;
	W_LIT(&w, ", \"strides\": ");
	if (put_ints(&w, strides, str, &nstr))
		goto fail_scan;
	if (null_ptrs) {
		W_LIT(&w, ", \"data_ptr\": null, \"storage_ptr\": null");
	} else {
		W_LIT(&w, ", \"data_ptr\": ");
		w_u64(&w, p);
		W_LIT(&w, ", \"storage_ptr\": ");
		w_u64(&w, sp);
	}
	W_LIT(&w, ", \"storage_nbytes\": ");
	w_u64(&w, n);
	W_LIT(&w, "}");
	if (w.over)
		goto fail_scan; /* cannot happen: buf holds the longest entry */
	if (entry && !null_ptrs && nshp == nstr) {
		/* the tensor-table entry, from what was read above (fp_dbg_table_entry, as
		 * fpy_tensor_entry makes it) */
		PyObject *esz = call0(v, s_element_size);
		unsigned long long es = esz ? PyLong_AsUnsignedLongLong(esz) : 0;

		Py_XDECREF(esz);
		if (es == (unsigned long long)-1 || PyErr_Occurred()) {
			PyErr_Clear();
			es = 0;
		}
		if (es && es <= UINT32_MAX)
			(void)fp_dbg_table_entry(p, (uint32_t)es, (size_t)nshp, shp, str, true, sp,
						 n, entry);
	}
	*dyn = PyUnicode_FromStringAndSize(buf, (Py_ssize_t)w.len);
	rc = *dyn ? 1 : -1;
	goto out;

fail_scan:
	rc = PyErr_Occurred() ? -1 : 0;
out:
	if (rc == -1 && soft) {
		PyErr_Clear();
		rc = 0;
	}
	if (rc != 1)
		Py_CLEAR(*part);
	Py_XDECREF(ptr);
	Py_XDECREF(st);
	Py_XDECREF(sptr);
	Py_XDECREF(nb);
	Py_XDECREF(shape);
	Py_XDECREF(strides);
	return rc;
}

/* A sequence of Python ints (a shape or strides) into `out` (at most SC_MAX_DIMS); the count, or
 * -1 when it is not one (no error left set). */
static Py_ssize_t get_ints(PyObject *seq_obj, int64_t *out)
{
	PyObject *seq = PySequence_Fast(seq_obj, "");
	Py_ssize_t n, i;

	if (!seq) {
		PyErr_Clear();
		return -1;
	}
	n = PySequence_Fast_GET_SIZE(seq);
	if (n > SC_MAX_DIMS)
		n = -1;
	for (i = 0; i >= 0 && i < n; i++) {
		long long x = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));

		if (x == -1 && PyErr_Occurred()) {
			PyErr_Clear();
			n = -1;
			break;
		}
		out[i] = x;
	}
	Py_DECREF(seq);
	return n;
}

/* An unsigned integer attribute result (a method's, when `method`), or -1 (no error left set). */
static int get_u64(PyObject *obj, PyObject *name, bool method, unsigned long long *out)
{
	PyObject *r = method ? call0(obj, name) : PyObject_GetAttr(obj, name);

	if (!r) {
		PyErr_Clear();
		return -1;
	}
	*out = PyLong_AsUnsignedLongLong(r);
	Py_DECREF(r);
	if (*out == (unsigned long long)-1 && PyErr_Occurred()) {
		PyErr_Clear();
		return -1;
	}
	return 0;
}

int fpy_tensor_entry(PyObject *v, bool interp, uint64_t out[4])
{
	int64_t shape[SC_MAX_DIMS], strides[SC_MAX_DIMS];
	unsigned long long ptr, es, sptr = 0, snb = 0;
	PyObject *st, *shp, *str;
	bool has_storage;
	Py_ssize_t nd, ns;

	out[0] = out[1] = out[2] = out[3] = 0;
	/* a host TensorDescriptor: its base tensor is the allocation */
	if (!PyObject_HasAttr(v, s_data_ptr)) {
		PyObject *b;

		if (!PyObject_HasAttr(v, s_block_shape))
			return 0;
		b = PyObject_GetAttr(v, s_base);
		if (!b) {
			PyErr_Clear();
			return 0;
		}
		nd = fpy_tensor_entry(b, interp, out);
		Py_DECREF(b);
		return (int)nd;
	}
	if (interp) {
		PyObject *dev = PyObject_GetAttr(v, s_device), *type = NULL;
		int cpu = 1;

		if (dev) {
			type = PyObject_GetAttr(dev, s_type);
			Py_DECREF(dev);
		}
		if (type) {
			cpu = PyUnicode_Check(type) &&
			      PyUnicode_CompareWithASCIIString(type, "cpu") == 0;
			Py_DECREF(type);
		}
		PyErr_Clear();
		if (!cpu)
			return 0; /* the interpreter runs on a host copy with other addresses */
	}
	if (get_u64(v, s_data_ptr, true, &ptr) || get_u64(v, s_element_size, true, &es) || !es)
		return 0;
	shp = PyObject_GetAttr(v, s_shape);
	str = shp ? call0(v, s_stride) : NULL;
	nd = shp ? get_ints(shp, shape) : -1;
	ns = str ? get_ints(str, strides) : -1;
	Py_XDECREF(shp);
	Py_XDECREF(str);
	PyErr_Clear();
	if (nd < 0 || ns != nd || es > UINT32_MAX)
		return 0;
	st = call0(v, s_untyped_storage);
	if (!st)
		PyErr_Clear(); /* no storage to read: the view stands for it */
	if (st && (get_u64(st, s_data_ptr, true, &sptr) || get_u64(st, s_nbytes, true, &snb)))
		Py_CLEAR(st);
	has_storage = st != NULL;
	Py_XDECREF(st);
	return fp_dbg_table_entry(ptr, (uint32_t)es, (size_t)nd, shape, strides, has_storage,
				  has_storage ? sptr : 0, has_storage ? snb : 0, out) == FP_OK;
}

PyDoc_STRVAR(
	debug_buffer_layout_doc,
	"debug_buffer_layout(programs, records_per_program, dump_records_per_program,\n"
	"    record_capacity, dump_capacity, nsites, nparams, nchecks, records, dumps, suppress,\n"
	"    values=(), interp=False) -> (slots, arena_words, total_words, header)\n\n"
	"A launch's record buffer as fp_dbg_buffer_layout() sizes it (the replayed launch sizes\n"
	"through the same function): record slots per program, the dump arena's words, the whole\n"
	"buffer's words, and the words the host writes first (a list of ints: the header and, with\n"
	"checks, the extended header and the tensor table made from `values`, each parameter's\n"
	"value in signature order; a value that is not a tensor with addresses here, or a device\n"
	"tensor on the interpreter (interp), has a zero entry; a host TensorDescriptor stands for\n"
	"its base). record_capacity, dump_capacity: None to size from the launch. ValueError for\n"
	"counts out of range; MemoryError for a buffer that cannot be addressed.");

static PyObject *debug_buffer_layout(PyObject *module, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"programs",
				 "records_per_program",
				 "dump_records_per_program",
				 "record_capacity",
				 "dump_capacity",
				 "nsites",
				 "nparams",
				 "nchecks",
				 "records",
				 "dumps",
				 "suppress",
				 "values",
				 "interp",
				 NULL};
	struct fp_dbg_buffer_spec spec;
	struct fp_dbg_buffer_layout lay;
	PyObject *rcap, *dcap, *vals = NULL, *hdr = NULL, *ret = NULL;
	long long programs, rpp, dpp;
	unsigned int nsites, nparams, nchecks;
	int records, dumps, suppress, interp = 0, st;
	int64_t *words = NULL;
	size_t i;

	(void)module;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "LLLOOIIIppp|O!p:debug_buffer_layout", kwlist,
					 &programs, &rpp, &dpp, &rcap, &dcap, &nsites, &nparams,
					 &nchecks, &records, &dumps, &suppress, &PyTuple_Type,
					 &vals, &interp))
		return NULL;
	memset(&spec, 0, sizeof(spec));
	spec.programs = programs;
	spec.records_per_program = rpp;
	spec.dump_records_per_program = dpp;
	spec.record_capacity = -1;
	spec.dump_capacity = -1;
	if ((rcap != Py_None && (spec.record_capacity = PyLong_AsLongLong(rcap)) == -1 &&
	     PyErr_Occurred()) ||
	    (dcap != Py_None && (spec.dump_capacity = PyLong_AsLongLong(dcap)) == -1 &&
	     PyErr_Occurred()))
		return NULL;
	/* a capacity below 0 means nothing fits: as 0 (None alone sizes from the launch) */
	if (rcap != Py_None && spec.record_capacity < 0)
		spec.record_capacity = 0;
	if (dcap != Py_None && spec.dump_capacity < 0)
		spec.dump_capacity = 0;
	spec.nsites = nsites;
	spec.nparams = nparams;
	spec.nchecks = nchecks;
	spec.records = records;
	spec.dumps = dumps;
	spec.suppress = suppress;
	st = fp_dbg_buffer_layout(&spec, &lay);
	if (st == FP_ELIMIT) {
		PyErr_Format(
			PyExc_MemoryError,
			"a record buffer of %lld programs x %lld records does not fit in 2^63 bytes",
			programs, rpp);
		return NULL;
	}
	if (st) {
		PyErr_Format(PyExc_ValueError, "debug_buffer_layout: %s", fp_strerror(st));
		return NULL;
	}
	if (nchecks && vals && PyTuple_GET_SIZE(vals) != (Py_ssize_t)nparams) {
		PyErr_Format(PyExc_ValueError, "debug_buffer_layout: %zd values for %u parameters",
			     PyTuple_GET_SIZE(vals), nparams);
		return NULL;
	}
	words = PyMem_Calloc(lay.host_words, sizeof(*words));
	if (!words)
		return PyErr_NoMemory();
	if (fp_dbg_buffer_header(&spec, &lay, words, lay.host_words))
		goto out;
	for (i = 0; nchecks && vals && i < nparams; i++) {
		uint64_t e[4];
		int k;

		if (fpy_tensor_entry(PyTuple_GET_ITEM(vals, (Py_ssize_t)i), interp != 0, e) < 0)
			goto out;
		for (k = 0; k < 4; k++)
			words[FP_DBG_HEADER_WORDS + FP_DBG_EXT_WORDS + FP_DBG_ENTRY_WORDS * i + k] =
				(int64_t)e[k];
	}
	if (!(hdr = PyList_New((Py_ssize_t)lay.host_words)))
		goto out;
	for (i = 0; i < lay.host_words; i++) {
		PyObject *x = PyLong_FromLongLong(words[i]);

		if (!x)
			goto out;
		PyList_SET_ITEM(hdr, (Py_ssize_t)i, x);
	}
	ret = Py_BuildValue("(LLLO)", (long long)lay.slots, (long long)lay.arena_words,
			    (long long)lay.total_words, hdr);
out:
	Py_XDECREF(hdr);
	PyMem_Free(words);
	return ret;
}

PyDoc_STRVAR(
	debug_scan_args_doc,
	"debug_scan_args(names, kinds, bound, interp, tensor_type, constexpr_type)\n"
	"    -> (parts, dyn) or None\n\n"
	"_plans.scan() in one pass: names (tuple of str) and kinds (bytes: 0 an argument,\n"
	"1 a constexpr the launch JSON describes as one, 2 a constexpr only Triton knows) of the\n"
	"kernel's parameters, their values in `bound`; interp: the interpreter's launch (device\n"
	"tensors have no addresses there). None when an argument is of a kind this does not\n"
	"describe; an exception an argument's method raised propagates.");

static PyObject *scan_args(PyObject *const *argv, Py_ssize_t argc, uint64_t *table);

static PyObject *debug_scan_args(PyObject *module, PyObject *const *argv, Py_ssize_t argc)
{
	(void)module;
	return scan_args(argv, argc, NULL);
}

/* debug_scan_args(), filling `table` (4 words per parameter, zeroed by the caller) with each
 * tensor argument's tensor-table entry when given. */
static PyObject *scan_args(PyObject *const *argv, Py_ssize_t argc, uint64_t *table)
{
	PyObject *names, *kinds, *bound, *tensor_type, *cx_type;
	PyObject *parts = NULL, *dyn = NULL, *empty = NULL, *ret = NULL;
	const char *k;
	Py_ssize_t n, i;
	int interp;

	if (argc != 6) {
		PyErr_SetString(PyExc_TypeError, "debug_scan_args takes 6 arguments");
		return NULL;
	}
	names = argv[0];
	kinds = argv[1];
	bound = argv[2];
	tensor_type = argv[4];
	cx_type = argv[5];
	if (!PyTuple_Check(names) || !PyBytes_Check(kinds) || !PyDict_Check(bound) ||
	    !PyType_Check(tensor_type) || !PyType_Check(cx_type) ||
	    PyBytes_GET_SIZE(kinds) != PyTuple_GET_SIZE(names)) {
		PyErr_SetString(PyExc_TypeError,
				"debug_scan_args(names: tuple, kinds: bytes of the same length, "
				"bound: dict, interp, tensor_type: type, constexpr_type: type)");
		return NULL;
	}
	if ((interp = PyObject_IsTrue(argv[3])) < 0)
		return NULL;
	n = PyTuple_GET_SIZE(names);
	k = PyBytes_AS_STRING(kinds);
	if (!(parts = PyList_New(0)) || !(dyn = PyList_New(n)) ||
	    !(empty = PyUnicode_FromString("")))
		goto out;
	for (i = 0; i < n; i++) {
		PyObject *v = PyDict_GetItemWithError(bound, PyTuple_GET_ITEM(names, i));
		PyObject *part = NULL, *d = NULL;
		int kind = k[i];

		if (!v) {
			if (!PyErr_Occurred())
				goto none;
			goto out;
		}
		Py_INCREF(v);
		if (kind) {
			if (PyObject_TypeCheck(v, (PyTypeObject *)cx_type)) {
				PyObject *inner = PyObject_GetAttr(v, s_value);

				Py_DECREF(v);
				if (!inner)
					goto out;
				v = inner;
			}
			part = PyTuple_Pack(2, (PyObject *)Py_TYPE(v), v);
			if (!part || PyList_Append(parts, part)) {
				Py_XDECREF(part);
				Py_DECREF(v);
				goto out;
			}
			Py_CLEAR(part);
			if (kind == 1) {
				Py_DECREF(v);
				PyList_SET_ITEM(dyn, i, Py_NewRef(empty));
				continue;
			}
		}
		if (PyLong_CheckExact(v)) {
			if (!kind && !(part = int_part(v)))
				goto fail_v;
			d = PyUnicode_FromFormat("%S}", v);
		} else if (PyFloat_CheckExact(v) || PyBool_Check(v) || v == Py_None) {
			if (!kind)
				part = Py_NewRef((PyObject *)Py_TYPE(v));
			if (v == Py_None)
				d = PyUnicode_FromString("null}");
			else if (PyBool_Check(v))
				d = PyUnicode_FromString(v == Py_True ? "true}" : "false}");
			else
				d = float_dyn(v);
		} else if (PyObject_TypeCheck(v, (PyTypeObject *)tensor_type)) {
			int rc = tensor_arg(v, interp, !kind, &part, &d,
					    table ? table + 4 * i : NULL);

			if (rc < 0)
				goto fail_v;
			if (rc == 0) {
				Py_DECREF(v);
				goto none;
			}
		} else {
			Py_DECREF(v);
			goto none; /* a descriptor or another class: Python's scan */
		}
		Py_DECREF(v);
		if (!d || (part && PyList_Append(parts, part))) {
			Py_XDECREF(part);
			Py_XDECREF(d);
			goto out;
		}
		Py_XDECREF(part);
		PyList_SET_ITEM(dyn, i, d);
		continue;
fail_v:
		Py_XDECREF(part);
		Py_DECREF(v);
		goto out;
	}
	{
		PyObject *t = PyList_AsTuple(parts);

		if (t)
			ret = PyTuple_Pack(2, t, dyn);
		Py_XDECREF(t);
	}
	goto out;
none:
	ret = Py_NewRef(Py_None);
out:
	Py_XDECREF(parts);
	Py_XDECREF(dyn);
	Py_XDECREF(empty);
	return ret;
}

PyDoc_STRVAR(debug_bind_doc,
	     "debug_bind(names, index, defaults, args, kwargs) -> (bound, options) or None\n\n"
	     "_plans.bind() for a kernel whose parameters are all positional-or-keyword: names\n"
	     "(tuple of str) in signature order, index (dict name -> position), defaults (dict).\n"
	     "bound: every parameter's value in signature order, defaults applied; options: the\n"
	     "keyword arguments that are not parameters (launch options). None where Triton's\n"
	     "binder would raise: more positional arguments than parameters, one given twice, one\n"
	     "missing.");

static PyObject *debug_bind(PyObject *module, PyObject *const *argv, Py_ssize_t argc)
{
	PyObject *names, *index, *defaults, *args, *kwargs;
	PyObject *bound = NULL, *options = NULL, *ret = NULL, *k, *v;
	Py_ssize_t n, total, i, pos = 0;
	bool by_name = false;

	(void)module;
	if (argc != 5) {
		PyErr_SetString(PyExc_TypeError, "debug_bind takes 5 arguments");
		return NULL;
	}
	names = argv[0];
	index = argv[1];
	defaults = argv[2];
	args = argv[3];
	kwargs = argv[4];
	if (!PyTuple_Check(names) || !PyDict_Check(index) || !PyDict_Check(defaults) ||
	    !PyTuple_Check(args) || !PyDict_Check(kwargs)) {
		PyErr_SetString(
			PyExc_TypeError,
			"debug_bind(names: tuple, index: dict, defaults: dict, args: tuple, "
			"kwargs: dict)");
		return NULL;
	}
	n = PyTuple_GET_SIZE(args);
	total = PyTuple_GET_SIZE(names);
	if (n > total)
		Py_RETURN_NONE;
	if (!(bound = PyDict_New()) || !(options = PyDict_New()))
		goto out;
	for (i = 0; i < n; i++)
		if (PyDict_SetItem(bound, PyTuple_GET_ITEM(names, i), PyTuple_GET_ITEM(args, i)))
			goto out;
	while (PyDict_Next(kwargs, &pos, &k, &v)) {
		PyObject *at = PyDict_GetItemWithError(index, k);
		Py_ssize_t j;

		if (!at) {
			if (PyErr_Occurred() || PyDict_SetItem(options, k, v))
				goto out;
			continue;
		}
		j = PyLong_AsSsize_t(at);
		if (j == -1 && PyErr_Occurred())
			goto out;
		if (j < n)
			goto none; /* given by position and by name */
		if (PyDict_SetItem(bound, k, v))
			goto out;
		by_name = true;
	}
	if (PyDict_GET_SIZE(bound) < total) {
		for (i = n; i < total; i++) {
			PyObject *name = PyTuple_GET_ITEM(names, i), *d;
			int has = PyDict_Contains(bound, name);

			if (has < 0)
				goto out;
			if (has)
				continue;
			d = PyDict_GetItemWithError(defaults, name);
			if (!d) {
				if (PyErr_Occurred())
					goto out;
				goto none; /* missing */
			}
			if (PyDict_SetItem(bound, name, d))
				goto out;
		}
		by_name = true;
	}
	if (by_name) {
		/* in signature order, as the binder gives them */
		PyObject *ordered = PyDict_New();

		if (!ordered)
			goto out;
		for (i = 0; i < total; i++) {
			PyObject *name = PyTuple_GET_ITEM(names, i);
			PyObject *val = PyDict_GetItemWithError(bound, name);

			if (!val || PyDict_SetItem(ordered, name, val)) {
				if (!PyErr_Occurred())
					PyErr_SetString(PyExc_KeyError,
							"debug_bind: a parameter is not bound");
				Py_DECREF(ordered);
				goto out;
			}
		}
		Py_SETREF(bound, ordered);
	}
	ret = PyTuple_Pack(2, bound, options);
	goto out;
none:
	ret = Py_NewRef(Py_None);
out:
	Py_XDECREF(bound);
	Py_XDECREF(options);
	return ret;
}

PyObject *fpy_debug_bind(PyObject *const *argv, Py_ssize_t argc)
{
	return debug_bind(NULL, argv, argc);
}

PyObject *fpy_debug_scan_args(PyObject *const *argv, Py_ssize_t argc, uint64_t *table)
{
	return scan_args(argv, argc, table);
}

static PyMethodDef dbgscan_methods[] = {
	{"debug_bind", (PyCFunction)(void (*)(void))debug_bind, METH_FASTCALL, debug_bind_doc},
	{"debug_scan_args", (PyCFunction)(void (*)(void))debug_scan_args, METH_FASTCALL,
	 debug_scan_args_doc},
	{"debug_buffer_layout", (PyCFunction)(void (*)(void))debug_buffer_layout,
	 METH_VARARGS | METH_KEYWORDS, debug_buffer_layout_doc},
	{NULL, NULL, 0, NULL},
};

int fpy_dbgscan_exec(PyObject *module)
{
	if (intern_names())
		return -1;
	return PyModule_AddFunctions(module, dbgscan_methods);
}
