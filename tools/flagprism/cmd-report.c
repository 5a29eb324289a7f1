/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `flagprism report PATH [-o OUT.html]`: one self-contained HTML page for a Debugger run (an
 * output directory, its summary.json or one report .json) or a profile (.hatchet, with the
 * Chrome trace beside it; `--diff OTHER` compares two). Reading, aggregating and writing are the
 * library's (include/flagprism/html.h); this file decides what PATH is, reads the options,
 * prints what was left out and reports. docs/cli/flagprism-report.md is its manual.
 */
#include "view-common.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flagprism/advise.h>
#include <flagprism/html.h>

const char cmd_report_summary[] =
	"write one self-contained HTML page for a Debugger run or a profile";
const char cmd_report_usage[] =
	"flagprism report [-o OUT.html] [--title TEXT] [--no-source] [--max-cells N] [--max-series N]\n"
	"                 [--max-findings N] [--max-launches N] [--max-dumps N] [-q]\n"
	"                 DEBUG_DIR | summary.json | REPORT.json\n"
	"flagprism report [-o OUT.html] [--title TEXT] [-m METRICS] [--diff OTHER] [--no-trace]\n"
	"                 [--no-advice] [--max-nodes N] [--max-slices N] [-q] PROFILE.hatchet";

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* A JSON file whose first value is an array is a Hatchet profile; an object, a report. Only a
 * regular file is looked into: the open does not wait on a FIFO, and a FIFO, device or pipe
 * answers EOF here (the reader that follows refuses it with a message). */
static int first_byte(const char *path)
{
	unsigned char buf[64];
	struct stat st;
	ssize_t n, i;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), c = EOF;

	if (fd < 0)
		return EOF;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return EOF;
	}
	while (c == EOF && (n = read(fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n; i++) {
			if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\n' && buf[i] != '\r' &&
			    buf[i] != 0xEF && buf[i] != 0xBB && buf[i] != 0xBF) {
				c = buf[i];
				break;
			}
		}
	}
	close(fd);
	return c;
}

static bool is_profile(const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return false;
	if (ends_with(path, ".hatchet") || ends_with(path, ".meta.json"))
		return true;
	if (ends_with(path, "summary.json"))
		return false;
	return first_byte(path) == '[';
}

/* PATH's stem: "x" for "x.hatchet", "x.meta.json", "x.json" or "x". */
static void stem_of(const char *path, char *buf, size_t size)
{
	static const char *const suffixes[] = {".meta.json", ".hatchet", ".json"};
	size_t i, n = strlen(path), m;

	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		m = strlen(suffixes[i]);
		if (n > m && strcmp(path + n - m, suffixes[i]) == 0) {
			n -= m;
			break;
		}
	}
	snprintf(buf, size, "%.*s", (int)n, path);
}

static void print_notes(const struct fp_html_page *p)
{
	size_t i;

	for (i = 0; i < fp_html_page_note_count(p); i++)
		fprintf(stderr, "flagprism: note: %s\n", fp_html_page_note_at(p, i));
}

/* The advice section (include/flagprism/advise.h) from the tree, the meta file and the trace
 * text: what cannot be advised is said on the page and on stderr, never a failed page. */
static int advice(struct fp_html_page *p, struct fp_calltree *t, const char *path, const char *stem,
		  const struct fp_strbuf *trace, const char *trace_path)
{
	struct fp_advise_input in;
	struct fp_advice *adv = NULL;
	struct fp_strbuf meta;
	struct fp_diag diag;
	char meta_path[FPT_PATH_MAX];
	struct stat st;
	int rc;

	memset(&in, 0, sizeof(in));
	fp_strbuf_init(&meta, 0);
	in.main.tree = t;
	in.main.path = path;
	snprintf(meta_path, sizeof(meta_path), "%s.meta.json", stem);
	memset(&diag, 0, sizeof(diag));
	if (stat(meta_path, &st) == 0 &&
	    fp_strbuf_read_path(&meta, meta_path, FP_STRBUF_READ_REGULAR, &diag) == FP_OK) {
		in.main.meta = meta.buf ? meta.buf : "";
		in.main.meta_len = meta.len;
		in.main.meta_path = meta_path;
	}
	if (trace) {
		in.main.trace = trace->buf ? trace->buf : "";
		in.main.trace_len = trace->len;
		in.main.trace_path = trace_path;
	}
	memset(&diag, 0, sizeof(diag));
	rc = fp_advise_run(&in, NULL, &adv, &diag);
	if (rc == FP_OK)
		rc = fp_html_profile_add_advice(p, adv, &diag);
	fp_advice_free(adv);
	fp_strbuf_release(&meta);
	if (rc == FP_ENOMEM)
		return fpt_die("out of memory advising on %s", path);
	if (rc != FP_OK) {
		fpt_warn("the advice is left out: %s", diag.msg[0] ? diag.msg : fp_strerror(rc));
		fp_html_page_note(p, "advice left out: %s",
				  diag.msg[0] ? diag.msg : fp_strerror(rc));
	}
	return FPT_CONTINUE;
}

