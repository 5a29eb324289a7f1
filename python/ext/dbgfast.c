// SPDX-License-Identifier: Apache-2.0
/*
 * Part `dbgfast`: the Debugger's replayed launch. Once a kernel's launch has gone through the
 * whole Python path (python/flagprism/debugger.py, _instrumented) and left behind what its
 * specialization, sizing and compiled twin decided (python/flagprism/_plans.py, "The replayed
 * launch": the tuples F, P and S), a later launch with the same specialization and sizing is
 * done here in one call: bind and scan the arguments, find the plan and sizing, size and prepare
 * the record buffer in the pipeline's pool, launch the compiled twin through Triton's launcher,
 * describe the launch (its launch JSON and run dict) and hand it to the pipeline. What Python
 * did in about forty steps per launch is one crossing.
 *
 * Everything that is decided beyond this launch's own values comes from Python (templates,
 * constants, the guards' expected values): nothing here decides what a launch means, it only
 * repeats what the Python path did for the same decisions. Where anything differs from what
 * the tuples expect (another specialization or sizing, a changed global, another device, a
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
#include <flagprism/status.h>

#include "ext.h"

/* F: per kernel (_plans.fast_kernel builds it; the order is that function's). */
enum {
	F_NAMES,
	F_INDEX,
	F_DEFAULTS,
	F_KNAMES,
	F_KBYTES,
	F_TENSOR,
	F_CX,
	F_DEVICE,
	F_SETTINGS,
	F_GENERATION,
	F_PLANS,
	F_PIPE,
	F_POOL_BASE,
	F_KERNEL,
	F_SOURCE,
	F_SITES,
	F_CONST,
	F_STEM,
	F_ARGV0,
	F_CWD,
	F_PENDING,
	F_RUNS,
	F_MAX_RUNS,
	F_KEEP,
	F_RUN_TYPE,
	F_COUNTERS,
	F_ONLY,
	F_STACK_LIMIT,
	F_DUMPS,
	F_RECORD_CAP,
	F_DUMP_CAP,
	F_CONSTS,
	F_SCAN_PY,
	F_LEN
};

/* P: per plan (Plan.fast). */
enum {
	P_SIZING_PARAMS,
	P_SIZINGS,
	P_ARGS_TPL,
	P_NSITES,
	P_HAS_DUMPS,
	P_ORIGINAL,
	P_NPARAMS,  /* the check area (_launch.buffer_header): tensor-table entries, */
	P_NCHECKS,  /* check slots, */
	P_SUPPRESS, /* whether lanes found out of bounds are suppressed, */
	P_RECORDS,  /* whether the twin writes record slots (marker mode) */
	P_LEN
};

/* The check area's layout (python/flagprism/_checks.py; docs/formats/record-format.md). */
#define CK_TABLE_AT 16
#define CK_ENTRY_WORDS 4
#define CK_SLOT_WORDS 32
#define CK_MAX_PARAMS 4096

/* S: per sizing (Sizing.fast). */
enum {
	S_RPP,
	S_DPP,
	S_KERNEL,
	S_RUN,
	S_FUNCTION,
	S_PACKED,
	S_DEVICE,
	S_GET_DEVICE,
	S_GET_STREAM,
	S_GLOBALS,
	S_KNOBS,
	S_MODES,
	S_METADATA_FN,
	S_SPLIT0,
	S_SPLIT1,
	S_MID_A,
	S_MID_B,
	S_TAIL,
	S_RUN_TPL,
	S_NUM_WARPS,
	S_REGISTERS,
	S_PATH,
	S_LEN
};

/* _launch's layout constants (F_CONSTS), in this order. */
enum {
	C_MAX_RECORD_BYTES,
	C_RECORD_WORDS,
	C_HEADER_WORDS,
	C_MAX_DUMP_WORDS,
	C_DUMP_WPR,
	C_MAGIC,
	C_VERSION,
	C_LEN
};

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

/* What _dbgexport.launch_json() writes for a launch with no error, from F's, P's and S's
 * templates and this launch's values. 0, or -1 with an exception set. */
