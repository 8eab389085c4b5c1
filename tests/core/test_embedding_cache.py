"""The on-disk embedding cache and incremental embedding."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from docs_mcp_core.embedding import (
    EmbedProgress,
    HashEmbeddingProvider,
    OpenAIEmbeddingProvider,
    to_embedding_input,
)
from docs_mcp_core.embedding.cache import (
    CACHE_DIRNAME,
    CACHE_OLD_DIRNAME,
    CACHE_TMP_DIRNAME,
    CacheLoadResult,
    EmbedOutcome,
    embed_with_cache,
    embedding_fingerprint,
    format_cache_summary,
    format_embed_summary,
    load_embedding_cache,
    save_embedding_cache,
)
from docs_mcp_core.errors import EmbeddingError
from tests.fakes.openai_server import FakeOpenAI
from tests.support.hostile_json import TOO_DEEP

CHUNKS = [
    ("a.md#intro", to_embedding_input("a.md > Intro", "Welcome to the SDK.")),
    ("a.md#auth", to_embedding_input("a.md > Auth", "Pass an API key.")),
    ("b.md#retries", to_embedding_input("b.md > Retries", "Retries use backoff.")),
]


class RecordingHash(HashEmbeddingProvider):
    """The real hash provider, remembering what it was asked to embed."""

    def __init__(self, dimensions: int = 16, batch_api_threshold: int = 0) -> None:
        super().__init__(dimensions=dimensions)
        self.calls: list[list[str]] = []
        self.batch_api_threshold = batch_api_threshold

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return super().embed(texts)


def f32(vector: list[float]) -> list[float]:
    return np.asarray(vector, dtype=np.float32).astype(np.float64).tolist()


def build(
    parent: Path, provider: RecordingHash | OpenAIEmbeddingProvider, items: Sequence[tuple[str, str]]
) -> EmbedOutcome:
    """One build's embedding step: load, embed misses, save."""
    cache = load_embedding_cache(parent, provider.config_fingerprint())
    assert cache.warnings == []
    outcome = embed_with_cache(provider, items, cache)
    assert save_embedding_cache(parent, provider.config_fingerprint(), outcome.entries) is None
    return outcome


