/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `flagprism doctor`: can FlagPrism work here, and if not, why. A small Python probe (embedded
 * below, run with `python -c`) reports what only Python knows: the packages, the Triton
 * interpreter, what PyTorch sees of the GPU and where the wheels keep libcupti. Then the CUPTI
 * probe of the library and the hardware-counter permission check run in this process. The result
 * is a report with one verdict per area, or one JSON object. It diagnoses; it never installs,
 * fixes or changes anything.
 */
#include "tool.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <flagprism/compat.h>
#include <flagprism/cupti.h>
#include <flagprism/json.h>
#include <flagprism/version.h>

/*
 * The probe prints `key=value` lines, flushed one by one so that whatever it learned survives a
 * crash of a later step (a broken CUDA install can take the interpreter down). Every item is
 * guarded; a module that is absent reads "not installed", one that fails "error: ...". The
 * report goes to a private copy of stdout, and fd 1 is pointed at stderr, so that whatever the
 * imported packages print (from Python or from C) cannot be mistaken for a report line. The
 * script's own directory ('' for -c) is dropped from sys.path so that a source tree in the
 * current directory does not shadow the installed packages.
 */
static const char probe_script[] =
	"import os, sys\n"
	"if sys.path and sys.path[0] == '':\n"
	"    del sys.path[0]\n"
	"report = os.fdopen(os.dup(1), 'w', encoding='utf-8', errors='replace')\n"
	"os.dup2(2, 1)\n"
	"def out(key, value):\n"
	"    text = str(value).replace(chr(10), ' ').replace(chr(13), ' ')\n"
	"    report.write(key + '=' + text + chr(10))\n"
	"    report.flush()\n"
	"def why(e, names=()):\n"
	"    if isinstance(e, ModuleNotFoundError) and e.name in names:\n"
	"        return 'not installed'\n"
	"    return 'error: ' + type(e).__name__ + ': ' + str(e)\n"
	"out('python.version', sys.version.split()[0])\n"
	"out('python.executable', sys.executable)\n"
	"try:\n"
	"    import flagprism\n"
	"    out('flagprism.version', getattr(flagprism, '__version__', 'unknown'))\n"
	"    out('flagprism.path', os.path.dirname(os.path.abspath(flagprism.__file__ or '.')))\n"
	"except BaseException as e:\n"
	"    out('flagprism.version', why(e, ('flagprism',)))\n"
	"try:\n"
	"    import flagprism._ext as ext\n"
	"    v = getattr(ext, '__version__', None) or getattr(ext, 'version', None)\n"
	"    out('flagprism.ext_version', (v() if callable(v) else v) or 'unknown')\n"
	"except BaseException as e:\n"
	"    out('flagprism.ext_version', why(e, ('flagprism', 'flagprism._ext')))\n"
	"try:\n"
	"    import numpy\n"
	"    out('numpy.version', numpy.__version__)\n"
	"except BaseException as e:\n"
	"    out('numpy.version', why(e, ('numpy',)))\n"
	"tdir = None\n"
	"try:\n"
	"    import triton\n"
	"    tdir = os.path.dirname(os.path.abspath(triton.__file__))\n"
	"    out('triton.version', triton.__version__)\n"
	"    out('triton.dir', tdir)\n"
	"    if os.path.isfile(os.path.join(tdir, 'backends', 'ascend', 'compiler.py')):\n"
	"        out('triton.vendor', 'ascend')\n"
	"except BaseException as e:\n"
	"    out('triton.version', why(e, ('triton',)))\n"
	"try:\n"
	"    import triton.runtime.interpreter\n"
	"    out('triton.interpreter', 'importable')\n"
	"except BaseException as e:\n"
	"    names = ('triton', 'triton.runtime', 'triton.runtime.interpreter')\n"
	"    out('triton.interpreter', why(e, names))\n"
	"if 'TRITON_INTERPRET' in os.environ:\n"
	"    out('env.TRITON_INTERPRET', os.environ['TRITON_INTERPRET'])\n"
	"torch = None\n"
	"try:\n"
	"    import torch\n"
	"    out('torch.version', torch.__version__)\n"
	"except BaseException as e:\n"
	"    torch = None\n"
	"    out('torch.version', why(e, ('torch',)))\n"
	"if torch is not None:\n"
	"    try:\n"
	"        out('cuda.runtime', torch.version.cuda or 'none')\n"
	"        out('hip.runtime', getattr(torch.version, 'hip', None) or 'none')\n"
	"    except BaseException as e:\n"
	"        out('cuda.runtime', why(e))\n"
	"    try:\n"
	"        ok = bool(torch.cuda.is_available())\n"
	"        out('cuda.available', 'yes' if ok else 'no')\n"
	"        n = torch.cuda.device_count() if ok else 0\n"
	"        out('cuda.device_count', n)\n"
	"        if n > 0:\n"
	"            out('cuda.device0.name', torch.cuda.get_device_name(0))\n"
	"            cc = torch.cuda.get_device_capability(0)\n"
	"            out('cuda.device0.capability', '%d.%d' % (cc[0], cc[1]))\n"
	"    except BaseException as e:\n"
	"        out('cuda.available', why(e))\n"
	"dirs = None\n"
	"try:\n"
	"    from flagprism.profiler import cupti_search_dirs\n"
	"    dirs = cupti_search_dirs()\n"
	"except BaseException:\n"
	"    dirs = None\n"
	"if dirs is None:\n"
	"    dirs = []\n"
	"    if tdir:\n"
	"        dirs.append(os.path.join(tdir, 'backends', 'nvidia', 'lib', 'cupti'))\n"
	"    try:\n"
	"        import importlib.util\n"
	"        spec = importlib.util.find_spec('nvidia')\n"
	"        for loc in (spec.submodule_search_locations or []) if spec else []:\n"
	"            dirs.append(os.path.join(loc, 'cu13', 'lib'))\n"
	"            dirs.append(os.path.join(loc, 'cuda_cupti', 'lib'))\n"
	"    except BaseException:\n"
	"        pass\n"
	"out('cupti.dirs', os.pathsep.join(d for d in dirs if os.path.isdir(d)))\n"
	"out('probe.done', '1')\n";

