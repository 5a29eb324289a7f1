/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Merging the Chrome traces of a job's ranks into one (fp_ranks_merge_traces()): one process per
 * rank holding every thread and stream track of that rank, on one time line. Each input is read
 * twice, one at a time, so that memory holds one rank's trace, not the job's: first for who
 * wrote it and its clock (otherData), then, once every clock is known, for its events, which
 * are copied with their process, thread and start time replaced. The clocks: every rank of one
 * host shares CLOCK_MONOTONIC (exact); across hosts the instant each rank left the barrier the
 * Python layer inserted after torch.distributed started, with the longest barrier as the error
 * bound; otherwise the wall clock. Not here: writing a single session's trace (chrome-trace.c).
 */
#include "fp-setup.h"

#include <flagprism/json.h>
#include <flagprism/ranks.h>
#include <flagprism/version.h>

#include "core/core-internal.h"

/* A trace beyond this is not one a session writes (4 Mi records is ~1.5 GB). */
#define MAX_TRACE_BYTES ((size_t)4 << 30)
/* Threads (tracks) of one rank; more is not a trace of ours. */
#define MAX_THREADS 65536
#define NAME_CAP 160

/* Where the texts come from: given (texts API) or read from files, one at a time. */
struct source {
	const char *const *texts;
	const size_t *lens;
	const char *const *names;
	char *buf; /* the file read last (files API) */
};

static int source_get(struct source *src, size_t i, const char **text, size_t *len,
		      struct fp_diag *diag)
{
	int rc;

	if (src->texts) {
		*text = src->texts[i];
		*len = src->lens[i];
		return FP_OK;
	}
	fp_free(src->buf);
	src->buf = NULL;
	rc = fp__strbuf_slurp(src->names[i], MAX_TRACE_BYTES, FP_STRBUF_READ_REGULAR, &src->buf,
			      len, diag);
	*text = src->buf;
	return rc;
}

static void source_put(struct source *src)
{
	fp_free(src->buf);
	src->buf = NULL;
}

struct thread {
	uint64_t pid, tid; /* in the input */
	uint32_t new_tid;  /* in the output */
	char name[NAME_CAP];
};

struct input {
	int64_t rank;
	bool has_rank;
	int64_t world;
	char host[128];
	char boot_id[64];
	bool has_origin, has_unix, has_barrier;
	uint64_t origin_ns, origin_unix_ns, barrier_exit_ns, barrier_ns;
	int64_t align;  /* this rank's time line origin on the common line (method units) */
	int64_t offset; /* ns added to the input's ts (after choosing a method) */
	size_t order;   /* position in rank order */
};

static const struct fp_json_limits trace_limits = {MAX_TRACE_BYTES, 64, 0};

const char *fp_ranks_align_name(enum fp_ranks_align a)
{
	switch (a) {
	case FP_RANKS_ALIGN_AUTO:
		return "auto";
	case FP_RANKS_ALIGN_CLOCK:
		return "clock";
	case FP_RANKS_ALIGN_BARRIER:
		return "barrier";
	case FP_RANKS_ALIGN_WALL:
		return "wall";
	}
	return "?";
}

/* The events array of a trace document: {"traceEvents": [...]} or a bare array. */
static int events_of(const char *name, const struct fp_json_doc *doc,
		     const struct fp_json_value **out, struct fp_diag *diag)
{
	const struct fp_json_value *root = fp_json_root(doc), *ev;

	if (fp_json_type(root) == FP_JSON_ARRAY) {
		*out = root;
		return FP_OK;
	}
	if (fp_json_type(root) != FP_JSON_OBJECT)
		return fp__json_error(diag, FP_EFORMAT, name, doc, root,
				      "expected a Chrome trace (an object with "
				      "\"traceEvents\", or an array of events)");
	ev = fp_json_get(root, "traceEvents");
	if (fp_json_type(ev) != FP_JSON_ARRAY)
		return fp__json_error(diag, FP_EFORMAT, name, doc, ev ? ev : root,
				      "\"traceEvents\" must be an array of events");
	*out = ev;
	return FP_OK;
}

