# SPDX-License-Identifier: Apache-2.0
"""The Debugger on real kernels (Triton interpreter): every summary checked against NumPy."""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )

import _refdecode as ref  # noqa: E402
from kernels import control, layernorm, matmul, softmax, tuned, vector_add  # noqa: E402

import flagprism.debugger as debugger  # noqa: E402

# Loops with runtime bounds: skipped where a row of the known-bad table stops them
# (flagprism.compat; conftest.py turns the marker into a skip with the row's words).
RUNTIME_LOOPS = pytest.mark.compat("runtime-loops")

F32 = 12
I32 = 4
BOOL = 1


def _one_run(dbg):
    runs = dbg.take_exported_runs()
    assert len(runs) == 1, runs
    return runs[0], ref.decoded(runs[0])


def _sites(run):
    return run["paths"]["_decoded"], {s["id"]: s for s in _site_table(run)["sites"]}


def _site_table(run):
    return ref.site_table(run)


def test_vector_add(dbg):
    n, block = 1000, 256
    x = torch.randn(n)
    y = torch.randn(n)
    x[5] = float("nan")
    y[7] = float("inf")
    x[9] = 0.0
    y[9] = 0.0
    out = torch.empty(n)
    dbg.activate(level=1, addr_level=1)
    grid = (triton.cdiv(n, block),)
    vector_add.add_kernel[grid](x, y, out, n, BLOCK=block)
    np.testing.assert_array_equal(out.numpy(), (x + y).numpy())
    run, dec = _one_run(dbg)
    assert run["kernel"] == "add_kernel" and run["backend"] == "interpreter"
    assert run["grid"] == [4, 1, 1] and run["overflow_count"] == 0
    assert run["slots_per_program"] == 10
    assert len(dec.records) == 4 * 10
    xs, ys = x.numpy(), y.numpy()
    for p in range(4):
        recs = [r for r in dec.records if r.program == p]
        assert [r.site for r in recs] == list(range(1, 11))
        offs = p * block + np.arange(block)
        mask = offs < n
        xv = np.where(mask, xs[np.minimum(offs, n - 1)], 0).astype(np.float32)
        yv = np.where(mask, ys[np.minimum(offs, n - 1)], 0).astype(np.float32)
        ref.check_value(recs[0], np.int32(p))
        ref.check_value(recs[1], offs.astype(np.int32))
        ref.check_value(recs[2], mask)
        ref.check_addr(recs[3], 2, x.data_ptr(), offs, mask, 4, F32)
        ref.check_value(recs[4], xv)
        ref.check_addr(recs[5], 2, y.data_ptr(), offs, mask, 4, F32)
        ref.check_value(recs[6], yv)
        ref.check_value(recs[7], xv + yv)
        ref.check_addr(recs[8], 3, out.data_ptr(), offs, mask, 4, F32)
        ref.check_value(recs[9], xv + yv)


def test_softmax(dbg):
    rows, cols, block = 5, 100, 128
    x = torch.randn(rows, cols) * 3
    out = torch.empty_like(x)
    dbg.activate()
    softmax.softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK=block)
    np.testing.assert_allclose(out.numpy(), torch.softmax(x, dim=1).numpy(), rtol=1e-5, atol=1e-6)
    run, dec = _one_run(dbg)
    xs = x.numpy()
    for r in range(rows):
        recs = [q for q in dec.records if q.program == r]
        offs = np.arange(block)
        mask = offs < cols
        xv = np.where(mask, xs[r][np.minimum(offs, cols - 1)], -np.inf).astype(np.float32)
        ref.check_value(recs[0], offs.astype(np.int32))
        ref.check_value(recs[1], mask)
        ref.check_addr(recs[2], 2, x.data_ptr(), r * cols + offs, mask, 4, F32)
        ref.check_value(recs[3], xv)
        assert recs[3].inf_count == block - cols
        x_max = xv.max()
        ref.check_value(recs[4], np.float32(x_max))
        num = np.exp(xv - x_max).astype(np.float32)
        ref.check_value(recs[5], num, rel=1e-5)
        den = num.sum(dtype=np.float32)
        ref.check_value(recs[6], np.float32(den), rel=1e-5)
        ref.check_value(recs[7], num / den, rel=1e-5)
        ref.check_addr(recs[8], 3, out.data_ptr(), r * cols + offs, mask, 4, F32)


