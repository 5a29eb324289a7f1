# SPDX-License-Identifier: Apache-2.0
"""The record helpers' GPU flavour (fast paths and their fallbacks), run on the interpreter.

The GPU flavour summarises a float block assuming every element is finite and falls back to
masked reductions otherwise; takes min/max of floats as order-preserving int32 keys; gets the
first/last active lane of an address block from 16-bit-half keys, assuming the lanes share the
high address half (falls back to 64-bit reductions otherwise); summarises `base + offsets`
accesses from the offsets and shares that summary between accesses; and replays the record of
a stored value observed earlier. Each of these is checked here against NumPy and against the
interpreter flavour, including the inputs that take the fallbacks: NaN/Inf, signed zeros,
subnormals, integer extremes, masks with no active lane, and pointer blocks that straddle a
4 GiB boundary (synthetic addresses; nothing is dereferenced).
"""

from __future__ import annotations

import os
import struct

import numpy as np
import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )

import _refdecode as ref  # noqa: E402
import triton.language as tl  # noqa: E402

import flagprism.debugger as debugger  # noqa: E402
import flagprism.language as fpl  # noqa: E402
from flagprism import _ext  # noqa: E402
from flagprism import _records as R  # noqa: E402

F32 = 12


@triton.jit
def _idx(R0: tl.constexpr, R1: tl.constexpr):
    if R1 == 1:
        i = tl.arange(0, R0)
    else:
        i = tl.arange(0, R0)[:, None] * R1 + tl.arange(0, R1)[None, :]
    return i


@triton.jit
def probe_value(
    ctx, v_ptr, R0: tl.constexpr, R1: tl.constexpr, FUSED: tl.constexpr, EXACT: tl.constexpr
):
    base, slots = R.begin(ctx)
    n = tl.full((), 0, tl.int32)
    x = tl.load(v_ptr + _idx(R0, R1))
    if EXACT:
        if FUSED:
            n = R.value_fused_exact(ctx, base, slots, n, 1, x, 0)
        else:
            n = R.value_np_exact(ctx, base, slots, n, 1, x, 0)
    elif FUSED:
        n = R.value_fused(ctx, base, slots, n, 1, x, 0)
    else:
        n = R.value_np(ctx, base, slots, n, 1, x, 0)


@triton.jit
def probe_addr(ctx, a_ptr, m_ptr, R0: tl.constexpr, R1: tl.constexpr, FUSED: tl.constexpr):
    base, slots = R.begin(ctx)
    i = _idx(R0, R1)
    p = tl.load(a_ptr + i).to(tl.pointer_type(tl.float32))
    m = tl.load(m_ptr + i) != 0
    n = tl.full((), 0, tl.int32)
    if FUSED:
        n = R.addr_fused(ctx, base, slots, n, 1, 2, p, m, 0)
    else:
        n = R.addr_np(ctx, base, slots, n, 1, 2, p, m, 0)


@triton.jit
def probe_affine(
    ctx, f_ptr, d_ptr, o_ptr, m_ptr, R0: tl.constexpr, R1: tl.constexpr, FUSED: tl.constexpr
):
    base, slots = R.begin(ctx)
    i = _idx(R0, R1)
    off = tl.load(o_ptr + i)
    m = tl.load(m_ptr + i) != 0
    pf = f_ptr + off
    pd = d_ptr + off
    n = tl.full((), 0, tl.int32)
    if FUSED:
        n, o = R.addr_fused(ctx, base, slots, n, 1, 2, pf, m, 0, f_ptr, off, None, True)
        n = R.addr_fused(ctx, base, slots, n, 2, 3, pd, m, 0, d_ptr, off, o)
        n = R.addr_fused(ctx, base, slots, n, 3, 2, pf, None, 0, f_ptr, off)
    else:
        n, o = R.addr_np(ctx, base, slots, n, 1, 2, pf, m, 0, f_ptr, off, None, True)
        n = R.addr_np(ctx, base, slots, n, 2, 3, pd, m, 0, d_ptr, off, o)
        n = R.addr_np(ctx, base, slots, n, 3, 2, pf, None, 0, f_ptr, off)


