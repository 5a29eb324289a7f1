# SPDX-License-Identifier: Apache-2.0
"""Intra-kernel timelines: the timeline twin of a kernel and its instrumented launches.

While a profiling session with instrumentation is open (``profiler.start(...,
backend="instrumentation")`` or ``instrumentation=True``), a launch of a ``@triton.jit`` kernel
with ``fpl.scope``/``fpl.enter_scope``/``fpl.exit_scope`` (or, with ``auto_scopes=True``, with
``fpl.collect_start()``/``collect_end()`` regions) runs its *timeline twin*: the kernel's own
source, rewritten line for line like the Debugger's twin (``_rewrite.py``), with a trailing
``__fp_ctx`` buffer parameter, a prologue that writes each program's begin record, and a record
call at every scope enter and exit (``_tlrecords.py``). The buffer is copied back after the
launch and handed to C (``flagprism._ext.prof_timeline_add``), which decodes it and files the
scopes under the kernel's node. Without such a session nothing here runs: the scopes are Triton
builtins that compile to nothing, and launches take Triton's own path.

Rewriting rules (docs/guide/intra-kernel.md): ``with fpl.scope("x"):`` becomes an enter record on the
``with`` line, its body is dedented by one level (same lines), and the exit record goes after
the body's last simple statement, or before the next statement, or after the function; scope
names must be string literals; ``enter_scope``/``exit_scope`` pair in one block like the
collection markers. Automatic mode makes one scope per top-level statement of each marked
region (the Debugger's statement table), merging statements where no simple line separates
them. Nothing here decodes or aggregates.
"""

from __future__ import annotations

import ast
import contextvars
import threading
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flagprism import _devbuf, _intercept, _launch, _tlrecords, _twinfile
from flagprism._rwbase import (
    CTX,
    Loop,
    MarkerError,
    RewriteError,
    RewriterBase,
    Statement,
    UnsupportedError,
    find_call,
    loop_or_test_heads,
    resolve,
)
from flagprism._twinfile import lead_of

TB = "__fp_tb"
TS = "__fp_tS"
TN = "__fp_tn"
H_BEGIN = "__fp_tl_begin"
H_REC = "__fp_tl_rec"

MAGIC = 0x000000314C545046
VERSION = 1
HEADER_WORDS = 8
RECORD_WORDS = 4
CLOCK_HOST = 0
CLOCK_NVIDIA = 1
CLOCK_AMD = 2
#: Records assumed per scope and iteration of a loop whose trip count is unknown on the host.
LOOP_TRIPS = _launch.LOOP_TRIPS
#: Largest timeline buffer allocated by default (bytes); timeline_capacity may ask for more.
MAX_BYTES = 256 << 20
PIPELINED = 1

__all__ = ["ScopeError", "TimelineTwin", "rewrite", "build"]


class ScopeError(MarkerError):
    """Unbalanced, mismatched or misplaced intra-kernel scopes; the message names file and line."""


@dataclass
class Scope:
    id: int
    name: str
    line: int
    end_line: int
    kind: str  # "with", "call" or "auto"
    loops: tuple[int, ...]  # ids of the enclosing loops (sizing), outermost first
    flags: int = 0
    reason: str = ""
    statement: Statement | None = None

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "line": self.line,
            "end_line": self.end_line,
            "kind": self.kind,
            "pipelined": bool(self.flags & PIPELINED),
        }
        if self.reason:
            d["warning"] = self.reason
        if self.statement is not None:
            d["statement"] = self.statement.to_json()
        return d


@dataclass
class TimelineTwin:
    kernel_name: str
    source_file: str
    text: str
    path: str
    auto: bool
    scopes: list[Scope]
    loops: list[Loop]
    host_defs: list[tuple[int, str, str]]
    fn: Callable[..., Any] | None = None
    jit: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    def scope_table(self) -> list[tuple[str, int]]:
        return [(s.name, s.flags) for s in self.scopes]


# ------------------------------------------------------------------------------------------------
# Recognising scopes in the source
# ------------------------------------------------------------------------------------------------


