"""A server starts loading the shipped model its searches embed queries with as soon as it has read
``metadata.json``, and every provider of that model in the process shares the one loaded copy."""

from __future__ import annotations

from typing import Any

from docs_mcp_core.embedding.local import LocalEmbeddingProvider
from docs_mcp_core.metadata import normalize_metadata
from docs_mcp_server.metadata_view import MetadataView
from docs_mcp_server.serve import models_to_preload
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


def test_providers_of_one_model_share_its_session_and_tokenizer() -> None:
    first, second = LocalEmbeddingProvider(), LocalEmbeddingProvider(threads=1)
    assert first.embed_query("retry configuration").shape == (384,)
    assert not second.loaded
    assert (
        second.embed_query("retry configuration").tolist()
        == first.embed_query("retry configuration").tolist()
    )
    assert second._session is first._session and second._tokenizer is first._tokenizer
