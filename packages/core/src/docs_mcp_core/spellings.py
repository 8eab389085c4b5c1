"""Identifier spellings: how code writes a name, kept exactly as written.

The same API documented in several languages names one member several ways: ``dub.links.createMany``
in TypeScript, ``s.Links.CreateMany`` in Go, ``d_client.links.create_many`` in Python. Identifier
expansion (:func:`docs_mcp_core.ranking.expand_identifiers`) makes all of them match all of these
queries, which is what a question in words needs; but a query that spells a name exactly as one
language writes it says which page it wants, and that evidence is lost once the spelling is
lower-cased and split. This module keeps it:

* at build time, :func:`chunk_spellings` lists the compound identifiers a chunk writes **in code**
  (fenced blocks and inline code spans) and the ones its **headings** consist of (a section titled
  ``createMany`` or ``DeleteFileResponse`` defines that name), case and separators kept, with its
  dotted suffixes (``dub.links.createMany`` also gives ``links.createMany`` and ``createMany``);
* at search time, :func:`query_spellings` reads the same forms from the query, and the spelling leg
  (:mod:`docs_mcp_core.search.spelling_leg`) finds the chunks that write them.

Only compound names count (a separator, or a capital inside a word: ``create_many``, ``createMany``,
``NotFound``, ``links.list``): a plain word is the full-text legs' business. Prose is left out on
purpose: product names such as ``TypeScript`` or ``GitHub`` look like identifiers but are written
in sentences, not in code.

A chunk's stored spellings (:func:`chunk_spellings`) and a query's (:func:`query_spellings`) also
carry, marked, the names of definitions that ids, keys, options and file names give
(:mod:`docs_mcp_core.anchors`): the spelling leg searches both in one column.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence

from docs_mcp_core.anchors import (
    ANCHOR_MARK,
    PAGE_MARK,
    anchor_slug,
    chunk_anchors,
    defined_names,
    fenced_lines,
    is_dotted_key,
    key_tails,
    one_word_ids,
    query_anchors,
    query_page_names,
)

__all__ = [
    "HEADING_MARK",
    "MAX_FORM_SEGMENTS",
    "chunk_spellings",
    "code_text",
    "is_compound",
    "query_spellings",
    "spelling_forms",
]

HEADING_MARK = "#"  # prefixed to a spelling a chunk's heading consists of, in the stored column
MIN_LENGTH = 4  # shorter compounds (``a.b``, ``i_j``) are too common to say anything
MAX_FORM_SEGMENTS = 16  # parts of a suffix form: all of a name of k parts were k forms of its length
_IDENT_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::)[A-Za-z_$][A-Za-z0-9_$]*)*")
_SEGMENT_SEP_RE = re.compile(r"\.|::")
_ACRONYM_PLURAL_RE = re.compile(r"[A-Z]{2,}s")
_INLINE_CODE_RE = re.compile(r"`([^`\n]+)`")

_QUERY_WORD_RE = re.compile(r"[^\s]+")


def is_compound(name: str) -> bool:
    """Whether ``name`` is a compound identifier: dotted, ``::``-separated, snake_case (an inner
    underscore) or mixed case with a capital after the first letter (``createMany``, ``NotFound``,
    ``APIError``). An acronym's plural (``URLs``, ``APIs``) is a word, not an identifier."""
    if "." in name or "::" in name or "_" in name.strip("_"):
        return True
    if _ACRONYM_PLURAL_RE.fullmatch(name):
        return False
    return any(c.isupper() for c in name[1:]) and any(c.islower() for c in name)


@functools.lru_cache(maxsize=1 << 16)
def spelling_forms(name: str) -> tuple[str, ...]:
    """``name`` and its compound suffixes of up to :data:`MAX_FORM_SEGMENTS` parts, most specific first
    (``::`` as ``.``): ``dub.links.createMany`` → itself, ``links.createMany``, ``createMany``.
    Empty for a name that is not compound (docs repeat the same names thousands of times: memoised)."""
    if len(name) < MIN_LENGTH or not is_compound(name):
        return ()
    segments = _SEGMENT_SEP_RE.split(name)
    found = []
    for start in (0, *range(max(1, len(segments) - MAX_FORM_SEGMENTS), len(segments))):
        form = ".".join(segments[start:])
        if len(form) >= MIN_LENGTH and is_compound(form):
            found.append(form)
    return tuple(found)


