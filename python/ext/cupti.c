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
	"                 read_callpath=False, per_program=False) -> None\n\n"
	"For the next kernel launch on this thread only: file it under call-path id\n"
	"`callpath` (None: none), or, with read_callpath=True, under the call path of the calling\n"
	"Python frames (as prof_callpath() reads it); with the numbers of a launch_metadata dict\n"
	"(flops8..64, bytes) and an estimate est=(bytes, flops) per program, multiplied by\n"
	"`programs` (the grid's size) into est_bytes / est_flops; with per_program=True the\n"
	"backend multiplies it by the grid of the kernel's record instead (programs ignored).\n"
	"The launch hook's slow path calls it as\n"
	"its last step before the launch; the scopes and state are read by the backend itself.");

static PyObject *cupti_set_launch(PyObject *module, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"callpath",      "metadata",    "est", "programs",
				 "read_callpath", "per_program", NULL};
	PyObject *cpobj = Py_None, *mdobj = Py_None, *est = Py_None;
	struct fp_sink_metadata md;
	uint32_t callpath = FP_PROF_NO_CALLPATH;
	double programs = 1, b, f;
	int here = 0, per_program = 0, rc;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOOd$pp:cupti_set_launch", kwlist, &cpobj,
					 &mdobj, &est, &programs, &here, &per_program))
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
		md.est_bytes = per_program ? b : b * programs;
		md.est_flops = per_program ? f : f * programs;
		md.flags |= FP_SINK_MD_EST_BYTES | FP_SINK_MD_EST_FLOPS;
	}
	if (here) {
		rc = fpy_prof_callpath_read(&callpath);
		if (rc == -1 && PyErr_Occurred())
			return NULL;
		if (rc)
			return fpy_raise_null(module, rc, NULL);
	}
	/* Last, after everything that could fail: a launch never gets half of what was meant. */
	fp_cupti_set_thread_launch_ex(callpath, md.flags ? &md : NULL,
				      per_program ? FP_CUPTI_LAUNCH_EST_PER_PROGRAM : 0);
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

PyDoc_STRVAR(
	cupti_capture_doc,
	"cupti_capture(dir, max_bytes) -> None\n\n"
	"Write the raw bytes of every CUPTI activity buffer to dir/cupti-<api>-<pid>-<seq>.rec,\n"
	"at most max_bytes in all (fp_cupti_capture). dir None or '' stops capturing. Raises\n"
	"ValueError (max_bytes 0) or OSError (dir missing, not a directory or not writable).");

