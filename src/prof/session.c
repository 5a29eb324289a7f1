/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Profiling sessions: the registry of open sessions and their lifecycle (start, activation,
 * FlagPrism's own launches, finalize and shutdown of every session), the process's clocks,
 * thread indexes and correlation ids, and the visit of one or every session under its lock
 * (fp__prof_for_sessions) that the other session files build on. What a session does with
 * events, scopes, metadata and its output files lives beside it (session-internal.h lists the
 * files); writers and backends live in their own files.
 *
 * A session's name is resolved at start (its directory made absolute, links and ".." followed)
 * and locked against other processes with an advisory lock file beside the outputs, so that
 * neither a later chdir nor another path to the same place nor another process can make two
 * sessions write the same files.
 *
 * Locking: the registry lock, then a session's lock, then the names lock (names.c); never the
 * other way round. Calls for FP_PROF_ALL hold the registry lock while they visit the sessions,
 * so a session cannot be freed under them; a backend that holds a session pointer may use it
 * until its stop callback returns.
 */
#include "fp-setup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <flagprism/outfile.h>
#include <flagprism/strbuf.h>

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

/* ---- session lifecycle ---------------------------------------------------------------------- */

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
	fp__prof_tl_release(s);
	fp__prof_comm_release(s);
	fp__prof_rank_release(s);
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

static int session_new(const struct fp_prof_options *opt, struct fp_prof_session **out,
		       struct fp_diag *diag)
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
	s->sink.sink = fp_prof_sink();
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

/*
 * The name with its directory resolved: realpath() of the directory part (".", for a bare
 * name) and the last component as given. FP_OK and *out (fp_free), FP_EINVAL (a name ending in
 * '/'), FP_EIO (the directory cannot be resolved: diag names the errno), FP_ENOMEM.
 */
static int resolve_name(const char *name, char **out, struct fp_diag *diag)
{
	const char *slash = strrchr(name, '/'), *base = slash ? slash + 1 : name;
	char dir[PATH_MAX], real[PATH_MAX];
	struct fp_strbuf sb;
	size_t n;
	int rc;

	if (!*base)
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "the profile name '%.200s' ends with '/': it names a directory, "
				   "not the start of a file name",
				   name);
	n = slash ? (slash == name ? 1 : (size_t)(slash - name)) : 1;
	if (n >= sizeof(dir))
		return fp_diag_set(diag, FP_EINVAL, 0,
				   "the profile name is too long (ENAMETOOLONG)");
	if (slash)
		memcpy(dir, name, n);
	else
		dir[0] = '.';
	dir[n] = '\0';
	if (!realpath(dir, real))
		return fp_diag_set(diag, FP_EIO, 0, "%.200s: cannot use the directory: %s (%s)",
				   name, strerror(errno), fp_errno_name(errno));
	fp_strbuf_init(&sb, 0);
	rc = fp_strbuf_addstr(&sb, real);
	if (!rc && strcmp(real, "/") != 0)
		rc = fp_strbuf_addch(&sb, '/');
	if (!rc)
		rc = fp_strbuf_addstr(&sb, base);
	if (!rc)
		*out = fp_strbuf_detach(&sb, NULL);
	if (!rc && !*out)
		rc = FP_ENOMEM;
	fp_strbuf_release(&sb);
	return rc ? fp_diag_set(diag, rc, 0, "out of memory") : FP_OK;
}

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

/*
 * Whether the session's files can be written, checked before anything runs: the directory of
 * `name` takes a new file and the longest file name (name plus the longest writer suffix) fits
 * the file system. A failure at finalize would otherwise come after the whole program ran.
 */
static int check_outputs(const char *name, struct fp_diag *diag)
{
	const char *longest = "";
	struct fp_strbuf path;
	size_t i;
	int rc;

	for (i = 0; fp_prof_writer_at(i); i++)
		if (strlen(fp_prof_writer_at(i)->suffix) > strlen(longest))
			longest = fp_prof_writer_at(i)->suffix;
	fp_strbuf_init(&path, 0);
	rc = fp_strbuf_addstr(&path, name);
	if (!rc)
		rc = fp_strbuf_addstr(&path, longest);
	if (rc) {
		fp_strbuf_release(&path);
		return fp_diag_set(diag, rc, 0, "out of memory");
	}
	rc = fp_outfile_check(path.buf, diag);
	fp_strbuf_release(&path);
	return rc;
}

/* Registry lock held. */
static struct fp_prof_session *find_locked(int id)
{
	size_t i;

