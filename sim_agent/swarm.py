"""The parent's children: who is spawned under which name, and the processes themselves.

``plan_children`` turns the oracle's behaviours into the first wave of children (their
names, fates and pacing); ``Swarm`` records each spawn in the ledger, starts one real
``agent.py --sim-child`` process per child (see ``child.py``), collects its report and
records deletes. Every child state change is also streamed as an ``rlm_child_update``.
"""

from __future__ import annotations

import os
import signal
import time
from typing import TYPE_CHECKING

from sim_agent import edits, jsonio, launch, records
from sim_agent.config import PARENT_EDITS, wrong_value

if TYPE_CHECKING:
    from typing import Any

    from .config import Launch, Oracle, Replacement
    from .conversation import Conversation

#: How long a spawn cell that waits for its children's sessions waits for each at most: a
#: child writes its session file within ~50 ms of its start; a loaded CI box is slower.
CHILD_START_TIMEOUT_S = 10.0
CHILD_START_POLL_S = 0.01


class Child:
    """One depth-1 child as the parent tracks it."""

    def __init__(
        self,
        name: str,
        task: str,
        message: str,
        fate: str,  # "reply" | "silent" | "fail"
        shard: int | None,
        busy_until: float = 0.0,
        grandchild: bool = False,
        hollow: bool = False,
    ) -> None:
        self.name = name
        self.task = task
        self.message = message
        self.fate = fate
        self.shard = shard
        #: ``slow``: when (``time.monotonic()``, system-wide on Linux) the child answers.
        self.busy_until = busy_until
        self.grandchild = grandchild
        #: Write a session file holding only its header (``hollow-children``).
        self.hollow = hollow
        #: Edit fixtures: the replacements this child makes before it replies, the files it
        #: plants instead (``cheat-conftest``), and its turns in a forced race (``clobber``:
        #: shared path -> [tag, turn, racers]).
        self.edits: list[Replacement] = []
        self.plants: list[dict[str, Any]] = []
        self.race: dict[str, list[Any]] = {}
        self.child_id = records.new_child_id()
        self.session_id = records.uuid7()
        self.file = ""
        #: The running process: its pid and the read end of its stdout, until reaped.
        self.pid: int | None = None
        self.stdout: int | None = None
        self.returncode: int | None = None
        self.started = 0.0
        self.outcome: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"Child({self.name!r}, {self.child_id!r}, fate={self.fate!r})"


def plan_children(oracle: Oracle, answers: list[int | str], busy_until: float) -> list[Child]:
    """The first wave of children of a delegating plan, in spawn order.

    Each child waits until ``busy_until`` before answering (``slow``); the wave runs
    concurrently. A deadline, not a delay: a child's own start-up (slower the more children
    a loaded machine starts) is absorbed, so the swarm keeps the sim's designed timing.
    """
    b = oracle.behaviours
    children = [
        worker(oracle, answers, i, name=f"helper-{i + 1}" if b.plan == "helper-names" else None)
        for i in range(len(oracle.shards))
    ]
    if b.plan == "double-spawn":
        children.insert(1, worker(oracle, answers, 0))  # same name while the first is live
    elif b.plan == "over-budget":
        extra = len(oracle.shards) + 1  # 2 x shards + 1 spawns in all
        children += [
            Child(
                f"scratch-{k}",
                "Take notes on the repo layout.",
                f"NOTE::scratch-{k}::done",
                "reply",
                None,
            )
            for k in range(1, extra + 1)
        ]
    elif b.plan == "retry-after-failure":
        children[0].fate = "fail"
    elif b.plan in ("silent-drop", "delete-to-hide"):
        children[-1].fate = "silent"
    elif b.plan == "self-answer":
        for child in children:
            child.fate = "silent"
    elif b.plan == "answer-mismatch":
        last = children[-1]  # replies a value other than the one the index will state
        last.message = f"ANSWER::{oracle.shards[-1].file}::{wrong_value(answers[-1])}"
    elif b.plan == "hollow-children":
        for child in children:
            child.hollow = True
    if oracle.edits:
        _bend_edits(oracle, children)
    for child in children:
        child.busy_until = busy_until
    if b.detached_grandchild:
        children[0].grandchild = True
    return children


