/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The record buffer decoder (docs/formats/record-format.md, v1): validates the header and every record
 * slot against the format and the site table, then builds the run's record index (grouped by
 * site, ordered by program and execution) and copies the used part of the dump arena. Every
 * rejection names the byte offset of the offending word and the field, slot, program and site.
 * Two passes over the slots: the first validates and counts per site, the second fills the
 * records in place, so nothing is allocated from sizes read out of the buffer (only from counts
 * bounded by its length). Not here: the site table parser (sites.c) and the accessors (run.c).
 */
#include "fp-setup.h"

#include <math.h>

#include "core/bytes-internal.h"
#include "debug/debug-internal.h"

#define HDR_BYTES (FP_DBG_HEADER_WORDS * 8)
#define REC_BYTES (FP_DBG_RECORD_WORDS * 8)
#define DIM_MASK ((UINT64_C(1) << 21) - 1)
#define SEQ_MASK UINT64_C(0xffffff)
#define NO_DUMP32 UINT64_C(0xffffffff)

struct dec {
	const unsigned char *buf;
	size_t len;
	struct fp_dbg_run *run;
	struct fp_diag *diag;
	uint64_t S, P;
	uint64_t arena_words; /* valid dump region: min(cursor, capacity) */
	bool has_arena;
	size_t rec_off;  /* byte offset of the record slots (after the check area) */
	uint64_t np, nc; /* the check area's tensor-table entries and check slots */
	/* per-site signature of the first record: word 0 bits 24-39 and word 1 */
	uint64_t *sig0, *sig1;
	uint64_t *sig_prog; /* program of that first record (for messages) */
	uint32_t *sig_slot;
	size_t *count; /* records per site */
};

/* Byte offset of word `w` of slot `k` of program `p` (callers made sure it is inside buf). */
static inline size_t slot_off(const struct dec *d, uint64_t p, uint64_t k, unsigned w)
{
	return d->rec_off + (size_t)(p * d->S + k) * REC_BYTES + (size_t)w * 8;
}

FP_PRINTF(5, 6)
static int rec_err(const struct dec *d, uint64_t p, uint64_t k, unsigned w, const char *fmt, ...)
{
	char msg[180];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return fp_diag_set(d->diag, FP_EFORMAT, slot_off(d, p, k, w),
			   "record buffer: program %" PRIu64 " slot %" PRIu64 " (word %u): %s", p,
			   k, w, msg);
}

