"""From a bundle on disk to an item's result: the adapter's score and the run facts.

Used by a live item and by ``score ITEM_DIR`` alike, from what the bundle's ``item.json``
records, so re-scoring a saved (or moved) item decides exactly as the run did.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.agents import LEGACY_AGENT_KIND, adapter_class, adapter_for_meta
from harness.errors import BundleError, HarnessError
from harness.files import open_regular
from harness.model.item import MODEL_NEVER_REACHED, ItemCost, ItemResult, RunFacts
from harness.pricing import PriceTable, item_cost
from scorers import Assessment, ItemScore
from scorers.types import Manifest

if TYPE_CHECKING:  # `score` needs no plan (its imports are half of a re-score's start)
    from harness.plan import WorkItem

#: Version of item.json's layout. 2: ``agent_kind``/``agent_options`` name the adapter that
#: wrote the bundle (absent: prime-agent), ``agent_stop`` replaces ``daemon_shutdown``.
ITEM_META_SCHEMA_VERSION = 2
ITEM_META_FILE = "item.json"
RESULT_FILE = "result.json"

#: How much of stderr's tail is quoted as the agent's error when it exits non-zero.
STDERR_QUOTE_BYTES = 2000


def read_item_meta(item_dir: Path) -> dict[str, Any]:
    """An item directory's ``item.json``; :class:`BundleError` naming it when unusable."""
    meta_file = item_dir / ITEM_META_FILE
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise BundleError(f"{meta_file}: missing: not an item directory") from exc
    except (OSError, ValueError) as exc:
        raise BundleError(f"{meta_file}: unreadable ({exc})") from exc
    if not isinstance(meta, dict):
        raise BundleError(f"{meta_file}: not a JSON object")
    return meta


def read_result(item_dir: Path) -> ItemResult:
    """An item directory's ``result.json``; :class:`BundleError` when unusable."""
    result_file = item_dir / RESULT_FILE
    try:
        return ItemResult.from_dict(json.loads(result_file.read_text(encoding="utf-8")))
    except FileNotFoundError as exc:
        raise BundleError(f"{result_file}: missing: not a finished item") from exc
    except (OSError, ValueError) as exc:
        raise BundleError(f"{result_file}: unreadable ({exc})") from exc


def manifest_of(item_dir: Path, meta: dict[str, Any]) -> Manifest:
    """The manifest an item was run against (saved in its item.json)."""
    try:
        return Manifest.from_dict(meta["manifest"])
    except (KeyError, TypeError, ValueError) as exc:
        raise BundleError(f"{item_dir / ITEM_META_FILE}: manifest: missing or invalid") from exc


def price(score: ItemScore, model: str, prices: PriceTable | None = None) -> ItemCost | None:
    """What the item's usage cost (``prices`` first, then the price library); None when its
    score holds no usage."""
    if score.usage is None or score.usage.source == "none":
        return None
    return item_cost(score.usage, model, prices)


def make_result(
    work: WorkItem,
    item_dir: Path,
    score: ItemScore,
    facts: RunFacts,
    prices: PriceTable | None = None,
) -> ItemResult:
    """The item's result, priced when its score holds usage."""
    cost = price(score, work.model, prices)
    return ItemResult(
        key=work.key,
        fixture=work.fixture.manifest.name,
        model=work.model,
        trial=work.trial,
        item_dir=item_dir.name,
        score=score,
        facts=facts,
        cost=cost,
        agent=work.agent.label(),
    )


def manifest_dict(manifest: Manifest) -> dict[str, Any]:
    return manifest.to_dict()


def assess_bundle(
    item_dir: Path, meta: dict[str, Any], manifest: Manifest | None = None
) -> Assessment:
    """Score an item bundle exactly as ``score ITEM_DIR`` does, with the adapter that
    wrote it (named in item.json), and read its provider faults."""
    if manifest is None:
        manifest = manifest_of(item_dir, meta)
    try:
        adapter = adapter_for_meta(meta)
    except HarnessError as exc:
        raise BundleError(f"{item_dir / 'item.json'}: agent_kind: {exc}") from exc
    return adapter.assess(item_dir, meta, manifest)


def score_bundle(
    item_dir: Path, meta: dict[str, Any], manifest: Manifest | None = None
) -> ItemScore:
    """The score of an item bundle (:func:`assess_bundle` without the faults)."""
    return assess_bundle(item_dir, meta, manifest).score


