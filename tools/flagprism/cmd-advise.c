/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `flagprism advise PROFILE [-o advice.json]`: ranked, evidence-backed advice for the kernels
 * that take a profile's time, as text (and JSON with -o), or with --plan the profiling runs that
 * would let the rules that could not run do so. The rules, their evidence and the outputs are
 * the library's (include/flagprism/advise.h); this file reads the profile and the files beside
 * it (meta, trace) and the options, and reports. docs/cli/flagprism-advise.md is its manual.
 */
#include "view-common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <flagprism/advise.h>

const char cmd_advise_summary[] =
	"ranked advice on what to change in the kernels that take a profile's time";
const char cmd_advise_usage[] =
	"flagprism advise [-o ADVICE.json] [--with PROFILE]... [--top N] [--min-share FRACTION]\n"
	"                 [--no-trace] [--full-names] [-q] PROFILE\n"
	"flagprism advise --plan [--with PROFILE]... PROFILE";

struct input {
	const char *path;
	struct fp_calltree *tree;
	struct fp_strbuf meta, trace;
	char meta_path[FPT_PATH_MAX], trace_path[FPT_PATH_MAX];
};

struct withs {
	const char *paths[FP_ADVISE_MAX_EXTRA];
	size_t n;
	const char *cmd;
};

static int with_option(void *user, const char *value)
{
	struct withs *w = user;

	if (w->n == FP_ADVISE_MAX_EXTRA)
		return fpt_usage(w->cmd, "option '--with' may be given at most %u times",
				 FP_ADVISE_MAX_EXTRA);
	if (!value[0])
		return fpt_usage(w->cmd, "option '--with' needs a profile");
	w->paths[w->n++] = value;
	return FPT_CONTINUE;
}

/* PATH's stem: "x" for "x.hatchet", "x.meta.json", "x.json" or "x". */
static void stem_of(const char *path, char *buf, size_t size)
{
	static const char *const suffixes[] = {".meta.json", ".hatchet", ".json"};
	size_t i, n = strlen(path), m;

	for (i = 0; i < FPT_ARRAY_SIZE(suffixes); i++) {
		m = strlen(suffixes[i]);
		if (n > m && strcmp(path + n - m, suffixes[i]) == 0) {
			n -= m;
			break;
		}
	}
	snprintf(buf, size, "%.*s", (int)n, path);
}

/* Read a file found beside the profile, when it is there: a regular file only (a FIFO or a
 * device there is said and skipped, never waited on). FPT_CONTINUE, or an exit code. */
static int sidecar(const char *path, struct fp_strbuf *sb, bool *read)
{
	struct fp_diag diag;
	struct stat st;
	int rc;

	*read = false;
	if (stat(path, &st) != 0)
		return FPT_CONTINUE;
	memset(&diag, 0, sizeof(diag));
	rc = fp_strbuf_read_path(sb, path, FP_STRBUF_READ_REGULAR, &diag);
	if (rc == FP_ENOMEM)
		return fpt_die("out of memory reading %s", path);
	if (rc) {
		fpt_warn("not read: %s", diag.msg[0] ? diag.msg : path);
		fp_strbuf_reset(sb);
		return FPT_CONTINUE;
	}
	*read = true;
	return FPT_CONTINUE;
}

static int load(struct input *in, const char *path, bool trace)
{
	char stem[FPT_PATH_MAX - 32];
	struct fp_view_read_info info;
	bool read;
	int rc;

	in->path = path;
	fp_strbuf_init(&in->meta, 0);
	fp_strbuf_init(&in->trace, 0);
	rc = fpt_load_profile(path, &in->tree, &info);
	if (rc != FPT_CONTINUE)
		return rc;
	fpt_warn_incomplete(path, &info);
	stem_of(path, stem, sizeof(stem));
	snprintf(in->meta_path, sizeof(in->meta_path), "%s.meta.json", stem);
	snprintf(in->trace_path, sizeof(in->trace_path), "%s.chrome_trace.json", stem);
	rc = sidecar(in->meta_path, &in->meta, &read);
	if (rc != FPT_CONTINUE)
		return rc;
	if (!read)
		in->meta_path[0] = '\0';
	read = false;
	if (trace) {
		rc = sidecar(in->trace_path, &in->trace, &read);
		if (rc != FPT_CONTINUE)
			return rc;
	}
	if (!read)
		in->trace_path[0] = '\0';
	return FPT_CONTINUE;
}

static void unload(struct input *in)
{
	fp_calltree_free(in->tree);
	fp_strbuf_release(&in->meta);
	fp_strbuf_release(&in->trace);
}

static void profile_of(const struct input *in, struct fp_advise_profile *p)
{
	memset(p, 0, sizeof(*p));
	p->tree = in->tree;
	p->path = in->path;
	if (in->meta_path[0]) {
		p->meta = in->meta.buf ? in->meta.buf : "";
		p->meta_len = in->meta.len;
		p->meta_path = in->meta_path;
	}
	if (in->trace_path[0]) {
		p->trace = in->trace.buf ? in->trace.buf : "";
		p->trace_len = in->trace.len;
		p->trace_path = in->trace_path;
	}
}