#define PROBE_MAX_ITEMS 64
#define PROBE_MAX_BYTES (256u * 1024u)
#define CUPTI_MAX_DIRS 16
#define REASON_MAX 2048

struct probe {
	struct {
		const char *key;
		const char *value;
	} items[PROBE_MAX_ITEMS];
	size_t n;
};

struct verdict {
	const char *title; /* for people */
	const char *key;   /* for JSON */
	bool ready;
	size_t known_issues; /* rows of the known-bad table (compat.h) said in `reason` */
	char reason[REASON_MAX];
};

struct doctor {
	struct fpt_python py;
	struct fpt_capture cap;
	struct probe probe;
	bool probe_done; /* the probe reached its last line */
	char dirs_buf[FPT_PATH_MAX * 2];
	const char *cupti_dirs[CUPTI_MAX_DIRS];
	size_t n_cupti_dirs;
	struct fp_cupti_probe_result cupti;
	int cupti_status;
	struct fp_cupti_counters_info counters;
	struct verdict verdicts[4];
	char notes[4][REASON_MAX];
	size_t n_notes;
};

/* Split the probe's stdout into key/value pairs, in place. Later duplicates win. */
static void probe_parse(struct probe *p, char *text)
{
	char *line = text, *nl, *eq;

	p->n = 0;
	while (*line && p->n < PROBE_MAX_ITEMS) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		eq = strchr(line, '=');
		if (eq && eq != line) {
			*eq = '\0';
			p->items[p->n].key = line;
			p->items[p->n].value = eq + 1;
			p->n++;
		}
		if (!nl)
			break;
		line = nl + 1;
	}
}

/* The probe's value for `key`, or NULL when it never said. */
static const char *pv(const struct doctor *d, const char *key)
{
	size_t i;

	for (i = d->probe.n; i-- > 0;)
		if (strcmp(d->probe.items[i].key, key) == 0)
			return d->probe.items[i].value;
	return NULL;
}

/* A package line: a version (or "importable"), "not installed", "error: ...", or unknown. */
static bool pkg_ok(const char *v)
{
	return v && v[0] && strcmp(v, "not installed") != 0 && strncmp(v, "error:", 6) != 0;
}

static const char *pkg_error(const char *v)
{
	return v && strncmp(v, "error:", 6) == 0 ? v + 6 + (v[6] == ' ') : NULL;
}

/* The installed triton package is Triton-Ascend's (it ships the ascend backend): its version is
 * the component "triton-ascend", with a tested range of its own (include/flagprism/compat.h). */
static bool triton_is_ascend(const struct doctor *d)
{
	const char *v = pv(d, "triton.vendor");

	return v && strcmp(v, "ascend") == 0;
}

/* Whether an installed Triton version is in the supported range (include/flagprism/compat.h), or
 * Triton-Ascend's in its tested range: 1 in it, 0 outside it, -1 unknown (not installed, or no
 * leading number). */
static int triton_in_range(const struct doctor *d, const char *v)
{
	int c;

	if (!pkg_ok(v) || fp_compat_version_cmp(v, v, &c) != 0)
		return -1;
	if (triton_is_ascend(d))
		return fp_compat_version_in(v, FP_COMPAT_TRITON_ASCEND_MIN,
					    FP_COMPAT_TRITON_ASCEND_BELOW) ?
			       1 :
			       0;
	return fp_compat_version_in(v, FP_COMPAT_TRITON_MIN, FP_COMPAT_TRITON_BELOW) ? 1 : 0;
}

