"""The sim's daemon over a real Unix socket: hello, the shutdown envelope, bad envelopes."""

from __future__ import annotations

import os
import signal
import time

import psutil
import pytest
from simkit import DaemonClient, SimLayout, shutdown_envelope, wait_gone

#: Every test starts the simulated agent's real processes.
pytestmark = pytest.mark.slow


def _started(sim: SimLayout, behaviours: str = "honest") -> DaemonClient:
    result = sim.run(behaviours)
    assert result.returncode == 0, result.stderr
    return DaemonClient(sim.socket)


def test_hello_then_shutdown_removes_daemon_catalog_and_socket(sim: SimLayout) -> None:
    client = _started(sim)
    hello = client.hello
    assert hello is not None and hello["type"] == "daemon_hello"
    assert hello["protocol"] == {"name": "prime-agent.daemon", "version": 7}
    assert hello["socketPath"] == str(sim.socket) and hello["appVersion"] == "sim"
    daemon = psutil.Process(hello["supervisorPid"])
    (catalog,) = daemon.children()
    # Detached: its own session, and not a child of the test. (If this test process is a
    # child subreaper, as the harness makes itself, the orphaned daemon is reparented here.)
    assert os.getsid(daemon.pid) == daemon.pid
    assert daemon.ppid() != os.getpid() or _is_subreaper()
    client.send(shutdown_envelope("abc-1"))
    replies = client.read_all()  # until the daemon hangs up
    assert replies == [
        {"id": "abc-1", "type": "response", "command": "shutdown", "success": True},
        {"type": "daemon_closing", "reason": "shutdown"},
    ]
    assert wait_gone(daemon.pid) and wait_gone(catalog.pid)
    assert not sim.socket.exists()
    assert sim.processes() == []


def test_catalog_is_a_plain_sleep_in_the_daemons_session(sim: SimLayout) -> None:
    """No Python start-up to pay for it; still the daemon's, by session and environment."""
    client = _started(sim)
    client.close()
    assert client.hello is not None
    daemon = psutil.Process(client.hello["supervisorPid"])
    (catalog,) = daemon.children()
    assert catalog.name() == "sleep"
    assert os.getsid(catalog.pid) == daemon.pid and os.getpgid(catalog.pid) == daemon.pid
    assert {p.pid for p in sim.processes()} == {daemon.pid, catalog.pid}
    assert {f.path for f in catalog.open_files()} <= {os.devnull}


def test_forced_shutdown_is_accepted(sim: SimLayout) -> None:
    client = _started(sim)
    client.send(shutdown_envelope("f", force=True))
    assert client.read_all()[0]["success"] is True
    assert client.hello is not None and wait_gone(client.hello["supervisorPid"])


@pytest.mark.parametrize(
    ("line", "reply_id"),
    [
        pytest.param(b"{not json", None, id="invalid-json"),
        pytest.param({"type": "shutdown"}, None, id="bare-command"),
        pytest.param({**shutdown_envelope("p"), "protocol": None}, "p", id="no-protocol"),
        pytest.param(
            {**shutdown_envelope("v"), "protocol": {"name": "prime-agent.daemon", "version": 6}},
            "v",
            id="wrong-version",
        ),
        pytest.param({**shutdown_envelope("u"), "command": {"type": "reboot"}}, "u", id="unknown"),
        pytest.param({**shutdown_envelope("m"), "command": None}, "m", id="no-command"),
    ],
)
def test_bad_envelope_is_refused_and_daemon_keeps_running(
    sim: SimLayout, line: object, reply_id: str | None
) -> None:
    client = _started(sim)
    assert client.hello is not None
    pid = client.hello["supervisorPid"]
    client.send(line)
    reply = client.read()
    assert reply is not None
    assert reply["type"] == "response" and reply["success"] is False and reply["error"]
    assert reply["id"] == reply_id
    # Same connection still served, and the daemon still accepts new ones.
    client.send(shutdown_envelope("after"))
    assert client.read_all()[0] == {
        "id": "after",
        "type": "response",
        "command": "shutdown",
        "success": True,
    }
    assert wait_gone(pid)


def test_sigterm_stops_daemon_and_catalog(sim: SimLayout) -> None:
    client = _started(sim)
    client.close()
    assert client.hello is not None
    daemon = psutil.Process(client.hello["supervisorPid"])
    (catalog,) = daemon.children()
    daemon.terminate()
    assert wait_gone(daemon.pid) and wait_gone(catalog.pid)
    assert not sim.socket.exists()


def test_a_second_run_reuses_the_live_daemon(sim: SimLayout) -> None:
    first = _started(sim)
    first.close()
    second = _started(sim)
    second.close()
    assert first.hello is not None and second.hello is not None
    assert first.hello["supervisorPid"] == second.hello["supervisorPid"]
    assert len(sim.processes()) == 2  # one daemon, one catalog


def test_stale_socket_file_is_replaced(sim: SimLayout) -> None:
    import socket

    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(sim.socket))  # bound, never listening: nothing answers
    stale.close()
    client = _started(sim)
    assert client.hello is not None and psutil.pid_exists(client.hello["supervisorPid"])


def test_stubborn_daemon_ignores_sigterm_and_lies_about_shutdown(sim: SimLayout) -> None:
    client = _started(sim, "stubborn-daemon")
    assert client.hello is not None
    daemon = psutil.Process(client.hello["supervisorPid"])
    daemon.send_signal(signal.SIGTERM)
    client.send(shutdown_envelope("s"))
    assert client.read_all() == [
        {"id": "s", "type": "response", "command": "shutdown", "success": True},
        {"type": "daemon_closing", "reason": "shutdown"},
    ]
    time.sleep(0.3)
    assert daemon.is_running() and daemon.status() != psutil.STATUS_ZOMBIE
    assert DaemonClient(sim.socket).hello is not None  # still serving
    daemon.kill()  # only SIGKILL ends it
    assert wait_gone(daemon.pid)
    (catalog,) = sim.processes()  # orphaned, but still findable by its environment
    catalog.terminate()  # the catalog itself does not ignore SIGTERM
    assert wait_gone(catalog.pid)


def _is_subreaper() -> bool:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    flag = ctypes.c_int(0)
    return (
        libc.prctl(37, ctypes.byref(flag), 0, 0, 0) == 0 and flag.value == 1
    )  # PR_GET_CHILD_SUBREAPER