def _scope_kind(obj: Any) -> str | None:
    """'with', 'enter' or 'exit' for flagprism.language's scope objects."""
    try:
        from flagprism import language
    except ImportError:  # pragma: no cover
        return None
    if obj is language.scope:
        return "with"
    if obj is language.enter_scope:
        return "enter"
    if obj is language.exit_scope:
        return "exit"
    if getattr(obj, "__module__", None) == "flagprism.language":
        return {"scope": "with", "enter_scope": "enter", "exit_scope": "exit"}.get(
            getattr(obj, "__name__", "")
        )
    return None


def _rec(scope_id: int, kind: int) -> str:
    return f"{TN} = {H_REC}({TB}, {TS}, {TN}, {_tlrecords.tag(scope_id, kind)})"


class _TimelineRewriter(RewriterBase):
    """The timelines' rewriter: a kernel's twin that reads the clock around its scopes."""

    def __init__(self, jitfn: Any, auto: bool) -> None:
        super().__init__(jitfn)
        self.auto = auto
        self.scopes: list[Scope] = []
        self.replace: dict[int, str] = {}  # dedented line -> new content (indentation kept)
        self.prefix: dict[int, list[str]] = {}
        self.suffix: dict[int, list[str]] = {}
        self.blank: set[int] = set()
        self.dedent: list[tuple[int, int, int]] = []  # (first, last line, columns)
        self.tail: list[str] = []  # statements after the function's last line
        self.loop_ids: dict[int, int] = {}
        self._cut: dict[int, int] = {}  # line -> column where a suffixed statement ends

    # -- errors ------------------------------------------------------------------------------------

    def error(self, node: ast.AST, msg: str) -> ScopeError:
        return ScopeError(msg, self.src.file, self.src.abs_line(getattr(node, "lineno", 1)))

    # -- entry --------------------------------------------------------------------------------------

    def run(self) -> TimelineTwin:
        fdef = self.src.parse_function()
        self.fdef = fdef
        self.check_reserved(fdef)
        self.parents: dict[int, tuple[list[ast.stmt], int, tuple[ast.AST, ...]]] = {}
        self._index(fdef.body, ())
        if self.auto:
            regions = self.find_regions(fdef)
            if not regions:
                raise MarkerError(
                    "auto_scopes: the kernel has no fpl.collect_start()/collect_end() region",
                    self.src.file,
                    self.src.abs_line(fdef.lineno),
                )
            self.collect_host_defs(fdef)
            for reg in regions:
                self._auto_region(reg)
        else:
            self.collect_host_defs(fdef)
            self._block(fdef.body, ())
        text = self._emit(fdef)
        return TimelineTwin(
            kernel_name=self.fn.__name__,
            source_file=self.src.file,
            text=text,
            path="",
            auto=self.auto,
            scopes=self.scopes,
            loops=self.loops,
            host_defs=self.host_defs,
        )

    def _index(self, block: list[ast.stmt], loops: tuple[ast.AST, ...]) -> None:
        for i, st in enumerate(block):
            self.parents[id(st)] = (block, i, loops)
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            inner = loops + (st,) if isinstance(st, (ast.For, ast.While)) else loops
            for sub in self.blocks(st):
                self._index(sub, inner)

    # -- scope bookkeeping -----------------------------------------------------------------------------

    def _loop_chain(self, loops: tuple[ast.AST, ...]) -> tuple[int, ...]:
        chain: list[int] = []
        for node in loops:
            lid = self.loop_ids.get(id(node))
            if lid is None:
                lid = self.new_loop(node, chain[-1] if chain else None)
                self.loop_ids[id(node)] = lid
            chain.append(lid)
        return tuple(chain)

    def _pipelined(self, loops: tuple[ast.AST, ...]) -> str:
        """Why the compiler may move work across a scope inside these loops ("" if no reason)."""
        for node in reversed(loops):
            line = self.src.abs_line(node.lineno)
            if isinstance(node, ast.For) and isinstance(node.iter, ast.Call):
                if any(k.arg == "num_stages" for k in node.iter.keywords):
                    return f"inside the loop at line {line}, which has num_stages (software pipelining)"
            for sub in ast.walk(node):
                if (
                    isinstance(sub, ast.Call)
                    and self.access_kind(sub) is not None
                    and self.access_kind(sub)[0] == "load"
                ):
                    return (
                        f"inside the loop at line {line}, which loads from memory: the compiler may "
                        "software-pipeline it (num_stages > 1) and move loads across iterations"
                    )
        return ""

    def _new_scope(
        self,
        name: str,
        node: ast.AST,
        end_line: int,
        kind: str,
        loops: tuple[ast.AST, ...],
        statement: Statement | None = None,
    ) -> Scope:
        if len(self.scopes) >= 0xFFFF:
            raise self.error(node, "more than 65535 intra-kernel scopes in one kernel")
        reason = self._pipelined(loops)
        sc = Scope(
            id=len(self.scopes) + 1,
            name=name,
            line=self.src.abs_line(node.lineno),
            end_line=self.src.abs_line(end_line),
            kind=kind,
            loops=self._loop_chain(loops),
            flags=PIPELINED if reason else 0,
            reason=reason,
            statement=statement,
        )
        self.scopes.append(sc)
        return sc

    # -- editing helpers ------------------------------------------------------------------------------

    def _own_line(self, st: ast.stmt) -> bool:
        """True when st is the only statement on its lines (no `a; b`)."""
        block, i, _ = self.parents[id(st)]
        if i > 0 and block[i - 1].end_lineno >= st.lineno:
            return False
        if i + 1 < len(block) and block[i + 1].lineno <= st.end_lineno:
            return False
        return True

    def _suffix_after(self, st: ast.stmt, text: str) -> None:
        line = self.src.lines[st.end_lineno - 1]
        raw = line.encode("utf-8")
        self.suffix.setdefault(st.end_lineno, []).append(text)
        self.replace.setdefault(
            st.end_lineno, line
        )  # placeholder, cut at the statement's end below
        self._cut[st.end_lineno] = len(raw[: st.end_col_offset].decode("utf-8", errors="replace"))

    def _is_simple(self, st: ast.stmt) -> bool:
        return not self.is_compound(st) or self._with_scope(st) is not None

    def _with_scope(self, st: ast.stmt) -> str | None:
        """The name of a `with fpl.scope("name"):` statement, None for any other statement."""
        if not isinstance(st, ast.With):
            return None
        kinds = [
            _scope_kind(resolve(it.context_expr.func, self.scope))
            if isinstance(it.context_expr, ast.Call)
            else None
            for it in st.items
        ]
        if not any(k == "with" for k in kinds):
            return None
        if len(st.items) != 1:
            raise self.error(st, "one fpl.scope() per `with` statement (nest them instead)")
        return self._literal_name(st.items[0].context_expr, "fpl.scope")

    def _literal_name(self, call: ast.Call, what: str) -> str:
        if len(call.args) != 1 or call.keywords:
            raise self.error(call, f"{what}() takes exactly one argument, the scope name")
        a = call.args[0]
        if not (isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value):
            raise self.error(call, f"{what}(): the scope name must be a non-empty string literal")
        return a.value

    def _call_kind(self, st: ast.stmt) -> tuple[str, str] | None:
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            k = _scope_kind(resolve(st.value.func, self.scope))
            if k in ("enter", "exit"):
                return k, self._literal_name(st.value, f"fpl.{k}_scope")
        return None

    def _check_misuse(self, st: ast.stmt) -> None:
        heads = loop_or_test_heads(st)
        if heads is None:
            if isinstance(st, ast.With):
                heads = [it.context_expr for it in st.items] if self._with_scope(st) is None else []
            elif self.is_compound(st):
                heads = []
            elif self._call_kind(st) is not None:
                heads = [a for a in st.value.args]  # type: ignore[attr-defined]
            else:
                heads = [st]
        call = find_call(heads, self.scope, _scope_kind)
        if call is not None:
            raise self.error(
                call,
                "fpl.scope()/enter_scope()/exit_scope() must be statements of "
                "their own (or the only item of a `with`)",
            )

    # -- manual scopes -------------------------------------------------------------------------------

    def _block(self, block: list[ast.stmt], loops: tuple[ast.AST, ...]) -> None:
        open_stack: list[tuple[str, ast.stmt, Scope]] = []
        for i, st in enumerate(block):
            self._check_misuse(st)
            ck = self._call_kind(st)
            if ck is not None:
                kind, name = ck
                if not self._own_line(st):
                    raise self.error(st, f"fpl.{kind}_scope() must be alone on its line")
                if kind == "enter":
                    sc = self._new_scope(name, st, st.end_lineno, "call", loops)
                    open_stack.append((name, st, sc))
                    self._replace_stmt(st, _rec(sc.id, _tlrecords.ENTER))
                else:
                    if not open_stack:
                        raise self.error(
                            st,
                            f"fpl.exit_scope({name!r}) without a matching fpl.enter_scope() "
                            "in the same block",
                        )
                    oname, ost, sc = open_stack[-1]
                    if oname != name:
                        raise self.error(
                            st,
                            f"fpl.exit_scope({name!r}) does not match the innermost open scope "
                            f"{oname!r} (entered at line {self.src.abs_line(ost.lineno)})",
                        )
                    open_stack.pop()
                    sc.end_line = self.src.abs_line(st.end_lineno)
                    self._replace_stmt(st, _rec(sc.id, _tlrecords.EXIT))
                continue
            name = self._with_scope(st)
            if name is not None:
                self._with(st, name, block, i, loops)
                continue
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            inner = loops + (st,) if isinstance(st, (ast.For, ast.While)) else loops
            for sub in self.blocks(st):
                self._block(sub, inner)
        if open_stack:
            name, st, _ = open_stack[-1]
            raise self.error(
                st,
                f"fpl.enter_scope({name!r}) without a matching fpl.exit_scope() in the same block",
            )

    def _replace_stmt(self, st: ast.stmt, text: str) -> None:
        self.replace[st.lineno] = text
        for ln in range(st.lineno + 1, st.end_lineno + 1):
            self.blank.add(ln)

    def _with(
        self, st: ast.With, name: str, block: list[ast.stmt], i: int, loops: tuple[ast.AST, ...]
    ) -> None:
        body = st.body
        if body[0].lineno == st.lineno:
            raise self.error(st, "the body of `with fpl.scope(...)` must start on its own line")
        if not self._own_line(st):
            raise self.error(
                st, "`with fpl.scope(...)` must not share its line with other statements"
            )
        if st.items[0].context_expr.end_lineno != st.lineno:
            raise self.error(st, "`with fpl.scope(...):` must fit on one line")
        sc = self._new_scope(name, st, st.end_lineno, "with", loops)
        self.replace[st.lineno] = _rec(sc.id, _tlrecords.ENTER)
        # the body moves one level out, on the same lines
        hdr = self.src.lines[st.lineno - 1]
        first = self.src.lines[body[0].lineno - 1]
        delta = (len(first) - len(first.lstrip())) - (len(hdr) - len(hdr.lstrip()))
        if delta <= 0:
            raise self.error(st, "cannot find the indentation of the `with` body")
        self.dedent.append((body[0].lineno, body[-1].end_lineno, delta))
        self._block(body, loops)
        exit_rec = _rec(sc.id, _tlrecords.EXIT)
        last = body[-1]
        if not self.is_compound(last) and self._own_line(last) and self._call_kind(last) is None:
            self._suffix_after(last, exit_rec)
        elif self._call_kind(last) is not None:
            self.replace[last.lineno] = self.replace[last.lineno] + "; " + exit_rec
        elif i + 1 < len(block) and self._is_simple(block[i + 1]) and self._own_line(block[i + 1]):
            self.prefix.setdefault(block[i + 1].lineno, []).append(exit_rec)
        elif block is self.fdef.body and i + 1 == len(block):
            self.tail.append(exit_rec)
        else:
            raise self.error(
                st,
                "cannot place the end of this scope: its body ends with a compound statement "
                "and the next statement is compound too; add a simple statement after the "
                "`with` block, or use fpl.enter_scope()/fpl.exit_scope()",
            )

    # -- automatic scopes ----------------------------------------------------------------------------

    def _auto_region(self, reg: Any) -> None:
        block, i0, i1 = self.region_span(reg)
        # manual scope calls are no-ops in automatic mode: not statements of their own
        stmts = [st for st in block[i0 + 1 : i1] if self._call_kind(st) is None]
        if not stmts:
            return
        _, _, loops = self.parents[id(block[i0])]
        # groups of statements separated by placeable boundaries
        groups: list[list[ast.stmt]] = [[stmts[0]]]
        for a, b in zip(stmts, stmts[1:]):
            a_ok = not self.is_compound(a) and self._own_line(a)
            b_ok = not self.is_compound(b) and self._own_line(b)
            if a_ok or b_ok:
                groups.append([b])
            else:
                groups[-1].append(b)
        prev_exit: str | None = None
        for k, g in enumerate(groups):
            first, last = g[0], g[-1]
            line, end = self.src.abs_line(first.lineno), self.src.abs_line(last.end_lineno)
            text = self.src.lines[first.lineno - 1].strip()
            if len(text) > 48:
                text = text[:45] + "..."
            name = f"L{line}" + (f"-L{end}" if end != line else "") + f" {text}"
            stmt = self.new_statement(first, len(loops))
            stmt.end_line = end
            sc = self._new_scope(name, first, last.end_lineno, "auto", loops, stmt)
            enter = _rec(sc.id, _tlrecords.ENTER)
            recs = ([prev_exit] if prev_exit else []) + [enter]
            if k == 0:
                self.replace[block[i0].lineno] = "; ".join(recs)
            elif not self.is_compound(first) and self._own_line(first):
                self.prefix.setdefault(first.lineno, []).extend(recs)
            else:
                prev_last = groups[k - 1][-1]
                self._suffix_after(prev_last, "; ".join(recs))
            prev_exit = _rec(sc.id, _tlrecords.EXIT)
        assert prev_exit is not None
        self.replace[block[i1].lineno] = prev_exit

    # -- output ---------------------------------------------------------------------------------------

    def _emit(self, fdef: ast.FunctionDef) -> str:
        lines = list(self.src.lines)
        def_idx = fdef.lineno
        body_first = fdef.body[0].lineno
        if body_first == def_idx:
            raise UnsupportedError(
                "a kernel whose body starts on the `def` line",
                self.src.file,
                self.src.abs_line(def_idx),
            )
        for ln in range(1, body_first):
            lines[ln - 1] = ""
        for ln in sorted(set(self.replace) | set(self.prefix) | set(self.suffix)):
            orig = self.src.lines[ln - 1]
            lead = lead_of(orig)
            if ln in self.suffix:
                content = orig[: self._cut[ln]].strip()
                if ln in self.replace and self.replace[ln] != orig:
                    content = self.replace[ln]
                content = "; ".join([content] + self.suffix[ln])
            else:
                content = self.replace.get(ln, orig.strip())
            if ln in self.prefix:
                content = "; ".join(self.prefix[ln] + [content])
            lines[ln - 1] = lead + content
        for ln in self.blank:
            lines[ln - 1] = ""
        for first, last, delta in self.dedent:
            for ln in range(first, last + 1):
                t = lines[ln - 1]
                if t[:delta].strip() == "":
                    lines[ln - 1] = t[delta:]
        header = _twinfile.twin_header(fdef)
        lead = lead_of(self.src.lines[body_first - 1]) or "    "
        prologue = f"{lead}{TB}, {TS}, {TN} = {H_BEGIN}({CTX})"
        # the program's end record: after the last statement, or before a final `return`
        end_rec = f"{TN} = {H_REC}({TB}, {TS}, {TN}, {_tlrecords.TAG_END})"
        last = fdef.body[-1]
        if isinstance(last, ast.Return):
            if (
                last.lineno in self.replace
                or last.lineno in self.suffix
                or not self._own_line(last)
            ):
                end_rec = ""
            else:
                lines[last.lineno - 1] = lead_of(lines[last.lineno - 1]) + "; ".join(
                    [end_rec, lines[last.lineno - 1].strip()]
                )
                end_rec = ""
        abs_def = self.src.abs_line(def_idx)
        if abs_def < 2:
            raise UnsupportedError(
                "a kernel whose `def` is on the first line of its file", self.src.file, abs_def
            )
        full = [""] * (self.src.first - 1) + lines
        full[abs_def - 2] = header
        full[abs_def - 1] = prologue
        for t in self.tail + ([end_rec] if end_rec else []):
            full.append(lead + t)
        return "\n".join(full) + "\n"