static bool truthy(const char *v)
{
	static const char *const yes[] = {"1", "true", "yes", "on", "y"};
	size_t i;

	if (!v)
		return false;
	for (i = 0; i < FPT_ARRAY_SIZE(yes); i++)
		if (strcasecmp(v, yes[i]) == 0)
			return true;
	return false;
}

static bool is_yes(const char *v)
{
	return v && strcmp(v, "yes") == 0;
}

static long device_count(const struct doctor *d)
{
	const char *v = pv(d, "cuda.device_count");

	return v ? strtol(v, NULL, 10) : 0;
}

static bool gpu_visible(const struct doctor *d)
{
	return is_yes(pv(d, "cuda.available")) && device_count(d) > 0;
}

static bool runtime_set(const char *v)
{
	return v && v[0] && strcmp(v, "none") != 0 && strncmp(v, "error:", 6) != 0;
}

FPT_PRINTF(2, 3)
static void add_reason(struct verdict *v, const char *fmt, ...)
{
	size_t len = strlen(v->reason);
	va_list ap;

	if (len + 3 >= sizeof(v->reason))
		return;
	if (len) {
		memcpy(v->reason + len, "; ", 3);
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(v->reason + len, sizeof(v->reason) - len, fmt, ap);
	va_end(ap);
}

FPT_PRINTF(2, 3)
static void add_note(struct doctor *d, const char *fmt, ...)
{
	va_list ap;

	if (d->n_notes >= FPT_ARRAY_SIZE(d->notes))
		return;
	va_start(ap, fmt);
	vsnprintf(d->notes[d->n_notes++], sizeof(d->notes[0]), fmt, ap);
	va_end(ap);
}

/* Mark `v` not ready unless package `key` imported; `label` names it for people. */
static void require_pkg(struct doctor *d, struct verdict *v, const char *label, const char *key)
{
	const char *val = pv(d, key), *err = pkg_error(val);

	if (pkg_ok(val))
		return;
	v->ready = false;
	/* The exception itself is in the package's row (and JSON `packages`): said once there. */
	if (err)
		add_reason(v, "%s fails to import", label);
	else if (val)
		add_reason(v, "%s is not installed", label);
	else
		add_reason(v, "%s was not checked (the Python probe stopped early)", label);
}

static void require_gpu(struct doctor *d, struct verdict *v, bool nvidia_only)
{
	const char *avail = pv(d, "cuda.available"), *err = pkg_error(avail);
	const char *cuda = pv(d, "cuda.runtime"), *hip = pv(d, "hip.runtime");

	if (!pkg_ok(pv(d, "torch.version")))
		return; /* already said: PyTorch is missing */
	if (err) {
		v->ready = false;
		add_reason(v, "torch.cuda.is_available() fails");
		return;
	}
	if (!runtime_set(cuda) && !runtime_set(hip)) {
		v->ready = false;
		add_reason(v, "PyTorch is a CPU-only build");
		return;
	}
	if (nvidia_only && !runtime_set(cuda)) {
		v->ready = false;
		add_reason(v, "CUPTI needs an NVIDIA GPU; this PyTorch is built for ROCm");
		return;
	}
	if (!gpu_visible(d)) {
		v->ready = false;
		add_reason(v, "no GPU visible to PyTorch (torch.cuda.is_available() is False)");
	}
}

/*
 * The rows of the library's known-bad table (compat.h) that apply to what the probe found, for
 * kernels running in `modes`. Stores up to `cap` in `out` and returns how many apply.
 */
static size_t known_issues(const struct doctor *d, unsigned modes,
			   const struct fp_compat_issue **out, size_t cap)
{
	static const struct {
		const char *component, *key;
	} keys[] = {{"python", "python.version"},
		    {"triton", "triton.version"},
		    {"triton-ascend", "triton.version"},
		    {"numpy", "numpy.version"},
		    {"torch", "torch.version"}};
	struct fp_compat_have have[FPT_ARRAY_SIZE(keys)];
	size_t i;

	for (i = 0; i < FPT_ARRAY_SIZE(keys); i++) {
		const char *v = pv(d, keys[i].key);

		have[i].component = keys[i].component;
		have[i].version = pkg_ok(v) ? v : NULL;
		/* one triton package: upstream's rows or Triton-Ascend's, never both */
		if (strcmp(keys[i].component, "triton") == 0 && triton_is_ascend(d))
			have[i].version = NULL;
		if (strcmp(keys[i].component, "triton-ascend") == 0 && !triton_is_ascend(d))
			have[i].version = NULL;
	}
	return fp_compat_check(have, FPT_ARRAY_SIZE(have), modes, out, cap);
}

/* Add "but <what breaks>; <workaround> [id]" to `v` for each known-bad row in `modes`. */
static void add_known_issues(const struct doctor *d, struct verdict *v, unsigned modes)
{
	const struct fp_compat_issue *hit[8];
	size_t i, n = known_issues(d, modes, hit, FPT_ARRAY_SIZE(hit));

	for (i = 0; i < n && i < FPT_ARRAY_SIZE(hit); i++)
		add_reason(v, "but %s; %s [%s]", hit[i]->breaks, hit[i]->workaround, hit[i]->id);
	if (n > FPT_ARRAY_SIZE(hit))
		add_reason(v, "and %zu more known problems (flagprism doctor --json lists them)",
			   n - FPT_ARRAY_SIZE(hit));
	v->known_issues = n;
}

static const char *describe_exit(const struct fpt_capture *cap, char *buf, size_t size)
{
	if (cap->timed_out)
		snprintf(buf, size, "timed out");
	else if (cap->exit_code < 0)
		snprintf(buf, size, "killed by signal %d", -cap->exit_code);
	else
		snprintf(buf, size, "exit status %d", cap->exit_code);
	return buf;
}

/* The last non-blank line of what the child wrote (usually the exception), trimmed in place. */
static const char *last_line(struct fp_strbuf *sb)
{
	char *end = sb->buf + sb->len, *start;

	while (end > sb->buf && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	if (end == sb->buf)
		return "no message";
	if (sb->alloc) /* the shared empty string is never written to */
		*end = '\0';
	start = end;
	while (start > sb->buf && start[-1] != '\n')
		start--;
	return start;
}

static void judge(struct doctor *d)
{
	struct verdict *v;
	bool interp = truthy(pv(d, "env.TRITON_INTERPRET"));
	const char *pkg = pv(d, "flagprism.version");

	v = &d->verdicts[0];
	v->title = "Debugger on interpreter";
	v->key = "debugger_interpreter";
	v->ready = true;
	require_pkg(d, v, "flagprism", "flagprism.version");
	require_pkg(d, v, "triton", "triton.version");
	if (pkg_ok(pv(d, "triton.version")))
		require_pkg(d, v, "triton.runtime.interpreter", "triton.interpreter");
	require_pkg(d, v, "numpy", "numpy.version");
	require_pkg(d, v, "torch", "torch.version");
	if (v->ready) {
		add_reason(v, interp ? "TRITON_INTERPRET is set" : "run with TRITON_INTERPRET=1");
		add_known_issues(d, v, FP_COMPAT_INTERPRETER);
	}

	v = &d->verdicts[1];
	v->title = "Debugger on GPU";
	v->key = "debugger_gpu";
	v->ready = true;
	require_pkg(d, v, "flagprism", "flagprism.version");
	require_pkg(d, v, "triton", "triton.version");
	require_pkg(d, v, "torch", "torch.version");
	require_gpu(d, v, false);
	if (v->ready) {
		add_reason(v, "device 0: %s (compute capability %s)",
			   pv(d, "cuda.device0.name") ? pv(d, "cuda.device0.name") : "?",
			   pv(d, "cuda.device0.capability") ? pv(d, "cuda.device0.capability") :
							      "?");
		if (interp)
			add_reason(v, "TRITON_INTERPRET is set, so kernels run on the interpreter; "
				      "unset it for the GPU");
		add_known_issues(d, v, FP_COMPAT_GPU);
	}

	v = &d->verdicts[2];
	v->title = "Profiler (host backend)";
	v->key = "profiler_host";
	v->ready = true;
	require_pkg(d, v, "flagprism", "flagprism.version");
	if (pkg_ok(pkg))
		require_pkg(d, v, "the flagprism._ext extension", "flagprism.ext_version");
	if (v->ready)
		add_reason(v, "times launches on the host, on the interpreter and every GPU");

	v = &d->verdicts[3];
	v->title = "Profiler (CUPTI backend)";
	v->key = "profiler_cupti";
	v->ready = true;
	require_pkg(d, v, "flagprism", "flagprism.version");
	if (pkg_ok(pkg))
		require_pkg(d, v, "the flagprism._ext extension", "flagprism.ext_version");
	require_pkg(d, v, "torch", "torch.version");
	require_gpu(d, v, true);
	if (!d->cupti.found) {
		v->ready = false;
		add_reason(v, "%s", d->cupti.error[0] ? d->cupti.error : "libcupti not found");
	} else if (v->ready) {
		add_reason(v, "libcupti API version %u", (unsigned)d->cupti.api_version);
		if (!d->cupti.nvperf_host)
			add_reason(v, "hardware counters need libnvperf_host.so next to libcupti");
		if (!d->cupti.pcsampling)
			add_reason(v, "this libcupti has no PC-sampling API (--mode pcsampling)");
		if (d->counters.access == FP_CUPTI_COUNTERS_ADMIN_ONLY)
			add_reason(v,
				   "hardware counters and PC sampling are admin-only here (kernel "
				   "tracing is not affected)");
	}

	if (pkg_ok(pkg) && strcmp(pkg, "unknown") != 0 && strcmp(pkg, FP_VERSION_STRING) != 0)
		add_note(d, "the flagprism package is version %s but this command is %s", pkg,
			 FP_VERSION_STRING);
	if (!d->probe_done) {
		char how[64];

		add_note(d, "the Python probe stopped early (%s): %s",
			 describe_exit(&d->cap, how, sizeof(how)), last_line(&d->cap.err));
	}
}

/* Split the probe's cupti.dirs (':'-separated) into the list passed to fp_cupti_probe(). */
static void collect_cupti_dirs(struct doctor *d)
{
	const char *v = pv(d, "cupti.dirs");
	char *p, *colon;

	d->n_cupti_dirs = 0;
	if (!v || !v[0])
		return;
	snprintf(d->dirs_buf, sizeof(d->dirs_buf), "%s", v);
	for (p = d->dirs_buf; p && *p && d->n_cupti_dirs < CUPTI_MAX_DIRS; p = colon) {
		colon = strchr(p, ':');
		if (colon)
			*colon++ = '\0';
		if (*p)
			d->cupti_dirs[d->n_cupti_dirs++] = p;
	}
}

/* ---- human-readable report ------------------------------------------------------------------ */

#define LABEL_WIDTH 20

FPT_PRINTF(2, 3)
static void row(const char *label, const char *fmt, ...)
{
	va_list ap;

	printf("  %-*s ", LABEL_WIDTH, label);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static const char *or_unknown(const char *v)
{
	return v ? v : "unknown (not probed)";
}

static const char *cupti_origin_text(enum fp_cupti_origin origin)
{
	switch (origin) {
	case FP_CUPTI_ORIGIN_PROCESS:
		return "already loaded in this process";
	case FP_CUPTI_ORIGIN_ENV:
		return "from $" FP_CUPTI_PATH_ENV;
	case FP_CUPTI_ORIGIN_EXTRA:
		return "from the Python environment";
	case FP_CUPTI_ORIGIN_TOOLKIT:
		return "from the CUDA toolkit";
	case FP_CUPTI_ORIGIN_LOADER:
		return "from the dynamic loader's search path";
	case FP_CUPTI_ORIGIN_NONE:
		break;
	}
	return "not found";
}

static const char *counters_access_name(enum fp_cupti_counters access)
{
	switch (access) {
	case FP_CUPTI_COUNTERS_ALLOWED:
		return "allowed";
	case FP_CUPTI_COUNTERS_ADMIN_ONLY:
		return "admin-only";
	case FP_CUPTI_COUNTERS_UNKNOWN:
		break;
	}
	return "unknown";
}

static void print_counters(const struct fp_cupti_counters_info *c)
{
	static const char *const text[] = {"unknown", "permitted", "not permitted (admin-only)"};

	row("counters/PC sampling", "%s", text[(unsigned)c->access < 3 ? c->access : 0]);
	row("", "%s", c->detail);
	if (c->access == FP_CUPTI_COUNTERS_ADMIN_ONLY) {
		row("",
		    "to enable: add 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' to a");
		row("",
		    "file in /etc/modprobe.d/ and reload the driver (or reboot), or run as root");
		row("", "or with CAP_PERFMON (driver R565+) or CAP_SYS_ADMIN");
	}
}

static void print_text(const struct doctor *d)
{
	char api[16];
	const char *v;
	size_t i;

	snprintf(api, sizeof(api), "%u", (unsigned)d->cupti.api_version);

	printf("flagprism %s doctor\n\nPython\n", FP_VERSION_STRING);
	row("executable", "%s (from %s)", d->py.path, d->py.origin);
	row("version", "%s", or_unknown(pv(d, "python.version")));

	puts("Packages");
	row("flagprism", "%s", or_unknown(pv(d, "flagprism.version")));
	if (pkg_ok(pv(d, "flagprism.version")) && pv(d, "flagprism.path"))
		row("", "in %s", pv(d, "flagprism.path"));
	row("flagprism._ext", "%s", or_unknown(pv(d, "flagprism.ext_version")));
	row("triton", "%s", or_unknown(pv(d, "triton.version")));
	if (pv(d, "triton.dir"))
		row("", "in %s", pv(d, "triton.dir"));
	if (triton_is_ascend(d))
		row("",
		    "Triton-Ascend: %s (FlagPrism's Ascend tests use >= %s, < %s; what works "
		    "there: docs/guide/backends.md)",
		    triton_in_range(d, pv(d, "triton.version")) == 1 ? "tested" : "NOT tested",
		    FP_COMPAT_TRITON_ASCEND_MIN, FP_COMPAT_TRITON_ASCEND_BELOW);
	else
		switch (triton_in_range(d, pv(d, "triton.version"))) {
		case 1:
			row("", "supported (FlagPrism supports Triton >= %s, < %s)",
			    FP_COMPAT_TRITON_MIN, FP_COMPAT_TRITON_BELOW);
			break;
		case 0:
			row("", "NOT in the supported range (Triton >= %s, < %s): see the verdicts",
			    FP_COMPAT_TRITON_MIN, FP_COMPAT_TRITON_BELOW);
			break;
		default:
			break;
		}
	row("triton interpreter", "%s", or_unknown(pv(d, "triton.interpreter")));
	row("torch", "%s", or_unknown(pv(d, "torch.version")));
	row("numpy", "%s", or_unknown(pv(d, "numpy.version")));

	puts("Environment");
	v = pv(d, "env.TRITON_INTERPRET");
	row("TRITON_INTERPRET", "%s", v ? v : "unset");

	puts("GPU");
	v = pv(d, "cuda.available");
	if (!pkg_ok(pv(d, "torch.version")))
		row("torch.cuda", "unknown (PyTorch not available)");
	else if (pkg_error(v))
		row("torch.cuda", "%s", v);
	else
		row("torch.cuda", "%s, %ld device(s)", is_yes(v) ? "available" : "not available",
		    device_count(d));
	if (pv(d, "cuda.device0.name"))
		row("device 0", "%s (compute capability %s)", pv(d, "cuda.device0.name"),
		    or_unknown(pv(d, "cuda.device0.capability")));
	if (runtime_set(pv(d, "hip.runtime")))
		row("HIP runtime", "%s", pv(d, "hip.runtime"));
	else if (pv(d, "cuda.runtime"))
		row("CUDA runtime", "%s",
		    runtime_set(pv(d, "cuda.runtime")) ? pv(d, "cuda.runtime") :
							 "none (CPU-only PyTorch)");

	puts("CUPTI");
	if (d->cupti.path[0]) {
		row("libcupti", "%s", d->cupti.path);
		row("", "%s%s%s", cupti_origin_text(d->cupti.origin),
		    d->cupti.found ? "; API version " : "", d->cupti.found ? api : "");
		row("libnvperf_host.so", "%s", d->cupti.nvperf_host ? "beside it" : "missing");
		if (d->cupti.found)
			row("PC sampling API", "%s",
			    d->cupti.pcsampling ? "present (--mode pcsampling)" : "missing");
	}
	if (d->cupti.error[0])
		row(d->cupti.found ? "note" : "error", "%s", d->cupti.error);
	print_counters(&d->counters);

	puts("\nVerdict");
	for (i = 0; i < FPT_ARRAY_SIZE(d->verdicts); i++) {
		const struct verdict *vd = &d->verdicts[i];

		printf("  %-25s %s%s%s\n", vd->title,
		       !vd->ready       ? "not ready" :
		       vd->known_issues ? "ready, with a known problem" :
					  "ready",
		       vd->reason[0] ? ": " : "", vd->reason);
	}
	for (i = 0; i < d->n_notes; i++)
		printf("%s  note: %s\n", i ? "" : "\n", d->notes[i]);
}

/* ---- JSON ----------------------------------------------------------------------------------- */

/* {"installed": bool, "version": "..." | null, "error": "..." | null} */
static void json_pkg(struct fp_jsonw *w, const struct doctor *d, const char *name, const char *key,
		     bool has_version)
{
	const char *v = pv(d, key);

	fp_jsonw_key(w, name);
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_bool(w, "installed", pkg_ok(v));
	if (has_version)
		fp_jsonw_kv_string(w, "version", pkg_ok(v) ? v : NULL);
	fp_jsonw_kv_string(w, "error", pkg_error(v));
	if (strcmp(name, "flagprism") == 0)
		fp_jsonw_kv_string(w, "path", pv(d, "flagprism.path"));
	if (strcmp(name, "triton") == 0) {
		bool ascend = triton_is_ascend(d);
		int in = triton_in_range(d, v);

		fp_jsonw_kv_string(w, "dir", pv(d, "triton.dir"));
		fp_jsonw_kv_string(w, "vendor", ascend ? "ascend" : NULL);
		/* upstream Triton's range; Triton-Ascend has its tested range instead */
		fp_jsonw_key(w, "supported");
		if (in < 0 || ascend)
			fp_jsonw_null(w);
		else
			fp_jsonw_bool(w, in == 1);
		fp_jsonw_kv_string(w, "supported_range",
				   ">= " FP_COMPAT_TRITON_MIN ", < " FP_COMPAT_TRITON_BELOW);
		if (ascend) {
			fp_jsonw_kv_bool(w, "ascend_tested", in == 1);
			fp_jsonw_kv_string(w, "ascend_tested_range",
					   ">= " FP_COMPAT_TRITON_ASCEND_MIN
					   ", < " FP_COMPAT_TRITON_ASCEND_BELOW);
		}
	}
	fp_jsonw_object_end(w);
}

/* "known_issues": the rows of the known-bad table that apply here, in either mode. */
static void json_known_issues(struct fp_jsonw *w, const struct doctor *d)
{
	size_t cap = fp_compat_issue_count(), i, j, n;
	const struct fp_compat_issue **hit = calloc(cap ? cap : 1, sizeof(*hit));

	/* room for every row of the table, so none that applies is left out */
	n = hit ? known_issues(d, FP_COMPAT_ANY, hit, cap) : 0;
	fp_jsonw_key(w, "known_issues");
	fp_jsonw_array_begin(w);
	for (i = 0; i < n && i < cap; i++) {
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "id", hit[i]->id);
		fp_jsonw_key(w, "modes");
		fp_jsonw_array_begin(w);
		if (hit[i]->modes & FP_COMPAT_INTERPRETER)
			fp_jsonw_string(w, "interpreter");
		if (hit[i]->modes & FP_COMPAT_GPU)
			fp_jsonw_string(w, "gpu");
		fp_jsonw_array_end(w);
		fp_jsonw_key(w, "when");
		fp_jsonw_array_begin(w);
		for (j = 0; j < FP_COMPAT_MAX_RANGES && hit[i]->when[j].component; j++) {
			fp_jsonw_object_begin(w);
			fp_jsonw_kv_string(w, "component", hit[i]->when[j].component);
			fp_jsonw_kv_string(w, "min", hit[i]->when[j].min);
			fp_jsonw_kv_string(w, "below", hit[i]->when[j].below);
			fp_jsonw_object_end(w);
		}
		fp_jsonw_array_end(w);
		fp_jsonw_kv_string(w, "feature", hit[i]->feature);
		fp_jsonw_kv_string(w, "breaks", hit[i]->breaks);
		fp_jsonw_kv_string(w, "workaround", hit[i]->workaround);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	free(hit);
}

static const char *runtime_or_null(const char *v)
{
	return runtime_set(v) ? v : NULL;
}

static int print_json(const struct doctor *d)
{
	struct fp_jsonw *w = fp_jsonw_new_file(stdout, FP_JSONW_PRETTY);
	const char *avail = pv(d, "cuda.available");
	size_t i;
	int rc;

	if (!w)
		return fpt_status_error(FP_ENOMEM, NULL, NULL, "cannot write JSON");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "flagprism_cli", FP_VERSION_STRING);

	fp_jsonw_key(w, "python");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "executable", d->py.path);
	fp_jsonw_kv_string(w, "origin", d->py.origin);
	fp_jsonw_kv_string(w, "version", pv(d, "python.version"));
	fp_jsonw_kv_bool(w, "probe_complete", d->probe_done);
	fp_jsonw_kv_int(w, "probe_exit_code", d->cap.exit_code);
	fp_jsonw_object_end(w);

	fp_jsonw_key(w, "packages");
	fp_jsonw_object_begin(w);
	json_pkg(w, d, "flagprism", "flagprism.version", true);
	json_pkg(w, d, "flagprism._ext", "flagprism.ext_version", true);
	json_pkg(w, d, "triton", "triton.version", true);
	json_pkg(w, d, "triton.runtime.interpreter", "triton.interpreter", false);
	json_pkg(w, d, "torch", "torch.version", true);
	json_pkg(w, d, "numpy", "numpy.version", true);
	fp_jsonw_object_end(w);

	fp_jsonw_key(w, "env");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "TRITON_INTERPRET", pv(d, "env.TRITON_INTERPRET"));
	fp_jsonw_object_end(w);

	fp_jsonw_key(w, "gpu");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_bool(w, "available", is_yes(avail));
	fp_jsonw_kv_string(w, "error", pkg_error(avail));
	fp_jsonw_kv_int(w, "device_count", device_count(d));
	fp_jsonw_kv_string(w, "cuda_runtime", runtime_or_null(pv(d, "cuda.runtime")));
	fp_jsonw_kv_string(w, "hip_runtime", runtime_or_null(pv(d, "hip.runtime")));
	fp_jsonw_key(w, "device0");
	if (pv(d, "cuda.device0.name")) {
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "name", pv(d, "cuda.device0.name"));
		fp_jsonw_kv_string(w, "capability", pv(d, "cuda.device0.capability"));
		fp_jsonw_object_end(w);
	} else {
		fp_jsonw_null(w);
	}
	fp_jsonw_object_end(w);

	fp_jsonw_key(w, "cupti");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_bool(w, "found", d->cupti.found);
	fp_jsonw_kv_string(w, "status", fp_status_name(d->cupti_status));
	fp_jsonw_kv_string(w, "path", d->cupti.path[0] ? d->cupti.path : NULL);
	fp_jsonw_kv_string(w, "origin", fp_cupti_origin_name(d->cupti.origin));
	if (d->cupti.found)
		fp_jsonw_kv_uint(w, "api_version", d->cupti.api_version);
	else
		fp_jsonw_kv_null(w, "api_version");
	fp_jsonw_kv_bool(w, "already_loaded", d->cupti.already_loaded);
	fp_jsonw_kv_bool(w, "nvperf_host", d->cupti.nvperf_host);
	fp_jsonw_kv_bool(w, "pcsampling_api", d->cupti.pcsampling);
	fp_jsonw_kv_string(w, "error", d->cupti.error[0] ? d->cupti.error : NULL);
	fp_jsonw_key(w, "extra_dirs");
	fp_jsonw_array_begin(w);
	for (i = 0; i < d->n_cupti_dirs; i++)
		fp_jsonw_string(w, d->cupti_dirs[i]);
	fp_jsonw_array_end(w);
	fp_jsonw_key(w, "counters");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "access", counters_access_name(d->counters.access));
	if (d->counters.admin_only < 0)
		fp_jsonw_kv_null(w, "admin_only");
	else
		fp_jsonw_kv_int(w, "admin_only", d->counters.admin_only);
	fp_jsonw_kv_bool(w, "privileged", d->counters.privileged);
	fp_jsonw_kv_string(w, "detail", d->counters.detail);
	fp_jsonw_object_end(w);
	fp_jsonw_object_end(w);

	fp_jsonw_key(w, "verdicts");
	fp_jsonw_object_begin(w);
	for (i = 0; i < FPT_ARRAY_SIZE(d->verdicts); i++) {
		fp_jsonw_key(w, d->verdicts[i].key);
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "title", d->verdicts[i].title);
		fp_jsonw_kv_bool(w, "ready", d->verdicts[i].ready);
		fp_jsonw_kv_string(w, "reason", d->verdicts[i].reason);
		fp_jsonw_kv_uint(w, "known_issues", d->verdicts[i].known_issues);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_object_end(w);

	json_known_issues(w, d);

	fp_jsonw_key(w, "notes");
	fp_jsonw_array_begin(w);
	for (i = 0; i < d->n_notes; i++)
		fp_jsonw_string(w, d->notes[i]);
	fp_jsonw_array_end(w);

	fp_jsonw_object_end(w);
	rc = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	if (rc != FP_OK)
		return fpt_status_error(rc, NULL, NULL, "cannot write the JSON report");
	putchar('\n');
	return FPT_EXIT_OK;
}

