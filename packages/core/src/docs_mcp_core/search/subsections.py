"""Subsections of an operation: the operation's own section before the subsections under it.

Why, for documentation in general: a generated reference documents an operation in one section,
headed by its name (``sendReply``, ``complete``), and its example usage, parameters, responses and
errors in subsections under it (``sendReply/example-usage-resolve``, ``complete/parameters``). The
subsections repeat the operation's words (its parameters' names, the SDK's set-up in every
example), so they match a question about the operation as well as its section does, and a short
one often better. When a row and an operation section it sits under are both among the best rows,
the reader who asks what the operation does is better served from the operation's section: the
subsection is multiplied by ``1 / (1 + weight)``. A subsection whose operation is not among them
keeps its score (it is what matched), and a guide's subsections, under prose headings
(``Deployment``, ``Environment variables``), are topics of their own and are left alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from docs_mcp_core.search.coverage import best_rows
from docs_mcp_core.search.rows import RowReader

__all__ = ["SUBSECTION_DEPTH", "ancestors", "damp_subsections", "is_operation_heading", "subsection_factors"]

SUBSECTION_DEPTH = 50  # best-scored rows among which subsections and their operations are compared


def ancestors(chunk_id: str) -> list[str]:
    """The chunk ids of the sections ``chunk_id`` sits under, nearest first
    (``sdks/agents/README.md#agents/sendreply/example-usage`` → ``...#agents/sendreply``,
    ``...#agents``); none for a page's preamble or a section without a heading path."""
    page, mark, path = chunk_id.partition("#")
    if not mark:
        return []
    parts = path.split("/")
    return [f"{page}#{'/'.join(parts[:k])}" for k in range(len(parts) - 1, 0, -1)]


def is_operation_heading(heading: str) -> bool:
    """Whether a section's own heading is an operation's name: one word that starts in lower case
    (``delete``, ``sendReply``, ``create_many``), not prose or a title (``Usage``, ``Deployment``)."""
    text = heading.strip()
    return bool(text) and text[:1].islower() and " " not in text


async def subsection_factors(
    reader: RowReader, positions: np.ndarray, chunk_ids: Sequence[str], weight: float
) -> np.ndarray:
    """Per row at ``positions`` (the best rows, whose chunk ids are ``chunk_ids``): ``1 / (1 +
    weight)`` for a row under a section among them whose own heading is an operation's name; else 1."""
    factors = np.ones(len(chunk_ids), dtype=np.float64)
    at = {chunk_id: i for i, chunk_id in enumerate(chunk_ids)}
    under = {i: [at[a] for a in ancestors(chunk_id) if a in at] for i, chunk_id in enumerate(chunk_ids)}
    under = {i: found for i, found in under.items() if found}
    if not under:
        return factors
    parents = sorted({j for found in under.values() for j in found})
    (heads,) = await reader.values(positions[parents], ("heading",))
    operations = {j for j, head in zip(parents, heads, strict=True) if is_operation_heading(head)}
    for i, found in under.items():
        if operations.intersection(found):
            factors[i] = 1.0 / (1.0 + weight)
    return factors


async def damp_subsections(
    reader: RowReader, rows: np.ndarray, score: np.ndarray, chunk_ids: Sequence[str], weight: float
) -> None:
    """Multiply, in place, the scores of the :data:`SUBSECTION_DEPTH` best of ``rows`` (catalog
    positions; ``chunk_ids`` is the catalog's) by their :func:`subsection_factors`."""
    top = best_rows(score, SUBSECTION_DEPTH)
    ids = [chunk_ids[int(p)] for p in rows[top].tolist()]
    score[top] *= await subsection_factors(reader, rows[top], ids, weight)
