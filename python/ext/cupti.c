/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Part `cupti` of flagprism._ext: registers the "cupti" profiler backend when the module loads
 * (sessions then start it with prof_start(backend="cupti")), and exposes its settings, the
 * per-launch hand-over from the Python launch hook (call path and launch metadata for the next
 * launch on this thread), its counters, the hardware-counter permission check for
 * `flagprism doctor`, and the offline activity-record reader. A thin client of
 * include/flagprism/cupti.h; sessions, scopes and call paths are part `prof`'s.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <flagprism/cupti.h>
#include <flagprism/prof.h>

#include "ext.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define KW (METH_VARARGS | METH_KEYWORDS)
#define FN(f) ((PyCFunction)(void (*)(void))(f))
#define MAX_DIRS 32

PyDoc_STRVAR(
	cupti_configure_doc,
	"cupti_configure(search_dirs=(), buffer_size=0, buffers=0, corr_slots=0,\n"
	"                graph_nodes=0) -> None\n\n"
	"Settings the CUPTI backend takes when it first starts in this process: extra\n"
	"directories to look for libcupti in (Triton's bundled copy, torch's nvidia/cu13/lib),\n"
	"activity buffer size and count, launches remembered, CUDA-graph nodes tracked\n"
	"(0: default). Raises flagprism._ext.Error (FP_ESTATE) once the backend has started.");

static PyObject *cupti_configure(PyObject *module, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"search_dirs", "buffer_size", "buffers",
				 "corr_slots",  "graph_nodes", NULL};
	PyObject *dirs = NULL, *seq = NULL, *res = NULL;
	unsigned long long bsize = 0, slots = 0, nodes = 0;
	const char *paths[MAX_DIRS];
	struct fp_cupti_config c;
	unsigned int nbuf = 0;
	Py_ssize_t i, n = 0;
	int rc;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|OKIKK:cupti_configure", kwlist, &dirs, &bsize,
					 &nbuf, &slots, &nodes))
		return NULL;
	memset(&c, 0, sizeof(c));
	if (dirs && dirs != Py_None) {
		seq = PySequence_Fast(dirs, "search_dirs must be a sequence of str");
		if (!seq)
			return NULL;
		n = PySequence_Fast_GET_SIZE(seq);
		if (n > MAX_DIRS) {
			PyErr_Format(PyExc_ValueError, "at most %d search_dirs", MAX_DIRS);
			goto out;
		}
		for (i = 0; i < n; i++) {
			paths[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i));
			if (!paths[i])
				goto out;
		}
		c.extra_dirs = paths;
		c.n_extra = (size_t)n;
	}
	c.buffer_size = (size_t)bsize;
	c.buffers = nbuf;
	c.corr_slots = (size_t)slots;
	c.graph_nodes = (size_t)nodes;
	rc = fp_cupti_configure(&c);
	if (rc)
		fpy_raise_null(module, rc, NULL);
	else
		res = Py_NewRef(Py_None);
out:
	Py_XDECREF(seq);
	return res;
}

PyDoc_STRVAR(
	cupti_set_launch_doc,
	"cupti_set_launch(callpath=None, metadata=None, est=None, programs=1, *,\n"
	"                 read_callpath=False) -> None\n\n"
	"For the next kernel launch on this thread only: file it under call-path id\n"
	"`callpath` (None: none), or, with read_callpath=True, under the call path of the calling\n"
	"Python frames (as prof_callpath() reads it); with the numbers of a launch_metadata dict\n"
	"(flops8..64, bytes) and an estimate est=(bytes, flops) per program, multiplied by\n"
	"`programs` (the grid's size) into est_bytes / est_flops. The launch hook calls it as\n"
	"its last step before the launch; the scopes and state are read by the backend itself.");

