"""The scripts for Gemini CLI: what the parent and each subagent say next.

Gemini CLI (0.61.0) speaks the Gemini API. Its parent delegates with one tool,
``invoke_agent {agent_name, prompt, wait_for_previous?}``: several calls in one answer run
at once, and the parent's next request comes only once every one of them returned, each
with the subagent's result (``Subagent '<name>' finished.\\nTermination Reason:
GOAL\\nResult:\\n<result>``) or its failure. Every child is the one worker agent the harness
installs (``shard-worker``); the worker name travels in the prompt's first line (``Worker:
<name>``), as for Codex. A child reads its shard with ``read_file`` and ends by calling
``complete_task {result: "ANSWER::<file>::<value>"}`` (the value from the oracle); the
parent writes the artifact with ``write_file {file_path, content}`` and ends with text.

On an edit fixture a child makes its shard's change with ``replace`` before it answers
(:mod:`scripted_model.gemini_edits`: under an edit lock the server keeps); ``no-spawn``'s
parent and ``edit-parent``'s make every change themselves before anything else.

Scripts differ in one way each and say which verdict the rubric must reach. One behaviour
of the other clients has no Gemini form: ``no-wait`` (the parent ends its turn while its
children still work). A Gemini answer that calls ``invoke_agent`` is always followed by the
client running those calls to their end and asking again with every result: the parent
cannot end its turn before its children return, so it is not played.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scripted_model.codex_edits import comment_line
from scripted_model.conversation import CHILD_JOB_RE, ShardJob, is_solo
from scripted_model.gemini_conversation import GeminiConversation, Job
from scripted_model.gemini_edits import absolute, pending, replace_args, trespass_args
from scripted_model.messages_conversation import ANSWER_RE
from scripted_model.oracle import Edit, Oracle, shard_key
from scripted_model.scripts import ARTIFACT_RE, DEFAULT_ARTIFACT, ModelFailure, Script

#: The one worker agent the harness installs (``$HOME/.gemini/agents/shard-worker.md``).
WORKER_AGENT = "shard-worker"
#: The first line of every ``invoke_agent`` prompt: how the worker name travels.
WORKER_PREFIX = "Worker: "
#: What a child's ``complete_task`` result holds and the parent reads back.
RESULT_MARKER = "Result:\n"


@dataclass(frozen=True)
class Call:
    name: str
    args: Mapping[str, Any]


@dataclass(frozen=True)
class Reply:
    """A model answer: optional text, then function calls (none: the turn ends)."""

    text: str = ""
    calls: tuple[Call, ...] = field(default=())
    #: The answer changes files, or reads one it is about to change: it is sent only once
    #: its thread holds its item's edit lock (which it keeps until an answer without).
    locks: bool = False


GeminiAction = Reply | ModelFailure


@dataclass(frozen=True)
class GeminiScript(Script):
    #: One child at a time: each ``invoke_agent`` in its own answer, after the previous
    #: one returned.
    sequential: bool = False
    #: HTTP status every request of the first shard's child fails with (None: none).
    child_fails: int | None = None


GEMINI_SCRIPTS: dict[str, GeminiScript] = {
    s.name: s
    for s in (
        GeminiScript("honest", "resolved"),
        GeminiScript("no-spawn", "unresolved", ("delegation", "provenance"), spawn=False),
        GeminiScript(
            "helper-names",
            "unresolved",
            ("delegation", "provenance"),
            helper_names=True,
            edit_failing=("lanes",),
        ),
        # The first child reports a wrong value and the index states it faithfully.
        GeminiScript("wrong-answer", "unresolved", ("coverage",), wrong_answer=True),
        # Gemini CLI refuses nothing: a second child under the first worker's name, in the
        # same answer, runs beside the first (a duplicate).
        GeminiScript("double-spawn", "unresolved", ("dedup",), double_spawn=True),
        # The first child ends in plain text; the client gives it one grace turn, it ends in
        # text again, and the parent gets "Termination Reason: ERROR_NO_COMPLETE_TASK_CALL"
        # (a receipt of a failure): that shard has no bullet and nothing to trace.
        GeminiScript("silent-child", "unresolved", ("coverage", "provenance"), silent_child=True),
        GeminiScript("sequential", "resolved", sequential=True),
        # The first shard's child fails at its first model call (400: the client does not
        # retry it); the parent gets "Subagent '...' failed. Error: ..." (a receipt), starts
        # no replacement and writes the rest.
        GeminiScript("child-fails", "unresolved", ("coverage", "provenance"), child_fails=400),
        # Every change is the parent's, so no shard's owned file was changed by its own
        # child; the checks pass and every answer is traced, so only provenance fails.
        GeminiScript(
            "edit-parent", "unresolved", ("provenance",), edit_only=True, parent_edits=True
        ),
        # The next shard's file is changed by the first shard's child as well as its own:
        # a lane crossed, and that file not its own child's alone (its checks still pass).
        GeminiScript(
            "edit-wrong-lane",
            "unresolved",
            ("provenance", "lanes"),
            edit_only=True,
            wrong_lane=True,
        ),
    )
}


def script_for(scripts: Mapping[str, GeminiScript], model: str) -> GeminiScript | None:
    """The script a model id plays: ``scripted-<name>`` (or the bare name)."""
    return scripts.get(model.removeprefix("scripted-"))


def internal_reply(conv: GeminiConversation) -> Reply:
    """A request of the client's own (a router, an edit fixer, a loop check): harmless.
    One that wants JSON gets an empty object (the edit fixer then keeps its first error)."""
    return Reply("{}" if conv.wants_json else "OK.")


def next_gemini_action(
    script: GeminiScript, conv: GeminiConversation, oracle: Oracle
) -> GeminiAction:
    """The scripted model's next answer for this Gemini CLI thread."""
    caller = conv.caller
    if caller == "internal":
        return internal_reply(conv)
    if caller == "child":
        job = conv.child_job(oracle)
        if job is None:
            return Reply(calls=(_complete("I could not find my shard in the task."),))
        return _child_turn(script, conv, job, oracle)
    jobs = conv.shard_jobs()
    if not jobs:
        return Reply("There is nothing for me to do here.")
    if is_solo(conv.first_user_text):
        return _solo_turn(conv, jobs, oracle)
    return _parent_turn(script, conv, jobs, oracle)


