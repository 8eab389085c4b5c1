"""What a server does while it starts: it loads the shipped model its searches embed queries with as
soon as it has read ``metadata.json`` (every provider of that model in the process shares the one
copy), and it runs without the cyclic garbage collector until it is up."""

from __future__ import annotations

import copy
import gc
import logging
import shutil
import threading
import weakref
from pathlib import Path
from typing import Any

import pytest

from docs_mcp_core.embedding import local_model
from docs_mcp_core.embedding.local import LocalEmbeddingProvider, resolve_local_model
from docs_mcp_core.embedding.wordpiece import QueryPieces
from docs_mcp_core.manifest import MAX_TOOL_TEXT_LENGTH
from docs_mcp_core.metadata import normalize_metadata
from docs_mcp_server.metadata_view import MAX_SERVED_TEXT, MetadataView
from docs_mcp_server.serve import collect_from_now_on, models_to_preload
from tests.support.index_stubs import metadata_document

MODEL = {"provider": "local", "model": "all-MiniLM-L6-v2", "dimensions": 384}


def _view(**overrides: Any) -> MetadataView:
    return MetadataView.from_metadata(normalize_metadata(metadata_document(**overrides)))


def test_the_models_preloaded_are_those_a_search_embeds_its_query_with() -> None:
    default_build = _view(heading_vectors=MODEL)
    assert default_build.local_models == (("headings", "all-MiniLM-L6-v2"),)
    assert models_to_preload(default_build, None) == ["all-MiniLM-L6-v2"]
    assert models_to_preload(default_build, "original") == []  # no heading-path leg
    local_build = _view(embedding=MODEL, heading_vectors=MODEL)
    assert models_to_preload(local_build, "original") == ["all-MiniLM-L6-v2"]
    assert models_to_preload(local_build, "default") == ["all-MiniLM-L6-v2"]  # once
    assert models_to_preload(_view(), None) == []  # lexical: nothing to load


def test_providers_of_one_model_share_one_copy_freed_with_the_last_of_them(tmp_path: Path) -> None:
    shipped = resolve_local_model(None)
    for name in (shipped.onnx_file, "tokenizer.json"):  # a copy no other test holds loaded
        shutil.copyfile(shipped.directory() / name, tmp_path / name)

    def provider() -> LocalEmbeddingProvider:
        made = LocalEmbeddingProvider(threads=1)
        spec = copy.copy(shipped)
        spec.directory = lambda: tmp_path  # type: ignore[method-assign]
        made.spec = spec
        return made

    first, second = provider(), provider()
    vector = first.embed_query("retry configuration")
    assert vector.shape == (384,)
    assert not second.loaded
    assert second.embed_query("retry configuration").tolist() == vector.tolist()
    assert second._held is first._held and first._held is not None  # one session and tokenizer
    held = weakref.ref(first._held.session)
    del first, second
    gc.collect()
    assert held() is None  # a build frees the model before it makes its largest parts


def test_the_models_session_is_built_beside_the_reading_of_its_vocabulary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ONNX Runtime builds the session without the interpreter's lock: the vocabulary is read meanwhile
    shipped = resolve_local_model(None)
    for name in (shipped.onnx_file, "tokenizer.json"):  # a copy no other test holds loaded
        shutil.copyfile(shipped.directory() / name, tmp_path / name)
    spec = copy.copy(shipped)
    spec.directory = lambda: tmp_path  # type: ignore[method-assign]
    threads: dict[str, str] = {}
    session, pieces = local_model._load_session, QueryPieces.load

    def recorded_session(path: Path) -> Any:
        threads["session"] = threading.current_thread().name
        return session(path)

    def recorded_pieces(path: Path, max_tokens: int) -> Any:
        threads["vocabulary"] = threading.current_thread().name
        return pieces(path, max_tokens)

    monkeypatch.setattr(local_model, "_load_session", recorded_session)
    monkeypatch.setattr(QueryPieces, "load", recorded_pieces)
    loaded = local_model.load_model(spec)
    assert threads["vocabulary"] == threading.current_thread().name
    assert threads["session"].startswith("docs-mcp-model-load")
    assert loaded.query_ids("retry configuration") == loaded.tokenizer.encode("retry configuration").ids


def test_text_longer_than_a_build_writes_is_served_cut_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # an index built before the cap (or by the original) gave every client megabytes in initialize
    assert MAX_SERVED_TEXT == MAX_TOOL_TEXT_LENGTH
    long = "x" * (MAX_SERVED_TEXT + 10)
    with caplog.at_level(logging.WARNING):
        view = _view(mcpServerInstructions=long, tool_descriptions={"search_docs": long})
    assert view.instructions == long[:MAX_SERVED_TEXT]
    assert view.tool_description("search_docs") == long[:MAX_SERVED_TEXT]
    assert sum("serving its first 32,768" in r.getMessage() for r in caplog.records) == 2
    assert _view(mcpServerInstructions="short").instructions == "short"


def test_the_collector_turned_off_for_start_up_comes_back_on_with_start_up_frozen() -> None:
    frozen = gc.get_freeze_count()
    collect_from_now_on()  # the collector is on (as in any process but the server's start): no-op
    assert gc.isenabled() and gc.get_freeze_count() == frozen
    gc.disable()  # as docs-mcp-server's entry point does
    try:
        collect_from_now_on()
        assert gc.isenabled()
        assert gc.get_freeze_count() > frozen  # what start-up made is out of the collector's reach
    finally:
        gc.enable()
        gc.unfreeze()
