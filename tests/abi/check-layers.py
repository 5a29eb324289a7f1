#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Check that libflagprism's folders depend on each other only as docs/architecture.md draws.

Each folder of ``src/`` is a layer. From the library's object files (``nm``: the symbols each
object defines and the ones it needs) this builds the graph "folder A calls folder B" and fails
when an edge is not in ``LAYERS`` below, or when the graph has a cycle. It also reads the
sources of ``src/backend/`` (its vendor folders included) and the headers a backend sees: a
vendor adapter delivers through the sink (``<flagprism/sink.h>``) and never includes the
profiler's headers (``<flagprism/prof.h>``, ``<flagprism/calltree.h>``, ``"prof/..."``) nor names
``fp_prof_*``, ``fp__prof_*`` or ``fp_calltree_*`` outside comments. ``--graph`` prints the
graph the objects show.

A vendor folder (``src/backend/<vendor>/``: ``cuda/``, ``host/``) is reached by the rest of the
library only through its row of the vendor table: no object outside the folder needs a symbol it
defines other than ``fp__vendor_<vendor>``, and no source outside it includes its headers. Its
public API (``include/flagprism/cupti.h``...) is for clients, not for the library's other
folders.

A test of the build (run by ctest, tests/abi/CMakeLists.txt); not a tool for users. ``--selftest``
checks the cycle finder and the source scanner on small inputs.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import subprocess
import sys

# folder -> the folders it may call. Keep in step with docs/architecture.md ("Layers").
LAYERS: dict[str, set[str]] = {
    "core": set(),
    "ir": {"core"},
    "backend": {"core", "ir"},
    "prof": {"core", "backend"},
    "debug": {"core", "ir", "backend"},
    "view": {"core", "prof"},
    "html": {"core", "prof", "view"},
}

# Objects built outside src/ that belong to a layer (the HTML page compiled into the library).
GENERATED = {"html-assets.c": "html"}

# What a backend may not include or name (outside comments).
BACKEND_INCLUDES = re.compile(
    r'#\s*include\s*[<"](?:flagprism/prof\.h|flagprism/calltree\.h|'
    r'prof/[^>"]*)[>"]'
)
BACKEND_NAMES = re.compile(
    r"\b(fp_prof_\w+|fp__prof_\w+|fp_calltree_\w+|FP_PROF_\w+|"
    r"FP_CALLTREE_\w+)\b"
)
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def vendor_of(obj: pathlib.Path) -> str | None:
    """The vendor folder an object file was compiled from (src/backend/<vendor>/), or None."""
    parts = obj.parts
    if "src" in parts:
        i = len(parts) - 1 - parts[::-1].index("src")
        if i + 3 < len(parts) and parts[i + 1] == "backend":
            return parts[i + 2]
    return None


def layer_of(obj: pathlib.Path) -> str | None:
    """The src/ folder an object file was compiled from, or GENERATED's layer."""
    parts = obj.parts
    if "src" in parts:
        i = len(parts) - 1 - parts[::-1].index("src")
        if i + 2 < len(parts):
            return parts[i + 1]
    for stem, layer in GENERATED.items():
        if obj.name.startswith(stem):
            return layer
    return None


def symbols(nm: str, obj: pathlib.Path) -> tuple[set[str], set[str]]:
    """(defined global symbols, undefined symbols) of one object file."""
    out = subprocess.run([nm, str(obj)], capture_output=True, text=True, check=True).stdout
    defined: set[str] = set()
    needed: set[str] = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            needed.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRCVW":
            defined.add(parts[2])
    return defined, needed


def edges(
    nm: str, objects: list[pathlib.Path]
) -> tuple[dict[tuple[str, str], list[str]], list[str]]:
    """Cross-folder calls: (from, to) -> ["file -> symbol", ...]; and objects without a layer."""
    owner: dict[str, tuple[str, str]] = {}
    needs: list[tuple[str, str, set[str]]] = []
    unknown: list[str] = []
    for obj in objects:
        layer = layer_of(obj)
        if layer is None:
            unknown.append(str(obj))
            continue
        defined, needed = symbols(nm, obj)
        for s in defined:
            owner[s] = (layer, obj.name)
        needs.append((layer, obj.name, needed))
    out: dict[tuple[str, str], list[str]] = {}
    for layer, name, needed in needs:
        for s in sorted(needed):
            if s in owner and owner[s][0] != layer:
                out.setdefault((layer, owner[s][0]), []).append(f"{name} -> {s}")
    return out, unknown


def vendor_violations(nm: str, objects: list[pathlib.Path]) -> list[str]:
    """Objects outside a vendor folder that name what it defines, other than its row."""
    owner: dict[str, str] = {}
    needs: list[tuple[pathlib.Path, set[str]]] = []
    for obj in objects:
        defined, needed = symbols(nm, obj)
        vendor = vendor_of(obj)
        if vendor:
            for s in defined:
                owner[s] = vendor
        needs.append((obj, needed))
    return vendor_calls(owner, [(vendor_of(o), o.name, n) for o, n in needs])


def vendor_calls(owner: dict[str, str], needs: list[tuple[str | None, str, set[str]]]) -> list[str]:
    """owner: symbol -> vendor folder; needs: (the object's vendor or None, its name, symbols)."""
    errors = []
    for vendor, name, needed in needs:
        for s in sorted(needed):
            v = owner.get(s)
            if v and v != vendor and s != f"fp__vendor_{v}":
                errors.append(
                    f"{name} names {s} of src/backend/{v}/: outside its folder a vendor is "
                    f"reached only through its row fp__vendor_{v} (backend-internal.h)"
                )
    return errors


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as a path [a, b, ..., a], or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m) :] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def backend_violations(text: str) -> list[str]:
    """What a backend source may not do: the profiler's includes and names, outside comments."""
    code = _COMMENT.sub(" ", text)
    bad = [m.group(0) for m in BACKEND_INCLUDES.finditer(code)]
    bad += sorted({m.group(1) for m in BACKEND_NAMES.finditer(code)})
    return bad


