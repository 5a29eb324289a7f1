/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Hatchet reader's fast path: a streaming scanner that reads Hatchet text once, without
 * building a JSON document, into two flat arrays (nodes in document order, metric values), then
 * builds the call tree from them; that second step is needed because Proton writes a node's
 * "children" before its "frame" (nlohmann::json sorts keys). It is deliberately narrow: it
 * accepts only text it fully understands (ASCII strings without escapes, exact RFC 8259 numbers
 * and structure) and says "fall back" for everything else - unusual input and every error - so
 * that fp_calltree_parse_hatchet() (hatchet-read.c) hands it to the DOM reader, the one
 * authority on trees, counters and messages; this file only makes the common case about three
 * times faster (tests/fuzz/fuzz-view-read.c checks that both agree). For texts of 8 MB or more
 * the scan runs on a second thread and the calling thread builds the tree from the nodes it
 * hands over (a node is handed over once its frame and metrics are read, so Proton's order,
 * with the root complete last, simply waits). It does not read files or evaluate metrics.
 */
#include "fp-setup.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include <flagprism/json.h>
#include <flagprism/strbuf.h>

#include "core/intern-internal.h"
#include "core/json-internal.h"
#include "prof/calltree-internal.h"

#define FALLBACK FP__HATCHET_FALLBACK
#define NO_METRIC UINT32_MAX /* a scanned key without a metric of the tree */

/* Containers nested inside a skipped value deeper than this go to the DOM reader. */
#define SKIP_MAX_NESTING 64
/* Metric keys remembered by position inside a metrics object (nodes repeat their key order). */
#define KEY_CACHE 16
/* The JSON reader's default, and what 32-bit offsets into the text can address. */
#define MAX_FILE_BYTES (SIZE_MAX > 0xffffffffu ? (size_t)0x100000000ull : SIZE_MAX)

#define SEEN_FRAME 0x1u
#define SEEN_METRICS 0x2u
#define SEEN_CHILDREN 0x4u

/* A node as scanned: where its name is in the text and which values are its metrics. */
struct snode {
	uint32_t parent;
	uint32_t name_off;
	uint32_t name_len;
	uint32_t vals; /* index of its first value; they are contiguous */
	uint32_t nvals;
	uint32_t seen; /* SEEN_* */
};

#define VAL_STRING 0x80000000u

/* A metric value: key id (VAL_STRING set for strings) and the number or the string's place. */
struct sval {
	uint32_t key;
	uint32_t str_len;
	union {
		double num;
		uint64_t str_off;
	} u;
};

/* Scanned nodes and values live in fixed-size chunks that never move once written, so that a
 * builder thread can read the first ones while the scanner appends more. */
#define CHUNK_SHIFT 16
#define CHUNK ((size_t)1 << CHUNK_SHIFT)
/* Inputs from this size on are scanned on a second thread while the tree is built. */
#define THREAD_MIN_BYTES ((size_t)8 << 20)

/* What the scanner knows of a metric key: where its name is, what kinds of values it took. */
struct skey {
	uint32_t off, len;
	uint32_t stamp; /* the metrics object (scan.mstamp) that last had this key */
	uint8_t flags;  /* 1 strings seen, 2 numbers seen */
};

struct scan {
	const unsigned char *base, *p, *end;
	struct snode **nchunk; /* fixed table of chunks */
	size_t nchunk_n, nn, max_nodes;
	struct sval **vchunk;
	size_t vchunk_n, nv;
	struct fp_intern *keys; /* metric names, local ids (scanner only) */
	struct skey *kinfo;     /* by local id; fixed capacity max_keys */
	uint32_t mstamp;        /* metrics objects scanned so far */
	uint32_t max_keys;
	uint32_t kcache[KEY_CACHE]; /* local key id last seen at each position, or UINT32_MAX */
	uint32_t max_depth;
	uint64_t skipped;
	const unsigned char *dev_start, *dev_end; /* element [1], if any */
	/* Hand-over to the builder when the scanner runs on its own thread. */
	bool threaded;
	size_t first_open;   /* scanner: the first node whose frame or metrics are not read yet */
	atomic_size_t ready; /* nodes [0, ready) are complete and may be read */
	atomic_int done;     /* the scanner returned; `status` is its result */
	atomic_int stop;     /* the builder gave up: the scanner should too */
	int status;
};

