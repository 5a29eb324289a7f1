# SPDX-License-Identifier: Apache-2.0
"""What the Debugger's benchmarks share: their kernels, the import of another checkout's (or a
patched) module, and the timing of a launch under compute-sanitizer.

bench/bench_debugger.py times these kernels' twins on a GPU; bench/sass_count.py compiles the
same twins offline, so this module imports neither torch nor anything that needs a GPU (torch
only inside ``event_median_ms``). The softmax is the tests' (tests/python/kernels/softmax.py);
the add and the matmul are the benchmark's own, without the tests' tail masks and ``other=``,
so that the numbers in docs/benchmarks.md stay comparable.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import triton
import triton.language as tl

import flagprism.language as fpl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "python"))

from kernels.softmax import softmax_kernel  # noqa: E402

__all__ = ["add_kernel", "softmax_kernel", "matmul_kernel", "event_median_ms", "load_module"]


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    fpl.collect_start()
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    out = x + y
    tl.store(out_ptr + offs, out, mask=mask)
    fpl.collect_end()


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
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    fpl.collect_start()
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :] * stride_ak)
        b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :] * stride_bn)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc)
    fpl.collect_end()


def load_module(name: str, path: str, patch: Callable[[str], str] | None = None) -> Any:
    """Import a copy of the module at `path` as `name`, its text passed through patch() first
    (another checkout's _rewrite.py or _records.py, or a variant of ours; Triton needs the source
    in a real file, so the copy is written to a fresh temporary directory)."""
    src = open(path, encoding="utf-8").read()
    if patch is not None:
        src = patch(src)
    d = tempfile.mkdtemp(prefix="fp-bench-")
    file = os.path.join(d, f"{name}.py")
    with open(file, "w", encoding="utf-8") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location(name, file)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def event_median_ms(launch: Callable[[], Any], reps: int = 5) -> float:
    """Median of `reps` CUDA-event timings of launch() after one untimed call (what the benches
    use in a child under compute-sanitizer, where do_bench's hundreds of runs would take hours)."""
    import torch

    launch()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        launch()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return float(statistics.median(times))
