# SPDX-License-Identifier: Apache-2.0
"""The planted-bug corpus (tests/python/corpus/) on the Triton interpreter, in check mode.

Every planted bug is found exactly as its case says (kind, line, helper chain, parameter, where the
access went, bytes before/past the view, lanes, first program and address, loop iteration; for
numeric findings the element count and whether the value came from memory), with nothing else;
every correct version gives no finding under every check and the result torch computes; every
launch is complete. `flagprism debug --check bounds,nan,inf --strict` exits 3 on planted bugs and 0
on the correct versions. The same corpus runs on a GPU in tests/gpu/test_corpus_gpu.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )

import corpus  # noqa: E402

import flagprism.debugger as debugger  # noqa: E402

HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.skipif(not debugger.is_available(), reason="flagprism._ext is not built")

PLANTED_KINDS = {
    "out_of_bounds",
    "descriptor_extent",
    "nan_origin",
    "inf_origin",
    "division_by_zero",
    "invalid_domain",
    "precision_loss",
}


@pytest.fixture
def dbg(tmp_path):
    """The Debugger as a program gets it: the native writer and its pipeline, a fresh summary."""
    debugger.deactivate()
    debugger.reset_config()
    debugger.clear_exported_runs()
    saved = debugger._report_fn
    debugger._report_fn = debugger._ext_report
    debugger.configure(output_dir=str(tmp_path / "fp_debug"))
    debugger.reset_summary()
    yield debugger
    debugger.deactivate()
    debugger.reset_config()
    debugger.clear_exported_runs()
    debugger.reset_summary()
    debugger._report_fn = saved


def _params(cases):
    return [
        pytest.param(c, id=c.name, marks=[pytest.mark.compat(f) for f in c.features])
        for c in cases
        if c.interpreter
    ]


def _complete(runs, setup) -> None:
    assert len(runs) == len(setup.launches), [r["kernel"] for r in runs]
    bad = [
        (r["kernel"], r.get("error"), r.get("overflow_count")) for r in runs if not r["complete"]
    ]
    assert not bad, f"incomplete launches: {bad}"


# ------------------------------------------------------------------------------------------------
# The table itself
# ------------------------------------------------------------------------------------------------


def test_corpus_table():
    """At least 40 planted bugs, each with a correct version, every expected line a marker of the
    case's own module, every kind of finding represented."""
    assert len(corpus.CASES) >= 40
    kinds = set()
    for case in corpus.CASES:
        setup = case.make("cpu", True)
        expects = case.expect(setup)
        assert expects, case.name
        for e in expects:
            kinds.add(e.kind)
            assert e.kind in PLANTED_KINDS
            assert e.tag in corpus.MARKERS, (case.name, e.tag)
            assert e.file == str(Path(sys.modules[case.make.__module__].__file__).resolve()), (
                case.name,
                e.tag,
            )
            if e.kind == "out_of_bounds":
                assert (
                    e.param
                    and e.location
                    and e.lanes
                    and (e.past or e.before)
                    and e.addr is not None
                )
        assert set(case.checks.split(",")) <= set(corpus.ALL_CHECKS.split(","))
    assert kinds == PLANTED_KINDS
    families = {c.family for c in corpus.CASES}
    assert {
        "flash attention",
        "paged attention",
        "GEMM",
        "histogram",
        "softmax",
        "cross entropy",
        "RoPE",
        "int8 quantization",
        "persistent",
        "layer norm",
    } <= families


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in corpus.CASES])
def test_layout_explains_the_expected_location(case):
    """The expected location of every out-of-bounds finding follows from where the case put its
    tensors (the rule the GPU test uses to explain a location that depends on the layout)."""
    setup = case.make("cpu", True)
    for e in case.expect(setup):
        if e.kind != "out_of_bounds":
            continue
        t = setup.tensors[e.param]
        assert corpus.explain_location(e.param, t.data_ptr() + e.addr, setup.tensors) == (
            e.location,
            e.other_param,
        )


# ------------------------------------------------------------------------------------------------
# Correct versions and planted bugs
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", _params(corpus.CASES))
def test_correct_version(dbg, case):
    """No finding under every check, complete, and the result torch computes."""
    setup, runs = corpus.run_checked(dbg, case, "cpu", planted=False, checks=corpus.ALL_CHECKS)
    _complete(runs, setup)
    found = corpus.findings_of(runs)
    assert corpus.compare([], found) == []
    assert setup.verify is not None
    setup.verify()


