"""A long chunk's snippet is made without collapsing its whole text: it must be the very snippet the
definition (collapse everything, then cut) gives, on any text and any terms."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docs_mcp_core.search import snippet
from docs_mcp_core.search.snippet import SNIPPET_LENGTH, make_snippet

# pieces a chunk's text is drawn from: words that match, words that do not, whitespace of every kind
# and length, and characters whose lower case is not one character or depends on its neighbours
WORDS = ["retry", "RETRY", "Retries", "config", "RetryConfig", "uv", "UV-pip", "skypilot", "x", "é", "ÉTÉ"]
ODD = ["\0", "İ", "Σ", "ΑΣ", "K", "ß", "ſ", "\u0085", "\u2028", "\u3000", "\x1c", "🙂", "\u200b", "ǅ"]
SPACES = [" ", "  ", "\n", "\n\n", "\t", " \n ", "\r\n", "\x0b\x0c", " " * 300, "\n" * 2000]
TERMS = ["retry", "config", "uv", "skypilot", "é", "été", "pip", "i̇", "k", "zebra", "\0", "ss"]


@pytest.fixture(autouse=True, params=["every long text", "as configured"])
def raw_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs twice: with every text over 2 kB taken down the raw-text path whatever its
    number of terms, and with the module's own choice."""
    if request.param == "every long text":
        monkeypatch.setattr(snippet, "_CHARS_PER_MATCH", 0)


def reference(text: str, terms: Sequence[str], length: int = SNIPPET_LENGTH) -> str:
    """The snippet as it was defined before the raw-text path: collapse the whole text, then cut."""
    normal = " ".join(text.split())
    if len(normal) <= length:
        return normal
    lower = normal.lower()
    positions: list[tuple[int, str]] = []
    for term in terms:
        start = 0
        for _ in range(50):
            i = lower.find(term, start)
            if i < 0:
                break
            positions.append((i, term))
            start = i + len(term)
    anchor = 0
    if positions:
        positions.sort()
        best_count, lo = -1, 0
        counts: dict[str, int] = {}
        for pos, term in positions:
            counts[term] = counts.get(term, 0) + 1
            while positions[lo][0] < pos + len(term) - length + 60:
                old = positions[lo][1]
                counts[old] -= 1
                if not counts[old]:
                    del counts[old]
                lo += 1
            if len(counts) > best_count:
                best_count, anchor = len(counts), positions[lo][0]
    start = max(0, anchor - 60)
    end = min(len(normal), start + length)
    if end == len(normal):
        start = max(0, end - length)
    if start > 0:
        space = normal.find(" ", start, start + 20)
        if space != -1:
            start = space + 1
    if end < len(normal):
        space = normal.rfind(" ", end - 20, end)
        if space != -1:
            end = space
    return ("..." if start > 0 else "") + normal[start:end].strip() + ("..." if end < len(normal) else "")


def _text(rng: random.Random, size: int, odd: bool) -> str:
    pieces: list[str] = []
    total = 0
    while total < size:
        roll = rng.random()
        if roll < 0.45:
            piece = rng.choice(WORDS)
        elif roll < 0.55:
            piece = "".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 12)))
        elif odd and roll < 0.6:
            piece = rng.choice(ODD)
        else:
            piece = rng.choice(SPACES)
        pieces.append(piece)
        total += len(piece)
    return "".join(pieces)


@pytest.mark.parametrize("seed", range(40))
def test_random_long_texts_give_the_snippet_of_the_definition(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(25):
        text = _text(rng, rng.choice([100, 2000, 3000, 9000, 40000]), odd=seed % 4 == 0)
        terms = rng.sample(TERMS, rng.randint(0, 5))
        assert make_snippet(text, terms) == reference(text, terms)


HOSTILE = [
    "a" * 50_000,  # one long line, one word
    "word " * 10_000,  # no match anywhere
    "filler " * 8_000 + "retry config",  # the only matches at the very end
    "retry config " + "filler " * 8_000,  # the only matches at the very start
    " " * 30_000 + "retry" + " " * 30_000,  # a match lost in whitespace
    "retry" + "\n" * 5_000 + "config" + "\t" * 5_000 + "uv" + " filler" * 3000,  # near once collapsed
    "é ü\0 " * 5_000 + "RETRY",  # unicode and NUL
    "\0" * 20_000 + " retry",
    "Σ retry ΑΣ " * 2_000,  # a capital sigma's lower case depends on its neighbours
    "İstanbul retry " * 2_000,  # a character whose lower case is two characters
    "retry " * 60 + "x " * 5_000 + "config " * 3 + "retry",  # past the first 50 matches of a term
    "\u3000".join(["retry"] * 3_000),  # whitespace beyond ASCII
    "".join(f"Option{i} --retry-{i} config" + " " * (i % 400) + "\n" for i in range(2_000)),
]


@pytest.mark.parametrize("index", range(len(HOSTILE)))
@pytest.mark.parametrize(
    "terms", [[], ["retry"], ["retry", "config", "uv"], ["zebra"], ["i̇"], ["σ", "retry"]]
)
def test_hostile_texts_give_the_snippet_of_the_definition(index: int, terms: list[str]) -> None:
    text = HOSTILE[index]
    for length in (SNIPPET_LENGTH, 100, 500):
        assert make_snippet(text, terms, length) == reference(text, terms, length)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.lists(
        st.one_of(st.sampled_from(WORDS + ODD + SPACES), st.text(min_size=1, max_size=30)), max_size=400
    ).map("".join),
    terms=st.lists(st.one_of(st.sampled_from(TERMS), st.text(min_size=0, max_size=6)), max_size=4),
)
def test_any_text_and_terms_give_the_snippet_of_the_definition(text: str, terms: list[str]) -> None:
    assert make_snippet(text, terms) == reference(text, terms)


@pytest.mark.parametrize("gap", [" ", "\n", " \n\t ", " " * 500])
def test_terms_at_the_edge_of_the_window_reach_each_other_as_in_the_collapsed_text(gap: str) -> None:
    # a lone "config" first, then "retry" and "config" about a window apart: whether the pair is
    # preferred depends on their distance in the collapsed text, to the character
    filler = "filler " * 500
    for width in range(140, 175):
        text = f"config {filler}retry{'y' * width}{gap}config {filler}"
        assert make_snippet(text, ["retry", "config"]) == reference(text, ["retry", "config"])
