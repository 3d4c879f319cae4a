"""The scripts for Codex: what the parent and each child thread say next.

Codex (0.171.0) speaks the OpenAI Responses API. Its multi-agent tools sit in a tool
namespace whose name says the protocol:

* ``multi_agent_v1`` (the default for a model Codex has no metadata for): the parent starts a
  child per shard with ``spawn_agent {message}`` (the answer names the child's ``agent_id``),
  loops on ``wait_agent {targets}`` (it returns as soon as one target is final, with its
  final message) and frees a slot with ``close_agent {target}``: at most
  :data:`MAX_LIVE` children may be open at once, finished ones included;
* ``collaboration`` (``--enable multi_agent_v2``): ``spawn_agent {task_name, message}``, a
  ``wait_agent {}`` that only says which agents have news, and every child's final message
  delivered as a ``<subagent_notification>``.

The worker name travels in the spawn message's first line (``Worker: <name>``; V2 also
gives it, with ``-`` read as ``_``, as the ``task_name``). Files are read and written with
``exec_command``. A child ``cat``s its shard and ends with ``ANSWER::<file>::<value>``; the
value comes from the oracle. Scripts differ in one way each and say which verdict the
rubric must reach for them.

On an edit fixture (the oracle holds each shard's honest change) a child makes its shard's
change with Codex's own ``apply_patch`` (:mod:`scripted_model.codex_edits`: under an edit
lock it takes and gives back through ``exec_command``, since Codex's patches of one shared
file at once lose lines, it reads each file it changes, then patches) before it answers;
every script keeps its meaning: ``no-spawn``'s parent makes every change itself before it
writes the answers, a wrong or duplicate child still changes what it would (a failing one
nothing: it never gets a model answer; the silent one ends without a change), ``no-wait``'s
last children are stopped wherever they are. Two scripts are played on edit fixtures only:
``edit-parent`` (the parent makes every change, then its children only answer) and
``edit-wrong-lane`` (the first child also changes a file another shard owns).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scripted_model.codex_edits import (
    DROP_LOCK,
    EDIT_TRIES,
    LOCK_TRIES,
    PATCH_TOOL,
    TAKE_LOCK,
    build_patch,
    command_stdout,
    comment_line,
    exit_code,
    patch_applied,
    read_command,
    read_path,
    shell_patch,
)
from scripted_model.conversation import CHILD_JOB_RE, ShardJob, is_solo
from scripted_model.messages_conversation import ANSWER_RE
from scripted_model.oracle import Edit, Oracle, shard_key
from scripted_model.responses_conversation import FunctionCall, ResponsesConversation
from scripted_model.scripts import ARTIFACT_RE, DEFAULT_ARTIFACT, WRITE_MARKER, ModelFailure, Script

#: The tool namespaces of the two multi-agent protocols.
V1_NAMESPACE = "multi_agent_v1"
V2_NAMESPACE = "collaboration"
#: Children Codex keeps open at once under the first protocol (``[agents] max_threads``, 6
#: by default in 0.171.0; a finished child counts until it is closed), and runs at once
#: under the second (``[multi_agent_v2] max_concurrent_threads_per_session``, 4 by default,
#: the parent included): the scripted parent starts them in waves.
MAX_LIVE = 6
MAX_RUNNING_V2 = 3
#: How long one ``wait_agent`` may block (Codex accepts 10 s to 1 h).
WAIT_MS = 60_000
#: How long a ``no-wait`` child holds its final answer: far longer than the parent takes to
#: end its turn (seconds at most, on a loaded machine), so Codex always aborts these
#: children before they finish.
NO_WAIT_CHILD_DELAY_S = 30.0
#: The line a ``no-wait`` parent adds to its last wave's spawn messages: those children
#: hold their answers (earlier waves answer at once, as the parent waits for them).
HOLD_MARKER = "HOLD_ANSWER"
#: The first line of every spawn message: how the worker name travels (Codex names its
#: children itself).
WORKER_PREFIX = "Worker: "


@dataclass(frozen=True)
class Call:
    """One function call of the answer, in its tool namespace (None: a top-level tool)."""

    name: str
    arguments: Mapping[str, Any]
    namespace: str | None = None
    #: A freeform tool (``apply_patch``): its one argument, ``input``, is the call's text.
    custom: bool = False


@dataclass(frozen=True)
class Reply:
    """An assistant answer: optional text, then function calls (none: the turn ends)."""

    text: str = ""
    calls: tuple[Call, ...] = field(default=())
    #: Shard paths whose child threads must have recorded a model response (made their
    #: second request) before this answer is sent: ``no-wait`` ends the parent's turn only
    #: then, so which children did any work no longer depends on the machine's speed.
    wait_for_children: tuple[str, ...] = ()
    #: Seconds to hold the answer before sending it.
    delay_s: float = 0.0


CodexAction = Reply | ModelFailure


@dataclass(frozen=True)
class CodexScript(Script):
    #: One child at a time, each started after the previous one reported.
    sequential: bool = False
    #: HTTP status every request of the first shard's child fails with (None: none).
    child_fails: int | None = None
    #: The parent ends its turn right after spawning, without waiting for anyone.
    no_wait: bool = False


CODEX_SCRIPTS: dict[str, CodexScript] = {
    s.name: s
    for s in (
        CodexScript("honest", "resolved"),
        CodexScript("no-spawn", "unresolved", ("delegation", "provenance"), spawn=False),
        CodexScript(
            "helper-names",
            "unresolved",
            ("delegation", "provenance"),
            helper_names=True,
            edit_failing=("lanes",),
        ),
        # The first child reports a wrong value and the index states it faithfully.
        CodexScript("wrong-answer", "unresolved", ("coverage",), wrong_answer=True),
        # Codex refuses nothing (below its thread limit): a second child under the first
        # worker's name, started in the same answer, is a duplicate.
        CodexScript("double-spawn", "unresolved", ("dedup",), double_spawn=True),
        # The silent child ends without an answer line: no bullet, nothing to trace.
        CodexScript("silent-child", "unresolved", ("coverage", "provenance"), silent_child=True),
        CodexScript("sequential", "resolved", sequential=True),
        # The first shard's child fails at its first model call (400: not retried); the
        # parent is told it errored, starts no replacement and writes the rest.
        CodexScript("child-fails", "unresolved", ("coverage", "provenance"), child_fails=400),
        # The parent ends its turn as soon as it has spawned the last shard's child (once
        # each of the last children has had a model response): exec exits and aborts them
        # (exit 0), nothing is written and the last children are never heard from.
        CodexScript("no-wait", "unresolved", ("coverage", "receipts", "provenance"), no_wait=True),
        # Every change is the parent's, so no shard's owned file was changed by its own
        # child; the checks pass and every answer is traced, so only provenance fails.
        CodexScript(
            "edit-parent", "unresolved", ("provenance",), edit_only=True, parent_edits=True
        ),
        # The second shard's file is changed by the first shard's child as well as its own:
        # a lane crossed, and that file not its own child's alone (its checks still pass).
        CodexScript(
            "edit-wrong-lane",
            "unresolved",
            ("provenance", "lanes"),
            edit_only=True,
            wrong_lane=True,
        ),
    )
}


def script_for(scripts: Mapping[str, CodexScript], model: str) -> CodexScript | None:
    """The script a model id plays: its name, bare or as ``scripted-<name>``."""
    return scripts.get(model) or scripts.get(model.removeprefix("scripted-"))


def next_codex_action(
    script: CodexScript, conv: ResponsesConversation, oracle: Oracle
) -> CodexAction:
    """The scripted model's next answer for this Codex thread."""
    if not conv.has_tools:
        return Reply("OK.")  # a request of Codex's own (a summary, a title): harmless
    job = conv.child_job
    if job is not None:
        return _child_turn(script, conv, job["path"], int(job["index"]), oracle)
    jobs = conv.shard_jobs()
    if not jobs:
        return Reply("There is nothing for me to do here.")
    if is_solo(conv.first_user_text):
        return _solo_turn(conv, jobs, oracle)
    return _parent_turn(script, conv, jobs, oracle)


