# SPDX-License-Identifier: Apache-2.0
"""Static facts the rewriter puts in the site table for the Debugger's findings.

* **Pointer bases**: which kernel parameters the pointer of each ``tl.load``/``tl.store`` may
  derive from, by a flow-sensitive walk over the whole kernel body (``x_ptr + offs`` derives from
  ``x_ptr``; ``a_ptrs = a_ptr + ...`` and a loop-carried ``a_ptrs += ...`` keep ``a_ptr``).
  Candidates are parameter names; the C side keeps those that are tensor arguments of the launch,
  so scalar parameters added to a pointer (``x_ptr + start``) drop out there.
* **Operand roles**: which sub-expressions of a statement are checked by a numerical rule: the
  operand of ``.to(<fp16|bf16|fp8>)`` / ``tl.cast``, the denominator of ``/``, ``tl.fdiv`` and
  ``tl.div_rn``, the argument of ``tl.sqrt``/``tl.sqrt_rn``/``tl.rsqrt`` and ``tl.log``/``tl.log2``.
* **Load padding**: what the masked-off lanes of ``x = tl.load(..., other=...)`` hold.

The rules themselves live in C (src/debug/findings.c); docs/guide/debugger.md, "Findings", describes
them. This module rewrites nothing.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import Any

import triton.language as tl

from flagprism import compat

#: tl functions that reshape or annotate a tensor of pointers without changing where they point
#: (their first argument's).
SHAPE_CALLS = (
    "multiple_of",
    "max_contiguous",
    "max_constancy",
    "broadcast_to",
    "broadcast",
    "reshape",
    "view",
    "expand_dims",
    "permute",
    "trans",
)
#: tl functions whose result is a pointer derived from their first argument (or ``base=``).
_PASS_FIRST = SHAPE_CALLS + (
    "advance",
    "make_block_ptr",
    "make_tensor_descriptor",
    "cast",
)
#: Tensor methods that keep the pointer they are called on.
_PASS_METHODS = ("to", "reshape", "broadcast_to", "expand_dims", "permute", "trans", "view")
#: Narrow float dtypes a cast is checked for, by Triton dtype name -> site table name.
_NARROW = {"fp16": "float16", "bf16": "bfloat16", "fp8e4nv": "float8e4nv", "fp8e5": "float8e5"}
_SQRT = ("sqrt", "sqrt_rn", "rsqrt")
_LOG = ("log", "log2")
_DIV = ("fdiv", "div_rn")

Key = tuple[int, int]


def _tl_obj(obj: Any, names: tuple[str, ...]) -> bool:
    obj = compat.unpatched(obj)
    for n in names:
        for mod in (tl, tl.core, getattr(tl, "math", None)):
            if mod is not None and obj is compat.unpatched(getattr(mod, n, None)):
                return True
    return False


class PointerBases:
    """Candidate base parameters of every load/store pointer of a kernel, by call position."""

    def __init__(
        self,
        fdef: ast.FunctionDef,
        params: list[str],
        resolve: Callable[[ast.AST], Any],
        access_kind: Callable[[ast.Call], tuple[str, bool] | None],
        initial: dict[str, frozenset[str]] | None = None,
        order: dict[str, int] | None = None,
    ) -> None:
        """params: the kernel parameters (each its own base). A helper's twin passes none, and
        instead `initial` (its parameters' candidates at the call) and the kernel's `order`."""
        self.params = params
        self.roots = set(params)
        self.order = order if order is not None else {p: i for i, p in enumerate(params)}
        self.resolve = resolve
        self.access_kind = access_kind
        self.found: dict[Key, frozenset[str]] = {}
        self.arg_found: dict[tuple[int, int, int, int], frozenset[str]] = {}  # call arguments
        self._block(fdef.body, dict(initial or {}))

    def of(self, call: ast.Call) -> list[str]:
        """Candidates for the access `call` (a node of the original tree or a copy of it)."""
        got = self.found.get((call.lineno, call.col_offset), frozenset())
        return sorted(got, key=lambda p: self.order.get(p, 1 << 30))

    def arg_bases(self, arg: ast.AST) -> list[str]:
        """Candidates for an argument of a call (a node of the original tree or a copy of it):
        what a helper's parameter may derive from."""
        key = (arg.lineno, arg.col_offset, arg.end_lineno or 0, arg.end_col_offset or 0)
        return sorted(
            self.arg_found.get(key, frozenset()), key=lambda p: self.order.get(p, 1 << 30)
        )

    # -- expressions ------------------------------------------------------------------------------

    def expr(self, node: ast.AST | None, env: dict[str, frozenset[str]]) -> frozenset[str]:
        none: frozenset[str] = frozenset()
        if node is None:
            return none
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            return frozenset((node.id,)) if node.id in self.roots else none
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, (ast.Add, ast.Sub)):
                return self.expr(node.left, env) | self.expr(node.right, env)
            return none  # pointers are never multiplied, divided or shifted
        if isinstance(node, ast.Subscript):
            return self.expr(node.value, env)
        if isinstance(node, ast.Attribute):
            return self.expr(node.value, env) if node.attr == "T" else none
        if isinstance(node, ast.IfExp):
            return self.expr(node.body, env) | self.expr(node.orelse, env)
        if isinstance(node, ast.Call):
            return self._call(node, env)
        return none

    def _call(self, node: ast.Call, env: dict[str, frozenset[str]]) -> frozenset[str]:
        none: frozenset[str] = frozenset()
        obj = self.resolve(node.func)
        if obj is not None:
            if _tl_obj(obj, ("where",)):
                return self.expr(node.args[1] if len(node.args) > 1 else None, env) | self.expr(
                    node.args[2] if len(node.args) > 2 else None, env
                )
            if _tl_obj(obj, _PASS_FIRST):
                for kw in node.keywords:
                    if kw.arg in ("base", "input", "x", "pointer"):
                        return self.expr(kw.value, env)
                return self.expr(node.args[0] if node.args else None, env)
            # A @triton.jit function (InterpretedFunction hides its module): look at what it wraps.
            fn = getattr(obj, "fn", None)
            mod = getattr(fn, "__module__", "") if callable(fn) else getattr(obj, "__module__", "")
            if str(mod).startswith("triton.language"):
                return none  # a value computation of Triton's (loads included)
        elif isinstance(node.func, ast.Attribute):
            if node.func.attr in _PASS_METHODS:
                return self.expr(node.func.value, env)
            return none
        # A helper we cannot see into: any pointer handed to it may come back.
        out = none
        for a in node.args:
            out |= self.expr(a, env)
        for kw in node.keywords:
            out |= self.expr(kw.value, env)
        return out

    # -- statements -------------------------------------------------------------------------------

    def _record(self, node: ast.AST, env: dict[str, frozenset[str]]) -> None:
        for sub in ast.walk(node):
            if not isinstance(sub, ast.Call):
                continue
            for a in list(sub.args) + [k.value for k in sub.keywords]:
                key = (a.lineno, a.col_offset, a.end_lineno or 0, a.end_col_offset or 0)
                self.arg_found[key] = self.arg_found.get(key, frozenset()) | self.expr(a, env)
            kind = self.access_kind(sub)
            if kind is None:
                continue
            _k, desc = kind
            if desc:
                f = sub.func
                # a method of the descriptor (load, store, atomic_*, gather, scatter) is made
                # from the descriptor; a tl function takes it first
                ptr = (
                    f.value
                    if isinstance(f, ast.Attribute) and self.resolve(f.value) is None
                    else (sub.args[0] if sub.args else None)
                )
            else:
                ptr = (
                    sub.args[0]
                    if sub.args
                    else next((k.value for k in sub.keywords if k.arg == "pointer"), None)
                )
            key = (sub.lineno, sub.col_offset)
            self.found[key] = self.found.get(key, frozenset()) | self.expr(ptr, env)

    def _assign(
        self, target: ast.AST, bases: frozenset[str], env: dict[str, frozenset[str]]
    ) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = bases
        elif isinstance(target, (ast.Tuple, ast.List)):
            for e in target.elts:
                self._assign(e, frozenset(), env)

    @staticmethod
    def _merge(
        a: dict[str, frozenset[str]], b: dict[str, frozenset[str]]
    ) -> dict[str, frozenset[str]]:
        out = dict(a)
        for k, v in b.items():
            out[k] = out.get(k, frozenset()) | v
        return out

    def _block(
        self, stmts: list[ast.stmt], env: dict[str, frozenset[str]]
    ) -> dict[str, frozenset[str]]:
        for st in stmts:
            env = self._stmt(st, env)
        return env

    def _stmt(self, st: ast.stmt, env: dict[str, frozenset[str]]) -> dict[str, frozenset[str]]:
        if isinstance(st, ast.Assign):
            self._record(st, env)
            bases = self.expr(st.value, env)
            if (
                len(st.targets) == 1
                and isinstance(st.targets[0], ast.Tuple)
                and isinstance(st.value, ast.Tuple)
                and len(st.targets[0].elts) == len(st.value.elts)
            ):
                vals = [self.expr(v, env) for v in st.value.elts]
                for t, b in zip(st.targets[0].elts, vals):
                    self._assign(t, b, env)
            else:
                for t in st.targets:
                    self._assign(t, bases, env)
        elif isinstance(st, ast.AnnAssign):
            self._record(st, env)
            if st.value is not None:
                self._assign(st.target, self.expr(st.value, env), env)
        elif isinstance(st, ast.AugAssign):
            self._record(st, env)
            if isinstance(st.target, ast.Name):
                cur = self.expr(st.target, env)
                env[st.target.id] = (
                    cur | self.expr(st.value, env)
                    if isinstance(st.op, (ast.Add, ast.Sub))
                    else frozenset()
                )
        elif isinstance(st, (ast.For, ast.While)):
            self._record(st.iter if isinstance(st, ast.For) else st.test, env)
            if isinstance(st, ast.For):
                self._assign(st.target, frozenset(), env)
            # twice: values carried from one iteration to the next reach the second pass
            once = self._merge(env, self._block(st.body, dict(env)))
            env = self._merge(once, self._block(st.body, dict(once)))
            env = self._block(st.orelse, env)
        elif isinstance(st, ast.If):
            self._record(st.test, env)
            env = self._merge(self._block(st.body, dict(env)), self._block(st.orelse, dict(env)))
        elif isinstance(st, ast.With):
            for it in st.items:
                self._record(it.context_expr, env)
            env = self._block(st.body, env)
        elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            pass
        else:
            self._record(st, env)
        return env


