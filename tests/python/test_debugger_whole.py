# SPDX-License-Identifier: Apache-2.0
"""The Debugger sees the whole kernel, on the Triton interpreter: statements and accesses inside
@triton.jit helpers (per call site, with the call chain), block pointers and tensor descriptors
(exact closed-form addresses), atomics, loads in loop headers, `while` tests and one-line bodies,
and the coverage account of every report. Each acceptance case runs a correct version (no
findings, unchanged results) and a planted bug (found at the right line and program), in marker
mode and in sanitize mode (kernels/whole.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )

from kernels import planted, tutorial_style, whole  # noqa: E402
from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: E402

import flagprism.debugger as debugger  # noqa: E402
from flagprism import _rewrite  # noqa: E402

pytestmark = pytest.mark.skipif(not debugger.is_available(), reason="flagprism._ext is not built")

WHOLE = Path(whole.__file__).resolve()


def _line_of(fn: Any, needle: str) -> int:
    """Absolute line of the first line of `fn`'s source containing `needle`."""
    import inspect

    lines, first = inspect.getsourcelines(fn.fn if hasattr(fn, "fn") else fn)
    for i, ln in enumerate(lines):
        if needle in ln:
            return first + i
    raise AssertionError(f"{needle!r} not in {fn}")


@pytest.fixture
def dbg(tmp_path):
    # every launch's report, also in sanitize mode (the tests read its coverage)
    debugger.configure(output_dir=str(tmp_path / "fp_debug"), all_reports=True)
    yield debugger
    debugger.deactivate()
    debugger.clear_exported_runs()
    debugger.reset_config()


def _run(dbg, fn, *, sanitize=False, level=1, addr_level=1):
    dbg.activate(level=level, addr_level=addr_level, sanitize=sanitize)
    result = fn()
    dbg.deactivate()
    run = planted.one_run(dbg)
    assert run["complete"], run["txt"]
    return run, result


def _kinds(run: dict[str, Any]) -> list[str]:
    return sorted(f["kind"] for f in run["findings"])


def _full_coverage(run: dict[str, Any]) -> None:
    cov = run["report"]["coverage"]
    assert cov["memory_sites"] == cov["memory_sites_observed"] > 0, cov
    assert cov["unobserved"] == [], cov


# ------------------------------------------------------------------------------------------------
# A helper that loads without a mask
# ------------------------------------------------------------------------------------------------


def _helper_case(buggy: bool):
    n, block = 100, 64
    x = planted.outside(n, "cpu", fill=planted._randn(n))
    out = torch.zeros(n)
    whole.helper_kernel[(2,)](x, out, n, BLOCK=block, BUGGY=buggy)
    return x, out


@pytest.mark.parametrize("sanitize", [False, True])
def test_helper_correct_version(dbg, sanitize):
    run, (x, out) = _run(dbg, lambda: _helper_case(False), sanitize=sanitize)
    assert run["findings"] == []
    assert torch.equal(out, x * 2.0)
    _full_coverage(run)
    # both helpers are twinned (constexpr branches), once per call site
    frames = run["report"]["frames"]
    assert [f["function"] for f in frames] == ["_scaled_load_nomask", "_scaled_load"]


@pytest.mark.parametrize("sanitize", [False, True])
def test_helper_without_mask_found_at_the_helpers_line(dbg, sanitize):
    run, _ = _run(dbg, lambda: _helper_case(True), sanitize=sanitize)
    (f,) = run["findings"]
    assert f["kind"] == "out_of_bounds" and f["param"] == "x_ptr" and f["param_known"]
    assert f["location"] == "outside_allocations" and f["access"] == "load"
    assert f["line"] == _line_of(whole._scaled_load_nomask, "BUG") and Path(f["file"]) == WHOLE
    assert f["program"] == [1, 0, 0] and f["program_count"] == 1
    assert f["function"] == "_scaled_load_nomask"
    (call,) = f["chain"]
    assert (
        call["line"] == _line_of(whole.helper_kernel, "y = _scaled_load_nomask")
        and call["function"] == "_scaled_load_nomask"
    )
    assert f["bytes_past_end"] == (128 - 100) * 4
    text = Path(run["txt"]).read_text()
    want = (
        f"out_of_bounds at whole.py:{call['line']} _scaled_load_nomask -> whole.py:{f['line']}: "
        "v = tl.load(ptr + offs)"
    )
    assert want in text


