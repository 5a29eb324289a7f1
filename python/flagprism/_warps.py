# SPDX-License-Identifier: Apache-2.0
"""How many warps the Debugger's twin runs with (docs/internals/debugger.md, "Warps of the twin").

The record reductions of a twin are a fixed cost per warp (butterflies, the cross-warp stage,
the record stores), so a twin runs faster with fewer warps per program, each thread holding more
elements. That is only allowed when the observed kernel's results cannot depend on its warp
count: Triton's semantics are layout-independent for element-wise code, loads and stores, masks,
casts, broadcasting, ``tl.arange`` and ``program_id``, but not for reductions and scans
(floating-point order), ``tl.dot`` (accumulation order), inline assembly and ``tl.extra``
intrinsics (``num_warps()``, ``smid()``, ...), barriers, atomics, sort/histogram/gather and
reshapes that may reorder. Nor, on NVIDIA GPUs, for the sum or difference of two floating-point
products: the compiler contracts it into a fused multiply-add, and which product of ``a*b - c*d``
it fuses depends on the code it generates for the layout, so a twin with fewer warps rounded
Liger-Kernel's RoPE differently by one unit in the last place (measured on the H200). Products of integers (index arithmetic) are exact and do not count; a small type inference
over the kernel's assignments tells them apart, and anything it cannot type counts as floating
point. This module decides it with a static scan of the kernel's AST and of
every ``@triton.jit`` function it calls, transitively, against a deny list; anything it cannot
resolve keeps the kernel's warps. The scan is over the user's kernel, never over the twin, so
the record helpers of ``_records.py`` (whose reductions are over records, not over the user's
values) are not part of it.

The warp count itself: 1 where allowed (measured best on the H200), raised in powers of two so
that the largest tensor the launch's constexpr block sizes make holds at most
``ELEMS_PER_WARP`` elements per warp (32 per thread), never above the kernel's own count.

Not here: launching (``_launch.py``), rewriting (``_rewrite.py``).
"""

from __future__ import annotations

import ast
import builtins
import inspect
import textwrap
import weakref
from dataclasses import dataclass
from typing import Any

from flagprism._rwbase import MISSING as _MISSING
from flagprism._rwbase import resolve as _resolve

#: Triton's default num_warps for a launch that does not give one (CUDA and HIP backends).
DEFAULT_NUM_WARPS = 4
#: Elements of the largest tensor one warp may hold in the twin (32 per thread): the measured
#: add (BLOCK 1024) is fastest at 1 warp, i.e. 32 fp32 elements per thread; more per thread
#: risks register spills in the twin, which keeps several statistics live per value.
ELEMS_PER_WARP = 1024
#: Most @triton.jit functions one scan visits (kernel included) before it gives up.
MAX_FUNCTIONS = 64

SETTINGS = ("auto", "same")

# triton.language functions (by name) whose result depends on the layout, i.e. on num_warps.
_DENY = frozenset(
    {
        "sum",
        "max",
        "min",
        "argmax",
        "argmin",
        "reduce",
        "reduce_or",
        "xor_sum",
        "cumsum",
        "cumprod",
        "associative_scan",
        "sort",
        "topk",
        "flip",
        "bitonic_merge",
        "histogram",
        "gather",
        "scatter",
        "softmax",
        "dot",
        "dot_scaled",
        "debug_barrier",
        "inline_asm_elementwise",
        "map_elementwise",
        "view",
        "cat",
    }
)
# reshapes whose can_reorder= lets the compiler pick the element order from the layout
_REORDERING = frozenset({"reshape", "ravel"})
# tensor methods known not to depend on the layout (anything else: keep the kernel's warps)
_SAFE_METHODS = frozenset(
    {
        "to",
        "cast",
        "trans",
        "permute",
        "broadcast_to",
        "expand_dims",
        "split",
        "reshape",
        "ravel",
        "abs",
        "ceil",
        "floor",
        "cos",
        "sin",
        "erf",
        "exp",
        "exp2",
        "log",
        "log2",
        "rsqrt",
        "sqrt",
        "sqrt_rn",
        "sigmoid",
        "cdiv",
        "logical_and",
        "logical_or",
        "load",
        "store",
        "advance",
        "item",
    }
)
_SAFE_BUILTINS = frozenset(
    {
        "range",
        "min",
        "max",
        "len",
        "int",
        "float",
        "bool",
        "abs",
        "isinstance",
        "tuple",
        "list",
        "print",
        "getattr",
        "hasattr",
        "zip",
        "enumerate",
        "str",
        "type",
    }
)
_SHAPED = frozenset(
    {
        "zeros",
        "full",
        "reshape",
        "broadcast_to",
        "make_block_ptr",
        "make_tensor_descriptor",
        "zeros_like",
        "full_like",
        "view",
    }
)


