"""Answering a stdio client's first searches before the MCP SDK has finished importing.

An agent that spawns the server sends ``initialize`` and then, at once, its first ``search_docs``.
The opening request is answered early (:mod:`docs_mcp_server.handshake`), and the index opens from
its derived files in a fraction of a second, but importing the MCP SDK takes longer than both. So
until the SDK runs, :class:`EarlySearch` answers a ``tools/call`` of the search tool itself, with
the standard library and the engine: the same arguments check, the same search, the same result
(text and structured content) as the SDK's handler. Like the opening request, the call is still
replayed into the SDK, whose answer is compared with the early one and dropped. Anything else
(other tools, invalid arguments, a failing search) is left to the SDK, which answers as always.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from docs_mcp_server.errors import ArgumentError

if TYPE_CHECKING:
    from docs_mcp_server.engine import LazyEngine
    from docs_mcp_server.metadata_view import MetadataView
    from docs_mcp_server.options import ServerOptions


class EarlySearch:
    """The search tool, answered without the MCP SDK (see the module's docstring)."""

    def __init__(self, options: ServerOptions, metadata: MetadataView, engine: LazyEngine) -> None:
        self._options = options
        self._metadata = metadata
        self._engine = engine
        self._checker: Any = None

    def answer(self, message: Any) -> dict[str, Any] | None:
        """The JSON-RPC response to ``message``, or ``None`` when the SDK should answer it."""
        if not isinstance(message, Mapping) or message.get("method") != "tools/call":
            return None
        params = message.get("params")
        if not isinstance(params, Mapping) or params.get("name") != self._options.search_tool_name:
            return None
        if set(params) - {"name", "arguments"}:  # _meta (progress tokens, ...): the SDK's business
            return None
        result = self._search(params.get("arguments"))
        if result is None:
            return None
        return {"jsonrpc": "2.0", "id": message.get("id"), "result": result}

    def _search(self, arguments: Any) -> dict[str, Any] | None:
        from docs_mcp_server.arguments import parse_search_request

        try:
            request = parse_search_request(self._arguments(), arguments, list(self._metadata.taxonomy))
        except ArgumentError:
            return None
        try:
            with self._engine.lease() as engine:
                result = engine.search(
                    request.query,
                    limit=request.limit,
                    filters=request.filters,
                    cursor=request.cursor,
                    max_tokens=request.max_tokens,
                    facets=request.facets,
                )
            data = result.to_dict()
        except Exception:  # noqa: BLE001 - the SDK's handler reports it (index unavailable, ...)
            return None
        return {
            "content": [{"type": "text", "text": result.text()}],
            "structuredContent": data,
            "isError": False,
        }

    def _arguments(self) -> Any:
        if self._checker is None:
            from docs_mcp_server.arguments import ToolArguments
            from docs_mcp_server.options import TOKEN_ENCODINGS
            from docs_mcp_server.schemas import search_docs_schema

            encoding = self._options.token_encoding or TOKEN_ENCODINGS[0]
            self._checker = ToolArguments(
                self._options.search_tool_name,
                search_docs_schema(self._metadata, encoding),
                filters=list(self._metadata.taxonomy),
            )
        return self._checker