def rewrite(jitfn: Any, auto: bool = False) -> TimelineTwin:
    """Parse the kernel and build its timeline twin's text and scope table (no exec)."""
    return _TimelineRewriter(jitfn, auto).run()


def has_scopes(jitfn: Any, auto: bool) -> bool:
    """Cheap test: may the kernel's source hold scopes (or, in auto mode, regions)?"""
    text = _twinfile.source_text(jitfn)
    if text is None:
        return False
    if auto:
        return "collect_start" in text
    return "scope(" in text


def build(jitfn: Any, auto: bool, flavour: str) -> TimelineTwin:
    """Rewrite, store and exec the twin, then wrap it like the original (JIT or interpreted)."""
    twin = rewrite(jitfn, auto)
    _twinfile.load_twin(jitfn, twin, _tlrecords.helpers(flavour))
    return twin


# ------------------------------------------------------------------------------------------------
# Sizing and the header
# ------------------------------------------------------------------------------------------------


def records_per_program(twin: TimelineTwin, bound: dict[str, Any]) -> int:
    trips = _launch.loop_trips(twin, bound)  # type: ignore[arg-type]
    # the begin and end records, and an enter and an exit record per run of each scope
    return 2 + sum(2 * _launch.runs_per_program(trips, sc.loops) for sc in twin.scopes)


