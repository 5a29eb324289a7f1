#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""CPU cost of FlagPrism's per-launch path for CUPTI sessions, without a GPU.

What the Profiler adds to each Triton launch on the host is (1) whatever it puts in Triton's
launch hook chains and (2) its CUPTI launch callback. This plays Triton 3.6's launcher on the
fake libcupti of the unit tests (tests/unit/fake-cupti): the same LazyDict Triton builds, the
enter hook chain called from a frame holding gridX/gridY/gridZ below one holding the
CompiledKernel (as the real launcher and JITFunction.run do), the driver's cuLaunchKernelEx
API callbacks fired by the fake with the kernel's CUfunction in their parameter block (through
ctypes, a fixed cost in every row), the exit chain. The kernel is loaded before the sessions
and sits in a JITFunction's cache, as Triton leaves it, so the estimate table learns it at
start.
It times N such launches with no session (bare) and in each mode, interleaved over rounds, and
prints the median ns per launch and the difference to bare: the Profiler's host cost per launch.
It does not measure CUPTI's own dispatch cost or the GPU (bench_profiler.py does, on a GPU).

Usage: FLAGPRISM_CUPTI_PATH=build/tests/unit/fake-cupti/libfakecupti.so \\
       FLAGPRISM_CUDA_DRIVER_PATH=same python bench/bench_profhook_cpu.py [--launches 20000]
       [--rounds 7] [--modes shadow,noest,hook,hookmd,python]
Modes: shadow (the defaults: estimates on, looked up by the CUPTI callback: nothing in the hook
chains), noest (estimates=False: nothing in the hook chains either),
hook (hook="triton", a kernel without launch_metadata, like bench_profiler.py's), hookmd (the
same with a launch_metadata function returning two numbers), python (context="python").
Each mode runs in its own process (one CUPTI subscriber per process is no issue with the fake,
but the sessions' state should not leak between modes).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace
from typing import Any

MODES = ("shadow", "noest", "hook", "hookmd", "python")
FUNCTION = 0x7F0000001000  # the kernel's CUfunction handle
TTIR = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "ttir", "add.ttir"
)


def _launcher(
    lib: Any,
    corr: list[int],
    gridX: int,
    gridY: int,
    gridZ: int,  # noqa: N803
    md: Any,
    enter: Any,
    leave: Any,
) -> None:
    enter(md)
    corr[0] += 1
    lib.fake_cupti_launch_fn(1, 652, corr[0], FUNCTION, 0)  # cuLaunchKernelEx enter + exit
    leave(md)


def _run(lib: Any, kernel: Any, launches: int, with_md: bool) -> float:
    """JITFunction.run's part: build the LazyDict, call the launcher. Returns seconds."""
    from triton import knobs
    from triton.compiler.compiler import LazyDict

    corr = [0]
    enter, leave = knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook
    meta_fn = (lambda grid, k, args: {"flops32": 1024, "bytes": 12288}) if with_md else None
    t0 = time.perf_counter_ns()
    for _ in range(launches):
        md = LazyDict({"name": kernel.name, "function": FUNCTION, "stream": 0})
        if meta_fn is not None:
            md.add(meta_fn, ((4, 1, 1), kernel, {}))
        _launcher(lib, corr, 4, 1, 1, md, enter, leave)
    return (time.perf_counter_ns() - t0) / 1e9


def worker(mode: str, launches: int, rounds: int) -> dict[str, Any]:
    import flagprism.profiler as profiler

    lib = ctypes.CDLL(os.environ["FLAGPRISM_CUPTI_PATH"])
    lib.fake_cupti_launch_fn.argtypes = [
        ctypes.c_int,
        ctypes.c_uint32,
        ctypes.c_uint32,
        ctypes.c_uint64,
        ctypes.c_int,
    ]
    lib.fake_cupti_launch_fn.restype = None
    with open(TTIR, encoding="utf-8") as f:
        kernel = SimpleNamespace(
            name="add_kernel",
            hash="fake-add",
            asm={"ttir": f.read()},
            module=FUNCTION - 8,
            function=FUNCTION,
        )
    import triton

    @triton.jit
    def cached(x):  # noqa: ANN001 - holds the loaded kernel, as JITFunction.run leaves it
        pass

    cached.device_caches[0] = ({"k": kernel}, {}, None, None, None)
    kw: dict[str, Any] = {"backend": "cupti"}
    if mode in ("hook", "hookmd"):
        kw["hook"] = "triton"
    if mode == "python":
        kw["context"] = "python"
    if mode == "noest":
        kw["estimates"] = False
    with_md = mode == "hookmd"
    d = tempfile.mkdtemp(prefix="fp-hookbench-")
    _run(lib, kernel, 500, with_md)
    bare, prof = [], []
    for r in range(rounds):
        for what in ("bare", "prof") if r % 2 == 0 else ("prof", "bare"):
            if what == "bare":
                bare.append(_run(lib, kernel, launches, with_md))
            else:
                profiler.start(os.path.join(d, f"s{r}"), **kw)
                _run(lib, kernel, 200, with_md)  # warm: first-launch caches
                prof.append(_run(lib, kernel, launches, with_md))
                profiler.finalize()
    b = statistics.median(bare) / launches * 1e9
    p = statistics.median(prof) / launches * 1e9
    from flagprism import _ext

    # That shadow mode really looked its estimates up in the CUPTI callback: the table knows
    # the kernel, launches found it (seen) and none missed.
    k = _ext.cupti_kest_stats()
    return {
        "mode": mode,
        "launches": launches,
        "rounds": rounds,
        "bare_ns": round(b, 1),
        "profiled_ns": round(p, 1),
        "added_ns": round(p - b, 1),
        "kest_known": k["known"],
        "kest_seen": len(_ext.cupti_kest_seen(1)),
        "kest_misses": k["misses"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--launches", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(a.worker, a.launches, a.rounds)), flush=True)
        return 0
    if not os.environ.get("FLAGPRISM_CUPTI_PATH"):
        print(
            "set FLAGPRISM_CUPTI_PATH and FLAGPRISM_CUDA_DRIVER_PATH to libfakecupti.so",
            file=sys.stderr,
        )
        return 2
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    rc = 0
    for mode in a.modes.split(","):
        r = subprocess.run(
            [
                sys.executable,
                os.path.abspath(__file__),
                "--worker",
                mode,
                "--launches",
                str(a.launches),
                "--rounds",
                str(a.rounds),
            ],
            capture_output=True,
            text=True,
            env=env,
        )
        line = [x for x in r.stdout.splitlines() if x.startswith("{")]
        if r.returncode or not line:
            print(f"{mode}: failed\n{r.stderr[-2000:]}", file=sys.stderr)
            rc = 1
            continue
        print(line[-1], flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
