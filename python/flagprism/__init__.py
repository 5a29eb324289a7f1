# SPDX-License-Identifier: Apache-2.0
"""FlagPrism: a Debugger and a Profiler for Triton kernels.

The work is done by libflagprism (C); this package is the Python face of it. The exception
classes below are created by the native extension ``flagprism._ext``: every failure reported by
the library arrives as one of them, or as MemoryError, ValueError or OSError, with the attributes
``status``, ``status_name``, ``detail``, ``offset``, ``line`` and ``column``.
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

__all__ = [
    "Error",
    "FormatError",
    "LimitError",
    "NotSupportedError",
    "OverflowRecordsError",
    "VendorError",
    "__version__",
]
