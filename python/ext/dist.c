/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Part `dist` of flagprism._ext: multi-process jobs for the Python layer
 * (python/flagprism/_dist.py): the per-rank output names (fp_ranks_name()), a rank's identity
 * attached to profiling sessions (fp_ranks_attach()), compact rank lists (fp_ranks_format()),
 * and the collective scopes the torch.distributed hooks open and close (fp_comm_enter() /
 * fp_comm_exit()), which are on the path of every hooked collective and so parse their
 * arguments positionally, without keywords. The merges are the CLI's (`flagprism merge`).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <limits.h>

#include <flagprism/comm.h>
#include <flagprism/prof.h>
#include <flagprism/ranks.h>

#include "ext.h"

/* A session argument: None means every session (FP_PROF_ALL). 0 or -1 with an exception. */
static int session_arg(PyObject *obj, int *out)
{
	long v;

	if (!obj || obj == Py_None) {
		*out = FP_PROF_ALL;
		return 0;
	}
	v = PyLong_AsLong(obj);
	if (v == -1 && PyErr_Occurred())
		return -1;
	if (v < FP_PROF_ALL || v > INT_MAX) {
		PyErr_Format(PyExc_ValueError, "invalid session id %ld", v);
		return -1;
	}
	*out = (int)v;
	return 0;
}

PyDoc_STRVAR(ranks_name_doc,
	     "ranks_name(name, rank, subdir=False) -> str\n\n"
	     "The output name of `rank`: every '{rank}' in `name` replaced by the rank, or, when\n"
	     "there is none, '.rank<R>' appended (subdir=True: '/rank<R>').");

static PyObject *ranks_name(PyObject *module, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = {"name", "rank", "subdir", NULL};
	const char *name;
	long long rank;
	int subdir = 0, rc;
	size_t cap;
	char *out;
	PyObject *res;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sL|p:ranks_name", kwlist, &name, &rank,
					 &subdir))
		return NULL;
	cap = strlen(name) * 4 + 64;
	out = PyMem_Malloc(cap);
	if (!out)
		return PyErr_NoMemory();
	rc = fp_ranks_name(name, rank, subdir ? FP_RANKS_SUBDIR : FP_RANKS_SUFFIX, out, cap);
	if (rc == FP_ELIMIT) { /* more than ~3 placeholders per character: retry big */
		PyMem_Free(out);
		cap = strlen(name) * 24 + 64;
		out = PyMem_Malloc(cap);
		if (!out)
			return PyErr_NoMemory();
		rc = fp_ranks_name(name, rank, subdir ? FP_RANKS_SUBDIR : FP_RANKS_SUFFIX, out,
				   cap);
	}
	if (rc) {
		PyMem_Free(out);
		if (rc == FP_EINVAL)
			return PyErr_Format(PyExc_ValueError,
					    "ranks_name: need a non-empty name and a rank >= 0");
		return fpy_raise_null(module, rc, NULL);
	}
	res = PyUnicode_DecodeFSDefault(out);
	PyMem_Free(out);
	return res;
}

PyDoc_STRVAR(
	ranks_of_path_doc,
	"ranks_of_path(path) -> int | None\n\n"
	"The rank a file name says ('prof.rank3.hatchet', 'dbg/rank1/summary.json'), or None.");

static PyObject *ranks_of_path(PyObject *module, PyObject *arg)
{
	PyObject *bytes = NULL;
	int64_t rank;
	int rc;

	(void)module;
	if (!PyUnicode_FSConverter(arg, &bytes))
		return NULL;
	rc = fp_ranks_of_path(PyBytes_AS_STRING(bytes), &rank);
	Py_DECREF(bytes);
	if (rc)
		Py_RETURN_NONE;
	return PyLong_FromLongLong(rank);
}

PyDoc_STRVAR(ranks_format_doc,
	     "ranks_format(ranks) -> str\n\n"
	     "Ranks (any iterable of ints >= 0) as compact sorted text: '0-3,5'.");

