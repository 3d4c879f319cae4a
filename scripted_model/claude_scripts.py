"""The scripts for Claude Code: what the parent and each subagent say next.

The parent plays Claude Code's real tools: it spawns one subagent per shard with the
``Agent`` tool (``description`` = the worker name the task asks for), waits for the results
(a foreground ``tool_result`` or a background ``<task-notification>``), then writes the
artifact with ``Write``. A subagent ``Read``s its shard and ends with a final message
``ANSWER::<file>::<value>``; the value comes from the oracle. Scripts differ in one way each
and say which verdict the rubric must reach for them.

The first shard's subagent runs in the foreground and answers late
(:data:`FOREGROUND_DELAY_S`), so in ``honest`` the background results arrive while the
parent's turn is still running; every other script runs all subagents in the background,
so the parent ends its turn and a notification starts a new one.

On an edit fixture (the oracle holds each shard's solution) whoever does a shard's work
also makes its change, with the client's own ``Read`` and ``Edit``
(:mod:`scripted_model.claude_edits`), before answering: each subagent its own shard's
replacements (``honest``, ``helper-names``, ``wrong-answer``, ``double-spawn``, whose
duplicate finds them made and is refused), the parent every shard's in ``no-spawn``;
``silent-child``'s first subagent ends without a change or an answer. Two scripts play
only there: ``edit-parent`` (the subagents only report; the parent makes every change before
it writes the artifact) and ``edit-wrong-lane`` (the first shard's subagent also makes the
next shard's change to that shard's own file, which that shard's subagent then leaves: the
client refuses an edit whose text is already in place, so had both tried, which of them
changed the file would depend on timing).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scripted_model.claude_edits import absolute, edit_calls
from scripted_model.conversation import CHILD_JOB_RE, ShardJob, is_solo
from scripted_model.messages_conversation import MessagesConversation
from scripted_model.oracle import Edit, Oracle, shard_key
from scripted_model.scripts import ARTIFACT_RE, DEFAULT_ARTIFACT, ModelFailure, Script

#: How long the foreground subagent of ``honest`` waits before its final answer: long
#: enough for the background subagents (a few fast requests each) to finish first.
FOREGROUND_DELAY_S = 3.0
#: How many subagents Claude Code runs at once (``CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS``,
#: 20 by default in 2.1.332: one more is refused with "Concurrent subagent limit reached").
#: The scripted parent starts them in waves of at most this many, as the prompt asks.
MAX_AT_ONCE = 20
#: Model ids Claude Code uses on its own (title generation, small fast-model calls, an
#: ``Explore`` subagent): answered harmlessly rather than refused, so the run goes on.
INTERNAL_MODEL_PREFIX = "claude-"
#: The line of a wrong-lane subagent's prompt naming the other shard whose change it makes.
ALSO_RE = re.compile(r"ALSO=(?P<path>\S+)")


@dataclass(frozen=True)
class Call:
    name: str
    input: Mapping[str, Any]


@dataclass(frozen=True)
class Reply:
    """An assistant message: optional text, then tool calls (none: the turn ends)."""

    text: str = ""
    calls: tuple[Call, ...] = ()
    #: Seconds to wait before answering (to order concurrent subagents).
    delay_s: float = 0.0


ClaudeAction = Reply | ModelFailure


@dataclass(frozen=True)
class ClaudeScript(Script):
    #: Run the first shard's subagent in the foreground (it answers late).
    foreground_first: bool = False


CLAUDE_SCRIPTS: dict[str, ClaudeScript] = {
    s.name: s
    for s in (
        ClaudeScript("honest", "resolved", foreground_first=True),
        ClaudeScript("no-spawn", "unresolved", ("delegation", "provenance"), spawn=False),
        # On an edit fixture its subagents change the shards' files: no shard's own child,
        # so each crosses a lane too.
        ClaudeScript(
            "helper-names",
            "unresolved",
            ("delegation", "provenance"),
            helper_names=True,
            edit_failing=("lanes",),
        ),
        # The first subagent reports a wrong value and the index states it faithfully.
        ClaudeScript("wrong-answer", "unresolved", ("coverage",), wrong_answer=True),
        # Claude Code refuses nothing: a second subagent under the first worker's name while
        # the first one is still on record is a duplicate.
        ClaudeScript("double-spawn", "unresolved", ("dedup",), double_spawn=True),
        # The silent subagent ends without an answer line: no bullet, nothing to trace.
        ClaudeScript("silent-child", "unresolved", ("coverage", "provenance"), silent_child=True),
        # Every change lands and every answer is right, but no owned file was changed by
        # its shard's own child: the parent wrote them all.
        ClaudeScript(
            "edit-parent", "unresolved", ("provenance",), edit_only=True, parent_edits=True
        ),
        # The second shard's owned file was changed by the first shard's child: a lane
        # crossed, and that shard's change is not its own child's.
        ClaudeScript(
            "edit-wrong-lane",
            "unresolved",
            ("provenance", "lanes"),
            edit_only=True,
            wrong_lane=True,
        ),
    )
}


def next_claude_action(
    script: ClaudeScript, conv: MessagesConversation, oracle: Oracle
) -> ClaudeAction:
    """The scripted model's next message for this Messages conversation."""
    if not conv.has_tools:
        return Reply("OK.")
    job = conv.child_job
    if job is not None:
        return _subagent_turn(script, conv, job["path"], int(job["index"]), oracle)
    jobs = conv.shard_jobs()
    if not jobs:
        return Reply("There is nothing for me to do here.")
    if is_solo(conv.first_user_text):
        return _solo_turn(conv, jobs, oracle)
    return _parent_turn(script, conv, jobs, oracle)


