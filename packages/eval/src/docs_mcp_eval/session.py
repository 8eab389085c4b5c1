"""One client session with a docs server: which optional arguments its tools take, the search pages and
``get_doc`` answers of each case, the tokens read, and failures described with the server's stderr.

Used by :mod:`docs_mcp_eval.runner`, which starts the server and drives the cases through a
:class:`Session`.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import anyio
import anyio.to_thread
from mcp import Client, MCPError
from mcp.types import CallToolResult, TextContent

from docs_mcp_eval.cases import EvalCase
from docs_mcp_eval.commands import RunConfig
from docs_mcp_eval.errors import ServerProtocolError, json_limit
from docs_mcp_eval.leaks import hit_violates_filters
from docs_mcp_eval.metrics import rounds_to_right_doc
from docs_mcp_eval.results import EvalStats, RankedCase
from docs_mcp_eval.tokens import count_tokens

STDERR_TAIL_LINES = 20


_MAX_TOOL_PAGES = 100


# the line that ends a get_doc answer cut to a budget: it carries the cursor of the rest
_CONTINUED_RE = re.compile(r'^---.*\bcursor "[^"]+".*---\s*\Z', re.M)


@dataclass(frozen=True)
class ToolSupport:
    """Which of the optional arguments the server's tools declare in their input schemas."""

    search_max_tokens: bool = False
    get_doc_max_tokens: bool = False
    scopes: tuple[str, ...] = ()

    @classmethod
    def from_schemas(cls, search: Mapping[str, Any], get_doc: Mapping[str, Any]) -> ToolSupport:
        def properties(schema: Mapping[str, Any]) -> Mapping[str, Any]:
            found = schema.get("properties")
            return found if isinstance(found, Mapping) else {}

        def integer(spec: Any) -> bool:
            return isinstance(spec, Mapping) and spec.get("type") == "integer"

        scope = properties(get_doc).get("scope")
        values = scope.get("enum") if isinstance(scope, Mapping) else None
        return cls(
            search_max_tokens=integer(properties(search).get("max_tokens")),
            get_doc_max_tokens=integer(properties(get_doc).get("max_tokens")),
            scopes=tuple(v for v in values if isinstance(v, str)) if isinstance(values, list) else (),
        )


def tool_names(prefix: str | None) -> tuple[str, str]:
    """``(search_docs, get_doc)`` names under an optional tool prefix."""
    if prefix:
        return f"{prefix}_search_docs", f"{prefix}_get_doc"
    return "search_docs", "get_doc"


@dataclass
class _Hit:
    chunk_id: str
    metadata: Mapping[str, Any] | None


@dataclass
class _Page:
    hits: list[_Hit]
    next_cursor: str | None


