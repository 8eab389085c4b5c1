"""``docs-mcp-eval agent-eval``: real agents answer scenario tasks, with or without the docs server.

The report goes to stdout; progress, warnings and "saved to" lines go to stderr. Every run is saved
under ``<results-dir>/<suite>/`` (``<suite>-baseline`` for ``--no-mcp``) unless ``--no-save``, and the
report ends with a trend table over the earlier runs there. Usage errors end with one ``error: ...``
line and exit status 2, configuration mistakes (no API key, a missing docs folder, a broken scenario
file) with one ``error: ...`` line and exit status 1; a run that completes exits 0 whatever its pass
rate (read it from the report or the JSON).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
import typer

from docs_mcp_eval.agent.compare import build_comparison, comparison_markdown
from docs_mcp_eval.agent.feedback import DEFAULT_FEEDBACK_TOOL
from docs_mcp_eval.agent.history import DEFAULT_RESULTS_DIR, load_runs, save_run, trend_markdown
from docs_mcp_eval.agent.loop import AgentEventCallback
from docs_mcp_eval.agent.preparation import choose_provider, load_named_suite, prepare_indexes
from docs_mcp_eval.agent.pricing import Price, parse_price_option, price_for
from docs_mcp_eval.agent.provider import DEFAULT_MODELS
from docs_mcp_eval.agent.report import outcome_label, run_markdown
from docs_mcp_eval.agent.results import RunOutput, ScenarioResult
from docs_mcp_eval.agent.runner import DEFAULT_MAX_BUDGET_USD, DEFAULT_MAX_TURNS, AgentEvalConfig, run_suite
from docs_mcp_eval.agent.scenarios import Scenario, Suite, adhoc_suite, load_suite
from docs_mcp_eval.benchmark import default_command
from docs_mcp_eval.errors import EvalError
from docs_mcp_eval.option_values import one_of
from docs_mcp_eval.results import unwritable, write_json_file
from docs_mcp_eval.runner import CommandSpec

DEFAULT_CACHE_DIR = Path(".cache")


EXIT_FAILED = 1
EXIT_USAGE = 2


def _check_out(out: Path | None, scenarios: Path | None) -> None:
    """Refuse an ``--out`` no file can be written at (``exists`` raised a name too long: a traceback)
    or that is the scenario file (the result replaced it at the end of a paid run)."""
    if out is not None and (reason := unwritable(out)) is not None:
        raise _usage_error(f"--out {str(out)[:200]} cannot be written ({reason}); name another file")
    if out is not None and scenarios is not None and out.exists() and os.path.samefile(out, scenarios):
        raise _usage_error(
            f"--out {out} is the --scenarios file: the result would replace it; write it elsewhere"
        )


def _usage_error(message: str) -> typer.Exit:
    """A usage error typer cannot find itself: one ``error: ...`` line and exit status 2."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code=EXIT_USAGE)


