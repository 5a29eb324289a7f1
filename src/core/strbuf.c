/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The capped growable buffer (include/flagprism/strbuf.h) and its file helpers. Growth is
 * geometric (x1.5) and clamped to the cap, so appends are amortised O(1) and a hostile input can
 * never make us allocate more than the caller allowed. Not a general I/O layer: files are read
 * and written whole.
 */
#include "fp-setup.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flagprism/outfile.h>
#include <flagprism/strbuf.h>
#include "core/core-internal.h"

/* What `buf` points to while nothing is allocated. Only ever read. */
static char strbuf_empty[1];

/* Reads of files of unknown size proceed in chunks of this many bytes. */
#define READ_CHUNK ((size_t)64 * 1024)

void fp_strbuf_init(struct fp_strbuf *sb, size_t cap)
{
	sb->buf = strbuf_empty;
	sb->len = 0;
	sb->alloc = 0;
	sb->cap = cap ? cap : FP_STRBUF_DEFAULT_CAP;
}

void fp_strbuf_release(struct fp_strbuf *sb)
{
	if (sb->alloc)
		fp_free(sb->buf);
	fp_strbuf_init(sb, sb->cap);
}

void fp_strbuf_reset(struct fp_strbuf *sb)
{
	sb->len = 0;
	if (sb->alloc)
		sb->buf[0] = '\0';
}

int fp_strbuf_grow(struct fp_strbuf *sb, size_t extra)
{
	size_t want, need, limit;
	char *p;

	/* The cap bounds len; len + extra must stay within it (and must not wrap). */
	if (extra > sb->cap || sb->len > sb->cap - extra)
		return FP_ELIMIT;
	need = sb->len + extra + 1;
	if (need <= sb->alloc)
		return FP_OK;
	limit = sb->cap == SIZE_MAX ? SIZE_MAX : sb->cap + 1;
	want = sb->alloc < 64 ? 64 : sb->alloc;
	want = want > SIZE_MAX / 3 * 2 ? SIZE_MAX : want / 2 * 3;
	if (want < need)
		want = need;
	if (want > limit)
		want = limit;
	p = fp_realloc(sb->alloc ? sb->buf : NULL, want);
	if (!p)
		return FP_ENOMEM;
	if (!sb->alloc)
		p[0] = '\0';
	sb->buf = p;
	sb->alloc = want;
	return FP_OK;
}

int fp_strbuf_add(struct fp_strbuf *sb, const void *data, size_t n)
{
	int r;

	if (n == 0) /* data may be NULL then */
		return FP_OK;
	/* fits already (alloc <= cap + 1, so the cap holds too) */
	if (n < sb->alloc - sb->len) {
		memcpy(sb->buf + sb->len, data, n);
		sb->len += n;
		sb->buf[sb->len] = '\0';
		return FP_OK;
	}
	r = fp_strbuf_grow(sb, n);
	if (r)
		return r;
	memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
	return FP_OK;
}

int fp_strbuf_addstr(struct fp_strbuf *sb, const char *s)
{
	return fp_strbuf_add(sb, s, strlen(s));
}

int fp_strbuf_addch(struct fp_strbuf *sb, int c)
{
	int r;

	if (sb->len + 1 >= sb->alloc) {
		r = fp_strbuf_grow(sb, 1);
		if (r)
			return r;
	}
	sb->buf[sb->len++] = (char)(unsigned char)c;
	sb->buf[sb->len] = '\0';
	return FP_OK;
}

int fp_strbuf_vaddf(struct fp_strbuf *sb, const char *fmt, va_list ap)
{
	va_list ap2;
	size_t avail;
	int n, r;

	/* First try to format into the free space we already have: most calls fit. */
	avail = sb->alloc ? sb->alloc - sb->len : 0;
	va_copy(ap2, ap);
	if (avail)
		n = vsnprintf(sb->buf + sb->len, avail, fmt, ap2);
	else
		n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0) {
		if (sb->alloc)
			sb->buf[sb->len] = '\0';
		return FP_EINVAL;
	}
	if ((size_t)n < avail) {
		sb->len += (size_t)n;
		return FP_OK;
	}
	r = fp_strbuf_grow(sb, (size_t)n);
	if (r) {
		/* the truncated attempt may have overwritten our terminator */
		if (sb->alloc)
			sb->buf[sb->len] = '\0';
		return r;
	}
	n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
	if (n < 0) {
		sb->buf[sb->len] = '\0';
		return FP_EINVAL;
	}
	sb->len += (size_t)n;
	return FP_OK;
}

int fp_strbuf_addf(struct fp_strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = fp_strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
	return r;
}

char *fp_strbuf_detach(struct fp_strbuf *sb, size_t *len)
{
	char *p;

	if (sb->alloc) {
		p = sb->buf;
	} else {
		p = fp_malloc(1);
		if (!p)
			return NULL;
		p[0] = '\0';
	}
	if (len)
		*len = sb->len;
	fp_strbuf_init(sb, sb->cap);
	return p;
}

/* What kind of file `m` is, for a refusal. */
static const char *kind_of(mode_t m)
{
	return S_ISDIR(m)  ? "a directory" :
	       S_ISCHR(m)  ? "a character device" :
	       S_ISBLK(m)  ? "a block device" :
	       S_ISSOCK(m) ? "a socket" :
	       S_ISFIFO(m) ? "a FIFO" :
			     "not a regular file";
}