@pytest.mark.parametrize("case", _params(corpus.CASES))
def test_planted_bug(dbg, case):
    """Each planted bug found exactly, nothing else; complete; the in-bounds results unchanged."""
    setup, runs = corpus.run_checked(dbg, case, "cpu", planted=True)
    _complete(runs, setup)
    problems = corpus.compare(case.expect(setup), corpus.findings_of(runs))
    assert not problems, f"{case.name}:\n  " + "\n  ".join(problems)
    # check mode folds every execution of a statement into one finding
    assert all(f.get("execution") is None for r in runs for f in r["findings"])
    if setup.verify is not None:
        setup.verify()


# ------------------------------------------------------------------------------------------------
# Across launches
# ------------------------------------------------------------------------------------------------


@pytest.mark.compat("runtime-loops")
@pytest.mark.parametrize("all_reports", [False, True])
def test_nan_descends_across_launches(dbg, all_reports):
    """The second launch loads the first one's NaN inside an expression: one origin, at the first
    kernel's line, with the load counted as its descendant; also when every launch's report is
    written."""
    dbg.configure(output_dir=dbg.get_config()["output_dir"], all_reports=all_reports)
    case = corpus.BY_NAME["l2_normalize_nan_descends"]
    setup, runs = corpus.run_checked(dbg, case, "cpu", planted=True)
    assert [r["kernel"] for r in runs] == ["l2_normalize_kernel", "row_dot_kernel"]
    assert corpus.compare(case.expect(setup), corpus.findings_of(runs)) == []
    assert runs[1]["findings"] == []
    # the run dict counts what it lists (the pytest plugin fails tests on findings_count)
    assert [r["findings_count"] for r in runs] == [len(r["findings"]) for r in runs]
    origins = [f for f in dbg.summary()["json"]["findings"] if f["kind"] == "nan_origin"]
    assert len(origins) == 1 and origins[0]["kernel"] == "l2_normalize_kernel"
    assert origins[0]["descendants"] >= 1


@pytest.mark.compat("runtime-loops")
def test_nan_in_other_data_after_an_origin(dbg):
    """NaN that the host wrote into another tensor is an origin from memory even after an earlier
    launch produced NaN elsewhere: only a NaN some launch produced descends."""
    first = corpus.BY_NAME["l2_normalize_nan_descends"]
    second = corpus.BY_NAME["masked_mean_nan_padding"]
    dbg.activate(check=first.checks)
    s1 = first.make("cpu", True)
    s1.run()
    s2 = second.make("cpu", True)
    s2.run()
    dbg.deactivate()
    runs = dbg.take_exported_runs()
    assert [r["kernel"] for r in runs] == [
        "l2_normalize_kernel",
        "row_dot_kernel",
        "masked_mean_kernel",
    ]
    assert corpus.compare(first.expect(s1), corpus.findings_of(runs[:2])) == []
    assert corpus.compare(second.expect(s2), corpus.findings_of(runs[2:])) == []


# ------------------------------------------------------------------------------------------------
# flagprism debug --check ... --strict
# ------------------------------------------------------------------------------------------------

SCRIPT = textwrap.dedent(f"""\
    import sys
    sys.path.insert(0, {str(HERE)!r})
    import corpus
    planted = sys.argv[1] == "planted"
    names = sys.argv[2:] or [c.name for c in corpus.CASES if c.interpreter]
    failed = []
    for name in names:
        try:
            corpus.BY_NAME[name].make("cpu", planted).run()
        except Exception as e:  # one case's error does not hide the others
            failed.append(name)
            print(f"FAILED {{name}}: {{type(e).__name__}}: {{e}}", file=sys.stderr)
    print("ran", len(names) - len(failed), "of", len(names))
    sys.exit(1 if failed else 0)
    """)

CLI_PLANTED = [
    "add_overrun_into_next_slice",
    "masked_softmax_empty_row_nan",
    "softplus_exp_overflow",
]


