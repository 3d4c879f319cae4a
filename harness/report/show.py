"""``show``: one item's story as text."""

from __future__ import annotations

from harness.model.provider_text import item_faults_line
from harness.model.story import ItemStory
from harness.model.text import cost_text, efficiency_line, item_reasons, usage_line


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
    faults = facts.provider_faults
    for f in faults.evidence if faults is not None else ():
        status = "" if f.status is None else f"{f.status} "
        said = f.message.replace("\n", " ")[:100]
        done = "retried" if f.retried else "final"
        lines.append(f"    fault {f.session}: {status}{f.kind} ({done}): {said}")
    if story.problem:
        lines.append(f"  (bundle not fully readable: {story.problem})")
    lines.append("answers (expected -> answered):")
    for a in story.answers:
        mark = {"right": "ok", "wrong": "WRONG", "missing": "MISSING"}[a.status]
        lines.append(
            f"  {mark:<8}{a.file}: {a.expected} -> {', '.join(a.got) or '-'}  ({a.worker})"
        )
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
