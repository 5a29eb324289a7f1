/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fp-test-tool: prints internal state of the library deterministically, one subcommand per
 * thing to look at, so pytest can compare it with checked-in golden files
 * (tests/python/test_*_golden.py, tests/data/golden/). Paths are printed as basenames and nothing
 * depends on time or addresses. A test helper, never installed; it uses only the public API.
 *
 *   fp-test-tool ttir-dump FILE       the op table of a TTIR file, one line per op
 *   fp-test-tool ttir-estimate FILE   per-program estimates of every function with a body
 *   fp-test-tool ttir-facts FILE      the facts `flagprism advise` reads (fp_ttir_facts()) of
 *                                     every function with a body, as JSON
 *   fp-test-tool debug-report FORMAT BUFFER SITES LAUNCH
 *                                     decode a Debugger record buffer (binary file) with its site
 *                                     table and launch JSON and print one report format (txt,
 *                                     json, op_log_txt, op_log_json, raw); a rejected buffer
 *                                     prints its status, byte offset and message instead
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/debug.h>
#include <flagprism/json.h>
#include <flagprism/status.h>
#include <flagprism/ttir.h>

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
};

static int read_file(const char *path, char **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0, got;
	char *b, *nb;

	if (!f) {
		fprintf(stderr, "fp-test-tool: %s: %s\n", path, strerror(errno));
		return -1;
	}
	b = malloc(cap);
	while (b) {
		got = fread(b + n, 1, cap - n, f);
		n += got;
		if (n < cap)
			break;
		cap *= 2;
		nb = realloc(b, cap);
		if (!nb) {
			free(b);
			b = NULL;
		} else {
			b = nb;
		}
	}
	if (!b || ferror(f)) {
		fprintf(stderr, "fp-test-tool: %s: cannot read\n", path);
		free(b);
		fclose(f);
		return -1;
	}
	fclose(f);
	*buf = b;
	*len = n;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static struct fp_ttir *load_ttir(const char *path)
{
	struct fp_diag diag;
	struct fp_ttir *m = NULL;
	char *text;
	size_t len;
	int rc;

	if (read_file(path, &text, &len))
		return NULL;
	rc = fp_ttir_parse(text, len, &m, &diag);
	free(text);
	if (rc) {
		fprintf(stderr, "fp-test-tool: %s:%" PRIu32 ":%" PRIu32 ": %s: %s\n",
			base_name(path), diag.line, diag.col, fp_status_name(rc), diag.msg);
		return NULL;
	}
	return m;
}

static void print_loc(const struct fp_ttir_loc *l)
{
	if (!l->file)
		fputs("?", stdout);
	else
		printf("%s:%" PRIu32 ":%" PRIu32, base_name(l->file), l->line, l->col);
}

static void print_types(const struct fp_ttir_type *t, size_t n, size_t stride)
{
	size_t i;

	if (n == 0) {
		fputs("-", stdout);
		return;
	}
	for (i = 0; i < n; i++) {
		const struct fp_ttir_type *ti =
			(const struct fp_ttir_type *)((const char *)t + i * stride);

		printf("%s%s", i ? "," : "", ti->text[0] ? ti->text : "?");
	}
}

static void print_flags(uint32_t f)
{
	static const struct {
		uint32_t bit;
		char c;
	} letters[] = {
		{FP_TTIR_OP_REGIONS, 'R'},  {FP_TTIR_OP_GENERIC, 'G'},
		{FP_TTIR_OP_CALLSITE, 'S'}, {FP_TTIR_OP_CONST_INT, 'K'},
		{FP_TTIR_OP_MASKED, 'M'},   {FP_TTIR_IN_FOR, 'F'},
		{FP_TTIR_IN_WHILE, 'W'},    {FP_TTIR_IN_LOOP, 'L'},
		{FP_TTIR_IN_IF, 'I'},       {FP_TTIR_IN_COMBINE_REGION, 'C'},
	};
	size_t i;

	fputs(" [", stdout);
	for (i = 0; i < sizeof(letters) / sizeof(letters[0]); i++)
		if (f & letters[i].bit)
			putchar(letters[i].c);
	fputs("]", stdout);
}

static void dump_op(const struct fp_ttir_op *op)
{
	uint32_t i;

	printf("%" PRIu32 " d%" PRIu32 " ", op->index, op->depth);
	if (op->parent == FP_TTIR_NONE)
		fputs("p- ", stdout);
	else
		printf("p%" PRIu32 ".%" PRIu32 " ", op->parent, op->region);
	printf("%s ", op->name);
	if (op->n_results == 0)
		fputs("-", stdout);
	for (i = 0; i < op->n_results; i++)
		printf("%s%s", i ? "," : "", op->results[i].name);
	fputs(" : ", stdout);
	if (op->n_results == 0)
		fputs("-", stdout);
	for (i = 0; i < op->n_results; i++)
		printf("%s%s", i ? "," : "",
		       op->results[i].type.text[0] ? op->results[i].type.text : "?");
	fputs(" sig=", stdout);
	print_types(op->sig_types, op->n_sig_types, sizeof(op->sig_types[0]));
	fputs(" in=", stdout);
	if (op->n_operands == 0)
		fputs("-", stdout);
	for (i = 0; i < op->n_operands; i++)
		printf("%s%s", i ? "," : "", op->operands[i]);
	fputs(" @ ", stdout);
	print_loc(&op->loc);
	if (op->flags & FP_TTIR_OP_CALLSITE) {
		fputs(" <- ", stdout);
		print_loc(&op->caller);
	}
	printf(" var=%s", op->var_name ? op->var_name : "-");
	if (op->flags & FP_TTIR_OP_CONST_INT)
		printf(" int=%" PRId64, op->int_value);
	if (op->axis >= 0)
		printf(" axis=%" PRId32, op->axis);
	if (op->callee)
		printf(" callee=%s", op->callee);
	print_flags(op->flags);
	putchar('\n');
}

static void dump_func(size_t i, const struct fp_ttir_func *f)
{
	uint32_t a;

	printf("func %zu @%s %s noinline=%d body=%d ops=%" PRIu32 "..%" PRIu32 " ir_line=%" PRIu32
	       " @ ",
	       i, f->name, f->is_public ? "public" : "private", f->noinline, f->has_body,
	       f->first_op, f->end_op, f->ir_line);
	print_loc(&f->loc);
	fputs(" results=", stdout);
	print_types(f->results, f->n_results, sizeof(f->results[0]));
	putchar('\n');
	for (a = 0; a < f->n_args; a++) {
		const struct fp_ttir_arg *arg = &f->args[a];

		printf("  arg %s : %s div=%" PRIu32 " @ ", arg->name, arg->type.text,
		       arg->divisibility);
		print_loc(&arg->loc);
		printf(" name=%s\n", arg->loc.name ? arg->loc.name : "-");
	}
}

static int cmd_ttir_dump(int argc, char **argv)
{
	struct fp_ttir *m;
	size_t i, nf, no;

	if (argc != 1)
		return 2;
	m = load_ttir(argv[0]);
	if (!m)
		return 1;
	nf = fp_ttir_func_count(m);
	no = fp_ttir_op_count(m);
	printf("# ttir-dump %s: %zu functions, %zu ops\n", base_name(argv[0]), nf, no);
	for (i = 0; i < nf; i++)
		dump_func(i, fp_ttir_func_at(m, i));
	for (i = 0; i < no; i++)
		dump_op(fp_ttir_op_at(m, i));
	fp_ttir_free(m);
	return 0;
}

static void print_estimate(const struct fp_ttir_estimate *e)
{
	unsigned c;

#define U64(f) printf("  %-22s %" PRIu64 "\n", #f, e->f)
#define U32(f) printf("  %-22s %" PRIu32 "\n", #f, e->f)
	U64(loads);
	U64(load_bytes);
	U64(masked_loads);
	U64(stores);
	U64(store_bytes);
	U64(masked_stores);
	U64(atomics);
	U64(atomic_bytes);
	U64(dots);
	U64(dot_flops);
	for (c = 0; c < FP_TTIR_NCLASS; c++)
		if (e->dot_flops_by_class[c])
			printf("  dot_flops.%-12s %" PRIu64 "\n",
			       fp_ttir_dclass_name((enum fp_ttir_dclass)c),
			       e->dot_flops_by_class[c]);
	U64(reductions);
	U64(reduce_elems);
	U64(scans);
	U64(scan_elems);
	for (c = 0; c < FP_TTIR_NCLASS; c++) {
		const char *cn = fp_ttir_dclass_name((enum fp_ttir_dclass)c);

		if (e->elem_ops[c])
			printf("  elem_ops.%-13s %" PRIu64 "\n", cn, e->elem_ops[c]);
		if (e->flops[c])
			printf("  flops.%-16s %" PRIu64 "\n", cn, e->flops[c]);
		if (e->special[c])
			printf("  special.%-14s %" PRIu64 "\n", cn, e->special[c]);
	}
	U64(conversions);
	U64(total_flops);
	U64(calls);
	U32(static_loops);
	U32(dynamic_loops);
	U32(conditionals);
	U32(unresolved_calls);
	printf("  %-22s %d\n", "has_dynamic_loops", e->has_dynamic_loops);
	printf("  %-22s %d\n", "saturated", e->saturated);
#undef U64
#undef U32
}

static int cmd_ttir_estimate(int argc, char **argv)
{
	struct fp_ttir_estimate e;
	struct fp_ttir *m;
	size_t i;
	int rc;

	if (argc != 1)
		return 2;
	m = load_ttir(argv[0]);
	if (!m)
		return 1;
	printf("# ttir-estimate %s\n", base_name(argv[0]));
	for (i = 0; i < fp_ttir_func_count(m); i++) {
		const struct fp_ttir_func *f = fp_ttir_func_at(m, i);

		if (!f->has_body)
			continue;
		rc = fp_ttir_estimate(m, f->name, &e);
		if (rc) {
			fprintf(stderr, "fp-test-tool: estimate %s: %s\n", f->name,
				fp_strerror(rc));
			fp_ttir_free(m);
			return 1;
		}
		printf("func @%s%s\n", f->name, i == fp_ttir_entry(m) ? " (entry)" : "");
		print_estimate(&e);
	}
	fp_ttir_free(m);
	return 0;
}

/* The IR text again, for the attributes fp_ttir_facts() reads from it. */
static int cmd_ttir_facts(int argc, char **argv)
{
	struct fp_ttir_facts f;
	struct fp_jsonw *w;
	struct fp_ttir *m;
	char *text = NULL;
	size_t len = 0, i;
	int rc = 0;

	if (argc != 1)
		return 2;
	m = load_ttir(argv[0]);
	if (!m || read_file(argv[0], &text, &len)) {
		fp_ttir_free(m);
		return 1;
	}
	printf("# ttir-facts %s\n", base_name(argv[0]));
	for (i = 0; i < fp_ttir_func_count(m) && !rc; i++) {
		const struct fp_ttir_func *fn = fp_ttir_func_at(m, i);

		if (!fn->has_body)
			continue;
		rc = fp_ttir_facts(m, fn->name, text, len, &f);
		if (rc) {
			fprintf(stderr, "fp-test-tool: facts %s: %s\n", fn->name, fp_strerror(rc));
			break;
		}
		printf("func @%s%s\n", fn->name, i == fp_ttir_entry(m) ? " (entry)" : "");
		fflush(stdout);
		w = fp_jsonw_new_file(stdout, FP_JSONW_PRETTY);
		rc = w ? fp_ttir_facts_write(&f, w) : FP_ENOMEM;
		if (!rc)
			rc = fp_jsonw_finish(w);
		fp_jsonw_free(w);
		printf("\n");
	}
	free(text);
	fp_ttir_free(m);
	return rc ? 1 : 0;
}

static int cmd_debug_report(int argc, char **argv)
{
	struct fp_dbg_findings *findings = NULL;
	struct fp_dbg_launch *launch = NULL;
	struct fp_dbg_run *run = NULL;
	char *buf = NULL, *sites = NULL, *lj = NULL;
	size_t nbuf, nsites, nlj;
	struct fp_diag diag;
	int rc = 1;

	if (argc != 4)
		return 2;
	if (read_file(argv[1], &buf, &nbuf) || read_file(argv[2], &sites, &nsites) ||
	    read_file(argv[3], &lj, &nlj))
		goto out;
	rc = fp_dbg_decode(buf, nbuf, sites, nsites, &run, &diag);
	if (!rc)
		rc = fp_dbg_launch_parse(run, lj, nlj, &launch, &diag);
	if (!rc)
		rc = fp_dbg_launch_findings(run, launch, &findings, &diag);
	if (!rc)
		rc = fp_dbg_write_format(run, launch, findings, argv[0], stdout, &diag);
	if (rc) {
		printf("error: %s at byte %" PRIu64 ": %s\n", fp_status_name(rc), diag.offset,
		       diag.msg);
		rc = 1;
	}
out:
	fp_dbg_findings_free(findings);
	fp_dbg_launch_free(launch);
	fp_dbg_run_free(run);
	free(buf);
	free(sites);
	free(lj);
	return rc;
}

static const struct cmd cmds[] = {
	{"ttir-dump", cmd_ttir_dump, "FILE"},
	{"ttir-estimate", cmd_ttir_estimate, "FILE"},
	{"ttir-facts", cmd_ttir_facts, "FILE"},
	{"debug-report", cmd_debug_report, "FORMAT BUFFER SITES LAUNCH"},
};

static int usage(void)
{
	size_t i;

	fputs("usage: fp-test-tool COMMAND ARGS...\n", stderr);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(stderr, "  %s %s\n", cmds[i].name, cmds[i].usage);
	return 2;
}

int main(int argc, char **argv)
{
	size_t i;
	int rc;

	if (argc < 2)
		return usage();
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name) != 0)
			continue;
		rc = cmds[i].fn(argc - 2, argv + 2);
		if (rc == 2)
			return usage();
		if (fflush(stdout) != 0)
			return 1;
		return rc;
	}
	return usage();
}
