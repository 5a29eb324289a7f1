# SPDX-License-Identifier: Apache-2.0
"""Real kernels, written for FlagPrism in the style of Triton's tutorials, that the Debugger must
see whole: a fused attention forward (block pointers, the K/V loop in a @triton.jit helper,
online softmax) and backward (helpers walking pointer blocks), a persistent matmul reading and
writing through host tensor descriptors, and the layer-norm backward that accumulates weight
gradients under a lock (atomic_cas / atomic_xchg).

Each kernel holds collection markers around its body (no-ops unless the Debugger is active;
sanitize mode ignores them) and takes a constexpr that plants one bug (default: off):
* attention forward, `OVERRUN`: the K/V loop of the non-causal stage runs one block past the end
  of K and V;
* attention backward, `OVERRUN`: the dK/dV helper walks one query block past the end of Q and dO;
* persistent matmul: A's host descriptor and the kernel's K say K + BLOCK_K columns while A has
  K (see `make_matmul`): the last K tile of each row reads past the row (B's descriptor zero-fills
  its part, so the product is even unchanged);
* layer-norm backward, `COUNT_OFF`: the counter next to each lock is read and written one slot
  too far.

Launchers build the arguments on a device so that a planted overrun stays in memory the caller
owns (a view into a larger tensor). Used by tests/gpu/test_whole_gpu.py, the cross-compile test
and bench/bench_whole.py; the interpreter runs them at small sizes (test_debugger_whole.py).
"""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

import flagprism.language as fpl

# ------------------------------------------------------------------------------------------------
# Fused attention, forward
# ------------------------------------------------------------------------------------------------


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, K_block_ptr, V_block_ptr, start_m, qk_scale, offs_m, offs_n,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr, N_CTX: tl.constexpr,
                    OVERRUN: tl.constexpr):
    if STAGE == 1:  # blocks left of the diagonal
        lo = 0
        hi = start_m * BLOCK_M
    elif STAGE == 2:  # the diagonal block
        lo = start_m * BLOCK_M
        hi = (start_m + 1) * BLOCK_M
    else:  # everything (non-causal)
        lo = 0
        hi = N_CTX + BLOCK_N * OVERRUN
    K_block_ptr = tl.advance(K_block_ptr, (0, lo))
    V_block_ptr = tl.advance(V_block_ptr, (lo, 0))
    for start_n in range(lo, hi, BLOCK_N):
        k = tl.load(K_block_ptr)
        qk = tl.dot(q, k)
        if STAGE == 2:
            causal = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(causal, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk = qk - m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V_block_ptr)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
        V_block_ptr = tl.advance(V_block_ptr, (BLOCK_N, 0))
        K_block_ptr = tl.advance(K_block_ptr, (0, BLOCK_N))
    return acc, l_i, m_i


@triton.jit
def attn_fwd_kernel(Q, K, V, sm_scale, M, Out, stride_qz, stride_qh, stride_qm, stride_qk, stride_kz, stride_kh,
                    stride_kn, stride_kk, stride_vz, stride_vh, stride_vk, stride_vn, stride_oz, stride_oh, stride_om,
                    stride_on, H, N_CTX: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr, STAGE: tl.constexpr, OVERRUN: tl.constexpr = 0):
    fpl.collect_start()
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    q_offset = off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
    k_offset = off_z.to(tl.int64) * stride_kz + off_h.to(tl.int64) * stride_kh
    v_offset = off_z.to(tl.int64) * stride_vz + off_h.to(tl.int64) * stride_vh
    o_offset = off_z.to(tl.int64) * stride_oz + off_h.to(tl.int64) * stride_oh
    Q_block_ptr = tl.make_block_ptr(base=Q + q_offset, shape=(N_CTX, HEAD_DIM), strides=(stride_qm, stride_qk),
                                    offsets=(start_m * BLOCK_M, 0), block_shape=(BLOCK_M, HEAD_DIM), order=(1, 0))
    V_block_ptr = tl.make_block_ptr(base=V + v_offset, shape=(N_CTX, HEAD_DIM), strides=(stride_vk, stride_vn),
                                    offsets=(0, 0), block_shape=(BLOCK_N, HEAD_DIM), order=(1, 0))
    K_block_ptr = tl.make_block_ptr(base=K + k_offset, shape=(HEAD_DIM, N_CTX), strides=(stride_kk, stride_kn),
                                    offsets=(0, 0), block_shape=(HEAD_DIM, BLOCK_N), order=(0, 1))
    O_block_ptr = tl.make_block_ptr(base=Out + o_offset, shape=(N_CTX, HEAD_DIM), strides=(stride_om, stride_on),
                                    offsets=(start_m * BLOCK_M, 0), block_shape=(BLOCK_M, HEAD_DIM), order=(1, 0))
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1 / ln(2): exp2 instead of exp
    q = tl.load(Q_block_ptr)
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K_block_ptr, V_block_ptr, start_m, qk_scale, offs_m,
                                        offs_n, BLOCK_M, BLOCK_N, 4 - STAGE, N_CTX, OVERRUN)
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K_block_ptr, V_block_ptr, start_m, qk_scale, offs_m,
                                        offs_n, BLOCK_M, BLOCK_N, 2, N_CTX, OVERRUN)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    m_ptrs = M + off_hz * N_CTX + offs_m
    tl.store(m_ptrs, m_i)
    tl.store(O_block_ptr, acc.to(Out.type.element_ty))
    fpl.collect_end()


