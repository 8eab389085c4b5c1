"""Driving an MCP docs server over stdio through the eval cases, as an agent would.

For every case the runner calls ``search_docs {query, limit, **filters, cursor?}`` round by round. When
the expected chunk is on the current page it fetches it with ``get_doc {chunk_id, context: 0}`` (timed)
and stops; otherwise it follows ``next_cursor`` until the case's round budget is spent or the server
has no more pages. Every answer's text is counted in ``o200k_base`` tokens: what the agent read until
the expected chunk arrived.

With a token budget (``RunConfig.max_tokens``) or a ``get_doc`` scope other than ``chunk``, the runner
sends ``max_tokens`` / ``scope`` only to tools whose input schema (from ``tools/list``) declares them,
so a server that does not know them (the original among them) is driven exactly as without them. Latencies are wall-clock times around each tool call, measured in this process; the
server's peak memory is sampled from outside (:mod:`docs_mcp_eval.rss`); an optional build command is
run and timed before the server starts.

It works with any stdio MCP server that offers ``search_docs`` and ``get_doc`` (``<prefix>_search_docs``
and ``<prefix>_get_doc`` with a tool prefix) returning the docs-mcp JSON result shape.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio
import anyio.to_thread
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, Implementation, TextContent

from docs_mcp_eval import __version__
from docs_mcp_eval.cases import EvalCase
from docs_mcp_eval.errors import BuildCommandError, EvalError, ServerProtocolError, ServerStartError
from docs_mcp_eval.formatting import round_metric
from docs_mcp_eval.leaks import hit_violates_filters
from docs_mcp_eval.metrics import build_result, mrr_at_k, rounds_to_right_doc
from docs_mcp_eval.results import EvalResult, EvalStats, RankedCase
from docs_mcp_eval.rss import RssSampler, child_pids, find_new_child
from docs_mcp_eval.tokens import count_tokens

CLIENT_NAME = "docs-mcp-eval"
STDERR_TAIL_LINES = 20
_MAX_TOOL_PAGES = 100
SCOPES = ("chunk", "section", "parent")
# the line that ends a get_doc answer cut to a budget: it carries the cursor of the rest
_CONTINUED_RE = re.compile(r'^---.*\bcursor "[^"]+".*---\s*\Z', re.M)

ProgressCallback = Callable[[int, int, float], None]
"""Called after each case with (cases done, cases total, running MRR@5)."""


@dataclass(frozen=True, kw_only=True)
class CommandSpec:
    """A program to run: argv, working directory and extra environment variables.

    The child sees this process's whole environment with ``env`` on top (the MCP SDK alone would pass
    only HOME, LOGNAME, PATH, SHELL, TERM and USER, which loses e.g. ``OPENAI_API_KEY``).
    """

    command: str
    args: Sequence[str] = ()
    cwd: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(
        cls,
        command_line: str,
        extra_args: Sequence[str] = (),
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> CommandSpec:
        """Split a shell-style command line (``"docs-mcp-server --index-dir idx"``) with :mod:`shlex`."""
        try:
            argv = shlex.split(command_line)
        except ValueError as exc:
            raise EvalError(f"cannot parse command {command_line!r}: {exc}") from None
        if not argv:
            raise EvalError("the command is empty")
        return cls(command=argv[0], args=(*argv[1:], *extra_args), cwd=cwd, env=dict(env or {}))

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]

    def display(self) -> str:
        return shlex.join(self.argv)

    def child_env(self) -> dict[str, str]:
        return {**os.environ, **self.env}


DEFAULT_WARMUP_QUERIES = 3
"""Untimed searches before measuring, unless told otherwise: the first search of a freshly started
server pays for opening its index (seconds), which would otherwise be reported as the p95."""


@dataclass(frozen=True, kw_only=True)
class RunConfig:
    """How to reach the server and how to drive it."""

    server: CommandSpec
    build: CommandSpec | None = None
    tool_prefix: str | None = None
    warmup_queries: int = DEFAULT_WARMUP_QUERIES
    startup_timeout_s: float = 60.0
    """Bound on spawning the server and completing the MCP handshake."""
    request_timeout_s: float = 120.0
    """Bound on each MCP request (tools/list, search_docs, get_doc)."""
    build_timeout_s: float | None = None
    """Bound on the build command; ``None`` waits as long as it takes (embedding builds can be long)."""
    max_tokens: int | None = None
    """``max_tokens`` sent to ``search_docs`` and ``get_doc`` when their schemas declare it."""
    scope: str = "chunk"
    """``scope`` sent to ``get_doc`` when its schema declares that value (``chunk``: never sent)."""


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


def run_build(spec: CommandSpec, timeout_s: float | None = None) -> float:
    """Run the build command to completion and return its wall time in milliseconds.

    Its stdout goes to our stderr so the report on stdout stays clean; its stderr is passed through.
    """
    started = time.perf_counter()
    try:
        completed = subprocess.run(
            spec.argv,
            cwd=spec.cwd,
            env=spec.child_env(),
            stdin=subprocess.DEVNULL,
            stdout=2,
            timeout=timeout_s,
            check=False,
        )
    except FileNotFoundError:
        raise BuildCommandError(f"build command not found: {spec.command!r} (in {spec.display()})") from None
    except PermissionError:
        raise BuildCommandError(f"build command is not executable: {spec.command!r}") from None
    except subprocess.TimeoutExpired:
        raise BuildCommandError(
            f"build command did not finish within {timeout_s:g} s: {spec.display()}"
        ) from None
    except OSError as exc:
        raise BuildCommandError(f"cannot run build command {spec.display()}: {exc}") from None
    elapsed_ms = (time.perf_counter() - started) * 1000
    if completed.returncode != 0:
        how = (
            f"signal {-completed.returncode}"
            if completed.returncode < 0
            else f"exit code {completed.returncode}"
        )
        raise BuildCommandError(f"Build command failed with {how}: {spec.display()}")
    return elapsed_ms


def run_eval(
    config: RunConfig, cases: Sequence[EvalCase], progress: ProgressCallback | None = None
) -> EvalResult:
    """Blocking entry point: build (optionally), start the server, run every case, return the result."""
    return anyio.run(run_eval_async, config, cases, progress)


async def run_eval_async(
    config: RunConfig, cases: Sequence[EvalCase], progress: ProgressCallback | None = None
) -> EvalResult:
    """Async form of :func:`run_eval`; raises :class:`EvalError` subclasses for user-facing failures."""
    build_ms = 0.0
    if config.build is not None:
        build_ms = await anyio.to_thread.run_sync(run_build, config.build, config.build_timeout_s)
    with (
        tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog,
        _sdk_log_capture() as sdk_log,
    ):
        try:
            return await _drive_server(config, cases, build_ms, errlog, progress)
        except BaseExceptionGroup as group:
            # anyio task groups (the SDK's stdio transport) wrap what the body raised.
            found = _first_eval_error(group)
            if found is None:
                raise
            error = found
        except EvalError as exc:
            error = exc
    raise _with_sdk_log(error, sdk_log) from None


class _SdkLog(logging.Handler):
    """Collects the MCP SDK's log records (e.g. 'Failed to parse JSONRPC message') as one-line notes."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.notes: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        note = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            detail = [line.strip() for line in str(record.exc_info[1]).splitlines() if line.strip()]
            note += ": " + " ".join(detail[:2])
        self.notes.append(note[:300])


