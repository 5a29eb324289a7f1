# SPDX-License-Identifier: Apache-2.0
"""Normalisation kernels of the corpus (see corpus/__init__.py): Triton's tutorial layer norm
(forward looping over column blocks; backward accumulating dW/dB per row group under a spin lock),
and a single-block layer norm whose affine parameters are two rows of one tensor (Liger-style).
Addresses (``addr``) are relative to the start of the parameter's view; programs linearly.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from . import Arena, Case, Expect, Launch, Setup, randn

# ================================================================================================
# Layer norm forward (tutorial): the variance loop loads without a mask
# ================================================================================================


@triton.jit
def layer_norm_fwd_kernel(
    X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr, BUG: tl.constexpr
):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        if BUG:
            x = tl.load(X + cols).to(tl.float32)  # BUG[lnf_var]
        else:
            x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


def _lnf_make(dev: str, planted: bool) -> Setup:
    m, n, eps = 4, 100, 1e-5
    ar = Arena(dev)
    x = ar.tensor((m, n), fill=randn(m, n, seed=70))
    y = ar.tensor((m, n), adjacent=True)  # Y right after X
    w = ar.tensor(n, fill=randn(n, seed=71))
    b = ar.tensor(n, fill=randn(n, seed=72))
    mean = ar.tensor(m)
    rstd = ar.tensor(m)
    xr, wr, br = x.cpu().clone(), w.cpu().clone(), b.cpu().clone()

    def verify() -> None:  # the variance loop's extra lanes are zeroed by tl.where: same result
        ref = torch.nn.functional.layer_norm(xr.double(), (n,), wr.double(), br.double(), eps)
        torch.testing.assert_close(y.cpu().double(), ref, atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(mean.cpu().double(), xr.double().mean(1), atol=1e-5, rtol=1e-5)

    launch = Launch(
        layer_norm_fwd_kernel,
        (m,),
        (x, y, w, b, mean, rstd, n, n, eps),
        {"BLOCK_SIZE": 32, "BUG": int(planted)},
    )
    return Setup(
        [launch],
        [y, mean, rstd],
        verify,
        {"X": x, "Y": y, "W": w, "B": b, "Mean": mean, "Rstd": rstd},
        ar,
    )


def _lnf_expect(s: Setup) -> list[Expect]:
    # N = 100, blocks of 32: trip off = 96 reads columns 96..127. Rows 0..2 read the next row
    # (inside X); row 3 reads elements 400..427 past the 400-element X: 28 lanes (4..31), 112 bytes,
    # into Y, which follows X.
    return [
        Expect(
            "out_of_bounds",
            "lnf_var",
            param="X",
            location="other_storage",
            other_param="Y",
            past=112,
            lanes=28,
            addr=1600,
            program=(3, 0, 0),
            programs=1,
            instances=1,
            iteration=("off", 96),
        )
    ]


# ================================================================================================
# Layer norm forward in one block, W and B two rows of one parameter tensor: W loaded unmasked
# ================================================================================================


@triton.jit
def layer_norm_fused_kernel(
    Y, X, W, B, Mean, Rstd, stride, n_cols, eps, BLOCK_SIZE: tl.constexpr, BUG: tl.constexpr
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = tl.rsqrt(var + eps)
    if BUG:
        w = tl.load(W + cols)  # BUG[lnaff_w]
    else:
        w = tl.load(W + cols, mask=mask, other=0.0)
    b = tl.load(B + cols, mask=mask, other=0.0)
    y = xc * rstd * w + b
    tl.store(Y + row * stride + cols, y, mask=mask)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)


def _lnaff_make(dev: str, planted: bool) -> Setup:
    m, n, eps = 5, 40, 1e-5
    ar = Arena(dev)
    x = ar.tensor((m, n), fill=randn(m, n, seed=73))
    wb = ar.tensor((2, n), fill=randn(2, n, seed=74))  # [weight; bias] in one tensor
    y = ar.tensor((m, n))
    mean = ar.tensor(m)
    rstd = ar.tensor(m)
    xr, wbr = x.cpu().clone(), wb.cpu().clone()

    def verify() -> None:  # W's lanes past n_cols are never stored
        ref = torch.nn.functional.layer_norm(
            xr.double(), (n,), wbr[0].double(), wbr[1].double(), eps
        )
        torch.testing.assert_close(y.cpu().double(), ref, atol=1e-4, rtol=1e-4)

    launch = Launch(
        layer_norm_fused_kernel,
        (m,),
        (y, x, wb[0], wb[1], mean, rstd, n, n, eps),
        {"BLOCK_SIZE": 64, "BUG": int(planted)},
    )
    return Setup(
        [launch],
        [y, mean, rstd],
        verify,
        {"Y": y, "X": x, "W": wb[0], "B": wb[1], "Mean": mean, "Rstd": rstd},
        ar,
    )


def _lnaff_expect(s: Setup) -> list[Expect]:
    # every row's program reads W[40..63]: B's elements 0..23 (wb[1]): 24 lanes x 5 programs, 96 bytes.
    return [
        Expect(
            "out_of_bounds",
            "lnaff_w",
            param="W",
            location="inside_storage",
            other_param="B",
            past=96,
            lanes=120,
            addr=160,
            program=(0, 0, 0),
            programs=5,
            instances=5,
            iteration=None,
        )
    ]


# ================================================================================================
# Layer norm backward (tutorial): partial dW/dB per row group under a lock; the lock array
# (locks then counters) is allocated one group short
# ================================================================================================


@triton.jit
def layer_norm_bwd_dx_fused_kernel(
    DX,
    DY,
    DW,
    DB,
    X,
    W,
    Mean,
    Rstd,
    Lock,
    stride,
    N,
    GROUP_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.0)
    wdy = tl.where(mask, wdy, 0.0)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)  # BUG[lnb_count]
    if count == 0:
        tl.atomic_xchg(Count, 1)  # BUG[lnb_xchg]
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@triton.jit
def layer_norm_bwd_dwdb_kernel(
    DW, DB, FINAL_DW, FINAL_DB, M, N, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr
):
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.0)
        db += tl.load(DB + offs, mask=mask, other=0.0)
    sum_dw = tl.sum(dw, axis=0)
    sum_db = tl.sum(db, axis=0)
    tl.store(FINAL_DW + cols, sum_dw, mask=cols < N)
    tl.store(FINAL_DB + cols, sum_db, mask=cols < N)


def _lnb_make(dev: str, planted: bool) -> Setup:
    m, n, group, eps = 16, 48, 4, 1e-5
    xc, wc, bc, dyc = (
        randn(m, n, seed=75),
        randn(n, seed=76),
        randn(n, seed=77),
        randn(m, n, seed=78),
    )
    meanc = xc.double().mean(1)
    rstdc = 1.0 / torch.sqrt(xc.double().var(1, unbiased=False) + eps)
    ar = Arena(dev)
    x = ar.tensor((m, n), fill=xc)
    dy = ar.tensor((m, n), fill=dyc)
    w = ar.tensor(n, fill=wc)
    mean = ar.tensor(m, fill=meanc.float())
    rstd = ar.tensor(m, fill=rstdc.float())
    dx = ar.tensor((m, n))
    # locks then counters: 2 * GROUP_SIZE_M int32 (planted: sized for GROUP_SIZE_M - 1 groups)
    locks = ar.tensor(2 * (group - 1) if planted else 2 * group, torch.int32)
    dw_part = ar.tensor((group, n), adjacent=True)  # the partial dW right after the locks
    db_part = ar.tensor((group, n))
    dw = ar.tensor(n)
    db = ar.tensor(n)

    def verify() -> None:
        xr = xc.double().requires_grad_()
        wr = wc.double().requires_grad_()
        br = bc.double().requires_grad_()
        torch.nn.functional.layer_norm(xr, (n,), wr, br, eps).backward(dyc.double())
        torch.testing.assert_close(dx.cpu().double(), xr.grad, atol=1e-4, rtol=1e-4)
        if not planted:  # planted: groups 2 and 3 never find their counter set, and overwrite
            torch.testing.assert_close(dw.cpu().double(), wr.grad, atol=1e-3, rtol=1e-4)
            torch.testing.assert_close(db.cpu().double(), br.grad, atol=1e-3, rtol=1e-4)
            assert int(locks.abs().sum()) == group  # every lock released, every counter set

    launches = [
        Launch(
            layer_norm_bwd_dx_fused_kernel,
            (m,),
            (dx, dy, dw_part, db_part, x, w, mean, rstd, locks, n, n),
            {"GROUP_SIZE_M": group, "BLOCK_SIZE_N": 64},
        ),
        Launch(
            layer_norm_bwd_dwdb_kernel,
            (triton.cdiv(n, 32),),
            (dw_part, db_part, dw, db, group, n),
            {"BLOCK_SIZE_M": 4, "BLOCK_SIZE_N": 32},
        ),
    ]
    return Setup(
        launches,
        [dx, dw, db],
        verify,
        {
            "DX": dx,
            "DY": dy,
            "DW": dw_part,
            "DB": db_part,
            "X": x,
            "W": w,
            "Mean": mean,
            "Rstd": rstd,
            "Lock": locks,
        },
        ar,
    )


def _lnb_expect(s: Setup) -> list[Expect]:
    # GROUP_SIZE_M = 4, 16 rows, 6 int32 locks instead of 8. Counter of group g at Lock[4 + g]:
    # groups 2 and 3 (rows 2, 3, 6, 7, 10, 11, 14, 15) read Lock[6] and Lock[7], 4 and 8 bytes past
    # the end, in DW (which follows the locks). The load is suppressed (it reads 0), so every one of
    # those rows also sets the counter with atomic_xchg: 8 lanes each.
    c = dict(
        kernel="layer_norm_bwd_dx_fused_kernel",
        param="Lock",
        location="other_storage",
        other_param="DW",
        past=8,
        lanes=8,
        addr=24,
        program=(2, 0, 0),
        programs=8,
        instances=8,
        iteration=None,
    )
    return [Expect("out_of_bounds", "lnb_count", **c), Expect("out_of_bounds", "lnb_xchg", **c)]


CASES = [
    Case(
        "layer_norm_fwd_variance_loop",
        "layer norm",
        "tutorial forward: the variance loop loads without a mask",
        _lnf_make,
        _lnf_expect,
        features=("runtime-loops",),
    ),
    Case(
        "layer_norm_affine_weight_into_bias",
        "layer norm",
        "W loaded unmasked; W and B are rows of one tensor",
        _lnaff_make,
        _lnaff_expect,
    ),
    Case(
        "layer_norm_bwd_lock_array_short",
        "layer norm",
        "backward spin lock (atomic_cas/atomic_xchg): lock array allocated one group short",
        _lnb_make,
        _lnb_expect,
        features=("runtime-loops",),
    ),
]
