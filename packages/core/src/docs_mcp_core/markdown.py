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
  and footnote definitions, which remark keeps as nodes but markdown-it consumes silently.

Heading text is rendered the way ``mdast-util-to-string`` renders it (inline formatting stripped,
inline HTML and image alt text kept), because chunk ids are derived from it.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_block.state_block import StateBlock
from markdown_it.rules_block.table import table as gfm_table
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

_NEWLINE_RE = re.compile(r"\r\n|\r|\n")
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


@dataclass(slots=True)
class ParsedMarkdown:
    source: str
    nodes: list[Node]
    front_matter: str | None  # raw YAML text, None when the document has none
    front_matter_line: int  # 1-based line of the opening '---' (for messages)


def _table_extent(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """GFM table rule that records only the table's extent.

    markdown-it's own rule splits every row into cells, which dominates parsing time on generated
    SDK docs (single tables of 30-95 KB). The header checks are delegated to the original rule; the
    body ends where the original's would (a blank line, a block that interrupts it, an indent
    change), and no per-cell tokens are produced since the chunker never reads them.
    """
    if not gfm_table(state, start_line, end_line, True):
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
        if any(rule(state, line, end_line, True) for rule in terminators):
            break
        begin = state.bMarks[line] + state.tShift[line]
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


@lru_cache(maxsize=1)
def _block_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True}).use(front_matter_plugin).enable("table")
    md.block.ruler.at("table", _table_extent, {"alt": ["paragraph", "reference"]})
    md.disable("inline")
    return md


@lru_cache(maxsize=1)
def _inline_parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True}).enable("strikethrough")


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
    tokens = _block_parser().parse(source)
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

    for first, last_excl, kind, tok, idx in pending:
        if first > covered_until:
            nodes.extend(_definition_nodes(covered_until, first, starts, line_text))
        node = _make_node(kind, first, last_excl, tok, tokens, idx, starts, line_text, source)
        if node is not None:
            nodes.append(node)
        covered_until = max(covered_until, last_excl)
    if covered_until < n_lines:
        nodes.extend(_definition_nodes(covered_until, n_lines, starts, line_text))
    return ParsedMarkdown(source, nodes, front_matter, front_matter_line)


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
    source: str,
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
        node.heading_text = heading_plain_text(raw)
    return node


@lru_cache(maxsize=65536)
def heading_plain_text(raw_inline: str) -> str:
    """Render inline markdown the way ``mdast-util-to-string`` does (used for heading ids)."""
    if not raw_inline:
        return ""
    if not any(c in raw_inline for c in "\\`*_[]<>!&~"):
        return raw_inline
    tokens = _inline_parser().parseInline(raw_inline)
    parts: list[str] = []
    for tok in tokens:
        _collect_inline_text(tok.children or [], parts)
    return "".join(parts)


def _collect_inline_text(children: list[Token], parts: list[str]) -> None:
    for child in children:
        t = child.type
        if t in ("text", "code_inline", "html_inline", "text_special"):
            parts.append(child.content)
        elif t == "softbreak":
            parts.append("\n")
        elif t == "image":
            _collect_inline_text(child.children or [], parts)
        elif child.children:
            _collect_inline_text(child.children, parts)


# ── plain text for full-text search ──────────────────────────────────────────────────────────────
#
# Everything below runs in time linear in the size of its input, whatever the input: a corpus is
# untrusted text. Patterns that could start a match at every character of a long run are anchored
# (a look-behind, a line start) and use possessive quantifiers; constructs whose end may lie far
# away (comments, code spans, links, autolinks) are found by scanning forward once instead of
# retrying a regular expression from every candidate start. Each function keeps the exact result of
# the plain regular expression it replaces.

