"""opencode: the parsers that know its on-disk record, and its scoring entry point."""

from __future__ import annotations

from scorers.opencode.evidence import opencode_evidence
from scorers.opencode.store import Store, read_store
from scorers.opencode.stream import StdoutParse, parse_stdout
from scorers.opencode.tree import RunTree, build_tree
from scorers.opencode.types import OpencodeInputs
from scorers.opencode.wal import WalImage, apply_wal
from scorers.score import score_evidence
from scorers.types import Manifest
from scorers.verdict import ItemScore


def score_opencode(inputs: OpencodeInputs, manifest: Manifest) -> ItemScore:
    """Score one opencode run: parse its files, then judge them."""
    return score_evidence(opencode_evidence(inputs), manifest)


__all__ = [
    "OpencodeInputs",
    "RunTree",
    "StdoutParse",
    "Store",
    "WalImage",
    "apply_wal",
    "build_tree",
    "opencode_evidence",
    "parse_stdout",
    "read_store",
    "score_opencode",
]
