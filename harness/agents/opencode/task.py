"""opencode's prompt for a fixture, rendered from the manifest (fixtures stay neutral).

opencode delegates with its ``task`` tool (``description``, ``prompt``, ``subagent_type``;
no name field): the worker name goes in the ``description``, which is how the parsers tell
which subagent owns which shard. Several ``task`` calls in one message run at once.
"""

from __future__ import annotations

from harness.fixtures import Fixture
from harness.fixtures.task_text import PROMPT_HEAD, agent_prompt, edit_template

#: The subagent every spawn asks for: opencode's built-in general-purpose one.
SUBAGENT_TYPE = "general"

OPENCODE_TASK = (
    PROMPT_HEAD
    + """\
1. Do not read the shards or answer the questions yourself. For each shard, start one
   subagent with your task tool (subagent_type "{subagent_type}"), with its worker name as
   the description (for example description "{first_worker}") and this prompt, with its
   own file and question filled in:
       Read the file shards/<file> and answer this question exactly, computing it from the
       whole file: <question> Do not start subagents. End with one line of the form
       ANSWER::<file>::<{value}>
   You may start all {count} subagents at once (several task calls in one message).

2. Wait until every subagent has reported. Never start two subagents for the same shard,
   never use other descriptions, and start a replacement (same description, same prompt)
   only if a subagent failed, at most once per shard.

3. Answer only from the subagents' reports. Then write the file {artifact} in the
   repository root with exactly one bullet line per shard, using the {file_phrase} and the
   bare {value_answer}. For example, if the report for {first_file} said {example}:
       - {first_file}: {example}
   ({count} bullet lines, one for each shard, no other text on those lines.)

4. Only after {artifact} is written, end your turn.
"""
)


#: On an edit fixture: each subagent makes its ticket's change first.
OPENCODE_EDIT_TASK = edit_template(OPENCODE_TASK)
EDIT_TOOLS = "your edit tool"


def opencode_task(fixture: Fixture) -> str:
    """The opencode prompt for ``fixture`` (its data paragraph taken from task.txt; an edit
    fixture's subagents make their tickets' changes before they answer)."""
    edit = fixture.manifest.kind == "edit"
    return agent_prompt(
        OPENCODE_EDIT_TASK if edit else OPENCODE_TASK,
        fixture.manifest,
        fixture.task_text,
        subagent_type=SUBAGENT_TYPE,
        edit_tools=EDIT_TOOLS,
    )
