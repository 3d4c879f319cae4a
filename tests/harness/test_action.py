"""The GitHub Action (action.yml) runs its own steps here: each ``run:`` step in bash, as the
runner would, with a fake ``GITHUB_*`` environment and the sim; the ``uses:`` steps are
played by stand-ins (the cache keeps copies under the test's dir, the upload checks its
files and gives a URL). A pull request's job restores the base branch's cached run as its
baseline, fails the gate and exits 1 with the summary and outputs that say why."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
ARTIFACT_URL = "https://github.example/acme/agent/actions/runs/77/artifacts/1"

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


@dataclass
class Job:
    """One job's runner: its temp dir, environment and the outputs of its steps."""

    root: Path
    branch: str
    cache: Path
    steps: dict[str, dict[str, str]] = field(default_factory=dict)
    uploaded: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        for sub in ("temp", "home", "workspace"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self.summary = self.root / "summary.md"
        self.summary.touch()

    def env(self, extra: dict[str, str]) -> dict[str, str]:
        base = {
            k: v for k, v in os.environ.items() if not k.startswith(("SWARM_HARNESS_", "INPUT_"))
        }
        base.pop("VIRTUAL_ENV", None)
        return base | {
            "HOME": str(self.root / "home"),
            "RUNNER_TEMP": str(self.root / "temp"),
            "RUNNER_OS": "Linux",
            "GITHUB_ACTION_PATH": str(REPO),
            "GITHUB_WORKSPACE": str(self.root / "workspace"),
            "GITHUB_STEP_SUMMARY": str(self.summary),
            "GITHUB_REF_NAME": self.branch,
            "GITHUB_RUN_ID": "77",
            "GITHUB_RUN_ATTEMPT": "1",
            "GITHUB_JOB": "eval",
            "GITHUB_SERVER_URL": "https://github.example",
            "GITHUB_REPOSITORY": "acme/agent",
            **extra,
        }

    def context(self, inputs: dict[str, str]) -> dict[str, Any]:
        defaults = {k: str(v.get("default", "")) for k, v in ACTION["inputs"].items()}
        return {
            "inputs": defaults | inputs,
            "steps": {k: {"outputs": v} for k, v in self.steps.items()},
            "github": {"action_path": str(REPO)},
            "runner": {"temp": str(self.root / "temp"), "os": "Linux"},
        }


def _lookup(path: str, context: dict[str, Any]) -> str:
    value: Any = context
    for part in path.split("."):
        value = value.get(part, "") if isinstance(value, dict) else ""
    return str(value)


def expand(text: str, context: dict[str, Any]) -> str:
    """``${{ a.b.c }}`` references, the only expressions the action's values use."""
    return EXPRESSION.sub(lambda m: _lookup(m.group(1), context), text)


def condition(text: str, context: dict[str, Any]) -> bool:
    """The action's ``if:``s: ``!cancelled()`` and comparisons with a literal, joined by
    ``&&``."""
    for term in EXPRESSION.sub(r"\1", text).split("&&"):
        term = term.strip()
        if term == "!cancelled()":
            continue
        match = re.fullmatch(r"(\S+) (!=|==) '(.*)'", term)
        assert match, f"an if: the stand-in runner cannot read: {term}"
        left, op, literal = match.groups()
        if (_lookup(left, context) == literal) != (op == "=="):
            return False
    return True


def _outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def _uses(job: Job, step: dict[str, Any], context: dict[str, Any]) -> dict[str, str]:
    """The stand-ins of the actions the action uses."""
    action = step["uses"].split("@")[0]
    with_ = {k: expand(str(v), context) for k, v in step.get("with", {}).items()}
    if action == "astral-sh/setup-uv":
        assert shutil.which("uv"), "uv is on PATH as setup-uv leaves it"
        return {}
    if action == "actions/cache/restore":
        exact = job.cache / with_["key"]
        found = exact if exact.is_dir() else None
        prefix = with_.get("restore-keys", "")
        if found is None and prefix:
            hits = sorted(p for p in job.cache.glob("*") if p.name.startswith(prefix))
            found = hits[-1] if hits else None
        if found is not None:
            shutil.copytree(found, with_["path"], dirs_exist_ok=True)
        return {"cache-hit": "true" if found == exact else ""}
    if action == "actions/cache/save":
        if Path(with_["path"]).is_dir():
            shutil.copytree(with_["path"], job.cache / with_["key"])
        return {}
    if action == "actions/upload-artifact":
        job.uploaded = [Path(p) for p in with_["path"].split()]
        assert with_["name"] and all(p.is_file() for p in job.uploaded), job.uploaded
        return {"artifact-url": ARTIFACT_URL}
    raise AssertionError(f"no stand-in for {action}")


def run_action(job: Job, inputs: dict[str, str]) -> int:
    """Every step of the action in order; the exit code of the first that fails (else 0)."""
    for step in ACTION["runs"]["steps"]:
        context = job.context(inputs)
        if "if" in step and not condition(step["if"], context):
            continue
        if "uses" in step:
            outputs = _uses(job, step, context)
        else:
            output = job.root / "output"
            output.write_text("")
            assert step["shell"] == "bash"
            env = {k: expand(str(v), context) for k, v in step.get("env", {}).items()}
            done = subprocess.run(
                ["bash", "-e", "-c", step["run"]],
                env=job.env(env | {"GITHUB_OUTPUT": str(output)}),
                cwd=job.root / "workspace",
                timeout=300,
            )
            if done.returncode != 0:
                return done.returncode
            outputs = _outputs(output)
        if "id" in step:
            job.steps[step["id"]] = outputs
    return 0


def action_outputs(job: Job) -> dict[str, str]:
    context = job.context({})
    return {k: expand(v["value"], context) for k, v in ACTION["outputs"].items()}


def test_a_pull_request_gated_against_the_base_branchs_cached_run(tmp_path: Path) -> None:
    """The base branch's job cached its run (made here by the harness itself, into the
    cache stand-in under the key the action saves); the pull request's job restores it,
    runs a worse agent, fails the gate and caches its own run."""
    cache = tmp_path / "cache"
    saved = cache / "swarm-harness-runs-Linux-main-41-1"
    common = ["--fixture", "smoke-orders", "--trials", "2"]
    base = [sys.executable, "-m", "harness", "run", "--agent", "sim", *common]
    subprocess.run([*base, "--runs-dir", str(saved)], check=True, capture_output=True, timeout=120)

    pr = Job(tmp_path / "pr", "7/merge", cache)
    inputs = {"agent": "sim:no-spawn", "fixtures": "smoke-orders", "trials": "2"}
    inputs |= {"baseline-branch": "main", "fail-on": "regression cost"}
    assert run_action(pr, inputs) == 1
    out = action_outputs(pr)
    run_dir = Path(out["run-dir"])
    assert (out["exit-code"], out["verdict"], out["gate"]) == ("1", "regressed", "fails")
    assert (out["resolved"], out["cost-verdict"]) == ("false", "cheaper")
    assert out["artifact-url"] == ARTIFACT_URL and out["junit"] == str(run_dir / "junit.xml")
    assert run_dir.parent == tmp_path / "pr" / "temp" / "swarm-harness" / "runs"
    assert [p.name for p in pr.uploaded] == ["report.html", "report.json", "junit.xml"]
    assert "<failure" in (run_dir / "junit.xml").read_text()
    assert (cache / "swarm-harness-runs-Linux-7/merge-77-1" / run_dir.name).is_dir()
    (baseline,) = [p for p in saved.iterdir() if p.is_dir()]
    summary = pr.summary.read_text()
    assert f"run `{run_dir.name}` (exit 1)" in summary
    assert "**NOT RESOLVED: 2 unresolved of 2 items; vs baseline: regressed" in summary
    assert "| smoke-orders | sim:no-spawn | sim/no-spawn | 0/2 | 0.0% |" in summary
    assert "| regressed | -100.0 pp |" in summary
    assert "Gate (`--fail-on regression`): FAILS" in summary and "- cost: cheaper" in summary
    assert "https://github.example/acme/agent/actions/runs/77#artifacts" in summary
    assert f"Download the report: [{ARTIFACT_URL}]" in summary
    assert baseline.name in (run_dir / "report.md").read_text()


def test_a_run_that_could_not_start_records_exit_2_and_says_why(tmp_path: Path) -> None:
    """The run phase alone (the checkout's harness): no report, so no run dir, and the
    summary quotes the harness's error; the finish phase exits 2."""
    job = Job(tmp_path / "job", "main", tmp_path / "cache")
    output = tmp_path / "output"
    inputs = {"INPUT_AGENT": "sim", "INPUT_FIXTURES": "no-such-fixture"}
    env = job.env(inputs | {"INPUT_BASELINE_BRANCH": "main", "GITHUB_OUTPUT": str(output)})
    action = [sys.executable, "-m", "harness.ci.action"]
    done = subprocess.run([*action, "run"], env=env, cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert _outputs(output) == {"exit-code": "2", "resolved": "false"}
    assert "::warning title=swarm-harness::no cached run of branch main" in done.stdout
    summary = job.summary.read_text()
    assert "no cached run of branch main" in summary
    assert "The harness wrote no report" in summary and "no-such-fixture" in summary
    finish = subprocess.run([*action, "finish"], env=env | {"EXIT_CODE": "2"}, cwd=REPO)
    assert finish.returncode == 2
