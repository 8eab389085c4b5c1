"""Short forms: a word no admitted row writes is searched as the start of the words they do write."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from docs_mcp_core.search.lexical_index import LexicalIndex
from docs_mcp_core.search.prefixes import PrefixExpander

TEXTS = [
    "Create a repository for your code",  # 0
    "Delete a repository and its history",  # 1
    "A report of the repository usage",  # 2
    "repo is how the Go SDK names it",  # 3
]


def expander() -> tuple[LexicalIndex, PrefixExpander]:
    lexical = LexicalIndex.build({"search_text": pa.array(TEXTS)})
    return lexical, PrefixExpander(lexical.fields)


def test_a_word_no_row_writes_becomes_its_long_forms() -> None:
    _, prefixes = expander()
    only_long = np.array([True, True, True, False])
    expanded = prefixes.expand(["repo"], only_long)
    assert expanded[0] == "repositori"  # the most frequent long form first
    assert set(expanded) <= {"repositori", "report"}


def test_a_word_an_admitted_row_writes_is_kept() -> None:
    _, prefixes = expander()
    assert prefixes.expand(["repo"], None) == ["repo"]
    assert prefixes.expand(["delet", "histori"], None) == ["delet", "histori"]


def test_short_words_and_words_with_digits_are_kept() -> None:
    _, prefixes = expander()
    assert prefixes.expand(["re", "v2x"], np.array([True, True, True, False])) == ["re", "v2x"]


def test_long_forms_come_only_from_admitted_rows() -> None:
    _, prefixes = expander()
    assert prefixes.expand(["rep"], np.array([False, False, True, False])) == ["repositori", "report"]
    assert "repositori" not in prefixes.long_forms("rep", np.array([False, False, False, True]))


def test_a_short_form_under_a_filter_finds_rows_instead_of_none() -> None:
    lexical, prefixes = expander()
    mask = np.array([True, True, False, False])
    assert not len(lexical.search_terms(["repo"], {"search_text": 1.0}, mask=mask)[0])
    rows, _ = lexical.search_terms(prefixes.expand(["repo"], mask), {"search_text": 1.0}, mask=mask)
    assert sorted(rows.tolist()) == [0, 1]
