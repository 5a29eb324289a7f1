# SPDX-License-Identifier: Apache-2.0
"""torch.distributed on NCCL with one rank on one GPU (pytest -m gpu), launched by torchrun and
run under `flagprism profile` (CUPTI backend) and `flagprism debug --sanitize`:

* the rank's files (out/prof.rank0.*, dbg/rank0/) and the metadata: rank 0, world size 1, local
  rank 0, host, device cuda:0, backend nccl, the clock barrier;
* every torch.distributed collective as a collective scope "nccl:<op>" with its bytes, the
  communicator's ranks and its host time; on the trace's collectives track;
* every NCCL kernel CUPTI recorded is recognised by name and filed under its collective's scope
  or its kind's group ("nccl:AllReduce"), and drawn on a "communication" track. Which kernels
  NCCL launches with one rank is NCCL's choice (a one-rank all_reduce is a copy or nothing): the
  kernels seen are recorded in $FP_GPU_RESULTS_DIR/dist_gpu.jsonl;
* the Debugger's summary of the rank carries its rank, and a planted out-of-bounds read is
  reported, with the rank, in the merged summary.

The two-GPU run is test_multirank_gpu.py.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from flagprism import _ext
from _rankfiles import (JOB, check_grouped, cli, need_gpus, nccl_kernels, nodes, record, run_cli,
                        torchrun)

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _one_gpu() -> None:
    need_gpus(1)


def test_nccl_one_rank_profiled(tmp_path: Path) -> None:
    r = torchrun(1, "--no-python", cli(), "profile", "-b", "cupti",
                 "-d", "trace", "-n", "out/prof", str(JOB), cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    out = tmp_path / "out"
    md = json.loads((out / "prof.rank0.meta.json").read_text())
    d = md["distributed"]
    assert (d["rank"], d["local_rank"], d["world_size"], d["local_world_size"]) == (0, 0, 1, 1)
    assert d["host"] == socket.gethostname()
    assert d["device"] == "cuda:0" and d["backend"] == "nccl"
    assert d["barrier"] is not None and d["barrier"]["duration_ns"] > 0
    assert md["session"]["backend"] == "cupti"

    t = nodes(out / "prof.rank0.hatchet")
    ar = t[("ROOT", "nccl:all_reduce")]
    assert ar["comm_count"] == 6 and ar["comm_bytes"] == 6 * 4 * (1 << 16)
    assert ar["comm_ranks (pty)"] == "0" and ar["comm_group_size (max)"] == 1
    assert ar["comm_time (ns)"] > 0
    for op in ("all_gather_into_tensor", "all_to_all_single", "broadcast", "barrier"):
        assert ("ROOT", f"nccl:{op}") in t, sorted(t)
    assert t[("ROOT", "scale_kernel")]["count"] == 3
    grouped = check_grouped(t)
    kernels = nccl_kernels(t)
    record("dist_gpu", {"test": "one_rank_profiled", "nccl_kernels": sorted(p[-1] for p in kernels),
                        "filed_under": grouped})
    print("NCCL kernels at world size 1:", {p[-1]: k for p, k in kernels.items()})

    tr = json.loads((out / "prof.rank0.chrome_trace.json").read_text())
    assert tr["otherData"]["rank"] == 0 and tr["otherData"]["device"] == "cuda:0"
    tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in tr["traceEvents"]
              if e.get("name") == "thread_name"}
    assert any(n.endswith(" collectives") for n in tracks.values()), tracks
    coll = [e for e in tr["traceEvents"] if e.get("cat") == "collective"]
    assert {e["name"] for e in coll} >= {"nccl:all_reduce", "nccl:all_to_all_single"}
    assert all(e["args"]["ranks"] == "0" for e in coll)
    for e in tr["traceEvents"]:
        if e.get("cat") == "kernel" and _ext.comm_kernel_kind(e["name"]):
            assert " communication" in tracks[(e["pid"], e["tid"])], e
        if e.get("cat") == "kernel" and e["name"] == "scale_kernel":
            assert "communication" not in tracks[(e["pid"], e["tid"])]

    # the view of one rank works too (max/mean 1 everywhere)
    r = run_cli("merge", "out/prof.rank0.hatchet", "-o", "out/all.hatchet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = run_cli("view", "--ranks", "out/all.hatchet", cwd=tmp_path)
    assert r.returncode == 0 and "straggler: rank 0" in r.stdout, r.stdout + r.stderr


def test_nccl_one_rank_sanitized(tmp_path: Path) -> None:
    r = torchrun(1, "--no-python", cli(), "debug", "--sanitize", "-o",
                 "dbg", str(JOB), cwd=tmp_path, env={"MR_OOB": "0", "MR_STEPS": "1"})
    assert r.returncode != 0  # exit 3: a finding
    s = json.loads((tmp_path / "dbg" / "rank0" / "summary.json").read_text())
    assert s["distributed"]["rank"] == 0 and s["distributed"]["world_size"] == 1
    assert s["distributed"]["device"] == "cuda:0"
    assert [f["kernel"] for f in s["findings"]] == ["copy_kernel"]
    r = run_cli("merge", "dbg/rank0", "-o", "dbg/all", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    m = json.loads((tmp_path / "dbg" / "all" / "summary.json").read_text())
    assert [(f["rank"], f["kind"]) for f in m["findings"]] == [(0, "out_of_bounds")]
