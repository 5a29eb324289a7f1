# SPDX-License-Identifier: Apache-2.0
"""Hardware metrics through the Python API (``profiler.start(metrics=...)``), end to end on
libfakecupti.so's fake range profiler, without a GPU: the values of each kernel's range land
on the kernel's call-path node next to its time (sums for counters, time-weighted means for
ratios), the metadata says how they were collected (passes, replay, degradations), and the
error paths (host backend, a malformed name, no permission for counters) say what to do and
leave nothing running. The scenarios run in child processes (_metricsfake.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import _profkernels as pk
import pytest
from test_profiler_cupti_fake import FAKE, run_scenario

HERE = Path(__file__).resolve().parent
HELPER = HERE / "_metricsfake.py"

pytestmark = pytest.mark.skipif(FAKE is None, reason="libfakecupti.so is not built")


def run(name: str, out: Path) -> dict[str, Any]:
    return run_scenario(name, out, HELPER)


def _node(tree: dict[str, Any], *path: str) -> dict[str, Any]:
    node = tree
    for name in path:
        node = next(c for c in node.get("children", []) if c["frame"]["name"] == name)
    return node["metrics"]


def test_metrics_attach_to_kernel_nodes(tmp_path: Path) -> None:
    facts = run("metrics", tmp_path)
    d = facts["durations"]
    root = json.loads((tmp_path / "hwm.hatchet").read_text())[0]
    add = _node(root, "step", "add_kernel")
    mm = _node(root, "mm_kernel")
    assert add["count"] == 2 and add["hw:launches"] == 2
    # The records came without times: each kernel's time is its gpu__time_duration.sum.
    assert add["time (ns)"] == d[0] + d[1] and mm["time (ns)"] == d[2]
    assert add["hw:gpu__time_duration.sum"] == d[0] + d[1]
    assert add["hw:dram__bytes_read.sum"] == 4096 + 8192
    # Time-weighted: launch 0 lasted d[0] ns at 10 %, launch 1 d[1] ns at 40 %.
    want = (10 * d[0] + 40 * d[1]) / (d[0] + d[1])
    assert add["hw:lts__t_sector_hit_rate.pct (pty)"] == pytest.approx(want, rel=1e-12)
    assert mm["hw:dram__bytes_read.sum"] == 100
    assert mm["hw:lts__t_sector_hit_rate.pct (pty)"] == 90
    # The file holds self values: the scope has none of its own (readers sum inclusive
    # metrics up the tree); the root lists every summable metric so Hatchet registers it.
    assert _node(root, "step").get("hw:dram__bytes_read.sum", 0) == 0
    assert "hw:lts__t_sector_hit_rate.pct (pty)" not in _node(root, "step")
    assert "hw:dram__bytes_read.sum" in root["metrics"]
    assert pk.kernels(pk.read_tree(tmp_path / "hwm.hatchet"))  # still a normal profile
    st = facts["status"]
    assert st["collected"] and st["passes"] == 2 and st["metrics"] == 3
    assert st["ranges"] == 3 and st["attached"] == 3 and st["chip"] == "GH100"
    assert st["kernels"] == 3 and st["records"] == 3 and st["records_timed"] == 0
    assert any("metric_unsupported: nope__x.sum" in r for r in st["reasons"])
    env = json.loads((tmp_path / "hwm.meta.json").read_text())
    text = json.dumps(env)
    assert "dram__bytes_read.sum=sum" in text and "lts__t_sector_hit_rate.pct=mean" in text
    assert "kernel replay" in text and "metric_unsupported: nope__x.sum" in text
    assert "gpu__time_duration.sum=sum" in text
    assert env["lost"]["dropped_by_backend"] == 0, env["lost"]  # untimed records: no drop
    assert facts["torn_down"] == [0, 0, 0, 0]
    # The raw ranges, verbatim, with the node each was attached to.
    vendor = json.loads((tmp_path / "hwm.vendor.json").read_text())
    assert vendor["vendor"] == "cupti-range-profiler" and vendor["passes"] == 2
    assert [r["node"] for r in vendor["ranges"]] == [
        "step/add_kernel",
        "step/add_kernel",
        "mm_kernel",
    ]
    assert [r["kernel"] for r in vendor["ranges"]] == ["add_kernel", "add_kernel", "mm_kernel"]
    assert {r["time_source"] for r in vendor["ranges"]} == {"gpu__time_duration.sum"}
    assert [r["values"]["dram__bytes_read.sum"] for r in vendor["ranges"]] == [4096, 8192, 100]
    reasons = vendor["degradation_reasons"]
    assert [r["kind"] for r in reasons] == ["metric_unsupported"], reasons
    assert reasons[0]["detail"].startswith("nope__x.sum on GH100 (")
    assert reasons[0]["detail"].endswith("CUPTI error 17)")
    assert env["environment"]["hw_metrics_vendor"].endswith("hwm.vendor.json")


def test_metrics_errors(tmp_path: Path) -> None:
    facts = run("errors", tmp_path)
    assert "metrics need backend='cupti'" in facts["host"]
    assert "'dram bytes' is not a metric name" in facts["bad_name"]
    kind, msg = facts["noperm"]
    assert kind == "NotSupportedError"
    assert "NVreg_RestrictProfilingToAdminUsers=0" in msg and "cuptiRangeProfilerEnable" in msg
    assert facts["sessions_after"] == 0
    assert facts["plain_hw"] is False
    assert facts["torn_down"] == [0, 0, 0, 0]


def test_cli_metrics_option(cli: Path, tmp_path: Path) -> None:
    """`flagprism profile -m LIST` reaches start(metrics=...): the metadata names the metrics
    and the replay passes, even for a program that launched nothing."""
    script = tmp_path / "prog.py"
    script.write_text("print('ran')\n")
    env = dict(
        os.environ,
        FLAGPRISM_PYTHON=sys.executable,
        FLAGPRISM_CUPTI_PATH=str(FAKE),
        FLAGPRISM_CUDA_DRIVER_PATH=str(FAKE),
    )
    env.pop("TRITON_INTERPRET", None)
    r = subprocess.run(
        [
            str(cli),
            "profile",
            "-n",
            "m",
            "-m",
            "dram__bytes_read.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed",
            str(script),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    env_meta = json.loads((tmp_path / "m.meta.json").read_text())["environment"]
    assert env_meta["hw_metrics"] == (
        "dram__bytes_read.sum=sum,sm__throughput.avg.pct_of_peak_sustained_elapsed=mean,"
        "gpu__time_duration.sum=sum"
    )
    assert env_meta["hw_metrics_passes"] == "1"
    assert env_meta["hw_metrics_chip"] == "GH100"
    assert json.loads((tmp_path / "m.meta.json").read_text())["session"]["backend"] == "cupti"
