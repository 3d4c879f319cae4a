"""The sim's adapter hands the sim its oracle: on an edit fixture, every shard's change."""

from __future__ import annotations

import json
from pathlib import Path

from harness.agents.base import ItemPaths, ItemSpec
from harness.agents.sim import SimAdapter
from scorers.types import Manifest, Replacement, Shard
from sim_agent.config import ORACLE_VAR, load_oracle, parse_behaviours
from sim_agent.config import Replacement as SimReplacement


def _prepare(tmp_path: Path, manifest: Manifest, model: str = "sim/clobber") -> dict[str, object]:
    paths = ItemPaths(tmp_path, tmp_path / "repo", tmp_path / "home", tmp_path / "tmp")
    for d in (paths.repo, paths.home, paths.tmp):
        d.mkdir()
    item = ItemSpec(key="edit-x:sim/clobber:1", model=model, task_text="t", manifest=manifest)
    launch = SimAdapter().prepare(paths, item, {}, "token")
    oracle_path = launch.env[ORACLE_VAR]
    data: dict[str, object] = json.loads(Path(oracle_path).read_text(encoding="utf-8"))
    data["_path"] = oracle_path
    return data


def test_an_edit_fixtures_oracle_carries_kind_shared_and_each_shards_change(
    tmp_path: Path,
) -> None:
    shards = tuple(
        Shard(
            file=f"{n}.md",
            worker=f"worker-{n}",
            question="q",
            expected=i,
            owns=(f"pkg/{n}.py",),
            checks=(f"checks/test_{n}.py",),
            solution=(
                Replacement(f"pkg/{n}.py", "X = 0", f"X = {i}"),
                Replacement("CHANGELOG.md", f"<!-- {n} -->", f"- {n}"),
            ),
        )
        for i, n in enumerate(("alpha", "beta"))
    )
    manifest = Manifest("edit-x", "combined-index.md", shards, "edit", ("CHANGELOG.md",))
    data = _prepare(tmp_path, manifest)
    assert data["kind"] == "edit" and data["shared"] == ["CHANGELOG.md"]
    oracle = load_oracle(str(data["_path"]), str(tmp_path / "repo"))
    assert oracle.edits and oracle.behaviours.plan == "clobber"
    assert [s.owns for s in oracle.shards] == [("pkg/alpha.py",), ("pkg/beta.py",)]
    assert oracle.shards[1].checks == ("checks/test_beta.py",)
    assert oracle.shards[1].solution == (
        SimReplacement("pkg/beta.py", "X = 0", "X = 1"),
        SimReplacement("CHANGELOG.md", "<!-- beta -->", "- beta"),
    )


def test_a_read_fixtures_oracle_is_as_before(tmp_path: Path) -> None:
    manifest = Manifest("r", "combined-index.md", (Shard("a.txt", "worker-a", "q", 3),))
    data = _prepare(tmp_path, manifest, model="sim/honest")
    assert data["kind"] == "read" and data["shared"] == []
    assert data["shards"] == [{"file": "a.txt", "worker": "worker-a", "expected": 3}]


def test_the_solo_twin_plays_every_model_with_the_solo_plan(tmp_path: Path) -> None:
    twin = SimAdapter("slow=2").solo_twin()
    assert twin.label() == "sim:slow=2+solo"
    assert parse_behaviours(twin.behaviours_for("sim/no-spawn,recovers")) == parse_behaviours(
        "solo,slow=2,recovers"
    )
    assert SimAdapter("slow=2").behaviours_for("sim/no-spawn") == "slow=2,no-spawn"
    manifest = Manifest("r", "combined-index.md", (Shard("a.txt", "worker-a", "q", 3),))
    paths = ItemPaths(tmp_path, tmp_path / "repo", tmp_path / "home", tmp_path / "tmp")
    for d in (paths.repo, paths.home, paths.tmp):
        d.mkdir()
    item = ItemSpec(
        key="r:sim+solo:sim/honest:1", model="sim/honest", task_text="t", manifest=manifest
    )
    oracle = load_oracle(twin.prepare(paths, item, {}, "token").env[ORACLE_VAR], str(paths.repo))
    assert oracle.behaviours.plan == "solo" and oracle.behaviours.alone
