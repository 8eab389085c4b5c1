"""Every exception of docs-mcp-server, in one place.

Each is a :class:`DocsMcpServerError` and keeps the builtin category it had (``ValueError`` for bad
input), so ``except ValueError`` still catches it. Their messages are shown as they are: on one
``docs-mcp-server: error: ...`` line at start-up (exit 1, or 2 for options), or to MCP clients as the
text of an error result. Errors of the index and the corpus come from core
(:mod:`docs_mcp_core.errors`).

This module imports nothing, so the command line can load it before it answers ``initialize``.
"""

from __future__ import annotations

__all__ = [
    "ArgumentError",
    "BootError",
    "DocsMcpServerError",
    "IndexUnavailableError",
    "Interrupted",
    "OptionsError",
    "PromptRequestError",
]


class DocsMcpServerError(Exception):
    """Base class of the server's own errors."""


class OptionsError(DocsMcpServerError, ValueError):
    """A server option has a value the server cannot run with; the message says which and why."""


class BootError(DocsMcpServerError):
    """The index directory cannot be served; the message is one line naming the path and the fix."""


class IndexUnavailableError(DocsMcpServerError, RuntimeError):
    """The index could not be opened; the message is shown to clients as an ``isError`` text."""


class ArgumentError(DocsMcpServerError, ValueError):
    """Arguments a tool cannot accept; the message is the ``isError`` text returned to the client."""


class PromptRequestError(DocsMcpServerError, ValueError):
    """A prompts/get request that cannot be answered; the message is the JSON-RPC error text."""


class Interrupted(DocsMcpServerError):
    """SIGINT/SIGTERM arrived before the protocol loop took over signal handling."""
