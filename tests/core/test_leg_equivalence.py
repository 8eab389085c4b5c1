"""The in-memory legs answer exactly as the plain algorithm, bit for bit, on random corpora.

The legs avoid work that grows with the corpus: the match leg filters and cuts only the rows it
found (a partition, never a full sort), the phrase leg scores only the rows holding the phrase, and
the spelling leg credits rows with array operations. Each is compared here with the plain way of
computing the same answer (every row scored, the filter applied to every row, the whole candidate
set sorted; the spelling credits summed row by row in Python) on random corpora, property style: a
small vocabulary with a few very common words, rows repeated (equal scores: ties, as copies of a
corpus give), several columns with boosts, filters and limits of every size.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pytest

from docs_mcp_core.search import match_pruning
from docs_mcp_core.search.lexical_index import LexicalIndex
from docs_mcp_core.search.match_pruning import Scratch, pruned_best
from docs_mcp_core.search.spelling_leg import HEADING_BONUS, SpellingIndex
from docs_mcp_core.spellings import HEADING_MARK

COMMON = ["client", "request", "response", "error", "config"]
RARE = [f"word{i}" for i in range(60)]


def _text(rng: random.Random) -> str:
    words = [rng.choice(COMMON) for _ in range(rng.randint(0, 12))]
    words += [rng.choice(RARE) for _ in range(rng.randint(0, 4))]
    rng.shuffle(words)
    return " ".join(words)


def _random_mask(rng: random.Random, rows: int, chance: float, shares: list[float]) -> np.ndarray | None:
    """With probability ``chance``, a filter keeping each row with one of ``shares``' probabilities."""
    if rng.random() >= chance:
        return None
    share = rng.choice(shares)
    return np.array([rng.random() < share for _ in range(rows)], dtype=bool)


def _corpus(seed: int) -> tuple[LexicalIndex, random.Random]:
    rng = random.Random(seed)
    base = [_text(rng) for _ in range(rng.randint(1, 300))]
    copies = rng.choice([1, 1, 3, 10])  # the same text in several rows: equal scores
    body = [t for t in base for _ in range(copies)]
    heading = [" ".join(rng.sample(COMMON + RARE[:10], rng.randint(0, 2))) for _ in body]
    path = [rng.choice(["", "client", "word1 word2", "error"]) for _ in body]
    columns = {"body": pa.array(body), "heading": pa.array(heading), "path": pa.array(path)}
    return LexicalIndex.build(columns, positions=["body"]), rng


def _query(rng: random.Random) -> list[str]:
    words = [rng.choice(COMMON) for _ in range(rng.randint(0, 4))]
    words += [rng.choice(RARE) for _ in range(rng.randint(0, 3))]
    if rng.random() < 0.2 and words:
        words.append(words[0])  # a repeated term counts twice
    rng.shuffle(words)
    return words


def _plain_top(scores: np.ndarray, found: np.ndarray, limit: int) -> tuple[list[int], list[float]]:
    """The best ``limit`` of ``found`` by a full sort: score descending, then position."""
    order = sorted(found.tolist(), key=lambda p: (-scores[p], p))
    if limit > 0:
        order = order[:limit]
    return order, [float(scores[p]) for p in order]


def _plain_match(
    index: LexicalIndex, terms: list[str], boosts: dict[str, float], mask: np.ndarray | None, limit: int
) -> tuple[list[int], list[float]]:
    counts = dict(Counter(terms))
    best: np.ndarray | None = None
    for name, boost in boosts.items():
        scores = index.fields[name].score(counts, index.size) if boost > 0 else None
        if scores is not None:
            scores = scores * boost
            best = scores if best is None else np.maximum(best, scores)
    if best is None:
        return [], []
    if mask is not None:
        best[~mask] = 0.0
    return _plain_top(best, np.flatnonzero(best > 0.0), limit)


