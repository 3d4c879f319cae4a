"""A run's provider health: what the endpoint did to the run, apart from what the agent did."""

from __future__ import annotations

from dataclasses import dataclass

from harness.model.record import Record


@dataclass(frozen=True)
class ProviderHealth(Record):
    """The provider's faults over a run's items (every attempt's), and what they cost it.

    ``failed_requests``/``by_kind``: model requests that failed at the provider, as the
    agents recorded them; ``items_with_faults``: items with at least one; ``items_retried``
    and ``retries``: items run again after a provider error, and how many extra attempts
    that took; ``items_lost``: items that ended as provider errors after their retries
    (errors: kept out of every rate); ``retry_tokens``/``retry_usd``: what the earlier
    attempts spent (``retry_usd`` None when one of them had no price); ``stopped``: why the
    circuit breaker stopped the run (None: it did not).
    """

    failed_requests: int = 0
    by_kind: dict[str, int] | None = None
    items_with_faults: int = 0
    items_retried: int = 0
    retries: int = 0
    items_lost: int = 0
    retry_tokens: int = 0
    retry_usd: float | None = 0.0
    stopped: str | None = None

    @property
    def healthy(self) -> bool:
        """Nothing failed at the provider and the run was not stopped for it."""
        return not self.failed_requests and not self.items_lost and self.stopped is None
