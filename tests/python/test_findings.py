# SPDX-License-Identifier: Apache-2.0
"""The Debugger's findings on the Triton interpreter: every planted bug of kernels/planted.py is
found with the right statement and parameter (addr_level 1 and 2, marker mode and sanitize
mode), the correct look-alikes (strided, transposed and column views, pointers moving between
arguments, -inf padding...) give nothing, the text report starts with the findings, the
rewriter's site-table facts (base parameters, operand roles), and `flagprism debug`."""

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

import triton.language as tl  # noqa: E402
from kernels import planted, softmax, vector_add  # noqa: E402

import flagprism.debugger as debugger  # noqa: E402
import flagprism.language as fpl  # noqa: E402
from flagprism import _launch, _rewrite  # noqa: E402

HERE = Path(__file__).resolve().parent
MARKED = [c for c in planted.CASES if not c.sanitize_only]

pytestmark = pytest.mark.skipif(not debugger.is_available(), reason="flagprism._ext is not built")


@pytest.fixture
def dbg(tmp_path):
    debugger.configure(output_dir=str(tmp_path / "fp_debug"))
    yield debugger
    debugger.deactivate()
    debugger.clear_exported_runs()
    debugger.reset_config()


# ------------------------------------------------------------------------------------------------
# The planted suite
# ------------------------------------------------------------------------------------------------


def _params(cases):
    """The cases as pytest parameters, each marked with what its kernel needs."""
    return [
        pytest.param(c, id=c.name, marks=[pytest.mark.compat(f) for f in c.features]) for c in cases
    ]


@pytest.mark.parametrize("addr_level", [1, 2])
@pytest.mark.parametrize("case", _params(MARKED))
def test_planted_suite(dbg, case, addr_level):
    dbg.activate(level=1, addr_level=addr_level)
    planted.launch(case, "cpu")
    run = planted.one_run(dbg)
    assert run["complete"]
    planted.check(case, run["findings"])
    for f in run["findings"]:
        assert {"kind", "statement", "line", "program", "message"} <= set(f)
        if f["kind"] == "out_of_bounds":
            assert f["param_known"] and f["distance_bytes"] > 0
            assert f["distance_bytes"] == max(f["bytes_past_end"], f["bytes_before_start"])
            # the device counts the lanes outside at every address level
            assert f["lanes_out"] > 0


@pytest.mark.parametrize("case", _params(planted.CASES))
def test_sanitize_suite(dbg, case):
    dbg.activate(sanitize=True)
    planted.launch(case, "cpu")
    run = planted.one_run(dbg)
    assert run["sanitize"] and run["level"] == 0 and run["addr_level"] == 1
    # sanitize observes addresses only: the out-of-bounds findings, nothing else
    assert {f["kind"] for f in run["findings"]} <= {"out_of_bounds"}
    planted.check(case, run["findings"], {"out_of_bounds"})
    assert run["op_log_txt"] is None and run["op_log_json"] is None
    if not run["findings_count"]:
        # check mode writes a launch's report only when it has findings (all_reports=True: always)
        assert run["report"] is None and run["txt"] is None and run["complete"]
        return
    report = run["report"]
    assert report["config"]["sanitize"] is True and report["statements"] == []
    assert "(sanitize run: statement tables are not written)" in Path(run["txt"]).read_text()


def test_off_by_one_details(dbg):
    dbg.activate(level=1, addr_level=2)
    (x, out, n), _kw = planted.launch(planted.BY_NAME["off_by_one_mask"], "cpu")
    run = planted.one_run(dbg)
    by_param = {f["param"]: f for f in run["findings"]}
    fx, fo = by_param["x_ptr"], by_param["out_ptr"]
    # program 1 reads offs 64..127 masked to offs <= 100: lane 100 is one element too far
    assert fx["program"] == [1, 0, 0] and fx["programs"] == [[1, 0, 0]] and fx["program_count"] == 1
    assert fx["bytes_past_end"] == 4 and fx["bytes_before_start"] == 0 and fx["lanes_out"] == 1
    assert fx["address"] == x.data_ptr() + n * 4
    assert fx["view"] == {"start": x.data_ptr(), "end": x.data_ptr() + 400, "bytes": 400}
    assert fx["storage"]["bytes"] == 400 and fx["location"] == "outside_allocations"
    assert fx["access"] == "load" and fx["line"] == fx["line"] and "x_ptr" in fx["message"]
    assert fo["access"] == "store" and fo["location"] == "inside_storage"
    assert fo["storage"]["start"] == out.untyped_storage().data_ptr()
    assert "overwrites neighbouring data" in fo["message"]


