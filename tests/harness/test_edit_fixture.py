"""harness.fixtures.edit_rules: an edit fixture's own rules, one param per problem, each
naming the file and the field; the shipped edit fixtures and the held-out one are valid."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.errors import FixtureError
from harness.fixtures import FIXTURES_ROOT, list_fixtures, load_fixture, validate_fixture

EDIT_FIXTURES = ("edit-smoke", "edit-registry", "edit-mixed", "edit-wide")
HELD_OUT = Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny-edit"

Change = Callable[[dict[str, Any], Path], object]


@pytest.fixture
def smoke(tmp_path: Path) -> Path:
    """A private copy of edit-smoke (shards: 0 shipping, 1 tax, 2 discount; shared
    CHANGELOG.md) to break."""
    return Path(shutil.copytree(FIXTURES_ROOT / "edit-smoke", tmp_path / "smoke"))


def _set(path: str, value: Any) -> Change:
    """A change setting ``shards[i].key`` (or a top-level key) of the manifest."""

    def change(data: dict[str, Any], _: Path) -> None:
        target: Any = data
        *parents, last = path.replace("]", "").replace("[", ".").split(".")
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        if value is DELETE:
            del target[int(last) if last.isdigit() else last]
        else:
            target[int(last) if last.isdigit() else last] = value

    return change


DELETE = object()


def _symlink(data: dict[str, Any], fixture: Path) -> None:
    (fixture / "shop" / "link.py").symlink_to(fixture / "shop" / "shipping.py")
    data["shards"][0]["owns"].append("shop/link.py")


def _check_txt(data: dict[str, Any], fixture: Path) -> None:
    (fixture / "checks" / "test_x.txt").write_text("not python\n")
    data["shards"][0]["checks"] = ["checks/test_x.txt"]


# (id, change, the file named (relative to the fixture), the field, the message, a regex)
CASES: list[tuple[str, Change, str, str, str]] = [
    ("owns-missing", _set("shards.1.owns", DELETE), "fixture.json", "shards[1].owns", "required"),
    ("owns-empty", _set("shards.1.owns", []), "fixture.json", "shards[1].owns", "at least 1"),
    ("checks-missing", _set("shards.2.checks", DELETE), "fixture.json", "shards[2].checks", "required"),
    ("checks-empty", _set("shards.2.checks", []), "fixture.json", "shards[2].checks", "at least 1"),
    ("solution-missing", _set("shards.0.solution", DELETE), "fixture.json", "shards[0].solution", "required"),
    ("solution-empty", _set("shards.0.solution", []), "fixture.json", "shards[0].solution", "at least 1"),
    ("owns-absolute", _set("shards.0.owns", ["shop/shipping.py", "/etc/passwd"]), "fixture.json", "shards[0].owns[1]", "absolute"),
    ("owns-escapes", _set("shards.0.owns", ["shop/shipping.py", "../x.py"]), "fixture.json", "shards[0].owns[1]", r"escapes the repo \('\.\.'\)"),
    ("owns-dotfile", _set("shards.0.owns", ["shop/shipping.py", "shop/.env"]), "fixture.json", "shards[0].owns[1]", "dotfile"),
    ("owns-backslash", _set("shards.0.owns", ["shop/shipping.py", "shop\\tax.py"]), "fixture.json", "shards[0].owns[1]", "backslash"),
    ("owns-unsafe-name", _set("shards.0.owns", ["shop/shipping.py", "shop/-x.py"]), "fixture.json", "shards[0].owns[1]", "not a safe repo path"),
    ("owns-a-ticket", _set("shards.0.owns", ["shop/shipping.py", "shards/tax.md"]), "fixture.json", "shards[0].owns[1]", "in shards/"),
    ("owns-a-check", _set("shards.0.owns", ["shop/shipping.py", "checks/test_tax.py"]), "fixture.json", "shards[0].owns[1]", "in checks/"),
    ("owns-the-prompt", _set("shards.0.owns", ["shop/shipping.py", "task.txt"]), "fixture.json", "shards[0].owns[1]", "answer key or a prompt"),
    ("owns-an-agent-prompt", _set("shards.0.owns", ["shop/shipping.py", "task.claude.txt"]), "fixture.json", "shards[0].owns[1]", "answer key or a prompt"),
    ("owns-the-artifact", _set("shards.0.owns", ["shop/shipping.py", "combined-index.md"]), "fixture.json", "shards[0].owns[1]", "answer artifact"),
    ("owns-a-missing-file", _set("shards.0.owns", ["shop/shipping.py", "shop/nope.py"]), "shop/nope.py", "shards[0].owns[1]", "is missing"),
    ("owns-a-folder", _set("shards.0.owns", ["shop/shipping.py", "shop"]), "shop", "shards[0].owns[1]", "not a regular file"),
    ("owns-a-symlink", _symlink, "shop/link.py", "shards[0].owns[1]", "symlink"),
    ("owns-listed-twice", _set("shards.0.owns", ["shop/shipping.py", "shop/shipping.py"]), "fixture.json", "shards[0].owns[1]", "listed twice"),
    ("owned-by-two-shards", _set("shards.1.owns", ["shop/tax.py", "shop/shipping.py"]), "fixture.json", "shards[1].owns[1]", r"owned by another shard too \(shards\[0\]\.owns\[0\]\)"),
    ("owns-a-shared-file", _set("shards.0.owns", ["shop/shipping.py", "CHANGELOG.md"]), "fixture.json", "shards[0].owns[1]", "is shared"),
    ("shared-missing", _set("shared", ["CHANGELOG.md", "NEWS.md"]), "NEWS.md", "shared[1]", "is missing"),
    ("shared-escapes", _set("shared", ["CHANGELOG.md", "../NEWS.md"]), "fixture.json", "shared[1]", "escapes"),
    ("shared-not-a-list", _set("shared", "CHANGELOG.md"), "fixture.json", "shared", "must be an array"),
    ("check-outside-checks", _set("shards.0.checks", ["shop/shipping.py"]), "fixture.json", "shards[0].checks[0]", "inside checks/"),
    ("check-escapes", _set("shards.0.checks", ["checks/../shop/shipping.py"]), "fixture.json", "shards[0].checks[0]", "inside checks/"),
    ("check-not-python", _check_txt, "fixture.json", "shards[0].checks[0]", "not a Python file"),
    ("check-missing", _set("shards.0.checks", ["checks/test_nope.py"]), "checks/test_nope.py", "shards[0].checks[0]", "is missing"),
    ("solution-in-another-shards-file", _set("shards.0.solution.0.path", "shop/tax.py"), "fixture.json", "shards[0].solution[0].path", "not one of this shard's owned files nor a shared file"),
    ("solution-old-absent", _set("shards.0.solution.0.old", "FREE_FROM = 99"), "shop/shipping.py", "shards[0].solution[0].old", "does not occur"),
    ("solution-old-twice", _set("shards.0.solution.0.old", "FREE_FROM"), "shop/shipping.py", "shards[0].solution[0].old", "occurs 2 times"),
    ("solution-old-empty", _set("shards.0.solution.0.old", ""), "fixture.json", "shards[0].solution[0].old", "must not be empty"),
    ("solution-new-missing", _set("shards.0.solution.0.new", DELETE), "fixture.json", "shards[0].solution[0].new", "required"),
    ("shared-old-alike", _set("shards.1.solution.1.old", "### Changed\n"), "fixture.json", "shards[1].solution[1].old", r"same text as shards\[0\]\.solution\[1\]\.old in the shared CHANGELOG\.md"),
    ("kind-unknown", _set("kind", "Edit"), "fixture.json", "kind", "is not one of"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("change", "file", "field", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_edit_rule_names_its_file_and_field(
    smoke: Path, change: Change, file: str, field: str, message: str
) -> None:
    data = json.loads((smoke / "fixture.json").read_text())
    change(data, smoke)
    (smoke / "fixture.json").write_text(json.dumps(data, indent=2))
    problems = validate_fixture(smoke)
    named = [p for p in problems if p.file == smoke / file and p.field == field]
    assert named, problems
    assert any(re.search(message, p.message) for p in named), named
    with pytest.raises(FixtureError):
        load_fixture(smoke)


def test_one_problem_names_only_its_own_field(smoke: Path) -> None:
    """A broken owned path is one problem, not one per rule that would trip over it."""
    data = json.loads((smoke / "fixture.json").read_text())
    data["shards"][1]["owns"].append("shop/nope.py")
    (smoke / "fixture.json").write_text(json.dumps(data))
    assert [(p.file, p.field) for p in validate_fixture(smoke)] == [
        (smoke / "shop/nope.py", "shards[1].owns[1]")
    ]


def test_a_read_fixture_carrying_edit_keys_is_refused(smoke: Path) -> None:
    """A forgotten "kind": the keys are refused, not ignored (its checks/ would reach the
    agent as a read fixture's data)."""
    data = json.loads((smoke / "fixture.json").read_text())
    del data["kind"]
    (smoke / "fixture.json").write_text(json.dumps(data))
    fields = {p.field for p in validate_fixture(smoke) if p.file == smoke / "fixture.json"}
    assert {"shared", "shards[0].owns", "shards[1].checks", "shards[2].solution"} <= fields
    assert all("only for an edit fixture" in p.message for p in validate_fixture(smoke))


def test_underscored_names_are_repo_paths() -> None:
    """``__init__.py`` (an export list, a typical shared file) is a safe path; the held-out
    fixture shares one."""
    assert json.loads((HELD_OUT / "fixture.json").read_text())["shared"] == ["calc/__init__.py"]
    assert validate_fixture(HELD_OUT) == []


@pytest.mark.parametrize("name", EDIT_FIXTURES)
def test_the_shipped_edit_fixtures_are_valid(name: str) -> None:
    assert validate_fixture(FIXTURES_ROOT / name) == []
    manifest = load_fixture(FIXTURES_ROOT / name).manifest
    assert manifest.kind == "edit"
    assert all(s.owns and s.checks and s.solution for s in manifest.shards)
    assert all(isinstance(s.expected, int) for s in manifest.shards)


def test_the_edit_fixtures_cover_the_issue() -> None:
    """One with a shared file every shard writes, one of mixed kinds, one of >= 40 shards."""
    summaries = {s.name: s for s in list_fixtures() if s.name in EDIT_FIXTURES}
    assert all(s.valid for s in summaries.values()) and set(summaries) == set(EDIT_FIXTURES)
    registry = load_fixture(FIXTURES_ROOT / "edit-registry").manifest
    assert registry.shared and all(
        any(r.path in registry.shared for r in s.solution) for s in registry.shards
    )
    assert {"python", "toml", "yaml", "shell"} <= set(summaries["edit-mixed"].formats)
    assert summaries["edit-wide"].shard_count >= 40
    assert summaries["edit-smoke"].shard_count == 3
