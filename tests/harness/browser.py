"""A headless Chromium driven over the DevTools protocol on a pipe (no websocket, no port).

``--remote-debugging-pipe`` makes Chromium read protocol messages from fd 3 and write them
to fd 4, each a JSON object ended by a NUL byte. Only Debian's ``chromium`` is used; nothing
is downloaded. Console messages, uncaught exceptions and log entries are collected so a
test can assert a page loaded without errors.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Flags for a quiet, offline, throw-away headless browser running as root.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--remote-debugging-pipe",
)
#: Seconds one protocol reply (or the page's ready flag) may take: generous for a browser
#: starting on 2 loaded cores.
REPLY_TIMEOUT_S = 60.0

_TRAMPOLINE = (
    "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
    "os.execv(sys.argv[3], sys.argv[3:])"
)


def chromium_binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class Browser:
    proc: subprocess.Popen[bytes]
    to_browser: int
    from_browser: int
    profile: str
    session: str = ""
    next_id: int = 0
    buffer: bytes = b""
    errors: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, binary: str) -> Browser:
        profile = tempfile.mkdtemp(prefix="swh-chromium-")
        cmd_r, cmd_w = os.pipe()  # we write commands, the browser reads fd 3
        out_r, out_w = os.pipe()  # the browser writes fd 4, we read

        # A tiny Python trampoline maps our pipe ends onto fds 3 and 4 (what the protocol
        # pipe expects) and execs the browser in its place (sh cannot name fds above 9).
        argv = [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}"]
        # Its crash reports, caches and config go into the throw-away profile, not HOME.
        env = {
            **os.environ,
            "HOME": profile,
            "XDG_CONFIG_HOME": os.path.join(profile, "config"),
            "XDG_CACHE_HOME": os.path.join(profile, "cache"),
        }
        proc = subprocess.Popen(
            [sys.executable, "-c", _TRAMPOLINE, str(cmd_r), str(out_w), *argv],
            env=env,
            pass_fds=(cmd_r, out_w),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        os.close(cmd_r)
        os.close(out_w)
        browser = cls(proc, cmd_w, out_r, profile)
        target = browser.call("Target.createTarget", url="about:blank")["targetId"]
        attached = browser.call("Target.attachToTarget", targetId=target, flatten=True)
        browser.session = attached["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            browser.call(f"{domain}.enable")
        return browser

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("no reply from chromium")
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self.buffer += chunk
        raw, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(raw)

    def _note(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params") or {}
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            args = " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
            self.errors.append(f"console.{params['type']}: {args}")
        elif method == "Runtime.exceptionThrown":
            self.errors.append(f"exception: {params['exceptionDetails']}")
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            self.errors.append(f"log: {params['entry'].get('text')}")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._note(reply)

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, url: str, ready: str, width: int = 1280, height: int = 900) -> None:
        """Load ``url`` and wait until the JS expression ``ready`` is truthy."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.call("Page.navigate", url=url)
        self.wait_for(ready)

    def wait_for(self, condition: str) -> None:
        """Poll until the JS expression ``condition`` is truthy (errors count as false)."""
        probe = (
            f"(() => {{ try {{ return Boolean({condition}); }} catch (e) {{ return false; }} }})()"
        )
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        while not self.evaluate(probe):
            if time.monotonic() > deadline:
                raise TimeoutError(f"never true: {condition}; errors: {self.errors}")
            time.sleep(0.2)

    def screenshot(self, path: Path, whole: bool = True) -> bytes:
        """A PNG of the whole page, or (``whole=False``) of what the window shows first."""
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=whole)
        png = base64.b64decode(data["data"])
        path.write_bytes(png)
        return png

    def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError, TimeoutError):
            self.call("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
        os.close(self.to_browser)
        os.close(self.from_browser)
        shutil.rmtree(self.profile, ignore_errors=True)