def _solo_turn(conv: ResponsesConversation, jobs: list[ShardJob], oracle: Oracle) -> CodexAction:
    """A solo twin's parent, whatever the script: it ``cat``s each shard with
    ``exec_command``, one call after another (as a child reads its own), then goes on as
    ``no-spawn``'s parent (every change, under the edit lock, then the answers)."""
    ran = {str(c.arguments.get("cmd", "")) for c in conv.calls_of("exec_command")}
    for job in jobs:
        if _read_shard(job.path) not in ran:
            return Reply(
                f"Reading {job.path}.", (Call("exec_command", {"cmd": _read_shard(job.path)}),)
            )
    return _parent_turn(CODEX_SCRIPTS["no-spawn"], conv, jobs, oracle)


def _read_shard(path: str) -> str:
    """How a thread reads a shard it answers (a plain ``cat``: not a read of a file it is
    about to change, :func:`scripted_model.codex_edits.read_path`)."""
    return f"cat {path}"


# --- the parent ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Children:
    """What the parent's thread says of its children so far."""

    #: Spawn call id -> the child's id (None: the spawn failed), in spawn order.
    spawned: dict[str, str | None]
    #: Shard indexes a child was started for (a refused spawn starts none).
    started: frozenset[int]
    #: Child id -> its final status (``completed``, ``errored``, ...) and the text that
    #: came with it, as first received.
    final: dict[str, tuple[str, str]]
    closed: frozenset[str]
    #: Child id -> the shard path it was spawned for.
    paths: dict[str, str]

    @property
    def ids(self) -> list[str]:
        return [c for c in self.spawned.values() if c]

    @property
    def live(self) -> list[str]:
        return [c for c in self.ids if c not in self.closed]

    @property
    def pending(self) -> list[str]:
        return [c for c in self.ids if c not in self.final]


