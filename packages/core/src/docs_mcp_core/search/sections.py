"""The section a chunk belongs to, read from the chunk ids of its file.

``get_doc`` with ``scope: "section"`` returns the whole heading section a chunk is part of, and
``scope: "parent"`` the section one heading level up. No column says which chunks make a section;
the chunk ids do, for indexes built by this project and by the original alike (see the chunking
rules in ``chunking.py``):

* an id's fragment is the path of heading slugs from the top of the file, ``h1/h2/h3``; a
  ``_preamble`` fragment is the text before the first boundary heading, and the sections a
  preamble was refined into are ``_preamble/...``; a file chunked whole has no fragment;
* a section split for size is ``x``, ``x-part-2``, ``x-part-3``, ... (parts merged away for being
  too small leave gaps); a section refined into its sub-headings keeps its intro as ``x`` and
  its sub-sections as ``x/y``.

So the section of a chunk is every chunk of the file whose path (its ``-part-N`` suffix removed)
is the chunk's path or lies below it, in document order; its parent is the same one path segment
up, and above the top level, the whole file. A heading may itself end in ``-part-2`` ("Setup part
2" slugs to ``setup-part-2``); a suffix counts as a part only when the chunk just before it has
the same base path and the same breadcrumb, as every part of a split section does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from docs_mcp_core.chunk_ids import PREAMBLE, split_chunk_id
from docs_mcp_core.errors import shown

__all__ = ["SCOPES", "FileChunk", "Section", "find_section", "section_paths", "split_chunk_id"]

SCOPES = ("chunk", "section", "parent")
_PART_RE = re.compile(r"^(.*)-part-(\d+)$")


@dataclass(frozen=True)
class FileChunk:
    """What the section rules need to know about one chunk of a file."""

    index: int  # chunk_index, the chunk's position in its file
    chunk_id: str
    breadcrumb: str


@dataclass(frozen=True)
class Section:
    """The chunks of one section, in document order."""

    path: tuple[str, ...]  # heading slugs from the top of the file; () for the whole file
    indexes: list[int]  # chunk indexes of its chunks, ascending
    lead: int | None = None  # a chunk before them that may hold the section's own heading

    def section_id(self, filepath: str) -> str:
        """How the section is named in ``get_doc`` answers: ``<filepath>#<path>``, or the path of
        the file when the section is the whole file."""
        return f"{filepath}#{'/'.join(self.path)}" if self.path else filepath


def _fragment(chunk_id: str) -> str | None:
    return split_chunk_id(chunk_id)[1]


def section_paths(chunks: Sequence[FileChunk]) -> list[tuple[str, ...]]:
    """The heading path of every chunk of one file (in document order) without its ``-part-N``
    suffix; ``()`` for the chunks of a file chunked whole."""
    paths: list[tuple[str, ...]] = []
    for position, chunk in enumerate(chunks):
        fragment = _fragment(chunk.chunk_id)
        if fragment is None or fragment.startswith("_part-"):
            paths.append(())
            continue
        if fragment.startswith(PREAMBLE + "-part-"):
            paths.append((PREAMBLE,))
            continue
        segments = fragment.split("/")
        match = _PART_RE.match(segments[-1])
        if match and position > 0:
            base = (*segments[:-1], match.group(1))
            # a part continues the section the chunk before it is in, under the same breadcrumb
            if paths[-1] == base and chunks[position - 1].breadcrumb == chunk.breadcrumb:
                segments[-1] = match.group(1)
        paths.append(tuple(segments))
    return paths


def find_section(chunks: Sequence[FileChunk], target: int, scope: str) -> Section:
    """The section (``scope`` ``"section"``) or parent section (``"parent"``) of the chunk with
    chunk index ``target``; ``"chunk"`` is the chunk alone.

    ``chunks`` are the chunks of one file in document order. Raises ``ValueError`` for an unknown
    scope or a target that is not among them.
    """
    if scope not in SCOPES:
        raise ValueError(f"unknown scope '{shown(scope)}'. Valid scopes: {', '.join(SCOPES)}")
    position = next((i for i, c in enumerate(chunks) if c.index == target), None)
    if position is None:
        raise ValueError(f"chunk index {target} is not in the file")
    paths = section_paths(chunks)
    if scope == "chunk":
        return Section(paths[position], [target])
    path = paths[position]
    if scope == "parent":
        path = path[:-1]
    members = [i for i, p in enumerate(paths) if p[: len(path)] == path]
    lead = None
    if path and all(paths[i] != path for i in members) and members[0] > 0:
        lead = chunks[members[0] - 1].index  # the section has no chunk of its own: its heading is before
    return Section(path, [chunks[i].index for i in members], lead)