static inline struct snode *node_at(const struct scan *s, size_t i)
{
	return &s->nchunk[i >> CHUNK_SHIFT][i & (CHUNK - 1)];
}

static inline struct sval *val_at(const struct scan *s, size_t i)
{
	return &s->vchunk[i >> CHUNK_SHIFT][i & (CHUNK - 1)];
}

/* Byte classes: PLAIN may stand unescaped in a string on the fast path (printable ASCII but '"'
 * and '\\'), WS is JSON whitespace. A table: the scanner asks for every byte of the file. */
#define C_PLAIN 1u
#define C_WS 2u

/* clang-format off */
static const uint8_t byte_class[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	3, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};
/* clang-format on */

static inline void skip_ws(struct scan *s)
{
	while (s->p < s->end && (byte_class[*s->p] & C_WS))
		s->p++;
}

/* Skip whitespace; true when the next byte is `c` (consumed). */
static inline bool take(struct scan *s, unsigned char c)
{
	if (FP_LIKELY(s->p < s->end && *s->p == c)) {
		s->p++;
		return true;
	}
	skip_ws(s);
	if (s->p < s->end && *s->p == c) {
		s->p++;
		return true;
	}
	return false;
}

static inline bool peek(struct scan *s, unsigned char c)
{
	skip_ws(s);
	return s->p < s->end && *s->p == c;
}

