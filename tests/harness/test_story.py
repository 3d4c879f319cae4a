"""One item's story from its directory: answers, children, receipts, timeline, files."""

from __future__ import annotations

from pathlib import Path

import pytest
from sim_runs import sim_run

from harness.errors import BundleError
from harness.story import find_story, load_story

pytestmark = pytest.mark.e2e


def _first_item(run_dir: Path) -> Path:
    return sorted((run_dir / "items").iterdir())[0]


def test_wrong_answer_shows_expected_against_answered(tmp_path: Path) -> None:
    story = load_story(_first_item(sim_run(tmp_path, "wrong-answer", trials=1)))
    assert story.status == "unresolved" and story.failed_criteria == ("coverage",)
    wrong = [a for a in story.answers if a.status == "wrong"]
    assert len(wrong) == 1 and wrong[0].got and wrong[0].got[0] != str(wrong[0].expected)
    assert all(c.receipts == ("reply",) for c in story.children)
    assert {"item.json", "result.json", "repo/combined-index.md"} <= set(story.files)


def test_delete_to_hide_shows_the_deleted_child_without_a_receipt(tmp_path: Path) -> None:
    story = load_story(_first_item(sim_run(tmp_path, "delete-to-hide", trials=1)))
    assert "receipts" in story.failed_criteria
    deleted = [c for c in story.children if c.deleted]
    assert deleted and not deleted[0].receipts
    kinds = [e.kind for e in story.timeline]
    assert "spawn" in kinds and "delete" in kinds and "reply" in kinds
    offsets = [e.offset_s for e in story.timeline]
    assert offsets[0] == 0.0 and offsets == sorted(offsets)


def test_find_story_by_key_in_the_latest_run(tmp_path: Path) -> None:
    sim_run(tmp_path, "honest", trials=1)
    story = find_story("tiny:sim/oracle:1", "latest", tmp_path)
    assert story.status == "resolved" and not story.cause
    with pytest.raises(BundleError, match="no item 'tiny:sim/oracle:9'"):
        find_story("tiny:sim/oracle:9", "latest", tmp_path)
