# SPDX-License-Identifier: Apache-2.0
"""In-kernel markers of FlagPrism (``import flagprism.language as fpl``).

``fpl.collect_start()`` and ``fpl.collect_end()`` delimit the statements of a ``@triton.jit``
kernel that the Debugger observes. On their own they are ordinary ``@triton.jit`` functions with
an empty body: they compile to nothing, on every backend and on the interpreter, so a kernel with
markers launches exactly as it would without them while the Debugger is inactive. While it is
active, ``flagprism.debugger`` rewrites the kernel into an instrumented twin and reads the markers
from the source; their arguments must then be literal constants.

``with fpl.scope("name"):`` and ``fpl.enter_scope("name")`` / ``fpl.exit_scope("name")`` mark
intra-kernel profiler scopes (docs/guide/intra-kernel.md). They are Triton builtins that do nothing:
Triton does not hash builtins into a kernel's cache key and emits no IR for them, so a kernel
with scopes compiles and launches exactly as it would without them. While a profiling session
with instrumentation is open, ``flagprism._timeline`` reads them from the source and launches
an instrumented twin that records each program's enter and exit times; their names must then
be string literals.
"""

from __future__ import annotations

import triton
import triton.language as tl

__all__ = ["collect_start", "collect_end", "scope", "enter_scope", "exit_scope"]


@triton.jit
def collect_start(level: tl.constexpr = None, addr_level: tl.constexpr = None):
    """Open a collection region. ``level`` (0-2) and ``addr_level`` (0-2), if given as literal
    constants, override the levels of ``debugger.activate()`` for this region."""
    pass


@triton.jit
def collect_end():
    """Close the collection region opened by the ``collect_start()`` of the same block."""
    pass


class scope:
    """``with fpl.scope("load_tiles"): ...`` inside a ``@triton.jit`` kernel: an intra-kernel
    profiler scope around the block (a no-op unless a session with instrumentation is open)."""

    __triton_builtin__ = True

    def __init__(self, name, _semantic=None, _generator=None):
        self.name = name

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def enter_scope(name, _semantic=None, _generator=None):
    """Open intra-kernel scope ``name`` (closed by ``exit_scope(name)`` in the same block)."""
    return None


def exit_scope(name, _semantic=None, _generator=None):
    """Close intra-kernel scope ``name``, the innermost one open."""
    return None


enter_scope.__triton_builtin__ = True  # type: ignore[attr-defined]
exit_scope.__triton_builtin__ = True  # type: ignore[attr-defined]
