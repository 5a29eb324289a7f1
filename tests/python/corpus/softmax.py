# SPDX-License-Identifier: Apache-2.0
"""Softmax-family kernels of the corpus (see corpus/__init__.py): the tutorial's row softmax,
a length-masked softmax (per-row valid lengths, as attention masks make), a varlen softmax over
packed sequences (cu_seqlens) and Liger-style cross entropy (online logsumexp, ignore_index).
Addresses (``addr``) are relative to the start of the parameter's view; programs linearly.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from . import Arena, Case, Expect, Launch, Setup, randn

# ================================================================================================
# Row softmax (tutorial): the mask compares with the block size instead of the row length
# ================================================================================================


@triton.jit
def softmax_kernel(
    output_ptr,
    input_ptr,
    input_row_stride,
    output_row_stride,
    n_rows,
    n_cols,
    BLOCK_SIZE: tl.constexpr,
    BUG: tl.constexpr,
):
    row_idx = tl.program_id(0)
    row_start_ptr = input_ptr + row_idx * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    input_ptrs = row_start_ptr + col_offsets
    if BUG:
        mask = col_offsets < BLOCK_SIZE  # the block, not the row
    else:
        mask = col_offsets < n_cols
    row = tl.load(input_ptrs, mask=mask, other=-float("inf"))  # BUG[sm_load]
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    softmax_output = numerator / denominator
    output_row_start_ptr = output_ptr + row_idx * output_row_stride
    tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)  # BUG[sm_store]


def _sm_make(dev: str, planted: bool) -> Setup:
    m, n = 4, 50
    ar = Arena(dev)
    x = ar.tensor((m, n), fill=randn(m, n, seed=80))
    out = ar.tensor((m, n), adjacent=True)  # the output right after the input
    xr = x.cpu().clone()

    def verify() -> None:
        torch.testing.assert_close(
            out.cpu(), torch.softmax(xr.double(), dim=1).float(), atol=1e-6, rtol=1e-5
        )

    launch = Launch(
        softmax_kernel, (m,), (out, x, n, n, m, n), {"BLOCK_SIZE": 64, "BUG": int(planted)}
    )
    return Setup(
        [launch], [out], None if planted else verify, {"output_ptr": out, "input_ptr": x}, ar
    )


def _sm_expect(s: Setup) -> list[Expect]:
    # rows 0..2 read (and write) the next row's first 14 elements, inside the tensors; row 3 reads
    # elements 200..213 of a 200-element input (into the output, which follows) and writes them
    # past the output: 14 lanes (50..63), 56 bytes.
    c = dict(
        past=56, lanes=14, addr=800, program=(3, 0, 0), programs=1, instances=1, iteration=None
    )
    return [
        Expect(
            "out_of_bounds",
            "sm_load",
            param="input_ptr",
            location="other_storage",
            other_param="output_ptr",
            **c,
        ),
        Expect(
            "out_of_bounds", "sm_store", param="output_ptr", location="outside_allocations", **c
        ),
    ]


# ================================================================================================
# Length-masked softmax: an empty row (length 0) gives NaN, or a zero denominator
# ================================================================================================


@triton.jit
def masked_softmax_kernel(y_ptr, x_ptr, len_ptr, stride, N, BLOCK: tl.constexpr, BUG: tl.constexpr):
    row = tl.program_id(0)
    length = tl.load(len_ptr + row)
    cols = tl.arange(0, BLOCK)
    mask = cols < length
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf"))
    x_max = tl.max(x, axis=0)
    if BUG != 1:
        x_max = tl.where(x_max == float("-inf"), 0.0, x_max)  # an empty row
    z = x - x_max  # BUG[msm_z]
    num = tl.exp(z)
    den = tl.sum(num, axis=0)
    if BUG == 0:
        den = tl.where(den == 0.0, 1.0, den)
    y = num / den  # BUG[msm_y]
    tl.store(y_ptr + row * stride + cols, y, mask=cols < N)


MSM_LENS = [50, 0, 64, 17]


def _msm(bug: int):
    def make(dev: str, planted: bool) -> Setup:
        m, n = 4, 64
        ar = Arena(dev)
        x = ar.tensor((m, n), fill=randn(m, n, seed=81))
        lens = ar.tensor(m, torch.int32, fill=torch.tensor(MSM_LENS, dtype=torch.int32))
        y = ar.tensor((m, n))
        xr = x.cpu().clone()

        def verify() -> None:
            ref = torch.zeros(m, n)
            for r, length in enumerate(MSM_LENS):
                if length:
                    ref[r, :length] = torch.softmax(xr[r, :length].double(), 0).float()
            rows = [0, 2, 3] if planted else list(range(m))  # planted: the empty row is NaN
            torch.testing.assert_close(y.cpu()[rows], ref[rows], atol=1e-6, rtol=1e-5)

        launch = Launch(
            masked_softmax_kernel,
            (m,),
            (y, x, lens, n, n),
            {"BLOCK": 64, "BUG": bug if planted else 0},
        )
        return Setup([launch], [y], verify, {"y_ptr": y, "x_ptr": x, "len_ptr": lens}, ar)

    return make


def _msm_nan_expect(s: Setup) -> list[Expect]:
    # row 1 has length 0: every lane is -inf padding, the max is -inf, and x - x_max is -inf - -inf
    # = NaN in all 64 lanes, born there (x and x_max hold -inf, not NaN).
    return [
        Expect(
            "nan_origin",
            "msm_z",
            count=64,
            from_memory=False,
            program=(1, 0, 0),
            programs=1,
            instances=1,
            iteration=None,
        )
    ]


def _msm_zero_den_expect(s: Setup) -> list[Expect]:
    # with the max guarded, row 1's numerators are exp(-inf) = 0 and their sum den = 0: num / den
    # = 0 / 0 = NaN in all 64 lanes, and the divisor den (one element) is zero.
    c = dict(program=(1, 0, 0), programs=1, instances=1, iteration=None)
    return [
        Expect("nan_origin", "msm_y", count=64, from_memory=False, **c),
        Expect("division_by_zero", "msm_y", count=1, value=0.0, **c),
    ]


# ================================================================================================
# Varlen softmax over packed sequences (cu_seqlens): the mask uses the batch's longest sequence
# ================================================================================================


@triton.jit
def varlen_softmax_kernel(
    out_ptr, x_ptr, cu_seqlens_ptr, max_seqlen, BLOCK: tl.constexpr, BUG: tl.constexpr
):
    seq = tl.program_id(0)
    start = tl.load(cu_seqlens_ptr + seq)
    end = tl.load(cu_seqlens_ptr + seq + 1)
    cols = tl.arange(0, BLOCK)
    if BUG:
        mask = cols < max_seqlen  # the batch's longest sequence
    else:
        mask = cols < end - start
    x = tl.load(x_ptr + start + cols, mask=mask, other=float("-inf"))  # BUG[vl_load]
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + start + cols, y, mask=mask)  # BUG[vl_store]


VL_LENS = [7, 20, 12, 9]


def _vl_make(dev: str, planted: bool) -> Setup:
    cu = torch.tensor([0] + torch.cumsum(torch.tensor(VL_LENS), 0).tolist(), dtype=torch.int32)
    total = int(cu[-1])
    ar = Arena(dev)
    x = ar.tensor(total, fill=randn(total, seed=82))
    out = ar.tensor(total, adjacent=True)
    cus = ar.tensor(len(cu), torch.int32, fill=cu)
    xr = x.cpu().clone()

    def verify() -> None:
        ref = torch.cat(
            [torch.softmax(xr[int(a) : int(b)].double(), 0) for a, b in zip(cu[:-1], cu[1:])]
        ).float()
        torch.testing.assert_close(out.cpu(), ref, atol=1e-6, rtol=1e-5)

    launch = Launch(
        varlen_softmax_kernel,
        (len(VL_LENS),),
        (out, x, cus, max(VL_LENS)),
        {"BLOCK": 32, "BUG": int(planted)},
    )
    return Setup(
        [launch],
        [out],
        None if planted else verify,
        {"out_ptr": out, "x_ptr": x, "cu_seqlens_ptr": cus},
        ar,
    )


def _vl_expect(s: Setup) -> list[Expect]:
    # lengths 7, 20, 12, 9 (cu_seqlens 0, 7, 27, 39, 48), max 20: every sequence reads 20 elements
    # from its start; sequence 3 (start 39) reads 39..58 of 48: lanes 9..19, 11 lanes, 44 bytes.
    c = dict(
        past=44, lanes=11, addr=192, program=(3, 0, 0), programs=1, instances=1, iteration=None
    )
    return [
        Expect(
            "out_of_bounds",
            "vl_load",
            param="x_ptr",
            location="other_storage",
            other_param="out_ptr",
            **c,
        ),
        Expect("out_of_bounds", "vl_store", param="out_ptr", location="outside_allocations", **c),
    ]


# ================================================================================================
# Cross entropy (Liger-style, online logsumexp): ignore_index not skipped; exp without the max
# ================================================================================================


@triton.jit
def cross_entropy_kernel(
    X_ptr,
    X_stride,
    Y_ptr,
    loss_ptr,
    n_cols,
    ignore_index,
    BLOCK_SIZE: tl.constexpr,
    BUG: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    X_ptr += row * X_stride
    y = tl.load(Y_ptr + row)
    if BUG != 1:
        if y == ignore_index:
            tl.store(loss_ptr + row, 0.0)
            return
    ori_X_y = tl.load(X_ptr + y)  # BUG[ce_target]
    m = float("-inf")
    d = 0.0
    for i in range(0, n_cols, BLOCK_SIZE):
        X_offsets = i + tl.arange(0, BLOCK_SIZE)
        X_block = tl.load(X_ptr + X_offsets, mask=X_offsets < n_cols, other=float("-inf"))
        if BUG == 2:
            e = tl.exp(X_block)  # BUG[ce_exp]
            d = d + tl.sum(e)
        else:
            block_max = tl.max(X_block)
            m_new = tl.maximum(m, block_max)
            d = d * tl.exp(m - m_new) + tl.sum(tl.exp(X_block - m_new))
            m = m_new
    if BUG == 2:
        lse = tl.log(d)
    else:
        lse = m + tl.log(d)
    loss = lse - ori_X_y
    tl.store(loss_ptr + row, loss)


CE_TARGETS = [3, -100, 7, -100, 39, 0]


def _ce(bug: int):
    def make(dev: str, planted: bool) -> Setup:
        m, v = 6, 40
        logits = randn(m, v, seed=83) * 3
        if planted and bug == 2:
            logits[2, 5] = 100.0  # exp overflows fp32 above 88.72
            logits[4, 33] = 95.0
        ar = Arena(dev)
        x = ar.tensor((m, v), fill=logits)
        y = ar.tensor(m, torch.int64, fill=torch.tensor(CE_TARGETS))
        loss = ar.tensor(m)

        def verify() -> None:
            ref = torch.nn.functional.cross_entropy(
                logits.double(), torch.tensor(CE_TARGETS), reduction="none", ignore_index=-100
            ).float()
            # planted 1: the ignored rows get a garbage loss; planted 2: rows 2 and 4 are inf
            rows = {0: list(range(m)), 1: [0, 2, 4, 5], 2: [0, 1, 3, 5]}[bug if planted else 0]
            torch.testing.assert_close(loss.cpu()[rows], ref[rows], atol=1e-5, rtol=1e-5)

        launch = Launch(
            cross_entropy_kernel,
            (m,),
            (x, v, y, loss, v, -100),
            {"BLOCK_SIZE": 16, "BUG": bug if planted else 0},
        )
        return Setup([launch], [loss], verify, {"X_ptr": x, "Y_ptr": y, "loss_ptr": loss}, ar)

    return make


def _ce_ignore_expect(s: Setup) -> list[Expect]:
    # target -100 in rows 1 and 3 (rows of 40): row 1 reads element 40 - 100 = -60, 240 bytes before
    # the logits; row 3 reads element 120 - 100 = 20, inside the view (row 0): not a finding.
    return [
        Expect(
            "out_of_bounds",
            "ce_target",
            param="X_ptr",
            location="outside_allocations",
            before=240,
            lanes=1,
            addr=-240,
            program=(1, 0, 0),
            programs=1,
            instances=1,
            iteration=None,
        )
    ]


def _ce_exp_expect(s: Setup) -> list[Expect]:
    # exp(100) and exp(95) overflow fp32: one element each in rows 2 (trip i = 0) and 4 (trip 32).
    return [
        Expect(
            "inf_origin",
            "ce_exp",
            count=2,
            from_memory=False,
            program=(2, 0, 0),
            programs=2,
            instances=2,
            iteration=("i", 0),
        )
    ]


CASES = [
    Case(
        "softmax_block_size_mask",
        "softmax",
        "tutorial row softmax masked with BLOCK_SIZE instead of n_cols",
        _sm_make,
        _sm_expect,
    ),
    Case(
        "masked_softmax_empty_row_nan",
        "softmax",
        "length-masked softmax: an empty row's max is -inf, x - max is NaN",
        _msm(1),
        _msm_nan_expect,
        checks="nan,inf,domain",
    ),
    Case(
        "masked_softmax_zero_denominator",
        "softmax",
        "max guarded, denominator not: 0 / 0 on an empty row",
        _msm(2),
        _msm_zero_den_expect,
        checks="nan,inf,domain",
    ),
    Case(
        "varlen_softmax_max_seqlen_mask",
        "softmax",
        "packed sequences (cu_seqlens) masked with max_seqlen",
        _vl_make,
        _vl_expect,
    ),
    Case(
        "cross_entropy_ignore_index",
        "cross entropy",
        "ignore_index (-100) rows not skipped: X[row, -100]",
        _ce(1),
        _ce_ignore_expect,
        features=("runtime-loops",),
    ),
    Case(
        "cross_entropy_exp_overflow",
        "cross entropy",
        "logsumexp without subtracting the max: exp(100) = inf",
        _ce(2),
        _ce_exp_expect,
        checks="nan,inf,domain",
        features=("runtime-loops",),
    ),
]
