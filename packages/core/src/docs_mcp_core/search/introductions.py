"""The section that introduces each page: what a topic query (:mod:`.intent`) is answered with.

A page's introduction is the first of its first :data:`LEAD_CANDIDATES` sections with text of its own
(:data:`LEAD_MIN_WORDS` words that are not its headings': a title alone introduces nothing), leaving
out a man page's header sections, ``NAME`` and ``SYNOPSIS``, which come before its description
(:func:`~docs_mcp_core.search.command_pages.is_man_header`). An introduction that only lists a link
to one section of its page (a resource overview listing its only operation) introduces that section.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from docs_mcp_core.search.command_pages import MAN_HEADERS, is_man_header
from docs_mcp_core.search.rows import RowReader

__all__ = ["LEAD_CANDIDATES", "first_sections", "introductions", "lead_text", "page_name"]

LEAD_CANDIDATES = 3  # first sections of a file looked at for its introduction (a man page's header aside)
LEAD_TEXT_CHARS = 2000  # of a section's text, looked at for words of its own
LEAD_MIN_WORDS = 3  # words of its own (beyond its headings) that make a section a page's introduction
_WORD_RE = re.compile(r"[A-Za-z0-9]+")
_NAME_RE = re.compile(r"[^a-z0-9]")
# a list item that links to a section of the same page: ``* [get](#get) - Retrieve a QR code``
_IN_PAGE_LINK = re.compile(r"^[ \t]*[*+-][ \t]+\[[^\]\n]*\]\(#([^)\s]+)\)", re.MULTILINE)
_MARKDOWN_BATCH = 4096


def page_name(text: str) -> str:
    """A name as one lower-case word without a plural ``s`` (``Environment Variables``:
    ``environmentvariable``), as page names and section anchors are compared."""
    return _NAME_RE.sub("", text.lower()).rstrip("s")


def lead_text(heading: str, breadcrumb: str, text: str) -> bool:
    """Whether a section says something of its own: enough words that are not its headings'."""
    own = {w.lower() for w in _WORD_RE.findall(f"{heading} {breadcrumb}")}
    count = 0
    for word in _WORD_RE.finditer(text, 0, LEAD_TEXT_CHARS):
        if word.group().lower() not in own:
            count += 1
            if count >= LEAD_MIN_WORDS:
                return True
    return False


def first_sections(file_codes: np.ndarray, chunk_index: np.ndarray, per_file: int) -> np.ndarray:
    """Positions of the first ``per_file`` chunks of every file, in file then chunk order."""
    order = np.lexsort((chunk_index, file_codes))
    return order[_ranks_in_file(file_codes[order]) < per_file]


def _ranks_in_file(codes: np.ndarray) -> np.ndarray:
    """Each position's rank among the positions of its file (``codes`` grouped by file)."""
    start = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    return np.arange(len(codes)) - np.repeat(start, np.diff(np.r_[start, len(codes)]))


async def introductions(
    file_codes: np.ndarray,
    chunk_index: np.ndarray,
    headings: Sequence[str],
    breadcrumbs: Sequence[str],
    reader: RowReader,
) -> np.ndarray:
    """Whether each row (in catalog order) is its page's introduction."""
    firsts = first_sections(file_codes, chunk_index, LEAD_CANDIDATES + len(MAN_HEADERS))
    firsts = firsts[np.fromiter((not is_man_header(headings[int(p)]) for p in firsts), bool, len(firsts))]
    firsts = firsts[_ranks_in_file(file_codes[firsts]) < LEAD_CANDIDATES]
    (texts,) = await reader.values(firsts, (reader.text_column,))
    lead = np.zeros(len(file_codes), dtype=bool)
    done: set[int] = set()
    for at, text in zip(firsts, texts, strict=True):
        position, code = int(at), int(file_codes[at])
        if code not in done and lead_text(headings[position], breadcrumbs[position], text):
            lead[position] = True
            done.add(code)
    await _follow_single_links(lead, headings, file_codes, reader)
    return lead


async def _follow_single_links(
    lead: np.ndarray, headings: Sequence[str], file_codes: np.ndarray, reader: RowReader
) -> None:
    """Move, in place, the introduction of every page whose introduction lists links to exactly
    one section of the page (a resource overview listing its only operation) to that section."""
    leads = np.flatnonzero(lead)
    if not len(leads):
        return
    codes = file_codes.tolist()
    sections: dict[tuple[int, str], int] = {}
    for position, heading in enumerate(headings):
        if slug := page_name(heading):
            sections.setdefault((codes[position], slug), position)
    for start in range(0, len(leads), _MARKDOWN_BATCH):  # the markdown of a few thousand rows at a time
        batch = leads[start : start + _MARKDOWN_BATCH].tolist()
        for position, content in zip(batch, await reader.markdown(np.asarray(batch)), strict=True):
            anchors = _IN_PAGE_LINK.findall(content)
            linked = {sections.get((codes[position], page_name(anchor))) for anchor in anchors}
            linked.discard(None)
            linked.discard(position)
            if len(linked) == 1:
                lead[position] = False
                lead[linked.pop()] = True
