"""The real Claude Code, opencode, Codex and Gemini CLI clients through ``run`` while the scripted server fails
requests as a provider would: a transient 529 on every subagent's first request, the
parent failing once after its children reported, everything failing, and the binary
removed mid-run. Pins the verdicts, the faults counted against those served, the attempts,
the tokens against the bill, the breaker's exit 3, and that nothing is left running or
written into HOME or TMPDIR.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from realkit import REPO, TINY, processes_of_run, tree

from harness.model.report import RunReport, load_report
from scripted_model import Oracle, ScriptedModelServer
from scripted_model.faults import parse_faults
from scripted_model.server import (
    CLAUDE_MESSAGES_API,
    CODEX_RESPONSES_API,
    GEMINI_API,
    OPENCODE_MESSAGES_API,
)

pytestmark = pytest.mark.real_agent

#: A few scripted runs of seconds each; the margin covers a loaded 2-core machine.
RUN_TIMEOUT_S = 400
APIS = {
    "claude-code": CLAUDE_MESSAGES_API,
    "opencode": OPENCODE_MESSAGES_API,
    "codex": CODEX_RESPONSES_API,
    "gemini": GEMINI_API,
}
BINARIES = {"claude-code": "claude_code_bin", "opencode": "opencode_bin", "codex": "codex_bin",
            "gemini": "gemini_bin"}  # fmt: skip
#: The parent's request that would write the index, failed once (Claude Code does not retry
#: a 500 marked x-should-retry: false; Codex 0.171.0 gives up on a 429 at once) or six
#: times (opencode retries five times whatever the header says; retry-after=0 makes its
#: retries immediate). Gemini CLI 0.61.0 retries an HTTP error 10 times over about four
#: minutes, but never a stream cut short.
PARENT_ONCE = {
    "claude-code": "server_error,scope=parent,phase=write,times=1,fail-fast",
    "opencode": "overloaded,scope=parent,phase=write,times=6,retry-after=0",
    "codex": "rate_limited,scope=parent,phase=write,times=1",
    "gemini": "stream_cut,scope=parent,phase=write,times=1",
}
#: Every request fails; Claude Code is told to retry none (its own setting, --agent-env);
#: Codex retries a 529 thirty times (4 request and 5 stream retries, config keys only) and
#: a 429 never; Gemini CLI a cut stream never.
DOWN = {"claude-code": ("overloaded", ("--agent-env", "CLAUDE_CODE_MAX_RETRIES=0")),
        "opencode": ("overloaded,retry-after=0", ()),
        "codex": ("rate_limited", ()),
        "gemini": ("stream_cut", ())}  # fmt: skip


def endpoint_env(agent: str, base_url: str) -> dict[str, str]:
    """Where the agent finds the scripted server, the way users point it at theirs."""
    if agent == "codex":
        return {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "scripted-no-key"}
    if agent == "gemini":
        root = base_url.removesuffix("/v1")
        return {"GOOGLE_GEMINI_BASE_URL": root, "GEMINI_API_KEY": "scripted-no-key"}
    return {
        "ANTHROPIC_BASE_URL": base_url.removesuffix("/v1"),
        "ANTHROPIC_API_KEY": "scripted-no-key",
    }


def run_with_faults(
    base: Path, agent: str, binary: Path, faults: str, *args: str, watch: object = None
) -> dict:
    """``harness run --agent AGENT --model scripted/honest`` on the tiny fixture against a
    server serving ``faults``, HOME and TMPDIR fresh dirs."""
    home, tmp, runs = base / "home", base / "tmp", base / "runs"
    for d in (home, tmp):
        d.mkdir()
    with ScriptedModelServer(
        Oracle.from_fixture_dirs([TINY]), model_api=APIS[agent], faults=parse_faults(faults)
    ) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness", "run", "--agent", agent,
             "--agent-bin", str(binary), "--model", "scripted/honest", "--fixture", str(TINY),
             "--retry-backoff", "0.5", "--runs-dir", str(runs), *args],
            cwd=REPO,
            env={**os.environ, "HOME": str(home), "TMPDIR": str(tmp),
                 **endpoint_env(agent, server.base_url)},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        if callable(watch):
            watch(runs)
        out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
        seen = {
            "billed": server.billed("honest").total,
            "served": server.faults_served("honest"),
        }
    (run,) = [d for d in runs.iterdir() if d.is_dir()]
    return {
        "code": proc.returncode,
        "out": out,
        "err": err,
        "report": load_report(run),
        "run": run,
        **seen,
        "home": home,
        "tmp": tmp,
        "leftovers": processes_of_run(run.name),
    }


def _left_nothing(seen: dict) -> None:
    assert tree(seen["home"]) == [] and tree(seen["tmp"]) == []
    assert seen["leftovers"] == []


def _spent(report: RunReport) -> int:
    return sum(i.spent_tokens for i in report.items)


def _counted(report: RunReport) -> int:
    return sum(i.spent_failed_requests for i in report.items)


@pytest.fixture(params=sorted(APIS))
def client(request: pytest.FixtureRequest) -> tuple[str, Path]:
    name = request.param
    return name, request.getfixturevalue(BINARIES[name])


def test_a_529_on_every_subagents_first_request_is_got_past(
    client: tuple[str, Path], tmp_path: Path
) -> None:
    agent, binary = client
    seen = run_with_faults(tmp_path, agent, binary, "overloaded,scope=children,first=1")
    assert seen["code"] == 0, seen["out"] + seen["err"][-2000:]
    (item,) = seen["report"].items
    assert item.status == "resolved" and item.attempts == 1
    assert seen["served"] == 3 and _counted(seen["report"]) == 3
    assert item.facts.provider_faults is not None and item.facts.provider_faults.gave_up is None
    assert item.score.tokens_used == seen["billed"]  # failed requests billed nothing
    assert "provider: 3 failed requests" in seen["out"]
    _left_nothing(seen)


def test_a_parent_failing_once_after_spawning_is_retried_and_resolves(
    client: tuple[str, Path], tmp_path: Path
) -> None:
    agent, binary = client
    seen = run_with_faults(tmp_path, agent, binary, PARENT_ONCE[agent])
    assert seen["code"] == 0, seen["out"] + seen["err"][-2000:]
    (item,) = seen["report"].items
    assert item.status == "resolved" and item.attempts == 2
    (earlier,) = item.earlier
    assert earlier.error is not None and earlier.error.startswith("provider: ")
    assert "in the parent, gave up" in earlier.error
    assert (seen["run"] / "items" / item.item_dir / "attempts" / "1" / "result.json").is_file()
    assert _spent(seen["report"]) == seen["billed"]  # both attempts' tokens, as billed
    assert 1 <= _counted(seen["report"]) <= seen["served"]
    assert seen["report"].provider is not None and seen["report"].provider.items_retried == 1
    _left_nothing(seen)


def test_everything_failing_trips_the_breaker_with_exit_3(
    client: tuple[str, Path], tmp_path: Path
) -> None:
    agent, binary = client
    faults, extra = DOWN[agent]
    seen = run_with_faults(
        tmp_path, agent, binary, faults, "--trials", "4", "--retries", "0",
        "--max-provider-errors", "2", "--concurrency", "1", *extra,
    )  # fmt: skip
    report = seen["report"]
    assert seen["code"] == 3, seen["out"] + seen["err"][-2000:]
    assert report.provider is not None and report.provider.stopped is not None
    assert report.provider.stopped.startswith(
        "provider unreachable: 2 attempts in a row failed with"
    )
    assert len(report.not_started) >= 1 and seen["billed"] == 0
    for item in report.items:
        assert item.status == "error" and item.facts.lost_to_provider, item.facts.error
    assert f"resume with --resume {seen['run']}" in seen["err"]
    if agent == "claude-code":  # its own retry budget, given with --agent-env, was used
        assert report.options.agent_env == {"claude-code": {"CLAUDE_CODE_MAX_RETRIES": "0"}}
        assert all(i.facts.failed_requests == 1 for i in report.items)
    _left_nothing(seen)


def test_the_binary_removed_mid_run_stops_it_with_one_cause(
    claude_code_bin: Path, tmp_path: Path
) -> None:
    """The agent's binary vanishes after the first item: the next items cannot start, the
    breaker stops the run after two of them, exit 3. An item that could not start holds its
    slot until the breaker has counted it, so however fast they fail and however loaded the
    machine, at most four items run: the first, one that may have found the binary a moment
    before it went, and the two that could not start."""
    link = tmp_path / "bin" / "claude"
    link.parent.mkdir()
    link.symlink_to(claude_code_bin)

    def remove_after_first(runs: Path) -> None:
        def watch() -> None:
            deadline = time.monotonic() + RUN_TIMEOUT_S
            while not list(runs.glob("*/items/*/result.json")) and time.monotonic() < deadline:
                time.sleep(0.05)
            link.unlink()

        threading.Thread(target=watch, daemon=True).start()

    seen = run_with_faults(
        tmp_path, "claude-code", link, "", "--trials", "10", "--concurrency", "1",
        "--max-provider-errors", "2", watch=remove_after_first,
    )  # fmt: skip
    report = seen["report"]
    assert seen["code"] == 3, seen["out"] + seen["err"][-2000:]
    errors = [i.facts.error or "" for i in report.items if i.status == "error"]
    # Every item that looked for the binary after it was gone could not start (one that
    # had found it a moment before may have failed otherwise).
    gone = [e for e in errors if e.startswith("agent could not start: ")]
    assert len(gone) >= 2, errors
    assert report.provider is not None and (report.provider.stopped or "").startswith(
        "agent unusable: 2 attempts in a row could not start"
    ), (report.provider, errors)
    assert len(report.items) <= 4 and len(report.not_started) >= 6, [
        (i.key, i.status, i.facts.error) for i in report.items
    ]
    _left_nothing(seen)


def test_prime_agent_gets_past_a_529_on_every_childs_first_request(
    prime_agent_bin: Path, tmp_path: Path
) -> None:
    """The user's own prime-agent CLI (``$PRIME_AGENT_BIN``; skipped without one): every
    scripted behaviour while each child's first request gets 529: the same verdicts, the
    faults counted no more than served, tokens within the bill."""
    done = subprocess.run(
        [sys.executable, "-m", "harness", "selftest", "--agent-bin", str(prime_agent_bin),
         "--fixture", str(TINY), "--runs-dir", str(tmp_path / "runs"),
         "--faults", "overloaded,scope=children,first=1"],
        cwd=REPO, capture_output=True, text=True, timeout=RUN_TIMEOUT_S * 2, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert " served" in done.stdout
