# SPDX-License-Identifier: Apache-2.0
"""What the Debugger's twin checks, and the calls that check it (the device side is
``_checks.py``).

The rewriter (``_rewrite.py``) observes statements; this module decides, for each access and
each value it meets, which findings rules apply there, gives each rule application a *check
slot* in the record buffer's check area, and writes the call of the check helper on the
statement's line. It is the one place where the twin's checks are decided, for marker mode and
check mode, for kernels and helpers alike, so the interpreter and every GPU run the same checks.

* Memory accesses (``bounds``): the candidates of the access's pointer (kernel parameters, by
  ``_findsites.PointerBases``) as tensor-table indices, and, unless the run keeps the original
  behaviour, the suppression of lanes found outside: the access's mask is replaced by the one
  the check returns (a compare-and-swap's pointer by a sink), a block pointer's load or store by
  one through its lanes.
* Values (``nan``, ``inf``): what the statement reads (its names, and the loads and helper results
  it was given), evaluated on the device only when the value is not finite; the infinities the
  statement writes itself; for a loaded value, the lanes the load read.
* Operands (``domain``, ``precision``): divisors, ``sqrt``/``log`` arguments, narrowing casts.

The slots are listed in the site table (``checks``, docs/formats/record-format.md) with their
rule, statement and subject; the host turns them into findings (src/debug/findings.c).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flagprism import _checks, _findsites

if TYPE_CHECKING:  # pragma: no cover
    from flagprism._rewrite import _Hoister, _Rewriter

# Names of the check helpers in the twin's scope (debugger._helpers binds them).
H_ACC = "__fp_cacc"
H_CAS = "__fp_ccas"
H_BP = "__fp_cbp"
H_BPLD = "__fp_cbpld"
H_BPST = "__fp_cbpst"
H_DESC = "__fp_cdesc"
H_DGATHER = "__fp_cdgather"
H_DEXT = "__fp_cdext"
H_DLD = "__fp_cdld"
H_DST = "__fp_cdst"
H_DAT = "__fp_cdat"
H_VAL = "__fp_cval"
H_DIV = "__fp_cdiv"
H_NEG = "__fp_cneg"
H_CAST = "__fp_ccast"
H_NN = "__fp_cnn"

#: helper name in the twin -> function of _checks
HELPERS = {
    H_ACC: "access",
    H_CAS: "access_cas",
    H_BP: "bp_access",
    H_BPLD: "bp_load",
    H_BPST: "bp_store",
    H_DESC: "desc_access",
    H_DGATHER: "desc_gather",
    H_DEXT: "desc_extent",
    H_DLD: "desc_load",
    H_DST: "desc_store",
    H_DAT: "desc_atomic",
    H_VAL: "value",
    H_DIV: "divisor",
    H_NEG: "negative",
    H_CAST: "cast",
    H_NN: "not_none",
}

#: The most check slots of one kernel (its twin and its helpers' twins).
MAX_SLOTS = 1 << 16

#: tl functions that keep a plain pointer plain (their first argument, or every argument for
#: where): an access through their result can take a mask.
_PLAIN_CALLS = _findsites.SHAPE_CALLS + ("where", "cast", "load")


@dataclass
class Slot:
    index: int
    rule: str
    statement: int
    subject: str
    info: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d = {
            "slot": self.index,
            "rule": self.rule,
            "statement": self.statement,
            "subject": self.subject,
        }
        d.update(self.info)
        return d


class Checks:
    """The check slots of one kernel (shared by its twin and its helpers' twins)."""

    def __init__(self, rules: frozenset[str], suppress: bool, params: list[str]) -> None:
        self.rules = rules
        self.suppress = suppress
        self.params = list(params)  # every parameter of the kernel, in order
        self.index = {p: i for i, p in enumerate(params)}
        self.slots: list[Slot] = []

    @property
    def nparams(self) -> int:
        return len(self.params)

    def new(self, rule: str, statement: int, subject: str, **info: Any) -> int:
        """A new slot; returns its word offset in the buffer (what the helper is given)."""
        if len(self.slots) >= MAX_SLOTS:
            raise OverflowError(f"more than {MAX_SLOTS} checks in one kernel")
        s = Slot(len(self.slots), rule, statement, subject, {k: v for k, v in info.items() if v})
        self.slots.append(s)
        return _checks.slot_word(self.nparams, s.index)

    def suppressing(self, word: int, yes: bool = True) -> None:
        """Say in the site table that the access of the slot at `word` (new()'s) has its lanes
        outside the views suppressed (the report then says they were not performed), or not."""
        s = self.slots[_checks.slot_index(self.nparams, word)]
        if yes:
            s.info["suppressed"] = True
        else:
            s.info.pop("suppressed", None)

    def cands(self, names: list[str]) -> str:
        """The candidate kernel parameters as a tuple literal of tensor-table indices."""
        idx = sorted({self.index[n] for n in names if n in self.index})
        return "(" + "".join(f"{i}, " for i in idx) + ")"

    def records_at(self) -> int:
        return _checks.records_at(self.nparams, len(self.slots))

    def to_json(self) -> list[dict[str, Any]]:
        return [s.to_json() for s in self.slots]


def tuple_text(items: list[str]) -> str:
    return "(" + "".join(f"{t}, " for t in items) + ")"


def _none_names(rw: _Rewriter) -> frozenset[str]:
    """Variables of the function that may hold None (`mask = None` on some path, FlagGems'
    `mask_c = None` for divisible shapes): compiled Triton cannot put a local None in a tuple
    (it has no type), so a tuple of reads passes them through _checks.not_none."""
    got = getattr(rw, "_none_names", None)
    if got is None:
        names: set[str] = set()
        for node in ast.walk(rw.fdef):
            if isinstance(node, ast.Assign):
                targets, val = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, val = [node.target], node.value
            else:
                continue
            if any(isinstance(c, ast.Constant) and c.value is None for c in ast.walk(val)):
                names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        got = frozenset(names)
        rw._none_names = got
    return got


# ------------------------------------------------------------------------------------------------
# Static facts
# ------------------------------------------------------------------------------------------------


def inf_signs(node: ast.AST) -> int:
    """Infinities a statement writes as literals: bit 1 +Inf, bit 2 -Inf (`float("inf")`,
    `-float("inf")`, `float("-inf")`, `math.inf`, `np.inf`, `torch.inf`; a literal negated or
    subtracted counts with the other sign: `tl.zeros(...) - float("inf")` is -Inf)."""
    out = 0

    def sign_of(n: ast.AST) -> int:
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "float":
            if n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str):
                t = n.args[0].value.strip().lower()
                if t in ("inf", "+inf", "infinity", "+infinity"):
                    return 2
                if t in ("-inf", "-infinity"):
                    return 4
            return 0
        if isinstance(n, ast.Attribute) and n.attr == "inf":
            return 2
        if (
            isinstance(n, ast.Constant)
            and isinstance(n.value, float)
            and n.value
            in (
                float("inf"),
                float("-inf"),
            )
        ):
            return 2 if n.value > 0 else 4
        return 0

    negated: set[int] = set()
    for sub in ast.walk(node):
        neg = None
        if isinstance(sub, ast.UnaryOp) and isinstance(sub.op, ast.USub):
            neg = sub.operand
        elif isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Sub):
            neg = sub.right
        if neg is not None:
            s = sign_of(neg)
            if s:
                out |= 6 - s  # the other sign
                negated.add(id(neg))
    for sub in ast.walk(node):
        if id(sub) not in negated:
            out |= sign_of(sub)
    return out


