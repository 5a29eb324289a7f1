/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON in and out: a streaming writer (profiles, traces, reports) and a strict RFC 8259 reader
 * that builds a read-only DOM (profiles read back by view/diff/merge, configuration, metadata).
 * The writer always produces valid UTF-8 JSON whatever bytes it is given; the reader accepts
 * exactly RFC 8259 and rejects everything else with a position and a message. Neither is a
 * general JSON library: there is no DOM editing, no JSON Pointer, no schema, no comments or
 * other extensions. docs/internals/json.md describes the policies in full.
 */
#ifndef FLAGPRISM_JSON_H
#define FLAGPRISM_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <flagprism/export.h>
#include <flagprism/status.h>
#include <flagprism/strbuf.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================================================
 * Writer
 *
 * A `struct fp_jsonw` turns a sequence of calls into one JSON text. It tracks nesting, commas
 * and keys itself, so output is well-formed by construction; misuse (a value where a key is
 * expected, a key in an array, an end without a begin, a second top-level value) is reported
 * as FP_ESTATE. Errors are sticky: after the first failure every call does nothing and returns
 * that same error, so a long writing sequence may check only fp_jsonw_finish().
 *
 * Strings: any bytes are accepted. Valid UTF-8 is copied through unchanged, except U+2028 and
 * U+2029, which are written as \u2028 and \u2029 (JavaScript line terminators). Each maximal
 * invalid UTF-8 subsequence (overlong forms, UTF-8-encoded surrogates, values above U+10FFFF,
 * truncated sequences, stray continuation bytes) becomes one U+FFFD. '"' and '\' are escaped,
 * control bytes 0x00-0x1F are written as \b \f \n \r \t or \u00XX (lowercase hex); DEL (0x7F)
 * is copied as is.
 *
 * Numbers: integers exactly; doubles in the shortest form of %.15g, %.16g, %.17g that reads back
 * to the same double, with ".0" appended when that form has neither '.' nor an exponent, so a
 * double always reads back as a floating-point number (3.0 -> "3.0", -0.0 -> "-0.0", 1e20 ->
 * "1e+20"). Independent of the process locale. NaN and infinities are written as null, or with
 * FP_JSONW_NONFINITE_STR as the strings "NaN", "Infinity" and "-Infinity".
 *
 * Output: to a FILE* (through a private 64 KiB block, written when full and at finish) or
 * appended to a caller's strbuf (directly, so its cap bounds the output: FP_ELIMIT). Nothing is
 * written after the value: add your own newline if you want one.
 * ========================================================================================== */

/** Deepest nesting the writer accepts; one more begin fails with FP_ELIMIT. */
#define FP_JSONW_MAX_DEPTH 1024

#define FP_JSONW_PRETTY (1u << 0)        /* 1-space indent, one member per line, ": " after keys */
#define FP_JSONW_NONFINITE_STR (1u << 1) /* NaN/Inf as "NaN","Infinity","-Infinity"; else null */

/** Opaque writer; heap object, one per JSON text. */
struct fp_jsonw;

/**
 * Create a writer that writes to `f`, which stays owned by the caller and must stay open until
 * fp_jsonw_finish(). Returns NULL on out-of-memory. Unknown flag bits are ignored.
 */
FP_EXTERN struct fp_jsonw *fp_jsonw_new_file(FILE *f, unsigned flags);

/**
 * Create a writer that appends to `sb` (borrowed; it must outlive the writer). Text appears in
 * `sb` as it is written. Returns NULL on out-of-memory.
 */
FP_EXTERN struct fp_jsonw *fp_jsonw_new_strbuf(struct fp_strbuf *sb, unsigned flags);

/**
 * End the text: checks that exactly one complete top-level value was written, writes out the
 * FILE block and fflush()es the FILE. Returns FP_OK or the first error seen: FP_EIO (a write
 * failed), FP_ENOMEM / FP_ELIMIT (the strbuf could not grow), FP_EINVAL (NULL key),
 * FP_ESTATE (misuse, unbalanced nesting or no value at all). Later calls other than
 * fp_jsonw_free() return the same status; value calls after a successful finish are FP_ESTATE.
 */