_FENCE_OPEN_RE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n?")
_AUTOLINK_START_RE = re.compile(r"<(?:https?|mailto|ftp):")
_AUTOLINK_STOP_RE = re.compile(r"[>\s]")
_TAG_RE = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_EMPHASIS_RE = re.compile(r"(?<![\w\\])[*_]{1,3}(?=\S)|(?<=\S)[*_]{1,3}(?!\w)|~~")
_ESCAPE_RE = re.compile(r"\\([!-/:-@\[-`{-~])")
_LIST_MARKER_RE = re.compile(r"^([ \t]*)(?:[-+*]|\d{1,9}[.)])(?:[ \t]+\[[ xX]\])?(?=[ \t]|$)", re.MULTILINE)
_QUOTE_RE = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE)
# an ATX marker at a line start, or a closing run of '#' at a line end; the second alternative
# starts only where a run of blanks starts (a match inside the run would also match from its start)
_HEADING_MARK_RE = re.compile(r"^[ \t]*#{1,6}(?:[ \t]+|$)|(?<![ \t])[ \t]++#++[ \t]*+$", re.MULTILINE)
_SETEXT_RE = re.compile(r"\n[ \t]*(?:=+|-+)[ \t]*$")
_TABLE_DELIM_RE = re.compile(
    r"^[ \t]*+\|?[ \t]*+:?-++:?[ \t]*+(?:\|[ \t]*+:?-++:?[ \t]*+)*+\|?[ \t]*+$", re.MULTILINE
)
_BACKTICKS_RE = re.compile(r"`+")
_CLOSE_BRACKET_RE = re.compile(r"\]")
_CLOSE_PAREN_RE = re.compile(r"\)")
_PLACEHOLDER_RE = re.compile("\ue000(\\d+)\ue001")


class _NextMatch:
    """``pattern.search(text, i).start()`` (-1 when none) for non-decreasing ``i``.

    An answer stays valid for every later ``i`` up to it, so each character is scanned once.
    """

    __slots__ = ("_at", "_found", "_pattern", "_text")

    def __init__(self, text: str, pattern: re.Pattern[str]) -> None:
        self._text, self._pattern = text, pattern
        self._at, self._found = -1, -1

    def __call__(self, i: int) -> int:
        if not (0 <= self._at <= i and (self._found < 0 or i <= self._found)):
            found = self._pattern.search(self._text, i)
            self._at, self._found = i, found.start() if found is not None else -1
        return self._found


def _strip_fence_close(raw: str) -> str:
    """``re.sub(r"\\n?[ \\t]*(`{3,}|~{3,})[ \\t]*$", "", raw, count=1)``: drop a closing fence."""
    end = len(raw) - 1 if raw.endswith("\n") else len(raw)
    stop = len(raw[:end].rstrip(" \t"))
    fence = raw[stop - 1] if stop else ""
    if fence not in ("`", "~"):
        return raw
    start = len(raw[:stop].rstrip(fence))
    if stop - start < 3:
        return raw
    start = len(raw[:start].rstrip(" \t"))
    if start and raw[start - 1] == "\n":
        start -= 1
    return raw[:start] + raw[end:]


def _hold_code_spans(text: str, spans: list[str]) -> str:
    """Replace code spans with placeholders; the span contents are appended to ``spans``.

    A span opens at a run of backticks and closes at the next run of exactly the same length
    (``(?<!`)(`+)(?!`)(.+?)(?<!`)\\1(?!`)``, found from a list of runs instead of by search).
    """
    runs = [(m.start(), m.end()) for m in _BACKTICKS_RE.finditer(text)]
    if len(runs) < 2:
        return text
    partner = [-1] * len(runs)
    last_of_length: dict[int, int] = {}
    for k in range(len(runs) - 1, -1, -1):
        length = runs[k][1] - runs[k][0]
        partner[k] = last_of_length.get(length, -1)
        last_of_length[length] = k
    out: list[str] = []
    pos = 0
    k = 0
    while k < len(runs):
        j = partner[k]
        if j < 0:
            k += 1
            continue
        (start, opened), (closing, end) = runs[k], runs[j]
        out.append(text[pos:start])
        spans.append(text[opened:closing])
        out.append(f"\ue000{len(spans) - 1}\ue001")
        pos = end
        k = j + 1
    out.append(text[pos:])
    return "".join(out)


