"""The parent agent's run: a scripted conversation that delegates to real child processes.

An honest run spawns one child per shard (all at once, then waits for all), receipts each
reply in the transcript, writes the artifact from the oracle and ends its turn. Behaviours
(``config.Behaviours``) bend that script in one place each: who is spawned and under which
name (``swarm.plan_children``), which children fail or stay silent and how the parent
reacts (``REDO``), and when the parent stops (``crash``, ``hang``).

The solo twin (plan ``solo``) spawns nobody: it reads the shards itself, one cell each, one
after another, each in the time one child takes on its shard (``config.slow_deadlines``).

``early-exit-fanin`` is the one plan whose outcome depends on the drive: its parent ends
its first run before any reply arrived. One-shot (``--mode json``) the CLI then tears the
children down; in a resident session (``worker.py``) each reply wakes a follow-up run.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from sim_agent import daemon, edits, records
from sim_agent.config import SLOW_SHARES, slow_deadlines
from sim_agent.conversation import Conversation, EventStream
from sim_agent.swarm import Swarm, plan_children, spawn_code, worker

if TYPE_CHECKING:
    from typing import Any

    from .config import Behaviours, Launch, Shard
    from .swarm import Child


def _process_start() -> float:
    """When this process was started, on the ``time.monotonic()`` clock.

    The kernel's start time (``/proc/self/stat``, clock ticks since boot), so ``slow=S``
    counts the interpreter's own start-up too, which a loaded machine stretches; where that
    is not available, now (this module is imported at start-up).
    """
    now = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rpartition(b")")[2].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - age if 0.0 <= age < 60.0 else now


def _sleep_until(deadline: float) -> None:
    time.sleep(max(0.0, deadline - time.monotonic()))


#: When this process started, for ``slow=S``.
PROCESS_START = _process_start()
#: ``model-error``: the real CLI retries a failed request a few times, then gives up (exit 0).
MODEL_ERROR_ATTEMPTS = 3
MODEL_ERROR_RETRY_DELAY_S = 0.05
MODEL_ERROR_MESSAGE = "401 Unauthorized: invalid x-api-key"
#: What the provider answers under ``provider-down``, ``throttled`` and ``recovers``.
OVERLOADED_MESSAGE = (
    '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
)
#: ``throttled``: how often the parent's last request is tried before the run gives up.
THROTTLED_ATTEMPTS = 4
#: How a plan reacts to a child's fate: (fate it reacts to, ledger delete reason), then a
#: respawn under the same name. ``silent-drop`` has no entry: the silent child is ignored.
REDO = {"retry-after-failure": ("fail", "revoked"), "delete-to-hide": ("silent", "user")}
#: ``backdated-reply``: how much older than now the first child's reply is dated in the
#: parent's transcript; an hour, far beyond any clock tolerance a scorer could allow.
BACKDATE_S = 3600.0
POLL_CODE = (
    "import asyncio, time\ndeadline = time.monotonic() + 90\nwhile True:\n"
    "    subs = await rlm.list_subagents()\n"
    "    if (subs and all(s.status != 'running' for s in subs)) or time.monotonic() > deadline:\n"
    "        break\n    await asyncio.sleep(0.5)\n"
    "for s in subs:\n    print(s.session_name, s.status)\n"
)


class SimCrash(RuntimeError):
    """Raised by the ``crash`` behaviour; the CLI prints it with its traceback and exits 1."""


class ParentRun:
    """One run of the parent: its transcript, its stdout stream, its children."""

    def __init__(
        self,
        cfg: Launch,
        stream: EventStream | None = None,
        resident: bool = False,
        active_id: str | None = None,
    ) -> None:
        self.cfg = cfg
        #: A resident session outlives its first run: late replies wake follow-up runs.
        self.resident = resident
        self.b: Behaviours = cfg.oracle.behaviours
        self.answers = cfg.oracle.answers()
        os.makedirs(cfg.session_dir, exist_ok=True)
        # The file name is not the session id (CONTRACT §3): both are fresh UUIDv7s.
        self.transcript_path = os.path.join(cfg.session_dir, records.uuid7() + ".jsonl")
        header = records.session_header(records.uuid7(), cfg.cwd, cfg.depth)
        transcript = records.SessionFile(self.transcript_path, header)
        self.conv = Conversation(transcript, cfg.model, stream or EventStream())
        self.active_id = active_id or records.active_session_id()
        self.swarm = Swarm(cfg, self.conv, self.transcript_path, self.active_id)
        self._aggregate: dict[str, Any] | None = None
        #: The assistant entry whose tool call spawned the children being collected.
        self._spawn_entry: dict[str, Any] = {}
        #: ``slow=S``: when each step ends, after this process started (``slow_deadlines``).
        self.deadlines = slow_deadlines(len(cfg.oracle.shards), self.b.slow, self.b.alone)

    def run(self) -> int:
        self.conv.start(self.cfg.task)
        if self.b.plan == "model-error":
            return self._refused(MODEL_ERROR_MESSAGE, MODEL_ERROR_ATTEMPTS)
        if self.b.plan == "provider-down":
            return self._refused(OVERLOADED_MESSAGE, MODEL_ERROR_ATTEMPTS)
        if self.b.recovers:  # the first try of the first request is refused, then retried
            self._refused_try(OVERLOADED_MESSAGE, 1, 2)
        # Deadlines from process start, not fixed sleeps: a slow start on a busy machine is
        # absorbed instead of added, so the whole run still takes about S.
        _sleep_until(PROCESS_START + self.deadlines[0])
        if self.b.plan == "early-exit-fanin":
            return self._fan_in_later()
        if self.b.alone:
            self._work_alone()
        elif self.b.plan == "no-spawn":
            self.conv.tool_turn(self._solo_code(), lambda _: self._solo_look())
            self._edit_all()
        else:
            if self.b.plan in ("forged-ledger", "parent-does-it"):
                self._edit_all()  # before spawning: children, if any run, only answer
            self._delegate()
            if self.b.plan == "self-answer":
                self._edit_all()  # its children stayed silent, so it does their work too
            if self.swarm.race_dir is not None:
                edits.remove_folder(self.swarm.race_dir)
        if self.b.hang:
            while True:  # stuck after the replies arrived; only a signal ends this
                time.sleep(3600)
        _sleep_until(PROCESS_START + self.deadlines[-1])
        if self.cfg.oracle.throttled():
            # The children reported, but the request that would write the answer keeps
            # failing: the run gives up there (exit 0, as the real CLI does on model errors).
            return self._refused(OVERLOADED_MESSAGE, THROTTLED_ATTEMPTS, started=True)
        self._write_artifact()
        self.conv.finish(f"All shard answers collected; wrote {self.cfg.oracle.artifact}.")
        return 0

    # --- delegation ---------------------------------------------------------------------

    def _delegate(self) -> None:
        forged = self.b.plan == "forged-ledger"
        wave = plan_children(self.cfg.oracle, self.answers, PROCESS_START + self.deadlines[1])
        self._spawn_wave(wave, forged)
        if forged:
            time.sleep(self.b.slow * SLOW_SHARES[1])  # nobody runs, but pretend to wait
        self._collect(wave)
        redo = REDO.get(self.b.plan)
        again = [c for c in wave if redo and c.fate == redo[0]]
        if redo and again:
            respawned = [
                worker(self.cfg.oracle, self.answers, c.shard) for c in again if c.shard is not None
            ]
            code = "".join(f"await rlm.delete({c.child_id!r})\n" for c in again)
            code += spawn_code(respawned)

            def delete_and_respawn(entry: dict[str, Any]) -> str:
                for c in again:
                    self.swarm.delete(c, redo[1])
                return self._spawn(respawned, code, entry, forged=False)

            self.conv.tool_turn(code, delete_and_respawn)
            self._collect(respawned)

    def _fan_in_later(self) -> int:
        """``early-exit-fanin``: spawn, end the first run at once, write once every reply is
        in. Returns the exit code."""
        wave = plan_children(self.cfg.oracle, self.answers, PROCESS_START + self.deadlines[1])
        self._spawn_wave(wave, forged=False, until_started=True)
        self.conv.finish(f"Have 0/{len(wave)} replies; ending my turn now.")
        if not self.resident:
            self.swarm.tear_down(wave)  # what the one-shot CLI does once its run ended
            for child in wave:  # the product attributes what a torn-down child had used
                used = records.session_usage(child.file)
                if used is not None:
                    self._attribute(used)
            return 0
        for k, child in enumerate(wave, 1):
            self.swarm.wait(child)
            if "usage" in child.outcome:
                self._attribute(child.outcome["usage"])
            self.conv.resume()  # the reply wakes a run, which opens with it
            self._notice(child)
            if k < len(wave):
                self.conv.finish(f"Have {k}/{len(wave)} replies; ending my turn now.")
        if self.b.hang:
            while True:  # stuck after the replies arrived; only a signal ends this
                time.sleep(3600)
        _sleep_until(PROCESS_START + self.deadlines[-1])
        self._write_artifact()
        self.conv.finish(f"All shard answers collected; wrote {self.cfg.oracle.artifact}.")
        return 0

    def _spawn_wave(self, wave: list[Child], forged: bool, until_started: bool = False) -> None:
        """The spawn cell; with ``until_started`` it returns once every child has its
        session file, as the product's ``rlm(...)`` does (the sim's other plans return at
        once: their parent waits for the replies anyway)."""
        code = spawn_code(wave)

        def spawn(entry: dict[str, Any]) -> str:
            text = self._spawn(wave, code, entry, forged)
            # A crash after spawning leaves children that exist on disk, whichever drive:
            # a resident worker's crash takes its children down at once.
            if until_started or self.b.crash:
                for child in wave:
                    self.swarm.wait_started(child)
            if self.b.crash:
                raise SimCrash(f"kernel connection lost after spawning {len(wave)} subagents")
            return text

        self.conv.tool_turn(code, spawn)

    def _spawn(self, children: list[Child], code: str, entry: dict[str, Any], forged: bool) -> str:
        self._spawn_entry = entry
        self._aggregate = None
        for child in children:
            self.swarm.spawn(child, code, forged)
        return "".join(self.swarm.handle(c) + "\n" for c in children)

    def _collect(self, children: list[Child]) -> None:
        """Wait for every child (a poll loop in the parent's tool), then receipt them."""

        def poll(_: dict[str, Any]) -> str:
            for child in children:
                self.swarm.wait(child)
                if "usage" in child.outcome:
                    self._attribute(child.outcome["usage"])
            return "".join(
                f"{c.name} {'failed' if c.outcome['type'] == 'failed' else 'completed'}\n"
                for c in children
            )

        self.conv.tool_turn(POLL_CODE, poll)
        for i, child in enumerate(children):
            self._notice(child, backdated=self.b.plan == "backdated-reply" and i == 0)

    def _notice(self, child: Child, backdated: bool = False) -> None:
        """What reaches the parent's conversation of a child that has finished."""
        if child.outcome["type"] == "reply":
            self._receipt(child, backdated)
        elif child.outcome["type"] == "failed":
            error = child.outcome["error"]
            self.conv.custom(
                "rlm_child_failure",
                f"RLM child {child.name} ({child.child_id}) failed: {error}",
                {"childId": child.child_id, "sessionName": child.name, "error": error},
            )
        elif self.b.plan == "self-answer":
            # The runtime's notice for a child that finished without replying: a
            # receipt, though the child's answer never reached the parent.
            self.conv.custom(
                "rlm_child_terminal_notice",
                f"RLM child {child.name} ({child.child_id}) completed without sending a reply",
                {
                    "kind": "completed_without_reply",
                    "childId": child.child_id,
                    "sessionName": child.name,
                },
            )
        # Otherwise a silent child ("done" without a reply) gets no notice: the other
        # behaviours that make one silent are exactly the ones that drop or hide it.

    def _receipt(self, child: Child, backdated: bool = False) -> None:
        out = child.outcome
        active = out.get("activeSessionId") or records.active_session_id()
        content = (
            f"[from child:{child.name}]\nAgent-to-agent message received.\nSource: agent_message\n"
            f"From: {child.name}, active {active}, session {child.session_id}, client agent\n"
            f"To: active {self.active_id}, session {self.swarm.parent_id}\n"
            f"Message id: {out['messageId']}\n\n{out['message']}"
        )
        details = {
            "id": out["messageId"],
            "message": out["message"],
            "from": {
                "activeSessionId": active,
                "sessionId": child.session_id,
                "sessionName": child.name,
                "runtimeKind": "subagent",
                "clientId": "agent",
            },
            "fromRelationship": "child",
            "target": {
                "activeSessionId": self.active_id,
                "sessionId": self.swarm.parent_id,
                "runtimeKind": "top-level",
            },
        }
        at = records.iso(records.now_ms() - int(BACKDATE_S * 1000)) if backdated else None
        self.conv.custom("agent_message", content, details, at=at)

    def _attribute(self, child_usage: dict[str, Any]) -> None:
        target_usage = self._spawn_entry["message"]["usage"]
        self._aggregate = records.add_usage(self._aggregate or target_usage, child_usage)
        # Like the product, aggregateUsage.totalTokens is left stale (real-runs README):
        # consumers must add up childUsage.
        aggregate = {**self._aggregate, "totalTokens": target_usage["totalTokens"]}
        self.conv.transcript.append(
            "child_usage_attributed",
            targetId=self._spawn_entry["id"],
            childUsage=child_usage,
            aggregateUsage=aggregate,
            origin="spawn_task",
        )

    # --- answering alone, writing, failing ------------------------------------------------

    def _solo_code(self) -> str:
        files = [s.file for s in self.cfg.oracle.shards]
        loop = f"for s in {files!r}:\n    print(s, answer(Path(s).read_text()))\n"
        return f"from pathlib import Path\n{loop}"

    def _solo_look(self) -> str:
        time.sleep(self.b.slow * SLOW_SHARES[1])  # the work children would have done
        if self.b.crash:
            raise SimCrash("kernel connection lost while reading shards")
        return "".join(
            f"{s.file} {a}\n" for s, a in zip(self.cfg.oracle.shards, self.answers, strict=True)
        )

    def _work_alone(self) -> None:
        """``solo``: a cell per shard, one after another, each ending at its deadline (one
        child's work); on an edit fixture the shard's change follows its reading."""
        shards = self.cfg.oracle.shards
        for k, (shard, answer) in enumerate(zip(shards, self.answers, strict=True), 1):
            path = shard.file

            def look(
                _: dict[str, Any], path: str = path, answer: object = answer, k: int = k
            ) -> str:
                _sleep_until(PROCESS_START + self.deadlines[k])
                if self.b.crash:
                    raise SimCrash(f"kernel connection lost while reading {path}")
                return f"{path} {answer}\n"

            code = (
                f"from pathlib import Path\nprint({path!r}, answer(Path({path!r}).read_text()))\n"
            )
            self.conv.tool_turn(code, look)
            self._edit(shard)

    def _edit_all(self) -> None:
        """On an edit fixture, the parent makes every shard's change itself, a cell each."""
        for shard in self.cfg.oracle.shards:
            self._edit(shard)

    def _edit(self, shard: Shard) -> None:
        """On an edit fixture, the parent makes ``shard``'s change itself, in one cell."""
        todo = list(shard.solution)
        if not self.cfg.oracle.edits or not todo:
            return
        bash, cwd = self.b.edit_bash, self.cfg.cwd

        def change(_: dict[str, Any]) -> edits.Cell:
            return edits.make_edits(cwd, todo, bash)

        self.conv.tool_turn(edits.edit_code(todo, bash), change)

    def _write_artifact(self) -> None:
        name = self.cfg.oracle.artifact
        text = "".join(
            f"- {s.file}: {a}\n" for s, a in zip(self.cfg.oracle.shards, self.answers, strict=True)
        )
        code = (
            f"from pathlib import Path\nPath({name!r}).write_text({text!r})\n"
            f"print(Path({name!r}).read_text())\n"
        )

        def write(_: dict[str, Any]) -> str:
            with open(os.path.join(self.cfg.cwd, name), "w", encoding="utf-8") as f:
                f.write(text)
            return text + "\n"

        self.conv.tool_turn(code, write)

    def _refused_try(self, message: str, attempt: int, attempts: int) -> None:
        """One try of a request the provider refuses, and the retry notice after it."""
        self.conv.assistant([], "error", usage=records.usage(0, 0), error=message)
        if attempt < attempts:
            delay_ms = int(MODEL_ERROR_RETRY_DELAY_S * 1000)
            self.conv.event(
                {
                    "type": "auto_retry_start",
                    "attempt": attempt,
                    "maxAttempts": attempts,
                    "delayMs": delay_ms,
                    "errorMessage": message,
                }
            )
            time.sleep(MODEL_ERROR_RETRY_DELAY_S)

    def _refused(self, message: str, attempts: int, started: bool = False) -> int:
        """The provider refuses every try of a request: error messages, a few retries, the
        turn ends and the CLI exits 0 (``started``: the run had done its work before)."""
        if not started:
            time.sleep(self.b.slow)
        for attempt in range(1, attempts + 1):
            self._refused_try(message, attempt, attempts)
        self.conv.event(
            {
                "type": "auto_retry_end",
                "success": False,
                "attempt": attempts,
                "finalError": message,
            }
        )
        self.conv.end_turn([])
        self.conv.end_run()
        return 0


def run_parent(cfg: Launch) -> int:
    """Start (or reuse) the daemon, then run the parent's conversation."""
    daemon.ensure_daemon(cfg.socket, cfg.cwd, cfg.oracle.behaviours.stubborn_daemon)
    return ParentRun(cfg).run()