def test_helper_statements_follow_the_call_with_values(dbg):
    run, (x, out) = _run(dbg, lambda: _helper_case(False))
    stmts = run["report"]["statements"]
    call_line = _line_of(whole.helper_kernel, "y = _scaled_load(")
    idx = next(i for i, s in enumerate(stmts) if s["line"] == call_line and s["frame"] == 0)
    inner = stmts[idx + 1]
    assert inner["function"] == "_scaled_load" and inner["frame"] > 0
    assert inner["line"] == _line_of(whole._scaled_load, "v = tl.load")
    assert [c["line"] for c in inner["chain"]] == [call_line]
    (acc,) = inner["memory"]
    assert acc["access"] == "load" and acc["form"] == "pointer"
    a0 = acc["instances"][0]["address_summary"]
    assert a0["first_addr"] == x.data_ptr() and a0["active_lane_count"] == 64
    (v,) = inner["results"]
    assert v["name"] == "v" and v["instances"][1]["summary"]["element_count"] == 64
    # reads of the helper's parameters stand for the caller's variables
    reads = {r["name"]: r for r in inner["reads"]}
    assert reads["offs"]["frame"] == 0 and reads["offs"]["line"] == _line_of(
        whole.helper_kernel, "offs ="
    )


# ------------------------------------------------------------------------------------------------
# A block-pointer load without boundary_check on a ragged edge
# ------------------------------------------------------------------------------------------------


def _bp_case(check: bool):
    m, n, bm, bn = 10, 32, 8, 32
    a = planted.inside(m * n, "cpu", fill=planted._randn(m * n)).view(m, n)
    out = torch.zeros(m, n)
    whole.bp_rows_kernel[(2,)](a, out, m, n, a.stride(0), BM=bm, BN=bn, CHECK=check)
    return a, out


@pytest.mark.compat("block-pointers")  # tl.make_block_ptr (removed in Triton 3.9)
@pytest.mark.parametrize("sanitize", [False, True])
def test_block_pointer_correct_version(dbg, sanitize):
    run, (a, out) = _run(dbg, lambda: _bp_case(True), sanitize=sanitize)
    assert run["findings"] == [] and torch.equal(out, a)
    _full_coverage(run)


@pytest.mark.compat("block-pointers")  # tl.make_block_ptr (removed in Triton 3.9)
@pytest.mark.parametrize("sanitize", [False, True])
def test_block_pointer_without_boundary_check_found(dbg, sanitize):
    run, (a, out) = _run(dbg, lambda: _bp_case(False), sanitize=sanitize)
    assert torch.equal(out, a)  # the store checks its rows: the result is unchanged
    (f,) = run["findings"]
    assert (
        f["kind"] == "out_of_bounds" and f["param"] == "a_ptr" and f["location"] == "inside_storage"
    )
    assert f["line"] == _line_of(whole.bp_rows_kernel, "BUG") and f["program"] == [1, 0, 0]
    # program 1 reads rows 8..15 of a 10-row tensor: 6 rows of 32 floats past the end
    assert f["bytes_past_end"] == 6 * 32 * 4
    assert "through the block pointer" in f["message"]


