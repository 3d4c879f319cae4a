"""An edit item's final tree in the bundle (edits.json): each declared file's state and diff,
what changed undeclared, the hidden checks' outcomes; and an item's lifecycle writing it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from editkit import agent_repo, make_edit_fixture

from harness.agents import parse_agent
from harness.fixtures import Fixture
from harness.item import tree as tree_mod
from harness.item.lifecycle import ItemOptions, run_item
from harness.item.tree import MAX_DIFF_CHARS, collect_tree
from harness.plan import WorkItem
from scorers.tree import parse_tree


@pytest.fixture
def fixture(tmp_path: Path) -> Fixture:
    return make_edit_fixture(tmp_path / "fixtures", shards=4)


def read_edits(item_dir: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((item_dir / "edits.json").read_text(encoding="utf-8"))


def test_edits_json_holds_each_declared_file_the_undeclared_and_the_checks(
    fixture: Fixture, tmp_path: Path
) -> None:
    repo = agent_repo(fixture, tmp_path / "repo", solved=("s00.md", "s01.md", "s03.md"))
    (repo / "pkg" / "s01.py").unlink()  # s01 made its change, then deleted its file
    outside = tmp_path / "outside.py"
    outside.write_text("RATE = 40\n")
    (repo / "pkg" / "s03.py").unlink()
    (repo / "pkg" / "s03.py").symlink_to(outside)
    (repo / "conftest.py").write_text("# planted\n")  # a cheat: undeclared
    (repo / "checks" / "test_s02.py").write_text("# edited\n")  # shipped, changed: undeclared
    (repo / "answers.md").write_text("- s00.md: 37\n")  # the artifact: not undeclared
    (repo / "pkg" / "__pycache__").mkdir()
    (repo / "pkg" / "__pycache__" / "s00.cpython-311.pyc").write_bytes(b"\0")
    (repo / ".git").mkdir()
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    item_dir = tmp_path / "item"
    item_dir.mkdir()

    tree = collect_tree(fixture, repo, item_dir, tmp_path / "work")

    doc = read_edits(item_dir)
    assert doc["schema_version"] == 1
    states = {f["path"]: f["state"] for f in doc["files"]}
    assert states == {
        "pkg/s00.py": "changed",
        "pkg/s01.py": "deleted",
        "pkg/s02.py": "unchanged",
        "pkg/s03.py": "not a regular file",
        "CHANGELOG.md": "changed",
    }
    s00 = doc["files"][0]
    assert s00["diff"].startswith("--- a/pkg/s00.py\n+++ b/pkg/s00.py\n")
    assert "-RATE = 0\n+RATE = 37\n" in s00["diff"] and s00["truncated"] is False
    assert "+++ /dev/null" in doc["files"][1]["diff"]
    assert doc["files"][2]["diff"] == "" and doc["files"][3]["diff"] == ""
    assert doc["undeclared"] == ["checks/test_s02.py", "conftest.py"]
    outcomes = {s["shard"]: s["outcome"] for s in doc["checks"]["shards"]}
    assert outcomes == {
        "s00.md": "passed",
        "s01.md": "error",
        "s02.md": "failed",
        "s03.md": "error",
    }
    assert doc["checks"]["error"] is None and doc["checks"]["seconds"] > 0
    # What the scorer reads back is what the collector wrote.
    assert parse_tree(lambda: (item_dir / "edits.json").open("rb")) == tree


def test_a_big_change_is_cut_and_says_so(fixture: Fixture, tmp_path: Path) -> None:
    repo = agent_repo(fixture, tmp_path / "repo")
    (repo / "pkg" / "s00.py").write_text("".join(f"X{i} = {i}\n" for i in range(5000)))
    huge = repo / "pkg" / "s01.py"
    huge.write_bytes(huge.read_bytes() + b"#" * (tree_mod.MAX_DIFF_INPUT_BYTES + 10))
    item_dir = tmp_path / "item"
    item_dir.mkdir()
    tree = collect_tree(fixture, repo, item_dir, tmp_path / "work")
    big, huge_change = tree.files[0], tree.files[1]
    assert big.state == "changed" and big.truncated and len(big.diff) == MAX_DIFF_CHARS
    assert huge_change.state == "changed" and huge_change.truncated and huge_change.diff == ""


def test_a_failure_there_is_recorded_never_raised(
    fixture: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(tree_mod, "run_checks", broken)
    item_dir = tmp_path / "item"
    item_dir.mkdir()
    collect_tree(fixture, agent_repo(fixture, tmp_path / "repo"), item_dir, tmp_path / "work")
    doc = read_edits(item_dir)
    assert doc["checks"] == {
        "error": "the hidden checks could not run: boom",
        "seconds": 0.0,
        "shards": [],
    }
    assert [f["state"] for f in doc["files"]][:1] == ["changed"]


def test_an_edit_item_gets_edits_json_its_own_phase_and_its_evidence(
    fixture: Fixture, tmp_path: Path
) -> None:
    """Through an item's whole life (the honest sim: every change made, every check passes)."""
    agent = parse_agent("sim")
    work = WorkItem(fixture=fixture, agent=agent, model="sim/honest", trial=1)
    item_dir = tmp_path / "item"
    run_item(work, ItemOptions(timeout_s=60), item_dir)
    doc = read_edits(item_dir)
    assert {s["outcome"] for s in doc["checks"]["shards"]} == {"passed"}
    assert {f["state"] for f in doc["files"]} == {"changed"}
    meta = json.loads((item_dir / "item.json").read_text())
    assert list(meta["phases_s"]).index("checks") == list(meta["phases_s"]).index("collect") + 1
    evidence = agent.evidence(item_dir, meta, fixture.manifest)
    assert evidence.tree is None  # the agent's parser does not read it ...
    from harness.agents.base import with_tree

    tree = with_tree(evidence, item_dir).tree  # ... assess attaches it for every agent
    assert tree is not None and len(tree.checks) == 4 and tree.malformed == 0


def test_a_read_item_gets_no_edits_json(tmp_path: Path) -> None:
    from harness.fixtures import load_fixture

    tiny = load_fixture(Path(__file__).resolve().parents[1] / "data" / "fixtures" / "tiny")
    work = WorkItem(fixture=tiny, agent=parse_agent("sim"), model="sim/honest", trial=1)
    item_dir = tmp_path / "item"
    run_item(work, ItemOptions(timeout_s=60), item_dir)
    assert not (item_dir / "edits.json").exists()
    assert "checks" not in json.loads((item_dir / "item.json").read_text())["phases_s"]
