"""``export RUN``: every item of a run as an ATIF trajectory (``trajectory.json``).

For each item the adapter that ran it reads its bundle twice over: the scorer's evidence
(what the verdict was made of) and its builder's turns (what each agent did); the one
writer (:mod:`harness.export.atif`) makes the document. Files land in
``<out>/<item dir>/trajectory.json`` (``<out>`` defaults to ``RUN/trajectories``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError, UsageError
from harness.export.atif import ItemFacts, PriceFn, usage_from, write_trajectory
from harness.model.item import ItemResult
from harness.model.report import RunReport, load_report
from scorers import ItemScore
from scorers.types import FixtureKind, Manifest

if TYPE_CHECKING:
    from harness.agents.base import AgentAdapter
    from harness.pricing import PriceTable

#: Where ``export`` writes when given no ``--out``, inside the run directory.
TRAJECTORIES_DIR = "trajectories"
TRAJECTORY_FILE = "trajectory.json"


@dataclass(frozen=True)
class Exported:
    """What an export wrote, and the items it could not (key -> why)."""

    written: tuple[Path, ...]
    failed: tuple[tuple[str, str], ...]


def trajectory_path(out_dir: Path, item: ItemResult) -> Path:
    return out_dir / item.item_dir / TRAJECTORY_FILE


def facts_of(
    score: ItemScore,
    *,
    run_id: str,
    key: str,
    fixture: str,
    trial: int,
    status: str,
    agent: str,
    agent_version: str | None,
    model: str,
    artifact: str,
    cost_usd: float | None = None,
    error: str | None = None,
    fixture_path: str | None = None,
    kind: FixtureKind = "read",
) -> ItemFacts:
    """An item's metadata for its document, its verdicts and usage from its ``score``."""
    checks = {c.name: (c.passed, c.reason, tuple(c.failing)) for c in score.checks}
    signatures = [f"{c.name}: {sig}" for c in score.checks for sig in c.signatures]
    return ItemFacts(
        run_id=run_id,
        key=key,
        fixture=fixture,
        trial=trial,
        status=status,
        agent=agent,
        agent_version=agent_version,
        model=model,
        checks=checks,
        signatures=signatures,
        usage=score.to_dict().get("usage") or {},
        cost_usd=cost_usd,
        artifact=artifact,
        error=error,
        fixture_path=fixture_path,
        kind=kind,
    )


def item_document(
    adapter: AgentAdapter,
    item_dir: Path,
    meta: Mapping[str, Any],
    manifest: Manifest,
    facts: ItemFacts,
    price: PriceFn | None = None,
) -> dict[str, Any]:
    """The ATIF document of one bundle: its adapter's evidence (with the final tree, as
    scoring reads it) and turns, one writer."""
    from harness.agents.base import with_tree

    evidence = with_tree(adapter.evidence(item_dir, meta, manifest), item_dir)
    swarm = adapter.swarm(item_dir, meta, evidence, manifest)
    return write_trajectory(swarm, evidence, facts, price)


def _price_table(report: RunReport) -> tuple[bool, PriceTable | None]:
    """The run's ``--prices`` file, read once for all its items: (usable, table); not
    usable when the run named one that can no longer be read (per-step costs unknown)."""
    prices = report.options.prices_file
    if not prices:
        return True, None
    from harness.pricing import PriceTable

    try:
        return True, PriceTable.from_yaml(Path(prices))
    except (OSError, HarnessError):
        return False, None


def _pricer(item: ItemResult, prices: tuple[bool, PriceTable | None]) -> PriceFn | None:
    """Prices a response's tokens the way the item was priced (None: it was not)."""
    usable, table = prices
    if item.cost is None or item.cost.usd is None or not usable:
        return None
    from harness.pricing import find_price

    def price(model: str | None, usage: Any) -> float | None:
        found = find_price(model or item.model, table)
        if found is None:
            found = find_price(item.model, table)
        return float(found.rates.usd(usage)) if found is not None else None

    return price


def export_run(run_dir: Path, out_dir: Path | None = None, keys: Sequence[str] = ()) -> Exported:
    """Write every item's trajectory (or only ``keys``'), return what was written."""
    from harness.agents import adapter_for_meta
    from harness.item.scoring import manifest_of

    report = load_report(run_dir / "report.json")
    items = [i for i in report.items if not keys or i.key in keys]
    unknown = sorted(set(keys) - {i.key for i in report.items})
    if unknown:
        raise UsageError(
            f"{run_dir / 'report.json'}: items: no item {', '.join(unknown)} in this run"
        )
    out = out_dir if out_dir is not None else run_dir / TRAJECTORIES_DIR
    written: list[Path] = []
    failed: list[tuple[str, str]] = []
    versions = {a.agent: a.version for a in report.options.agents}
    prices = _price_table(report)
    for item in items:
        item_dir = run_dir / "items" / item.item_dir
        try:
            meta = json.loads((item_dir / "item.json").read_text(encoding="utf-8"))
            manifest = manifest_of(item_dir, meta)
            facts = facts_of(
                item.score,
                run_id=report.run_id,
                key=item.key,
                fixture=item.fixture,
                trial=item.trial,
                status=item.status,
                agent=item.agent,
                agent_version=versions.get(item.agent),
                model=item.model,
                artifact=manifest.artifact,
                cost_usd=item.cost.usd if item.cost is not None else None,
                error=item.facts.error,
                fixture_path=meta.get("fixture_path"),
                kind=manifest.kind,
            )
            document = item_document(
                adapter_for_meta(meta), item_dir, meta, manifest, facts, _pricer(item, prices)
            )
        except (OSError, ValueError, HarnessError) as exc:
            failed.append((item.key, str(exc)))
            continue
        path = trajectory_path(out, item)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", "utf-8")
        written.append(path)
    return Exported(tuple(written), tuple(failed))


__all__ = [
    "TRAJECTORY_FILE",
    "Exported",
    "export_run",
    "facts_of",
    "item_document",
    "trajectory_path",
    "usage_from",
]