_VENDOR_INCLUDE = re.compile(r'#\s*include\s*"backend/([^/"]+)/[^"]*"')


def vendor_includes(text: str, own: str | None) -> list[str]:
    """Includes of a vendor folder's headers in a source outside that folder."""
    code = _COMMENT.sub(" ", text)
    return [m.group(0) for m in _VENDOR_INCLUDE.finditer(code) if m.group(1) != own]


def check_sources(root: pathlib.Path) -> list[str]:
    src = root / "src"
    files = sorted((src / "backend").rglob("*.[ch]"))
    files += [root / "include" / "flagprism" / n for n in ("backend.h", "sink.h")]
    files += sorted((root / "include" / "flagprism").glob("cupti*.h"))
    errors = []
    for f in files:
        for what in backend_violations(f.read_text(encoding="utf-8")):
            errors.append(
                f"{f.relative_to(root)}: a backend delivers through the sink; it may not use {what}"
            )
    for f in sorted(src.rglob("*.[ch]")):
        rel = f.relative_to(src).parts
        own = rel[1] if len(rel) > 2 and rel[0] == "backend" else None
        for what in vendor_includes(f.read_text(encoding="utf-8"), own):
            errors.append(
                f"{f.relative_to(root)}: {what}: a vendor folder's headers are its own "
                "(the rest of the library reaches it through its row, backend-internal.h)"
            )
    return errors


def selftest() -> int:
    assert cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
    assert cycle(LAYERS) is None, "the layer table itself has a cycle"
    for deps in LAYERS.values():
        assert deps <= set(LAYERS), "the layer table names an unknown folder"
    assert backend_violations('#include "prof/prof-internal.h"\nint x;') == [
        '#include "prof/prof-internal.h"'
    ]
    assert backend_violations("/* fp_prof_clock_ns() */ s->sink->clock_ns();") == []
    assert backend_violations("x = fp_calltree_child(t);") == ["fp_calltree_child"]
    assert layer_of(pathlib.Path("b/CMakeFiles/o.dir/src/prof/sink.c.o")) == "prof"
    assert layer_of(pathlib.Path("b/o.dir/src/backend/cuda/cupti.c.o")) == "backend"
    assert vendor_of(pathlib.Path("b/o.dir/src/backend/cuda/cupti.c.o")) == "cuda"
    assert vendor_of(pathlib.Path("b/o.dir/src/backend/devmem.c.o")) is None
    assert vendor_of(pathlib.Path("b/o.dir/src/prof/sink.c.o")) is None
    owner = {"fp__vendor_cuda": "cuda", "fp_devmem_cuda_zero": "cuda", "fp__cu_open": "cuda"}
    assert vendor_calls(owner, [(None, "devmem.c.o", {"fp__vendor_cuda"})]) == []
    assert vendor_calls(owner, [("cuda", "devmem.c.o", {"fp__cu_open"})]) == []
    assert len(vendor_calls(owner, [(None, "pipe.c.o", {"fp_devmem_cuda_zero"})])) == 1
    assert vendor_includes('#include "backend/cuda/cuda-internal.h"', None) == [
        '#include "backend/cuda/cuda-internal.h"'
    ]
    assert vendor_includes('#include "backend/cuda/cuda-internal.h"', "cuda") == []
    assert vendor_includes('#include "backend/backend-internal.h"', None) == []
    assert (
        layer_of(pathlib.Path("b/CMakeFiles/o.dir/generated/html-assets.c.o"))
        == GENERATED["html-assets.c"]
    )
    print("check-layers self-test: ok")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--root", type=pathlib.Path, help="the source tree")
    ap.add_argument("--graph", action="store_true", help="print the folder graph")
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("objects", nargs="*", type=pathlib.Path, help="the library's object files")
    args = ap.parse_args()
    if args.selftest:
        return selftest()
    errors: list[str] = []
    if args.root:
        errors += check_sources(args.root)
    found, unknown = edges(args.nm, args.objects)
    errors += vendor_violations(args.nm, args.objects)
    for obj in unknown:
        errors.append(f"{obj}: not compiled from a folder of src/ (add the folder to LAYERS)")
    graph: dict[str, set[str]] = {layer: set() for layer in LAYERS}
    for (a, b), calls in sorted(found.items()):
        graph.setdefault(a, set()).add(b)
        if a not in LAYERS:
            errors.append(f"src/{a}/ is not a known layer (add it to LAYERS and the docs)")
        elif b not in LAYERS[a]:
            errors.append(
                f"src/{a}/ may not call src/{b}/ (docs/architecture.md), but "
                f"{len(calls)} call(s) do: " + "; ".join(calls[:5])
            )
    loop = cycle(graph)
    if loop:
        errors.append("the folders depend on each other in a cycle: " + " -> ".join(loop))
    if args.graph or errors:
        for a in sorted(graph):
            print(f"{a:8s} -> {', '.join(sorted(graph[a])) or '(nothing)'}")
    if not args.objects:
        errors.append("no object files given")
    for e in errors:
        print("check-layers: " + e, file=sys.stderr)
    if not errors:
        print(
            f"check-layers: {len(args.objects)} objects, {len(found)} cross-folder edges, "
            "no cycle, backends deliver through the sink, vendors are reached through their rows"
        )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