def _parse_env(pairs: Sequence[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"expected key=value format, got {pair!r}", param_hint="--server-env")
        env[key.strip()] = value
    return env


SuiteOpt = Annotated[
    str | None,
    typer.Option(
        "--suite",
        metavar="NAME",
        help="A suite shipped with the project (packages/eval/scenarios/NAME.yaml).",
    ),
]
ScenariosOpt = Annotated[
    Path | None, typer.Option("--scenarios", metavar="FILE", help="A YAML/JSON scenario file.")
]
PromptOpt = Annotated[
    str | None,
    typer.Option("--prompt", metavar="TEXT", help="One ad-hoc scenario with this prompt (needs --docs-dir)."),
]
IncludeOpt = Annotated[
    str | None, typer.Option("--include", metavar="IDS", help="Comma-separated scenario ids to run.")
]
DocsDirOpt = Annotated[
    Path | None,
    typer.Option("--docs-dir", metavar="DIR", help="Docs for scenarios that name none (docsDir/docsSpec)."),
]
ServerCommandOpt = Annotated[
    str | None,
    typer.Option(
        "--server-command",
        metavar="CMD",
        help='Stdio MCP server for scenarios without docs, shell-style (e.g. "docs-mcp-server --index-dir idx").',
    ),
]
ServerArgOpt = Annotated[
    list[str] | None,
    typer.Option("--server-arg", metavar="ARG", help="Extra server argument (repeatable)."),
]
ServerCwdOpt = Annotated[
    Path | None,
    typer.Option(  # must exist: a missing one was reported as the command not being found
        "--server-cwd",
        metavar="DIR",
        help="Working directory of --server-command.",
        exists=True,
        file_okay=False,
    ),
]
ServerEnvOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--server-env", metavar="KEY=VALUE", help="Environment variable for the server (repeatable)."
    ),
]
WorkspaceDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--workspace-dir", metavar="DIR", help="Put workspaces in DIR/<id> (default: temporary folders)."
    ),
]
ProviderOpt = Annotated[
    Literal["auto", "anthropic", "openai"],
    typer.Option(
        "--provider",
        parser=one_of(("auto", "anthropic", "openai")),
        metavar="NAME",
        help="auto, anthropic (Messages API) or openai (Chat Completions).",
    ),
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        metavar="MODEL",
        help=f"Model (default: {DEFAULT_MODELS['anthropic']} / {DEFAULT_MODELS['openai']}).",
    ),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        metavar="URL",
        help="API base URL, e.g. http://localhost:11434/v1 for an OpenAI-compatible local server.",
    ),
]
MaxTurnsOpt = Annotated[
    int, typer.Option("--max-turns", metavar="N", min=1, help="Model responses allowed per scenario.")
]
MaxBudgetUsdOpt = Annotated[
    float,
    typer.Option(
        "--max-budget-usd", metavar="USD", min=0, help="Spending allowed per scenario (priced per model)."
    ),
]
PricePerMtokOpt = Annotated[
    str | None,
    typer.Option(
        "--price-per-mtok",
        metavar="IN,OUT",
        help="USD per million input,output tokens (overrides the table).",
    ),
]
MaxConcurrencyOpt = Annotated[
    int, typer.Option("--max-concurrency", metavar="N", min=1, help="Scenarios run at the same time.")
]
SystemPromptOpt = Annotated[
    str | None, typer.Option("--system-prompt", metavar="TEXT", help="Extra system prompt for the agent.")
]
NoMcpOpt = Annotated[bool, typer.Option("--no-mcp", help="Run without the docs server (baseline).")]
CompareOpt = Annotated[
    bool, typer.Option("--compare", help="Run with and without the docs server and compare.")
]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Print every agent step to stderr.")]
NoJudgeOpt = Annotated[bool, typer.Option("--no-judge", help="Do not offer the feedback tool.")]
CleanWorkspaceOpt = Annotated[
    bool, typer.Option("--clean-workspace", help="Delete each workspace after its scenario.")
]
NoSaveOpt = Annotated[bool, typer.Option("--no-save", help="Do not save the run under --results-dir.")]
OutOpt = Annotated[
    Path | None, typer.Option("--out", metavar="FILE", help="Also write the result JSON here.")
]
ResultsDirOpt = Annotated[
    Path, typer.Option("--results-dir", metavar="DIR", help="Where runs are saved, one folder per suite.")
]
CacheDirOpt = Annotated[
    Path,
    typer.Option("--cache-dir", metavar="DIR", help="Where built indexes (and fetched docs) are cached."),
]


