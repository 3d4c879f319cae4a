"""Codex: the parsers that know its on-disk record (rollouts, stdout, its log), and its
scoring entry point."""

from __future__ import annotations

from scorers.codex.evidence import codex_evidence
from scorers.codex.log import LoggedFailure, parse_log
from scorers.codex.rollout import Thread, parse_rollout
from scorers.codex.stream import StdoutParse, parse_stdout
from scorers.codex.types import CodexInputs
from scorers.score import score_evidence
from scorers.types import Manifest
from scorers.verdict import ItemScore


def score_codex(inputs: CodexInputs, manifest: Manifest) -> ItemScore:
    """Score one Codex run: parse its files, then judge them."""
    return score_evidence(codex_evidence(inputs), manifest)


__all__ = [
    "CodexInputs",
    "LoggedFailure",
    "StdoutParse",
    "Thread",
    "codex_evidence",
    "parse_log",
    "parse_rollout",
    "parse_stdout",
    "score_codex",
]