static PyObject *cupti_set_launch(PyObject *module, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"callpath", "metadata", "est", "programs", "read_callpath", NULL};
	PyObject *cpobj = Py_None, *mdobj = Py_None, *est = Py_None;
	struct fp_prof_metadata md;
	uint32_t callpath = FP_PROF_NO_CALLPATH;
	double programs = 1, b, f;
	int here = 0, rc;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOOd$p:cupti_set_launch", kwlist, &cpobj,
					 &mdobj, &est, &programs, &here))
		return NULL;
	if (here && cpobj != Py_None) {
		PyErr_SetString(PyExc_ValueError, "give callpath or read_callpath=True, not both");
		return NULL;
	}
	if (cpobj != Py_None) {
		unsigned long v = PyLong_AsUnsignedLong(cpobj);

		if (v == (unsigned long)-1 && PyErr_Occurred())
			return NULL;
		if (v > UINT32_MAX) {
			PyErr_SetString(PyExc_OverflowError, "call-path id out of range");
			return NULL;
		}
		callpath = (uint32_t)v;
	}
	memset(&md, 0, sizeof(md));
	if (fpy_prof_metadata_read(mdobj, &md) < 0)
		return NULL;
	if (est != Py_None) {
		if (!PyArg_ParseTuple(est, "dd;est must be a (bytes, flops) tuple", &b, &f))
			return NULL;
		md.est_bytes = b * programs;
		md.est_flops = f * programs;
		md.flags |= FP_PROF_MD_EST_BYTES | FP_PROF_MD_EST_FLOPS;
	}
	if (here) {
		rc = fpy_prof_callpath_read(&callpath);
		if (rc == -1 && PyErr_Occurred())
			return NULL;
		if (rc)
			return fpy_raise_null(module, rc, NULL);
	}
	/* Last, after everything that could fail: a launch never gets half of what was meant. */
	fp_cupti_set_thread_launch(callpath, md.flags ? &md : NULL);
	Py_RETURN_NONE;
}

static int set_u64(PyObject *d, const char *key, uint64_t v)
{
	return fpy_set_item(d, key, PyLong_FromUnsignedLongLong(v));
}

PyDoc_STRVAR(
	cupti_stats_doc,
	"cupti_stats() -> dict\n\n"
	"The CUPTI backend's process-wide counters: loaded, subscribed, enabled, api_version,\n"
	"sessions, path, clock_offset_ns, and kernels, misses, no_timing, cupti_dropped,\n"
	"buffers_denied, buffers_completed, graph_unknown, graph_nodes, graph_untracked,\n"
	"md_lost, corr_collisions, other_records, bad_buffers, orphaned.");

