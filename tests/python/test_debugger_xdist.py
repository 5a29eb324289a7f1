# SPDX-License-Identifier: Apache-2.0
"""The Debugger's check mode under pytest-xdist, on the Triton interpreter: a small test package
written to a temporary directory (two tests that launch a kernel reading one element past its
tensor, one that reads one element before it, the others clean), run serially and with
``-n 2`` under `flagprism debug --check bounds` and under the pytest plugin
(``--flagprism-check=bounds --flagprism-fail``). The merged summary must account for what the
serial run does (launches, kernels, findings), the failing tests must be the ones whose
launches had the findings, every launch with findings must keep its own report (named after
its worker and test), an output directory that cannot take the reports must stop pytest
before any test runs, a worker killed mid-run must leave the other workers' findings in the
summary (which names the missing worker), and `flagprism report` must show every finding of a
merged directory (of a session, and of `flagprism merge` of two runs) with its launch report.

The two test files (``--dist loadfile``) put the two tests of the same bug on different
workers, so the summary has to fold them as one process would."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")
pytest.importorskip("xdist", reason="pytest-xdist is not installed (requirements-dev.txt)")

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )

import flagprism.debugger as debugger  # noqa: E402

pytestmark = [
    pytest.mark.skipif(not debugger.is_available(), reason="flagprism._ext is not built"),
    # the module's tests read one `session` (a serial run and a run with -n 2 of a test package,
    # half a minute): one pytest-xdist worker runs them all, so it is made once
    pytest.mark.xdist_group("debugger_xdist_session"),
    pytest.mark.slow,
]

KERNELS = textwrap.dedent("""\
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def copy_kernel(x, y, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)


    @triton.jit
    def over_kernel(x, y, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y + offs, tl.load(x + offs + 1, mask=offs < n), mask=offs < n)


    @triton.jit
    def under_kernel(x, y, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y + offs, tl.load(x + offs - 1, mask=offs < n), mask=offs < n)


    def run(kernel):
        x = torch.arange(16, dtype=torch.float32)
        y = torch.empty_like(x)
        kernel[(1,)](x, y, 16, BLOCK=16)
    """)

TESTS_A = textwrap.dedent("""\
    import os
    import signal

    import xk


    def test_clean_1():
        xk.run(xk.copy_kernel)


    def test_bad_a():
        xk.run(xk.over_kernel)


    def test_clean_2():
        once = os.environ.get("XK_KILL")
        if once and not os.path.exists(once):  # the first worker that runs it dies
            open(once, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        xk.run(xk.copy_kernel)
    """)

TESTS_B = textwrap.dedent("""\
    import os

    import xk


    def test_bad_b():
        xk.run(xk.over_kernel)


    def test_under():
        xk.run(xk.under_kernel)


    def test_clean_3():
        xk.run(xk.copy_kernel)
        open(os.environ["XK_RAN"], "a").write("ran\\n")
    """)

BAD_TESTS = {
    "pkg/test_xa.py::test_bad_a",
    "pkg/test_xb.py::test_bad_b",
    "pkg/test_xb.py::test_under",
}
# <worker>_<test>_<kernel>_<UTC time>_run<N>.json
REPORT_NAME = re.compile(
    r"^gw\d+_test_(bad_a|bad_b|under)_(over|under)_kernel_\d{8}T\d{6}Z_run\d+\.json$"
)


def _env(root: Path, **extra: str) -> dict[str, str]:
    env = dict(
        os.environ,
        FLAGPRISM_PYTHON=sys.executable,
        TRITON_INTERPRET="1",
        PYTHONPATH=str(root / "pkg") + os.pathsep + os.environ.get("PYTHONPATH", ""),
        XK_RAN=str(root / "ran"),
    )
    env.update(extra)
    for k in (
        "PYTEST_CURRENT_TEST",
        "PYTEST_ADDOPTS",
        "FLAGPRISM_DEBUG_MANAGED",
        "PYTEST_XDIST_WORKER",
    ):
        env.pop(k, None)
    return env


def _run(args: list[str], root: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, capture_output=True, text=True, cwd=root, env=_env(root, **extra), timeout=600
    )


PYTEST = ["pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
XDIST = ["-n", "2", "--dist", "loadfile"]


def _summary(d: Path) -> dict[str, Any]:
    return json.loads((d / "summary.json").read_text())


def _totals(s: dict[str, Any]) -> dict[str, int]:
    t = s["totals"]
    return {
        k: t[k]
        for k in (
            "kernels",
            "launches",
            "instrumented",
            "findings",
            "launches_with_findings",
            "reports",
        )
    }


def _findings(s: dict[str, Any]) -> set[tuple[str, str, int, str]]:
    return {(f["kind"], f["kernel"], f["line"], f.get("subject") or "") for f in s["findings"]}


def _page(cli: Path, d: Path, out: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    r = subprocess.run(
        [str(cli), "report", str(d), "-o", str(out)], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stdout + r.stderr
    text = out.read_text()
    return r, json.loads(re.search(r'id="fp-data">(.*?)</script>', text, re.S).group(1))


@pytest.fixture(scope="module")
def session(cli: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The package, its serial run under `flagprism debug` and its run with -n 2."""
    root = tmp_path_factory.mktemp("xdist")
    (root / "pkg").mkdir()
    (root / "pkg" / "xk.py").write_text(KERNELS)
    (root / "pkg" / "test_xa.py").write_text(TESTS_A)
    (root / "pkg" / "test_xb.py").write_text(TESTS_B)
    serial = _run([str(cli), "debug", "--check", "bounds", "-o", "ser", *PYTEST, "pkg"], root)
    assert serial.returncode == 3, serial.stdout + serial.stderr  # findings
    par = _run([str(cli), "debug", "--check", "bounds", "-o", "par", *PYTEST, *XDIST, "pkg"], root)
    return {"root": root, "serial": serial, "par": par}


def test_cli_merges_the_workers_as_the_serial_run(session: dict[str, Any]) -> None:
    root, r = session["root"], session["par"]
    assert r.returncode == 3, r.stdout + r.stderr  # the workers' findings decide the status
    ser, par = _summary(root / "ser"), _summary(root / "par")
    assert _totals(ser) == {
        "kernels": 3,
        "launches": 6,
        "instrumented": 6,
        "findings": 2,
        "launches_with_findings": 3,
        "reports": 3,
    }
    assert _totals(par) == _totals(ser)
    assert _findings(par) == _findings(ser)
    assert par["workers"]["merged"] == "gw0,gw1" and par["workers"]["missing"] == ""
    assert par["complete"] is True and par["command"] == "flagprism debug --check bounds"
    assert par["output_dir"] == str(root / "par")
    # the bug both workers met is one finding, seen in two launches on two workers
    (over,) = [f for f in par["findings"] if f["kernel"] == "over_kernel"]
    assert over["launches"] == 2 and sorted(over["workers"]) == ["gw0", "gw1"]
    assert over["test"] in BAD_TESTS and over["stack"][0].startswith(str(root / "pkg"))
    (under,) = [f for f in par["findings"] if f["kernel"] == "under_kernel"]
    assert under["test"] == "pkg/test_xb.py::test_under"
    # each worker's part beside it, the merged text printed at the end
    for w in ("gw0", "gw1"):
        part = _summary(root / "par" / w)
        assert part["worker"] == {"id": w, "count": 2}
    assert (
        "2 pytest-xdist workers merged (gw0,gw1; missing: none): 3 kernels, 6 launches" in r.stderr
    )
    assert "no Triton kernel was launched" not in r.stderr


def test_every_launch_with_findings_keeps_its_own_report(session: dict[str, Any]) -> None:
    root = session["root"]
    reports = sorted((root / "par").glob("gw*/*.json"))
    reports = [p for p in reports if p.name != "summary.json"]
    assert len(reports) == _summary(root / "par")["totals"]["reports"] == 3, reports
    names = [p.name for p in reports]
    assert len(set(names)) == 3 and all(REPORT_NAME.match(n) for n in names), names
    for p in reports:
        rep = json.loads(p.read_text())
        # the worker in the name is the directory it is in, the test in the name launched it
        worker, test = re.match(r"^(gw\d+)_(test_\w+?)_(?:over|under)_kernel", p.name).groups()
        assert p.parent.name == worker
        assert rep["origin"]["test"].endswith(f".py::{test}")
        assert p.with_suffix(".txt").exists()
    # the two tests of the same bug ran on different workers (their groups)
    assert {p.parent.name for p in reports if "_over_kernel_" in p.name} == {"gw0", "gw1"}
    # serial reports are named after the test too
    ser = sorted(p.name for p in (root / "ser").glob("test_*.json"))
    assert len(ser) == 3 and all(re.match(r"^test_(bad_a|bad_b|under)_", n) for n in ser), ser


def test_plugin_fails_the_right_tests_and_merges(session: dict[str, Any]) -> None:
    root = session["root"]
    r = _run(
        [
            sys.executable,
            "-m",
            *PYTEST,
            *XDIST,
            "--flagprism-check=bounds",
            "--flagprism-fail",
            "--flagprism-output",
            "plug",
            "pkg",
        ],
        root,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    assert "3 failed, 3 passed" in r.stdout, r.stdout
    failed = set(re.findall(r"^FAILED (\S+) - flagprism: kernels launched by", r.stdout, re.M))
    assert failed == BAD_TESTS, r.stdout
    plug, ser = _summary(root / "plug"), _summary(root / "ser")
    assert _totals(plug) == _totals(ser) and _findings(plug) == _findings(ser)
    assert plug["command"] == "pytest --flagprism-check=bounds" and plug["exit_status"] == 1
    assert plug["workers"]["merged"] == "gw0,gw1"
    reports = [p for p in (root / "plug").glob("gw*/*.json") if p.name != "summary.json"]
    assert len(reports) == 3 and all(REPORT_NAME.match(p.name) for p in reports), reports
    assert "pytest-xdist workers merged (gw0,gw1; missing: none)" in r.stdout


@pytest.mark.parametrize("where", ["file", "under-a-file", "read-only", "proc"])
@pytest.mark.parametrize("workers", [[], XDIST], ids=["serial", "n2"])
def test_plugin_checks_the_output_directory_first(
    session: dict[str, Any], tmp_path: Path, where: str, workers: list[str]
) -> None:
    root = session["root"]
    if where == "file":
        out = tmp_path / "afile"
        out.write_text("x")
        why = "a file of that name is in the way"
    elif where == "under-a-file":
        (tmp_path / "afile").write_text("x")
        out = tmp_path / "afile" / "reports"
        why = "ENOTDIR"
    elif where == "read-only":
        out = tmp_path / "ro"
        out.mkdir()
        out.chmod(0o555)
        if os.access(out, os.W_OK):
            pytest.skip("a read-only directory is writable here (root): see the 'proc' case")
        why = "EACCES"
    else:
        out = Path("/proc")
        if not out.is_dir():
            pytest.skip("no /proc")
        why = "cannot create a file in its directory"
    ran = tmp_path / "ran"
    r = _run(
        [
            sys.executable,
            "-m",
            *PYTEST,
            *workers,
            "--flagprism-check=bounds",
            "--flagprism-output",
            str(out),
            "pkg",
        ],
        root,
        XK_RAN=str(ran),
    )
    assert r.returncode == 4, r.stdout + r.stderr  # pytest's usage error
    assert f"--flagprism-output {out}: the Debugger cannot write there" in r.stderr, r.stderr
    assert why in r.stderr, r.stderr
    assert not ran.exists() and "passed" not in r.stdout


def test_a_killed_worker_leaves_the_others_findings(
    session: dict[str, Any], tmp_path: Path
) -> None:
    root = session["root"]
    r = _run(
        [
            sys.executable,
            "-m",
            *PYTEST,
            *XDIST,
            "--flagprism-check=bounds",
            "--flagprism-output",
            "killed",
            "pkg",
        ],
        root,
        XK_KILL=str(tmp_path / "killed-once"),
    )
    assert r.returncode == 1, r.stdout + r.stderr
    (dead,) = set(
        re.findall(
            r"worker '(gw\d+)' crashed while running 'pkg/test_xa.py::test_clean_2'", r.stdout
        )
    )
    s = _summary(root / "killed")
    assert s["workers"]["missing"] == dead and dead not in s["workers"]["merged"].split(",")
    assert (
        s["complete"] is False and f"missing worker {dead} (no summary)" in s["incomplete_reason"]
    )
    # group b ran on the other worker: its findings are all there
    tests = {f["test"] for f in s["findings"]}
    assert {"pkg/test_xb.py::test_bad_b", "pkg/test_xb.py::test_under"} <= tests
    assert f"worker {dead} missing: no summary" in r.stdout


def test_report_of_a_merged_session(cli: Path, session: dict[str, Any], tmp_path: Path) -> None:
    root = session["root"]
    r, page = _page(cli, root / "par", tmp_path / "page.html")
    assert r.stdout.startswith(
        f"wrote {tmp_path / 'page.html'}: 3 launches, 0 statements, 3 findings"
    )
    _check_links(page, root / "par", _summary(root / "par"))


def test_report_of_merged_runs(cli: Path, session: dict[str, Any], tmp_path: Path) -> None:
    """`flagprism merge` of two Debugger runs: its page shows the findings of both."""
    root = session["root"]
    for name, tests in (
        ("run1", ["pkg/test_xa.py::test_bad_a", "pkg/test_xb.py::test_under"]),
        ("run2", ["pkg/test_xb.py::test_bad_b"]),
    ):
        r = _run(
            [str(cli), "debug", "--check", "bounds", "-o", str(tmp_path / name), *PYTEST, *tests],
            root,
        )
        assert r.returncode == 3, r.stdout + r.stderr
    r = subprocess.run(
        [
            str(cli),
            "merge",
            str(tmp_path / "run1"),
            str(tmp_path / "run2"),
            "-o",
            str(tmp_path / "all"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and "3 findings" in r.stdout, r.stdout + r.stderr
    r, page = _page(cli, tmp_path / "all", tmp_path / "page.html")
    assert ": 3 launches, 0 statements, 3 findings" in r.stdout, r.stdout
    _check_links(page, tmp_path / "all", _summary(tmp_path / "all"))


def _check_links(page: dict[str, Any], d: Path, summary: dict[str, Any]) -> None:
    """Every finding of the summary is on the page, in a launch whose report is the one the
    summary names."""
    launches = page["launches"]
    files = [l["file"] for l in launches]
    assert len(set(files)) == len(files)
    for f in page["findings"]:
        assert 0 <= f["launch"] < len(launches)
        assert launches[f["launch"]]["kernel"] == f["kernel"]
    assert len(page["findings"]) == page["findings_total"] == len(launches)
    shown = {(f["kind"], f["kernel"], f["line"]) for f in page["findings"]}
    for f in summary["findings"]:
        assert (f["kind"], f["kernel"], f["line"]) in shown
        assert Path(f["report"]).exists()
        assert Path(f["report"]).with_suffix(".json").name in files
    assert page["summary"]["findings"] == summary["findings"]
