/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The raw record dump (<stem>_raw_records.txt, written when the launch asks for
 * export_raw_records): the 8 header words, then one line per stored record slot in buffer order
 * (program, then slot) with all 8 words in hex and every field decoded per
 * docs/formats/record-format.md. It is for checking the device side bit by bit, so it shows what was
 * stored, not what the reports derive from it (no means, no references); closed-form records
 * (flags bit 1) appear as the decoder expanded them, with the flag cleared. The check area, when
 * there is one, comes right after the header: the tensor table and every check slot's words.
 */
#include "fp-setup.h"

#include <math.h>

#include "debug/report-internal.h"

static int cmp_rec(const void *a, const void *b)
{
	const struct fp_dbg_record *x = *(const struct fp_dbg_record *const *)a;
	const struct fp_dbg_record *y = *(const struct fp_dbg_record *const *)b;

	if (x->program != y->program)
		return x->program < y->program ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static double f64(uint64_t bits)
{
	double d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

static void header(struct fp__tbuf *t, const struct fp__dbg_wctx *c)
{
	const struct fp_dbg_run_info *in = c->info;
	uint64_t layout = FP_DBG_FORMAT_VERSION | (uint64_t)FP_DBG_RECORD_WORDS << 16 |
			  (uint64_t)FP_DBG_HEADER_WORDS << 32 | (uint64_t)in->flags << 48;
	const struct {
		const char *name;
		uint64_t v;
	} w[8] = {
		{"magic", FP_DBG_MAGIC},
		{"layout", layout},
		{"slots_per_program", in->slots_per_program},
		{"programs", in->programs},
		{"overflow", in->overflow_count},
		{"dump_cursor", in->dump_cursor},
		{"dump_capacity", in->dump_capacity},
		{"nsites", fp_dbg_run_site_count(c->run)},
	};
	unsigned i;

	fp__tb_printf(t, "FlagPrism raw records: %s (format v%d)\n", c->launch->kernel,
		      FP_DBG_FORMAT_VERSION);
	for (i = 0; i < 8; i++) {
		fp__tb_printf(t, "header word %u  ", i);
		fp__tb_hex(t, w[i].v);
		fp__tb_printf(t, "  %s=%" PRIu64, w[i].name, w[i].v);
		if (i == 1)
			fp__tb_printf(t, " (version=%d record_words=%d header_words=%d flags=0x%x)",
				      FP_DBG_FORMAT_VERSION, FP_DBG_RECORD_WORDS,
				      FP_DBG_HEADER_WORDS, in->flags);
		fp__tb_ch(t, '\n');
	}
	fp__tb_printf(t, "stored records: %" PRIu64 " (unused slots are all zero and not listed)\n",
		      in->record_count);
}

/* The check area as decoded: the tensor table and every check slot (fired or not). */
static void check_area(struct fp__tbuf *t, const struct fp__dbg_wctx *c)
{
	const struct fp_dbg_table_entry *tab;
	const struct fp_dbg_check_slot *k;
	const char *const *names;
	size_t np, nk, i, j;

	if (!c->info->has_checks)
		return;
	np = fp_dbg_run_params(c->run, &names, &tab);
	k = fp_dbg_run_checks(c->run, &nk);
	fp__tb_printf(t, "check area: %zu tensor-table entries, %zu check slots, %s\n", np, nk,
		      c->info->suppress ? "lanes out of bounds suppressed" :
					  "lanes out of bounds performed");
	for (i = 0; tab && i < np; i++) {
		fp__tb_printf(t, "  table %zu %s  view ", i, names[i]);
		fp__tb_hex(t, tab[i].view_lo);
		fp__tb_str(t, "..");
		fp__tb_hex(t, tab[i].view_hi);
		fp__tb_str(t, "  storage ");
		fp__tb_hex(t, tab[i].storage_lo);
		fp__tb_str(t, "..");
		fp__tb_hex(t, tab[i].storage_hi);
		fp__tb_ch(t, '\n');
	}
	for (i = 0; i < nk && !t->err; i++) {
		fp__tb_printf(t,
			      "  slot %zu %s statement=%u fired=%" PRIu64 " count=%" PRIu64
			      " descended=%" PRIu64,
			      i, fp_dbg_rule_name(k[i].rule), k[i].statement, k[i].fired,
			      k[i].count, k[i].descended);
		if (k[i].has_range) {
			fp__tb_str(t, " lo=");
			fp__tb_hex(t, k[i].lo);
			fp__tb_str(t, " hi=");
			fp__tb_hex(t, k[i].hi);
		}
		if (k[i].has_first) {
			fp__tb_printf(t, " first=(program %" PRIu64 ", seq %u, lane %" PRIu64 ")",
				      k[i].first_program, k[i].first_seq, k[i].first_lane);
			fp__tb_str(t, " value=");
			fp__tb_hex(t, k[i].first_value);
			fp__tb_printf(t, " iter=%" PRId64, k[i].first_iter);
		}
		if (k[i].nprograms) {
			fp__tb_str(t, " programs=");
			for (j = 0; j < k[i].nprograms; j++)
				fp__tb_printf(t, "%s%" PRIu64, j ? "," : "", k[i].programs[j]);
			if (k[i].programs_more)
				fp__tb_str(t, ",...");
		}
		if (k[i].unobservable)
			fp__tb_str(t, " unobservable");
		fp__tb_ch(t, '\n');
	}
}

static void word(struct fp__tbuf *t, unsigned i, uint64_t v)
{
	static const char *const labels[8] = {
		" | w0=", " | w1=", " | w2=", " | w3=", " | w4=", " | w5=", " | w6=", " | w7="};

	fp__tb_str(t, labels[i]);
	fp__tb_hex(t, v);
}

/* " name=value" with an unsigned value (no stdio: one line per record adds up). */
static void field(struct fp__tbuf *t, const char *name, uint64_t v)
{
	fp__tb_str(t, name);
	fp__tb_u64(t, v, 0);
}

/* " name=value" with a float64, exact (shortest text that reads back). */
static void field_f64(struct fp__tbuf *t, const char *name, uint64_t bits)
{
	char buf[40];
	double d = f64(bits);
	int n;

	fp__tb_str(t, name);
	if (isnan(d))
		fp__tb_str(t, "nan");
	else if (isinf(d))
		fp__tb_str(t, d < 0 ? "-inf" : "inf");
	else if ((n = fp__dbg_fmt_json(d, buf, sizeof(buf))) > 0)
		fp__tb_mem(t, buf, (size_t)n);
}

static void dump_field(struct fp__tbuf *t, uint64_t off)
{
	if (off == FP_DBG_NO_DUMP)
		fp__tb_str(t, " dump=none");
	else
		field(t, " dump=", off);
}

static void record(struct fp__tbuf *t, const struct fp_dbg_record *r)
{
	static const char *const names[] = {" first_addr", " last_addr", " min_addr", " max_addr"};
	const uint64_t *w = r->words;
	uint64_t dims[3];
	bool flat;
	unsigned ndim, nd = fp_dbg_record_shape(r, dims, &flat, &ndim), i;
	enum fp_dbg_kind kind = fp_dbg_record_kind(r);

	field(t, "program=", r->program);
	field(t, " slot=", r->slot);
	word(t, 0, w[0]);
	field(t, " site=", w[0] & 0xffff);
	fp__tb_str(t, " kind=");
	fp__tb_str(t, fp_dbg_kind_name(kind));
	fp__tb_str(t, " dtype=");
	fp__tb_str(t, fp_dtype_name(fp_dbg_record_dtype(r)));
	field(t, " ndim=", ndim);
	fp__tb_str(t, " flags=0x");
	fp__tb_ch(t, "0123456789abcdef"[(w[0] >> 36) & 0xf]);
	field(t, " seq=", w[0] >> 40);
	word(t, 1, w[1]);
	fp__tb_str(t, flat ? " numel=[" : " shape=[");
	for (i = 0; i < nd; i++) {
		if (i)
			fp__tb_ch(t, ',');
		fp__tb_u64(t, dims[i], 0);
	}
	fp__tb_ch(t, ']');
	word(t, 2, w[2]);
	if (kind == FP_DBG_KIND_VALUE) {
		field(t, " nan=", w[2] & 0xffffffffu);
		field(t, " inf=", w[2] >> 32);
		word(t, 3, w[3]);
		field(t, " zero=", w[3] & 0xffffffffu);
		dump_field(t, fp_dbg_record_dump_offset(r));
		word(t, 4, w[4]);
		field_f64(t, " sum=", w[4]);
		word(t, 5, w[5]);
		field_f64(t, " sumsq=", w[5]);
		for (i = 6; i <= 7; i++) {
			word(t, i, w[i]);
			if (fp_dtype_is_float(fp_dbg_record_dtype(r))) {
				field_f64(t, i == 6 ? " min=" : " max=", w[i]);
			} else {
				fp__tb_str(t, i == 6 ? " min=" : " max=");
				fp__tb_i64(t, (int64_t)w[i], 0);
			}
		}
	} else {
		field(t, " active=", w[2] & 0xffffffffu);
		fp__tb_str(t, " status=");
		fp__tb_str(t, fp_dbg_addr_status_name((uint32_t)(w[2] >> 32)));
		for (i = 3; i <= 6; i++) {
			word(t, i, w[i]);
			fp__tb_str(t, names[i - 3]);
		}
		word(t, 7, w[7]);
		dump_field(t, fp_dbg_record_dump_offset(r));
	}
	fp__tb_ch(t, '\n');
}

int fp__dbg_write_raw(const struct fp__dbg_wctx *c, FILE *f)
{
	size_t nsites = fp_dbg_run_site_count(c->run), total = 0, i, j, n;
	const struct fp_dbg_record **v;
	struct fp__tbuf *t;
	int st;

	for (i = 0; i < nsites; i++)
		total += fp_dbg_run_site(c->run, i)->nrecords;
	v = fp_calloc(total ? total : 1, sizeof(*v));
	t = fp_malloc(sizeof(*t));
	if (!v || !t) {
		fp_free(v);
		fp_free(t);
		return fp_diag_set(c->diag, FP_ENOMEM, 0, "out of memory");
	}
	total = 0;
	for (i = 0; i < nsites; i++) {
		const struct fp_dbg_record *r = fp_dbg_run_records(c->run, i, &n);

		for (j = 0; j < n; j++)
			v[total++] = &r[j];
	}
	qsort(v, total, sizeof(*v), cmp_rec); /* back to buffer order */
	fp__tb_init(t, f);
	header(t, c);
	check_area(t, c);
	for (i = 0; i < total && !t->err; i++)
		record(t, v[i]);
	st = fp__tb_flush(t);
	fp_free(v);
	fp_free(t);
	return st;
}