/* ---- the command ---------------------------------------------------------------------------- */

int cmd_doctor(int argc, char **argv)
{
	bool json = false;
	long timeout_s = 120;
	const struct fpt_option opts[] = {
		FPT_OPT_BOOL("json", 0, &json, "print one JSON object instead of the report"),
		FPT_OPT_INT("timeout", 0, &timeout_s, "SECONDS",
			    "give the Python probe this long (default 120)", 1, 3600),
		FPT_OPT_END(),
	};
	const char *py_args[] = {"-c", probe_script};
	struct doctor *d;
	int rc, nargs;

	rc = fpt_parse_options(argc, argv, opts, 0, &nargs);
	if (rc != FPT_CONTINUE)
		return rc;
	if (nargs > 0)
		return fpt_usage(argv[0], "unexpected argument '%s'", argv[1]);

	d = calloc(1, sizeof(*d));
	if (!d)
		return fpt_status_error(FP_ENOMEM, NULL, NULL, NULL);
	rc = FPT_EXIT_OK;
	if (fpt_python_find(&d->py) != FP_OK) {
		rc = fpt_die("%s", d->py.error);
		goto out;
	}
	if (fpt_python_capture(&d->py, py_args, FPT_ARRAY_SIZE(py_args), PROBE_MAX_BYTES,
			       (int)timeout_s * 1000, &d->cap) != FP_OK) {
		rc = fpt_die("%s", d->py.error);
		goto out_capture;
	}
	probe_parse(&d->probe, d->cap.out.buf);
	d->probe_done = pv(d, "probe.done") != NULL;
	/* Without even its first line, the interpreter did not run Python code: nothing to report. */
	if (!pv(d, "python.version")) {
		char how[64];

		rc = fpt_die("Python %s (from %s) did not run the probe (%s): %s", d->py.path,
			     d->py.origin, describe_exit(&d->cap, how, sizeof(how)),
			     last_line(&d->cap.err));
		goto out_capture;
	}

	collect_cupti_dirs(d);
	d->cupti_status = fp_cupti_probe(d->cupti_dirs, d->n_cupti_dirs, &d->cupti);
	fp_cupti_counters_check(&d->counters);
	judge(d);
	if (json)
		rc = print_json(d);
	else
		print_text(d);
out_capture:
	fpt_capture_release(&d->cap);
out:
	free(d);
	return rc;
}
