# SPDX-License-Identifier: Apache-2.0
"""The warp count of the Debugger's twin (python/flagprism/_warps.py, docs/guide/debugger.md "Warps of
the twin"): the static scan that says whether a kernel's results can depend on its warp count,
the choice for a launch, the twin_num_warps option, and what the reports say (Triton
interpreter, where num_warps changes nothing: the decision is made and recorded all the same)."""

from __future__ import annotations

import json
import os

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )

import _refdecode as ref  # noqa: E402
from kernels import matmul, softmax, tuned, vector_add, warps  # noqa: E402

import flagprism.debugger as debugger  # noqa: E402
from flagprism import _warps  # noqa: E402

ALLOWED = [
    vector_add.add_kernel,
    vector_add.add_plain,
    warps.helper_elementwise_kernel,
    warps.copy2d_kernel,
    tuned.heur_scale.fn,
]
DENIED = [
    (softmax.softmax_kernel, "tl.max"),
    (matmul.matmul_kernel, "tl.dot"),
    (warps.helper_reduce_kernel, "_outer -> _row_total"),
    (warps.method_sum_kernel, ".sum()"),
    (warps.atomic_kernel, "tl.atomic_add"),
    (warps.asm_kernel, "tl.inline_asm_elementwise"),
    (warps.intrinsic_kernel, "tl.extra.cuda.num_warps"),
    (warps.reorder_kernel, "can_reorder"),
    (warps.callee_param_kernel, "FN"),
    (warps.tuned_sum_kernel.fn, "tl.sum"),
]


def test_scan_two_float_products_keep_the_warps():
    """a*c - b*s contracts into a fused multiply-add on either product, depending on the code
    generated for the layout (Liger's RoPE rounded differently at 1 warp on the H200); products
    of integers (index arithmetic) and one product meeting an add do not count."""
    s = _warps.scan(warps.rotate_kernel, frozenset({"n"}), frozenset({"x_ptr", "y_ptr"}))
    assert not s.allowed and "two floating-point products" in s.reason and "xc - y * s" in s.reason
    s = _warps.scan(
        warps.index_products_kernel, frozenset({"stride", "n"}), frozenset({"x_ptr", "out_ptr"})
    )
    assert s.allowed, s.reason
    # a scalar parameter not known to be an integer is typed as floating point
    s = _warps.scan(warps.index_products_kernel, frozenset({"n"}), frozenset({"x_ptr", "out_ptr"}))
    assert s.allowed, s.reason  # row * stride * 2 + arange * 2: one unknown product only


@pytest.mark.parametrize("kernel", ALLOWED, ids=lambda k: k.fn.__name__)
def test_scan_allows_elementwise(kernel):
    s = _warps.scan(kernel)
    assert s.allowed, s.reason


@pytest.mark.parametrize(
    "kernel,why", DENIED, ids=lambda k: getattr(getattr(k, "fn", None), "__name__", str(k))
)
def test_scan_denies_warp_dependent(kernel, why):
    s = _warps.scan(kernel)
    assert not s.allowed
    assert why in s.reason, s.reason
    # the reason names the function and the file:line of the call
    assert ".py:" in s.reason, s.reason


def test_decide_choices():
    d = _warps.decide(vector_add.add_kernel, None, {"BLOCK": 1024}, "auto")
    assert (d["kernel"], d["twin"]) == (4, 1)
    assert _warps.decide(vector_add.add_kernel, 8, {"BLOCK": 1024}, "auto")["twin"] == 1
    # elements per thread capped: 4096 elements need 4 warps at 32 per thread
    assert _warps.decide(vector_add.add_kernel, 8, {"BLOCK": 4096}, "auto")["twin"] == 4
    assert _warps.decide(vector_add.add_kernel, 2, {"BLOCK": 4096}, "auto")["twin"] == 2
    # 2-D blocks count the product of their extents
    assert _warps.decide(warps.copy2d_kernel, 4, {"BM": 32, "BN": 64}, "auto")["twin"] == 2
    d = _warps.decide(warps.copy2d_kernel, 4, {"BM": 64, "BN": 128}, "auto")
    assert d["twin"] == 4 and "8192" in d["reason"]
    # block sizes not known on the host: keep the kernel's
    d = _warps.decide(vector_add.add_kernel, 4, {}, "auto")
    assert d["twin"] == 4 and "not known" in d["reason"]
    # "same" and an explicit count
    assert _warps.decide(vector_add.add_kernel, 4, {"BLOCK": 1024}, "same")["twin"] == 4
    assert _warps.decide(vector_add.add_kernel, 4, {"BLOCK": 1024}, 2)["twin"] == 2
    assert _warps.decide(vector_add.add_kernel, 4, {"BLOCK": 1 << 16}, 2)["twin"] == 2
    # a register cap keeps the kernel's warps under "auto"
    d = _warps.decide(vector_add.add_kernel, 4, {"BLOCK": 1024}, "auto", maxnreg=64)
    assert d["twin"] == 4 and "maxnreg=64" in d["reason"]
    # an explicit count never applies where results may change
    d = _warps.decide(softmax.softmax_kernel, 8, {"BLOCK": 128}, 1)
    assert d["twin"] == 8 and d["reason"].startswith("kept")


