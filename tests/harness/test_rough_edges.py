"""What a new user hit (issue 11, item 5), through the CLI: exit codes and one clear line."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from model_builders import make_options

from harness.cli.main import cli
from harness.runs.lock import LOCK_FILE, hold_run_dir

REPO = Path(__file__).resolve().parent.parent.parent
TINY = REPO / "tests" / "data" / "fixtures" / "tiny"


def is_locked(run_dir: Path) -> bool:
    """True while a live process holds ``run_dir``'s lock (a run in progress)."""
    try:
        fd = os.open(run_dir / LOCK_FILE, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def invoke(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    runner = CliRunner()
    if cwd is None:
        result = runner.invoke(cli, list(args))
    else:
        with runner.isolated_filesystem(temp_dir=cwd):
            os.chdir(cwd)
            result = runner.invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_fixtures_list_shows_a_broken_manifest_as_invalid(tmp_path: Path) -> None:
    shutil.copytree(TINY, tmp_path / "good")
    shutil.copytree(TINY, tmp_path / "broken")
    (tmp_path / "broken" / "fixture.json").write_text('{"name": "broken", "artifact": 5}')
    code, out, _ = invoke("fixtures", "list", "--fixtures-dir", str(tmp_path))
    assert code == 0, out
    assert "INVALID" in out and "fixture.json: shards: is required (and 1 more)" in out
    assert "tiny" in out and "ok" in out


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        pytest.param("sim:honnest", "unknown behaviour 'honnest'", id="typo"),
        pytest.param("sim:flaky=abc", "'flaky' needs a probability", id="bad-number"),
        pytest.param("sim:hang,crash", "cannot be combined", id="conflict"),
    ],
)
def test_a_bad_sim_behaviour_is_refused_before_anything_runs(
    tmp_path: Path, agent: str, message: str
) -> None:
    code, _, err = invoke(
        "run", "--fixture", str(TINY), "--agent", agent, "--runs-dir", str(tmp_path)
    )
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())


def test_a_sim_run_never_carries_a_real_model_name(tmp_path: Path) -> None:
    code, _, err = invoke(
        "run", "--fixture", str(TINY), "--agent", "sim", "--model", "anthropic/claude-x",
        "--runs-dir", str(tmp_path),
    )  # fmt: skip
    assert code == 2 and "simulated agent calls no model" in err
    code, out, _ = invoke(
        "run", "--fixture", str(TINY), "--agent", "sim", "--model", "sim/no-spawn", "--dry-run"
    )
    assert code == 0 and "tiny:sim/no-spawn:1" in out


def test_dry_run_prints_the_plan_and_checks_the_binary(tmp_path: Path) -> None:
    code, out, _ = invoke(
        "run", "--fixture", str(TINY), "--model", "a/b", "--agent-bin", "/bin/echo",
        "--trials", "2", "--runs-dir", str(tmp_path / "runs"), "--dry-run",
    )  # fmt: skip
    assert "tiny:a/b:1" in out and "tiny:a/b:2" in out
    assert "agent binary: echo" in out and str(tmp_path / "runs") in out
    assert "credentials" in out and "nothing launched" in out
    assert code in (0, 3)  # 3 when this machine has no credentials
    missing, out, _ = invoke(
        "run", "--fixture", str(TINY), "--model", "a/b", "--agent-bin",
        str(tmp_path / "nope"), "--dry-run",
    )  # fmt: skip
    assert missing == 3 and "FAIL agent binary: agent binary not found" in out
    assert not (tmp_path / "runs").exists()


