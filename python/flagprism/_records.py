# SPDX-License-Identifier: Apache-2.0
"""Device-side record writers of the Debugger, as plain-``tl`` ``@triton.jit`` helpers.

The instrumented twin of a kernel (see ``_rewrite.py``) calls these helpers; they summarise one
observed value or one memory access and write one 8-word record into the record buffer laid
out by ``docs/formats/record-format.md``. Everything here is ordinary Triton language, so it compiles on
every backend and runs on the interpreter. Shape, dtype and record-header constants are worked
out at compile time by ``constexpr_function`` helpers, so a record costs its reductions and one
8-lane vector store at run time.

Two flavours of each reducer exist. ``*_fused`` is the GPU form, built for instruction count
(an instrumented memory-bound kernel is bound by instruction issue; docs/benchmarks.md): every
statistic goes into the cheapest reduction the compiler has for it. A single-operation 32-bit
integer reduction is one ``redux.sync`` per warp on NVIDIA, so counts, integer min/max, float
min/max (as order-preserving int32 keys) and the first/last active lane (as lane<<16|half keys)
are such reductions; sums share one tuple reduction. Float blocks of float32 and narrower are
summed in float32 (converted to float64 once per record; ``*_exact`` entry points sum every
element in float64, for exact_sums) and summarised as if every element were finite, then
recomputed with masking, in float64, when the sums say otherwise (NaN, Inf, float32 overflow or
underflow: _sums32_ok);
address blocks assume one high address half and are recomputed in 64 bits when the lanes
straddle a 4 GiB boundary. ``*_np`` uses ``tl.sum``/``tl.min``/``tl.max``, which the Triton
interpreter maps to vectorised NumPy (its generic ``tl.reduce`` path calls Python once per
element). Both produce the same record words, up to the rounding order of the sums.

Two more savings need the rewriter: an access ``base + offsets`` with a scalar ``base`` is
summarised from its int32 offsets, and that summary is shared by later accesses through the
same, unchanged offsets and mask (``addr_*`` with PBASE/OFF/OSUM/KEEP); a stored name whose
value was recorded earlier and not reassigned since replays that record's words
(``value_*`` with KEEP/W). Index arithmetic (``s + K * tl.arange(LO, HI)``, comparisons of it and
accesses through it) is not reduced at all: ``value_affine_*``/``value_compare_*``/``addr_closed_*``
store the few scalars it follows from in a closed-form record, which the C decoder expands
(docs/formats/record-format.md, "Closed-form records").

Triton versions differ in what these helpers meet (flagprism.compat decides, by probing): the
``constexpr_function`` decorator comes from compat (Triton 3.4 has none with 3.5's meaning),
block pointers are ``tl.tensor`` values of pointer-to-block type before Triton 3.8 and
``__triton_block_ptr__`` objects in 3.8 (both are recognised below), reductions in any element
order use ``reshape(can_reorder=True)`` only where it is not deprecated, and every mask a helper
gives a load or store is a comparison of a block (Triton 3.9's interpreter rejects masks whose
data is not boolean, which a scalar comparison broadcast to a block is there).

This module does not decode records, size buffers or launch anything.
"""

from __future__ import annotations

import triton
import triton.language as tl

from flagprism import compat
from flagprism.compat import constexpr_function

_INF = tl.constexpr(float("inf"))
_I64_MAX = tl.constexpr(0x7FFFFFFFFFFFFFFF)
_I64_MIN = tl.constexpr(-0x8000000000000000)
_LANE_BIG = tl.constexpr(1 << 30)
_I32_MAX = tl.constexpr(0x7FFFFFFF)
_I32_MIN = tl.constexpr(-0x80000000)
_M21 = tl.constexpr(0x1FFFFF)
_M32 = tl.constexpr(0xFFFFFFFF)
#: tl.reshape(..., can_reorder=True) is available and not deprecated (compat.reshape_can_reorder).
_REORDER = tl.constexpr(compat.reshape_can_reorder())


# --------------------------------------------------------------------------------------------
# Compile-time facts about a value (called by the code generator with the traced object).
# Triton hashes what these functions reference and accepts only other JIT callables, modules
# and constants there, so they are self-contained constexpr functions.
# --------------------------------------------------------------------------------------------


@constexpr_function
def _shape_of(ty):
    if ty.is_block():
        return [int(d) for d in ty.shape]
    if ty.is_ptr() and ty.element_ty.is_block():  # block pointer
        return [int(d) for d in ty.element_ty.shape]
    return []


@constexpr_function
def _is_bp_object(x):
    """A block pointer as Triton 3.8 makes it: a Python aggregate, not a tl.tensor."""
    return getattr(type(x), "__triton_block_ptr__", False) is True


@constexpr_function
def _is_block_pointer(x):
    """A block pointer of any Triton version: a __triton_block_ptr__ object (3.8), or a tl.tensor
    whose type is a pointer to a block (3.4 to 3.7)."""
    if _is_bp_object(x):
        return True
    return isinstance(x, tl.tensor) and x.type.is_ptr() and x.type.element_ty.is_block()


@constexpr_function
def _block_shape_of(ptr):
    """Block shape of a block pointer."""
    if _is_bp_object(ptr):
        return [int(getattr(d, "value", d)) for d in ptr.block_shape]
    return [int(d) for d in ptr.type.element_ty.shape]


@constexpr_function
def _bp_elem(ptr):
    """Element type of a block pointer's block."""
    if _is_bp_object(ptr):
        return ptr.base.dtype.element_ty
    return ptr.type.element_ty.element_ty


@constexpr_function
def _pack_shape(shape):
    """(shape word, flags) per the record format: three 21-bit dims, or [numel] with flag 1."""
    count = 1
    for d in shape:
        count *= d
    if len(shape) > 3 or any(d >= (1 << 21) for d in shape):
        return count & ((1 << 21) - 1), 1
    word = 0
    for i, d in enumerate(shape):
        word |= d << (21 * i)
    return word, 0


@constexpr_function
def _code_of(scalar_ty):
    """Dtype code of docs/formats/record-format.md; 0 for a dtype the format has no code for."""
    if scalar_ty.is_ptr():
        return 16
    codes = {
        "int1": 1,
        "int8": 2,
        "int16": 3,
        "int32": 4,
        "int64": 5,
        "uint8": 6,
        "uint16": 7,
        "uint32": 8,
        "uint64": 9,
        "fp16": 10,
        "bf16": 11,
        "fp32": 12,
        "fp64": 13,
        "fp8e4nv": 14,
        "fp8e5": 15,
    }
    return codes.get(scalar_ty.name, 0)


@constexpr_function
def vclass(x):
    """0: nothing to record (compile-time value, tuple, block pointer...); 1: scalar; 2: block."""
    if not isinstance(x, tl.tensor):
        return 0
    ty = x.type
    if ty.is_block():
        return 2
    if ty.is_ptr() and ty.element_ty.is_block():
        return 0
    return 1


@constexpr_function
def ptr_class(ptr):
    """0: not a pointer; 1: scalar pointer; 2: block of pointers; 3: block pointer."""
    if _is_bp_object(ptr):
        return 3
    if not isinstance(ptr, tl.tensor):
        return 0
    ty = ptr.type
    if ty.is_block():
        return 2 if ty.element_ty.is_ptr() else 0
    if ty.is_ptr() and ty.element_ty.is_block():
        return 3
    return 1 if ty.is_ptr() else 0


@constexpr_function
def mask_class(mask):
    """0: no mask or a true constant; 1: a false constant; 2: a mask tensor."""
    if mask is None:
        return 0
    if isinstance(mask, tl.tensor):
        return 2
    return 0 if bool(mask) else 1


@constexpr_function
def dtype_code(x):
    return _code_of(x.dtype)


@constexpr_function
def pointee_code(ptr):
    if _is_block_pointer(ptr):
        return _code_of(_bp_elem(ptr))
    ty = ptr.type
    if ty.is_block():
        ty = ty.element_ty  # pointer type of the lanes
    pointee = ty.element_ty
    if pointee.is_block():  # block pointer
        pointee = pointee.element_ty
    return _code_of(pointee)


@constexpr_function
def ndim(x):
    return len(_shape_of(x.type))


@constexpr_function
def dim(x, i):
    return _shape_of(x.type)[i]


@constexpr_function
def numel(x):
    count = 1
    for d in _shape_of(x.type):
        count *= d
    return count


@constexpr_function
def shape_word(x):
    return _pack_shape(_shape_of(x.type))[0]


@constexpr_function
def word0(site, kind, x, code, counts=False):
    """Constant part of record word 0 (everything but the sequence number); counts: the flag of
    a counts-only value record (flags bit 2)."""
    shape = _shape_of(x.type)
    flags = _pack_shape(shape)[1] | (4 if counts else 0)
    return site | (kind << 16) | (code << 24) | (len(shape) << 32) | (flags << 36)


@constexpr_function
def vflavor(x):
    """How a value is summarised: 1 float upcast to fp32 first, 2 fp32/fp64 as is, 3 int32 or
    uint32 (exact int64 sums), 4 int64, 5 uint64, 6 pointer, 7 bool (one count), 8 8/16-bit ints
    (min/max and, for up to 32768 elements, exact sums in int32), 0 unsupported."""
    t = x.dtype
    if t.is_ptr():
        return 6
    name = t.name
    if name in ("fp32", "fp64"):
        return 2
    if name in ("fp16", "bf16", "fp8e4nv", "fp8e5"):
        return 1
    if name == "int1":
        return 7
    if name in ("int8", "int16", "uint8", "uint16"):
        return 8
    if name in ("int32", "uint32"):
        return 3
    if name == "int64":
        return 4
    if name == "uint64":
        return 5
    return 0


# --------------------------------------------------------------------------------------------
# Run-time pieces
# --------------------------------------------------------------------------------------------


@triton.jit
def begin(ctx, REC: tl.constexpr = 8):
    """Base of this program's record slots and the slot count S (header word 2). REC: the word
    where the record slots start (8, or after the check area: _checks.records_at)."""
    p = tl.program_id(0) + tl.num_programs(0) * (
        tl.program_id(1) + tl.num_programs(1) * tl.program_id(2)
    )
    slots = tl.load(ctx + 2)
    return ctx + REC + p.to(tl.int64) * slots * 8, slots


@triton.jit
def _rsum(x):
    # tl.reduce with Triton's own combine functions, not tl.sum/min/max: the same code on a GPU,
    # and on the interpreter no extra @jit call (each one re-patches the language modules).
    return tl.reduce(x, None, tl.standard._sum_combine)


@triton.jit
def _rmin(x):
    return tl.reduce(x, None, tl.standard._elementwise_min)


