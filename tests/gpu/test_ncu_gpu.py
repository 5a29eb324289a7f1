# SPDX-License-Identifier: Apache-2.0
"""Nsight Compute import on a real GPU: a Triton vector add and a Triton matmul run under
`ncu --csv --page raw --clock-control none`, the CSV is attached to a profile of the same two
launches with `flagprism import-ncu`, and the vector add's DRAM traffic must be within 2% of
what it has to move (two inputs read, one output written, float32).

With $OUT set the CSV ncu wrote (raw page, and a details page from a second, smaller run) is
saved there as ncu-raw.csv / ncu-details.csv, with the vendor file: these are the captures that
should replace the synthetic seeds in tests/data/ncu/ and tests/fuzz/corpus/ncu-csv/.

The profile is written by hand (ROOT / worker.py:main@1 / kernel, count 1 each) rather than by
a profiling session: under ncu, CUPTI belongs to ncu (one subscriber per process).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

# Nsight Compute takes the GPU's counters and serialises the kernels it profiles.
pytestmark = [pytest.mark.gpu, pytest.mark.exclusive_gpu]

if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU (and TRITON_INTERPRET unset)", allow_module_level=True)

N = 1 << 29  # float32 elements per vector: 2 GiB each, far beyond L2 (what stays there is <1%)
METRICS = "gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum"

WORKER = r'''
import json
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def ncu_vadd(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


@triton.jit
def ncu_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def main():
    n = int(sys.argv[1])
    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    block = 1024
    grid_add = (triton.cdiv(n, block),)
    ncu_vadd[grid_add](x, y, out, n, BLOCK=block)
    m = 512
    a = torch.rand((m, m), device="cuda")
    b = torch.rand((m, m), device="cuda")
    c = torch.empty((m, m), device="cuda")
    grid_mm = (m // 64, m // 64)
    ncu_matmul[grid_mm](a, b, c, m, m, m, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
    torch.cuda.synchronize()
    ok = bool(torch.equal(out[:1 << 20], x[:1 << 20] + y[:1 << 20]))
    print(json.dumps({"grid_add": list(grid_add) + [1, 1][:3 - len(grid_add)],
                      "grid_mm": list(grid_mm) + [1], "ok": ok}))


main()
'''


def _ncu() -> str:
    for cand in (os.environ.get("NCU"), shutil.which("ncu"), "/usr/local/cuda/bin/ncu"):
        if cand and os.access(cand, os.X_OK):
            return cand
    pytest.skip("ncu (Nsight Compute) not found: set $NCU or put it on PATH")


def _cli() -> str:
    cli = os.environ.get("FLAGPRISM_CLI") or shutil.which("flagprism")
    if not cli:
        pytest.skip("no flagprism CLI: set FLAGPRISM_CLI")
    return cli


def _ncu_cmd(ncu: str, log: Path, worker: Path, n: int, details: bool) -> list[str]:
    # The same flags as fp_ncu_command_argv() (src/prof/ncu-cmd.c) builds for `profile --ncu`.
    cmd = [ncu, "--csv", "--page", "details" if details else "raw", "--print-units", "base",
           "--clock-control", "none", "--target-processes", "all", "--metrics", METRICS]
    if details:
        cmd += ["--section", "SpeedOfLight"]
    return cmd + ["--log-file", str(log), sys.executable, str(worker), str(n)]


def _save(path: Path, name: str) -> None:
    out = os.environ.get("OUT")
    if out and path.exists():
        Path(out).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(out) / name)


def _profile(path: Path) -> None:
    def kernel(name: str) -> dict:
        return {"frame": {"name": name, "type": "function"},
                "metrics": {"count": 1, "device_id": "0", "device_type": "CUDA"},
                "children": []}

    root = {"frame": {"name": "ROOT", "type": "function"}, "metrics": {"count": 0},
            "children": [{"frame": {"name": "worker.py:main@1", "type": "function"},
                          "metrics": {}, "children": [kernel("ncu_vadd"), kernel("ncu_matmul")]}]}
    path.write_text(json.dumps([root, {"CUDA": {"0": {"arch": "90"}}}]))


def test_ncu_dram_bytes_of_vector_add(tmp_path: Path) -> None:
    ncu, cli = _ncu(), _cli()
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    raw = tmp_path / "ncu-raw.csv"
    proc = subprocess.run(_ncu_cmd(ncu, raw, worker, N, details=False), capture_output=True,
                          text=True, timeout=900)
    _save(raw, "ncu-raw.csv")
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
    text = raw.read_text()
    if "ERR_NVGPUCTRPERM" in text:
        pytest.skip("no permission for GPU performance counters (ERR_NVGPUCTRPERM)")
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    assert info["ok"]

    prof = tmp_path / "prof.hatchet"
    _profile(prof)
    imp = subprocess.run([cli, "import-ncu", str(raw), "--into", str(prof), "--json"],
                         capture_output=True, text=True, timeout=120)
    _save(tmp_path / "prof.vendor.json", "ncu-raw.vendor.json")
    assert imp.returncode == 0, imp.stderr
    summary = json.loads(imp.stdout)
    assert summary["page"] == "raw"
    assert summary["matched"] == 2, summary
    assert summary["profile_launches_without_record"] == 0
    # torch's own kernels (rand, empty, equal...) have no node: kept, with a reason.
    vendor = json.loads((tmp_path / "prof.vendor.json").read_text())
    assert all("no kernel node named" in u["reason"] for u in vendor["unmatched"])

    tree = json.loads(prof.read_text())[0]
    kernels = {k["frame"]["name"]: k["metrics"] for k in tree["children"][0]["children"]}
    add = kernels["ncu_vadd"]
    read, write = add["ncu:dram__bytes_read.sum (byte)"], add["ncu:dram__bytes_write.sum (byte)"]
    must_read, must_write = 2 * N * 4, N * 4
    assert read == pytest.approx(must_read, rel=0.02), (read, must_read)
    assert read + write == pytest.approx(must_read + must_write, rel=0.02), (read, write)
    assert add["ncu:launches"] == 1
    assert add["ncu:gpu__time_duration.sum (nsecond)"] > 0
    mm = kernels["ncu_matmul"]
    assert mm["ncu:launches"] == 1 and mm["ncu:gpu__time_duration.sum (nsecond)"] > 0
    launch = next(l for l in vendor["launches"] if l["kernel"] == "ncu_vadd")
    assert launch["grid"] == info["grid_add"]


def test_ncu_details_page_capture(tmp_path: Path) -> None:
    """A details-page capture (SpeedOfLight + metrics) imports too; saved as a seed."""
    ncu, cli = _ncu(), _cli()
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    det = tmp_path / "ncu-details.csv"
    proc = subprocess.run(_ncu_cmd(ncu, det, worker, 1 << 24, details=True),
                          capture_output=True, text=True, timeout=900)
    _save(det, "ncu-details.csv")
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
    if "ERR_NVGPUCTRPERM" in det.read_text():
        pytest.skip("no permission for GPU performance counters (ERR_NVGPUCTRPERM)")
    prof = tmp_path / "prof.hatchet"
    _profile(prof)
    imp = subprocess.run([cli, "import-ncu", str(det), "--into", str(prof), "--json"],
                         capture_output=True, text=True, timeout=120)
    _save(tmp_path / "prof.vendor.json", "ncu-details.vendor.json")
    assert imp.returncode == 0, imp.stderr
    summary = json.loads(imp.stdout)
    assert summary["page"] == "details" and summary["matched"] == 2, summary
    kernels = json.loads(prof.read_text())[0]["children"][0]["children"]
    add = next(k["metrics"] for k in kernels if k["frame"]["name"] == "ncu_vadd")
    assert any(k.startswith("ncu:GPU Speed Of Light Throughput:") for k in add), add


def test_profile_ncu_command(tmp_path: Path) -> None:
    """`flagprism profile --ncu` end to end: ncu runs the worker under the profiler's bootstrap,
    the CSV is imported into the profile it wrote, and the vector add's DRAM bytes land on its
    node (found by the host backend's kernel name, launch order from the trace)."""
    ncu, cli = _ncu(), _cli()
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    n = 1 << 26
    proc = subprocess.run([cli, "profile", "--ncu", "--ncu-path", ncu, "--ncu-metrics", METRICS,
                           "-n", str(tmp_path / "run"), str(worker), str(n)],
                          capture_output=True, text=True, timeout=900, cwd=str(tmp_path))
    _save(tmp_path / "run.ncu.csv", "profile-ncu.csv")
    _save(tmp_path / "run.vendor.json", "profile-ncu.vendor.json")
    if "ERR_NVGPUCTRPERM" in proc.stdout + proc.stderr:
        pytest.skip("no permission for GPU performance counters (ERR_NVGPUCTRPERM)")
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])

    def find(node: dict, name: str):
        if node["frame"]["name"] == name:
            return node["metrics"]
        for c in node.get("children", []):
            m = find(c, name)
            if m is not None:
                return m
        return None

    root = json.loads((tmp_path / "run.hatchet").read_text())[0]
    add, mm = find(root, "ncu_vadd"), find(root, "ncu_matmul")
    assert add is not None and mm is not None, root
    assert add["ncu:launches"] == add["count"] == 1
    read, write = add["ncu:dram__bytes_read.sum (byte)"], add["ncu:dram__bytes_write.sum (byte)"]
    # At 2^26 elements (256 MiB written) the L2's write-back matters: lines still dirty in L2
    # when the kernel ends are not counted as DRAM writes (the H200 run: 246964736 of 268435456
    # bytes). So: reads within 2% of the 512 MiB read, writes short of the 256 MiB written by
    # at most the L2's size, never more than 2% over. test_ncu_dram_bytes_of_vector_add checks
    # the 2% on the sum at a size where the L2 residue is under 1%.
    l2 = int(getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0)) or 64 << 20
    assert read == pytest.approx(2 * 4 * n, rel=0.02), (read, write)
    assert 4 * n - l2 <= write <= 1.02 * 4 * n, (read, write, l2)
    assert mm["ncu:launches"] == 1
    vendor = json.loads((tmp_path / "run.vendor.json").read_text())
    # torch's kernels (rand, empty, equal) ran under ncu but are not in a Triton profile.
    assert all(u["reason"] for u in vendor["unmatched"])
