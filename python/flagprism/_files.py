# SPDX-License-Identifier: Apache-2.0
"""Files FlagPrism keeps for itself, made and read safely: a directory that must be private to
this user (owned by us, nobody else may write in it, not a symbolic link), else a fresh private
one; and reading a file that must be a regular file, opened so that a FIFO planted under its
name can never make the reader wait. Not for the user's outputs: profiles, reports and
summaries are written by the C library's one writer (``fp_outfile``, include/flagprism/outfile.h).
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile


def is_private_dir(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a directory itself (not a link to one) that this user owns and that
    neither its group nor others may write to."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (
        stat.S_ISDIR(st.st_mode)
        and st.st_uid == os.geteuid()
        and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


def private_dir(path: str | os.PathLike[str], prefix: str) -> str:
    """`path`, made with mode 0700 if it is missing, when it is private (is_private_dir);
    otherwise, for a directory planted there by another user, a link or one others may write
    to, a fresh private directory (``mkdtemp`` in the temporary directory, named `prefix`...)
    that is never shared."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return tempfile.mkdtemp(prefix=prefix)
    if is_private_dir(path):
        return os.fspath(path)
    return tempfile.mkdtemp(prefix=prefix)


def read_regular(path: str | os.PathLike[str], errors: str = "strict") -> str:
    """The UTF-8 text of the regular file `path`. The open does not wait (O_NONBLOCK) and what
    was opened is checked before a byte is read: a FIFO, device or directory raises OSError."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"{os.fspath(path)}: not a regular file; not read")
        f = os.fdopen(fd, encoding="utf-8", errors=errors)
        fd = -1
        with f:
            return f.read()
    finally:
        if fd >= 0:
            os.close(fd)
