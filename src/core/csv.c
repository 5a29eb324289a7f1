/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The strict CSV reader of include/flagprism/csv.h: one row per call, fields unescaped into a
 * capped buffer, errors with byte offset, line and column. Quoted stretches are copied in spans
 * between quotes (memchr), not byte by byte, so reading is linear and cheap. It knows nothing
 * about what the columns mean; the Nsight Compute importer (src/prof/ncu.c) does.
 */
#include "fp-setup.h"

#include <limits.h>

#include <flagprism/csv.h>

void fp_csv_reader_init(struct fp_csv_reader *r, const char *text, size_t len,
			const struct fp_csv_limits *lim)
{
	size_t cap;

	memset(r, 0, sizeof(*r));
	r->text = text ? text : "";
	r->len = text ? len : 0;
	r->line = 1;
	r->row_line = 1;
	if (lim)
		r->lim = *lim;
	if (!r->lim.max_field)
		r->lim.max_field = FP_CSV_DEFAULT_MAX_FIELD;
	if (!r->lim.max_fields)
		r->lim.max_fields = FP_CSV_DEFAULT_MAX_FIELDS;
	if (r->lim.max_fields > INT_MAX)
		r->lim.max_fields = INT_MAX; /* the field count is returned as an int */
	if (!r->lim.max_row)
		r->lim.max_row = FP_CSV_DEFAULT_MAX_ROW;
	/* One NUL per field on top of the row's bytes; saturate rather than wrap. */
	if (!fp__add_ok(r->lim.max_row, r->lim.max_fields, &cap))
		cap = SIZE_MAX - 1;
	fp_strbuf_init(&r->buf, cap);
	/* RFC 3629 allows a BOM; Excel-saved files often start with one. Offsets still count it. */
	if (r->len >= 3 && memcmp(r->text, "\xEF\xBB\xBF", 3) == 0)
		r->pos = 3;
}

void fp_csv_reader_release(struct fp_csv_reader *r)
{
	fp_strbuf_release(&r->buf);
	fp_free(r->starts);
	fp_free(r->lens);
	r->starts = NULL;
	r->lens = NULL;
	r->nfields = 0;
	r->alloc_fields = 0;
}

/* A row ends at LF, CRLF, the end of the input, or a CR that is the input's last byte. */
static bool row_end(const struct fp_csv_reader *r, size_t p)
{
	if (p >= r->len || r->text[p] == '\n')
		return true;
	return r->text[p] == '\r' && (p + 1 >= r->len || r->text[p + 1] == '\n');
}

/* Fill diag with the line and column of byte `off` (searching back for the line start). */
FP_PRINTF(5, 6)
static int fail_at(const struct fp_csv_reader *r, struct fp_diag *diag, int status, size_t off,
		   const char *fmt, ...)
{
	size_t start = off, i;
	uint32_t line = r->row_line;
	va_list ap;
	char msg[sizeof(diag->msg)];

	/* Lines between the row start and `off` (quoted fields may span lines). */
	for (i = (size_t)r->row_offset; i < off && i < r->len; i++)
		if (r->text[i] == '\n')
			line++;
	while (start > 0 && r->text[start - 1] != '\n')
		start--;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return fp_diag_set_pos(diag, status, off, line,
			       (uint32_t)FP_MIN(off - start + 1, UINT32_MAX), "%s", msg);
}

static int push_field(struct fp_csv_reader *r, size_t start)
{
	if (r->nfields == r->alloc_fields) {
		size_t n = r->alloc_fields ? r->alloc_fields * 2 : 16;
		size_t *s, *l;

		s = fp_reallocarray(r->starts, n, sizeof(*s));
		if (!s)
			return FP_ENOMEM;
		r->starts = s;
		l = fp_reallocarray(r->lens, n, sizeof(*l));
		if (!l)
			return FP_ENOMEM;
		r->lens = l;
		r->alloc_fields = n;
	}
	r->starts[r->nfields] = start;
	r->lens[r->nfields] = r->buf.len - start;
	r->nfields++;
	return fp_strbuf_addch(&r->buf, '\0');
}

/* Append bytes of the current field; a full buffer means the row is over its cap. */
static int add_bytes(struct fp_csv_reader *r, struct fp_diag *diag, const char *p, size_t n,
		     size_t field_start, size_t field_off)
{
	int rc;

	if (r->buf.len - field_start + n > r->lim.max_field)
		return fail_at(r, diag, FP_ELIMIT, field_off, "field longer than %zu bytes",
			       r->lim.max_field);
	/* The buffer holds one NUL per finished field besides the row's bytes. */
	if (r->buf.len - r->nfields + n > r->lim.max_row)
		return fail_at(r, diag, FP_ELIMIT, (size_t)r->row_offset,
			       "row longer than %zu bytes", r->lim.max_row);
	rc = fp_strbuf_add(&r->buf, p, n);
	if (rc == FP_ELIMIT)
		return fail_at(r, diag, FP_ELIMIT, (size_t)r->row_offset,
			       "row longer than %zu bytes", r->lim.max_row);
	return rc;
}

