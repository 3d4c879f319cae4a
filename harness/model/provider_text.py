"""How a run's provider health and an item's provider faults read in text (every renderer's)."""

from __future__ import annotations

from harness.model.item import ItemResult
from harness.model.provider import ProviderHealth
from harness.model.text import format_usd


def _kinds(by_kind: dict[str, int] | None) -> str:
    parts = sorted((by_kind or {}).items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{kind.replace('_', ' ')} {n}" for kind, n in parts)


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def health_line(health: ProviderHealth) -> str:
    """The run's provider health in one line."""
    usd = format_usd(health.retry_usd) if health.retry_usd and health.retry_tokens else None
    if health.healthy:
        return "provider: healthy (no failed requests)"
    parts = []
    if health.failed_requests:
        kinds = _kinds(health.by_kind)
        parts.append(
            _count(health.failed_requests, "failed request") + (f" ({kinds})" if kinds else "")
        )
    if health.items_retried:
        spent = f"{health.retry_tokens:,} tokens" + (f", {usd}" if usd else "")
        parts.append(
            f"{_count(health.items_retried, 'item')} retried "
            f"({_count(health.retries, 'extra attempt')}, {spent})"
        )
    lost = health.items_lost
    parts.append(f"{_count(lost, 'item')} lost to the provider" if lost else "no item lost")
    line = "provider: " + "; ".join(parts)
    if health.stopped:
        line += f"; stopped: {health.stopped}"
    return line


def item_faults_line(item: ItemResult) -> str | None:
    """An item's provider faults and attempts in one line, or None when it had neither."""
    faults = item.facts.provider_faults
    parts = []
    if faults is not None and faults.failed_requests:
        parts.append(
            _count(faults.failed_requests, "failed request") + f" ({_kinds(faults.by_kind)})"
        )
        if not item.facts.lost_to_provider:
            parts[-1] += ", the agent got past them" if item.status != "error" else ""
    if item.attempts > 1:
        earlier = ", ".join(f"#{a.attempt}: {a.error or 'no error'}" for a in item.earlier)
        parts.append(f"attempt {item.attempts} (earlier: {earlier})")
    return "provider faults: " + "; ".join(parts) if parts else None