def _buffer(slots: int, nsites: int) -> torch.Tensor:
    buf = torch.zeros(8 + slots * 8, dtype=torch.int64)
    hdr = _ext.debug_buffer_layout(
        programs=1,
        records_per_program=slots,
        dump_records_per_program=0,
        record_capacity=None,
        dump_capacity=None,
        nsites=nsites,
        nparams=0,
        nchecks=0,
        records=True,
        dumps=False,
        suppress=False,
    )[3]
    buf[:8] = torch.tensor(hdr, dtype=torch.int64)
    return buf


def _records(buf: torch.Tensor, nsites: int) -> list[ref.Record]:
    dec = ref.decode(buf.numpy(), nsites)
    assert dec.overflow == 0
    return dec.records


def _run_value(t: torch.Tensor, fused: bool, exact: bool = True) -> ref.Record:
    buf = _buffer(1, 1)
    r0, r1 = (t.shape[0], 1) if t.dim() == 1 else tuple(t.shape)
    probe_value[(1,)](buf, t.contiguous(), R0=r0, R1=r1, FUSED=fused, EXACT=exact)
    (rec,) = _records(buf, 1)
    return rec


def _f(w: int) -> float:
    return struct.unpack("<d", struct.pack("<q", w))[0]


def _float32_bounds(arr: np.ndarray) -> tuple[float, float]:
    """How far apart two float32 sums (and sums of squares) of the finite elements of `arr`, added
    in different orders, may be: n * 2**-24 * sum|x| (and * sum x**2), twice (one per order)."""
    v = arr.astype(np.float64)
    v = v[np.isfinite(v)]
    g = 2 * v.size * 2.0**-24
    return g * float(np.abs(v).sum()), g * float((v * v).sum())


def _same_words(a: ref.Record, b: ref.Record, float32: tuple[float, float] | None = None) -> None:
    """Two flavours of one record: identical up to the rounding order of float64 sums (exact
    sums), or of float32 sums within `float32` (_float32_bounds; the default level-1 sums)."""
    assert a.words[:4] == b.words[:4], (a.words, b.words)
    assert a.words[6:] == b.words[6:], (a.words, b.words)
    for k in (4, 5):
        x, y = _f(a.words[k]), _f(b.words[k])
        if float32 is not None and a.dtype in ref.FLOAT_CODES:
            assert abs(x - y) <= float32[k - 4], (k, x, y, float32)
        elif a.dtype in ref.FLOAT_CODES or k == 5:
            assert x == y or abs(x - y) <= 1e-12 * max(abs(x), abs(y)), (k, x, y)
        else:  # integer sums are exact in both
            assert a.words[k] == b.words[k], (k, x, y)


def _float_cases() -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(7)
    base = rng.standard_normal(1024).astype(np.float32)
    cases = [("normal", base)]
    nan = base.copy()
    nan[[3, 700]] = np.nan
    cases.append(("nan", nan))
    inf = base.copy()
    inf[5], inf[900] = np.inf, -np.inf
    cases.append(("inf", inf))
    allinf = np.full(1024, np.inf, dtype=np.float32)
    allinf[::2] = -np.inf
    cases.append(("all_inf", allinf))
    cases.append(("all_nan", np.full(1024, np.nan, dtype=np.float32)))
    zeros = base.copy()
    zeros[::3] = 0.0
    zeros[1::7] = -0.0
    cases.append(("signed_zeros", zeros))
    cases.append(("all_zero", np.zeros(1024, dtype=np.float32)))
    cases.append(("all_neg_zero", np.full(1024, -0.0, dtype=np.float32)))
    cases.append(("subnormal", (base * np.float32(1e-39)).astype(np.float32)))
    cases.append(("huge", (np.clip(base, -1, 1) * np.float32(3e38)).astype(np.float32)))
    cases.append(("negative", -np.abs(base) - 1))
    cases.append(("cancel", np.concatenate([base[:512], -base[:512]])))
    return cases