def header(slots: int, programs: int, nscopes: int, clock: int, tick_khz: int = 0) -> list[int]:
    """The 8 header words; tick_khz (word 5): the AMD clock's tick rate, 0 for ns clocks."""
    layout = VERSION | (clock << 8) | (RECORD_WORDS << 16)
    return [MAGIC, layout, slots, programs, nscopes, tick_khz, 0, 0]


# ------------------------------------------------------------------------------------------------
# Interception (installed while a session with instrumentation is active)
# ------------------------------------------------------------------------------------------------

_lock = threading.RLock()
#: Active sessions with instrumentation (profiler._Session objects); read by the launch wrapper.
view: tuple[Any, ...] = ()
_patches: list[_intercept.Handle] = []
#: Inside the Debugger's interceptors (order 100): a launch the Debugger instruments never reaches
#: the timeline's, and the timeline sees the launches the Debugger lets through.
_ORDER = 200
_bypass: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "flagprism_timeline_bypass", default=False
)
_scan_cache: dict[tuple[int, bool], tuple[Any, bool]] = {}
_twin_cache: dict[tuple[int, bool, str], tuple[Any, TimelineTwin | None]] = {}
_refused: dict[str, str] = {}


def publish(open_sessions: tuple[Any, ...]) -> None:
    """The profiler's open sessions changed (its lock held): hook launches while one wants
    instrumentation."""
    global view
    want = tuple(s for s in open_sessions if getattr(s, "instrumentation", False) and s.active)
    with _lock:
        view = want
        if any(getattr(s, "instrumentation", False) for s in open_sessions):
            _install()
        else:
            _uninstall()


