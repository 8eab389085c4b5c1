"""What the engine holds in memory, derived from the table: at open, or once by the build.

A search works on structures derived from the table's columns: the row catalog (and, within a
budget, the hit text), the lexical and spelling postings, every chunk's markdown, the vectors.
Deriving them costs seconds on a large corpus (the LanceDB import alone over a second), so
``docs-mcp build`` derives them once and writes them beside the table
(:mod:`docs_mcp_core.index.derived_files`); the engine then maps them read-only and needs neither
the table nor LanceDB for most searches. :func:`assemble` gives the engine its parts either way,
part by part: from the derived files when they hold the part, else from the table, as every index
built before derived files existed is served. The derived files the build writes are the very
structures the engine would derive (:func:`derive_into`), so both paths answer identically.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from docs_mcp_core.index.derived_files import (
    DerivedFiles,
    DerivedWriter,
    Part,
    read_derived,
)
from docs_mcp_core.index.table import (
    DEDUP_COLUMN,
    PRIOR_COLUMN,
    SEARCH_TEXT_COLUMNS,
    SPELLING_COLUMN,
    vector_index_type,
)
from docs_mcp_core.memory import release_free_heap
from docs_mcp_core.metadata import IndexMetadata, collapse_keys
from docs_mcp_core.search.content_store import ContentStore, write_content
from docs_mcp_core.search.display_columns import held_display, stored_display
from docs_mcp_core.search.intent import _NAME_COLUMNS as INTENT_COLUMNS
from docs_mcp_core.search.intent import IntentIndex, load_intent
from docs_mcp_core.search.lexical_index import LexicalIndex
from docs_mcp_core.search.memory_budgets import Budgets, build_budgets
from docs_mcp_core.search.retrieval import PHRASE_COLUMN, lexical_index_usable, load_lexical_index
from docs_mcp_core.search.row_catalog import RowCatalog, _display_table, scan_in_row_order
from docs_mcp_core.search.rows import RowReader, display_columns, text_column
from docs_mcp_core.search.scan_batches import SCAN_BATCH_ROWS, CatalogScan, combined_within
from docs_mcp_core.search.scoring import LANCEDB_SCORING, Scoring
from docs_mcp_core.search.spelling_leg import SpellingIndex, load_spelling_index
from docs_mcp_core.search.vector_matrix import VectorMatrix

if TYPE_CHECKING:  # an index without heading vectors never imports the leg
    from docs_mcp_core.search.heading_leg import HeadingVectors, HeadingVocabulary

__all__ = [
    "Budgets",
    "EngineParts",
    "Wanted",
    "assemble",
    "build_wanted",
    "default_match_boosts",
    "write_derived_files",
]

ROWID_BYTES = 8  # a scan's _rowid column, counted by the budgets as when the engine scans


@dataclass(frozen=True)
class Wanted:
    """What the engine searches with: which match columns and boosts, scored how, whether in
    memory, with the spelling leg, with vectors."""

    default: bool  # the default ranking (False: the original recipe)
    match_boosts: Mapping[str, float]
    scoring: Scoring
    in_memory: bool
    spelling: bool
    vectors: bool


@dataclass
class EngineParts:
    """Everything the engine derives from the table, and where it came from."""

    columns: frozenset[str]
    catalog: RowCatalog
    content: ContentStore | None
    lexical: LexicalIndex | None
    spelling: SpellingIndex | None
    vectors: VectorMatrix | None
    ann_index: str | None
    source: str  # "derived files" or "table"
    intent: IntentIndex | None = None  # the default ranking's intent attributes (None: derived on use)
    headings: HeadingVectors | None = None  # heading-path vectors (None: the index has none)


def default_match_boosts() -> dict[str, float]:
    """The default ranking's match columns (the boosts do not change what is indexed)."""
    return dict.fromkeys(SEARCH_TEXT_COLUMNS, 1.0)


