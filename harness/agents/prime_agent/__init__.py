"""prime-agent: launched per its contract (docs/reference/agents/prime-agent.md), with its daemon.

Its own dirs in the workdir: ``sessions/`` (created before launch, passed as its realpath),
``session-artifacts/`` (written by the agent), ``agent-home/`` (the isolated
``PRIME_AGENT_CODING_AGENT_DIR``, holding copies of the user's auth.json and models.json
only) and ``daemon.sock``. After the CLI exits, its detached daemon is told to shut down.

Two drives (``--agent prime-agent[:resident]``): the one-shot ``--mode json`` CLI, which
completes its session when its parent's turn ends; and the resident drive (``resident.py``,
run in the CLI's place), a client of the daemon protocol that keeps the session until the
swarm is quiet. Both leave the same files; the scorer reads them the same way.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from harness.agents.base import (
    AgentAdapter,
    Collected,
    ItemPaths,
    ItemSpec,
    Launch,
    StopOutcome,
)
from harness.agents.prime_agent.bundle import copy_bundle
from harness.agents.prime_agent.collect import (
    Layout,
    Located,
    locate,
    scorer_inputs,
    sessions_spellings,
)
from harness.agents.prime_agent.daemon import (
    SOCKET_APPEAR_WAIT_S,
    SOCKET_PRESENT_WAIT_S,
    shutdown_daemon,
)
from harness.agents.prime_agent.home import copy_agent_home, credential_checks, source_agent_home
from harness.errors import UsageError
from harness.files import copy_capped
from scorers import RunEvidence
from scorers.prime_agent import collect_evidence
from scorers.types import Manifest

if TYPE_CHECKING:
    from harness.model.trajectory import Swarm

#: Variables an embedding prime-agent session would leak into ours (depth, worker identity).
STRIPPED_VARS = frozenset(
    {"RLM_DEPTH", "RLM_MAX_DEPTH", "PRIME_AGENT_BASH_SHELL", "PRIME_AGENT_BASH_COMMAND_PREFIX"}
)
STRIPPED_PREFIXES = ("PRIME_AGENT_INTERNAL_", "PI_INTERNAL_")

#: The product's telemetry switches (bundle: ``isTelemetryEnabled``; contract §7). Either
#: one turns it off; an eval item must not phone home, and every fresh agent home would
#: count as a new installation.
TELEMETRY_OFF = {"PRIME_AGENT_TELEMETRY": "0", "DO_NOT_TRACK": "1"}
#: Where the daemon supervisor keeps its ownership registry (default
#: ``~/.prime/supervisor-owners``); the product reads this internal variable itself.
SUPERVISOR_REGISTRY_VAR = "PRIME_AGENT_INTERNAL_DAEMON_SUPERVISOR_REGISTRY_DIR"

#: The resident drive's client, run in the CLI's place (standard library only).
RESIDENT_DRIVER = Path(__file__).resolve().parent / "resident.py"
#: What ``--agent prime-agent:OPTION`` takes: the drive.
RESIDENT = "resident"
#: The drive's own record in the workdir (and the bundle): the daemon's facts, the
#: command timeline, how it ended.
RESIDENT_RECORD = "resident.json"
#: It holds a line per command and per resync: a few kilobytes.
MAX_RECORD_BYTES = 1 << 20


def agent_argv(
    prefix: list[str], state: Mapping[str, Any], model: str, task_text: str
) -> list[str]:
    """Exactly the contract's command line."""
    return [
        *prefix,
        "--mode",
        "json",
        "--daemon-socket",
        str(state["socket"]),
        "--cwd",
        str(state["repo"]),
        "--session-dir",
        str(state["sessions"]),
        "--model",
        model,
        "--",
        task_text,
    ]


def prime_env(paths: ItemPaths, agent_home: Path, sessions: Path) -> dict[str, str]:
    """The variables the contract adds, and what keeps the product's writes in the item
    (contract §7): IPython's profile and the supervisor registry in the private HOME,
    telemetry off."""
    home, sess = str(agent_home), str(sessions)
    return {
        "PRIME_AGENT_CODING_AGENT_DIR": home,
        "PI_CODING_AGENT_DIR": home,
        "PRIME_AGENT_SESSION_DIR": sess,
        "PI_SESSION_DIR": sess,
        "PRIME_AGENT_CODING_AGENT_SESSION_DIR": sess,
        "PI_CODING_AGENT_SESSION_DIR": sess,
        "IPYTHONDIR": str(paths.home / ".ipython"),
        SUPERVISOR_REGISTRY_VAR: str(paths.home / ".prime" / "supervisor-owners"),
        **TELEMETRY_OFF,
    }


