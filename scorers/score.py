"""Judge one run's evidence against its manifest (agent-neutral).

A run is resolved only when coverage, delegation evidence, dedup, receipts and
provenance all pass;
usage is reported, never gating. Each failed criterion gets one short reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from scorers.coverage import CoverageResult, check_coverage
from scorers.dedup import SpawnAudit, audit_spawns, over_budget
from scorers.delegation import DelegationResult, check_delegation
from scorers.edges import replay
from scorers.provenance import ProvenanceResult, check_provenance
from scorers.receipts import find_missing_receipts
from scorers.records import LedgerParse, ReceiptIndex, RunEvidence
from scorers.types import Manifest
from scorers.usage import choose_usage, model_reached
from scorers.verdict import ItemScore

#: Items named in one failure reason before the rest are summarised as "+N more".
_LISTED: Final = 5


def _listing(items: Sequence[str]) -> str:
    shown = ", ".join(items[:_LISTED])
    return shown + (f" (+{len(items) - _LISTED} more)" if len(items) > _LISTED else "")


def _coverage_failure(result: CoverageResult, evidence: RunEvidence, manifest: Manifest) -> str:
    reasons = []
    if evidence.answers is None:
        reasons.append(f"artifact {manifest.artifact} missing")
    elif result.missing_shards:
        reasons.append(f"no bullet for {_listing(result.missing_shards)}")
    for wrong in result.wrong_answers[:_LISTED]:
        got = _listing([repr(answer) for answer in wrong.got])
        reasons.append(f"{wrong.file} answered {got}, expected {wrong.expected!r}")
    if len(result.wrong_answers) > _LISTED:
        reasons.append(f"+{len(result.wrong_answers) - _LISTED} more wrong")
    return "coverage: " + "; ".join(reasons)


def _delegation_failure(result: DelegationResult, evidence: RunEvidence) -> str:
    reason = (
        f"delegation: no live depth-1 child named {_listing(result.unverified)}"
        " backed by a session file"
    )
    if evidence.session is None or evidence.session.header_id is None:
        reason += " (parent transcript header id unknown)"
    return reason


def _dedup_failure(audit: SpawnAudit, budget: int) -> str:
    reasons = [
        f"{dup.name} spawned as {dup.child_id} while {dup.held_by} held it"
        for dup in audit.duplicates[:_LISTED]
    ]
    if len(audit.duplicates) > _LISTED:
        reasons.append(f"+{len(audit.duplicates) - _LISTED} more duplicate spawns")
    if over_budget(audit.total_spawns, budget):
        reasons.append(f"{audit.total_spawns} depth-1 spawns exceed the budget of {budget}")
    return "dedup: " + "; ".join(reasons)


def _provenance_failure(result: ProvenanceResult) -> str:
    reasons = [f"{shard.file}: {shard.reason}" for shard in result.untraced[:_LISTED]]
    if len(result.untraced) > _LISTED:
        reasons.append(f"+{len(result.untraced) - _LISTED} more untraced")
    return "provenance: " + "; ".join(reasons)


def score_evidence(evidence: RunEvidence, manifest: Manifest) -> ItemScore:
    """The verdict on one run's parsed evidence."""
    shards = manifest.shards
    history = replay(evidence.ledger.events, evidence.parent_paths)
    depth1 = history.depth1
    session = evidence.session

    coverage = check_coverage(
        evidence.answers.bullets if evidence.answers is not None else None, shards
    )
    delegation = check_delegation(shards, depth1, evidence.child_sessions)
    audit = audit_spawns(history, (shard.worker for shard in shards))
    budget = manifest.spawn_budget
    dedup = not audit.duplicates and not over_budget(audit.total_spawns, budget)
    missing_receipts = find_missing_receipts(
        depth1, session.receipts if session is not None else ReceiptIndex()
    )
    provenance = check_provenance(
        shards,
        evidence.answers.bullets if evidence.answers is not None else None,
        depth1,
        session.replies if session is not None else (),
        evidence.child_sessions,
        evidence.parent_paths,
        session.header_id if session is not None else None,
    )
    usage = choose_usage(evidence.stream, session)

    failures = []
    if not coverage.passed:
        failures.append(_coverage_failure(coverage, evidence, manifest))
    if not delegation.passed:
        failures.append(_delegation_failure(delegation, evidence))
    if not dedup:
        failures.append(_dedup_failure(audit, budget))
    if missing_receipts:
        failures.append(f"receipts: no reply or notice from {_listing(missing_receipts)}")
    if not provenance.passed:
        failures.append(_provenance_failure(provenance))

    return ItemScore(
        resolved=not failures,
        coverage=coverage.passed,
        missing_shards=coverage.missing_shards,
        wrong_answers=coverage.wrong_answers,
        delegation_evidence=delegation.passed,
        live_depth1_edges=delegation.live_depth1_edges,
        distinct_worker_names=delegation.distinct_worker_names,
        child_session_dirs=evidence.child_session_dirs,
        verified_shard_workers=delegation.verified,
        unverified_shard_workers=delegation.unverified,
        dedup=dedup,
        duplicate_spawns=len(audit.duplicates),
        duplicate_spawn_details=audit.duplicates,
        total_spawns=audit.total_spawns,
        spawn_budget=budget,
        receipts=not missing_receipts,
        missing_receipts=missing_receipts,
        provenance=provenance.passed,
        untraced_shards=tuple(shard.file for shard in provenance.untraced),
        untraced_shard_details=provenance.untraced,
        ledger_malformed_lines=evidence.ledger.malformed_lines,
        ledger_unknown_ops=evidence.ledger.unknown_ops,
        ledger_torn_tail=evidence.ledger.torn_tail,
        transcript_malformed_lines=session.malformed_lines if session is not None else 0,
        child_session_malformed_lines=evidence.child_malformed_lines,
        stdout_malformed_lines=(
            evidence.stream.malformed_lines if evidence.stream is not None else 0
        ),
        tokens_used=usage.tokens_used,
        parent_tokens=usage.parent.tokens,
        child_tokens=usage.child_tokens,
        turns=usage.parent.assistant_messages,
        assistant_messages=usage.parent.assistant_messages,
        failed_assistant_messages=usage.parent.failed_assistant_messages,
        model_reached=model_reached(usage.parent),
        agent_error=usage.parent.first_error,
        parent_session_id=session.header_id if session is not None else None,
        failures=tuple(failures),
    )


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
