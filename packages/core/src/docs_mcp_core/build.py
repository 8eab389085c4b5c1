"""``docs-mcp build``: corpus → chunks → (embeddings) → LanceDB table + chunks.json + metadata.json.

Safety: everything is written beside the live index (``.lancedb.tmp``, ``*.json.tmp``) and swapped in
only when complete, so a failed or interrupted build leaves the previous index intact and servable.
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
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from docs_mcp_core.chunking import Chunk
from docs_mcp_core.corpus import (
    Finding,
    FindingError,
    ManifestResolver,
    file_fingerprint,
)
from docs_mcp_core.corpus_pool import ChunkedFile
from docs_mcp_core.errors import BuildError
from docs_mcp_core.index_store import (
    LANCEDB_DIRNAME,
    TABLE_NAME,
    chunks_to_arrow,
    directory_size,
    read_cached_chunks,
    write_table,
)
from docs_mcp_core.manifest import resolve_file_config
from docs_mcp_core.metadata import METADATA_FILENAME, metadata_to_json, normalize_metadata
from docs_mcp_core.validation import validate_corpus

CHUNKS_FILENAME = "chunks.json"
_PARALLEL_MIN_FILES = 200
_SHA_RE = re.compile(r"^[0-9a-f]{40}$")


@dataclass
class BuildOptions:
    docs_dir: Path
    out_dir: Path
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


class BuildReporter:
    """Receives progress from a build; the CLI renders it. The default does nothing."""

    def step(self, message: str) -> None: ...

    def progress(self, phase: str, done: int, total: int) -> None: ...

    def warn(self, message: str) -> None: ...


@dataclass
class BuildSummary:
    out_dir: Path
    files: int
    chunks: int
    cached_files: int
    seconds: float
    index_bytes: int
    embedding_hits: int = 0
    embedding_misses: int = 0
    warnings: list[str] = field(default_factory=list)


class CorpusInvalidError(BuildError):
    """The corpus has errors; ``findings`` lists them (the build wrote nothing)."""

    def __init__(self, findings: Sequence[Finding]) -> None:
        errors = [f for f in findings if f.severity == "error"]
        super().__init__(
            f"the corpus has {len(errors)} error(s); fix them (run `docs-mcp validate` for the full list) "
            "and build again:\n" + "\n".join(f.render() for f in errors[:50])
        )
        self.findings = list(findings)


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


def _reuse_cached(
    docs_dir: Path, rel: str, resolver: ManifestResolver, entry: tuple[str, list[Chunk]], title: str | None
) -> ChunkedFile | None:
    """The previous build's result for an unchanged file, without parsing it.

    Files with front matter always go through the parser (their configuration lives in it).
    """
    try:
        raw = (docs_dir / rel).read_bytes()
        markdown = raw.decode("utf-8")
        manifest = resolver.nearest(rel)
    except (OSError, UnicodeDecodeError, FindingError):
        return None
    if markdown.startswith("---"):
        return None
    rel_in_manifest = rel[len(manifest.base) + 1 :] if manifest is not None and manifest.base else rel
    config = resolve_file_config(
        rel_in_manifest,
        manifest.manifest if manifest else None,
        markdown=markdown,
        front_matter=None,
        first_h1=None,
        source=rel,
    )
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
    for name in (f"{LANCEDB_DIRNAME}.tmp", f"{CHUNKS_FILENAME}.tmp", f"{METADATA_FILENAME}.tmp"):
        _remove(out_dir / name)


def build_index(options: BuildOptions, reporter: BuildReporter | None = None) -> BuildSummary:
    """Build (or incrementally rebuild) the index in ``options.out_dir``."""
    rep = reporter or BuildReporter()
    started = time.perf_counter()
    docs_dir = options.docs_dir.resolve()
    out_dir = options.out_dir.resolve()
    if not docs_dir.is_dir():
        raise BuildError(f"--docs-dir '{options.docs_dir}' is not a directory")
    warnings_list: list[str] = []

    def warn(message: str) -> None:
        warnings_list.append(message)
        rep.warn(message)

    # 1. Embedding provider preflight, before anything is written: a missing key fails here; a bad
    #    key, an unknown model or a dimension mismatch fail on one tiny request. When an embedding
    #    cache written for this exact configuration exists, that request waits until some chunk
    #    actually misses the cache (see _embed), so a rebuild with nothing new calls no API at all.
    provider = None
    preflight_pending = False
    if options.embedding_provider.strip().lower() != "none":
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
        cache_parent = (options.cache_dir or out_dir).resolve()
        if not options.rebuild_cache and _embedding_cache_matches(cache_parent, provider.config_fingerprint()):
            preflight_pending = True
        else:
            _preflight(provider, rep)

    if out_dir.exists() and not out_dir.is_dir():
        raise BuildError(f"--out '{options.out_dir}' exists and is not a directory")
    if out_dir.is_dir():
        recover_interrupted_swap(out_dir)
    live_db = out_dir / LANCEDB_DIRNAME

    # 2. Validate and chunk in one pass (the same checks as `docs-mcp validate`), reusing the
    #    previous index's chunks for files that did not change; refuse a corpus with errors.
    cached = {} if options.rebuild_cache else read_cached_chunks(live_db)
    old_titles = _previous_titles(out_dir) if cached else {}
    resolver = ManifestResolver(docs_dir)

    def reuse(rel: str) -> ChunkedFile | None:
        entry = cached.get(rel)
        return _reuse_cached(docs_dir, rel, resolver, entry, old_titles.get(rel)) if entry else None

    rep.step("validating and chunking the corpus")
    with warnings.catch_warnings():
        # chunking workers are forked after lancedb may have been imported; they only parse markdown
        warnings.filterwarnings("ignore", message=".*fork support is experimental.*", category=RuntimeWarning)
        report = validate_corpus(
            docs_dir,
            workers=options.workers,
            keep_chunks=True,
            reuse=reuse if cached else None,
            progress=lambda done, total: rep.progress("chunking", done, total),
        )
    for finding in report.findings:
        if finding.severity == "warning":
            warnings_list.append(finding.render())
    if not report.ok:
        raise CorpusInvalidError(report.findings)
    ordered = report.results
    if not ordered:
        raise BuildError(f"no markdown files found under '{docs_dir}'; nothing to index")
    relpaths = [r.relpath for r in ordered]
    cached_files = sum(1 for r in ordered if r.relpath in cached and not r.findings and r.chunks is cached[r.relpath][1])
    chunks = [c for r in ordered for c in r.chunks]
    rep.step(
        f"chunked {len(relpaths):,} files into {len(chunks):,} chunks ({cached_files:,} unchanged files reused, "
        f"{report.warnings} warnings)"
    )
    out_dir.mkdir(parents=True, exist_ok=True)

    # 4. Embeddings.
    vectors: dict[str, list[float]] | None = None
    hits = misses = 0
    if provider is not None:
        vectors, hits, misses = _embed(provider, chunks, options, out_dir, rep, warn, preflight=preflight_pending)

    # 5. Metadata.
    from docs_mcp_core.prompts import load_prompt_templates

    prompts, prompt_warnings = load_prompt_templates(docs_dir)
    for w in prompt_warnings:
        warn(w)
    meta_raw = _metadata_dict(options, resolver, report, chunks, ordered, prompts, provider, warn)
    metadata = normalize_metadata(meta_raw)
    metadata_text = metadata_to_json(metadata)

    # 6. Write everything beside the live index, then swap.
    tmp_db = out_dir / f"{LANCEDB_DIRNAME}.tmp"
    _remove(tmp_db)
    keys = list(metadata.taxonomy)
    dims = provider.dimensions if provider is not None else None
    fingerprints = {r.relpath: r.fingerprint for r in ordered}
    from docs_mcp_core.ranking import generic_headings

    generic = generic_headings(c.heading for c in chunks)

    def batches() -> Iterator[Any]:
        step = 2000
        for i in range(0, len(chunks), step):
            yield chunks_to_arrow(chunks[i : i + step], keys, fingerprints, vectors, dims, generic)

    write_table(tmp_db, batches(), metadata_keys=keys, vector_dimensions=dims, on_step=lambda s: rep.step(f"index: {s}"))
    _write_json(out_dir / f"{CHUNKS_FILENAME}.tmp", [c.to_dict() for c in chunks])
    _write_text(out_dir / f"{METADATA_FILENAME}.tmp", metadata_text)
    _swap(out_dir)
    elapsed = time.perf_counter() - started
    return BuildSummary(
        out_dir=out_dir,
        files=len(relpaths),
        chunks=len(chunks),
        cached_files=cached_files,
        seconds=elapsed,
        index_bytes=directory_size(out_dir / LANCEDB_DIRNAME)
        + (out_dir / CHUNKS_FILENAME).stat().st_size
        + (out_dir / METADATA_FILENAME).stat().st_size,
        embedding_hits=hits,
        embedding_misses=misses,
        warnings=warnings_list,
    )


def _write_json(path: Path, value: Any) -> None:
    """Stream ``value`` as ``JSON.stringify(value, null, 2)`` (never the whole text in memory)."""
    with open(path, "w", encoding="utf-8", newline="") as fh:
        json.dump(value, fh, indent=2, ensure_ascii=False)
        fh.flush()
        os.fsync(fh.fileno())


def _write_text(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def _swap(out_dir: Path) -> None:
    live, tmp, old = out_dir / LANCEDB_DIRNAME, out_dir / f"{LANCEDB_DIRNAME}.tmp", out_dir / f"{LANCEDB_DIRNAME}.old"
    _remove(old)
    if live.exists():
        live.rename(old)
    tmp.rename(live)
    os.replace(out_dir / f"{CHUNKS_FILENAME}.tmp", out_dir / CHUNKS_FILENAME)
    os.replace(out_dir / f"{METADATA_FILENAME}.tmp", out_dir / METADATA_FILENAME)
    _remove(old)


def _previous_titles(out_dir: Path) -> dict[str, str]:
    try:
        data = json.loads((out_dir / METADATA_FILENAME).read_text(encoding="utf-8"))
        files = data.get("files") or {}
        return {k: v["title"] for k, v in files.items() if isinstance(v, dict) and isinstance(v.get("title"), str)}
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
    from docs_mcp_core.embedding_cache import (
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


def _embed(
    provider: Any,
    chunks: Sequence[Chunk],
    options: BuildOptions,
    out_dir: Path,
    rep: BuildReporter,
    warn: Callable[[str], None],
    *,
    preflight: bool = False,
) -> tuple[dict[str, list[float]], int, int]:
    """Vectors for every chunk through the embedding cache; only cache misses reach the provider.

    With ``preflight`` the provider is checked first, and only if at least one chunk misses the
    cache (a fully cached rebuild makes no request at all).
    """
    from docs_mcp_core.chunking import embedding_input
    from docs_mcp_core.embedding_cache import (
        embed_with_cache,
        embedding_fingerprint,
        format_cache_summary,
        format_embed_summary,
        load_embedding_cache,
        save_embedding_cache,
    )

    cache_parent = (options.cache_dir or out_dir).resolve()
    fingerprint = provider.config_fingerprint()
    cache = None
    if not options.rebuild_cache:
        cache = load_embedding_cache(cache_parent, fingerprint)
        for w in cache.warnings:
            warn(w)
    items = [(c.chunk_id, embedding_input(c)) for c in chunks]
    if preflight:
        cached = cache.entries if cache is not None else {}
        dims = provider.dimensions
        if any(len(cached.get(embedding_fingerprint(fingerprint, text)) or ()) != dims for _, text in items):
            _preflight(provider, rep)
    rep.step(f"embedding {len(items):,} chunks with {provider.name}/{provider.model}")

    def progress(p: Any) -> None:
        rep.progress("embedding", getattr(p, "done", 0), getattr(p, "total", len(items)))

    outcome = embed_with_cache(provider, items, cache, on_progress=progress)
    rep.step(format_cache_summary(outcome))
    summary = format_embed_summary(outcome)
    if summary:
        rep.step(summary)
    failure = save_embedding_cache(cache_parent, fingerprint, outcome.entries)
    if failure:
        warn(failure)
    return outcome.vectors, outcome.hits, outcome.misses


def _metadata_dict(
    options: BuildOptions,
    resolver: ManifestResolver,
    report: Any,
    chunks: Sequence[Chunk],
    ordered: Sequence[ChunkedFile],
    prompts: Sequence[Any],
    provider: Any,
    warn: Callable[[str], None],
) -> dict[str, Any]:
    values: dict[str, set[str]] = {}
    for chunk in chunks:
        for key, value in chunk.metadata.items():
            values.setdefault(key, set()).add(value)
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
            warn(f"taxonomy config key '{key}' does not match any chunk metadata — this configuration has no effect")
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
        for k, v in (("search_docs", options.tool_description_search), ("get_doc", options.tool_description_get_doc))
        if v
    }
    meta: dict[str, Any] = {
        "metadata_version": "1.1.0",
        "corpus_description": options.description,
        "taxonomy": taxonomy,
        "stats": {
            "total_chunks": len(chunks),
            "total_files": len(ordered),
            "indexed_at": options.indexed_at or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
            "source_commit": git_source_commit(options.docs_dir),
        },
        "embedding": (
            {"provider": provider.name, "model": provider.model, "dimensions": provider.dimensions} if provider else None
        ),
    }
    if prompts:
        meta["prompts"] = [p.model_dump(exclude_none=True) if hasattr(p, "model_dump") else p for p in prompts]
    if tool_descriptions:
        meta["tool_descriptions"] = tool_descriptions
    if instructions:
        meta["mcpServerInstructions"] = instructions
    meta["files"] = {r.relpath: {"title": r.title} for r in ordered if r.title}
    meta["index"] = {"engine": "lancedb", "table": TABLE_NAME, "path": LANCEDB_DIRNAME}
    return meta
