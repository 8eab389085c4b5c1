"""Heading-aware chunking of one markdown document.

Chunk ids, order, sizes and content are identical to the original docs-mcp for the same document
and strategy (see ``DECISIONS.md``): sections at the target heading level, a ``_preamble`` for text
before the first boundary, ancestor-path ids with ``-N`` duplicate counters per parent path,
refinement of oversized sections at the next heading level and greedy whole-block splitting into
``-part-N`` chunks when no deeper heading is left, and an optional merge of undersized parts.
Sizes are counted in UTF-16 code units, as JavaScript does.

One departure: where the original's rule gives two chunks of a file the same id (a third ``## Same``
is ``same-2``, as is a later ``## Same-2``; the second part of ``## Big`` is ``big-part-2``, as is a
heading ``## Big part 2``), the first chunk in document order keeps the id and each later one gets
the first free ``-N`` after it (``same-2-2``), reported as an :class:`IdCollision` so ``validate``
and ``build`` can warn. The original served only one of such chunks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from docs_mcp_core.markdown import Node, ParsedMarkdown, parse_markdown, utf16_len
from docs_mcp_core.markdown_text import markdown_plain_text, node_plain_text
from docs_mcp_core.mdast_text import original_content_text

ChunkBy = Literal["h1", "h2", "h3", "file"]
CHUNK_BY_VALUES: tuple[str, ...] = ("h1", "h2", "h3", "file")
DEFAULT_MAX_CHUNK_SIZE = 20_000
_LEVELS = {"h1": 1, "h2": 2, "h3": 3}


@dataclass(frozen=True, slots=True)
class Strategy:
    """How a file is cut into chunks."""

    chunk_by: str = "h2"
    max_chunk_size: int | None = None
    min_chunk_size: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"chunk_by": self.chunk_by}
        if self.max_chunk_size is not None:
            out["max_chunk_size"] = self.max_chunk_size
        if self.min_chunk_size is not None:
            out["min_chunk_size"] = self.min_chunk_size
        return out


@dataclass(slots=True)
class Chunk:
    """One retrievable unit; field order matches the original's ``chunks.json``."""

    chunk_id: str
    filepath: str
    heading: str
    heading_level: int
    content: str
    content_text: str
    breadcrumb: str
    chunk_index: int
    metadata: dict[str, str] = field(default_factory=dict)
    # ours, not in chunks.json: the text the default ranking searches (words of list items and table
    # cells apart, markup gone); "" when unknown (a chunk read back from an index that lacks it)
    plain_text: str = field(default="", compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "filepath": self.filepath,
            "heading": self.heading,
            "heading_level": self.heading_level,
            "content": self.content,
            "content_text": self.content_text,
            "breadcrumb": self.breadcrumb,
            "chunk_index": self.chunk_index,
            "metadata": dict(self.metadata),
        }


@dataclass(slots=True)
class _Segment:
    kind: str  # file | preamble | heading
    heading: str
    level: int
    ancestor_texts: tuple[str, ...]
    ancestor_slugs: tuple[str, ...]
    slug: str
    nodes: list[Node]
    part: int = 1


_SLUG_DROP_RE = re.compile(r"[^a-z0-9 -]")
_SLUG_SPACE_RE = re.compile(r"\s+")
_SLUG_DASHES_RE = re.compile(r"-+")


MAX_SLUG_LENGTH = 200
"""A heading's slug keeps its first 200 characters, its name (chunk heading, breadcrumb, title) its
first 1,000: a heading of megabytes (a paragraph directly above a ``---`` line reads as one) made a
chunk id as long, repeated in every search answer and too long for get_doc to be asked for."""
MAX_HEADING_LENGTH = 1_000


def slugify(value: str) -> str:
    """The original's slug: lowercase, keep ``[a-z0-9 -]``, spaces to dashes, trim dashes; at most
    :data:`MAX_SLUG_LENGTH` characters."""
    s = _SLUG_DROP_RE.sub("", value.lower())
    s = _SLUG_SPACE_RE.sub("-", s)
    return _SLUG_DASHES_RE.sub("-", s).strip("-")[:MAX_SLUG_LENGTH].rstrip("-")


def heading_name(text: str) -> str:
    """A heading's text as chunks and titles carry it: stripped, at most :data:`MAX_HEADING_LENGTH`
    characters, a cut one ending in an ellipsis."""
    text = text.strip()
    return text if len(text) <= MAX_HEADING_LENGTH else text[: MAX_HEADING_LENGTH - 1].rstrip() + "…"


@dataclass(frozen=True, slots=True)
class IdCollision:
    """A chunk whose id by the original's rule was already taken in its file, and the id it got."""

    original_id: str
    chunk_id: str
    line: int  # 1-based line where the renamed chunk starts
    first_line: int  # 1-based line of the chunk that kept ``original_id``


def plain_text_of(chunk: Chunk) -> str:
    """The chunk's plain text (words apart, markup gone), rendered from its ``content`` when the
    chunk does not carry it."""
    if chunk.plain_text or not chunk.content:
        return chunk.plain_text
    return markdown_plain_text(chunk.content)


