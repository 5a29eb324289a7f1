# SPDX-License-Identifier: Apache-2.0
"""Adversarial names through every writer (issue 17), on the Triton interpreter: kernel, scope,
state, metric and source-file names with '/', '..', quotes, newlines, control characters,
'<script>', non-ASCII and 10 KB go through the Profiler (Hatchet, Chrome trace, metadata, with
Python call paths), the Debugger (reports, op logs, twin files) and the CLI (view, merge, diff).
Every JSON output must parse as strict JSON (UTF-8, no raw control characters, no NaN), and
every file must land inside its output directory (or the twin cache), nowhere else. Kernels
whose def names are legal identifiers of 250 and 10,000 characters must work."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )

import flagprism.debugger as debugger  # noqa: E402
import flagprism.profiler as profiler  # noqa: E402

NAMES = [
    "../../../escape",
    "/etc/abs",
    "..",
    "a\"b'c`d",
    "line1\nline2\r\n",
    "ctl\x01\x1b[2J\x7f",
    "<script>alert(1)</script>",
    "back\\slash\\u0000",
    "uni\u2028\u00e9\U0001f600",
    "x" * 10_000,
]
#: Names that only the Profiler's C strings carry (a NUL inside; written as \u0000).
PROFILER_NAMES = [*NAMES, "nul\0inside"]

KERNEL_SRC = textwrap.dedent("""\
    import triton
    import triton.language as tl
    import flagprism.language as fpl


    @triton.jit
    def NAME(x_ptr, n, BLOCK: tl.constexpr):
        fpl.collect_start()
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(x_ptr + offs, x + 1, mask=offs < n)
        fpl.collect_end()


    def launch(kernel, x):
        kernel[(1,)](x, 16, BLOCK=16)
    """)


def load_kernel(path: Path, def_name: str = "kern") -> Any:
    """A kernel defined in the file `path` (whatever its name), as a module attribute."""
    path.write_text(KERNEL_SRC.replace("NAME", def_name))
    spec = importlib.util.spec_from_file_location(f"hostile_{abs(hash(str(path)))}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, def_name)


def strict_json(path: Path) -> Any:
    """Parse as strict JSON: UTF-8, no raw control characters in strings, no NaN/Infinity."""

    def no_constant(name: str) -> None:
        raise AssertionError(f"{path}: non-standard constant {name}")

    text = path.read_bytes().decode("utf-8")  # strict: invalid UTF-8 raises
    return json.loads(text, parse_constant=no_constant)


def all_files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file() or p.is_symlink()}


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A work directory inside tmp_path, the twin cache in it, and tmp_path's other contents
    watched: nothing may appear outside `work`."""
    work = tmp_path / "a" / "b" / "work"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    monkeypatch.setenv("FLAGPRISM_CACHE_DIR", str(work / "cache"))
    yield work
    debugger.deactivate()
    debugger.reset_config()
    debugger.clear_exported_runs()
    for s in profiler.sessions():
        profiler.finalize(s["id"])
    outside = {p for p in all_files(tmp_path) if work not in p.parents}
    assert outside == set(), outside