def test_missing_mask_and_tile_programs(dbg):
    dbg.activate(level=0, addr_level=1)
    planted.launch(planted.BY_NAME["missing_mask_last_block"], "cpu")
    (f,) = planted.one_run(dbg)["findings"]
    assert f["program"] == [1, 0, 0] and f["bytes_past_end"] == (128 - 100) * 4
    planted.launch(planted.BY_NAME["tile_past_row"], "cpu")
    (f,) = planted.one_run(dbg)["findings"]
    # only the block holding the last row runs past the view (rows 8..9 of 10, 8 columns too far)
    assert f["programs"] == [[2, 0, 0]] and f["bytes_past_end"] == (32 - 24) * 4


def test_numerical_details(dbg):
    dbg.activate(level=1, addr_level=0)
    planted.launch(planted.BY_NAME["zero_over_zero"], "cpu")
    fs = {f["kind"]: f for f in planted.one_run(dbg)["findings"]}
    assert fs["division_by_zero"]["count"] == 2 and fs["division_by_zero"]["program_count"] == 2
    assert fs["nan_origin"]["program"] == [0, 0, 0] and fs["nan_origin"]["count"] == 1
    assert "no value the statement reads (x, y) held NaN" in fs["nan_origin"]["message"]
    assert fs["inf_origin"]["program"] == [1, 0, 0]
    planted.launch(planted.BY_NAME["fp16_overflow_on_cast"], "cpu")
    fs = {f["kind"]: f for f in planted.one_run(dbg)["findings"]}
    assert (
        fs["precision_loss"]["target_dtype"] == "float16"
        and fs["precision_loss"]["value"] == 100000.0
    )
    assert fs["precision_loss"]["programs"] == [[0, 0, 0]]
    planted.launch(planted.BY_NAME["log_of_negative"], "cpu")
    fs = {f["kind"]: f for f in planted.one_run(dbg)["findings"]}
    assert fs["invalid_domain"]["value"] == -2.0 and fs["invalid_domain"]["program_count"] == 1
    assert fs["nan_origin"]["count"] == 2


def test_nan_from_memory(dbg):
    x = torch.randn(100)
    x[10] = float("nan")
    y = torch.randn(100)
    y[60] = float("inf")
    out = torch.empty(100)
    dbg.activate(level=1, addr_level=1)
    vector_add.add_kernel[(2,)](x, y, out, 100, BLOCK=64)
    fs = {f["kind"]: f for f in planted.one_run(dbg)["findings"]}
    assert set(fs) == {"nan_origin", "inf_origin"}
    assert fs["nan_origin"]["from_memory"] and fs["nan_origin"]["subject"] == "x"
    assert "loaded from memory" in fs["nan_origin"]["message"]
    assert fs["inf_origin"]["from_memory"] and fs["inf_origin"]["program"] == [0, 0, 0]
    # the sum x + y holds NaN and Inf too, but reads non-finite values: not an origin


def test_inf_padding_is_not_an_origin_but_inf_data_is(dbg):
    x = torch.randn(3, 50)
    out = torch.empty(3, 50)
    dbg.activate(level=1, addr_level=1)
    softmax.softmax_kernel[(3,)](out, x, x.stride(0), out.stride(0), 50, BLOCK=64)
    assert planted.one_run(dbg)["findings"] == []
    x[1, 5] = float("inf")
    softmax.softmax_kernel[(3,)](out, x, x.stride(0), out.stride(0), 50, BLOCK=64)
    fs = planted.one_run(dbg)["findings"]
    # 14 padding lanes hold -inf in every row; row 1 has one more: at least 1 from memory
    inf = [f for f in fs if f["kind"] == "inf_origin"]
    assert len(inf) == 1 and inf[0]["programs"] == [[1, 0, 0]] and inf[0]["count"] == 1
    # exact: only the lanes the load read from memory count, not its -inf padding
    assert not inf[0]["count_is_lower_bound"] and inf[0]["from_memory"]


def test_text_report_starts_with_findings(dbg):
    dbg.activate(level=1, addr_level=1)
    planted.launch(planted.BY_NAME["missing_mask_last_block"], "cpu")
    text = Path(planted.one_run(dbg)["txt"]).read_text()
    head, _, body = text.partition("\nline ")
    assert "FINDINGS: 1\n" in head and "out_of_bounds at line" in head
    assert "reads up to 112 bytes past the end of the tensor `x_ptr`" in head
    assert "leaves every allocation" in head and "program 1" in head
    assert body  # the statement tables follow
    planted.launch(planted.BY_NAME["ok_vector_add"], "cpu")
    assert "\nFINDINGS: none\n" in Path(planted.one_run(dbg)["txt"]).read_text()


# ------------------------------------------------------------------------------------------------
# What the rewriter and the launcher hand over
# ------------------------------------------------------------------------------------------------


