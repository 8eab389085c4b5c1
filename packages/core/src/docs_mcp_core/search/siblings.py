"""Sibling sections: which of a page's sections the question means, told by their names.

Why, for documentation in general: the sections of one page share the page's vocabulary (the
resource's name, the same client set-up in every code example, the same parameter tables), so the
lexical legs score them nearly alike, and an operation's section in a generated reference is little
more than those shared words. What tells siblings apart is what their authors named them: the
headings. The heading-path leg (:mod:`.heading_leg`) compares the question with exactly those names;
among the best candidates of one page, the section whose heading path is nearest the question is
multiplied by ``1 + weight``.

The weight is small (0.05: a nudge between siblings that score alike, not a vote against a
section that matches clearly better); only rows the heading leg returned can gain, and a page with
one candidate among the best is left alone. An index without heading vectors ranks without it.
"""

from __future__ import annotations

import numpy as np

from docs_mcp_core.search.coverage import best_rows
from docs_mcp_core.search.legs import Leg

__all__ = ["SIBLING_DEPTH", "sibling_boost"]

SIBLING_DEPTH = 50  # best-scored rows among which siblings are compared


def sibling_boost(
    rows: np.ndarray,
    score: np.ndarray,
    heading: Leg,
    file_codes: np.ndarray,
    weight: float,
    depth: int = SIBLING_DEPTH,
) -> None:
    """Multiply, in place, the section nearest the question (the ``heading`` leg's similarity) among
    the ``depth`` best-scored ``rows`` of each page (``file_codes``, by catalog position) that has two
    of them or more, by ``1 + weight``. ``rows`` are catalog positions, ``score`` their scores."""
    positions, similarity = heading
    if not weight or not len(positions) or len(rows) < 2:
        return
    top = best_rows(score, depth)
    order = np.argsort(positions, kind="stable")
    sorted_positions = positions[order]
    at = np.minimum(np.searchsorted(sorted_positions, rows[top]), len(sorted_positions) - 1)
    found = sorted_positions[at] == rows[top]
    near = np.where(found, similarity[order][at], -np.inf)
    _, page, count = np.unique(file_codes[rows[top]], return_inverse=True, return_counts=True)
    best = np.full(len(count), -np.inf)
    np.maximum.at(best, page, near)
    chosen = found & (count[page] >= 2) & (near == best[page])
    score[top[chosen]] *= 1.0 + weight
