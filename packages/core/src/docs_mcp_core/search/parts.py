"""Parts of a split section: the part that opens a section before the parts that continue it.

Why, for documentation in general: the build splits a section longer than the chunk size into
parts (``create/parameters``, ``create/parameters-part-2``, ...). The first part opens the section:
its heading's sentence, what the section is for, the start of its table or example. A later part
continues a table, a list or code that repeats the section's words (every parameter of an
operation, every option of a command), so it matches a question about the section as well as the
first part does, and often better (more of the same names). When a later part and the first part
of its section are both among the best rows, the reader is better served from the section's start:
the later part is multiplied by ``1 / (1 + weight)``. A later part whose first part is not among
them keeps its score (it is what matched), and so does one the option leg named (a command's option
defined in that part: the query names what it holds).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from docs_mcp_core.search.coverage import best_chunk_ids
from docs_mcp_core.search.legs import Leg
from docs_mcp_core.search.row_catalog import members

__all__ = ["PART_DEPTH", "damp_later_parts", "first_part", "part_factors"]

PART_DEPTH = 50  # best-scored rows among which parts of one section are compared
_PART_RE = re.compile(r"-part-(\d+)$")  # the chunk id of a section's later part (chunking._chunk_id)


def first_part(chunk_id: str) -> str | None:
    """The chunk id of the first part of the section whose later part ``chunk_id`` is, else None
    (``links.md#links/create/parameters-part-2`` → ``links.md#links/create/parameters``)."""
    m = _PART_RE.search(chunk_id)
    return chunk_id[: m.start()] if m and int(m.group(1)) >= 2 else None


def part_factors(chunk_ids: Sequence[str], keep: np.ndarray, weight: float) -> np.ndarray:
    """Per row of ``chunk_ids`` (the best rows): ``1 / (1 + weight)`` for a later part whose
    section's first part is among them, unless ``keep`` marks it; else 1."""
    present = set(chunk_ids)
    factors = np.ones(len(chunk_ids), dtype=np.float64)
    for i, chunk_id in enumerate(chunk_ids):
        first = first_part(chunk_id)
        if first is not None and first in present and not keep[i]:
            factors[i] = 1.0 / (1.0 + weight)
    return factors


def damp_later_parts(
    rows: np.ndarray, score: np.ndarray, chunk_ids: Sequence[str], option: Leg | None, weight: float
) -> None:
    """Multiply ``score`` (of catalog positions ``rows``) in place by :func:`part_factors` of the
    :data:`PART_DEPTH` best rows; the rows of the ``option`` leg keep their scores."""
    top, ids = best_chunk_ids(rows, score, chunk_ids, PART_DEPTH)
    keep = members(rows[top], option[0]) if option is not None else np.zeros(len(top), bool)
    score[top] *= part_factors(ids, keep, weight)