def classify_other(node: ast.AST | None) -> str:
    """What the masked-off lanes of a load hold: "none" (no `other`: zeros), "finite", "nan",
    "inf" or "unknown"."""
    if node is None:
        return "none"
    try:
        v = eval(
            compile(ast.Expression(body=node), "<other>", "eval"),  # noqa: S307 - literals only
            {"__builtins__": {}},
            {"float": float, "math": math, "inf": math.inf, "nan": math.nan},
        )
    except Exception:  # noqa: BLE001 - not a literal we can evaluate
        return "unknown"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return "unknown"
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf"
    return "finite"


def has_inf_literal(node: ast.AST, is_load: Callable[[ast.Call], bool]) -> bool:
    """Does the statement write an infinity as a literal (float("-inf"), -math.inf, ...)? A
    load's `other` does not count: what padding lanes hold is the load's rule (load_other)."""
    skip: set[int] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and is_load(sub):
            other = next((k.value for k in sub.keywords if k.arg == "other"), None)
            if other is None and len(sub.args) > 2:
                other = sub.args[2]
            if other is not None:
                skip.update(id(n) for n in ast.walk(other))
    for sub in ast.walk(node):
        if (
            id(sub) not in skip
            and isinstance(sub, (ast.Call, ast.Attribute, ast.Constant))
            and classify_other(sub) == "inf"
        ):
            return True
    return False


