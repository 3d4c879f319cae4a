"""What an item's tokens cost in USD: a price file first, then the genai-prices library.

No network and no guess: ``genai_prices`` (pydantic's price data, MIT, shipped inside the
package) is imported on the first lookup; a model neither knows is *unpriced* and its cost
is None, never an estimate.

Usage is :class:`scorers.tokens.TokenUsage`: four disjoint fields (uncached input, output,
cache reads, cache writes), so ``cost = (input·p_in + output·p_out + cache_read·p_cr +
cache_write·p_cw) / 1e6`` with prices in USD per million tokens, computed exactly in
:class:`~decimal.Decimal`.

Where a price comes from, first that has one (:func:`find_price`):

1. the price file (``--prices FILE``): the exact model id, then the id without its provider
   prefix (``anthropic/claude-sonnet-4-5`` -> ``claude-sonnet-4-5``);
2. genai-prices: ``provider/model`` is looked up as that model *at that provider* (an
   unknown provider such as ``sim/...`` is unpriced, never guessed around); a bare id by the
   library's own model matching, as of the pricing time (the library keeps price history).

A missing cache price (in the file, or in the library's data) is the **input price**: how
providers without a cache price bill those tokens, the library's own rule, and never an
under-price of a cache read. Anthropic's cache writes cost 1.25x input, so a price file for
an Anthropic model should give ``cache_write``.

Tiered prices (a higher price above 200k input tokens *per request*) cannot be applied to an
item's summed usage, which no longer shows each request's size: the base tier is used and
the cost's ``note`` says so (exact for requests under the tier, a lower bound otherwise).
"""

from __future__ import annotations

import datetime as dt
import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from harness.errors import UsageError
from harness.model.item import ItemCost
from scorers.tokens import TokenUsage
from scorers.verdict import UsageSummary

RATE_FIELDS = ("input", "output", "cache_read", "cache_write")
REQUIRED_RATE_FIELDS = ("input", "output")
PER_TOKENS = Decimal(1_000_000)


class PriceFileError(UsageError):
    """A price file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Rates:
    """USD per million tokens for each usage field."""

    input: Decimal
    output: Decimal
    cache_read: Decimal
    cache_write: Decimal

    def usd(self, usage: TokenUsage) -> Decimal:
        """The exact cost of ``usage`` at these rates."""
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_write_tokens * self.cache_write
        ) / PER_TOKENS


@dataclass(frozen=True)
class Price:
    """Rates for one model and where they came from: ``source`` is ``price file`` or
    ``genai-prices``; ``detail`` names the file and key, or the library's version and the
    provider/model it matched; ``note`` flags an approximation (a tiered price)."""

    rates: Rates
    source: str
    detail: str
    note: str | None = None


# --- the price file ------------------------------------------------------------------------


def _price_value(value: Any, where: str) -> Decimal:
    # bool is an int: `input: yes` must not read as $1.
    if isinstance(value, bool) or not isinstance(value, int | float):
        hint = (
            " (a number in YAML: 0.3 or 3.0e-1, unquoted; 3e-1 reads as a string)"
            if isinstance(value, str)
            else ""
        )
        raise PriceFileError(
            f"{where}: must be a number of USD per million tokens, got {value!r}{hint}"
        )
    if not math.isfinite(value) or value < 0:
        raise PriceFileError(f"{where}: must be a finite number >= 0, got {value!r}")
    # str() of a float is its shortest repr: 0.3 becomes exactly Decimal("0.3").
    return Decimal(str(value))


def _rates_from(entry: Any, where: str) -> Rates:
    if not isinstance(entry, Mapping):
        raise PriceFileError(
            f"{where}: must be a mapping of {', '.join(RATE_FIELDS)}, got {entry!r}"
        )
    unknown = sorted(str(k) for k in entry if k not in RATE_FIELDS)
    if unknown:
        raise PriceFileError(
            f"{where}: unknown key {', '.join(unknown)} (allowed: {', '.join(RATE_FIELDS)})"
        )
    missing = [f for f in REQUIRED_RATE_FIELDS if f not in entry]
    if missing:
        raise PriceFileError(f"{where}: missing {', '.join(missing)}")
    values = {f: _price_value(entry[f], f"{where}: {f}") for f in RATE_FIELDS if f in entry}
    values.setdefault("cache_read", values["input"])
    values.setdefault("cache_write", values["input"])
    return Rates(**values)


@functools.cache
def _unique_key_loader() -> type[Any]:
    """A SafeLoader that refuses a key given twice (PyYAML silently keeps the last). Built
    on first use: only ``--prices`` reads YAML here, and ``score`` should not import it."""
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        pass

    def unique_mapping(loader: UniqueKeyLoader, node: yaml.MappingNode) -> Any:
        seen: dict[Any, yaml.Mark] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # ``<<: *shared``: merged keys may be overridden, as YAML means
            key = loader.construct_object(key_node)
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, f"a key must be a model id, got {key!r}", key_node.start_mark
                ) from None
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first at {seen[key]})",
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark
        return loader.construct_mapping(node)

    UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, unique_mapping)
    return UniqueKeyLoader


@dataclass(frozen=True)
class PriceTable:
    """Prices a user gave (``--prices FILE``): model id -> :class:`Rates`; ``source`` names
    the file."""

    prices: Mapping[str, Rates]
    source: str

    @classmethod
    def from_mapping(cls, data: Any, source: str) -> PriceTable:
        """Validate ``{model id: {input, output, cache_read?, cache_write?}}``."""
        if not isinstance(data, Mapping) or not data:
            raise PriceFileError(
                f"{source}: must be a non-empty mapping of model id -> {{input, output, "
                f"cache_read, cache_write}} in USD per million tokens, got {data!r}"
            )
        prices: dict[str, Rates] = {}
        for model, entry in data.items():
            if not isinstance(model, str) or not model.strip() or model != model.strip():
                raise PriceFileError(
                    f"{source}: model ids must be non-empty strings without surrounding "
                    f"spaces, got {model!r}"
                )
            prices[model] = _rates_from(entry, f"{source}: {model}")
        return cls(prices, source)

    @classmethod
    def from_yaml(cls, path: Path) -> PriceTable:
        """Read and validate a price file."""
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise PriceFileError(f"{path}: cannot read the price file ({exc})") from exc
        import yaml

        try:
            data = yaml.load(text, Loader=_unique_key_loader())
        except yaml.YAMLError as exc:
            raise PriceFileError(f"{path}: not valid YAML ({exc})") from exc
        return cls.from_mapping(data, str(path))

    def lookup(self, model: str) -> Price | None:
        """The file's price of ``model``: the exact id, then the id without its prefix."""
        _, sep, bare = model.partition("/")
        for key in (model, bare if sep else None):
            if key is not None and key in self.prices:
                return Price(self.prices[key], "price file", f"{self.source}: {key}")
        return None


