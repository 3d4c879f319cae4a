"""Re-scoring a saved item directory, wherever it was moved to."""

from __future__ import annotations

import json
from pathlib import Path

from harness.errors import BundleError
from harness.fixtures import load_fixture, resolve_fixture
from harness.item import facts_from_meta, score_bundle
from harness.results import ItemResult


def rescore_item(item_dir: Path, fixture: str | None = None) -> ItemResult:
    meta_file = item_dir / "item.json"
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise BundleError(f"{meta_file}: missing: not an item directory") from exc
    except (OSError, ValueError) as exc:
        raise BundleError(f"{meta_file}: unreadable ({exc})") from exc
    if not isinstance(meta, dict):
        raise BundleError(f"{meta_file}: not a JSON object")
    manifest = load_fixture(resolve_fixture(fixture)).manifest if fixture else None
    score = score_bundle(item_dir, meta, manifest)
    facts = facts_from_meta(meta, score, item_dir)
    return ItemResult(
        key=str(meta.get("key", item_dir.name)),
        fixture=str(meta.get("fixture", "")),
        model=str(meta.get("model", "")),
        trial=int(meta.get("trial") or 1),
        item_dir=item_dir.name,
        score=score,
        facts=facts,
    )
