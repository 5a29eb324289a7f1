# SPDX-License-Identifier: Apache-2.0
"""Matrix-multiply kernels of the corpus (see corpus/__init__.py): the tutorial's tiled matmul
(pointer blocks advanced in the K loop, a 2-D grid), split-K with atomics, GEMMs through device
tensor descriptors (tl.make_tensor_descriptor) and host ones (a persistent TMA matmul), and a
block-pointer reduction. Addresses (``addr``) are relative to the start of the parameter's view;
lanes are numbered row-major over the access' block; programs linearly (x fastest).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from . import Arena, Case, Expect, Launch, Setup, randn

# ================================================================================================
# The tutorial matmul on a 2-D grid: B's K mask dropped ("K is a multiple of BLOCK_K")
# ================================================================================================


@triton.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    BUG: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        if BUG:
            b = tl.load(b_ptrs)  # BUG[mm_b]
        else:
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, accumulator, mask=c_mask)


def _mm_make(dev: str, planted: bool) -> Setup:
    m, n, k = 48, 40, 40
    ar = Arena(dev)
    a = ar.tensor((m, k), fill=randn(m, k, seed=60))
    b = ar.tensor((k, n), fill=randn(k, n, seed=61))
    c = ar.tensor((m, n), adjacent=True)  # C right after B
    ar_, br = a.cpu().double(), b.cpu().double()

    def verify() -> None:  # B's rows past K meet A's zero-padded columns: the product is the same
        torch.testing.assert_close(c.cpu().double(), ar_ @ br, atol=3e-2, rtol=0)

    launch = Launch(
        matmul_kernel,
        (2, 2),
        (a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride()),
        {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "BUG": int(planted)},
    )
    return Setup([launch], [c], verify, {"a_ptr": a, "b_ptr": b, "c_ptr": c}, ar)


def _mm_expect(s: Setup) -> list[Expect]:
    # K = 40, BLOCK_K = 16: trip k = 2 reads B rows 32..47, rows 40..47 past the 40 x 40 B: 8 x 32
    # lanes in each of the 4 programs (1024). Columns (32 pid_n + j) % 40: the highest element is
    # 47 * 40 + 39 = 1919: (1920 - 1600) * 4 = 1280 bytes. First: program (0, 0), lane 8 * 32 + 0 at
    # element 1600, where C begins.
    return [
        Expect(
            "out_of_bounds",
            "mm_b",
            param="b_ptr",
            location="other_storage",
            other_param="c_ptr",
            past=1280,
            lanes=1024,
            addr=6400,
            program=(0, 0, 0),
            programs=4,
            instances=4,
            iteration=("k", 2),
        )
    ]


# ================================================================================================
# Split-K with atomics: C's row mask `<=` accumulates into one row past C
# ================================================================================================


@triton.jit
def matmul_splitk_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    SPLIT_K: tl.constexpr,
    BUG: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_k = tl.program_id(2)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    A = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    B = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        k_remaining = K - k * (BLOCK_K * SPLIT_K)
        a = tl.load(A, mask=(rm[:, None] < M) & (rk[None, :] < k_remaining), other=0.0)
        b = tl.load(B, mask=(rk[:, None] < k_remaining) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        A += BLOCK_K * SPLIT_K * stride_ak
        B += BLOCK_K * SPLIT_K * stride_bk
    C = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    if BUG:
        mask = (rm[:, None] <= M) & (rn[None, :] < N)
    else:
        mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.atomic_add(C, acc, mask=mask)  # BUG[splitk_c]


def _splitk_make(dev: str, planted: bool) -> Setup:
    m, n, k = 20, 24, 64
    ar = Arena(dev)
    a = ar.tensor((m, k), fill=randn(m, k, seed=62))
    b = ar.tensor((k, n), fill=randn(k, n, seed=63))
    c_store = ar.tensor((m + 4, n))  # a padded workspace: C is its first M rows
    c = c_store[:m]
    ar_, br = a.cpu().double(), b.cpu().double()

    def verify() -> None:
        torch.testing.assert_close(c.cpu().double(), ar_ @ br, atol=3e-2, rtol=0)
        assert int(torch.count_nonzero(c_store[m:])) == 0  # the row past C was not accumulated into

    launch = Launch(
        matmul_splitk_kernel,
        (2, 1, 2),
        (a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride()),
        {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 16, "SPLIT_K": 2, "BUG": int(planted)},
    )
    return Setup([launch], [c_store], verify, {"a_ptr": a, "b_ptr": b, "c_ptr": c}, ar)


def _splitk_expect(s: Setup) -> list[Expect]:
    # pid_m = 1 holds rows 16..31; `rm <= M` keeps row 20 = M: 24 columns at elements 480..503, one
    # row (96 bytes) past C, inside the workspace. Both K splits of that tile, (1, 0, 0) and
    # (1, 0, 1) (linear 1 and 3), add: 48 lanes. First lane 4 * 32 + 0.
    return [
        Expect(
            "out_of_bounds",
            "splitk_c",
            param="c_ptr",
            location="inside_storage",
            past=96,
            lanes=48,
            addr=1920,
            program=(1, 0, 0),
            programs=2,
            instances=2,
            iteration=None,
        )
    ]


# ================================================================================================
# A GEMM through device tensor descriptors: A's descriptor built with B's row stride
# ================================================================================================


@triton.jit
def matmul_desc_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    BUG: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    if BUG:
        a_desc = tl.make_tensor_descriptor(
            a_ptr, shape=[M, K], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_K]
        )  # BUG[desc_make]
    else:
        a_desc = tl.make_tensor_descriptor(
            a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K]
        )
    b_desc = tl.make_tensor_descriptor(
        b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N]
    )
    c_desc = tl.make_tensor_descriptor(
        c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N]
    )
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])  # BUG[desc_a]
        b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc)


def _desc_make(dev: str, planted: bool) -> Setup:
    m, n, k = 24, 32, 16
    ar = Arena(dev)
    a = ar.tensor((m, k), fill=randn(m, k, seed=64))
    b = ar.tensor((k, n), fill=randn(k, n, seed=65), adjacent=True)  # B right after A
    c = ar.tensor((m, n))
    ar_, br = a.cpu().double(), b.cpu().double()

    def verify() -> None:
        torch.testing.assert_close(c.cpu().double(), ar_ @ br, atol=3e-2, rtol=0)

    launch = Launch(
        matmul_desc_kernel,
        (2, 2),
        (a, b, c, m, n, k),
        {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "BUG": int(planted)},
    )
    return Setup(
        [launch], [c], None if planted else verify, {"a_ptr": a, "b_ptr": b, "c_ptr": c}, ar
    )


def _desc_expect(s: Setup) -> list[Expect]:
    # A is 24 x 16 (384 elements); its descriptor says strides [32, 1]: it addresses up to element
    # 23 * 32 + 15 = 751: (752 - 384) * 4 = 1472 bytes past A, into B. Loads: tile rows pid_m * 16
    # + i (rows >= 24 are outside the shape: inactive), element r * 32 + c >= 384 for r >= 12:
    # pid_m = 0 rows 12..15 (64 lanes), pid_m = 1 rows 16..23 (128 lanes), for both pid_n: 384
    # lanes, highest element 751. First: program (0, 0), lane 12 * 16, element 384.
    return [
        Expect(
            "descriptor_extent",
            "desc_make",
            param="a_ptr",
            location="other_storage",
            other_param="b_ptr",
            past=1472,
            addr=1536,
            program=(0, 0, 0),
            programs=4,
        ),
        Expect(
            "out_of_bounds",
            "desc_a",
            param="a_ptr",
            location="other_storage",
            other_param="b_ptr",
            past=1472,
            lanes=384,
            addr=1536,
            program=(0, 0, 0),
            programs=4,
            instances=4,
            iteration=("k", 0),
        ),
    ]


# ================================================================================================
# A persistent TMA GEMM through host descriptors: A's descriptor with M rounded up to BLOCK_M
# ================================================================================================


@triton.jit
def matmul_tma_persistent_kernel(
    a_desc,
    b_desc,
    c_desc,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    NUM_SMS: tl.constexpr,
):
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS):
        pid_m = tile_id // num_pid_n
        pid_n = tile_id % num_pid_n
        offs_am = pid_m * BLOCK_M
        offs_bn = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_K
            a = a_desc.load([offs_am, offs_k])  # BUG[tma_a]
            b = b_desc.load([offs_bn, offs_k])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([offs_am, offs_bn], acc.to(tl.float16))


def _tma_make(dev: str, planted: bool) -> Setup:
    from triton.tools.tensor_descriptor import TensorDescriptor

    m, n, k, bm, bn, bk = 40, 32, 32, 32, 32, 16
    ar = Arena(dev)
    a = ar.tensor((m, k), torch.float16, fill=randn(m, k, seed=66))
    b = ar.tensor(
        (n, k), torch.float16, fill=randn(n, k, seed=67), adjacent=True
    )  # B (N x K) right after A
    c = ar.tensor((m, n), torch.float16)
    rows = triton.cdiv(m, bm) * bm if planted else m  # the schedule's M, not A's
    a_desc = TensorDescriptor(a, [rows, k], [k, 1], [bm, bk])
    b_desc = TensorDescriptor.from_tensor(b, [bn, bk])
    c_desc = TensorDescriptor.from_tensor(c, [bm, bn])
    ar_, br = a.cpu().double(), b.cpu().double()

    def verify() -> (
        None
    ):  # rows >= 40 are outside C's shape (dropped) and A's rows there suppressed
        torch.testing.assert_close(c.cpu().double(), ar_ @ br.t(), atol=5e-2, rtol=1e-2)

    launch = Launch(
        matmul_tma_persistent_kernel,
        (2,),
        (a_desc, b_desc, c_desc, m, n, k),
        {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "NUM_SMS": 2},
    )
    return Setup([launch], [c], verify, {"a_desc": a, "b_desc": b, "c_desc": c}, ar)


def _tma_expect(s: Setup) -> list[Expect]:
    # A is 40 x 32 fp16 (1280 elements, 2560 bytes); its descriptor says 64 rows: 2048 elements,
    # (2048 - 1280) * 2 = 1536 bytes past A, into B. Tile 1 (program 1) reads rows 32..63 at both
    # K tiles: rows 40..63 are inside the descriptor's shape, past A: 24 x 16 lanes per trip, 768,
    # highest element 63 * 32 + 31 = 2047; first lane 8 * 16 (row 40) at element 1280, ki = 0.
    return [
        Expect(
            "descriptor_extent",
            "tma_a",
            param="a_desc",
            location="other_storage",
            other_param="b_desc",
            past=1536,
            addr=2560,
        ),
        Expect(
            "out_of_bounds",
            "tma_a",
            param="a_desc",
            location="other_storage",
            other_param="b_desc",
            past=1536,
            lanes=768,
            addr=2560,
            program=(1, 0, 0),
            programs=1,
            instances=2,
            iteration=("ki", 0),
        ),
    ]


# ================================================================================================
# Split-K through device descriptors, reduced with a descriptor atomic_add (TMA reduce): C's
# descriptor made with M rounded up to BLOCK_M. GPU only: Triton 3.6's interpreter has no
# descriptor atomics.
# ================================================================================================


@triton.jit
def matmul_splitk_desc_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    M_DESC,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    SPLIT_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_k = tl.program_id(2)
    a_desc = tl.make_tensor_descriptor(
        a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K]
    )
    b_desc = tl.make_tensor_descriptor(
        b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N]
    )
    c_desc = tl.make_tensor_descriptor(
        c_ptr, shape=[M_DESC, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N]
    )  # BUG[skd_make]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(pid_k, tl.cdiv(K, BLOCK_K), SPLIT_K):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    c_desc.atomic_add([pid_m * BLOCK_M, pid_n * BLOCK_N], acc)  # BUG[skd_atomic]


def _skd_make(dev: str, planted: bool) -> Setup:
    m, n, k, bm = 20, 32, 64, 32
    ar = Arena(dev)
    a = ar.tensor((m, k), fill=randn(m, k, seed=69))
    b = ar.tensor((k, n), fill=randn(k, n, seed=70))
    c_store = ar.tensor((bm, n))  # a workspace of whole tiles: C is its first M rows
    c = c_store[:m]
    ar_, br = a.cpu().double(), b.cpu().double()

    def verify() -> None:
        torch.testing.assert_close(c.cpu().double(), ar_ @ br, atol=3e-2, rtol=0)
        assert int(torch.count_nonzero(c_store[m:].cpu())) == 0  # nothing reduced past C

    m_desc = triton.cdiv(m, bm) * bm if planted else m
    launch = Launch(
        matmul_splitk_desc_kernel,
        (1, 1, 2),
        (a, b, c, m, n, k, m_desc),
        {"BLOCK_M": bm, "BLOCK_N": 32, "BLOCK_K": 16, "SPLIT_K": 2},
    )
    return Setup([launch], [c_store], verify, {"a_ptr": a, "b_ptr": b, "c_ptr": c}, ar)


def _skd_expect(s: Setup) -> list[Expect]:
    # C is 20 x 32 inside a 32 x 32 workspace; its descriptor says 32 rows: 12 rows (1536 bytes)
    # past C, inside the workspace. Both K splits reduce their whole tile: rows 20..31 are inside the
    # descriptor's shape and past C: 12 x 32 lanes each (768), first lane 20 * 32 at element 640.
    return [
        Expect(
            "descriptor_extent",
            "skd_make",
            param="c_ptr",
            location="inside_storage",
            past=1536,
            addr=2560,
            program=(0, 0, 0),
            programs=2,
        ),
        Expect(
            "out_of_bounds",
            "skd_atomic",
            param="c_ptr",
            location="inside_storage",
            past=1536,
            lanes=768,
            addr=2560,
            program=(0, 0, 0),
            programs=2,
            instances=2,
            iteration=None,
        ),
    ]


# ================================================================================================
# A block-pointer row reduction: boundary_check on the rows only
# ================================================================================================


@triton.jit
def bp_row_sum_kernel(
    x_ptr, out_ptr, M, N, stride_m, BM: tl.constexpr, BN: tl.constexpr, BUG: tl.constexpr
):
    pid = tl.program_id(0)
    bp = tl.make_block_ptr(
        x_ptr,
        shape=(M, N),
        strides=(stride_m, 1),
        offsets=(pid * BM, 0),
        block_shape=(BM, BN),
        order=(1, 0),
    )
    acc = tl.zeros([BM], dtype=tl.float32)
    for i in range(0, tl.cdiv(N, BN)):
        if BUG:
            t = tl.load(bp, boundary_check=(0,), padding_option="zero")  # BUG[bp_load]
        else:
            t = tl.load(bp, boundary_check=(0, 1), padding_option="zero")
        acc += tl.sum(t, axis=1)
        bp = tl.advance(bp, (0, BN))
    rows = pid * BM + tl.arange(0, BM)
    tl.store(out_ptr + rows, acc, mask=rows < M)


def _bp_make(dev: str, planted: bool) -> Setup:
    m, n = 12, 40
    ar = Arena(dev)
    x = ar.tensor((m, n), fill=randn(m, n, seed=68))
    out = ar.tensor(m, adjacent=True)  # right after x
    xr = x.cpu().double()

    def verify() -> None:
        ref = xr.sum(1).float()
        if planted:  # rows 0..10 add 8 elements of the next row; the last row's are suppressed
            torch.testing.assert_close(out.cpu()[m - 1], ref[m - 1], atol=1e-5, rtol=1e-5)
        else:
            torch.testing.assert_close(out.cpu(), ref, atol=1e-5, rtol=1e-5)

    launch = Launch(
        bp_row_sum_kernel, (2,), (x, out, m, n, n), {"BM": 8, "BN": 16, "BUG": int(planted)}
    )
    return Setup([launch], [out], verify, {"x_ptr": x, "out_ptr": out}, ar)


def _bp_expect(s: Setup) -> list[Expect]:
    # trip i = 2 reads columns 32..47 of 40; rows >= 12 are checked (inactive). Row 11 (program 1,
    # block row 3) columns 40..47 are elements 480..487 past the 480-element x: 8 lanes, 32 bytes,
    # first lane 3 * 16 + 8; out follows x.
    return [
        Expect(
            "out_of_bounds",
            "bp_load",
            param="x_ptr",
            location="other_storage",
            other_param="out_ptr",
            past=32,
            lanes=8,
            addr=1920,
            program=(1, 0, 0),
            programs=1,
            instances=1,
            iteration=("i", 2),
        )
    ]


CASES = [
    Case(
        "matmul_b_missing_k_mask",
        "GEMM",
        "tutorial matmul (2-D grid, pointers advanced in the K loop) without B's K mask",
        _mm_make,
        _mm_expect,
        features=("runtime-loops",),
    ),
    Case(
        "splitk_atomic_row_past_c",
        "GEMM",
        "split-K tl.atomic_add into C with `rm <= M`: one row too far",
        _splitk_make,
        _splitk_expect,
        features=("runtime-loops",),
    ),
    Case(
        "gemm_device_descriptor_stride",
        "GEMM",
        "tl.make_tensor_descriptor for A with B's row stride",
        _desc_make,
        _desc_expect,
        features=("runtime-loops",),
    ),
    Case(
        "gemm_host_descriptor_padded_m",
        "GEMM",
        "persistent TMA GEMM: A's host TensorDescriptor with M rounded up to BLOCK_M",
        _tma_make,
        _tma_expect,
        features=("runtime-loops",),
    ),
    Case(
        "splitk_descriptor_atomic_padded_m",
        "GEMM",
        "split-K reduced with a descriptor atomic_add; C's "
        "descriptor with M rounded up to BLOCK_M (GPU only)",
        _skd_make,
        _skd_expect,
        interpreter=False,
    ),
    Case(
        "block_pointer_row_sum_columns",
        "reduction",
        "block-pointer loop advanced with tl.advance, boundary_check on rows only",
        _bp_make,
        _bp_expect,
        features=("block-pointers", "runtime-loops"),
    ),
]
