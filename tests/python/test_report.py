# SPDX-License-Identifier: Apache-2.0
"""`flagprism report` on the Triton interpreter: Debugger runs (planted out-of-bounds and NaN
bugs, a 2-D grid with a loop, level-2 dumps, a kernel whose source holds an injected tag) and
profiles (user scopes, an intra-kernel timeline, a scope named with an injected tag, a
comparison) become pages; the command's options, errors and exit codes; then the pages in a real
browser (headless Chromium over the DevTools protocol, tests/python/_browser.py): no console
error, no network request, the expected elements, a screenshot that is not blank, injected names
shown as text. One browser serves every browser test of the module.

The browser tests need Chromium (Debian's `chromium`, which .ci/run installs). Without one they
are skipped with that reason, unless FP_REQUIRE_BROWSER=1 (CI), which makes its absence a
failure."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )

import _browser  # noqa: E402
import _tlkernels as tk  # noqa: E402
from kernels import planted, vector_add  # noqa: E402

import flagprism.debugger as debugger  # noqa: E402
import flagprism.profiler as profiler  # noqa: E402

INJECT = "</script><img src=x onerror=alert(1)>"

pytestmark = pytest.mark.skipif(not debugger.is_available(), reason="flagprism._ext is not built")

GRID_KERNEL = textwrap.dedent(f"""\
    import triton
    import triton.language as tl

    import flagprism.language as fpl


    @triton.jit
    def grid2d_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
        fpl.collect_start()
        rows = tl.program_id(0) * BM + tl.arange(0, BM)
        cols = tl.program_id(1) * BN + tl.arange(0, BN)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0)  # {INJECT}
        acc = tl.zeros([BM, BN], dtype=tl.float32)
        for k in range(0, 3):
            acc += x * (k + 1)
        tl.store(out_ptr + rows[:, None] * N + cols[None, :], acc, mask=mask)
        fpl.collect_end()
    """)


def _run(cli: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run([str(cli), *args], capture_output=True, text=True, timeout=300)
    if check and r.returncode != 0:
        raise AssertionError(
            f"flagprism {' '.join(args)}: exit {r.returncode}\n{r.stdout}\n{r.stderr}"
        )
    return r


# ------------------------------------------------------------------------------------------------
# Inputs, made once for the module
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Debugger outputs and profiles of real runs on the interpreter."""
    root = tmp_path_factory.mktemp("report")
    out: dict[str, Any] = {"root": root}

    # the 2-D kernel lives in a file of its own, so its source (with the tag) is on disk
    mod_dir = root / "mods"
    mod_dir.mkdir()
    (mod_dir / "grid2d_mod.py").write_text(GRID_KERNEL)
    sys.path.insert(0, str(mod_dir))
    try:
        import grid2d_mod
    finally:
        sys.path.remove(str(mod_dir))

    dbg_dir = root / "debug"
    debugger.configure(output_dir=str(dbg_dir))
    try:
        debugger.activate(level=1, addr_level=1)
        planted.launch(planted.BY_NAME["off_by_one_mask"], "cpu")
        planted.launch(planted.BY_NAME["log_of_negative"], "cpu")
        x = torch.randn(10, 12)
        y = torch.empty_like(x)
        grid2d_mod.grid2d_kernel[(3, 2)](x, y, 10, 12, BM=4, BN=8)
        debugger.activate(level=2, addr_level=1)
        a, b = torch.rand(100), torch.rand(100)
        c = torch.empty_like(a)
        vector_add.add_kernel[(2,)](a, b, c, 100, BLOCK=64)
    finally:
        debugger.deactivate()
        runs = debugger.take_exported_runs()
        debugger.reset_config()
    out["runs"] = runs
    out["debug_dir"] = dbg_dir
    assert len(runs) == 4, [r["kernel"] for r in runs]
    out["findings"] = sum(len(r["findings"]) for r in runs)
    assert out["findings"] >= 4

    # a copy of one report whose kernel name is the tag
    inj_dir = root / "inject"
    inj_dir.mkdir()
    rep = json.loads(Path(runs[0]["json"]).read_text())
    rep["kernel"]["name"] = INJECT
    for f in rep["findings"]:
        f["message"] = INJECT + " " + f["message"]
    (inj_dir / "inj_k_0_run0.json").write_text(json.dumps(rep))
    out["inject_dir"] = inj_dir

    # profiles: a scope named with the tag, an intra-kernel timeline, and a second run to compare
    for name, reps in (("prof_a", 1), ("prof_b", 3)):
        profiler.start(str(root / name), data="trace", backend="instrumentation")
        try:
            with profiler.scope(INJECT):
                xs = torch.arange(200, dtype=torch.float32)
                ys = torch.empty_like(xs)
                tk.scoped_kernel[(4,)](xs, ys, 200, 3, 64)
            with profiler.scope("add"):
                for _ in range(reps):
                    vector_add.add_plain[(2,)](a, b, c, 100, BLOCK=64)
        finally:
            profiler.finalize()
        out[name] = root / (name + ".hatchet")
        assert out[name].exists()
    return out


