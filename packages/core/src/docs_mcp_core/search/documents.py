"""Document access: a chunk with its neighbours or its whole section (``get_doc``), a whole file,
the files of a filter.

``get_doc`` answers in the original's delimiter grammar, one block per chunk:
``--- Chunk: <id> (Chunk i of n) (Target|Context: +k|-k) ---`` followed by the chunk's markdown.
With ``scope: "section"`` or ``"parent"`` it answers with one section instead (see
:mod:`.sections`): ``--- Section: <section id> (Chunks a-b of n) (Target: <id>) ---`` followed by
its chunks' markdown joined as the file has it. With ``max_tokens`` the answer is fitted to the
budget (:mod:`.budget`) and, when cut, ends with a cursor that fetches the rest.

The chunk and its file's other chunks are found in the row catalog; their markdown comes from the
:class:`~docs_mcp_core.search.content_store.ContentStore` when the engine holds it (no I/O), else
from the table by row id, as sections' breadcrumbs do.

What other features build on: :meth:`Documents.position` (a chunk id's catalog position),
:meth:`Documents.file_positions` (the positions of a file's chunks in order) and
:meth:`Documents.contents` (the markdown at positions).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from docs_mcp_core.errors import SearchError, shown
from docs_mcp_core.index.lancedb_async import async_table
from docs_mcp_core.index.table import quote_identifier, quote_string
from docs_mcp_core.ordering import sort_key
from docs_mcp_core.search.budget import (
    DELIMITER,
    MAX_MAX_TOKENS,
    KeptPieces,
    Piece,
    TokenBudget,
    check_max_tokens,
    fit,
    markdown_pieces,
)
from docs_mcp_core.search.content_store import ContentStore
from docs_mcp_core.search.cursor import DocRequest, decode_doc_cursor, encode_doc_cursor
from docs_mcp_core.search.row_catalog import RowCatalog
from docs_mcp_core.search.sections import SCOPES, FileChunk, Section, find_section, split_chunk_id
from docs_mcp_core.tokens import BUDGET_ENCODING

__all__ = ["MAX_CONTEXT", "Documents", "is_chunk_id_format"]

MAX_CONTEXT = 5  # neighbouring chunks on each side
WHOLE_FILE = -1  # the context value that asks for the whole file
_CHUNK_ID_RE = re.compile(r"^(?!\s)([^#\s]+)(#[^#\s]+)?$")
_MORE_ROOM = 150  # tokens beyond a block's own that a call needs for the delimiter and the notice


def is_chunk_id_format(chunk_id: str) -> bool:
    return _CHUNK_ID_RE.match(chunk_id) is not None


class Documents:
    """The chunks and files of an open index."""

    def __init__(
        self,
        *,
        table: Any,
        catalog: RowCatalog,
        columns: Collection[str],
        secret: bytes = b"",
        token_encoding: str = BUDGET_ENCODING,
        contents: ContentStore | None = None,
    ) -> None:
        self._table = table
        self._atable = async_table(table)
        self._catalog = catalog
        self._columns = columns
        self._secret = secret
        self._token_encoding = token_encoding
        self._contents = contents
        # an answer's pieces, for its next parts (a section of 40,000 chunks took 1.9 s to cut,
        # one of a 9 MB list 6 s, for each of its parts)
        self._kept = KeptPieces()

    def configure(self, *, token_encoding: str, contents: ContentStore | None) -> None:
        """Set what the engine decides after construction: the budget's token encoding and the
        chunk contents held in memory."""
        self._token_encoding = token_encoding
        self._contents = contents

    @property
    def in_memory(self) -> bool:
        """Whether chunk contents are held in memory (no read of the table for them)."""
        return self._contents is not None

    def position(self, chunk_id: str) -> int | None:
        """The catalog position of ``chunk_id`` (None when the index has no such chunk)."""
        return self._catalog.position(chunk_id)

    def file_positions(self, filepath: str) -> np.ndarray | None:
        """Positions of every chunk of ``filepath`` in chunk order (None when it is not indexed)."""
        return self._catalog.positions_of_file(filepath)

    async def contents(self, positions: Sequence[int] | np.ndarray) -> list[str]:
        """The markdown of the chunks at ``positions``, in that order."""
        if self._contents is not None:
            return self._contents.texts(positions)
        row_ids = [int(r) for r in self._catalog.row_ids[np.asarray(positions, dtype=np.int64)]]
        by_row = await self._read(row_ids, "content")
        return [by_row.get(r) or "" for r in row_ids]

    async def get_doc(
        self,
        chunk_id: str,
        context: int = 0,
        *,
        scope: str = "chunk",
        max_tokens: int | None = None,
        cursor: str | None = None,
    ) -> str:
        """The chunk's content, with up to ``context`` neighbours (0-5) on each side (``-1``: the
        whole file), or its section or parent section (``scope``); within ``max_tokens`` tokens
        when given, from where ``cursor`` (the one a cut answer ended with) says."""
        if not chunk_id or not chunk_id.strip():
            raise SearchError("chunk_id must be a non-empty string")
        if context == WHOLE_FILE:
            return await self.file_content(split_chunk_id(chunk_id)[0])
        if scope not in SCOPES:
            raise SearchError(f"scope must be one of: {', '.join(SCOPES)}")
        c = max(0, min(MAX_CONTEXT, int(context)))
        if scope != "chunk" and c:
            raise SearchError(
                f"context applies only to scope 'chunk' (scope '{scope}' reads a whole section)"
            )
        budget = check_max_tokens(max_tokens)
        located = self._catalog.locate(chunk_id)
        if located is None:
            if not is_chunk_id_format(chunk_id):
                raise SearchError(
                    f"Chunk ID '{shown(chunk_id)}' has invalid format. Expected {{filepath}} or {{filepath}}#{{heading-path}}."
                )
            raise SearchError(
                f"Chunk ID '{shown(chunk_id)}' not found. Use search_docs to discover valid chunk IDs."
            )
        siblings, index = located  # every chunk of the file: chunk_index -> (row id, chunk id)
        request = DocRequest(chunk_id, scope, c)
        start = decode_doc_cursor(cursor, request, secret=self._secret) if cursor else 0
        split = budget is not None or start > 0  # without a budget the blocks are never cut
        pieces = self._kept.get((chunk_id, scope, c)) if split else None
        if pieces is None:
            if scope == "chunk":
                pieces = await self._chunk_pieces(siblings, index, c, split)
            else:
                pieces = await self._section_pieces(siblings, index, scope, chunk_id, split)
            if split:
                self._kept.put((chunk_id, scope, c), pieces)
        if start and start >= len(pieces):
            raise SearchError(f"Invalid cursor: part {start} is beyond the end of this answer")
        return self._fit(pieces, start, request, budget)

    def _fit(self, pieces: Sequence[Piece], start: int, request: DocRequest, max_tokens: int | None) -> str:
        if max_tokens is None:
            return fit(pieces, start, None, _no_notice, _no_notice).text
        budget = TokenBudget(max_tokens, self._token_encoding)

        def cursor_at(part: int) -> str:
            return encode_doc_cursor(part, request, secret=self._secret)

        def notice(rest: int, left: int) -> str:
            return (
                f"--- Cut at max_tokens {max_tokens}: about {left:,} more tokens follow. To read on, "
                f'repeat this call with cursor "{cursor_at(rest)}" ---'
            )

        def too_large(piece: Piece, needed: int | None, at: int) -> str:
            if needed is None or needed + _MORE_ROOM > MAX_MAX_TOKENS:
                return (
                    f"--- The next {piece.kind} needs more tokens than max_tokens can be "
                    f"({MAX_MAX_TOKENS:,}). To read it, repeat this call without max_tokens and with "
                    f'cursor "{cursor_at(at)}" ---'
                )
            return (
                f"--- The next {piece.kind} needs about {needed:,} tokens, more than max_tokens "
                f"{max_tokens}. To read it, repeat this call with max_tokens {needed + _MORE_ROOM} or more "
                f'and cursor "{cursor_at(at)}" ---'
            )

        return fit(pieces, start, budget, notice, too_large).text

    async def _chunk_pieces(
        self, siblings: dict[int, tuple[int, str]], index: int, context: int, split: bool
    ) -> list[Piece]:
        """The chunk and its neighbours, each introduced by its delimiter line."""
        total = len(siblings)
        wanted = [i for i in range(max(0, index - context), index + context + 1) if i in siblings]
        contents = await self._read([siblings[i][0] for i in wanted], "content")
        pieces: list[Piece] = []
        for n, i in enumerate(wanted):  # ascending chunk_index
            delta = i - index
            role = "Target" if delta == 0 else f"Context: {'+' if delta > 0 else ''}{delta}"
            delimiter = f"--- Chunk: {siblings[i][1]} (Chunk {i + 1} of {total}) ({role})"
            content = contents.get(siblings[i][0]) or ""
            block = [
                Piece(f"{delimiter} ---\n", kind=DELIMITER),
                *_pieces(content, f"{delimiter} (continued) ---\n", split),
            ]
            pieces.extend(_joined(block, n < len(wanted) - 1))
        return pieces

    async def _section_pieces(
        self, siblings: dict[int, tuple[int, str]], index: int, scope: str, chunk_id: str, split: bool
    ) -> list[Piece]:
        """The section (or parent section) of the chunk at ``index``, as the file reads."""
        order = sorted(siblings)
        rows = [siblings[i][0] for i in order]
        crumbs = await self._read(rows, "breadcrumb")
        chunks = [FileChunk(i, siblings[i][1], crumbs.get(siblings[i][0]) or "") for i in order]
        section = find_section(chunks, index, scope)
        reads = [*([section.lead] if section.lead is not None else []), *section.indexes]
        contents = await self._read([siblings[i][0] for i in reads], "content")
        texts = [contents.get(siblings[i][0]) or "" for i in section.indexes]
        if section.lead is not None:
            heading = _heading_slice(contents.get(siblings[section.lead][0]) or "", section)
            if heading:
                texts.insert(0, heading)
        first, last = section.indexes[0] + 1, section.indexes[-1] + 1
        numbers = f"Chunk {first}" if first == last else f"Chunks {first}-{last}"
        filepath = split_chunk_id(chunk_id)[0]
        header = (
            f"--- Section: {section.section_id(filepath)} ({numbers} of {len(order)}) (Target: {chunk_id})"
        )
        pieces = [Piece(f"{header} ---\n", kind=DELIMITER)]
        for n, text in enumerate(texts):
            pieces.extend(_joined(_pieces(text, f"{header} (continued) ---\n", split), n < len(texts) - 1))
        return pieces

    async def _read(self, row_ids: Sequence[int], column: str) -> dict[int, Any]:
        """One column of the rows with these ids, by row id (``content`` from memory when held)."""
        if not row_ids:
            return {}
        if column == "content" and self._contents is not None:
            positions = self._catalog.positions(np.asarray(row_ids, dtype=np.uint64))
            return dict(zip(row_ids, self._contents.texts(positions), strict=True))
        found = await self._atable.take_row_ids(list(row_ids)).with_row_id().select([column]).to_arrow()
        return dict(zip(found.column("_rowid").to_pylist(), found.column(column).to_pylist(), strict=True))

    async def file_content(self, filepath: str) -> str:
        """Every chunk of one file, in order, joined by blank lines (the whole document)."""
        if self._contents is not None:  # the catalog knows every file
            positions = self._catalog.positions_of_file(filepath)
            if positions is None:
                raise SearchError(f"File '{filepath}' not found in the index.")
            return "\n\n".join(self._contents.texts(positions))
        found = await (
            self._atable.query()
            .where(f"filepath = {quote_string(filepath)}")
            .select(["chunk_index", "content"])
            .limit(100_000)
            .to_arrow()
        )
        rows = found.to_pylist()
        if not rows:
            raise SearchError(f"File '{filepath}' not found in the index.")
        return "\n\n".join(r["content"] for r in sorted(rows, key=lambda r: r["chunk_index"]))

    def filepaths(self, filters: Mapping[str, str]) -> list[str]:
        """Files that have a chunk matching every ``key = value`` in ``filters`` (no auto-include)."""
        clauses = [
            f"{quote_identifier(k)} = {quote_string(v)}" for k, v in filters.items() if k in self._columns
        ]
        clauses.append("chunk_index = 0")
        rows = (
            self._table.search().where(" AND ".join(clauses)).select(["filepath"]).limit(1_000_000).to_arrow()
        )
        return sorted(set(rows.column("filepath").to_pylist()), key=sort_key)


def _pieces(text: str, resume: str, split: bool) -> list[Piece]:
    """``text`` cut at its block boundaries (:func:`markdown_pieces`, which parses it), or whole
    when the answer will not be cut: the same text either way once joined."""
    if split:
        return markdown_pieces(text, resume)
    return [Piece(text, resume)] if text else []


def _no_notice(*_: object) -> str:
    return ""


def _joined(pieces: list[Piece], more: bool) -> list[Piece]:
    """A block's pieces, followed by the blank line that separates it from the next one."""
    if more and pieces:
        last = pieces[-1]
        pieces[-1] = Piece(last.text + "\n\n", last.resume, last.kind)
    return pieces


def _heading_slice(content: str, section: Section) -> str:
    """The end of ``content`` from the heading that opens ``section`` (whose intro has no chunk of
    its own), or ``""`` when ``content`` does not hold that heading."""
    from docs_mcp_core.chunking import slugify  # the markdown parser: not needed by a search
    from docs_mcp_core.markdown import parse_markdown

    slug = section.path[-1]
    for node in reversed(parse_markdown(content).nodes):
        if node.kind != "heading":
            continue
        base = slugify(node.heading_text.strip() or "section") or "section"
        if slug == base or re.fullmatch(re.escape(base) + r"-\d+", slug):
            return content[node.start :].rstrip()
    return ""
