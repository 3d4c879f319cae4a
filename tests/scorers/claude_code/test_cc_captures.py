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


def _last_model_usage(run: Path) -> dict[str, dict]:
    results = [
        json.loads(line)
        for line in (run / "stdout.jsonl").read_text().splitlines()
        if '"type":"result"' in line
    ]
    return results[-1]["modelUsage"]


@pytest.mark.parametrize("name", ["honest", "no-spawn", "double-spawn"])
def test_tokens_come_from_the_last_result_not_the_transcripts(name: str) -> None:
    """The transcripts keep each message's streaming placeholder output count; the client's
    own ``modelUsage`` (cumulative over the run's result events) is the account, and it
    matched what the scripted server billed."""
    run = RUNS / name
    usage = score_claude_code(capture_artifacts(run), MANIFEST).usage
    reported = _last_model_usage(run)
    expected = sum(
        m["inputTokens"] + m["outputTokens"] + m["cacheReadInputTokens"]
        + m["cacheCreationInputTokens"]
        for m in reported.values()
    )  # fmt: skip
    assert usage.total.total == expected and usage.complete
    assert usage.source == "the agent's usage report"
    assert set(usage.by_model) == set(reported)
    assert (usage.parent, usage.children) == (None, None)  # the client does not split them
    assert usage.agent_reported_cost_usd is not None and usage.agent_reported_cost_usd > 0


def test_double_spawn_emits_several_cumulative_results() -> None:
    """Five result events; the last one holds the whole run (the first does not)."""
    run = RUNS / "double-spawn"
    results = [
        json.loads(line)["modelUsage"]["double-spawn"]
        for line in (run / "stdout.jsonl").read_text().splitlines()
        if '"type":"result"' in line
    ]
    totals = [r["inputTokens"] + r["outputTokens"] for r in results]
    assert len(totals) == 5 and totals == sorted(totals) and totals[0] < totals[-1]
    score = score_claude_code(capture_artifacts(run), MANIFEST)
    assert score.tokens_used == totals[-1] == 118_635
