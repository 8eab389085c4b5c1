"""``docs-mcp build``: corpus → chunks → (embeddings) → LanceDB table + chunks.json + metadata.json.

The steps, in order (:func:`build_index`):

1. the docs folder is checked and walked once (:class:`~docs_mcp_core.corpus.Corpus`), the
   destination locked and prepared (:mod:`.output`), the embedding provider created and checked
   (:mod:`.embedding_step`);
2. every file is validated and chunked in one pass, a :class:`~docs_mcp_core.validation.CorpusScan`
   (the same checks as ``docs-mcp validate``) the build iterates, and a corpus with errors is
   refused; unchanged files reuse the previous index's chunks (:mod:`.reuse`), given to the scan;
3. ``metadata.json`` is assembled (:mod:`.metadata`);
4. the chunks are embedded (through the embedding cache) and written to the table, batch by batch;
5. the new table is opened and checked (:mod:`.verify`), then the new index is published: swapped
   in beside the live one, or uploaded with ``metadata.json`` last.

Memory: chunks stream from the chunker to a scratch file and to ``chunks.json``, then back in
batches to the embedder and the table, so a build's memory does not grow with the corpus.
"""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Iterator
from typing import Any

from docs_mcp_core.build.embedding_step import BatchEmbedder, create_build_provider
from docs_mcp_core.build.heading_step import HeadingStep
from docs_mcp_core.build.metadata import governing_manifests, metadata_document
from docs_mcp_core.build.options import BuildOptions, BuildReporter, BuildSummary, SilentReporter
from docs_mcp_core.build.output import CHUNKS_FILENAME, SPILL_FILENAME, Output
from docs_mcp_core.build.reuse import previous_titles, reuse_unchanged_file
from docs_mcp_core.chunk_stream import ChunksJsonWriter, ChunkSpill
from docs_mcp_core.chunking import Chunk
from docs_mcp_core.corpus import Corpus
from docs_mcp_core.corpus_pool import ChunkedFile
from docs_mcp_core.embedding import EmbeddingProvider
from docs_mcp_core.errors import BuildError, CorpusInvalidError, UnusablePathError, resolve_path, write_error
from docs_mcp_core.index.live_files import LANCEDB_DIRNAME
from docs_mcp_core.index.table import CachedChunks, chunks_to_arrow, read_cached_chunks
from docs_mcp_core.metadata import IndexMetadata, metadata_to_json, normalize_metadata
from docs_mcp_core.prompts import load_prompt_templates
from docs_mcp_core.ranking import generic_headings, unheaded_title
from docs_mcp_core.search.heading_leg import HeadingTexts
from docs_mcp_core.validation import CorpusScan, ValidationReport

__all__ = ["build_index"]


def build_index(options: BuildOptions, reporter: BuildReporter | None = None) -> BuildSummary:
    """Build (or incrementally rebuild) the index in ``options.out_dir`` (a folder or an ``s3://`` URI).

    Raises :class:`~docs_mcp_core.errors.DocsDirError` when ``options.docs_dir`` is not a folder,
    :class:`~docs_mcp_core.errors.CorpusInvalidError` when it has errors, and other
    :class:`~docs_mcp_core.errors.DocsMcpError` subclasses for anything else a user can fix; in
    every case the previous index is left as it was.
    """
    return _Build(options, reporter or SilentReporter()).run()


