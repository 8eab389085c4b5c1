"""The query-time ranking (search/ranker.py), function by function, on hand-made arrays."""

from __future__ import annotations

import numpy as np
import pytest

from docs_mcp_core.search import Query
from docs_mcp_core.search.coverage import best_rows, coverage_factor, coverage_rows
from docs_mcp_core.search.cues import cue_factors, query_cues
from docs_mcp_core.search.legs import EMPTY_LEG
from docs_mcp_core.search.ranker import (
    RRF_K,
    Ranked,
    RankingWeights,
    continued,
    default_contributions,
    first_of_each_group,
    order,
    original_contributions,
    summed,
)

TAXONOMY = {"language": ["go", "python", "typescript"], "service": ["billing", "ledger-sync"]}
W = RankingWeights()


def _leg(positions: list[int], scores: list[float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    pos = np.array(positions, dtype=np.int64)
    return pos, np.array(scores if scores is not None else [0.0] * len(positions), dtype=np.float64)


def test_default_contributions_per_leg() -> None:
    legs = {
        "match": _leg([4, 2], [8.0, 2.0]),
        "phrase": _leg([2, 7]),
        "vector": _leg([9, 4, 2]),
        "spelling": _leg([7], [3.0]),
    }
    positions, adds = default_contributions(legs, W)
    assert [p.tolist() for p in positions] == [[4, 2], [2, 7], [9, 4, 2], [7]]
    match, phrase, vector, spelling = adds
    assert match.tolist() == [1.0, 0.25]  # BM25 over the best score
    assert phrase.tolist() == pytest.approx([0.25 / 61, 0.25 / 62])
    assert vector.tolist() == pytest.approx([0.5, 0.5 * 61 / 62, 0.5 * 61 / 63])  # 1st gets the weight
    assert spelling.tolist() == pytest.approx([0.6])
    # empty legs add nothing; a match leg of zero scores is not divided by zero
    positions, adds = default_contributions({"match": _leg([1], [0.0]), "phrase": EMPTY_LEG}, W)
    assert [p.tolist() for p in positions] == [[1]] and adds[0].tolist() == [0.0]


def test_original_contributions_count_a_row_at_its_best_rank() -> None:
    legs = {"match": _leg([5, 3, 5]), "phrase": _leg([3]), "vector": EMPTY_LEG}
    positions, adds = original_contributions(legs, {"match": 1.0, "phrase": 0.0, "vector": 1.0})
    assert [p.tolist() for p in positions] == [[5, 3], [3]]
    assert adds[0].tolist() == pytest.approx([1 / (RRF_K + 1), 1 / (RRF_K + 2)])
    assert adds[1].tolist() == [0.0]  # a weight of 0 adds nothing


def test_summed_adds_a_rows_contributions() -> None:
    rows, score = summed([np.array([4, 2]), np.array([2, 7])], [np.array([1.0, 0.5]), np.array([0.25, 2.0])])
    assert rows.tolist() == [2, 4, 7]
    assert score.tolist() == [0.75, 1.0, 2.0]
    rows, score = summed([], [])
    assert len(rows) == 0 and len(score) == 0


def test_query_cues_find_taxonomy_values_named_in_the_query() -> None:
    def cues(query: str, filtered: tuple[str, ...] = ()) -> dict[str, str]:
        return query_cues(Query.parse(query).words, TAXONOMY, filtered)

    assert cues("retries in the Dub Go SDK") == {"language": "go"}
    assert cues("how do I go about retries") == {}  # lowercase 'go' is a verb
    assert cues("pagination with the TS client") == {"language": "typescript"}
    assert cues("ledger sync in python") == {"language": "python", "service": "ledger-sync"}
    assert cues("billing in python", ("language",)) == {"service": "billing"}


def test_aliases_name_only_values_the_key_has() -> None:
    def cues(query: str, taxonomy: dict[str, list[str]]) -> dict[str, str]:
        return query_cues(Query.parse(query).words, taxonomy, ())

    with_js = {"language": ["javascript", "python", "typescript"]}
    assert cues("paginate with js", with_js) == {"language": "javascript"}
    assert cues("paginate in JavaScript", with_js) == {"language": "javascript"}
    assert cues("paginate in Node", with_js) == {"language": "javascript"}
    assert cues("paginate with js", TAXONOMY) == {"language": "typescript"}  # no javascript value
    assert cues("paginate in javascript", TAXONOMY) == {"language": "typescript"}
    # 'node' is an ordinary word unless capitalised
    assert cues("how to delete a node from the tree", with_js) == {}
    assert cues("how to delete a node from the tree", TAXONOMY) == {}
    # an alias names nothing when the key has none of its values
    assert cues("retries with golang", {"language": ["python"]}) == {}
    # C# is a word: it names c#, or csharp / dotnet through the aliases
    assert cues("retries in C#", {"language": ["c#", "go"]}) == {"language": "c#"}
    assert cues("retries in C#", {"language": ["csharp", "go"]}) == {"language": "csharp"}
    assert cues("retries in csharp", {"language": ["dotnet"]}) == {"language": "dotnet"}
    assert cues("C++ bindings", {"sdk": ["c++", "rust"]}) == {"sdk": "c++"}
    # a web framework names the language it is written in; one that is also a word, capitalised
    assert cues("log a user in with SAML from my Django app", TAXONOMY) == {"language": "python"}
    assert cues("post to Slack from my Express server", with_js) == {"language": "javascript"}
    assert cues("an express delivery of the report", with_js) == {}
    assert cues("react to a webhook event", TAXONOMY) == {}
    # aliases apply to any key that has the value they stand for
    assert cues("the py client", {"sdk": ["python", "go"], "kind": ["guide"]}) == {"sdk": "python"}


def test_cue_factors_boost_the_named_value_and_damp_the_others() -> None:
    # rows 0..4 carry: go, python, (no value), typescript, go; service: billing on row 4 only
    language = np.array([0, 1, -1, 2, 0])
    service = np.array([-1, -1, -1, -1, 0])
    columns = {"language": (language, ["go", "python", "typescript"]), "service": (service, ["billing"])}

    def codes(key: str, value: str) -> tuple[np.ndarray, int] | None:
        if key not in columns:
            return None
        found, values = columns[key]
        return found, values.index(value) if value in values else -2

    rows = np.array([0, 1, 2, 3, 4])
    factor = cue_factors(rows, {"language": "go"}, codes, 0.5)
    assert factor.tolist() == pytest.approx([1.5, 1 / 1.5, 1.0, 1 / 1.5, 1.5])
    both = cue_factors(rows[[4, 1]], {"language": "go", "service": "billing"}, codes, 0.5)
    assert both.tolist() == pytest.approx([1.5 * 1.5, 1 / 1.5])  # row 1 has no service: left alone
    # a value no row carries damps every row with another value; an unknown key changes nothing
    assert cue_factors(rows, {"language": "rust"}, codes, 0.5).tolist() == pytest.approx(
        [1 / 1.5, 1 / 1.5, 1.0, 1 / 1.5, 1 / 1.5]
    )
    assert cue_factors(rows, {"kind": "x"}, codes, 0.5).tolist() == [1.0] * 5


def test_coverage_rows_are_the_best_rows_the_match_leg_found() -> None:
    rows = np.array([1, 3, 5, 8, 9])
    score = np.array([0.5, 3.0, 2.0, 9.0, 2.0])
    match = np.array([9, 5, 1, 3])  # row 8 came from another leg only
    top = coverage_rows(rows, score, match, 3)
    assert rows[top].tolist() == [3, 5, 9]  # best first; equal scores in row order
    assert rows[coverage_rows(rows, score, match, 10)].tolist() == [3, 5, 9, 1]


@pytest.mark.parametrize("seed", range(10))
def test_best_rows_of_a_long_pool_are_the_first_of_sorting_every_score(seed: int) -> None:
    """A pool thousands of rows long (a hundred copies of each chunk score alike) is cut by a
    partition before it is sorted: the same rows in the same order, ties in index order."""
    rng = np.random.default_rng(seed)
    for size in (0, 1, 49, 400, 401, 5000):
        score = np.repeat(np.round(rng.random(size // 10 + 1) * 9, int(rng.integers(0, 3))), 10)[:size]
        rng.shuffle(score)
        for depth in (1, 5, 50):
            assert best_rows(score, depth).tolist() == np.argsort(-score, kind="stable")[:depth].tolist()


def test_coverage_factor_counts_words_found_at_word_starts() -> None:
    terms = ["verify", "webhook", "signature"]
    every = coverage_factor("verify each webhook signature", terms)
    one = coverage_factor("webhook webhook webhook", terms)
    none = coverage_factor("nothing relevant", terms)
    assert every == 1.0
    assert 0 < none < one < every
    assert one == ((1 + 0.5) / (3 + 0.5)) ** 0.5
    # a term matches the start of a word only: "tag" is in "tags", not in "stage"
    assert coverage_factor("stage", ["tag", "zzz"]) == coverage_factor("none", ["tag", "zzz"])
    assert coverage_factor("tags", ["tag", "zzz"]) > coverage_factor("stage", ["tag", "zzz"])
    assert coverage_factor("anything", []) == 1.0


def test_order_rounds_then_breaks_ties_by_depth_then_chunk_id() -> None:
    rows = np.array([0, 1, 2, 3])
    score = np.array([1.0000001, 1.0, 2.0, 1.0])
    sort_rank = np.array([3, 2, 1, 0])  # chunk id order: row 3 first
    depth = np.array([1, 0, 0, 1])
    ranked = order(rows, score, sort_rank, depth=depth)
    assert ranked.positions.tolist() == [2, 1, 3, 0]  # 6 decimals: rows 0, 1, 3 tie
    assert ranked.scores.tolist() == [2.0, 1.0, 1.0, 1.0]
    assert order(rows, score, sort_rank).positions.tolist() == [2, 3, 1, 0]


def test_continued_keeps_the_first_ranking_and_appends_the_rest_in_deeper_order() -> None:
    first = Ranked(np.array([5, 2, 9]), np.array([3.0, 2.0, 1.0]))
    deeper = Ranked(np.array([2, 7, 5, 1, 9, 4]), np.array([3.5, 3.0, 2.5, 2.0, 1.5, 1.0]))
    both = continued(first, deeper)
    assert both.positions.tolist() == [5, 2, 9, 7, 1, 4]
    assert both.scores.tolist() == [3.0, 2.0, 1.0, 3.0, 2.0, 1.0]
    assert continued(first, Ranked(np.empty(0, np.int64), np.empty(0))).positions.tolist() == [5, 2, 9]


def test_first_of_each_group_keeps_order_and_ungrouped_rows() -> None:
    groups = np.array([3, -1, 3, 7, -1, 7, 2, -5])
    assert first_of_each_group(groups).tolist() == [True, True, False, True, True, False, True, True]
    assert first_of_each_group(np.array([-1, -2])).tolist() == [True, True]
