/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Debugger's launch pipeline (<flagprism/debug-pipe.h>): a ring of slices of one pool
 * (reserved in launch order, given back in that order), a queue of submitted launches and one
 * background thread that waits for each launch's read back, decodes it, writes its reports and
 * accounts for it in the summary. Everything is bounded: the pool's bytes, the slices and jobs in
 * flight (FP__PIPE_MAX_INFLIGHT), the results kept. Not here: the record format (decode.c), the
 * reports (report/), moving the bytes (<flagprism/devmem.h>: the vendor's driver, src/backend/).
 */
#include "fp-setup.h"

#include <pthread.h>

#include <flagprism/debug-pipe.h>
#include <flagprism/devmem.h>

#define FP__PIPE_MAX_INFLIGHT 4096u
#define FP__PIPE_ALIGN 256u

struct slice {
	size_t off, size;
	bool done;
};

struct job {
	size_t off, bytes;
	struct fp_devmem_event *ev; /* NULL for a host-only pipeline */
	char *kernel, *file, *sites, *launch;
	size_t site_len, launch_len;
	uint64_t index;
};

struct fp_dbg_pipe {
	pthread_mutex_t mu;
	pthread_cond_t cv_work; /* a job was queued, or stop */
	pthread_cond_t cv_done; /* a job finished: pool space, queue space, drain */
	pthread_t thread;
	bool started, stop;
	struct fp_dbg_summary *summary;
	struct fp_dbg_pipe_options opt;
	unsigned char *host;
	size_t host_bytes; /* of host (a spare taken may be larger than the pool) */
	bool pinned;
	/* the pool's slices in flight, oldest first (ring of FP__PIPE_MAX_INFLIGHT) */
	struct slice slices[FP__PIPE_MAX_INFLIGHT];
	size_t first, nslices;
	/* submitted jobs not yet taken by the thread (ring), and the one it works on */
	struct job jobs[FP__PIPE_MAX_INFLIGHT];
	size_t jfirst, njobs;
	bool busy;
	struct fp_dbg_pipe_result *results;
	size_t nresults, rescap;
	uint64_t reports_written;
	struct fp_dbg_pipe_stats st;
	/* read-back events whose jobs are done, recorded again by later submits (a driver event
	 * made per launch costs the launch path) */
	struct fp_devmem_event *spare_ev[FP__PIPE_MAX_INFLIGHT];
	size_t nspare_ev;
	bool span; /* the device pool is a devmem span (its context looked up once) */
};

static size_t align_up(size_t n)
{
	return (n + FP__PIPE_ALIGN - 1) & ~(size_t)(FP__PIPE_ALIGN - 1);
}

/* Free a job's strings; its event goes to the pipe's spares (lock held) or is freed. */
static void job_release(struct fp_dbg_pipe *p, struct job *j)
{
	if (j->ev && p->nspare_ev < FP__PIPE_MAX_INFLIGHT)
		p->spare_ev[p->nspare_ev++] = j->ev;
	else
		fp_devmem_event_free(j->ev);
	fp_free(j->kernel);
	fp_free(j->file);
	fp_free(j->sites);
	fp_free(j->launch);
	memset(j, 0, sizeof(*j));
}

/* ---- the pool ----------------------------------------------------------------------------- */

/* Where a slice of `size` bytes can go now, or SIZE_MAX (lock held). */
static size_t place(const struct fp_dbg_pipe *p, size_t size)
{
	const struct slice *old, *last;
	size_t tail, end;

	if (p->nslices == FP__PIPE_MAX_INFLIGHT)
		return SIZE_MAX;
	if (p->nslices == 0)
		return size <= p->opt.pool_bytes ? 0 : SIZE_MAX;
	old = &p->slices[p->first];
	last = &p->slices[(p->first + p->nslices - 1) % FP__PIPE_MAX_INFLIGHT];
	tail = old->off;
	end = last->off + last->size;
	if (last->off >= tail) { /* in use: [tail, end) */
		if (size <= p->opt.pool_bytes - end)
			return end;
		return size <= tail ? 0 : SIZE_MAX;
	}
	/* wrapped: in use [tail, pool) and [0, end) */
	return size <= tail - end ? end : SIZE_MAX;
}

static void trim(struct fp_dbg_pipe *p)
{
	while (p->nslices && p->slices[p->first].done) {
		p->first = (p->first + 1) % FP__PIPE_MAX_INFLIGHT;
		p->nslices--;
	}
	if (!p->nslices)
		p->first = 0;
}

static struct slice *find_slice(struct fp_dbg_pipe *p, size_t off)
{
	size_t i;

	for (i = 0; i < p->nslices; i++) {
		struct slice *s = &p->slices[(p->first + i) % FP__PIPE_MAX_INFLIGHT];

		if (s->off == off && !s->done)
			return s;
	}
	return NULL;
}

static size_t in_flight(const struct fp_dbg_pipe *p)
{
	size_t i, n = 0;

	for (i = 0; i < p->nslices; i++) {
		const struct slice *s = &p->slices[(p->first + i) % FP__PIPE_MAX_INFLIGHT];

		if (!s->done)
			n += s->size;
	}
	return n;
}

int fp_dbg_pipe_reserve(struct fp_dbg_pipe *p, size_t bytes, size_t *offset, struct fp_diag *diag)
{
	size_t size, off;
	bool waited = false;

	if (!p || !offset || !bytes)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_dbg_pipe_reserve: bad argument");
	size = align_up(bytes);
	if (size > p->opt.pool_bytes || size < bytes)
		return fp_diag_set(
			diag, FP_ELIMIT, 0,
			"a record buffer of %zu bytes does not fit the pipeline's pool of "
			"%zu bytes",
			bytes, p->opt.pool_bytes);
	pthread_mutex_lock(&p->mu);
	while ((off = place(p, size)) == SIZE_MAX) {
		waited = true;
		pthread_cond_wait(&p->cv_done, &p->mu);
	}
	if (waited)
		p->st.pool_waits++;
	p->slices[(p->first + p->nslices) % FP__PIPE_MAX_INFLIGHT] =
		(struct slice){.off = off, .size = size, .done = false};
	p->nslices++;
	pthread_mutex_unlock(&p->mu);
	*offset = off;
	return FP_OK;
}

void fp_dbg_pipe_unreserve(struct fp_dbg_pipe *p, size_t offset)
{
	struct slice *s;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	s = find_slice(p, offset);
	if (s) {
		s->done = true;
		trim(p);
		pthread_cond_broadcast(&p->cv_done);
	}
	pthread_mutex_unlock(&p->mu);
}

void *fp_dbg_pipe_host(struct fp_dbg_pipe *p, size_t offset)
{
	return p && offset < p->opt.pool_bytes ? p->host + offset : NULL;
}

int fp_dbg_pipe_fill(struct fp_dbg_pipe *p, size_t offset, const void *data, size_t len,
		     struct fp_diag *diag)
{
	struct slice *s;
	bool ok;

	if (!p || (len && !data))
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_dbg_pipe_fill: NULL argument");
	pthread_mutex_lock(&p->mu);
	s = find_slice(p, offset);
	ok = s && len <= s->size;
	pthread_mutex_unlock(&p->mu);
	if (!ok)
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "fp_dbg_pipe_fill: no reserved slice of %zu bytes at %zu", len,
				   offset);
	memcpy(p->host + offset, data, len);
	return FP_OK;
}

