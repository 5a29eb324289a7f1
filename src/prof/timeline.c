/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The timeline buffer decoder (docs/formats/timeline-format.md, v1): validates the header and every
 * used record of every program, pairs enter and exit records into intervals (nested scopes
 * allowed, an exit must close the innermost open scope) and computes per-scope statistics over
 * programs. Times come out in ns: AMD buffers hold ticks of s_memrealtime, converted with the
 * rate in header word 5. Rejections name the byte offset, the program and the record.
 * Allocation is bounded by the buffer's length, never by a count read from it. Not here:
 * sessions and writers (timeline-session.c).
 */
#include "fp-setup.h"

#include <flagprism/timeline.h>

#include "core/bytes-internal.h"

#define HDR_BYTES (FP_TIMELINE_HEADER_WORDS * 8u)
#define REC_BYTES (FP_TIMELINE_RECORD_WORDS * 8u)
#define MAX_INTERVALS ((size_t)1 << 28)

struct fp_timeline {
	struct fp_timeline_info info;
	struct fp_timeline_interval *iv;
	size_t niv;
	struct fp_timeline_scope_stats *stats; /* [nscopes + 1], index 0 unused */
};

void fp_timeline_free(struct fp_timeline *t)
{
	if (!t)
		return;
	fp_free(t->iv);
	fp_free(t->stats);
	fp_free(t);
}

const struct fp_timeline_info *fp_timeline_get_info(const struct fp_timeline *t)
{
	return t ? &t->info : NULL;
}

size_t fp_timeline_intervals(const struct fp_timeline *t, const struct fp_timeline_interval **out)
{
	if (!t) {
		if (out)
			*out = NULL;
		return 0;
	}
	if (out)
		*out = t->iv;
	return t->niv;
}

int fp_timeline_scope_stats(const struct fp_timeline *t, uint32_t scope,
			    struct fp_timeline_scope_stats *out)
{
	if (!t || !out || scope == 0 || scope > t->info.nscopes)
		return FP_EINVAL;
	*out = t->stats[scope];
	return FP_OK;
}

struct open_scope {
	uint16_t scope;
	uint64_t t, cycles;
};

/* Per-program accumulation of one scope, folded into stats when the program ends. */
struct prog_acc {
	double time, cycles;
	uint32_t stamp; /* program index + 1 that last touched it */
};

static void fold(struct fp_timeline *t, struct prog_acc *acc, uint32_t scope)
{
	struct fp_timeline_scope_stats *st = &t->stats[scope];
	struct prog_acc *a = &acc[scope];

	if (st->programs == 0) {
		st->time_min = st->time_max = a->time;
		st->cycles_min = st->cycles_max = a->cycles;
	} else {
		st->time_min = FP_MIN(st->time_min, a->time);
		st->time_max = FP_MAX(st->time_max, a->time);
		st->cycles_min = FP_MIN(st->cycles_min, a->cycles);
		st->cycles_max = FP_MAX(st->cycles_max, a->cycles);
	}
	st->programs++;
	st->time_sum += a->time;
	st->cycles_sum += a->cycles;
}

/* ticks at `khz` kHz in ns, exact to the ns below; false if that exceeds 2^64 - 1 ns. */
static bool ticks_to_ns(uint64_t ticks, uint64_t khz, uint64_t *ns)
{
	uint64_t q = ticks / khz, frac = (ticks % khz) * UINT64_C(1000000) / khz;

	if (q > (UINT64_MAX - frac) / UINT64_C(1000000))
		return false;
	*ns = q * UINT64_C(1000000) + frac;
	return true;
}