@triton.jit
def _rmax(x):
    return tl.reduce(x, None, tl.standard._elementwise_max)


@triton.jit
def _add3(a1, b1, c1, a2, b2, c2):
    return a1 + a2, b1 + b2, c1 + c2


# Float statistics in one tuple reduction (min/max included: warp shuffles instead of
# redux.sync, but one shared-memory round and fewer barriers) rather than a tuple for the sums
# and zero count plus one integer reduction each for min and max. About the same instruction
# count; measured 4.5% faster on the H200 (docs/benchmarks.md; bench variant new-split is the
# other form).
_ONE_TUPLE = tl.constexpr(True)


@constexpr_function
def _is_unsigned(x):
    return x.dtype.is_int_unsigned()


@constexpr_function
def _is_fp64(x):
    return x.dtype.name == "fp64"


@triton.jit
def _exact_f64(x):
    """A 32-bit integer block as float64, exactly, in two ALU operations instead of a conversion
    (which runs on the GPU's slow conversion unit): the integer goes into the low mantissa bits
    of 2**52 (plus a 2**31 bias for signed values), and the bias is subtracted."""
    if _is_unsigned(x):
        u = x.to(tl.uint64)
        w = (u | 0x4330000000000000).to(tl.float64, bitcast=True) - 4503599627370496.0
    else:
        u = (x ^ _I32_MIN).to(tl.uint32, bitcast=True).to(tl.uint64)
        w = (u | 0x4330000000000000).to(tl.float64, bitcast=True) - 4503601774854144.0
    return w


@triton.jit
def _fkey(xf):
    """float32 -> int32 whose signed order is the float order (NaN excluded), so that min and
    max become single-operation integer reductions (one redux.sync per warp on NVIDIA)."""
    b = xf.to(tl.int32, bitcast=True)
    return b ^ ((b >> 31) & 0x7FFFFFFF)


@triton.jit
def _fkey_word(k):
    """The float64 bits of the float32 an _fkey stands for (_fkey is its own inverse)."""
    b = k ^ ((k >> 31) & 0x7FFFFFFF)
    return b.to(tl.float32, bitcast=True).to(tl.float64).to(tl.int64, bitcast=True)


@triton.jit
def _emit(ctx, base, slots, n, w0, w1, w2, w3, w4, w5, w6, w7, FUSED: tl.constexpr = True):
    """Store one record in slot n or count an overflow; returns n + 1. On a GPU the record is
    one 8-lane vector store; the interpreter flavour stores the eight words one by one (cheaper
    there than assembling the vector)."""
    ok = n < slots
    if FUSED:
        k = tl.arange(0, 8)
        w = tl.where(
            k == 0,
            w0,
            tl.where(
                k == 1,
                w1,
                tl.where(
                    k == 2,
                    w2,
                    tl.where(
                        k == 3,
                        w3,
                        tl.where(k == 4, w4, tl.where(k == 5, w5, tl.where(k == 6, w6, w7))),
                    ),
                ),
            ),
        )
        # all lanes or none, as a comparison of the block (a boolean mask on every Triton)
        tl.store(base + n * 8 + k, w, mask=k < tl.where(ok, 8, 0))
    else:
        p = base + n * 8
        tl.store(p, w0, mask=ok)
        tl.store(p + 1, w1, mask=ok)
        tl.store(p + 2, w2, mask=ok)
        tl.store(p + 3, w3, mask=ok)
        tl.store(p + 4, w4, mask=ok)
        tl.store(p + 5, w5, mask=ok)
        tl.store(p + 6, w6, mask=ok)
        tl.store(p + 7, w7, mask=ok)
    tl.atomic_add(ctx + 4, 1, mask=n >= slots, sem="relaxed")
    return n + 1


@triton.jit
def _lin_index(x):
    """Row-major linear index of every lane of a 1-3 dimensional block (int32)."""
    ND: tl.constexpr = ndim(x)
    D0: tl.constexpr = dim(x, 0)
    if ND == 1:
        idx = tl.arange(0, D0)
    elif ND == 2:
        D1: tl.constexpr = dim(x, 1)
        idx = tl.arange(0, D0)[:, None] * D1 + tl.arange(0, D1)[None, :]
    else:
        D1: tl.constexpr = dim(x, 1)
        D2: tl.constexpr = dim(x, 2)
        idx = (
            tl.arange(0, D0)[:, None, None] * (D1 * D2)
            + tl.arange(0, D1)[None, :, None] * D2
            + tl.arange(0, D2)[None, None, :]
        )
    return idx


@triton.jit
def _flat(x):
    """x itself for 1-3 dimensions, else x reshaped to one dimension (row-major order)."""
    ND: tl.constexpr = ndim(x)
    if ND > 3:
        NUMEL: tl.constexpr = numel(x)
        x = tl.reshape(x, [NUMEL])
    return x


@triton.jit
def _any_order(x):
    """x as one dimension in any element order (what tl.reduce(axis=None) does itself; done here
    because the interpreter mishandles a tuple reduction with axis=None over 2+ dimensions)."""
    ND: tl.constexpr = ndim(x)
    if ND > 1:
        NUMEL: tl.constexpr = numel(x)
        if _REORDER:
            x = tl.reshape(x, [NUMEL], can_reorder=True)
        else:
            x = tl.reshape(x, [NUMEL])
    return x


@triton.jit
def _dump(ctx, slots, n, vals, COUNT: tl.constexpr):
    """Copy vals (int64 words, 1-3 dims) into the dump arena; returns the word offset or -1."""
    off = tl.full((), -1, tl.int64)
    if n < slots:
        got = tl.atomic_add(ctx + 5, COUNT, sem="relaxed")
        cap = tl.load(ctx + 6)
        programs = tl.load(ctx + 3)
        fits = got + COUNT <= cap
        # a twin that dumps has a check area: the extended header's word 11 is where the record
        # slots start (docs/formats/record-format.md)
        arena = ctx + tl.load(ctx + 11) + programs * slots * 8 + got
        idx = _lin_index(vals)
        tl.store(arena + idx, vals, mask=idx < tl.where(fits, COUNT, 0))  # every lane, or none
        off = tl.where(fits, got, -1)
    return off


@triton.jit
def _vcomb(s1, q1, lo1, hi1, c1, s2, q2, lo2, hi2, c2):
    return s1 + s2, q1 + q2, tl.minimum(lo1, lo2), tl.maximum(hi1, hi2), c1 + c2


@constexpr_function
def _small_counts(count):
    """Counts of a block of at most 1024 elements pack into one int32: zero (11 bits), NaN (11
    bits) and Inf (10 bits; all-Inf blocks are recognised from the absence of finite values)."""
    return count <= 1024


@triton.jit
def _float_masked(xf, FUSED: tl.constexpr):
    """Float block statistics with NaN and Inf masked out: (nan, inf, zero counts, sum, sumsq,
    min, max) as record words."""
    COUNT: tl.constexpr = numel(xf)
    fin = tl.abs(xf) < _INF
    isnan = xf != xf
    isinf = (~fin) & (~isnan)
    iszero = xf == 0
    v = tl.where(fin, xf, 0).to(tl.float64)
    lo = tl.where(fin, xf, _INF)
    hi = tl.where(fin, xf, -_INF)
    if FUSED:
        if _small_counts(COUNT):
            packed = iszero.to(tl.int32) + (isnan.to(tl.int32) << 11) + (isinf.to(tl.int32) << 22)
            s, q, mn, mx, c = tl.reduce(
                (
                    _any_order(v),
                    _any_order(v * v),
                    _any_order(lo),
                    _any_order(hi),
                    _any_order(packed),
                ),
                0,
                _vcomb,
            )
            cz = (c & 0x7FF).to(tl.int64)
            cn = ((c >> 11) & 0x7FF).to(tl.int64)
            ci = ((c >> 22) & 0x3FF).to(tl.int64)
            ci = tl.where(mn == _INF, COUNT - cn, ci)
        else:
            packed = (isnan.to(tl.int64) << 42) | (isinf.to(tl.int64) << 21) | iszero.to(tl.int64)
            s, q, mn, mx, c = tl.reduce(
                (
                    _any_order(v),
                    _any_order(v * v),
                    _any_order(lo),
                    _any_order(hi),
                    _any_order(packed),
                ),
                0,
                _vcomb,
            )
            cn = c >> 42
            ci = (c >> 21) & _M21
            cz = c & _M21
    else:
        s = _rsum(v)
        q = _rsum(v * v)
        mn = _rmin(lo)
        mx = _rmax(hi)
        cn = _rsum(isnan.to(tl.int32)).to(tl.int64)
        ci = _rsum(isinf.to(tl.int32)).to(tl.int64)
        cz = _rsum(iszero.to(tl.int32)).to(tl.int64)
    mnw = mn.to(tl.float64).to(tl.int64, bitcast=True)
    mxw = mx.to(tl.float64).to(tl.int64, bitcast=True)
    return cn, ci, cz, s.to(tl.int64, bitcast=True), q.to(tl.int64, bitcast=True), mnw, mxw


@triton.jit
def _float_slow(xf):
    """_float_masked for the GPU's rare case (some element is NaN or Inf): one single-operation
    reduction per statistic, integer keys for min/max (fewer live values than one tuple
    reduction, so the kernel keeps its register count)."""
    xa = _any_order(xf)
    fin = tl.abs(xa) < _INF
    isnan = xa != xa
    isinf = (~fin) & (~isnan)
    cz = _rsum((xa == 0).to(tl.int32)).to(tl.int64)
    cn = _rsum(isnan.to(tl.int32)).to(tl.int64)
    ci = _rsum(isinf.to(tl.int32)).to(tl.int64)
    key = _fkey(xa)
    kmn = _rmin(tl.where(fin, key, _I32_MAX))
    kmx = _rmax(tl.where(fin, key, _I32_MIN))
    none = kmn == _I32_MAX  # no finite element (finite keys are below INT32_MAX)
    mnw = tl.where(none, _INF, _fkey_word(kmn).to(tl.float64, bitcast=True)).to(
        tl.int64, bitcast=True
    )
    mxw = tl.where(none, -_INF, _fkey_word(kmx).to(tl.float64, bitcast=True)).to(
        tl.int64, bitcast=True
    )
    v = tl.where(fin, xa, 0).to(tl.float64)
    s = _rsum(v)
    q = _rsum(v * v)
    return cn, ci, cz, s.to(tl.int64, bitcast=True), q.to(tl.int64, bitcast=True), mnw, mxw


