# SPDX-License-Identifier: Apache-2.0
"""TTIR of an interpreted twin, obtained by compiling it for a CUDA target without running it.

The Triton interpreter never builds IR, but the Debugger's op log joins records with TTIR ops.
The compilation itself (a CUDA target without a GPU, TTIR passes only) is shared with the
Profiler's estimates and lives in ``_ttir.py``; this module adds what is the twin's own: its
context-pointer parameter and the record and check helpers it calls. Anything that fails yields
``(None, reason)``; the report then says why the op log is missing. It is not used on GPU
backends, where the launched kernel has its TTIR.
"""

from __future__ import annotations

import types
from typing import Any

from flagprism import _ttir
from flagprism._rewrite import CTX, Twin
from flagprism._ttir import TARGET_ARCH, TARGET_BACKEND, TARGET_WARP  # noqa: F401

_FIXED = {CTX: "*i64"}  # the twin's trailing record-buffer pointer


def signature(twin: Twin, bound: dict[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """(signature, constexprs) of the twin for ASTSource, from the launch's bound arguments."""
    return _ttir.signature(twin.fn, bound, _FIXED)


def signature_key(twin: Twin, bound: dict[str, Any]) -> str:
    return _ttir.signature_key(twin.fn, bound, _FIXED)


class _Converter(_ttir.Converter):
    """The shared converter, plus the record and check helpers the twin calls."""

    def value(self, v: Any) -> Any:
        if isinstance(v, types.FunctionType) and v.__module__ in (
            "flagprism._records",
            "flagprism._checks",
        ):
            # a record or check helper unwrapped for the interpreter (interpreter_helpers)
            import importlib

            jit = getattr(importlib.import_module(v.__module__), v.__name__, None)
            if isinstance(jit, self.IF):
                return self.function(jit)
        return super().value(v)


def interpreter_ttir(twin: Twin, bound: dict[str, Any]) -> tuple[str | None, str | None]:
    """(TTIR text, None) or (None, reason)."""
    return _ttir.interpreter_ttir(twin.fn, bound, _FIXED, what="the twin", converter=_Converter)