def _names(text: str) -> list[str]:
    return [m.rstrip(".$") for m in _IDENT_RE.findall(text)]


def code_text(markdown: str) -> str:
    """The code of a markdown text: the bodies of its fenced blocks and its inline code spans (read
    line by line, once)."""
    if "`" not in markdown and "~~~" not in markdown:
        return ""
    code, prose = fenced_lines(markdown)
    spans = _INLINE_CODE_RE.findall("\n".join(line for line in prose if "`" in line))
    return "\n".join([*code, *spans])


def _heading_forms(heading: str) -> tuple[str, ...]:
    """The spellings of a heading that is one identifier (``createMany``, ``` `links.list()` ```)."""
    name = heading.strip().strip("`").strip()
    if name.endswith("()"):
        name = name[:-2]
    if _IDENT_RE.fullmatch(name) is None:
        return ()
    return spelling_forms(name)


def chunk_spellings(
    heading: str,
    breadcrumb: str,
    content: str,
    commands: Sequence[str] = (),
    linked: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The stored spellings of one chunk: space-separated, sorted, each once; a spelling that one of
    the chunk's headings (its own, an ancestor in the breadcrumb or one inside its text) or a
    definition in its text (:func:`defined_names`) consists of is written again with
    :data:`HEADING_MARK` before it; then its anchor spellings (:func:`chunk_anchors`, with the
    page's ``commands`` and the options its page ``linked`` to its anchors)."""
    titles = [*breadcrumb.split(" > ")[1:], heading, *defined_names(content)]
    in_headings = {form for title in titles for form in _heading_forms(title)}
    in_code = {form for name in set(_names(code_text(content))) for form in spelling_forms(name)}
    spellings = sorted(in_code | in_headings)
    spellings.extend(HEADING_MARK + form for form in sorted(in_headings))
    spellings.extend(ANCHOR_MARK + anchor for anchor in chunk_anchors(heading, content, commands, linked))
    # a one-word id names the chunk's section, as a heading that consists of a name does
    spellings.extend(HEADING_MARK + ANCHOR_MARK + word for word in one_word_ids(heading))
    # the page's names: its file's, and the commands it documents (by their aliases too: pnpm i)
    stem = breadcrumb.split(" > ")[0].rsplit("/", 1)[-1].rsplit(".", 1)[0]
    pages = dict.fromkeys(slug for slug in map(anchor_slug, [stem, *commands]) if slug)
    spellings.extend(PAGE_MARK + page for page in pages)
    return " ".join(spellings)


def query_spellings(text: str) -> list[list[str]]:
    """The compound identifiers of a query, each as its :func:`spelling_forms` (most specific first),
    each identifier once, in query order, a dotted key's (:func:`is_dotted_key`) followed by the anchors
    of its tails down to its last word (``tool.uv.package`` → ``~uv.package``, ``~package``:
    :func:`key_tails`); then, as one more identifier, its anchor spellings (:func:`query_anchors`,
    marked with :data:`ANCHOR_MARK`)."""
    found: dict[str, list[str]] = {}
    keys = {
        w
        for w in (w.strip("`'\",;:()?!").rstrip(".") for w in _QUERY_WORD_RE.findall(text))
        if is_dotted_key(w)
    }
    for name in _names(text):
        forms = spelling_forms(name)
        if forms and name not in found:
            found[name] = list(forms)
            if name in keys:  # tool.uv.package: also the anchors of its tails, down to the key alone
                found[name].extend(ANCHOR_MARK + slug for slug in key_tails(name.split(".")))
    groups = list(found.values())
    anchors = [ANCHOR_MARK + slug for slug in query_anchors(text)]
    if anchors:
        groups.append(anchors)
    pages = [PAGE_MARK + slug for slug in query_page_names(text)]
    if pages:
        groups.append(pages)
    return groups
