"""A daemon the resident drive cannot use is refused, before the run and per item, in one line.

The agent binary is ``fake_daemon.py``: a real process serving a real Unix socket, whose
hello says what each test needs (the real 0.8.0 one, or an older daemon's).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from harness.agents.prime_agent import resident
from harness.agents.prime_agent.probe import resident_check

HERE = Path(__file__).resolve().parent
FAKE = HERE / "fake_daemon.py"
REPO = HERE.parents[2]
TINY = REPO / "tests" / "data" / "fixtures" / "tiny"
OLD = {
    "schemaRevision": 17,
    "serverCapabilities": [
        "attach_snapshot", "event_sequence", "client_owned_sessions",
        "session_input_admission", "authoritative_child_roster",
    ],
}  # fmt: skip


def _binary(tmp_path: Path) -> Path:
    wrapper = tmp_path / "prime-agent"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper


def test_the_gate_names_each_missing_need() -> None:
    assert resident.gate({"protocol": resident.PROTOCOL, "schemaRevision": 22,
                          "serverCapabilities": [r.capability for r in resident.REQUIREMENTS]}) == []  # fmt: skip
    missing = resident.gate({"protocol": resident.PROTOCOL, **OLD})
    assert missing == [
        "wait_for_headless_completion with the quiescence barrier needs schema revision >= 18 "
        "(it has 17) and the rlm_quiescence_barrier capability"
    ]
    other = resident.gate({"protocol": {"name": "prime-agent.daemon", "version": 8}})
    assert other == ["protocol prime-agent.daemon v8 (this drive speaks prime-agent.daemon v7)"]


def test_the_probe_reads_a_real_daemons_hello(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = _binary(tmp_path)
    ok, detail = resident_check([str(binary)])
    assert ok, detail
    assert "schema revision 22" in detail
    monkeypatch.setenv("FAKE_DAEMON_HELLO", json.dumps(OLD))
    # The probe passes only PATH and the locale on: the hello comes from the binary alone.
    ok, detail = resident_check([str(binary)])
    assert ok, "the probe must not pass the caller's environment to the daemon"


def test_a_run_on_an_old_daemon_is_refused_before_anything_runs(tmp_path: Path) -> None:
    """One line naming what is missing and that the one-shot drive works; exit 3; no run
    directory; the user's HOME untouched."""
    binary = tmp_path / "bin" / "prime-agent"
    binary.parent.mkdir()
    # The old hello is baked into the binary: the probe passes no variable of ours on.
    binary.write_text(
        f'#!/bin/sh\nFAKE_DAEMON_HELLO=\'{json.dumps(OLD)}\' exec "{sys.executable}" "{FAKE}" "$@"\n'
    )
    binary.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    runs = tmp_path / "runs"
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8"}
    done = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--fixture", str(TINY),
         "--agent", "prime-agent", "--agent", "prime-agent:resident",
         "--agent-bin", f"prime-agent={binary}", "--model", "fake/x", "--runs-dir", str(runs)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert "prime-agent:resident refused" in lines[0]
    assert "schema revision >= 18 (it has 17)" in lines[0]
    assert "rlm_quiescence_barrier" in lines[0]
    assert "one-shot drive (--agent prime-agent) works" in lines[0]
    assert not runs.exists()
    assert list(home.iterdir()) == []


def test_an_item_on_a_daemon_that_lacks_the_barrier_refuses_without_prompting(
    tmp_path: Path,
) -> None:
    root = tmp_path / "item"
    for sub in ("repo", "agent-home", "sessions"):
        (root / sub).mkdir(parents=True)
    state = {
        "socket": str(root / "daemon.sock"),
        "repo": str(root / "repo"),
        "agent_home": str(root / "agent-home"),
        "sessions": str(root / "sessions"),
        "model": "fake/x",
        "task": "do it",
        "record": str(root / "resident.json"),
    }
    (root / "state.json").write_text(json.dumps(state))
    env = {"PATH": os.environ["PATH"], "FAKE_DAEMON_HELLO": json.dumps(OLD)}
    done = subprocess.run(
        [sys.executable, "-I", "-S", resident.__file__, sys.executable, str(FAKE), "--",
         str(root / "state.json")],
        cwd=root / "repo", env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == resident.EXIT_REFUSED, done.stderr
    assert done.stdout == ""
    record = json.loads((root / "resident.json").read_text())
    assert record["outcome"] == "refused"
    assert [c["command"] for c in record["commands"]] == ["shutdown"]
    assert record["supervisor_exit"] == 0
    assert "one-shot drive" in done.stderr and "rlm_quiescence_barrier" in done.stderr
