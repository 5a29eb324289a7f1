# SPDX-License-Identifier: Apache-2.0
"""A small pure-Python decoder of the Debugger's record buffer, for tests only.

It reads docs/formats/record-format.md literally, so tests can check what the instrumented twin wrote
independently of the C decoder, and it can stand in for ``flagprism._ext.debug_report`` (see
``fake_report``) where the native part is not built. It is deliberately simple and strict; it
is never shipped in the package.
"""

from __future__ import annotations

import json
import math
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

MAGIC = 0x0031764742445046

DTYPES = {
    1: ("bool", 1),
    2: ("int8", 1),
    3: ("int16", 2),
    4: ("int32", 4),
    5: ("int64", 8),
    6: ("uint8", 1),
    7: ("uint16", 2),
    8: ("uint32", 4),
    9: ("uint64", 8),
    10: ("float16", 2),
    11: ("bfloat16", 2),
    12: ("float32", 4),
    13: ("float64", 8),
    14: ("float8e4nv", 1),
    15: ("float8e5", 1),
    16: ("pointer", 8),
}
FLOAT_CODES = {10, 11, 12, 13, 14, 15}


@dataclass
class Record:
    program: int
    slot: int
    site: int
    kind: int
    dtype: int
    ndim: int
    flags: int
    seq: int
    shape: list[int]
    words: list[int]
    execution: int = 0
    dump: np.ndarray | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    # value records ------------------------------------------------------------------------------
    @property
    def nan_count(self) -> int:
        return self.words[2] & 0xFFFFFFFF

    @property
    def inf_count(self) -> int:
        return (self.words[2] >> 32) & 0xFFFFFFFF

    @property
    def zero_count(self) -> int:
        return self.words[3] & 0xFFFFFFFF

    @property
    def value_dump_offset(self) -> int | None:
        off = (self.words[3] >> 32) & 0xFFFFFFFF
        return None if off == 0xFFFFFFFF else off

    @property
    def sum(self) -> float:
        return _f64(self.words[4])

    @property
    def sumsq(self) -> float:
        return _f64(self.words[5])

    def _mm(self, w: int) -> float | int:
        if self.dtype in FLOAT_CODES:
            return _f64(w)
        if self.dtype == 9:
            return w & 0xFFFFFFFFFFFFFFFF
        return w

    @property
    def finite_count(self) -> int:
        return self.numel - self.nan_count - self.inf_count

    @property
    def min(self) -> float | int | None:
        return self._mm(self.words[6]) if self.finite_count > 0 else None

    @property
    def max(self) -> float | int | None:
        return self._mm(self.words[7]) if self.finite_count > 0 else None

    @property
    def mean(self) -> float | None:
        return self.sum / self.finite_count if self.finite_count > 0 else None

    @property
    def l2_norm(self) -> float:
        return math.sqrt(self.sumsq)

    # address records ----------------------------------------------------------------------------
    @property
    def active(self) -> int:
        return self.words[2] & 0xFFFFFFFF

    @property
    def status(self) -> int:
        return (self.words[2] >> 32) & 0xFFFFFFFF

    @property
    def first_addr(self) -> int | None:
        return self.words[3] if self.active else None

    @property
    def last_addr(self) -> int | None:
        return self.words[4] if self.active else None

    @property
    def min_addr(self) -> int | None:
        return self.words[5] if self.active else None

    @property
    def max_addr(self) -> int | None:
        return self.words[6] if self.active else None

    @property
    def span(self) -> int:
        if not self.active:
            return 0
        return self.words[6] - self.words[5] + DTYPES[self.dtype][1]

    @property
    def addr_dump_offset(self) -> int | None:
        return None if self.words[7] == -1 else self.words[7]


def _f64(w: int) -> float:
    return struct.unpack("<d", struct.pack("<q", w))[0]


def _bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _s64(x: int) -> int:
    x &= 0xFFFFFFFFFFFFFFFF
    return x - (1 << 64) if x >> 63 else x


