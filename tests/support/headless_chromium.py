"""Drive headless Chromium through the DevTools protocol (aiohttp's WebSocket client): open a page, read
console errors and uncaught exceptions, evaluate JavaScript, take screenshots, time the load.

Used by the report's browser test and by `bench/report_bench.py`. `find_chromium()` is None when no
Chromium is installed (`.ci/run` installs Debian's `chromium`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from base64 import b64decode
from pathlib import Path
from typing import Any

import aiohttp

PROFILE_REMOVAL_TRIES = 20
"""Tries, 0.1 s apart, to delete the profile while the browser's last helpers exit."""
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """Return the path of an installed Chromium, or None."""
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


class Chromium:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, binary: str, *, width: int = 1400, height: int = 900) -> None:
        self.binary, self.width, self.height = binary, width, height
        self.errors: list[str] = []
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._events: list[tuple[str, dict[str, Any]]] = []
        self._loop = asyncio.new_event_loop()
        self._profile = tempfile.mkdtemp(prefix="scoregate-chromium-")

    def __enter__(self) -> Chromium:
        self._process = subprocess.Popen(
            [self.binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
             "--remote-debugging-port=0", f"--user-data-dir={self._profile}",
             f"--window-size={self.width},{self.height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        port = self._devtools_port()
        self._loop.run_until_complete(self._connect(port))
        for domain in ("Runtime", "Log", "Page"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=self.width, height=self.height, deviceScaleFactor=1,
                  mobile=False)  # fmt: skip
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._loop.run_until_complete(self._close())
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGKILL)  # its renderer and helpers too: they write the profile
            self._process.wait()
            self._loop.close()
            self._remove_profile()

    def _remove_profile(self) -> None:
        """Delete the profile folder; a helper process still exiting may write into it for a moment."""
        for _ in range(PROFILE_REMOVAL_TRIES):
            try:
                shutil.rmtree(self._profile)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)
        shutil.rmtree(self._profile, ignore_errors=True)

    def _devtools_port(self) -> int:
        """Chromium writes its DevTools port into the profile (`DevToolsActivePort`) once it listens."""
        marker = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if marker.is_file():
                lines = marker.read_text().splitlines()
                if lines and lines[0].strip().isdigit():
                    return int(lines[0])
            if self._process.poll() is not None:
                raise RuntimeError(f"chromium exited: {self._process.stderr.read() if self._process.stderr else ''}")
            time.sleep(0.05)
        raise RuntimeError("chromium did not open its DevTools port within 30 s")

    async def _connect(self, port: int) -> None:
        self._session = aiohttp.ClientSession()
        async with self._session.get(f"http://127.0.0.1:{port}/json/list") as response:
            targets = json.loads(await response.text())
        page = next(t for t in targets if t.get("type") == "page")
        self._ws = await self._session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        self._reader = asyncio.ensure_future(self._read())

    async def _close(self) -> None:
        self._reader.cancel()
        await self._ws.close()
        await self._session.close()

    async def _read(self) -> None:
        async for message in self._ws:
            data = json.loads(message.data)
            if "id" in data:
                future = self._pending.pop(data["id"], None)
                if future is not None and not future.done():
                    future.set_result(data)
                continue
            method, params = data.get("method", ""), data.get("params", {})
            self._events.append((method, params))
            self._note_error(method, params)

    def _note_error(self, method: str, params: dict[str, Any]) -> None:
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(
                "console: " + " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
            )
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.errors.append("exception: " + str(details.get("exception", {}).get("description") or details))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.errors.append("log: " + str(params["entry"].get("text")))

    async def _call(self, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        message_id = next(self._ids)
        future: asyncio.Future[Any] = self._loop.create_future()
        self._pending[message_id] = future
        await self._ws.send_str(json.dumps({"id": message_id, "method": method, "params": params}))
        reply = await asyncio.wait_for(future, timeout)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    def call(self, method: str, timeout: float = 60, **params: Any) -> dict[str, Any]:
        """Send one DevTools command and return its result."""
        return self._loop.run_until_complete(self._call(method, params, timeout))

    def _wait_event(self, method: str, since: int, timeout: float) -> None:
        async def wait() -> None:
            deadline = time.monotonic() + timeout
            while not any(m == method for m, _ in self._events[since:]):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no {method} within {timeout} s")
                await asyncio.sleep(0.01)

        self._loop.run_until_complete(wait())

    def open(self, path: Path, timeout: float = 60) -> float:
        """Load a file and wait until its script marked the page ready; return the seconds that took."""
        since = len(self._events)
        start = time.perf_counter()
        self.call("Page.navigate", url=path.resolve().as_uri())
        self._wait_event("Page.loadEventFired", since, timeout)
        while not self.evaluate("document.body && document.body.dataset.ready === '1'"):
            if time.perf_counter() - start > timeout:
                raise TimeoutError(f"{path} did not become ready within {timeout} s; errors: {self.errors}")
            self._loop.run_until_complete(asyncio.sleep(0.01))
        return time.perf_counter() - start

    def evaluate(self, expression: str) -> Any:
        """Evaluate a JavaScript expression in the page and return its (JSON) value; raise on an exception."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path, *, full_page: bool = True) -> Path:
        """Save a PNG of the page (the whole page, or the viewport); return its path."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            clip = {"x": 0, "y": 0, "width": self.width, "height": min(size[1], 12000), "scale": 1}
            params.update(captureBeyondViewport=True, clip=clip)
        data = self.call("Page.captureScreenshot", **params)["data"]
        path.write_bytes(b64decode(data))
        return path
