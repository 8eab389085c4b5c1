"""The spelling leg: chunks that write the query's identifiers exactly as the query spells them.

The default ranking's fourth leg, next to match, phrase and vector (see :mod:`docs_mcp_core.spellings`
for what a spelling is and why it matters). When the engine opens, the stored spellings of every row
(column ``search_spellings``) become postings held in NumPy arrays; a query with compound identifiers
then looks each of them up, most specific form first.

A row's credit for one query identifier is that of the best form it writes:

    idf(form) × (1 + segments(form) / segments(identifier)) / 2 × (1 + HEADING_BONUS if a heading of
    the row consists of the form)

with ``idf = ln(1 + rows / rows writing the form)``: a spelling few chunks write says more than one
many chunks write; the whole spelling (``dub.links.createMany``) more than its last part
(``createMany``); and a section titled with the name defines it. Credits of several identifiers
add up. Fusion scales the credits by the best one (:data:`~docs_mcp_core.search.ranker.DEFAULT_CONTRIBUTIONS`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from docs_mcp_core.anchors import ANCHOR_MARK
from docs_mcp_core.index.derived_files import Part, arrays_from_strings, strings_from_arrays
from docs_mcp_core.search import row_catalog
from docs_mcp_core.search.analyzer import pc
from docs_mcp_core.search.legs import EMPTY_LEG, Leg
from docs_mcp_core.search.row_catalog import RowCatalog
from docs_mcp_core.spellings import HEADING_MARK

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["HEADING_BONUS", "SpellingIndex", "load_spelling_index"]

HEADING_BONUS = 0.5


class _Postings:
    """Names -> ascending row positions, as slices of one array (``rows[offsets[i]:offsets[i + 1]]``)."""

    def __init__(self, names: list[str], offsets: np.ndarray, rows: np.ndarray) -> None:
        self.names = names
        self.offsets = offsets
        self.rows = rows
        self._codes = {name: code for code, name in enumerate(names)}

    def get(self, name: str) -> np.ndarray | None:
        code = self._codes.get(name)
        return None if code is None else self.rows[self.offsets[code] : self.offsets[code + 1]]

    def to_part(self, prefix: str, part: Part) -> None:
        part.arrays.update(arrays_from_strings(f"{prefix}.names", self.names))
        part.arrays[f"{prefix}.offsets"] = self.offsets
        part.arrays[f"{prefix}.rows"] = self.rows

    @classmethod
    def from_part(cls, prefix: str, part: Part) -> _Postings:
        a = part.arrays
        return cls(strings_from_arrays(a, f"{prefix}.names"), a[f"{prefix}.offsets"], a[f"{prefix}.rows"])

    @classmethod
    def of(cls, groups: list[tuple[str, np.ndarray]]) -> _Postings:
        offsets = np.zeros(len(groups) + 1, dtype=np.int64)
        np.cumsum([len(rows) for _, rows in groups], out=offsets[1:])
        rows = np.concatenate([r for _, r in groups]) if groups else np.zeros(0, dtype=np.int64)
        return cls([name for name, _ in groups], offsets, rows.astype(np.int64))

    @property
    def nbytes(self) -> int:
        return int(self.offsets.nbytes + self.rows.nbytes)


class SpellingIndex:
    """Spelling → the catalog positions of the rows that write it (ascending), and of the rows whose
    heading consists of it."""

    def __init__(self, postings: _Postings, headings: _Postings, rows: int) -> None:
        self._postings = postings
        self._headings = headings
        self._rows = rows

    @classmethod
    def build(cls, column: pa.Array | pa.ChunkedArray) -> SpellingIndex:
        """The index of one stored spellings column, in catalog order (see
        :func:`~docs_mcp_core.spellings.chunk_spellings`)."""
        import pyarrow as pa

        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        rows = len(column)
        words = pc.split_pattern(pc.fill_null(column, ""), " ")
        parents = pc.list_parent_indices(words).to_numpy()
        encoded = pc.dictionary_encode(pc.list_flatten(words))
        codes = encoded.indices.to_numpy(zero_copy_only=False)
        names = encoded.dictionary.to_pylist()
        order = np.argsort(codes, kind="stable")  # rows stay ascending within a spelling
        sorted_parents = parents[order].astype(np.int64)
        bounds = np.searchsorted(codes[order], np.arange(len(names) + 1))
        postings: list[tuple[str, np.ndarray]] = []
        headings: list[tuple[str, np.ndarray]] = []
        for code, name in enumerate(names):
            if not name:
                continue
            found = sorted_parents[bounds[code] : bounds[code + 1]]
            if name.startswith(HEADING_MARK):
                headings.append((name[len(HEADING_MARK) :], found))
            else:
                postings.append((name, found))
        return cls(_Postings.of(postings), _Postings.of(headings), rows)

    def to_part(self) -> Part:
        """The postings as named arrays, for the derived files."""
        part = Part(meta={"rows": self._rows})
        self._postings.to_part("postings", part)
        self._headings.to_part("headings", part)
        return part

    @classmethod
    def from_part(cls, part: Part) -> SpellingIndex:
        """The index :meth:`to_part` stored (its arrays are used as they are)."""
        return cls(
            _Postings.from_part("postings", part),
            _Postings.from_part("headings", part),
            int(part.meta["rows"]),
        )

    @property
    def nbytes(self) -> int:
        return self._postings.nbytes + self._headings.nbytes

    def leg(self, spellings: Sequence[Sequence[str]], mask: np.ndarray | None, limit: int) -> Leg:
        """The rows writing the query's identifiers (:func:`~docs_mcp_core.spellings.query_spellings`)
        and their credits, best first, at most ``limit``; rows outside ``mask`` left out."""
        found_rows: list[np.ndarray] = []
        found_credit: list[np.ndarray] = []
        for forms in spellings:
            segments = forms[0].count(".") + 1
            form_rows: list[np.ndarray] = []
            form_values: list[np.ndarray] = []
            for form in forms:
                rows = self._postings.get(form)
                if rows is None:
                    continue
                base = math.log1p(self._rows / len(rows)) * (1 + (form.count(".") + 1) / segments) / 2
                titled = self._headings.get(form)
                values = np.full(len(rows), base, dtype=np.float64)
                if titled is not None:
                    values[row_catalog.members(rows, titled)] = base * (1 + HEADING_BONUS)
                form_rows.append(rows)
                form_values.append(values)
            if form_rows:  # a row's credit for this identifier: its best form
                rows, best = _best_per_row(np.concatenate(form_rows), np.concatenate(form_values))
                found_rows.append(rows)
                found_credit.append(best)
        if not found_rows:
            return EMPTY_LEG
        # credits of several identifiers add up, in the query's order
        positions, inverse = np.unique(np.concatenate(found_rows), return_inverse=True)
        scores = np.zeros(len(positions), dtype=np.float64)
        np.add.at(scores, inverse, np.concatenate(found_credit))
        if mask is not None:
            keep = mask[positions]
            positions, scores = positions[keep], scores[keep]
        best_first = np.lexsort((positions, -scores))[:limit]
        return positions[best_first], scores[best_first]

    def holds_any(self, spellings: Sequence[Sequence[str]]) -> bool:
        """Whether some row writes one of the forms in ``spellings``."""
        return any(self._postings.get(form) is not None for forms in spellings for form in forms)

    def option_leg(self, names: Sequence[str], mask: np.ndarray | None) -> Leg:
        """The rows whose ids hold the most specific of ``names`` (an option with what it belongs
        to, :func:`~docs_mcp_core.anchors.query_option_names`) that any row the filters admit
        holds: the block that defines that option; empty when none does."""
        for name in names:
            rows = self._postings.get(ANCHOR_MARK + name)
            if rows is not None and mask is not None:
                rows = rows[mask[rows]]
            if rows is not None and len(rows):
                return rows, np.ones(len(rows), dtype=np.float64)
        return EMPTY_LEG

    def defining_leg(self, names: Sequence[str], mask: np.ndarray | None) -> Leg:
        """The rows that define one of ``names`` (a heading, or a list item of settings, consists
        of it: :func:`~docs_mcp_core.anchors.defined_names`) that ``mask`` admits."""
        found = [rows for rows in map(self._headings.get, names) if rows is not None]
        if not found:
            return EMPTY_LEG
        rows = row_catalog.sorted_unique(np.concatenate(found))
        if mask is not None:
            rows = rows[mask[rows]]
        return rows, np.ones(len(rows), dtype=np.float64)


def load_spelling_index(table: Any, catalog: RowCatalog, column: str) -> SpellingIndex | None:
    """The spelling index of ``table``'s ``column``, in catalog order (None when the table changed
    under the catalog's scan)."""
    data = row_catalog.scan_in_row_order(table, [column])
    if not np.array_equal(data.column("_rowid").to_numpy().astype(np.uint64), catalog.row_ids):
        return None
    return SpellingIndex.build(data.column(column))


def _best_per_row(rows: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each distinct row of ``rows`` (ascending) with the largest of its ``values``."""
    order = np.lexsort((-values, rows))  # by row, the largest value first
    rows, values = rows[order], values[order]
    first = np.ones(len(rows), dtype=bool)
    first[1:] = rows[1:] != rows[:-1]
    return rows[first], values[first]