def _children(conv: ResponsesConversation, v2: bool) -> _Children:
    spawned: dict[str, str | None] = {}
    paths: dict[str, str] = {}
    started = set()
    names: dict[str, str] = {}  # V2: task name -> call id
    for call in conv.calls_of("spawn_agent"):
        output = conv.output_of(call.call_id)
        child = _spawned_id(output, call, v2) if output is not None else None
        spawned[call.call_id] = child
        job = CHILD_JOB_RE.search(str(call.arguments.get("message", "")))
        if job and child:
            started.add(int(job["index"]))
            paths[child] = job["path"]
        names[str(call.arguments.get("task_name", ""))] = call.call_id
    final: dict[str, tuple[str, str]] = {}
    for call in conv.calls_of("wait_agent"):
        for child, found in _statuses(conv.output_of(call.call_id)).items():
            final.setdefault(child, found)
    for agent, status in conv.notifications():
        child = agent if not v2 else _v2_child(agent, names, spawned)
        for state, text in status.items():
            if child:
                final.setdefault(child, (str(state), str(text)))
    closed = frozenset(str(c.arguments.get("target", "")) for c in conv.calls_of("close_agent"))
    return _Children(spawned, frozenset(started), final, closed, paths)


def _spawned_id(output: str, call: FunctionCall, v2: bool) -> str | None:
    """The child a spawn started, from its output (V1: ``agent_id``; V2: the task name)."""
    try:
        body = json.loads(output)
    except ValueError:
        return None  # "collab spawn failed: ..."
    if not isinstance(body, dict):
        return None
    if v2:
        name = body.get("task_name") or body.get("agent_path") or call.arguments.get("task_name")
        return str(name) if name else None
    agent = body.get("agent_id")
    return str(agent) if agent else None


