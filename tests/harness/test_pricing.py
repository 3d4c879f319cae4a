"""harness.pricing: price files, exact arithmetic, the genai-prices lookups, an item's cost.

Expected costs are worked out by hand in the comments; the library's rates are those of
genai-prices 0.2.3 (pinned) at a fixed date, so a later price change cannot move them.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import textwrap
from decimal import Decimal
from pathlib import Path

import pytest

from harness.errors import EXIT_USAGE, UsageError
from harness.pricing import (
    PriceFileError,
    PriceTable,
    Rates,
    find_price,
    item_cost,
    library_price,
    unpriced_models,
)
from scorers.tokens import TokenUsage
from scorers.verdict import UsageSummary

REPO = Path(__file__).resolve().parents[2]
AT = dt.datetime(2025, 11, 1, tzinfo=dt.UTC)
SONNET = Rates(Decimal("3"), Decimal("15"), Decimal("0.3"), Decimal("3.75"))
USAGE = TokenUsage(
    input_tokens=1_000, output_tokens=2_000, cache_read_tokens=10_000, cache_write_tokens=500
)
# 1000*3 + 2000*15 + 10000*0.3 + 500*3.75 = 3000 + 30000 + 3000 + 1875 = 37875 millionths.
USAGE_AT_SONNET = Decimal("0.037875")
# Opus 4.1 (15/75/1.5/18.75): 15000 + 150000 + 15000 + 9375 = 189375 millionths.
USAGE_AT_OPUS = Decimal("0.189375")
TIER_NOTE = "base tier"


def write(tmp_path: Path, text: str, name: str = "prices.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def summary(
    total: TokenUsage = USAGE,
    by_model: dict[str, TokenUsage] | None = None,
    complete: bool = True,
) -> UsageSummary:
    return UsageSummary(
        total=total, by_model=dict(by_model or {}), complete=complete, source="test"
    )


# --- the arithmetic ---------------------------------------------------------------------------


def test_usd_by_hand_with_cache_fields() -> None:
    got = SONNET.usd(USAGE)
    assert got == USAGE_AT_SONNET
    assert isinstance(got, Decimal)


def test_each_field_has_its_own_rate() -> None:
    rates = Rates(Decimal(1), Decimal(10), Decimal(100), Decimal(1000))
    million = 1_000_000
    assert rates.usd(TokenUsage(million, million, million, million)) == Decimal(1111)
    assert rates.usd(TokenUsage(input_tokens=million)) == Decimal(1)
    assert rates.usd(TokenUsage(output_tokens=million)) == Decimal(10)
    assert rates.usd(TokenUsage(cache_read_tokens=million)) == Decimal(100)
    assert rates.usd(TokenUsage(cache_write_tokens=million)) == Decimal(1000)


def test_reasoning_tokens_are_not_billed_twice() -> None:
    """Reasoning is part of the output: the same usage with and without the split costs the
    same."""
    with_reasoning = TokenUsage(0, 2_000, 0, 0, reasoning_tokens=1_500)
    assert SONNET.usd(with_reasoning) == SONNET.usd(TokenUsage(output_tokens=2_000))


def test_usd_is_exact() -> None:
    # 1 token at $0.3/M plus 2 at $0.15/M: exactly $6e-7 (floats would give 5.999...e-7).
    rates = Rates(Decimal("0.3"), Decimal("0.15"), Decimal("0.3"), Decimal("0.3"))
    assert rates.usd(TokenUsage(input_tokens=1, output_tokens=2)) == Decimal("0.0000006")
    # A cent's worth of cache reads at $0.1/M, read in 100,000 one-token requests.
    cheap = Rates(Decimal(1), Decimal(1), Decimal("0.1"), Decimal(1))
    assert cheap.usd(TokenUsage(cache_read_tokens=100_000)) == Decimal("0.01")


def test_no_usage_costs_nothing() -> None:
    assert SONNET.usd(TokenUsage()) == 0


# --- price files ------------------------------------------------------------------------------


def test_price_file_is_read(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "claude-sonnet-4-5: {input: 3, output: 15, cache_read: 0.3, cache_write: 3.75}\n"
        "scripted/honest: {input: 0, output: 0}\n",
    )
    table = PriceTable.from_yaml(path)
    assert table.source == str(path)
    assert table.prices["claude-sonnet-4-5"] == SONNET
    assert table.prices["scripted/honest"] == Rates(*(Decimal(0),) * 4)


def test_missing_cache_prices_default_to_input(tmp_path: Path) -> None:
    table = PriceTable.from_yaml(write(tmp_path, "m: {input: 2, output: 8}\n"))
    assert table.prices["m"] == Rates(Decimal(2), Decimal(8), Decimal(2), Decimal(2))
    # 1000*2 + 2000*8 + 10000*2 + 500*2 = 39000 millionths.
    assert table.prices["m"].usd(USAGE) == Decimal("0.039")
    only_write = PriceTable.from_mapping({"m": {"input": 2, "output": 8, "cache_write": 2.5}}, "t")
    assert only_write.prices["m"].cache_read == Decimal(2)
    assert only_write.prices["m"].cache_write == Decimal("2.5")


def test_float_prices_are_read_as_written(tmp_path: Path) -> None:
    table = PriceTable.from_yaml(
        write(tmp_path, "m: {input: 0.1, output: 0.2, cache_read: 0.03, cache_write: 3.0e-1}\n")
    )
    rates = table.prices["m"]
    assert (rates.input, rates.output) == (Decimal("0.1"), Decimal("0.2"))
    assert (rates.cache_read, rates.cache_write) == (Decimal("0.03"), Decimal("0.3"))


@pytest.mark.parametrize(
    ("text", "key", "match"),
    [
        pytest.param("", None, "non-empty mapping", id="empty-file"),
        pytest.param("- a\n- b\n", None, "non-empty mapping", id="a-list"),
        pytest.param("{}\n", None, "non-empty mapping", id="empty-mapping"),
        pytest.param("m: 3\n", "m", "must be a mapping", id="entry-not-a-mapping"),
        pytest.param("m: null\n", "m", "must be a mapping", id="entry-null"),
        pytest.param(
            "m: {input: 1, output: 2, cache_reads: 3}\n",
            "m",
            r"unknown key cache_reads \(allowed: input, output, cache_read, cache_write\)",
            id="unknown-key",
        ),
        pytest.param(
            "m: {input: 1, output: 2, foo: 1, bar: 2}\n", "m", "unknown key bar, foo", id="two"
        ),
        pytest.param("m: {input: 1}\n", "m", "missing output", id="missing-output"),
        pytest.param("m: {output: 1}\n", "m", "missing input", id="missing-input"),
        pytest.param("m: {cache_read: 1}\n", "m", "missing input, output", id="missing-both"),
        pytest.param(
            "m: {input: '0.3', output: 2}\n",
            "m: input",
            r"must be a number of USD per million tokens, got '0.3' \(a number in YAML: 0.3",
            id="string",
        ),
        pytest.param("m: {input: yes, output: 2}\n", "m: input", "must be a number", id="bool"),
        pytest.param(
            "m: {input: 1, output: true}\n", "m: output", "got True", id="bool-true-not-1"
        ),
        pytest.param("m: {input: null, output: 2}\n", "m: input", "must be a number", id="null"),
        pytest.param("m: {input: [1], output: 2}\n", "m: input", "must be a number", id="list"),
        pytest.param(
            "m: {input: -1, output: 2}\n", "m: input", "finite number >= 0, got -1", id="negative"
        ),
        pytest.param(
            "m: {input: 1, output: 2, cache_read: -0.5}\n",
            "m: cache_read",
            "finite number >= 0",
            id="negative-cache",
        ),
        pytest.param("m: {input: .inf, output: 2}\n", "m: input", "finite number", id="inf"),
        pytest.param("m: {input: .nan, output: 2}\n", "m: input", "finite number", id="nan"),
        pytest.param(
            "1.5: {input: 1, output: 2}\n", None, "model ids must be non-empty strings", id="id"
        ),
        pytest.param(
            "' m': {input: 1, output: 2}\n", None, "without surrounding spaces", id="spaced-id"
        ),
        pytest.param(
            "m: {input: 1, output: 2}\nm: {input: 3, output: 4}\n",
            None,
            "not valid YAML.*duplicate key 'm'",
            id="duplicate-model",
        ),
        pytest.param(
            "m: {input: 1, input: 2, output: 2}\n",
            None,
            "not valid YAML.*duplicate key 'input'",
            id="duplicate-field",
        ),
        pytest.param("m: {input: 1, output: [\n", None, "not valid YAML", id="broken-yaml"),
        pytest.param("m: !!python/object:os.system {}\n", None, "not valid YAML", id="unsafe-tag"),
    ],
)
def test_price_file_errors_name_the_file_and_key(
    tmp_path: Path, text: str, key: str | None, match: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(PriceFileError, match=match) as info:
        PriceTable.from_yaml(path)
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    if key is not None:
        assert message.startswith(f"{path}: {key}: "), message


def test_duplicate_key_error_says_where_the_first_was(tmp_path: Path) -> None:
    path = write(tmp_path, "m: {input: 1, output: 2}\nn: {input: 1, output: 2}\nm: {input: 3}\n")
    with pytest.raises(PriceFileError) as info:
        PriceTable.from_yaml(path)
    assert "line 1" in str(info.value) and "line 3" in str(info.value)


@pytest.mark.parametrize(
    ("kind", "match"),
    [
        ("missing", "cannot read the price file"),
        ("directory", "cannot read the price file"),
        ("not-utf8", "cannot read the price file.*utf-8"),
    ],
)
def test_unreadable_price_file(tmp_path: Path, kind: str, match: str) -> None:
    path = tmp_path / "prices.yaml"
    if kind == "directory":
        path.mkdir()
    elif kind == "not-utf8":
        path.write_bytes(b"m: {input: 1, output: \xff}\n")
    with pytest.raises(PriceFileError, match=match) as info:
        PriceTable.from_yaml(path)
    assert str(info.value).startswith(f"{path}: ")


def test_unhashable_key_is_a_price_file_error(tmp_path: Path) -> None:
    path = write(tmp_path, "? [a, b]\n: {input: 1, output: 2}\n")
    with pytest.raises(PriceFileError, match=str(path)):
        PriceTable.from_yaml(path)


def test_merge_keys_share_prices(tmp_path: Path) -> None:
    """YAML merge keys (``<<: *shared``) are no duplicate: a merged key may be overridden."""
    path = write(
        tmp_path,
        "base: &sonnet {input: 3, output: 15, cache_read: 0.3, cache_write: 3.75}\n"
        "claude-sonnet-4-5:\n  <<: *sonnet\n"
        "claude-sonnet-4-5-batch:\n  <<: *sonnet\n  input: 1.5\n  output: 7.5\n",
    )
    prices = PriceTable.from_yaml(path).prices
    assert prices["claude-sonnet-4-5"] == SONNET
    assert prices["claude-sonnet-4-5-batch"] == Rates(
        Decimal("1.5"), Decimal("7.5"), Decimal("0.3"), Decimal("3.75")
    )
    # A key given twice beside the merge is still refused.
    twice = write(
        tmp_path, "base: &b {input: 1, output: 2}\nm:\n  <<: *b\n  input: 3\n  input: 4\n"
    )
    with pytest.raises(PriceFileError, match="duplicate key 'input'"):
        PriceTable.from_yaml(twice)


def test_price_file_error_is_a_usage_error() -> None:
    """The CLI exits 2 (bad usage, nothing ran) on a bad price file."""
    with pytest.raises(UsageError) as info:
        PriceTable.from_mapping({"m": {"input": 1}}, "mine.yaml")
    assert isinstance(info.value, PriceFileError)
    assert info.value.exit_code == EXIT_USAGE == 2
    assert str(info.value) == "mine.yaml: m: missing output"


def test_from_mapping_names_its_source() -> None:
    with pytest.raises(PriceFileError, match=r"^inline: m: unknown key x"):
        PriceTable.from_mapping({"m": {"input": 1, "output": 1, "x": 1}}, "inline")
    with pytest.raises(PriceFileError, match=r"^inline: must be a non-empty mapping"):
        PriceTable.from_mapping(None, "inline")


# --- the price file's lookup ------------------------------------------------------------------


def test_lookup_strips_the_provider_prefix() -> None:
    table = PriceTable.from_mapping(
        {"anthropic/x": {"input": 1, "output": 1}, "x": {"input": 2, "output": 2}}, "t.yaml"
    )
    exact = table.lookup("anthropic/x")
    assert exact is not None
    assert exact.rates == table.prices["anthropic/x"]
    assert (exact.source, exact.detail, exact.note) == ("price file", "t.yaml: anthropic/x", None)
    stripped = table.lookup("other/x")
    assert stripped is not None
    assert stripped.rates == table.prices["x"] and stripped.detail == "t.yaml: x"
    bare = table.lookup("x")
    assert bare is not None and bare.detail == "t.yaml: x"


def test_lookup_never_adds_a_prefix_and_strips_only_the_first() -> None:
    table = PriceTable.from_mapping(
        {"anthropic/y": {"input": 1, "output": 1}, "b/c": {"input": 2, "output": 2}}, "t"
    )
    assert table.lookup("y") is None
    assert table.lookup("other/y") is None
    found = table.lookup("a/b/c")
    assert found is not None and found.detail == "t: b/c"
    assert table.lookup("c") is None


# --- the library ------------------------------------------------------------------------------

#: model: (input, output, cache_read, cache_write) at AT in genai-prices 0.2.3; a missing
#: cache-write price (OpenAI, Google) is the input price.
LIBRARY = {
    "anthropic/claude-sonnet-4-5": ("3", "15", "0.3", "3.75"),
    "anthropic/claude-opus-4-1": ("15", "75", "1.5", "18.75"),
    "anthropic/claude-haiku-4-5": ("1", "5", "0.1", "1.25"),
    "openai/gpt-4.1": ("2", "8", "0.5", "2"),
    "openai/gpt-4o-mini": ("0.15", "0.6", "0.075", "0.15"),
    "openai/o3": ("2", "8", "0.5", "2"),
    "google/gemini-2.5-pro": ("1.25", "10", "0.125", "1.25"),
}


@pytest.mark.parametrize("model", sorted(LIBRARY))
@pytest.mark.parametrize("prefixed", [True, False], ids=["provider/model", "bare"])
def test_library_prices(model: str, prefixed: bool) -> None:
    import genai_prices

    ref = model if prefixed else model.split("/", 1)[1]
    found = library_price(ref, AT)
    assert found is not None
    assert found.rates == Rates(*(Decimal(x) for x in LIBRARY[model]))
    assert found.source == "genai-prices"
    assert found.detail == f"genai-prices {genai_prices.__version__}: {model}"
    assert genai_prices.__version__ == "0.2.3"


@pytest.mark.parametrize(
    "model",
    [
        "sim/honest",
        "scripted/x",
        "scripted/honest",
        "honest",
        "no-such-model-xyz",
        "anthropic/",
        "nosuchprovider/claude-sonnet-4-5",
        # The prefix is the provider: OpenAI does not sell Claude.
        "openai/claude-sonnet-4-5",
    ],
)
def test_unknown_models_are_unpriced(model: str) -> None:
    assert library_price(model, AT) is None
    assert find_price(model, None, AT) is None
    assert unpriced_models([model], None, AT) == [model]


def test_prices_follow_the_date() -> None:
    # OpenAI cut o3 from $10/$40 to $2/$8 in June 2025; the library keeps the history.
    before = library_price("o3", dt.datetime(2025, 5, 1, tzinfo=dt.UTC))
    after = library_price("o3", AT)
    assert before is not None and after is not None
    assert (before.rates.input, before.rates.output) == (Decimal(10), Decimal(40))
    assert (after.rates.input, after.rates.output) == (Decimal(2), Decimal(8))
    assert library_price("o3") is not None  # at=None: now


def test_tiered_price_uses_the_base_tier_with_a_note() -> None:
    tiered = library_price("anthropic/claude-sonnet-4-5", AT)
    assert tiered is not None and tiered.note is not None and TIER_NOTE in tiered.note
    plain = library_price("anthropic/claude-opus-4-1", AT)
    assert plain is not None and plain.note is None
    # 50 requests of 100k cached tokens: 5M summed, each request under the 200k tier, so
    # 5 * $0.30, never the tier's 5 * $0.60.
    assert tiered.rates.usd(TokenUsage(cache_read_tokens=5_000_000)) == Decimal("1.5")


@pytest.mark.parametrize("model", ["claude-opus-4-1", "gpt-4.1", "openai/gpt-4o-mini"])
def test_matches_the_librarys_own_arithmetic(model: str) -> None:
    """Untiered models: genai-prices' calc_price (whose input_tokens include the cached
    ones) gives the same total as the disjoint fields here."""
    import genai_prices

    provider, _, ref = model.rpartition("/")
    lib = genai_prices.calc_price(
        genai_prices.Usage(
            input_tokens=USAGE.input_tokens + USAGE.cache_read_tokens + USAGE.cache_write_tokens,
            output_tokens=USAGE.output_tokens,
            cache_read_tokens=USAGE.cache_read_tokens,
            cache_write_tokens=USAGE.cache_write_tokens,
        ),
        ref,
        provider_id=provider or None,
        genai_request_timestamp=AT,
    )
    found = library_price(model, AT)
    assert found is not None
    assert found.rates.usd(USAGE) == lib.total_price


def test_unpriced_models_sorted_and_unique() -> None:
    table = PriceTable.from_mapping({"scripted/honest": {"input": 0, "output": 0}}, "t")
    models = ["scripted/lazy", "scripted/honest", "claude-sonnet-4-5", "scripted/lazy", "sim/a"]
    assert unpriced_models(models, table, AT) == ["scripted/lazy", "sim/a"]
    assert unpriced_models(models, None, AT) == ["scripted/honest", "scripted/lazy", "sim/a"]
    assert unpriced_models([], None, AT) == []


def test_price_file_wins_over_the_library() -> None:
    table = PriceTable.from_mapping({"gpt-4.1": {"input": 1, "output": 1}}, "mine.yaml")
    found = find_price("openai/gpt-4.1", table, AT)
    assert found is not None
    assert (found.source, found.detail) == ("price file", "mine.yaml: gpt-4.1")
    assert found.rates == Rates(*(Decimal(1),) * 4)
    # A model the file does not name still gets the library's price.
    other = find_price("openai/o3", table, AT)
    assert other is not None and other.source == "genai-prices"


# --- an item's cost ---------------------------------------------------------------------------


def test_item_cost_of_one_model_by_hand() -> None:
    cost = item_cost(summary(), "anthropic/claude-opus-4-1", None, AT)
    assert cost.usd == pytest.approx(float(USAGE_AT_OPUS), rel=1e-15)
    assert cost.source == "genai-prices"
    assert cost.detail == (
        "anthropic/claude-opus-4-1: genai-prices 0.2.3: anthropic/claude-opus-4-1",
    )
    assert cost.unpriced == () and cost.complete and cost.note is None


def test_item_cost_prices_each_model_apart() -> None:
    haiku = TokenUsage(input_tokens=4_000, output_tokens=1_000, cache_read_tokens=20_000)
    by_model = {"anthropic/claude-sonnet-4-5": USAGE, "claude-haiku-4-5": haiku}
    # The item's own model (opus) is not used when the agent names its models.
    cost = item_cost(summary(USAGE + haiku, by_model), "anthropic/claude-opus-4-1", None, AT)
    # Haiku (1/5/0.1/1.25): 4000 + 5000 + 2000 = 11000 millionths; plus Sonnet's 37875.
    assert cost.usd == pytest.approx(0.048875, rel=1e-15)
    assert cost.source == "genai-prices"
    assert len(cost.detail) == 2
    assert cost.detail[0].startswith("anthropic/claude-sonnet-4-5: genai-prices")
    assert cost.detail[1].startswith("claude-haiku-4-5: genai-prices")
    assert cost.note is not None and TIER_NOTE in cost.note  # Sonnet 4.5 is tiered


def test_item_cost_falls_back_to_the_items_model() -> None:
    """No per-model split: every token is the item's model's."""
    cost = item_cost(summary(by_model={}), "claude-sonnet-4-5", None, AT)
    assert cost.usd == pytest.approx(float(USAGE_AT_SONNET), rel=1e-15)
    assert cost.detail == ("claude-sonnet-4-5: genai-prices 0.2.3: anthropic/claude-sonnet-4-5",)


def test_any_unpriced_model_leaves_the_cost_unknown() -> None:
    by_model = {"claude-haiku-4-5": USAGE, "sim/honest": USAGE, "scripted/x": USAGE}
    cost = item_cost(summary(USAGE + USAGE + USAGE, by_model), "claude-haiku-4-5", None, AT)
    assert cost.usd is None
    assert cost.unpriced == ("scripted/x", "sim/honest")
    assert cost.source == "genai-prices"  # what was priced says where its price came from
    assert len(cost.detail) == 1 and cost.detail[0].startswith("claude-haiku-4-5:")
    nothing = item_cost(summary(), "sim/honest", None, AT)
    assert nothing.usd is None and nothing.unpriced == ("sim/honest",)
    assert (nothing.source, nothing.detail) == ("none", ())


def test_models_without_tokens_are_skipped() -> None:
    by_model = {"claude-haiku-4-5": USAGE, "sim/honest": TokenUsage()}
    cost = item_cost(summary(USAGE, by_model), "sim/honest", None, AT)
    assert cost.usd is not None and cost.unpriced == ()
    # Haiku: 1000*1 + 2000*5 + 10000*0.1 + 500*1.25 = 12625 millionths.
    assert cost.usd == pytest.approx(0.012625, rel=1e-15)
    assert len(cost.detail) == 1
    empty = item_cost(summary(TokenUsage()), "sim/honest", None, AT)
    assert (empty.usd, empty.unpriced, empty.source) == (0.0, (), "none")


@pytest.mark.parametrize("complete", [True, False])
def test_cost_completeness_mirrors_the_usage(complete: bool) -> None:
    cost = item_cost(summary(complete=complete), "claude-haiku-4-5", None, AT)
    assert cost.complete is complete
    assert cost.usd is not None  # a lower bound is still a cost


def test_item_cost_price_file_first() -> None:
    table = PriceTable.from_mapping(
        {"claude-sonnet-4-5": {"input": 1, "output": 1}, "sim/honest": {"input": 0, "output": 0}},
        "mine.yaml",
    )
    by_model = {
        "anthropic/claude-sonnet-4-5": USAGE,
        "sim/honest": USAGE,
        "claude-haiku-4-5": USAGE,
    }
    cost = item_cost(summary(USAGE + USAGE + USAGE, by_model), "sim/honest", table, AT)
    # Sonnet from the file at $1/M for every field: 13500 tokens = 13500 millionths; the
    # simulated model free; Haiku from the library: 12625 millionths.
    assert cost.usd == pytest.approx(0.026125, rel=1e-15)
    assert cost.source == "genai-prices + price file"
    assert cost.detail[0] == "anthropic/claude-sonnet-4-5: mine.yaml: claude-sonnet-4-5"
    assert cost.detail[1] == "sim/honest: mine.yaml: sim/honest"
    assert cost.unpriced == ()
    assert cost.note is None  # the file's price is not tiered


def test_item_cost_round_trips_through_json() -> None:
    from harness.model.item import ItemCost

    cost = item_cost(summary(), "anthropic/claude-sonnet-4-5", None, AT)
    assert ItemCost.from_dict(cost.to_dict()) == cost


# --- no network -------------------------------------------------------------------------------


def test_no_network_at_import_or_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network used: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    cost = item_cost(summary(), "anthropic/claude-haiku-4-5", None, AT)
    assert cost.usd == pytest.approx(0.012625, rel=1e-15)


def test_no_network_in_a_fresh_interpreter() -> None:
    """The first import of genai-prices too (in this process it may be imported already)."""
    script = textwrap.dedent(
        """
        import datetime as dt, socket, sys

        def refuse(*args, **kwargs):
            raise AssertionError(f"network used: {args}")

        socket.socket.connect = refuse
        socket.socket.connect_ex = refuse
        socket.create_connection = refuse
        assert "genai_prices" not in sys.modules
        from harness.pricing import item_cost
        from scorers.tokens import TokenUsage
        from scorers.verdict import UsageSummary

        usage = UsageSummary(total=TokenUsage(1000, 2000, 10000, 500), source="test")
        at = dt.datetime(2025, 11, 1, tzinfo=dt.UTC)
        print(item_cost(usage, "anthropic/claude-sonnet-4-5", None, at).usd)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0.037875"