@triton.jit
def _vcomb_fast(s1, q1, lo1, hi1, c1, s2, q2, lo2, hi2, c2):
    # IEEE 754-2019 minimum/maximum (PropagateNan.ALL: one FMNMX.NAN on sm_80+): -0.0 orders below
    # +0.0, as in the masked path's keys; NaN never reaches here (the caller's fallback takes it).
    return (
        s1 + s2,
        q1 + q2,
        tl.minimum(lo1, lo2, propagate_nan=tl.PropagateNan.ALL),
        tl.maximum(hi1, hi2, propagate_nan=tl.PropagateNan.ALL),
        c1 + c2,
    )


@triton.jit
def _float_fast(xf):
    """float32 block statistics assuming every element is finite, in one tuple reduction: float64
    sum and sum of squares, float32 min/max (the float32 values themselves: converting them to
    order-preserving integer keys cost two ALU operations per element, 16 instructions per record
    at 8 elements per thread, for nothing once they share the tuple's shuffles) and the zero
    count; ok is false when some element is NaN or Inf (their float64 sum is not finite, and it
    cannot overflow for finite float32 elements), and the caller then recomputes with masking.
    With _ONE_TUPLE off, min/max are integer-key reductions instead (bench variant new-split)."""
    xa = _any_order(xf)
    xd = xa.to(tl.float64)
    if _ONE_TUPLE:
        s, q, fmn, fmx, cz = tl.reduce(
            (xd, xd * xd, xa, xa, (xa == 0).to(tl.int32)), 0, _vcomb_fast
        )
        mnw = fmn.to(tl.float64).to(tl.int64, bitcast=True)
        mxw = fmx.to(tl.float64).to(tl.int64, bitcast=True)
    else:
        key = _fkey(xa)
        s, q, cz = tl.reduce((xd, xd * xd, (xa == 0).to(tl.int32)), 0, _add3)
        mnw = _fkey_word(_rmin(key))
        mxw = _fkey_word(_rmax(key))
    ok = tl.abs(s) < _INF
    return ok, cz.to(tl.int64), s.to(tl.int64, bitcast=True), q.to(tl.int64, bitcast=True), mnw, mxw


#: Below this largest magnitude a block's float32 sum of squares is recomputed in float64: a
#: square under float32's smallest normal (2**-126) keeps only part of its bits, at most 2**-150
#: off, so n of them are off by n * 2**-150, which against a sum of squares of at least
#: amax**2 = 2**-100 stays under 2**-26 for blocks of up to 2**24 elements (docs/guide/debugger.md,
#: "Accuracy").
_TINY32 = tl.constexpr(2.0**-50)


@triton.jit
def _sums32_ok(s, q, amax):
    """The float32 sum s and sum of squares q of a block whose finite elements reach amax in
    magnitude are trustworthy: both finite (no NaN or Inf, no overflow: a square overflows for
    |x| > 1.8e19) and no square lost to underflow (amax 0: every element is zero, exactly summed)."""
    return (tl.abs(s) < _INF) & (q < _INF) & ((amax >= _TINY32) | (amax == 0))


@triton.jit
def _float_fast32(xf):
    """_float_fast with float32 sums: one tuple reduction of 32-bit values (the sum and sum of
    squares as Triton's tl.sum makes them: each thread's elements in turn, then a tree across
    threads), each converted to float64 once. ok is false when some element is NaN or Inf, or
    when a sum overflowed or a square underflowed (_sums32_ok); the caller then recomputes the
    record in float64 (_float_slow), as for NaN and Inf."""
    xa = _any_order(xf)
    s, q, fmn, fmx, cz = tl.reduce((xa, xa * xa, xa, xa, (xa == 0).to(tl.int32)), 0, _vcomb_fast)
    ok = _sums32_ok(s, q, tl.maximum(-fmn, fmx))
    mnw = fmn.to(tl.float64).to(tl.int64, bitcast=True)
    mxw = fmx.to(tl.float64).to(tl.int64, bitcast=True)
    sd = s.to(tl.float64).to(tl.int64, bitcast=True)
    qd = q.to(tl.float64).to(tl.int64, bitcast=True)
    return ok, cz.to(tl.int64), sd, qd, mnw, mxw


@triton.jit
def _float_masked32(xf):
    """_float_masked (interpreter flavour) with float32 sums of the finite elements, converted to
    float64 once; recomputed in float64 when _sums32_ok says the float32 ones cannot be trusted."""
    fin = tl.abs(xf) < _INF
    isnan = xf != xf
    isinf = (~fin) & (~isnan)
    v = tl.where(fin, xf, 0)
    mn = _rmin(tl.where(fin, xf, _INF))
    mx = _rmax(tl.where(fin, xf, -_INF))
    cn = _rsum(isnan.to(tl.int32)).to(tl.int64)
    ci = _rsum(isinf.to(tl.int32)).to(tl.int64)
    cz = _rsum((xf == 0).to(tl.int32)).to(tl.int64)
    s32 = _rsum(v)
    q32 = _rsum(v * v)
    s = s32.to(tl.float64)
    q = q32.to(tl.float64)
    # no finite element: mn is +Inf and both sums are 0 (exact)
    if not _sums32_ok(s32, q32, tl.where(mn == _INF, 0.0, tl.maximum(-mn, mx))):
        vd = v.to(tl.float64)
        s = _rsum(vd)
        q = _rsum(vd * vd)
    mnw = mn.to(tl.float64).to(tl.int64, bitcast=True)
    mxw = mx.to(tl.float64).to(tl.int64, bitcast=True)
    return cn, ci, cz, s.to(tl.int64, bitcast=True), q.to(tl.int64, bitcast=True), mnw, mxw


@triton.jit
def _float_stats(
    x, FL: tl.constexpr, BLOCK: tl.constexpr, FUSED: tl.constexpr, EXACT: tl.constexpr = False
):
    """Words of a float block's or scalar's statistics. The sums of a block of float32 or narrower
    are float32 reductions converted to float64 once (docs/guide/debugger.md, "Accuracy"), unless
    EXACT (exact_sums: every element converted to float64 and summed in float64, as before);
    float64 blocks are always summed in float64. Counts, min and max are exact either way."""
    if FL == 1:
        xf = x.to(tl.float32)
    else:
        xf = x
    if BLOCK:
        if FUSED and not _is_fp64(xf):
            if EXACT:
                ok, cz, s, q, mnw, mxw = _float_fast(xf)
            else:
                ok, cz, s, q, mnw, mxw = _float_fast32(xf)
            zero = tl.full((), 0, tl.int64)
            cn = zero
            ci = zero
            if not ok:
                # Rare (NaN or Inf present; without EXACT also a float32 sum out of range).
                cn, ci, cz, s, q, mnw, mxw = _float_slow(xf)
        elif EXACT or _is_fp64(xf):
            cn, ci, cz, s, q, mnw, mxw = _float_masked(xf, FUSED)
        else:
            cn, ci, cz, s, q, mnw, mxw = _float_masked32(xf)
    else:
        fin = tl.abs(xf) < _INF
        isnan = xf != xf
        v = tl.where(fin, xf, 0).to(tl.float64)
        cn = isnan.to(tl.int64)
        ci = ((~fin) & (~isnan)).to(tl.int64)
        cz = (xf == 0).to(tl.int64)
        s = v.to(tl.int64, bitcast=True)
        q = (v * v).to(tl.int64, bitcast=True)
        mnw = tl.where(fin, xf, _INF).to(tl.float64).to(tl.int64, bitcast=True)
        mxw = tl.where(fin, xf, -_INF).to(tl.float64).to(tl.int64, bitcast=True)
    return cn, ci, cz, s, q, mnw, mxw


@constexpr_function
def _int32_sums_exact(count):
    """8- and 16-bit values: |x| < 2**16, so int32 sums of up to 2**15 of them are exact."""
    return count <= 32768


@triton.jit
def _int_stats(x, FL: tl.constexpr, BLOCK: tl.constexpr, FUSED: tl.constexpr):
    # FL 3: int32/uint32; 4: int64; 5: uint64; 6: pointers; 7: bool; 8: 8/16-bit ints.
    zero = tl.full((), 0, tl.int64)
    if FL == 7:
        # A bool block is summarised by its number of true elements.
        if BLOCK:
            COUNT: tl.constexpr = numel(x)
            t = _rsum(x.to(tl.int32)).to(tl.int64)
        else:
            COUNT: tl.constexpr = 1
            t = x.to(tl.int64)
        td = t.to(tl.float64).to(tl.int64, bitcast=True)
        return zero, zero, COUNT - t, td, td, (t == COUNT).to(tl.int64), (t > 0).to(tl.int64)
    else:
        if FL == 6:
            xi = x.to(tl.int64)
        elif FL == 5:
            xi = x.to(tl.int64, bitcast=True)
        else:
            xi = x.to(tl.int64)
        if FL == 5:
            xd = x.to(tl.float64)
        else:
            xd = xi.to(tl.float64)
        if FL == 6:
            iszero = xi == 0
        else:
            iszero = x == 0
        if BLOCK:
            if FL == 8:
                # 8/16-bit values: min, max and zero count in int32 (redux-friendly), exact sums.
                COUNT: tl.constexpr = numel(x)
                x32 = x.to(tl.int32)
                if FUSED:
                    # One single-operation reduction per statistic: integer ones are one
                    # redux.sync per warp; the sum of squares is exact in float64.
                    xa = _any_order(x32)
                    xe = _exact_f64(xa)
                    if _int32_sums_exact(COUNT):
                        s = _rsum(xa)
                    else:
                        s = _rsum(xe)
                    q = _rsum(xe * xe)
                    mn = _rmin(xa)
                    mx = _rmax(xa)
                    c = _rsum((xa == 0).to(tl.int32))
                else:
                    s = _rsum(xi)
                    q = _rsum(xd * xd)
                    mn = _rmin(x32)
                    mx = _rmax(x32)
                    c = _rsum(iszero.to(tl.int32))
                sd = s.to(tl.float64)
            elif FL == 3:
                if FUSED:
                    # Sums in float64 are exact for 32-bit values (|sum| < 2**53 for blocks of up to
                    # 2**21 elements); min, max and the zero count are redux-friendly.
                    xa = _any_order(x)
                    xe = _exact_f64(xa)
                    s, q, c = tl.reduce((xe, xe * xe, (xa == 0).to(tl.int32)), 0, _add3)
                    mn = _rmin(xa)
                    mx = _rmax(xa)
                else:
                    s = _rsum(xi)
                    q = _rsum(xd * xd)
                    mn = _rmin(x)
                    mx = _rmax(x)
                    c = _rsum(iszero.to(tl.int32))
                sd = s.to(tl.float64)
            else:
                if FUSED:
                    sd, q, mn, mx, c = tl.reduce(
                        (
                            _any_order(xd),
                            _any_order(xd * xd),
                            _any_order(xi),
                            _any_order(xi),
                            _any_order(iszero.to(tl.int32)),
                        ),
                        0,
                        _vcomb,
                    )
                else:
                    sd = _rsum(xd)
                    q = _rsum(xd * xd)
                    mn = _rmin(xi)
                    mx = _rmax(xi)
                    c = _rsum(iszero.to(tl.int32))
        else:
            sd = xd
            q = xd * xd
            mn = xi
            mx = xi
            c = iszero.to(tl.int64)
        return (
            zero,
            zero,
            c.to(tl.int64),
            sd.to(tl.int64, bitcast=True),
            q.to(tl.int64, bitcast=True),
            mn.to(tl.int64),
            mx.to(tl.int64),
        )


