"""Prepare one item's private dirs, environment and argv for the real Claude Code client."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.agents.env import STRIPPED_PREFIXES, STRIPPED_VARS

#: The client version the harness is tested with: the one place it is pinned
#: (``agents install claude-code`` installs it), so an installed wheel knows it.
CLAUDE_CODE_VERSION = "2.1.332"

#: The tools the parent and its subagents need: spawn, read a shard, write the artifact.
ALLOWED_TOOLS = ("Agent", "Read", "Write")
#: Variables of the caller that would change what the client does or where it reports:
#: its own session/config (an embedding Claude Code session), credentials and endpoints.
CLAUDE_LEAK_VARS = frozenset(
    {
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_MODEL",
        "ANTHROPIC_SMALL_FAST_MODEL",
        "ANTHROPIC_DEFAULT_HAIKU_MODEL",
        "ANTHROPIC_DEFAULT_SONNET_MODEL",
        "ANTHROPIC_DEFAULT_OPUS_MODEL",
        "CLAUDECODE",
        "CLAUDE_CODE_ENTRYPOINT",
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_USE_VERTEX",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_CODE_SSE_PORT",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "http_proxy",
        "https_proxy",
        "ALL_PROXY",
    }
)
#: Prefixes of the same kind: anything the client reads as its own configuration.
CLAUDE_LEAK_PREFIXES = ("ANTHROPIC_", "CLAUDE_", "OTEL_")
#: Keeps the client quiet and offline apart from the model endpoint.
CLAUDE_QUIET = {
    "DO_NOT_TRACK": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


@dataclass(frozen=True)
class ClaudeCodePaths:
    """One item's private dirs, all inside its workdir."""

    workdir: Path
    repo: Path
    home: Path
    config: Path  # CLAUDE_CONFIG_DIR: projects/<project>/<session>.jsonl land here
    tmp: Path  # TMPDIR and CLAUDE_CODE_TMPDIR
    stdout: Path
    stderr: Path


#: The caller's variables that are credentials or the endpoint, passed on although the
#: rest of ``ANTHROPIC_*`` (models, proxies, an embedding session's settings) is stripped.
CREDENTIAL_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")


def claude_env(
    base: Mapping[str, str], paths: ClaudeCodePaths
) -> tuple[dict[str, str], dict[str, str]]:
    """``base`` minus what would leak into the client (keeping the credentials), plus the
    per-item state dirs and the quiet switches. Returns the env and what was added."""
    env = {
        k: v
        for k, v in base.items()
        if k not in STRIPPED_VARS
        and k not in CLAUDE_LEAK_VARS
        and not k.startswith(STRIPPED_PREFIXES)
        and not k.startswith(CLAUDE_LEAK_PREFIXES)
    }
    env.update((k, base[k]) for k in CREDENTIAL_VARS if base.get(k))
    added = {
        "CLAUDE_CONFIG_DIR": str(paths.config),
        "CLAUDE_CODE_TMPDIR": str(paths.tmp),
        **CLAUDE_QUIET,
    }
    env.update(added)
    return env, added


def agent_argv(
    binary: Path | str, task: str, model: str, tools: Sequence[str] = ALLOWED_TOOLS
) -> list[str]:
    """``claude -p`` headless with a stream-json stdout (``--verbose`` is required for it).

    ``acceptEdits`` lets the Write tool create the artifact without a prompt;
    ``--dangerously-skip-permissions`` is refused when running as root.
    """
    return [
        str(binary),
        "-p",
        task,
        "--output-format",
        "stream-json",
        "--verbose",
        "--model",
        model,
        "--permission-mode",
        "acceptEdits",
        "--allowedTools",
        *tools,
    ]