def _expand_closed(w: list[int], kind: int, dtype: int, n: int) -> list[int]:
    """Ordinary words of a closed-form record (record-format.md, "Closed-form records"), by
    materialising the lanes: v[i] = f + k*i wrapped to the sequence dtype, compared with b."""
    cf, op, sdt = w[2] & 0xFF, (w[2] >> 8) & 0xFF, (w[2] >> 16) & 0xFF
    if w[2] >> 24 or sdt not in (4, 5) or cf not in ((1, 2) if kind == 1 else (3,)) or op > 4:
        raise DecodeError(f"bad closed-form word 2 {w[2]:#x}")
    f, k, b = (w[4], w[5], w[6]) if cf == 3 else (w[3], w[4], w[5])
    with np.errstate(over="ignore"):
        v = np.int64(f) + np.int64(k) * np.arange(
            n, dtype=np.int64
        )  # wraps mod 2^64, as the device
        if sdt == 4:
            v = v.astype(np.int32).astype(np.int64)  # wraps mod 2^32
    act = {0: np.ones(n, dtype=bool), 1: v < b, 2: v <= b, 3: v > b, 4: v >= b}[op]
    out = list(w)
    if cf == 1:
        total = int(v.sum()) if sdt == 4 else sum(int(x) for x in v)  # exact
        out[2:8] = [
            0,
            int((v == 0).sum()) | (0xFFFFFFFF << 32),
            _bits(float(total)),
            _bits(float((v.astype(np.float64) ** 2).sum())),
            int(v.min()),
            int(v.max()),
        ]
    elif cf == 2:
        t = int(act.sum())
        out[2:8] = [
            0,
            (n - t) | (0xFFFFFFFF << 32),
            _bits(float(t)),
            _bits(float(t)),
            int(t == n),
            int(t > 0),
        ]
    else:
        idx = np.nonzero(act)[0]
        if idx.size:
            es = DTYPES[dtype][1]
            with np.errstate(over="ignore"):
                addr = (
                    np.uint64(w[3] & 0xFFFFFFFFFFFFFFFF) + v.astype(np.uint64) * np.uint64(es)
                ).astype(np.int64)
            va = v[idx]
            lo, hi = idx[int(np.argmin(va))], idx[int(np.argmax(va))]
            out[2:8] = [
                int(idx.size),
                int(addr[idx[0]]),
                int(addr[idx[-1]]),
                int(addr[lo]),
                int(addr[hi]),
                -1,
            ]
        else:
            out[2:8] = [0, 0, 0, 0, 0, -1]
    out[0] = _s64(w[0] & ~(2 << 36))
    return out


@dataclass
class Decoded:
    slots: int
    programs: int
    overflow: int
    dump_cursor: int
    dump_capacity: int
    nsites: int
    records: list[Record]

    def by_site(self, site: int, program: int | None = None) -> list[Record]:
        return [
            r for r in self.records if r.site == site and (program is None or r.program == program)
        ]


class DecodeError(ValueError):
    pass


