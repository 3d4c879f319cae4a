"""``--agent sim:resident`` end to end: the harness's daemon client drives the sim's daemon.

The sim's supervisor speaks the protocol subset of the real CLI's captures and runs each
session in a detached worker; these tests run the harness as a user does (a subprocess,
HOME and TMPDIR of its own) and check what issue 40 asks of the drive: the design's
question answered side by side with the one-shot drive, the deadline, the gate, clean-up
(kill -9 of the harness too), re-scoring and the exports.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_leftovers import _processes_of

from harness.model.report import load_report

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("resident")]

REPO = Path(__file__).resolve().parent.parent.parent
TINY = str(REPO / "tests" / "data" / "fixtures" / "tiny")


def _harness(tmp_path: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(tmp)}
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


def _run_dir(runs: Path) -> Path:
    return next(d for d in sorted(runs.iterdir()) if d.is_dir() and not d.is_symlink())


def _items(run: Path) -> dict[str, tuple[dict, dict]]:
    """agent label and model -> (item.json, result.json) of its one item."""
    found = {}
    for item in sorted((run / "items").iterdir()):
        meta = json.loads((item / "item.json").read_text())
        result = json.loads((item / "result.json").read_text())
        found[f"{meta['agent']} {meta['model']}"] = (meta, result)
    return found


def test_both_drives_side_by_side_answer_the_designs_question(tmp_path: Path) -> None:
    """An honest parent resolves under both drives; a parent that ends its turn at once and
    writes when the replies arrive is unresolved one-shot and resolved resident. Nothing
    lands in HOME or TMPDIR, nothing is left running, and every bundle re-scores, shows and
    exports as the run judged it."""
    runs = tmp_path / "runs"
    done = _harness(
        tmp_path, "run", "--fixture", TINY, "--agent", "sim", "--agent", "sim:resident",
        "--model", "sim/honest", "--model", "sim/early-exit-fanin", "--runs-dir", str(runs),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # the one-shot early-exit-fanin is unresolved
    run = _run_dir(runs)
    items = _items(run)
    statuses = {k: r["status"] for k, (_, r) in items.items()}
    assert statuses == {
        "sim sim/honest": "resolved",
        "sim sim/early-exit-fanin": "unresolved",
        "sim:resident sim/honest": "resolved",
        "sim:resident sim/early-exit-fanin": "resolved",
    }
    report = load_report(run)
    fanin = next(i for i in report.items if i.agent == "sim" and i.model == "sim/early-exit-fanin")
    assert set(fanin.failed_criteria) == {"coverage", "receipts", "provenance"}
    for label, (meta, _) in items.items():
        resident = label.startswith("sim:resident")
        assert meta["drive"] == ("resident" if resident else "one-shot")
        if resident:
            assert meta["exit_code"] == 0 and not meta["timed_out"]
            drove = meta["collection"]["resident"]
            assert drove["outcome"] == "completed" and drove["barrier"] is True
            assert drove["daemon"]["schema_revision"] == 22
            assert "rlm_quiescence_barrier" in drove["daemon"]["capabilities"]
            assert meta["agent_stop"]["status"] == "acknowledged"
        assert meta["killed_processes"] == [] and meta["leftover_processes"] == 0, label
    assert list((tmp_path / "home").iterdir()) == []
    assert list((tmp_path / "tmp").iterdir()) == []
    for item in sorted((run / "items").iterdir()):
        status = json.loads((item / "result.json").read_text())["status"]
        again = _harness(tmp_path, "score", str(item))
        assert json.loads(again.stdout)["status"] == status, item.name
    exported = _harness(
        tmp_path, "export", str(run), "--format", "atif", "--out", str(tmp_path / "atif")
    )
    assert exported.returncode == 0, exported.stderr
    fanin_dir = next(
        p for p in (run / "items").iterdir() if "resident" in p.name and "fanin" in p.name
    )
    shown = _harness(tmp_path, "show", str(fanin_dir))
    assert shown.returncode == 0 and "resolved" in shown.stdout, shown.stdout + shown.stderr


def test_the_deadline_is_the_harnesss_and_leaves_nothing(tmp_path: Path) -> None:
    """A parent that never ends, driven resident under a short --timeout: timed out, the
    client stopped by SIGTERM after sending shutdown (exit 143), nothing left running."""
    runs = tmp_path / "runs"
    done = _harness(
        tmp_path, "run", "--fixture", TINY, "--agent", "sim:resident", "--model", "sim/hang",
        "--timeout", "8", "--retries", "0", "--runs-dir", str(runs),
    )  # fmt: skip
    run = _run_dir(runs)
    ((meta, result),) = _items(run).values()
    assert meta["timed_out"] and meta["exit_code"] == 143, (meta, done.stderr)
    assert result["facts"]["timed_out"] is True
    assert meta["collection"]["resident"]["outcome"] == "stopped"
    assert meta["leftover_processes"] == 0
    assert list((tmp_path / "home").iterdir()) == []
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_daemon_without_the_barrier_is_an_error_naming_what_is_missing(tmp_path: Path) -> None:
    """Per item (the sim's old-daemon): the client refuses before prompting, exit 3; the
    item is an error whose agent error is the refusal, never a silently different drive."""
    runs = tmp_path / "runs"
    _harness(
        tmp_path, "run", "--fixture", TINY, "--agent", "sim:resident", "--model",
        "sim/old-daemon", "--retries", "0", "--runs-dir", str(runs),
    )  # fmt: skip
    ((meta, result),) = _items(_run_dir(runs)).values()
    assert meta["exit_code"] == 3 and meta["collection"]["resident"]["outcome"] == "refused"
    assert result["status"] == "error"
    said = result["facts"]["agent_error"]
    assert "rlm_quiescence_barrier" in said and "one-shot drive" in said, said


@pytest.mark.reliability
def test_kill_9_of_the_harness_mid_item_leaves_nothing_after_clean(tmp_path: Path) -> None:
    """The supervisor and its session workers run detached, out of the client's process
    group: after a kill -9 of the harness, ``harness clean`` ends every one of them."""
    home = tmp_path / "home"
    home.mkdir()
    harness = subprocess.Popen(
        [sys.executable, "-m", "harness", "run", "--fixture", TINY, "--agent",
         "sim:resident,slow=30", "--runs-dir", str(tmp_path / "runs")],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "HOME": str(home)},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        # The client, the supervisor and the session worker (children come later).
        while time.monotonic() < deadline and len(_processes_of(harness.pid)) < 3:
            time.sleep(0.2)
        assert len(_processes_of(harness.pid)) >= 3, "the drive never reached its worker"
        os.kill(harness.pid, signal.SIGKILL)
        harness.wait()
        assert _processes_of(harness.pid), "nothing survived the harness: the test proves nothing"
        done = subprocess.run(
            [sys.executable, "-m", "harness", "clean"],
            cwd=REPO, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert _processes_of(harness.pid) == []
    finally:
        if harness.poll() is None:
            harness.kill()
            harness.wait()
        for proc in _processes_of(harness.pid):
            proc.kill()


#: Every read plan of the sim (and the modifiers that change the run's course) whose verdict
#: must not depend on the drive: their parents wait for their children within the first run.
SAME_UNDER_BOTH = (
    "honest", "no-spawn", "helper-names", "forged-ledger", "double-spawn", "over-budget",
    "retry-after-failure", "silent-drop", "delete-to-hide", "self-answer", "answer-mismatch",
    "hollow-children", "backdated-reply", "recovers", "wrong-answer", "crash",
    "honest,detached-grandchild", "honest,throttled=1",
)  # fmt: skip


def test_a_parent_that_waits_within_its_run_is_judged_the_same_under_both_drives(
    tmp_path: Path,
) -> None:
    """The drive changes what happens after the parent's first run ends, nothing else: every
    other behaviour gets the same status, failed criteria and error under both."""
    runs = tmp_path / "runs"
    models = [arg for b in SAME_UNDER_BOTH for arg in ("--model", f"sim/{b}")]
    _harness(
        tmp_path, "run", "--fixture", TINY, "--agent", "sim", "--agent", "sim:resident",
        *models, "--retries", "0", "--concurrency", "4", "--runs-dir", str(runs),
    )  # fmt: skip
    report = load_report(_run_dir(runs))
    verdicts: dict[str, dict[str, tuple]] = {}
    for item in report.items:
        verdict = (item.status, sorted(item.failed_criteria), item.facts.error)
        verdicts.setdefault(item.model, {})[item.agent] = verdict
    assert len(verdicts) == len(SAME_UNDER_BOTH)
    differ = {m: v for m, v in verdicts.items() if v.get("sim") != v.get("sim:resident")}
    assert differ == {}
    assert all(i.facts.leftover_processes == 0 for i in report.items)
