# SPDX-License-Identifier: Apache-2.0
"""The two-GPU run of the multi-process work (issue 23; pytest -m gpu, skipped with fewer than two
GPUs in one host): a data-parallel step on 2 ranks (torchrun --nproc-per-node 2) with a Triton
kernel and NCCL collectives.

1. `flagprism profile -b cupti -d trace`: both rank files; the NCCL collectives in the tree as
   collective scopes ("nccl:all_reduce") holding NCCL's kernels ("ncclDevKernel_AllReduce_...",
   or NCCL's generic kernel "ncclDevKernel_Generic" where it does not specialise),
   kind and bytes on the trace's collectives track, NCCL's kernels on "communication" tracks;
   `flagprism merge` and `view --ranks` name rank 1 (16 kernel launches per step instead of 1)
   as the straggler; the merged trace has one process per rank, aligned on the host's clock
   (error 0), and on the start barrier within the error it states.
2. `flagprism debug --sanitize`: both ranks' summaries merged; the out-of-bounds read planted on
   rank 1 only is reported with rank 1, and rank 0 has none.

The profiler's overhead per rank against the bare step in the same job is bench/bench_multirank.py.
Keep NVLink multicast off (NCCL_NVLS_ENABLE=0; tests/gpu/run.sh exports it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _rankfiles import JOB, check_grouped, cli, need_gpus, nccl_kernels, nodes, record, run_cli, torchrun

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _two_gpus() -> None:
    need_gpus(2)


def test_two_ranks_nccl_profile(tmp_path: Path) -> None:
    from flagprism import _ext

    r = torchrun(2, "--no-python", cli(), "profile", "-b", "cupti", "-d", "trace", "-n",
                 "out/prof", str(JOB), cwd=tmp_path, env={"MR_SLOW": "1", "MR_STEPS": "5"})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    out = tmp_path / "out"
    seen = {}
    for rank in (0, 1):
        md = json.loads((out / f"prof.rank{rank}.meta.json").read_text())["distributed"]
        assert (md["rank"], md["world_size"], md["device"], md["backend"]) == \
            (rank, 2, f"cuda:{rank}", "nccl")
        t = nodes(out / f"prof.rank{rank}.hatchet")
        ar = t[("ROOT", "nccl:all_reduce")]
        assert ar["comm_count"] == 10 and ar["comm_bytes"] == 10 * 4 * (1 << 16)
        assert ar["comm_ranks (pty)"] == "0,1"
        kernels = nccl_kernels(t)
        # NCCL launches a kernel of the collective's own kind (ncclDevKernel_AllReduce_...) for
        # the algorithms it specialises, else ncclDevKernel_Generic: either is recognised and
        # sits under the call that launched it
        for op in ("all_reduce", "all_gather_into_tensor"):
            assert any(p[-2] == f"nccl:{op}" for p in kernels), \
                (op, sorted("/".join(p[1:]) for p in kernels))
        seen[rank] = check_grouped(t)
        tr = json.loads((out / f"prof.rank{rank}.chrome_trace.json").read_text())
        tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in tr["traceEvents"]
                  if e.get("name") == "thread_name"}
        comm = [e for e in tr["traceEvents"] if e.get("cat") == "kernel"
                and _ext.comm_kernel_kind(e["name"])]
        assert comm and all(" communication" in tracks[(e["pid"], e["tid"])]
                            for e in comm)
        coll = [e for e in tr["traceEvents"] if e.get("cat") == "collective"
                and e["name"] == "nccl:all_reduce"]
        assert len(coll) == 10 and {e["args"]["bytes"] for e in coll} == {4 * (1 << 16)}
    record("multirank_gpu", {"test": "two_ranks_nccl_profile", "filed_under": seen})

    r = run_cli("merge", "out/prof.rank0.hatchet", "out/prof.rank1.hatchet", "-o",
                "out/all.hatchet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = run_cli("view", "--ranks", "out/all.hatchet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "\nstraggler: rank 1 (" in r.stdout, r.stdout
    record("multirank_gpu", {"test": "view_ranks", "view": r.stdout})
    r = run_cli("merge", "out/prof.rank0.chrome_trace.json", "out/prof.rank1.chrome_trace.json",
                "-o", "out/all.chrome_trace.json", cwd=tmp_path)
    assert r.returncode == 0 and "one host" in r.stdout, r.stdout + r.stderr
    clock = json.loads((out / "all.chrome_trace.json").read_text())["otherData"]
    assert clock["clock_alignment"]["method"] == "clock"
    r = run_cli("merge", "--align", "barrier", "out/prof.rank0.chrome_trace.json",
                "out/prof.rank1.chrome_trace.json", "-o", "out/barrier.chrome_trace.json",
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    bar = json.loads((out / "barrier.chrome_trace.json").read_text())["otherData"]
    err = bar["clock_alignment"]["error_ns"]
    exact = clock["clock_alignment"]["offsets_ns"]
    by_barrier = bar["clock_alignment"]["offsets_ns"]
    skew = abs((exact["1"] - exact["0"]) - (by_barrier["1"] - by_barrier["0"]))
    record("multirank_gpu", {"test": "barrier_alignment", "error_bound_ns": err,
                             "actual_error_ns": skew})
    assert skew <= err


def test_two_ranks_nccl_sanitize(tmp_path: Path) -> None:
    r = torchrun(2, "--no-python", cli(), "debug", "--sanitize", "-o", "dbg", str(JOB),
                 cwd=tmp_path, env={"MR_OOB": "1", "MR_STEPS": "1"})
    assert r.returncode != 0  # rank 1 exits 3
    r = run_cli("merge", "dbg/rank0", "dbg/rank1", "-o", "dbg/all", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "dbg" / "all" / "summary.json").read_text())
    assert s["ranks"]["merged"] == "0,1" and s["ranks"]["missing"] == ""
    assert [(f["rank"], f["kind"], f["kernel"]) for f in s["findings"]] == \
        [(1, "out_of_bounds", "copy_kernel")]
