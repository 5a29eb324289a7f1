// SPDX-License-Identifier: Apache-2.0
/*
 * What parts `prof` and `dbgstack` both need to turn the calling thread's frames (frames.c) into
 * something cheap per launch: a bounded cache keyed by the frames themselves (code object and
 * instruction offset of each, plus a small tag of the caller's), and a list of file-name
 * prefixes whose frames are left out. A launch from the same place has the same frames, so a
 * call site costs one walk and one probe; what is built from the frames (a call-path id, a
 * formatted stack) is built on a miss only. Not here: what is built, and when to look.
 *
 * Keys hold strong references to their code objects, so that an address is never reused while
 * it is a key; a value that is an object is a strong reference too. The GIL is held throughout.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#include "ext.h"

static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

uint64_t fpy_fcache_hash(const struct fpy_frame_key *k, size_t n, uint32_t tag)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)n << 32) ^ tag;
	size_t i;

	for (i = 0; i < n; i++)
		h = mix64(h ^
			  ((uint64_t)(uintptr_t)k[i].code + ((uint64_t)(unsigned)k[i].pos << 1)));
	return h;
}

struct fpy_fcache_entry *fpy_fcache_find(struct fpy_fcache *c, const struct fpy_frame_key *k,
					 size_t n, uint32_t tag, uint64_t h)
{
	size_t mask = c->nslots - 1, slot;

	if (!c->slots) {
		c->slots = PyMem_Calloc(c->nslots, sizeof(*c->slots));
		if (!c->slots) {
			PyErr_NoMemory();
			return NULL;
		}
	}
	/* at most half the slots are filled (fpy_fcache_put), so an empty one ends every probe */
	for (slot = (size_t)h & mask;; slot = (slot + 1) & mask) {
		struct fpy_fcache_entry *e = &c->slots[slot];
		size_t i;

		if (!e->keys)
			return e;
		if (e->hash != h || e->n != n || e->tag != tag)
			continue;
		for (i = 0; i < n; i++)
			if (e->keys[i].code != k[i].code || e->keys[i].pos != k[i].pos)
				break;
		if (i == n)
			return e;
	}
}

bool fpy_fcache_put(struct fpy_fcache *c, struct fpy_fcache_entry *e, const struct fpy_frame_key *k,
		    size_t n, uint32_t tag, uint64_t h, PyObject *obj, uint32_t id)
{
	struct fpy_frame_key *copy;
	size_t i;

	if (e->keys || n == 0 || c->used >= c->nslots / 2)
		return false;
	copy = PyMem_Malloc(n * sizeof(*copy));
	if (!copy)
		return false; /* out of memory only costs speed */
	for (i = 0; i < n; i++) {
		copy[i] = k[i];
		Py_INCREF(copy[i].code);
	}
	e->hash = h;
	e->keys = copy;
	e->n = (uint32_t)n;
	e->tag = tag;
	e->obj = Py_XNewRef(obj);
	e->id = id;
	c->used++;
	return true;
}

void fpy_fcache_clear(struct fpy_fcache *c)
{
	size_t i, j;

	if (!c->slots)
		return;
	for (i = 0; i < c->nslots; i++) {
		struct fpy_fcache_entry *e = &c->slots[i];

		if (!e->keys)
			continue;
		for (j = 0; j < e->n; j++)
			Py_DECREF(e->keys[j].code);
		PyMem_Free(e->keys);
		Py_XDECREF(e->obj);
		memset(e, 0, sizeof(*e));
	}
	c->used = 0;
}

int fpy_prefixes_set(struct fpy_prefixes *p, PyObject *arg, size_t max, const char *who)
{
	char *copy[FPY_MAX_PREFIXES];
	size_t lens[FPY_MAX_PREFIXES];
	PyObject *seq = PySequence_Fast(arg, "prefixes must be a sequence of str");
	Py_ssize_t n, i = 0;
	size_t k;

	if (!seq)
		return -1;
	if (max > FPY_MAX_PREFIXES)
		max = FPY_MAX_PREFIXES;
	n = PySequence_Fast_GET_SIZE(seq);
	if ((size_t)n > max) {
		Py_DECREF(seq);
		return -2;
	}
	for (i = 0; i < n; i++) {
		PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
		Py_ssize_t len = 0;
		const char *s = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, &len) : NULL;

		if (!s || len > FPY_MAX_PREFIX_LEN) {
			if (!PyErr_Occurred())
				PyErr_Format(PyExc_TypeError,
					     "%s: prefixes must be str of at most %d bytes", who,
					     FPY_MAX_PREFIX_LEN);
			goto fail_copy;
		}
		copy[i] = PyMem_Malloc((size_t)len + 1);
		if (!copy[i]) {
			PyErr_NoMemory();
			goto fail_copy;
		}
		memcpy(copy[i], s, (size_t)len + 1);
		lens[i] = (size_t)len;
	}
	Py_DECREF(seq);
	for (k = 0; k < p->n; k++)
		PyMem_Free(p->s[k]);
	for (k = 0; k < (size_t)n; k++) {
		p->s[k] = copy[k];
		p->len[k] = lens[k];
	}
	p->n = (size_t)n;
	return 0;

fail_copy:
	while (i > 0)
		PyMem_Free(copy[--i]);
	Py_DECREF(seq);
	return -1;
}

bool fpy_prefixes_match(const struct fpy_prefixes *p, const char *file, size_t len)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (len >= p->len[i] && memcmp(file, p->s[i], p->len[i]) == 0)
			return true;
	return false;
}