static int header(struct dec *d)
{
	struct fp_dbg_run_info *info = &d->run->info;
	const unsigned char *b = d->buf;
	uint64_t layout, version, rw, hw, flags, need_words, rec_bytes, total;

	if (d->len < HDR_BYTES)
		return fp_diag_set(d->diag, FP_EFORMAT, d->len,
				   "record buffer: truncated header: %zu bytes, need %d", d->len,
				   HDR_BYTES);
	if (fp__bytes_le64(b) != FP_DBG_MAGIC)
		return fp_diag_set(d->diag, FP_EFORMAT, 0,
				   "record buffer: header word 0 (magic) is 0x%016" PRIx64
				   ", expected 0x%016" PRIx64 " (\"FPDBGv1\")",
				   fp__bytes_le64(b), FP_DBG_MAGIC);
	layout = fp__bytes_le64(b + 8);
	version = layout & 0xffff;
	rw = (layout >> 16) & 0xffff;
	hw = (layout >> 32) & 0xffff;
	flags = layout >> 48;
	if (version != FP_DBG_FORMAT_VERSION)
		return fp_diag_set(d->diag, FP_EVERSION, 8,
				   "record buffer: header word 1 (layout): format version %" PRIu64
				   " is not supported (this build reads version %d)",
				   version, FP_DBG_FORMAT_VERSION);
	if (rw != FP_DBG_RECORD_WORDS || hw != FP_DBG_HEADER_WORDS)
		return fp_diag_set(d->diag, FP_EFORMAT, 8,
				   "record buffer: header word 1 (layout): %" PRIu64
				   " record words and %" PRIu64 " header words, expected %d and %d",
				   rw, hw, FP_DBG_RECORD_WORDS, FP_DBG_HEADER_WORDS);
	if (flags & ~(uint64_t)(FP_DBG_FLAG_DUMP_ARENA | FP_DBG_FLAG_CHECKS))
		return fp_diag_set(
			d->diag, FP_EFORMAT, 8,
			"record buffer: header word 1 (layout): unknown flags 0x%04" PRIx64, flags);
	d->rec_off = HDR_BYTES;
	if (flags & FP_DBG_FLAG_CHECKS) {
		uint64_t ra;

		if (d->len < HDR_BYTES + FP_DBG_EXT_WORDS * 8)
			return fp_diag_set(d->diag, FP_EFORMAT, d->len,
					   "record buffer: truncated extended header: %zu bytes, "
					   "need %d",
					   d->len, HDR_BYTES + FP_DBG_EXT_WORDS * 8);
		d->np = fp__bytes_le64(b + 64);
		d->nc = fp__bytes_le64(b + 72);
		ra = fp__bytes_le64(b + 88);
		if (d->np > FP_DBG_MAX_PARAMS)
			return fp_diag_set(d->diag, FP_EFORMAT, 64,
					   "record buffer: extended header word 8 (tensor-table "
					   "entries) %" PRIu64 " exceeds %u",
					   d->np, FP_DBG_MAX_PARAMS);
		if (d->nc > FP_DBG_MAX_CHECKS)
			return fp_diag_set(d->diag, FP_EFORMAT, 72,
					   "record buffer: extended header word 9 (check slots) "
					   "%" PRIu64 " exceeds %u",
					   d->nc, FP_DBG_MAX_CHECKS);
		if (fp__bytes_le64(b + 80) > 1)
			return fp_diag_set(d->diag, FP_EFORMAT, 80,
					   "record buffer: extended header word 10 (flags) is "
					   "0x%" PRIx64 ", expected 0 or 1",
					   fp__bytes_le64(b + 80));
		if (ra !=
		    8 + FP_DBG_EXT_WORDS + FP_DBG_ENTRY_WORDS * d->np + FP_DBG_SLOT_WORDS * d->nc)
			return fp_diag_set(d->diag, FP_EFORMAT, 88,
					   "record buffer: extended header word 11 (records at) is "
					   "%" PRIu64 ", but %" PRIu64 " entries and %" PRIu64
					   " check slots end at word %" PRIu64,
					   ra, d->np, d->nc,
					   8 + FP_DBG_EXT_WORDS + FP_DBG_ENTRY_WORDS * d->np +
						   FP_DBG_SLOT_WORDS * d->nc);
		for (unsigned w = 13; w < 16; w++)
			if (fp__bytes_le64(b + 8 * w))
				return fp_diag_set(d->diag, FP_EFORMAT, 8 * w,
						   "record buffer: extended header word %u is "
						   "reserved (0) but holds 0x%" PRIx64,
						   w, fp__bytes_le64(b + 8 * w));
		info->has_checks = true;
		info->suppress = fp__bytes_le64(b + 80) == 1;
		d->rec_off = (size_t)ra * 8;
	}
	info->records_at = d->rec_off / 8;
	d->S = fp__bytes_le64(b + 16);
	d->P = fp__bytes_le64(b + 24);
	info->slots_per_program = d->S;
	info->programs = d->P;
	info->overflow_count = fp__bytes_le64(b + 32);
	info->dump_cursor = fp__bytes_le64(b + 40);
	info->dump_capacity = fp__bytes_le64(b + 48);
	info->flags = (uint32_t)flags;
	d->has_arena = flags & FP_DBG_FLAG_DUMP_ARENA;
	if (d->S > UINT32_MAX)
		return fp_diag_set(d->diag, FP_EFORMAT, 16,
				   "record buffer: header word 2 (slots per program) %" PRIu64
				   " exceeds the 32-bit limit",
				   d->S);
	if (!d->has_arena && info->dump_capacity)
		return fp_diag_set(d->diag, FP_EFORMAT, 48,
				   "record buffer: header word 6 (dump capacity) is %" PRIu64
				   " but the layout flags say there is no dump arena",
				   info->dump_capacity);
	if (!d->has_arena && info->dump_cursor)
		return fp_diag_set(d->diag, FP_EFORMAT, 40,
				   "record buffer: header word 5 (dump cursor) is %" PRIu64
				   " but the layout flags say there is no dump arena",
				   info->dump_cursor);
	/* expected length: header + P*S*8 words + capacity words, all overflow-checked */
	if ((d->P && d->S > UINT64_MAX / d->P) ||
	    (need_words = d->P * d->S) > (UINT64_MAX - HDR_BYTES) / REC_BYTES)
		return fp_diag_set(d->diag, FP_EFORMAT, 16,
				   "record buffer: header words 2-3: %" PRIu64 " slots x %" PRIu64
				   " programs overflows the buffer size",
				   d->S, d->P);
	rec_bytes = need_words * REC_BYTES;
	if (rec_bytes > UINT64_MAX - d->rec_off)
		return fp_diag_set(d->diag, FP_EFORMAT, 16,
				   "record buffer: the record slots overflow the buffer size");
	total = d->rec_off + rec_bytes;
	if (info->dump_capacity > (UINT64_MAX - total) / 8)
		return fp_diag_set(d->diag, FP_EFORMAT, 48,
				   "record buffer: header word 6 (dump capacity) %" PRIu64
				   " words overflows the buffer size",
				   info->dump_capacity);
	total += info->dump_capacity * 8;
	if ((uint64_t)d->len < total)
		return fp_diag_set(d->diag, FP_EFORMAT, d->len,
				   "record buffer: truncated: %zu bytes, the header (S=%" PRIu64
				   ", P=%" PRIu64 ", dump capacity %" PRIu64
				   " words) needs %" PRIu64,
				   d->len, d->S, d->P, info->dump_capacity, total);
	if ((uint64_t)d->len > total)
		return fp_diag_set(d->diag, FP_EFORMAT, total,
				   "record buffer: %zu bytes, but the header (S=%" PRIu64
				   ", P=%" PRIu64 ", dump capacity %" PRIu64
				   " words) accounts for %" PRIu64 ": trailing bytes",
				   d->len, d->S, d->P, info->dump_capacity, total);
	d->arena_words = FP_MIN(info->dump_cursor, info->dump_capacity);
	info->dump_overflow = info->dump_cursor > info->dump_capacity ?
				      info->dump_cursor - info->dump_capacity :
				      0;
	return FP_OK;
}

static int check_dump(const struct dec *d, uint64_t p, uint64_t k, unsigned w, uint64_t off,
		      uint64_t numel, uint32_t site)
{
	if (!d->has_arena)
		return rec_err(d, p, k, w,
			       "site %u: dump offset %" PRIu64
			       " set but the buffer has no dump arena",
			       site, off);
	if (off > d->arena_words || numel > d->arena_words - off)
		return rec_err(d, p, k, w,
			       "site %u: dump [%" PRIu64 ", %" PRIu64
			       ") outside the used dump arena (%" PRIu64 " of %" PRIu64 " words)",
			       site, off, off + numel, d->arena_words, d->run->info.dump_capacity);
	return FP_OK;
}

/* A counts-only value record: NaN and Inf counts in word 2, "no dump" in word 3, zeros after. */
static int check_counts(const struct dec *d, uint64_t p, uint64_t k, const uint64_t *w,
			uint32_t site, enum fp_dtype dt, uint64_t numel)
{
	uint64_t nan = w[2] & 0xffffffffu, inf = w[2] >> 32;
	unsigned i;

	if (!fp_dtype_is_float(dt) && (nan || inf))
		return rec_err(d, p, k, 2,
			       "site %u: nan_count %" PRIu64 " / inf_count %" PRIu64
			       " non-zero for %s values",
			       site, nan, inf, fp_dtype_name(dt));
	if (nan + inf > numel)
		return rec_err(d, p, k, 2,
			       "site %u: nan_count %" PRIu64 " + inf_count %" PRIu64
			       " exceeds numel %" PRIu64,
			       site, nan, inf, numel);
	if (w[3] != ((uint64_t)NO_DUMP32 << 32))
		return rec_err(
			d, p, k, 3,
			"site %u: a counts-only record must have word 3 = no dump, zero count 0",
			site);
	for (i = 4; i < FP_DBG_RECORD_WORDS; i++)
		if (w[i])
			return rec_err(d, p, k, i,
				       "site %u: a counts-only record must have word %u = 0", site,
				       i);
	return FP_OK;
}

