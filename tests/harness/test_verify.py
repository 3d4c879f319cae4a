"""harness.item.verify: an edit fixture whose hidden checks pass as shipped or fail on the
honest solution is refused, the shard named.

The outcomes come from a recorded runner (the interface of ``harness.item.checks``) so that
each verdict is pinned; the last tests use the real runner once it is importable.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from harness.fixtures import FIXTURES_ROOT, load_fixture
from harness.item.verify import apply_solutions, verify_checks
from scorers.records import ShardChecks
from scorers.types import Manifest

HELD_OUT = Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny-edit"
SHARDS = ("shipping.md", "tax.md", "discount.md")


@dataclass(frozen=True)
class Run:
    shards: tuple[ShardChecks, ...]
    error: str | None = None


@dataclass
class Recorded:
    """A runner giving each shard ``shipped`` / ``honest`` outcomes and recording its calls."""

    shipped: dict[str, str] = field(default_factory=lambda: dict.fromkeys(SHARDS, "failed"))
    honest: dict[str, str] = field(default_factory=lambda: dict.fromkeys(SHARDS, "passed"))
    error: str | None = None
    trees: list[dict[str, str] | None] = field(default_factory=list)

    def __call__(
        self,
        fixture_dir: Path,
        manifest: Manifest,
        final_repo: Path | None,
        work_dir: Path,
        limit_s: float,
    ) -> Run:
        self.trees.append(
            None
            if final_repo is None
            else {p: (final_repo / p).read_text() for p in manifest.editable}
        )
        outcomes = self.shipped if final_repo is None else self.honest
        shards = tuple(
            ShardChecks(s, o, tail="Traceback\nAssertionError: 60 != 45\n")  # type: ignore[arg-type]
            for s, o in outcomes.items()
        )
        return Run(shards, self.error)


@pytest.fixture
def smoke(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURES_ROOT / "edit-smoke", tmp_path / "smoke"))


def test_a_good_fixture_passes_and_the_checks_see_both_trees(smoke: Path) -> None:
    runner = Recorded()
    assert verify_checks(load_fixture(smoke), run_checks=runner) == []
    shipped, honest = runner.trees
    assert shipped is None  # the fixture as shipped
    assert honest is not None and "FREE_FROM = 45" in honest["shop/shipping.py"]
    for line in (
        "- Orders from 45 euros ship free.",
        "- Tax is rounded half up to the cent, no longer down.",
        "- Discount code LOYAL15: 15 percent off.",
    ):
        assert line in honest["CHANGELOG.md"]


@pytest.mark.parametrize(
    ("runner", "field", "message"),
    [
        pytest.param(
            Recorded(
                shipped={"shipping.md": "failed", "tax.md": "passed", "discount.md": "failed"}
            ),
            "shards[1].checks",
            "tax.md: its checks pass on the fixture as shipped",
            id="passes-shipped",
        ),
        pytest.param(
            Recorded(honest={"shipping.md": "passed", "tax.md": "passed", "discount.md": "failed"}),
            "shards[2].checks",
            "discount.md: its checks are failed on the honest solution (AssertionError: 60 != 45)",
            id="fails-on-the-solution",
        ),
        pytest.param(
            Recorded(
                honest={"shipping.md": "timed out", "tax.md": "passed", "discount.md": "passed"}
            ),
            "shards[0].checks",
            "shipping.md: its checks are timed out on the honest solution",
            id="times-out-on-the-solution",
        ),
        pytest.param(
            Recorded(honest={"shipping.md": "passed", "tax.md": "passed"}),
            "shards[2].checks",
            "discount.md: the runner gave no outcome for its checks on the honest solution",
            id="no-outcome",
        ),
        pytest.param(
            Recorded(error="python not found"),
            "$",
            "the checks could not run on the fixture as shipped: python not found",
            id="runner-error",
        ),
    ],
)
def test_a_shard_whose_checks_do_not_decide_is_named(
    smoke: Path, runner: Recorded, field: str, message: str
) -> None:
    problems = verify_checks(load_fixture(smoke), run_checks=runner)
    assert [(p.file, p.field) for p in problems][:1] == [(smoke / "fixture.json", field)]
    assert problems[0].message.startswith(message), problems[0].message


def test_solutions_that_depend_on_their_order_are_refused_before_any_run(smoke: Path) -> None:
    """discount's changelog replacement swallows the Changed heading that shipping's needs:
    forward it applies, backward shipping's old is gone."""
    data = json.loads((smoke / "fixture.json").read_text())
    data["shards"][2]["solution"][1] = {
        "path": "CHANGELOG.md",
        "old": "### Added\n\n### Changed\n",
        "new": "### Added\n\n- Discount code LOYAL15: 15 percent off.\n\n### Changes\n",
    }
    (smoke / "fixture.json").write_text(json.dumps(data))
    runner = Recorded()
    problems = verify_checks(load_fixture(smoke), run_checks=runner)
    assert [p.field for p in problems] == ["shards[0].solution[1].old"]
    assert "shipping.md: occurs 0 times in CHANGELOG.md" in problems[0].message
    assert runner.trees == []  # refused before a process