static int cmp_ll(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static PyObject *ranks_format(PyObject *module, PyObject *arg)
{
	PyObject *seq = PySequence_Fast(arg, "ranks must be an iterable of int");
	Py_ssize_t n, i, k = 0;
	int64_t *v;
	size_t cap;
	char *out;
	PyObject *res = NULL;

	(void)module;
	if (!seq)
		return NULL;
	n = PySequence_Fast_GET_SIZE(seq);
	v = PyMem_Malloc(sizeof(*v) * (size_t)(n ? n : 1));
	cap = (size_t)n * 24 + 8;
	out = PyMem_Malloc(cap);
	if (!v || !out) {
		PyErr_NoMemory();
		goto out;
	}
	for (i = 0; i < n; i++) {
		long long x = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));

		if (x == -1 && PyErr_Occurred())
			goto out;
		if (x < 0) {
			PyErr_SetString(PyExc_ValueError, "ranks must be >= 0");
			goto out;
		}
		v[i] = x;
	}
	qsort(v, (size_t)n, sizeof(*v), cmp_ll);
	for (i = 0; i < n; i++) /* distinct */
		if (k == 0 || v[k - 1] != v[i])
			v[k++] = v[i];
	fp_ranks_format(v, (size_t)k, out, cap);
	res = PyUnicode_FromString(out);
out:
	PyMem_Free(v);
	PyMem_Free(out);
	Py_DECREF(seq);
	return res;
}

PyDoc_STRVAR(ranks_attach_doc,
	     "ranks_attach(session, rank, world_size, local_rank=None, local_world_size=None,\n"
	     "             host=None, device=None, backend=None, barrier_exit_ns=None,\n"
	     "             barrier_ns=None, boot_id=None)\n\n"
	     "Attach a rank's identity to a profiling session (None: every open session): the\n"
	     "meta file's \"distributed\" object and the trace's otherData. The barrier times\n"
	     "(prof_clock_ns() when the start barrier returned, and how long it took) let\n"
	     "`flagprism merge` align the ranks' traces across hosts; ranks with one boot id\n"
	     "share a clock.");

static PyObject *ranks_attach(PyObject *module, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = {"session",          "rank",       "world_size", "local_rank",
				 "local_world_size", "host",       "device",     "backend",
				 "barrier_exit_ns",  "barrier_ns", "boot_id",    NULL};
	PyObject *sobj, *lr = Py_None, *lws = Py_None, *bx = Py_None, *bd = Py_None;
	const char *host = NULL, *device = NULL, *backend = NULL, *boot_id = NULL;
	struct fp_ranks_info ri;
	long long rank, world;
	int sid, rc;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OLL|OOzzzOOz:ranks_attach", kwlist, &sobj,
					 &rank, &world, &lr, &lws, &host, &device, &backend, &bx,
					 &bd, &boot_id))
		return NULL;
	if (session_arg(sobj, &sid) < 0)
		return NULL;
	fp_ranks_info_init(&ri);
	ri.rank = rank;
	ri.world_size = world;
	if (lr != Py_None && (ri.local_rank = PyLong_AsLongLong(lr)) == -1 && PyErr_Occurred())
		return NULL;
	if (lws != Py_None && (ri.local_world_size = PyLong_AsLongLong(lws)) == -1 &&
	    PyErr_Occurred())
		return NULL;
	ri.host = host;
	ri.device = device;
	ri.backend = backend;
	ri.boot_id = boot_id;
	if (bx != Py_None && bd != Py_None) {
		ri.barrier_exit_ns = PyLong_AsUnsignedLongLong(bx);
		if (PyErr_Occurred())
			return NULL;
		ri.barrier_ns = PyLong_AsUnsignedLongLong(bd);
		if (PyErr_Occurred())
			return NULL;
		ri.has_barrier = true;
	}
	rc = fp_ranks_attach(sid, &ri);
	if (rc == FP_EINVAL)
		return PyErr_Format(PyExc_ValueError,
				    "ranks_attach: rank %lld and world size %lld: need 0 <= rank < "
				    "world size <= %d",
				    rank, world, FP_RANKS_MAX);
	if (rc)
		return fpy_raise_null(module, rc, NULL);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(comm_enter_doc,
	     "comm_enter(session, backend, op, nbytes, ranks, group_size, is_async)\n\n"
	     "Open a collective scope '<backend>:<op>' on this thread (session None: every open\n"
	     "session). ranks: the communicator's ranks as text ('0-3') or None; group_size: 0\n"
	     "when unknown. Positional arguments only (it is on every hooked collective's path).");

