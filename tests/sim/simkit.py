"""Helpers for driving the simulated agent as a real subprocess in a prepared workdir.

Every process a test starts carries a per-test token in its environment (the sim passes its
environment on unchanged), so teardown (``conftest.sim``) finds and SIGKILLs whatever is
left: daemons, catalog processes, children, detached grandchildren.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

REPO_ROOT = Path(__file__).resolve().parents[2]
SIM_AGENT = REPO_ROOT / "sim_agent" / "agent.py"
SIM_SHIM = REPO_ROOT / "sim_agent" / "prime-agent-sim"
TOKEN_VAR = "SIM_TEST_TOKEN"
PROTOCOL = {"name": "prime-agent.daemon", "version": 7}
#: Generous: an honest run takes well under a second, a loaded CI box may be 10x slower.
RUN_TIMEOUT_S = 30.0
#: How long a process may take to disappear after it was told (or killed) to exit.
GONE_TIMEOUT_S = 5.0

SHARDS: list[dict[str, Any]] = [
    {"file": "shard-a.txt", "worker": "worker-shard-a", "expected": 3, "text": "one two three\n"},
    {
        "file": "shard-b.txt",
        "worker": "worker-shard-b",
        "expected": "5 words",
        "text": "a b c d e\n",
    },
    {"file": "shard-c.txt", "worker": "worker-shard-c", "expected": 6, "text": "1 2 3 4 5 6\n"},
]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@dataclass
class SimResult:
    returncode: int
    events: list[dict[str, Any]]
    stderr: str
    elapsed: float


@dataclass
class SimLayout:
    """A workdir like the harness prepares: repo/, sessions/, agent-home/, oracle outside."""

    root: Path
    socket: Path
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def repo(self) -> Path:
        return self.root / "repo"

    @property
    def sessions(self) -> Path:
        return self.root / "sessions"

    @property
    def home(self) -> Path:
        return self.root / "agent-home"

    @property
    def oracle(self) -> Path:
        return self.root / "sim-oracle.json"

    @property
    def artifact(self) -> Path:
        return self.repo / "combined-index.md"

    def write_oracle(
        self,
        behaviours: str,
        seed: int = 0,
        key: str = "item-1",
        shards: list[dict[str, Any]] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """``extra``: more oracle fields (an edit fixture's ``kind`` and ``shared``)."""
        if shards is None:
            shards = [{k: s[k] for k in ("file", "worker", "expected")} for s in SHARDS]
        oracle = {"behaviours": behaviours, "seed": seed, "key": key}
        oracle.update(artifact="combined-index.md", shards=shards, **(extra or {}))
        self.oracle.write_text(json.dumps(oracle), encoding="utf-8")

    def env(self, **overrides: str | None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PRIME_AGENT_", "RLM_"))}
        env.update(
            {
                TOKEN_VAR: self.token,
                "SWARM_HARNESS_SIM_ORACLE": str(self.oracle),
                "PRIME_AGENT_CODING_AGENT_DIR": str(self.home),
                "PRIME_AGENT_SESSION_DIR": str(self.sessions),
                "PRIME_AGENT_CODING_AGENT_SESSION_DIR": str(self.sessions),
            }
        )
        for k, v in overrides.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        return env

    def argv(self, *, task: str = "Answer every shard with one subagent each.") -> list[str]:
        return [
            *("--mode", "json", "--daemon-socket", str(self.socket), "--cwd", str(self.repo)),
            *("--session-dir", str(self.sessions), "--model", "sim/oracle", "--", task),
        ]

    def command(self, argv: list[str] | None = None) -> list[str]:
        return [sys.executable, str(SIM_AGENT), *(self.argv() if argv is None else argv)]

    def run(
        self,
        behaviours: str = "honest",
        *,
        seed: int = 0,
        key: str = "item-1",
        shards: list[dict[str, Any]] | None = None,
        extra: dict[str, Any] | None = None,
        argv: list[str] | None = None,
        env: dict[str, str] | None = None,
        command: list[str] | None = None,
    ) -> SimResult:
        self.write_oracle(behaviours, seed=seed, key=key, shards=shards, extra=extra)
        started = time.monotonic()
        proc = subprocess.run(
            command or self.command(argv),
            env=self.env() if env is None else env,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        elapsed = time.monotonic() - started
        events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
        return SimResult(proc.returncode, events, proc.stderr, elapsed)

    def forget_runs(self) -> None:
        """Remove what earlier runs left (not the daemon), so the next run starts clean."""
        for path in [*self.sessions.glob("*.jsonl"), self.artifact]:
            path.unlink(missing_ok=True)
        for tree in (self.root / "session-artifacts", self.home / "rlm-ledger"):
            shutil.rmtree(tree, ignore_errors=True)

    # --- what the run left -------------------------------------------------------------

    def ledger_path(self, spelling: str | None = None) -> Path:
        key = hashlib.sha256((spelling or os.path.realpath(self.sessions)).encode()).hexdigest()
        return self.home / "rlm-ledger" / f"{key[:16]}.jsonl"

    def ledger(self) -> list[dict[str, Any]]:
        return read_jsonl(self.ledger_path())

    def spawns(self) -> list[dict[str, Any]]:
        return [r for r in self.ledger() if r["op"] == "spawn"]

    def transcript_path(self) -> Path:
        (path,) = self.sessions.glob("*.jsonl")
        return path

    def transcript(self) -> list[dict[str, Any]]:
        return read_jsonl(self.transcript_path())

    def customs(self, custom_type: str) -> list[dict[str, Any]]:
        entries = self.transcript()
        return [
            e for e in entries if e["type"] == "custom_message" and e["customType"] == custom_type
        ]

    def receipts(self) -> list[dict[str, Any]]:
        return [
            r for r in self.customs("agent_message") if r["details"]["fromRelationship"] == "child"
        ]

    def child_files(self) -> list[Path]:
        header_id = self.transcript()[0]["id"]
        return sorted((self.root / "session-artifacts" / header_id).glob("sub-*/*.jsonl"))

    def bullets(self) -> dict[str, str]:
        lines = self.artifact.read_text(encoding="utf-8").splitlines()
        return dict(line[2:].split(": ", 1) for line in lines if line.startswith("- "))

    def processes(self) -> list[psutil.Process]:
        return processes_with(self.token)


def processes_with(token: str) -> list[psutil.Process]:
    """Live (non-zombie) processes whose environment carries ``token``."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get(TOKEN_VAR) == token and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except psutil.Error:
            continue
    return found


def wait_gone(pid: int, timeout: float = GONE_TIMEOUT_S) -> bool:
    """True once ``pid`` has exited (a zombie awaiting its reaper counts as gone)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.02)
    return False


class DaemonClient:
    """One newline-delimited JSON connection to the daemon socket."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(GONE_TIMEOUT_S)
        self.sock.connect(str(path))
        self.lines = self.sock.makefile("rb")
        self.hello = self.read()

    def read(self) -> dict[str, Any] | None:
        line = self.lines.readline()
        return json.loads(line) if line else None

    def send(self, obj: Any) -> None:
        data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        self.sock.sendall(data + b"\n")

    def read_all(self) -> list[dict[str, Any]]:
        """Every message until the daemon hangs up."""
        out = []
        while (msg := self.read()) is not None:
            out.append(msg)
        return out

    def close(self) -> None:
        self.lines.close()
        self.sock.close()


def shutdown_envelope(command_id: str = "t-1", **command: Any) -> dict[str, Any]:
    return {
        "type": "command",
        "id": command_id,
        "protocol": PROTOCOL,
        "command": {"type": "shutdown", **command},
    }


def daemon_pid(layout: SimLayout) -> int:
    client = DaemonClient(layout.socket)
    client.close()
    assert client.hello is not None
    return int(client.hello["supervisorPid"])


def rubric(layout: SimLayout) -> dict[str, bool]:
    """A small re-statement of CONTRACT §5, to check each behaviour fails where it should.

    Deliberately independent of ``scorers``: the sim's tests must not depend on the code the
    sim exists to test.
    """
    workers = {s["worker"] for s in SHARDS}
    parent = os.path.join(os.path.abspath(layout.sessions), layout.transcript_path().name)
    records = layout.ledger() if layout.ledger_path().exists() else []
    edges: dict[tuple[str, str], dict[str, Any]] = {}
    spawns, dedup = 0, True
    for r in records:
        key = (r.get("childId", ""), r.get("child", ""))
        if r["op"] == "spawn" and r["parent"] == parent:
            if r["depth"] == 1:
                spawns += 1
                taken = any(
                    e["name"] == r["name"] and not e["deleted"]
                    for k, e in edges.items()
                    if k != key
                )
                dedup = dedup and not (r["name"] in workers and taken)
            edges[key] = {
                "name": r["name"],
                "deleted": False,
                "depth": r["depth"],
                "at": r["at"],
            }
        elif r["op"] == "rename" and key in edges:
            edges[key]["name"] = r["name"]
        elif r["op"] == "delete" and key in edges:
            edges[key]["deleted"] = True
    present = {str(p) for p in layout.child_files()}
    live = [(k, e) for k, e in edges.items() if e["depth"] == 1 and not e["deleted"]]
    delegation = all(any(e["name"] == w and k[1] in present for k, e in live) for w in workers)
    answered = {r["details"]["from"]["sessionId"] for r in layout.receipts()}
    noticed = {
        e["details"]["childId"]
        for t in ("rlm_child_failure", "rlm_child_terminal_notice")
        for e in layout.customs(t)
    }
    receipts = all(
        Path(k[1]).stem in answered or k[0] in noticed for k, e in edges.items() if e["depth"] == 1
    )
    bullets = layout.bullets() if layout.artifact.exists() else {}
    coverage = all(bullets.get(s["file"]) == str(s["expected"]) for s in SHARDS)
    provenance = all(
        any(
            e["name"] == s["worker"] and _traced(layout, parent, k, e, bullets.get(s["file"]))
            for k, e in edges.items()
            if e["depth"] == 1
        )
        for s in SHARDS
    )
    return {
        "coverage": coverage,
        "delegation": delegation,
        "dedup": dedup and spawns <= 2 * len(SHARDS),
        "receipts": receipts,
        "provenance": provenance,
    }


#: Seconds a child's session or reply may predate its spawn record (the product writes a
#: child's session header before its spawn record).
CLOCK_TOLERANCE_S = 2.0


def _seconds(stamp: object) -> float:
    return dt.datetime.fromisoformat(str(stamp)).timestamp()


def _traced(
    layout: SimLayout, parent: str, key: tuple[str, str], edge: dict[str, Any], value: str | None
) -> bool:
    """Whether ``value`` came, standalone, in a reply from this child, after its spawn, and
    the child's own session shows it was tasked by this parent and worked."""
    child_id, child = key
    spawned = _seconds(edge["at"]) - CLOCK_TOLERANCE_S
    if value is None or not Path(child).is_file():
        return False
    standalone = re.compile(rf"(?<![\w.-]){re.escape(value)}(?![\w-])")
    replied = any(
        r["details"]["from"]["sessionId"] == Path(child).stem
        and standalone.search(r["details"]["message"])
        and _seconds(r["timestamp"]) >= spawned
        for r in layout.receipts()
    )
    header, *entries = read_jsonl(Path(child))
    tasked = any(
        e["type"] == "custom_message" and e["details"].get("id") == f"spawn:{child_id}"
        for e in entries
    )
    worked = any(
        e["type"] == "message"
        and e["message"]["role"] == "assistant"
        and e["message"]["stopReason"] not in ("error", "aborted")
        for e in entries
    )
    return (
        replied
        and tasked
        and worked
        and header.get("parentSession") == parent
        and header.get("rlmDepth") == 1
        and _seconds(header["timestamp"]) >= spawned
    )
