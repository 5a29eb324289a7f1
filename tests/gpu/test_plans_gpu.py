# SPDX-License-Identifier: Apache-2.0
"""The launch fast path on a CUDA GPU (python/flagprism/_plans.py, docs/guide/debugger.md "The launch
fast path"): later launches of one specialization reuse the plan, the twin's register decision
and the kernel's own compiled kernel (the very object Triton returns without FlagPrism); a
launch whose specialization differs (alignment, dtype, constexpr) gets its own; checks still
find what they find on every launch; FlagGems (LibEntry), Liger-Kernel and torch.compile
(Inductor) launches all take the fast path, with results equal to bare runs, bitwise."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

pytestmark = pytest.mark.gpu

if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU (and TRITON_INTERPRET unset)", allow_module_level=True)

import _workloads as wl  # noqa: E402
import flagprism.debugger as debugger  # noqa: E402
from flagprism import _plans  # noqa: E402
from kernels import planted, vector_add  # noqa: E402


@pytest.fixture
def dbg(tmp_path: Path):
    debugger.deactivate()
    debugger.reset_config()
    debugger._report_fn = debugger._ext_report
    debugger.clear_exported_runs()
    debugger.configure(output_dir=tmp_path / "fp_debug")
    debugger.reset_summary()
    _plans.reset(forget=True)  # earlier tests' plans (same kernels, same keys) are not this test's
    yield debugger
    debugger.deactivate()
    debugger.reset_config()
    debugger.clear_exported_runs()


def _add(x, out, n=None):
    n = x.numel() if n is None else n
    return vector_add.add_kernel[(triton.cdiv(n, 1024),)](x, x, out, n, BLOCK=1024)


def test_later_launches_reuse_plan_registers_and_the_kernel_s_compiled_kernel(dbg):
    x = torch.randn(1 << 16, device="cuda")
    out = torch.empty_like(x)
    bare = _add(x, out)
    want = out.clone()
    dbg.activate(check="bounds")
    got = [_add(x, out) for _ in range(5)]
    torch.cuda.synchronize()
    c = dbg.stats()["launch"]
    dbg.deactivate()
    assert torch.equal(out, want)
    assert all(k is bare for k in got), "the launch must return Triton's own compiled kernel"
    assert c["plans_built"] == 1 and c["plan_hits"] == 4 and c["slow_launches"] == 0, c
    assert c["registers_reused"] == 4 and c["originals_reused"] == 4, c
    assert c["twins_built"] <= 1, c
    # the first launch takes the Python path and teaches the replay; the others are replayed
    assert c["fast_launches"] == 4 and c["direct_launches"] == 4, c
    tot = dbg.summary()["totals"]
    assert tot["by_status"]["instrumented"] == 5 and tot["findings"] == 0
    runs = dbg.take_exported_runs()
    assert len({(r["num_warps"]["twin"], (r["registers"] or {}).get("cap")) for r in runs}) == 1


def test_a_different_specialization_gets_its_own_compiled_kernel(dbg):
    base = torch.randn((1 << 16) + 4, device="cuda")
    aligned, shifted = base[: 1 << 16], base[1: (1 << 16) + 1]  # 16-byte aligned, and not
    out = torch.empty(1 << 16, device="cuda")
    want = {name: _add(t, out) for name, t in (("aligned", aligned), ("shifted", shifted))}
    assert want["aligned"] is not want["shifted"]
    want["half"] = _add(aligned.half(), out.half())
    dbg.activate(check="bounds")
    for _ in range(2):
        assert _add(aligned, out) is want["aligned"]
        assert _add(shifted, out) is want["shifted"]
        assert _add(aligned.half(), out.half()) is want["half"]
    torch.cuda.synchronize()
    c = dbg.stats()["launch"]
    dbg.deactivate()
    assert c["plans_built"] == 3 and c["plan_hits"] == 3, c
    assert dbg.summary()["totals"]["findings"] == 0


def test_findings_on_every_launch_of_the_fast_path(dbg):
    case = next(c for c in planted.CASES if c.name == "off_by_one_mask")
    dbg.activate(check="bounds")
    for _ in range(3):
        planted.launch(case, "cuda")
    torch.cuda.synchronize()
    dbg.deactivate()
    tot = dbg.summary()["totals"]
    assert dbg.stats()["launch"]["plan_hits"] == 2
    assert tot["launches_with_findings"] == 3, dbg.summary()["text"]


def test_direct_launches_find_the_same_under_a_launch_hook(dbg):
    """The direct launch passes the pool slice's address; with a launch hook installed (the
    kernel's launch metadata is made at each launch) every launch is still checked, each finding
    where it is, and the hook sees every twin launch."""
    from triton import knobs

    case = next(c for c in planted.CASES if c.name == "off_by_one_mask")
    seen = []

    def hook(md):
        seen.append(md.data["name"] if hasattr(md, "data") else md["name"])

    knobs.runtime.launch_enter_hook.add(hook)
    try:
        dbg.activate(check="bounds")
        for _ in range(4):
            planted.launch(case, "cuda")
        torch.cuda.synchronize()
        dbg.deactivate()
    finally:
        knobs.runtime.launch_enter_hook.remove(hook)
    c = dbg.stats()["launch"]
    assert c["plan_hits"] == 3 and c["direct_launches"] == 3, c
    assert dbg.summary()["totals"]["launches_with_findings"] == 4, dbg.summary()["text"]
    runs = dbg.take_exported_runs()
    per_run = {
        frozenset((f["kind"], f["line"], f["param"], f["bytes_past_end"]) for f in r["findings"])
        for r in runs
    }
    # the same findings (the load and the store one element past the end) on every launch
    (same,) = per_run
    assert len(runs) == 4 and len(same) == 2, per_run
    assert len(seen) >= 4, seen


def test_replayed_launches_report_what_the_python_path_reports(dbg, monkeypatch):
    """The same planted kernel launched four times with the replay (python/ext/dbgfast.c) and
    four times without it: the same findings on every launch, with the same origin (launch
    path, the Python stack's frames inside this test), the same run dict fields, the same
    summary."""
    from flagprism import _replay

    case = next(c for c in planted.CASES if c.name == "off_by_one_mask")

    def four():
        dbg.clear_exported_runs()
        dbg.reset_summary()
        _plans.reset(forget=True)
        dbg.activate(check="bounds")
        for _ in range(4):
            planted.launch(case, "cuda")
        torch.cuda.synchronize()
        dbg.deactivate()
        runs = dbg.take_exported_runs()
        c = dict(dbg.stats()["launch"])
        found = [
            sorted(
                (f["kind"], f["line"], f["param"], f["bytes_past_end"], f["program"])
                for f in r["findings"]
            )
            for r in runs
        ]
        origin = [
            (r["report"]["origin"]["launch_path"], r["report"]["origin"]["stack"][-2:]) for r in runs
        ]
        keys = [sorted(k for k in r if k not in ("report", "findings", "coverage")) for r in runs]
        return None, c, found, origin, keys, dbg.summary()["totals"]

    replayed = four()
    monkeypatch.setattr(_replay, "_launch_fn", None)  # no replay: every launch in Python
    python = four()
    assert replayed[1]["fast_launches"] == 3 and python[1]["fast_launches"] == 0, (replayed[1], python[1])
    assert replayed[2] == python[2] and len(replayed[2]) == 4 and all(replayed[2]), replayed[2]
    assert len(set(map(repr, replayed[3]))) == 1 and len(set(map(repr, python[3]))) == 1
    assert [o[1][-1] for o in replayed[3]] == [o[1][-1] for o in python[3]], (replayed[3], python[3])
    assert replayed[3][0][0] == "JITFunction.run" and "planted.py" in replayed[3][0][1][-1]
    assert replayed[4] == python[4]
    assert replayed[5] == python[5], (replayed[5], python[5])


def test_autotuned_launches_are_replayed_on_their_chosen_config(dbg):
    """Launches of the config an autotuner chose are replayed (python/ext/dbgfast.c) after the
    first; each launch's report names the autotuner's path and its config as the Python path
    writes them, and the results equal a bare run's."""
    import json

    from kernels import tuned

    n = 4096
    x = torch.randn(n, device="cuda")
    out = torch.empty_like(x)

    def grid(m):
        return (triton.cdiv(n, m["BLOCK"]),)

    tuned.tuned_scale[grid](x, out, n)  # tuned bare: the checked launches run the chosen config
    want = out.clone()
    dbg.configure(output_dir=dbg.get_config()["output_dir"], all_reports=True)
    dbg.activate(check="bounds")
    for _ in range(4):
        out.zero_()
        tuned.tuned_scale[grid](x, out, n)
    torch.cuda.synchronize()
    c = dbg.stats()["launch"]
    dbg.deactivate()
    assert torch.equal(out, want)
    assert c["fast_launches"] == 3 and c["plan_hits"] == 3, c
    runs = dbg.take_exported_runs()
    origins = {json.dumps(r["report"]["origin"], sort_keys=True) for r in runs}
    assert len(runs) == 4 and len(origins) == 1, origins
    origin = json.loads(origins.pop())
    assert origin["launch_path"] == "triton.autotune", origin
    assert origin["autotune"]["role"] == "chosen" and "BLOCK" in origin["autotune"]["config"]
    assert dbg.summary()["totals"]["findings"] == 0


def _need(module: str) -> None:
    why = wl.missing(module)
    if why:
        pytest.skip(why)


def _fast_path(run, check="bounds", passes=3):
    """Run `run` bare, then `passes` + 1 times in check mode; (bare result, last checked result,
    the launch counters of the checked passes after the first, as a dict with the instrumented
    launches of one pass under "per_pass")."""
    want = run()
    dbg = debugger
    dbg.activate(check=check)
    run()  # builds the twins and plans
    per_pass = dbg.summary()["totals"]["by_status"]["instrumented"]
    _plans.reset()
    for _ in range(passes):
        got = run()
    torch.cuda.synchronize()
    c = dict(dbg.stats()["launch"], per_pass=per_pass)
    dbg.deactivate()
    return want, got, c


def _same(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert torch.equal(a[k], b[k]), k
    else:
        assert torch.equal(a, b)


def test_flaggems_launches_take_the_fast_path(dbg):
    _need("flag_gems")
    t = wl.gems_inputs()
    want, got, c = _fast_path(lambda: wl.gems_run(t))
    _same(got, want)
    assert c["slow_launches"] == 0 and c["plans_built"] == 0, str(c)
    assert c["plan_hits"] == 3 * c["per_pass"] > 0, str(c)
    assert c["originals_reused"] == c["plan_hits"], str(c)  # LibEntry gets the compiled kernel
    assert debugger.summary()["totals"]["findings"] == 0


def test_liger_launches_take_the_fast_path(dbg):
    _need("liger_kernel")
    t = wl.liger_inputs()
    want, got, c = _fast_path(lambda: wl.liger_pass(t))
    _same(got, want)
    # liger_pass: 8 kernels, forward and backward, RoPE's twice: 9 launches a pass
    assert c["slow_launches"] == 0 and c["plans_built"] == 0, str(c)
    assert c["plan_hits"] == 3 * c["per_pass"] >= 3 * 9, str(c)
    # every launch of the three passes is replayed (plain JITFunction.run launches)
    assert c["fast_launches"] == c["plan_hits"], str(c)
    assert debugger.summary()["totals"]["findings"] == 0


def test_inductor_launches_take_the_fast_path(dbg):
    torch._dynamo.reset()
    model, x = wl.compiled_block()

    def run():
        with torch.no_grad():
            return model(x).clone()

    want, got, c = _fast_path(run)
    _same(got, want)
    assert c["slow_launches"] == 0 and c["plans_built"] == 0, str(c)
    assert c["plan_hits"] == 3 * c["per_pass"] >= 3, str(c)
    assert c["originals_reused"] == 0, str(c)  # Inductor launches return nothing to a caller
    assert debugger.summary()["totals"]["findings"] == 0
    torch._dynamo.reset()
