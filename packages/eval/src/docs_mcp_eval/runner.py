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

import logging
import math
import shlex
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

import anyio
import anyio.to_thread
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import Implementation

from docs_mcp_eval import __version__
from docs_mcp_eval.cases import EvalCase
from docs_mcp_eval.commands import (
    DEFAULT_WARMUP_QUERIES,
    SCOPES,
    CommandSpec,
    RunConfig,
    Scope,
    not_found,
    run_build,
)
from docs_mcp_eval.errors import EvalError, ServerStartError
from docs_mcp_eval.formatting import round_metric
from docs_mcp_eval.metrics import build_result, mrr_at_k
from docs_mcp_eval.results import EvalResult, EvalStats, RankedCase
from docs_mcp_eval.rss import RssSampler, child_pids, find_new_child
from docs_mcp_eval.session import Session, ToolSupport, describe_failure, iter_leaves, stderr_tail, tool_names

CLIENT_NAME = "docs-mcp-eval"

__all__ = [
    "DEFAULT_WARMUP_QUERIES",
    "SCOPES",
    "CommandSpec",
    "ProgressCallback",
    "RunConfig",
    "Scope",
    "ToolSupport",
    "run_build",
    "run_eval",
    "run_eval_async",
    "tool_names",
]

ProgressCallback = Callable[[int, int, float], None]
"""Called after each case with (cases done, cases total, running MRR@5)."""


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
    spawned = time.perf_counter()
    # The deadline bounds spawning + handshake only; it is lifted once the client is connected.
    with anyio.CancelScope(deadline=anyio.current_time() + config.startup_timeout_s) as startup:
        try:
            async with client:
                connected = True
                startup.deadline = math.inf
                return await _evaluate(
                    client, config, cases, build_ms, errlog, progress, find_new_child(before), spawned
                )
        except Exception as exc:
            if connected:
                raise
            raise _start_error(exc, params, errlog) from None
    raise ServerStartError(
        f"the MCP server did not complete the MCP handshake within {config.startup_timeout_s:g} s:"
        f" {_display(params)}{stderr_tail(errlog)}"
    )


async def _evaluate(
    client: Client,
    config: RunConfig,
    cases: Sequence[EvalCase],
    build_ms: float,
    errlog: TextIO,
    progress: ProgressCallback | None,
    server_pid: int | None,
    spawned: float,
) -> EvalResult:
    """``spawned``: ``time.perf_counter()`` just before the client spawned the server."""
    search_tool, get_doc_tool = tool_names(config.tool_prefix)
    stats = EvalStats(build_time_ms=build_ms, startup_ms=(time.perf_counter() - spawned) * 1000)
    ranked: list[RankedCase] = []
    sampler = RssSampler(server_pid)
    sampler.start()
    try:
        session = Session(client, config, errlog)
        await session.require_tools(search_tool, get_doc_tool)
        support = session.support
        await session.warm_up(search_tool, cases, config.warmup_queries)
        for index, case in enumerate(cases):
            ranked.append(await session.execute_case(search_tool, get_doc_tool, case, index, stats))
            if progress is not None:
                progress(index + 1, len(cases), mrr_at_k(ranked))
    finally:
        stats.peak_rss_mb = round_metric(sampler.stop())
    if session.first_search_answered_at is not None:
        stats.first_search_ms = (session.first_search_answered_at - spawned) * 1000
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
    leaf = next(iter_leaves(exc), exc)
    if isinstance(leaf, FileNotFoundError):
        return ServerStartError(f"cannot start the MCP server: {not_found(params.command)}")
    if isinstance(leaf, PermissionError):
        return ServerStartError(f"cannot start the MCP server: {params.command!r} is not executable")
    return ServerStartError(
        f"the MCP server failed to start ({describe_failure(exc)}): {_display(params)}{stderr_tail(errlog)}"
    )


def _first_eval_error(group: BaseExceptionGroup[Any]) -> EvalError | None:
    for leaf in iter_leaves(group):
        if isinstance(leaf, EvalError):
            return leaf
    return None
