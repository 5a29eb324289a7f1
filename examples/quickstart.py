# SPDX-License-Identifier: Apache-2.0
"""FlagPrism quickstart: a Triton kernel debugged and profiled, end to end.

The main job of `scripts/setup.sh`. It runs a row softmax kernel (with a region marked for the
Debugger) and a vector add on the GPU when PyTorch sees one, otherwise on Triton's CPU
interpreter (TRITON_INTERPRET=1, which must be set before Triton is imported, hence the order
below), then:

1. debugs the softmax: value and address summaries of every statement in the marked region,
   written as text and JSON reports plus a per-IR-op log (`fp_quickstart/debug/`);
2. profiles both kernels inside user scopes, with Triton's launch metadata and IR-based
   estimates, written as a Hatchet call tree, a Chrome trace and metadata
   (`fp_quickstart/profile.*`), and shows the tree with `flagprism view`;
3. writes both as self-contained HTML pages with `flagprism report`
   (`fp_quickstart/debug/report.html`, `fp_quickstart/profile.html`).

    python3 examples/quickstart.py [--rows R] [--cols C] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

# Triton is imported only now, after TRITON_INTERPRET is decided.
import triton
import triton.language as tl

import flagprism
import flagprism.debugger as debugger
import flagprism.language as fpl
import flagprism.profiler as profiler
from flagprism.cli import binary_path


def _softmax_meta(grid, kernel, args):
    rows, cols = args["n_rows"], args["n_cols"]
    return {"name": f"softmax [{rows}x{cols}]", "bytes": 2 * rows * cols * 4, "flops32": 4 * rows * cols}


@triton.jit(launch_metadata=_softmax_meta)
def softmax_kernel(out_ptr, in_ptr, n_rows, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    fpl.collect_start()
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    den = tl.sum(num, axis=0)
    y = num / den
    tl.store(out_ptr + row * stride + cols, y, mask=mask)
    fpl.collect_end()


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    rows, cols = x.shape
    out = torch.empty_like(x)
    softmax_kernel[(rows,)](out, x, rows, cols, x.stride(0), BLOCK=triton.next_power_of_2(cols))
    return out


def add(x: torch.Tensor, y: torch.Tensor, block: int = 256) -> torch.Tensor:
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), BLOCK=block)
    return out


def check(name: str, got: torch.Tensor, want: torch.Tensor) -> None:
    if not torch.allclose(got, want, rtol=1e-5, atol=1e-6):
        bad = (got - want).abs().max().item()
        raise SystemExit(f"quickstart: {name} FAILED, max abs difference {bad}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=8, help="softmax rows = programs (default 8)")
    ap.add_argument("--cols", type=int, default=100, help="softmax columns (default 100)")
    ap.add_argument("--out", default="fp_quickstart", help="output directory (default fp_quickstart)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    device = "cuda" if torch.cuda.is_available() else "cpu"
    where = f"GPU {torch.cuda.get_device_name()}" if device == "cuda" else "Triton interpreter (CPU)"
    print(f"flagprism {flagprism.__version__}, triton {triton.__version__}, torch {torch.__version__}: {where}")

    torch.manual_seed(0)
    x = torch.randn(args.rows, args.cols, device=device)
    a = torch.rand(4099, device=device)
    b = torch.rand(4099, device=device)

    # 1. Debugger: summaries of every statement between collect_start() and collect_end().
    debugger.configure(output_dir=str(out / "debug"))
    debugger.activate(level=1, addr_level=1)
    try:
        y = softmax(x)
    finally:
        debugger.deactivate()
    check("softmax (debugged)", y, torch.softmax(x, dim=1))
    for run in debugger.take_exported_runs():
        report = run["report"]
        print(f"debugger: {run['kernel']} grid {run['grid']} on {run['backend']}: "
              f"{len(report['statements'])} statements, overflow {run['overflow_count']}")
        for stmt in report["statements"]:
            for res in stmt["results"]:
                s = res["instances"][0]["summary"]
                print(f"  line {stmt['line']:>3} {res['name']:<5} {res['dtype']:<8} program 0: "
                      f"min {s['min']} max {s['max']} nan {s['nan_count']} inf {s['inf_count']}")
        pad = triton.next_power_of_2(args.cols) - args.cols
        if pad:
            # The summaries cover every lane of the block, the masked-off ones too.
            print(f"  (inf {pad} in x and z: the block has {pad + args.cols} lanes for {args.cols} "
                  f"columns; the masked load fills the {pad} past the row's end with other=-inf, "
                  "which exp() turns into 0, so they do not change the softmax)")
        print(f"  reports: {run['txt']}\n           {run['json']}\n           {run['op_log_txt']}")

    # 2. Profiler: kernels under user scopes, with launch metadata and IR estimates.
    profiler.start(str(out / "profile"), data="trace", hook="triton")
    with profiler.scope("softmax"):
        y = softmax(x)
    with profiler.scope("add"):
        for _ in range(3):
            c = add(a, b)
    paths = profiler.finalize()
    check("softmax (profiled)", y, torch.softmax(x, dim=1))
    check("add", c, a + b)
    print("profiler: wrote " + ", ".join(str(p) for p in paths))
    hatchet = next(p for p in paths if str(p).endswith(".hatchet"))
    view = subprocess.run([str(binary_path()), "view", "-m", "time/us,count", str(hatchet)],
                          capture_output=True, text=True)
    print(view.stdout, end="")
    if view.returncode != 0:
        print(view.stderr, end="", file=sys.stderr)
        return 1

    # 3. The same data as pages to open in a browser (offline, one file each).
    for source in (out / "debug", hatchet):
        page = subprocess.run([str(binary_path()), "report", str(source)], capture_output=True, text=True)
        print("report: " + page.stdout.strip())
        if page.returncode != 0:
            print(page.stderr, end="", file=sys.stderr)
            return 1
    print("quickstart: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