# ------------------------------------------------------------------------------------------------
# The command (no browser)
# ------------------------------------------------------------------------------------------------


def test_help_and_usage(cli: Path) -> None:
    r = _run(cli, "report", "--help")
    assert "usage: flagprism report" in r.stdout and "--max-cells" in r.stdout
    assert _run(cli, "help", "report").stdout == r.stdout
    assert "report" in _run(cli, "--help").stdout
    r = _run(cli, "report", check=False)
    assert r.returncode == 2 and "expected a Debugger output or a profile" in r.stderr
    r = _run(cli, "report", "a", "b", check=False)
    assert r.returncode == 2 and "unexpected argument 'b'" in r.stderr
    r = _run(cli, "report", "--max-cells", "0", "x", check=False)
    assert r.returncode == 2


def test_missing_input_and_wrong_options(cli: Path, data: dict[str, Any], tmp_path: Path) -> None:
    r = _run(cli, "report", str(tmp_path / "nope"), check=False)
    assert r.returncode == 1 and "cannot open" in r.stderr and "nope" in r.stderr
    r = _run(cli, "report", "--diff", str(data["prof_b"]), str(data["debug_dir"]), check=False)
    assert r.returncode == 2 and "for profiles" in r.stderr
    r = _run(cli, "report", "--no-source", str(data["prof_a"]), check=False)
    assert r.returncode == 2
    r = _run(
        cli,
        "report",
        "-m",
        "time/ms,no_such",
        str(data["prof_a"]),
        "-o",
        str(tmp_path / "x.html"),
        check=False,
    )
    assert r.returncode == 2 and "no_such" in r.stderr
    assert not (tmp_path / "x.html").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    r = _run(cli, "report", str(empty), check=False)
    assert r.returncode == 1 and "no Debugger report" in r.stderr


def test_default_output_paths(cli: Path, data: dict[str, Any], tmp_path: Path) -> None:
    r = _run(cli, "report", str(data["debug_dir"]))
    page = data["debug_dir"] / "report.html"
    assert page.exists() and f"wrote {page}" in r.stdout
    assert re.search(r"4 launches, \d+ statements, \d+ findings", r.stdout)
    page.unlink()
    report = Path(data["runs"][0]["json"])
    _run(cli, "report", "-q", str(report))
    assert report.with_suffix(".html").exists()
    report.with_suffix(".html").unlink()
    r = _run(cli, "report", str(data["prof_a"]))
    assert (data["root"] / "prof_a.html").exists() and "trace slices" in r.stdout
    _run(cli, "report", "-q", str(data["prof_a"]), "--diff", str(data["prof_b"]))
    assert (data["root"] / "prof_a.diff.html").exists()


