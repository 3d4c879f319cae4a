"""Typed report records for tests: items with chosen verdicts, and run options."""

from __future__ import annotations

import dataclasses
from typing import Any

from harness.model.item import ItemResult, RunFacts
from harness.model.report import RunAgent, RunOptions
from scorers import Check, ItemScore
from scorers.criteria import criterion_names


def make_score(*, tokens: int = 100, turns: int = 3, **flags: bool) -> ItemScore:
    """A score whose checks pass or fail as ``flags`` say (all pass by default); a failing
    criterion's reason is ``"<name>: failed"``."""
    checks = tuple(
        Check(
            name,
            flags.get(name, True),
            () if flags.get(name, True) else ("x",),
            None if flags.get(name, True) else f"{name}: failed",
        )
        for name in criterion_names()
    )
    return ItemScore(
        missing_shards=(),
        wrong_answers=(),
        live_depth1_edges=3,
        distinct_worker_names=3,
        child_session_dirs=3,
        verified_shard_workers=(),
        unverified_shard_workers=(),
        duplicate_spawns=0,
        duplicate_spawn_details=(),
        total_spawns=3,
        spawn_budget=6,
        missing_receipts=(),
        untraced_shards=(),
        untraced_shard_details=(),
        ledger_malformed_lines=0,
        ledger_unknown_ops=0,
        ledger_torn_tail=False,
        transcript_malformed_lines=0,
        child_session_malformed_lines=0,
        stdout_malformed_lines=0,
        tokens_used=tokens,
        turns=turns,
        assistant_messages=turns,
        failed_assistant_messages=0,
        model_reached=True,
        agent_error=None,
        parent_session_id="root",
        checks=checks,
    )


def make_item(
    fixture: str,
    trial: int,
    resolved: bool,
    *,
    model: str = "p/m",
    status: str | None = None,
    tokens: int = 100,
    timed_out: bool = False,
    agent: str = "sim:honest",
    **crit: bool,
) -> ItemResult:
    """An item: resolved (every criterion passes) or not (coverage fails unless ``crit``
    says which fail); ``status="error"`` makes it an infrastructure error."""
    flags = {c: crit.get(c, resolved or c != "coverage") for c in criterion_names()}
    score = make_score(tokens=tokens + trial, turns=3 + trial % 2, **flags)
    facts = RunFacts(
        wall_time_s=1.0 + trial / 10,
        exit_code=0,
        timed_out=timed_out,
        error="boom" if status == "error" else None,
        agent_error=None,
        timeout_s=60.0,
    )
    return ItemResult(
        f"{fixture}:{model}:{trial}",
        fixture,
        model,
        trial,
        f"{fixture}__{trial}",
        score,
        facts,
        agent=agent,
    )


def make_options(**changes: Any) -> RunOptions:
    options = RunOptions(
        fixtures=("fx",),
        fixture_paths=(),
        agent_kind="sim",
        agent_options="honest",
        agent_bin=None,
        agent_version=None,
        models=("p/m",),
        agent="sim:honest",
        seed=0,
        trials=1,
        concurrency=1,
        executor="local",
        provider_caps={},
        timeout_s=60.0,
        keep_workdir=False,
        baseline=None,
        threshold=0.05,
        fail_on="unresolved",
        agents=(RunAgent("sim:honest", "sim", "honest", None, None, ("p/m",)),),
    )
    return dataclasses.replace(options, **changes)
