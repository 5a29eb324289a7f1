# SPDX-License-Identifier: Apache-2.0
"""In-kernel markers of FlagPrism (``import flagprism.language as fpl``).

``fpl.collect_start()`` and ``fpl.collect_end()`` delimit the statements of a ``@triton.jit``
kernel that the Debugger observes. On their own they are ordinary ``@triton.jit`` functions with
an empty body: they compile to nothing, on every backend and on the interpreter, so a kernel with
markers launches exactly as it would without them while the Debugger is inactive. While it is
active, ``flagprism.debugger`` rewrites the kernel into an instrumented twin and reads the markers
from the source; their arguments must then be literal constants.

This module is also where in-kernel profiler scopes will live; it holds nothing else.
"""

from __future__ import annotations

import triton
import triton.language as tl

__all__ = ["collect_start", "collect_end"]


@triton.jit
def collect_start(level: tl.constexpr = None, addr_level: tl.constexpr = None):
    """Open a collection region. ``level`` (0-2) and ``addr_level`` (0-2), if given as literal
    constants, override the levels of ``debugger.activate()`` for this region."""
    pass


@triton.jit
def collect_end():
    """Close the collection region opened by the ``collect_start()`` of the same block."""
    pass