FP_EXTERN int fp_jsonw_finish(struct fp_jsonw *w);

/** Free the writer. Does not flush (call fp_jsonw_finish() first); NULL is a no-op. */
FP_EXTERN void fp_jsonw_free(struct fp_jsonw *w);

/* Every function below returns FP_OK or the writer's (sticky) error status. */

/** Begin an object (as a value: at top level, in an array, or after a key). */
FP_EXTERN int fp_jsonw_object_begin(struct fp_jsonw *w);
/** End the innermost object; FP_ESTATE if it is not an object or a key awaits its value. */
FP_EXTERN int fp_jsonw_object_end(struct fp_jsonw *w);
FP_EXTERN int fp_jsonw_array_begin(struct fp_jsonw *w);
/** End the innermost array; FP_ESTATE if the innermost container is not an array. */
FP_EXTERN int fp_jsonw_array_end(struct fp_jsonw *w);

/** Write an object key (NUL-terminated, escaped like a string); the next call must write its
 *  value. FP_ESTATE outside an object or when a value is pending; FP_EINVAL for NULL. */
FP_EXTERN int fp_jsonw_key(struct fp_jsonw *w, const char *key);
/** Key of `n` bytes, which may include NULs or invalid UTF-8 (see above). */
FP_EXTERN int fp_jsonw_key_n(struct fp_jsonw *w, const char *key, size_t n);

/** A string value from a NUL-terminated string; NULL writes null. */
FP_EXTERN int fp_jsonw_string(struct fp_jsonw *w, const char *s);
/** A string value of `n` arbitrary bytes: invalid UTF-8 -> U+FFFD, controls escaped. */
FP_EXTERN int fp_jsonw_string_n(struct fp_jsonw *w, const char *s, size_t n);
FP_EXTERN int fp_jsonw_int(struct fp_jsonw *w, int64_t v);
FP_EXTERN int fp_jsonw_uint(struct fp_jsonw *w, uint64_t v);
/** Shortest round-trip form; non-finite values per FP_JSONW_NONFINITE_STR (default null). */
FP_EXTERN int fp_jsonw_double(struct fp_jsonw *w, double v);
FP_EXTERN int fp_jsonw_bool(struct fp_jsonw *w, bool v);
FP_EXTERN int fp_jsonw_null(struct fp_jsonw *w);
/**
 * Insert `n` (> 0) bytes of pre-serialised JSON as one value, as is (FP_EINVAL for NULL or
 * empty). The writer does not check them: the caller guarantees they are exactly one valid JSON
 * value (pretty mode does not re-indent).
 */
FP_EXTERN int fp_jsonw_raw(struct fp_jsonw *w, const char *json, size_t n);

/* Key + value in one call: fp_jsonw_key(w, k) followed by the value function. */
FP_EXTERN int fp_jsonw_kv_string(struct fp_jsonw *w, const char *k, const char *v);
FP_EXTERN int fp_jsonw_kv_int(struct fp_jsonw *w, const char *k, int64_t v);
FP_EXTERN int fp_jsonw_kv_uint(struct fp_jsonw *w, const char *k, uint64_t v);
FP_EXTERN int fp_jsonw_kv_double(struct fp_jsonw *w, const char *k, double v);
FP_EXTERN int fp_jsonw_kv_bool(struct fp_jsonw *w, const char *k, bool v);
FP_EXTERN int fp_jsonw_kv_null(struct fp_jsonw *w, const char *k);

/**
 * Format `v` as the writer does (shortest round-trip, ".0" for integral values) into `buf` of
 * `size` bytes (32 always suffice). Returns the length written (without the NUL), or
 * FP_EINVAL for a non-finite `v` or a too-small buffer. Exposed for other writers (CSV, text).
 */
FP_EXTERN int fp_json_format_double(double v, char *buf, size_t size);