def iter_var(rw: _Rewriter, loops: tuple[int, ...]) -> tuple[str, dict[str, Any] | None]:
    """The innermost `for` loop of this function around a statement: (its induction variable as
    the twin passes it, its description for the site table), or ("0", None)."""
    for lid in reversed(loops):
        lp = rw.loops[lid]
        if lp.frame != rw.frame:
            break
        if lp.kind == "for" and lp.var:
            return lp.var, {"var": lp.var, "line": lp.line}
    return "0", None


def plain_pointer(rw: _Rewriter, node: ast.AST) -> bool:
    """Is the pointer expression `node` certainly not a block pointer (so that its access may be
    given a mask)? Pointer arithmetic, a kernel parameter, or a name every assignment of which is
    such an expression."""
    return _plain(rw, node, set())


def _plain(rw: _Rewriter, node: ast.AST, seen: set[str]) -> bool:
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, (ast.Add, ast.Sub))
    if isinstance(node, ast.Subscript):
        return _plain(rw, node.value, seen)
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "to":
            return True
        obj = rw._resolve_obj(f)
        name = getattr(obj, "__name__", None) or (f.attr if isinstance(f, ast.Attribute) else "")
        if name in _PLAIN_CALLS and node.args:
            args = node.args[1:] if name == "where" else node.args[:1]
            return all(_plain(rw, a, seen) for a in args)
        return False
    if isinstance(node, ast.Name):
        if rw.forms.kind_of(node.id) is not None:
            return False
        if node.id in seen:
            return True
        seen.add(node.id)
        values = rw.assigned_values(node.id)
        if values is None:  # a parameter
            if not rw.frame:
                return True
            return rw.forms.param_shadow(node.id) is None and rw.param_plain(node.id)
        return bool(values) and all(v is not None and _plain(rw, v, seen) for v in values)
    return False


