"""One item's story from its directory: answers, children, receipts, timeline, files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sim_runs import sim_run

from harness.errors import BundleError
from harness.item.scoring import rescore_item
from harness.item.story import STORY_FILE, STORY_VERSION, load_story, write_story
from harness.report.show import story_text
from harness.runs.catalog import find_story

DATA = Path(__file__).resolve().parents[1] / "data"

pytestmark = pytest.mark.e2e


def _first_item(run_dir: Path) -> Path:
    return sorted((run_dir / "items").iterdir())[0]


def test_wrong_answer_shows_expected_against_answered(tmp_path: Path) -> None:
    story = load_story(_first_item(sim_run(tmp_path, "wrong-answer", trials=1)))
    assert story.result.status == "unresolved" and story.result.failed_criteria == ("coverage",)
    wrong = [a for a in story.answers if a.status == "wrong"]
    assert len(wrong) == 1 and wrong[0].got and wrong[0].got[0] != str(wrong[0].expected)
    assert all(c.receipts == ("reply",) for c in story.children)
    assert {"item.json", "result.json", "repo/combined-index.md"} <= set(story.files)


def test_delete_to_hide_shows_the_deleted_child_without_a_receipt(tmp_path: Path) -> None:
    story = load_story(_first_item(sim_run(tmp_path, "delete-to-hide", trials=1)))
    assert "receipts" in story.result.failed_criteria
    deleted = [c for c in story.children if c.deleted]
    assert deleted and not deleted[0].receipts
    kinds = [e.kind for e in story.timeline]
    assert "spawn" in kinds and "delete" in kinds and "reply" in kinds
    offsets = [e.offset_s for e in story.timeline]
    assert offsets[0] == 0.0 and offsets == sorted(offsets)


def test_find_story_by_key_in_the_latest_run(tmp_path: Path) -> None:
    sim_run(tmp_path, "honest", trials=1)
    story = find_story("tiny:sim/honest:1", "latest", tmp_path)
    assert story.result.status == "resolved" and not story.problem
    with pytest.raises(BundleError, match="no item 'tiny:sim/honest:9'"):
        find_story("tiny:sim/honest:9", "latest", tmp_path)


def _claude_code_item(tmp_path: Path, capture: str) -> Path:
    """A captured real Claude Code run laid out as an item directory, as a run leaves it."""
    run = DATA / "claude-code-runs" / capture
    item = tmp_path / capture
    shutil.copytree(run / "config", item / "claude-config")
    shutil.copytree(run / "repo", item / "repo")
    shutil.copy(run / "stdout.jsonl", item / "stdout.jsonl")
    manifest = json.loads((DATA / "fixtures" / "tiny" / "fixture.json").read_text())
    meta = {"key": f"tiny:honest:{capture}", "agent_kind": "claude-code", "manifest": manifest}
    (item / "item.json").write_text(json.dumps(meta))
    result = rescore_item(item)
    (item / "result.json").write_text(json.dumps(result.to_dict()))
    return item


def test_a_claude_code_item_tells_its_children_and_timeline(tmp_path: Path) -> None:
    """The adapter supplies the evidence: a Claude Code item gets what a prime-agent item
    gets, children by worker name with their receipts and a timeline with times."""
    story = load_story(_claude_code_item(tmp_path, "honest"))
    assert story.result.status == "resolved" and not story.problem
    workers = ["worker-shard-a", "worker-shard-b", "worker-shard-c"]
    assert sorted(c.name for c in story.children) == workers
    assert all(c.receipts == ("reply",) and not c.deleted for c in story.children)
    kinds = [e.kind for e in story.timeline]
    assert kinds.count("spawn") == 3 and kinds.count("reply") == 3
    assert all(e.offset_s is not None for e in story.timeline)
    replies = [e for e in story.timeline if e.kind == "reply"]
    assert all(e.name in workers and "ANSWER::" in e.detail for e in replies)
    text = story_text(story)
    assert "children (depth 1): 3" in text and "reply    worker-shard-a" in text


def test_a_claude_code_duplicate_spawn_shows_both_children(tmp_path: Path) -> None:
    story = load_story(_claude_code_item(tmp_path, "double-spawn"))
    assert story.result.failed_criteria == ("dedup",)
    names = [c.name for c in story.children]
    assert len(names) == 4 and len(set(names)) == 3


@pytest.mark.parametrize("behaviour", ["honest", "wrong-answer", "delete-to-hide", "no-spawn"])
def test_the_kept_story_is_the_bundle_read_again(tmp_path: Path, behaviour: str) -> None:
    """story.json, written when the item ended, tells what a fresh read of the bundle does;
    a missing, older or broken one is read from the bundle again."""
    item_dir = _first_item(sim_run(tmp_path, behaviour, trials=1))
    kept_file = item_dir / STORY_FILE
    assert kept_file.is_file()
    kept = load_story(item_dir)
    kept_file.unlink()
    fresh = load_story(item_dir)
    assert kept == fresh
    assert behaviour == "no-spawn" or (fresh.children and fresh.timeline)
    data = json.loads(json.dumps({"story_version": STORY_VERSION - 1, "got": {}}))
    for broken in (json.dumps(data), "{not json", json.dumps({"story_version": STORY_VERSION})):
        kept_file.write_text(broken)
        assert load_story(item_dir) == fresh
    # And what is kept is what is shown: a kept answer reaches the story.
    write_story(item_dir, json.loads((item_dir / "item.json").read_text()))
    data = json.loads(kept_file.read_text())
    shard = next(iter(data["got"]))
    data["got"][shard] = ["kept-answer"]
    kept_file.write_text(json.dumps(data))
    assert [a.got for a in load_story(item_dir).answers if a.file == shard] == [("kept-answer",)]
