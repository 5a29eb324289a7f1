/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TTIR types: split a printed type ("tensor<64x32x!tt.ptr<f16>>", "!tt.ptr<f32>", "bf16") into
 * element type and shape, once per distinct text (types repeat on almost every line), and answer
 * the element-size and dtype-class questions the estimator asks. It does not validate types: an
 * unknown element type simply has size 0 and no class.
 */
#include "fp-setup.h"

#include "ir/ttir-internal.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* "iN" with N in 1..65536 -> N, else 0. */
static uint32_t int_width(const char *e)
{
	uint32_t w = 0;

	if (e[0] != 'i' || !is_digit(e[1]))
		return 0;
	for (e++; is_digit(*e); e++) {
		w = w * 10 + (uint32_t)(*e - '0');
		if (w > 65536)
			return 0;
	}
	return *e ? 0 : w;
}

uint32_t fp__ttir_elem_size(const char *e)
{
	uint32_t w;

	if (!e)
		return 0;
	if (strcmp(e, "f32") == 0 || strcmp(e, "tf32") == 0)
		return 4;
	if (strcmp(e, "f16") == 0 || strcmp(e, "bf16") == 0)
		return 2;
	if (strcmp(e, "f64") == 0 || strcmp(e, "index") == 0)
		return 8;
	if (strncmp(e, "f8", 2) == 0)
		return 1;
	if (strncmp(e, "!tt.ptr<", 8) == 0)
		return 8;
	w = int_width(e);
	/* i1 is stored as a byte in memory */
	return w ? (w + 7) / 8 : 0;
}

enum fp_ttir_dclass fp__ttir_elem_class(const char *e)
{
	if (!e)
		return FP_TTIR_NCLASS;
	if (strcmp(e, "f64") == 0)
		return FP_TTIR_FP64;
	if (strcmp(e, "f32") == 0 || strcmp(e, "tf32") == 0)
		return FP_TTIR_FP32;
	if (strcmp(e, "f16") == 0 || strcmp(e, "bf16") == 0)
		return FP_TTIR_FP16;
	if (strncmp(e, "f8", 2) == 0)
		return FP_TTIR_FP8;
	if (int_width(e) || strcmp(e, "index") == 0 || strncmp(e, "!tt.ptr<", 8) == 0)
		return FP_TTIR_INT;
	return FP_TTIR_NCLASS;
}

const char *fp_ttir_dclass_name(enum fp_ttir_dclass c)
{
	switch (c) {
	case FP_TTIR_FP64:
		return "fp64";
	case FP_TTIR_FP32:
		return "fp32";
	case FP_TTIR_FP16:
		return "fp16";
	case FP_TTIR_FP8:
		return "fp8";
	case FP_TTIR_INT:
		return "int";
	default:
		return "unknown";
	}
}

/*
 * End of the top-level part of s[0..n) that stops at a ',' or '>' outside nested brackets; n if
 * none. Used to cut "f32, #blocked>" at the encoding and "f32, 1>" at the address space.
 */
static size_t top_level_end(const char *s, size_t n, bool stop_at_gt)
{
	size_t i, depth = 0;

	for (i = 0; i < n; i++) {
		char c = s[i];

		if (c == '<' || c == '(' || c == '[' || c == '{') {
			depth++;
		} else if (c == '>' || c == ')' || c == ']' || c == '}') {
			if (depth == 0) {
				if (c == '>' && stop_at_gt)
					return i;
				continue;
			}
			depth--;
		} else if (c == ',' && depth == 0) {
			return i;
		}
	}
	return n;
}

bool fp__ttir_pointee(const char *text, const char **s, size_t *n)
{
	size_t len;

	if (!text || strncmp(text, "!tt.ptr<", 8) != 0)
		return false;
	len = strlen(text);
	if (len < 9 || text[len - 1] != '>')
		return false;
	*s = text + 8;
	*n = top_level_end(*s, len - 9, false);
	return true;
}

size_t fp__ttir_shaped_prefix(const char *s, size_t n)
{
	static const char *const prefixes[] = {"tensor<", "!ttg.memdesc<", "vector<", "memref<"};
	size_t i, k;

	if (n == 0 || s[n - 1] != '>')
		return 0;
	for (i = 0; i < FP_ARRAY_SIZE(prefixes); i++) {
		k = strlen(prefixes[i]);
		if (n > k && strncmp(s, prefixes[i], k) == 0)
			return k;
	}
	return 0;
}

/*
 * Split a shaped type ("tensor<...>", TTGIR's "!ttg.memdesc<...>") into dims and element type.
 * Returns FP_OK, FP_ELIMIT, FP_ENOMEM.
 */
