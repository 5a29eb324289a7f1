// SPDX-License-Identifier: Apache-2.0
/*
 * Part `dbgstack`: the Python call stack of an instrumented launch, as the Debugger's reports
 * name it ("file:line function", outermost first, the innermost frames nearest the launch that
 * are not FlagPrism's, Triton's or a launching library's). A launch from the same place has the
 * same frames, so the formatted stack is cached by the frames themselves (code object and
 * instruction offset of each, frames.c): a launch costs one walk of the frame chain and a
 * lookup. Not here: which prefixes are skipped (the Debugger sets them), the report's other
 * fields.
 *
 * The cache holds strong references to the code objects of its keys (so an address is never
 * reused while it is a key) and to the formatted tuples; it is bounded and starts over when
 * full. The GIL is held throughout; building an entry may run the garbage collector (and so
 * Python code, which may launch kernels and come back here), so the entry is made before its
 * slot is chosen.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#include "ext.h"

#define DS_MAX_WALK 256     /* frames read per launch; deeper stacks are keyed by these */
#define DS_MAX_KEEP 64      /* frames kept in a stack */
#define DS_SLOTS 1024       /* cache slots (power of two) */
#define DS_MAX_PREFIXES 32
#define DS_MAX_PREFIX_LEN 4096

#if PY_VERSION_HEX >= 0x030B0000
#define DS_LINE(co, pos) ((pos) >= 0 ? PyCode_Addr2Line((co), (pos)) : (co)->co_firstlineno)
#else
#define DS_LINE(co, pos) (pos)
#endif

struct ds_entry {
	uint64_t hash;
	struct fpy_frame_key *keys; /* NULL: empty slot; code objects: strong references */
	uint32_t n;
	uint32_t limit;
	PyObject *stack; /* tuple of str */
};

static struct ds_entry *ds_cache;
static size_t ds_used;
static uint64_t ds_hits, ds_misses, ds_resets;
static char *ds_prefix[DS_MAX_PREFIXES];
static size_t ds_prefix_len[DS_MAX_PREFIXES];
static size_t ds_nprefix;

static uint64_t ds_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

static uint64_t ds_hash(const struct fpy_frame_key *k, size_t n, uint32_t limit)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)n << 32) ^ limit;
	size_t i;

	for (i = 0; i < n; i++)
		h = ds_mix(h ^ ((uint64_t)(uintptr_t)k[i].code + ((uint64_t)(unsigned)k[i].pos << 1)));
	return h;
}

static void ds_clear(void)
{
	size_t i, j;

	if (!ds_cache)
		return;
	for (i = 0; i < DS_SLOTS; i++) {
		struct ds_entry *e = &ds_cache[i];

		if (!e->keys)
			continue;
		for (j = 0; j < e->n; j++)
			Py_DECREF(e->keys[j].code);
		PyMem_Free(e->keys);
		Py_DECREF(e->stack);
		memset(e, 0, sizeof(*e));
	}
	ds_used = 0;
}

static bool ds_skipped(const char *file, size_t len)
{
	size_t i;

	if (len > 0 && file[0] == '<')
		return true; /* <string>, <frozen ...>: not a file the user can open */
	for (i = 0; i < ds_nprefix; i++)
		if (len >= ds_prefix_len[i] && memcmp(file, ds_prefix[i], ds_prefix_len[i]) == 0)
			return true;
	return false;
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
			goto fail;
		if (ds_skipped(file, (size_t)flen))
			continue;
		items[kept] = PyUnicode_FromFormat("%U:%d %U", co->co_filename, DS_LINE(co, raw[i].pos),
						   co->co_name);
		if (!items[kept])
			goto fail;
		kept++;
	}
	tuple = PyTuple_New((Py_ssize_t)kept);
	if (!tuple)
		goto fail;
	for (i = 0; i < kept; i++)
		PyTuple_SET_ITEM(tuple, (Py_ssize_t)i, items[kept - 1 - i]);
	return tuple;

fail:
	while (kept)
		Py_DECREF(items[--kept]);
	return NULL;
}

static struct ds_entry *ds_find(const struct fpy_frame_key *raw, size_t n, uint32_t limit,
				uint64_t h)
{
	size_t slot;

	for (slot = (size_t)h & (DS_SLOTS - 1);; slot = (slot + 1) & (DS_SLOTS - 1)) {
		struct ds_entry *e = &ds_cache[slot];

		if (!e->keys)
			return e;
		if (e->hash == h && e->n == n && e->limit == limit) {
			size_t i;

			for (i = 0; i < n; i++)
				if (e->keys[i].code != raw[i].code || e->keys[i].pos != raw[i].pos)
					break;
			if (i == n)
				return e;
		}
	}
}

