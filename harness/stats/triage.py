"""Triage: the run's unresolved and errored items grouped by how they failed.

A group is one criterion and one failure kind the criterion's judge named in words that
stay the same from trial to trial ("events-03 wrong", "worker-a not delegated"), so six
trials that got the same shard wrong are one line, not six. An item that could not run is
grouped by its cause, with numbers and paths masked ("agent exited N before reaching the
model"); one the provider failed, apart, by the provider's status and where it failed
("provider: 529 overloaded in the parent"). Largest groups first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.model.item import PROVIDER_ERROR_PREFIX, ItemResult
from harness.model.summary import FailureGroup

#: The criterion name errored items are grouped under.
ERROR = "error"
#: The criterion name items lost to the provider are grouped under: apart from the agent's
#: failures and from the harness's own errors.
PROVIDER = "provider"
_COUNT = re.compile(r" ×\d+")
#: Parts of an error message that differ between items failing the same way.
_VARYING = re.compile(r"(/[^\s:;,]+)|(\d+(\.\d+)?)")


def _error_kind(message: str) -> str:
    return _VARYING.sub(lambda m: "PATH" if m.group(1) else "N", message.strip())


def _provider_kind(message: str) -> str:
    """``provider: 529 overloaded ×12 in the parent, gave up`` -> ``529 overloaded in the
    parent``: the status and where, the same from trial to trial."""
    text = message.removeprefix(PROVIDER_ERROR_PREFIX).partition(", gave up")[0]
    return _COUNT.sub("", text).strip()


def signatures(item: ItemResult) -> list[tuple[str, str]]:
    """(criterion, failure kind) for every way ``item`` failed (none when resolved)."""
    if item.facts.lost_to_provider:
        return [(PROVIDER, _provider_kind(str(item.facts.error)))]
    if item.status == "error":
        return [(ERROR, _error_kind(str(item.facts.error)))]
    out: list[tuple[str, str]] = []
    for check in item.score.checks:
        if not check.passed:
            out.extend(
                (check.name, kind) for kind in dict.fromkeys(check.signatures or ("failed",))
            )
    return out


def triage(items: Sequence[ItemResult]) -> tuple[FailureGroup, ...]:
    groups: dict[tuple[str, str], list[str]] = {}
    for item in items:
        for key in signatures(item):
            groups.setdefault(key, []).append(item.key)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return tuple(FailureGroup(c, s, tuple(keys)) for (c, s), keys in ordered)