@triton.jit
def _dump_words(x, FL: tl.constexpr):
    """Each element as one int64 word: floats as float64 bits, the rest as int64."""
    if FL <= 2:
        w = x.to(tl.float64).to(tl.int64, bitcast=True)
    elif FL == 7:
        w = x.to(tl.int64)
    elif FL == 5:
        w = x.to(tl.int64, bitcast=True)
    else:
        w = x.to(tl.int64)
    return w


@triton.jit
def _float_counts(x, FL: tl.constexpr, BLOCK: tl.constexpr):
    """NaN and Inf counts of a float block or scalar, and nothing else (counts-only records): one
    sum, which is finite exactly when no element is NaN or Inf (or the sum overflowed); only then
    are the elements counted."""
    if FL == 1:
        xf = x.to(tl.float32)
    else:
        xf = x
    if BLOCK:
        zero = tl.full((), 0, tl.int64)
        cn = zero
        ci = zero
        xa = _any_order(xf)  # blocks of 2 and 3 dimensions too: one scalar sum
        s = tl.sum(xa, axis=0)
        if not (tl.abs(s) < _INF):
            cn = tl.sum((xa != xa).to(tl.int32), axis=0).to(tl.int64)
            ci = tl.sum((tl.abs(xa) == _INF).to(tl.int32), axis=0).to(tl.int64)
    else:
        cn = (xf != xf).to(tl.int64)
        ci = (tl.abs(xf) == _INF).to(tl.int64)
    return cn, ci


@triton.jit
def _value_words(
    ctx,
    slots,
    n,
    x,
    DUMP: tl.constexpr,
    FUSED: tl.constexpr,
    COUNTS: tl.constexpr = False,
    EXACT: tl.constexpr = False,
):
    """Words 2-7 of the value record of block or scalar x (record-format.md). COUNTS: a
    counts-only record (NaN and Inf counts; words 3-7 zero but for "no dump"). EXACT: float sums
    in float64 per element (exact_sums) rather than float32 per block (_float_stats)."""
    C: tl.constexpr = vclass(x)
    FL: tl.constexpr = vflavor(x)
    tl.static_assert(FL != 0, "flagprism: dtype not supported by the debugger")
    xs = _flat(x)
    if COUNTS:
        zero = tl.full((), 0, tl.int64)
        if FL <= 2:
            cn, ci = _float_counts(xs, FL, C == 2)
        else:
            cn = zero
            ci = zero
        # word 3: zero count 0, dump offset 0xffffffff (none): 0xffffffff00000000 as int64
        return cn | (ci << 32), tl.full((), -4294967296, tl.int64), zero, zero, zero, zero
    if FL <= 2:
        cn, ci, cz, s, q, mn, mx = _float_stats(xs, FL, C == 2, FUSED, EXACT)
    else:
        cn, ci, cz, s, q, mn, mx = _int_stats(xs, FL, C == 2, FUSED)
    doff = tl.full((), -1, tl.int64)
    if DUMP:
        if C == 2:
            COUNT: tl.constexpr = numel(x)
            doff = _dump(ctx, slots, n, _dump_words(xs, FL), COUNT)
    return cn | (ci << 32), cz | ((doff & _M32) << 32), s, q, mn, mx


@triton.jit
def _emit_value(
    ctx, base, slots, n, SITE: tl.constexpr, x, w, FUSED: tl.constexpr, COUNTS: tl.constexpr = False
):
    CODE: tl.constexpr = dtype_code(x)
    W0: tl.constexpr = word0(SITE, 1, x, CODE, COUNTS)
    W1: tl.constexpr = shape_word(x)
    w0 = W0 | ((n.to(tl.int64) & 0xFFFFFF) << 40)
    return _emit(
        ctx,
        base,
        slots,
        n,
        w0,
        tl.full((), W1, tl.int64),
        w[0],
        w[1],
        w[2],
        w[3],
        w[4],
        w[5],
        FUSED,
    )


@triton.jit
def _value(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    x,
    DUMP: tl.constexpr,
    FUSED: tl.constexpr,
    COUNTS: tl.constexpr = False,
    EXACT: tl.constexpr = False,
):
    C: tl.constexpr = vclass(x)
    if C == 0:
        return n
    else:
        w = _value_words(ctx, slots, n, x, DUMP, FUSED, COUNTS, EXACT)
        return _emit_value(ctx, base, slots, n, SITE, x, w, FUSED, COUNTS)


@triton.jit
def _value_entry(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    x,
    DUMP: tl.constexpr,
    KEEP: tl.constexpr,
    W,
    FUSED: tl.constexpr,
    COUNTS: tl.constexpr = False,
    EXACT: tl.constexpr = False,
):
    C: tl.constexpr = vclass(x)
    if W is not None:
        # Replay: x is a name the region recorded earlier and has not reassigned since (the
        # rewriter guarantees it), so its summary is W, the words of that record: one record
        # store, no reduction. A level-2 dump is shared with that record (same offset).
        if C == 0:
            return n
        else:
            return _emit_value(ctx, base, slots, n, SITE, x, W, FUSED, COUNTS)
    elif KEEP:
        # Also return the words, for later replays.
        if C == 0:
            z = tl.full((), 0, tl.int64)
            return n, (z, z, z, z, z, z)
        else:
            w = _value_words(ctx, slots, n, x, DUMP, FUSED, COUNTS, EXACT)
            return _emit_value(ctx, base, slots, n, SITE, x, w, FUSED, COUNTS), w
    else:
        return _value(ctx, base, slots, n, SITE, x, DUMP, FUSED, COUNTS, EXACT)


@triton.jit
def value_fused(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    x,
    DUMP: tl.constexpr,
    KEEP: tl.constexpr = False,
    W=None,
):
    """Record a value summary (GPU flavour: the cheapest reductions the compiler has). KEEP:
    return (n, words) instead of n; W: words of an earlier record of the same value to replay."""
    return _value_entry(ctx, base, slots, n, SITE, x, DUMP, KEEP, W, True)


@triton.jit
def value_np(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    x,
    DUMP: tl.constexpr,
    KEEP: tl.constexpr = False,
    W=None,
):
    """Record a value summary (interpreter flavour: NumPy-backed reductions)."""
    return _value_entry(ctx, base, slots, n, SITE, x, DUMP, KEEP, W, False)


@triton.jit
def value_fused_exact(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    x,
    DUMP: tl.constexpr,
    KEEP: tl.constexpr = False,
    W=None,
):
    """value_fused with float sums in float64 per element (exact_sums: debugger.activate)."""
    return _value_entry(ctx, base, slots, n, SITE, x, DUMP, KEEP, W, True, False, True)


@triton.jit
def value_np_exact(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    x,
    DUMP: tl.constexpr,
    KEEP: tl.constexpr = False,
    W=None,
):
    """value_np with float sums in float64 per element (exact_sums)."""
    return _value_entry(ctx, base, slots, n, SITE, x, DUMP, KEEP, W, False, False, True)


@triton.jit
def value_counts_fused(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    x,
    DUMP: tl.constexpr,
    KEEP: tl.constexpr = False,
    W=None,
):
    """Record a value's NaN and Inf counts only (check mode's nan/inf checks), GPU flavour."""
    return _value_entry(ctx, base, slots, n, SITE, x, DUMP, KEEP, W, True, True)


@triton.jit
def value_counts_np(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    x,
    DUMP: tl.constexpr,
    KEEP: tl.constexpr = False,
    W=None,
):
    """Record a value's NaN and Inf counts only, interpreter flavour."""
    return _value_entry(ctx, base, slots, n, SITE, x, DUMP, KEEP, W, False, True)


@triton.jit
def _acomb(c1, f1, fa1, l1, la1, lo1, hi1, c2, f2, fa2, l2, la2, lo2, hi2):
    tf = f2 < f1
    tlast = l2 > l1
    return (
        c1 + c2,
        tl.where(tf, f2, f1),
        tl.where(tf, fa2, fa1),
        tl.where(tlast, l2, l1),
        tl.where(tlast, la2, la1),
        tl.minimum(lo1, lo2),
        tl.maximum(hi1, hi2),
    )


@triton.jit
def _acomb32(c1, f1, fl1, l1, ll1, lo1, hi1, hn1, hx1, c2, f2, fl2, l2, ll2, lo2, hi2, hn2, hx2):
    tf = f2 < f1
    tlast = l2 > l1
    return (
        c1 + c2,
        tl.where(tf, f2, f1),
        tl.where(tf, fl2, fl1),
        tl.where(tlast, l2, l1),
        tl.where(tlast, ll2, ll1),
        tl.minimum(lo1, lo2),
        tl.maximum(hi1, hi2),
        tl.minimum(hn1, hn2),
        tl.maximum(hx1, hx2),
    )


@triton.jit
def _addr_sep(a, act):
    """(active count, first, last, min, max address) from 32-bit single-operation reductions:
    the high address halves first, then the low halves of the lanes that reach them."""
    idx = _lin_index(a)
    lo = a.to(tl.int32).to(tl.uint32, bitcast=True)
    hi = (a >> 32).to(tl.int32).to(tl.uint32, bitcast=True)
    umax = tl.full((), 0xFFFFFFFF, tl.uint32)
    uzero = tl.full((), 0, tl.uint32)
    cnt = _rsum(act.to(tl.int32)).to(tl.int64)
    hmn = _rmin(tl.where(act, hi, umax))
    hmx = _rmax(tl.where(act, hi, uzero))
    mnl = _rmin(tl.where(act & (hi == hmn), lo, umax))
    mxl = _rmax(tl.where(act & (hi == hmx), lo, uzero))
    f = _rmin(tl.where(act, idx, _LANE_BIG))
    l = _rmax(tl.where(act, idx, -1))
    fh = _rmax(tl.where(idx == f, hi, uzero))
    fl = _rmax(tl.where(idx == f, lo, uzero))
    lh = _rmax(tl.where(idx == l, hi, uzero))
    ll = _rmax(tl.where(idx == l, lo, uzero))
    return (
        cnt,
        (fh.to(tl.int64) << 32) | fl.to(tl.int64),
        (lh.to(tl.int64) << 32) | ll.to(tl.int64),
        (hmn.to(tl.int64) << 32) | mnl.to(tl.int64),
        (hmx.to(tl.int64) << 32) | mxl.to(tl.int64),
    )


