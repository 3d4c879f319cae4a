"""``show``: one item's story."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from harness.cli.errors import translate_errors
from harness.cli.options import option
from harness.cli.params import RunDirType, runs_dir_option

if TYPE_CHECKING:  # the story pulls in the statistics stack: only `show` itself loads it
    from harness.story import ItemStory


@click.command("show")
@click.argument("target", metavar="ITEM_DIR|KEY")
@option(
    "--run",
    "run",
    type=RunDirType(exists=True, path_type=Path),
    default="latest",
    help="The run a KEY is looked up in (a run dir, or 'latest').",
)
@runs_dir_option
@translate_errors
def show_cmd(target: str, run: Path | str, runs_dir: Path) -> None:
    """Print one item's story: verdict, reasons, answers against expected, children and
    receipts, timeline, files. ITEM_DIR is a run's items/<item>/; KEY is fixture:model:trial."""
    from harness.story import find_story

    click.echo(story_text(find_story(target, run, runs_dir)))


def story_text(story: ItemStory) -> str:
    item = story.item
    lines = [f"{story.key}: {story.status}"]
    if story.cause:
        lines.append(f"  why: {story.cause}")
    if story.failed_criteria:
        lines.append(f"  failed criteria: {', '.join(story.failed_criteria)}")
    lines.append(
        f"  tokens {item.get('tokens_used')}, turns {item.get('turns')}, "
        f"wall {item.get('wall_time_s')} s, exit {item.get('exit_code')}"
    )
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
