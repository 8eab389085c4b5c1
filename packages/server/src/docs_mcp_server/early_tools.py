"""Answering a stdio client's first tool requests before the MCP SDK has finished importing.

An agent that spawns the server sends ``initialize``, then lists the tools and calls
``search_docs`` at once. The opening request is answered early (:mod:`docs_mcp_server.handshake`)
and the index opens from its derived files in a fraction of a second, but importing the MCP SDK
takes longer than both. So until the SDK runs, :class:`EarlyTools` answers ``tools/list`` (when no
custom tools are configured) and a ``tools/call`` of the search tool itself, with the standard
library and the engine: the same tool list, argument check, search and result (text and
structured content) as the SDK's handlers. Unlike the opening request, neither is replayed into
the SDK (run twice, a search would embed its query twice, which an embeddings API charges for; a
tool list replayed kept its id in flight after the client had its answer): the tests compare both
with the SDK's answers to the same requests.
Anything else (other tools, invalid arguments, a failing search, ``_meta``, a cursor) is left to
the SDK, which answers as always.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from docs_mcp_server.errors import ArgumentError
from docs_mcp_server.handshake import is_modern_meta, modern_result

if TYPE_CHECKING:
    from docs_mcp_server.engine import LazyEngine
    from docs_mcp_server.metadata_view import MetadataView
    from docs_mcp_server.options import ServerOptions


class EarlyTools:
    """``tools/list`` and the search tool, answered without the MCP SDK (see the module's docstring)."""

    def __init__(self, options: ServerOptions, metadata: MetadataView, engine: LazyEngine) -> None:
        self._options = options
        self._metadata = metadata
        self._engine = engine
        self._checker: Any = None
        self._info: dict[str, str] | None = None

    def prepare(self) -> None:
        """Load what answering needs (the arguments check), before the first request arrives."""
        self._arguments()

    def answer(self, message: Any) -> dict[str, Any] | None:
        """The JSON-RPC response to ``message``, or ``None`` when the SDK should answer it.

        A 2026-era client sends its protocol version, name and capabilities in every request's
        ``_meta``; such a request is answered as the SDK answers it on that protocol (a
        ``resultType``, the ``serverInfo`` stamp, a list's freshness hints). Any other ``_meta``
        is the SDK's to honour."""
        if not isinstance(message, Mapping):
            return None
        params = message.get("params")
        method = message.get("method")
        modern = isinstance(params, Mapping) and "_meta" in params
        if modern:
            assert isinstance(params, Mapping)
            if not is_modern_meta(params["_meta"]):
                return None
            params = {key: value for key, value in params.items() if key != "_meta"}
        result = None
        if method == "tools/list" and params in (None, {}) and not self._options.custom_tools:
            result = self._list()
        elif method == "tools/call" and self._is_plain_search(params):
            assert isinstance(params, Mapping)
            result = self._search(params.get("arguments"))
        if result is None:
            return None
        if modern:
            result = modern_result(result, self._server_info(), cacheable=method == "tools/list")
        return {"jsonrpc": "2.0", "id": message.get("id"), "result": result}

    def _server_info(self) -> dict[str, str]:
        if self._info is None:
            build = self._options.build_info()
            self._info = {"name": build.name, "version": build.version}
        return self._info

    def _is_plain_search(self, params: Any) -> bool:
        """A call of the search tool with nothing but arguments (``_meta`` is the SDK's business)."""
        return (
            isinstance(params, Mapping)
            and params.get("name") == self._options.search_tool_name
            and not set(params) - {"name", "arguments"}
        )

    def _list(self) -> dict[str, Any]:
        from docs_mcp_server.schemas import (
            example_chunk_id,
            get_doc_description,
            get_doc_schema,
            search_docs_description,
            vector_search_available,
        )

        options, metadata = self._options, self._metadata
        available = vector_search_available(metadata, options.query_embedding_api_key)
        get_doc = get_doc_schema(example_chunk_id(options.index_dir), self._encoding())
        tools = [
            {
                "name": options.search_tool_name,
                "description": search_docs_description(metadata, vector_search_available=available),
                "inputSchema": dict(self._arguments().schema),
            },
            {
                "name": options.get_doc_tool_name,
                "description": get_doc_description(metadata),
                "inputSchema": get_doc,
            },
        ]
        return {"tools": tools}

    def _search(self, arguments: Any) -> dict[str, Any] | None:
        from docs_mcp_server.arguments import parse_search_request

        try:
            request = parse_search_request(self._arguments(), arguments, list(self._metadata.taxonomy))
        except ArgumentError:
            return None
        try:
            with self._engine.lease() as engine:
                result = engine.search(request.query, **request.search_kwargs())
            data = result.to_dict()
        except Exception:  # noqa: BLE001 - the SDK's handler reports it (index unavailable, ...)
            return None
        return {
            "content": [{"type": "text", "text": result.text()}],
            "structuredContent": data,
            "isError": False,
        }

    def _encoding(self) -> str:
        from docs_mcp_server.options import TOKEN_ENCODINGS

        return self._options.token_encoding or TOKEN_ENCODINGS[0]

    def _arguments(self) -> Any:
        if self._checker is None:
            from docs_mcp_server.arguments import ToolArguments
            from docs_mcp_server.schemas import search_docs_schema

            self._checker = ToolArguments(
                self._options.search_tool_name,
                search_docs_schema(self._metadata, self._encoding()),
                filters=list(self._metadata.taxonomy),
            )
        return self._checker
