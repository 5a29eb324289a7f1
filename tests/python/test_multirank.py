# SPDX-License-Identifier: Apache-2.0
"""Multi-process jobs end to end on the Triton interpreter: torchrun with 2 and 4 processes on
the gloo backend (CPU tensors), profiled by `flagprism profile` and through the Python API, and
debugged by `flagprism debug --sanitize`: per-rank files and their metadata, collectives in the
tree and the trace, `flagprism merge` statistics checked against the per-rank inputs, a rank
slowed on purpose named as the straggler by `flagprism view --ranks`, one merged trace with one
process per rank on an aligned clock, a killed rank reported missing, a rank hanging in a
collective not stopping the other's profile, and the Debugger's summaries merged with every
finding naming its rank. Plus, in this process, the per-rank names
and the torch.distributed hooks on a one-rank gloo group."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")
dist = pytest.importorskip("torch.distributed")

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )
if not dist.is_available() or not dist.is_gloo_available():
    pytest.skip("this PyTorch has no torch.distributed with gloo", allow_module_level=True)

import trace_event_check  # noqa: E402

HERE = Path(__file__).resolve().parent
JOB = HERE / "_multirank_job.py"
SUMMED = ("time (ns)", "count", "comm_bytes", "comm_count", "comm_time (ns)")


def torchrun(
    nproc: int,
    *cmd: str,
    cwd: Path,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    e = dict(
        os.environ,
        FLAGPRISM_PYTHON=sys.executable,
        TRITON_INTERPRET="1",
        OMP_NUM_THREADS="1",
        PYTHONPATH=str(HERE),
    )
    e.update(env or {})
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            f"--nproc-per-node={nproc}",
            "--monitor-interval=0.5",
            *cmd,
        ],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=e,
        timeout=300,
    )


def run_cli(cli: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(cli), *args], capture_output=True, text=True, cwd=cwd, timeout=120)


# ---- reading Hatchet files back (the test's own reader, independent of the C one) --------------


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


def totals(
    tree: dict[tuple[str, ...], dict[str, Any]], metric: str
) -> dict[tuple[str, ...], float]:
    """Inclusive totals of a summed metric: own value plus every descendant's."""
    out = {p: 0.0 for p in tree}
    for p, m in tree.items():
        v = m.get(metric, 0)
        for k in range(1, len(p) + 1):
            out[p[:k]] += v
    return out


def check_merge_statistics(merged: Path, per_rank: dict[int, Path]) -> None:
    """Every node of the merged profile against the per-rank inputs: mean, min, max, sum and the
    rank of the max of each summed metric."""
    m = nodes(merged)
    inputs = {r: nodes(p) for r, p in per_rank.items()}
    n = len(per_rank)
    checked = 0
    for metric in SUMMED:
        tot = {r: totals(t, metric) for r, t in inputs.items()}
        for path, vals in m.items():
            present = {r: tot[r][path] for r in inputs if path in inputs[r]}
            if not any(metric in inputs[r][path] for r in present):
                continue
            selfs = [inputs[r].get(path, {}).get(metric, 0) for r in inputs]
            assert vals.get(metric, 0) == pytest.approx(sum(selfs) / n, rel=1e-9), (path, metric)
            assert vals[f"{metric} (sum)"] == pytest.approx(sum(selfs), rel=1e-9), (path, metric)
            everyone = [tot[r].get(path, 0.0) for r in inputs]
            assert vals[f"{metric} (max)"] == pytest.approx(max(everyone), rel=1e-9)
            assert vals[f"{metric} (min)"] == pytest.approx(min(everyone), rel=1e-9)
            best = max(present.values())
            want = min(r for r, v in present.items() if v == best)
            assert vals[f"{metric} (max rank) (pty)"] == want, (path, metric, present)
            checked += 1
    assert checked >= 6