@dataclass
class Scan:
    """Whether the kernel's results can depend on its warp count, and what says so."""

    allowed: bool
    reason: str


_scan_cache: dict[tuple[int, frozenset[str], frozenset[str]], tuple[Any, Scan]] = {}


def check_setting(v: Any) -> str | int:
    """Validate a ``twin_num_warps`` setting: "auto", "same", or a power of two from 1 to 32."""
    if isinstance(v, str) and v in SETTINGS:
        return v
    if isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 32 and v & (v - 1) == 0:
        return v
    raise ValueError(
        f'twin_num_warps must be "auto", "same" or a power of two from 1 to 32, got {v!r}'
    )


def _triton_name(obj: Any) -> str | None:
    """The name of a triton.language object (function, builtin or @jit), else None."""
    mod = getattr(obj, "__module__", None)
    inner = getattr(obj, "fn", None)
    if inner is not None and getattr(inner, "__module__", None):
        mod = inner.__module__
    if isinstance(mod, str) and (mod == "triton.language" or mod.startswith("triton.language.")):
        return getattr(inner, "__name__", None) or getattr(obj, "__name__", None) or "?"
    return None


def _is_jit(obj: Any) -> bool:
    fn = getattr(obj, "fn", None)
    return fn is not None and hasattr(fn, "__code__") and hasattr(obj, "run")


def _reorders(call: ast.Call) -> bool:
    for kw in call.keywords:
        if kw.arg == "can_reorder":
            return not (isinstance(kw.value, ast.Constant) and kw.value.value is False)
    return False


_parsed: dict[int, tuple[Any, ast.FunctionDef | None]] = {}  # id(fn) -> (weakref to fn, its def)


def _parse(fn: Any) -> ast.FunctionDef | None:
    """The function's definition (parsed once per function; callers must not change it)."""
    key = id(fn)
    hit = _parsed.get(key)
    if hit is not None and hit[0]() is fn:
        return hit[1]
    try:
        src = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError):
        fdef = None
    else:
        fdef = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    try:
        _parsed[key] = (weakref.ref(fn), fdef)
    except TypeError:
        pass
    return fdef


def _body_nodes(fdef: ast.FunctionDef):
    """Every node of the function's body and argument defaults (not its decorators, which run on
    the host: triton.autotune, triton.heuristics)."""
    for d in fdef.args.defaults + [d for d in fdef.args.kw_defaults if d is not None]:
        yield from ast.walk(d)
    for st in fdef.body:
        yield from ast.walk(st)


def _scope_of(fn: Any) -> dict[str, Any]:
    scope = dict(fn.__globals__)
    try:
        scope.update(inspect.getclosurevars(fn).nonlocals)
    except (TypeError, ValueError):
        pass
    return scope


_INT_FUNCS = frozenset({"program_id", "num_programs", "arange", "cdiv"})
_JOIN_FUNCS = frozenset(
    {
        "where",
        "maximum",
        "minimum",
        "broadcast_to",
        "expand_dims",
        "reshape",
        "trans",
        "permute",
        "ravel",
        "view",
    }
)


def _join(a: str, b: str) -> str:
    if a == b:
        return a
    if {a, b} == {"int", "ptr"}:
        return "ptr"
    return "float"


