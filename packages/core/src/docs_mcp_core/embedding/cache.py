"""The embedding cache: rebuilds only pay for the chunks whose embedding input changed.

Each vector is stored under a fingerprint of (cache format, provider configuration, exact embedding
input), never under the chunk id, so a chunk that moves or is renamed keeps its vector, and a
changed provider configuration (model, dimensions, base URL) can never serve stale vectors.

On disk (``<cache_parent>/.embedding-cache/``), the layout is the original docs-mcp's, so either
implementation can reuse the other's cache:

* ``cache-meta.json``: ``{"cache_version": "1", "format_version": "1", "config_fingerprint": ...}``;
* a LanceDB table ``embeddings(fingerprint string, chunk_id string, vector fixed_size_list<float32>)``,
  absent when the cache is empty.

LanceDB was chosen over a bare Arrow/numpy file for that interchangeability; reading the whole
table back is one columnar scan (the vectors come out of a single contiguous float32 buffer).

Writes never damage the live cache: everything goes to ``.embedding-cache.tmp`` with
``cache-meta.json`` written last (its presence marks a complete write), then the live directory is
renamed to ``.embedding-cache.old``, the new one renamed into place and the old one removed. A load
first repairs what an interrupted save can leave behind: if the live directory is missing, a
complete ``.tmp`` (or else the ``.old``) is put back in place; other leftovers are deleted.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from docs_mcp_core.embedding.provider import EmbeddingProvider, EmbedProgress, sha256hex
from docs_mcp_core.errors import EmbeddingError
from docs_mcp_core.index.lancedb_import import import_lancedb
from docs_mcp_core.index.live_files import read_regular_file

__all__ = [
    "CACHE_DIRNAME",
    "CACHE_META_FILE",
    "CACHE_OLD_DIRNAME",
    "CACHE_TABLE_NAME",
    "CACHE_TMP_DIRNAME",
    "CACHE_VERSION",
    "EMBEDDING_FORMAT_VERSION",
    "CacheLoadResult",
    "EmbedOutcome",
    "embed_with_cache",
    "embedding_fingerprint",
    "format_cache_summary",
    "format_embed_summary",
    "load_embedding_cache",
    "save_embedding_cache",
]

Vector: TypeAlias = "list[float] | npt.NDArray[np.float32]"  # one embedding (cached ones are float32 rows)

CACHE_DIRNAME = ".embedding-cache"
CACHE_TMP_DIRNAME = ".embedding-cache.tmp"
CACHE_OLD_DIRNAME = ".embedding-cache.old"
CACHE_META_FILE = "cache-meta.json"
CACHE_TABLE_NAME = "embeddings"
CACHE_VERSION = "1"
EMBEDDING_FORMAT_VERSION = "1"
"""Bumped only if the embedding input changes in a way the input text itself does not capture."""

INVALIDATED = "embedding cache invalidated: "

# Providers without a ``batch_size`` attribute get their misses in slices of this size (progress).
_DEFAULT_SLICE = 1024


def embedding_fingerprint(config_fingerprint: str, embedding_input: str) -> str:
    """Cache key of one embedding input under one provider configuration (chunk id not included)."""
    return sha256hex("\0".join((EMBEDDING_FORMAT_VERSION, config_fingerprint, embedding_input)))


@dataclass
class CacheLoadResult:
    """Vectors read from the cache (fingerprint -> vector) and why, if at all, it was discarded."""

    entries: dict[str, Vector] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


@dataclass
class EmbedOutcome:
    """Result of :func:`embed_with_cache`.

    ``entries`` is exactly what the next :func:`save_embedding_cache` should write: one entry per
    embedding input of this build (so vectors of deleted or edited chunks are pruned).
    """

    vectors: dict[str, Vector]
    hits: int
    misses: int
    entries: dict[str, tuple[str, Vector]]
    elapsed_seconds: float
    provider_name: str = ""
    embedded_inputs: int = 0
    """Distinct inputs actually sent to the provider (misses with identical inputs are sent once)."""

    @property
    def total(self) -> int:
        return self.hits + self.misses

    @property
    def hit_rate(self) -> float:
        return self.hits / self.total * 100 if self.total else 0.0


def format_cache_summary(outcome: EmbedOutcome) -> str:
    """``embedding cache: H hits, M misses (R% hit rate)`` (R with one decimal, as the original)."""
    return f"embedding cache: {outcome.hits} hits, {outcome.misses} misses ({outcome.hit_rate:.1f}% hit rate)"


def format_embed_summary(outcome: EmbedOutcome) -> str | None:
    """``embedded M chunks via <provider> in S.Ss``, or ``None`` when nothing was embedded."""
    if outcome.misses == 0:
        return None
    return f"embedded {outcome.misses} chunks via {outcome.provider_name} in {outcome.elapsed_seconds:.1f}s"


# --------------------------------------------------------------------------------------------------
# load / save


def _rmtree(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.exists():
        shutil.rmtree(path, ignore_errors=True)


def _recover_interrupted_save(cache_parent: Path) -> None:
    """Undo what a save interrupted between its two renames leaves, then drop leftovers."""
    live = cache_parent / CACHE_DIRNAME
    tmp = cache_parent / CACHE_TMP_DIRNAME
    old = cache_parent / CACHE_OLD_DIRNAME
    if not live.exists():
        # Crash after "live -> .old" and before ".tmp -> live": prefer the finished new cache.
        if (tmp / CACHE_META_FILE).is_file():
            os.replace(tmp, live)
        elif old.is_dir():
            os.replace(old, live)
    _rmtree(tmp)
    _rmtree(old)


def _read_table(cache_dir: Path) -> dict[str, Vector] | None:
    """The cached vectors, or ``None`` when the meta is valid but no table was written."""
    if not (cache_dir / f"{CACHE_TABLE_NAME}.lance").exists():
        return None
    db = import_lancedb().connect(str(cache_dir))
    table = db.open_table(CACHE_TABLE_NAME).to_arrow()
    fingerprints = table.column("fingerprint").to_pylist()
    column = table.column("vector").combine_chunks()
    if len(fingerprints) == 0:
        return {}
    rows: Sequence[Vector]
    if pa.types.is_fixed_size_list(column.type) and column.null_count == 0:
        # rows are views of one float32 matrix: 1 KB per 256-d vector (Python floats took 8 KB)
        width = column.type.list_size
        flat = column.flatten().to_numpy(zero_copy_only=False)
        matrix = np.asarray(flat, dtype=np.float32).reshape(len(fingerprints), width)
        rows = list(matrix)
    else:
        rows = [np.asarray(v, dtype=np.float32) if v else [] for v in column.to_pylist()]
    entries: dict[str, Vector] = {}
    for fingerprint, vector in zip(fingerprints, rows, strict=True):
        if isinstance(fingerprint, str) and len(vector):
            entries[fingerprint] = vector
    return entries


def load_embedding_cache(cache_parent: Path, config_fingerprint: str) -> CacheLoadResult:
    """Read ``<cache_parent>/.embedding-cache`` for a provider whose fingerprint is ``config_fingerprint``.

    A missing cache gives an empty result without warnings. A cache that cannot be used (no or
    corrupt meta, other cache/format version, other provider configuration, unreadable table) is
    deleted and reported in ``warnings`` with the original's wording, prefixed
    ``embedding cache invalidated: ``.
    """
    cache_parent = Path(cache_parent)
    result = CacheLoadResult()
    _recover_interrupted_save(cache_parent)
    cache_dir = cache_parent / CACHE_DIRNAME
    meta_path = cache_dir / CACHE_META_FILE

    def invalidate(reason: str) -> CacheLoadResult:
        result.warnings.append(INVALIDATED + reason)
        _rmtree(cache_dir)
        result.entries = {}
        return result

    if not meta_path.exists():
        if cache_dir.exists():
            return invalidate("cache-meta.json missing but cache directory exists")
        return result
    # only a regular file is read: a named pipe left there made the build wait on it forever
    meta_bytes = read_regular_file(meta_path)
    if meta_bytes is None:
        return invalidate("cache-meta.json is not a regular file")
    try:
        meta_raw = meta_bytes.decode("utf-8")
    except UnicodeDecodeError:
        return invalidate("corrupt cache-meta.json")

    try:
        meta = json.loads(meta_raw)
    except (ValueError, RecursionError):  # RecursionError: nested too deeply to parse
        return invalidate("corrupt cache-meta.json")
    if not isinstance(meta, dict):
        return invalidate("corrupt cache-meta.json")

    cache_version = meta.get("cache_version")
    if not isinstance(cache_version, str) or cache_version.split(".")[0] != CACHE_VERSION.split(".")[0]:
        return invalidate(f"cache_version mismatch (got {cache_version}, expected {CACHE_VERSION})")
    format_version = meta.get("format_version")
    if format_version != EMBEDDING_FORMAT_VERSION:
        return invalidate(
            f"format_version mismatch (got {format_version}, expected {EMBEDDING_FORMAT_VERSION})"
        )
    if meta.get("config_fingerprint") != config_fingerprint:
        return invalidate("config_fingerprint mismatch (provider config changed)")

    try:
        entries = _read_table(cache_dir)
    except Exception:  # noqa: BLE001 - any LanceDB / Arrow / IO failure: the table is unusable
        return invalidate("failed to read cache table")
    result.entries = entries or {}
    return result


def _write_table(directory: Path, entries: Mapping[str, tuple[str, Vector]]) -> None:
    fingerprints = list(entries)
    chunk_ids = [entries[fp][0] for fp in fingerprints]
    vectors = [entries[fp][1] for fp in fingerprints]
    width = len(vectors[0])
    if width == 0 or any(len(v) != width for v in vectors):
        raise ValueError("cached vectors must all have the same, non-zero length")
    flat = pa.array(np.asarray(vectors, dtype=np.float32).reshape(-1), type=pa.float32())
    table = pa.table(
        {
            "fingerprint": pa.array(fingerprints, type=pa.string()),
            "chunk_id": pa.array(chunk_ids, type=pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(flat, width),
        }
    )
    db = import_lancedb().connect(str(directory))
    db.create_table(CACHE_TABLE_NAME, data=table, mode="overwrite")


def save_embedding_cache(
    cache_parent: Path,
    config_fingerprint: str,
    entries: Mapping[str, tuple[str, Vector]],
) -> str | None:
    """Replace the cache with ``entries`` (fingerprint -> (chunk_id, vector)).

    Returns ``None`` on success, or a warning (``failed to write embedding cache: ...``) when the
    cache could not be written; the previous cache is then left as it was. Never raises for I/O.
    """
    cache_parent = Path(cache_parent)
    live = cache_parent / CACHE_DIRNAME
    tmp = cache_parent / CACHE_TMP_DIRNAME
    old = cache_parent / CACHE_OLD_DIRNAME
    try:
        cache_parent.mkdir(parents=True, exist_ok=True)
        _rmtree(tmp)
        _rmtree(old)
        tmp.mkdir()
        if entries:
            _write_table(tmp, entries)
        meta = {
            "cache_version": CACHE_VERSION,
            "format_version": EMBEDDING_FORMAT_VERSION,
            "config_fingerprint": config_fingerprint,
        }
        meta_tmp = tmp / (CACHE_META_FILE + ".part")
        with open(meta_tmp, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(meta, indent=2))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(meta_tmp, tmp / CACHE_META_FILE)
        if live.exists():
            os.replace(live, old)
        os.replace(tmp, live)
    except Exception as exc:  # noqa: BLE001 - a cache write must never fail the build
        if not live.exists() and old.is_dir():
            with contextlib.suppress(OSError):
                os.replace(old, live)
        _rmtree(tmp)
        return f"failed to write embedding cache: {exc}"
    _rmtree(old)
    return None


# --------------------------------------------------------------------------------------------------
# incremental embedding


def _slice_size(provider: EmbeddingProvider) -> int:
    batch_size = getattr(provider, "batch_size", None)
    concurrency = getattr(provider, "concurrency", 1)
    if isinstance(batch_size, int) and batch_size > 0:
        return batch_size * (concurrency if isinstance(concurrency, int) and concurrency > 0 else 1)
    return _DEFAULT_SLICE


def embed_with_cache(
    provider: EmbeddingProvider,
    items: Sequence[tuple[str, str]],
    cache: CacheLoadResult | None,
    on_progress: Callable[[EmbedProgress], None] | None = None,
) -> EmbedOutcome:
    """Vectors for ``items`` (``(chunk_id, embedding_input)`` pairs), calling the provider for misses only.

    Misses go to the provider in slices of ``batch_size * concurrency`` inputs, so its concurrent
    requests stay busy and ``on_progress`` reports after every slice; when the misses reach the
    provider's ``batch_api_threshold`` they go in one call (the Batch API path). Identical inputs
    are embedded once. Cached vectors whose length does not match the provider are treated as misses.
    """
    started = time.perf_counter()
    config = provider.config_fingerprint()
    dims = provider.dimensions
    cached = cache.entries if cache is not None else {}

    fingerprints = [embedding_fingerprint(config, text) for _, text in items]
    resolved: dict[str, Vector] = {}
    hits = 0
    miss_inputs: dict[str, str] = {}  # fingerprint -> input, first occurrence order
    for (_, text), fp in zip(items, fingerprints, strict=True):
        vector = cached.get(fp)
        if vector is not None and len(vector) == dims:
            resolved[fp] = vector
            hits += 1
        else:
            miss_inputs.setdefault(fp, text)
    misses = len(items) - hits
    total = len(items)

    pending = list(miss_inputs.items())
    if pending:
        threshold = getattr(provider, "batch_api_threshold", 0)
        if isinstance(threshold, int) and threshold > 0 and len(pending) >= threshold:
            step = len(pending)
        else:
            step = _slice_size(provider)
        done = 0
        for start in range(0, len(pending), step):
            part = pending[start : start + step]
            vectors = provider.embed([text for _, text in part])
            if len(vectors) != len(part):
                raise EmbeddingError(
                    f"embedding provider '{provider.name}' returned {len(vectors)} vectors for {len(part)} inputs"
                )
            for (fp, _), vector in zip(part, vectors, strict=True):
                resolved[fp] = vector
            done += len(part)
            if on_progress is not None:
                # Count chunks, not distinct inputs: duplicates resolve together with their first copy.
                embedded_chunks = min(misses, round(done * misses / len(pending)))
                on_progress(
                    EmbedProgress(phase="embedding", done=hits + embedded_chunks, total=total, cached=hits)
                )

    vectors_by_chunk: dict[str, Vector] = {}
    entries: dict[str, tuple[str, Vector]] = {}
    for (chunk_id, _), fp in zip(items, fingerprints, strict=True):
        vector = resolved[fp]
        vectors_by_chunk[chunk_id] = vector
        entries.setdefault(fp, (chunk_id, vector))

    return EmbedOutcome(
        vectors=vectors_by_chunk,
        hits=hits,
        misses=misses,
        entries=entries,
        elapsed_seconds=time.perf_counter() - started,
        provider_name=provider.name,
        embedded_inputs=len(pending),
    )