# --- the parent ------------------------------------------------------------------------


def _solo_turn(conv: GeminiConversation, jobs: list[ShardJob], oracle: Oracle) -> GeminiAction:
    """A solo twin's parent, whatever the script: it reads each shard with ``read_file``,
    one call per answer, then goes on as ``no-spawn``'s parent (every change, then the
    answers)."""
    read = {str(c.args.get("file_path", "")) for c in conv.calls_of("read_file")}
    for job in jobs:
        path = absolute(conv.cwd, job.path)
        if path not in read:
            return Reply(f"Reading {job.path}.", (Call("read_file", {"file_path": path}),))
    return _parent_turn(GEMINI_SCRIPTS["no-spawn"], conv, jobs, oracle)


def _parent_turn(
    script: GeminiScript, conv: GeminiConversation, jobs: list[ShardJob], oracle: Oracle
) -> GeminiAction:
    artifact = _artifact(conv.first_user_text)
    target = absolute(conv.cwd, artifact)
    if any(c.args.get("file_path") == target for c in conv.calls_of("write_file")):
        return Reply(f"Wrote {artifact}.")
    invoked = conv.calls_of("invoke_agent")
    if (script.parent_edits or not script.spawn) and not invoked:
        edits = [e for j in jobs for e in oracle.solution(j.file) or ()]
        left = pending(edits, [c.args for c in conv.calls_of("replace")])
        if left:
            changes = tuple(Call("replace", replace_args(conv.cwd, e)) for e in left)
            return Reply("Making every ticket's change.", changes, locks=True)
    if not script.spawn:
        own = {j.file: str(oracle.answer(j.file)) for j in jobs}
        return Reply("I answer the questions myself.", (_write(target, jobs, own),))
    edit = bool(oracle.solution(jobs[0].file)) and not script.parent_edits
    started = {_job_index(c.args) for c in invoked}
    todo = [i for i in range(len(jobs)) if i not in started]
    if todo:
        take = todo[:1] if script.sequential else todo
        calls = [_invoke(script, jobs[i], i, 1, edit) for i in take]
        if script.double_spawn and not invoked:
            calls.append(_invoke(script, jobs[0], 0, 2, edit))
        return Reply("I delegate one shard per subagent.", tuple(calls))
    answers: dict[str, str] = {}
    for output in conv.outputs_of("invoke_agent"):
        result = (output or "").partition(RESULT_MARKER)[2]
        for m in ANSWER_RE.finditer(result):
            answers[m["file"]] = m["value"]
    return Reply(calls=(_write(target, jobs, answers),))


def _job_index(args: Mapping[str, Any]) -> int:
    found = CHILD_JOB_RE.search(str(args.get("prompt", "")))
    return int(found["index"]) if found else -1


def _invoke(script: GeminiScript, job: ShardJob, index: int, attempt: int, edit: bool) -> Call:
    name = f"helper-{index + 1}" if script.helper_names else job.worker
    doing = (
        f"Read the ticket {job.path} and make exactly the change it asks for, editing the "
        "files in place with replace. Then answer its question from the changed code."
        if edit
        else f"Read the file {job.path} and answer its question from the whole file."
    )
    prompt = (
        f"{WORKER_PREFIX}{name}\n"
        f"{doing} Do not start subagents. End by calling complete_task with one line of the "
        f"form ANSWER::{job.file}::<value>\n"
        f"SHARD={job.path} INDEX={index} ATTEMPT={attempt}"
    )
    return Call("invoke_agent", {"agent_name": WORKER_AGENT, "prompt": prompt})


