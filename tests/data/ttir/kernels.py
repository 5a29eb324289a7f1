# SPDX-License-Identifier: Apache-2.0
"""Triton kernels whose TTIR is checked in under tests/data/ttir/ (see generate.py).

Real kernels covering what the TTIR parser and the estimator must understand: masked loads,
row reductions, a dot in a K loop, while/if control flow, inlined and non-inlined @triton.jit
helpers (callsite locations), block pointers, reductions, atomics and casts. The unit tests
(tests/unit/test-ttir.c) name source lines of this file, so edit it only together with them and
regenerate the .ttir files. Not a library: nothing imports it at run time.
"""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(out_ptr + offsets, output, mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    row_in = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
    shifted = row_in - tl.max(row_in, axis=0)
    num = tl.exp(shifted)
    den = tl.sum(num, axis=0)
    result = num / den
    tl.store(out_ptr + row * out_stride + cols, result, mask=mask)


@triton.jit
def layernorm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / n_cols
    rstd = 1 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    y = diff * rstd * w + b
    tl.store(y_ptr + row * stride + cols, y, mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, K: tl.constexpr, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit
def matmul_dynk_kernel(a_ptr, b_ptr, c_ptr, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr):
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * BLOCK_N + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=offs_k[None, :] + k < K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] + k < K, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * BLOCK_N
    tl.store(c_ptr + offs_m[:, None] * BLOCK_N + offs_n[None, :], acc)


@triton.jit
def control_flow_kernel(x_ptr, out_ptr, n, limit, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    steps = 0
    total = tl.sum(x, axis=0)
    while total < limit:
        x = x * 2.0
        total = tl.sum(x, axis=0)
        steps += 1
    if pid == 0:
        x = x + steps
    else:
        x = x - 1.0
    if n > 4096:
        tl.store(out_ptr + offs, x, mask=offs < n)


@triton.jit(noinline=True)
def factor_noinline(n, base):
    f = base * 2.0
    if n > 1024:
        f = f * 0.5
    return f


@triton.jit
def scale_inline(x, factor):
    y = x * factor
    return y + 1.0


@triton.jit
def nested_inline(x):
    return scale_inline(x, 3.0) - 2.0


@triton.jit
def helpers_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    a = x * factor_noinline(n, 2.0)
    b = scale_inline(a, 0.5)
    c = nested_inline(b)
    tl.store(out_ptr + offs, c, mask=mask)


@triton.jit
def block_ptr_kernel(x_ptr, out_ptr, M, N, stride_m, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    src = tl.make_block_ptr(base=x_ptr, shape=(M, N), strides=(stride_m, 1),
                            offsets=(pid * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_N),
                            order=(1, 0))
    tile = tl.load(src, boundary_check=(0, 1), padding_option="zero")
    dst = tl.make_block_ptr(base=out_ptr, shape=(M, N), strides=(stride_m, 1),
                            offsets=(pid * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_N),
                            order=(1, 0))
    tl.store(dst, tile * 2.0, boundary_check=(0, 1))


@triton.jit
def reductions_kernel(x_ptr, sum_ptr, max_ptr, argmax_ptr, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows[:, None] * BLOCK_N + cols[None, :])
    s = tl.sum(x, axis=1)
    m = tl.max(x, axis=1)
    am = tl.argmax(x, axis=1)
    tl.store(sum_ptr + rows, s)
    tl.store(max_ptr + rows, m)
    tl.store(argmax_ptr + rows, am)
    total = tl.sum(tl.sum(x, axis=1), axis=0)
    tl.store(sum_ptr + BLOCK_M, total)


@triton.jit
def atomics_kernel(x_ptr, counter_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(counter_ptr, 1)
    bins = x % 16
    tl.atomic_add(hist_ptr + bins, 1, mask=mask)
    tl.atomic_max(counter_ptr + 1, tl.max(x, axis=0))
    old = tl.atomic_cas(counter_ptr + 2, 0, 1)
    tl.atomic_xchg(counter_ptr + 3, old)


@triton.jit
def casts_kernel(x_ptr, i8_ptr, bf_ptr, f8_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    q = x.to(tl.int8)
    tl.store(i8_ptr + offs, q, mask=mask)
    h = x.to(tl.bfloat16)
    tl.store(bf_ptr + offs, h, mask=mask)
    f8 = x.to(tl.float8e4nv)
    tl.store(f8_ptr + offs, f8, mask=mask)
    back = f8.to(tl.float32) + h.to(tl.float32) + q.to(tl.float32)
    tl.store(x_ptr + offs, back, mask=mask)


@triton.jit
def widened_kernel(a_ptr, b_ptr, c_ptr, s_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr):
    # float16 data computed in float32: a dot on widened operands, and a widened product
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a = tl.load(a_ptr + rm[:, None] * BLOCK_K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BLOCK_N + rn[None, :])
    c = tl.dot(a.to(tl.float32), b.to(tl.float32), input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * BLOCK_N + rn[None, :], c)
    s = a.to(tl.float32) * 2.0
    tl.store(s_ptr + rm[:, None] * BLOCK_K + rk[None, :], s)
