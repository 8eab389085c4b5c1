"""Page openings: the start of the page whose name means what a described question asks about.

Why, for documentation in general: a guide covers one subject, and its file is named for that
subject (``prompt-caching.md``, ``Middleware.md``); it opens with what the subject is and when to
use it, before sections that each treat one detail. A reader who describes the subject in their own
words (``pay less when many of my requests start with the same long system prompt``) shares few
words with that opening: the sections below it repeat the page's vocabulary, and sections of other
pages say the question's everyday words as often. The heading-path leg (:mod:`.heading_leg`) compares
the question with the names of every page and section; a page's opening has no heading of its own,
so its vector is its page's name alone, and the nearest opening among the leg's rows is the page
whose name means what the question describes. When that opening is among the best-scored rows it is
multiplied by ``1 + weight``: a nudge between candidates the lexical legs already found, not a row
brought from nowhere.

A page's opening is its ``_preamble`` chunk (the text before its first section heading) or the one
chunk of a file chunked whole (the chunk ids' rules, :mod:`.sections`). A data type's page (a field
table, :mod:`.intent`) documents no subject, and is not raised. Only a description counts (three
content words or more and no identifier copied from code, :func:`.intent.describes`): a topic of one
or two words is the topic signal's, and a name copied from code asks for its definition.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from docs_mcp_core.search.coverage import best_rows
from docs_mcp_core.search.legs import Leg
from docs_mcp_core.search.row_catalog import opening_mask

__all__ = ["OPENING_DEPTH", "Openings"]

OPENING_DEPTH = 50  # best-scored rows the nearest opening must be among to be raised


class Openings:
    """Which rows open their page: ``stored`` (the derived files' copy), else read from the chunk
    ids once, on first use (70-95 ms at ten times sdk-docs, which a server's warm-up would spend
    before its first answer)."""

    def __init__(self, chunk_ids: Sequence[str], stored: np.ndarray | None = None) -> None:
        self._chunk_ids = chunk_ids
        self._mask: np.ndarray | None = stored

    @property
    def mask(self) -> np.ndarray:
        """Per catalog row: whether it opens its page."""
        if self._mask is None:
            self._mask = opening_mask(self._chunk_ids)
        return self._mask

    def boost(
        self, rows: np.ndarray, score: np.ndarray, heading: Leg, model: np.ndarray, weight: float
    ) -> None:
        """Multiply, in place, the opening nearest the question (the first of the ``heading`` leg's
        rows that opens a page not marked in ``model``, a data type's) by ``1 + weight`` when it is
        among the :data:`OPENING_DEPTH` best-scored ``rows``. ``rows`` are catalog positions,
        ``score`` their scores."""
        positions = heading[0]
        if not weight or not len(positions) or not len(rows) or not len(self._chunk_ids):
            return
        wanted = self.mask[positions] & ~model[positions]
        if not wanted.any():
            return
        nearest = positions[int(np.argmax(wanted))]
        top = best_rows(score, OPENING_DEPTH)
        found = top[rows[top] == nearest]
        if len(found):
            score[found[0]] *= 1.0 + weight