def value_reads(rw: _Rewriter, *nodes: ast.AST | None) -> list[str]:
    """Names expressions read that may hold a value a check looks at: parameters, names of this
    function, the twin's load and helper-result temporaries, constants of the module. Names of
    modules, functions, block pointers and descriptors are left out. Give the user's expression
    and the rewritten one: the first has the names a hoisted operand took with it, the second
    the temporaries of loads and helper calls."""
    out: list[str] = []
    subs = [sub for node in nodes if node is not None for sub in ast.walk(node)]
    for sub in subs:
        if not isinstance(sub, ast.Name) or not isinstance(sub.ctx, ast.Load):
            continue
        n = sub.id
        if n in out:
            continue
        if n.startswith("__fpu_l") or n.startswith("__fpu_h") or n.startswith("__fpr"):
            out.append(n)
            continue
        if n.startswith("__fp"):
            continue
        if rw.forms.kind_of(n) is not None:
            continue
        if n in rw.all_params or n in rw.local_names:
            out.append(n)
            continue
        obj = rw._resolve_obj(sub)
        if obj is None:
            continue
        v = getattr(obj, "value", obj) if type(obj).__name__ == "constexpr" else obj
        if isinstance(v, float):
            out.append(n)
    return out


# ------------------------------------------------------------------------------------------------
# Emission
# ------------------------------------------------------------------------------------------------


def bounds_on(rw: _Rewriter) -> bool:
    return rw.checks is not None and "bounds" in rw.checks.rules and rw.reg_addr >= 1


def values_on(rw: _Rewriter) -> bool:
    return rw.checks is not None and bool(rw.checks.rules & {"nan", "inf"}) and rw.reg_level >= 1


def _ctx(rw: _Rewriter) -> str:
    from flagprism._rewrite import CTX, SEQ

    return f"{CTX}, {SEQ}"


def _bounds_slot(
    h: _Hoister, call: ast.Call, kind: str, sid: int, subject: str, **info: Any
) -> tuple[int, str, list[str]]:
    """A bounds check's slot for access `call` (site `sid`) of the hoister's statement: (its
    word, the innermost loop variable's text for the helper, the candidate parameters)."""
    rw = h.rw
    it, loop = iter_var(rw, h.loops)
    cands = rw.bases.of(call)
    w = rw.checks.new(
        "bounds", h.statement().id, subject, site=sid, access=kind, **info, cands=cands, loop=loop
    )
    return w, it, cands


def access(
    h: _Hoister,
    call: ast.Call,
    kind: str,
    op: str,
    sid: int,
    ptr: ast.AST,
    ptr_node: ast.AST,
    subject: str,
    mask_text: str,
    base_t: ast.AST | None,
    off_t: ast.AST | None,
    set_mask: Any,
    set_ptr: Any,
) -> str | None:
    """The bounds check of a pointer load/store/atomic (site `sid`), emitted before it. Returns
    the name of the mask the access then uses when its lanes are suppressed (set_mask was
    called), else None."""
    rw = h.rw
    ck = rw.checks
    w, it, cands = _bounds_slot(h, call, kind, sid, subject, op=op)
    ctext = ck.cands(cands)
    sup = ck.suppress and plain_pointer(rw, ptr_node) and h.record_cond is None
    ck.suppressing(w, sup)
    if op == "cas":
        t = f"__fpu_k{rw.ntemps}"
        rw.ntemps += 1
        h.pre.append(
            f"{t} = {H_CAS}({_ctx(rw)}, {w}, {ast.unparse(ptr)}, {ctext}, "
            f"{ck.nparams}, {sup}, {it})"
        )
        if sup:
            set_ptr(ast.Name(id=t, ctx=ast.Load()))
        return None
    t = f"__fpu_k{rw.ntemps}"
    rw.ntemps += 1
    extra = ""
    if base_t is not None and off_t is not None:
        extra = f", {ast.unparse(base_t)}, {ast.unparse(off_t)}"
    h.pre.append(
        f"{t} = {H_ACC}({_ctx(rw)}, {w}, {ast.unparse(ptr)}, {mask_text}, {ctext}, "
        f"{ck.nparams}, {sup}, {it}{extra})"
    )
    if sup:
        set_mask(ast.Name(id=t, ctx=ast.Load()))
        return t
    return None


