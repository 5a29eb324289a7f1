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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import triton.language as tl

from flagprism import _calltwins, _checkgen, _findsites, _memforms
from flagprism._rwbase import (  # noqa: F401 - also this module's API (debugger, _calltwins, ...)
    ATOMIC_OPS,
    CTX,
    DESC_METHODS,
    LOAD_FNS,
    MISSING,
    RESERVED_PREFIX,
    STORE_FNS,
    Loop,
    MarkerError,
    Region,
    RewriteError,
    RewriterBase,
    Source,
    Statement,
    UnsupportedError,
    binop_text,
    find_call,
    is_tl,
    loop_or_test_heads,
    marker_kind,
    resolve,
)
from flagprism._twinfile import (  # noqa: F401 - also this module's API
    file_stem,
    frame_files,
    jit_options,
    lead_of,
    load_twin,
    source_text,
    twin_cache_dir,
    twin_header,
    write_twin_file,
)

#: Names the twin adds; a kernel that already uses one of them cannot be instrumented (CTX, the
#: record buffer parameter: _rwbase.py).
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

#: Parameters of tl.atomic_cas and of the other tl.atomic_* (Triton 3.x).
_CAS_PARAMS = ("pointer", "cmp", "val", "sem", "scope")
_ATOMIC_PARAMS = ("pointer", "val", "mask", "sem", "scope")
H_BPMAKE = "__fp_bpmake"  # block pointers and descriptors (_memforms.py, _records.py)
H_BPADV = "__fp_bpadv"
H_BPADDR = "__fp_bpaddr"
H_DESCADDR = "__fp_descaddr"
H_DESCGATHER = "__fp_descgather"
H_DEXT = "__fp_dext"
H_MAND = "__fp_mand"  # a mask ANDed with a branch condition (conditional expressions)
# Parameters of tl.load/tl.store in order (Triton 3.x). Written out because the interpreter may
# leave triton.language.core patched with wrappers that hide the real signatures.
_LOAD_PARAMS = (
    "pointer",
    "mask",
    "other",
    "boundary_check",
    "padding_option",
    "cache_modifier",
    "eviction_policy",
    "volatile",
)
_STORE_PARAMS = ("pointer", "value", "mask", "boundary_check", "cache_modifier", "eviction_policy")


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
        d = {
            "what": self.what,
            "line": self.line,
            "col": self.col,
            "source": self.source,
            "reason": self.reason,
        }
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
        d = {
            "id": self.id,
            "statement": self.statement,
            "kind": self.kind,
            "name": self.name,
            "reads": list(self.reads),
        }
        d.update(self.info)
        return d


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
    desc_params: list[str] = field(
        default_factory=list
    )  # kernel params passed a host TensorDescriptor
    #: the check slots (_checkgen.Checks) or None; records: whether the twin writes record slots
    #: (marker mode) or only its checks (check mode)
    checks: Any = None
    records: bool = True

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
            "params": list(self.checks.params) if self.checks is not None else [],
            "check_slots": self.checks.to_json() if self.checks is not None else [],
        }

    @property
    def nparams(self) -> int:
        """Entries of the record buffer's tensor table (0: no check area)."""
        return self.checks.nparams if self.has_checks else 0

    @property
    def nchecks(self) -> int:
        return len(self.checks.slots) if self.checks is not None else 0

    @property
    def has_checks(self) -> bool:
        return self.nchecks > 0


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
        self.checks: _checkgen.Checks | None = None


# ------------------------------------------------------------------------------------------------
# Resolving names of the kernel's module statically
# ------------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------------
# The rewriter
# ------------------------------------------------------------------------------------------------


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


