# SPDX-License-Identifier: Apache-2.0
"""Source rewriter of the Debugger: turns a kernel with collection markers into its twin.

Given a ``@triton.jit`` function whose body holds ``fpl.collect_start()`` / ``fpl.collect_end()``
pairs, this module builds the *instrumented twin*: the same function with one trailing parameter
``__fp_ctx`` (the record buffer) and, on the very lines of the statements it observes, calls of
the record helpers of ``_records.py``. Line numbers of the body stay those of the user's file, so
Triton IR locations and interpreter tracebacks map straight back to the user's source. It also
produces the statement and site tables of ``docs/formats/record-format.md`` and what the launcher needs
to size the record buffer (sites per loop, loop bounds it may evaluate on the host).

It does not launch, allocate or decode anything; ``debugger.py`` and ``_launch.py`` do.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import inspect
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import triton.language as tl

from flagprism import _calltwins, _findsites, _memforms, compat

#: Names the twin adds; a kernel that already uses one of them cannot be instrumented.
CTX = "__fp_ctx"
SEQ = "__fp_n"
BASE = "__fp_b"
SLOTS = "__fp_S"
H_BEGIN = "__fp_begin"
H_VALUE = "__fp_value"
H_ADDR = "__fp_addr"
H_DESC = "__fp_desc"
H_VAFF = "__fp_vaff"  # closed-form records of index arithmetic (_records.py, "Closed-form records")
H_VCMP = "__fp_vcmp"
H_ADDRC = "__fp_addrc"
_RESERVED_PREFIX = ("__fp_", "__fpu_")  # the twin's own names and its hoisted temporaries

_LOAD_FNS = ("load",)
_STORE_FNS = ("store",)
_ATOMIC_OPS = ("add", "max", "min", "and", "or", "xor", "xchg", "cas")
#: Parameters of tl.atomic_cas and of the other tl.atomic_* (Triton 3.x).
_CAS_PARAMS = ("pointer", "cmp", "val", "sem", "scope")
_ATOMIC_PARAMS = ("pointer", "val", "mask", "sem", "scope")
#: Descriptor methods and what they do: (kind, op).
_DESC_METHODS = {"load": ("load", ""), "store": ("store", ""), "gather": ("load", "gather"),
                 "scatter": ("store", "scatter")} | {f"atomic_{o}": ("atomic", o)
                                                      for o in ("add", "min", "max", "and", "or", "xor")}
H_BPMAKE = "__fp_bpmake"  # block pointers and descriptors (_memforms.py, _records.py)
H_BPADV = "__fp_bpadv"
H_BPADDR = "__fp_bpaddr"
H_DESCADDR = "__fp_descaddr"
H_DESCGATHER = "__fp_descgather"
H_DEXT = "__fp_dext"
H_MAND = "__fp_mand"  # a mask ANDed with a branch condition (conditional expressions)
# Parameters of tl.load/tl.store in order (Triton 3.x). Written out because the interpreter may
# leave triton.language.core patched with wrappers that hide the real signatures.
_LOAD_PARAMS = ("pointer", "mask", "other", "boundary_check", "padding_option", "cache_modifier",
                "eviction_policy", "volatile")
_STORE_PARAMS = ("pointer", "value", "mask", "boundary_check", "cache_modifier", "eviction_policy")


class RewriteError(ValueError):
    """A kernel cannot be instrumented; the message names the file and line."""

    def __init__(self, message: str, file: str = "", line: int = 0) -> None:
        self.file = file
        self.line = line
        super().__init__(f"{file}:{line}: {message}" if file else message)


class MarkerError(RewriteError):
    """Unbalanced, nested or misplaced collection markers."""


class UnsupportedError(RewriteError):
    """A construct inside a collection region that the Debugger cannot observe."""


@dataclass
class Statement:
    id: int
    line: int
    col: int
    end_line: int
    source: str
    loop_depth: int
    frame: int = 0  # 0: the kernel's own body; else the helper call site (_calltwins.Frame)

    def to_json(self) -> dict[str, Any]:
        d = {"id": self.id, "line": self.line, "col": self.col, "end_line": self.end_line,
             "source": self.source, "loop_depth": self.loop_depth}
        if self.frame:
            d["frame"] = self.frame
        return d


@dataclass
class Unobserved:
    """Something the region holds that the twin does not observe, and why (the coverage account
    of docs/guide/debugger.md). `what`: "memory" (a load, store, atomic or descriptor access) or
    "statement"."""

    what: str
    line: int
    col: int
    source: str
    reason: str
    frame: int = 0

    def to_json(self) -> dict[str, Any]:
        d = {"what": self.what, "line": self.line, "col": self.col, "source": self.source,
             "reason": self.reason}
        if self.frame:
            d["frame"] = self.frame
        return d


@dataclass
class Site:
    id: int
    statement: int
    kind: str  # "value", "load" or "store"
    name: str
    reads: list[str]
    loops: tuple[int, ...]  # ids of the enclosing loops, outermost first
    dumps: bool = False
    info: dict[str, Any] = field(default_factory=dict)  # findings inputs (role, base_params, ...)

    def to_json(self) -> dict[str, Any]:
        d = {"id": self.id, "statement": self.statement, "kind": self.kind, "name": self.name,
             "reads": list(self.reads)}
        d.update(self.info)
        return d


@dataclass
class Loop:
    id: int
    line: int
    kind: str  # "for" or "while"
    range_args: list[str] | None  # host-evaluable range(...) arguments, if the loop has them
    parent: int | None
    frame: int = 0  # the frame whose names range_args uses (_calltwins.Frame)
    extra_trip: bool = False  # a `while` test: one more run than the body


@dataclass
class Twin:
    """Everything known about one instrumented twin before it is launched."""

    kernel_name: str
    source_file: str
    text: str
    path: str
    level: int
    addr_level: int
    statements: list[Statement]
    sites: list[Site]
    loops: list[Loop]
    host_defs: list[tuple[int, str, str]]  # (line, name, expression) of top-level assignments
    fn: Callable[..., Any] | None = None
    jit: Any = None
    extra: dict[str, Any] = field(default_factory=dict)
    frames: list[Any] = field(default_factory=list)  # _calltwins.Frame, ids 1..n
    subtwins: list[Any] = field(default_factory=list)  # _calltwins.SubTwin, callees first
    unobserved: list[Unobserved] = field(default_factory=list)
    desc_params: list[str] = field(default_factory=list)  # kernel params passed a host TensorDescriptor

    @property
    def has_dumps(self) -> bool:
        return any(s.dumps for s in self.sites)

    def site_table(self) -> dict[str, Any]:
        return {
            "version": 1,
            "kernel": self.kernel_name,
            "file": self.source_file,
            "level": self.level,
            "addr_level": self.addr_level,
            "statements": [s.to_json() for s in self.statements],
            "sites": [s.to_json() for s in self.sites],
            "frames": [f.to_json() for f in self.frames],
            "unobserved": [u.to_json() for u in self.unobserved],
        }


class _Shared:
    """The tables a kernel and the twins of its helpers fill together (ids are global)."""

    def __init__(self) -> None:
        self.statements: list[Statement] = []
        self.sites: list[Site] = []
        self.loops: list[Loop] = []
        self.frames: list[Any] = []
        self.subtwins: list[Any] = []
        self.unobserved: list[Unobserved] = []
        self.desc_params: list[str] = []


# ------------------------------------------------------------------------------------------------
# Resolving names of the kernel's module statically
# ------------------------------------------------------------------------------------------------

_MISSING = object()


def _resolve(node: ast.AST, scope: dict[str, Any]) -> Any:
    """The object an expression like ``tl.load`` or ``fpl.collect_start`` names, or _MISSING:
    triton.language's own object where the interpreter has patched it (compat.unpatched)."""
    if isinstance(node, ast.Name):
        return compat.unpatched(scope.get(node.id, _MISSING))
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, scope)
        if base is _MISSING:
            return _MISSING
        return compat.unpatched(getattr(base, node.attr, _MISSING))
    return _MISSING


def loop_or_test_heads(st: ast.stmt) -> list[ast.AST] | None:
    """What a `for`, `while` or `if` evaluates itself (not its blocks); None for other
    statements."""
    if isinstance(st, ast.For):
        return [st.target, st.iter]
    if isinstance(st, (ast.While, ast.If)):
        return [st.test]
    return None


def find_call(nodes: list[ast.AST], scope: dict[str, Any],
              kind: Callable[[Any], str | None]) -> ast.Call | None:
    """The first call inside `nodes` whose callee, resolved in `scope`, has a `kind`."""
    for h in nodes:
        for sub in ast.walk(h):
            if isinstance(sub, ast.Call) and kind(_resolve(sub.func, scope)):
                return sub
    return None


def _marker_kind(obj: Any) -> str | None:
    """'start' or 'end' if obj is one of flagprism.language's markers."""
    try:
        from flagprism import language
    except ImportError:  # pragma: no cover - the package is always importable here
        return None
    if obj is language.collect_start:
        return "start"
    if obj is language.collect_end:
        return "end"
    # A marker object from a reloaded module is still a marker.
    fn = getattr(obj, "fn", None)
    if getattr(fn, "__module__", None) == "flagprism.language":
        if fn.__name__ == "collect_start":
            return "start"
        if fn.__name__ == "collect_end":
            return "end"
    return None


def _is_tl(obj: Any, names: tuple[str, ...]) -> bool:
    obj = compat.unpatched(obj)
    for n in names:
        for mod in (tl, tl.core):
            if obj is compat.unpatched(getattr(mod, n, None)):
                return True
    return False


# ------------------------------------------------------------------------------------------------
# The rewriter
# ------------------------------------------------------------------------------------------------


@dataclass
class _Region:
    start: ast.Expr
    end: ast.Expr
    level: int
    addr_level: int


@dataclass
class _Access:
    kind: str  # "load" | "store"
    desc: bool
    site: int
    ptr: str | None  # name or text passed to the helper
    mask: str | None
    value: str | None  # for stores
    name: str


@dataclass
class _Header:
    """A compound statement's header whose accesses are evaluated ahead of it."""

    pre: list[str]  # statements evaluating the header expressions into temporaries
    exprs: list[ast.AST]  # what the header reads instead of its own expressions
    sites: list[int] = field(default_factory=list)  # the header's sites (ids)
    outer_loops: tuple[int, ...] = ()  # the loops around the statement


class _Source:
    """The kernel's source lines, dedented, and how to map them back to the user's file."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        try:
            lines, first = inspect.getsourcelines(fn)
        except (OSError, TypeError) as e:
            raise RewriteError(f"the source of kernel {getattr(fn, '__name__', fn)!r} is not available "
                               "(kernels must be defined in a Python file)") from e
        self.file = fn.__code__.co_filename
        self.first = first
        raw = [ln.rstrip("\r\n") for ln in lines]
        self.indent = self._common_indent(raw)
        self.lines = [ln[len(self.indent):] if ln.strip() else "" for ln in raw]
        self.raw = raw

    @staticmethod
    def _common_indent(lines: list[str]) -> str:
        prefix: str | None = None
        for ln in lines:
            if not ln.strip():
                continue
            lead = ln[:len(ln) - len(ln.lstrip())]
            if prefix is None:
                prefix = lead
            else:
                i = 0
                while i < min(len(prefix), len(lead)) and prefix[i] == lead[i]:
                    i += 1
                prefix = prefix[:i]
        return prefix or ""

    def abs_line(self, lineno: int) -> int:
        return self.first + lineno - 1

    def parse_function(self) -> ast.FunctionDef:
        """The kernel's `def`, parsed from the dedented lines (line numbers relative to them)."""
        text = "\n".join(self.lines) + "\n"
        try:
            tree = ast.parse(text)
        except SyntaxError as e:
            raise RewriteError(f"cannot parse kernel source: {e.msg}", self.file,
                               self.abs_line(e.lineno or 1)) from e
        fdef = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
        if fdef is None:
            raise RewriteError("kernel source holds no function definition", self.file, self.first)
        return fdef

    def segment(self, node: ast.AST) -> str:
        """The user's text of a node, as in the user's file."""
        seg = ast.get_source_segment("\n".join(self.lines) + "\n", node)
        if seg is None:
            return ast.unparse(node)
        if "\n" in seg:
            # Restore the common indentation of continuation lines.
            parts = seg.split("\n")
            seg = "\n".join([parts[0]] + [(self.indent + p) if p else p for p in parts[1:]])
        return seg

    def col(self, node: ast.AST) -> int:
        line = self.lines[node.lineno - 1]
        chars = len(line.encode("utf-8")[:node.col_offset].decode("utf-8", errors="replace"))
        return len(self.indent) + chars


