"""An edit item's story and ``show``: per shard its checks with their output's end, each
owned file's diff and writers, the verdicts' words; the shared files, the lanes
violations and the undeclared changes; kept in story.json and read back the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from edit_items import SHARED, TREE, diff, edit_item, evidence

from harness.item.story import STORY_FILE, STORY_VERSION, load_story, write_story
from harness.item.story_edits import DIFF_LINES, TAIL_LINES
from harness.model.story import EditStory, FileEdit, Writer, writers_text
from harness.report.show import story_text
from scorers.records import FileChange, FileWrite, TreeEvidence
from scorers.tree import EDITS_NAME, tree_to_dict
from scorers.types import Manifest


def _edits(item_dir: Path) -> EditStory:
    edits = load_story(item_dir).edits
    assert edits is not None
    return edits


def test_each_shard_tells_its_checks_diff_writers_and_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    edits = _edits(edit_item(tmp_path, monkeypatch))
    alpha, beta, gamma = edits.shards
    assert alpha.checks is not None and alpha.checks.outcome == "passed"
    assert alpha.files == (
        FileEdit(
            "pkg/alpha.py",
            "changed",
            diff("pkg/alpha.py", "X = 0", "X = 1"),
            False,
            (Writer("worker-alpha", ("edit",)),),
        ),
    )
    # no artifact was written: every shard's answer is untraced, alpha's change is not
    assert alpha.why == ("untraced: no answer in the artifact to trace",)
    assert writers_text(beta.files[0]) == "the parent (shell)"
    assert beta.why[1:] == ("untraced: pkg/beta.py written by the parent",)
    assert writers_text(gamma.files[0]) == "worker-alpha (edit ×2)"
    assert gamma.checks is not None and gamma.checks.outcome == "failed"
    assert gamma.why[0] == "not landed: clobbered by worker-alpha"
    assert edits.lanes == ("worker-alpha changed pkg/gamma.py (worker-gamma's)",)
    assert edits.undeclared == ("conftest.py",)
    assert [f.path for f in edits.shared] == [SHARED]
    assert writers_text(edits.shared[0]) == "worker-alpha (edit), worker-gamma (shell)"


def test_the_story_keeps_the_edits_and_reads_them_back_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    item_dir = edit_item(tmp_path, monkeypatch)
    told = load_story(item_dir)
    write_story(item_dir, json.loads((item_dir / "item.json").read_text()))
    kept = json.loads((item_dir / STORY_FILE).read_text())
    assert kept["story_version"] == STORY_VERSION == 2
    assert kept["edits"]["shards"][0]["file"] == "alpha.md"
    assert all(s["why"] == [] for s in kept["edits"]["shards"])  # joined when loaded
    monkeypatch.setattr("harness.item.story.adapter_for_meta", None)  # must not be asked
    assert load_story(item_dir).edits == told.edits


def test_a_story_kept_by_the_previous_version_is_told_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    item_dir = edit_item(tmp_path, monkeypatch)
    old = {"story_version": 1, "got": {}, "children": [], "timeline": [], "problem": ""}
    (item_dir / STORY_FILE).write_text(json.dumps(old))
    assert load_story(item_dir).edits is not None


def test_the_final_tree_comes_from_the_bundles_edits_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent's parser gives the writes; the tree is the collector's, read from the
    bundle as the scorer reads it."""
    item_dir = edit_item(tmp_path, monkeypatch, evidence(tree=None))
    (item_dir / EDITS_NAME).write_text(json.dumps(tree_to_dict(TREE, 0.1)))
    edits = _edits(item_dir)
    assert edits.checks_error is None and edits.undeclared == ("conftest.py",)
    assert [s.checks.outcome for s in edits.shards if s.checks] == ["passed", "passed", "failed"]
    assert edits.shards[0].files[0].diff == diff("pkg/alpha.py", "X = 0", "X = 1")


def test_a_long_diff_and_tail_are_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    long = "".join(f"+line {n}\n" for n in range(DIFF_LINES * 3))
    tree = TreeEvidence(
        files=(FileChange("pkg/alpha.py", "changed", long),),
        checks=TREE.checks,
    )
    edits = _edits(edit_item(tmp_path, monkeypatch, evidence(tree=tree)))
    alpha = edits.shards[0].files[0]
    assert alpha.truncated and alpha.diff == long[: len(alpha.diff)]
    assert len(alpha.diff.splitlines()) == DIFF_LINES
    tail = edits.shards[2].checks.tail  # type: ignore[union-attr]
    assert len(tail.splitlines()) == TAIL_LINES and tail.endswith("AssertionError: 3 != 1")
    assert not edits.shards[1].files[0].truncated  # no entry: nothing to cut


