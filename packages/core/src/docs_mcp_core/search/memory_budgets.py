"""How much of an index the engine keeps: what it may hold in its own memory, and what a build
writes into the derived files for a server to map.

A server that derives its parts from the table (an index built before derived files existed)
holds them in its own memory: the hit text up to :func:`~.row_catalog.display_cache_bytes`, the
markdown up to :func:`~.content_store.content_cache_bytes`, the vectors up to
:func:`~.vector_matrix.vector_cache_bytes`. A part in the derived files is mapped instead: its
pages are the page cache's, shared by every process of the host and dropped under memory
pressure, so the hit text a build writes there may be far larger
(:func:`~.row_catalog.mapped_display_bytes`): a corpus past the in-memory budget (about fifteen
times sdk-docs) then still assembles its hits without reading the table.
"""

from __future__ import annotations

from dataclasses import dataclass

from docs_mcp_core.search.content_store import content_cache_bytes
from docs_mcp_core.search.row_catalog import MAPPED_DISPLAY_BYTES, display_cache_bytes, mapped_display_bytes
from docs_mcp_core.search.vector_matrix import vector_cache_bytes

__all__ = ["Budgets", "build_budgets", "server_budgets"]


@dataclass(frozen=True)
class Budgets:
    """Bytes the engine may hold of the hit text, the chunks' markdown and the vectors, and the
    bytes of hit text it maps from the derived files."""

    display: int
    content: int
    vectors: int
    mapped_display: int = MAPPED_DISPLAY_BYTES


def server_budgets() -> Budgets:
    """What an opening engine may hold, and map, from the environment's settings."""
    return Budgets(display_cache_bytes(), content_cache_bytes(), vector_cache_bytes(), mapped_display_bytes())


def build_budgets() -> Budgets:
    """What a build writes into the derived files: the hit text up to the budget a server maps it
    within, the rest up to what a server holds."""
    mapped = mapped_display_bytes()
    return Budgets(mapped, content_cache_bytes(), vector_cache_bytes(), mapped)