def test_a_locked_run_dir_is_refused_naming_its_holder(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    options = make_options(fixtures=(str(TINY),), models=("sim/oracle",))
    (run_dir / "run.json").write_text(json.dumps({"options": options.to_dict()}))
    child = subprocess.Popen(
        [sys.executable, "-c",
         "import sys,time; from pathlib import Path; from harness.runs.lock import hold_run_dir\n"
         "with hold_run_dir(Path(sys.argv[1])):\n print('held', flush=True); time.sleep(60)",
         str(run_dir)],
        stdout=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        assert is_locked(run_dir)
        code, _, err = invoke("run", "--resume", str(run_dir), "--fixture", str(TINY))
        assert code == 2 and f"in use by process {child.pid}" in err
    finally:
        child.kill()
        child.wait()
    assert not is_locked(run_dir)  # the kernel dropped it with its holder
    with hold_run_dir(run_dir):
        assert is_locked(run_dir)


def test_fixtures_new_task_and_the_shard_count_warning(tmp_path: Path) -> None:
    root = tmp_path / "fixtures"
    code, out, _ = invoke(
        "fixtures", "new", "mine", "--from", str(TINY), "--fixtures-dir", str(root)
    )
    assert code == 0, out
    manifest = json.loads((root / "mine" / "fixture.json").read_text())
    assert manifest["name"] == "mine"
    manifest["shards"] = manifest["shards"][:2]
    (root / "mine" / "fixture.json").write_text(json.dumps(manifest))
    (root / "mine" / "shards" / "shard-c.txt").unlink()
    (root / "mine" / "task.txt").write_text(
        (TINY / "task.txt").read_text().replace("3 data shards", "3 data shards")
    )
    code, _, err = invoke("fixtures", "validate", str(root / "mine"))
    printed, out, _ = invoke("fixtures", "task", str(root / "mine"))
    assert printed == 0 and "holds 2 data shards" in out and "shard-c" not in out
    assert invoke("fixtures", "task", str(root / "mine"), "--write")[0] == 0
    code, out, err = invoke("fixtures", "validate", str(root / "mine"))
    assert code == 0 and "warning" not in err


def test_task_txt_stating_another_shard_count_warns(tmp_path: Path) -> None:
    from harness.fixtures.scaffold import fixture_warnings

    shutil.copytree(REPO / "fixtures" / "json-events", tmp_path / "fx")
    manifest = json.loads((tmp_path / "fx" / "fixture.json").read_text())
    manifest["shards"] = manifest["shards"][:3]
    (tmp_path / "fx" / "fixture.json").write_text(json.dumps(manifest))
    (warning,) = fixture_warnings(tmp_path / "fx")
    assert "'8 data shards'" in warning.message and "3 shard(s)" in warning.message


def test_fixtures_dir_and_the_working_directory(tmp_path: Path) -> None:
    from harness.fixtures import FIXTURES_ROOT
    from harness.fixtures.lookup import fixture_roots

    assert fixture_roots(cwd=tmp_path) == (FIXTURES_ROOT.resolve(),)
    shutil.copytree(TINY, tmp_path / "fixtures" / "tiny")
    local = (tmp_path / "fixtures").resolve()
    assert fixture_roots(cwd=tmp_path) == (local, FIXTURES_ROOT.resolve())
    code, out, _ = invoke("run", "--fixture", "tiny", "--agent", "sim", "--dry-run",
                          "--fixtures-dir", str(tmp_path / "fixtures"))  # fmt: skip
    assert code == 0 and "tiny:sim/honest:1" in out


def test_a_local_fixture_does_not_hide_the_bundled_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After `fixtures new mine` in an empty directory, the bundled fixtures still resolve
    by name, and `all` runs them as well as the local one."""
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke("fixtures", "new", "mine")
    assert code == 0, err
    assert "fixtures task" in out and "fixtures validate" in out
    code, out, err = invoke("run", "--fixture", "json-events", "--agent", "sim", "--dry-run")
    assert code == 0 and "json-events:sim/honest:1" in out, err
    code, out, err = invoke("run", "--fixture", "all", "--agent", "sim", "--dry-run")
    assert code == 0, err
    assert {"mine:sim/honest:1", "json-events:sim/honest:1", "csv-metrics:sim/honest:1"} <= {
        line.strip() for line in out.splitlines()
    }
    code, _, err = invoke("run", "--fixture", "nope", "--agent", "sim", "--dry-run")
    assert code == 2 and "--fixtures-dir" in err and "json-events" in err


def _wait_for_sigint_handler(pid: int, timeout: float = 60.0) -> None:
    """Until the process catches SIGINT (its SigCgt mask in /proc/<pid>/status) and has
    spent 100 ms of CPU: past the interpreter's start and runpy's search for
    ``harness.__main__`` (under 10 ms here warm, but over 40 ms seen on a loaded machine with
    a fresh venv, where a Ctrl-C there kills Python before any harness code runs: -2) and
    inside the harness's imports (``harness.cli.main`` alone takes about 110 ms), far from
    the run's own handlers (installed after some 800 ms of imports). CPU time, not a sleep:
    it measures progress however loaded the machine is."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = Path(f"/proc/{pid}/status").read_text()
        caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()
        cpu_ticks = int(fields[11]) + int(fields[12])  # utime + stime
        if int(caught.split()[1], 16) & (1 << (signal.SIGINT - 1)) and cpu_ticks >= 10:
            return
        time.sleep(0.005)
    raise AssertionError("the harness never reached its imports with a SIGINT handler")


@pytest.mark.slow
def test_ctrl_c_in_the_first_seconds_exits_130(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "run", "--fixture", str(TINY), "--agent",
         "sim:slow=30", "--runs-dir", str(tmp_path)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    # Importing or planning, before the run's own signal handlers: as soon as Python's own
    # SIGINT handler is in place (a fixed sleep could land before the interpreter has one
    # on a loaded machine, and the process then dies of the signal: -2).
    _wait_for_sigint_handler(proc.pid)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "Aborted!" not in out + err and "Traceback" not in err
