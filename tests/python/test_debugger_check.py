# SPDX-License-Identifier: Apache-2.0
"""Check mode over whole programs and test suites, on the interpreter: the launch pipeline (the
native writer in the background, results joined at take time), reports only for launches with
findings, the selection knobs (kernel, launch, max_reports, all_reports, max_runs) and their
validation, `flagprism debug --check` and the pytest plugin (--flagprism-check, --flagprism-fail,
each finding naming its test)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import flagprism.debugger as debugger

HERE = Path(__file__).resolve().parent

KERNELS = textwrap.dedent("""\
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)


    @triton.jit
    def overread(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n + 8)
        tl.store(out_ptr + offs, x, mask=offs < n)


    def run(kernel, n=100):
        x = torch.randn(n)
        out = torch.empty(n)
        kernel[(triton.cdiv(n, 64),)](x, out, n, BLOCK=64)
        return out
    """)


@pytest.fixture
def kmod(tmp_path, monkeypatch):
    (tmp_path / "ck_kernels.py").write_text(KERNELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    import ck_kernels  # noqa: PLC0415

    yield ck_kernels
    sys.modules.pop("ck_kernels", None)


@pytest.fixture
def fresh(tmp_path):
    """The Debugger with the native writer (the pipeline), reset before and after."""
    debugger.deactivate()
    debugger.reset_config()
    debugger.clear_exported_runs()
    debugger._report_fn = debugger._ext_report  # the native writer: the pipeline
    debugger.configure(output_dir=tmp_path / "out")
    debugger.reset_summary()
    yield debugger
    debugger.deactivate()
    debugger.reset_config()
    debugger.clear_exported_runs()


def test_pipeline_reports_only_launches_with_findings(fresh, kmod, tmp_path):
    fresh.activate(check="bounds")
    for _ in range(5):
        kmod.run(kmod.scale)
    kmod.run(kmod.overread)
    kmod.run(kmod.scale)
    fresh.deactivate()
    runs = fresh.take_exported_runs()
    assert [r["kernel"] for r in runs] == ["scale"] * 5 + ["overread", "scale"]
    assert [r["run_index"] for r in runs] == list(range(7))
    assert [r["findings_count"] for r in runs] == [0] * 5 + [1, 0]
    assert all(r["txt"] is None and r["report"] is None for i, r in enumerate(runs) if i != 5)
    bad = runs[5]
    assert Path(bad["txt"]).exists() and bad["findings"][0]["kind"] == "out_of_bounds"
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert len([f for f in files if f.endswith(".json")]) == 1, files  # one report, no summary yet
    s = fresh.summary()["totals"]
    assert s["launches"] == 7 and s["by_status"]["instrumented"] == 7 and s["findings"] == 1
    st = fresh.stats()["pipelines"]["cpu"] if fresh.stats()["pipelines"] else None
    assert st is None  # deactivate() closed the pipeline


def test_pipeline_stats_while_active(fresh, kmod):
    fresh.activate(check="bounds")
    for _ in range(3):
        kmod.run(kmod.scale)
    fresh.summary()  # drains
    st = fresh.stats()["pipelines"]["cpu"]
    assert (
        st["submitted"] == 3
        and st["done"] == 3
        and st["failed"] == 0
        and st["in_flight_bytes"] == 0
    )


def test_reserve_prepare_in_one_call():
    """The launch path's one call into the pipeline before a launch: a slice is reserved and
    prepared (zeroed, header written), a buffer larger than the pool is None (the caller reports
    that launch synchronously), and a slice given back is reused."""
    import struct

    from flagprism import _ext

    pipe = _ext.debug_pipe_new(_ext.debug_summary_new(), 1 << 16, 0, True, 0)
    hdr = struct.pack("<8q", *range(1, 9))
    off = _ext.debug_pipe_reserve_prepare(pipe, 4096, hdr, 0)
    assert isinstance(off, int)
    other = _ext.debug_pipe_reserve_prepare(pipe, 4096, hdr, 0)
    assert other != off  # both in flight: distinct slices
    assert _ext.debug_pipe_reserve_prepare(pipe, 1 << 20, hdr, 0) is None
    _ext.debug_pipe_unreserve(pipe, other)
    _ext.debug_pipe_unreserve(pipe, off)
    assert _ext.debug_pipe_stats(pipe)["in_flight_bytes"] == 0
    # a header longer than its slice: the slice is given back, the error names the call
    with pytest.raises(ValueError, match="fp_dbg_pipe_prepare"):
        _ext.debug_pipe_reserve_prepare(pipe, 32, hdr, 0)
    assert _ext.debug_pipe_stats(pipe)["in_flight_bytes"] == 0
    with pytest.raises(TypeError):
        _ext.debug_pipe_reserve_prepare(pipe, 4096, "not bytes", 0)


def test_reactivation_reports_like_the_first(fresh, kmod):
    """deactivate() and activate() again (with or without release_memory) make a new pipeline
    that reports every launch; a host pipeline keeps no page-locked spare."""
    from flagprism import _ext

    for release in (False, True, False):
        fresh.activate(check="bounds")
        kmod.run(kmod.scale)
        kmod.run(kmod.overread)
        fresh.deactivate(release_memory=release)
    runs = fresh.take_exported_runs()
    assert [r["findings_count"] for r in runs] == [0, 1] * 3
    assert fresh.summary()["totals"]["by_status"]["instrumented"] == 6
    assert _ext.debug_pipe_release_spare() == 0


def test_all_reports_and_max_reports(fresh, kmod, tmp_path):
    fresh.configure(output_dir=tmp_path / "all", all_reports=True)
    fresh.activate(check="bounds")
    kmod.run(kmod.scale)
    fresh.deactivate()
    (r,) = fresh.take_exported_runs()
    assert Path(r["txt"]).exists()
    fresh.configure(output_dir=tmp_path / "max", max_reports=2)
    fresh.reset_summary()
    fresh.activate(check="bounds")
    for _ in range(5):
        kmod.run(kmod.overread)
    fresh.deactivate()
    runs = fresh.take_exported_runs()
    assert [bool(r["txt"]) for r in runs] == [True, True, False, False, False]
    assert [r["findings_count"] for r in runs] == [1] * 5  # still checked, still counted
    f = fresh.summary()["json"]["findings"]
    assert len(f) == 1 and f[0]["launches"] == 5


def test_kernel_and_launch_filters(fresh, kmod):
    fresh.configure(kernel="^over")
    fresh.activate(check="bounds")
    kmod.run(kmod.scale)
    kmod.run(kmod.overread)
    fresh.deactivate()
    k = {x["name"]: x for x in fresh.summary()["json"]["kernels"]}
    assert k["overread"]["instrumented"] == 1 and k["scale"]["instrumented"] == 0
    assert "does not match --kernel '^over'" in k["scale"]["not_instrumented"][0]["reason"]
    assert [r["kernel"] for r in fresh.take_exported_runs()] == ["overread"]
    fresh.reset_summary()
    fresh.configure(launch="1-2")
    fresh.activate(check="bounds")
    for _ in range(4):
        kmod.run(kmod.scale)
    fresh.deactivate()
    runs = fresh.take_exported_runs()
    assert [r["run_index"] for r in runs] == [1, 2]
    (why,) = fresh.summary()["json"]["kernels"][0]["not_instrumented"]
    assert why["launches"] == 2 and "--launch 1-2" in why["reason"]


def test_max_runs_keeps_memory_bounded(fresh, kmod):
    fresh.configure(max_runs=3)
    fresh.activate(check="bounds")
    for _ in range(8):
        kmod.run(kmod.scale)
    fresh.deactivate()
    runs = fresh.take_exported_runs()
    assert [r["run_index"] for r in runs] == [5, 6, 7]
    assert fresh.stats()["runs_dropped"] >= 5


@pytest.mark.parametrize(
    "kw,msg",
    [
        ({"pool_bytes": 10}, "pool_bytes must be an integer from 1 MiB"),
        ({"max_reports": -1}, "max_reports must be None or an integer >= 0"),
        ({"kernel": "("}, "kernel must be a regular expression"),
        ({"launch": "3-1"}, "launch must name indices 0 <= N <= M"),
        ({"launch": "x"}, "launch must be N or N-M"),
        ({"max_runs": 0}, "max_runs must be an integer >= 1"),
        ({"record_capacity": 2**40}, "record_capacity must be None or an integer from 0 to"),
    ],
)
def test_configure_names_the_setting(fresh, kw, msg):
    with pytest.raises(ValueError, match=msg):
        fresh.configure(**kw)


def test_configure_rejects_bytes_output_dir(fresh):
    with pytest.raises(TypeError, match="output_dir must be a str"):
        fresh.configure(output_dir=b"out")


def test_activate_rejects_unknown_check(fresh):
    with pytest.raises(ValueError, match="check must name one or more of bounds, nan"):
        fresh.activate(check="bounds,nans")


# ------------------------------------------------------------------------------------------------
# The CLI and the pytest plugin
# ------------------------------------------------------------------------------------------------

TESTS = textwrap.dedent("""\
    import ck_kernels as k

    def test_clean():
        k.run(k.scale)

    def test_overreads():
        k.run(k.overread)
    """)


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(
        os.environ,
        FLAGPRISM_PYTHON=sys.executable,
        TRITON_INTERPRET="1",
        PYTHONPATH=str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    )
    env.pop("PYTEST_CURRENT_TEST", None)
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("FLAGPRISM_DEBUG_MANAGED", None)
    return env


@pytest.mark.slow
def test_pytest_plugin_names_and_fails_the_test(tmp_path):
    (tmp_path / "ck_kernels.py").write_text(KERNELS)
    (tmp_path / "test_ck.py").write_text(TESTS)
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--flagprism-check=bounds",
        f"--flagprism-output={tmp_path / 'fp'}",
        str(tmp_path / "test_ck.py"),
    ]
    r = subprocess.run(
        cmd, capture_output=True, text=True, cwd=tmp_path, env=_env(tmp_path), timeout=600
    )
    assert r.returncode == 0, r.stdout + r.stderr  # findings alone do not fail tests
    assert "out_of_bounds in overread" in r.stdout and "1 finding" in r.stdout
    summary = json.loads((tmp_path / "fp" / "summary.json").read_text())
    (f,) = summary["findings"]
    assert f["test"] == "test_ck.py::test_overreads" and f["kernel"] == "overread"
    r = subprocess.run(
        cmd + ["--flagprism-fail"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
        timeout=600,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 failed, 1 passed" in r.stdout and "FAILED test_ck.py::test_overreads" in r.stdout
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--flagprism-fail", str(tmp_path / "test_ck.py")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
        timeout=600,
    )
    assert r.returncode != 0 and "--flagprism-fail needs --flagprism-check" in r.stderr


@pytest.mark.slow
def test_cli_check_with_pytest_uses_the_plugin(cli, tmp_path):
    (tmp_path / "ck_kernels.py").write_text(KERNELS)
    (tmp_path / "test_ck.py").write_text(TESTS)
    r = subprocess.run(
        [
            str(cli),
            "debug",
            "--check",
            "bounds",
            "-o",
            "rep",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "test_ck.py",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
        timeout=600,
    )
    assert r.returncode == 3, r.stdout + r.stderr
    assert "test: test_ck.py::test_overreads" in r.stderr, r.stderr
    # the package is imported before pytest, which then cannot (and need not) rewrite it
    assert "PytestAssertRewriteWarning" not in r.stdout + r.stderr, r.stdout
    r = subprocess.run(
        [
            str(cli),
            "debug",
            "--check",
            "bounds",
            "-o",
            "rep",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--flagprism-fail",
            "test_ck.py",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
        timeout=600,
    )
    assert r.returncode == 1 and "1 failed, 1 passed" in r.stdout, r.stdout + r.stderr


def test_cli_filters_select_exactly(cli, tmp_path):
    (tmp_path / "ck_kernels.py").write_text(KERNELS)
    prog = tmp_path / "prog.py"
    prog.write_text(
        "import ck_kernels as k\nfor _ in range(3):\n    k.run(k.scale)\nk.run(k.overread)\n"
    )
    r = subprocess.run(
        [
            str(cli),
            "debug",
            "--check",
            "bounds",
            "--launch",
            "1-3",
            "--kernel",
            "scale|over",
            "-o",
            "rep",
            str(prog),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
        timeout=600,
    )
    assert r.returncode == 3, r.stderr
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    k = {x["name"]: x for x in summary["kernels"]}
    assert k["scale"]["instrumented"] == 2 and k["overread"]["instrumented"] == 1
    assert summary["checks"] == "bounds" and summary["mode"] == "check"
    reports = [p for p in (tmp_path / "rep").glob("prog_*.json")]
    assert len(reports) == 1 and "overread" in reports[0].name


@pytest.mark.parametrize(
    "args,msg",
    [
        (["--check", "bounds,nans"], "unknown check 'nans'"),
        (["--check", "nan,nan"], "check 'nan' given twice"),
        (["--check", ""], "needs a list"),
        (["--launch", "5-2"], "needs N or N-M"),
        (["--launch", "-1"], "needs N or N-M"),
        (["--max-reports", "x"], "max-reports"),
    ],
)
def test_cli_usage_errors(cli, tmp_path, args, msg):
    r = subprocess.run(
        [str(cli), "debug", *args, "prog.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
        timeout=60,
    )
    assert r.returncode == 2 and msg in r.stderr, r.stderr


def test_report_page_of_a_clean_check_run(cli, tmp_path):
    """A clean check-mode run writes only the summary: `flagprism report` makes its page from it."""
    (tmp_path / "ck_kernels.py").write_text(KERNELS)
    prog = tmp_path / "prog.py"
    prog.write_text("import ck_kernels as k\nk.run(k.scale)\n")
    r = subprocess.run(
        [str(cli), "debug", "--check", "bounds", "-o", "rep", str(prog)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "rep").iterdir()) == ["summary.json", "summary.txt"]
    r = subprocess.run(
        [str(cli), "report", "rep", "-o", "page.html"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "no per-launch report beside the summary" in r.stderr
    page = (tmp_path / "page.html").read_text()
    assert "flagprism.debug.summary" in page and "scale" in page


# ------------------------------------------------------------------------------------------------
# Value checks without markers: where the first NaN came from
# ------------------------------------------------------------------------------------------------

THREE = textwrap.dedent("""\
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def shift(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m)
        tl.store(out_ptr + offs, x * 0.5 + 0.25, mask=m)


    @triton.jit
    def logs(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m)
        y = tl.log(x - 0.5)
        tl.store(out_ptr + offs, y, mask=m)


    @triton.jit
    def double(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m)
        tl.store(out_ptr + offs, x * 2, mask=m)


    def pipeline():
        torch.manual_seed(0)
        n = 200
        x = torch.rand(n)
        a = torch.empty(n)
        b = torch.empty(n)
        c = torch.empty(n)
        g = (triton.cdiv(n, 64),)
        shift[g](x, a, n, BLOCK=64)
        logs[g](a, b, n, BLOCK=64)
        double[g](b, c, n, BLOCK=64)
        return c
    """)

LOG_LINE = THREE.splitlines().index("    y = tl.log(x - 0.5)") + 1


def test_cli_check_nan_names_the_origin(cli, tmp_path):
    (tmp_path / "three.py").write_text(THREE)
    prog = tmp_path / "prog.py"
    prog.write_text("import three\nc = three.pipeline()\nprint('nan', int(c.isnan().sum()))\n")
    r = subprocess.run(
        [str(cli), "debug", "--check", "nan", "-o", "rep", str(prog)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
        timeout=600,
    )
    assert r.returncode == 3, r.stdout + r.stderr
    assert int(r.stdout.split()[-1]) > 0  # the program really made NaNs
    assert f"nan_origin in logs at three.py:{LOG_LINE}" in r.stderr and "launch 1" in r.stderr, (
        r.stderr
    )
    s = json.loads((tmp_path / "rep" / "summary.json").read_text())
    assert [k["name"] for k in s["kernels"]] == ["shift", "logs", "double"]
    assert all(k["instrumented"] == 1 for k in s["kernels"])
    (f,) = s["findings"]
    assert (f["kind"], f["kernel"], f["line"], f["launch"]) == ("nan_origin", "logs", LOG_LINE, 1)
    assert (
        f["from_memory"] is False and f["descendants"] == 1
    )  # `double` loads it: counted, not repeated
    assert f["stack"] and f["stack"][-1].startswith(str(tmp_path / "three.py"))
    reports = sorted(p.name for p in (tmp_path / "rep").glob("prog_*.json"))
    assert len(reports) == 1 and "_logs_" in reports[0], reports
    # nan alone: no out-of-bounds or precision findings, no address records
    rep = json.loads((tmp_path / "rep" / reports[0]).read_text())
    assert rep["config"]["addr_level"] == 0 and rep["config"]["level"] == 1


def test_pytest_plugin_check_nan_names_the_test(tmp_path):
    (tmp_path / "three.py").write_text(THREE)
    (tmp_path / "test_three.py").write_text(
        "import three\n\ndef test_pipeline():\n    three.pipeline()\n"
    )
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--flagprism-check=nan",
            f"--flagprism-output={tmp_path / 'fp'}",
            "--flagprism-fail",
            "test_three.py",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
        timeout=600,
    )
    assert r.returncode == 1 and "1 failed" in r.stdout, r.stdout + r.stderr
    s = json.loads((tmp_path / "fp" / "summary.json").read_text())
    (f,) = s["findings"]
    assert (
        f["test"] == "test_three.py::test_pipeline"
        and f["kernel"] == "logs"
        and f["line"] == LOG_LINE
    )


def test_counts_only_records_for_nan_inf(fresh, tmp_path, monkeypatch):
    """--check nan,inf records NaN/Inf counts only: no sums, no min/max (docs/formats/record-format.md)."""
    (tmp_path / "three.py").write_text(THREE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import three  # noqa: PLC0415

    fresh.configure(output_dir=tmp_path / "o", all_reports=True)
    fresh.activate(check="nan,inf")
    three.pipeline()
    fresh.deactivate()
    runs = fresh.take_exported_runs()
    assert [r["kernel"] for r in runs] == ["shift", "logs", "double"]
    rep = runs[1]["report"]
    assert rep["config"]["level"] == 1 and rep["config"]["addr_level"] == 0
    assert [f["kind"] for f in rep["findings"]] == ["nan_origin"]
    sys.modules.pop("three", None)


PADDED = textwrap.dedent("""\
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def softmax_cast(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=float("-inf")).cast(tl.float32)
        e = tl.exp(x - tl.max(x, 0))
        tl.store(out_ptr + offs, e / tl.sum(e, 0), mask=offs < n)


    @triton.jit
    def softmax_tl_cast(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.cast(tl.load(x_ptr + offs, mask=offs < n, other=-float("inf")), tl.float32)
        e = tl.exp(x - tl.max(x, 0))
        tl.store(out_ptr + offs, e / tl.sum(e, 0), mask=offs < n)


    @triton.jit
    def softmax_to(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=float("-inf")).to(dtype=tl.float32)
        e = tl.exp(x - tl.max(x, 0))
        tl.store(out_ptr + offs, e / tl.sum(e, 0), mask=offs < n)


    def run(kernel, x):
        out = torch.empty(x.shape, dtype=torch.float32)
        kernel[(1,)](x, out, x.numel(), BLOCK=128)
        return out
    """)


@pytest.mark.parametrize("kernel", ["softmax_cast", "softmax_tl_cast", "softmax_to"])
def test_inf_padding_of_a_widened_load_is_not_an_origin(fresh, tmp_path, monkeypatch, kernel):
    """`tl.load(..., other=float("-inf")).cast(tl.float32)` (Liger-Kernel's cross entropy) pads
    masked-off lanes with -inf on purpose: under check="nan,inf" that is no Inf origin, whichever
    way the widening is written; a NaN in the data still is one, where it is loaded."""
    (tmp_path / "padded.py").write_text(PADDED)
    monkeypatch.syspath_prepend(str(tmp_path))
    import padded  # noqa: PLC0415

    x = torch.randn(100, dtype=torch.float16)
    fresh.activate(check="nan,inf")
    out = padded.run(getattr(padded, kernel), x)
    fresh.deactivate()
    torch.testing.assert_close(out, torch.softmax(x.float(), 0))
    s = fresh.summary()
    assert s["totals"]["findings"] == 0, s["text"]
    x[7] = float("nan")
    fresh.reset_summary()
    fresh.activate(check="nan")
    padded.run(getattr(padded, kernel), x)
    fresh.deactivate()
    found = fresh.summary()["json"]["findings"]
    loads = [i for i, t in enumerate(PADDED.splitlines(), 1) if t.startswith("    x = ")]
    line = loads[["softmax_cast", "softmax_tl_cast", "softmax_to"].index(kernel)]
    assert [(f["kind"], f["line"]) for f in found] == [("nan_origin", line)], found
    sys.modules.pop("padded", None)
