"""The ``docs-mcp`` command: validate, fix, build, search and get, one module each.

Every command takes ``-h`` / ``--help``; ``--version`` prints the version. Flags that take no value
are shown without a type. Failures go through :mod:`docs_mcp_cli.errors`: one ``error: ...`` line on
stderr and exit status 1 (2 for usage errors, 130 when interrupted).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Annotated, Any, NoReturn

import typer
from typer.core import TyperCommand, TyperGroup

from docs_mcp_cli import __version__
from docs_mcp_cli.build_cmd import build
from docs_mcp_cli.fix_cmd import fix
from docs_mcp_cli.search_cmd import get, search
from docs_mcp_cli.validate_cmd import validate
from docs_mcp_core.memory import return_freed_memory_by_default
from docs_mcp_core.standard_streams import fill_missing_standard_streams


def _plain_flags(params: Sequence[Any]) -> list[Any]:
    """Flags take no value, so their help shows no type (typer would show ``<bool>``)."""
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    return list(params)


class Command(TyperCommand):
    def get_params(self, ctx: Any) -> list[Any]:
        return _plain_flags(super().get_params(ctx))

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """A required argument shows as the errors name it (``QUERY``), not typer's ``{QUERY}``."""
        pieces = super().collect_usage_pieces(ctx)
        return [p[1:-1] if p.startswith("{") and p.endswith("}") else p for p in pieces]


class Group(TyperGroup):
    def get_params(self, ctx: Any) -> list[Any]:
        return _plain_flags(super().get_params(ctx))


app = typer.Typer(
    name="docs-mcp",
    cls=Group,
    help="Validate, fix and index markdown documentation for docs-mcp, and query an index from the terminal.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"docs-mcp {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """docs-mcp: hybrid search over markdown documentation, served to AI agents over MCP."""


app.command("validate", cls=Command, help="Check a corpus the way `build` will, and report every problem.")(
    validate
)
app.command("fix", cls=Command, help="Bootstrap or repair .docs-mcp.json manifests from heading statistics.")(
    fix
)
app.command(
    "build",
    cls=Command,
    help="Build the search index (LanceDB table, chunks.json, metadata.json) for a docs folder.",
)(build)
app.command("search", cls=Command, help="Search an index the way the search_docs tool does.")(search)
app.command(
    "get", cls=Command, help="Print a chunk (and optionally its neighbours) the way the get_doc tool does."
)(get)


def main() -> NoReturn:
    """Console-script entry point.

    The process leaves through ``os._exit`` once the command has finished and its output is
    flushed: LanceDB's native worker threads can otherwise abort interpreter finalisation after
    a successful command (every index write is complete and swapped in by then).
    """
    if threading.current_thread() is threading.main_thread():  # Ctrl-C: KeyboardInterrupt again,
        signal.signal(signal.SIGINT, signal.default_int_handler)  # which the commands report
    fill_missing_standard_streams()  # a closed 0, 1 or 2 is /dev/null, not the next file opened
    return_freed_memory_by_default()
    code: int = 0
    try:
        app()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
    except BrokenPipeError:  # e.g. `docs-mcp get ... | head`
        code = 0
        _silence_stdout()
    except OSError as exc:  # a command's work is reported inside it: this is its output's write
        code = _output_lost(exc)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            _silence_stdout()
        except OSError as exc:
            if stream is sys.stdout and code == 0:
                code = _output_lost(exc)
        except ValueError:
            pass
    os._exit(code)


def _output_lost(exc: OSError) -> int:
    """Say in one line that standard output could not be written (``> /dev/full``, a full disk):
    the work was done but its output is lost. It was a traceback. The exit status, 1."""
    _silence_stdout()
    with contextlib.suppress(OSError, ValueError):
        print(f"error: the output could not be written ({exc.strerror or exc})", file=sys.stderr)
    return 1


def _silence_stdout() -> None:
    """Point stdout at /dev/null so a closed pipe cannot fail the final flush."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