/* Pass 1 on one parsed trace: who wrote it and its clock. */
static int read_header(const char *name, const struct fp_json_doc *doc, struct input *in,
		       struct fp_diag *diag)
{
	const struct fp_json_value *root = fp_json_root(doc), *od, *v;
	const struct fp_json_value *events;
	int64_t x;
	int rc;

	rc = events_of(name, doc, &events, diag);
	if (rc)
		return rc;
	in->world = -1;
	if (fp_json_type(root) != FP_JSON_OBJECT)
		return FP_OK;
	in->has_unix =
		fp_json_uint64(fp_json_get(root, "baseTimeNanoseconds"), &in->origin_unix_ns);
	od = fp_json_get(root, "otherData");
	if (!od)
		return FP_OK;
	if (fp_json_type(od) != FP_JSON_OBJECT)
		return fp__json_error(diag, FP_EFORMAT, name, doc, od,
				      "\"otherData\" must be an object");
	in->has_origin = fp_json_uint64(fp_json_get(od, "origin_monotonic_ns"), &in->origin_ns);
	v = fp_json_get(od, "rank");
	if (v && fp_json_type(v) != FP_JSON_NULL) {
		if (!fp_json_int64(v, &x) || x < 0 || x >= FP_RANKS_MAX)
			return fp__json_error(diag, FP_EFORMAT, name, doc, v,
					      "\"otherData\".\"rank\" must be an integer "
					      "from 0 to %d",
					      FP_RANKS_MAX - 1);
		in->rank = x;
		in->has_rank = true;
	}
	v = fp_json_get(od, "world_size");
	if (v && fp_json_type(v) != FP_JSON_NULL) {
		if (!fp_json_int64(v, &x) || x < 1 || x > FP_RANKS_MAX)
			return fp__json_error(diag, FP_EFORMAT, name, doc, v,
					      "\"otherData\".\"world_size\" must be an "
					      "integer from 1 to %d",
					      FP_RANKS_MAX);
		in->world = x;
	}
	v = fp_json_get(od, "host");
	if (fp_json_string(v, NULL))
		snprintf(in->host, sizeof(in->host), "%s", fp_json_string(v, NULL));
	v = fp_json_get(od, "boot_id");
	if (fp_json_string(v, NULL))
		snprintf(in->boot_id, sizeof(in->boot_id), "%s", fp_json_string(v, NULL));
	in->has_barrier = fp_json_uint64(fp_json_get(od, "barrier_exit_monotonic_ns"),
					 &in->barrier_exit_ns) &&
			  fp_json_uint64(fp_json_get(od, "barrier_ns"), &in->barrier_ns);
	return FP_OK;
}

/* ---- time stamps --------------------------------------------------------------------------- */

/* A "ts" in microseconds as integer nanoseconds: exact for up to three decimals (what trace
 * writers print), rounded beyond; false when not a number or out of range. */
