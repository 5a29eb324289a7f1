# SPDX-License-Identifier: Apache-2.0
"""Device-side checks of the Debugger, as plain-``tl`` ``@triton.jit`` helpers.

The instrumented twin (``_rewrite.py``, ``_checkgen.py``) calls these at every memory access and
every value the findings rules look at. Each call evaluates one rule on one *instance* (one
program, one execution of the statement) right where the values and addresses are, and folds
what it found into the rule's *check slot*: a fixed block of words in the record buffer's check
area (docs/formats/record-format.md, "Check area"). Nothing here grows with trip counts,
executions or the grid: a check slot counts the instances where its rule fired and the elements
involved, keeps the lowest and highest offending address (or value), the first instance in
(program, sequence, lane) order with its lane, address or value and loop iteration, and the
eight lowest programs where it fired. The host turns slots into findings (src/debug/findings.c).

The rules:

* **bounds**: every active lane of a load, store or atomic against the view of the tensor
  argument(s) its pointer derives from (the tensor table at the start of the buffer; the
  candidates are worked out statically by ``_findsites.PointerBases``). With no candidate, or
  none that is a tensor of this launch, the lane is checked against every tensor of the launch.
  A lane outside is counted and, unless the run asked to keep the original behaviour,
  *suppressed*: the helpers return the mask the access then uses (a load yields ``other``, a
  store or atomic is dropped).
* **nan / inf**: a value holding NaN (Inf) is an *origin* when no value its statement reads holds
  NaN (Inf) and, for Inf, when the statement writes no infinity of that sign itself. Reads are
  evaluated here, only when the value is not finite (the fast path is one sum). A loaded value
  counts only its active lanes (masked-off lanes hold ``other``, padding the kernel chose).
* **division, domain, narrowing casts**: zero or tiny divisors, negative ``sqrt``/``log``
  arguments, casts to fp16/bf16/fp8 that overflow, flush most values to zero or make them
  subnormal; counted exactly per element.

Every rule's fast path costs one reduction and writes nothing; the slow path (the rule fired)
takes a per-slot lock to keep the first instance exact. This module does not rewrite, size,
launch or decode anything.
"""

from __future__ import annotations

import math

import triton
import triton.language as tl

from flagprism import _records as R
from flagprism.compat import constexpr_function

# Layout of the check area (docs/formats/record-format.md, "Check area"); _launch.py and the C
# decoder use the same numbers (FP_DBG_* in include/flagprism/debug.h). Plain integers for the
# host, tl.constexpr for the helpers (a @jit function reads only constexpr globals).
EXT_AT = 8  # the extended header: words 8-15
TABLE_AT = 16  # the tensor table: one entry per kernel parameter
ENTRY_WORDS = 4  # view_lo, view_hi, storage_lo, storage_hi
SLOT_WORDS = 32  # one check slot

_SINK = tl.constexpr(12)  # a word of the extended header that absorbs suppressed compare-and-swaps
_TABLE_AT = tl.constexpr(TABLE_AT)
_ENTRY_WORDS = tl.constexpr(ENTRY_WORDS)
# Words of a check slot.
W_FIRED = tl.constexpr(1)
W_COUNT = tl.constexpr(2)
W_LO = tl.constexpr(3)  # I64_MAX - lowest value (0: none)
W_HI = tl.constexpr(4)  # highest value (0: none)
W_KEY = tl.constexpr(5)  # ((program << 32) | sequence) + 1 of the first instance (0: none)
W_LANE = tl.constexpr(6)
W_VALUE = tl.constexpr(7)
W_ITER = tl.constexpr(8)
W_LOCK = tl.constexpr(9)
W_AUX = tl.constexpr(10)  # nan/inf: instances holding it that descend from a read (not origins)
W_AUX2 = tl.constexpr(11)  # nan/inf: their elements
W_PMORE = tl.constexpr(12)  # programs that fired but did not fit the list
W_UNOBS = tl.constexpr(13)  # 1: an access the check cannot see (a block pointer not followed)
W_PROGS = tl.constexpr(16)  # 8 programs + 1 (0: empty)

_I64_MAX = tl.constexpr(0x7FFFFFFFFFFFFFFF)
_I32_MAX = tl.constexpr(0x7FFFFFFF)
_I32_MIN = tl.constexpr(-0x80000000)
_BIG = tl.constexpr(1 << 30)
_INF = tl.constexpr(float("inf"))


def slot_word(nparams: int, slot: int) -> int:
    """Word offset of check slot `slot` (0-based) of a kernel with `nparams` parameters."""
    return TABLE_AT + ENTRY_WORDS * nparams + SLOT_WORDS * slot


def slot_index(nparams: int, word: int) -> int:
    """The check slot (0-based) at word offset `word` (slot_word's inverse)."""
    return (word - TABLE_AT - ENTRY_WORDS * nparams) // SLOT_WORDS


def records_at(nparams: int, nslots: int) -> int:
    """Word offset of the record slots after the check area."""
    return TABLE_AT + ENTRY_WORDS * nparams + SLOT_WORDS * nslots