def bp_access(
    h: _Hoister,
    call: ast.Call,
    kind: str,
    sid: int,
    ptr_t: ast.AST,
    subject: str,
    shadow: str,
    check_text: str,
) -> tuple[int, str | None]:
    """The bounds check of a block-pointer load/store, emitted before it. Returns the slot's
    word and the candidates' tuple text when the access is to be suppressed (see
    bp_replacement; the caller says whether it was: Checks.suppressing), else None."""
    rw = h.rw
    ck = rw.checks
    w, it, cands = _bounds_slot(h, call, kind, sid, subject, form="block_pointer")
    ctext = ck.cands(cands)
    h.pre.append(
        f"{H_BP}({_ctx(rw)}, {w}, {ast.unparse(ptr_t)}, {shadow}, {check_text}, "
        f"{ctext}, {ck.nparams}, {it})"
    )
    if not ck.suppress or h.record_cond is not None:
        return w, None
    return w, ctext


def bp_replacement(
    rw: _Rewriter,
    kind: str,
    ptr_t: ast.AST,
    shadow: str,
    check_text: str,
    pad: str,
    value: ast.AST | None,
    ctext: str,
) -> ast.AST | None:
    """What replaces a block-pointer load or store whose lanes outside the views are
    suppressed: the access made through the block's lanes (_checks.bp_load, bp_store)."""
    from flagprism._rewrite import CTX

    ck = rw.checks
    if kind == "load":
        text = (
            f"{H_BPLD}({CTX}, {ast.unparse(ptr_t)}, {shadow}, {check_text}, {pad!r}, "
            f"{ctext}, {ck.nparams})"
        )
    elif value is not None:
        text = (
            f"{H_BPST}({CTX}, {ast.unparse(ptr_t)}, {shadow}, {ast.unparse(value)}, "
            f"{check_text}, {ctext}, {ck.nparams})"
        )
    else:
        return None
    return ast.parse(text, mode="eval").body


def desc_access(
    h: _Hoister,
    call: ast.Call,
    kind: str,
    sid: int,
    desc_t: ast.AST,
    desc_name: str,
    shadow: str,
    offs_text: str,
    gather: tuple[str, str] | None = None,
) -> int:
    """The bounds check of a descriptor access (gather: its row indices and column offset);
    returns the slot's word (for Checks.suppressing)."""
    rw = h.rw
    ck = rw.checks
    w, it, cands = _bounds_slot(h, call, kind, sid, desc_name, form="tensor_descriptor")
    if gather is not None:
        h.pre.append(
            f"{H_DGATHER}({_ctx(rw)}, {w}, {ast.unparse(desc_t)}, {shadow}, {gather[0]}, "
            f"{gather[1]}, {ck.cands(cands)}, {ck.nparams}, {it})"
        )
        return w
    h.pre.append(
        f"{H_DESC}({_ctx(rw)}, {w}, {ast.unparse(desc_t)}, {shadow}, {offs_text}, "
        f"{ck.cands(cands)}, {ck.nparams}, {it})"
    )
    return w


def desc_replacement(
    rw: _Rewriter,
    call: ast.Call,
    kind: str,
    op: str,
    desc_t: ast.AST,
    shadow: str,
    offs_text: str,
    value: ast.AST | None,
    pad: str,
) -> ast.AST | None:
    """What replaces a descriptor load, store or atomic whose lanes outside the views are
    suppressed (_checks.desc_load, desc_store, desc_atomic: the block's lanes through pointers),
    or None where it cannot be (no base known, a value missing)."""
    from flagprism._rewrite import CTX

    ck = rw.checks
    cands = ck.cands(rw.bases.of(call))
    d = ast.unparse(desc_t)
    if kind == "load":
        text = f"{H_DLD}({CTX}, {d}, {shadow}, {offs_text}, {pad!r}, {cands}, {ck.nparams})"
    elif value is None:
        return None
    elif kind == "store":
        text = f"{H_DST}({CTX}, {d}, {shadow}, {offs_text}, {ast.unparse(value)}, {cands}, {ck.nparams})"
    else:
        text = (
            f"{H_DAT}({CTX}, {d}, {shadow}, {offs_text}, {ast.unparse(value)}, {op!r}, "
            f"{cands}, {ck.nparams})"
        )
    return ast.parse(text, mode="eval").body


