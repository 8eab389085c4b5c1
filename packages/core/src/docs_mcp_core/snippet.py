"""Result snippets: a window of the chunk's text around the best cluster of query terms."""

from __future__ import annotations

import re

from docs_mcp_core.ranking import STOP_WORDS

SNIPPET_LENGTH = 220
_LEAD = 60
_TERM_RE = re.compile(r"[a-z0-9]+")


def query_terms(query: str) -> list[str]:
    seen: dict[str, None] = {}
    for term in _TERM_RE.findall(query.lower()):
        seen.setdefault(term, None)
    return list(seen)


def make_snippet(text: str, query: str, length: int = SNIPPET_LENGTH) -> str:
    """A window of ``text`` (original casing, whitespace collapsed) of about ``length`` characters
    that contains as many distinct query terms as possible, with ``...`` where it was cut."""
    normal = " ".join(text.split())  # the same as collapsing r"\s+" and stripping, several times faster
    if len(normal) <= length:
        return normal
    lower = normal.lower()
    every = query_terms(query)
    # the words that say what is wanted; stop words and single letters only when nothing else is left
    terms = (
        [t for t in every if len(t) > 1 and t not in STOP_WORDS] or [t for t in every if len(t) > 1] or every
    )
    positions: list[tuple[int, str]] = []
    for term in terms:
        start = 0
        for _ in range(50):
            i = lower.find(term, start)
            if i < 0:
                break
            positions.append((i, term))
            start = i + len(term)
    anchor = 0
    if positions:
        # slide a window over the sorted matches; keep the one covering the most distinct terms
        positions.sort()
        best_count, lo = -1, 0
        counts: dict[str, int] = {}
        for pos, term in positions:
            counts[term] = counts.get(term, 0) + 1
            while positions[lo][0] < pos + len(term) - length + _LEAD:
                old = positions[lo][1]
                counts[old] -= 1
                if not counts[old]:
                    del counts[old]
                lo += 1
            if len(counts) > best_count:
                best_count, anchor = len(counts), positions[lo][0]
    start = max(0, anchor - _LEAD)
    end = min(len(normal), start + length)
    if end == len(normal):
        start = max(0, end - length)
    # do not cut words in half
    if start > 0:
        space = normal.find(" ", start, start + 20)
        if space != -1:
            start = space + 1
    if end < len(normal):
        space = normal.rfind(" ", end - 20, end)
        if space != -1:
            end = space
    return ("..." if start > 0 else "") + normal[start:end].strip() + ("..." if end < len(normal) else "")