def derive_from_table(
    table: Any, metadata: IndexMetadata, wanted: Wanted, budgets: Budgets, columns: frozenset[str]
) -> EngineParts:
    """Every part, read and built from the table (the engine's start without derived files)."""
    catalog = _load_catalog(table, metadata, columns, budgets)
    content = ContentStore.load(table, catalog.row_ids, budgets.content)
    return EngineParts(
        columns,
        catalog,
        content,
        _lexical_from_table(table, catalog, wanted, columns),
        _spelling_from_table(table, catalog, wanted, columns),
        VectorMatrix.load(table, catalog.row_ids, budgets.vectors) if wanted.vectors else None,
        vector_index_type(table) if wanted.vectors else None,
        "table",
    )


def _lexical_from_table(
    table: Any, catalog: RowCatalog, wanted: Wanted, columns: frozenset[str]
) -> LexicalIndex | None:
    if not (wanted.in_memory and lexical_index_usable(columns, wanted.match_boosts)):
        return None
    return load_lexical_index(table, catalog, wanted.match_boosts, wanted.scoring)


def _lexical_for_build(
    table: Any, catalog: RowCatalog, wanted: Wanted, columns: frozenset[str]
) -> LexicalIndex | None:
    """:func:`_lexical_from_table`, its columns read a batch of rows at a time and never held whole
    (:meth:`LexicalIndex.build_batches`); when the table's rows do not come in the catalog's order
    (scans usually do), :func:`_lexical_from_table` itself."""
    if not (wanted.in_memory and lexical_index_usable(columns, wanted.match_boosts)):
        return None
    # the columns in the order load_lexical_index gives them (the derived part numbers them so)
    names = [PHRASE_COLUMN, *(c for c in wanted.match_boosts if c != PHRASE_COLUMN)]
    scan = CatalogScan(table, names, catalog.row_ids)
    lexical = LexicalIndex.build_batches(scan, names, positions=[PHRASE_COLUMN], scoring=wanted.scoring)
    release_free_heap()
    return _lexical_from_table(table, catalog, wanted, columns) if scan.out_of_order else lexical


def _spelling_from_table(
    table: Any, catalog: RowCatalog, wanted: Wanted, columns: frozenset[str]
) -> SpellingIndex | None:
    if not (wanted.spelling and SPELLING_COLUMN in columns):
        return None
    return load_spelling_index(table, catalog, SPELLING_COLUMN)


def from_files(
    files: DerivedFiles, table: Any, metadata: IndexMetadata, wanted: Wanted, budgets: Budgets
) -> EngineParts:
    """The parts the derived ``files`` hold, each missing one derived from the ``table`` (opened
    only then)."""
    parts = files.parts
    facts = parts["table"].meta
    columns = frozenset(facts["columns"])
    display = None
    shown = parts.get("display")
    if shown is not None and shown.meta["scan_bytes"] <= budgets.mapped_display:
        display = held_display(shown)
    catalog = RowCatalog.from_part(parts["catalog"], display)
    if shown is None and budgets.display > facts.get("display_over", -1):
        catalog.display = _display_from_table(table, catalog, columns, metadata, budgets)
    held = parts.get("content")
    if held is not None:
        content = ContentStore.from_part(held) if held.meta["scan_bytes"] <= budgets.content else None
    elif budgets.content > facts.get("content_over", -1):
        content = ContentStore.load(table, catalog.row_ids, budgets.content)
    else:
        content = None
    lexical = None
    stored = parts.get(f"lexical.{wanted.scoring.name}")
    usable = wanted.in_memory and lexical_index_usable(columns, wanted.match_boosts)
    if usable and stored is not None and set(stored.meta["fields"]) >= set(wanted.match_boosts):
        lexical = LexicalIndex.from_part(stored, wanted.scoring)
    elif usable:
        lexical = _lexical_from_table(table, catalog, wanted, columns)
    spelling = None
    if wanted.spelling and SPELLING_COLUMN in columns:
        stored = parts.get("spelling")
        spelling = (
            SpellingIndex.from_part(stored)
            if stored is not None
            else _spelling_from_table(table, catalog, wanted, columns)
        )
    vectors = None
    if wanted.vectors:
        stored = parts.get("vectors")
        if stored is not None:
            fits = stored.arrays["vectors"].nbytes <= budgets.vectors
            vectors = VectorMatrix.from_part(stored) if fits else None
        else:
            vectors = VectorMatrix.load(table, catalog.row_ids, budgets.vectors)
    ann_index = parts["table"].meta.get("ann_index")
    stored = parts.get("intent")
    current = stored is not None and IntentIndex.current(stored)
    intent = IntentIndex.from_part(stored) if wanted.default and stored is not None and current else None
    headings = None
    stored, wanted_model = parts.get("headings"), metadata.heading_vectors
    if wanted.default and stored is not None and wanted_model is not None:
        from docs_mcp_core.search.heading_leg import HeadingVectors

        headings = HeadingVectors.from_part(stored, wanted_model.model)
    return EngineParts(
        columns, catalog, content, lexical, spelling, vectors, ann_index, "derived files", intent, headings
    )


