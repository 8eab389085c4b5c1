"""The match leg scored once per group of identical rows (search/copy_groups.py) answers as
scoring every row does, bit for bit, on random corpora of copies: rows laid out copy by copy, a
few groups whose members differ (a term some members lack, or another text altogether: the
postings are then not aligned and are scored per row), rows of their own, filters, boosts that
are and are not powers of two, postings made at query time, limits of every size."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from docs_mcp_core.search import copy_groups, match_pruning
from docs_mcp_core.search.copy_groups import CopyGroups, grouped_best
from docs_mcp_core.search.lexical_index import LexicalIndex
from docs_mcp_core.search.match_pruning import Posting, Scratch, dense_best

COMMON = ["client", "request", "response", "error", "config"]
RARE = [f"word{i}" for i in range(40)]


def _text(rng: random.Random) -> str:
    words = [rng.choice(COMMON) for _ in range(rng.randint(0, 10))]
    words += [rng.choice(RARE) for _ in range(rng.randint(0, 4))]
    rng.shuffle(words)
    return " ".join(words)


def _numbered(digests: list[str | None]) -> np.ndarray:
    """The catalog's dedup groups: numbered by first row, a row without a digest negative."""
    seen: dict[str, int] = {}
    return np.array(
        [seen.setdefault(d, len(seen)) if d else -(i + 1) for i, d in enumerate(digests)], dtype=np.int64
    )


