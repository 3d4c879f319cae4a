"""The scripts for opencode: what the parent and each subagent say next.

opencode (1.18.33, its Anthropic provider) speaks the Messages API like Claude Code, with
its own tools: the parent spawns one subagent per shard with ``task`` (``description`` =
the worker name the task asks for, ``prompt``, ``subagent_type: "general"``); several
``task`` calls in one message run at once and all come back in the next request as
``tool_result`` blocks (``<task id=...><task_result>...</task_result></task>``, or
``is_error`` with ``Subagent failed ...``). It then writes the artifact with ``write``
(``filePath`` absolute, ``content``). A subagent ``read``s its shard (``filePath``) and ends
with ``ANSWER::<file>::<value>``; the value comes from the oracle. The system prompt names
the working directory (``Working directory: ...``), which the absolute paths need.

On an edit fixture (the oracle knows each shard's ``solution``) a subagent that works also
makes its shard's change before it answers, with opencode's own ``edit`` tool: one call per
replacement (``filePath`` absolute, ``oldString``, ``newString``), all in one message
(opencode runs them at once and holds one lock per file, so replacements in one file never
lose each other). opencode 1.18.33 offers an Anthropic model ``edit`` and ``write`` (no
``apply_patch``, no ``multiedit``) and needs no ``read`` before an edit
(``tests/data/opencode-edit-runs``). What each script does there is in
:data:`scripted_model.scripts.EDIT_BEHAVIOURS`.

Scripts differ in one way each and say which verdict the rubric must reach for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scripted_model.claude_scripts import Call, ClaudeAction, Reply
from scripted_model.conversation import ShardJob, is_solo
from scripted_model.messages_conversation import ANSWER_RE, MessagesConversation
from scripted_model.oracle import Edit, Oracle, shard_key
from scripted_model.scripts import ARTIFACT_RE, DEFAULT_ARTIFACT, ModelFailure, Script

#: The subagent type every spawn names (opencode's built-in general-purpose subagent).
SUBAGENT_TYPE = "general"


@dataclass(frozen=True)
class OpenCodeScript(Script):
    #: One ``task`` call per assistant message, each after the previous one came back.
    sequential: bool = False
    #: HTTP status every request of the first shard's subagent fails with (None: none).
    child_fails: int | None = None


OPENCODE_SCRIPTS: dict[str, OpenCodeScript] = {
    s.name: s
    for s in (
        OpenCodeScript("honest", "resolved"),
        OpenCodeScript("no-spawn", "unresolved", ("delegation", "provenance"), spawn=False),
        # On an edit fixture the helpers change the workers' files: outside any lane.
        OpenCodeScript(
            "helper-names",
            "unresolved",
            ("delegation", "provenance"),
            helper_names=True,
            edit_failing=("lanes",),
        ),
        # The first subagent reports a wrong value and the index states it faithfully.
        OpenCodeScript("wrong-answer", "unresolved", ("coverage",), wrong_answer=True),
        # opencode refuses nothing: a second subagent under the first worker's name, started
        # in the same message as the first, is a duplicate.
        OpenCodeScript("double-spawn", "unresolved", ("dedup",), double_spawn=True),
        # The silent subagent ends without an answer line: no bullet, nothing to trace.
        OpenCodeScript("silent-child", "unresolved", ("coverage", "provenance"), silent_child=True),
        # One subagent at a time, each started after the previous one reported.
        OpenCodeScript("sequential", "resolved", sequential=True),
        # The first shard's subagent fails at its first model call (400: opencode does not
        # retry it); the parent gets the error, starts no replacement and writes the rest.
        OpenCodeScript("child-fails", "unresolved", ("coverage", "provenance"), child_fails=400),
        # Every change is right and every answer traced, but the parent made every change
        # itself once the answers were in: no shard's files were changed by its own child.
        OpenCodeScript(
            "edit-parent", "unresolved", ("provenance",), edit_only=True, parent_edits=True
        ),
        # One subagent at a time, so the order is fixed: the first shard's subagent also
        # changes the file the next shard owns and changes it back; the next one, started
        # after it reported, then makes its own change. Every check passes, but a child
        # wrote outside its lane, and that file was not written by its own child alone.
        OpenCodeScript(
            "edit-wrong-lane",
            "unresolved",
            ("provenance", "lanes"),
            edit_only=True,
            wrong_lane=True,
            sequential=True,
        ),
    )
}


def next_opencode_action(
    script: OpenCodeScript, conv: MessagesConversation, oracle: Oracle
) -> ClaudeAction:
    """The scripted model's next message for this opencode conversation."""
    if not conv.has_tools:
        return Reply("OK.")  # opencode's own requests (a title, a summary): harmless
    job = conv.child_job
    if job is not None:
        index, attempt = int(job["index"]), int(job["attempt"])
        return _subagent_turn(script, conv, job["path"], index, attempt, oracle)
    jobs = conv.shard_jobs()
    if not jobs:
        return Reply("There is nothing for me to do here.")
    if is_solo(conv.first_user_text):
        return _solo_turn(conv, jobs, oracle)
    return _parent_turn(script, conv, jobs, oracle)


# --- the parent ------------------------------------------------------------------------


