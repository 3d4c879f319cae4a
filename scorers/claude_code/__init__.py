"""Claude Code: the parsers that know its on-disk formats, and its scoring entry point."""

from __future__ import annotations

from scorers.claude_code.evidence import collect_evidence
from scorers.claude_code.parent import parse_parent_transcript
from scorers.claude_code.stream import parse_stream
from scorers.claude_code.subagent import parse_meta, parse_subagent_transcript
from scorers.claude_code.types import ClaudeCodeArtifacts, SubagentFile
from scorers.score import score_evidence
from scorers.types import Manifest
from scorers.verdict import ItemScore


def score_claude_code(artifacts: ClaudeCodeArtifacts, manifest: Manifest) -> ItemScore:
    """Score one Claude Code run: parse its artifacts, then judge them."""
    return score_evidence(collect_evidence(artifacts), manifest)


__all__ = [
    "ClaudeCodeArtifacts",
    "SubagentFile",
    "collect_evidence",
    "parse_meta",
    "parse_parent_transcript",
    "parse_stream",
    "parse_subagent_transcript",
    "score_claude_code",
]
