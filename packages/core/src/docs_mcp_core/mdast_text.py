"""The original's ``content_text``: each top-level node as ``mdast-util-to-string`` renders it.

The original computes a chunk's ``content_text`` as ``nodes.map(toString).join("\\n\\n")`` over the
chunk's top-level mdast nodes (``docs/metadata.md``). ``toString`` returns a node's ``value`` when it
has one (text, inline and fenced code, **raw HTML**, comments included), an image's alt text, and
otherwise its children's strings joined with **no separator**: list items and table cells run
together (``- alpha\\n- beta`` gives ``alphabeta``), a link gives its text (its target is dropped, an
HTML ``<a href>`` stays as written), a hard line break, a thematic break and a link reference
definition give ``""``. Character references and backslash escapes are decoded outside raw HTML.

This module reproduces that from the chunker's own parse (``markdown.py``): the block tokens of each
top-level node, whose inline content is parsed here with markdown-it (CommonMark, strikethrough, the
document's link reference definitions), so both texts of a chunk come from one block parse. Plain
content (no inline syntax, or code spans only) is read without parsing, and parsed content is
cached (generated references repeat the same cells on many pages). Two cases are read otherwise:
a table's cells are split from its rows as markdown-it's GFM rule splits them (the chunker's parse
records only a table's extent), a list or quote holding a table is parsed again, and the items of a
list nested deeper than markdown-it follows (20 levels) are read line by line. GFM footnotes are
read as remark reads them: a call of a defined label (``[^1]``) gives nothing, and a definition
(``[^1]: text``) interrupts a paragraph and gives its text. A table row's cells past the header's
number stay, as mdast keeps them. ``tests/compat/test_original_text.py`` compares the result with
remark itself. GFM's strikethrough takes one tilde or two, as remark-gfm's does (a path written
``ca=~/a,cert=~/b`` loses both tildes in the original's text too). A known difference, rare in
documentation: a line that opens an HTML block right after a list item's or a paragraph's last line (``- Evaluation`` then ``<a href="...">``) is a block of that container for
micromark and a line of the paragraph for markdown-it.

The default ranking reads its own plain text instead (``markdown_text.py``), where words in list
items and table cells stay apart and markup is gone.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import MD_TRIM_CHARS as _MD_TRIM
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.backticks import backtick
from markdown_it.token import Token

from docs_mcp_core.markdown import Node, ParsedMarkdown, code_spans, collect_inline_text, drop_footnote_calls

__all__ = ["node_mdast_text", "original_content_text"]

# a paragraph without these characters (and without trailing blanks, which may make a hard break)
# is its lines with their surrounding blanks removed
_INLINE_SYNTAX = frozenset("\\`*_[]<>!&~|\r")
_TASK_RE = re.compile(r"^\[[ xX]\](?=[ \t]+\S)[ \t]")
_FOOTNOTE_DEF_RE = re.compile(r"^\[\^[^\[\]\s]{1,999}\]:[ \t]*")
_FOOTNOTE_LINE_RE = re.compile(
    r"(?:^|\n)[ \t]*\[\^[^\[\]\s]{1,999}\]:"
)  # a line that opens a footnote's definition
_FOOTNOTE_SPLIT_RE = re.compile(r"\n(?=[ \t]*\[\^[^\[\]\s]{1,999}\]:)")
_DEFINITION_START_RE = re.compile(r"\n(?= {0,3}\[[^\]\n]+\]:)")
_TRAILING_BLANK_RE = re.compile(r"[ \t]\n")
_CELL_SYNTAX = _INLINE_SYNTAX - {"|"}
_ONLY_CODE_SYNTAX = frozenset("`_")
_UNDERSCORES_RE = re.compile(r"_+")
_LINE_INDENT_RE = re.compile(r"\n[ \t]+")
_PIPE_RE = re.compile(r"(?<!\\)\|")
_MARKERS_RE = re.compile(r"^(?:[ \t]*(?:>|[-+*](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$)))*")
# markdown-it stops following containers nested this deep (its maxNesting, 20): a list item or
# quote opened at this token level or deeper may have been left empty
_DEEPEST = 18


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # GFM's strikethrough as remark-gfm reads it: one tilde or two (`ca=~/a,b=~/c` loses both)
    md = MarkdownIt("commonmark", {"html": True, "strikethrough_single_tilde": True})
    md.enable(["table", "strikethrough"])
    md.inline.ruler.at("backticks", _code_span)
    return md


def _code_span(state: StateInline, silent: bool) -> bool:
    """markdown-it's code-span rule, keeping line endings as mdast does (CommonMark's HTML output
    turns them into spaces; ``mdast-util-from-markdown`` keeps them)."""
    start, count = state.pos, len(state.tokens)
    if not backtick(state, silent):
        return False
    if not silent and len(state.tokens) > count and state.tokens[-1].type == "code_inline":
        token = state.tokens[-1]
        fence = len(token.markup)
        raw = state.src[start + fence : state.pos - fence]
        if len(raw) > 1 and raw[0] in " \n" and raw[-1] in " \n" and raw.strip(" \n"):
            raw = raw[1:-1]
        token.content = raw
    return True


def original_content_text(nodes: list[Node], parsed: ParsedMarkdown) -> str:
    """A chunk's ``content_text`` as the original computes it from its top-level ``nodes``."""
    return "\n\n".join(node_mdast_text(node, parsed) for node in nodes)


