# SPDX-License-Identifier: Apache-2.0
"""Kernels in the style of Triton-Ascend's tutorials, for tests/python/test_ascend.py: a fixed
number of programs (one per AI core) that each walk their share of the rows or blocks, instead
of one program per block as the GPU tutorials launch. Vector add, softmax, layer norm (with a
@triton.jit helper), matmul (K loop, tl.dot), fused attention forward (block pointers, online
softmax) and a histogram (atomics). Each holds collection markers around its body.

Only compiled, never run, here: there is no NPU (and Triton-Ascend 3.2's CPU launcher is an
empty template: docs/guide/backends.md).
"""

import triton
import triton.language as tl

import flagprism.language as fpl


@triton.jit
def asc_add_kernel(x_ptr, y_ptr, out_ptr, n, NUM_CORES: tl.constexpr, BLOCK: tl.constexpr):
    fpl.collect_start()
    pid = tl.program_id(0)
    nblocks = tl.cdiv(n, BLOCK)
    for b in range(pid, nblocks, NUM_CORES):
        offs = b * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        y = tl.load(y_ptr + offs, mask=mask, other=0.0)
        tl.store(out_ptr + offs, x + y, mask=mask)
    fpl.collect_end()


@triton.jit
def asc_softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols, NUM_CORES: tl.constexpr,
                       BLOCK: tl.constexpr):
    fpl.collect_start()
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    for row in range(pid, n_rows, NUM_CORES):
        x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
        z = x - tl.max(x, axis=0)
        num = tl.exp(z)
        den = tl.sum(num, axis=0)
        tl.store(out_ptr + row * out_stride + cols, num / den, mask=mask)
    fpl.collect_end()


@triton.jit
def _asc_rstd(var, eps):
    return 1.0 / tl.sqrt(var + eps)


@triton.jit
def asc_layer_norm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, n_rows, N, eps,
                          NUM_CORES: tl.constexpr, BLOCK: tl.constexpr):
    fpl.collect_start()
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    for row in range(pid, n_rows, NUM_CORES):
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
        mean = tl.sum(x, axis=0) / N
        xc = tl.where(mask, x - mean, 0.0)
        var = tl.sum(xc * xc, axis=0) / N
        rstd = _asc_rstd(var, eps)
        tl.store(mean_ptr + row, mean)
        tl.store(rstd_ptr + row, rstd)
        tl.store(y_ptr + row * stride + cols, xc * rstd * w + b, mask=mask)
    fpl.collect_end()


@triton.jit
def asc_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                      stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    fpl.collect_start()
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // grid_n
    pid_n = pid % grid_n
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a_mask = (offs_m[:, None] < M) & ((k + offs_k)[None, :] < K)
        b_mask = ((k + offs_k)[:, None] < K) & (offs_n[None, :] < N)
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + (k + offs_k)[None, :] * stride_ak, mask=a_mask, other=0.0)
        b = tl.load(b_ptr + (k + offs_k)[:, None] * stride_bk + offs_n[None, :] * stride_bn, mask=b_mask, other=0.0)
        acc = tl.dot(a, b, acc)
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, acc, mask=c_mask)
    fpl.collect_end()


@triton.jit
def asc_attn_fwd_kernel(Q, K, V, Out, sm_scale, stride_m, stride_d, N_CTX: tl.constexpr, HEAD_DIM: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    fpl.collect_start()
    start_m = tl.program_id(0)
    q_bp = tl.make_block_ptr(base=Q, shape=(N_CTX, HEAD_DIM), strides=(stride_m, stride_d),
                             offsets=(start_m * BLOCK_M, 0), block_shape=(BLOCK_M, HEAD_DIM), order=(1, 0))
    k_bp = tl.make_block_ptr(base=K, shape=(HEAD_DIM, N_CTX), strides=(stride_d, stride_m), offsets=(0, 0),
                             block_shape=(HEAD_DIM, BLOCK_N), order=(0, 1))
    v_bp = tl.make_block_ptr(base=V, shape=(N_CTX, HEAD_DIM), strides=(stride_m, stride_d), offsets=(0, 0),
                             block_shape=(BLOCK_N, HEAD_DIM), order=(1, 0))
    o_bp = tl.make_block_ptr(base=Out, shape=(N_CTX, HEAD_DIM), strides=(stride_m, stride_d),
                             offsets=(start_m * BLOCK_M, 0), block_shape=(BLOCK_M, HEAD_DIM), order=(1, 0))
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    q = tl.load(q_bp)
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(k_bp)
        qk = tl.dot(q, k) * sm_scale
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_ij[:, None])
        alpha = tl.exp(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_bp)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_ij
        k_bp = tl.advance(k_bp, (0, BLOCK_N))
        v_bp = tl.advance(v_bp, (BLOCK_N, 0))
    acc = acc / l_i[:, None]
    tl.store(o_bp, acc.to(Out.type.element_ty))
    fpl.collect_end()


@triton.jit
def asc_hist_kernel(x_ptr, bins_ptr, n, NB: tl.constexpr, NUM_CORES: tl.constexpr, BLOCK: tl.constexpr):
    fpl.collect_start()
    pid = tl.program_id(0)
    for b in range(pid, tl.cdiv(n, BLOCK), NUM_CORES):
        offs = b * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0)
        tl.atomic_add(bins_ptr + (x % NB), 1, mask=mask)
    fpl.collect_end()


@triton.jit
def asc_timer_kernel(out_ptr):
    # what an intra-kernel timeline record needs: a device clock read through inline assembly
    t = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)
    tl.store(out_ptr, t)
