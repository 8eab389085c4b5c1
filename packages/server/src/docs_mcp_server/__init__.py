"""docs-mcp-server: serve a docs-mcp index to AI coding agents over MCP (stdio or streamable HTTP).

Library use::

    from docs_mcp_server import create_app, serve_http

    app = create_app("dist/index")          # checks metadata.json and .lancedb/
    server = app.server                     # a low-level mcp Server (also: create_server(...))
    async with serve_http(app) as http:     # uvicorn on 127.0.0.1, a free port
        ...                                 # http.url == "http://127.0.0.1:<port>/mcp"

Names are imported lazily so that ``import docs_mcp_server`` (and the command line's start-up)
does not pay for the MCP SDK, uvicorn or LanceDB until they are used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docs_mcp_core.lazy_exports import lazy_exports

# ``__version__`` is the installed distribution's version (pyproject.toml is the only place it is
# written), read on first access by ``__getattr__`` so that importlib.metadata stays off the start-up path.

__all__ = [
    "BootError",
    "BuildInfo",
    "CustomTool",
    "DocsMcpApp",
    "OptionsError",
    "ServerOptions",
    "__version__",
    "create_app",
    "create_server",
    "run_http",
    "run_stdio",
    "serve_http",
]

_LAZY = {
    "BootError": "docs_mcp_server.errors",
    "BuildInfo": "docs_mcp_server.options",
    "CustomTool": "docs_mcp_server.options",
    "OptionsError": "docs_mcp_server.errors",
    "ServerOptions": "docs_mcp_server.options",
    "DocsMcpApp": "docs_mcp_server.app",
    "create_app": "docs_mcp_server.app",
    "create_server": "docs_mcp_server.app",
    "run_http": "docs_mcp_server.http",
    "serve_http": "docs_mcp_server.http",
    "run_stdio": "docs_mcp_server.stdio",
}

if TYPE_CHECKING:
    __version__: str

    from docs_mcp_server.app import DocsMcpApp, create_app, create_server
    from docs_mcp_server.errors import BootError, OptionsError
    from docs_mcp_server.http import run_http, serve_http
    from docs_mcp_server.options import BuildInfo, CustomTool, ServerOptions
    from docs_mcp_server.stdio import run_stdio


_exports = lazy_exports(__name__, _LAZY)


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import version

        return version("docs-mcp-server")
    return _exports(name)