def load_other(call: ast.Call) -> str:
    """classify_other() of a tl.load call's `other` (positional index 2 or keyword)."""
    for kw in call.keywords:
        if kw.arg == "other":
            return classify_other(kw.value)
    return classify_other(call.args[2] if len(call.args) > 2 else None)


def dtype_name(obj: Any) -> str | None:
    """Site table name of a narrow float dtype object (tl.float16 ...), else None."""
    name = getattr(obj, "name", None)
    return _NARROW.get(name) if isinstance(name, str) else None


Operand = tuple[str, str | None, ast.AST, Callable[[ast.AST], None]]


def operand_roles(node: ast.AST, resolve: Callable[[ast.AST], Any]) -> list[Operand]:
    """The checked operands of one expression node: (role, target dtype, operand, setter) where
    setter(new) replaces the operand in `node` (for hoisting it into a temporary)."""
    out: list[Operand] = []
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):

        def set_right(new: ast.AST, n: ast.BinOp = node) -> None:
            n.right = new

        out.append(("divisor", None, node.right, set_right))
        return out
    if not isinstance(node, ast.Call):
        return out
    func = node.func
    obj = resolve(func)

    def arg_setter(i: int) -> Callable[[ast.AST], None]:
        def put(new: ast.AST, n: ast.Call = node) -> None:
            n.args[i] = new

        return put

    if obj is None and isinstance(func, ast.Attribute) and func.attr == "to":
        target = (
            node.args[0]
            if node.args
            else next((k.value for k in node.keywords if k.arg == "dtype"), None)
        )
        name = dtype_name(resolve(target)) if target is not None else None
        if name is not None:

            def set_recv(new: ast.AST, f: ast.Attribute = func) -> None:
                f.value = new

            out.append(("cast_src", name, func.value, set_recv))
        return out
    if obj is None:
        return out
    if _tl_obj(obj, ("cast",)) and len(node.args) >= 2:
        name = dtype_name(resolve(node.args[1]))
        if name is not None:
            out.append(("cast_src", name, node.args[0], arg_setter(0)))
    elif _tl_obj(obj, _DIV) and len(node.args) >= 2:
        out.append(("divisor", None, node.args[1], arg_setter(1)))
    elif _tl_obj(obj, _SQRT) and node.args:
        out.append(("sqrt_arg", None, node.args[0], arg_setter(0)))
    elif _tl_obj(obj, _LOG) and node.args:
        out.append(("log_arg", None, node.args[0], arg_setter(0)))
    return out
