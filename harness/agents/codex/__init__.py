"""Codex (``--agent codex``): OpenAI's Codex CLI (``codex exec``), headless and offline
apart from its model endpoint.

Per item it gets its own ``HOME``, ``TMPDIR`` and ``CODEX_HOME`` (its rollouts land in
``codex-home/sessions/``), a ``config.toml`` declaring one Responses API provider at the
caller's ``OPENAI_BASE_URL`` with the caller's ``OPENAI_API_KEY``, the offline switches,
and nothing else of the caller's environment or Codex configuration. Nothing outlives the
client, so there is no stop step; collection copies the rollouts, stdout, stderr (its log
of failed requests) and the artifact. See docs/reference/agents/codex.md for the formats.

Options (``--agent codex:OPTIONS``, comma-separated): ``v2`` switches on the second
multi-agent protocol (the ``collaboration`` tools a catalog model may get by default),
``sandbox=MODE`` picks ``codex exec --sandbox`` (default ``workspace-write``). A model
catalog named by ``CODEX_MODEL_CATALOG`` replaces Codex's bundled one (the selftest names
one for its scripted models: :mod:`harness.agents.codex.catalog`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
from harness.agents.codex.catalog import CATALOG_VAR, copy_catalog, write_catalog
from harness.agents.codex.collect import Bundle, copy_run, scorer_inputs
from harness.agents.codex.launch import (
    CODEX_VERSION,
    DEFAULT_SANDBOX,
    KEY_VAR,
    SANDBOX_MODES,
    CodexPaths,
    Settings,
    codex_env,
    credentials,
    exec_args,
    make_dirs,
    search_path,
    write_config,
)
from harness.agents.codex.task import codex_task
from harness.errors import UsageError
from scorers import RunEvidence
from scorers.types import Manifest

if TYPE_CHECKING:
    from harness.model.trajectory import Swarm

#: What a run's model API is to the scripted server: OpenAI Responses, played with Codex's
#: tools (``spawn_agent``, ``wait_agent``, ``exec_command``).
MODEL_API = "openai-responses:codex"
#: Codex's log filter: errors, plus one line per model request and per broken answer
#: stream (``codex_otel.trace_safe`` at info): the only record of a request it retried.
LOG_FILTER = "error,codex_otel.trace_safe=info"


class CodexAdapter(AgentAdapter):
    """OpenAI's Codex CLI (binary ``codex`` unless ``--agent-bin``)."""

    name: ClassVar[str] = "codex"
    default_binary: ClassVar[str | None] = "codex"
    model_api: ClassVar[str | None] = MODEL_API
    binary_env: ClassVar[str | None] = "CODEX_BIN"
    credentials_hint: ClassVar[str] = "OPENAI_API_KEY"
    takes_options: ClassVar[bool] = True
    install_hint: ClassVar[str] = pinned_install_hint("codex", CODEX_VERSION, "codex")
    pinned_version: ClassVar[str | None] = CODEX_VERSION
    agent_env_note: ClassVar[str] = (
        "Codex 0.171.0 takes its retries from config keys, not variables: the harness "
        "leaves request_max_retries (4) and stream_max_retries (5) at Codex's defaults"
    )

    def __init__(self, options: str = "", binary: str | None = None, seed: int = 0) -> None:
        super().__init__(options, binary, seed)
        self.multi_agent_v2 = False
        self.sandbox = DEFAULT_SANDBOX
        for option in filter(None, (o.strip() for o in options.split(","))):
            name, _, value = option.partition("=")
            if option == "v2":
                self.multi_agent_v2 = True
            elif name == "sandbox" and value in SANDBOX_MODES:
                self.sandbox = value
            else:
                raise UsageError(
                    f"--agent codex:{options}: unknown option {option!r} (known: v2, "
                    f"sandbox={'|'.join(SANDBOX_MODES)})"
                )

    @classmethod
    def install(cls, target: Path | None, log: Callable[[str], None]) -> Path:
        from harness.agents.codex.install import install

        return install(target, log)

    def client_model(self, model: str) -> str:
        """The client takes a bare model id: ``openai/gpt-5.5`` runs model ``gpt-5.5`` at
        the endpoint ``OPENAI_BASE_URL`` names."""
        return model.partition("/")[2]

    def task_text(self, fixture: Any) -> str:
        return fixture.agent_task(self.name) or codex_task(fixture)

    def preflight(
        self, env: Mapping[str, str], agent_home: Path | None = None
    ) -> list[tuple[str, bool, str]]:
        key, base_url = credentials(env)
        return [
            ("credentials", key is not None, KEY_VAR if key else f"no {KEY_VAR}"),
            ("endpoint", True, f"{base_url} (OPENAI_BASE_URL; the Responses API)"),
            (
                "multi-agent protocol",
                True,
                "v2 (collaboration)" if self.multi_agent_v2 else "Codex's default for the model",
            ),
            ("sandbox", True, self.sandbox),
            (
                "model catalog",
                True,
                env.get(CATALOG_VAR) or f"Codex's bundled one ({CATALOG_VAR} unset)",
            ),
            ("pinned version", True, f"tested with {CODEX_VERSION}"),
        ]

    def endpoints(self, env: Mapping[str, str], agent_home: Path | None = None) -> tuple[str, ...]:
        return (credentials(env)[1],)

    def scripted_endpoint(
        self, base_url: str, models_json: Mapping[str, Any], home: Path
    ) -> dict[str, str]:
        """Point the client at a model server (the selftest's): its Responses API root, and
        a model catalog giving every scripted model Codex's edit tool (``apply_patch``), as
        Codex's own catalog gives OpenAI's models."""
        from scripted_model import SCRIPTS_BY_API

        catalog = write_catalog(home / "codex-model-catalog.json", SCRIPTS_BY_API[MODEL_API])
        return {"OPENAI_BASE_URL": base_url, KEY_VAR: "scripted-no-key", CATALOG_VAR: str(catalog)}

    def prepare(
        self, paths: ItemPaths, item: ItemSpec, base_env: Mapping[str, str], token: str
    ) -> Launch:
        cx = CodexPaths(paths.root, paths.repo)
        make_dirs(cx)
        key, base_url = credentials(base_env)
        catalog = copy_catalog(base_env, cx.codex_home)
        config = write_config(
            cx, Settings(self.client_model(item.model), base_url, self.multi_agent_v2, catalog)
        )
        env = codex_env(cx, search_path(base_env), token, key)
        env["RUST_LOG"] = LOG_FILTER
        return Launch(
            argv=exec_args(self.sandbox, item.task_text),
            env=env,
            env_set=sorted(env),
            state={"root": str(paths.root), "artifact": item.manifest.artifact},
            record={
                "codex_endpoint": base_url,
                "codex_config": str(config.relative_to(paths.root)),
                "multi_agent": "v2" if self.multi_agent_v2 else "default",
                "sandbox": self.sandbox,
                **({"codex_model_catalog": CATALOG_VAR} if catalog else {}),
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
        copied = copy_run(
            Bundle(Path(launch.state["root"])),
            Bundle(item_dir),
            str(launch.state["artifact"]),
            stdout,
            stderr,
            secrets,
        )
        return Collected(
            notes=copied.notes,
            capped=("rollout files",) if copied.capped else (),
            truncated=copied.truncated,
            record={"files": list(copied.files)},
        )

    def evidence(self, item_dir: Path, meta: Mapping[str, Any], manifest: Manifest) -> RunEvidence:
        from scorers.codex import codex_evidence

        workers = tuple(s.worker for s in manifest.shards)
        return codex_evidence(scorer_inputs(Bundle(item_dir), manifest.artifact, workers))

    def swarm(
        self, item_dir: Path, meta: Mapping[str, Any], evidence: RunEvidence, manifest: Manifest
    ) -> Swarm:
        from harness.agents.codex.trajectory import build_swarm

        return build_swarm(item_dir, meta, evidence)
