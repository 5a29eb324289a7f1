// SPDX-License-Identifier: Apache-2.0
/*
 * Part `dbgfast`: the Debugger's replayed launch. Once a kernel's launch has gone through the
 * whole Python path (python/flagprism/debugger.py, _instrumented) and left behind what its
 * specialization, sizing and compiled twin decided (python/flagprism/_replay.py: the typed
 * descriptions ReplayKernel, ReplayPlan and ReplaySizing of part dbgdesc), a later launch with
 * the same specialization and sizing is done here in one call, in steps: bind and scan the
 * arguments (fl_bind_scan), find the plan and sizing (fl_find), size the record buffer and write
 * its header (fl_size: the library's fp_dbg_buffer_layout, as the Python path sizes it), check
 * the direct launch's guards (fl_guards), describe the launch (fl_describe: its launch JSON and
 * run dict), launch the compiled twin through Triton's launcher in the pipeline's pool
 * (fl_launch) and hand it to the pipeline (fl_submit). What Python did in about forty steps per
 * launch is one crossing.
 *
 * Everything that is decided beyond this launch's own values comes from Python (templates,
 * constants, the guards' expected values): nothing here decides what a launch means, it only
 * repeats what the Python path did for the same decisions. Where anything differs from what
 * the descriptions expect (another specialization or sizing, a changed global, another device, a
 * launch hook that needs the buffer as a tensor, a pool too full), it returns None before doing
 * anything, and the caller takes the Python path.
 *
 * The GIL is held throughout, except while the pipeline reserves, prepares and submits.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <flagprism/debug-pipe.h>
#include <flagprism/debug.h>
#include <flagprism/status.h>

#include "ext.h"
#include "dbgdesc.h"

/* The check area's words before the tensor table, and the parameters whose table entries the
 * argument scan makes on its way (more: the header asks each argument again). */
#define TABLE_AT (FP_DBG_HEADER_WORDS + FP_DBG_EXT_WORDS)
#define SCAN_TABLE_PARAMS 32

static PyObject *s_fast, *s_runtime, *s_compilation, *s_debug, *s_instr, *s_enter, *s_exit,
	*s_launch_metadata, *s_jit_run, *s_debugger, *s_value, *s_run_index, *s_grid, *s_programs,
	*s_paths, *s_num_warps, *s_registers, *s_slots_pp, *s_dump_words;

/* Counters of _plans.counters this path adds to, in this order. */
static const char *const counter_names[] = {"plan_hits",        "sizing_hits",
					    "registers_reused", "direct_launches",
					    "originals_reused", "fast_launches"};
#define N_COUNTERS (sizeof(counter_names) / sizeof(counter_names[0]))
static PyObject *s_counters[N_COUNTERS];
static PyObject *one;

static int intern_all(void)
{
	struct {
		PyObject **slot;
		const char *name;
	} names[] = {{&s_fast, "fast"},
		     {&s_runtime, "runtime"},
		     {&s_compilation, "compilation"},
		     {&s_debug, "debug"},
		     {&s_instr, "instrumentation_mode"},
		     {&s_enter, "launch_enter_hook"},
		     {&s_exit, "launch_exit_hook"},
		     {&s_launch_metadata, "launch_metadata"},
		     {&s_jit_run, "jit.run"},
		     {&s_debugger, "debugger"},
		     {&s_value, "value"},
		     {&s_run_index, "run_index"},
		     {&s_grid, "grid"},
		     {&s_programs, "programs"},
		     {&s_paths, "paths"},
		     {&s_num_warps, "num_warps"},
		     {&s_registers, "registers"},
		     {&s_slots_pp, "slots_per_program"},
		     {&s_dump_words, "dump_capacity_words"}};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!*names[i].slot &&
		    !(*names[i].slot = PyUnicode_InternFromString(names[i].name)))
			return -1;
	for (i = 0; i < N_COUNTERS; i++)
		if (!s_counters[i] &&
		    !(s_counters[i] = PyUnicode_InternFromString(counter_names[i])))
			return -1;
	if (!one && !(one = PyLong_FromLong(1)))
		return -1;
	return 0;
}