DEFAULT_CUT = (match_pruning.CUT_SAMPLE_STRIDE, match_pruning.CUT_SAMPLE_DEPTH)


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize(
    ("pruned_from", "sparse_from", "cut"),
    [
        (match_pruning.PRUNED_MIN_ROWS, match_pruning.SPARSE_COLUMN_MIN_ROWS, DEFAULT_CUT),
        (match_pruning.PRUNED_MIN_ROWS, 0, (1, 1)),  # the sampled cut is the exact one: ties at it
        (match_pruning.PRUNED_MIN_ROWS, 0, (3, 1)),
        (0, 0, DEFAULT_CUT),
    ],
)
def test_match_leg_equals_scoring_filtering_and_sorting_every_row(
    seed: int, pruned_from: int, sparse_from: int, cut: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Also with early termination and the sparse scoring of every row on from the first row
    (they run past :data:`~docs_mcp_core.search.match_pruning.PRUNED_MIN_ROWS` rows), with the
    columns of few postings scored at their own rows (past
    :data:`~docs_mcp_core.search.match_pruning.SPARSE_COLUMN_MIN_ROWS` rows), and with the cut
    guessed from samples of every row and of every third row."""
    monkeypatch.setattr(match_pruning, "PRUNED_MIN_ROWS", pruned_from)
    monkeypatch.setattr(match_pruning, "SPARSE_COLUMN_MIN_ROWS", sparse_from)
    monkeypatch.setattr(match_pruning, "CUT_SAMPLE_STRIDE", cut[0])
    monkeypatch.setattr(match_pruning, "CUT_SAMPLE_DEPTH", cut[1])
    index, rng = _corpus(seed)
    for _ in range(25):
        terms = _query(rng)
        boosts = {"body": 1.0, "heading": rng.choice([0.0, 1.5, 3.0]), "path": rng.choice([0.5, 2.0])}
        mask = _random_mask(rng, index.size, 0.5, [0.05, 0.3, 0.8])
        limit = rng.choice([0, 1, 2, 5, 10, 50, 200, 10_000])
        positions, scores = index.search_terms(terms, boosts, mask=mask, limit=limit)
        expected = _plain_match(index, terms, boosts, mask, limit)
        assert (positions.tolist(), scores.tolist()) == expected, (terms, boosts, limit)
        assert positions.dtype == np.int64 and scores.dtype == np.float64
        # the index's arrays of every row, reused by each search, come back as they were lent
        assert index.scratch.as_lent(), (terms, boosts, limit)
        columns = index.match_columns(terms, boosts)
        if columns:
            scratch = Scratch(index.size)
            found = match_pruning.every_best(columns, index.size, mask, limit, scratch)
            assert (found[0].tolist(), found[1].tolist()) == expected, (terms, boosts, limit)
            assert not scratch.take().any()  # the array lent comes back all zeros


@pytest.mark.parametrize("seed", range(20))
def test_phrase_leg_equals_scoring_every_row(seed: int) -> None:
    index, rng = _corpus(seed)
    field = index.fields["body"]
    for _ in range(25):
        words = _query(rng)[:3]
        phrase = [(w, i) for i, w in enumerate(words)]
        mask = np.array([rng.random() < 0.5 for _ in range(index.size)]) if rng.random() < 0.3 else None
        limit = rng.choice([1, 5, 100])
        positions, scores = index.phrase_terms(phrase, "body", mask=mask, limit=limit)
        if not words:
            assert positions.tolist() == []
            continue
        rows = field.phrase_rows(phrase)
        if mask is not None:
            rows = rows[mask[rows]]
        dense = field.score(Counter(words), index.size)
        expected = _plain_top(dense, rows, limit) if dense is not None and len(rows) else ([], [])
        assert (positions.tolist(), scores.tolist()) == expected, words


def _plain_spelling_leg(
    column: Sequence[str], spellings: Sequence[Sequence[str]], mask: np.ndarray | None, limit: int
) -> tuple[list[int], list[float]]:
    """The spelling leg's credits summed row by row in Python."""
    postings: dict[str, list[int]] = {}
    for row, text in enumerate(column):
        for word in dict.fromkeys(text.split(" ")):
            if word:
                postings.setdefault(word, []).append(row)
    credit: dict[int, float] = {}
    for forms in spellings:
        segments = forms[0].count(".") + 1
        best: dict[int, float] = {}
        for form in forms:
            rows = postings.get(form)
            if rows is None:
                continue
            base = math.log1p(len(column) / len(rows)) * (1 + (form.count(".") + 1) / segments) / 2
            titled = set(postings.get(HEADING_MARK + form, []))
            for row in rows:
                value = base * (1 + HEADING_BONUS) if row in titled else base
                best[row] = max(best.get(row, 0.0), value)
        for row, value in best.items():
            credit[row] = credit.get(row, 0.0) + value
    kept = {r: c for r, c in credit.items() if mask is None or mask[r]}
    order = sorted(kept, key=lambda r: (-kept[r], r))[:limit]
    return order, [kept[r] for r in order]


@pytest.mark.parametrize("seed", range(20))
def test_spelling_leg_equals_crediting_row_by_row(seed: int) -> None:
    rng = random.Random(seed)
    forms = [
        "dub.links.createMany",
        "links.createMany",
        "createMany",
        "s.Links.Upsert",
        "Links.Upsert",
        "Upsert",
    ]
    rows = []
    for _ in range(rng.randint(1, 200)):
        written = rng.sample(forms, rng.randint(0, 3))
        titled = [HEADING_MARK + f for f in rng.sample(written, min(len(written), rng.randint(0, 1)))]
        rows.append(" ".join(written + titled))
    rows = [r for r in rows for _ in range(rng.choice([1, 3]))]
    index = SpellingIndex.build(pa.array(rows))
    for _ in range(20):
        spellings = [forms[:3], forms[3:]] if rng.random() < 0.5 else [forms[rng.choice([1, 4]) :][:2]]
        mask = np.array([rng.random() < 0.6 for _ in rows]) if rng.random() < 0.4 else None
        limit = rng.choice([1, 5, 1000])
        positions, credit = index.leg(spellings, mask, limit)
        assert (positions.tolist(), credit.tolist()) == _plain_spelling_leg(rows, spellings, mask, limit)


# ── early termination: common words in most rows, as path words are at a hundred times the corpus ──

EVERYWHERE = ["python", "sdk", "client"]
OFTEN = [f"often{i}" for i in range(12)]


def _skewed_corpus(seed: int) -> tuple[LexicalIndex, random.Random]:
    """Rows where a few words are in most rows, some in a tenth, the rest in a few: the long
    postings that early termination leaves out."""
    rng = random.Random(seed)
    base = []
    for _ in range(rng.randint(300, 900)):
        words = [w for w in EVERYWHERE if rng.random() < 0.8]
        words += [w for w in OFTEN if rng.random() < 0.1]
        words += rng.sample(RARE, rng.randint(0, 3))
        words += [rng.choice(EVERYWHERE)] * rng.randint(0, 4)  # term frequencies beyond one
        rng.shuffle(words)
        base.append(" ".join(words))
    body = [t for t in base for _ in range(rng.choice([1, 4]))]  # copies: equal scores, ties at the cut
    heading = [" ".join(rng.sample(OFTEN + RARE[:20], rng.randint(0, 2))) for _ in body]
    path = [" ".join(w for w in EVERYWHERE if rng.random() < 0.6) for _ in body]
    columns = {"body": pa.array(body), "heading": pa.array(heading), "path": pa.array(path)}
    return LexicalIndex.build(columns), rng


def _skewed_query(rng: random.Random) -> list[str]:
    words = rng.sample(EVERYWHERE, rng.randint(1, 3)) + rng.sample(OFTEN, rng.randint(0, 3))
    words += rng.sample(RARE, rng.randint(0, 3))
    if rng.random() < 0.2:
        words.append(words[0])
    rng.shuffle(words)
    return words


@pytest.mark.parametrize("seed", range(12))
def test_early_termination_answers_as_scoring_every_row(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(match_pruning, "PRUNED_MIN_ROWS", 0)  # these corpora are small
    index, rng = _skewed_corpus(seed)
    pruned = 0
    for _ in range(30):
        terms = _skewed_query(rng)
        boosts = {"body": 1.0, "heading": rng.choice([0.0, 2.0, 3.0]), "path": rng.choice([0.5, 1.5])}
        mask = _random_mask(rng, index.size, 0.4, [0.1, 0.5, 0.9])
        limit = rng.choice([1, 3, 10, 25, 60])
        expected = _plain_match(index, terms, boosts, mask, limit)
        positions, scores = index.search_terms(terms, boosts, mask=mask, limit=limit)
        assert (positions.tolist(), scores.tolist()) == expected, (terms, boosts, limit)
        scratch = Scratch(index.size)
        found = pruned_best(index.match_columns(terms, boosts), index.size, mask, limit, scratch)
        if found is not None:
            pruned += 1
            assert (found[0].tolist(), found[1].tolist()) == expected, (terms, boosts, limit)
        # the arrays lent to the search come back as they were lent
        assert not scratch.take().any() and bool((scratch.take_slots() == -1).all())
    assert pruned >= 10  # the bounds left postings out for most of these queries


def test_early_termination_leaves_out_the_longest_postings(monkeypatch: pytest.MonkeyPatch) -> None:
    """A word in every row, with a rare word whose rows outscore any row holding only the common
    one: the answer comes without scoring the common word's rows, and equals scoring them all
    (below ``PRUNED_MIN_ROWS`` rows every row is scored instead)."""
    body = ["alpha beta"] * 20 + ["alpha"] * 2000 + ["alpha alpha alpha"] * 500
    index = LexicalIndex.build({"body": pa.array(body)})
    columns = index.match_columns(["alpha", "beta"], {"body": 1.0})
    assert pruned_best(columns, index.size, None, 5, Scratch(index.size)) is None
    monkeypatch.setattr(match_pruning, "PRUNED_MIN_ROWS", index.size)
    found = pruned_best(columns, index.size, None, 5, Scratch(index.size))
    assert found is not None
    assert found[0].tolist() == [0, 1, 2, 3, 4]
    assert found[1].tolist() == _plain_match(index, ["alpha", "beta"], {"body": 1.0}, None, 5)[1]
    # past the rare word's twenty rows the common word decides: every row is scored instead
    assert pruned_best(columns, index.size, None, 100, Scratch(index.size)) is None
    positions, _ = index.search_terms(["alpha", "beta"], {"body": 1.0}, limit=100)
    assert positions.tolist() == _plain_match(index, ["alpha", "beta"], {"body": 1.0}, None, 100)[0]


@pytest.mark.parametrize("seed", range(5))
def test_the_cut_looks_at_a_few_times_limit_rows_and_holds_the_best(seed: int) -> None:
    """The rows ``dense_best`` cuts from are a few times ``limit``, not every row with a score,
    and they hold every row of the best ``limit`` with its ties (scores copied ten times)."""
    rng = np.random.default_rng(seed)
    best = np.repeat(rng.integers(0, 50, 2000).astype(np.float64), 10)  # equal scores, many zeros
    rng.shuffle(best)
    mask = rng.random(len(best)) < 0.5 if seed % 2 else None
    admitted = np.flatnonzero((best > 0.0) & (mask if mask is not None else True))
    found = match_pruning._contenders(best, mask, 30)  # pyright: ignore[reportPrivateUsage]
    assert len(found) < len(admitted) / 4
    kth = np.sort(best[admitted])[-30]
    assert set(admitted[best[admitted] >= kth].tolist()) <= set(found.tolist())
    assert bool(mask[found].all()) if mask is not None else True


@pytest.mark.parametrize("seed", range(4))
def test_the_cut_of_a_million_rows_samples_fewer_rows_and_still_holds_the_best(seed: int) -> None:
    """Past :data:`~docs_mcp_core.search.match_pruning.CUT_SAMPLE_ROWS` samples the cut reads
    every more-th row (a hundred copies of each score: ties everywhere), and still finds every
    row of the best ``limit`` with its ties, a few times ``limit`` rows."""
    rng = np.random.default_rng(seed)
    best = np.repeat(rng.integers(0, 5000, 11_000).astype(np.float64), 100)
    rng.shuffle(best)
    mask = rng.random(len(best)) < 0.5 if seed % 2 else None
    assert match_pruning._sample_stride(len(best), 5000) > match_pruning.CUT_SAMPLE_STRIDE  # pyright: ignore[reportPrivateUsage]
    admitted = np.flatnonzero((best > 0.0) & (mask if mask is not None else True))
    for limit in (10, 200, 5000):
        found = match_pruning._contenders(best, mask, limit)  # pyright: ignore[reportPrivateUsage]
        kth = np.sort(best[admitted])[-limit]
        assert set(admitted[best[admitted] >= kth].tolist()) <= set(found.tolist())
        assert len(found) < len(admitted) / 20
        assert bool(mask[found].all()) if mask is not None else True
