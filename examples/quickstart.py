# SPDX-License-Identifier: Apache-2.0
"""FlagPrism quickstart: a Triton vector add, run and checked against PyTorch.

Runs on the GPU when PyTorch sees one, otherwise on Triton's CPU interpreter (TRITON_INTERPRET=1,
which must be set before Triton is imported, hence the order below). scripts/setup.sh runs this
file as its last step; later steps of the tutorial add the FlagPrism Debugger and Profiler to it.

    python3 examples/quickstart.py [--n N]
"""

from __future__ import annotations

import argparse
import os
import sys

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

# Triton is imported only now, after TRITON_INTERPRET is decided.
import triton
import triton.language as tl

import flagprism


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, block: int = 256) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4099, help="number of elements (default 4099)")
    args = ap.parse_args(argv)

    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda":
        where = "GPU " + torch.cuda.get_device_name()
    else:
        where = "Triton interpreter (CPU)"
    print(
        f"flagprism {flagprism.__version__}, triton {triton.__version__}, "
        f"torch {torch.__version__}: running on the {where}"
    )

    torch.manual_seed(0)
    x = torch.rand(args.n, device=device)
    y = torch.rand(args.n, device=device)
    out = add(x, y)
    if device == "cuda":
        torch.cuda.synchronize()
    expected = x + y
    if not torch.allclose(out, expected):
        bad = (out - expected).abs().max().item()
        print(f"quickstart: FAILED, max abs difference {bad}", file=sys.stderr)
        return 1
    print(f"quickstart: vector add of {args.n} elements matches torch: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