static int check_value(const struct dec *d, uint64_t p, uint64_t k, const uint64_t *w,
		       uint32_t site, enum fp_dtype dt, uint64_t numel)
{
	uint64_t nan = w[2] & 0xffffffffu, inf = w[2] >> 32, zero = w[3] & 0xffffffffu;
	uint64_t dump = w[3] >> 32, finite;
	bool is_float = fp_dtype_is_float(dt);
	double sumsq, fmin, fmax;
	int st;

	if (!is_float && (nan || inf))
		return rec_err(d, p, k, 2,
			       "site %u: nan_count %" PRIu64 " / inf_count %" PRIu64
			       " non-zero for %s values",
			       site, nan, inf, fp_dtype_name(dt));
	if (nan + inf > numel)
		return rec_err(d, p, k, 2,
			       "site %u: nan_count %" PRIu64 " + inf_count %" PRIu64
			       " exceeds numel %" PRIu64,
			       site, nan, inf, numel);
	finite = numel - nan - inf;
	if (zero > finite)
		return rec_err(d, p, k, 3,
			       "site %u: zero_count %" PRIu64 " exceeds the %" PRIu64
			       " finite elements",
			       site, zero, finite);
	if (dump != NO_DUMP32 && (st = check_dump(d, p, k, 3, dump, numel, site)))
		return st;
	memcpy(&sumsq, &w[5], sizeof(sumsq));
	if (isnan(sumsq) || sumsq < 0)
		return rec_err(d, p, k, 5, "site %u: sum of squares %g is negative or NaN", site,
			       sumsq);
	if (!finite)
		return FP_OK;
	if (is_float) {
		memcpy(&fmin, &w[6], sizeof(fmin));
		memcpy(&fmax, &w[7], sizeof(fmax));
		if (!isfinite(fmin))
			return rec_err(d, p, k, 6, "site %u: min of finite elements is %g", site,
				       fmin);
		if (!isfinite(fmax))
			return rec_err(d, p, k, 7, "site %u: max of finite elements is %g", site,
				       fmax);
		if (fmin > fmax)
			return rec_err(d, p, k, 6, "site %u: min %g > max %g", site, fmin, fmax);
	} else if (dt == FP_DTYPE_UINT64) {
		/* no order check: the min/max of uint64 lanes at or above 2^63 depend on whether
		 * the device compared them signed or unsigned (docs/formats/record-format.md is silent) */
	} else {
		int64_t imin = (int64_t)w[6], imax = (int64_t)w[7];

		if (imin > imax)
			return rec_err(d, p, k, 6, "site %u: min %" PRId64 " > max %" PRId64, site,
				       imin, imax);
		if (dt == FP_DTYPE_BOOL && (imin < 0 || imax > 1))
			return rec_err(d, p, k, imin < 0 ? 6 : 7,
				       "site %u: bool min/max %" PRId64 "/%" PRId64 " not 0 or 1",
				       site, imin, imax);
	}
	return FP_OK;
}

static int check_addr(const struct dec *d, uint64_t p, uint64_t k, const uint64_t *w, uint32_t site,
		      uint64_t numel)
{
	uint64_t active = w[2] & 0xffffffffu, status = w[2] >> 32;
	unsigned i;
	int st;

	if (active > numel && d->run->sites[site - 1].kind != FP_DBG_KIND_DESCRIPTOR)
		return rec_err(d, p, k, 2,
			       "site %u: active_lane_count %" PRIu64 " exceeds numel %" PRIu64,
			       site, active, numel);
	if (status > FP_DBG_ADDR_UNSUPPORTED)
		return rec_err(d, p, k, 2, "site %u: address status %" PRIu64 " unknown", site,
			       status);
	if (!active) {
		for (i = 3; i <= 6; i++)
			if (w[i])
				return rec_err(d, p, k, i,
					       "site %u: no active lane but address word %u is "
					       "0x%" PRIx64,
					       site, i, w[i]);
	} else {
		if (w[5] > w[6])
			return rec_err(d, p, k, 5,
				       "site %u: min_addr 0x%" PRIx64 " > max_addr 0x%" PRIx64,
				       site, w[5], w[6]);
		for (i = 3; i <= 4; i++)
			if (w[i] < w[5] || w[i] > w[6])
				return rec_err(d, p, k, i,
					       "site %u: %s 0x%" PRIx64 " outside [min_addr, "
					       "max_addr]",
					       site, i == 3 ? "first_addr" : "last_addr", w[i]);
		if (active == 1 && w[5] != w[6])
			return rec_err(d, p, k, 6,
				       "site %u: one active lane but min_addr != max_addr", site);
	}
	if (w[7] != UINT64_MAX && (st = check_dump(d, p, k, 7, w[7], numel, site)))
		return st;
	return FP_OK;
}

/*
 * Closed-form records (docs/formats/record-format.md): index arithmetic v(i) = f + k*i, i in [0, n), in
 * int32 or int64 with the device's wrap-around, possibly under a comparison v(i) OP b. The
 * decoder rewrites words 2-7 into the ordinary summary, exactly: sums in 128-bit integers (or a
 * per-element loop where those do not exist or the sequence wraps), so every later reader sees
 * an ordinary record.
 */
enum {
	CF_AFFINE = 1,
	CF_COMPARE = 2,
	CF_ADDRESS = 3
};

struct cf_seq {
	int64_t f, k;
	uint64_t n;
	bool narrow; /* int32 sequence */
	unsigned op; /* 0: every lane; 1 <, 2 <=, 3 >, 4 >= */
	int64_t bound;
};

static int64_t cf_at(const struct cf_seq *s, uint64_t i)
{
	uint64_t v = (uint64_t)s->f + (uint64_t)s->k * i;

	if (s->narrow)
		return (int64_t)(int32_t)(uint32_t)v;
	return (int64_t)v;
}

