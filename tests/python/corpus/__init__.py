# SPDX-License-Identifier: Apache-2.0
"""The planted-bug corpus: kernels written the way real code is (Triton's tutorials, FlagGems,
Liger-Kernel, vLLM), each with a correct version and a planted bug, and the exact findings the
Debugger's check mode must give for each.

Layout
------
* ``elementwise.py``: neighbour overruns (the next tensor, another slice of one storage), run-time
  trip counts, loop-carried pointers, ``tl.where``-chosen pointers, helpers two deep, a 2-D grid,
  a persistent kernel, histograms, embeddings, dropout, RoPE, vLLM's reshape_and_cache, causal
  conv1d, a MoE gather;
* ``attention.py``: flash attention forward (block pointers advanced in a helper) and backward,
  paged attention through a block table;
* ``gemm.py``: the tutorial matmul, split-K with atomics, GEMMs through device and host tensor
  descriptors (one persistent), a block-pointer reduction;
* ``norms.py``: layer-norm forward (looped, and fused affine parameters) and backward with a lock
  array;
* ``softmax.py``: masked and length-masked softmax, a varlen (cu_seqlens) softmax, cross entropy;
* ``numeric.py``: NaN, Inf, domain and precision bugs: int8 quantize/dequantize, Adam, softplus,
  BCE, fp16 gradients, and a NaN that descends across two launches.

Each module lists its ``CASES``; this package gathers them in ``CASES`` / ``BY_NAME``.

A case
------
``Case.make(device, planted)`` builds the arguments (deterministic data: seeded generators on the
CPU, then moved) and returns a ``Setup``: the launches, the result tensors, and ``verify()``, which
compares the results with a torch reference (for a planted bug: the part of the result the bug
must not change, where that is meaningful). ``Case.expect(setup)`` gives the exact findings of the
planted version: kind, line (the line holding the marker ``# BUG[tag]``, found at import), the
parameter, where the access went, the bytes before/past the view, the lanes, the first program
and address, the loop iteration; for numeric findings the element count and whether the value came
from memory. The numbers are worked out from the sizes and data the case builds (the comments in
each module show the arithmetic); nothing is copied from the tool's output.

Memory layout
-------------
Every tensor of a case is carved out of one zeroed *arena* allocation per case, each with a
storage of its own that is exactly its bytes (``torch._C._construct_storage_from_data_pointer``,
as ``torch.from_numpy`` does on the CPU and the caching allocator does on a GPU). So the layout is
chosen, and the same on the CPU and on a GPU: tensors placed ``adjacent`` touch (an overrun lands
in the next tensor: ``other_storage``), others are ``GAP`` bytes apart (an overrun lands in no
allocation of the launch: ``outside_allocations``), and slices of one carved tensor share its
storage (``inside_storage``). Overruns are never performed under check mode (the default
``check_continue="suppress"``), and they stay inside the arena anyway.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

ALL_CHECKS = "bounds,nan,inf,domain,precision"

#: bytes between two non-adjacent tensors of an arena: more than any planted overrun reaches
GAP = 8192
ARENA_BYTES = 4 << 20

# ------------------------------------------------------------------------------------------------
# Markers
# ------------------------------------------------------------------------------------------------

_MARK = re.compile(r"#\s*BUG\[([A-Za-z0-9_]+)\]")
#: tag -> (file, line) of every ``# BUG[tag]`` marker in the corpus modules
MARKERS: dict[str, tuple[str, int]] = {}


def scan_markers(path: str | Path) -> None:
    """Record, for every ``# BUG[tag]`` comment of a corpus module (tags are unique), the first line
    of the innermost statement holding it: the line a finding names, wherever a formatter puts
    the comment of a statement it wraps over several lines."""
    import ast
    import io
    import tokenize

    p = Path(path).resolve()
    text = p.read_text()
    spans = [
        (n.lineno, n.end_lineno or n.lineno)
        for n in ast.walk(ast.parse(text))
        if isinstance(n, ast.stmt)
        and not isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.If, ast.For, ast.While, ast.With))
    ]
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type != tokenize.COMMENT:
            continue
        for tag in _MARK.findall(tok.string):
            row = tok.start[0]
            holders = [s for s in spans if s[0] <= row <= s[1]]
            if not holders:
                raise ValueError(f"{p}:{row}: marker BUG[{tag}] outside a statement")
            line = max(holders)[0]  # the innermost: the latest start
            if tag in MARKERS and MARKERS[tag] != (str(p), line):
                raise ValueError(f"marker BUG[{tag}] twice: {MARKERS[tag]} and {p}:{line}")
            MARKERS[tag] = (str(p), line)


def line_of(tag: str) -> int:
    return MARKERS[tag][1]


def file_of(tag: str) -> str:
    return MARKERS[tag][0]


# ------------------------------------------------------------------------------------------------
# Arena
# ------------------------------------------------------------------------------------------------


class Arena:
    """One zeroed allocation per case; tensors carved out of it with storages of their own."""

    def __init__(self, device: str, nbytes: int = ARENA_BYTES):
        self.buf = torch.zeros(nbytes, dtype=torch.uint8, device=device)
        self.device = self.buf.device  # with its index (cuda:0)
        self.base = self.buf.data_ptr()
        self.nbytes = nbytes
        self.cursor = GAP  # room before the first tensor too

    def tensor(
        self,
        shape: tuple[int, ...] | int,
        dtype: torch.dtype = torch.float32,
        *,
        fill: torch.Tensor | None = None,
        adjacent: bool = False,
    ) -> torch.Tensor:
        """A contiguous tensor whose storage is exactly its bytes: right after the previous one
        (``adjacent``) or GAP bytes after it, 128-byte aligned."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if not adjacent:
            self.cursor = (self.cursor + GAP + 127) // 128 * 128
        elt = torch.empty(0, dtype=dtype).element_size()
        nbytes = math.prod(shape) * elt
        assert self.cursor % elt == 0
        if self.cursor + nbytes + GAP > self.nbytes:
            raise MemoryError("arena too small")
        storage = torch._C._construct_storage_from_data_pointer(
            self.base + self.cursor, self.device, nbytes
        )
        strides = []
        acc = 1
        for s in reversed(shape):
            strides.append(acc)
            acc *= s
        t = torch.empty(0, dtype=dtype, device=self.device).set_(
            storage, 0, shape, tuple(reversed(strides))
        )
        self.cursor += nbytes
        if fill is not None:
            t.copy_(fill.to(dtype))
        return t


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def randn(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=gen(seed))


