"""What a retrieval leg returns, and the filter every leg of a request applies.

A leg is a pair of arrays: the catalog positions of the rows it found, in its own order (best first),
and their raw scores (BM25) or distances (vectors). The ranking (:mod:`.ranker`) only ever sees legs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from docs_mcp_core.search.row_catalog import RowCatalog

__all__ = ["EMPTY_LEG", "LEG_ORDER", "NO_PREFILTER", "Leg", "Prefilter", "leg_from_rows"]

Leg = tuple[np.ndarray, np.ndarray]  # (catalog positions in the leg's order, raw scores or distances)
EMPTY_LEG: Leg = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64))
# the ranking sums the legs in this order
LEG_ORDER = ("match", "phrase", "vector", "spelling", "option", "heading")


@dataclass(frozen=True)
class Prefilter:
    """A request's filters as every leg applies them: the SQL prefilter for LanceDB queries, the
    share of rows it keeps (how many IVF partitions a vector query probes) and the same rule as a
    mask over the catalog's rows (for the in-memory legs; ``None`` when nothing needs it)."""

    where: str | None
    share: float
    mask: np.ndarray | None


NO_PREFILTER = Prefilter(None, 1.0, None)


def leg_from_rows(catalog: RowCatalog, rows: Any, score_column: str) -> Leg:
    """The leg of a LanceDB result (``_rowid`` and ``score_column``), in the result's order."""
    if rows.num_rows == 0:
        return EMPTY_LEG
    positions = catalog.positions(rows.column("_rowid").to_numpy())
    return positions, rows.column(score_column).to_numpy().astype(np.float64)
