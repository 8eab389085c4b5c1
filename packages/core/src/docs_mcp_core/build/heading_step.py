"""A build's heading-path step: each distinct path and heading chain embedded in the background.

The texts (:class:`~docs_mcp_core.search.heading_leg.HeadingTexts`) are collected as the chunks
stream past; their embedding, with the shipped local model, starts as soon as chunking ends and
runs while the table is written and indexed, whose work leaves a core idle much of the time. The
vectors are needed only when the derived files are written (:mod:`docs_mcp_core.search.derived`),
after the small parts: the largest parts are made once the model and its buffers are freed.

A rebuild reuses the previous index's vectors (:meth:`HeadingStep.reuse`): its texts come from its
chunks and its vectors from its derived files, and each batch of texts that the previous build
embedded alike is taken from there instead of run again. The same texts in the same batch give the
same vectors, so the result is the one a fresh build gives; a rebuild of an unchanged corpus runs
the model on nothing. (A change of the shipped model's weights must come with a new model name or
a new ``HEADING_TEXT_VERSION``, which make the stored vectors unusable.)
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np

from docs_mcp_core.build.options import BuildReporter
from docs_mcp_core.errors import BuildError, EmbeddingError
from docs_mcp_core.index.derived_files import read_derived
from docs_mcp_core.index.live_files import TABLE_NAME
from docs_mcp_core.memory import release_free_heap
from docs_mcp_core.search.heading_leg import (
    HeadingTexts,
    HeadingVectors,
    HeadingVocabulary,
    embed_heading_texts,
)

__all__ = ["HeadingStep", "previous_vocabulary"]


class HeadingStep:
    """Embeds a build's heading texts on a thread of its own (:meth:`start`, :meth:`vocabulary`)."""

    def __init__(self) -> None:
        from docs_mcp_core.embedding.local import LocalEmbeddingProvider

        self.texts = HeadingTexts()
        self._embedder: LocalEmbeddingProvider | None = LocalEmbeddingProvider()
        self._previous: HeadingVocabulary | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._future: Future[HeadingVocabulary] | None = None
        self._seconds = 0.0

    def reuse(self, table_folder: Path, chunks: Iterable[tuple[str, str]]) -> None:
        """Offer the vectors of the index in ``table_folder``, whose chunks' ``(filepath,
        breadcrumb)`` are ``chunks``, to :meth:`start` (nothing when they are unusable)."""
        assert self._embedder is not None, "reuse comes before start"
        self._previous = previous_vocabulary(table_folder, chunks, self._embedder.model)

    def start(self, rep: BuildReporter) -> None:
        embedder, previous = self._embedder, self._previous
        assert embedder is not None, "started once"
        self._previous = None
        count = len(self.texts)
        rep.step(
            f"embedding {count:,} heading text{'s' * (count != 1)} with local/{embedder.model} "
            "while the table is written" + (" (reusing the previous index's vectors)" if previous else "")
        )

        def run() -> HeadingVocabulary:
            started = time.perf_counter()
            try:
                return embed_heading_texts(self.texts, embedder, previous)
            finally:
                self._seconds = time.perf_counter() - started

        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="docs-mcp-headings")
        self._future = self._pool.submit(run)

    def vocabulary(self, rep: BuildReporter) -> HeadingVocabulary:
        """The embedded texts (waits for the embedding); a model failure is a :class:`BuildError`."""
        assert self._future is not None
        try:
            found = self._future.result()
        except EmbeddingError as exc:
            raise BuildError(
                f"cannot embed the heading paths with the local model: {exc} "
                "(build with --embedding-provider none for a lexical index without them)"
            ) from exc
        finally:
            self.close()
            self._embedder = None  # the model and its buffers, freed before the vectors are used
            release_free_heap()
        rep.step(f"heading texts embedded in {self._seconds:.1f}s")
        return found

    def close(self) -> None:
        """Let the thread go without waiting for it: a failed or stopped build's clean-up never
        waits for an embedding that may run for minutes (its result is dropped when it ends)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


def previous_vocabulary(
    table_folder: Path, chunks: Iterable[tuple[str, str]], model: str
) -> HeadingVocabulary | None:
    """The texts an earlier build embedded and their vectors, from its table's derived files and
    its chunks' ``(filepath, breadcrumb)``; None when the files hold none made by ``model`` with
    today's texts, or hold another number of them."""
    files, _ = read_derived(table_folder, TABLE_NAME)
    part = files.parts.get("headings") if files is not None else None
    stored = HeadingVectors.from_part(part, model) if part is not None else None
    if stored is None:
        return None
    texts = HeadingTexts()
    for filepath, breadcrumb in chunks:
        texts.add(filepath, breadcrumb)
    paths, chains = sorted(texts.paths), sorted(texts.chains)
    if stored.paths.shape[0] != len(paths) or stored.chains.shape[0] != len(chains) + 1:
        return None
    # copies: the map closes with the old index
    path_vectors = np.array(stored.vocabulary_paths(), dtype=np.float32)
    chain_vectors = np.array(stored.chains[:-1], dtype=np.float32)
    if not (_unit_rows(path_vectors) and _unit_rows(chain_vectors)):
        return None  # bytes damaged since that build: never copy them into this one
    return HeadingVocabulary(
        {t: i for i, t in enumerate(paths)},
        path_vectors,
        {t: i for i, t in enumerate(chains)},
        chain_vectors,
        model,
    )


def _unit_rows(vectors: np.ndarray) -> bool:
    """Every row a finite unit vector, as the model's normalised outputs are (a changed byte in
    a float32 moves its row's length far more than 10⁻³, unless it is in the last bits)."""
    lengths = np.einsum("ij,ij->i", vectors, vectors, dtype=np.float64)
    return bool(np.isfinite(lengths).all() and np.abs(lengths - 1.0).max(initial=0.0) <= 1e-3)