	for (i = 0; i < FP_PROF_MAX_SESSIONS; i++)
		if (sessions[i] && sessions[i]->id == id)
			return sessions[i];
	return NULL;
}

int fp_prof_start(const struct fp_prof_options *opt, int *session, struct fp_diag *diag)
{
	struct fp_prof_session *s = NULL;
	size_t i = 0, n;
	int rc;

	if (!session)
		return FP_EINVAL;
	rc = session_new(opt, &s, diag);
	if (rc)
		return rc;
	rc = resolve_name(s->name, &s->path, diag);
	if (!rc)
		rc = check_outputs(s->path, diag);
	if (rc) {
		fp__prof_session_free(s);
		return rc;
	}
	/* Registered inactive first, so the backend's start can already address it by id. */
	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < FP_PROF_MAX_SESSIONS; i++) {
		if (sessions[i] && !strcmp(sessions[i]->path, s->path)) {
			int other = sessions[i]->id;

			pthread_mutex_unlock(&reg_lock);
			fp__prof_session_free(s);
			return fp_diag_set(
				diag, FP_EBUSY, 0,
				"profiling session %d already writes '%.120s': finalize it "
				"first or give this session another name",
				other,
				opt && opt->name && *opt->name ? opt->name : FP_PROF_DEFAULT_NAME);
		}
	}
	for (n = 0; n < FP_PROF_MAX_SESSIONS; n++) {
		i = (next_slot + n) % FP_PROF_MAX_SESSIONS;
		if (!sessions[i])
			break;
	}
	if (n == FP_PROF_MAX_SESSIONS) {
		pthread_mutex_unlock(&reg_lock);
		fp__prof_session_free(s);
		return fp_diag_set(diag, FP_ELIMIT, 0, "%d profiling sessions are already open",
				   FP_PROF_MAX_SESSIONS);
	}
	rc = lock_name(s, diag);
	if (rc) {
		pthread_mutex_unlock(&reg_lock);
		fp__prof_session_free(s);
		return rc;
	}
	s->id = next_session_id++;
	s->slot = (int)i;
	next_slot = i + 1;
	s->finalizing = true; /* not visible to FP_PROF_ALL callers until started */
	sessions[i] = s;
	pthread_mutex_unlock(&reg_lock);
	/* backends deliver through the sink; the host backend finds it in the registry */
	fp_backend_set_sink(fp_prof_sink());

	rc = s->backend->start(&s->sink, diag);
	pthread_mutex_lock(&reg_lock);
	if (rc) {
		sessions[i] = NULL;
		pthread_mutex_unlock(&reg_lock);
		fp__prof_session_free(s);
		return rc;
	}
	pthread_mutex_lock(&s->lock);
	s->finalizing = false;
	s->active = true;
	atomic_fetch_or(&active_mask, (uint64_t)1 << s->slot);
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_unlock(&reg_lock);
	*session = s->id;
	return FP_OK;
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

/*
 * Take a finalized session out of the registry: inactive, its end time taken. The caller has
 * claimed it (finalizing set), so it is the caller's alone from here.
 */
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

/* Take a session out of reach of finalize/shutdown races: first caller wins. */
static struct fp_prof_session *claim(int id, int *rc)
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

static int open_ids(int *ids)
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

int fp_prof_finalize_each(int session, const char *format, fp_prof_output_fn fn, void *arg,
			  struct fp_diag *diag)
{
	struct fp_prof_session *s;
	int rc = FP_OK;

	if (session == FP_PROF_ALL) {
		int ids[FP_PROF_MAX_SESSIONS], n = open_ids(ids), i;

		for (i = 0; i < n; i++) {
			int r = fp_prof_finalize_each(ids[i], format, fn, arg, rc ? NULL : diag);

			if (r && r != FP_ENOENT && r != FP_ESTATE && !rc)
				rc = r;
		}
		return rc;
	}
	s = claim(session, &rc);
	if (!s)
		return rc;
	return fp__prof_finalize_session(s, format, fn, arg, diag);
}

int fp_prof_finalize(int session, const char *format, struct fp_diag *diag)
{
	return fp_prof_finalize_each(session, format, NULL, NULL, diag);
}

void fp_prof_shutdown(void)
{
	int ids[FP_PROF_MAX_SESSIONS], n = open_ids(ids), i, rc;

	for (i = 0; i < n; i++) {
		struct fp_prof_session *s = claim(ids[i], &rc);

		if (!s)
			continue;
		fp__prof_note_incomplete(s, "shutdown without finalize");
		fp__prof_finalize_session(s, NULL, NULL, NULL, NULL);
	}
	fp__prof_lctx_release();
	fp__prof_names_release();
}