/* The sequence does not wrap: f + k*(n-1) is representable, so v is monotone. */
static bool cf_monotone(const struct cf_seq *s)
{
	int64_t span, last;

	if (s->n <= 1)
		return true;
	if (__builtin_mul_overflow(s->k, (int64_t)(s->n - 1), &span) ||
	    __builtin_add_overflow(s->f, span, &last))
		return false;
	return !s->narrow || (last >= INT32_MIN && last <= INT32_MAX);
}

static bool cf_pred(const struct cf_seq *s, int64_t v)
{
	switch (s->op) {
	case 1:
		return v < s->bound;
	case 2:
		return v <= s->bound;
	case 3:
		return v > s->bound;
	case 4:
		return v >= s->bound;
	default:
		return true;
	}
}

/* Active lanes [*lo, *hi) of a monotone sequence: the predicate changes at most once. */
static void cf_interval(const struct cf_seq *s, uint64_t *lo, uint64_t *hi)
{
	bool first = cf_pred(s, cf_at(s, 0)), last = cf_pred(s, cf_at(s, s->n - 1));
	uint64_t a = 0, b = s->n - 1; /* pred(a) == first, pred(b) != first */

	if (first == last) {
		*lo = 0;
		*hi = first ? s->n : 0;
		return;
	}
	while (b - a > 1) {
		uint64_t m = a + (b - a) / 2;

		if (cf_pred(s, cf_at(s, m)) == first)
			a = m;
		else
			b = m;
	}
	*lo = first ? 0 : b;
	*hi = first ? b : s->n;
}

static uint64_t dbits(double x)
{
	uint64_t w;

	memcpy(&w, &x, sizeof(w));
	return w;
}

/* Words 2-7 of an int32/int64 value record summarising v (no predicate). */
static void cf_value_words(const struct cf_seq *s, uint64_t *w)
{
	uint64_t zero = 0, i;
	int64_t mn, mx;
	double sum, sumsq;

#ifdef __SIZEOF_INT128__
	if (cf_monotone(s)) {
		__extension__ typedef __int128 i128;
		i128 n = (i128)s->n, f = s->f, k = s->k, s1 = n * (n - 1) / 2, q, r;

		sum = (double)(n * f + k * s1);
		if (s->narrow) {
			/* |v| < 2^31, n < 2^21: every term below 2^125, the result below 2^83 */
			i128 s2 = (n - 1) * n * (2 * n - 1) / 6;

			sumsq = (double)(n * f * f + 2 * f * k * s1 + k * k * s2);
		} else {
			/* n*mean^2 + k^2 * n(n^2-1)/12: two non-negative terms, a few ulps */
			double m = (double)(2 * f + k * (n - 1)) / 2.0, nn = (double)s->n;

			sumsq = nn * m * m +
				(double)s->k * (double)s->k * (nn * (nn * nn - 1) / 12.0);
		}
		if (!s->k) {
			zero = s->f ? 0 : s->n;
		} else {
			q = -f / k;
			r = -f % k;
			zero = !r && q >= 0 && q < n;
		}
		mn = FP_MIN(cf_at(s, 0), cf_at(s, s->n - 1));
		mx = FP_MAX(cf_at(s, 0), cf_at(s, s->n - 1));
		goto out;
	}
#endif
	{
#ifdef __SIZEOF_INT128__
		__extension__ __int128 acc = 0;
#else
		long double acc = 0;
#endif
		double q = 0;

		mn = INT64_MAX;
		mx = INT64_MIN;
		for (i = 0; i < s->n; i++) {
			int64_t v = cf_at(s, i);

			acc += v;
			q += (double)v * (double)v;
			zero += v == 0;
			mn = FP_MIN(mn, v);
			mx = FP_MAX(mx, v);
		}
		sum = (double)acc;
		sumsq = q;
	}
#ifdef __SIZEOF_INT128__
out:
#endif
	w[2] = 0;
	w[3] = zero | (NO_DUMP32 << 32);
	w[4] = dbits(sum);
	w[5] = dbits(sumsq);
	w[6] = (uint64_t)mn;
	w[7] = (uint64_t)mx;
}

/* Active lanes and the indices of the first/last active lane and of the lanes with the least
 * and the greatest v among them; returns the active count. */
static uint64_t cf_active(const struct cf_seq *s, uint64_t *first, uint64_t *last, uint64_t *imin,
			  uint64_t *imax)
{
	uint64_t lo, hi, i, cnt = 0;
	int64_t mn = INT64_MAX, mx = INT64_MIN;

	if (cf_monotone(s)) {
		cf_interval(s, &lo, &hi);
		if (hi <= lo)
			return 0;
		*first = lo;
		*last = hi - 1;
		if (cf_at(s, lo) <= cf_at(s, hi - 1)) {
			*imin = lo;
			*imax = hi - 1;
		} else {
			*imin = hi - 1;
			*imax = lo;
		}
		return hi - lo;
	}
	for (i = 0; i < s->n; i++) {
		int64_t v = cf_at(s, i);

		if (!cf_pred(s, v))
			continue;
		if (!cnt++)
			*first = i;
		*last = i;
		if (v < mn) {
			mn = v;
			*imin = i;
		}
		if (v > mx) {
			mx = v;
			*imax = i;
		}
	}
	return cnt;
}