static PyObject *comm_enter(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
	struct fp_comm_call c;
	unsigned long long bytes;
	long group;
	int sid, rc;

	if (nargs != 7)
		return PyErr_Format(PyExc_TypeError, "comm_enter takes 7 arguments (%zd given)",
				    nargs);
	if (session_arg(args[0], &sid) < 0)
		return NULL;
	memset(&c, 0, sizeof(c));
	c.backend = PyUnicode_AsUTF8(args[1]);
	if (!c.backend)
		return NULL;
	c.op = PyUnicode_AsUTF8(args[2]);
	if (!c.op)
		return NULL;
	bytes = PyLong_AsUnsignedLongLong(args[3]);
	if (bytes == (unsigned long long)-1 && PyErr_Occurred())
		return NULL;
	c.bytes = bytes;
	if (args[4] != Py_None) {
		c.ranks = PyUnicode_AsUTF8(args[4]);
		if (!c.ranks)
			return NULL;
	}
	group = PyLong_AsLong(args[5]);
	if (group == -1 && PyErr_Occurred())
		return NULL;
	c.group_size = group > 0 && group <= (long)UINT32_MAX ? (uint32_t)group : 0;
	if (PyObject_IsTrue(args[6]))
		c.flags |= FP_COMM_ASYNC;
	rc = fp_comm_enter(sid, &c);
	if (rc)
		return fpy_raise_null(module, rc, NULL);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(comm_exit_doc,
	     "comm_exit(session)\n\n"
	     "Close this thread's innermost scope, which must be a collective scope (else\n"
	     "flagprism.Error with status FP_ESTATE and nothing is closed).");

static PyObject *comm_exit(PyObject *module, PyObject *arg)
{
	struct fp_diag diag;
	int sid, rc;

	if (session_arg(arg, &sid) < 0)
		return NULL;
	fp_diag_clear(&diag);
	rc = fp_comm_exit(sid, &diag);
	if (rc)
		return fpy_raise_null(module, rc, &diag);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(comm_kernel_kind_doc,
	     "comm_kernel_kind(name) -> str | None\n\n"
	     "The collective kind a kernel name says ('ncclDevKernel_AllReduce_Sum_f32_RING_LL'\n"
	     "-> 'nccl:AllReduce'), or None for other kernels.");

static PyObject *comm_kernel_kind(PyObject *module, PyObject *arg)
{
	struct fp_comm_kernel k;
	const char *name;
	Py_ssize_t len;

	(void)module;
	name = PyUnicode_AsUTF8AndSize(arg, &len);
	if (!name)
		return NULL;
	if (!fp_comm_kernel_parse(name, (size_t)len, &k))
		Py_RETURN_NONE;
	return PyUnicode_FromFormat("%s:%.*s", k.library, (int)k.kind_len, k.kind);
}

#define KW (METH_VARARGS | METH_KEYWORDS)
#define FN(f) ((PyCFunction)(void (*)(void))(f))

static PyMethodDef dist_methods[] = {
	{"ranks_name", FN(ranks_name), KW, ranks_name_doc},
	{"ranks_of_path", ranks_of_path, METH_O, ranks_of_path_doc},
	{"ranks_format", ranks_format, METH_O, ranks_format_doc},
	{"ranks_attach", FN(ranks_attach), KW, ranks_attach_doc},
	{"comm_enter", FN(comm_enter), METH_FASTCALL, comm_enter_doc},
	{"comm_exit", comm_exit, METH_O, comm_exit_doc},
	{"comm_kernel_kind", comm_kernel_kind, METH_O, comm_kernel_kind_doc},
	{NULL, NULL, 0, NULL},
};

int fpy_dist_exec(PyObject *module)
{
	return PyModule_AddFunctions(module, dist_methods);
}
