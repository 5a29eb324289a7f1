# SPDX-License-Identifier: Apache-2.0
"""Block pointers and tensor descriptors in the Debugger's twin (placeholder while it lands)."""

from __future__ import annotations

import ast
from typing import Any


class Forms:
    def __init__(self, rw: Any) -> None:
        self.rw = rw
        self.shadows: dict[str, str] = {}

    def scan(self, fdef: ast.FunctionDef, param_shadows: dict[str, Any]) -> None:
        self.shadows = {}

    def shadow_of(self, name: str) -> str | None:
        return self.shadows.get(name)

    def is_form_name(self, name: str) -> bool:
        return False