/* Validate the closed-form words of record `w` (kind, dtype, numel n, ndim) and rewrite them. */
static int expand_closed(const struct dec *d, uint64_t p, uint64_t k, uint64_t *w, uint32_t site,
			 unsigned kind, enum fp_dtype dt, uint64_t n, unsigned ndim)
{
	unsigned cf = (unsigned)(w[2] & 0xff), op = (unsigned)(w[2] >> 8) & 0xff;
	unsigned sdt = (unsigned)(w[2] >> 16) & 0xff;
	struct cf_seq s = {.f = (int64_t)w[3], .k = (int64_t)w[4], .n = n, .op = 0};
	unsigned i, reserved_from;

	if (w[2] >> 24)
		return rec_err(d, p, k, 2, "site %u: closed-form record: reserved bits 0x%" PRIx64,
			       site, w[2] >> 24);
	if (sdt != FP_DTYPE_INT32 && sdt != FP_DTYPE_INT64)
		return rec_err(
			d, p, k, 2,
			"site %u: closed-form record: sequence dtype code %u is not int32 or "
			"int64",
			site, sdt);
	s.narrow = sdt == FP_DTYPE_INT32;
	if (ndim != 1)
		return rec_err(d, p, k, 0, "site %u: closed-form record with %u dims (needs 1)",
			       site, ndim);
	if (kind == FP_DBG_KIND_VALUE) {
		if (cf != CF_AFFINE && cf != CF_COMPARE)
			return rec_err(d, p, k, 2,
				       "site %u: closed-form kind %u invalid for a value record",
				       site, cf);
		if (cf == CF_AFFINE && ((unsigned)dt != sdt || op))
			return rec_err(
				d, p, k, 2,
				"site %u: affine record: dtype %s / sequence dtype code %u / "
				"comparison %u disagree",
				site, fp_dtype_name(dt), sdt, op);
		if (cf == CF_COMPARE && (dt != FP_DTYPE_BOOL || op < 1 || op > 4))
			return rec_err(d, p, k, 2,
				       "site %u: comparison record: dtype %s (needs bool) or "
				       "comparison %u (needs 1-4)",
				       site, fp_dtype_name(dt), op);
	} else if (cf != CF_ADDRESS || op > 4) {
		return rec_err(
			d, p, k, 2,
			"site %u: closed-form kind %u / comparison %u invalid for an address "
			"record",
			site, cf, op);
	}
	if (cf == CF_ADDRESS) {
		s.f = (int64_t)w[4];
		s.k = (int64_t)w[5];
		s.bound = (int64_t)w[6];
		if (!op && w[6])
			return rec_err(
				d, p, k, 6,
				"site %u: address record without a comparison has bound %" PRId64,
				site, s.bound);
		reserved_from = 7;
	} else {
		s.bound = (int64_t)w[5];
		if (cf == CF_AFFINE && w[5])
			return rec_err(d, p, k, 5, "site %u: affine record: word 5 is not 0", site);
		reserved_from = 6;
	}
	s.op = op;
	for (i = reserved_from; i < FP_DBG_RECORD_WORDS; i++)
		if (w[i])
			return rec_err(d, p, k, i, "site %u: closed-form record: word %u is not 0",
				       site, i);
	if (s.narrow && (s.f < INT32_MIN || s.f > INT32_MAX))
		return rec_err(d, p, k, cf == CF_ADDRESS ? 4 : 3,
			       "site %u: closed-form record: first value %" PRId64 " outside int32",
			       site, s.f);
	if (s.narrow && (s.k < INT32_MIN || s.k > INT32_MAX))
		return rec_err(d, p, k, cf == CF_ADDRESS ? 5 : 4,
			       "site %u: closed-form record: step %" PRId64 " outside int32", site,
			       s.k);
	if (cf == CF_AFFINE) {
		cf_value_words(&s, w);
	} else {
		uint64_t first = 0, last = 0, imin = 0, imax = 0;
		uint64_t cnt = cf_active(&s, &first, &last, &imin, &imax);

		if (cf == CF_COMPARE) {
			w[2] = 0;
			w[3] = (n - cnt) | (NO_DUMP32 << 32);
			w[4] = w[5] = dbits((double)cnt);
			w[6] = cnt == n;
			w[7] = cnt > 0;
		} else {
			uint64_t base = w[3], es = fp_dtype_size(dt);

			w[2] = cnt;
			if (cnt) {
				w[3] = base + (uint64_t)cf_at(&s, first) * es;
				w[4] = base + (uint64_t)cf_at(&s, last) * es;
				w[5] = base + (uint64_t)cf_at(&s, imin) * es;
				w[6] = base + (uint64_t)cf_at(&s, imax) * es;
			} else {
				w[3] = w[4] = w[5] = w[6] = 0;
			}
			w[7] = UINT64_MAX;
		}
	}
	w[0] &= ~((uint64_t)FP_DBG_REC_CLOSED << 36);
	return FP_OK;
}

/* Validate one used slot; returns its site index in *site_idx and numel in *numel. */
static int check_record(struct dec *d, uint64_t p, uint64_t k, uint64_t *w, uint32_t *site_idx,
			uint64_t *numel)
{
	const struct fp_dbg_run *run = d->run;
	uint32_t site = (uint32_t)(w[0] & 0xffff);
	unsigned kind = (unsigned)(w[0] >> 16) & 0xff, dtype = (unsigned)(w[0] >> 24) & 0xff;
	unsigned ndim = (unsigned)(w[0] >> 32) & 0xf, flags = (unsigned)(w[0] >> 36) & 0xf;
	uint64_t seq = w[0] >> 40, d0, d1, d2, n;
	const struct fp_dbg_site *s;

	if (!site || site > run->nsites)
		return rec_err(d, p, k, 0, "site id %u out of range 1..%zu", site, run->nsites);
	s = &run->sites[site - 1];
	if (kind != (unsigned)s->kind)
		return rec_err(d, p, k, 0, "site %u: kind %u (%s) but the site table says %s", site,
			       kind, fp_dbg_kind_name((enum fp_dbg_kind)kind),
			       fp_dbg_kind_name(s->kind));
	if (!fp_dtype_valid((int)dtype))
		return rec_err(d, p, k, 0, "site %u: dtype code %u invalid", site, dtype);
	if (flags & ~(FP_DBG_SHAPE_FLATTENED | FP_DBG_REC_CLOSED | FP_DBG_REC_COUNTS))
		return rec_err(d, p, k, 0, "site %u: unknown record flags 0x%x", site, flags);
	if ((flags & FP_DBG_REC_COUNTS) &&
	    (s->kind != FP_DBG_KIND_VALUE || (flags & FP_DBG_REC_CLOSED)))
		return rec_err(
			d, p, k, 0,
			"site %u: the counts-only flag on a record that is not a plain value "
			"record",
			site);
	if (ndim > 3 && !(flags & FP_DBG_SHAPE_FLATTENED))
		return rec_err(d, p, k, 0, "site %u: ndim %u > 3 without the flattened flag", site,
			       ndim);
	if (seq != (k & SEQ_MASK))
		return rec_err(d, p, k, 0, "site %u: sequence %" PRIu64 " does not match slot",
			       site, seq);
	if (w[1] >> 63)
		return rec_err(d, p, k, 1, "site %u: shape word bit 63 set", site);
	if (flags & FP_DBG_SHAPE_FLATTENED) {
		/* numel in bits 0-62 (equal to dims [numel] whenever numel < 2^21) */
		n = w[1];
		if (!n)
			return rec_err(d, p, k, 1, "site %u: flattened shape with numel 0", site);
	} else {
		d0 = w[1] & DIM_MASK;
		d1 = (w[1] >> 21) & DIM_MASK;
		d2 = (w[1] >> 42) & DIM_MASK;
		if ((ndim > 0) != (d0 != 0) || (ndim > 1) != (d1 != 0) || (ndim > 2) != (d2 != 0))
			return rec_err(d, p, k, 1,
				       "site %u: shape [%" PRIu64 ", %" PRIu64 ", %" PRIu64
				       "] inconsistent with ndim %u",
				       site, d0, d1, d2, ndim);
		n = (ndim > 0 ? d0 : 1) * (ndim > 1 ? d1 : 1) * (ndim > 2 ? d2 : 1);
	}
	*site_idx = site - 1;
	*numel = n;
	if (flags & FP_DBG_REC_CLOSED) {
		int st;

		if (flags & FP_DBG_SHAPE_FLATTENED)
			return rec_err(d, p, k, 0,
				       "site %u: closed-form record with a flattened shape", site);
		if ((st = expand_closed(d, p, k, w, site, kind, (enum fp_dtype)dtype, n, ndim)))
			return st;
	}
	if (s->kind == FP_DBG_KIND_VALUE)
		return (flags & FP_DBG_REC_COUNTS) ?
			       check_counts(d, p, k, w, site, (enum fp_dtype)dtype, n) :
			       check_value(d, p, k, w, site, (enum fp_dtype)dtype, n);
	return check_addr(d, p, k, w, site, n);
}

