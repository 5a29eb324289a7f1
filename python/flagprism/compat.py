# SPDX-License-Identifier: Apache-2.0
"""Known-bad combinations of Triton, NumPy, PyTorch and Python, for Python code.

The table lives in the C library (``include/flagprism/compat.h``, one row per combination, read
by ``flagprism doctor`` too); this module finds the installed versions and asks the library which
rows apply::

    import flagprism.compat as compat
    for issue in compat.known_issues(mode="interpreter"):
        print(issue.message())

The test suite marks tests with ``@pytest.mark.compat("runtime-loops")`` and skips them, with the
row's words as the reason, where a row for that feature applies (tests/python/conftest.py).
Nothing here changes any setting or installs anything.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
from dataclasses import dataclass

from flagprism import _ext

#: Distribution names that provide a component, first match wins.
_DISTRIBUTIONS = {
    "triton": ("triton", "pytorch-triton", "pytorch-triton-rocm", "triton-nightly"),
    "torch": ("torch",),
    "numpy": ("numpy",),
}

_TRUTHY = {"1", "true", "yes", "on", "y"}


@dataclass(frozen=True)
class Issue:
    """One row of the table: see include/flagprism/compat.h for the fields."""

    id: str
    modes: tuple[str, ...]
    when: tuple[tuple[str, str | None, str | None], ...]
    feature: str
    breaks: str
    workaround: str

    def message(self, versions: dict[str, str | None] | None = None) -> str:
        """One line for people: what breaks, with the installed versions, and what to do."""
        found = versions if versions is not None else installed_versions()
        have = ", ".join(f"{c} {found.get(c) or '?'}" for c, _, _ in self.when)
        return f"{self.breaks} (installed: {have}); {self.workaround} [{self.id}]"


def _issue(d: dict) -> Issue:
    return Issue(
        id=d["id"],
        modes=tuple(d["modes"]),
        when=tuple(tuple(w) for w in d["when"]),
        feature=d["feature"],
        breaks=d["breaks"],
        workaround=d["workaround"],
    )


def issues() -> list[Issue]:
    """Every row of the table, in its order."""
    return [_issue(d) for d in _ext.compat_issues()]


def _version_of(component: str) -> str | None:
    if component == "python":
        return ".".join(str(p) for p in sys.version_info[:3])
    mod = sys.modules.get(component)
    v = getattr(mod, "__version__", None) if mod is not None else None
    if isinstance(v, str):
        return v
    for dist in _DISTRIBUTIONS.get(component, (component,)):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def installed_versions() -> dict[str, str | None]:
    """The installed version (or None) of every component the table names."""
    names = {c for d in _ext.compat_issues() for c, _, _ in d["when"]}
    return {c: _version_of(c) for c in sorted(names)}


def current_mode() -> str:
    """'interpreter' when TRITON_INTERPRET is set to a true value, else 'gpu'."""
    return "interpreter" if os.environ.get("TRITON_INTERPRET", "").lower() in _TRUTHY else "gpu"


def known_issues(mode: str | None = None,
                 versions: dict[str, str | None] | None = None) -> list[Issue]:
    """The rows that apply here: to `versions` (default: the installed ones) where kernels run in
    `mode` ('interpreter', 'gpu', 'any'; default: current_mode())."""
    found = versions if versions is not None else installed_versions()
    ids = set(_ext.compat_check(dict(found), mode or current_mode()))
    return [i for i in issues() if i.id in ids]


def skip_reason(feature: str, mode: str | None = None) -> str | None:
    """Why `feature` cannot work here (a row's message), or None when no row stops it."""
    found = installed_versions()
    for issue in known_issues(mode, found):
        if issue.feature == feature:
            return issue.message(found)
    return None


__all__ = ["Issue", "current_mode", "installed_versions", "issues", "known_issues",
           "skip_reason"]