static int launch_json(struct tb *b, PyObject *F, PyObject *P, PyObject *S, const long long g[3],
		       long long index, long long slots, PyObject *stackj, PyObject *testj,
		       PyObject *dyn, const char *stamp, const char *iso)
{
	PyObject *tpl = PyTuple_GET_ITEM(P, P_ARGS_TPL);
	Py_ssize_t n, i;

	if (!PyTuple_Check(tpl) || !PyList_Check(dyn)) {
		PyErr_SetString(PyExc_TypeError, "debug_fast_launch: bad argument templates");
		return -1;
	}
	TB_LIT(b, "{");
	if (tb_str(b, PyTuple_GET_ITEM(F, F_CONST)))
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
	if (tb_str(b, PyTuple_GET_ITEM(F, F_STEM)))
		return -1;
	tb_put(b, stamp, strlen(stamp));
	TB_LIT(b, "_run");
	tb_i64(b, index);
	TB_LIT(b, "\"");
	if (tb_str(b, PyTuple_GET_ITEM(S, S_MID_A)))
		return -1;
	tb_i64(b, slots);
	if (tb_str(b, PyTuple_GET_ITEM(S, S_MID_B)) || tb_str(b, stackj))
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
	if (tb_str(b, PyTuple_GET_ITEM(S, S_TAIL)))
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

static int check_tuple(PyObject *o, Py_ssize_t n, const char *what)
{
	if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != n) {
		PyErr_Format(PyExc_TypeError, "debug_fast_launch: %s must be a tuple of %zd", what,
			     n);
		return -1;
	}
	return 0;
}

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