@pytest.mark.parametrize("name,arr", _float_cases(), ids=[c[0] for c in _float_cases()])
def test_float32_values(name, arr):
    """Exact sums: both flavours as NumPy's float64; float32 sums (the default): both flavours
    within float32 rounding of each other, counts, min and max identical."""
    t = torch.from_numpy(arr)
    fused = _run_value(t, True)
    ref.check_value(fused, arr)
    _same_words(fused, _run_value(t, False))
    _same_words(_run_value(t, True, False), _run_value(t, False, False), _float32_bounds(arr))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_values(dtype):
    rng = np.random.default_rng(3)
    v = torch.from_numpy((rng.standard_normal((32, 64)) * 50).astype(np.float32)).to(dtype)
    v[0, 0] = 0.0
    v[1, 1] = -0.0
    for special in (None, float("nan"), float("inf")):
        w = v.clone()
        if special is not None:
            w[3, 4] = special
        fused = _run_value(w, True)
        code = 10 if dtype == torch.float16 else 11
        ref.check_value(fused, w.float().numpy(), dtype_code=code)
        _same_words(fused, _run_value(w, False))
        _same_words(
            _run_value(w, True, False),
            _run_value(w, False, False),
            _float32_bounds(w.float().numpy()),
        )


def _int_cases() -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(11)
    i32 = rng.integers(-(2**31), 2**31, size=1024, dtype=np.int64).astype(np.int32)
    i32[:4] = [-(2**31), 2**31 - 1, 0, -1]
    u32 = rng.integers(0, 2**32, size=1024, dtype=np.uint64).astype(np.uint32)
    u32[:3] = [0, 2**32 - 1, 2**31]
    i16 = rng.integers(-(2**15), 2**15, size=(16, 64), dtype=np.int64).astype(np.int16)
    i16[0, :2] = [-(2**15), 2**15 - 1]
    i8 = rng.integers(-128, 128, size=256, dtype=np.int64).astype(np.int8)
    u8 = rng.integers(0, 256, size=256, dtype=np.int64).astype(np.uint8)
    offs = (np.arange(1024) + 5000).astype(np.int32)
    return [
        ("int32", i32),
        ("uint32", u32),
        ("int16", i16),
        ("int8", i8),
        ("uint8", u8),
        ("offsets", offs),
        ("int32_zero", np.zeros(512, dtype=np.int32)),
        ("bool", rng.integers(0, 2, 512).astype(np.bool_)),
    ]


@pytest.mark.parametrize("name,arr", _int_cases(), ids=[c[0] for c in _int_cases()])
def test_integer_values(name, arr):
    t = torch.from_numpy(arr)
    fused = _run_value(t, True)
    if arr.dtype != np.bool_:
        ref.check_value(fused, arr)
    else:
        assert fused.dtype == 1 and fused.zero_count == int((~arr).sum())
    _same_words(fused, _run_value(t, False))


def _run_addr(addrs: np.ndarray, mask: np.ndarray, fused: bool) -> ref.Record:
    buf = _buffer(1, 1)
    r0, r1 = (addrs.shape[0], 1) if addrs.ndim == 1 else addrs.shape
    probe_addr[(1,)](
        buf,
        torch.from_numpy(addrs.astype(np.int64)),
        torch.from_numpy(mask.astype(np.int8)),
        R0=r0,
        R1=r1,
        FUSED=fused,
    )
    (rec,) = _records(buf, 1)
    return rec


