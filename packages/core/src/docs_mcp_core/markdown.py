"""Markdown parsing for chunking: top-level block nodes with exact source offsets.

The chunker needs, for every top-level block of a document, where it starts and ends in the source
(so a chunk's ``content`` is the exact source slice, as the original's mdast positions give it), the
heading depth and text of headings, and a plain-text rendering for full-text search.

markdown-it-py only gives line maps, and only for blocks that produce tokens. We therefore:

* parse with the CommonMark block rules plus GFM tables and YAML front matter, with the inline rule
  disabled (inline parsing is ~60 % of the cost and only headings need it);
* turn each level-0 block token into a :class:`Node` whose offsets are derived from its line map,
  matching how remark positions its nodes: paragraphs, headings, lists, tables and quotes start after
  their indentation, fenced/indented code and HTML blocks at the start of their first line; every
  block ends at the end of its last non-blank line, trailing spaces included;
* add a ``definition`` node for every run of non-blank source lines no token covers: link reference
  and footnote definitions, which remark keeps as nodes but markdown-it consumes silently;
* end a table where micromark ends it: at a body line that opens an HTML block of a tag alone on
  its line (``</Tabs>``), which then runs to the table's last line as an ``html`` node.

Heading text is rendered the way ``mdast-util-to-string`` renders it (inline formatting stripped,
inline HTML and image alt text kept, links by reference to the document's definitions read, the
calls of its footnotes left out), because chunk ids are derived from it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.html_re import HTML_OPEN_CLOSE_TAG_STR
from markdown_it.common.utils import MD_TRIM_CHARS
from markdown_it.rules_block.state_block import StateBlock
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

_NEWLINE_RE = re.compile(r"\r\n|\r|\n")
# GFM footnotes: a definition ``[^label]: text`` at the start of a line; a call ``[^label]`` of a
# defined label is a footnote reference, whose mdast text is empty (an undefined one is text)
_FOOTNOTE_DEFINITION_RE = re.compile(r"^ {0,3}\[\^([^\[\]\s]{1,999})\]:", re.MULTILINE)
_FOOTNOTE_CALL_RE = re.compile(r"\[\^([^\[\]\s]{1,999})\]")
_TICKS_RE = re.compile(r"`+")
# CommonMark's seventh kind of HTML block: a complete open or closing tag alone on its line
_HTML_TAG_LINE_RE = re.compile(r"(?:" + HTML_OPEN_CLOSE_TAG_STR + r")\s*$")
# a GFM delimiter row as markdown-it's table rule checks it: its first two characters, then only
# pipes, dashes, colons and blanks
_DELIMITER_ROW_RE = re.compile(r"(?:[|:][|\-: \t]|-[|\-:])[|\-: \t]*")
_INTERRUPTS = frozenset(
    "`~>*-_+<#0123456789"
)  # first characters of fences, quotes, rules, lists, HTML, headings
_DELIMITER_CELL_RE = re.compile(r":?-+:?$")
_UNESCAPED_PIPE_RE = re.compile(r"(?<!\\)\|")
_ASTRAL_RE = re.compile("[\U00010000-\U0010ffff]")


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (JavaScript's ``String.length``)."""
    if text.isascii():
        return len(text)
    return len(text) + len(_ASTRAL_RE.findall(text))


@dataclass(slots=True)
class Node:
    """One top-level block of a markdown document."""

    kind: str  # heading, paragraph, fence, code, table, list, blockquote, html, hr, definition
    start: int  # offset in the source string (code points)
    end: int
    depth: int = 0  # heading depth, 0 for other nodes
    heading_text: str = ""  # mdast-style text of a heading
    first_line: int = 0
    last_line: int = 0  # inclusive
    # the node's block tokens in ParsedMarkdown.tokens (open to close); empty for definitions
    token_start: int = 0
    token_end: int = 0


@dataclass(slots=True)
class ParsedMarkdown:
    source: str
    nodes: list[Node]
    front_matter: str | None  # raw YAML text, None when the document has none
    front_matter_line: int  # 1-based line of the opening '---' (for messages)
    references: dict[str, Any] = field(default_factory=dict)  # link reference definitions (markdown-it's)
    tokens: list[Token] = field(default_factory=list)  # the block tokens (inline children not parsed)
    footnotes: frozenset[str] = frozenset()  # the labels of the document's footnote definitions (lower case)

    def front_matter_key_line(self, key: str | None) -> int | None:
        """Line of ``key:`` in the front matter for a message about it, else of its opening ``---``
        (None for a document without front matter)."""
        line = self.front_matter_key_lines([key]).get(key) if key else None
        return line or self.front_matter_line or None

    def front_matter_key_lines(self, keys: Iterable[str]) -> dict[str, int]:
        """1-based document line of the first top-level-looking ``key:`` (optionally quoted) of each
        of ``keys`` in the front matter, for messages; a key not written that way is left out.

        One pass over the lines, whatever the number of keys.
        """
        wanted = set(keys)
        found: dict[str, int] = {}
        if self.front_matter is None or not wanted:
            return found
        for number, line in enumerate(self.front_matter.split("\n")):
            text = line.lstrip()
            colon = text.find(":")
            if colon < 0:
                continue
            key = text[:colon].rstrip()
            key = key[1:] if key[:1] in ("'", '"') else key
            key = key[:-1] if key[-1:] in ("'", '"') else key
            if key in wanted and key not in found:
                found[key] = self.front_matter_line + 1 + number
                if len(found) == len(wanted):
                    break
        return found


