"""Result snippets: a window of the chunk's text around the best cluster of query terms.

The snippet is defined on the chunk's text with its whitespace collapsed (``" ".join(text.split())``),
but a chunk far longer than its matches need (a generated README, a JSON dump) is not collapsed whole:
the terms are found in the raw text, the distances between neighbouring matches are measured in
collapsed characters up to a cap, and only the raw text around the chosen match is collapsed. A
snippet of a 100 kB chunk so costs a lower-casing and a few ``find`` calls over its text, not a
collapsed copy of it; every step stays linear in its length.
"""

from __future__ import annotations

from collections.abc import Sequence

SNIPPET_LENGTH = 220
_LEAD = 60
_MAX_MATCHES = 50  # per term
# the raw-text path measures the distance between each two neighbouring matches, which costs about as
# much as collapsing 200 characters: a text is collapsed whole unless it is longer than that for
# every match its terms can have (and than 2 kB)
_CHARS_PER_MATCH = 200
_SHORT = 2048


def make_snippet(text: str, terms: Sequence[str], length: int = SNIPPET_LENGTH) -> str:
    """A window of ``text`` (original casing, whitespace collapsed) of about ``length`` characters
    that contains as many distinct ``terms`` as possible, with ``...`` where it was cut.

    ``terms`` are lower-case: a query's :attr:`~docs_mcp_core.search.query.Query.key_terms`.
    """
    if (
        len(text) > max(_SHORT, _CHARS_PER_MATCH * _MAX_MATCHES * len(terms))
        and length > _LEAD
        and all(0 < len(t) <= length - _LEAD and t.split() == [t] for t in terms)
    ):
        lower = text.lower()
        # the raw text's matches are the collapsed text's when lower-casing keeps every position
        # (no character grows; a capital sigma's form depends on its neighbours)
        if len(lower) == len(text) and "\u03a3" not in text:
            return _raw_snippet(text, lower, terms, length)
    return _collapsed_snippet(text, terms, length)


def _collapsed_snippet(text: str, terms: Sequence[str], length: int) -> str:
    """The snippet made on the whole collapsed text (the definition; short or unusual texts)."""
    normal = " ".join(text.split())  # the same as collapsing r"\s+" and stripping, several times faster
    if len(normal) <= length:
        return normal
    lower = normal.lower()
    positions = _matches(lower, terms)
    anchor = positions[_best(positions, length)][0] if positions else 0
    return _window(normal, anchor, True, True, length)


def _matches(lower: str, terms: Sequence[str]) -> list[tuple[int, str]]:
    """The first matches of each term in ``lower``, sorted."""
    positions: list[tuple[int, str]] = []
    for term in terms:
        start = 0
        for _ in range(_MAX_MATCHES):
            i = lower.find(term, start)
            if i < 0:
                break
            positions.append((i, term))
            start = i + len(term)
    positions.sort()
    return positions


def _best(positions: list[tuple[int, str]], length: int) -> int:
    """Slide a window over the sorted matches; the index of the first match of the window that covers
    the most distinct terms."""
    best_count, best, lo = -1, 0, 0
    counts: dict[str, int] = {}
    for at, (pos, term) in enumerate(positions):
        counts[term] = counts.get(term, 0) + 1
        # a term longer than the window keeps its own match: the window starts there
        while lo < at and positions[lo][0] < pos + len(term) - length + _LEAD:
            old = positions[lo][1]
            counts[old] -= 1
            if not counts[old]:
                del counts[old]
            lo += 1
        if len(counts) > best_count:
            best_count, best = len(counts), lo
    return best


def _window(normal: str, anchor: int, at_start: bool, at_end: bool, length: int) -> str:
    """The snippet around ``anchor`` in ``normal``: the collapsed text, or a stretch of it that
    starts at the text's start when ``at_start`` and ends at its end when ``at_end`` (and otherwise
    reaches far enough past the window for every decision below)."""
    start = max(0, anchor - _LEAD) if at_start else anchor - _LEAD
    end = min(len(normal), start + length) if at_end else start + length
    if at_end and end == len(normal):
        start = max(0, end - length) if at_start else end - length
    cut_start = start > 0 or not at_start
    cut_end = end < len(normal) or not at_end
    # do not cut words in half
    if cut_start:
        space = normal.find(" ", start, start + 20)
        if space != -1:
            start = space + 1
    if cut_end:
        space = normal.rfind(" ", end - 20, end)
        if space != -1:
            end = space
    return ("..." if cut_start else "") + normal[start:end].strip() + ("..." if cut_end else "")


def _raw_snippet(text: str, lower: str, terms: Sequence[str], length: int) -> str:
    """:func:`_collapsed_snippet` without collapsing the whole text. No term holds whitespace, so the
    raw matches are the collapsed text's, in the same order; the window only compares distances below
    ``length``, so the distances between neighbouring matches are measured up to a cap."""
    found = _matches(lower, terms)
    if found:
        cap = 2 * length
        relative: list[tuple[int, str]] = []
        at, prev = 0, found[0][0]
        for raw, term in found:
            if raw != prev:
                at += _collapsed_length(text, prev, raw, cap)
                prev = raw
            relative.append((at, term))
        anchor = found[_best(relative, length)][0]
    else:
        anchor = len(text) - len(text.lstrip())  # the collapsed text's first character
        if anchor == len(text):
            return ""
    before, at_start = _collapsed_before(text, anchor, _LEAD + length + 40)
    after, at_end = _collapsed_after(text, anchor, length + 40)
    if at_start and at_end and len(before) + len(after) <= length:
        return before + after
    return _window(before + after, len(before), at_start, at_end, length)


def _collapsed_length(text: str, start: int, end: int, cap: int) -> int:
    """The collapsed length of ``text[start:end]`` (which starts with a word and ends before one), or
    ``cap`` when it is at least that."""
    if end - start <= cap:
        part = text[start:end]
        return len(" ".join(part.split())) + part[-1].isspace()
    words = text[start:end].split(None, cap)
    if len(words) > cap:
        return cap
    return min(cap, len(" ".join(words)) + text[end - 1].isspace())


def _collapsed_before(text: str, end: int, need: int) -> tuple[str, bool]:
    """The collapsed text before ``text[end]`` (a word's character), with the space that parts them,
    or its last ``need`` characters and more; and whether that is all of it."""
    size = 4 * need
    while True:
        start = max(0, end - size)
        part = " ".join(text[start:end].split())
        if part and text[end - 1].isspace():
            part += " "
        if start == 0:
            return part, True
        if len(part) > need:
            # the stretch's first characters may be a word's last or stand for a longer run of
            # whitespace: drop them, the rest is the collapsed text's end
            return part[-need:], False
        size *= 2


def _collapsed_after(text: str, start: int, need: int) -> tuple[str, bool]:
    """The collapsed text from ``text[start]`` (a word's character) on, or its first ``need``
    characters and more; and whether that is all of it."""
    size = 4 * need
    while True:
        end = min(len(text), start + size)
        part = " ".join(text[start:end].split())
        if end == len(text):
            return part, True
        if len(part) > need:
            return part[:need], False
        size *= 2
