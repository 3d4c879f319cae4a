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
        if faults is not None:
            kinds.update(faults.by_kind)
        for attempt in item.earlier:
            kinds.update(attempt.by_kind or {})
        failed += item.spent_failed_requests
        with_faults += item.spent_failed_requests > 0
        retried += item.attempts > 1
        retries += item.attempts - 1
        lost += item.facts.lost_to_provider
        retry_tokens += item.spent_tokens - item.score.tokens_used
        earlier = item.earlier_usd
        retry_usd = None if retry_usd is None or earlier is None else retry_usd + earlier
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
