/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The `ncu` command line that `flagprism profile --ncu` runs (fp_ncu_command_argv): CSV of the
 * raw page in base units, clocks left as the program would see them, every process of the
 * program's tree, written to a log file the importer then reads. Only builds the vector; the
 * caller runs it (and owns the decision of what the target command is).
 */
#include "fp-setup.h"

#include <flagprism/ncu.h>

/* Words are collected first, then copied into one block: pointers, then the strings. */
struct words {
	const char *w[96];
	char num[4][24];
	size_t n;
	size_t bytes;
	bool overflow;
};

static void add(struct words *v, const char *s)
{
	if (v->n == FP_ARRAY_SIZE(v->w)) {
		v->overflow = true;
		return;
	}
	v->w[v->n++] = s;
	v->bytes += strlen(s) + 1;
}

int fp_ncu_command_argv(const struct fp_ncu_command *c, const char *const *target, size_t ntarget,
			char ***argv, size_t *argc)
{
	struct words v;
	const char *metrics;
	char *sections = NULL, *s, *comma;
	size_t i, head, total, nnum = 0;
	char **out, *p;

	if (!c || !argv || !c->log_file || !*c->log_file || !target || !ntarget || !target[0] ||
	    !*target[0] || target[0][0] == '-')
		return FP_EINVAL;
	for (i = 0; i < ntarget; i++)
		if (!target[i])
			return FP_EINVAL;
	memset(&v, 0, sizeof(v));
	add(&v, c->ncu && *c->ncu ? c->ncu : "ncu");
	add(&v, "--csv");
	add(&v, "--page");
	add(&v, c->details_page ? "details" : "raw");
	add(&v, "--print-units");
	add(&v, "base");
	add(&v, "--clock-control");
	add(&v, c->clock_control && *c->clock_control ? c->clock_control : "none");
	add(&v, "--target-processes");
	add(&v, "all");
	metrics = c->metrics ? c->metrics : FP_NCU_DEFAULT_METRICS;
	if (*metrics) {
		add(&v, "--metrics");
		add(&v, metrics);
	}
	if (c->sections && *c->sections) {
		sections = fp_strdup(c->sections);
		if (!sections)
			return FP_ENOMEM;
		for (s = sections; s; s = comma) {
			comma = strchr(s, ',');
			if (comma)
				*comma++ = '\0';
			if (!*s)
				continue;
			add(&v, "--section");
			add(&v, s);
		}
	}
	if (c->set && *c->set) {
		add(&v, "--set");
		add(&v, c->set);
	}
	if (c->kernel_name && *c->kernel_name) {
		add(&v, "--kernel-name");
		add(&v, c->kernel_name);
	}
	if (c->launch_skip) {
		snprintf(v.num[nnum], sizeof(v.num[0]), "%" PRIu64, c->launch_skip);
		add(&v, "--launch-skip");
		add(&v, v.num[nnum++]);
	}
	if (c->launch_count) {
		snprintf(v.num[nnum], sizeof(v.num[0]), "%" PRIu64, c->launch_count);
		add(&v, "--launch-count");
		add(&v, v.num[nnum++]);
	}
	if (c->replay_mode && *c->replay_mode) {
		add(&v, "--replay-mode");
		add(&v, c->replay_mode);
	}
	if (c->print_kernel_base && *c->print_kernel_base) {
		add(&v, "--print-kernel-base");
		add(&v, c->print_kernel_base);
	}
	add(&v, "--log-file");
	add(&v, c->log_file);
	head = v.n;
	if (v.overflow) {
		fp_free(sections);
		return FP_EINVAL; /* more than 40-odd sections: not a command line we build */
	}
	/* Pointers (head words, target words, NULL), then every string. */
	total = v.bytes;
	for (i = 0; i < ntarget; i++) {
		size_t l = strlen(target[i]) + 1;

		if (!fp__add_ok(total, l, &total)) {
			fp_free(sections);
			return FP_ENOMEM;
		}
	}
	if (head + ntarget + 1 < head ||
	    !fp__add_ok(total, (head + ntarget + 1) * sizeof(char *), &total)) {
		fp_free(sections);
		return FP_ENOMEM;
	}
	out = fp_malloc(total);
	if (!out) {
		fp_free(sections);
		return FP_ENOMEM;
	}
	p = (char *)(out + head + ntarget + 1);
	for (i = 0; i < head + ntarget; i++) {
		const char *w = i < head ? v.w[i] : target[i - head];
		size_t l = strlen(w) + 1;

		memcpy(p, w, l);
		out[i] = p;
		p += l;
	}
	out[head + ntarget] = NULL;
	fp_free(sections);
	*argv = out;
	if (argc)
		*argc = head + ntarget;
	return FP_OK;
}
