"""The agent's environment: isolation variables into the workdir, telemetry off."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.agents.base import ItemSpec
from harness.agents.prime_agent import SUPERVISOR_REGISTRY_VAR, PrimeAgentAdapter
from harness.item.workspace import base_env, build_item_paths, make_workdir
from scorers.types import Manifest

TINY = Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny"
CALLER = {
    "HOME": "/home/user",
    "TMPDIR": "/var/tmp/user",
    "IPYTHONDIR": "/home/user/.ipython",
    SUPERVISOR_REGISTRY_VAR: "/home/user/.prime/supervisor-owners",
    "PRIME_AGENT_TELEMETRY": "1",
    "DO_NOT_TRACK": "0",
}


@pytest.fixture
def env_and_root(tmp_path: Path) -> tuple[dict[str, str], Path]:
    root = make_workdir(base_dir=str(tmp_path))
    paths = build_item_paths(root, TINY)
    env, _ = base_env(CALLER, paths, "tok")
    item = ItemSpec("tiny:m:1", "p/m", "TASK", Manifest("tiny", "x.md", ()), tmp_path)
    return PrimeAgentAdapter().prepare(paths, item, env, "tok").env, root


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("HOME", id="home"),
        pytest.param("TMPDIR", id="tmpdir"),
        pytest.param("IPYTHONDIR", id="ipython-history"),
        pytest.param(SUPERVISOR_REGISTRY_VAR, id="supervisor-registry"),
    ],
)
def test_writes_outside_the_agent_home_stay_in_the_workdir(
    env_and_root: tuple[dict[str, str], Path], name: str
) -> None:
    env, root = env_and_root
    assert Path(env[name]).is_relative_to(root)


def test_the_private_home_has_a_git_identity(env_and_root: tuple[dict[str, str], Path]) -> None:
    env, _ = env_and_root
    assert "email = " in (Path(env["HOME"]) / ".gitconfig").read_text()
    assert Path(env["TMPDIR"]).is_dir()


def test_telemetry_is_off_whatever_the_caller_set(
    env_and_root: tuple[dict[str, str], Path],
) -> None:
    env, _ = env_and_root
    assert (env["PRIME_AGENT_TELEMETRY"], env["DO_NOT_TRACK"]) == ("0", "1")
