"""The resident driver's side of every exchange, replayed from the real CLI's captured frames.

Each capture in tests/data/real-runs/resident-daemon holds every frame of one drive of the
real prime-agent 0.8.0 daemon. The driver runs as the harness runs it (its own interpreter,
a real Unix socket) against ``replay_daemon.py``, which plays the daemon's frames back and
compares each frame the driver sends with the one the capture's client sent. The stdout the
driver rebuilds must be the capture's, byte for byte.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.agents.prime_agent import resident

HERE = Path(__file__).resolve().parent
CAPTURES = HERE.parents[1] / "data" / "real-runs" / "resident-daemon"
REPLAY = HERE / "replay_daemon.py"
DRIVER = Path(resident.__file__)


def _captured_task(frames: list[dict]) -> str:
    for rec in frames:
        command = rec["frame"].get("command") or {}
        if rec["dir"] == "out" and command.get("type") == "prompt_and_wait":
            return str(command["message"])
    raise AssertionError("no prompt in the capture")


def _drive(tmp_path: Path, capture: str, stop_before_shutdown: bool = False):
    root = tmp_path / "item"
    for sub in ("repo", "agent-home", "sessions", "home", "tmp"):
        (root / sub).mkdir(parents=True)
    frames_path = CAPTURES / capture / "frames.jsonl"
    frames = [json.loads(line) for line in frames_path.read_text().splitlines()]
    model = next(
        r["frame"]["command"]["config"]["model"]
        for r in frames
        if r["dir"] == "out" and r["frame"]["command"]["type"] == "create"
    )
    state = {
        "socket": str(root / "daemon.sock"),
        "repo": str(root / "repo"),
        "agent_home": str(root / "agent-home"),
        "sessions": str(root / "sessions"),
        "model": model,
        "task": _captured_task(frames),
        "record": str(root / "resident.json"),
    }
    (root / "state.json").write_text(json.dumps(state))
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(root / "home"),
        "TMPDIR": str(root / "tmp"),
        "PRIME_AGENT_INTERNAL_DAEMON_SUPERVISOR_REGISTRY_DIR": str(root / "home" / "reg"),
        "REPLAY_FRAMES": str(frames_path),
        "REPLAY_REPORT": str(root / "replay.json"),
        "REPLAY_ROOT": str(root),
        **({"REPLAY_STOP_BEFORE_SHUTDOWN": "1"} if stop_before_shutdown else {}),
    }
    argv = [sys.executable, "-I", "-S", str(DRIVER), sys.executable, str(REPLAY), "--"]
    done = subprocess.run(
        [*argv, str(root / "state.json")],
        cwd=root / "repo",
        env=env,
        capture_output=True,
        timeout=120,
    )
    report = json.loads((root / "replay.json").read_text())
    record = json.loads((root / "resident.json").read_text())
    return done, report, record


@pytest.mark.parametrize("capture", ["honest", "early-exit-fanin"])
def test_the_driver_speaks_as_the_captured_client_and_rebuilds_its_stdout(
    tmp_path: Path, capture: str
) -> None:
    done, report, record = _drive(tmp_path, capture)
    assert report["mismatches"] == [], report
    # create, 4 acks, attach, header, prompt, barrier, children, complete, shutdown
    assert report["compared"] == 13
    assert len(report["client_ids"]) == 1, "one clientId for the whole drive"
    assert done.returncode == resident.EXIT_OK, done.stderr.decode()
    assert done.stdout == (CAPTURES / capture / "stdout.jsonl").read_bytes()
    assert record["outcome"] == "completed"
    assert record["daemon"]["schema_revision"] == 22
    assert "rlm_quiescence_barrier" in record["daemon"]["capabilities"]
    assert record["daemon_closing"] is True and record["supervisor_exit"] == 0
    assert [c["status"] for c in record["children"]] == ["done"] * 3
    assert [c["command"] for c in record["commands"]] == [
        "create", "attach", "get_session_header", "prompt_and_wait",
        "wait_for_headless_completion", "get_rlm_children", "complete_owned_session",
        "shutdown",
    ]  # fmt: skip


def test_a_deadline_mid_prompt_shuts_the_daemon_down_and_keeps_the_last_events(
    tmp_path: Path,
) -> None:
    done, report, record = _drive(tmp_path, "deadline-shutdown", stop_before_shutdown=True)
    assert report["mismatches"] == [], report
    assert done.returncode == resident.EXIT_STOPPED
    # The events the daemon sent after shutdown (the aborted cells, agent_end) are kept.
    assert done.stdout == (CAPTURES / "deadline-shutdown" / "stdout.jsonl").read_bytes()
    assert record["outcome"] == "stopped"
    assert record["session_closed"] == "killed"


@pytest.mark.parametrize(
    ("capture", "status", "failing", "turns"),
    [
        ("honest", "resolved", [], 6),
        ("early-exit-fanin", "resolved", [], 6),
        ("deadline-shutdown", "unresolved", ["coverage", "receipts", "provenance"], 2),
    ],
)
def test_the_unchanged_scorer_reads_what_the_real_resident_drives_left(
    capture: str, status: str, failing: list[str], turns: int
) -> None:
    """The verdicts the captures' README reports for the real CLI's resident drives."""
    done = subprocess.run(
        [sys.executable, "-m", "harness", "score", str(CAPTURES / capture)],
        cwd=HERE.parents[2], capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    scored = json.loads(done.stdout)
    assert scored["status"] == status
    checks = scored["score"]["checks"]
    assert [c["name"] for c in checks if not c["passed"]] == failing
    assert scored["score"]["turns"] == turns
    assert scored["score"]["stdout_malformed_lines"] == 0
