# SPDX-License-Identifier: Apache-2.0
"""A real profile from the Python API on the Triton interpreter, read back by its consumers:
llnl-hatchet (GraphFrame.from_literal), Triton's proton-viewer, the strict Trace Event Format
checker (trace_event_check.py) and json for the metadata."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )

import _profkernels as pk  # noqa: E402
import trace_event_check  # noqa: E402

import flagprism.profiler as profiler  # noqa: E402

LAUNCHES = 7


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("outputs") / "run"
    x = torch.rand(3000)
    profiler.start(str(base), context="python", data="trace", hook="triton")
    with profiler.scope("model", {"bytes": 64}):
        with profiler.state("forward"):
            pk.add(x, x)
            pk.add(x, x)
        with profiler.cpu_timed_scope("host_work"):
            pk.chain_outer(x)
            pk.scale(x, 0.5)
    for _ in range(3):
        pk.add(x, x, pk.add_plain)
    paths = profiler.finalize()
    assert paths == [f"{base}.hatchet", f"{base}.chrome_trace.json", f"{base}.meta.json"]
    return base


def _viewer(*args: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("proton-viewer")
    cmd = (
        [str(script)]
        if os.access(script, os.X_OK)
        else [sys.executable, "-m", "triton.profiler.viewer"]
    )
    return subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=600)


def test_hatchet_reads_it(profile: Path) -> None:
    ht = pytest.importorskip("hatchet")
    data = json.loads(Path(f"{profile}.hatchet").read_text())
    assert data[1] == {"CPU": {"0": {"arch": "interpreter"}}}
    gf = ht.GraphFrame.from_literal(data[:1])
    for m in ("time (ns)", "count", "bytes", "flops32", "est_bytes", "est_flops"):
        assert m in gf.exc_metrics, (m, gf.exc_metrics)
    df = gf.dataframe
    names = set(df["name"])
    assert {
        "add_kernel[n=3000]",
        "add_plain",
        "scale_kernel",
        "model",
        "forward",
        "host_work",
    } <= names
    gf.update_inclusive_columns()
    assert gf.dataframe["count (inc)"].max() == LAUNCHES
    kernels = df[df["count"] > 0]
    assert kernels["count"].sum() == LAUNCHES
    assert set(kernels["device_type"]) == {"CPU"}
    assert gf.dataframe["time (ns) (inc)"].max() == pytest.approx(kernels["time (ns)"].sum())


def test_proton_viewer_reads_it(profile: Path) -> None:
    pytest.importorskip("hatchet")
    pytest.importorskip("triton.profiler.viewer")
    path = f"{profile}.hatchet"
    listed = _viewer("-l", path)
    assert listed.returncode == 0, listed.stderr
    for m in ("time", "count", "bytes", "flops32", "est_bytes", "est_flops"):
        assert f"- {m}" in listed.stdout, listed.stdout
    shown = _viewer("-m", "time/ms,count", path)
    assert shown.returncode == 0, shown.stderr
    for name in ("ROOT", "add_kernel[n=3000]", "add_plain", "forward", "model"):
        assert name in shown.stdout, shown.stdout
    derived = _viewer("-m", "avg_time/us,gbyte/s,flop32/s", "-d", "3", path)
    assert derived.returncode == 0, derived.stderr
    short = _viewer("-m", "time/%", "-f", "function_line", path)
    assert short.returncode == 0, short.stderr
    assert f"chain_outer@{pk.LINES['chain_outer']}" in short.stdout


def test_chrome_trace(profile: Path) -> None:
    path = f"{profile}.chrome_trace.json"
    assert trace_event_check.check_file(path) == []
    doc = json.loads(Path(path).read_text())
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    kernels = [e for e in xs if e["cat"] == "kernel"]
    scopes = [e for e in xs if e["cat"] == "scope"]
    assert len(kernels) == LAUNCHES
    assert sorted(e["name"] for e in scopes) == ["host_work", "model"]
    model = next(e for e in scopes if e["name"] == "model")
    for k in kernels:
        assert k["args"]["device_type"] == "CPU" and len(k["args"]["grid"]) == 3
        assert k["args"]["call_stack"], k
    inside = [k for k in kernels if "model" in k["args"]["call_stack"]]
    assert len(inside) == 4
    # Host-timed kernels nest inside the scope that launched them.
    for k in inside:
        assert model["ts"] <= k["ts"] and k["ts"] + k["dur"] <= model["ts"] + model["dur"] + 1e-3


def test_meta(profile: Path) -> None:
    m: dict[str, Any] = json.loads(Path(f"{profile}.meta.json").read_text())
    assert m["format"] == "flagprism-profile-meta"
    s = m["session"]
    assert (s["context"], s["data"], s["backend"], s["hook"]) == (
        "python",
        "trace",
        "host",
        "triton",
    )
    assert m["outputs"] == {
        "hatchet": f"{profile}.hatchet",
        "chrome_trace": f"{profile}.chrome_trace.json",
    }
    assert m["counts"]["kernels"] == LAUNCHES and m["counts"]["scopes"] == 2
    assert m["incomplete"] is False
    assert all(v == 0 for v in m["lost"].values() if isinstance(v, int))
    env = m["environment"]
    assert env["triton"] == triton.__version__ and env["torch"] == torch.__version__
    assert "host" in env["kernel_times"]
    for kernel in ("add_kernel", "add_plain", "scale_kernel"):
        assert env[f"estimate:{kernel}"].startswith("per program: bytes="), env
