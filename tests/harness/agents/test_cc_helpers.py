"""The Claude Code helpers on the captured runs: env, argv, locate and scorer inputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cc_kit import agent_env, prepare

from harness.agents.claude_code.collect import locate, project_dir_name, scorer_inputs
from harness.agents.claude_code.launch import (
    ClaudeCodePaths,
    agent_argv,
)
from scorers.claude_code import score_claude_code
from scorers.types import Manifest

DATA = Path(__file__).resolve().parents[2] / "data"
MANIFEST = Manifest.from_dict(json.loads((DATA / "fixtures" / "tiny" / "fixture.json").read_text()))


def capture_paths(tmp_path: Path, name: str) -> ClaudeCodePaths:
    run = tmp_path / name
    shutil.copytree(DATA / "claude-code-runs" / name, run)
    return ClaudeCodePaths(
        run,
        run / "repo",
        run / "home",
        run / "config",
        run / "tmp",
        run / "stdout.jsonl",
        run / "stderr.txt",
    )


@pytest.mark.parametrize(
    ("cwd", "folder"),
    [
        pytest.param("/tmp/a/repo", "-tmp-a-repo", id="slashes"),
        pytest.param("/tmp/x_y.z/repo", "-tmp-x-y-z-repo", id="underscore-and-dot"),
    ],
)
def test_project_dir_name(cwd: str, folder: str) -> None:
    assert project_dir_name(cwd) == folder


def test_env_is_private_and_strips_leaks(tmp_path: Path) -> None:
    paths = prepare(tmp_path / "w")
    base = {
        "PATH": "/bin",
        "ANTHROPIC_AUTH_TOKEN": "secret",
        "ANTHROPIC_MODEL": "other",
        "CLAUDECODE": "1",
        "GIT_DIR": "/caller/.git",
    }
    env = agent_env(base, paths, "tok", "http://127.0.0.1:1", "fake")
    for gone in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_MODEL", "CLAUDECODE", "GIT_DIR"):
        assert gone not in env
    assert (env["ANTHROPIC_BASE_URL"], env["ANTHROPIC_API_KEY"]) == ("http://127.0.0.1:1", "fake")
    assert env["CLAUDE_CONFIG_DIR"] == str(paths.config) and env["HOME"] == str(paths.home)
    assert env["CLAUDE_CODE_TMPDIR"] == env["TMPDIR"] == str(paths.tmp)
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == env["DISABLE_TELEMETRY"] == "1"


def test_argv_is_headless_stream_json() -> None:
    argv = agent_argv("/bin/claude", "TASK", "honest")
    assert (
        argv[:3] == ["/bin/claude", "-p", "TASK"] and "--dangerously-skip-permissions" not in argv
    )
    assert argv[argv.index("--output-format") + 1] == "stream-json" and "--verbose" in argv


@pytest.mark.parametrize(
    ("name", "resolved"),
    [
        pytest.param("honest", True, id="honest"),
        pytest.param("double-spawn", False, id="double-spawn"),
    ],
)
def test_locate_and_score_a_capture(tmp_path: Path, name: str, resolved: bool) -> None:
    located = locate(capture_paths(tmp_path, name), "combined-index.md")
    assert located.parent is not None and located.artifact is not None
    assert all(t is not None and m is not None for _, t, m in located.subagents)
    assert score_claude_code(scorer_inputs(located), MANIFEST).resolved is resolved


def test_locate_does_not_follow_symlinks(tmp_path: Path) -> None:
    paths = capture_paths(tmp_path, "honest")
    artifact = paths.repo / "combined-index.md"
    artifact.rename(tmp_path / "elsewhere.md")
    artifact.symlink_to(tmp_path / "elsewhere.md")
    first = next(paths.config.rglob("agent-*.jsonl"))
    first.rename(tmp_path / "moved.jsonl")
    first.symlink_to(tmp_path / "moved.jsonl")
    located = locate(paths, "combined-index.md")
    assert located.artifact is None
    assert sum(t is None for _, t, _m in located.subagents) == 1
    assert not score_claude_code(scorer_inputs(located), MANIFEST).resolved


def test_the_adapter_passes_the_callers_credentials_on(tmp_path: Path) -> None:
    """Under the runner the user's own key and endpoint reach the client; its other
    settings do not."""
    from harness.agents import parse_agent
    from harness.agents.base import ItemPaths, ItemSpec
    from scorers.types import Manifest

    root = tmp_path / "w"
    paths = ItemPaths(root, root / "repo", root / "home", root / "tmp")
    for d in (paths.repo, paths.home, paths.tmp):
        d.mkdir(parents=True)
    caller = {"ANTHROPIC_API_KEY": "sk-user", "ANTHROPIC_MODEL": "x", "CLAUDECODE": "1"}
    item = ItemSpec("t:m:1", "claude-x", "TASK", Manifest("t", "out.md", ()))
    launch = parse_agent("claude-code").prepare(paths, item, caller, "tok")
    assert launch.env["ANTHROPIC_API_KEY"] == "sk-user"
    assert "ANTHROPIC_MODEL" not in launch.env and "CLAUDECODE" not in launch.env
    assert launch.env["CLAUDE_CONFIG_DIR"] == str(root / "claude-config")
    assert launch.argv[:2] == ["-p", "TASK"]
