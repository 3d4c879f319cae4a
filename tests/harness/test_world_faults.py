"""Faults of the world around the harness mid-run: the runs dir made read-only, the runs dir
removed. Each ends with one clear line, exit 3, no traceback, and keeps what the disk
allows. (A CI timeout's SIGTERM: ``test_reliability``; the agent binary removed mid-run:
the real-agent tier, ``test_cc_faults_real``.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from test_full_disk import _namespace_works, start_run

from harness.errors import EXIT_INFRA

REPO = Path(__file__).resolve().parent.parent.parent
TINY = str(REPO / "tests" / "data" / "fixtures" / "tiny")

pytestmark = pytest.mark.reliability

#: Run inside a user+mount namespace: a tmpfs as the runs dir, made read-only once the
#: first item finished, then writable again and the run resumed.
READ_ONLY = start_run("64m") + textwrap.dedent(
    """
    run_dir = next(p for p in runs.iterdir() if p.is_dir())
    # A read-only bind mount of the run dir over itself: the files the run holds open
    # stay open, every new write is refused (EROFS).
    subprocess.run(["mount", "--bind", str(run_dir), str(run_dir)], check=True)
    subprocess.run(["mount", "-o", "remount,bind,ro", str(run_dir)], check=True)
    out, err = first.communicate(timeout=300)
    kept = sorted(p.parent.name for p in run_dir.glob("items/*/result.json"))
    subprocess.run(["umount", str(run_dir)], check=True)
    second = subprocess.run(
        [*harness, "--resume", str(run_dir), "--json"], capture_output=True, text=True,
        timeout=300,
    )
    json.dump({"first": [first.returncode, out, err], "second": [second.returncode,
               second.stdout, second.stderr], "run_dir": str(run_dir), "kept": kept},
              sys.stdout)
    """
)


def test_a_runs_dir_made_read_only_mid_run(tmp_path: Path) -> None:
    why = _namespace_works()
    if why is not None:
        pytest.skip(why)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    script = tmp_path / "scenario.py"
    script.write_text(READ_ONLY, encoding="utf-8")
    proc = subprocess.run(
        ["unshare", "-rm", sys.executable, str(script), str(mnt), TINY],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    code, out, err = seen["first"]
    assert code == EXIT_INFRA, (out, err)
    assert "Traceback" not in err
    (line,) = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert line.startswith("error: read-only file system writing " + seen["run_dir"])
    assert 1 <= len(seen["kept"]) < 4  # what finished before stays
    code, out, err = seen["second"]
    assert code == 0, err
    assert [i["status"] for i in json.loads(out)["items"]] == ["resolved"] * 4


def test_a_runs_dir_removed_mid_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness",
            "run",
            "--runs-dir",
            str(runs),
            "--fixture",
            TINY,
            "--agent",
            "sim:slow=1",
            "--trials",
            "6",
            "--concurrency",
            "1",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not list(runs.glob("*/items/*/result.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    # The harness is writing into it meanwhile (a temp file may vanish as rmtree reaches
    # it): remove what is there until nothing is.
    while run_dir.exists() and time.monotonic() < deadline:
        shutil.rmtree(run_dir, ignore_errors=True)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == EXIT_INFRA, (out, err)
    assert "Traceback" not in err
    (line,) = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert line.startswith(f"error: the run directory {run_dir} was removed mid-run; nothing")
    assert not (run_dir / "report.json").exists() and not (run_dir / "run.json").exists()
    started = [ln for ln in err.splitlines() if ln.startswith("[")]
    assert len(started) < 6  # no new item started once it was gone
