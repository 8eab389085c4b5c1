"""Sections that the pages of a folder share nearly word for word: blocks that answer no question
about any one page.

Generated references repeat blocks on every page of a kind: a command-line tool's pages carry the
same option groups (``Display Options``, ``Manifest Options``, ``Common Options``), the same
``ENVIRONMENT`` and ``EXIT STATUS`` paragraphs; an API reference repeats its error tables. Each copy
matches a question in the reader's own words as well as the others (``why does it keep compiling``
meets every ``Compilation Options`` block), and whichever page it is on, the copy answers that
question less well than the one section that is about it.

A section is **shared** when its heading is the heading of sections in at least :data:`MIN_FILES`
files of its folder and at least :data:`SHARED_WORDS` of its distinct words are words of at least
half of those sections. The pages' introductions are never shared. The intent signals treat shared
sections as they treat a data type's fields (:mod:`.intent`): damped for an action or a
description, never a topic's introduction; a query that names the option or the command finds
the block by its ids and its page's name as before.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from docs_mcp_core.search.rows import RowReader

__all__ = ["MIN_FILES", "SHARED_WORDS", "shared_sections"]

MIN_FILES = 5  # files of one folder with a section of the same heading
SHARED_WORDS = 0.8  # of a section's distinct words, the share that half of its namesakes also hold
_WORD_RE = re.compile(r"[a-z0-9]+")


async def shared_sections(
    file_codes: np.ndarray,
    filepaths: Sequence[str],
    headings: Sequence[str],
    lead: np.ndarray,
    reader: RowReader,
) -> np.ndarray:
    """Whether each row (in catalog order) is a section its folder's pages share (see above)."""
    groups: defaultdict[tuple[str, str], list[int]] = defaultdict(list)
    for position, (path, heading) in enumerate(zip(filepaths, headings, strict=True)):
        name = heading.strip().lower()
        if name and not lead[position]:
            groups[(path.rsplit("/", 1)[0] if "/" in path else "", name)].append(position)
    shared = np.zeros(len(file_codes), dtype=bool)
    candidates = [rows for rows in groups.values() if len({int(file_codes[r]) for r in rows}) >= MIN_FILES]
    if not candidates:
        return shared
    positions = np.asarray(sorted(p for rows in candidates for p in rows), dtype=np.int64)
    (texts,) = await reader.values(positions, (reader.text_column,))
    words = {int(p): set(_WORD_RE.findall(str(t).lower())) for p, t in zip(positions, texts, strict=True)}
    for rows in candidates:
        counts = Counter(w for r in rows for w in words[r])
        common = {w for w, n in counts.items() if 2 * n >= len(rows)}
        for r in rows:
            own = words[r]
            if own and len(own & common) >= SHARED_WORDS * len(own):
                shared[r] = True
    return shared
