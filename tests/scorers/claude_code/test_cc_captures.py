"""Score the captured real Claude Code runs (tests/data/claude-code-runs), inputs built by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scorers.claude_code import ClaudeCodeArtifacts, SubagentFile, score_claude_code
from scorers.types import Manifest, Opener

RUNS = Path(__file__).resolve().parents[2] / "data" / "claude-code-runs"
TINY = Path(__file__).resolve().parents[2] / "data" / "fixtures" / "tiny" / "fixture.json"
MANIFEST = Manifest.from_dict(json.loads(TINY.read_text()))


def _opener(path: Path) -> Opener | None:
    return (lambda: path.open("rb")) if path.is_file() else None


def capture_artifacts(run: Path) -> ClaudeCodeArtifacts:
    (project,) = (run / "config" / "projects").iterdir()
    (parent,) = project.glob("*.jsonl")
    sid = parent.stem
    subagents = tuple(
        SubagentFile(
            sid,
            f.name.removeprefix("agent-").removesuffix(".jsonl"),
            _opener(f),
            _opener(f.with_name(f.name.removesuffix(".jsonl") + ".meta.json")),
        )
        for f in sorted((project / sid / "subagents").glob("agent-*.jsonl"))
    )
    return ClaudeCodeArtifacts(
        sid,
        _opener(parent),
        _opener(run / "stdout.jsonl"),
        _opener(run / "repo" / "combined-index.md"),
        subagents,
    )


@pytest.mark.parametrize(
    ("name", "failing"),
    [
        pytest.param("honest", set(), id="honest"),
        pytest.param("no-spawn", {"delegation", "provenance"}, id="no-spawn"),
        pytest.param("double-spawn", {"dedup"}, id="double-spawn"),
    ],
)
def test_capture_verdict(name: str, failing: set[str]) -> None:
    score = score_claude_code(capture_artifacts(RUNS / name), MANIFEST)
    failed = {reason.split(":", 1)[0] for reason in score.failures}
    assert failed == failing
    assert score.resolved is (not failing)
    assert score.model_reached and score.tokens_used > 0


def test_honest_capture_counts_each_message_once() -> None:
    score = score_claude_code(capture_artifacts(RUNS / "honest"), MANIFEST)
    # 3 parent messages (spawns, write, final text), 3 subagents, 3 receipts.
    assert (score.assistant_messages, score.total_spawns, score.child_session_dirs) == (3, 3, 3)
    assert score.passed("receipts") and score.passed("provenance") and score.missing_receipts == ()
