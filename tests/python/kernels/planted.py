# SPDX-License-Identifier: Apache-2.0
"""Planted-bug kernels and correct look-alikes for the Debugger's findings.

Each `Case` is a kernel, a way to build its arguments on a device, and the findings expected
(none for the correct kernels). The same table drives tests/python/test_findings.py (Triton
interpreter), tests/gpu/test_findings_gpu.py (GPU, and compute-sanitizer memcheck on the same
launches) and bench/bench_sanitize.py.

Memory safety of the out-of-bounds cases. An unmasked out-of-bounds load on Triton 3.6's
interpreter dereferences the host address as it is (it reads whatever lies there, and a far
address kills the process); stores write there. So every overrun here is small and lands in
memory we own:
* "outside" tensors (the access leaves every allocation the launch knows of): on the CPU,
  `torch.from_numpy(parent[:n])`, whose storage is exactly the n elements while the bytes after
  them belong to the larger NumPy `parent`, kept alive by the tensor; on a GPU, a plain small
  tensor, whose overrun stays inside the caching allocator's block or segment. Only loads use
  them: a store past an allocation could corrupt a neighbour on the GPU.
* "inside" tensors (the access leaves the view but stays in its storage): a view `[off:off+n]`
  of a larger tensor (storage = the larger tensor), on every device.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch
import triton
import triton.language as tl

import flagprism.language as fpl

# ------------------------------------------------------------------------------------------------
# Planted bugs
# ------------------------------------------------------------------------------------------------


@triton.jit
def off_by_one_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    fpl.collect_start()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs <= n  # BUG: one element too many
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)
    fpl.collect_end()


@triton.jit
def wrong_stride_kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    fpl.collect_start()
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * (N + 1) + cols, mask=cols < N)  # BUG: the row stride is N
    tl.store(out_ptr + row * N + cols, x, mask=cols < N)
    fpl.collect_end()


@triton.jit
def missing_mask_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    fpl.collect_start()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs)  # BUG: no mask on the last block
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x + y, mask=mask)
    fpl.collect_end()


@triton.jit
def tile_past_row_kernel(a_ptr, out_ptr, M, N, stride_am, BM: tl.constexpr, BN: tl.constexpr):
    fpl.collect_start()
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    tile = tl.load(a_ptr + rows[:, None] * stride_am + cols[None, :], mask=rows[:, None] < M)  # BUG: no column mask
    ok = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], tile, mask=ok)
    fpl.collect_end()


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    fpl.collect_start()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * 2.0, mask=mask)
    fpl.collect_end()


@triton.jit
def log_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    fpl.collect_start()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.log(x)  # BUG: x holds negative values
    tl.store(out_ptr + offs, y, mask=mask)
    fpl.collect_end()


@triton.jit
def fp16_cast_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    fpl.collect_start()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    s = x * 1000.0
    h = s.to(tl.float16)  # BUG: |s| reaches 1e5, beyond float16's 65504
    tl.store(out_ptr + offs, h, mask=mask)
    fpl.collect_end()


@triton.jit
def div_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    fpl.collect_start()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    z = x / y  # BUG: y holds zeros (and x too: 0/0)
    tl.store(out_ptr + offs, z, mask=mask)
    fpl.collect_end()


# ------------------------------------------------------------------------------------------------
# Correct kernels that look risky
# ------------------------------------------------------------------------------------------------


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    fpl.collect_start()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)
    fpl.collect_end()


@triton.jit
def strided_copy_kernel(x_ptr, out_ptr, n, stride_x, BLOCK: tl.constexpr):
    fpl.collect_start()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs * stride_x, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)
    fpl.collect_end()


@triton.jit
def transpose_copy_kernel(a_ptr, out_ptr, M, N, stride_am, stride_an, BM: tl.constexpr, BN: tl.constexpr):
    fpl.collect_start()
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    ok = (rows[:, None] < M) & (cols[None, :] < N)
    a = tl.load(a_ptr + rows[:, None] * stride_am + cols[None, :] * stride_an, mask=ok)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], a, mask=ok)
    fpl.collect_end()


@triton.jit
def column_sum_kernel(col_ptr, out_ptr, M, stride, BLOCK: tl.constexpr):
    fpl.collect_start()
    rows = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, M, BLOCK):
        r = start + rows
        v = tl.load(col_ptr + r * stride, mask=r < M, other=0.0)
        acc += v
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr, total)
    fpl.collect_end()


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    fpl.collect_start()
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf"))
    x_max = tl.max(x, axis=0)
    num = tl.exp(x - x_max)
    den = tl.sum(num, axis=0)
    y = num / den
    tl.store(out_ptr + row * out_stride + offs, y, mask=mask)
    fpl.collect_end()


@triton.jit
def cross_arg_kernel(q_ptr, k_ptr, out_ptr, k_off, n, BLOCK: tl.constexpr):
    """Reads k through q's pointer (both are slices of one packed buffer): an access that leaves
    q's view is a finding even where it lands in another argument's (it names both)."""
    fpl.collect_start()
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    q = tl.load(q_ptr + offs, mask=mask)
    k = tl.load(q_ptr + k_off + offs, mask=mask)  # BUG: k is read through q's pointer
    tl.store(out_ptr + offs, q * k, mask=mask)
    fpl.collect_end()


@triton.jit
def pointer_loop_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    fpl.collect_start()
    ptrs = x_ptr + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        v = tl.load(ptrs, mask=start + tl.arange(0, BLOCK) < n, other=0.0)
        acc += v
        ptrs += BLOCK
    tl.store(out_ptr + tl.arange(0, BLOCK), acc)
    fpl.collect_end()


@triton.jit
def normalize_kernel(x_ptr, out_ptr, n, eps, BLOCK: tl.constexpr):
    fpl.collect_start()
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    ms = tl.sum(x * x, axis=0) / n
    r = 1.0 / tl.sqrt(ms + eps)
    y = x * r
    h = y.to(tl.float16)
    tl.store(out_ptr + offs, h, mask=mask)
    fpl.collect_end()


@triton.jit
def early_exit_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """No markers (sanitize mode only) and an early return, as many real kernels have."""
    pid = tl.program_id(0)
    if pid * BLOCK >= n: return  # noqa: E701
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x + 1.0, mask=offs < n)


# ------------------------------------------------------------------------------------------------
# The cases
# ------------------------------------------------------------------------------------------------


@dataclass
class Expect:
    """One expected finding: its kind, a piece of its statement, and for out_of_bounds the
    parameter and where the access went."""

    kind: str
    statement: str
    param: str | None = None
    location: str | None = None
    subject: str | None = None

    def matches(self, f: dict[str, Any]) -> bool:
        return (f.get("kind") == self.kind and self.statement in str(f.get("statement", ""))
                and (self.param is None or f.get("param") == self.param)
                and (self.location is None or f.get("location") == self.location)
                and (self.subject is None or f.get("subject") == self.subject))


@dataclass
class Case:
    name: str
    kernel: Any
    make: Callable[[str], tuple[tuple[Any, ...], dict[str, Any], tuple[int, ...]]]
    expect: list[Expect] = field(default_factory=list)
    sanitize_only: bool = False  # no markers: only sanitize mode observes it
    # what the kernel needs that some environments lack (names of flagprism.compat features;
    # tests mark the case compat(feature) so the known-bad table can skip it)
    features: tuple[str, ...] = ()

    @property
    def planted(self) -> bool:
        return bool(self.expect)

    @property
    def oob(self) -> list[Expect]:
        return [e for e in self.expect if e.kind == "out_of_bounds"]


def outside(n: int, device: str, pad: int = 1024, dtype: torch.dtype = torch.float32, fill: Any = None) -> torch.Tensor:
    """n elements whose storage is exactly n elements, with owned memory after them on the CPU."""
    if device == "cpu":
        np_dt = {torch.float32: np.float32, torch.float16: np.float16}[dtype]
        parent = np.zeros(n + pad, dtype=np_dt)
        t = torch.from_numpy(parent[:n])
    else:
        t = torch.zeros(n, dtype=dtype, device=device)
    if fill is not None:
        t.copy_(fill.to(device=t.device, dtype=dtype))
    return t


def inside(n: int, device: str, off: int = 16, pad: int = 1024, dtype: torch.dtype = torch.float32,
           fill: Any = None) -> torch.Tensor:
    """A view of n elements inside a larger tensor (storage = the larger tensor)."""
    parent = torch.zeros(off + n + pad, dtype=dtype, device=device)
    t = parent[off:off + n]
    if fill is not None:
        t.copy_(fill.to(device=t.device, dtype=dtype))
    return t


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _randn(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=_gen(seed))


def _off_by_one(dev: str):
    n, block = 100, 64
    x = outside(n, dev, fill=_randn(n))
    out = inside(n, dev)
    return (x, out, n), {"BLOCK": block}, (triton.cdiv(n, block),)


def _wrong_stride(dev: str):
    m, n = 6, 40
    x = inside(m * n, dev, fill=_randn(m * n)).view(m, n)
    out = torch.zeros(m, n, device=dev)
    return (x, out, n), {"BLOCK": 64}, (m,)


def _missing_mask(dev: str):
    n, block = 100, 64
    x = outside(n, dev, fill=_randn(n))
    y = _randn(n, seed=1).to(dev)
    out = torch.zeros(n, device=dev)
    return (x, y, out, n), {"BLOCK": block}, (triton.cdiv(n, block),)


def _tile_past_row(dev: str):
    m, n = 10, 24
    a = inside(m * n, dev, fill=_randn(m * n)).view(m, n)
    out = torch.zeros(m, n, device=dev)
    return (a, out, m, n, a.stride(0)), {"BM": 4, "BN": 32}, (triton.cdiv(m, 4),)


def _view_of_larger(dev: str):
    big = _randn(400).to(dev)
    x = big[16:116]  # 100 elements; the launch below asks for 128
    out = inside(128, dev)
    return (x, out, 128), {"BLOCK": 64}, (2,)


def _log_negative(dev: str):
    n = 100
    x = torch.rand(n, generator=_gen()) + 0.5
    x[7] = -2.0
    x[50] = -0.5
    return (x.to(dev), torch.zeros(n, device=dev), n), {"BLOCK": 64}, (2,)


def _fp16_overflow(dev: str):
    n = 100
    x = torch.rand(n, generator=_gen()) * 10
    x[3] = 100.0
    return (x.to(dev), torch.zeros(n, dtype=torch.float16, device=dev), n), {"BLOCK": 64}, (2,)


def _zero_div(dev: str):
    n = 100
    x = torch.rand(n, generator=_gen()) + 1
    y = torch.rand(n, generator=_gen(1)) + 1
    x[5] = 0.0
    y[5] = 0.0
    y[70] = 0.0
    return (x.to(dev), y.to(dev), torch.zeros(n, device=dev), n), {"BLOCK": 64}, (2,)


def _add(dev: str):
    n = 100
    return (_randn(n).to(dev), _randn(n, seed=1).to(dev), torch.zeros(n, device=dev), n), {"BLOCK": 64}, (2,)


def _strided(dev: str):
    big = _randn(300).to(dev)
    x = big[::3]  # 100 elements, stride 3
    return (x, torch.zeros(100, device=dev), 100, x.stride(0)), {"BLOCK": 64}, (2,)


def _transposed(dev: str):
    base = _randn(24, 40).to(dev)
    a = base.t()  # 40 x 24, strides (1, 40)
    out = torch.zeros(40, 24, device=dev)
    return (a, out, 40, 24, a.stride(0), a.stride(1)), {"BM": 16, "BN": 16}, (3, 2)


def _column(dev: str):
    mat = _randn(50, 8).to(dev)
    col = mat[:, 3]  # a column view: shape (50,), stride 8
    return (col, torch.zeros(1, device=dev), 50, col.stride(0)), {"BLOCK": 16}, (1,)


def _softmax(dev: str):
    x = _randn(4, 50).to(dev)
    out = torch.zeros(4, 50, device=dev)
    return (out, x, x.stride(0), out.stride(0), 50), {"BLOCK": 64}, (4,)


def _cross_arg(dev: str):
    packed = _randn(256).to(dev)
    q = packed[0:100]
    k = packed[128:228]
    return (q, k, torch.zeros(100, device=dev), 128, 100), {"BLOCK": 128}, (1,)


def _pointer_loop(dev: str):
    n = 200
    return (_randn(n).to(dev), torch.zeros(64, device=dev), n), {"BLOCK": 64}, (1,)


def _normalize(dev: str):
    n = 100
    return (_randn(n).to(dev), torch.zeros(n, dtype=torch.float16, device=dev), n, 1e-5), {"BLOCK": 128}, (1,)


def _early_exit(dev: str):
    n = 100
    return (_randn(n).to(dev), torch.zeros(n, device=dev), n), {"BLOCK": 32}, (8,)


CASES: list[Case] = [
    Case("off_by_one_mask", off_by_one_kernel, _off_by_one, [
        Expect("out_of_bounds", "x = tl.load(x_ptr + offs", "x_ptr", "outside_allocations"),
        Expect("out_of_bounds", "tl.store(out_ptr + offs", "out_ptr", "inside_storage"),
    ]),
    Case("wrong_stride", wrong_stride_kernel, _wrong_stride, [
        Expect("out_of_bounds", "x = tl.load(x_ptr + row * (N + 1)", "x_ptr", "inside_storage"),
    ]),
    Case("missing_mask_last_block", missing_mask_kernel, _missing_mask, [
        Expect("out_of_bounds", "x = tl.load(x_ptr + offs)", "x_ptr", "outside_allocations"),
    ]),
    Case("tile_past_row", tile_past_row_kernel, _tile_past_row, [
        Expect("out_of_bounds", "tile = tl.load(a_ptr", "a_ptr", "inside_storage"),
    ]),
    Case("view_of_larger_tensor", scale_kernel, _view_of_larger, [
        Expect("out_of_bounds", "x = tl.load(x_ptr + offs", "x_ptr", "inside_storage"),
    ]),
    Case("log_of_negative", log_kernel, _log_negative, [
        Expect("invalid_domain", "y = tl.log(x)", subject="x"),
        Expect("nan_origin", "y = tl.log(x)", subject="y"),
    ]),
    Case("fp16_overflow_on_cast", fp16_cast_kernel, _fp16_overflow, [
        Expect("precision_loss", "h = s.to(tl.float16)", subject="s"),
        Expect("inf_origin", "h = s.to(tl.float16)", subject="h"),
    ]),
    Case("zero_over_zero", div_kernel, _zero_div, [
        Expect("division_by_zero", "z = x / y", subject="y"),
        Expect("nan_origin", "z = x / y", subject="z"),
        Expect("inf_origin", "z = x / y", subject="z"),
    ]),
    Case("ok_vector_add", add_kernel, _add),
    Case("ok_strided_view", strided_copy_kernel, _strided),
    Case("ok_transposed_view", transpose_copy_kernel, _transposed),
    Case("ok_column_view_walk", column_sum_kernel, _column, features=("runtime-loops",)),
    Case("ok_softmax_inf_padding", softmax_kernel, _softmax),
    Case("pointer_into_another_slice", cross_arg_kernel, _cross_arg, [
        Expect("out_of_bounds", "k = tl.load(q_ptr + k_off", "q_ptr", "inside_storage"),
    ]),
    Case("ok_pointer_loop", pointer_loop_kernel, _pointer_loop, features=("runtime-loops",)),
    Case("ok_normalize", normalize_kernel, _normalize),
    Case("ok_early_exit", early_exit_kernel, _early_exit, sanitize_only=True),
]

BY_NAME = {c.name: c for c in CASES}


def launch(case: Case, device: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Build the case's arguments on `device` and launch it once; returns (args, kwargs)."""
    args, kwargs, grid = case.make(device)
    case.kernel[grid](*args, **kwargs)
    return args, kwargs


def unmatched(case: Case, findings: list[dict[str, Any]],
              kinds: set[str] | None = None) -> tuple[list[Expect], list[dict[str, Any]]]:
    """(expected findings not found, findings not expected), restricted to `kinds` if given."""
    want = [e for e in case.expect if kinds is None or e.kind in kinds]
    got = [f for f in findings if kinds is None or f.get("kind") in kinds]
    missing = [e for e in want if not any(e.matches(f) for f in got)]
    extra = [f for f in got if not any(e.matches(f) for e in want)]
    return missing, extra


def check(case: Case, findings: list[dict[str, Any]], kinds: set[str] | None = None) -> None:
    """Assert that `findings` are exactly the case's expected ones (restricted to `kinds`)."""
    missing, extra = unmatched(case, findings, kinds)
    assert not missing, f"{case.name}: not found: {missing}; found: {[f['message'] for f in findings]}"
    assert not extra, f"{case.name}: unexpected: {[f['message'] for f in extra]}"


def one_run(debugger: Any) -> dict[str, Any]:
    """The single run the Debugger exported since the last take (asserts there is one)."""
    runs = debugger.take_exported_runs()
    assert len(runs) == 1, [r["kernel"] for r in runs]
    return runs[0]
