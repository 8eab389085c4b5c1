"""Ranking features computed from a chunk's text, at build time and for the query's analysis.

The default ranking (``--ranking default``, ``docs/ranking.md``) reads, besides the legs' scores,
columns the build writes from these functions; the query-time part of the ranking (score fusion,
taxonomy cues, query-term coverage, order) is :mod:`docs_mcp_core.search.ranker`. Each feature is
general — none knows about a particular corpus, file or query set:

* **Identifier-aware text.** ``createMany``, ``create_many``, ``links.create_many`` and
  ``s.Links.Upsert`` stay searchable as written and also by their parts (``create many``,
  ``links upsert``), in extra full-text columns ``search_heading`` and ``search_text``
  (:func:`expand_identifiers`; the query is expanded the same way).
* **Path field.** The file path and ancestor headings as words (``sdks dub python docs sdks links
  README``), column ``search_path`` (:func:`path_words`): in generated SDK docs the path names the
  resource.
* **Static priors** (column ``search_prior``, :func:`static_prior`): chunks that are mostly lists
  of links (tables of contents, "available operations") and chunks whose heading is a generic
  section name repeated all over the corpus ("Fields", "Example Usage") are damped; deeper paths
  are damped very slightly, so a canonical page outranks its copies in sub-packages.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from docs_mcp_core.anchors import element_ids, option_links
from docs_mcp_core.spellings import chunk_spellings

if TYPE_CHECKING:
    from docs_mcp_core.chunking import Chunk  # (the chunker imports the markdown parser)

MAX_ALIASES = 16  # a command's other names: Docker's longest list has four
_CODE_SPAN_RE = re.compile(r"`([^`\n]+)`")
_ALIAS_LINE_RE = re.compile(
    r"^[ \t]*(?:\*\*|__)?Aliases(?:\*\*|__)?:(?:\*\*|__)?(.*)$", re.MULTILINE | re.IGNORECASE
)
_ALIAS_RE = re.compile(r"[a-z][a-z0-9-]*(?: [a-z][a-z0-9-]*){0,3}")  # one to four command words
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[.:/][A-Za-z_][A-Za-z0-9_]*)*")
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_SPLIT_RE = re.compile(r"[._:/]+")
_SEGMENT_RE = re.compile(r"[^._:/]+")  # what _SPLIT_RE leaves between separators
# a heading line inside a chunk's content, ATX (its text with any closing run of '#') or setext
_HEADING_LINE_RE = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*)$|^(.+)\n {0,3}=+[ \t]*$", re.MULTILINE)
_NON_WORD_RE = re.compile(r"[\W_]+")
_LINK_LINE_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s*\[[^\]]+\]\([^)]*\)")

NAV_RATIO_THRESHOLD = 0.5
NAV_PENALTY = 0.5
# a chunk of headings only (``# cargo-yank(1)`` before ``## NAME``) answers nothing on its own
TITLE_ONLY_PENALTY = 0.5
GENERIC_HEADING_PENALTY = 0.2
GENERIC_HEADING_MIN_COUNT = 20
GENERIC_HEADING_SHARE = 0.005
DEPTH_DAMPING = 0.02


def identifier_parts(token: str) -> list[str]:
    """``links.createMany`` → ``['links', 'create', 'many']``; a plain word gives ``[word]``."""
    return [p.lower() for seg in _SPLIT_RE.split(token) for p in _CAMEL_RE.findall(seg)]


def expand_identifiers(text: str) -> str:
    """``text`` followed by the parts of every compound identifier in it (kept whole as well)."""
    extra: list[str] = []
    for tok in _IDENT_RE.findall(text):
        # Compound: a separator (the only non-alphanumerics a token can hold) or a capital after
        # the first letter. Tokens are ASCII, so lower() changes exactly the capitals.
        if tok.isalnum() and tok[1:] == tok[1:].lower():
            continue
        joined = _joined_parts(tok)
        if joined is not None:
            extra.append(joined)
    return text + ("\n" + " ".join(extra) if extra else "")


def identifier_part_spans(text: str) -> list[tuple[int, int]]:
    """Where the parts :func:`expand_identifiers` adds for ``text`` stand in it: the ``(start, end)``
    character span of every part of every compound identifier, in order (``RetryConfig`` gives the
    spans of ``Retry`` and ``Config``; plain words give nothing)."""
    spans: list[tuple[int, int]] = []
    for ident in _IDENT_RE.finditer(text):
        tok = ident.group()
        if tok.isalnum() and tok[1:] == tok[1:].lower():
            continue
        parts = [
            (ident.start() + seg.start() + part.start(), ident.start() + seg.start() + part.end())
            for seg in _SEGMENT_RE.finditer(tok)
            for part in _CAMEL_RE.finditer(seg.group())
        ]
        if len(parts) > 1:
            spans.extend(parts)
    return spans


@functools.lru_cache(maxsize=1 << 16)
def _joined_parts(token: str) -> str | None:
    """The parts of a compound identifier joined by spaces (None when it has only one part).

    Generated docs repeat the same identifiers thousands of times (sdk-docs: 107k compound tokens,
    13k distinct), so the split is memoised.
    """
    parts = identifier_parts(token)
    return " ".join(parts) if len(parts) > 1 else None


def path_words(filepath: str, breadcrumb: str, title: str | None = None) -> str:
    """The path (without extension) and ancestor headings of a chunk, as plain words. ``title``: the
    title of a page that states it only in its front matter (no heading of the page says it), which
    stands above every chunk of the page as a top heading would."""
    stem = filepath.rsplit(".", 1)[0]
    words = re.sub(r"[/_\-]+", " ", stem)
    crumbs = breadcrumb.split(" > ")
    ancestors = " ".join(([title] if title else []) + crumbs[1:-1])
    # Ancestors are kept as written: splitting "Beta.Libraries.Documents" into words made every
    # method of a resource match the resource's words and drowned the method that was asked for.
    return f"{words} {ancestors}".strip()


def unheaded_title(title: str | None, chunks: Iterable[Chunk]) -> str | None:
    """A page's title when only its front matter states it: no heading of the page says it (as a
    chunk's heading, in a breadcrumb, or as a heading line inside a chunk, such as the first
    heading of a page chunked below it). Documentation sites that render the title from the front
    matter start the page with its first section. None otherwise, and for a page without a title."""
    if not title or not (key := _title_key(title)):
        return None
    for chunk in chunks:
        named = [chunk.heading, *chunk.breadcrumb.split(" > ")[1:]]
        named.extend(m.group(1) or m.group(2) for m in _HEADING_LINE_RE.finditer(chunk.content))
        if any(_title_key(name) == key for name in named):
            return None
    return title


def command_of(title: str | None) -> str:
    """The command a page's title names (``pnpm add <pkg>``: ``pnpm add``): its words before any
    placeholder, when there are one to four and each is written as a command is (lower case); ""."""
    words = re.split(r"[<\[{(]", title or "", maxsplit=1)[0].split()
    ok = 1 <= len(words) <= 4 and all(re.fullmatch(r"[a-z][a-z0-9-]*", w) for w in words)
    return " ".join(words) if ok else ""


def page_commands(chunk: Chunk, title: str | None = None, aliases: Sequence[str] = ()) -> list[str]:
    """The commands a chunk's page may document (:func:`command_of`), each once: the one its
    front-matter ``title`` names, the one its first heading names (``# run``), its file name's
    words (``container_run.md``: ``container run``) and the page's ``aliases``
    (:func:`page_aliases`): a whole command as written (``docker run``), or a word that stands for
    the command's last one (``i`` on the page of ``pnpm install``: ``pnpm i``). Only options its
    headings name are slugged with them, so a page that documents no command gains nothing."""
    crumbs = chunk.breadcrumb.split(" > ")
    stem = chunk.filepath.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    names = (title, crumbs[1] if len(crumbs) > 1 else None, re.sub(r"[_-]+", " ", stem))
    commands = [c for c in map(command_of, names) if c]
    for alias in aliases:
        if " " in alias:
            commands.append(command_of(alias))
        else:  # a short name: the command's last word replaced (one named by its title, else any)
            commands.extend(f"{c.rsplit(' ', 1)[0]} {alias}" for c in commands[:1] if " " in c)
    return list(dict.fromkeys(c for c in commands if c))


def page_aliases(chunks: Iterable[Chunk]) -> dict[str, tuple[str, ...]]:
    """The other names of the command each page documents, by file: the commands in code under an
    ``Aliases`` heading (``### Aliases`` then `` `docker container run`, `docker run` ``) or on a
    line that starts with ``Aliases:`` (``Aliases: `i` ``). Command-line references list them so a
    reader who knows a command by another name lands on its page. At most :data:`MAX_ALIASES` a
    page: each is slugged with every option of the page, in every chunk of it."""
    found: dict[str, dict[str, None]] = {}
    for chunk in chunks:
        if chunk.heading.strip().lower() == "aliases":  # its heading line holds no code
            spans = _CODE_SPAN_RE.findall(chunk.content)
        else:
            spans = [
                span for line in _ALIAS_LINE_RE.findall(chunk.content) for span in _CODE_SPAN_RE.findall(line)
            ]
        names = [" ".join(span.split()) for span in spans if _ALIAS_RE.fullmatch(span.strip())]
        if names:
            found.setdefault(chunk.filepath, {}).update(dict.fromkeys(names))
    return {path: tuple(names)[:MAX_ALIASES] for path, names in found.items()}


def _title_key(text: str) -> str:
    """A title compared without case, markup and punctuation (``The `uv` CLI``: ``theuvcli``)."""
    return _NON_WORD_RE.sub("", text.lower())


def nav_ratio(content: str) -> float:
    """Share of a chunk's non-heading lines that are list items holding a link."""
    lines = [ln for ln in content.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        return 0.0
    return sum(1 for ln in lines if _LINK_LINE_RE.match(ln)) / len(lines)


def generic_headings(headings: Iterable[str]) -> set[str]:
    """Normalised headings repeated so often in the corpus that they say nothing on their own."""
    counts = Counter(h.strip().lower() for h in headings if h.strip())
    total = sum(counts.values())
    floor = max(GENERIC_HEADING_MIN_COUNT, GENERIC_HEADING_SHARE * total)
    return {h for h, n in counts.items() if n >= floor}


def is_title_only(content: str) -> bool:
    """Whether a chunk holds nothing but headings (a page's title before its first section)."""
    return not any(line.strip() and not line.lstrip().startswith("#") for line in content.splitlines())


def static_prior(filepath: str, heading: str, content: str, generic: set[str]) -> float:
    """Multiplicative prior of a chunk (1.0 = neutral)."""
    prior = 1.0
    if nav_ratio(content) >= NAV_RATIO_THRESHOLD:
        prior *= 1 - NAV_PENALTY
    if is_title_only(content):
        prior *= 1 - TITLE_ONLY_PENALTY
    if heading.strip().lower() in generic:
        prior *= 1 - GENERIC_HEADING_PENALTY
    prior *= (1 - DEPTH_DAMPING) ** filepath.count("/")
    return prior


def derived_rows(
    chunks: Sequence[Chunk], known: Mapping[str, tuple[str, ...]], titles: Mapping[str, str]
) -> list[tuple[str, ...]]:
    """:func:`derived_search_columns` of every chunk, or its ``known`` columns (by chunk id, read
    from the previous table for an unchanged chunk), with its page's front-matter title, aliases and
    the options it links to its own sections (read from the pages that have a chunk to derive)."""
    fresh = {c.filepath for c in chunks if c.chunk_id not in known}
    pages = [c for c in chunks if c.filepath in fresh]
    aliases, links = page_aliases(pages), page_option_links(pages)
    return [
        known.get(c.chunk_id)
        or derived_search_columns(
            c, titles.get(c.filepath), aliases.get(c.filepath, ()), links.get(c.filepath)
        )
        for c in chunks
    ]


def page_option_links(chunks: Iterable[Chunk]) -> dict[str, dict[str, list[str]]]:
    """The options each page links to one of its own sections (:func:`~docs_mcp_core.anchors.option_links`:
    an options table's ``[`--publish`](#publish)``), by file, then by the section's anchor."""
    texts: dict[str, list[str]] = {}
    for chunk in chunks:
        texts.setdefault(chunk.filepath, []).append(chunk.content)
    found = {path: option_links(*contents) for path, contents in texts.items()}
    return {path: links for path, links in found.items() if links}


def derived_search_columns(
    chunk: Chunk,
    title: str | None = None,
    aliases: Sequence[str] = (),
    linked: Mapping[str, Sequence[str]] | None = None,
) -> tuple[str, ...]:
    """The table's search columns derived from one chunk (and the front-matter ``title`` of its page,
    when no heading says it: :func:`unheaded_title`), in the order of
    :data:`docs_mcp_core.index.table.DERIVED_COLUMNS`: expanded heading, expanded text (the words of
    its element ids, the names of its definitions, at the end, so option groups repeated per command
    stay apart), path words, a digest of text and ids (byte-identical chunks collapse) and spellings."""
    from docs_mcp_core.chunking import plain_text_of  # the build's: a server never derives columns

    text = plain_text_of(chunk)
    ids = " ".join(element_ids(chunk.heading, chunk.content))
    return (
        expand_identifiers(chunk.heading),
        expand_identifiers(text) + ("\n" + ids.replace(".", " ") if ids else ""),
        path_words(chunk.filepath, chunk.breadcrumb, title),
        hashlib.blake2b(f"{text}\n{ids}".encode(), digest_size=8).hexdigest(),
        chunk_spellings(
            chunk.heading, chunk.breadcrumb, chunk.content, page_commands(chunk, title, aliases), linked
        ),
    )