static PyObject *cupti_stats(PyObject *module, PyObject *unused)
{
	struct fp_cupti_stats s;
	PyObject *d;
	int rc = fp_cupti_get_stats(&s);

	if (rc)
		return fpy_raise_null(module, rc, NULL);
	d = PyDict_New();
	if (!d)
		return NULL;
	if (fpy_set_item(d, "loaded", PyBool_FromLong(s.loaded)) ||
	    fpy_set_item(d, "subscribed", PyBool_FromLong(s.subscribed)) ||
	    fpy_set_item(d, "enabled", PyBool_FromLong(s.enabled)) ||
	    set_u64(d, "api_version", s.api_version) || set_u64(d, "sessions", s.sessions) ||
	    set_u64(d, "kernels", s.kernels) || set_u64(d, "misses", s.misses) ||
	    set_u64(d, "no_timing", s.no_timing) || set_u64(d, "cupti_dropped", s.cupti_dropped) ||
	    set_u64(d, "buffers_denied", s.buffers_denied) ||
	    set_u64(d, "buffers_completed", s.buffers_completed) ||
	    set_u64(d, "graph_unknown", s.graph_unknown) ||
	    set_u64(d, "graph_nodes", s.graph_nodes) ||
	    set_u64(d, "graph_untracked", s.graph_untracked) || set_u64(d, "md_lost", s.md_lost) ||
	    set_u64(d, "corr_collisions", s.corr_collisions) ||
	    set_u64(d, "other_records", s.other_records) ||
	    set_u64(d, "bad_buffers", s.bad_buffers) || set_u64(d, "orphaned", s.orphaned) ||
	    fpy_set_item(d, "clock_offset_ns", PyLong_FromLongLong(s.clock_offset_ns)) ||
	    fpy_set_item(d, "path", PyUnicode_DecodeFSDefault(s.path))) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

PyDoc_STRVAR(cupti_counters_doc,
	     "cupti_counters() -> dict\n\n"
	     "Whether hardware counters and PC sampling are permitted for this process:\n"
	     "{'access': 'allowed' | 'admin-only' | 'unknown', 'admin_only': 0 | 1 | None,\n"
	     " 'privileged': bool, 'detail': str}. Reads procfs only; needs no GPU.");

static PyObject *cupti_counters(PyObject *module, PyObject *unused)
{
	static const char *const access[] = {"unknown", "allowed", "admin-only"};
	struct fp_cupti_counters_info c;
	PyObject *d;
	int rc = fp_cupti_counters_check(&c);

	if (rc)
		return fpy_raise_null(module, rc, NULL);
	d = PyDict_New();
	if (!d)
		return NULL;
	if (fpy_set_item(d, "access",
		     PyUnicode_FromString((unsigned)c.access < ARRAY_SIZE(access) ?
						  access[c.access] :
						  "unknown")) ||
	    fpy_set_item(d, "admin_only",
		     c.admin_only < 0 ? Py_NewRef(Py_None) : PyLong_FromLong(c.admin_only)) ||
	    fpy_set_item(d, "privileged", PyBool_FromLong(c.privileged)) ||
	    fpy_set_item(d, "detail", PyUnicode_FromString(c.detail))) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

static PyObject *int3(const int32_t v[3])
{
	return Py_BuildValue("(iii)", (int)v[0], (int)v[1], (int)v[2]);
}

static int record_cb(void *arg, const struct fp_cupti_kernel_record *k)
{
	PyObject *list = arg, *d = PyDict_New();
	int rc;

	if (!d)
		return FP_ENOMEM;
	if (set_u64(d, "kind", k->kind) || set_u64(d, "registers", k->registers) ||
	    set_u64(d, "start", k->start) || set_u64(d, "end", k->end) ||
	    set_u64(d, "device_id", k->device_id) || set_u64(d, "context_id", k->context_id) ||
	    set_u64(d, "stream_id", k->stream_id) || fpy_set_item(d, "grid", int3(k->grid)) ||
	    fpy_set_item(d, "block", int3(k->block)) ||
	    fpy_set_item(d, "static_smem", PyLong_FromLong(k->static_smem)) ||
	    fpy_set_item(d, "dynamic_smem", PyLong_FromLong(k->dynamic_smem)) ||
	    set_u64(d, "correlation", k->correlation) ||
	    set_u64(d, "graph_node_id", k->graph_node_id) || set_u64(d, "graph_id", k->graph_id)) {
		Py_DECREF(d);
		return FP_ENOMEM;
	}
	rc = PyList_Append(list, d);
	Py_DECREF(d);
	return rc ? FP_ENOMEM : FP_OK;
}

PyDoc_STRVAR(cupti_read_records_doc,
	     "cupti_read_records(buffer, api_version) -> list[dict]\n\n"
	     "Decode a raw CUPTI activity buffer (bytes-like) as a CUPTI of `api_version` writes\n"
	     "it, with FlagPrism's own bounds-checked reader: one dict per kernel record. Raises\n"
	     "FormatError at the first record it cannot size (the message gives the offset).");

static PyObject *cupti_read_records(PyObject *module, PyObject *args)
{
	unsigned long version;
	struct fp_diag diag;
	Py_buffer view;
	PyObject *list;
	size_t used;
	int rc;

	if (!PyArg_ParseTuple(args, "y*k:cupti_read_records", &view, &version))
		return NULL;
	list = PyList_New(0);
	if (!list) {
		PyBuffer_Release(&view);
		return NULL;
	}
	memset(&diag, 0, sizeof(diag));
	rc = fp_cupti_read_records(view.buf, (size_t)view.len, (uint32_t)version, record_cb, list,
				   &used, &diag);
	PyBuffer_Release(&view);
	if (rc) {
		Py_DECREF(list);
		if (PyErr_Occurred())
			return NULL;
		return fpy_raise_null(module, rc, &diag);
	}
	return list;
}

static PyMethodDef cupti_methods[] = {
	{"cupti_configure", FN(cupti_configure), KW, cupti_configure_doc},
	{"cupti_set_launch", FN(cupti_set_launch), KW, cupti_set_launch_doc},
	{"cupti_stats", cupti_stats, METH_NOARGS, cupti_stats_doc},
	{"cupti_counters", cupti_counters, METH_NOARGS, cupti_counters_doc},
	{"cupti_read_records", cupti_read_records, METH_VARARGS, cupti_read_records_doc},
	{NULL, NULL, 0, NULL},
};

int fpy_cupti_exec(PyObject *module)
{
	int rc = fp_cupti_register();

	if (rc) {
		fpy_raise(module, rc, NULL);
		return -1;
	}
	return PyModule_AddFunctions(module, cupti_methods);
}
