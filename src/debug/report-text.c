/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Text output helpers of the Debugger's writers: a fixed line buffer flushed to a FILE* in large
 * blocks, with hand-written integer and hex formatting. A 64M-element launch yields hundreds of
 * thousands of report rows, and one stdio call per field would dominate the time. Nothing here
 * knows about reports; the layouts are in report-txt.c, report-oplog.c and report-raw.c.
 */
#include "fp-setup.h"

#include <math.h>

#include "debug/report-internal.h"

void fp__tb_init(struct fp__tbuf *t, FILE *f)
{
	t->f = f;
	t->n = 0;
	t->err = FP_OK;
}

int fp__tb_flush(struct fp__tbuf *t)
{
	if (t->n && !t->err && fwrite(t->b, 1, t->n, t->f) != t->n)
		t->err = FP_EIO;
	t->n = 0;
	return t->err;
}

/* Make room for n bytes (n <= sizeof(b)). */
static inline void room(struct fp__tbuf *t, size_t n)
{
	if (t->n + n > sizeof(t->b))
		fp__tb_flush(t);
}

void fp__tb_mem(struct fp__tbuf *t, const char *s, size_t n)
{
	while (n) {
		size_t k;

		room(t, 1);
		k = FP_MIN(n, sizeof(t->b) - t->n);
		memcpy(t->b + t->n, s, k);
		t->n += k;
		s += k;
		n -= k;
	}
}

void fp__tb_str(struct fp__tbuf *t, const char *s)
{
	fp__tb_mem(t, s, strlen(s));
}

void fp__tb_ch(struct fp__tbuf *t, char c)
{
	room(t, 1);
	t->b[t->n++] = c;
}

void fp__tb_pad(struct fp__tbuf *t, size_t n)
{
	while (n) {
		size_t k;

		room(t, 1);
		k = FP_MIN(n, sizeof(t->b) - t->n);
		memset(t->b + t->n, ' ', k);
		t->n += k;
		n -= k;
	}
}

void fp__tb_printf(struct fp__tbuf *t, const char *fmt, ...)
{
	char small[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		fp__tb_mem(t, small, (size_t)n);
		return;
	}
	/* rare long line: format straight into a heap copy */
	{
		char *big = fp_malloc((size_t)n + 1);

		if (!big) {
			t->err = t->err ? t->err : FP_ENOMEM;
			return;
		}
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		fp__tb_mem(t, big, (size_t)n);
		fp_free(big);
	}
}

unsigned fp__dec_len(uint64_t v)
{
	unsigned n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

void fp__tb_u64(struct fp__tbuf *t, uint64_t v, unsigned width)
{
	char tmp[24];
	unsigned n = 0;

	do {
		tmp[sizeof(tmp) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	room(t, width + n);
	if (width > n) {
		memset(t->b + t->n, ' ', width - n);
		t->n += width - n;
	}
	memcpy(t->b + t->n, tmp + sizeof(tmp) - n, n);
	t->n += n;
}

void fp__tb_i64(struct fp__tbuf *t, int64_t v, unsigned width)
{
	uint64_t m;

	if (v >= 0) {
		fp__tb_u64(t, (uint64_t)v, width);
		return;
	}
	m = (uint64_t)0 - (uint64_t)v;
	if (width > fp__dec_len(m) + 1)
		fp__tb_pad(t, width - fp__dec_len(m) - 1);
	fp__tb_ch(t, '-');
	fp__tb_u64(t, m, 0);
}

void fp__tb_hex(struct fp__tbuf *t, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	int i;

	room(t, 18);
	t->b[t->n++] = '0';
	t->b[t->n++] = 'x';
	for (i = 15; i >= 0; i--)
		t->b[t->n++] = digits[(v >> (4 * i)) & 0xf];
}

void fp__tb_g(struct fp__tbuf *t, double v, bool present, unsigned width)
{
	char tmp[40];
	int n;

	if (!present) {
		tmp[0] = '-';
		n = 1;
	} else if (v == 0) { /* the common exact cases, without snprintf */
		n = signbit(v) ? 2 : 1;
		memcpy(tmp, signbit(v) ? "-0" : "0", (size_t)n);
	} else {
		n = fp__dbg_fmt_g6(v, tmp, sizeof(tmp));
		if (n < 0)
			n = 0;
	}
	if (width > (unsigned)n)
		fp__tb_pad(t, width - (unsigned)n);
	fp__tb_mem(t, tmp, (size_t)n);
}

void fp__tb_left(struct fp__tbuf *t, const char *s, unsigned width)
{
	size_t n = strlen(s);

	fp__tb_mem(t, s, n);
	if (width > n)
		fp__tb_pad(t, width - n);
}

size_t fp__dbg_program_label(const struct fp_dbg_launch *l, uint64_t p, char *buf, size_t size)
{
	uint64_t xyz[3];
	int n;

	fp__dbg_program_xyz(l, p, xyz);
	if (l->grid_ndim <= 1 && xyz[1] == 0 && xyz[2] == 0)
		n = snprintf(buf, size, "%" PRIu64, xyz[0]);
	else if (l->grid_ndim == 2 && xyz[2] == 0)
		n = snprintf(buf, size, "%" PRIu64 ",%" PRIu64, xyz[0], xyz[1]);
	else
		n = snprintf(buf, size, "%" PRIu64 ",%" PRIu64 ",%" PRIu64, xyz[0], xyz[1], xyz[2]);
	return n < 0 ? 0 : FP_MIN((size_t)n, size - 1);
}
