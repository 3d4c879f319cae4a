"""Judge one run's evidence against its manifest (agent-neutral).

A run is resolved only when every criterion of the registry (``scorers.criteria``) passes;
usage is reported, never gating. Each failed criterion gets one short reason.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import scorers.criteria as rubric
from scorers.criteria import ScoringContext
from scorers.efficiency import efficiency
from scorers.provider import ProviderFaults, judge_provider
from scorers.records import LedgerParse, RunEvidence
from scorers.types import Manifest
from scorers.usage import model_reached, parent_usage, summarize_usage
from scorers.verdict import Arm, Check, ItemScore

_SCORE_FIELDS = frozenset(f.name for f in dataclasses.fields(ItemScore))


def score_evidence(evidence: RunEvidence, manifest: Manifest, arm: Arm = "swarm") -> ItemScore:
    """The verdict on one run's parsed evidence. A solo twin's (``arm`` ``solo``) is judged
    by the criteria that apply to one agent working alone; the others are not judged (not
    failed): they are about a swarm it was asked not to start."""
    ctx = ScoringContext(evidence, manifest)
    checks: list[Check] = []
    details: dict[str, object] = {}
    for criterion in rubric.CRITERIA:
        judgement = criterion.judge(ctx)
        if arm == "solo" and not criterion.solo:
            details.update((k, v) for k, v in judgement.details.items() if k in _SCORE_FIELDS)
            continue
        # Details land in the ItemScore fields of the same name where the score has them;
        # the rest stay with the criterion's check, so nothing a judge reports is dropped.
        own = {k: v for k, v in judgement.details.items() if k not in _SCORE_FIELDS}
        details.update((k, v) for k, v in judgement.details.items() if k in _SCORE_FIELDS)
        checks.append(
            Check(
                criterion.name,
                judgement.passed,
                tuple(judgement.failing),
                judgement.reason,
                own,
                () if judgement.passed else (tuple(judgement.signatures) or ("failed",)),
            )
        )
    session = evidence.session
    parent = parent_usage(evidence.stream, session)
    usage = summarize_usage(evidence, parent)
    return ItemScore(
        **details,  # type: ignore[arg-type]  # the judges' fields, checked by the dataclass
        child_session_dirs=evidence.child_session_dirs,
        ledger_malformed_lines=evidence.ledger.malformed_lines,
        ledger_unknown_ops=evidence.ledger.unknown_ops,
        ledger_torn_tail=evidence.ledger.torn_tail,
        transcript_malformed_lines=session.malformed_lines if session is not None else 0,
        child_session_malformed_lines=evidence.child_malformed_lines,
        stdout_malformed_lines=(
            evidence.stream.malformed_lines if evidence.stream is not None else 0
        ),
        tokens_used=usage.total.total,
        turns=parent.tally.assistant_messages,
        assistant_messages=parent.tally.assistant_messages,
        failed_assistant_messages=parent.tally.failed_assistant_messages,
        model_reached=model_reached(parent.tally),
        agent_error=parent.tally.first_error,
        parent_session_id=session.header_id if session is not None else None,
        checks=tuple(checks),
        usage=usage,
        efficiency=efficiency(evidence, usage, manifest),
    )


class Assessment(NamedTuple):
    """A run's verdict and what the provider did to it (its faults, and whether the
    provider, not the agent, ended it)."""

    score: ItemScore
    faults: ProviderFaults


def assess_evidence(evidence: RunEvidence, manifest: Manifest, arm: Arm = "swarm") -> Assessment:
    """The verdict on one run's evidence (of the swarm, or of its solo twin), and its
    provider faults."""
    score = score_evidence(evidence, manifest, arm)
    return Assessment(score, judge_provider(evidence, score, manifest))


def score_nothing(manifest: Manifest) -> ItemScore:
    """The verdict on a run that left nothing at all (an item that errored before it ran)."""
    empty = RunEvidence(
        parent_paths=(),
        ledger=LedgerParse(events=()),
        session=None,
        stream=None,
        answers=None,
        child_sessions=(),
        child_session_dirs=0,
    )
    return score_evidence(empty, manifest)
