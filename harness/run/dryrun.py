"""``run --dry-run``: the plan and the pre-flight checks, with nothing launched or written."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from harness.errors import EXIT_INFRA, EXIT_RESOLVED, HarnessError
from harness.item.processes import run_quick
from harness.plan import RunConfig, build_plan, effective_models, load_fixtures

#: ``prime-agent --version`` answers at once; a binary that takes longer is not what we want.
VERSION_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class DryRun:
    items: tuple[str, ...]
    agent: str
    agent_command: str
    agent_version: str | None
    models: tuple[str, ...]
    results_dir: str
    checks: tuple[Check, ...]

    @property
    def exit_code(self) -> int:
        return EXIT_RESOLVED if all(c.ok for c in self.checks) else EXIT_INFRA

    def lines(self) -> list[str]:
        out = [
            f"agent:   {self.agent} ({self.agent_command}"
            + (f", {self.agent_version})" if self.agent_version else ")"),
            f"models:  {', '.join(self.models)}",
            f"results: {self.results_dir}",
            f"items:   {len(self.items)}",
            *(f"  {key}" for key in self.items),
            "checks:",
            *(f"  {'ok  ' if c.ok else 'FAIL'} {c.name}: {c.detail}" for c in self.checks),
        ]
        verdict = "ready to run" if self.exit_code == 0 else "NOT ready: fix the failed checks"
        return [*out, f"dry run: nothing launched; {verdict}"]


def _version(argv: list[str]) -> tuple[str | None, str | None]:
    """(version text, error) of ``argv --version``."""
    try:
        done = run_quick(
            [*argv, "--version"], env=dict(os.environ), cwd=Path.cwd(), timeout_s=VERSION_TIMEOUT_S
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    text = (done.stdout or done.stderr).decode(errors="replace").strip().splitlines()
    return (text[0][:120] if text else None), None


def dry_run(config: RunConfig, resume: Path | None = None) -> DryRun:
    """The run's plan and checks; raises for what a real run would refuse (exit 2)."""
    config.validate()
    fixtures = load_fixtures(config)
    models = effective_models(config)
    plan = build_plan(fixtures, models, config.trials)
    checks: list[Check] = []
    version: str | None = None
    if config.agent.simulated:
        command = " ".join(config.agent.resolve_command()[-1:])
    else:
        try:
            argv = config.agent.resolve_command()
            command = argv[0]
            version, error = _version(argv)
            detail = version or f"`{command} --version` failed ({error})"
            checks.append(Check("agent binary", error is None, detail))
        except HarnessError as exc:
            command = str(config.agent.binary)
            checks.append(Check("agent binary", False, str(exc)))
    checks += [Check(name, ok, detail) for name, ok, detail in config.agent.preflight(os.environ)]
    where = resume if resume is not None else config.runs_dir / "<new run id>"
    return DryRun(
        items=tuple(w.key for w in plan),
        agent=config.agent.label(),
        agent_command=command,
        agent_version=version,
        models=models,
        results_dir=str(where),
        checks=tuple(checks),
    )