/* ============================================================================================
 * Reader
 *
 * fp_json_parse() accepts exactly RFC 8259 JSON text: one value, surrounded by optional
 * whitespace (space, tab, CR, LF). Rejected with FP_EFORMAT: trailing commas, comments, single
 * quotes, leading zeros, '+' signs, NaN/Infinity, unescaped control characters in strings,
 * unknown escapes, lone or mispaired UTF-16 surrogate escapes, any invalid UTF-8 anywhere
 * (inside or outside strings), and anything but whitespace after the value. One leading UTF-8
 * byte order mark (EF BB BF) is skipped, as RFC 8259 section 8.1 permits; offsets still count it.
 * Duplicate object keys are kept; fp_json_get() returns the last.
 *
 * Rejected with FP_ELIMIT: input over `max_bytes`, nesting over `max_depth`, more than
 * `max_values` values, a number literal over 512 bytes, a number whose magnitude does not fit
 * a finite double (e.g. 1e400; underflow to 0 is accepted), keys of 4 GiB or more.
 *
 * On failure `diag` (optional) gets the status, the byte offset of the first byte that makes
 * the input invalid (for truncated input: the input length; for invalid UTF-8: the first byte
 * of the bad sequence; for bad escapes: their backslash; for limits: the start of the value or
 * bracket over the limit), the 1-based line (lines end at LF) and 1-based column in bytes, and a
 * message naming what was expected ("expected ',' or '}' after object member, found ']'").
 *
 * The document owns every value and string; all pointers obtained from it are borrowed until
 * fp_json_doc_free(). The input text is not referenced after parsing returns. A document is
 * immutable: any number of threads may read it concurrently.
 * ========================================================================================== */

enum fp_json_type {
	FP_JSON_NULL,
	FP_JSON_FALSE,
	FP_JSON_TRUE,
	FP_JSON_NUMBER,
	FP_JSON_STRING,
	FP_JSON_ARRAY,
	FP_JSON_OBJECT,
};

/** A value inside a document (opaque; pointers are borrowed from the document). */
struct fp_json_value;
/** A parsed document: owns every value and string. Heap object; free with fp_json_doc_free(). */
struct fp_json_doc;

/** Limits for one parse. A 0 field means its default. */
struct fp_json_limits {
	size_t max_bytes;   /* input size; default 4 GiB */
	uint32_t max_depth; /* nesting of arrays/objects (top-level container = 1); default 512 */
	size_t max_values;  /* values of any kind, containers included; default SIZE_MAX */
};

#define FP_JSON_DEFAULT_MAX_DEPTH 512u
#define FP_JSON_MAX_NUMBER_LEN 512u

/**
 * Parse `len` bytes at `text` (need not be NUL-terminated; NUL bytes are just invalid
 * characters). `lim` may be NULL for all defaults. On success stores a new document in `*out`
 * (caller frees with fp_json_doc_free()) and returns FP_OK. Otherwise returns FP_EFORMAT,
 * FP_ELIMIT, FP_ENOMEM or FP_EINVAL (NULL `out`, or NULL `text` with `len` > 0), fills `diag`
 * and leaves `*out` untouched. Time and memory are linear in `len`: about 40 bytes per value
 * plus the strings.
 */
FP_EXTERN int fp_json_parse(const char *text, size_t len, const struct fp_json_limits *lim,
			    struct fp_json_doc **out, struct fp_diag *diag);

/**
 * Read the file at `path` whole and parse it. Returns as fp_json_parse(), plus FP_EIO; the diag
 * message starts with the path ("prof.hatchet:3:14: expected ...").
 */
FP_EXTERN int fp_json_parse_file(const char *path, const struct fp_json_limits *lim,
				 struct fp_json_doc **out, struct fp_diag *diag);

/** Free a document and everything it owns. NULL is a no-op. */
FP_EXTERN void fp_json_doc_free(struct fp_json_doc *doc);

