"""An edit item's part of its drill-down in report.html: a table of its shards (the hidden
checks' outcome, each owned file's state and writers, the verdicts' words), then each
shard's diffs and the end of its checks' output, the shared files' diffs, the lanes
violations and the undeclared changes. Diffs and outputs are the agent's text: escaped,
and held in blocks that scroll inside the page's width rather than widen it."""

from __future__ import annotations

from harness.model.story import (
    EditStory,
    FileEdit,
    ShardEdit,
    checks_text,
    state_text,
    writers_text,
)
from harness.report.html_parts import esc

#: The drill-down's styles for diffs and checks' output (report.html adds them to its own).
EDITS_CSS = """
pre.diff,pre.tail{max-width:100%;overflow-x:auto;margin:4px 0;padding:4px 8px;font-size:12px;background:#f7f7f7;border:1px solid #e3e3e3}
pre.diff .add{color:#007a55}pre.diff .del{color:#b3261e}pre.diff .hunk{color:#555}
table.edits td.passed{color:#007a55}table.edits td.failed,table.edits td.error,table.edits td.timed-out,table.edits td.none{color:#b34700}
"""


def _diff_line(line: str) -> str:
    text = esc(line)
    if line.startswith(("+++", "---")):
        return f'<span class="hunk">{text}</span>'
    if line.startswith("+"):
        return f'<span class="add">{text}</span>'
    if line.startswith("-"):
        return f'<span class="del">{text}</span>'
    if line.startswith("@@"):
        return f'<span class="hunk">{text}</span>'
    return text


def _diff(edit: FileEdit) -> str:
    head = (
        f'<p class="meta" data-path="{esc(edit.path)}"><code>{esc(edit.path)}</code>: '
        f"{esc(state_text(edit))}, written by {esc(writers_text(edit))}</p>"
    )
    if not edit.diff:
        return head
    body = "\n".join(_diff_line(line) for line in edit.diff.splitlines())
    cut = "\n[diff cut]" if edit.truncated else ""
    return f'{head}<pre class="diff" data-path="{esc(edit.path)}">{body}{cut}</pre>'


def _outcome_class(shard: ShardEdit) -> str:
    return "none" if shard.checks is None else shard.checks.outcome.replace(" ", "-")


def _row(shard: ShardEdit) -> str:
    files = "".join(
        f"<li><code>{esc(f.path)}</code> {esc(state_text(f))}, by {esc(writers_text(f))}</li>"
        for f in shard.files
    )
    why = "".join(f"<li>{esc(w)}</li>" for w in shard.why)
    return (
        f'<tr data-shard="{esc(shard.file)}"><td>{esc(shard.file)}</td><td>{esc(shard.worker)}</td>'
        f'<td class="{_outcome_class(shard)}">{esc(checks_text(shard.checks))}</td>'
        f"<td><ul>{files}</ul></td><td><ul>{why}</ul></td></tr>"
    )


def _shard_details(shard: ShardEdit) -> str:
    parts = [_diff(f) for f in shard.files]
    checks = shard.checks
    if checks is not None and checks.tail:
        parts.append(
            f'<p class="meta">Checks output (end):</p><pre class="tail">{esc(checks.tail)}</pre>'
        )
    opened = " open" if checks is None or checks.outcome != "passed" else ""
    return (
        f'<details class="shard-edit" data-shard="{esc(shard.file)}"{opened}><summary>'
        f"{esc(shard.file)}: checks {esc(checks_text(checks))}</summary>{''.join(parts)}</details>"
    )


def edits_html(edits: EditStory) -> str:
    """The edit part of one item's drill-down."""
    passed = sum(1 for s in edits.shards if s.checks is not None and s.checks.outcome == "passed")
    out = [f"<p>Edits: {passed} of {len(edits.shards)} shards' hidden checks passed.</p>"]
    if edits.checks_error:
        out.append(f'<p class="meta">Checks could not run: {esc(edits.checks_error)}</p>')
    if edits.malformed:
        out.append(f'<p class="meta">{edits.malformed} entries of edits.json unreadable.</p>')
    rows = "".join(_row(s) for s in edits.shards)
    out.append(
        '<div class="wide"><table class="edits"><tr><th>shard</th><th>worker</th><th>checks</th>'
        f"<th>its files, by whom</th><th>verdicts</th></tr>{rows}</table></div>"
    )
    out.extend(_shard_details(s) for s in edits.shards)
    if edits.shared:
        shared = "".join(_diff(f) for f in edits.shared)
        out.append(
            f'<details class="shared-edit"><summary>Shared files</summary>{shared}</details>'
        )
    lanes = "".join(f"<li>{esc(v)}</li>" for v in edits.lanes)
    out.append(
        f'<p data-field="lanes">Lanes: {"" if lanes else "no child left its lane."}</p>'
        + (f"<ul>{lanes}</ul>" if lanes else "")
    )
    undeclared = ", ".join(f"<code>{esc(p)}</code>" for p in edits.undeclared) or "none"
    out.append(f'<p data-field="undeclared">Changes outside the declared files: {undeclared}</p>')
    return "".join(out)