static void read_slot(const struct dec *d, uint64_t p, uint64_t k, uint64_t *w)
{
	const unsigned char *q = d->buf + slot_off(d, p, k, 0);
	unsigned i;

	for (i = 0; i < FP_DBG_RECORD_WORDS; i++)
		w[i] = fp__bytes_le64(q + 8 * i);
}

/* Pass 1: validate every slot, count records per site, check per-site consistency. */
static int pass_validate(struct dec *d, uint64_t *full_programs)
{
	uint64_t p, k, w[FP_DBG_RECORD_WORDS], numel = 0;
	uint32_t si = 0;
	unsigned i;
	int st;

	if (!d->S) /* no slots: nothing stored, and P alone must not drive a loop */
		return FP_OK;
	for (p = 0; p < d->P; p++) {
		bool ended = false;

		for (k = 0; k < d->S; k++) {
			read_slot(d, p, k, w);
			if (!w[0]) {
				for (i = 1; i < FP_DBG_RECORD_WORDS; i++)
					if (w[i])
						return rec_err(d, p, k, i,
							       "unused slot (word 0 is 0) has "
							       "non-zero word %u",
							       i);
				ended = true;
				continue;
			}
			if (ended)
				return rec_err(d, p, k, 0,
					       "used slot after an unused slot (slots fill in "
					       "execution order)");
			if ((st = check_record(d, p, k, w, &si, &numel)))
				return st;
			if (!d->count[si]) {
				d->sig0[si] = (w[0] >> 24) & 0xffff;
				d->sig1[si] = w[1];
				d->sig_prog[si] = p;
				d->sig_slot[si] = (uint32_t)k;
			} else if (d->sig0[si] != ((w[0] >> 24) & 0xffff) || d->sig1[si] != w[1]) {
				return rec_err(d, p, k,
					       d->sig0[si] != ((w[0] >> 24) & 0xffff) ? 0 : 1,
					       "site %u: dtype/shape differ from its first record "
					       "(program %" PRIu64 " slot %u)",
					       si + 1, d->sig_prog[si], d->sig_slot[si]);
			}
			d->count[si]++;
		}
		if (!ended)
			(*full_programs)++;
	}
	return FP_OK;
}

/* Pass 2: place records by site (stable, so program then execution order holds). */
static void pass_fill(struct dec *d, size_t *next, uint32_t *exec)
{
	struct fp_dbg_run *run = d->run;
	uint64_t p, k, w[FP_DBG_RECORD_WORDS];
	uint32_t si;

	for (p = 0; p < d->P; p++) {
		for (k = 0; k < d->S; k++) {
			struct fp_dbg_record *r;

			read_slot(d, p, k, w);
			if (!w[0])
				break;
			si = (uint32_t)(w[0] & 0xffff) - 1;
			if ((w[0] >> 36) & FP_DBG_REC_CLOSED) /* validated by pass 1: cannot fail */
				(void)expand_closed(d, p, k, w, si + 1,
						    (unsigned)(w[0] >> 16) & 0xff,
						    (enum fp_dtype)((w[0] >> 24) & 0xff),
						    run->sites[si].numel, 1);
			r = &run->records[next[si]++];
			memcpy(r->words, w, sizeof(r->words));
			r->program = p;
			r->site = si;
			r->slot = (uint32_t)k;
			r->execution = exec[si]++;
			r->reserved = 0;
			r->numel = run->sites[si].numel;
		}
		/* reset the per-site execution counters this program touched */
		for (k = 0; k < d->S; k++) {
			uint64_t w0 = fp__bytes_le64(d->buf + slot_off(d, p, k, 0));

			if (!w0)
				break;
			exec[(w0 & 0xffff) - 1] = 0;
		}
	}
}

/*
 * The check area (docs/formats/record-format.md, "Check area"): the tensor table and what the
 * device folded into each check slot, against the site table's `params` and `check_slots`.
 */