def _addr_cases() -> list[tuple[str, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(5)
    lin = 0x7F12_3400_0000 + 4 * np.arange(1024, dtype=np.int64)
    half = np.arange(1024) < 600
    cases = [
        ("contiguous", lin, np.ones(1024, bool)),
        ("prefix", lin, half),
        ("none", lin, np.zeros(1024, bool)),
        ("one", lin, np.arange(1024) == 777),
        ("permuted", rng.permutation(lin), rng.integers(0, 2, 1024).astype(bool)),
    ]
    # lanes 0..511 below a 4 GiB boundary, 512..1023 above it
    straddle = (0x7F00_0000_0000 + (1 << 32) - 2048) + 4 * np.arange(1024, dtype=np.int64)
    cases += [
        ("straddle", straddle, np.ones(1024, bool)),
        ("straddle_masked", straddle, (np.arange(1024) % 3) == 1),
        ("straddle_inactive_high", straddle, np.arange(1024) < 500),
        ("straddle_reversed", straddle[::-1].copy(), np.arange(1024) > 100),
    ]
    two_d = (
        0x7F55_0000_0000 + 4 * (np.arange(32)[:, None] * 4096 + np.arange(64)[None, :])
    ).astype(np.int64)
    cases.append(("two_d", two_d, (np.arange(32)[:, None] < 20) & (np.arange(64)[None, :] < 50)))
    return cases


@pytest.mark.parametrize("name,addrs,mask", _addr_cases(), ids=[c[0] for c in _addr_cases()])
def test_address_summaries(name, addrs, mask):
    fused = _run_addr(addrs, mask, True)
    ref.check_addr(fused, 2, 0, addrs // 4, mask, 4, F32)
    assert fused.words == _run_addr(addrs, mask, False).words


@pytest.mark.parametrize("shape", [(1024,), (16, 64)])
def test_affine_address_summaries(shape):
    rng = np.random.default_rng(9)
    n = int(np.prod(shape))
    cases = [
        np.arange(n).reshape(shape) + 17,
        rng.permutation(n).reshape(shape) - 300,
        rng.integers(-(2**28), 2**28, size=shape),
    ]
    masks = [
        np.ones(shape, bool),
        rng.integers(0, 2, size=shape).astype(bool),
        np.zeros(shape, bool),
    ]
    f = torch.zeros(4, dtype=torch.float32)
    d = torch.zeros(4, dtype=torch.int64)
    r0, r1 = (shape[0], 1) if len(shape) == 1 else shape
    for off in cases:
        for m in masks:
            for fused in (True, False):
                buf = _buffer(3, 3)
                probe_affine[(1,)](
                    buf,
                    f,
                    d,
                    torch.from_numpy(off.astype(np.int32)),
                    torch.from_numpy(m.astype(np.int8)),
                    R0=r0,
                    R1=r1,
                    FUSED=fused,
                )
                a, b, c = _records(buf, 3)
                ref.check_addr(a, 2, f.data_ptr(), off, m, 4, F32)
                ref.check_addr(b, 3, d.data_ptr(), off, m, 8, 5)
                ref.check_addr(c, 2, f.data_ptr(), off, np.ones(shape, bool), 4, F32)


@triton.jit
def replay_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    fpl.collect_start()
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask)
    w = v * 2
    tl.store(out_ptr + offs, w, mask=mask)
    for i in range(2):
        tl.store(out_ptr + offs, w, mask=mask)
        w = w + 1
    if n > 10:
        w = w * 3
    tl.store(out_ptr + offs, w, mask=mask)
    fpl.collect_end()


def test_store_values_replay_only_unchanged_names(tmp_path):
    """A stored name recorded earlier and unchanged since is replayed (same words); after a
    reassignment in a loop or a branch it is summarised afresh, and every record is right."""
    from flagprism import _rewrite

    text = _rewrite.rewrite(replay_kernel, 1, 1).text
    assert text.count("False, __fp_w") == 1  # only the first store replays
    ref.install(debugger, str(tmp_path / "fp_debug"))
    try:
        n, block = 50, 64
        x = torch.randn(n)
        x[3] = float("nan")
        out = torch.empty(n)
        debugger.activate(level=1, addr_level=1)
        replay_kernel[(1,)](x, out, n, BLOCK=block)
        (run,) = debugger.take_exported_runs()
        dec = ref.decoded(run)
        names = {s["id"]: (s["kind"], s["name"]) for s in ref.site_table(run)["sites"]}
        stores = [r for r in dec.records if names[r.site] == ("value", "w") and r.slot > 0]
        offs = np.arange(block)
        mask = offs < n
        v = np.where(mask, x.numpy()[np.minimum(offs, n - 1)], 0).astype(np.float32)
        w0 = v * 2
        want = [w0, w0, w0, w0 + 1, w0 + 1, w0 + 2, (w0 + 2) * 3, (w0 + 2) * 3]
        # records of w: assignment, store (replay), [store, assignment] x 2, assignment in the
        # if, final store
        assert len(stores) == len(want)
        for r, wv in zip(stores, want):
            ref.check_value(r, wv.astype(np.float32))
        assert stores[1].words[2:] == stores[0].words[2:]
    finally:
        debugger.deactivate()
        debugger.reset_config()
        debugger.clear_exported_runs()
