# SPDX-License-Identifier: Apache-2.0
"""Twins of the ``@triton.jit`` helpers an observed region calls, one per call site.

A kernel's instrumented twin (``_rewrite.py``) observes the statements of its region; real kernels
do much of their work in helpers (the K/V loop of an attention forward, a matmul's inner step).
For every call of a user ``@triton.jit`` function inside an observed region (also inside a helper
being twinned, to any depth) this module rewrites the helper's own source the same way, as a
*frame*: a copy named ``__fp_h<F>_<name>`` that takes the record context as four extra keyword
parameters (``__fp_ctx``, ``__fp_b``, ``__fp_S``, ``__fp_n``), observes its statements and memory
accesses with the caller's levels, and returns the caller's result together with the advanced
record counter (``return value, __fp_n``; a helper without a value returns ``__fp_n``). The call
in the caller becomes ``__fpu_hK, __fp_n = __fp_h<F>_<name>(args..., <context>)``. Each twin is a
file of its own in the twin cache, at the helper's own line numbers, so Triton IR locations point
into the helper's file. Its statements and sites join the kernel's tables with their frame, whose
call chain the reports show (``attn.py:43 _inner -> attn.py:12 qk = tl.dot(q, k)``).

Block pointers and device tensor descriptors that the caller tracks (``_memforms.py``) travel with
the call: the twin takes their shadows as extra parameters (``__fp_s_<param>``).

It does not launch anything, size buffers or decode records; nor does it decide what a statement
observes (``_rewrite.py`` does, for kernels and frames alike).
"""

from __future__ import annotations

import ast
import copy
import inspect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from flagprism._rewrite import _Hoister

#: Deepest helper nesting twinned (Triton has no recursion; this bounds hostile inputs).
MAX_DEPTH = 16
#: Most frames (call-site twins) of one kernel.
MAX_FRAMES = 256

CTX_PARAMS = ("__fp_ctx", "__fp_b", "__fp_S", "__fp_n")


