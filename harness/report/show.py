"""``show``: one item's story as text."""

from __future__ import annotations

from harness.model.provider_text import item_faults_line
from harness.model.story import (
    EditStory,
    FileEdit,
    ItemStory,
    checks_text,
    state_text,
    writers_text,
)
from harness.model.text import cost_text, efficiency_line, item_reasons, usage_line
from scorers import ProviderFaults

#: How much of a fault's message ``show`` prints (the final one's: the client's own words
#: for why the run ended, which the user needs whole to fix it).
FAULT_WORDS_CHARS = 100
FINAL_FAULT_WORDS_CHARS = 240


def fault_lines(faults: ProviderFaults | None) -> list[str]:
    """One line per fault the agent recorded, the same fault repeated in a row said once
    with its count (a client's retries of one request: six identical lines, once)."""
    said: list[tuple[str, int]] = []
    for f in faults.evidence if faults is not None else ():
        status = "" if f.status is None else f"{f.status} "
        limit = FAULT_WORDS_CHARS if f.retried else FINAL_FAULT_WORDS_CHARS
        words = " ".join(f.message.split())[:limit]
        done = "retried" if f.retried else "final"
        line = f"    fault {f.session}: {status}{f.kind} ({done}): {words}"
        if said and said[-1][0] == line:
            said[-1] = (line, said[-1][1] + 1)
        else:
            said.append((line, 1))
    return [line if n == 1 else f"{line} (×{n})" for line, n in said]


#: How much of the agent's own error ``show`` quotes on its one line (report.md quotes 300).
AGENT_ERROR_CHARS = 300


def _shown(line: str) -> str:
    """A line of a diff or of checks' output, its control characters written out: the
    text is the agent's, and an escape sequence in it must not drive the terminal."""
    return "".join(c if c.isprintable() or c == "\t" else repr(c)[1:-1] for c in line)


def _file_lines(edit: FileEdit, indent: str, label: str = "") -> list[str]:
    lines = [f"{indent}{label}{edit.path}: {state_text(edit)}, written by {writers_text(edit)}"]
    lines.extend(f"{indent}  {_shown(line)}" for line in edit.diff.splitlines())
    if edit.truncated:
        lines.append(f"{indent}  [diff cut]")
    return lines


def edit_lines(edits: EditStory) -> list[str]:
    """An edit fixture's shards: each one's checks with their output's tail when they did
    not pass, each owned file's change and writers; then the shared files, the lanes
    violations and the undeclared changes."""
    passed = sum(1 for s in edits.shards if s.checks is not None and s.checks.outcome == "passed")
    lines = [f"edits: {passed} of {len(edits.shards)} shards' checks passed"]
    if edits.checks_error:
        lines.append(f"  checks could not run: {edits.checks_error}")
    if edits.malformed:
        lines.append(f"  ({edits.malformed} entries of edits.json unreadable)")
    for shard in edits.shards:
        lines.append(f"  {shard.file} ({shard.worker}): checks {checks_text(shard.checks)}")
        lines.extend(f"    why: {why}" for why in shard.why)
        for edit in shard.files:
            lines.extend(_file_lines(edit, "    "))
        if shard.checks is not None and shard.checks.outcome != "passed" and shard.checks.tail:
            lines.append("    checks output (end):")
            lines.extend(f"      | {_shown(line)}" for line in shard.checks.tail.splitlines())
    for edit in edits.shared:
        lines.extend(_file_lines(edit, "  ", "shared "))
    lines.append(f"  lanes: {'; '.join(edits.lanes) or 'no child left its lane'}")
    lines.append(f"  undeclared changes: {', '.join(edits.undeclared) or 'none'}")
    return lines


def story_text(story: ItemStory) -> str:
    result = story.result
    lines = [f"{result.key}: {result.status}"]
    reasons = item_reasons(result)
    if reasons:
        lines.append(f"  why: {reasons[0]}")
        lines.extend(f"       {reason}" for reason in reasons[1:])
    score, facts = result.score, result.facts
    lines.append(
        f"  tokens {score.tokens_used}, turns {score.turns}, "
        f"wall {facts.wall_time_s} s, exit {facts.exit_code}"
    )
    parts = (
        usage_line(score),
        cost_text(result),
        efficiency_line(score),
        item_faults_line(result),
    )
    lines.extend(f"  {line}" for line in parts if line)
    if facts.agent_error:  # what the agent itself said went wrong (its stderr's tail)
        said = " ".join(facts.agent_error.split())
        cut = said[:AGENT_ERROR_CHARS] + ("…" if len(said) > AGENT_ERROR_CHARS else "")
        lines.append(f"  agent error: {_shown(cut)}")
    lines.extend(fault_lines(facts.provider_faults))
    if story.problem:
        lines.append(f"  (bundle not fully readable: {story.problem})")
    lines.append("answers (expected -> answered):")
    for a in story.answers:
        mark = {"right": "ok", "wrong": "WRONG", "missing": "MISSING"}[a.status]
        lines.append(
            f"  {mark:<8}{a.file}: {a.expected} -> {', '.join(a.got) or '-'}  ({a.worker})"
        )
    if story.edits is not None:
        lines.extend(edit_lines(story.edits))
    lines.append(f"children (depth 1): {len(story.children)}")
    for c in story.children:
        state = "deleted" if c.deleted else "live"
        lines.append(
            f"  {c.name:<24} {c.child_id:<16} {state:<8} receipts: {', '.join(c.receipts) or 'NONE'}"
        )
    lines.append(f"timeline: {len(story.timeline)} events")
    for e in story.timeline:
        when = "" if e.offset_s is None else f"+{e.offset_s:.3f}s"
        detail = e.detail.replace("\n", " ")[:80]
        lines.append(f"  {when:>10} {e.kind:<8} {e.name or e.child_id:<24} {detail}".rstrip())
    lines.append(f"files ({story.item_dir}):")
    lines.extend(f"  {f}" for f in story.files)
    return "\n".join(lines)
