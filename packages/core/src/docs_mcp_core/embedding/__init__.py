"""Embedding providers: how chunk text becomes the vectors behind the semantic leg of search.

Four providers exist, chosen by name with :func:`create_embedding_provider`, one module each:

``none`` and ``hash`` (:mod:`.hash`)
    No vectors (the index is lexical only), or deterministic, dependency-free byte-folding vectors
    with no semantic value, so that builds and tests exercise the vector code paths offline.
``local`` (:mod:`.local`)
    all-MiniLM-L6-v2 shipped inside docs-mcp-core and run on the CPU with ONNX Runtime: real
    semantic vectors with no API key and no network.
``openai`` (:mod:`.openai`, and :mod:`.openai_batch` for very large jobs)
    OpenAI's embeddings API through the ``openai`` SDK, batched, concurrent and retried, inputs cut
    at the model's token window; the Batch API above a threshold, resumable.

Every provider satisfies :class:`EmbeddingProvider` (:mod:`.provider`), whose
``config_fingerprint`` changes whenever the vectors it would produce could change; the embedding
cache (:mod:`.cache`) is keyed by it. A build runs :func:`check_embedding_provider`
(:mod:`.factory`) before writing anything, so a bad key, an unknown model or a dimension mismatch
fails fast with a clear message.

Names are imported on first use, each from its own module, so that a server answering searches
imports only the provider its index uses (a lexical index: none of them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from docs_mcp_core.lazy_exports import lazy_exports

__all__ = [
    "DEFAULT_OPENAI_BASE_URL",
    "PREFLIGHT_INPUT",
    "PROVIDER_NAMES",
    "EmbedProgress",
    "EmbeddingProvider",
    "HashEmbeddingProvider",
    "LocalEmbeddingProvider",
    "NoneEmbeddingProvider",
    "OpenAIEmbeddingProvider",
    "OpenAIRequestError",
    "check_embedding_provider",
    "compute_config_fingerprint",
    "create_embedding_provider",
    "format_duration",
    "hash_to_unit_vector",
    "parse_retry_after",
    "sha256hex",
    "to_embedding_input",
]

_LAZY = {
    "DEFAULT_OPENAI_BASE_URL": "docs_mcp_core.embedding.openai",
    "PREFLIGHT_INPUT": "docs_mcp_core.embedding.factory",
    "PROVIDER_NAMES": "docs_mcp_core.embedding.factory",
    "EmbedProgress": "docs_mcp_core.embedding.provider",
    "EmbeddingProvider": "docs_mcp_core.embedding.provider",
    "HashEmbeddingProvider": "docs_mcp_core.embedding.hash",
    "LocalEmbeddingProvider": "docs_mcp_core.embedding.local",
    "NoneEmbeddingProvider": "docs_mcp_core.embedding.hash",
    "OpenAIEmbeddingProvider": "docs_mcp_core.embedding.openai",
    "check_embedding_provider": "docs_mcp_core.embedding.factory",
    "compute_config_fingerprint": "docs_mcp_core.embedding.provider",
    "create_embedding_provider": "docs_mcp_core.embedding.factory",
    "format_duration": "docs_mcp_core.embedding.provider",
    "hash_to_unit_vector": "docs_mcp_core.embedding.hash",
    "parse_retry_after": "docs_mcp_core.embedding.openai",
    "sha256hex": "docs_mcp_core.embedding.provider",
    "to_embedding_input": "docs_mcp_core.embedding.provider",
    "OpenAIRequestError": "docs_mcp_core.errors",
}

if TYPE_CHECKING:
    from docs_mcp_core.embedding.factory import (
        PREFLIGHT_INPUT,
        PROVIDER_NAMES,
        check_embedding_provider,
        create_embedding_provider,
    )
    from docs_mcp_core.embedding.hash import HashEmbeddingProvider, NoneEmbeddingProvider, hash_to_unit_vector
    from docs_mcp_core.embedding.local import LocalEmbeddingProvider
    from docs_mcp_core.embedding.openai import (
        DEFAULT_OPENAI_BASE_URL,
        OpenAIEmbeddingProvider,
        parse_retry_after,
    )
    from docs_mcp_core.embedding.provider import (
        EmbeddingProvider,
        EmbedProgress,
        compute_config_fingerprint,
        format_duration,
        sha256hex,
        to_embedding_input,
    )
    from docs_mcp_core.errors import OpenAIRequestError


__getattr__ = lazy_exports(__name__, _LAZY)
