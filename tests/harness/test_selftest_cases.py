"""prime-agent's scripts in a selftest by fixture kind: the edit-only ones only when every
fixture is an edit fixture (refused with the reason otherwise), and what each expects
there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.agents import parse_agent
from harness.errors import UsageError
from harness.selftest import cases_for, edit_fixtures_only, run_selftest
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


def test_prime_agents_edit_only_scripts_and_what_they_expect() -> None:
    prime = parse_agent("prime-agent", "unused")
    read = {c.script: c for c in cases_for(prime)}
    edit = {c.script: c for c in cases_for(prime, edit=True)}
    assert not set(EDIT_ONLY) & set(read) and list(edit) == [*read, *EDIT_ONLY]
    assert (edit["edit-parent"].expected_status, edit["edit-parent"].expected_failing) == (
        "unresolved",
        ("provenance",),
    )
    assert set(edit["edit-wrong-lane"].expected_failing) == {"provenance", "lanes"}
    # helper-names' children make their shards' changes on an edit fixture: files owned by
    # worker-named shards, changed by children of other names, which fails lanes too.
    assert read["helper-names"].expected_failing == ("delegation", "provenance")
    assert edit["helper-names"].on("edit").expected_failing == ("delegation", "provenance", "lanes")
    assert edit["helper-names"].on("read").expected_failing == ("delegation", "provenance")
    assert edit["honest"] == read["honest"]


def test_edit_fixtures_only(tmp_path: Path) -> None:
    edit = str(edit_fixture(tmp_path))
    assert edit_fixtures_only([edit]) and not edit_fixtures_only([str(TINY), edit])


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


def test_each_drive_of_prime_agent_is_judged_by_its_own_expectations() -> None:
    """The resident drive keeps the children past the parent's turn: early-exit-fanin
    resolves there and not one-shot; a script only a deadline ends is never played."""
    one = {c.script: c for c in cases_for(parse_agent("prime-agent"))}
    res = {c.script: c for c in cases_for(parse_agent("prime-agent:resident"))}
    assert set(one) == set(res) and "poll-forever" not in one
    assert (one["early-exit-fanin"].expected_status, res["early-exit-fanin"].expected_status) == (
        "unresolved",
        "resolved",
    )
    assert res["early-exit"].expected_failing == ("coverage", "provenance")
    assert one["honest"] == res["honest"]