static int check_area(struct dec *d)
{
	struct fp_dbg_run *run = d->run;
	const unsigned char *b = d->buf;
	size_t i, base;

	if (!run->info.has_checks) {
		if (run->nchecks)
			return fp_diag_set(
				d->diag, FP_EFORMAT, 8,
				"record buffer: header word 1 (layout) has no check area "
				"but the site table has %zu check slots",
				run->nchecks);
		return FP_OK;
	}
	if (d->np != run->nparams || d->nc != run->nchecks)
		return fp_diag_set(d->diag, FP_EFORMAT, d->np != run->nparams ? 64 : 72,
				   "record buffer: the extended header says %" PRIu64
				   " parameters and %" PRIu64
				   " check slots, the site table %zu and %zu",
				   d->np, d->nc, run->nparams, run->nchecks);
	if (d->np) {
		run->table = fp_arena_calloc(&run->arena, (size_t)d->np, sizeof(*run->table));
		if (!run->table)
			return fp_diag_set(d->diag, FP_ENOMEM, 0, "record buffer: out of memory");
	}
	for (i = 0; i < d->np; i++) {
		struct fp_dbg_table_entry *e = &run->table[i];
		size_t off = HDR_BYTES + FP_DBG_EXT_WORDS * 8 + i * FP_DBG_ENTRY_WORDS * 8;

		e->view_lo = fp__bytes_le64(b + off);
		e->view_hi = fp__bytes_le64(b + off + 8);
		e->storage_lo = fp__bytes_le64(b + off + 16);
		e->storage_hi = fp__bytes_le64(b + off + 24);
		if (e->view_lo > e->view_hi || e->storage_lo > e->storage_hi)
			return fp_diag_set(d->diag, FP_EFORMAT,
					   off + (e->view_lo > e->view_hi ? 0 : 16),
					   "record buffer: tensor table entry %zu (`%s`): a range "
					   "ends before it starts",
					   i, run->params[i]);
	}
	base = HDR_BYTES + FP_DBG_EXT_WORDS * 8 + (size_t)d->np * FP_DBG_ENTRY_WORDS * 8;
	for (i = 0; i < d->nc; i++) {
		struct fp_dbg_check_slot *k = &run->checks[i];
		size_t off = base + i * FP_DBG_SLOT_WORDS * 8, j;
		uint64_t w[FP_DBG_SLOT_WORDS];

		for (j = 0; j < FP_DBG_SLOT_WORDS; j++)
			w[j] = fp__bytes_le64(b + off + 8 * j);
#define SLOT_ERR(word, ...)                                \
	fp_diag_set(d->diag, FP_EFORMAT, off + 8 * (word), \
		    "record buffer: check slot %zu (%s, word %d): " __VA_ARGS__)
		k->fired = w[1];
		k->count = w[2];
		if (!k->fired && (w[2] || w[3] || w[4] || w[5] || w[12]))
			return SLOT_ERR(1, "never fired but holds what a firing writes", i,
					fp_dbg_rule_name(k->rule), 1);
		k->has_range = w[3] != 0;
		k->lo = (uint64_t)INT64_MAX - w[3];
		k->hi = w[4];
		if (w[3] > (uint64_t)INT64_MAX || (k->has_range && k->hi < k->lo))
			return SLOT_ERR(3, "the lowest value lies above the highest", i,
					fp_dbg_rule_name(k->rule), 3);
		k->has_first = w[5] != 0;
		if (k->has_first) {
			k->first_program = (w[5] - 1) >> 32;
			k->first_seq = (uint32_t)((w[5] - 1) & 0xffffffffu);
			if (k->first_program >= d->P)
				return SLOT_ERR(5, "first program %" PRIu64 " of %" PRIu64, i,
						fp_dbg_rule_name(k->rule), 5, k->first_program,
						d->P);
			if (w[6] >= (UINT64_C(1) << 31))
				return SLOT_ERR(6, "first lane %" PRIu64 " out of range", i,
						fp_dbg_rule_name(k->rule), 6, w[6]);
		} else if (k->fired) {
			return SLOT_ERR(5, "fired but has no first instance", i,
					fp_dbg_rule_name(k->rule), 5);
		}
		k->first_lane = w[6];
		k->first_value = w[7];
		k->first_iter = (int64_t)w[8];
		k->descended = w[10];
		k->descended_elems = w[11];
		k->programs_more = w[12] != 0;
		if (w[13] > 1 || w[14] || w[15] || w[0])
			return SLOT_ERR(w[13] > 1 ? 13 :
					w[0]      ? 0 :
						    14,
					"reserved word is not 0 (word 13: 0 or 1)", i,
					fp_dbg_rule_name(k->rule),
					w[13] > 1 ? 13 :
					w[0]      ? 0 :
						    14);
		k->unobservable = w[13] == 1;
		if (w[9])
			return SLOT_ERR(9, "its lock is still held", i, fp_dbg_rule_name(k->rule),
					9);
		for (j = 24; j < FP_DBG_SLOT_WORDS; j++)
			if (w[j])
				return SLOT_ERR((int)j, "reserved word is not 0", i,
						fp_dbg_rule_name(k->rule), (int)j);
		if (!k->fired)
			for (j = 16; j < 24; j++)
				if (w[j])
					return SLOT_ERR((int)j, "never fired but lists a program",
							i, fp_dbg_rule_name(k->rule), (int)j);
		for (j = 0; j < FP_DBG_SLOT_PROGRAMS; j++) {
			uint64_t p = w[16 + j];

			if (!p)
				continue;
			if (p > d->P)
				return SLOT_ERR(16 + (int)j,
						"program %" PRIu64 " of %" PRIu64 " in its list", i,
						fp_dbg_rule_name(k->rule), 16 + (int)j, p - 1,
						d->P);
			k->programs[k->nprograms++] = p - 1;
		}
		/* ascending, without duplicates (the device keeps them unordered) */
		for (j = 1; j < k->nprograms; j++) {
			uint64_t x = k->programs[j];
			size_t m = j;

			while (m && k->programs[m - 1] > x) {
				k->programs[m] = k->programs[m - 1];
				m--;
			}
			k->programs[m] = x;
		}
		for (j = 1; j < k->nprograms; j++)
			if (k->programs[j] == k->programs[j - 1])
				return SLOT_ERR(16, "program %" PRIu64 " listed twice", i,
						fp_dbg_rule_name(k->rule), 16, k->programs[j]);
		if (k->fired && !k->nprograms)
			return SLOT_ERR(16, "fired but lists no program", i,
					fp_dbg_rule_name(k->rule), 16);
#undef SLOT_ERR
	}
	return FP_OK;
}