static PyObject *cupti_capture(PyObject *module, PyObject *args)
{
	unsigned long long max_bytes = 0;
	struct fp_diag diag;
	PyObject *dobj, *bytes = NULL;
	const char *dir = NULL;
	int rc;

	if (!PyArg_ParseTuple(args, "O|K:cupti_capture", &dobj, &max_bytes))
		return NULL;
	if (dobj != Py_None) {
		if (!PyUnicode_FSConverter(dobj, &bytes))
			return NULL;
		dir = PyBytes_AS_STRING(bytes);
	}
	memset(&diag, 0, sizeof(diag));
	Py_BEGIN_ALLOW_THREADS rc = fp_cupti_capture(dir, (uint64_t)max_bytes, &diag);
	Py_END_ALLOW_THREADS Py_XDECREF(bytes);
	if (rc)
		return fpy_raise_null(module, rc, &diag);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(cupti_capture_stats_doc,
	     "cupti_capture_stats() -> dict\n\n"
	     "What the capture did since it was last set: active, dir, max_bytes, files, bytes,\n"
	     "skipped, skipped_bytes, failures, error (the first failure's reason).");

static PyObject *cupti_capture_stats(PyObject *module, PyObject *unused)
{
	struct fp_cupti_capture_stats s;
	PyObject *d;
	int rc = fp_cupti_capture_get_stats(&s);

	if (rc)
		return fpy_raise_null(module, rc, NULL);
	d = PyDict_New();
	if (!d)
		return NULL;
	if (fpy_set_item(d, "active", PyBool_FromLong(s.active)) ||
	    fpy_set_item(d, "dir", PyUnicode_DecodeFSDefault(s.dir)) ||
	    set_u64(d, "max_bytes", s.max_bytes) || set_u64(d, "files", s.files) ||
	    set_u64(d, "bytes", s.bytes) || set_u64(d, "skipped", s.skipped) ||
	    set_u64(d, "skipped_bytes", s.skipped_bytes) || set_u64(d, "failures", s.failures) ||
	    fpy_set_item(d, "error",
			 PyUnicode_DecodeUTF8(s.error, (Py_ssize_t)strlen(s.error), "replace"))) {
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

/*
 * ---- the launch-enter hook's C fast path ----------------------------------------------------
 *
 * flagprism._profhook puts cupti_hook in Triton's launch-enter hook chain while a CUPTI session
 * needs something per launch (IR estimates, hook="triton" metadata, the Python call path). Per
 * launch it reads launch_metadata.data["function"] (the CUfunction: one per compiled kernel and
 * device), finds the kernel's per-program estimate in a table the Python side filled at the
 * kernel's first launch, evaluates the kernel's launch_metadata function only when it has one
 * and a session asks for it, reads the call path in C when a session has context="python", and
 * hands all of it over with fp_cupti_set_thread_launch_ex(); the backend multiplies the estimate
 * by the grid of the kernel's record. An unknown kernel (first launch, or the table full) goes
 * to the Python slow path, which also writes the metadata notes. Everything here runs with the
 * GIL held: the table needs no other lock.
 */
#define HOOK_SLOTS 1024 /* power of two; a full table sends the rest to the slow path */

struct hook_entry {
	unsigned long long fn; /* the CUfunction handle; 0: empty slot */
	double est_bytes, est_flops;
	bool has_est;
};

static struct hook_entry hook_tab[HOOK_SLOTS];
static size_t hook_used;
static PyObject *hook_slow; /* the Python slow path; NULL: the hook does nothing */
static bool hook_python, hook_est, hook_md;
static unsigned long long hook_n_fast, hook_n_slow, hook_n_full;
static PyObject *str_data, *str_function, *str_extras, *str_get;

static size_t hook_slot(unsigned long long fn)
{
	return (size_t)((fn * 0x9E3779B97F4A7C15ull) >> 40) & (HOOK_SLOTS - 1);
}

static struct hook_entry *hook_find(unsigned long long fn)
{
	size_t i, n;

	for (n = 0, i = hook_slot(fn); n < HOOK_SLOTS; n++, i = (i + 1) & (HOOK_SLOTS - 1)) {
		if (hook_tab[i].fn == fn)
			return &hook_tab[i];
		if (!hook_tab[i].fn)
			return NULL;
	}
	return NULL;
}

static int hook_strings(void)
{
	if (str_get)
		return 0;
	str_data = PyUnicode_InternFromString("data");
	str_function = PyUnicode_InternFromString("function");
	str_extras = PyUnicode_InternFromString("extras");
	str_get = PyUnicode_InternFromString("get");
	if (!str_data || !str_function || !str_extras || !str_get) {
		Py_CLEAR(str_data);
		Py_CLEAR(str_function);
		Py_CLEAR(str_extras);
		Py_CLEAR(str_get);
		return -1;
	}
	return 0;
}

/* The CUfunction of a launch (0 when the LazyDict does not say: slow path) and a new reference to
 * launch_metadata.data (NULL when it is not a dict). */
static unsigned long long hook_function(PyObject *lmd, PyObject **data)
{
	PyObject *d = PyObject_GetAttr(lmd, str_data), *v;
	unsigned long long fn = 0;

	*data = NULL;
	if (!d) {
		PyErr_Clear();
		return 0;
	}
	if (!PyDict_Check(d)) {
		Py_DECREF(d);
		return 0;
	}
	v = PyDict_GetItemWithError(d, str_function);
	if (v && PyLong_Check(v)) {
		fn = PyLong_AsUnsignedLongLong(v);
		if (fn == (unsigned long long)-1 && PyErr_Occurred())
			fn = 0;
	}
	PyErr_Clear();
	*data = d;
	return fn;
}

/* Whether the launch's LazyDict still has a launch_metadata function to evaluate. */
static int hook_has_extras(PyObject *lmd)
{
	PyObject *x = PyObject_GetAttr(lmd, str_extras);
	int r;

	if (!x) {
		PyErr_Clear();
		return 0;
	}
	r = PyList_Check(x) ? PyList_GET_SIZE(x) > 0 : PyObject_IsTrue(x);
	Py_DECREF(x);
	if (r < 0) {
		PyErr_Clear();
		r = 0;
	}
	return r;
}

/*
 * hook="triton": the launch's metadata numbers. LazyDict.get() runs the kernel's launch_metadata
 * function (which may launch kernels itself: each gets its own hand-over before this one is
 * made); an earlier hook of the chain (a host-timed session's) may have run it already, so the
 * merged data dict is read either way. Triton's own three keys (name, function, stream) carry
 * no numbers: a dict of three entries is skipped.
 */
static int hook_metadata(PyObject *lmd, PyObject *data, struct fp_sink_metadata *md)
{
	PyObject *d;
	int rc;

	if (hook_has_extras(lmd)) {
		d = PyObject_CallMethodNoArgs(lmd, str_get);
		if (!d)
			return -1;
	} else {
		d = Py_NewRef(data);
	}
	rc = PyDict_Check(d) && PyDict_GET_SIZE(d) <= 3 ? 0 : fpy_prof_metadata_read(d, md);
	Py_DECREF(d);
	return rc;
}

PyDoc_STRVAR(
	cupti_hook_doc,
	"cupti_hook(launch_metadata) -> None\n\n"
	"Triton launch-enter hook of CUPTI sessions (see cupti_hook_config): hands the next\n"
	"launch's estimate, launch metadata and call path to the backend, in C for kernels it\n"
	"knows, through the configured Python slow path for the others.");

static PyObject *cupti_hook(PyObject *module, PyObject *lmd)
{
	struct fp_sink_metadata md;
	uint32_t callpath = FP_PROF_NO_CALLPATH;
	struct hook_entry *e;
	unsigned long long fn;
	PyObject *data;
	int rc;

	if (!hook_slow)
		Py_RETURN_NONE;
	fn = hook_function(lmd, &data);
	e = fn ? hook_find(fn) : NULL;
	if (!e) {
		Py_XDECREF(data);
		hook_n_slow++;
		return PyObject_CallOneArg(hook_slow, lmd);
	}
	memset(&md, 0, sizeof(md));
	rc = hook_md ? hook_metadata(lmd, data, &md) : 0;
	Py_DECREF(data);
	if (rc < 0)
		return NULL;
	if (hook_est && e->has_est) {
		md.est_bytes = e->est_bytes;
		md.est_flops = e->est_flops;
		md.flags |= FP_SINK_MD_EST_BYTES | FP_SINK_MD_EST_FLOPS;
	}
	if (hook_python) {
		rc = fpy_prof_callpath_read(&callpath);
		if (rc == -1 && PyErr_Occurred())
			return NULL;
		if (rc)
			return fpy_raise_null(module, rc, NULL);
	}
	hook_n_fast++;
	/* Last: a launch never gets half of what was meant. */
	fp_cupti_set_thread_launch_ex(callpath, md.flags ? &md : NULL,
				      FP_CUPTI_LAUNCH_EST_PER_PROGRAM);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(
	cupti_hook_config_doc,
	"cupti_hook_config(slow=None, python=False, estimates=False, metadata=False) -> None\n\n"
	"What cupti_hook does from now on: `slow(launch_metadata)` is called for kernels the\n"
	"table does not know (None: the hook does nothing); python: read the call path;\n"
	"estimates: attach the known per-program estimates; metadata: evaluate launch_metadata\n"
	"functions. Forgets every kernel learned so far.");

static PyObject *cupti_hook_config(PyObject *module, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"slow", "python", "estimates", "metadata", NULL};
	PyObject *slow = Py_None;
	int py = 0, est = 0, mdv = 0;

	(void)module;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|Oppp:cupti_hook_config", kwlist, &slow, &py,
					 &est, &mdv))
		return NULL;
	if (slow != Py_None && !PyCallable_Check(slow)) {
		PyErr_SetString(PyExc_TypeError, "slow must be callable or None");
		return NULL;
	}
	if (hook_strings() < 0)
		return NULL;
	Py_XSETREF(hook_slow, slow == Py_None ? NULL : Py_NewRef(slow));
	hook_python = py;
	hook_est = est;
	hook_md = mdv;
	memset(hook_tab, 0, sizeof(hook_tab));
	hook_used = 0;
	Py_RETURN_NONE;
}

PyDoc_STRVAR(cupti_hook_learn_doc,
	     "cupti_hook_learn(function, est=None) -> bool\n\n"
	     "Remember compiled kernel `function` (the CUfunction of launch_metadata.data) with\n"
	     "its per-program estimate est=(bytes, flops), or None for none. False when the table\n"
	     "is full (that kernel keeps taking the slow path; cupti_hook_stats counts it).");

static PyObject *cupti_hook_learn(PyObject *module, PyObject *args)
{
	unsigned long long fn;
	PyObject *est = Py_None;
	struct hook_entry *e;
	double b = 0, f = 0;
	size_t i;

	(void)module;
	if (!PyArg_ParseTuple(args, "K|O:cupti_hook_learn", &fn, &est))
		return NULL;
	if (!fn) {
		PyErr_SetString(PyExc_ValueError, "function must be a non-zero handle");
		return NULL;
	}
	if (est != Py_None &&
	    !PyArg_ParseTuple(est, "dd;est must be a (bytes, flops) tuple or None", &b, &f))
		return NULL;
	e = hook_find(fn);
	if (!e) {
		if (hook_used >= HOOK_SLOTS / 2) { /* keep probes short */
			hook_n_full++;
			Py_RETURN_FALSE;
		}
		for (i = hook_slot(fn); hook_tab[i].fn; i = (i + 1) & (HOOK_SLOTS - 1))
			;
		e = &hook_tab[i];
		e->fn = fn;
		hook_used++;
	}
	e->has_est = est != Py_None;
	e->est_bytes = b;
	e->est_flops = f;
	Py_RETURN_TRUE;
}

PyDoc_STRVAR(
	cupti_hook_stats_doc,
	"cupti_hook_stats() -> dict\n\n"
	"Launches cupti_hook handled in C ('fast') and through the slow path ('slow'), kernels\n"
	"known ('known'), kernels refused by a full table ('full').");

static PyObject *cupti_hook_stats(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return Py_BuildValue("{sKsKsKsK}", "fast", hook_n_fast, "slow", hook_n_slow, "known",
			     (unsigned long long)hook_used, "full", hook_n_full);
}

/*
 * ---- per-kernel estimates for the launch callback (no launch hook) ---------------------------
 *
 * In shadow context the sessions need nothing per launch from Python: flagprism._profhook fills
 * the backend's CUfunction -> estimate table when Triton loads a kernel (and from Triton's caches
 * at start), and the CUPTI launch callback looks the launch's kernel up itself.
 */

PyDoc_STRVAR(cupti_kest_set_doc,
	     "cupti_kest_set(function, est=None) -> bool\n\n"
	     "Tell the backend's launch callback the per-program estimate est=(bytes, flops) of\n"
	     "compiled kernel `function` (its CUfunction handle), or None for a kernel without\n"
	     "one. False when the table is full (its launches then get no estimate, counted).");

static PyObject *cupti_kest_set(PyObject *module, PyObject *args)
{
	unsigned long long fn;
	PyObject *est = Py_None;
	double e[2] = {0, 0};
	int rc;

	if (!PyArg_ParseTuple(args, "K|O:cupti_kest_set", &fn, &est))
		return NULL;
	if (est != Py_None &&
	    !PyArg_ParseTuple(est, "dd;est must be a (bytes, flops) tuple or None", &e[0], &e[1]))
		return NULL;
	rc = fp_cupti_kernel_estimate_set(fn, est != Py_None ? e : NULL);
	if (rc == FP_ELIMIT)
		Py_RETURN_FALSE;
	if (rc)
		return fpy_raise_null(module, rc, NULL);
	Py_RETURN_TRUE;
}

PyDoc_STRVAR(cupti_kest_enable_doc,
	     "cupti_kest_enable(on) -> None\n\n"
	     "Whether the launch callback attaches the table's estimates to launches nobody\n"
	     "handed anything over for (the shadow-context sessions' estimates).");

static PyObject *cupti_kest_enable(PyObject *module, PyObject *arg)
{
	int on = PyObject_IsTrue(arg);

	(void)module;
	if (on < 0)
		return NULL;
	fp_cupti_kernel_estimates_enable(on);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(cupti_kest_epoch_doc,
	     "cupti_kest_epoch() -> int\n\n"
	     "Start a new epoch of the table's launch marks and return it (a session takes one\n"
	     "at start; cupti_kest_seen(epoch) then lists the kernels launched since).");

static PyObject *cupti_kest_epoch(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return PyLong_FromUnsignedLong(fp_cupti_kernel_estimates_epoch());
}

PyDoc_STRVAR(cupti_kest_seen_doc,
	     "cupti_kest_seen(since) -> list[int]\n\n"
	     "The CUfunctions of the table's kernels launched in epoch `since` or later.");

static PyObject *cupti_kest_seen(PyObject *module, PyObject *args)
{
	uint64_t buf[FP_CUPTI_KEST_SLOTS];
	unsigned long since;
	PyObject *list;
	size_t n, i;

	(void)module;
	if (!PyArg_ParseTuple(args, "k:cupti_kest_seen", &since))
		return NULL;
	n = fp_cupti_kernel_estimates_seen((uint32_t)since, buf, FP_CUPTI_KEST_SLOTS);
	if (n > FP_CUPTI_KEST_SLOTS)
		n = FP_CUPTI_KEST_SLOTS; /* cannot happen: the table holds half as many */
	list = PyList_New((Py_ssize_t)n);
	if (!list)
		return NULL;
	for (i = 0; i < n; i++) {
		PyObject *v = PyLong_FromUnsignedLongLong(buf[i]);

		if (!v) {
			Py_DECREF(list);
			return NULL;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, v);
	}
	return list;
}

PyDoc_STRVAR(cupti_kest_stats_doc,
	     "cupti_kest_stats() -> dict\n\n"
	     "The estimate table: enabled, known (kernels), capacity, full (kernels refused),\n"
	     "misses (launches of kernels it did not know), epoch.");

static PyObject *cupti_kest_stats(PyObject *module, PyObject *unused)
{
	struct fp_cupti_kest_stats s;
	int rc = fp_cupti_kernel_estimates_stats(&s);

	(void)unused;
	if (rc)
		return fpy_raise_null(module, rc, NULL);
	return Py_BuildValue("{sOsKsKsKsKsk}", "enabled", s.enabled ? Py_True : Py_False, "known",
			     (unsigned long long)s.known, "capacity",
			     (unsigned long long)s.capacity, "full", (unsigned long long)s.full,
			     "misses", (unsigned long long)s.misses, "epoch",
			     (unsigned long)s.epoch);
}

static PyMethodDef cupti_methods[] = {
	{"cupti_configure", FN(cupti_configure), KW, cupti_configure_doc},
	{"cupti_set_launch", FN(cupti_set_launch), KW, cupti_set_launch_doc},
	{"cupti_stats", cupti_stats, METH_NOARGS, cupti_stats_doc},
	{"cupti_capture", cupti_capture, METH_VARARGS, cupti_capture_doc},
	{"cupti_capture_stats", cupti_capture_stats, METH_NOARGS, cupti_capture_stats_doc},
	{"cupti_counters", cupti_counters, METH_NOARGS, cupti_counters_doc},
	{"cupti_read_records", cupti_read_records, METH_VARARGS, cupti_read_records_doc},
	{"cupti_hook", cupti_hook, METH_O, cupti_hook_doc},
	{"cupti_hook_config", FN(cupti_hook_config), KW, cupti_hook_config_doc},
	{"cupti_hook_learn", cupti_hook_learn, METH_VARARGS, cupti_hook_learn_doc},
	{"cupti_hook_stats", cupti_hook_stats, METH_NOARGS, cupti_hook_stats_doc},
	{"cupti_kest_set", cupti_kest_set, METH_VARARGS, cupti_kest_set_doc},
	{"cupti_kest_enable", cupti_kest_enable, METH_O, cupti_kest_enable_doc},
	{"cupti_kest_epoch", cupti_kest_epoch, METH_NOARGS, cupti_kest_epoch_doc},
	{"cupti_kest_seen", cupti_kest_seen, METH_VARARGS, cupti_kest_seen_doc},
	{"cupti_kest_stats", cupti_kest_stats, METH_NOARGS, cupti_kest_stats_doc},
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
