"""The sim's command line: the real CLI's argv and environment, and its error exits."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable

import psutil
import pytest
from simkit import SIM_AGENT, SIM_SHIM, SimLayout

from sim_agent import agent
from sim_agent.config import SimUsageError, parse_behaviours, wrong_value

#: Every test starts the simulated agent's real processes.
pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("argv_edit", "message"),
    [
        pytest.param(lambda a: ["--verbose", *a], "Unknown option: --verbose", id="unknown-flag"),
        pytest.param(lambda a: a[2:], "missing required option(s): --mode", id="no-mode"),
        pytest.param(lambda a: ["--mode", "text", *a[2:]], "only --mode json", id="text-mode"),
        pytest.param(lambda a: [*a[:-2]], "no task", id="no-task"),
        pytest.param(
            lambda a: [x if x != "sim/oracle" else "oracle" for x in a], "--model", id="bad-model"
        ),
    ],
)
def test_bad_argv_exits_1_with_a_message(
    sim: SimLayout, argv_edit: Callable[[list[str]], list[str]], message: str
) -> None:
    result = sim.run(argv=argv_edit(sim.argv()))
    assert result.returncode == 1
    assert message in result.stderr and result.events == []
    assert not sim.socket.exists()  # failed before starting a daemon


@pytest.mark.parametrize(
    ("var", "message"),
    [
        pytest.param("SWARM_HARNESS_SIM_ORACLE", "SWARM_HARNESS_SIM_ORACLE", id="no-oracle"),
        pytest.param("PRIME_AGENT_CODING_AGENT_DIR", "default agent home", id="no-agent-home"),
    ],
)
def test_missing_environment_exits_1(sim: SimLayout, var: str, message: str) -> None:
    result = sim.run(env=sim.env(**{var: None}))
    assert result.returncode == 1 and message in result.stderr
    assert not sim.socket.exists()


@pytest.mark.parametrize(
    "spec",
    [
        "teleport",
        "honest,no-spawn",
        "slow",
        "slow=-1",
        "flaky=2",
        "hang,crash",
        "model-error,crash",
    ],
)
def test_bad_behaviours_exit_1(sim: SimLayout, spec: str) -> None:
    result = sim.run(spec)
    assert result.returncode == 1 and "Error:" in result.stderr
    assert not sim.socket.exists()


def test_oracle_inside_the_repo_is_refused(sim: SimLayout) -> None:
    sim.write_oracle("honest")
    leaked = sim.repo / "oracle.json"
    leaked.write_bytes(sim.oracle.read_bytes())
    result = sim.run(env=sim.env(SWARM_HARNESS_SIM_ORACLE=str(leaked)))
    assert result.returncode == 1 and "inside the repo" in result.stderr


def test_shim_is_an_executable_agent_bin(sim: SimLayout) -> None:
    assert os.access(SIM_SHIM, os.X_OK)
    assert SIM_SHIM.read_text().startswith("#!/usr/bin/env python3\n")
    # Run it as --agent-bin would (through its shebang), with this interpreter on PATH.
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    result = sim.run(command=[str(SIM_SHIM), *sim.argv()], env={**sim.env(), "PATH": path})
    assert result.returncode == 0, result.stderr
    assert sim.bullets() and len(sim.child_files()) == 3


def test_script_runs_with_site_disabled(sim: SimLayout) -> None:
    """Standard library only: the harness may launch it with any Python."""
    result = sim.run(command=[sys.executable, "-S", "-I", str(SIM_AGENT), *sim.argv()])
    assert result.returncode == 0, result.stderr


def test_importable_main_reports_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert agent.main(["--nope"]) == 1
    assert "Unknown option: --nope" in capsys.readouterr().err


def test_ledger_hashes_abspath_when_sessions_did_not_exist(sim: SimLayout) -> None:
    sim.sessions.rmdir()
    result = sim.run()
    assert result.returncode == 0, result.stderr
    assert sim.ledger_path(os.path.abspath(sim.sessions)).is_file()


def test_ledger_hashes_realpath_of_a_symlinked_sessions_dir(sim: SimLayout) -> None:
    link = sim.root / "sessions-link"
    link.symlink_to(sim.sessions)
    argv = [str(link) if a == str(sim.sessions) else a for a in sim.argv()]
    env = sim.env(PRIME_AGENT_SESSION_DIR=str(link), PRIME_AGENT_CODING_AGENT_SESSION_DIR=str(link))
    assert sim.run(argv=argv, env=env).returncode == 0
    (ledger,) = (sim.home / "rlm-ledger").iterdir()
    assert ledger == sim.ledger_path(os.path.realpath(link))
    assert sim.ledger()[0]["sessionsDir"] == os.path.realpath(link)


def test_a_leaked_rlm_depth_shows_in_the_depths(sim: SimLayout) -> None:
    """Why the harness strips RLM_DEPTH: the agent believes it is somebody's child."""
    assert sim.run(env={**sim.env(), "RLM_DEPTH": "1"}).returncode == 0
    assert sim.transcript()[0]["rlmDepth"] == 1
    assert {s["depth"] for s in sim.spawns()} == {2}


def _role(proc: psutil.Process) -> str | None:
    """child, daemon or catalog (the daemon's ``sleep``), by command line and parent."""
    try:
        cmdline = proc.cmdline()
        parent = proc.parent()
        parent_cmdline = parent.cmdline() if parent is not None else []
    except psutil.Error:  # gone while we looked: it has no role
        return None
    if "--sim-child" in cmdline:
        return "child"
    if "--sim-daemon" in cmdline:
        return "daemon"
    return "catalog" if "--sim-daemon" in parent_cmdline else None


def test_children_inherit_the_environment(sim: SimLayout) -> None:
    """Nothing the sim starts scrubs its environment: the harness finds them all by it."""
    sim.write_oracle("slow=1")
    proc = subprocess.Popen(sim.command(), env=sim.env(), stdout=subprocess.DEVNULL)
    try:
        seen: set[str | None] = set()
        for _ in range(100):
            seen |= {_role(p) for p in sim.processes()}
            if {"child", "daemon", "catalog"} <= seen:
                break
            time.sleep(0.02)
        assert {"child", "daemon", "catalog"} <= seen
    finally:
        proc.wait(timeout=30)


def test_behaviour_specs_parse() -> None:
    b = parse_behaviours(" flaky=0.7 , slow=1 ,stubborn-daemon")
    assert (b.plan, b.flaky, b.slow, b.stubborn_daemon) == ("honest", 0.7, 1.0, True)
    assert parse_behaviours("").plan == "honest"
    assert parse_behaviours("retry-after-failure,detached-grandchild").detached_grandchild
    with pytest.raises(SimUsageError, match="cannot be combined"):
        parse_behaviours("silent-drop,delete-to-hide")
    with pytest.raises(SimUsageError, match="needs a child process"):
        parse_behaviours("no-spawn,detached-grandchild")


@pytest.mark.parametrize(
    ("value", "wrong"), [(3, 4), ("5 words", "6 words"), ("alpha", "wrong-alpha")]
)
def test_wrong_values_differ_but_look_alike(value: int | str, wrong: int | str) -> None:
    assert wrong_value(value) == wrong


def test_every_behaviour_is_described_once_plans_first() -> None:
    from sim_agent.config import DESCRIPTIONS, FLAGS, PLANS, VALUED

    names = [name.partition("=")[0] for name in DESCRIPTIONS]
    assert names == [*PLANS, *FLAGS, *VALUED]