def internal_action() -> ClaudeAction:
    """The answer to one of the client's own requests on a model no script plays."""
    return Reply("OK.")


# --- the parent ------------------------------------------------------------------------


def _parent_turn(
    script: ClaudeScript, conv: MessagesConversation, jobs: list[ShardJob], oracle: Oracle
) -> ClaudeAction:
    artifact = _artifact(conv.first_user_text)
    if conv.uses_of("Write"):
        return Reply(f"Wrote {artifact}.")
    if not script.spawn:
        own = {j.file: str(oracle.answer(j.file)) for j in jobs}
        return _parent_edits(conv, jobs, oracle) or Reply(
            calls=(_write(conv, artifact, jobs, own),)
        )
    spawns = conv.uses_of("Agent")
    started = {i for i in (_index(s.input) for s in spawns) if i is not None}
    waiting = [j for i, j in enumerate(jobs) if i not in started]
    if not spawns:
        return Reply("I delegate one shard per subagent.", _spawn_calls(script, jobs, oracle))
    back = _returned(conv)
    running = sum(1 for s in spawns if s.id not in back)
    if waiting and running < MAX_AT_ONCE:  # the next wave, as earlier ones report
        wave = waiting[: MAX_AT_ONCE - running]
        offset = len(jobs) - len(waiting)
        return Reply("Starting the next subagents.", _spawn_calls(script, wave, oracle, offset))
    if not waiting and all(s.id in back for s in spawns):
        edits = _parent_edits(conv, jobs, oracle) if script.parent_edits else None
        return edits or Reply(calls=(_write(conv, artifact, jobs, conv.answers()),))
    return Reply("Waiting for the subagents to report.")


def _solo_turn(conv: MessagesConversation, jobs: list[ShardJob], oracle: Oracle) -> ClaudeAction:
    """A solo twin's parent, whatever the script: it ``Read``s each shard, one call after
    another, then goes on as ``no-spawn``'s parent (every change, then the answers)."""
    read = {u.input.get("file_path") for u in conv.uses_of("Read")}
    for job in jobs:
        path = absolute(conv.cwd, job.path)
        if path not in read:
            return Reply(f"Reading {job.path}.", (Call("Read", {"file_path": path}),))
    return _parent_turn(CLAUDE_SCRIPTS["no-spawn"], conv, jobs, oracle)


def _parent_edits(conv: MessagesConversation, jobs: list[ShardJob], oracle: Oracle) -> Reply | None:
    """The parent's next edits of every shard's change (None when all are made or the
    fixture is a read fixture)."""
    every = [edit for job in jobs for edit in oracle.solution(job.file) or ()]
    calls = edit_calls(conv, every)
    return Reply("I make the changes myself.", _calls(calls)) if calls else None


def _calls(specs: Sequence[tuple[str, Mapping[str, Any]]]) -> tuple[Call, ...]:
    return tuple(Call(name, tool_input) for name, tool_input in specs)


def _returned(conv: MessagesConversation) -> set[str]:
    """The spawns with a result: a foreground one, an error, or a notification."""
    done = {
        r.tool_use_id
        for r in conv.tool_results
        if r.is_error or "ANSWER::" in r.text or "hand-back" in r.text.lower()
    }
    return done | set(conv.notified_ids())


def _index(spawn: Mapping[str, Any]) -> int | None:
    """The shard index a spawn's prompt carries (its ``SHARD=... INDEX=i`` line)."""
    job = CHILD_JOB_RE.search(str(spawn.get("prompt", "")))
    return int(job["index"]) if job else None