@pytest.fixture
def saved(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    provider = RecordingHash()
    build(tmp_path, provider, CHUNKS)
    yield tmp_path, provider.config_fingerprint()


# --------------------------------------------------------------------------------------------------
# fingerprints and summaries


def test_fingerprint_formula_and_independence_from_chunk_id() -> None:
    cfg = "c" * 64
    text = CHUNKS[0][1]
    assert embedding_fingerprint(cfg, text) == hashlib.sha256(f"1\0{cfg}\0{text}".encode()).hexdigest()
    provider = RecordingHash()
    first = embed_with_cache(provider, [("x.md#one", text)], None)
    second = embed_with_cache(
        provider,
        [("renamed.md#two", text)],
        CacheLoadResult(entries={fp: vec for fp, (_, vec) in first.entries.items()}),
    )
    assert second.hits == 1 and second.misses == 0
    assert second.vectors == {"renamed.md#two": first.vectors["x.md#one"]}


def test_summaries() -> None:
    outcome = EmbedOutcome(
        vectors={}, hits=3, misses=1, entries={}, elapsed_seconds=2.345, provider_name="openai"
    )
    assert format_cache_summary(outcome) == "embedding cache: 3 hits, 1 misses (75.0% hit rate)"
    assert format_embed_summary(outcome) == "embedded 1 chunks via openai in 2.3s"
    empty = EmbedOutcome(vectors={}, hits=0, misses=0, entries={}, elapsed_seconds=0.0)
    assert format_cache_summary(empty) == "embedding cache: 0 hits, 0 misses (0.0% hit rate)"
    assert format_embed_summary(empty) is None


# --------------------------------------------------------------------------------------------------
# save / load


def test_round_trip_and_on_disk_layout(saved: tuple[Path, str]) -> None:
    parent, cfg = saved
    cache_dir = parent / CACHE_DIRNAME
    meta = (cache_dir / "cache-meta.json").read_text()
    assert meta == json.dumps(
        {"cache_version": "1", "format_version": "1", "config_fingerprint": cfg}, indent=2
    )
    loaded = load_embedding_cache(parent, cfg)
    assert loaded.warnings == []
    expected = {
        embedding_fingerprint(cfg, text): f32(v)
        for (_, text), v in zip(
            CHUNKS, HashEmbeddingProvider(dimensions=16).embed([t for _, t in CHUNKS]), strict=True
        )
    }
    assert {fp: [float(x) for x in v] for fp, v in loaded.entries.items()} == expected

    import lancedb

    table = lancedb.connect(str(cache_dir)).open_table("embeddings").to_arrow()
    assert table.schema.names == ["fingerprint", "chunk_id", "vector"]
    assert table.schema.field("vector").type == pa.list_(pa.float32(), 16)
    assert sorted(table.column("chunk_id").to_pylist()) == sorted(cid for cid, _ in CHUNKS)


def test_missing_cache_is_silent(tmp_path: Path) -> None:
    result = load_embedding_cache(tmp_path, "cfg")
    assert (result.entries, result.warnings) == ({}, [])


def test_empty_save_writes_only_the_meta(tmp_path: Path) -> None:
    assert save_embedding_cache(tmp_path, "cfg", {}) is None
    assert [p.name for p in (tmp_path / CACHE_DIRNAME).iterdir()] == ["cache-meta.json"]
    result = load_embedding_cache(tmp_path, "cfg")
    assert (result.entries, result.warnings) == ({}, [])


def _invalidated(parent: Path, cfg: str, reason: str) -> None:
    result = load_embedding_cache(parent, cfg)
    assert result.entries == {}
    assert result.warnings == [f"embedding cache invalidated: {reason}"]
    assert not (parent / CACHE_DIRNAME).exists()


def test_meta_missing_but_directory_present(saved: tuple[Path, str]) -> None:
    parent, cfg = saved
    (parent / CACHE_DIRNAME / "cache-meta.json").unlink()
    _invalidated(parent, cfg, "cache-meta.json missing but cache directory exists")


@pytest.mark.parametrize("text", ["{not json", TOO_DEEP])  # TOO_DEEP: "failed unexpectedly: RecursionError"
def test_corrupt_meta(saved: tuple[Path, str], text: str) -> None:
    parent, cfg = saved
    (parent / CACHE_DIRNAME / "cache-meta.json").write_text(text)
    _invalidated(parent, cfg, "corrupt cache-meta.json")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_at_the_meta_is_not_waited_on(saved: tuple[Path, str]) -> None:
    # opening a named pipe for reading waits for a writer: the build waited forever
    parent, cfg = saved
    meta = parent / CACHE_DIRNAME / "cache-meta.json"
    meta.unlink()
    os.mkfifo(meta)
    with ThreadPoolExecutor(1) as pool:
        loading = pool.submit(_invalidated, parent, cfg, "cache-meta.json is not a regular file")
        try:
            loading.result(timeout=30)
        finally:
            if not loading.done():  # let a reader stuck in open() go, so the test ends and fails
                with open(os.open(meta, os.O_WRONLY | os.O_NONBLOCK), "wb"):
                    pass


def _rewrite_meta(parent: Path, **changes: object) -> None:
    path = parent / CACHE_DIRNAME / "cache-meta.json"
    meta = json.loads(path.read_text())
    meta.update(changes)
    path.write_text(json.dumps(meta))


def test_cache_version_mismatch(saved: tuple[Path, str]) -> None:
    parent, cfg = saved
    _rewrite_meta(parent, cache_version="2")
    _invalidated(parent, cfg, "cache_version mismatch (got 2, expected 1)")


def test_cache_minor_version_is_compatible(saved: tuple[Path, str]) -> None:
    parent, cfg = saved
    _rewrite_meta(parent, cache_version="1.4")
    result = load_embedding_cache(parent, cfg)
    assert result.warnings == [] and len(result.entries) == 3


def test_format_version_mismatch(saved: tuple[Path, str]) -> None:
    parent, cfg = saved
    _rewrite_meta(parent, format_version="0")
    _invalidated(parent, cfg, "format_version mismatch (got 0, expected 1)")


def test_config_fingerprint_mismatch(saved: tuple[Path, str]) -> None:
    parent, _ = saved
    other = HashEmbeddingProvider(dimensions=32).config_fingerprint()
    _invalidated(parent, other, "config_fingerprint mismatch (provider config changed)")


def test_unreadable_table(saved: tuple[Path, str]) -> None:
    parent, cfg = saved
    table_dir = parent / CACHE_DIRNAME / "embeddings.lance"
    for data_file in (table_dir / "data").iterdir():
        data_file.write_bytes(b"garbage")
    _invalidated(parent, cfg, "failed to read cache table")


def test_meta_without_table_is_an_empty_cache(saved: tuple[Path, str]) -> None:
    parent, cfg = saved
    shutil.rmtree(parent / CACHE_DIRNAME / "embeddings.lance")
    result = load_embedding_cache(parent, cfg)
    assert (result.entries, result.warnings) == ({}, [])


# --------------------------------------------------------------------------------------------------
# interrupted writes


def test_leftover_tmp_and_old_are_removed(saved: tuple[Path, str]) -> None:
    parent, cfg = saved
    (parent / CACHE_TMP_DIRNAME).mkdir()
    (parent / CACHE_TMP_DIRNAME / "half-written").write_text("x")
    shutil.copytree(parent / CACHE_DIRNAME, parent / CACHE_OLD_DIRNAME)
    result = load_embedding_cache(parent, cfg)
    assert result.warnings == [] and len(result.entries) == 3
    assert not (parent / CACHE_TMP_DIRNAME).exists() and not (parent / CACHE_OLD_DIRNAME).exists()


def test_crash_between_renames_restores_the_old_cache(saved: tuple[Path, str]) -> None:
    parent, cfg = saved
    # live -> .old happened, the new .tmp never got its meta (incomplete), then the process died.
    (parent / CACHE_DIRNAME).rename(parent / CACHE_OLD_DIRNAME)
    (parent / CACHE_TMP_DIRNAME).mkdir()
    result = load_embedding_cache(parent, cfg)
    assert result.warnings == [] and len(result.entries) == 3
    assert (parent / CACHE_DIRNAME).is_dir() and not (parent / CACHE_OLD_DIRNAME).exists()


def test_crash_between_renames_promotes_a_complete_new_cache(saved: tuple[Path, str]) -> None:
    parent, cfg = saved
    provider = RecordingHash()
    newer = embed_with_cache(provider, CHUNKS[:1], None)
    staging = parent / "staging"
    assert save_embedding_cache(staging, cfg, newer.entries) is None
    (parent / CACHE_DIRNAME).rename(parent / CACHE_OLD_DIRNAME)
    (staging / CACHE_DIRNAME).rename(parent / CACHE_TMP_DIRNAME)
    result = load_embedding_cache(parent, cfg)
    assert result.warnings == [] and len(result.entries) == 1
    assert not (parent / CACHE_TMP_DIRNAME).exists() and not (parent / CACHE_OLD_DIRNAME).exists()


def test_failed_save_is_a_warning_and_keeps_the_previous_cache(saved: tuple[Path, str]) -> None:
    parent, cfg = saved
    bad = {"fp1": ("a", [1.0, 2.0]), "fp2": ("b", [1.0])}  # ragged vectors cannot be stored
    warning = save_embedding_cache(parent, cfg, bad)
    assert warning is not None and warning.startswith("failed to write embedding cache: ")
    result = load_embedding_cache(parent, cfg)
    assert result.warnings == [] and len(result.entries) == 3
    assert not (parent / CACHE_TMP_DIRNAME).exists()


def test_unwritable_location_is_a_warning(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    warning = save_embedding_cache(blocker, "cfg", {"fp": ("a", [1.0])})
    assert warning is not None and warning.startswith("failed to write embedding cache: ")


# --------------------------------------------------------------------------------------------------
# incremental embedding


def test_prune_keeps_only_the_current_build(tmp_path: Path) -> None:
    provider = RecordingHash()
    build(tmp_path, provider, CHUNKS)
    outcome = build(tmp_path, provider, CHUNKS[:2])
    assert outcome.hits == 2 and outcome.misses == 0
    loaded = load_embedding_cache(tmp_path, provider.config_fingerprint())
    cfg = provider.config_fingerprint()
    assert set(loaded.entries) == {embedding_fingerprint(cfg, text) for _, text in CHUNKS[:2]}


@pytest.mark.integration
def test_same_inputs_twice_make_no_api_calls_and_one_edit_one_call(tmp_path: Path) -> None:
    with FakeOpenAI() as api:
        provider = OpenAIEmbeddingProvider(
            api_key=api.api_key,
            base_url=api.base_url,
            model="text-embedding-3-small",
            dimensions=8,
            batch_size=2,
        )
        first = build(tmp_path, provider, CHUNKS)
        assert (first.hits, first.misses) == (0, 3)
        assert sorted(x for r in api.embedding_inputs for x in r) == sorted(t for _, t in CHUNKS)
        calls = len(api.requests)

        second = build(tmp_path, provider, CHUNKS)
        assert (second.hits, second.misses) == (3, 0)
        assert len(api.requests) == calls  # zero requests
        assert {cid: [float(x) for x in v] for cid, v in second.vectors.items()} == {
            cid: f32([float(x) for x in v]) for cid, v in first.vectors.items()
        }

        edited = to_embedding_input("a.md > Auth", "Pass an API key or a bearer token.")
        third = build(tmp_path, provider, [CHUNKS[0], ("a.md#auth", edited), CHUNKS[2]])
        assert (third.hits, third.misses) == (2, 1)
        assert api.embedding_inputs[calls:] == [[edited]]
        assert format_cache_summary(third) == "embedding cache: 2 hits, 1 misses (66.7% hit rate)"


@pytest.mark.integration
def test_progress_after_each_slice(tmp_path: Path) -> None:
    with FakeOpenAI() as api:
        provider = OpenAIEmbeddingProvider(
            api_key=api.api_key,
            base_url=api.base_url,
            model="text-embedding-3-small",
            dimensions=8,
            batch_size=2,
            concurrency=1,
        )
        items = [(f"c{i}", f"text {i}") for i in range(5)]
        cache = CacheLoadResult(entries={})
        warm = embed_with_cache(provider, items[:1], None)
        cache.entries = {fp: v for fp, (_, v) in warm.entries.items()}
        events: list[EmbedProgress] = []
        outcome = embed_with_cache(provider, items, cache, on_progress=events.append)
    assert (outcome.hits, outcome.misses) == (1, 4)
    assert [(e.done, e.total, e.cached) for e in events] == [(3, 5, 1), (5, 5, 1)]


def test_misses_at_the_batch_threshold_go_in_one_call() -> None:
    provider = RecordingHash(batch_api_threshold=3)
    items = [(f"c{i}", f"text {i}") for i in range(4)]
    embed_with_cache(provider, items, None)
    assert len(provider.calls) == 1 and len(provider.calls[0]) == 4


def test_identical_inputs_are_embedded_once() -> None:
    provider = RecordingHash()
    text = to_embedding_input("x.md", "same")
    outcome = embed_with_cache(provider, [("x.md#a", text), ("x.md#b", text)], None)
    assert provider.calls == [[text]]
    assert (outcome.hits, outcome.misses, outcome.embedded_inputs) == (0, 2, 1)
    assert outcome.vectors["x.md#a"] == outcome.vectors["x.md#b"]
    assert len(outcome.entries) == 1


def test_cached_vectors_of_the_wrong_size_are_misses() -> None:
    provider = RecordingHash(dimensions=16)
    cfg = provider.config_fingerprint()
    stale = CacheLoadResult(entries={embedding_fingerprint(cfg, CHUNKS[0][1]): [1.0, 0.0]})
    outcome = embed_with_cache(provider, CHUNKS[:1], stale)
    assert (outcome.hits, outcome.misses) == (0, 1)
    assert len(outcome.vectors[CHUNKS[0][0]]) == 16


def test_provider_returning_too_few_vectors_is_an_error() -> None:
    class Short(RecordingHash):
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            return super().embed(texts)[:-1]

    with pytest.raises(EmbeddingError, match="returned 1 vectors for 2 inputs"):
        embed_with_cache(Short(), CHUNKS[:2], None)
