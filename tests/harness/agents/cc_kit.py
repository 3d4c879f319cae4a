"""Test-only helpers for driving the real Claude Code client outside the harness's runner:
a private workdir and the whole environment with an explicit endpoint and key."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from harness.agents.claude_code.launch import CREDENTIAL_VARS, ClaudeCodePaths, claude_env
from harness.agents.env import ITEM_TOKEN_VAR


def prepare(workdir: Path) -> ClaudeCodePaths:
    """Create the private dirs below ``workdir`` (the repo dir is the caller's to fill)."""
    paths = ClaudeCodePaths(
        workdir=workdir,
        repo=workdir / "repo",
        home=workdir / "home",
        config=workdir / "claude-config",
        tmp=workdir / "tmp",
        stdout=workdir / "stdout.jsonl",
        stderr=workdir / "stderr.txt",
    )
    for path in (paths.repo, paths.home, paths.config, paths.tmp):
        path.mkdir(parents=True, exist_ok=True)
    return paths


def agent_env(
    base: Mapping[str, str],
    paths: ClaudeCodePaths,
    token: str,
    base_url: str,
    api_key: str,
) -> dict[str, str]:
    """The whole environment for a run outside the harness's runner (tests): the caller's
    env, private HOME/TMPDIR, the process token and an explicit endpoint and key.

    ``base_url`` is the Messages server (``http://127.0.0.1:<port>``, no ``/v1``).
    """
    caller = {k: v for k, v in base.items() if k not in CREDENTIAL_VARS}
    caller.update(ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY=api_key)
    env, _ = claude_env(caller, paths)
    env.update({"HOME": str(paths.home), "TMPDIR": str(paths.tmp), ITEM_TOKEN_VAR: token})
    return env
