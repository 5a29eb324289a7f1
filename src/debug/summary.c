/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Debugger's whole-program summary (<flagprism/debug-summary.h>): a table of kernels with
 * their launch counts per status and reason, and the findings of every instrumented launch,
 * deduplicated by (kernel, kind, line, subject) across launches; written as summary.json and
 * summary.txt. Everything is capped (kernels, reasons, findings, string lengths) and what does
 * not fit is counted. A mutex serialises every entry point, so launches may be accounted from
 * any thread. Not here: per-launch reports (report.c) and the findings rules (findings.c).
 */
#include "fp-setup.h"

#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <flagprism/debug-keys.h>
#include <flagprism/debug-summary.h>
#include <flagprism/json.h>
#include <flagprism/outfile.h>
#include <flagprism/version.h>

#include "core/hashmap-internal.h"
#include "core/intern-internal.h"
#include "debug/report-internal.h"

struct skernel {
	uint32_t name, file; /* interned */
	uint64_t launches;   /* every status */
	uint64_t by_status[FP_DBG_LAUNCH_NSTATUS];
	uint64_t findings; /* distinct findings of this kernel */
	uint64_t first_launch;
	uint64_t incomplete;        /* instrumented launches that did not record everything */
	uint32_t incomplete_reason; /* interned: why the first of them did not */
	bool has_coverage;          /* of its latest instrumented launch */
	struct fp_dbg_coverage coverage;
};

/* A place an instrumented launch did not observe (coverage), once per kernel, file, line, why. */
struct sunobserved {
	uint32_t kernel, file, line, source, reason;
};

/* One launch that did not record everything: its kernel, index, report and why (interned). */
struct sincomplete {
	uint32_t kernel; /* index into kernels */
	uint32_t report, reason;
	uint64_t launch;
};

struct sreason {
	uint32_t kernel; /* index into kernels */
	uint32_t reason; /* interned */
	enum fp_dbg_launch_status status;
	uint64_t count, first_launch;
};

struct sfinding {
	uint32_t kernel; /* index into kernels */
	uint32_t kind;   /* enum fp_dbg_finding_kind */
	uint32_t line;
	uint32_t place; /* enum fp_dbg_oob_where: a different consequence is another finding */
	uint32_t file, subject, message, report, param, test, source; /* interned ("" = 0) */
	uint32_t stack0, nstack;  /* interned frames, consecutive entries in `frames` */
	uint64_t program, launch; /* first instance */
	uint64_t launches;        /* launches where it happened */
	bool from_memory;         /* NaN/Inf origin at a load: the data already held it */
	uint64_t descendants;     /* later NaN/Inf findings at loads, counted under this origin */
	uint64_t programs;        /* summed over launches */
	uint64_t instances;
};

struct fp_dbg_summary {
	pthread_mutex_t lock;
	struct fp_intern *strs;
	struct fp_hashmap kernel_ix, reason_ix, finding_ix;
	struct skernel *kernels;
	size_t nkernels, kcap;
	struct sreason *reasons;
	size_t nreasons, rcap;
	struct sfinding *findings;
	size_t nfindings, fcap;
	uint32_t *frames;
	size_t nframes, frcap;
	struct sunobserved *unobs;
	size_t nunobs, ucap;
	struct sincomplete *incs; /* the incomplete launches, the first SUMMARY_MAX_INCOMPLETE */
	size_t nincs, icap;
	uint64_t dropped_incomplete;
	struct fp_hashmap unobs_ix;
	uint64_t dropped_unobserved;
	uint64_t next_index, launches;
	uint64_t by_status[FP_DBG_LAUNCH_NSTATUS];
	uint64_t finding_launches, reports;
	uint64_t incomplete_launches; /* launches whose records or dumps did not all fit */
	uint64_t dropped_kernels, dropped_reasons, dropped_findings, dropped_frames;
	/* where NaN (inf 0) and Inf (inf 1) went: the allocations a launch's stores wrote one into,
	 * with the origin it descends from (findings index + 1); a later load from one of them
	 * descends from that origin (fp__dbg_summary_fold) */
	struct srange {
		uint64_t lo, hi, launch;
		size_t origin;
		bool inf;
	} *ranges;
	size_t nranges, rgcap;
	uint64_t dropped_ranges;
	char *mode, *checks, *command, *output_dir, *incomplete;
	bool has_exit;
	int64_t exit_status;
	/* the rank in a multi-process job (-1: not set), written as "distributed" */
	int64_t rank, local_rank, world_size;
	char *host, *device;
	/* the pytest-xdist worker whose part of the program this is (NULL: not one), written as
	 * "worker"; worker_count: the workers of its session (-1: unknown) */
	char *worker;
	int64_t worker_count;
};

static const char *const status_names[FP_DBG_LAUNCH_NSTATUS] = {
	"instrumented", "excluded", "unobservable", "failed", "nothing_to_observe",
};

const char *fp_dbg_launch_status_name(enum fp_dbg_launch_status st)
{
	return (unsigned)st < FP_DBG_LAUNCH_NSTATUS ? status_names[st] : "unknown";
}

/* The interner caps its own memory; 64 MiB of distinct strings is far beyond any real run. */
#define SUMMARY_STRING_BYTES (64u << 20)
#define SUMMARY_MAX_FRAMES (1u << 20)
#define SUMMARY_MAX_RANGES (1u << 16) /* allocations NaN/Inf were written into, kept */
#define SUMMARY_MAX_INCOMPLETE 1024u  /* incomplete launches listed one by one */

int fp_dbg_summary_new(struct fp_dbg_summary **out)
{
	struct fp_dbg_summary *s;
	uint32_t empty;

	if (!out)
		return FP_EINVAL;
	*out = NULL;
	s = fp_calloc(1, sizeof(*s));
	if (!s)
		return FP_ENOMEM;
	s->strs = fp_intern_new_capped(SUMMARY_STRING_BYTES);
	if (!s->strs)
		goto fail_strs;
	/* id 0 is the empty string: "no value" for optional fields */
	if (fp_intern_add(s->strs, "", 0, &empty) || empty != 0)
		goto fail_empty;
	if (pthread_mutex_init(&s->lock, NULL))
		goto fail_empty;
	fp_hashmap_init(&s->kernel_ix);
	fp_hashmap_init(&s->reason_ix);
	fp_hashmap_init(&s->finding_ix);
	fp_hashmap_init(&s->unobs_ix);
	s->rank = s->local_rank = s->world_size = s->worker_count = -1;
	*out = s;
	return FP_OK;

fail_empty:
	fp_intern_free(s->strs);
fail_strs:
	fp_free(s);
	return FP_ENOMEM;
}

