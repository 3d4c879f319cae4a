"""``score --trajectory``: the rubric's verdict on an ATIF trajectory, per criterion.

The trajectory is read by :mod:`scorers.atif` into the same evidence the on-disk bundles
give and judged by the same rules. One of ours says how the run counted its item
(``as_run``), and when that was an infrastructure error, a ``note`` says so: the run left it
out of its rates, whatever the rules say of the trajectory. A criterion the trajectory cannot support is reported
``unscorable`` with why, never passed or failed on a guess; the item is resolved only when
every criterion passed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.errors import UsageError


def _load(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: not a readable JSON trajectory: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list):
        raise UsageError(f"{path}: steps: not an ATIF trajectory (no steps list)")
    return doc


def score_trajectory(path: Path, fixture: str | None, roots: Sequence[Path]) -> dict[str, Any]:
    """The verdict on the trajectory in ``path`` against ``fixture`` (default: the fixture
    the trajectory names, for one exported by us)."""
    from harness.fixtures import load_fixture
    from harness.fixtures.lookup import find_fixture
    from scorers.atif import trajectory_evidence
    from scorers.score import score_evidence

    doc = _load(path)
    ours = (doc.get("extra") or {}).get("swarm_harness") or {}
    named, kept = ours.get("fixture"), ours.get("fixture_path")
    if fixture is None and not isinstance(named, str):
        raise UsageError(f"{path}: extra.swarm_harness.fixture: none named; give --fixture")
    if fixture is None and isinstance(kept, str) and (Path(kept) / "fixture.json").is_file():
        fixture = kept  # where the item's fixture was when it ran, if it is still there
    where = find_fixture(fixture if fixture is not None else str(named), roots)
    manifest = load_fixture(where).manifest
    read = trajectory_evidence(doc, manifest.artifact, manifest.kind)
    score = score_evidence(read.evidence, manifest)
    criteria: dict[str, Any] = {}
    for check in score.checks:
        why = read.unscorable.get(check.name)
        if why is not None:
            criteria[check.name] = {"verdict": "unscorable", "reason": why}
        else:
            criteria[check.name] = {
                "verdict": "pass" if check.passed else "fail",
                "reason": check.reason,
                "failing": list(check.failing),
            }
    verdicts = [c["verdict"] for c in criteria.values()]
    resolved = None if "unscorable" in verdicts else all(v == "pass" for v in verdicts)
    out: dict[str, Any] = {
        "trajectory": str(path),
        "fixture": where.name,
        "resolved": resolved,
        "criteria": criteria,
        "spawns": len(read.evidence.depth1_spawns()),
        "subagents": len(read.evidence.child_sessions),
        "tokens": score.usage.total.total if score.usage is not None else None,
    }
    status, error = ours.get("status"), ours.get("error")
    if isinstance(status, str):
        out["as_run"] = {"status": status, "error": error if isinstance(error, str) else None}
    if status == "error":
        out["note"] = (
            "the run counted this item as an infrastructure error"
            + (f" ({error})" if isinstance(error, str) and error else "")
            + ", not the agent's doing: its rates left it out; the verdicts here judge "
            "the trajectory alone"
        )
    if read.exported:
        out["as_exported"] = {
            name: criteria.get(name, {}).get("verdict") == ("pass" if passed else "fail")
            for name, passed in read.exported.items()
        }
    return out