def embedding_input(chunk: Chunk) -> str:
    """Text sent to an embedding model: breadcrumb context, then the plain content (our plain text,
    words apart and markup gone), as before ``content_text`` became the original's."""
    return f"Context: {chunk.breadcrumb}\n\nContent:\n{plain_text_of(chunk)}"


class _Doc:
    """A parsed document with cached slice sizes."""

    __slots__ = ("parsed", "source")

    def __init__(self, parsed: ParsedMarkdown) -> None:
        self.parsed = parsed
        self.source = parsed.source

    def raw(self, nodes: list[Node]) -> str:
        if not nodes:
            return ""
        return self.source[nodes[0].start : nodes[-1].end]

    def size(self, nodes: list[Node]) -> int:
        return utf16_len(self.raw(nodes))


def build_chunks(
    filepath: str,
    markdown: str | ParsedMarkdown,
    strategy: Strategy,
    metadata: Mapping[str, str] | None = None,
    collisions: list[IdCollision] | None = None,
) -> list[Chunk]:
    """Cut one document into chunks. ``filepath`` is the corpus-relative POSIX path.

    Chunk ids are unique within the file; ``collisions``, when given, receives every chunk whose
    id had to differ from the original's rule to be so.
    """
    if not filepath.strip():
        raise ValueError("filepath is required")
    parsed = markdown if isinstance(markdown, ParsedMarkdown) else parse_markdown(markdown)
    doc = _Doc(parsed)
    nodes = parsed.nodes
    if strategy.chunk_by == "file":
        segments = [_Segment("file", "", 0, (), (), "", list(nodes))]
    else:
        segments = _split_by_heading_level(doc, nodes, _LEVELS[strategy.chunk_by])
    segments = _apply_size_rules(doc, segments, strategy)
    chunks = _materialize(doc, filepath, segments, dict(metadata or {}))
    found = _make_ids_unique(chunks, [seg.nodes[0].first_line + 1 if seg.nodes else 1 for seg in segments])
    if collisions is not None:
        collisions.extend(found)
    return chunks


def _dedupe(counts: dict[tuple[str, str], int], parent: str, base: str) -> str:
    key = (parent, base)
    n = counts.get(key, 0) + 1
    counts[key] = n
    return base if n == 1 else f"{base}-{n}"


def _split_by_heading_level(doc: _Doc, nodes: list[Node], target: int) -> list[_Segment]:
    boundaries: list[tuple[int, str, tuple[str, ...], tuple[str, ...], str]] = []
    stack: list[tuple[str, str] | None] = [None] * 7
    counts: dict[tuple[str, str], int] = {}
    for i, node in enumerate(nodes):
        if node.kind != "heading":
            continue
        text = node.heading_text.strip() or "section"
        base = slugify(text) or "section"
        text = heading_name(text)
        parent_slugs = [e[1] for e in stack[1 : node.depth] if e is not None]
        slug = _dedupe(counts, "/".join(parent_slugs) or "__root__", base)
        stack[node.depth] = (text, slug)
        for d in range(node.depth + 1, 7):
            stack[d] = None
        if node.depth != target:
            continue
        anc = [e for e in stack[1:target] if e is not None]
        boundaries.append((i, text, tuple(a[0] for a in anc), tuple(a[1] for a in anc), slug))

    if not boundaries:
        return [_Segment("preamble", "", 0, (), (), "_preamble", list(nodes))]

    segments: list[_Segment] = []
    pre = nodes[: boundaries[0][0]]
    if pre and doc.raw(pre).strip():
        segments.append(_Segment("preamble", "", 0, (), (), "_preamble", pre))
    for bi, (start, text, anc_texts, anc_slugs, slug) in enumerate(boundaries):
        end = boundaries[bi + 1][0] if bi + 1 < len(boundaries) else len(nodes)
        section = nodes[start:end]
        if not doc.raw(section).strip():
            continue
        segments.append(_Segment("heading", text, target, anc_texts, anc_slugs, slug, section))
    if not segments:
        return [_Segment("preamble", "", 0, (), (), "_preamble", list(nodes))]
    return segments


def _apply_size_rules(doc: _Doc, segments: list[_Segment], strategy: Strategy) -> list[_Segment]:
    max_size = strategy.max_chunk_size or DEFAULT_MAX_CHUNK_SIZE
    min_size = strategy.min_chunk_size
    expanded: list[_Segment] = []
    for seg in segments:
        if doc.size(seg.nodes) <= max_size:
            expanded.append(seg)
        else:
            expanded.extend(_refine(doc, seg, max_size))
    if not min_size or len(expanded) <= 1:
        return expanded
    merged: list[_Segment] = []
    for seg in expanded:
        prev = merged[-1] if merged else None
        if prev is not None and doc.size(seg.nodes) < min_size and _can_merge(prev, seg):
            prev.nodes = prev.nodes + seg.nodes
            continue
        merged.append(replace(seg, nodes=list(seg.nodes)))
    return merged


