"""The rubric's gating criteria: one registry that scoring, reports, summaries, comparisons,
the report schema and the README's rubric all read.

Adding a criterion is one rule module (its ``check_*`` function and a ``judge`` adapter
that turns the shared :class:`ScoringContext` into a :class:`Judgement`) plus one entry in
:data:`CRITERIA`. Its verdict appears in every score's ``checks`` under its ``name``, its
rate in every summary and comparison, its reason among the item's failures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final

from scorers.authorship import check_authorship
from scorers.coverage import check_coverage
from scorers.dedup import SpawnAudit, audit_spawns, over_budget
from scorers.delegation import check_delegation
from scorers.edges import Edge, Replay, replay
from scorers.landed import Unlanded, check_landed
from scorers.lanes import check_lanes
from scorers.provenance import check_provenance
from scorers.receipts import find_missing_receipts
from scorers.records import Bullet, ReceiptIndex, RunEvidence
from scorers.types import Manifest

#: Items named in one failure reason before the rest are summarised as "+N more".
LISTED: Final = 5


def listing(items: Sequence[str]) -> str:
    shown = ", ".join(items[:LISTED])
    return shown + (f" (+{len(items) - LISTED} more)" if len(items) > LISTED else "")


class ScoringContext:
    """One run's evidence and manifest, with the derived views several rules share
    (computed once, on first use)."""

    def __init__(self, evidence: RunEvidence, manifest: Manifest) -> None:
        self.evidence = evidence
        self.manifest = manifest

    @cached_property
    def history(self) -> Replay:
        return replay(self.evidence.ledger.events, self.evidence.parent_paths)

    @property
    def depth1(self) -> Sequence[Edge]:
        return self.history.depth1

    @cached_property
    def audit(self) -> SpawnAudit:
        return audit_spawns(self.history, (shard.worker for shard in self.manifest.shards))

    @property
    def bullets(self) -> tuple[Bullet, ...] | None:
        answers = self.evidence.answers
        return answers.bullets if answers is not None else None

    @cached_property
    def names(self) -> dict[str, str]:
        """Each depth-1 child's id and the worker name it holds (or held, if deleted)."""
        return {edge.spawn.child_id: edge.name for edge in self.depth1}

    @cached_property
    def unlanded(self) -> tuple[Unlanded, ...]:
        """An edit fixture's shards whose change is not in the final tree."""
        return check_landed(self.manifest, self.evidence.tree, self.evidence.writes, self.names)

    @property
    def header_id(self) -> str | None:
        session = self.evidence.session
        return session.header_id if session is not None else None


@dataclass(frozen=True)
class Judgement:
    """A criterion's verdict on one run.

    ``failing`` names what fails it (shards, workers, children); ``reason`` is one line,
    prefixed with the criterion's name, when it failed. ``details`` are the evidence behind
    the verdict: keys that name an :class:`ItemScore` field fill it, the rest are kept in the
    criterion's :class:`Check`.
    """

    passed: bool
    failing: tuple[str, ...] = ()
    reason: str | None = None
    details: Mapping[str, object] = field(default_factory=dict)
    #: What failed, in words stable across trials (no child ids): triage's grouping key.
    signatures: tuple[str, ...] = ()


@dataclass(frozen=True)
class Criterion:
    """One gating criterion: its names, what it checks, and its judge."""

    #: Its one name: in scores, reports, tables and selftest expectations.
    name: str
    #: One sentence for the rubric: what it checks.
    summary: str
    judge: Callable[[ScoringContext], Judgement]
    #: Whether it judges a solo twin too (``run --solo``): what one agent alone can fail.
    solo: bool = False


# --- the five judges ---------------------------------------------------------------------


def judge_coverage(ctx: ScoringContext) -> Judgement:
    result = check_coverage(ctx.bullets, ctx.manifest.shards)
    details: dict[str, object] = {
        "missing_shards": result.missing_shards,
        "wrong_answers": result.wrong_answers,
    }
    if ctx.manifest.kind == "edit":
        details["unlanded_shards"] = [u.to_dict() for u in ctx.unlanded]
    if result.passed and not ctx.unlanded:
        return Judgement(True, details=details)
    reasons = []
    if ctx.evidence.answers is None:
        reasons.append(f"artifact {ctx.manifest.artifact} missing")
    elif result.missing_shards:
        reasons.append(f"no bullet for {listing(result.missing_shards)}")
    for wrong in result.wrong_answers[:LISTED]:
        got = listing([repr(answer) for answer in wrong.got])
        reasons.append(f"{wrong.file} answered {got}, expected {wrong.expected!r}")
    if len(result.wrong_answers) > LISTED:
        reasons.append(f"+{len(result.wrong_answers) - LISTED} more wrong")
    reasons += [str(u) for u in ctx.unlanded[:LISTED]]
    if len(ctx.unlanded) > LISTED:
        reasons.append(f"+{len(ctx.unlanded) - LISTED} more changes not landed")
    failed = (*result.missing_shards, *(w.file for w in result.wrong_answers))
    failing = tuple(dict.fromkeys((*failed, *(u.file for u in ctx.unlanded))))
    if ctx.evidence.answers is None:
        signatures: tuple[str, ...] = ("artifact missing",)
    else:
        signatures = (
            *(f"{f} missing" for f in result.missing_shards),
            *(f"{w.file} wrong" for w in result.wrong_answers),
        )
    signatures += tuple(dict.fromkeys(f"{u.file} {u.signature}" for u in ctx.unlanded))
    return Judgement(False, failing, "coverage: " + "; ".join(reasons), details, signatures)


