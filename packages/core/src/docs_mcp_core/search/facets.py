"""Facets: how the top candidates of a search spread over the values of each taxonomy key.

An agent with a vague question ("how do I retry a request") does not know which ``language`` or
``scope`` to filter by. With ``facets``, ``search_docs`` also answers, for every taxonomy key the
search does not filter on, how many of its top :data:`FACET_DEPTH` candidates (the fused ranking
before near-identical hits are collapsed, so every language of a method counts) carry each value,
most frequent first: ``{"language": {"python": 14, "go": 11, "typescript": 9}}``; a key none of
them has a value for is left out. One filtered search later the agent is where it wanted to be.
Counting is a few NumPy operations on the row catalog's taxonomy codes.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from docs_mcp_core.ordering import sort_key
from docs_mcp_core.search.row_catalog import RowCatalog

__all__ = ["FACET_DEPTH", "facet_counts"]

FACET_DEPTH = 50  # the candidates facets are counted over


def facet_counts(
    catalog: RowCatalog, positions: np.ndarray, keys: Iterable[str]
) -> dict[str, dict[str, int]]:
    """Per key, ``value -> candidates`` among the first :data:`FACET_DEPTH` catalog ``positions``
    (in ranking order), most frequent first and then in the project's string order. Candidates
    without a value for a key are not counted; a key no candidate has a value for is left out (an
    empty count offers the agent no filter to pick, and costs it tokens)."""
    top = np.asarray(positions[:FACET_DEPTH], dtype=np.int64)
    counted: dict[str, dict[str, int]] = {}
    for key in keys:
        entry = catalog.taxonomy.get(key)
        if entry is None:
            continue
        codes, values = entry
        present = codes[top]
        present = present[present >= 0]
        counts = np.bincount(present, minlength=len(values)) if len(present) else np.zeros(0, np.int64)
        found = [int(i) for i in np.flatnonzero(counts)]
        found.sort(key=lambda i: (-int(counts[i]), sort_key(values[i])))
        if found:
            counted[key] = {values[i]: int(counts[i]) for i in found}
    return counted
