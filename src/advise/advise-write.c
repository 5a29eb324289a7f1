/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The advice's outputs (include/flagprism/advise.h): the text `flagprism advise` prints, the
 * plan of profiling runs that would collect what the rules lacked, and the JSON object
 * (docs/guide/advise.md, "JSON") that `-o` writes and the HTML report embeds. Output depends
 * only on the advice; nothing here decides anything.
 */
#include "fp-setup.h"

#include <flagprism/outfile.h>
#include <flagprism/version.h>

#include "advise/advise-internal.h"

#define WIDTH 100
#define MAX_PLAN 8

/* ---- numbers with units ---------------------------------------------------------------------- */

static void value_text(double v, const char *unit, char *buf, size_t size)
{
	char n[32];

	if (isnan(v)) {
		snprintf(buf, size, "n/a");
	} else if (!strcmp(unit, "ns")) {
		fp__adv_fmt_ns(v, buf, size);
	} else if (!strcmp(unit, "B")) {
		fp__adv_fmt_bytes(v, buf, size);
	} else if (!strcmp(unit, "B/s") || !strcmp(unit, "FLOP/s") || !strcmp(unit, "FLOP")) {
		static const char *const pre[] = {"", "K", "M", "G", "T", "P"};
		size_t p = 0;

		while (fabs(v) >= 1000 && p + 1 < FP_ARRAY_SIZE(pre)) {
			v /= 1000;
			p++;
		}
		fp__adv_fmt(v, n, sizeof(n));
		snprintf(buf, size, "%s %s%s", n, pre[p], unit);
	} else {
		fp__adv_fmt(v, n, sizeof(n));
		snprintf(buf, size, "%s%s%s", n,
			 unit[0] && unit[0] != '%' && unit[0] != 'x' ? " " : "", unit);
	}
}

/* Print `text` from column `col`, wrapped at WIDTH, continuation lines indented by `indent`. */
static void wrap(FILE *f, const char *text, size_t col, size_t indent)
{
	const char *p = text;

	while (*p) {
		const char *w = p;
		size_t n;

		while (*w && *w != ' ')
			w++;
		n = (size_t)(w - p);
		if (col > indent && col + 1 + n > WIDTH) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
		} else if (p != text) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, n, f);
		col += n;
		p = w;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
}

/* ---- the plan -------------------------------------------------------------------------------- */

struct plan {
	char line[MAX_PLAN][4096];
	char rules[MAX_PLAN][512];
	size_t n;
	char advise[4096]; /* the advise command combining the runs */
};

static void stem_of(const char *path, char *buf, size_t size)
{
	static const char *const suffixes[] = {".meta.json", ".hatchet", ".json"};
	size_t i, n = path ? strlen(path) : 0, m;

	if (!path) {
		snprintf(buf, size, "flagprism");
		return;
	}
	for (i = 0; i < FP_ARRAY_SIZE(suffixes); i++) {
		m = strlen(suffixes[i]);
		if (n > m && !strcmp(path + n - m, suffixes[i])) {
			n -= m;
			break;
		}
	}
	snprintf(buf, size, "%.*s", (int)FP_MIN(n, size - 1), path);
}

static void add_rule(char *buf, size_t size, const char *name)
{
	size_t used = strlen(buf);

	if (strstr(buf, name))
		return;
	snprintf(buf + used, size - used, "%s%s", used ? ", " : "", name);
}

