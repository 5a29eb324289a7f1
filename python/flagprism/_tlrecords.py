# SPDX-License-Identifier: Apache-2.0
"""Device-side writers of intra-kernel timeline records (docs/formats/timeline-format.md).

The timeline twin of a kernel (``_timeline.py``) calls ``begin`` once in its prologue and
``rec`` at every scope enter and exit. A record is four int64 words in the program's own slots
(no atomics: a program's records are its own): the tag (scope id, kind, SM id), the time in ns,
the cycle counter, and a spare word; the program's first word counts the records it wanted to
write, so overflow is exact. Every value here is a scalar, which Triton stores from one thread
of the program, not from every lane.

Two flavours: the NVIDIA one reads ``%globaltimer`` (ns), ``%clock64`` (cycles of the SM) and
``%smid`` through ``tl.inline_asm_elementwise`` (the interpreter has no inline assembly); the
host one, for the Triton interpreter, is plain Python reading ``time.monotonic_ns()`` (the
host clock the profiler uses) and writing the CPU buffer directly. This module does not size,
launch or decode anything.
"""

from __future__ import annotations

import threading
import time

import triton
import triton.language as tl

TAG_BEGIN = 2 << 16
TAG_END = 3 << 16
KIND_SHIFT = 16
ENTER = 0
EXIT = 1


def tag(scope: int, kind: int) -> int:
    """The constant tag word of a record (SM id added at run time)."""
    return scope | (kind << KIND_SHIFT)


# ------------------------------------------------------------------------------------------------
# NVIDIA
# ------------------------------------------------------------------------------------------------


@triton.jit
def _globaltimer():
    return tl.inline_asm_elementwise(
        "mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1
    )


@triton.jit
def _clock64():
    return tl.inline_asm_elementwise(
        "mov.u64 $0, %clock64;", "=l", [], dtype=tl.int64, is_pure=False, pack=1
    )


@triton.jit
def _smid():
    return tl.inline_asm_elementwise(
        "mov.u32 $0, %smid;", "=r", [], dtype=tl.int32, is_pure=True, pack=1
    )


@triton.jit
def rec(base, slots, n, TAG: tl.constexpr):
    """Write one record at slot n (if it fits) and count it; returns n + 1."""
    sm = _smid()
    cyc = _clock64()
    t = _globaltimer()
    p = base + 1 + n.to(tl.int64) * 4
    ok = n < slots
    tl.store(p, (sm.to(tl.int64) << 32) | TAG, mask=ok)
    tl.store(p + 1, t, mask=ok)
    tl.store(p + 2, cyc, mask=ok)
    tl.store(base, (n + 1).to(tl.int64))
    return n + 1


@triton.jit
def begin(ctx):
    """This program's slot base, the slot count S (header word 2) and its first record."""
    p = tl.program_id(0) + tl.num_programs(0) * (
        tl.program_id(1) + tl.num_programs(1) * tl.program_id(2)
    )
    slots = tl.load(ctx + 2).to(tl.int32)
    base = ctx + 8 + p.to(tl.int64) * (1 + 4 * slots.to(tl.int64))
    n = rec(base, slots, slots * 0, 131072)  # TAG_BEGIN
    return base, slots, n


# ------------------------------------------------------------------------------------------------
# Host (Triton interpreter)
# ------------------------------------------------------------------------------------------------

_host = threading.local()


def set_host_buffer(words) -> None:  # noqa: ANN001 - a NumPy int64 array over the CPU buffer
    """The buffer the host flavour writes (the interpreter runs the launch on this thread)."""
    _host.words = words


def _pid(axis: int) -> int:
    return int(tl.program_id(axis).handle.data.item())


def _nprog(axis: int) -> int:
    return int(tl.num_programs(axis).handle.data.item())


def _int(x) -> int:  # noqa: ANN001 - a Python int or an interpreter scalar tensor
    h = getattr(x, "handle", None)
    return int(h.data.item()) if h is not None else int(x)


def host_rec(base, slots, n, TAG) -> int:  # noqa: ANN001, N803 - the twin's call
    """The interpreter wraps every assigned value in a tensor: unwrap them first."""
    t = time.monotonic_ns()
    base, slots, n, TAG = _int(base), _int(slots), _int(n), _int(TAG)
    w = _host.words
    if n < slots:
        p = base + 1 + n * 4
        w[p] = TAG
        w[p + 1] = t
        w[p + 2] = 0
    w[base] = n + 1
    return n + 1


def host_begin(ctx) -> tuple[int, int, int]:  # noqa: ANN001 - the twin's context pointer
    p = _pid(0) + _nprog(0) * (_pid(1) + _nprog(1) * _pid(2))
    w = _host.words
    slots = int(w[2])
    base = 8 + p * (1 + 4 * slots)
    return base, slots, host_rec(base, slots, 0, TAG_BEGIN)


def helpers(flavour: str) -> dict[str, object]:
    """The names the twin calls: ``__fp_tl_begin`` and ``__fp_tl_rec``."""
    if flavour == "host":
        return {"__fp_tl_begin": host_begin, "__fp_tl_rec": host_rec}
    if flavour == "nvidia":
        return {"__fp_tl_begin": begin, "__fp_tl_rec": rec}
    raise ValueError(f"unknown timeline flavour {flavour!r}")