def test_profiler_writers_with_hostile_names(sandbox: Path) -> None:
    current = {"name": ""}

    def md(grid: Any, meta: Any, args: dict[str, Any]) -> dict[str, Any]:
        return {"name": current["name"], "bytes": 64}  # hook="triton": the launch's name

    plain = load_kernel(sandbox / 'we"ird <script> name.py')
    kern = triton.jit(plain.fn, launch_metadata=md)
    x = torch.zeros(16)
    sid = profiler.start("prof", context="python", data="trace", hook="triton")
    for i, name in enumerate(PROFILER_NAMES):
        current["name"] = name
        with profiler.scope(name, {name: 1.5, "ok": i}):
            with profiler.state(name):
                plain.fn.__globals__["launch"](kern, x)  # from a frame in the hostile file
    paths = profiler.finalize(sid)
    assert sorted(paths) == ["prof.chrome_trace.json", "prof.hatchet", "prof.meta.json"]
    hatchet = strict_json(sandbox / "prof.hatchet")
    trace = strict_json(sandbox / "prof.chrome_trace.json")
    meta = strict_json(sandbox / "prof.meta.json")
    assert meta["counts"]["kernels"] == len(PROFILER_NAMES) and meta["incomplete"] is False

    def frames(node: dict[str, Any]) -> set[str]:
        out = {node["frame"]["name"]}
        for c in node["children"]:
            out |= frames(c)
        return out

    names = frames(hatchet[0])
    for name in PROFILER_NAMES:
        assert name in names, repr(name)[:80]  # kept exactly, escaped in the file
    assert any('we"ird <script> name.py' in n for n in names)  # the call path's file
    events = {e.get("name") for e in trace["traceEvents"]}
    assert "<script>alert(1)</script>" in events
    # the CLI reads them back, and writes them again as strict JSON
    cli = os.environ.get("FLAGPRISM_CLI") or str(Path(sys.executable).parent / "flagprism")
    if Path(cli).exists():
        r = subprocess.run([cli, "view", "prof.hatchet"], capture_output=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert b"\x1b[2J" not in r.stdout and b"\x01" not in r.stdout
        r = subprocess.run(
            [cli, "merge", "-q", "-o", "merged.hatchet", "prof.hatchet", "prof.hatchet"],
            capture_output=True,
            timeout=120,
        )
        assert r.returncode == 0, r.stderr
        assert name in frames(strict_json(sandbox / "merged.hatchet")[0])
        r = subprocess.run(
            [cli, "diff", "-o", "-", "prof.hatchet", "merged.hatchet"],
            capture_output=True,
            timeout=120,
        )
        assert r.returncode == 0, r.stderr
        json.loads(r.stdout.decode("utf-8"))


def test_debugger_writers_with_hostile_names(sandbox: Path) -> None:
    kern = load_kernel(sandbox / 'we"ird <script> name.py')
    debugger.configure(output_dir="reports")
    debugger.activate(level=2, addr_level=2)
    x = torch.zeros(16)
    for name in NAMES:
        kern.fn.__name__ = name
        kern[(1,)](x, 16, BLOCK=16)
    runs = debugger.take_exported_runs()
    assert len(runs) == len(NAMES)
    assert torch.equal(x, torch.full((16,), float(len(NAMES))))
    reports = sandbox / "reports"
    files = all_files(reports)
    assert files, "no reports were written"
    for f in files:
        assert reports in f.parents
        assert len(f.name.encode()) <= 255
        if f.suffix == ".json":
            strict_json(f)
    for r in runs:
        assert r["kernel"] in NAMES
        assert Path(r["json"]).parent == reports  # never outside, whatever the kernel's name
        assert strict_json(Path(r["json"]))["kernel"]["name"] == r["kernel"]
    twins = sandbox / "cache" / "twins"
    twin_files = all_files(twins)
    assert twin_files and all(twins in f.parents for f in twin_files)
    assert not [f for f in twin_files if f.suffix == ".tmp"]  # no temporary file left


@pytest.mark.parametrize("length", [250, 10_000])
def test_long_identifiers_work(sandbox: Path, length: int) -> None:
    """A kernel whose def name is a legal identifier of 250 or 10,000 characters: its twin's file
    name is capped, the Debugger and the Profiler work (this used to raise RewriteError)."""
    name = "k" + "_" * 3 + "n" * (length - 4)
    kern = load_kernel(sandbox / "longname.py", name)
    debugger.configure(output_dir="reports")
    debugger.activate()
    x = torch.zeros(16)
    sid = profiler.start("long", estimates=False)
    kern[(1,)](x, 16, BLOCK=16)
    profiler.finalize(sid)
    debugger.deactivate()
    (run,) = debugger.take_exported_runs()
    assert run["kernel"] == name and torch.equal(x, torch.ones(16))
    assert all(len(f.name.encode()) <= 255 for f in all_files(sandbox))
    assert strict_json(sandbox / "long.hatchet")[0]["children"][0]["frame"]["name"] == name
