"""One RLM child: a real, short-lived process that writes its own session and replies.

The parent starts ``agent.py --sim-child`` with a JSON spec on stdin (see
``parent.Swarm.spawn``). The child writes ``rlm-subagent.json`` and its session file in its
``sub-XXXXXXXX`` dir, then prints one JSON line on stdout: ``reply`` (its message to the
parent), ``done`` (finished without replying) or ``failed``; a failed child exits 1.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from sim_agent import jsonio, records

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .edits import Cell

#: What a child's model request fails with under ``retry-after-failure``.
FAILURE_ERROR = "500 Internal Server Error: upstream model overloaded"
#: What the first try of a request fails with under ``recovers`` (then it is retried).
TRANSIENT_ERROR = '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'


def run_child() -> int:
    spec = jsonio.loads(_read_all(0))
    records.set_prompt_tokens(int(spec.get("promptTokens", records.PROMPT_TOKENS)))
    return ChildRun(spec).run()


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


class ChildRun:
    """The child's side of one spawn: its session, its answer, its exit."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.model: tuple[str, str] = (spec["model"][0], spec["model"][1])
        self.sub_dir = os.path.dirname(spec["sessionFile"])
        self.created_ms = records.now_ms()
        self.active_id = records.active_session_id()
        self.total = records.usage(0, 0)
        self.session: records.SessionFile | _HollowSession | None = None
        self._cells = 0

    def run(self) -> int:
        spec = self.spec
        os.makedirs(self.sub_dir, exist_ok=True)
        self._write_subagent("running")
        header = records.session_header(
            spec["sessionId"], spec["cwd"], spec["depth"], parent_session=spec["parentSession"]
        )
        self.session = records.SessionFile(spec["sessionFile"], header)
        if spec.get("hollow"):
            # ``hollow-children``: the file keeps its header and nothing the child did.
            self.session = _HollowSession(spec["sessionFile"], header)
        self.session.preamble(self.model)
        self.session.append("session_info", name=spec["name"])
        self.session.append(
            "custom_message",
            customType="agent_message",
            content=f"[task from parent]\n\n{spec['task']}",
            display=True,
            details={
                "id": f"spawn:{spec['childId']}",
                "message": spec["task"],
                "from": {
                    "sessionId": spec["parentSessionId"],
                    "activeSessionId": spec["parentActiveId"],
                },
                "fromRelationship": "parent",
            },
        )
        if spec.get("grandchild"):
            self._start_stray_process()
        time.sleep(max(0.0, float(spec.get("busyUntil", 0)) - time.monotonic()))
        if spec.get("recovers"):  # the first try is refused, the retry answers
            self._message([], "error", records.usage(0, 0), error=TRANSIENT_ERROR)
        fate = spec["fate"]
        if fate == "fail":
            self._message([], "error", records.usage(0, 0), error=FAILURE_ERROR)
            self._write_subagent("failed")
            _report({"type": "failed", "error": FAILURE_ERROR})
            return 1
        if fate == "reply":
            self._work()
            self._reply(spec["message"])
        else:
            self._message([records.text_block("Looked at the shard; nothing to send.")], "stop")
            _report({"type": "done", "usage": self.total})
        self._write_subagent("completed")
        return 0

    def _work(self) -> None:
        """On an edit fixture: the cells that change the repo (or plant files), before the
        reply, each recorded as the product records an ``ipython`` call."""
        spec = self.spec
        if not spec.get("edits") and not spec.get("plants"):
            return
        from sim_agent import edits  # only edit fixtures need it
        from sim_agent.config import Replacement

        cwd = spec["cwd"]
        if spec.get("edits"):
            todo = [Replacement(r["path"], r["old"], r["new"]) for r in spec["edits"]]
            bash = bool(spec.get("editBash"))
            race = spec.get("race")
            pace = edits.Race(race["folder"], race["turns"]) if race else None
            self._cell(edits.edit_code(todo, bash), lambda: edits.make_edits(cwd, todo, bash, pace))
        if spec.get("plants"):
            plants = spec["plants"]
            self._cell(edits.plant_code(plants), lambda: edits.run_plants(cwd, plants))

    def _cell(self, code: str, run: Callable[[], Cell]) -> None:
        """One ``ipython`` call: the assistant's tool call, the cell run, its result."""
        self._cells += 1
        call_id = f"call_w{self._cells}"
        self._message([records.tool_call(call_id, code)], "toolUse")
        started = time.monotonic()
        cell = run()
        took = int((time.monotonic() - started) * 1000)
        result = records.tool_result(
            call_id, cell.stdout, took, diffs=cell.diffs, error=cell.error, stderr=cell.stderr
        )
        self._append(result)

    def _reply(self, message: str) -> None:
        send = f"await agent_message.send({message!r}, receiver_role='parent')"
        code = f"receipt = {send}\nprint(receipt)\n"
        self._message([records.tool_call("call_1", code)], "toolUse")
        final = records.assistant_message(
            [records.text_block("Reply sent to parent.")], self.model, "stop"
        )
        message_id = f"agentmsg_{records.uuid7()}"
        # Usage is reported with the reply, so count the closing message before sending it.
        _report(
            {
                "type": "reply",
                "message": message,
                "messageId": message_id,
                "activeSessionId": self.active_id,
                "usage": records.add_usage(self.total, final["usage"]),
            }
        )
        receipt = {
            "id": message_id,
            "source": "agent_message",
            "from": {"activeSessionId": self.active_id, "sessionId": self.spec["sessionId"]},
            "message": message,
            "deliveryStatus": "queued",
        }
        self._append(records.tool_result("call_1", f"{receipt}\n", 5))
        self._append(final)
        self.total = records.add_usage(self.total, final["usage"])

    def _start_stray_process(self) -> None:
        """A tool process in its own session that outlives everyone and ignores SIGTERM."""
        from sim_agent import launch  # only this behaviour starts a process

        argv = launch.sim_argv(launch.MODE_SLEEP, "--ignore-sigterm")
        pid = launch.spawn_detached(argv, self.spec["cwd"], ignore_sigterm=True)
        code = f"import subprocess\nsubprocess.Popen({argv!r}, start_new_session=True)\n"
        self._message([records.tool_call("call_0", code)], "toolUse")
        self._append(
            records.tool_result("call_0", f"started background process {pid}\n", 3, pid=pid)
        )

    def _message(
        self, content: list[dict[str, Any]], stop: str, usage: Any = None, error: str | None = None
    ) -> None:
        msg = records.assistant_message(content, self.model, stop, usage, error_message=error)
        self.total = records.add_usage(self.total, msg["usage"])
        self._append(msg)

    def _append(self, message: dict[str, Any]) -> None:
        assert self.session is not None
        self.session.append("message", message=message)

    def _write_subagent(self, status: str) -> None:
        spec = self.spec
        records.write_json(
            os.path.join(self.sub_dir, "rlm-subagent.json"),
            {
                "type": "rlm_subagent",
                "childId": spec["childId"],
                "sessionName": spec["name"],
                "sessionDir": self.sub_dir,
                "sessionFile": spec["sessionFile"],
                "rlmMaxDepth": 1,
                "rlmParentNodeId": spec["childId"],
                "prompt": spec["task"],
                "spawnCode": spec["spawnCode"],
                "model": {"provider": self.model[0], "modelId": self.model[1]},
                "status": status,
                "createdAt": self.created_ms,
                "updatedAt": records.iso(),
            },
        )


class _HollowSession:
    """A session file that already holds its header and takes no further entries."""

    def __init__(self, path: str, header: dict[str, Any]) -> None:
        self.path = path
        self.header = header

    def append(self, entry_type: str, **fields: Any) -> dict[str, Any]:
        return {"type": entry_type, **fields}

    def preamble(self, model: tuple[str, str]) -> None:
        pass


def _report(obj: dict[str, Any]) -> None:
    # Raw write: if the parent crashed, the pipe is gone and the child just carries on.
    try:  # noqa: SIM105 (contextlib is an import a sim process can skip)
        os.write(1, (records.dumps(obj) + "\n").encode())
    except OSError:
        pass
