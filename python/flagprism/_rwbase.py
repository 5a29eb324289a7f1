# SPDX-License-Identifier: Apache-2.0
"""What every source rewriter of FlagPrism shares: the Debugger's (``_rewrite.py``, twins that
record values and addresses) and the intra-kernel timelines' (``_timeline.py``, twins that record
clock reads) both start from a kernel's source and extend ``RewriterBase``.

Here: the kernel's source lines and how they map back to the user's file (``Source``); how a
name in the kernel resolves to an object (``resolve``, ``is_tl``, ``marker_kind``); the errors a
rewrite raises; the collection markers and the regions they delimit; the statement and loop
tables (``Statement``, ``Loop``) with the host-evaluable definitions that size loops; which calls
are memory accesses. Not here: what a twin records, or how its text is written (the
subclasses).
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import triton.language as tl

from flagprism import compat

#: The twin's extra trailing parameter: the record buffer (Debugger) or timeline buffer.
CTX = "__fp_ctx"
#: Prefixes of the names twins add (the Debugger's and the timelines'); a kernel that already uses
#: one cannot be instrumented.
RESERVED_PREFIX = ("__fp_", "__fpu_")  # the twin's own names and its hoisted temporaries

#: Triton's memory accesses, by the names the rewriters recognise them by.
LOAD_FNS = ("load",)
STORE_FNS = ("store",)
ATOMIC_OPS = ("add", "max", "min", "and", "or", "xor", "xchg", "cas")
#: Descriptor methods and what they do: (kind, op).
DESC_METHODS = {
    "load": ("load", ""),
    "store": ("store", ""),
    "gather": ("load", "gather"),
    "scatter": ("store", "scatter"),
} | {f"atomic_{o}": ("atomic", o) for o in ("add", "min", "max", "and", "or", "xor")}


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
        d = {
            "id": self.id,
            "line": self.line,
            "col": self.col,
            "end_line": self.end_line,
            "source": self.source,
            "loop_depth": self.loop_depth,
        }
        if self.frame:
            d["frame"] = self.frame
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
    var: str | None = None  # a `for` loop's induction variable when it is a plain name


MISSING = object()


def resolve(node: ast.AST, scope: dict[str, Any]) -> Any:
    """The object an expression like ``tl.load`` or ``fpl.collect_start`` names, or MISSING:
    triton.language's own object where the interpreter has patched it (compat.unpatched)."""
    if isinstance(node, ast.Name):
        return compat.unpatched(scope.get(node.id, MISSING))
    if isinstance(node, ast.Attribute):
        base = resolve(node.value, scope)
        if base is MISSING:
            return MISSING
        return compat.unpatched(getattr(base, node.attr, MISSING))
    return MISSING


def loop_or_test_heads(st: ast.stmt) -> list[ast.AST] | None:
    """What a `for`, `while` or `if` evaluates itself (not its blocks); None for other
    statements."""
    if isinstance(st, ast.For):
        return [st.target, st.iter]
    if isinstance(st, (ast.While, ast.If)):
        return [st.test]
    return None


def find_call(
    nodes: list[ast.AST], scope: dict[str, Any], kind: Callable[[Any], str | None]
) -> ast.Call | None:
    """The first call inside `nodes` whose callee, resolved in `scope`, has a `kind`."""
    for h in nodes:
        for sub in ast.walk(h):
            if isinstance(sub, ast.Call) and kind(resolve(sub.func, scope)):
                return sub
    return None


def marker_kind(obj: Any) -> str | None:
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


def is_tl(obj: Any, names: tuple[str, ...]) -> bool:
    obj = compat.unpatched(obj)
    for n in names:
        for mod in (tl, tl.core):
            if obj is compat.unpatched(getattr(mod, n, None)):
                return True
    return False


@dataclass
class Region:
    start: ast.Expr
    end: ast.Expr
    level: int
    addr_level: int


