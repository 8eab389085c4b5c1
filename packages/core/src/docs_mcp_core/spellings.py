"""Identifier spellings: how code writes a name, kept exactly as written.

The same API documented in several languages names one member several ways: ``dub.links.createMany``
in TypeScript, ``s.Links.CreateMany`` in Go, ``d_client.links.create_many`` in Python. Identifier
expansion (:func:`docs_mcp_core.ranking.expand_identifiers`) makes all of them match all of these
queries, which is what a question in words needs; but a query that spells a name exactly as one
language writes it says which page it wants, and that evidence is lost once the spelling is
lower-cased and split. This module keeps it:

* at build time, :func:`chunk_spellings` lists the compound identifiers a chunk writes **in code**
  (fenced blocks and inline code spans) and the ones its **headings** consist of (a section titled
  ``createMany`` or ``DeleteFileResponse`` defines that name), case and separators kept, with every
  dotted suffix (``dub.links.createMany`` also gives ``links.createMany`` and ``createMany``);
* at search time, :func:`query_spellings` reads the same forms from the query, and the spelling leg
  (:mod:`docs_mcp_core.search.spelling_leg`) finds the chunks that write them.

Only compound names count (a separator, or a capital inside a word: ``create_many``, ``createMany``,
``NotFound``, ``links.list``): a plain word is the full-text legs' business. Prose is left out on
purpose: product names such as ``TypeScript`` or ``GitHub`` look like identifiers but are written
in sentences, not in code.
"""

from __future__ import annotations

import functools
import re

__all__ = [
    "HEADING_MARK",
    "chunk_spellings",
    "code_text",
    "is_compound",
    "query_spellings",
    "spelling_forms",
]

HEADING_MARK = "#"  # prefixed to a spelling a chunk's heading consists of, in the stored column
MIN_LENGTH = 4  # shorter compounds (``a.b``, ``i_j``) are too common to say anything
_IDENT_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::)[A-Za-z_$][A-Za-z0-9_$]*)*")
_SEGMENT_SEP_RE = re.compile(r"\.|::")
_ACRONYM_PLURAL_RE = re.compile(r"[A-Z]{2,}s")
_FENCE_OPEN_RE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")
_INLINE_CODE_RE = re.compile(r"`([^`\n]+)`")


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
    """``name`` and its compound dotted suffixes, most specific first (``::`` written as ``.``):
    ``dub.links.createMany`` → ``dub.links.createMany``, ``links.createMany``, ``createMany``.
    Empty for a name that is not compound (docs repeat the same names thousands of times: memoised)."""
    if len(name) < MIN_LENGTH or not is_compound(name):
        return ()
    segments = _SEGMENT_SEP_RE.split(name)
    found = []
    for start in range(len(segments)):
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
    code: list[str] = []
    prose: list[str] = []
    fence = ""  # the open fence's marker run, "" outside a fenced block
    for line in markdown.split("\n"):
        if fence:
            stripped = line.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = ""
            else:
                code.append(line)
            continue
        opened = _FENCE_OPEN_RE.match(line)
        if opened is not None:
            fence = opened.group(1)
        elif "`" in line:
            prose.append(line)
    code.extend(_INLINE_CODE_RE.findall("\n".join(prose)))
    return "\n".join(code)


def _heading_forms(heading: str) -> tuple[str, ...]:
    """The spellings of a heading that is one identifier (``createMany``, ``` `links.list()` ```)."""
    name = heading.strip().strip("`").strip()
    if name.endswith("()"):
        name = name[:-2]
    if _IDENT_RE.fullmatch(name) is None:
        return ()
    return spelling_forms(name)


def chunk_spellings(heading: str, breadcrumb: str, content: str) -> str:
    """The stored spellings of one chunk: space-separated, sorted, each once; a spelling that one of
    the chunk's headings (its own or an ancestor in the breadcrumb) consists of is written again
    with :data:`HEADING_MARK` before it."""
    titles = [*breadcrumb.split(" > ")[1:], heading]
    in_headings = {form for title in titles for form in _heading_forms(title)}
    in_code = {form for name in set(_names(code_text(content))) for form in spelling_forms(name)}
    spellings = sorted(in_code | in_headings)
    spellings.extend(HEADING_MARK + form for form in sorted(in_headings))
    return " ".join(spellings)


def query_spellings(text: str) -> list[list[str]]:
    """The compound identifiers of a query, each as its :func:`spelling_forms` (most specific first),
    each identifier once, in query order."""
    found: dict[str, list[str]] = {}
    for name in _names(text):
        forms = spelling_forms(name)
        if forms and name not in found:
            found[name] = list(forms)
    return list(found.values())
