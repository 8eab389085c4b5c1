"""A build's embedding step: the provider, its preflight, and vectors through the embedding cache.

The provider is created and checked before the build writes anything (:func:`create_build_provider`):
a missing key fails at once, a bad key, an unknown model or a dimension mismatch on one tiny request.
When an embedding cache written for this exact configuration exists, that request waits until some
chunk actually misses the cache, so a rebuild with nothing new calls no API at all. The chunks then
come, a write batch at a time, to :class:`BatchEmbedder`, which sends only cache misses to the
provider (or every miss of the corpus at once when the provider would use its Batch API).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

from docs_mcp_core.build.options import BuildReporter, EmbeddingOptions
from docs_mcp_core.chunk_stream import ChunkSpill
from docs_mcp_core.chunking import Chunk, embedding_input
from docs_mcp_core.embedding import (
    EmbeddingProvider,
    check_embedding_provider,
    create_embedding_provider,
    format_duration,
)
from docs_mcp_core.embedding.cache import (
    CACHE_DIRNAME,
    CACHE_META_FILE,
    CACHE_VERSION,
    EMBEDDING_FORMAT_VERSION,
    CacheLoadResult,
    EmbedOutcome,
    Vector,
    embed_with_cache,
    embedding_fingerprint,
    format_cache_summary,
    format_embed_summary,
    load_embedding_cache,
    save_embedding_cache,
)

__all__ = ["BatchEmbedder", "create_build_provider", "preflight"]


def create_build_provider(
    options: EmbeddingOptions,
    cache_parent: Path | None,
    rebuild_cache: bool,
    rep: BuildReporter,
    warn: Callable[[str], None],
) -> tuple[EmbeddingProvider | None, bool]:
    """The embedding provider (``None`` for ``none``) and whether its preflight is still pending.

    A missing key fails here; a bad key, an unknown model or a dimension mismatch fail on one tiny
    request. When an embedding cache written for this exact configuration exists, that request
    waits until some chunk actually misses the cache (see :class:`BatchEmbedder`), so a rebuild
    with nothing new calls no API at all.
    """
    if options.provider.strip().lower() == "none":
        return None, False
    extra: dict[str, Any] = {}
    if options.batch_api_threshold is not None:
        extra["batch_api_threshold"] = options.batch_api_threshold
    provider = create_embedding_provider(
        options.provider,
        model=options.model,
        dimensions=options.dimensions,
        api_key=options.api_key,
        base_url=options.base_url,
        batch_size=options.batch_size,
        concurrency=options.concurrency,
        max_retries=options.max_retries,
        on_warning=warn,
        **extra,
    )
    if (
        cache_parent is not None
        and not rebuild_cache
        and _embedding_cache_matches(cache_parent, provider.config_fingerprint())
    ):
        return provider, True
    preflight(provider, rep)
    return provider, False


class BatchEmbedder:
    """Vectors for the chunks of one write batch at a time, through the embedding cache.

    Only cache misses reach the provider; an input already embedded earlier in this build is not
    sent again. Providers with a Batch API threshold get every miss of the corpus in one call
    instead (:meth:`whole_corpus_vectors`), so a large job still goes through the Batch API. With
    a pending preflight the provider is checked before the first miss (a fully cached rebuild
    makes no request at all).
    """

    def __init__(
        self,
        provider: EmbeddingProvider,
        cache_parent: Path | None,
        rep: BuildReporter,
        warn: Callable[[str], None],
        *,
        rebuild_cache: bool,
        preflight: bool,
    ) -> None:
        self.provider = provider
        self.rep = rep
        self.warn = warn
        self.preflight = preflight
        self.cache_parent = cache_parent
        self.config = provider.config_fingerprint()
        self.cache = CacheLoadResult()
        if cache_parent is not None and not rebuild_cache:
            self.cache = load_embedding_cache(cache_parent, self.config)
            for w in self.cache.warnings:
                warn(w)
        self.fresh: dict[str, Any] = {}  # fingerprint -> float32 vector embedded by this build
        self.entries: dict[str, tuple[str, Any]] = {}  # what the cache will hold after this build
        self.hits = self.misses = self.done = self.embedded_inputs = 0
        self.seconds = 0.0
        self.announced = False
        self.reported = -1  # the last ``done`` reported: each count is reported once

    def _announce(self, total: int) -> None:
        if not self.announced:
            self.announced = True
            self.rep.step(f"embedding {total:,} chunks with {self.provider.name}/{self.provider.model}")

    def whole_corpus_vectors(self, spill: ChunkSpill, total: int) -> dict[str, Vector] | None:
        """Every vector at once when the provider would use its Batch API for this corpus, else ``None``."""
        threshold = getattr(self.provider, "batch_api_threshold", 0)
        if not (isinstance(threshold, int) and 0 < threshold <= total):
            return None
        items = [(c.chunk_id, embedding_input(c)) for batch in spill.batches() for c in batch]
        return self._embed(items, total)

    def vectors(self, chunks: Sequence[Chunk], total: int) -> dict[str, Vector]:
        return self._embed([(c.chunk_id, embedding_input(c)) for c in chunks], total)

    def _embed(self, items: list[tuple[str, str]], total: int) -> dict[str, Vector]:
        self._announce(total)
        started = time.perf_counter()
        vectors: dict[str, Vector] = {}
        rest: list[tuple[str, str]] = []
        dims = self.provider.dimensions
        cached = self.cache.entries
        for chunk_id, text in items:
            fp = embedding_fingerprint(self.config, text)
            vector = self.fresh.get(fp)
            if vector is not None:  # same input as an earlier miss of this build: a miss, embedded once
                vectors[chunk_id] = vector
                self.misses += 1
                self.entries.setdefault(fp, (chunk_id, vector))
            else:
                rest.append((chunk_id, text))
                hit = cached.get(fp)
                if self.preflight and (hit is None or len(hit) != dims):
                    self.preflight = False
                    preflight(self.provider, self.rep)

        def progress(p: Any) -> None:
            self._progress(self.done + getattr(p, "done", 0), total, time.perf_counter() - started)

        outcome = embed_with_cache(self.provider, rest, self.cache, on_progress=progress)
        self.hits += outcome.hits
        self.misses += outcome.misses
        self.embedded_inputs += outcome.embedded_inputs
        for fp, (chunk_id, vector) in outcome.entries.items():
            row = np.asarray(vector, dtype=np.float32)
            if fp not in cached:
                self.fresh[fp] = row
            self.entries.setdefault(fp, (chunk_id, row))
        vectors.update(outcome.vectors)
        self.done += len(items)
        self._progress(self.done, total, time.perf_counter() - started)
        self.seconds += time.perf_counter() - started
        return vectors

    def _progress(self, done: int, total: int, batch_seconds: float) -> None:
        """Report ``done`` of ``total``, with an ETA from this build's embedding rate so far.

        The provider's own progress ends at the batch's last input, which the batch's end reports
        again: a count already reported is not repeated.
        """
        if done == self.reported:
            return
        self.reported = done
        elapsed = self.seconds + batch_seconds
        phase = "embedding"
        if 0 < done < total and elapsed >= 1.0:
            phase = f"embedding (ETA {format_duration((total - done) * elapsed / done)})"
        self.rep.progress(phase, done, total)

    def finish(self) -> tuple[int, int]:
        """Report the cache summary, save the cache; returns ``(hits, misses)``."""
        outcome = EmbedOutcome(
            vectors={},
            hits=self.hits,
            misses=self.misses,
            entries={},
            elapsed_seconds=self.seconds,
            provider_name=self.provider.name,
            embedded_inputs=self.embedded_inputs,
        )
        self.rep.step(format_cache_summary(outcome))
        summary = format_embed_summary(outcome)
        if summary:
            self.rep.step(summary)
        if self.cache_parent is not None:
            # float32 rows; the cache writer only needs sequences numpy can stack
            entries = cast("Mapping[str, tuple[str, Vector]]", self.entries)
            failure = save_embedding_cache(self.cache_parent, self.config, entries)
            if failure:
                self.warn(failure)
        self.entries = {}
        self.fresh = {}
        self.cache.entries = {}
        return self.hits, self.misses


def preflight(provider: EmbeddingProvider, rep: BuildReporter) -> None:
    """Check the provider with one tiny request (see :func:`check_embedding_provider`)."""
    rep.step(f"checking embedding provider {provider.name}/{provider.model}")
    check_embedding_provider(provider)


def _embedding_cache_matches(cache_parent: Path, config_fingerprint: str) -> bool:
    """Whether ``<cache_parent>/.embedding-cache`` was written for this provider configuration.

    Read-only (unlike loading the cache, which deletes a cache of another configuration): the
    preflight must come before anything on disk changes.
    """
    try:
        meta = json.loads((cache_parent / CACHE_DIRNAME / CACHE_META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # RecursionError: nested too deeply to parse
        return False
    return (
        isinstance(meta, dict)
        and str(meta.get("cache_version", "")).split(".")[0] == CACHE_VERSION.split(".")[0]
        and meta.get("format_version") == EMBEDDING_FORMAT_VERSION
        and meta.get("config_fingerprint") == config_fingerprint
    )
