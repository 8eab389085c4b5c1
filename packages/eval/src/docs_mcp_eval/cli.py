"""The ``docs-mcp-eval`` command line: ``run`` one server through a case file, or ``benchmark`` providers.

Reports go to stdout, progress and status lines to stderr (progress only on a terminal). Every failure
a user can cause (bad case file, server that will not start or lacks the tools, failing build, bad
baseline) ends with one ``error: ...`` message on stderr and exit code 1, never a traceback.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from docs_mcp_eval import __version__
from docs_mcp_eval.agent.command import agent_eval_command
from docs_mcp_eval.benchmark import (
    DEFAULT_EMBEDDINGS,
    BenchmarkConfig,
    default_command,
    parse_embedding_specs,
    run_benchmark,
)
from docs_mcp_eval.benchmark_report import render_benchmark_markdown
from docs_mcp_eval.cases import load_cases
from docs_mcp_eval.commands import SCOPES
from docs_mcp_eval.delta import delta_input_from_result, load_baseline, render_delta_markdown
from docs_mcp_eval.errors import EvalError
from docs_mcp_eval.option_values import one_of
from docs_mcp_eval.progress import Progress
from docs_mcp_eval.report import render_run_markdown
from docs_mcp_eval.results import unwritable, write_json_file
from docs_mcp_eval.runner import (
    DEFAULT_WARMUP_QUERIES,
    CommandSpec,
    ProgressCallback,
    RunConfig,
    Scope,
    run_eval,
)


def _plain_flags(params: Sequence[Any]) -> list[Any]:
    """Flags take no value, so their help shows no type (typer would show ``<bool>``)."""
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    return list(params)


class _Command(TyperCommand):
    def get_params(self, ctx: Any) -> list[Any]:
        return _plain_flags(super().get_params(ctx))


class _Group(TyperGroup):
    def get_params(self, ctx: Any) -> list[Any]:
        return _plain_flags(super().get_params(ctx))


app = typer.Typer(
    name="docs-mcp-eval",
    cls=_Group,
    help="Measure retrieval quality, latency and memory of an MCP docs server over stdio.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class OutputFormat(StrEnum):
    markdown = "markdown"
    json = "json"


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"docs-mcp-eval {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Retrieval benchmark harness for docs-mcp servers (MRR@5, NDCG@5, latency, memory)."""


def parse_env_pairs(pairs: Sequence[str]) -> dict[str, str]:
    """``["K=V", ...]`` to a dict; a pair without ``=`` or with an empty key is rejected."""
    env: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint="--server-env")
        env[key.strip()] = value
    return env


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code=1)


def _check_out(out: Path | None, cases: Path) -> None:
    """Refuse, before anything runs, an ``--out`` that cannot take the result (said only after every
    case had run) or is the case file (which the result replaced without a word): a usage error,
    exit status 2, as ``agent-eval`` says of its own."""
    if out is None:
        return
    problem = None
    if (reason := unwritable(out)) is not None:
        problem = f"--out {str(out)[:200]} cannot be written ({reason}); name another file"
    elif out.is_dir():
        problem = f"--out {out} is a folder; name the file to write the result to"
    elif out.exists() and cases.exists() and os.path.samefile(out, cases):
        problem = (
            f"--out {out} is the case file given to --cases: the result would replace the cases; "
            "write it to another file"
        )
    if problem is not None:
        typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(code=2)


def _write_json(path: Path, data: Any) -> None:
    try:
        write_json_file(path, data)
    except OSError as exc:
        raise EvalError(
            f"cannot write {path}: {exc.strerror or exc} (a file there is left as it was)"
        ) from None


CasesOpt = Annotated[
    Path,
    typer.Option(
        "--cases",
        metavar="FILE",
        help="JSON array of eval cases (expectedChunkId and maxRounds, or expected_chunk_id and "
        "max_rounds_allowed).",
    ),
]
ToolPrefixOpt = Annotated[
    str | None,
    typer.Option(
        "--tool-prefix",
        metavar="PREFIX",
        help="The server's tool prefix: tools are <prefix>_search_docs and <prefix>_get_doc.",
    ),
]
ServerEnvOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--server-env",
        metavar="KEY=VALUE",
        help="KEY=VALUE set for the server (repeatable), over this process's environment.",
    ),
]
StartupTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--startup-timeout",
        metavar="SECONDS",
        min=1,
        help="Seconds allowed for the server to start and answer the handshake.",
    ),
]
RequestTimeoutOpt = Annotated[
    float,
    typer.Option("--request-timeout", metavar="SECONDS", min=1, help="Seconds allowed for each MCP request."),
]
BuildTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--build-timeout",
        metavar="SECONDS",
        min=1,
        help="Seconds allowed for the build command (default: no limit).",
    ),
]


