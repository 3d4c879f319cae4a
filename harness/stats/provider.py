"""A run's provider health, from its items: what the endpoint failed, and what it cost."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from harness.model.item import ItemResult
from harness.model.provider import ProviderHealth


def provider_health(items: Sequence[ItemResult], stopped: str | None = None) -> ProviderHealth:
    """The provider's faults over every attempt of ``items``, items retried, items lost to
    it, and what the retries spent."""
    kinds: Counter[str] = Counter()
    failed = with_faults = retried = retries = lost = retry_tokens = 0
    retry_usd: float | None = 0.0
    for item in items:
        faults = item.facts.provider_faults
        earlier = sum(a.failed_requests for a in item.earlier)
        mine = faults.failed_requests if faults is not None else 0
        if faults is not None:
            kinds.update(faults.by_kind)
        for attempt in item.earlier:
            kinds.update(attempt.by_kind or {})
        failed += mine + earlier
        with_faults += (mine + earlier) > 0
        retried += item.attempts > 1
        retries += item.attempts - 1
        lost += item.facts.lost_to_provider
        retry_tokens += sum(a.tokens for a in item.earlier)
        for attempt in item.earlier:
            if attempt.cost_usd is None and attempt.tokens > 0:
                retry_usd = None
            elif retry_usd is not None:
                retry_usd += attempt.cost_usd or 0.0
    return ProviderHealth(
        failed_requests=failed,
        by_kind=dict(sorted(kinds.items())),
        items_with_faults=with_faults,
        items_retried=retried,
        retries=retries,
        items_lost=lost,
        retry_tokens=retry_tokens,
        retry_usd=retry_usd,
        stopped=stopped,
    )