static void make_plan(const struct fp_advice *a, struct plan *p)
{
	unsigned needs = 0;
	uint32_t metrics = 0;
	size_t r, i, base = SIZE_MAX, ctr = SIZE_MAX, pcs = SIZE_MAX;
	char stem[1024], list[1536];
	size_t used = 0;

	memset(p, 0, sizeof(*p));
	for (r = 0; r < fp__adv_nrules(); r++)
		if (a->status[r].skipped) {
			needs |= a->status[r].needs;
			metrics |= a->status[r].metrics;
		}
	if (!needs)
		return;
	stem_of(a->path, stem, sizeof(stem));
	if (needs & (FP__NEED_GPU | FP__NEED_TRACE | FP__NEED_PYTHON | FP__NEED_FACTS |
		     FP__NEED_COMPILED | FP__NEED_TIME)) {
		base = p->n++;
		snprintf(p->line[base], sizeof(p->line[base]),
			 "flagprism profile -n %s-gpu -b cupti -c python -d trace SCRIPT [ARGS...]",
			 stem);
	}
	if (needs & FP__NEED_COUNTERS) {
		metrics |= (1u << FP__M_DRAM_READ) | (1u << FP__M_DRAM_WRITE) |
			   (1u << FP__M_SM_PCT) | (1u << FP__M_MEM_PCT) |
			   (1u << FP__M_WARPS_ACTIVE_PCT);
		for (i = 0; i < FP__M_COUNT; i++) {
			const char *name = fp__adv_metric_name((enum fp__adv_metric)i);

			/* launch statistics are Nsight Compute's, not counters */
			if (!(metrics & (1u << i)) || !strncmp(name, "launch__", 8))
				continue;
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
						 used ? "," : "", name);
			if (used >= sizeof(list))
				break;
		}
		ctr = p->n++;
		snprintf(p->line[ctr], sizeof(p->line[ctr]),
			 "flagprism profile -n %s-metrics -b cupti -m %s SCRIPT [ARGS...]", stem,
			 list);
	}
	if (needs & FP__NEED_PCS) {
		pcs = p->n++;
		snprintf(p->line[pcs], sizeof(p->line[pcs]),
			 "flagprism profile -n %s-pcs --mode pcsampling SCRIPT [ARGS...]", stem);
	}
	for (r = 0; r < fp__adv_nrules(); r++) {
		const struct fp__adv_status *st = &a->status[r];
		const char *name = fp__adv_rule(r)->info.name;

		if (!st->skipped)
			continue;
		if (base != SIZE_MAX &&
		    (st->needs & (FP__NEED_GPU | FP__NEED_TRACE | FP__NEED_PYTHON | FP__NEED_FACTS |
				  FP__NEED_COMPILED | FP__NEED_TIME)))
			add_rule(p->rules[base], sizeof(p->rules[base]), name);
		if (ctr != SIZE_MAX && (st->needs & FP__NEED_COUNTERS))
			add_rule(p->rules[ctr], sizeof(p->rules[ctr]), name);
		if (pcs != SIZE_MAX && (st->needs & FP__NEED_PCS))
			add_rule(p->rules[pcs], sizeof(p->rules[pcs]), name);
	}
	snprintf(p->advise, sizeof(p->advise), "flagprism advise %s%s", stem,
		 base != SIZE_MAX ? "-gpu.hatchet" : ".hatchet");
	if (ctr != SIZE_MAX) {
		used = strlen(p->advise);
		snprintf(p->advise + used, sizeof(p->advise) - used, " --with %s-metrics.hatchet",
			 stem);
	}
	if (pcs != SIZE_MAX) {
		used = strlen(p->advise);
		snprintf(p->advise + used, sizeof(p->advise) - used, " --with %s-pcs.hatchet",
			 stem);
	}
}

int fp_advice_render_plan(const struct fp_advice *a, FILE *f)
{
	struct plan *p;
	size_t i;

	if (!a || !f)
		return FP_EINVAL;
	p = fp_malloc(sizeof(*p));
	if (!p)
		return FP_ENOMEM;
	make_plan(a, p);
	if (!p->n) {
		fprintf(f, "# nothing missing: every rule ran on the evidence it needs\n");
	} else {
		fprintf(f,
			"# runs that collect what the advice on %s lacked (one at a time: "
			"counters serialise launches, PC sampling excludes them)\n",
			a->path ? a->path : "the profile");
		for (i = 0; i < p->n; i++)
			fprintf(f, "# for %s\n%s\n", p->rules[i], p->line[i]);
		fprintf(f, "# then\n%s\n", p->advise);
	}
	fp_free(p);
	return ferror(f) ? FP_EIO : FP_OK;
}

/* ---- text ------------------------------------------------------------------------------------ */

static void evidence_text(const struct fp_advice *a, const struct fp__adv_finding *fd, FILE *f)
{
	size_t j, col;
	char v[64];

	fprintf(f, "     evidence:");
	col = 15;
	for (j = 0; j < fd->nev; j++) {
		const struct fp__adv_ev *e = &a->ev[fd->ev_first + j];
		char item[640];
		size_t n;

		if (e->text)
			snprintf(item, sizeof(item), "%s %s (%s)%s", e->name, e->text, e->source,
				 j + 1 < fd->nev ? ";" : "");
		else {
			value_text(e->value, e->unit, v, sizeof(v));
			snprintf(item, sizeof(item), "%s %s (%s)%s", e->name, v, e->source,
				 j + 1 < fd->nev ? ";" : "");
		}
		n = strlen(item);
		if (col + 1 + n > WIDTH && col > 15) {
			fprintf(f, "\n%*s", 15, "");
			col = 15;
		} else {
			fputc(' ', f);
			col++;
		}
		fputs(item, f);
		col += n;
	}
	fputc('\n', f);
}