static void clear_locked(struct fp_dbg_summary *s)
{
	fp_hashmap_clear(&s->kernel_ix);
	fp_hashmap_clear(&s->reason_ix);
	fp_hashmap_clear(&s->finding_ix);
	fp_hashmap_clear(&s->unobs_ix);
	s->nkernels = s->nreasons = s->nfindings = s->nframes = s->nunobs = 0;
	s->dropped_unobserved = 0;
	s->nincs = 0;
	s->dropped_incomplete = 0;
	s->next_index = s->launches = 0;
	memset(s->by_status, 0, sizeof(s->by_status));
	s->finding_launches = s->reports = 0;
	s->incomplete_launches = 0;
	s->dropped_kernels = s->dropped_reasons = s->dropped_findings = s->dropped_frames = 0;
	s->nranges = 0;
	s->dropped_ranges = 0;
}

void fp_dbg_summary_clear(struct fp_dbg_summary *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	clear_locked(s);
	pthread_mutex_unlock(&s->lock);
}

void fp_dbg_summary_free(struct fp_dbg_summary *s)
{
	if (!s)
		return;
	fp_hashmap_release(&s->kernel_ix);
	fp_hashmap_release(&s->reason_ix);
	fp_hashmap_release(&s->finding_ix);
	fp_hashmap_release(&s->unobs_ix);
	fp_free(s->unobs);
	fp_free(s->incs);
	fp_intern_free(s->strs);
	fp_free(s->kernels);
	fp_free(s->reasons);
	fp_free(s->findings);
	fp_free(s->ranges);
	fp_free(s->frames);
	fp_free(s->mode);
	fp_free(s->checks);
	fp_free(s->command);
	fp_free(s->output_dir);
	fp_free(s->incomplete);
	fp_free(s->host);
	fp_free(s->device);
	fp_free(s->worker);
	pthread_mutex_destroy(&s->lock);
	fp_free(s);
}

static int set_str(char **dst, const char *value)
{
	char *p = NULL;

	if (value) {
		/* fp_strndup copies exactly n bytes: bound by the string's own length */
		p = fp_strndup(value, strnlen(value, FP_DBG_SUMMARY_MAX_STRING));
		if (!p)
			return FP_ENOMEM;
	}
	fp_free(*dst);
	*dst = p;
	return FP_OK;
}

int fp_dbg_summary_set(struct fp_dbg_summary *s, const char *key, const char *value)
{
	char **dst;
	int st;

	if (!s || !key)
		return FP_EINVAL;
	if (!strcmp(key, "mode"))
		dst = &s->mode;
	else if (!strcmp(key, "checks"))
		dst = &s->checks;
	else if (!strcmp(key, "command"))
		dst = &s->command;
	else if (!strcmp(key, "output_dir"))
		dst = &s->output_dir;
	else if (!strcmp(key, "incomplete"))
		dst = &s->incomplete;
	else if (!strcmp(key, "host"))
		dst = &s->host;
	else if (!strcmp(key, "device"))
		dst = &s->device;
	else if (!strcmp(key, "worker"))
		dst = &s->worker;
	else
		return FP_EINVAL;
	pthread_mutex_lock(&s->lock);
	st = set_str(dst, value);
	pthread_mutex_unlock(&s->lock);
	return st;
}

int fp_dbg_summary_set_int(struct fp_dbg_summary *s, const char *key, int64_t value)
{
	int64_t *dst = NULL;

	if (!s || !key)
		return FP_EINVAL;
	if (!strcmp(key, "rank"))
		dst = &s->rank;
	else if (!strcmp(key, "local_rank"))
		dst = &s->local_rank;
	else if (!strcmp(key, "world_size"))
		dst = &s->world_size;
	else if (!strcmp(key, "worker_count"))
		dst = &s->worker_count;
	else if (strcmp(key, "exit_status"))
		return FP_EINVAL;
	if (dst && value < -1)
		return FP_EINVAL;
	pthread_mutex_lock(&s->lock);
	if (dst) {
		*dst = value;
	} else {
		s->has_exit = true;
		s->exit_status = value;
	}
	pthread_mutex_unlock(&s->lock);
	return FP_OK;
}

/* Intern a string cut to the cap; 0 ("") for NULL. */
static int intern(struct fp_dbg_summary *s, const char *str, uint32_t *id)
{
	size_t n;

	if (!str) {
		*id = 0;
		return FP_OK;
	}
	n = strnlen(str, FP_DBG_SUMMARY_MAX_STRING);
	return fp_intern_add(s->strs, str, n, id);
}

static int grow(void **arr, size_t *cap, size_t need, size_t size, size_t max)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return FP_OK;
	if (need > max)
		return FP_ELIMIT;
	ncap = *cap ? *cap * 2 : 16;
	if (ncap < need)
		ncap = need;
	if (ncap > max)
		ncap = max;
	p = fp_reallocarray(*arr, ncap, size);
	if (!p)
		return FP_ENOMEM;
	*arr = p;
	*cap = ncap;
	return FP_OK;
}

/* The kernel's index, adding it when new; UINT32_MAX (and dropped counted) beyond the cap. */
static int kernel_of(struct fp_dbg_summary *s, const char *kernel, const char *file, uint64_t first,
		     uint32_t *ix)
{
	uint32_t nid, fid;
	uint64_t key, v;
	struct skernel *k;
	int st;

	if ((st = intern(s, kernel, &nid)) || (st = intern(s, file ? file : "", &fid)))
		return st;
	key = ((uint64_t)nid << 32) | fid;
	if (fp_hashmap_get(&s->kernel_ix, key, &v)) {
		*ix = (uint32_t)v;
		return FP_OK;
	}
	st = grow((void **)&s->kernels, &s->kcap, s->nkernels + 1, sizeof(*s->kernels),
		  FP_DBG_SUMMARY_MAX_KERNELS);
	if (st == FP_ELIMIT) {
		s->dropped_kernels++;
		*ix = UINT32_MAX;
		return FP_OK;
	}
	if (st)
		return st;
	if ((st = fp_hashmap_put(&s->kernel_ix, key, s->nkernels)))
		return st;
	k = &s->kernels[s->nkernels];
	memset(k, 0, sizeof(*k));
	k->name = nid;
	k->file = fid;
	k->first_launch = first;
	*ix = (uint32_t)s->nkernels++;
	return FP_OK;
}

uint64_t fp_dbg_summary_reserve(struct fp_dbg_summary *s)
{
	uint64_t ix;

	if (!s)
		return 0;
	pthread_mutex_lock(&s->lock);
	ix = s->next_index++;
	pthread_mutex_unlock(&s->lock);
	return ix;
}