def attn_reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, sm_scale: float, causal: bool) -> torch.Tensor:
    n = q.shape[2]
    p = torch.matmul(q.float(), k.float().transpose(2, 3)) * sm_scale
    if causal:
        keep = torch.tril(torch.ones((n, n), device=q.device, dtype=torch.bool))
        p = p.masked_fill(~keep, float("-inf"))
    p = torch.softmax(p, dim=-1)
    return torch.matmul(p, v.float()).to(q.dtype)


def _padded(shape: tuple[int, ...], pad_rows: int, device: str, dtype: torch.dtype, gen: torch.Generator):
    """A tensor of `shape` (Z, H, N, D) whose storage has `pad_rows` more rows of D after it: an
    overrun of up to that many rows reads memory the tensor owns."""
    z, h, n, d = shape
    base = torch.randn(z * h * n * d + pad_rows * d, generator=gen).to(device=device, dtype=dtype)
    return base[:z * h * n * d].view(z, h, n, d)


def make_attn_fwd(device: str, z: int = 2, h: int = 2, n_ctx: int = 256, head_dim: int = 64, causal: bool = False,
                  overrun: bool = False, block_m: int = 64, block_n: int = 32, dtype: torch.dtype = torch.float16):
    """(launch, check): launch() runs the forward once; check() compares with torch."""
    gen = torch.Generator().manual_seed(0)
    pad = block_n + 8
    q = _padded((z, h, n_ctx, head_dim), pad, device, dtype, gen)
    k = _padded((z, h, n_ctx, head_dim), pad, device, dtype, gen)
    v = _padded((z, h, n_ctx, head_dim), pad, device, dtype, gen)
    o = torch.empty_like(q)
    m = torch.empty((z, h, n_ctx), device=device, dtype=torch.float32)
    sm_scale = 0.5
    grid = (triton.cdiv(n_ctx, block_m), z * h, 1)
    stage = 3 if causal else 1

    def launch() -> Any:
        return attn_fwd_kernel[grid](q, k, v, sm_scale, m, o, *q.stride(), *k.stride(), *v.stride(), *o.stride(),
                                     h, N_CTX=n_ctx, HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n,
                                     STAGE=stage, OVERRUN=int(overrun), num_warps=4, num_stages=2)

    def check(atol: float = 2e-2) -> None:
        ref = attn_reference(q, k, v, sm_scale, causal)
        torch.testing.assert_close(o, ref, atol=atol, rtol=0)

    return launch, check


# ------------------------------------------------------------------------------------------------
# Fused attention, backward (non-causal): preprocess, dK/dV and dQ through helpers
# ------------------------------------------------------------------------------------------------


@triton.jit
def attn_bwd_preprocess(O, DO, Delta, N_CTX, BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr):
    off_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    off_hz = tl.program_id(1)
    off_n = tl.arange(0, HEAD_DIM)
    o = tl.load(O + off_hz * HEAD_DIM * N_CTX + off_m[:, None] * HEAD_DIM + off_n[None, :])
    do = tl.load(DO + off_hz * HEAD_DIM * N_CTX + off_m[:, None] * HEAD_DIM + off_n[None, :]).to(tl.float32)
    delta = tl.sum(o * do, axis=1)
    tl.store(Delta + off_hz * N_CTX + off_m, delta)