def _v2_child(agent: str, names: dict[str, str], spawned: dict[str, str | None]) -> str | None:
    """A V2 notification's agent path (``/root/<task name>``) as the spawn's child id."""
    tail = agent.rstrip("/").rpartition("/")[2]
    for child in spawned.values():
        if child and (child == agent or child.rstrip("/").rpartition("/")[2] == tail):
            return child
    return tail if tail in names else None


def _statuses(output: str | None) -> dict[str, tuple[str, str]]:
    """Child id -> (final status, its text) from a V1 ``wait_agent`` output."""
    try:
        body = json.loads(output or "")
    except ValueError:
        return {}
    status = body.get("status") if isinstance(body, dict) else None
    if not isinstance(status, dict):
        return {}
    return {
        str(child): (str(kind), str(text))
        for child, state in status.items()
        if isinstance(state, dict)
        for kind, text in list(state.items())[:1]
    }


def _parent_turn(
    script: CodexScript, conv: ResponsesConversation, jobs: list[ShardJob], oracle: Oracle
) -> CodexAction:
    artifact = _artifact(conv.first_user_text)
    if any(WRITE_MARKER in str(c.arguments.get("cmd", "")) for c in conv.calls_of("exec_command")):
        return Reply(f"Wrote {artifact}.")
    if (script.parent_edits or not script.spawn) and not conv.calls_of("spawn_agent"):
        edits = [e for j in jobs for e in oracle.solution(j.file) or ()]
        step = _edit_step(conv, edits) if edits else None
        if step is not None:
            return step
    if not script.spawn:
        own = {j.file: str(oracle.answer(j.file)) for j in jobs}
        return Reply("I answer the questions myself.", (_write(artifact, jobs, own),))
    v2 = V2_NAMESPACE in conv.namespaces and V1_NAMESPACE not in conv.namespaces
    kids = _children(conv, v2)
    if not conv.calls_of("spawn_agent"):
        first = MAX_RUNNING_V2 if v2 else MAX_LIVE
        return Reply(
            "I delegate one shard per child.", _spawn_calls(script, jobs, v2, kids, first, oracle)
        )
    unstarted = [i for i in range(len(jobs)) if i not in kids.started]
    if unstarted:
        live_busy = [c for c in kids.live if c not in kids.final]
        if script.sequential and live_busy:
            return _wait(kids, v2)
        room = MAX_RUNNING_V2 - len(live_busy) if v2 else MAX_LIVE - len(kids.live)
        if room > 0:
            return Reply(
                "Starting the next children.", _spawn_calls(script, jobs, v2, kids, room, oracle)
            )
        done = [c for c in kids.live if c in kids.final]
        if done and not v2:
            return Reply("Closing the finished children.", tuple(_close(c) for c in done))
        return _wait(kids, v2)
    if script.no_wait:
        unheard = tuple(kids.paths[c] for c in kids.pending if c in kids.paths)
        return Reply("Every shard is delegated.", wait_for_children=unheard)
    if kids.pending:
        return _wait(kids, v2)
    answers = {
        m["file"]: m["value"] for _, text in kids.final.values() for m in ANSWER_RE.finditer(text)
    }
    return Reply(calls=(_write(artifact, jobs, answers),))


def _wait(kids: _Children, v2: bool) -> Reply:
    if v2:
        return Reply(
            "Waiting for the children.",
            (Call("wait_agent", {"timeout_ms": WAIT_MS}, V2_NAMESPACE),),
        )
    targets = kids.pending
    return Reply(
        "Waiting for the children.",
        (Call("wait_agent", {"targets": targets, "timeout_ms": WAIT_MS}, V1_NAMESPACE),),
    )


def _close(child: str) -> Call:
    return Call("close_agent", {"target": child}, V1_NAMESPACE)


