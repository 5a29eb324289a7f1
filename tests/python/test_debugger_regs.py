# SPDX-License-Identifier: Apache-2.0
"""The twin's register-cap rule (flagprism._regs) and its setting, without a GPU."""

from __future__ import annotations

import pytest

from flagprism import _regs, debugger

H200 = (9, 0)


def test_programs_per_sm_counts_per_scheduler():
    lim = (64, 32)
    # a scheduler has 16,384 registers; a warp takes 32 * regs rounded up to 8 per thread
    assert _regs.programs_per_sm(197, 1, lim) == 8  # 200 per thread: 2 warps per scheduler
    assert _regs.programs_per_sm(184, 1, lim) == 8  # 11 by the SM-wide count, 8 in fact
    assert _regs.programs_per_sm(168, 1, lim) == 12
    assert _regs.programs_per_sm(128, 1, lim) == 16
    assert _regs.programs_per_sm(16, 1, lim) == 32  # the block limit
    assert _regs.programs_per_sm(32, 4, lim) == 16  # the warp limit (64 warps)
    assert _regs.programs_per_sm(64, 4, lim) == 8
    assert _regs.programs_per_sm(255, 8, lim) == 1


def test_propose_next_step():
    assert _regs.propose(197, 1, H200) == (168, "12 programs per SM instead of 8")
    # a quarter of the SM's warps or more resident: no cap (measured: no gain, or a loss)
    cap, why = _regs.propose(64, 4, H200)
    assert cap is None and "32 of the SM's 64 warps" in why
    assert _regs.propose(72, 1, H200)[0] is None  # 28 warps
    assert _regs.propose(136, 2, H200) == (128, "8 programs per SM instead of 6")
    cap, why = _regs.propose(255, 8, H200)  # 2 programs of 8 warps need 128: 50% below
    assert cap is None and "128 registers" in why and "50%" in why
    cap, why = _regs.propose(32, 4, H200)  # at the SM's warp limit already
    assert cap is None and "64 of the SM's 64 warps" in why
    cap, why = _regs.propose(197, 1, (5, 2))
    assert cap is None and "5.2" in why
    for regs in range(16, 256):
        for warps in (1, 2, 4, 8, 16, 32):
            cap, _why = _regs.propose(regs, warps, H200)
            if cap is not None:
                assert _regs.programs_per_sm(regs, warps, (64, 32)) * warps < 16
                assert 16 <= cap < regs and cap % 8 == 0 and cap >= _regs.MIN_FRACTION * regs
                assert _regs.programs_per_sm(cap, warps, (64, 32)) > _regs.programs_per_sm(
                    regs, warps, (64, 32)
                )


def test_decide_settings_without_compiling():
    # a cap the launch gives, None and a number need no compile
    assert _regs.decide(None, (), (1,), {"maxnreg": 96}, "auto", None) == {
        "cap": 96,
        "uncapped": None,
        "reason": "the launch's own maxnreg",
    }
    assert _regs.decide(None, (), (1,), {}, None, None)["cap"] is None
    assert _regs.decide(None, (), (1,), {}, 128, None) == {
        "cap": 128,
        "uncapped": None,
        "reason": "twin_maxnreg=128",
    }


@pytest.mark.parametrize("bad", [0, 15, 256, "same", 1.5, True])
def test_configure_rejects_bad_twin_maxnreg(bad):
    with pytest.raises(ValueError, match="twin_maxnreg"):
        debugger.configure(twin_maxnreg=bad)


def test_configure_twin_maxnreg_roundtrip():
    try:
        debugger.configure(twin_maxnreg=None)
        assert debugger.get_config()["twin_maxnreg"] is None
        debugger.configure(twin_maxnreg=160)
        assert debugger.get_config()["twin_maxnreg"] == 160
        debugger.configure()
        assert debugger.get_config()["twin_maxnreg"] == "auto"
    finally:
        debugger.reset_config()


def test_decide_auto_builds_capped_once(monkeypatch):
    """The "auto" path with Triton's warmup played by a stand-in: the uncapped build's registers
    decide, the capped build's spills are checked, and a kernel already decided is not built
    capped again."""
    import torch

    class Built:
        def __init__(self, regs, spills):
            self.n_regs, self.n_spills = regs, spills
            self.metadata = type("M", (), {"num_warps": 1})()

        def _init_handles(self):
            pass

    class Jit:
        def __init__(self, regs, spills_capped):
            self.plain = Built(regs, 0)
            self.spills_capped = spills_capped
            self.calls = []

        def warmup(self, *args, grid, **kw):
            self.calls.append(kw.get("maxnreg"))
            return self.plain if "maxnreg" not in kw else Built(kw["maxnreg"], self.spills_capped)

    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: H200)
    jit = Jit(197, 14)  # 56 bytes of spills capped: used
    want = {"cap": 168, "uncapped": 197, "reason": "12 programs per SM instead of 8"}
    assert _regs.decide(jit, (), (1,), {}, "auto", None) == want
    assert _regs.decide(jit, (), (1,), {}, "auto", None) == want
    assert jit.calls == [None, 168, None]  # the capped variant is built for the first launch only
    spilly = Jit(197, 64)  # 256 bytes more: not used
    got = _regs.decide(spilly, (), (1,), {}, "auto", None)
    assert (
        got["cap"] is None and got["uncapped"] == 197 and "spills 256 more bytes" in got["reason"]
    )
    full = Jit(72, 0)  # 28 of 64 warps resident: no cap, nothing built capped
    assert _regs.decide(full, (), (1,), {}, "auto", None)["cap"] is None and full.calls == [None]