def _display_from_table(
    table: Any, catalog: RowCatalog, columns: frozenset[str], metadata: IndexMetadata, budgets: Budgets
) -> Any:
    shown = display_columns(columns, list(metadata.taxonomy))
    return _display_table(table, shown, budgets.display, catalog.row_ids)


# what reading arrays that do not hold together raises (PyArrow's errors derive from these)
_DAMAGED = (
    OSError,
    ValueError,
    KeyError,
    TypeError,
    IndexError,
    OverflowError,
    MemoryError,
    NotImplementedError,
)


def assemble(
    table: Any,
    table_folder: Path | None,
    metadata: IndexMetadata,
    wanted: Callable[[frozenset[str]], Wanted],
    budgets: Budgets,
    on_note: Callable[[str], None],
) -> EngineParts:
    """The engine's parts: from the derived files beside the table when they are usable, else
    derived from the table, with one ``on_note`` line saying why (``wanted`` decides from the
    table's columns what to derive)."""
    table_name = metadata.index.table or "chunks"
    files, why = (None, "missing") if table_folder is None else read_derived(table_folder, table_name)
    if files is not None and ("table" not in files.parts or "catalog" not in files.parts):
        files, why = None, "incomplete"
    if files is not None:
        columns = frozenset(files.parts["table"].meta["columns"])
        chosen = wanted(columns)
        try:
            parts = from_files(files, table, metadata, chosen, budgets)
        except _DAMAGED as exc:
            # bytes damaged after the build, where the sizes and the header still agree: the
            # arrays do not hold together. They only cache what the table holds, so the index
            # is still served, derived from the table (which reports its own damage).
            why = f"damaged: {type(exc).__name__}: {exc}"
        else:
            _note_missing_parts(parts, chosen, metadata, on_note)
            return parts
    if table_folder is not None:
        if why == "missing":
            on_note(
                "this index has no derived files (it was built before they existed, or by another "
                "program): the engine derives them at start; rebuild it with docs-mcp build to start faster"
            )
        else:
            on_note(
                f"the derived files of this index are unusable ({why}): the engine derives them at "
                "start; rebuild it with docs-mcp build to repair them"
            )
    columns = frozenset(table.schema.names)
    return derive_from_table(table, metadata, wanted(columns), budgets, columns)


def _note_missing_parts(
    parts: EngineParts, chosen: Wanted, metadata: IndexMetadata, on_note: Callable[[str], None]
) -> None:
    """One line for each part the default ranking wants that derived files of an earlier version lack."""
    if chosen.default and metadata.heading_vectors is not None and parts.headings is None:
        on_note(
            "the derived files of this index hold no usable heading-path vectors: searching "
            "without them; rebuild it with docs-mcp build to search with them"
        )
    if chosen.default and parts.intent is None and parts.catalog.file_codes is not None:
        on_note(
            "the derived files of this index hold no ranking attributes of this version (it was "
            "built by an earlier one): the engine derives them at start; rebuild it with docs-mcp "
            "build to start faster"
        )