class _Build:
    """One run of the pipeline and what it has learned so far."""

    def __init__(self, options: BuildOptions, rep: BuildReporter) -> None:
        self.options = options
        self.rep = rep
        self.started = time.perf_counter()
        self.warnings: list[str] = []
        self.corpus = Corpus.open(
            options.docs_dir.resolve(), follow_external_symlinks=options.follow_external_symlinks
        )
        self.output = Output(options)
        cache_dir = options.embedding.cache_dir
        self.cache_parent = self.output.out_dir
        if cache_dir is not None:
            try:
                self.cache_parent = resolve_path(cache_dir, "--cache-dir")
            except UnusablePathError as exc:
                raise BuildError(str(exc)) from None

    def warn(self, message: str) -> None:
        """A warning about the build as a whole: reported as ``warning: message``."""
        self._report(f"warning: {message}")

    def _report(self, line: str) -> None:
        self.warnings.append(line)
        self.rep.warn(line)

    def run(self) -> BuildSummary:
        options, output = self.options, self.output
        # 1. The output's lock, before anything there is read or written (another build is refused).
        try:
            output.prepare(self.rep)
        except BaseException as exc:
            output.close()  # releases the lock if it was taken
            cannot_write = write_error(exc, output.display)
            if cannot_write is not None:
                raise cannot_write from exc
            raise
        try:
            # Embedding provider preflight, before anything is written.
            provider, preflight_pending = create_build_provider(
                options.embedding, self.cache_parent, options.rebuild_cache, self.rep, self.warn
            )
            work = output.open_work()
            spill = ChunkSpill(work / SPILL_FILENAME)
            chunks_json = ChunksJsonWriter(work / f"{CHUNKS_FILENAME}.tmp")
            headings = HeadingStep() if options.heading_vectors else None
            try:
                try:
                    report, stream = self._chunk(spill, chunks_json, headings)
                    metadata = self._metadata(report, stream, provider)
                    if headings is not None:
                        headings.start(self.rep)
                    embedder = None
                    if provider is not None:
                        embedder = BatchEmbedder(
                            provider,
                            self.cache_parent,
                            self.rep,
                            self.warn,
                            rebuild_cache=options.rebuild_cache,
                            preflight=preflight_pending,
                        )
                    hits, misses = self._write_table(
                        spill, stream, report.results, metadata, provider, embedder
                    )
                finally:
                    spill.discard()
                # 5. Check the new table, write beside it what a server derives from it at start
                # (the small parts while the heading texts' embedding runs, the large ones once its
                # model is freed, each part written as it is made), then publish: swap
                # the folder's files in, or upload chunks.json and then metadata.json.
                output.verify(stream.chunks, self.rep)
                vocabulary = None if headings is None else functools.partial(headings.vocabulary, self.rep)
                output.write_derived(metadata, self.rep, vocabulary)
            finally:
                if headings is not None:
                    headings.close()
            index_bytes = output.publish(metadata_to_json(metadata), self.rep)
        except BaseException as exc:
            output.abort()
            cannot_write = write_error(exc, output.writing_to)
            if cannot_write is not None:
                raise cannot_write from exc
            raise
        finally:
            output.close()
        return BuildSummary(
            out_dir=output.display,
            files=len(report.results),
            chunks=stream.chunks,
            cached_files=stream.cached_files,
            seconds=time.perf_counter() - self.started,
            index_bytes=index_bytes,
            embedding_hits=hits,
            embedding_misses=misses,
            warnings=self.warnings,
        )

    def _chunk(
        self, spill: ChunkSpill, chunks_json: ChunksJsonWriter, headings: HeadingStep | None
    ) -> tuple[ValidationReport, _StreamStats]:
        """2. Validate and chunk in one pass (the same checks as ``docs-mcp validate``), reusing the
        previous index's chunks for files that did not change; refuse a corpus with errors. Chunks
        stream to the spill and to ``chunks.json.tmp`` as files are chunked."""
        out_dir, corpus = self.output.out_dir, self.corpus
        live_db = out_dir / LANCEDB_DIRNAME if out_dir is not None else None
        previous = (
            CachedChunks() if self.options.rebuild_cache or live_db is None else read_cached_chunks(live_db)
        )
        cached = previous.files
        if headings is not None and cached and live_db is not None:
            headings.reuse(
                live_db, ((c.filepath, c.breadcrumb) for _, chunks in cached.values() for c in chunks)
            )
        old_titles = previous_titles(out_dir) if cached and out_dir is not None else {}
        stream = _StreamStats(cached, headings.texts if headings is not None else None)

        self.rep.step("validating and chunking the corpus")
        unchanged = _reused_files(corpus, cached, old_titles)
        scan = CorpusScan(
            corpus,
            workers=self.options.workers,
            chunks=True,
            reused=unchanged,
            progress=lambda done, total: self.rep.progress("chunking", done, total),
        )
        with warnings.catch_warnings():
            # chunking workers are forked after lancedb may have been imported; they only parse markdown
            warnings.filterwarnings(
                "ignore", message=".*fork support is experimental.*", category=RuntimeWarning
            )
            for result in scan:
                if stream.add(result) and previous.derived:  # unchanged: its derived columns carry over
                    for chunk in result.chunks:
                        found = previous.derived.get(chunk.chunk_id)
                        if found is not None:
                            stream.derived[chunk.chunk_id] = found
                for chunk in result.chunks:
                    chunks_json.add(chunk.to_dict())
                spill.extend(result.chunks)
        report = scan.report()
        unchanged.clear()
        cached.clear()  # the previous index's chunks are in the spill now
        previous.derived.clear()
        if not report.ok:
            raise CorpusInvalidError(report.findings)
        for finding in report.findings:  # as validate prints them: path:line: warning: message
            if finding.severity == "warning":
                self._report(finding.render())
        if not report.results:
            raise BuildError(f"no markdown files found under '{corpus.docs_dir}'; nothing to index")
        spill.finish()
        chunks_json.close()
        files, chunks, reused, warned = (
            len(report.results),
            stream.chunks,
            stream.cached_files,
            report.warnings,
        )
        self.rep.step(
            f"chunked {files:,} file{'s' * (files != 1)} into {chunks:,} chunk{'s' * (chunks != 1)} "
            f"({reused:,} unchanged file{'s' * (reused != 1)} reused, {warned} warning{'s' * (warned != 1)})"
        )
        return report, stream

    def _metadata(
        self, report: ValidationReport, stream: _StreamStats, provider: EmbeddingProvider | None
    ) -> IndexMetadata:
        """3. ``metadata.json``: prompts from the templates the walk found, the governing manifests'
        taxonomy configuration, and what the chunks carry."""
        corpus = self.corpus
        # the templates' warnings are validation findings, reported with the others
        prompts, _ = load_prompt_templates(corpus.docs_dir, corpus.files.templates)
        document = metadata_document(
            self.options,
            values=stream.values,
            total_chunks=stream.chunks,
            files=report.results,
            manifests=governing_manifests(corpus.resolver, report.results),
            prompts=prompts,
            provider=provider,
            index_path=self.output.index_path,
        )
        return normalize_metadata(document)

    def _write_table(
        self,
        spill: ChunkSpill,
        stream: _StreamStats,
        files: list[ChunkedFile],
        metadata: IndexMetadata,
        provider: EmbeddingProvider | None,
        embedder: BatchEmbedder | None,
    ) -> tuple[int, int]:
        """4. Embeddings (batch by batch, through the embedding cache) and the table; returns the
        embedding cache's ``(hits, misses)``."""
        keys = list(metadata.taxonomy)
        dims = provider.dimensions if provider is not None else None
        fingerprints = {r.relpath: r.fingerprint for r in files}
        generic = generic_headings(stream.headings)
        stream.headings = []

        def batches() -> Iterator[Any]:
            whole = embedder.whole_corpus_vectors(spill, stream.chunks) if embedder is not None else None
            for batch in spill.batches():
                vectors = whole
                if embedder is not None and whole is None:
                    vectors = embedder.vectors(batch, stream.chunks)
                yield chunks_to_arrow(
                    batch, keys, fingerprints, vectors, dims, generic, stream.derived, stream.titles
                )

        counts = [0, 0]

        def after_rows() -> None:  # every vector is in the table: save the cache, free the vectors
            if embedder is not None:
                counts[:] = embedder.finish()

        self.output.write_table(batches(), keys, dims, self.rep, after_rows)
        stream.derived = {}
        return counts[0], counts[1]


