"""Process ownership, interruption, resume and leaks, with real processes (``-m reliability``).

Every test runs the harness as a real subprocess with a private TMPDIR, then counts what is
left: processes carrying an item token of that run, and entries in its TMPDIR. Both must be 0.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from harness.agents.env import ITEM_TOKEN_VAR
from harness.model.report import RunReport

REPO = Path(__file__).resolve().parent.parent.parent
TINY = str(REPO / "tests" / "data" / "fixtures" / "tiny")

pytestmark = pytest.mark.reliability


def token_processes(runs: Path) -> list[psutil.Process]:
    """Live processes carrying an item token of any run under ``runs``."""
    # token = run id, "@" and the owner (pid.start), "-" and a uuid (harness.leftovers)
    prefixes = tuple(f"{d.name}@" for d in runs.iterdir()) if runs.is_dir() else ()
    found = []
    for proc in psutil.process_iter():
        try:
            token = proc.environ().get(ITEM_TOKEN_VAR)
            if (
                token
                and prefixes
                and token.startswith(prefixes)
                and proc.status() != psutil.STATUS_ZOMBIE
            ):
                found.append(proc)
        except psutil.Error:
            continue
    return found


def start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    tmpdir = tmp_path / "t"
    tmpdir.mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness",
            "run",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--json",
            *args,
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str], timeout: float = 240) -> tuple[int, RunReport | None, str]:
    """The exit code, the report printed on stdout (read through the model), and stderr."""
    out, err = proc.communicate(timeout=timeout)
    try:
        report = RunReport.from_dict(json.loads(out))
    except ValueError:
        report = None
    return proc.returncode, report, err


def assert_nothing_left(tmp_path: Path) -> None:
    deadline = time.monotonic() + 5
    runs = tmp_path / "runs"
    assert runs.is_dir() and any(runs.iterdir())
    while token_processes(runs) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert token_processes(runs) == []
    assert list((tmp_path / "t").iterdir()) == []  # no temp dir leaked


@pytest.mark.parametrize(
    ("behaviour", "extra", "status"),
    [
        pytest.param("stubborn-daemon", [], "resolved", id="stubborn-daemon"),
        pytest.param("detached-grandchild", [], "resolved", id="detached-grandchild"),
        pytest.param("hang", ["--timeout", "3"], "unresolved", id="hang-past-timeout"),
        pytest.param("crash", [], "unresolved", id="crash"),
    ],
)
def test_nothing_outlives_the_item(
    tmp_path: Path, behaviour: str, extra: list[str], status: str
) -> None:
    _code, report, err = finish(
        start(tmp_path, "--fixture", TINY, "--agent", f"sim:{behaviour}", *extra)
    )
    assert report is not None, err
    (item,) = report.items
    assert item.status == status
    assert item.facts.leftover_processes == 0
    assert_nothing_left(tmp_path)


def _wait_for_items(run_root: Path, n: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(list(run_root.glob("*/items/*/result.json"))) >= n:
            return
        time.sleep(0.1)
    raise AssertionError(f"fewer than {n} items finished in {timeout}s")


def _wait_for_running(run_root: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if token_processes(run_root):
            return
        time.sleep(0.05)
    raise AssertionError("no agent started")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupting_the_harness_mid_run(tmp_path: Path, sig: signal.Signals) -> None:
    proc = start(
        tmp_path,
        "--fixture",
        TINY,
        "--agent",
        "sim:slow=2,stubborn-daemon",
        "--trials",
        "12",
        "--concurrency",
        "4",
    )
    _wait_for_items(tmp_path / "runs", 4)
    _wait_for_running(tmp_path / "runs")
    proc.send_signal(sig)
    code, report, err = finish(proc)
    assert code == 130, err
    assert report is not None and report.interrupted is True
    done = [i for i in report.items if i.status != "error"]
    assert len(done) >= 4
    assert len(report.items) + len(report.not_started) == 12
    assert_nothing_left(tmp_path)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_resume_reruns_only_missing_items(tmp_path: Path, sig: signal.Signals) -> None:
    """Ctrl-C, or a CI job's timeout (SIGTERM): the report is written, exit 130, and the
    run resumes where it stopped."""
    proc = start(
        tmp_path, "--fixture", TINY, "--agent", "sim:slow=1", "--trials", "12", "--concurrency", "2"
    )
    _wait_for_items(tmp_path / "runs", 3)
    proc.send_signal(sig)
    code, report, err = finish(proc)
    assert code == 130 and report is not None, err
    run_dir = next(p for p in (tmp_path / "runs").iterdir() if p.is_dir())
    kept = {i.key: i for i in report.items if i.status != "error"}
    stamps = {
        key: (run_dir / "items" / i.item_dir / "result.json").stat().st_mtime_ns
        for key, i in kept.items()
    }
    assert 3 <= len(kept) < 12
    resumed = start(tmp_path, "--resume", str(run_dir))
    code, final, err = finish(resumed)
    assert code == 0, err
    assert final is not None and len(final.items) == 12 and final.interrupted is False
    assert all(i.status == "resolved" for i in final.items)
    for key, stamp in stamps.items():  # finished items were kept, not re-run
        item = next(i for i in final.items if i.key == key)
        assert (run_dir / "items" / item.item_dir / "result.json").stat().st_mtime_ns == stamp
    assert "resuming: " + str(len(kept)) in err
    assert_nothing_left(tmp_path)


def test_resume_refuses_changed_options_or_fixture(tmp_path: Path) -> None:
    fixture = tmp_path / "fx"
    import shutil

    shutil.copytree(TINY, fixture)
    code, _report, err = finish(
        start(tmp_path, "--fixture", str(fixture), "--agent", "sim", "--trials", "2")
    )
    assert code == 0, err
    run_dir = next(p for p in (tmp_path / "runs").iterdir() if p.is_dir())
    code, _, err = finish(start(tmp_path, "--resume", str(run_dir), "--trials", "1"))
    assert code == 2 and "trials" in err  # a resume adds trials; it never drops them
    code, _, err = finish(start(tmp_path, "--resume", str(run_dir), "--timeout", "7"))
    assert code == 2 and "timeout_s" in err
    (fixture / "shards" / "shard-a.txt").write_text("changed words here now\n")
    code, _, err = finish(start(tmp_path, "--resume", str(run_dir)))
    assert code == 2 and "fixtures" in err