def _debug(cli: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, FLAGPRISM_PYTHON=sys.executable, TRITON_INTERPRET="1")
    return subprocess.run(
        [str(cli), "debug", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600
    )


def _cli_runnable() -> list[str]:
    """The correct versions the CLI runs (those the known-bad table does not stop here)."""
    from flagprism.compat import skip_reason

    return [
        c.name
        for c in corpus.CASES
        if c.interpreter and not any(skip_reason(f) for f in c.features)
    ]


def test_cli_strict_correct_set_exits_0(cli, tmp_path):
    script = tmp_path / "corpus_prog.py"
    script.write_text(SCRIPT)
    names = _cli_runnable()
    r = _debug(
        cli,
        "--check",
        "bounds,nan,inf",
        "--strict",
        "-o",
        "rep",
        str(script),
        "correct",
        *names,
        cwd=tmp_path,
    )
    failed = [ln for ln in r.stderr.splitlines() if ln.startswith("FAILED ")]
    assert not failed, "\n".join(failed)
    assert r.returncode == 0, r.stderr[-4000:]
    assert f"ran {len(names)} of {len(names)}" in r.stdout
    assert "no findings" in r.stderr, r.stderr[-4000:]


def test_cli_strict_planted_exits_3(cli, tmp_path):
    script = tmp_path / "corpus_prog.py"
    script.write_text(SCRIPT)
    r = _debug(
        cli,
        "--check",
        "bounds,nan,inf",
        "--strict",
        "-o",
        "rep",
        str(script),
        "planted",
        *CLI_PLANTED,
        cwd=tmp_path,
    )
    assert r.returncode == 3, r.stderr[-4000:]
    # three out-of-bounds accesses, one NaN origin, one Inf origin
    assert "5 findings:" in r.stderr, r.stderr[-4000:]
    assert "out_of_bounds in add_kernel" in r.stderr
    assert "nan_origin in masked_softmax_kernel" in r.stderr
    assert "inf_origin in softplus_kernel" in r.stderr
    assert "report: " in r.stderr


# ------------------------------------------------------------------------------------------------
# The interpreter half of the GPU differential test (tests/gpu/_corpus_child.py)
# ------------------------------------------------------------------------------------------------

CHILD_CASES = [
    "add_overrun_into_next_slice",
    "flash_attn_fwd_kv_overrun_slices",
    "int8_dequant_fp16_overflow",
    "paged_attention_bad_block_table",
    "l2_normalize_nan_descends",
]


@pytest.mark.compat("block-pointers")
@pytest.mark.compat("runtime-loops")
def test_differential_child_on_the_interpreter(tmp_path):
    """The child the GPU test spawns reports each case as this file's tests see it, and the
    comparison finds a run equal to itself and tells a changed one apart."""
    out = tmp_path / "findings.json"
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.run(
        [sys.executable, str(HERE.parent / "gpu" / "_corpus_child.py"), str(out), *CHILD_CASES],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(out.read_text())
    assert sorted(got) == sorted(CHILD_CASES)
    for name in CHILD_CASES:
        case = corpus.BY_NAME[name]
        setup = case.make("cpu", True)
        planted, correct = got[name]["planted"], got[name]["correct"]
        assert planted["error"] is None and planted["complete"] and correct["complete"]
        assert correct["findings"] == []
        assert corpus.compare(case.expect(setup), _tuples(planted["findings"])) == []
        assert corpus.differences(planted["findings"], planted["findings"]) == []
    f = got["add_overrun_into_next_slice"]["planted"]["findings"]
    moved = [
        dict(x, location="outside_allocations", other_param=None) if x["param"] == "x_ptr" else x
        for x in f
    ]
    assert corpus.differences(moved, f) != []  # a location that the layout does not explain
    assert (
        corpus.differences(moved, f, lambda g: ("outside_allocations", None)) == []
    )  # one it does
    assert corpus.differences([dict(x, lanes_out=x["lanes_out"] + 1) for x in f], f) != []


def _tuples(found):
    """JSON findings back to the normalised form (tuples where corpus.normalize makes them)."""
    out = []
    for x in found:
        x = dict(x)
        for k in ("program", "chain", "iteration"):
            if x.get(k) is not None:
                x[k] = tuple(x[k])
        out.append(x)
    return out


def test_descriptor_methods_name_the_tensor_they_were_made_from():
    """A descriptor's atomic_add (GPU only on Triton 3.6: its interpreter has no descriptor
    atomics) is checked against the tensor the descriptor was made from, as its load and store
    are: the bounds slot of `c_desc.atomic_add(...)` names c_ptr, so a lane past C inside the
    workspace it lies in is reported against C (`param_known`), not the nearest tensor."""
    from corpus import gemm

    from flagprism import _rewrite

    fn = gemm.matmul_splitk_desc_kernel
    twin = _rewrite.build(
        fn, 0, 1, debugger._helpers(fn, "fused", False), sanitize=True, rules=frozenset({"bounds"})
    )
    bounds = {s.subject: s.info.get("cands") for s in twin.checks.slots if s.rule == "bounds"}
    assert bounds == {"a_desc": ["a_ptr"], "b_desc": ["b_ptr"], "c_desc": ["c_ptr"]}, bounds