# --------------------------------------------------------------------------------------------
# Compile-time facts
# --------------------------------------------------------------------------------------------


@constexpr_function
def _nt(t):
    return len(t)


@constexpr_function
def _fl(x):
    """How a value is checked for NaN/Inf: 0 not at all (integers, pointers, booleans, compile-time
    values other than floats), 1 a float tensor (block or scalar)."""
    return 1 if isinstance(x, tl.tensor) and x.dtype.is_floating() else 0


@constexpr_function
def _cx_bits(x):
    """NaN (1) / +Inf (2) / -Inf (4) bits of a compile-time float (a read that is a constexpr:
    `min_value = get_dtype_min(dtype)`, a `tl.constexpr(float("-inf"))` global); 0 otherwise."""
    v = x.value if isinstance(x, tl.constexpr) else x
    if isinstance(v, bool) or not isinstance(v, float):
        return 0
    if math.isnan(v):
        return 1
    if math.isinf(v):
        return 2 if v > 0 else 4
    return 0


@constexpr_function
def _is_block(x):
    return isinstance(x, tl.tensor) and x.type.is_block()


@constexpr_function
def _pointee_es(ptr):
    ty = ptr.type
    if ty.is_block():
        ty = ty.element_ty
    return max(1, ty.element_ty.primitive_bitwidth // 8)


@constexpr_function
def _pointee_ty(ptr):
    ty = ptr.type
    if ty.is_block():
        ty = ty.element_ty
    return ty.element_ty


@constexpr_function
def _cast_limits(target):
    """(overflow threshold, half the smallest subnormal, smallest normal) of a narrow float dtype
    by its site-table name; the thresholds of docs/guide/debugger.md ("Precision")."""
    return {
        "float16": (65520.0, 2.0**-25, 2.0**-14),
        "bfloat16": (2.0**128 - 2.0**119, 2.0**-134, 2.0**-126),
        "float8e4nv": (464.0, 2.0**-10, 2.0**-6),
        "float8e5": (61440.0, 2.0**-17, 2.0**-14),
    }[target]


@constexpr_function
def _min_normal(x):
    """Smallest normal of a float value's own dtype (the `tiny` divisor threshold)."""
    name = x.dtype.name
    return {
        "fp16": 2.0**-14,
        "bf16": 2.0**-126,
        "fp32": 2.0**-126,
        "fp64": 2.0**-1022,
        "fp8e4nv": 2.0**-6,
        "fp8e5": 2.0**-14,
    }.get(name, 2.0**-126)


# --------------------------------------------------------------------------------------------
# Folding one instance into its slot
# --------------------------------------------------------------------------------------------


@triton.jit
def _program():
    p = tl.program_id(0).to(tl.int64) + tl.num_programs(0).to(tl.int64) * (
        tl.program_id(1).to(tl.int64)
        + tl.num_programs(1).to(tl.int64) * tl.program_id(2).to(tl.int64)
    )
    return p


@triton.jit
def _fire(ctx, S: tl.constexpr, cnt, lane, value, lo, hi, seq, it):
    """One instance where slot S's rule fired: `cnt` elements, its first offending `lane` and
    that lane's `value` (an address, or a float's bits), the lowest/highest offending value
    `lo`/`hi`, at sequence `seq` of this program, in loop iteration `it`. Scalar atomics: one
    thread of the program runs each. The first instance and the program list change together
    under the slot's lock; an instance that can change neither (its program is listed already,
    or the list is full of lower ones, and an earlier instance is known) takes no lock, so a bug
    that fires everywhere costs a few atomics per instance, not a queue on one lock."""
    s = ctx + S
    zero = tl.full((), 0, tl.int64)
    one = tl.full((), 1, tl.int64)
    p = _program()
    tl.atomic_add(s + W_FIRED, one, sem="relaxed")
    tl.atomic_add(s + W_COUNT, cnt.to(tl.int64), sem="relaxed")
    tl.atomic_max(s + W_LO, (-lo.to(tl.int64)) + _I64_MAX, sem="relaxed")
    tl.atomic_max(s + W_HI, hi.to(tl.int64), sem="relaxed")
    key = (p << 32) + (R._as_i64(seq) & 0xFFFFFFFF) + 1
    me = p + 1
    k = tl.arange(0, 8)
    cur = tl.atomic_add(s + W_KEY, zero, sem="relaxed")
    lst = tl.atomic_add(s + W_PROGS + k, tl.zeros((8,), tl.int64), sem="relaxed")
    listed = tl.max((lst == me).to(tl.int32), axis=0) > 0
    room = tl.min(tl.where(lst == 0, k, 8), axis=0) < 8
    # the list only ever holds lower programs over time: one above a full list stays out
    above = (room == 0) & (me > tl.max(lst, axis=0)) & (listed == 0)
    tl.atomic_add(s + W_PMORE, one, mask=above, sem="relaxed")
    if ((cur == 0) | (key < cur)) | ((listed == 0) & (above == 0)):
        # the lock is the low half of its word, taken with 32-bit atomics: Triton 3.4 emits a
        # 64-bit scalar compare-and-swap's result to shared memory from a 32-bit register, which
        # ptxas rejects
        lock = (s + W_LOCK).to(tl.pointer_type(tl.int32))
        while tl.atomic_cas(lock, 0, 1) == 1:
            pass
        cur = tl.atomic_add(s + W_KEY, zero)
        if (cur == 0) | (key < cur):
            tl.atomic_xchg(s + W_KEY, key)
            tl.atomic_xchg(s + W_LANE, lane.to(tl.int64))
            tl.atomic_xchg(s + W_VALUE, value.to(tl.int64))
            tl.atomic_xchg(s + W_ITER, R._as_i64(it))
        if above == 0:
            lst = tl.atomic_add(s + W_PROGS + k, tl.zeros((8,), tl.int64))
            if tl.max((lst == me).to(tl.int32), axis=0) == 0:
                # not listed: take an empty entry, else replace the highest when lower
                free = tl.min(tl.where(lst == 0, k, 8), axis=0)
                top = tl.max(lst, axis=0)
                at = tl.where(free < 8, free, tl.min(tl.where(lst == top, k, 8), axis=0))
                put = (free < 8) | (me < top)
                # a scalar exchange (a block one becomes an AMD buffer atomic gfx942 has no
                # exchange for)
                tl.atomic_xchg(s + W_PROGS + at, me, mask=put)
                tl.atomic_add(s + W_PMORE, one, mask=(free >= 8), sem="relaxed")
        tl.atomic_xchg(lock, 0)


# --------------------------------------------------------------------------------------------
# bounds
# --------------------------------------------------------------------------------------------


@triton.jit
def _view_ok(ctx, a, ES: tl.constexpr, K: tl.constexpr):
    """(lanes of addresses `a` whose ES bytes lie inside parameter K's view, whether K is a
    tensor of this launch)."""
    lo = tl.load(ctx + _TABLE_AT + _ENTRY_WORDS * K)
    hi = tl.load(ctx + _TABLE_AT + _ENTRY_WORDS * K + 1)
    known = hi > lo
    return known & (a >= lo) & (a <= hi - ES), known


@triton.jit
def _inside(ctx, a, ES: tl.constexpr, CANDS: tl.constexpr, NP: tl.constexpr):
    """Lanes of addresses `a` inside the view of one of the candidate parameters CANDS; with no
    candidate that is a tensor of this launch, inside the view of any tensor of the launch; with
    no tensor at all in the table (nothing to compare with: device tensors on the interpreter,
    which runs on host copies), every lane."""
    ok = a != a
    known = tl.full((), 0, tl.int1)
    for i in tl.static_range(_nt(CANDS)):
        o, k = _view_ok(ctx, a, ES, CANDS[i])
        ok = ok | o
        known = known | k
    if not known:
        for j in tl.static_range(NP):
            o, k = _view_ok(ctx, a, ES, j)
            ok = ok | o
            known = known | k
        ok = ok | (known == 0)
    return ok


@triton.jit
def _mask(x):
    """Lanes `x` as a mask a load or store takes on every Triton: a comparison of the block
    (Triton 3.9's interpreter keeps a scalar comparison's data integer when it meets a block, and
    rejects a mask whose data is not boolean)."""
    return x != 0


@triton.jit
def _sum32(x):
    return tl.sum(R._any_order(x.to(tl.int32)), axis=0)


@triton.jit
def _oob_fire(ctx, S: tl.constexpr, a, bad, ES: tl.constexpr, seq, it):
    """The slow path of a bounds check that found lanes `bad` (int64 addresses `a`)."""
    if _is_block(a):
        af = R._flat(a)
        bf = R._flat(bad)
        idx = R._lin_index(af)
        cnt = _sum32(bf)
        lane = tl.min(R._any_order(tl.where(bf, idx, _BIG)), axis=0)
        addr = tl.sum(R._any_order(tl.where(idx == lane, af, 0)), axis=0)
        lo = tl.min(R._any_order(tl.where(bf, af, _I64_MAX)), axis=0)
        hi = tl.max(R._any_order(tl.where(bf, af + ES, 0)), axis=0)
        _fire(ctx, S, cnt, lane, addr, lo, hi, seq, it)
    else:
        _fire(ctx, S, bad.to(tl.int32), tl.full((), 0, tl.int32), a, a, a + ES, seq, it)


@triton.jit
def _bounds(
    ctx, S: tl.constexpr, a, act, ES: tl.constexpr, CANDS: tl.constexpr, NP: tl.constexpr, seq, it
):
    """Check lanes `a` (int64 addresses) active in `act`; returns the lanes inside."""
    ok = _inside(ctx, a, ES, CANDS, NP)
    bad = act & (ok == 0)
    if _is_block(bad):
        nb = _sum32(bad)
    else:
        nb = bad.to(tl.int32)
    if nb > 0:
        _oob_fire(ctx, S, a, bad, ES, seq, it)
    return ok


@triton.jit
def _affine_inside(ctx, b, off, ES: tl.constexpr, K: tl.constexpr):
    """Lanes of b + off * ES (b an int64 scalar address, off an int32 block) inside parameter K's
    view, compared as int32 offsets: off in [ceil((lo - b) / ES), floor((hi - ES - b) / ES)]."""
    lo = tl.load(ctx + _TABLE_AT + _ENTRY_WORDS * K)
    hi = tl.load(ctx + _TABLE_AT + _ENTRY_WORDS * K + 1)
    known = hi > lo
    # floor and ceil of a signed division, whatever the division rounds to
    dl = lo - b
    ql = dl // ES
    ql = tl.where(ql * ES < dl, ql + 1, ql)
    ql = tl.where((ql - 1) * ES >= dl, ql - 1, ql)
    dh = hi - ES - b
    qh = dh // ES
    qh = tl.where(qh * ES > dh, qh - 1, qh)
    qh = tl.where((qh + 1) * ES <= dh, qh + 1, qh)
    valid = known & (ql <= qh) & (ql <= _I32_MAX) & (qh >= _I32_MIN)
    l32 = tl.maximum(ql, _I32_MIN).to(tl.int32)
    h32 = tl.minimum(qh, _I32_MAX).to(tl.int32)
    return valid & (off >= l32) & (off <= h32), known


@triton.jit
def _affine_bounds(
    ctx,
    S: tl.constexpr,
    b,
    off,
    act,
    ES: tl.constexpr,
    CANDS: tl.constexpr,
    NP: tl.constexpr,
    seq,
    it,
):
    ok = off != off
    known = tl.full((), 0, tl.int1)
    for i in tl.static_range(_nt(CANDS)):
        o, k = _affine_inside(ctx, b, off, ES, CANDS[i])
        ok = ok | o
        known = known | k
    if not known:
        for j in tl.static_range(NP):
            o, k = _affine_inside(ctx, b, off, ES, j)
            ok = ok | o
            known = known | k
        ok = ok | (known == 0)
    bad = act & (ok == 0)
    if _sum32(bad) > 0:
        _oob_fire(ctx, S, b + off.to(tl.int64) * ES, bad, ES, seq, it)
    return ok


@triton.jit
def access(
    ctx,
    seq,
    S: tl.constexpr,
    ptr,
    mask,
    CANDS: tl.constexpr,
    NP: tl.constexpr,
    SUP: tl.constexpr,
    it,
    PBASE=None,
    OFF=None,
):
    """Bounds check of a tl.load/tl.store/tl.atomic_* through pointer(s) `ptr` under `mask`.
    `seq`: the program's record counter (the slot of its next record, for the first instance's
    place). Returns the lanes the access may perform: with SUP the active lanes found inside (a
    boolean block or scalar, even where `mask` was None or a constant), without SUP the active
    lanes (the twin then keeps the access's own mask)."""
    if R.ptr_class(ptr) == 3:
        # a block pointer the rewriter does not follow: its lanes are not visible here
        tl.store(ctx + S + W_UNOBS, tl.full((), 1, tl.int64))
        return tl.full((), 1, tl.int1)
    ES: tl.constexpr = _pointee_es(ptr)
    MK: tl.constexpr = R.mask_class(mask)
    if MK == 2:
        pb, act = tl.broadcast(ptr, mask)
    else:
        pb = ptr
        if _is_block(ptr):
            act = tl.full(ptr.shape, MK == 0, tl.int1)
        else:
            act = tl.full((), MK == 0, tl.int1)
    if R._affine_ok(PBASE, OFF, mask):
        offb = tl.broadcast_to(OFF, pb.shape)
        ok = _affine_bounds(ctx, S, PBASE.to(tl.int64), offb, act, ES, CANDS, NP, seq, it)
    else:
        ok = _bounds(ctx, S, pb.to(tl.int64), act, ES, CANDS, NP, seq, it)
    if SUP:
        return _mask(act & ok)
    else:
        return act


@triton.jit
def access_cas(
    ctx, seq, S: tl.constexpr, ptr, CANDS: tl.constexpr, NP: tl.constexpr, SUP: tl.constexpr, it
):
    """Bounds check of a tl.atomic_cas (which has no mask). Returns the pointer to use: with
    SUP, lanes found outside are sent to a sink word of the buffer's extended header."""
    ES: tl.constexpr = _pointee_es(ptr)
    if _is_block(ptr):
        act = tl.full(ptr.shape, 1, tl.int1)
    else:
        act = tl.full((), 1, tl.int1)
    ok = _bounds(ctx, S, ptr.to(tl.int64), act, ES, CANDS, NP, seq, it)
    if SUP:
        sink = (ctx + _SINK).to(tl.pointer_type(_pointee_ty(ptr)), bitcast=True)
        return tl.where(ok, ptr, sink)
    else:
        return ptr


@triton.jit
def _range_inside(ctx, lo, hi, ES: tl.constexpr, CANDS: tl.constexpr, NP: tl.constexpr):
    """Whether bytes [lo, hi + ES) lie inside one candidate's view (every tensor's where no
    candidate is known; true where no tensor of the table has a view: nothing to check)."""
    ok = lo != lo
    known = tl.full((), 0, tl.int1)
    for i in tl.static_range(_nt(CANDS)):
        o, k = _view_ok(ctx, lo, 1, CANDS[i])
        o2, k2 = _view_ok(ctx, hi, ES, CANDS[i])
        ok = ok | (o & o2)
        known = known | k
    if not known:
        for j in tl.static_range(NP):
            o, k = _view_ok(ctx, lo, 1, j)
            o2, k2 = _view_ok(ctx, hi, ES, j)
            ok = ok | (o & o2)
            known = known | k
        ok = ok | (known == 0)
    return ok


@triton.jit
def _box_bounds(
    ctx,
    S: tl.constexpr,
    bptr,
    shape,
    strides,
    offs,
    BS: tl.constexpr,
    CHECK: tl.constexpr,
    ES: tl.constexpr,
    CANDS: tl.constexpr,
    NP: tl.constexpr,
    seq,
    it,
):
    """Bounds check of the box of a block pointer or descriptor access: in closed form when the
    whole box lies inside a candidate's view, lane by lane otherwise."""
    cnt, fa, la, mn, mx = R._box_summary(bptr.to(tl.int64), shape, strides, offs, BS, CHECK, ES)
    ok = _range_inside(ctx, mn, mx, ES, CANDS, NP)
    if (cnt > 0) & (ok == 0):
        p, act = R._box_lanes(bptr, shape, strides, offs, BS, CHECK)
        _bounds(ctx, S, p.to(tl.int64), act, ES, CANDS, NP, seq, it)


@triton.jit
def bp_access(
    ctx,
    seq,
    S: tl.constexpr,
    ptr,
    shadow,
    CHECK: tl.constexpr,
    CANDS: tl.constexpr,
    NP: tl.constexpr,
    it,
):
    """Bounds check of a load or store through a block pointer followed by its shadow
    (_memforms.py). Suppression is bp_load/bp_store's."""
    BS: tl.constexpr = R._block_shape_of(ptr)
    ES: tl.constexpr = R._bp_es(ptr)
    _box_bounds(
        ctx, S, shadow[0], shadow[1], shadow[2], shadow[3], BS, CHECK, ES, CANDS, NP, seq, it
    )


@triton.jit
def _bp_lanes_ok(
    ctx,
    shadow,
    BS: tl.constexpr,
    CHECK: tl.constexpr,
    ES: tl.constexpr,
    CANDS: tl.constexpr,
    NP: tl.constexpr,
):
    p, act = R._box_lanes(shadow[0], shadow[1], shadow[2], shadow[3], BS, CHECK)
    ok = _inside(ctx, p.to(tl.int64), ES, CANDS, NP)
    return p, _mask(act & ok)


@constexpr_function
def _pad_nan(pad):
    return pad == "nan"


@triton.jit
def bp_load(
    ctx, ptr, shadow, CHECK: tl.constexpr, PAD: tl.constexpr, CANDS: tl.constexpr, NP: tl.constexpr
):
    """A load through a block pointer with its lanes outside the candidates' views suppressed:
    the lanes of the shadow's box, loaded with the boundary check's mask and the views' (lanes
    outside either read the padding: zero, or NaN with padding_option="nan")."""
    BS: tl.constexpr = R._block_shape_of(ptr)
    ES: tl.constexpr = R._bp_es(ptr)
    if _nt(BS) > 3:
        x = tl.load(ptr, boundary_check=CHECK, padding_option=PAD)
    else:
        p, m = _bp_lanes_ok(ctx, shadow, BS, CHECK, ES, CANDS, NP)
        if _pad_nan(PAD):
            x = tl.load(p, mask=m, other=float("nan"))
        else:
            x = tl.load(p, mask=m, other=0)
    return x


@triton.jit
def bp_store(ctx, ptr, shadow, value, CHECK: tl.constexpr, CANDS: tl.constexpr, NP: tl.constexpr):
    """A store through a block pointer with its lanes outside the candidates' views dropped."""
    BS: tl.constexpr = R._block_shape_of(ptr)
    ES: tl.constexpr = R._bp_es(ptr)
    if _nt(BS) > 3:
        tl.store(ptr, value, boundary_check=CHECK)
    else:
        p, m = _bp_lanes_ok(ctx, shadow, BS, CHECK, ES, CANDS, NP)
        tl.store(p, value, mask=m)


@triton.jit
def desc_access(
    ctx, seq, S: tl.constexpr, desc, dbase, offs, CANDS: tl.constexpr, NP: tl.constexpr, it
):
    """Bounds check of a tensor-descriptor access at block coordinates `offs` (every dimension
    checked against the descriptor's shape, as TMA does); dbase None: the base is not known,
    nothing to check."""
    if not R._is_none(dbase):
        BS: tl.constexpr = R._desc_block_shape(desc)
        ES: tl.constexpr = R._desc_es(desc)
        _box_bounds(ctx, S, dbase, desc.shape, desc.strides, offs, BS, True, ES, CANDS, NP, seq, it)


@triton.jit
def desc_gather(
    ctx, seq, S: tl.constexpr, desc, dbase, x_offs, y_off, CANDS: tl.constexpr, NP: tl.constexpr, it
):
    """Bounds check of a descriptor gather/scatter: rows x_offs (a block of row indices) from
    column y_off, lanes inside the descriptor's shape (TMA drops or zero-fills the others)."""
    if not R._is_none(dbase):
        BS: tl.constexpr = R._desc_block_shape(desc)
        ES: tl.constexpr = R._desc_es(desc)
        rows = x_offs.to(tl.int64)
        cols = R._as_i64(y_off) + tl.arange(0, BS[1]).to(tl.int64)
        p = (
            dbase
            + rows[:, None] * R._as_i64(desc.strides[0])
            + cols[None, :] * R._as_i64(desc.strides[1])
        )
        act = ((rows >= 0) & (rows < R._as_i64(desc.shape[0])))[:, None] & (
            (cols >= 0) & (cols < R._as_i64(desc.shape[1]))
        )[None, :]
        _bounds(ctx, S, p.to(tl.int64), act, ES, CANDS, NP, seq, it)


@triton.jit
def _desc_lanes_ok(ctx, desc, dbase, offs, CANDS: tl.constexpr, NP: tl.constexpr):
    """The pointers of a descriptor block's lanes (its base, shape and strides, as TMA addresses
    them) and the lanes both inside the descriptor's shape and inside the candidates' views."""
    BS: tl.constexpr = R._desc_block_shape(desc)
    ES: tl.constexpr = R._desc_es(desc)
    p, act = R._box_lanes(dbase, desc.shape, desc.strides, offs, BS, True)
    ok = _inside(ctx, p.to(tl.int64), ES, CANDS, NP)
    return p, _mask(act & ok)


@triton.jit
def desc_load(ctx, desc, dbase, offs, PAD: tl.constexpr, CANDS: tl.constexpr, NP: tl.constexpr):
    """A descriptor load with its lanes outside the candidates' views suppressed: the block's
    lanes loaded through pointers, those outside the descriptor's shape or the views reading the
    padding (zero, or NaN with padding "nan"), as TMA gives the lanes outside the shape. A block
    of more than 3 dimensions is loaded through the descriptor (checked, not suppressed)."""
    BS: tl.constexpr = R._desc_block_shape(desc)
    if _nt(BS) > 3:
        x = desc.load(offs)
    else:
        p, m = _desc_lanes_ok(ctx, desc, dbase, offs, CANDS, NP)
        if _pad_nan(PAD):
            x = tl.load(p, mask=m, other=float("nan"))
        else:
            x = tl.load(p, mask=m, other=0)
    return x


@triton.jit
def desc_store(ctx, desc, dbase, offs, value, CANDS: tl.constexpr, NP: tl.constexpr):
    """A descriptor store with its lanes outside the shape or the candidates' views dropped."""
    BS: tl.constexpr = R._desc_block_shape(desc)
    if _nt(BS) > 3:
        desc.store(offs, value)
    else:
        p, m = _desc_lanes_ok(ctx, desc, dbase, offs, CANDS, NP)
        tl.store(p, value, mask=m)


@triton.jit
def desc_atomic(
    ctx, desc, dbase, offs, value, OP: tl.constexpr, CANDS: tl.constexpr, NP: tl.constexpr
):
    """A descriptor atomic (add, min, max, and, or, xor) with its lanes outside the shape or the
    candidates' views dropped."""
    BS: tl.constexpr = R._desc_block_shape(desc)
    if _nt(BS) > 3:
        _desc_atomic_whole(desc, offs, value, OP)
    else:
        p, m = _desc_lanes_ok(ctx, desc, dbase, offs, CANDS, NP)
        if OP == "add":
            tl.atomic_add(p, value, mask=m)
        elif OP == "min":
            tl.atomic_min(p, value, mask=m)
        elif OP == "max":
            tl.atomic_max(p, value, mask=m)
        elif OP == "and":
            tl.atomic_and(p, value, mask=m)
        elif OP == "or":
            tl.atomic_or(p, value, mask=m)
        else:
            tl.atomic_xor(p, value, mask=m)


@triton.jit
def _desc_atomic_whole(desc, offs, value, OP: tl.constexpr):
    if OP == "add":
        desc.atomic_add(offs, value)
    elif OP == "min":
        desc.atomic_min(offs, value)
    elif OP == "max":
        desc.atomic_max(offs, value)
    elif OP == "and":
        desc.atomic_and(offs, value)
    elif OP == "or":
        desc.atomic_or(offs, value)
    else:
        desc.atomic_xor(offs, value)


@triton.jit
def desc_extent(ctx, seq, S: tl.constexpr, desc, dbase, CANDS: tl.constexpr, NP: tl.constexpr, it):
    """A descriptor made on the device: the bytes its shape and strides address from its base,
    against the candidates' views (a `descriptor_extent` finding)."""
    if not R._is_none(dbase):
        BS: tl.constexpr = R._desc_block_shape(desc)
        ES: tl.constexpr = R._desc_es(desc)
        ND: tl.constexpr = _nt(BS)
        b = dbase.to(tl.int64)
        lo = b
        hi = b
        empty = tl.full((), 0, tl.int1)
        for d in tl.static_range(ND):
            ext = R._as_i64(desc.shape[d])
            st = R._as_i64(desc.strides[d]) * ES
            span = (ext - 1) * st
            lo = lo + tl.minimum(span, 0)
            hi = hi + tl.maximum(span, 0)
            empty = empty | (ext <= 0)
        ok = _range_inside(ctx, lo, hi, ES, CANDS, NP)
        if (empty == 0) & (ok == 0):
            _fire(
                ctx, S, tl.full((), 1, tl.int32), tl.full((), 0, tl.int32), lo, lo, hi + ES, seq, it
            )


# --------------------------------------------------------------------------------------------
# nan / inf
# --------------------------------------------------------------------------------------------


@triton.jit
def _nan_inf_bits(x):
    """NaN (1) / +Inf (2) / -Inf (4) bits of a float tensor (any lane)."""
    xf = x.to(tl.float32)
    if _is_block(xf):
        xa = R._any_order(xf)
        cn = tl.sum((xa != xa).to(tl.int32), axis=0)
        cp = tl.sum((xa == _INF).to(tl.int32), axis=0)
        cm = tl.sum((xa == -_INF).to(tl.int32), axis=0)
    else:
        cn = (xf != xf).to(tl.int32)
        cp = (xf == _INF).to(tl.int32)
        cm = (xf == -_INF).to(tl.int32)
    return (cn > 0).to(tl.int32) | ((cp > 0).to(tl.int32) << 1) | ((cm > 0).to(tl.int32) << 2)


@triton.jit
def not_none(x):
    """A read that may be None (a local `mask = None`) as a tuple element: None becomes 0, which
    says nothing of NaN or Inf."""
    if R._is_none(x):
        return 0
    else:
        return x


@triton.jit
def _reads_bits(reads):
    """NaN / +Inf / -Inf bits of what a statement reads: tensors evaluated, compile-time floats
    by their value, everything else (integers, pointers, tuples) nothing."""
    f = tl.full((), 0, tl.int32)
    for i in tl.static_range(_nt(reads)):
        if _fl(reads[i]) == 1:
            f = f | _nan_inf_bits(reads[i])
        else:
            f = f | _cx_bits(reads[i])
    return f


@triton.jit
def _first_lane(fire, x):
    """(count, first lane, its value as float64 bits) of the lanes `fire` of block or scalar x."""
    if _is_block(fire):
        ff = R._flat(fire)
        xf = R._flat(x)
        idx = R._lin_index(ff)
        cnt = _sum32(ff)
        lane = tl.min(R._any_order(tl.where(ff, idx, _BIG)), axis=0)
        v = tl.sum(R._any_order(tl.where(idx == lane, xf.to(tl.float64), 0.0)), axis=0)
    else:
        cnt = fire.to(tl.int32)
        lane = tl.full((), 0, tl.int32)
        v = x.to(tl.float64)
    return cnt, lane, v.to(tl.int64, bitcast=True)


@triton.jit
def _fire_lanes(ctx, S: tl.constexpr, fire, x, seq, it):
    cnt, lane, vb = _first_lane(fire, x)
    _fire(ctx, S, cnt, lane, vb, vb, vb, seq, it)


@triton.jit
def _descend(ctx, S: tl.constexpr, cnt):
    """An instance that holds NaN/Inf a read held already: counted, not an origin."""
    tl.atomic_add(ctx + S + W_AUX, tl.full((), 1, tl.int64), sem="relaxed")
    tl.atomic_add(ctx + S + W_AUX2, cnt.to(tl.int64), sem="relaxed")


@triton.jit
def value(
    ctx,
    seq,
    SN: tl.constexpr,
    SI: tl.constexpr,
    x,
    reads,
    LIT: tl.constexpr,
    LOADED: tl.constexpr,
    act,
    it,
):
    """NaN (slot SN) and Inf (slot SI) origins of value x (0: rule off). reads: what the
    statement reads (a tuple); LIT: the infinities the statement writes itself (bit 1 +Inf, bit 2
    -Inf). LOADED: x is what a load read; `act` (a mask, or None: every lane) the lanes it read
    from memory: only those count, and reads do not (what memory held is not born here)."""
    if _fl(x) == 1:
        xf = x.to(tl.float32)
        if _is_block(xf):
            s = tl.sum(R._any_order(xf), axis=0)
        else:
            s = xf
        if not (tl.abs(s) < _INF):
            live = (xf == xf) | (xf != xf)
            if LOADED:
                if R._is_tensor(act):
                    live = live & act
                rb = tl.full((), 0, tl.int32)
            else:
                rb = _reads_bits(reads) | LIT
            nanm = live & (xf != xf)
            infp = live & (xf == _INF)
            infm = live & (xf == -_INF)
            if SN > 0:
                if _is_block(nanm):
                    cn = _sum32(nanm)
                else:
                    cn = nanm.to(tl.int32)
                if cn > 0:
                    if (rb & 1) == 0:
                        _fire_lanes(ctx, SN, nanm, xf, seq, it)
                    else:
                        _descend(ctx, SN, cn)
            if SI > 0:
                # an infinity of a sign the statement reads or writes itself is not born here
                born = (infp & ((rb & 2) == 0)) | (infm & ((rb & 4) == 0))
                held = infp | infm
                if _is_block(held):
                    ch = _sum32(held)
                    cb = _sum32(born)
                else:
                    ch = held.to(tl.int32)
                    cb = born.to(tl.int32)
                if cb > 0:
                    _fire_lanes(ctx, SI, born, xf, seq, it)
                elif ch > 0:
                    _descend(ctx, SI, ch)


# --------------------------------------------------------------------------------------------
# division, domain, narrowing casts
# --------------------------------------------------------------------------------------------


@triton.jit
def divisor(ctx, seq, SZ: tl.constexpr, ST: tl.constexpr, x, it):
    """A divisor: zeros (slot SZ) and nonzero values within the smallest normal of zero (ST).
    Every lane counts, masked-off ones included."""
    if _fl(x) == 1:
        TINY: tl.constexpr = _min_normal(x)
        xf = x.to(tl.float32)
        z = xf == 0
        t = (xf != 0) & (tl.abs(xf) < TINY)
        if _is_block(xf):
            cz = _sum32(z)
            ct = _sum32(t)
        else:
            cz = z.to(tl.int32)
            ct = t.to(tl.int32)
        if SZ > 0:
            if cz > 0:
                _fire_lanes(ctx, SZ, z, xf, seq, it)
        if ST > 0:
            if ct > 0:
                _fire_lanes(ctx, ST, t, xf, seq, it)
    elif R._is_tensor(x):
        z = x == 0
        if _is_block(z):
            cz = _sum32(z)
        else:
            cz = z.to(tl.int32)
        if SZ > 0:
            if cz > 0:
                _fire_lanes(ctx, SZ, z, x, seq, it)


@triton.jit
def negative(ctx, seq, S: tl.constexpr, x, it):
    """The argument of sqrt/rsqrt/log/log2: negative values (slot S)."""
    if R._is_tensor(x):
        ng = x < 0
        if _is_block(ng):
            c = _sum32(ng)
        else:
            c = ng.to(tl.int32)
        if c > 0:
            _fire_lanes(ctx, S, ng, x, seq, it)


@triton.jit
def cast(
    ctx, seq, SO: tl.constexpr, SF: tl.constexpr, SS: tl.constexpr, x, TARGET: tl.constexpr, it
):
    """The operand of a cast to a narrow float TARGET: finite values that overflow it (SO); at
    least half the nonzero finite values flushed to zero (SF), else at least half of them below
    its smallest normal (SS)."""
    if _fl(x) == 1:
        LIM: tl.constexpr = _cast_limits(TARGET)
        xf = x.to(tl.float32)
        a = tl.abs(xf)
        fin = a < _INF
        nz = fin & (xf != 0)
        ov = fin & (a >= LIM[0])
        fl = nz & (a <= LIM[1])
        sb = nz & (a < LIM[2])
        if _is_block(xf):
            cnz = _sum32(nz)
            cov = _sum32(ov)
            cfl = _sum32(fl)
            csb = _sum32(sb)
        else:
            cnz = nz.to(tl.int32)
            cov = ov.to(tl.int32)
            cfl = fl.to(tl.int32)
            csb = sb.to(tl.int32)
        if SO > 0:
            if cov > 0:
                _fire_lanes(ctx, SO, ov, xf, seq, it)
        if cnz > 0:
            if 2 * cfl >= cnz:
                if SF > 0:
                    _fire_lanes(ctx, SF, fl, xf, seq, it)
            elif 2 * csb >= cnz:
                if SS > 0:
                    _fire_lanes(ctx, SS, sb, xf, seq, it)


def interpreter_helpers() -> dict[str, object]:
    """These helpers as plain Python functions (as _records.interpreter_helpers does for the
    record helpers): on the interpreter a call of an interpreted @jit function re-patches the
    language modules, and a twin calls several per access."""
    import types

    from triton.runtime.interpreter import InterpretedFunction

    rns = R.interpreter_helpers()
    plain_r = types.SimpleNamespace(**rns)
    ns: dict[str, object] = dict(globals())
    ns["R"] = plain_r
    for name, obj in list(ns.items()):
        if isinstance(obj, InterpretedFunction):
            f = obj.fn
            ns[name] = types.FunctionType(f.__code__, ns, f.__name__, f.__defaults__, f.__closure__)
    return ns
