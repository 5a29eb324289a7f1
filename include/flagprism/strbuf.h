/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A growable, capped byte buffer: the one way FlagPrism builds text and binary output in memory
 * (JSON and .npy writers, report lines, file contents). It grows geometrically, refuses to grow
 * past a caller-chosen cap (FP_ELIMIT instead of allocating gigabytes on hostile input) and keeps
 * its contents NUL-terminated so text can be handed to C string functions. It is not a rope or a
 * stream: contents live in one contiguous block, and it has no notion of encoding.
 */
#ifndef FLAGPRISM_STRBUF_H
#define FLAGPRISM_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

#include <flagprism/export.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The cap used when fp_strbuf_init() is given 0: 2 GiB of contents. */
#define FP_STRBUF_DEFAULT_CAP ((size_t)1 << 31)

/*
 * Invariants, true after fp_strbuf_init() and after every call below whatever it returned:
 *  - `buf` is never NULL and `buf[len] == '\0'` (contents may also hold NUL bytes of their own);
 *  - `alloc == 0` means no memory is owned and `buf` points to a shared, read-only empty string:
 *    never write through it, and never free it; otherwise `len < alloc`;
 *  - `len <= cap`. `cap` is the largest `len` the buffer will ever accept.
 * The fields may be read directly. `buf` may change on every growth, so pointers into it are
 * borrowed only until the next call that adds to the buffer. Callers may shrink `len` (and must
 * then write the NUL) but should use the functions for everything else. Caller-owned; not
 * thread-safe.
 */
struct fp_strbuf {
	char *buf;    /* contents, NUL-terminated; never NULL */
	size_t len;   /* bytes of contents, not counting the terminating NUL */
	size_t alloc; /* bytes allocated at buf (0: buf is the shared empty string) */
	size_t cap;   /* maximum len; growth past it fails with FP_ELIMIT */
};

/** Initialise an empty buffer that will hold at most `cap` bytes (0: FP_STRBUF_DEFAULT_CAP).
 *  Allocates nothing and cannot fail. */
FP_EXTERN void fp_strbuf_init(struct fp_strbuf *sb, size_t cap);

/** Free the memory and return to the freshly initialised, empty state (the cap is kept). */
FP_EXTERN void fp_strbuf_release(struct fp_strbuf *sb);

/** Empty the buffer (len = 0) but keep its memory for reuse. */
FP_EXTERN void fp_strbuf_reset(struct fp_strbuf *sb);

/**
 * Make room for `extra` more bytes after `len` (plus the NUL), growing geometrically so that a
 * sequence of appends costs amortised O(1) per byte. Returns FP_OK, FP_ELIMIT if `len + extra`
 * would exceed the cap, or FP_ENOMEM. On failure the buffer is unchanged.
 */
FP_EXTERN int fp_strbuf_grow(struct fp_strbuf *sb, size_t extra);

/** Append `n` bytes (which may include NULs; `data` may be NULL when `n` is 0). FP_OK,
 *  FP_ELIMIT or FP_ENOMEM; unchanged on failure. */
FP_EXTERN int fp_strbuf_add(struct fp_strbuf *sb, const void *data, size_t n);

/** Append a NUL-terminated string. Same returns as fp_strbuf_add(). */
FP_EXTERN int fp_strbuf_addstr(struct fp_strbuf *sb, const char *s);

/** Append one byte (`c` is converted to unsigned char). Same returns as fp_strbuf_add(). */
FP_EXTERN int fp_strbuf_addch(struct fp_strbuf *sb, int c);

/**
 * Append printf-formatted text. FP_OK, FP_ELIMIT, FP_ENOMEM, or FP_EINVAL if the C library
 * reports a formatting error. Unchanged on failure.
 */
FP_EXTERN int fp_strbuf_addf(struct fp_strbuf *sb, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/** va_list form of fp_strbuf_addf(); `ap` is consumed as by vprintf. */
FP_EXTERN int fp_strbuf_vaddf(struct fp_strbuf *sb, const char *fmt, va_list ap)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 0)))
#endif
	;

/**
 * Take the contents out of the buffer: returns a NUL-terminated block that the caller frees with
 * fp_free(), stores its length in `*len` when `len` is not NULL, and re-initialises `sb` (empty,
 * same cap). An empty, never-grown buffer yields a freshly allocated "". Returns NULL only on
 * out-of-memory, in which case `sb` is left as it was.
 */
FP_EXTERN char *fp_strbuf_detach(struct fp_strbuf *sb, size_t *len);

/**
 * Append the whole contents of the file at `path`. Returns FP_OK, FP_EIO (cannot open or read;
 * `diag` names the path and the system's reason), FP_ELIMIT (the file would take `len` past the
 * cap) or FP_ENOMEM. On failure the buffer's previous contents are kept and nothing is appended.
 * Works on regular files and on pipes, FIFOs or /proc files whose size is not known in advance
 * (read up to the cap as they go); a directory, a device (/dev/zero) or a socket is refused
 * with FP_EIO before anything is read. The open never waits: a FIFO that no process writes to
 * is refused ("no process wrote to it"); one with a writer is read until the writer closes it.
 */
FP_EXTERN int fp_strbuf_read_file(struct fp_strbuf *sb, const char *path, struct fp_diag *diag);

/* Flags of fp_strbuf_read_path(). */
#define FP_STRBUF_READ_REGULAR (1u << 0) /* a regular file only: a FIFO or pipe is refused too */

/**
 * fp_strbuf_read_file() with `flags`. FP_STRBUF_READ_REGULAR is for a file found beside another
 * or named inside one (a profile's metadata or trace, a report's source file), which the user
 * did not name: anything but a regular file there is refused before a byte is read, so a FIFO
 * planted under that name cannot make the reader wait.
 */
FP_EXTERN int fp_strbuf_read_path(struct fp_strbuf *sb, const char *path, unsigned flags,
				  struct fp_diag *diag);

/**
 * Write the contents to `path`, replacing it as include/flagprism/outfile.h says: a regular file
 * through a temporary file in the same directory renamed over it, so readers never see a half
 * written file; a device or FIFO written through, never replaced; a symbolic link's target
 * written. New files get mode 0666 minus the umask. Not synced to disk. Returns FP_OK, FP_EIO
 * (`diag` names the path and the reason with its errno name; the temporary file is removed),
 * FP_EINVAL (a destination that is refused) or FP_ENOMEM.
 */
FP_EXTERN int fp_strbuf_write_file(const struct fp_strbuf *sb, const char *path,
				   struct fp_diag *diag);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_STRBUF_H */
