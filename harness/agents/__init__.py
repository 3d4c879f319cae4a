"""The agents the harness can evaluate: one adapter package each, one registry line each.

``--agent NAME[:OPTIONS]`` picks an adapter by name; adapters are imported only when used,
so the CLI starts fast and an agent's dependencies load only for its runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from harness.errors import UsageError

if TYPE_CHECKING:  # the registry itself stays cheap: the CLI reads it at start-up
    from harness.agents.base import AgentAdapter

#: name -> "module:class". Adding an agent: one package under harness/agents/, one line here.
REGISTRY: dict[str, str] = {
    "prime-agent": "harness.agents.prime_agent:PrimeAgentAdapter",
    "sim": "harness.agents.sim:SimAdapter",
    "claude-code": "harness.agents.claude_code:ClaudeCodeAdapter",
}

#: Item directories written before the adapter seam name no agent: they are prime-agent's.
LEGACY_AGENT_KIND = "prime-agent"
#: The agent ``--agent`` means when it is not given.
DEFAULT_AGENT = "prime-agent"


def adapter_class(name: str) -> type[AgentAdapter]:
    try:
        module_name, _, attr = REGISTRY[name].partition(":")
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise UsageError(f"--agent: unknown agent {name!r} (known: {known})") from None
    from harness.agents.base import AgentAdapter

    cls = getattr(importlib.import_module(module_name), attr)
    if not (isinstance(cls, type) and issubclass(cls, AgentAdapter)):
        raise TypeError(f"{REGISTRY[name]} is not an AgentAdapter")
    return cls


def parse_agent(spec: str, binary: str | None = None, seed: int = 0) -> AgentAdapter:
    """The adapter for ``--agent NAME[:OPTIONS]``; bad names or options raise UsageError."""
    name, _, options = spec.partition(":")
    return adapter_class(name)(options, binary, seed)


def adapter_for_meta(meta: Mapping[str, Any]) -> AgentAdapter:
    """The adapter that wrote an item directory (its ``item.json``), for re-scoring."""
    kind = meta.get("agent_kind") or LEGACY_AGENT_KIND
    return adapter_class(str(kind))(str(meta.get("agent_options") or ""), None, 0)


__all__ = [
    "DEFAULT_AGENT",
    "REGISTRY",
    "adapter_class",
    "adapter_for_meta",
    "parse_agent",
]