int fp_dbg_pipe_prepare(struct fp_dbg_pipe *p, size_t offset, size_t bytes, const void *header,
			size_t header_len, uint64_t stream, struct fp_diag *diag)
{
	int st;

	if (!p || header_len > bytes || offset > p->opt.pool_bytes ||
	    bytes > p->opt.pool_bytes - offset || (header_len && !header))
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_dbg_pipe_prepare: bad slice");
	if (!p->opt.device_pool) {
		memset(p->host + offset, 0, bytes);
		memcpy(p->host + offset, header, header_len);
		return FP_OK;
	}
	/* the header goes through the slice's page-locked host memory, so the copy is truly
	 * asynchronous; the slice's host bytes are not read again before its read back lands */
	memcpy(p->host + offset, header, header_len);
	if ((st = fp_devmem_zero(p->opt.device_pool + offset, bytes, stream, diag)))
		return st;
	return fp_devmem_write(p->opt.device_pool + offset, p->host + offset, header_len, stream,
			       diag);
}

/* ---- the background thread ---------------------------------------------------------------- */

static char *dup_msg(const char *s)
{
	return s ? fp_strdup(s) : NULL;
}

static void add_result(struct fp_dbg_pipe *p, struct fp_dbg_pipe_result *r)
{
	size_t max = p->opt.max_results ? p->opt.max_results : 4096;

	if (p->nresults == max) {
		fp_dbg_pipe_results_free(p->results, 1);
		memmove(p->results, p->results + 1, (p->nresults - 1) * sizeof(*p->results));
		p->nresults--;
		p->st.results_dropped++;
	}
	if (p->nresults == p->rescap) {
		size_t ncap = p->rescap ? p->rescap * 2 : 64;
		void *np;

		if (ncap > max)
			ncap = max;
		np = fp_reallocarray(p->results, ncap, sizeof(*p->results));
		if (!np) {
			/* out of memory: the summary has the launch; the result is dropped */
			fp_dbg_outputs_release(&r->out);
			fp_free(r->message);
			fp_free(r->kernel);
			p->st.results_dropped++;
			return;
		}
		p->results = np;
		p->rescap = ncap;
	}
	p->results[p->nresults++] = *r;
}

