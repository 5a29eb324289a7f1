/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared declarations of the CPython extension `flagprism._ext`: the module state (the exception
 * types), the functions that turn a FlagPrism status into a Python exception, the few helpers
 * more than one part uses, and the list of "parts". A part is one file python/ext/<part>.c that
 * defines `int fpy_<part>_exec(PyObject *module)` and adds its functions and types to the
 * module; adding a part means writing that file and adding one word to FPY_PARTS. This header is
 * not a place for logic: the extension is a thin client of the public headers
 * (include/flagprism/) and never reaches into src/.
 * Include <Python.h> before this header.
 */
#ifndef FPY_EXT_H
#define FPY_EXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flagprism/status.h>

/* Every part of the module, in the order the exec slot runs them (one per line: clang-format
 * reflows a longer line differently on each run). */
#define FPY_PARTS(X)  \
	X(core)       \
	X(compat)     \
	X(debug)      \
	X(dbgstack)   \
	X(dbgscan)    \
	X(dbgdesc)    \
	X(dbgfast)    \
	X(devmem)     \
	X(prof)       \
	X(cupti)      \
	X(timeline)   \
	X(metrics)    \
	X(pcsampling) \
	X(dist)

#define FPY__DECLARE_PART(part) int fpy_##part##_exec(PyObject *module);
FPY_PARTS(FPY__DECLARE_PART)
#undef FPY__DECLARE_PART

/*
 * Per-module state (PEP 489): strong references to the exception types, so that each
 * (sub)interpreter that imports the module has its own. Owned by the module; module.c traverses
 * and clears it.
 */
struct fpy_state {
	PyObject *error;              /* flagprism._ext.Error(Exception): base of ours */
	PyObject *format_error;       /* FormatError(Error, ValueError): FP_EFORMAT, FP_EVERSION */
	PyObject *limit_error;        /* LimitError(Error): FP_ELIMIT */
	PyObject *overflow_error;     /* OverflowRecordsError(Error): FP_EOVERFLOW */
	PyObject *vendor_error;       /* VendorError(Error): FP_EVENDOR */
	PyObject *notsupported_error; /* NotSupportedError(Error): FP_ENOTSUP */
};

/** The state of `module` (an instance of flagprism._ext); NULL only before allocation. */
struct fpy_state *fpy_state(PyObject *module);

/** Create the exception types, store them in the state and add them to the module. 0 or -1. */
int fpy_errors_exec(PyObject *module);

/**
 * Set the Python exception for a failed FlagPrism call and return -1, so callers can write
 * `return fpy_raise(module, st, &diag);` in int-returning code, or call it and `return NULL`.
 *
 * `status` is a negative FP_E* code; `diag` (may be NULL) is the diagnostic the failing function
 * filled. The message is fp_strerror(status), then diag->msg, then the position ("line L, column
 * C" when diag->line is set, else "byte offset N" when diag->offset is non-zero). The instance
 * gets the attributes `status` (int), `status_name` (str), `detail` (diag->msg or None),
 * `offset` (int, or None without a diag), `line` and `column` (int, or None when 0).
 *
 * Mapping: FP_ENOMEM -> MemoryError, FP_EINVAL -> ValueError, FP_EIO and FP_ENOENT -> OSError,
 * FP_EFORMAT and FP_EVERSION -> FormatError, FP_ELIMIT -> LimitError, FP_EOVERFLOW ->
 * OverflowRecordsError, FP_EVENDOR -> VendorError, FP_ENOTSUP -> NotSupportedError, anything
 * else -> Error. A status >= 0 is a bug in the caller and raises SystemError. If a Python
 * exception is already set (e.g. raised by a callback), it becomes the new one's __cause__.
 */
int fpy_raise(PyObject *module, int status, const struct fp_diag *diag);

/** fpy_raise(), then NULL: for PyObject *-returning code (`return fpy_raise_null(...);`). */
PyObject *fpy_raise_null(PyObject *module, int status, const struct fp_diag *diag);

/**
 * Set dict[key] = value and drop the reference to `value` (a new reference, or NULL after a
 * failed constructor: then nothing is set). 0, or -1 with an exception set. For building result
 * dicts in one chain of `||`.
 */
int fpy_set_item(PyObject *dict, const char *key, PyObject *value);

/**
 * Part `prof`: the interned call-path id (fp_prof_callpath_intern()) of the Python code running
 * now, innermost frames nearest the launch, skipped prefixes left out, cached by code object and
 * line. For launch hooks (part `cupti` hands it to the CUPTI backend). FP_OK and *id; -1 with a
 * Python exception set, or another negative status. Needs the GIL.
 */
int fpy_prof_callpath_read(uint32_t *id);

/* One Python frame of the calling thread (frames.c): its code object (borrowed) and where it
 * is (3.11+: instruction offset in bytes, -1 before the first; before 3.11: the line). */
struct fpy_frame_key {
	PyObject *code;
	int pos;
};

/*
 * The calling thread's frames, innermost first, at most cap (*truncated then says that outer
 * ones were left out); the GIL must be held. Reads the interpreter's frame chain where this
 * Python's layout is known and checked, else walks the public API (frames.c).
 */
size_t fpy_frames_read(struct fpy_frame_key *out, size_t cap, bool *truncated);

/*
 * A bounded cache keyed by frames (framecache.c), for parts `prof` (call-path ids) and
 * `dbgstack` (formatted stacks). Zero-initialise with nslots (a power of two) set; at most half
 * the slots are ever filled. An entry's value is `obj` (a strong reference, or NULL) or `id`.
 */