@pytest.mark.compat("block-pointers")  # tl.make_block_ptr (removed in Triton 3.9)
def test_block_pointer_summary_is_exact(dbg):
    """Closed form vs. every lane: the level-2 dump of the same access gives the same summary."""
    run1, (a1, _) = _run(dbg, lambda: _bp_case(True))
    run2, (a2, _) = _run(dbg, lambda: _bp_case(True), addr_level=2)

    def loads(run, base):
        st = next(s for s in run["report"]["statements"] if "boundary_check=(0, 1)" in s["source"])
        (m,) = st["memory"]
        out = []
        for i in m["instances"]:
            a = dict(i["address_summary"])
            for k in ("first_addr", "last_addr", "min_addr", "max_addr"):
                a[k] -= base
            out.append(a)
        return out

    s0, s1 = loads(run1, a1.data_ptr())
    assert s0["first_addr"] == 0 and s0["last_addr"] == (7 * 32 + 31) * 4
    assert s0["active_lane_count"] == 256 and s1["active_lane_count"] == 2 * 32
    assert s1["first_addr"] == 8 * 32 * 4 and s1["max_addr"] == (9 * 32 + 31) * 4
    assert loads(run1, a1.data_ptr()) == loads(run2, a2.data_ptr())


# ------------------------------------------------------------------------------------------------
# An atomic histogram with an out-of-range bin
# ------------------------------------------------------------------------------------------------


def _hist_case(range_check: bool):
    nb = 8
    x = torch.randint(0, nb, (100,), generator=planted._gen(3), dtype=torch.int32)
    x[70] = nb  # out of range
    bins = planted.inside(nb, "cpu", dtype=torch.float32).to(torch.int32) if False else None
    parent = torch.zeros(16 + nb + 64, dtype=torch.int32)
    bins = parent[16 : 16 + nb]
    whole.hist_kernel[(2,)](x, bins, 100, NB=nb, BLOCK=64, RANGE_CHECK=range_check)
    return x, bins, parent


@pytest.mark.parametrize("sanitize", [False, True])
def test_histogram_correct_version(dbg, sanitize):
    run, (x, bins, parent) = _run(dbg, lambda: _hist_case(True), sanitize=sanitize)
    assert run["findings"] == []
    assert torch.equal(bins, torch.bincount(x[x < 8], minlength=8).to(torch.int32))
    _full_coverage(run)


@pytest.mark.parametrize("sanitize", [False, True])
def test_histogram_out_of_range_bin_found(dbg, sanitize):
    run, (x, bins, parent) = _run(dbg, lambda: _hist_case(False), sanitize=sanitize)
    # the checked run does not perform the access it reports (check_continue="suppress")
    assert int(parent[16 + 8]) == 0
    (f,) = run["findings"]
    assert f["lanes_out"] == 1 and f["suppressed"] == 1
    assert f["kind"] == "out_of_bounds" and f["access"] == "atomic" and f["op"] == "add"
    assert (
        f["param"] == "bins_ptr" and f["location"] == "inside_storage" and f["bytes_past_end"] == 4
    )
    assert f["line"] == _line_of(whole.hist_kernel, "tl.atomic_add") and f["program"] == [1, 0, 0]
    assert f["message"].startswith("tl.atomic_add on `bins_ptr + v` reads and writes")


@pytest.mark.parametrize("sanitize", [False, True])
def test_histogram_check_continue_run_performs_the_access(dbg, sanitize):
    """check_continue="run" keeps the original behaviour: the atomic lands past the last bin,
    and the finding says nothing was suppressed."""
    dbg.configure(output_dir=dbg.get_config()["output_dir"], all_reports=True, check_continue="run")
    run, (x, bins, parent) = _run(dbg, lambda: _hist_case(False), sanitize=sanitize)
    assert int(parent[16 + 8]) == 1
    (f,) = run["findings"]
    assert f["lanes_out"] == 1 and f["suppressed"] == 0


# ------------------------------------------------------------------------------------------------
# Tensor descriptors with a shape larger than their tensor
# ------------------------------------------------------------------------------------------------


def _host_desc_case(extra: int):
    m, n, bm, bn = 20, 16, 16, 16
    a = planted.inside(m * n, "cpu", off=16, pad=2048, fill=planted._randn(m * n)).view(m, n)
    out = torch.zeros(m, n)
    ad = TensorDescriptor(a, [m + extra, n], [n, 1], [bm, bn])
    od = TensorDescriptor.from_tensor(out, [bm, bn])
    whole.host_desc_kernel[(2,)](ad, od, BM=bm)
    return a, out


