"""Whether an edit fixture's hidden checks decide anything: each shard's must fail on the
fixture as shipped and pass on the honest solution (every shard's ``solution`` applied).

A fixture failing either is refused, the shard named: checks that pass shipped would score a
child that changed nothing as resolved, and checks that fail on the honest change would score
every honest run unresolved. It runs the checks the way an item's are run
(:func:`harness.item.checks.run_checks`), twice: two processes per edit fixture, so it is not
part of loading a fixture (``load_fixture`` runs for every listing, plan and item). It runs in
``fixtures validate`` and in the generator's ``--check``, where a fixture is made or changed.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Protocol

from harness.fixtures import MANIFEST_NAME, Fixture, FixtureProblem
from harness.fixtures.layout import WHOLE
from harness.item.checks import run_checks as checks_runner
from scorers.records import ShardChecks
from scorers.types import Manifest

#: The checks of one tree: a fixture's are unit tests of a few functions, a second or so for a
#: hundred shards; a minute means something hangs, and the runner cuts it there.
VERIFY_LIMIT_S = 60.0


class _ChecksRun(Protocol):
    @property
    def shards(self) -> tuple[ShardChecks, ...]: ...
    @property
    def error(self) -> str | None: ...


class _RunChecks(Protocol):
    def __call__(
        self,
        fixture_dir: Path,
        manifest: Manifest,
        final_repo: Path | None,
        work_dir: Path,
        limit_s: float,
    ) -> _ChecksRun: ...


def apply_solutions(fixture: Fixture, dest: Path, reverse: bool = False) -> list[FixtureProblem]:
    """Write every declared file of ``fixture`` into ``dest`` with every shard's solution
    applied, in manifest order (or ``reverse``); a problem for each replacement whose
    ``old`` is not found exactly once when its turn comes."""
    manifest, problems = fixture.manifest, []
    texts = {p: (fixture.path / p).read_text(encoding="utf-8") for p in manifest.editable}
    order = list(enumerate(manifest.shards))
    for i, shard in reversed(order) if reverse else order:
        for k, rep in enumerate(shard.solution):
            count = texts[rep.path].count(rep.old)
            if count != 1:
                after = " after the other shards' solutions" if count else ""
                problems.append(
                    FixtureProblem(
                        fixture.path / MANIFEST_NAME,
                        f"shards[{i}].solution[{k}].old",
                        f"{shard.file}: occurs {count} times in {rep.path}{after}; "
                        "each shard's solution must apply in any order",
                    )
                )
                continue
            texts[rep.path] = texts[rep.path].replace(rep.old, rep.new)
    for rel, text in texts.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_text(text, encoding="utf-8")
    return problems


def verify_checks(
    fixture: Fixture, limit_s: float = VERIFY_LIMIT_S, run_checks: _RunChecks | None = None
) -> list[FixtureProblem]:
    """Every shard of an edit ``fixture`` whose checks pass as shipped or fail on the honest
    solution, named (none for a read fixture). ``run_checks``: the runner (tests)."""
    manifest = fixture.manifest
    if manifest.kind != "edit":
        return []
    run: _RunChecks = run_checks or checks_runner
    with tempfile.TemporaryDirectory(prefix="swh-verify-") as tmp:
        work = Path(tmp)
        problems = apply_solutions(fixture, work / "solved")
        forward = {p: (work / "solved" / p).read_bytes() for p in manifest.editable}
        problems += apply_solutions(fixture, work / "reversed", reverse=True)
        if not problems and any(
            (work / "reversed" / p).read_bytes() != data for p, data in forward.items()
        ):
            message = "the shards' solutions give different files in another order"
            problems.append(FixtureProblem(fixture.path / MANIFEST_NAME, WHOLE, message))
        if problems:
            return problems
        shipped = run(fixture.path, manifest, None, work / "shipped", limit_s)
        honest = run(fixture.path, manifest, work / "solved", work / "honest", limit_s)
    return _judge(fixture, shipped, passing=False) + _judge(fixture, honest, passing=True)


def _judge(fixture: Fixture, run: _ChecksRun, passing: bool) -> list[FixtureProblem]:
    """A problem for each shard whose outcome on this tree is not the one it must have."""
    where = fixture.path / MANIFEST_NAME
    state = "the honest solution" if passing else "the fixture as shipped"
    if run.error is not None:
        return [FixtureProblem(where, WHOLE, f"the checks could not run on {state}: {run.error}")]
    outcomes = {c.shard: c for c in run.shards}
    problems = []
    for i, shard in enumerate(fixture.manifest.shards):
        got = outcomes.get(shard.file)
        if got is None:
            message = f"{shard.file}: the runner gave no outcome for its checks on {state}"
        elif passing and got.outcome != "passed":
            message = f"{shard.file}: its checks are {got.outcome} on {state}{_last(got.tail)}"
        elif not passing and got.outcome == "passed":
            message = f"{shard.file}: its checks pass on {state}; they must fail until its change"
        else:
            continue
        problems.append(FixtureProblem(where, f"shards[{i}].checks", message))
    return problems


def _last(tail: str) -> str:
    lines = [line for line in tail.splitlines() if line.strip()]
    return f" ({lines[-1].strip()[:200]})" if lines else ""