static void finding_text(const struct fp_advice *a, const struct fp__adv_finding *fd, size_t n,
			 FILE *f)
{
	char head[64], s[32], sh[32];

	snprintf(head, sizeof(head), "  %zu. [%s] ", n, fp__adv_rule(fd->rule)->info.name);
	fputs(head, f);
	wrap(f, fd->title, strlen(head), 5);
	if (fd->file)
		fprintf(f, "     at %s:%u (%s)\n", fd->file, fd->line, fd->line_source);
	if (fd->nev)
		evidence_text(a, fd, f);
	if (!isnan(fd->saving_ns)) {
		char text[1024];

		fp__adv_fmt_ns(fd->saving_ns, s, sizeof(s));
		fp__adv_fmt(a->run_ns > 0 ? 100 * fd->saving_ns / a->run_ns : NAN, sh, sizeof(sh));
		snprintf(text, sizeof(text), "saving: about %s (%s%% of %s): %s", s, sh,
			 a->run_what, fd->method ? fd->method : "");
		fputs("     ", f);
		wrap(f, text, 5, 7);
	} else {
		char text[1024];

		snprintf(text, sizeof(text), "saving: %s",
			 fd->method ? fd->method : "not estimated");
		fputs("     ", f);
		wrap(f, text, 5, 7);
	}
	if (fd->suggestion) {
		char text[2048];

		snprintf(text, sizeof(text), "try: %s", fd->suggestion);
		fputs("     ", f);
		wrap(f, text, 5, 7);
	}
}