RunServerCommandOpt = Annotated[
    str,
    typer.Option(
        "--server-command",
        metavar="CMD",
        help='Command starting the MCP server over stdio, shell-style: "docs-mcp-server --index-dir idx".',
    ),
]
ServerArgOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--server-arg", metavar="ARG", help="Extra argument appended to the server command (repeatable)."
    ),
]
ServerCwdOpt = Annotated[  # must exist: a missing one was reported as the command not being found
    Path | None,
    typer.Option(
        "--server-cwd", metavar="DIR", help="Working directory of the server.", exists=True, file_okay=False
    ),
]
RunBuildCommandOpt = Annotated[
    str | None,
    typer.Option(
        "--build-command",
        metavar="CMD",
        help="Command run (and timed) before the server starts, shell-style.",
    ),
]
BuildArgOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--build-arg", metavar="ARG", help="Extra argument appended to the build command (repeatable)."
    ),
]
BuildCwdOpt = Annotated[
    Path | None,
    typer.Option(
        "--build-cwd",
        metavar="DIR",
        help="Working directory of the build command.",
        exists=True,
        file_okay=False,
    ),
]
RunWarmupQueriesOpt = Annotated[
    int,
    typer.Option(
        "--warmup-queries",
        metavar="N",
        min=0,
        help="Untimed search_docs calls before measuring, so that opening the index is not timed (0: none).",
    ),
]
BaselineOpt = Annotated[
    Path | None,
    typer.Option(
        "--baseline",
        metavar="FILE",
        help="Earlier result JSON (from --out, either harness) to compare with.",
    ),
]
RunOutOpt = Annotated[
    Path | None,
    typer.Option("--out", metavar="FILE", help="Write the result JSON here (usable as a later --baseline)."),
]
OutputFormatOpt = Annotated[
    OutputFormat,
    typer.Option(
        "--format",
        parser=lambda value: OutputFormat(one_of([f.value for f in OutputFormat], any_case=True)(value)),
        metavar="<markdown|json>",
        help="What to print on stdout: markdown or json.",
    ),
]
MaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        metavar="N",
        min=1,
        help="Send max_tokens N to search_docs and get_doc when their input schemas declare it.",
    ),
]
ScopeOpt = Annotated[
    Scope,
    typer.Option(
        "--scope",
        parser=one_of(SCOPES),
        metavar="<chunk|section|parent>",
        help="get_doc scope: chunk, section or parent (sent when the get_doc schema declares it).",
    ),
]


@app.command("run", cls=_Command)
def run_command(
    cases: CasesOpt,
    server_command: RunServerCommandOpt,
    server_arg: ServerArgOpt = None,
    server_cwd: ServerCwdOpt = None,
    server_env: ServerEnvOpt = None,
    tool_prefix: ToolPrefixOpt = None,
    build_command: RunBuildCommandOpt = None,
    build_arg: BuildArgOpt = None,
    build_cwd: BuildCwdOpt = None,
    warmup_queries: RunWarmupQueriesOpt = DEFAULT_WARMUP_QUERIES,
    baseline: BaselineOpt = None,
    out: RunOutOpt = None,
    output_format: OutputFormatOpt = OutputFormat.markdown,
    startup_timeout: StartupTimeoutOpt = 60.0,
    request_timeout: RequestTimeoutOpt = 120.0,
    build_timeout: BuildTimeoutOpt = None,
    max_tokens: MaxTokensOpt = None,
    scope: ScopeOpt = "chunk",
) -> None:
    """Run the eval cases against one MCP server and report MRR@5, NDCG@5, leaks, tokens, latency and memory."""
    env = parse_env_pairs(server_env or [])
    try:
        _check_out(out, cases)
        loaded = load_cases(cases)
        baseline_input = load_baseline(baseline) if baseline is not None else None
        server = CommandSpec.parse(
            server_command, server_arg or [], cwd=server_cwd.resolve() if server_cwd else None, env=env
        )
        build = (
            CommandSpec.parse(build_command, build_arg or [], cwd=build_cwd.resolve() if build_cwd else None)
            if build_command
            else None
        )
        config = RunConfig(
            server=server,
            build=build,
            tool_prefix=tool_prefix or None,
            warmup_queries=warmup_queries,
            startup_timeout_s=startup_timeout,
            request_timeout_s=request_timeout,
            build_timeout_s=build_timeout,
            max_tokens=max_tokens,
            scope=scope,
        )
        progress = Progress.for_stderr()
        try:
            result = run_eval(config, loaded, progress.update if progress else None)
        finally:
            if progress:
                progress.close()
        if baseline_input is not None:
            result.delta_markdown = render_delta_markdown(delta_input_from_result(result), baseline_input)
        if out is not None:
            _write_json(out, result.to_json())
            typer.echo(f"wrote eval result to {out.resolve()}", err=True)
    except EvalError as exc:
        raise _fail(exc.message) from None

    if output_format is OutputFormat.json:
        sys.stdout.write(json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n")
        if result.delta_markdown:
            sys.stderr.write(result.delta_markdown + "\n")
    else:
        sys.stdout.write(render_run_markdown(result))


DocsDirOpt = Annotated[Path, typer.Option("--docs-dir", metavar="DIR", help="The markdown corpus to index.")]
WorkDirOpt = Annotated[
    str,
    typer.Option(
        "--work-dir",
        metavar="DIR",
        help="Where each provider's index is built (<work-dir>/<label>): a folder, or an object-store "
        "prefix such as s3://bucket/prefix.",
    ),
]
EmbeddingsOpt = Annotated[
    str,
    typer.Option(
        "--embeddings",
        metavar="SPECS",
        help="Comma-separated providers of docs-mcp build: headings, none, local, hash, openai or "
        "openai/MODEL.",
    ),
]
BenchmarkBuildCommandOpt = Annotated[
    str | None,
    typer.Option(
        "--build-command",
        metavar="CMD",
        help='Build program, shell-style (default "docs-mcp build"); per-provider flags are appended.',
    ),
]
BenchmarkServerCommandOpt = Annotated[
    str | None,
    typer.Option(
        "--server-command",
        metavar="CMD",
        help='Server program, shell-style (default "docs-mcp-server"); --index-dir is appended.',
    ),
]
BenchmarkWarmupQueriesOpt = Annotated[
    int,
    typer.Option("--warmup-queries", metavar="N", min=0, help="Untimed searches per provider (0: none)."),
]
BenchmarkOutOpt = Annotated[
    Path | None, typer.Option("--out", metavar="FILE", help="Write the benchmark result JSON here.")
]
StorageOptionOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--storage-option",
        metavar="KEY=VALUE",
        help="Object-store setting for an s3:// --work-dir, given to the build and the server (endpoint, "
        "region, access_key_id, secret_access_key, session_token, allow_http); repeatable. Default: "
        "the AWS_* environment variables.",
    ),
]


