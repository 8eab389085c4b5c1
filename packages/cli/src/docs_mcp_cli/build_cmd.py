"""``docs-mcp build``: index a docs folder (see :func:`docs_mcp_core.build.build_index`).

Progress goes to stderr; the last line on stdout is ``wrote N chunks from F files to OUT (...)``.
Exit status: 0 on success, 1 when the build failed (a corpus with errors prints its findings first),
2 on usage errors (among them an ``--out`` that holds other files than an index), 130 when interrupted, 143 when terminated; in every failure the previous index is
untouched.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, get_args

import typer

from docs_mcp_cli.errors import fail, reporting, sigterm_stops_like_ctrl_c, usage_error
from docs_mcp_cli.params import docs_dir_option, location, one_of, storage_option_option
from docs_mcp_cli.progress import ConsoleReporter, human_bytes
from docs_mcp_core.errors import CorpusInvalidError, OutputNotAnIndexError
from docs_mcp_core.utf8 import is_utf8

if TYPE_CHECKING:
    from docs_mcp_core.build import BuildOptions

UNTOUCHED = " (the previous index, if any, is untouched)"

OutOption = Annotated[
    str,
    typer.Option(
        "--out",
        metavar="DIR",
        help="Output folder for .lancedb/, chunks.json, metadata.json, or an object-store URI "
        "(s3://bucket/prefix; endpoint and credentials from AWS_* variables or --storage-option).",
    ),
]
ProviderName = Literal["headings", "none", "local", "hash", "openai"]
ProviderOption = Annotated[
    ProviderName,
    typer.Option(
        "--embedding-provider",
        parser=one_of(get_args(ProviderName)),
        metavar="NAME",
        help="headings (default: lexical, plus each section's page and heading names embedded with "
        "the bundled MiniLM model, offline), none (lexical only, as the original's index), local "
        "(headings, plus every chunk embedded with the bundled model), hash (deterministic, for "
        "tests) or openai (every chunk embedded by the API; no heading vectors).",
    ),
]
StorageOption = Annotated[list[str] | None, storage_option_option()]
DocsDirOption = Annotated[Path, docs_dir_option("Folder of markdown files to index.")]
DescriptionOption = Annotated[
    str,
    typer.Option(
        "--description", metavar="TEXT", help="What the corpus is; shown to agents in tool descriptions."
    ),
]
ModelOption = Annotated[
    str | None, typer.Option("--embedding-model", metavar="NAME", help="Embedding model name.")
]
DimensionsOption = Annotated[
    int | None,
    typer.Option("--embedding-dimensions", metavar="N", min=1, help="Vector size (hash default 256)."),
]
ApiKeyOption = Annotated[
    str | None, typer.Option("--embedding-api-key", metavar="KEY", help="API key (default: $OPENAI_API_KEY).")
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option("--embedding-base-url", metavar="URL", help="Base URL of an OpenAI-compatible API."),
]
BatchSizeOption = Annotated[
    int | None,
    typer.Option(
        "--embedding-batch-size",
        metavar="N",
        min=1,
        max=2048,
        help="Inputs per embedding request (default 128).",
    ),
]
ConcurrencyOption = Annotated[
    int | None,
    typer.Option(
        "--embedding-concurrency",
        metavar="N",
        min=1,
        max=32,
        help="Embedding requests in flight (default 4).",
    ),
]
MaxRetriesOption = Annotated[
    int | None,
    typer.Option(
        "--embedding-max-retries", metavar="N", min=0, max=10, help="Retries on 429/5xx/timeouts (default 3)."
    ),
]
CacheDirOption = Annotated[
    Path | None,
    typer.Option("--cache-dir", metavar="DIR", help="Parent folder of .embedding-cache/ (default: --out)."),
]
RebuildCacheOption = Annotated[
    bool,
    typer.Option("--rebuild-cache", help="Ignore the chunk and embedding caches of the previous build."),
]
SearchDescriptionOption = Annotated[
    str | None,
    typer.Option(
        "--tool-description-search", metavar="TEXT", help="Override the search_docs tool description."
    ),
]
GetDocDescriptionOption = Annotated[
    str | None,
    typer.Option("--tool-description-get-doc", metavar="TEXT", help="Override the get_doc tool description."),
]
InstructionsOption = Annotated[
    str | None,
    typer.Option(
        "--mcp-server-instructions", metavar="TEXT", help="Server instructions (default: from the manifests)."
    ),
]
WorkersOption = Annotated[
    int | None,
    typer.Option(
        "--workers", metavar="N", min=1, help="Chunking processes (default: 2, or 1 on a one-core machine)."
    ),
]
FollowSymlinksOption = Annotated[
    bool,
    typer.Option(
        "--follow-external-symlinks",
        help="Index files that symbolic links lead to outside --docs-dir (skipped with a warning by default).",
    ),
]
WaitOption = Annotated[
    bool,
    typer.Option(
        "--wait",
        help="If another build is writing to --out, wait for it to finish instead of failing at once.",
    ),
]
RetentionOption = Annotated[
    float,
    typer.Option(
        "--generation-retention",
        min=0,
        metavar="SECONDS",
        help="Object stores: keep a replaced generation this long for replicas still fetching or "
        "reading it (the previous one is always kept).",
    ),
]


def build(
    docs_dir: DocsDirOption,
    out: OutOption,
    description: DescriptionOption = "Documentation corpus",
    embedding_provider: ProviderOption = "headings",
    embedding_model: ModelOption = None,
    embedding_dimensions: DimensionsOption = None,
    embedding_api_key: ApiKeyOption = None,
    embedding_base_url: BaseUrlOption = None,
    embedding_batch_size: BatchSizeOption = None,
    embedding_concurrency: ConcurrencyOption = None,
    embedding_max_retries: MaxRetriesOption = None,
    cache_dir: CacheDirOption = None,
    rebuild_cache: RebuildCacheOption = False,
    tool_description_search: SearchDescriptionOption = None,
    tool_description_get_doc: GetDocDescriptionOption = None,
    mcp_server_instructions: InstructionsOption = None,
    workers: WorkersOption = None,
    follow_external_symlinks: FollowSymlinksOption = False,
    storage_option: StorageOption = None,
    wait: WaitOption = False,
    generation_retention: RetentionOption = 600.0,
) -> None:
    """Build the search index (LanceDB table, chunks.json, metadata.json) for a docs folder."""
    # imported when the command runs: the other commands and --help do not load NumPy and pyarrow
    from docs_mcp_core.build import BuildOptions, EmbeddingOptions, ToolTexts
    from docs_mcp_core.manifest import MAX_TOOL_TEXT_LENGTH

    out_location, storage_options = location(out, storage_option, "--out")
    texts = {
        "--description": description,
        "--tool-description-search": tool_description_search,
        "--tool-description-get-doc": tool_description_get_doc,
        "--mcp-server-instructions": mcp_server_instructions,
    }
    for flag, text in texts.items():  # bytes that are not UTF-8 failed the build at metadata.json
        if text is not None and not is_utf8(text):
            raise usage_error("the text is not valid UTF-8; give it as UTF-8", flag)
        if text is not None and len(text) > MAX_TOOL_TEXT_LENGTH:
            raise usage_error(
                f"the text is {len(text):,} characters long; at most {MAX_TOOL_TEXT_LENGTH:,} are allowed "
                "(every client receives it whole): shorten it",
                flag,
            )
    embedding = EmbeddingOptions(
        provider="none" if embedding_provider == "headings" else embedding_provider,
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
        heading_vectors=embedding_provider in ("headings", "local"),
        workers=workers,
        storage_options=storage_options,
        follow_external_symlinks=follow_external_symlinks,
        wait_for_lock=wait,
        generation_retention_seconds=generation_retention,
    )
    _run_build(options)


def _run_build(options: BuildOptions) -> None:
    """Build with progress on stderr; the summary line on stdout, or the command's error and exit."""
    from docs_mcp_core.build import build_index

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
