"""The ``docs-mcp`` command: validate, fix, build, search and get."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from docs_mcp_cli import __version__
from docs_mcp_cli.progress import ConsoleReporter, human_bytes

app = typer.Typer(
    name="docs-mcp",
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


def _fail(message: str, code: int = 1) -> typer.Exit:
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    return typer.Exit(code)


def _register_optional_commands() -> None:
    try:
        from docs_mcp_cli.validate_cmd import validate
    except ImportError:  # pragma: no cover - present in every release
        pass
    else:
        app.command("validate", help="Check a corpus the way `build` will, and report every problem.")(
            validate
        )
    try:
        from docs_mcp_cli.fix_cmd import fix
    except ImportError:  # pragma: no cover
        pass
    else:
        app.command("fix", help="Bootstrap or repair .docs-mcp.json manifests from heading statistics.")(fix)


_register_optional_commands()


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the work is so that it cleans up exactly as on Ctrl-C."""


@contextmanager
def _sigterm_stops_like_ctrl_c() -> Iterator[None]:
    """Turn the first SIGTERM into :class:`_Terminated`; later ones wait for the clean-up."""

    def stop(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise _Terminated

    if threading.current_thread() is not threading.main_thread():  # only the main thread has signals
        yield
        return
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def _positive(name: str, value: int | None) -> int | None:
    if value is not None and value <= 0:
        raise _fail(f"{name} expects a positive integer, got '{value}'", 2)
    return value


@app.command(help="Build the search index (LanceDB table, chunks.json, metadata.json) for a docs folder.")
def build(
    docs_dir: Annotated[Path, typer.Option("--docs-dir", help="Folder of markdown files to index.")],
    out: Annotated[
        str,
        typer.Option(
            "--out",
            help="Output folder for .lancedb/, chunks.json, metadata.json, or an object-store URI "
            "(s3://bucket/prefix; endpoint and credentials from AWS_* variables or --storage-option).",
        ),
    ],
    description: Annotated[
        str, typer.Option("--description", help="What the corpus is; shown to agents in tool descriptions.")
    ] = "Documentation corpus",
    embedding_provider: Annotated[
        str,
        typer.Option(
            "--embedding-provider",
            help="none (lexical only), local (bundled MiniLM model, offline, no API key), "
            "hash (deterministic, for tests) or openai.",
        ),
    ] = "none",
    embedding_model: Annotated[
        str | None, typer.Option("--embedding-model", help="Embedding model name.")
    ] = None,
    embedding_dimensions: Annotated[
        int | None, typer.Option("--embedding-dimensions", help="Vector size (hash default 256).")
    ] = None,
    embedding_api_key: Annotated[
        str | None, typer.Option("--embedding-api-key", help="API key (default: $OPENAI_API_KEY).")
    ] = None,
    embedding_base_url: Annotated[
        str | None, typer.Option("--embedding-base-url", help="Base URL of an OpenAI-compatible API.")
    ] = None,
    embedding_batch_size: Annotated[
        int | None, typer.Option("--embedding-batch-size", help="Inputs per embedding request (default 128).")
    ] = None,
    embedding_concurrency: Annotated[
        int | None, typer.Option("--embedding-concurrency", help="Embedding requests in flight (default 4).")
    ] = None,
    embedding_max_retries: Annotated[
        int | None, typer.Option("--embedding-max-retries", help="Retries on 429/5xx/timeouts (default 3).")
    ] = None,
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="Parent folder of .embedding-cache/ (default: --out).")
    ] = None,
    rebuild_cache: Annotated[
        bool,
        typer.Option("--rebuild-cache", help="Ignore the chunk and embedding caches of the previous build."),
    ] = False,
    tool_description_search: Annotated[
        str | None,
        typer.Option("--tool-description-search", help="Override the search_docs tool description."),
    ] = None,
    tool_description_get_doc: Annotated[
        str | None, typer.Option("--tool-description-get-doc", help="Override the get_doc tool description.")
    ] = None,
    mcp_server_instructions: Annotated[
        str | None,
        typer.Option("--mcp-server-instructions", help="Server instructions (default: from the manifests)."),
    ] = None,
    workers: Annotated[int | None, typer.Option("--workers", help="Chunking processes (default: 2).")] = None,
    follow_external_symlinks: Annotated[
        bool,
        typer.Option(
            "--follow-external-symlinks",
            help="Index files that symbolic links lead to outside --docs-dir (skipped with a warning by default).",
        ),
    ] = False,
    storage_option: Annotated[
        list[str] | None,
        typer.Option(
            "--storage-option",
            metavar="KEY=VALUE",
            help="Object-store setting for an s3:// --out (endpoint, region, access_key_id, secret_access_key, "
            "session_token, allow_http); repeatable. Default: the AWS_* environment variables.",
        ),
    ] = None,
) -> None:
    from docs_mcp_core.build import BuildOptions, EmbeddingOptions, ToolTexts, build_index
    from docs_mcp_core.errors import CorpusInvalidError, DocsMcpError, StorageError
    from docs_mcp_core.index.location import index_location, parse_storage_option

    try:
        out_location = index_location(out)
        storage_options = dict(parse_storage_option(item) for item in storage_option or [])
    except StorageError as exc:
        raise _fail(str(exc), 2) from None

    if not docs_dir.is_dir():
        raise _fail(f"--docs-dir '{docs_dir}' does not exist or is not a directory", 2)
    for name, value in (
        ("--embedding-dimensions", embedding_dimensions),
        ("--embedding-batch-size", embedding_batch_size),
        ("--embedding-concurrency", embedding_concurrency),
        ("--workers", workers),
    ):
        _positive(name, value)
    if embedding_max_retries is not None and embedding_max_retries < 0:
        raise _fail(
            f"--embedding-max-retries expects a non-negative integer, got '{embedding_max_retries}'", 2
        )
    reporter = ConsoleReporter()
    options = BuildOptions(
        docs_dir=docs_dir,
        out_dir=out_location,
        description=description,
        embedding=EmbeddingOptions(
            provider=embedding_provider,
            model=embedding_model,
            dimensions=embedding_dimensions,
            api_key=embedding_api_key,
            base_url=embedding_base_url,
            batch_size=embedding_batch_size,
            concurrency=embedding_concurrency,
            max_retries=embedding_max_retries,
            cache_dir=cache_dir,
        ),
        tools=ToolTexts(
            search_docs=tool_description_search,
            get_doc=tool_description_get_doc,
            server_instructions=mcp_server_instructions,
        ),
        rebuild_cache=rebuild_cache,
        workers=workers,
        storage_options=storage_options or None,
        follow_external_symlinks=follow_external_symlinks,
    )
    try:
        with _sigterm_stops_like_ctrl_c():
            summary = build_index(options, reporter)
    except CorpusInvalidError as exc:
        reporter.close()
        for finding in exc.findings:
            typer.echo(finding.render(), err=True)
        raise _fail(
            "build refused: the corpus has errors (nothing was written; the previous index is untouched)"
        ) from None
    except DocsMcpError as exc:
        reporter.close()
        raise _fail(f"{exc} (the previous index, if any, is untouched)") from None
    except KeyboardInterrupt as exc:
        reporter.close()
        if isinstance(exc, _Terminated):
            raise _fail(
                "terminated (the previous index, if any, is untouched)", 128 + signal.SIGTERM
            ) from None
        raise _fail("interrupted (the previous index, if any, is untouched)", 128 + signal.SIGINT) from None
    except Exception as exc:  # noqa: BLE001 - never a bare traceback; the old index is intact
        reporter.close()
        raise _fail(
            f"build failed unexpectedly: {type(exc).__name__}: {exc} (the previous index, if any, is untouched; "
            "please report this with the command you ran)"
        ) from None
    reporter.close()
    typer.echo(
        f"wrote {summary.chunks:,} chunks from {summary.files:,} files to {summary.out_dir} "
        f"({summary.cached_files:,} files unchanged, {human_bytes(summary.index_bytes)}, {summary.seconds:.1f}s)"
    )