def _strip_comments(text: str) -> str:
    """``re.sub(r"<!--.*?-->", " ", text, flags=re.DOTALL)``."""
    out: list[str] = []
    pos = 0
    while True:
        start = text.find("<!--", pos)
        if start < 0:
            break
        end = text.find("-->", start + 4)
        if end < 0:
            break
        out.append(text[pos:start])
        out.append(" ")
        pos = end + 3
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _unwrap_autolinks(text: str) -> str:
    """``re.sub(r"<((?:https?|mailto|ftp):[^>\\s]+)>", r"\\1", text)``."""
    stop_after = _NextMatch(text, _AUTOLINK_STOP_RE)
    out: list[str] = []
    pos = 0
    for m in _AUTOLINK_START_RE.finditer(text):
        start, body = m.start(), m.end()
        if start < pos:
            continue
        stop = stop_after(body)
        if stop > body and text[stop] == ">":
            out.append(text[pos:start])
            out.append(text[start + 1 : stop])
            pos = stop + 1
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _unwrap_links(text: str, image: bool) -> str:
    """``_IMAGE_RE.sub(r"\\1", text)`` (``image``) or ``_LINK_RE.sub(r"\\1", text)``.

    A label ends at the first ``]`` after its ``[``; a destination at the first ``)`` after its
    ``(``; a reference at the first ``]`` after its ``[``.
    """
    opener = "![" if image else "["
    label_end, ref_end = _NextMatch(text, _CLOSE_BRACKET_RE), _NextMatch(text, _CLOSE_BRACKET_RE)
    dest_end = _NextMatch(text, _CLOSE_PAREN_RE)
    out: list[str] = []
    pos = 0
    size = len(text)
    start = text.find(opener)
    while start >= 0:
        label = start + len(opener)
        close = label_end(label)
        if close < 0:
            break  # no ']' anywhere after: no later start can match either
        after = close + 1
        end = -1
        if after < size and text[after] == "(":
            found = dest_end(after + 1)
            end = found + 1 if found >= 0 else -1
        elif not image and after < size and text[after] == "[":
            found = ref_end(after + 1)
            end = found + 1 if found >= 0 else -1
        if end < 0:
            start = text.find(opener, start + 1)
            continue
        out.append(text[pos:start])
        out.append(text[label:close])
        pos = end
        start = text.find(opener, end)
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _inline_to_text(text: str) -> str:
    """Plain text of inline markdown; code spans keep their text verbatim (``get<T>()``,
    ``Bearer <token>``), everything else loses markup, tags, link targets and escapes.

    Code spans are set aside behind private-use placeholders while the markup is stripped, so a
    tag whose attribute holds a code span still goes as a whole, and put back afterwards.
    """
    if "`" not in text:
        return _markup_to_text(text)
    spans: list[str] = []
    held = _hold_code_spans(text, spans)
    if not spans:
        return _markup_to_text(text)
    return _PLACEHOLDER_RE.sub(lambda m: spans[int(m.group(1))], _markup_to_text(held))


def _markup_to_text(text: str) -> str:
    if "<" in text:
        text = _strip_comments(text)
        text = _unwrap_autolinks(text)
        text = _TAG_RE.sub(" ", text)
    if "[" in text:
        text = _unwrap_links(text, image=True)
        text = _unwrap_links(text, image=False)
    if "`" in text:  # an unmatched backtick run
        text = _BACKTICKS_RE.sub("", text)
    text = _EMPHASIS_RE.sub("", text)
    if "\\" in text:
        text = _ESCAPE_RE.sub(r"\1", text)
    if "&" in text:
        text = html.unescape(text)
    return text


def node_plain_text(node: Node, source: str) -> str:
    """Plain text of one node for full-text search and snippets.

    Unlike the original (which glues list items and table cells together), words in separate list
    items, table cells and lines stay separated by whitespace.
    """
    raw = source[node.start : node.end]
    kind = node.kind
    if kind == "heading":
        return node.heading_text.strip()
    if kind in ("fence", "code"):
        if kind == "fence":
            raw = _FENCE_OPEN_RE.sub("", raw, count=1)
            raw = _strip_fence_close(raw)
        return raw
    if kind == "hr":
        return ""
    if kind == "html":
        return _collapse_blank(_inline_to_text(raw))
    if kind == "table":
        lines = [ln for ln in raw.splitlines() if not _TABLE_DELIM_RE.match(ln)]
        rows = []
        for ln in lines:
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", ln.strip().strip("|"))]
            rows.append(" ".join(_inline_to_text(c) for c in cells if c))
        return "\n".join(rows)
    if kind == "blockquote":
        raw = _QUOTE_RE.sub("", raw)
    if kind in ("list", "blockquote"):
        raw = _LIST_MARKER_RE.sub(r"\1", raw)
        raw = _HEADING_MARK_RE.sub("", raw)
    if kind == "paragraph" and "\n" in raw:
        raw = _SETEXT_RE.sub("", raw)
    text = _inline_to_text(raw)
    return _collapse_blank("\n".join(line.strip() for line in text.splitlines()))


def _collapse_blank(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text).strip()