class _Types:
    """A conservative type for every name of a kernel: "int" (exact integer arithmetic), "ptr"
    (a pointer or pointer tensor) or "float" (anything else, unknown included)."""

    def __init__(
        self,
        fdef: ast.FunctionDef,
        scope: dict[str, Any],
        int_params: frozenset[str],
        ptr_params: frozenset[str],
    ) -> None:
        self.scope = scope
        self.names: dict[str, str] = {}
        for a in fdef.args.args + fdef.args.kwonlyargs:
            ann = ast.unparse(a.annotation) if a.annotation is not None else ""
            if ann.endswith("constexpr") or a.arg in int_params:
                self.names[a.arg] = "int"
            elif a.arg in ptr_params:
                self.names[a.arg] = "ptr"
        assigns: list[tuple[str, ast.AST]] = []
        for node in _body_nodes(fdef):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        assigns.append((t.id, node.value))
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                assigns.append((node.target.id, node.value))
            elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
                self.names.setdefault(node.target.id, "int")
        for _ in range(3):  # to a fixed point over loops and reassignments
            for name, value in assigns:
                t = self.of(value)
                self.names[name] = t if name not in self.names else _join(self.names[name], t)

    def of(self, node: ast.AST) -> str:
        if isinstance(node, ast.Constant):
            return "int" if isinstance(node.value, (bool, int)) else "float"
        if isinstance(node, ast.Name):
            if node.id in self.names:
                return self.names[node.id]
            v = getattr(self.scope.get(node.id), "value", self.scope.get(node.id))
            return "int" if isinstance(v, int) else "float"
        if isinstance(node, ast.Subscript):
            return self.of(node.value)
        if isinstance(node, ast.UnaryOp):
            return self.of(node.operand)
        if isinstance(node, ast.Compare) or isinstance(node, ast.BoolOp):
            return "int"
        if isinstance(node, ast.BinOp):
            return _join(self.of(node.left), self.of(node.right))
        if isinstance(node, ast.IfExp):
            return _join(self.of(node.body), self.of(node.orelse))
        if isinstance(node, ast.Call):
            f = node.func
            name = (
                f.attr
                if isinstance(f, ast.Attribute)
                else (f.id if isinstance(f, ast.Name) else "")
            )
            if name in _INT_FUNCS:
                return "int"
            if name == "to" and node.args:
                return "int" if "int" in ast.unparse(node.args[0]) else "float"
            if name in _JOIN_FUNCS:
                args = node.args[1:] if name == "where" else node.args[:1]
                out = "int"
                for a in args:
                    out = _join(out, self.of(a))
                return out
        return "float"


def _contracts(fdef: ast.FunctionDef, types: _Types) -> ast.AST | None:
    """An addition or subtraction of two floating-point products (``a*b - c*d``, directly or
    through names), whose fused multiply-add can take either product, or None. One product
    meeting an addition (``a*b + c``) always contracts the same way."""

    def fmul(n: ast.AST) -> bool:
        return isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) and types.of(n) == "float"

    products: set[str] = set()
    for node in _body_nodes(fdef):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and fmul(node.value)
        ):
            products.add(node.targets[0].id)

    def product(n: ast.AST) -> bool:
        return fmul(n) or (isinstance(n, ast.Name) and n.id in products)

    for node in _body_nodes(fdef):
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, (ast.Add, ast.Sub))
            and types.of(node) == "float"
            and product(node.left)
            and product(node.right)
        ):
            return node
        if (
            isinstance(node, ast.AugAssign)
            and isinstance(node.op, (ast.Add, ast.Sub))
            and isinstance(node.target, ast.Name)
            and node.target.id in products
            and product(node.value)
        ):
            return node
    return None