# --- the library -----------------------------------------------------------------------------


def library_price(model: str, at: dt.datetime | None = None) -> Price | None:
    """genai-prices' token prices for ``model`` at time ``at`` (None: now); None when the
    library knows no such provider or model, or prices it otherwise than per token."""
    import genai_prices
    from genai_prices.types import TieredPrices

    provider, sep, ref = model.partition("/")
    if not sep:
        provider, ref = "", model
    if not ref:
        return None
    try:
        # Zero usage: only the lookup and the prices in force at `at` are wanted; the sums
        # are done here (the library would apply a tier to the item's summed usage).
        calc = genai_prices.calc_price(
            genai_prices.Usage(),
            ref,
            provider_id=provider or None,
            genai_request_timestamp=at or dt.datetime.now(dt.UTC),
        )
    except LookupError:
        return None
    tiered = False

    def rate(key: str) -> Decimal | None:
        nonlocal tiered
        value = getattr(calc.model_price, key, None)
        if isinstance(value, TieredPrices):
            tiered = True
            return Decimal(value.base)
        return None if value is None else Decimal(value)

    p_in, p_out = rate("input_mtok"), rate("output_mtok")
    if p_in is None or p_out is None:
        return None
    cache_read, cache_write = rate("cache_read_mtok"), rate("cache_write_mtok")
    rates = Rates(
        p_in,
        p_out,
        p_in if cache_read is None else cache_read,
        p_in if cache_write is None else cache_write,
    )
    note = "tiered price: the base tier applied (a lower bound if a request crossed a tier)"
    detail = f"genai-prices {genai_prices.__version__}: {calc.provider.id}/{calc.model.id}"
    return Price(rates, "genai-prices", detail, note if tiered else None)


def load_library() -> None:
    """Load the library's prices now instead of at the first lookup, which imports the
    package and builds its data (seconds): a Ray worker does it while it warms up, before
    its first item's slot is taken."""
    library_price(_NO_MODEL)


#: A model id no provider has: looking it up loads the library and finds nothing.
_NO_MODEL = "swarm-harness/no-such-model"


def find_price(
    model: str, table: PriceTable | None = None, at: dt.datetime | None = None
) -> Price | None:
    """The price of ``model``: the price file's, else the library's; None when unknown."""
    found = table.lookup(model) if table is not None else None
    return found if found is not None else library_price(model, at)


def unpriced_models(
    models: Iterable[str], table: PriceTable | None = None, at: dt.datetime | None = None
) -> list[str]:
    """The models (sorted, unique) no price is known for."""
    return sorted({m for m in models if find_price(m, table, at) is None})


# --- an item's cost --------------------------------------------------------------------------


def item_cost(
    usage: UsageSummary,
    model: str,
    table: PriceTable | None = None,
    at: dt.datetime | None = None,
) -> ItemCost:
    """What an item's usage cost: each model the agent names priced apart (Claude Code's
    ``modelUsage``), else every token at the item's ``model``. Unpriced when any model with
    tokens has no known price (``usd`` None, ``unpriced`` names them); a lower bound
    (``complete`` False) when the usage is."""
    parts = list(usage.by_model.items()) or [(model, usage.total)]
    total, details, notes, unpriced = Decimal(0), [], set(), []
    sources = set()
    for name, tokens in parts:
        if tokens.total == 0:
            continue
        price = find_price(name, table, at)
        if price is None:
            unpriced.append(name)
            continue
        total += price.rates.usd(tokens)
        sources.add(price.source)
        details.append(f"{name}: {price.detail}")
        if price.note:
            notes.add(price.note)
    return ItemCost(
        usd=None if unpriced else float(total),
        source=" + ".join(sorted(sources)) if sources else "none",
        detail=tuple(details),
        unpriced=tuple(sorted(set(unpriced))),
        complete=usage.complete,
        note="; ".join(sorted(notes)) or None,
    )
