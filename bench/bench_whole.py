#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""GPU cost of the Debugger on real kernels it must see whole: the tutorial-style fused
attention forward (block pointers, the K/V loop in a @triton.jit helper) and the persistent matmul
through host tensor descriptors (tests/python/kernels/tutorial_style.py).

For each kernel the script launches, in one process and alternating them (A B C A B C ...), the
kernel as written, its level-1 + addr_level-1 twin (markers around the body: every statement and
access, helpers included) and its sanitize twin (addresses only), each built, sized and launched
the way the Debugger does it (_rewrite.build, _launch.prepare, the register decision,
_launch.launch_kwargs), each timed with triton.testing.do_bench (median), and reports the median
time of each and the median ratio over the rounds. The issue's goals: sanitize at most 1.5x on
both kernels, level 1 at most 3x on the attention. One row per (kernel, mode), also with the
twin's registers, spills and warps, the records per launch and whether they fitted.

Output: one JSON object per line (stdout, and --out FILE), then a table. Needs a CUDA GPU
(Hopper or newer for the matmul's tensor descriptors).
Usage: python bench/bench_whole.py [--rounds 5] [--quick] [--out results.jsonl] [--cases attn,matmul]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "python"))

import torch  # noqa: E402
import triton  # noqa: E402
from kernels import tutorial_style  # noqa: E402

from flagprism import _launch, _regs, _rewrite, debugger  # noqa: E402

_DRY = False  # --dry-run: the Triton interpreter, tiny problems, one timed call each


def _bench(fn: Callable[[], Any]) -> float:
    if _DRY:
        import time

        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e3
    return float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))


def _sync() -> None:
    if not _DRY:
        torch.cuda.synchronize()


