"""The two providers that need nothing: ``none`` (no vectors) and ``hash`` (deterministic, offline).

``hash`` folds the UTF-8 bytes of a text into a unit vector. It has no semantic value; it exists so
that builds and tests can exercise the vector code paths offline. The algorithm is the original
docs-mcp's, bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from docs_mcp_core.embedding.provider import compute_config_fingerprint
from docs_mcp_core.errors import EmbeddingError

__all__ = ["HashEmbeddingProvider", "NoneEmbeddingProvider", "hash_to_unit_vector"]


def hash_to_unit_vector(text: str, dimensions: int) -> list[float]:
    """The ``hash`` provider's vector: UTF-8 byte ``i`` is added to bucket ``i % dimensions`` (negated
    for odd ``i``), then the vector is L2-normalised; an all-zero vector is returned as is.

    Every intermediate value is an exact integer in float64, so the result is bit-identical to the
    original's JavaScript implementation.
    """
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8).astype(np.float64)
    data[1::2] *= -1.0
    buckets = np.arange(data.size) % dimensions
    vector = np.bincount(buckets, weights=data, minlength=dimensions)
    norm = math.sqrt(float(np.dot(vector, vector)))
    if norm == 0.0:
        return vector.tolist()
    return (vector / norm).tolist()


class NoneEmbeddingProvider:
    """No embeddings: the index is lexical only and the build skips embedding entirely."""

    name = "none"
    model = "none"
    dimensions = 0
    cost_per_million_tokens = 0.0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[] for _ in texts]

    def config_fingerprint(self) -> str:
        return compute_config_fingerprint({"provider": "none", "model": "none", "dimensions": 0})


class HashEmbeddingProvider:
    """Deterministic byte-folding vectors (see :func:`hash_to_unit_vector`); offline, no semantics."""

    name = "hash"
    cost_per_million_tokens = 0.0

    def __init__(self, dimensions: int = 256, model: str = "hash-v1") -> None:
        if dimensions < 1:
            raise EmbeddingError(f"hash embedding dimensions must be a positive integer (got {dimensions})")
        self.dimensions = dimensions
        self.model = model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [hash_to_unit_vector(text, self.dimensions) for text in texts]

    def config_fingerprint(self) -> str:
        return compute_config_fingerprint(
            {"provider": "hash", "model": self.model, "dimensions": self.dimensions}
        )
