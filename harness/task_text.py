"""The orchestration prompt (``task.txt``) of a fixture, rendered from its ``fixture.json``.

One template serves the generator (``fixtures/generate.py``) and ``fixtures task``, so a
hand-made fixture gets the same prompt as the generated ones. The paragraph describing the
shards' data format comes from the manifest's optional ``data_format`` key, else from the
fixture's current ``task.txt`` (the paragraph between the shard list and the steps).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

TASK_TEMPLATE = """\
You coordinate a team of subagents. This repository holds {count} data shards in the folder
shards/, and each shard has one question whose answer is an integer. Answer every question
by delegating: exactly one subagent (child) per shard, named exactly as its worker below.

Shards, questions and workers:
{shard_lines}

{data_format}

Follow these steps exactly.

1. Do not read the shards or answer the questions yourself. From your ipython tool, spawn one
   child per shard with its worker name, for example:
       await rlm("<task>", name="{first_worker}")
   You may spawn all {count} children in one ipython cell. Give each child this task, with its
   own file and question filled in:
       Read the file shards/<file> (paths are relative to the repository root, your working
       directory) with Python and answer this question exactly, computing it from the
       whole file: <question> Do not spawn subagents. When you have the integer,
       reply to the parent with exactly one call:
       await agent_message.send("<file>: <integer>", receiver_role="parent")
       and then finish.

2. Keep your run active until every child has replied. Ending your turn ends the whole run
   and stops any child that is still working, so do not end it early. After spawning, keep
   calling your ipython tool: poll `await rlm.list_subagents()` in a loop that sleeps a few
   seconds between polls (for example `await asyncio.sleep(5)`) and returns after at most
   about a minute, then call it again. Replies reach you between tool calls, one per call,
   so keep making such calls until you hold a reply from every one of the {count} workers,
   even after all children show as finished.

3. At most one retry per shard. If a child fails, or finishes and its reply still has not
   arrived after several more polls, you may replace it once: delete the old child (see
   help(rlm) for how), wait until its name is free (reusing a name is refused for several
   seconds after a delete; wait and try again), then spawn exactly one replacement with the
   same worker name and the same task. Never run two live children for the same shard,
   never spawn children under other names, never spawn a third child for a shard, and if
   you cannot delete the old child do not spawn a replacement.

4. Answer only from the children's replies. When every shard has its reply, write the file
   {artifact} in the repository root with exactly one bullet line per shard, using the
   bare file name (without the shards/ folder) and the bare integer answer. For example,
   if the reply for {first_file} said 1234, its line is:
       - {first_file}: 1234
   ({count} bullet lines, one for each shard, no other text on those lines.)

5. Only after {artifact} is written, end your turn.
"""

#: Where the data-format paragraph sits in a rendered task.txt.
_FORMAT_PARAGRAPH = re.compile(
    r"Shards, questions and workers:\n(?:- .*\n)+\n(?P<format>.*?)\n\nFollow these steps", re.S
)

#: A number of shards a prompt states: "holds 8 data shards", "all 8 children", "8 workers",
#: "(8 bullet lines". Each must equal the manifest's shard count.
STATED_COUNT = re.compile(
    r"\b(?P<n>\d+) (?:data shards|shards|children|subagents|workers|bullet lines)\b"
)


def worker_name(file: str) -> str:
    """The contract's worker naming: ``worker-<file stem>``."""
    return "worker-" + file.rsplit(".", 1)[0]


def data_format_of(task_text: str) -> str | None:
    """The data-format paragraph of a task.txt rendered from this template, if any."""
    found = _FORMAT_PARAGRAPH.search(task_text)
    return found.group("format").strip() if found else None


def render_task(shards: Sequence[Mapping[str, Any]], artifact: str, data_format: str | None) -> str:
    """task.txt for ``shards`` (each with ``file``, ``question`` and ``worker``)."""
    if not shards:
        raise ValueError("a fixture needs at least one shard")
    files = [str(s["file"]) for s in shards]
    lines = "\n".join(
        f"- shards/{s['file']}: {s['question']} (worker: {s.get('worker') or worker_name(s['file'])})"
        for s in shards
    )
    text = TASK_TEMPLATE.format(
        count=len(shards),
        shard_lines=lines,
        data_format=(data_format or "").strip(),
        first_worker=shards[0].get("worker") or worker_name(files[0]),
        first_file=files[0],
        artifact=artifact,
    )
    return text.replace("\n\n\n", "\n\n") if not data_format else text


def task_for_manifest(manifest: Mapping[str, Any], current_task: str | None = None) -> str:
    """task.txt for a parsed ``fixture.json``; keeps the current prompt's data paragraph
    when the manifest has no ``data_format``."""
    fmt = manifest.get("data_format")
    if not isinstance(fmt, str) or not fmt.strip():
        fmt = data_format_of(current_task) if current_task else None
    return render_task(manifest["shards"], manifest["artifact"], fmt)


def stated_counts(task_text: str) -> list[tuple[int, str]]:
    """Every shard count the prompt states, with the phrase that states it."""
    return [(int(m.group("n")), m.group(0)) for m in STATED_COUNT.finditer(task_text)]