@pytest.mark.parametrize("sanitize", [False, True])
def test_host_descriptor_correct_version(dbg, sanitize):
    run, (a, out) = _run(dbg, lambda: _host_desc_case(0), sanitize=sanitize)
    assert run["findings"] == [] and torch.equal(out, a * 2.0)
    _full_coverage(run)
    if not sanitize:
        st = next(s for s in run["report"]["statements"] if "a_desc.load" in s["source"])
        (m,) = st["memory"]
        assert m["form"] == "tensor_descriptor"
        s0, s1 = (i["address_summary"] for i in m["instances"])
        # TMA semantics: block 1 has rows 16..31 of a 20-row descriptor, 4 inside its shape
        assert s0["active_lane_count"] == 256 and s1["active_lane_count"] == 4 * 16
        assert s1["first_addr"] == a.data_ptr() + 16 * 16 * 4 and s1["lane_count"] == 256


@pytest.mark.parametrize("sanitize", [False, True])
def test_host_descriptor_larger_than_its_tensor_found(dbg, sanitize):
    run, (a, out) = _run(dbg, lambda: _host_desc_case(8), sanitize=sanitize)
    by_kind = {f["kind"]: f for f in run["findings"]}
    assert sorted(by_kind) == ["descriptor_extent", "out_of_bounds"]
    d = by_kind["descriptor_extent"]
    assert (
        d["param"] == "a_desc"
        and d["bytes_past_end"] == 8 * 16 * 4
        and d["location"] == "inside_storage"
    )
    assert d["line"] == _line_of(whole.host_desc_kernel, "a_desc.load")
    assert "shape [28, 16], strides [16, 1]" in d["message"]
    o = by_kind["out_of_bounds"]
    assert (
        o["param"] == "a_desc" and o["program"] == [1, 0, 0] and o["bytes_past_end"] == 8 * 16 * 4
    )


def _dev_desc_case(extra: int):
    m, n, bm, bn = 20, 16, 16, 16
    a = planted.inside(m * n, "cpu", off=16, pad=2048, fill=planted._randn(m * n)).view(m, n)
    out = torch.zeros(m, n)
    whole.dev_desc_kernel[(2,)](a, out, m, n, EXTRA=extra, BM=bm, BN=bn)
    return a, out


@pytest.mark.parametrize("sanitize", [False, True])
def test_device_descriptor_correct_version(dbg, sanitize):
    run, (a, out) = _run(dbg, lambda: _dev_desc_case(0), sanitize=sanitize)
    assert run["findings"] == [] and torch.equal(out, a + 1.0)
    _full_coverage(run)


@pytest.mark.parametrize("sanitize", [False, True])
def test_device_descriptor_larger_than_its_tensor_found(dbg, sanitize):
    run, _ = _run(dbg, lambda: _dev_desc_case(8), sanitize=sanitize)
    by_kind = {f["kind"]: f for f in run["findings"]}
    assert sorted(by_kind) == ["descriptor_extent", "out_of_bounds"]
    d = by_kind["descriptor_extent"]
    assert d["line"] == _line_of(whole.dev_desc_kernel, "a_desc = tl.make_tensor_descriptor")
    assert d["param"] == "a_ptr" and d["bytes_past_end"] == 8 * 16 * 4 and d["program_count"] == 2
    assert d["access"] == "descriptor"


# ------------------------------------------------------------------------------------------------
# A NaN born inside a helper (level 1, markers around the call only)
# ------------------------------------------------------------------------------------------------


def _nan_case(planted_zero: bool):
    n = 100
    x = torch.rand(n, generator=planted._gen(5)) + 1
    d = torch.rand(n, generator=planted._gen(6)) + 1
    if planted_zero:
        x[5] = 0.0
        d[5] = 0.0
    out = torch.zeros(n)
    whole.nan_helper_kernel[(2,)](x, d, out, n, BLOCK=64)
    return x, d, out


