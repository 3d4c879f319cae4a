"""The real prime-agent runs of child edits (``tests/data/real-runs/child-edits``) judged as
edit fixtures: their own records and final files, the hidden checks run on those files the
way an item's are, and the rubric's verdict.

The run where three children edited one file at once and lost edits was scored resolved
before edit fixtures existed (its README: "the harness does not look at edits"); judged on
its edits it is not, and the lost change is named.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from captures import capture_artifacts

from harness.item.checks import run_checks
from scorers import score_evidence
from scorers.edit_records import FileChange, TreeEvidence
from scorers.prime_agent import collect_evidence
from scorers.types import Manifest, Replacement, Shard

ITEM = "/srv/evals/item"
ANSWERS = {"01": 457699, "02": 29, "03": 20}
#: edit-same-file's children each raised their own line 200 times (0 -> 200).
RAISED = 200

CHECK = """\
import unittest

import {module} as target


class Shard(unittest.TestCase):
    def test_value(self):
        self.assertEqual(target.{name}, {value})
"""


def edit_fixture(tmp: Path, shipped: Path, shared: bool) -> tuple[Path, Manifest]:
    """The capture's fixture as an edit fixture: its shipped files, one hidden check per
    shard (its module's value, or its line of the shared file), and the manifest."""
    root = tmp / shipped.name
    shutil.copytree(shipped, root)
    (root / "checks").mkdir()
    shards = []
    for n, answer in ANSWERS.items():
        stem = f"orders_{n}"
        owns: tuple[str, ...]
        if shared:
            module, name, value, owns = "pkg.shared", f"V_{stem}", RAISED, ()
            solution = (Replacement("pkg/shared.py", f"V_{stem} = 0", f"V_{stem} = {RAISED}"),)
        else:
            path = f"pkg/mod_{stem}.py"
            module, name, value, owns = f"pkg.mod_{stem}", "VALUE", answer, (path,)
            solution = (Replacement(path, "VALUE = 0", f"VALUE = {answer}"),)
        check = f"checks/test_{stem}.py"
        (root / check).write_text(CHECK.format(module=module, name=name, value=value))
        shards.append(
            Shard(f"orders-{n}.jsonl", f"worker-orders-{n}", "q", answer, owns,
                  (check,), solution)
        )  # fmt: skip
    manifest = Manifest(
        shipped.name,
        "combined-index.md",
        tuple(shards),
        kind="edit",
        shared=("pkg/shared.py",) if shared else (),
    )
    (root / "fixture.json").write_text(json.dumps(manifest.to_dict()))
    return root, manifest


@pytest.mark.parametrize(
    ("case", "shared", "failing", "reasons"),
    [
        pytest.param("edit-honest", False, [], [], id="honest"),
        pytest.param("edit-bash", False, [], [], id="sed-in-bash-cells"),
        pytest.param(
            "edit-parent",
            False,
            ["delegation", "provenance"],
            ["pkg/mod_orders_01.py written by the parent"],
            id="parent-does-it",
        ),
        pytest.param(
            "edit-same-file",
            True,
            ["coverage", "provenance"],
            ["orders-01.jsonl: clobbered by worker-orders-03", "orders-02.jsonl: checks failed"],
            id="three-children-one-file",
        ),
    ],
)
def test_a_real_run_judged_on_its_edits(
    real_runs: Path,
    tmp_path: Path,
    case: str,
    shared: bool,
    failing: list[str],
    reasons: list[str],
) -> None:
    run = real_runs / "child-edits" / case
    fixtures = real_runs / "child-edits" / "fixtures"
    fixture, manifest = edit_fixture(
        tmp_path, fixtures / ("edit-orders-shared" if shared else "edit-orders"), shared
    )
    checks = run_checks(fixture, manifest, run / "repo-after", tmp_path / "checks", 60.0)
    assert checks.error is None
    tree = TreeEvidence(
        files=tuple(FileChange(path, "changed") for path in manifest.editable),
        checks=checks.shards,
    )
    artifacts = capture_artifacts(
        run, run / "agent-home" / "rlm-ledger", root=ITEM, stdout="stdout-first-line.jsonl"
    )
    evidence = dataclasses.replace(collect_evidence(artifacts), tree=tree)
    score = score_evidence(evidence, manifest)
    assert [c.name for c in score.checks if not c.passed] == failing
    said = " ".join(c.reason or "" for c in score.checks)
    for reason in reasons:
        assert reason in said, said
