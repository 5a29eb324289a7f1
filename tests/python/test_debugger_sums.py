# SPDX-License-Identifier: Apache-2.0
"""The accuracy of level 1's float sums (docs/guide/debugger.md, "Accuracy") against NumPy float64
on adversarial data: float32 per block by default, float64 per element with exact_sums=True.

Each case loads one tile per program (kernels/sums.py) and reads the record of `x` through the
reference decoder. The data's condition is stated where it matters: the mean's error is bounded
relative to the mean of |x| (rel * sum|x| / |sum x| relative to the mean itself), the L2 norm's
relative to itself (a sum of squares has no cancellation). The measured errors are printed
(`pytest -s`) for the record in docs/internals/benchmarks-history.md.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

pytestmark = pytest.mark.skipif(
    os.environ.get("TRITON_INTERPRET") != "1", reason="interpreter tests (TRITON_INTERPRET=1)"
)

import _refdecode as ref  # noqa: E402
from kernels import sums  # noqa: E402

#: float32's unit roundoff: the float32 sums' error bound is a small multiple of it
U32 = 2.0**-24
#: the issue's target for mean and L2 where the data's condition allows it
REL = 1e-6


def _records(dbg, x: torch.Tensor, block: int, exact: bool) -> list[ref.Record]:
    """The records of `x` (one per program, in program order) of one launch."""
    out = torch.empty_like(x)
    dbg.activate(level=1, addr_level=0, exact_sums=exact)
    sums.tile_kernel[(x.numel() // block,)](x, out, BLOCK=block)
    dbg.deactivate()
    assert torch.allclose(out, x, rtol=0, atol=0, equal_nan=True)
    (run,) = dbg.take_exported_runs()
    assert run["exact_sums"] is exact
    sid = next(s["id"] for s in ref.site_table(run)["sites"] if s["name"] == "x")
    recs = sorted((q for q in ref.decoded(run).records if q.site == sid), key=lambda q: q.program)
    assert len(recs) == x.numel() // block
    return recs


def _tiles(x: torch.Tensor, block: int) -> np.ndarray:
    return x.to(torch.float64).numpy().reshape(-1, block)


def _errors(rec: ref.Record, xd: np.ndarray) -> tuple[float, float, float]:
    """(relative error of the mean, relative error of the L2 norm, the mean's condition
    sum|x| / |sum x|) of a record against float64 over its tile."""
    mean = float(xd.sum() / xd.size)
    l2 = float(np.sqrt((xd * xd).sum()))
    cond = float(np.abs(xd).sum() / abs(xd.sum())) if xd.sum() != 0 else float("inf")
    assert rec.mean is not None and np.isfinite(rec.mean) and np.isfinite(rec.l2_norm)
    return abs(rec.mean - mean) / abs(mean), abs(rec.l2_norm - l2) / l2, cond


def _exact_words(rec: ref.Record, xd: np.ndarray) -> None:
    """exact_sums: the sums are NumPy's float64 sums over the tile, bit for bit (the
    interpreter's float64 reduction is np.sum over the same elements in the same order)."""
    assert rec.sum == float(np.sum(xd)), (rec.sum, float(np.sum(xd)))
    assert rec.sumsq == float(np.sum(xd * xd)), (rec.sumsq, float(np.sum(xd * xd)))