def _install() -> None:
    if _patches:
        return
    _patches.extend(
        [
            _intercept.add("jit.run", "timeline", _run, _ORDER),
            _intercept.add("interp.run", "timeline", _run, _ORDER),
            _intercept.add("autotune.bench", "timeline", _bench, _ORDER),
        ]
    )


def _uninstall() -> None:
    while _patches:
        _intercept.remove(_patches.pop())


def _bench(call_next: Callable[..., Any], self: Any, *args: Any, **kwargs: Any) -> Any:
    """Autotuner._bench: the launches that time autotuning configs are not instrumented."""
    token = _bypass.set(True)
    try:
        return call_next(self, *args, **kwargs)
    finally:
        _bypass.reset(token)


def _run(
    call_next: Callable[..., Any], self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any
) -> Any:
    sessions = view
    if (
        warmup
        or not sessions
        or _bypass.get()
        or _intercept.in_internal()
        or getattr(self, "_fp_twin", False)
    ):
        return call_next(self, *args, grid=grid, warmup=warmup, **kwargs)
    auto = any(getattr(s, "auto_scopes", False) for s in sessions)
    twin = _twin_for(self, auto)
    if twin is None:
        return call_next(self, *args, grid=grid, warmup=warmup, **kwargs)
    return _instrumented(self, twin, args, kwargs, grid, sessions)