/* A string at the cursor (after whitespace): its offset and length, without the quotes. */
static inline int scan_string(struct scan *s, uint32_t *off, uint32_t *len)
{
	const unsigned char *q, *start;

	skip_ws(s);
	if (s->p >= s->end || *s->p != '"')
		return FALLBACK;
	start = q = s->p + 1;
	while (q < s->end && (byte_class[*q] & C_PLAIN))
		q++;
	if (q >= s->end || *q != '"')
		return FALLBACK; /* escape, control byte, non-ASCII or end of input */
	*off = (uint32_t)(start - s->base);
	*len = (uint32_t)(q - start);
	s->p = q + 1;
	return FP_OK;
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/*
 * A number, converted exactly as the JSON reader converts it: integer literals of up to 18
 * digits (except "-0") through int64_t, everything else with strtod in the C locale. Grammar
 * errors, overlong literals and values beyond a double's range fall back.
 */
static int scan_number(struct scan *s, double *out)
{
	const unsigned char *start = s->p, *q = s->p, *ds;
	bool neg = false, simple = true;
	uint64_t acc = 0;
	size_t ndig, len;

	if (q < s->end && *q == '-') {
		neg = true;
		q++;
	}
	if (q >= s->end || !is_digit(*q))
		return FALLBACK;
	ds = q;
	if (*q == '0') {
		q++;
	} else {
		while (q < s->end && is_digit(*q)) {
			if (q - ds < 18)
				acc = acc * 10 + (uint64_t)(*q - '0');
			q++;
		}
	}
	ndig = (size_t)(q - ds);
	if (q < s->end && *q == '.') {
		simple = false;
		q++;
		if (q >= s->end || !is_digit(*q))
			return FALLBACK;
		while (q < s->end && is_digit(*q))
			q++;
	}
	if (q < s->end && (*q == 'e' || *q == 'E')) {
		simple = false;
		q++;
		if (q < s->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= s->end || !is_digit(*q))
			return FALLBACK;
		while (q < s->end && is_digit(*q))
			q++;
	}
	len = (size_t)(q - start);
	if (len > FP_JSON_MAX_NUMBER_LEN)
		return FALLBACK;
	if (simple && ndig <= 18 && !(neg && *ds == '0')) {
		*out = (double)(neg ? -(int64_t)acc : (int64_t)acc);
	} else {
		char tmp[FP_JSON_MAX_NUMBER_LEN + 1];
		locale_t c = fp__json_c_locale();

		memcpy(tmp, start, len);
		tmp[len] = '\0';
		*out = c ? strtod_l(tmp, NULL, c) : strtod(tmp, NULL);
		if (isinf(*out))
			return FALLBACK;
	}
	s->p = q;
	return FP_OK;
}

static int scan_literal(struct scan *s, const char *word, size_t n)
{
	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
		return FALLBACK;
	s->p += n;
	return FP_OK;
}

/* Validate and skip any value; containers may nest SKIP_MAX_NESTING deep (recursion). */
static int skip_value(struct scan *s, unsigned nesting)
{
	uint32_t off, len;
	double d;
	int rc;

	skip_ws(s);
	if (s->p >= s->end)
		return FALLBACK;
	switch (*s->p) {
	case '"':
		return scan_string(s, &off, &len);
	case 't':
		return scan_literal(s, "true", 4);
	case 'f':
		return scan_literal(s, "false", 5);
	case 'n':
		return scan_literal(s, "null", 4);
	case '[':
		if (nesting >= SKIP_MAX_NESTING)
			return FALLBACK;
		s->p++;
		if (take(s, ']'))
			return FP_OK;
		do {
			rc = skip_value(s, nesting + 1);
			if (rc)
				return rc;
		} while (take(s, ','));
		return take(s, ']') ? FP_OK : FALLBACK;
	case '{':
		if (nesting >= SKIP_MAX_NESTING)
			return FALLBACK;
		s->p++;
		if (take(s, '}'))
			return FP_OK;
		do {
			rc = scan_string(s, &off, &len);
			if (!rc)
				rc = take(s, ':') ? skip_value(s, nesting + 1) : FALLBACK;
			if (rc)
				return rc;
		} while (take(s, ','));
		return take(s, '}') ? FP_OK : FALLBACK;
	default:
		return scan_number(s, &d);
	}
}

static bool key_is(const struct scan *s, uint32_t off, uint32_t len, const char *word)
{
	size_t n = strlen(word);

	return len == n && memcmp(s->base + off, word, n) == 0;
}

/* Local id of the metric key at (off, len), remembering it for position `pos`. */
static int key_id(struct scan *s, uint32_t off, uint32_t len, size_t pos, uint32_t *id)
{
	const char *k = (const char *)s->base + off;
	uint32_t c = pos < KEY_CACHE ? s->kcache[pos] : UINT32_MAX;
	int rc;

	if (c != UINT32_MAX && s->kinfo[c].len == len &&
	    memcmp(s->base + s->kinfo[c].off, k, len) == 0) {
		*id = c;
		return FP_OK;
	}
	rc = fp_intern_add(s->keys, k, len, id);
	if (rc)
		return rc;
	if (*id >= s->max_keys)
		return FALLBACK; /* over the metric limit: the DOM reader says so */
	if (s->kinfo[*id].len == 0 && s->kinfo[*id].off == 0) {
		s->kinfo[*id].off = off;
		s->kinfo[*id].len = len;
	}
	if (pos < KEY_CACHE)
		s->kcache[pos] = *id;
	return FP_OK;
}

static int push_val(struct scan *s, const struct sval *v)
{
	size_t c = s->nv >> CHUNK_SHIFT;

	if (c >= s->vchunk_n || s->nv >= UINT32_MAX)
		return FALLBACK;
	if (!s->vchunk[c]) {
		s->vchunk[c] = fp_reallocarray(NULL, CHUNK, sizeof(struct sval));
		if (!s->vchunk[c])
			return FP_ENOMEM;
	}
	*val_at(s, s->nv++) = *v;
	return FP_OK;
}

/* The "metrics" object of node `n`: numbers and strings are kept, anything else is skipped. */
static int scan_metrics(struct scan *s, struct snode *n)
{
	uint32_t off, len, id;
	size_t pos = 0;
	int rc;

	if (!take(s, '{'))
		return FALLBACK;
	n->vals = (uint32_t)s->nv;
	s->mstamp++;
	if (take(s, '}'))
		return FP_OK;
	do {
		struct sval v;

		rc = scan_string(s, &off, &len);
		if (rc || !take(s, ':'))
			return FALLBACK;
		skip_ws(s);
		if (s->p >= s->end)
			return FALLBACK;
		if (key_is(s, off, len, "_hatchet_nid") ||
		    (*s->p != '"' && *s->p != '-' && !is_digit(*s->p))) {
			rc = skip_value(s, 0);
			if (rc)
				return rc;
			s->skipped++;
			pos++;
			continue;
		}
		rc = key_id(s, off, len, pos++, &id);
		if (rc)
			return rc;
		if (s->kinfo[id].stamp == s->mstamp)
			return FALLBACK; /* a duplicate key: the DOM reader keeps the last value */
		s->kinfo[id].stamp = s->mstamp;
		v.key = id;
		v.str_len = 0;
		if (*s->p == '"') {
			uint32_t soff = 0;

			rc = scan_string(s, &soff, &v.str_len);
			v.key |= VAL_STRING;
			v.u.str_off = soff;
			s->kinfo[id].flags |= 1;
		} else {
			rc = scan_number(s, &v.u.num);
			s->kinfo[id].flags |= 2;
		}
		if (!rc)
			rc = push_val(s, &v);
		if (rc)
			return rc;
	} while (take(s, ','));
	if (!take(s, '}'))
		return FALLBACK;
	n->nvals = (uint32_t)(s->nv - n->vals);
	return FP_OK;
}

/* The "frame" object: a non-empty object whose one "name" is a string. */
static int scan_frame(struct scan *s, struct snode *n)
{
	uint32_t off, len;
	bool named = false;
	int rc;

	if (!take(s, '{') || peek(s, '}'))
		return FALLBACK;
	do {
		rc = scan_string(s, &off, &len);
		if (rc || !take(s, ':'))
			return FALLBACK;
		if (key_is(s, off, len, "name")) {
			if (named)
				return FALLBACK; /* duplicate: the DOM reader decides which wins */
			named = true;
			rc = scan_string(s, &n->name_off, &n->name_len);
		} else {
			rc = skip_value(s, 0);
		}
		if (rc)
			return rc;
	} while (take(s, ','));
	return take(s, '}') && named ? FP_OK : FALLBACK;
}

static int new_node(struct scan *s, uint32_t parent, uint32_t *id)
{
	size_t c = s->nn >> CHUNK_SHIFT;

	if (s->nn >= s->max_nodes || c >= s->nchunk_n)
		return FALLBACK; /* the DOM reader reports the limit with its position */
	if (s->threaded && atomic_load_explicit(&s->stop, memory_order_relaxed))
		return FALLBACK;
	if (!s->nchunk[c]) {
		s->nchunk[c] = fp_reallocarray(NULL, CHUNK, sizeof(struct snode));
		if (!s->nchunk[c])
			return FP_ENOMEM;
	}
	memset(node_at(s, s->nn), 0, sizeof(struct snode));
	node_at(s, s->nn)->parent = parent;
	*id = (uint32_t)s->nn++;
	return FP_OK;
}

/* A node got its frame or metrics: hand over every leading node that has both. */
static void publish(struct scan *s)
{
	size_t f = s->first_open;

	while (f < s->nn &&
	       (node_at(s, f)->seen & (SEEN_FRAME | SEEN_METRICS)) == (SEEN_FRAME | SEEN_METRICS))
		f++;
	if (f != s->first_open) {
		s->first_open = f;
		if (s->threaded)
			atomic_store_explicit(&s->ready, f, memory_order_release);
	}
}

/*
 * The root node and everything below it, iteratively: `stack` holds the open nodes. A node is
 * entered at its '{', children are entered from inside its "children" array, and when a node's
 * '}' closes, scanning resumes inside its parent's array (or ends at the root).
 */
static int scan_tree(struct scan *s)
{
	uint32_t *stack = NULL, id, off, len;
	size_t depth = 0, alloc = 64;
	bool resume = false;
	int rc = FP_OK;

	stack = fp_reallocarray(NULL, alloc, sizeof(*stack));
	if (!stack)
		return FP_ENOMEM;
	if (!take(s, '{')) {
		rc = FALLBACK;
		goto out;
	}
	rc = new_node(s, FP_CALLTREE_NONE, &id);
	if (rc)
		goto out;
	stack[depth++] = id;
	for (;;) {
		struct snode *n = node_at(s, stack[depth - 1]);
		bool entered = false;

		/* Members of the open node, until it closes or a child opens. After a comma
		 * (`resume`) a member must follow: "[...],}" is not JSON. */
		if (resume || !peek(s, '}')) {
			resume = false;
			for (;;) {
				rc = scan_string(s, &off, &len);
				if (rc || !take(s, ':')) {
					rc = FALLBACK;
					goto out;
				}
				if (key_is(s, off, len, "frame")) {
					rc = n->seen & SEEN_FRAME ? FALLBACK : scan_frame(s, n);
					if (!rc) {
						n->seen |= SEEN_FRAME;
						publish(s);
					}
				} else if (key_is(s, off, len, "metrics")) {
					rc = n->seen & SEEN_METRICS ? FALLBACK : scan_metrics(s, n);
					if (!rc) {
						n->seen |= SEEN_METRICS;
						publish(s);
					}
				} else if (key_is(s, off, len, "children")) {
					if ((n->seen & SEEN_CHILDREN) || !take(s, '[')) {
						rc = FALLBACK;
						goto out;
					}
					n->seen |= SEEN_CHILDREN;
					if (!take(s, ']')) {
						entered = true;
						break;
					}
				} else {
					rc = skip_value(s, 0);
				}
				if (rc)
					goto out;
				if (!take(s, ','))
					break;
			}
		}
		if (entered) {
			/* Open the first child (the array's '[' is consumed). */
			if (depth > s->max_depth) {
				rc = FALLBACK;
				goto out;
			}
			if (!take(s, '{')) {
				rc = FALLBACK;
				goto out;
			}
			rc = new_node(s, stack[depth - 1], &id);
			if (rc)
				goto out;
			if (depth == alloc) {
				uint32_t *ns = fp_reallocarray(stack, alloc * 2, sizeof(*ns));

				if (!ns) {
					rc = FP_ENOMEM;
					goto out;
				}
				stack = ns;
				alloc *= 2;
			}
			stack[depth++] = id;
			continue;
		}
		/* The open node closes; the DOM reader reports what it lacks. */
		if (!take(s, '}') ||
		    (n->seen & (SEEN_FRAME | SEEN_METRICS)) != (SEEN_FRAME | SEEN_METRICS)) {
			rc = FALLBACK;
			goto out;
		}
		/* Continue in the parent: the next sibling, or the end of its children. */
		for (;;) {
			depth--;
			if (depth == 0)
				goto out;
			if (take(s, ',')) {
				if (!take(s, '{')) {
					rc = FALLBACK;
					goto out;
				}
				rc = new_node(s, stack[depth - 1], &id);
				if (rc)
					goto out;
				stack[depth++] = id;
				break;
			}
			if (!take(s, ']')) {
				rc = FALLBACK;
				goto out;
			}
			/* The parent's "children" member ended: its other members follow. */
			n = node_at(s, stack[depth - 1]);
			if (take(s, ',')) {
				resume = true;
				break; /* back to the member loop of the parent */
			}
			if (!take(s, '}') || (n->seen & (SEEN_FRAME | SEEN_METRICS)) !=
						     (SEEN_FRAME | SEEN_METRICS)) {
				rc = FALLBACK;
				goto out;
			}
		}
	}
out:
	fp_free(stack);
	return rc;
}

/* Top level: [root] or [root, {device table}], nothing after. */
static int scan_doc(struct scan *s)
{
	int rc;

	if (!take(s, '['))
		return FALLBACK;
	rc = scan_tree(s);
	if (rc)
		return rc;
	if (take(s, ',')) {
		if (!peek(s, '{'))
			return FALLBACK;
		s->dev_start = s->p;
		rc = skip_value(s, 0);
		if (rc)
			return rc;
		s->dev_end = s->p;
	}
	if (!take(s, ']'))
		return FALLBACK;
	skip_ws(s);
	return s->p == s->end ? FP_OK : FALLBACK;
}

/* The device table (element [1]), through the DOM reader: it is small. */
static int build_devices(struct scan *s, struct fp_calltree *t, struct fp_hatchet_info *info)
{
	struct fp_json_doc *doc = NULL;
	const struct fp_json_value *dev;
	size_t i, j, k;
	int rc;

	rc = fp_json_parse((const char *)s->dev_start, (size_t)(s->dev_end - s->dev_start), NULL,
			   &doc, NULL);
	if (rc)
		return rc == FP_ENOMEM ? rc : FALLBACK;
	dev = fp_json_root(doc);
	info->has_device_info = true;
	if (fp_json_get(dev, "frame")) {
		rc = FALLBACK; /* a second root node: an error the DOM reader words */
		goto out;
	}
	for (i = 0; i < fp_json_len(dev) && !rc; i++) {
		const char *type;
		const struct fp_json_value *byindex = fp_json_member(dev, i, &type, NULL);

		if (fp_json_type(byindex) != FP_JSON_OBJECT) {
			rc = FALLBACK;
			break;
		}
		for (j = 0; j < fp_json_len(byindex) && !rc; j++) {
			const char *index;
			const struct fp_json_value *attrs =
				fp_json_member(byindex, j, &index, NULL);

			if (fp_json_type(attrs) != FP_JSON_OBJECT) {
				rc = FALLBACK;
				break;
			}
			for (k = 0; k < fp_json_len(attrs) && !rc; k++) {
				const char *key;
				const struct fp_json_value *v =
					fp_json_member(attrs, k, &key, NULL);
				double d;

				if (fp_json_type(v) == FP_JSON_STRING)
					rc = fp_calltree_device_set_str(t, type, index, key,
									fp_json_string(v, NULL));
				else if (fp_json_number(v, &d))
					rc = fp_calltree_device_set(t, type, index, key, d);
				else
					info->skipped_metrics++;
			}
		}
	}
	if (rc && rc != FP_ENOMEM)
		rc = FALLBACK;
out:
	fp_json_doc_free(doc);
	return rc;
}

/* Tree status -> ours: limits and the like are worded by the DOM reader. */
static int tree_rc(int rc)
{
	return rc == FP_OK || rc == FP_ENOMEM ? rc : FALLBACK;
}

/* A key's kind by the DOM reader's rule from what its values were (1 strings, 2 numbers). */
static enum fp_metric_kind key_kind(const struct scan *s, uint32_t k, unsigned flags)
{
	enum fp_metric_kind kd = fp_calltree_metric_kind_from_name(
		(const char *)s->base + s->kinfo[k].off, s->kinfo[k].len);

	return flags == 1 && kd == FP_METRIC_INCLUSIVE ? FP_METRIC_PROPERTY : kd;
}

/* The tree being built from the scan. */
struct build {
	struct fp_calltree *t;
	uint32_t *mid; /* by local key id: metric id, or NO_METRIC */
	uint8_t *kind; /* by local key id: the kind it was registered with */
	uint32_t *map; /* by scanned node: tree node */
	size_t map_n;
	bool guessed; /* kinds were registered before the scan ended (see key_kind()) */
};

/* Nodes the builder may read: all of them, or with a scanner thread those it handed over. */
static size_t wait_for(struct scan *s, size_t i)
{
	struct timespec nap = {0, 50000};
	unsigned spins = 0;
	size_t r;

	if (!s->threaded)
		return s->nn;
	for (;;) {
		r = atomic_load_explicit(&s->ready, memory_order_acquire);
		if (r > i)
			return r;
		if (atomic_load_explicit(&s->done, memory_order_acquire))
			return atomic_load_explicit(&s->ready, memory_order_acquire);
		/* The scanner is usually ahead; when it is not (Proton's files hand the root over
		 * last), stop burning the core it may need. */
		if (spins++ < 64)
			sched_yield();
		else
			nanosleep(&nap, NULL);
	}
}

/*
 * Node `i` into the tree, in the DOM reader's order: metrics registered on first appearance
 * (its walk is pre-order too), the node, then its values in member order. Without a scanner
 * thread the kinds are final; with one, a name's kind is guessed from its first value and
 * checked when the scan is over.
 */
static int build_node(struct scan *s, struct build *b, size_t i, struct fp_hatchet_info *info)
{
	const struct snode *n = node_at(s, i);
	const char *name = (const char *)s->base + n->name_off;
	size_t j;
	int rc;

	for (j = n->vals; j < (size_t)n->vals + n->nvals; j++) {
		const struct sval *v = val_at(s, j);
		uint32_t k = v->key & ~VAL_STRING;
		enum fp_metric_kind kd;

		if (b->mid[k] != NO_METRIC)
			continue;
		kd = key_kind(s, k,
			      b->guessed ? (v->key & VAL_STRING ? 1u : 2u) : s->kinfo[k].flags);
		b->kind[k] = (uint8_t)kd;
		rc = tree_rc(fp_calltree_metric(b->t, (const char *)s->base + s->kinfo[k].off,
						s->kinfo[k].len, kd, &b->mid[k]));
		if (rc)
			return rc;
	}
	if (i >= b->map_n) {
		size_t na = b->map_n ? b->map_n * 2 : 4096;
		uint32_t *nm = fp_reallocarray(b->map, na, sizeof(*nm));

		if (!nm)
			return FP_ENOMEM;
		b->map = nm;
		b->map_n = na;
	}
	if (i == 0) {
		rc = fp_calltree_set_root_name(b->t, name, n->name_len);
		b->map[0] = FP_CALLTREE_ROOT;
	} else {
		size_t before = fp_calltree_node_count(b->t);
		uint32_t frame;

		rc = fp_calltree_intern(b->t, name, n->name_len, &frame);
		if (!rc)
			rc = fp_calltree_child(b->t, b->map[n->parent], frame, &b->map[i]);
		if (!rc && fp_calltree_node_count(b->t) == before)
			info->merged_siblings++;
	}
	rc = tree_rc(rc);
	if (rc)
		return rc;
	info->nodes++;
	for (j = n->vals; j < (size_t)n->vals + n->nvals; j++) {
		const struct sval *v = val_at(s, j);
		uint32_t k = v->key & ~VAL_STRING;

		if (!(v->key & VAL_STRING))
			rc = fp_calltree_add_metric(b->t, b->map[i], b->mid[k], v->u.num);
		else if (b->kind[k] == FP_METRIC_PROPERTY)
			rc = fp_calltree_set_string(b->t, b->map[i], b->mid[k],
						    (const char *)s->base + v->u.str_off,
						    v->str_len);
		else
			info->skipped_metrics++; /* a string where numbers are summed */
		rc = tree_rc(rc);
		if (rc)
			return rc;
	}
	return FP_OK;
}

static void build_release(struct build *b)
{
	fp_calltree_free(b->t);
	fp_free(b->map);
	fp_free(b->kind);
	fp_free(b->mid);
	memset(b, 0, sizeof(*b));
}

static int build_init(struct build *b, const struct scan *s, const struct fp_calltree_limits *lim,
		      bool guessed)
{
	uint32_t k;

	memset(b, 0, sizeof(*b));
	b->guessed = guessed;
	b->t = fp_calltree_new(lim);
	b->mid = fp_reallocarray(NULL, s->max_keys, sizeof(*b->mid));
	b->kind = fp_calloc(s->max_keys, 1);
	if (!b->t || !b->mid || !b->kind)
		return FP_ENOMEM;
	for (k = 0; k < s->max_keys; k++)
		b->mid[k] = NO_METRIC;
	return FP_OK;
}

/* Build every node the scanner hands over, until it is done or fails. */
static int build_nodes(struct scan *s, struct build *b, struct fp_hatchet_info *info)
{
	size_t i = 0, avail = 0;
	int rc;

	for (;; i++) {
		if (i == avail) {
			avail = wait_for(s, i);
			if (i >= avail)
				return FP_OK;
		}
		rc = build_node(s, b, i, info);
		if (rc)
			return rc;
	}
}

/* Whether the kinds guessed while scanning are the ones the whole file implies. */
static bool guesses_hold(const struct scan *s, const struct build *b)
{
	uint32_t k, n = fp_intern_count(s->keys);

	for (k = 0; k < n && k < s->max_keys; k++)
		if (b->mid[k] != NO_METRIC && b->kind[k] != key_kind(s, k, s->kinfo[k].flags))
			return false;
	return true;
}

static void *scan_main(void *arg)
{
	struct scan *s = arg;

	s->status = scan_doc(s);
	atomic_store_explicit(&s->done, 1, memory_order_release);
	return NULL;
}

int fp__hatchet_scan(const char *text, size_t len, const struct fp_calltree_limits *lim,
		     unsigned flags, struct fp_calltree **out, struct fp_hatchet_info *info)
{
	struct build b = {0};
	pthread_t th;
	struct scan s;
	size_t i, max_vals;
	int rc;

	if (len >= MAX_FILE_BYTES || len == 0)
		return FALLBACK;
	memset(&s, 0, sizeof(s));
	s.base = s.p = (const unsigned char *)text;
	s.end = s.base + len;
	s.max_nodes = lim && lim->max_nodes ? lim->max_nodes : FP_CALLTREE_DEFAULT_MAX_NODES;
	s.max_depth = lim && lim->max_depth ? lim->max_depth : FP_CALLTREE_DEFAULT_MAX_DEPTH;
	s.max_keys = lim && lim->max_metrics ? lim->max_metrics : FP_CALLTREE_DEFAULT_MAX_METRICS;
	/* Distinct keys cannot outnumber values: no need for a table larger than the text allows. */
	s.max_keys = (uint32_t)FP_MIN((size_t)s.max_keys, len / 4 + 1);
	/* A node takes at least 34 bytes of text ({"frame":{"name":""},"metrics":{}}), a value 4
	 * ("":0): the chunk tables are sized once for the most the text can hold. */
	s.nchunk_n = (FP_MIN(s.max_nodes, len / 34 + 1) >> CHUNK_SHIFT) + 1;
	max_vals = len / 4 + 1;
	s.vchunk_n = (max_vals >> CHUNK_SHIFT) + 1;
	for (i = 0; i < KEY_CACHE; i++)
		s.kcache[i] = UINT32_MAX;
	atomic_init(&s.ready, 0);
	atomic_init(&s.done, 0);
	atomic_init(&s.stop, 0);
	s.keys = fp_intern_new();
	s.nchunk = fp_calloc(s.nchunk_n, sizeof(*s.nchunk));
	s.vchunk = fp_calloc(s.vchunk_n, sizeof(*s.vchunk));
	s.kinfo = fp_calloc(s.max_keys ? s.max_keys : 1, sizeof(*s.kinfo));
	if (!s.keys || !s.nchunk || !s.vchunk || !s.kinfo) {
		rc = FP_ENOMEM;
		goto out;
	}
	memset(info, 0, sizeof(*info));
	s.threaded = !(flags & FP_HATCHET_NO_THREAD) &&
		     (len >= THREAD_MIN_BYTES || (flags & FP_HATCHET_THREADED));
	rc = build_init(&b, &s, lim, s.threaded);
	if (rc)
		goto out;
	if (s.threaded && pthread_create(&th, NULL, scan_main, &s) != 0)
		s.threaded = false;
	if (!s.threaded) {
		/* One thread: scan everything, then build with the final kinds. */
		b.guessed = false;
		rc = scan_doc(&s);
		if (!rc)
			rc = build_nodes(&s, &b, info);
	} else {
		rc = build_nodes(&s, &b, info);
		if (rc)
			atomic_store_explicit(&s.stop, 1, memory_order_relaxed);
		pthread_join(th, NULL);
		if (!rc)
			rc = s.status;
		if (!rc && !guesses_hold(&s, &b)) {
			/* A name took strings first and numbers later (or the reverse): build again
			 * with the kinds the whole file implies. */
			build_release(&b);
			memset(info, 0, sizeof(*info));
			s.threaded = false;
			rc = build_init(&b, &s, lim, false);
			if (!rc)
				rc = build_nodes(&s, &b, info);
		}
	}
	info->skipped_metrics += s.skipped;
	if (!rc && s.dev_start)
		rc = build_devices(&s, b.t, info);
	if (!rc)
		rc = tree_rc(fp_calltree_finalize(b.t));
	if (!rc) {
		*out = b.t;
		b.t = NULL;
	}
out:
	build_release(&b);
	for (i = 0; s.nchunk && i < s.nchunk_n; i++)
		fp_free(s.nchunk[i]);
	for (i = 0; s.vchunk && i < s.vchunk_n; i++)
		fp_free(s.vchunk[i]);
	fp_free(s.nchunk);
	fp_free(s.vchunk);
	fp_free(s.kinfo);
	fp_intern_free(s.keys);
	return rc;
}
