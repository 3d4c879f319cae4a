"""Gemini CLI (``--agent gemini``): Google's Gemini CLI (``gemini -p``), headless and
offline apart from its model endpoint.

Per item it gets its own ``HOME`` (its settings, the one worker agent the parent invokes
for every shard, and its chat records below ``.gemini/``) and ``TMPDIR``, the caller's
``GEMINI_API_KEY`` and ``GOOGLE_GEMINI_BASE_URL``, and nothing else of the caller's
environment or Gemini configuration. Nothing outlives the client (it re-launches itself
as a child node process, which the item's process group holds), so there is no stop step;
collection copies the chat records, stdout, stderr and the artifact. See
docs/reference/agents/gemini.md for the formats.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from harness.agents.base import (
    AgentAdapter,
    Collected,
    ItemPaths,
    ItemSpec,
    Launch,
    pinned_install_hint,
)
from harness.agents.env import resolve_binary
from harness.agents.gemini.collect import Bundle, copy_run, scorer_inputs
from harness.agents.gemini.launch import (
    BASE_URL_VAR,
    GEMINI_VERSION,
    KEY_VAR,
    WORKER_AGENT,
    GeminiPaths,
    credentials,
    gemini_env,
    run_args,
    write_home,
)
from harness.agents.gemini.task import gemini_task
from harness.errors import AgentLaunchError
from scorers import RunEvidence
from scorers.types import Manifest

if TYPE_CHECKING:
    from harness.model.trajectory import Swarm

#: What a run's model API is to the scripted server: the Gemini API
#: (``streamGenerateContent``), played with Gemini CLI's tools (``invoke_agent``,
#: ``read_file``, ``write_file``, ``replace``, a subagent's ``complete_task``).
MODEL_API = "gemini-api:gemini"


class GeminiAdapter(AgentAdapter):
    """Google's Gemini CLI (binary ``gemini`` unless ``--agent-bin``)."""

    name: ClassVar[str] = "gemini"
    default_binary: ClassVar[str | None] = "gemini"
    model_api: ClassVar[str | None] = MODEL_API
    binary_env: ClassVar[str | None] = "GEMINI_BIN"
    credentials_hint: ClassVar[str] = KEY_VAR
    install_hint: ClassVar[str] = pinned_install_hint("gemini", GEMINI_VERSION, "gemini")
    pinned_version: ClassVar[str | None] = GEMINI_VERSION
    agent_env_note: ClassVar[str] = (
        "Gemini CLI 0.61.0 has no setting for its retries: it retries a failed model "
        "request up to 10 times, backing off, before it gives up"
    )

    @classmethod
    def install(cls, target: Path | None, log: Callable[[str], None]) -> Path:
        from harness.agents.gemini.install import install

        return install(target, log)

    def client_model(self, model: str) -> str:
        """The client takes a bare model id: ``google/gemini-2.5-flash`` runs ``-m
        gemini-2.5-flash`` at the endpoint ``GOOGLE_GEMINI_BASE_URL`` names."""
        return model.partition("/")[2]

    def task_text(self, fixture: Any) -> str:
        return fixture.agent_task(self.name) or gemini_task(fixture)

    def _node_dirs(self) -> list[Path]:
        """The node the install brought, to put first on the client's PATH (none when the
        machine's node runs it, or the binary is not found)."""
        from harness.agents.gemini.install import node_beside

        try:
            binary = Path(resolve_binary(self.binary)[0])
        except AgentLaunchError:
            return []
        beside = node_beside(binary)
        return [beside] if beside else []

    def version_command(self) -> list[str]:
        """The client on the node it runs on (the install's, when it brought one)."""
        command = self.resolve_command()
        nodes = self._node_dirs()
        return [str(nodes[0] / "node"), *command] if nodes else command

    def preflight(
        self, env: Mapping[str, str], agent_home: Path | None = None
    ) -> list[tuple[str, bool, str]]:
        from harness.agents.gemini.install import MIN_NODE_MAJOR, runtime_node

        key, base_url = credentials(env)
        try:
            binary: Path | None = Path(resolve_binary(self.binary)[0])
        except AgentLaunchError:
            binary = None
        node, major = runtime_node(binary, env.get("PATH", ""))
        return [
            ("credentials", key is not None, KEY_VAR if key else f"no {KEY_VAR}"),
            ("endpoint", True, f"{base_url} ({BASE_URL_VAR}; the Gemini API)"),
            (
                "node",
                major >= MIN_NODE_MAJOR,
                f"{node} (v{major})" if node else f"no node >= {MIN_NODE_MAJOR} on PATH",
            ),
            ("worker agent", True, f"{WORKER_AGENT} (defined by the harness per item)"),
            ("pinned version", True, f"tested with {GEMINI_VERSION}"),
        ]

    def endpoints(self, env: Mapping[str, str], agent_home: Path | None = None) -> tuple[str, ...]:
        return (credentials(env)[1],)

    def scripted_endpoint(
        self,
        base_url: str,
        models_json: Mapping[str, Any],
        home: Path,
        models: Sequence[str] = (),
    ) -> dict[str, str]:
        """Point the client at a model server (the selftest's): its root, where the client
        asks ``/v1beta/models/<id>:streamGenerateContent``."""
        return {BASE_URL_VAR: base_url.removesuffix("/v1"), KEY_VAR: "scripted-no-key"}

    def prepare(
        self, paths: ItemPaths, item: ItemSpec, base_env: Mapping[str, str], token: str
    ) -> Launch:
        gp = GeminiPaths(paths.root, paths.repo)
        write_home(gp, edit=item.manifest.kind == "edit")
        key, base_url = credentials(base_env)
        env = gemini_env(gp, base_env.get("PATH", ""), token, key, base_url, self._node_dirs())
        session_id = str(uuid.uuid4())
        model = self.client_model(item.model)
        return Launch(
            argv=run_args(model, session_id, item.task_text),
            env=env,
            env_set=sorted(env),
            state={"root": str(paths.root), "artifact": item.manifest.artifact},
            record={
                "gemini_endpoint": base_url,
                "gemini_session_id": session_id,
                "gemini_model": model,
                "worker_agent": WORKER_AGENT,
            },
        )

    def collect(
        self,
        launch: Launch,
        item_dir: Path,
        stdout: Path | None,
        stderr: Path | None,
        secrets: list[bytes],
    ) -> Collected:
        root = Path(launch.state["root"])
        copied = copy_run(
            GeminiPaths(root, root / "repo"),
            Bundle(item_dir),
            str(launch.state["artifact"]),
            stdout,
            stderr,
            secrets,
        )
        return Collected(
            notes=copied.notes,
            capped=("chat records",) if copied.capped else (),
            truncated=copied.truncated,
            record={"files": list(copied.files)},
        )

    def evidence(self, item_dir: Path, meta: Mapping[str, Any], manifest: Manifest) -> RunEvidence:
        from scorers.gemini import gemini_evidence

        workers = tuple(s.worker for s in manifest.shards)
        model = self.client_model(str(meta.get("model", "")))
        return gemini_evidence(scorer_inputs(Bundle(item_dir), manifest.artifact, workers, model))

    def swarm(
        self, item_dir: Path, meta: Mapping[str, Any], evidence: RunEvidence, manifest: Manifest
    ) -> Swarm:
        from harness.agents.gemini.trajectory import build_swarm

        return build_swarm(item_dir, meta, evidence)