@dataclass
class Frame:
    """One twinned helper call site. Frame 0 is the kernel itself (not stored as a Frame)."""

    id: int
    function: str
    file: str
    parent: int
    call_file: str  # file of the calling statement (the parent frame's file)
    call_line: int  # absolute line of the calling statement
    call_col: int
    call_source: str
    #: helper parameter -> the caller's variable name, for arguments that are plain names
    args: dict[str, str] = field(default_factory=dict)
    #: helper parameter -> the caller's argument expression (host evaluation of loop bounds)
    arg_exprs: dict[str, str] = field(default_factory=dict)
    #: top-level assignments of the helper (line, name, expression), like Twin.host_defs
    host_defs: list[tuple[int, str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "function": self.function,
            "file": self.file,
            "parent": self.parent,
            "call": {
                "file": self.call_file,
                "line": self.call_line,
                "col": self.call_col,
                "source": self.call_source,
            },
            "args": dict(self.args),
        }


@dataclass
class SubTwin:
    """The rewritten text of one helper call site, and once loaded its callable."""

    name: str  # __fp_h<F>_<function>
    frame: int
    jitfn: Any  # the user's helper (JITFunction or InterpretedFunction)
    text: str
    returns_value: bool
    kernel_name: str = ""  # for the twin cache file name (write_twin_file)
    path: str = ""
    fn: Any = None
    jit: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


def is_jit(obj: Any) -> bool:
    fn = getattr(obj, "fn", None)
    return fn is not None and hasattr(fn, "__code__") and hasattr(obj, "run")


def user_helper(obj: Any) -> Any | None:
    """`obj` if it is a user's @triton.jit function (not Triton's own, not FlagPrism's), else None."""
    if obj is None or not is_jit(obj):
        return None
    mod = getattr(obj.fn, "__module__", "") or ""
    if (
        mod == "triton"
        or mod.startswith("triton.")
        or mod == "flagprism"
        or mod.startswith("flagprism.")
    ):
        return None
    if getattr(obj, "_fp_twin", False):
        return None
    return obj


def returns_value(fdef: ast.FunctionDef) -> bool:
    """Does the function return a value anywhere (outside nested functions)?"""
    for node in _walk_own(fdef):
        if isinstance(node, ast.Return) and node.value is not None:
            return True
    return False


def _walk_own(fdef: ast.FunctionDef):
    """The nodes of a function's body, not descending into nested functions or classes."""
    todo: list[ast.AST] = list(fdef.body)
    while todo:
        n = todo.pop()
        yield n
        for c in ast.iter_child_nodes(n):
            if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                todo.append(c)


def bind_call(fdef: ast.FunctionDef, call: ast.Call) -> dict[str, ast.AST] | None:
    """Helper parameter -> argument node of `call`, or None when the call cannot be bound
    statically (*args, **kwargs, an unknown keyword, too many arguments)."""
    params = [a.arg for a in fdef.args.posonlyargs + fdef.args.args]
    out: dict[str, ast.AST] = {}
    if fdef.args.vararg or fdef.args.kwarg:
        return None
    for i, a in enumerate(call.args):
        if isinstance(a, ast.Starred) or i >= len(params):
            return None
        out[params[i]] = a
    kwonly = [a.arg for a in fdef.args.kwonlyargs]
    for kw in call.keywords:
        if kw.arg is None or (kw.arg not in params and kw.arg not in kwonly) or kw.arg in out:
            return None
        out[kw.arg] = kw.value
    return out


def twin_helper_call(
    hoister: _Hoister, call: ast.Call, helper: Any, orig_call: ast.Call
) -> ast.AST:
    """Replace a helper call inside the statement the hoister works on: build (or fail to build)
    the helper's twin for this call site and emit the call of the twin before the statement.
    Returns the expression that takes the call's place. `orig_call` is the call as the user wrote
    it (before the hoister replaced parts of its arguments)."""
    from flagprism import _rewrite, _rwbase

    rw = hoister.rw
    shared = rw.shared
    why = None
    fdef = None
    src = None
    try:
        src = _rwbase.Source(helper.fn)
        fdef = src.parse_function()
    except _rewrite.RewriteError as e:
        why = str(e)
    binding = bind_call(fdef, orig_call) if fdef is not None else None
    if why is None and binding is None:
        why = "its arguments cannot be bound to its parameters statically (*args, **kwargs)"
    if why is None and rw.depth + 1 > MAX_DEPTH:
        why = f"helpers nested more than {MAX_DEPTH} deep"
    if why is None and len(shared.frames) >= MAX_FRAMES:
        why = f"more than {MAX_FRAMES} helper call sites in one kernel"
    if why is None and _calls_itself(rw, helper):
        why = "a recursive call"
    if why is not None:
        rw._unobserved_helper(
            hoister,
            helper,
            fdef,
            src,
            f"helper {getattr(helper.fn, '__name__', '?')} is not observed: {why}",
        )
        return call
    assert fdef is not None and src is not None and binding is not None
    fid = len(shared.frames) + 1
    name = f"__fp_h{fid}_{fdef.name}"
    st = hoister.orig
    caller_names = {p: a.id for p, a in binding.items() if isinstance(a, ast.Name)}
    frame = Frame(
        id=fid,
        function=fdef.name,
        file=src.file,
        parent=rw.frame,
        call_file=rw.src.file,
        call_line=rw.src.abs_line(st.lineno),
        call_col=rw.src.col(st),
        call_source=rw.src.segment(st),
        args={p: n for p, n in caller_names.items()},
        arg_exprs={p: ast.unparse(a) for p, a in binding.items()},
    )
    shared.frames.append(frame)
    # shadows of block pointers / descriptors handed to the helper (_memforms.py): param -> (kind, var)
    shadows = {
        p: rw.forms.param_shadow(caller_names[p])
        for p in caller_names
        if rw.forms.param_shadow(caller_names[p]) is not None
    }
    from flagprism._rewrite import _HelperRewriter

    try:
        sub = _HelperRewriter(
            helper, rw, frame, fdef, src, binding, shadows, hoister.loops, hoister.statement_depth()
        ).run_helper()
    except _rewrite.RewriteError as e:
        shared.frames.pop()
        rw._unobserved_helper(
            hoister, helper, fdef, src, f"helper {fdef.name} is not observed: {e}"
        )
        return call
    shared.subtwins.append(sub)
    # the call of the twin: the user's arguments as the hoister left them, then the context
    new = copy.copy(call)
    new.func = ast.Name(id=name, ctx=ast.Load())
    new.keywords = list(call.keywords) + [
        ast.keyword(arg=p, value=ast.Name(id=p, ctx=ast.Load())) for p in CTX_PARAMS
    ]
    for p, (_kind, sh) in shadows.items():
        new.keywords.append(ast.keyword(arg=f"__fp_s_{p}", value=ast.Name(id=sh, ctx=ast.Load())))
    text = ast.unparse(new)
    if sub.returns_value:
        t = f"__fpu_h{rw.ntemps}"
        rw.ntemps += 1
        hoister.pre.append(f"{t}, __fp_n = {text}")
        return ast.Name(id=t, ctx=ast.Load())
    hoister.pre.append(f"__fp_n = {text}")
    return ast.Constant(value=None)


def twin_def_line(fdef: ast.FunctionDef, name: str, shadows: list[str]) -> str:
    """The `def` line of a helper twin: the helper's parameters (annotations kept: constexpr
    parameters stay constexpr), then the record context and the shadow parameters, with defaults
    where the helper's last parameters have some."""
    header_fn = ast.FunctionDef(
        name=name,
        args=copy.deepcopy(fdef.args),
        body=[ast.Pass()],
        decorator_list=[],
        returns=None,
        type_comment=None,
    )
    if hasattr(ast, "TypeAlias"):
        header_fn.type_params = []  # type: ignore[attr-defined]
    args = header_fn.args
    need_default = bool(args.defaults)
    for p in list(CTX_PARAMS) + [f"__fp_s_{s}" for s in shadows]:
        args.args.append(ast.arg(arg=p))
        if need_default:
            args.defaults.append(ast.Constant(None))
    return ast.unparse(
        ast.fix_missing_locations(ast.Module(body=[header_fn], type_ignores=[]))
    ).split("\n")[0]


def load_subtwins(subtwins: list[SubTwin], helpers: dict[str, Any]) -> dict[str, Any]:
    """Store and exec every helper twin (callees before callers: the order they were finished
    in) in its helper's own globals, plus the record helpers and the twins built before it;
    wrap each like its helper. Returns name -> twin for the kernel twin's scope."""
    from flagprism._rewrite import jit_options, write_twin_file

    built: dict[str, Any] = {}
    for sub in subtwins:
        sub.path = write_twin_file(sub)
        fn = sub.jitfn.fn
        scope = dict(fn.__globals__)
        try:
            scope.update(inspect.getclosurevars(fn).nonlocals)
        except (TypeError, ValueError):
            pass
        scope.update(helpers)
        scope.update(built)
        code = compile(sub.text, sub.path, "exec")
        ns: dict[str, Any] = {}
        exec(code, scope, ns)  # noqa: S102 - our own rewrite of the user's helper
        sub.fn = ns[sub.name]
        opts = jit_options(sub.jitfn)
        sub.jit = type(sub.jitfn)(sub.fn, **opts)
        sub.jit._fp_twin = True
        built[sub.name] = sub.jit
    return built


def _calls_itself(rw: Any, helper: Any) -> bool:
    """Whether `helper` is the function `rw` rewrites or one of those calling it (the kernel and
    the helpers between): a call of it would recurse."""
    r = rw
    while r is not None:
        if r.jitfn is helper:
            return True
        r = getattr(r, "parent_rw", None)
    return False