def _parse_filters(values: list[str]) -> dict[str, str]:
    filters: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise _fail(f"--filter expects KEY=VALUE, got '{item}'", 2)
        filters[key.strip()] = value.strip()
    return filters


def _open_engine(index_dir: Path):
    os.environ.setdefault("LANCEDB_LOG", "error")
    from docs_mcp_core.errors import DocsMcpError
    from docs_mcp_core.search import SearchEngine

    try:
        return SearchEngine.open(index_dir, on_warning=lambda m: typer.echo(f"warning: {m}", err=True))
    except DocsMcpError as exc:
        raise _fail(str(exc)) from None


@app.command(help="Search an index the way the search_docs tool does.")
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    index_dir: Annotated[Path, typer.Option("--index-dir", help="Folder written by `docs-mcp build`.")],
    limit: Annotated[int, typer.Option("--limit", min=1, max=50, help="Hits per page (1-50).")] = 10,
    filter_: Annotated[
        list[str] | None, typer.Option("--filter", help="Taxonomy filter KEY=VALUE (repeatable).")
    ] = None,
    cursor: Annotated[str | None, typer.Option("--cursor", help="next_cursor of a previous page.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print exactly what search_docs returns.")] = False,
) -> None:
    from docs_mcp_core.errors import SearchError

    filters = _parse_filters(filter_ or [])
    engine = _open_engine(index_dir)
    try:
        engine.check_filters(filters, values=True)
    except SearchError as exc:
        raise _fail(str(exc), 2) from None
    try:
        result = engine.search(query, limit=limit, filters=filters, cursor=cursor)
    except SearchError as exc:
        raise _fail(str(exc)) from None
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return
    if not result.hits:
        hint = result.hint or {}
        typer.echo(hint.get("message", "no results"))
        for key, values in (hint.get("suggested_filters") or {}).items():
            typer.echo(f"  try --filter {key}={' | '.join(values)}")
        return
    for n, hit in enumerate(result.hits, start=1):
        meta = " ".join(f"{k}={v}" for k, v in hit.metadata.items())
        typer.secho(f"{n:>2}. {hit.chunk_id}", bold=True)
        typer.echo(f"    {hit.breadcrumb}")
        typer.echo(f"    score {hit.score:.6f}  {meta}")
        typer.echo(f"    {hit.snippet}")
    if result.next_cursor:
        typer.echo(f"\nmore: --cursor {result.next_cursor}")


@app.command(help="Print a chunk (and optionally its neighbours) the way the get_doc tool does.")
def get(
    chunk_id: Annotated[str, typer.Argument(help="A chunk id returned by search.")],
    index_dir: Annotated[Path, typer.Option("--index-dir", help="Folder written by `docs-mcp build`.")],
    context: Annotated[
        int, typer.Option("--context", min=0, max=5, help="Neighbouring chunks on each side (0-5).")
    ] = 0,
) -> None:
    from docs_mcp_core.errors import SearchError

    engine = _open_engine(index_dir)
    try:
        typer.echo(engine.get_doc(chunk_id, context))
    except SearchError as exc:
        raise _fail(str(exc)) from None


def main() -> NoReturn:
    """Console-script entry point.

    The process leaves through ``os._exit`` once the command has finished and its output is
    flushed: LanceDB's native worker threads can otherwise abort interpreter finalisation after
    a successful command (every index write is complete and swapped in by then).
    """
    from docs_mcp_core.memory import return_freed_memory_by_default

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
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            _silence_stdout()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so a closed pipe cannot fail the final flush."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
