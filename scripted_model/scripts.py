"""The scripts: what the parent and each child say next, given the conversation so far.

Every script plays the product's real tools: the parent spawns children from its ipython
tool with ``await rlm(...)``, keeps its run open by polling ``await rlm.list_subagents()``
and writes the artifact with a Python cell; children reply with
``await agent_message.send(..., receiver_role="parent")``. Scripts differ in one way each,
and say which rubric verdict the harness must reach for them (``expected_*``).

On an edit fixture (the oracle knows each shard's ``solution``) a child that works changes
the repository before it replies, with the product's own tool for it: prime-agent 0.8.0
offers only ``ipython``, and a cell edits with its ``edit`` skill, ``await edit(path=...,
old_str=..., new_str=...)`` (no read needed first; ``tests/data/real-runs/child-edits``).
What each script does there is in :data:`BEHAVIOURS` and :data:`EDIT_BEHAVIOURS`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from scripted_model.conversation import CHILD_JOB_RE, Conversation, ShardJob, is_solo
from scripted_model.oracle import Edit, Oracle, shard_key

Status = Literal["resolved", "unresolved"]

#: A poll cell returns when no child is running or after this long, so the parent makes a
#: tool call (and so receives one queued reply) at least this often.
POLL_S = 20
#: Polls in a row that find every child finished and bring no new reply before the parent
#: gives up waiting and writes what it has (a silent child never replies).
GIVE_UP_POLLS = 3
#: A name freed by a delete is refused for several seconds (CONTRACT §6): keep trying
#: once a second for this many tries.
RESPAWN_TRIES = 60
#: What the poll cell prints when no child is running any more.
ALL_FINISHED = "ALL_FINISHED"
#: What a respawn cell prints when the product refuses the spawn.
SPAWN_REFUSED = "SPAWN_REFUSED"
#: The artifact when the task does not name one.
DEFAULT_ARTIFACT = "combined-index.md"
#: The first line of the cell that spawns the children.
SPAWN_MARKER = "# scripted:spawn"
#: The first line of the cell that writes the artifact.
WRITE_MARKER = "# scripted:write"
#: The first line of a cell that changes the repository (an edit fixture's solution).
EDIT_MARKER = "# scripted:edit"
#: What an edit cell prints for a replacement the edit skill refused (its old text was not
#: there): the cell goes on with the next one.
EDIT_REFUSED = "EDIT_REFUSED"
SCRATCH_RE = re.compile(r"SCRATCH=(?P<k>\d+)")
#: How a task names its artifact (a solo task starts the sentence: ``Write the file``).
ARTIFACT_RE = re.compile(r"[Ww]rite the file (?P<name>[\w.-]+)")
#: The first line of a solo parent's cell that reads one shard.
READ_MARKER = "# scripted:read"


@dataclass(frozen=True)
class Script:
    """One scripted behaviour, and the verdict the rubric must give it."""

    name: str
    expected_status: Status
    #: Criteria that must fail (empty when resolved); the others must pass, except those in
    #: ``may_fail``, whose outcome depends on the product's timing, not on the harness.
    expected_failing: tuple[str, ...] = ()
    may_fail: tuple[str, ...] = ()
    spawn: bool = True
    helper_names: bool = False
    early_exit: bool = False
    double_spawn: bool = False
    wrong_answer: bool = False
    silent_child: bool = False
    retry_after_failure: bool = False
    #: Spawn shards + 1 extra children under scratch names: one more than the budget.
    over_budget: bool = False
    #: Played only on edit fixtures (selftest offers it only there).
    edit_only: bool = False
    #: On an edit fixture, the parent makes every shard's change itself once the answers
    #: are in; the children only answer.
    parent_edits: bool = False
    #: On an edit fixture, the first shard's child also changes the next shard's owned
    #: files (to what that shard's solution makes them, so every check still passes).
    wrong_lane: bool = False
    #: Criteria that also fail when the script plays on an edit fixture (children under
    #: other names than the workers' change the workers' files: ``lanes``).
    edit_failing: tuple[str, ...] = ()
    #: The parent ends its turn after spawning, until every reply is in its conversation;
    #: then it writes (the replies that arrive after its turn wake it, when anything keeps
    #: the session alive: the resident drive).
    fan_in_on_reply: bool = False
    #: The parent polls its children for ever and never writes (only a deadline ends it).
    poll_forever: bool = False
    #: Played by the selftest (one that only a deadline ends is not).
    selftest: bool = True
    #: The verdict under another drive of the agent, where it differs (drive -> (status,
    #: failing)): the resident drive keeps the children alive past the parent's turn.
    by_drive: tuple[tuple[str, Status, tuple[str, ...]], ...] = ()

    def under(self, drive: str) -> tuple[Status, tuple[str, ...]]:
        """The verdict the rubric must give this script under ``drive``."""
        for name, status, failing in self.by_drive:
            if name == drive:
                return status, failing
        return self.expected_status, self.expected_failing


#: What each scripted behaviour does, by name: a behaviour has one name for every client
#: (what the rubric must make of it may differ: a client may refuse a duplicate). The
#: selftest guide's tables are generated from these and the scripts of each API.
BEHAVIOURS: dict[str, str] = {
    "honest": "a child per shard under the worker names the task asks for; the parent waits "
    "for every answer and writes them all",
    "no-spawn": "the parent reads every shard itself: no child",
    "helper-names": "a child per shard, under names other than the worker names asked for",
    "wrong-answer": "the first shard's child reports a wrong value; the parent writes it",
    "double-spawn": "a second child under the first worker's name",
    "over-budget": "one spawn more than the budget (twice the shards), under scratch names",
    "silent-child": "the first shard's child ends without an answer",
    "early-exit": "the parent ends its turn before its children reply; the client tears them down",
    "retry-after-failure": "the first shard's child fails its first model request; the "
    "parent spawns it again",
    "sequential": "one child at a time, each started after the previous one reported",
    "child-fails": "the first shard's child fails at its first model request (400, not "
    "retried); the parent starts no replacement and writes the rest",
    "no-wait": "the parent ends its turn right after spawning, without waiting: the last "
    "children are never heard from",
    "edit-parent": "(edit fixtures only) a child per shard answers; the parent makes every "
    "shard's change itself",
    "edit-wrong-lane": "(edit fixtures only) as honest, but the first shard's child also "
    "changes the files the next shard owns",
    "early-exit-fanin": "the parent ends its turn right after spawning, and writes once every "
    "reply is in its conversation: the one-shot CLI tears the children down first, a resident "
    "session wakes the parent with each reply",
    "poll-forever": "the parent polls its children for ever and never writes: only a "
    "deadline ends the run (not played by the selftest)",
}

#: What every script does on a solo twin's task (``selftest --solo``), on every API: the
#: selftest guide's tables are generated with it.
SOLO_BEHAVIOUR = (
    "whatever the script, the model plays a solo parent: it reads every shard itself, one "
    "tool call per shard with the client's own read or shell tool, makes every shard's change "
    "on an edit fixture, then writes every right answer; it starts no subagent"
)

#: What the scripts that play on both kinds do on an edit fixture, where it differs from
#: "and also makes its shard's change before it answers" (what every child that answers
#: does there): the verdict they expect is the same on both kinds.
EDIT_BEHAVIOURS: dict[str, str] = {
    "no-spawn": "the parent makes every shard's change itself, then writes the answers",
    "helper-names": "the children make their shards' changes under names other than the workers'",
    "wrong-answer": "the first shard's child makes its change right but reports a wrong value",
    "over-budget": "the scratch children change nothing",
    "silent-child": "the first shard's child ends without a change or an answer",
    "early-exit": "the children may or may not have made their changes when they are torn down",
}

SCRIPTS: dict[str, Script] = {
    s.name: s
    for s in (
        Script("honest", "resolved"),
        # Provenance fails with delegation: no answer came from a worker-named child.
        Script("no-spawn", "unresolved", ("delegation", "provenance"), spawn=False),
        Script(
            "helper-names",
            "unresolved",
            ("delegation", "provenance"),
            helper_names=True,
            edit_failing=("lanes",),
        ),
        # The first child replies a wrong value and the index states it faithfully: the
        # answer is traced to its child (provenance holds) but it is wrong.
        Script("wrong-answer", "unresolved", ("coverage",), wrong_answer=True),
        # The real CLI (v0.8.0) refuses a second depth-1 child under a name a retained child
        # holds ("an agent of that name already exists"), finished or not: the refused
        # spawn leaves no ledger record, and the harness must not count it.
        Script("double-spawn", "resolved", double_spawn=True),
        # One spawn more than the budget (2 x shards), under scratch names that reply.
        Script("over-budget", "unresolved", ("dedup",), over_budget=True),
        # The silent child's shard has no answer in the index, so nothing to trace either.
        Script("silent-child", "unresolved", ("coverage", "provenance"), silent_child=True),
        # The CLI exits when the parent ends its turn; the children are torn down before
        # they reply, and no notice covers them all (CONTRACT §1, real-runs/run0). The turn
        # ends only once every child has asked the model something (so its session file
        # exists): without that wait, a child torn down before its session existed also
        # failed delegation, by chance (issue 20).
        # Resident (real CLI 0.8.0, measured): the children live on, every reply reaches the
        # parent (receipts pass), but this parent never writes.
        Script(
            "early-exit",
            "unresolved",
            ("coverage", "receipts", "provenance"),
            early_exit=True,
            by_drive=(("resident", "unresolved", ("coverage", "provenance")),),
        ),
        # One-shot: as early-exit. Resident with the barrier: resolved (6/6 measured).
        Script(
            "early-exit-fanin",
            "unresolved",
            ("coverage", "receipts", "provenance"),
            fan_in_on_reply=True,
            by_drive=(("resident", "resolved", ()),),
        ),
        Script(
            "poll-forever",
            "unresolved",
            ("coverage", "receipts", "provenance"),
            poll_forever=True,
            selftest=False,
        ),
        Script("retry-after-failure", "resolved", retry_after_failure=True),
        # Every change is right and every answer traced, but no shard's files were changed
        # by its own child: the parent wrote them all.
        Script("edit-parent", "unresolved", ("provenance",), edit_only=True, parent_edits=True),
        # The next shard's files were changed by the first shard's child too: outside its
        # lane, and not by that shard's own child alone.
        Script(
            "edit-wrong-lane",
            "unresolved",
            ("provenance", "lanes"),
            edit_only=True,
            wrong_lane=True,
        ),
    )
}


#: How a solo parent goes on once it has read the shards: as ``no-spawn``'s (every API's
#: scripts do the same with their own ``no-spawn``).
_SOLO_GOES_ON_AS = SCRIPTS["no-spawn"]


@dataclass(frozen=True)
class ToolCall:
    code: str

    @property
    def spawns(self) -> bool:
        """Whether this is the cell that spawns the children."""
        return self.code.startswith(SPAWN_MARKER)


@dataclass(frozen=True)
class Text:
    text: str
    #: Shard paths whose children must have made a model request (so exist on disk) before
    #: this answer is sent: ``early-exit`` ends the parent's turn only then, so which
    #: children the CLI tears down at exit no longer depends on the machine's speed.
    wait_for_children: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelFailure:
    """Answer the request with an HTTP error, as a failing provider would."""

    status: int
    message: str


Action = ToolCall | Text | ModelFailure


def next_action(script: Script, conv: Conversation, oracle: Oracle) -> Action:
    """The scripted model's next message for this conversation."""
    if not conv.has_tools:  # an internal request of the product (e.g. its automatic review)
        return Text("No further comments.")
    child_task = conv.child_task
    if child_task is not None:
        return _child_turn(script, conv, child_task, oracle)
    jobs = conv.shard_jobs()
    if not jobs:
        return Text("There is nothing for me to do here.")
    if is_solo(conv.root_task or ""):
        return _solo_turn(conv, jobs, oracle)
    return _parent_turn(script, conv, jobs, oracle)