static int add_reason(struct fp_dbg_summary *s, uint32_t kix, enum fp_dbg_launch_status st,
		      const char *reason, uint64_t count, uint64_t first)
{
	uint32_t rid;
	uint64_t key, v;
	struct sreason *r;
	int rc;

	if ((rc = intern(s, reason ? reason : "", &rid)))
		return rc;
	key = fp_hash_u64(((uint64_t)kix << 32) ^ ((uint64_t)rid << 3) ^ (uint64_t)st);
	/* collisions are resolved by probing consecutive keys */
	while (fp_hashmap_get(&s->reason_ix, key, &v)) {
		r = &s->reasons[v];
		if (r->kernel == kix && r->reason == rid && r->status == st) {
			r->count += count;
			return FP_OK;
		}
		key++;
	}
	rc = grow((void **)&s->reasons, &s->rcap, s->nreasons + 1, sizeof(*s->reasons),
		  FP_DBG_SUMMARY_MAX_REASONS);
	if (rc == FP_ELIMIT) {
		s->dropped_reasons++;
		return FP_OK;
	}
	if (rc || (rc = fp_hashmap_put(&s->reason_ix, key, s->nreasons)))
		return rc;
	r = &s->reasons[s->nreasons++];
	r->kernel = kix;
	r->reason = rid;
	r->status = st;
	r->count = count;
	r->first_launch = first;
	return FP_OK;
}

