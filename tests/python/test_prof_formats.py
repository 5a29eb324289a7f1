# SPDX-License-Identifier: Apache-2.0
"""The profiler's output files checked by their real consumers.

bench/bench-prof (path in $FP_BENCH_PROF, default build/bench/bench-prof) writes a synthetic
profile through the C session API; these tests read its `.hatchet` with llnl-hatchet
(GraphFrame.from_literal) and with Triton's proton-viewer, its `.chrome_trace.json` with the
strict Trace Event Format checker in trace_event_check.py, and its `.meta.json` with json.
FP_PROF_BIG=1 also times our reader against proton-viewer on a 1-million-node profile (printed,
not asserted).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import trace_event_check

REPO_ROOT = Path(__file__).resolve().parents[2]
SMALL_NODES = 3000


def _bench_path() -> Path:
    value = os.environ.get("FP_BENCH_PROF")
    return Path(value) if value else REPO_ROOT / "build" / "bench" / "bench-prof"


@pytest.fixture(scope="module")
def bench() -> Path:
    path = _bench_path()
    if not os.access(path, os.X_OK):
        pytest.skip(f"bench-prof not built at {path} (set FP_BENCH_PROF or build build/)")
    return path


def _run_bench(bench: Path, out: Path, *args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [str(bench), "--out", str(out), *args], capture_output=True, text=True, timeout=1800
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def profile(bench: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("prof")
    result = _run_bench(bench, out, "--nodes", str(SMALL_NODES))
    return out / "bench-prof", result


def _viewer_cmd() -> list[str]:
    script = Path(sys.executable).with_name("proton-viewer")
    if os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "triton.profiler.viewer"]


def test_bench_numbers(profile: tuple[Path, dict[str, Any]]) -> None:
    _, result = profile
    assert result["nodes"] >= SMALL_NODES
    assert result["read_nodes"] == result["nodes"]
    assert result["events"] > 0


def test_hatchet_with_llnl_hatchet(profile: tuple[Path, dict[str, Any]]) -> None:
    ht = pytest.importorskip("hatchet")
    base, result = profile
    data = json.loads(Path(f"{base}.hatchet").read_text())
    assert isinstance(data, list) and len(data) == 2
    assert data[1] == {"CPU": {"0": {"arch": "interpreter"}}}
    gf = ht.GraphFrame.from_literal(data[:1])
    assert len(gf.dataframe) == result["nodes"]
    for m in ("time (ns)", "count", "bytes", "flops16"):
        assert m in gf.exc_metrics
    kernels = gf.dataframe[gf.dataframe["name"].str.startswith("kernel_")]
    assert len(kernels) == result["events"]
    assert set(kernels["device_type"]) == {"CPU"}
    assert set(kernels["device_id"]) == {"0"}
    gf.update_inclusive_columns()
    root_total = gf.dataframe["time (ns) (inc)"].max()
    assert root_total == pytest.approx(kernels["time (ns)"].sum())
    assert gf.dataframe["count (inc)"].max() == result["events"]


def test_hatchet_with_proton_viewer(profile: tuple[Path, dict[str, Any]]) -> None:
    pytest.importorskip("hatchet")
    pytest.importorskip("triton.profiler.viewer")
    base, _ = profile
    path = f"{base}.hatchet"
    listed = subprocess.run(
        _viewer_cmd() + ["-l", path], capture_output=True, text=True, timeout=600
    )
    assert listed.returncode == 0, listed.stderr
    for m in ("- time", "- count", "- bytes", "- flops16"):
        assert m in listed.stdout
    shown = subprocess.run(
        _viewer_cmd() + ["-m", "time/ms", "-d", "3", path],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert shown.returncode == 0, shown.stderr
    assert "ROOT" in shown.stdout and "bench.py:level0@0" in shown.stdout
    derived = subprocess.run(
        _viewer_cmd() + ["-m", "avg_time/us,gbyte/s", "-d", "1", path],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert derived.returncode == 0, derived.stderr


def test_chrome_trace_is_strictly_valid(profile: tuple[Path, dict[str, Any]]) -> None:
    base, result = profile
    path = f"{base}.chrome_trace.json"
    assert trace_event_check.check_file(path) == []
    doc = json.loads(Path(path).read_text())
    assert doc["displayTimeUnit"] == "ns"
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    ms = [e for e in doc["traceEvents"] if e["ph"] == "M"]
    assert len(xs) == result["events"]
    assert {e["name"] for e in ms} >= {"process_name", "thread_name"}
    first_x = doc["traceEvents"].index(xs[0])
    assert all(e["ph"] == "M" for e in doc["traceEvents"][:first_x])
    assert all(len(e["args"]["call_stack"]) == 3 for e in xs)


def test_meta(profile: tuple[Path, dict[str, Any]]) -> None:
    base, result = profile
    meta = json.loads(Path(f"{base}.meta.json").read_text())
    assert meta["format"] == "flagprism-profile-meta"
    assert meta["incomplete"] is False and meta["incomplete_reasons"] == []
    assert meta["counts"]["kernels"] == result["events"]
    assert meta["session"]["context"] == "python"
    assert meta["outputs"]["hatchet"].endswith("bench-prof.hatchet")
    assert all(v == 0 for k, v in meta["lost"].items() if isinstance(v, int))


def test_checker_rejects_bad_traces() -> None:
    ok = {"ph": "X", "name": "k", "pid": 1, "tid": 2, "ts": 1.0, "dur": 2.0}
    assert trace_event_check.check_trace({"traceEvents": [ok]}) == []
    bad_cases = [
        ({"traceEvents": [{**ok, "ph": "Q"}]}, "bad or missing 'ph'"),
        ({"traceEvents": [{k: v for k, v in ok.items() if k != "dur"}]}, "missing 'dur'"),
        ({"traceEvents": [{**ok, "ts": -1}]}, "'ts' must be a finite number >= 0"),
        ({"traceEvents": [{**ok, "pid": "1"}]}, "'pid' must be an integer"),
        ({"traceEvents": [{**ok, "tid": True}]}, "'tid' must be an integer"),
        ({"traceEvents": [{**ok, "grid": [1, 2]}]}, "top-level field 'grid'"),
        ({"traceEvents": [{**ok, "args": []}]}, "'args' must be an object"),
        ({"traceEvents": [{"ph": "B", "name": "a", "pid": 1, "tid": 1, "ts": 0}]}, "never ends"),
        ({"traceEvents": [{"ph": "E", "pid": 1, "tid": 1, "ts": 0}]}, "without an open 'B'"),
        (
            {
                "traceEvents": [
                    {"ph": "B", "name": "a", "pid": 1, "tid": 1, "ts": 5},
                    {"ph": "E", "name": "b", "pid": 1, "tid": 1, "ts": 6},
                ]
            },
            "closes 'B'",
        ),
        ({"traceEvents": [ok, {**ok, "ts": 2.0, "dur": 5.0}]}, "partially overlaps"),
        (
            {"traceEvents": [{"ph": "M", "name": "thread_name", "pid": 1, "args": {"name": "x"}}]},
            "missing 'tid'",
        ),
        (
            {"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": 3}}]},
            "args.name must be a string",
        ),
        (
            {"traceEvents": [{"ph": "M", "name": "bogus", "pid": 1, "args": {}}]},
            "unknown metadata name",
        ),
        ({"traceEvents": {}}, "'traceEvents' must be an array"),
        ({"traceEvents": [], "displayTimeUnit": "s"}, "displayTimeUnit"),
    ]
    for doc, want in bad_cases:
        errors = trace_event_check.check_trace(doc)
        assert any(want in e for e in errors), (doc, errors)
    # Nested and adjacent slices are fine.
    nested = [ok, {**ok, "ts": 1.5, "dur": 1.0}, {**ok, "ts": 3.0, "dur": 1.0}]
    assert trace_event_check.check_trace({"traceEvents": nested}) == []


@pytest.mark.skipif(
    os.environ.get("FP_PROF_BIG") != "1",
    reason="set FP_PROF_BIG=1 to time a 1-million-node profile",
)
def test_large_profile_timing(bench: Path, tmp_path: Path) -> None:
    result = _run_bench(bench, tmp_path, "--nodes", "1000000", "--no-trace")
    path = tmp_path / "bench-prof.hatchet"
    ours = subprocess.run(
        [str(bench), "--read", str(path)], capture_output=True, text=True, timeout=600
    )
    assert ours.returncode == 0, ours.stderr
    ours_result = json.loads(ours.stdout)
    print(f"\nbench-prof 1M: {json.dumps(result)}")
    print(
        f"our reader: {ours_result['read_s']:.3f} s for {ours_result['nodes']} nodes, "
        f"{ours_result['bytes'] / 1e6:.1f} MB"
    )
    if shutil.which(_viewer_cmd()[0]) or Path(_viewer_cmd()[0]).exists():
        t0 = time.monotonic()
        viewer = subprocess.run(
            _viewer_cmd() + ["-m", "time/ms", "-d", "2", str(path)],
            capture_output=True,
            text=True,
            timeout=3600,
        )
        t1 = time.monotonic()
        print(f"proton-viewer -m time/ms: {t1 - t0:.1f} s (exit {viewer.returncode})")
        assert viewer.returncode == 0, viewer.stderr[-2000:]
