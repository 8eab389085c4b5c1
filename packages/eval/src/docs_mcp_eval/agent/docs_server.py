"""The docs server as the agent sees it: an MCP server over stdio whose tools join the agent's tools.

Each scenario starts its own server process and talks to it with the MCP SDK's client, as a coding
agent would. The server's tools are offered to the model as ``mcp__<server name>__<tool>`` (the
server name is ``docs-mcp`` unless a scenario sets ``mcpServerName``), the naming Claude Code uses;
its instructions (from the MCP handshake) are added to the system prompt.
"""

from __future__ import annotations

import json
import math
import re
import shlex
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import (
    CallToolResult,
    EmbeddedResource,
    Implementation,
    TextContent,
    TextResourceContents,
    Tool,
)

from docs_mcp_eval import __version__
from docs_mcp_eval.agent.workspace import ToolOutcome, ToolSpec
from docs_mcp_eval.commands import CommandSpec, not_found
from docs_mcp_eval.errors import ServerStartError
from docs_mcp_eval.session import last_lines

CLIENT_NAME = "docs-mcp-eval"
MAX_RESULT_CHARS = 100_000
_TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_MAX_TOOL_PAGES = 50
_STDERR_TAIL_LINES = 15


def qualified_name(server: str, tool: str) -> str:
    return f"mcp__{server}__{tool}"


def is_docs_tool(qualified: str, server: str) -> bool:
    """Whether a qualified tool name is the server's ``search_docs`` or ``get_doc`` (prefixed or not)."""
    prefix = f"mcp__{server}__"
    if not qualified.startswith(prefix):
        return False
    tool = qualified[len(prefix) :]
    return tool in ("search_docs", "get_doc") or tool.endswith(("_search_docs", "_get_doc"))


class DocsServer:
    """A connected docs server: its tools under qualified names, and a way to call them."""

    def __init__(self, client: Client, server_name: str, tools: Sequence[Tool], errlog: TextIO) -> None:
        self._client = client
        self.server_name = server_name
        self._errlog = errlog
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            name = qualified_name(server_name, tool.name)
            if not _TOOL_NAME_RE.match(name):
                raise ServerStartError(
                    f"the docs server's tool {tool.name!r} gives the name {name!r}, which models do not "
                    "accept (letters, digits, '_' and '-', at most 64 characters); shorten mcpServerName"
                )
            self._tools[name] = tool
        self.failures: list[str] = []
        """Calls that failed because the server misbehaved (not tool errors it reported itself)."""

    @property
    def instructions(self) -> str | None:
        text = self._client.instructions
        return text.strip() if text and text.strip() else None

    @property
    def tool_names(self) -> list[str]:
        return list(self._tools)

    def offers(self, bare_name: str) -> bool:
        return qualified_name(self.server_name, bare_name) in self._tools

    def specs(self) -> list[ToolSpec]:
        return [
            ToolSpec(name, tool.description or tool.title or tool.name, dict(tool.input_schema))
            for name, tool in self._tools.items()
        ]

    def owns(self, qualified: str) -> bool:
        return qualified in self._tools

    async def call(self, qualified: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        tool = self._tools[qualified]
        try:
            result = await self._client.call_tool(tool.name, dict(arguments))
        except MCPError as exc:
            return ToolOutcome(f"{exc.message} (MCP error {exc.code})", is_error=True)
        except Exception as exc:  # noqa: BLE001 - a dead or broken server: tell the model, note it
            note = f"{tool.name} failed: {type(exc).__name__}: {exc}".strip().rstrip(":")
            self.failures.append(note + stderr_tail(self._errlog))
            return ToolOutcome(f"the docs server did not answer: {note}", is_error=True)
        return ToolOutcome(result_text(result), is_error=bool(result.is_error))


def result_text(result: CallToolResult) -> str:
    """The text the model gets for a tool result: text blocks joined, other content summarised."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, EmbeddedResource) and isinstance(block.resource, TextResourceContents):
            parts.append(block.resource.text)
        else:
            parts.append(f"[{getattr(block, 'type', 'non-text')} content omitted]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text = "\n".join(parts)
    if len(text) > MAX_RESULT_CHARS:
        text = text[:MAX_RESULT_CHARS] + f"\n[... cut at {MAX_RESULT_CHARS} characters ...]"
    return text


@asynccontextmanager
async def open_docs_server(
    command: CommandSpec,
    server_name: str,
    *,
    startup_timeout_s: float = 60.0,
    request_timeout_s: float = 120.0,
) -> AsyncIterator[DocsServer]:
    """Start ``command`` as a stdio MCP server, complete the handshake and list its tools.

    Raises :class:`ServerStartError` (with the server's last stderr lines) when it cannot start, does
    not answer within ``startup_timeout_s``, or has no tools.
    """
    params = StdioServerParameters(
        command=command.command, args=list(command.args), cwd=command.cwd, env=command.child_env()
    )
    with tempfile.TemporaryFile("a+", encoding="utf-8", errors="replace") as errlog:
        client = Client(
            stdio_client(params, errlog=errlog),
            cache=None,
            read_timeout_seconds=request_timeout_s,
            client_info=Implementation(name=CLIENT_NAME, version=__version__),
        )
        server: DocsServer | None = None
        with anyio.CancelScope(deadline=anyio.current_time() + startup_timeout_s) as startup:
            try:
                async with client:
                    tools = await _list_tools(client)
                    if not tools:
                        raise ServerStartError(f"the docs server offers no tools: {command.display()}")
                    server = DocsServer(client, server_name, tools, errlog)
                    startup.deadline = math.inf
                    yield server
            except ServerStartError:
                raise
            except Exception as exc:
                if server is not None:
                    raise
                raise _start_error(exc, command, errlog) from None
        if server is None:
            raise ServerStartError(
                f"the docs server did not complete the MCP handshake within {startup_timeout_s:g} s: "
                f"{command.display()}{stderr_tail(errlog)}"
            )


async def _list_tools(client: Client) -> list[Tool]:
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(_MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _start_error(exc: BaseException, command: CommandSpec, errlog: TextIO) -> ServerStartError:
    leaf = exc
    while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
        leaf = leaf.exceptions[0]
    if isinstance(leaf, ServerStartError):
        return leaf
    if isinstance(leaf, FileNotFoundError):
        return ServerStartError(f"cannot start the docs server: {not_found(command.command)}")
    if isinstance(leaf, PermissionError):
        return ServerStartError(f"cannot start the docs server: {command.command!r} is not executable")
    detail = f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__
    return ServerStartError(
        f"the docs server failed to start ({detail}): {shlex.join(command.argv)}{stderr_tail(errlog)}"
    )


def stderr_tail(errlog: TextIO) -> str:
    """The server's last stderr lines, formatted for an error message ('' when it wrote none)."""
    try:
        lines = last_lines(errlog, _STDERR_TAIL_LINES)
    except (OSError, ValueError):
        return ""
    if not lines:
        return ""
    tail = "\n".join(f"  {line}" for line in lines)
    return f"\nLast lines of the server's stderr:\n{tail}"