int fp_dbg_summary_launch(struct fp_dbg_summary *s, const char *kernel, const char *source_file,
			  enum fp_dbg_launch_status st, const char *reason, uint64_t count,
			  uint64_t index, uint64_t *launch_index)
{
	uint64_t first;
	uint32_t kix;
	int rc;

	if (!s || !kernel || (unsigned)st >= FP_DBG_LAUNCH_NSTATUS || count == 0 ||
	    (index != FP_DBG_SUMMARY_NEW_INDEX && count != 1))
		return FP_EINVAL;
	pthread_mutex_lock(&s->lock);
	if (index == FP_DBG_SUMMARY_NEW_INDEX) {
		first = s->next_index;
		s->next_index += count;
	} else {
		if (index >= s->next_index) {
			pthread_mutex_unlock(&s->lock);
			return FP_EINVAL; /* not reserved */
		}
		first = index;
	}
	s->launches += count;
	s->by_status[st] += count;
	if ((rc = kernel_of(s, kernel, source_file, first, &kix)))
		goto out;
	if (kix != UINT32_MAX) {
		struct skernel *k = &s->kernels[kix];

		k->launches += count;
		k->by_status[st] += count;
		if (first < k->first_launch)
			k->first_launch = first;
		if (st != FP_DBG_LAUNCH_INSTRUMENTED)
			rc = add_reason(s, kix, st, reason, count, first);
	}
	if (!rc && launch_index)
		*launch_index = first;
out:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void fp_dbg_summary_totals(struct fp_dbg_summary *s, struct fp_dbg_summary_totals *t)
{
	memset(t, 0, sizeof(*t));
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	t->kernels = s->nkernels + s->dropped_kernels;
	t->launches = s->launches;
	memcpy(t->by_status, s->by_status, sizeof(t->by_status));
	t->findings = s->nfindings + s->dropped_findings;
	t->finding_launches = s->finding_launches;
	t->reports = s->reports;
	t->dropped_kernels = s->dropped_kernels;
	t->dropped_reasons = s->dropped_reasons;
	t->dropped_findings = s->dropped_findings;
	t->incomplete_launches = s->incomplete_launches;
	pthread_mutex_unlock(&s->lock);
}

/* ---- findings ----------------------------------------------------------------------------- */

/*
 * A launch whose records or dumps did not all fit: counted, listed with its own reason (the
 * first SUMMARY_MAX_INCOMPLETE; the rest counted in dropped.incomplete_launches), and the first
 * one's reason kept per kernel (summary.json `complete` and `incomplete`, summary.txt's
 * INCOMPLETE lines, --strict).
 */
static int add_incomplete(struct fp_dbg_summary *s, uint32_t kix, const struct fp_dbg_run *run,
			  uint64_t launch, const char *report)
{
	const struct fp_dbg_run_info *ri = fp_dbg_run_info(run);
	struct sincomplete *e;
	char why[256];
	int n = 0, st;

	if (ri->complete)
		return FP_OK;
	s->incomplete_launches++;
	if (kix == UINT32_MAX)
		return FP_OK;
	why[0] = '\0';
	if (ri->overflow_count)
		n = snprintf(why, sizeof(why),
			     "%" PRIu64 " records did not fit the %" PRIu64 " slots per program of "
			     "its %" PRIu64 " programs (raise record_capacity)",
			     ri->overflow_count, ri->slots_per_program, ri->programs);
	if (ri->dump_overflow && n >= 0 && (size_t)n < sizeof(why))
		snprintf(why + n, sizeof(why) - (size_t)n,
			 "%s%" PRIu64 " dump words did not fit the dump arena of %" PRIu64
			 " words (raise dump_capacity)",
			 n ? "; " : "", ri->dump_overflow, ri->dump_capacity);
	if (!why[0])
		snprintf(why, sizeof(why), "it did not record everything");
	st = grow((void **)&s->incs, &s->icap, s->nincs + 1, sizeof(*s->incs),
		  SUMMARY_MAX_INCOMPLETE);
	if (st == FP_ELIMIT) {
		s->dropped_incomplete++;
	} else if (st) {
		return st;
	} else {
		e = &s->incs[s->nincs];
		*e = (struct sincomplete){.kernel = kix, .launch = launch};
		if ((st = intern(s, why, &e->reason)) || (st = intern(s, report, &e->report)))
			return st;
		s->nincs++;
	}
	if (s->kernels[kix].incomplete++)
		return FP_OK;
	return intern(s, why, &s->kernels[kix].incomplete_reason);
}

static int add_coverage(struct fp_dbg_summary *s, uint32_t kix, const struct fp_dbg_run *run,
			const struct fp_dbg_launch *l);

static int add_frames(struct fp_dbg_summary *s, const struct fp_dbg_launch *l, uint32_t *first,
		      uint32_t *n)
{
	size_t i;
	int st;

	*first = (uint32_t)s->nframes;
	*n = 0;
	for (i = 0; i < l->nstack; i++) {
		st = grow((void **)&s->frames, &s->frcap, s->nframes + 1, sizeof(*s->frames),
			  SUMMARY_MAX_FRAMES);
		if (st == FP_ELIMIT) {
			s->dropped_frames += l->nstack - i;
			return FP_OK;
		}
		if (st || (st = intern(s, l->stack[i], &s->frames[s->nframes])))
			return st;
		s->nframes++;
		(*n)++;
	}
	return FP_OK;
}

/*
 * What a summary entry says of its first instance (the earliest launch where it happened): the
 * program, the message, the report, the test and the stack all come from that one launch, so
 * that a launch reported late (launches end out of order on several threads) does not leave
 * another launch's message under the first one's number.
 */
static int describe(struct fp_dbg_summary *s, struct sfinding *e, const struct fp_dbg_run *run,
		    const struct fp_dbg_launch *l, const struct fp_dbg_finding *f,
		    const struct fp_dbg_statement *stmt, uint64_t launch, const char *report)
{
	int st;

	e->program = f->program;
	e->launch = launch;
	/* a finding inside a helper is a line of the helper's file */
	if ((st = intern(s, stmt ? fp__dbg_frame_file(run, l, stmt->frame) : l->source_file,
			 &e->file)) ||
	    (st = intern(s, f->message, &e->message)) || (st = intern(s, report, &e->report)) ||
	    (st = intern(s, f->param, &e->param)) || (st = intern(s, l->test, &e->test)) ||
	    (st = intern(s, stmt ? stmt->source : NULL, &e->source)))
		return st;
	return add_frames(s, l, &e->stack0, &e->nstack);
}

/* Add one finding (merged with an earlier one of the same kernel, kind, line, subject and place);
 * *where: its index + 1 (0 when it could not be kept). */
static int add_finding(struct fp_dbg_summary *s, uint32_t kix, const struct fp_dbg_run *run,
		       const struct fp_dbg_launch *l, const struct fp_dbg_finding *f,
		       uint64_t launch, const char *report, size_t *where)
{
	const struct fp_dbg_statement *stmt = fp_dbg_run_statement(run, f->statement);
	uint32_t line = stmt ? stmt->line : 0, subj, place = (uint32_t)f->where;
	uint64_t key, v;
	struct sfinding *e;
	int st;

	*where = 0;
	if ((st = intern(s, f->subject ? f->subject : "", &subj)))
		return st;
	key = fp_hash_u64(((uint64_t)kix << 32) ^ ((uint64_t)f->kind << 24) ^ line ^
			  ((uint64_t)subj << 40) ^ ((uint64_t)place << 20));
	while (fp_hashmap_get(&s->finding_ix, key, &v)) {
		e = &s->findings[v];
		if (e->kernel == kix && e->kind == (uint32_t)f->kind && e->line == line &&
		    e->subject == subj && e->place == place) {
			e->launches++;
			e->programs += f->program_count;
			e->instances += f->instance_count;
			*where = (size_t)v + 1;
			if (launch < e->launch)
				return describe(s, e, run, l, f, stmt, launch, report);
			return FP_OK;
		}
		key++;
	}
	st = grow((void **)&s->findings, &s->fcap, s->nfindings + 1, sizeof(*s->findings),
		  FP_DBG_SUMMARY_MAX_FINDINGS);
	if (st == FP_ELIMIT) {
		s->dropped_findings++;
		return FP_OK;
	}
	if (st || (st = fp_hashmap_put(&s->finding_ix, key, s->nfindings)))
		return st;
	e = &s->findings[s->nfindings];
	memset(e, 0, sizeof(*e));
	e->kernel = kix;
	e->kind = (uint32_t)f->kind;
	e->line = line;
	e->subject = subj;
	e->place = place;
	e->launches = 1;
	e->programs = f->program_count;
	e->instances = f->instance_count;
	e->from_memory = f->from_memory;
	if ((st = describe(s, e, run, l, f, stmt, launch, report)))
		return st;
	s->nfindings++;
	*where = s->nfindings;
	s->kernels[kix].findings++;
	return FP_OK;
}

/* Where this launch's stores put NaN (inf false) or Inf: its allocations, under `origin`. */
static int add_ranges(struct fp_dbg_summary *s, const struct fp_dbg_run *run, bool inf,
		      size_t origin, uint64_t launch)
{
	struct fp__dbg_range w[FP__DBG_MAX_RANGES];
	size_t n = fp__dbg_written(run, inf, w, FP__DBG_MAX_RANGES), i;
	int st;

	for (i = 0; i < n; i++) {
		st = grow((void **)&s->ranges, &s->rgcap, s->nranges + 1, sizeof(*s->ranges),
			  SUMMARY_MAX_RANGES);
		if (st == FP_ELIMIT) {
			s->dropped_ranges += n - i; /* later loads of them stay findings */
			return FP_OK;
		}
		if (st)
			return st;
		s->ranges[s->nranges++] = (struct srange){w[i].lo, w[i].hi, launch, origin, inf};
	}
	return FP_OK;
}

int fp__dbg_summary_add_launch_findings(struct fp_dbg_summary *s, const struct fp_dbg_run *run,
					const struct fp_dbg_launch *l,
					const struct fp_dbg_findings *fs, uint64_t launch,
					const char *report, const size_t folded[2])
{
	size_t i, n = fp_dbg_findings_count(fs), origin[2] = {folded[0], folded[1]};
	bool own[2] = {false, false};
	uint32_t kix = UINT32_MAX;
	int st = FP_OK;

	if (!s)
		return FP_OK;
	pthread_mutex_lock(&s->lock);
	if (report)
		s->reports++;
	if ((st = kernel_of(s, l->kernel, l->source_file, launch, &kix)))
		goto out;
	if (kix != UINT32_MAX && (st = add_coverage(s, kix, run, l)))
		goto out;
	if ((st = add_incomplete(s, kix, run, launch, report)))
		goto out;
	if (n == 0)
		goto out;
	s->finding_launches++;
	if (kix == UINT32_MAX) {
		s->dropped_findings += n;
		goto out;
	}
	for (i = 0; i < n && !st; i++) {
		const struct fp_dbg_finding *f = fp_dbg_findings_at(fs, i);
		size_t at, inf;

		st = add_finding(s, kix, run, l, f, launch, report, &at);
		if (f->kind != FP_DBG_FINDING_NAN_ORIGIN && f->kind != FP_DBG_FINDING_INF_ORIGIN)
			continue;
		/* what this launch's NaN/Inf descend from: its own origin first, else the
		 * memory it loaded one from */
		inf = f->kind == FP_DBG_FINDING_INF_ORIGIN;
		if (at && (!origin[inf] || (own[inf] == false && !f->from_memory))) {
			origin[inf] = at;
			own[inf] = !f->from_memory;
		}
	}
out:
	for (i = 0; i < 2 && !st; i++)
		if (origin[i] && kix != UINT32_MAX)
			st = add_ranges(s, run, i != 0, origin[i], launch);
	pthread_mutex_unlock(&s->lock);
	return st;
}

void fp__dbg_summary_fold(struct fp_dbg_summary *s, const struct fp_dbg_run *run,
			  struct fp_dbg_findings *fs, uint64_t launch, size_t folded[2])
{
	size_t i, j;

	folded[0] = folded[1] = 0;
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	for (i = fp_dbg_findings_count(fs); i-- > 0;) {
		const struct fp_dbg_finding *f = fp_dbg_findings_at(fs, i);
		struct fp__dbg_range from[FP__DBG_MAX_RANGES];
		size_t nf;
		bool inf;

		if (!f->from_memory ||
		    (f->kind != FP_DBG_FINDING_NAN_ORIGIN && f->kind != FP_DBG_FINDING_INF_ORIGIN))
			continue;
		inf = f->kind == FP_DBG_FINDING_INF_ORIGIN;
		nf = fp__dbg_param_storages(run, f->cands, f->ncands, from, FP__DBG_MAX_RANGES);
		/* the earliest write into that memory by an earlier launch */
		for (j = 0; j < s->nranges; j++) {
			const struct srange *r = &s->ranges[j];
			struct fp__dbg_range one = {r->lo, r->hi};

			if (r->inf != inf || r->launch >= launch ||
			    !fp__dbg_overlap(from, nf, &one, 1))
				continue;
			s->findings[r->origin - 1].descendants++;
			folded[inf] = r->origin;
			fp__dbg_findings_remove(fs, i);
			break;
		}
	}
	pthread_mutex_unlock(&s->lock);
}

/* ---- coverage ----------------------------------------------------------------------------- */

#define SUMMARY_MAX_UNOBSERVED 4096u

static int add_unobserved(struct fp_dbg_summary *s, uint32_t kix, const char *file, uint32_t line,
			  const char *source, const char *reason)
{
	uint32_t fid, rid, sid;
	uint64_t key, v;
	struct sunobserved *u;
	int st;

	if ((st = intern(s, file, &fid)) || (st = intern(s, reason, &rid)))
		return st;
	key = fp_hash_u64(((uint64_t)kix << 40) ^ ((uint64_t)fid << 20) ^ line ^
			  ((uint64_t)rid << 52));
	while (fp_hashmap_get(&s->unobs_ix, key, &v)) {
		u = &s->unobs[v];
		if (u->kernel == kix && u->file == fid && u->line == line && u->reason == rid)
			return FP_OK;
		key++;
	}
	st = grow((void **)&s->unobs, &s->ucap, s->nunobs + 1, sizeof(*s->unobs),
		  SUMMARY_MAX_UNOBSERVED);
	if (st == FP_ELIMIT) {
		s->dropped_unobserved++;
		return FP_OK;
	}
	if (st || (st = intern(s, source, &sid)) ||
	    (st = fp_hashmap_put(&s->unobs_ix, key, s->nunobs)))
		return st;
	u = &s->unobs[s->nunobs++];
	u->kernel = kix;
	u->file = fid;
	u->line = line;
	u->source = sid;
	u->reason = rid;
	return FP_OK;
}

/* The launch's coverage account: the kernel's latest, and every place it did not observe. */
static int add_coverage(struct fp_dbg_summary *s, uint32_t kix, const struct fp_dbg_run *run,
			const struct fp_dbg_launch *l)
{
	struct skernel *k = &s->kernels[kix];
	size_t i, n;
	int st;

	fp_dbg_run_coverage(run, &k->coverage);
	k->has_coverage = true;
	n = fp_dbg_run_unobserved_count(run);
	for (i = 0; i < n; i++) {
		const struct fp_dbg_unobserved *u = fp_dbg_run_unobserved(run, i);

		if (u && (st = add_unobserved(s, kix, fp__dbg_frame_file(run, l, u->frame), u->line,
					      u->source, u->reason)))
			return st;
	}
	n = fp_dbg_run_site_count(run);
	for (i = 0; i < n; i++) {
		uint32_t why = fp_dbg_run_site_unobservable(run, i);
		const struct fp_dbg_site *site;
		const struct fp_dbg_statement *stmt;

		if (!why)
			continue;
		site = fp_dbg_run_site(run, i);
		stmt = site ? fp_dbg_run_statement(run, site->statement) : NULL;
		if (stmt &&
		    (st = add_unobserved(s, kix, fp__dbg_frame_file(run, l, stmt->frame),
					 stmt->line, stmt->source, fp_dbg_addr_status_reason(why))))
			return st;
	}
	return FP_OK;
}

/* ---- writers ------------------------------------------------------------------------------ */

static const char *str(const struct fp_dbg_summary *s, uint32_t id)
{
	const char *p = fp_intern_str(s->strs, id, NULL);

	return p ? p : "";
}

/* kv string, or null for the empty string */
static int kv_opt(struct fp_jsonw *w, const char *k, const char *v)
{
	return v && v[0] ? fp_jsonw_kv_string(w, k, v) : fp_jsonw_kv_null(w, k);
}

static void kv_num_or_null(struct fp_jsonw *w, const char *k, int64_t v)
{
	if (v < 0)
		fp_jsonw_kv_null(w, k);
	else
		fp_jsonw_kv_int(w, k, v);
}

/* "distributed": the rank in a multi-process job, or null (flagprism/ranks.h merges these). */
static void write_distributed(const struct fp_dbg_summary *s, struct fp_jsonw *w)
{
	fp_jsonw_key(w, "distributed");
	if (s->rank < 0) {
		fp_jsonw_null(w);
		return;
	}
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_int(w, "rank", s->rank);
	kv_num_or_null(w, "local_rank", s->local_rank);
	kv_num_or_null(w, "world_size", s->world_size);
	kv_opt(w, "host", s->host);
	kv_opt(w, "device", s->device);
	fp_jsonw_object_end(w);
}

/* "worker": the pytest-xdist worker that ran this part of the program, or null (the summaries
 * of a session's workers are merged by fp_dbg_summary_write_parts()). */
static void write_worker(const struct fp_dbg_summary *s, struct fp_jsonw *w)
{
	fp_jsonw_key(w, "worker");
	if (!s->worker) {
		fp_jsonw_null(w);
		return;
	}
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "id", s->worker);
	kv_num_or_null(w, "count", s->worker_count);
	fp_jsonw_object_end(w);
}