static void process(struct fp_dbg_pipe *p, struct job *j, struct fp_dbg_pipe_result *r)
{
	struct fp_dbg_run *run = NULL;
	struct fp_diag diag;
	unsigned flags = p->opt.report_flags;
	bool suppress;
	char why[sizeof(diag.msg) + 160];
	int st;

	fp_diag_clear(&diag);
	memset(r, 0, sizeof(*r));
	fp_dbg_outputs_init(&r->out);
	r->launch_index = j->index;
	r->kernel = dup_msg(j->kernel);
	if (j->ev && (st = fp_devmem_event_wait(j->ev, &diag))) {
		snprintf(why, sizeof(why),
			 "the device reported an error before this launch's records were read back "
			 "(this kernel, or one queued before it, faulted): %s",
			 diag.msg);
		goto fail_decode;
	}
	st = fp_dbg_decode(p->host + j->off, j->bytes, j->sites, j->site_len, &run, &diag);
	if (st) {
		snprintf(why, sizeof(why), "decoding the records failed: %s", diag.msg);
		goto fail_decode;
	}
	pthread_mutex_lock(&p->mu);
	suppress = p->opt.max_reports && p->reports_written >= p->opt.max_reports;
	pthread_mutex_unlock(&p->mu);
	if (suppress)
		flags |= FP_DBG_REPORT_NO_FILES;
	st = fp_dbg_report(run, j->launch, j->launch_len, p->summary, j->index, flags, &r->out,
			   &r->nfindings, &diag);
	fp_dbg_run_free(run);
	r->status = st;
	if (st && st != FP_EOVERFLOW) {
		/* the records were decoded; the reports could not be written */
		r->message = dup_msg(diag.msg);
	} else if (st == FP_EOVERFLOW) {
		r->message = dup_msg(diag.msg);
	}
	pthread_mutex_lock(&p->mu);
	if (r->out.txt)
		p->reports_written++;
	if (suppress && r->nfindings)
		p->st.reports_suppressed++;
	pthread_mutex_unlock(&p->mu);
	fp_dbg_summary_launch(p->summary, j->kernel, j->file, FP_DBG_LAUNCH_INSTRUMENTED, NULL, 1,
			      j->index, NULL);
	return;

fail_decode:
	r->status = st;
	r->message = dup_msg(why);
	fp_dbg_summary_launch(p->summary, j->kernel, j->file, FP_DBG_LAUNCH_FAILED, why, 1,
			      j->index, NULL);
	pthread_mutex_lock(&p->mu);
	p->st.failed++;
	pthread_mutex_unlock(&p->mu);
}

