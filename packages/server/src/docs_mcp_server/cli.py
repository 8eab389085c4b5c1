"""``docs-mcp-server``: serve a docs-mcp index to AI agents over MCP (stdio or streamable HTTP).

Start-up is tuned for stdio clients that spawn the server on demand: arguments and ``metadata.json``
are checked with light imports, the client's opening request is answered while the MCP SDK is still
importing, and the search index (LanceDB) is opened in the background. The flags are in
:mod:`docs_mcp_server.command_line`, the start-up in :mod:`docs_mcp_server.serve`; this module is the
process around them: signals, logging and a clean exit.
"""

from __future__ import annotations

import gc
import itertools
import logging
import os
import signal
import sys
from collections.abc import Sequence
from types import FrameType
from typing import NoReturn

from docs_mcp_server.command_line import EXIT_OK, EXIT_USAGE, build_parser, fail
from docs_mcp_server.errors import Interrupted
from docs_mcp_server.stop_signals import STOP_SIGNALS


def _interrupt(signum: int, frame: FrameType | None) -> NoReturn:
    raise Interrupted(signal.Signals(signum).name)


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("LANCEDB_LOG", "error")
    from docs_mcp_core.memory import return_freed_memory_by_default

    return_freed_memory_by_default()
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    for flag, value in itertools.pairwise(words):
        if flag == "--version" and not value.startswith("-"):  # the flag's meaning before it printed ours
            parser.error(
                f"--version takes no value; set the version reported to clients with --server-version {value}"
            )
    args = parser.parse_args(words)
    if args.index_dir is None:
        parser.error("the following arguments are required: --index-dir")

    from docs_mcp_server.logs import configure_logging, log, parse_level
    from docs_mcp_server.serve import serve

    try:
        level = parse_level(
            args.log_level, "--log-level" if "--log-level" in (argv or sys.argv) else "LOG_LEVEL"
        )
    except ValueError as exc:
        return fail(str(exc), EXIT_USAGE)
    configure_logging(level, pretty=args.log_pretty)

    for signum in STOP_SIGNALS:
        signal.signal(signum, _interrupt)
    try:
        return serve(args, words)
    except Interrupted as exc:
        log(logging.INFO, "interrupted during start-up", signal=str(exc))
        return EXIT_OK


def run() -> NoReturn:
    """Console-script entry point: run :func:`main`, then leave without interpreter finalisation.

    LanceDB keeps native worker threads that may still touch the Python runtime while it shuts
    down, which can abort an otherwise clean exit (``PyGILState_Release`` during finalisation).
    The server holds nothing that needs finalising once ``main`` returns, so the streams are
    flushed and the process exits directly with ``main``'s status.
    """
    # Ctrl-C or SIGTERM from the first line on ends the start quietly, as main() reports one that
    # comes while the index opens: the client that started the server is leaving
    for signum in STOP_SIGNALS:
        signal.signal(signum, _interrupt)
    try:
        from docs_mcp_core.standard_streams import fill_missing_standard_streams

        fill_missing_standard_streams()  # before anything opens a file: a closed 0, 1 or 2 is /dev/null
        # Start-up imports and builds many long-lived objects and few cycles: the cyclic collector
        # would only walk them again and again (8 % of the time to the first answer). serve()
        # collects once and turns it back on when the server is up, with what start-up made frozen.
        gc.disable()
        code = main()
    except SystemExit as exc:  # argparse usage errors and --help
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
    except (Interrupted, KeyboardInterrupt):  # before main() set up its logging: nothing to say
        code = EXIT_OK
    _exit_now(code)


def _exit_now(code: int) -> NoReturn:
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    run()
