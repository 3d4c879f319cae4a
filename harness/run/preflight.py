"""Checks before anything runs, and ``run --dry-run``: the plan and those checks.

A real agent's binary must be there and answer ``--version`` before a run directory is
made: a run that could only error (every item "agent could not start") is refused with one
line saying how to get the agent, and leaves nothing behind. The version check runs the
binary with a private, throw-away HOME, TMPDIR and XDG dirs: some clients create their state
dirs on any start, ``--version`` included, and the user's must stay untouched.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import threading
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.agents.base import AgentAdapter
from harness.errors import EXIT_INFRA, EXIT_RESOLVED, AgentLaunchError, HarnessError, UsageError
from harness.item.leftovers import stamp_dir
from harness.item.processes import run_quick
from harness.plan import (
    RunConfig,
    WorkItem,
    agent_models,
    build_plan,
    effective_models,
    load_fixtures,
    restrict,
    run_conditions,
)
from harness.pricing import PriceTable, find_price, unpriced_models
from harness.run.budget import check_budget_plan

if TYPE_CHECKING:
    from harness.fixtures import Fixture
    from harness.model.report import RunReport

#: A CLI answers ``--version`` at once (Node clients take a second or two on a loaded
#: machine); one that takes longer is not what we want to run.
VERSION_TIMEOUT_S = 20.0
#: What the version check passes on from the caller's environment (finding the binary and
#: its interpreter); everything else, HOME included, is private to the check.
VERSION_ENV_KEEP = ("PATH", "LANG", "LC_ALL", "TERM")
#: How much of a failed ``--version``'s stderr the refusal quotes (its last lines).
STDERR_LINES = 3
STDERR_CHARS = 300


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class AgentCheck:
    """The agent's binary: the command that starts it, its version, and the check."""

    command: str
    version: str | None
    check: Check | None  # None: a stand-in with nothing to check


def _version(argv: list[str]) -> tuple[str | None, str | None]:
    """(first line of ``argv --version``, error), run with private state dirs."""
    scratch = Path(tempfile.mkdtemp(prefix="swh-version-"))
    stamp_dir(scratch)  # removable by the next run, or `clean`, if this one is killed
    env = {k: v for k, v in os.environ.items() if k in VERSION_ENV_KEEP}
    env.update(HOME=str(scratch), TMPDIR=str(scratch))
    env.update(
        {f"XDG_{d}_HOME": str(scratch / d.lower()) for d in ("DATA", "CONFIG", "STATE", "CACHE")}
    )
    try:
        done = run_quick([*argv, "--version"], env=env, cwd=scratch, timeout_s=VERSION_TIMEOUT_S)
    except subprocess.CalledProcessError as exc:
        return None, _failed(exc)
    except subprocess.TimeoutExpired:
        return None, f"no answer in {VERSION_TIMEOUT_S:.0f} s"
    except OSError as exc:
        return None, f"{type(exc).__name__}: {exc}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    text = (done.stdout or done.stderr).decode(errors="replace").strip().splitlines()
    return (text[0][:120] if text else None), None


def _failed(exc: subprocess.CalledProcessError) -> str:
    """Why ``--version`` failed: its exit status, the last lines it wrote on stderr, and
    (since the check ran it with a private HOME) what to do when it needs the caller's."""
    said = (exc.stderr or exc.stdout or b"").decode(errors="replace").strip().splitlines()
    tail = " | ".join(line.strip() for line in said[-STDERR_LINES:] if line.strip())
    status = (
        f"killed by signal {-exc.returncode}"
        if exc.returncode < 0
        else f"exit status {exc.returncode}"
    )
    return (
        f"{status}" + (f": {tail[:STDERR_CHARS]}" if tail else ", nothing on stderr") + "; "
        "the check runs it with a private, empty HOME and TMPDIR (so it never writes into "
        "yours): a wrapper that finds its runtime through $HOME fails there, so give "
        "--agent-bin the executable itself, or a wrapper that does not depend on HOME"
    )


def check_agent(agent: AgentAdapter) -> AgentCheck:
    """Find the agent's binary and ask its version (nothing to check for a stand-in)."""
    if agent.simulated:
        return AgentCheck(" ".join(agent.version_command()[-1:]), None, None)
    try:
        argv = agent.version_command()
    except HarnessError as exc:
        return AgentCheck(str(agent.binary), None, Check("agent binary", False, str(exc)))
    version, error = _version(argv)
    detail = version or f"`{argv[0]} --version` failed ({error})"
    check = Check("agent binary", error is None, detail)
    drive = agent.drive_check() if error is None else None
    if drive is not None and not drive[0]:
        check = Check("agent drive", False, drive[1])
    return AgentCheck(argv[0], version, check)