@contextmanager
def _sdk_log_capture() -> Iterator[_SdkLog]:
    """Keep the SDK's tracebacks off the user's terminal; they are summarised in our error instead."""
    logger = logging.getLogger("mcp")
    handler = _SdkLog()
    saved = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.propagate = saved


def _with_sdk_log(error: EvalError, sdk_log: _SdkLog) -> EvalError:
    if not sdk_log.notes:
        return error
    notes = "\n".join(f"  {note}" for note in dict.fromkeys(sdk_log.notes[-5:]))
    return type(error)(f"{error}\nMCP client messages:\n{notes}")


async def _drive_server(
    config: RunConfig,
    cases: Sequence[EvalCase],
    build_ms: float,
    errlog: TextIO,
    progress: ProgressCallback | None,
) -> EvalResult:
    server = config.server
    params = StdioServerParameters(
        command=server.command,
        args=list(server.args),
        cwd=server.cwd,
        env=server.child_env(),
    )
    client = Client(
        stdio_client(params, errlog=errlog),
        cache=None,
        read_timeout_seconds=config.request_timeout_s,
        client_info=Implementation(name=CLIENT_NAME, version=__version__),
    )
    before = child_pids()
    connected = False
    # The deadline bounds spawning + handshake only; it is lifted once the client is connected.
    with anyio.CancelScope(deadline=anyio.current_time() + config.startup_timeout_s) as startup:
        try:
            async with client:
                connected = True
                startup.deadline = math.inf
                return await _evaluate(
                    client, config, cases, build_ms, errlog, progress, find_new_child(before)
                )
        except Exception as exc:
            if connected:
                raise
            raise _start_error(exc, params, errlog) from None
    raise ServerStartError(
        f"the MCP server did not complete the MCP handshake within {config.startup_timeout_s:g} s:"
        f" {_display(params)}{_stderr_tail(errlog)}"
    )