@triton.jit
def _attn_bwd_dkdv(dk, dv, Q, k, v, sm_scale, DO, M, D, stride_tok, stride_d, start_n, start_m, num_steps,
                   BLOCK_M1: tl.constexpr, BLOCK_N1: tl.constexpr, HEAD_DIM: tl.constexpr):
    offs_m = start_m + tl.arange(0, BLOCK_M1)
    offs_n = start_n + tl.arange(0, BLOCK_N1)
    offs_k = tl.arange(0, HEAD_DIM)
    qT_ptrs = Q + offs_m[None, :] * stride_tok + offs_k[:, None] * stride_d
    do_ptrs = DO + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d
    curr_m = start_m
    for blk_idx in range(num_steps):
        qT = tl.load(qT_ptrs)
        offs_m = curr_m + tl.arange(0, BLOCK_M1)
        m = tl.load(M + offs_m)
        qkT = tl.dot(k, qT)
        pT = tl.math.exp2(qkT - m[None, :])
        do = tl.load(do_ptrs)
        ppT = pT.to(do.dtype)
        dv += tl.dot(ppT, do)
        Di = tl.load(D + offs_m)
        dpT = tl.dot(v, tl.trans(do)).to(tl.float32)
        dsT = pT * (dpT - Di[None, :])
        dsT = dsT.to(qT.dtype)
        dk += tl.dot(dsT, tl.trans(qT))
        curr_m += BLOCK_M1
        qT_ptrs += BLOCK_M1 * stride_tok
        do_ptrs += BLOCK_M1 * stride_tok
    return dk, dv


@triton.jit
def _attn_bwd_dq(dq, q, K, V, do, m, D, stride_tok, stride_d, start_m, start_n, num_steps,
                 BLOCK_M2: tl.constexpr, BLOCK_N2: tl.constexpr, HEAD_DIM: tl.constexpr):
    offs_m = start_m + tl.arange(0, BLOCK_M2)
    offs_n = start_n + tl.arange(0, BLOCK_N2)
    offs_k = tl.arange(0, HEAD_DIM)
    kT_ptrs = K + offs_n[None, :] * stride_tok + offs_k[:, None] * stride_d
    vT_ptrs = V + offs_n[None, :] * stride_tok + offs_k[:, None] * stride_d
    Di = tl.load(D + offs_m)
    for blk_idx in range(num_steps):
        kT = tl.load(kT_ptrs)
        vT = tl.load(vT_ptrs)
        qk = tl.dot(q, kT)
        p = tl.math.exp2(qk - m)
        dp = tl.dot(do, vT).to(tl.float32)
        ds = p * (dp - Di[:, None])
        ds = ds.to(kT.dtype)
        dq += tl.dot(ds, tl.trans(kT))
        kT_ptrs += BLOCK_N2 * stride_tok
        vT_ptrs += BLOCK_N2 * stride_tok
    return dq


