"""``export`` and ``score --trajectory`` on an edit fixture: the trajectory carries the final
tree and who wrote which file, so re-scoring it from the file alone gives the run's verdict
(reasons included) for an honest swarm, a parent that does the work and a child out of its
lane; a forged tree or write is judged as forged; a trajectory without them (an older export,
another tool's) says its edits cannot be judged, and why."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from atif import Trajectory

from harness.export.rescore import score_trajectory
from scorers.atif.edits import NO_TREE, NO_WRITES
from scorers.tree import EDITS_NAME, parse_tree, tree_from_dict

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "fixtures"
FIXTURE = "edit-smoke"
PLANS = ("honest", "parent-does-it", "wrong-lane")

pytestmark = pytest.mark.slow


def _harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One sim run of each plan on edit-smoke, exported (the run directory)."""
    runs = tmp_path_factory.mktemp("export") / "runs"
    models = [arg for plan in PLANS for arg in ("--model", f"sim/{plan}")]
    done = _harness(
        "run", "--fixture", FIXTURE, "--agent", "sim", *models,
        "--runs-dir", str(runs), "--concurrency", "2", "--max-provider-errors", "0",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # honest resolves, the other two do not
    (run,) = [p for p in runs.iterdir() if p.is_dir()]
    done = _harness("export", str(run))
    assert done.returncode == 0, done.stderr
    return run


def _item(run: Path, plan: str) -> tuple[Path, dict[str, Any]]:
    """The plan's trajectory file and its result.json."""
    name = f"{FIXTURE}__sim_{plan}__1"
    result = json.loads((run / "items" / name / "result.json").read_text())
    return run / "trajectories" / name / "trajectory.json", result


def _doc(run: Path, plan: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(_item(run, plan)[0].read_text())
    return doc


def _score(doc: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    return score_trajectory(path, FIXTURE, [FIXTURES])


@pytest.mark.parametrize("plan", PLANS)
def test_a_re_scored_trajectory_gives_the_runs_verdict(exported: Path, plan: str) -> None:
    path, result = _item(exported, plan)
    doc = json.loads(path.read_text())
    Trajectory.model_validate(doc)
    ours = doc["extra"]["swarm_harness"]
    edits = parse_tree(lambda: (exported / "items" / result["item_dir"] / EDITS_NAME).open("rb"))
    assert tree_from_dict(ours["tree"]) == edits and edits.checks
    assert ours["writes"]  # every plan here writes files
    verdict = score_trajectory(path, None, [FIXTURES])
    assert verdict["resolved"] is (result["status"] == "resolved")
    run = {
        c["name"]: ("pass" if c["passed"] else "fail", c["reason"], c["failing"])
        for c in result["score"]["checks"]
    }
    again = {
        n: (v["verdict"], v.get("reason"), v.get("failing")) for n, v in verdict["criteria"].items()
    }
    assert again == run
    assert all(verdict["as_exported"].values())


def test_the_verdicts_differ_by_plan(exported: Path) -> None:
    """The read-back is not trivially the same verdict each time: each plan fails what its
    cheat breaks, as the run said."""
    fails = {}
    for plan in PLANS:
        verdict = score_trajectory(_item(exported, plan)[0], None, [FIXTURES])
        fails[plan] = {
            n: v["reason"] for n, v in verdict["criteria"].items() if v["verdict"] != "pass"
        }
    assert fails["honest"] == {}
    assert set(fails["parent-does-it"]) == {"provenance"}
    assert "shop/tax.py written by the parent" in fails["parent-does-it"]["provenance"]
    assert set(fails["wrong-lane"]) == {"provenance", "lanes"}
    assert "worker-shipping changed shop/tax.py (worker-tax's)" in fails["wrong-lane"]["lanes"]


def test_score_trajectory_on_the_command_line(exported: Path) -> None:
    done = _harness("score", "--trajectory", str(_item(exported, "honest")[0]))
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert verdict["resolved"] is True and verdict["as_run"]["status"] == "resolved"


def test_a_forged_tree_or_write_is_judged_as_forged(exported: Path, tmp_path: Path) -> None:
    doc = _doc(exported, "honest")
    failed = copy.deepcopy(doc)
    (tax,) = [
        c
        for c in failed["extra"]["swarm_harness"]["tree"]["checks"]["shards"]
        if c["shard"] == "tax.md"
    ]
    tax.update(outcome="failed", failures=1, tail="AssertionError: 0 != 8")
    criteria = _score(failed, tmp_path)["criteria"]
    assert criteria["coverage"]["verdict"] == "fail"
    # Its child wrote the shared changelog and others wrote it after: the carried writes
    # name who (the rule's reading of a failed shard whose shared part others rewrote).
    reason = criteria["coverage"]["reason"]
    assert reason.startswith("coverage: tax.md: clobbered by worker-"), reason
    assert "worker-tax" not in reason
    parent = copy.deepcopy(doc)
    for write in parent["extra"]["swarm_harness"]["writes"]:
        if write["path"] == "shop/tax.py":
            write["child_id"] = None
    criteria = _score(parent, tmp_path)["criteria"]
    assert criteria["provenance"]["verdict"] == "fail"
    assert "shop/tax.py written by the parent" in criteria["provenance"]["reason"]
    assert criteria["coverage"]["verdict"] == criteria["lanes"]["verdict"] == "pass"


def test_a_run_without_a_final_tree_fails_as_it_did(exported: Path, tmp_path: Path) -> None:
    """``tree: null`` is the export of a run whose bundle had no edits.json: judged as the run
    judged it (not landed), not as a trajectory that cannot say."""
    doc = _doc(exported, "honest")
    doc["extra"]["swarm_harness"]["tree"] = None
    criteria = _score(doc, tmp_path)["criteria"]
    assert criteria["coverage"]["verdict"] == "fail"
    assert "shipping.md: no record of the final tree" in criteria["coverage"]["reason"]


def test_a_trajectory_without_the_tree_or_writes_says_its_edits_cannot_be_judged(
    exported: Path, tmp_path: Path
) -> None:
    doc = _doc(exported, "wrong-lane")
    older = copy.deepcopy(doc)  # an export from before trees and writes were carried
    del older["extra"]["swarm_harness"]["tree"], older["extra"]["swarm_harness"]["writes"]
    verdict = _score(older, tmp_path)
    criteria = verdict["criteria"]
    assert verdict["resolved"] is None
    assert criteria["coverage"] == {"verdict": "unscorable", "reason": NO_TREE}
    assert criteria["provenance"] == {"verdict": "unscorable", "reason": f"{NO_TREE}; {NO_WRITES}"}
    assert criteria["lanes"] == {"verdict": "unscorable", "reason": NO_WRITES}
    assert {criteria[n]["verdict"] for n in ("delegation", "dedup", "receipts")} == {"pass"}
    foreign = copy.deepcopy(doc)  # another tool's: none of the harness's fields at all
    del foreign["extra"]
    Trajectory.model_validate(foreign)
    criteria = _score(foreign, tmp_path)["criteria"]
    for name in ("coverage", "provenance"):
        assert criteria[name]["verdict"] == "unscorable" and NO_TREE in criteria[name]["reason"]
    assert criteria["lanes"] == {"verdict": "unscorable", "reason": NO_WRITES}