def test_config_knob_and_validation(dbg):
    assert debugger.get_config()["twin_num_warps"] == "auto"
    debugger.configure(twin_num_warps="same")
    assert debugger.get_config()["twin_num_warps"] == "same"
    debugger.configure(twin_num_warps=2)
    assert debugger.get_config()["twin_num_warps"] == 2
    debugger.reset_config()
    assert debugger.get_config()["twin_num_warps"] == "auto"
    for bad in ("fast", "", 3, 0, 64, -1, True, 1.0, None):
        with pytest.raises(ValueError, match="twin_num_warps"):
            debugger.configure(twin_num_warps=bad)
    assert debugger.get_config()["twin_num_warps"] == "auto"  # a refused call changes nothing


def _one_run(dbg):
    runs = dbg.take_exported_runs()
    assert len(runs) == 1
    return runs[0]


def test_reports_record_the_decision(dbg):
    n = 300
    x = torch.randn(n)
    out = torch.empty(n)
    dbg.activate(level=1, addr_level=1)
    vector_add.add_kernel[(3,)](x, x, out, n, BLOCK=128)
    run = _one_run(dbg)
    assert torch.equal(out, x + x)
    nw = run["num_warps"]
    assert (nw["kernel"], nw["twin"]) == (4, 1)
    assert ref.launch_info(run)["num_warps"] == nw
    if run["report"] is not None:  # the native report writer is there
        assert run["report"]["kernel"]["num_warps"] == nw
        with open(run["txt"], encoding="utf-8") as f:
            assert f"num_warps:       kernel 4, twin 1 ({nw['reason']})" in f.read()
    dbg.configure(output_dir=dbg.get_config()["output_dir"], twin_num_warps="same")
    vector_add.add_kernel[(3,)](x, x, out, n, BLOCK=128, num_warps=2)
    nw = _one_run(dbg)["num_warps"]
    assert (nw["kernel"], nw["twin"]) == (2, 2)


def test_softmax_keeps_warps(dbg):
    x = torch.randn(4, 100)
    out = torch.empty_like(x)
    dbg.activate(level=1, addr_level=1)
    softmax.softmax_kernel[(4,)](out, x, x.stride(0), out.stride(0), 100, BLOCK=128, num_warps=8)
    nw = _one_run(dbg)["num_warps"]
    assert (nw["kernel"], nw["twin"]) == (8, 8)
    assert "tl.max" in nw["reason"]
    torch.testing.assert_close(out, torch.softmax(x, dim=1))


def test_autotune_config_warps(dbg):
    n = 200
    x = torch.randn(n)
    out = torch.empty(n)
    dbg.activate(level=1, addr_level=1)
    warps.tuned_add_kernel[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, out, n)
    nw = _one_run(dbg)["num_warps"]
    assert (nw["kernel"], nw["twin"]) == (8, 1)  # the Config's num_warps, reduced
    torch.testing.assert_close(out, x + 1.0)
    warps.tuned_sum_kernel[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, out, n)
    nw = _one_run(dbg)["num_warps"]
    assert (nw["kernel"], nw["twin"]) == (2, 2)


def test_sanitize_and_level2_decide_too(dbg):
    n = 300
    x = torch.randn(n)
    out = torch.empty(n)
    dbg.activate(sanitize=True)
    vector_add.add_plain[(3,)](x, x, out, n, BLOCK=128)
    run = _one_run(dbg)
    assert run["sanitize"] and run["num_warps"]["twin"] == 1
    dbg.activate(level=2, addr_level=2)
    vector_add.add_kernel[(3,)](x, x, out, n, BLOCK=128)
    run = _one_run(dbg)
    assert run["num_warps"]["twin"] == 1
    if run["json"]:
        with open(run["json"], encoding="utf-8") as f:
            assert json.load(f)["kernel"]["num_warps"]["twin"] == 1