def device_flavours() -> tuple[str, ...]:
    """The vendors whose GPUs have a timer flavour of the record writers (_tlrecords.helpers):
    a kernel compiled for another backend runs uninstrumented, with a warning. AMD's is for the
    architectures of _tlrecords.AMD_REALTIME_KHZ."""
    return ("nvidia", "amd")


def _target_arch() -> str:
    try:
        from triton.runtime.driver import driver

        return str(driver.active.get_current_target().arch)
    except Exception:  # noqa: BLE001
        return "unknown"


def _flavour(fn: Any) -> str:
    """'host', 'nvidia', 'amd', or 'unsupported:<why>'."""
    backend = _launch.backend_of(fn)
    if backend == "interpreter":
        return "host"
    if backend == "cuda":
        return "nvidia"
    if backend == "hip":
        arch = _target_arch()
        if arch in _tlrecords.AMD_REALTIME_KHZ:
            return "amd"
        known = ", ".join(sorted(_tlrecords.AMD_REALTIME_KHZ))
        return (
            f"unsupported:intra-kernel timelines on AMD are implemented for {known} (the parts "
            f"whose s_memrealtime rate is known), not for {arch!r} "
            "(docs/internals/backend-adaptation.md)"
        )
    if backend == "npu":
        return (
            "unsupported:intra-kernel timelines need a device timer read, and Triton-Ascend has "
            "none to offer: tl.extra.ascend has no clock and inline assembly "
            "(tl.inline_asm_elementwise) crashes triton-adapter-opt's lowering to Linalg "
            "(checked: triton-ascend 3.2.0; docs/guide/backends.md)"
        )
    return (
        f"unsupported:intra-kernel timelines are not implemented for the {backend!r} backend "
        "(docs/internals/backend-adaptation.md: a timer read is needed)"
    )


