"""Page openings (search/openings.py): for a question in the reader's own words, the opening of the
page whose name means it gains; end to end on a real build with heading vectors, and on hand-made
arrays for the rules."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from docs_mcp_core.chunk_ids import is_opening
from docs_mcp_core.search import SearchEngine
from docs_mcp_core.search.openings import Openings
from tests.support.tiny_corpus import build_pages, opened, ranking_weights

PAGES = {
    "guides/prompt-caching.md": (
        "# Prompt caching\n\nRequests that start with the same prefix reuse its computed state, and the "
        "reused tokens are billed at a lower rate.\n\n## Supported models\n\nEvery chat model supports it. "
        "The prefix must be at least 1024 tokens long: a long system prompt, tools and the first messages "
        "of a conversation.\n\n## Cache lifetime\n\nA cached prefix is kept for five minutes after its last "
        "use; each request that reuses the same system prompt resets the timer.\n"
    ),
    "guides/billing.md": (
        "# Billing\n\nInvoices, payment methods and spending limits of an organization.\n\n"
        "## Costs of requests\n\nYou pay for every request by its tokens, so a long system prompt costs "
        "more than a short one.\n"
    ),
}
DESCRIPTION = "pay less when many of my requests start with the same long system prompt"
CACHING, BILLING = "guides/prompt-caching.md#_preamble", "guides/billing.md#_preamble"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "openings", PAGES, heading_vectors=True)) as engine:
        yield engine


def _scores(engine: SearchEngine, query: str, opening: float | None = None) -> dict[str, float]:
    with ranking_weights(engine, **({} if opening is None else {"opening": opening})):
        return {h.chunk_id: h.score for h in engine.search(query, limit=10).hits}


def test_a_description_raises_the_opening_of_the_page_whose_name_means_it(engine: SearchEngine) -> None:
    with_it, without = _scores(engine, DESCRIPTION), _scores(engine, DESCRIPTION, opening=0.0)
    assert with_it[CACHING] == pytest.approx(without[CACHING] * 1.1, rel=1e-4)
    # the other page's opening is farther from the question, and the sections are no openings
    for chunk_id, score in without.items():
        if chunk_id != CACHING:
            assert with_it[chunk_id] == pytest.approx(score, rel=1e-6)
    assert BILLING in without and with_it[BILLING] == pytest.approx(without[BILLING], rel=1e-6)


def test_a_topic_or_a_name_from_code_is_left_alone(engine: SearchEngine) -> None:
    for query in ("prompt caching", "cached prefix for system_prompt"):
        assert _scores(engine, query) == pytest.approx(_scores(engine, query, opening=0.0))


def test_openings_are_preambles_and_files_chunked_whole() -> None:
    assert is_opening("guides/billing.md#_preamble")
    assert is_opening("guides/billing.md")  # a file chunked whole
    assert is_opening("sdks/c#/README.md")  # a '#' in the path is no fragment
    assert not is_opening("guides/billing.md#_preamble-part-2")
    assert not is_opening("guides/billing.md#_preamble/billing")
    assert not is_opening("guides/billing.md#billing/costs-of-requests")


IDS = ["a.md#_preamble", "a.md#a/get", "b.md#_preamble", "model.md#_preamble", "model.md#model/fields"]
NO_MODEL = np.zeros(len(IDS), dtype=bool)


def _heading(positions: list[int]) -> tuple[np.ndarray, np.ndarray]:
    return np.array(positions, dtype=np.int64), np.linspace(0.6, 0.3, len(positions))


def test_only_the_nearest_opening_gains_and_only_among_the_best_rows() -> None:
    rows = np.arange(len(IDS), dtype=np.int64)
    score = np.array([0.5, 1.0, 0.8, 0.9, 0.7])
    Openings(IDS).boost(rows, score, _heading([1, 2, 0]), NO_MODEL, 0.1)  # b.md is the nearest opening
    assert score.tolist() == pytest.approx([0.5, 1.0, 0.88, 0.9, 0.7])
    found = np.array([0, 1, 3, 4], dtype=np.int64)  # the nearest opening is no candidate: nothing gains
    score = np.array([0.5, 1.0, 0.9, 0.7])
    Openings(IDS).boost(found, score, _heading([2, 0]), NO_MODEL, 0.1)
    assert score.tolist() == [0.5, 1.0, 0.9, 0.7]
    many = np.arange(60, dtype=np.int64)  # below the 50 best rows: no gain
    ids = ["x.md#x/s"] * 59 + ["y.md#_preamble"]
    score = np.linspace(1.0, 0.1, 60)
    Openings(ids).boost(many, score, _heading([59]), np.zeros(60, dtype=bool), 0.1)
    assert score.tolist() == pytest.approx(np.linspace(1.0, 0.1, 60).tolist())


def test_a_data_types_page_is_no_opening_and_a_zero_weight_changes_nothing() -> None:
    rows = np.arange(len(IDS), dtype=np.int64)
    model = np.array([False, False, False, True, True])
    score = np.array([0.5, 1.0, 0.8, 0.9, 0.7])
    Openings(IDS).boost(rows, score, _heading([3, 0]), model, 0.1)  # model.md's preamble is skipped
    assert score.tolist() == pytest.approx([0.55, 1.0, 0.8, 0.9, 0.7])
    score = np.array([0.5, 1.0, 0.8, 0.9, 0.7])
    Openings(IDS).boost(rows, score, _heading([0]), NO_MODEL, 0.0)
    Openings([]).boost(rows[:0], score[:0], _heading([]), NO_MODEL[:0], 0.1)
    assert score.tolist() == [0.5, 1.0, 0.8, 0.9, 0.7]


def test_the_mask_is_read_from_the_chunk_ids_once() -> None:
    openings = Openings(IDS)
    assert openings.mask.tolist() == [True, False, True, True, False]
    assert openings.mask is openings.mask


def test_a_build_stores_which_rows_open_their_page_so_a_server_reads_no_chunk_id(
    engine: SearchEngine,
) -> None:
    """Reading every chunk id at warm-up costs 70-95 ms at ten times sdk-docs, before a server's
    first answer: the build stores the mask with the row catalog, and the ranker takes it from there."""
    catalog = engine._ranker._catalog  # pyright: ignore[reportPrivateUsage]
    assert engine.opened_from == "derived files"
    assert catalog.openings is not None
    assert catalog.openings.tolist() == [is_opening(c) for c in catalog.chunk_ids]
    assert engine._ranker._openings.mask is catalog.openings  # pyright: ignore[reportPrivateUsage]


def test_openings_given_are_used_as_they_are() -> None:
    stored = np.array([False, True, False, False, True])
    assert Openings(IDS, stored).mask is stored