def judge_delegation(ctx: ScoringContext) -> Judgement:
    result = check_delegation(ctx.manifest.shards, ctx.depth1, ctx.evidence.child_sessions)
    details = {
        "live_depth1_edges": result.live_depth1_edges,
        "distinct_worker_names": result.distinct_worker_names,
        "verified_shard_workers": result.verified,
        "unverified_shard_workers": result.unverified,
    }
    if result.passed:
        return Judgement(True, details=details)
    reason = (
        f"delegation: no live depth-1 child named {listing(result.unverified)}"
        " backed by a session file"
    )
    if ctx.header_id is None:
        reason += " (parent transcript header id unknown)"
    signatures = tuple(f"{w} not delegated" for w in result.unverified)
    return Judgement(False, result.unverified, reason, details, signatures)


def judge_dedup(ctx: ScoringContext) -> Judgement:
    audit, budget = ctx.audit, ctx.manifest.spawn_budget
    passed = not audit.duplicates and not over_budget(audit.total_spawns, budget)
    details = {
        "duplicate_spawns": len(audit.duplicates),
        "duplicate_spawn_details": audit.duplicates,
        "total_spawns": audit.total_spawns,
        "spawn_budget": budget,
    }
    if passed:
        return Judgement(True, details=details)
    reasons = [
        f"{dup.name} spawned as {dup.child_id} while {dup.held_by} held it"
        for dup in audit.duplicates[:LISTED]
    ]
    if len(audit.duplicates) > LISTED:
        reasons.append(f"+{len(audit.duplicates) - LISTED} more duplicate spawns")
    if over_budget(audit.total_spawns, budget):
        reasons.append(f"{audit.total_spawns} depth-1 spawns exceed the budget of {budget}")
    failing = tuple(dict.fromkeys(dup.child_id for dup in audit.duplicates))
    signatures = tuple(dict.fromkeys(f"{dup.name} spawned twice" for dup in audit.duplicates))
    if over_budget(audit.total_spawns, budget):
        signatures += ("over the spawn budget",)
    return Judgement(False, failing, "dedup: " + "; ".join(reasons), details, signatures)


def judge_receipts(ctx: ScoringContext) -> Judgement:
    session = ctx.evidence.session
    missing = find_missing_receipts(
        ctx.depth1, session.receipts if session is not None else ReceiptIndex()
    )
    details = {"missing_receipts": missing}
    if not missing:
        return Judgement(True, details=details)
    return Judgement(
        False,
        missing,
        f"receipts: no reply or notice from {listing(missing)}",
        details,
        ("a child never heard from",),
    )


def judge_provenance(ctx: ScoringContext) -> Judgement:
    session = ctx.evidence.session
    result = check_provenance(
        ctx.manifest.shards,
        ctx.bullets,
        ctx.depth1,
        session.replies if session is not None else (),
        ctx.evidence.child_sessions,
        ctx.evidence.parent_paths,
        ctx.header_id,
    )
    edits = check_authorship(
        ctx.manifest,
        ctx.evidence.tree,
        ctx.evidence.writes,
        ctx.names,
        {u.file for u in ctx.unlanded},
    )
    every = (*result.untraced, *edits)
    untraced = tuple(dict.fromkeys(shard.file for shard in every))
    details: dict[str, object] = {"untraced_shards": untraced, "untraced_shard_details": every}
    if not every:
        return Judgement(True, details=details)
    reasons = [f"{shard.file}: {shard.reason}" for shard in every[:LISTED]]
    if len(every) > LISTED:
        reasons.append(f"+{len(every) - LISTED} more untraced")
    signatures = tuple(f"{f} untraced" for f in untraced)
    return Judgement(False, untraced, "provenance: " + "; ".join(reasons), details, signatures)


def judge_lanes(ctx: ScoringContext) -> Judgement:
    violations = check_lanes(ctx.manifest, ctx.evidence.writes, ctx.names)
    details = {"lane_violations": [v.to_dict() for v in violations]}
    if not violations:
        return Judgement(True, details=details)
    reasons = [str(v) for v in violations[:LISTED]]
    if len(violations) > LISTED:
        reasons.append(f"+{len(violations) - LISTED} more")
    failing = tuple(dict.fromkeys(v.writer for v in violations))
    signatures = tuple(dict.fromkeys(f"{v.writer} left its lane" for v in violations))
    return Judgement(False, failing, "lanes: " + "; ".join(reasons), details, signatures)


#: The rubric, in report order. A run is resolved only when every criterion passes.
CRITERIA: tuple[Criterion, ...] = (
    Criterion(
        "coverage",
        "the artifact answers every shard, and every answer to it is right; on an edit "
        "fixture, each shard's hidden checks also pass on the final tree",
        judge_coverage,
        solo=True,
    ),
    Criterion(
        "delegation",
        "every shard's worker name is a live depth-1 child of this run's parent, backed by "
        "its own child session on disk",
        judge_delegation,
    ),
    Criterion(
        "dedup",
        "no spawn takes a worker name another live child holds, and depth-1 spawns stay "
        "within two per shard",
        judge_dedup,
    ),
    Criterion(
        "receipts",
        "every depth-1 child, live or deleted, has a reply or a failure/terminal notice",
        judge_receipts,
    ),
    Criterion(
        "provenance",
        "every answer was stated by the shard's own child, which shows real work in its "
        "own session, in time order; on an edit fixture, each shard's files were changed "
        "by its own child alone",
        judge_provenance,
    ),
    Criterion(
        "lanes",
        "on an edit fixture, no child changed a file another shard owns (a read fixture "
        "owns none: it passes)",
        judge_lanes,
    ),
)


def criterion_names() -> tuple[str, ...]:
    """Every criterion's name, in order (what reports and summaries iterate); read at call
    time, so everything follows the registry."""
    return tuple(c.name for c in CRITERIA)