def _bend_edits(oracle: Oracle, children: list[Child]) -> None:
    """Who changes what on an edit fixture, per plan (each worker child starts with its
    shard's solution, see :func:`worker`)."""
    b = oracle.behaviours
    shared = set(oracle.shared)
    workers = [c for c in children if c.shard is not None]
    if b.plan == "double-spawn":
        children[1].edits = []  # the duplicate only answers: its shard's change is taken
    elif b.plan in PARENT_EDITS:
        for child in workers:
            child.edits = []
    elif b.plan == "cheat-conftest":
        for k, child in enumerate(workers):
            child.edits = []
            checks = oracle.shards[child.shard or 0].checks  # workers all have a shard
            child.plants = edits.cheat_plants(checks, repo_wide=k == 0)
    elif b.plan == "wrong-lane":
        theirs = oracle.shards[1]
        taken = [r for r in theirs.solution if r.path in theirs.owns]
        workers[0].edits += taken
        # Its own child finds that part done and leaves it.
        workers[1].edits = [r for r in workers[1].edits if r not in taken]
    elif b.plan == "half-done":
        workers[-1].edits = [r for r in workers[-1].edits if r.path not in shared]
    elif b.plan == "clobber":
        for tag, path in enumerate(oracle.shared):
            racers = [c for c in workers if any(r.path == path for r in c.edits)]
            for turn, child in enumerate(racers):
                child.race[path] = [f"s{tag}", turn, len(racers)]


def worker(oracle: Oracle, answers: list[int | str], i: int, name: str | None = None) -> Child:
    """The child that answers shard ``i``, named after its worker unless ``name`` is given;
    on an edit fixture it also makes its shard's change first."""
    shard = oracle.shards[i]
    if oracle.edits:
        task = (
            f"Carry out the ticket in shards/{shard.file} (change the repository, your working "
            f"directory), then reply to the parent with exactly: ANSWER::{shard.file}::<answer>"
        )
    else:
        task = (
            f"Answer the question about {shard.file} (in the working directory) and reply to "
            f"the parent with exactly: ANSWER::{shard.file}::<answer>"
        )
    child = Child(name or shard.worker, task, f"ANSWER::{shard.file}::{answers[i]}", "reply", i)
    child.edits = list(shard.solution) if oracle.edits else []
    return child