def _stderr_tail(item_dir: Path) -> str | None:
    path = item_dir / "stderr.txt"
    try:
        with open_regular(path) as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - STDERR_QUOTE_BYTES))
            text = fh.read().decode("utf-8", errors="replace").strip()
    except OSError:
        return None
    return text or None


def _credentials_hint(meta: dict[str, Any]) -> str:
    """What gives the item's agent its credentials (its adapter's hint)."""
    try:
        return adapter_class(str(meta.get("agent_kind") or LEGACY_AGENT_KIND)).credentials_hint
    except HarnessError:
        return "the agent's credentials"


def facts_from_meta(meta: dict[str, Any], assessed: Assessment, item_dir: Path) -> RunFacts:
    """Decide whether the launch ever got going (CONTRACT §5: errors are not failures), and
    whether the provider ended the run (``scorers.provider``: an error too, never the
    agent's failure).

    Uses only what item.json records, so re-scoring a bundle decides the same way.
    """
    score, faults = assessed
    killed = len(meta.get("killed_processes") or [])
    leftover = int(meta.get("leftover_processes") or 0)
    wall = float(meta.get("wall_time_s") or 0.0)
    exit_code = meta.get("exit_code")
    timed_out = bool(meta.get("timed_out"))
    limit = meta.get("timeout_s")
    timeout_s = float(limit) if isinstance(limit, int | float) else None
    if meta.get("start_error"):
        return RunFacts(
            0.0,
            None,
            False,
            f"agent could not start: {meta['start_error']}",
            None,
            killed,
            leftover,
            timeout_s,
            faults,
        )
    agent_error = score.agent_error
    error: str | None = None
    capped = (meta.get("collection") or {}).get("capped") or []
    if meta.get("cancelled"):
        error = "interrupted: the run was stopped before this item finished"
    elif capped:
        error = "collection hit a cap, the evidence is incomplete: " + "; ".join(capped)
    elif not timed_out and faults.gave_up is not None:
        error = faults.gave_up
    elif not timed_out and not score.model_reached:
        if score.failed_assistant_messages > 0:
            error = f"{MODEL_NEVER_REACHED}: every assistant message ended in error"
            refused = [f for f in faults.evidence if f.kind == "auth"]
            if refused:  # say so on the console line, and what to check
                status = f" ({refused[0].status})" if refused[0].status is not None else ""
                error = (
                    f"{MODEL_NEVER_REACHED}: authentication failed{status}; check "
                    f"{_credentials_hint(meta)}"
                )
        elif exit_code not in (0, None):
            error = f"agent exited {exit_code} before reaching the model"
        else:
            # Exit 0 with no model reply at all (a wrong binary such as /bin/true, or a CLI
            # that never got to its model): the environment failed, not the agent.
            error = f"agent exited {exit_code} without any model reply"
    if exit_code not in (0, None) and not timed_out and agent_error is None:
        agent_error = _stderr_tail(item_dir)
    if meta.get("output_capped"):
        agent_error = agent_error or "agent output exceeded the harness's cap; it was stopped"
    return RunFacts(
        wall, exit_code, timed_out, error, agent_error, killed, leftover, timeout_s, faults
    )


def rescore_item(
    item_dir: Path, fixture: Path | None = None, prices: PriceTable | None = None
) -> ItemResult:
    """Score (and price) a saved item directory again, wherever it was moved to
    (``fixture``: score against this fixture directory instead of the manifest the item
    saved; ``prices``: the run's ``--prices``, tried before the price library)."""
    meta = read_item_meta(item_dir)
    manifest = None
    if fixture is not None:
        from harness.fixtures import load_fixture  # only an explicit --fixture needs it

        manifest = load_fixture(fixture).manifest
    assessed = assess_bundle(item_dir, meta, manifest)
    score = assessed.score
    model = str(meta.get("model", ""))
    return ItemResult(
        key=str(meta.get("key", item_dir.name)),
        fixture=str(meta.get("fixture", "")),
        model=model,
        trial=int(meta.get("trial") or 1),
        item_dir=item_dir.name,
        score=score,
        facts=facts_from_meta(meta, assessed, item_dir),
        cost=price(score, model, prices),
        agent=str(meta.get("agent") or meta.get("agent_kind") or LEGACY_AGENT_KIND),
    )
