# SPDX-License-Identifier: Apache-2.0
"""A small data-parallel job for the multi-process tests (test_multirank.py), run by torchrun on
the gloo backend with CPU tensors on the Triton interpreter: each step launches a Triton kernel
and does an all_reduce and an all_gather_into_tensor. Environment knobs:

MR_STEPS     steps (default 2)
MR_SLOW      the rank that launches its kernel 16 times per step (the straggler); default none
MR_API       a profile name: profile through the Python API (profiler.start(MR_API)) instead of
             `flagprism profile`
MR_KILL      the rank that kills itself (SIGKILL) once every other rank's meta file exists in
             MR_WAIT_DIR (so they have written theirs)
MR_OOB       the rank whose copy kernel reads past its input (for `flagprism debug --sanitize`)
"""

from __future__ import annotations

import glob
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, EXTRA: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n + EXTRA)
    tl.store(out_ptr + offs, x, mask=offs < n)


def env_int(name: str, default: int = -1) -> int:
    v = os.environ.get(name, "")
    return int(v) if v else default


def main() -> int:
    api = os.environ.get("MR_API")
    sid = None
    if api:
        import flagprism.profiler as profiler

        sid = profiler.start(api, data="trace")
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    n = 2048
    repeat = 16 if rank == env_int("MR_SLOW") else 1
    x = torch.ones(n)
    out = torch.empty(n)
    msg = torch.ones(256)
    gathered = torch.empty(256 * world)
    if os.environ.get("MR_OOB") is not None:
        small = torch.ones(1000)
        copy_kernel[(1,)](
            small, torch.empty(1000), 1000, EXTRA=8 if rank == env_int("MR_OOB") else 0, BLOCK=1024
        )
    for _ in range(env_int("MR_STEPS", 2)):
        for _ in range(repeat):
            scale_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
        dist.all_reduce(msg)
        dist.all_gather_into_tensor(gathered, msg)
    dist.barrier()
    if rank == env_int("MR_KILL"):
        deadline = time.monotonic() + 120
        while (
            len(
                glob.glob(
                    os.path.join(os.environ["MR_WAIT_DIR"], "**", "*.meta.json"), recursive=True
                )
            )
            < world - 1
        ):
            if time.monotonic() > deadline:
                return 3
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGKILL)
    dist.destroy_process_group()
    if sid is not None:
        import flagprism.profiler as profiler

        print("written:", profiler.finalize(sid), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
