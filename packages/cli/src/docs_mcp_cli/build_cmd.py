"""``docs-mcp build``: index a docs folder (see :func:`docs_mcp_core.build.build_index`).

Progress goes to stderr; the last line on stdout is ``wrote N chunks from F files to OUT (...)``.
Exit status: 0 on success, 1 when the build failed (a corpus with errors prints its findings first),
2 on usage errors (among them an ``--out`` that holds other files than an index), 130 when interrupted, 143 when terminated; in every failure the previous index is
untouched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from docs_mcp_cli.errors import fail, reporting, sigterm_stops_like_ctrl_c, usage_error
from docs_mcp_cli.params import docs_dir_option, location, storage_option_option
from docs_mcp_cli.progress import ConsoleReporter, human_bytes
from docs_mcp_core.errors import CorpusInvalidError, OutputNotAnIndexError

UNTOUCHED = " (the previous index, if any, is untouched)"

OutOption = Annotated[
    str,
    typer.Option(
        "--out",
        help="Output folder for .lancedb/, chunks.json, metadata.json, or an object-store URI "
        "(s3://bucket/prefix; endpoint and credentials from AWS_* variables or --storage-option).",
    ),
]
ProviderOption = Annotated[
    Literal["none", "local", "hash", "openai"],
    typer.Option(
        "--embedding-provider",
        help="none (lexical only), local (bundled MiniLM model, offline, no API key), "
        "hash (deterministic, for tests) or openai.",
    ),
]
StorageOption = Annotated[list[str] | None, storage_option_option()]


def build(
    docs_dir: Annotated[Path, docs_dir_option("Folder of markdown files to index.")],
    out: OutOption,
    description: Annotated[
        str, typer.Option("--description", help="What the corpus is; shown to agents in tool descriptions.")
    ] = "Documentation corpus",
    embedding_provider: ProviderOption = "none",
    embedding_model: Annotated[
        str | None, typer.Option("--embedding-model", help="Embedding model name.")
    ] = None,
    embedding_dimensions: Annotated[
        int | None, typer.Option("--embedding-dimensions", min=1, help="Vector size (hash default 256).")
    ] = None,
    embedding_api_key: Annotated[
        str | None, typer.Option("--embedding-api-key", help="API key (default: $OPENAI_API_KEY).")
    ] = None,
    embedding_base_url: Annotated[
        str | None, typer.Option("--embedding-base-url", help="Base URL of an OpenAI-compatible API.")
    ] = None,
    embedding_batch_size: Annotated[
        int | None,
        typer.Option("--embedding-batch-size", min=1, help="Inputs per embedding request (default 128)."),
    ] = None,
    embedding_concurrency: Annotated[
        int | None,
        typer.Option("--embedding-concurrency", min=1, help="Embedding requests in flight (default 4)."),
    ] = None,
    embedding_max_retries: Annotated[
        int | None,
        typer.Option("--embedding-max-retries", min=0, help="Retries on 429/5xx/timeouts (default 3)."),
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
    workers: Annotated[
        int | None, typer.Option("--workers", min=1, help="Chunking processes (default: 2).")
    ] = None,
    follow_external_symlinks: Annotated[
        bool,
        typer.Option(
            "--follow-external-symlinks",
            help="Index files that symbolic links lead to outside --docs-dir (skipped with a warning by default).",
        ),
    ] = False,
    storage_option: StorageOption = None,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait",
            help="If another build is writing to --out, wait for it to finish instead of failing at once.",
        ),
    ] = False,
    generation_retention: Annotated[
        float,
        typer.Option(
            "--generation-retention",
            min=0,
            metavar="SECONDS",
            help="Object stores: keep a replaced generation this long for replicas still fetching or "
            "reading it (the previous one is always kept).",
        ),
    ] = 600.0,
) -> None:
    """Build the search index (LanceDB table, chunks.json, metadata.json) for a docs folder."""
    # imported when the command runs: the other commands and --help do not load NumPy and pyarrow
    from docs_mcp_core.build import BuildOptions, EmbeddingOptions, ToolTexts, build_index

    out_location, storage_options = location(out, storage_option, "--out")
    embedding = EmbeddingOptions(
        provider=embedding_provider,
        model=embedding_model,
        dimensions=embedding_dimensions,
        api_key=embedding_api_key,
        base_url=embedding_base_url,
        batch_size=embedding_batch_size,
        concurrency=embedding_concurrency,
        max_retries=embedding_max_retries,
        cache_dir=cache_dir,
    )
    tools = ToolTexts(tool_description_search, tool_description_get_doc, mcp_server_instructions)
    options = BuildOptions(
        docs_dir=docs_dir,
        out_dir=out_location,
        description=description,
        embedding=embedding,
        tools=tools,
        rebuild_cache=rebuild_cache,
        workers=workers,
        storage_options=storage_options,
        follow_external_symlinks=follow_external_symlinks,
        wait_for_lock=wait,
        generation_retention_seconds=generation_retention,
    )
    reporter = ConsoleReporter()
    with reporting("build", note=UNTOUCHED, before=reporter.close):
        try:
            with sigterm_stops_like_ctrl_c():
                summary = build_index(options, reporter)
        except OutputNotAnIndexError as exc:
            reporter.close()
            raise usage_error(str(exc), "--out") from None
        except CorpusInvalidError as exc:
            reporter.close()
            for finding in exc.findings:
                typer.echo(finding.render(), err=True)
            raise fail(
                "build refused: the corpus has errors (nothing was written; the previous index is untouched)"
            ) from None
    reporter.close()
    chunks, files, unchanged = summary.chunks, summary.files, summary.cached_files
    typer.echo(
        f"wrote {chunks:,} chunk{'s' * (chunks != 1)} from {files:,} file{'s' * (files != 1)} to "
        f"{summary.out_dir} ({unchanged:,} file{'s' * (unchanged != 1)} unchanged, "
        f"{human_bytes(summary.index_bytes)}, {summary.seconds:.1f}s)"
    )