static bool ts_ns(const struct fp_json_value *v, int64_t *out)
{
	char buf[32];
	const char *t = fp_json_number_text(v, buf, sizeof(buf));
	int64_t ip = 0, frac = 0;
	int digits = 0, fd = 0;
	bool neg = false;
	double d;

	if (!t)
		return false;
	if (*t == '-') {
		neg = true;
		t++;
	}
	for (; *t >= '0' && *t <= '9' && digits < 16; t++, digits++)
		ip = ip * 10 + (*t - '0');
	if (*t == '.') {
		for (t++; *t >= '0' && *t <= '9'; t++, fd++) {
			if (fd < 3)
				frac = frac * 10 + (*t - '0');
			else if (fd == 3 && *t >= '5')
				frac++; /* round half up on the fourth decimal */
		}
	}
	if (*t == '\0' && digits < 16) {
		for (; fd < 3; fd++)
			frac *= 10;
		*out = (neg ? -1 : 1) * (ip * 1000 + frac);
		return true;
	}
	/* exponents, huge values: through a double */
	if (!fp_json_number(v, &d) || !(d > -9.2e15 && d < 9.2e15))
		return false;
	d *= 1000.0;
	*out = (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
	return true;
}

static int write_ts(struct fp_jsonw *w, int64_t ns)
{
	char buf[48];
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	int k = snprintf(buf, sizeof(buf), "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", a / 1000,
			 (unsigned)(a % 1000));

	return fp_jsonw_raw(w, buf, (size_t)k);
}

/* ---- pass 2: one rank's events ------------------------------------------------------------- */

struct names {
	struct thread *th;
	size_t n, alloc;
	uint64_t *ppid; /* process names by input pid */
	char (*pname)[NAME_CAP];
	size_t np, palloc;
};

/* A pid or tid: an integer (negative ones keep their bits), 0 when absent. */
static bool id_of(const struct fp_json_value *v, uint64_t *out)
{
	int64_t x;

	if (!v) {
		*out = 0;
		return true;
	}
	if (fp_json_uint64(v, out))
		return true;
	if (fp_json_int64(v, &x)) {
		*out = (uint64_t)x;
		return true;
	}
	return false;
}

static struct thread *thread_find(struct names *nm, uint64_t pid, uint64_t tid)
{
	size_t i;

	/* Events come grouped by track: the last one found is usually the one. */
	for (i = nm->n; i-- > 0;)
		if (nm->th[i].pid == pid && nm->th[i].tid == tid)
			return &nm->th[i];
	return NULL;
}

static int thread_add(struct names *nm, uint64_t pid, uint64_t tid, struct thread **out)
{
	struct thread *t;

	if (nm->n >= MAX_THREADS)
		return FP_ELIMIT;
	if (nm->n == nm->alloc) {
		size_t na = nm->alloc ? nm->alloc * 2 : 16;
		struct thread *nt = fp_reallocarray(nm->th, na, sizeof(*nt));

		if (!nt)
			return FP_ENOMEM;
		nm->th = nt;
		nm->alloc = na;
	}
	t = &nm->th[nm->n++];
	t->pid = pid;
	t->tid = tid;
	t->new_tid = (uint32_t)nm->n;
	t->name[0] = '\0';
	*out = t;
	return FP_OK;
}

static const char *process_name(const struct names *nm, uint64_t pid)
{
	size_t i;

	for (i = 0; i < nm->np; i++)
		if (nm->ppid[i] == pid)
			return nm->pname[i];
	return NULL;
}

static int process_add(struct names *nm, uint64_t pid, const char *name)
{
	if (nm->np >= MAX_THREADS)
		return FP_ELIMIT;
	if (nm->np == nm->palloc) {
		size_t na = nm->palloc ? nm->palloc * 2 : 8;
		uint64_t *np = fp_reallocarray(nm->ppid, na, sizeof(*np));
		char (*nn)[NAME_CAP];

		if (!np)
			return FP_ENOMEM;
		nm->ppid = np;
		nn = fp_reallocarray(nm->pname, na, sizeof(*nn));
		if (!nn)
			return FP_ENOMEM;
		nm->pname = nn;
		nm->palloc = na;
	}
	nm->ppid[nm->np] = pid;
	snprintf(nm->pname[nm->np], NAME_CAP, "%s", name);
	nm->np++;
	return FP_OK;
}

/* Collect process and thread names and the tracks of non-metadata events, checking each
 * event's shape. */
static int scan_events(const char *name, const struct fp_json_doc *doc,
		       const struct fp_json_value *events, struct names *nm, struct fp_diag *diag)
{
	size_t i;
	int rc;

	for (i = 0; i < fp_json_len(events); i++) {
		const struct fp_json_value *e = fp_json_at(events, i), *pv, *tv;
		const char *ph, *what, *nmv;
		uint64_t pid, tid;
		struct thread *t;

		if (fp_json_type(e) != FP_JSON_OBJECT)
			return fp__json_error(diag, FP_EFORMAT, name, doc, e,
					      "event %zu must be an object", i);
		ph = fp_json_string(fp_json_get(e, "ph"), NULL);
		if (!ph)
			return fp__json_error(diag, FP_EFORMAT, name, doc, e,
					      "event %zu has no \"ph\" string", i);
		pv = fp_json_get(e, "pid");
		tv = fp_json_get(e, "tid");
		if (!id_of(pv, &pid) || !id_of(tv, &tid))
			return fp__json_error(diag, FP_EFORMAT, name, doc, e,
					      "event %zu: \"pid\" and \"tid\" must be "
					      "integers",
					      i);
		if (!strcmp(ph, "M")) {
			what = fp_json_string(fp_json_get(e, "name"), NULL);
			nmv = fp_json_string(fp_json_get(fp_json_get(e, "args"), "name"), NULL);
			if (what && nmv && !strcmp(what, "process_name")) {
				if (!process_name(nm, pid) && (rc = process_add(nm, pid, nmv)))
					return rc;
			} else if (what && nmv && !strcmp(what, "thread_name")) {
				t = thread_find(nm, pid, tid);
				if (!t && (rc = thread_add(nm, pid, tid, &t)))
					return rc;
				snprintf(t->name, sizeof(t->name), "%s", nmv);
			}
			continue;
		}
		if (fp_json_get(e, "ts") && !ts_ns(fp_json_get(e, "ts"), &(int64_t){0}))
			return fp__json_error(diag, FP_EFORMAT, name, doc, fp_json_get(e, "ts"),
					      "event %zu: \"ts\" must be a number", i);
		if (!thread_find(nm, pid, tid) && (rc = thread_add(nm, pid, tid, &t)))
			return rc;
	}
	return FP_OK;
}

static void write_meta_event(struct fp_jsonw *w, const char *what, uint64_t pid, uint32_t tid,
			     const char *name, uint64_t sort)
{
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "ph", "M");
	fp_jsonw_kv_string(w, "name", what);
	fp_jsonw_kv_uint(w, "pid", pid);
	if (tid)
		fp_jsonw_kv_uint(w, "tid", tid);
	fp_jsonw_key(w, "args");
	fp_jsonw_object_begin(w);
	if (name)
		fp_jsonw_kv_string(w, "name", name);
	else
		fp_jsonw_kv_uint(w, "sort_index", sort);
	fp_jsonw_object_end(w);
	fp_jsonw_object_end(w);
}

