"""Per-row ranking attributes of an open index, held in memory as NumPy arrays.

A search fuses the rankings of up to three retrievers over a pool of a few hundred rows. Fetching
each row's attributes (path, heading, taxonomy values, prior, duplicate digest) with every leg
costs more than the retrieval itself, and fusing row dictionaries in Python costs more again. The
catalog reads those attributes once, when the engine opens, keyed by LanceDB row id; the legs then
return only ``_rowid`` and a score, and fusion, ordering, de-duplication and collapsing are array
operations.

Memory is a few bytes per row (the strings are reduced to integers at load): about 0.5 MB for
the 11k-chunk SDK corpus. When the display columns of the whole table (chunk id, heading,
breadcrumb, path, metadata, plain text) fit in :func:`display_cache_bytes` (128 MiB unless
``DOCS_MCP_DISPLAY_CACHE_MB`` says otherwise; 9 MB for that corpus, 88 MB for ten copies of it),
they are kept too, so a page of hits is assembled without another LanceDB read (saving 1.5-3 ms a
search); larger corpora read each page's rows by row id instead. A build writes them into the
derived files up to :func:`mapped_display_bytes` (4 GiB), which a server maps instead of holding.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from docs_mcp_core.chunk_ids import is_opening
from docs_mcp_core.index.derived_files import Part, arrays_from_strings, stored_strings, strings_from_arrays
from docs_mcp_core.memory import budget_from_env
from docs_mcp_core.ordering import ORDER_VERSION, sort_key
from docs_mcp_core.search.display_columns import DisplayColumns

if TYPE_CHECKING:
    import pyarrow as pa

DISPLAY_CACHE_BYTES = 128 * 1024 * 1024
MAPPED_DISPLAY_BYTES = 4 * 1024 * 1024 * 1024


def display_cache_bytes() -> int:
    """The display cache budget: ``DOCS_MCP_DISPLAY_CACHE_MB`` (0 turns it off) or the default."""
    return budget_from_env("DOCS_MCP_DISPLAY_CACHE_MB", DISPLAY_CACHE_BYTES)


def mapped_display_bytes() -> int:
    """The budget for display columns a build writes into the derived files, which a server maps
    rather than holds (its pages are the page cache's, shared and dropped under pressure, not
    the process's own memory): ``DOCS_MCP_DISPLAY_CACHE_MB`` when set, else 4 GiB."""
    return budget_from_env("DOCS_MCP_DISPLAY_CACHE_MB", MAPPED_DISPLAY_BYTES)


_PART_RE = re.compile(r"-part-(\d+)$")


def opening_mask(chunk_ids: Sequence[str]) -> np.ndarray:
    """Per chunk id: whether it opens its page (:func:`~docs_mcp_core.chunk_ids.is_opening`); a
    build stores this with the catalog, for :mod:`.openings`."""
    return np.fromiter((is_opening(c) for c in chunk_ids), dtype=bool, count=len(chunk_ids))


def rank_in_order(chunk_ids: Sequence[str]) -> np.ndarray:
    """Each chunk id's position in the project's string order (:mod:`docs_mcp_core.ordering`)."""
    n = len(chunk_ids)
    by_key = sorted(range(n), key=lambda i: sort_key(chunk_ids[i]))
    ranks = np.empty(n, dtype=np.int32)
    ranks[np.asarray(by_key, dtype=np.int64)] = np.arange(n, dtype=np.int32)
    return ranks


@dataclass
class RowCatalog:
    """Attributes of every row, ordered by row id (``row_ids`` is sorted ascending)."""

    row_ids: np.ndarray  # uint64
    prior: np.ndarray  # float64, 1.0 where the index has no prior
    depth: np.ndarray  # int32: "/" count of the file path
    sort_rank: np.ndarray  # int32: position of the chunk id in the project's string order
    dedup_group: np.ndarray | None  # int64: rows with equal text share a group
    taxonomy: dict[str, tuple[np.ndarray, list[str]]]  # key -> (codes, values); -1 = no value
    display: pa.Table | DisplayColumns | None = None  # display columns in catalog order, if they fit
    chunk_ids: Sequence[str] = field(default_factory=list)  # decoded as read when from derived files
    chunk_index: np.ndarray | None = None  # int64 position of each chunk in its file
    file_codes: np.ndarray | None = None  # int32: rows of the same file share a code
    filepaths: Sequence[str] = field(default_factory=list)  # file path of each code
    openings: np.ndarray | None = None  # bool: the rows that open their page (from derived files)
    _collapse_groups: dict[tuple[str, ...], np.ndarray] = field(default_factory=dict)
    _by_chunk_id: dict[str, int] = field(default_factory=dict)
    _by_filepath: dict[str, int] = field(default_factory=dict)
    _file_order: np.ndarray | None = None  # int64: positions by file code, then chunk index
    _file_start: np.ndarray | None = None  # int64: where each file code's positions begin

    def __post_init__(self) -> None:
        """Index the rows by file, in chunk order (by chunk id and by path on the first lookup)."""
        if self.file_codes is None or self.chunk_index is None:
            return
        if self._file_order is None or self._file_start is None:  # else read from derived files
            self._file_order = np.lexsort((self.chunk_index, self.file_codes)).astype(np.int64)
            counts = np.bincount(self.file_codes, minlength=len(self.filepaths))
            self._file_start = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)

    def to_part(self) -> Part:
        """The catalog (without its display columns) as named arrays, for the derived files."""
        arrays: dict[str, np.ndarray] = {
            "row_ids": self.row_ids,
            "prior": self.prior,
            "depth": self.depth,
            "sort_rank": self.sort_rank,
            **arrays_from_strings("chunk_ids", self.chunk_ids),
            **arrays_from_strings("filepaths", self.filepaths),
        }
        optional = {
            "openings": self.openings if self.openings is not None else opening_mask(self.chunk_ids),
            "dedup_group": self.dedup_group,
            "chunk_index": self.chunk_index,
            "file_codes": self.file_codes,
            "file_order": self._file_order,
            "file_start": self._file_start,
        }
        arrays.update({k: v for k, v in optional.items() if v is not None})
        for number, (codes, values) in enumerate(self.taxonomy.values()):
            arrays[f"taxonomy.{number}.codes"] = codes
            arrays.update(arrays_from_strings(f"taxonomy.{number}.values", values))
        subsets = list(self._collapse_groups)
        for number, subset in enumerate(subsets):
            arrays[f"collapse.{number}"] = self._collapse_groups[subset]
        meta = {
            "taxonomy": list(self.taxonomy),
            "collapse": [list(s) for s in subsets],
            "order": ORDER_VERSION,
        }
        return Part(arrays, meta)

    @classmethod
    def from_part(cls, part: Part, display: pa.Table | DisplayColumns | None = None) -> RowCatalog:
        """The catalog :meth:`to_part` stored (its arrays are used as they are: nothing is copied)."""
        a = part.arrays
        taxonomy = {
            key: (a[f"taxonomy.{n}.codes"], strings_from_arrays(a, f"taxonomy.{n}.values"))
            for n, key in enumerate(part.meta["taxonomy"])
        }
        chunk_ids = stored_strings(a, "chunk_ids")
        # tie-break ranks stored in another string order (by an earlier build) are made again
        same_order = part.meta.get("order", 1) == ORDER_VERSION
        catalog = cls(
            a["row_ids"],
            a["prior"],
            a["depth"],
            a["sort_rank"] if same_order else rank_in_order(chunk_ids),
            a.get("dedup_group"),
            taxonomy,
            display,
            chunk_ids,
            a.get("chunk_index"),
            a.get("file_codes"),
            stored_strings(a, "filepaths"),
            a.get("openings"),
            _file_order=a.get("file_order"),
            _file_start=a.get("file_start"),
        )
        for number, subset in enumerate(part.meta["collapse"]):
            catalog._collapse_groups[tuple(subset)] = a[f"collapse.{number}"]
        return catalog

    @classmethod
    def load(
        cls,
        table: Any,
        taxonomy_keys: Sequence[str],
        prior_column: str,
        dedup_column: str,
        display_columns: Sequence[str] = (),
        display_budget: int = DISPLAY_CACHE_BYTES,
        collapse_keys: Sequence[str] = (),
    ) -> RowCatalog:
        """Read the attributes of every row of a LanceDB ``table`` (one scan of a few columns).

        ``display_columns`` are kept in memory as well when their size is within ``display_budget``
        bytes (read batch by batch, given up as soon as they pass it). Collapse
        groups are computed for every non-empty subsequence of ``collapse_keys`` (the keys a query
        can leave unfiltered).
        """
        names = set(table.schema.names)
        keys = [k for k in taxonomy_keys if k in names]
        cols = ["chunk_id", "filepath", "heading", "chunk_index", *keys]
        if prior_column in names:
            cols.append(prior_column)
        if dedup_column in names:
            cols.append(dedup_column)
        data = in_row_order(_scan(table, cols))
        row_ids = data.column("_rowid").to_numpy().astype(np.uint64)
        n = data.num_rows

        if prior_column in names:
            prior = data.column(prior_column).fill_null(1.0).to_numpy().astype(np.float64)
        else:
            prior = np.ones(n, dtype=np.float64)
        filepaths = data.column("filepath").to_pylist()
        depth = np.fromiter((p.count("/") for p in filepaths), dtype=np.int32, count=n)
        chunk_ids = data.column("chunk_id").to_pylist()
        sort_rank = rank_in_order(chunk_ids)

        dedup_group = _dedup_groups(data.column(dedup_column).to_pylist()) if dedup_column in names else None
        taxonomy: dict[str, tuple[np.ndarray, list[str]]] = {}
        for key in keys:
            values = data.column(key).to_pylist()
            lookup: dict[str, int] = {}
            codes = np.fromiter(
                ((lookup.setdefault(v, len(lookup)) if v else -1) for v in values), dtype=np.int32, count=n
            )
            taxonomy[key] = (codes, list(lookup))
        display = [c for c in dict.fromkeys(display_columns) if c in names]
        shown = _display_table(table, display, display_budget, row_ids)
        files: dict[str, int] = {}
        file_codes = np.fromiter(
            (files.setdefault(p, len(files)) for p in filepaths), dtype=np.int32, count=n
        )
        chunk_index = data.column("chunk_index").fill_null(0).to_numpy().astype(np.int64)
        catalog = cls(
            row_ids,
            prior,
            depth,
            sort_rank,
            dedup_group,
            taxonomy,
            shown,
            chunk_ids,
            chunk_index,
            file_codes,
            list(files),
        )
        live = [k for k in collapse_keys if k in names]
        if live:
            headings = data.column("heading").to_pylist()
            values = {k: data.column(k).to_pylist() for k in live}
            for size in range(1, len(live) + 1):
                for subset in itertools.combinations(live, size):
                    catalog._collapse_groups[subset] = _collapse_groups(
                        filepaths, headings, chunk_ids, values, subset
                    )
        return catalog

    def __len__(self) -> int:
        return int(self.row_ids.shape[0])

    def positions(self, row_ids: np.ndarray) -> np.ndarray:
        """Catalog positions of LanceDB row ids (every id must belong to the table)."""
        return np.searchsorted(self.row_ids, row_ids.astype(np.uint64))

    def display_rows(self, positions: np.ndarray) -> list[dict[str, Any]] | None:
        """Display columns of the rows at ``positions`` (None when they are not held in memory)."""
        if self.display is None:
            return None
        if isinstance(self.display, DisplayColumns):
            return self.display.rows(positions)
        return _take(self.display, positions).to_pylist()

    def codes(self, key: str, value: str) -> tuple[np.ndarray, int] | None:
        """``(codes, code of value)`` for a taxonomy key (code -2 when no row has the value)."""
        entry = self.taxonomy.get(key)
        if entry is None:
            return None
        codes, values = entry
        try:
            return codes, values.index(value)
        except ValueError:
            return codes, -2

    def display_values(self, positions: np.ndarray, columns: Sequence[str]) -> list[list[Any]] | None:
        """Values of display ``columns`` at ``positions``, one list per column (None when not in memory)."""
        if self.display is None:
            return None
        if isinstance(self.display, DisplayColumns):
            return self.display.values(positions, columns)
        page = _take(self.display.select(list(columns)), positions)
        return [[v if v is not None else "" for v in page.column(c).to_pylist()] for c in columns]

    def equals(self, key: str, value: str) -> np.ndarray:
        """Mask of the rows whose taxonomy ``key`` is ``value`` (``""``: rows without a value)."""
        entry = self.taxonomy.get(key)
        if entry is None:
            return np.full(len(self), value == "", dtype=bool)
        codes, values = entry
        if value == "":
            return codes == -1
        try:
            return codes == values.index(value)
        except ValueError:
            return np.zeros(len(self), dtype=bool)

    def position(self, chunk_id: str) -> int | None:
        """The position of the row with ``chunk_id`` (None when no row has it)."""
        if not self._by_chunk_id and self.chunk_ids:  # built once, when first needed (not by searches)
            self._by_chunk_id = {cid: i for i, cid in reversed(list(enumerate(self.chunk_ids)))}
        return self._by_chunk_id.get(chunk_id)

    def file_positions(self, position: int) -> np.ndarray:
        """Positions of every chunk of the file the row at ``position`` belongs to, in chunk order."""
        if self.file_codes is None or self._file_order is None or self._file_start is None:
            return np.array([position], dtype=np.int64)
        code = int(self.file_codes[position])
        return self._file_order[self._file_start[code] : self._file_start[code + 1]]

    def locate(self, chunk_id: str) -> tuple[dict[int, tuple[int, str]], int] | None:
        """The chunks of ``chunk_id``'s file (``chunk_index -> (row id, chunk id)``) and its own
        chunk index, or None when no row has that id."""
        position = self.position(chunk_id)
        if position is None or self.chunk_index is None:
            return None
        siblings = {
            int(self.chunk_index[p]): (int(self.row_ids[p]), self.chunk_ids[int(p)])
            for p in self.file_positions(position).tolist()
        }
        return siblings, int(self.chunk_index[position])

    def positions_of_file(self, filepath: str) -> np.ndarray | None:
        """Positions of every chunk of ``filepath``, in chunk order (None when no row has that path)."""
        if not self._by_filepath and self.filepaths:  # built once, when first needed (not by searches)
            self._by_filepath = {path: code for code, path in enumerate(self.filepaths)}
        code = self._by_filepath.get(filepath)
        if code is None or self._file_order is None or self._file_start is None:
            return None
        return self._file_order[self._file_start[code] : self._file_start[code + 1]]

    def copies(self) -> float:
        """Rows per distinct chunk text: how many times the corpus holds each chunk, on average
        (1 without digests). The groups are numbered 0, 1, ... and a row of its own is negative
        (:func:`_dedup_groups`), so they are counted without sorting every row's group."""
        groups = self.dedup_group
        if groups is None or not len(groups):
            return 1.0
        distinct = max(int(groups.max()) + 1, 0) + int(np.count_nonzero(groups < 0))
        return len(groups) / distinct

    def collapse_groups(self, keys: Sequence[str]) -> np.ndarray:
        """Collapse group of every row for the live collapse ``keys`` (-1: the row never collapses).

        Two rows share a group when their paths are equal once each collapse value is replaced by
        ``*`` and their headings (and ``-part-N`` suffixes) are equal: the same section documented
        for several languages. ``keys`` must be a subsequence of the ``collapse_keys`` given to
        :meth:`load`.
        """
        return self._collapse_groups[tuple(keys)]


