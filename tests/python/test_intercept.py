# SPDX-License-Identifier: Apache-2.0
"""The launch-interception registry (python/flagprism/_intercept.py): interceptors compose in
order, come off in any order without undoing each other, leave a foreign wrapper alone, patch a
module when it is imported, name a site that does not exist, mark FlagPrism's own work, and stay
exact under threads; and the bug it replaced: Debugger, then timelines, then the Debugger
uninstalled left timelines silently off."""

from __future__ import annotations

import sys
import threading
import types
from pathlib import Path

import pytest

from flagprism import _intercept


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """A module `fp_toy_mod` with class Toy.run, registered as site "toy.run"."""
    mod = types.ModuleType("fp_toy_mod")

    class Toy:
        def run(self, x: int) -> int:
            return x + 1

    mod.Toy = Toy  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fp_toy_mod", mod)
    monkeypatch.setitem(_intercept.SITES, "toy.run", ("fp_toy_mod", "Toy", "run"))
    yield Toy
    _intercept._sites.pop("toy.run", None)


def _tag(label: str, log: list[str]):
    def ic(call_next, self, x):
        log.append(label)
        return call_next(self, x) * 10

    return ic


def test_order_and_any_removal_order(toy):
    orig = toy.__dict__["run"]
    log: list[str] = []
    a = _intercept.add("toy.run", "a", _tag("a", log), 100)
    b = _intercept.add("toy.run", "b", _tag("b", log), 50)
    assert a.note is None and _intercept.installed("toy.run")
    assert toy().run(1) == 200 and log == ["b", "a"]  # lower order is outer
    assert not _intercept.only("toy.run", "a")
    _intercept.remove(b)
    assert _intercept.only("toy.run", "a") and not _intercept.only("toy.run", "b")
    log.clear()
    assert toy().run(1) == 20 and log == ["a"]
    _intercept.remove(b)  # idempotent
    _intercept.remove(a)
    assert toy.__dict__["run"] is orig and toy().run(1) == 2
    assert not _intercept.only("toy.run", "a") and not _intercept.only("no.such", "a")


def test_foreign_wrapper_is_kept(toy):
    log: list[str] = []
    h = _intercept.add("toy.run", "a", _tag("a", log), 100)
    ours = toy.__dict__["run"]

    def foreign(self, x):
        return ours(self, x) + 1000

    toy.run = foreign
    _intercept.remove(h)
    # ours passes straight through under the foreign wrapper; nothing was put back over it
    assert toy.__dict__["run"] is foreign and toy().run(1) == 1002 and log == []
    h2 = _intercept.add("toy.run", "a", _tag("a", log), 100)
    assert toy().run(1) == 1020
    _intercept.remove(h2)


def test_missing_site_and_method(monkeypatch):
    monkeypatch.setitem(_intercept.SITES, "toy.none", ("fp_toy_absent_cls", "Nope", "run"))
    mod = types.ModuleType("fp_toy_absent_cls")
    monkeypatch.setitem(sys.modules, "fp_toy_absent_cls", mod)
    h = _intercept.add("toy.none", "x", lambda n, s, *a, **k: n(s, *a, **k))
    assert "does not exist" in (h.note or "")
    _intercept.remove(h)
    with pytest.raises(KeyError):
        _intercept.add("no.such.site", "x", lambda n, s: n(s))
    _intercept._sites.pop("toy.none", None)


def test_patched_when_imported(monkeypatch, tmp_path: Path):
    (tmp_path / "fp_toy_late.py").write_text(
        "class Late:\n    def run(self, x):\n        return x * 2\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(_intercept.SITES, "toy.late", ("fp_toy_late", "Late", "run"))
    sys.modules.pop("fp_toy_late", None)
    h = _intercept.add("toy.late", "x", lambda n, s, x: n(s, x) + 1)
    assert h.note == "pending import" and not _intercept.installed("toy.late")
    import fp_toy_late

    assert _intercept.installed("toy.late") and fp_toy_late.Late().run(3) == 7
    _intercept.remove(h)
    assert fp_toy_late.Late().run(3) == 6
    # the module is no longer watched; the finder stays only while other modules are (whatever
    # earlier imports left pending: triton.language before the first kernel, say)
    assert "fp_toy_late" not in _intercept._Finder.watched
    finders = [f for f in sys.meta_path if isinstance(f, _intercept._Finder)]
    assert len(finders) == (1 if _intercept._Finder.watched else 0), _intercept._Finder.watched
    sys.modules.pop("fp_toy_late", None)
    _intercept._sites.pop("toy.late", None)


def test_internal_mark_nests_and_is_per_thread():
    assert not _intercept.in_internal()
    seen = []
    with _intercept.internal():
        with _intercept.internal():
            assert _intercept.in_internal()
        assert _intercept.in_internal()
        t = threading.Thread(target=lambda: seen.append(_intercept.in_internal()))
        t.start()
        t.join()
    assert not _intercept.in_internal() and seen == [False]


def test_threads_add_remove_while_calling(toy):
    """8 threads call the method while others add and remove interceptors: every call returns a
    result the current chain explains, and the class ends as it began."""
    orig = toy.__dict__["run"]
    stop = threading.Event()
    bad: list[int] = []

    def caller():
        t = toy()
        while not stop.is_set():
            r = t.run(1)
            # two churners: up to four interceptors (a, b of each) can be in the chain at once
            if r not in (2, 20, 200, 2000, 20000):
                bad.append(r)

    def churn():
        for _ in range(300):
            h1 = _intercept.add("toy.run", "a", lambda n, s, x: n(s, x) * 10)
            h2 = _intercept.add("toy.run", "b", lambda n, s, x: n(s, x) * 10)
            _intercept.remove(h1)
            _intercept.remove(h2)

    callers = [threading.Thread(target=caller) for _ in range(6)]
    churners = [threading.Thread(target=churn) for _ in range(2)]
    for t in callers + churners:
        t.start()
    for t in churners:
        t.join()
    stop.set()
    for t in callers:
        t.join()
    assert not bad
    assert toy.__dict__["run"] is orig


@pytest.mark.compat("runtime-loops")  # the timeline kernel loops over a runtime bound
def test_debugger_then_timelines_then_debugger_off_keeps_timelines(tmp_path):
    """The bug the registry replaced: each tool restored what it had saved, so removing the
    Debugger put back the method the timelines had wrapped, and timelines silently stopped."""
    import json

    import _tlkernels as tk
    import torch

    from flagprism import debugger, profiler

    debugger.configure(output_dir=tmp_path / "d")
    debugger.activate()
    sid = profiler.start(str(tmp_path / "p"), backend="instrumentation")
    try:
        debugger.deactivate()
        assert _intercept.installed("interp.run")
        x = torch.arange(64, dtype=torch.float32)
        y = torch.empty_like(x)
        tk.scoped_kernel[(2,)](x, y, 64, 2, BLOCK=32)
    finally:
        profiler.finalize(sid)
        debugger.deactivate()
        debugger.reset_config()
    assert not _intercept.installed("interp.run")
    meta = json.loads((tmp_path / "p.meta.json").read_text())
    assert any(
        k.startswith("intra_kernel_scopes:scoped_kernel") for k in json.dumps(meta).split('"')
    ), meta
