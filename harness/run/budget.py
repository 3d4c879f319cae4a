"""A run's budget: ``--max-cost USD`` and ``--max-tokens N``.

Rules:

- ``--max-cost`` counts the USD of finished items that have a cost. An item whose model has
  no price spent an unknown amount, so a USD budget for a model without a price is refused
  before the run (:func:`check_budget_plan`) unless ``--max-tokens`` bounds it too (or
  ``--prices FILE`` gives it a price); should an unpriced item finish under a USD-only
  budget anyway, the budget counts as spent, never the item as free.
- ``--max-tokens`` counts every finished item's tokens, priced or not (the four billed
  fields: input, output, cache reads and writes).
- The budget runs out when a count reaches its limit: no new item starts. Items already
  running finish and are kept, so a run may end above its limit by what they cost.
- Every finished item of the run counts, errored ones (they may have spent tokens before
  failing), every attempt of a retried one, and the kept items of a resumed run included:
  ``--resume RUN --max-cost USD`` continues until the whole run has cost USD.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Sequence

from harness.errors import UsageError
from harness.model.item import ItemResult
from harness.model.report import Budget
from harness.model.text import format_usd, plural


def check_budget_plan(
    unpriced: Sequence[str], max_cost_usd: float | None, max_tokens: int | None
) -> None:
    """Refuse, before anything runs, a USD budget for models without a price."""
    if max_cost_usd is not None and unpriced and max_tokens is None:
        raise UsageError(
            f"--max-cost {max_cost_usd:g}: no price is known for {', '.join(unpriced)}, so "
            "what their items spend cannot be counted in USD; give their prices with "
            "--prices FILE, or add --max-tokens N to bound them by tokens"
        )


class BudgetTracker:
    """Adds up what finished items spent (thread-safe: items finish on worker threads)."""

    def __init__(self, max_cost_usd: float | None, max_tokens: int | None) -> None:
        self.max_cost_usd = max_cost_usd
        self.max_tokens = max_tokens
        self._lock = threading.Lock()
        self._usd = 0.0
        self._tokens = 0
        self._unpriced = 0

    def add(self, results: Iterable[ItemResult]) -> bool:
        """Count ``results``; True when the budget has run out."""
        with self._lock:
            for result in results:
                self._tokens += result.spent_tokens  # every attempt's, retries included
                usd = result.spent_usd
                if usd is None:
                    self._unpriced += result.spent_tokens > 0
                else:
                    self._usd += usd
        return self.status().exhausted

    def status(self) -> Budget:
        with self._lock:
            usd, tokens, unpriced = self._usd, self._tokens, self._unpriced
        reasons = []
        if self.max_cost_usd is not None:
            if unpriced and self.max_tokens is None:
                reasons.append(
                    f"{plural(unpriced, 'item')} without a price under a USD budget: "
                    "spending unknown"
                )
            if usd >= self.max_cost_usd or math.isclose(usd, self.max_cost_usd):
                reasons.append(f"spent {format_usd(usd)} of {format_usd(self.max_cost_usd)}")
        if self.max_tokens is not None and tokens >= self.max_tokens:
            reasons.append(f"used {tokens:,} of {self.max_tokens:,} tokens")
        return Budget(
            max_cost_usd=self.max_cost_usd,
            max_tokens=self.max_tokens,
            spent_usd=usd,
            spent_tokens=tokens,
            unpriced_items=unpriced,
            exhausted=bool(reasons),
            reason="; ".join(reasons) or None,
        )