static int write_rank(struct fp_jsonw *w, const char *name, const struct fp_json_doc *doc,
		      const struct input *in, uint64_t *events_out, struct fp_diag *diag)
{
	const struct fp_json_value *events;
	struct names nm;
	uint64_t pid = (uint64_t)in->rank + 1;
	char buf[2 * NAME_CAP + 16];
	size_t i, j;
	int rc;

	memset(&nm, 0, sizeof(nm));
	rc = events_of(name, doc, &events, diag);
	if (!rc)
		rc = scan_events(name, doc, events, &nm, diag);
	if (rc)
		goto out;
	snprintf(buf, sizeof(buf), in->host[0] ? "rank %" PRId64 " (%s)" : "rank %" PRId64,
		 in->rank, in->host);
	write_meta_event(w, "process_name", pid, 0, buf, 0);
	write_meta_event(w, "process_sort_index", pid, 0, NULL, (uint64_t)in->rank);
	for (i = 0; i < nm.n; i++) {
		const struct thread *t = &nm.th[i];
		const char *pn = process_name(&nm, t->pid);

		if (t->name[0])
			snprintf(buf, sizeof(buf), "%s%s%s", pn ? pn : "", pn ? " " : "", t->name);
		else
			snprintf(buf, sizeof(buf), "%s%stid %" PRIu64, pn ? pn : "", pn ? " " : "",
				 t->tid);
		write_meta_event(w, "thread_name", pid, t->new_tid, buf, 0);
		write_meta_event(w, "thread_sort_index", pid, t->new_tid, NULL, t->new_tid);
	}
	for (i = 0; !rc && i < fp_json_len(events); i++) {
		const struct fp_json_value *e = fp_json_at(events, i);
		const char *ph = fp_json_string(fp_json_get(e, "ph"), NULL);
		uint64_t epid, etid;
		const struct thread *t;

		if (!strcmp(ph, "M"))
			continue;
		id_of(fp_json_get(e, "pid"), &epid);
		id_of(fp_json_get(e, "tid"), &etid);
		t = thread_find(&nm, epid, etid);
		fp_jsonw_object_begin(w);
		for (j = 0; !rc && j < fp_json_len(e); j++) {
			const char *key;
			size_t kl;
			const struct fp_json_value *m = fp_json_member(e, j, &key, &kl);
			int64_t ts;

			if (!strcmp(key, "pid") || !strcmp(key, "tid"))
				continue;
			fp_jsonw_key_n(w, key, kl);
			if (!strcmp(key, "ts") && ts_ns(m, &ts))
				rc = write_ts(w, ts + in->offset);
			else
				rc = fp__jsonw_value(w, m);
		}
		fp_jsonw_kv_uint(w, "pid", pid);
		fp_jsonw_kv_uint(w, "tid", t ? t->new_tid : 0);
		rc = rc ? rc : fp_jsonw_object_end(w);
		(*events_out)++;
	}
out:
	fp_free(nm.th);
	fp_free(nm.ppid);
	fp_free(nm.pname);
	return rc;
}

