"""The original's ``content_text``: each top-level node as ``mdast-util-to-string`` renders it.

The original computes a chunk's ``content_text`` as ``nodes.map(toString).join("\\n\\n")`` over the
chunk's top-level mdast nodes (``docs/metadata.md``). ``toString`` returns a node's ``value`` when it
has one (text, inline and fenced code, **raw HTML**, comments included), an image's alt text, and
otherwise its children's strings joined with **no separator**: list items and table cells run
together (``- alpha\\n- beta`` gives ``alphabeta``), a link gives its text (its target is dropped, an
HTML ``<a href>`` stays as written), a hard line break, a thematic break and a link reference
definition give ``""``. Character references and backslash escapes are decoded outside raw HTML.

This module reproduces that from the same nodes the chunker uses, parsing each node's source with
markdown-it (CommonMark, GFM tables and strikethrough) and the document's link reference
definitions. Known differences, all rare in documentation: GFM's single-tilde strikethrough
(``~a~``) and footnote references stay literal text.

The default ranking reads its own plain text instead (``markdown_text.py``), where words in list
items and table cells stay apart and markup is gone.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.backticks import backtick
from markdown_it.token import Token

from docs_mcp_core.markdown import Node

__all__ = ["node_mdast_text", "original_content_text"]

# a paragraph without these characters (and without trailing blanks, which may make a hard break)
# is its lines with their surrounding blanks removed
_INLINE_SYNTAX = frozenset("\\`*_[]<>!&~|\r")
_TASK_RE = re.compile(r"^\[[ xX]\](?=[ \t]+\S)[ \t]")
_FOOTNOTE_DEF_RE = re.compile(r"^\[\^[^\]\s]+\]:[ \t]*")
_DEFINITION_START_RE = re.compile(r"\n(?= {0,3}\[[^\]\n]+\]:)")


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
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


def original_content_text(nodes: list[Node], source: str, references: dict[str, Any]) -> str:
    """A chunk's ``content_text`` as the original computes it from its top-level ``nodes``."""
    return "\n\n".join(node_mdast_text(node, source, references) for node in nodes)


def node_mdast_text(node: Node, source: str, references: dict[str, Any]) -> str:
    """``mdast-util-to-string`` of one top-level node (``references``: the document's link
    reference definitions, as markdown-it's ``env["references"]`` holds them)."""
    kind = node.kind
    if kind == "heading":
        return node.heading_text
    if kind == "hr":
        return ""
    raw = source[node.start : node.end]
    if kind == "definition":
        # one node here may be several definitions on adjacent lines (several nodes in mdast)
        texts = []
        for definition in _DEFINITION_START_RE.split(raw):
            found = _FOOTNOTE_DEF_RE.match(definition)
            texts.append(_inline_text(definition[found.end() :].strip(), references) if found else "")
        return "\n\n".join(texts)
    if kind == "html":
        return raw
    if kind == "paragraph":
        if not _INLINE_SYNTAX.intersection(raw) and not re.search(r"[ \t]\n", raw):
            return "\n".join(line.strip(" \t") for line in raw.split("\n")).strip(" \t")
        return _inline_text(raw.strip(" \t\n"), references)
    # code, fences, lists, quotes and tables: parse the node's lines (from the start of its first
    # line, so that container columns are as in the document)
    line_start = source.rfind("\n", 0, node.start) + 1
    tokens = _parser().parse(source[line_start : node.end], {"references": references})
    parts: list[str] = []
    _collect_blocks(tokens, parts)
    return "".join(parts)


def _inline_text(text: str, references: dict[str, Any]) -> str:
    parts: list[str] = []
    for token in _parser().parseInline(text, {"references": references}):
        _collect_inline(token.children or [], parts)
    return "".join(parts)


def _collect_blocks(tokens: list[Token], parts: list[str]) -> None:
    task_item = False
    for i, token in enumerate(tokens):
        kind = token.type
        if kind == "inline":
            children = token.children or []
            if task_item:
                children = _strip_task_marker(children)
                task_item = False
            _collect_inline(children, parts)
        elif kind in ("fence", "code_block"):
            parts.append(token.content.removesuffix("\n"))
        elif kind == "html_block":
            parts.append(token.content.rstrip("\n"))
        elif kind == "list_item_open":
            # GFM task list items: the ``[x]`` marker is the item's state, not its text
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            task_item = nxt is not None and nxt.type == "paragraph_open"


def _strip_task_marker(children: list[Token]) -> list[Token]:
    if not children or children[0].type != "text":
        return children
    first = children[0]
    found = _TASK_RE.match(first.content)
    if found is None:
        return children
    stripped = first.copy()
    stripped.content = first.content[found.end() :]
    return [stripped, *children[1:]]


def _collect_inline(children: list[Token], parts: list[str]) -> None:
    for child in children:
        kind = child.type
        if kind in ("text", "code_inline", "html_inline", "text_special"):
            parts.append(child.content)
        elif kind == "softbreak":
            parts.append("\n")
        elif child.children:
            _collect_inline(child.children, parts)
