"""How the agent under test is launched (CONTRACT §1): argv, scrubbed environment."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.errors import AgentLaunchError, UsageError
from harness.procs import ITEM_TOKEN_VAR
from harness.workspace import GIT_LEAK_VARS, Workspace
from scorers.types import Manifest

#: Variables an embedding agent session would leak into ours (depth, worker identity).
STRIPPED_VARS = frozenset(
    {
        "RLM_DEPTH",
        "RLM_MAX_DEPTH",
        "PRIME_AGENT_BASH_SHELL",
        "PRIME_AGENT_BASH_COMMAND_PREFIX",
        *GIT_LEAK_VARS,
    }
)
STRIPPED_PREFIXES = ("PRIME_AGENT_INTERNAL_", "PI_INTERNAL_", "SWARM_HARNESS_")

#: Where the simulated agent learns the answers; only ever set for ``--agent sim``.
SIM_ORACLE_VAR = "SWARM_HARNESS_SIM_ORACLE"
SIM_SCRIPT = Path(__file__).resolve().parent / "sim" / "agent.py"
SIM_MODEL = "sim/oracle"
SIM_BEHAVIOURS_DEFAULT = "honest"


@dataclass(frozen=True)
class AgentSpec:
    """Which agent to run: the real CLI (a binary) or the simulated one with behaviours."""

    binary: str | None = None
    sim_behaviours: str | None = None
    seed: int = 0

    @property
    def is_sim(self) -> bool:
        return self.sim_behaviours is not None

    @classmethod
    def parse(cls, agent: str, agent_bin: str, seed: int = 0) -> AgentSpec:
        """``agent`` is ``prime-agent`` (run ``agent_bin``) or ``sim[:BEHAVIOURS]``."""
        if agent == "prime-agent":
            return cls(binary=agent_bin, seed=seed)
        if agent == "sim" or agent.startswith("sim:"):
            behaviours = agent.partition(":")[2] or SIM_BEHAVIOURS_DEFAULT
            _check_sim_behaviours(behaviours)
            return cls(sim_behaviours=behaviours, seed=seed)
        raise UsageError(f"--agent: expected 'prime-agent' or 'sim[:BEHAVIOUR]', got {agent!r}")

    def label(self) -> str:
        return f"sim:{self.sim_behaviours}" if self.is_sim else str(self.binary)

    def resolve_command(self) -> list[str]:
        """The argv prefix that starts the agent; raises AgentLaunchError if unusable."""
        if self.is_sim:
            # -S: the sim is standard-library only; skipping site halves its start-up.
            return [sys.executable, "-S", str(SIM_SCRIPT)]
        assert self.binary is not None
        found = shutil.which(self.binary) if os.sep not in self.binary else self.binary
        if not found or not Path(found).exists():
            raise AgentLaunchError(f"agent binary not found: {self.binary}")
        if not os.access(found, os.X_OK) or Path(found).is_dir():
            raise AgentLaunchError(f"agent binary is not executable: {found}")
        return [found]


def _check_sim_behaviours(spec: str) -> None:
    """Refuse a behaviour spec the sim would refuse, before anything runs (not per item)."""
    # The sim's own parser, so the two can never disagree; it is standard-library only.
    from harness.sim.config import SimUsageError, parse_behaviours

    try:
        parse_behaviours(spec)
    except SimUsageError as exc:
        raise UsageError(f"--agent sim:{spec}: {exc}") from exc


def agent_argv(prefix: list[str], ws: Workspace, model: str, task_text: str) -> list[str]:
    """Exactly the contract's command line."""
    return [
        *prefix,
        "--mode",
        "json",
        "--daemon-socket",
        str(ws.socket),
        "--cwd",
        str(ws.repo),
        "--session-dir",
        str(ws.sessions),
        "--model",
        model,
        "--",
        task_text,
    ]


