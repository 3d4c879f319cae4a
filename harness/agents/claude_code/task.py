"""Claude Code's prompt for a fixture, rendered from the manifest (fixtures stay neutral).

Claude Code delegates with its ``Agent`` tool (no name field): the worker name goes in the
spawn's ``description``, which is how the parsers tell which subagent owns which shard.
"""

from __future__ import annotations

from harness.fixtures import Fixture
from harness.fixtures.task_text import PROMPT_HEAD, agent_prompt, edit_template

CLAUDE_CODE_TASK = (
    PROMPT_HEAD
    + """\
1. Do not read the shards or answer the questions yourself. For each shard, start one
   subagent with your Agent tool, with its worker name as the description (for example
   description "{first_worker}") and this prompt, with its own file and question filled in:
       Read the file shards/<file> and answer this question exactly, computing it from the
       whole file: <question> Do not start subagents. End with one line of the form
       ANSWER::<file>::<{value}>
   {at_once}

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


#: Claude Code runs at most this many subagents at once by default
#: (``CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS``, 20 in 2.1.332); one more is refused.
MAX_CONCURRENT_SUBAGENTS = 20


def _at_once(count: int) -> str:
    if count <= MAX_CONCURRENT_SUBAGENTS:
        return f"You may start all {count} subagents at once."
    return (
        f"Claude Code runs at most {MAX_CONCURRENT_SUBAGENTS} subagents at once: start "
        f"{MAX_CONCURRENT_SUBAGENTS}, then start the next ones as earlier ones report, until "
        "every shard has had its subagent."
    )


#: On an edit fixture: each subagent makes its ticket's change first (Claude Code's Edit
#: tool needs a Read of the file in the same subagent before it edits it).
CLAUDE_CODE_EDIT_TASK = edit_template(CLAUDE_CODE_TASK)
EDIT_TOOLS = "your Read and Edit tools (Read a file before you Edit it)"


def claude_code_task(fixture: Fixture) -> str:
    """The Claude Code prompt for ``fixture`` (its data paragraph taken from task.txt; an
    edit fixture's subagents make their tickets' changes before they answer)."""
    edit = fixture.manifest.kind == "edit"
    return agent_prompt(
        CLAUDE_CODE_EDIT_TASK if edit else CLAUDE_CODE_TASK,
        fixture.manifest,
        fixture.task_text,
        at_once=_at_once(len(fixture.manifest.shards)),
        edit_tools=EDIT_TOOLS,
    )
