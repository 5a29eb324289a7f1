# SPDX-License-Identifier: Apache-2.0
"""Closed-form records of index arithmetic (Triton interpreter): the twin writes only scalars for
`s + K * tl.arange(LO, HI)`, comparisons of it and accesses through it, and both the C decoder
(report JSON) and the tests' reference decoder expand them into summaries that must equal NumPy's
(counts, min, max and addresses exactly; mean and L2 norm to 1e-6)."""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "these tests run on the Triton interpreter (TRITON_INTERPRET=1)", allow_module_level=True
    )

import _refdecode as ref  # noqa: E402
from _closedcheck import run_forms  # noqa: E402
from kernels import vector_add  # noqa: E402


def test_forms_closed_and_exact(dbg):
    run_forms(dbg, "cpu", n=100, base=(1 << 31) - 40, s64=(1 << 40) + 3)


def test_forms_edge_bounds(dbg):
    # every lane active / none active; d does not wrap, e negative
    run_forms(dbg, "cpu", n=10**6, base=-20, s64=-(1 << 45))
    run_forms(dbg, "cpu", n=0, base=0, s64=0)


def test_vector_add_closed_records(dbg):
    n, block = 1000, 256
    x = torch.randn(n)
    out = torch.empty(n)
    dbg.activate(level=1, addr_level=1)
    vector_add.add_kernel[(4,)](x, x, out, n, BLOCK=block)
    run = dbg.take_exported_runs()[0]
    dec = ref.decoded(run)
    for p in range(4):
        recs = [r for r in dec.records if r.program == p]
        # pid, offs, mask, load x, x, load y, y, out, store, stored value
        assert [r.extra["closed"] for r in recs] == [
            False,
            True,
            True,
            True,
            False,
            True,
            False,
            False,
            True,
            False,
        ]
        offs = p * block + np.arange(block)
        ref.check_value(recs[1], offs.astype(np.int32))
        ref.check_value(recs[2], offs < n)
        ref.check_addr(recs[3], 2, x.data_ptr(), offs, offs < n, 4, 12)
        ref.check_addr(recs[8], 3, out.data_ptr(), offs, offs < n, 4, 12)


def test_level2_keeps_ordinary_records(dbg):
    """Level 2 dumps every element: no closed form there (the dump needs the values)."""
    n, block = 300, 128
    x = torch.randn(n)
    out = torch.empty(n)
    dbg.activate(level=2, addr_level=2)
    vector_add.add_kernel[(3,)](x, x, out, n, BLOCK=block)
    dec = ref.decoded(dbg.take_exported_runs()[0])
    assert not any(r.extra["closed"] for r in dec.records)
    r = next(r for r in dec.records if r.program == 2 and r.site == 2)
    np.testing.assert_array_equal(r.dump, 2 * block + np.arange(block))
