# SPDX-License-Identifier: Apache-2.0
"""Checks of closed-form records (docs/formats/record-format.md, "Closed-form records") shared by the
interpreter tests (test_debugger_closed.py) and the GPU tests (tests/gpu/test_debugger_gpu.py):
the report JSON written by the C decoder and the records of the tests' reference decoder, both
against NumPy."""

from __future__ import annotations

import math

import _refdecode as ref
import numpy as np
import torch
from kernels import closed


def check_json_value(sm: dict, want: np.ndarray, ctx: str) -> None:
    """A report summary (docs/formats/debugger-report-schema.md) against NumPy."""
    a = np.asarray(want)
    x = a.astype(np.int64).ravel()
    assert sm["element_count"] == a.size, ctx
    assert sm["nan_count"] == 0 and sm["inf_count"] == 0, ctx
    assert sm["zero_count"] == int((x == 0).sum()), ctx
    assert sm["min"] == int(x.min()) and sm["max"] == int(x.max()), (ctx, sm["min"], sm["max"])
    mean = float(x.astype(np.float64).sum() / x.size)
    assert abs(sm["mean"] - mean) <= 1e-6 * max(abs(mean), float(np.abs(x).mean()), 1e-300), (
        ctx,
        sm["mean"],
        mean,
    )
    l2 = math.sqrt(float((x.astype(np.float64) ** 2).sum()))
    assert abs(sm["l2_norm"] - l2) <= 1e-6 * l2, (ctx, sm["l2_norm"], l2)


def check_json_addr(
    a: dict, base: int, offs: np.ndarray, act: np.ndarray, es: int, ctx: str
) -> None:
    addrs = base + offs.astype(np.int64) * es
    idx = np.nonzero(act)[0]
    assert a["status"] == "complete" and a["active_lane_count"] == idx.size, ctx
    if idx.size:
        assert a["first_addr"] == int(addrs[idx[0]]) and a["last_addr"] == int(addrs[idx[-1]]), ctx
        assert a["min_addr"] == int(addrs[act].min()) and a["max_addr"] == int(addrs[act].max()), (
            ctx
        )
        assert a["address_span_bytes"] == int(addrs[act].max() - addrs[act].min()) + es, ctx


def run_forms(
    dbg, device: str, n: int, base: int, s64: int, block: int = 64, k: int = 5, programs: int = 3
):
    out = torch.zeros(closed.out_size(n, block, k, programs), dtype=torch.int32, device=device)
    dbg.activate(level=1, addr_level=1)
    closed.forms_kernel[(programs,)](out, n, base, s64, BLOCK=block, K=k)
    runs = dbg.take_exported_runs()
    assert len(runs) == 1
    run = runs[0]
    dec = ref.decoded(run)
    table = ref.site_table(run)
    names = {s["id"]: s["name"] for s in table["sites"]}
    # the closed form is used exactly where expected (and the ordinary path elsewhere)
    for r in dec.records:
        want = names[r.site] in closed.CLOSED or (
            r.kind in (2, 3) and names[r.site] not in closed.OPEN_ACCESSES
        )
        assert r.extra["closed"] == want, (names[r.site], r.extra)
    rep = run["report"]
    seen = 0
    for p in range(programs):
        vals = closed.reference(p, n, base, s64, block, k)
        for r in dec.records:
            if r.program == p and r.kind == 1 and names[r.site] in vals:
                ref.check_value(r, vals[names[r.site]])
        for st in rep["statements"]:
            for res in st["results"]:
                for inst in res["instances"]:
                    if inst["program"][0] == p and res["name"] in vals and res["name"] != "pid":
                        check_json_value(
                            inst["summary"], vals[res["name"]], f"{res['name']} program {p}"
                        )
                        seen += 1
            for acc in st["memory"]:
                offs_name = names[acc["site"]].split(" + ")[1]
                mask_name = closed.STORES[offs_name]
                act = vals[mask_name] if mask_name else np.ones(block, dtype=bool)
                for inst in acc["instances"]:
                    if inst["program"][0] == p:
                        check_json_addr(
                            inst["address_summary"],
                            out.data_ptr(),
                            vals[offs_name],
                            act,
                            4,
                            f"{offs_name} program {p}",
                        )
                        seen += 1
    # the closed names, m7, g, the stored values (g) and the stores' addresses
    assert seen == programs * (len(closed.CLOSED) + 2 + 2 * len(closed.STORES))
    return out
