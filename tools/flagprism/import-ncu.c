/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Nsight Compute import as the tool runs it (import-ncu.h): file names, the order of the
 * writes, the summary in words or JSON, and starting ncu. The matching and aggregation rules
 * are the library's (src/prof/ncu-attach.c); nothing here changes a number.
 */
#include "tool.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <flagprism/alloc.h>
#include <flagprism/calltree.h>
#include <flagprism/json.h>

#include "import-ncu.h"
#include "view-common.h"

extern char **environ;

bool fpt_ncu_sibling(const char *path, const char *suffix, char *buf, size_t size)
{
	size_t n = strlen(path);
	int w;

	if (n > 8 && strcmp(path + n - 8, ".hatchet") == 0)
		n -= 8;
	w = snprintf(buf, size, "%.*s%s", (int)n, path, suffix);
	return w >= 0 && (size_t)w < size;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Distinct kernel names among the launches. */
static size_t kernel_count(const struct fp_ncu_report *r)
{
	size_t n = fp_ncu_report_launch_count(r), i, k = 0;
	const char **names;

	if (!n)
		return 0;
	names = fp_calloc(n, sizeof(*names));
	if (!names)
		return 0;
	for (i = 0; i < n; i++)
		names[i] = fp_ncu_report_launch(r, i)->kernel;
	qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++)
		if (i == 0 || strcmp(names[i], names[i - 1]) != 0)
			k++;
	fp_free(names);
	return k;
}

static const char *page_word(enum fp_ncu_page p)
{
	return p == FP_NCU_PAGE_RAW     ? "raw" :
	       p == FP_NCU_PAGE_DETAILS ? "details" :
	       p == FP_NCU_PAGE_MIXED   ? "mixed" :
					  "none";
}

static int print_json(const struct fpt_ncu_import *o, const struct fp_ncu_report *r,
		      const struct fp_ncu_attach_stats *st, const char *out, const char *vendor,
		      const char *trace)
{
	struct fp_jsonw *w = fp_jsonw_new_file(stdout, 0);
	size_t i;
	int rc;

	if (!w)
		return fpt_status_error(FP_ENOMEM, NULL, NULL, "cannot write JSON");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "source", o->csv);
	fp_jsonw_kv_string(w, "profile_in", o->into);
	fp_jsonw_kv_string(w, "profile", out);
	fp_jsonw_kv_string(w, "vendor", vendor);
	fp_jsonw_key(w, "trace");
	fp_jsonw_string(w, st->used_trace ? trace : NULL);
	fp_jsonw_kv_string(w, "order", st->used_trace ? "trace" : "counts");
	fp_jsonw_kv_string(w, "order_note", st->order_note);
	fp_jsonw_kv_string(w, "page", page_word(fp_ncu_report_page(r)));
	fp_jsonw_kv_uint(w, "launches", st->launches);
	fp_jsonw_kv_uint(w, "kernels", kernel_count(r));
	fp_jsonw_kv_uint(w, "matched", st->matched);
	fp_jsonw_kv_uint(w, "unmatched", st->unmatched);
	fp_jsonw_kv_uint(w, "matched_by_base_name", st->by_base_name);
	fp_jsonw_kv_uint(w, "nodes", st->nodes);
	fp_jsonw_kv_uint(w, "metrics", st->metrics);
	fp_jsonw_kv_uint(w, "summed", st->summed);
	fp_jsonw_kv_uint(w, "values", st->values);
	fp_jsonw_kv_uint(w, "values_missing", st->values_missing);
	fp_jsonw_kv_uint(w, "profile_launches", st->profile_launches);
	fp_jsonw_kv_uint(w, "profile_launches_without_record", st->profile_unmatched);
	fp_jsonw_kv_uint(w, "kernels_split_by_count_rule", st->split_kernels);
	fp_jsonw_key(w, "degradations");
	fp_jsonw_array_begin(w);
	for (i = 0; i < fp_ncu_report_degradation_count(r); i++) {
		const struct fp_ncu_degradation *d = fp_ncu_report_degradation(r, i);

		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "kind", d->kind);
		fp_jsonw_kv_string(w, "detail", d->detail);
		fp_jsonw_kv_uint(w, "count", d->count);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_object_end(w);
	rc = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	if (rc)
		return fpt_status_error(rc, NULL, NULL, "cannot write JSON");
	putchar('\n');
	return FPT_EXIT_OK;
}

#define SHOW_UNMATCHED 5
#define SHOW_DEGRADED 8

