# SPDX-License-Identifier: Apache-2.0
"""Every relative link in README.md, CONTRIBUTING.md and docs/ leads somewhere: the file exists,
and a #fragment into a Markdown file names one of its headings (as GitHub makes anchors). Code
blocks and inline code are not links."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.S | re.M)
INLINE = re.compile(r"`[^`\n]*`")


def _pages() -> list[Path]:
    return [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").rglob("*.md"))]


def _prose(text: str) -> str:
    return INLINE.sub("", FENCE.sub("", text))


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, inline markup and punctuation other than '-'
    and '_' dropped, spaces made '-'."""
    s = re.sub(r"[`*]", "", heading.strip().lower())
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in FENCE.sub("", page.read_text()).splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = _slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def _links() -> list[tuple[str, str]]:
    out = []
    for page in _pages():
        for m in LINK.finditer(_prose(page.read_text())):
            target = m.group(1) or m.group(2)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            out.append((str(page.relative_to(REPO)), target))
    return out


def test_pages_have_links() -> None:
    links = _links()
    assert len(links) > 100  # the scan finds the links (a broken pattern would pass everything)
    assert ("docs/README.md", "guide/debugger.md") in links


@pytest.mark.parametrize("page", [str(p.relative_to(REPO)) for p in _pages()])
def test_relative_links_resolve(page: str) -> None:
    src = REPO / page
    bad = []
    for where, target in _links():
        if where != page:
            continue
        path, _, frag = target.partition("#")
        dest = (src.parent / path).resolve() if path else src
        if not dest.exists():
            bad.append(f"{target}: no such file")
        elif frag and dest.suffix == ".md" and frag not in _anchors(dest):
            bad.append(f"{target}: no heading with anchor #{frag} in {dest.relative_to(REPO)}")
    assert not bad, f"{page}: " + "; ".join(bad)


def test_slug_matches_github() -> None:
    assert _slug('PC sampling (`mode="pcsampling"`)') == "pc-sampling-modepcsampling"
    assert _slug("Check mode (and sanitize mode)") == "check-mode-and-sanitize-mode"
    assert _slug("Hardware metrics (`metrics=`)") == "hardware-metrics-metrics"
