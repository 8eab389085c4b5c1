"""``docs-mcp search`` and ``docs-mcp get``: query an index from the terminal, as the MCP tools do.

Both open the index with :class:`docs_mcp_core.search.SearchEngine`, the engine the server uses, so
results, cursors and errors are the tools'. What they print of the documents reaches a terminal
with its control characters escaped (:mod:`docs_mcp_cli.terminal_text`). Exit status: 0 on success, 1 when the index cannot be
opened or read (a damaged table is reported with how to rebuild it) or the chunk is not found, 2 on
usage errors (an empty query or chunk id, a query over the length or word limit, an unknown filter
key or value, a malformed ``--filter``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, get_args

import typer

from docs_mcp_cli.errors import reporting, usage_error
from docs_mcp_cli.params import index_dir_option, key_value_pairs, location, one_of, storage_option_option
from docs_mcp_cli.terminal_text import for_terminal
from docs_mcp_core.errors import IndexNotFoundError, SearchError

if TYPE_CHECKING:
    from docs_mcp_core.search import SearchEngine, SearchResult

Scope = Literal[
    "chunk", "section", "parent"
]  # docs_mcp_core.search.sections.SCOPES, without importing search
IndexDir = Annotated[str, index_dir_option()]
StorageOption = Annotated[list[str] | None, storage_option_option()]


def _open_engine(where: Path | str, storage_options: dict[str, str] | None) -> SearchEngine:
    os.environ.setdefault("LANCEDB_LOG", "error")
    # imported when a command runs: the other commands and --help do not load NumPy and pyarrow
    from docs_mcp_core.index.live_files import OLD_TABLE_DIRNAME, live_files
    from docs_mcp_core.search import SearchEngine

    engine = SearchEngine.open(
        where,
        on_warning=lambda m: typer.echo(f"warning: {m}", err=True),
        storage_options=storage_options,
    )
    if isinstance(where, Path) and (files := live_files(where)).mid_swap:
        which = "previous" if files.table == OLD_TABLE_DIRNAME else "new"
        typer.echo(
            f"warning: a build was stopped while it replaced the index in '{where}'; reading the {which} "
            f"complete index there as it is (the next docs-mcp build --out {where} finishes or undoes the swap)",
            err=True,
        )
    return engine


@contextmanager
def _readable(where: Path | str) -> Iterator[None]:
    """A table whose files are missing or damaged fails inside LanceDB (when the engine reads it at
    open, or mid-query): report it as an unreadable index with what to do, not as an unexpected failure."""
    try:
        yield
    except PermissionError as exc:  # the index folder (or a folder in it) this user may not read
        from docs_mcp_core.corpus_walk import cannot_read

        raise IndexNotFoundError(cannot_read(f"the index at '{where}' ('{exc.filename}')", exc)) from None
    except (RuntimeError, OSError, ValueError) as exc:
        text = str(exc)
        if "lance error" not in text.lower():
            raise
        detail = text.split(", /", 1)[0].strip()  # drop the library's source location
        raise IndexNotFoundError(
            f"the index at '{where}' cannot be read ({detail}); rebuild it with docs-mcp build --out {where}"
        ) from None


def search(
    query: Annotated[str, typer.Argument(metavar="QUERY", help="What to look for.")],
    index_dir: IndexDir,
    limit: Annotated[
        int, typer.Option("--limit", metavar="N", min=1, max=50, help="Hits per page (1-50).")
    ] = 10,
    filter_: Annotated[
        list[str] | None,
        typer.Option(
            "--filter", metavar="KEY=VALUE", help="Taxonomy filter (repeatable, one value per key)."
        ),
    ] = None,
    cursor: Annotated[
        str | None, typer.Option("--cursor", metavar="CURSOR", help="next_cursor of a previous page.")
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-tokens",
            metavar="N",
            min=200,
            max=1_000_000,
            help="Fit the search_docs answer to this many o200k_base tokens (200-1000000).",
        ),
    ] = None,
    facets: Annotated[
        bool, typer.Option("--facets", help="Also count the top candidates per value of unfiltered keys.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print exactly what search_docs returns.")] = False,
    storage_option: StorageOption = None,
) -> None:
    """Search an index the way the search_docs tool does."""
    if not query.strip():
        raise usage_error("the query must not be empty", "QUERY")
    # imported when the command runs (see _open_engine)
    from docs_mcp_core.search import check_query

    try:
        check_query(query)
    except SearchError as exc:
        raise usage_error(str(exc), "QUERY") from None
    where, storage_options = location(index_dir, storage_option, "--index-dir")
    filters = key_value_pairs(filter_, "--filter")
    with reporting("search"), _readable(where):
        engine = _open_engine(where, storage_options)
        try:
            engine.check_filters(filters, values=True)
        except SearchError as exc:
            raise usage_error(str(exc), "--filter") from None
        result = engine.search(
            query, limit=limit, filters=filters, cursor=cursor, max_tokens=max_tokens, facets=facets
        )
    if as_json:
        typer.echo(for_terminal(result.text(), json_text=True))
    else:
        _print_result(result)


def _print_result(result: SearchResult) -> None:
    if not result.hits:
        hint = result.hint or {}
        typer.echo(for_terminal(hint.get("message", "no results")))
        for key, values in (hint.get("suggested_filters") or {}).items():
            typer.echo(for_terminal(f"  try --filter {key}={' | '.join(values)}"))
        return
    for n, hit in enumerate(result.hits, start=1):
        meta = " ".join(f"{k}={v}" for k, v in hit.metadata.items())
        typer.secho(for_terminal(f"{n:>2}. {hit.chunk_id}"), bold=True)
        typer.echo(for_terminal(f"    {hit.breadcrumb}"))
        typer.echo(for_terminal(f"    score {hit.score:.6f}  {meta}"))
        typer.echo(for_terminal(f"    {hit.snippet}"))
    if result.facets:
        typer.echo("")
        for key, counts in result.facets.items():
            typer.echo(for_terminal(f"{key}: {', '.join(f'{value} {n}' for value, n in counts.items())}"))
    if result.cut:
        typer.echo(f"\n{result.cut}")
    if result.next_cursor:
        typer.echo(f"\nmore: --cursor {result.next_cursor}")


def get(
    chunk_id: Annotated[str, typer.Argument(metavar="CHUNK_ID", help="A chunk id returned by search.")],
    index_dir: IndexDir,
    context: Annotated[
        int,
        typer.Option("--context", metavar="N", min=0, max=5, help="Neighbouring chunks on each side (0-5)."),
    ] = 0,
    scope: Annotated[
        Scope,
        typer.Option(
            "--scope",
            parser=one_of(get_args(Scope)),
            metavar="<chunk|section|parent>",
            help="chunk (with --context), section (the chunk's whole section) or parent (one level up).",
        ),
    ] = "chunk",
    max_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-tokens",
            metavar="N",
            min=200,
            max=1_000_000,
            help="Fit the answer to this many o200k_base tokens; a cut answer ends with a cursor.",
        ),
    ] = None,
    cursor: Annotated[
        str | None,
        typer.Option(
            "--cursor", metavar="CURSOR", help="The cursor a cut answer ended with: the rest of it."
        ),
    ] = None,
    storage_option: StorageOption = None,
) -> None:
    """Print a chunk, its neighbours or its whole section the way the get_doc tool does."""
    if not chunk_id.strip():
        raise usage_error("the chunk id must not be empty", "CHUNK_ID")
    if scope != "chunk" and context:
        raise usage_error("--context applies only to --scope chunk", "--context")
    where, storage_options = location(index_dir, storage_option, "--index-dir")
    with reporting("get"), _readable(where):
        text = _open_engine(where, storage_options).get_doc(
            chunk_id, context, scope=scope, max_tokens=max_tokens, cursor=cursor
        )
    typer.echo(for_terminal(text))
