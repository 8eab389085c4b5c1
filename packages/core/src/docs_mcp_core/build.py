"""``docs-mcp build``: corpus → chunks → (embeddings) → LanceDB table + chunks.json + metadata.json.

Safety: everything is written beside the live index (``.lancedb.tmp``, ``.lancedb.work/``,
``metadata.json.tmp``) and swapped in only when complete, so a failed or interrupted build leaves the
previous index intact and servable. An object-store destination (``s3://bucket/prefix``) has no
rename: the table goes under a fresh ``.lancedb-<build-id>`` prefix and ``metadata.json``, written
last, switches readers to it (see :class:`_Output`).
Memory: chunks stream from the chunker to a scratch file and to ``chunks.json``, then back in
batches to the embedder and the table, so a build's memory does not grow with the corpus.
Incremental: files whose fingerprint (strategy, metadata and source) matches the previous index
reuse its chunks without being parsed again; with embeddings, unchanged embedding inputs reuse the
embedding cache.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from docs_mcp_core.chunk_stream import ChunksJsonWriter, ChunkSpill
from docs_mcp_core.chunking import Chunk
from docs_mcp_core.corpus import ManifestResolver, file_fingerprint, load_yaml
from docs_mcp_core.corpus_pool import ChunkedFile
from docs_mcp_core.errors import (
    BuildError,
    CorpusInvalidError,
    FindingError,
    YamlExpansionError,
    no_room_error,
)
from docs_mcp_core.index.location import GENERATION_PREFIX, IndexStorage, is_uri, new_build_id, open_storage
from docs_mcp_core.index.table import (
    LANCEDB_DIRNAME,
    TABLE_NAME,
    CachedChunks,
    chunks_to_arrow,
    directory_size,
    read_cached_chunks,
    write_table,
)
from docs_mcp_core.manifest import resolve_file_config
from docs_mcp_core.metadata import METADATA_FILENAME, metadata_to_json, normalize_metadata
from docs_mcp_core.validation import validate_corpus

if TYPE_CHECKING:
    from docs_mcp_core.embedding.cache import Vector

CHUNKS_FILENAME = "chunks.json"
WORK_DIRNAME = ".lancedb.work"  # a local build's scratch: the chunk spill and chunks.json being written
SPILL_FILENAME = "chunks.spill"  # chunks waiting between chunking and the table write
_PARALLEL_MIN_FILES = 200
_SHA_RE = re.compile(r"^[0-9a-f]{40}$")


@dataclass
class BuildOptions:
    docs_dir: Path
    out_dir: Path | str  # a folder, or an object-store URI (s3://bucket/prefix)
    description: str = "Documentation corpus"
    embedding_provider: str = "none"
    embedding_model: str | None = None
    embedding_dimensions: int | None = None
    embedding_api_key: str | None = None
    embedding_base_url: str | None = None
    embedding_batch_size: int | None = None
    embedding_concurrency: int | None = None
    embedding_max_retries: int | None = None
    embedding_batch_api_threshold: int | None = None  # misses from which the Batch API is used (0: never)
    cache_dir: Path | None = None
    rebuild_cache: bool = False
    tool_description_search: str | None = None
    tool_description_get_doc: str | None = None
    mcp_server_instructions: str | None = None
    workers: int | None = None
    indexed_at: str | None = None  # fixed timestamp, for reproducible builds in tests
    storage_options: dict[str, str] | None = None  # object-store settings over the AWS_* variables
    follow_external_symlinks: bool = False  # index files that links lead to outside docs_dir


class BuildReporter:
    """Receives progress from a build; the CLI renders it. The default does nothing."""

    def step(self, message: str) -> None: ...

    def progress(self, phase: str, done: int, total: int) -> None: ...

    def warn(self, message: str) -> None: ...


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
    warnings: list[str] = field(default_factory=list)


def git_source_commit(docs_dir: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(docs_dir), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip().lower()
    return sha if out.returncode == 0 and _SHA_RE.match(sha) else None


def _scan_front_matter(markdown: str) -> dict[str, Any] | None:
    """The YAML mapping between a leading ``---`` line and the next ``---`` line (``{}`` when
    empty), or ``None`` when the file does not look that simple."""
    import yaml

    lines = markdown.split("\n")
    if lines[0].rstrip("\r") != "---":
        return None
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r") == "---":
            try:
                data = load_yaml("\n".join(lines[1:i]))
            except (yaml.YAMLError, YamlExpansionError):
                return None
            if data is None:
                return {}
            return {str(k): v for k, v in data.items()} if isinstance(data, dict) else None
    return None


def _reuse_cached(
    docs_dir: Path, rel: str, resolver: ManifestResolver, entry: tuple[str, list[Chunk]], title: str | None
) -> ChunkedFile | None:
    """The previous build's result for an unchanged file, without parsing it.

    Front matter is read with a light scan instead of the markdown parser. Whatever that scan
    gets wrong can only change the configuration, hence the fingerprint, so such a file is parsed
    as usual (and its errors reported there).
    """
    try:
        raw = (docs_dir / rel).read_bytes()
        markdown = raw.decode("utf-8")
        manifest = resolver.nearest(rel)
    except (OSError, UnicodeDecodeError, FindingError):
        return None
    front_matter: dict[str, Any] | None = None
    if markdown.startswith("---"):
        front_matter = _scan_front_matter(markdown)
        if front_matter is None:
            return None
    rel_in_manifest = rel[len(manifest.base) + 1 :] if manifest is not None and manifest.base else rel
    try:
        config = resolve_file_config(
            rel_in_manifest,
            manifest.manifest if manifest else None,
            markdown=markdown,
            front_matter=front_matter or None,
            first_h1=None,
            source=rel,
        )
    except Exception:  # noqa: BLE001 - the parser path reports it with file and line
        return None
    fingerprint = file_fingerprint(config.strategy, config.metadata, markdown)
    if fingerprint != entry[0]:
        return None
    chunks = entry[1]
    return ChunkedFile(
        relpath=rel,
        chunks=chunks,
        chunk_count=len(chunks),
        strategy=config.strategy,
        metadata=config.metadata,
        title=title,
        fingerprint=fingerprint,
        manifest_path=manifest.path if manifest else None,
        size_bytes=len(raw),
    )


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink(missing_ok=True)


def recover_interrupted_swap(out_dir: Path) -> None:
    """Finish or undo a swap that a crash interrupted, so the live index is whole again."""
    live, old = out_dir / LANCEDB_DIRNAME, out_dir / f"{LANCEDB_DIRNAME}.old"
    if not live.exists() and old.exists():
        old.rename(live)
    _remove(old)
    for name in (
        f"{LANCEDB_DIRNAME}.tmp",
        f"{CHUNKS_FILENAME}.tmp",
        f"{METADATA_FILENAME}.tmp",
        WORK_DIRNAME,
    ):
        _remove(out_dir / name)


def build_index(options: BuildOptions, reporter: BuildReporter | None = None) -> BuildSummary:
    """Build (or incrementally rebuild) the index in ``options.out_dir`` (a folder or an ``s3://`` URI).

    The corpus streams through the build: each file's chunks go to a scratch file and to
    ``chunks.json`` as soon as they are chunked, and come back in batches of
    :data:`~docs_mcp_core.chunk_stream.SPILL_BATCH` to be embedded and written to the table, so
    memory does not grow with the corpus.
    """
    rep = reporter or BuildReporter()
    started = time.perf_counter()
    docs_dir = options.docs_dir.resolve()
    if not docs_dir.is_dir():
        raise BuildError(f"--docs-dir '{options.docs_dir}' is not a directory")
    warnings_list: list[str] = []

    def warn(message: str) -> None:
        warnings_list.append(message)
        rep.warn(message)

    output = _Output(options)
    cache_parent = options.cache_dir.resolve() if options.cache_dir is not None else output.out_dir
    # 1. Embedding provider preflight, before anything is written.
    provider, preflight_pending = _create_provider(options, cache_parent, rep, warn)
    output.prepare()

    # 2. Validate and chunk in one pass (the same checks as `docs-mcp validate`), reusing the
    #    previous index's chunks for files that did not change; refuse a corpus with errors. Chunks
    #    stream to a scratch file and to chunks.json.tmp as files are chunked.
    try:
        work = output.open_work()
        spill = ChunkSpill(work / SPILL_FILENAME)
        chunks_json = ChunksJsonWriter(work / f"{CHUNKS_FILENAME}.tmp")
        try:
            report, stream = _stream_corpus(options, docs_dir, output, spill, chunks_json, rep)
            if not report.ok:
                raise CorpusInvalidError(report.findings)
            for finding in report.findings:  # printed as validate prints them
                if finding.severity == "warning":
                    warnings_list.append(finding.render())
                    where = f"{finding.path}:{finding.line}" if finding.line else finding.path
                    rep.warn(f"{where}: {finding.message}")
            ordered = report.results
            if not ordered:
                raise BuildError(f"no markdown files found under '{docs_dir}'; nothing to index")
            spill.finish()
            chunks_json.close()
            rep.step(
                f"chunked {len(ordered):,} files into {stream.chunks:,} chunks ({stream.cached_files:,} unchanged "
                f"files reused, {report.warnings} warnings)"
            )

            # 3. Metadata.
            from docs_mcp_core.prompts import load_prompt_templates

            prompts, prompt_warnings = load_prompt_templates(
                docs_dir, follow_external_symlinks=options.follow_external_symlinks
            )
            for w in prompt_warnings:
                warn(w)
            meta_raw = _metadata_dict(
                options,
                report,
                stream.values,
                stream.chunks,
                ordered,
                prompts,
                provider,
                warn,
                output.index_path,
            )
            metadata = normalize_metadata(meta_raw)

            # 4. Embeddings (batch by batch, through the embedding cache) and the table.
            embedder = None
            if provider is not None:
                embedder = _BatchEmbedder(
                    provider, options, cache_parent, rep, warn, preflight=preflight_pending
                )
            keys = list(metadata.taxonomy)
            dims = provider.dimensions if provider is not None else None
            fingerprints = {r.relpath: r.fingerprint for r in ordered}
            from docs_mcp_core.ranking import generic_headings

            generic = generic_headings(stream.headings)
            stream.headings = []

            def batches() -> Iterator[Any]:
                whole = embedder.whole_corpus_vectors(spill, stream.chunks) if embedder is not None else None
                for batch in spill.batches():
                    vectors = whole
                    if embedder is not None and whole is None:
                        vectors = embedder.vectors(batch, stream.chunks)
                    yield chunks_to_arrow(batch, keys, fingerprints, vectors, dims, generic, stream.derived)

            counts = [0, 0]

            def after_rows() -> None:  # every vector is in the table: save the cache, free the vectors
                if embedder is not None:
                    counts[:] = embedder.finish()

            output.write_table(batches(), keys, dims, rep, after_rows)
            stream.derived = {}
            hits, misses = counts
        finally:
            spill.discard()
        # 5. Publish: swap the folder's files in, or upload chunks.json and then metadata.json.
        index_bytes = output.publish(metadata_to_json(metadata), rep)
    except BaseException as exc:
        output.abort()
        no_room = no_room_error(exc, output.writing_to)
        if no_room is not None:
            raise no_room from exc
        raise
    finally:
        output.close()
    return BuildSummary(
        out_dir=output.display,
        files=len(ordered),
        chunks=stream.chunks,
        cached_files=stream.cached_files,
        seconds=time.perf_counter() - started,
        index_bytes=index_bytes,
        embedding_hits=hits,
        embedding_misses=misses,
        warnings=warnings_list,
    )


def _create_provider(
    options: BuildOptions, cache_parent: Path | None, rep: BuildReporter, warn: Callable[[str], None]
) -> tuple[Any, bool]:
    """The embedding provider (``None`` for ``none``) and whether its preflight is still pending.

    A missing key fails here; a bad key, an unknown model or a dimension mismatch fail on one tiny
    request. When an embedding cache written for this exact configuration exists, that request
    waits until some chunk actually misses the cache (see :class:`_BatchEmbedder`), so a rebuild
    with nothing new calls no API at all.
    """
    if options.embedding_provider.strip().lower() == "none":
        return None, False
    from docs_mcp_core.embedding import create_embedding_provider

    extra: dict[str, Any] = {}
    if options.embedding_batch_api_threshold is not None:
        extra["batch_api_threshold"] = options.embedding_batch_api_threshold
    provider = create_embedding_provider(
        options.embedding_provider,
        model=options.embedding_model,
        dimensions=options.embedding_dimensions,
        api_key=options.embedding_api_key,
        base_url=options.embedding_base_url,
        batch_size=options.embedding_batch_size,
        concurrency=options.embedding_concurrency,
        max_retries=options.embedding_max_retries,
        on_warning=warn,
        **extra,
    )
    if (
        cache_parent is not None
        and not options.rebuild_cache
        and _embedding_cache_matches(cache_parent, provider.config_fingerprint())
    ):
        return provider, True
    _preflight(provider, rep)
    return provider, False


def _stream_corpus(
    options: BuildOptions,
    docs_dir: Path,
    output: _Output,
    spill: ChunkSpill,
    chunks_json: ChunksJsonWriter,
    rep: BuildReporter,
) -> tuple[Any, _StreamStats]:
    """Validate and chunk the corpus, streaming every file's chunks to the spill and chunks.json."""
    live_db = output.out_dir / LANCEDB_DIRNAME if output.out_dir is not None else None
    previous = CachedChunks() if options.rebuild_cache or live_db is None else read_cached_chunks(live_db)
    cached = previous.files
    old_titles = _previous_titles(output.out_dir) if cached and output.out_dir is not None else {}
    resolver = ManifestResolver(docs_dir)
    stream = _StreamStats(cached)

    def reuse(rel: str) -> ChunkedFile | None:
        entry = cached.get(rel)
        return _reuse_cached(docs_dir, rel, resolver, entry, old_titles.get(rel)) if entry else None

    def on_file(result: ChunkedFile) -> None:
        if stream.add(result) and previous.derived:  # unchanged: its derived columns carry over
            for chunk in result.chunks:
                found = previous.derived.get(chunk.chunk_id)
                if found is not None:
                    stream.derived[chunk.chunk_id] = found
        for chunk in result.chunks:
            chunks_json.add(chunk.to_dict())
        spill.extend(result.chunks)

    rep.step("validating and chunking the corpus")
    with warnings.catch_warnings():
        # chunking workers are forked after lancedb may have been imported; they only parse markdown
        warnings.filterwarnings("ignore", message=".*fork support is experimental.*", category=RuntimeWarning)
        report = validate_corpus(
            docs_dir,
            workers=options.workers,
            reuse=reuse if cached else None,
            progress=lambda done, total: rep.progress("chunking", done, total),
            on_file=on_file,
            follow_external_symlinks=options.follow_external_symlinks,
        )
    cached.clear()  # the previous index's chunks are in the spill now
    previous.derived.clear()
    return report, stream


class _Output:
    """Where a build writes: a local folder (files swapped in) or an object-store prefix (generations).

    A folder is written beside the live index (``.lancedb.tmp``, ``*.json.tmp``) and swapped in by
    renames. An object store has no atomic rename of a folder: the table goes under a fresh
    ``.lancedb-<build-id>`` prefix, then ``chunks.json`` is uploaded, then ``metadata.json``, whose
    ``index.path`` names the new prefix; until that last PUT readers see the previous index.
    """

    def __init__(self, options: BuildOptions) -> None:
        self.options = options
        self.storage: IndexStorage | None = None
        self.out_dir: Path | None = None
        if is_uri(options.out_dir):
            self.storage = open_storage(options.out_dir, options.storage_options)
            self.index_path = GENERATION_PREFIX + new_build_id()
        else:
            self.out_dir = Path(options.out_dir).resolve()
            self.index_path = LANCEDB_DIRNAME
        self.previous_path: str | None = None
        self._created = False
        self._publishing = False  # the swap or the uploads have started: leave the rest to recovery
        self._published = False  # metadata.json names the new table
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self._work: Path | None = None

    @property
    def display(self) -> Path | str:
        return self.out_dir if self.out_dir is not None else str(self.options.out_dir)

    @property
    def writing_to(self) -> str:
        """The local folder the build writes into (the output folder, or the scratch folder)."""
        return str(self.out_dir if self.out_dir is not None else self._work or tempfile.gettempdir())

    def prepare(self) -> None:
        """Check the destination and repair what an interrupted build left behind."""
        if self.out_dir is not None:
            if self.out_dir.exists() and not self.out_dir.is_dir():
                raise BuildError(f"--out '{self.options.out_dir}' exists and is not a directory")
            if self.out_dir.is_dir():
                recover_interrupted_swap(self.out_dir)
        elif self.storage is not None:
            self.previous_path = _previous_index_path(self.storage)

    def open_work(self) -> Path:
        """The local folder for scratch files (the output folder itself, or a temporary folder)."""
        if self.out_dir is not None:
            self._created = not self.out_dir.exists()
            self._work = self.out_dir / WORK_DIRNAME
            _remove(self._work)
            self._work.mkdir(parents=True)
        else:
            self._scratch = tempfile.TemporaryDirectory(prefix="docs-mcp-build-")
            self._work = Path(self._scratch.name)
        return self._work

    def write_table(
        self,
        batches: Iterator[Any],
        keys: list[str],
        dims: int | None,
        rep: BuildReporter,
        after_rows: Callable[[], None],
    ) -> None:
        def step(message: str) -> None:
            rep.step(f"index: {message}")

        if self.storage is None:
            assert self.out_dir is not None
            tmp_db = self.out_dir / f"{LANCEDB_DIRNAME}.tmp"
            _remove(tmp_db)
            write_table(
                tmp_db,
                batches,
                metadata_keys=keys,
                vector_dimensions=dims,
                on_step=step,
                after_rows=after_rows,
            )
            return
        rep.step(f"index: writing {self.storage.uri(self.index_path)}")
        write_table(
            self.storage.uri(self.index_path),
            batches,
            metadata_keys=keys,
            vector_dimensions=dims,
            on_step=step,
            storage_options=self.storage.lance_options,
            after_rows=after_rows,
        )

    def publish(self, metadata_text: str, rep: BuildReporter) -> int:
        """Make the new index the live one; returns its size in bytes."""
        assert self._work is not None
        self._publishing = True
        if self.storage is None:
            assert self.out_dir is not None
            _write_text(self.out_dir / f"{METADATA_FILENAME}.tmp", metadata_text)
            _swap(self.out_dir, self._work / f"{CHUNKS_FILENAME}.tmp")
            _remove(self._work)
            return (
                directory_size(self.out_dir / LANCEDB_DIRNAME)
                + (self.out_dir / CHUNKS_FILENAME).stat().st_size
                + (self.out_dir / METADATA_FILENAME).stat().st_size
            )
        storage = self.storage
        chunks_file = self._work / f"{CHUNKS_FILENAME}.tmp"
        rep.step(f"publishing {storage.location}")
        storage.upload(chunks_file, CHUNKS_FILENAME)
        storage.write_bytes(METADATA_FILENAME, metadata_text.encode("utf-8"))
        self._published = True
        # Keep the previous generation (replicas that opened it keep working until they restart).
        for name in storage.list_names():
            if name.startswith(GENERATION_PREFIX) and name not in (self.index_path, self.previous_path):
                _quietly(lambda name=name: storage.remove_tree(name))
        return storage.size(self.index_path) + len(metadata_text.encode("utf-8")) + chunks_file.stat().st_size

    def abort(self) -> None:
        """Undo a failed build: the live index stays exactly as it was."""
        if self.out_dir is not None:
            if self._work is not None and not self._publishing:
                _remove(self._work)
                (self.out_dir / f"{METADATA_FILENAME}.tmp").unlink(missing_ok=True)
                _remove(self.out_dir / f"{LANCEDB_DIRNAME}.tmp")
            if self._created and not self._publishing:
                shutil.rmtree(self.out_dir, ignore_errors=True)
        elif self.storage is not None and not self._published:
            storage, path = self.storage, self.index_path
            _quietly(lambda: storage.remove_tree(path))

    def close(self) -> None:
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None


class _StreamStats:
    """What the build needs to remember of the chunks streaming past: counts, headings, metadata values."""

    def __init__(self, cached: dict[str, tuple[str, list[Chunk]]]) -> None:
        self._cached = cached
        self.chunks = 0
        self.cached_files = 0
        self.headings: list[str] = []
        self.values: dict[str, set[str]] = {}
        self.derived: dict[str, tuple[str, ...]] = {}  # chunk id -> derived columns of unchanged files

    def add(self, result: ChunkedFile) -> bool:
        """Count a file's chunks; True when they are the previous index's, unchanged."""
        entry = self._cached.get(result.relpath)
        reused = entry is not None and not result.findings and result.chunks is entry[1]
        if reused:
            self.cached_files += 1
        self.chunks += len(result.chunks)
        for chunk in result.chunks:
            self.headings.append(chunk.heading)
            for key, value in chunk.metadata.items():
                self.values.setdefault(key, set()).add(value)
        return reused


def _quietly(action: Callable[[], None]) -> None:
    try:
        action()
    except Exception:  # noqa: BLE001 - best-effort clean-up must not hide the real error
        pass


def _previous_index_path(storage: IndexStorage) -> str | None:
    """``index.path`` of the index currently published at ``storage`` (``None`` when there is none).

    Also the build's first request to the store: unreachable endpoints, bad credentials and missing
    buckets fail here, before any work, with a message that says what to check.
    """
    try:
        data = storage.read_bytes(METADATA_FILENAME)
    except FileNotFoundError:
        if not storage.bucket_exists():
            raise BuildError(
                f"--out '{storage.location}': the bucket does not exist (create it first)"
            ) from None
        return None
    except OSError as exc:
        raise BuildError(
            f"cannot access --out '{storage.location}': {exc} (check the endpoint and credentials: "
            "AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION or --storage-option)"
        ) from None
    try:
        raw = json.loads(data.decode("utf-8-sig"))
    except ValueError:
        return None
    index = raw.get("index") if isinstance(raw, dict) else None
    path = index.get("path") if isinstance(index, dict) else None
    return path if isinstance(path, str) and path else None


class _BatchEmbedder:
    """Vectors for the chunks of one write batch at a time, through the embedding cache.

    Only cache misses reach the provider; an input already embedded earlier in this build is not
    sent again. Providers with a Batch API threshold get every miss of the corpus in one call
    instead (:meth:`whole_corpus_vectors`), so a large job still goes through the Batch API. With
    a pending preflight the provider is checked before the first miss (a fully cached rebuild
    makes no request at all).
    """

    def __init__(
        self,
        provider: Any,
        options: BuildOptions,
        cache_parent: Path | None,
        rep: BuildReporter,
        warn: Callable[[str], None],
        *,
        preflight: bool,
    ) -> None:
        from docs_mcp_core.embedding.cache import CacheLoadResult, load_embedding_cache

        self.provider = provider
        self.rep = rep
        self.warn = warn
        self.preflight = preflight
        self.cache_parent = cache_parent
        self.config = provider.config_fingerprint()
        self.cache = CacheLoadResult()
        if cache_parent is not None and not options.rebuild_cache:
            self.cache = load_embedding_cache(cache_parent, self.config)
            for w in self.cache.warnings:
                warn(w)
        self.fresh: dict[str, Any] = {}  # fingerprint -> float32 vector embedded by this build
        self.entries: dict[str, tuple[str, Any]] = {}  # what the cache will hold after this build
        self.hits = self.misses = self.done = self.embedded_inputs = 0
        self.seconds = 0.0
        self.announced = False

    def _announce(self, total: int) -> None:
        if not self.announced:
            self.announced = True
            self.rep.step(f"embedding {total:,} chunks with {self.provider.name}/{self.provider.model}")

    def whole_corpus_vectors(self, spill: ChunkSpill, total: int) -> dict[str, Vector] | None:
        """Every vector at once when the provider would use its Batch API for this corpus, else ``None``."""
        threshold = getattr(self.provider, "batch_api_threshold", 0)
        if not (isinstance(threshold, int) and 0 < threshold <= total):
            return None
        from docs_mcp_core.chunking import embedding_input

        items = [(c.chunk_id, embedding_input(c)) for batch in spill.batches() for c in batch]
        return self._embed(items, total)

    def vectors(self, chunks: Sequence[Chunk], total: int) -> dict[str, Vector]:
        from docs_mcp_core.chunking import embedding_input

        return self._embed([(c.chunk_id, embedding_input(c)) for c in chunks], total)

    def _embed(self, items: list[tuple[str, str]], total: int) -> dict[str, Vector]:
        import numpy as np

        from docs_mcp_core.embedding.cache import embed_with_cache, embedding_fingerprint

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
                    _preflight(self.provider, self.rep)

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
        """Report ``done`` of ``total``, with an ETA from this build's embedding rate so far."""
        from docs_mcp_core.embedding import format_duration

        elapsed = self.seconds + batch_seconds
        phase = "embedding"
        if 0 < done < total and elapsed >= 1.0:
            phase = f"embedding (ETA {format_duration((total - done) * elapsed / done)})"
        self.rep.progress(phase, done, total)

    def finish(self) -> tuple[int, int]:
        """Report the cache summary, save the cache; returns ``(hits, misses)``."""
        from docs_mcp_core.embedding.cache import (
            EmbedOutcome,
            format_cache_summary,
            format_embed_summary,
            save_embedding_cache,
        )

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


def _write_text(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def _swap(out_dir: Path, chunks_tmp: Path) -> None:
    live, tmp, old = (
        out_dir / LANCEDB_DIRNAME,
        out_dir / f"{LANCEDB_DIRNAME}.tmp",
        out_dir / f"{LANCEDB_DIRNAME}.old",
    )
    _remove(old)
    if live.exists():
        live.rename(old)
    tmp.rename(live)
    os.replace(chunks_tmp, out_dir / CHUNKS_FILENAME)
    os.replace(out_dir / f"{METADATA_FILENAME}.tmp", out_dir / METADATA_FILENAME)
    _remove(old)


def _previous_titles(out_dir: Path) -> dict[str, str]:
    try:
        data = json.loads((out_dir / METADATA_FILENAME).read_text(encoding="utf-8"))
        files = data.get("files") or {}
        return {
            k: v["title"] for k, v in files.items() if isinstance(v, dict) and isinstance(v.get("title"), str)
        }
    except (OSError, ValueError, AttributeError):
        return {}


def _preflight(provider: Any, rep: BuildReporter) -> None:
    from docs_mcp_core.embedding import check_embedding_provider

    rep.step(f"checking embedding provider {provider.name}/{provider.model}")
    check_embedding_provider(provider)


def _embedding_cache_matches(cache_parent: Path, config_fingerprint: str) -> bool:
    """Whether ``<cache_parent>/.embedding-cache`` was written for this provider configuration.

    Read-only (unlike loading the cache, which deletes a cache of another configuration): the
    preflight must come before anything on disk changes.
    """
    from docs_mcp_core.embedding.cache import (
        CACHE_DIRNAME,
        CACHE_META_FILE,
        CACHE_VERSION,
        EMBEDDING_FORMAT_VERSION,
    )

    try:
        meta = json.loads((cache_parent / CACHE_DIRNAME / CACHE_META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(meta, dict)
        and str(meta.get("cache_version", "")).split(".")[0] == CACHE_VERSION.split(".")[0]
        and meta.get("format_version") == EMBEDDING_FORMAT_VERSION
        and meta.get("config_fingerprint") == config_fingerprint
    )


def _metadata_dict(
    options: BuildOptions,
    report: Any,
    values: Mapping[str, set[str]],
    total_chunks: int,
    ordered: Sequence[ChunkedFile],
    prompts: Sequence[Any],
    provider: Any,
    warn: Callable[[str], None],
    index_path: str = LANCEDB_DIRNAME,
) -> dict[str, Any]:
    """The metadata.json document; ``values`` holds every metadata value of every chunk, by key."""
    # Taxonomy configuration: union over the manifests that govern at least one file, in the order
    # files first meet them (the original's order, which decides mcpServerInstructions).
    resolver_all = ManifestResolver(options.docs_dir.resolve())
    for manifest_path in dict.fromkeys(r.manifest_path for r in ordered if r.manifest_path):
        try:
            resolver_all.nearest(manifest_path)
        except FindingError:
            pass
    config: dict[str, dict[str, Any]] = {}
    instructions = options.mcp_server_instructions
    for entry in resolver_all.loaded.values():
        manifest = entry.manifest
        if instructions is None and manifest.mcpServerInstructions:
            instructions = manifest.mcpServerInstructions.strip()
        for key, cfg in (manifest.taxonomy or {}).items():
            slot = config.setdefault(key, {"vector_collapse": False, "properties": {}, "description": None})
            slot["vector_collapse"] = slot["vector_collapse"] or cfg.vector_collapse
            if cfg.description and not slot["description"]:
                slot["description"] = cfg.description
            for value, props in cfg.properties.items():
                if props.mcp_resource:
                    slot["properties"][value] = {"mcp_resource": True}
    for key in config:
        if key not in values:
            warn(
                f"taxonomy config key '{key}' does not match any chunk metadata — this configuration has no effect"
            )
    taxonomy: dict[str, Any] = {}
    for key, vals in values.items():
        slot = config.get(key, {})
        entry_: dict[str, Any] = {
            "description": slot.get("description") or f"Filter results by {key}.",
            "values": sorted(vals),
        }
        if slot.get("vector_collapse"):
            entry_["vector_collapse"] = True
        if slot.get("properties"):
            entry_["properties"] = slot["properties"]
        taxonomy[key] = entry_
    tool_descriptions = {
        k: v
        for k, v in (
            ("search_docs", options.tool_description_search),
            ("get_doc", options.tool_description_get_doc),
        )
        if v
    }
    meta: dict[str, Any] = {
        "metadata_version": "1.1.0",
        "corpus_description": options.description,
        "taxonomy": taxonomy,
        "stats": {
            "total_chunks": total_chunks,
            "total_files": len(ordered),
            "indexed_at": options.indexed_at or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
            "source_commit": git_source_commit(options.docs_dir),
        },
        "embedding": (
            {"provider": provider.name, "model": provider.model, "dimensions": provider.dimensions}
            if provider
            else None
        ),
    }
    if prompts:
        meta["prompts"] = [
            p.model_dump(exclude_none=True) if hasattr(p, "model_dump") else p for p in prompts
        ]
    if tool_descriptions:
        meta["tool_descriptions"] = tool_descriptions
    if instructions:
        meta["mcpServerInstructions"] = instructions
    meta["files"] = {r.relpath: {"title": r.title} for r in ordered if r.title}
    meta["index"] = {"engine": "lancedb", "table": TABLE_NAME, "path": index_path}
    return meta
