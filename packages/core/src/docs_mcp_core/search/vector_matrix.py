"""Exact nearest neighbours over an index's vectors held in memory, when they are small.

A LanceDB vector query costs about 3 ms on the SDK corpus (11k rows, 384 dimensions, IVF_FLAT
probing 20 partitions), most of it fixed overhead. The same search as one matrix-vector product
over every row costs 0.4 ms and is exact, so the engine keeps the vectors in memory as a float32
matrix when they fit :func:`vector_cache_bytes` (48 MiB unless ``DOCS_MCP_VECTOR_CACHE_MB`` says
otherwise: the SDK corpus with ``local`` embeddings needs 16 MB, with OpenAI's 1,536 dimensions
64 MB, so it stays in LanceDB; ten copies of the corpus stay in LanceDB either way). LanceDB's
index pages of those vectors are then never loaded, so memory does not grow by as much.

Ranking is LanceDB's metric for indexes built by docs-mcp and by the original: squared L2
distance, nearest first, equal distances in row order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from docs_mcp_core.index.derived_files import Part
from docs_mcp_core.memory import budget_from_env
from docs_mcp_core.search.row_catalog import scan_in_row_order, smallest_first

if TYPE_CHECKING:
    import pyarrow as pa

VECTOR_CACHE_BYTES = 48 * 1024 * 1024


def row_dots(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix @ vector``, one row at a time on this thread: each row's product is the same
    bits whichever rows are computed with it (BLAS's is not: its kernels sum a row differently
    at a block's edge), so scoring a subset of the rows gives the exact leg's values; and a loaded
    2-core machine spent 3-10 ms waking BLAS's second thread for a product of 4,000 x 384 that
    takes 0.4 ms on one."""
    return np.einsum("ij,j->i", matrix, vector)


def vector_cache_bytes() -> int:
    """The budget for in-memory vectors: ``DOCS_MCP_VECTOR_CACHE_MB`` (0 turns it off) or 48 MiB."""
    return budget_from_env("DOCS_MCP_VECTOR_CACHE_MB", VECTOR_CACHE_BYTES)


class VectorMatrix:
    """Every row's vector (row ``i`` of the matrix is catalog position ``i``) and its squared norm."""

    def __init__(self, vectors: np.ndarray, norms: np.ndarray | None = None) -> None:
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.norms = norms if norms is not None else np.einsum("ij,ij->i", self.vectors, self.vectors)

    def to_part(self) -> Part:
        """The matrix and its norms, for the derived files."""
        return Part({"vectors": self.vectors, "norms": self.norms})

    @classmethod
    def from_part(cls, part: Part) -> VectorMatrix:
        """The matrix :meth:`to_part` stored (used as it is)."""
        return cls(part.arrays["vectors"], part.arrays["norms"])

    @classmethod
    def from_column(cls, column: pa.Array | pa.ChunkedArray, dimensions: int) -> VectorMatrix | None:
        """The matrix of a fixed-size-list column; None when a row has no vector."""
        import pyarrow as pa

        array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        if array.null_count or not pa.types.is_fixed_size_list(array.type):
            return None
        values = array.flatten().to_numpy(zero_copy_only=False)
        if dimensions <= 0 or len(values) != len(array) * dimensions:
            return None
        return cls(values.reshape(len(array), dimensions))

    @classmethod
    def load(cls, table: Any, row_ids: np.ndarray, budget: int) -> VectorMatrix | None:
        """The ``vector`` column of a LanceDB ``table`` in ``row_ids`` order, or None when it is
        larger than ``budget`` bytes, missing, or the table no longer has exactly those rows."""
        import pyarrow as pa

        field = table.schema.field("vector") if "vector" in table.schema.names else None
        if field is None or not pa.types.is_fixed_size_list(field.type):
            return None
        dimensions = int(field.type.list_size)
        if len(row_ids) * dimensions * 4 > budget:
            return None
        data = scan_in_row_order(table, ["vector"])
        if not np.array_equal(data.column("_rowid").to_numpy().astype(np.uint64), row_ids):
            return None
        return cls.from_column(data.column("vector"), dimensions)

    @property
    def nbytes(self) -> int:
        return int(self.vectors.nbytes + self.norms.nbytes)

    def nearest(
        self, query: Sequence[float], *, mask: np.ndarray | None = None, limit: int = 100
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ``limit`` rows nearest ``query`` among those ``mask`` keeps: ``(positions,
        squared L2 distances)``, nearest first."""
        q = np.asarray(query, dtype=np.float32)
        if q.shape != (self.vectors.shape[1],):
            raise ValueError(f"query has {q.size} dimensions, the index {self.vectors.shape[1]}")
        distance = self.norms - 2.0 * (self.vectors @ q) + float(q @ q)
        candidates = np.flatnonzero(mask) if mask is not None else np.arange(len(distance))
        positions = smallest_first(distance[candidates], candidates, limit)
        return positions, np.maximum(distance[positions], 0.0).astype(np.float64)


__all__ = ["VECTOR_CACHE_BYTES", "VectorMatrix", "row_dots", "vector_cache_bytes"]
