"""The HTML report in a real browser: headless Chromium loads it, and the test fails on any console
message of level error, uncaught exception, failed or network request, or content wider than the window.

Chromium is driven through the DevTools protocol over ``--remote-debugging-pipe`` (file descriptors 3
and 4, NUL-terminated JSON), so no websocket client or other package is needed. Skipped with a reason
when no ``chromium`` binary is on PATH (Debian: ``apt-get install chromium``).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_report_support import make_run
from conftest import require

require("matplotlib", reason="the HTML report's figures need matplotlib (eatkit[report])")
from eatkit.report import write_html_report

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install chromium)")

WIDTH = 1280
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe", f"--window-size={WIDTH},900", "--hide-scrollbars")
_TRAMPOLINE = (
    "import os, sys; r, w = map(int, sys.argv[1:3]); os.dup2(r, 3); os.dup2(w, 4); os.close(r); os.close(w); "
    "os.execv(sys.argv[3], sys.argv[3:])"
)


class DevTools:
    """A minimal Chrome DevTools Protocol client over Chromium's --remote-debugging-pipe."""

    def __init__(self, user_data_dir: Path, timeout: float = 60.0) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # Chromium reads commands from fd 3 and writes replies to fd 4: move the pipe ends above 9 and let a
        # tiny Python trampoline dup them onto 3 and 4 before it execs chromium (no preexec_fn needed)
        high_r, high_w = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_child_r, from_child_w))
        self.process = subprocess.Popen(
            [sys.executable, "-c", _TRAMPOLINE, str(high_r), str(high_w), CHROMIUM, *FLAGS,
             f"--user-data-dir={user_data_dir}", "about:blank"],
            pass_fds=(high_r, high_w), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        for fd in (to_child_r, from_child_w, high_r, high_w):
            os.close(fd)
        self.timeout = timeout
        self.events: list[dict[str, Any]] = []
        self._buffer = b""
        self._next_id = 0

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_child], [], [], left)[0]:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while True:
            for event in self.events:
                if event.get("method") == method:
                    return event
            self.events.append(self._read_message(deadline))

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_child)
        os.close(self._from_child)


def open_in_chromium(html: Path, screenshot: Path, profile: Path) -> dict[str, Any]:
    """Load ``html``, save a full-page screenshot, and return what the page reported and measured."""
    browser = DevTools(profile)
    try:
        target = browser.send("Target.createTarget", url="about:blank")["targetId"]
        session = browser.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.send(f"{domain}.enable", session)
        browser.send("Page.navigate", session, url=html.resolve().as_uri())
        browser.wait_for("Page.loadEventFired")
        measured = browser.send("Runtime.evaluate", session, returnByValue=True, expression="""({
            scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
            height: document.documentElement.scrollHeight,
            svgs: [...document.querySelectorAll('figure svg')].map(s => {
                const r = s.getBoundingClientRect(); return [r.left, r.right, r.width, r.height]; }),
            sections: document.querySelectorAll('section').length })""")["result"]["value"]
        browser.send("Emulation.setDeviceMetricsOverride", session, width=WIDTH, height=measured["height"],
                     deviceScaleFactor=1, mobile=False)
        shot = browser.send("Page.captureScreenshot", session, format="png", captureBeyondViewport=True)
        screenshot.write_bytes(base64.b64decode(shot["data"]))
        time.sleep(0.2)  # let late console/network events arrive before collecting them
        browser.send("Runtime.evaluate", session, expression="1")
    finally:
        browser.close()
    events = browser.events
    problems = [e["params"] for e in events if e.get("method") == "Runtime.exceptionThrown"]
    problems += [e["params"] for e in events if e.get("method") == "Runtime.consoleAPICalled"
                 and e["params"].get("type") in ("error", "assert", "warning")]
    problems += [e["params"]["entry"] for e in events if e.get("method") == "Log.entryAdded"
                 and e["params"]["entry"].get("level") in ("error", "warning")]
    problems += [e["params"] for e in events if e.get("method") == "Network.loadingFailed"]
    requests = [e["params"]["request"]["url"] for e in events if e.get("method") == "Network.requestWillBeSent"]
    return {"problems": problems, "requests": requests, **measured}


@pytest.fixture(scope="module")
def browsed(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    tmp = tmp_path_factory.mktemp("browser")
    runs = [make_run(tmp, "glove-like"), make_run(tmp, "anisotropic")]
    html = write_html_report(runs, tmp / "report.html")
    screenshot = tmp / "report.png"
    return open_in_chromium(html, screenshot, tmp / "profile"), screenshot


def test_report_loads_without_console_errors_or_failed_requests(browsed):
    page, _ = browsed
    assert page["problems"] == []
    # the file itself and the PNG data URIs matplotlib embeds in its SVGs: no network, fonts or scripts
    assert page["requests"][0].startswith("file://")
    assert [url for url in page["requests"][1:] if not url.startswith("data:image/png;base64,")] == []


def test_report_fits_the_window_and_draws_every_figure(browsed):
    page, screenshot = browsed
    assert page["scrollWidth"] <= page["innerWidth"] == WIDTH
    assert page["sections"] == 3  # the comparison and one section per run
    # comparison heatmap + (EAT-Map grid, forest plot, level-3 plot) for each of the two runs
    assert len(page["svgs"]) == 7
    for left, right, width, height in page["svgs"]:
        assert 0 <= left and right <= WIDTH and width > 300 and height > 150
    png = screenshot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(png[16:20], "big") == WIDTH
    assert int.from_bytes(png[20:24], "big") == page["height"] > 3000
