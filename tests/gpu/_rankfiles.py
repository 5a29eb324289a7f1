# SPDX-License-Identifier: Apache-2.0
"""What the multi-process GPU tests share: running torchrun on a job with the installed
`flagprism`, reading Hatchet files back by name path, finding the collective library's kernels
in a profile and saying where they were filed, and recording observations for the lead
($FP_GPU_RESULTS_DIR, brought back by tests/gpu/run.sh)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
JOB = HERE / "_dist_job.py"


def cli() -> str:
    path = os.environ.get("FLAGPRISM_CLI") or shutil.which("flagprism")
    if not path:
        from flagprism.cli import binary_path

        path = str(binary_path())
    return path


def torchrun(nproc: int, *cmd: str, cwd: Path, env: dict[str, str] | None = None,
             timeout: int = 600) -> subprocess.CompletedProcess[str]:
    e = dict(os.environ, FLAGPRISM_PYTHON=sys.executable, NCCL_NVLS_ENABLE="0")
    e.pop("TRITON_INTERPRET", None)
    e.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone",
         f"--nproc-per-node={nproc}", *cmd],
        capture_output=True, text=True, cwd=cwd, env=e, timeout=timeout)


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([cli(), *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def nodes(path: Path) -> dict[tuple[str, ...], dict[str, Any]]:
    """Every node of a Hatchet file by name path: its own metric values."""
    root = json.loads(path.read_text())[0]
    out: dict[tuple[str, ...], dict[str, Any]] = {}

    def walk(n: dict[str, Any], prefix: tuple[str, ...]) -> None:
        p = prefix + (n["frame"]["name"],)
        out[p] = dict(n.get("metrics", {}))
        for c in n.get("children", []):
            walk(c, p)

    walk(root, ())
    return out


def nccl_kernels(tree: dict[tuple[str, ...], dict[str, Any]]) -> dict[tuple[str, ...], str]:
    """Kernel nodes of a collective library (name path -> its kind, "nccl:AllReduce"), as
    FlagPrism recognises them; other names with "nccl" in them are recorded as such."""
    from flagprism import _ext

    out = {}
    for path, m in tree.items():
        if not m.get("count"):
            continue
        kind = _ext.comm_kernel_kind(path[-1])
        if kind is not None:
            out[path] = kind
        elif "nccl" in path[-1].lower():
            record("nccl_unrecognised", {"kernel": path[-1]})
    return out


def check_grouped(tree: dict[tuple[str, ...], dict[str, Any]]) -> dict[str, list[str]]:
    """Every collective kernel sits right under a collective scope ("nccl:<op>", with
    comm_count) or under its kind's group ("nccl:<Kind>"); returns parent -> kernels."""
    seen: dict[str, list[str]] = {}
    for path, kind in nccl_kernels(tree).items():
        parent = path[-2]
        scope = tree[path[:-1]]
        assert parent == kind or (parent.startswith("nccl:") and scope.get("comm_count")), \
            f"{path[-1]} is filed under {parent!r}, neither its group {kind!r} nor a collective"
        seen.setdefault(parent, []).append(path[-1])
    return seen


def record(name: str, row: dict[str, Any]) -> None:
    d = os.environ.get("FP_GPU_RESULTS_DIR")
    if d:
        with open(os.path.join(d, name + ".jsonl"), "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")


def need_gpus(n: int) -> None:
    torch = pytest.importorskip("torch")
    if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU (and TRITON_INTERPRET unset)")
    if torch.cuda.device_count() < n:
        pytest.skip(f"needs {n} GPUs in one host, this one has {torch.cuda.device_count()}")
    dist = pytest.importorskip("torch.distributed")
    if not dist.is_available() or not dist.is_nccl_available():
        pytest.skip("this PyTorch has no torch.distributed with NCCL")