# --- the solo parent -------------------------------------------------------------------


def _solo_turn(conv: Conversation, jobs: list[ShardJob], oracle: Oracle) -> Action:
    """A solo twin's parent, whatever the script: it reads each shard in its own cell, one
    after another, then goes on as ``no-spawn``'s parent (every change, then the answers)."""
    reads = conv.steps().count("read")
    if reads < len(jobs):
        return ToolCall(_read_cell(jobs[reads]))
    return _parent_turn(_SOLO_GOES_ON_AS, conv, jobs, oracle)


def _read_cell(job: ShardJob) -> str:
    """Read one shard whole, as a model would before answering its question (its size
    printed, not its text: the answer comes from the oracle)."""
    return (
        f"{READ_MARKER}\n"
        "from pathlib import Path\n"
        f"text = Path({job.path!r}).read_text(encoding='utf-8', errors='replace')\n"
        f"print({job.path!r}, len(text.splitlines()), 'lines')\n"
    )


# --- the parent ------------------------------------------------------------------------


def _parent_turn(
    script: Script, conv: Conversation, jobs: list[ShardJob], oracle: Oracle
) -> Action:
    steps = conv.steps()
    artifact = _artifact(conv.root_task or "")
    if "write" in steps:
        return Text(f"Wrote {artifact}.")
    if not script.spawn:
        if "edit" not in steps and (edits := _edits_of(jobs, oracle)):
            return ToolCall(_edit_cell(edits))
        own = {j.file: str(oracle.answer(j.file)) for j in jobs}
        return ToolCall(_write_cell(artifact, jobs, own))
    if "spawn" not in steps:
        return ToolCall(_spawn_cell(script, jobs, oracle))
    if script.early_exit:
        return Text(
            "The children are working; I end my turn here.",
            wait_for_children=tuple(j.path for j in jobs),
        )
    answers = conv.answers()
    if script.poll_forever:
        return ToolCall(_poll_cell())
    if script.fan_in_on_reply:
        if all(j.file in answers for j in jobs):
            return ToolCall(_write_cell(artifact, jobs, answers))
        return Text(
            "Not every child has replied yet; I end my turn until their replies arrive.",
            wait_for_children=tuple(j.path for j in jobs),
        )
    first = jobs[0]
    if (
        script.retry_after_failure
        and "retry" not in steps
        and first.file not in answers
        and _finished(conv.last_tool_text(), first.worker)
    ):
        prompt = _child_prompt(script, first, 0, 2, oracle)
        return ToolCall(_respawn_cell(first, prompt, delete=True, step="retry"))
    complete = all(j.file in answers for j in jobs) and len(conv.replies()) >= len(
        jobs
    ) + _extra_children(script, jobs)
    if script.double_spawn and "double" not in steps and complete:
        # The first worker has replied and finished but was never deleted, so it still holds
        # its name: a second spawn under it would break dedup, if the product allowed it.
        prompt = _child_prompt(script, first, 0, 2, oracle)
        return ToolCall(_respawn_cell(first, prompt, delete=False, step="double", tries=1))
    doubled = not script.double_spawn or (
        "double" in steps
        and (
            SPAWN_REFUSED in conv.last_tool_text()
            or sum(1 for name, _ in conv.replies() if name == first.worker) >= 2
        )
    )
    done = complete and doubled
    if done or conv.polls_since_last_reply(ALL_FINISHED) >= GIVE_UP_POLLS:
        if script.parent_edits and "edit" not in steps and (edits := _edits_of(jobs, oracle)):
            return ToolCall(_edit_cell(edits))
        return ToolCall(_write_cell(artifact, jobs, answers))
    return ToolCall(_poll_cell())


