# SPDX-License-Identifier: Apache-2.0
"""A data-parallel step on CUDA with torch.distributed on NCCL, for test_dist_gpu.py (world size
1) and test_multirank_gpu.py (2 ranks), run by torchrun: each step launches a Triton kernel, then
the collectives (all_reduce, all_reduce AVG, all_gather_into_tensor, all_to_all_single,
broadcast), then a barrier. Environment knobs:

MR_STEPS   steps (default 3)
MR_SLOW    the rank whose kernel runs 16 times per step (the straggler); default none
MR_OOB     the rank whose copy kernel reads past its input (for `flagprism debug --sanitize`)
MR_BENCH   write "<rank> <seconds per step>" to this file after timing MR_STEPS steps
"""

from __future__ import annotations

import os
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
    local = int(os.environ.get("LOCAL_RANK", "0"))
    dev = torch.device("cuda", local)
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", device_id=dev)
    rank, world = dist.get_rank(), dist.get_world_size()
    n = 1 << 22
    x = torch.ones(n, device=dev)
    out = torch.empty(n, device=dev)
    msg = torch.ones(1 << 16, device=dev)
    gathered = torch.empty((1 << 16) * world, device=dev)
    a2a_in = torch.ones(1024 * world, device=dev)
    a2a_out = torch.empty(1024 * world, device=dev)
    if os.environ.get("MR_OOB") is not None:
        small = torch.ones(1000, device=dev)
        copy_kernel[(1,)](small, torch.empty(1000, device=dev), 1000,
                          EXTRA=8 if rank == env_int("MR_OOB") else 0, BLOCK=1024)
    repeat = 16 if rank == env_int("MR_SLOW") else 1
    steps = env_int("MR_STEPS", 3)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        for _ in range(repeat):
            scale_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
        dist.all_reduce(msg)
        dist.all_reduce(msg, op=dist.ReduceOp.AVG)
        dist.all_gather_into_tensor(gathered, msg)
        dist.all_to_all_single(a2a_out, a2a_in)
        dist.broadcast(msg, 0)
    torch.cuda.synchronize()
    dt = (time.perf_counter() - t0) / max(steps, 1)
    dist.barrier()
    bench = os.environ.get("MR_BENCH")
    if bench:
        with open(f"{bench}.rank{rank}", "w", encoding="utf-8") as f:
            f.write(f"{rank} {dt}\n")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