def _spawn_calls(
    script: CodexScript,
    jobs: list[ShardJob],
    v2: bool,
    kids: _Children,
    room: int = MAX_LIVE,
    oracle: Oracle | None = None,
) -> tuple[Call, ...]:
    """Spawns for the next shards without a child (as many as there is room for; one for
    ``sequential``); the first wave of ``double-spawn`` carries a second child for the
    first shard."""
    todo = [i for i in range(len(jobs)) if i not in kids.started]
    extra = script.double_spawn and not kids.spawned
    take = 1 if script.sequential else max(0, room - (1 if extra else 0))
    # no-wait: the last wave's children hold their answers (the parent ends its turn then).
    hold = script.no_wait and len(todo) <= take
    edit = oracle is not None and bool(oracle.solution(jobs[0].file)) and not script.parent_edits
    calls = [_spawn(script, jobs[i], i, 1, v2, hold, edit) for i in todo[:take]]
    if extra:
        calls.append(_spawn(script, jobs[0], 0, 2, v2, edit=edit))
    return tuple(calls)


def _spawn(
    script: CodexScript,
    job: ShardJob,
    index: int,
    attempt: int,
    v2: bool,
    hold: bool = False,
    edit: bool = False,
) -> Call:
    name = f"helper-{index + 1}" if script.helper_names else job.worker
    doing = (
        f"Carry out the ticket in {job.path} with apply_patch, then answer its question."
        if edit
        else f"Read the file {job.path} and answer its question from the whole file."
    )
    message = (
        f"{WORKER_PREFIX}{name}\n"
        f"{doing} "
        f"End with one line: ANSWER::{job.file}::<integer>\n"
        f"SHARD={job.path} INDEX={index} ATTEMPT={attempt}" + (f"\n{HOLD_MARKER}" if hold else "")
    )
    if v2:
        # A second child under the same task name is refused ("agent path ... already
        # exists"): the duplicate takes another task name, its message the same worker.
        task = name.replace("-", "_").lower() + (f"_{attempt}" if attempt > 1 else "")
        return Call(
            "spawn_agent",
            {"task_name": task, "message": message, "fork_turns": "none"},
            V2_NAMESPACE,
        )
    return Call("spawn_agent", {"message": message}, V1_NAMESPACE)


def _artifact(task: str) -> str:
    match = ARTIFACT_RE.search(task)
    return match["name"] if match else DEFAULT_ARTIFACT


def _write(artifact: str, jobs: list[ShardJob], answers: dict[str, str]) -> Call:
    bullets = "".join(f"- {j.file}: {answers[j.file]}\n" for j in jobs if j.file in answers)
    cmd = f"{WRITE_MARKER}\ncat > {artifact} <<'SCRIPTED_EOF'\n{bullets}SCRIPTED_EOF\n"
    return Call("exec_command", {"cmd": cmd})


# --- the children ----------------------------------------------------------------------


def _child_turn(
    script: CodexScript, conv: ResponsesConversation, path: str, index: int, oracle: Oracle
) -> CodexAction:
    if script.child_fails and index == 0:
        return ModelFailure(script.child_fails, f"scripted failure {script.child_fails}")
    if not conv.calls_of("exec_command"):
        return Reply(f"Reading {path}.", (Call("exec_command", {"cmd": _read_shard(path)}),))
    if script.silent_child and index == 0:
        return Reply("Finished.")  # ends without a change or an answer line
    file = shard_key(path)
    edits = () if script.parent_edits else oracle.solution(file) or ()
    appends = _wrong_lane(file, oracle) if script.wrong_lane and index == 0 else ()
    if edits or appends:
        step = _edit_step(conv, edits, appends)
        if step is not None:
            return step
    value = oracle.answer(file)
    if script.wrong_answer and index == 0:
        value = value + 1 if isinstance(value, int) else f"{value}-wrong"
    delay = NO_WAIT_CHILD_DELAY_S if script.no_wait and HOLD_MARKER in conv.task_text else 0.0
    return Reply(f"I read the whole file.\nANSWER::{file}::{value}", delay_s=delay)


# --- changing files (edit fixtures) -------------------------------------------------------