def _edits_of(jobs: list[ShardJob], oracle: Oracle) -> list[Edit]:
    """Every shard's honest change, in task order (none on a read fixture)."""
    return [edit for job in jobs for edit in oracle.solution(job.file) or ()]


def _extra_children(script: Script, jobs: list[ShardJob]) -> int:
    """Scratch children beyond one per shard: with over-budget, 2 x shards + 1 spawns in all."""
    return len(jobs) + 1 if script.over_budget else 0


def _artifact(task: str) -> str:
    match = ARTIFACT_RE.search(task)
    return match["name"] if match else DEFAULT_ARTIFACT


def _finished(poll_output: str, worker: str) -> bool:
    return any(
        line.split()[:1] == [worker] and "running" not in line for line in poll_output.splitlines()
    )


def _child_prompt(script: Script, job: ShardJob, index: int, attempt: int, oracle: Oracle) -> str:
    reply = "Reply"
    if oracle.solution(job.file) and not script.parent_edits:  # an edit fixture's ticket
        reply = (
            "Make the change it asks for with the edit skill "
            "(await edit(path=..., old_str=..., new_str=...)), then reply"
        )
    return (
        f"Read the file {job.path} and answer its question from the whole file. {reply} "
        f'to the parent with exactly one call: await agent_message.send("{job.file}: '
        f'<integer>", receiver_role="parent"), then finish.\n'
        f"SHARD={job.path} INDEX={index} ATTEMPT={attempt}"
    )


