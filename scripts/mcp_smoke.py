"""Smoke-test a running docs-mcp HTTP server the way a deployment check would.

Waits (bounded) for ``GET /healthz`` to answer 200 with build info, then connects with the MCP
client over streamable HTTP (``POST /mcp``), lists the tools and runs one ``search_docs`` query,
which must return at least one hit. Used by CI against the Docker image and by
``tests/test_docker_recipe.py`` against the same recipe run without a container::

    uv run scripts/mcp_smoke.py http://127.0.0.1:20310 --query retry
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio
from mcp import Client


class SmokeError(RuntimeError):
    """The server did not behave as a healthy docs-mcp server; the message says what was seen."""


@dataclass(frozen=True)
class SmokeResult:
    """What the server answered."""

    health: dict[str, Any]
    tools: list[str]
    hits: list[dict[str, Any]]


def wait_for_health(base_url: str, timeout: float) -> dict[str, Any]:
    """Poll ``/healthz`` until it answers 200 (JSON) or ``timeout`` seconds have passed."""
    deadline = time.monotonic() + timeout
    last_error = "no answer yet"
    while True:
        try:
            with urllib.request.urlopen(f"{base_url}/healthz", timeout=5) as response:
                body = json.loads(response.read().decode("utf-8"))
                if response.status == 200 and isinstance(body, dict):
                    return body
                last_error = f"status {response.status}, body {body!r}"
        except (urllib.error.URLError, OSError, ValueError) as error:
            last_error = str(error)
        if time.monotonic() >= deadline:
            raise SmokeError(f"{base_url}/healthz did not answer 200 within {timeout:g} s: {last_error}")
        time.sleep(0.25)  # polling interval while the server starts, not synchronisation


def _hits(result: Any) -> list[dict[str, Any]]:
    payload = result.structured_content
    if payload is None:
        texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
        payload = json.loads(texts[0]) if texts else {}
    hits = payload.get("hits") if isinstance(payload, dict) else None
    if not isinstance(hits, list):
        raise SmokeError(f"search_docs returned no hits list: {payload!r}")
    return hits


async def check_mcp(
    base_url: str, query: str, tool_prefix: str = ""
) -> tuple[list[str], list[dict[str, Any]]]:
    """List the tools and run one search over MCP streamable HTTP."""
    search_tool = f"{tool_prefix}_search_docs" if tool_prefix else "search_docs"
    async with Client(f"{base_url}/mcp") as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        if search_tool not in tools:
            raise SmokeError(f"the server lists no {search_tool} tool: {tools}")
        result = await client.call_tool(search_tool, {"query": query})
        if result.is_error:
            raise SmokeError(f"{search_tool}({query!r}) failed: {result.content}")
        return tools, _hits(result)


def smoke(
    base_url: str, *, query: str = "retry", timeout: float = 60.0, tool_prefix: str = ""
) -> SmokeResult:
    """Run the whole check against ``base_url`` (``http://host:port``, no path)."""
    base_url = base_url.rstrip("/")
    started = time.monotonic()
    health = wait_for_health(base_url, timeout)
    if not isinstance(health.get("build"), dict) or not health["build"].get("name"):
        raise SmokeError(f"/healthz has no build info: {health!r}")
    remaining = max(1.0, timeout - (time.monotonic() - started))

    async def bounded() -> tuple[list[str], list[dict[str, Any]]]:
        with anyio.fail_after(remaining):
            return await check_mcp(base_url, query, tool_prefix)

    tools, hits = anyio.run(bounded)
    if not hits:
        raise SmokeError(f"search_docs({query!r}) returned no hits")
    return SmokeResult(health=health, tools=tools, hits=hits)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("base_url", help="server address, e.g. http://127.0.0.1:20310")
    parser.add_argument("--query", default="retry", help="search_docs query that must find something")
    parser.add_argument("--tool-prefix", default="", help="the server's --tool-prefix, if any")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait in total")
    args = parser.parse_args(argv)
    try:
        result = smoke(args.base_url, query=args.query, timeout=args.timeout, tool_prefix=args.tool_prefix)
    except (SmokeError, TimeoutError) as error:
        print(f"mcp_smoke: error: {error}", file=sys.stderr)
        return 1
    print(f"healthz: {json.dumps(result.health, sort_keys=True)}")
    print(f"tools: {', '.join(result.tools)}")
    print(f"search_docs({args.query!r}): {len(result.hits)} hits, first {result.hits[0].get('chunk_id')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