static void *worker(void *arg)
{
	struct fp_dbg_pipe *p = arg;
	struct fp_dbg_pipe_result r;
	struct job j;
	struct slice *s;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->njobs && !p->stop)
			pthread_cond_wait(&p->cv_work, &p->mu);
		if (!p->njobs)
			break;
		j = p->jobs[p->jfirst];
		memset(&p->jobs[p->jfirst], 0, sizeof(j));
		p->jfirst = (p->jfirst + 1) % FP__PIPE_MAX_INFLIGHT;
		p->njobs--;
		p->busy = true;
		pthread_mutex_unlock(&p->mu);

		process(p, &j, &r);

		pthread_mutex_lock(&p->mu);
		s = find_slice(p, j.off);
		if (s) {
			s->done = true;
			trim(p);
		}
		job_release(p, &j);
		add_result(p, &r);
		p->st.done++;
		p->busy = false;
		pthread_cond_broadcast(&p->cv_done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* ---- the spare page-locked pool ----------------------------------------------------------- */

/*
 * Page-locking a pool is slow (about 0.1 s for 256 MiB on the H200's host) and a program that
 * switches the Debugger on and off pays it at every switch: a freed pipeline's page-locked pool
 * is kept as the process's one spare and taken by the next pipeline that fits in it.
 * fp_dbg_pipe_release_spare() frees it.
 */
static pthread_mutex_t spare_mu = PTHREAD_MUTEX_INITIALIZER;
static void *spare;
static size_t spare_bytes;

/* The spare if it holds `bytes` (its size in *got), or NULL. */
static void *spare_take(size_t bytes, size_t *got)
{
	void *h = NULL;

	pthread_mutex_lock(&spare_mu);
	if (spare && spare_bytes >= bytes) {
		h = spare;
		*got = spare_bytes;
		spare = NULL;
		spare_bytes = 0;
	}
	pthread_mutex_unlock(&spare_mu);
	return h;
}

/* Keep `h` (`bytes` long) as the spare; frees the smaller of it and the one held. */
static void spare_give(void *h, size_t bytes)
{
	void *drop = h;

	pthread_mutex_lock(&spare_mu);
	if (!spare || spare_bytes < bytes) {
		drop = spare;
		spare = h;
		spare_bytes = bytes;
	}
	pthread_mutex_unlock(&spare_mu);
	fp_devmem_host_free(drop);
}

size_t fp_dbg_pipe_release_spare(void)
{
	void *h;
	size_t n;

	pthread_mutex_lock(&spare_mu);
	h = spare;
	n = spare_bytes;
	spare = NULL;
	spare_bytes = 0;
	pthread_mutex_unlock(&spare_mu);
	fp_devmem_host_free(h);
	return h ? n : 0;
}

/* ---- life cycle --------------------------------------------------------------------------- */

int fp_dbg_pipe_new(struct fp_dbg_pipe **out, struct fp_dbg_summary *summary,
		    const struct fp_dbg_pipe_options *opt, struct fp_diag *diag)
{
	struct fp_dbg_pipe *p;
	int st;

	if (!out || !summary || !opt || opt->pool_bytes < 4096)
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "fp_dbg_pipe_new: a summary and a pool of at least 4096 bytes "
				   "are needed");
	*out = NULL;
	p = fp_calloc(1, sizeof(*p));
	if (!p)
		return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	p->summary = summary;
	p->opt = *opt;
	p->opt.pool_bytes &= ~(size_t)(FP__PIPE_ALIGN - 1);
	if (opt->device_pool) {
		void *h = spare_take(p->opt.pool_bytes, &p->host_bytes);

		if (!h) {
			if ((st = fp_devmem_host_alloc(opt->device_pool, p->opt.pool_bytes, &h,
						       diag)))
				goto fail_host;
			p->host_bytes = p->opt.pool_bytes;
		}
		p->host = h;
		p->pinned = true;
		/* optional: without it every call on the pool asks the driver for its context */
		p->span = fp_devmem_span_add(opt->device_pool, p->opt.pool_bytes, NULL) == FP_OK;
	} else {
		p->host = fp_malloc(p->opt.pool_bytes);
		if (!p->host) {
			st = fp_diag_set(diag, FP_ENOMEM, 0, "out of memory (pool of %zu bytes)",
					 p->opt.pool_bytes);
			goto fail_host;
		}
	}
	if (pthread_mutex_init(&p->mu, NULL)) {
		st = fp_diag_set(diag, FP_ENOMEM, 0, "cannot make a mutex");
		goto fail_mu;
	}
	if (pthread_cond_init(&p->cv_work, NULL) || pthread_cond_init(&p->cv_done, NULL)) {
		st = fp_diag_set(diag, FP_ENOMEM, 0, "cannot make a condition variable");
		goto fail_cv;
	}
	if (pthread_create(&p->thread, NULL, worker, p)) {
		st = fp_diag_set(diag, FP_ENOMEM, 0, "cannot start the pipeline's thread");
		goto fail_cv;
	}
	p->started = true;
	p->st.pool_bytes = p->opt.pool_bytes;
	*out = p;
	return FP_OK;

fail_cv:
	pthread_cond_destroy(&p->cv_work);
	pthread_cond_destroy(&p->cv_done);
	pthread_mutex_destroy(&p->mu);
fail_mu:
	if (p->span)
		fp_devmem_span_remove(opt->device_pool);
	if (p->pinned)
		spare_give(p->host, p->host_bytes);
	else
		fp_free(p->host);
fail_host:
	fp_free(p);
	return st;
}