def rand(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.rand(*shape, generator=gen(seed))


# ------------------------------------------------------------------------------------------------
# Cases
# ------------------------------------------------------------------------------------------------


@dataclass
class Launch:
    kernel: Any
    grid: tuple[int, ...]
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __call__(self) -> Any:
        return self.kernel[self.grid](*self.args, **self.kwargs)


@dataclass
class Setup:
    launches: list[Launch]
    #: the results, in a fixed order (the GPU test compares them between runs)
    outputs: list[torch.Tensor]
    #: asserts the results against a torch reference (correct version), or the part a planted bug
    #: must leave unchanged (None: nothing meaningful to compare)
    verify: Callable[[], None] | None = None
    #: the kernel parameters' tensors by name (what the layout explanation of the GPU test reads)
    tensors: dict[str, torch.Tensor] = field(default_factory=dict)
    arena: Arena | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def run(self) -> None:
        for launch in self.launches:
            launch()


@dataclass(frozen=True)
class Expect:
    """One exact finding. None: not compared (the field does not apply)."""

    kind: str
    tag: str  # the marker of the finding's line
    kernel: str | None = None  # the launched kernel (checked for cases with several launches)
    function: str | None = None  # the function holding the line (a helper's name), default kernel
    chain: tuple[str, ...] | None = None  # the helpers called down to `function` (their names)
    param: str | None = None
    param_known: bool | None = None
    location: str | None = None
    other_param: str | None = None
    past: int | None = None  # bytes_past_end
    before: int | None = None  # bytes_before_start
    lanes: int | None = None  # lanes_out (and suppressed, which equals it under check mode)
    #: lanes not performed, where that is not `lanes`: 0 for a tensor-descriptor access, which
    #: check mode checks and reports but cannot mask
    suppressed: int | None = None
    addr: int | None = None  # first offending address minus the start of `param`'s view
    program: tuple[int, int, int] | None = None
    programs: int | None = None  # program_count
    instances: int | None = None  # instance_count
    iteration: tuple[str, int] | None | str = "any"  # (var, value), None, or "any" (not compared)
    count: int | None = None
    from_memory: bool | None = None
    value: float | None = None
    target_dtype: str | None = None

    @property
    def line(self) -> int:
        return line_of(self.tag)

    @property
    def file(self) -> str:
        return file_of(self.tag)


@dataclass
class Case:
    name: str
    family: str
    what: str  # the planted bug, in words
    make: Callable[[str, bool], Setup]
    expect: Callable[[Setup], list[Expect]]
    checks: str = "bounds"  # what the planted version runs under
    features: tuple[str, ...] = ()  # flagprism.compat features the case needs
    interpreter: bool = True  # False: the interpreter cannot run it (GPU only)

    @property
    def kinds(self) -> set[str]:
        return {c for c in self.checks.split(",")}


# ------------------------------------------------------------------------------------------------
# Findings
# ------------------------------------------------------------------------------------------------

#: fields of a normalised finding that the comparisons use
FIELDS = (
    "kind",
    "kernel",
    "function",
    "file",
    "line",
    "chain",
    "param",
    "param_known",
    "location",
    "other_param",
    "bytes_past_end",
    "bytes_before_start",
    "lanes_out",
    "suppressed",
    "addr",
    "program",
    "program_count",
    "instance_count",
    "iteration",
    "count",
    "from_memory",
    "value",
    "target_dtype",
)


def normalize(f: dict[str, Any], kernel: str) -> dict[str, Any]:
    """A finding reduced to what the corpus compares (addresses relative to the parameter's view,
    so that two runs with other addresses compare equal)."""
    view = f.get("view") or {}
    addr = f.get("address")
    it = f.get("iteration")
    return {
        "kind": f.get("kind"),
        "kernel": kernel,
        "function": f.get("function"),
        "file": f.get("file"),
        "line": f.get("line"),
        "chain": tuple(c.get("function") for c in (f.get("chain") or [])),
        "param": f.get("param"),
        "param_known": f.get("param_known"),
        "location": f.get("location"),
        "other_param": f.get("other_param"),
        "bytes_past_end": f.get("bytes_past_end"),
        "bytes_before_start": f.get("bytes_before_start"),
        "lanes_out": f.get("lanes_out"),
        "suppressed": f.get("suppressed"),
        "addr": (addr - view["start"])
        if addr is not None and view.get("start") is not None
        else None,
        "program": tuple(f["program"]) if f.get("program") is not None else None,
        "program_count": f.get("program_count"),
        "instance_count": f.get("instance_count"),
        "iteration": (it.get("var"), it.get("value")) if it else None,
        "count": f.get("count"),
        "from_memory": f.get("from_memory"),
        "value": f.get("value"),
        "target_dtype": f.get("target_dtype"),
    }


def findings_of(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [normalize(f, r["kernel"]) for r in runs for f in (r.get("findings") or [])]


def _want(e: Expect) -> dict[str, Any]:
    """The normalised fields an Expect fixes."""
    w: dict[str, Any] = {"kind": e.kind, "line": e.line, "file": e.file}
    if e.kernel is not None:
        w["kernel"] = e.kernel
    if e.function is not None:
        w["function"] = e.function
    if e.chain is not None:
        w["chain"] = tuple(e.chain)
    if e.kind in ("out_of_bounds", "descriptor_extent"):
        w["param"] = e.param
        w["param_known"] = True if e.param_known is None else e.param_known
        w["location"] = e.location
        w["other_param"] = e.other_param
        w["bytes_past_end"] = e.past or 0
        w["bytes_before_start"] = e.before or 0
    if e.kind == "out_of_bounds" and e.lanes is not None:
        w["lanes_out"] = e.lanes
        w["suppressed"] = e.lanes if e.suppressed is None else e.suppressed
    for k, v in (
        ("addr", e.addr),
        ("program", e.program),
        ("program_count", e.programs),
        ("instance_count", e.instances),
        ("count", e.count),
        ("from_memory", e.from_memory),
        ("target_dtype", e.target_dtype),
    ):
        if v is not None:
            w[k] = v
    if e.iteration != "any":
        w["iteration"] = e.iteration
    if e.value is not None:
        w["value"] = e.value
    return w


def _same(k: str, want: Any, got: Any) -> bool:
    if k == "value" and isinstance(want, float) and isinstance(got, (int, float)):
        return math.isclose(want, got, rel_tol=1e-6, abs_tol=0.0) or want == got
    return want == got


def compare(expects: list[Expect], found: list[dict[str, Any]]) -> list[str]:
    """Differences between the expected findings and the normalised ones found (empty: equal).
    Each expected finding is paired with the found one of its kind and line (and kernel)."""
    problems: list[str] = []
    left = list(found)
    for e in expects:
        w = _want(e)
        cands = [
            f
            for f in left
            if f["kind"] == e.kind
            and f["line"] == e.line
            and (e.kernel is None or f["kernel"] == e.kernel)
        ]
        if not cands:
            problems.append(f"missing {e.kind} at line {e.line} ({e.tag})")
            continue
        # the candidate that differs least
        best = min(cands, key=lambda f: sum(not _same(k, v, f.get(k)) for k, v in w.items()))
        left.remove(best)
        diffs = [
            f"{k}: want {v!r}, got {best.get(k)!r}"
            for k, v in w.items()
            if not _same(k, v, best.get(k))
        ]
        if diffs:
            problems.append(f"{e.kind} at line {e.line} ({e.tag}): " + "; ".join(diffs))
    for f in left:
        problems.append(
            f"unexpected {f['kind']} in {f['kernel']} at {Path(f['file'] or '?').name}:{f['line']} "
            f"(param {f['param']}, location {f['location']}, count {f['count']}, "
            f"lanes {f['lanes_out']}, past {f['bytes_past_end']}, before {f['bytes_before_start']})"
        )
    return problems


# ------------------------------------------------------------------------------------------------
# Running a case under the Debugger
# ------------------------------------------------------------------------------------------------


def run_checked(
    debugger: Any, case: Case, device: str, planted: bool, checks: str | None = None
) -> tuple[Setup, list[dict[str, Any]]]:
    """Build the case on `device`, run its launches in check mode, return (setup, runs)."""
    setup = case.make(device, planted)
    debugger.activate(check=checks or (case.checks if planted else ALL_CHECKS))
    try:
        setup.run()
        if device != "cpu":
            torch.cuda.synchronize()
    finally:
        debugger.deactivate()
    return setup, debugger.take_exported_runs()


def run_plain(case: Case, device: str, planted: bool) -> Setup:
    """Build and run the case without the Debugger."""
    setup = case.make(device, planted)
    setup.run()
    if device != "cpu":
        torch.cuda.synchronize()
    return setup


# ------------------------------------------------------------------------------------------------
# Layout: where an address lies among a launch's tensors
# ------------------------------------------------------------------------------------------------


def _view_range(t: torch.Tensor) -> tuple[int, int]:
    if t.numel() == 0:
        return t.data_ptr(), t.data_ptr()
    lo = hi = t.data_ptr()
    for size, stride in zip(t.shape, t.stride()):
        if stride >= 0:
            hi += (size - 1) * stride * t.element_size()
        else:
            lo += (size - 1) * stride * t.element_size()
    return lo, hi + t.element_size()


def _storage_range(t: torch.Tensor) -> tuple[int, int]:
    s = t.untyped_storage()
    return s.data_ptr(), s.data_ptr() + s.nbytes()


def explain_location(
    param: str, address: int, tensors: dict[str, torch.Tensor]
) -> tuple[str, str | None]:
    """(location, other_param) of an offending `address` of an access through `param`, from the
    addresses of the launch's tensors: the rule of the Debugger's check (docs/guide/debugger.md,
    "Out of bounds"), worked out here independently."""
    base = tensors[param]
    other_view = next(
        (
            n
            for n, t in tensors.items()
            if n != param and _view_range(t)[0] <= address < _view_range(t)[1]
        ),
        None,
    )
    lo, hi = _storage_range(base)
    if lo <= address < hi:
        return "inside_storage", other_view
    for n, t in tensors.items():
        if n == param:
            continue
        lo, hi = _storage_range(t)
        if lo <= address < hi:
            return "other_storage", other_view or n
    return "outside_allocations", None


# ------------------------------------------------------------------------------------------------
# Differential comparison (GPU against the interpreter)
# ------------------------------------------------------------------------------------------------

#: what two runs of one case on different backends must agree on (the first offending address is
#: compared relative to its view; `value` is not compared: a GPU may contract a multiply-add)
DIFF_FIELDS = (
    "kind",
    "kernel",
    "function",
    "line",
    "chain",
    "param",
    "param_known",
    "location",
    "other_param",
    "bytes_past_end",
    "bytes_before_start",
    "lanes_out",
    "suppressed",
    "addr",
    "count",
    "from_memory",
    "program",
    "program_count",
    "instance_count",
    "iteration",
    "target_dtype",
)
#: the fields that depend on where the allocations lie
LAYOUT_FIELDS = ("location", "other_param")


def jsonable(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Normalised findings as JSON gives them back (tuples become lists)."""
    import json

    return json.loads(json.dumps(found))


def differences(
    a: list[dict[str, Any]],
    b: list[dict[str, Any]],
    explain: Callable[[dict[str, Any]], tuple[str, str | None]] | None = None,
) -> list[str]:
    """Differences between two runs' normalised (jsonable) findings of one case. Findings pair by
    (kind, kernel, line, param). Where `location`/`other_param` differ, `explain(finding of a)`
    (the layout of run a) must give a's values: the allocations lay elsewhere, nothing else."""

    def key(f: dict[str, Any]) -> tuple[Any, ...]:
        return (f["kind"], f["kernel"], f["line"], f["param"])

    out: list[str] = []
    left = sorted(a, key=lambda f: repr(key(f)))
    right = sorted(b, key=lambda f: repr(key(f)))
    rk = [key(f) for f in right]
    for f in left:
        k = key(f)
        if k not in rk:
            out.append(f"only in the first run: {k}")
            continue
        i = rk.index(k)
        g = right.pop(i)
        rk.pop(i)
        diff = [n for n in DIFF_FIELDS if f.get(n) != g.get(n)]
        layout = [n for n in diff if n in LAYOUT_FIELDS]
        if layout:
            if explain is not None and explain(f) == (f.get("location"), f.get("other_param")):
                diff = [n for n in diff if n not in LAYOUT_FIELDS]
        if diff:
            out.append(f"{k}: " + "; ".join(f"{n}: {f.get(n)!r} vs {g.get(n)!r}" for n in diff))
    out.extend(f"only in the second run: {k}" for k in rk)
    return out


# ------------------------------------------------------------------------------------------------
# The corpus
# ------------------------------------------------------------------------------------------------

from . import attention, elementwise, gemm, norms, numeric, softmax  # noqa: E402

_MODULES = (elementwise, attention, gemm, norms, softmax, numeric)
for _m in _MODULES:
    scan_markers(_m.__file__)

CASES: list[Case] = [c for m in _MODULES for c in m.CASES]
BY_NAME: dict[str, Case] = {c.name: c for c in CASES}
assert len(BY_NAME) == len(CASES), "duplicate case names"