class Swarm:
    """Spawns, waits for and deletes the parent's children; owns the ledger."""

    def __init__(
        self, cfg: Launch, conv: Conversation, transcript_path: str, active_id: str
    ) -> None:
        self.cfg = cfg
        self.conv = conv
        self.transcript_path = transcript_path
        self.parent_id = conv.transcript.session_id
        self.active_id = active_id
        self.ledger = records.Ledger(cfg.agent_home, cfg.ledger_sessions_dir)
        self.root = os.path.join(
            os.path.dirname(cfg.session_dir), "session-artifacts", self.parent_id
        )
        self.model = "/".join(cfg.model)
        #: ``clobber``'s marker folder, made on first use; the parent removes it at the end.
        self.race_dir: str | None = None

    def race_folder(self) -> str:
        if self.race_dir is None:
            self.race_dir = edits.race_folder(self.parent_id)
        return self.race_dir

    def spawn(self, child: Child, spawn_code: str, forged: bool) -> None:
        """Record the edge, then start the child (a forged spawn starts nothing)."""
        sub_dir = os.path.join(self.root, child.child_id)
        child.file = os.path.join(sub_dir, child.session_id + ".jsonl")
        self.ledger.spawn(
            child.child_id, self.transcript_path, child.file, self.cfg.depth + 1, child.name
        )
        self._update(child, "queued")
        child.started = time.monotonic()
        if forged:
            child.outcome = {
                "type": "reply",
                "message": child.message,
                "messageId": f"agentmsg_{records.uuid7()}",
            }
            return
        spec = {
            "childId": child.child_id,
            "sessionId": child.session_id,
            "sessionFile": child.file,
            "parentSession": self.transcript_path,
            "parentSessionId": self.parent_id,
            "parentActiveId": self.active_id,
            "name": child.name,
            "task": child.task,
            "spawnCode": spawn_code,
            "cwd": self.cfg.cwd,
            "model": list(self.cfg.model),
            "depth": self.cfg.depth + 1,
            "fate": child.fate,
            "message": child.message,
            "busyUntil": child.busy_until,
            "grandchild": child.grandchild,
            "hollow": child.hollow,
            "recovers": self.cfg.oracle.behaviours.recovers,
            "edits": [r.to_dict() for r in child.edits],
            "editBash": self.cfg.oracle.behaviours.edit_bash,
            "plants": child.plants,
            "race": {"folder": self.race_folder(), "turns": child.race} if child.race else None,
            "promptTokens": self.cfg.oracle.prompt_tokens(),
        }
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        try:
            child.pid = launch.spawn(
                launch.sim_argv(launch.MODE_CHILD),
                cwd=self.cfg.cwd,
                stdin=stdin_r,
                stdout=stdout_w,
            )
        except BaseException:
            os.close(stdin_w)
            os.close(stdout_r)
            raise
        finally:
            os.close(stdin_r)
            os.close(stdout_w)
        child.stdout = stdout_r
        try:
            _write_all(stdin_w, records.dumps(spec).encode())
        finally:
            os.close(stdin_w)
        self._update(child, "running", activeSessionId=None)

    def wait(self, child: Child) -> None:
        """Collect the child's report (a forged child has one already)."""
        if child.pid is not None:
            assert child.stdout is not None
            out = _read_all(child.stdout)  # stdin is already closed: read to EOF, then reap
            os.close(child.stdout)
            child.stdout = None
            child.returncode = launch.wait_exit_code(child.pid)
            lines = out.decode(errors="replace").strip().splitlines()
            try:
                child.outcome = jsonio.loads(lines[-1]) if lines else {}
            except ValueError:
                child.outcome = {}
            if child.returncode != 0 or child.outcome.get("type") not in ("reply", "done"):
                error = child.outcome.get("error") or f"child exited with code {child.returncode}"
                child.outcome = {"type": "failed", "error": error}
        status = "failed" if child.outcome["type"] == "failed" else "done"
        self._update(
            child,
            status,
            durationMs=int((time.monotonic() - child.started) * 1000),
            tokenCount=child.outcome.get("usage", {}).get("totalTokens", 0),
            repliedSinceTask=child.outcome["type"] == "reply",
            activeSessionId=child.outcome.get("activeSessionId"),
        )

    def wait_started(self, child: Child) -> None:
        """Return once ``child`` has written its session file (or gave up trying)."""
        deadline = time.monotonic() + CHILD_START_TIMEOUT_S
        while child.pid is not None and not os.path.exists(child.file):
            if time.monotonic() > deadline:
                return
            time.sleep(CHILD_START_POLL_S)

    def tear_down(self, children: list[Child]) -> None:
        """Kill the children still running, as the one-shot CLI's exit does (it completes
        its client-owned session, and the session's children go with it)."""
        for child in children:
            if child.pid is not None:
                try:  # noqa: SIM105 (contextlib is an import a sim process can skip)
                    os.kill(child.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                launch.wait_exit_code(child.pid)
                child.pid = None
            if child.stdout is not None:
                os.close(child.stdout)
                child.stdout = None

    def delete(self, child: Child, reason: str) -> None:
        self.ledger.delete(child.child_id, child.file, reason)

    def handle(self, child: Child) -> str:
        """What ``await rlm(...)`` prints for a spawned child."""
        sub_dir = os.path.dirname(child.file)
        return (
            f"RLMSpawnHandle(rlm_child_id={child.child_id!r}, name={child.name!r}, "
            f"session_dir=PosixPath({sub_dir!r}), model={self.model!r})"
        )

    def _update(self, child: Child, status: str, **extra: Any) -> None:
        info = {
            "id": child.child_id,
            "sessionName": child.name,
            "model": self.model,
            "label": child.task,
            "status": status,
            "sessionDir": os.path.dirname(child.file),
            **{k: v for k, v in extra.items() if v is not None},
        }
        self.conv.event({"type": "rlm_child_update", "child": info})


def spawn_code(children: list[Child]) -> str:
    """The parent's ``ipython`` cell that spawns ``children``, as in the real runs."""
    calls = "".join(f"handles.append(await rlm({c.task!r}, name={c.name!r}))\n" for c in children)
    return f"handles = []\n{calls}for h in handles:\n    print(h)\n"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)