def test_bad_report_names_the_place(cli: Path, data: dict[str, Any], tmp_path: Path) -> None:
    rep = json.loads(Path(data["runs"][0]["json"]).read_text())
    rep["statements"][0]["results"][0]["instances"][0]["program"] = [99, 0, 0]
    bad = tmp_path / "s_k_0_run0.json"
    bad.write_text(json.dumps(rep, indent=1))
    r = _run(cli, "report", str(tmp_path), check=False)
    assert r.returncode == 1
    assert re.search(
        r"s_k_0_run0\.json:\d+:\d+: statements\[0\]\.results\[0\]\.instances\[0\]: program id 0",
        r.stderr,
    ), r.stderr
    assert not (tmp_path / "report.html").exists()


def test_summary_json_is_read_tolerantly(cli: Path, data: dict[str, Any], tmp_path: Path) -> None:
    src = Path(data["runs"][1]["json"])
    (tmp_path / src.name).write_text(src.read_text())
    summary = {
        "schema_version": 1,
        "kernels": [{"name": "log_kernel", "launches": 1}, {"name": "plain", "launches": 2}],
        "launches": [
            {"kernel": "log_kernel", "instrumented": True, "report": src.name, "findings": 2},
            {"kernel": "plain", "instrumented": False, "reason": "no markers " + INJECT},
        ],
        "coverage": {"statements": 5, "statements_observed": 5},
        "unknown_future_field": {"x": [1, 2, 3]},
    }
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    out = tmp_path / "page.html"
    r = _run(cli, "report", str(tmp_path), "-o", str(out))
    assert "1 launch," in r.stdout
    text = out.read_text()
    assert "<img" not in text and "no markers \\u003c/script\\u003e" in text


