"""``GET /healthz``: what a server reports of itself, and the headers every HTTP answer carries.

One body for both answerers of ``/healthz``: :class:`~docs_mcp_server.http_early.EarlyResponder`
before uvicorn runs and :class:`~docs_mcp_server.http_middleware.DocsHttpMiddleware` after, so a
load balancer sees the same answer whichever of them it reached. ``index.status`` is the engine's
own state (:attr:`~docs_mcp_server.engine.LazyEngine.state`): ``ready`` only once the index is
open, so a search sent then is answered.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docs_mcp_server.engine import LazyEngine
    from docs_mcp_server.options import BuildInfo

HEALTH_PATH = "/healthz"


def health_body(
    build: BuildInfo, engine: LazyEngine, stats_at_start: dict[str, Any], worker: dict[str, int] | None = None
) -> dict[str, Any]:
    """Build info, and the state and stats of the index generation being served (after a reload,
    the rebuilt one's; before the index is open, ``stats_at_start``: those of ``metadata.json``)."""
    served = engine.served_metadata
    stats = served.stats.model_dump(mode="json") if served is not None else stats_at_start
    index: dict[str, Any] = {"status": engine.state, "stats": stats}
    generation = engine.served_generation
    if generation is not None:
        index["generation"] = generation
    health: dict[str, Any] = {"build": build.to_dict(), "index": index}
    if worker is not None:  # one of several processes (--workers): which one answered
        health["worker"] = worker
    return health


def header_value(build: BuildInfo) -> bytes:
    """The ``DOCS-MCP`` header's value (``name=... version=... git=... date=...``)."""
    return build.header_value().encode("latin-1", errors="replace")


def common_headers(value: bytes) -> list[tuple[bytes, bytes]]:
    """The headers every answer carries: ``DOCS-MCP`` (``value``) and permissive CORS."""
    return [
        (b"docs-mcp", value),
        (b"access-control-allow-origin", b"*"),
        (b"access-control-expose-headers", b"DOCS-MCP, Mcp-Session-Id"),
    ]


def json_response_parts(
    status: int, body: dict[str, Any], extra: list[tuple[bytes, bytes]] | None = None
) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """``(status, headers, payload)`` of a JSON answer."""
    payload = json.dumps(body, ensure_ascii=False).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    return status, headers + (extra or []), payload