/* A quoted field starting at `p` (the opening quote). On success *pp is past the closing one. */
static int read_quoted(struct fp_csv_reader *r, struct fp_diag *diag, size_t *pp, uint32_t *line,
		       size_t field_start)
{
	size_t open = *pp, p = open + 1;
	const char *q, *nl;
	int rc;

	for (;;) {
		q = p < r->len ? memchr(r->text + p, '"', r->len - p) : NULL;
		if (!q)
			return fail_at(r, diag, FP_EFORMAT, open,
				       "quoted field is not closed before the end of the input");
		for (nl = r->text + p; (nl = memchr(nl, '\n', (size_t)(q - nl))) != NULL; nl++)
			(*line)++;
		rc = add_bytes(r, diag, r->text + p, (size_t)(q - (r->text + p)), field_start,
			       open);
		if (rc)
			return rc;
		p = (size_t)(q - r->text) + 1;
		if (p < r->len && r->text[p] == '"') { /* "" is one quote */
			rc = add_bytes(r, diag, "\"", 1, field_start, open);
			if (rc)
				return rc;
			p++;
			continue;
		}
		break;
	}
	if (p < r->len && r->text[p] != ',' && !row_end(r, p))
		return fail_at(
			r, diag, FP_EFORMAT, p,
			"expected ',' or the end of the row after a closing quote, found '%c'",
			r->text[p] >= 0x20 && r->text[p] < 0x7f ? r->text[p] : '?');
	*pp = p;
	return FP_OK;
}

int fp_csv_next(struct fp_csv_reader *r, struct fp_diag *diag)
{
	size_t p = r->pos, field_start, field_off;
	uint32_t line = r->line;
	int rc;

	fp_diag_clear(diag);
	fp_strbuf_reset(&r->buf);
	r->nfields = 0;
	if (p >= r->len)
		return 0;
	r->row_offset = p;
	r->row_line = line;
	for (;;) {
		field_off = p;
		field_start = r->buf.len;
		if (r->nfields >= r->lim.max_fields)
			return fail_at(r, diag, FP_ELIMIT, field_off,
				       "row has more than %zu fields", r->lim.max_fields);
		if (p < r->len && r->text[p] == '"') {
			rc = read_quoted(r, diag, &p, &line, field_start);
			if (rc)
				goto fail_row;
		} else {
			size_t s = p;

			while (p < r->len && r->text[p] != ',' && !row_end(r, p)) {
				if (r->text[p] == '"')
					return fail_at(r, diag, FP_EFORMAT, p,
						       "'\"' inside an unquoted field");
				p++;
			}
			rc = add_bytes(r, diag, r->text + s, p - s, field_start, field_off);
			if (rc)
				goto fail_row;
		}
		rc = push_field(r, field_start);
		if (rc)
			goto fail_row;
		if (p < r->len && r->text[p] == ',') {
			p++;
			continue;
		}
		if (p < r->len) { /* CRLF, LF or a final CR */
			if (r->text[p] == '\r')
				p++;
			if (p < r->len && r->text[p] == '\n')
				p++;
			line++;
		}
		break;
	}
	r->pos = p;
	r->line = line;
	return (int)r->nfields;
fail_row:
	if (rc == FP_ENOMEM)
		fp_diag_set(diag, rc, field_off, "out of memory reading a CSV row");
	else if (rc == FP_ELIMIT && diag && diag->status != FP_ELIMIT)
		fail_at(r, diag, rc, (size_t)r->row_offset, "row longer than %zu bytes",
			r->lim.max_row);
	return rc;
}

const char *fp_csv_field(const struct fp_csv_reader *r, size_t i, size_t *len)
{
	if (i >= r->nfields)
		return NULL;
	if (len)
		*len = r->lens[i];
	return r->buf.buf + r->starts[i];
}

bool fp_csv_skip_line(struct fp_csv_reader *r, const char **line, size_t *len)
{
	const char *s, *nl;
	size_t n;

	if (r->pos >= r->len)
		return false;
	s = r->text + r->pos;
	nl = memchr(s, '\n', r->len - r->pos);
	n = nl ? (size_t)(nl - s) : r->len - r->pos;
	r->pos += nl ? n + 1 : n;
	if (nl)
		r->line++;
	if (n && s[n - 1] == '\r')
		n--;
	*line = s;
	*len = n;
	return true;
}
