/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A strict, bounded CSV reader (RFC 4180 with the usual line-ending leniency) over a buffer in
 * memory: one row at a time, fields unescaped into the reader's own storage. It exists for
 * vendor tools' exports (Nsight Compute's `--csv`), which quote every field and may put commas,
 * quotes and newlines inside them. It does not write CSV, guess delimiters, trim spaces, or
 * convert types: every field is bytes.
 *
 * Grammar. A row is fields separated by ',' and ended by LF, CRLF or the end of the input (a
 * last row without a newline is a row; a newline at the very end does not start another). A
 * field is either unquoted (any bytes but ',', '"', CR and LF; a CR not followed by LF is data)
 * or quoted: '"', any bytes with '"' doubled, '"', followed by ',' or the row end. An empty line
 * is a row of one empty field. One leading UTF-8 byte order mark is skipped.
 *
 * Errors (FP_EFORMAT, with the byte offset, 1-based line and 1-based byte column of the
 * offending byte in `diag`): a '"' inside an unquoted field, anything but ',' or a row end
 * after a closing quote, a quoted field still open at the end of the input (reported at its
 * opening quote). Limits (FP_ELIMIT, at the start of the field or row over the limit): field
 * bytes, fields per row, row bytes. After an error the reader stays at the failing row: the
 * caller may stop, or skip the rest of that physical line with fp_csv_skip_line() and go on.
 */
#ifndef FLAGPRISM_CSV_H
#define FLAGPRISM_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flagprism/export.h>
#include <flagprism/status.h>
#include <flagprism/strbuf.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Defaults used when a field of struct fp_csv_limits is 0. */
#define FP_CSV_DEFAULT_MAX_FIELD ((size_t)1 << 20)  /* 1 MiB per field */
#define FP_CSV_DEFAULT_MAX_FIELDS ((size_t)1 << 16) /* 65536 fields per row */
#define FP_CSV_DEFAULT_MAX_ROW ((size_t)1 << 24)    /* 16 MiB of field bytes per row */

/** Caps on what one row may hold; 0 means the default. */
struct fp_csv_limits {
	size_t max_field;  /* unescaped bytes of one field */
	size_t max_fields; /* fields in one row */
	size_t max_row;    /* unescaped bytes of all fields of one row */
};

/*
 * Caller-owned reader. The input is borrowed and must outlive the reader. The fields below are
 * public so the struct can live on the stack and so callers can look at the input around the
 * cursor (e.g. to recognise a line that is not CSV at all); treat them as read-only.
 */
struct fp_csv_reader {
	const char *text;    /* the input */
	size_t len;          /* its length */
	size_t pos;          /* next byte to read: the start of the next row */
	uint32_t line;       /* 1-based line of `pos` */
	uint64_t row_offset; /* byte offset where the current row starts */
	uint32_t row_line;   /* 1-based line where the current row starts */
	struct fp_csv_limits lim;
	/* The current row: fields stored one after another, each NUL-terminated. */
	struct fp_strbuf buf;
	size_t *starts; /* offset of field i in buf */
	size_t *lens;   /* length of field i */
	size_t nfields;
	size_t alloc_fields;
};

/** Start reading `len` bytes at `text`. `lim` may be NULL. Allocates nothing; cannot fail. */
FP_EXTERN void fp_csv_reader_init(struct fp_csv_reader *r, const char *text, size_t len,
				  const struct fp_csv_limits *lim);

/** Free the reader's memory (the input is not touched). The reader may be re-initialised. */
FP_EXTERN void fp_csv_reader_release(struct fp_csv_reader *r);

/**
 * Read the next row. Returns its number of fields (>= 1), 0 at the end of the input, or
 * FP_EFORMAT / FP_ELIMIT / FP_ENOMEM with `diag` filled (see the top of this file). The fields
 * stay valid until the next call.
 */
FP_EXTERN int fp_csv_next(struct fp_csv_reader *r, struct fp_diag *diag);

/**
 * Field `i` of the current row: NUL-terminated (it may also hold NUL bytes of its own), its
 * length in *len when `len` is not NULL. NULL when `i` is out of range.
 */
FP_EXTERN const char *fp_csv_field(const struct fp_csv_reader *r, size_t i, size_t *len);

/**
 * Consume the physical line at the cursor as it is, without CSV interpretation, for inputs that
 * mix CSV with other lines (tool messages) or to resynchronise after an error. Stores the line
 * without its LF or CRLF in *line / *len and returns true; false at the end of the input.
 */
FP_EXTERN bool fp_csv_skip_line(struct fp_csv_reader *r, const char **line, size_t *len);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_CSV_H */