def _dedup_groups(digests: Sequence[str | None]) -> np.ndarray:
    """Rows with equal text digests share a group; a row without a digest is a group of its own."""
    groups: dict[str, int] = {}
    dedup_group = np.empty(len(digests), dtype=np.int64)
    for i, digest in enumerate(digests):
        dedup_group[i] = groups.setdefault(digest, len(groups)) if digest else -(i + 1)
    return dedup_group


def _display_table(table: Any, columns: Sequence[str], budget: int, row_ids: np.ndarray) -> pa.Table | None:
    """The ``columns`` of every row in catalog order, or ``None`` when they exceed ``budget`` bytes
    (or the table changed since the catalog's scan)."""
    shown = scan_within(table, columns, budget) if columns and budget > 0 else None
    if shown is None:
        return None
    shown = in_row_order(shown)
    if not np.array_equal(shown.column("_rowid").to_numpy().astype(np.uint64), row_ids):
        return None  # the table changed between the scans: do without
    return shown.select(columns).combine_chunks()


def collapse_key(
    filepath: str, heading: str, chunk_id: str, values: Mapping[str, str], keys: Sequence[str]
) -> str | None:
    """Collapse key of a hit: its path with each collapse value replaced by ``*`` (None: keep it)."""
    parts = filepath.split("/")
    for key in keys:
        value = values.get(key, "")
        if not value:
            return None
        try:
            parts[parts.index(value)] = "*"
        except ValueError:
            return None
    m = _PART_RE.search(chunk_id)
    return "/".join(parts) + ":" + heading + (f":{m.group(1)}" if m else "")


