"""Every environment twin the docs list works, and every option has one in --help."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from harness.cli.docs import ENV_PAGE
from harness.cli.main import cli
from harness.cli.options import TwinOption, iter_twins
from harness.cli.run_cmd import TrialsType

ROW = re.compile(r"^\| `(SWARM_HARNESS_[A-Z0-9_]+)` \| `([a-z ]+?) (--[a-z-]+)` \|$", re.M)


def readme_twins() -> list[tuple[str, str, str]]:
    return ROW.findall(ENV_PAGE.read_text(encoding="utf-8"))


def _command(words: str) -> click.Command:
    cmd: click.Command = cli
    for word in words.split():
        assert isinstance(cmd, click.Group)
        cmd = cmd.commands[word]
    return cmd


def _sample(param: click.Option, tmp_path: Path) -> tuple[str, object]:
    """A value for the variable and what the parameter must then hold."""
    kind = param.type
    if param.is_flag:
        return "1", True
    if isinstance(kind, click.Choice):
        choice = str(kind.choices[-1])
        return choice, choice
    if isinstance(kind, TrialsType):
        return "auto", "auto"
    if isinstance(kind, click.types.IntParamType):
        return "7", 7
    if isinstance(kind, click.types.FloatParamType):
        return "0.25", 0.25
    if isinstance(kind, click.Path):
        if not kind.dir_okay:  # a file option: a file path that need not exist yet
            return str(tmp_path / "out.txt"), tmp_path / "out.txt"
        return str(tmp_path), tmp_path
    return "sim/x", "sim/x"


def test_the_readme_lists_every_twin() -> None:
    assert sorted(readme_twins()) == sorted(iter_twins(cli))
    assert ("SWARM_HARNESS_RUN_MODEL", "run", "--model") in readme_twins()
    assert ("SWARM_HARNESS_RUN_COMPARE_BASELINE", "run", "--compare-baseline") in readme_twins()


@pytest.mark.parametrize(("var", "words", "flag"), readme_twins(), ids=lambda v: str(v))
def test_each_readme_twin_sets_its_option(
    var: str, words: str, flag: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cmd = _command(words)
    (param,) = [p for p in cmd.params if isinstance(p, TwinOption) and flag in p.opts]
    raw, expected = _sample(param, tmp_path)
    monkeypatch.setenv(var, raw)
    root = click.Context(cli, info_name="harness", auto_envvar_prefix="SWARM_HARNESS")
    parent = root
    for word in words.split()[:-1]:
        parent = click.Context(_command(word), info_name=word, parent=parent)
    args = [str(tmp_path)] * sum(isinstance(p, click.Argument) and p.required for p in cmd.params)
    ctx = cmd.make_context(words.split()[-1], args, parent=parent)
    value = ctx.params[param.name]  # type: ignore[index]
    if param.name == "fail_on":  # repeatable, combined into one comma-joined value
        assert value == expected, (var, value)
        return
    assert (value == (expected,)) if param.multiple else (value == expected), (var, value)


def test_help_shows_each_twin() -> None:
    result = CliRunner().invoke(cli, ["run", "--help"], terminal_width=200)
    for var in ("SWARM_HARNESS_RUN_MODEL", "SWARM_HARNESS_RUN_COMPARE_BASELINE"):
        assert var in result.output


def test_the_old_internal_names_are_gone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_HARNESS_RUN_MODELS", "sim/x")
    ctx = _command("run").make_context(
        "run", [], parent=click.Context(cli, info_name="h", auto_envvar_prefix="SWARM_HARNESS")
    )
    assert ctx.params["models"] == ()