static void print_text(const struct fpt_ncu_import *o, const struct fp_ncu_report *r,
		       const struct fp_ncu_attach_stats *st, const char *out, const char *vendor,
		       const char *trace)
{
	size_t i, shown = 0, nd = fp_ncu_report_degradation_count(r);

	printf("Nsight Compute: %" PRIu64 " launches of %zu kernels (%s page) from %s\n",
	       st->launches, kernel_count(r), page_word(fp_ncu_report_page(r)), o->csv);
	printf("matched:   %" PRIu64 " launches onto %" PRIu64 " nodes", st->matched, st->nodes);
	if (st->used_trace)
		printf(" (launch order from %s)\n", trace);
	else
		printf(" (launch order: node counts, in tree order)\n");
	if (st->order_note[0])
		printf("           trace %s not used: %s\n", trace ? trace : "", st->order_note);
	if (st->by_base_name)
		printf("           %" PRIu64 " of them by name without parameters\n",
		       st->by_base_name);
	if (st->unmatched) {
		printf("unmatched: %" PRIu64 " launches, kept in %s:\n", st->unmatched, vendor);
		for (i = 0; i < fp_ncu_report_launch_count(r) && shown < SHOW_UNMATCHED; i++) {
			const struct fp_ncu_launch *l = fp_ncu_report_launch(r, i);

			if (!l->unmatched)
				continue;
			printf("  launch %zu (ID %s): %s\n", i, l->id, l->unmatched);
			shown++;
		}
		if (st->unmatched > shown)
			printf("  ... and %" PRIu64 " more\n", st->unmatched - shown);
	}
	if (st->profile_unmatched)
		printf("profile launches without ncu data: %" PRIu64 " of %" PRIu64 "\n",
		       st->profile_unmatched, st->profile_launches);
	printf("metrics:   %" PRIu64 " in the profile (%" PRIu64 " summed, %" PRIu64
	       " averaged), %" PRIu64 " values",
	       st->metrics, st->summed, st->metrics - st->summed, st->values);
	if (st->values_missing)
		printf(", %" PRIu64 " without a value", st->values_missing);
	putchar('\n');
	if (st->split_kernels)
		printf("note:      %" PRIu64 " kernels have several call sites and no trace gave "
		       "their launch order: their launches are split between the nodes by count\n",
		       st->split_kernels);
	for (i = 0; i < nd && i < SHOW_DEGRADED; i++) {
		const struct fp_ncu_degradation *d = fp_ncu_report_degradation(r, i);

		printf("%s %s: %s", i ? "          " : "degraded: ", d->kind, d->detail);
		if (d->count > 1)
			printf(" (x%" PRIu64 ")", d->count);
		putchar('\n');
	}
	if (nd > SHOW_DEGRADED)
		printf("           ... and %zu more in %s\n", nd - SHOW_DEGRADED, vendor);
	printf("wrote %s and %s\n", out, vendor);
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int fpt_ncu_import(const struct fpt_ncu_import *o)
{
	char vendor_buf[FPT_PATH_MAX], trace_buf[FPT_PATH_MAX];
	const char *out = o->out ? o->out : o->into, *vendor = o->vendor, *trace = o->trace;
	struct fp_ncu_vendor_info info;
	struct fp_ncu_attach_stats st;
	struct fp_ncu_report *r = NULL;
	struct fp_ncu_order *order = NULL;
	struct fp_calltree *t = NULL;
	struct fp_strbuf text;
	struct fp_diag d;
	int rc, ret = FPT_EXIT_FAILURE;
	bool to_stdout;

	memset(&st, 0, sizeof(st));
	to_stdout = fpt_output_is_stdout(out);
	if (to_stdout && o->json)
		return fpt_usage("import-ncu", "options '--json' and '--output -' both write to "
					       "standard output");
	if (!vendor) {
		/* With the profile on standard output, the vendor file goes next to --into. */
		const char *base = to_stdout ? o->into : out;

		if (!fpt_ncu_sibling(base, ".vendor.json", vendor_buf, sizeof(vendor_buf)))
			return fpt_die("path too long: %s", base);
		vendor = vendor_buf;
	}
	if (!trace && !o->no_trace) {
		if (fpt_ncu_sibling(o->into, ".chrome_trace.json", trace_buf, sizeof(trace_buf)) &&
		    exists(trace_buf))
			trace = trace_buf;
	}
	if (o->no_trace)
		trace = NULL;

	fp_strbuf_init(&text, FP_NCU_DEFAULT_MAX_BYTES);
	rc = fp_strbuf_read_file(&text, o->csv, &d);
	if (rc) {
		fp_strbuf_release(&text);
		return fpt_status_error(rc, &d, NULL, "cannot read the Nsight Compute CSV");
	}
	rc = fp_ncu_parse(text.buf, text.len, NULL, &r, &d);
	fp_strbuf_release(&text);
	if (rc)
		return fpt_status_error(rc, &d, o->csv, "cannot read the Nsight Compute CSV");
	rc = fp_calltree_read_hatchet(o->into, NULL, &t, NULL, &d);
	if (rc) {
		ret = fpt_status_error(rc, &d, NULL, "cannot read the profile");
		goto out;
	}
	if (trace) {
		rc = fp_ncu_order_read_trace(t, trace, &order, &d);
		if (rc) {
			fpt_warn("cannot use %s for the launch order (%s): %s", trace,
				 fp_strerror(rc), d.msg);
			order = NULL;
		}
	}
	if (fp_ncu_report_launch_count(r)) {
		rc = fp_ncu_attach(r, t, order, &st, &d);
		if (rc) {
			ret = fpt_die("cannot attach the Nsight Compute data to %s: %s", o->into,
				      d.msg[0] ? d.msg : fp_strerror(rc));
			goto out;
		}
	}
	info.source = o->csv;
	info.profile = fp_ncu_report_launch_count(r) ? out : NULL;
	info.trace = trace;
	/* The vendor file first: whatever happens next, what ncu reported is on disk. */
	rc = fp_ncu_save_vendor(r, t, &info, vendor, 0, &d);
	if (rc) {
		ret = fpt_status_error(rc, &d, NULL, "cannot write the vendor file");
		goto out;
	}
	if (!fp_ncu_report_launch_count(r)) {
		const struct fp_ncu_degradation *first = fp_ncu_report_degradation(r, 0);
		size_t i;

		for (i = 0; i < fp_ncu_report_degradation_count(r); i++) {
			const struct fp_ncu_degradation *x = fp_ncu_report_degradation(r, i);

			if (strcmp(x->kind, "no_launches") != 0) {
				first = x;
				break;
			}
		}
		ret = fpt_die("%s has no kernel launch (%s: %s); the profile is unchanged, %s "
			      "says what ncu printed",
			      o->csv, first ? first->kind : "?", first ? first->detail : "?",
			      vendor);
		goto out;
	}
	rc = fp_calltree_save_hatchet(t, out, FP_CALLTREE_SAVE_DASH_STDOUT, &d);
	if (rc) {
		ret = fpt_status_error(rc, &d, NULL, "cannot write the profile");
		goto out;
	}
	if (o->json)
		ret = print_json(o, r, &st, out, vendor, trace);
	else {
		/* The profile is standard output with -o -: no summary in it. */
		if (!o->quiet && !to_stdout)
			print_text(o, r, &st, out, vendor, trace);
		ret = FPT_EXIT_OK;
	}
	if ((o->quiet || to_stdout) && st.unmatched)
		fpt_warn("%" PRIu64 " Nsight Compute launches were not attached (see %s)",
			 st.unmatched, vendor);
out:
	fp_ncu_order_free(order);
	fp_calltree_free(t);
	fp_ncu_report_free(r);
	return ret;
}

static volatile sig_atomic_t ncu_child;
static volatile sig_atomic_t ncu_signal;

/* While ncu runs, TERM/HUP/INT go on to it (and through it to the program, which writes what
 * it recorded) instead of ending this process and orphaning them. */
static void forward_signal(int sig)
{
	if (!ncu_signal)
		ncu_signal = sig;
	if (ncu_child > 0)
		kill((pid_t)ncu_child, sig);
}

int fpt_ncu_run(char *const *argv, int *status, int *signalled)
{
	static const int sigs[] = {SIGTERM, SIGHUP, SIGINT};
	struct sigaction sa, old[3];
	pid_t pid;
	int rc, ws, err = 0;
	size_t i;

	fflush(stdout);
	fflush(stderr);
	*signalled = 0;
	ncu_signal = 0;
	ncu_child = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 3; i++) {
		sigaction(sigs[i], NULL, &old[i]);
		/* A signal the parent ignores (nohup) stays ignored, in the child too. */
		if (old[i].sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
	rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
	if (!rc) {
		ncu_child = pid;
		if (ncu_signal)
			kill(pid, ncu_signal); /* it came while ncu was starting */
		while (waitpid(pid, &ws, 0) < 0) {
			if (errno != EINTR) {
				err = errno;
				break;
			}
		}
	}
	for (i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	ncu_child = 0;
	*signalled = ncu_signal;
	if (rc) {
		fpt_die("cannot run %s: %s", argv[0], strerror(rc));
		return FP_ENOENT;
	}
	if (err) {
		fpt_die("cannot wait for %s: %s", argv[0], strerror(err));
		return FP_EIO;
	}
	*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? -WTERMSIG(ws) : -1;
	return FP_OK;
}