def _table_extent(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """GFM table rule that records only the table's extent.

    markdown-it's own rule splits every row into cells, which dominates parsing time on generated
    SDK docs (single tables of 30-95 KB). The header checks are the original rule's (:func:`_table_starts`); the
    body ends where the original's would (a blank line, a block that interrupts it, an indent
    change), and no per-cell tokens are produced since the chunker never reads them.
    """
    if not _table_starts(state, start_line, end_line):
        return False
    if silent:
        return True
    terminators = state.md.block.ruler.getRules("blockquote")
    old_parent = state.parentType
    state.parentType = "table"
    line = start_line + 2
    while line < end_line:
        if state.sCount[line] < state.blkIndent:
            break
        begin = state.bMarks[line] + state.tShift[line]
        # every block that can interrupt a table starts with one of these (a row usually with "|")
        if state.src[begin : begin + 1] in _INTERRUPTS and any(
            rule(state, line, end_line, True) for rule in terminators
        ):
            break
        if begin >= state.eMarks[line] or not state.src[begin : state.eMarks[line]].strip():
            break
        if state.is_code_block(line):
            break
        line += 1
    token = state.push("table_open", "table", 1)
    token.map = [start_line, line]
    state.push("table_close", "table", -1)
    state.parentType = old_parent
    state.line = line
    return True


def _table_starts(state: StateBlock, start_line: int, end_line: int) -> bool:
    """markdown-it's GFM table rule in silent mode (whether a table starts at ``start_line``), with
    the header row's cells counted by one split instead of markdown-it's character loop."""
    if start_line + 2 > end_line:
        return False
    delimiter = start_line + 1
    if state.sCount[delimiter] < state.blkIndent or state.is_code_block(delimiter):
        return False
    row = state.src[state.bMarks[delimiter] + state.tShift[delimiter] : state.eMarks[delimiter]]
    if _DELIMITER_ROW_RE.fullmatch(row) is None:
        return False
    columns = row.split("|")
    aligns = 0
    for i, column in enumerate(columns):
        cell = column.strip(MD_TRIM_CHARS)
        if not cell:
            if i == 0 or i == len(columns) - 1:
                continue
            return False
        if _DELIMITER_CELL_RE.match(cell) is None:
            return False
        aligns += 1
    header = state.src[state.bMarks[start_line] + state.tShift[start_line] : state.eMarks[start_line]]
    header = header.strip(MD_TRIM_CHARS)
    if "|" not in header or state.is_code_block(start_line):
        return False
    cells = _UNESCAPED_PIPE_RE.split(header)  # markdown-it's escapedSplit, counted
    count = len(cells) - (cells[0] == "") - (len(cells) > 1 and cells[-1] == "")
    return count != 0 and count == aligns


@lru_cache(maxsize=1)
def _block_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True}).use(front_matter_plugin).enable("table")
    md.block.ruler.at("table", _table_extent, {"alt": ["paragraph", "reference"]})
    md.disable("inline")
    return md


@lru_cache(maxsize=1)
def _inline_parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True, "strikethrough_single_tilde": True}).enable(
        "strikethrough"
    )


_BLOCK_KINDS = {
    "heading_open": "heading",
    "paragraph_open": "paragraph",
    "fence": "fence",
    "code_block": "code",
    "table_open": "table",
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "blockquote_open": "blockquote",
    "html_block": "html",
    "hr": "hr",
}


def _line_starts(source: str) -> list[int]:
    starts = [0]
    starts.extend(m.end() for m in _NEWLINE_RE.finditer(source))
    return starts


