# SPDX-License-Identifier: Apache-2.0
"""FlagPrism: a Debugger and a Profiler for Triton kernels.

The work is done by libflagprism (C); this package is the Python face of it. The exception
classes below are created by the native extension ``flagprism._ext``: every failure reported by
the library arrives as one of them, or as MemoryError, ValueError or OSError, with the attributes
``status``, ``status_name``, ``detail``, ``offset``, ``line`` and ``column``.

PYTEST_DONT_REWRITE: pytest rewrites the asserts of a plugin's package (this one's pytest plugin
is ``flagprism.pytest_plugin``), and warns when the package was imported before it could, which
``flagprism debug ... pytest`` always does (the Debugger is active before pytest starts). The
package asserts nothing a test reads, so there is nothing to rewrite.
"""

from flagprism import _ext
from flagprism._ext import (
    Error,
    FormatError,
    LimitError,
    NotSupportedError,
    OverflowRecordsError,
    VendorError,
)

__version__: str = _ext.version()

# Remember triton.language as Triton made it, before any interpreted launch patches it (Triton
# 3.4/3.5 never put it back): now if Triton is imported, else right after it is (compat.py).
from flagprism import compat as _compat  # noqa: E402

_compat._watch_language()

__all__ = [
    "Error",
    "FormatError",
    "LimitError",
    "NotSupportedError",
    "OverflowRecordsError",
    "VendorError",
    "__version__",
]
