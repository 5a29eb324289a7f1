// SPDX-License-Identifier: Apache-2.0
/*
 * The calling thread's Python frames, innermost first, as (code object, instruction offset)
 * pairs: what part `prof` keys its call-path cache with (prof.c), at every launch of a Python
 * context session.
 *
 * The public API (PyEval_GetFrame, PyFrame_GetBack) creates a frame object for every frame
 * that has none yet. At a Triton launch those are Triton's own frames (HookChain.__call__,
 * JITFunction.run, the launcher lambda), new at every launch, so the public walk allocates and
 * frees three objects per launch. On CPython 3.11 to 3.13 (with the GIL) this file reads the
 * interpreter's frame chain instead, through its internal frame header: the code object, the
 * previous frame and the instruction pointer of each frame, creating nothing. The two walks
 * skip the same frames (incomplete ones, and the C-stack entry frames of 3.12+), and their
 * results are compared once per process on a real stack before the fast one is trusted; any
 * difference, another version or FLAGPRISM_PY_FRAMES=public selects the public walk.
 *
 * Both run with the GIL held and call no Python code: the chain cannot change under them, and
 * every frame on it holds its code object, so the returned pointers are valid until the caller
 * returns to Python (the cache that keeps them takes its own references).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

#include <stdlib.h>
#include <string.h>

#include "ext.h"

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030E0000 && !defined(Py_GIL_DISABLED) && \
	!defined(Py_LIMITED_API)
#define FPY_FAST_FRAMES 1
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE
#else
#define FPY_FAST_FRAMES 0
#endif

/* Where a frame is: the instruction offset in bytes (3.11+), or the line before 3.11. */
#if PY_VERSION_HEX >= 0x030B0000
#define FRAME_POS(f) PyFrame_GetLasti(f)
#else
#define FRAME_POS(f) PyFrame_GetLineNumber(f)
#endif

enum {
	FAST_UNCHECKED,
	FAST_ON,
	FAST_OFF
};

/* Before the first read: check on first use where the layout is known, else the public API. */
#define FAST_INITIAL (FPY_FAST_FRAMES ? FAST_UNCHECKED : FAST_OFF)
#define FAST_INITIAL_WHY \
	(FPY_FAST_FRAMES ? "not checked yet" : "this Python has no known frame layout")

static int fast_state = FAST_INITIAL;
static const char *fast_why = FAST_INITIAL_WHY;

static size_t walk_public(struct fpy_frame_key *out, size_t cap, bool *truncated)
{
	PyFrameObject *f = PyEval_GetFrame();
	size_t n = 0;

	*truncated = false;
	Py_XINCREF(f);
	while (f) {
		PyFrameObject *back;
		PyCodeObject *co;

		if (n == cap) {
			*truncated = true;
			Py_DECREF(f);
			break;
		}
		co = PyFrame_GetCode(f);
		out[n].code = (PyObject *)co;
		out[n].pos = FRAME_POS(f);
		Py_DECREF(co);
		n++;
		back = PyFrame_GetBack(f);
		Py_DECREF(f);
		f = back;
	}
	return n;
}

#if FPY_FAST_FRAMES

#if PY_VERSION_HEX >= 0x030D0000
#define TOP_FRAME(ts) ((ts)->current_frame)
#define FRAME_CODE(fr) ((PyObject *)_PyFrame_GetCode(fr))
#else
#define TOP_FRAME(ts) ((ts)->cframe->current_frame)
#define FRAME_CODE(fr) ((PyObject *)(fr)->f_code)
#endif

/* The frames the public API shows: complete ones, not the C-stack entry frames (3.12+). */
static bool frame_shown(_PyInterpreterFrame *fr)
{
#if PY_VERSION_HEX >= 0x030C0000
	if (fr->owner == FRAME_OWNED_BY_CSTACK)
		return false;
#endif
	return !_PyFrame_IsIncomplete(fr);
}

static size_t walk_fast(struct fpy_frame_key *out, size_t cap, bool *truncated)
{
	PyThreadState *ts = PyThreadState_Get();
	_PyInterpreterFrame *fr = TOP_FRAME(ts);
	size_t n = 0;

	*truncated = false;
	for (; fr; fr = fr->previous) {
		int lasti;

		if (!frame_shown(fr))
			continue;
		if (n == cap) {
			*truncated = true;
			break;
		}
		lasti = _PyInterpreterFrame_LASTI(fr);
		out[n].code = FRAME_CODE(fr);
		out[n].pos = lasti < 0 ? -1 : lasti * (int)sizeof(_Py_CODEUNIT);
		n++;
	}
	return n;
}

/* Both walks on the caller's stack: the fast one is used only if they agree frame for frame. */
static void fast_check(void)
{
	struct fpy_frame_key a[64], b[64];
	bool ta, tb;
	size_t na = walk_public(a, 64, &ta);
	size_t nb = walk_fast(b, 64, &tb);
	bool same = na == nb && ta == tb;
	size_t i;

	for (i = 0; same && i < na; i++)
		same = a[i].code == b[i].code && a[i].pos == b[i].pos;
	fast_state = same ? FAST_ON : FAST_OFF;
	fast_why = same ? NULL : "the interpreter's frame chain differs from the public API's";
}

#endif /* FPY_FAST_FRAMES */

static void fast_decide(void)
{
	const char *env = getenv("FLAGPRISM_PY_FRAMES");

	if (env && strcmp(env, "public") == 0) {
		fast_state = FAST_OFF;
		fast_why = "FLAGPRISM_PY_FRAMES=public";
		return;
	}
#if FPY_FAST_FRAMES
	fast_check();
#endif
}

size_t fpy_frames_read(struct fpy_frame_key *out, size_t cap, bool *truncated)
{
	if (fast_state == FAST_UNCHECKED)
		fast_decide();
#if FPY_FAST_FRAMES
	if (fast_state == FAST_ON)
		return walk_fast(out, cap, truncated);
#endif
	return walk_public(out, cap, truncated);
}

const char *fpy_frames_method(const char **why)
{
	if (fast_state == FAST_UNCHECKED)
		fast_decide();
	*why = fast_why;
	return fast_state == FAST_ON ? "interpreter" : "public";
}

int fpy_frames_select(const char *method)
{
	if (strcmp(method, "public") == 0) {
		fast_state = FAST_OFF;
		fast_why = "selected";
		return 0;
	}
	if (strcmp(method, "auto") == 0) {
		fast_state = FAST_INITIAL;
		fast_why = FAST_INITIAL_WHY;
		return 0;
	}
	return -1;
}
