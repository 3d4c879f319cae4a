"""A full disk: one line naming the file, the finished items kept, ``--resume`` to go on,
exit 3. On a real tmpfs filled up mid-run (in a user+mount namespace, ``unshare -rm``), and
with the error injected where the namespace is not available."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.agents import parse_agent
from harness.errors import EXIT_INFRA, StorageError
from harness.executors.local import LocalExecutor
from harness.model.report import load_report
from harness.plan import RunConfig
from harness.run.execute import execute_run

REPO = Path(__file__).resolve().parent.parent.parent
TINY = str(REPO / "tests" / "data" / "fixtures" / "tiny")

pytestmark = pytest.mark.slow


#: Run inside the namespace: a 16 MB tmpfs as the runs dir; the run is started, the disk is
#: filled once its first item finished, then emptied and the run resumed. What each step
#: printed is written as JSON on stdout for the test to check.
def start_run(size: str) -> str:
    """The first steps of a scenario run inside the namespace: a tmpfs of ``size`` as the
    runs dir, a four-item sim run started on it (``first``), and a wait until its first
    item finished. The scenario goes on from there."""
    return textwrap.dedent(
        """
        import contextlib, json, os, subprocess, sys, time
        from pathlib import Path
        mnt = Path(sys.argv[1])
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=SIZE", "tmpfs", str(mnt)], check=True)
        runs = mnt / "runs"
        harness = [sys.executable, "-m", "harness", "run", "--runs-dir", str(runs)]
        first = subprocess.Popen(
            [*harness, "--fixture", sys.argv[2], "--agent", "sim:slow=1", "--trials", "4",
             "--concurrency", "1"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        deadline = time.monotonic() + 120
        while not list(runs.glob("*/items/*/result.json")) and time.monotonic() < deadline:
            time.sleep(0.05)
        """
    ).replace("SIZE", size)


SCENARIO = start_run("16m") + textwrap.dedent(
    """
    filler = mnt / "filler"
    with open(filler, "wb", buffering=0) as fh:  # fill the disk to the last byte
        for chunk in (b"x" * 65536, b"x"):
            with contextlib.suppress(OSError):  # ENOSPC: this size no longer fits
                while True:
                    fh.write(chunk)
    out, err = first.communicate(timeout=300)
    run_dir = next(p for p in runs.iterdir() if p.is_dir())
    kept = sorted(p.parent.name for p in run_dir.glob("items/*/result.json"))
    stamps = {p.parent.name: p.stat().st_mtime_ns for p in run_dir.glob("items/*/result.json")}
    filler.unlink()
    second = subprocess.run(
        [*harness, "--resume", str(run_dir), "--json"], capture_output=True, text=True,
        timeout=300,
    )
    after = {p.parent.name: p.stat().st_mtime_ns for p in run_dir.glob("items/*/result.json")}
    json.dump({
        "first": [first.returncode, out, err], "second": [second.returncode, second.stdout,
        second.stderr], "run_dir": str(run_dir), "kept": kept,
        "untouched": all(after.get(k) == v for k, v in stamps.items()),
    }, sys.stdout)
    """
)


def _namespace_works() -> str | None:
    """None when ``unshare -rm`` can mount a tmpfs here, else why not."""
    if shutil.which("unshare") is None:
        return "no unshare(1) on this machine"
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return f"unshare -rm cannot mount a tmpfs here: {probe.stderr.strip()}"
    return None


def test_a_disk_that_fills_up_mid_run(tmp_path: Path) -> None:
    why = _namespace_works()
    if why is not None:
        pytest.skip(why)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    script = tmp_path / "scenario.py"
    script.write_text(SCENARIO, encoding="utf-8")
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # the workspaces stay on a disk with room
    proc = subprocess.run(
        ["unshare", "-rm", sys.executable, str(script), str(mnt), TINY],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    code, out, err = seen["first"]
    run_dir = seen["run_dir"]
    assert code == EXIT_INFRA, (out, err)
    assert "Traceback" not in err
    (line,) = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert line.startswith("error: no space left on device writing " + run_dir)
    assert f"{len(seen['kept'])} of 4 items finished and kept in {run_dir}" in line
    assert line.endswith(f"free space, then resume with --resume {run_dir}")
    assert 1 <= len(seen["kept"]) < 4
    # The item that hit the full disk shows its cause alone, no criteria.
    failed = [ln for ln in err.splitlines() if "error in" in ln]
    assert failed and all("no space left on device writing" in ln for ln in failed)
    assert not any("coverage" in ln for ln in failed)

    code, out, err = seen["second"]
    assert code == 0, err
    report = json.loads(out)
    assert [i["status"] for i in report["items"]] == ["resolved"] * 4
    assert report["interrupted"] is False
    assert seen["untouched"]  # the kept items were not run again


def test_a_full_disk_in_an_item_stops_the_run_and_exits_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Injected ENOSPC in the second item: the running ones finish, nothing new starts, the
    report (written: the disk had room again for it) says why, and the exit code is 3."""
    real = LocalExecutor.run_item
    calls: list[str] = []

    def run_item(self, work, opts, item_dir, cancel, slot):  # type: ignore[no-untyped-def]
        calls.append(work.key)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device", str(item_dir / "item.json"))
        return real(self, work, opts, item_dir, cancel, slot)

    monkeypatch.setattr(LocalExecutor, "run_item", run_item)
    config = RunConfig(
        fixtures=(TINY,),
        models=(),
        agents=(parse_agent("sim"),),
        trials=5,
        concurrency=1,
        runs_dir=tmp_path / "runs",
    )
    outcome = execute_run(config)
    assert outcome.exit_code == EXIT_INFRA
    report = load_report(outcome.run_dir)
    statuses = {i.key: i.status for i in report.items}
    assert list(statuses.values()).count("error") == 1
    errored = next(i for i in report.items if i.status == "error")
    assert errored.facts.error is not None
    assert errored.facts.error.startswith("no space left on device writing ")
    assert report.interrupted and len(report.not_started) >= 2
    assert report.notes[-1].startswith("stopped early: no space left on device")
    assert len(calls) <= 3  # at most one item was already preparing ahead


#: Inside the namespace: a read-only tmpfs as the runs dir, and a run pointed at it.
READ_ONLY = textwrap.dedent(
    """
    import json, subprocess, sys
    mnt = sys.argv[1]
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", mnt], check=True)
    done = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--runs-dir", mnt, "--fixture", sys.argv[2],
         "--agent", "sim"], capture_output=True, text=True,
    )
    json.dump([done.returncode, done.stdout, done.stderr], sys.stdout)
    """
)


def test_a_read_only_runs_dir_says_nothing_ran(tmp_path: Path) -> None:
    """Nothing ran, so nothing finished that could be gone: the line says so and names the
    --runs-dir to change."""
    why = _namespace_works()
    if why is not None:
        pytest.skip(why)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    script = tmp_path / "read_only.py"
    script.write_text(READ_ONLY, encoding="utf-8")
    proc = subprocess.run(
        ["unshare", "-rm", sys.executable, str(script), str(mnt), TINY],
        capture_output=True, text=True, cwd=REPO, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    code, out, err = json.loads(proc.stdout)
    assert code == EXIT_INFRA and out == "", err
    (line,) = err.strip().splitlines()
    assert line.startswith(f"error: read-only file system writing {mnt}/")
    assert line.endswith(
        f"; nothing ran: --runs-dir {mnt} is not writable here (give one this user can write to)"
    )
    assert "gone" not in line


@pytest.mark.parametrize(
    ("code", "advice"),
    [
        pytest.param(errno.EACCES, "is not writable here", id="not-writable"),
        pytest.param(errno.ENOSPC, "has no room for a run (free space there", id="full"),
    ],
)
def test_a_run_dir_that_cannot_be_made_is_nothing_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, advice: str
) -> None:
    """The same where no namespace can mount a tmpfs: the run dir's making fails."""
    runs = tmp_path / "runs"
    real = Path.mkdir

    def mkdir(self: Path, *args: object, **kwargs: object) -> None:
        if self.is_relative_to(runs):
            raise OSError(code, os.strerror(code), str(self.parent))
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "mkdir", mkdir)
    config = RunConfig(fixtures=(TINY,), models=(), agents=(parse_agent("sim"),), runs_dir=runs)
    with pytest.raises(StorageError) as caught:
        execute_run(config)
    message = str(caught.value)
    assert f"; nothing ran: --runs-dir {runs} {advice}" in message
    assert "gone" not in message