/* The JSON document into `w` (which the caller finishes and frees); the lock is held. */
static void write_json_doc(struct fp_dbg_summary *s, struct fp_jsonw *w)
{
	size_t i, j;

	fp_jsonw_object_begin(w);
	fp_jsonw_kv_string(w, "schema", "flagprism.debug.summary");
	fp_jsonw_kv_int(w, "version", 1);
	fp_jsonw_kv_string(w, "flagprism_version", FP_VERSION_STRING);
	kv_opt(w, "mode", s->mode);
	kv_opt(w, "checks", s->checks);
	kv_opt(w, "command", s->command);
	kv_opt(w, "output_dir", s->output_dir);
	fp_jsonw_kv_bool(w, "complete", !s->incomplete && !s->incomplete_launches);
	if (s->incomplete || !s->incomplete_launches) {
		kv_opt(w, "incomplete_reason", s->incomplete);
	} else {
		char why[160];

		snprintf(why, sizeof(why),
			 "%" PRIu64 " launch%s did not record everything; what %s not record was "
			 "not checked",
			 s->incomplete_launches, s->incomplete_launches == 1 ? "" : "es",
			 s->incomplete_launches == 1 ? "it did" : "they did");
		fp_jsonw_kv_string(w, "incomplete_reason", why);
	}
	if (s->has_exit)
		fp_jsonw_kv_int(w, "exit_status", s->exit_status);
	else
		fp_jsonw_kv_null(w, "exit_status");
	write_distributed(s, w);
	write_worker(s, w);
	fp_jsonw_key(w, "totals");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, "kernels", s->nkernels + s->dropped_kernels);
	fp_jsonw_kv_uint(w, "launches", s->launches);
	for (i = 0; i < FP_DBG_LAUNCH_NSTATUS; i++)
		fp_jsonw_kv_uint(w, status_names[i], s->by_status[i]);
	fp_jsonw_kv_uint(w, "findings", s->nfindings + s->dropped_findings);
	fp_jsonw_kv_uint(w, "launches_with_findings", s->finding_launches);
	fp_jsonw_kv_uint(w, "reports", s->reports);
	fp_jsonw_kv_uint(w, "incomplete_launches", s->incomplete_launches);
	fp_jsonw_object_end(w);
	fp_jsonw_key(w, "dropped");
	fp_jsonw_object_begin(w);
	fp_jsonw_kv_uint(w, "kernels", s->dropped_kernels);
	fp_jsonw_kv_uint(w, "reasons", s->dropped_reasons);
	fp_jsonw_kv_uint(w, "findings", s->dropped_findings);
	fp_jsonw_kv_uint(w, "stack_frames", s->dropped_frames);
	fp_jsonw_kv_uint(w, "nan_links", s->dropped_ranges);
	fp_jsonw_kv_uint(w, "incomplete_launches", s->dropped_incomplete);
	fp_jsonw_object_end(w);
	/* every launch that did not record everything, with its own reason */
	fp_jsonw_key(w, FP_DBG_KEY_SUMMARY_INCOMPLETE);
	fp_jsonw_array_begin(w);
	for (i = 0; i < s->nincs; i++) {
		const struct sincomplete *e = &s->incs[i];

		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "kernel", str(s, s->kernels[e->kernel].name));
		fp_jsonw_kv_uint(w, "launch", e->launch);
		kv_opt(w, "report", str(s, e->report));
		fp_jsonw_kv_string(w, "reason", str(s, e->reason));
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_key(w, "kernels");
	fp_jsonw_array_begin(w);
	for (i = 0; i < s->nkernels; i++) {
		const struct skernel *k = &s->kernels[i];

		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "name", str(s, k->name));
		kv_opt(w, "source_file", str(s, k->file));
		fp_jsonw_kv_uint(w, "launches", k->launches);
		fp_jsonw_kv_uint(w, "instrumented", k->by_status[FP_DBG_LAUNCH_INSTRUMENTED]);
		fp_jsonw_kv_uint(w, "first_launch", k->first_launch);
		fp_jsonw_kv_uint(w, "findings", k->findings);
		fp_jsonw_kv_uint(w, "incomplete_launches", k->incomplete);
		kv_opt(w, "incomplete_reason", k->incomplete ? str(s, k->incomplete_reason) : NULL);
		fp_jsonw_key(w, "coverage");
		if (k->has_coverage) {
			fp_jsonw_object_begin(w);
			fp_jsonw_kv_uint(w, "memory_sites", k->coverage.memory_sites);
			fp_jsonw_kv_uint(w, "memory_sites_observed",
					 k->coverage.memory_sites_observed);
			fp_jsonw_kv_uint(w, "statements", k->coverage.statements);
			fp_jsonw_kv_uint(w, "statements_observed", k->coverage.statements_observed);
			fp_jsonw_object_end(w);
		} else {
			fp_jsonw_null(w);
		}
		fp_jsonw_key(w, "not_instrumented");
		fp_jsonw_array_begin(w);
		for (j = 0; j < s->nreasons; j++) {
			const struct sreason *r = &s->reasons[j];

			if (r->kernel != i)
				continue;
			fp_jsonw_object_begin(w);
			fp_jsonw_kv_string(w, "status", status_names[r->status]);
			fp_jsonw_kv_string(w, "reason", str(s, r->reason));
			fp_jsonw_kv_uint(w, "launches", r->count);
			fp_jsonw_kv_uint(w, "first_launch", r->first_launch);
			fp_jsonw_object_end(w);
		}
		fp_jsonw_array_end(w);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	{
		struct fp_dbg_coverage c = {0};

		for (i = 0; i < s->nkernels; i++) {
			c.memory_sites += s->kernels[i].coverage.memory_sites;
			c.memory_sites_observed += s->kernels[i].coverage.memory_sites_observed;
			c.statements += s->kernels[i].coverage.statements;
			c.statements_observed += s->kernels[i].coverage.statements_observed;
		}
		fp_jsonw_key(w, "coverage");
		fp_jsonw_object_begin(w);
		fp_jsonw_kv_uint(w, "memory_sites", c.memory_sites);
		fp_jsonw_kv_uint(w, "memory_sites_observed", c.memory_sites_observed);
		fp_jsonw_kv_uint(w, "statements", c.statements);
		fp_jsonw_kv_uint(w, "statements_observed", c.statements_observed);
		fp_jsonw_key(w, "unobserved");
		fp_jsonw_array_begin(w);
		for (i = 0; i < s->nunobs; i++) {
			const struct sunobserved *u = &s->unobs[i];

			fp_jsonw_object_begin(w);
			fp_jsonw_kv_string(w, "kernel", str(s, s->kernels[u->kernel].name));
			kv_opt(w, "file", str(s, u->file));
			fp_jsonw_kv_uint(w, "line", u->line);
			fp_jsonw_kv_string(w, "source", str(s, u->source));
			fp_jsonw_kv_string(w, "reason", str(s, u->reason));
			fp_jsonw_object_end(w);
		}
		fp_jsonw_array_end(w);
		fp_jsonw_kv_uint(w, "unobserved_dropped", s->dropped_unobserved);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_key(w, FP_DBG_KEY_SUMMARY_FINDINGS);
	fp_jsonw_array_begin(w);
	for (i = 0; i < s->nfindings; i++) {
		const struct sfinding *e = &s->findings[i];

		fp_jsonw_object_begin(w);
		fp_jsonw_kv_string(w, "kind",
				   fp_dbg_finding_kind_name((enum fp_dbg_finding_kind)e->kind));
		fp_jsonw_kv_string(w, "kernel", str(s, s->kernels[e->kernel].name));
		kv_opt(w, "file", str(s, e->file));
		fp_jsonw_kv_uint(w, "line", e->line);
		kv_opt(w, "source", str(s, e->source));
		kv_opt(w, "subject", str(s, e->subject));
		kv_opt(w, "param", str(s, e->param));
		fp_jsonw_kv_uint(w, "program", e->program);
		fp_jsonw_kv_uint(w, "launch", e->launch);
		fp_jsonw_kv_uint(w, "launches", e->launches);
		fp_jsonw_kv_uint(w, "programs", e->programs);
		fp_jsonw_kv_uint(w, "instances", e->instances);
		if (e->kind == FP_DBG_FINDING_NAN_ORIGIN || e->kind == FP_DBG_FINDING_INF_ORIGIN) {
			fp_jsonw_kv_bool(w, "from_memory", e->from_memory);
			fp_jsonw_kv_uint(w, "descendants", e->descendants);
		}
		fp_jsonw_kv_string(w, "message", str(s, e->message));
		kv_opt(w, FP_DBG_KEY_SUMMARY_FINDING_REPORT, str(s, e->report));
		kv_opt(w, "test", str(s, e->test));
		fp_jsonw_key(w, "stack");
		fp_jsonw_array_begin(w);
		for (j = 0; j < e->nstack; j++)
			fp_jsonw_string(w, str(s, s->frames[e->stack0 + j]));
		fp_jsonw_array_end(w);
		fp_jsonw_object_end(w);
	}
	fp_jsonw_array_end(w);
	fp_jsonw_object_end(w);
}