def test_apply_solutions_writes_only_the_declared_files(smoke: Path, tmp_path: Path) -> None:
    fixture = load_fixture(smoke)
    assert apply_solutions(fixture, tmp_path / "out") == []
    written = sorted(
        p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.*")
    )
    assert written == sorted(fixture.manifest.editable)
    assert "(net_cents * RATES" in (tmp_path / "out" / "shop" / "tax.py").read_text()


def test_a_read_fixture_has_nothing_to_verify() -> None:
    runner = Recorded()
    assert verify_checks(load_fixture(FIXTURES_ROOT / "smoke-orders"), run_checks=runner) == []
    assert runner.trees == []


# --- with the real runner (harness.item.checks) ------------------------------------------


@pytest.mark.slow  # runs the checks: two processes per fixture
@pytest.mark.parametrize(
    "path", [FIXTURES_ROOT / "edit-smoke", HELD_OUT], ids=["edit-smoke", "held-out"]
)
def test_the_real_checks_decide(path: Path) -> None:
    assert verify_checks(load_fixture(path)) == []


@pytest.mark.slow
def test_the_real_checks_name_a_shard_whose_solution_does_nothing(smoke: Path) -> None:
    data = json.loads((smoke / "fixture.json").read_text())
    data["shards"][0]["solution"][0]["new"] = "FREE_FROM = 60"  # the "fix" changes nothing
    (smoke / "fixture.json").write_text(json.dumps(data))
    (smoke / "checks" / "test_tax.py").write_text(
        "import unittest\n\n\nclass Nothing(unittest.TestCase):\n"
        "    def test_nothing(self):\n        pass\n"
    )
    problems = verify_checks(load_fixture(smoke))
    assert [p.field for p in problems] == ["shards[1].checks", "shards[0].checks"]
    assert problems[0].message.startswith("tax.md: its checks pass on the fixture as shipped")
    assert problems[1].message.startswith("shipping.md: its checks are failed on the honest")


@pytest.mark.slow
def test_a_run_of_a_fixture_whose_checks_decide_nothing_is_refused_before_anything_runs(
    smoke: Path, tmp_path: Path
) -> None:
    """``run`` (and its ``--dry-run``) refuse it with the shard named, exit 2, no run dir."""
    import subprocess
    import sys

    (smoke / "checks" / "test_tax.py").write_text(
        "import unittest\n\n\nclass Nothing(unittest.TestCase):\n"
        "    def test_nothing(self):\n        pass\n"
    )
    runs = tmp_path / "runs"
    for extra in ([], ["--dry-run"]):
        done = subprocess.run(
            [sys.executable, "-m", "harness", "run", "--fixture", str(smoke), "--agent", "sim",
             "--model", "sim/honest", "--runs-dir", str(runs), *extra],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert "shards[1].checks: tax.md: its checks pass on the fixture as shipped" in done.stderr
        assert not runs.exists()
