"""Refusals before anything runs: a run that could only fail is refused with one line and
leaves no run directory (nothing becomes ``latest``)."""

from __future__ import annotations

import socket
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli.main import cli

TINY = str(Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny")


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def nothing_written(runs: Path) -> bool:
    return not runs.exists() or not any(runs.iterdir())


def claude_run(tmp_path: Path, script: str, *extra: str) -> tuple[int, str, str]:
    """``run`` with a stand-in ``claude`` (a shell ``script``) as the Claude Code binary."""
    fake = tmp_path / "claude"
    fake.write_text(f"#!/bin/sh\n{script}\n")
    fake.chmod(0o755)
    return invoke(
        "run", "--fixture", TINY, "--agent", "claude-code", "--model", "anthropic/x",
        "--agent-bin", str(fake), "--runs-dir", str(tmp_path / "runs"), *extra,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("model", "why"),
    [
        pytest.param("", "expected PROVIDER/MODEL", id="empty"),
        pytest.param("-x", "expected PROVIDER/MODEL", id="option-like"),
        pytest.param("anthropic/-x", "expected PROVIDER/MODEL", id="model-option-like"),
        pytest.param("anthropic/claude sonnet", "no spaces", id="space"),
        pytest.param("claude-sonnet-4-5", "expected PROVIDER/MODEL", id="no-provider"),
        pytest.param("ollama/llama3:8b", "no ':'", id="colon"),
        pytest.param("sim/", "expected PROVIDER/MODEL", id="sim-nothing-after"),
    ],
)
def test_bad_models_are_refused(tmp_path: Path, model: str, why: str) -> None:
    runs = tmp_path / "runs"
    agent = "sim" if model.startswith("sim") else "prime-agent"
    code, _, err = invoke(
        "run", "--fixture", TINY, "--agent", agent, "--model", model, "--runs-dir", str(runs)
    )
    assert code == 2 and why in err, err
    assert nothing_written(runs)


def test_a_missing_agent_binary_is_refused_before_a_run_dir_exists(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    code, out, err = invoke(
        "run", "--fixture", TINY, "--model", "anthropic/x",
        "--agent-bin", str(tmp_path / "no-such-agent"), "--runs-dir", str(runs),
    )  # fmt: skip
    assert code == 3 and out == ""
    (line,) = err.strip().splitlines()  # one line: the cause and how to get the agent
    assert "not found" in line and "--agent-bin" in line and "not redistributed" in line
    assert nothing_written(runs)


def test_a_binary_that_is_not_executable_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "prime-agent"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(stat.S_IRUSR | stat.S_IWUSR)
    runs = tmp_path / "runs"
    code, _, err = invoke(
        "run", "--fixture", TINY, "--model", "p/m", "--agent-bin", str(fake),
        "--runs-dir", str(runs),
    )  # fmt: skip
    assert code == 3 and "not executable" in err
    assert nothing_written(runs)


def test_the_version_check_leaves_the_callers_home_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that creates its state dirs on any start writes into a throw-away HOME."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    fake = tmp_path / "agent"
    fake.write_text('#!/bin/sh\nmkdir -p "$HOME/.agent-state"\necho "agent 1.2.3"\n')
    fake.chmod(0o755)
    code, out, _ = invoke(
        "run", "--fixture", TINY, "--model", "p/m", "--agent-bin", str(fake), "--dry-run"
    )
    # Ready or not depends on credentials here; the version and the untouched HOME matter.
    assert code in (0, 3) and "agent 1.2.3" in out
    assert list(home.iterdir()) == []


def test_agent_bin_with_the_sim_is_refused(tmp_path: Path) -> None:
    code, _, err = invoke(
        "run", "--fixture", TINY, "--agent", "sim", "--agent-bin", "/bin/true",
        "--runs-dir", str(tmp_path),
    )  # fmt: skip
    assert code == 2 and "--agent-bin /bin/true" in err and "simulated agent" in err
    assert nothing_written(tmp_path)


def test_an_unknown_sim_behaviour_is_refused_before_the_run(tmp_path: Path) -> None:
    code, _, err = invoke(
        "run", "--fixture", TINY, "--agent", "sim", "--model", "sim/teleport",
        "--runs-dir", str(tmp_path),
    )  # fmt: skip
    assert code == 2 and "sim/teleport" in err and "unknown behaviour 'teleport'" in err
    assert nothing_written(tmp_path)


def test_selftest_without_the_binary_is_one_line(tmp_path: Path) -> None:
    code, out, err = invoke(
        "selftest", "--agent-bin", str(tmp_path / "missing"), "--runs-dir", str(tmp_path / "r")
    )
    assert code == 3 and "not found" in err and "could not start" not in out + err
    assert nothing_written(tmp_path / "r")


def test_selftest_of_an_unknown_script_is_refused_naming_the_scripts(tmp_path: Path) -> None:
    code, _, err = invoke(
        "selftest", "--agent", "claude-code", "--agent", "opencode", "--script", "honest",
        "--script", "over-budget", "--agent-bin", f"claude-code={tmp_path / 'missing'}",
        "--agent-bin", f"opencode={tmp_path / 'missing'}", "--runs-dir", str(tmp_path / "r"),
    )  # fmt: skip
    # Bad usage first (exit 2), before the missing binaries (exit 3): over-budget is a
    # prime-agent script the two agents do not share.
    assert code == 2 and "--script over-budget" in err and "honest, no-spawn" in err, err
    assert nothing_written(tmp_path / "r")


@pytest.mark.slow
def test_several_sim_behaviours_in_one_run(tmp_path: Path) -> None:
    """The model picks the sim's behaviour, so one run compares behaviours like models."""
    code, out, err = invoke(
        "run", "--fixture", TINY, "--agent", "sim", "--model", "sim/honest",
        "--model", "sim/no-spawn", "--runs-dir", str(tmp_path),
    )  # fmt: skip
    assert code == 1, err
    assert "tiny x sim/honest: 1/1 resolved" in out
    assert "tiny x sim/no-spawn: 0/1 resolved" in out and "delegation 1" in out


def test_the_agents_own_behaviours_underlie_each_models() -> None:
    from harness.agents import parse_agent

    agent = parse_agent("sim:slow=2,no-spawn")
    assert agent.behaviours_for("sim/honest") == "slow=2,honest"  # type: ignore[attr-defined]
    assert agent.default_models() == ("sim/slow=2,no-spawn",)
    assert agent.behaviours_for("sim/slow=2,no-spawn") == "slow=2,no-spawn"  # type: ignore[attr-defined]


def test_a_version_check_that_fails_shows_why_and_what_to_do(tmp_path: Path) -> None:
    """A wrapper that finds its runtime through $HOME exits 127 under the check's private
    HOME: the refusal quotes what it said, says the HOME was private and how to fix it."""
    runs = tmp_path / "runs"
    code, out, err = claude_run(tmp_path, 'exec "$HOME/.local/share/runtime/node" cli.js "$@"')
    assert code == 3 and out == ""
    (line,) = err.strip().splitlines()
    assert "exit status 127" in line and "runtime/node" in line  # the wrapper's own words
    assert "private, empty HOME" in line and "does not depend on HOME" in line
    assert nothing_written(runs)


def test_a_real_agent_without_credentials_is_refused_before_a_run_dir_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No key for the agent's provider: one line naming the variable, exit 3, no run dir
    (nothing becomes ``latest``), where the run used to go on to 'model never reached'."""
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    runs = tmp_path / "runs"
    answer = 'echo "2.1.332 (Claude Code)"'
    code, out, err = claude_run(tmp_path, answer)
    assert code == 3 and out == ""
    (line,) = err.strip().splitlines()
    assert "claude-code has no credentials" in line and "ANTHROPIC_API_KEY" in line
    assert nothing_written(runs)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-placeholder")  # with one, it would run
    with socket.socket() as endpoint:  # (at an endpoint it can reach)
        endpoint.bind(("127.0.0.1", 0))
        endpoint.listen()
        port = endpoint.getsockname()[1]
        monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
        code, out, _ = claude_run(tmp_path, answer, "--dry-run")
    assert code == 0 and "ok   credentials: ANTHROPIC_API_KEY" in out, out


def test_a_fixture_name_typo_gets_a_did_you_mean(tmp_path: Path) -> None:
    code, _, err = invoke(
        "run", "--agent", "sim", "--fixture", "json-event", "--runs-dir", str(tmp_path / "r")
    )
    assert code == 2 and "did you mean json-events?" in err
    code, _, err = invoke(
        "run", "--agent", "sim", "--fixture", "zzzzzz", "--runs-dir", str(tmp_path / "r")
    )
    assert code == 2 and "did you mean" not in err and "known: " in err


@pytest.mark.parametrize(
    ("args", "said"),
    [
        pytest.param(
            ("--fixture", "smok", "--agent", "sim"), "smok: did you mean smoke (a set)?", id="set"
        ),
        pytest.param(
            ("--fixture", "standrd", "--agent", "sim"),
            "did you mean standard (a set)?",
            id="set-2",
        ),
        pytest.param(
            ("--fixture", TINY, "--agent", "simm"),
            "--agent: unknown agent 'simm'; did you mean sim?",
            id="agent",
        ),
        pytest.param(
            ("--fixture", TINY, "--agent", "sim:flakey=0.2"),
            "unknown behaviour 'flakey'; did you mean flaky?",
            id="behaviour-with-a-value",
        ),
        pytest.param(
            ("--fixture", TINY, "--agent", "sim:flakey"),
            "unknown behaviour 'flakey'; did you mean flaky?",
            id="behaviour",
        ),
        pytest.param(
            ("--fixture", TINY, "--agent", "sim", "--model", "sim/nospawn"),
            "--model sim/nospawn: unknown behaviour 'nospawn'; did you mean no-spawn?",
            id="behaviour-as-a-model",
        ),
    ],
)
def test_a_mistyped_name_gets_a_did_you_mean(
    tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    """A fixture set, an agent or a sim behaviour named with a typo: what was meant, in
    the one line of the refusal (an unknown behaviour given a value is unknown, not one
    that "takes no value")."""
    code, _, err = invoke("run", *args, "--runs-dir", str(tmp_path / "r"))
    assert code == 2 and said in err and "takes no value" not in err, err
    assert len(err.strip().splitlines()) == 1
    assert nothing_written(tmp_path / "r")


def test_a_known_behaviour_given_a_value_it_does_not_take_says_so(tmp_path: Path) -> None:
    code, _, err = invoke(
        "run", "--fixture", TINY, "--agent", "sim:honest=1", "--runs-dir", str(tmp_path / "r")
    )
    assert code == 2 and "behaviour 'honest' takes no value" in err


def test_prime_agent_without_auth_json_or_a_key_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    for var in [v for v in os.environ if v.endswith("_API_KEY")]:
        monkeypatch.delenv(var)
    monkeypatch.setenv("PRIME_AGENT_CODING_AGENT_DIR", str(tmp_path / "empty-home"))
    fake = tmp_path / "prime-agent"
    fake.write_text('#!/bin/sh\necho "0.8.0"\n')
    fake.chmod(0o755)
    runs = tmp_path / "runs"
    code, _, err = invoke(
        "run", "--fixture", TINY, "--model", "anthropic/x", "--agent-bin", str(fake),
        "--runs-dir", str(runs),
    )  # fmt: skip
    assert code == 3 and "prime-agent has no credentials" in err and "auth.json" in err
    assert nothing_written(runs)