def _scan_fn(
    fn: Any,
    seen: set[int],
    where: str,
    int_params: frozenset[str] = frozenset(),
    ptr_params: frozenset[str] = frozenset(),
) -> Scan:
    fdef = _parse(fn)
    file = getattr(getattr(fn, "__code__", None), "co_filename", "?")
    first = getattr(getattr(fn, "__code__", None), "co_firstlineno", 1)
    if fdef is None:
        return Scan(False, f"the source of {getattr(fn, '__name__', fn)} is not available")
    scope = _scope_of(fn)
    params = {a.arg for a in fdef.args.args + fdef.args.kwonlyargs}
    if "num_warps" in params:
        return Scan(False, f"{fdef.name} has a parameter named num_warps")

    def at(node: ast.AST) -> str:
        return f"{where}{fdef.name} ({file.rsplit('/', 1)[-1]}:{first + getattr(node, 'lineno', 1) - 1})"

    for node in _body_nodes(fdef):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        text = ast.unparse(func)
        obj = _resolve(func, scope)  # triton.language's own where the interpreter patched it
        if (
            obj is _MISSING
            and isinstance(func, ast.Name)
            and func.id not in params
            and func.id in _SAFE_BUILTINS
        ):
            continue  # range(...), float("inf"), min/max of constexprs: Python's builtins
        if obj is _MISSING:
            if isinstance(func, ast.Attribute):
                meth = func.attr
                if meth in _DENY or meth.startswith("atomic_"):
                    return Scan(False, f"calls .{meth}() in {at(node)}")
                if meth in _REORDERING and _reorders(node):
                    return Scan(False, f"calls .{meth}(can_reorder=...) in {at(node)}")
                if meth in _SAFE_METHODS or meth.startswith("is_"):
                    continue
            return Scan(False, f"calls {text}, which cannot be resolved, in {at(node)}")
        mod = getattr(getattr(obj, "fn", obj), "__module__", None) or ""
        if mod == "flagprism" or mod.startswith("flagprism."):
            continue  # the collection markers and record helpers are ours
        name = _triton_name(obj)
        if name is not None:
            if mod.startswith("triton.language.extra.") and "libdevice" not in mod:
                return Scan(False, f"calls {text} (a target intrinsic) in {at(node)}")
            if name in _DENY or name.startswith("atomic_"):
                return Scan(False, f"calls {text} in {at(node)}")
            if name in _REORDERING and _reorders(node):
                return Scan(False, f"calls {text}(can_reorder=...) in {at(node)}")
            continue
        if _is_jit(obj):
            key = id(obj.fn)
            if key in seen:
                continue
            seen.add(key)
            if len(seen) > MAX_FUNCTIONS:
                return Scan(False, f"calls more than {MAX_FUNCTIONS} @triton.jit functions")
            sub = _scan_fn(obj.fn, seen, f"{where}{fdef.name} -> ")
            if not sub.allowed:
                return sub
            continue
        if (
            getattr(builtins, getattr(obj, "__name__", ""), None) is obj
            and obj.__name__ in _SAFE_BUILTINS
        ):
            continue
        if isinstance(obj, type) and (getattr(obj, "__module__", "") or "").startswith("triton"):
            continue  # tl.constexpr(...), tl.range(...), dtype constructors
        if (
            getattr(obj, "__module__", None) == "triton"
            and getattr(obj, "__name__", None) == "cdiv"
        ):
            continue  # triton.cdiv on constexprs
        return Scan(False, f"calls {text}, which is not a known Triton function, in {at(node)}")
    fma = _contracts(fdef, _Types(fdef, scope, int_params, ptr_params))
    if fma is not None:
        return Scan(
            False,
            f"two floating-point products meet in {ast.unparse(fma)[:60]} (which one the "
            f"fused multiply-add takes may change with the layout) in {at(fma)}",
        )
    return Scan(True, "")


def scan(
    jitfn: Any, int_params: frozenset[str] = frozenset(), ptr_params: frozenset[str] = frozenset()
) -> Scan:
    """Whether a kernel's results are the same at any warp count (cached per kernel function and
    parameter types). int_params/ptr_params: the kernel's parameters known to be integers and
    pointers at this launch (the others are typed as floating point)."""
    fn = getattr(jitfn, "fn", None)
    if fn is None:
        return Scan(False, "not a @triton.jit kernel")
    key = (id(fn), int_params, ptr_params)
    hit = _scan_cache.get(key)
    if hit is not None and hit[0]() is fn:
        return hit[1]
    res = _scan_fn(fn, {id(fn)}, "", int_params, ptr_params)
    try:
        _scan_cache[key] = (weakref.ref(fn), res)
    except TypeError:
        pass
    return res


_eval_codes: dict[int, tuple[ast.AST, Any]] = {}  # id(node) -> (node, its code), for cached defs


def _eval(node: ast.AST, env: dict[str, Any]) -> Any:
    hit = _eval_codes.get(id(node))
    try:
        if hit is None or hit[0] is not node:
            hit = (node, compile(ast.Expression(node), "<flagprism-warps>", "eval"))
            _eval_codes[id(node)] = hit
        v = eval(hit[1], {"__builtins__": {}}, env)
    except Exception:  # noqa: BLE001 - anything that does not evaluate on the host is unknown
        return None
    v = getattr(v, "value", v)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def names_read(jitfn: Any) -> frozenset[str]:
    """The names whose values largest_tensor() reads (in the kernel's tl.arange extents and
    shape tuples): with the launch's specialization, they decide the warp count."""
    fn = getattr(jitfn, "fn", None)
    fdef = _parse(fn) if fn is not None else None
    if fdef is None:
        return frozenset()
    scope = _scope_of(fn)
    out: set[str] = set()
    for node in _body_nodes(fdef):
        if not isinstance(node, ast.Call):
            continue
        name = _triton_name(_resolve(node.func, scope))
        exprs: list[ast.AST] = []
        if name == "arange":
            exprs = list(node.args[:2])
        elif name in _SHAPED:
            exprs = [
                a
                for a in list(node.args) + [k.value for k in node.keywords]
                if isinstance(a, (ast.Tuple, ast.List))
            ]
        for e in exprs:
            out.update(n.id for n in ast.walk(e) if isinstance(n, ast.Name))
    return frozenset(out)