#: The product's telemetry switches (bundle: ``isTelemetryEnabled``; CONTRACT §7). Either
#: one turns it off; an eval item must not phone home, and every fresh agent home would
#: count as a new installation.
TELEMETRY_OFF = {"PRIME_AGENT_TELEMETRY": "0", "DO_NOT_TRACK": "1"}
#: Where the daemon supervisor keeps its ownership registry (default
#: ``~/.prime/supervisor-owners``); the product reads this internal variable itself.
SUPERVISOR_REGISTRY_VAR = "PRIME_AGENT_INTERNAL_DAEMON_SUPERVISOR_REGISTRY_DIR"


def agent_env(
    base: Mapping[str, str], ws: Workspace, token: str
) -> tuple[dict[str, str], list[str]]:
    """The caller's env minus leaking variables, plus the isolation variables.

    Isolation covers what the product writes outside its agent home (CONTRACT §7): HOME,
    TMPDIR and IPYTHONDIR point into the item's workdir, and telemetry is off.

    Returns the environment and the sorted names the harness set (recorded in item.json;
    values never are).
    """
    env = {
        k: v
        for k, v in base.items()
        if k not in STRIPPED_VARS and not k.startswith(STRIPPED_PREFIXES)
    }
    home = str(ws.agent_home)
    sessions = str(ws.sessions)
    added = {
        "PRIME_AGENT_CODING_AGENT_DIR": home,
        "PI_CODING_AGENT_DIR": home,
        "PRIME_AGENT_SESSION_DIR": sessions,
        "PI_SESSION_DIR": sessions,
        "PRIME_AGENT_CODING_AGENT_SESSION_DIR": sessions,
        "PI_CODING_AGENT_SESSION_DIR": sessions,
        ITEM_TOKEN_VAR: token,
        "HOME": str(ws.home),
        "TMPDIR": str(ws.tmp),
        "IPYTHONDIR": str(ws.home / ".ipython"),
        SUPERVISOR_REGISTRY_VAR: str(ws.home / ".prime" / "supervisor-owners"),
        **TELEMETRY_OFF,
    }
    env.update(added)
    return env, sorted(added)


def write_sim_oracle(ws: Workspace, spec: AgentSpec, manifest: Manifest, key: str) -> Path:
    """Hand the simulated agent its answers out of band, outside the repo."""
    oracle = {
        "behaviours": spec.sim_behaviours,
        "seed": spec.seed,
        "key": key,
        "artifact": manifest.artifact,
        "shards": [
            {"file": s.file, "worker": s.worker, "expected": s.expected} for s in manifest.shards
        ],
    }
    path = ws.root / "sim-oracle.json"
    path.write_text(json.dumps(oracle), encoding="utf-8")
    return path


_SECRET_MARKERS = (
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "AUTH",
    "CREDENTIAL",
    "ACCESS",
    "REFRESH",
)

#: Shorter values are too likely to occur by chance in transcripts to be worth redacting.
MIN_SECRET_LEN = 8


def secret_values(env: Mapping[str, str], agent_home: Path) -> list[bytes]:
    """Credential values that must never land in a file the harness writes.

    Values of environment variables whose names look like credentials, and values under
    credential-like keys of the isolated ``auth.json``. Longest first, for redaction.
    """
    values = {v for k, v in env.items() if _secret_name(k) and k != ITEM_TOKEN_VAR}
    auth = agent_home / "auth.json"
    if auth.is_file():
        with contextlib.suppress(OSError, ValueError):
            values.update(_secret_strings(json.loads(auth.read_text(encoding="utf-8")), False))
    keep = {v.encode() for v in values if len(v) >= MIN_SECRET_LEN}
    return sorted(keep, key=len, reverse=True)


def _secret_name(name: str) -> bool:
    return any(m in name.upper() for m in _SECRET_MARKERS)


def _secret_strings(node: object, under_secret: bool) -> set[str]:
    if isinstance(node, str):
        return {node} if under_secret else set()
    found: set[str] = set()
    if isinstance(node, dict):
        for k, v in node.items():
            found |= _secret_strings(v, under_secret or _secret_name(str(k)))
    elif isinstance(node, list):
        for v in node:
            found |= _secret_strings(v, under_secret)
    return found
