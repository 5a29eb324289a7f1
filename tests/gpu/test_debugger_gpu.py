# SPDX-License-Identifier: Apache-2.0
"""The Debugger on a CUDA GPU: the device writes the same records the interpreter writes.

Every summary is checked against NumPy (addresses too: they are the tensors' device addresses),
and for kernels the Triton interpreter can run on this machine the decoded records are compared
with those of an interpreted run of the same kernel on the same inputs (child process), word by
word except the addresses and float64 sums (rounding order differs: 1e-12 relative).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

HERE = Path(__file__).resolve().parent
PYTESTS = HERE.parent / "python"
sys.path.insert(0, str(PYTESTS))

import _refdecode as ref  # noqa: E402

pytestmark = pytest.mark.gpu

if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU (and TRITON_INTERPRET unset)", allow_module_level=True)

import flagprism.debugger as debugger  # noqa: E402
from flagprism import _regs  # noqa: E402

from kernels import control, layernorm, matmul, softmax, vector_add  # noqa: E402

F32 = 12


@pytest.fixture
def dbg(tmp_path):
    yield from ref.installed(debugger, str(tmp_path / "fp_debug"))


def _one(dbg):
    runs = dbg.take_exported_runs()
    assert len(runs) == 1
    return runs[0], ref.decoded(runs[0])


def test_vector_add_gpu(dbg):
    n, block = (1 << 20) + 77, 1024
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    x[5] = float("nan")
    y[7] = float("inf")
    out = torch.empty(n, device="cuda")
    dbg.activate(level=1, addr_level=1)
    grid = (triton.cdiv(n, block),)
    vector_add.add_kernel[grid](x, y, out, n, BLOCK=block)
    torch.testing.assert_close(out, x + y, equal_nan=True)
    run, dec = _one(dbg)
    assert run["backend"] == "cuda" and run["overflow_count"] == 0
    assert len(dec.records) == grid[0] * 10
    xs, ys = x.cpu().numpy(), y.cpu().numpy()
    for p in (0, 1, grid[0] - 1):
        recs = [r for r in dec.records if r.program == p]
        offs = p * block + np.arange(block)
        mask = offs < n
        xv = np.where(mask, xs[np.minimum(offs, n - 1)], 0).astype(np.float32)
        yv = np.where(mask, ys[np.minimum(offs, n - 1)], 0).astype(np.float32)
        ref.check_value(recs[0], np.int32(p))
        ref.check_value(recs[1], offs.astype(np.int32))
        ref.check_value(recs[2], mask)
        ref.check_addr(recs[3], 2, x.data_ptr(), offs, mask, 4, F32)
        if mask.all():
            ref.check_value(recs[4], xv)
            ref.check_value(recs[6], yv)
            ref.check_value(recs[7], xv + yv)
        ref.check_addr(recs[8], 3, out.data_ptr(), offs, mask, 4, F32)
    assert run["report"] is not None


def test_vector_add_fast_paths_and_fallbacks_gpu(dbg):
    """Per program, the float summaries take the all-finite fast path or the NaN/Inf fallback
    independently (program 0: x fast, y fallback; program 1: x fallback, y fast); the address
    records of x, y and out share one offsets summary; the store's value record replays out's."""
    n, block = 1 << 16, 1024
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    y[7] = float("inf")
    x[1500] = float("nan")
    out = torch.empty(n, device="cuda")
    dbg.activate(level=1, addr_level=1)
    grid = (triton.cdiv(n, block),)
    vector_add.add_kernel[grid](x, y, out, n, BLOCK=block)
    run, dec = _one(dbg)
    assert run["overflow_count"] == 0 and len(dec.records) == grid[0] * 10
    xs, ys = x.cpu().numpy(), y.cpu().numpy()
    for p in (0, 1, 2, grid[0] - 1):
        recs = [r for r in dec.records if r.program == p]
        offs = p * block + np.arange(block)
        xv, yv = xs[offs], ys[offs]
        ref.check_value(recs[1], offs.astype(np.int32))
        for k, base in ((3, x.data_ptr()), (5, y.data_ptr())):
            ref.check_addr(recs[k], 2, base, offs, np.ones(block, bool), 4, F32)
        ref.check_addr(recs[8], 3, out.data_ptr(), offs, np.ones(block, bool), 4, F32)
        ref.check_value(recs[4], xv)
        ref.check_value(recs[6], yv)
        ref.check_value(recs[7], xv + yv)
        ref.check_value(recs[9], xv + yv)
        assert recs[9].words[2:] == recs[7].words[2:]


@pytest.mark.parametrize("twin_warps", ["auto", "same"])
def test_closed_form_records_gpu(dbg, twin_warps):
    """Index arithmetic recorded in closed form (docs/formats/record-format.md, "Closed-form records"):
    the C decoder's report and the reference decoder agree with NumPy, int32 wrap-around and
    int64 sequences included, with 1024-lane blocks over 1 warp (the twin's "auto" warps) and
    over the kernel's 4 warps ("same")."""
    from _closedcheck import run_forms

    dbg.configure(output_dir=dbg.get_config()["output_dir"], twin_num_warps=twin_warps)
    run_forms(dbg, "cuda", n=1000, base=(1 << 31) - 40, s64=(1 << 40) + 3, block=1024, programs=4)
    run_forms(dbg, "cuda", n=0, base=-20, s64=-(1 << 45), block=256)


def test_float_min_max_signed_zero_gpu(dbg):
    """The float fast path's min/max (IEEE 754-2019 minimum/maximum): -0.0 below +0.0, exact
    extremes of a finite block."""
    n, block = 4096, 1024
    x = torch.randn(n, device="cuda")
    x[0:1024] = 0.0
    x[700] = -0.0
    x[2048 + 5] = -0.0
    out = torch.empty(n, device="cuda")
    dbg.activate(level=1, addr_level=1)
    vector_add.add_kernel[(n // block,)](x, x, out, n, BLOCK=block)
    run, dec = _one(dbg)
    xs = x.cpu().numpy()
    for p in range(n // block):
        rec = next(r for r in dec.records if r.program == p and r.site == 5)  # x
        blk = xs[p * block:(p + 1) * block]
        ref.check_value(rec, blk)
        if p == 0:
            assert rec.min == 0.0 and np.signbit(rec.min) and rec.max == 0.0 and not np.signbit(rec.max)


def _add_exact(dbg, x, y, out, block, setting, maxnreg="auto"):
    """One Debugger launch of the add twin with twin_num_warps=setting (and twin_maxnreg=maxnreg)
    into `out` (the same tensor for every setting, so that the store's addresses compare too):
    (run, records, output)."""
    n = x.numel()
    out.fill_(-7.0)
    dbg.configure(output_dir=dbg.get_config()["output_dir"], twin_num_warps=setting, twin_maxnreg=maxnreg)
    dbg.activate(level=1, addr_level=1)
    vector_add.add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    dbg.deactivate()
    run, dec = _one(dbg)
    words = [(r.program, r.slot, r.site, r.kind, r.dtype, r.shape, r.words) for r in dec.records]
    return run, words, out.clone()


def test_twin_fewer_warps_same_records_gpu(dbg):
    """The add twin at fewer warps than the kernel's ("auto": 1, or 2) writes the records the same
    twin writes at the kernel's 4 warps ("same"), word for word, and the reports' statements are
    identical; its output equals the plain kernel's. The inputs are small integers (and a NaN
    and an Inf), so every sum is exact in any order and any difference is a real one."""
    n, block = (1 << 18) + 77, 1024
    g = torch.Generator().manual_seed(6)
    x = torch.randint(-8, 9, (n,), generator=g).float().cuda()
    y = torch.randint(-8, 9, (n,), generator=g).float().cuda()
    x[5] = float("nan")
    y[2000] = float("inf")
    plain = torch.empty_like(x)
    vector_add.add_kernel[(triton.cdiv(n, block),)](x, y, plain, n, BLOCK=block)
    out = torch.empty_like(x)
    same, same_words, same_out = _add_exact(dbg, x, y, out, block, "same")
    assert same["num_warps"]["kernel"] == 4 and same["num_warps"]["twin"] == 4
    assert same["num_warps_compiled"] == 4
    assert len(same_words) == triton.cdiv(n, block) * 10
    for setting, want in (("auto", 1), (2, 2)):
        run, words, got = _add_exact(dbg, x, y, out, block, setting)
        assert run["num_warps"]["twin"] == want and run["num_warps"]["kernel"] == 4, run["num_warps"]
        assert run["num_warps_compiled"] == want  # the compiled twin really ran with them
        torch.testing.assert_close(got, plain, rtol=0, atol=0, equal_nan=True)
        torch.testing.assert_close(got, same_out, rtol=0, atol=0, equal_nan=True)
        assert words == same_words, setting
        if run["report"] is not None:
            assert json.dumps(run["report"]["statements"]) == json.dumps(same["report"]["statements"])
            assert run["report"]["kernel"]["num_warps"]["twin"] == want


def test_twin_register_cap_gpu(dbg):
    """twin_maxnreg="auto" makes the decision flagprism._regs.propose makes for the 1-warp add
    twin's own register count (bench/bench_debugger.py's add, 197 registers on the H200, is capped
    at 168; this test's add takes about 162 and is not); a cap is really applied (twin_maxnreg=128
    here), the reports say so, and the records are word for word those of the uncapped twin."""
    n, block = (1 << 18) + 77, 1024
    g = torch.Generator().manual_seed(7)
    x = torch.randint(-8, 9, (n,), generator=g).float().cuda()
    y = torch.randint(-8, 9, (n,), generator=g).float().cuda()
    x[9] = float("nan")
    out = torch.empty_like(x)
    free, free_words, free_out = _add_exact(dbg, x, y, out, block, "auto", None)
    assert free["registers"]["cap"] is None and free["registers"]["reason"] == "twin_maxnreg=None"
    assert free["num_warps"]["twin"] == 1
    run, words, got = _add_exact(dbg, x, y, out, block, "auto", "auto")
    reg = run["registers"]
    assert reg["uncapped"] == free["registers_compiled"], (reg, free["registers_compiled"])
    cap, why = _regs.propose(reg["uncapped"], 1, torch.cuda.get_device_capability())
    assert reg["cap"] == cap or (cap is not None and reg["cap"] is None and "spills" in reg["reason"]), reg
    if reg["cap"] is not None:
        assert reg["reason"] == why
    assert run["report"]["kernel"]["registers"] == reg
    if reg["cap"] is not None:
        assert run["registers_compiled"] <= reg["cap"]
    assert words == free_words
    torch.testing.assert_close(got, free_out, rtol=0, atol=0, equal_nan=True)
    # a cap given by the setting is used as is
    run, words, got = _add_exact(dbg, x, y, out, block, "auto", 128)
    assert run["registers"] == {"cap": 128, "uncapped": None, "reason": "twin_maxnreg=128"}
    assert run["registers_compiled"] <= 128 < free["registers_compiled"]
    assert run["report"]["kernel"]["registers"] == run["registers"]
    with open(run["txt"], encoding="utf-8") as f:
        assert "registers:       twin capped at 128 per thread (twin_maxnreg=128)" in f.read()
    assert words == free_words
    torch.testing.assert_close(got, free_out, rtol=0, atol=0, equal_nan=True)


def test_softmax_gpu(dbg):
    rows, cols = 64, 1000
    x = torch.randn(rows, cols, device="cuda") * 4
    out = torch.empty_like(x)
    dbg.activate()
    softmax.softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK=1024)
    torch.testing.assert_close(out, torch.softmax(x, dim=1))
    run, dec = _one(dbg)
    xs = x.cpu().numpy()
    for r in (0, rows - 1):
        recs = [q for q in dec.records if q.program == r]
        offs = np.arange(1024)
        mask = offs < cols
        xv = np.where(mask, xs[r][np.minimum(offs, cols - 1)], -np.inf).astype(np.float32)
        ref.check_addr(recs[2], 2, x.data_ptr(), r * cols + offs, mask, 4, F32)
        ref.check_value(recs[3], xv)
        ref.check_value(recs[4], np.float32(xv.max()))


def test_layernorm_and_matmul_gpu(dbg):
    rows, n = 4, 3000
    x = torch.randn(rows, n, device="cuda")
    w = torch.rand(n, device="cuda")
    b = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    dbg.activate()
    layernorm.layernorm_kernel[(rows,)](x, y, w, b, x.stride(0), n, 1e-5, BLOCK=1024)
    torch.testing.assert_close(y, torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5), rtol=1e-4, atol=1e-4)
    run, dec = _one(dbg)
    assert run["overflow_count"] == 0 and run["slots_per_program"] * rows == len(dec.records)
    M, N, K = 200, 136, 96
    a = torch.randn(M, K, device="cuda")
    bb = torch.randn(K, N, device="cuda")
    c = torch.empty(M, N, device="cuda")
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    matmul.matmul_kernel[grid](a, bb, c, M, N, K, a.stride(0), a.stride(1), bb.stride(0), bb.stride(1), c.stride(0),
                               c.stride(1), BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
    torch.testing.assert_close(c, a @ bb, rtol=2e-2, atol=2e-2)
    run, dec = _one(dbg)
    assert run["overflow_count"] == 0
    stores = [q for q in dec.records if q.kind == 3]
    assert len(stores) == grid[0] * grid[1]
    for st in stores:
        pm, pn = st.program % grid[0], st.program // grid[0]
        rm = pm * 64 + np.arange(64)
        rn = pn * 64 + np.arange(64)
        ref.check_addr(st, 3, c.data_ptr(), rm[:, None] * N + rn[None, :], (rm[:, None] < M) & (rn[None, :] < N), 4,
                       F32)


def test_level2_dumps_gpu(dbg):
    n = 5000
    x = torch.randn(n, device="cuda")
    out = torch.empty(n, device="cuda")
    dbg.activate(level=2, addr_level=2)
    vector_add.add_kernel[(triton.cdiv(n, 1024),)](x, x, out, n, BLOCK=1024)
    run, dec = _one(dbg)
    xs = x.cpu().numpy()
    for p in range(triton.cdiv(n, 1024)):
        recs = [r for r in dec.records if r.program == p]
        offs = p * 1024 + np.arange(1024)
        mask = offs < n
        np.testing.assert_array_equal(recs[4].dump, np.where(mask, xs[np.minimum(offs, n - 1)], 0).astype(np.float64))
        addrs = x.data_ptr() + 4 * offs
        np.testing.assert_array_equal(recs[3].dump, np.where(mask, addrs, addrs | np.int64(-(2**63))))


def test_overflow_gpu(dbg):
    dbg.configure(output_dir=dbg.get_config()["output_dir"], record_capacity=4 * 7)
    dbg.activate()
    x = torch.randn(4096, device="cuda")
    vector_add.add_kernel[(4,)](x, x, x.clone(), 4096, BLOCK=1024)
    run, dec = _one(dbg)
    assert run["slots_per_program"] == 7 and len(dec.records) == 28 and run["overflow_count"] == 12


def test_markers_without_activation_keep_the_cache():
    x = torch.randn(2048, device="cuda")
    out = torch.empty_like(x)
    k = vector_add.add_plain
    k[(2,)](x, x, out, 2048, BLOCK=1024)
    vector_add.add_kernel[(2,)](x, x, out, 2048, BLOCK=1024)
    dev = torch.cuda.current_device()
    before = set(vector_add.add_kernel.device_caches[dev][0])
    debugger.activate()
    debugger.deactivate()
    vector_add.add_kernel[(2,)](x, x, out, 2048, BLOCK=1024)
    assert set(vector_add.add_kernel.device_caches[dev][0]) == before
    kern = next(iter(vector_add.add_kernel.device_caches[dev][0].values()))
    assert "__fp_ctx" not in kern.asm["ttir"]


# ---- device records == interpreter records -----------------------------------------------------

_CHILD = r"""
import json, os, sys, torch
sys.path.insert(0, sys.argv[1])
import _refdecode as ref
import flagprism.debugger as debugger
from kernels import vector_add, softmax, control, matmul
ref.install(debugger, sys.argv[3])
data = torch.load(sys.argv[2])
debugger.activate(level=1, addr_level=1)
case = data["case"]
a = data["args"]
if case == "add":
    vector_add.add_kernel[(a["grid"],)](a["x"], a["y"], torch.empty_like(a["x"]), a["n"], BLOCK=a["block"])
elif case == "softmax":
    softmax.softmax_kernel[(a["rows"],)](torch.empty_like(a["x"]), a["x"], a["x"].stride(0), a["x"].stride(0),
                                        a["cols"], BLOCK=a["block"])
elif case == "control":
    out = torch.zeros(a["n"] + 4)
    control.control_kernel[(4,)](a["x"], out, a["n"], 3, BLOCK=64, USE_HELPER=True)
elif case == "matmul":
    matmul.matmul_static_kernel[(1, 1)](a["a"], a["b"], torch.empty(20, 16), 20, 16, K=32, BLOCK_M=32,
                                        BLOCK_N=16, BLOCK_K=16)
(run,) = debugger.take_exported_runs()
print(json.dumps([[r.program, r.slot, r.site, r.kind, r.dtype, r.shape, r.words] for r in ref.decoded(run).records]))
"""


def _f(w):
    return float(np.int64(w).view(np.float64))


def _words_match(dev, cpu):
    """Same records in the same slots; counts exact; float words to 1e-5 (GPU exp and FMA
    contraction round differently from NumPy); integer words exact."""
    assert len(dev) == len(cpu)
    for d, c in zip(dev, cpu):
        assert d[:6] == c[:6], (d, c)
        wd, wc = d[6], c[6]
        assert wd[0] == wc[0] and wd[1] == wc[1]
        if d[3] != 1:  # address record: active lanes and status; the addresses differ by nature
            assert wd[2] == wc[2] and wd[7] == wc[7]
            continue
        assert wd[2] == wc[2] and wd[3] == wc[3], (d, c)  # NaN/Inf/zero counts, dump offsets
        if d[4] in (10, 11, 12, 13, 14, 15):
            for k in (4, 5, 6, 7):
                fd, fc = _f(wd[k]), _f(wc[k])
                assert abs(fd - fc) <= 1e-5 * max(abs(fc), 1e-30), (d[2], k, fd, fc)
        elif d[4] != 16:
            assert wd[4:] == wc[4:], (d, c)


@pytest.mark.parametrize("case", ["add", "softmax", "control"])
def test_device_matches_interpreter(dbg, tmp_path, case):
    torch.manual_seed(0)
    if case == "add":
        n = 3000
        x = torch.randn(n)
        x[10] = float("nan")
        args = {"x": x, "y": torch.randn(n), "n": n, "block": 1024, "grid": 3}
    elif case == "softmax":
        args = {"x": torch.randn(8, 100) * 3, "rows": 8, "cols": 100, "block": 128}
    elif case == "control":
        args = {"x": torch.randn(200), "n": 200}
    else:
        args = {"a": torch.randn(20, 32), "b": torch.randn(32, 16)}
    path = tmp_path / "inputs.pt"
    torch.save({"case": case, "args": args}, path)
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(PYTESTS), str(path), str(tmp_path / "cpu")], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    cpu = json.loads(proc.stdout.strip().splitlines()[-1])
    dev_args = {k: (v.cuda() if isinstance(v, torch.Tensor) else v) for k, v in args.items()}
    dbg.activate(level=1, addr_level=1)
    if case == "add":
        a = dev_args
        vector_add.add_kernel[(a["grid"],)](a["x"], a["y"], torch.empty_like(a["x"]), a["n"], BLOCK=a["block"])
    elif case == "softmax":
        a = dev_args
        softmax.softmax_kernel[(a["rows"],)](torch.empty_like(a["x"]), a["x"], a["x"].stride(0), a["x"].stride(0),
                                            a["cols"], BLOCK=a["block"])
    elif case == "control":
        a = dev_args
        control.control_kernel[(4,)](a["x"], torch.zeros(a["n"] + 4, device="cuda"), a["n"], 3, BLOCK=64,
                                     USE_HELPER=True)
    else:
        a = dev_args
        matmul.matmul_static_kernel[(1, 1)](a["a"], a["b"], torch.empty(20, 16, device="cuda"), 20, 16, K=32,
                                            BLOCK_M=32, BLOCK_N=16, BLOCK_K=16)
    (run,) = dbg.take_exported_runs()
    dev = [[r.program, r.slot, r.site, r.kind, r.dtype, r.shape, r.words] for r in ref.decoded(run).records]
    _words_match(dev, cpu)