def _parent_turn(
    script: OpenCodeScript, conv: MessagesConversation, jobs: list[ShardJob], oracle: Oracle
) -> ClaudeAction:
    artifact = _artifact(conv.first_user_text)
    if conv.uses_of("write"):
        return Reply(f"Wrote {artifact}.")
    edits = [edit for job in jobs for edit in oracle.solution(job.file) or ()]
    if not script.spawn:
        if edits and not conv.uses_of("edit"):
            return Reply("I make every change myself.", _edit_calls(conv, edits))
        own = {j.file: str(oracle.answer(j.file)) for j in jobs}
        return Reply("I answer the questions myself.", (_write(conv, artifact, jobs, own),))
    tasks = conv.uses_of("task")
    back = {r.tool_use_id for r in conv.tool_results}
    if any(t.id not in back for t in tasks):
        return Reply("Waiting for the subagents to report.")
    if script.sequential and len(tasks) < len(jobs):
        i = len(tasks)
        return Reply(f"Delegating shard {i + 1}.", (_task(script, jobs[i], i, 1, oracle),))
    if not tasks:
        calls = [_task(script, job, i, 1, oracle) for i, job in enumerate(jobs)]
        if script.double_spawn:
            calls.append(_task(script, jobs[0], 0, 2, oracle))
        return Reply("I delegate one shard per subagent.", tuple(calls))
    if script.parent_edits and edits and not conv.uses_of("edit"):
        return Reply("Every subagent reported; I make the changes.", _edit_calls(conv, edits))
    answers: dict[str, str] = {}
    for result in conv.tool_results:
        if not result.is_error:
            answers.update(_answers(result.text))
    return Reply(calls=(_write(conv, artifact, jobs, answers),))


def _solo_turn(conv: MessagesConversation, jobs: list[ShardJob], oracle: Oracle) -> ClaudeAction:
    """A solo twin's parent, whatever the script: it ``read``s each shard, one call after
    another, then goes on as ``no-spawn``'s parent (every change, then the answers)."""
    read = {u.input.get("filePath") for u in conv.uses_of("read")}
    for job in jobs:
        path = _abspath(conv, job.path)
        if path not in read:
            return Reply(f"Reading {job.path}.", (Call("read", {"filePath": path}),))
    return _parent_turn(OPENCODE_SCRIPTS["no-spawn"], conv, jobs, oracle)


def _answers(text: str) -> dict[str, str]:
    return {m["file"]: m["value"] for m in ANSWER_RE.finditer(text)}


def _task(script: OpenCodeScript, job: ShardJob, index: int, attempt: int, oracle: Oracle) -> Call:
    change = ""
    if oracle.solution(job.file) and not script.parent_edits:  # an edit fixture's ticket
        change = "Make the change it asks for with your edit tool, in the files it names. "
    prompt = (
        f"Read the file {job.path} and answer its question from the whole file. {change}"
        f"End with one line: ANSWER::{job.file}::<integer>\n"
        f"SHARD={job.path} INDEX={index} ATTEMPT={attempt}"
    )
    name = f"helper-{index + 1}" if script.helper_names else job.worker
    spawn: dict[str, Any] = {"description": name, "prompt": prompt, "subagent_type": SUBAGENT_TYPE}
    return Call("task", spawn)


def _artifact(task: str) -> str:
    match = ARTIFACT_RE.search(task)
    return match["name"] if match else DEFAULT_ARTIFACT


def _abspath(conv: MessagesConversation, rel: str) -> str:
    return f"{conv.cwd.rstrip('/')}/{rel}" if conv.cwd else rel


def _edit_calls(
    conv: MessagesConversation, edits: list[Edit], undo: bool = False
) -> tuple[Call, ...]:
    """One ``edit`` call per replacement (``undo``: from the new text back to the old)."""
    return tuple(
        Call(
            "edit",
            {
                "filePath": _abspath(conv, e.path),
                "oldString": e.new if undo else e.old,
                "newString": e.old if undo else e.new,
            },
        )
        for e in edits
    )


def _write(
    conv: MessagesConversation, artifact: str, jobs: list[ShardJob], answers: dict[str, str]
) -> Call:
    bullets = "".join(f"- {j.file}: {answers[j.file]}\n" for j in jobs if j.file in answers)
    return Call("write", {"filePath": _abspath(conv, artifact), "content": bullets})


# --- the subagents ---------------------------------------------------------------------


def _subagent_turn(
    script: OpenCodeScript,
    conv: MessagesConversation,
    path: str,
    index: int,
    attempt: int,
    oracle: Oracle,
) -> ClaudeAction:
    if script.child_fails and index == 0:
        return ModelFailure(script.child_fails, f"scripted failure {script.child_fails}")
    if not conv.uses_of("read"):
        return Reply(f"Reading {path}.", (Call("read", {"filePath": _abspath(conv, path)}),))
    if script.silent_child and index == 0:
        return Reply("Finished.")  # ends without a change or an answer line
    file = shard_key(path)
    # The double-spawn duplicate only answers: its shard's change is the first child's.
    duplicate = script.double_spawn and attempt > 1
    own = [] if script.parent_edits or duplicate else list(oracle.solution(file) or ())
    made = len(conv.uses_of("edit"))
    if own and made == 0:
        return Reply("I make the change the ticket asks for.", _edit_calls(conv, own))
    if own and script.wrong_lane and index == 0:
        trespass = oracle.owned_edits(oracle.next_shard(file))
        if trespass and made == len(own):
            return Reply("I also change the next shard's file.", _edit_calls(conv, trespass))
        if trespass and made == len(own) + len(trespass):
            return Reply("And change it back.", _edit_calls(conv, trespass, undo=True))
    value = oracle.answer(file)
    if script.wrong_answer and index == 0:
        value = value + 1 if isinstance(value, int) else f"{value}-wrong"
    return Reply(f"I read the whole file.\nANSWER::{file}::{value}")


__all__ = ["OPENCODE_SCRIPTS", "SUBAGENT_TYPE", "OpenCodeScript", "next_opencode_action"]
