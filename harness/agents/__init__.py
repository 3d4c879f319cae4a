"""The agents the harness can evaluate: one adapter package each, one registry line each.

``--agent NAME[:OPTIONS]`` picks an adapter by name; adapters are imported only when used,
so the CLI starts fast and an agent's dependencies load only for its runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.errors import UsageError, did_you_mean

if TYPE_CHECKING:  # the registry itself stays cheap: the CLI reads it at start-up
    from harness.agents.base import AgentAdapter


@dataclass(frozen=True)
class AgentEntry:
    """One registered agent: where its adapter lives, and what ``--help`` says of it
    (read at CLI start-up, so the adapter itself is not imported for it)."""

    target: str  # "module:class"
    summary: str
    #: Whether ``selftest`` can check it (it talks to a model the scripted server can be).
    selftest: bool = True
    #: The variable naming its binary, when ``agents install`` gets its pinned client
    #: (None: the harness cannot install it).
    install_var: str | None = None


#: Adding an agent: one package under harness/agents/, one entry here (the README's agents
#: table and ``--help`` are generated from it).
REGISTRY: dict[str, AgentEntry] = {
    "prime-agent": AgentEntry(
        "harness.agents.prime_agent:PrimeAgentAdapter",
        "the real prime-agent CLI (bring your own: --agent-bin or PATH); "
        "prime-agent:resident drives a resident session over its daemon protocol",
    ),
    "claude-code": AgentEntry(
        "harness.agents.claude_code:ClaudeCodeAdapter",
        "Anthropic's Claude Code client, headless (`agents install claude-code` gets the "
        "pinned one)",
        install_var="CLAUDE_CODE_BIN",
    ),
    "opencode": AgentEntry(
        "harness.agents.opencode:OpenCodeAdapter",
        "the opencode client, headless (`agents install opencode` gets the pinned one); "
        "its provider is the Anthropic Messages API at ANTHROPIC_BASE_URL",
        install_var="OPENCODE_BIN",
    ),
    "codex": AgentEntry(
        "harness.agents.codex:CodexAdapter",
        "OpenAI's Codex CLI, headless (`agents install codex` gets the pinned one); its "
        "provider is the Responses API at OPENAI_BASE_URL; codex:v2 for the second "
        "multi-agent protocol",
        install_var="CODEX_BIN",
    ),
    "gemini": AgentEntry(
        "harness.agents.gemini:GeminiAdapter",
        "Google's Gemini CLI, headless (`agents install gemini` gets the pinned one); its "
        "provider is the Gemini API at GOOGLE_GEMINI_BASE_URL",
        install_var="GEMINI_BIN",
    ),
    "sim": AgentEntry(
        "harness.agents.sim:SimAdapter",
        "the built-in simulated prime-agent, no model needed; sim:BEHAVIOURS (honest, "
        "no-spawn, flaky=0.7, slow=2, ... comma-separated; resident among them: the "
        "resident drive)",
        selftest=False,
    ),
}

#: Item directories written before the adapter seam name no agent: they are prime-agent's.
LEGACY_AGENT_KIND = "prime-agent"
#: The agent ``--agent`` means when it is not given.
DEFAULT_AGENT = "prime-agent"


def adapter_class(name: str, where: str = "--agent") -> type[AgentAdapter]:
    """The adapter of agent ``name``; an unknown name is refused as a value of ``where``
    (the option or argument that gave it)."""
    try:
        module_name, _, attr = REGISTRY[name].target.partition(":")
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise UsageError(
            f"{where}: unknown agent {name!r}{did_you_mean(name, REGISTRY)} (known: {known})"
        ) from None
    from harness.agents.base import AgentAdapter

    cls = getattr(importlib.import_module(module_name), attr)
    if not (isinstance(cls, type) and issubclass(cls, AgentAdapter)):
        raise TypeError(f"{REGISTRY[name].target} is not an AgentAdapter")
    return cls


def agents_help(only_selftest: bool = False) -> str:
    """The registered agents' names for ``--agent``'s help; ``agents list`` says what each
    is (its summary), so the help does not repeat every agent's description."""
    return ", ".join(
        name for name, entry in REGISTRY.items() if entry.selftest or not only_selftest
    )


