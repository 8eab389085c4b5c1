"""What every embedding provider is and shares: the protocol, progress reports, fingerprints.

A provider turns texts into vectors (:meth:`EmbeddingProvider.embed`) and names the configuration
that produced them (:meth:`EmbeddingProvider.config_fingerprint`): the embedding cache is keyed by
it, so it changes whenever the vectors for the same text could change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from docs_mcp_core.ordering import sort_key

__all__ = [
    "EmbedProgress",
    "EmbeddingProvider",
    "ProgressCallback",
    "WarningCallback",
    "compute_config_fingerprint",
    "format_duration",
    "sha256hex",
    "source_of",
    "to_embedding_input",
]


def sha256hex(text: str) -> str:
    """Hex SHA-256 of the UTF-8 encoding of ``text``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def compute_config_fingerprint(fields: Mapping[str, str | int]) -> str:
    """SHA-256 over the ``key=value`` pairs sorted by key, joined with NUL.

    Keys sort in the order the original's ``localeCompare`` gives (:func:`sort_key`), so
    fingerprints, and therefore caches, are interchangeable.
    """
    keys = sorted(fields, key=sort_key)
    return sha256hex("\0".join(f"{k}={fields[k]}" for k in keys))


def to_embedding_input(breadcrumb: str, content_text: str) -> str:
    """The exact text sent to an embedding model for one chunk (also what the cache keys on)."""
    return f"Context: {breadcrumb}\n\nContent:\n{content_text}"


def source_of(text: str) -> str:
    """The breadcrumb of an embedding input built by :func:`to_embedding_input`, for warnings."""
    if text.startswith("Context: "):
        line = text[len("Context: ") :].split("\n", 1)[0]
        if line:
            return line
    return "unknown"


def format_duration(seconds: float) -> str:
    """``42s``, ``3m`` or ``3m5s``, as the original prints batch ETAs."""
    total = round(seconds)
    if total < 60:
        return f"{total}s"
    minutes, secs = divmod(total, 60)
    return f"{minutes}m{secs}s" if secs else f"{minutes}m"


@dataclass(frozen=True)
class EmbedProgress:
    """A progress report from a provider or from :func:`docs_mcp_core.embedding.cache.embed_with_cache`.

    ``done``/``total`` count inputs. In the ``batch-polling`` phase they are the Batch API's
    completed/total request counts, ``eta_seconds`` is set once a completion rate can be measured,
    and ``message`` is a ready-to-print status line.
    """

    phase: Literal["embedding", "batch-uploading", "batch-polling", "batch-downloading"]
    done: int
    total: int
    cached: int = 0
    failed: int = 0
    message: str = ""
    elapsed_seconds: float | None = None
    next_poll_seconds: float | None = None
    eta_seconds: float | None = None


ProgressCallback = Callable[[EmbedProgress], None]
WarningCallback = Callable[[str], None]


@runtime_checkable
class EmbeddingProvider(Protocol):
    """What the build, the cache and the search engine need from an embedding backend."""

    name: str
    model: str
    dimensions: int
    cost_per_million_tokens: float

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in input order. Thread-safe. Raises :class:`EmbeddingError`."""
        ...

    def config_fingerprint(self) -> str:
        """Changes whenever the vectors this provider returns for the same text could change."""
        ...