def test_nan_in_helper_correct_version(dbg):
    run, (x, d, out) = _run(dbg, lambda: _nan_case(False))
    assert run["findings"] == [] and torch.allclose(out, x / d * 2.0)


def test_nan_born_inside_the_helper_is_blamed_on_the_helper(dbg):
    run, _ = _run(dbg, lambda: _nan_case(True))
    by_kind = {f["kind"]: f for f in run["findings"]}
    assert sorted(by_kind) == ["division_by_zero", "nan_origin"]
    nan = by_kind["nan_origin"]
    line = _line_of(whole._normalize, "r = x / d")
    assert nan["line"] == line and nan["subject"] == "r" and nan["function"] == "_normalize"
    assert nan["program"] == [0, 0, 0] and nan["program_count"] == 1 and nan["count"] == 1
    assert [c["line"] for c in nan["chain"]] == [
        _line_of(whole.nan_helper_kernel, "y = _normalize")
    ]
    dz = by_kind["division_by_zero"]
    assert dz["line"] == line and dz["subject"] == "d"


# ------------------------------------------------------------------------------------------------
# A lock in a `while` header, helpers without a value, loads the rewriter used to skip
# ------------------------------------------------------------------------------------------------


def _lock_case():
    n = 32
    xs = torch.randn(3, n, generator=planted._gen(7))
    out = torch.zeros(n)
    lock = torch.zeros(1, dtype=torch.int32)
    whole.lock_kernel[(3,)](xs, out, lock, n, BLOCK=32)
    return xs, out, lock


def test_lock_in_while_header_observed(dbg):
    run, (xs, out, lock) = _run(dbg, _lock_case, sanitize=True)
    assert torch.allclose(out, xs.sum(0), atol=1e-5) and int(lock) == 0
    assert run["findings"] == []
    _full_coverage(run)
    tw = _rewrite.rewrite(whole.lock_kernel, 0, 1, sanitize=True)
    ops = sorted(s.info.get("op") for s in tw.sites if s.kind == "atomic")
    assert ops == ["cas", "xchg"]
    # the helper's load and store are memory sites of their own
    assert {s.name for s in tw.sites if s.kind in ("load", "store")} >= {"out_ptr + offs"}


def test_lock_records_per_iteration(dbg):
    """The `while` test is recorded before the loop and at the end of each iteration: one record
    per evaluation of the atomic_cas, and the loop's result is unchanged."""
    run, (xs, out, lock) = _run(dbg, _lock_case)
    st = next(s for s in run["report"]["statements"] if s["source"].startswith("while"))
    (m,) = st["memory"]
    assert m["access"] == "atomic" and m["op"] == "cas"
    per_program = {}
    for i in m["instances"]:
        per_program.setdefault(i["program"][0], []).append(i["execution"])
    # on the interpreter programs run one after another: each takes the lock at once
    assert all(v == [0] for v in per_program.values()) and len(per_program) == 3


@pytest.mark.compat("runtime-loops")
def test_loop_header_and_one_line_body_observed(dbg):
    tw = _rewrite.rewrite(whole.awkward_kernel, 1, 1)
    kinds = [(s.kind, s.name) for s in tw.sites if s.kind != "value"]
    assert kinds == [
        ("load", "n_ptr"),
        ("load", "x_ptr + i * BLOCK + offs"),
        ("load", "n_ptr"),
        ("store", "out_ptr + offs"),
        ("store", "out_ptr + BLOCK + offs"),
    ]
    (u,) = tw.unobserved
    assert u.what == "memory" and u.line == _line_of(whole.awkward_kernel, "if tl.load(n_ptr) > 1")
    assert "no line before it" in u.reason

    def case():
        x = torch.randn(3 * 16)
        n = torch.tensor([3], dtype=torch.int32)
        out = torch.zeros(32)
        whole.awkward_kernel[(1,)](x, n, out, BLOCK=16)
        return x, out

    run, (x, out) = _run(dbg, case)
    want = x.view(3, 16).sum(0)
    assert torch.allclose(out[:16], want) and torch.allclose(out[16:], want)
    cov = run["report"]["coverage"]
    assert (cov["memory_sites"], cov["memory_sites_observed"]) == (6, 5)
    (e,) = cov["unobserved"]
    assert e["line"] == u.line and e["what"] == "memory" and e["source"] == "tl.load(n_ptr)"
    text = Path(run["txt"]).read_text()
    assert "COVERAGE: 5 of 6 memory sites" in text and "not observed (memory)" in text


