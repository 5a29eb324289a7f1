/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `flagprism merge` across ranks (merge-ranks.h): telling profiles, Chrome traces and the
 * Debugger's summaries apart, giving each profile its rank, and running the library's trace and
 * summary merges with the command's messages. The merges are the library's (<flagprism/ranks.h>);
 * this file only reads the command's inputs and reports.
 */
#include "merge-ranks.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <flagprism/json.h>

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

static enum fpt_merge_kind kind_of(const char *path)
{
	struct stat st;
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if ((stat(path, &st) == 0 && S_ISDIR(st.st_mode)) || !strcmp(base, "summary.json"))
		return FPT_MERGE_SUMMARIES;
	if (ends_with(path, ".chrome_trace.json") || ends_with(path, ".trace.json"))
		return FPT_MERGE_TRACES;
	return FPT_MERGE_PROFILES;
}

static const char *kind_name(enum fpt_merge_kind k)
{
	return k == FPT_MERGE_SUMMARIES ? "a Debugger summary" :
	       k == FPT_MERGE_TRACES    ? "a Chrome trace" :
					  "a profile";
}

int fpt_merge_kind_of(const char *cmd, char *const *paths, size_t n, enum fpt_merge_kind *kind)
{
	size_t i;

	*kind = kind_of(paths[0]);
	for (i = 1; i < n; i++) {
		enum fpt_merge_kind k = kind_of(paths[i]);

		if (k != *kind)
			return fpt_usage(cmd,
					 "cannot merge %s (%s) with %s (%s): give inputs of one "
					 "kind",
					 paths[0], kind_name(*kind), paths[i], kind_name(k));
	}
	return FPT_CONTINUE;
}

int fpt_merge_align_parse(const char *cmd, const char *s, enum fp_ranks_align *out)
{
	static const enum fp_ranks_align all[] = {FP_RANKS_ALIGN_AUTO, FP_RANKS_ALIGN_CLOCK,
						  FP_RANKS_ALIGN_BARRIER, FP_RANKS_ALIGN_WALL};
	size_t i;

	for (i = 0; i < FPT_ARRAY_SIZE(all); i++) {
		if (!strcmp(s, fp_ranks_align_name(all[i]))) {
			*out = all[i];
			return FPT_CONTINUE;
		}
	}
	return fpt_usage(cmd, "option '--align' takes auto, clock, barrier or wall, not '%s'", s);
}

int fpt_merge_profile_ranks(char *const *paths, size_t n, long world_opt, int64_t *ranks,
			    int64_t *world)
{
	struct fp_ranks_read rr;
	struct fp_diag diag;
	int64_t meta_world = 0, maxr = -1;
	size_t i, k;
	int rc;

	for (i = 0; i < n; i++) {
		memset(&diag, 0, sizeof(diag));
		rc = fp_ranks_read_meta(paths[i], &rr, &diag);
		if (rc != FP_OK)
			return fpt_die("%s", diag.msg[0] ? diag.msg : fp_strerror(rc));
		if (rr.found) {
			ranks[i] = rr.rank;
			if (rr.world_size > 0) {
				if (meta_world && meta_world != rr.world_size)
					return fpt_die(
						"%s: world size %lld, but an earlier profile "
						"says %lld (profiles of two jobs?)",
						paths[i], (long long)rr.world_size,
						(long long)meta_world);
				meta_world = rr.world_size;
			}
		} else if (fp_ranks_of_path(paths[i], &ranks[i]) != FP_OK) {
			ranks[i] = (int64_t)i;
		}
		for (k = 0; k < i; k++)
			if (ranks[k] == ranks[i])
				return fpt_die("%s and %s are both rank %lld (profiles of two "
					       "jobs, or one given twice?)",
					       paths[k], paths[i], (long long)ranks[i]);
		if (ranks[i] > maxr)
			maxr = ranks[i];
	}
	*world = world_opt > 0 ? world_opt : meta_world ? meta_world : maxr + 1;
	if (maxr >= *world)
		return fpt_die("rank %lld is not below the world size %lld", (long long)maxr,
			       (long long)*world);
	return FPT_CONTINUE;
}

void fpt_merge_warn_missing(const int64_t *ranks, size_t n, int64_t world, const char *what)
{
	int64_t missing[256];
	size_t nm = fp_ranks_missing(ranks, n, world, missing, FPT_ARRAY_SIZE(missing));
	char text[512];

	if (!nm)
		return;
	fp_ranks_format(missing, nm < FPT_ARRAY_SIZE(missing) ? nm : FPT_ARRAY_SIZE(missing), text,
			sizeof(text));
	fpt_warn("missing rank%s %s of world size %lld: no %s given for %s (merged without)",
		 nm == 1 ? "" : "s", text, (long long)world, what, nm == 1 ? "it" : "them");
}

