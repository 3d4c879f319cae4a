"""Gemini CLI: the parsers that know its on-disk record (chat records, stream-json stdout),
and its scoring entry point."""

from __future__ import annotations

from scorers.gemini.chat import Chat, Message, ToolCall, parse_chat
from scorers.gemini.evidence import UNSTARTED_PREFIX, gemini_evidence, run_evidence
from scorers.gemini.invoke import Heard, heard, worker_of
from scorers.gemini.run import GeminiRun, Invocation, read_run, spawn_calls
from scorers.gemini.stream import StdoutParse, parse_stdout
from scorers.gemini.types import GeminiInputs
from scorers.score import score_evidence
from scorers.types import Manifest
from scorers.verdict import ItemScore


def score_gemini(inputs: GeminiInputs, manifest: Manifest) -> ItemScore:
    """Score one Gemini CLI run: parse its files, then judge them."""
    return score_evidence(gemini_evidence(inputs), manifest)


__all__ = [
    "UNSTARTED_PREFIX",
    "Chat",
    "GeminiInputs",
    "GeminiRun",
    "Heard",
    "Invocation",
    "Message",
    "StdoutParse",
    "ToolCall",
    "gemini_evidence",
    "heard",
    "parse_chat",
    "parse_stdout",
    "read_run",
    "run_evidence",
    "score_gemini",
    "spawn_calls",
    "worker_of",
]
