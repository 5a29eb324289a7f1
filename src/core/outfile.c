/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Output files (include/flagprism/outfile.h): deciding how a destination may be written
 * (rename an exclusively created, owner-only temporary file onto a regular file, write through
 * a device, FIFO or the process's own descriptor, refuse the rest), following symbolic links so
 * that a link stays a link (but not a stranger's link in /tmp), keeping the errno of the first
 * failed write so that a full disk is reported as ENOSPC rather than as "write failed", never
 * waiting without end on a device or FIFO, and the two async-signal-safe hooks a signal handler
 * uses: a deadline for the writing and the removal of temporary files. The stream is a stdio
 * cookie stream over a plain descriptor.
 *
 * Not for reading files (fp_strbuf_read_file) or for anything that must survive a power loss:
 * nothing is synced.
 */
#include "fp-setup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <flagprism/outfile.h>
#include "core/core-internal.h"

#define MAX_LINK_HOPS 40
#define STREAM_BUFFER ((size_t)1 << 16)
#define POLL_MS 50        /* how often a wait for a device or FIFO looks at the deadline */
#define LIVE_SLOTS 32     /* temporary files fp_outfile_remove_temporaries() knows of */
#define INTERRUPTED EINTR /* the errno a write stopped by the deadline reports */

/* ---- the deadline and the temporary files a signal handler sees -------------------------------- */

/* CLOCK_MONOTONIC nanoseconds past which writes stop; 0 when no deadline is set. */
static atomic_llong deadline_ns;

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe */
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void fp_outfile_interrupt(unsigned grace_ms)
{
	long long none = 0, at = mono_ns() + (long long)grace_ms * 1000000LL;

	atomic_compare_exchange_strong(&deadline_ns, &none, at > 0 ? at : 1);
}

void fp_outfile_interrupt_reset(void)
{
	atomic_store(&deadline_ns, 0);
}

static bool past_deadline(void)
{
	long long at = atomic_load_explicit(&deadline_ns, memory_order_relaxed);

	return at != 0 && mono_ns() >= at;
}

bool fp_outfile_interrupted(void)
{
	return past_deadline();
}

/* A slot is free (0), being filled (1) or names a live temporary file (2). */
static struct {
	atomic_int state;
	char path[PATH_MAX];
} live[LIVE_SLOTS];

static int live_add(const char *path)
{
	size_t n = strlen(path);
	int i;

	if (n >= PATH_MAX)
		return -1;
	for (i = 0; i < LIVE_SLOTS; i++) {
		int free_slot = 0;

		if (atomic_compare_exchange_strong(&live[i].state, &free_slot, 1)) {
			memcpy(live[i].path, path, n + 1);
			atomic_store(&live[i].state, 2);
			return i;
		}
	}
	return -1; /* not tracked: only a signal's clean-up misses it */
}

static void live_drop(int slot)
{
	if (slot >= 0 && slot < LIVE_SLOTS)
		atomic_store(&live[slot].state, 0);
}

void fp_outfile_remove_temporaries(void)
{
	int i;

	for (i = 0; i < LIVE_SLOTS; i++)
		if (atomic_load(&live[i].state) == 2)
			unlink(live[i].path); /* async-signal-safe */
}

const char *fp_errno_name(int err)
{
	static _Thread_local char other[24];

	switch (err) {
#define E(x)    \
	case x: \
		return #x
		E(EPERM);
		E(ENOENT);
		E(EINTR);
		E(EIO);
		E(ENXIO);
		E(EBADF);
		E(EAGAIN);
		E(ENOMEM);
		E(EACCES);
		E(EFAULT);
		E(EBUSY);
		E(EEXIST);
		E(EXDEV);
		E(ENODEV);
		E(ENOTDIR);
		E(EISDIR);
		E(EINVAL);
		E(ENFILE);
		E(EMFILE);
		E(ETXTBSY);
		E(EFBIG);
		E(ENOSPC);
		E(ESPIPE);
		E(EROFS);
		E(EMLINK);
		E(EPIPE);
		E(ENAMETOOLONG);
		E(ELOOP);
		E(EDQUOT);
		E(ESTALE);
		E(ECONNRESET);
		E(ETIMEDOUT);
#undef E
	default:
		snprintf(other, sizeof(other), "errno %d", err);
		return other;
	}
}

/* A path cut to fit a diagnostic with room for the reason: its start and its end. */
static const char *short_path(char *buf, size_t size, const char *path)
{
	size_t n = strlen(path);

	if (n < 120)
		return path;
	snprintf(buf, size, "%.60s...%s", path, path + n - 50);
	return buf;
}

/* "<path>: cannot <what>: <reason> (<ENAME>)" */
static int sys_error(struct fp_diag *diag, const char *path, const char *what, int err)
{
	char buf[128];

	return fp_diag_set(diag, FP_EIO, 0, "%s: cannot %s: %s (%s)",
			   short_path(buf, sizeof(buf), path), what, strerror(err),
			   fp_errno_name(err));
}

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = fp_malloc(n);

	if (p)
		memcpy(p, s, n);
	return p;
}

/* The directory part of `path` ("." for a bare name), newly allocated. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n;
	char *d;

	if (!slash)
		return dup_str(".");
	n = slash == path ? 1 : (size_t)(slash - path);
	d = fp_malloc(n + 1);
	if (d) {
		memcpy(d, path, n);
		d[n] = '\0';
	}
	return d;
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * Whether following the link `link` (lstat `st`) is refused as the kernel's protected_symlinks
 * refuses it: a link in a sticky, world-writable directory (/tmp) owned by neither the caller
 * nor the directory's owner. Resolving links here, then renaming onto the target, would
 * otherwise step around that protection (a planted /tmp link making root replace any file).
 */
static bool stranger_link(const char *link, const struct stat *st)
{
	char *dir = dir_of(link);
	struct stat ds;
	bool refused = false;

	if (!dir)
		return false; /* out of memory: the caller's next allocation reports it */
	if (stat(dir, &ds) == 0 && (ds.st_mode & S_ISVTX) && (ds.st_mode & S_IWOTH) &&
	    st->st_uid != geteuid() && st->st_uid != ds.st_uid)
		refused = true;
	fp_free(dir);
	return refused;
}

/*
 * Follow `path` through symbolic links to the name that is finally written, which may not exist
 * yet (a dangling link's target). FP_OK and *out (caller frees), FP_ENOMEM, FP_EIO, FP_EINVAL
 * (a stranger's link in a sticky directory).
 */
static int resolve(const char *path, char **out, struct fp_diag *diag)
{
	char *cur = dup_str(path), *link = NULL, *next;
	struct stat st;
	int hop;

	if (!cur)
		return FP_ENOMEM;
	for (hop = 0; hop < MAX_LINK_HOPS; hop++) {
		ssize_t n;
		size_t cap;

		if (lstat(cur, &st) != 0) {
			if (errno == ENOENT)
				goto done;
			sys_error(diag, path, "look up the output file", errno);
			goto fail_resolve;
		}
		if (!S_ISLNK(st.st_mode))
			goto done;
		if (stranger_link(cur, &st)) {
			char buf[128];

			fp_free(cur);
			return fp_diag_set(
				diag, FP_EINVAL, 0,
				"%s: is a symbolic link in a shared sticky directory owned "
				"by another user (uid %ld); refusing to follow it",
				short_path(buf, sizeof(buf), path), (long)st.st_uid);
		}
		cap = (st.st_size > 0 ? (size_t)st.st_size : PATH_MAX) + 1;
		link = fp_malloc(cap);
		if (!link)
			goto fail_nomem;
		n = readlink(cur, link, cap);
		if (n < 0 || (size_t)n >= cap) {
			sys_error(diag, path, "read the symbolic link",
				  n < 0 ? errno : ENAMETOOLONG);
			goto fail_resolve;
		}
		link[n] = '\0';
		if (link[0] == '/') {
			next = link;
			link = NULL;
		} else {
			char *dir = dir_of(cur);
			size_t len;

			if (!dir)
				goto fail_nomem;
			len = strlen(dir) + strlen(link) + 2;
			next = fp_malloc(len);
			if (next)
				snprintf(next, len, "%s/%s", dir, link);
			fp_free(dir);
			fp_free(link);
			link = NULL;
			if (!next)
				goto fail_nomem;
		}
		fp_free(cur);
		cur = next;
	}
	sys_error(diag, path, "follow the symbolic link", ELOOP);
	goto fail_resolve;

done:
	*out = cur;
	return FP_OK;
fail_nomem:
	fp_free(link);
	fp_free(cur);
	return fp_diag_set(diag, FP_ENOMEM, 0, "%s: out of memory", path);
fail_resolve:
	fp_free(link);
	fp_free(cur);
	return FP_EIO;
}

/* The process's own descriptor that `path` names (/dev/stdout, /dev/fd/N...), or -1. */
static int own_fd(const char *path, unsigned flags)
{
	static const char *const prefixes[] = {"/dev/fd/", "/proc/self/fd/"};
	const char *digits = NULL;
	size_t i;
	long v;
	char *end;

	if ((flags & FP_OUTFILE_DASH_STDOUT) && !strcmp(path, "-"))
		return STDOUT_FILENO;
	if (!strcmp(path, "/dev/stdout"))
		return STDOUT_FILENO;
	if (!strcmp(path, "/dev/stderr"))
		return STDERR_FILENO;
	for (i = 0; i < FP_ARRAY_SIZE(prefixes); i++)
		if (!strncmp(path, prefixes[i], strlen(prefixes[i])))
			digits = path + strlen(prefixes[i]);
	if (!digits || *digits < '0' || *digits > '9')
		return -1;
	errno = 0;
	v = strtol(digits, &end, 10);
	if (errno || *end || v < 0 || v > INT_MAX)
		return -1;
	return (int)v;
}

/* What kind of destination refuses to be written, or NULL. */
static const char *refused_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return NULL;
}

