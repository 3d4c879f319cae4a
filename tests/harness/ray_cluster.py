"""A real local Ray cluster for the ``distributed`` tests: a head and one worker node.

Both are ``ray start`` processes on loopback with one CPU and a small object store each,
in their own ``--temp-dir``. The head offers ``sim`` (one item at a time); the worker offers
``sim`` and ``sim-worker`` (two items), so a run with ``--ray-resource sim-worker`` can only
be placed on the worker. ``stop`` ends exactly this cluster's processes (those naming its
temp dir, and their descendants), never another Ray on the machine as ``ray stop`` would.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from harness.item.processes import terminate

#: One CPU per node and a 100 MB object store: the machine is small and shared.
NODE_ARGS = (
    "--node-ip-address=127.0.0.1",
    "--num-cpus=1",
    "--object-store-memory=100000000",
    "--disable-usage-stats",
)
#: `ray start` returns once its node is up; on a loaded 2-core machine that takes seconds.
START_TIMEOUT_S = 120
#: Grace between SIGTERM and SIGKILL when stopping the cluster.
STOP_GRACE_S = 5.0
#: How long stopping may go on finding new processes of the cluster.
STOP_ROUNDS_S = 60.0
HEAD_RESOURCES = {"sim": 1}
WORKER_RESOURCES = {"sim": 2, "sim-worker": 2}


def _ray_bin() -> str:
    return str(Path(sys.executable).parent / "ray")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Cluster:
    temp_dir: Path
    port: int
    worker_raylets: list[int] = field(default_factory=list)
    head_resources: dict[str, int] = field(default_factory=lambda: dict(HEAD_RESOURCES))
    worker_resources: dict[str, int] = field(default_factory=lambda: dict(WORKER_RESOURCES))

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        return {**os.environ, "RAY_ADDRESS": self.address}

    def _start(self, *args: str) -> None:
        # Every fixed default port taken afresh, so another Ray on the machine never clashes.
        ports = (
            f"--dashboard-agent-listen-port={_free_port()}",
            f"--metrics-export-port={_free_port()}",
            f"--runtime-env-agent-port={_free_port()}",
        )
        done = subprocess.run(
            [_ray_bin(), "start", *args, *NODE_ARGS, *ports, f"--temp-dir={self.temp_dir}"],
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S,
            env={**os.environ, "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0"},
        )
        assert done.returncode == 0, f"ray start failed: {done.stderr[-2000:]}"

    def raylets(self) -> set[int]:
        return {p.pid for p in self.processes() if p.info["name"] == "raylet"}

    def start(self) -> None:
        self._start(
            "--head",
            f"--port={self.port}",
            "--include-dashboard=false",
            f"--resources={json.dumps(self.head_resources)}",
        )
        self.add_worker()

    def add_worker(self) -> None:
        before = self.raylets()
        self._start(f"--address={self.address}", f"--resources={json.dumps(self.worker_resources)}")
        self.worker_raylets = sorted(self.raylets() - before)

    def processes(self) -> list[psutil.Process]:
        """This cluster's processes: those naming its temp dir, and their descendants."""
        mine: dict[int, psutil.Process] = {}
        marker = str(self.temp_dir)
        me = psutil.Process()
        spared = {me.pid, *(p.pid for p in me.parents())}  # whoever names the dir to stop it
        for proc in psutil.process_iter(["name", "cmdline"]):
            with contextlib.suppress(psutil.Error):
                if proc.pid not in spared and any(
                    marker in part for part in proc.info["cmdline"] or ()
                ):
                    mine[proc.pid] = proc
                    for child in proc.children(recursive=True):
                        child.info = {"name": child.name(), "cmdline": []}
                        mine.setdefault(child.pid, child)
        return list(mine.values())

    def on_worker(self, procs: list[psutil.Process]) -> bool:
        """Whether any of ``procs`` runs below the worker node's raylet (an item there)."""
        below: set[int] = set()
        for pid in self.worker_raylets:
            with contextlib.suppress(psutil.Error):
                below |= {p.pid for p in psutil.Process(pid).children(recursive=True)}
        return any(p.pid in below for p in procs)

    def kill_worker_node(self) -> None:
        """Node loss: SIGKILL the worker's raylet and every process below it at once, as a
        machine that dies would (a worker process left alive could still hand its task's
        result to the head before the node is declared dead)."""
        doomed: list[psutil.Process] = []
        for pid in self.worker_raylets:
            with contextlib.suppress(psutil.Error):
                raylet = psutil.Process(pid)
                doomed += [raylet, *raylet.children(recursive=True)]
        for proc in doomed:
            with contextlib.suppress(psutil.Error):
                proc.send_signal(signal.SIGKILL)

    def stop(self) -> None:
        # Rounds until none is left: a raylet may start a worker process after the first
        # look (on a loaded machine it is still starting one), and such a process, alive
        # past the stop, would still own the item dirs it stamped.
        deadline = time.monotonic() + STOP_ROUNDS_S
        while (procs := self.processes()) and time.monotonic() < deadline:
            terminate({p.pid: (p, "ray test cluster") for p in procs}, grace_s=STOP_GRACE_S)
        shutil.rmtree(self.temp_dir, ignore_errors=True)


@contextlib.contextmanager
def local_cluster(  # type: ignore[no-untyped-def]
    head: dict[str, int] | None = None, worker: dict[str, int] | None = None
):
    """A started cluster (``head``, ``worker``: the nodes' custom resources, by default
    the tests' own), stopped on the way out whatever happened."""
    # A short path: Ray's socket paths live under it and Unix sockets allow ~107 bytes.
    cluster = Cluster(Path(tempfile.mkdtemp(prefix="swhray-", dir="/tmp")), _free_port())
    cluster.head_resources = dict(head or HEAD_RESOURCES)
    cluster.worker_resources = dict(worker or WORKER_RESOURCES)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