PyDoc_STRVAR(debug_stack_doc,
	     "debug_stack(limit) -> tuple[str, ...]\n\n"
	     "The calling thread's Python stack as \"file:line function\", outermost first: the\n"
	     "`limit` (1 to 64) innermost frames whose file does not start with a prefix given to\n"
	     "debug_stack_skip() (nor with '<'). Cached by the frames: the same call site gives the\n"
	     "same tuple object.");

static PyObject *debug_stack(PyObject *module, PyObject *arg)
{
	struct fpy_frame_key raw[DS_MAX_WALK];
	struct ds_entry *e;
	PyObject *stack;
	bool truncated;
	long limit = PyLong_AsLong(arg);
	size_t n, i;
	uint64_t h;

	(void)module;
	if (limit == -1 && PyErr_Occurred())
		return NULL;
	if (limit < 1 || limit > DS_MAX_KEEP) {
		PyErr_Format(PyExc_ValueError, "debug_stack: limit must be 1 to %d", DS_MAX_KEEP);
		return NULL;
	}
	if (!ds_cache) {
		ds_cache = PyMem_Calloc(DS_SLOTS, sizeof(*ds_cache));
		if (!ds_cache)
			return PyErr_NoMemory();
	}
	/* Every frame on the chain is executing: its code object outlives this call. */
	n = fpy_frames_read(raw, DS_MAX_WALK, &truncated);
	h = ds_hash(raw, n, (uint32_t)limit);
	e = ds_find(raw, n, (uint32_t)limit, h);
	if (e->keys) {
		ds_hits++;
		return Py_NewRef(e->stack);
	}
	ds_misses++;
	stack = ds_build(raw, n, (uint32_t)limit);
	if (!stack)
		return NULL;
	if (ds_used >= DS_SLOTS / 2) {
		ds_clear();
		ds_resets++;
	}
	/* ds_build may have run Python code that changed the cache: choose the slot now */
	e = ds_find(raw, n, (uint32_t)limit, h);
	if (!e->keys && n > 0) {
		struct fpy_frame_key *copy = PyMem_Malloc(n * sizeof(*copy));

		if (copy) { /* out of memory only costs speed */
			for (i = 0; i < n; i++) {
				copy[i] = raw[i];
				Py_INCREF(copy[i].code);
			}
			e->hash = h;
			e->keys = copy;
			e->n = (uint32_t)n;
			e->limit = (uint32_t)limit;
			e->stack = Py_NewRef(stack);
			ds_used++;
		}
	}
	return stack;
}

PyDoc_STRVAR(debug_stack_skip_doc,
	     "debug_stack_skip(prefixes)\n\n"
	     "Frames whose file name starts with one of these strings (at most 32) are left out of\n"
	     "debug_stack(). Replaces the previous list and forgets the cached stacks.");

static PyObject *debug_stack_skip(PyObject *module, PyObject *arg)
{
	char *copy[DS_MAX_PREFIXES];
	size_t lens[DS_MAX_PREFIXES];
	PyObject *seq = PySequence_Fast(arg, "prefixes must be a sequence of str");
	Py_ssize_t n, i;
	size_t k;

	(void)module;
	if (!seq)
		return NULL;
	n = PySequence_Fast_GET_SIZE(seq);
	if (n > DS_MAX_PREFIXES) {
		Py_DECREF(seq);
		PyErr_Format(PyExc_ValueError, "debug_stack_skip: at most %d prefixes", DS_MAX_PREFIXES);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		Py_ssize_t len;
		const char *s = PyUnicode_Check(PySequence_Fast_GET_ITEM(seq, i)) ?
					PyUnicode_AsUTF8AndSize(PySequence_Fast_GET_ITEM(seq, i), &len) :
					NULL;

		if (!s || len > DS_MAX_PREFIX_LEN) {
			if (!PyErr_Occurred())
				PyErr_SetString(PyExc_TypeError,
						"debug_stack_skip: prefixes must be str of at most 4096 "
						"bytes");
			goto fail;
		}
		copy[i] = PyMem_Malloc((size_t)len + 1);
		if (!copy[i]) {
			PyErr_NoMemory();
			goto fail;
		}
		memcpy(copy[i], s, (size_t)len + 1);
		lens[i] = (size_t)len;
	}
	Py_DECREF(seq);
	for (k = 0; k < ds_nprefix; k++)
		PyMem_Free(ds_prefix[k]);
	for (k = 0; k < (size_t)n; k++) {
		ds_prefix[k] = copy[k];
		ds_prefix_len[k] = lens[k];
	}
	ds_nprefix = (size_t)n;
	ds_clear();
	Py_RETURN_NONE;

fail:
	while (i > 0)
		PyMem_Free(copy[--i]);
	Py_DECREF(seq);
	return NULL;
}

static PyObject *debug_stack_stats(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return Py_BuildValue("{sKsKsKsn}", "hits", (unsigned long long)ds_hits, "misses",
			     (unsigned long long)ds_misses, "resets", (unsigned long long)ds_resets,
			     "cached", (Py_ssize_t)ds_used);
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