def _exact_stats(rec: ref.Record, xd: np.ndarray) -> None:
    """Counts, min and max are exact in either mode."""
    assert rec.numel == xd.size and rec.nan_count == 0 and rec.inf_count == 0
    assert rec.zero_count == int((xd == 0).sum())
    assert rec.min == float(xd.min()) and rec.max == float(xd.max())


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# (name, data maker, block): the data's condition allows 1e-6 for the mean of each (stated per
# case); cases with cancellation have their own test below.
CASES = {
    # an offset 1e6 times the noise: sum|x| / |sum x| = 1, every partial sum large
    "offset": (lambda: 1e6 + torch.randn(4 * 4096, generator=_gen(1)), 4096),
    # the largest tile the interpreter runs in about a second: 64K elements in one program
    "large_tile": (lambda: 3.0 + torch.rand(65536, generator=_gen(2)), 65536),
    # float16 and bfloat16 inputs, widened to float32 before the sums
    "float16": (lambda: (100 + 10 * torch.randn(8 * 1024, generator=_gen(3))).half(), 1024),
    "bfloat16": (
        lambda: (
            torch.rand(8 * 1024, generator=_gen(4))
            * torch.exp2(torch.randint(-30, 30, (8 * 1024,), generator=_gen(5)).float())
        ).bfloat16(),
        1024,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_float32_sums_are_within_1e_6(dbg, case: str) -> None:
    """Default level 1: mean and L2 within 1e-6 of float64 (these data have no cancellation:
    sum|x| / |sum x| = 1), counts, min and max exact, and the sums really are float32 sums:
    NumPy's float32 sum of the same tile (the interpreter's reduction), not a float64 one."""
    make, block = CASES[case]
    x = make()
    recs = _records(dbg, x, block, exact=False)
    worst = [0.0, 0.0]
    for rec, xd in zip(recs, _tiles(x, block)):
        _exact_stats(rec, xd)
        em, el, cond = _errors(rec, xd)
        assert cond == 1.0
        assert em <= REL and el <= REL, (case, rec.program, em, el)
        worst = [max(worst[0], em), max(worst[1], el)]
        x32 = xd.astype(np.float32)
        assert rec.sum == float(np.sum(x32)), "the default sums are not float32 sums"
        assert rec.sumsq == float(np.sum(x32 * x32))
    print(f"\n{case}: float32 sums, max relative error mean {worst[0]:.3g} L2 {worst[1]:.3g}")


@pytest.mark.parametrize("case", sorted(CASES))
def test_exact_sums_are_float64(dbg, case: str) -> None:
    """exact_sums=True: the float64 sums of before, bit for bit."""
    make, block = CASES[case]
    x = make()
    recs = _records(dbg, x, block, exact=True)
    worst = [0.0, 0.0]
    for rec, xd in zip(recs, _tiles(x, block)):
        _exact_stats(rec, xd)
        _exact_words(rec, xd)
        em, el, _ = _errors(rec, xd)
        worst = [max(worst[0], em), max(worst[1], el)]
    print(f"\n{case}: exact sums, max relative error mean {worst[0]:.3g} L2 {worst[1]:.3g}")


def test_mixed_signs_mean_error_follows_the_condition(dbg) -> None:
    """Mixed signs (mean near zero): the mean's absolute error stays within 1e-6 of mean(|x|), i.e.
    its relative error within 1e-6 * sum|x| / |sum x|, which the L2 norm and the count in the
    report bound (sum|x| <= sqrt(n) * L2); the L2 norm stays within 1e-6 of itself."""
    block = 4096
    x = torch.randn(8 * block, generator=_gen(6)) + 1e-3
    worst = [0.0, 0.0, 0.0]
    for exact in (False, True):
        for rec, xd in zip(_records(dbg, x, block, exact), _tiles(x, block)):
            _exact_stats(rec, xd)
            em, el, cond = _errors(rec, xd)
            assert cond > 10  # there is cancellation to speak of
            assert em <= REL * cond and el <= REL, (rec.program, em, el, cond)
            assert abs(rec.mean - xd.mean()) <= REL * np.abs(xd).mean()
            assert abs(rec.mean - xd.mean()) <= REL * rec.l2_norm / np.sqrt(xd.size)
            if exact:
                _exact_words(rec, xd)
            else:
                worst = [max(worst[0], em), max(worst[1], el), max(worst[2], em / cond)]
    print(
        f"\nmixed signs: float32 sums, max relative error mean {worst[0]:.3g} "
        f"(/ condition {worst[2]:.3g}) L2 {worst[1]:.3g}"
    )


@pytest.mark.parametrize(
    "scale", [1e30, -1e30, 3e19, 1e-30, 1e-20], ids=["1e30", "-1e30", "3e19", "1e-30", "1e-20"]
)
def test_out_of_range_sums_fall_back_to_float64(dbg, scale: float) -> None:
    """Magnitudes whose float32 squares overflow (|x| > 1.8e19) or underflow (|x| < 2**-50)
    are summed in float64 for that record: finite, and the same words as exact_sums."""
    block = 1024
    x = scale * (1 + torch.rand(4 * block, generator=_gen(7)))
    x[5] = -x[5]
    fast = _records(dbg, x, block, exact=False)
    exact = _records(dbg, x, block, exact=True)
    for rec, rex, xd in zip(fast, exact, _tiles(x, block)):
        _exact_stats(rec, xd)
        _exact_words(rec, xd)
        assert rec.words == rex.words
        em, el, _ = _errors(rec, xd)
        assert em <= 1e-12 and el <= 1e-12


def test_one_overflowing_block_among_finite_ones(dbg) -> None:
    """Only the record whose float32 sum would be out of range falls back; a NaN and an Inf in
    another block are counted as before and the finite rest summed."""
    block = 1024
    x = 1 + torch.rand(3 * block, generator=_gen(8))
    x[block + 7] = 4e19  # its square overflows float32
    x[2 * block + 1] = float("nan")
    x[2 * block + 2] = float("-inf")
    recs = _records(dbg, x, block, exact=False)
    tiles = _tiles(x, block)
    _exact_words(recs[1], tiles[1])
    assert recs[0].sum == float(np.sum(tiles[0].astype(np.float32)))
    fin = tiles[2][np.isfinite(tiles[2])]
    assert recs[2].nan_count == 1 and recs[2].inf_count == 1
    assert recs[2].min == float(fin.min()) and recs[2].max == float(fin.max())
    em, el, _ = _errors(recs[2], fin)
    assert em <= REL and el <= REL


def test_fused_flavour_on_the_interpreter(dbg, monkeypatch) -> None:
    """The GPU flavour (one tuple reduction), which the interpreter runs one element after the
    other: the worst order Triton's tl.sum can have (every element of the tile in one thread),
    so the error is within the sequential bound (n - 1) * u (docs/guide/debugger.md, "Accuracy"),
    and the fallback of out-of-range blocks gives the float64 words."""
    monkeypatch.setenv("FLAGPRISM_DBG_REDUCE", "fused")
    block = 256
    x = 1e6 + torch.randn(2 * block, generator=_gen(9))
    x[block:] = x[block:] * 1e20  # the second tile's squares overflow float32
    recs = _records(dbg, x, block, exact=False)
    tiles = _tiles(x, block)
    _exact_stats(recs[0], tiles[0])
    em0, el0, _ = _errors(recs[0], tiles[0])
    assert em0 <= (block - 1) * U32 and el0 <= block * U32, (em0, el0)
    x32 = tiles[0].astype(np.float32)
    seq = np.float32(0)
    for v in x32:  # the interpreter's order: one element after the other
        seq = np.float32(seq + v)
    assert recs[0].sum == float(seq)
    _exact_stats(recs[1], tiles[1])
    em, el, _ = _errors(recs[1], tiles[1])
    assert em <= 1e-12 and el <= 1e-12
    # the fallback's float64 sums (_float_slow: one reduction per statistic) may add in another
    # order than exact_sums' tuple reduction; every other word is the same
    ex = _records(dbg, x, block, exact=True)
    assert recs[1].words[:4] + recs[1].words[6:] == ex[1].words[:4] + ex[1].words[6:]
    print(f"\nfused, sequential order of {block}: mean {em0:.3g} L2 {el0:.3g}")


def test_exact_sums_option(dbg) -> None:
    """activate(exact_sums=...) is a bool, shown by get_config(), and picks a twin of its own."""
    with pytest.raises(TypeError):
        dbg.activate(exact_sums=1)
    dbg.activate(exact_sums=True)
    assert dbg.get_config()["exact_sums"] is True
    dbg.activate()
    assert dbg.get_config()["exact_sums"] is False
    dbg.deactivate()


_SCRIPT = """
import sys
import torch
sys.path.insert(0, {tests!r})
from kernels import sums
x = 1e6 + torch.randn(1024, generator=torch.Generator().manual_seed(10))
sums.tile_kernel[(1,)](x, torch.empty_like(x), BLOCK=1024)
torch.save(x, "x.pt")
"""


def _cli_mean(cli, tmp_path, *opts: str) -> tuple[float, np.ndarray]:
    """The mean of `x` in the report of `flagprism debug OPTS script.py`, and x."""
    import json
    import subprocess
    import sys

    script = tmp_path / "script.py"
    script.write_text(_SCRIPT.format(tests=os.path.dirname(os.path.abspath(__file__))))
    out = tmp_path / ("out" + "".join(opts))
    env = dict(os.environ, FLAGPRISM_PYTHON=sys.executable)
    r = subprocess.run(
        [str(cli), "debug", *opts, "-o", str(out), str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    (rep,) = [p for p in out.glob("*_run*.json") if not p.name.endswith("_op_log.json")]
    doc = json.loads(rep.read_text())
    # the first result named x: the load's statement (the store's value is the same record, replayed)
    res = [res for st in doc["statements"] for res in st["results"] if res["name"] == "x"][0]
    (inst,) = res["instances"]
    xd = torch.load(tmp_path / "x.pt").to(torch.float64).numpy()
    return inst["summary"]["mean"], xd


def test_cli_exact_sums(cli, tmp_path) -> None:
    """flagprism debug --exact-sums: the report's mean is float64's, bit for bit; without it,
    float32's (different on this data), within 1e-6."""
    mean, xd = _cli_mean(cli, tmp_path, "--exact-sums")
    assert mean == float(np.sum(xd)) / xd.size
    mean32, _ = _cli_mean(cli, tmp_path)
    assert mean32 == float(np.sum(xd.astype(np.float32))) / xd.size != mean
    assert abs(mean32 - mean) <= REL * abs(mean)
