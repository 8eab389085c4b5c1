"""Starting the server from checked flags: the index's metadata, the early answers, then the transport.

The order is what makes start-up fast. An HTTP server listens before the heavy imports (clients can
connect at once; ``/healthz`` is answered meanwhile, and other requests held until uvicorn runs). A stdio server answers the client's opening
request, tool list and first searches early (:mod:`docs_mcp_server.handshake`,
:mod:`docs_mcp_server.early_tools`) while the index opens, before the MCP SDK is imported. Errors
follow the command's convention: one ``error:`` line, exit 2 for usage and 1 for a failed start.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import gc
import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from docs_mcp_server.command_line import (
    EXIT_BOOT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    fail,
    http_limits,
    server_options,
    usage_problem,
)

if TYPE_CHECKING:
    from docs_mcp_core.embedding.local_model import LoadedModel
    from docs_mcp_server.app import DocsMcpApp
    from docs_mcp_server.engine import LazyEngine
    from docs_mcp_server.http_early import EarlyResponder
    from docs_mcp_server.metadata_view import MetadataView
    from docs_mcp_server.options import HttpLimits, ServerOptions
    from docs_mcp_server.stdio import StdioWire

OPEN_BEFORE_SDK_SECONDS = 3.0  # how long a server lets the index open before importing the SDK


def serve(args: argparse.Namespace, words: Sequence[str]) -> int:
    """Serve the index the parsed flags name until the client or a signal ends it; the exit code."""
    from docs_mcp_server.boot import load_index_metadata
    from docs_mcp_server.errors import BootError, OptionsError

    try:
        options = server_options(args)
        limits = http_limits(args)
    except OptionsError as exc:
        return fail(str(exc), EXIT_USAGE)
    problem = usage_problem(args)
    if problem is not None:
        return fail(problem, EXIT_USAGE)
    try:
        metadata = load_index_metadata(options.index_dir, options.storage_options)
    except BootError as exc:
        return fail(str(exc), EXIT_BOOT_FAILED)

    wire = engine = responder = None
    if args.transport == "http" and args.workers <= 1 and not _is_worker():
        # listen before the heavy imports: clients connect at once and /healthz is answered
        # (:mod:`docs_mcp_server.http_early`); it says "ready" once the index opens, before the SDK
        from docs_mcp_server.http_early import bind_socket, respond_early

        try:
            listening = bind_socket(args.host, args.port)
        except OSError as exc:
            return fail(_listen_failure(args, exc), EXIT_BOOT_FAILED)
        engine = options.open_engine()
        engine.start_warm_up()  # no model preload: over HTTP nothing is answered before the SDK runs
        responder = respond_early(
            listening, options, metadata, engine, max_connections=limits.max_connections
        )
        engine.wait_warm(OPEN_BEFORE_SDK_SECONDS)
    if args.transport == "stdio":
        wire, engine = _answer_early(args, options, metadata)

    from docs_mcp_server.app import DocsMcpApp

    try:
        app = DocsMcpApp(options, metadata, engine=engine)
    except OptionsError as exc:
        return fail(str(exc), EXIT_USAGE)
    collect_from_now_on()
    try:
        if args.transport == "http":
            return _run_http(app, args, words, limits, responder)
        assert wire is not None
        return _run_stdio(app, wire)
    finally:
        app.close()


def collect_from_now_on() -> None:
    """Turn the cyclic garbage collector back on when start-up turned it off (``docs-mcp-server``
    starts with it off, :func:`docs_mcp_server.cli.run`). One collection frees the cycles start-up
    left (about a megabyte; 40 ms on a 2-core machine, after a stdio client's first searches were
    answered early), and what remains is moved out of the collector's reach for good
    (:func:`gc.freeze`): the modules, the index and the app live as long as the process, and a
    collection need not walk them again."""
    if not gc.isenabled():
        gc.collect()
        gc.freeze()
        gc.enable()


def _answer_early(
    args: argparse.Namespace, options: ServerOptions, metadata: MetadataView
) -> tuple[StdioWire, LazyEngine]:
    """Start the stdio wire with its early answers and the index opening (see the module's docstring)."""
    from docs_mcp_server.early_tools import EarlyTools
    from docs_mcp_server.handshake import EarlyHandshake
    from docs_mcp_server.logs import log
    from docs_mcp_server.stdio import StdioWire

    if args.auth_token:
        log(logging.WARNING, "--auth-token only applies to --transport http; ignored for stdio")
    if args.playground or args.playground_password:
        flag = "--playground" if args.playground else "--playground-password (or PLAYGROUND_PASSWORD)"
        log(logging.WARNING, f"{flag} only applies to --transport http; ignored for stdio")
    build = options.build_info()
    engine = options.open_engine()
    early = EarlyTools(options, metadata, engine)
    wire = StdioWire(EarlyHandshake(build.name, build.version, metadata.instructions), early_tools=early)
    wire.start()
    engine.start_warm_up()
    _preload_models(options, metadata)
    early.prepare()
    # the index opens before the MCP SDK imports, which would take half of the interpreter's time
    # meanwhile; until the SDK runs, the tool list and searches are answered early
    engine.wait_warm(OPEN_BEFORE_SDK_SECONDS)
    wire.wait_early_calls(OPEN_BEFORE_SDK_SECONDS)
    return wire, engine


def _preload_models(options: ServerOptions, metadata: MetadataView) -> None:
    """Start loading the shipped models that searches embed queries with, beside the engine's
    opening (which would load them only once the index is open, after importing its code).

    Only over stdio, where the first search is answered before the MCP SDK is imported: over HTTP
    every request waits for the SDK, which imports after the model anyway, and loading it beside
    the index would only delay ``/healthz``'s ``ready``."""
    models = models_to_preload(metadata, options.ranking)
    if models:
        threading.Thread(
            target=_load_models, args=(models,), name="docs-mcp-model-preload", daemon=True
        ).start()


def models_to_preload(metadata: MetadataView, ranking: str | None) -> list[str]:
    """The shipped models a search of this index embeds its query with: the ``local`` chunk
    vectors' model, and the heading vectors' model under the default ranking (the one that has
    the heading-path leg)."""
    wanted = [
        model for leg, model in metadata.local_models if leg == "vector" or ranking in (None, "default")
    ]
    return list(dict.fromkeys(wanted))


_preloaded: dict[str, LoadedModel] = {}  # the models loaded at boot, by name, kept for the server's life


def _load_models(models: Sequence[str]) -> None:
    # ONNX Runtime before docs_mcp_core's embedding package: the engine's thread is importing that
    # package meanwhile, and waiting for it held this thread back (about 60 ms on a 2-core machine)
    # before the runtime's import, after which the session is built without the interpreter's lock.
    # NumPy first, as a whole: the runtime's compiled module imports NumPy's from within, and doing so
    # while the engine's thread imports NumPy could give either thread a half-initialised module
    import numpy  # noqa: F401

    with contextlib.suppress(ImportError):  # the first search that needs it reports it
        import onnxruntime  # noqa: F401
    from docs_mcp_core.embedding.local_model import load_model, resolve_local_model
    from docs_mcp_core.errors import EmbeddingError

    for model in models:
        with contextlib.suppress(EmbeddingError):  # the first search that needs it reports it
            _preloaded[model] = load_model(resolve_local_model(model))


def _run_stdio(app: DocsMcpApp, wire: StdioWire) -> int:
    import anyio

    from docs_mcp_server.logs import log

    log(logging.INFO, "started mcp server", transport="stdio", index_dir=str(app.options.index_dir))
    app.engine.start_warm_up()
    anyio.run(lambda: wire.serve(app.server))
    return EXIT_OK


def _run_http(
    app: DocsMcpApp,
    args: argparse.Namespace,
    words: Sequence[str],
    limits: HttpLimits,
    early: EarlyResponder | None,
) -> int:
    """Serve HTTP from this process, or supervise ``--workers`` processes that each do."""
    from docs_mcp_server.http import run_http
    from docs_mcp_server.workers import supervise, this_worker

    worker = this_worker()
    try:
        if args.workers > 1 and worker is None:
            return supervise(words, host=args.host, port=args.port, count=args.workers)
        if worker is not None:
            worker.follow_parent()
        run_http(
            app,
            host=args.host,
            port=args.port,
            stateless=args.stateless,
            auth_token=args.auth_token,
            playground=args.playground,
            playground_password=args.playground_password,
            limits=limits,
            worker=worker,
            early=early,
        )
    except OSError as exc:
        return fail(_listen_failure(args, exc), EXIT_BOOT_FAILED)
    return EXIT_OK


def _is_worker() -> bool:
    from docs_mcp_server.workers import this_worker

    return this_worker() is not None


def _listen_failure(args: argparse.Namespace, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    if exc.errno == errno.EADDRINUSE:
        reason += (
            " (by another server or program): stop it, choose another port with --port, "
            "or use --port 0 to let the system pick a free one"
        )
    return f"cannot listen on {args.host}:{args.port}: {reason}"
