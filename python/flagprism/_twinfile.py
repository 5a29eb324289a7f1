# SPDX-License-Identifier: Apache-2.0
"""A twin's life outside the rewriter, for the Debugger's twins and the timelines' alike: its
`def` line (the kernel's parameters plus the record buffer), the content-addressed file its text
is stored in (so tracebacks and IR locations name a real file at the user's line numbers), and
loading it: exec in the kernel's globals and closure, then wrapped like the original, with the
original's options and pre-run hooks. Not here: what the twin's body says (``_rewrite.py``,
``_timeline.py``).
"""

from __future__ import annotations

import ast
import copy
import hashlib
import inspect
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flagprism import _files, compat
from flagprism._rwbase import CTX, RewriteError


def lead_of(line: str) -> str:
    """The white space a line starts with."""
    return line[: len(line) - len(line.lstrip())]


def twin_header(fdef: ast.FunctionDef, desc_params: list[str] | None = None) -> str:
    """The twin's `def` line: the kernel's parameters and the context parameter CTX (with a
    default where the kernel's last parameters have some), then one `__fp_db_<p>` parameter (the
    base address) per parameter passed a host TensorDescriptor (_memforms.py), default None."""
    header_fn = ast.FunctionDef(
        name=fdef.name,
        args=copy.deepcopy(fdef.args),
        body=[ast.Pass()],
        decorator_list=[],
        returns=fdef.returns,
        type_comment=None,
    )
    if hasattr(ast, "TypeAlias"):
        header_fn.type_params = []  # type: ignore[attr-defined]
    args = header_fn.args
    args.args.append(ast.arg(arg=CTX))
    if args.defaults:
        args.defaults.append(ast.Constant(None))
    for p in desc_params or []:
        args.args.append(ast.arg(arg=f"__fp_db_{p}"))
        args.defaults.append(ast.Constant(None))
    return ast.unparse(
        ast.fix_missing_locations(ast.Module(body=[header_fn], type_ignores=[]))
    ).split("\n")[0]


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


_fallback_dir: str | None = None  # the private fallback, made once per process


def _fallback() -> Path:
    """Where twins go when the cache directory cannot be used: ``$TMPDIR/flagprism-twins-<uid>``
    when it is this user's own and private (its owner and mode are checked, and it must not be
    a link: Triton later reads kernel source from it), else a fresh private directory."""
    global _fallback_dir
    if _fallback_dir is None or not _files.is_private_dir(_fallback_dir):
        shared = Path(tempfile.gettempdir()) / f"flagprism-twins-{os.geteuid()}"
        _fallback_dir = _files.private_dir(shared, prefix=f"flagprism-twins-{os.geteuid()}-")
    return Path(_fallback_dir)


def _same_text(path: Path, text: str) -> bool:
    """Whether `path` is a regular file holding `text` (a FIFO there is not waited on)."""
    try:
        return _files.read_regular(path) == text
    except (OSError, ValueError):
        return False


def write_twin_file(twin: Any) -> str:
    """Store the twin's text in a content-addressed file inside the cache directory and return
    its path. The file name is a sanitized, length-capped form of the kernel's name plus the
    text's digest; a temporary file that cannot be renamed into place is removed."""
    digest = hashlib.sha256(twin.text.encode("utf-8")).hexdigest()[:32]
    name = f"{file_stem(twin.kernel_name)}-{digest}.py"
    errors: list[str] = []
    for i in range(2):
        tmp = None
        d = twin_cache_dir()
        try:
            if i == 0:
                d.mkdir(parents=True, exist_ok=True)
            else:
                d = _fallback()
            path = d / name
            if not _same_text(path, twin.text):
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
    raise RewriteError(
        f"cannot write the twin of {file_stem(twin.kernel_name)} to a cache directory "
        f"({'; '.join(errors)})"
    )


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
        from flagprism import _calltwins

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