def node_mdast_text(node: Node, parsed: ParsedMarkdown) -> str:
    """``mdast-util-to-string`` of one top-level node of ``parsed``, from the block tokens the chunker's
    parse left (only inline content is parsed here)."""
    kind = node.kind
    if kind == "heading":
        return node.heading_text
    if kind == "hr":
        return ""
    source, references, notes = parsed.source, parsed.references, parsed.footnotes
    raw = source[node.start : node.end]
    if kind == "definition":
        # one node here may be several definitions on adjacent lines (several nodes in mdast)
        texts = []
        for definition in _DEFINITION_START_RE.split(raw):
            found = _FOOTNOTE_DEF_RE.match(definition)
            texts.append(_inline_text(definition[found.end() :].strip(), references, notes) if found else "")
        return "\n\n".join(texts)
    if kind == "html":
        return raw
    if kind == "table":
        return _table_text(raw, references, notes)
    tokens = parsed.tokens[node.token_start : node.token_end]
    if any(t.type == "table_open" for t in tokens):
        return _reparsed_text(node, source, references, notes)
    parts: list[str] = []
    _collect_blocks(tokens, parts, references, source, notes)
    return "".join(parts)


def _reparsed_text(node: Node, source: str, references: dict[str, Any], notes: frozenset[str]) -> str:
    """The text of a list or quote holding a table, whose cells the chunker's parse does not read
    (it records only a table's extent): the node parsed again with GFM tables."""
    line_start = source.rfind("\n", 0, node.start) + 1
    text = source[line_start : node.end]
    tokens = _parser().parse(text, {"references": references})
    parts: list[str] = []
    _collect_blocks(tokens, parts, references, text, notes)
    return "".join(parts)


@lru_cache(maxsize=1)
def _source_lines(source: str) -> list[str]:
    # once per document, however many of its containers are nested too deep
    return source.split("\n")


def _table_text(raw: str, references: dict[str, Any], notes: frozenset[str]) -> str:
    """A GFM table's cells, row by row, run together; rows split as markdown-it splits them (an
    unescaped ``|`` separates cells, ``\\|`` is a pipe). A body row's cells past the header's
    number stay: mdast keeps them (an HTML rendering drops them)."""
    lines = raw.split("\n")
    del lines[1:2]  # the delimiter row
    if references or notes:  # a row with a link or a footnote call may use the document's definitions
        return "".join(
            _row_text(line, references, notes) if "[" in line else _known_row_text(line) for line in lines
        )
    return "".join(_known_row_text(line) for line in lines)


@lru_cache(maxsize=8192)
def _known_row_text(line: str) -> str:
    # generated references repeat the same rows on many pages (a client option, an error type)
    return _row_text(line, {}, frozenset())


def _row_text(line: str, references: dict[str, Any], notes: frozenset[str]) -> str:
    cells = _split_row(line.strip(_MD_TRIM))
    if _CELL_SYNTAX.isdisjoint(line):  # plain cells
        return "".join(cell.strip(_MD_TRIM) for cell in cells)
    return "".join(_inline_text(cell.strip(_MD_TRIM), references, notes) for cell in cells if cell)


def _split_row(line: str) -> list[str]:
    """markdown-it's ``escapedSplit`` and the removal of an empty first and last cell."""
    cells = _PIPE_RE.split(line)
    if "\\|" in line:
        cells = [cell.replace("\\|", "|") for cell in cells]
    if cells and cells[0] == "":
        cells.pop(0)
    if cells and cells[-1] == "":
        cells.pop()
    return cells


def _inline_text(text: str, references: dict[str, Any], notes: frozenset[str] = frozenset()) -> str:
    """``mdast-util-to-string`` of inline markdown (a paragraph's or a cell's content); the calls
    of the document's footnotes (``notes``) give nothing."""
    text = drop_footnote_calls(text, notes)
    if not _INLINE_SYNTAX.intersection(text):
        if "\n" not in text:
            return text
        if _TRAILING_BLANK_RE.search(text) is None:  # no hard break
            return "\n".join(line.lstrip(" \t") for line in text.split("\n"))
    if not references or "[" not in text:  # reference definitions play no part
        return _known_inline_text(text)
    return _parse_inline(text, references)