def desc_extent(
    rw: _Rewriter,
    stmt_id: int,
    sid: int,
    name: str,
    shadow: str,
    cands: list[str],
    loops: tuple[int, ...],
) -> str:
    ck = rw.checks
    it, loop = iter_var(rw, loops)
    w = ck.new(
        "descriptor_extent",
        stmt_id,
        name,
        site=sid,
        form="tensor_descriptor",
        cands=cands,
        loop=loop,
    )
    return f"{H_DEXT}({_ctx(rw)}, {w}, {name}, {shadow}, {ck.cands(cands)}, {ck.nparams}, {it})"


def value(
    rw: _Rewriter,
    stmt_id: int,
    name: str,
    subject: str,
    reads: list[str],
    lit: int,
    loops: tuple[int, ...],
    loaded: bool = False,
    act: str = "None",
    site: int | None = None,
    cands: list[str] | None = None,
    stores: list[str] | None = None,
) -> str | None:
    """The NaN/Inf check of value `name` (a variable or temporary): the call, or None when
    neither rule is on. cands (loaded values): the parameters the load's pointer derives from,
    which tell whose memory held a NaN (a later launch's NaN descends from an earlier origin
    only through the memory that origin's launch wrote). stores (a value a store or atomic
    writes): the parameters its pointer derives from, where a NaN it holds goes."""
    ck = rw.checks
    if ck is None or rw.reg_level < 1:
        return None
    it, loop = iter_var(rw, loops)
    sn = si = 0
    suffix = "_mem" if loaded else ""
    shown = [r for r in reads if not r.startswith("__fp")]
    where = {"cands": cands} if loaded else {"stores": stores}
    if "nan" in ck.rules:
        sn = ck.new("nan" + suffix, stmt_id, subject, site=site, loop=loop, reads=shown, **where)
    if "inf" in ck.rules:
        si = ck.new("inf" + suffix, stmt_id, subject, site=site, loop=loop, reads=shown, **where)
    if not sn and not si:
        return None
    maybe = _none_names(rw)
    safe = [f"{H_NN}({r})" if r in maybe else r for r in reads]
    return (
        f"{H_VAL}({_ctx(rw)}, {sn}, {si}, {name}, {tuple_text(safe)}, {lit}, {loaded}, {act}, {it})"
    )


def operand(
    rw: _Rewriter,
    stmt_id: int,
    role: str,
    target: str | None,
    name: str,
    subject: str,
    loops: tuple[int, ...],
) -> str | None:
    """The check of an operand a numerical rule looks at (role divisor, sqrt_arg, log_arg,
    cast_src), or None when its rule is off."""
    ck = rw.checks
    if ck is None or rw.reg_level < 1:
        return None
    it, loop = iter_var(rw, loops)
    if role == "divisor" and "domain" in ck.rules:
        sz = ck.new("division_by_zero", stmt_id, subject, loop=loop)
        st = ck.new("division_by_tiny", stmt_id, subject, loop=loop)
        return f"{H_DIV}({_ctx(rw)}, {sz}, {st}, {name}, {it})"
    if role in ("sqrt_arg", "log_arg") and "domain" in ck.rules:
        s = ck.new(
            "sqrt_negative" if role == "sqrt_arg" else "log_negative", stmt_id, subject, loop=loop
        )
        return f"{H_NEG}({_ctx(rw)}, {s}, {name}, {it})"
    if role == "cast_src" and target and "precision" in ck.rules:
        so = ck.new("cast_overflow", stmt_id, subject, target_dtype=target, loop=loop)
        sf = ck.new("cast_flush", stmt_id, subject, target_dtype=target, loop=loop)
        ss = ck.new("cast_subnormal", stmt_id, subject, target_dtype=target, loop=loop)
        return f"{H_CAST}({_ctx(rw)}, {so}, {sf}, {ss}, {name}, {target!r}, {it})"
    return None
