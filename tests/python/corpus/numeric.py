# SPDX-License-Identifier: Apache-2.0
"""NaN, Inf, domain and precision bugs of the corpus (see corpus/__init__.py), and the int8
quantization kernels: vLLM-style per-token int8 quantize (a zero row), dequantize to fp16 (a
reciprocal scale overflows fp16) and group-wise dequantize (a scale past the row), an L2 normalize
whose NaN descends into a second launch, Adam (sqrt of a negative second moment), softplus and
binary cross entropy written naively (exp overflow, log(0)), gradients cast to fp16 without the
loss scale (flush to zero), and a masked mean that reads NaN padding from memory.

Counts are elements (lanes of a value); every lane of a value counts, masked-off ones included.
"""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl

from . import Arena, Case, Expect, Launch, Setup, rand, randn

# ================================================================================================
# Per-token int8 quantize: a zero row gives a zero scale
# ================================================================================================


@triton.jit
def per_token_quant_int8_kernel(
    x_ptr, q_ptr, scale_ptr, N, stride, BLOCK: tl.constexpr, BUG: tl.constexpr
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    absmax = tl.max(tl.abs(x), axis=0)
    if BUG:
        scale = absmax / 127.0
    else:
        scale = tl.maximum(absmax, 1e-10) / 127.0
    y = x / scale  # BUG[quant_div]
    q = tl.where(y >= 0, y + 0.5, y - 0.5).to(tl.int8)
    tl.store(q_ptr + row * stride + cols, q, mask=mask)
    tl.store(scale_ptr + row, scale)


def _quant_make(dev: str, planted: bool) -> Setup:
    m, n = 4, 50
    xc = randn(m, n, seed=90)
    xc[2] = 0.0  # a padding token's activations
    ar = Arena(dev)
    x = ar.tensor((m, n), fill=xc)
    q = ar.tensor((m, n), torch.int8)
    scale = ar.tensor(m)

    def verify() -> None:
        s = torch.clamp(xc.abs().amax(1), min=1e-10) / 127.0
        y = xc / s[:, None]
        ref = torch.where(y >= 0, y + 0.5, y - 0.5).to(torch.int8)
        rows = [0, 1, 3] if planted else list(range(m))
        torch.testing.assert_close(scale.cpu()[rows], s[rows], rtol=1e-6, atol=0)
        # the GPU divides with div.full.f32: a value at .5 may round the other way
        assert int((q.cpu()[rows].int() - ref[rows].int()).abs().max()) <= 1

    launch = Launch(
        per_token_quant_int8_kernel, (m,), (x, q, scale, n, n), {"BLOCK": 64, "BUG": int(planted)}
    )
    return Setup([launch], [q, scale], verify, {"x_ptr": x, "q_ptr": q, "scale_ptr": scale}, ar)


def _quant_expect(s: Setup) -> list[Expect]:
    # row 2 is all zeros: absmax = 0, scale = 0, and x / scale = 0 / 0 in all 64 lanes (the masked
    # lanes load 0 too). The divisor, one element, is zero.
    c = dict(program=(2, 0, 0), programs=1, instances=1, iteration=None)
    return [
        Expect("division_by_zero", "quant_div", count=1, value=0.0, **c),
        Expect("nan_origin", "quant_div", count=64, from_memory=False, **c),
    ]


# ================================================================================================
# int8 dequantize to fp16: the scale used as its reciprocal overflows fp16
# ================================================================================================


@triton.jit
def dequant_int8_kernel(
    q_ptr, scale_ptr, out_ptr, N, stride, BLOCK: tl.constexpr, BUG: tl.constexpr
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    q = tl.load(q_ptr + row * stride + cols, mask=mask, other=0).to(tl.float32)
    s = tl.load(scale_ptr + row)
    if BUG:
        y = q / s  # the scale taken for its reciprocal
    else:
        y = q * s
    h = y.to(tl.float16)  # BUG[dequant_cast]
    tl.store(out_ptr + row * stride + cols, h, mask=mask)


DQ_SCALES = [0.5, 1e-3, 0.25, 2e-3]


def _dq_q() -> torch.Tensor:
    return torch.randint(
        -127, 128, (4, 50), generator=torch.Generator().manual_seed(91), dtype=torch.int8
    )


def _dq_make(dev: str, planted: bool) -> Setup:
    m, n = 4, 50
    qc = _dq_q()
    ar = Arena(dev)
    q = ar.tensor((m, n), torch.int8, fill=qc)
    sc = ar.tensor(m, fill=torch.tensor(DQ_SCALES))
    out = ar.tensor((m, n), torch.float16)

    def verify() -> None:
        s = torch.tensor(DQ_SCALES)[:, None]
        if planted:  # rows 0, 2 and 3 stay within fp16
            ref = (qc.float() / s).half()
            torch.testing.assert_close(out.cpu()[[0, 2, 3]], ref[[0, 2, 3]], rtol=1e-3, atol=0)
        else:
            torch.testing.assert_close(out.cpu(), (qc.float() * s).half(), rtol=1e-3, atol=0)

    launch = Launch(
        dequant_int8_kernel, (m,), (q, sc, out, n, n), {"BLOCK": 64, "BUG": int(planted)}
    )
    return Setup([launch], [out], verify, {"q_ptr": q, "scale_ptr": sc, "out_ptr": out}, ar)


def _dq_expect(s: Setup) -> list[Expect]:
    # row 1 (scale 1e-3): q / 1e-3 reaches 65520 (fp16's overflow threshold) for |q| >= 66; row 3
    # (2e-3) tops out at 127 / 2e-3 = 63500. The first offending lane of program 1 gives `value`.
    q = _dq_q().numpy()[1]
    y = q.astype(np.float32) / np.float32(DQ_SCALES[1])
    over = np.abs(y) >= 65520
    n_over = int(over.sum())
    first = float(y[np.argmax(over)])
    c = dict(program=(1, 0, 0), programs=1, instances=1, iteration=None)
    return [
        Expect(
            "precision_loss", "dequant_cast", count=n_over, value=first, target_dtype="float16", **c
        ),
        Expect("inf_origin", "dequant_cast", count=n_over, from_memory=False, **c),
    ]


# ================================================================================================
# Group-wise dequantize: the scale index of the padded lanes is not masked
# ================================================================================================


@triton.jit
def dequant_group_kernel(
    q_ptr, s_ptr, out_ptr, N, n_groups, GROUP: tl.constexpr, BLOCK: tl.constexpr, BUG: tl.constexpr
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    q = tl.load(q_ptr + row * N + cols, mask=mask, other=0).to(tl.float32)
    if BUG:
        s = tl.load(s_ptr + row * n_groups + cols // GROUP)  # BUG[group_s]
    else:
        s = tl.load(s_ptr + row * n_groups + cols // GROUP, mask=mask, other=0.0)
    tl.store(out_ptr + row * N + cols, q * s, mask=mask)


def _grp_make(dev: str, planted: bool) -> Setup:
    m, n, g = 4, 96, 32
    qc = torch.randint(
        -127, 128, (m, n), generator=torch.Generator().manual_seed(92), dtype=torch.int8
    )
    ar = Arena(dev)
    q = ar.tensor((m, n), torch.int8, fill=qc)
    s = ar.tensor((m, n // g), fill=rand(m, n // g, seed=93) * 0.01)
    out = ar.tensor((m, n), adjacent=True)  # right after the scales
    sr = s.cpu().clone()

    def verify() -> None:
        ref = qc.float() * sr.repeat_interleave(g, dim=1)
        torch.testing.assert_close(out.cpu(), ref, rtol=0, atol=0)

    launch = Launch(
        dequant_group_kernel,
        (m,),
        (q, s, out, n, n // g),
        {"GROUP": g, "BLOCK": 128, "BUG": int(planted)},
    )
    return Setup([launch], [out], verify, {"q_ptr": q, "s_ptr": s, "out_ptr": out}, ar)


def _grp_expect(s: Setup) -> list[Expect]:
    # BLOCK = 128 lanes over 96 columns: lanes 96..127 index group 3 of 3, the next row's first scale
    # for rows 0..2, element 12 of 12 for row 3: 32 lanes on one element, 4 bytes, into out.
    return [
        Expect(
            "out_of_bounds",
            "group_s",
            param="s_ptr",
            location="other_storage",
            other_param="out_ptr",
            past=4,
            lanes=32,
            addr=48,
            program=(3, 0, 0),
            programs=1,
            instances=1,
            iteration=None,
        )
    ]


# ================================================================================================
# NaN descending across launches: an L2 normalize divides a zero row by its zero norm, and a
# second kernel reads the result inside an expression
# ================================================================================================


@triton.jit
def l2_normalize_kernel(x_ptr, y_ptr, N, eps, BLOCK: tl.constexpr, BUG: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0)
    norm = tl.sqrt(tl.sum(x * x, axis=0))
    if BUG:
        y = x / norm  # BUG[l2_div]
    else:
        y = x / tl.maximum(norm, eps)
    tl.store(y_ptr + row * N + cols, y, mask=mask)


@triton.jit
def row_dot_kernel(y_ptr, w_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(y_ptr + row * N + cols, mask=cols < N, other=0.0) * tl.load(
            w_ptr + cols, mask=cols < N, other=0.0
        )
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


def _l2_make(dev: str, planted: bool) -> Setup:
    m, n = 4, 40
    xc = randn(m, n, seed=94)
    xc[2] = 0.0
    wc = randn(n, seed=95)
    ar = Arena(dev)
    x = ar.tensor((m, n), fill=xc)
    y = ar.tensor((m, n))
    w = ar.tensor(n, fill=wc)
    out = ar.tensor(m)

    def verify() -> None:
        ref_y = xc / torch.clamp(xc.norm(dim=1, keepdim=True), min=1e-12)
        rows = [0, 1, 3] if planted else list(range(m))
        torch.testing.assert_close(y.cpu()[rows], ref_y[rows], atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(out.cpu()[rows], (ref_y @ wc)[rows], atol=1e-5, rtol=1e-5)
        if planted:
            assert bool(torch.isnan(y.cpu()[2]).all()) and bool(torch.isnan(out.cpu()[2]))

    launches = [
        Launch(l2_normalize_kernel, (m,), (x, y, n, 1e-12), {"BLOCK": 64, "BUG": int(planted)}),
        Launch(row_dot_kernel, (m,), (y, w, out, n), {"BLOCK": 16}),
    ]
    return Setup(
        launches, [y, out], verify, {"x_ptr": x, "y_ptr": y, "w_ptr": w, "out_ptr": out}, ar
    )


def _l2_expect(s: Setup) -> list[Expect]:
    # row 2 is zero: its norm is 0 and x / norm is 0 / 0 in all 64 lanes. The second launch loads
    # those NaNs (produced by the first): a descendant, not a new origin.
    c = dict(
        kernel="l2_normalize_kernel", program=(2, 0, 0), programs=1, instances=1, iteration=None
    )
    return [
        Expect("nan_origin", "l2_div", count=64, from_memory=False, **c),
        Expect("division_by_zero", "l2_div", count=1, value=0.0, **c),
    ]


# ================================================================================================
# Adam: the second moment accumulates g instead of g * g, and its square root goes negative
# ================================================================================================


@triton.jit
def adam_kernel(
    p_ptr,
    g_ptr,
    m_ptr,
    v_ptr,
    n,
    lr,
    beta1,
    beta2,
    eps,
    bc1,
    bc2,
    BLOCK: tl.constexpr,
    BUG: tl.constexpr,
):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask, other=0.0)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0)
    m = tl.load(m_ptr + offs, mask=mask, other=0.0)
    v = tl.load(v_ptr + offs, mask=mask, other=0.0)
    m = beta1 * m + (1 - beta1) * g
    if BUG:
        v = beta2 * v + (1 - beta2) * g  # the gradient, not its square
    else:
        v = beta2 * v + (1 - beta2) * g * g
    m_hat = m / bc1
    v_hat = v / bc2
    denom = tl.sqrt(v_hat) + eps  # BUG[adam_sqrt]
    p = p - lr * m_hat / denom
    tl.store(p_ptr + offs, p, mask=mask)
    tl.store(m_ptr + offs, m, mask=mask)
    tl.store(v_ptr + offs, v, mask=mask)


# betas whose complements are exact in fp32 (the interpreter and a GPU compute 1 - beta alike)
ADAM = dict(lr=1e-3, beta1=0.875, beta2=1 - 2.0**-11, eps=1e-8)


def _adam_make(dev: str, planted: bool) -> Setup:
    n = 100
    pc, gc = randn(n, seed=96), randn(n, seed=97)
    ar = Arena(dev)
    p = ar.tensor(n, fill=pc)
    g = ar.tensor(n, fill=gc)
    m = ar.tensor(n)
    v = ar.tensor(n)
    b1, b2 = ADAM["beta1"], ADAM["beta2"]
    bc1, bc2 = 1 - b1, 1 - b2  # step 1

    def verify() -> None:
        pr = pc.clone().requires_grad_()
        opt = torch.optim.Adam([pr], lr=ADAM["lr"], betas=(b1, b2), eps=ADAM["eps"])
        pr.grad = gc.clone()
        opt.step()
        if planted:  # where g >= 0 the (wrong) second moment is still >= 0: finite, but not Adam's
            assert int(torch.isnan(p.cpu()).sum()) == int((gc < 0).sum())
        else:
            torch.testing.assert_close(p.cpu(), pr.detach(), atol=1e-6, rtol=1e-5)

    launch = Launch(
        adam_kernel,
        (2,),
        (p, g, m, v, n, ADAM["lr"], b1, b2, ADAM["eps"], bc1, bc2),
        {"BLOCK": 64, "BUG": int(planted)},
    )
    return Setup([launch], [p, m, v], verify, {"p_ptr": p, "g_ptr": g, "m_ptr": m, "v_ptr": v}, ar)


def _adam_expect(s: Setup) -> list[Expect]:
    # v = (1 - beta2) g = 2^-11 g and v_hat = v / 2^-11 = g exactly: negative exactly where g < 0
    # (in both programs); sqrt gives NaN there. The first offending element is program 0's first
    # negative g.
    g = randn(100, seed=97).numpy()
    neg = int((g < 0).sum())
    first = float(g[np.argmax(g < 0)])
    c = dict(program=(0, 0, 0), programs=2, instances=2, iteration=None)
    return [
        Expect("invalid_domain", "adam_sqrt", count=neg, value=first, **c),
        Expect("nan_origin", "adam_sqrt", count=neg, from_memory=False, **c),
    ]


# ================================================================================================
# Softplus written as log(1 + exp(x)): exp overflows
# ================================================================================================


@triton.jit
def softplus_kernel(x_ptr, y_ptr, n, beta, BLOCK: tl.constexpr, BUG: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    z = x * beta
    if BUG:
        e = tl.exp(z)  # BUG[softplus_exp]
        y = tl.log(1.0 + e) / beta
    else:
        y = (tl.maximum(z, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(z)))) / beta
    tl.store(y_ptr + offs, y, mask=mask)


def _sp_data() -> torch.Tensor:
    x = randn(100, seed=98) * 5
    x[10], x[45], x[80] = 100.0, 95.0, 300.0  # exp overflows fp32 above 88.72
    return x


def _sp_make(dev: str, planted: bool) -> Setup:
    xc = _sp_data()
    ar = Arena(dev)
    x = ar.tensor(100, fill=xc)
    y = ar.tensor(100)

    def verify() -> None:
        ref = torch.nn.functional.softplus(xc.double()).float()
        keep = torch.ones(100, dtype=torch.bool)
        if planted:
            keep[[10, 45, 80]] = False
        torch.testing.assert_close(y.cpu()[keep], ref[keep], atol=1e-5, rtol=1e-5)

    launch = Launch(softplus_kernel, (2,), (x, y, 100, 1.0), {"BLOCK": 64, "BUG": int(planted)})
    return Setup([launch], [y], verify, {"x_ptr": x, "y_ptr": y}, ar)


def _sp_expect(s: Setup) -> list[Expect]:
    # x = 100, 95 (program 0) and 300 (program 1) overflow; randn * 5 stays far below 88.72.
    assert float(_sp_data().sort().values[-4]) < 80
    return [
        Expect(
            "inf_origin",
            "softplus_exp",
            count=3,
            from_memory=False,
            program=(0, 0, 0),
            programs=2,
            instances=2,
            iteration=None,
        )
    ]


# ================================================================================================
# Binary cross entropy on sigmoid probabilities: log(1 - p) at p == 1, then 0 * -inf
# ================================================================================================


@triton.jit
def bce_kernel(x_ptr, t_ptr, loss_ptr, n, BLOCK: tl.constexpr, BUG: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    t = tl.load(t_ptr + offs, mask=mask, other=0.0)
    if BUG:
        p = tl.sigmoid(x)
        lp = tl.log(p)
        lq = tl.log(1.0 - p)  # BUG[bce_logq]
        loss = -(t * lp + (1.0 - t) * lq)  # BUG[bce_loss]
    else:
        loss = tl.maximum(x, 0.0) - x * t + tl.log(1.0 + tl.exp(-tl.abs(x)))
    tl.store(loss_ptr + offs, loss, mask=mask)


def _bce_make(dev: str, planted: bool) -> Setup:
    n = 100
    xc = randn(n, seed=99) * 2
    tc = (rand(n, seed=100) > 0.5).float()
    xc[12], tc[12] = 40.0, 1.0  # sigmoid(40) == 1.0 in fp32
    xc[70], tc[70] = 45.0, 1.0
    ar = Arena(dev)
    x = ar.tensor(n, fill=xc)
    t = ar.tensor(n, fill=tc)
    loss = ar.tensor(n)

    def verify() -> None:
        ref = torch.nn.functional.binary_cross_entropy_with_logits(
            xc.double(), tc.double(), reduction="none"
        ).float()
        keep = torch.ones(n, dtype=torch.bool)
        if planted:
            keep[[12, 70]] = False
            tol = 1e-4  # the naive formula loses precision for large |x|
        else:
            tol = 1e-5
        torch.testing.assert_close(loss.cpu()[keep], ref[keep], atol=tol, rtol=tol)

    launch = Launch(bce_kernel, (2,), (x, t, loss, n), {"BLOCK": 64, "BUG": int(planted)})
    return Setup([launch], [loss], verify, {"x_ptr": x, "t_ptr": t, "loss_ptr": loss}, ar)


def _bce_expect(s: Setup) -> list[Expect]:
    # x = 40 (program 0) and 45 (program 1): p = 1.0, log(1 - p) = -inf (born there); with t = 1,
    # (1 - t) * lq = 0 * -inf = NaN (born in the loss: it reads -inf, not NaN). |randn * 2| < 17
    # keeps every other p below 1.
    assert float((randn(100, seed=99) * 2).abs().max()) < 16
    c = dict(program=(0, 0, 0), programs=2, instances=2, iteration=None, from_memory=False)
    return [
        Expect("inf_origin", "bce_logq", count=2, **c),
        Expect("nan_origin", "bce_loss", count=2, **c),
    ]


# ================================================================================================
# Gradients cast to fp16 without the loss scale: they flush to zero
# ================================================================================================


@triton.jit
def grad_to_fp16_kernel(g_ptr, out_ptr, n, loss_scale, BLOCK: tl.constexpr, BUG: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(g_ptr + offs, mask=mask, other=0.0)
    if BUG:
        gs = g  # the loss scale forgotten
    else:
        gs = g * loss_scale
    h = gs.to(tl.float16)  # BUG[fp16_flush]
    tl.store(out_ptr + offs, h, mask=mask)


def _flush_make(dev: str, planted: bool) -> Setup:
    n, scale = 100, 2.0**24
    gc = randn(n, seed=101) * 1e-9
    ar = Arena(dev)
    g = ar.tensor(n, fill=gc)
    out = ar.tensor(n, torch.float16)

    def verify() -> None:
        ref = gc.half() if planted else (gc * scale).half()
        assert torch.equal(out.cpu(), ref)

    launch = Launch(
        grad_to_fp16_kernel, (2,), (g, out, n, scale), {"BLOCK": 64, "BUG": int(planted)}
    )
    return Setup([launch], [out], verify, {"g_ptr": g, "out_ptr": out}, ar)


def _flush_expect(s: Setup) -> list[Expect]:
    # |g| <= 5e-9: every one of the 100 (nonzero) values is below half fp16's smallest subnormal
    # (2.98e-8) and rounds to 0; the 28 masked lanes hold 0, which does not count.
    gc = randn(100, seed=101) * 1e-9
    assert float(gc.abs().max()) < 2.9e-8 and int((gc == 0).sum()) == 0
    return [
        Expect(
            "precision_loss",
            "fp16_flush",
            count=100,
            value=float(gc[0]),
            target_dtype="float16",
            program=(0, 0, 0),
            programs=2,
            instances=2,
            iteration=None,
        )
    ]


# ================================================================================================
# Masked mean over a padded batch whose padding holds NaN (torch.empty): the mask uses the padded
# length
# ================================================================================================


@triton.jit
def masked_mean_kernel(
    x_ptr, len_ptr, out_ptr, L, D, BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr, BUG: tl.constexpr
):
    b = tl.program_id(0)
    length = tl.load(len_ptr + b)
    t = tl.arange(0, BLOCK_L)
    d = tl.arange(0, BLOCK_D)
    if BUG:
        tmask = t < L  # every position, padding included
    else:
        tmask = t < length
    x = tl.load(
        x_ptr + b * L * D + t[:, None] * D + d[None, :],
        mask=tmask[:, None] & (d[None, :] < D),
        other=0.0,
    )  # BUG[mean_load]
    s = tl.sum(x, axis=0)
    tl.store(out_ptr + b * D + d, s / length, mask=d < D)


MEAN_LENS = [8, 5, 3]


def _mean_make(dev: str, planted: bool) -> Setup:
    bsz, seq, d = 3, 8, 16
    xc = randn(bsz, seq, d, seed=102)
    for b, n in enumerate(MEAN_LENS):
        xc[b, n:] = float("nan")  # what torch.empty may hold
    ar = Arena(dev)
    x = ar.tensor((bsz, seq, d), fill=xc)
    lens = ar.tensor(bsz, torch.int32, fill=torch.tensor(MEAN_LENS, dtype=torch.int32))
    out = ar.tensor((bsz, d))

    def verify() -> None:
        ref = torch.stack([xc[b, :n].double().mean(0) for b, n in enumerate(MEAN_LENS)]).float()
        rows = [0] if planted else list(range(bsz))
        torch.testing.assert_close(out.cpu()[rows], ref[rows], atol=1e-6, rtol=1e-5)

    launch = Launch(
        masked_mean_kernel,
        (bsz,),
        (x, lens, out, seq, d),
        {"BLOCK_L": 8, "BLOCK_D": 16, "BUG": int(planted)},
    )
    return Setup([launch], [out], verify, {"x_ptr": x, "len_ptr": lens, "out_ptr": out}, ar)


def _mean_expect(s: Setup) -> list[Expect]:
    # batch 1 reads 3 padding rows, batch 2 five: (3 + 5) x 16 = 128 NaN elements from memory.
    return [
        Expect(
            "nan_origin",
            "mean_load",
            count=128,
            from_memory=True,
            program=(1, 0, 0),
            programs=2,
            instances=2,
            iteration=None,
        )
    ]


CASES = [
    Case(
        "int8_quant_zero_row_scale",
        "int8 quantization",
        "per-token absmax scale without a floor: a zero row divides 0 by 0",
        _quant_make,
        _quant_expect,
        checks="nan,inf,domain",
    ),
    Case(
        "int8_dequant_fp16_overflow",
        "int8 quantization",
        "dequantize divides by the scale: values beyond fp16's range on the cast",
        _dq_make,
        _dq_expect,
        checks="precision,inf",
    ),
    Case(
        "int8_dequant_group_scale_overrun",
        "int8 quantization",
        "group scale index of the padded lanes unmasked",
        _grp_make,
        _grp_expect,
    ),
    Case(
        "l2_normalize_nan_descends",
        "normalization",
        "x / ||x|| of a zero row; a second launch loads the NaNs inside an expression (one origin)",
        _l2_make,
        _l2_expect,
        checks="nan,inf,domain",
        features=("runtime-loops",),
    ),
    Case(
        "adam_sqrt_negative_second_moment",
        "optimizer",
        "v accumulates g instead of g*g: sqrt of negatives",
        _adam_make,
        _adam_expect,
        checks="nan,inf,domain",
    ),
    Case(
        "softplus_exp_overflow",
        "activation",
        "log(1 + exp(x)) without the threshold: exp overflows",
        _sp_make,
        _sp_expect,
        checks="nan,inf,domain",
    ),
    Case(
        "bce_log_of_zero",
        "loss",
        "BCE on sigmoid(x): log(1 - p) = -inf at p == 1, then 0 * -inf = NaN",
        _bce_make,
        _bce_expect,
        checks="nan,inf,domain",
    ),
    Case(
        "fp16_grad_cast_flush",
        "mixed precision",
        "gradients cast to fp16 without the loss scale flush to zero",
        _flush_make,
        _flush_expect,
        checks="precision",
    ),
    Case(
        "masked_mean_nan_padding",
        "pooling",
        "mask by the padded length: NaN padding read from memory",
        _mean_make,
        _mean_expect,
        checks="nan,inf",
    ),
]