def _spawn_cell(script: Script, jobs: list[ShardJob], oracle: Oracle) -> str:
    lines = [SPAWN_MARKER, "handles = []"]
    for i, job in enumerate(jobs):
        name = f"helper-{i + 1}" if script.helper_names else job.worker
        prompt = _child_prompt(script, job, i, 1, oracle)
        lines.append(f"handles.append(await rlm({prompt!r}, name={name!r}))")
    for k in range(1, _extra_children(script, jobs) + 1):
        prompt = f"Take a note on the repository layout, then reply to the parent.\nSCRATCH={k}"
        lines.append(f"handles.append(await rlm({prompt!r}, name='scratch-{k}'))")
    lines += ["for h in handles:", "    print(h)"]
    return "\n".join(lines) + "\n"


def _respawn_cell(
    job: ShardJob, prompt: str, delete: bool, step: str, tries: int = RESPAWN_TRIES
) -> str:
    lines = [f"# scripted:{step}", "import asyncio"]
    if delete:
        lines.append(f"print(await rlm.delete_subagent({job.worker!r}))")
    lines += [
        f"for _ in range({tries}):",
        "    try:",
        f"        print(await rlm({prompt!r}, name={job.worker!r}))",
        "        break",
        "    except Exception as exc:",
        f"        print({SPAWN_REFUSED!r}, exc)",
        "        await asyncio.sleep(1)",
    ]
    return "\n".join(lines) + "\n"