@RUNTIME_LOOPS
def test_layernorm_loops(dbg):
    rows, n, block = 3, 300, 128
    x = torch.randn(rows, n) + 2
    w = torch.rand(n)
    b = torch.randn(n)
    y = torch.empty_like(x)
    dbg.activate()
    layernorm.layernorm_kernel[(rows,)](x, y, w, b, x.stride(0), n, 1e-5, BLOCK=block)
    np.testing.assert_allclose(
        y.numpy(), torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5).numpy(), rtol=1e-4, atol=1e-4
    )
    run, dec = _one_run(dbg)
    assert run["overflow_count"] == 0
    table = {s["id"]: s for s in _site_table(run)["sites"]}
    stmts = {s["id"]: s for s in _site_table(run)["statements"]}
    trips = -(-n // block)
    # slots: 1 + 3 per first-loop iteration (cols, load, a, acc) ... computed from the table
    in_loop = [s for s in table.values() if stmts[s["statement"]]["loop_depth"] == 1]
    outside = [s for s in table.values() if stmts[s["statement"]]["loop_depth"] == 0]
    assert run["slots_per_program"] == len(outside) + trips * len(in_loop)
    xs = x.numpy()
    for r in range(rows):
        recs = [q for q in dec.records if q.program == r]
        assert len(recs) == run["slots_per_program"]
        # the first loop: `a` records, one per iteration, in order
        a_site = next(
            s["id"]
            for s in table.values()
            if s["name"] == "a"
            and stmts[s["statement"]]["line"]
            == min(st["line"] for st in stmts.values() if st["source"].startswith("a = "))
        )
        a_recs = [q for q in recs if q.site == a_site]
        assert [q.execution for q in a_recs] == list(range(trips))
        for it, q in enumerate(a_recs):
            cols = it * block + np.arange(block)
            ref.check_value(
                q, np.where(cols < n, xs[r][np.minimum(cols, n - 1)], 0).astype(np.float32)
            )
        mean_site = next(s["id"] for s in table.values() if s["name"] == "mean")
        (mrec,) = [q for q in recs if q.site == mean_site]
        assert abs(mrec.mean - xs[r].astype(np.float64).mean()) < 1e-5


@RUNTIME_LOOPS
def test_matmul_runtime_k(dbg):
    M, N, K = 40, 24, 48
    BM, BN, BK = 32, 16, 16
    a = torch.randn(M, K)
    b = torch.randn(K, N)
    c = torch.empty(M, N)
    dbg.activate()
    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
    matmul.matmul_kernel[grid](
        a,
        b,
        c,
        M,
        N,
        K,
        a.stride(0),
        a.stride(1),
        b.stride(0),
        b.stride(1),
        c.stride(0),
        c.stride(1),
        BLOCK_M=BM,
        BLOCK_N=BN,
        BLOCK_K=BK,
    )
    np.testing.assert_allclose(c.numpy(), (a @ b).numpy(), rtol=1e-4, atol=1e-4)
    run, dec = _one_run(dbg)
    assert run["programs"] == 4 and run["overflow_count"] == 0
    st = _site_table(run)
    depth = {s["id"]: s["loop_depth"] for s in st["statements"]}
    (acc_site,) = [
        s["id"] for s in st["sites"] if s["name"] == "acc" and depth[s["statement"]] == 1
    ]
    an, bn = a.numpy(), b.numpy()
    for pm in range(grid[0]):
        for pn in range(grid[1]):
            p = pm + grid[0] * pn
            recs = [q for q in dec.records if q.program == p and q.site == acc_site]
            assert len(recs) == K // BK
            rm = pm * BM + np.arange(BM)
            rn = pn * BN + np.arange(BN)
            acc = np.zeros((BM, BN), np.float64)
            for it, q in enumerate(recs):
                ks = it * BK + np.arange(BK)
                at = np.where(
                    (rm[:, None] < M) & (ks[None, :] < K), an[np.minimum(rm, M - 1)][:, ks], 0
                )
                bt = np.where(
                    (ks[:, None] < K) & (rn[None, :] < N), bn[ks][:, np.minimum(rn, N - 1)], 0
                )
                acc += at.astype(np.float64) @ bt.astype(np.float64)
                assert q.shape == [BM, BN] and q.nan_count == 0 and q.execution == it
                assert abs(q.mean - acc.mean()) <= 1e-4 * max(1.0, abs(acc).mean())
            # the store's addresses: 2-D lanes, masked on the edges
            (st,) = [q for q in dec.records if q.program == p and q.kind == 3]
            offs = rm[:, None] * N + rn[None, :]
            ref.check_addr(st, 3, c.data_ptr(), offs, (rm[:, None] < M) & (rn[None, :] < N), 4, F32)


def test_matmul_static_k(dbg):
    M, N, K = 20, 16, 32
    a = torch.randn(M, K)
    b = torch.randn(K, N)
    c = torch.empty(M, N)
    dbg.activate()
    matmul.matmul_static_kernel[(1, 1)](a, b, c, M, N, K=K, BLOCK_M=32, BLOCK_N=16, BLOCK_K=16)
    np.testing.assert_allclose(c.numpy(), (a @ b).numpy(), rtol=1e-4, atol=1e-4)
    run, dec = _one_run(dbg)
    loads = [q for q in dec.records if q.kind == 2]
    assert len(loads) == 4  # two loads per unrolled iteration
    rm = np.arange(32)
    for it in range(2):
        ks = it * 16 + np.arange(16)
        ref.check_addr(
            loads[2 * it], 2, a.data_ptr(), rm[:, None] * K + ks[None, :], rm[:, None] < M, 4, F32
        )


def test_control_flow_and_helper(dbg):
    n, block, steps = 200, 64, 3
    x = torch.randn(n)
    out = torch.zeros(n + 4)
    dbg.activate()
    control.control_kernel[(4,)](x, out, n, steps, BLOCK=block, USE_HELPER=True)
    run, dec = _one_run(dbg)
    table = {s["id"]: s for s in _site_table(run)["sites"]}
    xs = x.numpy()
    for p in range(4):
        offs = p * block + np.arange(block)
        mask = offs < n
        v = np.where(mask, xs[np.minimum(offs, n - 1)], 0).astype(np.float32)
        recs = [q for q in dec.records if q.program == p]
        names = [table[q.site]["name"] for q in recs]
        # load, v, i, then (v, i) per while iteration, then the if branch, the helper's own
        # statement (w, inside scale_helper), the call's result, total, store
        assert names[:3] == ["x_ptr + offs", "v", "i"]
        assert names[3 : 3 + 2 * steps] == ["v", "i"] * steps
        for k in range(steps):
            v = (v * np.float32(0.5)).astype(np.float32)
            ref.check_value(recs[3 + 2 * k], v)
            ref.check_value(recs[4 + 2 * k], np.int32(k + 1))
        v = v + np.float32(100.0) if p % 2 == 0 else v - np.float32(100.0)
        branch = recs[3 + 2 * steps]
        ref.check_value(branch, v.astype(np.float32))
        w = (v * np.float32(2.0)).astype(np.float32)
        assert names[4 + 2 * steps] == "w"
        ref.check_value(recs[4 + 2 * steps], w)
        v = (w + np.float32(1.0)).astype(np.float32)
        ref.check_value(recs[5 + 2 * steps], v)
        total = np.where(mask, v, 0).sum(dtype=np.float32)
        assert abs(recs[6 + 2 * steps].mean - total) <= 1e-3 * abs(total)
        np.testing.assert_allclose(out.numpy()[offs[mask]], v[mask], rtol=1e-6)
    # execution indices within a program follow the loop
    v_site = next(s["id"] for s in table.values() if s["name"] == "v" and s["id"] > 3)
    assert [q.execution for q in dec.records if q.program == 0 and q.site == v_site] == list(
        range(steps)
    )


def test_two_regions_and_level_overrides(dbg):
    n, block = 100, 64
    x = torch.randn(n)
    out = torch.zeros(n)
    dbg.activate(level=1, addr_level=1)
    control.two_regions_kernel[(2,)](x, out, n, BLOCK=block)
    np.testing.assert_allclose(out.numpy(), x.numpy() * 3 + 1, rtol=1e-6)
    run, dec = _one_run(dbg)
    st = _site_table(run)
    kinds = [(s["kind"], s["name"]) for s in st["sites"]]
    # region 1: level 2, no addresses; region 2: level 1 with addresses (from activate)
    assert kinds == [("value", "x"), ("value", "z"), ("store", "out_ptr + offs"), ("value", "z")]
    assert st["level"] == 2
    xs = x.numpy()
    for p in range(2):
        offs = p * block + np.arange(block)
        xv = np.where(offs < n, xs[np.minimum(offs, n - 1)], 0).astype(np.float32)
        recs = [q for q in dec.records if q.program == p]
        ref.check_value(recs[0], xv)
        assert recs[0].dump is not None
        np.testing.assert_array_equal(recs[0].dump, xv.astype(np.float64))
        assert recs[1].dump is None
        ref.check_value(recs[1], (xv * np.float32(3.0) + np.float32(1.0)).astype(np.float32))


def test_specialised_and_constexpr_args(dbg):
    n, block = 100, 64
    x = torch.randn(n)
    out = torch.zeros(n)
    dbg.activate()
    control.specialised_kernel[(2,)](x, out, n, 1, ALPHA=2.5, BLOCK=block)
    np.testing.assert_allclose(out.numpy(), x.numpy() * 2.5, rtol=1e-6)
    run, dec = _one_run(dbg)
    xs = x.numpy()
    offs = np.arange(block)
    ref.check_addr(dec.records[1], 2, x.data_ptr(), offs, offs < n, 4, F32)
    args = {a["name"]: a for a in _launch_args(run)}
    assert args["ALPHA"]["kind"] == "constexpr" and args["ALPHA"]["value"] == 2.5
    assert args["stride"]["kind"] == "scalar" and args["stride"]["value"] == 1
    assert args["x_ptr"]["kind"] == "tensor" and args["x_ptr"]["data_ptr"] == x.data_ptr()
    del xs


def _launch_args(run):
    return ref.launch_info(run)["args"]


@RUNTIME_LOOPS
def test_masked_loop_fully_masked_iterations(dbg):
    n, block, iters = 100, 32, 4
    x = torch.randn(n)
    out = torch.zeros(2 * block)
    dbg.activate()
    control.masked_loop_kernel[(2,)](x, out, n, ITERS=iters, BLOCK=block)
    run, dec = _one_run(dbg)
    loads = [q for q in dec.records if q.kind == 2]
    assert len(loads) == 2 * iters
    for q in loads:
        offs = (q.program * iters + q.execution) * block + np.arange(block)
        ref.check_addr(q, 2, x.data_ptr(), offs, offs < n, 4, F32)
    empty = [q for q in loads if q.active == 0]
    assert empty and all(q.first_addr is None and q.span == 0 for q in empty)


def test_autotune_records_every_benchmarked_config_and_the_chosen_one(dbg):
    n = 300
    x = torch.randn(n)
    out = torch.zeros(n)
    dbg.activate()
    dbg.reset_summary()
    tuned.BENCH_CALLS.clear()
    tuned.tuned_scale[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
    np.testing.assert_allclose(out.numpy(), x.numpy() * 2, rtol=1e-6)
    assert len(tuned.BENCH_CALLS) == 2  # both configs were benchmarked
    runs = dbg.take_exported_runs()
    # the first launch of each benchmarked config, then the chosen one
    assert len(runs) == 3, runs
    roles = [ref.launch_info(r)["autotune"] for r in runs]
    assert [r["role"] for r in roles] == ["benchmark", "benchmark", "chosen"]
    assert {r["config"] for r in roles[:2]} == {str(c) for c in tuned.tuned_scale.configs}
    block = tuned.tuned_scale.best_config.kwargs["BLOCK"]
    assert roles[2]["config"] == str(tuned.tuned_scale.best_config)
    for r, blk in zip(runs, (64, 128, block)):
        assert r["programs"] == triton.cdiv(n, blk)
        assert ref.decoded(r).records[0].shape == [blk]
    assert ref.launch_info(runs[2])["launch_path"] == "triton.autotune"
    # a second call is cached: only the chosen config runs, and is observed
    tuned.tuned_scale[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
    (again,) = dbg.take_exported_runs()
    assert ref.launch_info(again)["autotune"]["role"] == "chosen"
    tot = dbg.summary()["totals"]
    assert tot["launches"] == 4 and tot["by_status"]["instrumented"] == 4


def test_heuristics(dbg):
    for n in (256, 300):
        x = torch.randn(n)
        out = torch.zeros(n)
        dbg.activate()
        tuned.heur_scale[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
        np.testing.assert_allclose(out.numpy(), x.numpy() + 1, rtol=1e-6)
        run, dec = _one_run(dbg)
        block = 64 if n <= 256 else 128
        load = dec.records[1]
        offs = np.arange(block)
        ref.check_addr(load, 2, x.data_ptr(), offs, offs < n, 4, F32)


def test_several_kernels_many_launches(dbg):
    dbg.activate()
    x = torch.randn(64)
    y = torch.randn(64)
    out = torch.empty(64)
    for i in range(6):
        vector_add.add_kernel[(1,)](x, y, out, 64, BLOCK=64)
        softmax.softmax_kernel[(1,)](out, x.view(1, 64), 64, 64, 64, BLOCK=64)
    runs = dbg.take_exported_runs()
    assert [r["kernel"] for r in runs] == ["add_kernel", "softmax_kernel"] * 6
    assert [r["run_index"] for r in runs] == sorted(r["run_index"] for r in runs)
    assert len({r["json"] for r in runs}) == 12
    assert dbg.take_exported_runs() == []


def test_dtypes(dbg):
    from kernels import extra

    block = 64
    rng = np.random.default_rng(0)
    i8 = torch.from_numpy(rng.integers(-128, 127, block, dtype=np.int8))
    u8 = torch.from_numpy(rng.integers(0, 255, block, dtype=np.uint8))
    i64 = torch.from_numpy(rng.integers(-(2**40), 2**40, block, dtype=np.int64))
    u64 = torch.from_numpy(rng.integers(0, 2**40, block, dtype=np.int64)).to(torch.uint64)
    f64 = torch.from_numpy(rng.standard_normal(block) * 1e3)
    f64[3] = 0.0
    out = torch.zeros(block)
    dbg.activate()
    extra.dtypes_kernel[(1,)](i8, u8, i64, u64, f64, out, BLOCK=block)
    run, dec = _one_run(dbg)
    st = _site_table(run)
    by_name = {}
    for r in dec.records:
        name = next(s["name"] for s in st["sites"] if s["id"] == r.site)
        if r.kind == 1:
            by_name[name] = r
    ref.check_value(by_name["a"], i8.numpy())
    ref.check_value(by_name["b"], u8.numpy())
    ref.check_value(by_name["c"], i64.numpy())
    ref.check_value(by_name["d"], u64.numpy().astype(np.uint64), dtype_code=9)
    ref.check_value(by_name["e"], f64.numpy())
    ref.check_value(by_name["h"], f64.numpy().astype(np.float16))
    assert by_name["g"].dtype == 11 and by_name["g"].zero_count == 1
    p = by_name["p"]
    assert p.dtype == 16 and p.min == out.data_ptr() and p.max == out.data_ptr() + 4 * (block - 1)


@pytest.mark.compat("block-pointers")  # tl.make_block_ptr (removed in Triton 3.9)
def test_block_pointer_addresses(dbg):
    """A block pointer the rewriter follows: its access is summarised in closed form (exact
    addresses of the 32 x 32 block of the 64 x 64 tensor)."""
    from kernels import extra

    a = torch.randn(64, 64)
    out = torch.zeros(32 * 32)
    dbg.activate()
    extra.block_ptr_kernel[(1,)](a, out, 64, 64, BM=32, BN=32)
    np.testing.assert_array_equal(out.numpy().reshape(32, 32), a.numpy()[:32, :32])
    run, dec = _one_run(dbg)
    (load,) = [r for r in dec.records if r.kind == 2]
    assert (
        load.status == 0 and load.active == 32 * 32 and load.shape == [32, 32] and load.dtype == F32
    )
    base = a.data_ptr()
    assert (load.first_addr, load.last_addr) == (base, base + (31 * 64 + 31) * 4)
    assert (load.min_addr, load.max_addr) == (base, base + (31 * 64 + 31) * 4)
    t = next(r for r in dec.records if r.kind == 1 and r.shape == [32, 32])
    ref.check_value(t, a.numpy()[:32, :32])


def test_four_dimensional_values(dbg):
    from kernels import extra

    x = torch.randn(256)
    out = torch.zeros(256)
    dbg.activate(level=2, addr_level=1)
    extra.nd_kernel[(1,)](x, out, A=2, B=4, C=8, D=4)
    np.testing.assert_allclose(out.numpy(), x.numpy() * 2)
    run, dec = _one_run(dbg)
    nd = [r for r in dec.records if r.kind == 1 and r.ndim == 4]
    assert len(nd) == 2
    for r, want in zip(nd, (x.numpy(), x.numpy() * 2)):
        assert r.flags & 1 and r.shape == [256]
        ref.check_value(r, want.reshape(2, 4, 8, 4))
        np.testing.assert_array_equal(r.dump.ravel(), want.astype(np.float64))


def test_fused_reducers_on_the_interpreter(dbg, monkeypatch):
    """The GPU flavour of the record helpers (one tuple reduction) gives the same records."""
    monkeypatch.setenv("FLAGPRISM_DBG_REDUCE", "fused")
    M, N, K = 20, 16, 32
    a = torch.randn(M, K)
    b = torch.randn(K, N)
    c = torch.empty(M, N)
    a[0, 0] = float("nan")
    dbg.activate(level=1, addr_level=1)
    matmul.matmul_static_kernel[(1, 1)](a, b, c, M, N, K=K, BLOCK_M=32, BLOCK_N=16, BLOCK_K=16)
    run, dec = _one_run(dbg)
    loads = [q for q in dec.records if q.kind == 2]
    rm = np.arange(32)
    an = a.numpy()
    for it in range(2):
        ks = it * 16 + np.arange(16)
        ref.check_addr(
            loads[2 * it], 2, a.data_ptr(), rm[:, None] * K + ks[None, :], rm[:, None] < M, 4, F32
        )
        vals = [q for q in dec.records if q.kind == 1 and q.slot == loads[2 * it].slot + 1][0]
        want = np.where(rm[:, None] < M, an[np.minimum(rm, M - 1)][:, ks], 0).astype(np.float32)
        ref.check_value(vals, want)
    assert any(q.nan_count > 0 for q in dec.records if q.kind == 1)


def test_jit_helpers_on_the_interpreter(dbg, monkeypatch):
    """The @jit record helpers themselves (not their unwrapped Python form) on the interpreter."""
    monkeypatch.setenv("FLAGPRISM_DBG_REDUCE", "np-jit")
    n, block = 100, 64
    x = torch.randn(n)
    y = torch.randn(n)
    out = torch.empty(n)
    dbg.activate(level=2, addr_level=2)
    vector_add.add_kernel[(2,)](x, y, out, n, BLOCK=block)
    run, dec = _one_run(dbg)
    xs = x.numpy()
    for p in range(2):
        recs = [r for r in dec.records if r.program == p]
        offs = p * block + np.arange(block)
        mask = offs < n
        ref.check_addr(recs[3], 2, x.data_ptr(), offs, mask, 4, F32)
        xv = np.where(mask, xs[np.minimum(offs, n - 1)], 0).astype(np.float32)
        ref.check_value(recs[4], xv)
        np.testing.assert_array_equal(recs[4].dump, xv.astype(np.float64))


@pytest.mark.skipif(
    not debugger.is_available(), reason="the native report writer (flagprism._ext) is not built"
)
def test_report_json_matches_records(dbg):
    """The C decoder's report says what the records say (docs/formats/debugger-report-schema.md)."""
    n, block = 1000, 256
    x = torch.randn(n)
    x[3] = float("nan")
    out = torch.empty(n)
    dbg.activate(level=1, addr_level=1)
    vector_add.add_kernel[(4,)](x, x, out, n, BLOCK=block)
    run, dec = _one_run(dbg)
    rep = run["report"]
    assert rep["schema_version"] == 1 and rep["complete"] and rep["overflow_count"] == 0
    assert rep["kernel"]["name"] == "add_kernel" and rep["kernel"]["grid"] == [4, 1, 1]
    assert rep["record_count"] == len(dec.records) == 40
    table = _site_table(run)
    assert [s["line"] for s in rep["statements"]] == [s["line"] for s in table["statements"]]
    by_key = {(r.site, r.program, r.execution): r for r in dec.records}
    seen = 0
    for st in rep["statements"]:
        for res in st["results"]:
            for inst in res["instances"]:
                r = by_key[(res["site"], inst["program"][0], inst["execution"])]
                sm = inst["summary"]
                assert sm["element_count"] == r.numel and sm["nan_count"] == r.nan_count
                assert sm["zero_count"] == r.zero_count and sm["inf_count"] == r.inf_count
                assert sm["min"] == r.min and sm["max"] == r.max
                if r.mean is not None:
                    assert abs(sm["mean"] - r.mean) <= 1e-12 * max(1.0, abs(r.mean))
                seen += 1
        for acc in st["memory"]:
            for inst in acc["instances"]:
                r = by_key[(acc["site"], inst["program"][0], inst["execution"])]
                a = inst["address_summary"]
                assert a["active_lane_count"] == r.active and a["status"] == "complete"
                assert a["first_addr"] == r.first_addr and a["last_addr"] == r.last_addr
                assert a["min_addr"] == r.min_addr and a["max_addr"] == r.max_addr
                assert a["address_span_bytes"] == r.span
                seen += 1
    assert seen == 40
    assert os.path.exists(run["txt"]) and os.path.exists(run["op_log_txt"])