def _reused_files(
    corpus: Corpus, cached: dict[str, tuple[str, list[Chunk]]], old_titles: dict[str, str]
) -> dict[str, ChunkedFile]:
    """The files the previous index's chunks still serve (unchanged since it was built), by path."""
    reused: dict[str, ChunkedFile] = {}
    for rel in corpus.files.markdown if cached else ():
        entry = cached.get(rel)
        if entry is None:
            continue
        hit = reuse_unchanged_file(corpus.docs_dir, rel, corpus.resolver, entry, old_titles.get(rel))
        if hit is not None:
            reused[rel] = hit
    return reused


class _StreamStats:
    """What the build needs to remember of the chunks streaming past: counts, headings, metadata values."""

    def __init__(self, cached: dict[str, tuple[str, list[Chunk]]], headings: HeadingTexts | None) -> None:
        self._cached = cached
        self._headings = headings
        self.chunks = 0
        self.cached_files = 0
        self.headings: list[str] = []
        self.values: dict[str, set[str]] = {}
        self.derived: dict[str, tuple[str, ...]] = {}  # chunk id -> derived columns of unchanged files
        self.titles: dict[str, str] = {}  # file -> its title, when only its front matter states it

    def add(self, result: ChunkedFile) -> bool:
        """Count a file's chunks; True when they are the previous index's, unchanged."""
        entry = self._cached.get(result.relpath)
        reused = entry is not None and not result.findings and result.chunks is entry[1]
        if reused:
            self.cached_files += 1
        self.chunks += len(result.chunks)
        if title := unheaded_title(result.title, result.chunks):
            self.titles[result.relpath] = title
        for chunk in result.chunks:
            self.headings.append(chunk.heading)
            if self._headings is not None:
                self._headings.add(chunk.filepath, chunk.breadcrumb)
            for key, value in chunk.metadata.items():
                self.values.setdefault(key, set()).add(value)
        return reused