int fp_dbg_pipe_submit(struct fp_dbg_pipe *p, size_t offset, size_t bytes, uint64_t stream,
		       const struct fp_dbg_pipe_job *job, struct fp_diag *diag)
{
	struct job j = {0};
	struct slice *s;
	int st;

	if (!p || !job || !job->kernel || !job->site_table || !job->launch_json)
		return fp_diag_set(diag, FP_EINVAL, 0, "fp_dbg_pipe_submit: NULL argument");
	pthread_mutex_lock(&p->mu);
	s = find_slice(p, offset);
	st = !s || bytes > s->size ? FP_EINVAL : FP_OK;
	pthread_mutex_unlock(&p->mu);
	if (st)
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "fp_dbg_pipe_submit: no reserved slice of %zu bytes at %zu",
				   bytes, offset);
	j.off = offset;
	j.bytes = bytes;
	j.index = job->launch_index;
	j.site_len = job->site_len;
	j.launch_len = job->launch_len;
	j.kernel = fp_strdup(job->kernel);
	j.file = fp_strdup(job->source_file ? job->source_file : "");
	j.sites = fp_strndup(job->site_table, job->site_len);
	j.launch = fp_strndup(job->launch_json, job->launch_len);
	if (!j.kernel || !j.file || !j.sites || !j.launch) {
		st = fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
		goto fail_job;
	}
	if (p->opt.device_pool) {
		pthread_mutex_lock(&p->mu);
		if (p->nspare_ev)
			j.ev = p->spare_ev[--p->nspare_ev];
		pthread_mutex_unlock(&p->mu);
		if ((st = fp_devmem_read_async(p->host + offset, p->opt.device_pool + offset, bytes,
					       stream, &j.ev, diag)))
			goto fail_job;
	}
	pthread_mutex_lock(&p->mu);
	while (p->njobs == FP__PIPE_MAX_INFLIGHT)
		pthread_cond_wait(&p->cv_done, &p->mu);
	p->jobs[(p->jfirst + p->njobs) % FP__PIPE_MAX_INFLIGHT] = j;
	p->njobs++;
	p->st.submitted++;
	pthread_cond_signal(&p->cv_work);
	pthread_mutex_unlock(&p->mu);
	return FP_OK;

fail_job:
	pthread_mutex_lock(&p->mu);
	job_release(p, &j);
	pthread_mutex_unlock(&p->mu);
	fp_dbg_pipe_unreserve(p, offset);
	return st;
}

void fp_dbg_pipe_drain(struct fp_dbg_pipe *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	while (p->njobs || p->busy)
		pthread_cond_wait(&p->cv_done, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

size_t fp_dbg_pipe_take(struct fp_dbg_pipe *p, struct fp_dbg_pipe_result **results)
{
	size_t n;

	*results = NULL;
	if (!p)
		return 0;
	pthread_mutex_lock(&p->mu);
	n = p->nresults;
	*results = p->results;
	p->results = NULL;
	p->nresults = p->rescap = 0;
	pthread_mutex_unlock(&p->mu);
	return n;
}

void fp_dbg_pipe_results_free(struct fp_dbg_pipe_result *results, size_t n)
{
	size_t i;

	if (!results)
		return;
	for (i = 0; i < n; i++) {
		fp_dbg_outputs_release(&results[i].out);
		fp_free(results[i].message);
		fp_free(results[i].kernel);
	}
	fp_free(results);
}

void fp_dbg_pipe_stats(struct fp_dbg_pipe *p, struct fp_dbg_pipe_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	*st = p->st;
	st->in_flight_bytes = in_flight(p);
	pthread_mutex_unlock(&p->mu);
}

void fp_dbg_pipe_free(struct fp_dbg_pipe *p)
{
	size_t i;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_broadcast(&p->cv_work);
	pthread_mutex_unlock(&p->mu);
	if (p->started)
		pthread_join(p->thread, NULL);
	for (i = 0; i < p->nresults; i++) {
		fp_dbg_outputs_release(&p->results[i].out);
		fp_free(p->results[i].message);
		fp_free(p->results[i].kernel);
	}
	fp_free(p->results);
	for (i = 0; i < p->nspare_ev; i++)
		fp_devmem_event_free(p->spare_ev[i]);
	if (p->span)
		fp_devmem_span_remove(p->opt.device_pool);
	pthread_cond_destroy(&p->cv_work);
	pthread_cond_destroy(&p->cv_done);
	pthread_mutex_destroy(&p->mu);
	if (p->pinned)
		spare_give(p->host, p->host_bytes);
	else
		fp_free(p->host);
	fp_free(p);
}