int fpt_merge_traces(char *const *paths, size_t n, const char *out, const char *align, long world,
		     bool pretty, bool quiet)
{
	struct fp_ranks_trace_options o;
	struct fp_ranks_trace_report rep;
	struct fp_diag diag;
	int rc;

	memset(&o, 0, sizeof(o));
	memset(&diag, 0, sizeof(diag));
	if (align && (rc = fpt_merge_align_parse("merge", align, &o.align)) != FPT_CONTINUE)
		return rc;
	o.world_size = world;
	o.json_flags = pretty ? FP_JSONW_PRETTY : 0;
	rc = fp_ranks_merge_traces((const char *const *)paths, n, &o, out, &rep, &diag);
	if (rc == FP_EINVAL)
		return fpt_die("cannot merge the traces: %s", diag.msg);
	if (rc != FP_OK)
		return fpt_die("%s", diag.msg[0] ? diag.msg : fp_strerror(rc));
	if (rep.nmissing)
		fpt_warn("missing rank%s %s of world size %lld: no trace given for %s (merged "
			 "without)",
			 rep.nmissing == 1 ? "" : "s", rep.missing, (long long)rep.world_size,
			 rep.nmissing == 1 ? "it" : "them");
	if (!quiet) {
		printf("merged %zu trace%s into %s: %llu events, one process per rank\n", rep.ranks,
		       rep.ranks == 1 ? "" : "s", out, (unsigned long long)rep.events);
		printf("clocks: %s\n", rep.note);
	}
	return FPT_EXIT_OK;
}

int fpt_merge_summaries(char *const *paths, size_t n, const char *out, bool quiet)
{
	struct fp_ranks_summary_report rep;
	struct fp_diag diag;
	int rc;

	memset(&diag, 0, sizeof(diag));
	rc = fp_ranks_merge_summaries((const char *const *)paths, n, out, &rep, &diag);
	if (rc == FP_EINVAL)
		return fpt_die("cannot merge the summaries: %s", diag.msg);
	if (rc != FP_OK)
		return fpt_die("%s", diag.msg[0] ? diag.msg : fp_strerror(rc));
	/* world size 0: the parts of a pytest-xdist session, named by their workers */
	if (rep.nmissing && rep.world_size == 0)
		fpt_warn("missing pytest-xdist worker%s %s: no summary given for %s",
			 rep.nmissing == 1 ? "" : "s", rep.missing,
			 rep.nmissing == 1 ? "it" : "them");
	else if (rep.nmissing)
		fpt_warn("missing rank%s %s of world size %lld: no summary given for %s",
			 rep.nmissing == 1 ? "" : "s", rep.missing, (long long)rep.world_size,
			 rep.nmissing == 1 ? "it" : "them");
	if (rep.incomplete)
		fpt_warn("%zu %s%s wrote an incomplete summary (see summary.txt)", rep.incomplete,
			 rep.world_size == 0 ? "worker" : "rank", rep.incomplete == 1 ? "" : "s");
	if (!quiet)
		printf("merged %zu summar%s into %s/summary.json and summary.txt: %llu kernel%s, "
		       "%llu finding%s\n",
		       rep.ranks, rep.ranks == 1 ? "y" : "ies", out,
		       (unsigned long long)rep.kernels, rep.kernels == 1 ? "" : "s",
		       (unsigned long long)rep.findings, rep.findings == 1 ? "" : "s");
	return FPT_EXIT_OK;
}

/* An environment variable as a base-10 integer; false when unset or not one. */
static bool env_int(const char *name, long long *out)
{
	const char *v = getenv(name);
	char *end;

	if (!v || !*v)
		return false;
	*out = strtoll(v, &end, 10);
	return *end == '\0';
}

bool fpt_rank_output_name(const char *name, char *out, size_t cap)
{
	long long rank, world;
	bool job = env_int("RANK", &rank) && env_int("WORLD_SIZE", &world) && world >= 1 &&
		   rank >= 0 && rank < world;

	if (!job && !strstr(name, FP_RANKS_PLACEHOLDER))
		return (size_t)snprintf(out, cap, "%s", name) < cap;
	return fp_ranks_name(name, job ? rank : 0, FP_RANKS_SUFFIX, out, cap) == FP_OK;
}