def _spawn_calls(
    script: ClaudeScript, jobs: list[ShardJob], oracle: Oracle, offset: int = 0
) -> tuple[Call, ...]:
    """One ``Agent`` call per job (the first wave: at most :data:`MAX_AT_ONCE`), the
    jobs numbered from ``offset``."""
    calls = []
    # The duplicate of double-spawn rides in the first wave: keep that wave within the cap.
    first_wave = MAX_AT_ONCE - (1 if script.double_spawn else 0)
    wave = jobs[:first_wave] if offset == 0 else jobs
    for n, job in enumerate(wave):
        i = offset + n
        name = f"helper-{i + 1}" if script.helper_names else job.worker
        prompt = _subagent_prompt(job, i, attempt=1, edit=_edits(script, oracle, job.file))
        if script.wrong_lane and i == 0 and len(jobs) > 1:
            prompt += f" ALSO={jobs[1].path}"
        spawn: dict[str, Any] = {
            "description": name,
            "prompt": prompt,
            "subagent_type": "general-purpose",
        }
        if script.foreground_first and i == 0:
            spawn["run_in_background"] = False
        calls.append(Call("Agent", spawn))
    if script.double_spawn and offset == 0:
        first = jobs[0]
        calls.append(
            Call(
                "Agent",
                {
                    "description": first.worker,
                    "prompt": _subagent_prompt(
                        first, 0, attempt=2, edit=_edits(script, oracle, first.file)
                    ),
                },
            )
        )
    return tuple(calls)


def _subagent_prompt(job: ShardJob, index: int, attempt: int, edit: bool = False) -> str:
    task = (
        f"Carry out the ticket in {job.path}, changing only the files it names, then answer "
        "its question."
        if edit
        else f"Read the file {job.path} and answer its question from the whole file."
    )
    return (
        f"{task} End with one line: ANSWER::{job.file}::<integer>\n"
        f"SHARD={job.path} INDEX={index} ATTEMPT={attempt}"
    )


def _artifact(task: str) -> str:
    match = ARTIFACT_RE.search(task)
    return match["name"] if match else DEFAULT_ARTIFACT


def _write(
    conv: MessagesConversation, artifact: str, jobs: list[ShardJob], answers: dict[str, str]
) -> Call:
    bullets = "".join(f"- {j.file}: {answers[j.file]}\n" for j in jobs if j.file in answers)
    path = f"{conv.cwd.rstrip('/')}/{artifact}" if conv.cwd else artifact
    return Call("Write", {"file_path": path, "content": bullets})


# --- the subagents ---------------------------------------------------------------------


def _subagent_turn(
    script: ClaudeScript, conv: MessagesConversation, path: str, index: int, oracle: Oracle
) -> ClaudeAction:
    if not conv.uses_of("Read"):
        return Reply(f"Reading {path}.", (Call("Read", {"file_path": absolute(conv.cwd, path)}),))
    if script.silent_child and index == 0:
        return Reply("Finished.")  # ends without a change or an answer line
    file = shard_key(path)
    calls = edit_calls(conv, _subagent_edits(script, conv, file, index, oracle))
    if calls:
        return Reply("Making the change.", _calls(calls))
    value = oracle.answer(file)
    if script.wrong_answer and index == 0:
        value = value + 1 if isinstance(value, int) else f"{value}-wrong"
    delay = FOREGROUND_DELAY_S if script.foreground_first and index == 0 else 0.0
    return Reply(f"I read the whole file.\nANSWER::{file}::{value}", delay_s=delay)


def _subagent_edits(
    script: ClaudeScript, conv: MessagesConversation, file: str, index: int, oracle: Oracle
) -> list[Edit]:
    """The replacements this subagent makes (none on a read fixture)."""
    if not _edits(script, oracle, file):
        return []
    edits = list(oracle.solution(file) or ())
    if script.wrong_lane and index == 1:  # the first shard's subagent makes its owned change
        edits = [e for e in edits if e not in oracle.owned_edits(file)]
    also = ALSO_RE.search(conv.first_user_text) if script.wrong_lane else None
    if also is not None:
        edits += oracle.owned_edits(shard_key(also["path"]))
    return edits


def _edits(script: ClaudeScript, oracle: Oracle, file: str) -> bool:
    """Whether the subagent of ``file`` makes its shard's change (an edit fixture's shard,
    and the script leaves it to the subagents)."""
    return bool(oracle.solution(file)) and not script.parent_edits


def describe(action: ClaudeAction) -> str:
    """One line for a request log."""
    if isinstance(action, ModelFailure):
        return f"error:{action.status}"
    names = ",".join(c.name for c in action.calls)
    return f"text:{action.text[:60]!r} calls:[{names}]"


def sleep_for(action: ClaudeAction) -> None:
    if isinstance(action, Reply) and action.delay_s > 0:
        time.sleep(action.delay_s)


__all__ = [
    "CLAUDE_SCRIPTS",
    "INTERNAL_MODEL_PREFIX",
    "Call",
    "ClaudeAction",
    "ClaudeScript",
    "Reply",
    "describe",
    "internal_action",
    "next_claude_action",
    "sleep_for",
]