@app.command("benchmark", cls=_Command)
def benchmark_command(
    cases: CasesOpt,
    docs_dir: DocsDirOpt,
    work_dir: WorkDirOpt,
    embeddings: EmbeddingsOpt = DEFAULT_EMBEDDINGS,
    build_command: BenchmarkBuildCommandOpt = None,
    server_command: BenchmarkServerCommandOpt = None,
    server_env: ServerEnvOpt = None,
    tool_prefix: ToolPrefixOpt = None,
    warmup_queries: BenchmarkWarmupQueriesOpt = DEFAULT_WARMUP_QUERIES,
    out: BenchmarkOutOpt = None,
    startup_timeout: StartupTimeoutOpt = 60.0,
    request_timeout: RequestTimeoutOpt = 120.0,
    build_timeout: BuildTimeoutOpt = None,
    storage_option: StorageOptionOpt = None,
) -> None:
    """Build one index per embedding provider, run the cases on each, and print a comparison report."""
    env = parse_env_pairs(server_env or [])
    try:
        _check_out(out, cases)
        loaded = load_cases(cases)
        if not docs_dir.is_dir():
            raise EvalError(f"--docs-dir {docs_dir} is not a directory")
        specs = parse_embedding_specs(embeddings)
        build = CommandSpec.parse(build_command or f"{shlex.quote(default_command('docs-mcp'))} build")
        server = CommandSpec.parse(server_command or shlex.quote(default_command("docs-mcp-server")), env=env)
        config = BenchmarkConfig(
            docs_dir=docs_dir.resolve(),
            work_dir=_work_dir(work_dir),
            embeddings=specs,
            build_command=build,
            server_command=server,
            warmup_queries=warmup_queries,
            tool_prefix=tool_prefix or None,
            startup_timeout_s=startup_timeout,
            request_timeout_s=request_timeout,
            build_timeout_s=build_timeout,
            storage_options=tuple(storage_option or []),
        )

        def log(message: str) -> None:
            typer.echo(message, err=True)

        result = run_benchmark(config, loaded, log=log, progress_for=_benchmark_progress)
        if out is not None:
            _write_json(out, result.to_json())
            typer.echo(f"wrote benchmark result to {out.resolve()}", err=True)
    except EvalError as exc:
        raise _fail(exc.message) from None
    sys.stdout.write(f"\n{render_benchmark_markdown(result)}\n")
    if result.failed:
        raise typer.Exit(code=1)


app.command("agent-eval", cls=_Command)(agent_eval_command)


def _work_dir(value: str) -> Path | str:
    """``--work-dir`` as a folder (absolute) or an ``s3://`` prefix (kept as given)."""
    if "://" not in value:
        return Path(value).resolve()
    if not value.startswith("s3://") or not value[5:].strip("/"):
        raise EvalError(f"--work-dir {value!r}: use a folder or an object-store prefix s3://bucket/prefix")
    return value.rstrip("/")


def _benchmark_progress(label: str) -> ProgressCallback | None:
    progress = Progress.for_stderr(label)
    return progress.update if progress else None


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point. ``docs-mcp-eval --cases ...`` means ``run``, as in the original."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0].startswith("--") and args[0] not in {"--help", "--version"}:  # -h: help too
        args.insert(0, "run")
    try:
        app(args=args, prog_name="docs-mcp-eval")
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
