/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the TTIR parser and estimator. Any input: the parse must succeed or fail
 * cleanly with a sane diagnostic (a known status, a position inside the input, a message). On
 * success the op table's structural invariants are checked (pre-order indices, parents before
 * children, nested ranges, function ranges), every function is estimated and a line lookup runs
 * over the table. A violated invariant aborts, which libFuzzer reports as a crash.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flagprism/status.h>
#include <flagprism/ttir.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                       \
	do {                                                                              \
		if (!(cond)) {                                                            \
			fprintf(stderr, "fuzz-ttir: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                \
			abort();                                                          \
		}                                                                         \
	} while (0)

static void check_type(const struct fp_ttir_type *t)
{
	uint32_t i;

	CHECK(t->text && t->elem);
	CHECK(t->rank <= FP_TTIR_MAX_RANK);
	CHECK(t->rank == 0 || t->shape);
	for (i = 0; i < t->rank; i++)
		CHECK(t->shape[i] >= -1);
}

static void check_module(const struct fp_ttir *m)
{
	size_t n = fp_ttir_op_count(m), nf = fp_ttir_func_count(m), i;
	uint32_t j;

	for (i = 0; i < n; i++) {
		const struct fp_ttir_op *op = fp_ttir_op_at(m, i);

		CHECK(op && op->index == i && op->name);
		CHECK(op->end > i && op->end <= n);
		CHECK(op->func == FP_TTIR_NONE || op->func < nf);
		CHECK((op->n_regions > 0) == ((op->flags & FP_TTIR_OP_REGIONS) != 0));
		if (op->parent != FP_TTIR_NONE) {
			const struct fp_ttir_op *p = fp_ttir_op_at(m, op->parent);

			CHECK(op->parent < i && p && op->end <= p->end);
			CHECK(op->region < p->n_regions && op->depth == p->depth + 1);
			CHECK(op->func == p->func);
		}
		for (j = 0; j < op->n_results; j++) {
			CHECK(op->results[j].name && op->results[j].name[0] == '%');
			check_type(&op->results[j].type);
		}
		for (j = 0; j < op->n_sig_types; j++)
			check_type(&op->sig_types[j]);
		for (j = 0; j < op->n_operands; j++)
			CHECK(op->operands[j] && op->operands[j][0] == '%');
		CHECK(!op->loc.file || op->loc.line > 0 || op->loc.col >= 0);
	}
	for (i = 0; i < nf; i++) {
		const struct fp_ttir_func *f = fp_ttir_func_at(m, i);
		struct fp_ttir_estimate e;

		CHECK(f && f->name && f->first_op <= f->end_op && f->end_op <= n);
		for (j = 0; j < f->n_args; j++)
			check_type(&f->args[j].type);
		for (j = f->first_op; j < f->end_op; j++)
			CHECK(fp_ttir_op_at(m, j)->func == i);
		if (fp_ttir_func_find(m, f->name) != FP_TTIR_NPOS) {
			int rc = fp_ttir_estimate(m, f->name, &e);

			CHECK(rc == FP_OK || rc == FP_ENOMEM);
			if (rc == FP_OK)
				CHECK(e.has_dynamic_loops == (e.dynamic_loops > 0));
		}
	}
	if (n) {
		const struct fp_ttir_op *op = fp_ttir_op_at(m, n / 2);
		size_t hit = fp_ttir_find_line(m, op->loc.file, op->loc.line,
					       FP_TTIR_MATCH_LOC | FP_TTIR_MATCH_CALLER, 0);

		CHECK(op->loc.file == NULL || hit <= n / 2);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* small caps keep each input fast; the defaults are exercised by the unit tests */
	struct fp_ttir_limits lim = {1 << 20, 1 << 14, 1 << 14, 32};
	struct fp_ttir *m = NULL;
	struct fp_diag diag;
	int rc;

	rc = fp_ttir_parse_ex((const char *)data, size, &lim, &m, &diag);
	if (rc != FP_OK) {
		CHECK(m == NULL);
		CHECK(rc == FP_EFORMAT || rc == FP_ELIMIT || rc == FP_ENOMEM);
		CHECK(diag.status == rc);
		CHECK(diag.offset <= size);
		CHECK((diag.line >= 1 && diag.col >= 1) || rc == FP_ELIMIT);
		CHECK(diag.msg[0] != '\0');
		return 0;
	}
	check_module(m);
	fp_ttir_free(m);
	return 0;
}