@triton.jit
def _addr_stats(a, act, BLOCK: tl.constexpr, FUSED: tl.constexpr):
    """(active count, first, last, min, max address) over the active lanes of a."""
    if BLOCK:
        if FUSED:
            # One tuple reduction in 32-bit words: low address halves (compared unsigned) plus a
            # check that every active lane has the same high half; otherwise redo it in 64 bits
            # (rare: an access that straddles a 4 GiB boundary). Measured faster on an H200 than
            # one single-operation reduction per statistic (fewer barriers; docs/benchmarks.md).
            idx = _lin_index(a)
            fi = tl.where(act, idx, _LANE_BIG)
            li = tl.where(act, idx, -1)
            hi32 = (a >> 32).to(tl.int32)
            lo32 = a.to(tl.int32) ^ _I32_MIN
            cnt, f, flo, l, llo, mnl, mxl, hmn, hmx = tl.reduce(
                (
                    _any_order(act.to(tl.int32)),
                    _any_order(fi),
                    _any_order(lo32),
                    _any_order(li),
                    _any_order(lo32),
                    _any_order(tl.where(act, lo32, _I32_MAX)),
                    _any_order(tl.where(act, lo32, _I32_MIN)),
                    _any_order(tl.where(act, hi32, _I32_MAX)),
                    _any_order(tl.where(act, hi32, _I32_MIN)),
                ),
                0,
                _acomb32,
            )
            if (hmn == hmx) | (cnt == 0):
                top = hmn.to(tl.int64) << 32
                fa = top | ((flo ^ _I32_MIN).to(tl.int64) & _M32)
                la = top | ((llo ^ _I32_MIN).to(tl.int64) & _M32)
                mn = top | ((mnl ^ _I32_MIN).to(tl.int64) & _M32)
                mx = top | ((mxl ^ _I32_MIN).to(tl.int64) & _M32)
            else:
                lo = tl.where(act, a, _I64_MAX)
                hi = tl.where(act, a, _I64_MIN)
                cnt, f, fa, l, la, mn, mx = tl.reduce(
                    (
                        _any_order(act.to(tl.int32)),
                        _any_order(fi),
                        _any_order(a),
                        _any_order(li),
                        _any_order(a),
                        _any_order(lo),
                        _any_order(hi),
                    ),
                    0,
                    _acomb,
                )
            cnt = cnt.to(tl.int64)
        else:
            cnt, fa, la, mn, mx = _addr_sep(a, act)
    else:
        cnt = act.to(tl.int64)
        fa = a
        la = a
        mn = a
        mx = a
    some = cnt > 0
    zero = tl.full((), 0, tl.int64)
    return (
        cnt,
        tl.where(some, fa, zero),
        tl.where(some, la, zero),
        tl.where(some, mn, zero),
        tl.where(some, mx, zero),
    )


@triton.jit
def _addr(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    KIND: tl.constexpr,
    ptr,
    mask,
    DUMP: tl.constexpr,
    FUSED: tl.constexpr,
):
    PC: tl.constexpr = ptr_class(ptr)
    tl.static_assert(PC != 0, "flagprism: the pointer of a load/store is not a pointer tensor")
    CODE: tl.constexpr = pointee_code(ptr)
    if PC == 3:
        # Block pointer: the lanes are not visible as addresses; record shape and status only.
        BS: tl.constexpr = _block_shape_of(ptr)
        W0: tl.constexpr = _shape_word0(SITE, KIND, BS, CODE)
        W1: tl.constexpr = _shape_word1(BS)
        w0 = W0 | ((n.to(tl.int64) & 0xFFFFFF) << 40)
        zero = tl.full((), 0, tl.int64)
        return _emit(
            ctx,
            base,
            slots,
            n,
            w0,
            tl.full((), W1, tl.int64),
            tl.full((), 1 << 32, tl.int64),
            zero,
            zero,
            zero,
            zero,
            tl.full((), -1, tl.int64),
            FUSED,
        )
    else:
        MK: tl.constexpr = mask_class(mask)
        if MK == 2:
            pb, act = tl.broadcast(ptr, mask)
        else:
            pb = ptr
            act = tl.full((), MK == 0, tl.int1)
        C: tl.constexpr = vclass(pb)
        if C == 2:
            if MK != 2:
                act = tl.broadcast_to(act, pb.shape)
        W0: tl.constexpr = word0(SITE, KIND, pb, CODE)
        W1: tl.constexpr = shape_word(pb)
        a = _flat(pb).to(tl.int64)
        fact = _flat(act)
        cnt, fa, la, mn, mx = _addr_stats(a, fact, C == 2, FUSED)
        doff = tl.full((), -1, tl.int64)
        if DUMP:
            if C == 2:
                COUNT: tl.constexpr = numel(pb)
                doff = _dump(ctx, slots, n, tl.where(fact, a, a | _I64_MIN), COUNT)
        w0 = W0 | ((n.to(tl.int64) & 0xFFFFFF) << 40)
        return _emit(
            ctx, base, slots, n, w0, tl.full((), W1, tl.int64), cnt, fa, la, mn, mx, doff, FUSED
        )


@constexpr_function
def _affine_ok(pbase, off, mask):
    """True for `pbase + off` with pbase a scalar pointer and off a block of int32 offsets of
    at most 2**16 lanes, under a mask that broadcasts to off's shape: then every lane's address is
    pbase + off * element size, so a summary of the offsets over the active lanes is the address
    summary, and accesses with the same offsets and mask can share it."""
    if not isinstance(pbase, tl.tensor) or not isinstance(off, tl.tensor):
        return False
    bt = pbase.type
    if bt.is_block() or not bt.is_ptr() or bt.element_ty.is_block():
        return False
    ot = off.type
    if not ot.is_block() or ot.element_ty.name != "int32":
        return False
    shape = [int(d) for d in ot.shape]
    count = 1
    for d in shape:
        count *= d
    if count > 65536 or len(shape) > 3:
        return False
    if isinstance(mask, tl.tensor) and mask.type.is_block():
        ms = [int(d) for d in mask.type.shape]
        if len(ms) > len(shape):
            return False
        for a, b in zip(reversed(ms), reversed(shape)):
            if a != b and a != 1:
                return False
    return True


@constexpr_function
def _is_i64(x):
    return isinstance(x, tl.tensor) and x.dtype == tl.int64