class Session:
    """One connected client plus the bookkeeping that turns its answers into ranked cases."""

    def __init__(self, client: Client, config: RunConfig, errlog: TextIO) -> None:
        self._client = client
        self._config = config
        self._errlog = errlog
        self.support = ToolSupport()
        self.first_search_answered_at: float | None = None
        """``time.perf_counter()`` when the server first answered a search (warm-up included)."""

    def _searched(self) -> None:
        if self.first_search_answered_at is None:
            self.first_search_answered_at = time.perf_counter()

    async def _call(self, name: str, arguments: dict[str, Any], what: str) -> tuple[CallToolResult, float]:
        started = time.perf_counter()
        try:
            result = await self._client.call_tool(name, arguments)
        except MCPError as exc:
            raise ServerProtocolError(
                f"{name} failed for {what}: {exc.message} (MCP error {exc.code}){stderr_tail(self._errlog)}"
            ) from None
        except (TimeoutError, anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            raise ServerProtocolError(
                f"{name} failed for {what}: the server stopped answering ({describe_failure(exc)})"
                f"{stderr_tail(self._errlog)}"
            ) from None
        except Exception as exc:  # noqa: BLE001 - e.g. a result that is not valid MCP: report, don't crash
            raise ServerProtocolError(
                f"{name} failed for {what}: {describe_failure(exc)}{stderr_tail(self._errlog)}"
            ) from None
        return result, (time.perf_counter() - started) * 1000

    async def require_tools(self, *required: str) -> None:
        names: list[str] = []
        schemas: dict[str, Mapping[str, Any]] = {}
        cursor: str | None = None
        try:
            for _ in range(_MAX_TOOL_PAGES):
                page = await self._client.list_tools(cursor=cursor)
                names.extend(tool.name for tool in page.tools)
                schemas.update((tool.name, dict(tool.input_schema or {})) for tool in page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
        except Exception as exc:  # noqa: BLE001 - MCP errors, timeouts, a dead server: all user-facing
            raise ServerProtocolError(
                f"tools/list failed: {describe_failure(exc)}{stderr_tail(self._errlog)}"
            ) from None
        missing = [name for name in required if name not in names]
        if not missing:
            search, get_doc = required[0], required[-1]
            self.support = ToolSupport.from_schemas(schemas.get(search, {}), schemas.get(get_doc, {}))
            return
        offered = ", ".join(sorted(names)) if names else "no tools at all"
        hint = ""
        prefixed = sorted({n[: -len("_search_docs")] for n in names if n.endswith("_search_docs")})
        if prefixed and not self._config.tool_prefix:
            hint = f". Its tools look prefixed: pass --tool-prefix {prefixed[0]}"
        elif "search_docs" in names and self._config.tool_prefix:
            hint = ". Its tools are not prefixed: drop --tool-prefix"
        raise ServerProtocolError(
            f"the MCP server does not offer the tool(s) {', '.join(missing)}; it offers {offered}{hint}"
        )

    async def warm_up(self, search_tool: str, cases: Sequence[EvalCase], count: int) -> None:
        """Untimed searches (``cases[i % n]``, limit at most 5) so caches are hot; errors are ignored."""
        if count <= 0 or not cases:
            return
        for i in range(count):
            case = cases[i % len(cases)]
            arguments: dict[str, Any] = {"query": case.query, "limit": min(5, case.limit), **case.filters}
            try:
                await self._client.call_tool(search_tool, arguments)
            except Exception:  # noqa: BLE001 - warm-up is best-effort; real calls report failures
                continue
            self._searched()

    async def execute_case(
        self, search_tool: str, get_doc_tool: str, case: EvalCase, index: int, stats: EvalStats
    ) -> RankedCase:
        what = f"case {index} ({case.label(index)!r})"
        ranked_ids: list[str] = []
        seen: set[str] = set()
        leaked: list[str] = []
        returned = 0
        rounds = 0
        tokens = 0
        doc_cut: bool | None = None
        section_whole: bool | None = None
        cursor: str | None = None
        sent: set[str] = set()  # a cursor handed back again would only repeat its page
        while rounds < case.max_rounds:
            rounds += 1
            arguments: dict[str, Any] = {"query": case.query, "limit": case.limit, **case.filters}
            if cursor:
                arguments["cursor"] = cursor
                sent.add(cursor)
            if self._config.max_tokens is not None and self.support.search_max_tokens:
                arguments["max_tokens"] = self._config.max_tokens
            result, elapsed = await self._call(search_tool, arguments, what)
            self._searched()
            tokens += count_tokens(_text_content(result))
            stats.search_latencies_ms.append(elapsed)
            if result.is_error:
                raise ServerProtocolError(
                    f"{search_tool} returned an error for {what}: "
                    f"{_text_content(result) or 'no error message'}; stopping the run"
                )
            page = _parse_search_result(result, search_tool, what)
            for hit in page.hits:
                returned += 1
                if hit_violates_filters(hit.metadata, case.filters):
                    leaked.append(hit.chunk_id)
                if hit.chunk_id not in seen:
                    seen.add(hit.chunk_id)
                    ranked_ids.append(hit.chunk_id)
            if any(hit.chunk_id == case.expected_chunk_id for hit in page.hits):
                doc, elapsed = await self._call(get_doc_tool, self._get_doc_arguments(case), what)
                stats.get_doc_latencies_ms.append(elapsed)
                text = _text_content(doc)
                if doc.is_error:
                    raise ServerProtocolError(
                        f"{get_doc_tool} returned an error for {what} (chunk {case.expected_chunk_id!r}): "
                        f"{text or 'no error message'}; stopping the run"
                    )
                tokens += count_tokens(text)
                doc_cut = _CONTINUED_RE.search(text) is not None
                if self._config.scope == "section" and self._config.scope in self.support.scopes:
                    section_whole = not doc_cut
                break
            cursor = page.next_cursor
            if not cursor or cursor in sent:
                break
        found = case.expected_chunk_id in seen
        return RankedCase(
            expected_chunk_id=case.expected_chunk_id,
            ranked_chunk_ids=ranked_ids,
            rounds_to_right_doc=rounds_to_right_doc(
                found=found, rounds_executed=rounds, max_rounds=case.max_rounds
            ),
            name=case.name,
            category=case.category,
            query=case.query,
            filters=dict(case.filters),
            returned_hits=returned,
            leaked_chunk_ids=leaked,
            tokens_read=tokens,
            doc_cut=doc_cut,
            section_whole=section_whole,
        )

    def _get_doc_arguments(self, case: EvalCase) -> dict[str, Any]:
        """``{chunk_id, context: 0}``, or the chunk's ``scope`` instead of a context, and the budget,
        as far as the tool declares them."""
        arguments: dict[str, Any] = {"chunk_id": case.expected_chunk_id, "context": 0}
        if self._config.scope != "chunk" and self._config.scope in self.support.scopes:
            arguments = {"chunk_id": case.expected_chunk_id, "scope": self._config.scope}
        if self._config.max_tokens is not None and self.support.get_doc_max_tokens:
            arguments["max_tokens"] = self._config.max_tokens
        return arguments


def _text_content(result: CallToolResult) -> str:
    parts = [block.text for block in result.content if isinstance(block, TextContent)]
    return "\n".join(parts).strip()


def _parse_search_result(result: CallToolResult, tool: str, what: str) -> _Page:
    """Read ``{hits: [{chunk_id, metadata, ...}], next_cursor}`` from the text block (or structured content)."""
    payload: Any = None
    text = _text_content(result)
    if text:
        try:
            payload = json.loads(text)
        except json.JSONDecodeError:
            payload = None
        except (RecursionError, ValueError) as exc:  # ended the run in a bare traceback
            raise ServerProtocolError(
                f"{tool} result for {what} cannot be read: {json_limit(exc, advice=False)}; stopping the run"
            ) from None
    if not isinstance(payload, dict) and isinstance(result.structured_content, dict):
        payload = result.structured_content
    if payload is None:
        raise ServerProtocolError(f"{tool} result for {what} was not valid JSON text: {text[:200]!r}")
    if not isinstance(payload, dict):
        raise ServerProtocolError(f"{tool} result for {what} was not a JSON object")
    raw_hits = payload.get("hits")
    if not isinstance(raw_hits, list):
        raise ServerProtocolError(f"{tool} result for {what} is missing hits[]")
    hits: list[_Hit] = []
    for entry in raw_hits:
        if not isinstance(entry, dict):
            continue
        chunk_id = entry.get("chunk_id")
        if isinstance(chunk_id, str) and chunk_id:
            metadata = entry.get("metadata")
            hits.append(_Hit(chunk_id=chunk_id, metadata=metadata if isinstance(metadata, dict) else None))
    next_cursor = payload.get("next_cursor")
    return _Page(hits=hits, next_cursor=next_cursor if isinstance(next_cursor, str) else None)


def iter_leaves(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from iter_leaves(inner)
    else:
        yield exc


def describe_failure(exc: BaseException) -> str:
    leaves = list(iter_leaves(exc))
    leaf = leaves[0] if leaves else exc
    if isinstance(leaf, MCPError):
        return f"{leaf.message} (MCP error {leaf.code})"
    text = str(leaf)
    return f"{type(leaf).__name__}: {text}" if text else type(leaf).__name__


def last_lines(errlog: TextIO, count: int) -> list[str]:
    """The last ``count`` non-blank lines of the file a server's stderr goes to, read from its last
    64 KiB, each cut to 1,000 characters: all of it was read back, and a server that had written
    30 MB there had its 30 MB printed in the error. Raises ``OSError``/``ValueError`` if unreadable."""
    errlog.flush()
    raw = errlog.buffer
    end = raw.seek(0, os.SEEK_END)
    raw.seek(max(0, end - _TAIL_BYTES))
    text = raw.read().decode("utf-8", errors="replace")
    raw.seek(0, os.SEEK_END)
    lines = [line for line in text.splitlines() if line.strip()][-count:]
    return [line if len(line) <= _LINE_CHARS else line[:_LINE_CHARS] + " [...]" for line in lines]


_TAIL_BYTES = 64 * 1024
_LINE_CHARS = 1_000


def stderr_tail(errlog: TextIO) -> str:
    """The last lines the server wrote to stderr, formatted for an error message ('' if none)."""
    try:
        tail = last_lines(errlog, STDERR_TAIL_LINES)
    except (OSError, ValueError):
        return ""
    if not tail:
        return "\n(the server wrote nothing to stderr)"
    return "\nLast lines of the server's stderr:\n" + "\n".join(f"  {line}" for line in tail)
