"""opencode (``--agent opencode``): the real client (``opencode run``), headless and offline
apart from its model endpoint.

Per item it gets its own ``HOME``, ``XDG_{DATA,CONFIG,STATE,CACHE}_HOME`` and ``TMPDIR``
(its database lands in ``data/opencode/``), a config file outside the repo
(``OPENCODE_CONFIG``) declaring one provider from the caller's ``ANTHROPIC_API_KEY`` and
``ANTHROPIC_BASE_URL`` (opencode's bundled Anthropic provider), the offline switches, and
nothing else of the caller's environment. The prompt goes on stdin. Nothing outlives the
client, so there is no stop step; collection copies the database (with its write-ahead log),
stdout and the artifact. See docs/reference/agents/opencode.md for the formats.
"""

from __future__ import annotations

import shutil
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
from harness.agents.opencode.collect import Bundle, copy_run, scorer_inputs
from harness.agents.opencode.install import ripgrep_beside
from harness.agents.opencode.launch import (
    OPENCODE_VERSION,
    OpenCodePaths,
    Provider,
    credentials,
    make_dirs,
    opencode_env,
    run_args,
    write_config,
)
from harness.agents.opencode.task import opencode_task
from harness.errors import AgentLaunchError
from scorers import RunEvidence
from scorers.types import Manifest

if TYPE_CHECKING:
    from harness.model.trajectory import Swarm

#: What a run's model API is to the scripted server: Anthropic Messages, played with
#: opencode's tools (``task``, ``read``, ``write``).
MODEL_API = "anthropic-messages:opencode"
#: The key written into the config when the caller has none (the endpoint then refuses).
NO_KEY = "no-key"


class OpenCodeAdapter(AgentAdapter):
    """opencode's client (binary ``opencode`` unless ``--agent-bin``)."""

    name: ClassVar[str] = "opencode"
    default_binary: ClassVar[str | None] = "opencode"
    model_api: ClassVar[str | None] = MODEL_API
    binary_env: ClassVar[str | None] = "OPENCODE_BIN"
    credentials_hint: ClassVar[str] = "ANTHROPIC_API_KEY"
    install_hint: ClassVar[str] = pinned_install_hint("opencode", OPENCODE_VERSION, "opencode")
    pinned_version: ClassVar[str | None] = OPENCODE_VERSION
    agent_env_note: ClassVar[str] = (
        "opencode 1.18.33 has no setting for its retries: it retries a retryable provider "
        "error 5 times (2 s, doubling; a retry-after honoured)"
    )

    @classmethod
    def install(cls, target: Path | None, log: Callable[[str], None]) -> Path:
        from harness.agents.opencode.install import install

        return install(target, log)

    def task_text(self, fixture: Any) -> str:
        return fixture.agent_task(self.name) or opencode_task(fixture)

    def preflight(
        self, env: Mapping[str, str], agent_home: Path | None = None
    ) -> list[tuple[str, bool, str]]:
        key, root = credentials(env)
        rg = self._ripgrep(env)
        return [
            (
                "credentials",
                key is not None,
                "ANTHROPIC_API_KEY" if key else "no ANTHROPIC_API_KEY",
            ),
            ("endpoint", True, f"{root} (every --model provider is served there)"),
            (
                "ripgrep",
                rg is not None,
                str(rg) if rg else "no rg on PATH or beside the client: it would download one",
            ),
            ("pinned version", True, f"tested with {OPENCODE_VERSION}"),
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
        """Point the client at a model server (the selftest's): its Anthropic endpoint."""
        return {
            "ANTHROPIC_BASE_URL": base_url.removesuffix("/v1"),
            "ANTHROPIC_API_KEY": "scripted-no-key",
        }

    def _ripgrep(self, env: Mapping[str, str]) -> Path | None:
        """The dir of the ``rg`` the client gets: beside the installed client, else PATH's."""
        try:
            binary = Path(resolve_binary(self.binary)[0])
        except AgentLaunchError:
            binary = None
        beside = ripgrep_beside(binary) if binary is not None else None
        if beside is not None:
            return beside
        found = shutil.which("rg", path=env.get("PATH"))
        return Path(found).parent if found else None

    def prepare(
        self, paths: ItemPaths, item: ItemSpec, base_env: Mapping[str, str], token: str
    ) -> Launch:
        oc = OpenCodePaths(paths.root, paths.repo)
        make_dirs(oc)
        key, root = credentials(base_env)
        provider, _, model_id = item.model.partition("/")
        config = write_config(oc, Provider(provider, root, key or NO_KEY, (model_id,)))
        oc.task.write_text(item.task_text, encoding="utf-8")
        rg = self._ripgrep(base_env)
        env = opencode_env(oc, base_env.get("PATH", ""), token, [rg] if rg else [])
        return Launch(
            argv=run_args(self.client_model(item.model), item.key),
            env=env,
            env_set=sorted(env),
            credential_files=(config,),
            state={"root": str(paths.root), "artifact": item.manifest.artifact},
            record={"opencode_provider": provider, "ripgrep": str(rg) if rg else None},
            stdin=oc.task,
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
            OpenCodePaths(root, root / "repo"),
            Bundle(item_dir),
            str(launch.state["artifact"]),
            stdout,
            stderr,
            secrets,
        )
        return Collected(
            notes=copied.notes,
            truncated=copied.truncated,
            record={"files": list(copied.files)},
        )

    def evidence(self, item_dir: Path, meta: Mapping[str, Any], manifest: Manifest) -> RunEvidence:
        from scorers.opencode import opencode_evidence

        return opencode_evidence(scorer_inputs(Bundle(item_dir), manifest.artifact))

    def swarm(
        self, item_dir: Path, meta: Mapping[str, Any], evidence: RunEvidence, manifest: Manifest
    ) -> Swarm:
        from harness.agents.opencode.trajectory import build_swarm

        return build_swarm(item_dir, meta, evidence)
