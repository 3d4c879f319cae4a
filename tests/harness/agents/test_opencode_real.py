"""The real opencode client against the scripted Messages server, outside the runner.

Each run goes through the adapter's own pieces outside the runner: ``prepare`` (private
dirs, config file, environment, the prompt on stdin), ``run_process``, ``collect`` into a
bundle and ``score`` with the pure scorer, on the honest script: the pieces the runner joins,
each on its own, and the bill to the cache read and write. Every script's verdict, tokens
and cost through the runner are the selftest's (test_selftest_real.py), not repeated here.
The client comes from ``$OPENCODE_BIN``, else the
install dir, else ``agents install opencode`` (npm registry); otherwise the test skips.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from realkit import TINY, assert_score_is_the_bill, processes_of_run, tree

from harness.agents.base import ItemSpec
from harness.agents.env import secret_values
from harness.agents.opencode import OpenCodeAdapter
from harness.agents.opencode.launch import STATE_DIRS
from harness.fixtures import load_fixture
from harness.item.processes import run_process
from harness.item.workspace import base_env, build_item_paths
from scripted_model import Oracle, ScriptedModelServer
from scripted_model.opencode_scripts import OPENCODE_SCRIPTS
from scripted_model.server import OPENCODE_MESSAGES_API

#: A scripted run takes 3-8 s; the margin covers a loaded 2-core machine.
RUN_TIMEOUT_S = 180

pytestmark = pytest.mark.real_agent


@pytest.fixture(scope="module")
def server() -> ScriptedModelServer:
    oracle = Oracle.from_fixture_dirs([TINY])
    with ScriptedModelServer(oracle, model_api=OPENCODE_MESSAGES_API) as srv:
        yield srv  # type: ignore[misc]


@pytest.mark.parametrize("name", ["honest"], ids=str)
def test_script_verdict(
    name: str, opencode_bin: Path, server: ScriptedModelServer, tmp_path: Path
) -> None:
    script = OPENCODE_SCRIPTS[name]
    adapter = OpenCodeAdapter("", str(opencode_bin))
    fixture = load_fixture(TINY)
    root = tmp_path / "work"
    root.mkdir()
    paths = build_item_paths(root, TINY)
    token = f"octest-{name}-{os.getpid()}"
    caller = {
        **os.environ,
        "ANTHROPIC_BASE_URL": server.base_url.removesuffix("/v1"),
        "ANTHROPIC_API_KEY": "scripted-no-key",
        "OPENCODE_SERVER_PASSWORD": "must-not-reach-the-client",
    }
    env, _ = base_env(caller, paths, token)
    spec = ItemSpec(
        key=f"tiny:scripted/{name}:1",
        model=f"scripted/{name}",
        task_text=adapter.task_text(fixture),
        manifest=fixture.manifest,
    )
    launch = adapter.prepare(paths, spec, env, token)
    assert "OPENCODE_SERVER_PASSWORD" not in launch.env and launch.stdin is not None
    stdout, stderr = root / "stdout.jsonl", root / "stderr.txt"
    result = run_process(
        [*adapter.resolve_command(), *launch.argv],
        env=launch.env,
        cwd=paths.repo,
        timeout_s=RUN_TIMEOUT_S,
        stdout_path=stdout,
        stderr_path=stderr,
        stdin_path=launch.stdin,
    )
    assert result.exit_code == 0 and not result.timed_out, stderr.read_text()[-500:]
    assert processes_of_run(token) == []  # nothing of the run outlives the client
    # Every file the client wrote is in the item's own dirs; its HOME holds only ours.
    assert tree(paths.home) == [".gitconfig"]
    assert (root / STATE_DIRS["XDG_DATA_HOME"] / "opencode" / "opencode.db").is_file()
    item_dir = tmp_path / "item"
    collected = adapter.collect(
        launch, item_dir, stdout, stderr, secret_values(launch.env, launch.credential_files)
    )
    assert collected.capped == () and not any("no opencode.db" in n for n in collected.notes)
    assert_score_is_the_bill(adapter.score(item_dir, {}, fixture.manifest), script, server)
