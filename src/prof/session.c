/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The registry of profiling sessions: the table of open sessions (a new session put in, made
 * active or taken out, claimed by the one finalize that wins), the visit of one or every session
 * under its lock (fp__prof_for_sessions) that every other session file builds on, activation,
 * FlagPrism's own launches, a session's allocation and release, and the process's clocks, thread
 * indexes and correlation ids. Starting a session is session-start.c's, finalizing and shutdown
 * session-write.c's; what a session does with events, scopes and metadata lives beside it
 * (session-internal.h lists the files). This file calls none of them, nor any feature: a
 * session's features are reached through its table (prof-internal.h).
 *
 * A session's name is locked against other processes here, as it is registered: an advisory
 * lock file beside the outputs, so that neither another path to the same place nor another
 * process can make two sessions write the same files.
 *
 * Locking: the registry lock, then a session's lock, then the names lock (names.c); never the
 * other way round. Calls for FP_PROF_ALL hold the registry lock while they visit the sessions,
 * so a session cannot be freed under them; a backend that holds a session pointer may use it
 * until its stop callback returns.
 */
#include "fp-setup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <flagprism/outfile.h>

#include "prof/calltree-internal.h"
#include "prof/session-internal.h"

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fp_prof_session *sessions[FP_PROF_MAX_SESSIONS];
static int next_session_id;
static size_t next_slot; /* round robin: a slot's bit is reused as late as possible */
static _Atomic uint64_t active_mask;
static _Thread_local uint32_t internal_depth;
static atomic_uint_fast64_t next_correlation = 1;
static atomic_uint next_thread_index;
static _Thread_local uint32_t thread_index;

_Static_assert(sizeof(struct fp_sink_event) == 128, "fp_sink_event is part of the backend ABI");

/* ---- clocks and ids ------------------------------------------------------------------------ */

uint64_t fp_prof_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t unix_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint32_t fp__prof_thread_index(void)
{
	if (!thread_index)
		thread_index = (uint32_t)atomic_fetch_add(&next_thread_index, 1) + 1;
	return thread_index;
}

uint64_t fp_prof_correlation_next(void)
{
	return (uint64_t)atomic_fetch_add(&next_correlation, 1);
}

/* ---- a session's allocation -------------------------------------------------------------- */

void fp__prof_session_free(struct fp_prof_session *s)
{
	size_t i;

	if (!s)
		return;
	fp_calltree_free(s->tree);
	fp_hashmap_release(&s->name_map);
	fp_hashmap_release(&s->callpath_map);
	fp_hashmap_release(&s->note_map);
	fp_hashmap_release(&s->thread_map);
	fp_hashmap_release(&s->pending_map);
	for (i = 0; i < s->nthreads; i++) {
		fp_free(s->threads[i]->stack);
		fp_free(s->threads[i]);
	}
	fp_free(s->threads);
	fp_free(s->pending);
	fp_free(s->pending_free);
	for (i = 0; i < (s->ntrace + FP__TRACE_CHUNK - 1) >> FP__TRACE_CHUNK_SHIFT; i++)
		fp_free(s->trace_chunks[i]);
	fp_free(s->trace_chunks);
	for (i = 0; i < s->ndrop_reasons; i++)
		fp_free(s->drop_reasons[i]);
	for (i = 0; i < s->nenv; i++) {
		fp_free(s->env_keys[i]);
		fp_free(s->env_values[i]);
	}
	for (i = 0; i < FP__PROF_NFEATURES; i++)
		if (s->feature_state[i] && s->features[i]->release)
			s->features[i]->release(s->feature_state[i]);
	for (i = 0; i < s->nwritten; i++)
		fp_free(s->written_at[i]);
	if (s->lock_fd >= 0) {
		/* Removed while still held: a process that opened it meanwhile sees it is gone. */
		unlink(s->lock_path);
		close(s->lock_fd);
	}
	fp_free(s->lock_path);
	if (s->rescue_dir)
		rmdir(s->rescue_dir); /* only if the rescue wrote nothing there */
	fp_free(s->rescue_dir);
	fp_free(s->path);
	fp_free(s->name);
	fp_free(s->hook);
	pthread_mutex_destroy(&s->lock);
	fp_free(s);
}