# ------------------------------------------------------------------------------------------------
# Reports: op log frames, sizing through helpers, unfollowed block pointers
# ------------------------------------------------------------------------------------------------


def test_op_log_attributes_helper_ops_to_helper_statements(dbg):
    run, _ = _run(dbg, lambda: _helper_case(False))
    if not run["op_log_json"]:
        pytest.skip("no op log (TTIR unavailable)")
    log = json.loads(Path(run["op_log_json"]).read_text())
    if not log["available"]:
        pytest.skip(f"op log unavailable: {log['unavailable_reason']}")
    line = _line_of(whole._scaled_load, "v = tl.load")
    loads = [o for o in log["ops"] if o["op"] == "tt.load" and o["frame"] > 0]
    assert loads and all(
        o["statement"] is not None and o["statement"]["line"] == line for o in loads
    )
    assert all(Path(o["position"]["file"]) == WHOLE for o in loads)


@pytest.mark.compat("block-pointers")  # tl.make_block_ptr (removed in Triton 3.9)
def test_helper_loop_sized_from_the_call(dbg):
    """A loop inside a helper whose bounds are the helper's parameters is sized from the call's
    arguments (no 64-iteration allowance, no overflow)."""
    from kernels import whole as w

    run, _ = _run(dbg, lambda: _bp_case(True))
    assert run["slots_per_program"] < 20  # no LOOP_TRIPS allowance in this kernel
    assert w is whole