static int write_json(struct fp_dbg_summary *s, FILE *f)
{
	struct fp_jsonw *w = fp_jsonw_new_file(f, FP_JSONW_PRETTY);
	int st;

	if (!w)
		return FP_ENOMEM;
	write_json_doc(s, w);
	st = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	if (!st)
		st = fputc('\n', f) == EOF ? FP_EIO : FP_OK;
	return st;
}

int fp__dbg_summary_json(struct fp_dbg_summary *s, struct fp_strbuf *sb)
{
	struct fp_jsonw *w;
	int st;

	pthread_mutex_lock(&s->lock);
	w = fp_jsonw_new_strbuf(sb, FP_JSONW_PRETTY);
	if (!w) {
		pthread_mutex_unlock(&s->lock);
		return FP_ENOMEM;
	}
	write_json_doc(s, w);
	st = fp_jsonw_finish(w);
	fp_jsonw_free(w);
	pthread_mutex_unlock(&s->lock);
	return st;
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

static void plural(struct fp__tbuf *t, uint64_t n, const char *one, const char *many)
{
	fp__tb_printf(t, "%" PRIu64 " %s", n, n == 1 ? one : many);
}

/*
 * Text for one field of the text summary: a kernel's name, a message or a source line may hold
 * control characters (ESC, BEL, a newline: __name__ can be set to any string) that would drive
 * the terminal the summary is printed to or forge lines of it; they are shown as '?', as `flagprism
 * view` shows them. A clean string is returned as it is; another is copied, cleaned, into one of
 * a few rotating buffers (enough for the fields of one line), cut at TXT_MAX bytes.
 */
#define TXT_SLOTS 8
#define TXT_MAX 1024

struct txt_scratch {
	unsigned next;
	char buf[TXT_SLOTS][TXT_MAX];
};

static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

static const char *txt(struct txt_scratch *x, const char *s)
{
	const char *p;
	char *out;
	size_t i;

	for (p = s; *p && !is_control((unsigned char)*p); p++)
		;
	if (!*p)
		return s;
	out = x->buf[x->next++ % TXT_SLOTS];
	for (i = 0; s[i] && i < TXT_MAX - 1; i++)
		out[i] = is_control((unsigned char)s[i]) ? '?' : s[i];
	out[i] = '\0';
	return out;
}

static int write_txt(struct fp_dbg_summary *s, FILE *f)
{
	struct fp__tbuf *t = fp_malloc(sizeof(*t));
	struct txt_scratch *x = fp_malloc(sizeof(*x));
	const char *tag = s->command && s->command[0] ? s->command : "flagprism debug";
	uint64_t not_instr = s->launches - s->by_status[FP_DBG_LAUNCH_INSTRUMENTED];
	size_t i, j, width = 6;
	int st;

	if (!t || !x) {
		fp_free(t);
		fp_free(x);
		return FP_ENOMEM;
	}
	x->next = 0;
	fp__tb_init(t, f);
	fp__tb_printf(t, "%s: ", tag);
	plural(t, s->nkernels + s->dropped_kernels, "kernel", "kernels");
	fp__tb_str(t, ", ");
	plural(t, s->launches, "launch", "launches");
	fp__tb_printf(t, ": %" PRIu64 " instrumented", s->by_status[FP_DBG_LAUNCH_INSTRUMENTED]);
	if (not_instr)
		fp__tb_printf(t, ", %" PRIu64 " not", not_instr);
	fp__tb_ch(t, '\n');
	if (s->rank >= 0) {
		fp__tb_printf(t, "%s: rank %" PRId64, tag, s->rank);
		if (s->world_size > 0)
			fp__tb_printf(t, " of %" PRId64, s->world_size);
		if (s->host && s->host[0])
			fp__tb_printf(t, " on %s", s->host);
		fp__tb_ch(t, '\n');
	}
	if (s->worker) {
		fp__tb_printf(t, "%s: pytest-xdist worker %s", tag, s->worker);
		if (s->worker_count > 0)
			fp__tb_printf(t, " of %" PRId64, s->worker_count);
		fp__tb_str(t,
			   " (merged with the other workers' parts into the session's summary)\n");
	}
	if (s->incomplete)
		fp__tb_printf(t, "%s: INCOMPLETE: %s\n", tag, txt(x, s->incomplete));
	for (i = 0; i < s->nkernels; i++)
		if (s->kernels[i].incomplete)
			fp__tb_printf(t,
				      "%s: INCOMPLETE: %s: %" PRIu64
				      " launch(es) did not record everything, so what they did not "
				      "record was not checked: %s\n",
				      tag, txt(x, str(s, s->kernels[i].name)),
				      s->kernels[i].incomplete,
				      txt(x, str(s, s->kernels[i].incomplete_reason)));
	for (i = 0; i < s->nincs && i < 8; i++) {
		const struct sincomplete *e = &s->incs[i];

		fp__tb_printf(t, "    incomplete: %s launch %" PRIu64 "%s%s: %s\n",
			      txt(x, str(s, s->kernels[e->kernel].name)), e->launch,
			      str(s, e->report)[0] ? ", report " : "",
			      str(s, e->report)[0] ? txt(x, str(s, e->report)) : "",
			      txt(x, str(s, e->reason)));
	}
	if (s->nincs + s->dropped_incomplete > 8)
		fp__tb_printf(t,
			      "    ... and %" PRIu64 " more incomplete launches (summary.json)\n",
			      (uint64_t)s->nincs + s->dropped_incomplete - 8);
	if (s->nkernels) {
		for (i = 0; i < s->nkernels; i++)
			width = FP_MAX(width, strlen(str(s, s->kernels[i].name)));
		width = FP_MIN(width, 60);
		fp__tb_str(t, "  ");
		fp__tb_left(t, "kernel", (unsigned)width);
		fp__tb_str(t, "  launches  instrumented  findings  file\n");
		for (i = 0; i < s->nkernels; i++) {
			const struct skernel *k = &s->kernels[i];

			fp__tb_str(t, "  ");
			fp__tb_left(t, txt(x, str(s, k->name)), (unsigned)width);
			fp__tb_u64(t, k->launches, 10);
			fp__tb_u64(t, k->by_status[FP_DBG_LAUNCH_INSTRUMENTED], 14);
			fp__tb_u64(t, k->findings, 10);
			fp__tb_str(t, "  ");
			fp__tb_str(t, str(s, k->file)[0] ? txt(x, str(s, k->file)) : "-");
			fp__tb_ch(t, '\n');
		}
	}
	{
		struct fp_dbg_coverage c = {0};
		bool any = false;

		for (i = 0; i < s->nkernels; i++) {
			any |= s->kernels[i].has_coverage;
			c.memory_sites += s->kernels[i].coverage.memory_sites;
			c.memory_sites_observed += s->kernels[i].coverage.memory_sites_observed;
			c.statements += s->kernels[i].coverage.statements;
			c.statements_observed += s->kernels[i].coverage.statements_observed;
		}
		if (any)
			fp__tb_printf(t,
				      "  coverage: %" PRIu64 " of %" PRIu64
				      " memory sites, %" PRIu64 " of %" PRIu64
				      " statements observed\n",
				      c.memory_sites_observed, c.memory_sites,
				      c.statements_observed, c.statements);
		for (i = 0; i < s->nunobs && i < 20; i++) {
			const struct sunobserved *u = &s->unobs[i];

			fp__tb_printf(t, "    not observed: %s at %s:%u: %s (%s)\n",
				      txt(x, str(s, s->kernels[u->kernel].name)),
				      base_name(txt(x, str(s, u->file))), u->line,
				      txt(x, str(s, u->source)), txt(x, str(s, u->reason)));
		}
		if (s->nunobs + s->dropped_unobserved > 20)
			fp__tb_printf(t,
				      "    ... and %" PRIu64
				      " more places not observed (summary.json)\n",
				      (uint64_t)s->nunobs + s->dropped_unobserved - 20);
	}
	if (s->nreasons) {
		fp__tb_str(t, "not instrumented:\n");
		for (j = 0; j < s->nreasons; j++) {
			const struct sreason *r = &s->reasons[j];

			fp__tb_printf(t, "  %s: ", txt(x, str(s, s->kernels[r->kernel].name)));
			plural(t, r->count, "launch", "launches");
			fp__tb_printf(t, " %s: %s\n", status_names[r->status],
				      txt(x, str(s, r->reason)));
		}
	}
	if (s->dropped_kernels || s->dropped_reasons || s->dropped_findings)
		fp__tb_printf(t,
			      "%s: the summary is capped: %" PRIu64 " kernels, %" PRIu64
			      " reasons and %" PRIu64 " findings are counted but not listed\n",
			      tag, s->dropped_kernels, s->dropped_reasons, s->dropped_findings);
	if (s->nfindings) {
		fp__tb_printf(t, "%s: ", tag);
		plural(t, s->nfindings + s->dropped_findings, "finding", "findings");
		fp__tb_str(t, ":\n");
		for (i = 0; i < s->nfindings; i++) {
			const struct sfinding *e = &s->findings[i];

			fp__tb_printf(
				t, "  %s in %s at %s:%u, program %" PRIu64 ", launch %" PRIu64,
				fp_dbg_finding_kind_name((enum fp_dbg_finding_kind)e->kind),
				txt(x, str(s, s->kernels[e->kernel].name)),
				base_name(txt(x, str(s, e->file))), e->line, e->program, e->launch);
			if (e->launches > 1)
				fp__tb_printf(t, " (in %" PRIu64 " launches)", e->launches);
			fp__tb_printf(t, ": %s\n", txt(x, str(s, e->message)));
			if (e->descendants)
				fp__tb_printf(t,
					      "      %" PRIu64
					      " later finding%s at loads descend from it "
					      "(counted here, not repeated)\n",
					      e->descendants, e->descendants == 1 ? "" : "s");
			if (str(s, e->source)[0])
				fp__tb_printf(t, "      %u | %s\n", e->line,
					      txt(x, str(s, e->source)));
			if (str(s, e->test)[0])
				fp__tb_printf(t, "      test: %s\n", txt(x, str(s, e->test)));
			for (j = 0; j < e->nstack; j++)
				fp__tb_printf(t, "      %s %s\n", j ? "  " : "at",
					      txt(x, str(s, s->frames[e->stack0 + j])));
			if (str(s, e->report)[0])
				fp__tb_printf(t, "      report: %s\n", txt(x, str(s, e->report)));
		}
	} else if (s->by_status[FP_DBG_LAUNCH_INSTRUMENTED]) {
		fp__tb_printf(t, "%s: no findings\n", tag);
	}
	st = fp__tb_flush(t);
	fp_free(t);
	fp_free(x);
	return st;
}

int fp_dbg_summary_write_format(struct fp_dbg_summary *s, const char *format, FILE *f,
				struct fp_diag *diag)
{
	int st;

	if (!s || !format || !f)
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "fp_dbg_summary_write_format: NULL argument");
	pthread_mutex_lock(&s->lock);
	if (!strcmp(format, "json"))
		st = write_json(s, f);
	else if (!strcmp(format, "txt"))
		st = write_txt(s, f);
	else
		st = fp_diag_set(diag, FP_ENOENT, 0, "unknown summary format \"%s\" (json, txt)",
				 format);
	pthread_mutex_unlock(&s->lock);
	if (!st && ferror(f))
		st = fp_diag_set(diag, FP_EIO, 0, "write error in the %s summary", format);
	return st;
}

/* Write <dir>/<name> through fp_outfile (a temporary file renamed into place). */
static int write_one(struct fp_dbg_summary *s, const char *dir, const char *name,
		     const char *format, struct fp_diag *diag)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *path = fp_malloc(n);
	struct fp_outfile of;
	int st;

	if (!path)
		return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	snprintf(path, n, "%s/%s", dir, name);
	st = fp_outfile_open(&of, path, 0, diag);
	if (!st) {
		st = fp_dbg_summary_write_format(s, format, of.f, diag);
		st = fp_outfile_finish(&of, st, diag);
	}
	fp_free(path);
	return st;
}

int fp_dbg_summary_write(struct fp_dbg_summary *s, const char *dir, struct fp_diag *diag)
{
	struct stat sb;
	int st;

	if (!s || !dir || !dir[0])
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_dbg_summary_write: no directory");
	if (mkdir(dir, 0777) && !(errno == EEXIST && stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)))
		return fp_diag_set(diag, FP_EIO, 0, "cannot create directory %s: %s", dir,
				   strerror(errno));
	if ((st = write_one(s, dir, "summary.json", "json", diag)))
		return st;
	return write_one(s, dir, "summary.txt", "txt", diag);
}