class PrimeAgentAdapter(AgentAdapter):
    """The real prime-agent CLI (``--agent prime-agent``, binary from ``--agent-bin``)."""

    name: ClassVar[str] = "prime-agent"
    default_binary: ClassVar[str | None] = "prime-agent"
    model_api: ClassVar[str | None] = "openai-completions"
    binary_env: ClassVar[str | None] = "PRIME_AGENT_BIN"
    credentials_hint: ClassVar[str] = (
        "auth.json in the agent home, or a provider's *_API_KEY variable"
    )
    #: Its session workers listen in ``$TMPDIR/prime-agent-<uid>/`` (the item's ``tmp/``):
    #: a path over the kernel's limit makes the daemon fail ("Timed out connecting to
    #: daemon session worker"). 10-digit uid, 12-hex ids.
    longest_socket: ClassVar[str | None] = (
        "tmp/prime-agent-4294967295/worker-000000000000-000000000000.sock"
    )
    install_hint: ClassVar[str] = (
        "prime-agent is not redistributed with the harness: install your own CLI and pass "
        "--agent-bin PATH (or put prime-agent on PATH)"
    )
    #: The drive: ``--agent prime-agent:resident``.
    takes_options: ClassVar[bool] = True

    def __init__(self, options: str = "", binary: str | None = None, seed: int = 0) -> None:
        super().__init__(options, binary, seed)
        self.resident = self._drive_option(options) == RESIDENT

    def _drive_option(self, options: str) -> str:
        """The drive named in ``options`` ("" for the one-shot CLI); UsageError otherwise."""
        if options not in ("", RESIDENT):
            raise UsageError(
                f"--agent {self.name}:{options}: the options name the drive; "
                f"'{self.name}' runs the one-shot CLI, '{self.name}:{RESIDENT}' a resident "
                "session over the daemon protocol"
            )
        return options

    @property
    def drive(self) -> str:
        return RESIDENT if self.resident else "one-shot"

    def agent_command(self) -> list[str]:
        """The argv prefix that starts the prime-agent CLI itself."""
        return super().resolve_command()

    def version_command(self) -> list[str]:
        return self.agent_command()

    def drive_check(self) -> tuple[bool, str] | None:
        """The resident drive needs the daemon's quiescence barrier: asked of the daemon."""
        if not self.resident:
            return None
        from harness.agents.prime_agent.probe import resident_check

        return resident_check(self.agent_command())

    def resolve_command(self) -> list[str]:
        """The CLI, or for the resident drive its client, which starts the CLI's daemon."""
        agent = self.agent_command()
        if not self.resident:
            return agent
        return [sys.executable, "-I", "-S", str(RESIDENT_DRIVER), *agent, "--"]

    def preflight(
        self, env: Mapping[str, str], agent_home: Path | None = None
    ) -> list[tuple[str, bool, str]]:
        # The items copy their credentials from the run's agent home when it has one (the
        # selftest's, holding the scripted server's models.json), else from the user's.
        return credential_checks(agent_home or source_agent_home(env), env)

    def endpoints(self, env: Mapping[str, str], agent_home: Path | None = None) -> tuple[str, ...]:
        """The custom providers' roots its models.json declares (a built-in provider's the
        client knows itself, and they are not checked)."""
        path = (agent_home or source_agent_home(env)) / "models.json"
        try:
            providers = json.loads(path.read_text(encoding="utf-8")).get("providers") or {}
        except (OSError, ValueError, AttributeError):
            return ()
        if not isinstance(providers, dict):
            return ()
        urls = (p.get("baseUrl") for p in providers.values() if isinstance(p, dict))
        return tuple(sorted({u for u in urls if isinstance(u, str) and u}))

    def scripted_endpoint(
        self,
        base_url: str,
        models_json: Mapping[str, Any],
        home: Path,
        models: Sequence[str] = (),
    ) -> dict[str, str]:
        """The server's provider goes into the models.json the item homes copy."""
        (home / "models.json").write_text(json.dumps(models_json), encoding="utf-8")
        return {}

    def prepare(
        self, paths: ItemPaths, item: ItemSpec, base_env: Mapping[str, str], token: str
    ) -> Launch:
        sessions_raw = paths.root / "sessions"
        sessions_raw.mkdir()
        sessions = Path(os.path.realpath(sessions_raw))
        agent_home = paths.root / "agent-home"
        agent_home.mkdir(mode=0o700)
        source = item.credentials_source or source_agent_home(os.environ)
        copy_agent_home(source, agent_home)
        env = {
            k: v
            for k, v in base_env.items()
            if k not in STRIPPED_VARS and not k.startswith(STRIPPED_PREFIXES)
        }
        added = prime_env(paths, agent_home, sessions)
        env.update(added)
        state = {
            "root": paths.root,
            "repo": paths.repo,
            "sessions": sessions,
            "agent_home": agent_home,
            "socket": paths.root / "daemon.sock",
            "artifact": item.manifest.artifact,
        }
        record = {
            "drive": self.drive,
            "sessions_dir": str(sessions),
            "sessions_spellings": list(sessions_spellings(sessions)),
        }
        if self.resident:
            argv = [str(self._resident_state(paths, state, item))]
        else:
            argv = agent_argv([], state, item.model, item.task_text)
        return Launch(
            argv=argv,
            env=env,
            env_set=sorted(added),
            credential_files=(agent_home / "auth.json",),
            state=state,
            record=record,
        )

    def _resident_state(self, paths: ItemPaths, state: Mapping[str, Any], item: ItemSpec) -> Path:
        """What the resident driver needs, in a file beside the repo (outside it)."""
        path = paths.root / "resident-drive.json"
        drive = {
            "socket": str(state["socket"]),
            "repo": str(state["repo"]),
            "agent_home": str(state["agent_home"]),
            "sessions": str(state["sessions"]),
            "model": item.model,
            "task": item.task_text,
            "record": str(paths.root / RESIDENT_RECORD),
        }
        path.write_text(json.dumps(drive), encoding="utf-8")
        return path

    def _resident_record(self, launch: Launch) -> dict[str, Any] | None:
        path = Path(launch.state["root"]) / RESIDENT_RECORD
        try:
            found = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return found if isinstance(found, dict) else None

    def stop(self, launch: Launch, early: bool, running: Callable[[], bool]) -> StopOutcome:
        if self.resident:
            drove = self._resident_record(launch) or {}
            if drove.get("supervisor_exit") == 0:  # shut down by the drive itself
                return StopOutcome("acknowledged", "the resident drive shut the daemon down", True)
        wait = SOCKET_APPEAR_WAIT_S if early else SOCKET_PRESENT_WAIT_S
        outcome = shutdown_daemon(
            Path(launch.state["socket"]), wait_for_socket_s=wait, running=running
        )
        return StopOutcome(outcome.status, outcome.detail, clean=outcome.status == "acknowledged")

    def collect(
        self,
        launch: Launch,
        item_dir: Path,
        stdout: Path | None,
        stderr: Path | None,
        secrets: list[bytes],
    ) -> Collected:
        state = launch.state
        sessions = Path(state["sessions"])
        layout = Layout(
            sessions=sessions,
            session_artifacts=sessions.parent / "session-artifacts",
            agent_home=Path(state["agent_home"]),
            repo=Path(state["repo"]),
            stdout=stdout,
            stderr=stderr,
            sessions_spellings=sessions_spellings(sessions),
        )
        located = locate(layout, str(state["artifact"]))
        copies = copy_bundle(located, item_dir, secrets)
        record: dict[str, Any] = {
            "ledger_via": located.ledger_via,
            "parent_via": located.parent_via,
        }
        notes = list(located.notes)
        if self.resident:
            drove = self._resident_record(launch)
            if drove is None:
                notes.append("the resident drive left no record")
            else:
                copy_capped(
                    Path(state["root"]) / RESIDENT_RECORD,
                    item_dir / RESIDENT_RECORD,
                    MAX_RECORD_BYTES,
                    secrets,
                )
                record["resident"] = {
                    k: drove.get(k) for k in ("outcome", "detail", "barrier", "daemon")
                }
                lost = sum(1 for r in drove.get("resyncs") or [] if r.get("lost"))
                if lost:
                    notes.append(
                        f"the daemon resynced {lost} time(s) past the events received: "
                        "some events are missing from stdout.jsonl"
                    )
        return Collected(
            notes=tuple(notes),
            capped=tuple(located.capped),
            truncated=tuple(c.name for c in copies if c.truncated),
            record=record,
        )

    def _locate_bundle(self, item_dir: Path, meta: Mapping[str, Any], artifact: str) -> Located:
        spellings = meta.get("sessions_spellings") or []
        return locate(Layout.for_bundle(item_dir, [str(s) for s in spellings]), artifact)

    def evidence(self, item_dir: Path, meta: Mapping[str, Any], manifest: Manifest) -> RunEvidence:
        located = self._locate_bundle(item_dir, meta, manifest.artifact)
        return collect_evidence(scorer_inputs(located))

    def swarm(
        self, item_dir: Path, meta: Mapping[str, Any], evidence: RunEvidence, manifest: Manifest
    ) -> Swarm:
        from harness.agents.prime_agent.trajectory import build_swarm

        located = self._locate_bundle(item_dir, meta, manifest.artifact)
        return build_swarm(located.parent, located.children_root, located.children, evidence)
