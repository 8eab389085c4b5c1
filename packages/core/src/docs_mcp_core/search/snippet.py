"""Result snippets: a window of the chunk's text around the best cluster of query terms."""

from __future__ import annotations

from collections.abc import Sequence

SNIPPET_LENGTH = 220
_LEAD = 60


def make_snippet(text: str, terms: Sequence[str], length: int = SNIPPET_LENGTH) -> str:
    """A window of ``text`` (original casing, whitespace collapsed) of about ``length`` characters
    that contains as many distinct ``terms`` as possible, with ``...`` where it was cut.

    ``terms`` are lower-case: a query's :attr:`~docs_mcp_core.search.query.Query.key_terms`.
    """
    normal = " ".join(text.split())  # the same as collapsing r"\s+" and stripping, several times faster
    if len(normal) <= length:
        return normal
    lower = normal.lower()
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