/* ---- alignment ------------------------------------------------------------------------------ */

static int choose_alignment(struct input *in, size_t n, enum fp_ranks_align want,
			    struct fp_ranks_trace_report *rep, struct fp_diag *diag)
{
	bool all_origin = true, all_barrier = true, all_unix = true, one_host = true;
	bool all_boot = true, one_boot = true;
	enum fp_ranks_align a = want;
	int64_t base = INT64_MAX;
	uint64_t err = 0;
	size_t i, nhosts = 0;

	for (i = 0; i < n; i++) {
		all_origin &= in[i].has_origin;
		all_barrier &= in[i].has_barrier && in[i].has_origin;
		all_unix &= in[i].has_unix;
		if (!in[i].host[0] || strcmp(in[i].host, in[0].host))
			one_host = false;
		if (!in[i].boot_id[0])
			all_boot = false;
		else if (strcmp(in[i].boot_id, in[0].boot_id))
			one_boot = false;
		if (in[i].has_barrier)
			err = FP_MAX(err, in[i].barrier_ns);
	}
	for (i = 0; i < n; i++) {
		size_t j;

		for (j = 0; j < i && strcmp(in[j].host, in[i].host); j++)
			;
		nhosts += j == i;
	}
	/* One boot of one machine is one CLOCK_MONOTONIC; host names stand in where a trace
	 * has no boot id (containers on different hosts may share a host name). */
	if (all_boot)
		one_host = one_boot;
	if (a == FP_RANKS_ALIGN_AUTO)
		a = (one_host || n == 1) && all_origin ? FP_RANKS_ALIGN_CLOCK :
		    all_barrier                        ? FP_RANKS_ALIGN_BARRIER :
		    all_unix                           ? FP_RANKS_ALIGN_WALL :
							 FP_RANKS_ALIGN_AUTO;
	if ((a == FP_RANKS_ALIGN_CLOCK && !all_origin) ||
	    (a == FP_RANKS_ALIGN_BARRIER && !all_barrier) ||
	    (a == FP_RANKS_ALIGN_WALL && !all_unix))
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "cannot align on the %s: a trace does not record it (%s)",
				   a == FP_RANKS_ALIGN_CLOCK   ? "monotonic clock" :
				   a == FP_RANKS_ALIGN_BARRIER ? "start barrier" :
								 "wall clock",
				   a == FP_RANKS_ALIGN_BARRIER ?
					   "the barrier is inserted when torch.distributed starts "
					   "inside a profiled session" :
					   "not a FlagPrism trace?");
	for (i = 0; i < n; i++) {
		switch (a) {
		case FP_RANKS_ALIGN_CLOCK:
			in[i].align = (int64_t)in[i].origin_ns;
			break;
		case FP_RANKS_ALIGN_BARRIER:
			in[i].align = (int64_t)in[i].origin_ns - (int64_t)in[i].barrier_exit_ns;
			break;
		case FP_RANKS_ALIGN_WALL:
			in[i].align = (int64_t)in[i].origin_unix_ns;
			break;
		case FP_RANKS_ALIGN_AUTO:
			in[i].align = 0;
			break;
		}
		base = FP_MIN(base, in[i].align);
	}
	for (i = 0; i < n; i++)
		in[i].offset = in[i].align - base;
	rep->used = a;
	switch (a) {
	case FP_RANKS_ALIGN_CLOCK:
		rep->error_ns = 0;
		snprintf(rep->note, sizeof(rep->note),
			 "%s: every rank's CLOCK_MONOTONIC%s; aligned exactly",
			 one_host ? "one host" : "clock alignment forced",
			 one_host ? "" : " (only exact when the ranks ran on one host)");
		break;
	case FP_RANKS_ALIGN_BARRIER:
		rep->error_ns = (int64_t)err;
		snprintf(rep->note, sizeof(rep->note),
			 "%zu host%s: aligned on the start barrier; error at most %" PRIu64
			 " ns (the longest barrier)",
			 nhosts, nhosts == 1 ? "" : "s", err);
		break;
	case FP_RANKS_ALIGN_WALL:
		rep->error_ns = -1;
		snprintf(rep->note, sizeof(rep->note),
			 "%zu host%s: aligned on each session's wall-clock start; error unknown "
			 "(no start barrier in every trace: torch.distributed was started before "
			 "the session?)",
			 nhosts, nhosts == 1 ? "" : "s");
		break;
	case FP_RANKS_ALIGN_AUTO:
		rep->error_ns = -1;
		snprintf(rep->note, sizeof(rep->note),
			 "not aligned: the traces record no clock (not FlagPrism traces?); each "
			 "keeps its own time line");
		break;
	}
	return FP_OK;
}