def _clock(backend: str) -> tuple[int, int]:
    """The header's clock code and tick rate (kHz) for a launch on `backend`."""
    if backend == "interpreter":
        return CLOCK_HOST, 0
    if backend == "hip":
        return CLOCK_AMD, _tlrecords.AMD_REALTIME_KHZ[_target_arch()]
    return CLOCK_NVIDIA, 0


def _twin_for(fn: Any, auto: bool) -> TimelineTwin | None:
    """The kernel's timeline twin, or None (launch the original): no scopes, or a kernel that
    cannot be instrumented (warned once)."""
    key = (id(fn), auto)
    hit = _scan_cache.get(key)
    if hit is not None and hit[0]() is fn:
        if not hit[1]:
            return None
    else:
        flag = has_scopes(fn, auto)
        try:
            _scan_cache[key] = (weakref.ref(fn), flag)
        except TypeError:
            pass
        if not flag:
            return None
    flavour = _flavour(fn)
    tkey = (id(fn), auto, flavour)
    hit2 = _twin_cache.get(tkey)
    if hit2 is not None and hit2[0]() is fn:
        return hit2[1]
    name = getattr(getattr(fn, "fn", None), "__name__", repr(fn))
    twin: TimelineTwin | None
    if flavour.startswith("unsupported:"):
        _refuse(name, flavour[12:])
        twin = None
    else:
        try:
            twin = build(fn, auto, flavour)
        except ScopeError:
            raise  # the user's scopes are wrong: say so at the launch
        except RewriteError as e:
            _refuse(name, str(e))
            twin = None
        if twin is not None and not twin.scopes:
            twin = None
    try:
        _twin_cache[tkey] = (weakref.ref(fn), twin)
    except TypeError:
        pass
    return twin


def _refuse(name: str, why: str) -> None:
    with _lock:
        if _refused.get(name) == why:
            return
        _refused[name] = why
    warnings.warn(
        f"flagprism: intra-kernel timeline: {name} runs uninstrumented: {why}",
        RuntimeWarning,
        stacklevel=4,
    )


def _capacity(sessions: tuple[Any, ...]) -> int | None:
    caps = [
        s.timeline_capacity for s in sessions if getattr(s, "timeline_capacity", None) is not None
    ]
    return max(caps) if caps else None