def parse_markdown(source: str) -> ParsedMarkdown:
    """Parse ``source`` into top-level nodes with source offsets."""
    env: dict[str, Any] = {}
    tokens = _block_parser().parse(source, env)
    footnotes = footnote_labels(source)
    starts = _line_starts(source)
    n_lines = len(starts)

    def line_text(i: int) -> str:
        begin = starts[i]
        end = starts[i + 1] if i + 1 < n_lines else len(source)
        return source[begin:end].rstrip("\r\n")

    nodes: list[Node] = []
    covered_until = 0  # first line not yet covered by a token
    front_matter: str | None = None
    front_matter_line = 0
    pending: list[tuple[int, int, str, Token, int]] = []  # (first, last_excl, kind, token, index)

    for idx, tok in enumerate(tokens):
        if tok.level != 0 or tok.nesting == -1 or tok.map is None:
            continue
        if tok.type == "front_matter":
            front_matter = tok.content
            front_matter_line = tok.map[0] + 1
            covered_until = tok.map[1]
            continue
        kind = _BLOCK_KINDS.get(tok.type)
        if kind is None:
            continue
        pending.append((tok.map[0], tok.map[1], kind, tok, idx))

    for n, (first, last_excl, kind, tok, idx) in enumerate(pending):
        if first > covered_until:
            nodes.extend(_definition_nodes(covered_until, first, starts, line_text))
        # a line that opens an HTML block of a tag alone ends a table where remark ends it
        cut = _table_interruption(first, last_excl, line_text) if kind == "table" else None
        pieces = [(kind, first, last_excl)] if cut is None else [(kind, first, cut), ("html", cut, last_excl)]
        for piece, begin, end in pieces:
            node = _make_node(piece, begin, end, tok, tokens, idx, starts, line_text, env, footnotes)
            if node is not None:
                node.token_start = idx
                node.token_end = pending[n + 1][4] if n + 1 < len(pending) else len(tokens)
                nodes.append(node)
        covered_until = max(covered_until, last_excl)
    if covered_until < n_lines:
        nodes.extend(_definition_nodes(covered_until, n_lines, starts, line_text))
    references = env.get("references", {})
    return ParsedMarkdown(source, nodes, front_matter, front_matter_line, references, tokens, footnotes)


def _definition_nodes(first: int, last_excl: int, starts: list[int], line_text: Any) -> list[Node]:
    """Nodes for uncovered non-blank lines (reference / footnote definitions)."""
    out: list[Node] = []
    run_start: int | None = None
    for i in range(first, last_excl + 1):
        blank = i >= last_excl or not line_text(i).strip()
        if not blank and run_start is None:
            run_start = i
        elif blank and run_start is not None:
            out.append(_span_node("definition", run_start, i, starts, line_text))
            run_start = None
    return out


def _span_node(kind: str, first: int, last_excl: int, starts: list[int], line_text: Any) -> Node:
    last = last_excl - 1
    while last > first and not line_text(last).strip():
        last -= 1
    text0 = line_text(first)
    start = starts[first] + (len(text0) - len(text0.lstrip(" \t")))
    end_text = line_text(last)
    end = starts[last] + len(end_text.rstrip(" \t"))
    return Node(kind, start, max(start, end), first_line=first, last_line=last)


def _make_node(
    kind: str,
    first: int,
    last_excl: int,
    tok: Token,
    tokens: list[Token],
    idx: int,
    starts: list[int],
    line_text: Any,
    env: dict[str, Any],
    footnotes: frozenset[str],
) -> Node | None:
    last = last_excl - 1
    while last > first and not line_text(last).strip():
        last -= 1
    text0 = line_text(first)
    if kind in ("code", "fence", "html"):
        start = starts[first]
    else:
        start = starts[first] + (len(text0) - len(text0.lstrip(" \t")))
    # remark ends a block at the end of its last line, trailing whitespace included
    end = starts[last] + len(line_text(last))
    node = Node(kind, start, max(start, end), first_line=first, last_line=last)
    if kind == "heading":
        node.depth = int(tok.tag[1])
        inline = tokens[idx + 1] if idx + 1 < len(tokens) else None
        raw = inline.content if inline is not None and inline.type == "inline" else ""
        raw = drop_footnote_calls(raw, footnotes)
        references = env.get("references")
        # a heading may link by reference to a definition anywhere in the document, as remark reads it
        node.heading_text = (
            heading_plain_text(raw) if not references or "[" not in raw else _inline_plain_text(raw, env)
        )
    return node


def _table_interruption(first: int, last_excl: int, line_text: Any) -> int | None:
    """The first body line of the table on lines ``first`` to ``last_excl`` that opens an HTML
    block of a complete tag alone on its line (``</Tabs>``): micromark ends the table there and
    the rest is that block; markdown-it reads such a line as a row (the block cannot interrupt a
    paragraph, and its table rule treats it alike)."""
    for line in range(first + 2, last_excl):
        text = line_text(line)
        indent = len(text) - len(text.lstrip(" "))
        if indent <= 3 and "<" in text and _HTML_TAG_LINE_RE.match(text[indent:]):
            return line
    return None


def footnote_labels(source: str) -> frozenset[str]:
    """The labels (lower case) of the footnotes ``source`` defines."""
    if "[^" not in source:
        return frozenset()
    return frozenset(found[1].lower() for found in _FOOTNOTE_DEFINITION_RE.finditer(source))


