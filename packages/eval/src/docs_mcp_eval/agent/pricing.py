"""What a model's tokens cost, from a table of list prices (USD per million tokens).

The cost of a run is computed here from the token counts the API reports, so ``--max-budget-usd`` can
be enforced for any provider. A model that is not in the table is reported as such: its cost is 0
and the budget cannot stop it, unless ``--price-per-mtok INPUT,OUTPUT`` gives its prices. Dated
snapshots (``claude-sonnet-4-5-20250929``, ``gpt-4o-2024-08-06``) are priced as their base model.
Prices are list prices as published by the providers; check them before trusting a budget.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float = 0.0

    @classmethod
    def anthropic(cls, input_: float, output: float) -> Price:
        """Anthropic: cache reads at 10 % of input, 5-minute cache writes at 125 %."""
        return cls(input_, output, round(input_ * 0.1, 6), round(input_ * 1.25, 6))

    @classmethod
    def flat(cls, input_: float, output: float) -> Price:
        """A price given on the command line: cached input costs as much as input."""
        return cls(input_, output, input_, input_)


@dataclass(frozen=True)
class Usage:
    """Token counts of one or more model calls. ``input_tokens`` excludes cache reads and writes."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
        )


PRICES: Mapping[str, Price] = {
    # Anthropic (https://www.anthropic.com/pricing)
    "claude-opus-4-6": Price.anthropic(5.0, 25.0),
    "claude-opus-4-5": Price.anthropic(5.0, 25.0),
    "claude-opus-4-1": Price.anthropic(15.0, 75.0),
    "claude-opus-4-0": Price.anthropic(15.0, 75.0),
    "claude-opus-4": Price.anthropic(15.0, 75.0),
    "claude-sonnet-4-5": Price.anthropic(3.0, 15.0),
    "claude-sonnet-4-0": Price.anthropic(3.0, 15.0),
    "claude-sonnet-4": Price.anthropic(3.0, 15.0),
    "claude-3-7-sonnet": Price.anthropic(3.0, 15.0),
    "claude-haiku-4-5": Price.anthropic(1.0, 5.0),
    "claude-3-5-haiku": Price.anthropic(0.8, 4.0),
    "claude-3-haiku": Price.anthropic(0.25, 1.25),
    # OpenAI (https://openai.com/api/pricing); cached input as listed, no cache-write charge
    "gpt-5": Price(1.25, 10.0, 0.125),
    "gpt-5-mini": Price(0.25, 2.0, 0.025),
    "gpt-5-nano": Price(0.05, 0.4, 0.005),
    "gpt-4.1": Price(2.0, 8.0, 0.5),
    "gpt-4.1-mini": Price(0.4, 1.6, 0.1),
    "gpt-4.1-nano": Price(0.1, 0.4, 0.025),
    "gpt-4o": Price(2.5, 10.0, 1.25),
    "gpt-4o-mini": Price(0.15, 0.6, 0.075),
    "o3": Price(2.0, 8.0, 0.5),
    "o3-mini": Price(1.1, 4.4, 0.55),
    "o4-mini": Price(1.1, 4.4, 0.275),
}

_DATE_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")


def price_for(model: str, table: Mapping[str, Price] = PRICES) -> Price | None:
    """The table's price for ``model`` (or for it without a date suffix); ``None`` when unknown."""
    name = model.strip().lower()
    if name in table:
        return table[name]
    base = _DATE_SUFFIX.sub("", name)
    return table.get(base)


def cost_usd(usage: Usage, price: Price | None) -> float:
    """What ``usage`` costs at ``price``; 0 for an unpriced model."""
    if price is None:
        return 0.0
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_input_tokens * price.cache_read
        + usage.cache_creation_input_tokens * price.cache_write
    ) / 1_000_000


def parse_price_option(value: str) -> Price:
    """``--price-per-mtok INPUT,OUTPUT`` (USD per million tokens); raises ``ValueError``."""
    parts = [p.strip() for p in value.split(",")]
    if len(parts) != 2:
        raise ValueError(f"expected INPUT,OUTPUT in USD per million tokens (e.g. 0.5,1.5), got {value!r}")
    try:
        input_, output = float(parts[0]), float(parts[1])
    except ValueError:
        raise ValueError(f"expected two numbers INPUT,OUTPUT, got {value!r}") from None
    if input_ < 0 or output < 0:
        raise ValueError(f"prices must not be negative, got {value!r}")
    return Price.flat(input_, output)