int fp_advice_render(const struct fp_advice *a, FILE *f)
{
	size_t i, j, r, n;
	char b1[32], b2[32];
	bool any_skip = false;

	if (!a || !f)
		return FP_EINVAL;
	fp__adv_fmt_ns(a->total_ns, b1, sizeof(b1));
	fp__adv_fmt(a->launches, b2, sizeof(b2));
	fprintf(f, "flagprism advise: %s\n", a->path ? a->path : "(profile)");
	fprintf(f,
		"  %zu kernel node%s, %s of kernel time in %s launches%s; advising the %zu "
		"taking the most",
		a->nkernel_nodes, a->nkernel_nodes == 1 ? "" : "s", b1, b2,
		a->merged ? " (a merge across ranks: per-rank means)" : "", a->nkernels);
	fprintf(f, " (at least %g%% each, at most %zu)\n", 100 * a->o.min_share, a->o.max_kernels);
	for (i = 1; i < a->nsrc; i++)
		fprintf(f, "  with evidence from %s\n",
			a->src[i].path ? a->src[i].path : "(profile)");
	for (i = 0; i < a->nkernels; i++) {
		const struct fp__adv_kernel *k = &a->kernels[i];

		fp__adv_fmt_ns(k->ns, b1, sizeof(b1));
		fp__adv_fmt(k->count, b2, sizeof(b2));
		fprintf(f, "\n#%zu %s: %.3g%% of the kernel time (%s, %s launch%s)", i + 1,
			k->shown, 100 * k->share, b1, b2, k->count == 1 ? "" : "es");
		if (k->dev_type)
			fprintf(f, " on %s %s%s%s%s", k->dev_type, k->dev_id ? k->dev_id : "?",
				k->pk.arch[0] ? " (arch " : "", k->pk.arch,
				k->pk.arch[0] ? ")" : "");
		fputc('\n', f);
		for (j = 0, n = 0; j < a->nfindings; j++)
			if (a->findings[j].kernel == i)
				finding_text(a, &a->findings[j], ++n, f);
		if (!n && k->foreign)
			fprintf(f,
				"  a library's kernel, not Triton's: the kernel rules do not apply "
				"(the run's findings cover its time)\n");
		else if (!n)
			fprintf(f, "  no finding: the rules that ran saw nothing to change\n");
	}
	for (j = 0, n = 0; j < a->nfindings; j++) {
		if (a->findings[j].kernel < a->nkernels)
			continue;
		if (!n)
			fprintf(f, "\nThe run\n");
		finding_text(a, &a->findings[j], ++n, f);
	}
	fprintf(f, "\nRules\n");
	for (r = 0; r < fp__adv_nrules(); r++) {
		const struct fp__adv_status *st = &a->status[r];
		const struct fp_advise_rule_info *in = &fp__adv_rule(r)->info;
		char line[1024];

		if (!st->ran && !st->skipped) {
			fprintf(f, "  %-15s not applicable\n", in->name);
			continue;
		}
		line[0] = '\0';
		if (st->ran && !strcmp(in->scope, "run"))
			snprintf(line, sizeof(line), "ran, %zu finding%s%s", st->findings,
				 st->findings == 1 ? "" : "s", st->skipped ? "; " : "");
		else if (st->ran)
			snprintf(line, sizeof(line), "ran on %zu kernel%s, %zu finding%s%s",
				 st->ran, st->ran == 1 ? "" : "s", st->findings,
				 st->findings == 1 ? "" : "s", st->skipped ? "; " : "");
		if (st->skipped) {
			size_t used = strlen(line);
			char on[32] = "";

			any_skip = true;
			if (st->ran)
				snprintf(on, sizeof(on), " on %zu", st->skipped);
			snprintf(line + used, sizeof(line) - used, "could not run%s: %s (needs %s)",
				 on, st->why ? st->why : "", in->enable);
		}
		fprintf(f, "  %-15s ", in->name);
		wrap(f, line, 18, 18);
	}
	if (any_skip)
		fprintf(f, "  (flagprism advise --plan prints the runs that would let them run)\n");
	if (a->nnotes) {
		fprintf(f, "\nNotes\n");
		for (i = 0; i < a->nnotes; i++) {
			fputs("  ", f);
			wrap(f, a->notes[i], 2, 4);
		}
	}
	return ferror(f) ? FP_EIO : FP_OK;
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static void kv_num(struct fp_jsonw *w, const char *k, double v)
{
	if (isnan(v))
		fp_jsonw_kv_null(w, k);
	else
		fp_jsonw_kv_double(w, k, v);
}

static void finding_json(const struct fp_advice *a, const struct fp__adv_finding *fd, size_t rank,
			 struct fp_jsonw *w)
{
	size_t j;

	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, "rank", rank);
	fp_jsonw_kv_string(w, "rule", fp__adv_rule(fd->rule)->info.name);
	fp_jsonw_kv_string(w, "kind", fd->kind == FP__ADV_POSITION ? "position" : "cause");
	if (fd->kernel < a->nkernels) {
		fp_jsonw_kv_uint(w, "kernel", fd->kernel);
		fp_jsonw_kv_string(w, "kernel_name", a->kernels[fd->kernel].shown);
	} else {
		fp_jsonw_kv_null(w, "kernel");
		fp_jsonw_kv_null(w, "kernel_name");
	}
	fp_jsonw_kv_string(w, "title", fd->title);
	fp_jsonw_key(w, "line");
	if (fd->file) {
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "file", fd->file);
		fp_jsonw_kv_uint(w, "line", fd->line);
		fp_jsonw_kv_string(w, "source", fd->line_source);
		fp_jsonw_object_end(w);
	} else {
		fp_jsonw_null(w);
	}
	fp_jsonw_key(w, "saving");
	fp_jsonw_object_begin(w);
	kv_num(w, "ns", fd->saving_ns);
	kv_num(w, "share", a->run_ns > 0 ? fd->saving_ns / a->run_ns : NAN);
	fp_jsonw_kv_string(w, "of", a->run_what);
	fp_jsonw_kv_string(w, "method", fd->method);
	fp_jsonw_object_end(w);
	fp_jsonw_kv_string(w, "suggestion", fd->suggestion);
	fp_jsonw_key(w, "evidence");
	fp_jsonw_array_begin(w);
	for (j = 0; j < fd->nev; j++) {
		const struct fp__adv_ev *e = &a->ev[fd->ev_first + j];

		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "name", e->name);
		if (e->text)
			fp_jsonw_kv_string(w, "text", e->text);
		else
			kv_num(w, "value", e->value);
		fp_jsonw_kv_string(w, "unit", e->unit);
		fp_jsonw_kv_string(w, "source", e->source);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_object_end(w);
}