/*
 * read() that waits for a pipe or FIFO with a writer to have data (poll), so that the descriptor
 * can stay non-blocking. 0 at the end (no writer left), -1 with errno on failure.
 */
static ssize_t read_some(int fd, char *buf, size_t n)
{
	for (;;) {
		ssize_t got = read(fd, buf, n);
		struct pollfd p = {.fd = fd, .events = POLLIN};

		if (got >= 0 || (errno != EAGAIN && errno != EINTR))
			return got;
		if (errno == EAGAIN && poll(&p, 1, -1) < 0 && errno != EINTR)
			return -1;
	}
}

int fp_strbuf_read_path(struct fp_strbuf *sb, const char *path, unsigned flags,
			struct fp_diag *diag)
{
	size_t old_len = sb->len, chunk, size;
	struct stat st;
	ssize_t got;
	char c;
	int r, fd;

	/* Non-blocking, so that opening a FIFO never waits for a writer (nor a device for its
	 * carrier); what was opened is then looked at before a byte is read. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return fp_diag_set(diag, FP_EIO, 0, "cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) != 0)
		goto fail_io;
	/* Files, pipes and FIFOs hold data to read; a device such as /dev/zero is endless. A file
	 * found beside another one (a sidecar) must be a regular file: a FIFO there would wait for
	 * a writer that never comes. */
	if (!S_ISREG(st.st_mode) && (!S_ISFIFO(st.st_mode) || (flags & FP_STRBUF_READ_REGULAR))) {
		r = fp_diag_set(diag, FP_EIO, 0, "cannot read '%s': it is %s, not a %sfile", path,
				kind_of(st.st_mode),
				flags & FP_STRBUF_READ_REGULAR ? "regular " : "");
		goto fail_read;
	}
	/* A regular file's size lets us allocate once (plus a byte to see EOF without growing). */
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		if ((uint64_t)st.st_size > (uint64_t)(sb->cap - sb->len)) {
			r = fp_diag_set(diag, FP_ELIMIT, 0,
					"'%s' is %" PRIu64 " bytes, over the limit of %zu bytes",
					path, (uint64_t)st.st_size, sb->cap);
			goto fail_read;
		}
		size = (size_t)st.st_size;
		r = fp_strbuf_grow(sb, size < sb->cap - sb->len ? size + 1 : size);
		if (r)
			goto fail_grow;
	}
	for (;;) {
		if (sb->len == sb->cap) {
			/* Full to the cap: only an immediate EOF is acceptable. */
			got = read_some(fd, &c, 1);
			if (got == 0)
				break;
			if (got < 0)
				goto fail_io;
			r = fp_diag_set(diag, FP_ELIMIT, sb->len - old_len,
					"'%s' is over the limit of %zu bytes", path, sb->cap);
			goto fail_read;
		}
		if (sb->alloc - sb->len <= 1) {
			r = fp_strbuf_grow(sb, FP_MIN(READ_CHUNK, sb->cap - sb->len));
			if (r)
				goto fail_grow;
		}
		chunk = sb->alloc - sb->len - 1;
		got = read_some(fd, sb->buf + sb->len, chunk);
		if (got < 0)
			goto fail_io;
		if (got == 0)
			break;
		sb->len += (size_t)got;
	}
	if (S_ISFIFO(st.st_mode) && sb->len == old_len) {
		r = fp_diag_set(diag, FP_EIO, 0,
				"cannot read '%s': it is a FIFO or pipe and no process wrote to it",
				path);
		goto fail_read;
	}
	if (sb->alloc)
		sb->buf[sb->len] = '\0';
	close(fd);
	return FP_OK;

fail_io:
	r = fp_diag_set(diag, FP_EIO, sb->len - old_len, "cannot read '%s': %s", path,
			strerror(errno));
	goto fail_read;
fail_grow:
	if (r == FP_ELIMIT)
		r = fp_diag_set(diag, r, sb->len - old_len, "'%s' is over the limit of %zu bytes",
				path, sb->cap);
	else
		r = fp_diag_set(diag, r, sb->len - old_len, "out of memory reading '%s'", path);
fail_read:
	sb->len = old_len;
	if (sb->alloc)
		sb->buf[sb->len] = '\0';
	close(fd);
	return r;
}

int fp_strbuf_read_file(struct fp_strbuf *sb, const char *path, struct fp_diag *diag)
{
	return fp_strbuf_read_path(sb, path, 0, diag);
}

int fp_strbuf_write_file(const struct fp_strbuf *sb, const char *path, struct fp_diag *diag)
{
	struct fp_outfile of;
	int r;

	r = fp_outfile_open(&of, path, 0, diag);
	if (r)
		return r;
	if (sb->len && fwrite(sb->buf, 1, sb->len, of.f) != sb->len && !of.err)
		of.err = EIO;
	return fp_outfile_commit(&of, diag);
}

int fp__strbuf_slurp(const char *path, size_t max, unsigned flags, char **out, size_t *len,
		     struct fp_diag *diag)
{
	struct fp_strbuf sb;
	int rc;

	fp_strbuf_init(&sb, max);
	rc = fp_strbuf_read_path(&sb, path, flags, diag);
	if (rc) {
		fp_strbuf_release(&sb);
		return rc;
	}
	*out = fp_strbuf_detach(&sb, len);
	if (!*out) {
		fp_strbuf_release(&sb);
		return fp_diag_set(diag, FP_ENOMEM, 0, "out of memory");
	}
	return FP_OK;
}