static int decompose(struct fp__ttir_parser *p, const char *text, size_t n, struct fp_ttir_type *t)
{
	int64_t dims[FP_TTIR_MAX_RANK];
	uint32_t rank = 0;
	const char *in, *end;
	size_t i, elen;
	uint64_t numel = 1;
	int64_t *shape;

	t->rank = 0;
	t->shape = NULL;
	t->numel = 1;
	t->elem = t->text;
	i = fp__ttir_shaped_prefix(text, n);
	if (i == 0)
		return FP_OK;
	in = text + i;
	end = text + n - 1;
	for (;;) {
		const char *q = in;
		int64_t d = 0;

		if (q < end && *q == '?') {
			d = -1;
			q++;
		} else {
			if (q >= end || !is_digit(*q))
				break;
			while (q < end && is_digit(*q)) {
				if (d > (INT64_MAX - 9) / 10)
					return FP_OK; /* absurd dim: leave the type opaque */
				d = d * 10 + (*q - '0');
				q++;
			}
		}
		if (q >= end || *q != 'x')
			break; /* not a dim: the element type starts at `in` */
		if (rank == FP_TTIR_MAX_RANK)
			return FP_ELIMIT;
		dims[rank++] = d;
		in = q + 1;
	}
	elen = top_level_end(in, (size_t)(end - in), false);
	while (elen > 0 && (in[elen - 1] == ' ' || in[elen - 1] == '\t'))
		elen--;
	if (elen == 0)
		return FP_OK;
	t->elem = fp__ttir_intern(p, in, elen);
	if (!t->elem)
		return FP_ENOMEM;
	if (rank) {
		shape = fp_arena_calloc(&p->m->arena, rank, sizeof(*shape));
		if (!shape)
			return FP_ENOMEM;
		for (i = 0; i < rank; i++) {
			shape[i] = dims[i];
			if (dims[i] < 0)
				numel = 0;
			else if (numel && (uint64_t)dims[i] &&
				 numel > UINT64_MAX / (uint64_t)dims[i])
				numel = UINT64_MAX;
			else if (numel != UINT64_MAX)
				numel *= (uint64_t)dims[i];
		}
		t->shape = shape;
	}
	t->rank = rank;
	t->numel = numel;
	return FP_OK;
}

int fp__ttir_type_get(struct fp__ttir_parser *p, const char *s, size_t n, struct fp_ttir_type *out)
{
	const struct fp__ttir_slot *hit = fp__ttir_strmap_get(&p->type_map, s, n);
	struct fp__ttir_slot *slot;
	struct fp_ttir_type t;
	bool added;
	int rc;

	if (hit) {
		*out = p->types[hit->value];
		return FP_OK;
	}
	memset(&t, 0, sizeof(t));
	t.text = fp__ttir_intern(p, s, n);
	if (!t.text)
		return FP_ENOMEM;
	rc = decompose(p, t.text, n, &t);
	if (rc)
		return rc;
	rc = fp__grow((void **)&p->types, &p->cap_types, p->n_types + 1, sizeof(*p->types),
		      UINT32_MAX - 1);
	if (rc)
		return rc;
	rc = fp__ttir_strmap_put(&p->type_map, t.text, n, (uint32_t)p->n_types, &slot, &added);
	if (rc)
		return rc;
	p->types[p->n_types++] = t;
	*out = t;
	return FP_OK;
}

static uint32_t elem_size_n(const char *s, size_t n)
{
	char buf[64];

	if (n == 0 || n >= sizeof(buf))
		return 0;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return fp__ttir_elem_size(buf);
}

static enum fp_ttir_dclass elem_class_n(const char *s, size_t n)
{
	char buf[64];

	if (n == 0 || n >= sizeof(buf))
		return FP_TTIR_NCLASS;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return fp__ttir_elem_class(buf);
}

/* numel and element type of the text "tensor<AxBxT...>" s[0..n), without interning. */
static bool tensor_text(const char *s, size_t n, uint64_t *numel, const char **e, size_t *elen)
{
	const char *q, *end;
	uint64_t total = 1;
	size_t pre = fp__ttir_shaped_prefix(s, n);

	if (pre == 0)
		return false;
	q = s + pre;
	end = s + n - 1;
	for (;;) {
		const char *d = q;
		uint64_t v = 0;

		while (d < end && is_digit(*d)) {
			if (v > (UINT64_MAX - 9) / 10)
				return false;
			v = v * 10 + (uint64_t)(*d - '0');
			d++;
		}
		if (d == q || d >= end || *d != 'x')
			break;
		total = (total && v > UINT64_MAX / total) ? UINT64_MAX : total * v;
		q = d + 1;
	}
	*numel = total;
	*e = q;
	*elen = top_level_end(q, (size_t)(end - q), false);
	return true;
}

bool fp__ttir_access(const struct fp_ttir_type *t, uint64_t *numel, uint32_t *elem_size,
		     enum fp_ttir_dclass *cls)
{
	const char *s, *e;
	size_t n, elen;

	if (!t || !t->text)
		return false;
	if (t->rank > 0 && fp__ttir_pointee(t->elem, &s, &n)) {
		*numel = t->numel;
		*elem_size = elem_size_n(s, n);
		*cls = elem_class_n(s, n);
		return true;
	}
	if (t->rank == 0 && fp__ttir_pointee(t->text, &s, &n)) {
		if (tensor_text(s, n, numel, &e, &elen)) {
			*elem_size = elem_size_n(e, elen);
			*cls = elem_class_n(e, elen);
		} else {
			*numel = 1;
			*elem_size = elem_size_n(s, n);
			*cls = elem_class_n(s, n);
		}
		return true;
	}
	*numel = t->numel;
	*elem_size = fp__ttir_elem_size(t->elem);
	*cls = fp__ttir_elem_class(t->elem);
	return true;
}
