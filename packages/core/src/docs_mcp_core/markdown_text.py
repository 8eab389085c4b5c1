"""Plain text of a markdown node, for full-text search and snippets (see :func:`node_plain_text`).

Everything here runs in time linear in the size of its input, whatever the input: a corpus is
untrusted text. Patterns that could start a match at every character of a long run are anchored
(a look-behind, a line start) and use possessive quantifiers; constructs whose end may lie far
away (comments, code spans, links, autolinks) are found by scanning forward once instead of
retrying a regular expression from every candidate start. Each function keeps the exact result of
the plain regular expression it replaces.
"""

from __future__ import annotations

import html
import re

from docs_mcp_core.markdown import Node, code_spans, parse_markdown

__all__ = ["markdown_plain_text", "node_plain_text"]

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
# A held code span's place: noncharacters, which no character reference decodes to (html.unescape
# gives "" for them) and which a text's own are held as spans too. Private-use U+E000/U+E001 were
# used, and a page written with an icon font's glyphs around digits failed (or took a span's text).
_MARK, _MARK_END = "\ufdd0", "\ufdd1"
_PLACEHOLDER_RE = re.compile(f"{_MARK}([0-9]+){_MARK_END}")


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
    (``(?<!`)(`+)(?!`)(.+?)(?<!`)\\1(?!`)``, found by :func:`~docs_mcp_core.markdown.code_spans`).
    """
    found = code_spans(text)
    if not found:
        return text
    out: list[str] = []
    pos = 0
    for start, opened, closing, end in found:
        out.append(_hold_marks(text[pos:start], spans))
        spans.append(text[opened:closing])
        out.append(f"{_MARK}{len(spans) - 1}{_MARK_END}")
        pos = end
    out.append(_hold_marks(text[pos:], spans))
    return "".join(out)


def _hold_marks(text: str, spans: list[str]) -> str:
    """``text`` with its own placeholder marks held as spans, so no text reads as a placeholder."""
    if _MARK not in text:
        return text
    spans.append(_MARK)
    return text.replace(_MARK, f"{_MARK}{len(spans) - 1}{_MARK_END}")


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

    Code spans are set aside behind placeholders (noncharacters) while the markup is stripped, so a
    tag whose attribute holds a code span still goes as a whole, and put back afterwards.
    """
    if "`" not in text:
        return _markup_to_text(text)
    spans: list[str] = []
    held = _hold_code_spans(text, spans)
    if not spans:
        return _markup_to_text(text)
    return _PLACEHOLDER_RE.sub(lambda m: spans[int(m.group(1))], _markup_to_text(held))


# a numeric character reference longer than CommonMark's (7 decimal, 6 hex digits) is text: read as a
# number, 5,000 digits raised ValueError (Python reads at most 4,300) and failed the whole file
_LONG_CHARREF_RE = re.compile(r"&(#[0-9]{8,}|#[xX][0-9a-fA-F]{7,})")


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
    if "*" in text or "_" in text or "~" in text:
        text = _EMPHASIS_RE.sub("", text)
    if "\\" in text:
        text = _ESCAPE_RE.sub(r"\1", text)
    if "&" in text:
        text = html.unescape(_LONG_CHARREF_RE.sub(r"&amp;\1", text))
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


def markdown_plain_text(markdown: str) -> str:
    """Plain text of a markdown text (a chunk's ``content``): its nodes' plain texts, a blank line
    apart."""
    parsed = parse_markdown(markdown)
    return "\n\n".join(t for t in (node_plain_text(n, parsed.source) for n in parsed.nodes) if t)


def _collapse_blank(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text).strip()