int fp__prof_session_new(const struct fp_prof_options *opt, const struct fp_sink *sink,
			 const struct fp__prof_feature *const *features,
			 struct fp_prof_session **out, struct fp_diag *diag)
{
	static const struct fp_prof_options defaults;
	const struct fp_backend_ops *backend;
	struct fp_prof_session *s;
	const char *bname;
	size_t i;

	if (!opt)
		opt = &defaults;
	if ((unsigned)opt->context > FP_PROF_CONTEXT_PYTHON)
		return fp_diag_set(diag, FP_EINVAL, 0, "unknown context %d (shadow or python)",
				   (int)opt->context);
	if ((unsigned)opt->data > FP_PROF_DATA_TRACE)
		return fp_diag_set(diag, FP_EINVAL, 0, "unknown data kind %d (tree or trace)",
				   (int)opt->data);
	bname = opt->backend && *opt->backend ? opt->backend : "host";
	backend = fp_backend_find(bname);
	if (!backend)
		return fp_diag_set(diag, FP_ENOENT, 0, "unknown profiler backend '%s'", bname);

	s = fp_calloc(1, sizeof(*s));
	if (!s)
		return FP_ENOMEM;
	s->lock_fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	fp_hashmap_init(&s->name_map);
	fp_hashmap_init(&s->callpath_map);
	fp_hashmap_init(&s->note_map);
	fp_hashmap_init(&s->thread_map);
	fp_hashmap_init(&s->pending_map);
	s->opt = *opt;
	s->backend = backend;
	s->opt.backend = backend->name;
	s->sink.sink = sink;
	s->features = features;
	s->name = fp_strdup(opt->name && *opt->name ? opt->name : FP_PROF_DEFAULT_NAME);
	if (!s->name)
		goto fail_alloc;
	s->opt.name = s->name;
	if (opt->hook) {
		s->hook = fp_strdup(opt->hook);
		if (!s->hook)
			goto fail_alloc;
	}
	s->opt.hook = s->hook;
	if (!s->opt.max_trace_events)
		s->opt.max_trace_events = FP_PROF_DEFAULT_MAX_TRACE;
	if (!s->opt.max_pending_launches)
		s->opt.max_pending_launches = FP_PROF_DEFAULT_MAX_PENDING;
	if (!s->opt.max_scope_depth)
		s->opt.max_scope_depth = FP_PROF_DEFAULT_MAX_SCOPE_DEPTH;
	if (!s->opt.max_threads)
		s->opt.max_threads = FP_PROF_DEFAULT_MAX_THREADS;
	s->tree = fp_calltree_new(&s->opt.tree);
	if (!s->tree)
		goto fail_alloc;
	for (i = 0; i < FP__M_COUNT_SLOTS; i++)
		s->metric[i] = FP_CALLTREE_NONE;
	s->origin_ns = fp_prof_clock_ns();
	s->origin_unix_ns = unix_ns();
	*out = s;
	return FP_OK;

fail_alloc:
	fp__prof_session_free(s);
	return FP_ENOMEM;
}

/* ---- the name's lock --------------------------------------------------------------------------- */

/* The pid written in a lock file, or 0. */
static long lock_owner(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

/*
 * Take the advisory lock on the session's name: `<dir>/.<base>.flagprism.lock`, created if
 * needed (never through a link), flock()ed without waiting, checked to still be the file at that
 * name (a finalize removes it while holding it), and given our pid for the message another
 * process gets. A file system without flock() is written without the lock. FP_OK, FP_EBUSY
 * (another session holds it: diag names the process), FP_EIO, FP_ENOMEM.
 */
static int lock_name(struct fp_prof_session *s, struct fp_diag *diag)
{
	const char *slash = strrchr(s->path, '/');
	struct stat fst, pst;
	char pid[32];
	int tries, fd = -1, n;
	long owner;
	size_t size = strlen(s->path) + 32;

	s->lock_path = fp_malloc(size);
	if (!s->lock_path)
		return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	snprintf(s->lock_path, size, "%.*s.%s.flagprism.lock", (int)(slash - s->path + 1), s->path,
		 slash + 1);
	for (tries = 0; tries < 20; tries++) {
		fd = open(s->lock_path,
			  O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
		if (fd < 0)
			return fp_diag_set(diag, FP_EIO, 0,
					   "%.160s: cannot create the lock file: %s (%s)",
					   s->lock_path, strerror(errno), fp_errno_name(errno));
		if (fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode)) {
			close(fd);
			return fp_diag_set(diag, FP_EIO, 0,
					   "%.160s: the lock file is not a regular file; remove it",
					   s->lock_path);
		}
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			int err = errno;

			if (err != EWOULDBLOCK) {
				close(fd); /* no flock here (some network file systems): no lock */
				return FP_OK;
			}
			owner = lock_owner(fd);
			close(fd);
			return fp_diag_set(
				diag, FP_EBUSY, 0,
				"another profiling session (process %ld%s) already writes "
				"'%.120s': give this one another name, or wait for it to "
				"finish",
				owner, owner == (long)getpid() ? ", this one" : "", s->name);
		}
		if (stat(s->lock_path, &pst) == 0 && pst.st_ino == fst.st_ino &&
		    pst.st_dev == fst.st_dev)
			break;
		close(fd); /* removed by its holder after we opened it: take the new one */
		fd = -1;
	}
	if (fd < 0)
		return fp_diag_set(diag, FP_EBUSY, 0, "%.160s: the lock file keeps changing",
				   s->lock_path);
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
		/* the pid is only for another process's message: nothing else depends on it */
	}
	s->lock_fd = fd;
	return FP_OK;
}

