# SPDX-License-Identifier: Apache-2.0
"""Kernels and helpers shared by the Profiler's tests (tests/python/test_profiler_*.py): a vector
add with Triton launch metadata, the same without, a scale kernel, a fixed call chain whose
frames the Python-context tests spell out line by line, and a reader of `.hatchet` files into
{path: metrics}. Kernels must live in a real file for Triton (and its interpreter)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import triton
import triton.language as tl

BLOCK = 1024


def add_metadata(grid: Any, metadata: Any, args: dict[str, Any]) -> dict[str, Any]:
    n = args["n_elements"]
    return {"name": f"add_kernel[n={n}]", "bytes": 3 * 4 * n, "flops32": n}


@triton.jit(launch_metadata=add_metadata)
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@triton.jit
def add_plain(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@triton.jit
def scale_kernel(x_ptr, out_ptr, n_elements, alpha, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * alpha, mask=mask)


def add(x: Any, y: Any, kernel: Any = add_kernel) -> Any:
    import torch

    out = torch.empty_like(x)
    n = out.numel()

    def grid(meta: dict[str, Any]) -> tuple[int]:
        return (triton.cdiv(n, meta["BLOCK_SIZE"]),)

    kernel[grid](x, y, out, n, BLOCK_SIZE=BLOCK)  # @add
    return out


def scale(x: Any, alpha: float) -> Any:
    import torch

    out = torch.empty_like(x)
    n = out.numel()
    scale_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, alpha, BLOCK_SIZE=BLOCK)
    return out


# The call chain of the Python-context tests; LINES finds the "# @name" markers.
def chain_outer(x: Any) -> Any:
    return chain_middle(x)  # @chain_outer


def chain_middle(x: Any) -> Any:
    return chain_inner(x)  # @chain_middle


def chain_inner(x: Any) -> Any:
    return add(x, x, add_plain)  # @chain_inner


def _marker_lines() -> dict[str, int]:
    out = {}
    for i, line in enumerate(Path(__file__).read_text().splitlines(), 1):
        m = re.search(r"  # @(\w+)$", line)
        if m:
            out[m.group(1)] = i
    return out


#: {"add": line of the launch in add(), "chain_outer": ..., ...}
LINES = _marker_lines()


def read_tree(path: str | Path) -> dict[tuple[str, ...], dict[str, Any]]:
    """A .hatchet file as {(frame names below ROOT...): metrics}, ROOT as ()."""
    doc = json.loads(Path(path).read_text())
    assert isinstance(doc, list) and len(doc) == 2, doc
    out: dict[tuple[str, ...], dict[str, Any]] = {}

    def walk(node: dict[str, Any], prefix: tuple[str, ...]) -> None:
        assert prefix not in out, prefix
        out[prefix] = node["metrics"]
        for child in node["children"]:
            walk(child, prefix + (child["frame"]["name"],))

    walk(doc[0], ())
    return out


def kernels(tree: dict[tuple[str, ...], dict[str, Any]]) -> dict[tuple[str, ...], dict[str, Any]]:
    """The nodes of a read_tree() that hold kernel launches."""
    return {p: m for p, m in tree.items() if m.get("count")}