@constexpr_function
def _pointee_bytes(p):
    bits = p.type.element_ty.primitive_bitwidth
    return max(1, bits // 8)


@triton.jit
def _osum(off, mask):
    """(active count, offset of the first and of the last active lane, min and max offset over
    the active lanes) of an int32 offset block, as int64; 32-bit integer reductions only, the
    first/last lanes' offsets from two (lane << 16 | 16-bit half) keys each."""
    MK: tl.constexpr = mask_class(mask)
    if MK == 2:
        ob, act = tl.broadcast(off, mask)
    else:
        ob = off
        act = tl.broadcast_to(tl.full((), MK == 0, tl.int1), off.shape)
    idx = _lin_index(ob)
    u = ob.to(tl.uint32, bitcast=True)
    umax = tl.full((), 0xFFFFFFFF, tl.uint32)
    uzero = tl.full((), 0, tl.uint32)
    cnt = _rsum(_any_order(act.to(tl.int32)))
    mn = _rmin(_any_order(tl.where(act, ob, _I32_MAX)))
    mx = _rmax(_any_order(tl.where(act, ob, _I32_MIN)))
    top = idx.to(tl.uint32, bitcast=True) << 16
    ka = top | (u >> 16)
    kb = top | (u & 0xFFFF)
    fa_ = _rmin(_any_order(tl.where(act, ka, umax)))
    fb_ = _rmin(_any_order(tl.where(act, kb, umax)))
    la_ = _rmax(_any_order(tl.where(act, ka, uzero)))
    lb_ = _rmax(_any_order(tl.where(act, kb, uzero)))
    first = (((fa_ & 0xFFFF) << 16) | (fb_ & 0xFFFF)).to(tl.int32, bitcast=True)
    last = (((la_ & 0xFFFF) << 16) | (lb_ & 0xFFFF)).to(tl.int32, bitcast=True)
    return cnt.to(tl.int64), first.to(tl.int64), last.to(tl.int64), mn.to(tl.int64), mx.to(tl.int64)


@triton.jit
def _addr_affine(
    ctx, base, slots, n, SITE: tl.constexpr, KIND: tl.constexpr, ptr, pbase, o, FUSED: tl.constexpr
):
    """The address record of ptr = pbase + off from the offsets summary o (_osum)."""
    CODE: tl.constexpr = pointee_code(ptr)
    ES: tl.constexpr = _pointee_bytes(pbase)
    W0: tl.constexpr = word0(SITE, KIND, ptr, CODE)
    W1: tl.constexpr = shape_word(ptr)
    b = pbase.to(tl.int64)
    cnt = o[0]
    some = cnt > 0
    zero = tl.full((), 0, tl.int64)
    fa = tl.where(some, b + o[1] * ES, zero)
    la = tl.where(some, b + o[2] * ES, zero)
    mn = tl.where(some, b + o[3] * ES, zero)
    mx = tl.where(some, b + o[4] * ES, zero)
    w0 = W0 | ((n.to(tl.int64) & 0xFFFFFF) << 40)
    return _emit(
        ctx,
        base,
        slots,
        n,
        w0,
        tl.full((), W1, tl.int64),
        cnt,
        fa,
        la,
        mn,
        mx,
        tl.full((), -1, tl.int64),
        FUSED,
    )


@triton.jit
def _addr_entry(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    KIND: tl.constexpr,
    ptr,
    mask,
    DUMP: tl.constexpr,
    PBASE,
    OFF,
    OSUM,
    KEEP: tl.constexpr,
    FUSED: tl.constexpr,
):
    if PBASE is None:
        return _addr(ctx, base, slots, n, SITE, KIND, ptr, mask, DUMP, FUSED)
    else:
        USE: tl.constexpr = (not DUMP) and _affine_ok(PBASE, OFF, mask)
        if USE:
            if OSUM is not None and _is_i64(OSUM[0]):
                o = OSUM
            else:
                o = _osum(OFF, mask)
            n2 = _addr_affine(ctx, base, slots, n, SITE, KIND, ptr, PBASE, o, FUSED)
            if KEEP:
                return n2, o
            else:
                return n2
        else:
            n2 = _addr(ctx, base, slots, n, SITE, KIND, ptr, mask, DUMP, FUSED)
            if KEEP:
                f = tl.full((), 0, tl.int1)
                return n2, (f, f, f, f, f)
            else:
                return n2


@triton.jit
def addr_fused(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    KIND: tl.constexpr,
    ptr,
    mask,
    DUMP: tl.constexpr,
    PBASE=None,
    OFF=None,
    OSUM=None,
    KEEP: tl.constexpr = False,
):
    """Record an address summary of a tl.load/tl.store (GPU flavour). With PBASE and OFF (the
    pointer is PBASE + OFF) the summary may come from the offsets (_affine_ok); OSUM is the
    offsets summary of an earlier access with the same, unchanged offsets and mask, and KEEP
    returns (n, offsets summary) for later accesses."""
    return _addr_entry(
        ctx, base, slots, n, SITE, KIND, ptr, mask, DUMP, PBASE, OFF, OSUM, KEEP, True
    )


@triton.jit
def addr_np(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    KIND: tl.constexpr,
    ptr,
    mask,
    DUMP: tl.constexpr,
    PBASE=None,
    OFF=None,
    OSUM=None,
    KEEP: tl.constexpr = False,
):
    """Record an address summary of a tl.load/tl.store (interpreter flavour)."""
    return _addr_entry(
        ctx, base, slots, n, SITE, KIND, ptr, mask, DUMP, PBASE, OFF, OSUM, KEEP, False
    )


# --------------------------------------------------------------------------------------------
# Block pointers and tensor descriptors (docs/guide/debugger.md, "Block pointers and tensor
# descriptors")
#
# A block pointer's lanes are not visible as addresses in Triton's language, and neither are a
# descriptor's. The rewriter keeps a *shadow* of each one it can follow (_memforms.py): for a
# block pointer (base pointer, shape, strides, offsets) as given to tl.make_block_ptr and moved
# by tl.advance, for a descriptor its base pointer (its shape and strides are the descriptor's
# own). The address summary of an access is then computed in closed form from those scalars:
# lane i of dimension d sits at offsets[d] + i for i in [0, block_shape[d]); lanes outside
# [0, shape[d]) on a checked dimension (boundary_check; every dimension of a descriptor, whose
# TMA accesses zero-fill or drop them) are inactive, so the active lanes form a box and its
# first, last, lowest and highest addresses follow per dimension.
# --------------------------------------------------------------------------------------------


@constexpr_function
def _ntuple(t):
    return len(t)


@constexpr_function
def _in_dims(check, d):
    """Is dimension d in the constexpr tuple `check` (boundary_check), or is check True (all)?"""
    if check is True:
        return True
    if check is None or check is False:
        return False
    if isinstance(check, int):
        return check == d
    return d in [int(c) for c in check]


@constexpr_function
def _desc_block_shape(desc):
    return [int(d) for d in desc.block_shape]


@constexpr_function
def _desc_code(desc):
    return _code_of(desc.type.block_type.element_ty)


@constexpr_function
def _desc_es(desc):
    return max(1, desc.type.block_type.element_ty.primitive_bitwidth // 8)


@constexpr_function
def _bp_code(ptr):
    return _code_of(_bp_elem(ptr))


@constexpr_function
def _bp_es(ptr):
    return max(1, _bp_elem(ptr).primitive_bitwidth // 8)


@constexpr_function
def _shape_word0(site, kind, shape, code):
    flags = _pack_shape(shape)[1]
    return site | (kind << 16) | (code << 24) | (len(shape) << 32) | (flags << 36)


@constexpr_function
def _shape_word1(shape):
    return _pack_shape(shape)[0]


@constexpr_function
def _is_none(x):
    return x is None


@triton.jit
def _as_i64(x):
    if _is_tensor(x):
        return x.to(tl.int64)
    else:
        return tl.full((), x, tl.int64)


@triton.jit
def _box_summary(
    base, shape, strides, offs, BS: tl.constexpr, CHECK: tl.constexpr, ES: tl.constexpr
):
    """(active lanes, first, last, min, max address) of the box of lanes offs[d] + [0, BS[d]) with
    strides (elements) from the int64 address base; checked dimensions keep [0, shape[d])."""
    ND: tl.constexpr = _ntuple(BS)
    cnt = tl.full((), 1, tl.int64)
    first = base
    last = base
    mn = base
    mx = base
    for d in tl.static_range(ND):
        o = _as_i64(offs[d])
        st = _as_i64(strides[d]) * ES
        lo = tl.full((), 0, tl.int64)
        hi = tl.full((), BS[d], tl.int64)
        if _in_dims(CHECK, d):
            n = _as_i64(shape[d])
            lo = tl.maximum(lo, -o)
            hi = tl.minimum(hi, n - o)
            hi = tl.maximum(hi, lo)
        cnt = cnt * (hi - lo)
        a = (o + lo) * st
        b = (o + hi - 1) * st
        first = first + a
        last = last + b
        mn = mn + tl.minimum(a, b)
        mx = mx + tl.maximum(a, b)
    some = cnt > 0
    zero = tl.full((), 0, tl.int64)
    return (
        tl.where(some, cnt, zero),
        tl.where(some, first, zero),
        tl.where(some, last, zero),
        tl.where(some, mn, zero),
        tl.where(some, mx, zero),
    )


@triton.jit
def _box_lanes(bptr, shape, strides, offs, BS: tl.constexpr, CHECK: tl.constexpr):
    """Every lane's pointer and activity of the box (1 to 3 dimensions), for level-2 dumps."""
    ND: tl.constexpr = _ntuple(BS)
    i0 = _as_i64(offs[0]) + tl.arange(0, BS[0]).to(tl.int64)
    if ND == 1:
        p = bptr + i0 * _as_i64(strides[0])
        act = tl.full((BS[0],), 1, tl.int1)
        if _in_dims(CHECK, 0):
            act = act & (i0 >= 0) & (i0 < _as_i64(shape[0]))
    elif ND == 2:
        i1 = _as_i64(offs[1]) + tl.arange(0, BS[1]).to(tl.int64)
        p = bptr + i0[:, None] * _as_i64(strides[0]) + i1[None, :] * _as_i64(strides[1])
        act = tl.full((BS[0], BS[1]), 1, tl.int1)
        if _in_dims(CHECK, 0):
            act = act & ((i0 >= 0) & (i0 < _as_i64(shape[0])))[:, None]
        if _in_dims(CHECK, 1):
            act = act & ((i1 >= 0) & (i1 < _as_i64(shape[1])))[None, :]
    else:
        i1 = _as_i64(offs[1]) + tl.arange(0, BS[1]).to(tl.int64)
        i2 = _as_i64(offs[2]) + tl.arange(0, BS[2]).to(tl.int64)
        p = (
            bptr
            + i0[:, None, None] * _as_i64(strides[0])
            + i1[None, :, None] * _as_i64(strides[1])
            + i2[None, None, :] * _as_i64(strides[2])
        )
        act = tl.full((BS[0], BS[1], BS[2]), 1, tl.int1)
        if _in_dims(CHECK, 0):
            act = act & ((i0 >= 0) & (i0 < _as_i64(shape[0])))[:, None, None]
        if _in_dims(CHECK, 1):
            act = act & ((i1 >= 0) & (i1 < _as_i64(shape[1])))[None, :, None]
        if _in_dims(CHECK, 2):
            act = act & ((i2 >= 0) & (i2 < _as_i64(shape[2])))[None, None, :]
    return p, act


@triton.jit
def _box_record(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    KIND: tl.constexpr,
    bptr,
    shape,
    strides,
    offs,
    BS: tl.constexpr,
    CHECK: tl.constexpr,
    CODE: tl.constexpr,
    ES: tl.constexpr,
    DUMP: tl.constexpr,
    FUSED: tl.constexpr,
):
    ND: tl.constexpr = _ntuple(BS)
    if DUMP and ND <= 3:
        p, act = _box_lanes(bptr, shape, strides, offs, BS, CHECK)
        return _addr(ctx, base, slots, n, SITE, KIND, p, act, DUMP, FUSED)
    else:
        W0: tl.constexpr = _shape_word0(SITE, KIND, BS, CODE)
        W1: tl.constexpr = _shape_word1(BS)
        cnt, fa, la, mn, mx = _box_summary(bptr.to(tl.int64), shape, strides, offs, BS, CHECK, ES)
        w0 = W0 | ((n.to(tl.int64) & 0xFFFFFF) << 40)
        return _emit(
            ctx,
            base,
            slots,
            n,
            w0,
            tl.full((), W1, tl.int64),
            cnt,
            fa,
            la,
            mn,
            mx,
            tl.full((), -1, tl.int64),
            FUSED,
        )


@triton.jit
def _bp_make(base, shape, strides, offsets):
    """The shadow of tl.make_block_ptr(base, shape, strides, offsets, ...): offsets as int32
    values (not constexprs), so that tl.advance can move them in a loop."""
    ND: tl.constexpr = _ntuple(offsets)
    if ND == 1:
        o = (_as_i64(offsets[0]).to(tl.int32),)
    elif ND == 2:
        o = (_as_i64(offsets[0]).to(tl.int32), _as_i64(offsets[1]).to(tl.int32))
    elif ND == 3:
        o = (
            _as_i64(offsets[0]).to(tl.int32),
            _as_i64(offsets[1]).to(tl.int32),
            _as_i64(offsets[2]).to(tl.int32),
        )
    else:
        o = (
            _as_i64(offsets[0]).to(tl.int32),
            _as_i64(offsets[1]).to(tl.int32),
            _as_i64(offsets[2]).to(tl.int32),
            _as_i64(offsets[3]).to(tl.int32),
        )
    return (base, shape, strides, o)


@triton.jit
def bp_make(base, shape, strides, offsets):
    return _bp_make(base, shape, strides, offsets)


@triton.jit
def bp_advance(shadow, delta):
    """The shadow of tl.advance(ptr, delta)."""
    ND: tl.constexpr = _ntuple(delta)
    o = shadow[3]
    if ND == 1:
        no = (o[0] + _as_i64(delta[0]).to(tl.int32),)
    elif ND == 2:
        no = (o[0] + _as_i64(delta[0]).to(tl.int32), o[1] + _as_i64(delta[1]).to(tl.int32))
    elif ND == 3:
        no = (
            o[0] + _as_i64(delta[0]).to(tl.int32),
            o[1] + _as_i64(delta[1]).to(tl.int32),
            o[2] + _as_i64(delta[2]).to(tl.int32),
        )
    else:
        no = (
            o[0] + _as_i64(delta[0]).to(tl.int32),
            o[1] + _as_i64(delta[1]).to(tl.int32),
            o[2] + _as_i64(delta[2]).to(tl.int32),
            o[3] + _as_i64(delta[3]).to(tl.int32),
        )
    return (shadow[0], shadow[1], shadow[2], no)


@triton.jit
def _bp_addr(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    KIND: tl.constexpr,
    ptr,
    shadow,
    CHECK: tl.constexpr,
    DUMP: tl.constexpr,
    FUSED: tl.constexpr,
):
    BS: tl.constexpr = _block_shape_of(ptr)
    CODE: tl.constexpr = _bp_code(ptr)
    ES: tl.constexpr = _bp_es(ptr)
    return _box_record(
        ctx,
        base,
        slots,
        n,
        SITE,
        KIND,
        shadow[0],
        shadow[1],
        shadow[2],
        shadow[3],
        BS,
        CHECK,
        CODE,
        ES,
        DUMP,
        FUSED,
    )


@triton.jit
def bp_addr_fused(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    KIND: tl.constexpr,
    ptr,
    shadow,
    CHECK: tl.constexpr,
    DUMP: tl.constexpr,
):
    """The address record of a load/store through block pointer `ptr` with `shadow` (bp_make,
    bp_advance) and boundary_check CHECK, in closed form."""
    return _bp_addr(ctx, base, slots, n, SITE, KIND, ptr, shadow, CHECK, DUMP, True)


@triton.jit
def bp_addr_np(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    KIND: tl.constexpr,
    ptr,
    shadow,
    CHECK: tl.constexpr,
    DUMP: tl.constexpr,
):
    return _bp_addr(ctx, base, slots, n, SITE, KIND, ptr, shadow, CHECK, DUMP, False)


@triton.jit
def _desc_addr(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    KIND: tl.constexpr,
    desc,
    dbase,
    offs,
    DUMP: tl.constexpr,
    FUSED: tl.constexpr,
):
    BS: tl.constexpr = _desc_block_shape(desc)
    CODE: tl.constexpr = _desc_code(desc)
    if _is_none(dbase):
        # the descriptor's base is not known (status 2: not observable)
        W0: tl.constexpr = _shape_word0(SITE, KIND, BS, CODE)
        W1: tl.constexpr = _shape_word1(BS)
        w0 = W0 | ((n.to(tl.int64) & 0xFFFFFF) << 40)
        zero = tl.full((), 0, tl.int64)
        return _emit(
            ctx,
            base,
            slots,
            n,
            w0,
            tl.full((), W1, tl.int64),
            tl.full((), 2 << 32, tl.int64),
            zero,
            zero,
            zero,
            zero,
            tl.full((), -1, tl.int64),
            FUSED,
        )
    else:
        ES: tl.constexpr = _desc_es(desc)
        return _box_record(
            ctx,
            base,
            slots,
            n,
            SITE,
            KIND,
            dbase,
            desc.shape,
            desc.strides,
            offs,
            BS,
            True,
            CODE,
            ES,
            DUMP,
            FUSED,
        )


@triton.jit
def desc_addr_fused(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    KIND: tl.constexpr,
    desc,
    dbase,
    offs,
    DUMP: tl.constexpr,
):
    """The address record of a descriptor load/store/atomic at block coordinates `offs`, with
    `dbase` the descriptor's base pointer (None: unknown): TMA semantics, every dimension
    checked against the descriptor's shape."""
    return _desc_addr(ctx, base, slots, n, SITE, KIND, desc, dbase, offs, DUMP, True)


@triton.jit
def desc_addr_np(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    KIND: tl.constexpr,
    desc,
    dbase,
    offs,
    DUMP: tl.constexpr,
):
    return _desc_addr(ctx, base, slots, n, SITE, KIND, desc, dbase, offs, DUMP, False)


@triton.jit
def _desc_gather(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    KIND: tl.constexpr,
    desc,
    dbase,
    x_offs,
    y_off,
    DUMP: tl.constexpr,
    FUSED: tl.constexpr,
):
    """Gather/scatter rows x_offs (a block of row indices) from column y_off: materialised lanes."""
    if _is_none(dbase):
        BS: tl.constexpr = _desc_block_shape(desc)
        CODE: tl.constexpr = _desc_code(desc)
        W0: tl.constexpr = _shape_word0(SITE, KIND, BS, CODE)
        W1: tl.constexpr = _shape_word1(BS)
        w0 = W0 | ((n.to(tl.int64) & 0xFFFFFF) << 40)
        zero = tl.full((), 0, tl.int64)
        return _emit(
            ctx,
            base,
            slots,
            n,
            w0,
            tl.full((), W1, tl.int64),
            tl.full((), 2 << 32, tl.int64),
            zero,
            zero,
            zero,
            zero,
            tl.full((), -1, tl.int64),
            FUSED,
        )
    else:
        BS: tl.constexpr = _desc_block_shape(desc)
        rows = x_offs.to(tl.int64)
        cols = _as_i64(y_off) + tl.arange(0, BS[1]).to(tl.int64)
        p = (
            dbase
            + rows[:, None] * _as_i64(desc.strides[0])
            + cols[None, :] * _as_i64(desc.strides[1])
        )
        act = ((rows >= 0) & (rows < _as_i64(desc.shape[0])))[:, None] & (
            (cols >= 0) & (cols < _as_i64(desc.shape[1]))
        )[None, :]
        return _addr(ctx, base, slots, n, SITE, KIND, p, act, DUMP, FUSED)


@triton.jit
def desc_gather_fused(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    KIND: tl.constexpr,
    desc,
    dbase,
    x_offs,
    y_off,
    DUMP: tl.constexpr,
):
    return _desc_gather(ctx, base, slots, n, SITE, KIND, desc, dbase, x_offs, y_off, DUMP, True)


@triton.jit
def desc_gather_np(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    KIND: tl.constexpr,
    desc,
    dbase,
    x_offs,
    y_off,
    DUMP: tl.constexpr,
):
    return _desc_gather(ctx, base, slots, n, SITE, KIND, desc, dbase, x_offs, y_off, DUMP, False)


@triton.jit
def _desc_extent(ctx, base, slots, n, SITE: tl.constexpr, desc, dbase, FUSED: tl.constexpr):
    """Record kind 5: the bytes a descriptor made on the device addresses over its whole shape
    (first: its base, last: its last element; active lanes: its element count, capped)."""
    BS: tl.constexpr = _desc_block_shape(desc)
    CODE: tl.constexpr = _desc_code(desc)
    ES: tl.constexpr = _desc_es(desc)
    ND: tl.constexpr = _ntuple(BS)
    W0: tl.constexpr = _shape_word0(SITE, 5, BS, CODE)
    W1: tl.constexpr = _shape_word1(BS)
    b = dbase.to(tl.int64)
    cnt = tl.full((), 1, tl.int64)
    last = b
    mn = b
    mx = b
    for d in tl.static_range(ND):
        sh = _as_i64(desc.shape[d])
        a = (sh - 1) * _as_i64(desc.strides[d]) * ES
        cnt = cnt * tl.maximum(sh, 0)
        last = last + a
        mn = mn + tl.minimum(a, 0)
        mx = mx + tl.maximum(a, 0)
    some = cnt > 0
    zero = tl.full((), 0, tl.int64)
    cnt = tl.minimum(cnt, 0xFFFFFFFF)
    w0 = W0 | ((n.to(tl.int64) & 0xFFFFFF) << 40)
    return _emit(
        ctx,
        base,
        slots,
        n,
        w0,
        tl.full((), W1, tl.int64),
        tl.where(some, cnt, zero),
        tl.where(some, b, zero),
        tl.where(some, last, zero),
        tl.where(some, mn, zero),
        tl.where(some, mx, zero),
        tl.full((), -1, tl.int64),
        FUSED,
    )


@triton.jit
def desc_extent_fused(ctx, base, slots, n, SITE: tl.constexpr, desc, dbase):
    return _desc_extent(ctx, base, slots, n, SITE, desc, dbase, True)


@triton.jit
def desc_extent_np(ctx, base, slots, n, SITE: tl.constexpr, desc, dbase):
    return _desc_extent(ctx, base, slots, n, SITE, desc, dbase, False)


@triton.jit
def mask_and(mask, cond):
    """A load's mask restricted to a scalar condition (a branch of a conditional expression)."""
    return tl.where(cond, mask, False)


@constexpr_function
def desc_word0(site, kind, desc):
    ty = desc.type.block_type
    shape = [int(d) for d in ty.shape]
    flags = _pack_shape(shape)[1]
    return (
        site | (kind << 16) | (_code_of(ty.element_ty) << 24) | (len(shape) << 32) | (flags << 36)
    )


@constexpr_function
def desc_shape_word(desc):
    return _pack_shape([int(d) for d in desc.type.block_type.shape])[0]


@triton.jit
def desc_access(ctx, base, slots, n, SITE: tl.constexpr, KIND: tl.constexpr, desc):
    """Record a tensor-descriptor load/store: block shape and pointee dtype, status 2."""
    W0: tl.constexpr = desc_word0(SITE, KIND, desc)
    W1: tl.constexpr = desc_shape_word(desc)
    w0 = W0 | ((n.to(tl.int64) & 0xFFFFFF) << 40)
    zero = tl.full((), 0, tl.int64)
    return _emit(
        ctx,
        base,
        slots,
        n,
        w0,
        tl.full((), W1, tl.int64),
        tl.full((), 2 << 32, tl.int64),
        zero,
        zero,
        zero,
        zero,
        tl.full((), -1, tl.int64),
    )


# --------------------------------------------------------------------------------------------
# Closed-form records (docs/formats/record-format.md, "Closed-form records")
#
# Index arithmetic `x = s + K * tl.arange(LO, HI)` (s a scalar or absent, K constant), a
# comparison `m = x < b` of such an x with a scalar b, and an access `pbase + x` under no mask or
# under such an m are summarised by the C decoder from a few scalars: the twin stores the value
# of the first element, the step, the bound and the base address, and sets flags bit 1 of word 0.
# The rewriter recognises the forms syntactically (_rewrite.py, _closed_form); the checks below
# decide at compile time whether the types allow it, else the ordinary record is written.
# --------------------------------------------------------------------------------------------

# Closed-form kinds (record word 2, bits 0-7): 1 affine values, 2 comparison, 3 address.


@constexpr_function
def word0_closed(site, kind, x, code):
    """word0() with flags bit 1 (closed-form record)."""
    shape = _shape_of(x.type)
    flags = _pack_shape(shape)[1] | 2
    return site | (kind << 16) | (code << 24) | (len(shape) << 32) | (flags << 36)


@constexpr_function
def cf_word(cf, op, code):
    """Constant part of word 2 of a closed-form record: kind, comparison, sequence dtype code."""
    return cf | (op << 8) | (code << 16)


@constexpr_function
def _aff_ok(x, s, K, LO, HI):
    """x = s + K * tl.arange(LO, HI) can be recorded in closed form: x is a 1-D int32/int64 block of
    HI - LO elements, K * i fits int32 for every i in [LO, HI) (Triton computes it in int32), and s is
    absent, a signed integer constant or a signed integer scalar, whose dtype makes x's."""
    if (
        isinstance(K, bool)
        or not isinstance(K, int)
        or not isinstance(LO, int)
        or not isinstance(HI, int)
    ):
        return False
    if not isinstance(x, tl.tensor) or not x.type.is_block():
        return False
    shape = [int(d) for d in x.type.shape]
    if len(shape) != 1 or shape[0] != HI - LO or HI <= LO:
        return False
    lim = 1 << 31
    if not (-lim <= K * LO < lim and -lim <= K * (HI - 1) < lim):
        return False
    xt = x.dtype.name
    if s is None:
        return xt == "int32"
    if isinstance(s, bool):
        return False
    if isinstance(s, int):
        return xt == ("int32" if -lim <= s < lim else "int64")
    if not isinstance(s, tl.tensor) or s.type.is_block():
        return False
    st = s.dtype.name
    if st in ("int8", "int16", "int32"):
        return xt == "int32"
    return st == "int64" and xt == "int64"


@constexpr_function
def _is_tensor(x):
    return isinstance(x, tl.tensor)


@constexpr_function
def _cmp_ok(m, aff, b, OP):
    """m = x OP b with x the closed-form affine aff (int64 scalars; a fallback's placeholder is
    int1): m is a 1-D bool block, b a signed integer scalar or constant (the comparison is then
    one of sign-extended integers), OP 1-4."""
    if not isinstance(aff[0], tl.tensor) or aff[0].dtype != tl.int64:
        return False
    if not isinstance(m, tl.tensor) or not m.type.is_block() or m.dtype.name != "int1":
        return False
    if len(m.type.shape) != 1 or OP not in (1, 2, 3, 4):
        return False
    if isinstance(b, bool):
        return False
    if isinstance(b, int):
        return -(1 << 63) <= b < (1 << 63)
    return (
        isinstance(b, tl.tensor)
        and not b.type.is_block()
        and b.dtype.name in ("int8", "int16", "int32", "int64")
    )


@constexpr_function
def _addr_closed_ok(ptr, pbase, mask, aff, cmp):
    if not isinstance(aff[0], tl.tensor) or aff[0].dtype != tl.int64:
        return False
    if cmp is not None and (not isinstance(cmp[0], tl.tensor) or cmp[0].dtype != tl.int64):
        return False
    if not isinstance(pbase, tl.tensor) or pbase.type.is_block() or not pbase.type.is_ptr():
        return False
    if pbase.type.element_ty.is_block():
        return False
    if not isinstance(ptr, tl.tensor) or not ptr.type.is_block() or len(ptr.type.shape) != 1:
        return False
    if cmp is None:
        return mask is None
    return (
        isinstance(mask, tl.tensor)
        and mask.type.is_block()
        and [int(d) for d in mask.type.shape] == [int(d) for d in ptr.type.shape]
    )


@triton.jit
def _emit_closed(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    KIND: tl.constexpr,
    x,
    CODE: tl.constexpr,
    w2,
    w3,
    w4,
    w5,
    w6,
    w7,
    FUSED: tl.constexpr,
):
    W0: tl.constexpr = word0_closed(SITE, KIND, x, CODE)
    W1: tl.constexpr = shape_word(x)
    w0 = W0 | ((n.to(tl.int64) & 0xFFFFFF) << 40)
    return _emit(ctx, base, slots, n, w0, tl.full((), W1, tl.int64), w2, w3, w4, w5, w6, w7, FUSED)


@triton.jit
def _value_affine(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    x,
    S,
    K: tl.constexpr,
    LO: tl.constexpr,
    HI: tl.constexpr,
    FUSED: tl.constexpr,
    EXACT: tl.constexpr = False,
):
    if _aff_ok(x, S, K, LO, HI):
        CODE: tl.constexpr = dtype_code(x)
        if S is None:
            f = tl.full((), K * LO, tl.int32)
        else:
            f = S + tl.full(
                (), K * LO, tl.int32
            )  # element 0, with the user's promotion and wrap-around
        f = f.to(tl.int64)
        k = tl.full((), K, tl.int64)
        c = tl.full((), CODE, tl.int64)
        zero = tl.full((), 0, tl.int64)
        CF: tl.constexpr = cf_word(1, 0, CODE)
        n2 = _emit_closed(
            ctx,
            base,
            slots,
            n,
            SITE,
            1,
            x,
            CODE,
            tl.full((), CF, tl.int64),
            f,
            k,
            zero,
            zero,
            zero,
            FUSED,
        )
        return n2, (f, k, c)
    else:
        n2 = _value(ctx, base, slots, n, SITE, x, 0, FUSED, False, EXACT)
        p = tl.full((), 0, tl.int1)
        return n2, (p, p, p)


@triton.jit
def _value_compare(
    ctx, base, slots, n, SITE: tl.constexpr, m, AFF, OP: tl.constexpr, B, FUSED: tl.constexpr
):
    if _cmp_ok(m, AFF, B, OP):
        if _is_tensor(B):
            b = B.to(tl.int64)
        else:
            b = tl.full((), B, tl.int64)
        CF: tl.constexpr = cf_word(2, OP, 0)
        w2 = (AFF[2] << 16) | CF
        zero = tl.full((), 0, tl.int64)
        n2 = _emit_closed(
            ctx, base, slots, n, SITE, 1, m, 1, w2, AFF[0], AFF[1], b, zero, zero, FUSED
        )
        return n2, (AFF[0], AFF[1], AFF[2], b, tl.full((), OP, tl.int64))
    else:
        n2 = _value(ctx, base, slots, n, SITE, m, 0, FUSED)
        p = tl.full((), 0, tl.int1)
        return n2, (p, p, p, p, p)


@triton.jit
def _addr_closed(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    KIND: tl.constexpr,
    ptr,
    mask,
    PBASE,
    OFF,
    AFF,
    CMP,
    FUSED: tl.constexpr,
):
    if _addr_closed_ok(ptr, PBASE, mask, AFF, CMP):
        CODE: tl.constexpr = pointee_code(ptr)
        if CMP is None:
            w2 = (AFF[2] << 16) | 3
            b = tl.full((), 0, tl.int64)
        else:
            w2 = (AFF[2] << 16) | (CMP[4] << 8) | 3
            b = CMP[3]
        return _emit_closed(
            ctx,
            base,
            slots,
            n,
            SITE,
            KIND,
            ptr,
            CODE,
            w2,
            PBASE.to(tl.int64),
            AFF[0],
            AFF[1],
            b,
            tl.full((), 0, tl.int64),
            FUSED,
        )
    else:
        return _addr_entry(
            ctx, base, slots, n, SITE, KIND, ptr, mask, 0, PBASE, OFF, None, False, FUSED
        )


@triton.jit
def value_affine_fused(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    x,
    S,
    K: tl.constexpr,
    LO: tl.constexpr,
    HI: tl.constexpr,
):
    """Record x = S + K * tl.arange(LO, HI) (S None: absent) in closed form when the types allow it,
    else as an ordinary value record; returns (n, affine description for value_compare/addr_closed)."""
    return _value_affine(ctx, base, slots, n, SITE, x, S, K, LO, HI, True)


@triton.jit
def value_affine_np(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    x,
    S,
    K: tl.constexpr,
    LO: tl.constexpr,
    HI: tl.constexpr,
):
    return _value_affine(ctx, base, slots, n, SITE, x, S, K, LO, HI, False)


@triton.jit
def value_affine_fused_exact(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    x,
    S,
    K: tl.constexpr,
    LO: tl.constexpr,
    HI: tl.constexpr,
):
    """value_affine_fused with exact_sums (an x that is not affine gets a float64-summed record)."""
    return _value_affine(ctx, base, slots, n, SITE, x, S, K, LO, HI, True, True)


@triton.jit
def value_affine_np_exact(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    x,
    S,
    K: tl.constexpr,
    LO: tl.constexpr,
    HI: tl.constexpr,
):
    return _value_affine(ctx, base, slots, n, SITE, x, S, K, LO, HI, False, True)


@triton.jit
def value_compare_fused(ctx, base, slots, n, SITE: tl.constexpr, m, AFF, OP: tl.constexpr, B):
    """Record m = x OP B (OP 1 <, 2 <=, 3 >, 4 >=; x described by AFF) in closed form when possible;
    returns (n, comparison description for addr_closed)."""
    return _value_compare(ctx, base, slots, n, SITE, m, AFF, OP, B, True)


@triton.jit
def value_compare_np(ctx, base, slots, n, SITE: tl.constexpr, m, AFF, OP: tl.constexpr, B):
    return _value_compare(ctx, base, slots, n, SITE, m, AFF, OP, B, False)


@triton.jit
def addr_closed_fused(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    KIND: tl.constexpr,
    ptr,
    mask,
    PBASE,
    OFF,
    AFF,
    CMP=None,
):
    """Record the access ptr = PBASE + OFF (OFF described by AFF) under no mask or under mask (described
    by CMP, a comparison of the same OFF) in closed form when possible, else as addr_fused does."""
    return _addr_closed(ctx, base, slots, n, SITE, KIND, ptr, mask, PBASE, OFF, AFF, CMP, True)


@triton.jit
def addr_closed_np(
    ctx,
    base,
    slots,
    n,
    SITE: tl.constexpr,
    KIND: tl.constexpr,
    ptr,
    mask,
    PBASE,
    OFF,
    AFF,
    CMP=None,
):
    return _addr_closed(ctx, base, slots, n, SITE, KIND, ptr, mask, PBASE, OFF, AFF, CMP, False)


def interpreter_helpers() -> dict[str, object]:
    """The helpers above as plain Python functions calling each other directly, for twins that
    run on the Triton interpreter.

    Each call of an interpreted @jit function re-patches the language modules (milliseconds);
    a twin calls several nested helpers per record. Inside an interpreted launch the modules are
    already patched, so the helpers' own Python code can run as is. Only used on the interpreter;
    the @jit objects stay the source of truth (compiled backends use them unchanged)."""
    import types

    from triton.runtime.interpreter import InterpretedFunction

    ns: dict[str, object] = dict(globals())
    for name, obj in list(ns.items()):
        if isinstance(obj, InterpretedFunction):
            f = obj.fn
            ns[name] = types.FunctionType(f.__code__, ns, f.__name__, f.__defaults__, f.__closure__)
    return ns