/** The top-level value (never NULL for a parsed document; NULL for a NULL doc). */
FP_EXTERN const struct fp_json_value *fp_json_root(const struct fp_json_doc *doc);

/*
 * Accessors. Each accepts NULL for `v` and then behaves as for a value of the wrong type, so
 * lookups can be chained: fp_json_get(fp_json_get(node, "frame"), "name").
 */

/** Type of `v`; FP_JSON_NULL for a NULL pointer. */
FP_EXTERN enum fp_json_type fp_json_type(const struct fp_json_value *v);

/** Byte offset of the first byte of `v` in the parsed input (0 for NULL). */
FP_EXTERN uint64_t fp_json_offset(const struct fp_json_value *v);

/**
 * Convert a byte offset of the parsed input into a 1-based line and 1-based byte column
 * (binary search over the line starts recorded while parsing; O(log lines)). Returns FP_OK, or
 * FP_EINVAL for a NULL doc or an offset past the end of the input.
 */
FP_EXTERN int fp_json_position(const struct fp_json_doc *doc, uint64_t offset, uint32_t *line,
			       uint32_t *col);

/** Items of an array or members of an object; 0 for anything else. O(1). */
FP_EXTERN size_t fp_json_len(const struct fp_json_value *v);

/** Item `i` of an array; NULL if out of range or not an array. O(1). */
FP_EXTERN const struct fp_json_value *fp_json_at(const struct fp_json_value *arr, size_t i);

/**
 * Member `i` of an object, in input order: returns its value and stores its key (NUL-terminated,
 * may contain NULs) and key length when `key`/`key_len` are not NULL. NULL if out of range or
 * not an object. O(1).
 */
FP_EXTERN const struct fp_json_value *fp_json_member(const struct fp_json_value *obj, size_t i,
						     const char **key, size_t *key_len);

/**
 * Value of the member named `key` (NUL-terminated); with duplicate keys, the last one. NULL if
 * absent or `obj` is not an object. Objects of up to 16 members are scanned linearly; larger ones
 * carry a sorted index built while parsing (O(n log n), whatever the keys), so a lookup
 * is O(log n) key comparisons.
 */
FP_EXTERN const struct fp_json_value *fp_json_get(const struct fp_json_value *obj, const char *key);
/** fp_json_get() for a key of `n` bytes (which may include NULs). */
FP_EXTERN const struct fp_json_value *fp_json_get_n(const struct fp_json_value *obj,
						    const char *key, size_t n);

/** Contents of a string (unescaped, valid UTF-8, NUL-terminated, may hold NULs); length in
 *  `*len` when not NULL. NULL if `v` is not a string. */
FP_EXTERN const char *fp_json_string(const struct fp_json_value *v, size_t *len);

/** The number as the nearest double (correctly rounded, locale-independent). false if `v` is
 *  not a number. */
FP_EXTERN bool fp_json_number(const struct fp_json_value *v, double *out);

/**
 * The number as an int64_t, exactly. Accepts any number literal whose exact decimal value is an
 * integer in range ("42", "-7", "3.0", "1e3", "2.50e1"); false for fractions ("0.5"), values
 * outside int64_t, and non-numbers. `*out` is written only on success.
 */
FP_EXTERN bool fp_json_int64(const struct fp_json_value *v, int64_t *out);

/** As fp_json_int64() for uint64_t (negative values, except -0, are false). */
FP_EXTERN bool fp_json_uint64(const struct fp_json_value *v, uint64_t *out);

/** true/false values; false (and `*out` untouched) for anything else. */
FP_EXTERN bool fp_json_bool(const struct fp_json_value *v, bool *out);

/**
 * The literal text of a number as it appeared in the input (NUL-terminated), for callers that
 * keep arbitrary precision. NULL if `v` is not a number. Small integers are stored in binary,
 * so for them the text is rebuilt into `buf` (`size` >= 24) and `buf` is returned.
 */
FP_EXTERN const char *fp_json_number_text(const struct fp_json_value *v, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_JSON_H */
