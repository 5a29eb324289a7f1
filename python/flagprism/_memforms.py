# SPDX-License-Identifier: Apache-2.0
"""Block pointers and tensor descriptors in the Debugger's twin: which names hold them, and the
*shadows* that let the record helpers summarise their accesses.

Triton's language does not expose the lanes of a block pointer (``tl.make_block_ptr``) or of a
tensor descriptor as addresses, so the twin keeps, next to each one it can follow, the scalars
its accesses derive from (``_records.py``, "Block pointers and tensor descriptors"):

* a block pointer ``p`` gets ``__fp_s_p = (base, shape, strides, offsets)``, made where
  ``p = tl.make_block_ptr(...)`` is made and moved where ``p = tl.advance(p, delta)`` moves it;
* a tensor descriptor ``d`` gets ``__fp_s_d = base``: made from ``tl.make_tensor_descriptor``'s
  base, or, for a kernel parameter passed a host ``TensorDescriptor``, the twin's extra parameter
  ``__fp_db_d``, which the launcher fills with the descriptor's base tensor.

Which names are followed is decided once per function, flow-insensitively: a name is a block
pointer (descriptor) when *every* assignment to it is one of the forms above (a copy of another
such name included) or it is a parameter the caller passed a shadow for. Anything else (a block
pointer returned from a helper, kept in a tuple, chosen by a conditional expression) has no
shadow; its accesses are recorded with an "addresses not observable" status and listed in the
coverage account. The shadows are ordinary Triton values, so they flow through loops and helper
calls (``_calltwins.py`` passes them as ``__fp_s_<param>``).

It rewrites no statement itself: ``_rewrite.py`` asks it what to emit.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from typing import Any

import triton.language as tl

from flagprism import compat

BP = "bp"  # block pointer
DESC = "desc"  # tensor descriptor

_DESC_METHODS = (
    "load",
    "store",
    "gather",
    "scatter",
    "atomic_add",
    "atomic_min",
    "atomic_max",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
)


def _is_tl(obj: Any, name: str) -> bool:
    obj = compat.unpatched(obj)
    return obj is not None and (
        obj is compat.unpatched(getattr(tl, name, None))
        or obj is compat.unpatched(getattr(tl.core, name, None))
    )


def shadow_name(name: str) -> str:
    return f"__fp_s_{name}"


class Forms:
    """The block pointers and descriptors of one function (a kernel or a helper's twin)."""

    def __init__(self, rw: Any) -> None:
        self.rw = rw
        self.kind: dict[str, str] = {}  # name -> BP | DESC
        self.shadows: dict[str, str] = {}  # name -> the variable holding its shadow
        self.padding: dict[str, str] = {}  # descriptor name -> "zero" | "nan" | "unknown"

    # -- deciding which names are followed -------------------------------------------------------

    def _resolve(self, node: ast.AST) -> Any:
        return self.rw._resolve_obj(node)

    def classify(self, value: ast.AST) -> tuple[str, str | None] | None:
        """(kind, source name or None) of an assigned value in a followed form, else None."""
        if isinstance(value, ast.Name):
            return "copy", value.id
        if isinstance(value, ast.Call):
            obj = self._resolve(value.func)
            if _is_tl(obj, "make_block_ptr"):
                return BP, None
            if _is_tl(obj, "make_tensor_descriptor"):
                return DESC, None
            if _is_tl(obj, "advance"):
                first = (
                    value.args[0]
                    if value.args
                    else next((k.value for k in value.keywords if k.arg == "base"), None)
                )
                if isinstance(first, ast.Name):
                    return "advance", first.id
        return None

    def scan(self, fdef: ast.FunctionDef, param_shadows: dict[str, Any]) -> None:
        """Decide which names of `fdef` are followed. param_shadows: parameter -> (kind, the
        caller's shadow variable) for the parameters the caller passes a shadow for."""
        self.kind = {}
        self.shadows = {}
        self.padding = {}
        params = {a.arg for a in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs}
        assigns: dict[str, list[tuple[str, str | None] | None]] = {}
        for node in _own_nodes(fdef):
            targets: list[ast.AST] = []
            value = None
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            elif isinstance(node, (ast.AugAssign, ast.For, ast.With)):
                targets = (
                    [node.target]
                    if not isinstance(node, ast.With)
                    else [it.optional_vars for it in node.items if it.optional_vars is not None]
                )
            for t in targets:
                if isinstance(t, ast.Name) and value is not None:
                    f = self.classify(value)
                    assigns.setdefault(t.id, []).append(f)
                    if f is not None and f[0] == DESC and isinstance(value, ast.Call):
                        pad = bind(
                            value, ("base", "shape", "strides", "block_shape", "padding_option")
                        ).get("padding_option")
                        p = (
                            "zero"
                            if pad is None
                            else (
                                pad.value
                                if isinstance(pad, ast.Constant) and pad.value in ("zero", "nan")
                                else "unknown"
                            )
                        )
                        if self.padding.get(t.id, p) != p:
                            p = "unknown"
                        self.padding[t.id] = p
                else:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            assigns.setdefault(n.id, []).append(None)
        # Parameters: a shadow from the caller (or a host descriptor's base) makes them followed;
        # without one they are not. Then an optimistic fixpoint: every other assigned name starts
        # as "top" (anything), and falls to "no" as soon as one of its assignments is not a
        # followed form of a followed name.
        hosts = self.host_descriptor_params(fdef) if not self.rw.frame else []
        for p in params:
            k = param_shadows[p][0] if p in param_shadows else (DESC if p in hosts else None)
            assigns.setdefault(p, []).insert(0, (k, None) if k is not None else None)
        state = {name: "top" for name in assigns}
        changed = True
        while changed:
            changed = False
            for name, forms in assigns.items():
                ks: set[str] = set()
                ok = True
                for f in forms:
                    if f is None:
                        ok = False
                        break
                    form, src = f
                    if form in (BP, DESC):
                        ks.add(form)
                        continue
                    sk = state.get(src or "", "no")
                    if sk == "no" or (form == "advance" and sk not in (BP, "top")):
                        ok = False
                        break
                    if form == "advance":
                        ks.add(BP)
                    elif sk != "top":
                        ks.add(sk)
                new = "no" if not ok or len(ks) > 1 else (next(iter(ks)) if ks else "top")
                if new != state[name]:
                    state[name] = new
                    changed = True
        self.kind = {n: k for n, k in state.items() if k in (BP, DESC)}
        for name in self.kind:
            if name in param_shadows:
                self.shadows[name] = shadow_name(name)  # the helper twin's shadow parameter
            elif name in hosts:
                self.shadows[name] = f"__fp_db_{name}"  # the kernel twin's base parameter
            else:
                self.shadows[name] = shadow_name(name)

    def host_descriptor_params(self, fdef: ast.FunctionDef) -> list[str]:
        """Kernel parameters used as tensor descriptors (a descriptor method called on them, or
        passed to tl.load_tensor_descriptor or to a helper parameter used so, transitively): the
        ones a host TensorDescriptor may be passed to. Recorded in the shared tables."""
        params = [a.arg for a in fdef.args.args]
        found = [p for p in params if uses_as_descriptor(fdef, p, self._resolve, set())]
        shared = self.rw.shared
        for p in found:
            if p not in shared.desc_params:
                shared.desc_params.append(p)
        return found

    # -- queries ------------------------------------------------------------------------------------

    def shadow_of(self, name: str) -> str | None:
        return self.shadows.get(name)

    def kind_of(self, name: str) -> str | None:
        return self.kind.get(name)

    def param_shadow(self, name: str) -> tuple[str, str] | None:
        """(kind, shadow variable) to hand to a helper parameter given `name`."""
        sh = self.shadows.get(name)
        return (self.kind[name], sh) if sh is not None else None

    def padding_of(self, node: ast.AST) -> str:
        """What a descriptor load gives lanes outside the descriptor's shape, as far as known."""
        if isinstance(node, ast.Name):
            return self.padding.get(node.id, "unknown")
        return "unknown"

    def is_form_name(self, name: str) -> bool:
        """Does `name` hold a block pointer or a descriptor (not a value a record could summarise)?"""
        return name in self.kind

    def bp_shadow_expr(self, node: ast.AST) -> str | None:
        """The shadow of a block pointer expression: a followed name, or tl.advance of one."""
        if isinstance(node, ast.Name) and self.kind.get(node.id) == BP:
            return self.shadows[node.id]
        if isinstance(node, ast.Call) and _is_tl(self._resolve(node.func), "advance"):
            first = node.args[0] if node.args else None
            delta = (
                node.args[1]
                if len(node.args) > 1
                else next((k.value for k in node.keywords if k.arg == "offsets"), None)
            )
            inner = self.bp_shadow_expr(first) if first is not None else None
            if inner is not None and delta is not None and self.rw._pure(delta):
                return f"__fp_bpadv({inner}, {ast.unparse(delta)})"
        return None

    def after_assign(self, st: ast.stmt) -> list[str]:
        """Shadow updates after `st` (the user's statement) for the followed names it assigns."""
        if (
            isinstance(st, ast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Name)
        ):
            target, value = st.targets[0].id, st.value
        elif (
            isinstance(st, ast.AnnAssign)
            and isinstance(st.target, ast.Name)
            and st.value is not None
        ):
            target, value = st.target.id, st.value
        else:
            return []
        if target not in self.kind:
            return []
        sh = self.shadows[target]
        f = self.classify(value)
        if f is None:
            return []
        form, src = f
        if form == "copy":
            return [f"{sh} = {self.shadows[src]}"] if src in self.shadows else []
        if form == "advance":
            expr = self.bp_shadow_expr(value)
            return [f"{sh} = {expr}"] if expr is not None else []
        assert isinstance(value, ast.Call)
        if form == BP:
            args = bind(value, ("base", "shape", "strides", "offsets", "block_shape", "order"))
            parts = [args.get(k) for k in ("base", "shape", "strides", "offsets")]
            if any(p is None or not self.rw._pure(p) for p in parts):
                return []
            return [f"{sh} = __fp_bpmake({', '.join(ast.unparse(p) for p in parts)})"]  # type: ignore[arg-type]
        args = bind(value, ("base", "shape", "strides", "block_shape", "padding_option"))
        b = args.get("base")
        if b is None or not self.rw._pure(b):
            return []
        return [f"{sh} = {ast.unparse(b)}"]

    def unfollowed_reason(self, node: ast.AST) -> str:
        return (
            "the rewriter cannot follow how this block pointer or descriptor was made (returned by a call, "
            "kept in a tuple or a conditional expression, or built from an expression with calls)"
        )


def bind(call: ast.Call, names: tuple[str, ...]) -> dict[str, ast.AST]:
    """Arguments of a call by parameter name (positional ones in `names` order)."""
    out: dict[str, ast.AST] = {}
    for i, a in enumerate(call.args):
        if i < len(names) and not isinstance(a, ast.Starred):
            out[names[i]] = a
    for kw in call.keywords:
        if kw.arg is not None:
            out[kw.arg] = kw.value
    return out


def _own_nodes(fdef: ast.FunctionDef):
    todo: list[ast.AST] = list(fdef.body)
    while todo:
        n = todo.pop()
        yield n
        for c in ast.iter_child_nodes(n):
            if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                todo.append(c)


@functools.lru_cache(maxsize=256)
def _parsed(fn: Any) -> ast.FunctionDef | None:
    """A helper's parsed `def` (cached: every parameter of a kernel asks about the same helpers)."""
    from flagprism import _rewrite, _rwbase

    try:
        return _rwbase.Source(fn).parse_function()
    except _rewrite.RewriteError:
        return None


def uses_as_descriptor(
    fdef: ast.FunctionDef,
    param: str,
    resolve: Callable[[ast.AST], Any],
    seen: set[int],
    depth: int = 0,
) -> bool:
    """Is `param` of `fdef` used as a tensor descriptor (method call, tl.load/store_tensor_descriptor,
    or handed to a helper parameter used so)?"""
    from flagprism import _calltwins, _rwbase

    for node in _own_nodes(fdef):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if (
            isinstance(f, ast.Attribute)
            and f.attr in _DESC_METHODS
            and isinstance(f.value, ast.Name)
            and f.value.id == param
            and resolve(f.value) is None
        ):
            return True
        obj = resolve(f)
        if (
            (_is_tl(obj, "load_tensor_descriptor") or _is_tl(obj, "store_tensor_descriptor"))
            and node.args
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id == param
        ):
            return True
        helper = _calltwins.user_helper(obj)
        if helper is None or depth >= _calltwins.MAX_DEPTH or id(helper) in seen:
            continue
        hdef = _parsed(helper.fn)
        if hdef is None:
            continue
        binding = _calltwins.bind_call(hdef, node)
        if binding is None:
            continue
        scope = dict(helper.fn.__globals__)

        def hresolve(n: ast.AST, scope: dict[str, Any] = scope) -> Any:
            obj2 = _rwbase.resolve(n, scope)
            return None if obj2 is _rwbase.MISSING else obj2

        for hp, arg in binding.items():
            if isinstance(arg, ast.Name) and arg.id == param:
                seen.add(id(helper))
                try:
                    if uses_as_descriptor(hdef, hp, hresolve, seen, depth + 1):
                        return True
                finally:
                    seen.discard(id(helper))
    return False
