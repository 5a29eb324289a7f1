# SPDX-License-Identifier: Apache-2.0
"""A strict checker for Chrome Trace Event Format files (what Perfetto and chrome://tracing open).

Written from the format's documentation, stricter than the viewers: required keys per phase,
types (integers for pid/tid, finite non-negative numbers for ts/dur), balanced and nested B/E
pairs per thread, strictly nested X slices per (pid, tid) (Perfetto drops partial overlaps),
well-formed metadata (M) events, and no arrays or objects in top-level event fields except
`args` (some Perfetto tokenizers reject them). It does not render anything.

Usage: python trace_event_check.py FILE... (prints the problems, exits 1 if any).
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

PHASES = set("BEXiICMstfbneSTpFPNODVvRc")
METADATA_NAMES = {
    "process_name": "name",
    "process_labels": "labels",
    "process_sort_index": "sort_index",
    "thread_name": "name",
    "thread_sort_index": "sort_index",
}
EPS = 1e-6  # microseconds; ts/dur carry at most nanosecond precision


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) and math.isfinite(v)


def _check_event(i: int, ev: Any, errors: list[str]) -> None:
    where = f"event {i}"
    if not isinstance(ev, dict):
        errors.append(f"{where}: not an object")
        return
    ph = ev.get("ph")
    if not isinstance(ph, str) or len(ph) != 1 or ph not in PHASES:
        errors.append(f"{where}: bad or missing 'ph': {ph!r}")
        return
    where = f"event {i} (ph {ph})"
    for key, value in ev.items():
        if key != "args" and isinstance(value, (list, dict)):
            errors.append(f"{where}: top-level field {key!r} is an array/object")
    if "args" in ev and not isinstance(ev["args"], dict):
        errors.append(f"{where}: 'args' must be an object")
    if "name" in ev and not isinstance(ev["name"], str):
        errors.append(f"{where}: 'name' must be a string")
    if "cat" in ev and not isinstance(ev["cat"], str):
        errors.append(f"{where}: 'cat' must be a string")

    def need(*keys: str) -> None:
        for k in keys:
            if k not in ev:
                errors.append(f"{where}: missing {k!r}")

    if "pid" in ev and not _is_int(ev["pid"]):
        errors.append(f"{where}: 'pid' must be an integer, got {ev['pid']!r}")
    if "tid" in ev and not _is_int(ev["tid"]):
        errors.append(f"{where}: 'tid' must be an integer, got {ev['tid']!r}")
    for k in ("ts", "dur", "tdur", "tts"):
        if k in ev and (not _is_num(ev[k]) or ev[k] < 0):
            errors.append(f"{where}: {k!r} must be a finite number >= 0, got {ev[k]!r}")

    if ph == "X":
        need("name", "ts", "dur", "pid", "tid")
    elif ph == "B":
        need("name", "ts", "pid", "tid")
    elif ph == "E":
        need("ts", "pid", "tid")
    elif ph in "iI":
        need("name", "ts", "pid")
        scope = ev.get("s", "t")
        if scope not in ("g", "p", "t"):
            errors.append(f"{where}: 's' must be g, p or t")
        if scope == "t":
            need("tid")
    elif ph == "C":
        need("name", "ts", "pid", "args")
        for k, v in (ev.get("args") or {}).items():
            if not _is_num(v):
                errors.append(f"{where}: counter series {k!r} is not a number")
    elif ph == "M":
        need("name", "pid", "args")
        name = ev.get("name")
        if name not in METADATA_NAMES:
            errors.append(f"{where}: unknown metadata name {name!r}")
        else:
            if name.startswith("thread_"):
                need("tid")
            arg = (ev.get("args") or {}).get(METADATA_NAMES[name])
            if name.endswith("_name") and not isinstance(arg, str):
                errors.append(f"{where}: args.name must be a string")
            if name.endswith("sort_index") and not _is_int(arg):
                errors.append(f"{where}: args.sort_index must be an integer")
    elif ph in "stf":
        need("name", "id", "ts", "pid", "tid")
        if ph == "f" and "bp" in ev and ev["bp"] != "e":
            errors.append(f"{where}: 'bp' must be \"e\"")
    elif ph in "bne":
        need("name", "cat", "id", "ts", "pid")
    if "id" in ev and not (_is_int(ev["id"]) or isinstance(ev["id"], str)):
        errors.append(f"{where}: 'id' must be an integer or a string")


def _check_nesting(events: list[Any], errors: list[str]) -> None:
    slices: dict[tuple[int, int], list[tuple[float, float, int]]] = {}
    stacks: dict[tuple[int, int], list[tuple[str, float, int]]] = {}
    for i, ev in enumerate(events):
        if not isinstance(ev, dict) or not _is_int(ev.get("pid")) or not _is_int(ev.get("tid")):
            continue
        track = (ev["pid"], ev["tid"])
        ph = ev.get("ph")
        if ph == "X" and _is_num(ev.get("ts")) and _is_num(ev.get("dur")):
            slices.setdefault(track, []).append((ev["ts"], ev["ts"] + ev["dur"], i))
        elif ph == "B" and _is_num(ev.get("ts")):
            stacks.setdefault(track, []).append((str(ev.get("name")), ev["ts"], i))
        elif ph == "E" and _is_num(ev.get("ts")):
            stack = stacks.get(track)
            if not stack:
                errors.append(
                    f"event {i}: 'E' without an open 'B' on pid {track[0]} tid {track[1]}"
                )
                continue
            name, ts, j = stack.pop()
            if "name" in ev and ev["name"] != name:
                errors.append(
                    f"event {i}: 'E' named {ev['name']!r} closes 'B' {name!r} (event {j})"
                )
            if ev["ts"] + EPS < ts:
                errors.append(f"event {i}: 'E' at {ev['ts']} before its 'B' at {ts}")
    for track, stack in stacks.items():
        for name, _ts, j in stack:
            errors.append(f"event {j}: 'B' {name!r} on pid {track[0]} tid {track[1]} never ends")
    for track, spans in slices.items():
        spans.sort(key=lambda s: (s[0], -(s[1] - s[0])))
        open_: list[tuple[float, float, int]] = []
        for begin, end, i in spans:
            while open_ and open_[-1][1] <= begin + EPS:
                open_.pop()
            if open_ and end > open_[-1][1] + EPS:
                errors.append(
                    f"event {i}: slice [{begin}, {end}] partially overlaps event {open_[-1][2]} "
                    f"[{open_[-1][0]}, {open_[-1][1]}] on pid {track[0]} tid {track[1]}"
                )
            open_.append((begin, end, i))


def check_trace(doc: Any) -> list[str]:
    """All problems found in a parsed trace document (empty list: valid)."""
    errors: list[str] = []
    if isinstance(doc, list):
        events = doc
    elif isinstance(doc, dict):
        events = doc.get("traceEvents")
        if not isinstance(events, list):
            return ["top level: 'traceEvents' must be an array"]
        unit = doc.get("displayTimeUnit")
        if unit is not None and unit not in ("ms", "ns"):
            errors.append(f'top level: displayTimeUnit must be "ms" or "ns", got {unit!r}')
        if "otherData" in doc and not isinstance(doc["otherData"], dict):
            errors.append("top level: 'otherData' must be an object")
    else:
        return ["top level: expected an array of events or an object with 'traceEvents'"]
    for i, ev in enumerate(events):
        _check_event(i, ev, errors)
    _check_nesting(events, errors)
    return errors


def check_file(path: str) -> list[str]:
    """Parse `path` strictly (no NaN/Infinity) and check it."""

    def reject(name: str) -> Any:
        raise ValueError(f"non-standard JSON constant {name}")

    with open(path, encoding="utf-8") as f:
        try:
            doc = json.load(f, parse_constant=reject)
        except ValueError as e:
            return [f"{path}: not valid JSON: {e}"]
    return [f"{path}: {e}" for e in check_trace(doc)]


def main(argv: list[str]) -> int:
    bad = 0
    for path in argv:
        errors = check_file(path)
        for e in errors:
            print(e)
        bad += bool(errors)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