def meta(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


# ---- 2 ranks under `flagprism profile` ------------------------------------------------------------


def test_two_ranks_profile_merge_view_trace(cli: Path, tmp_path: Path) -> None:
    r = torchrun(
        2,
        "--no-python",
        str(cli),
        "profile",
        "-n",
        "out/prof",
        "-d",
        "trace",
        str(JOB),
        cwd=tmp_path,
        env={"MR_SLOW": "1", "MR_STEPS": "3"},
    )
    assert r.returncode == 0, r.stdout + r.stderr
    out = tmp_path / "out"
    for rank in (0, 1):
        for suffix in ("hatchet", "chrome_trace.json", "meta.json"):
            assert (out / f"prof.rank{rank}.{suffix}").is_file(), suffix
        md = meta(out / f"prof.rank{rank}.meta.json")
        d = md["distributed"]
        assert (d["rank"], d["local_rank"], d["world_size"], d["local_world_size"]) == (
            rank,
            rank,
            2,
            2,
        )
        assert d["host"] == socket.gethostname()
        assert d["device"] == "cpu" and d["backend"] == "gloo"
        assert d["barrier"]["duration_ns"] > 0
        if os.path.exists("/proc/sys/kernel/random/boot_id"):
            assert d["boot_id"] == Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        assert md["session"]["name"] == f"out/prof.rank{rank}"
        # the collectives: kind, bytes, the communicator's ranks
        t = nodes(out / f"prof.rank{rank}.hatchet")
        ar = t[("ROOT", "gloo:all_reduce")]
        assert ar["comm_count"] == 3 and ar["comm_bytes"] == 3 * 256 * 4
        assert ar["comm_kind (pty)"] == "all_reduce" and ar["comm_ranks (pty)"] == "0,1"
        assert ar["comm_time (ns)"] > 0
        ag = t[("ROOT", "gloo:all_gather_into_tensor")]
        assert ag["comm_bytes"] == 3 * 256 * 4 and ag["comm_group_size (max)"] == 2
        assert t[("ROOT", "scale_kernel")]["count"] == 3 * (16 if rank == 1 else 1)
        # the trace: collectives on their own track, next to the host thread's
        tr = json.loads((out / f"prof.rank{rank}.chrome_trace.json").read_text())
        assert tr["otherData"]["rank"] == rank and tr["otherData"]["world_size"] == 2
        names = {e["args"]["name"] for e in tr["traceEvents"] if e["name"] == "thread_name"}
        assert any(n.endswith(" collectives") for n in names), names
        coll = [e for e in tr["traceEvents"] if e.get("cat") == "collective"]
        assert len(coll) == 3 * 2 + 1  # all_reduce, all_gather per step, the barrier
        assert {e["args"]["bytes"] for e in coll} == {1024, 0}
        assert all(e["args"]["ranks"] == "0,1" for e in coll)

    # merge: per-rank statistics per node, checked against the inputs
    r = run_cli(
        cli,
        "merge",
        "out/prof.rank0.hatchet",
        "out/prof.rank1.hatchet",
        "-o",
        "out/all.hatchet",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert (
        r.stdout == "merged 2 profiles (ranks 0,1 of world size 2) into out/all.hatchet (mean): "
        f"{len(nodes(out / 'all.hatchet'))} nodes\n"
    )
    assert r.stderr == ""
    check_merge_statistics(
        out / "all.hatchet", {0: out / "prof.rank0.hatchet", 1: out / "prof.rank1.hatchet"}
    )
    m = nodes(out / "all.hatchet")
    assert m[("ROOT",)]["ranks (pty)"] == "0,1" and m[("ROOT",)]["missing_ranks (pty)"] == ""

    # view --ranks: rank 1 (16 launches per step instead of 1) is the straggler
    r = run_cli(cli, "view", "--ranks", "out/all.hatchet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ranks: 0,1 of world size 2; missing: none\n"), r.stdout
    assert "\nstraggler: rank 1 (compute time/ms " in r.stdout, r.stdout
    line = next(
        ln for ln in r.stdout.splitlines() if ln.endswith(" scale_kernel") and "rank" not in ln
    )
    assert line.split()[4] == "1", line  # the max rank column
    r = run_cli(cli, "view", "--ranks", "-m", "comm_time (ns)", "out/all.hatchet", cwd=tmp_path)
    assert r.returncode == 0 and "gloo:all_reduce" in r.stdout, r.stdout + r.stderr

    # one trace, one process per rank, clocks of one host
    r = run_cli(
        cli,
        "merge",
        "out/prof.rank0.chrome_trace.json",
        "out/prof.rank1.chrome_trace.json",
        "-o",
        "out/all.chrome_trace.json",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert "clocks: one host: every rank's CLOCK_MONOTONIC; aligned exactly" in r.stdout
    assert trace_event_check.check_file(str(out / "all.chrome_trace.json")) == []
    merged = json.loads((out / "all.chrome_trace.json").read_text())
    procs = {
        e["pid"]: e["args"]["name"] for e in merged["traceEvents"] if e["name"] == "process_name"
    }
    host = socket.gethostname()
    assert procs == {1: f"rank 0 ({host})", 2: f"rank 1 ({host})"}
    clock = merged["otherData"]["clock_alignment"]
    assert clock["method"] == "clock" and clock["error_ns"] == 0
    # the same events on the barrier: within its error bound of the exact alignment
    r = run_cli(
        cli,
        "merge",
        "--align",
        "barrier",
        "out/prof.rank0.chrome_trace.json",
        "out/prof.rank1.chrome_trace.json",
        "-o",
        "out/barrier.chrome_trace.json",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    bar = json.loads((out / "barrier.chrome_trace.json").read_text())["otherData"]
    err = bar["clock_alignment"]["error_ns"]
    assert err > 0
    exact = {int(k): v for k, v in clock["offsets_ns"].items()}
    by_barrier = {int(k): v for k, v in bar["clock_alignment"]["offsets_ns"].items()}
    assert abs((exact[1] - exact[0]) - (by_barrier[1] - by_barrier[0])) <= err


# ---- 4 ranks through the Python API, one of them killed ---------------------------------------------


def test_four_ranks_api_straggler_and_killed_rank(cli: Path, tmp_path: Path) -> None:
    r = torchrun(
        4,
        str(JOB),
        cwd=tmp_path,
        env={
            "MR_API": "out/r{rank}/prof",
            "MR_SLOW": "2",
            "MR_KILL": "3",
            "MR_WAIT_DIR": str(tmp_path / "out"),
        },
    )
    assert r.returncode != 0  # torchrun reports the killed rank
    assert "Signal 9" in r.stderr or "SIGKILL" in r.stderr or "-9" in r.stderr, r.stderr[-2000:]
    out = tmp_path / "out"
    for rank in (0, 1, 2):  # `{rank}` placed the rank: no ".rank<R>" added
        assert (out / f"r{rank}" / "prof.hatchet").is_file()
        assert meta(out / f"r{rank}" / "prof.meta.json")["distributed"]["world_size"] == 4
    assert not (out / "r3").exists() or not list((out / "r3").glob("*.hatchet"))
    paths = [f"out/r{rank}/prof.hatchet" for rank in (0, 1, 2)]
    r = run_cli(cli, "merge", *paths, "-o", "out/all.hatchet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "missing rank 3 of world size 4: no profile given for it" in r.stderr
    assert r.stdout.startswith("merged 3 profiles (ranks 0-2 of world size 4)")
    check_merge_statistics(
        out / "all.hatchet", {k: out / f"r{k}" / "prof.hatchet" for k in (0, 1, 2)}
    )
    r = run_cli(cli, "view", "--ranks", "out/all.hatchet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ranks: 0-2 of world size 4; missing: 3\n"), r.stdout
    assert "\nstraggler: rank 2 (" in r.stdout, r.stdout
    r = run_cli(
        cli,
        "merge",
        *[p.replace(".hatchet", ".chrome_trace.json") for p in paths],
        "-o",
        "out/all.chrome_trace.json",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert "missing rank 3 of world size 4" in r.stderr
    merged = json.loads((out / "all.chrome_trace.json").read_text())
    assert merged["otherData"]["missing_ranks"] == "3"
    assert sorted({e["pid"] for e in merged["traceEvents"]}) == [1, 2, 3]
    assert trace_event_check.check_file(str(out / "all.chrome_trace.json")) == []


# ---- a rank that hangs: the others' profiles are still written ---------------------------------------

HANG = """\
import datetime, glob, sys, time
import torch, torch.distributed as dist
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=3))
t = torch.ones(4)
dist.all_reduce(t)
if dist.get_rank() == 1:
    # hangs: never joins the next collective; leaves once rank 0 has written its profile
    deadline = time.monotonic() + 60
    while not glob.glob("out/*.rank0.meta.json") and time.monotonic() < deadline:
        time.sleep(0.05)
    sys.exit(0)
dist.all_reduce(t)  # rank 0 waits for rank 1, which never comes: the group's timeout
"""


@pytest.mark.slow
def test_hang_in_a_collective_still_writes(cli: Path, tmp_path: Path) -> None:
    (tmp_path / "hang.py").write_text(HANG)
    r = torchrun(2, "--no-python", str(cli), "profile", "-n", "out/prof", "hang.py", cwd=tmp_path)
    assert r.returncode != 0  # rank 0's collective timed out
    md = meta(tmp_path / "out" / "prof.rank0.meta.json")
    assert md["environment"]["script_exit_status"] == "1" and md["incomplete"] is False
    t = nodes(tmp_path / "out" / "prof.rank0.hatchet")
    ar = t[("ROOT", "gloo:all_reduce")]
    assert ar["comm_count"] == 2  # the one that timed out is there, with its wait
    assert ar["comm_time (ns)"] >= 2.5e9


# ---- 2 ranks under `flagprism debug --sanitize` -------------------------------------------------------


def test_two_ranks_debug_summaries_merged(cli: Path, tmp_path: Path) -> None:
    r = torchrun(
        2,
        "--no-python",
        str(cli),
        "debug",
        "--sanitize",
        "-o",
        "dbg",
        str(JOB),
        cwd=tmp_path,
        env={"MR_OOB": "1", "MR_STEPS": "1"},
    )
    assert r.returncode != 0  # rank 1 exits 3: a finding
    s0 = json.loads((tmp_path / "dbg" / "rank0" / "summary.json").read_text())
    s1 = json.loads((tmp_path / "dbg" / "rank1" / "summary.json").read_text())
    assert s0["distributed"]["rank"] == 0 and s1["distributed"]["rank"] == 1
    assert (
        s0["distributed"]["world_size"] == 2 and s1["distributed"]["host"] == socket.gethostname()
    )
    assert s0["findings"] == [] and len(s1["findings"]) == 1
    r = run_cli(cli, "merge", "dbg/rank0", "dbg/rank1", "-o", "dbg/all", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "merged 2 summaries into dbg/all/summary.json and summary.txt" in r.stdout
    s = json.loads((tmp_path / "dbg" / "all" / "summary.json").read_text())
    assert s["schema"] == "flagprism.debug.summary" and s["ranks"]["merged"] == "0,1"
    assert [f["rank"] for f in s["findings"]] == [1]
    assert s["findings"][0]["kind"] == "out_of_bounds"
    assert s["findings"][0]["kernel"] == "copy_kernel"
    assert sorted({k["rank"] for k in s["kernels"]}) == [0, 1]
    assert s["totals"]["findings"] == s0["totals"]["findings"] + s1["totals"]["findings"] == 1
    assert s["totals"]["launches"] == s0["totals"]["launches"] + s1["totals"]["launches"]
    txt = (tmp_path / "dbg" / "all" / "summary.txt").read_text()
    assert "rank 1: out_of_bounds in copy_kernel" in txt
    # a missing rank is reported, not fatal
    r = run_cli(cli, "merge", "dbg/rank1/summary.json", "-o", "dbg/one", cwd=tmp_path)
    assert r.returncode == 0 and "missing rank 0 of world size 2" in r.stderr, r.stderr


def test_merge_usage_errors(cli: Path, tmp_path: Path, data_dir: Path) -> None:
    prof = data_dir / "profiles" / "flagprism-interp.json"
    (tmp_path / "d").mkdir()
    r = run_cli(cli, "merge", "-o", "x", str(prof), str(tmp_path / "d"), cwd=tmp_path)
    assert r.returncode == 2 and "give inputs of one kind" in r.stderr
    r = run_cli(cli, "merge", "--align", "barrier", "-o", "x", str(prof), cwd=tmp_path)
    assert r.returncode == 2 and "applies to Chrome traces only" in r.stderr
    r = run_cli(
        cli,
        "merge",
        "--align",
        "sun",
        "-o",
        "x.chrome_trace.json",
        "a.chrome_trace.json",
        cwd=tmp_path,
    )
    assert r.returncode == 2 and "takes auto, clock, barrier or wall" in r.stderr
    for name in ("a.rank1.hatchet", "b.rank1.hatchet"):
        (tmp_path / name).write_bytes(prof.read_bytes())
    r = run_cli(cli, "merge", "-o", "x", "a.rank1.hatchet", "b.rank1.hatchet", cwd=tmp_path)
    assert r.returncode == 1, r.stdout
    assert "a.rank1.hatchet and b.rank1.hatchet are both rank 1" in r.stderr
    r = run_cli(cli, "merge", "--world-size", "1", "-o", "x", "a.rank1.hatchet", cwd=tmp_path)
    assert r.returncode == 1 and "rank 1 is not below the world size 1" in r.stderr
    r = run_cli(cli, "view", "--ranks", str(prof), cwd=tmp_path)
    assert r.returncode == 1 and "not a profile merged across ranks" in r.stderr


# ---- in this process: names and the torch.distributed hooks -------------------------------------------


def test_rank_names_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from flagprism import _dist, debugger

    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert _dist.job() is None
    assert _dist.output_name("out/prof") == "out/prof"
    assert _dist.output_name("out/{rank}/prof") == "out/0/prof"
    monkeypatch.setenv("RANK", "5")
    monkeypatch.setenv("WORLD_SIZE", "8")
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("FLAGPRISM_HOST", "nodeQ")
    j = _dist.job()
    assert j is not None and (j.rank, j.world_size, j.local_rank, j.host) == (5, 8, 1, "nodeQ")
    assert _dist.output_name("out/prof") == "out/prof.rank5"
    assert _dist.output_name("p{rank}") == "p5"
    assert _dist.output_dir("dbg") == "dbg/rank5"
    monkeypatch.setenv("RANK", "8")  # not below the world size: not a job
    assert _dist.job() is None
    monkeypatch.setenv("RANK", "5")
    try:
        debugger.configure(output_dir=str(tmp_path / "dbg"))
        assert debugger.get_config()["output_dir"] == str(tmp_path / "dbg" / "rank5")
    finally:
        debugger.reset_config()


def test_collective_hooks_one_rank_group(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A one-rank gloo group in this process: collectives become collective scopes with kind,
    bytes and ranks while a session is open; the originals are back after it."""
    import flagprism.profiler as profiler

    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    c10d = sys.modules["torch.distributed.distributed_c10d"]
    original = c10d.all_reduce
    sid = profiler.start(str(tmp_path / "p"), data="trace")
    try:
        assert dist.all_reduce is not original and dist.all_reduce.__wrapped__ is original
        dist.init_process_group(
            "gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1
        )
        try:
            with profiler.scope("step"):
                t = torch.ones(100, dtype=torch.float64)
                dist.all_reduce(t)
                dist.all_reduce(tensor=t, async_op=True).wait()
                dist.broadcast(torch.ones(3, dtype=torch.int32), 0)
                dist.barrier()
        finally:
            dist.destroy_process_group()
    finally:
        paths = profiler.finalize(sid)
    assert dist.all_reduce is original and c10d.all_reduce is original
    assert str(tmp_path / "p.rank0.hatchet") in paths
    t = nodes(tmp_path / "p.rank0.hatchet")
    ar = t[("ROOT", "step", "gloo:all_reduce")]
    assert ar["comm_count"] == 2 and ar["comm_bytes"] == 2 * 800
    assert ar["comm_ranks (pty)"] == "0" and ar["comm_group_size (max)"] == 1
    assert t[("ROOT", "step", "gloo:broadcast")]["comm_bytes"] == 12
    assert t[("ROOT", "step", "gloo:barrier")]["comm_bytes"] == 0
    tr = json.loads(Path(str(tmp_path / "p.rank0.chrome_trace.json")).read_text())
    asyncs = [
        e["args"]["async"]
        for e in tr["traceEvents"]
        if e.get("cat") == "collective" and e["name"] == "gloo:all_reduce"
    ]
    assert asyncs == [False, True]
    md = meta(tmp_path / "p.rank0.meta.json")["distributed"]
    assert md["backend"] == "gloo" and md["barrier"] is not None and md["world_size"] == 1


def test_identity_that_cannot_be_recorded_warns(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A session whose rank identity cannot be attached still profiles and writes its files."""
    import flagprism.profiler as profiler
    from flagprism import _dist, _ext

    class Broken:
        def __getattr__(self, name: str) -> Any:
            if name == "ranks_attach":

                def fail(*a: Any, **k: Any) -> None:
                    raise ValueError("no")

                return fail
            return getattr(_ext, name)

    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setattr(_dist, "_x", lambda: Broken())
    with pytest.warns(RuntimeWarning, match="identity could not be recorded: no"):
        sid = profiler.start(str(tmp_path / "p"))
    with pytest.warns(RuntimeWarning, match="identity could not be recorded"):
        paths = profiler.finalize(sid)
    assert str(tmp_path / "p.rank1.hatchet") in paths
    assert "distributed" not in meta(tmp_path / "p.rank1.meta.json")