/* The profile page: trees, the comparison, the trace beside the profile, the advice. */
static int profile_page(const char *cmd, struct fp_html_page *p, const char *path,
			const char *other_path, bool no_trace, bool no_advice)
{
	struct fp_view_read_info info, other_info;
	struct fp_calltree *t = NULL, *other = NULL;
	char trace[FPT_PATH_MAX], stem[FPT_PATH_MAX - 32];
	struct fp_strbuf sb;
	struct fp_diag diag;
	struct stat st;
	bool have_trace = false;
	int rc;

	fp_strbuf_init(&sb, 0);
	rc = fpt_load_profile(path, &t, &info);
	if (rc != FPT_CONTINUE)
		return rc;
	fpt_warn_incomplete(path, &info);
	if (other_path) {
		rc = fpt_load_profile(other_path, &other, &other_info);
		if (rc != FPT_CONTINUE)
			goto out;
		fpt_warn_incomplete(other_path, &other_info);
	}
	memset(&diag, 0, sizeof(diag));
	rc = fp_html_profile_set(p, t, path, &info, other, other_path, &other_info, &diag);
	if (rc != FP_OK) {
		rc = fpt_view_error(cmd, rc, &diag);
		goto out;
	}
	stem_of(path, stem, sizeof(stem));
	snprintf(trace, sizeof(trace), "%s.chrome_trace.json", stem);
	if (!no_trace && !other && stat(trace, &st) == 0) {
		rc = fp_strbuf_read_path(&sb, trace, FP_STRBUF_READ_REGULAR, &diag);
		if (rc == FP_OK) {
			have_trace = true;
			rc = fp_html_profile_add_trace(p, sb.buf, sb.len, trace, &diag);
		}
		if (rc == FP_ENOMEM) {
			rc = fpt_die("out of memory reading the trace %s", trace);
			goto out;
		}
		if (rc != FP_OK) {
			/* the tree is still worth a page: say why the timeline is missing */
			have_trace = false;
			fpt_warn("the timeline is left out: %s", diag.msg[0] ? diag.msg : trace);
			fp_html_page_note(p, "timeline left out: %s",
					  diag.msg[0] ? diag.msg : fp_strerror(rc));
		}
	}
	if (!no_advice && !other) {
		rc = advice(p, t, path, stem, have_trace ? &sb : NULL, trace);
		if (rc != FPT_CONTINUE)
			goto out;
	}
	rc = FPT_CONTINUE;
out:
	fp_strbuf_release(&sb);
	fp_calltree_free(other);
	fp_calltree_free(t);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	struct fp_html_options o;
	const char *out_path = NULL, *other_path = NULL;
	long max_cells = 0, max_nodes = 0, max_findings = 0, max_launches = 0, max_slices = 0,
	     max_dumps = 0, max_series = 0;
	bool no_source = false, no_trace = false, no_advice = false, quiet = false;
	const char *title = NULL, *metrics = NULL;
	const struct fpt_option opts[] = {
		FPT_OPT_STRING("output", 'o', &out_path, "OUT",
			       "the page to write (default: beside the input, see the manual)"),
		FPT_OPT_STRING("title", 0, &title, "TEXT", "the page's title"),
		FPT_OPT_STRING("diff", 0, &other_path, "OTHER",
			       "profiles: compare with profile OTHER (other - this)"),
		FPT_OPT_STRING("metrics", 'm', &metrics, "METRICS",
			       "profiles: table columns, as `flagprism view -m` takes them"),
		FPT_OPT_BOOL("no-trace", 0, &no_trace,
			     "profiles: leave out the timeline of the Chrome trace beside it"),
		FPT_OPT_BOOL("no-advice", 0, &no_advice,
			     "profiles: leave out the advice (flagprism advise)"),
		FPT_OPT_BOOL("no-source", 0, &no_source,
			     "Debugger: do not read the kernels' source files"),
		FPT_OPT_INT("max-cells", 0, &max_cells, "N",
			    "heatmap cells per statement site (default 65536; more programs are "
			    "binned)",
			    1, 1 << 24),
		FPT_OPT_INT("max-series", 0, &max_series, "N",
			    "executions per series of a statement in a loop (default 4096)", 1,
			    1 << 24),
		FPT_OPT_INT("max-findings", 0, &max_findings, "N",
			    "findings embedded (default 1000)", 1, 1 << 24),
		FPT_OPT_INT("max-launches", 0, &max_launches, "N", "reports read (default 256)", 1,
			    1 << 20),
		FPT_OPT_INT("max-dumps", 0, &max_dumps, "N",
			    "level-2 dump histograms per launch (default 256)", 1, 1 << 20),
		FPT_OPT_INT("max-nodes", 0, &max_nodes, "N",
			    "call-tree rows embedded, the heaviest (default 20000)", 1, 1 << 26),
		FPT_OPT_INT("max-slices", 0, &max_slices, "N",
			    "timeline slices embedded, the earliest (default 200000)", 1, 1 << 26),
		FPT_OPT_BOOL("quiet", 'q', &quiet, "print nothing on success"),
		FPT_OPT_END(),
	};
	struct fp_html_page *p = NULL;
	struct fp_html_stats st;
	struct fp_diag diag;
	char def_out[FPT_PATH_MAX];
	struct stat sb;
	bool profile;
	int rc, nargs;

	rc = fpt_parse_options(argc, argv, opts, 0, &nargs);
	if (rc != FPT_CONTINUE)
		return rc;
	if (nargs == 0)
		return fpt_usage(argv[0], "expected a Debugger output or a profile");
	if (nargs > 1)
		return fpt_usage(argv[0], "unexpected argument '%s'", argv[2]);
	if (stat(argv[1], &sb) != 0)
		return fpt_die("cannot open '%s': %s", argv[1], strerror(errno));
	profile = is_profile(argv[1]);
	if (!profile && (other_path || metrics || no_trace || no_advice))
		return fpt_usage(
			argv[0],
			"options '--diff', '--metrics', '--no-trace' and '--no-advice' are "
			"for profiles, and '%s' is a Debugger output",
			argv[1]);
	if (profile && no_source)
		return fpt_usage(argv[0], "option '--no-source' is for Debugger outputs");

	fp_html_options_init(&o);
	o.title = title;
	o.metrics = metrics;
	o.read_sources = !no_source;
	o.max_cells = (size_t)max_cells;
	o.max_series = (size_t)max_series;
	o.max_nodes = (size_t)max_nodes;
	o.max_findings = (size_t)max_findings;
	o.max_launches = (size_t)max_launches;
	o.max_dumps = (size_t)max_dumps;
	o.max_slices = (size_t)max_slices;
	if (!out_path) {
		char stem[FPT_PATH_MAX - 32];

		if (!profile && S_ISDIR(sb.st_mode)) {
			snprintf(def_out, sizeof(def_out), "%s%sreport.html", argv[1],
				 ends_with(argv[1], "/") ? "" : "/");
		} else {
			stem_of(argv[1], stem, sizeof(stem));
			snprintf(def_out, sizeof(def_out), "%s%s.html", stem,
				 other_path ? ".diff" : "");
		}
		out_path = def_out;
	}
	rc = fp_html_page_new(profile ? FP_HTML_PROFILE : FP_HTML_DEBUGGER, &o, &p);
	if (rc != FP_OK)
		return fpt_status_error(rc, NULL, NULL, "cannot start the page");
	memset(&diag, 0, sizeof(diag));
	if (profile) {
		rc = profile_page(argv[0], p, argv[1], other_path, no_trace, no_advice);
		if (rc != FPT_CONTINUE)
			goto out;
	} else {
		rc = fp_html_debug_read(p, argv[1], &diag);
		if (rc != FP_OK) {
			print_notes(p);
			rc = fpt_status_error(rc, &diag, NULL, "cannot read the Debugger output");
			goto out;
		}
	}
	rc = fp_html_page_save(p, out_path, &diag);
	if (rc != FP_OK) {
		rc = fpt_status_error(rc, &diag, NULL, "cannot write the page");
		goto out;
	}
	print_notes(p);
	fp_html_page_stats(p, &st);
	if (!quiet) {
		if (profile)
			printf("wrote %s: %zu of %zu call-tree rows, %zu trace slices\n", out_path,
			       st.rows, st.rows_total, st.slices);
		else
			printf("wrote %s: %zu launch%s, %zu statements, %zu findings\n", out_path,
			       st.launches, st.launches == 1 ? "" : "es", st.statements,
			       st.findings_total);
	}
	rc = FPT_EXIT_OK;
out:
	fp_html_page_free(p);
	return rc;
}