/* ---- the merge -------------------------------------------------------------------------------- */

/* "<name>:<line>:<col>: " in front of a JSON parser's message. */
static void prefix_name(struct fp_diag *d, const char *name)
{
	char msg[sizeof(d->msg)];

	if (!d)
		return;
	memcpy(msg, d->msg, sizeof(msg));
	snprintf(d->msg, sizeof(d->msg), "%.100s:%u:%u: %.130s", name, d->line, d->col, msg);
}

struct job {
	struct source *src;
	struct input *in;
	size_t n;
	size_t *by_rank; /* input indices in rank order */
	const struct fp_ranks_trace_options *o;
	struct fp_ranks_trace_report *rep;
	struct fp_diag *diag;
	uint64_t base_unix;
	int64_t *ranks;
};

static int write_all(struct job *j, FILE *f)
{
	struct fp_jsonw *w = fp_jsonw_new_file(f, j->o->json_flags);
	struct fp_json_doc *doc = NULL;
	char ranks_text[256];
	size_t k;
	int rc = FP_OK;

	if (!w)
		return fp_diag_set(j->diag, FP_ENOMEM, 0, "out of memory");
	fp_ranks_format(j->ranks, j->n, ranks_text, sizeof(ranks_text));
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "displayTimeUnit", "ns");
	if (j->base_unix)
		fp_jsonw_kv_uint(w, "baseTimeNanoseconds", j->base_unix);
	fp_jsonw_key(w, "otherData");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "producer", "flagprism " FP_VERSION_STRING " merge");
	fp_jsonw_kv_string(w, "ranks", ranks_text);
	fp_jsonw_kv_int(w, "world_size", j->rep->world_size);
	fp_jsonw_kv_string(w, "missing_ranks", j->rep->missing);
	fp_jsonw_key(w, "clock_alignment");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "method", fp_ranks_align_name(j->rep->used));
	if (j->rep->error_ns >= 0)
		fp_jsonw_kv_int(w, "error_ns", j->rep->error_ns);
	else
		fp_jsonw_kv_null(w, "error_ns");
	fp_jsonw_kv_string(w, "note", j->rep->note);
	fp_jsonw_key(w, "offsets_ns");
	fp_jsonw_object_begin(w);
	for (k = 0; k < j->n; k++) {
		const struct input *in = &j->in[j->by_rank[k]];
		char key[24];

		snprintf(key, sizeof(key), "%" PRId64, in->rank);
		fp_jsonw_kv_int(w, key, in->offset);
	}
	fp_jsonw_object_end(w);
	fp_jsonw_object_end(w);
	fp_jsonw_object_end(w);
	fp_jsonw_key(w, "traceEvents");
	fp_jsonw_array_begin(w);
	for (k = 0; !rc && k < j->n; k++) {
		size_t i = j->by_rank[k];
		const char *text;
		size_t len;

		rc = source_get(j->src, i, &text, &len, j->diag);
		if (!rc)
			rc = fp_json_parse(text, len, &trace_limits, &doc, j->diag);
		if (rc == FP_EFORMAT || rc == FP_ELIMIT)
			prefix_name(j->diag, j->src->names[i]);
		source_put(j->src);
		if (!rc)
			rc = write_rank(w, j->src->names[i], doc, &j->in[i], &j->rep->events,
					j->diag);
		fp_json_doc_free(doc);
		doc = NULL;
	}
	fp_jsonw_array_end(w);
	fp_jsonw_object_end(w);
	if (!rc)
		rc = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	if (!rc && fputc('\n', f) == EOF)
		rc = FP_EIO;
	if (rc == FP_EIO && j->diag && !j->diag->msg[0])
		fp_diag_set(j->diag, FP_EIO, 0, "write error");
	return rc;
}

