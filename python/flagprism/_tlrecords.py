# SPDX-License-Identifier: Apache-2.0
"""Device-side writers of intra-kernel timeline records (docs/formats/timeline-format.md).

The timeline twin of a kernel (``_timeline.py``) calls ``begin`` once in its prologue and
``rec`` at every scope enter and exit. A record is four int64 words in the program's own slots
(no atomics: a program's records are its own): the tag (scope id, kind, SM id), the time in ns,
the cycle counter, and a spare word; the program's first word counts the records it wanted to
write, so overflow is exact. Every value here is a scalar, which Triton stores from one thread
of the program, not from every lane.

Three flavours. The NVIDIA one reads ``%globaltimer`` (ns), ``%clock64`` (cycles of the SM) and
``%smid`` through ``tl.inline_asm_elementwise`` (inline PTX). The AMD one (CDNA2/CDNA3: gfx90a,
gfx942) reads ``s_memrealtime`` (ticks of a constant-rate clock, converted to ns by the decoder with the rate
the host writes in the header), ``s_memtime`` (cycles of the shader clock) and the CU, shader
array and shader engine fields of ``HW_REG_HW_ID`` through inline AMDGCN assembly; the values
land in scalar registers, one read per wavefront, whatever the wavefront size. The host one, for
the Triton interpreter (which has no inline assembly), is plain Python reading
``time.monotonic_ns()`` (the host clock the profiler uses) and writing the CPU buffer directly.
This module does not size, launch or decode anything.
"""

from __future__ import annotations

import threading
import time

import triton
import triton.language as tl

#: s_memrealtime's constant rate (kHz) on the AMD parts the AMD flavour is for, as their ISA
#: manuals state it (and HIP's hipDeviceAttributeWallClockRate reports it): 25 MHz on CDNA2
#: (gfx90a), 100 MHz on CDNA3 (gfx942). These two are the ones tests/python/test_cross_compile.py
#: compiles for. Any other part runs uninstrumented with a warning: its rate may differ (gfx908
#: is documented at 25 MHz but never compiled here, gfx950 is not documented to us), and gfx11
#: and later have neither s_memrealtime nor s_memtime.
AMD_REALTIME_KHZ = {"gfx90a": 25_000, "gfx942": 100_000}

TAG_BEGIN = 2 << 16
TAG_END = 3 << 16
KIND_SHIFT = 16
ENTER = 0
EXIT = 1


def tag(scope: int, kind: int) -> int:
    """The constant tag word of a record (SM id added at run time)."""
    return scope | (kind << KIND_SHIFT)


# ------------------------------------------------------------------------------------------------
# What every device flavour shares: the program's slots and the record layout
# ------------------------------------------------------------------------------------------------


@triton.jit
def _slots(ctx):
    """This program's slot base and the slot count S (header word 2)."""
    p = tl.program_id(0) + tl.num_programs(0) * (
        tl.program_id(1) + tl.num_programs(1) * tl.program_id(2)
    )
    slots = tl.load(ctx + 2).to(tl.int32)
    return ctx + 8 + p.to(tl.int64) * (1 + 4 * slots.to(tl.int64)), slots


@triton.jit
def _put(base, slots, n, TAG: tl.constexpr, unit, t, cyc):
    """Record n (if it fits): the tag with the unit id (SM, CU) above it, the time, the cycles;
    the program's count goes up either way. Returns n + 1."""
    p = base + 1 + n.to(tl.int64) * 4
    ok = n < slots
    tl.store(p, (unit.to(tl.int64) << 32) | TAG, mask=ok)
    tl.store(p + 1, t, mask=ok)
    tl.store(p + 2, cyc, mask=ok)
    tl.store(base, (n + 1).to(tl.int64))
    return n + 1


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
    return _put(base, slots, n, TAG, sm, t, cyc)


@triton.jit
def begin(ctx):
    """This program's slot base, the slot count S (header word 2) and its first record."""
    base, slots = _slots(ctx)
    return base, slots, rec(base, slots, slots * 0, 131072)  # TAG_BEGIN


# ------------------------------------------------------------------------------------------------
# AMD (gfx9: gfx90a, gfx942)
# ------------------------------------------------------------------------------------------------
# Both counters are read by scalar memory instructions: their result arrives like a scalar load,
# so the wait for lgkmcnt to drain comes before the registers are used. "=s" puts the 64-bit
# result in a scalar register pair, as the instructions require; the values are the wavefront's
# (all lanes of a wavefront of 32 or 64 see the same), and Triton stores scalars from one lane.


@triton.jit
def _memrealtime():
    return tl.inline_asm_elementwise(
        "s_memrealtime $0\n\ts_waitcnt lgkmcnt(0)",
        "=s",
        [],
        dtype=tl.int64,
        is_pure=False,
        pack=1,
    )


@triton.jit
def _memtime():
    return tl.inline_asm_elementwise(
        "s_memtime $0\n\ts_waitcnt lgkmcnt(0)", "=s", [], dtype=tl.int64, is_pure=False, pack=1
    )


@triton.jit
def _hw_id():
    # HW_ID bits 8-15: CU_ID (8-11), SH_ID (12), SE_ID (13-15): the compute unit within the chip
    # (within its XCD on gfx942, which has several)
    return tl.inline_asm_elementwise(
        "s_getreg_b32 $0, hwreg(HW_REG_HW_ID, 8, 8)",
        "=s",
        [],
        dtype=tl.int32,
        is_pure=True,
        pack=1,
    )


@triton.jit
def amd_rec(base, slots, n, TAG: tl.constexpr):
    """Write one record at slot n (if it fits) and count it; returns n + 1."""
    cu = _hw_id()
    cyc = _memtime()
    t = _memrealtime()
    return _put(base, slots, n, TAG, cu, t, cyc)


@triton.jit
def amd_begin(ctx):
    """This program's slot base, the slot count S (header word 2) and its first record."""
    base, slots = _slots(ctx)
    return base, slots, amd_rec(base, slots, slots * 0, 131072)  # TAG_BEGIN


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
    if flavour == "amd":
        return {"__fp_tl_begin": amd_begin, "__fp_tl_rec": amd_rec}
    raise ValueError(f"unknown timeline flavour {flavour!r}")
