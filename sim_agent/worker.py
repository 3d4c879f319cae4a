"""One resident session's worker: ``agent.py --sim-worker``, started by the supervisor.

The supervisor (``resident.py``) starts it detached, in its own session, and talks to it
over its stdin and stdout, one JSON object per line:

- in: the spec (``{"config": <create's config>, "activeSessionId": ID}``), then
  ``{"prompt": MESSAGE}``; EOF means the supervisor is gone or done with it;
- out: ``{"ready": {"header", "sessionFile"}}`` once the transcript exists (or
  ``{"error": TEXT}``, exit 1), then ``{"event": E}`` for each event the ``--mode json``
  stream would carry after its header, then ``{"quiescent": true}`` once no run is going and
  every child has settled and been heard.

The parent is the one-shot CLI's (``parent.ParentRun``) with ``resident``: late replies
wake follow-up runs. SIGTERM stops it: the run cut short streams its last events
(``Conversation.abort``), and the process group (its children) goes with it.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
from typing import TYPE_CHECKING

from sim_agent import config, jsonio, records
from sim_agent.conversation import EventStream
from sim_agent.parent import ParentRun

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


class Stopped(Exception):
    """Raised in the worker's thread by SIGTERM: the supervisor stops the session."""


class WorkerStream(EventStream):
    """Events as ``{"event": E}`` lines on stdout; a line is never cut by a stop."""

    def header(self, header: dict[str, Any]) -> None:
        pass  # the supervisor had it with ``ready``: get_session_header, not an event

    def emit(self, event: dict[str, Any]) -> None:
        send({"event": event})


def send(obj: dict[str, Any]) -> None:
    """One line to the supervisor, whole: SIGTERM waits until it is written."""
    data = (records.dumps(obj) + "\n").encode()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(1, view) :]
    except OSError:
        pass  # the supervisor is gone: the run goes on unheard, as a detached one does
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _stop(*_: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one stop; the supervisor escalates
    raise Stopped


def run_worker() -> int:
    lines = _lines(0)
    signal.signal(signal.SIGTERM, _stop)
    try:
        spec = jsonio.loads(next(lines, b"") or b"null")
        session = spec["config"]
        os.chdir(session["cwd"])  # not in the supervisor: it has other threads
        cfg = config.session_launch(session, os.environ, spec.get("socket", ""))
        records.set_prompt_tokens(cfg.oracle.prompt_tokens())
        run = ParentRun(cfg, WorkerStream(), resident=True, active_id=spec["activeSessionId"])
    except Stopped:
        return 0
    except (config.SimUsageError, OSError, ValueError, KeyError, TypeError) as e:
        send({"error": str(e) or type(e).__name__})
        return 1
    send({"ready": {"header": run.conv.transcript.header, "sessionFile": run.transcript_path}})
    try:
        prompt = next(lines, None)
        if prompt is None:
            return 0
        cfg.task = str(jsonio.loads(prompt)["prompt"])
        if cfg.oracle.behaviours.plan != "noop":
            run.run()
        send({"quiescent": True})
        for _ in lines:  # one prompt per session; stay until told to go
            pass
    except Stopped:
        run.conv.abort()
    except Exception:  # a thrown error: the session's worker dies of it, as a CLI would
        traceback.print_exc()
        return 1
    return 0


def _lines(fd: int) -> Iterator[bytes]:
    """The lines read from ``fd`` until EOF."""
    buf = b""
    while chunk := os.read(fd, 65536):
        buf += chunk
        while (end := buf.find(b"\n")) >= 0:
            line, buf = buf[:end], buf[end + 1 :]
            if line.strip():
                yield line
    if buf.strip():
        yield buf


if __name__ == "__main__":  # pragma: no cover - agent.py is the entry point
    sys.exit(run_worker())