def _can_merge(a: _Segment, b: _Segment) -> bool:
    return (
        a.kind == b.kind
        and a.slug == b.slug
        and a.heading == b.heading
        and a.level == b.level
        and a.ancestor_slugs == b.ancestor_slugs
    )


def _refine(doc: _Doc, seg: _Segment, max_size: int) -> list[_Segment]:
    next_level = seg.level + 1
    if next_level > 6:
        return _split_by_node_size(doc, seg, max_size)
    subs: list[tuple[int, str, str]] = []
    counts: dict[str, int] = {}
    for i, node in enumerate(seg.nodes):
        if node.kind == "heading" and node.depth == next_level:
            text = node.heading_text.strip() or "section"
            base = slugify(text) or "section"
            text = heading_name(text)
            n = counts.get(base, 0) + 1
            counts[base] = n
            subs.append((i, text, base if n == 1 else f"{base}-{n}"))
    if not subs:
        return _refine(doc, replace(seg, level=next_level), max_size)

    out: list[_Segment] = []
    if subs[0][0] > 0:
        pre = seg.nodes[: subs[0][0]]
        if doc.raw(pre).strip():
            out.append(replace(seg, nodes=pre, part=1))
    anc_texts = seg.ancestor_texts + ((seg.heading,) if seg.heading else ())
    anc_slugs = seg.ancestor_slugs + ((seg.slug,) if seg.slug else ())
    for si, (start, text, slug) in enumerate(subs):
        end = subs[si + 1][0] if si + 1 < len(subs) else len(seg.nodes)
        section = seg.nodes[start:end]
        if not doc.raw(section).strip():
            continue
        out.append(_Segment("heading", text, next_level, anc_texts, anc_slugs, slug, section))

    result: list[_Segment] = []
    for sub in out:
        if doc.size(sub.nodes) <= max_size:
            result.append(sub)
        else:
            result.extend(_refine(doc, sub, max_size))
    return result


def _split_by_node_size(doc: _Doc, seg: _Segment, max_size: int) -> list[_Segment]:
    groups: list[list[Node]] = []
    current: list[Node] = []
    current_size = 0
    for node in seg.nodes:
        size = utf16_len(doc.source[node.start : node.end])
        if current and current_size + size > max_size:
            groups.append(current)
            current = [node]
            current_size = size
        else:
            current.append(node)
            current_size += size
    if current:
        groups.append(current)
    return [replace(seg, nodes=g, part=i + 1) for i, g in enumerate(groups)]


def _chunk_id(filepath: str, seg: _Segment) -> str:
    if seg.kind == "file":
        return filepath if seg.part == 1 else f"{filepath}#_part-{seg.part}"
    if seg.kind == "preamble":
        return f"{filepath}#_preamble" if seg.part == 1 else f"{filepath}#_preamble-part-{seg.part}"
    suffix = f"-part-{seg.part}" if seg.part > 1 else ""
    return f"{filepath}#" + "/".join((*seg.ancestor_slugs, seg.slug + suffix))


def _materialize(doc: _Doc, filepath: str, segments: list[_Segment], metadata: dict[str, str]) -> list[Chunk]:
    chunks: list[Chunk] = []
    source = doc.source
    for index, seg in enumerate(segments):
        crumbs = [filepath, *seg.ancestor_texts]
        if seg.heading:
            crumbs.append(seg.heading)
        plain = "\n\n".join(t for t in (node_plain_text(n, source) for n in seg.nodes) if t)
        chunks.append(
            Chunk(
                chunk_id=_chunk_id(filepath, seg),
                filepath=filepath,
                heading=seg.heading,
                heading_level=seg.level,
                content=doc.raw(seg.nodes),
                content_text=original_content_text(seg.nodes, doc.parsed),
                breadcrumb=" > ".join(crumbs),
                chunk_index=index,
                metadata=dict(metadata),
                plain_text=plain,
            )
        )
    return chunks


def _make_ids_unique(chunks: list[Chunk], lines: list[int]) -> list[IdCollision]:
    """Give each chunk whose id an earlier chunk already has the first free ``<id>-N`` (N >= 2).

    Free means no chunk of the file has it, by the original's rule or renamed: ids that were
    unique stay exactly the original's.
    """
    first: dict[str, int] = {}
    repeated = False
    for i, chunk in enumerate(chunks):
        if chunk.chunk_id in first:
            repeated = True
        else:
            first[chunk.chunk_id] = i
    if not repeated:
        return []
    taken = set(first)
    found: list[IdCollision] = []
    for i, chunk in enumerate(chunks):
        original = chunk.chunk_id
        if first[original] == i:
            continue
        n = 2
        while f"{original}-{n}" in taken:
            n += 1
        chunk.chunk_id = f"{original}-{n}"
        taken.add(chunk.chunk_id)
        found.append(IdCollision(original, chunk.chunk_id, lines[i], lines[first[original]]))
    return found
