/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer harness for the path CUPTI kernel records take through FlagPrism: FlagPrism's own
 * reader of activity buffers (fp_cupti_read_records(), the bounds-checked walker and decoder
 * the CUPTI backend rests on; not CUPTI's iterator), then the profiling session that files the
 * decoded kernels (correlation with registered launches, launch contexts of scopes and states,
 * graph-node records, clamped times, caps) and the writers of its files.
 *
 * Two modes, by the top bit of byte 0; its low bits pick the CUDA version whose record layout
 * is used (index 0-4: 11.8, 12.0, 12.8, 13.0, 13.1, taken modulo 5).
 *
 * Raw mode (byte 0 = 0x80 | layout): the rest of the input is an activity buffer exactly as a
 * CUPTI of that version wrote it: a capture file of the backend (fp_cupti_capture(), turned into
 * a seed by scripts/fuzz-seed-cupti.sh), so real records from a GPU seed the corpus and the
 * mutator starts from them. It is walked and filed into a session (shadow context, trace data)
 * with the checks below; the walk stops at the first record the reader refuses.
 *
 * Op-program mode (top bit clear): random bytes almost never form a record of a known kind and
 * size, so a raw-bytes target covers the walker's few branches at once and never more; this mode
 * takes a small program instead. Byte 1 picks the session's context and data options; then each
 * op byte is followed by its operands:
 *   0, 1  a kernel record (kind KERNEL or CONCURRENT_KERNEL) built at the real CUPTI offsets
 *         (src/backend/cuda/cupti-abi.h, checked against CUPTI's headers by unit.cupti_abi_headers)
 *         from 17 operand bytes: start offset (3), duration (2), signed grid and block (2 x 3),
 *         correlation, graph node, device, stream, registers, kernel name (1 each);
 *   2     a record of another kind (not read: the walk reports it and resumes after it, as the
 *         backend does with CUPTI's iterator);
 *   3     a kernel record (17 bytes) cut short by one more operand byte, then a walk;
 *   4     raw operand bytes (up to 16) appended to the buffer;
 *   5     a launch registered for a correlation id (its kernel record matches it): correlation,
 *         kernel name, grid (1 each);
 *   6     a scope entered (operand bit 2 set) or exited; 7 a state entered or exited;
 * ops 5-7 first walk the records built so far (so contexts change between buffers).
 *
 * In both modes every walk must end at the buffer's end or fail with FP_EFORMAT at an offset
 * inside it, agree on an aligned and a misaligned copy and stop at a callback's error; every
 * file the session writes must parse back as JSON. A violated check aborts.
 */
#define _GNU_SOURCE 1
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <flagprism/cupti.h>
#include <flagprism/json.h>
#include <flagprism/prof.h>
#include <flagprism/status.h>
#include <flagprism/strbuf.h>

#include "backend/cuda/cupti-abi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz-cupti-records: check failed: %s (line %d)\n", #cond, \
				__LINE__);                                                         \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#define MAX_BUFFER 8192

/* Record sizes by layout: CUpti_ActivityKernel8 (11.8), 9 (12.x), 10 (13.x). */
static const struct {
	uint32_t api;
	size_t size;
} versions[] = {{18, 200},
		{19, FP__CUPTI_K_SIZE_V9},
		{26, FP__CUPTI_K_SIZE_V9},
		{130000, FP__CUPTI_K_SIZE_V10},
		{130001, FP__CUPTI_K_SIZE_V10}};

struct in {
	const uint8_t *p;
	size_t n;
};

/* The next `bytes` (at most 4) input bytes, little-endian; 0 for those past the end. */
static uint32_t take(struct in *in, unsigned bytes)
{
	uint32_t v = 0;
	unsigned i;

	for (i = 0; i < bytes; i++) {
		v |= (uint32_t)(in->n ? *in->p : 0) << (8 * i);
		if (in->n) {
			in->p++;
			in->n--;
		}
	}
	return v;
}

struct run {
	uint32_t api;
	size_t rec_size;
	int sid;
	uint64_t base_ns;
	uint8_t buf[MAX_BUFFER + 256];
	size_t len;
	size_t bounds[MAX_BUFFER / 8]; /* where each record built starts */
	size_t nbounds;
	uint32_t names[16];
	size_t kernels, stop_at;
};

static void put(uint8_t *rec, size_t off, const void *v, size_t n)
{
	memcpy(rec + off, v, n);
}

static void add_kernel(struct run *r, struct in *in, uint32_t kind)
{
	uint8_t *rec;
	uint32_t u32;
	uint64_t u64;
	int32_t s32;
	int i;

	if (r->len + r->rec_size > MAX_BUFFER) {
		for (i = 0; i < 17; i++)
			take(in, 1); /* the operands of a record that does not fit */
		return;
	}
	rec = r->buf + r->len;
	memset(rec, 0, r->rec_size);
	put(rec, FP__CUPTI_K_KIND, &kind, 4);
	u64 = r->base_ns + take(in, 3) * 1000ull;
	put(rec, FP__CUPTI_K_START, &u64, 8);
	u64 += take(in, 2);
	/* a zero start offset and duration: a record without timing (both times 0) */
	if (u64 == r->base_ns) {
		memset(rec + FP__CUPTI_K_START, 0, 8);
		u64 = 0;
	}
	put(rec, FP__CUPTI_K_END, &u64, 8);
	for (i = 0; i < 3; i++) {
		s32 = (int8_t)take(in, 1); /* negative and zero dimensions too */
		put(rec, FP__CUPTI_K_GRID_X + 4 * (size_t)i, &s32, 4);
		s32 = (int32_t)take(in, 1);
		put(rec, FP__CUPTI_K_BLOCK_X + 4 * (size_t)i, &s32, 4);
	}
	u32 = take(in, 1);
	put(rec, FP__CUPTI_K_CORRELATION, &u32, 4);
	u64 = take(in, 1) & 0x3;
	put(rec, FP__CUPTI_K_GRAPH_NODE_ID, &u64, 8);
	u32 = take(in, 1) & 0x3;
	put(rec, FP__CUPTI_K_DEVICE_ID, &u32, 4);
	u32 = take(in, 1);
	put(rec, FP__CUPTI_K_STREAM_ID, &u32, 4);
	rec[FP__CUPTI_K_REGISTERS] = (uint8_t)take(in, 1);
	u64 = 0x1000 + (take(in, 1) & 0xf); /* a name "pointer": only its identity is used */
	put(rec, FP__CUPTI_K_NAME, &u64, 8);
	r->bounds[r->nbounds++] = r->len;
	r->len += r->rec_size;
}

static void add_other(struct run *r, struct in *in)
{
	uint32_t kind = 11 + take(in, 1); /* never KERNEL (3) or CONCURRENT_KERNEL (10) */

	if (r->len + r->rec_size > MAX_BUFFER)
		return;
	memset(r->buf + r->len, 0, r->rec_size);
	memcpy(r->buf + r->len, &kind, 4);
	r->bounds[r->nbounds++] = r->len;
	r->len += r->rec_size;
}

static int on_kernel(void *arg, const struct fp_cupti_kernel_record *k)
{
	struct run *r = arg;
	struct fp_sink_event ev;
	int i;

	CHECK(k->kind == 3 || k->kind == 10);
	if (r->stop_at && r->kernels + 1 == r->stop_at)
		return FP_ELIMIT;
	r->kernels++;
	if (r->sid < 0)
		return FP_OK;
	memset(&ev, 0, sizeof(ev));
	ev.kind = FP_SINK_EVENT_KERNEL;
	ev.device_id = k->device_id;
	ev.device_type = FP_PROF_NO_NAME;
	ev.kernel = r->names[k->name & 0xf];
	ev.callpath = FP_PROF_NO_CALLPATH;
	for (i = 0; i < 3; i++)
		ev.grid[i] = k->grid[i] > 0 ? (uint32_t)k->grid[i] : 0;
	ev.begin_ns = k->start;
	ev.end_ns = k->end >= k->start ? k->end : k->start;
	ev.stream = k->stream_id;
	ev.correlation = k->correlation;
	/* A graph node's record comes without a launch of its own: filed by launch context. */
	if (k->graph_node_id)
		fp_prof_session_kernel_lctx(fp_prof_session_get(r->sid), &ev, FP_SINK_LCTX_NONE,
					    fp_prof_launch_context());
	else
		fp_prof_kernel(r->sid, &ev);
	return FP_OK;
}

static int walk_once(struct run *r, const uint8_t *buf, size_t n, size_t *consumed)
{
	struct fp_diag d;
	int rc = fp_cupti_read_records(buf, n, r->api, on_kernel, r, consumed, &d);

	CHECK(*consumed <= n);
	CHECK(rc == FP_OK || rc == FP_EFORMAT || rc == FP_ELIMIT);
	if (rc == FP_OK)
		CHECK(*consumed == n);
	if (rc == FP_EFORMAT) {
		CHECK(d.status == FP_EFORMAT && d.offset == *consumed && d.offset < n);
		CHECK(d.msg[0] != '\0');
	}
	return rc;
}

/* Kernels decoded by one walk of buf[0, n) without delivering them; *rc its status. */
static size_t count(struct run *r, const uint8_t *buf, size_t n, size_t stop_at, int *rc,
		    size_t *consumed)
{
	int sid = r->sid;
	size_t k;

	r->sid = -1;
	r->kernels = 0;
	r->stop_at = stop_at;
	*rc = walk_once(r, buf, n, consumed);
	k = r->kernels;
	r->sid = sid;
	r->stop_at = 0;
	return k;
}

/*
 * Walk buf[0, n) (aligned) without delivering: the same on a misaligned copy, and stopped by a
 * callback's error at the second kernel.
 */
static void check_walks(struct run *r, const uint8_t *buf, size_t n)
{
	size_t ka, kb, kc, ca, cb, cc;
	int ra, rb, rc;
	uint8_t *odd;

	odd = malloc(n + 1);
	CHECK(odd != NULL);
	memcpy(odd + 1, buf, n);
	ka = count(r, buf, n, 0, &ra, &ca);
	kb = count(r, odd + 1, n, 0, &rb, &cb);
	CHECK(ka == kb && ra == rb && ca == cb);
	kc = count(r, buf, n, 2, &rc, &cc);
	if (ka >= 2)
		CHECK(rc == FP_ELIMIT && kc == 1 && cc <= ca);
	else
		CHECK(rc == ra && kc == ka && cc == ca);
	free(odd);
}

/*
 * Walk what was built: check_walks(), then delivering, resuming after each record the reader
 * refuses (as the backend does with CUPTI's iterator).
 */
static void flush(struct run *r)
{
	size_t at = 0, b = 0, cc;

	if (!r->len)
		return;
	check_walks(r, r->buf, r->len);
	while (at < r->len) {
		if (walk_once(r, r->buf + at, r->len - at, &cc) == FP_OK)
			break;
		at += cc;
		while (b < r->nbounds && r->bounds[b] <= at)
			b++;
		at = b < r->nbounds ? r->bounds[b] : r->len;
	}
	r->len = 0;
	r->nbounds = 0;
}

/* Every writer's document must parse back. */
static void check_writers(int sid)
{
	struct fp_prof_session *s = fp_prof_session_get(sid);
	const struct fp_writer_ops *wr;
	size_t i;

	for (i = 0; (wr = fp_prof_writer_at(i)) != NULL; i++) {
		struct fp_strbuf sb;
		struct fp_json_doc *doc = NULL;
		struct fp_jsonw *w;
		int rc;

		fp_strbuf_init(&sb, 0);
		w = fp_jsonw_new_strbuf(&sb, 0);
		CHECK(w != NULL);
		rc = wr->write(s, w);
		if (!rc)
			rc = fp_jsonw_finish(w);
		fp_jsonw_free(w);
		CHECK(rc == FP_OK || rc == FP_ENOMEM || rc == FP_ELIMIT);
		if (rc == FP_OK) {
			CHECK(fp_json_parse(sb.buf, sb.len, NULL, &doc, NULL) == FP_OK);
			fp_json_doc_free(doc);
		}
		fp_strbuf_release(&sb);
	}
}

static char dir[64];

/* The session's files go to a directory of this process, removed at exit. */
static void remove_dir(void)
{
	static const char *const files[] = {"p.hatchet", "p.meta.json", "p.chrome_trace.json"};
	char path[128];
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

/* The session the decoded kernels are filed into, options from `opts` (op-program byte 1). */
static void session_start(struct run *r, unsigned opts)
{
	struct fp_prof_options o;
	char name[128];
	size_t i;

	memset(&o, 0, sizeof(o));
	snprintf(name, sizeof(name), "%s/p", dir);
	o.name = name;
	o.backend = "null";
	o.context = opts & 1 ? FP_PROF_CONTEXT_PYTHON : FP_PROF_CONTEXT_SHADOW;
	o.data = opts & 2 ? FP_PROF_DATA_TRACE : FP_PROF_DATA_TREE;
	o.max_trace_events = 64;
	o.max_pending_launches = 16;
	o.max_scope_depth = 8;
	o.tree.max_nodes = 256;
	CHECK(fp_prof_start(&o, &r->sid, NULL) == FP_OK);
	r->base_ns = opts & 4 ? 0 : fp_prof_clock_ns(); /* 0: times before the session (clamped) */
	for (i = 0; i < 16; i++) {
		char k[16];

		snprintf(k, sizeof(k), "kernel_%zu", i);
		CHECK(fp_prof_name_intern(k, strlen(k), &r->names[i]) == FP_OK);
	}
}

/*
 * Raw mode: buf[0, n) is an activity buffer as CUPTI wrote it. Walked from an aligned copy
 * (check_walks()), then once more delivering its kernels (a real name "pointer" picks one of
 * the 16 names by its low bits), stopping at the first record the reader refuses: without
 * knowing where the next record starts there is nothing to resume at.
 */
static void run_raw(struct run *r, const uint8_t *buf, size_t n)
{
	uint8_t *copy;
	size_t cc;

	session_start(r, 2); /* shadow context, trace data: every writer has events to write */
	if (n) {
		copy = malloc(n);
		CHECK(copy != NULL);
		memcpy(copy, buf, n);
		check_walks(r, copy, n);
		walk_once(r, copy, n, &cc);
		free(copy);
	}
	check_writers(r->sid);
	CHECK(fp_prof_finalize(r->sid, "hatchet", NULL) == FP_OK);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const scopes[] = {"a", "b", "c\"<script>", "d/../e"};
	static struct run r;
	struct in in = {data, size};
	int depth = 0, state = 0;
	size_t i;

	if (size < 2)
		return 0;
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz-cupti-records-XXXXXX");
		CHECK(mkdtemp(dir) != NULL);
		atexit(remove_dir);
	}
	memset(&r, 0, sizeof(r));
	i = (take(&in, 1) & 0x7f) % (sizeof(versions) / sizeof(versions[0]));
	r.api = versions[i].api;
	r.rec_size = versions[i].size;
	if (data[0] & 0x80) {
		run_raw(&r, in.p, in.n);
		return 0;
	}
	session_start(&r, take(&in, 1));
	while (in.n) {
		unsigned op = take(&in, 1) % 8, n;

		switch (op) {
		case 0:
		case 1:
			add_kernel(&r, &in, op ? 10 : 3);
			break;
		case 2:
			add_other(&r, &in);
			break;
		case 3:
			add_kernel(&r, &in, 3);
			if (r.nbounds)
				r.len = r.bounds[--r.nbounds] + take(&in, 1) % r.rec_size;
			flush(&r);
			break;
		case 4:
			for (n = take(&in, 1) % 16; n && r.len < MAX_BUFFER; n--)
				r.buf[r.len++] = (uint8_t)take(&in, 1);
			break;
		case 5: {
			struct fp_sink_launch l;
			uint32_t corr = take(&in, 1);

			flush(&r);
			memset(&l, 0, sizeof(l));
			l.kernel = r.names[take(&in, 1) & 0xf];
			l.callpath = FP_PROF_NO_CALLPATH;
			l.grid[0] = take(&in, 1);
			l.grid[1] = l.grid[2] = 1;
			if (corr)
				CHECK(fp_prof_launch_register(r.sid, corr, &l) == FP_OK);
			break;
		}
		case 6: {
			unsigned v = take(&in, 1);
			const char *sc = scopes[v % 4];

			flush(&r);
			if (depth < 6 && (v & 4)) {
				if (fp_prof_scope_enter(r.sid, sc, strlen(sc), 0) == FP_OK)
					depth++;
			} else if (depth) {
				CHECK(fp_prof_scope_exit(r.sid, NULL, 0, NULL) == FP_OK);
				depth--;
			}
			break;
		}
		default: {
			const char *st = scopes[take(&in, 1) % 4];

			flush(&r);
			if (state)
				CHECK(fp_prof_state_exit(r.sid) == FP_OK);
			else
				CHECK(fp_prof_state_enter(r.sid, st, strlen(st)) == FP_OK);
			state = !state;
			break;
		}
		}
	}
	flush(&r);
	check_writers(r.sid);
	while (depth--)
		CHECK(fp_prof_scope_exit(r.sid, NULL, 0, NULL) == FP_OK);
	if (state)
		CHECK(fp_prof_state_exit(r.sid) == FP_OK);
	CHECK(fp_prof_finalize(r.sid, "hatchet", NULL) == FP_OK);
	return 0;
}