def agent_eval_command(
    suite: SuiteOpt = None,
    scenarios: ScenariosOpt = None,
    prompt: PromptOpt = None,
    include: IncludeOpt = None,
    docs_dir: DocsDirOpt = None,
    server_command: ServerCommandOpt = None,
    server_arg: ServerArgOpt = None,
    server_cwd: ServerCwdOpt = None,
    server_env: ServerEnvOpt = None,
    workspace_dir: WorkspaceDirOpt = None,
    provider: ProviderOpt = "auto",
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    max_turns: MaxTurnsOpt = DEFAULT_MAX_TURNS,
    max_budget_usd: MaxBudgetUsdOpt = DEFAULT_MAX_BUDGET_USD,
    price_per_mtok: PricePerMtokOpt = None,
    max_concurrency: MaxConcurrencyOpt = 1,
    system_prompt: SystemPromptOpt = None,
    no_mcp: NoMcpOpt = False,
    compare: CompareOpt = False,
    debug: DebugOpt = False,
    no_judge: NoJudgeOpt = False,
    clean_workspace: CleanWorkspaceOpt = False,
    no_save: NoSaveOpt = False,
    out: OutOpt = None,
    results_dir: ResultsDirOpt = DEFAULT_RESULTS_DIR,
    cache_dir: CacheDirOpt = DEFAULT_CACHE_DIR,
) -> None:
    """Run agent scenarios against the docs server and report pass rate, docs use, turns and cost."""
    _check_choices(suite, scenarios, prompt, docs_dir, compare=compare, no_mcp=no_mcp)
    _check_out(out, scenarios)
    env = _parse_env(server_env or [])
    try:
        loaded = _load(suite, scenarios, prompt, docs_dir)
        _keep_included(loaded, include)
        choice = choose_provider(provider, base_url)
        if choice.warning:
            typer.echo(f"warning: {choice.warning}", err=True)
        chosen_model = model or DEFAULT_MODELS[choice.name]
        price = _price(price_per_mtok, loaded, choice.name, chosen_model)
        indexes = {} if no_mcp else _indexes(loaded, docs_dir, cache_dir, has_server=bool(server_command))
        server = (
            CommandSpec.parse(
                server_command, server_arg or [], cwd=server_cwd.resolve() if server_cwd else None, env=env
            )
            if server_command
            else None
        )
        config = AgentEvalConfig(
            provider_name=choice.name,
            model=chosen_model,
            make_provider=choice.factory(),
            no_mcp=no_mcp,
            indexes=indexes,
            server_program=default_command("docs-mcp-server"),
            server=server,
            server_env=env,
            workspace_dir=workspace_dir,
            clean_workspace=clean_workspace,
            max_turns=max_turns,
            max_budget_usd=max_budget_usd,
            max_concurrency=max_concurrency,
            system_prompt=system_prompt,
            judge=not no_judge,
            price_override=price,
            on_scenario=_progress,
            on_event=_debug_printer if debug else None,
        )
        if compare:
            _run_compare(loaded, config, results_dir, save=not no_save, out=out)
        else:
            base_name = loaded.name + ("-baseline" if no_mcp else "")
            _run_single(replace(loaded, name=base_name), config, results_dir, save=not no_save, out=out)
    except EvalError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(code=EXIT_FAILED) from None


def _check_choices(
    suite: str | None,
    scenarios: Path | None,
    prompt: str | None,
    docs_dir: Path | None,
    *,
    compare: bool,
    no_mcp: bool,
) -> None:
    """The usage errors typer cannot find itself: one source of scenarios, and options that exclude
    one another."""
    sources = [s for s in (suite, scenarios, prompt) if s]
    if not sources:
        raise _usage_error("one of --suite, --scenarios, or --prompt is required")
    if len(sources) > 1:
        raise _usage_error("--suite, --scenarios, and --prompt are mutually exclusive")
    if prompt and not docs_dir:
        raise _usage_error("--prompt requires --docs-dir")
    if compare and no_mcp:
        raise _usage_error("--compare and --no-mcp are mutually exclusive")


def _keep_included(suite: Suite, include: str | None) -> None:
    """Narrow ``suite`` to the scenarios ``--include`` names (a usage error when none matches)."""
    if not include:
        return
    wanted = {part.strip() for part in include.split(",") if part.strip()}
    suite.scenarios = [s for s in suite.scenarios if s.id in wanted]
    if not suite.scenarios:
        raise _usage_error(f'no scenarios matched --include "{include}"')


def _indexes(suite: Suite, docs_dir: Path | None, cache_dir: Path, *, has_server: bool) -> dict[str, Path]:
    """The index each scenario's docs are served from, built (or found in the cache) first."""
    indexes = prepare_indexes(
        suite,
        default_docs=docs_dir.resolve() if docs_dir else None,
        cache_dir=cache_dir.resolve(),
        build_program=default_command("docs-mcp"),
        log=lambda message: typer.echo(message, err=True),
    )
    if len(indexes) < len(suite.scenarios) and not has_server:
        raise _usage_error("--server-command is required when scenarios don't specify docsDir")
    return indexes


def _load(suite: str | None, scenarios: Path | None, prompt: str | None, docs_dir: Path | None) -> Suite:
    if suite:
        return load_named_suite(suite)
    if scenarios is not None:
        return load_suite(scenarios)
    assert prompt is not None and docs_dir is not None
    return adhoc_suite(prompt, docs_dir)


