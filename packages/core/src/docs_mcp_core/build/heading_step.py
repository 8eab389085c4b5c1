"""A build's heading-path step: each distinct path and heading chain embedded in the background.

The texts (:class:`~docs_mcp_core.search.heading_leg.HeadingTexts`) are collected as the chunks
stream past; their embedding, with the shipped local model, starts as soon as chunking ends and
runs while the table is written and indexed, whose work leaves a core idle much of the time. The
vectors are needed only when the derived files are written (:mod:`docs_mcp_core.search.derived`).
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor

from docs_mcp_core.build.options import BuildReporter
from docs_mcp_core.errors import BuildError, EmbeddingError
from docs_mcp_core.search.heading_leg import HeadingTexts, HeadingVocabulary, embed_heading_texts

__all__ = ["HeadingStep"]


class HeadingStep:
    """Embeds a build's heading texts on a thread of its own (:meth:`start`, :meth:`vocabulary`)."""

    def __init__(self) -> None:
        self.texts = HeadingTexts()
        self._pool: ThreadPoolExecutor | None = None
        self._future: Future[HeadingVocabulary] | None = None
        self._seconds = 0.0

    def start(self, rep: BuildReporter) -> None:
        from docs_mcp_core.embedding.local import LocalEmbeddingProvider

        embedder = LocalEmbeddingProvider()
        count = len(self.texts)
        rep.step(
            f"embedding {count:,} heading text{'s' * (count != 1)} with local/{embedder.model} "
            "while the table is written"
        )

        def run() -> HeadingVocabulary:
            started = time.perf_counter()
            try:
                return embed_heading_texts(self.texts, embedder)
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
        rep.step(f"heading texts embedded in {self._seconds:.1f}s")
        return found

    def close(self) -> None:
        if self._pool is not None:
            if self._future is not None:
                self._future.cancel()
            self._pool.shutdown(wait=True)
            self._pool = None