/* None (the setting is unset: *set false) or an int. */
static int get_opt_ll(PyObject *o, bool *set, long long *out)
{
	*set = o != Py_None;
	return *set ? get_ll(o, out) : 0;
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
static int guards(PyObject *S, PyObject *only, PyObject **enter, PyObject **exitp)
{
	PyObject *argv[2] = {s_jit_run, s_debugger};
	PyObject *r, *globals = PyTuple_GET_ITEM(S, S_GLOBALS),
		     *modes = PyTuple_GET_ITEM(S, S_MODES);
	PyObject *rt = NULL, *comp = NULL, *m0 = NULL, *m1 = NULL;
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
	r = PyObject_CallNoArgs(PyTuple_GET_ITEM(S, S_GET_DEVICE));
	if (!r)
		return -1;
	ok = PyObject_RichCompareBool(r, PyTuple_GET_ITEM(S, S_DEVICE), Py_EQ);
	Py_DECREF(r);
	if (ok <= 0)
		return ok;
	if (!PyTuple_Check(globals) || !PyTuple_Check(modes) || PyTuple_GET_SIZE(modes) != 2) {
		PyErr_SetString(PyExc_TypeError, "debug_fast_launch: bad guards");
		return -1;
	}
	for (i = 0; i < PyTuple_GET_SIZE(globals); i++) {
		PyObject *e = PyTuple_GET_ITEM(globals, i), *cur;

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
	rt = PyObject_GetAttr(PyTuple_GET_ITEM(S, S_KNOBS), s_runtime);
	if (!rt)
		return -1;
	ok = -1;
	if (!(m0 = PyObject_GetAttr(rt, s_debug)))
		goto out;
	if (getattr_opt(PyTuple_GET_ITEM(S, S_KNOBS), s_compilation, &comp) < 0)
		goto out;
	if (comp && getattr_opt(comp, s_instr, &m1) < 0)
		goto out;
	if (!m1)
		m1 = Py_NewRef(Py_None);
	ok = PyObject_RichCompareBool(m0, PyTuple_GET_ITEM(modes, 0), Py_EQ);
	if (ok == 1)
		ok = PyObject_RichCompareBool(m1, PyTuple_GET_ITEM(modes, 1), Py_EQ);
	if (ok != 1)
		goto out;
	if (!(*enter = PyObject_GetAttr(rt, s_enter)) || !(*exitp = PyObject_GetAttr(rt, s_exit))) {
		ok = -1;
		goto out;
	}
	if (*enter != Py_None && PyObject_IsTrue(PyTuple_GET_ITEM(S, S_METADATA_FN)))
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
static PyObject *new_run(PyObject *F, PyObject *S, long long index, const long long g[3],
			 long long programs, long long slots, long long arena)
{
	PyObject *run = PyObject_CallOneArg(PyTuple_GET_ITEM(F, F_RUN_TYPE),
					    PyTuple_GET_ITEM(S, S_RUN_TPL));
	PyObject *nw = PyTuple_GET_ITEM(S, S_NUM_WARPS), *regs = PyTuple_GET_ITEM(S, S_REGISTERS);
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
static int keep_run(PyObject *F, PyObject *index, PyObject *run)
{
	PyObject *runs = PyTuple_GET_ITEM(F, F_RUNS), *kr;
	long long max_runs;

	if (get_ll(PyTuple_GET_ITEM(F, F_MAX_RUNS), &max_runs) ||
	    PyDict_SetItem(PyTuple_GET_ITEM(F, F_PENDING), index, run))
		return -1;
	if (PyList_Check(runs) && PyList_GET_SIZE(runs) < max_runs)
		return PyList_Append(runs, run);
	kr = PyObject_CallFunctionObjArgs(PyTuple_GET_ITEM(F, F_KEEP), run,
					  PyTuple_GET_ITEM(F, F_MAX_RUNS), NULL);
	Py_XDECREF(kr);
	return kr ? 0 : -1;
}

/* keep_run() undone for a launch that did not happen (errors are dropped: the caller's
 * exception is the one that matters). */
static void unkeep_run(PyObject *F, PyObject *index, PyObject *run)
{
	PyObject *runs = PyTuple_GET_ITEM(F, F_RUNS);
	Py_ssize_t n;

	if (PyDict_DelItem(PyTuple_GET_ITEM(F, F_PENDING), index))
		PyErr_Clear();
	if (PyList_Check(runs) && (n = PyList_GET_SIZE(runs)) > 0 &&
	    PyList_GET_ITEM(runs, n - 1) == run && PyList_SetSlice(runs, n - 1, n, NULL))
		PyErr_Clear();
}

/* ------------------------------------------------------------------------------------------ */
/* The launch                                                                                 */
/* ------------------------------------------------------------------------------------------ */

PyDoc_STRVAR(
	debug_fast_launch_doc,
	"debug_fast_launch(F, args, kwargs, grid, index, test_json, path) -> compiled kernel or\n"
	"None\n\n"
	"Launch `index` of a kernel through the plan and sizing an earlier launch of the same\n"
	"specialization left (F: the kernel's tuple, _plans.fast_kernel; the plan's and sizing's\n"
	"`fast` tuples): bind and scan the arguments, reserve and prepare the record buffer in the\n"
	"pipeline's pool, launch the compiled twin, keep the run dict and submit the launch.\n"
	"test_json: the pytest node id as JSON text (\"null\": none); path: the launch path of a\n"
	"library in between (FlagGems' LibEntry), None for a plain launch. None, with nothing done, where\n"
	"the launch needs the Python path; the kernel's own compiled kernel otherwise. A launch that\n"
	"raises gives its slice back and raises.");

static PyObject *debug_fast_launch(PyObject *module, PyObject *const *argv, Py_ssize_t argc)
{
	PyObject *F, *args, *kwargs, *grid, *testj;
	PyObject *bargv[5], *sargv[6];
	PyObject *b = NULL, *sc = NULL, *key = NULL, *opts = NULL, *plan, *P = NULL, *skey = NULL;
	PyObject *sz, *S = NULL, *enter = NULL, *exitp = NULL, *stream_o = NULL, *stack = NULL;
	PyObject *stackj = NULL, *run = NULL, *v0 = NULL, *v1 = NULL, *addr = NULL, *md = NULL;
	PyObject *gt = NULL, *r = NULL, *ret = NULL, *consts;
	PyObject *bound, *options, *parts, *dyn;
	long long index, g[3], programs, slots, arena, words, nbytes, rpp, dpp, nsites, pool_base;
	long long nparams = 0, nchecks = 0, prefix;
	long long cst[C_LEN], rc_cap = 0, dc_cap = 0, stack_limit;
	unsigned long long stream;
	bool rc_set, dc_set, has_dumps, reserved = false, kept = false;
	struct fp_dbg_pipe *pipe;
	struct fp_diag diag;
	struct tb text = {0};
	size_t off = 0;
	int64_t hdr_small[CK_TABLE_AT + CK_ENTRY_WORDS * 32], *hdr = hdr_small;
	/* the tensor table the C scan fills on its way (up to 32 parameters; more, or a scan
	 * left to Python, and the header asks each argument again) */
	uint64_t tbl[CK_ENTRY_WORDS * 32];
	bool tbl_ok = false;
	size_t hdr_words = 8;
	const char *kname, *file, *sites;
	Py_ssize_t i, klen, flen, slen;
	int st, k;

	if (argc != 7) {
		PyErr_SetString(PyExc_TypeError, "debug_fast_launch takes 7 arguments");
		return NULL;
	}
	F = argv[0];
	args = argv[1];
	kwargs = argv[2];
	grid = argv[3];
	testj = argv[5];
	if (check_tuple(F, F_LEN, "F") || get_ll(argv[4], &index))
		return NULL;
	consts = PyTuple_GET_ITEM(F, F_CONSTS);
	if (check_tuple(consts, C_LEN, "F's constants"))
		return NULL;
	for (i = 0; i < C_LEN; i++)
		if (get_ll(PyTuple_GET_ITEM(consts, i), &cst[i]))
			return NULL;
	if (get_opt_ll(PyTuple_GET_ITEM(F, F_RECORD_CAP), &rc_set, &rc_cap) ||
	    get_opt_ll(PyTuple_GET_ITEM(F, F_DUMP_CAP), &dc_set, &dc_cap) ||
	    get_ll(PyTuple_GET_ITEM(F, F_POOL_BASE), &pool_base) ||
	    get_ll(PyTuple_GET_ITEM(F, F_STACK_LIMIT), &stack_limit))
		return NULL;
	if (!(pipe = fpy_debug_pipe(PyTuple_GET_ITEM(F, F_PIPE))))
		return NULL;

	/* the script and working directory the constant part was made for (_constant_part) */
	{
		PyObject *sysargv = PySys_GetObject("argv"), *a0 = NULL; /* borrowed */
		PyObject *cwd_b = PyTuple_GET_ITEM(F, F_CWD);
		char cwd[PATH_MAX];

		if (sysargv && PyList_Check(sysargv) && PyList_GET_SIZE(sysargv) > 0)
			a0 = PyList_GET_ITEM(sysargv, 0);
		if (a0) {
			k = PyObject_RichCompareBool(a0, PyTuple_GET_ITEM(F, F_ARGV0), Py_EQ);
			if (k < 0)
				return NULL;
		} else {
			k = PyUnicode_Check(PyTuple_GET_ITEM(F, F_ARGV0)) &&
			    PyUnicode_GET_LENGTH(PyTuple_GET_ITEM(F, F_ARGV0)) == 0;
		}
		if (!k || !PyBytes_Check(cwd_b) || !getcwd(cwd, sizeof(cwd)) ||
		    strcmp(cwd, PyBytes_AS_STRING(cwd_b)) != 0)
			Py_RETURN_NONE;
	}

	/* bind and scan (_plans.bind, _plans.scan), then the key (_plans.spec_key) */
	bargv[0] = PyTuple_GET_ITEM(F, F_NAMES);
	bargv[1] = PyTuple_GET_ITEM(F, F_INDEX);
	bargv[2] = PyTuple_GET_ITEM(F, F_DEFAULTS);
	bargv[3] = args;
	bargv[4] = kwargs;
	if (!PyTuple_Check(args) || !PyDict_Check(kwargs))
		Py_RETURN_NONE;
	b = fpy_debug_bind(bargv, 5);
	if (!b || b == Py_None)
		goto pass;
	bound = PyTuple_GET_ITEM(b, 0);
	options = PyTuple_GET_ITEM(b, 1);
	sargv[0] = PyTuple_GET_ITEM(F, F_KNAMES);
	sargv[1] = PyTuple_GET_ITEM(F, F_KBYTES);
	sargv[2] = bound;
	sargv[3] = Py_False; /* not the interpreter: only device launches come here */
	sargv[4] = PyTuple_GET_ITEM(F, F_TENSOR);
	sargv[5] = PyTuple_GET_ITEM(F, F_CX);
	tbl_ok = PyTuple_GET_SIZE(PyTuple_GET_ITEM(F, F_NAMES)) <= 32;
	if (tbl_ok)
		memset(tbl, 0, sizeof(tbl));
	sc = fpy_debug_scan_args(sargv, 6, tbl_ok ? tbl : NULL);
	if (sc == Py_None) {
		tbl_ok = false;
		/* arguments the C scan leaves to Python (duck-typed pointers such as FlagGems'
		 * StridedBuffer, descriptors): _plans.scan_py, the reference */
		Py_SETREF(sc, PyObject_CallOneArg(PyTuple_GET_ITEM(F, F_SCAN_PY), bound));
	}
	if (!sc || sc == Py_None)
		goto pass;
	if (!PyTuple_Check(sc) || PyTuple_GET_SIZE(sc) != 2)
		goto pass;
	parts = PyTuple_GET_ITEM(sc, 0);
	dyn = PyTuple_GET_ITEM(sc, 1);
	if (PyDict_GET_SIZE(options)) {
		PyObject *items = PyDict_Items(options);

		if (!items || PyList_Sort(items)) {
			Py_XDECREF(items);
			goto pass;
		}
		opts = PyList_AsTuple(items);
		Py_DECREF(items);
	} else {
		opts = PyTuple_New(0);
	}
	if (!opts)
		goto fail_launch;
	key = PyTuple_Pack(5, PyTuple_GET_ITEM(F, F_DEVICE), parts, opts,
			   PyTuple_GET_ITEM(F, F_SETTINGS), PyTuple_GET_ITEM(F, F_GENERATION));
	if (!key)
		goto fail_launch;
	plan = PyDict_GetItemWithError(PyTuple_GET_ITEM(F, F_PLANS), key); /* borrowed */
	if (!plan)
		goto pass; /* a new specialization, or an unhashable key part */
	P = PyObject_GetAttr(plan, s_fast);
	if (!P || P == Py_None)
		goto pass;
	if (check_tuple(P, P_LEN, "a plan's fast tuple"))
		goto fail_launch;
	if (!PyTuple_Check(PyTuple_GET_ITEM(P, P_SIZING_PARAMS)) ||
	    !PyDict_Check(PyTuple_GET_ITEM(P, P_SIZINGS))) {
		PyErr_SetString(PyExc_TypeError, "debug_fast_launch: bad plan tuple");
		goto fail_launch;
	}
	skey = sizing_key(PyTuple_GET_ITEM(P, P_SIZING_PARAMS), bound, PyTuple_GET_ITEM(F, F_CX));
	if (!skey)
		goto pass;
	sz = PyDict_GetItemWithError(PyTuple_GET_ITEM(P, P_SIZINGS), skey); /* borrowed */
	if (!sz)
		goto pass;
	S = PyObject_GetAttr(sz, s_fast);
	if (!S || S == Py_None)
		goto pass;
	if (check_tuple(S, S_LEN, "a sizing's fast tuple"))
		goto fail_launch;
	/* the launch path the sizing's launch JSON names */
	{
		PyObject *want = PyTuple_GET_ITEM(S, S_PATH), *path = argv[6];

		if (want != path) {
			if (want == Py_None || path == Py_None)
				goto pass;
			k = PyObject_RichCompareBool(want, path, Py_EQ);
			if (k < 0)
				goto fail_launch;
			if (!k)
				goto pass;
		}
	}

	/* the grid and the record buffer's size and header (_plans.prepare, _launch.header) */
	st = eval_grid(grid, bound, g);
	if (st < 0)
		goto fail_launch;
	if (st > 0)
		goto pass;
	if (get_ll(PyTuple_GET_ITEM(S, S_RPP), &rpp) || get_ll(PyTuple_GET_ITEM(S, S_DPP), &dpp) ||
	    get_ll(PyTuple_GET_ITEM(P, P_NSITES), &nsites) ||
	    get_ll(PyTuple_GET_ITEM(P, P_NPARAMS), &nparams) ||
	    get_ll(PyTuple_GET_ITEM(P, P_NCHECKS), &nchecks))
		goto fail_launch;
	has_dumps = PyObject_IsTrue(PyTuple_GET_ITEM(P, P_HAS_DUMPS)) == 1;
	if (nchecks < 0 || nparams < 0 || nparams > CK_MAX_PARAMS || nchecks > (1LL << 20) ||
	    (nchecks && nparams != PyTuple_GET_SIZE(PyTuple_GET_ITEM(F, F_NAMES))))
		goto pass;
	prefix = nchecks ? CK_TABLE_AT + CK_ENTRY_WORDS * nparams + CK_SLOT_WORDS * nchecks :
			   cst[C_HEADER_WORDS];
	if (g[0] < 0 || g[1] < 0 || g[2] < 0 || __builtin_mul_overflow(g[0], g[1], &programs) ||
	    __builtin_mul_overflow(programs, g[2], &programs))
		goto pass;
	{
		long long per = programs > 1 ? programs : 1;

		if (PyObject_IsTrue(PyTuple_GET_ITEM(P, P_RECORDS)) != 1) {
			slots = 0; /* check mode: only the check area */
		} else if (rc_set) {
			slots = rc_cap / per;
		} else {
			long long cap = cst[C_MAX_RECORD_BYTES] / (cst[C_RECORD_WORDS] * 8 * per);

			slots = rpp < cap ? rpp : cap;
		}
		if (slots < 0)
			slots = 0;
		if (!has_dumps) {
			arena = 0;
		} else if (dc_set) {
			arena = dc_cap > 0 ? dc_cap : 0;
		} else {
			long long want;

			if (__builtin_mul_overflow(programs, dpp, &want) ||
			    __builtin_mul_overflow(want, cst[C_DUMP_WPR], &want))
				want = cst[C_MAX_DUMP_WORDS];
			arena = want < cst[C_MAX_DUMP_WORDS] ? want : cst[C_MAX_DUMP_WORDS];
			if (arena < 1)
				arena = 1;
		}
		if (__builtin_mul_overflow(programs, slots, &words) ||
		    __builtin_mul_overflow(words, cst[C_RECORD_WORDS], &words) ||
		    __builtin_add_overflow(words, prefix + arena, &words) ||
		    __builtin_mul_overflow(words, 8LL, &nbytes))
			goto pass;
		if (nchecks) {
			hdr_words = CK_TABLE_AT + CK_ENTRY_WORDS * (size_t)nparams;
			if (hdr_words > sizeof(hdr_small) / sizeof(hdr_small[0])) {
				hdr = PyMem_Malloc(hdr_words * sizeof(*hdr));
				if (!hdr) {
					hdr = hdr_small;
					PyErr_NoMemory();
					goto fail_launch;
				}
			}
		}
		hdr[0] = cst[C_MAGIC];
		hdr[1] = cst[C_VERSION] | (cst[C_RECORD_WORDS] << 16) |
			 (cst[C_HEADER_WORDS] << 32) |
			 ((long long)((has_dumps ? 1 : 0) | (nchecks ? 2 : 0)) << 48);
		hdr[2] = slots;
		hdr[3] = programs;
		hdr[4] = 0;
		hdr[5] = 0;
		hdr[6] = arena;
		hdr[7] = nsites;
		if (nchecks) {
			PyObject *names = PyTuple_GET_ITEM(F, F_NAMES);

			hdr[8] = nparams;
			hdr[9] = nchecks;
			hdr[10] = PyObject_IsTrue(PyTuple_GET_ITEM(P, P_SUPPRESS)) == 1;
			hdr[11] = prefix;
			hdr[12] = hdr[13] = hdr[14] = hdr[15] = 0;
			/* the tensor table: the scan's, or as debug_tensor_table makes it for the
			 * Python path */
			for (i = 0; tbl_ok && i < nparams; i++)
				for (k = 0; k < 4; k++)
					hdr[CK_TABLE_AT + CK_ENTRY_WORDS * i + k] =
						(int64_t)tbl[CK_ENTRY_WORDS * i + k];
			for (i = 0; !tbl_ok && i < nparams; i++) {
				PyObject *v =
					PyDict_GetItemWithError(bound, PyTuple_GET_ITEM(names, i));
				uint64_t e[4] = {0, 0, 0, 0};

				if (!v && PyErr_Occurred())
					goto fail_launch;
				if (v && fpy_tensor_entry(v, false, e) < 0)
					goto fail_launch;
				for (k = 0; k < 4; k++)
					hdr[CK_TABLE_AT + CK_ENTRY_WORDS * i + k] = (int64_t)e[k];
			}
		}
	}

	/* the direct launch's checks, and its stream (Triton's, the pipeline's too) */
	st = guards(S, PyTuple_GET_ITEM(F, F_ONLY), &enter, &exitp);
	if (st < 0)
		goto fail_launch;
	if (st == 0)
		goto pass;
	stream_o = PyObject_CallOneArg(PyTuple_GET_ITEM(S, S_GET_STREAM),
				       PyTuple_GET_ITEM(S, S_DEVICE));
	if (!stream_o)
		goto fail_launch;
	stream = PyLong_AsUnsignedLongLongMask(stream_o);
	if (stream == (unsigned long long)-1 && PyErr_Occurred())
		goto fail_launch;
	v0 = PyObject_CallOneArg(PyTuple_GET_ITEM(S, S_SPLIT0), bound);
	v1 = v0 ? PyObject_CallOneArg(PyTuple_GET_ITEM(S, S_SPLIT1), bound) : NULL;
	if (!v1)
		goto fail_launch;
	if (!PyTuple_Check(v0) || !PyTuple_Check(v1))
		goto pass;

	/* the launch's description, made before the launch: after it, only the hand-over is left */
	stack = fpy_debug_stack((long)stack_limit);
	if (!stack)
		goto fail_launch;
	stackj = stack_json(stack, PyTuple_GET_ITEM(F, F_DUMPS));
	if (!stackj || clock_now())
		goto fail_launch;
	if (launch_json(&text, F, P, S, g, index, slots, stackj, testj, dyn, clock_stamp,
			clock_iso))
		goto fail_launch;
	run = new_run(F, S, index, g, programs, slots, arena);
	kname = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(F, F_KERNEL), &klen);
	file = kname ? PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(F, F_SOURCE), &flen) : NULL;
	sites = file ? PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(F, F_SITES), &slen) : NULL;
	if (!run || !sites)
		goto fail_launch;
	/* kept for take_exported_runs() and joined with its result later (_dbgexport.submit):
	 * before the hand-over, which lets other threads run; taken back if the launch fails */
	if (keep_run(F, argv[4], run))
		goto fail_launch;
	kept = true;

	/* the record buffer: a slice of the pool, zeroed, its header written, on the stream */
	st = fpy_debug_pipe_reserve_prepare(pipe, (size_t)nbytes, hdr, hdr_words * sizeof(*hdr),
					    stream, &off, &diag);
	if (st == FP_ELIMIT)
		goto pass; /* its own buffer: the Python path */
	if (st) {
		fpy_raise(module, st, &diag);
		goto fail_launch;
	}
	reserved = true;

	/* the launch: what _plans._direct does */
	addr = PyLong_FromLongLong(pool_base + (long long)off);
	gt = Py_BuildValue("(LLL)", g[0], g[1], g[2]);
	if (!addr || !gt)
		goto fail_launch;
	{
		Py_ssize_t n0 = PyTuple_GET_SIZE(v0), n1 = PyTuple_GET_SIZE(v1), nv = n0 + 1 + n1;
		Py_ssize_t nargs = 9 + nv;
		PyObject *small[64], **vec = small;
		PyObject *kernel = PyTuple_GET_ITEM(S, S_KERNEL);

		if (nargs + 3 > (Py_ssize_t)(sizeof(small) / sizeof(small[0]))) {
			vec = PyMem_New(PyObject *, (size_t)(nargs + 3));
			if (!vec) {
				PyErr_NoMemory();
				goto fail_launch;
			}
		}
		/* the metadata call's arguments: (self), grid, stream, *vals */
		for (i = 0; i < n0; i++)
			vec[9 + i] = PyTuple_GET_ITEM(v0, i);
		vec[9 + n0] = addr;
		for (i = 0; i < n1; i++)
			vec[10 + n0 + i] = PyTuple_GET_ITEM(v1, i);
		if (enter != Py_None) {
			vec[6] = kernel;
			vec[7] = gt;
			vec[8] = stream_o;
			md = PyObject_VectorcallMethod(
				s_launch_metadata, vec + 6,
				(size_t)(3 + nv) | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
		} else {
			md = Py_NewRef(Py_None);
		}
		if (md) {
			PyObject *gx[3] = {PyTuple_GET_ITEM(gt, 0), PyTuple_GET_ITEM(gt, 1),
					   PyTuple_GET_ITEM(gt, 2)};

			vec[0] = gx[0];
			vec[1] = gx[1];
			vec[2] = gx[2];
			vec[3] = stream_o;
			vec[4] = PyTuple_GET_ITEM(S, S_FUNCTION);
			vec[5] = PyTuple_GET_ITEM(S, S_PACKED);
			vec[6] = md;
			vec[7] = enter;
			vec[8] = exitp;
			r = PyObject_Vectorcall(PyTuple_GET_ITEM(S, S_RUN), vec, (size_t)nargs,
						NULL);
		}
		if (vec != small)
			PyMem_Free(vec);
		if (!r)
			goto fail_launch;
	}

	{
		struct fp_dbg_pipe_job job = {.kernel = kname,
					      .source_file = file,
					      .site_table = sites,
					      .site_len = (size_t)slen,
					      .launch_json = text.p,
					      .launch_len = text.len,
					      .launch_index = (uint64_t)index};

		fp_diag_clear(&diag);
		reserved = false; /* submit owns the slice now, also when it fails */
		kept = false;     /* and the run is the launch's, as on the Python path */
		Py_BEGIN_ALLOW_THREADS st =
			fp_dbg_pipe_submit(pipe, off, (size_t)nbytes, stream, &job, &diag);
		Py_END_ALLOW_THREADS if (st)
		{
			fpy_raise(module, st, &diag);
			goto fail_launch;
		}
	}
	{
		PyObject *counters = PyTuple_GET_ITEM(F, F_COUNTERS);

		/* the launch happened: a counter that cannot be raised is not an error of it */
		for (i = 0; i < (Py_ssize_t)N_COUNTERS; i++) {
			if (i == 2 && PyTuple_GET_ITEM(S, S_REGISTERS) == Py_None)
				continue; /* registers_reused: only where a decision was made */
			if (bump(counters, s_counters[i]))
				PyErr_Clear();
		}
	}
	ret = Py_NewRef(PyTuple_GET_ITEM(P, P_ORIGINAL));
	goto out;

pass:
	PyErr_Clear();
	ret = Py_NewRef(Py_None);
	goto out;
fail_launch:
	ret = NULL;
out:
	if (reserved || kept) {
		PyObject *et, *ev, *tb;

		PyErr_Fetch(&et, &ev, &tb);
		if (reserved)
			fp_dbg_pipe_unreserve(pipe, off);
		if (kept)
			unkeep_run(F, argv[4], run);
		PyErr_Restore(et, ev, tb);
	}
	PyMem_Free(text.p);
	if (hdr != hdr_small)
		PyMem_Free(hdr);
	Py_XDECREF(b);
	Py_XDECREF(sc);
	Py_XDECREF(opts);
	Py_XDECREF(key);
	Py_XDECREF(P);
	Py_XDECREF(skey);
	Py_XDECREF(S);
	Py_XDECREF(enter);
	Py_XDECREF(exitp);
	Py_XDECREF(stream_o);
	Py_XDECREF(stack);
	Py_XDECREF(stackj);
	Py_XDECREF(run);
	Py_XDECREF(v0);
	Py_XDECREF(v1);
	Py_XDECREF(addr);
	Py_XDECREF(md);
	Py_XDECREF(gt);
	Py_XDECREF(r);
	return ret;
}

PyDoc_STRVAR(
	debug_fast_launch_json_doc,
	"debug_fast_launch_json(F, P, S, grid, index, slots, stack_json, test_json, dyn,\n"
	"                       second) -> str\n\n"
	"The launch JSON debug_fast_launch() writes for those values (the clock at `second`);\n"
	"for tests, which compare it with _dbgexport.launch_json().");

static PyObject *debug_fast_launch_json(PyObject *module, PyObject *const *argv, Py_ssize_t argc)
{
	PyObject *out;
	long long g[3], index, slots, sec;
	char stamp[32], iso[40];
	struct tb text = {0};
	Py_ssize_t i;

	(void)module;
	if (argc != 10) {
		PyErr_SetString(PyExc_TypeError, "debug_fast_launch_json takes 10 arguments");
		return NULL;
	}
	if (check_tuple(argv[0], F_LEN, "F") || check_tuple(argv[1], P_LEN, "P") ||
	    check_tuple(argv[2], S_LEN, "S") || check_tuple(argv[3], 3, "grid"))
		return NULL;
	for (i = 0; i < 3; i++)
		if (get_ll(PyTuple_GET_ITEM(argv[3], i), &g[i]))
			return NULL;
	if (get_ll(argv[4], &index) || get_ll(argv[5], &slots) || get_ll(argv[9], &sec))
		return NULL;
	if (fmt_stamp(sec, stamp, iso)) {
		PyErr_SetString(PyExc_ValueError, "debug_fast_launch_json: bad second");
		return NULL;
	}
	if (launch_json(&text, argv[0], argv[1], argv[2], g, index, slots, argv[6], argv[7],
			argv[8], stamp, iso)) {
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
