"""Claude Code (``--agent claude-code``): the real client, headless, offline-capable.

Per item it gets a private ``HOME``, ``TMPDIR``/``CLAUDE_CODE_TMPDIR`` and
``CLAUDE_CONFIG_DIR`` (all its state: transcripts land in
``claude-config/projects/<project>/``), telemetry and non-essential traffic off, and the
caller's Anthropic credentials (``ANTHROPIC_API_KEY``/``ANTHROPIC_AUTH_TOKEN`` and
``ANTHROPIC_BASE_URL``). Nothing outlives the client, so there is no stop step. See
docs/reference/agents/claude-code.md for the formats.
"""

from __future__ import annotations

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
from harness.agents.claude_code.collect import bundle_paths, locate, project_dir_name, scorer_inputs
from harness.agents.claude_code.launch import (
    CLAUDE_CODE_VERSION,
    agent_argv,
    claude_env,
)
from harness.agents.claude_code.task import claude_code_task
from harness.files import BundleCopy
from scorers import RunEvidence
from scorers.claude_code import collect_evidence
from scorers.types import Manifest

if TYPE_CHECKING:
    from harness.model.trajectory import Swarm

#: Copy caps: transcripts of real runs are kilobytes to megabytes; the artifact is a list.
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024
MAX_ARTIFACT_BYTES = 4 * 1024 * 1024


#: Where the client sends its requests without ``ANTHROPIC_BASE_URL``.
DEFAULT_ANTHROPIC_URL = "https://api.anthropic.com"


class ClaudeCodeAdapter(AgentAdapter):
    """Anthropic's Claude Code client (binary ``claude`` unless ``--agent-bin``)."""

    name: ClassVar[str] = "claude-code"
    default_binary: ClassVar[str | None] = "claude"
    #: The model API the client speaks (the scripted model server serves it in selftest).
    model_api: ClassVar[str | None] = "anthropic-messages"
    binary_env: ClassVar[str | None] = "CLAUDE_CODE_BIN"
    credentials_hint: ClassVar[str] = "ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN"
    install_hint: ClassVar[str] = pinned_install_hint("claude-code", CLAUDE_CODE_VERSION, "claude")
    pinned_version: ClassVar[str | None] = CLAUDE_CODE_VERSION
    agent_env_allowed: ClassVar[Mapping[str, str]] = {
        "CLAUDE_CODE_MAX_RETRIES": "retries of a failed model request (the client's default: 10)",
        "API_TIMEOUT_MS": "how long one model request may take, in milliseconds",
    }

    @classmethod
    def install(cls, target: Path | None, log: Callable[[str], None]) -> Path:
        from harness.agents.claude_code.install import install

        return install(target, log)

    def client_model(self, model: str) -> str:
        """The client takes a bare model id: ``anthropic/claude-sonnet-4-5`` runs
        ``--model claude-sonnet-4-5`` (its endpoint is the provider)."""
        return model.partition("/")[2]

    def task_text(self, fixture: Any) -> str:
        return fixture.agent_task(self.name) or claude_code_task(fixture)

    def preflight(
        self, env: Mapping[str, str], agent_home: Path | None = None
    ) -> list[tuple[str, bool, str]]:
        keys = [k for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN") if env.get(k)]
        detail = ", ".join(keys) if keys else "no ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN"
        endpoint = env.get("ANTHROPIC_BASE_URL") or "the client's default endpoint"
        return [
            ("credentials", bool(keys), detail),
            ("endpoint", True, endpoint),
            ("pinned version", True, f"tested with {CLAUDE_CODE_VERSION}"),
        ]

    def endpoints(self, env: Mapping[str, str], agent_home: Path | None = None) -> tuple[str, ...]:
        return (env.get("ANTHROPIC_BASE_URL") or DEFAULT_ANTHROPIC_URL,)

    def scripted_endpoint(
        self,
        base_url: str,
        models_json: Mapping[str, Any],
        home: Path,
        models: Sequence[str] = (),
    ) -> dict[str, str]:
        """Point the client at a model server (the selftest's): environment only."""
        root = base_url.removesuffix("/v1")
        return {"ANTHROPIC_BASE_URL": root, "ANTHROPIC_API_KEY": "scripted-no-key"}

    def prepare(
        self, paths: ItemPaths, item: ItemSpec, base_env: Mapping[str, str], token: str
    ) -> Launch:
        cc = bundle_paths(paths.root)
        cc.config.mkdir()
        env, added = claude_env(base_env, cc)
        return Launch(
            argv=agent_argv("claude", item.task_text, self.client_model(item.model))[1:],
            env=env,
            env_set=sorted(added),
            state={"root": paths.root, "artifact": item.manifest.artifact},
            record={"claude_project": project_dir_name(cc.repo)},
        )

    def collect(
        self,
        launch: Launch,
        item_dir: Path,
        stdout: Path | None,
        stderr: Path | None,
        secrets: list[bytes],
    ) -> Collected:
        live = bundle_paths(Path(launch.state["root"]))
        located = locate(live, str(launch.state["artifact"]))
        out = bundle_paths(item_dir)
        copied = BundleCopy(item_dir, secrets)
        copy = copied.copy

        project = out.config / "projects" / project_dir_name(live.repo)
        if located.parent is not None and located.session_id is not None:
            copy(located.parent, project / located.parent.name, MAX_TRANSCRIPT_BYTES)
            sub = project / located.session_id / "subagents"
            for agent_id, transcript, meta in located.subagents:
                copy(transcript, sub / f"agent-{agent_id}.jsonl", MAX_TRANSCRIPT_BYTES)
                copy(meta, sub / f"agent-{agent_id}.meta.json", MAX_TRANSCRIPT_BYTES)
        copy(located.artifact, out.repo / str(launch.state["artifact"]), MAX_ARTIFACT_BYTES)
        copy(stdout, out.stdout, MAX_TRANSCRIPT_BYTES)
        copy(stderr, out.stderr, MAX_TRANSCRIPT_BYTES)
        return Collected(
            notes=located.notes,
            capped=("subagent files",) if located.capped else (),
            truncated=tuple(copied.truncated),
            record={"session_id": located.session_id, "subagents": len(located.subagents)},
        )

    def evidence(self, item_dir: Path, meta: Mapping[str, Any], manifest: Manifest) -> RunEvidence:
        located = locate(bundle_paths(item_dir), manifest.artifact)
        return collect_evidence(scorer_inputs(located))

    def swarm(
        self, item_dir: Path, meta: Mapping[str, Any], evidence: RunEvidence, manifest: Manifest
    ) -> Swarm:
        from harness.agents.claude_code.trajectory import build_swarm

        return build_swarm(item_dir, meta, evidence)
