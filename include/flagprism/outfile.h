/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Output files: the one way the library creates a file it writes (profiles, metadata, reports,
 * .npy dumps, HTML pages). A regular destination is written under a temporary name in its
 * directory, created exclusively (O_EXCL|O_NOFOLLOW: a name planted there is never followed or
 * reused) and readable by its owner alone until it is renamed into place at commit, so no
 * reader sees half a file and a failure leaves the old file and no temporary behind. A
 * destination that is not a regular file is never replaced: a character device or a FIFO
 * (/dev/null, a terminal, a named pipe with a reader) is written through, the descriptors
 * /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N are written through the process's own
 * descriptor, and a directory, a block device, a socket or a FIFO nobody reads is refused. A
 * symbolic link is followed: its target is written and the link kept, except a link in a
 * sticky world-writable directory (/tmp) owned by neither the caller nor the directory's owner,
 * which is refused as the kernel's protected_symlinks refuses it. Failures name the path, the
 * step and the system's reason with its errno name ("No space left on device (ENOSPC)").
 * docs/cli/flagprism.md ("Output files") is the user's statement of this rule.
 *
 * Writing never waits without end: a device or FIFO is written as it takes bytes, and after
 * fp_outfile_interrupt() (from a signal handler) writes stop at its deadline.
 *
 * Not a general file API: nothing here reads, appends, locks or syncs to disk.
 */
#ifndef FLAGPRISM_OUTFILE_H
#define FLAGPRISM_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

#include <flagprism/export.h>
#include <flagprism/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Flags of fp_outfile_open(). */
#define FP_OUTFILE_DASH_STDOUT (1u << 0) /* "-" means standard output (for CLI -o -) */

/**
 * One file being written. Caller-owned; fp_outfile_open() fills it, and exactly one of
 * fp_outfile_commit() or fp_outfile_abort() must follow. `f` is the stream to write to between
 * the two (borrowed: never fclose() it); the other fields are private.
 */
struct fp_outfile {
	FILE *f;
	char *name;    /* the path as given, for messages */
	char *dest;    /* the file renamed onto at commit (symbolic links followed) */
	char *tmp;     /* the temporary file; NULL when writing through */
	int fd;        /* the descriptor under `f` */
	int err;       /* errno of the first failed write, 0 if none */
	bool through;  /* writing straight to a device, FIFO or descriptor */
	bool poll;     /* a device, FIFO or pipe: wait for room with poll(), bounded */
	bool own;      /* the process's own descriptor (its flags are not ours to change) */
	int slot;      /* its place in the table fp_outfile_remove_temporaries() reads, or -1 */
	unsigned mode; /* the permissions the file gets when renamed into place */
	int uid, gid;  /* the owner it gets (a file root replaces keeps its owner), or -1 */
};

/**
 * Start writing `path`. FP_OK with `of->f` ready; FP_EINVAL for an empty path or a destination
 * that must not be written (a directory, a block device, a socket); FP_EIO when the system
 * refuses (diag: the path, the step and the errno name); FP_ENOMEM. On failure nothing was
 * created and `of` needs no release.
 */
FP_EXTERN int fp_outfile_open(struct fp_outfile *of, const char *path, unsigned flags,
			      struct fp_diag *diag);

/**
 * Finish: flush, close and rename the temporary file onto the destination. FP_OK, or FP_EIO
 * when any write, the close or the rename failed (the temporary file is removed, the old
 * destination left as it was; diag names the path and the first reason). `of` is released in
 * any case.
 */
FP_EXTERN int fp_outfile_commit(struct fp_outfile *of, struct fp_diag *diag);

/**
 * Commit or abort after writing, by the writer's status: FP_OK commits; a failed write (FP_EIO
 * with a write error recorded) commits to report the errno (which fails); any other status
 * aborts and is returned as it is, its diag untouched. `of` is released.
 */
FP_EXTERN int fp_outfile_finish(struct fp_outfile *of, int status, struct fp_diag *diag);

/** Give up: close and remove the temporary file. `of` is released. Safe after a failed open. */
FP_EXTERN void fp_outfile_abort(struct fp_outfile *of);

/**
 * Whether `path` could be written by fp_outfile_open() later, without writing it: its directory
 * exists and takes a new file (a probe file is created and removed), its name fits the file
 * system's limit, and it is not a destination that would be refused. For checking an output
 * location before a long run. FP_OK, FP_EINVAL, FP_EIO (diag says why, with the errno name),
 * FP_ENOMEM.
 */
FP_EXTERN int fp_outfile_check(const char *path, struct fp_diag *diag);

/**
 * Stop writing outputs soon: writes still going `grace_ms` milliseconds from now fail (their
 * files are not replaced, their temporaries removed), and fp_outfile_open() refuses from then
 * on, with "a signal ended the writing (EINTR)". A file complete before the deadline is renamed
 * into place as usual. The first call sets the deadline; later ones keep it. Async-signal-safe:
 * meant for a SIGTERM handler, so that a signal ends the writing within a bounded time with
 * what was complete. Process-wide.
 */
FP_EXTERN void fp_outfile_interrupt(unsigned grace_ms);

/** Forget a deadline set by fp_outfile_interrupt(): outputs may be written again. */
FP_EXTERN void fp_outfile_interrupt_reset(void);

/** Whether fp_outfile_interrupt()'s deadline has passed (nothing is written any more). */
FP_EXTERN bool fp_outfile_interrupted(void);

/**
 * Remove the temporary files of every output being written in this process (the first 32 open
 * at once; any beyond are not tracked). Async-signal-safe: for a handler that then lets the
 * signal end the process, so that no temporary file is left behind. The outputs themselves are
 * untouched: their old contents stay.
 */
FP_EXTERN void fp_outfile_remove_temporaries(void);

/** The symbolic name of an errno value ("ENOSPC"), or "errno N" in a static buffer for one
 *  it does not know (not thread-safe for those). */
FP_EXTERN const char *fp_errno_name(int err);

#ifdef __cplusplus
}
#endif

#endif /* FLAGPRISM_OUTFILE_H */