int fp_advice_write_json(const struct fp_advice *a, struct fp_jsonw *w)
{
	struct plan *p;
	size_t i, j, r;

	if (!a || !w)
		return FP_EINVAL;
	p = fp_malloc(sizeof(*p));
	if (!p)
		return FP_ENOMEM;
	make_plan(a, p);
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "format", "flagprism-advice");
	fp_jsonw_kv_uint(w, "format_version", 1);
	fp_jsonw_kv_string(w, "flagprism_version", fp_version_string());
	fp_jsonw_kv_string(w, "profile", a->path);
	fp_jsonw_key(w, "with");
	fp_jsonw_array_begin(w);
	for (i = 1; i < a->nsrc; i++)
		fp_jsonw_string(w, a->src[i].path);
	fp_jsonw_array_end(w);
	fp_jsonw_key(w, "summary");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, "kernel_nodes", a->nkernel_nodes);
	kv_num(w, "kernel_time_ns", a->total_ns);
	kv_num(w, "launches", a->launches);
	fp_jsonw_kv_uint(w, "kernels_advised", a->nkernels);
	fp_jsonw_kv_uint(w, "trace_kernel_events", a->nevents);
	fp_jsonw_kv_bool(w, "merged_ranks", a->merged);
	fp_jsonw_kv_string(w, "backend", a->src[0].backend);
	fp_jsonw_kv_string(w, "context", a->src[0].context);
	fp_jsonw_object_end(w);
	fp_jsonw_key(w, "kernels");
	fp_jsonw_array_begin(w);
	for (i = 0; i < a->nkernels; i++) {
		const struct fp__adv_kernel *k = &a->kernels[i];

		fp_jsonw_object_begin(w);
		fp_jsonw_kv_uint(w, "rank", i + 1);
		fp_jsonw_kv_string(w, "name", k->shown);
		fp_jsonw_kv_string(w, "frame", k->name);
		kv_num(w, "time_ns", k->ns);
		kv_num(w, "share", k->share);
		kv_num(w, "launches", k->count);
		fp_jsonw_kv_string(w, "device_type", k->dev_type);
		fp_jsonw_kv_string(w, "device_id", k->dev_id);
		fp_jsonw_kv_string(w, "arch", k->pk.arch[0] ? k->pk.arch : NULL);
		fp_jsonw_kv_bool(w, "peaks_known", k->pk.known);
		kv_num(w, "programs", k->programs);
		fp_jsonw_kv_bool(w, "triton", k->triton);
		fp_jsonw_kv_bool(w, "library", k->foreign);
		fp_jsonw_key(w, "findings");
		fp_jsonw_array_begin(w);
		for (j = 0; j < a->nfindings; j++)
			if (a->findings[j].kernel == i)
				fp_jsonw_uint(w, j + 1);
		fp_jsonw_array_end(w);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_key(w, "findings");
	fp_jsonw_array_begin(w);
	for (j = 0; j < a->nfindings; j++)
		finding_json(a, &a->findings[j], j + 1, w);
	fp_jsonw_array_end(w);
	fp_jsonw_key(w, "rules");
	fp_jsonw_array_begin(w);
	for (r = 0; r < fp__adv_nrules(); r++) {
		const struct fp__adv_status *st = &a->status[r];
		const struct fp_advise_rule_info *in = &fp__adv_rule(r)->info;

		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "name", in->name);
		fp_jsonw_kv_string(w, "title", in->title);
		fp_jsonw_kv_string(w, "scope", in->scope);
		fp_jsonw_kv_string(w, "status",
				   st->skipped ? (st->ran ? "partial" : "could_not_run") :
				   st->ran     ? "ran" :
						 "not_applicable");
		fp_jsonw_kv_uint(w, "ran", st->ran);
		fp_jsonw_kv_uint(w, "skipped", st->skipped);
		fp_jsonw_kv_uint(w, "findings", st->findings);
		fp_jsonw_kv_string(w, "why", st->why);
		fp_jsonw_kv_string(w, "enable", st->skipped ? in->enable : NULL);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_key(w, "plan");
	fp_jsonw_array_begin(w);
	for (i = 0; i < p->n; i++) {
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "command", p->line[i]);
		fp_jsonw_kv_string(w, "rules", p->rules[i]);
		fp_jsonw_object_end(w);
	}
	if (p->n) {
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "command", p->advise);
		fp_jsonw_kv_string(w, "rules", "(combine the runs)");
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_key(w, "notes");
	fp_jsonw_array_begin(w);
	for (i = 0; i < a->nnotes; i++)
		fp_jsonw_string(w, a->notes[i]);
	fp_jsonw_array_end(w);
	fp_free(p);
	return fp_jsonw_object_end(w);
}

int fp_advice_save_json(const struct fp_advice *a, const char *path, struct fp_diag *diag)
{
	struct fp_outfile of;
	struct fp_jsonw *w;
	int rc;

	if (!a || !path)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_advice_save_json: NULL argument");
	rc = fp_outfile_open(&of, path, FP_OUTFILE_DASH_STDOUT, diag);
	if (rc)
		return rc;
	w = fp_jsonw_new_file(of.f, FP_JSONW_PRETTY);
	if (!w) {
		fp_outfile_abort(&of);
		return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	}
	rc = fp_advice_write_json(a, w);
	if (!rc)
		rc = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	if (!rc)
		fputc('\n', of.f);
	return fp_outfile_finish(&of, rc, diag);
}