def drop_footnote_calls(text: str, footnotes: frozenset[str]) -> str:
    """Inline markdown ``text`` without its calls of the ``footnotes`` (outside code spans)."""
    if not footnotes or "[^" not in text:
        return text
    spans = code_spans(text) if "`" in text else []
    starts = [span[0] for span in spans]

    def call(found: re.Match[str]) -> str:
        at = bisect.bisect_right(starts, found.start()) - 1  # the last code span opened before it
        inside = at >= 0 and found.start() < spans[at][3]
        return "" if found[1].lower() in footnotes and not inside else found[0]

    return _FOOTNOTE_CALL_RE.sub(call, text)


def code_spans(text: str) -> list[tuple[int, int, int, int]]:
    """``text``'s code spans in order, each as (its opening run's start, its content's start, its
    content's end, its closing run's end): a run of backticks up to the next run of exactly the
    same length. Linear: each run's partner is found in one pass from the end."""
    runs = [(found.start(), found.end()) for found in _TICKS_RE.finditer(text)]
    partner = [-1] * len(runs)
    latest: dict[int, int] = {}  # run length -> the nearest later run of that length
    for k in range(len(runs) - 1, -1, -1):
        length = runs[k][1] - runs[k][0]
        partner[k] = latest.get(length, -1)
        latest[length] = k
    spans: list[tuple[int, int, int, int]] = []
    k = 0
    while k < len(runs):
        j = partner[k]
        if j < 0:
            k += 1
            continue
        spans.append((runs[k][0], runs[k][1], runs[j][0], runs[j][1]))
        k = j + 1
    return spans


@lru_cache(maxsize=65536)
def heading_plain_text(raw_inline: str) -> str:
    """Render inline markdown the way ``mdast-util-to-string`` does (used for heading ids)."""
    if not raw_inline:
        return ""
    if not any(c in raw_inline for c in "\\`*_[]<>!&~"):
        return raw_inline
    return _inline_plain_text(raw_inline)


def _inline_plain_text(raw_inline: str, env: dict[str, Any] | None = None) -> str:
    """:func:`heading_plain_text` by parsing, with the document's reference definitions in ``env``."""
    tokens = _inline_parser().parseInline(raw_inline, env)
    parts: list[str] = []
    for tok in tokens:
        collect_inline_text(tok.children or [], parts)
    return "".join(parts)


def collect_inline_text(children: list[Token], parts: list[str]) -> None:
    """Append the text of inline tokens to ``parts``: text, code and inline HTML as written, a soft
    break as a newline, and the text inside links, emphasis and images."""
    for child in children:
        kind = child.type
        if kind in ("text", "code_inline", "html_inline", "text_special"):
            parts.append(child.content)
        elif kind == "softbreak":
            parts.append("\n")
        elif child.children:
            collect_inline_text(child.children, parts)


@dataclass(frozen=True, slots=True)
class CutPoint:
    """A place where a markdown text may be cut without splitting a block."""

    offset: int  # where the part after the cut starts (the start of a line)
    kind: str  # what starts there: a block kind, "list item" or "table row"
    repeat: str = ""  # source to repeat before a part that starts here (a table's header rows)


def cut_points(source: str) -> list[CutPoint]:
    """Every offset where ``source`` can be cut on a block boundary, in order.

    Those are the starts of the top-level blocks (the first one included), of the items of a top-level list (after the
    first) and of the rows of a table (after the first body row; a part that starts inside a table
    repeats its header and delimiter rows so it still reads as a table). A paragraph, a code block,
    a heading, a quote, a table row or a list item is never split.
    """
    tokens = _block_parser().parse(source)
    starts = _line_starts(source)
    n_lines = len(starts)

    def line_start(line: int) -> int:
        return starts[line] if line < n_lines else len(source)

    points: list[CutPoint] = []
    for tok in tokens:
        if tok.map is None or tok.nesting == -1:
            continue
        first, last_excl = tok.map
        if tok.level == 0:
            kind = _BLOCK_KINDS.get(tok.type)
            if kind is None:
                continue
            points.append(CutPoint(line_start(first), kind))
            if kind == "table":
                header = source[line_start(first) : line_start(first + 2)]
                if not header.endswith(("\n", "\r")):
                    header += "\n"
                for row in range(first + 3, last_excl):
                    if source[line_start(row) : line_start(row + 1)].strip():
                        points.append(CutPoint(line_start(row), "table row", header))
        elif tok.level == 1 and tok.type == "list_item_open":
            # the first item starts with the list itself (the same offset: the list's point is kept)
            points.append(CutPoint(line_start(first), "list item"))
    points = [p for p in points if p.offset < len(source)]
    unique: dict[int, CutPoint] = {}
    for point in points:
        unique.setdefault(point.offset, point)
    return [unique[offset] for offset in sorted(unique)]