def require_agent(agent: AgentAdapter) -> AgentCheck:
    """:func:`check_agent`, refusing (one line with the agent's install hint) when the
    binary is missing or does not run."""
    found = check_agent(agent)
    if found.check is not None and not found.check.ok:
        binary = found.check.name == "agent binary"
        hint = f"; {agent.install_hint}" if agent.install_hint and binary else ""
        raise AgentLaunchError(f"{found.check.detail}{hint}")
    return found


def require_credentials(
    agent: AgentAdapter,
    extra_env: Mapping[str, str] | None = None,
    agent_home: Path | None = None,
) -> None:
    """Refuse (one line naming what to set) a real agent whose credentials check fails: its
    every item could only fail to authenticate. ``extra_env`` is what the run adds to the
    items' environment and ``agent_home`` the home they copy from (the selftest's scripted
    endpoint), so a check reads what the items will have, not only the caller's."""
    for name, ok, detail in agent.preflight({**os.environ, **(extra_env or {})}, agent_home):
        if name == "credentials" and not ok:
            raise AgentLaunchError(
                f"{agent.label()} has no credentials ({detail}): set them before a run "
                "(`run --dry-run` lists every check)"
            )


def require_shared_cells(baseline: Path, report: RunReport, plan: Sequence[WorkItem]) -> None:
    """Refuse (exit 2, naming the baseline) a comparison that could only find nothing in
    common: no fixture x agent x model of ``plan`` matches one of the baseline's (its
    ``report``, read from ``baseline``), as the comparison matches them (a baseline of
    another agent *and* model: none)."""
    from harness.model.report import report_path
    from harness.model.text import describe_run
    from harness.stats.compare import cells_of, shared_cells

    cand = {(w.fixture.manifest.name, w.agent.label(), w.model) for w in plan}
    if not plan or shared_cells(cells_of(report.items), cand):
        return
    run = report.as_baseline()
    agents = ", ".join(sorted({c[1] for c in cand}))
    models = ", ".join(sorted({c[2] for c in cand}))
    raise UsageError(
        f"--compare-baseline {report_path(baseline)}: {describe_run(run)} shares no fixture x "
        f"agent x model with this run (agent {agents}, model {models}): nothing to compare; "
        "give a baseline of the same agent or model"
    )


#: How long the pre-run check waits for a connection to an agent's endpoint (name
#: resolution included): long enough for a slow network, short beside a client's own retries
#: (Claude Code's take minutes against an endpoint nobody can reach).
REACH_TIMEOUT_S = 5.0


def unreachable(
    url: str, timeout_s: float = REACH_TIMEOUT_S, env: Mapping[str, str] | None = None
) -> str | None:
    """Why a TCP connection to ``url``'s host and port cannot be opened (its name does not
    resolve, nothing listens, no answer in time), or None when it opens. Nothing is sent:
    no request, no credentials. Through the proxy ``env`` (the items' environment; default
    the caller's) names, if any."""
    env = os.environ if env is None else env
    parts = urllib.parse.urlsplit(url)
    host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    proxy = env.get(f"{parts.scheme}_proxy") or env.get(f"{parts.scheme.upper()}_PROXY")
    if proxy:
        via = urllib.parse.urlsplit(proxy)
        host, port = via.hostname, via.port or 80
    if not host:
        return f"{url}: no host in it"
    outcome: list[str | None] = []

    def attempt() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                outcome.append(None)
        except socket.gaierror as exc:
            outcome.append(f"its name does not resolve ({host}: {exc.strerror or exc})")
        except ConnectionRefusedError:
            outcome.append(f"connection refused: nothing listens at {host}:{port}")
        except TimeoutError:
            outcome.append(f"no answer from {host}:{port} within {timeout_s:g} s")
        except OSError as exc:
            outcome.append(f"{host}:{port}: {exc.strerror or exc}")

    # Name resolution has no timeout of its own: the check waits in a thread it can leave.
    thread = threading.Thread(target=attempt, name="reach-endpoint", daemon=True)
    thread.start()
    thread.join(timeout_s + 1.0)
    if not outcome:
        return f"no answer from {host} within {timeout_s:g} s (name resolution included)"
    why = outcome[0]
    return None if why is None else (f"{why} (via the proxy {proxy})" if proxy else why)


def endpoint_checks(
    agent: AgentAdapter, env: Mapping[str, str], agent_home: Path | None
) -> list[Check]:
    """Whether each endpoint the agent's items will call can be reached (a connection with
    a short timeout, no credentials sent)."""
    if agent.simulated:
        return []
    urls = agent.endpoints(env, agent_home)
    if not urls:
        return [Check("endpoint reachable", True, "not checked: the client picks its endpoint")]
    checks = []
    for url in urls:
        why = unreachable(url, env=env)
        checks.append(
            Check("endpoint reachable", why is None, url if why is None else f"{url}: {why}")
        )
    return checks


