"""Reading reports of earlier schema versions (2 to 11) as the current one (12).

Version 11 (and every earlier one) had no ``lanes`` criterion: its items stay unjudged on
it (rates and comparisons leave them out, never count them as failures) and its summaries
record no rate for it. Every run then was of read fixtures, which lanes passes anyway.

Version 10 (and every earlier one) did not mark a selftest: one is known by the price table
it was priced with (the scripted server's), and its rows' verdict, kept beside the report
then, is not read back.

Version 9 differs from 10 in its agents' standings: their cost and tokens per resolved item
were bare numbers, read as figures without an interval (``method`` ``not-recorded``). Its
summaries keep the Fieller intervals they were written with (``fieller-adjusted-rate``).

Version 8 differs from 9 in its comparison only: it compared every cell (there was no
``--compare-shared-only``) and did not record how many cells the baseline scored.

Version 6 differs from 7 in lacking the agent dimension: every run had one agent, so its
items, summaries and overall rates take the run's agent label, its options list that one
agent in ``agents``, its comparison cells the agent "" (the runs' only agents compared),
and there is no ``agents`` section.

Version 5 differs from 6 in what it lacks: items without ``cost``, summaries without cost
per resolved item, comparisons (version 2) without ``cost``, no ``budget``; read as they
are, with a note that they were not priced.

Version 4 differs from 5 only in its item scores: they carry ``parent_tokens`` and
``child_tokens`` where 5 has ``usage`` and ``efficiency``; an upgraded score has neither
(None: not recorded then) and keeps ``tokens_used``.

The conversion is structural: nothing is re-judged or recomputed. Items move their run
facts and score fields into nested objects; their criteria become ``checks`` (version 3
kept them, version 2 had only pass flags, from which the checks are rebuilt with the
reasons the item listed). A criterion an old rubric did not have (provenance in version 2)
stays unjudged: rates and comparisons leave such items out of that criterion, never count
them as failures. Summaries and comparisons of version 3 keep their shape; criteria keyed
by an old field name (``delegation_evidence``) take the criterion's one name. Version 2's
overall rates and comparison were computed differently and are not carried over: the
report says so in its ``notes``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from harness.model.comparison import (
    COMPARISON_SCHEMA_VERSION,
    DEFAULT_COST_THRESHOLD,
    DEFAULT_THRESHOLD,
)
from harness.model.selftest import SCRIPTED_PRICES
from scorers import SCORE_SCHEMA_VERSION, ItemScore
from scorers.criteria import criterion_names

#: Old report field of a criterion -> its one name (only delegation's ever differed).
OLD_FIELDS = {"delegation_evidence": "delegation"}
#: The pass flags version 2 items carried, by criterion name.
V2_FLAGS = {
    "coverage": "coverage",
    "delegation": "delegation_evidence",
    "dedup": "dedup",
    "receipts": "receipts",
}
#: Run facts, which version 4 nests under ``facts``.
FACT_FIELDS = (
    "wall_time_s",
    "exit_code",
    "timed_out",
    "error",
    "agent_error",
    "killed_processes",
    "leftover_processes",
)
#: Score fields version 2 did not have, and their empty values.
NEW_SCORE_FIELDS: dict[str, Any] = {
    "untraced_shards": [],
    "untraced_shard_details": [],
    "child_session_malformed_lines": 0,
}
_SCORE_FIELDS = [f.name for f in dataclasses.fields(ItemScore)]


def _renamed(mapping: Mapping[str, Any]) -> dict[str, Any]:
    return {OLD_FIELDS.get(k, k): v for k, v in mapping.items()}


def _failing_v2(name: str, item: Mapping[str, Any]) -> list[str]:
    """What failed a criterion, from the evidence fields a version 2 item kept."""
    if name == "coverage":
        wrong = [w.get("file") for w in item.get("wrong_answers") or [] if isinstance(w, dict)]
        return [*(item.get("missing_shards") or []), *wrong]
    if name == "delegation":
        return list(item.get("unverified_shard_workers") or [])
    if name == "dedup":
        return [d.get("child_id") for d in item.get("duplicate_spawn_details") or []]
    return list(item.get("missing_receipts") or [])


def _checks(item: Mapping[str, Any]) -> list[dict[str, Any]]:
    if isinstance(item.get("checks"), list):
        return [
            {
                "name": OLD_FIELDS.get(str(c.get("name")), c.get("name")),
                "passed": c.get("passed"),
                "failing": c.get("failing", []),
                "reason": c.get("reason"),
                "details": {},
                "signatures": [] if c.get("passed") else list(c.get("failing") or ["failed"]),
            }
            for c in item["checks"]
            if isinstance(c, dict)
        ]
    reasons = [str(r) for r in item.get("failures") or []]
    checks = []
    for name, flag in V2_FLAGS.items():
        if not isinstance(item.get(flag), bool):
            continue
        passed = item[flag]
        reason = next((r for r in reasons if r.startswith(f"{name}:")), None)
        failing = [] if passed else _failing_v2(name, item)
        checks.append(
            {
                "name": name,
                "passed": passed,
                "failing": failing,
                "reason": reason,
                "details": {},
                "signatures": [] if passed else (failing or ["failed"]),
            }
        )
    return checks


def upgrade_score(score: Mapping[str, Any]) -> dict[str, Any]:
    """A version 4 item score as version 5: its token split dropped, no usage record."""
    kept = {k: v for k, v in score.items() if k not in ("parent_tokens", "child_tokens")}
    return {**kept, "usage": None, "efficiency": None, "schema_version": SCORE_SCHEMA_VERSION}


def upgrade_v4(data: Mapping[str, Any]) -> dict[str, Any]:
    """A version 4 report as version 5 (see the module docstring)."""
    items = [{**i, "score": upgrade_score(i["score"])} for i in data["items"]]
    notes = [*data.get("notes", []), "read from a schema-4 report: no usage breakdown"]
    return {**data, "items": items, "notes": notes}


def upgrade_item(item: Mapping[str, Any], options: Mapping[str, Any] | None) -> dict[str, Any]:
    """A version 2 or 3 report item in the current shape (``options``: its run's)."""
    flat = {**NEW_SCORE_FIELDS, **item, "agent_error": item.get("score_agent_error")}
    score = {name: flat[name] for name in _SCORE_FIELDS if name in flat}
    score.update(
        checks=_checks(item), usage=None, efficiency=None, schema_version=SCORE_SCHEMA_VERSION
    )
    return {
        "key": item["key"],
        "fixture": item["fixture"],
        "model": item["model"],
        "trial": item["trial"],
        "status": item["status"],
        "item_dir": item["item_dir"],
        "facts": {
            **{name: item.get(name, 0) for name in FACT_FIELDS},
            "timeout_s": (options or {}).get("timeout_s"),
        },
        "score": score,
    }


#: A criterion rate no item recorded (its criterion did not exist yet).
UNRECORDED = {"count": 0, "rate": None, "ci": None}


def _summary(entry: Mapping[str, Any]) -> dict[str, Any]:
    criteria = _renamed(entry.get("criteria") or {})
    return {
        **entry,
        "criteria": {name: criteria.get(name, UNRECORDED) for name in criterion_names()},
    }


def _comparison(cmp: Mapping[str, Any]) -> dict[str, Any]:
    fixtures = [{**f, "criteria": _renamed(f.get("criteria") or {})} for f in cmp["fixtures"]]
    overall = {**cmp["overall"], "criteria": _renamed(cmp["overall"].get("criteria") or {})}
    return {
        **cmp,
        "fixtures": fixtures,
        "overall": overall,
        "baseline_run": None,
        "schema_version": COMPARISON_SCHEMA_VERSION,
    }


def _options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Options as version 4 records them; what older runs did not record takes the value
    those runs had (no agent options, the local executor)."""
    return {
        "fixtures": options.get("fixtures", []),
        "fixture_paths": options.get("fixture_paths", []),
        "agent_kind": options.get("agent_kind") or "",
        "agent_options": options.get("agent_options") or "",
        "agent_bin": options.get("agent_bin"),
        "agent_version": options.get("agent_version"),
        "models": options.get("models", []),
        "agent": options.get("agent") or "",
        "seed": options.get("seed", 0),
        "trials": options.get("trials", 1),
        "concurrency": options.get("concurrency", 1),
        "executor": options.get("executor") or "local",
        "provider_caps": options.get("provider_caps") or {},
        "timeout_s": options.get("timeout_s", 1800.0),
        "keep_workdir": bool(options.get("keep_workdir")),
        "baseline": options.get("baseline"),
        "threshold": options.get("threshold", DEFAULT_THRESHOLD),
        "fail_on": options.get("fail_on") or "unresolved",
        "only_keys": [],
        "origin": None,
    }


#: Fields version 6 added, as a version 5 report has them: not recorded.
NEW_SUMMARY_FIELDS = {
    "cost_per_resolved_usd": None,
    "tokens_per_resolved": None,
    "unpriced": 0,
    "usage_complete": True,
    "stop_reason": None,
    "sequential": None,
}
NEW_OPTION_FIELDS = {
    "cost_threshold": DEFAULT_COST_THRESHOLD,
    "prices_file": None,
    "max_cost_usd": None,
    "max_tokens": None,
    "sequential": None,
}


def upgrade_v5(data: Mapping[str, Any]) -> dict[str, Any]:
    """A version 5 report as version 6: nothing priced (see the module docstring)."""
    comparison = data.get("comparison")
    if comparison is not None:
        comparison = {
            **comparison,
            "cost": None,
            "sequential": None,
            "schema_version": COMPARISON_SCHEMA_VERSION,
        }
    notes = [*data.get("notes", []), "read from a schema-5 report: items were not priced"]
    return {
        **data,
        "summary": [{**NEW_SUMMARY_FIELDS, **s} for s in data.get("summary") or []],
        "options": {**NEW_OPTION_FIELDS, **(data.get("options") or {})},
        "comparison": comparison,
        "budget": None,
        "notes": notes,
    }


#: Options version 8 added, as an earlier run had them: no retries, no breaker, no agent
#: settings.
V8_OPTIONS = {"retries": 0, "retry_backoff_s": 0.0, "max_provider_errors": 0, "agent_env": None}


def upgrade_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Run options of version 10 or earlier (a report's, or a run.json's) as version 11:
    ``agents`` (their one agent, before version 7), the retry settings, and whether the
    run was a selftest."""
    options = {
        **V8_OPTIONS,
        "selftest": options.get("prices_file") == SCRIPTED_PRICES,
        "solo": False,  # version 13
        **options,
    }
    if "agents" in options:
        return options
    kind = options.get("agent_kind") or ""  # "" in reports older than the adapter seam
    extra = options.get("agent_options") or ""
    agent = {
        "agent": options.get("agent") or (f"{kind}:{extra}" if extra else kind),
        "kind": kind,
        "options": extra,
        "binary": options.get("agent_bin"),
        "version": options.get("agent_version"),
        "models": list(options.get("models") or []),
    }
    return {**options, "agents": [agent]}


def upgrade_v6(data: Mapping[str, Any]) -> dict[str, Any]:
    """A version 6 report as version 7: one agent, named everywhere (module docstring)."""
    options = upgrade_options(data.get("options") or {})
    agent = options["agents"][0]["agent"]
    comparison = data.get("comparison")
    if comparison is not None:
        cost = comparison.get("cost")
        if cost is not None:
            cost = {
                **cost,
                "fixtures": _naming(cost.get("fixtures"), ""),
                "overall": {**cost["overall"], "agent": "*"},
            }
        comparison = {
            **comparison,
            **{
                key: _naming(comparison.get(key), "")
                for key in ("fixtures", "missing_in_candidate", "missing_in_baseline")
            },
            "cost": cost,
            "schema_version": COMPARISON_SCHEMA_VERSION,
        }
    return {
        **data,
        **{key: _naming(data.get(key), agent) for key in ("items", "summary", "overall")},
        "options": options,
        "comparison": comparison,
        "agents": None,
    }


def _naming(records: Any, agent: str) -> list[dict[str, Any]]:
    """``records`` (a list of objects, or None), each naming ``agent``."""
    return [{**r, "agent": agent} for r in records or []]


def upgrade_v7(data: Mapping[str, Any]) -> dict[str, Any]:
    """A version 7 report as version 8: no provider health, options without retries (its
    items read as one attempt each, with no faults recorded: ``ItemResult.from_dict``)."""
    return {**data, "options": upgrade_options(data.get("options") or {}), "provider": None}


def upgrade_v8(data: Mapping[str, Any]) -> dict[str, Any]:
    """A version 8 report as version 9: its comparison compared every cell (no
    ``--compare-shared-only`` then) and did not record how many the baseline had."""
    comparison = data.get("comparison")
    if comparison is not None:
        comparison = {
            **comparison,
            "shared_only": False,
            "baseline_cells": None,
            "schema_version": COMPARISON_SCHEMA_VERSION,
        }
    return {**data, "comparison": comparison}


#: The method of a cost per resolved item that version 9 recorded as a bare number.
NOT_RECORDED = "not-recorded"


def _standing_per_resolved(
    value: float | None, n: int, resolved: int, priced: bool
) -> dict[str, Any] | None:
    """A version 9 standing's bare cost per resolved item as a ``per_resolved`` object:
    the same figure, no interval; None where it was None for want of a price."""
    if value is None and (not priced or not n or resolved):
        return None
    return {
        "n": n,
        "resolved": resolved,
        "total": value * resolved if value is not None else 0.0,
        "value": value,
        "ci": None,
        "confidence": 0.95,
        "reason": "no interval: recorded by schema 9" if value is not None else "no resolved item",
        "method": NOT_RECORDED,
    }


def upgrade_v9(data: Mapping[str, Any]) -> dict[str, Any]:
    """A version 9 report as version 10: its standings' costs per resolved item become
    figures without an interval (module docstring)."""
    agents = data.get("agents")
    if agents is None:
        return dict(data)
    standings = [
        {
            **s,
            "cost_per_resolved_usd": _standing_per_resolved(
                s.get("cost_per_resolved_usd"), s["n"], s["resolved"],
                s.get("mean_cost_usd") is not None,
            ),
            "tokens_per_resolved": _standing_per_resolved(
                s.get("tokens_per_resolved"), s["n"], s["resolved"], True
            ),
        }
        for s in agents.get("standings") or []
    ]  # fmt: skip
    return {**data, "agents": {**agents, "standings": standings}}


def upgrade_v10(data: Mapping[str, Any]) -> dict[str, Any]:
    """A version 10 report as version 11: a selftest known by its prices, not judged."""
    return {**data, "options": upgrade_options(data.get("options") or {}), "selftest": None}


def upgrade_v11(data: Mapping[str, Any]) -> dict[str, Any]:
    """A version 11 report as version 12: no rate recorded for ``lanes``."""
    return {**data, "summary": [_summary(s) for s in data.get("summary") or []]}


def upgrade_v12(data: Mapping[str, Any]) -> dict[str, Any]:
    """A version 12 report as version 13: a run without solo twins (``--solo``)."""

    def comparison(found: Any) -> Any:  # comparison schema 5 -> 6: no twins in either run
        return {**found, "solo": [], "schema_version": 6} if isinstance(found, dict) else found

    agents = data.get("agents")
    if isinstance(agents, dict):
        versus = [
            {**v, "comparison": comparison(v.get("comparison"))} if isinstance(v, dict) else v
            for v in agents.get("versus") or []
        ]
        agents = {**agents, "versus": versus}
    return {
        **data,
        "comparison": comparison(data.get("comparison")),
        "agents": agents,
        "options": {**(data.get("options") or {}), "solo": False},
        "summary": [{**s, "swarm_vs_solo": None} for s in data.get("summary") or []],
        "overall": [{**o, "swarm_vs_solo": None} for o in data.get("overall") or []],
    }


def upgrade(data: Mapping[str, Any]) -> dict[str, Any]:
    """A version 2 to 9 report in the current shape (see the module docstring): each
    version's step to the next, in turn (versions 2 and 3 first become version 5)."""
    version = data.get("schema_version")
    if isinstance(version, int) and version in UPGRADES:
        current, start = dict(data), version
    else:
        current, start = _upgrade_v2_v3(data), 5
    for step in range(start, max(UPGRADES) + 1):
        current = UPGRADES[step](current)
    return current


def _upgrade_v2_v3(data: Mapping[str, Any]) -> dict[str, Any]:
    """A version 2 or 3 report in the shape of version 5."""
    version = data.get("schema_version")
    notes: list[str] = [f"read from a schema-{version} report"]
    overall: list[Any] = list(data.get("overall") or [])
    comparison = data.get("comparison")
    if version == 2:
        overall = []
        if comparison:
            notes.append(
                "its comparison was computed by an earlier method and is not shown: "
                "compare the runs again with `compare`"
            )
        comparison = None
    out = {
        key: data[key]
        for key in ("run_id", "interrupted", "created_at", "harness_version")
        if key in data
    }
    out.update(
        items=[upgrade_item(i, data.get("options")) for i in data["items"]],
        summary=[_summary(s) for s in data.get("summary") or []],
        overall=overall,
        options=_options(data.get("options") or {}),
        comparison=None if comparison is None else _comparison(comparison),
        not_started=data.get("not_started", []),
        started_at=data.get("started_at") or "",
        duration_s=data.get("duration_s"),
        notes=notes,
        triage=[],
    )
    out.setdefault("interrupted", False)
    out.setdefault("created_at", "")
    out.setdefault("harness_version", "")
    return out


#: Version -> its step to the next version.
UPGRADES = {
    4: upgrade_v4,
    5: upgrade_v5,
    6: upgrade_v6,
    7: upgrade_v7,
    8: upgrade_v8,
    9: upgrade_v9,
    10: upgrade_v10,
    11: upgrade_v11,
    12: upgrade_v12,
}