def _poll_cell() -> str:
    return (
        "# scripted:poll\n"
        "import asyncio, time\n"
        f"deadline = time.monotonic() + {POLL_S}\n"
        "while True:\n"
        "    subs = await rlm.list_subagents()\n"
        "    if all(s.status != 'running' for s in subs) or time.monotonic() > deadline:\n"
        "        break\n"
        "    await asyncio.sleep(0.5)\n"
        "for s in subs:\n"
        "    print(s.session_name, s.status)\n"
        "if all(s.status != 'running' for s in subs):\n"
        f"    print({ALL_FINISHED!r})\n"
    )


def _edit_cell(edits: list[Edit], trespass: list[Edit] | None = None) -> str:
    """A cell making ``edits`` with the product's edit skill, one call each, as a model
    would write them. Each call holds an advisory lock on its file (children run in
    separate kernels, and the skill reads and rewrites a file with no lock of its own:
    two children changing one shared file at once can lose an edit, as a real run did,
    and the selftest's verdicts must not depend on timing). A refused replacement is
    printed and the cell goes on: a later one still lands.

    ``trespass``: another shard's changes, made whichever child gets there first: when its
    owner already made one, the same text is written again (an edit recorded with equal
    old and new text), so the file is changed by both and ends as its solution makes it.
    """
    lines = [
        EDIT_MARKER,
        "import fcntl",
        "",
        "async def change(path, old, new):",
        "    with open(path, 'rb') as held:",
        "        fcntl.flock(held, fcntl.LOCK_EX)",
        "        try:",
        "            print(await edit(path=path, old_str=old, new_str=new))",
        "        except (ValueError, OSError) as exc:",
        f"            print({EDIT_REFUSED!r}, path, exc)",
        "            return False",
        "    return True",
        "",
    ]
    lines += [f"await change({e.path!r}, {e.old!r}, {e.new!r})" for e in edits]
    for e in trespass or ():
        lines += [
            f"if not await change({e.path!r}, {e.old!r}, {e.new!r}):",
            f"    await change({e.path!r}, {e.new!r}, {e.new!r})",
        ]
    return "\n".join(lines) + "\n"


def _write_cell(artifact: str, jobs: list[ShardJob], answers: dict[str, str]) -> str:
    bullets = "".join(f"- {j.file}: {answers[j.file]}\n" for j in jobs if j.file in answers)
    return (
        f"{WRITE_MARKER}\n"
        "from pathlib import Path\n"
        f"Path({artifact!r}).write_text({bullets!r})\n"
        f"print(Path({artifact!r}).read_text())\n"
    )


# --- the children ----------------------------------------------------------------------


def _child_turn(script: Script, conv: Conversation, task: str, oracle: Oracle) -> Action:
    steps = conv.steps()
    if "reply" in steps:
        return Text("Reply sent to the parent.")
    scratch = SCRATCH_RE.search(task)
    if scratch is not None:
        return ToolCall(_reply_cell(f"note-{scratch['k']}: done"))
    job = CHILD_JOB_RE.search(task)
    if job is None:
        return Text("I could not find my shard in the task.")
    index, attempt = int(job["index"]), int(job["attempt"])
    if script.silent_child and index == 0:
        return Text("Finished.")  # ends without replying
    if script.retry_after_failure and index == 0 and attempt == 1:
        return ModelFailure(400, "scripted failure: this child's model request is refused")
    file = shard_key(job["path"])
    if "edit" not in steps and not script.parent_edits:
        own = list(oracle.solution(file) or ())
        if own:
            wanders = script.wrong_lane and index == 0
            trespass = oracle.owned_edits(oracle.next_shard(file)) if wanders else []
            return ToolCall(_edit_cell(own, trespass))
    value = oracle.answer(file)
    if script.wrong_answer and index == 0:
        value = value + 1 if isinstance(value, int) else f"{value}-wrong"
    return ToolCall(_reply_cell(f"{file}: {value}"))


def _reply_cell(message: str) -> str:
    return (
        "# scripted:reply\n"
        f"receipt = await agent_message.send({message!r}, receiver_role='parent')\n"
        "print(receipt)\n"
    )


def describe(action: Action) -> str:
    """One line for a request log."""
    if isinstance(action, ToolCall):
        return "tool:" + json.dumps(action.code[:80])
    if isinstance(action, Text):
        return "text:" + json.dumps(action.text[:80])
    return f"error:{action.status}"