def _sites(kernel, level=1, addr=1, sanitize=False):
    return [s.to_json() for s in _rewrite.rewrite(kernel, level, addr, sanitize).sites]


def test_site_table_base_params():
    st = _sites(planted.pointer_loop_kernel)
    (load,) = [s for s in st if s["kind"] == "load"]
    assert load["base_param"] == "x_ptr" and load["base_params"] == [
        "x_ptr"
    ]  # through ptrs += BLOCK
    st = _sites(planted.cross_arg_kernel)
    k = next(s for s in st if s["kind"] == "load" and "k_off" in s["name"])
    # k_off is a scalar parameter: a candidate the C side drops (it is not a tensor argument)
    assert k["base_params"] == ["q_ptr", "k_off"] and k["base_param"] is None
    st = _sites(softmax.softmax_kernel)
    assert [s["base_param"] for s in st if s["kind"] in ("load", "store")] == ["in_ptr", "out_ptr"]


@triton.jit
def _ptr_helper(p, off):
    return p + off


@triton.jit
def _bases_kernel(x_ptr, y_ptr, n, start, BLOCK: tl.constexpr):
    fpl.collect_start()
    offs = tl.arange(0, BLOCK)
    p = _ptr_helper(x_ptr, offs)
    a = tl.load(p)
    q = tl.where(offs < n, y_ptr + offs, y_ptr)
    b = tl.load(q)
    r = tl.multiple_of(x_ptr + start, 16) + offs
    c = tl.load(r)
    m = tl.cdiv(n, BLOCK)
    d = tl.load(x_ptr + offs * m)
    s = x_ptr
    if n > 3:
        s = y_ptr
    e = tl.load(s + offs)
    tl.store(y_ptr + offs, a + b + c + d + e)
    fpl.collect_end()


def test_pointer_bases_through_helpers_and_branches():
    got = {s["name"]: s["base_params"] for s in _sites(_bases_kernel) if s["kind"] != "value"}
    assert got == {
        "p": ["x_ptr"],
        "q": ["y_ptr"],
        "r": ["x_ptr", "start"],
        "x_ptr + offs * m": ["x_ptr"],
        "s + offs": ["x_ptr", "y_ptr"],
        "y_ptr + offs": ["y_ptr"],
    }


def test_site_table_roles():
    """The operands and values the numerical rules look at get check slots of their rule, on
    their statement (level >= 1); none at level 0."""
    tw = _rewrite.rewrite(planted.normalize_kernel, 1, 1, rules=frozenset(debugger.CHECKS))
    slots = tw.site_table()["check_slots"]
    by = {(k["rule"], k["subject"]) for k in slots}
    assert ("sqrt_negative", "ms + eps") in by and ("division_by_zero", "tl.sqrt(ms + eps)") in by
    assert ("nan_mem", "x") in by and ("inf_mem", "x") in by
    assert ("cast_overflow", "y") in by
    assert next(k for k in slots if k["rule"] == "cast_overflow")["target_dtype"] == "float16"
    # a computed value reads its inputs: the NaN origin rule lists them
    y = next(k for k in slots if k["rule"] == "nan" and k["subject"] == "y")
    assert "x" in y["reads"]
    tw = _rewrite.rewrite(planted.normalize_kernel, 0, 1, rules=frozenset(debugger.CHECKS))
    assert {k["rule"] for k in tw.site_table()["check_slots"]} == {"bounds"}


def test_sanitize_rewrite_whole_body():
    tw = _rewrite.rewrite(planted.early_exit_kernel, 0, 1, sanitize=True)
    assert tw.level == 0 and tw.addr_level == 1
    assert [(s.kind, s.name) for s in tw.sites] == [
        ("load", "x_ptr + offs"),
        ("store", "out_ptr + offs"),
    ]
    assert "if pid * BLOCK >= n: return" in tw.text
    with pytest.raises(_rewrite.MarkerError):
        _rewrite.rewrite(planted.early_exit_kernel, 1, 1)  # no markers: marker mode refuses it
    # markers are ignored: every access of the body is a site
    tw = _rewrite.rewrite(softmax.softmax_kernel, 0, 1, sanitize=True)
    assert [s.kind for s in tw.sites] == ["load", "store"]


@triton.jit
def _awkward_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if n > 1000:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs))  # noqa: E701
    v = tl.load(x_ptr + offs, mask=offs < n) if n > 1 else tl.zeros([BLOCK], dtype=tl.float32)
    tl.store(out_ptr + offs, v + 1.0, mask=offs < n)


@triton.jit
def _reserved_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    __fp_mine = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, __fp_mine, mask=offs < n)