@pytest.mark.compat("block-pointers")  # tl.make_block_ptr (removed in Triton 3.9)
def test_unfollowed_block_pointer_listed_unobserved(dbg, tmp_path):
    src = tmp_path / "unfollowed.py"
    src.write_text("""
import triton
import triton.language as tl
import flagprism.language as fpl


@triton.jit
def make(a_ptr, M, N, BM: tl.constexpr):
    return tl.make_block_ptr(a_ptr, shape=(M, N), strides=(N, 1), offsets=(0, 0), block_shape=(BM, BM),
                             order=(1, 0))


@triton.jit
def k(a_ptr, out_ptr, M, N, BM: tl.constexpr):
    fpl.collect_start()
    bp = make(a_ptr, M, N, BM)
    t = tl.load(bp, boundary_check=(0, 1))
    tl.store(out_ptr + tl.arange(0, BM)[:, None] * BM + tl.arange(0, BM)[None, :], t)
    fpl.collect_end()
""")
    import importlib.util

    spec = importlib.util.spec_from_file_location("unfollowed", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    a = torch.randn(8, 8)
    out = torch.zeros(64)
    run, _ = _run(dbg, lambda: mod.k[(1,)](a, out, 8, 8, BM=8))
    assert torch.equal(out.view(8, 8), a)
    cov = run["report"]["coverage"]
    assert (cov["memory_sites"], cov["memory_sites_observed"]) == (2, 1)
    (e,) = cov["unobserved"]
    assert e["line"] == 17 and "block pointer" in e["reason"]


# ------------------------------------------------------------------------------------------------
# The tutorial-style kernels at small sizes (their GPU versions: tests/gpu/test_whole_gpu.py)
# ------------------------------------------------------------------------------------------------

#: the tutorial-style kernels that loop over runtime bounds (skipped where the known-bad table
#: stops such loops on the interpreter: flagprism.compat, "runtime-loops")
RUNTIME_LOOP_KERNELS = ("attn_fwd", "attn_bwd", "matmul_tma")

TUTORIAL = {
    "attn_fwd": (
        lambda pl: tutorial_style.make_attn_fwd(
            "cpu",
            z=1,
            h=2,
            n_ctx=64,
            head_dim=16,
            block_m=16,
            block_n=16,
            overrun=pl,
            dtype=torch.float32,
        ),
        [
            ("out_of_bounds", "_attn_fwd_inner", "k = tl.load(K_block_ptr)", "K"),
            ("out_of_bounds", "_attn_fwd_inner", "v = tl.load(V_block_ptr)", "V"),
        ],
    ),
    "attn_bwd": (
        lambda pl: tutorial_style.make_attn_bwd(
            "cpu", z=1, h=2, n_ctx=32, head_dim=16, block=16, overrun=pl, dtype=torch.float32
        ),
        [
            ("out_of_bounds", "_attn_bwd_dkdv", "qT = tl.load(qT_ptrs)", "Q"),
            ("out_of_bounds", "_attn_bwd_dkdv", "m = tl.load(M + offs_m)", "M"),
            ("out_of_bounds", "_attn_bwd_dkdv", "do = tl.load(do_ptrs)", "DO"),
            ("out_of_bounds", "_attn_bwd_dkdv", "Di = tl.load(D + offs_m)", "D"),
        ],
    ),
    "matmul_tma": (
        lambda pl: tutorial_style.make_matmul(
            "cpu", m=64, n=64, k=64, planted=pl, num_sms=2, block_m=32, block_n=32, block_k=16
        ),
        [
            ("out_of_bounds", "matmul_tma_persistent_kernel", "a = a_desc.load", "a_desc"),
            ("descriptor_extent", "matmul_tma_persistent_kernel", "a = a_desc.load", "a_desc"),
        ],
    ),
    "layer_norm_bwd": (
        lambda pl: tutorial_style.make_layer_norm_bwd("cpu", m=32, n=64, group=4, count_off=pl),
        [
            ("out_of_bounds", "layer_norm_bwd_dx_kernel", "count = tl.load(Count)", "Lock"),
            ("out_of_bounds", "layer_norm_bwd_dx_kernel", "tl.atomic_xchg(Count, 1)", "Lock"),
        ],
    ),
}


def _source_line(fn_name: str, needle: str) -> int:
    return _line_of(getattr(tutorial_style, fn_name), needle)


@pytest.mark.parametrize("sanitize", [True, False])
@pytest.mark.parametrize(
    "name",
    [
        # the attention forward pass walks K and V with block pointers (removed in Triton 3.9);
        # attention and the TMA matmul loop over runtime bounds
        pytest.param(
            n,
            marks=[
                *([pytest.mark.compat("block-pointers")] if n == "attn_fwd" else []),
                *([pytest.mark.compat("runtime-loops")] if n in RUNTIME_LOOP_KERNELS else []),
            ],
        )
        for n in TUTORIAL
    ],
)
@pytest.mark.slow
def test_tutorial_kernels_correct_and_planted(dbg, name, sanitize):
    make, expect = TUTORIAL[name]
    launch, check = make(False)
    dbg.activate(level=1, addr_level=1, sanitize=sanitize)
    launch()
    dbg.deactivate()
    check()
    runs = dbg.take_exported_runs()
    assert runs and all(r["complete"] and r["findings"] == [] for r in runs), [
        r["findings"] for r in runs
    ]
    for r in runs:
        _full_coverage(r)
    launch, _check = make(True)
    dbg.activate(level=1, addr_level=1, sanitize=sanitize)
    launch()
    dbg.deactivate()
    found = [
        (f["kind"], f["function"], f["line"], f["param"])
        for r in dbg.take_exported_runs()
        for f in r["findings"]
    ]
    want = [(k, fn, _source_line(fn, needle), p) for k, fn, needle, p in expect]
    assert sorted(found) == sorted(want)


# ------------------------------------------------------------------------------------------------
# Conditional expressions
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("has_b", [True, False])
def test_conditional_expressions_observed(dbg, has_b):
    n, block = 50, 64
    tw = _rewrite.rewrite(whole.ifexp_kernel, 1, 1)
    assert tw.unobserved == []
    assert [s.name for s in tw.sites if s.kind == "load"] == [
        "x_ptr + offs",
        "b_ptr + offs",
        "x_ptr + BLOCK + offs",
    ]

    def case(pos: bool):
        x = planted.outside(
            2 * block, "cpu", fill=planted._randn(2 * block).abs() * (1 if pos else -1)
        )
        b = torch.randn(n) if has_b else None
        out = torch.zeros(n)
        whole.ifexp_kernel[(1,)](x, b, out, n, HAS_B=has_b, BLOCK=block)
        return x, b, out

    for pos in (True, False):
        run, (x, b, out) = _run(dbg, lambda: case(pos))
        want = x[:n] + (b if has_b else 0) + (x[block : block + n] if pos else x[:n])
        assert torch.allclose(out, want) and run["findings"] == []
        _full_coverage(run)
        loads = {
            s["source"].split(" = ")[0]: s["memory"]
            for s in run["report"]["statements"]
            if s["memory"]
        }
        # the run-time branch: recorded with its condition in the mask (no active lane when not taken)
        (y,) = [m for m in loads["y"] if m["name"] == "x_ptr + BLOCK + offs"]
        assert y["instances"][0]["address_summary"]["active_lane_count"] == (n if pos else 0)
        # the compile-time branch: records only when it is compiled in
        (bl,) = loads["b"]
        assert bl["instance_count"] == (1 if has_b else 0)


def test_descriptor_gather_summary(dbg):
    """A descriptor gather: rows from an index block, TMA semantics for a row outside the shape
    (zero-filled, an inactive lane row, not an out-of-bounds access)."""
    m, n, r = 12, 16, 8
    a = torch.randn(m, n)
    idx = torch.tensor([0, 3, 5, 11, 2, 12, 7, 1], dtype=torch.int32)  # 12: one past the last row
    out = torch.full((r, n), 7.0)
    run, _ = _run(dbg, lambda: whole.gather_kernel[(1,)](a, idx, out, m, n, R=r, BN=n))
    want = torch.cat([a, torch.zeros(1, n)])[idx.long()]
    assert torch.equal(out, want)
    assert run["findings"] == []
    _full_coverage(run)
    st = next(s for s in run["report"]["statements"] if "desc.gather" in s["source"])
    (g,) = st["memory"]
    s0 = g["instances"][0]["address_summary"]
    assert g["form"] == "tensor_descriptor" and s0["active_lane_count"] == (r - 1) * n
    assert s0["lanes_outside_shape"] == n and s0["outside_shape"] == "zero_fill"
    assert s0["min_addr"] == a.data_ptr() and s0["max_addr"] == a.data_ptr() + (11 * n + n - 1) * 4
    assert s0["first_addr"] == a.data_ptr()


def test_descriptor_scatter_summary(dbg):
    """A descriptor scatter: a row index outside the shape is dropped (TMA), not written."""
    m, n, r = 12, 16, 8
    a = torch.zeros(m, n)
    idx = torch.tensor([0, 3, 5, 11, 2, 12, 7, 1], dtype=torch.int32)
    src = torch.randn(r, n)
    run, _ = _run(dbg, lambda: whole.scatter_kernel[(1,)](a, idx, src, m, n, R=r, BN=n))
    want = torch.zeros(m, n)
    for i, row in enumerate(idx.tolist()):
        if row < m:
            want[row] = src[i]
    assert torch.equal(a, want) and run["findings"] == []
    st = next(s for s in run["report"]["statements"] if "desc.scatter" in s["source"])
    (sc,) = st["memory"]
    s0 = sc["instances"][0]["address_summary"]
    assert sc["access"] == "store" and s0["active_lane_count"] == (r - 1) * n
    assert (
        s0["outside_shape"] == "dropped" and s0["last_addr"] == a.data_ptr() + (1 * n + n - 1) * 4
    )
    (v,) = st["results"]  # the value the scatter writes
    assert v["name"] == "v"