class _Rewriter(RewriterBase):
    """The Debugger's rewriter: a kernel's twin that records what its marked regions (or, in
    sanitize mode, its whole body) compute and access."""

    def __init__(
        self,
        jitfn: Any,
        level: int,
        addr_level: int,
        sanitize: bool = False,
        src: Source | None = None,
        rules: frozenset[str] = frozenset(),
        suppress: bool = True,
    ) -> None:
        super().__init__(jitfn, level, addr_level, src)
        # sanitize: the whole body is one region observing addresses only, markers or not, and
        # constructs that cannot be observed are left as they are instead of refused
        self.sanitize = sanitize
        # check mode writes no records, only its checks (_checkgen.py); marker mode both
        self.records = not sanitize
        self.rules = rules
        self.suppress = suppress
        self.checks: _checkgen.Checks | None = None
        self.all_params: set[str] = set()
        self.local_names: set[str] = set()
        self._assigned: dict[str, list[ast.AST | None]] | None = None
        # tables shared with the twins of the helpers this kernel calls (_calltwins.py)
        self.shared = _Shared()
        self.statements: list[Statement] = self.shared.statements
        self.sites: list[Site] = self.shared.sites
        self.loops: list[Loop] = self.shared.loops
        self.depth = 0  # helper nesting
        self.parent_rw: _Rewriter | None = None
        self.forms = _memforms.Forms(self)  # block pointers and descriptors this function tracks
        # dedented line index (1-based) -> replacement text for whole simple-statement groups
        self.line_edits: dict[int, str] = {}
        self.blank_lines: set[int] = set()
        self.header_override: dict[
            int, str
        ] = {}  # line -> rewritten header of a compound statement
        self.onelines: set[int] = set()  # header lines whose one-line body was written with them
        self.prologue_extra: list[
            str
        ] = []  # statements for the `def` line (a first header's accesses)
        self.assigned_here: set[str] = set()  # names this function assigned so far (helpers' reads)
        self.visited: set[int] = (
            set()
        )  # ids of the statements rewritten (the others keep their text)
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

    # -- entry --------------------------------------------------------------------------------------

    def run(self) -> Twin:
        fdef = self.src.parse_function()
        self.fdef = fdef
        self.check_reserved(fdef)
        self.params = [
            a.arg
            for a in fdef.args.args
            if a.annotation is None or not self._is_constexpr_annotation(a.annotation)
        ]
        self.all_params = {a.arg for a in fdef.args.args}
        self.local_names = _stored_names(fdef)
        if self.rules:
            self.checks = _checkgen.Checks(
                self.rules, self.suppress, [a.arg for a in fdef.args.args]
            )
            self.shared.checks = self.checks
        self.bases = _findsites.PointerBases(fdef, self.params, self._resolve_obj, self.access_kind)
        self.forms.scan(fdef, {})
        if self.sanitize:
            return self._run_sanitize(fdef)
        regions = self.find_regions(fdef)
        if not regions:
            raise MarkerError(
                "kernel has no fpl.collect_start()/collect_end() pair",
                self.src.file,
                self.src.abs_line(fdef.lineno),
            )
        self.collect_host_defs(fdef)
        for reg in regions:
            self.reg_level, self.reg_addr = reg.level, reg.addr_level
            self.defined = set()
            self.vcache = {}
            self.ocache = {}
            self.acache = {}
            self.ccache = {}
            block, i0, i1 = self.region_span(reg)
            depth = self.loop_depth_of(reg.start)
            self._block(block[i0 + 1 : i1], block, depth, self.loop_chain_of(reg.start))
        self._shadows_outside(fdef)
        text = self._emit(fdef)
        levels = [r.level for r in regions]
        addrs = [r.addr_level for r in regions]
        return self._twin(text, max(levels), max(addrs))

    def _twin(self, text: str, level: int, addr_level: int) -> Twin:
        sh = self.shared
        return Twin(
            kernel_name=self.fn.__name__,
            source_file=self.src.file,
            text=text,
            path="",
            level=level,
            addr_level=addr_level,
            statements=self.statements,
            sites=self.sites,
            loops=self.loops,
            host_defs=self.host_defs,
            frames=sh.frames,
            subtwins=sh.subtwins,
            unobserved=sh.unobserved,
            desc_params=sh.desc_params,
            checks=sh.checks,
            records=self.records,
        )

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
                    for sub in self.blocks(st):
                        index(sub, st)

        index(fdef.body, fdef)
        self.collect_host_defs(fdef)
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
        self.shared.unobserved.append(
            Unobserved(
                what=what,
                line=self.src.abs_line(getattr(node, "lineno", 1)),
                col=self.src.col(node) if hasattr(node, "col_offset") else 0,
                source=source,
                reason=reason,
                frame=self.frame,
            )
        )

    def _unobserved_access(self, st: ast.stmt, call: ast.Call, reason: str) -> None:
        if self.reg_addr >= 1:
            self._note_unobserved("memory", st, ast.unparse(call), reason)

    def _unobserved_header(self, st: ast.stmt, reason: str) -> None:
        """Every access and helper call of a header that cannot be evaluated ahead of it."""
        for e in self._header_exprs(st):
            for sub in ast.walk(e):
                if not isinstance(sub, ast.Call):
                    continue
                if self.access_kind(sub) is not None:
                    self._unobserved_access(
                        st, sub, f"in the header of a compound statement: {reason}"
                    )
                else:
                    helper = _calltwins.user_helper(self._resolve_obj(sub.func))
                    if helper is not None:
                        self._note_unobserved(
                            "statement",
                            st,
                            self._header_text(st),
                            f"helper {helper.fn.__name__} called in the header of a compound "
                            f"statement is not observed: {reason}",
                        )

    def _unobserved_block(self, st: ast.stmt, reason: str) -> None:
        """Every access of a block left as it is."""
        for sub in ast.walk(st):
            if isinstance(sub, ast.Call) and self.access_kind(sub) is not None:
                self._unobserved_access(st, sub, reason)
        self._note_unobserved("statement", st, self.src.lines[st.lineno - 1].strip(), reason)

    def _unobserved_helper(
        self,
        h: _Hoister,
        helper: Any,
        fdef: ast.FunctionDef | None,
        src: Source | None,
        reason: str,
    ) -> None:
        """A helper call left as it is: the call counts as one unobserved statement, and every access
        in the helper's body as an unobserved memory site."""
        self._note_unobserved("statement", h.orig, self.src.segment(h.orig).split("\n")[0], reason)
        if fdef is None:
            try:
                src = Source(helper.fn)
                fdef = src.parse_function()
            except RewriteError:
                return
        if self.reg_addr < 1 or src is None:
            return
        for sub in ast.walk(fdef):
            if isinstance(sub, ast.Call) and self.access_kind(sub) is not None:
                self.shared.unobserved.append(
                    Unobserved(
                        what="memory",
                        line=src.abs_line(sub.lineno),
                        col=src.col(sub),
                        source=ast.unparse(sub),
                        reason=reason,
                        frame=self.frame,
                    )
                )

    # -- what the checks need to know (_checkgen.py) ---------------------------------------------

    def assigned_values(self, name: str) -> list[ast.AST | None] | None:
        """Every value this function assigns to `name` (None where it is not a plain assignment:
        tuple unpacking, a loop target...); None for a parameter never assigned."""
        if self._assigned is None:
            out: dict[str, list[ast.AST | None]] = {}
            for node in _memforms._own_nodes(self.fdef):
                if isinstance(node, ast.Assign):
                    for t in node.targets:
                        if isinstance(t, ast.Name):
                            out.setdefault(t.id, []).append(node.value)
                        else:
                            for n in ast.walk(t):
                                if isinstance(n, ast.Name):
                                    out.setdefault(n.id, []).append(None)
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    out.setdefault(node.target.id, []).append(node.value)
                elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                    out.setdefault(node.target.id, []).append(
                        ast.BinOp(left=node.target, op=node.op, right=node.value)
                    )
                elif isinstance(node, (ast.For, ast.With, ast.NamedExpr)):
                    # only the names the statement itself binds: its body's own assignments
                    # are nodes of their own (walking the whole loop would take every name
                    # its body assigns for a loop target)
                    if isinstance(node, ast.With):
                        targets = [i.optional_vars for i in node.items if i.optional_vars]
                    else:
                        targets = [node.target]
                    for t in targets:
                        for n in ast.walk(t):
                            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                                out.setdefault(n.id, []).append(None)
            self._assigned = out
        got = self._assigned.get(name)
        if got is None:
            return None if name in self.all_params else []
        return got

    def param_plain(self, name: str) -> bool:
        """Is parameter `name` certainly a plain pointer (not a block pointer)? Kernel
        parameters are; a helper's, when the caller's argument is (overridden)."""
        return True

    # -- findings inputs (python/flagprism/_findsites.py) ---------------------------------------------

    def _resolve_obj(self, node: ast.AST) -> Any:
        obj = resolve(node, self.scope)
        return None if obj is MISSING else obj

    def _note_access(self, h: _Hoister, sid: int, call: ast.Call) -> None:
        """The pointer's candidate base parameters, for the out-of-bounds check."""
        cands = self.bases.of(call)
        self.sites[sid - 1].info.update(
            base_param=cands[0] if len(cands) == 1 else None, base_params=cands
        )
        h.accessed.append((call, sid))

    def _operand(
        self,
        h: _Hoister,
        role: str,
        target: str | None,
        operand: ast.AST,
        put: Callable[[ast.AST], None],
        text: str | None,
    ) -> None:
        """Observe an operand a numerical rule checks: by reference to the variable's latest
        record when the region observes it, else as a value site of its own."""
        extra = {"target_dtype": target} if target else {}
        if isinstance(operand, ast.Constant):
            return
        subject = text or ast.unparse(operand)
        if isinstance(operand, ast.Name):
            if self._resolve_obj(operand) is not None and operand.id not in self.all_params:
                return  # a global: a constant of the module, not a value of this program
            name = operand.id
        else:
            sid = self._new_site(h.statement(), "value", subject, h.reads, h.loops, False)
            self.sites[sid - 1].info.update(role=role, **extra)
            t = h._temp(operand, "r")
            put(t)
            name = ast.unparse(t)
        # a check runs before its site's record: the record counter it sees is that record's slot
        chk = _checkgen.operand(self, h.statement().id, role, target, name, subject, h.loops)
        if chk:
            h.pre.append(chk)
        if self.records and not isinstance(operand, ast.Name):
            h.pre.append(f"{SEQ} = {H_VALUE}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {name}, 0)")

    def _annotate(self, st: ast.stmt, work: ast.stmt, h: _Hoister, stmt: Statement | None) -> None:
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
        if _findsites.has_inf_literal(st, lambda c: self.access_kind(c) == ("load", False)):
            for s in values:
                s.info["inf_literal"] = True
        if not (
            isinstance(work, ast.Assign)
            and len(work.targets) == 1
            and isinstance(work.targets[0], ast.Name)
        ):
            return
        v = work.value
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute):
            # a load widened as it is read keeps its values, padding included:
            # `tl.load(...).to(tl.float32)`, `.cast(tl.float32)`, `tl.cast(tl.load(...), tl.float32)`
            inner, dtype = self._widened(v)
            if inner is not None:
                if getattr(self._resolve_obj(dtype), "name", None) not in ("fp32", "fp64"):
                    return
                v = inner
        load = next((sid for call, sid in h.accessed if call is v), None)
        if not isinstance(v, ast.Call) or self.access_kind(v) != ("load", False):
            return
        target = work.targets[0].id
        for s in values:
            if s.name == target and not s.info.get("role"):
                s.info.update(role="loaded", load_site=load, other=_findsites.load_other(v))

    def _widened(self, v: ast.Call) -> tuple[ast.AST | None, ast.AST | None]:
        """(the value, the dtype) of a cast written `x.to(dtype)`, `x.cast(dtype)` or
        `tl.cast(x, dtype)` (dtype positional or by keyword); (None, None) for other calls."""
        assert isinstance(v.func, ast.Attribute)
        if v.func.attr not in ("to", "cast"):
            return None, None
        args = list(v.args)
        kw = {k.arg: k.value for k in v.keywords if k.arg}
        if isinstance(v.func.value, ast.Call):  # a method of the loaded tensor
            inner = v.func.value
        elif (
            v.func.attr == "cast"
            and getattr(self._resolve_obj(v.func.value), "cast", None) is not None
        ):
            if not args:
                return None, None
            inner = args.pop(0)
        else:
            return None, None
        dtype = args[0] if args else kw.get("dtype")
        return (inner, dtype) if dtype is not None else (None, None)

    # -- markers ------------------------------------------------------------------------------------

    # -- host-evaluable definitions (for sizing loops) ---------------------------------------------

    # -- region bodies --------------------------------------------------------------------------------

    def _block(
        self, stmts: list[ast.stmt], block: list[ast.stmt], depth: int, loops: tuple[int, ...]
    ) -> None:
        groups: list[list[ast.stmt]] = []
        for st in stmts:
            if groups and st.lineno <= groups[-1][-1].end_lineno:
                groups[-1].append(st)
            else:
                groups.append([st])
        for g in groups:
            if len(g) == 1 and self.is_compound(g[0]):
                self._compound(g[0], depth, loops)
                continue
            for st in g:
                if self.is_compound(st):
                    raise self.unsupported(
                        st, "a compound statement sharing its line with other statements"
                    )
            self._group(g, depth, loops)

    def _compound(self, st: ast.stmt, depth: int, loops: tuple[int, ...]) -> None:
        if isinstance(
            st,
            (
                ast.FunctionDef,
                ast.AsyncFunctionDef,
                ast.ClassDef,
                ast.Try,
                ast.AsyncFor,
                ast.AsyncWith,
            ),
        ) or type(st).__name__ in ("Match", "TryStar"):
            if self.lenient:
                self._unobserved_block(
                    st, f"`{type(st).__name__}` is not supported by the Debugger"
                )
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
            lid = self.new_loop(st, loops[-1] if loops else None)
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
            word = (
                "while"
                if isinstance(st, ast.While)
                else ("elif" if line.lstrip().startswith("elif") else "if")
            )
            return f"{word} {ast.unparse(test)}:"
        if isinstance(st, ast.With):
            items = []
            for i, it in enumerate(st.items):
                e = exprs[i] if exprs else it.context_expr
                items.append(
                    ast.unparse(e)
                    + (f" as {ast.unparse(it.optional_vars)}" if it.optional_vars else "")
                )
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

    def _header(self, st: ast.stmt, depth: int, loops: tuple[int, ...]) -> _Header | None:
        """Observe the loads, stores, atomics and helper calls of a compound statement's header: they
        are evaluated on the line before it (and, for a `while`, again at the end of its body)
        into temporaries the header then reads. None when the header has nothing to observe."""
        exprs = self._header_exprs(st)
        if not any(
            isinstance(sub, ast.Call)
            and (
                self.access_kind(sub) is not None
                or _calltwins.user_helper(self._resolve_obj(sub.func))
            )
            for e in exprs
            for sub in ast.walk(e)
        ):
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
                s = Statement(
                    id=len(self.statements),
                    line=self.src.abs_line(st.lineno),
                    col=self.src.col(st),
                    end_line=self.src.abs_line(st.lineno),
                    source=text,
                    loop_depth=depth,
                    frame=self.frame,
                )
                self.statements.append(s)
                holder.append(s)
            return holder[0]

        work = [copy.deepcopy(e) for e in exprs]
        pre: list[str] = []
        # the header's own reads; a `while` test runs in its loop, once per iteration and once more
        hloops = loops
        spin = isinstance(st, ast.While) and all(isinstance(b, ast.Pass) for b in st.body)
        if isinstance(st, ast.While) and not spin:
            hloops = loops + (self.new_loop(st, loops[-1] if loops else None, header_only=True),)
        first_site = len(self.sites) + 1
        expr_stmt = ast.Expr(value=ast.Tuple(elts=work, ctx=ast.Load()))
        ast.copy_location(expr_stmt, st)
        hoister = _Hoister(
            self,
            expr_stmt,
            pre,
            statement,
            self._reads_of(ast.Module(body=[ast.Expr(e) for e in exprs], type_ignores=[])),
            hloops,
            addr_on,
            value_on,
            orig=st,
            depth=depth,
        )
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
        if isinstance(st, ast.While) and self.is_compound(st.body[-1]):
            return "the `while` body ends with a block, so its test cannot be evaluated again at its end"
        return None

    def _header_slot(self, st: ast.stmt) -> str | None:
        """Where the header of `st` is evaluated: "prev" (appended to the previous statement),
        "def" (the function's `def` line), "free" (a blank or comment line), or None."""
        block, i = self.parent_block[id(st)]
        line = st.lineno - 1
        owner = self.parent_stmt.get(id(st))
        if i > 0 and not self.is_compound(block[i - 1]) and block[i - 1].end_lineno == line:
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

    def _place_header(self, st: ast.stmt, head: _Header) -> None:
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
            if all(isinstance(b, ast.Pass) for b in st.body) and head.sites and self.records:
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
        prefix = line[: first.col_offset]
        if prefix.strip():  # a body on its header's line
            prefix = lead_of(line) + self.header_override.get(first.lineno, prefix.strip()) + " "
        self.line_edits[first.lineno] = (
            prefix + "; ".join(self._stmt_text(b) for b in block[i : j + 1]) + "; " + text
        )
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
                if isinstance(sub, ast.Call) and self.access_kind(sub) is not None:
                    return True
        return False

    # -- simple statements ----------------------------------------------------------------------------

    def _kernel_name_of(self, name: str) -> str | None:
        """The kernel's own variable (or parameter) a name of this function stands for."""
        return name

    def _group(self, group: list[ast.stmt], depth: int, loops: tuple[int, ...]) -> None:
        parts: list[str] = []
        changed = False
        for st in group:
            if self.marker_of(st):
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
        prefix = line[: first.col_offset]
        if prefix.strip():  # a body on its header's line (`if c: x = ...`, `else: y = ...`)
            prefix = lead_of(line) + self.header_override.get(first.lineno, prefix.strip()) + " "
            self.onelines.add(first.lineno)
        self.line_edits[first.lineno] = prefix + "; ".join(before + parts + after)
        for ln in range(first.lineno + 1, last_st.end_lineno + 1):
            self.blank_lines.add(ln)

    def _reads_of(self, st: ast.stmt) -> list[str]:
        out: list[str] = []
        for sub in ast.walk(st):
            if (
                isinstance(sub, ast.Name)
                and isinstance(sub.ctx, ast.Load)
                and sub.id in self.defined
            ):
                if sub.id not in out:
                    out.append(sub.id)
        return out

    def _simple(self, st: ast.stmt, depth: int, loops: tuple[int, ...]) -> tuple[str, bool]:
        """Instrumented text of one simple statement, and whether it changed."""
        self.visited.add(id(st))
        if isinstance(st, ast.Return):
            if self.frame:
                return self._helper_return(st, depth, loops)
            if self.sanitize and not any(
                isinstance(c, ast.Call) and self.access_kind(c) for c in ast.walk(st)
            ):
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
        elif (
            isinstance(st, ast.AnnAssign)
            and isinstance(st.target, ast.Name)
            and st.value is not None
        ):
            if not self._is_constexpr_annotation(st.annotation):
                targets.append((st.target.id, st.target))

        work = copy.deepcopy(st)
        pre: list[str] = []
        stmt_holder: list[Statement] = []

        def statement() -> Statement:
            if not stmt_holder:
                stmt_holder.append(self.new_statement(st, depth))
            return stmt_holder[0]

        hoister = _Hoister(
            self, work, pre, statement, reads, loops, addr_on, value_on, orig=st, depth=depth
        )
        hoister.run()
        self._forget(_stored_names(st))
        targets = [(n, t) for n, t in targets if not self.forms.is_form_name(n)]
        post: list[str] = []
        closed = None
        if (
            value_on
            and self.records
            and self.reg_level < 2
            and len(targets) == 1
            and isinstance(work, ast.Assign)
            and len(work.targets) == 1
            and isinstance(work.targets[0], ast.Name)
        ):
            closed = self._closed_form(work)
        if closed is not None:
            name = targets[0][0]
            sid = self._new_site(statement(), "value", name, reads, loops, False)
            info = f"__fp_a{self.ntemps}"
            self.ntemps += 1
            post.append(
                f"{SEQ}, {info} = {closed[0]}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {name}, {closed[1]})"
            )
            if closed[0] == H_VAFF:
                self.acache[name] = info
            else:
                self.ccache[name] = (info, closed[2])
        elif value_on:
            vreads = self._target_reads(st, work, targets, pre) if _checkgen.values_on(self) else []
            lit = _checkgen.inf_signs(st)
            for name, _node in targets:
                sid = self._new_site(statement(), "value", name, reads, loops, self.reg_level >= 2)
                if hoister.top_load is not None and len(targets) == 1:
                    chk = _checkgen.value(
                        self,
                        statement().id,
                        name,
                        name,
                        [],
                        0,
                        loops,
                        loaded=True,
                        act=hoister.top_load,
                        site=sid,
                        cands=hoister.load_info[1],
                    )
                else:
                    chk = _checkgen.value(
                        self, statement().id, name, name, vreads, lit, loops, site=sid
                    )
                if chk:
                    post.append(chk)
                if self.records:
                    words = f"__fp_w{self.ntemps}"
                    self.ntemps += 1
                    post.append(
                        f"{SEQ}, {words} = {H_VALUE}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, "
                        f"{name}, {1 if self.reg_level >= 2 else 0}, True)"
                    )
                    self.vcache[name] = words
        post.extend(self._form_updates(st, statement, reads, loops))
        for name, _node in targets:
            self.defined.add(name)
        if isinstance(st, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in [st.target] if not isinstance(st, ast.Assign) else st.targets:
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
        if (
            isinstance(work, ast.Expr)
            and isinstance(work.value, ast.Constant)
            and work.value.value is None
        ):
            body = ""  # the statement was a call of a helper without a value, now made before it
        return "; ".join(pre + ([body] if body else []) + post), True

    def _target_reads(
        self, st: ast.stmt, work: ast.stmt, targets: list[tuple[str, ast.AST]], pre: list[str]
    ) -> list[str]:
        """What an assignment reads, for its targets' NaN/Inf checks (evaluated after it): its
        value's names, loads and helper results (`work` is the statement as rewritten), the old
        value of an augmented target; a name the statement reassigns is read through a
        temporary bound before it."""

        def value_of(x: ast.stmt) -> ast.AST | None:
            if isinstance(x, ast.AugAssign):
                target = copy.deepcopy(x.target)
                for n in ast.walk(target):
                    if isinstance(n, ast.Name):
                        n.ctx = ast.Load()
                return ast.BinOp(left=target, op=x.op, right=x.value)
            if isinstance(x, (ast.Assign, ast.AnnAssign)):
                return x.value
            return None

        reads = _checkgen.value_reads(self, value_of(st), value_of(work))
        assigned = {n for n, _t in targets} | _stored_names(work)
        out = []
        for r in reads:
            if r in assigned:
                t = f"__fpr{self.ntemps}"
                self.ntemps += 1
                pre.append(f"{t} = {r}")
                out.append(t)
            else:
                out.append(r)
        return out

    def _form_updates(
        self,
        st: ast.stmt,
        statement: Callable[[], Statement],
        reads: list[str],
        loops: tuple[int, ...],
    ) -> list[str]:
        """After `st`: the shadows of the block pointers and descriptors it assigns (_memforms.py),
        and for a descriptor made on the device, the record of the memory it can address."""
        out = self.forms.after_assign(st)
        if not out:
            return out
        value = st.value if isinstance(st, (ast.Assign, ast.AnnAssign)) else None
        target = st.targets[0] if isinstance(st, ast.Assign) else st.target  # type: ignore[union-attr]
        if (
            self.reg_addr >= 1
            and isinstance(value, ast.Call)
            and isinstance(target, ast.Name)
            and self.forms.classify(value) == (_memforms.DESC, None)
        ):
            base = _memforms.bind(value, ("base",)).get("base")
            sid = self._new_site(
                statement(),
                "descriptor",
                ast.unparse(base) if base is not None else target.id,
                reads,
                loops,
                False,
            )
            cands = self.bases.arg_bases(base) if base is not None else []
            self.sites[sid - 1].info.update(
                base_param=cands[0] if len(cands) == 1 else None,
                base_params=cands,
                form="tensor_descriptor",
            )
            if _checkgen.bounds_on(self):
                out.append(
                    _checkgen.desc_extent(
                        self,
                        statement().id,
                        sid,
                        target.id,
                        self.forms.shadow_of(target.id),
                        cands,
                        loops,
                    )
                )
            if self.records:
                out.append(
                    f"{SEQ} = {H_DEXT}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {target.id}, "
                    f"{self.forms.shadow_of(target.id)})"
                )
        return out

    def _helper_return(
        self, st: ast.Return, depth: int, loops: tuple[int, ...]
    ) -> tuple[str, bool]:
        """`return X` of a helper twin: X's accesses observed, X returned with the record counter."""
        work = copy.deepcopy(st)
        pre: list[str] = []
        stmt_holder: list[Statement] = []

        def statement() -> Statement:
            if not stmt_holder:
                stmt_holder.append(self.new_statement(st, depth))
            return stmt_holder[0]

        hoister = _Hoister(
            self,
            work,
            pre,
            statement,
            self._reads_of(st),
            loops,
            self.reg_addr >= 1,
            self.reg_level >= 1,
            orig=st,
            depth=depth,
        )
        hoister.run()
        if (
            work.value is not None
            and self.returns_value
            and _checkgen.values_on(self)
            and not isinstance(work.value, ast.Name)
            and not (
                isinstance(work.value, ast.Tuple)
                and all(isinstance(e, ast.Name) for e in work.value.elts)
            )
        ):
            # a value made in the return expression itself: checked here (the caller's result
            # reads it, so a NaN born in it would otherwise look inherited there)
            t = f"__fpu_r{self.ntemps}"
            self.ntemps += 1
            reads = _checkgen.value_reads(self, work.value)
            pre.append(f"{t} = {ast.unparse(work.value)}")
            chk = _checkgen.value(
                self,
                statement().id,
                t,
                ast.unparse(st.value),
                reads,
                _checkgen.inf_signs(st),
                loops,
            )
            if chk:
                pre.append(chk)
            work.value = ast.Name(id=t, ctx=ast.Load())
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
            return any(
                a.arg == node.id
                and a.annotation is not None
                and self._is_constexpr_annotation(a.annotation)
                for a in self.fdef.args.args
            )
        return False

    def _arange_term(self, node: ast.AST) -> tuple[str, str, str] | None:
        """(K, LO, HI) texts of `tl.arange(LO, HI)`, `K * tl.arange(LO, HI)` or `tl.arange(LO, HI) * K`."""

        def arange(n: ast.AST) -> tuple[str, str] | None:
            if (
                isinstance(n, ast.Call)
                and len(n.args) == 2
                and not n.keywords
                and is_tl(resolve(n.func, self.scope), ("arange",))
            ):
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
        cx = {
            a.arg
            for a in self.fdef.args.args
            if a.annotation is not None and self._is_constexpr_annotation(a.annotation)
        }
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                if sub.id in cx:
                    continue
                obj = self._resolve_obj(sub)
                if (
                    isinstance(obj, tl.constexpr)
                    or isinstance(obj, (bool, int, float))
                    or obj is None
                    and sub.id == "None"
                ):
                    continue
                return False
            if not isinstance(
                sub,
                (
                    ast.Constant,
                    ast.Compare,
                    ast.BoolOp,
                    ast.UnaryOp,
                    ast.BinOp,
                    ast.cmpop,
                    ast.boolop,
                    ast.unaryop,
                    ast.operator,
                    ast.expr_context,
                ),
            ):
                return False
        return True

    def _pure(self, node: ast.AST) -> bool:
        """No call but tl.program_id/tl.num_programs/.to(): evaluating the expression once more
        (in a record helper's arguments) gives the same value and has no effect."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                if isinstance(sub.func, ast.Attribute) and sub.func.attr == "to":
                    continue
                if not is_tl(resolve(sub.func, self.scope), ("program_id", "num_programs")):
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
            return self._pure(e) and not any(
                isinstance(n, ast.Name) and n.id == target for n in ast.walk(e)
            )

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

    def _new_site(
        self,
        stmt: Statement,
        kind: str,
        name: str,
        reads: list[str],
        loops: tuple[int, ...],
        dumps: bool,
    ) -> int:
        sid = len(self.sites) + 1
        if sid > 0xFFFF:
            raise RewriteError(
                "more than 65535 observed sites in one kernel", self.src.file, stmt.line
            )
        self.sites.append(
            Site(sid, stmt.id, kind, name, [self._read_ref(r) for r in reads], loops, dumps)
        )
        return sid

    def _read_ref(self, name: str) -> Any:
        """A read of `name` for the site table: the name itself (this frame's variable), or for a
        helper parameter not reassigned yet, a reference to the caller's variable it was given
        ({"name": param, "frame": F, "var": caller's name})."""
        return name

    def _is_constexpr_annotation(self, ann: ast.AST) -> bool:
        obj = resolve(ann, self.scope)
        if obj is tl.constexpr:
            return True
        return (
            isinstance(ann, ast.Name)
            and ann.id == "constexpr"
            or (isinstance(ann, ast.Attribute) and ann.attr == "constexpr")
        )

    def _edited_lines(self, fdef: ast.FunctionDef, what: str) -> tuple[list[str], int, int]:
        """The function's dedented lines with the rewrite's edits, its decorators and `def`
        lines blanked; the `def` line and the body's first line (1-based)."""
        lines = list(self.src.lines)
        def_idx = fdef.lineno  # 1-based, dedented
        for i in range(1, def_idx):
            lines[i - 1] = ""  # decorators
        body_first = fdef.body[0].lineno
        if body_first == def_idx:
            raise self.unsupported(fdef, f"a {what} whose body starts on the `def` line")
        for ln in range(def_idx, body_first):
            lines[ln - 1] = ""
        for ln, text in self.line_edits.items():
            lines[ln - 1] = text
        for ln in self.blank_lines:
            lines[ln - 1] = ""
        return lines, def_idx, body_first

    def _emit(self, fdef: ast.FunctionDef) -> str:
        lines, def_idx, body_first = self._edited_lines(fdef, "kernel")
        # New header one line above the original `def`; the prologue takes the `def` line.
        header = twin_header(fdef, self.shared.desc_params)
        lead = lead_of(self.src.lines[body_first - 1]) or "    "
        rec = self.checks.records_at() if self.checks is not None and self.checks.slots else 8
        prologue = f"{lead}{SEQ} = 0; {BASE}, {SLOTS} = {H_BEGIN}({CTX}, {rec})"
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

    def __init__(
        self,
        helper: Any,
        parent: _Rewriter,
        frame: Any,
        fdef: ast.FunctionDef,
        src: Source,
        binding: dict[str, ast.AST],
        shadows: dict[str, Any],
        loops: tuple[int, ...],
        depth: int,
    ) -> None:
        super().__init__(
            helper,
            parent.reg_level,
            parent.reg_addr,
            parent.sanitize,
            src=src,
            rules=parent.rules,
            suppress=parent.suppress,
        )
        self.shared = parent.shared
        self.checks = parent.checks
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

    def param_plain(self, name: str) -> bool:
        arg = self.binding.get(name)
        if arg is None or self.parent_rw is None:
            return False
        return _checkgen.plain_pointer(self.parent_rw, arg)

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
        self.check_reserved(fdef)
        for a in fdef.args.args + fdef.args.kwonlyargs:
            if a.arg.startswith(RESERVED_PREFIX):
                raise self.unsupported(
                    fdef, f"the name {a.arg!r} is reserved for the Debugger's twin"
                )
        self.params = []
        self.all_params = {
            a.arg for a in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs
        }
        self.local_names = _stored_names(fdef)
        parent = self.parent_rw
        assert parent is not None
        init = {p: frozenset(parent.bases.arg_bases(self.binding[p])) for p in self.binding}
        self.bases = _findsites.PointerBases(
            fdef, [], self._resolve_obj, self.access_kind, initial=init, order=parent.bases.order
        )
        self.forms.scan(fdef, self.shadows)
        self.parent_block = {}
        self.parent_stmt = {}

        def index(block: list[ast.stmt], owner: ast.AST) -> None:
            for i, st in enumerate(block):
                self.parent_block[id(st)] = (block, i)
                self.parent_stmt[id(st)] = owner
                if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    for sub in self.blocks(st):
                        index(sub, st)

        index(fdef.body, fdef)
        self.collect_host_defs(fdef)
        self.frame_obj.host_defs = list(self.host_defs)
        # a parameter given a variable the caller observes reads that variable (across the call)
        self.defined = {
            p
            for p, caller in self.frame_obj.args.items()
            if caller in parent.defined or isinstance(parent._read_ref(caller), dict)
        }
        self._block(fdef.body, fdef.body, self.caller_depth, self.caller_loops)
        text = self._emit_helper(fdef)
        return _calltwins.SubTwin(
            name=self.name,
            frame=self.frame,
            jitfn=self.jitfn,
            text=text,
            returns_value=self.returns_value,
            kernel_name=self.name,
        )

    def _emit_helper(self, fdef: ast.FunctionDef) -> str:
        lines, def_idx, body_first = self._edited_lines(fdef, "helper")
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
    if isinstance(st, ast.Expr):  # a check's call: made only where the branch is
        return f"({ast.unparse(st.value)}) if {cond} else None"
    assert isinstance(st, ast.Assign) and len(st.targets) == 1, text
    t = st.targets[0]
    names = [e.id for e in t.elts] if isinstance(t, ast.Tuple) else [t.id]  # type: ignore[attr-defined]
    dflt = [SEQ if n == SEQ else "None" for n in names]
    other = dflt[0] if len(dflt) == 1 else "(" + ", ".join(dflt) + ")"
    return f"{ast.unparse(t)} = ({ast.unparse(st.value)}) if {cond} else {other}"


def _stored_names(node: ast.AST) -> set[str]:
    """Every name a statement (compound ones included) assigns anywhere inside it."""
    return {
        n.id
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))
    }


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

    def __init__(
        self,
        rw: _Rewriter,
        stmt: ast.stmt,
        pre: list[str],
        statement: Callable[[], Statement],
        reads: list[str],
        loops: tuple[int, ...],
        addr_on: bool,
        value_on: bool,
        orig: ast.stmt | None = None,
        depth: int = 0,
    ) -> None:
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
        self.checks: list[
            dict[str, Any]
        ] = []  # checks by reference for the statement's first value site
        # `x = tl.load(...)`: the lanes the load reads (the mask it uses), for x's loaded check
        self.top_load: str | None = None
        #: id(load call) -> its text as the user wrote it (a loaded value's check names it)
        self.load_texts: dict[int, str] = {}
        #: the last load _loaded() saw: (its text, the parameters its pointer derives from)
        self.load_info: tuple[str, list[str]] = ("", [])
        self._atomic_near: bool | None = None

    def run(self) -> None:
        self._visit(self.stmt, conditional=False)

    def statement_depth(self) -> int:
        return self.depth

    def _operand_texts(self, node: ast.AST) -> dict[int, str]:
        """The user's text of `node`'s checked operands, taken before temporaries replace parts."""
        if not self.value_on or not isinstance(node, (ast.Call, ast.BinOp)):
            return {}
        return {
            id(op): ast.unparse(op)
            for _r, _t, op, _p in _findsites.operand_roles(node, self.rw._resolve_obj)
        }

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
        if (
            isinstance(node, ast.IfExp)
            and not conditional
            and self._has_work(node.body, node.orelse)
        ):
            return self._ifexp(node)
        if isinstance(
            node,
            (
                ast.IfExp,
                ast.BoolOp,
                ast.Lambda,
                ast.ListComp,
                ast.SetComp,
                ast.DictComp,
                ast.GeneratorExp,
            ),
        ):
            conditional = True
        texts = self._operand_texts(node)
        if isinstance(node, ast.Call):
            orig_call = copy.deepcopy(node)
            node.func = self._visit(node.func, conditional)
            node.args = [self._visit(a, conditional) for a in node.args]
            for kw in node.keywords:
                kw.value = self._visit(kw.value, conditional)
            kind = self.rw.access_kind(node)
            if kind is not None:
                if conditional:
                    if self.rw.sanitize or self.rw.frame:
                        self.rw._unobserved_access(
                            self.orig,
                            node,
                            "inside a conditional expression, boolean "
                            "operator, lambda or comprehension",
                        )
                        return node
                    raise self.rw.unsupported(
                        self.stmt,
                        "a tl.load/tl.store inside a conditional expression, "
                        "boolean operator, lambda or comprehension",
                    )
                rep = self._access(node, *kind)
                return rep if rep is not None else node
            helper = _calltwins.user_helper(self.rw._resolve_obj(node.func))
            if helper is not None and (self.addr_on or self.value_on):
                if conditional:
                    self.rw._unobserved_helper(
                        self,
                        helper,
                        None,
                        None,
                        f"helper {helper.fn.__name__} is not observed: it is called "
                        "inside a conditional expression, boolean operator, lambda or "
                        "comprehension",
                    )
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
            if isinstance(
                node.op, ast.Div
            ):  # `x /= d`: d is a divisor (a temporary may replace it)
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
                if isinstance(sub, ast.Call) and (
                    self.rw.access_kind(sub) is not None
                    or _calltwins.user_helper(self.rw._resolve_obj(sub.func))
                ):
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
                    if isinstance(sub, ast.Call) and self.rw.access_kind(sub) is not None:
                        self.rw._unobserved_access(
                            self.orig,
                            sub,
                            f"inside a conditional expression with a run-time condition: {why}",
                        )
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
            kind = self.rw.access_kind(sub)
            if _calltwins.user_helper(self.rw._resolve_obj(sub.func)):
                return "a helper call cannot be made conditional on one line"
            if kind is None:
                continue
            if kind[1] or kind[0] == "atomic":
                return "descriptor accesses and atomics are not supported there"
            for a in list(sub.args) + [k.value for k in sub.keywords]:
                if not self.rw._pure(a):
                    return "an argument with calls would be evaluated in both branches"
            if (
                self.rw.forms.bp_shadow_expr(sub.args[0] if sub.args else ast.Constant(None))
                is not None
            ):
                return "block-pointer accesses are not supported there"
        return None

    def _access(self, call: ast.Call, kind: str, desc: bool) -> ast.AST | None:
        """Observe and check one memory access; returns what replaces the call in its statement
        (a temporary holding a load's value, a block pointer's suppressed access), or None."""
        want_value = kind in ("store", "atomic") and self.value_on and self.record_cond is None
        hoist = kind == "load" and _checkgen.values_on(self.rw)
        if not self.addr_on and not want_value and not hoist:
            return None
        dump_addr = 1 if self.rw.reg_addr >= 2 else 0
        dump_val = 1 if self.rw.reg_level >= 2 else 0
        kcode = {"load": 2, "store": 3, "atomic": 4}[kind]
        if kind == "load":  # the user's text, before its arguments become temporaries
            self.load_texts[id(call)] = ast.unparse(call)
        if desc:
            rep = self._desc_access(call, kind, kcode, want_value, dump_val, dump_addr)
            if kind == "load":
                got = self._loaded(
                    rep if rep is not None else call, self.statement(), "None", orig=call
                )
                return got if got is not None else rep
            return rep
        op = self.rw.atomic_op(call) if kind == "atomic" else ""
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
            return self._bp_access(
                call,
                kind,
                kcode,
                ptr,
                ptr_name,
                bp_shadow,
                get,
                put,
                want_value,
                dump_addr,
                dump_val,
            )
            return
        # `base + offsets`: hand the two parts to the address helper as well, which summarises
        # the offsets instead of the pointers when base is a scalar pointer (records.py,
        # _affine_ok) and can share that summary with later accesses through the same names.
        split = (
            self.addr_on
            and dump_addr == 0
            and isinstance(ptr, ast.BinOp)
            and isinstance(ptr.op, ast.Add)
            and not isinstance(ptr.left, ast.Constant)
            and not isinstance(ptr.right, ast.Constant)
            and self.record_cond is None
        )
        base_t = off_t = None
        off_is_name = False
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
        v_visited: ast.AST | None = None
        vparam = "value" if kind == "store" else "val"
        if kind in ("store", "atomic"):
            v = get(vparam)
            v_visited = v
            if v is None:
                raise self.rw.unsupported(
                    self.stmt,
                    f"tl.{kind if kind == 'store' else 'atomic_' + op} without a value argument",
                )
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
        rw = self.rw
        used_mask = ast.unparse(mask_t) if mask_t is not None else "None"

        def set_mask(node: ast.AST) -> None:
            if "mask" in bound:
                put("mask", node)
            else:
                call.keywords.append(ast.keyword(arg="mask", value=node))

        def set_ptr(node: ast.AST) -> None:
            put("pointer", node)

        if self.addr_on:
            sid = rw._new_site(st, kind, ptr_name, self.reads, self.loops, dump_addr == 1)
            rw._note_access(self, sid, call)
            if op:
                rw.sites[sid - 1].info["op"] = op
            mask_text = ast.unparse(mask_t) if mask_t is not None else "None"
            if self.record_cond is not None:  # a branch of a run-time conditional expression
                mask_text = (
                    f"{H_MAND}({mask_text}, {self.record_cond})"
                    if mask_t is not None
                    else self.record_cond
                )
            if _checkgen.bounds_on(rw):
                got = _checkgen.access(
                    self,
                    call,
                    kind,
                    op,
                    sid,
                    ptr_t,
                    ptr,
                    ptr_name,
                    mask_text,
                    base_t,
                    off_t,
                    set_mask,
                    set_ptr,
                )
                if got is not None:
                    used_mask = got
            if rw.records:
                self._addr_record(
                    sid, kcode, ptr_t, mask_text, dump_addr, base_t, off_t, off_is_name, m
                )
        if want_value and value_t is not None:
            sid = rw._new_site(st, "value", value_text, self.reads, self.loops, dump_val == 1)
            self._value_check(
                st, ast.unparse(value_t), value_text, v_visited, sid, stores=rw.bases.of(call)
            )
            if rw.records:
                words = (
                    rw.vcache.get(value_t.id)
                    if isinstance(value_t, ast.Name) and not dump_val
                    else None
                )
                if words is not None:
                    # The stored value is a name recorded earlier and not reassigned since:
                    # replay (not at level 2, where each record keeps its own dump).
                    self.pre.append(
                        f"{SEQ} = {H_VALUE}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {value_t.id}, "
                        f"{dump_val}, False, {words})"
                    )
                else:
                    self.pre.append(
                        f"{SEQ} = {H_VALUE}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, "
                        f"{ast.unparse(value_t)}, {dump_val})"
                    )
        if kind == "load":
            return self._loaded(call, st, used_mask)
        return None

    def _addr_record(
        self,
        sid: int,
        kcode: int,
        ptr_t: ast.AST,
        mask_text: str,
        dump_addr: int,
        base_t: ast.AST | None,
        off_t: ast.AST | None,
        off_is_name: bool,
        m: ast.AST | None,
    ) -> None:
        """The address record of a pointer access (marker mode)."""
        rw = self.rw
        head = (
            f"{H_ADDR}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {kcode}, {ast.unparse(ptr_t)}, "
            f"{mask_text}, {dump_addr}"
        )
        aff = rw.acache.get(off_t.id) if isinstance(off_t, ast.Name) and off_is_name else None
        cmp = None
        if aff is not None and m is not None:
            c = rw.ccache.get(m.id) if isinstance(m, ast.Name) else None
            cmp = c[0] if c is not None and c[1] == aff else None
            if cmp is None:
                aff = None
        if aff is not None:
            # offsets and mask from closed-form records: the address record is closed-form too
            assert base_t is not None and off_t is not None
            self.pre.append(
                f"{SEQ} = {H_ADDRC}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {kcode}, "
                f"{ast.unparse(ptr_t)}, {mask_text}, {ast.unparse(base_t)}, {ast.unparse(off_t)}, "
                f"{aff}, {cmp})"
            )
        elif base_t is None or off_t is None:
            self.pre.append(f"{SEQ} = {head})")
        else:
            parts = f"{ast.unparse(base_t)}, {ast.unparse(off_t)}"
            key = None
            if off_is_name and (m is None or isinstance(m, ast.Name)):
                key = (ast.unparse(off_t), m.id if isinstance(m, ast.Name) else "")
            shared = rw.ocache.get(key) if key is not None else None
            if shared is not None:
                self.pre.append(f"{SEQ} = {head}, {parts}, {shared})")
            elif key is not None:
                osum = f"__fp_o{rw.ntemps}"
                rw.ntemps += 1
                self.pre.append(f"{SEQ}, {osum} = {head}, {parts}, None, True)")
                rw.ocache[key] = osum
            else:
                self.pre.append(f"{SEQ} = {head}, {parts})")

    # -- values the NaN/Inf checks look at ------------------------------------------------------

    def _value_check(
        self,
        st: Statement,
        name: str,
        subject: str,
        node: ast.AST | None,
        site: int | None,
        stores: list[str] | None = None,
    ) -> None:
        """The NaN/Inf check of a value computed by expression `node` (already visited: its loads
        and helper calls are temporaries) and held by `name`, emitted before the statement.
        stores: for a value a store or atomic writes, the parameters its pointer derives from."""
        rw = self.rw
        if not _checkgen.values_on(rw):
            return
        reads = _checkgen.value_reads(rw, self.orig, node)
        chk = _checkgen.value(
            rw,
            st.id,
            name,
            subject,
            reads,
            _checkgen.inf_signs(self.orig),
            self.loops,
            site=site,
            stores=stores,
        )
        if chk:
            self.pre.append(chk)

    def _no_hoist(self) -> bool:
        """Loads of this statement stay where they are: inside a branch of a run-time conditional
        expression, or next to an atomic (whose order with them a temporary would change)."""
        if self.record_cond is not None:
            return True
        if self._atomic_near is None:
            self._atomic_near = any(
                isinstance(c, ast.Call) and (self.rw.access_kind(c) or ("",))[0] == "atomic"
                for c in ast.walk(self.orig)
            )
        return self._atomic_near

    def _loaded(
        self, call: ast.AST, st: Statement, act: str, orig: ast.Call | None = None
    ) -> ast.AST | None:
        """A load's value for the NaN/Inf checks: `x = tl.load(...)` is checked as loaded where
        the statement assigns it (_simple); a load inside an expression becomes a temporary
        (what the statement then reads), checked as loaded. Returns what replaces the call.
        orig: the user's load call where `call` replaces it (a block pointer's suppressed
        access): the check names the user's text and the tensors the pointer derives from."""
        rw = self.rw
        if not _checkgen.values_on(rw) or self._no_hoist():
            return None
        src = orig if orig is not None else call
        text = self.load_texts.get(id(src)) or ast.unparse(src)
        cands = rw.bases.of(src) if isinstance(src, ast.Call) else []
        self.load_info = (text, cands)
        w = self.stmt
        if (
            isinstance(w, ast.Assign)
            and w.value is call
            and len(w.targets) == 1
            and isinstance(w.targets[0], ast.Name)
        ):
            self.top_load = act
            return None
        t = f"__fpu_l{rw.ntemps}"
        rw.ntemps += 1
        self.pre.append(f"{t} = {ast.unparse(call)}")
        chk = _checkgen.value(
            rw, st.id, t, text, [], 0, self.loops, loaded=True, act=act, cands=cands
        )
        if chk:
            self.pre.append(chk)
        return ast.Name(id=t, ctx=ast.Load())

    def _store_value(
        self,
        st: Statement,
        text: str,
        node: ast.AST,
        put: Callable[[ast.AST], None],
        dump_val: int,
        stores: list[str],
    ) -> None:
        """A value site for the value a store or atomic writes (not for a literal); stores: the
        parameters the access's pointer derives from."""
        if isinstance(node, ast.Constant):
            return
        vt = self._temp(node, "v")
        put(vt)
        sid = self.rw._new_site(st, "value", text, self.reads, self.loops, dump_val == 1)
        self._value_check(st, ast.unparse(vt), text, node, sid, stores=stores)
        if self.rw.records:
            self.pre.append(
                f"{SEQ} = {H_VALUE}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {ast.unparse(vt)}, "
                f"{dump_val})"
            )

    def _bp_access(
        self,
        call: ast.Call,
        kind: str,
        kcode: int,
        ptr: ast.AST,
        ptr_name: str,
        shadow: str,
        get: Callable[[str], ast.AST | None],
        put: Callable[[str, ast.AST], None],
        want_value: bool,
        dump_addr: int,
        dump_val: int,
    ) -> ast.AST | None:
        """A load or store through a block pointer the rewriter follows: a closed-form address record
        from its shadow (_records.bp_addr_*), its bounds check, and with suppression the access
        itself made through the block's lanes (returned: what replaces the call)."""
        ptr_t = self._temp(ptr, "p")
        put("pointer", ptr_t)
        check = get("boundary_check")
        check_text = ast.unparse(check) if check is not None else "()"
        if check is not None and not self.rw._pure(check):
            ct = self._temp(check, "c")
            put("boundary_check", ct)
            check_text = ast.unparse(ct)
        pad = get("padding_option")
        pad_text = (
            pad.value
            if isinstance(pad, ast.Constant) and isinstance(pad.value, str)
            else ("zero" if pad is None else "unknown")
        )
        st = self.statement()
        sup_cands = None
        bp_word = -1
        if self.addr_on:
            sid = self.rw._new_site(st, kind, ptr_name, self.reads, self.loops, dump_addr == 1)
            self.rw._note_access(self, sid, call)
            info = self.rw.sites[sid - 1].info
            info["form"] = "block_pointer"
            if kind == "load":
                info["padding"] = pad_text
            if _checkgen.bounds_on(self.rw):
                bp_word, sup_cands = _checkgen.bp_access(
                    self, call, kind, sid, ptr_t, ptr_name, shadow, check_text
                )
            if self.rw.records:
                self.pre.append(
                    f"{SEQ} = {H_BPADDR}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {kcode}, "
                    f"{ast.unparse(ptr_t)}, {shadow}, {check_text}, {dump_addr})"
                )
        if want_value and kind == "store":
            v = get("value")
            if v is not None:
                self._store_value(
                    st,
                    ast.unparse(v),
                    v,
                    lambda n: put("value", n),
                    dump_val,
                    self.rw.bases.of(call),
                )
        replacement = None
        if sup_cands is not None:
            replacement = _checkgen.bp_replacement(
                self.rw,
                kind,
                ptr_t,
                shadow,
                check_text,
                pad_text if pad_text in ("zero", "nan") else "",
                get("value") if kind == "store" else None,
                sup_cands,
            )
            self.rw.checks.suppressing(bp_word, replacement is not None)
        if kind == "load":
            got = self._loaded(
                replacement if replacement is not None else call, st, "None", orig=call
            )
            return got if got is not None else replacement
        return replacement

    def _desc_access(
        self, call: ast.Call, kind: str, kcode: int, want_value: bool, dump_val: int, dump_addr: int
    ) -> ast.AST | None:
        """A tensor-descriptor access: desc.load/store/atomic_*/gather/scatter(...) or
        tl.load_tensor_descriptor / tl.store_tensor_descriptor. With the descriptor's base (its
        shadow) the record is the closed-form summary of the block (TMA semantics); without it,
        a record saying the addresses are not observable. Returns what replaces the call when its
        lanes outside the views are suppressed (checks), else None."""
        func = call.func
        method = ""
        if (
            isinstance(func, ast.Attribute)
            and func.attr in DESC_METHODS
            and resolve(func.value, self.rw.scope) is MISSING
        ):
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
        names = {
            "load": ("offsets",),
            "store": ("offsets", "value"),
            "gather": ("x_offsets", "y_offset"),
            "scatter": ("value", "x_offsets", "y_offset"),
        }.get(method, ("offsets", "value"))

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
        replacement: ast.AST | None = None
        shadow = None
        if isinstance(desc_node, ast.Name) and self.rw.forms.kind_of(desc_node.id) == "desc":
            shadow = self.rw.forms.shadow_of(desc_node.id)
        op = DESC_METHODS.get(method, ("", ""))[1]
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
                    raise self.rw.unsupported(
                        self.stmt, f"a descriptor {method} without row and column offsets"
                    )
                xt = self._temp(x, "o")
                put("x_offsets", xt)
                yt = self._temp(y, "o")
                put("y_offset", yt)
                if _checkgen.bounds_on(self.rw):
                    _checkgen.desc_access(
                        self,
                        call,
                        kind,
                        sid,
                        desc_t,
                        desc_name,
                        sh,
                        "",
                        gather=(ast.unparse(xt), ast.unparse(yt)),
                    )
                if self.rw.records:
                    self.pre.append(
                        f"{SEQ} = {H_DESCGATHER}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {kcode}, "
                        f"{ast.unparse(desc_t)}, {sh}, {ast.unparse(xt)}, {ast.unparse(yt)}, "
                        f"{dump_addr})"
                    )
            else:
                offs = get("offsets")
                if offs is None:
                    raise self.rw.unsupported(
                        self.stmt, "a tensor-descriptor access without offsets"
                    )
                if isinstance(offs, (ast.List, ast.Tuple)):
                    elts = [self._temp(e, "o") if not self.rw._pure(e) else e for e in offs.elts]
                    offs.elts = elts
                    offs_text = "(" + "".join(ast.unparse(e) + ", " for e in elts) + ")"
                else:
                    ot = self._temp(offs, "o")
                    put("offsets", ot)
                    offs_text = ast.unparse(ot)
                if _checkgen.bounds_on(self.rw):
                    w = _checkgen.desc_access(
                        self, call, kind, sid, desc_t, desc_name, sh, offs_text
                    )
                    # lanes outside the views suppressed: the access through the block's lanes
                    if (
                        shadow is not None
                        and self.rw.checks.suppress
                        and self.record_cond is None
                        and (kind != "atomic" or op in ("add", "min", "max", "and", "or", "xor"))
                    ):
                        replacement = _checkgen.desc_replacement(
                            self.rw,
                            call,
                            kind,
                            op,
                            desc_t,
                            sh,
                            offs_text,
                            get("value") if kind != "load" else None,
                            info.get("padding") or "",
                        )
                        self.rw.checks.suppressing(w, replacement is not None)
                if self.rw.records:
                    self.pre.append(
                        f"{SEQ} = {H_DESCADDR}({CTX}, {BASE}, {SLOTS}, {SEQ}, {sid}, {kcode}, "
                        f"{ast.unparse(desc_t)}, {sh}, {offs_text}, {dump_addr})"
                    )
        if want_value:
            v = get("value")
            if v is not None:
                self._store_value(
                    st,
                    ast.unparse(v),
                    v,
                    lambda n: put("value", n),
                    dump_val,
                    self.rw.bases.of(call),
                )
                if replacement is not None and kind != "load":
                    # the stored value is now a temporary: the replacement takes it too
                    replacement.args[4] = get("value")  # type: ignore[attr-defined]
        return replacement


# ------------------------------------------------------------------------------------------------
# Public entry points
# ------------------------------------------------------------------------------------------------


def has_markers(jitfn: Any) -> bool:
    """Cheap test: does the kernel's source mention a collection marker at all?"""
    text = source_text(jitfn)
    return text is not None and ("collect_start" in text or "collect_end" in text)


def rewrite(
    jitfn: Any,
    level: int,
    addr_level: int,
    sanitize: bool = False,
    rules: frozenset[str] = frozenset(),
    suppress: bool = True,
) -> Twin:
    """Parse the kernel, check its markers and build the twin's text and tables (no exec).
    sanitize: check mode, the whole body, markers or not, writing only its checks. rules: the
    checks the twin makes (debugger.CHECKS: the library's registry); suppress: lanes found out
    of bounds do not perform their access."""
    return _Rewriter(jitfn, level, addr_level, sanitize, rules=rules, suppress=suppress).run()


def build(
    jitfn: Any,
    level: int,
    addr_level: int,
    helpers: dict[str, Any],
    sanitize: bool = False,
    rules: frozenset[str] = frozenset(),
    suppress: bool = True,
) -> Twin:
    """Rewrite, store and exec the twin, then wrap it like the original (JIT or interpreted)."""
    twin = rewrite(jitfn, level, addr_level, sanitize, rules, suppress)
    load_twin(jitfn, twin, helpers)
    return twin