/* Fill the per-site facts that come from the records (pass 1 checked they agree). */
static void site_facts(struct dec *d)
{
	struct fp_dbg_run *run = d->run;
	size_t i;

	for (i = 0; i < run->nsites; i++) {
		struct fp_dbg_site *s = &run->sites[i];
		uint64_t w0 = d->sig0[i] << 24, w1 = d->sig1[i];
		unsigned ndim = (unsigned)(w0 >> 32) & 0xf, flags = (unsigned)(w0 >> 36) & 0xf;
		unsigned j;

		s->nrecords = d->count[i];
		if (!s->nrecords)
			continue;
		s->dtype = (enum fp_dtype)((w0 >> 24) & 0xff);
		s->ndim = ndim;
		s->flattened = flags & FP_DBG_SHAPE_FLATTENED;
		if (s->flattened) {
			s->shape[0] = w1;
			s->numel = w1;
		} else {
			s->numel = 1;
			for (j = 0; j < ndim; j++) {
				s->shape[j] = (w1 >> (21 * j)) & DIM_MASK;
				s->numel *= s->shape[j];
			}
		}
	}
}

static int dec_alloc(struct dec *d, size_t n)
{
	size_t m = n ? n : 1;

	d->sig0 = fp_calloc(m, sizeof(*d->sig0));
	d->sig1 = fp_calloc(m, sizeof(*d->sig1));
	d->sig_prog = fp_calloc(m, sizeof(*d->sig_prog));
	d->sig_slot = fp_calloc(m, sizeof(*d->sig_slot));
	d->count = fp_calloc(m, sizeof(*d->count));
	if (!d->sig0 || !d->sig1 || !d->sig_prog || !d->sig_slot || !d->count)
		return FP_ENOMEM;
	return FP_OK;
}

static void dec_release(struct dec *d)
{
	fp_free(d->sig0);
	fp_free(d->sig1);
	fp_free(d->sig_prog);
	fp_free(d->sig_slot);
	fp_free(d->count);
}

/* Build the record index and copy the dump arena; only counts bounded by `len` size memory. */
static int build(struct dec *d)
{
	struct fp_dbg_run *run = d->run;
	size_t *next = NULL, i, total = 0;
	uint32_t *exec = NULL;
	int st = FP_ENOMEM;

	for (i = 0; i < run->nsites; i++)
		total += d->count[i];
	run->site_first = fp_calloc(run->nsites + 1, sizeof(*run->site_first));
	if (!run->site_first)
		goto fail_alloc;
	for (i = 0; i < run->nsites; i++)
		run->site_first[i + 1] = run->site_first[i] + d->count[i];
	if (total) {
		run->records = fp_reallocarray(NULL, total, sizeof(*run->records));
		next = fp_calloc(run->nsites, sizeof(*next));
		exec = fp_calloc(run->nsites, sizeof(*exec));
		if (!run->records || !next || !exec)
			goto fail_alloc;
		memcpy(next, run->site_first, run->nsites * sizeof(*next));
		pass_fill(d, next, exec);
	}
	run->nrecords = total;
	run->info.record_count = total;
	for (i = 0; i < total; i++) {
		if (fp_dbg_record_dump_offset(&run->records[i]) != FP_DBG_NO_DUMP) {
			run->info.dump_count++;
			run->sites[run->records[i].site].ndumps++;
		}
	}
	if (run->info.dump_count) {
		run->dump_words = (size_t)d->arena_words;
		run->dump = fp_reallocarray(NULL, run->dump_words, sizeof(*run->dump));
		if (!run->dump)
			goto fail_alloc;
		for (i = 0; i < run->dump_words; i++)
			run->dump[i] = fp__bytes_le64(d->buf + d->rec_off +
						      (size_t)(d->S * d->P) * REC_BYTES + i * 8);
	}
	fp_free(next);
	fp_free(exec);
	return FP_OK;

fail_alloc:
	fp_free(next);
	fp_free(exec);
	return fp_diag_set(d->diag, st, 0, "record buffer: out of memory building the run");
}

int fp_dbg_decode(const void *buf, size_t len, const char *site_table_json, size_t site_len,
		  struct fp_dbg_run **out, struct fp_diag *diag)
{
	struct dec d = {.buf = buf, .len = len, .diag = diag};
	struct fp_dbg_run *run;
	uint64_t full = 0;
	int st;

	if (!out || (!buf && len) || !site_table_json)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_dbg_decode: NULL argument");
	*out = NULL;
	fp_diag_clear(diag);
	run = fp_calloc(1, sizeof(*run));
	if (!run)
		return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	fp_arena_init(&run->arena, 0, 0);
	run->info.kernel = "";
	run->info.file = "";
	d.run = run;
	/* the header's own checks come first: they need nothing from the site table */
	if ((st = header(&d)))
		goto fail_decode;
	if ((st = fp__dbg_sites_parse(run, site_table_json, site_len, diag)))
		goto fail_decode;
	if (fp__bytes_le64(d.buf + 56) != run->nsites) {
		st = fp_diag_set(diag, FP_EFORMAT, 56,
				 "record buffer: header word 7 (nsites) is %" PRIu64
				 " but the site table has %zu sites",
				 fp__bytes_le64(d.buf + 56), run->nsites);
		goto fail_decode;
	}
	if ((st = check_area(&d)))
		goto fail_decode;
	if ((st = dec_alloc(&d, run->nsites))) {
		fp_diag_set(diag, st, 0, "record buffer: out of memory");
		goto fail_decode;
	}
	if ((st = pass_validate(&d, &full)))
		goto fail_decode;
	if (run->info.overflow_count && d.S && !full) {
		st = fp_diag_set(diag, FP_EFORMAT, 32,
				 "record buffer: header word 4 (overflow) is %" PRIu64
				 " but no program filled its %" PRIu64 " slots",
				 run->info.overflow_count, d.S);
		goto fail_decode;
	}
	site_facts(&d);
	if ((st = build(&d)))
		goto fail_decode;
	run->info.complete = !run->info.overflow_count && !run->info.dump_overflow;
	run->info.full_programs = full;
	dec_release(&d);
	*out = run;
	return FP_OK;

fail_decode:
	dec_release(&d);
	fp_dbg_run_free(run);
	return st;
}
