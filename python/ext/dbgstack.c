// SPDX-License-Identifier: Apache-2.0
/*
 * Part `dbgstack`: the Python call stack of an instrumented launch, as the Debugger's reports
 * name it ("file:line function", outermost first, the innermost frames nearest the launch that
 * are not FlagPrism's, Triton's or a launching library's). A launch from the same place has the
 * same frames, so the formatted stack is cached by the frames themselves (framecache.c, as
 * part `prof` caches call paths): a launch costs one walk of the frame chain and a lookup. Not
 * here: which prefixes are skipped (the Debugger sets them), the report's other fields.
 *
 * The cache is bounded and starts over when full. The GIL is held throughout; building an
 * entry may run the garbage collector (and so Python code, which may launch kernels and come
 * back here), so the entry's slot is chosen after it is built.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#include "ext.h"

#define DS_MAX_WALK 256 /* frames read per launch; deeper stacks are keyed by these */
#define DS_MAX_KEEP 64  /* frames kept in a stack */
#define DS_SLOTS 1024   /* cache slots (power of two) */

#if PY_VERSION_HEX >= 0x030B0000
#define DS_LINE(co, pos) ((pos) >= 0 ? PyCode_Addr2Line((co), (pos)) : (co)->co_firstlineno)
#else
#define DS_LINE(co, pos) (pos)
#endif

static struct fpy_fcache ds_cache = {.nslots = DS_SLOTS};
static uint64_t ds_hits, ds_misses, ds_resets;
static struct fpy_prefixes ds_prefixes;

static bool ds_skipped(const char *file, size_t len)
{
	if (len > 0 && file[0] == '<')
		return true; /* <string>, <frozen ...>: not a file the user can open */
	return fpy_prefixes_match(&ds_prefixes, file, len);
}

/* The formatted stack of raw frames (innermost first): a new tuple, outermost first. */
static PyObject *ds_build(const struct fpy_frame_key *raw, size_t n, uint32_t limit)
{
	PyObject *items[DS_MAX_KEEP];
	PyObject *tuple;
	size_t kept = 0, i;

	for (i = 0; i < n && kept < limit; i++) {
		PyCodeObject *co = (PyCodeObject *)raw[i].code;
		Py_ssize_t flen;
		const char *file = PyUnicode_AsUTF8AndSize(co->co_filename, &flen);

		if (!file)
			goto fail_items;
		if (ds_skipped(file, (size_t)flen))
			continue;
		items[kept] = PyUnicode_FromFormat("%U:%d %U", co->co_filename,
						   DS_LINE(co, raw[i].pos), co->co_name);
		if (!items[kept])
			goto fail_items;
		kept++;
	}
	tuple = PyTuple_New((Py_ssize_t)kept);
	if (!tuple)
		goto fail_items;
	for (i = 0; i < kept; i++)
		PyTuple_SET_ITEM(tuple, (Py_ssize_t)i, items[kept - 1 - i]);
	return tuple;

fail_items:
	while (kept)
		Py_DECREF(items[--kept]);
	return NULL;
}

PyDoc_STRVAR(
	debug_stack_doc,
	"debug_stack(limit) -> tuple[str, ...]\n\n"
	"The calling thread's Python stack as \"file:line function\", outermost first: the\n"
	"`limit` (1 to 64) innermost frames whose file does not start with a prefix given to\n"
	"debug_stack_skip() (nor with '<'). Cached by the frames: the same call site gives the\n"
	"same tuple object.");

static PyObject *debug_stack(PyObject *module, PyObject *arg)
{
	long limit = PyLong_AsLong(arg);

	(void)module;
	if (limit == -1 && PyErr_Occurred())
		return NULL;
	return fpy_debug_stack(limit);
}

PyObject *fpy_debug_stack(long limit)
{
	struct fpy_frame_key raw[DS_MAX_WALK];
	struct fpy_fcache_entry *e;
	PyObject *stack;
	bool truncated;
	size_t n;
	uint64_t h;

	if (limit < 1 || limit > DS_MAX_KEEP) {
		PyErr_Format(PyExc_ValueError, "debug_stack: limit must be 1 to %d", DS_MAX_KEEP);
		return NULL;
	}
	/* Every frame on the chain is executing: its code object outlives this call. */
	n = fpy_frames_read(raw, DS_MAX_WALK, &truncated);
	h = fpy_fcache_hash(raw, n, (uint32_t)limit);
	e = fpy_fcache_find(&ds_cache, raw, n, (uint32_t)limit, h);
	if (!e)
		return NULL;
	if (e->keys) {
		ds_hits++;
		return Py_NewRef(e->obj);
	}
	ds_misses++;
	stack = ds_build(raw, n, (uint32_t)limit);
	if (!stack)
		return NULL;
	if (ds_cache.used >= DS_SLOTS / 2) {
		fpy_fcache_clear(&ds_cache);
		ds_resets++;
	}
	/* ds_build may have run Python code that changed the cache: choose the slot now */
	e = fpy_fcache_find(&ds_cache, raw, n, (uint32_t)limit, h);
	if (e)
		fpy_fcache_put(&ds_cache, e, raw, n, (uint32_t)limit, h, stack, 0);
	else
		PyErr_Clear(); /* no cache only costs speed */
	return stack;
}

PyDoc_STRVAR(
	debug_stack_skip_doc,
	"debug_stack_skip(prefixes)\n\n"
	"Frames whose file name starts with one of these strings (at most 32) are left out of\n"
	"debug_stack(). Replaces the previous list and forgets the cached stacks.");

static PyObject *debug_stack_skip(PyObject *module, PyObject *arg)
{
	int rc = fpy_prefixes_set(&ds_prefixes, arg, FPY_MAX_PREFIXES, "debug_stack_skip");

	(void)module;
	if (rc == -2)
		PyErr_Format(PyExc_ValueError, "debug_stack_skip: at most %d prefixes",
			     FPY_MAX_PREFIXES);
	if (rc)
		return NULL;
	fpy_fcache_clear(&ds_cache);
	Py_RETURN_NONE;
}

static PyObject *debug_stack_stats(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return Py_BuildValue("{sKsKsKsn}", "hits", (unsigned long long)ds_hits, "misses",
			     (unsigned long long)ds_misses, "resets", (unsigned long long)ds_resets,
			     "cached", (Py_ssize_t)ds_cache.used);
}

static PyMethodDef dbgstack_methods[] = {
	{"debug_stack", debug_stack, METH_O, debug_stack_doc},
	{"debug_stack_skip", debug_stack_skip, METH_O, debug_stack_skip_doc},
	{"debug_stack_stats", debug_stack_stats, METH_NOARGS,
	 "debug_stack_stats() -> dict: hits, misses, resets (the cache started over when full)\n"
	 "and cached (stacks held now)."},
	{NULL, NULL, 0, NULL},
};

int fpy_dbgstack_exec(PyObject *module)
{
	return PyModule_AddFunctions(module, dbgstack_methods);
}