def test_the_collectors_cut_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cut = FileChange("pkg/alpha.py", "changed", "--- a/x\n", truncated=True)
    tree = TreeEvidence(files=(cut,), checks=TREE.checks)
    edits = _edits(edit_item(tmp_path, monkeypatch, evidence(tree=tree)))
    assert edits.shards[0].files[0].truncated


def test_without_a_final_tree_the_story_says_so_and_still_names_writers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    edits = _edits(edit_item(tmp_path, monkeypatch, evidence(tree=None)))
    assert edits.checks_error == "no record of the final tree (edits.json)"
    assert all(s.checks is None for s in edits.shards)
    beta = edits.shards[1].files[0]
    assert beta.state is None and writers_text(beta) == "the parent (shell)"
    text = story_text(load_story(edit_item(tmp_path / "2", monkeypatch, evidence(tree=None))))
    assert "checks could not run: no record of the final tree" in text
    assert "pkg/beta.py: not recorded, written by the parent (shell)" in text


@pytest.mark.parametrize(
    ("state", "writes", "expected"),
    [
        pytest.param("changed", (), "no record", id="changed-no-record"),
        pytest.param("unchanged", (), "nobody", id="unchanged"),
        pytest.param(
            "deleted",
            (FileWrite("c-zz", "pkg/alpha.py", "delete"),),
            "child c-zz (delete)",
            id="child-no-edge",
        ),
    ],
)
def test_who_wrote_a_file(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    state: str,
    writes: tuple[FileWrite, ...],
    expected: str,
) -> None:
    tree = TreeEvidence(files=(FileChange("pkg/alpha.py", state, ""),), checks=TREE.checks)  # type: ignore[arg-type]
    edits = _edits(edit_item(tmp_path, monkeypatch, evidence(writes, tree)))
    assert writers_text(edits.shards[0].files[0]) == expected


def test_a_read_fixture_has_no_edits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    item_dir = edit_item(tmp_path, monkeypatch)
    meta = json.loads((item_dir / "item.json").read_text())
    read = Manifest.from_dict(
        {k: v for k, v in meta["manifest"].items() if k not in ("kind", "shared")}
        | {
            "shards": [
                {k: v for k, v in s.items() if k in ("file", "worker", "question", "expected")}
                for s in meta["manifest"]["shards"]
            ]
        }
    )
    read_dir = edit_item(tmp_path / "read", monkeypatch, manifest=read)
    story = load_story(read_dir)
    assert story.edits is None and "edits:" not in story_text(story)


def test_show_prints_each_shard_then_shared_lanes_and_undeclared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = story_text(load_story(edit_item(tmp_path, monkeypatch)))
    edits = text[text.index("edits:") : text.index("children (depth 1)")]
    assert edits.splitlines()[0] == "edits: 2 of 3 shards' checks passed"
    assert "  alpha.md (worker-alpha): checks passed (2 tests)" in edits
    assert "    pkg/alpha.py: changed, written by worker-alpha (edit)" in edits
    assert "      -X = 0\n      +X = 1" in edits
    assert "    why: untraced: pkg/beta.py written by the parent" in edits
    assert "  gamma.md (worker-gamma): checks failed (1 test, 1 failure)" in edits
    assert "      | AssertionError: 3 != 1" in edits
    assert "Ran 2 tests" not in edits  # a passing shard's output is not shown
    assert (
        f"  shared {SHARED}: changed, written by worker-alpha (edit), worker-gamma (shell)" in edits
    )
    assert "  lanes: worker-alpha changed pkg/gamma.py (worker-gamma's)" in edits
    assert "  undeclared changes: conftest.py" in edits


def test_show_writes_out_control_characters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile = FileChange("pkg/alpha.py", "changed", "+\x1b[2Jgone\n")
    tree = TreeEvidence(files=(hostile,), checks=TREE.checks)
    text = story_text(load_story(edit_item(tmp_path, monkeypatch, evidence(tree=tree))))
    assert "\x1b" not in text and "+\\x1b[2Jgone" in text
