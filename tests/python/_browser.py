# SPDX-License-Identifier: Apache-2.0
"""A headless Chromium driven through the DevTools protocol over a pipe (--remote-debugging-pipe:
commands on fd 3, replies on fd 4, NUL-separated JSON), with nothing but the standard library.
Used by the HTML report's tests (tests/python/test_report_page.py) and its benchmark
(bench/bench_report.py): load a page, collect console errors, exceptions and network requests,
evaluate JavaScript, click, take screenshots, and decode the PNG to check it is not blank.
Not a general browser automation library."""

from __future__ import annotations

import base64
import json
import os
import queue
import shutil
import struct
import subprocess
import tempfile
import threading
import time
import zlib
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """The browser: $FP_CHROMIUM, else the first of CANDIDATES on PATH."""
    env = os.environ.get("FP_CHROMIUM")
    if env:
        return env if shutil.which(env) else None
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserError(RuntimeError):
    pass


class Browser:
    """One browser process with one page (tab). Use as a context manager."""

    def __init__(
        self, exe: str | None = None, width: int = 1280, height: int = 900, timeout: float = 60
    ):
        exe = exe or find_chromium()
        if not exe:
            raise BrowserError("no Chromium found (install Debian's chromium, or set FP_CHROMIUM)")
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="fp-chromium-")
        to_r, self._to_w = os.pipe()  # we write commands, the browser reads them on fd 3
        self._from_r, from_w = os.pipe()  # the browser writes replies on fd 4

        def child_fds() -> None:
            a, b = os.dup(to_r), os.dup(from_w)  # above 4, so dup2 below never clobbers them
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--remote-debugging-pipe",
            f"--user-data-dir={self._profile}",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-sync",
            "--disable-component-update",
            "--disable-default-apps",
            "--mute-audio",
            "--hide-scrollbars",
            "--allow-file-access-from-files",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        self.proc = subprocess.Popen(
            args,
            preexec_fn=child_fds,
            close_fds=False,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_r)
        os.close(from_w)
        self._q: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._id = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.call(domain + ".enable", session=True)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=True,
        )

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                data = os.read(self._from_r, 1 << 20)
            except OSError:
                data = b""
            if not data:
                self._q.put(None)
                return
            buf += data
            while b"\0" in buf:
                msg, buf = buf.split(b"\0", 1)
                self._q.put(json.loads(msg))

    def _next(self, deadline: float) -> dict[str, Any]:
        left = deadline - time.monotonic()
        if left <= 0:
            raise BrowserError("the browser did not answer in time")
        try:
            msg = self._q.get(timeout=left)
        except queue.Empty:
            raise BrowserError("the browser did not answer in time") from None
        if msg is None:
            raise BrowserError(f"the browser exited (status {self.proc.poll()})")
        return msg

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session: bool = False,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            m = self._next(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise BrowserError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def drain(self) -> None:
        while True:
            try:
                m = self._q.get_nowait()
            except queue.Empty:
                return
            if m is not None:
                self.events.append(m)

    # ---- pages --------------------------------------------------------------------------------

    def open(
        self,
        path: Path | str,
        ready: str = "document.documentElement.dataset.fpReady === '1'",
        timeout: float | None = None,
    ) -> float:
        """Navigate to a file and wait until `ready` is true; returns the seconds from the
        navigation command to a reply of the page's main thread after it is ready (the page is
        interactive then). Clears the collected events first."""
        self.drain()
        self.events.clear()
        url = Path(path).resolve().as_uri()
        t0 = time.monotonic()
        self.call("Page.navigate", {"url": url}, session=True)
        deadline = t0 + (timeout or self.timeout)
        while True:
            r = self.call(
                "Runtime.evaluate",
                {"expression": f"!!({ready})", "returnByValue": True},
                session=True,
            )
            if r.get("result", {}).get("value") is True:
                break
            if time.monotonic() > deadline:
                raise BrowserError(f"{url} did not become ready in time")
            time.sleep(0.02)
        return time.monotonic() - t0

    def eval(self, expr: str, timeout: float | None = None) -> Any:
        r = self.call(
            "Runtime.evaluate",
            {"expression": expr, "returnByValue": True, "awaitPromise": True},
            session=True,
            timeout=timeout,
        )
        if "exceptionDetails" in r:
            raise BrowserError(
                f"{expr}: {r['exceptionDetails'].get('exception', {}).get('description')}"
            )
        return r.get("result", {}).get("value")

    def screenshot(self, full_page: bool = False) -> bytes:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
            size = self.eval(
                "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
            )
            params["clip"] = {
                "x": 0,
                "y": 0,
                "width": size[0],
                "height": min(size[1], 6000),
                "scale": 1,
            }
        return base64.b64decode(self.call("Page.captureScreenshot", params, session=True)["data"])

    def console_errors(self) -> list[str]:
        """Exceptions, console.error/assert calls and error log entries since the last open()."""
        self.drain()
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append(
                    "exception: " + str(d.get("exception", {}).get("description") or d.get("text"))
                )
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(
                    "console."
                    + p["type"]
                    + ": "
                    + " ".join(str(a.get("value", a.get("description"))) for a in p.get("args", []))
                )
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: " + p["entry"].get("text", ""))
        return out

    def requests(self) -> list[str]:
        """URLs of every network request the page made since the last open() (the page itself
        included)."""
        self.drain()
        return [
            e["params"]["request"]["url"]
            for e in self.events
            if e.get("method") == "Network.requestWillBeSent"
        ]

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                self.call("Browser.close", timeout=10)
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_w, self._from_r):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# ---- PNG -----------------------------------------------------------------------------------------


def png_pixels(data: bytes) -> tuple[int, int, int, bytes]:
    """Decode an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium's screenshots are):
    (width, height, channels, raw pixel bytes row by row)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError(
                    f"unsupported PNG (depth {depth}, colour type {ctype}, interlace {interlace})"
                )
            ch = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = width * ch
    out = bytearray(stride * height)
    prev = bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        if f == 1:
            for i in range(ch, stride):
                line[i] = (line[i] + line[i - ch]) & 255
        elif f == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif f == 3:
            for i in range(stride):
                left = line[i - ch] if i >= ch else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - ch] if i >= ch else 0
                b = prev[i]
                c = prev[i - ch] if i >= ch else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        out[y * stride : (y + 1) * stride] = line
        prev = line
    return width, height, ch, bytes(out)


def png_colours(data: bytes, step: int = 7) -> int:
    """Distinct colours among every `step`-th pixel of a PNG: 1 for a blank page."""
    width, height, ch, px = png_pixels(data)
    seen = set()
    for i in range(0, width * height, step):
        seen.add(px[i * ch : i * ch + 3])
    return len(seen)