def test_caps_are_noted(cli: Path, data: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "p.html"
    r = _run(
        cli,
        "report",
        str(data["debug_dir"]),
        "-o",
        str(out),
        "--max-cells",
        "2",
        "--max-findings",
        "1",
    )
    assert "note:" in r.stderr and "each heatmap cell aggregates" in r.stderr
    text = out.read_text()
    assert "each heatmap cell aggregates" in text
    r = _run(
        cli, "report", str(data["prof_a"]), "-o", str(out), "--max-nodes", "3", "--max-slices", "2"
    )
    assert "the 3 heaviest of" in r.stderr and "the first 2 of" in r.stderr
    assert "3 of " in r.stdout and ", 2 trace slices" in r.stdout


def test_broken_trace_keeps_the_tree(cli: Path, data: dict[str, Any], tmp_path: Path) -> None:
    prof = tmp_path / "p.hatchet"
    prof.write_text(data["prof_a"].read_text())
    (tmp_path / "p.chrome_trace.json").write_text('{"traceEvents": [')
    r = _run(cli, "report", str(prof))
    assert "warning: the timeline is left out" in r.stderr and "p.chrome_trace.json:1:" in r.stderr
    text = (tmp_path / "p.html").read_text()
    assert "timeline left out" in text
    r = _run(cli, "report", "--no-trace", str(prof), "-o", str(tmp_path / "q.html"))
    assert "0 trace slices" in r.stdout and "warning" not in r.stderr


def test_title_option(cli: Path, data: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "t.html"
    _run(cli, "report", "-q", "--title", "My <run> & co", str(data["prof_a"]), "-o", str(out))
    text = out.read_text()
    main = json.loads(re.search(r'id="fp-data">(.*?)</script>', text, re.S).group(1))
    assert main["title"] == "My <run> & co" and "My <run>" not in text


def test_pages_are_self_contained(cli: Path, data: dict[str, Any], tmp_path: Path) -> None:
    for src, name in (
        (data["debug_dir"], "d.html"),
        (data["inject_dir"], "i.html"),
        (data["prof_a"], "p.html"),
    ):
        out = tmp_path / name
        _run(cli, "report", "-q", str(src), "-o", str(out))
        text = out.read_text()
        assert text.startswith("<!DOCTYPE html>")
        # nothing to fetch: no tag with a src/href attribute, no URLs in styles or scripts
        assert not re.search(r"<[a-zA-Z][^>]*\s(src|href)\s*=", text)
        assert "http://" not in text and "https://" not in text
        assert "<img" not in text
        assert text.count("</script>") == text.count("<script")
        # the policy lets exactly the page's own script run, named by its hash
        csp = re.search(r'Content-Security-Policy" content="([^"]*)"', text).group(1)
        script = re.search(r"<script>(.*?)</script>", text, re.S).group(1)
        digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
        assert csp == f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'"


# ------------------------------------------------------------------------------------------------
# In the browser
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[_browser.Browser]:
    exe = _browser.find_chromium()
    if exe is None:
        if os.environ.get("FP_REQUIRE_BROWSER") == "1":
            pytest.fail("FP_REQUIRE_BROWSER=1 but no Chromium was found (apt-get install chromium)")
        pytest.skip("no Chromium: the page tests need Debian's chromium (.ci/run installs it)")
    with _browser.Browser(exe) as b:
        yield b


@pytest.fixture(scope="module")
def pages(cli: Path, data: dict[str, Any]) -> dict[str, Path]:
    root = data["root"] / "pages"
    root.mkdir(exist_ok=True)
    out = {
        "debug": root / "debug.html",
        "inject": root / "inject.html",
        "profile": root / "profile.html",
        "diff": root / "diff.html",
        "binned": root / "binned.html",
        "inject_file": root / "inject1.html",
    }
    _run(
        cli,
        "report",
        "-q",
        str(data["inject_dir"] / "inj_k_0_run0.json"),
        "-o",
        str(out["inject_file"]),
    )
    _run(cli, "report", "-q", str(data["debug_dir"]), "-o", str(out["debug"]))
    _run(cli, "report", "-q", str(data["inject_dir"]), "-o", str(out["inject"]))
    _run(cli, "report", "-q", str(data["prof_a"]), "-o", str(out["profile"]))
    _run(
        cli,
        "report",
        "-q",
        str(data["prof_a"]),
        "--diff",
        str(data["prof_b"]),
        "-o",
        str(out["diff"]),
    )
    _run(cli, "report", "-q", str(data["debug_dir"]), "--max-cells", "2", "-o", str(out["binned"]))
    return out


def _open(b: _browser.Browser, page: Path) -> None:
    b.open(page)
    assert b.console_errors() == []
    assert b.requests() == [page.resolve().as_uri()], "the page made network requests"


def _not_blank(b: _browser.Browser) -> None:
    assert _browser.png_colours(b.screenshot()) > 40


def _click(b: _browser.Browser, selector: str, index: int = 0) -> None:
    assert b.eval(
        f"(() => {{ const e = document.querySelectorAll({json.dumps(selector)})[{index}];"
        f" if (!e) return false; e.click(); return true; }})()"
    ), f"nothing matches {selector}"


def _launch(b: _browser.Browser, kernel: str) -> None:
    """Select the launch of `kernel` in the launches table (reports are listed by file name)."""
    assert b.eval(
        "(() => { const r = [...document.querySelectorAll('#fp-launches-table tbody tr')]"
        f".find(r => r.cells[1].textContent === {json.dumps(kernel)}); if (!r) return false;"
        " r.click(); return true; })()"
    ), f"no launch of {kernel}"
    assert kernel in b.eval("document.querySelector('#fp-launch h2').textContent")


def test_debugger_page(
    browser: _browser.Browser, pages: dict[str, Path], data: dict[str, Any]
) -> None:
    b = browser
    _open(b, pages["debug"])
    _not_blank(b)
    assert (
        b.eval("document.querySelectorAll('#fp-findings-table tr.fp-finding').length")
        == data["findings"]
    )
    assert b.eval("document.querySelectorAll('#fp-launches-table tbody tr').length") == 4
    kinds = b.eval(
        "[...document.querySelectorAll('#fp-findings-table .fp-kind')].map(e => e.textContent)"
    )
    assert {"out_of_bounds", "nan_origin", "invalid_domain"} <= set(kinds)
    # a launch with a finding opens at the statement of its first finding, with its heatmap
    _launch(b, "off_by_one_kernel")
    assert b.eval(
        "document.querySelector('#fp-source .fp-line.fp-sel').classList.contains('fp-has-finding')"
    )
    assert b.eval("document.querySelectorAll('#fp-source .fp-line.fp-has-finding').length") >= 1
    assert b.eval("document.querySelectorAll('#fp-detail canvas.fp-heat').length") >= 1
    # its load is drawn against x_ptr, and the part past the end is marked
    assert b.eval("document.querySelectorAll('#fp-detail canvas.fp-addr').length") >= 1
    assert "outside x_ptr" in b.eval(
        "(document.querySelector('#fp-detail .fp-oob-note') || {}).textContent || ''"
    )
    # a finding row leads to its launch and statement
    _launch(b, "add_kernel")
    _click(b, "#fp-findings-table tr.fp-finding", 0)
    kernel = b.eval(
        "document.querySelector('#fp-findings-table tr.fp-finding').cells[1].textContent"
    )
    assert kernel in b.eval("document.querySelector('#fp-launch h2').textContent")
    line = b.eval("document.querySelector('#fp-findings-table tr.fp-finding').cells[2].textContent")
    assert b.eval("document.querySelector('#fp-detail h3').textContent") == "Line " + line
    assert b.console_errors() == []


def test_debugger_grid_loop_and_dumps(browser: _browser.Browser, pages: dict[str, Path]) -> None:
    b = browser
    _open(b, pages["debug"])
    _launch(b, "grid2d_kernel")  # a 3x2 grid, a loop
    assert b.eval("document.querySelectorAll('#fp-source .fp-line').length") >= 10
    _click(b, "#fp-source .fp-line.fp-stmt", 5)  # acc += ... inside the loop
    assert b.eval("document.querySelectorAll('#fp-detail canvas.fp-series').length") >= 1
    shape = b.eval(
        "(() => { const c = document.querySelector('#fp-detail canvas.fp-heat');"
        " return [c.width, c.height]; })()"
    )
    assert shape[0] == 3 * shape[1] // 2  # 3 programs across, 2 down
    # every metric of the heatmap draws
    n = b.eval("document.querySelector('#fp-detail select.fp-metric').options.length")
    for i in range(n):
        b.eval(
            f"(() => {{ const s = document.querySelector('#fp-detail select.fp-metric'); s.selectedIndex = {i};"
            " s.dispatchEvent(new Event('change')); })()"
        )
    _launch(b, "add_kernel")  # level 2: dumps
    opts = b.eval("document.querySelector('#fp-dumps select.fp-dump-select').options.length")
    assert opts >= 4
    info = b.eval("document.querySelector('#fp-dumps .fp-muted').textContent")
    assert "elements of" in info
    assert b.console_errors() == []
    _not_blank(b)


def test_injected_names_render_as_text(browser: _browser.Browser, pages: dict[str, Path]) -> None:
    b = browser
    for page in (pages["inject"], pages["profile"]):
        _open(b, page)
        assert b.eval("document.querySelectorAll('img').length") == 0
        assert INJECT in b.eval("document.body.innerText")
        dialogs = [e for e in b.events if e.get("method") == "Page.javascriptDialogOpening"]
        assert dialogs == []
    _open(b, pages["inject"])
    assert b.eval("document.title") == "inject: FlagPrism Debugger"  # a directory names the page
    assert b.eval("document.querySelector('#fp-launch h2').textContent") == "Launch 0: " + INJECT
    _open(b, pages["inject_file"])  # one report: its kernel names the page
    assert b.eval("document.title") == INJECT + ": FlagPrism Debugger"
    assert (
        b.eval("document.getElementById('fp-title').textContent") == INJECT + ": FlagPrism Debugger"
    )
    assert b.eval("document.querySelectorAll('img').length") == 0
    # the source line with the tag, shown as code
    _open(b, pages["debug"])
    _launch(b, "grid2d_kernel")
    assert INJECT in b.eval("document.querySelector('#fp-source').innerText")
    assert b.eval("document.querySelectorAll('img').length") == 0


def test_dump_dom_has_no_injected_markup(pages: dict[str, Path], browser: _browser.Browser) -> None:
    exe = _browser.find_chromium()
    r = subprocess.run(
        [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--dump-dom",
            pages["inject"].resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    assert 'data-fp-ready="1"' in dom and 'id="fp-findings-table"' in dom
    assert "<img" not in dom
    assert "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in dom


def test_profile_page(browser: _browser.Browser, pages: dict[str, Path]) -> None:
    b = browser
    _open(b, pages["profile"])
    _not_blank(b)
    for sel in (
        "#fp-icicle-canvas",
        "#fp-table-main",
        "#fp-roofline",
        "#fp-timeline-canvas",
        "#fp-devices",
    ):
        assert b.eval(f"!!document.querySelector('{sel}')"), sel
    rows = b.eval(
        "[...document.querySelectorAll('#fp-table-main tbody tr')].map(r => r.cells[0].textContent.trim())"
    )
    assert {"ROOT", "scoped_kernel", "add_plain", "add", INJECT} <= set(rows)
    # the intra-kernel scopes are rows inside the kernel, and slices on SM/program tracks
    kinds = b.eval(
        "Object.fromEntries([...document.querySelectorAll('#fp-table-main tbody tr')]"
        ".map(r => [r.cells[0].textContent.trim(), r.cells[1].textContent]))"
    )
    assert kinds["scoped_kernel"] == "kernel" and kinds["loads"] == "inside a kernel"
    assert "slices on" in b.eval("document.querySelector('#fp-timeline p').textContent")

    # sorting: by time ascending after two clicks on its header
    def first() -> str:
        return b.eval(
            "document.querySelector('#fp-table-main tbody tr').cells[0].textContent.trim()"
        )

    assert first() == "ROOT"
    _click(b, "#fp-table-main th.fp-sort", 0)
    assert b.eval("document.querySelector('#fp-table-main th.fp-sort').dataset.dir") == "asc"
    assert first() != "ROOT"
    # search filters the table and reports matches in the icicle
    b.eval(
        "(() => { const s = document.getElementById('fp-search'); s.value = 'add'; s.dispatchEvent(new Event('input')); })()"
    )
    names = b.eval(
        "[...document.querySelectorAll('#fp-table-main tbody tr')].map(r => r.cells[0].textContent.trim())"
    )
    assert names and all("add" in n for n in names)
    assert "match" in b.eval("document.getElementById('fp-found').textContent")
    # clicking a row zooms the icicle to it
    _click(b, "#fp-table-main tbody tr", 0)
    assert "add" in b.eval("document.getElementById('fp-crumbs').textContent")
    assert b.console_errors() == []


def test_profile_diff_page(browser: _browser.Browser, pages: dict[str, Path]) -> None:
    b = browser
    _open(b, pages["diff"])
    _not_blank(b)
    heads = b.eval("[...document.querySelectorAll('#fp-table-main th')].map(t => t.textContent)")
    assert "time/ms (this)" in heads and "time/ms (other)" in heads and "time/ms \u0394" in heads
    assert "more in the other profile" in b.eval(
        "document.querySelector('#fp-icicle .fp-legend').textContent"
    )
    # add_plain ran 1 time in a and 3 in b: its count change is +2
    row = b.eval(
        "(() => { const h = [...document.querySelectorAll('#fp-table-main th')].map(t => t.textContent);"
        " const r = [...document.querySelectorAll('#fp-table-main tbody tr')]"
        ".find(r => r.cells[0].textContent.trim() === 'add_plain');"
        " return [r.cells[h.indexOf('count (this)')].textContent, r.cells[h.indexOf('count (other)')].textContent,"
        " r.cells[h.indexOf('count \u0394')].textContent]; })()"
    )
    assert row == ["1", "3", "2"]
    assert b.console_errors() == []


def test_binned_page_says_so(browser: _browser.Browser, pages: dict[str, Path]) -> None:
    b = browser
    _open(b, pages["binned"])
    assert "aggregates" in b.eval("document.getElementById('fp-notes').textContent")
    _launch(b, "grid2d_kernel")
    assert "each cell aggregates" in b.eval(
        "document.querySelector('#fp-detail .fp-heatmap').textContent"
    )
    assert b.console_errors() == []