def _collapse_groups(
    filepaths: Sequence[str],
    headings: Sequence[str | None],
    chunk_ids: Sequence[str],
    values: Mapping[str, Sequence[str | None]],
    keys: Sequence[str],
) -> np.ndarray:
    lookup: dict[str, int] = {}
    groups = np.full(len(chunk_ids), -1, dtype=np.int64)
    for i, chunk_id in enumerate(chunk_ids):
        row_values = {k: values[k][i] or "" for k in keys}
        key = collapse_key(filepaths[i], headings[i] or "", chunk_id, row_values, keys)
        if key is not None:
            groups[i] = lookup.setdefault(key, len(lookup))
    return groups


def smallest_first(values: np.ndarray, candidates: np.ndarray, limit: int) -> np.ndarray:
    """The ``limit`` candidates with the smallest ``values`` (``values[i]`` belongs to
    ``candidates[i]``; candidates ascending), smallest first; equal values in candidate order,
    also at the cut, so the first ``k`` of a longer answer are the answer for ``k``."""
    if len(candidates) > limit > 0:
        threshold = np.partition(values, limit - 1)[limit - 1]
        below = values < threshold
        equal = np.flatnonzero(values == threshold)[: limit - int(below.sum())]
        keep = below
        keep[equal] = True
        candidates, values = candidates[keep], values[keep]
    return candidates[np.lexsort((candidates, values))].astype(np.int64)


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """The distinct ``values``, ascending: ``np.unique`` without its check for masked arrays,
    which imports ``numpy.ma`` (a third of NumPy's import time) at a process's first search."""
    ordered = np.sort(values, axis=None)
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def members(values: np.ndarray, within: np.ndarray) -> np.ndarray:
    """Which of ``values`` are in ``within`` (``np.isin`` for numbers, which may call ``np.unique``:
    see :func:`sorted_unique`)."""
    values = np.asarray(values)
    keys = sorted_unique(np.asarray(within))
    if not len(keys) or not values.size:
        return np.zeros(values.shape, dtype=bool)
    at = np.minimum(np.searchsorted(keys, values), len(keys) - 1)
    return keys[at] == values