async def _evaluate(
    client: Client,
    config: RunConfig,
    cases: Sequence[EvalCase],
    build_ms: float,
    errlog: TextIO,
    progress: ProgressCallback | None,
    server_pid: int | None,
) -> EvalResult:
    search_tool, get_doc_tool = tool_names(config.tool_prefix)
    stats = EvalStats(build_time_ms=build_ms)
    ranked: list[RankedCase] = []
    sampler = RssSampler(server_pid)
    sampler.start()
    try:
        session = _Session(client, config, errlog)
        await session.require_tools(search_tool, get_doc_tool)
        support = session.support
        await session.warm_up(search_tool, cases, config.warmup_queries)
        for index, case in enumerate(cases):
            ranked.append(await session.execute_case(search_tool, get_doc_tool, case, index, stats))
            if progress is not None:
                progress(index + 1, len(cases), mrr_at_k(ranked))
    finally:
        stats.peak_rss_mb = round_metric(sampler.stop())
    result = build_result(ranked, stats)
    info = client.server_info
    result.metadata.update(
        {
            "harness": CLIENT_NAME,
            "harnessVersion": __version__,
            "serverName": info.name if info is not None else None,
            "serverVersion": info.version if info is not None else None,
            "toolPrefix": config.tool_prefix,
            "warmupQueries": config.warmup_queries,
            "caseCount": len(cases),
            "tokenEncoding": "o200k_base",
            "maxTokens": config.max_tokens,
            "scope": config.scope,
            "maxTokensSupported": support.search_max_tokens and support.get_doc_max_tokens,
            "scopeSupported": config.scope in support.scopes,
        }
    )
    return result


def _display(params: StdioServerParameters) -> str:
    return shlex.join([params.command, *params.args])


def _start_error(exc: Exception, params: StdioServerParameters, errlog: TextIO) -> ServerStartError:
    leaf = next(_iter_leaves(exc), exc)
    if isinstance(leaf, FileNotFoundError):
        return ServerStartError(f"cannot start the MCP server: command not found: {params.command!r}")
    if isinstance(leaf, PermissionError):
        return ServerStartError(f"cannot start the MCP server: {params.command!r} is not executable")
    return ServerStartError(
        f"the MCP server failed to start ({_describe(exc)}): {_display(params)}{_stderr_tail(errlog)}"
    )


@dataclass
class _Hit:
    chunk_id: str
    metadata: Mapping[str, Any] | None


@dataclass
class _Page:
    hits: list[_Hit]
    next_cursor: str | None


class _Session:
    """One connected client plus the bookkeeping that turns its answers into ranked cases."""

    def __init__(self, client: Client, config: RunConfig, errlog: TextIO) -> None:
        self._client = client
        self._config = config
        self._errlog = errlog
        self.support = ToolSupport()

    async def _call(self, name: str, arguments: dict[str, Any], what: str) -> tuple[CallToolResult, float]:
        started = time.perf_counter()
        try:
            result = await self._client.call_tool(name, arguments)
        except MCPError as exc:
            raise ServerProtocolError(
                f"{name} failed for {what}: {exc.message} (MCP error {exc.code}){_stderr_tail(self._errlog)}"
            ) from None
        except (TimeoutError, anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            raise ServerProtocolError(
                f"{name} failed for {what}: the server stopped answering ({_describe(exc)})"
                f"{_stderr_tail(self._errlog)}"
            ) from None
        except Exception as exc:  # noqa: BLE001 - e.g. a result that is not valid MCP: report, don't crash
            raise ServerProtocolError(
                f"{name} failed for {what}: {_describe(exc)}{_stderr_tail(self._errlog)}"
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
                f"tools/list failed: {_describe(exc)}{_stderr_tail(self._errlog)}"
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
        while rounds < case.max_rounds:
            rounds += 1
            arguments: dict[str, Any] = {"query": case.query, "limit": case.limit, **case.filters}
            if cursor:
                arguments["cursor"] = cursor
            if self._config.max_tokens is not None and self.support.search_max_tokens:
                arguments["max_tokens"] = self._config.max_tokens
            result, elapsed = await self._call(search_tool, arguments, what)
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
            if not cursor:
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


def _iter_leaves(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _iter_leaves(inner)
    else:
        yield exc


def _first_eval_error(group: BaseExceptionGroup[Any]) -> EvalError | None:
    for leaf in _iter_leaves(group):
        if isinstance(leaf, EvalError):
            return leaf
    return None


def _describe(exc: BaseException) -> str:
    leaves = list(_iter_leaves(exc))
    leaf = leaves[0] if leaves else exc
    if isinstance(leaf, MCPError):
        return f"{leaf.message} (MCP error {leaf.code})"
    text = str(leaf)
    return f"{type(leaf).__name__}: {text}" if text else type(leaf).__name__


def _stderr_tail(errlog: TextIO) -> str:
    """The last lines the server wrote to stderr, formatted for an error message ('' if none)."""
    try:
        errlog.flush()
        errlog.seek(0)
        lines = errlog.read().splitlines()
    except (OSError, ValueError):
        return ""
    tail = [line for line in lines if line.strip()][-STDERR_TAIL_LINES:]
    if not tail:
        return "\n(the server wrote nothing to stderr)"
    return "\nLast lines of the server's stderr:\n" + "\n".join(f"  {line}" for line in tail)