static int write_cb(void *arg, FILE *f)
{
	return write_all(arg, f);
}

static int merge(struct source *src, size_t n, const struct fp_ranks_trace_options *opt, FILE *out,
		 const char *out_path, struct fp_ranks_trace_report *rep, struct fp_diag *diag)
{
	static const struct fp_ranks_trace_options defaults;
	struct fp_ranks_trace_report local;
	struct fp_json_doc *doc = NULL;
	struct input *in = NULL;
	struct job j;
	int64_t world = 0, maxr = -1, missing[64];
	size_t i, k, nmiss;
	int rc = FP_OK;

	if (!opt)
		opt = &defaults;
	if (!rep)
		rep = &local;
	memset(rep, 0, sizeof(*rep));
	memset(&j, 0, sizeof(j));
	if (n == 0 || n > FP_RANKS_MAX ||
	    (opt->world_size && (opt->world_size < 1 || opt->world_size > FP_RANKS_MAX)))
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "expected 1 to %d traces and a world size "
				   "from 1 to %d",
				   FP_RANKS_MAX, FP_RANKS_MAX);
	in = fp_calloc(n, sizeof(*in));
	j.by_rank = fp_calloc(n, sizeof(*j.by_rank));
	j.ranks = fp_calloc(n, sizeof(*j.ranks));
	if (!in || !j.by_rank || !j.ranks) {
		rc = fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
		goto out;
	}
	/* Pass 1: identities and clocks. */
	for (i = 0; !rc && i < n; i++) {
		const char *text;
		size_t len;

		rc = source_get(src, i, &text, &len, diag);
		if (!rc) {
			rc = fp_json_parse(text, len, &trace_limits, &doc, diag);
			if (rc == FP_EFORMAT || rc == FP_ELIMIT)
				prefix_name(diag, src->names[i]);
		}
		source_put(src);
		if (!rc)
			rc = read_header(src->names[i], doc, &in[i], diag);
		fp_json_doc_free(doc);
		doc = NULL;
		if (!rc && !in[i].has_rank && fp_ranks_of_path(src->names[i], &in[i].rank) == FP_OK)
			in[i].has_rank = true;
		if (!rc && !in[i].has_rank)
			in[i].rank = (int64_t)i;
	}
	for (i = 0; !rc && i < n; i++) {
		for (k = 0; k < i; k++) {
			if (in[k].rank == in[i].rank) {
				rc = fp_diag_set(diag, FP_EINVAL, 0,
						 "%s and %s are both rank %" PRId64
						 " (traces of two jobs?)",
						 src->names[k], src->names[i], in[i].rank);
				break;
			}
		}
		if (!rc && in[i].world > 0) {
			if (world && world != in[i].world)
				rc = fp_diag_set(diag, FP_EINVAL, 0,
						 "%s has world size %" PRId64
						 ", an earlier trace %" PRId64
						 " (traces of two jobs?)",
						 src->names[i], in[i].world, world);
			world = in[i].world;
		}
		maxr = FP_MAX(maxr, in[i].rank);
	}
	if (rc)
		goto out;
	if (opt->world_size)
		world = opt->world_size;
	if (!world)
		world = maxr + 1;
	if (maxr >= world) {
		rc = fp_diag_set(diag, FP_EINVAL, 0,
				 "rank %" PRId64 " is not below the world size %" PRId64, maxr,
				 world);
		goto out;
	}
	for (i = 0; i < n; i++) {
		for (k = i; k > 0 && in[j.by_rank[k - 1]].rank > in[i].rank; k--)
			j.by_rank[k] = j.by_rank[k - 1];
		j.by_rank[k] = i;
	}
	for (k = 0; k < n; k++)
		j.ranks[k] = in[j.by_rank[k]].rank;
	rep->ranks = n;
	rep->world_size = world;
	nmiss = fp_ranks_missing(j.ranks, n, world, missing, FP_ARRAY_SIZE(missing));
	rep->nmissing = nmiss;
	fp_ranks_format(missing, FP_MIN(nmiss, FP_ARRAY_SIZE(missing)), rep->missing,
			sizeof(rep->missing));
	if (nmiss > FP_ARRAY_SIZE(missing))
		snprintf(rep->missing + FP_MIN(strlen(rep->missing), sizeof(rep->missing) - 5), 5,
			 ",...");
	rc = choose_alignment(in, n, opt->align, rep, diag);
	if (rc)
		goto out;
	for (i = 0; i < n; i++)
		if (in[i].offset == 0 && in[i].has_unix)
			j.base_unix = in[i].origin_unix_ns;
	/* Pass 2: the events. */
	j.src = src;
	j.in = in;
	j.n = n;
	j.o = opt;
	j.rep = rep;
	j.diag = diag;
	if (out)
		rc = write_all(&j, out);
	else
		rc = fp__outfile_save(out_path, write_cb, &j, diag);
