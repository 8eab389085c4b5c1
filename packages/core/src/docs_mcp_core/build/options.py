"""What a build is asked to do (:class:`BuildOptions`), how it reports, and what it answers.

The options are grouped by concern: the embedding provider and its cache
(:class:`EmbeddingOptions`), the texts the server will show (:class:`ToolTexts`), and the build
itself (folders, caches, workers). ``docs-mcp build``'s flags map onto them one to one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

__all__ = ["BuildOptions", "BuildReporter", "BuildSummary", "EmbeddingOptions", "SilentReporter", "ToolTexts"]


@dataclass(frozen=True)
class EmbeddingOptions:
    """The embedding provider of a build (``none``: a lexical index) and where its cache lives.

    ``None`` leaves a setting to the provider's default (see :mod:`docs_mcp_core.embedding`).
    """

    provider: str = "none"  # none, hash, local or openai
    model: str | None = None
    dimensions: int | None = None
    api_key: str | None = None  # openai: else OPENAI_API_KEY
    base_url: str | None = None  # an OpenAI-compatible API
    batch_size: int | None = None  # inputs per request
    concurrency: int | None = None  # requests in flight
    max_retries: int | None = None  # on 429, 5xx, timeouts
    batch_api_threshold: int | None = None  # misses from which the Batch API is used (0: never)
    cache_dir: Path | None = None  # parent folder of .embedding-cache/ (default: the output folder)


@dataclass(frozen=True)
class ToolTexts:
    """What ``metadata.json`` tells the server to say (``None``: the defaults, or the manifests')."""

    search_docs: str | None = None  # the search_docs tool's description
    get_doc: str | None = None  # the get_doc tool's description
    server_instructions: str | None = None  # default: from the manifests


@dataclass
class BuildOptions:
    docs_dir: Path
    out_dir: Path | str  # a folder, or an object-store URI (s3://bucket/prefix)
    description: str = "Documentation corpus"
    embedding: EmbeddingOptions = field(default_factory=EmbeddingOptions)
    tools: ToolTexts = field(default_factory=ToolTexts)
    rebuild_cache: bool = False  # ignore the previous build's chunks and the embedding cache
    heading_vectors: bool = (
        False  # embed each section's heading path with the local model (search/heading_leg.py)
    )
    workers: int | None = None  # chunking processes
    indexed_at: str | None = None  # fixed timestamp, for reproducible builds in tests
    storage_options: dict[str, str] | None = None  # object-store settings over the AWS_* variables
    follow_external_symlinks: bool = False  # index files that links lead to outside docs_dir
    wait_for_lock: bool = False  # another build holds the output's lock: wait for it instead of failing
    generation_retention_seconds: float = 600.0  # object stores: keep replaced generations this long


class BuildReporter(Protocol):
    """Receives progress from a build; the CLI renders it. A subclass inherits methods that do
    nothing; any object with these three methods will do."""

    def step(self, message: str) -> None:
        """A step of the build begins (one line, e.g. ``validating and chunking the corpus``)."""
        return None

    def progress(self, phase: str, done: int, total: int) -> None:
        """``done`` of ``total`` items of ``phase`` (``chunking``, ``embedding``) are finished."""
        return None

    def warn(self, message: str) -> None:
        """Something the user should know; the build goes on. ``message`` is the whole line to show:
        ``path:line: warning: text`` for a problem in a file of the corpus (as ``docs-mcp validate``
        prints it), ``warning: text`` otherwise."""
        return None


class SilentReporter(BuildReporter):
    """A reporter that reports nothing (a build's default)."""


@dataclass
class BuildSummary:
    out_dir: Path | str
    files: int
    chunks: int
    cached_files: int
    seconds: float
    index_bytes: int
    embedding_hits: int = 0
    embedding_misses: int = 0
    warnings: list[str] = field(default_factory=list)  # the lines given to BuildReporter.warn
