"""Workspace and launch: the answer key stays out, the environment is isolated."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.agents import parse_agent
from harness.agents.base import ItemPaths, ItemSpec, Launch
from harness.agents.env import ITEM_TOKEN_VAR, secret_values
from harness.agents.prime_agent import PrimeAgentAdapter
from harness.item.workspace import (
    RepoTemplates,
    base_env,
    build_item_paths,
    make_workdir,
    scrubbed_git_env,
)
from scorers.types import Manifest

MANIFEST = Manifest("fx", "combined-index.md", ())


def prepare(
    tmp_path: Path,
    caller: dict[str, str] | None = None,
    source: Path | None = None,
    model: str = "anthropic/m",
) -> tuple[ItemPaths, Launch]:
    """One prime-agent item prepared as run_item prepares it."""
    paths = build_item_paths(make_workdir(base_dir=str(tmp_path)), _fixture(tmp_path))
    env, _ = base_env(caller if caller is not None else {}, paths, "tok")
    item = ItemSpec("fx:m:1", model, "TASK", MANIFEST, credentials_source=source or tmp_path)
    return paths, PrimeAgentAdapter().prepare(paths, item, env, "tok")


def _fixture(tmp_path: Path) -> Path:
    fx = tmp_path / "fx"
    (fx / "shards").mkdir(parents=True)
    (fx / "shards" / "a.txt").write_text("alpha beta\n", encoding="utf-8")
    (fx / "fixture.json").write_text(
        json.dumps({"secret": "EXPECTED-ANSWER-4242"}), encoding="utf-8"
    )
    (fx / "task.txt").write_text("do the task", encoding="utf-8")
    return fx


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args],
        cwd=repo,
        env=scrubbed_git_env(os.environ),
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_repo_holds_fixture_files_without_answer_key(tmp_path: Path) -> None:
    ws, launch = prepare(tmp_path)
    sessions = launch.state["sessions"]
    assert (ws.repo / "shards" / "a.txt").is_file()
    assert not (ws.repo / "fixture.json").exists() and not (ws.repo / "task.txt").exists()
    assert _git(ws.repo, "ls-files").split() == ["shards/a.txt"]
    history = _git(ws.repo, "log", "--all", "-p", "--format=%H %s")
    assert "EXPECTED-ANSWER-4242" not in history and "fixture.json" not in history
    objects = _git(ws.repo, "rev-list", "--all", "--objects")
    assert "fixture.json" not in objects and "task.txt" not in objects
    assert sessions == Path(os.path.realpath(sessions)) and sessions.is_dir()


def test_an_adopted_template_is_copied_as_the_items_repo(tmp_path: Path) -> None:
    """What a Ray node does with the head's committed repo: a template built elsewhere and
    adopted for the fixture is what the item's repo is copied from (history included), and
    closing the cache leaves it to its owner."""
    fixture = _fixture(tmp_path)
    with RepoTemplates() as head:
        built = head.repo_for(fixture)
        shipped = tmp_path / "shipped"
        shutil.copytree(built, shipped, symlinks=True)
    (shipped / "only-in-the-shipped-copy").write_text("x", encoding="utf-8")
    head_commit = _git(shipped, "rev-parse", "HEAD").strip()
    node = RepoTemplates()
    node.adopt(fixture, shipped)
    paths = build_item_paths(make_workdir(base_dir=str(tmp_path)), fixture, node)
    node.close()
    assert (paths.repo / "only-in-the-shipped-copy").is_file()  # copied, not built again
    assert _git(paths.repo, "rev-parse", "HEAD").strip() == head_commit
    assert _git(paths.repo, "ls-files").split() == ["shards/a.txt"]
    assert shipped.is_dir()  # the node's own scratch dir removes it, not the cache


def test_repo_build_ignores_callers_git_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    caller = tmp_path / "caller"
    caller.mkdir()
    subprocess.run(["git", "init", "-q", str(caller)], check=True, env=scrubbed_git_env(os.environ))
    monkeypatch.setenv("GIT_DIR", str(caller / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(caller))
    ws = build_item_paths(make_workdir(base_dir=str(tmp_path)), _fixture(tmp_path))
    assert (ws.repo / ".git").is_dir()
    # The caller's repository got no commit from us.
    log = subprocess.run(
        ["git", "log", "--oneline"],
        cwd=caller,
        capture_output=True,
        text=True,
        env=scrubbed_git_env(os.environ),
    )
    assert "fixture" not in log.stdout


def test_agent_env_strips_leaks_and_isolates(tmp_path: Path) -> None:
    base = {
        "PATH": "/usr/bin",
        "ANTHROPIC_API_KEY": "sk-test-0123456789",
        "PRIME_AGENT_INTERNAL_WORKER_ID": "w1",
        "RLM_DEPTH": "2",
        "RLM_MAX_DEPTH": "3",
        "PRIME_AGENT_BASH_SHELL": "/bin/zsh",
        "PRIME_AGENT_BASH_COMMAND_PREFIX": "x",
        "GIT_DIR": "/caller/.git",
        "GIT_INDEX_FILE": "/caller/.git/index",
        "PRIME_AGENT_CODING_AGENT_DIR": "/home/me/.prime/agent",
        "SWARM_HARNESS_SIM_ORACLE": "/leak.json",
    }
    _, launch = prepare(tmp_path, base)
    env, names = launch.env, launch.env_set
    for gone in (
        "PRIME_AGENT_INTERNAL_WORKER_ID",
        "RLM_DEPTH",
        "RLM_MAX_DEPTH",
        "PRIME_AGENT_BASH_SHELL",
        "PRIME_AGENT_BASH_COMMAND_PREFIX",
        "GIT_DIR",
        "GIT_INDEX_FILE",
        "SWARM_HARNESS_SIM_ORACLE",
    ):
        assert gone not in env
    assert env["ANTHROPIC_API_KEY"] == "sk-test-0123456789"  # credentials pass through
    assert env["PRIME_AGENT_CODING_AGENT_DIR"] == str(launch.state["agent_home"])
    assert (
        env["PRIME_AGENT_SESSION_DIR"]
        == env["PRIME_AGENT_CODING_AGENT_SESSION_DIR"]
        == str(launch.state["sessions"])
    )
    assert env[ITEM_TOKEN_VAR] == "tok"
    assert "ANTHROPIC_API_KEY" not in names and "PRIME_AGENT_SESSION_DIR" in names


def test_argv_is_exactly_the_contract(tmp_path: Path) -> None:
    ws, launch = prepare(tmp_path)
    assert launch.argv == [
        "--mode",
        "json",
        "--daemon-socket",
        str(ws.root / "daemon.sock"),
        "--cwd",
        str(ws.repo),
        "--session-dir",
        str(launch.state["sessions"]),
        "--model",
        "anthropic/m",
        "--",
        "TASK",
    ]


def test_agent_home_copies_only_auth_and_models(tmp_path: Path) -> None:
    src = tmp_path / "home-src"
    src.mkdir()
    (src / "auth.json").write_text(
        json.dumps({"anthropic": {"key": "sk-ant-secretvalue"}}), encoding="utf-8"
    )
    (src / "models.json").write_text("{}", encoding="utf-8")
    (src / "settings.json").write_text("{}", encoding="utf-8")
    (src / "sessions").mkdir()
    _, launch = prepare(tmp_path, source=src)
    home = launch.state["agent_home"]
    assert sorted(p.name for p in home.iterdir()) == ["auth.json", "models.json"]
    assert b"sk-ant-secretvalue" in secret_values({}, launch.credential_files)


def test_missing_binary_is_a_launch_error() -> None:
    from harness.errors import AgentLaunchError

    with pytest.raises(AgentLaunchError, match="not found"):
        parse_agent("prime-agent", "/nonexistent/prime-agent").resolve_command()


def test_non_executable_binary_is_a_launch_error(tmp_path: Path) -> None:
    from harness.errors import AgentLaunchError

    fake = tmp_path / "prime-agent"
    fake.write_text("#!/bin/sh\n", encoding="utf-8")
    fake.chmod(0o644)
    with pytest.raises(AgentLaunchError, match="not executable"):
        parse_agent("prime-agent", str(fake)).resolve_command()


def test_per_agent_prompts_stay_out_of_the_repo_and_pick_the_agent(tmp_path: Path) -> None:
    from harness.fixtures import load_fixture

    src = Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny"
    fx_dir = tmp_path / "tiny"
    import shutil

    shutil.copytree(src, fx_dir)
    before = load_fixture(fx_dir).content_hash()
    (fx_dir / "task.other-agent.txt").write_text("OTHER AGENT PROMPT", encoding="utf-8")
    fixture = load_fixture(fx_dir)
    assert fixture.content_hash() != before  # part of the run's identity
    assert fixture.agent_task("other-agent") == "OTHER AGENT PROMPT"
    assert parse_agent("sim").task_text(fixture) == fixture.task_text  # no task.sim.txt
    paths = build_item_paths(make_workdir(base_dir=str(tmp_path)), fx_dir)
    assert not any(p.name.startswith("task.") for p in paths.repo.iterdir())


def test_an_edit_fixtures_checks_stay_out_of_the_repo(tmp_path: Path) -> None:
    """Like the answer key: the hidden checks never reach the agent, through a template or
    not; the code, the shared file and the tickets do."""
    from harness.fixtures import FIXTURES_ROOT

    fx_dir = FIXTURES_ROOT / "edit-smoke"
    assert (fx_dir / "checks").is_dir()
    with RepoTemplates() as templates:
        for paths in (
            build_item_paths(make_workdir(base_dir=str(tmp_path)), fx_dir),
            build_item_paths(make_workdir(base_dir=str(tmp_path)), fx_dir, templates),
        ):
            files = {p.relative_to(paths.repo).as_posix() for p in paths.repo.rglob("*")}
            assert not any(f == "checks" or f.startswith("checks/") for f in files)
            assert {"CHANGELOG.md", "shop/shipping.py", "shards/tax.md"} <= files
            assert "fixture.json" not in files and "task.txt" not in files
            tracked = subprocess.run(
                ["git", "ls-files"], cwd=paths.repo, capture_output=True, text=True, check=True
            ).stdout.split()
            assert not any(f.startswith("checks/") for f in tracked)


def test_a_read_fixtures_checks_folder_is_data(tmp_path: Path) -> None:
    """Only an edit fixture's checks/ is hidden: a read fixture's folder of that name is
    part of its repo."""
    src = Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny"
    fx_dir = Path(shutil.copytree(src, tmp_path / "tiny"))
    (fx_dir / "checks").mkdir()
    (fx_dir / "checks" / "notes.txt").write_text("data", encoding="utf-8")
    paths = build_item_paths(make_workdir(base_dir=str(tmp_path)), fx_dir)
    assert (paths.repo / "checks" / "notes.txt").read_text(encoding="utf-8") == "data"