def decode(buf: Any, nsites: int | None = None, only: Any = None) -> Decoded:
    """Decode every record, or only those of the programs in `only` (an iterable of linear
    program ids; large launches decode faster that way)."""
    words = np.frombuffer(memoryview(buf).cast("B"), dtype="<i8")
    if len(words) < 8:
        raise DecodeError("buffer shorter than its header")
    magic, layout, slots, programs, overflow, cursor, cap, ns = (int(x) for x in words[:8])
    if magic != MAGIC:
        raise DecodeError(f"bad magic {magic:#x}")
    if layout & 0xFFFF != 1 or (layout >> 16) & 0xFFFF != 8 or (layout >> 32) & 0xFFFF != 8:
        raise DecodeError(f"bad layout {layout:#x}")
    if nsites is not None and ns != nsites:
        raise DecodeError(f"header says {ns} sites, table has {nsites}")
    # with a check area (layout flag bit 1) the record slots start at the extended header's
    # word 11 (docs/formats/record-format.md, "Check area")
    rec = 8
    if (layout >> 48) & 2:
        if len(words) < 16:
            raise DecodeError("buffer shorter than its extended header")
        npar, nchk, rec = int(words[8]), int(words[9]), int(words[11])
        if rec != 16 + 4 * npar + 32 * nchk:
            raise DecodeError(f"records at word {rec}, expected {16 + 4 * npar + 32 * nchk}")
    need = rec + programs * slots * 8 + cap
    if len(words) != need:
        raise DecodeError(f"buffer has {len(words)} words, header implies {need}")
    arena = words[rec + programs * slots * 8 :]
    recs: list[Record] = []
    for p in range(programs) if only is None else sorted(q for q in set(only) if 0 <= q < programs):
        counts: dict[int, int] = {}
        for s in range(slots):
            base = rec + (p * slots + s) * 8
            w = [int(x) for x in words[base : base + 8]]
            if w[0] == 0:
                continue
            w0 = w[0] & 0xFFFFFFFFFFFFFFFF
            site = w0 & 0xFFFF
            kind = (w0 >> 16) & 0xFF
            dtype = (w0 >> 24) & 0xFF
            ndim = (w0 >> 32) & 0xF
            flags = (w0 >> 36) & 0xF
            seq = (w0 >> 40) & 0xFFFFFF
            if seq != s & 0xFFFFFF:
                raise DecodeError(f"program {p} slot {s}: sequence number {seq}")
            if site == 0 or (nsites is not None and site > nsites):
                raise DecodeError(f"program {p} slot {s}: bad site {site}")
            if kind not in (1, 2, 3, 4, 5) or dtype not in DTYPES:
                raise DecodeError(f"program {p} slot {s}: bad kind/dtype {kind}/{dtype}")
            sw = w[1]
            if flags & 1:
                shape = [sw & 0x1FFFFF]
            else:
                shape = [(sw >> (21 * i)) & 0x1FFFFF for i in range(ndim)]
            if flags & 2:  # closed-form record: expand it as the C decoder does
                if ndim != 1 or flags & 1:
                    raise DecodeError(f"program {p} slot {s}: closed-form record of {ndim} dims")
                w = _expand_closed(w, kind, dtype, shape[0])
                flags &= ~2
            r = Record(p, s, site, kind, dtype, ndim, flags, seq, shape, w)
            r.extra["closed"] = bool((w0 >> 36) & 2)
            r.execution = counts.get(site, 0)
            counts[site] = r.execution + 1
            off = r.value_dump_offset if kind == 1 else r.addr_dump_offset
            if off is not None:
                if off + r.numel > cap:
                    raise DecodeError(f"program {p} slot {s}: dump beyond the arena")
                raw = arena[off : off + r.numel]
                if kind == 1:
                    if dtype in FLOAT_CODES:
                        r.dump = raw.view("<f8").reshape(shape).copy()
                    else:
                        r.dump = raw.reshape(shape).copy()
                else:
                    r.dump = raw.reshape(shape).copy()
            recs.append(r)
    return Decoded(slots, programs, overflow, cursor, cap, ns, recs)