def largest_tensor(jitfn: Any, env: dict[str, Any]) -> int | None:
    """Upper estimate of the elements of the kernel's largest tensor, from its ``tl.arange``
    extents and literal shape tuples evaluated with the launch's constexpr and scalar values
    (``env``); None when none evaluates. N-d kernels (a subscript with None, or an N-tuple
    shape) count the product of the N largest arange extents."""
    fn = getattr(jitfn, "fn", None)
    fdef = _parse(fn) if fn is not None else None
    if fdef is None:
        return None
    scope = _scope_of(fn)
    extents: list[int] = []
    shapes: list[int] = []
    ndim = 1
    for node in _body_nodes(fdef):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
            if any(
                isinstance(e, ast.Slice) or (isinstance(e, ast.Constant) and e.value is None)
                for e in node.slice.elts
            ):
                ndim = max(ndim, len(node.slice.elts))
        if not isinstance(node, ast.Call):
            continue
        name = _triton_name(_resolve(node.func, scope))
        if name == "arange" and len(node.args) >= 2:
            lo, hi = _eval(node.args[0], env), _eval(node.args[1], env)
            if lo is not None and hi is not None and hi > lo:
                extents.append(hi - lo)
        elif name in _SHAPED:
            for a in list(node.args) + [k.value for k in node.keywords]:
                if isinstance(a, (ast.Tuple, ast.List)) and a.elts:
                    dims = [_eval(e, env) for e in a.elts]
                    if all(d is not None and d > 0 for d in dims):
                        prod = 1
                        for d in dims:
                            prod *= d
                        shapes.append(prod)
                        ndim = max(ndim, len(dims))
    best = max(shapes) if shapes else None
    if extents:
        top = sorted(extents, reverse=True)
        prod = 1
        for i in range(ndim):
            prod *= top[min(i, len(top) - 1)]
        best = prod if best is None else max(best, prod)
    return best


def decide(
    jitfn: Any,
    kernel_warps: Any,
    env: dict[str, Any],
    setting: str | int,
    maxnreg: Any = None,
    pointers: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """The twin's warp count for one launch: {"kernel": K, "twin": T, "reason": why}.

    kernel_warps: the launch's num_warps (None: Triton's default). setting: "auto" (fewer warps
    where results cannot change, see the module text), "same" (the kernel's), or N (N warps
    where results cannot change, else the kernel's). maxnreg: the launch's register cap, if any
    ("auto" then keeps the kernel's warps: more elements per thread would spill under it).
    pointers: the parameters that are tensors (pointers) at this launch; the integer scalars are
    read from env."""
    k = DEFAULT_NUM_WARPS if kernel_warps is None else int(kernel_warps)
    setting = check_setting(setting)
    if setting == "same":
        return {"kernel": k, "twin": k, "reason": 'twin_num_warps="same"'}
    if setting == "auto" and maxnreg is not None:
        return {
            "kernel": k,
            "twin": k,
            "reason": f"kept: the launch caps registers (maxnreg={maxnreg})",
        }
    ints = frozenset(k for k, v in env.items() if isinstance(v, int) and not isinstance(v, bool))
    s = scan(jitfn, ints, pointers)
    if not s.allowed:
        return {
            "kernel": k,
            "twin": k,
            "reason": f"kept: results may depend on the warp count: {s.reason}",
        }
    if isinstance(setting, int):
        return {
            "kernel": k,
            "twin": setting,
            "reason": f"twin_num_warps={setting}; no warp-dependent operation",
        }
    big = largest_tensor(jitfn, env)
    if big is None:
        return {"kernel": k, "twin": k, "reason": "kept: block sizes not known on the host"}
    w = 1
    while w < k and big > w * ELEMS_PER_WARP:
        w *= 2
    w = min(w, k)
    if w == k:
        return {
            "kernel": k,
            "twin": k,
            "reason": f"kept: largest block of {big} elements needs {k} warps "
            f"at {ELEMS_PER_WARP // 32} elements per thread",
        }
    return {
        "kernel": k,
        "twin": w,
        "reason": f"no warp-dependent operation; largest block {big} elements",
    }
