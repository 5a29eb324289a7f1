#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Check the shared libflagprism's dynamic symbols against the public headers.

The exported symbols (``nm -D --defined-only``) must be exactly the functions declared
``FP_EXTERN`` in ``include/flagprism/*.h``: none missing (declared, never defined, or hidden by
mistake) and none extra (an internal function that leaked). Every one must carry the version node
given by ``--symbol-version`` and the library's SONAME must be ``--soname``. The list of names is
read from the headers on every run, so a header moved out of ``include/`` takes its symbols out
of the expected set and the test follows without edits.

A test of the build (run by ctest, tests/abi/CMakeLists.txt); not a tool for users. ``--selftest``
checks the header parser alone on small inputs.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import subprocess
import sys

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_DIRECTIVE = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
# FP_EXTERN, then the return type (no ';', '{' or '('), then the name right before '('.
_DECL = re.compile(r"\bFP_EXTERN\b([^;{(]*?)\b([A-Za-z_]\w*)\s*\(")


def declared(text: str) -> set[str]:
    """Names declared FP_EXTERN in one header's text (comments and directives ignored)."""
    text = _COMMENT.sub(" ", text)
    text = _DIRECTIVE.sub(" ", text)
    return {m.group(2) for m in _DECL.finditer(text)}


def declared_in(include: pathlib.Path) -> dict[str, str]:
    """name -> header (relative to include/) for every public header."""
    out: dict[str, str] = {}
    for h in sorted(include.rglob("*.h")):
        for name in declared(h.read_text(encoding="utf-8")):
            out[name] = str(h.relative_to(include))
    return out


def exported(nm: str, lib: str, node: str) -> dict[str, str]:
    """name -> version node ('' when unversioned) of the library's defined dynamic symbols,
    leaving out the absolute symbol that names the version node `node` itself (binutils print
    it as `NODE` or `NODE@@NODE`)."""
    # GNU nm needs --with-symbol-versions before binutils 2.37 and accepts it after; llvm-nm
    # prints versions with -D and rejects the option.
    proc = subprocess.run(
        [nm, "-D", "--defined-only", "--with-symbol-versions", lib], capture_output=True, text=True
    )
    if proc.returncode != 0:
        proc = subprocess.run(
            [nm, "-D", "--defined-only", lib], capture_output=True, text=True, check=True
        )
    out: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        kind, sym = parts[1], parts[2]
        name, _, version = sym.partition("@")
        version = version.lstrip("@")
        if kind == "A" and name == node and version in ("", node):
            continue
        out[name] = version
    return out


def soname(readelf: str, lib: str) -> str | None:
    proc = subprocess.run([readelf, "-d", lib], capture_output=True, text=True, check=True)
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", proc.stdout)
    return m.group(1) if m else None


def selftest() -> int:
    text = """
/* FP_EXTERN int fp_commented(void); */
#define FP_EXTERN __attribute__((visibility("default")))
// FP_EXTERN int fp_line_comment(void);
FP_EXTERN const char *fp_one(int status);
FP_EXTERN int fp_two(struct fp_diag *diag, int status,
		     const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
FP_EXTERN enum fp_metric_kind
fp_three(const char *name, size_t len);
struct fp_x { int (*cb)(void); };
"""
    got = declared(text)
    want = {"fp_one", "fp_two", "fp_three"}
    if got != want:
        print(f"header parser: got {sorted(got)}, want {sorted(want)}")
        return 1
    print(f"header parser: {len(want)} declarations found, as expected")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--readelf", default="readelf")
    ap.add_argument("--library")
    ap.add_argument("--include", type=pathlib.Path)
    ap.add_argument("--symbol-version")
    ap.add_argument("--soname")
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()
    if a.selftest:
        return selftest()
    if not (a.library and a.include and a.symbol_version):
        ap.error("--library, --include and --symbol-version are needed")

    want = declared_in(a.include)
    have = exported(a.nm, a.library, a.symbol_version)
    bad = 0
    missing = sorted(set(want) - set(have))
    extra = sorted(set(have) - set(want))
    for name in missing:
        print(f"missing: {name} (FP_EXTERN in {want[name]}) is not exported by {a.library}")
    for name in extra:
        print(f"extra: {name} is exported but declared FP_EXTERN in no header of {a.include}")
    wrong = sorted(n for n in set(have) & set(want) if have[n] != a.symbol_version)
    for name in wrong:
        print(f"version: {name} has version '{have[name] or '(none)'}', want {a.symbol_version}")
    bad = len(missing) + len(extra) + len(wrong)
    if a.soname:
        got = soname(a.readelf, a.library)
        if got != a.soname:
            print(f"soname: {got!r}, want {a.soname!r}")
            bad += 1
    if not want:
        print(f"no FP_EXTERN declaration found under {a.include}")
        bad += 1
    print(f"{len(want)} FP_EXTERN declarations, {len(have)} exported symbols, {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