/* ---- the stream -------------------------------------------------------------------------------- */

/* "<path>: cannot write: a signal ended the writing (EINTR)" or the system's reason. */
static int write_error(struct fp_diag *diag, const char *path, const char *step, int err)
{
	char buf[128];

	if (err == INTERRUPTED)
		return fp_diag_set(
			diag, FP_EIO, 0,
			"%s: cannot %s: a signal ended the writing (EINTR); the file was "
			"not replaced",
			short_path(buf, sizeof(buf), path), step);
	return sys_error(diag, path, step, err);
}

static ssize_t cookie_write(void *arg, const char *buf, size_t n)
{
	struct fp_outfile *of = arg;
	size_t done = 0;

	if (of->err)
		return -1;
	while (done < n) {
		size_t want = n - done;
		ssize_t w;

		if (past_deadline()) {
			of->err = INTERRUPTED;
			break;
		}
		if (of->poll) {
			/* A device or FIFO takes bytes when it can: wait for room a little at a
			 * time, so that a reader that stops reading cannot hold us past the
			 * deadline. A blocking descriptor of the process's own takes PIPE_BUF bytes
			 * without waiting once poll() says it has room. */
			struct pollfd p = {.fd = of->fd, .events = POLLOUT};
			int r = poll(&p, 1, POLL_MS);

			if (r < 0 && errno != EINTR) {
				of->err = errno;
				break;
			}
			if (r <= 0)
				continue;
			if (!(p.revents & POLLOUT)) {
				of->err = p.revents & POLLHUP ? EPIPE : EIO;
				break;
			}
			if (of->own && want > PIPE_BUF)
				want = PIPE_BUF;
		}
		w = write(of->fd, buf + done, want);
		if (w < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (w <= 0) {
			of->err = w < 0 ? errno : EIO;
			break;
		}
		done += (size_t)w;
	}
	if (of->err && !done)
		return -1;
	return (ssize_t)done;
}

static int cookie_close(void *arg)
{
	(void)arg; /* the descriptor is closed by commit/abort, which want its error */
	return 0;
}

static int make_stream(struct fp_outfile *of)
{
	cookie_io_functions_t io = {NULL, cookie_write, NULL, cookie_close};

	of->f = fopencookie(of, "w", io);
	if (!of->f)
		return FP_ENOMEM;
	setvbuf(of->f, NULL, _IOFBF, STREAM_BUFFER);
	return FP_OK;
}

static void release(struct fp_outfile *of)
{
	live_drop(of->slot);
	fp_free(of->name);
	fp_free(of->dest);
	fp_free(of->tmp);
	of->name = of->dest = of->tmp = NULL;
	of->f = NULL;
	of->fd = -1;
	of->slot = -1;
}

/* ---- opening ------------------------------------------------------------------------------------ */

static atomic_uint tmp_counter;

/* The process's file mode creation mask, read without changing it (umask() would, for a moment,
 * for every thread): /proc/self/status says it since Linux 4.7; 022 where it does not. */
static mode_t current_umask(void)
{
	char buf[2048], *at, *end;
	ssize_t n;
	long v;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 022;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 022;
	buf[n] = '\0';
	at = strstr(buf, "\nUmask:");
	if (!at)
		return 022;
	v = strtol(at + 7, &end, 8);
	return end == at + 7 || v < 0 || v > 0777 ? 022 : (mode_t)v;
}

/*
 * Create the temporary file next to of->dest, exclusively and without following a link (a name
 * planted there makes us try the next one), readable by the owner alone until commit gives it
 * its mode. The name is `<dest>.tmp.<pid>.<n>`, or a short hidden one where that would be
 * longer than a file name may be. `old`: the file being replaced, whose mode (and owner, for
 * root) the new one keeps; NULL for a new file (0666 less the umask).
 */
static int open_tmp(struct fp_outfile *of, const struct stat *old, struct fp_diag *diag)
{
	char *dir = dir_of(of->dest);
	size_t n = strlen(of->dest) + 64, base = strlen(base_of(of->dest));
	int attempt, err = 0;

	of->tmp = fp_malloc(n);
	if (!of->tmp || !dir) {
		fp_free(dir);
		fp_free(of->tmp);
		of->tmp = NULL;
		return fp_diag_set(diag, FP_ENOMEM, 0, "%s: out of memory", of->name);
	}
	for (attempt = 0; attempt < 100; attempt++) {
		unsigned k = atomic_fetch_add(&tmp_counter, 1u);

		if (base + 40 <= NAME_MAX)
			snprintf(of->tmp, n, "%s.tmp.%ld.%u", of->dest, (long)getpid(), k);
		else
			snprintf(of->tmp, n, "%s/.flagprism.%ld.%u.tmp", dir, (long)getpid(), k);
		of->fd = open(of->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (of->fd >= 0 || errno != EEXIST)
			break;
	}
	err = errno;
	fp_free(dir);
	if (of->fd < 0) {
		fp_free(of->tmp);
		of->tmp = NULL;
		return sys_error(diag, of->name, "create a file in its directory", err);
	}
	of->slot = live_add(of->tmp);
	if (old) {
		of->mode = old->st_mode & 07777;
		if (geteuid() == 0) {
			of->uid = (int)old->st_uid;
			of->gid = (int)old->st_gid;
		}
	} else {
		of->mode = 0666 & ~current_umask();
	}
	return FP_OK;
}

/* Open a device or FIFO `dest` to write through it. Non-blocking, so that a FIFO without a
 * reader fails at once instead of hanging; what was opened must still be a device or FIFO (not
 * a file swapped in since it was looked at, which would be written over in place). */
static int open_through(struct fp_outfile *of, const char *dest, struct fp_diag *diag)
{
	struct stat st;

	of->through = true;
	of->poll = true;
	of->fd = open(dest, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
	if (of->fd < 0) {
		if (errno == ENXIO)
			return fp_diag_set(
				diag, FP_EIO, 0,
				"%s: cannot open: no process is reading this FIFO (ENXIO)",
				of->name);
		return sys_error(diag, of->name, "open", errno);
	}
	if (fstat(of->fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
		close(of->fd);
		of->fd = -1;
		return sys_error(diag, of->name, "open (it changed while it was opened)", EAGAIN);
	}
	return FP_OK;
}

/* A refusal for a destination of kind `kind`. */
static int refuse(struct fp_diag *diag, const char *path, const char *kind)
{
	char buf[128];

	return fp_diag_set(diag, FP_EINVAL, 0, "%s: is %s; refusing to write a file onto it",
			   short_path(buf, sizeof(buf), path), kind);
}

int fp_outfile_open(struct fp_outfile *of, const char *path, unsigned flags, struct fp_diag *diag)
{
	struct stat st, dst;
	const char *kind;
	bool exists = false;
	int fd, rc, lr, lerr;

	memset(of, 0, sizeof(*of));
	of->fd = -1;
	of->slot = -1;
	of->uid = of->gid = -1;
	if (!path || !*path)
		return fp_diag_set(diag, FP_EINVAL, 0, "the output path is empty");
	of->name = dup_str(path);
	if (!of->name)
		return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	if (past_deadline()) {
		rc = write_error(diag, path, "write", INTERRUPTED);
		goto fail_open;
	}

	fd = own_fd(path, flags);
	if (fd >= 0) {
		/* What the process's stdio holds for the same descriptor goes first. */
		if (fd == STDOUT_FILENO)
			fflush(stdout);
		else if (fd == STDERR_FILENO)
			fflush(stderr);
		of->through = true;
		of->own = true;
		of->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (of->fd < 0) {
			rc = sys_error(diag, path, "write to this descriptor", errno);
			goto fail_open;
		}
		of->poll = fstat(of->fd, &st) == 0 && !S_ISREG(st.st_mode);
		goto stream;
	}
	if (stat(path, &st) == 0)
		exists = true;
	else if (errno != ENOENT) {
		rc = sys_error(diag, path, "look up the output file", errno);
		goto fail_open;
	}
	rc = resolve(path, &of->dest, diag);
	if (rc)
		goto fail_open;
	lr = lstat(of->dest, &dst);
	lerr = lr ? errno : 0;
	if (!lr && (kind = refused_kind(dst.st_mode)) != NULL) {
		rc = refuse(diag, path, kind);
	} else if (!lr && (S_ISCHR(dst.st_mode) || S_ISFIFO(dst.st_mode))) {
		/* A character device or a FIFO: written through, never replaced. */
		rc = open_through(of, of->dest, diag);
	} else if (!lr && S_ISREG(dst.st_mode)) {
		rc = open_tmp(of, &dst, diag);
	} else if (lr && lerr != ENOENT) {
		rc = sys_error(diag, path, "look up the output file", lerr);
	} else if (lr && !exists) {
		rc = open_tmp(of, NULL, diag); /* a new file, or a dangling link's target */
	} else if (!lr) {
		rc = refuse(diag, path, "not a regular file, a device or a FIFO");
	} else {
		/* A file reached through a link that names nothing (a /proc descriptor of a deleted
		 * file, or of a pipe): write through, truncating as > would; a pipe is written with
		 * bounded waits, as a FIFO is. */
		of->through = true;
		of->fd = open(path, O_WRONLY | O_TRUNC | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		rc = of->fd < 0 ? sys_error(diag, path, "open", errno) : FP_OK;
		of->poll = !rc && fstat(of->fd, &st) == 0 && !S_ISREG(st.st_mode);
	}
	if (rc)
		goto fail_open;
stream:
	rc = make_stream(of);
	if (rc) {
		rc = fp_diag_set(diag, FP_ENOMEM, 0, "%s: out of memory", path);
		goto fail_stream;
	}
	return FP_OK;

fail_stream:
	close(of->fd);
	if (of->tmp)
		unlink(of->tmp);
fail_open:
	release(of);
	return rc;
}

int fp_outfile_commit(struct fp_outfile *of, struct fp_diag *diag)
{
	int rc = FP_OK, err = 0;
	const char *step = "write";

	if (!of->f) {
		release(of);
		return fp_diag_set(diag, FP_EINVAL, 0, "output file not open");
	}
	if (fflush(of->f) != 0 && !of->err)
		of->err = errno ? errno : EIO;
	if (ferror(of->f) && !of->err)
		of->err = EIO;
	fclose(of->f);
	of->f = NULL;
	err = of->err;
	if (!err && of->tmp) {
		/* Complete: it gets its mode (and owner) now, just before others may see it. A
		 * failure leaves it owner-only, which is safe. */
		if (of->uid >= 0 && fchown(of->fd, (uid_t)of->uid, (gid_t)of->gid) != 0)
			of->uid = -1;
		if (fchmod(of->fd, (mode_t)of->mode) != 0)
			of->mode = 0600;
	}
	if (close(of->fd) != 0 && !err) {
		err = errno;
		step = "close";
	}
	of->fd = -1;
	if (!err && of->tmp && rename(of->tmp, of->dest) != 0) {
		err = errno;
		step = "replace";
	}
	if (err) {
		rc = write_error(diag, of->name, step, err);
		if (of->tmp)
			unlink(of->tmp);
	}
	release(of);
	return rc;
}

int fp_outfile_finish(struct fp_outfile *of, int status, struct fp_diag *diag)
{
	if (of->f && fflush(of->f) != 0 && !of->err)
		of->err = errno ? errno : EIO;
	if (status == FP_OK || (status == FP_EIO && of->err))
		return fp_outfile_commit(of, diag);
	fp_outfile_abort(of);
	return status;
}

void fp_outfile_abort(struct fp_outfile *of)
{
	if (!of)
		return;
	if (of->f)
		fclose(of->f);
	if (of->fd >= 0)
		close(of->fd);
	if (of->tmp)
		unlink(of->tmp);
	release(of);
}

int fp_outfile_check(const char *path, struct fp_diag *diag)
{
	struct fp_outfile probe;
	struct stat st;
	const char *kind;
	char *dest = NULL, *dir = NULL;
	long name_max;
	size_t base;
	int rc;

	if (!path || !*path)
		return fp_diag_set(diag, FP_EINVAL, 0, "the output path is empty");
	if (own_fd(path, 0) >= 0)
		return FP_OK;
	if (stat(path, &st) != 0 && errno != ENOENT)
		return sys_error(diag, path, "look up the output file", errno);
	rc = resolve(path, &dest, diag);
	if (rc)
		return rc;
	if (lstat(dest, &st) == 0) {
		kind = refused_kind(st.st_mode);
		if (kind) {
			rc = refuse(diag, path, kind);
			goto out;
		}
		if (!S_ISREG(st.st_mode))
			goto out; /* a device or FIFO: written through when the time comes */
	}
	dir = dir_of(dest);
	if (!dir) {
		rc = fp_diag_set(diag, FP_ENOMEM, 0, "%s: out of memory", path);
		goto out;
	}
	if (stat(dir, &st) != 0) {
		rc = sys_error(diag, path, "use the directory", errno);
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		rc = sys_error(diag, path, "use the directory", ENOTDIR);
		goto out;
	}
	base = strlen(base_of(dest));
	errno = 0;
	name_max = pathconf(dir, _PC_NAME_MAX);
	if (name_max <= 0)
		name_max = NAME_MAX;
	if (base > (size_t)name_max) {
		rc = fp_diag_set(
			diag, FP_EINVAL, 0,
			"%.64s...: the file name is %zu bytes, longer than the %ld this file "
			"system allows (ENAMETOOLONG)",
			base_of(dest), base, name_max);
		goto out;
	}
	if (strlen(dest) >= PATH_MAX) {
		rc = fp_diag_set(
			diag, FP_EINVAL, 0,
			"%.64s...: the path is %zu bytes, longer than the %d a path may be "
			"(ENAMETOOLONG)",
			dest, strlen(dest), PATH_MAX);
		goto out;
	}
	/* A file created and removed where the output will go: EROFS, EACCES, EDQUOT show now. */
	memset(&probe, 0, sizeof(probe));
	probe.fd = -1;
	probe.slot = -1;
	probe.name = (char *)path;
	probe.dest = dest;
	rc = open_tmp(&probe, NULL, diag);
	if (!rc) {
		close(probe.fd);
		unlink(probe.tmp);
		live_drop(probe.slot);
		fp_free(probe.tmp);
	}
out:
	fp_free(dir);
	fp_free(dest);
	return rc;
}

int fp__outfile_save(const char *path, int (*fn)(void *arg, FILE *f), void *arg,
		     struct fp_diag *diag)
{
	struct fp_outfile of;
	int rc;

	rc = fp_outfile_open(&of, path, 0, diag);
	if (rc)
		return rc;
	rc = fn(arg, of.f);
	/* a failed write is reported by the finish with its errno */
	return fp_outfile_finish(&of, rc, diag);
}
