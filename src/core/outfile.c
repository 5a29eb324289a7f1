/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Output files (include/flagprism/outfile.h): deciding how a destination may be written
 * (rename a temporary file onto a regular file, write through a device, FIFO or the process's
 * own descriptor, refuse the rest), following symbolic links so that a link stays a link, and
 * keeping the errno of the first failed write so that a full disk is reported as ENOSPC rather
 * than as "write failed". The stream is a stdio cookie stream over a plain descriptor.
 *
 * Not for reading files (fp_strbuf_read_file) or for anything that must survive a power loss:
 * nothing is synced.
 */
#include "fp-setup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <flagprism/outfile.h>
#include "core/core-internal.h"

#define MAX_LINK_HOPS 40
#define STREAM_BUFFER ((size_t)1 << 16)

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
 * Follow `path` through symbolic links to the name that is finally written, which may not exist
 * yet (a dangling link's target). FP_OK and *out (caller frees), FP_ENOMEM, FP_EIO.
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

static ssize_t cookie_write(void *arg, const char *buf, size_t n)
{
	struct fp_outfile *of = arg;
	size_t done = 0;

	if (of->err)
		return -1;
	while (done < n) {
		ssize_t w = write(of->fd, buf + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			/* A FIFO opened non-blocking whose reader is slow: wait for room. */
			struct timespec ts = {0, 1000000};

			nanosleep(&ts, NULL);
			continue;
		}
		if (w <= 0) {
			of->err = w < 0 ? errno : EIO;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)w;
	}
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
	fp_free(of->name);
	fp_free(of->dest);
	fp_free(of->tmp);
	of->name = of->dest = of->tmp = NULL;
	of->f = NULL;
	of->fd = -1;
}

/* ---- opening ------------------------------------------------------------------------------------ */

static atomic_uint tmp_counter;

/* Create the temporary file next to of->dest; the name is `<dest>.tmp.<pid>.<n>`, or a short
 * hidden one where that would be longer than a file name may be. */
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
		of->fd = open(of->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
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
	/* A replaced file keeps its permissions (where that fails, the default mode is fine). */
	if (old)
		(void)fchmod(of->fd, old->st_mode & 07777);
	return FP_OK;
}

int fp_outfile_open(struct fp_outfile *of, const char *path, unsigned flags, struct fp_diag *diag)
{
	struct stat st, dst;
	const char *kind;
	bool exists = false;
	int fd, rc, lr, lerr;

	memset(of, 0, sizeof(*of));
	of->fd = -1;
	if (!path || !*path)
		return fp_diag_set(diag, FP_EINVAL, 0, "the output path is empty");
	of->name = dup_str(path);
	if (!of->name)
		return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");

	fd = own_fd(path, flags);
	if (fd >= 0) {
		/* What the process's stdio holds for the same descriptor goes first. */
		if (fd == STDOUT_FILENO)
			fflush(stdout);
		else if (fd == STDERR_FILENO)
			fflush(stderr);
		of->through = true;
		of->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (of->fd < 0) {
			rc = sys_error(diag, path, "write to this descriptor", errno);
			goto fail_open;
		}
		goto stream;
	}
	if (stat(path, &st) == 0) {
		exists = true;
		kind = refused_kind(st.st_mode);
		if (kind) {
			char buf[128];

			rc = fp_diag_set(diag, FP_EINVAL, 0,
					 "%s: is %s; refusing to write a file onto it",
					 short_path(buf, sizeof(buf), path), kind);
			goto fail_open;
		}
		if (!S_ISREG(st.st_mode)) {
			/* A character device or a FIFO: write through, never replace it. Non-blocking
			 * open, so that a FIFO without a reader fails instead of hanging. */
			of->through = true;
			of->fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
			if (of->fd < 0) {
				rc = errno == ENXIO ?
					     fp_diag_set(diag, FP_EIO, 0,
							 "%s: cannot open: no process is reading "
							 "this FIFO (ENXIO)",
							 path) :
					     sys_error(diag, path, "open", errno);
				goto fail_open;
			}
			goto stream;
		}
	} else if (errno != ENOENT) {
		rc = sys_error(diag, path, "look up the output file", errno);
		goto fail_open;
	}
	rc = resolve(path, &of->dest, diag);
	if (rc)
		goto fail_open;
	lr = lstat(of->dest, &dst);
	lerr = lr ? errno : 0;
	if (!lr && S_ISREG(dst.st_mode)) {
		rc = open_tmp(of, &dst, diag);
	} else if (lr && lerr != ENOENT) {
		rc = sys_error(diag, path, "look up the output file", lerr);
	} else if (lr && !exists) {
		rc = open_tmp(of, NULL, diag); /* a new file, or a dangling link's target */
	} else {
		/* A file reached through a link that names nothing (a /proc descriptor of a deleted
		 * file), or one that changed under us: write through, truncating as > would. */
		of->through = true;
		of->fd = open(path, O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC);
		rc = of->fd < 0 ? sys_error(diag, path, "open", errno) : FP_OK;
	}
	if (rc)
		goto fail_open;
stream:
	if (of->through && of->fd >= 0) {
		int fl = fcntl(of->fd, F_GETFL);

		if (fl >= 0 && (fl & O_NONBLOCK) && fd < 0)
			fcntl(of->fd, F_SETFL, fl & ~O_NONBLOCK);
	}
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
		rc = sys_error(diag, of->name, step, err);
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
	if (stat(path, &st) == 0) {
		kind = refused_kind(st.st_mode);
		if (kind) {
			char buf[128];

			return fp_diag_set(diag, FP_EINVAL, 0,
					   "%s: is %s; refusing to write a file onto it",
					   short_path(buf, sizeof(buf), path), kind);
		}
		if (!S_ISREG(st.st_mode))
			return FP_OK; /* written through when the time comes */
	} else if (errno != ENOENT) {
		return sys_error(diag, path, "look up the output file", errno);
	}
	rc = resolve(path, &dest, diag);
	if (rc)
		return rc;
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
	probe.name = (char *)path;
	probe.dest = dest;
	rc = open_tmp(&probe, NULL, diag);
	if (!rc) {
		close(probe.fd);
		unlink(probe.tmp);
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