/* ---- the registry ------------------------------------------------------------------------------ */

/* Registry lock held. */
static struct fp_prof_session *find_locked(int id)
{
	size_t i;

	for (i = 0; i < FP_PROF_MAX_SESSIONS; i++)
		if (sessions[i] && sessions[i]->id == id)
			return sessions[i];
	return NULL;
}

int fp__prof_register(struct fp_prof_session *s, struct fp_diag *diag)
{
	size_t i = 0, n;
	int rc;

	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < FP_PROF_MAX_SESSIONS; i++) {
		if (sessions[i] && !strcmp(sessions[i]->path, s->path)) {
			int other = sessions[i]->id;

			pthread_mutex_unlock(&reg_lock);
			return fp_diag_set(
				diag, FP_EBUSY, 0,
				"profiling session %d already writes '%.120s': finalize it "
				"first or give this session another name",
				other, s->name);
		}
	}
	for (n = 0; n < FP_PROF_MAX_SESSIONS; n++) {
		i = (next_slot + n) % FP_PROF_MAX_SESSIONS;
		if (!sessions[i])
			break;
	}
	if (n == FP_PROF_MAX_SESSIONS) {
		pthread_mutex_unlock(&reg_lock);
		return fp_diag_set(diag, FP_ELIMIT, 0, "%d profiling sessions are already open",
				   FP_PROF_MAX_SESSIONS);
	}
	rc = lock_name(s, diag);
	if (rc) {
		pthread_mutex_unlock(&reg_lock);
		return rc;
	}
	s->id = next_session_id++;
	s->slot = (int)i;
	next_slot = i + 1;
	s->finalizing = true; /* not visible to FP_PROF_ALL callers until started */
	sessions[i] = s;
	pthread_mutex_unlock(&reg_lock);
	return FP_OK;
}

void fp__prof_register_end(struct fp_prof_session *s, int rc)
{
	pthread_mutex_lock(&reg_lock);
	if (rc) {
		sessions[s->slot] = NULL;
		pthread_mutex_unlock(&reg_lock);
		return;
	}
	pthread_mutex_lock(&s->lock);
	s->finalizing = false;
	s->active = true;
	atomic_fetch_or(&active_mask, (uint64_t)1 << s->slot);
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_unlock(&reg_lock);
}

struct fp_prof_session *fp_prof_session_get(int id)
{
	struct fp_prof_session *s;

	pthread_mutex_lock(&reg_lock);
	s = find_locked(id);
	pthread_mutex_unlock(&reg_lock);
	return s;
}

int fp_prof_session_id(const struct fp_prof_session *s)
{
	return s ? s->id : -1;
}

const char *fp_prof_session_name(const struct fp_prof_session *s)
{
	return s ? s->name : NULL;
}

bool fp_prof_session_active(const struct fp_prof_session *s)
{
	return s && s->active;
}

const struct fp_backend_ops *fp_prof_session_backend(const struct fp_prof_session *s)
{
	return s ? s->backend : NULL;
}

struct fp_sink_session *fp_prof_session_sink(struct fp_prof_session *s)
{
	return s ? &s->sink : NULL;
}