/* "0.05" or "5%" as a fraction in (0, 1]. */
static bool parse_share(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno)
		return false;
	if (*end == '%') {
		v /= 100;
		end++;
	}
	if (*end || !(v > 0 && v <= 1))
		return false;
	*out = v;
	return true;
}

int cmd_advise(int argc, char **argv)
{
	struct withs withs = {.n = 0, .cmd = argv[0]};
	const char *out_path = NULL, *min_share = NULL;
	long top = 0;
	bool plan = false, no_trace = false, quiet = false, full_names = false;
	const struct fpt_option opts[] = {
		FPT_OPT_STRING("output", 'o', &out_path, "ADVICE.json",
			       "also write the advice as JSON ('-': standard output, instead of "
			       "the text)"),
		FPT_OPT_BOOL("plan", 0, &plan,
			     "print the `flagprism profile` runs that would let the rules that "
			     "could not run do so"),
		FPT_OPT_CALLBACK("with", 0, &withs, "PROFILE",
				 "another profile of the same program whose kernels add evidence "
				 "(a counters or PC-sampling run); repeatable",
				 with_option),
		FPT_OPT_INT("top", 0, &top, "N",
			    "advise on at most N kernels, the heaviest (default 10)", 1, 100000),
		FPT_OPT_STRING("min-share", 0, &min_share, "FRACTION",
			       "skip kernels below this share of the kernel time, except the "
			       "heaviest (0.01 or 1%; default 1%)"),
		FPT_OPT_BOOL("no-trace", 0, &no_trace,
			     "do not read the Chrome trace beside the profile"),
		FPT_OPT_BOOL(
			"full-names", 0, &full_names,
			"C++ kernel names in full (default: short, template arguments elided)"),
		FPT_OPT_BOOL("quiet", 'q', &quiet, "print nothing but errors (with -o)"),
		FPT_OPT_END(),
	};
	struct input main_in, extra_in[FP_ADVISE_MAX_EXTRA];
	struct fp_advise_profile extra[FP_ADVISE_MAX_EXTRA];
	struct fp_advise_options o;
	struct fp_advise_input in;
	struct fp_advice *adv = NULL;
	struct fp_diag diag;
	size_t nloaded = 0, i;
	bool json_stdout;
	int rc, nargs;

	rc = fpt_parse_options(argc, argv, opts, 0, &nargs);
	if (rc != FPT_CONTINUE)
		return rc;
	if (nargs == 0)
		return fpt_usage(argv[0], "expected a PROFILE");
	if (nargs > 1)
		return fpt_usage(argv[0],
				 "unexpected argument '%s' (other profiles go with --with)",
				 argv[2]);
	fp_advise_options_init(&o);
	o.full_names = full_names;
	if (top)
		o.max_kernels = (size_t)top;
	if (min_share && !parse_share(min_share, &o.min_share))
		return fpt_usage(argv[0],
				 "option '--min-share' takes a fraction in (0, 1] or a percentage "
				 "(0.05 or 5%%), not '%s'",
				 min_share);
	if (out_path) {
		rc = fpt_check_output_option(argv[0], out_path);
		if (rc != FPT_CONTINUE)
			return rc;
		if (plan)
			return fpt_usage(argv[0],
					 "options '--plan' and '--output' exclude each other");
	}
	json_stdout = out_path && fpt_output_is_stdout(out_path);

	memset(&main_in, 0, sizeof(main_in));
	rc = load(&main_in, argv[1], !no_trace);
	if (rc != FPT_CONTINUE)
		goto out_main;
	for (i = 0; i < withs.n; i++) {
		memset(&extra_in[i], 0, sizeof(extra_in[i]));
		rc = load(&extra_in[i], withs.paths[i], false);
		nloaded++;
		if (rc != FPT_CONTINUE)
			goto out;
		profile_of(&extra_in[i], &extra[i]);
	}
	memset(&in, 0, sizeof(in));
	profile_of(&main_in, &in.main);
	in.extra = extra;
	in.nextra = withs.n;
	memset(&diag, 0, sizeof(diag));
	rc = fp_advise_run(&in, &o, &adv, &diag);
	if (rc != FP_OK) {
		rc = rc == FP_ENOMEM ? fpt_die("out of memory") :
				       fpt_die("%s", diag.msg[0] ? diag.msg : fp_strerror(rc));
		goto out;
	}
	if (plan) {
		rc = fp_advice_render_plan(adv, stdout) == FP_OK ? FPT_EXIT_OK :
								   fpt_die("cannot write the plan");
		goto out;
	}
	if (!quiet && !json_stdout && fp_advice_render(adv, stdout) != FP_OK) {
		rc = fpt_die("cannot write the advice");
		goto out;
	}
	if (out_path) {
		fflush(stdout);
		rc = fp_advice_save_json(adv, out_path, &diag);
		if (rc != FP_OK) {
			rc = fpt_status_error(rc, &diag, NULL, "cannot write the advice");
			goto out;
		}
	}
	rc = fflush(stdout) == 0 ? FPT_EXIT_OK :
				   fpt_die("cannot write the advice: %s", strerror(errno));
out:
	fp_advice_free(adv);
	for (i = 0; i < nloaded; i++)
		unload(&extra_in[i]);
out_main:
	unload(&main_in);
	return rc;
}