/* getattr(obj, name, None) as 0 and *out (NULL when absent), or -1 with an exception. */
static int getattr_opt(PyObject *obj, PyObject *name, PyObject **out)
{
	*out = PyObject_GetAttr(obj, name);
	if (*out)
		return 0;
	if (!PyErr_ExceptionMatches(PyExc_AttributeError))
		return -1;
	PyErr_Clear();
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* A growing text buffer (the launch JSON)                                                    */
/* ------------------------------------------------------------------------------------------ */

struct tb {
	char *p;
	size_t len, cap;
	bool oom;
};

static void tb_put(struct tb *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (n > b->cap - b->len) {
		size_t want = b->cap ? b->cap : 1024;
		char *q;

		while (want - b->len < n) {
			if (want > ((size_t)PY_SSIZE_T_MAX) / 2) {
				b->oom = true;
				return;
			}
			want *= 2;
		}
		q = PyMem_Realloc(b->p, want);
		if (!q) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = want;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

#define TB_LIT(b, lit) tb_put((b), (lit), sizeof(lit) - 1)

static void tb_i64(struct tb *b, long long x)
{
	char tmp[FPY_I64_CHARS];

	tb_put(b, tmp, fpy_fmt_i64(tmp, x));
}

/* Append a str's UTF-8; -1 with an exception set when it is not a str. */
static int tb_str(struct tb *b, PyObject *s)
{
	Py_ssize_t n;
	const char *u;

	if (!PyUnicode_Check(s)) {
		PyErr_SetString(PyExc_TypeError, "debug_fast_launch: a template is not a str");
		return -1;
	}
	u = PyUnicode_AsUTF8AndSize(s, &n);
	if (!u)
		return -1;
	tb_put(b, u, (size_t)n);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* The clock and the stack, as _dbgexport formats them                                        */
/* ------------------------------------------------------------------------------------------ */

/* _dbgexport._now(): (compact UTC stamp, ISO timestamp) of a second. */
static int fmt_stamp(long long sec, char stamp[32], char iso[40])
{
	time_t t = (time_t)sec;
	struct tm tm;

	if (!gmtime_r(&t, &tm))
		return -1;
	if (!strftime(stamp, 32, "%Y%m%dT%H%M%SZ", &tm) ||
	    !strftime(iso, 40, "%Y-%m-%dT%H:%M:%S+00:00", &tm))
		return -1;
	return 0;
}

static long long clock_sec = LLONG_MIN;
static char clock_stamp[32], clock_iso[40];

static int clock_now(void)
{
	long long sec = (long long)time(NULL);

	if (sec != clock_sec) {
		if (fmt_stamp(sec, clock_stamp, clock_iso))
			return -1;
		clock_sec = sec;
	}
	return 0;
}

/* The stack's JSON: the extension's stack tuples come back the same object for the same call
 * site (part dbgstack), so their JSON text is kept by the tuple's identity, made by json.dumps
 * (the strings are escaped exactly as the Python path escapes them). */
#define STACK_MEMO 64
static struct {
	PyObject *stack, *json; /* strong references */
} stack_memo[STACK_MEMO];
static unsigned stack_next;

static PyObject *stack_json(PyObject *stack, PyObject *dumps)
{
	PyObject *j;
	unsigned i;

	for (i = 0; i < STACK_MEMO; i++)
		if (stack_memo[i].stack == stack)
			return Py_NewRef(stack_memo[i].json);
	j = PyObject_CallOneArg(dumps, stack);
	if (!j)
		return NULL;
	if (!PyUnicode_Check(j)) {
		Py_DECREF(j);
		PyErr_SetString(PyExc_TypeError, "debug_fast_launch: json.dumps gave no str");
		return NULL;
	}
	i = stack_next++ % STACK_MEMO;
	Py_XSETREF(stack_memo[i].stack, Py_NewRef(stack));
	Py_XSETREF(stack_memo[i].json, Py_NewRef(j));
	return j;
}

/* ------------------------------------------------------------------------------------------ */
/* The launch JSON                                                                            */
/* ------------------------------------------------------------------------------------------ */

/* What _dbgexport.launch_json() writes for a launch with no error, from the descriptions'
 * templates and this launch's values. 0, or -1 with an exception set. */
static int launch_json(struct tb *b, const struct fpy_replay_kernel *K,
		       const struct fpy_replay_plan *P, const struct fpy_replay_sizing *S,
		       const long long g[3], long long index, long long slots, PyObject *stackj,
		       PyObject *testj, PyObject *dyn, const char *stamp, const char *iso)
{
	PyObject *tpl = P->args_tpl;
	Py_ssize_t n, i;

	if (!PyList_Check(dyn)) {
		PyErr_SetString(PyExc_TypeError, "debug_fast_launch: bad argument scan");
		return -1;
	}
	TB_LIT(b, "{");
	if (tb_str(b, K->constant_part))
		return -1;
	TB_LIT(b, ", \"grid\": [");
	tb_i64(b, g[0]);
	TB_LIT(b, ", ");
	tb_i64(b, g[1]);
	TB_LIT(b, ", ");
	tb_i64(b, g[2]);
	TB_LIT(b, "], \"timestamp\": \"");
	tb_put(b, iso, strlen(iso));
	TB_LIT(b, "\", \"run_index\": ");
	tb_i64(b, index);
	TB_LIT(b, ", \"run\": ");
	tb_i64(b, index);
	TB_LIT(b, ", ");
	if (tb_str(b, K->stem))
		return -1;
	tb_put(b, stamp, strlen(stamp));
	TB_LIT(b, "_run");
	tb_i64(b, index);
	TB_LIT(b, "\"");
	if (tb_str(b, S->json_mid_a))
		return -1;
	tb_i64(b, slots);
	if (tb_str(b, S->json_mid_b) || tb_str(b, stackj))
		return -1;
	TB_LIT(b, ", \"test\": ");
	if (tb_str(b, testj))
		return -1;
	TB_LIT(b, ", \"error\": null, \"args\": [");
	n = PyTuple_GET_SIZE(tpl) < PyList_GET_SIZE(dyn) ? PyTuple_GET_SIZE(tpl) :
							   PyList_GET_SIZE(dyn);
	for (i = 0; i < n; i++) {
		if (i)
			TB_LIT(b, ", ");
		if (tb_str(b, PyTuple_GET_ITEM(tpl, i)) || tb_str(b, PyList_GET_ITEM(dyn, i)))
			return -1;
	}
	TB_LIT(b, "]");
	if (tb_str(b, S->json_tail))
		return -1;
	if (b->oom) {
		PyErr_NoMemory();
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Helpers                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* An int item as long long; -1 with an exception set when it is not one (or too large). */
static int get_ll(PyObject *o, long long *out)
{
	int ovf = 0;
	long long v = PyLong_AsLongLongAndOverflow(o, &ovf);

	if (v == -1 && PyErr_Occurred())
		return -1;
	if (ovf) {
		PyErr_SetString(PyExc_OverflowError, "debug_fast_launch: an int is out of range");
		return -1;
	}
	*out = v;
	return 0;
}

static int bump(PyObject *counters, PyObject *name)
{
	PyObject *v = PyDict_GetItemWithError(counters, name), *w;
	int rc;

	if (!v)
		return PyErr_Occurred() ? -1 : 0;
	w = PyNumber_Add(v, one);
	if (!w)
		return -1;
	rc = PyDict_SetItem(counters, name, w);
	Py_DECREF(w);
	return rc;
}

/* _plans._sizing_key(): per sizing parameter (class, value) for bool/int/float, else the
 * class; a constexpr wrapper's value first. NULL with an exception set. */
static PyObject *sizing_key(PyObject *params, PyObject *bound, PyObject *cx)
{
	Py_ssize_t n = PyTuple_GET_SIZE(params), i;
	PyObject *key = PyTuple_New(n);

	if (!key)
		return NULL;
	for (i = 0; i < n; i++) {
		PyObject *v = PyDict_GetItemWithError(bound, PyTuple_GET_ITEM(params, i)), *item;

		if (!v) {
			if (!PyErr_Occurred())
				PyErr_SetString(
					PyExc_KeyError,
					"debug_fast_launch: a sizing parameter is not bound");
			goto fail_item;
		}
		Py_INCREF(v);
		if (PyObject_TypeCheck(v, (PyTypeObject *)cx)) {
			Py_SETREF(v, PyObject_GetAttr(v, s_value));
			if (!v)
				goto fail_item;
		}
		if (PyBool_Check(v) || PyLong_Check(v) || PyFloat_Check(v))
			item = PyTuple_Pack(2, (PyObject *)Py_TYPE(v), v);
		else
			item = Py_NewRef((PyObject *)Py_TYPE(v));
		Py_DECREF(v);
		if (!item)
			goto fail_item;
		PyTuple_SET_ITEM(key, i, item);
	}
	return key;
fail_item:
	Py_DECREF(key);
	return NULL;
}

/* _launch.eval_grid(): 0 and g, 1 (no exception) when the grid is not what it should be (the
 * Python path then says why), -1 with an exception the grid function raised. */
static int eval_grid(PyObject *grid, PyObject *bound, long long g[3])
{
	PyObject *v, *seq;
	Py_ssize_t n, i;
	int rc = 1;

	if (PyCallable_Check(grid)) {
		v = PyObject_CallOneArg(grid, bound);
		if (!v)
			return -1;
	} else {
		v = Py_NewRef(grid);
	}
	g[0] = g[1] = g[2] = 1;
	if (PyLong_Check(v)) {
		rc = get_ll(v, &g[0]) ? 1 : 0;
		goto out;
	}
	if (!PyTuple_Check(v) && !PyList_Check(v))
		goto out; /* other kinds: the Python path */
	seq = v;
	n = PySequence_Fast_GET_SIZE(seq);
	if (n < 1 || n > 3)
		goto out;
	for (i = 0; i < n; i++) {
		/* int(x) on the Python path; an integer-like (a NumPy integer) through __index__,
		 * anything else goes there */
		PyObject *x = PyNumber_Index(PySequence_Fast_GET_ITEM(seq, i));
		int bad = !x || get_ll(x, &g[i]);

		Py_XDECREF(x);
		if (bad)
			goto out;
	}
	rc = 0;
out:
	Py_DECREF(v);
	if (rc == 1)
		PyErr_Clear();
	return rc;
}

/* Whether the direct launch of S may be taken now (_plans._direct's checks): 1 yes, 0 no
 * (the Python path), -1 with an exception. *enter, *exit: Triton's launch hooks (new). */
static int guards(const struct fpy_replay_sizing *S, PyObject *only, PyObject **enter,
		  PyObject **exitp)
{
	PyObject *argv[2] = {s_jit_run, s_debugger};
	PyObject *r, *rt = NULL, *comp = NULL, *m0 = NULL, *m1 = NULL;
	Py_ssize_t i;
	int ok;

	*enter = *exitp = NULL;
	r = PyObject_Vectorcall(only, argv, 2, NULL);
	if (!r)
		return -1;
	ok = PyObject_IsTrue(r);
	Py_DECREF(r);
	if (ok <= 0)
		return ok;
	r = PyObject_CallNoArgs(S->get_device);
	if (!r)
		return -1;
	ok = PyObject_RichCompareBool(r, S->device, Py_EQ);
	Py_DECREF(r);
	if (ok <= 0)
		return ok;
	if (PyTuple_GET_SIZE(S->modes) != 2) {
		PyErr_SetString(PyExc_TypeError, "debug_fast_launch: bad guards");
		return -1;
	}
	for (i = 0; i < PyTuple_GET_SIZE(S->globals); i++) {
		PyObject *e = PyTuple_GET_ITEM(S->globals, i), *cur;

		if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 3 ||
		    !PyDict_Check(PyTuple_GET_ITEM(e, 2)))
			return 0;
		cur = PyDict_GetItemWithError(PyTuple_GET_ITEM(e, 2), PyTuple_GET_ITEM(e, 0));
		if (!cur)
			return PyErr_Occurred() ? -1 : 0;
		Py_INCREF(cur);
		ok = PyObject_RichCompareBool(cur, PyTuple_GET_ITEM(e, 1), Py_NE);
		Py_DECREF(cur);
		if (ok)
			return ok < 0 ? -1 : 0;
	}
	/* _plans._modes(): (knobs.runtime.debug, knobs.compilation.instrumentation_mode) */
	rt = PyObject_GetAttr(S->knobs, s_runtime);
	if (!rt)
		return -1;
	ok = -1;
	if (!(m0 = PyObject_GetAttr(rt, s_debug)))
		goto out;
	if (getattr_opt(S->knobs, s_compilation, &comp) < 0)
		goto out;
	if (comp && getattr_opt(comp, s_instr, &m1) < 0)
		goto out;
	if (!m1)
		m1 = Py_NewRef(Py_None);
	ok = PyObject_RichCompareBool(m0, PyTuple_GET_ITEM(S->modes, 0), Py_EQ);
	if (ok == 1)
		ok = PyObject_RichCompareBool(m1, PyTuple_GET_ITEM(S->modes, 1), Py_EQ);
	if (ok != 1)
		goto out;
	if (!(*enter = PyObject_GetAttr(rt, s_enter)) || !(*exitp = PyObject_GetAttr(rt, s_exit))) {
		ok = -1;
		goto out;
	}
	if (*enter != Py_None && PyObject_IsTrue(S->metadata_fn))
		ok = 0; /* the kernel's own launch_metadata reads the buffer as a tensor */
out:
	if (ok != 1) {
		Py_CLEAR(*enter);
		Py_CLEAR(*exitp);
	}
	Py_XDECREF(rt);
	Py_XDECREF(comp);
	Py_XDECREF(m0);
	Py_XDECREF(m1);
	return ok;
}

/* The run dict (_dbgexport.new_run() for a launch with no error). */
static PyObject *new_run(const struct fpy_replay_kernel *K, const struct fpy_replay_sizing *S,
			 long long index, const long long g[3], long long programs, long long slots,
			 long long arena)
{
	PyObject *run = PyObject_CallOneArg(K->run_type, S->run_template);
	PyObject *nw = S->num_warps, *regs = S->registers;
	PyObject *v;
	int bad = 0;

	if (!run)
		return NULL;
#define SET(key, expr)                                                 \
	do {                                                           \
		if (!bad) {                                            \
			v = (expr);                                    \
			bad = !v || PyDict_SetItem(run, (key), v) < 0; \
			Py_XDECREF(v);                                 \
		}                                                      \
	} while (0)
	SET(s_run_index, PyLong_FromLongLong(index));
	SET(s_grid, Py_BuildValue("[LLL]", g[0], g[1], g[2]));
	SET(s_programs, PyLong_FromLongLong(programs));
	SET(s_paths, PyDict_New());
	SET(s_num_warps,
	    PyDict_Check(nw) && PyDict_GET_SIZE(nw) ? PyDict_Copy(nw) : Py_NewRef(Py_None));
	SET(s_registers,
	    PyDict_Check(regs) && PyDict_GET_SIZE(regs) ? PyDict_Copy(regs) : Py_NewRef(Py_None));
	SET(s_slots_pp, PyLong_FromLongLong(slots));
	SET(s_dump_words, PyLong_FromLongLong(arena));
#undef SET
	if (bad) {
		Py_DECREF(run);
		return NULL;
	}
	return run;
}

/* _dbgexport's _pending[index] = run and _keep(run, max_runs): 0, or -1 with an exception. */
static int keep_run(const struct fpy_replay_kernel *K, PyObject *index, PyObject *run)
{
	PyObject *kr, *max_runs;

	if (PyDict_SetItem(K->pending, index, run))
		return -1;
	if (PyList_GET_SIZE(K->runs) < K->max_runs)
		return PyList_Append(K->runs, run);
	if (!(max_runs = PyLong_FromLongLong(K->max_runs)))
		return -1;
	kr = PyObject_CallFunctionObjArgs(K->keep, run, max_runs, NULL);
	Py_DECREF(max_runs);
	Py_XDECREF(kr);
	return kr ? 0 : -1;
}

/* keep_run() undone for a launch that did not happen (errors are dropped: the caller's
 * exception is the one that matters). */
static void unkeep_run(const struct fpy_replay_kernel *K, PyObject *index, PyObject *run)
{
	Py_ssize_t n;

	if (PyDict_DelItem(K->pending, index))
		PyErr_Clear();
	if ((n = PyList_GET_SIZE(K->runs)) > 0 && PyList_GET_ITEM(K->runs, n - 1) == run &&
	    PyList_SetSlice(K->runs, n - 1, n, NULL))
		PyErr_Clear();
}

/* ------------------------------------------------------------------------------------------ */
/* The launch, in steps                                                                       */
/* ------------------------------------------------------------------------------------------ */

/* One replayed launch's state. Each step returns 1 (go on), 0 (take the Python path: nothing
 * was done that fl_release() does not undo) or -1 (an exception is set). */
struct fl {
	PyObject *module;
	struct fpy_replay_kernel *K; /* borrowed (the caller's argument) */
	struct fpy_replay_plan *P;   /* held */
	struct fpy_replay_sizing *S; /* held */
	PyObject *args, *kwargs, *grid, *index_o, *testj, *path; /* borrowed */
	long long index;
	/* fl_bind_scan */
	PyObject *b, *sc, *bound, *options, *dyn; /* bound .. dyn: borrowed from b and sc */
	uint64_t table[FP_DBG_ENTRY_WORDS * SCAN_TABLE_PARAMS];
	bool table_ok;
	/* fl_size */
	long long g[3];
	struct fp_dbg_buffer_spec spec;
	struct fp_dbg_buffer_layout lay;
	int64_t hdr_small[TABLE_AT + FP_DBG_ENTRY_WORDS * SCAN_TABLE_PARAMS], *hdr;
	/* fl_guards */
	PyObject *enter, *exitp, *stream_o, *v0, *v1;
	unsigned long long stream;
	/* fl_describe */
	PyObject *stack, *stackj, *run;
	struct tb text;
	const char *kname, *file, *sites;
	Py_ssize_t slen;
	bool kept;
	/* fl_launch, fl_submit */
	struct fp_dbg_pipe *pipe;
	struct fp_diag diag;
	size_t off;
	bool reserved;
	PyObject *addr, *gt, *md, *r;
};

/* The script and working directory K's launch JSON was made for are those of now
 * (_replay.current). 1, 0 or -1. */
static int fl_current(const struct fpy_replay_kernel *K)
{
	PyObject *sysargv = PySys_GetObject("argv"), *a0 = NULL; /* borrowed */
	char cwd[PATH_MAX];
	int k;

	if (sysargv && PyList_Check(sysargv) && PyList_GET_SIZE(sysargv) > 0)
		a0 = PyList_GET_ITEM(sysargv, 0);
	if (a0) {
		k = PyObject_RichCompareBool(a0, K->argv0, Py_EQ);
		if (k < 0)
			return -1;
	} else {
		k = PyUnicode_GET_LENGTH(K->argv0) == 0;
	}
	return k && getcwd(cwd, sizeof(cwd)) && strcmp(cwd, PyBytes_AS_STRING(K->cwd)) == 0;
}

/* Bind and scan (_plans.bind, _plans.scan), the tensor table on the way. */
static int fl_bind_scan(struct fl *f)
{
	const struct fpy_replay_kernel *K = f->K;
	PyObject *bargv[5] = {K->names, K->index, K->defaults, f->args, f->kwargs};
	PyObject *sargv[6];

	if (!PyTuple_Check(f->args) || !PyDict_Check(f->kwargs))
		return 0;
	f->b = fpy_debug_bind(bargv, 5);
	if (!f->b || f->b == Py_None)
		return 0; /* the Python path binds, and raises what Triton's binder raises */
	f->bound = PyTuple_GET_ITEM(f->b, 0);
	f->options = PyTuple_GET_ITEM(f->b, 1);
	sargv[0] = K->knames;
	sargv[1] = K->kbytes;
	sargv[2] = f->bound;
	sargv[3] = Py_False; /* not the interpreter: only device launches come here */
	sargv[4] = K->tensor_type;
	sargv[5] = K->constexpr_type;
	f->table_ok = PyTuple_GET_SIZE(K->names) <= SCAN_TABLE_PARAMS;
	if (f->table_ok)
		memset(f->table, 0, sizeof(f->table));
	f->sc = fpy_debug_scan_args(sargv, 6, f->table_ok ? f->table : NULL);
	if (f->sc == Py_None) {
		f->table_ok = false;
		/* arguments the C scan leaves to Python (duck-typed pointers such as FlagGems'
		 * StridedBuffer, descriptors): _plans.scan_py, the reference */
		Py_SETREF(f->sc, PyObject_CallOneArg(K->scan_py, f->bound));
	}
	if (!f->sc || !PyTuple_Check(f->sc) || PyTuple_GET_SIZE(f->sc) != 2)
		return 0; /* an argument neither scan describes: the Python path says why */
	f->dyn = PyTuple_GET_ITEM(f->sc, 1);
	return 1;
}

/* The plan (_plans.spec_key) and sizing (_plans._sizing_key) of this launch, and the launch
 * route the sizing was learnt on. */
static int fl_find(struct fl *f)
{
	const struct fpy_replay_kernel *K = f->K;
	PyObject *opts = NULL, *key = NULL, *skey = NULL, *plan, *sz, *fast;
	int rc = -1, k;

	if (PyDict_GET_SIZE(f->options)) {
		PyObject *items = PyDict_Items(f->options);

		if (!items || PyList_Sort(items)) {
			Py_XDECREF(items);
			return 0; /* options that do not sort: the Python path says why */
		}
		opts = PyList_AsTuple(items);
		Py_DECREF(items);
	} else {
		opts = PyTuple_New(0);
	}
	if (!opts)
		return -1;
	key = PyTuple_Pack(5, K->device, PyTuple_GET_ITEM(f->sc, 0), opts, K->settings,
			   K->generation);
	if (!key)
		goto out;
	rc = 0;
	plan = PyDict_GetItemWithError(K->plans, key); /* borrowed */
	if (!plan)
		goto out; /* a new specialization, or an unhashable key part */
	fast = PyObject_GetAttr(plan, s_fast);
	if (!fast || !Py_IS_TYPE(fast, fpy_replay_plan_type)) {
		Py_XDECREF(fast);
		goto out;
	}
	f->P = (struct fpy_replay_plan *)fast;
	skey = sizing_key(f->P->sizing_params, f->bound, K->constexpr_type);
	if (!skey)
		goto out;
	sz = PyDict_GetItemWithError(f->P->sizings, skey); /* borrowed */
	if (!sz)
		goto out;
	fast = PyObject_GetAttr(sz, s_fast);
	if (!fast || !Py_IS_TYPE(fast, fpy_replay_sizing_type)) {
		Py_XDECREF(fast);
		goto out;
	}
	f->S = (struct fpy_replay_sizing *)fast;
	if (f->S->path != f->path) {
		if (f->S->path == Py_None || f->path == Py_None)
			goto out;
		k = PyObject_RichCompareBool(f->S->path, f->path, Py_EQ);
		if (k <= 0) {
			rc = k;
			goto out;
		}
	}
	rc = 1;
out:
	Py_XDECREF(opts);
	Py_XDECREF(key);
	Py_XDECREF(skey);
	return rc;
}

/* The grid, the record buffer's layout (fp_dbg_buffer_layout, as _launch.buffer_layout sizes
 * it) and the words the host writes first, the tensor table included. */
static int fl_size(struct fl *f)
{
	const struct fpy_replay_kernel *K = f->K;
	const struct fpy_replay_plan *P = f->P;
	struct fp_dbg_buffer_spec *spec = &f->spec;
	Py_ssize_t i;
	int st, k;

	st = eval_grid(f->grid, f->bound, f->g);
	if (st)
		return st < 0 ? -1 : 0;
	memset(spec, 0, sizeof(*spec));
	if (f->g[0] < 0 || f->g[1] < 0 || f->g[2] < 0 ||
	    __builtin_mul_overflow(f->g[0], f->g[1], &spec->programs) ||
	    __builtin_mul_overflow(spec->programs, f->g[2], &spec->programs) || P->nsites < 0 ||
	    P->nsites > UINT32_MAX || P->nparams < 0 || P->nchecks < 0 ||
	    (P->nchecks && P->nparams != PyTuple_GET_SIZE(K->names)))
		return 0;
	spec->records_per_program = f->S->records_per_program;
	spec->dump_records_per_program = f->S->dump_records_per_program;
	spec->record_capacity = K->record_capacity;
	spec->dump_capacity = K->dump_capacity;
	spec->nsites = (uint32_t)P->nsites;
	spec->nparams = P->nparams <= FP_DBG_MAX_PARAMS ? (uint32_t)P->nparams : UINT32_MAX;
	spec->nchecks = P->nchecks <= FP_DBG_MAX_CHECKS ? (uint32_t)P->nchecks : UINT32_MAX;
	spec->records = P->records;
	spec->dumps = P->has_dumps;
	spec->suppress = P->suppress;
	if (fp_dbg_buffer_layout(spec, &f->lay))
		return 0; /* out of range: the Python path says why */
	if (f->lay.host_words > sizeof(f->hdr_small) / sizeof(f->hdr_small[0])) {
		f->hdr = PyMem_Calloc(f->lay.host_words, sizeof(*f->hdr));
		if (!f->hdr) {
			PyErr_NoMemory();
			return -1;
		}
	}
	if (fp_dbg_buffer_header(spec, &f->lay, f->hdr, f->lay.host_words))
		return 0;
	/* the tensor table: the scan's, or as the Python path makes it */
	for (i = 0; f->table_ok && i < P->nparams; i++)
		for (k = 0; k < FP_DBG_ENTRY_WORDS; k++)
			f->hdr[TABLE_AT + FP_DBG_ENTRY_WORDS * i + k] =
				(int64_t)f->table[FP_DBG_ENTRY_WORDS * i + k];
	for (i = 0; !f->table_ok && i < P->nparams; i++) {
		PyObject *v = PyDict_GetItemWithError(f->bound, PyTuple_GET_ITEM(K->names, i));
		uint64_t e[4] = {0, 0, 0, 0};

		if (!v && PyErr_Occurred())
			return -1;
		if (v && fpy_tensor_entry(v, false, e) < 0)
			return -1;
		for (k = 0; k < FP_DBG_ENTRY_WORDS; k++)
			f->hdr[TABLE_AT + FP_DBG_ENTRY_WORDS * i + k] = (int64_t)e[k];
	}
	return 1;
}

/* The direct launch's guards, its stream (Triton's, the pipeline's too) and the launcher's
 * arguments around the record buffer. */
static int fl_guards(struct fl *f)
{
	const struct fpy_replay_sizing *S = f->S;
	int st = guards(S, f->K->only, &f->enter, &f->exitp);

	if (st <= 0)
		return st;
	f->stream_o = PyObject_CallOneArg(S->get_stream, S->device);
	if (!f->stream_o)
		return -1;
	f->stream = PyLong_AsUnsignedLongLongMask(f->stream_o);
	if (f->stream == (unsigned long long)-1 && PyErr_Occurred())
		return -1;
	f->v0 = PyObject_CallOneArg(S->split0, f->bound);
	f->v1 = f->v0 ? PyObject_CallOneArg(S->split1, f->bound) : NULL;
	if (!f->v1)
		return -1;
	return PyTuple_Check(f->v0) && PyTuple_Check(f->v1);
}

/* The launch's description, made before the launch (after it, only the hand-over is left): the
 * launch JSON and the run dict, kept for take_exported_runs() and joined with its result later
 * (_dbgexport.submit); taken back if the launch fails. */
static int fl_describe(struct fl *f)
{
	const struct fpy_replay_kernel *K = f->K;
	Py_ssize_t klen, flen;

	f->stack = fpy_debug_stack((long)K->stack_limit);
	if (!f->stack)
		return -1;
	f->stackj = stack_json(f->stack, K->dumps);
	if (!f->stackj || clock_now())
		return -1;
	if (launch_json(&f->text, K, f->P, f->S, f->g, f->index, f->lay.slots, f->stackj, f->testj,
			f->dyn, clock_stamp, clock_iso))
		return -1;
	f->run = new_run(K, f->S, f->index, f->g, f->spec.programs, f->lay.slots,
			 f->lay.arena_words);
	f->kname = PyUnicode_AsUTF8AndSize(K->kernel_name, &klen);
	f->file = f->kname ? PyUnicode_AsUTF8AndSize(K->source_file, &flen) : NULL;
	f->sites = f->file ? PyUnicode_AsUTF8AndSize(K->site_table, &f->slen) : NULL;
	if (!f->run || !f->sites)
		return -1;
	if (keep_run(K, f->index_o, f->run))
		return -1;
	f->kept = true;
	return 1;
}

/* The record buffer (a slice of the pool, zeroed, its header written, on the stream), then the
 * launch as _plans._direct does it. */
static int fl_launch(struct fl *f)
{
	const struct fpy_replay_sizing *S = f->S;
	Py_ssize_t n0 = PyTuple_GET_SIZE(f->v0), n1 = PyTuple_GET_SIZE(f->v1), nv = n0 + 1 + n1;
	Py_ssize_t nargs = 9 + nv, i;
	PyObject *small[64], **vec = small;
	int st;

	st = fpy_debug_pipe_reserve_prepare(f->pipe, (size_t)f->lay.total_words * 8, f->hdr,
					    f->lay.host_words * sizeof(*f->hdr), f->stream, &f->off,
					    &f->diag);
	if (st == FP_ELIMIT)
		return 0; /* its own buffer: the Python path */
	if (st) {
		fpy_raise(f->module, st, &f->diag);
		return -1;
	}
	f->reserved = true;
	f->addr = PyLong_FromLongLong(f->K->pool_base + (long long)f->off);
	f->gt = Py_BuildValue("(LLL)", f->g[0], f->g[1], f->g[2]);
	if (!f->addr || !f->gt)
		return -1;
	if (nargs + 3 > (Py_ssize_t)(sizeof(small) / sizeof(small[0]))) {
		vec = PyMem_New(PyObject *, (size_t)(nargs + 3));
		if (!vec) {
			PyErr_NoMemory();
			return -1;
		}
	}
	/* the metadata call's arguments: (self), grid, stream, *vals */
	for (i = 0; i < n0; i++)
		vec[9 + i] = PyTuple_GET_ITEM(f->v0, i);
	vec[9 + n0] = f->addr;
	for (i = 0; i < n1; i++)
		vec[10 + n0 + i] = PyTuple_GET_ITEM(f->v1, i);
	if (f->enter != Py_None) {
		vec[6] = S->kernel;
		vec[7] = f->gt;
		vec[8] = f->stream_o;
		f->md = PyObject_VectorcallMethod(s_launch_metadata, vec + 6,
						  (size_t)(3 + nv) | PY_VECTORCALL_ARGUMENTS_OFFSET,
						  NULL);
	} else {
		f->md = Py_NewRef(Py_None);
	}
	if (f->md) {
		vec[0] = PyTuple_GET_ITEM(f->gt, 0);
		vec[1] = PyTuple_GET_ITEM(f->gt, 1);
		vec[2] = PyTuple_GET_ITEM(f->gt, 2);
		vec[3] = f->stream_o;
		vec[4] = S->function;
		vec[5] = S->packed_metadata;
		vec[6] = f->md;
		vec[7] = f->enter;
		vec[8] = f->exitp;
		f->r = PyObject_Vectorcall(S->run, vec, (size_t)nargs, NULL);
	}
	if (vec != small)
		PyMem_Free(vec);
	return f->r ? 1 : -1;
}

/* The hand-over to the pipeline, and the counters the launch adds to. */
static int fl_submit(struct fl *f)
{
	struct fp_dbg_pipe_job job = {.kernel = f->kname,
				      .source_file = f->file,
				      .site_table = f->sites,
				      .site_len = (size_t)f->slen,
				      .launch_json = f->text.p,
				      .launch_len = f->text.len,
				      .launch_index = (uint64_t)f->index};
	size_t i;
	int st;

	fp_diag_clear(&f->diag);
	f->reserved = false; /* submit owns the slice now, also when it fails */
	f->kept = false;     /* and the run is the launch's, as on the Python path */
	Py_BEGIN_ALLOW_THREADS st = fp_dbg_pipe_submit(
		f->pipe, f->off, (size_t)f->lay.total_words * 8, f->stream, &job, &f->diag);
	Py_END_ALLOW_THREADS if (st)
	{
		fpy_raise(f->module, st, &f->diag);
		return -1;
	}
	/* the launch happened: a counter that cannot be raised is not an error of it */
	for (i = 0; i < N_COUNTERS; i++) {
		if (i == 2 && f->S->registers == Py_None)
			continue; /* registers_reused: only where a decision was made */
		if (bump(f->K->counters, s_counters[i]))
			PyErr_Clear();
	}
	return 1;
}

/* Everything a launch holds, given back; a slice reserved and a run kept are taken back when
 * the launch did not reach the pipeline (keeping the exception being raised). */
static void fl_release(struct fl *f)
{
	if (f->reserved || f->kept) {
		PyObject *et, *ev, *tb;

		PyErr_Fetch(&et, &ev, &tb);
		if (f->reserved)
			fp_dbg_pipe_unreserve(f->pipe, f->off);
		if (f->kept)
			unkeep_run(f->K, f->index_o, f->run);
		PyErr_Restore(et, ev, tb);
	}
	PyMem_Free(f->text.p);
	if (f->hdr != f->hdr_small)
		PyMem_Free(f->hdr);
	Py_XDECREF(f->b);
	Py_XDECREF(f->sc);
	Py_XDECREF((PyObject *)f->P);
	Py_XDECREF((PyObject *)f->S);
	Py_XDECREF(f->enter);
	Py_XDECREF(f->exitp);
	Py_XDECREF(f->stream_o);
	Py_XDECREF(f->v0);
	Py_XDECREF(f->v1);
	Py_XDECREF(f->stack);
	Py_XDECREF(f->stackj);
	Py_XDECREF(f->run);
	Py_XDECREF(f->addr);
	Py_XDECREF(f->gt);
	Py_XDECREF(f->md);
	Py_XDECREF(f->r);
}

PyDoc_STRVAR(
	debug_fast_launch_doc,
	"debug_fast_launch(kernel, args, kwargs, grid, index, test_json, path) -> compiled kernel\n"
	"or None\n\n"
	"Launch `index` of a kernel through the plan and sizing an earlier launch of the same\n"
	"specialization left (kernel: its ReplayKernel; the plan's and sizing's `fast`: their\n"
	"ReplayPlan and ReplaySizing): bind and scan the arguments, reserve and prepare the record\n"
	"buffer in the pipeline's pool, launch the compiled twin, keep the run dict and submit the\n"
	"launch. test_json: the pytest node id as JSON text (\"null\": none); path: the launch\n"
	"route's token (_replay.route_token), None for a plain launch. None, with nothing done,\n"
	"where the launch needs the Python path; the kernel's own compiled kernel otherwise. A\n"
	"launch that raises gives its slice back and raises.");

static PyObject *debug_fast_launch(PyObject *module, PyObject *const *argv, Py_ssize_t argc)
{
	struct fl f;
	PyObject *ret = NULL;
	int st;

	if (argc != 7 || !Py_IS_TYPE(argv[0], fpy_replay_kernel_type)) {
		PyErr_SetString(
			PyExc_TypeError,
			"debug_fast_launch(kernel: ReplayKernel, args, kwargs, grid, index, "
			"test_json, path)");
		return NULL;
	}
	memset(&f, 0, sizeof(f));
	f.module = module;
	f.K = (struct fpy_replay_kernel *)argv[0];
	f.args = argv[1];
	f.kwargs = argv[2];
	f.grid = argv[3];
	f.index_o = argv[4];
	f.testj = argv[5];
	f.path = argv[6];
	f.hdr = f.hdr_small;
	if (get_ll(f.index_o, &f.index) || !(f.pipe = fpy_debug_pipe(f.K->pipe)))
		return NULL;
	st = fl_current(f.K);
	if (st > 0)
		st = fl_bind_scan(&f);
	if (st > 0)
		st = fl_find(&f);
	if (st > 0)
		st = fl_size(&f);
	if (st > 0)
		st = fl_guards(&f);
	if (st > 0)
		st = fl_describe(&f);
	if (st > 0)
		st = fl_launch(&f);
	if (st > 0)
		st = fl_submit(&f);
	if (st > 0) {
		ret = Py_NewRef(f.P->original);
	} else if (st == 0) {
		/* the Python path: whatever was tried is dropped (it will be tried there again) */
		PyErr_Clear();
		ret = Py_NewRef(Py_None);
	}
	fl_release(&f);
	return ret;
}

PyDoc_STRVAR(
	debug_fast_launch_json_doc,
	"debug_fast_launch_json(kernel, plan, sizing, grid, index, slots, stack_json, test_json,\n"
	"                       dyn, second) -> str\n\n"
	"The launch JSON debug_fast_launch() writes for those values (the clock at `second`;\n"
	"kernel, plan, sizing: ReplayKernel, ReplayPlan, ReplaySizing); for tests, which compare\n"
	"it with _dbgexport.launch_json().");

static PyObject *debug_fast_launch_json(PyObject *module, PyObject *const *argv, Py_ssize_t argc)
{
	PyObject *out;
	long long g[3], index, slots, sec;
	char stamp[32], iso[40];
	struct tb text = {0};
	Py_ssize_t i;

	(void)module;
	if (argc != 10 || !Py_IS_TYPE(argv[0], fpy_replay_kernel_type) ||
	    !Py_IS_TYPE(argv[1], fpy_replay_plan_type) ||
	    !Py_IS_TYPE(argv[2], fpy_replay_sizing_type) || !PyTuple_Check(argv[3]) ||
	    PyTuple_GET_SIZE(argv[3]) != 3) {
		PyErr_SetString(
			PyExc_TypeError,
			"debug_fast_launch_json(kernel, plan, sizing, grid: 3-tuple, index, "
			"slots, stack_json, test_json, dyn, second)");
		return NULL;
	}
	for (i = 0; i < 3; i++)
		if (get_ll(PyTuple_GET_ITEM(argv[3], i), &g[i]))
			return NULL;
	if (get_ll(argv[4], &index) || get_ll(argv[5], &slots) || get_ll(argv[9], &sec))
		return NULL;
	if (fmt_stamp(sec, stamp, iso)) {
		PyErr_SetString(PyExc_ValueError, "debug_fast_launch_json: bad second");
		return NULL;
	}
	if (launch_json(&text, (struct fpy_replay_kernel *)argv[0],
			(struct fpy_replay_plan *)argv[1], (struct fpy_replay_sizing *)argv[2], g,
			index, slots, argv[6], argv[7], argv[8], stamp, iso)) {
		PyMem_Free(text.p);
		return NULL;
	}
	out = PyUnicode_DecodeUTF8(text.p, (Py_ssize_t)text.len, "strict");
	PyMem_Free(text.p);
	return out;
}

static PyObject *debug_fast_stamp(PyObject *module, PyObject *arg)
{
	char stamp[32], iso[40];
	long long sec;

	(void)module;
	if (get_ll(arg, &sec))
		return NULL;
	if (fmt_stamp(sec, stamp, iso)) {
		PyErr_SetString(PyExc_ValueError, "debug_fast_stamp: bad second");
		return NULL;
	}
	return Py_BuildValue("(ss)", stamp, iso);
}

static PyMethodDef dbgfast_methods[] = {
	{"debug_fast_launch", (PyCFunction)(void (*)(void))debug_fast_launch, METH_FASTCALL,
	 debug_fast_launch_doc},
	{"debug_fast_launch_json", (PyCFunction)(void (*)(void))debug_fast_launch_json,
	 METH_FASTCALL, debug_fast_launch_json_doc},
	{"debug_fast_stamp", debug_fast_stamp, METH_O,
	 "debug_fast_stamp(second) -> (stamp, iso): the launch JSON's clock for a second (UTC),\n"
	 "as _dbgexport._now() formats it; for tests."},
	{NULL, NULL, 0, NULL},
};

int fpy_dbgfast_exec(PyObject *module)
{
	if (intern_all())
		return -1;
	return PyModule_AddFunctions(module, dbgfast_methods);
}