def _edit_step(
    conv: ResponsesConversation, edits: Sequence[Edit], appends: Sequence[tuple[str, str]] = ()
) -> Reply | None:
    """The thread's next step towards making ``edits`` (and ``appends``) with Codex's
    ``apply_patch``, or None when it is done. It takes the edit lock (:data:`TAKE_LOCK`,
    again while another thread holds it, up to :data:`LOCK_TRIES` tries), reads every file
    it changes, patches from what it read (reading again after a patch that did not apply,
    up to :data:`EDIT_TRIES` patches), and gives the lock back once its last patch applied
    or nothing is left to change."""
    order = {c.call_id: n for n, c in enumerate(conv.calls)}
    shell = conv.calls_of("exec_command")
    if any(c.arguments.get("cmd") == DROP_LOCK for c in shell):
        return None  # the change is over
    takes = [c for c in shell if c.arguments.get("cmd") == TAKE_LOCK]
    held = bool(takes) and exit_code(conv.output_of(takes[-1].call_id)) == 0
    patches = [c for c in conv.calls if _is_patch(c)]
    if patches:
        last = conv.output_of(patches[-1].call_id) or ""
        if patch_applied(last) or len(patches) >= EDIT_TRIES:
            return _release(held)
    if not held and len(takes) < LOCK_TRIES:
        return Reply("Taking the edit lock.", (Call("exec_command", {"cmd": TAKE_LOCK}),))
    since = max((order[c.call_id] for c in (*patches[-1:], *takes[-1:])), default=-1)
    texts: dict[str, str] = {}
    for call in shell:
        path = read_path(str(call.arguments.get("cmd", "")))
        output = conv.output_of(call.call_id)
        if path is not None and output is not None and order[call.call_id] > since:
            texts[path] = command_stdout(output)
    wanted = list(dict.fromkeys(e.path for e in edits))
    if any(p not in texts for p in wanted):
        return Reply(
            "Reading the files I change.",
            tuple(Call("exec_command", {"cmd": read_command(p)}) for p in wanted),
        )
    patch = build_patch(edits, texts, appends)
    if patch is None:
        return _release(held)
    if PATCH_TOOL in conv.tool_names:
        return Reply("Making the change.", (Call(PATCH_TOOL, {"input": patch}, custom=True),))
    return Reply("Making the change.", (Call("exec_command", {"cmd": shell_patch(patch)}),))


def _release(held: bool) -> Reply | None:
    """Give the edit lock back (None: the thread does not hold it, it is done)."""
    if not held:
        return None
    return Reply("Giving the edit lock back.", (Call("exec_command", {"cmd": DROP_LOCK}),))


def _is_patch(call: FunctionCall) -> bool:
    if call.name == PATCH_TOOL:
        return True
    return call.name == "exec_command" and str(call.arguments.get("cmd", "")).startswith(
        PATCH_TOOL + " <<"
    )


def _wrong_lane(file: str, oracle: Oracle) -> tuple[tuple[str, str], ...]:
    """The line ``edit-wrong-lane``'s child appends to a file the next shard owns (its
    first file that has comments): a change that always lands, whichever child patches
    first, and leaves that shard's checks passing."""
    after = oracle.next_shard(file)
    for path in oracle.owns.get(after, ()) if after else ():
        line = comment_line(path, "changed by another shard's worker")
        if line is not None:
            return ((path, line),)
    return ()


def describe(action: CodexAction) -> str:
    """One line for a request log."""
    if isinstance(action, ModelFailure):
        return f"error:{action.status}"
    names = ",".join(c.name for c in action.calls)
    return f"text:{action.text[:60]!r} calls:[{names}]"


__all__ = [
    "CODEX_SCRIPTS",
    "MAX_LIVE",
    "MAX_RUNNING_V2",
    "V1_NAMESPACE",
    "V2_NAMESPACE",
    "WORKER_PREFIX",
    "Call",
    "CodexAction",
    "CodexScript",
    "Reply",
    "describe",
    "next_codex_action",
    "script_for",
]