@triton.jit
def attn_bwd_kernel(Q, K, V, sm_scale, DO, DQ, DK, DV, M, D, stride_z, stride_h, stride_tok, stride_d, H,
                    N_CTX: tl.constexpr, BLOCK_M1: tl.constexpr, BLOCK_N1: tl.constexpr, BLOCK_M2: tl.constexpr,
                    BLOCK_N2: tl.constexpr, HEAD_DIM: tl.constexpr, OVERRUN: tl.constexpr = 0):
    LN2: tl.constexpr = 0.6931471824645996
    fpl.collect_start()
    bhid = tl.program_id(2)
    off_chz = (bhid * N_CTX).to(tl.int64)
    adj = (stride_h * (bhid % H) + stride_z * (bhid // H)).to(tl.int64)
    pid = tl.program_id(0)
    Q += adj
    K += adj
    V += adj
    DO += adj
    DQ += adj
    DK += adj
    DV += adj
    M += off_chz
    D += off_chz
    offs_k = tl.arange(0, HEAD_DIM)
    # dK and dV of one key block, over every query block
    start_n = pid * BLOCK_N1
    offs_n = start_n + tl.arange(0, BLOCK_N1)
    dv = tl.zeros([BLOCK_N1, HEAD_DIM], dtype=tl.float32)
    dk = tl.zeros([BLOCK_N1, HEAD_DIM], dtype=tl.float32)
    k = tl.load(K + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d)
    v = tl.load(V + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d)
    num_steps = N_CTX // BLOCK_M1 + OVERRUN
    dk, dv = _attn_bwd_dkdv(dk, dv, Q, k, v, sm_scale, DO, M, D, stride_tok, stride_d, start_n, 0, num_steps,
                            BLOCK_M1, BLOCK_N1, HEAD_DIM)
    tl.store(DV + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d, dv)
    dk *= sm_scale
    tl.store(DK + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d, dk)
    # dQ of one query block, over every key block
    start_m = pid * BLOCK_M2
    offs_m = start_m + tl.arange(0, BLOCK_M2)
    q = tl.load(Q + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d)
    dq = tl.zeros([BLOCK_M2, HEAD_DIM], dtype=tl.float32)
    do = tl.load(DO + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d)
    m = tl.load(M + offs_m)
    m = m[:, None]
    dq = _attn_bwd_dq(dq, q, K, V, do, m, D, stride_tok, stride_d, start_m, 0, N_CTX // BLOCK_N2, BLOCK_M2,
                      BLOCK_N2, HEAD_DIM)
    dq *= LN2
    tl.store(DQ + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d, dq)
    fpl.collect_end()


def make_attn_bwd(device: str, z: int = 1, h: int = 2, n_ctx: int = 128, head_dim: int = 64, overrun: bool = False,
                  block: int = 32, dtype: torch.dtype = torch.float16):
    """(launch, check): the forward (plain torch, for M) then the backward kernels; check()
    compares dQ, dK, dV with torch autograd."""
    gen = torch.Generator().manual_seed(1)
    pad = block + 8
    q = _padded((z, h, n_ctx, head_dim), pad, device, dtype, gen)
    k = _padded((z, h, n_ctx, head_dim), pad, device, dtype, gen)
    v = _padded((z, h, n_ctx, head_dim), pad, device, dtype, gen)
    do = _padded((z, h, n_ctx, head_dim), pad, device, dtype, gen)
    sm_scale = 0.5
    rcp_ln2 = 1.4426950408889634
    s = torch.matmul(q.float(), k.float().transpose(2, 3)) * sm_scale
    p = torch.softmax(s, dim=-1)
    o = torch.matmul(p, v.float()).to(dtype)
    lse = torch.logsumexp(s, dim=-1)  # natural log
    # log2 units, as the kernel's exp2 expects; M and Delta keep spare room after them too
    m_store = torch.zeros(z * h * n_ctx + pad, device=device)
    m = m_store[:z * h * n_ctx].view(z, h, n_ctx)
    m.copy_(lse * rcp_ln2)
    delta = torch.zeros(z * h * n_ctx + pad, device=device)[:z * h * n_ctx].view(z, h, n_ctx)
    dq = torch.zeros_like(q, dtype=torch.float32)
    dk = torch.empty_like(k)
    dv = torch.empty_like(v)
    arg_k = k * (sm_scale * rcp_ln2)

    def launch() -> Any:
        attn_bwd_preprocess[(n_ctx // block, z * h)](o, do, delta, n_ctx, BLOCK_M=block, HEAD_DIM=head_dim)
        return attn_bwd_kernel[(n_ctx // block, 1, z * h)](
            q, arg_k, v, sm_scale, do, dq, dk, dv, m, delta, q.stride(0), q.stride(1), q.stride(2), q.stride(3), h,
            N_CTX=n_ctx, BLOCK_M1=block, BLOCK_N1=block, BLOCK_M2=block, BLOCK_N2=block, HEAD_DIM=head_dim,
            OVERRUN=int(overrun), num_warps=4, num_stages=1)

    def check(atol: float = 3e-2) -> None:
        qf, kf, vf = (t.detach().float().requires_grad_() for t in (q, k, v))
        ref = torch.matmul(torch.softmax(torch.matmul(qf, kf.transpose(2, 3)) * sm_scale, dim=-1), vf)
        ref.backward(do.float())
        torch.testing.assert_close(dv.float(), vf.grad, atol=atol, rtol=0)
        torch.testing.assert_close(dk.float(), kf.grad, atol=atol, rtol=0)
        torch.testing.assert_close(dq.float(), qf.grad, atol=atol, rtol=0)

    return launch, check


# ------------------------------------------------------------------------------------------------
# Persistent matmul through host tensor descriptors (TMA on Hopper)
# ------------------------------------------------------------------------------------------------


@triton.jit
def _tile_pids(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M: tl.constexpr):
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (tile_id % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def matmul_tma_persistent_kernel(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                 BLOCK_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr, NUM_SMS: tl.constexpr):
    fpl.collect_start()
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS):
        pid_m, pid_n = _tile_pids(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M)
        offs_am = pid_m * BLOCK_M
        offs_bn = pid_n * BLOCK_N
        accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_K
            a = a_desc.load([offs_am, offs_k])
            b = b_desc.load([offs_bn, offs_k])
            accumulator = tl.dot(a, b.T, accumulator)
        c = accumulator.to(tl.float16)
        c_desc.store([offs_am, offs_bn], c)
    fpl.collect_end()


def make_matmul(device: str, m: int = 512, n: int = 512, k: int = 512, planted: bool = False, num_sms: int = 8,
                block_m: int = 128, block_n: int = 128, block_k: int = 64):
    """(launch, check). planted: A's descriptor and the kernel's K say K + block_k columns (A has K):
    the last K tile of every row block reads past each row into the next (and past the end of A,
    into memory A's storage owns)."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    gen = torch.Generator().manual_seed(2)
    pad = (block_m + 8) * k
    a_store = torch.randn(m * k + pad, generator=gen).to(device=device, dtype=torch.float16)
    a = a_store[:m * k].view(m, k)
    b = torch.randn(n, k, generator=gen).to(device=device, dtype=torch.float16)  # B^T, K-major
    c = torch.empty(m, n, device=device, dtype=torch.float16)
    a_desc = TensorDescriptor(a, [m, k + (block_k if planted else 0)], [k, 1], [block_m, block_k])
    b_desc = TensorDescriptor.from_tensor(b, [block_n, block_k])
    c_desc = TensorDescriptor.from_tensor(c, [block_m, block_n])
    grid = (min(num_sms, triton.cdiv(m, block_m) * triton.cdiv(n, block_n)),)

    def launch() -> Any:
        kk = k + (block_k if planted else 0)
        return matmul_tma_persistent_kernel[grid](a_desc, b_desc, c_desc, m, n, kk, BLOCK_M=block_m, BLOCK_N=block_n,
                                                  BLOCK_K=block_k, GROUP_SIZE_M=8, NUM_SMS=grid[0], num_warps=8,
                                                  num_stages=3)

    def check(atol: float = 1e-1) -> None:
        torch.testing.assert_close(c.float(), a.float() @ b.float().t(), atol=atol, rtol=1e-2)

    return launch, check


# ------------------------------------------------------------------------------------------------
# Layer-norm backward: dX, and partial dW/dB accumulated under a lock per row group
# ------------------------------------------------------------------------------------------------


@triton.jit
def layer_norm_bwd_dx_kernel(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N, GROUP_SIZE_M: tl.constexpr,
                             BLOCK_SIZE_N: tl.constexpr, COUNT_OFF: tl.constexpr = 0):
    fpl.collect_start()
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M + COUNT_OFF
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
    partial_dw = (dy * xhat).to(tl.float32)
    partial_db = dy.to(tl.float32)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)
    fpl.collect_end()


def make_layer_norm_bwd(device: str, m: int = 256, n: int = 512, group: int = 16, count_off: bool = False):
    """(launch, check): dX per row and the partial dW/dB of each row group; check() compares the
    summed partials and dX with torch autograd."""
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(m, n, generator=gen).to(device)
    w = torch.randn(n, generator=gen).to(device)
    b = torch.randn(n, generator=gen).to(device)
    dy = torch.randn(m, n, generator=gen).to(device)
    eps = 1e-5
    mean = x.mean(1)
    rstd = 1.0 / torch.sqrt(x.var(1, unbiased=False) + eps)
    dx = torch.empty_like(x)
    # locks then counters; one spare slot each side keeps a planted off-by-one in our memory
    lock_store = torch.zeros(2 * group + 8, dtype=torch.int32, device=device)
    locks = lock_store[:2 * group]
    dw_part = torch.zeros(group, n, device=device)
    db_part = torch.zeros(group, n, device=device)
    block_n = triton.next_power_of_2(n)

    def launch() -> Any:
        locks.zero_()
        dw_part.zero_()
        db_part.zero_()
        return layer_norm_bwd_dx_kernel[(m,)](dx, dy, dw_part, db_part, x, w, mean, rstd, locks, x.stride(0), n,
                                              GROUP_SIZE_M=group, BLOCK_SIZE_N=block_n, COUNT_OFF=int(count_off),
                                              num_warps=8)

    def check(atol: float = 1e-3) -> None:
        xr = x.clone().requires_grad_()
        wr = w.clone().requires_grad_()
        br = b.clone().requires_grad_()
        y = torch.nn.functional.layer_norm(xr, (n,), wr, br, eps)
        y.backward(dy)
        torch.testing.assert_close(dx, xr.grad, atol=atol, rtol=1e-3)
        torch.testing.assert_close(dw_part.sum(0), wr.grad, atol=10 * atol, rtol=1e-3)
        torch.testing.assert_close(db_part.sum(0), br.grad, atol=10 * atol, rtol=1e-3)

    return launch, check