struct fp_calltree *fp_prof_session_tree(struct fp_prof_session *s)
{
	return s ? s->tree : NULL;
}

size_t fp_prof_session_count(void)
{
	size_t i, n = 0;

	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < FP_PROF_MAX_SESSIONS; i++)
		n += sessions[i] != NULL;
	pthread_mutex_unlock(&reg_lock);
	return n;
}

int fp__prof_for_sessions(int id, int (*fn)(struct fp_prof_session *s, void *arg), void *arg)
{
	size_t i;
	int rc = FP_OK;

	pthread_mutex_lock(&reg_lock);
	if (id == FP_PROF_ALL) {
		for (i = 0; i < FP_PROF_MAX_SESSIONS; i++) {
			struct fp_prof_session *s = sessions[i];
			int r;

			if (!s)
				continue;
			pthread_mutex_lock(&s->lock);
			r = fn(s, arg);
			pthread_mutex_unlock(&s->lock);
			if (r && !rc)
				rc = r;
		}
	} else {
		struct fp_prof_session *s = find_locked(id);

		if (!s) {
			rc = FP_ENOENT;
		} else {
			pthread_mutex_lock(&s->lock);
			rc = fn(s, arg);
			pthread_mutex_unlock(&s->lock);
		}
	}
	pthread_mutex_unlock(&reg_lock);
	return rc;
}

static int set_active(struct fp_prof_session *s, void *arg)
{
	if (s->finalizing)
		return FP_OK;
	s->active = *(bool *)arg;
	if (s->active)
		atomic_fetch_or(&active_mask, (uint64_t)1 << s->slot);
	else
		atomic_fetch_and(&active_mask, ~((uint64_t)1 << s->slot));
	return FP_OK;
}

uint64_t fp_prof_active_mask(void)
{
	return atomic_load_explicit(&active_mask, memory_order_relaxed);
}

int fp_prof_session_slot(const struct fp_prof_session *s)
{
	return s ? s->slot : -1;
}

#define INTERNAL_MAX ((uint32_t)1 << 20)

int fp_prof_internal_mark(int delta)
{
	int64_t d = (int64_t)internal_depth + delta;

	if (d < 0 || d > INTERNAL_MAX)
		return FP_EINVAL;
	internal_depth = (uint32_t)d;
	return (int)d;
}

uint32_t fp_prof_internal_depth(void)
{
	return internal_depth;
}

void fp_prof_launch_state_now(struct fp_sink_launch_state *out)
{
	out->active = atomic_load_explicit(&active_mask, memory_order_relaxed);
	out->internal = internal_depth;
	out->known = 1;
}

int fp_prof_activate(int session)
{
	bool on = true;

	return fp__prof_for_sessions(session, set_active, &on);
}

int fp_prof_deactivate(int session)
{
	bool on = false;

	return fp__prof_for_sessions(session, set_active, &on);
}

void fp__prof_unregister(struct fp_prof_session *s)
{
	size_t i;

	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < FP_PROF_MAX_SESSIONS; i++)
		if (sessions[i] == s)
			sessions[i] = NULL;
	pthread_mutex_unlock(&reg_lock);
	s->active = false;
	s->end_unix_ns = unix_ns();
}

struct fp_prof_session *fp__prof_claim(int id, int *rc)
{
	struct fp_prof_session *s;

	pthread_mutex_lock(&reg_lock);
	s = find_locked(id);
	*rc = s ? FP_OK : FP_ENOENT;
	if (s) {
		pthread_mutex_lock(&s->lock);
		if (s->finalizing) {
			*rc = FP_ESTATE;
		} else {
			s->finalizing = true;
			/* launches from now on are not this session's */
			atomic_fetch_and(&active_mask, ~((uint64_t)1 << s->slot));
		}
		pthread_mutex_unlock(&s->lock);
		if (*rc)
			s = NULL;
	}
	pthread_mutex_unlock(&reg_lock);
	return s;
}

int fp__prof_open_ids(int *ids)
{
	size_t i;
	int n = 0;

	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < FP_PROF_MAX_SESSIONS; i++)
		if (sessions[i] && !sessions[i]->finalizing)
			ids[n++] = sessions[i]->id;
	pthread_mutex_unlock(&reg_lock);
	return n;
}
