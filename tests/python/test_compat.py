# SPDX-License-Identifier: Apache-2.0
"""The known-bad combinations table (include/flagprism/compat.h) from Python and the doctor:
flagprism._ext.compat_issues/compat_check, flagprism.compat, the docs' copy of the table, and
`flagprism doctor` on a NumPy that the table rejects (made with a sitecustomize that rewrites
numpy.__version__ in the doctor's Python probe, so no other NumPy is needed)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import flagprism.compat as compat
from flagprism import _ext

ROW = "triton3.6-interpreter-numpy2.4"
REPO = Path(__file__).resolve().parents[2]


def test_ext_lists_the_library_rows() -> None:
    rows = _ext.compat_issues()
    assert rows and len({r["id"] for r in rows}) == len(rows)
    row = next(r for r in rows if r["id"] == ROW)
    assert row["modes"] == ["interpreter"]
    assert row["when"] == [("triton", "3.6", "3.7"), ("numpy", "2.4", None)]
    assert row["feature"] == "runtime-loops"
    assert "only 0-dimensional arrays" in row["breaks"] and "numpy<2.4" in row["workaround"]


@pytest.mark.parametrize(
    "versions, mode, hit",
    [
        ({"triton": "3.6.0", "numpy": "2.5.2"}, "interpreter", True),
        ({"triton": "3.6.0", "numpy": "2.4.0rc1"}, "interpreter", True),
        ({"triton": "3.6.0", "numpy": "2.5.2"}, "any", True),
        ({"triton": "3.6.0", "numpy": "2.5.2"}, "gpu", False),
        ({"triton": "3.6.0", "numpy": "2.3.5"}, "interpreter", False),
        ({"triton": "3.7.0", "numpy": "2.5.2"}, "interpreter", False),
        ({"triton": "3.6.0", "numpy": None}, "interpreter", False),
        ({"numpy": "2.5.2"}, "interpreter", False),
    ],
)
def test_compat_check(versions: dict, mode: str, hit: bool) -> None:
    assert (ROW in _ext.compat_check(versions, mode)) is hit


def test_compat_check_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="mode must be"):
        _ext.compat_check({}, "cpu")
    with pytest.raises(TypeError):
        _ext.compat_check({"numpy": 2.5})
    with pytest.raises(TypeError):
        _ext.compat_check([("numpy", "2.5")])


def test_python_api(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = {"numpy": "2.5.2", "triton": "3.6.0"}
    issues = compat.known_issues("interpreter", bad)
    assert [i.id for i in issues] == [ROW]
    msg = issues[0].message(bad)
    assert "(installed: triton 3.6.0, numpy 2.5.2)" in msg and msg.endswith(f"[{ROW}]")
    assert compat.known_issues("gpu", bad) == []
    monkeypatch.setattr(compat, "installed_versions", lambda: bad)
    assert compat.skip_reason("runtime-loops", "interpreter") == msg
    assert compat.skip_reason("other-feature", "interpreter") is None
    assert compat.skip_reason("runtime-loops", "gpu") is None
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert compat.current_mode() == "interpreter"
    monkeypatch.delenv("TRITON_INTERPRET")
    assert compat.current_mode() == "gpu"


def test_installed_versions_names_every_component() -> None:
    import numpy
    import triton

    found = compat.installed_versions()
    assert found["numpy"] == numpy.__version__ and found["triton"] == triton.__version__


def _doc_rows() -> dict[str, list[str]]:
    text = (REPO / "docs" / "guide" / "compatibility.md").read_text()
    table = text.split("<!-- compat-table:", 1)[1]
    rows = {}
    for line in table.splitlines():
        m = re.match(r"^\| `([^`]+)` \|(.*)\|$", line)
        if m:
            rows[m.group(1)] = [c.strip() for c in m.group(2).split("|")]
    return rows


def _when_text(when: list) -> str:
    parts = []
    for comp, lo, hi in when:
        bounds = [b for b in (f">= {lo}" if lo else None, f"< {hi}" if hi else None) if b]
        parts.append(f"{comp} {', '.join(bounds)}")
    return "; ".join(parts)


def test_compat_docs_table_matches_the_library() -> None:
    docs = _doc_rows()
    lib = {r["id"]: r for r in _ext.compat_issues()}
    assert set(docs) == set(lib), (
        "docs/guide/compatibility.md and src/core/compat.c list other rows"
    )
    for rid, row in lib.items():
        where, when, feature = docs[rid][0], docs[rid][1], docs[rid][2]
        assert where == " and ".join(row["modes"]), rid
        assert when == _when_text(row["when"]), rid
        assert feature == f"`{row['feature']}`", rid


def _doctor(
    cli: Path, tmp_path: Path, numpy_version: str, *args: str
) -> subprocess.CompletedProcess:
    """`flagprism doctor` whose Python probe sees numpy.__version__ == numpy_version."""
    site = tmp_path / "site"
    site.mkdir(parents=True)
    (site / "sitecustomize.py").write_text(f"import numpy\nnumpy.__version__ = {numpy_version!r}\n")
    env = dict(
        os.environ, FLAGPRISM_PYTHON=sys.executable, TRITON_INTERPRET="1", PYTHONPATH=str(site)
    )
    return subprocess.run(
        [str(cli), "doctor", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


@pytest.mark.slow
def test_doctor_says_the_known_problem(cli: Path, tmp_path: Path) -> None:
    import triton

    if _ext.compat_check({"triton": triton.__version__, "numpy": "2.5.2"}, "interpreter") != [ROW]:
        pytest.skip(f"the row {ROW} is for Triton 3.6; this is Triton {triton.__version__}")
    r = _doctor(cli, tmp_path, "2.5.2")
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("  Debugger on interpreter"))
    assert "ready, with a known problem:" in line, r.stdout
    assert "numpy<2.4" in line and f"[{ROW}]" in line
    r = _doctor(cli, tmp_path / "j", "2.5.2", "--json")
    d = json.loads(r.stdout)
    assert [i["id"] for i in d["known_issues"]] == [ROW]
    assert d["known_issues"][0]["when"][1] == {"component": "numpy", "min": "2.4", "below": None}
    assert d["verdicts"]["debugger_interpreter"]["known_issues"] == 1
    assert d["verdicts"]["debugger_interpreter"]["ready"] is True


def test_doctor_without_a_known_problem(cli: Path, tmp_path: Path) -> None:
    r = _doctor(cli, tmp_path, "2.3.5", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["packages"]["numpy"]["version"] == "2.3.5"
    # no row for this NumPy; rows for the installed Triton itself (3.9's) may still apply
    found = dict(compat.installed_versions(), numpy="2.3.5")
    assert [i["id"] for i in d["known_issues"]] == [i.id for i in compat.known_issues("any", found)]
    assert ROW not in {i["id"] for i in d["known_issues"]}
    interp = compat.known_issues("interpreter", found)
    assert d["verdicts"]["debugger_interpreter"]["known_issues"] == len(interp)
    if not interp:
        assert "known problem" not in d["verdicts"]["debugger_interpreter"]["reason"]


def test_supported_triton_range_is_declared_alike() -> None:
    """The C library's range rows, flagprism.compat and pyproject.toml's triton extra agree."""
    lo, hi = compat.supported_triton()
    assert (lo, hi) == ("3.4", "3.10")
    text = (REPO / "pyproject.toml").read_text()
    assert f'"triton>={lo},<{hi}"' in text
    assert compat.triton_supported("3.4.0") and compat.triton_supported("3.9.0+git1234")
    assert compat.triton_supported("3.3.1") is False and compat.triton_supported("3.10.0") is False
    assert compat.triton_supported("nightly") is None


@pytest.mark.slow
def test_doctor_says_whether_triton_is_supported(cli: Path, tmp_path: Path) -> None:
    r = _doctor(cli, tmp_path, "2.3.5", "--json")
    d = json.loads(r.stdout)["packages"]["triton"]
    assert d["supported"] is compat.triton_supported()
    lo, hi = compat.supported_triton()
    assert d["supported_range"] == f">= {lo}, < {hi}"
    r = _doctor(cli, tmp_path / "t", "2.3.5")
    assert f"supported (FlagPrism supports Triton >= {lo}, < {hi})" in r.stdout


def test_triton_features_probe_every_difference() -> None:
    feats = compat.triton_features()
    import triton

    assert feats["triton"] == triton.__version__ and feats["supported"] is True
    for key in (
        "constexpr_function",
        "interpreter_run_method",
        "hook_chains",
        "make_ir_takes_target",
        "block_pointers",
        "block_pointer_objects",
        "reshape_can_reorder",
        "interpreter_int_masks",
    ):
        assert key in feats, key
    print(json.dumps(feats))


@pytest.mark.parametrize("name", ["launch_enter_hook", "launch_exit_hook"])
def test_launch_hook_chain_on_this_triton(name: str) -> None:
    """compat.hook_chain over this Triton's real knob (a HookChain on 3.5+, one callable on 3.4):
    hooks added are called through the knob in order (exit hooks in reverse, as Triton's), and
    removing them leaves the knob as it was."""
    from triton import knobs

    chain = compat.hook_chain(name)
    assert chain is not None
    before = getattr(knobs.runtime, name)
    seen: list[str] = []

    def a(*_args: object, **_kw: object) -> None:
        seen.append("a")

    def b(*_args: object, **_kw: object) -> None:
        seen.append("b")

    chain.add(a)
    chain.add(b)
    try:
        knob = getattr(knobs.runtime, name)
        assert callable(knob)
        knob(object())
        assert sorted(seen) == ["a", "b"]
    finally:
        chain.remove(a)
        chain.remove(b)
    assert getattr(knobs.runtime, name) is before
    seen.clear()
    if callable(before):
        before(object())
    assert seen == []


def test_numpy_scalar_failure_of_the_interpreter_is_explained(monkeypatch):
    """Triton 3.6's interpreter under NumPy 2.4+ fails on loaded loop bounds with NumPy's own
    message; the launch's error then gets the known-bad row's words (what breaks, the installed
    versions, the workaround), where the row applies to the installed versions, and nothing
    otherwise (an older NumPy, another Triton, another message)."""
    from flagprism import compat

    cause = TypeError("only 0-dimensional arrays can be converted to Python scalars")
    err = RuntimeError(repr(cause))
    err.__cause__ = cause
    versions = {"triton": "3.6.0", "numpy": "2.4.1"}
    monkeypatch.setattr(compat, "installed_versions", lambda: dict(versions))
    hint = compat.explain_interpreter_error(err)
    assert hint is not None and "numpy<2.4" in hint and "numpy 2.4.1" in hint, hint
    assert hint.endswith("[triton3.6-interpreter-numpy2.4]")
    versions["numpy"] = "2.3.5"
    assert compat.explain_interpreter_error(err) is None
    versions.update(numpy="2.4.1", triton="3.8.0")
    assert compat.explain_interpreter_error(err) is None
    versions["triton"] = "3.6.0"
    assert compat.explain_interpreter_error(RuntimeError("unrelated")) is None