def _instrumented(
    fn: Any,
    twin: TimelineTwin,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    grid: Any,
    sessions: tuple[Any, ...],
) -> Any:
    import torch

    from flagprism import _ext

    bound, _opts = _launch.bind(fn, args, kwargs)
    g = _launch.eval_grid(grid, bound)
    programs = g[0] * g[1] * g[2]
    cap = _capacity(sessions)
    if cap is not None:
        slots = max(1, int(cap))
    else:
        slots = records_per_program(twin, bound)
        slots = max(1, min(slots, MAX_BYTES // (8 * RECORD_WORDS * max(programs, 1))))
    backend = _launch.backend_of(fn)
    host = backend == "interpreter"
    dev = _launch.buffer_device(backend)
    words = HEADER_WORDS + programs * (1 + RECORD_WORDS * slots)
    buf = _launch.alloc_buffer(
        words,
        dev,
        f"timeline_capacity={cap}; None: sized from the launch",
        header(slots, programs, len(twin.scopes), *_clock(backend)),
    )
    if host:
        _tlrecords.set_host_buffer(buf.numpy())
    kw = dict(kwargs)
    kw[CTX] = buf
    t0 = _ext.prof_clock_ns()
    try:
        ret = twin.jit.run(*args, grid=g, warmup=False, **kw)
        if not host and dev.type == "cuda":
            with _intercept.internal():
                torch.cuda.synchronize(dev)
    finally:
        if host:
            _tlrecords.set_host_buffer(None)
    t1 = _ext.prof_clock_ns()
    raw = _devbuf.read(buf)
    device_id = dev.index if getattr(dev, "index", None) is not None else 0
    scopes = twin.scope_table()
    for s in sessions:
        try:
            _ext.prof_timeline_add(
                s.id,
                twin.kernel_name,
                g,
                raw,
                scopes,
                t0,
                t1,
                callpath=s.context == "python",
                device_id=int(device_id),
                program_tracks=getattr(s, "timeline_tracks", "sm") == "program",
            )
        except OSError:
            pass  # finalized by another thread meanwhile
        except _ext.FormatError as e:
            warnings.warn(
                f"flagprism: intra-kernel timeline of {twin.kernel_name}: the buffer was rejected: {e}",
                RuntimeWarning,
                stacklevel=3,
            )
            break
        _note_scopes(s, twin)
    return ret


def _note_scopes(s: Any, twin: TimelineTwin) -> None:
    """The scope table of each instrumented kernel, once per session, in the metadata."""
    import json

    from flagprism import _ext

    key = f"intra_kernel_scopes:{twin.kernel_name}"
    table = json.dumps(
        {
            "file": twin.source_file,
            "auto": twin.auto,
            "twin_file": twin.path,
            "scopes": [sc.to_json() for sc in twin.scopes],
        },
        sort_keys=True,
    )
    if s.notes.get(key) != table:
        s.notes[key] = table
        _ext.prof_set_meta(s.id, key, table)


def forget() -> None:
    """Drop cached twins (tests)."""
    with _lock:
        _scan_cache.clear()
        _twin_cache.clear()
        _refused.clear()


def describe(s: Any) -> str:
    """One line for the metadata: what the session's timeline numbers are."""
    mode = (
        "automatic scopes (one per top-level statement of each collection region)"
        if s.auto_scopes
        else "fpl.scope / enter_scope / exit_scope"
    )
    return (
        f"intra-kernel timelines on: {mode}; tracks per {s.timeline_tracks}; NVIDIA: %globaltimer ns "
        "(updates in steps of about 1 us on many GPUs: per-interval times below that are quantised; "
        "means over many programs are not) and %clock64 cycles of the program's SM; AMD: "
        "s_memrealtime ticks converted to ns (gfx90a: 25 MHz, 40 ns steps; gfx942: 100 MHz, 10 ns) "
        "and s_memtime cycles, 'SM' = HW_ID's CU/SH/SE fields; "
        "interpreter: host clock per program. Kernels run instrumented: compare with an "
        "uninstrumented run (bench/bench_timeline.py measures the slowdown)"
    )