def heading_vectors_of(table: Any, catalog: RowCatalog, vocabulary: HeadingVocabulary) -> HeadingVectors:
    """Every row's heading-path vector from the build's embedded texts, in catalog order."""
    data = scan_in_row_order(table, ["filepath", "breadcrumb"])
    filepaths = data.column("filepath").to_pylist()
    breadcrumbs = data.column("breadcrumb").to_pylist()
    if not np.array_equal(data.column("_rowid").to_numpy().astype(np.uint64), catalog.row_ids):
        raise ValueError("the table's rows changed while its derived files were written")
    from docs_mcp_core.search.heading_leg import HeadingVectors

    return HeadingVectors.assemble(vocabulary, filepaths, breadcrumbs)


def build_wanted(columns: frozenset[str]) -> Wanted:
    """What a build derives for a table of ``columns``: every part the default ranking's engine
    opens, in memory, the vectors when the table has them."""
    return Wanted(
        True,
        default_match_boosts(),
        LANCEDB_SCORING,
        in_memory=True,
        spelling=True,
        vectors="vector" in columns,
    )


def _load_catalog(
    table: Any, metadata: IndexMetadata, columns: frozenset[str], budgets: Budgets
) -> RowCatalog:
    """The row catalog of ``table``, with its display columns when they fit ``budgets``."""
    taxonomy_keys = list(metadata.taxonomy)
    return RowCatalog.load(
        table,
        taxonomy_keys,
        PRIOR_COLUMN,
        DEDUP_COLUMN,
        display_columns=display_columns(columns, taxonomy_keys),
        display_budget=budgets.display,
        collapse_keys=list(collapse_keys(metadata.taxonomy)),
    )


def _catalog_for_build(
    table: Any, metadata: IndexMetadata, columns: frozenset[str], budgets: Budgets
) -> RowCatalog:
    """:func:`_load_catalog`, its display columns read in ranges of rows and combined a column at a
    time (:func:`combined_within`); a table of one batch or of rows out of order: ``_load_catalog``."""
    if table.count_rows() <= SCAN_BATCH_ROWS:
        return _load_catalog(table, metadata, columns, budgets)
    catalog = _load_catalog(table, metadata, columns, Budgets(0, budgets.content, budgets.vectors))
    shown = display_columns(columns, list(metadata.taxonomy))
    scan = CatalogScan(table, shown, catalog.row_ids)
    catalog.display = combined_within(scan, budgets.display) if shown and budgets.display > 0 else None
    if scan.out_of_order:
        catalog.display = _display_table(table, shown, budgets.display, catalog.row_ids)
    release_free_heap()  # the batches' pages, freed among the combined columns'
    return catalog


def derive_into(
    writer: DerivedWriter,
    table: Any,
    metadata: IndexMetadata,
    budgets: Budgets,
    headings: Callable[[], HeadingVocabulary] | None = None,
) -> int:
    """Derive the parts a build writes and hand each to ``writer`` as soon as it is made, freed
    before the next one is made (a build holds the catalog and the part being made, not every
    part); returns the number of rows. The parts are those the default ranking's engine derives
    at open (:func:`derive_from_table`), and the heading-path vectors of the build's embedded
    texts, which ``headings`` gives, waiting for the embedding: the small parts are made while it
    runs, the two largest (the lexical index and the content store, made or written as the
    table's rows are read a batch at a time: :mod:`~docs_mcp_core.search.scan_batches`) once it is
    done and its model and buffers are freed."""
    columns = frozenset(table.schema.names)
    wanted = build_wanted(columns)
    catalog = _catalog_for_build(table, metadata, columns, budgets)
    facts: dict[str, Any] = {
        "columns": sorted(columns),
        "rows": len(catalog),
        "ann_index": vector_index_type(table) if wanted.vectors else None,
    }
    writer.add("catalog", catalog.to_part())
    _add_small_parts(writer, table, catalog, metadata, wanted, budgets, facts)
    release_free_heap()
    vocabulary = headings() if headings is not None else None
    _add_large_parts(writer, table, catalog, wanted, budgets, facts, vocabulary)
    writer.add("table", Part(meta=facts))
    return len(catalog)


