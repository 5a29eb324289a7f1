# SPDX-License-Identifier: Apache-2.0
"""Attention kernels of the corpus (see corpus/__init__.py): the flash-attention forward of
Triton's tutorial (block pointers advanced inside a helper), its backward (pointer blocks walked by
helpers) and a vLLM-style paged-attention decode that gathers K and V through a block table.

fp32 throughout (the interpreter's tl.dot; on a GPU tl.dot of fp32 uses TF32, hence the
tolerances). Addresses (``addr``) are relative to the start of the parameter's view; lanes are
numbered row-major over the access' block; programs linearly (x fastest).
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from . import Arena, Case, Expect, Launch, Setup, randn

# ================================================================================================
# Flash attention, forward: the K/V loop of the helper runs one block too far
# ================================================================================================


@triton.jit
def _attn_fwd_inner(
    acc,
    l_i,
    m_i,
    q,
    K_block_ptr,
    V_block_ptr,
    qk_scale,
    N_CTX: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BUG: tl.constexpr,
):
    lo = 0
    if BUG:
        hi = N_CTX + BLOCK_N  # one block too far
    else:
        hi = N_CTX
    K_block_ptr = tl.advance(K_block_ptr, (0, lo))
    V_block_ptr = tl.advance(V_block_ptr, (lo, 0))
    for start_n in range(lo, hi, BLOCK_N):
        k = tl.load(K_block_ptr)  # BUG[attn_k]
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V_block_ptr)  # BUG[attn_v]
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
        V_block_ptr = tl.advance(V_block_ptr, (BLOCK_N, 0))
        K_block_ptr = tl.advance(K_block_ptr, (0, BLOCK_N))
    return acc, l_i, m_i


@triton.jit
def attn_fwd_kernel(
    Q,
    K,
    V,
    sm_scale,
    Out,
    stride_qz,
    stride_qh,
    stride_qm,
    stride_qk,
    stride_kz,
    stride_kh,
    stride_kn,
    stride_kk,
    stride_vz,
    stride_vh,
    stride_vn,
    stride_vk,
    stride_oz,
    stride_oh,
    stride_om,
    stride_ok,
    H,
    N_CTX: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BUG: tl.constexpr,
):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    q_offset = off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
    k_offset = off_z.to(tl.int64) * stride_kz + off_h.to(tl.int64) * stride_kh
    v_offset = off_z.to(tl.int64) * stride_vz + off_h.to(tl.int64) * stride_vh
    o_offset = off_z.to(tl.int64) * stride_oz + off_h.to(tl.int64) * stride_oh
    Q_block_ptr = tl.make_block_ptr(
        base=Q + q_offset,
        shape=(N_CTX, HEAD_DIM),
        strides=(stride_qm, stride_qk),
        offsets=(start_m * BLOCK_M, 0),
        block_shape=(BLOCK_M, HEAD_DIM),
        order=(1, 0),
    )
    V_block_ptr = tl.make_block_ptr(
        base=V + v_offset,
        shape=(N_CTX, HEAD_DIM),
        strides=(stride_vn, stride_vk),
        offsets=(0, 0),
        block_shape=(BLOCK_N, HEAD_DIM),
        order=(1, 0),
    )
    K_block_ptr = tl.make_block_ptr(
        base=K + k_offset,
        shape=(HEAD_DIM, N_CTX),
        strides=(stride_kk, stride_kn),
        offsets=(0, 0),
        block_shape=(HEAD_DIM, BLOCK_N),
        order=(0, 1),
    )
    O_block_ptr = tl.make_block_ptr(
        base=Out + o_offset,
        shape=(N_CTX, HEAD_DIM),
        strides=(stride_om, stride_ok),
        offsets=(start_m * BLOCK_M, 0),
        block_shape=(BLOCK_M, HEAD_DIM),
        order=(1, 0),
    )
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1 / ln(2): exp2 instead of exp
    q = tl.load(Q_block_ptr)
    acc, l_i, m_i = _attn_fwd_inner(
        acc, l_i, m_i, q, K_block_ptr, V_block_ptr, qk_scale, N_CTX, BLOCK_N, BUG
    )
    acc = acc / l_i[:, None]
    tl.store(O_block_ptr, acc.to(Out.type.element_ty))


def attn_reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    p = torch.softmax(torch.matmul(q.double(), k.double().transpose(-1, -2)) * sm_scale, dim=-1)
    return torch.matmul(p, v.double()).float()


def _attn_fwd(kv_slices: bool):
    def make(dev: str, planted: bool) -> Setup:
        z, h, n, d, bm, bn = 1, 2, 32, 16, 16, 16
        shape = (z, h, n, d)
        ar = Arena(dev)
        q = ar.tensor(shape, fill=randn(*shape, seed=30))
        if kv_slices:
            kv = ar.tensor((2, *shape))  # one tensor, K = kv[0], V = kv[1]
            k, v = kv[0], kv[1]
            k.copy_(randn(*shape, seed=31))
            v.copy_(randn(*shape, seed=32))
        else:
            k = ar.tensor(shape, fill=randn(*shape, seed=31))
            v = ar.tensor(shape, fill=randn(*shape, seed=32), adjacent=True)  # V right after K
        o = ar.tensor(shape)
        sm_scale = 0.5
        qr, kr, vr = q.cpu().clone(), k.cpu().clone(), v.cpu().clone()

        def verify() -> None:
            torch.testing.assert_close(
                o.cpu(), attn_reference(qr, kr, vr, sm_scale), atol=2e-2, rtol=0
            )

        launch = Launch(
            attn_fwd_kernel,
            (n // bm, z * h),
            (q, k, v, sm_scale, o, *q.stride(), *k.stride(), *v.stride(), *o.stride(), h),
            {"N_CTX": n, "HEAD_DIM": d, "BLOCK_M": bm, "BLOCK_N": bn, "BUG": int(planted)},
        )
        return Setup(
            [launch], [o], None if planted else verify, {"Q": q, "K": k, "V": v, "Out": o}, ar
        )

    return make


def _attn_fwd_expect(kv_slices: bool):
    def expect(s: Setup) -> list[Expect]:
        # Z = 1, H = 2, N_CTX = 32, D = 16, blocks of 16. The extra trip (start_n = 32) reads keys
        # 32..47 of its head: for head 0 those are head 1's first keys (inside K), for head 1 the
        # 16 x 16 lanes at elements 1024..1279, past the 1024-element K (and V): every lane, 1024
        # bytes, first lane 0 at element 1024. Both programs of head 1 ((0, 1) and (1, 1)) do it.
        c = dict(
            function="_attn_fwd_inner",
            chain=("_attn_fwd_inner",),
            past=1024,
            lanes=512,
            addr=4096,
            program=(0, 1, 0),
            programs=2,
            instances=2,
            iteration=("start_n", 32),
        )
        return [
            Expect(
                "out_of_bounds",
                "attn_k",
                param="K",
                location="inside_storage" if kv_slices else "other_storage",
                other_param="V",
                **c,
            ),
            Expect("out_of_bounds", "attn_v", param="V", location="outside_allocations", **c),
        ]

    return expect


# ================================================================================================
# Flash attention, backward: the dK/dV helper walks one query block too far
# ================================================================================================


@triton.jit
def attn_bwd_preprocess(O, DO, Delta, N_CTX, BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr):
    off_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    off_hz = tl.program_id(1)
    off_n = tl.arange(0, HEAD_DIM)
    o = tl.load(O + off_hz * HEAD_DIM * N_CTX + off_m[:, None] * HEAD_DIM + off_n[None, :])
    do = tl.load(DO + off_hz * HEAD_DIM * N_CTX + off_m[:, None] * HEAD_DIM + off_n[None, :])
    delta = tl.sum(o * do, axis=1)
    tl.store(Delta + off_hz * N_CTX + off_m, delta)


@triton.jit
def _attn_bwd_dkdv(
    dk,
    dv,
    Q,
    k,
    v,
    DO,
    M,
    D,
    stride_tok,
    stride_d,
    start_m,
    num_steps,
    BLOCK_M1: tl.constexpr,
    HEAD_DIM: tl.constexpr,
):
    offs_m = start_m + tl.arange(0, BLOCK_M1)
    offs_k = tl.arange(0, HEAD_DIM)
    qT_ptrs = Q + offs_m[None, :] * stride_tok + offs_k[:, None] * stride_d
    do_ptrs = DO + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d
    curr_m = start_m
    for blk_idx in range(num_steps):
        qT = tl.load(qT_ptrs)  # BUG[bwd_q]
        offs_m = curr_m + tl.arange(0, BLOCK_M1)
        m = tl.load(M + offs_m)  # BUG[bwd_m]
        qkT = tl.dot(k, qT)
        pT = tl.math.exp2(qkT - m[None, :])
        do = tl.load(do_ptrs)  # BUG[bwd_do]
        dv += tl.dot(pT, do)
        Di = tl.load(D + offs_m)  # BUG[bwd_delta]
        dpT = tl.dot(v, tl.trans(do))
        dsT = pT * (dpT - Di[None, :])
        dk += tl.dot(dsT, tl.trans(qT))
        curr_m += BLOCK_M1
        qT_ptrs += BLOCK_M1 * stride_tok
        do_ptrs += BLOCK_M1 * stride_tok
    return dk, dv


@triton.jit
def _attn_bwd_dq(
    dq,
    q,
    K,
    V,
    do,
    m,
    D,
    stride_tok,
    stride_d,
    start_m,
    num_steps,
    BLOCK_M2: tl.constexpr,
    BLOCK_N2: tl.constexpr,
    HEAD_DIM: tl.constexpr,
):
    offs_m = start_m + tl.arange(0, BLOCK_M2)
    offs_n = tl.arange(0, BLOCK_N2)
    offs_k = tl.arange(0, HEAD_DIM)
    kT_ptrs = K + offs_n[None, :] * stride_tok + offs_k[:, None] * stride_d
    vT_ptrs = V + offs_n[None, :] * stride_tok + offs_k[:, None] * stride_d
    Di = tl.load(D + offs_m)
    for blk_idx in range(num_steps):
        kT = tl.load(kT_ptrs)
        vT = tl.load(vT_ptrs)
        qk = tl.dot(q, kT)
        p = tl.math.exp2(qk - m)
        dp = tl.dot(do, vT)
        ds = p * (dp - Di[:, None])
        dq += tl.dot(ds, tl.trans(kT))
        kT_ptrs += BLOCK_N2 * stride_tok
        vT_ptrs += BLOCK_N2 * stride_tok
    return dq


@triton.jit
def attn_bwd_kernel(
    Q,
    K,
    V,
    sm_scale,
    DO,
    DQ,
    DK,
    DV,
    M,
    D,
    stride_z,
    stride_h,
    stride_tok,
    stride_d,
    H,
    N_CTX: tl.constexpr,
    BLOCK_M1: tl.constexpr,
    BLOCK_N1: tl.constexpr,
    BLOCK_M2: tl.constexpr,
    BLOCK_N2: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BUG: tl.constexpr,
):
    LN2: tl.constexpr = 0.6931471824645996
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
    if BUG:
        num_steps = N_CTX // BLOCK_M1 + 1  # one query block too many
    else:
        num_steps = N_CTX // BLOCK_M1
    dk, dv = _attn_bwd_dkdv(
        dk, dv, Q, k, v, DO, M, D, stride_tok, stride_d, 0, num_steps, BLOCK_M1, HEAD_DIM
    )
    tl.store(DV + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d, dv)
    dk *= sm_scale
    tl.store(DK + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d, dk)
    # dQ of one query block, over every key block
    start_m = pid * BLOCK_M2
    offs_m = start_m + tl.arange(0, BLOCK_M2)
    q = tl.load(Q + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d)
    do = tl.load(DO + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d)
    m = tl.load(M + offs_m)
    m = m[:, None]
    dq = tl.zeros([BLOCK_M2, HEAD_DIM], dtype=tl.float32)
    dq = _attn_bwd_dq(
        dq,
        q,
        K,
        V,
        do,
        m,
        D,
        stride_tok,
        stride_d,
        start_m,
        N_CTX // BLOCK_N2,
        BLOCK_M2,
        BLOCK_N2,
        HEAD_DIM,
    )
    dq *= LN2
    tl.store(DQ + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d, dq)


def _attn_bwd_make(dev: str, planted: bool) -> Setup:
    z, h, n, d, blk = 1, 2, 32, 16, 16
    shape = (z, h, n, d)
    sm_scale = 0.5
    rcp_ln2 = 1.4426950408889634
    qc, kc, vc, doc = (randn(*shape, seed=40 + i) for i in range(4))
    s = torch.matmul(qc.double(), kc.double().transpose(2, 3)) * sm_scale
    o_ref = torch.matmul(torch.softmax(s, dim=-1), vc.double()).float()
    lse2 = (torch.logsumexp(s, dim=-1) * rcp_ln2).float()  # log2 units, as exp2 expects
    ar = Arena(dev)
    q = ar.tensor(shape, fill=qc)
    k = ar.tensor(shape, fill=kc * (sm_scale * rcp_ln2), adjacent=True)  # K follows Q
    v = ar.tensor(shape, fill=vc)
    do = ar.tensor(shape, fill=doc)
    o = ar.tensor(shape, fill=o_ref)
    m = ar.tensor((z, h, n), fill=lse2)
    delta = ar.tensor((z, h, n), adjacent=True)  # Delta follows M
    dq = ar.tensor(shape)
    dk = ar.tensor(shape)
    dv = ar.tensor(shape)

    def verify() -> None:
        qf, kf, vf = (t.double().requires_grad_() for t in (qc, kc, vc))
        ref = torch.matmul(
            torch.softmax(torch.matmul(qf, kf.transpose(2, 3)) * sm_scale, dim=-1), vf
        )
        ref.backward(doc.double())
        torch.testing.assert_close(dv.cpu().double(), vf.grad, atol=3e-2, rtol=0)
        torch.testing.assert_close(dk.cpu().double(), kf.grad, atol=3e-2, rtol=0)
        torch.testing.assert_close(dq.cpu().double(), qf.grad, atol=3e-2, rtol=0)

    launches = [
        Launch(
            attn_bwd_preprocess,
            (n // blk, z * h),
            (o, do, delta, n),
            {"BLOCK_M": blk, "HEAD_DIM": d},
        ),
        Launch(
            attn_bwd_kernel,
            (n // blk, 1, z * h),
            (q, k, v, sm_scale, do, dq, dk, dv, m, delta, *q.stride(), h),
            {
                "N_CTX": n,
                "BLOCK_M1": blk,
                "BLOCK_N1": blk,
                "BLOCK_M2": blk,
                "BLOCK_N2": blk,
                "HEAD_DIM": d,
                "BUG": int(planted),
            },
        ),
    ]
    return Setup(
        launches,
        [delta, dq, dk, dv],
        None if planted else verify,
        {"Q": q, "K": k, "V": v, "DO": do, "DQ": dq, "DK": dk, "DV": dv, "M": m, "D": delta},
        ar,
    )


def _attn_bwd_expect(s: Setup) -> list[Expect]:
    # num_steps = 3 instead of 2: trip blk_idx = 2 reads query rows 32..47 of its head. Head 0: head
    # 1's rows (inside every tensor). Head 1 (programs (0, 0, 1) and (1, 0, 1), linear 2 and 3): Q
    # and DO rows 32..47 are elements 1024..1279 of 1024: all 16 x 16 lanes, 1024 bytes, first lane
    # 0; M and D (logsumexp and delta, 64 elements each) at 64..79: 16 lanes each, 64 bytes.
    # Q is followed by K, M by D; DO and D by nothing of the launch.
    c = dict(
        kernel="attn_bwd_kernel",
        function="_attn_bwd_dkdv",
        chain=("_attn_bwd_dkdv",),
        program=(0, 0, 1),
        programs=2,
        instances=2,
        iteration=("blk_idx", 2),
    )
    return [
        Expect(
            "out_of_bounds",
            "bwd_q",
            param="Q",
            location="other_storage",
            other_param="K",
            past=1024,
            lanes=512,
            addr=4096,
            **c,
        ),
        Expect(
            "out_of_bounds",
            "bwd_m",
            param="M",
            location="other_storage",
            other_param="D",
            past=64,
            lanes=32,
            addr=256,
            **c,
        ),
        Expect(
            "out_of_bounds",
            "bwd_do",
            param="DO",
            location="outside_allocations",
            past=1024,
            lanes=512,
            addr=4096,
            **c,
        ),
        Expect(
            "out_of_bounds",
            "bwd_delta",
            param="D",
            location="outside_allocations",
            past=64,
            lanes=32,
            addr=256,
            **c,
        ),
    ]


# ================================================================================================
# Paged attention (vLLM-style decode): a block-table entry points past the KV cache
# ================================================================================================


@triton.jit
def paged_attention_decode_kernel(
    out_ptr,
    q_ptr,
    key_cache_ptr,
    value_cache_ptr,
    block_tables_ptr,
    seq_lens_ptr,
    scale,
    stride_bt,
    NUM_HEADS: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    seq = tl.program_id(0)
    head = tl.program_id(1)
    seq_len = tl.load(seq_lens_ptr + seq)
    d = tl.arange(0, HEAD_DIM)
    tok = tl.arange(0, BLOCK_SIZE)
    q = tl.load(q_ptr + (seq * NUM_HEADS + head) * HEAD_DIM + d)
    m_i = tl.full([], float("-inf"), tl.float32)
    l_i = tl.full([], 0.0, tl.float32)
    acc = tl.zeros([HEAD_DIM], dtype=tl.float32)
    num_blocks = tl.cdiv(seq_len, BLOCK_SIZE)
    for b in range(num_blocks):
        phys = tl.load(block_tables_ptr + seq * stride_bt + b)
        pos = b * BLOCK_SIZE + tok
        valid = pos < seq_len
        kv_offs = (
            phys * (BLOCK_SIZE * NUM_HEADS * HEAD_DIM)
            + tok[:, None] * (NUM_HEADS * HEAD_DIM)
            + head * HEAD_DIM
            + d[None, :]
        )
        k = tl.load(key_cache_ptr + kv_offs, mask=valid[:, None], other=0.0)  # BUG[paged_k]
        s = tl.sum(q[None, :] * k, axis=1) * scale
        s = tl.where(valid, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=0))
        p = tl.exp(s - m_new)
        alpha = tl.exp(m_i - m_new)
        v = tl.load(value_cache_ptr + kv_offs, mask=valid[:, None], other=0.0)  # BUG[paged_v]
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        l_i = l_i * alpha + tl.sum(p, axis=0)
        m_i = m_new
    tl.store(out_ptr + (seq * NUM_HEADS + head) * HEAD_DIM + d, acc / l_i)


PAGED_TABLE = [[2, 5, 0, 0], [1, 3, 4, 9], [7, 8, 0, 0]]
PAGED_LENS = [10, 16, 5]


def _paged_make(dev: str, planted: bool) -> Setup:
    seqs, heads, hd, bs, nblocks = 3, 2, 16, 4, 10
    table = torch.tensor(PAGED_TABLE, dtype=torch.int32)
    if planted:
        table[1, 3] = nblocks  # one past the last physical block
    ar = Arena(dev)
    kv = ar.tensor((2, nblocks, bs, heads, hd), fill=randn(2, nblocks, bs, heads, hd, seed=50))
    q = ar.tensor((seqs, heads, hd), fill=randn(seqs, heads, hd, seed=51))
    bt = ar.tensor((seqs, 4), torch.int32, fill=table)
    lens = ar.tensor(seqs, torch.int32, fill=torch.tensor(PAGED_LENS, dtype=torch.int32))
    out = ar.tensor((seqs, heads, hd))
    scale = 1.0 / math.sqrt(hd)
    kvr, qr = kv.cpu().clone(), q.cpu().clone()

    def verify() -> None:
        for s in range(seqs):
            if planted and s == 1:
                continue  # the bad block: sequence 1 is wrong, 0 and 2 must not change
            n = PAGED_LENS[s]
            blocks = torch.tensor(PAGED_TABLE[s][: triton.cdiv(n, bs)])
            kk = kvr[0, blocks].reshape(-1, heads, hd)[:n]
            vv = kvr[1, blocks].reshape(-1, heads, hd)[:n]
            for hh in range(heads):
                p = torch.softmax((kk[:, hh].double() @ qr[s, hh].double()) * scale, dim=0)
                torch.testing.assert_close(
                    out.cpu()[s, hh].double(), p @ vv[:, hh].double(), atol=1e-5, rtol=1e-5
                )

    launch = Launch(
        paged_attention_decode_kernel,
        (seqs, heads),
        (out, q, kv[0], kv[1], bt, lens, scale, 4),
        {"NUM_HEADS": heads, "HEAD_DIM": hd, "BLOCK_SIZE": bs},
    )
    return Setup(
        [launch],
        [out],
        verify,
        {
            "out_ptr": out,
            "q_ptr": q,
            "key_cache_ptr": kv[0],
            "value_cache_ptr": kv[1],
            "block_tables_ptr": bt,
            "seq_lens_ptr": lens,
        },
        ar,
    )


def _paged_expect(s: Setup) -> list[Expect]:
    # sequence 1 (16 tokens, blocks [1, 3, 4, 10]) reads block 10 of a 10-block cache at trip b = 3:
    # elements 1280 + tok * 32 + head * 16 + d, all 4 tokens valid: 64 lanes per head, the first at
    # element 1280, the highest (head 1) 1280 + 96 + 16 + 15 = 1407: 512 bytes. Programs (1, 0) and
    # (1, 1) (linear 1 and 4). K = kv[0], V = kv[1]: K's overrun reads V.
    c = dict(
        past=512,
        lanes=128,
        addr=5120,
        program=(1, 0, 0),
        programs=2,
        instances=2,
        iteration=("b", 3),
    )
    return [
        Expect(
            "out_of_bounds",
            "paged_k",
            param="key_cache_ptr",
            location="inside_storage",
            other_param="value_cache_ptr",
            **c,
        ),
        Expect(
            "out_of_bounds", "paged_v", param="value_cache_ptr", location="outside_allocations", **c
        ),
    ]


CASES = [
    Case(
        "flash_attn_fwd_kv_overrun_adjacent",
        "flash attention",
        "K/V loop in the helper one block too far (block "
        "pointers, tl.advance); K and V separately allocated, V right after K",
        _attn_fwd(False),
        _attn_fwd_expect(False),
        features=("block-pointers",),
    ),
    Case(
        "flash_attn_fwd_kv_overrun_slices",
        "flash attention",
        "K/V loop one block too far; K = kv[0], V = kv[1]",
        _attn_fwd(True),
        _attn_fwd_expect(True),
        features=("block-pointers",),
    ),
    Case(
        "flash_attn_bwd_dkdv_overrun",
        "flash attention",
        "dK/dV helper walks one query block too far (Q, DO, logsumexp M and delta D)",
        _attn_bwd_make,
        _attn_bwd_expect,
        features=("runtime-loops",),
    ),
    Case(
        "paged_attention_bad_block_table",
        "paged attention",
        "one block-table entry points one block past the KV cache",
        _paged_make,
        _paged_expect,
        features=("runtime-loops",),
    ),
]
