"""Answering a stdio client's opening request before the MCP SDK has finished importing.

Importing the MCP SDK takes most of a stdio server's start-up time (0.5-1 s), yet the answer to the
opening request (``initialize`` for handshake-era clients, ``server/discover`` for 2026-07-28
clients) depends only on the server's name, version, instructions and capabilities, which are known
from ``metadata.json`` alone. :class:`EarlyHandshake` builds that answer with the standard library,
so agents see the server respond within a couple of hundred milliseconds of spawning it.

The request is still replayed into the SDK once it is ready (so its connection state is exactly as
if it had answered), and the SDK's own answer is compared with the early one and then dropped; any
difference is logged. Requests the early path is not sure about are left to the SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Mirrors mcp_types.version (mcp 2.3); a test checks these against the installed SDK.
HANDSHAKE_PROTOCOL_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_PROTOCOL_VERSIONS: tuple[str, ...] = ("2026-07-28",)
PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_META_KEY = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo"


def _is_implementation(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("name"), str)
        and isinstance(value.get("version"), str)
    )


@dataclass(frozen=True)
class EarlyHandshake:
    """The server identity needed to answer ``initialize`` / ``server/discover`` without the SDK."""

    name: str
    version: str
    instructions: str | None = None

    def _capabilities(self) -> dict[str, Any]:
        return {
            "prompts": {"listChanged": False},
            "resources": {"listChanged": False, "subscribe": False},
            "tools": {"listChanged": False},
        }

    def _server_info(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version}

    def answer(self, message: Any) -> dict[str, Any] | None:
        """The JSON-RPC response to ``message``, or ``None`` when the SDK should answer it."""
        if not isinstance(message, Mapping) or message.get("jsonrpc") != "2.0":
            return None
        request_id = message.get("id")
        if isinstance(request_id, bool) or not isinstance(request_id, int | str):
            return None
        params = message.get("params")
        if message.get("method") == "initialize":
            result = self._initialize(params)
        elif message.get("method") == "server/discover":
            result = self._discover(params)
        else:
            return None
        if result is None:
            return None
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _initialize(self, params: Any) -> dict[str, Any] | None:
        if not isinstance(params, Mapping):
            return None
        requested = params.get("protocolVersion")
        meta = params.get("_meta")
        if (
            not isinstance(requested, str)
            or not isinstance(params.get("capabilities"), Mapping)
            or not _is_implementation(params.get("clientInfo"))
            or (meta is not None and not isinstance(meta, Mapping))
        ):
            return None
        negotiated = (
            requested if requested in HANDSHAKE_PROTOCOL_VERSIONS else HANDSHAKE_PROTOCOL_VERSIONS[-1]
        )
        result: dict[str, Any] = {
            "capabilities": self._capabilities(),
            "protocolVersion": negotiated,
            "serverInfo": self._server_info(),
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    def _discover(self, params: Any) -> dict[str, Any] | None:
        if not isinstance(params, Mapping) or set(params) != {"_meta"} or not is_modern_meta(params["_meta"]):
            return None
        result: dict[str, Any] = {
            "capabilities": self._capabilities(),
            "supportedVersions": list(MODERN_PROTOCOL_VERSIONS),
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return modern_result(result, self._server_info(), cacheable=True)


def is_modern_meta(meta: Any) -> bool:
    """Whether a request's ``_meta`` is exactly what a 2026-era client sends with every request
    (its protocol version, its name and version, its capabilities) and nothing more, such as a
    progress token, that only the SDK knows how to honour."""
    return (
        isinstance(meta, Mapping)
        and set(meta) == {PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY}
        and meta[PROTOCOL_VERSION_META_KEY] in MODERN_PROTOCOL_VERSIONS
        and _is_implementation(meta[CLIENT_INFO_META_KEY])
        and isinstance(meta[CLIENT_CAPABILITIES_META_KEY], Mapping)
    )


def modern_result(
    result: Mapping[str, Any], server_info: Mapping[str, str], *, cacheable: bool
) -> dict[str, Any]:
    """``result`` as the SDK sends it to a 2026-era client: ``resultType``, the ``serverInfo``
    stamp in ``_meta``, and for the cacheable methods (discovery, lists) the SDK's default
    freshness hints (private, stale at once)."""
    hints: dict[str, Any] = {"cacheScope": "private", "ttlMs": 0} if cacheable else {}
    return {**hints, **result, "resultType": "complete", "_meta": {SERVER_INFO_META_KEY: dict(server_info)}}