def _add_small_parts(
    writer: DerivedWriter,
    table: Any,
    catalog: RowCatalog,
    metadata: IndexMetadata,
    wanted: Wanted,
    budgets: Budgets,
    facts: dict[str, Any],
) -> None:
    """The display columns, the intent attributes (which read some of them while the catalog
    holds them, then let go) and the spelling index."""
    columns, rows = frozenset(facts["columns"]), len(catalog)
    display = catalog.display
    stored = stored_display(display, ROWID_BYTES * rows) if display is not None else None
    if display is not None and stored is not None:
        writer.add("display", stored)
    elif display is None:  # more than the budget (or no display column): a smaller one needs no look
        facts["display_over"] = budgets.display
    del stored
    if display is not None:  # the intent attributes read these of the display columns: the rest let go
        read = [c for c in (*INTENT_COLUMNS, text_column(columns)) if c in display.column_names]
        catalog.display = display.select(read)
    del display
    try:
        intent = _intent_of(table, catalog, metadata, columns)
    except KeyError:  # they read another display column: every one, read again
        catalog.display = _display_from_table(table, catalog, columns, metadata, budgets)
        intent = _intent_of(table, catalog, metadata, columns)
    catalog.display = None
    if intent is not None:
        writer.add("intent", intent.to_part())
    del intent
    spelling = _spelling_from_table(table, catalog, wanted, columns)
    if spelling is not None:
        writer.add("spelling", spelling.to_part())


def _add_large_parts(
    writer: DerivedWriter,
    table: Any,
    catalog: RowCatalog,
    wanted: Wanted,
    budgets: Budgets,
    facts: dict[str, Any],
    vocabulary: HeadingVocabulary | None,
) -> None:
    """The lexical index (made beside the heading vectors of ``vocabulary``), then the content
    store (written to the derived file as it is read) and the vectors."""
    columns, rows = frozenset(facts["columns"]), len(catalog)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="docs-mcp-derive") as pool:
        lexical = pool.submit(_lexical_for_build, table, catalog, wanted, columns)
        if vocabulary is not None:
            writer.add("headings", heading_vectors_of(table, catalog, vocabulary).to_part())
        del vocabulary
        made = lexical.result()
    if made is not None:
        writer.add(f"lexical.{LANCEDB_SCORING.name}", made.to_part())
    del made, lexical
    release_free_heap()
    if not write_content(writer, "content", table, catalog.row_ids, budgets.content, ROWID_BYTES * rows):
        facts["content_over"] = budgets.content
    if wanted.vectors:
        vectors = VectorMatrix.load(table, catalog.row_ids, budgets.vectors)
        if vectors is not None:
            writer.add("vectors", vectors.to_part())


def _intent_of(
    table: Any, catalog: RowCatalog, metadata: IndexMetadata, columns: frozenset[str]
) -> IntentIndex | None:
    """The intent attributes the default ranking's first search derives (:func:`load_intent`),
    computed on a loop of their own (the build may be running inside another)."""
    import asyncio

    from docs_mcp_core.index.lancedb_async import async_table

    reader = RowReader(
        atable=async_table(table), catalog=catalog, columns=columns, taxonomy_keys=list(metadata.taxonomy)
    )
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, load_intent(catalog, reader, metadata.files)).result()


def write_derived_files(
    table_uri: str,
    folder: Path,
    metadata: IndexMetadata,
    storage_options: Mapping[str, str] | None = None,
    *,
    manifests: Mapping[str, bytes] | None = None,
    headings: Callable[[], HeadingVocabulary] | None = None,
) -> list[Path]:
    """Derive the engine's parts from the table at ``table_uri`` and write them into ``folder``
    (the table's own folder, or a scratch folder with the table's version ``manifests`` when the
    table is in an object store), with the heading-path vectors of the texts ``headings`` gives
    (asked for once the small parts are written: :func:`derive_into`); returns the files written."""
    from docs_mcp_core.index.lancedb_import import import_lancedb

    table_name = metadata.index.table or "chunks"
    db = import_lancedb().connect(
        table_uri, read_consistency_interval=None, storage_options=dict(storage_options or {})
    )
    writer = DerivedWriter(folder, table_name)
    try:
        rows = derive_into(writer, db.open_table(table_name), metadata, build_budgets(), headings)
        return writer.finish(rows, manifests=manifests)
    finally:
        writer.discard()
