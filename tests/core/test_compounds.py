"""Compounds: words a reader writes apart that the docs write as one, and the reverse."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from docs_mcp_core.search import SearchEngine
from docs_mcp_core.search.analyzer import analyze
from docs_mcp_core.search.compounds import Compounds, Join, adjacent_pairs
from docs_mcp_core.search.lexical_index import LexicalIndex
from tests.support.tiny_corpus import build_pages, language_manifest, opened

TEXTS = [
    "paymentlinks overview page",  # 0: the compound only
    "payment links overview",  # 1: the two words, as many words as row 0
    "paymentlinks with payment links",  # 2: both
    "paymentlinks",  # 3
    "a payment by card",  # 4
    "links to other pages",  # 5
    "register webhook endpoints here",  # 6
    "webhook settings",  # 7
    "endpoints of the service",  # 8
    "in it we trust, the init step",  # 9
    "login",  # 10: one row writes it
]
BOOSTS = {"search_text": 1.0}


def compounds() -> tuple[LexicalIndex, Compounds]:
    lexical = LexicalIndex.build({"search_text": pa.array(TEXTS)}, positions=["search_text"])
    return lexical, Compounds(lexical.fields, lexical.fields["search_text"])


def mask_of(*rows: int) -> np.ndarray:
    mask = np.zeros(len(TEXTS), dtype=bool)
    mask[list(rows)] = True
    return mask


def scores(lexical: LexicalIndex, terms: list[str], extra: dict | None = None) -> dict[int, float]:
    rows, values = lexical.search_terms(terms, BOOSTS, limit=100, extra=extra)
    return dict(zip(rows.tolist(), values.tolist(), strict=True))


def test_adjacent_words_apart_or_hyphenated_are_pairs_and_punctuation_breaks_them() -> None:
    assert adjacent_pairs("Re-open the payment  links; sign-in.x") == [
        ("re", "open"),
        ("open", "the"),
        ("the", "payment"),
        ("payment", "links"),
        ("sign", "in"),
    ]


def test_two_words_the_corpus_writes_as_one_compound_are_joined() -> None:
    _, words = compounds()
    assert words.joins("payment links", None) == [Join("paymentlink", ("payment", "link"))]
    assert words.joins("payment-links", None) == [Join("paymentlink", ("payment", "link"))]


def test_no_join_for_a_compound_few_rows_write_one_no_admitted_row_writes_or_a_stop_word_first() -> None:
    _, words = compounds()
    assert words.joins("log in", None) == []  # one row writes login
    assert words.joins("in it", None) == []  # a stop word first
    assert words.joins("payment links", mask_of(1, 4, 5)) == []
    assert words.joins("payment links", mask_of(0, 1)) == [Join("paymentlink", ("payment", "link"))]


def test_a_row_that_writes_the_compound_scores_as_a_row_that_writes_the_two_words() -> None:
    lexical, words = compounds()
    terms = ["payment", "link"]
    without = scores(lexical, terms)
    assert 0 not in without and 3 not in without
    found = scores(lexical, terms, words.alternatives(words.joins("payment links", None), terms))
    assert found[0] == pytest.approx(found[1], rel=1e-6)  # same length, each word once
    assert found[2] == pytest.approx(without[2], rel=1e-6)  # its words already score as much
    assert found[3] > found[0]  # a shorter row, as BM25 has it
    assert {k: v for k, v in found.items() if k not in (0, 3)} == pytest.approx(without, rel=1e-6)


def test_a_compound_the_query_also_writes_whole_is_left_to_its_own_term() -> None:
    _, words = compounds()
    joins = words.joins("payment links", None)
    assert words.alternatives(joins, ["payment", "link", "paymentlink"]) == {}


def test_a_word_no_admitted_row_writes_is_split_into_a_phrase_the_corpus_writes() -> None:
    lexical, words = compounds()
    assert words.split("webhookendpoints", ["webhookendpoint"], None) == ["webhook", "endpoint"]
    assert words.split("list webhookendpoints", ["list", "webhookendpoint"], mask_of(6)) == [
        "list",
        "webhook",
        "endpoint",
    ]
    rows, _ = lexical.search_terms(words.split("webhookendpoints", ["webhookendpoint"], None), BOOSTS)
    assert rows.tolist()[0] == 6


def test_no_split_of_a_written_word_or_without_the_phrase_in_an_admitted_row() -> None:
    _, words = compounds()
    assert words.split("paymentlinks", ["paymentlink"], None) == ["paymentlink"]  # written
    assert words.split("webhookendpoints", ["webhookendpoint"], mask_of(7, 8)) == ["webhookendpoint"]
    assert words.split("webhookpages", analyze("webhookpages"), None) == analyze("webhookpages")  # no phrase


# ── end to end: a tiny corpus built with the real builder ─────────────────────────────────────

LOGOUT = "# uv auth logout\n\nRemove the credentials of a registry from the keyring.\n"
LOGIN = "# uv auth login\n\nStore the credentials of a registry in the keyring.\n"
GUIDE = """# Authentication

## Tokens

Log in with a token; the log lines print it out.

## Keyring

The keyring holds the credentials of every service.
"""
WEBHOOKS = "# Events\n\n## Delivery\n\nWebhook endpoints receive every event as a POST request.\n"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pages = {"go/events.md": WEBHOOKS}
    for language in ("python", "go"):
        pages[f"{language}/.docs-mcp.json"] = language_manifest(language)
        pages[f"{language}/cli/logout.md"] = LOGOUT
        pages[f"{language}/cli/login.md"] = LOGIN
        pages[f"{language}/auth.md"] = GUIDE
    return build_pages(tmp_path_factory, "compound", pages)


@pytest.fixture(scope="module")
def engine(index: Path) -> Iterator[SearchEngine]:
    with opened(index) as engine:
        yield engine


def test_words_written_apart_find_the_page_named_by_their_compound(engine: SearchEngine) -> None:
    hits = engine.search("log out of a registry", limit=3, filters={"language": "python"}).hits
    assert hits[0].chunk_id == "python/cli/logout.md#_preamble"


def test_a_compound_the_docs_write_apart_finds_them_under_a_filter(engine: SearchEngine) -> None:
    hits = engine.search("webhookendpoints", limit=3, filters={"language": "go"}).hits
    assert [h.chunk_id for h in hits] == ["go/events.md#events/delivery"]


def test_the_original_ranking_neither_joins_nor_splits(index: Path) -> None:
    with opened(index, ranking="original") as original:
        assert original.search("webhookendpoints", limit=3, filters={"language": "go"}).hits == []