def test_sanitize_observes_one_line_bodies_and_conditional_expressions(dbg):
    tw = _rewrite.rewrite(_awkward_kernel, 0, 1, sanitize=True)
    # the body on its `if` line, and the load in a conditional expression (a run-time condition:
    # recorded with the condition in its mask)
    assert [(s.kind, s.name) for s in tw.sites] == [
        ("load", "x_ptr + offs"),
        ("store", "out_ptr + offs"),
        ("load", "x_ptr + offs"),
        ("store", "out_ptr + offs"),
    ]
    assert tw.unobserved == []
    x = torch.randn(64)
    out = torch.zeros(64)
    dbg.configure(
        output_dir=dbg.get_config()["output_dir"], all_reports=True
    )  # a clean launch's report too
    dbg.activate(sanitize=True)
    _awkward_kernel[(1,)](x, out, 50, BLOCK=64)
    run = planted.one_run(dbg)
    assert run["findings"] == [] and torch.equal(out[:50], x[:50] + 1)
    cov = run["report"]["coverage"]
    assert (cov["memory_sites"], cov["memory_sites_observed"]) == (4, 4) and cov["unobserved"] == []


def test_sanitize_runs_unrewritable_kernels_unobserved(dbg):
    x = torch.randn(64)
    out = torch.zeros(64)
    dbg.activate(sanitize=True)
    with pytest.warns(RuntimeWarning, match="_reserved_kernel runs unobserved"):
        _reserved_kernel[(1,)](x, out, 64, BLOCK=64)
    assert torch.equal(out, x) and dbg.take_exported_runs() == []
    _reserved_kernel[(1,)](x, out, 64, BLOCK=64)  # remembered: no second attempt, no warning
    assert dbg.take_exported_runs() == []
    assert "_reserved_kernel" in debugger._sanitize_skipped


def test_describe_args_extents():
    big = torch.zeros(64)
    v = big[4:20].view(4, 4).t()
    (e,) = [
        a
        for a in _launch.describe_args(
            planted.scale_kernel, {"x_ptr": v, "out_ptr": 1, "n": 3}, "interpreter"
        )
        if a["kind"] == "tensor"
    ]
    assert e["name"] == "x_ptr" and e["shape"] == [4, 4] and e["strides"] == [1, 4]
    assert e["data_ptr"] == big.data_ptr() + 16 and e["element_size"] == 4
    assert e["storage_ptr"] == big.data_ptr() and e["storage_nbytes"] == 256


# ------------------------------------------------------------------------------------------------
# flagprism debug
# ------------------------------------------------------------------------------------------------

SCRIPT = textwrap.dedent(f"""\
    import sys
    sys.path.insert(0, {str(HERE)!r})
    from kernels import planted
    for name in sys.argv[1:]:
        planted.launch(planted.BY_NAME[name], "cpu")
    print("ran", len(sys.argv) - 1)
    """)


def _debug(cli: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, FLAGPRISM_PYTHON=sys.executable, TRITON_INTERPRET="1")
    return subprocess.run(
        [str(cli), "debug", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600
    )


def test_cli_sanitize_gates(cli, tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    r = _debug(
        cli, "--sanitize", "-o", "rep", str(script), "ok_vector_add", "ok_early_exit", cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    assert (
        "ran 2" in r.stdout
        and "2 launches: 2 instrumented" in r.stderr
        and "no findings" in r.stderr
    )
    assert str(tmp_path / "rep") in r.stderr
    r = _debug(
        cli,
        "--sanitize",
        "-o",
        "rep",
        str(script),
        "ok_vector_add",
        "missing_mask_last_block",
        "log_of_negative",
        cwd=tmp_path,
    )
    assert r.returncode == 3, r.stderr
    assert "1 finding:" in r.stderr and "out_of_bounds in missing_mask_kernel" in r.stderr
    assert "x_ptr" in r.stderr and "report: " in r.stderr


def test_cli_debug_reports(cli, tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    r = _debug(
        cli,
        "--level",
        "1",
        "--addr-level",
        "2",
        "-o",
        "rep",
        str(script),
        "zero_over_zero",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr  # without --sanitize findings do not change the status
    assert "3 findings:" in r.stderr and "division_by_zero in div_kernel" in r.stderr
    (j,) = [
        p for p in (tmp_path / "rep").glob("prog_div_kernel_*_run*.json") if "op_log" not in p.name
    ]
    rep = json.loads(j.read_text())
    assert rep["config"]["addr_level"] == 2 and len(rep["findings"]) == 3 and rep["statements"]
    r = _debug(cli, "--level", "3", str(script), cwd=tmp_path)
    assert r.returncode == 2 and "--level" in r.stderr
    r = _debug(cli, str(tmp_path / "missing.py"), cwd=tmp_path)
    assert r.returncode == 1 and "cannot read script" in r.stderr
    r = _debug(cli, str(script), "ok_vector_add", cwd=tmp_path)
    assert r.returncode == 0 and "no findings" in r.stderr
