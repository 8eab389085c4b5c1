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


_IMPLEMENTATION_TEXTS = frozenset({"title", "description", "websiteUrl"})
# What each client capability an early answer accepts holds: objects (``None``: of anything) and
# roots' one flag. Anything else is left to the SDK, which may refuse it (``"sampling": 5``).
_CAPABILITIES: dict[str, Any] = {
    "experimental": None,
    "sampling": {"context": {}, "tools": {}},
    "elicitation": {"form": {}, "url": {}},
    "roots": {"listChanged": bool},
    "extensions": None,
    "tasks": {
        "list": {},
        "cancel": {},
        "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}},
    },
}


def _is_implementation(value: Any) -> bool:
    """A client's name and version, and nothing but the optional texts (icons: the SDK judges)."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("name"), str)
        and isinstance(value.get("version"), str)
        and all(
            key in ("name", "version")
            or (key in _IMPLEMENTATION_TEXTS and (text is None or isinstance(text, str)))
            for key, text in value.items()
        )
    )


def _is_plain(value: Any, shape: Any) -> bool:
    if shape is bool:
        return value is None or isinstance(value, bool)
    if value is None:
        return True
    if not isinstance(value, Mapping):
        return False
    if shape is None:
        return all(isinstance(item, Mapping) for item in value.values())
    return all(key in shape and _is_plain(item, shape[key]) for key, item in value.items())


def _is_capabilities(value: Any) -> bool:
    """Client capabilities the SDK certainly accepts (False when unsure: the SDK decides)."""
    return isinstance(value, Mapping) and _is_plain(value, _CAPABILITIES)


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
            or not _is_capabilities(params.get("capabilities"))
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
    progress token, that only the SDK knows how to honour; a name or capabilities of a shape the
    SDK might refuse are the SDK's to judge too."""
    return (
        isinstance(meta, Mapping)
        and set(meta) == {PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY}
        and meta[PROTOCOL_VERSION_META_KEY] in MODERN_PROTOCOL_VERSIONS
        and _is_implementation(meta[CLIENT_INFO_META_KEY])
        and _is_capabilities(meta[CLIENT_CAPABILITIES_META_KEY])
    )


def modern_result(
    result: Mapping[str, Any], server_info: Mapping[str, str], *, cacheable: bool
) -> dict[str, Any]:
    """``result`` as the SDK sends it to a 2026-era client: ``resultType``, the ``serverInfo``
    stamp in ``_meta``, and for the cacheable methods (discovery, lists) the SDK's default
    freshness hints (private, stale at once)."""
    hints: dict[str, Any] = {"cacheScope": "private", "ttlMs": 0} if cacheable else {}
    return {**hints, **result, "resultType": "complete", "_meta": {SERVER_INFO_META_KEY: dict(server_info)}}
