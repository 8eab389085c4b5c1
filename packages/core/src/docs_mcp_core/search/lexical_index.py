"""In-memory BM25: the match and phrase retrievers of both rankings.

Every LanceDB query costs about 1.2 ms before it does any work (planning, the hop to its runtime
and back, Arrow conversion), and the default ranking's multi-column match query costs 3.5-5 ms on
the SDK corpus, most of a search. The search columns (``search_heading``, ``search_text``,
``search_path``) are small, so the engine holds an inverted index of them in memory, built when it
opens, and scores a query with a few NumPy operations (about 0.3 ms on that corpus).

The scores are LanceDB's own, so an index answers the same whichever retriever runs (the
``original`` ranking's index, over ``heading`` and ``content_text``, reproduces instead the LanceDB
the original used: :data:`ORIGINAL_SCORING`):

* terms come from :mod:`docs_mcp_core.search.analyzer`, the analyzer of LanceDB's default full-text index;
* each column is scored with BM25 (``k1 = 1.2``, ``b = 0.75``,
  ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``), where ``N`` and the average length count only the
  rows with at least one term in that column, and a query term counts as often as it occurs;
* a row's score is the best boosted column score (LanceDB's multi-match takes the maximum).

``tests/core/test_lexical_index.py`` compares the scores with LanceDB's on real tables.

The engine also indexes ``content_text`` with term positions, for the phrase leg: a phrase matches
where its terms occur at the query's distances, scored like a match of its terms on that column
(LanceDB's phrase query with slop 0).

Memory: 9 MB of arrays for the 11k chunks of the SDK corpus (postings as int32 row positions with a
float32 weight each, one int64 key per ``content_text`` term occurrence) and 29,000 terms.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from docs_mcp_core.index.derived_files import Part, arrays_from_strings, strings_from_arrays
from docs_mcp_core.search.analyzer import MAX_PHRASE_SPAN, ORIGINAL_TEXT_COLUMNS, analyze, analyze_positions
from docs_mcp_core.search.copy_groups import CopyGroups, grouped_best
from docs_mcp_core.search.match_pruning import Column, Posting, Scratch, add_at, every_best, meet, pruned_best
from docs_mcp_core.search.row_catalog import smallest_first, sorted_unique
from docs_mcp_core.search.scoring import LANCEDB_SCORING, Scoring

if TYPE_CHECKING:
    import pyarrow as pa

    # the build's (an index opened from its derived files never imports it)
    from docs_mcp_core.search.postings_builder import Postings, PostingsBuilder

BUILD_BATCH_ROWS = 2048
PHRASE_TEXT = ORIGINAL_TEXT_COLUMNS[0]  # content_text, whose analysis the derived part records
PARALLEL_BUILD_MAX_ROWS = 50_000


@dataclass(frozen=True)
class FieldIndex:
    """Postings of one column: the rows of term ``t`` are ``rows[offsets[t]:offsets[t + 1]]``."""

    terms: dict[str, int]
    offsets: np.ndarray  # int64, one more than there are terms
    rows: np.ndarray  # int32 row positions, ascending within a term
    weights: np.ndarray  # float32: BM25's term-frequency part, tf * (k1 + 1) / (tf + k1 * norm)
    idf: np.ndarray  # float64 per term
    occurrences: _Occurrences | None = None
    # each term's largest weight, found on first need (the bound of early termination)
    _max_weights: dict[int, float] = dataclasses.field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def build(
        cls,
        texts: pa.Array | pa.ChunkedArray,
        *,
        positions: bool = False,
        analyzed: dict[str, str] | None = None,
        scoring: Scoring = LANCEDB_SCORING,
        stop_words: frozenset[str] | None = None,
    ) -> FieldIndex:
        """Index the texts of one column (row ``i`` is position ``i``; nulls are empty rows).

        ``positions`` also keeps where each term occurs, for :meth:`phrase_rows`. ``analyzed`` is a
        word -> term cache that the columns with the same ``stop_words`` (default: the
        scoring's) can share. Texts are split and sorted a batch of
        rows at a time (:class:`~docs_mcp_core.search.postings_builder.PostingsBuilder`), so the
        memory it takes beyond the result is a few bytes per word.
        """
        from docs_mcp_core.search.postings_builder import PostingsBuilder

        stop_words = scoring.stop_words if stop_words is None else stop_words
        builder = PostingsBuilder(positions=positions, stop_words=stop_words, analyzed=analyzed)
        for start in range(0, len(texts), BUILD_BATCH_ROWS):
            builder.add(texts.slice(start, BUILD_BATCH_ROWS))
        return cls.from_postings(builder.finish(counts_every_row=scoring.counts_every_row))

    @classmethod
    def from_postings(cls, postings: Postings) -> FieldIndex:
        """The field of ``postings`` (its arrays used as they are)."""
        p, occurrences = postings, None
        if p.keys is not None and p.bounds is not None:
            occurrences = _Occurrences(p.keys, p.bounds, p.stride)
        return cls(p.terms, p.offsets, p.rows, p.weights, p.idf, occurrences)

    def score(self, query_terms: Mapping[str, int], size: int) -> np.ndarray | None:
        """BM25 of every row for the query's terms (with their counts); None when none is indexed."""
        scores: np.ndarray | None = None
        for term, count in query_terms.items():
            index = self.terms.get(term)
            if index is None:
                continue
            if scores is None:
                scores = np.zeros(size, dtype=np.float64)
            start, end = self.offsets[index], self.offsets[index + 1]
            scores[self.rows[start:end]] += (count * self.idf[index]) * self.weights[start:end]
        return scores

    def posting(self, term: str, count: int) -> Posting | None:
        """The postings of ``term`` counted ``count`` times in the query, with their score bound
        (:mod:`~docs_mcp_core.search.match_pruning`); None when the term is not indexed."""
        index = self.terms.get(term)
        if index is None:
            return None
        start, end = int(self.offsets[index]), int(self.offsets[index + 1])
        weights = self.weights[start:end]
        largest = self._max_weights.get(index)
        if largest is None:
            largest = self._max_weights[index] = float(weights.max()) if end > start else 0.0
        factor = count * self.idf[index]
        return Posting(self.rows[start:end], weights, factor, float(factor) * largest)

    def score_rows(self, query_terms: Mapping[str, int], rows: np.ndarray) -> np.ndarray | None:
        """:meth:`score` of the ascending ``rows`` only: the same sums, term by term in the same
        order, so every score is bit for bit the one :meth:`score` gives, at a cost that follows the
        rows and the query's postings rather than the whole column."""
        scores: np.ndarray | None = None
        for term, count in query_terms.items():
            index = self.terms.get(term)
            if index is None:
                continue
            if scores is None:
                scores = np.zeros(len(rows), dtype=np.float64)
            start, end = int(self.offsets[index]), int(self.offsets[index + 1])
            at, hit = meet(rows, self.rows[start:end])
            add_at(scores, hit, (count * self.idf[index]) * self.weights[start:end][at])
        return scores

    def phrase_rows(self, phrase: Sequence[tuple[str, int]]) -> np.ndarray:
        """Rows where the ``(term, position)`` pairs occur at the same distances as in the query
        (an exact phrase: slop 0), ascending. Empty when a term is not indexed."""
        occ = self.occurrences
        if occ is None:
            raise ValueError("this field was indexed without positions")
        found: np.ndarray | None = None
        spans = []
        for term, offset in phrase:
            index = self.terms.get(term)
            if index is None or not 0 <= offset < MAX_PHRASE_SPAN:
                return np.zeros(0, dtype=np.int64)
            spans.append((int(occ.bounds[index + 1] - occ.bounds[index]), index, offset))
        # rarest term first; ``found`` holds candidate phrase starts (key of the first term), and
        # each further term's occurrences are searched in place (a view, never a shifted copy)
        for _, index, offset in sorted(spans):
            keys = occ.keys[occ.bounds[index] : occ.bounds[index + 1]]
            if found is None:
                found = keys - offset
                continue
            wanted = found + offset
            at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
            found = found[keys[at] == wanted]
            if not len(found):
                break
        if found is None or not len(found):
            return np.zeros(0, dtype=np.int64)
        return sorted_unique(found // occ.stride)

    def to_part(self, prefix: str, part: Part) -> None:
        """Add this field's arrays to ``part`` under ``prefix`` (see :mod:`~docs_mcp_core.index.derived_files`)."""
        arrays = {
            "offsets": self.offsets,
            "rows": self.rows,
            "weights": self.weights,
            "idf": self.idf,
            **arrays_from_strings("terms", list(self.terms)),
        }
        if self.occurrences is not None:
            arrays["occurrences.keys"] = self.occurrences.keys
            arrays["occurrences.bounds"] = self.occurrences.bounds
            part.meta[f"{prefix}.stride"] = self.occurrences.stride
        part.arrays.update({f"{prefix}.{k}": v for k, v in arrays.items()})

    @classmethod
    def from_part(cls, prefix: str, part: Part) -> FieldIndex:
        """The field :meth:`to_part` stored under ``prefix`` (arrays used as they are)."""
        a = part.arrays
        names = strings_from_arrays(a, f"{prefix}.terms")
        occurrences = None
        if f"{prefix}.occurrences.keys" in a:
            occurrences = _Occurrences(
                a[f"{prefix}.occurrences.keys"],
                a[f"{prefix}.occurrences.bounds"],
                int(part.meta[f"{prefix}.stride"]),
            )
        return cls(
            dict(zip(names, range(len(names)), strict=True)),
            a[f"{prefix}.offsets"],
            a[f"{prefix}.rows"],
            a[f"{prefix}.weights"],
            a[f"{prefix}.idf"],
            occurrences,
        )

    @property
    def nbytes(self) -> int:
        size = self.offsets.nbytes + self.rows.nbytes + self.weights.nbytes + self.idf.nbytes
        if self.occurrences is not None:
            size += self.occurrences.keys.nbytes + self.occurrences.bounds.nbytes
        return int(size)


@dataclass(frozen=True)
class _Occurrences:
    """Term positions: the occurrences of term ``t`` are ``keys[bounds[t]:bounds[t + 1]]``, each
    ``row * stride + position``, ascending."""

    keys: np.ndarray  # int64
    bounds: np.ndarray  # int64
    stride: int


class LexicalIndex:
    """BM25 multi-column match over a fixed set of rows (positions ``0..size-1``)."""

    def __init__(
        self, fields: Mapping[str, FieldIndex], size: int, scoring: Scoring = LANCEDB_SCORING
    ) -> None:
        self.fields = dict(fields)
        self.size = size
        self.scoring = scoring
        self.scratch = Scratch(size)  # arrays of every row that each search borrows and resets
        self.copy_groups: CopyGroups | None = None  # see group_copies

    @classmethod
    def build(
        cls,
        columns: Mapping[str, pa.Array | pa.ChunkedArray],
        *,
        positions: Sequence[str] = (),
        scoring: Scoring = LANCEDB_SCORING,
    ) -> LexicalIndex:
        """Index ``columns`` (name -> texts, all of the same length, in row-position order);
        the columns named in ``positions`` also answer phrase queries. ``scoring`` is the LanceDB
        version whose scores to reproduce."""
        sizes = {len(texts) for texts in columns.values()}
        if len(sizes) > 1:
            raise ValueError("the columns of a lexical index must have the same number of rows")
        size = sizes.pop() if sizes else 0
        analyzed: dict[frozenset[str], dict[str, str]] = {}  # a word cache per list of stop words

        def build(name: str) -> FieldIndex:
            stop_words = scoring.column_stop_words(name)
            cache = analyzed.setdefault(stop_words, {})
            return FieldIndex.build(
                columns[name],
                positions=name in positions,
                analyzed=cache,
                scoring=scoring,
                stop_words=stop_words,
            )

        # Arrow's splitting and NumPy's sorting release the GIL: two columns at a time, unless the
        # temporary arrays of two large columns at once would cost more memory than the time is worth
        workers = 2 if size <= PARALLEL_BUILD_MAX_ROWS else 1
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="docs-mcp-lexical") as pool:
            fields = dict(zip(columns, pool.map(build, columns), strict=True))
        return cls(fields, size, scoring)

    @classmethod
    def build_batches(
        cls,
        batches: Iterable[pa.RecordBatch],
        names: Sequence[str],
        *,
        positions: Sequence[str] = (),
        scoring: Scoring = LANCEDB_SCORING,
    ) -> LexicalIndex:
        """:meth:`build` of the columns ``names`` read a batch of rows at a time (each batch holds
        every name's next rows), so the columns' texts are never held whole: the same index, in
        the memory of the postings being made and a batch or two."""
        from docs_mcp_core.search.postings_builder import PostingsBuilder

        analyzed: dict[frozenset[str], dict[str, str]] = {}  # a word cache per list of stop words
        builders = {
            name: PostingsBuilder(
                positions=name in positions,
                stop_words=scoring.column_stop_words(name),
                analyzed=analyzed.setdefault(scoring.column_stop_words(name), {}),
                name=name,
            )
            for name in names
        }
        # two threads (Arrow's splitting and NumPy's sorting release the GIL): the first column
        # (the longest) in one, the others in the other, while the next batch is read
        groups = [[builders[n] for n in names[:1]], [builders[n] for n in names[1:]]]
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="docs-mcp-lexical") as pool:
            pending: list[Future[None]] = []
            for batch in batches:
                for done in pending:
                    done.result()
                pending = [pool.submit(_add_rows, group, batch) for group in groups if group]
            for done in pending:
                done.result()
        size = builders[names[0]].rows if names else 0
        fields: dict[str, FieldIndex] = {}
        for name in names:  # one column's postings placed at a time, its builder then let go
            postings = builders.pop(name).finish(counts_every_row=scoring.counts_every_row)
            fields[name] = FieldIndex.from_postings(postings)
        return cls(fields, size, scoring)

    @property
    def nbytes(self) -> int:
        return sum(f.nbytes for f in self.fields.values())

    def to_part(self) -> Part:
        """Every field's arrays, for the derived files (:mod:`~docs_mcp_core.index.derived_files`)."""
        meta = {"fields": list(self.fields), "size": self.size, "scoring": self.scoring.name}
        part = Part(meta={**meta, "text_stop_words": len(self.scoring.column_stop_words(PHRASE_TEXT))})
        for number, field in enumerate(self.fields.values()):
            field.to_part(f"field.{number}", part)
        return part

    @classmethod
    def from_part(cls, part: Part, scoring: Scoring) -> LexicalIndex | None:
        """The index :meth:`to_part` stored, or ``None`` when it was built with another scoring.

        A part written before the table's ``content_text`` index dropped the original's stop words
        (it does not say which it dropped) holds that column analysed with ``scoring``'s query
        stop words, as that table's index is: it is served so, with the scoring that says it."""
        if part.meta.get("scoring") != scoring.name:
            return None
        text_stop_words = part.meta.get("text_stop_words")
        if text_stop_words is None:
            scoring = dataclasses.replace(scoring, text_stop_words=None)
        elif text_stop_words != len(scoring.column_stop_words(PHRASE_TEXT)):
            return None
        fields = {
            name: FieldIndex.from_part(f"field.{n}", part) for n, name in enumerate(part.meta["fields"])
        }
        return cls(fields, int(part.meta["size"]), scoring)

    def row_share(self, column: str, word: str) -> float:
        """The share of rows whose ``column`` holds ``word`` (as its one index term; 0 for a word
        the analyzer drops, splits or the column lacks)."""
        field = self.fields.get(column)
        if field is None or not self.size:
            return 0.0
        terms = analyze(word, self.scoring.column_stop_words(column))
        index = field.terms.get(terms[0]) if len(terms) == 1 else None
        if index is None:
            return 0.0
        return float(field.offsets[index + 1] - field.offsets[index]) / self.size

    def group_copies(self, dedup_group: np.ndarray | None, copies: float) -> None:
        """Score the match leg's columns once per group of byte-identical rows from now on, where
        that pays (a corpus of many copies: :mod:`~docs_mcp_core.search.copy_groups`), the groups
        numbered here; ``dedup_group``: each row's group, ``copies``: rows per group on average."""
        if self.copy_groups is None and CopyGroups.worth_it(dedup_group, copies):
            assert dedup_group is not None
            groups = CopyGroups(dedup_group, [(f.rows, f.weights) for f in self.fields.values()])
            groups.warm()
            self.copy_groups = groups  # searches running meanwhile score every row: the same answer

    def _query_terms(self, terms: list[str]) -> dict[str, int]:
        counts = Counter(terms)
        return dict(counts) if self.scoring.counts_repeated_terms else dict.fromkeys(counts, 1)

    def search(
        self,
        query: str,
        boosts: Mapping[str, float],
        *,
        mask: np.ndarray | None = None,
        limit: int = 100,
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`search_terms` for ``query``, its terms in each column those of that column's
        analysis (as LanceDB analyses a multi-column query with each column's index)."""
        columns = [
            column
            for name, boost in boosts.items()
            for column in self.match_columns(
                analyze(query, self.scoring.column_stop_words(name)), {name: boost}
            )
        ]
        return self._best(columns, mask, limit)

    def search_terms(
        self,
        query_terms: Sequence[str],
        boosts: Mapping[str, float],
        *,
        mask: np.ndarray | None = None,
        limit: int = 100,
        extra: Mapping[str, Sequence[Posting]] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ``limit`` best rows for the analysed ``query_terms`` among those ``mask`` keeps:
        ``(positions, scores)``; ``extra`` adds postings to columns by name (a compound's
        alternative to its words: :mod:`~docs_mcp_core.search.compounds`).

        A row's score is ``max(boost * BM25)`` over the columns in ``boosts``; rows without any
        query term are left out. Best first; equal scores in position order. The filter and the
        cut look at the rows found, never at every row again, a short answer leaves out the
        postings that cannot reach it (:mod:`~docs_mcp_core.search.match_pruning`), and in a
        corpus of many copies a column is scored once per group of identical rows
        (:mod:`~docs_mcp_core.search.copy_groups`, :meth:`group_copies`).
        """
        return self._best(self.match_columns(query_terms, boosts, extra), mask, limit)

    def _best(
        self, columns: list[Column], mask: np.ndarray | None, limit: int
    ) -> tuple[np.ndarray, np.ndarray]:
        if not columns:
            return _EMPTY
        # the best rows without scoring every posting when the bounds allow it, or once per group
        # of identical rows, else every row
        best = pruned_best(columns, self.size, mask, limit, self.scratch)
        if best is None and self.copy_groups is not None:
            best = grouped_best(columns, self.size, mask, limit, self.scratch, self.copy_groups)
        return best if best is not None else every_best(columns, self.size, mask, limit, self.scratch)

    def match_columns(
        self,
        query_terms: Sequence[str],
        boosts: Mapping[str, float],
        extra: Mapping[str, Sequence[Posting]] | None = None,
    ) -> list[Column]:
        """The postings :meth:`search_terms` scores: per column with a positive boost that holds
        a query term, in ``boosts``' order, the terms' postings in the query's order, then the
        column's ``extra`` postings."""
        terms = self._query_terms(list(query_terms))
        columns: list[Column] = []
        for name, boost in boosts.items():
            field_index = self.fields.get(name)
            if field_index is None or boost <= 0:
                continue
            found = [p for t, n in terms.items() if (p := field_index.posting(t, n)) is not None]
            found += extra.get(name, ()) if extra else ()
            if found:
                columns.append(Column(boost, found))
        return columns

    def phrase(
        self, query: str, column: str, *, mask: np.ndarray | None = None, limit: int = 100
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`phrase_terms` for the terms of ``query`` (analysed as ``column``'s index analyses it)."""
        phrase = analyze_positions(query, self.scoring.column_stop_words(column))
        return self.phrase_terms(phrase, column, mask=mask, limit=limit)

    def phrase_terms(
        self,
        phrase: Sequence[tuple[str, int]],
        column: str,
        *,
        mask: np.ndarray | None = None,
        limit: int = 100,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ``limit`` best rows whose ``column`` holds the analysed ``phrase`` (terms with their
        word positions) as an exact phrase (LanceDB's phrase query with slop 0): ``(positions,
        scores)``, scored as :meth:`search_terms` scores that column alone. Best first; equal
        scores in position order.
        """
        field = self.fields[column]
        if not phrase:
            return _EMPTY
        rows = field.phrase_rows([(term, pos - phrase[0][1]) for term, pos in phrase])
        if mask is not None:
            rows = rows[mask[rows]]
        if not len(rows):
            return _EMPTY
        # a phrase's repeated terms count as often as they occur, in both LanceDB versions
        scores = field.score_rows(Counter(term for term, _ in phrase), rows)
        assert scores is not None  # every term occurs in the rows found
        positions = smallest_first(-scores, rows, limit)
        return positions, scores[np.searchsorted(rows, positions)]


def _add_rows(builders: list[PostingsBuilder], batch: pa.RecordBatch) -> None:
    """Add the next rows of ``batch`` to each builder, its column's a slice at a time."""
    for builder in builders:
        texts = batch.column(builder.name)
        for start in range(0, len(texts), BUILD_BATCH_ROWS):
            builder.add(texts.slice(start, BUILD_BATCH_ROWS))


_EMPTY = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))


__all__ = ["FieldIndex", "LexicalIndex"]
