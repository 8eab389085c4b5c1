"""Short forms: a word no admitted row writes is searched as the start of the words they do write."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from docs_mcp_core.search.filters import kept_rows
from docs_mcp_core.search.lexical_index import LexicalIndex
from docs_mcp_core.search.prefixes import PrefixExpander, written

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


COMPOUND_TEXTS = [
    "Timeshift: create a timeshift for an employee",  # 0
    "List every timeshift of the week",  # 1
    "The time of a payslip and its period",  # 2
    "Passport and report fields",  # 3
]


def test_a_word_no_row_writes_becomes_the_compounds_that_end_with_it() -> None:
    lexical = LexicalIndex.build({"search_text": pa.array(COMPOUND_TEXTS)})
    prefixes = PrefixExpander(lexical.fields)
    # "shift" is written only at the end of "timeshift", whose "time" the corpus writes alone
    assert prefixes.expand(["shift"], None) == ["timeshift"]
    rows, _ = lexical.search_terms(prefixes.expand(["shift"], None), {"search_text": 1.0})
    assert sorted(rows.tolist()) == [0, 1]
    # "pass" and "re" are no words of this corpus (nor would "re" be long enough): left as they are
    assert prefixes.expand(["port", "slip"], None) == ["port", "slip"]
    # only the compounds an admitted row writes
    assert prefixes.expand(["shift"], np.array([False, False, True, True])) == ["shift"]


@pytest.mark.parametrize("seed", range(40))
def test_kept_rows_say_whether_any_row_is_kept_as_the_mask_does(seed: int) -> None:
    """The runs (few, long or many, short) answer as the mask looked up at every row does, for
    ascending rows of every count (few rows: looked up; many: one binary search per edge of a run)."""
    rng = np.random.default_rng(seed)
    size = int(rng.integers(0, 3000))
    runs = rng.integers(1, 400, size=size)  # lengths of alternate runs of kept and left-out rows
    first = bool(rng.integers(0, 2))
    mask = np.repeat(np.arange(size) % 2 == (0 if first else 1), runs)[:size]
    if rng.random() < 0.3:
        mask = rng.random(size) < rng.choice([0.0, 0.01, 0.5, 1.0])  # scattered rows
    kept = kept_rows(mask)
    assert kept_rows(mask) is kept and kept_rows(mask.copy()) is not kept  # one per mask array
    starts, ends = kept.edges[0::2], kept.edges[1::2]
    assert int(np.sum(ends - starts)) == int(mask.sum())  # every kept row, in one run
    assert all(bool(mask[s:e].all()) for s, e in zip(starts, ends, strict=True))
    for count in (0, 1, 5, 50, 500, size):
        rows = np.sort(rng.choice(size, size=min(count, size), replace=False)) if size else np.empty(0, int)
        assert kept.any_of(rows.astype(np.int32)) == bool(mask[rows].any())


def test_each_filter_keeps_its_own_answers() -> None:
    """The answers remembered for one filter are never another's: the same word, asked again
    under each of two filters in turn, is kept under the one whose rows write it only."""
    _, prefixes = expander()
    writes, does_not = np.array([False, False, False, True]), np.array([True, True, False, False])
    for _ in range(2):
        assert prefixes.expand(["repo"], writes) == ["repo"]
        assert prefixes.expand(["repo"], does_not) == ["repositori"]
        assert prefixes.long_forms("rep", writes) == ["repo"]
        assert prefixes.long_forms("rep", does_not) == ["repositori"]


def test_an_answer_remembered_for_some_columns_is_not_given_for_others() -> None:
    lexical = LexicalIndex.build(
        {"heading": pa.array(["Repository", "Other"]), "text": pa.array(["x", "repo"])}
    )
    heading, text = lexical.fields["heading"], lexical.fields["text"]
    mask = np.array([False, True])
    for _ in range(2):
        assert not written([heading], "repo", mask) and written([text], "repo", mask)
        assert written([heading, text], "repo", mask) and not written([heading], "repo", ~mask)
