"""The steps of the GitHub Action (``action.yml`` at the repository root), as phases a
test runs locally with a fake ``GITHUB_*`` environment.

``prepare`` turns the inputs into the paths and cache keys the cache steps need; ``run``
gets the agents' clients, runs the harness, writes the JUnit file beside the report, the
job summary and the step outputs, and records the harness's exit code (it exits 0 itself,
so the cache and upload steps still run); ``finish`` points the summary at the uploaded
report and exits with the harness's code.

The action passes its inputs as ``INPUT_*`` variables (``INPUT_AGENT_BIN`` for
``agent-bin``); lists (agents, fixtures, models, ``fail-on``) are separated by whitespace.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import click

from harness import __version__
from harness.errors import HarnessError
from harness.model.report import RunReport, load_report
from harness.report.job_summary import render_job_summary
from harness.report.junit import render_junit
from harness.runs.catalog import latest_run

#: What ``agent-bin`` says to get a pinned client with ``agents install`` instead of a path.
INSTALL = "install"
#: The JUnit file's name in the run directory (uploaded with report.html and report.json).
JUNIT_FILE = "junit.xml"
#: Lines of the harness's stderr the summary quotes when it wrote no report: enough for
#: the error and what led to it, short enough for a summary.
STDERR_TAIL_LINES = 15


def _inputs(env: Mapping[str, str], name: str) -> list[str]:
    """A list input: whitespace-separated words (agent options hold commas, never spaces)."""
    return env.get(f"INPUT_{name}", "").split()


def _input(env: Mapping[str, str], name: str) -> str:
    return env.get(f"INPUT_{name}", "").strip()


def _temp(env: Mapping[str, str]) -> Path:
    return Path(env.get("RUNNER_TEMP") or "/tmp") / "swarm-harness"


def _append(env: Mapping[str, str], variable: str, text: str) -> None:
    """Append to the file a ``GITHUB_*`` variable names (stdout when unset: a local run)."""
    target = env.get(variable)
    if not target:
        sys.stdout.write(text)
        return
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(text)


def set_outputs(env: Mapping[str, str], outputs: Mapping[str, str]) -> None:
    """Write step outputs to ``$GITHUB_OUTPUT`` (values are single lines here)."""
    _append(env, "GITHUB_OUTPUT", "".join(f"{k}={v}\n" for k, v in outputs.items()))


@dataclass(frozen=True)
class Paths:
    """Where the action keeps its runs and the restored baseline runs, and the clients dir
    ``agents install`` uses, with the cache keys for each."""

    runs_dir: Path
    baseline_runs_dir: Path
    clients_dir: Path
    clients_key: str
    runs_key: str
    baseline_prefix: str

    def outputs(self) -> dict[str, str]:
        return {
            "runs-dir": str(self.runs_dir),
            "baseline-runs-dir": str(self.baseline_runs_dir),
            "clients-dir": str(self.clients_dir),
            "clients-key": self.clients_key,
            "runs-key": self.runs_key,
            "baseline-prefix": self.baseline_prefix,
        }


def _runs_key_prefix(env: Mapping[str, str], branch: str) -> str:
    return f"swarm-harness-runs-{env.get('RUNNER_OS', 'local')}-{branch}-"


def prepare(env: Mapping[str, str]) -> Paths:
    """The paths and cache keys of this job (the clients' key names the harness version and
    the agents, whose pinned clients are installed in versioned dirs)."""
    runs_dir = Path(_input(env, "RUNS_DIR") or _temp(env) / "runs")
    cache_home = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", "~")) / ".cache")
    agents = "-".join(sorted({a.split(":")[0] for a in _inputs(env, "AGENT")})) or "none"
    os_name = env.get("RUNNER_OS", "local")
    branch = env.get("GITHUB_REF_NAME", "local")
    run = f"{env.get('GITHUB_RUN_ID', '0')}-{env.get('GITHUB_RUN_ATTEMPT', '1')}"
    baseline_branch = _input(env, "BASELINE_BRANCH")
    return Paths(
        runs_dir=runs_dir.absolute(),
        baseline_runs_dir=(_temp(env) / "baseline-runs").absolute(),
        clients_dir=Path(cache_home) / "swarm-harness",
        clients_key=f"swarm-harness-clients-{os_name}-{__version__}-{agents}",
        runs_key=_runs_key_prefix(env, branch) + run,
        baseline_prefix=_runs_key_prefix(env, baseline_branch) if baseline_branch else "",
    )


def _harness(*args: str) -> list[str]:
    return [sys.executable, "-m", "harness", *args]


def _agent_bins(env: Mapping[str, str], agents: list[str]) -> list[str]:
    """``--agent-bin`` values: paths as given, and ``install`` (for every agent, or
    ``AGENT=install`` for one) replaced by the client ``agents install`` prints."""
    given = _inputs(env, "AGENT_BIN")
    names = [a.split(":")[0] for a in agents]
    if given == [INSTALL]:
        given = [f"{n}={INSTALL}" for n in dict.fromkeys(names) if n != "sim"]
        if len(names) == 1 and given:
            given = [INSTALL]
    bins = []
    for value in given:
        agent, sep, path = value.rpartition("=")
        if path != INSTALL:
            bins.append(value)
            continue
        name = agent if sep else names[0]
        done = subprocess.run(
            _harness("agents", "install", name), stdout=subprocess.PIPE, text=True, env=env
        )
        if done.returncode != 0:
            raise HarnessError(f"agents install {name} exited {done.returncode}")
        client = done.stdout.strip().splitlines()[-1]
        bins.append(f"{agent}={client}" if sep else client)
    return bins


def _baseline(env: Mapping[str, str], paths: Paths) -> tuple[str | None, str | None]:
    """The ``--compare-baseline`` value (None: no comparison) and a warning to show when a
    baseline was asked for and none is there."""
    given = _input(env, "BASELINE")
    if given:
        return given, None
    branch = _input(env, "BASELINE_BRANCH")
    if not branch:
        return None, None
    try:
        return str(latest_run(paths.baseline_runs_dir, for_comparison=True)), None
    except HarnessError:
        return None, f"no cached run of branch {branch}: this run has no baseline"


def run_argv(env: Mapping[str, str], paths: Paths, baseline: str | None) -> list[str]:
    """The ``run`` command the inputs describe."""
    agents = _inputs(env, "AGENT")
    argv = _harness("run", "--json", "--runs-dir", str(paths.runs_dir))
    for option, values in (
        ("--fixture", _inputs(env, "FIXTURES")),
        ("--agent", agents),
        ("--agent-bin", _agent_bins(env, agents)),
        ("--model", _inputs(env, "MODEL")),
        ("--fail-on", _inputs(env, "FAIL_ON")),
    ):
        for value in values:
            argv += [option, value]
    for option, name in (
        ("--trials", "TRIALS"),
        ("--max-cost", "MAX_COST"),
        ("--max-tokens", "MAX_TOKENS"),
    ):
        if _input(env, name):
            argv += [option, _input(env, name)]
    if baseline is not None:
        argv += ["--compare-baseline", baseline]
    return argv + shlex.split(_input(env, "ARGS"))


def _run_harness(argv: list[str], env: Mapping[str, str], out: Path) -> tuple[int, list[str]]:
    """Run the harness with its stderr shown as it comes (the job's log) and its stdout
    (report.json, with ``--json``) in ``out``; its exit code and the last stderr lines."""
    tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
    workdir = _input(env, "WORKING_DIRECTORY") or None
    with out.open("w", encoding="utf-8") as stdout:
        proc = subprocess.Popen(
            argv, stdout=stdout, stderr=subprocess.PIPE, text=True, env=env, cwd=workdir
        )
        assert proc.stderr is not None
        for line in proc.stderr:
            sys.stderr.write(line)
            tail.append(line.rstrip("\n"))
        code = proc.wait()
    return code, list(tail)


def _run_dir(paths: Paths, out: Path) -> Path | None:
    try:
        run_id = json.loads(out.read_text(encoding="utf-8"))["run_id"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    found = paths.runs_dir / str(run_id)
    return found if found.is_dir() else None


def report_outputs(report: RunReport, run_dir: Path, code: int) -> dict[str, str]:
    """The action's outputs for a run that wrote its report."""
    cmp = report.comparison
    cost = cmp.cost if cmp is not None else None
    return {
        "exit-code": str(code),
        "resolved": "true" if report.resolved else "false",
        "verdict": cmp.overall.verdict if cmp is not None else "",
        "cost-verdict": cost.overall.verdict if cost is not None else "",
        "gate": "" if cmp is None else ("passes" if cmp.gate.passed else "fails"),
        "run-id": report.run_id,
        "run-dir": str(run_dir),
        "report-html": str(run_dir / "report.html"),
        "report-json": str(run_dir / "report.json"),
        "junit": str(run_dir / JUNIT_FILE),
    }


def _pointer(env: Mapping[str, str], artifact: str) -> str:
    server, repo, run = (
        env.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    )
    where = f"[this run's artifacts]({server}/{repo}/actions/runs/{run}#artifacts)"
    return f"`report.html` in the artifact `{artifact}` ({where if server and repo and run else 'this run'})"


def run(env: Mapping[str, str]) -> int:
    """Run the harness as the inputs say; write the JUnit file, the summary and the
    outputs; the harness's exit code."""
    paths = prepare(env)
    paths.runs_dir.mkdir(parents=True, exist_ok=True)
    baseline, warning = _baseline(env, paths)
    if warning:
        print(f"::warning title=swarm-harness::{warning}", flush=True)
        _append(env, "GITHUB_STEP_SUMMARY", f"> {warning}\n\n")
    argv = run_argv(env, paths, baseline)
    print("::group::" + shlex.join(["swarm-harness", *argv[3:]]), flush=True)
    code, tail = _run_harness(argv, env, _temp(env) / "report-stdout.json")
    print("::endgroup::", flush=True)
    run_dir = _run_dir(paths, _temp(env) / "report-stdout.json")
    if run_dir is None:
        set_outputs(env, {"exit-code": str(code), "resolved": "false"})
        quoted = "\n".join(tail)
        _append(
            env,
            "GITHUB_STEP_SUMMARY",
            f"### swarm-harness (exit {code})\n\nThe harness wrote no report:\n\n"
            f"```\n{quoted}\n```\n",
        )
        return code
    report = load_report(run_dir)
    (run_dir / JUNIT_FILE).write_text(render_junit(report), encoding="utf-8")
    artifact = _input(env, "ARTIFACT_NAME") or f"swarm-harness-{report.run_id}"
    _append(env, "GITHUB_STEP_SUMMARY", render_job_summary(report, code, _pointer(env, artifact)))
    set_outputs(env, report_outputs(report, run_dir, code) | {"artifact-name": artifact})
    return code


def finish(env: Mapping[str, str]) -> int:
    """Link the uploaded artifact from the summary; the harness's exit code."""
    url = env.get("ARTIFACT_URL", "")
    if url:
        _append(env, "GITHUB_STEP_SUMMARY", f"Download the report: [{url}]({url})\n")
    code = env.get("EXIT_CODE", "")
    return int(code) if code.isdigit() else 3


@click.command()
@click.argument("phase", type=click.Choice(["prepare", "run", "finish"]))
def main(phase: str) -> None:
    """Run one PHASE of the GitHub Action (action.yml) with the inputs in INPUT_*."""
    env = dict(os.environ)
    if phase == "prepare":
        set_outputs(env, prepare(env).outputs())
        return
    try:
        code = run(env) if phase == "run" else finish(env)
    except HarnessError as exc:
        raise click.ClickException(str(exc)) from exc
    # The run step succeeds whatever the harness said, so the cache and upload steps run;
    # the finish step exits with the code it recorded.
    sys.exit(0 if phase == "run" else code)


if __name__ == "__main__":
    main()