def _price(option: str | None, suite: Suite, provider: str, model: str) -> Price | None:
    if option is not None:
        try:
            return parse_price_option(option)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--price-per-mtok") from None
    models = {s.models.get(provider) or model for s in suite.scenarios}
    for unknown in sorted(m for m in models if price_for(m) is None):
        typer.echo(
            f"warning: no price is known for model {unknown!r}: its cost is reported as $0 and "
            "--max-budget-usd cannot stop it (give prices with --price-per-mtok IN,OUT)",
            err=True,
        )
    return None


def _run_single(
    suite: Suite, config: AgentEvalConfig, results_dir: Path, *, save: bool, out: Path | None
) -> None:
    output = _execute(suite, config)
    document = output.to_json()
    feedback = suite.feedback_tool or DEFAULT_FEEDBACK_TOOL
    report = run_markdown(output, feedback if config.judge and not config.no_mcp else None)
    if save:
        earlier = load_runs(results_dir, suite.name)
        path = save_run(document, results_dir, suite.name)
        typer.echo(f"results saved to {path}", err=True)
        trend = trend_markdown(document, earlier)
        if trend:
            report += "\n" + trend
    if out is not None:
        _write_json(out, document)
        typer.echo(f"wrote agent eval result to {out.resolve()}", err=True)
    sys.stdout.write(report)


def _run_compare(
    suite: Suite, config: AgentEvalConfig, results_dir: Path, *, save: bool, out: Path | None
) -> None:
    phases: list[RunOutput] = []
    for no_mcp, name, subdir in (
        (False, suite.name, "with-mcp"),
        (True, f"{suite.name}-baseline", "baseline"),
    ):
        typer.echo(f"== {'without' if no_mcp else 'with'} the docs server ({name})", err=True)
        workspace = config.workspace_dir / subdir if config.workspace_dir is not None else None
        phase_config = replace(config, no_mcp=no_mcp, workspace_dir=workspace)
        output = _execute(replace(suite, name=name), phase_config)
        if save:
            path = save_run(output.to_json(), results_dir, name)
            typer.echo(f"results saved to {path}", err=True)
        phases.append(output)
    comparison = build_comparison(phases[0], phases[1], suite.name)
    if out is not None:
        _write_json(out, comparison)
        typer.echo(f"wrote comparison result to {out.resolve()}", err=True)
    sys.stdout.write(comparison_markdown(comparison))


def _execute(suite: Suite, config: AgentEvalConfig) -> RunOutput:
    with _quiet_sdk_logs():
        try:
            return anyio.run(run_suite, suite, config)
        except BaseExceptionGroup as group:
            error = _first_eval_error(group)
            if error is None:
                raise
            raise error from None


def _first_eval_error(exc: BaseException) -> EvalError | None:
    if isinstance(exc, EvalError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _first_eval_error(inner)
            if found is not None:
                return found
    return None


@contextmanager
def _quiet_sdk_logs() -> Iterator[None]:
    """The MCP SDK logs a traceback when a server dies; the harness reports such failures itself."""
    logger = logging.getLogger("mcp")
    saved = logger.propagate
    handler = logging.NullHandler()
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = saved


def _progress(index: int, total: int, scenario: Scenario, result: ScenarioResult | None) -> None:
    prefix = f"[{index + 1}/{total}] {scenario.id}"
    if result is None:
        typer.echo(f"{prefix}: running", err=True)
        return
    typer.echo(
        f"{prefix}: {outcome_label(result)} · {result.num_turns} turns · ${result.total_cost_usd:.4f} · "
        f"docs calls {result.mcp_tool_calls} · {result.duration_ms / 1000:.1f} s",
        err=True,
    )


def _debug_printer(scenario: Scenario) -> AgentEventCallback:
    def emit(kind: str, summary: str) -> None:
        typer.echo(f"  [{scenario.id}] {kind}: {summary}", err=True)

    return emit


def _write_json(path: Path, data: Any) -> None:
    try:
        write_json_file(path, data)
    except OSError as exc:
        raise EvalError(
            f"cannot write {path}: {exc.strerror or exc} (a file there is left as it was)"
        ) from None
