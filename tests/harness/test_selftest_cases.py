"""Which scripts a selftest plays, and the verdict each must reach, by fixture kind: the
edit-only scripts only when every fixture is an edit fixture, and a script whose verdict
differs on an edit fixture judged by that one there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.agents import parse_agent
from harness.errors import UsageError
from harness.selftest import EDIT_ONLY as EDIT
from harness.selftest import READ_ONLY, cases_for, fixture_kinds, run_selftest, shared_cases
from scripted_model import Oracle, ScriptedModelServer

TINY = Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny"
EDIT_ONLY = ("edit-parent", "edit-wrong-lane")


def edit_fixture(root: Path) -> Path:
    """A one-shard edit fixture in the documented format (a hidden check that fails as
    shipped and passes with the solution)."""
    path = root / "edit-one"
    (path / "shards").mkdir(parents=True)
    (path / "checks").mkdir()
    (path / "pkg").mkdir()
    (path / "pkg" / "alpha.py").write_text("RATE = 0\n")
    (path / "shards" / "alpha.md").write_text("# Set the rate to 37\n\nIn pkg/alpha.py.\n")
    (path / "checks" / "test_alpha.py").write_text(
        "import unittest\nimport pkg.alpha\n\n\nclass T(unittest.TestCase):\n"
        "    def test_rate(self):\n        self.assertEqual(pkg.alpha.RATE, 37)\n"
    )
    shard = {
        "file": "alpha.md",
        "worker": "worker-alpha",
        "question": "Carry out the ticket; what is pkg.alpha.RATE after it?",
        "expected": 37,
        "owns": ["pkg/alpha.py"],
        "checks": ["checks/test_alpha.py"],
        "solution": [{"path": "pkg/alpha.py", "old": "RATE = 0", "new": "RATE = 37"}],
    }
    manifest: dict[str, object] = {"name": "edit-one", "artifact": "combined-index.md"}
    manifest["kind"] = "edit"
    manifest |= {"shared": [], "shards": [shard]}
    (path / "fixture.json").write_text(json.dumps(manifest))
    (path / "task.txt").write_text(
        f"Carry out the ticket.\n\n- shards/alpha.md: {shard['question']} (worker: worker-alpha)\n"
    )
    return path


def test_the_edit_only_scripts_are_offered_on_edit_fixtures_only() -> None:
    prime = parse_agent("prime-agent", "unused")
    read = [c.script for c in cases_for(prime, "read")]
    edit = [c.script for c in cases_for(prime, "edit")]
    assert not set(EDIT_ONLY) & set(read)
    assert edit == read + list(EDIT_ONLY)
    cases = {c.script: c for c in cases_for(prime, "edit")}
    assert (cases["edit-parent"].expected_status, cases["edit-parent"].expected_failing) == (
        "unresolved",
        ("provenance",),
    )
    assert cases["edit-wrong-lane"].expected_failing == ("provenance", "lanes")


def test_a_script_is_judged_by_what_it_expects_on_the_rows_fixture_kind() -> None:
    """helper-names' children make their shards' changes on an edit fixture: files owned by
    worker-named shards, changed by children of other names, which fails lanes too."""
    prime = parse_agent("prime-agent", "unused")
    common, cases = shared_cases([prime], READ_ONLY + EDIT)
    assert not set(EDIT_ONLY) & set(common)  # a mixed selftest plays every script on both
    label = prime.label()
    assert cases[label, "helper-names", "read"].expected_failing == ("delegation", "provenance")
    assert cases[label, "helper-names", "edit"].expected_failing == (
        "delegation",
        "provenance",
        "lanes",
    )
    assert cases[label, "honest", "edit"] == cases[label, "honest", "read"]
    common, cases = shared_cases([prime], EDIT)
    assert set(EDIT_ONLY) <= set(common) and (label, "edit-parent", "edit") in cases


def test_fixture_kinds_by_manifest_name(tmp_path: Path) -> None:
    assert fixture_kinds([str(TINY), str(edit_fixture(tmp_path))]) == {
        "tiny": "read",
        "edit-one": "edit",
    }


@pytest.mark.parametrize("fixtures", [[str(TINY)], [str(TINY), "EDIT"]], ids=["read", "mixed"])
def test_an_edit_only_script_on_read_fixtures_is_refused_saying_why(
    tmp_path: Path, fixtures: list[str]
) -> None:
    fixtures = [str(edit_fixture(tmp_path)) if f == "EDIT" else f for f in fixtures]
    with ScriptedModelServer(Oracle()) as server, pytest.raises(UsageError) as refused:
        run_selftest(
            server,
            [parse_agent("prime-agent", "unused")],
            fixtures,
            runs_dir=tmp_path / "runs",
            scripts=("edit-parent",),
        )
    assert "edit-parent: plays only on edit fixtures" in str(refused.value)
    assert not (tmp_path / "runs").exists()  # refused before anything ran
