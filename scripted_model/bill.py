"""What the scripted server bills: one request's tokens, or the sum of several, and their
price at the server's own rates (the figures a harness's tokens and cost are checked
against). Its own module, so every API side books its requests without importing the
server."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

#: What the server charges, USD per million tokens of each billed field (Claude Sonnet 4.5's
#: list prices): the bill in money that a harness's cost is checked against.
PRICES_PER_MTOK = {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75}


@dataclass(frozen=True)
class Bill:
    """What the server billed: one request, or the sum of several (``requests``)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    requests: int = 0

    @property
    def total(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )

    @property
    def usd(self) -> float:
        """What the bill costs at :data:`PRICES_PER_MTOK`, summed exactly."""
        price = {field: Decimal(str(value)) for field, value in PRICES_PER_MTOK.items()}
        micro = (
            self.input_tokens * price["input"]
            + self.output_tokens * price["output"]
            + self.cache_read_tokens * price["cache_read"]
            + self.cache_write_tokens * price["cache_write"]
        )
        return float(micro / Decimal(1_000_000))

    def __add__(self, other: Bill) -> Bill:
        return Bill(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.requests + other.requests,
        )