class _Rewriter:

    def __init__(self, jitfn: Any, level: int, addr_level: int, sanitize: bool = False,
                 src: _Source | None = None) -> None:
        self.jitfn = jitfn
        # sanitize: the whole body is one region observing addresses only, markers or not, and
        # constructs that cannot be observed are left as they are instead of refused
        self.sanitize = sanitize
        self.fn = jitfn.fn
        self.src = src if src is not None else _Source(self.fn)
        self.scope: dict[str, Any] = dict(self.fn.__globals__)
        try:
            self.scope.update(inspect.getclosurevars(self.fn).nonlocals)
        except (TypeError, ValueError):
            pass
        self.level = level
        self.addr_level = addr_level
        # tables shared with the twins of the helpers this kernel calls (_calltwins.py)
        self.shared = _Shared()
        self.statements: list[Statement] = self.shared.statements
        self.sites: list[Site] = self.shared.sites
        self.loops: list[Loop] = self.shared.loops
        self.frame = 0  # the kernel's own body
        self.depth = 0  # helper nesting
        self.parent_rw: _Rewriter | None = None
        self.host_defs: list[tuple[int, str, str]] = []
        self.forms = _memforms.Forms(self)  # block pointers and descriptors this function tracks
        # dedented line index (1-based) -> replacement text for whole simple-statement groups
        self.line_edits: dict[int, str] = {}
        self.blank_lines: set[int] = set()
        self.header_override: dict[int, str] = {}  # line -> rewritten header of a compound statement
        self.onelines: set[int] = set()  # header lines whose one-line body was written with them
        self.prologue_extra: list[str] = []  # statements for the `def` line (a first header's accesses)
        self.assigned_here: set[str] = set()  # names this function assigned so far (helpers' reads)
        self.visited: set[int] = set()  # ids of the statements rewritten (the others keep their text)
        self.defined: set[str] = set()
        self.reg_level = level
        self.reg_addr = addr_level
        self.ntemps = 0
        # Values whose record words a later record may replay (name -> temporary holding the
        # words), and offsets summaries later accesses may share ((offsets name, mask name or
        # "") -> temporary). An entry lives while none of its names is reassigned; entries made
        # inside a nested block end with it (see _forget and _compound).
        self.vcache: dict[str, str] = {}
        self.ocache: dict[tuple[str, str], str] = {}
        # Closed-form records: names holding `s + K * tl.arange(LO, HI)` (name -> temporary with
        # the affine description) and comparisons of such a name (name -> (temporary with the
        # comparison's description, the affine's temporary)); same lifetime rules as vcache.
        self.acache: dict[str, str] = {}
        self.ccache: dict[str, tuple[str, str]] = {}

    # -- errors -----------------------------------------------------------------------------------

    def _where(self, node: ast.AST) -> tuple[str, int]:
        return self.src.file, self.src.abs_line(getattr(node, "lineno", 1))

    def marker_error(self, node: ast.AST, msg: str) -> MarkerError:
        f, ln = self._where(node)
        return MarkerError(msg, f, ln)

    def unsupported(self, node: ast.AST, msg: str) -> UnsupportedError:
        f, ln = self._where(node)
        text = self.src.lines[node.lineno - 1].strip() if hasattr(node, "lineno") else ""
        return UnsupportedError(f"{msg} (in `{text}`)" if text else msg, f, ln)

    # -- entry --------------------------------------------------------------------------------------

    def run(self) -> Twin:
        fdef = self.src.parse_function()
        self.fdef = fdef
        self._check_reserved(fdef)
        self.params = [a.arg for a in fdef.args.args
                       if a.annotation is None or not self._is_constexpr_annotation(a.annotation)]
        self.bases = _findsites.PointerBases(fdef, self.params, self._resolve_obj, self._access_kind)
        self.forms.scan(fdef, {})
        if self.sanitize:
            return self._run_sanitize(fdef)
        regions = self._find_regions(fdef)
        if not regions:
            raise MarkerError("kernel has no fpl.collect_start()/collect_end() pair", self.src.file,
                              self.src.abs_line(fdef.lineno))
        self._collect_host_defs(fdef)
        for reg in regions:
            self.reg_level, self.reg_addr = reg.level, reg.addr_level
            self.defined = set()
            self.vcache = {}
            self.ocache = {}
            self.acache = {}
            self.ccache = {}
            block, i0, i1 = self._region_span(reg)
            depth = self._loop_depth_of(reg.start)
            self._block(block[i0 + 1:i1], block, depth, self._loop_chain_of(reg.start))
        self._shadows_outside(fdef)
        text = self._emit(fdef)
        levels = [r.level for r in regions]
        addrs = [r.addr_level for r in regions]
        return self._twin(text, max(levels), max(addrs))

    def _twin(self, text: str, level: int, addr_level: int) -> Twin:
        sh = self.shared
        return Twin(kernel_name=self.fn.__name__, source_file=self.src.file, text=text, path="",
                    level=level, addr_level=addr_level, statements=self.statements, sites=self.sites,
                    loops=self.loops, host_defs=self.host_defs, frames=sh.frames, subtwins=sh.subtwins,
                    unobserved=sh.unobserved, desc_params=sh.desc_params)

    def _shadows_outside(self, fdef: ast.FunctionDef) -> None:
        """Block pointers and descriptors made or moved outside the regions still need their
        shadows kept (a region may access them): the updates are appended to those statements."""
        if not self.forms.kind:
            return
        for node in _memforms._own_nodes(fdef):
            if not isinstance(node, (ast.Assign, ast.AnnAssign)) or id(node) in self.visited:
                continue
            if id(node) not in self.parent_block:
                continue
            ups = self.forms.after_assign(node)
            if ups:
                self._append_after(node, "; ".join(ups))

    def _run_sanitize(self, fdef: ast.FunctionDef) -> Twin:
        """The whole body as one region, markers or not: every load and store an address site
        (sanitize: level 0, addr_level 1) and, for check mode's value checks, every value a
        value site (level 1; addr_level 0 without the bounds check)."""
        self.parent_block: dict[int, tuple[list[ast.stmt], int]] = {}
        self.parent_stmt: dict[int, ast.AST] = {}

        def index(block: list[ast.stmt], owner: ast.AST) -> None:
            for i, st in enumerate(block):
                self.parent_block[id(st)] = (block, i)
                self.parent_stmt[id(st)] = owner
                if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    for sub in self._blocks(st):
                        index(sub, st)

        index(fdef.body, fdef)
        self._collect_host_defs(fdef)
        self.reg_level, self.reg_addr = self.level, self.addr_level
        self._block(fdef.body, fdef.body, 0, ())
        text = self._emit(fdef)
        return self._twin(text, self.level, self.addr_level)

    # -- coverage ------------------------------------------------------------------------------------

    @property
    def lenient(self) -> bool:
        """Leave what cannot be observed unobserved (with a reason) instead of refusing the kernel:
        in sanitize mode and inside helpers."""
        return self.sanitize or self.frame != 0

    def frame_stack(self) -> list[Any]:
        """The helper call frames from this function up to the kernel (their _calltwins.Frame)."""
        out = []
        rw: _Rewriter | None = self
        while rw is not None and rw.frame:
            out.append(rw.frame_obj)  # type: ignore[attr-defined]
            rw = rw.parent_rw
        return out

    def _note_unobserved(self, what: str, node: ast.AST, source: str, reason: str) -> None:
        self.shared.unobserved.append(Unobserved(what=what, line=self.src.abs_line(getattr(node, "lineno", 1)),
                                                 col=self.src.col(node) if hasattr(node, "col_offset") else 0,
                                                 source=source, reason=reason, frame=self.frame))

    def _unobserved_access(self, st: ast.stmt, call: ast.Call, reason: str) -> None:
        if self.reg_addr >= 1:
            self._note_unobserved("memory", st, ast.unparse(call), reason)

    def _unobserved_header(self, st: ast.stmt, reason: str) -> None:
        """Every access and helper call of a header that cannot be evaluated ahead of it."""
        for e in self._header_exprs(st):
            for sub in ast.walk(e):
                if not isinstance(sub, ast.Call):
                    continue
                if self._access_kind(sub) is not None:
                    self._unobserved_access(st, sub, f"in the header of a compound statement: {reason}")
                else:
                    helper = _calltwins.user_helper(self._resolve_obj(sub.func))
                    if helper is not None:
                        self._note_unobserved("statement", st, self._header_text(st),
                                              f"helper {helper.fn.__name__} called in the header of a compound "
                                              f"statement is not observed: {reason}")

    def _unobserved_block(self, st: ast.stmt, reason: str) -> None:
        """Every access of a block left as it is."""
        for sub in ast.walk(st):
            if isinstance(sub, ast.Call) and self._access_kind(sub) is not None:
                self._unobserved_access(st, sub, reason)
        self._note_unobserved("statement", st, self.src.lines[st.lineno - 1].strip(), reason)

    def _unobserved_helper(self, h: "_Hoister", helper: Any, fdef: ast.FunctionDef | None, src: "_Source | None",
                           reason: str) -> None:
        """A helper call left as it is: the call counts as one unobserved statement, and every access
        in the helper's body as an unobserved memory site."""
        self._note_unobserved("statement", h.orig, self.src.segment(h.orig).split("\n")[0], reason)
        if fdef is None:
            try:
                src = _Source(helper.fn)
                fdef = src.parse_function()
            except RewriteError:
                return
        if self.reg_addr < 1 or src is None:
            return
        for sub in ast.walk(fdef):
            if isinstance(sub, ast.Call) and self._access_kind(sub) is not None:
                self.shared.unobserved.append(Unobserved(
                    what="memory", line=src.abs_line(sub.lineno), col=src.col(sub), source=ast.unparse(sub),
                    reason=reason, frame=self.frame))

    # -- findings inputs (python/flagprism/_findsites.py) ---------------------------------------------

    def _resolve_obj(self, node: ast.AST) -> Any:
        obj = _resolve(node, self.scope)
        return None if obj is _MISSING else obj

    def _note_access(self, h: "_Hoister", sid: int, call: ast.Call) -> None:
        """The pointer's candidate base parameters, for the out-of-bounds check."""
        cands = self.bases.of(call)
        self.sites[sid - 1].info.update(base_param=cands[0] if len(cands) == 1 else None, base_params=cands)
        h.accessed.append((call, sid))

    def _operand(self, h: "_Hoister", role: str, target: str | None, operand: ast.AST,
                 put: Callable[[ast.AST], None], text: str | None) -> None:
        """Observe an operand a numerical rule checks: by reference to the variable's latest
        record when the region observes it, else as a value site of its own."""
        extra = {"target_dtype": target} if target else {}
        if isinstance(operand, ast.Constant):
            return
        if isinstance(operand, ast.Name):
            if operand.id in self.defined:
                ref = self._read_ref(operand.id)
                cross = {"frame": ref["frame"], "var": ref["var"]} if isinstance(ref, dict) else {}
                h.checks.append({"role": role, "name": operand.id, **extra, **cross})
                return
            if operand.id in self.params or self._resolve_obj(operand) is not None:
                return  # a launch argument or a global: not a value of this program
        sid = self._new_site(h.statement(), "value", text or ast.unparse(operand), h.reads, h.loops, False)
        self.sites[sid - 1].info.update(role=role, **extra)
        t = h._temp(operand, "r")
        put(t)
        h.pre.append(f"{SEQ} = {H_VALUE}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {ast.unparse(t)}, 0)")

    def _annotate(self, st: ast.stmt, work: ast.stmt, h: "_Hoister", stmt: Statement | None) -> None:
        """After a statement's sites exist: the `loaded` role of `x = tl.load(...)` and the checks
        by reference, carried by the statement's first value site."""
        if stmt is None:
            return
        mine: list[Site] = []
        for s in reversed(self.sites):  # the statement's sites are the last ones made
            if s.statement != stmt.id:
                break
            mine.append(s)
        values = [s for s in reversed(mine) if s.kind == "value"]
        if h.checks and values:
            values[0].info.setdefault("checks", []).extend(h.checks)
        if _findsites.has_inf_literal(st, lambda c: self._access_kind(c) == ("load", False)):
            for s in values:
                s.info["inf_literal"] = True
        if not (isinstance(work, ast.Assign) and len(work.targets) == 1 and isinstance(work.targets[0], ast.Name)):
            return
        v = work.value
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "to" and v.args:
            if getattr(self._resolve_obj(v.args[0]), "name", None) not in ("fp32", "fp64"):
                return
            v = v.func.value
        load = next((sid for call, sid in h.accessed if call is v), None)
        if not isinstance(v, ast.Call) or self._access_kind(v) != ("load", False):
            return
        target = work.targets[0].id
        for s in values:
            if s.name == target and not s.info.get("role"):
                s.info.update(role="loaded", load_site=load, other=_findsites.load_other(v))

    def _check_reserved(self, fdef: ast.FunctionDef) -> None:
        for node in ast.walk(fdef):
            name = None
            if isinstance(node, ast.Name):
                name = node.id
            elif isinstance(node, ast.arg):
                name = node.arg
            if name and name.startswith(_RESERVED_PREFIX):
                raise self.unsupported(node, f"the name {name!r} is reserved for the Debugger's twin")
        a = fdef.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            raise self.unsupported(fdef, "kernels with *args, **kwargs, keyword-only or positional-only "
                                   "parameters cannot be instrumented")

    # -- markers ------------------------------------------------------------------------------------

    def _marker_of(self, stmt: ast.AST) -> str | None:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            return _marker_kind(_resolve(stmt.value.func, self.scope))
        return None

    def _marker_levels(self, call: ast.Call) -> tuple[int, int]:
        level, addr = self.level, self.addr_level
        names = ["level", "addr_level"]
        given: dict[str, ast.AST] = {}
        if len(call.args) > 2:
            raise self.marker_error(call, "collect_start takes at most two arguments (level, addr_level)")
        for i, a in enumerate(call.args):
            given[names[i]] = a
        for kw in call.keywords:
            if kw.arg not in names:
                raise self.marker_error(call, f"collect_start has no argument {kw.arg!r}")
            given[kw.arg] = kw.value
        out = {"level": level, "addr_level": addr}
        for k, node in given.items():
            if isinstance(node, ast.Constant) and node.value is None:
                continue
            if not (isinstance(node, ast.Constant) and isinstance(node.value, int)
                    and not isinstance(node.value, bool) and 0 <= node.value <= 2):
                raise self.marker_error(call, f"collect_start({k}=...) must be a literal 0, 1 or 2")
            out[k] = node.value
        return out["level"], out["addr_level"]

    def _blocks(self, node: ast.AST):
        """Every statement list under node (bodies of compound statements), with its owner."""
        for fld in ("body", "orelse", "finalbody"):
            block = getattr(node, fld, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block
        for h in getattr(node, "handlers", []) or []:
            yield h.body
        for c in getattr(node, "cases", []) or []:
            yield c.body

    def _find_regions(self, fdef: ast.FunctionDef) -> list[_Region]:
        regions: list[_Region] = []
        self.parent_block: dict[int, tuple[list[ast.stmt], int]] = {}
        self.parent_stmt: dict[int, ast.AST] = {}

        def visit_block(block: list[ast.stmt], owner: ast.AST, open_outer: ast.AST | None) -> None:
            open_start: ast.Expr | None = None
            for i, st in enumerate(block):
                self.parent_block[id(st)] = (block, i)
                self.parent_stmt[id(st)] = owner
                kind = self._marker_of(st)
                if kind == "start":
                    if open_start is not None:
                        raise self.marker_error(st, "nested fpl.collect_start(): the region opened at line "
                                                f"{self.src.abs_line(open_start.lineno)} is not closed yet")
                    if open_outer is not None:
                        raise self.marker_error(st, "nested fpl.collect_start(): this statement is inside the "
                                                "region opened at line "
                                                f"{self.src.abs_line(open_outer.lineno)}")
                    open_start = st
                elif kind == "end":
                    if open_start is None:
                        if open_outer is not None:
                            raise self.marker_error(st, "fpl.collect_end() is not in the same block as the "
                                                    "fpl.collect_start() at line "
                                                    f"{self.src.abs_line(open_outer.lineno)}")
                        raise self.marker_error(st, "fpl.collect_end() without a matching fpl.collect_start() "
                                                "in the same block")
                    lv, al = self._marker_levels(open_start.value)
                    regions.append(_Region(open_start, st, lv, al))
                    open_start = None
                else:
                    self._check_marker_misuse(st)
                    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                        for sub in ast.walk(st):
                            if isinstance(sub, ast.stmt) and self._marker_of(sub):
                                raise self.marker_error(sub, "collection markers inside a nested function "
                                                        "are not supported")
                        continue
                    for sub in self._blocks(st):
                        visit_block(sub, st, open_start or open_outer)
            if open_start is not None:
                raise self.marker_error(open_start, "fpl.collect_start() without a matching fpl.collect_end() "
                                        "in the same block")

        visit_block(fdef.body, fdef, None)
        return regions

    def _check_marker_misuse(self, st: ast.stmt) -> None:
        """Markers used inside expressions (x = fpl.collect_start(), if fpl.collect_end(): ...)."""
        heads = loop_or_test_heads(st)
        if heads is None:
            if isinstance(st, ast.With):
                heads = list(st.items)
            elif self._is_compound(st):
                heads = []
            else:
                heads = [st]
        call = find_call(heads, self.scope, _marker_kind)
        if call is not None:
            raise self.marker_error(call, "fpl.collect_start()/collect_end() must be statements of their own")

    def _region_span(self, reg: _Region) -> tuple[list[ast.stmt], int, int]:
        block, i0 = self.parent_block[id(reg.start)]
        _, i1 = self.parent_block[id(reg.end)]
        return block, i0, i1

    def _ancestors(self, st: ast.AST) -> list[ast.AST]:
        out = []
        cur = self.parent_stmt.get(id(st))
        while cur is not None and cur is not self.fdef:
            out.append(cur)
            cur = self.parent_stmt.get(id(cur))
        return out

    def _loop_depth_of(self, st: ast.AST) -> int:
        return sum(1 for a in self._ancestors(st) if isinstance(a, (ast.For, ast.While)))

    def _loop_chain_of(self, st: ast.AST) -> tuple[int, ...]:
        chain: list[int] = []
        for a in reversed(self._ancestors(st)):
            if isinstance(a, (ast.For, ast.While)):
                chain.append(self._new_loop(a, chain[-1] if chain else None))
        return tuple(chain)

    # -- host-evaluable definitions (for sizing loops) ---------------------------------------------

    def _collect_host_defs(self, fdef: ast.FunctionDef) -> None:
        for st in fdef.body:
            line = self.src.abs_line(st.lineno)
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                self.host_defs.append((line, st.targets[0].id, ast.unparse(st.value)))
            elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value is not None:
                self.host_defs.append((line, st.target.id, ast.unparse(st.value)))
            elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name):
                t = st.target.id
                self.host_defs.append((line, t, f"({t}) {_binop_text(st.op)} ({ast.unparse(st.value)})"))
            else:
                for sub in ast.walk(st):
                    if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                        self.host_defs.append((line, sub.id, ""))  # set in a nested block: unknown

    def _new_loop(self, node: ast.AST, parent: int | None, header_only: bool = False) -> int:
        """A loop of the site table's sizing. header_only: the loop of a `while` test, which runs
        once more than the body (counted as one more iteration)."""
        range_args: list[str] | None = None
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Call):
            obj = _resolve(node.iter.func, self.scope)
            is_range = obj is range or (isinstance(node.iter.func, ast.Name) and node.iter.func.id == "range"
                                        and obj is _MISSING)
            if is_range or _is_tl(obj, ("range", "static_range")):
                if not node.iter.keywords or all(k.arg in ("num_stages", "loop_unroll_factor", "warp_specialize",
                                                           "flatten", "disallow_acc_multi_buffer")
                                                 for k in node.iter.keywords):
                    range_args = [ast.unparse(a) for a in node.iter.args]
        lid = len(self.loops)
        self.loops.append(Loop(lid, self.src.abs_line(node.lineno), "for" if isinstance(node, ast.For) else "while",
                               range_args, parent, self.frame, extra_trip=header_only))
        return lid

    # -- region bodies --------------------------------------------------------------------------------

    def _block(self, stmts: list[ast.stmt], block: list[ast.stmt], depth: int, loops: tuple[int, ...]) -> None:
        groups: list[list[ast.stmt]] = []
        for st in stmts:
            if groups and st.lineno <= groups[-1][-1].end_lineno:
                groups[-1].append(st)
            else:
                groups.append([st])
        for g in groups:
            if len(g) == 1 and self._is_compound(g[0]):
                self._compound(g[0], depth, loops)
                continue
            for st in g:
                if self._is_compound(st):
                    raise self.unsupported(st, "a compound statement sharing its line with other statements")
            self._group(g, depth, loops)

    @staticmethod
    def _is_compound(st: ast.stmt) -> bool:
        return isinstance(st, (ast.For, ast.While, ast.If, ast.With, ast.AsyncFor, ast.AsyncWith, ast.Try,
                               ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or \
            type(st).__name__ in ("Match", "TryStar")

    def _compound(self, st: ast.stmt, depth: int, loops: tuple[int, ...]) -> None:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Try, ast.AsyncFor,
                           ast.AsyncWith)) or type(st).__name__ in ("Match", "TryStar"):
            if self.lenient:
                self._unobserved_block(st, f"`{type(st).__name__}` is not supported by the Debugger")
                return
            raise self.unsupported(st, f"`{type(st).__name__}` inside a collection region")
        if isinstance(st, ast.If) and st.orelse and st.orelse[0].lineno == st.lineno:
            if self.lenient:
                self._unobserved_block(st, "an else branch on the header line")
                return
            raise self.unsupported(st, "an else branch on the header line")
        if isinstance(st, ast.For):
            for t in ast.walk(st.target):
                if isinstance(t, ast.Name):
                    self.defined.add(t.id)
        # Replay/sharing caches: a nested block starts from the entries valid before it (minus,
        # for a loop, every name the loop assigns: a later iteration sees them changed) and its
        # own entries end with it; after the statement, entries of names it assigns are gone.
        assigned = _stored_names(st)
        if isinstance(st, ast.While):
            self._forget(assigned)
        head = self._header(st, depth, loops)  # loads, stores and helper calls of the header
        if head is not None:
            self.header_override[st.lineno] = self._header_text(st, head.exprs)
        saved = self._caches()
        if isinstance(st, (ast.For, ast.While)):
            self._forget(assigned)
            entry = self._caches()
            lid = self._new_loop(st, loops[-1] if loops else None)
            self._block(st.body, st.body, depth + 1, loops + (lid,))
            if st.orelse:
                self._set_caches(entry)
                self._block(st.orelse, st.orelse, depth, loops)
        elif isinstance(st, ast.If):
            self._block(st.body, st.body, depth, loops)
            if st.orelse:
                self._set_caches(saved)
                self._block(st.orelse, st.orelse, depth, loops)
        else:
            self._block(st.body, st.body, depth, loops)
        if head is not None:
            self._place_header(st, head)
        self._set_caches(saved)
        self._forget(assigned)

    # -- compound statement headers -------------------------------------------------------------------

    def _header_text(self, st: ast.stmt, exprs: list[ast.AST] | None = None) -> str:
        """`for t in it:`, `while c:`, `if c:` (`elif c:`), `with a as b:` of a compound statement,
        with `exprs` (rewritten header expressions) in place of its own when given."""
        line = self.src.lines[st.lineno - 1]
        if isinstance(st, ast.For):
            it = exprs[0] if exprs else st.iter
            return f"for {ast.unparse(st.target)} in {ast.unparse(it)}:"
        if isinstance(st, (ast.While, ast.If)):
            test = exprs[0] if exprs else st.test
            word = "while" if isinstance(st, ast.While) else ("elif" if line.lstrip().startswith("elif") else "if")
            return f"{word} {ast.unparse(test)}:"
        if isinstance(st, ast.With):
            items = []
            for i, it in enumerate(st.items):
                e = exprs[i] if exprs else it.context_expr
                items.append(ast.unparse(e) + (f" as {ast.unparse(it.optional_vars)}" if it.optional_vars else ""))
            return f"with {', '.join(items)}:"
        return line.strip()

    def _header_exprs(self, st: ast.stmt) -> list[ast.AST]:
        if isinstance(st, ast.For):
            return [st.iter]
        if isinstance(st, (ast.While, ast.If)):
            return [st.test]
        if isinstance(st, ast.With):
            return [it.context_expr for it in st.items]
        return []

    def _header(self, st: ast.stmt, depth: int, loops: tuple[int, ...]) -> "_Header | None":
        """Observe the loads, stores, atomics and helper calls of a compound statement's header: they
        are evaluated on the line before it (and, for a `while`, again at the end of its body)
        into temporaries the header then reads. None when the header has nothing to observe."""
        exprs = self._header_exprs(st)
        if not any(isinstance(sub, ast.Call) and (self._access_kind(sub) is not None or
                                                   _calltwins.user_helper(self._resolve_obj(sub.func)))
                   for e in exprs for sub in ast.walk(e)):
            return None
        value_on, addr_on = self.reg_level >= 1, self.reg_addr >= 1
        if not value_on and not addr_on:
            return None
        why = self._header_slot_problem(st)
        if why is not None:
            self._unobserved_header(st, why)
            return None
        holder: list[Statement] = []
        text = self._header_text(st)

        def statement() -> Statement:
            if not holder:
                s = Statement(id=len(self.statements), line=self.src.abs_line(st.lineno), col=self.src.col(st),
                              end_line=self.src.abs_line(st.lineno), source=text, loop_depth=depth,
                              frame=self.frame)
                self.statements.append(s)
                holder.append(s)
            return holder[0]

        work = [copy.deepcopy(e) for e in exprs]
        pre: list[str] = []
        # the header's own reads; a `while` test runs in its loop, once per iteration and once more
        hloops = loops
        spin = isinstance(st, ast.While) and all(isinstance(b, ast.Pass) for b in st.body)
        if isinstance(st, ast.While) and not spin:
            hloops = loops + (self._new_loop(st, loops[-1] if loops else None, header_only=True),)
        first_site = len(self.sites) + 1
        expr_stmt = ast.Expr(value=ast.Tuple(elts=work, ctx=ast.Load()))
        ast.copy_location(expr_stmt, st)
        hoister = _Hoister(self, expr_stmt, pre, statement, self._reads_of(ast.Module(body=[ast.Expr(e) for e in exprs],
                                                                                      type_ignores=[])),
                           hloops, addr_on, value_on, orig=st, depth=depth)
        hoister.run()
        new_exprs = list(expr_stmt.value.elts)
        if not pre:
            return None
        sites = list(range(first_site, len(self.sites) + 1))
        if isinstance(st, ast.While):
            # the test itself becomes a loop-carried flag, computed before the loop and at the end
            # of each iteration
            flag = f"__fpu_w{self.ntemps}"
            self.ntemps += 1
            pre = pre + [f"{flag} = {ast.unparse(new_exprs[0])}"]
            new_exprs = [ast.Name(id=flag, ctx=ast.Load())]
        return _Header(pre=pre, exprs=new_exprs, sites=sites, outer_loops=loops)

    def _header_slot_problem(self, st: ast.stmt) -> str | None:
        """Why the header of `st` cannot be evaluated on the line before it, or None. That line
        must be the last line of the previous simple statement of the same block, a blank or
        comment line inside the block, or the function's `def` line (the twin's prologue)."""
        if self._header_slot(st) is None:
            return "no line before it in its block to evaluate the header on"
        if isinstance(st, ast.If) and self.src.lines[st.lineno - 1].lstrip().startswith("elif"):
            return "an `elif` header (evaluated only when the branches before it are not taken)"
        if isinstance(st, ast.While) and self._is_compound(st.body[-1]):
            return "the `while` body ends with a block, so its test cannot be evaluated again at its end"
        return None

    def _header_slot(self, st: ast.stmt) -> str | None:
        """Where the header of `st` is evaluated: "prev" (appended to the previous statement),
        "def" (the function's `def` line), "free" (a blank or comment line), or None."""
        block, i = self.parent_block[id(st)]
        line = st.lineno - 1
        owner = self.parent_stmt.get(id(st))
        if i > 0 and not self._is_compound(block[i - 1]) and block[i - 1].end_lineno == line:
            return "prev"
        if i == 0 and owner is self.fdef:
            return "def"  # everything before the first statement is the `def`: the prologue line
        if line < 1 or line in self.blank_lines or line in self.line_edits:
            return None
        text = self.src.lines[line - 1].strip()
        if text and not text.startswith("#"):
            return None
        if i == 0 and line <= getattr(owner, "lineno", 0):
            return None
        if owner is self.fdef and line <= self.fdef.lineno:
            return None
        return "free"

    def _place_header(self, st: ast.stmt, head: "_Header") -> None:
        """Write the header's evaluation before the statement (and at the end of a `while` body) and
        the rewritten header line."""
        block, i = self.parent_block[id(st)]
        pre = "; ".join(head.pre)
        slot = self._header_slot(st)
        if slot == "prev":
            self._append_after(block[i - 1], pre)
        elif slot == "def":
            self.prologue_extra.append(pre)
        else:
            self.line_edits[st.lineno - 1] = lead_of(self.src.lines[st.lineno - 1]) + pre
        if isinstance(st, ast.While):
            if all(isinstance(b, ast.Pass) for b in st.body) and head.sites:
                # A spin-wait (`while <test>: pass`) may turn any number of times: each evaluation
                # of the test overwrites the records of the one before, so the last one is kept.
                pre = f"{SEQ} = {SEQ} - {len(head.sites)}; {pre}"
            self._append_after(st.body[-1], pre)
        # the header line itself (a one-line body written by _group already used the new header)
        if st.body[0].lineno == st.lineno:
            self._write_oneline(st)
            return
        lead = lead_of(self.src.lines[st.lineno - 1])
        self.line_edits[st.lineno] = lead + self.header_override[st.lineno]
        for ln in range(st.lineno + 1, st.body[0].lineno):
            self.blank_lines.add(ln)

    def _write_oneline(self, st: ast.stmt) -> None:
        """Header and unchanged one-line body of `st` on its header line."""
        if st.lineno in self.onelines:
            return
        lead = lead_of(self.src.lines[st.lineno - 1])
        parts = [self._stmt_text(b) for b in st.body if b.lineno == st.lineno]
        self.line_edits[st.lineno] = lead + self.header_override[st.lineno] + " " + "; ".join(parts)
        self.onelines.add(st.lineno)

    def _stmt_text(self, st: ast.stmt) -> str:
        seg = self.src.segment(st)
        return seg if "\n" not in seg else ast.unparse(st)

    def _append_after(self, st: ast.stmt, text: str) -> None:
        """Append `text` (statements) to the line holding simple statement `st` (and the statements
        sharing its lines)."""
        block, i = self.parent_block[id(st)]
        while i > 0 and block[i - 1].end_lineno >= block[i].lineno:
            i -= 1
        first = block[i]
        if first.lineno in self.line_edits:
            self.line_edits[first.lineno] += "; " + text
            return
        j = i
        while j + 1 < len(block) and block[j + 1].lineno <= block[j].end_lineno:
            j += 1
        line = self.src.lines[first.lineno - 1]
        prefix = line[:first.col_offset]
        if prefix.strip():  # a body on its header's line
            prefix = lead_of(line) + self.header_override.get(first.lineno, prefix.strip()) + " "
        self.line_edits[first.lineno] = prefix + "; ".join(self._stmt_text(b) for b in block[i:j + 1]) + "; " + text
        if prefix.strip():
            self.onelines.add(first.lineno)
        for ln in range(first.lineno + 1, block[j].end_lineno + 1):
            self.blank_lines.add(ln)

    def _caches(self) -> tuple[dict, ...]:
        return dict(self.vcache), dict(self.ocache), dict(self.acache), dict(self.ccache)

    def _set_caches(self, c: tuple[dict, ...]) -> None:
        self.vcache, self.ocache, self.acache, self.ccache = (dict(d) for d in c)

    def _forget(self, names: set[str]) -> None:
        """Drop the replay/sharing cache entries that depend on any of `names`."""
        for name in names:
            self.vcache.pop(name, None)
        for key in [k for k in self.ocache if k[0] in names or k[1] in names]:
            del self.ocache[key]
        for name in names:
            self.acache.pop(name, None)
            self.ccache.pop(name, None)

    def _needs_edit(self, stmts: list[ast.stmt]) -> bool:
        for st in stmts:
            if isinstance(st, ast.Return) and not self.sanitize:
                return True
            for sub in ast.walk(st):
                if isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                    return True
                if isinstance(sub, ast.Call) and self._access_kind(sub) is not None:
                    return True
        return False

    # -- simple statements ----------------------------------------------------------------------------

    def _access_kind(self, call: ast.Call) -> tuple[str, bool] | None:
        """('load'|'store'|'atomic', is_descriptor) if call is a memory access the Debugger
        observes."""
        func = call.func
        obj = _resolve(func, self.scope)
        if obj is not _MISSING:
            if _is_tl(obj, _LOAD_FNS):
                return "load", False
            if _is_tl(obj, _STORE_FNS):
                return "store", False
            if _is_tl(obj, tuple(f"atomic_{o}" for o in _ATOMIC_OPS)):
                return "atomic", False
            if _is_tl(obj, ("load_tensor_descriptor",)):
                return "load", True
            if _is_tl(obj, ("store_tensor_descriptor",)):
                return "store", True
            return None
        if isinstance(func, ast.Attribute) and func.attr in _DESC_METHODS:
            base = _resolve(func.value, self.scope)
            if base is _MISSING:  # a local object: a tensor descriptor is the one with these methods
                return _DESC_METHODS[func.attr][0], True
        return None

    def _atomic_op(self, call: ast.Call) -> str:
        """"add", "cas"... of a tl.atomic_* call or a descriptor's atomic method."""
        func = call.func
        obj = _resolve(func, self.scope)
        for o in _ATOMIC_OPS:
            if obj is not _MISSING and _is_tl(obj, (f"atomic_{o}",)):
                return o
        if isinstance(func, ast.Attribute) and func.attr.startswith("atomic_"):
            return func.attr[len("atomic_"):]
        return ""

    def _kernel_name_of(self, name: str) -> str | None:
        """The kernel's own variable (or parameter) a name of this function stands for."""
        return name

    def _group(self, group: list[ast.stmt], depth: int, loops: tuple[int, ...]) -> None:
        parts: list[str] = []
        changed = False
        for st in group:
            if self._marker_of(st):
                parts.append(self.src.segment(st))
                continue
            text, did = self._simple(st, depth, loops)
            parts.append(text)
            changed = changed or did
        if not changed:
            return
        # Statements outside the region that share these lines (`fpl.collect_start(); x = ...`) are
        # written back unchanged.
        block, i = self.parent_block[id(group[0])]
        _, j = self.parent_block[id(group[-1])]
        before: list[str] = []
        while i > 0 and block[i - 1].end_lineno >= block[i].lineno:
            i -= 1
            before.insert(0, self.src.segment(block[i]))
        after: list[str] = []
        while j + 1 < len(block) and block[j + 1].lineno <= block[j].end_lineno:
            j += 1
            after.append(self.src.segment(block[j]))
        first, last_st = block[i], block[j]
        line = self.src.lines[first.lineno - 1]
        prefix = line[:first.col_offset]
        if prefix.strip():  # a body on its header's line (`if c: x = ...`, `else: y = ...`)
            prefix = lead_of(line) + self.header_override.get(first.lineno, prefix.strip()) + " "
            self.onelines.add(first.lineno)
        self.line_edits[first.lineno] = prefix + "; ".join(before + parts + after)
        for ln in range(first.lineno + 1, last_st.end_lineno + 1):
            self.blank_lines.add(ln)

    def _new_statement(self, st: ast.stmt, depth: int) -> Statement:
        s = Statement(id=len(self.statements), line=self.src.abs_line(st.lineno), col=self.src.col(st),
                      end_line=self.src.abs_line(st.end_lineno), source=self.src.segment(st), loop_depth=depth,
                      frame=self.frame)
        self.statements.append(s)
        return s

    def _reads_of(self, st: ast.stmt) -> list[str]:
        out: list[str] = []
        for sub in ast.walk(st):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id in self.defined:
                if sub.id not in out:
                    out.append(sub.id)
        return out

    def _simple(self, st: ast.stmt, depth: int, loops: tuple[int, ...]) -> tuple[str, bool]:
        """Instrumented text of one simple statement, and whether it changed."""
        self.visited.add(id(st))
        if isinstance(st, ast.Return):
            if self.frame:
                return self._helper_return(st, depth, loops)
            if self.sanitize and not any(isinstance(c, ast.Call) and self._access_kind(c) for c in ast.walk(st)):
                return self.src.segment(st), False
            raise self.unsupported(st, "`return` inside a collection region")
        value_on = self.reg_level >= 1
        addr_on = self.reg_addr >= 1
        reads = self._reads_of(st)
        targets: list[tuple[str, ast.AST]] = []
        if isinstance(st, ast.Assign):
            for t in st.targets:
                for sub in _target_names(t):
                    targets.append(sub)
        elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name):
            targets.append((st.target.id, st.target))
        elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value is not None:
            if not self._is_constexpr_annotation(st.annotation):
                targets.append((st.target.id, st.target))

        work = copy.deepcopy(st)
        pre: list[str] = []
        stmt_holder: list[Statement] = []

        def statement() -> Statement:
            if not stmt_holder:
                stmt_holder.append(self._new_statement(st, depth))
            return stmt_holder[0]

        hoister = _Hoister(self, work, pre, statement, reads, loops, addr_on, value_on, orig=st, depth=depth)
        hoister.run()
        self._forget(_stored_names(st))
        targets = [(n, t) for n, t in targets if not self.forms.is_form_name(n)]
        post: list[str] = []
        closed = None
        if value_on and self.reg_level < 2 and len(targets) == 1 and isinstance(work, ast.Assign) \
                and len(work.targets) == 1 and isinstance(work.targets[0], ast.Name):
            closed = self._closed_form(work)
        if closed is not None:
            name = targets[0][0]
            sid = self._new_site(statement(), "value", name, reads, loops, False)
            info = f"__fp_a{self.ntemps}"
            self.ntemps += 1
            post.append(f"{SEQ}, {info} = {closed[0]}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {name}, {closed[1]})")
            if closed[0] == H_VAFF:
                self.acache[name] = info
            else:
                self.ccache[name] = (info, closed[2])
        elif value_on:
            for name, _node in targets:
                sid = self._new_site(statement(), "value", name, reads, loops, self.reg_level >= 2)
                words = f"__fp_w{self.ntemps}"
                self.ntemps += 1
                post.append(f"{SEQ}, {words} = {H_VALUE}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {name}, "
                            f"{1 if self.reg_level >= 2 else 0}, True)")
                self.vcache[name] = words
        post.extend(self._form_updates(st, statement, reads, loops))
        for name, _node in targets:
            self.defined.add(name)
        if isinstance(st, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in ([st.target] if not isinstance(st, ast.Assign) else st.targets):
                for name, _n in _target_names(t):
                    self.defined.add(name)
        self.assigned_here |= _stored_names(st)
        if value_on:
            self._annotate(st, work, hoister, stmt_holder[0] if stmt_holder else None)
        if not pre and not post:
            return self.src.segment(st), False
        body = ast.unparse(work)
        if "\n" in body:
            raise self.unsupported(st, "a statement that cannot be written on one line")
        if isinstance(work, ast.Expr) and isinstance(work.value, ast.Constant) and work.value.value is None:
            body = ""  # the statement was a call of a helper without a value, now made before it
        return "; ".join(pre + ([body] if body else []) + post), True

    def _form_updates(self, st: ast.stmt, statement: Callable[[], Statement], reads: list[str],
                      loops: tuple[int, ...]) -> list[str]:
        """After `st`: the shadows of the block pointers and descriptors it assigns (_memforms.py),
        and for a descriptor made on the device, the record of the memory it can address."""
        out = self.forms.after_assign(st)
        if not out:
            return out
        value = st.value if isinstance(st, (ast.Assign, ast.AnnAssign)) else None
        target = (st.targets[0] if isinstance(st, ast.Assign) else st.target)  # type: ignore[union-attr]
        if self.reg_addr >= 1 and isinstance(value, ast.Call) and isinstance(target, ast.Name) and \
                self.forms.classify(value) == (_memforms.DESC, None):
            base = _memforms.bind(value, ("base",)).get("base")
            sid = self._new_site(statement(), "descriptor", ast.unparse(base) if base is not None else target.id,
                                 reads, loops, False)
            cands = self.bases.arg_bases(base) if base is not None else []
            self.sites[sid - 1].info.update(base_param=cands[0] if len(cands) == 1 else None, base_params=cands,
                                            form="tensor_descriptor")
            out.append(f"{SEQ} = {H_DEXT}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {target.id}, "
                       f"{self.forms.shadow_of(target.id)})")
        return out

    def _helper_return(self, st: ast.Return, depth: int, loops: tuple[int, ...]) -> tuple[str, bool]:
        """`return X` of a helper twin: X's accesses observed, X returned with the record counter."""
        work = copy.deepcopy(st)
        pre: list[str] = []
        stmt_holder: list[Statement] = []

        def statement() -> Statement:
            if not stmt_holder:
                stmt_holder.append(self._new_statement(st, depth))
            return stmt_holder[0]

        hoister = _Hoister(self, work, pre, statement, self._reads_of(st), loops, self.reg_addr >= 1,
                           self.reg_level >= 1, orig=st, depth=depth)
        hoister.run()
        if work.value is None:
            ret = f"return {SEQ}"
        elif self.returns_value:
            ret = f"return ({ast.unparse(work.value)}), {SEQ}"
        else:  # `return None` in a helper without a value
            ret = f"return {SEQ}"
        return "; ".join(pre + [ret]), True

    # -- closed-form records of index arithmetic ------------------------------------------------------

    def _constexpr_k(self, node: ast.AST) -> bool:
        """A step the helpers may take as a constexpr: an int literal or a constexpr parameter."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            node = node.operand
        if isinstance(node, ast.Constant):
            return isinstance(node.value, int) and not isinstance(node.value, bool)
        if isinstance(node, ast.Name):
            return any(a.arg == node.id and a.annotation is not None and self._is_constexpr_annotation(a.annotation)
                       for a in self.fdef.args.args)
        return False

    def _arange_term(self, node: ast.AST) -> tuple[str, str, str] | None:
        """(K, LO, HI) texts of `tl.arange(LO, HI)`, `K * tl.arange(LO, HI)` or `tl.arange(LO, HI) * K`."""
        def arange(n: ast.AST) -> tuple[str, str] | None:
            if isinstance(n, ast.Call) and len(n.args) == 2 and not n.keywords and \
                    _is_tl(_resolve(n.func, self.scope), ("arange",)):
                return ast.unparse(n.args[0]), ast.unparse(n.args[1])
            return None
        a = arange(node)
        if a is not None:
            return "1", a[0], a[1]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for t, k in ((node.left, node.right), (node.right, node.left)):
                a = arange(t)
                if a is not None and self._constexpr_k(k):
                    return ast.unparse(k), a[0], a[1]
        return None

    def _static_cond(self, node: ast.AST) -> bool:
        """Is `node` known at compile time: literals, constexpr parameters and constexpr or plain
        globals, combined with comparisons and boolean or arithmetic operators?"""
        cx = {a.arg for a in self.fdef.args.args if a.annotation is not None and
              self._is_constexpr_annotation(a.annotation)}
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                if sub.id in cx:
                    continue
                obj = self._resolve_obj(sub)
                if isinstance(obj, tl.constexpr) or isinstance(obj, (bool, int, float)) or obj is None and \
                        sub.id == "None":
                    continue
                return False
            if not isinstance(sub, (ast.Constant, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp, ast.cmpop,
                                    ast.boolop, ast.unaryop, ast.operator, ast.expr_context)):
                return False
        return True

    def _pure(self, node: ast.AST) -> bool:
        """No call but tl.program_id/tl.num_programs/.to(): evaluating the expression once more
        (in a record helper's arguments) gives the same value and has no effect."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                if isinstance(sub.func, ast.Attribute) and sub.func.attr == "to":
                    continue
                if not _is_tl(_resolve(sub.func, self.scope), ("program_id", "num_programs")):
                    return False
        return True

    def _closed_form(self, work: ast.Assign) -> tuple[str, str, str] | None:
        """For `name = s + K * tl.arange(LO, HI)` (s optional, either order) or `name = x < b` (also
        <=, >, >=, either order) with x such a name: (helper, its trailing arguments, affine temp).
        s and b are evaluated a second time in the helper's arguments (so the user's statement stays
        as written), which is why they must be pure and must not read the assigned name; the
        compiler merges the duplicate. The helpers check the types at compile time (_records.py)
        and write an ordinary record when they do not fit."""
        v = work.value
        target = work.targets[0].id

        def usable(e: ast.AST) -> bool:
            return self._pure(e) and not any(isinstance(n, ast.Name) and n.id == target for n in ast.walk(e))

        term = self._arange_term(v)
        if term is not None:
            k, lo, hi = term
            return H_VAFF, f"None, {k}, {lo}, {hi}", ""
        if isinstance(v, ast.BinOp) and isinstance(v.op, ast.Add):
            for t, side in ((v.right, "left"), (v.left, "right")):
                term = self._arange_term(t)
                other = getattr(v, side)
                if term is not None and self._arange_term(other) is None and usable(other):
                    k, lo, hi = term
                    return H_VAFF, f"{ast.unparse(other)}, {k}, {lo}, {hi}", ""
            return None
        if isinstance(v, ast.Compare) and len(v.ops) == 1:
            ops = {ast.Lt: 1, ast.LtE: 2, ast.Gt: 3, ast.GtE: 4}
            swap = {1: 3, 2: 4, 3: 1, 4: 2}
            op = ops.get(type(v.ops[0]))
            if op is None:
                return None
            left, right = v.left, v.comparators[0]
            if isinstance(left, ast.Name) and left.id in self.acache:
                x, b = left, right
            elif isinstance(right, ast.Name) and right.id in self.acache:
                x, b, op = right, left, swap[op]
            else:
                return None
            if not usable(b):
                return None
            aff = self.acache[x.id]
            return H_VCMP, f"{aff}, {op}, {ast.unparse(b)}", aff
        return None

    def _new_site(self, stmt: Statement, kind: str, name: str, reads: list[str], loops: tuple[int, ...],
                  dumps: bool) -> int:
        sid = len(self.sites) + 1
        if sid > 0xFFFF:
            raise RewriteError("more than 65535 observed sites in one kernel", self.src.file, stmt.line)
        self.sites.append(Site(sid, stmt.id, kind, name, [self._read_ref(r) for r in reads], loops, dumps))
        return sid

    def _read_ref(self, name: str) -> Any:
        """A read of `name` for the site table: the name itself (this frame's variable), or for a
        helper parameter not reassigned yet, a reference to the caller's variable it was given
        ({"name": param, "frame": F, "var": caller's name})."""
        return name

    def _is_constexpr_annotation(self, ann: ast.AST) -> bool:
        obj = _resolve(ann, self.scope)
        if obj is tl.constexpr:
            return True
        return isinstance(ann, ast.Name) and ann.id == "constexpr" or \
            (isinstance(ann, ast.Attribute) and ann.attr == "constexpr")

    def _emit(self, fdef: ast.FunctionDef) -> str:
        lines = list(self.src.lines)
        def_idx = fdef.lineno  # 1-based, dedented
        for i in range(1, def_idx):
            lines[i - 1] = ""  # decorators
        body_first = fdef.body[0].lineno
        if body_first == def_idx:
            raise self.unsupported(fdef, "a kernel whose body starts on the `def` line")
        for ln in range(def_idx, body_first):
            lines[ln - 1] = ""
        for ln, text in self.line_edits.items():
            lines[ln - 1] = text
        for ln in self.blank_lines:
            lines[ln - 1] = ""
        # New header one line above the original `def`; the prologue takes the `def` line.
        header = twin_header(fdef, self.shared.desc_params)
        lead = lead_of(self.src.lines[body_first - 1]) or "    "
        prologue = f"{lead}{SEQ} = 0; {BASE}, {SLOTS} = {H_BEGIN}({CTX})"
        prologue = "; ".join([prologue] + self.prologue_extra)
        abs_def = self.src.abs_line(def_idx)
        if abs_def < 2:
            raise self.unsupported(fdef, "a kernel whose `def` is on the first line of its file")
        full = [""] * (self.src.first - 1) + lines
        # index of absolute line k is k - 1
        full[abs_def - 2] = header
        full[abs_def - 1] = prologue
        return "\n".join(full) + "\n"


class _HelperRewriter(_Rewriter):
    """The twin of one helper call site (a frame): the helper's whole body observed with the
    caller's levels, its statements and sites added to the kernel's tables (see _calltwins.py)."""

    def __init__(self, helper: Any, parent: _Rewriter, frame: Any, fdef: ast.FunctionDef, src: _Source,
                 binding: dict[str, ast.AST], shadows: dict[str, Any], loops: tuple[int, ...], depth: int) -> None:
        super().__init__(helper, parent.reg_level, parent.reg_addr, parent.sanitize, src=src)
        self.shared = parent.shared
        self.statements = self.shared.statements
        self.sites = self.shared.sites
        self.loops = self.shared.loops
        self.frame = frame.id
        self.frame_obj = frame
        self.depth = parent.depth + 1
        self.parent_rw = parent
        self.fdef = fdef
        self.binding = binding
        self.shadows = shadows
        self.caller_loops = loops
        self.caller_depth = depth
        self.reg_level, self.reg_addr = parent.reg_level, parent.reg_addr
        self.returns_value = _calltwins.returns_value(fdef)
        self.name = f"__fp_h{frame.id}_{fdef.name}"

    def _kernel_name_of(self, name: str) -> str | None:
        caller = self.frame_obj.args.get(name)
        if caller is None or name in self.assigned_here or self.parent_rw is None:
            return None
        return self.parent_rw._kernel_name_of(caller)

    def _read_ref(self, name: str) -> Any:
        caller = self.frame_obj.args.get(name)
        if caller is None or name in self.assigned_here:
            return name
        up = self.parent_rw._read_ref(caller) if self.parent_rw is not None else caller
        if isinstance(up, dict):
            return {"name": name, "frame": up["frame"], "var": up["var"]}
        return {"name": name, "frame": self.frame_obj.parent, "var": up}

    def run_helper(self) -> Any:
        fdef = self.fdef
        self._check_reserved(fdef)
        for a in fdef.args.args + fdef.args.kwonlyargs:
            if a.arg.startswith(_RESERVED_PREFIX):
                raise self.unsupported(fdef, f"the name {a.arg!r} is reserved for the Debugger's twin")
        self.params = []
        parent = self.parent_rw
        assert parent is not None
        init = {p: frozenset(parent.bases.arg_bases(self.binding[p])) for p in self.binding}
        self.bases = _findsites.PointerBases(fdef, [], self._resolve_obj, self._access_kind, initial=init,
                                             order=parent.bases.order)
        self.forms.scan(fdef, self.shadows)
        self.parent_block = {}
        self.parent_stmt = {}

        def index(block: list[ast.stmt], owner: ast.AST) -> None:
            for i, st in enumerate(block):
                self.parent_block[id(st)] = (block, i)
                self.parent_stmt[id(st)] = owner
                if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    for sub in self._blocks(st):
                        index(sub, st)

        index(fdef.body, fdef)
        self._collect_host_defs(fdef)
        self.frame_obj.host_defs = list(self.host_defs)
        # a parameter given a variable the caller observes reads that variable (across the call)
        self.defined = {p for p, caller in self.frame_obj.args.items()
                        if caller in parent.defined or isinstance(parent._read_ref(caller), dict)}
        self._block(fdef.body, fdef.body, self.caller_depth, self.caller_loops)
        text = self._emit_helper(fdef)
        return _calltwins.SubTwin(name=self.name, frame=self.frame, jitfn=self.jitfn, text=text,
                                  returns_value=self.returns_value, kernel_name=self.name)

    def _emit_helper(self, fdef: ast.FunctionDef) -> str:
        lines = list(self.src.lines)
        def_idx = fdef.lineno
        for i in range(1, def_idx):
            lines[i - 1] = ""  # decorators
        body_first = fdef.body[0].lineno
        if body_first == def_idx:
            raise self.unsupported(fdef, "a helper whose body starts on the `def` line")
        for ln in range(def_idx, body_first):
            lines[ln - 1] = ""
        for ln, text in self.line_edits.items():
            lines[ln - 1] = text
        for ln in self.blank_lines:
            lines[ln - 1] = ""
        lead = lead_of(self.src.lines[body_first - 1]) or "    "
        if self.prologue_extra:
            lines[def_idx - 1] = lead + "; ".join(self.prologue_extra)
        shadow_params = list(self.shadows)
        header = _calltwins.twin_def_line(fdef, self.name, shadow_params)
        abs_def = self.src.abs_line(def_idx)
        if abs_def < 2:
            raise self.unsupported(fdef, "a helper whose `def` is on the first line of its file")
        full = [""] * (self.src.first - 1) + lines
        full[abs_def - 2] = header
        if not self.returns_value:
            full.append(f"{lead}return {SEQ}")
        return "\n".join(full) + "\n"


def _guard(text: str, cond: str) -> str:
    """`lhs = rhs` made conditional on a compile-time `cond`: `lhs = (rhs) if cond else d`, d the
    record counter for __fp_n and None for temporaries (never read when cond is false)."""
    st = ast.parse(text).body[0]
    assert isinstance(st, ast.Assign) and len(st.targets) == 1, text
    t = st.targets[0]
    names = [e.id for e in t.elts] if isinstance(t, ast.Tuple) else [t.id]  # type: ignore[attr-defined]
    dflt = [SEQ if n == SEQ else "None" for n in names]
    other = dflt[0] if len(dflt) == 1 else "(" + ", ".join(dflt) + ")"
    return f"{ast.unparse(t)} = ({ast.unparse(st.value)}) if {cond} else {other}"


def _binop_text(op: ast.operator) -> str:
    return ast.unparse(ast.BinOp(ast.Name("a"), op, ast.Name("b")))[2:-2]


def _stored_names(node: ast.AST) -> set[str]:
    """Every name a statement (compound ones included) assigns anywhere inside it."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}


def _target_names(t: ast.AST) -> list[tuple[str, ast.AST]]:
    if isinstance(t, ast.Name):
        return [(t.id, t)]
    if isinstance(t, (ast.Tuple, ast.List)):
        out: list[tuple[str, ast.AST]] = []
        for e in t.elts:
            out.extend(_target_names(e))
        return out
    return []


class _Hoister:
    """Moves the pointer, mask and stored value of every load/store of a statement into
    temporaries (in evaluation order) and emits an address record (and a value record for a
    store) before the statement."""

    def __init__(self, rw: _Rewriter, stmt: ast.stmt, pre: list[str], statement: Callable[[], Statement],
                 reads: list[str], loops: tuple[int, ...], addr_on: bool, value_on: bool,
                 orig: ast.stmt | None = None, depth: int = 0) -> None:
        self.rw = rw
        self.stmt = stmt
        self.orig = orig if orig is not None else stmt  # the statement as the user wrote it
        self.depth = depth
        self.pre = pre
        self.statement = statement
        self.reads = reads
        self.loops = loops
        self.addr_on = addr_on
        self.value_on = value_on
        self.accessed: list[tuple[ast.Call, int]] = []  # (load/store call, its address site id)
        # inside a branch of a conditional expression with a run-time condition: the condition
        # (text) under which the branch runs, ANDed into the records' masks (_ifexp)
        self.record_cond: str | None = None
        self.checks: list[dict[str, Any]] = []  # checks by reference for the statement's first value site

    def run(self) -> None:
        self._visit(self.stmt, conditional=False)

    def statement_depth(self) -> int:
        return self.depth

    def _operand_texts(self, node: ast.AST) -> dict[int, str]:
        """The user's text of `node`'s checked operands, taken before temporaries replace parts."""
        if not self.value_on or not isinstance(node, (ast.Call, ast.BinOp)):
            return {}
        return {id(op): ast.unparse(op) for _r, _t, op, _p in _findsites.operand_roles(node, self.rw._resolve_obj)}

    def _operands(self, node: ast.AST, conditional: bool, texts: dict[int, str]) -> None:
        """Operands of `node` a numerical rule checks (findings), outside conditional code."""
        if conditional or not self.value_on:
            return
        for role, target, operand, put in _findsites.operand_roles(node, self.rw._resolve_obj):
            self.rw._operand(self, role, target, operand, put, texts.get(id(operand)))

    def _temp(self, expr: ast.AST, role: str) -> ast.AST:
        """Expr as is when it needs no temporary (a name or a constant), else a new temporary."""
        if isinstance(expr, (ast.Name, ast.Constant)):
            return expr
        # `__fpu_`: a temporary that holds part of the user's own computation (a pointer, mask or
        # operand hoisted out of a statement); the op log counts its ops as user ops.
        name = f"__fpu_{role}{self.rw.ntemps}"
        self.rw.ntemps += 1
        self.pre.append(f"{name} = {ast.unparse(expr)}")
        return ast.Name(id=name, ctx=ast.Load())

    def _visit(self, node: ast.AST, conditional: bool) -> ast.AST:
        """Visit `node` and return what takes its place (itself, or the result of a helper call
        moved before the statement)."""
        # Children first, in Python's evaluation order, then this node.
        if isinstance(node, ast.IfExp) and not conditional and self._has_work(node.body, node.orelse):
            return self._ifexp(node)
        if isinstance(node, (ast.IfExp, ast.BoolOp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                             ast.GeneratorExp)):
            conditional = True
        texts = self._operand_texts(node)
        if isinstance(node, ast.Call):
            orig_call = copy.deepcopy(node)
            node.func = self._visit(node.func, conditional)
            node.args = [self._visit(a, conditional) for a in node.args]
            for kw in node.keywords:
                kw.value = self._visit(kw.value, conditional)
            kind = self.rw._access_kind(node)
            if kind is not None:
                if conditional:
                    if self.rw.sanitize or self.rw.frame:
                        self.rw._unobserved_access(self.orig, node, "inside a conditional expression, boolean "
                                                   "operator, lambda or comprehension")
                        return node
                    raise self.rw.unsupported(self.stmt, "a tl.load/tl.store inside a conditional expression, "
                                              "boolean operator, lambda or comprehension")
                self._access(node, *kind)
                return node
            helper = _calltwins.user_helper(self.rw._resolve_obj(node.func))
            if helper is not None and (self.addr_on or self.value_on):
                if conditional:
                    self.rw._unobserved_helper(self, helper, None, None,
                                               f"helper {helper.fn.__name__} is not observed: it is called "
                                               "inside a conditional expression, boolean operator, lambda or "
                                               "comprehension")
                    return node
                return _calltwins.twin_helper_call(self, node, helper, orig_call)
            self._operands(node, conditional, texts)
            return node
        if isinstance(node, ast.Assign):
            node.value = self._visit(node.value, conditional)
            node.targets = [self._visit(t, conditional) for t in node.targets]
            return node
        if isinstance(node, ast.AugAssign):
            node.value = self._visit(node.value, conditional)
            if isinstance(node.op, ast.Div):  # `x /= d`: d is a divisor (a temporary may replace it)
                div = ast.BinOp(left=node.target, op=node.op, right=node.value)
                self._operands(div, conditional, {id(node.value): ast.unparse(node.value)})
                node.value = div.right
            return node
        for fname, value in ast.iter_fields(node):
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        value[i] = self._visit(item, conditional)
            elif isinstance(value, ast.AST):
                setattr(node, fname, self._visit(value, conditional))
        if isinstance(node, ast.BinOp):
            self._operands(node, conditional, texts)
        return node

    # -- conditional expressions ------------------------------------------------------------------

    def _has_work(self, *nodes: ast.AST) -> bool:
        """Do `nodes` hold a memory access or a helper call (something to observe)?"""
        for n in nodes:
            for sub in ast.walk(n):
                if isinstance(sub, ast.Call) and (self.rw._access_kind(sub) is not None or
                                                  _calltwins.user_helper(self.rw._resolve_obj(sub.func))):
                    return True
        return False

    def _ifexp(self, node: ast.IfExp) -> ast.AST:
        """`A if C else B` with accesses or helper calls in A or B. With a compile-time condition
        (constexpr parameters and globals, literals) each branch's temporaries and records are
        guarded by the same condition (`t = (e) if (C) else None`): only the taken branch is
        compiled, as in the user's expression. With a run-time condition (a scalar) both branches
        are compiled: loads and stores whose arguments are plain arithmetic are recorded with the
        condition ANDed into their mask (the access itself stays in its branch); anything else in
        the branch is listed unobserved."""
        node.test = self._visit(node.test, False)
        if self.rw._static_cond(node.test):
            cond = ast.unparse(node.test)
            node.body = self._guarded_branch(node.body, f"({cond})")
            node.orelse = self._guarded_branch(node.orelse, f"not ({cond})")
            return node
        ct = self._temp(node.test, "c")
        node.test = ct
        cname = ast.unparse(ct)
        for attr, cond in (("body", cname), ("orelse", f"({cname}) == 0")):
            branch = getattr(node, attr)
            if not self._has_work(branch):
                continue
            why = self._runtime_branch_problem(branch)
            if why is not None:
                for sub in ast.walk(branch):
                    if isinstance(sub, ast.Call) and self.rw._access_kind(sub) is not None:
                        self.rw._unobserved_access(self.orig, sub, f"inside a conditional expression with a "
                                                   f"run-time condition: {why}")
                continue
            saved = self.record_cond
            self.record_cond = cond
            try:
                setattr(node, attr, self._visit(branch, False))
            finally:
                self.record_cond = saved
        return node

    def _guarded_branch(self, branch: ast.AST, cond: str) -> ast.AST:
        saved_pre = self.pre
        self.pre = []
        caches = self.rw._caches()
        try:
            branch = self._visit(branch, False)
        finally:
            sub, self.pre = self.pre, saved_pre
            self.rw._set_caches(caches)  # what the branch made may be None when it is not taken
        for text in sub:
            self.pre.append(_guard(text, cond))
        return branch

    def _runtime_branch_problem(self, branch: ast.AST) -> str | None:
        for sub in ast.walk(branch):
            if not isinstance(sub, ast.Call):
                continue
            kind = self.rw._access_kind(sub)
            if _calltwins.user_helper(self.rw._resolve_obj(sub.func)):
                return "a helper call cannot be made conditional on one line"
            if kind is None:
                continue
            if kind[1] or kind[0] == "atomic":
                return "descriptor accesses and atomics are not supported there"
            for a in list(sub.args) + [k.value for k in sub.keywords]:
                if not self.rw._pure(a):
                    return "an argument with calls would be evaluated in both branches"
            if self.rw.forms.bp_shadow_expr(sub.args[0] if sub.args else ast.Constant(None)) is not None:
                return "block-pointer accesses are not supported there"
        return None

    def _access(self, call: ast.Call, kind: str, desc: bool) -> None:
        want_value = kind in ("store", "atomic") and self.value_on and self.record_cond is None
        if not self.addr_on and not want_value:
            return
        dump_addr = 1 if self.rw.reg_addr >= 2 else 0
        dump_val = 1 if self.rw.reg_level >= 2 else 0
        kcode = {"load": 2, "store": 3, "atomic": 4}[kind]
        if desc:
            self._desc_access(call, kind, kcode, want_value, dump_val, dump_addr)
            return
        op = self.rw._atomic_op(call) if kind == "atomic" else ""
        if kind == "atomic":
            params = _CAS_PARAMS if op == "cas" else _ATOMIC_PARAMS
        else:
            params = _LOAD_PARAMS if kind == "load" else _STORE_PARAMS
        bound: dict[str, tuple[str, Any]] = {}  # param -> ("arg", index) | ("kw", keyword)
        for i, _a in enumerate(call.args):
            if isinstance(_a, ast.Starred):
                raise self.rw.unsupported(self.stmt, f"tl.{kind}(*args)")
            if i >= len(params):
                raise self.rw.unsupported(self.stmt, f"too many arguments to tl.{kind}")
            bound[params[i]] = ("arg", i)
        for j, kw in enumerate(call.keywords):
            if kw.arg is None:
                raise self.rw.unsupported(self.stmt, f"tl.{kind}(**kwargs)")
            bound[kw.arg] = ("kw", j)

        def get(name: str) -> ast.AST | None:
            where = bound.get(name)
            if where is None:
                return None
            return call.args[where[1]] if where[0] == "arg" else call.keywords[where[1]].value

        def put(name: str, node: ast.AST) -> None:
            where = bound[name]
            if where[0] == "arg":
                call.args[where[1]] = node
            else:
                call.keywords[where[1]].value = node

        ptr = get("pointer")
        if ptr is None:
            raise self.rw.unsupported(self.stmt, f"tl.{kind} without a pointer argument")
        ptr_name = ast.unparse(ptr)
        bp_shadow = self.rw.forms.bp_shadow_expr(ptr) if kind != "atomic" else None
        if bp_shadow is not None:
            self._bp_access(call, kind, kcode, ptr, ptr_name, bp_shadow, get, put, want_value, dump_addr, dump_val)
            return
        # `base + offsets`: hand the two parts to the address helper as well, which summarises
        # the offsets instead of the pointers when base is a scalar pointer (records.py,
        # _affine_ok) and can share that summary with later accesses through the same names.
        split = (self.addr_on and dump_addr == 0 and isinstance(ptr, ast.BinOp) and isinstance(ptr.op, ast.Add)
                 and not isinstance(ptr.left, ast.Constant) and not isinstance(ptr.right, ast.Constant)
                 and self.record_cond is None)
        base_t = off_t = None
        if split:
            off_is_name = isinstance(ptr.right, ast.Name)
            base_t = self._temp(ptr.left, "b")
            off_t = self._temp(ptr.right, "q")
            ptr_t = self._temp(ast.BinOp(left=base_t, op=ast.Add(), right=off_t), "p")
        else:
            ptr_t = self._temp(ptr, "p")
        put("pointer", ptr_t)
        value_t = None
        value_text = ""
        vparam = "value" if kind == "store" else "val"
        if kind in ("store", "atomic"):
            v = get(vparam)
            if v is None:
                raise self.rw.unsupported(self.stmt, f"tl.{kind if kind == 'store' else 'atomic_' + op} without a "
                                          "value argument")
            value_text = ast.unparse(v)
            if isinstance(v, ast.Constant):
                want_value = False  # a literal: nothing to summarise
            value_t = self._temp(v, "v")
            put(vparam, value_t)
        m = get("mask")
        mask_t: ast.AST | None = None
        if m is not None:
            mask_t = self._temp(m, "m")
            put("mask", mask_t)
        st = self.statement()
        if self.addr_on:
            sid = self.rw._new_site(st, kind, ptr_name, self.reads, self.loops, dump_addr == 1)
            self.rw._note_access(self, sid, call)
            if op:
                self.rw.sites[sid - 1].info["op"] = op
            mask_text = ast.unparse(mask_t) if mask_t is not None else "None"
            if self.record_cond is not None:  # a branch of a run-time conditional expression
                mask_text = f"{H_MAND}({mask_text}, {self.record_cond})" if mask_t is not None else \
                    self.record_cond
            head = (f"{H_ADDR}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {kcode}, {ast.unparse(ptr_t)}, {mask_text}, "
                    f"{dump_addr}")
            aff = self.rw.acache.get(off_t.id) if isinstance(off_t, ast.Name) and off_is_name else None
            cmp = None
            if aff is not None and m is not None:
                c = self.rw.ccache.get(m.id) if isinstance(m, ast.Name) else None
                cmp = c[0] if c is not None and c[1] == aff else None
                if cmp is None:
                    aff = None
            if aff is not None:
                # offsets and mask from closed-form records: the address record is closed-form too
                self.pre.append(f"{SEQ} = {H_ADDRC}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {kcode}, "
                                f"{ast.unparse(ptr_t)}, {mask_text}, {ast.unparse(base_t)}, {ast.unparse(off_t)}, "
                                f"{aff}, {cmp})")
            elif base_t is None or off_t is None:
                self.pre.append(f"{SEQ} = {head})")
            else:
                parts = f"{ast.unparse(base_t)}, {ast.unparse(off_t)}"
                key = None
                if off_is_name and (m is None or isinstance(m, ast.Name)):
                    key = (ast.unparse(off_t), m.id if isinstance(m, ast.Name) else "")
                shared = self.rw.ocache.get(key) if key is not None else None
                if shared is not None:
                    self.pre.append(f"{SEQ} = {head}, {parts}, {shared})")
                elif key is not None:
                    osum = f"__fp_o{self.rw.ntemps}"
                    self.rw.ntemps += 1
                    self.pre.append(f"{SEQ}, {osum} = {head}, {parts}, None, True)")
                    self.rw.ocache[key] = osum
                else:
                    self.pre.append(f"{SEQ} = {head}, {parts})")
        if want_value and value_t is not None:
            sid = self.rw._new_site(st, "value", value_text, self.reads, self.loops, dump_val == 1)
            words = self.rw.vcache.get(value_t.id) if isinstance(value_t, ast.Name) and not dump_val else None
            if words is not None:
                # The stored value is a name recorded earlier and not reassigned since: replay
                # (not at level 2, where each record keeps its own dump).
                self.pre.append(f"{SEQ} = {H_VALUE}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {value_t.id}, "
                                f"{dump_val}, False, {words})")
            else:
                self.pre.append(f"{SEQ} = {H_VALUE}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, "
                                f"{ast.unparse(value_t)}, {dump_val})")

    def _store_value(self, st: Statement, text: str, node: ast.AST, put: Callable[[ast.AST], None],
                     dump_val: int) -> None:
        """A value site for the value a store or atomic writes (not for a literal)."""
        if isinstance(node, ast.Constant):
            return
        vt = self._temp(node, "v")
        put(vt)
        sid = self.rw._new_site(st, "value", text, self.reads, self.loops, dump_val == 1)
        self.pre.append(f"{SEQ} = {H_VALUE}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {ast.unparse(vt)}, {dump_val})")

    def _bp_access(self, call: ast.Call, kind: str, kcode: int, ptr: ast.AST, ptr_name: str, shadow: str,
                   get: Callable[[str], ast.AST | None], put: Callable[[str, ast.AST], None], want_value: bool,
                   dump_addr: int, dump_val: int) -> None:
        """A load or store through a block pointer the rewriter follows: a closed-form address record
        from its shadow (_records.bp_addr_*)."""
        ptr_t = self._temp(ptr, "p")
        put("pointer", ptr_t)
        check = get("boundary_check")
        check_text = ast.unparse(check) if check is not None else "()"
        if check is not None and not self.rw._pure(check):
            ct = self._temp(check, "c")
            put("boundary_check", ct)
            check_text = ast.unparse(ct)
        st = self.statement()
        if self.addr_on:
            sid = self.rw._new_site(st, kind, ptr_name, self.reads, self.loops, dump_addr == 1)
            self.rw._note_access(self, sid, call)
            info = self.rw.sites[sid - 1].info
            info["form"] = "block_pointer"
            if kind == "load":
                pad = get("padding_option")
                info["padding"] = pad.value if isinstance(pad, ast.Constant) and isinstance(pad.value, str) else \
                    ("zero" if pad is None else "unknown")
            self.pre.append(f"{SEQ} = {H_BPADDR}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {kcode}, {ast.unparse(ptr_t)}, "
                            f"{shadow}, {check_text}, {dump_addr})")
        if want_value and kind == "store":
            v = get("value")
            if v is not None:
                self._store_value(st, ast.unparse(v), v, lambda n: put("value", n), dump_val)

    def _desc_access(self, call: ast.Call, kind: str, kcode: int, want_value: bool, dump_val: int,
                     dump_addr: int) -> None:
        """A tensor-descriptor access: desc.load/store/atomic_*/gather/scatter(...) or
        tl.load_tensor_descriptor / tl.store_tensor_descriptor. With the descriptor's base (its
        shadow) the record is the closed-form summary of the block (TMA semantics); without it,
        a record saying the addresses are not observable."""
        func = call.func
        method = ""
        if isinstance(func, ast.Attribute) and func.attr in _DESC_METHODS and \
                _resolve(func.value, self.rw.scope) is _MISSING:
            desc_node = func.value
            method = func.attr
            rest = list(range(len(call.args)))  # indices of the method's arguments

            def set_desc(n: ast.AST, f: ast.Attribute = func) -> None:
                f.value = n
        else:  # tl.load_tensor_descriptor(desc, offsets) / tl.store_tensor_descriptor(desc, offsets, value)
            if not call.args:
                raise self.rw.unsupported(self.stmt, "a tensor-descriptor access without arguments")
            desc_node = call.args[0]
            method = "load" if kind == "load" else "store"
            rest = list(range(1, len(call.args)))

            def set_desc(n: ast.AST, c: ast.Call = call) -> None:
                c.args[0] = n
        kw = {k.arg: k for k in call.keywords if k.arg}
        names = {"load": ("offsets",), "store": ("offsets", "value"), "gather": ("x_offsets", "y_offset"),
                 "scatter": ("value", "x_offsets", "y_offset")}.get(method, ("offsets", "value"))

        def get(name: str) -> ast.AST | None:
            i = names.index(name) if name in names else -1
            if 0 <= i < len(rest):
                return call.args[rest[i]]
            return kw[name].value if name in kw else None

        def put(name: str, node: ast.AST) -> None:
            i = names.index(name)
            if i < len(rest):
                call.args[rest[i]] = node
            else:
                kw[name].value = node

        desc_name = ast.unparse(desc_node)
        desc_t = self._temp(desc_node, "d")
        set_desc(desc_t)
        shadow = None
        if isinstance(desc_node, ast.Name) and self.rw.forms.kind_of(desc_node.id) == "desc":
            shadow = self.rw.forms.shadow_of(desc_node.id)
        op = _DESC_METHODS.get(method, ("", ""))[1]
        st = self.statement()
        if self.addr_on:
            sid = self.rw._new_site(st, kind, desc_name, self.reads, self.loops, dump_addr == 1)
            self.rw._note_access(self, sid, call)
            info = self.rw.sites[sid - 1].info
            info["form"] = "tensor_descriptor"
            if kind == "atomic":
                info["op"] = op
            if isinstance(desc_node, ast.Name):
                kname = self.rw._kernel_name_of(desc_node.id)
                if kname is not None and kname in self.rw.shared.desc_params:
                    info["desc_param"] = kname
            if kind == "load":
                info["padding"] = self.rw.forms.padding_of(desc_node)
            sh = shadow if shadow is not None else "None"
            if method in ("gather", "scatter"):
                x = get("x_offsets")
                y = get("y_offset")
                if x is None or y is None:
                    raise self.rw.unsupported(self.stmt, f"a descriptor {method} without row and column offsets")
                xt = self._temp(x, "o")
                put("x_offsets", xt)
                yt = self._temp(y, "o")
                put("y_offset", yt)
                self.pre.append(f"{SEQ} = {H_DESCGATHER}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {kcode}, "
                                f"{ast.unparse(desc_t)}, {sh}, {ast.unparse(xt)}, {ast.unparse(yt)}, {dump_addr})")
            else:
                offs = get("offsets")
                if offs is None:
                    raise self.rw.unsupported(self.stmt, "a tensor-descriptor access without offsets")
                if isinstance(offs, (ast.List, ast.Tuple)):
                    elts = [self._temp(e, "o") if not self.rw._pure(e) else e for e in offs.elts]
                    offs.elts = elts
                    offs_text = "(" + "".join(ast.unparse(e) + ", " for e in elts) + ")"
                else:
                    ot = self._temp(offs, "o")
                    put("offsets", ot)
                    offs_text = ast.unparse(ot)
                self.pre.append(f"{SEQ} = {H_DESCADDR}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {kcode}, "
                                f"{ast.unparse(desc_t)}, {sh}, {offs_text}, {dump_addr})")
        if want_value:
            v = get("value")
            if v is not None:
                self._store_value(st, ast.unparse(v), v, lambda n: put("value", n), dump_val)


# ------------------------------------------------------------------------------------------------
# Public entry points
# ------------------------------------------------------------------------------------------------


def lead_of(line: str) -> str:
    """The white space a line starts with."""
    return line[:len(line) - len(line.lstrip())]


def twin_header(fdef: ast.FunctionDef, desc_params: list[str] | None = None) -> str:
    """The twin's `def` line: the kernel's parameters and the context parameter CTX (with a
    default where the kernel's last parameters have some), then one `__fp_db_<p>` parameter (the
    base address) per parameter passed a host TensorDescriptor (_memforms.py), default None."""
    header_fn = ast.FunctionDef(name=fdef.name, args=copy.deepcopy(fdef.args), body=[ast.Pass()],
                                decorator_list=[], returns=fdef.returns, type_comment=None)
    if hasattr(ast, "TypeAlias"):
        header_fn.type_params = []  # type: ignore[attr-defined]
    args = header_fn.args
    args.args.append(ast.arg(arg=CTX))
    if args.defaults:
        args.defaults.append(ast.Constant(None))
    for p in desc_params or []:
        args.args.append(ast.arg(arg=f"__fp_db_{p}"))
        args.defaults.append(ast.Constant(None))
    return ast.unparse(ast.fix_missing_locations(ast.Module(body=[header_fn], type_ignores=[]))).split("\n")[0]


def source_text(jitfn: Any) -> str | None:
    """The kernel's source text for the cheap scans, or None where it is not available."""
    fn = getattr(jitfn, "fn", None)
    if fn is None:
        return None
    try:
        lines, _ = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    return "".join(lines)


def has_markers(jitfn: Any) -> bool:
    """Cheap test: does the kernel's source mention a collection marker at all?"""
    text = source_text(jitfn)
    return text is not None and ("collect_start" in text or "collect_end" in text)


def rewrite(jitfn: Any, level: int, addr_level: int, sanitize: bool = False) -> Twin:
    """Parse the kernel, check its markers and build the twin's text and tables (no exec).
    sanitize: observe every load and store of the whole body (addresses only), markers or not."""
    return _Rewriter(jitfn, level, addr_level, sanitize).run()


def twin_cache_dir() -> Path:
    base = os.environ.get("FLAGPRISM_CACHE_DIR")
    if base:
        root = Path(base)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        root = Path(xdg) / "flagprism" if xdg else Path.home() / ".cache" / "flagprism"
    return root / "twins"


def file_stem(name: str, cap: int = 64) -> str:
    """A kernel's name made safe as part of a file name: letters, digits and '_' kept, anything
    else (a '/', '..', quotes, control characters, NUL) '_', at most `cap` characters. The
    name itself may be anything: its __name__ can be set to any string."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in name[:cap])
    return safe or "kernel"


def write_twin_file(twin: Twin) -> str:
    """Store the twin's text in a content-addressed file inside the cache directory and return
    its path. The file name is a sanitized, length-capped form of the kernel's name plus the
    text's digest; a temporary file that cannot be renamed into place is removed."""
    digest = hashlib.sha256(twin.text.encode("utf-8")).hexdigest()[:32]
    name = f"{file_stem(twin.kernel_name)}-{digest}.py"
    errors: list[str] = []
    for d in (twin_cache_dir(), Path(tempfile.gettempdir()) / f"flagprism-twins-{os.getuid()}"):
        tmp = None
        try:
            d.mkdir(parents=True, exist_ok=True)
            path = d / name
            if not path.exists() or path.read_text(encoding="utf-8") != twin.text:
                fd, tmp = tempfile.mkstemp(dir=d, prefix=".twin-", suffix=".tmp")
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(twin.text)
                os.replace(tmp, path)
                tmp = None
            return str(path)
        except OSError as e:
            errors.append(f"{d}: {e.strerror or e}")
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
    raise RewriteError(f"cannot write the twin of {file_stem(twin.kernel_name)} to a cache directory "
                       f"({'; '.join(errors)})")


def jit_options(jitfn: Any) -> dict[str, Any]:
    """The options the kernel was decorated with, to give its twin the same ones."""
    kw = compat.interpreted_options(jitfn)
    if kw:  # an InterpretedFunction keeps them as given
        return dict(kw)
    return {
        "version": getattr(jitfn, "version", None),
        "do_not_specialize": getattr(jitfn, "do_not_specialize", None),
        "do_not_specialize_on_alignment": getattr(jitfn, "do_not_specialize_on_alignment", None),
        "debug": getattr(jitfn, "debug", None),
        "noinline": getattr(jitfn, "noinline", None),
        "repr": getattr(jitfn, "_repr", None),
        "launch_metadata": getattr(jitfn, "launch_metadata", None),
    }


def build(jitfn: Any, level: int, addr_level: int, helpers: dict[str, Any], sanitize: bool = False) -> Twin:
    """Rewrite, store and exec the twin, then wrap it like the original (JIT or interpreted)."""
    twin = rewrite(jitfn, level, addr_level, sanitize)
    load_twin(jitfn, twin, helpers)
    return twin


def load_twin(jitfn: Any, twin: Any, helpers: dict[str, Any]) -> None:
    """Store a rewritten twin's text (twin.path), exec it in the kernel's globals and closure plus
    `helpers` (twin.fn, twin.extra["scope"]) and wrap it like the original, with the original's
    options and pre-run hooks (twin.jit). twin: a Twin or any twin with those attributes."""
    twin.path = write_twin_file(twin)
    fn = jitfn.fn
    scope = dict(fn.__globals__)
    try:
        scope.update(inspect.getclosurevars(fn).nonlocals)
    except (TypeError, ValueError):
        pass
    scope.update(helpers)
    subs = getattr(twin, "subtwins", None)
    if subs:
        scope.update(_calltwins.load_subtwins(subs, helpers))
    code = compile(twin.text, twin.path, "exec")
    ns: dict[str, Any] = {}
    exec(code, scope, ns)
    # The def's own name: __name__ may have been set to anything since.
    twin.fn = ns[getattr(getattr(fn, "__code__", None), "co_name", None) or fn.__name__]
    twin.fn.__qualname__ = fn.__qualname__
    twin.extra["scope"] = scope
    cls = type(jitfn)
    opts = jit_options(jitfn)
    twin.jit = cls(twin.fn, **opts)
    for hook in getattr(jitfn, "pre_run_hooks", []) or []:
        twin.jit.add_pre_run_hook(_strip_ctx(hook))
    twin.jit._fp_twin = True


def frame_files(twin: Any) -> list[str | None]:
    """The twin file of every helper call site (frame 1, 2, ...), for the op log."""
    by_frame = {s.frame: s.path for s in getattr(twin, "subtwins", [])}
    return [by_frame.get(f.id) or None for f in getattr(twin, "frames", [])]


def _strip_ctx(hook: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        kwargs.pop(CTX, None)
        return hook(*args, **kwargs)
    return wrapped