out:
	source_put(src);
	fp_free(in);
	fp_free(j.by_rank);
	fp_free(j.ranks);
	return rc;
}

int fp_ranks_merge_trace_texts(const char *const *texts, const size_t *lens,
			       const char *const *names, size_t n,
			       const struct fp_ranks_trace_options *o, FILE *out,
			       struct fp_ranks_trace_report *rep, struct fp_diag *diag)
{
	struct source src = {texts, lens, names, NULL};
	size_t i;

	if (!texts || !lens || !names || !out)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_ranks_merge_trace_texts: NULL argument");
	for (i = 0; i < n; i++)
		if ((!texts[i] && lens[i]) || !names[i])
			return fp_diag_set(diag, FP_EINVAL, 0,
					   "fp_ranks_merge_trace_texts: NULL input %zu", i);
	return merge(&src, n, o, out, NULL, rep, diag);
}

int fp_ranks_merge_traces(const char *const *paths, size_t n,
			  const struct fp_ranks_trace_options *o, const char *out_path,
			  struct fp_ranks_trace_report *rep, struct fp_diag *diag)
{
	struct source src = {NULL, NULL, paths, NULL};
	size_t i;

	if (!paths || !out_path)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_ranks_merge_traces: NULL argument");
	for (i = 0; i < n; i++)
		if (!paths[i])
			return fp_diag_set(diag, FP_EINVAL, 0,
					   "fp_ranks_merge_traces: NULL path %zu", i);
	return merge(&src, n, o, NULL, out_path, rep, diag);
}
