"""Gemini CLI's prompt for a fixture, rendered from the manifest (fixtures stay neutral).

Gemini CLI delegates with one tool, ``invoke_agent {agent_name, prompt}``, to an agent it
has a definition of: the harness defines one neutral worker (``shard-worker``) for every
shard, so the worker name travels in the prompt's first line (``Worker: <name>``), as for
Codex. The parsers tell from it which subagent owns which shard. A subagent's answer
reaches the parent only through its ``complete_task`` call, which the prompt asks for.
The client runs the calls of one answer at once.
"""

from __future__ import annotations

from harness.agents.gemini.launch import WORKER_AGENT
from harness.fixtures import Fixture
from harness.fixtures.task_text import PROMPT_HEAD, agent_prompt, edit_template

#: The first line of every invoke_agent prompt, followed by the worker name.
WORKER_LINE = "Worker: "

GEMINI_TASK = (
    PROMPT_HEAD
    + """\
1. Do not read the shards or answer the questions yourself. For each shard, call your
   invoke_agent tool with agent_name "{worker_agent}" and a prompt whose first line names
   its worker (for example "{worker_line}{first_worker}") followed by this task, with its
   own file and question filled in:
       Read the file shards/<file> and answer this question exactly, computing it from the
       whole file: <question> Do not start subagents. End with one line of the form
       ANSWER::<file>::<{value}>
       and give that line as the result of your complete_task call.
   Call invoke_agent for every shard in the same turn: they run at the same time.

2. Wait until every subagent has reported. Never start two subagents for the same shard,
   never use other worker names, and start a replacement (the same prompt) only if a
   subagent failed, at most once per shard.

3. Answer only from the subagents' reports. Then write the file {artifact} in the
   repository root with your write_file tool, with exactly one bullet line per shard, using
   the {file_phrase} and the bare {value_answer}. For example, if the report for
   {first_file} said {example}:
       - {first_file}: {example}
   ({count} bullet lines, one for each shard, no other text on those lines.)

4. Only after {artifact} is written, end your turn.
"""
)

#: On an edit fixture: each subagent makes its ticket's change first, with Gemini CLI's
#: edit tools.
GEMINI_EDIT_TASK = edit_template(GEMINI_TASK)
EDIT_TOOLS = "your replace and write_file tools (read a file before you change it)"


def gemini_task(fixture: Fixture) -> str:
    """The Gemini CLI prompt for ``fixture`` (its data paragraph taken from task.txt; an
    edit fixture's subagents make their tickets' changes before they answer)."""
    return agent_prompt(
        GEMINI_EDIT_TASK if fixture.manifest.kind == "edit" else GEMINI_TASK,
        fixture.manifest,
        fixture.task_text,
        worker_agent=WORKER_AGENT,
        worker_line=WORKER_LINE,
        edit_tools=EDIT_TOOLS,
    )
