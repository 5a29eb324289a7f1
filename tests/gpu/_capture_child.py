# SPDX-License-Identifier: Apache-2.0
"""Child process of tests/gpu/test_cupti_gpu.py::test_capture_raw_records: a vector add, a
softmax and a matmul (Triton's and PyTorch's) under the "cupti" backend while the parent's
$FLAGPRISM_CUPTI_CAPTURE names a directory; the backend writes its raw activity buffers there.
Prints one line "FACTS <json>": the capture's counters, the CUPTI API version, this pid, the
launches made, and per file of this process the kernel records FlagPrism's reader found (or the
error it stopped at). Argument: the profile's output name.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import torch
import triton
import triton.language as tl

import flagprism.profiler as profiler
from flagprism import _ext


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :],
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def workload(reps: int) -> int:
    """Launch each kernel `reps` times; returns the launches made."""
    n = 1 << 20
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    rows, cols = 512, 1000
    s_in = torch.randn(rows, cols, device="cuda")
    s_out = torch.empty_like(s_in)
    m = 256
    a = torch.randn(m, m, device="cuda", dtype=torch.float16)
    b = torch.randn(m, m, device="cuda", dtype=torch.float16)
    c = torch.empty(m, m, device="cuda", dtype=torch.float32)
    launches = 0
    for _ in range(reps):
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
        softmax_kernel[(rows,)](s_in, s_out, cols, BLOCK=1024)
        matmul_kernel[(m // 64, m // 64)](a, b, c, m, m, m, BM=64, BN=64, BK=32)
        torch.matmul(a, b)  # PyTorch's (cuBLAS) kernels: runtime-API launches
        launches += 4
    torch.cuda.synchronize()
    return launches


def main() -> int:
    name = sys.argv[1]
    workload(1)  # compile and load outside the session
    profiler.start(name, backend="cupti")
    launches = workload(10)
    profiler.finalize()
    api = _ext.cupti_stats()["api_version"]
    st = _ext.cupti_capture_stats()
    files: dict[str, Any] = {}
    for f in sorted(Path(st["dir"]).glob(f"cupti-*-{os.getpid()}-*.rec")):
        try:
            files[f.name] = {"kernels": len(_ext.cupti_read_records(f.read_bytes(), api))}
        except Exception as e:  # noqa: BLE001 - reported to the test
            files[f.name] = {"error": f"{type(e).__name__}: {e}"}
    facts = {"stats": st, "api_version": api, "pid": os.getpid(), "launches": launches,
             "files": files}
    print("FACTS " + json.dumps(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
