# SPDX-License-Identifier: Apache-2.0
"""`flagprism import-ncu` end to end: the CLI attaches a (synthetic) Nsight Compute CSV to a
hand-written profile, and the result is read by its real consumers: llnl-hatchet
(GraphFrame.from_literal), Triton's proton-viewer, and json for the vendor file. The expected
numbers are re-derived here from the CSV with Python's csv module, independently of the C code.

Inputs: tests/data/ncu/*.csv and tests/data/profiles/ncu-demo.* (synthetic; see
tests/data/ncu/README.md).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"
READ = "ncu:dram__bytes_read.sum (byte)"
TIME = "ncu:gpu__time_duration.sum (nsecond)"
SM = "ncu:sm__throughput.avg.pct_of_peak_sustained_elapsed (%) (pty)"
REGS = "ncu:launch__registers_per_thread (register/thread) (pty)"


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A copy of the demo profile and its trace in a scratch directory; returns the .hatchet."""
    for suffix in (".hatchet", ".chrome_trace.json"):
        shutil.copy(DATA / "profiles" / f"ncu-demo{suffix}", tmp_path / f"prof{suffix}")
    return tmp_path / "prof.hatchet"


def run(cli: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(cli), "import-ncu", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def raw_rows(name: str) -> list[dict[str, str]]:
    """Data rows of a raw-page CSV (tool lines and the units row dropped)."""
    lines = [ln for ln in (DATA / "ncu" / name).read_text().splitlines() if ln.startswith('"')]
    rows = list(csv.DictReader(lines))
    return [r for r in rows if r["ID"] != ""]


def number(text: str) -> float:
    return float(text.replace(",", ""))


def nodes(path: Path) -> dict[str, dict[str, Any]]:
    """Node path ('run@10/add_kernel') -> metrics, from the Hatchet file as JSON."""
    out: dict[str, dict[str, Any]] = {}

    def walk(node: dict[str, Any], prefix: str) -> None:
        name = node["frame"]["name"]
        key = f"{prefix}/{name}" if prefix else name
        out[key] = node["metrics"]
        for child in node.get("children", []):
            walk(child, "" if name == "ROOT" else key)

    walk(json.loads(path.read_text())[0], "")
    return out


def test_import_with_trace_order(cli: Path, demo: Path) -> None:
    r = run(cli, DATA / "ncu" / "raw-base.csv", "--into", demo)
    assert r.returncode == 0, r.stderr
    assert "matched:   5 launches onto 3 nodes (launch order from" in r.stdout
    assert "unmatched: 2 launches" in r.stdout
    n = nodes(demo)
    rows = raw_rows("raw-base.csv")
    # The trace's order: run/add <- IDs 0 and 3, tail/add <- ID 1, run/matmul <- IDs 2 and 4.
    by_id = {r["ID"]: r for r in rows}
    run_add = n["main.py:run@10/add_kernel"]
    assert run_add[READ] == sum(number(by_id[i]["dram__bytes_read.sum"]) for i in "03")
    assert run_add[TIME] == 22000
    assert run_add["ncu:launches"] == 2
    want = (20 * 10000 + 30 * 12000) / 22000  # weighted by gpu__time_duration
    assert run_add[SM] == pytest.approx(want, rel=1e-12)
    assert run_add[REGS] == 16
    assert run_add["count"] == 2  # the profile's own metrics stay
    assert n["main.py:tail@20/add_kernel"][READ] == 65536
    assert n["main.py:run@10/matmul_kernel"][SM] == pytest.approx(72.5)
    assert n["ROOT"][READ] == 0  # hatchet hint: self value; totals are computed by readers

    vendor = json.loads((demo.parent / "prof.vendor.json").read_text())
    assert vendor["vendor"] == "nvidia-ncu"
    assert vendor["matching"]["order"] == "trace"
    assert [u["launch"] for u in vendor["unmatched"]] == [5, 6]
    assert "surplus" in vendor["unmatched"][1]["reason"]
    data = [rec for rec in vendor["records"] if rec["kind"] == "data"]
    assert [rec["values"] for rec in data] == rows  # verbatim
    kinds = {d["kind"] for d in vendor["degradation_reasons"]}
    assert kinds == {"metric_not_available"}


def test_matched_sums_equal_csv_sums(cli: Path, demo: Path) -> None:
    """Whatever the split between nodes, every matched launch's counters land in the tree."""
    out = demo.parent / "counts.hatchet"
    r = run(cli, DATA / "ncu" / "raw-base.csv", "--into", demo, "-o", out, "--no-trace")
    assert r.returncode == 0, r.stderr
    assert "launch order: node counts" in r.stdout
    assert "kernels have several call sites" in r.stdout
    vendor = json.loads((demo.parent / "counts.vendor.json").read_text())
    matched = [l for l in vendor["launches"] if l["node"] is not None]
    rows = {r["ID"]: r for r in raw_rows("raw-base.csv")}
    for metric, col in ((READ, "dram__bytes_read.sum"), (TIME, "gpu__time_duration.sum")):
        tree_total = sum(m.get(metric, 0) for m in nodes(out).values())
        csv_total = sum(number(rows[l["id"]][col]) for l in matched)
        assert tree_total == csv_total
    # Count order: run/add takes IDs 0 and 1, tail/add ID 3.
    assert nodes(out)["main.py:tail@20/add_kernel"][TIME] == 12000
    assert demo.read_bytes() == (DATA / "profiles" / "ncu-demo.hatchet").read_bytes()


def test_llnl_hatchet_reads_the_result(cli: Path, demo: Path) -> None:
    ht = pytest.importorskip("hatchet")
    assert run(cli, DATA / "ncu" / "raw-base.csv", "--into", demo).returncode == 0
    gf = ht.GraphFrame.from_literal(json.loads(demo.read_text())[:1])
    for m in (READ, TIME, "ncu:launches"):
        assert m in gf.exc_metrics
    assert SM in gf.dataframe.columns and SM not in gf.exc_metrics  # a per-node mean
    gf.update_inclusive_columns()
    df = gf.dataframe
    total = sum(
        number(r["dram__bytes_read.sum"]) for r in raw_rows("raw-base.csv") if r["ID"] in "01234"
    )
    assert df[f"{READ} (inc)"].max() == total
    kernels = df[df["name"] == "add_kernel"]
    assert sorted(kernels[SM].round(6)) == [5.0, round(560000 / 22000, 6)]


def test_proton_viewer_shows_ncu_metrics(cli: Path, demo: Path) -> None:
    pytest.importorskip("hatchet")
    pytest.importorskip("triton.profiler.viewer")
    assert run(cli, DATA / "ncu" / "details.csv", "--into", demo).returncode == 0
    viewer = Path(sys.executable).with_name("proton-viewer")
    cmd = (
        [str(viewer)]
        if os.access(viewer, os.X_OK)
        else [sys.executable, "-m", "triton.profiler.viewer"]
    )
    listed = subprocess.run(cmd + ["-l", str(demo)], capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0, listed.stderr
    assert "- ncu:dram__bytes_read.sum" in listed.stdout
    assert "- ncu:gpu speed of light throughput:duration" in listed.stdout.lower()
    shown = subprocess.run(
        cmd
        + [
            "-m",
            "ncu:dram__bytes_read.sum,ncu:GPU Speed Of Light Throughput:L1-TEX Cache Throughput",
            "-d",
            "3",
            str(demo),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert shown.returncode == 0, shown.stderr
    assert "add_kernel" in shown.stdout and "matmul_kernel" in shown.stdout


def test_details_page_and_json_summary(cli: Path, demo: Path) -> None:
    r = run(cli, DATA / "ncu" / "details.csv", "--into", demo, "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["page"] == "details"
    assert summary["launches"] == 2 and summary["matched"] == 2
    assert summary["order"] == "trace"
    assert summary["profile_launches_without_record"] == 3
    assert summary["values_missing"] == 1
    add = nodes(demo)["main.py:run@10/add_kernel"]
    assert add["ncu:GPU Speed Of Light Throughput:Duration (nsecond)"] == pytest.approx(10020)
    assert add["ncu:dram__bytes_read.sum (byte)"] == pytest.approx(16.78e6)
    assert add[
        "ncu:GPU Speed Of Light Throughput:DRAM Frequency (cycle/second) (pty)"
    ] == pytest.approx(2.62e9)
    assert "ncu:lts__t_sector_hit_rate.pct (%) (pty)" not in add  # it was n/a


def test_no_permission_keeps_the_profile_and_says_why(cli: Path, demo: Path) -> None:
    before = demo.read_bytes()
    r = run(cli, DATA / "ncu" / "no-permission.csv", "--into", demo)
    assert r.returncode == 1
    assert "counter_permission" in r.stderr and "ERR_NVGPUCTRPERM" in r.stderr
    assert demo.read_bytes() == before
    vendor = json.loads((demo.parent / "prof.vendor.json").read_text())
    kinds = [d["kind"] for d in vendor["degradation_reasons"]]
    assert "counter_permission" in kinds and "no_launches" in kinds
    assert len(vendor["messages"]) == 4


def test_refuses_second_import_and_bad_input(cli: Path, demo: Path, tmp_path: Path) -> None:
    assert run(cli, DATA / "ncu" / "raw-base.csv", "--into", demo).returncode == 0
    again = run(cli, DATA / "ncu" / "raw-base.csv", "--into", demo)
    assert again.returncode == 1
    assert "already has Nsight Compute metrics" in again.stderr
    bad = tmp_path / "bad.csv"
    bad.write_text('"ID","Kernel Name"\n"0","k"x\n')
    r = run(cli, bad, "--into", demo, "-o", tmp_path / "x.hatchet")
    assert r.returncode == 1
    assert f"{bad}:2:8:" in r.stderr
    assert run(cli, bad).returncode == 2  # --into missing
    assert run(cli, "--into", demo).returncode == 2  # CSV missing
    assert run(cli, bad, "--into", demo, "--trace", "t", "--no-trace").returncode == 2


def _h200_profile(tmp_path: Path) -> Path:
    """A tree with the two Triton kernels the H200 capture (tests/data/ncu/h200-*.csv) profiled
    once each, the way `flagprism profile` names kernel nodes."""

    def kernel(name: str) -> dict[str, Any]:
        return {
            "frame": {"name": name, "type": "function"},
            "metrics": {"count": 1, "time (ns)": 1000.0, "device_id": "0", "device_type": "CUDA"},
            "children": [],
        }

    root = {
        "frame": {"name": "ROOT", "type": "function"},
        "metrics": {"count": 0, "time (ns)": 0.0},
        "children": [kernel("ncu_vadd"), kernel("ncu_matmul")],
    }
    path = tmp_path / "h200.hatchet"
    path.write_text(json.dumps([root, {"CUDA": {"0": {"arch": "90"}}}]))
    return path


@pytest.mark.parametrize("page", ["raw", "details"])
def test_real_h200_capture(cli: Path, tmp_path: Path, page: str) -> None:
    """Real `ncu --csv` output captured on the H200 (ncu 2025.3.1): the details page leaves out
    the trailing rule columns on metric rows, and times come in "ns"."""
    prof = _h200_profile(tmp_path)
    r = run(cli, DATA / "ncu" / f"h200-{page}.csv", "--into", prof)
    assert r.returncode == 0, r.stderr
    got = nodes(prof)
    vadd = got["ncu_vadd"]
    # The capture's vector add reads two float32 vectors of n elements and writes one
    # (n = 2**29 in the raw capture, 2**24 in the details one).
    n = 2**29 if page == "raw" else 2**24
    assert vadd["ncu:dram__bytes_read.sum (byte)"] == pytest.approx(2 * n * 4, rel=0.02)
    if page == "raw":  # at 2**24 elements part of the output is still in L2 when the kernel ends
        assert vadd["ncu:dram__bytes_write.sum (byte)"] == pytest.approx(n * 4, rel=0.02)
    assert vadd["ncu:gpu__time_duration.sum (nsecond)"] > 0
    assert got["ncu_matmul"]["ncu:launches"] == 1
    vendor = json.loads((tmp_path / "h200.vendor.json").read_text())
    assert not [d for d in vendor["degradation_reasons"] if d["kind"] == "row_shape"]
