"""Choosing a provider by name, and checking it before a build writes anything.

:func:`create_embedding_provider` builds ``none``, ``hash``, ``local`` or ``openai`` from one set of
arguments (each provider takes the ones that apply to it). :func:`check_embedding_provider` embeds one
tiny input, so a bad key, an unknown model or a dimension mismatch fails fast with a clear message.
"""

from __future__ import annotations

import math
import os
from typing import Any

from docs_mcp_core.embedding.hash import HashEmbeddingProvider, NoneEmbeddingProvider
from docs_mcp_core.embedding.local import LocalEmbeddingProvider
from docs_mcp_core.embedding.openai import OpenAIEmbeddingProvider
from docs_mcp_core.embedding.provider import EmbeddingProvider, ProgressCallback, WarningCallback
from docs_mcp_core.errors import EmbeddingError

__all__ = ["PREFLIGHT_INPUT", "PROVIDER_NAMES", "check_embedding_provider", "create_embedding_provider"]

PROVIDER_NAMES: tuple[str, ...] = ("none", "hash", "local", "openai")
PREFLIGHT_INPUT = "docs-mcp embedding preflight"


def create_embedding_provider(
    name: str,
    *,
    model: str | None = None,
    dimensions: int | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
    batch_size: int | None = None,
    concurrency: int | None = None,
    max_retries: int | None = None,
    on_warning: WarningCallback | None = None,
    on_progress: ProgressCallback | None = None,
    **openai_options: Any,
) -> EmbeddingProvider:
    """Build the provider named ``name`` (``none``, ``hash``, ``local`` or ``openai``).

    ``local`` takes ``model`` and ``dimensions`` (checked against the shipped model) and
    ``on_progress``; the API options (key, base URL, batching, retries, timeouts) do not apply to it
    and are ignored, so a query-time caller can pass the same arguments for every provider.

    For ``openai`` the key comes from ``api_key`` or else the ``OPENAI_API_KEY`` environment variable.
    Extra keyword arguments (``timeout``, ``batch_api_threshold``, ``batch_name``, ``retry_*``, ...)
    are passed to :class:`OpenAIEmbeddingProvider`.
    """
    normalized = name.strip().lower() if isinstance(name, str) else name
    if normalized not in PROVIDER_NAMES:
        raise EmbeddingError(
            f"unsupported embedding provider '{name}'. Expected one of: {', '.join(PROVIDER_NAMES)}"
        )
    if normalized == "none":
        return NoneEmbeddingProvider()
    if normalized == "hash":
        return HashEmbeddingProvider(
            dimensions=dimensions if dimensions is not None else 256,
            model=model if model is not None else "hash-v1",
        )
    if normalized == "local":
        return LocalEmbeddingProvider(model=model, dimensions=dimensions, on_progress=on_progress)

    key = (api_key or "").strip() or os.environ.get("OPENAI_API_KEY", "").strip()
    if not key:
        raise EmbeddingError("openai embedding provider requires --embedding-api-key or OPENAI_API_KEY")
    kwargs: dict[str, Any] = dict(openai_options)
    for option, value in (
        ("model", model),
        ("dimensions", dimensions),
        ("base_url", base_url),
        ("batch_size", batch_size),
        ("concurrency", concurrency),
        ("max_retries", max_retries),
        ("on_warning", on_warning),
        ("on_progress", on_progress),
    ):
        if value is not None:
            kwargs[option] = value
    return OpenAIEmbeddingProvider(api_key=key, **kwargs)


def check_embedding_provider(provider: EmbeddingProvider) -> None:
    """Preflight: embed one tiny input and check the answer, before a build writes anything.

    Raises :class:`EmbeddingError` naming the provider, model and what to fix (bad key, unknown model,
    dimension mismatch, unreachable endpoint). The ``none`` provider always passes.
    """
    if provider.name == "none" or provider.dimensions == 0:
        return
    label = (
        f"embedding provider '{provider.name}' (model '{provider.model}', {provider.dimensions} dimensions)"
    )
    try:
        vectors = provider.embed([PREFLIGHT_INPUT])
    except EmbeddingError as exc:
        raise EmbeddingError(f"{label} failed its preflight check: {exc}") from exc
    except Exception as exc:  # an SDK or transport error we did not anticipate: still say what failed
        raise EmbeddingError(f"{label} failed its preflight check: {type(exc).__name__}: {exc}") from exc
    if len(vectors) != 1:
        raise EmbeddingError(
            f"{label} failed its preflight check: expected 1 vector for 1 input, got {len(vectors)}"
        )
    got = len(vectors[0])
    if got != provider.dimensions:
        raise EmbeddingError(
            f"{label} failed its preflight check: embedding dimension mismatch: got {got}-dimensional "
            f"vectors but {provider.dimensions} are configured; set --embedding-dimensions {got}"
        )
    if not all(math.isfinite(x) for x in vectors[0]):
        raise EmbeddingError(f"{label} failed its preflight check: the vector contains NaN or infinity")
