# SPDX-License-Identifier: Apache-2.0
"""Record-buffer sizing, exact overflow accounting and level-2 dumps."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )

import _refdecode as ref  # noqa: E402
from kernels import control, layernorm, vector_add  # noqa: E402

from flagprism import _launch  # noqa: E402

# Loops with runtime bounds: skipped where a row of the known-bad table stops them
# (flagprism.compat; conftest.py turns the marker into a skip with the row's words).
RUNTIME_LOOPS = pytest.mark.compat("runtime-loops")


@pytest.mark.parametrize("capacity", [0, 5, 12, 25, 40, 1000])
def test_overflow_is_exact(dbg, capacity):
    dbg.configure(output_dir=dbg.get_config()["output_dir"], record_capacity=capacity)
    dbg.activate()
    x = torch.randn(256)
    out = torch.empty(256)
    vector_add.add_kernel[(4,)](x, x, out, 256, BLOCK=64)
    np.testing.assert_array_equal(out.numpy(), (x + x).numpy())
    (run,) = dbg.take_exported_runs()
    dec = ref.decoded(run)
    slots = capacity // 4
    assert run["slots_per_program"] == slots
    stored = 4 * min(slots, 10)
    assert len(dec.records) == stored
    assert run["overflow_count"] == 40 - stored == dec.overflow
    for r in dec.records:
        assert r.slot < slots and r.site == r.slot + 1  # the first records of each program are kept
    # Sites whose records were all dropped say so (with the run's count), never "not executed".
    text = Path(run["txt"]).read_text()
    dropped = text.count(
        "no records stored: records dropped (overflow): "
        f"{run['overflow_count']} records of this run"
    )
    assert dropped == 10 - min(slots, 10)
    assert "not executed in any program" not in text


def test_default_sizing_straight_line(dbg):
    dbg.activate()
    x = torch.randn(64)
    vector_add.add_kernel[(3,)](x, x, x, 64, BLOCK=32)
    (run,) = dbg.take_exported_runs()
    assert run["slots_per_program"] == 10 and run["overflow_count"] == 0


@RUNTIME_LOOPS
def test_default_sizing_evaluates_loop_bounds(dbg):
    dbg.activate()
    rows, n, block = 2, 300, 64
    x = torch.randn(rows, n)
    w = torch.ones(n)
    b = torch.zeros(n)
    y = torch.empty_like(x)
    layernorm.layernorm_kernel[(rows,)](x, y, w, b, n, n, 1e-5, BLOCK=block)
    (run,) = dbg.take_exported_runs()
    dec = ref.decoded(run)
    assert run["overflow_count"] == 0
    # exactly the records that ran: the loop bounds were evaluated on the host
    assert run["slots_per_program"] * rows == len(dec.records)


def test_while_loop_uses_the_allowance_and_overflow_is_counted(dbg, monkeypatch):
    monkeypatch.setattr(_launch, "LOOP_TRIPS", 2)
    dbg.activate()
    n, block, steps = 128, 64, 5
    x = torch.randn(n)
    out = torch.zeros(n + 2)
    control.control_kernel[(2,)](x, out, n, steps, BLOCK=block, USE_HELPER=False)
    (run,) = dbg.take_exported_runs()
    dec = ref.decoded(run)
    # sites: load, v, i | v, i in the loop (2 iterations allowed, 5 run) | v, v (if/else, one runs) |
    # v and the helper's own w (helper branch, constexpr-false: never runs) | total, store
    # address, store value
    per_program_run = 3 + 2 * steps + 1 + 3
    assert run["slots_per_program"] == 3 + 2 * 2 + 2 + 2 + 3
    assert len(dec.records) + run["overflow_count"] == 2 * per_program_run
    assert run["overflow_count"] == 2 * (per_program_run - run["slots_per_program"])


def test_level2_value_and_address_dumps(dbg):
    dbg.activate(level=2, addr_level=2)
    n, block = 100, 64
    x = torch.randn(n)
    y = torch.randn(n)
    out = torch.empty(n)
    vector_add.add_kernel[(2,)](x, y, out, n, BLOCK=block)
    (run,) = dbg.take_exported_runs()
    dec = ref.decoded(run)
    assert dec.dump_capacity > 0 and dec.dump_cursor <= dec.dump_capacity
    xs, ys = x.numpy(), y.numpy()
    for p in range(2):
        recs = [r for r in dec.records if r.program == p]
        offs = p * block + np.arange(block)
        mask = offs < n
        np.testing.assert_array_equal(recs[1].dump, offs)
        np.testing.assert_array_equal(recs[2].dump, mask.astype(np.int64))
        xv = np.where(mask, xs[np.minimum(offs, n - 1)], 0).astype(np.float32)
        np.testing.assert_array_equal(recs[4].dump, xv.astype(np.float64))
        addrs = x.data_ptr() + 4 * offs
        want = np.where(mask, addrs, addrs | np.int64(-(2**63)))
        np.testing.assert_array_equal(recs[3].dump, want)
        assert recs[0].dump is None  # scalars are not dumped
        yv = np.where(mask, ys[np.minimum(offs, n - 1)], 0).astype(np.float32)
        np.testing.assert_array_equal(recs[9].dump, (xv + yv).astype(np.float64))
    # every dump record points at its own words: no two overlap
    spans = sorted(
        (r.value_dump_offset if r.kind == 1 else r.addr_dump_offset, r.numel)
        for r in dec.records
        if r.dump is not None
    )
    for (o1, n1), (o2, _n2) in zip(spans, spans[1:]):
        assert o1 + n1 <= o2


def test_dump_overflow_is_counted(dbg):
    dbg.configure(output_dir=dbg.get_config()["output_dir"], dump_capacity=200)
    dbg.activate(level=2, addr_level=0)
    x = torch.randn(128)
    vector_add.add_kernel[(2,)](x, x, x.clone(), 128, BLOCK=64)
    (run,) = dbg.take_exported_runs()
    dec = ref.decoded(run)
    dumped = [r for r in dec.records if r.dump is not None]
    not_dumped = [r for r in dec.records if r.kind == 1 and r.numel > 1 and r.dump is None]
    assert len(dumped) == 3  # 3 x 64 words fit in 200
    assert not_dumped
    assert (
        dec.dump_cursor == 64 * (len(dumped) + len(not_dumped))
        and dec.dump_cursor > dec.dump_capacity
    )
    assert run["dump_words_requested"] == dec.dump_cursor


def test_records_of_unobserved_programs_stay_zero(dbg):
    dbg.configure(output_dir=dbg.get_config()["output_dir"], record_capacity=4 * 20)
    dbg.activate()
    x = torch.randn(64)
    vector_add.add_kernel[(4,)](x, x, x.clone(), 64, BLOCK=16)
    (run,) = dbg.take_exported_runs()
    dec = ref.decoded(run)
    assert run["slots_per_program"] == 20 and len(dec.records) == 40 and run["overflow_count"] == 0


def _real_reports(tmp_path, **config):
    """The Debugger with its real C reporter (not the reference decoder of `dbg`)."""
    import flagprism.debugger as debugger

    debugger.reset_config()
    debugger.clear_exported_runs()
    debugger.configure(output_dir=str(tmp_path / "reports"), **config)
    return debugger


def test_dump_capacity_zero_counts_every_dump_as_overflow(tmp_path):
    """dump_capacity=0 at level 2: the launch runs, every dump is counted as overflow and the
    reports say so (the twin's dump helper used to advance a cursor the header said did not
    exist, and every launch failed with FormatError: header word 5 (dump cursor))."""
    debugger = _real_reports(tmp_path, dump_capacity=0)
    try:
        debugger.activate(level=2, addr_level=0)
        x = torch.randn(128)
        out = torch.empty(128)
        vector_add.add_kernel[(2,)](x, x, out, 128, BLOCK=64)
        np.testing.assert_array_equal(out.numpy(), (x + x).numpy())
        (run,) = debugger.take_exported_runs()
    finally:
        debugger.deactivate()
        debugger.reset_config()
    assert run["dump_capacity_words"] == 0
    assert run["dump_words_requested"] > 0 and run["complete"] is False
    assert run["report"]["dump_overflow_words"] == run["dump_words_requested"]
    assert run["report"]["complete"] is False


@pytest.mark.parametrize(
    "name,bad",
    [
        ("record_capacity", 2**28 + 1),
        ("record_capacity", 10**30),
        ("dump_capacity", 2**31 + 1),
        ("dump_capacity", -1),
        ("record_capacity", 1.5),
        ("dump_capacity", True),
    ],
)
def test_capacities_are_checked_at_configure(name, bad):
    import flagprism.debugger as debugger

    with pytest.raises(ValueError, match=rf"{name} must be None or an integer from 0 to \d+"):
        debugger.configure(**{name: bad})


def test_output_dir_must_be_a_str_path():
    import flagprism.debugger as debugger

    with pytest.raises(TypeError, match="output_dir must be a str path"):
        debugger.configure(output_dir=b"reports")
    with pytest.raises(ValueError, match="non-empty"):
        debugger.configure(output_dir="")
    debugger.reset_config()


def test_reports_that_cannot_be_written_do_not_raise_into_the_program(tmp_path):
    """A report directory that cannot be made (here a file is in the way): the kernel runs, the
    program goes on, the failure is warned about once and counted for the summary."""
    import flagprism.debugger as debugger

    blocker = tmp_path / "reports"
    blocker.write_text("a file where the directory should be")
    debugger.reset_config()
    debugger.configure(output_dir=str(blocker))
    debugger._write_failures.update(count=0, causes=[])
    try:
        debugger.activate()
        x = torch.randn(64)
        out = torch.empty(64)
        with pytest.warns(RuntimeWarning, match="reports of a launch could not be written"):
            vector_add.add_kernel[(1,)](x, x, out, 64, BLOCK=64)
        vector_add.add_kernel[(1,)](x, x, out, 64, BLOCK=64)  # warned once per cause
        np.testing.assert_array_equal(out.numpy(), (x + x).numpy())
    finally:
        debugger.deactivate()
        debugger.reset_config()
    assert debugger._write_failures["count"] == 2
    assert "File exists" in debugger._write_failures["causes"][0]


def test_a_buffer_that_does_not_fit_names_its_size_and_settings():
    """A capacity within its range that still does not fit the device's memory fails with a
    MemoryError naming the buffer's size and the settings that sized it (not torch's raw
    error)."""
    with pytest.raises(
        MemoryError,
        match=r"the 9,007,199,254,740,992-byte record buffer .* "
        r"\(record_capacity=5, dump_capacity=None",
    ):
        _launch.alloc_buffer(1 << 50, torch.device("cpu"), "record_capacity=5, dump_capacity=None")


def test_summary_lists_each_incomplete_launch_with_its_reason(dbg):
    """Two launches whose records did not all fit: the summary is incomplete, and its
    "incomplete" list names each launch (kernel, launch index, report) with its own reason, as
    the text summary does; a complete launch is not listed."""
    dbg.configure(output_dir=dbg.get_config()["output_dir"], record_capacity=12)
    dbg.activate()
    x = torch.randn(256)
    out = torch.empty(256)
    vector_add.add_kernel[(4,)](x, x, out, 256, BLOCK=64)  # forgotten by reset_summary()
    dbg.reset_summary()  # (the summary is the process's: earlier tests' launches are in it too)
    vector_add.add_kernel[(4,)](x, x, out, 256, BLOCK=64)
    vector_add.add_kernel[(2,)](x, x, out, 128, BLOCK=64)
    dbg.deactivate()
    dbg.configure(output_dir=dbg.get_config()["output_dir"], record_capacity=100000)
    dbg.activate()
    vector_add.add_kernel[(1,)](x, x, out, 64, BLOCK=64)
    dbg.deactivate()
    s = dbg.summary()
    j = s["json"]
    assert j["complete"] is False and j["totals"]["incomplete_launches"] == 2, s["text"]
    inc = j["incomplete"]
    assert [e["kernel"] for e in inc] == ["add_kernel", "add_kernel"], inc
    assert inc[0]["launch"] < inc[1]["launch"]
    assert "did not fit the 3 slots per program of its 4 programs" in inc[0]["reason"], inc
    assert "did not fit the 6 slots per program of its 2 programs" in inc[1]["reason"], inc
    assert all(e["report"] for e in inc), inc
    assert j["dropped"]["incomplete_launches"] == 0
    assert f"incomplete: add_kernel launch {inc[1]['launch']}" in s["text"], s["text"]