def scan_within(table: Any, columns: Sequence[str], budget: int) -> pa.Table | None:
    """``columns`` of every row (with ``_rowid``), read a batch at a time; ``None`` as soon as they
    pass ``budget`` bytes, so a large corpus costs at most the budget while it is looked at."""
    import pyarrow as pa

    total = table.count_rows()
    reader = table.search().with_row_id(True).select(list(columns)).limit(max(1, total)).to_batches(8192)
    batches: list[pa.RecordBatch] = []
    size = 0
    for batch in reader:
        size += batch.nbytes
        if size > budget:
            return None
        batches.append(batch)
    if not batches:
        return None
    return pa.Table.from_batches(batches)


def scan_in_row_order(table: Any, columns: Sequence[str]) -> pa.Table:
    """``columns`` (and ``_rowid``) of every row of a LanceDB ``table``, in row id order."""
    return in_row_order(_scan(table, columns))


def in_row_order(data: pa.Table) -> pa.Table:
    """``data`` (a scan with ``_rowid``) sorted by row id."""
    import pyarrow as pa

    ids = data.column("_rowid").to_numpy()
    if len(ids) > 1 and not bool(np.all(ids[1:] > ids[:-1])):
        return data.take(pa.array(np.argsort(ids, kind="stable")))  # scans are usually in order
    return data


def _scan(table: Any, columns: Sequence[str]) -> pa.Table:
    total = table.count_rows()
    return table.search().with_row_id(True).select(list(columns)).limit(max(1, total)).to_arrow()


def _take(table: pa.Table, positions: np.ndarray) -> pa.Table:
    """``table.take(positions)``, by Arrow's kernel itself: ``Table.take`` first imports
    ``pyarrow.compute``, which wraps every kernel in Python and costs a starting server more than
    its whole first search."""
    import pyarrow as pa
    from pyarrow._compute import TakeOptions, call_function

    # the buffer itself: ``pa.array`` of a NumPy array checks for a masked array, importing numpy.ma
    values = np.ascontiguousarray(positions, dtype=np.int64)
    indices = pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])
    return call_function("take", [table, indices], TakeOptions(boundscheck=True))
