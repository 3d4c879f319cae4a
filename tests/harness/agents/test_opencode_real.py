"""The real opencode client against the scripted Messages server, outside the runner.

Each run goes through the adapter's own pieces outside the runner: ``prepare`` (private
dirs, config file, environment, the prompt on stdin), ``run_process``, ``collect`` into a
bundle and ``score`` with the pure scorer, on the honest script: the pieces the runner joins,
each on its own, and the bill to the cache read and write. Every script's verdict, tokens
and cost through the runner are the selftest's (test_selftest_real.py), not repeated here;
on an edit fixture (every script, the edit-only ones too, judged with the hidden checks)
they are ``test_edit_selftest_holds``.
The client comes from ``$OPENCODE_BIN``, else the
install dir, else ``agents install opencode`` (npm registry); otherwise the test skips.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from realkit import (
    REPO,
    TINY,
    assert_score_is_the_bill,
    processes_of_run,
    selftest_in_fresh_home,
    tree,
)

from harness.agents.base import ItemSpec
from harness.agents.env import secret_values
from harness.agents.opencode import OpenCodeAdapter
from harness.agents.opencode.launch import STATE_DIRS
from harness.fixtures import load_fixture
from harness.item.processes import run_process
from harness.item.workspace import base_env, build_item_paths
from harness.model.report import load_report
from harness.selftest import cases_for
from scorers.records import SpawnEvent
from scripted_model import Oracle, ScriptedModelServer
from scripted_model.opencode_scripts import OPENCODE_SCRIPTS
from scripted_model.server import OPENCODE_MESSAGES_API

#: A scripted run takes 3-8 s; the margin covers a loaded 2-core machine.
RUN_TIMEOUT_S = 180
#: The smallest shipped edit fixture (3 tickets, one shared CHANGELOG.md).
EDIT_SMOKE = REPO / "fixtures" / "edit-smoke"
#: Its selftest plays 10 scripts of 10-16 model requests each at concurrency 3: about a
#: minute alone, 7 minutes on a 2-core machine shared with other runs.
EDIT_SELFTEST_TIMEOUT_S = 900

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


def test_edit_selftest_holds(opencode_bin: Path, tmp_path: Path) -> None:
    """``selftest --agent opencode --fixture edit-smoke``: every script, the edit-only ones
    too, gets its verdict from the hidden checks and the client's own edit records, with
    tokens and cost equal to the bill; and the honest run's records trace each ticket's
    change to its own worker."""
    if not EDIT_SMOKE.is_dir():
        pytest.skip("fixtures/edit-smoke is not on this branch")
    run = selftest_in_fresh_home(
        tmp_path, "opencode", opencode_bin, EDIT_SELFTEST_TIMEOUT_S, str(EDIT_SMOKE)
    )
    done = run["done"]
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    rows = [r for r in map(str.split, done.stdout.splitlines()) if r[:1] in (["ok"], ["FAIL"])]
    expected = [c.script for c in cases_for(OpenCodeAdapter("", None), edit=True)]
    assert sorted(r[1] for r in rows) == sorted(expected), done.stdout
    assert {"edit-parent", "edit-wrong-lane"} <= {r[1] for r in rows}
    assert all(r[0] == "ok" for r in rows), done.stdout
    assert run["leftovers"] == [] and tree(run["home"]) == [] and tree(run["tmp"]) == []
    (run_dir,) = [d for d in run["runs"].iterdir() if d.is_dir()]
    (honest,) = [i for i in load_report(run_dir).items if i.model.endswith("/honest")]
    item_dir = run_dir / "items" / honest.item_dir
    meta = json.loads((item_dir / "item.json").read_text(encoding="utf-8"))
    manifest = load_fixture(EDIT_SMOKE).manifest
    evidence = OpenCodeAdapter("", None).evidence(item_dir, meta, manifest)
    names = {e.child_id: e.name for e in evidence.ledger.events if type(e) is SpawnEvent}
    writers = {(names.get(w.child_id or "", "parent"), w.path, w.how) for w in evidence.writes}
    assert writers == {
        *((shard.worker, path, "edit") for shard in manifest.shards for path in shard.owns),
        *((shard.worker, path, "edit") for shard in manifest.shards for path in manifest.shared),
        ("parent", manifest.artifact, "write"),
    }
