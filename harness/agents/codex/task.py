"""Codex's prompt for a fixture, rendered from the manifest (fixtures stay neutral).

Codex delegates with ``spawn_agent`` and names its children itself (random nicknames), so
the worker name travels in the spawn message's first line (``Worker: <name>``); under the
second multi-agent protocol ``spawn_agent`` also takes a ``task_name`` (lowercase letters,
digits and ``_`` only: the worker name with ``-`` written as ``_``). Either way the parsers
tell from it which child owns which shard. Codex keeps only a few children open at once,
which the prompt says, as it says Claude Code's limit.
"""

from __future__ import annotations

from harness.fixtures import Fixture
from harness.fixtures.task_text import PROMPT_HEAD, agent_prompt, edit_template

#: The first line of every spawn message, followed by the worker name.
WORKER_LINE = "Worker: "

CODEX_TASK = (
    PROMPT_HEAD
    + """\
1. Do not read the shards or answer the questions yourself. For each shard, start one
   subagent with your spawn_agent tool. Its message is one line naming its worker (for
   example "{worker_line}{first_worker}") followed by this task, with its own file and
   question filled in:
       Read the file shards/<file> and answer this question exactly, computing it from the
       whole file: <question> Do not start subagents. End with one line of the form
       ANSWER::<file>::<{value}>
   If spawn_agent asks for a task_name, give the worker name with every "-" written as
   "_" (for example "{first_task_name}").
   Codex runs only a few subagents at once. When a spawn is refused because the agent
   thread limit is reached, wait until a subagent finishes (and close the finished ones
   with close_agent, if you have that tool), then start the next ones, until every shard
   has had its subagent.

2. Wait until every subagent has reported: call wait_agent again until each one has
   finished. Never start two subagents for the same shard, never use other worker names,
   and start a replacement (the same message) only if a subagent failed, at most once per
   shard.

3. Answer only from the subagents' reports. Then write the file {artifact} in the
   repository root with a shell command, with exactly one bullet line per shard, using the
   {file_phrase} and the bare {value_answer}. For example, if the report for {first_file}
   said {example}:
       - {first_file}: {example}
   ({count} bullet lines, one for each shard, no other text on those lines.)

4. Only after {artifact} is written, end your turn. Ending your turn ends the run and stops
   every subagent still working.
"""
)


#: On an edit fixture: each subagent makes its ticket's change first, with Codex's edit tool.
CODEX_EDIT_TASK = edit_template(CODEX_TASK)
EDIT_TOOLS = "apply_patch"


def task_name(worker: str) -> str:
    """A worker's name as a Codex ``task_name`` (lowercase, ``-`` written as ``_``)."""
    return worker.replace("-", "_").lower()


def codex_task(fixture: Fixture) -> str:
    """The Codex prompt for ``fixture`` (its data paragraph taken from task.txt; an edit
    fixture's children make their tickets' changes before they answer)."""
    return agent_prompt(
        CODEX_EDIT_TASK if fixture.manifest.kind == "edit" else CODEX_TASK,
        fixture.manifest,
        fixture.task_text,
        worker_line=WORKER_LINE,
        first_task_name=task_name(fixture.manifest.shards[0].worker),
        edit_tools=EDIT_TOOLS,
    )
