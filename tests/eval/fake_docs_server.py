"""A small but real MCP docs server over stdio, for driving ``docs-mcp-eval`` end to end.

It speaks MCP through the SDK's low-level ``Server`` and offers ``search_docs`` / ``get_doc`` with the
docs-mcp result shape (``{hits, next_cursor, hint}``), cursors and the language/scope auto-include
rule, over a tiny in-script corpus. Rankings are fixed per query (``RANKINGS``) so tests can work out
every metric by hand.

Flags that let tests provoke each harness path:

--tool-prefix P        tools are P_search_docs / P_get_doc
--index-dir DIR        read ``DIR/fake-index.json`` (written by ``fake_build.py``) and use its variant
--ignore-filters       return hits without applying filters (to produce filter leaks)
--search-error MSG     every search_docs call returns an isError result with MSG
--search-text TEXT     every search_docs call answers TEXT (``deep``: 100,000 nested arrays;
                       ``long-number``: a score of 5,000 digits)
--omit-tool NAME       do not offer NAME (e.g. get_doc)
--fail-on-start MSG    print MSG to stderr and exit 3 before speaking MCP
--stderr-mb N          with --fail-on-start: first write a line of N MiB to stderr
--require-env NAME     exit 4 unless environment variable NAME is set (repeatable)
--ballast-mb N         hold N MiB of touched memory, so peak RSS is visibly above N
--crash-after N        after answering N searches, print a message to stderr and die on the next one
--first-search-ms N    take N ms over the first search (an index that loads when first searched)
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

ACME_TS = "sdks/typescript/auth.md#acmeauthclientv2"
ACME_PY = "sdks/python/auth.md#acmeauthclientv2"
ACME_GO = "sdks/go/auth.md#acmeauthclientv2"
GETTOKEN_TS = "sdks/typescript/auth.md#gettoken"
GETTOKEN_PY = "sdks/python/auth.md#get_token"
RETRIES = "guides/retries.md#backoff-strategy"
PAGINATION = "guides/pagination.md#cursor-pagination"
USER = "models/user.md#_preamble"
RATELIMIT_PY = "sdks/python/errors.md#ratelimiterror"

CHUNKS: dict[str, dict[str, Any]] = {
    ACME_TS: {"heading": "AcmeAuthClientV2", "metadata": {"language": "typescript", "scope": "sdk-specific"}},
    ACME_PY: {"heading": "AcmeAuthClientV2", "metadata": {"language": "python", "scope": "sdk-specific"}},
    ACME_GO: {"heading": "AcmeAuthClientV2", "metadata": {"language": "go", "scope": "sdk-specific"}},
    GETTOKEN_TS: {"heading": "getToken", "metadata": {"language": "typescript", "scope": "sdk-specific"}},
    GETTOKEN_PY: {"heading": "get_token", "metadata": {"language": "python", "scope": "sdk-specific"}},
    RETRIES: {"heading": "Backoff strategy", "metadata": {"language": "", "scope": "global-guide"}},
    PAGINATION: {"heading": "Cursor pagination", "metadata": {"language": "", "scope": "global-guide"}},
    USER: {"heading": "User", "metadata": {"language": "", "scope": ""}},
    RATELIMIT_PY: {"heading": "RateLimitError", "metadata": {"language": "python", "scope": "sdk-specific"}},
}

RANKINGS: dict[str, list[str]] = {
    "acmeauthclientv2 initialization": [ACME_TS, ACME_PY, ACME_GO, RETRIES, USER],
    "get token": [GETTOKEN_TS, GETTOKEN_PY, ACME_TS, ACME_PY, ACME_GO, USER, PAGINATION],
    "retry configuration": [RETRIES, RATELIMIT_PY, GETTOKEN_TS, GETTOKEN_PY, PAGINATION, USER],
    "user model": [USER, PAGINATION],
}


HOSTILE_TEXTS = {
    "deep": "[" * 100_000 + "]" * 100_000,
    "long-number": '{"hits": [{"chunk_id": "a.md#a", "score": ' + "9" * 5_000 + "}]}",
}


def variant_rankings(variant: str) -> dict[str, list[str]]:
    """``default`` is RANKINGS; ``swapped`` exchanges the first two ids of every ranking."""
    if variant != "swapped":
        return RANKINGS
    return {query: [ids[1], ids[0], *ids[2:]] for query, ids in RANKINGS.items()}


def allowed(metadata: dict[str, str], filters: dict[str, str]) -> bool:
    auto = "language" in filters and "scope" not in filters
    for key, value in filters.items():
        if auto and key == "language":
            scope, language = metadata.get("scope", ""), metadata.get("language", "")
            ok = (
                (scope == "sdk-specific" and language == value)
                or scope == "global-guide"
                or (scope not in ("sdk-specific", "global-guide") and language in ("", value))
            )
            if not ok:
                return False
        elif metadata.get(key, "") != value:
            return False
    return True


def encode_cursor(offset: int, query: str) -> str:
    raw = json.dumps({"offset": offset, "query": query}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, query: str) -> int:
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except ValueError as exc:
        raise ValueError("Invalid cursor: malformed payload") from exc
    if not isinstance(data, dict) or data.get("query") != query or not isinstance(data.get("offset"), int):
        raise ValueError("Invalid cursor: does not match current query or filters")
    return int(data["offset"])


def error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def build_server(args: argparse.Namespace) -> Server[Any]:
    prefix = f"{args.tool_prefix}_" if args.tool_prefix else ""
    search_name, get_doc_name = f"{prefix}search_docs", f"{prefix}get_doc"
    rankings = variant_rankings(args.variant)
    search_schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["query"],
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
            "cursor": {"type": "string"},
            "language": {"type": "string", "enum": ["go", "python", "typescript"]},
            "scope": {"type": "string", "enum": ["global-guide", "sdk-specific"]},
        },
    }
    get_doc_schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["chunk_id"],
        "properties": {
            "chunk_id": {"type": "string"},
            "context": {"type": "integer", "minimum": 0, "maximum": 5},
        },
    }
    tools = [
        Tool(name=search_name, description="Search the fake docs.", input_schema=search_schema),
        Tool(name=get_doc_name, description="Read one fake chunk.", input_schema=get_doc_schema),
    ]
    tools = [
        tool
        for tool in tools
        if tool.name not in {f"{prefix}{n}" for n in args.omit_tool} | set(args.omit_tool)
    ]

    answered = [0]

    def search(arguments: dict[str, Any]) -> CallToolResult:
        if answered[0] == 0 and args.first_search_ms:
            time.sleep(args.first_search_ms / 1000)  # the work a cold index does, not synchronisation
        if args.crash_after is not None and answered[0] >= args.crash_after:
            print("fake-docs-server: segmentation fault (simulated)", file=sys.stderr, flush=True)
            os._exit(7)
        answered[0] += 1
        if args.search_error:
            return error(args.search_error)
        if args.search_text:
            text = str(HOSTILE_TEXTS.get(args.search_text, args.search_text))
            return CallToolResult(content=[TextContent(type="text", text=text)])
        for key in arguments:
            if key not in search_schema["properties"]:
                return error(f"Unexpected field '{key}'")
        query = str(arguments.get("query", "")).strip()
        if not query:
            return error("query must be a non-empty string")
        limit = int(arguments.get("limit", 10))
        filters = {k: str(v) for k, v in arguments.items() if k in ("language", "scope")}
        try:
            offset = decode_cursor(arguments["cursor"], query) if "cursor" in arguments else 0
        except ValueError as exc:
            return error(str(exc))
        ranked = rankings.get(query.lower(), [])
        if not args.ignore_filters:
            ranked = [cid for cid in ranked if allowed(CHUNKS[cid]["metadata"], filters)]
        page = ranked[offset : offset + limit]
        next_offset = offset + len(page)
        hits = [
            {
                "chunk_id": cid,
                "heading": CHUNKS[cid]["heading"],
                "breadcrumb": cid.replace("#", " > "),
                "snippet": f"about {CHUNKS[cid]['heading']}",
                "filepath": cid.split("#", 1)[0],
                "metadata": CHUNKS[cid]["metadata"],
                "score": round(1 / (61 + offset + i), 6),
            }
            for i, cid in enumerate(page)
        ]
        body = {
            "hits": hits,
            "next_cursor": encode_cursor(next_offset, query) if next_offset < len(ranked) else None,
            "hint": None
            if hits
            else {"message": f"0 results found for query '{query}'.", "suggested_filters": {}},
        }
        return CallToolResult(content=[TextContent(type="text", text=json.dumps(body, indent=2))])

    def get_doc(arguments: dict[str, Any]) -> CallToolResult:
        for key in arguments:
            if key not in get_doc_schema["properties"]:
                return error(f"Unexpected field '{key}'")
        chunk_id = str(arguments.get("chunk_id", ""))
        if chunk_id not in CHUNKS:
            return error(f"Chunk ID '{chunk_id}' not found. Use search_docs to discover valid chunk IDs.")
        text = f"--- Chunk: {chunk_id} (Chunk 1 of 1) (Target) ---\n# {CHUNKS[chunk_id]['heading']}\n"
        return CallToolResult(content=[TextContent(type="text", text=text)])

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def on_call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        offered = {tool.name for tool in tools}
        arguments = dict(params.arguments or {})
        if params.name == search_name and search_name in offered:
            return search(arguments)
        if params.name == get_doc_name and get_doc_name in offered:
            return get_doc(arguments)
        return error(f"Unknown tool '{params.name}'.")

    return Server("fake-docs-server", version="0.0.1", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tool-prefix")
    parser.add_argument("--index-dir", type=Path)
    parser.add_argument("--ignore-filters", action="store_true")
    parser.add_argument("--search-error")
    parser.add_argument("--search-text")
    parser.add_argument("--omit-tool", action="append", default=[])
    parser.add_argument("--fail-on-start")
    parser.add_argument("--stderr-mb", type=int, default=0)
    parser.add_argument("--require-env", action="append", default=[])
    parser.add_argument("--ballast-mb", type=int, default=0)
    parser.add_argument("--crash-after", type=int)
    parser.add_argument("--first-search-ms", type=int, default=0)
    args = parser.parse_args(argv)
    args.variant = "default"
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.fail_on_start:
        if args.stderr_mb:
            sys.stderr.write("y" * (args.stderr_mb << 20) + "\n")
        print(args.fail_on_start, file=sys.stderr)
        return 3
    for name in args.require_env:
        if name not in os.environ:
            print(f"fake-docs-server: environment variable {name} is not set", file=sys.stderr)
            return 4
    if args.index_dir is not None:
        index_file = args.index_dir / "fake-index.json"
        if not index_file.is_file():
            print(f"fake-docs-server: no index at {index_file}", file=sys.stderr)
            return 5
        args.variant = json.loads(index_file.read_text())["variant"]
    ballast = bytearray(args.ballast_mb * 1024 * 1024)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1  # touch every page so it is resident
    server = build_server(args)

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(serve)
    del ballast
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