def require_reachable(
    agent: AgentAdapter, extra_env: Mapping[str, str] | None = None, agent_home: Path | None = None
) -> None:
    """Refuse (exit 3, one line) a run whose agent's endpoint cannot be reached: its every
    item could only fail the same way, after the client's own retries (minutes)."""
    for check in endpoint_checks(agent, {**os.environ, **(extra_env or {})}, agent_home):
        if not check.ok:
            raise AgentLaunchError(
                f"{agent.label()}'s endpoint cannot be reached: {check.detail}; fix the network "
                "or the endpoint variable before a run (`run --dry-run` lists every check)"
            )


@dataclass(frozen=True)
class DryRun:
    items: tuple[str, ...]
    #: Per agent, in ``--agent`` order: its label, command, version and models.
    agents: tuple[tuple[str, str, str | None, tuple[str, ...]], ...]
    models: tuple[str, ...]
    results_dir: str
    checks: tuple[Check, ...]
    #: Where each model's price comes from, or that it has none.
    prices: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        return EXIT_RESOLVED if all(c.ok for c in self.checks) else EXIT_INFRA

    def lines(self) -> list[str]:
        several = len(self.agents) > 1
        out = [
            f"agent:   {label} ({command}"
            + (f", {version})" if version else ")")
            + (f": {', '.join(models)}" if several else "")
            for label, command, version, models in self.agents
        ]
        out += [
            f"models:  {', '.join(self.models)}",
            *(f"  price of {line}" for line in self.prices),
            f"results: {self.results_dir}",
            f"items:   {len(self.items)}",
            *(f"  {key}" for key in self.items),
            "checks:",
            *(f"  {'ok  ' if c.ok else 'FAIL'} {c.name}: {c.detail}" for c in self.checks),
        ]
        verdict = "ready to run" if self.exit_code == 0 else "NOT ready: fix the failed checks"
        return [*out, f"dry run: nothing launched; {verdict}"]


def require_verified(fixtures: Sequence[Fixture]) -> None:
    """Refuse a run of an edit fixture whose hidden checks decide nothing: a shard's checks
    that pass on the fixture as shipped, or fail on its honest solution (the first such
    shard named, as ``fixtures validate`` names them all). Two short processes per edit
    fixture: nothing beside a run's minutes, and a wrong verdict on every item otherwise."""
    from harness.item.verify import verify_checks

    for fixture in fixtures:
        problems = verify_checks(fixture)
        if problems:
            raise problems[0].to_error()


def dry_run(config: RunConfig, resume: Path | None = None) -> DryRun:
    """The run's plan and checks; raises for what a real run would refuse (exit 2)."""
    config.validate()
    fixtures = load_fixtures(config)
    require_verified(fixtures)
    models = effective_models(config)
    conditions = agent_models(config)
    plan = restrict(build_plan(fixtures, run_conditions(config), config.trials), config.only_keys)
    if config.baseline is not None:
        from harness.model.report import load_report

        require_shared_cells(config.baseline, load_report(config.baseline), plan)
    checks: list[Check] = []
    agents = []
    for agent, mine in conditions:
        found = check_agent(agent)
        agents.append((agent.label(), found.command, found.version, mine))
        own: list[Check] = [found.check] if found.check is not None else []
        if found.check is not None and not found.check.ok and agent.install_hint:
            own.append(Check("install", False, agent.install_hint))
        env = {**os.environ, **dict(config.extra_env)}
        own += [
            Check(name, ok, detail)
            for name, ok, detail in agent.preflight(env, config.agent_home_source)
        ]
        own += endpoint_checks(agent, env, config.agent_home_source)
        if len(conditions) > 1:  # which agent each check is about
            own = [Check(f"{agent.label()}: {c.name}", c.ok, c.detail) for c in own]
        checks += own
    where = resume if resume is not None else config.runs_dir / "<new run id>"
    if config.max_cost_usd is not None:  # refused as a run would refuse it
        check_budget_plan(
            unpriced_models(models, config.prices), config.max_cost_usd, config.max_tokens
        )
    return DryRun(
        items=tuple(w.key for w in plan),
        agents=tuple(agents),
        models=models,
        results_dir=str(where),
        checks=tuple(checks),
        prices=tuple(_price_line(m, config.prices) for m in models),
    )


def _price_line(model: str, table: PriceTable | None) -> str:
    """``model: $3 / $15 / $0.3 / $3.75 per M tokens (genai-prices 0.2.3: ...)``."""
    found = find_price(model, table)
    if found is None:
        return f"{model}: none known (its cost_usd will be null; --prices FILE gives one)"
    r = found.rates
    rates = " / ".join(
        f"${v.normalize():f}" for v in (r.input, r.output, r.cache_read, r.cache_write)
    )
    return f"{model}: {rates} per M input / output / cache read / cache write ({found.detail})"


__all__ = [
    "AgentLaunchError",
    "Check",
    "DryRun",
    "check_agent",
    "dry_run",
    "require_agent",
    "require_credentials",
]