def fake_report(buffer: Any, site_table_json: str, launch_json: str) -> dict[str, Any]:
    """Stand-in for flagprism._ext.debug_report: decodes with this module and writes one JSON."""
    table = json.loads(site_table_json)
    launch = json.loads(launch_json)
    dec = decode(buffer, len(table["sites"]))
    out_dir = launch["output_dir"]
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, launch["stem"] + ".refdecode.json")
    raw_path = None
    if launch.get("export_raw_records"):
        raw_path = os.path.join(out_dir, launch["stem"] + ".fpdbg")
        with open(raw_path, "wb") as f:
            f.write(bytes(memoryview(buffer).cast("B")))
    doc = {
        "site_table": table,
        "launch": {k: v for k, v in launch.items() if k != "ttir"},
        "has_ttir": launch.get("ttir") is not None,
        "overflow_count": dec.overflow,
        "records": [
            {
                "program": r.program,
                "slot": r.slot,
                "site": r.site,
                "kind": r.kind,
                "dtype": r.dtype,
                "shape": r.shape,
                "execution": r.execution,
                "words": r.words,
            }
            for r in dec.records
        ],
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return {
        "txt": None,
        "json": path,
        "op_log_txt": None,
        "op_log_json": None,
        "raw": raw_path,
        "artifacts_dir": None,
        "overflow_count": dec.overflow,
        "_decoded": dec,
    }


# ------------------------------------------------------------------------------------------------
# Host-side references: what a record should say about a NumPy array / a set of addresses
# ------------------------------------------------------------------------------------------------

NP_CODES = {
    np.dtype(np.bool_): 1,
    np.dtype(np.int8): 2,
    np.dtype(np.int16): 3,
    np.dtype(np.int32): 4,
    np.dtype(np.int64): 5,
    np.dtype(np.uint8): 6,
    np.dtype(np.uint16): 7,
    np.dtype(np.uint32): 8,
    np.dtype(np.uint64): 9,
    np.dtype(np.float16): 10,
    np.dtype(np.float32): 12,
    np.dtype(np.float64): 13,
}


def _close(got: float, want: float, rel: float, scale: float) -> bool:
    return abs(got - want) <= rel * max(abs(want), scale, 1e-300)


def check_value(rec: Record, arr: Any, dtype_code: int | None = None, rel: float = 1e-6) -> None:
    """Assert that a value record summarises `arr` (counts, min, max exactly; mean, L2 to rel)."""
    a = np.asarray(arr)
    assert rec.kind == 1, f"site {rec.site}: kind {rec.kind}, want a value record"
    want_code = dtype_code if dtype_code is not None else NP_CODES[a.dtype]
    assert rec.dtype == want_code, f"site {rec.site}: dtype code {rec.dtype}, want {want_code}"
    if a.ndim <= 3:
        assert rec.shape == list(a.shape), (
            f"site {rec.site}: shape {rec.shape}, want {list(a.shape)}"
        )
    else:
        assert rec.flags & 1 and rec.shape == [a.size]
    if a.dtype.kind == "f":
        x = a.astype(np.float64)
        nan = int(np.isnan(x).sum())
        inf = int(np.isinf(x).sum())
        fin = x[np.isfinite(x)]
    else:
        x = a.astype(np.int64) if a.dtype != np.uint64 else a
        nan = inf = 0
        fin = x.ravel()
    ctx = f"site {rec.site} program {rec.program} execution {rec.execution}"
    assert rec.nan_count == nan, f"{ctx}: nan_count {rec.nan_count}, want {nan}"
    assert rec.inf_count == inf, f"{ctx}: inf_count {rec.inf_count}, want {inf}"
    zero = int((x == 0).sum())
    assert rec.zero_count == zero, f"{ctx}: zero_count {rec.zero_count}, want {zero}"
    if fin.size == 0:
        assert rec.min is None and rec.max is None and rec.mean is None
        return
    fd = fin.astype(np.float64)
    if a.dtype.kind == "f":
        assert rec.min == float(fd.min()), f"{ctx}: min {rec.min!r}, want {float(fd.min())!r}"
        assert rec.max == float(fd.max()), f"{ctx}: max {rec.max!r}, want {float(fd.max())!r}"
    else:
        assert rec.min == int(fin.min()), f"{ctx}: min {rec.min}, want {int(fin.min())}"
        assert rec.max == int(fin.max()), f"{ctx}: max {rec.max}, want {int(fin.max())}"
    scale = float(np.abs(fd).mean())
    mean = float(fd.sum() / fd.size)
    assert _close(rec.mean, mean, rel, scale), f"{ctx}: mean {rec.mean!r}, want {mean!r}"
    l2 = float(np.sqrt((fd * fd).sum()))
    assert _close(rec.l2_norm, l2, rel, 0.0), f"{ctx}: l2 {rec.l2_norm!r}, want {l2!r}"


def check_addr(
    rec: Record,
    kind: int,
    base: int,
    elem_offsets: Any,
    active: Any,
    elem_size: int,
    dtype_code: int,
) -> None:
    """Assert that an address record describes lanes base + elem_offsets * elem_size."""
    offs = np.asarray(elem_offsets, dtype=np.int64)
    act = np.broadcast_to(np.asarray(active, dtype=bool), offs.shape)
    ctx = f"site {rec.site} program {rec.program} execution {rec.execution}"
    assert rec.kind == kind, f"{ctx}: kind {rec.kind}, want {kind}"
    assert rec.dtype == dtype_code, f"{ctx}: pointee dtype {rec.dtype}, want {dtype_code}"
    assert rec.status == 0, f"{ctx}: status {rec.status}"
    if offs.ndim <= 3:
        assert rec.shape == list(offs.shape), f"{ctx}: shape {rec.shape}, want {list(offs.shape)}"
    addrs = base + offs.ravel() * elem_size
    a = act.ravel()
    assert rec.active == int(a.sum()), f"{ctx}: active {rec.active}, want {int(a.sum())}"
    if not a.any():
        assert rec.first_addr is None and rec.span == 0
        return
    idx = np.nonzero(a)[0]
    assert rec.first_addr == int(addrs[idx[0]]), (
        f"{ctx}: first {rec.first_addr}, want {int(addrs[idx[0]])}"
    )
    assert rec.last_addr == int(addrs[idx[-1]]), (
        f"{ctx}: last {rec.last_addr}, want {int(addrs[idx[-1]])}"
    )
    assert rec.min_addr == int(addrs[a].min())
    assert rec.max_addr == int(addrs[a].max())
    assert rec.span == int(addrs[a].max() - addrs[a].min() + elem_size)


# ------------------------------------------------------------------------------------------------
# Test session helpers
# ------------------------------------------------------------------------------------------------


def spy_report(real: Any | None) -> Any:
    """A report function that decodes every buffer here too (result key "_decoded") and hands it
    to the real writer when there is one, else to fake_report."""

    def report(buffer: Any, site_table_json: str, launch_json: str) -> dict[str, Any]:
        dec = decode(buffer, len(json.loads(site_table_json)["sites"]))
        res = (
            real(buffer, site_table_json, launch_json)
            if real is not None
            else fake_report(buffer, site_table_json, launch_json)
        )
        res = dict(res)
        res["_decoded"] = dec
        res["_site_table"] = json.loads(site_table_json)
        res["_launch"] = json.loads(launch_json)
        return res

    return report


def install(debugger: Any, output_dir: str) -> None:
    """Reset the Debugger for a test and route its reports through spy_report."""
    debugger.deactivate()
    debugger.reset_config()
    debugger.clear_exported_runs()
    debugger.configure(output_dir=output_dir)
    real = debugger._ext_report if debugger.is_available() else None
    debugger._report_fn = spy_report(real)


def installed(debugger: Any, output_dir: str) -> Iterator[Any]:
    """The body of the tests' `dbg` fixtures (`yield from`): install(), hand the Debugger to the
    test, then leave it inactive, with default settings and no exported runs."""
    saved = debugger._report_fn
    install(debugger, output_dir)
    try:
        yield debugger
    finally:
        debugger.deactivate()
        debugger.reset_config()
        debugger.clear_exported_runs()
        debugger._report_fn = saved


def decoded(run: dict[str, Any]) -> Decoded:
    return run["paths"]["_decoded"]


def site_table(run: dict[str, Any]) -> dict[str, Any]:
    """The site table the rewriter handed to the report writer for this run."""
    return run["paths"]["_site_table"]


def launch_info(run: dict[str, Any]) -> dict[str, Any]:
    """The launch JSON handed to the report writer for this run."""
    return run["paths"]["_launch"]