def parse_agent(spec: str, binary: str | None = None, seed: int = 0) -> AgentAdapter:
    """The adapter for ``--agent NAME[:OPTIONS]``; bad names or options raise UsageError."""
    name, _, options = spec.partition(":")
    return adapter_class(name)(options, binary, seed)


def parse_agents(
    specs: Sequence[str], binaries: Sequence[str] = (), seed: int = 0
) -> tuple[AgentAdapter, ...]:
    """The adapters for repeated ``--agent NAME[:OPTIONS]`` (none: the default agent), each
    with its ``--agent-bin`` (:func:`agent_binaries`)."""
    specs = tuple(specs) or (DEFAULT_AGENT,)
    chosen = agent_binaries(specs, binaries)
    return tuple(parse_agent(spec, chosen.get(spec), seed) for spec in specs)


def agent_binaries(specs: Sequence[str], binaries: Sequence[str]) -> dict[str, str]:
    """``--agent`` value -> the binary ``--agent-bin`` gives it. ``NAME=PATH`` with NAME an
    agent's name is for every ``--agent`` of that name (one binary serves both of
    ``prime-agent`` and ``prime-agent:resident``); with NAME a whole ``--agent`` value
    (``sim:a=1``), for that one only, over its name's. A bare PATH: with one agent only.
    Agents not named keep their own binary."""
    by_value: dict[str, str] = {}
    by_name: dict[str, str] = {}
    for value in binaries:
        found = _binary_owner(value, specs)
        if found is None:
            if len(specs) != 1:
                raise UsageError(
                    f"--agent-bin {value}: with several agents, name the one it is for "
                    f"(--agent-bin AGENT=PATH, AGENT one of {', '.join(specs)})"
                )
            found = (specs[0], "")
        owner, used = found
        path = value[len(used) + 1 :] if used else value
        chosen = by_value if ":" in owner else by_name
        if owner in chosen:
            raise UsageError(f"--agent-bin: two binaries for --agent {owner}")
        chosen[owner] = path
    out = {}
    for spec in specs:
        given = by_value.get(spec) or by_name.get(spec.partition(":")[0])
        if given is not None:
            out[spec] = given
    return out


def _binary_owner(value: str, specs: Sequence[str]) -> tuple[str, str] | None:
    """Whom an ``--agent-bin NAME=PATH`` is for, and the NAME it used: a whole ``--agent``
    value with options, or an agent's name (the longest that matches: ``sim:a=1`` before
    ``sim``); None for a bare path."""
    names = {spec for spec in specs if ":" in spec} | {spec.partition(":")[0] for spec in specs}
    matches = [name for name in names if value.startswith(f"{name}=")]
    if not matches:
        return None
    best = max(matches, key=len)
    return best, best


def adapter_for_meta(meta: Mapping[str, Any]) -> AgentAdapter:
    """The adapter that wrote an item directory (its ``item.json``), for re-scoring."""
    kind = meta.get("agent_kind") or LEGACY_AGENT_KIND
    adapter = adapter_class(str(kind))(str(meta.get("agent_options") or ""), None, 0)
    return adapter.solo_twin() if meta.get("arm") == "solo" else adapter


__all__ = [
    "DEFAULT_AGENT",
    "REGISTRY",
    "AgentEntry",
    "adapter_class",
    "adapter_for_meta",
    "agent_binaries",
    "agents_help",
    "parse_agent",
    "parse_agents",
]


def agent_settings(
    agents: Sequence[AgentAdapter], pairs: Sequence[str]
) -> tuple[tuple[str, str, str], ...]:
    """``--agent-env NAME=VALUE`` values as (agent label, NAME, VALUE): each goes to every
    agent of the run that allows NAME (its vendor's setting); one no agent allows, or a
    malformed one, is refused naming what each agent takes."""
    found: list[tuple[str, str, str]] = []
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name or any(c.isspace() for c in name):
            raise UsageError(f"--agent-env {pair!r}: expected NAME=VALUE")
        takers = [a for a in agents if name in a.agent_env_allowed]
        if not takers:
            offered = "; ".join(
                f"{a.label()}: "
                + (", ".join(sorted(a.agent_env_allowed)) or a.agent_env_note or "none")
                for a in agents
            )
            raise UsageError(f"--agent-env {name}: no agent of this run takes it ({offered})")
        found += [(a.label(), name, value) for a in takers]
    return tuple(found)