class _Capture:
    """Catches the (kernel, args, kwargs, grid) of a launch instead of running it."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, tuple, dict, tuple]] = []

    def _cls(self) -> Any:
        from triton.runtime.interpreter import InterpretedFunction
        from triton.runtime.jit import JITFunction

        return InterpretedFunction if _DRY else JITFunction

    def __enter__(self) -> _Capture:
        cls = self._cls()
        self._orig = cls.__dict__["run"]
        cap = self

        def run(fn: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
            cap.calls.append((fn, args, kwargs, grid))
            return cap._orig(fn, *args, grid=grid, warmup=warmup, **kwargs)

        cls.run = run
        return self

    def __exit__(self, *exc: Any) -> None:
        self._cls().run = self._orig


def _twin_launcher(
    kernel: Any, args: tuple, kwargs: dict, grid: Any, sanitize: bool
) -> tuple[Callable, dict]:
    """The twin the Debugger would launch (level 1 + addr_level 1, or sanitize), as a callable."""
    fn = kernel
    helpers = debugger._helpers(fn, debugger._flavour(fn))
    twin = _rewrite.build(fn, 0 if sanitize else 1, 1, helpers, sanitize=sanitize)
    plan = _launch.prepare(twin, fn, args, kwargs, grid, None, None)
    if not _DRY:
        plan.registers = _regs.decide(
            twin.jit,
            args,
            plan.grid,
            _launch.launch_kwargs(plan, kwargs),
            "auto",
            plan.buffer.device,
        )
    kw = _launch.launch_kwargs(plan, kwargs)
    info: dict[str, Any] = {
        "twin_num_warps": plan.num_warps["twin"],
        "kernel_num_warps": plan.num_warps["kernel"],
        "maxnreg": (plan.registers or {}).get("cap"),
        "slots_per_program": plan.slots,
        "programs": plan.programs,
        "sites": len(twin.sites),
    }

    def call() -> None:
        plan.buffer[4:6].zero_()
        k = twin.jit[plan.grid](*args, **kw)
        if "n_regs" not in info and k is not None:
            info.update(n_regs=getattr(k, "n_regs", None), n_spills=getattr(k, "n_spills", None))

    call()
    _sync()
    header = _launch.read_header(_launch.buffer_bytes(plan))
    info.update(overflow=header[4], complete=header[4] == 0)
    return call, info


def _case(name: str, quick: bool) -> tuple[Callable[[], Any], Callable[[], None]]:
    if _DRY and name == "attn":
        return tutorial_style.make_attn_fwd(
            "cpu", z=1, h=2, n_ctx=64, head_dim=16, block_m=16, block_n=16, dtype=torch.float32
        )
    if _DRY and name == "matmul":
        return tutorial_style.make_matmul(
            "cpu", m=64, n=64, k=64, num_sms=2, block_m=32, block_n=32, block_k=16
        )
    if name == "attn":
        n_ctx = 1024 if quick else 4096
        return tutorial_style.make_attn_fwd(
            "cuda", z=4, h=16, n_ctx=n_ctx, head_dim=64, block_m=128, block_n=64
        )
    if name == "matmul":
        size = 2048 if quick else 4096
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        return tutorial_style.make_matmul("cuda", m=size, n=size, k=size, num_sms=sms)
    raise SystemExit(f"unknown case {name!r}")


def measure(name: str, rounds: int, quick: bool) -> list[dict]:
    launch, check = _case(name, quick)
    with _Capture() as cap:
        launch()
    _sync()
    check()
    (kernel, args, kwargs, grid) = cap.calls[-1]
    g = _launch.eval_grid(grid, _launch.bind(kernel, args, kwargs)[0])
    modes = {
        "level1": _twin_launcher(kernel, args, kwargs, g, False),
        "sanitize": _twin_launcher(kernel, args, kwargs, g, True),
    }
    base = launch
    tb: list[float] = []
    ti: dict[str, list[float]] = {m: [] for m in modes}
    ratios: dict[str, list[float]] = {m: [] for m in modes}
    for _ in range(rounds):
        b = _bench(base)
        tb.append(b)
        for m, (call, _info) in modes.items():
            t = _bench(call)
            ti[m].append(t)
            ratios[m].append(t / b)
    rows = []
    for m, (_call, info) in modes.items():
        row = {
            "case": name,
            "mode": m,
            "base_ms": statistics.median(tb),
            "instrumented_ms": statistics.median(ti[m]),
            "ratio": statistics.median(ratios[m]),
            "ratio_min": min(ratios[m]),
            "ratio_max": max(ratios[m]),
            "rounds": rounds,
            "quick": quick,
            "device": "interpreter (dry run)" if _DRY else torch.cuda.get_device_name(0),
        }
        row.update(info)
        rows.append(row)
    return rows


def _table(rows: list[dict]) -> None:
    print(
        f"\n{'case':8} {'mode':9} {'base ms':>9} {'twin ms':>9} {'ratio':>7} {'min':>6} {'max':>6} "
        f"{'regs':>5} {'warps':>5} {'complete':>8}"
    )
    for r in rows:
        print(
            f"{r['case']:8} {r['mode']:9} {r['base_ms']:9.4f} {r['instrumented_ms']:9.4f} {r['ratio']:7.2f} "
            f"{r['ratio_min']:6.2f} {r['ratio_max']:6.2f} {str(r.get('n_regs')):>5} "
            f"{r['twin_num_warps']:>5} {str(r['complete']):>8}"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="smaller problems, 3 rounds")
    ap.add_argument("--out", help="also write the JSON lines to this file")
    ap.add_argument("--cases", default="attn,matmul")
    ap.add_argument(
        "--dry-run", action="store_true", help="the code path only, on the Triton interpreter"
    )
    a = ap.parse_args()
    global _DRY
    _DRY = a.dry_run
    if _DRY and os.environ.get("TRITON_INTERPRET") != "1":
        raise SystemExit("--dry-run runs on the Triton interpreter: set TRITON_INTERPRET=1")
    if not _DRY and (not torch.cuda.is_available() or os.environ.get("TRITON_INTERPRET") == "1"):
        raise SystemExit("needs a CUDA GPU with TRITON_INTERPRET unset (or --dry-run)")
    rounds = 1 if _DRY else (3 if a.quick else a.rounds)
    sink = open(a.out, "w", encoding="utf-8") if a.out else None
    rows: list[dict] = []
    for name in a.cases.split(","):
        if name == "matmul" and not _DRY and torch.cuda.get_device_capability()[0] < 9:
            print(
                f"skipping {name}: tensor descriptors need compute capability 9.0 or newer",
                file=sys.stderr,
            )
            continue
        for row in measure(name, rounds, a.quick):
            print(json.dumps(row), flush=True)
            if sink is not None:
                sink.write(json.dumps(row) + "\n")
                sink.flush()
            rows.append(row)
    if sink is not None:
        sink.close()
    _table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