int fp_timeline_decode(const void *buf, size_t len, struct fp_timeline **out, struct fp_diag *diag)
{
	const unsigned char *b = buf;
	struct fp_timeline *t = NULL;
	struct prog_acc *acc = NULL;
	uint32_t *touched = NULL;
	uint64_t layout, S, P, nscopes, per_prog, words, p, khz = 0;
	uint64_t t_min = UINT64_MAX, t_max = 0;
	int rc = FP_ENOMEM;

	if (!out || (!buf && len))
		return FP_EINVAL;
	if (len < HDR_BYTES || len % 8)
		return fp_diag_set(
			diag, FP_EFORMAT, 0,
			"timeline buffer of %zu bytes: expected a multiple of 8, at least "
			"%u",
			len, HDR_BYTES);
	if (fp__bytes_le64(b) != FP_TIMELINE_MAGIC)
		return fp_diag_set(diag, FP_EFORMAT, 0, "bad timeline magic 0x%016" PRIx64,
				   fp__bytes_le64(b));
	layout = fp__bytes_le64(b + 8);
	if ((layout & 0xff) != FP_TIMELINE_VERSION)
		return fp_diag_set(diag, FP_EVERSION, 8, "timeline format version %u (expected %u)",
				   (unsigned)(layout & 0xff), FP_TIMELINE_VERSION);
	if (((layout >> 8) & 0xff) > FP_TIMELINE_CLOCK_AMD)
		return fp_diag_set(diag, FP_EFORMAT, 8, "unknown timeline clock %u",
				   (unsigned)((layout >> 8) & 0xff));
	if (((layout >> 8) & 0xff) == FP_TIMELINE_CLOCK_AMD) {
		khz = fp__bytes_le64(b + 40);
		if (khz == 0 || khz > FP_TIMELINE_MAX_TICK_KHZ)
			return fp_diag_set(diag, FP_EFORMAT, 40,
					   "AMD timeline clock rate of %" PRIu64
					   " kHz (expected 1 to %u)",
					   khz, FP_TIMELINE_MAX_TICK_KHZ);
	}
	if (((layout >> 16) & 0xff) != FP_TIMELINE_RECORD_WORDS || (layout >> 24) != 0)
		return fp_diag_set(diag, FP_EFORMAT, 8,
				   "timeline layout word 0x%" PRIx64
				   ": expected %u words per record",
				   layout, FP_TIMELINE_RECORD_WORDS);
	S = fp__bytes_le64(b + 16);
	P = fp__bytes_le64(b + 24);
	nscopes = fp__bytes_le64(b + 32);
	if (nscopes > FP_TIMELINE_MAX_SCOPES)
		return fp_diag_set(diag, FP_EFORMAT, 32, "%" PRIu64 " scopes (at most %u)", nscopes,
				   FP_TIMELINE_MAX_SCOPES);
	words = (len - HDR_BYTES) / 8;
	/* per program: 1 count word + S records; checked against the length without overflow */
	if (S > words / FP_TIMELINE_RECORD_WORDS)
		return fp_diag_set(diag, FP_EFORMAT, 16,
				   "%" PRIu64 " records per program do not fit in %zu bytes", S,
				   len);
	per_prog = 1 + S * FP_TIMELINE_RECORD_WORDS;
	if (P > words / per_prog || P * per_prog != words)
		return fp_diag_set(diag, FP_EFORMAT, 24,
				   "%" PRIu64 " programs of %" PRIu64
				   " words each do not match the %zu bytes after the header",
				   P, per_prog, len - HDR_BYTES);

	t = fp_calloc(1, sizeof(*t));
	if (!t)
		return FP_ENOMEM;
	t->info.clock = (uint32_t)((layout >> 8) & 0xff);
	t->info.nscopes = (uint32_t)nscopes;
	t->info.programs = P;
	t->info.slots = S;
	t->info.tick_khz = khz;
	t->stats = fp_calloc((size_t)nscopes + 1, sizeof(*t->stats));
	acc = fp_calloc((size_t)nscopes + 1, sizeof(*acc));
	touched = fp_calloc((size_t)nscopes + 1, sizeof(*touched));
	if (!t->stats || !acc || !touched)
		goto fail_nomem;
	/* At most one interval per two records: bounded by the length. */
	if (P && S) {
		size_t cap = (size_t)FP_MIN((uint64_t)MAX_INTERVALS, P * ((S + 1) / 2));

		t->iv = fp_reallocarray(NULL, cap ? cap : 1, sizeof(*t->iv));
		if (!t->iv)
			goto fail_nomem;
	}

	for (p = 0; p < P; p++) {
		size_t base = HDR_BYTES + (size_t)(p * per_prog) * 8;
		uint64_t n = fp__bytes_le64(b + base), used = FP_MIN(n, S), r;
		struct open_scope stack[FP_TIMELINE_MAX_DEPTH];
		uint32_t depth = 0, ntouched = 0, i;
		uint64_t first = 0, last = 0;

		if (n == 0) {
			t->info.missing++;
			continue;
		}
		if (n > S) {
			t->info.overflow += n - S;
			t->info.overflowed_programs++;
		}
		for (r = 0; r < used; r++) {
			size_t off = base + 8 + (size_t)r * REC_BYTES;
			uint64_t tag = fp__bytes_le64(b + off), ts = fp__bytes_le64(b + off + 8);
			uint64_t cyc = fp__bytes_le64(b + off + 16);
			uint32_t scope = (uint32_t)(tag & 0xffff),
				 kind = (uint32_t)((tag >> 16) & 0xff);

			if ((tag >> 24) & 0xff)
				goto fail_tag;
			if (khz && !ticks_to_ns(ts, khz, &ts)) {
				rc = fp_diag_set(diag, FP_EFORMAT, off + 8,
						 "program %" PRIu64 " record %" PRIu64 ": %" PRIu64
						 " ticks at %" PRIu64
						 " kHz do not fit in 64-bit ns",
						 p, r, ts, khz);
				goto fail_diag;
			}
			if (r == 0) {
				if (kind != FP_TIMELINE_BEGIN || scope != 0) {
					rc = fp_diag_set(
						diag, FP_EFORMAT, off,
						"program %" PRIu64
						" record 0: expected the begin record, got "
						"tag 0x%" PRIx64,
						p, tag);
					goto fail_diag;
				}
				first = last = ts;
			} else if (kind == FP_TIMELINE_END) {
				if (scope != 0)
					goto fail_tag;
			} else if (kind == FP_TIMELINE_BEGIN || scope == 0 || scope > nscopes) {
				goto fail_tag;
			}
			t_min = FP_MIN(t_min, ts);
			t_max = FP_MAX(t_max, ts);
			if (ts > last)
				last = ts;
			t->info.records++;
			if (kind == FP_TIMELINE_ENTER) {
				if (depth == FP_TIMELINE_MAX_DEPTH) {
					rc = fp_diag_set(diag, FP_EFORMAT, off,
							 "program %" PRIu64 " record %" PRIu64
							 ": scopes nested deeper than %u",
							 p, r, FP_TIMELINE_MAX_DEPTH);
					goto fail_diag;
				}
				stack[depth].scope = (uint16_t)scope;
				stack[depth].t = ts;
				stack[depth].cycles = cyc;
				depth++;
			} else if (kind == FP_TIMELINE_EXIT) {
				struct fp_timeline_interval *iv;
				struct open_scope *o;

				if (depth == 0 || stack[depth - 1].scope != scope) {
					rc = fp_diag_set(
						diag, FP_EFORMAT, off,
						"program %" PRIu64 " record %" PRIu64
						": exit of scope %u does not match the open "
						"scope %u",
						p, r, scope, depth ? stack[depth - 1].scope : 0u);
					goto fail_diag;
				}
				o = &stack[--depth];
				if (t->niv >= MAX_INTERVALS) {
					rc = fp_diag_set(diag, FP_ELIMIT, off,
							 "more than %zu intervals", MAX_INTERVALS);
					goto fail_diag;
				}
				iv = &t->iv[t->niv++];
				iv->begin_ns = o->t;
				if (ts < o->t)
					t->info.backwards++;
				iv->end_ns = ts >= o->t ? ts : o->t;
				iv->cycles = cyc >= o->cycles ? cyc - o->cycles : 0;
				iv->program = (uint32_t)p;
				iv->smid = (uint32_t)(tag >> 32);
				iv->scope = (uint16_t)scope;
				iv->parent = depth ? stack[depth - 1].scope : 0;
				iv->depth = depth;
				if (t->stats[scope].intervals++ == 0)
					t->stats[scope].parent = iv->parent;
				if (touched[scope] != (uint32_t)(p + 1)) {
					touched[scope] = (uint32_t)(p + 1);
					acc[scope].time = acc[scope].cycles = 0;
					/* the touched list reuses acc[].stamp as its storage order */
					acc[ntouched].stamp = scope;
					ntouched++;
				}
				acc[scope].time += (double)(iv->end_ns - iv->begin_ns);
				acc[scope].cycles += (double)iv->cycles;
			} else if (kind != FP_TIMELINE_BEGIN && kind != FP_TIMELINE_END) {
				goto fail_tag;
			}
			continue;
fail_tag:
			rc = fp_diag_set(diag, FP_EFORMAT, off,
					 "program %" PRIu64 " record %" PRIu64
					 ": bad tag 0x%" PRIx64 " (kind %u, scope %u of %" PRIu64
					 ")",
					 p, r, tag, kind, scope, nscopes);
			goto fail_diag;
		}
		if (depth) {
			if (n > S)
				t->info.truncated += depth;
			else
				t->info.unclosed += depth;
		}
		t->info.span_sum += (double)(last - first);
		for (i = 0; i < ntouched; i++) {
			uint32_t sc = acc[i].stamp;

			fold(t, acc, sc);
		}
	}
	t->info.t_min = t->info.records ? t_min : 0;
	t->info.t_max = t_max;
	fp_free(acc);
	fp_free(touched);
	*out = t;
	return FP_OK;

fail_nomem:
	rc = FP_ENOMEM;
fail_diag:
	fp_free(acc);
	fp_free(touched);
	fp_timeline_free(t);
	return rc;
}