@lru_cache(maxsize=16384)
def _known_inline_text(text: str) -> str:
    # generated references repeat the same cells and lines on many pages (types, flags, "Yes")
    if _ONLY_CODE_SYNTAX.issuperset(_INLINE_SYNTAX.intersection(text)) and "\r" not in text:
        simple = _code_spans_text(text)
        if simple is not None:
            return simple
    return _parse_inline(text, {})


def _code_spans_text(text: str) -> str | None:
    """The text of inline content whose only syntax is code spans, with underscores only inside
    words (they cannot open or close emphasis there); None for anything else. A code span opens at a
    run of backticks and closes at the next run of the same length (an unmatched run is text); its
    content keeps its line endings, less one space or line ending at both ends. The spans are those
    of :func:`~docs_mcp_core.markdown.code_spans`, found in one pass (each unmatched run looking for
    its partner among every later run took a 700 KB paragraph 34 s)."""
    if _TRAILING_BLANK_RE.search(text) is not None:
        return None  # a hard break
    out: list[str] = []
    pos = 0
    for opening, start, end, closing in [*code_spans(text), (len(text), -1, -1, -1)]:
        segment = text[pos:opening]
        if "_" in segment and not _intraword_underscores(segment):
            return None
        out.append(_LINE_INDENT_RE.sub("\n", segment) if "\n" in segment else segment)
        if start < 0:
            break
        raw = text[start:end]
        if len(raw) > 1 and raw[0] in " \n" and raw[-1] in " \n" and raw.strip(" \n"):
            raw = raw[1:-1]
        out.append(raw)
        pos = closing
    return "".join(out)


def _intraword_underscores(segment: str) -> bool:
    """Whether every ``_`` of ``segment`` has a letter or digit on both sides within it."""
    for found in _UNDERSCORES_RE.finditer(segment):
        start, end = found.span()
        if start == 0 or end == len(segment) or not (segment[start - 1].isalnum() and segment[end].isalnum()):
            return False
    return True


def _parse_inline(text: str, references: dict[str, Any]) -> str:
    md = _parser()
    children: list[Token] = []
    md.inline.parse(text, md, {"references": references}, children)
    parts: list[str] = []
    collect_inline_text(children, parts)
    return "".join(parts)


def _collect_blocks(
    tokens: list[Token], parts: list[str], references: dict[str, Any], source: str, notes: frozenset[str]
) -> None:
    """The texts of block ``tokens`` (their maps are lines of ``source``) into ``parts``; a
    paragraph that opens with the label of one of the document's footnotes (``notes``) is that
    footnote's definition, whose text follows the label (:func:`_footnoted_text`)."""
    task_item = False
    for i, token in enumerate(tokens):
        kind = token.type
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if kind == "inline":
            text = token.content
            if task_item:
                text = _TASK_RE.sub("", text, count=1)
                task_item = False
            if notes and _FOOTNOTE_LINE_RE.search(text):
                parts.append(_footnoted_text(text, references, notes))
            else:
                parts.append(_inline_text(text, references, notes))
        elif kind in ("fence", "code_block"):
            parts.append(token.content.removesuffix("\n"))
        elif kind == "html_block":
            parts.append(token.content.rstrip("\n"))
        elif kind in ("list_item_open", "blockquote_open"):
            # GFM task list items: the ``[x]`` marker is the item's state, not its text
            task_item = kind == "list_item_open" and nxt is not None and nxt.type == "paragraph_open"
            if token.level >= _DEEPEST and nxt is not None and nxt.nesting == -1 and token.map:
                parts.append(_unparsed_lines(source, token.map, references, notes))


def _footnoted_text(text: str, references: dict[str, Any], notes: frozenset[str]) -> str:
    """The text of a paragraph some of whose lines open a footnote's definition (``[^1]: ...``):
    each such line interrupts the paragraph and starts a node of its own, whose text follows the
    label; the nodes' texts are joined as top-level nodes are."""
    texts = []
    for piece in _FOOTNOTE_SPLIT_RE.split(text):
        piece = piece.lstrip(" \t")
        found = _FOOTNOTE_DEF_RE.match(piece)
        texts.append(_inline_text(piece[found.end() :] if found else piece, references, notes))
    return "\n\n".join(texts)


def _unparsed_lines(source: str, lines: list[int], references: dict[str, Any], notes: frozenset[str]) -> str:
    """The text of a container nested deeper than markdown-it follows (its parse leaves it empty;
    the original's parser has no such limit): each line without its markers, run together as the
    items of a list are."""
    text = _source_lines(source)[lines[0] : lines[1]]
    return "".join(
        _inline_text(_MARKERS_RE.sub("", line).strip(_MD_TRIM), references, notes) for line in text
    )