struct fpy_fcache_entry {
	uint64_t hash;
	struct fpy_frame_key *keys; /* NULL: empty slot; code objects: strong references */
	uint32_t n;
	uint32_t tag; /* part of the key: the caller's (a limit, a truncation bit) */
	PyObject *obj;
	uint32_t id;
};

struct fpy_fcache {
	struct fpy_fcache_entry *slots; /* nslots entries, allocated on first find */
	size_t nslots;
	size_t used;
};

uint64_t fpy_fcache_hash(const struct fpy_frame_key *k, size_t n, uint32_t tag);

/* The entry of (k, n, tag), or the empty slot where it would go; NULL with MemoryError set
 * when the slots cannot be allocated. Valid until the next put or clear. */
struct fpy_fcache_entry *fpy_fcache_find(struct fpy_fcache *c, const struct fpy_frame_key *k,
					 size_t n, uint32_t tag, uint64_t h);

/* Fill `e`, an empty slot find just returned for the same key (find again if Python code ran
 * since): false, and nothing kept, when the cache is half full, n is 0 or memory ran out (a
 * miss costs only speed). */
bool fpy_fcache_put(struct fpy_fcache *c, struct fpy_fcache_entry *e, const struct fpy_frame_key *k,
		    size_t n, uint32_t tag, uint64_t h, PyObject *obj, uint32_t id);

/* Drop every entry and its references; the slots stay allocated. */
void fpy_fcache_clear(struct fpy_fcache *c);

/* File-name prefixes whose frames are left out (framecache.c). */
#define FPY_MAX_PREFIXES 32
#define FPY_MAX_PREFIX_LEN 4096

struct fpy_prefixes {
	char *s[FPY_MAX_PREFIXES];
	size_t len[FPY_MAX_PREFIXES];
	size_t n;
};

/* Replace the list with `arg`, a sequence of at most `max` str: 0; -1 with an exception set
 * (TypeError naming `who` for an item that is not a str of at most 4096 bytes); -2, nothing
 * set and the list unchanged, when there are more than `max`. */
int fpy_prefixes_set(struct fpy_prefixes *p, PyObject *arg, size_t max, const char *who);

/* Whether `file` starts with one of the prefixes. */
bool fpy_prefixes_match(const struct fpy_prefixes *p, const char *file, size_t len);

/* "interpreter" or "public", and why not the interpreter's chain (NULL when it is used). */
const char *fpy_frames_method(const char **why);

/* "auto" (check and use the interpreter's chain where possible) or "public": 0, else -1. */
int fpy_frames_select(const char *method);

struct fp_sink_metadata;

/**
 * Part `prof`: fill `md` from a launch_metadata dict (keys flops8/16/32/64 and bytes; absent or
 * None values are skipped, each given one sets its FP_SINK_MD_* flag). `dict` NULL or None leaves
 * md as it is. 0, or -1 with a TypeError (not a dict, or a value not a number). Needs the GIL.
 */
int fpy_prof_metadata_read(PyObject *dict, struct fp_sink_metadata *md);

/*
 * What part `dbgfast` (the Debugger's replayed launch) calls in the other debug parts, each as
 * the Python function of the same name does: debug_bind() and debug_scan_args() (part
 * `dbgscan`; METH_FASTCALL arguments), debug_stack() (part `dbgstack`; a new reference), and
 * the pipeline of a debug_pipe_new() capsule (part `debug`; NULL with TypeError set).
 */
PyObject *fpy_debug_bind(PyObject *const *argv, Py_ssize_t argc);
/* debug_scan_args(); `table` (NULL, or 4 zeroed words per parameter) gets the tensor-table
 * entries of the tensor arguments it describes (fpy_tensor_entry's, from the same reads). */
PyObject *fpy_debug_scan_args(PyObject *const *argv, Py_ssize_t argc, uint64_t *table);
/*
 * One entry of the record buffer's tensor table for a kernel argument `v`: its view's and its
 * storage's byte ranges (out[0..3]); 1 for a tensor with addresses, 0 when it is not one (the
 * entry stays zero), -1 with an exception set. A host TensorDescriptor stands for its base.
 */
int fpy_tensor_entry(PyObject *v, bool interp, uint64_t out[4]);
/* Store x little-endian at p. */
static inline void fpy_put_le64(unsigned char *p, uint64_t x)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(x >> (8 * i));
}
PyObject *fpy_debug_stack(long limit);
struct fp_dbg_pipe;
struct fp_dbg_pipe *fpy_debug_pipe(PyObject *capsule);

/* Reserve a slice of `bytes` in the pipeline, zero it and write `hdr` at its start on `stream`
 * (part `debug`; the GIL is released meanwhile): FP_OK and *off; FP_ELIMIT when it does not fit
 * the pool; another status with the slice given back. Needs the GIL on entry. */
int fpy_debug_pipe_reserve_prepare(struct fp_dbg_pipe *p, size_t bytes, const void *hdr,
				   size_t hdr_len, uint64_t stream, size_t *off,
				   struct fp_diag *diag);

/* x in decimal, without a terminator, into out (part `dbgscan`): its length. Written by hand:
 * snprintf costs more than the rest of a launch's argument scan. */
#define FPY_I64_CHARS 24
size_t fpy_fmt_u64(char out[FPY_I64_CHARS], unsigned long long x);
size_t fpy_fmt_i64(char out[FPY_I64_CHARS], long long x);

#endif /* FPY_EXT_H */