def _corpus(seed: int) -> tuple[LexicalIndex, CopyGroups, random.Random]:
    rng = random.Random(seed)
    base = [_text(rng) for _ in range(rng.randint(20, 80))]
    headings = [" ".join(rng.sample(COMMON + RARE[:8], rng.randint(0, 2))) for _ in base]
    copies = rng.choice([2, 5, 20])
    body: list[str] = []
    heading: list[str] = []
    path: list[str] = []
    digests: list[str | None] = []
    for copy in range(copies):  # laid out copy by copy, as a corpus of copies is
        for number, text in enumerate(base):
            body.append(text)
            heading.append(headings[number])
            path.append(f"copy{copy} " + rng.choice(["", "client", "word1 word2", "error"]))
            digests.append(f"text{number}")
    differ = rng.randint(1, 3) if seed % 3 == 0 else 0  # in every third corpus
    for i in rng.sample(range(len(body)), k=differ):  # members that differ: not aligned
        body[i] = body[i] + " " + rng.choice(RARE) if rng.random() < 0.5 else _text(rng)
        heading[i] = rng.choice(["", "error", heading[i]])
    for i in rng.sample(range(len(body)), k=len(body) // 30):
        digests[i] = None  # a row of its own
    columns = {"body": pa.array(body), "heading": pa.array(heading), "path": pa.array(path)}
    index = LexicalIndex.build(columns)
    groups = CopyGroups(_numbered(digests), [(f.rows, f.weights) for f in index.fields.values()])
    return index, groups, rng


def _query(rng: random.Random) -> list[str]:
    words = [rng.choice(COMMON) for _ in range(rng.randint(0, 3))]
    words += [rng.choice([*RARE, "copy1", "client"]) for _ in range(rng.randint(0, 3))]
    if rng.random() < 0.2 and words:
        words.append(words[0])
    rng.shuffle(words)
    return words


def _same(found: tuple[np.ndarray, np.ndarray], expected: tuple[np.ndarray, np.ndarray]) -> bool:
    return np.array_equal(found[0], expected[0]) and found[1].tobytes() == expected[1].tobytes()


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("share", [match_pruning.SPARSE_SHARE, 10_000])
def test_grouped_best_answers_as_scoring_every_row(
    seed: int, share: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``share`` 10,000 has every column not aligned with the groups taken for one of many
    postings (bounded, looked up at the candidates, or scored over every row)."""
    monkeypatch.setattr(copy_groups, "SPARSE_SHARE", share)
    index, groups, rng = _corpus(seed)
    answered = 0
    for _ in range(40):
        terms = _query(rng)
        boosts = {"body": 1.0, "heading": rng.choice([0.0, 1.5, 3.0]), "path": rng.choice([0.5, 2.0, 3.0])}
        columns = index.match_columns(terms, boosts)
        if not columns:
            continue
        if rng.random() < 0.3:  # postings made at query time (a compound's alternative): not remembered
            posting = columns[0].postings[0]
            keep = np.arange(len(posting.rows)) % 2 == 0
            made = Posting(posting.rows[keep], posting.weights[keep], posting.factor, posting.bound)
            columns[0].postings.append(made)
        mask = np.array([rng.random() < 0.6 for _ in range(index.size)]) if rng.random() < 0.4 else None
        limit = rng.choice([0, 1, 3, 10, 10, 30, 50, 200, 1000])
        scratch = Scratch(index.size)
        found = grouped_best(columns, index.size, mask, limit, scratch, groups)
        assert scratch.as_lent()
        if found is None:
            continue
        answered += 1
        assert _same(found, dense_best(columns, index.size, mask, limit, Scratch(index.size))), (terms, limit)
        assert found[0].dtype == np.int64 and found[1].dtype == np.float64
    assert answered >= (1 if seed % 3 == 0 else 5)


@pytest.mark.parametrize("seed", range(10))
def test_the_match_leg_of_an_index_of_copies_answers_as_before(seed: int) -> None:
    """:meth:`LexicalIndex.search_terms` with the groups (below the row count they pay from here,
    so that tiny corpora use them) and without answer alike."""
    index, groups, rng = _corpus(seed)
    for _ in range(30):
        terms = _query(rng)
        boosts = {"body": 1.0, "heading": 3.0, "path": 2.0}
        mask = np.array([rng.random() < 0.5 for _ in range(index.size)]) if rng.random() < 0.3 else None
        limit = rng.choice([5, 50, 500])
        index.copy_groups = None
        expected = index.search_terms(terms, boosts, mask=mask, limit=limit)
        index.copy_groups = groups
        assert _same(index.search_terms(terms, boosts, mask=mask, limit=limit), expected), (terms, limit)


def test_a_posting_is_grouped_only_when_every_member_holds_it_alike() -> None:
    columns = {"body": pa.array(["alpha beta", "alpha", "alpha beta", "alpha", "gamma", "beta beta"])}
    index = LexicalIndex.build(columns)
    field = index.fields["body"]
    groups = CopyGroups(_numbered(["a", "b", "a", "b", None, "c"]), [(field.rows, field.weights)])
    alpha, beta, gamma = (field.posting(t, 1) for t in ("alpha", "beta", "gamma"))
    assert alpha is not None and beta is not None and gamma is not None
    found = groups.posting(alpha)  # rows 0-3: every member of groups a and b
    assert found is not None and found[0].tolist() == [0, 1]
    assert groups.posting(gamma) is not None  # the row of its own
    assert groups.posting(beta) is not None  # groups a and c
    # group b's second row with another text: its postings no longer match the first row's
    groups = CopyGroups(_numbered(["a", "b", "a", "b", None, "a"]), [(field.rows, field.weights)])
    assert groups.posting(beta) is None  # group a: row 5 holds beta twice, rows 0 and 2 once
    assert groups.posting(alpha) is None  # group a: row 5 lacks alpha
    assert groups.posting(gamma) is not None


def test_groups_pay_only_for_many_rows_of_many_copies() -> None:
    many = np.repeat(np.arange(50_000, dtype=np.int64), 10)
    assert CopyGroups.worth_it(many, 10.0)
    assert not CopyGroups.worth_it(many[:100_000], 10.0)
    assert not CopyGroups.worth_it(many, 1.5)
    assert not CopyGroups.worth_it(None, 10.0)


def _pages(copies: int) -> dict[str, str]:
    sections = "".join(
        f"## {verb} a link {number}\n\n{verb} a link of the workspace {number} with the client; "
        f"a request error names the link.\n\n"
        for number in range(8)
        for verb in ("Create", "Delete")
    )
    other = "# Domains\n\n## Add a domain\n\nAdd a custom domain to your workspace, then verify it.\n"
    pages = {}
    for copy in range(copies):
        pages[f"copy-{copy}/links.md"] = "# Links\n\n" + sections
        pages[f"copy-{copy}/domains.md"] = other
    pages["copy-0/extra.md"] = "# Extra\n\nDelete a custom link domain error.\n"  # a text of its own
    return pages


def test_an_engine_over_copies_groups_them_when_warmed_and_answers_as_before(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every page of every query the same with the groups as without (the thresholds lowered so
    that a tiny corpus of twenty copies uses them), through the whole search."""
    from tests.support.tiny_corpus import build_pages, opened

    index = build_pages(tmp_path_factory, "copies", _pages(20))
    queries = ["delete a link", "link of the workspace", "request error", "create link 3", "verify"]
    with opened(index) as engine:
        engine.warm()
        lexical = engine._retrieval.lexical  # pyright: ignore[reportPrivateUsage]
        assert lexical is not None and lexical.copy_groups is None  # a few hundred rows: too few
        expected = [[(h.chunk_id, h.score) for h in engine.search(q, limit=10).hits] for q in queries]
    monkeypatch.setattr(copy_groups, "GROUPED_MIN_ROWS", 0)
    monkeypatch.setattr(copy_groups, "GROUPED_MIN_COPIES", 2.0)
    calls: list[bool] = []
    real = copy_groups.grouped_best

    def counted(*args: object, **kwargs: object) -> object:
        found = real(*args, **kwargs)  # type: ignore[arg-type]
        calls.append(found is not None)
        return found

    monkeypatch.setattr("docs_mcp_core.search.lexical_index.grouped_best", counted)
    with opened(index) as engine:
        engine.warm()
        lexical = engine._retrieval.lexical  # pyright: ignore[reportPrivateUsage]
        assert lexical is not None and lexical.copy_groups is not None
        found = [[(h.chunk_id, h.score) for h in engine.search(q, limit=10).hits] for q in queries]
    assert found == expected
    assert any(calls)  # the groups answered the match leg of some of the searches


def test_a_split_posting_is_scored_with_each_querys_own_factor() -> None:
    """A posting whose groups are aligned but for a few rows is kept split (per group, and the
    rest row by row) across searches; a query that repeats its term weighs it twice, the rest of
    the posting as well as its groups. Here ``alpha`` is in every row (a long posting whose
    bound is below the cut, looked up at the candidates) and adds to ``epsilon``'s rows."""
    body, heading, digests = [], [], []
    for copy in range(10):
        for number in range(30):
            alphas = 1 + number % 4 + (1 if (copy, number) == (3, 5) else 0)  # one member differs
            body.append(
                " ".join(["alpha"] * alphas + (["epsilon"] * (number % 3) if number in (5, 6) else []))
            )
            heading.append("delta" if number in (1, 2, 3) else "beta")
            digests.append(f"text{number}")
    index = LexicalIndex.build({"body": pa.array(body), "heading": pa.array(heading)})
    groups = CopyGroups(_numbered(digests), [(f.rows, f.weights) for f in index.fields.values()])
    alpha = index.fields["body"].posting("alpha", 1)
    assert alpha is not None
    split = groups.split(alpha)
    assert split is not None and len(split[1].rows) == 10  # group 5, row by row
    for terms in (["alpha", "epsilon", "delta"], ["alpha", "alpha", "epsilon", "delta"]):
        columns = index.match_columns(terms, {"body": 1.0, "heading": 1.0})
        for limit in (5, 20, 30):
            found = grouped_best(columns, index.size, None, limit, Scratch(index.size), groups)
            assert found is not None
            assert _same(found, dense_best(columns, index.size, None, limit, Scratch(index.size))), (
                terms,
                limit,
            )


def test_the_postings_remembered_per_group_stay_within_their_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server asked every word of its corpus keeps no more than the budget (the cache starts
    again) and answers as before."""
    monkeypatch.setattr(copy_groups, "POSTINGS_CACHE_BYTES", 600)
    index, groups, _ = _corpus(1)
    boosts = {"body": 1.0, "heading": 3.0, "path": 2.0}
    highest = 0
    for term in [*COMMON, *RARE, *COMMON]:
        columns = index.match_columns([term], boosts)
        for column in columns:
            for posting in column.postings:
                groups.split(posting)
                highest = max(highest, groups.cached_bytes)
        found = grouped_best(columns, index.size, None, 10, Scratch(index.size), groups)
        if found is not None:
            assert _same(found, dense_best(columns, index.size, None, 10, Scratch(index.size)))
    assert 0 < highest <= 600