class Source:
    """The kernel's source lines, dedented, and how to map them back to the user's file."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        try:
            lines, first = inspect.getsourcelines(fn)
        except (OSError, TypeError) as e:
            raise RewriteError(
                f"the source of kernel {getattr(fn, '__name__', fn)!r} is not available "
                "(kernels must be defined in a Python file)"
            ) from e
        self.file = fn.__code__.co_filename
        self.first = first
        raw = [ln.rstrip("\r\n") for ln in lines]
        self.indent = self._common_indent(raw)
        self.lines = [ln[len(self.indent) :] if ln.strip() else "" for ln in raw]
        self.raw = raw

    @staticmethod
    def _common_indent(lines: list[str]) -> str:
        prefix: str | None = None
        for ln in lines:
            if not ln.strip():
                continue
            lead = ln[: len(ln) - len(ln.lstrip())]
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
            raise RewriteError(
                f"cannot parse kernel source: {e.msg}", self.file, self.abs_line(e.lineno or 1)
            ) from e
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
        chars = len(line.encode("utf-8")[: node.col_offset].decode("utf-8", errors="replace"))
        return len(self.indent) + chars


def binop_text(op: ast.operator) -> str:
    return ast.unparse(ast.BinOp(ast.Name("a"), op, ast.Name("b")))[2:-2]


class RewriterBase:
    """A kernel's source, parsed, with the tables a rewrite fills. ``level`` and ``addr_level``
    are the defaults of ``fpl.collect_start()``'s arguments; ``statements`` and ``loops`` may be
    lists shared with other rewriters (a kernel's and its helpers')."""

    def __init__(
        self,
        jitfn: Any,
        level: int = 0,
        addr_level: int = 0,
        src: Source | None = None,
        statements: list[Statement] | None = None,
        loops: list[Loop] | None = None,
    ) -> None:
        self.jitfn = jitfn
        self.fn = jitfn.fn
        self.src = src if src is not None else Source(self.fn)
        self.scope: dict[str, Any] = dict(self.fn.__globals__)
        try:
            self.scope.update(inspect.getclosurevars(self.fn).nonlocals)
        except (TypeError, ValueError):
            pass
        self.level = level
        self.addr_level = addr_level
        self.statements: list[Statement] = statements if statements is not None else []
        self.loops: list[Loop] = loops if loops is not None else []
        self.frame = 0  # the kernel's own body (a helper's twin: its call site)
        self.host_defs: list[tuple[int, str, str]] = []
        self.fdef: ast.FunctionDef | None = None
        self.parent_block: dict[int, tuple[list[ast.stmt], int]] = {}
        self.parent_stmt: dict[int, ast.AST] = {}

    def where(self, node: ast.AST) -> tuple[str, int]:
        return self.src.file, self.src.abs_line(getattr(node, "lineno", 1))

    def marker_error(self, node: ast.AST, msg: str) -> MarkerError:
        f, ln = self.where(node)
        return MarkerError(msg, f, ln)

    def unsupported(self, node: ast.AST, msg: str) -> UnsupportedError:
        f, ln = self.where(node)
        text = self.src.lines[node.lineno - 1].strip() if hasattr(node, "lineno") else ""
        return UnsupportedError(f"{msg} (in `{text}`)" if text else msg, f, ln)

    def check_reserved(self, fdef: ast.FunctionDef) -> None:
        for node in ast.walk(fdef):
            name = None
            if isinstance(node, ast.Name):
                name = node.id
            elif isinstance(node, ast.arg):
                name = node.arg
            if name and name.startswith(RESERVED_PREFIX):
                raise self.unsupported(
                    node, f"the name {name!r} is reserved for the Debugger's twin"
                )
        a = fdef.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            raise self.unsupported(
                fdef,
                "kernels with *args, **kwargs, keyword-only or positional-only "
                "parameters cannot be instrumented",
            )

    def marker_of(self, stmt: ast.AST) -> str | None:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            return marker_kind(resolve(stmt.value.func, self.scope))
        return None

    def marker_levels(self, call: ast.Call) -> tuple[int, int]:
        level, addr = self.level, self.addr_level
        names = ["level", "addr_level"]
        given: dict[str, ast.AST] = {}
        if len(call.args) > 2:
            raise self.marker_error(
                call, "collect_start takes at most two arguments (level, addr_level)"
            )
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
            if not (
                isinstance(node, ast.Constant)
                and isinstance(node.value, int)
                and not isinstance(node.value, bool)
                and 0 <= node.value <= 2
            ):
                raise self.marker_error(call, f"collect_start({k}=...) must be a literal 0, 1 or 2")
            out[k] = node.value
        return out["level"], out["addr_level"]

    def blocks(self, node: ast.AST):
        """Every statement list under node (bodies of compound statements), with its owner."""
        for fld in ("body", "orelse", "finalbody"):
            block = getattr(node, fld, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block
        for h in getattr(node, "handlers", []) or []:
            yield h.body
        for c in getattr(node, "cases", []) or []:
            yield c.body

    def find_regions(self, fdef: ast.FunctionDef) -> list[Region]:
        regions: list[Region] = []
        self.parent_block: dict[int, tuple[list[ast.stmt], int]] = {}
        self.parent_stmt: dict[int, ast.AST] = {}

        def visit_block(block: list[ast.stmt], owner: ast.AST, open_outer: ast.AST | None) -> None:
            open_start: ast.Expr | None = None
            for i, st in enumerate(block):
                self.parent_block[id(st)] = (block, i)
                self.parent_stmt[id(st)] = owner
                kind = self.marker_of(st)
                if kind == "start":
                    if open_start is not None:
                        raise self.marker_error(
                            st,
                            "nested fpl.collect_start(): the region opened at line "
                            f"{self.src.abs_line(open_start.lineno)} is not closed yet",
                        )
                    if open_outer is not None:
                        raise self.marker_error(
                            st,
                            "nested fpl.collect_start(): this statement is inside the "
                            "region opened at line "
                            f"{self.src.abs_line(open_outer.lineno)}",
                        )
                    open_start = st
                elif kind == "end":
                    if open_start is None:
                        if open_outer is not None:
                            raise self.marker_error(
                                st,
                                "fpl.collect_end() is not in the same block as the "
                                "fpl.collect_start() at line "
                                f"{self.src.abs_line(open_outer.lineno)}",
                            )
                        raise self.marker_error(
                            st,
                            "fpl.collect_end() without a matching fpl.collect_start() "
                            "in the same block",
                        )
                    lv, al = self.marker_levels(open_start.value)
                    regions.append(Region(open_start, st, lv, al))
                    open_start = None
                else:
                    self.check_marker_misuse(st)
                    if isinstance(
                        st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
                    ):
                        for sub in ast.walk(st):
                            if isinstance(sub, ast.stmt) and self.marker_of(sub):
                                raise self.marker_error(
                                    sub,
                                    "collection markers inside a nested function are not supported",
                                )
                        continue
                    for sub in self.blocks(st):
                        visit_block(sub, st, open_start or open_outer)
            if open_start is not None:
                raise self.marker_error(
                    open_start,
                    "fpl.collect_start() without a matching fpl.collect_end() in the same block",
                )

        visit_block(fdef.body, fdef, None)
        return regions

    def check_marker_misuse(self, st: ast.stmt) -> None:
        """Markers used inside expressions (x = fpl.collect_start(), if fpl.collect_end(): ...)."""
        heads = loop_or_test_heads(st)
        if heads is None:
            if isinstance(st, ast.With):
                heads = list(st.items)
            elif self.is_compound(st):
                heads = []
            else:
                heads = [st]
        call = find_call(heads, self.scope, marker_kind)
        if call is not None:
            raise self.marker_error(
                call, "fpl.collect_start()/collect_end() must be statements of their own"
            )

    def region_span(self, reg: Region) -> tuple[list[ast.stmt], int, int]:
        block, i0 = self.parent_block[id(reg.start)]
        _, i1 = self.parent_block[id(reg.end)]
        return block, i0, i1

    def ancestors(self, st: ast.AST) -> list[ast.AST]:
        out = []
        cur = self.parent_stmt.get(id(st))
        while cur is not None and cur is not self.fdef:
            out.append(cur)
            cur = self.parent_stmt.get(id(cur))
        return out

    def loop_depth_of(self, st: ast.AST) -> int:
        return sum(1 for a in self.ancestors(st) if isinstance(a, (ast.For, ast.While)))

    def loop_chain_of(self, st: ast.AST) -> tuple[int, ...]:
        chain: list[int] = []
        for a in reversed(self.ancestors(st)):
            if isinstance(a, (ast.For, ast.While)):
                chain.append(self.new_loop(a, chain[-1] if chain else None))
        return tuple(chain)

    def collect_host_defs(self, fdef: ast.FunctionDef) -> None:
        for st in fdef.body:
            line = self.src.abs_line(st.lineno)
            if (
                isinstance(st, ast.Assign)
                and len(st.targets) == 1
                and isinstance(st.targets[0], ast.Name)
            ):
                self.host_defs.append((line, st.targets[0].id, ast.unparse(st.value)))
            elif (
                isinstance(st, ast.AnnAssign)
                and isinstance(st.target, ast.Name)
                and st.value is not None
            ):
                self.host_defs.append((line, st.target.id, ast.unparse(st.value)))
            elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name):
                t = st.target.id
                self.host_defs.append(
                    (line, t, f"({t}) {binop_text(st.op)} ({ast.unparse(st.value)})")
                )
            else:
                for sub in ast.walk(st):
                    if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                        self.host_defs.append((line, sub.id, ""))  # set in a nested block: unknown

    def new_loop(self, node: ast.AST, parent: int | None, header_only: bool = False) -> int:
        """A loop of the site table's sizing. header_only: the loop of a `while` test, which runs
        once more than the body (counted as one more iteration)."""
        range_args: list[str] | None = None
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Call):
            obj = resolve(node.iter.func, self.scope)
            is_range = obj is range or (
                isinstance(node.iter.func, ast.Name)
                and node.iter.func.id == "range"
                and obj is MISSING
            )
            if is_range or is_tl(obj, ("range", "static_range")):
                if not node.iter.keywords or all(
                    k.arg
                    in (
                        "num_stages",
                        "loop_unroll_factor",
                        "warp_specialize",
                        "flatten",
                        "disallow_acc_multi_buffer",
                    )
                    for k in node.iter.keywords
                ):
                    range_args = [ast.unparse(a) for a in node.iter.args]
        lid = len(self.loops)
        self.loops.append(
            Loop(
                lid,
                self.src.abs_line(node.lineno),
                "for" if isinstance(node, ast.For) else "while",
                range_args,
                parent,
                self.frame,
                extra_trip=header_only,
                var=(
                    node.target.id
                    if isinstance(node, ast.For) and isinstance(node.target, ast.Name)
                    else None
                ),
            )
        )
        return lid

    @staticmethod
    def is_compound(st: ast.stmt) -> bool:
        return isinstance(
            st,
            (
                ast.For,
                ast.While,
                ast.If,
                ast.With,
                ast.AsyncFor,
                ast.AsyncWith,
                ast.Try,
                ast.FunctionDef,
                ast.AsyncFunctionDef,
                ast.ClassDef,
            ),
        ) or type(st).__name__ in ("Match", "TryStar")

    def access_kind(self, call: ast.Call) -> tuple[str, bool] | None:
        """('load'|'store'|'atomic', is_descriptor) if call is a memory access the Debugger
        observes."""
        func = call.func
        obj = resolve(func, self.scope)
        if obj is not MISSING:
            if is_tl(obj, LOAD_FNS):
                return "load", False
            if is_tl(obj, STORE_FNS):
                return "store", False
            if is_tl(obj, tuple(f"atomic_{o}" for o in ATOMIC_OPS)):
                return "atomic", False
            if is_tl(obj, ("load_tensor_descriptor",)):
                return "load", True
            if is_tl(obj, ("store_tensor_descriptor",)):
                return "store", True
            return None
        if isinstance(func, ast.Attribute) and func.attr in DESC_METHODS:
            base = resolve(func.value, self.scope)
            if base is MISSING:  # a local object: a tensor descriptor is the one with these methods
                return DESC_METHODS[func.attr][0], True
        return None

    def atomic_op(self, call: ast.Call) -> str:
        """ "add", "cas"... of a tl.atomic_* call or a descriptor's atomic method."""
        func = call.func
        obj = resolve(func, self.scope)
        for o in ATOMIC_OPS:
            if obj is not MISSING and is_tl(obj, (f"atomic_{o}",)):
                return o
        if isinstance(func, ast.Attribute) and func.attr.startswith("atomic_"):
            return func.attr[len("atomic_") :]
        return ""

    def new_statement(self, st: ast.stmt, depth: int) -> Statement:
        s = Statement(
            id=len(self.statements),
            line=self.src.abs_line(st.lineno),
            col=self.src.col(st),
            end_line=self.src.abs_line(st.end_lineno),
            source=self.src.segment(st),
            loop_depth=depth,
            frame=self.frame,
        )
        self.statements.append(s)
        return s
