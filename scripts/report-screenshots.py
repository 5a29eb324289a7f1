#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Make the README's screenshots of the two HTML report pages from the quickstart's outputs:
docs/img/report-debugger.png (fp_quickstart/debug/report.html, a statement selected) and
docs/img/report-profile.png (fp_quickstart/profile.html). Run examples/quickstart.py first (it
writes both pages). Needs Chromium (tests/python/_browser.py drives it). A maintainer's tool,
not part of the tests.

    python scripts/report-screenshots.py [--quickstart fp_quickstart] [--out docs/img]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

import _browser  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quickstart", default="fp_quickstart")
    ap.add_argument("--out", default=str(REPO / "docs" / "img"))
    args = ap.parse_args()
    qs, out = Path(args.quickstart), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with _browser.Browser(width=1280, height=860) as b:
        b.open(qs / "debug" / "report.html")
        # the statement whose heatmap tells most: the load with its masked lanes
        b.eval(
            "[...document.querySelectorAll('#fp-source .fp-line.fp-stmt')].find(l =>"
            " l.textContent.includes('tl.load')).click()"
        )
        b.eval("window.scrollTo(0, document.getElementById('fp-launch').offsetTop - 8)")
        (out / "report-debugger.png").write_bytes(b.screenshot())
        errors = b.console_errors()
        b.open(qs / "profile.html")
        (out / "report-profile.png").write_bytes(b.screenshot(full_page=True))
        errors += b.console_errors()
    if errors:
        print("console errors: " + "; ".join(errors), file=sys.stderr)
        return 1
    print(f"wrote {out / 'report-debugger.png'} and {out / 'report-profile.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