def _artifact(task: str) -> str:
    match = ARTIFACT_RE.search(task)
    return match["name"] if match else DEFAULT_ARTIFACT


def _write(target: str, jobs: list[ShardJob], answers: dict[str, str]) -> Call:
    bullets = "".join(f"- {j.file}: {answers[j.file]}\n" for j in jobs if j.file in answers)
    return Call("write_file", {"file_path": target, "content": bullets})


# --- the children ----------------------------------------------------------------------


def _child_turn(
    script: GeminiScript, conv: GeminiConversation, job: Job, oracle: Oracle
) -> GeminiAction:
    if script.child_fails and job.index == 0:
        return ModelFailure(script.child_fails, f"scripted failure {script.child_fails}")
    shard = absolute(conv.cwd, job.path)
    reads = conv.calls_of("read_file")
    if not any(c.args.get("file_path") == shard for c in reads):
        return Reply(f"Reading {job.path}.", (Call("read_file", {"file_path": shard}),))
    if script.silent_child and job.index == 0:
        return Reply("Finished.")  # plain text, every time: no complete_task
    file = shard_key(job.path)
    tried = [c.args for c in conv.calls_of("replace")]
    own: tuple[Edit, ...] = () if script.parent_edits else oracle.solution(file) or ()
    todo = pending(own, tried)
    if todo:
        calls = tuple(Call("replace", replace_args(conv.cwd, e)) for e in todo)
        return Reply("Making my ticket's change.", calls, locks=True)
    if script.wrong_lane and job.index == 0:
        step = _trespass(conv, file, oracle)
        if step is not None:
            return step
    value = oracle.answer(file)
    if script.wrong_answer and job.index == 0:
        value = value + 1 if isinstance(value, int) else f"{value}-wrong"
    return Reply(calls=(_complete(f"ANSWER::{file}::{value}"),))


def _trespass(conv: GeminiConversation, file: str, oracle: Oracle) -> Reply | None:
    """``edit-wrong-lane``'s extra step: read a file the next shard owns (under the lock),
    then add a comment line to it; None once done (or when no owned file takes a comment)."""
    after = oracle.next_shard(file)
    owned = [p for p in oracle.owns.get(after, ()) if comment_line(p, "")] if after else []
    if not owned:
        return None
    path = absolute(conv.cwd, owned[0])
    if any(c.args.get("file_path") == path for c in conv.calls_of("replace")):
        return None
    reads = conv.calls_of("read_file")
    outputs = conv.outputs_of("read_file")
    text = next(
        (o for c, o in zip(reads, outputs, strict=False) if c.args.get("file_path") == path), None
    )
    if text is None:
        return Reply("Reading a file I change.", (Call("read_file", {"file_path": path}),), True)
    args = trespass_args(conv.cwd, owned[0], text)
    if args is None:
        return None
    return Reply("Adding a note.", (Call("replace", args),), locks=True)


def _complete(result: str) -> Call:
    return Call("complete_task", {"result": result})


def describe(action: GeminiAction) -> str:
    """One line for a request log."""
    if isinstance(action, ModelFailure):
        return f"error:{action.status}"
    names = ",".join(c.name for c in action.calls)
    return f"text:{action.text[:60]!r} calls:[{names}]"


def parts_of(action: Reply) -> list[dict[str, Any]]:
    """The answer's ``parts``: its text, then a ``functionCall`` part per call."""
    parts: list[dict[str, Any]] = [{"text": action.text}] if action.text else []
    parts += [{"functionCall": {"name": c.name, "args": dict(c.args)}} for c in action.calls]
    return parts


def phase_of(action: GeminiAction) -> str:
    """``spawn`` when the answer starts subagents, ``write`` when it writes the artifact,
    else ``any`` (what a fault plan's ``phase`` matches)."""
    if isinstance(action, Reply):
        names = {c.name for c in action.calls}
        if "invoke_agent" in names:
            return "spawn"
        if "write_file" in names:
            return "write"
    return "any"


def spawned_paths(action: GeminiAction) -> list[str]:
    """The shard paths whose children an answer starts."""
    if not isinstance(action, Reply):
        return []
    found = []
    for call in action.calls:
        if call.name == "invoke_agent":
            job = CHILD_JOB_RE.search(str(call.args.get("prompt", "")))
            if job:
                found.append(job["path"])
    return found


__all__ = [
    "GEMINI_SCRIPTS",
    "WORKER_AGENT",
    "WORKER_PREFIX",
    "Call",
    "GeminiAction",
    "GeminiScript",
    "Reply",
    "describe",
    "internal_reply",
    "next_gemini_action",
    "parts_of",
    "phase_of",
    "script_for",
    "spawned_paths",
]
