"""Running a suite: a fresh workspace per scenario, its docs server, the agent, then the checks.

For each scenario, at most ``max_concurrency`` at a time:

1. a fresh workspace: ``<workspace-dir>/<id>`` (emptied if an earlier run made it) or a new temporary
   folder; ``links`` are symlinked into it, then ``setup`` runs there (``sh -c``, 60 s; a failing
   setup is recorded as a warning and the agent still runs, as in the original);
2. unless the run is ``--no-mcp``, the docs server starts over stdio: ``docs-mcp-server --index-dir``
   on the scenario's cached index (with the feedback tool through ``--custom-tools-json``), or the
   ``--server-command``;
3. the agent loop runs (:mod:`docs_mcp_eval.agent.loop`);
4. the assertions are checked against the final answer and the workspace; the run is *skipped* when an
   infrastructure failure ended it, else passed or failed.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio

from docs_mcp_eval import __version__
from docs_mcp_eval.agent.assertions import AssertionResult, evaluate_assertions, scenario_passed
from docs_mcp_eval.agent.docs_server import open_docs_server
from docs_mcp_eval.agent.feedback import (
    DEFAULT_FEEDBACK_TOOL,
    FeedbackResult,
    FeedbackToolConfig,
    parse_feedback,
)
from docs_mcp_eval.agent.loop import AgentEventCallback, AgentLimits, AgentRun, run_agent
from docs_mcp_eval.agent.metrics import summarize
from docs_mcp_eval.agent.pricing import Price, price_for
from docs_mcp_eval.agent.provider import ModelProvider, ProviderName, is_infrastructure_error
from docs_mcp_eval.agent.results import RunOutput, ScenarioResult
from docs_mcp_eval.agent.scenarios import Scenario, Suite
from docs_mcp_eval.agent.shell import run_shell
from docs_mcp_eval.agent.toolbox import Toolbox
from docs_mcp_eval.agent.workspace import DEFAULT_COMMAND_TIMEOUT_S, Workspace
from docs_mcp_eval.errors import WorkspaceError
from docs_mcp_eval.runner import CommandSpec

DEFAULT_MAX_TURNS = 100
DEFAULT_MAX_BUDGET_USD = 4.0
SETUP_TIMEOUT_S = 60.0
WORKSPACE_MARKER = ".agent-eval-workspaces"

BASE_SYSTEM_PROMPT = (
    "You are a coding agent. Your current directory is a workspace folder; use the workspace tools to "
    "read, write and list its files and to run commands in it. Write every output file into the "
    "workspace with a relative path (for example ./solution.py): do not create other folders or copy "
    "absolute paths from documentation examples. When the task is done, end with a short final answer "
    "in plain text."
)

ProviderFactory = Callable[[str], ModelProvider]
"""Makes a provider for a model name (one per scenario, closed when the scenario ends)."""
ScenarioCallback = Callable[[int, int, Scenario, "ScenarioResult | None"], None]
"""Called with (index, total, scenario, result): result is ``None`` when the scenario starts."""


@dataclass(frozen=True, kw_only=True)
class AgentEvalConfig:
    provider_name: ProviderName
    model: str
    make_provider: ProviderFactory
    no_mcp: bool = False
    indexes: Mapping[str, Path] = field(default_factory=dict)
    """Scenario id -> cached index, served with ``server_program``."""
    server_program: str = "docs-mcp-server"
    server: CommandSpec | None = None
    """``--server-command``: the server of scenarios without an index."""
    server_env: Mapping[str, str] = field(default_factory=dict)
    workspace_dir: Path | None = None
    clean_workspace: bool = False
    max_turns: int = DEFAULT_MAX_TURNS
    max_budget_usd: float = DEFAULT_MAX_BUDGET_USD
    max_concurrency: int = 1
    system_prompt: str | None = None
    judge: bool = True
    price_override: Price | None = None
    command_timeout_s: float = DEFAULT_COMMAND_TIMEOUT_S
    startup_timeout_s: float = 60.0
    request_timeout_s: float = 120.0
    on_scenario: ScenarioCallback | None = None
    on_event: Callable[[Scenario], AgentEventCallback] | None = None


async def run_suite(suite: Suite, config: AgentEvalConfig) -> RunOutput:
    """Run every scenario of ``suite``; a configuration failure (provider, server, workspace) raises."""
    started_at = datetime.now(UTC)
    started = time.perf_counter()
    scenarios = suite.scenarios
    results: list[ScenarioResult | None] = [None] * len(scenarios)
    limiter = anyio.CapacityLimiter(max(1, config.max_concurrency))
    feedback = suite.feedback_tool or DEFAULT_FEEDBACK_TOOL

    async def worker(index: int, scenario: Scenario) -> None:
        async with limiter:
            if config.on_scenario is not None:
                config.on_scenario(index, len(scenarios), scenario, None)
            result = await run_scenario(scenario, suite, config, feedback)
            results[index] = result
            if config.on_scenario is not None:
                config.on_scenario(index, len(scenarios), scenario, result)

    async with anyio.create_task_group() as group:
        for index, scenario in enumerate(scenarios):
            group.start_soon(worker, index, scenario)
    done = [r for r in results if r is not None]
    priced = config.price_override is not None or all(
        price_for(_model_for(s, config)) is not None for s in scenarios
    )
    metadata: dict[str, Any] = {
        "suite": suite.name,
        "provider": config.provider_name,
        "model": config.model,
        "noMcp": config.no_mcp,
        "judge": config.judge and not config.no_mcp,
        "maxTurns": config.max_turns,
        "maxBudgetUsd": config.max_budget_usd,
        "maxConcurrency": config.max_concurrency,
        "costsKnown": priced,
        "harness": "docs-mcp-eval",
        "harnessVersion": __version__,
        "startedAt": _iso(started_at),
        "completedAt": _iso(datetime.now(UTC)),
        "totalDurationMs": round((time.perf_counter() - started) * 1000, 3),
    }
    if suite.path is not None:
        metadata["scenariosFile"] = str(suite.path)
    if config.judge and not config.no_mcp:
        metadata["feedbackTool"] = feedback.to_json()
    return RunOutput(summary=summarize(done, feedback), results=done, metadata=metadata)


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _model_for(scenario: Scenario, config: AgentEvalConfig) -> str:
    return scenario.models.get(config.provider_name) or config.model


async def run_scenario(
    scenario: Scenario, suite: Suite, config: AgentEvalConfig, feedback: FeedbackToolConfig
) -> ScenarioResult:
    model = _model_for(scenario, config)
    price = config.price_override or price_for(model)
    workspace_dir = prepare_workspace(config.workspace_dir, scenario.id)
    errors: list[str] = []
    _link(scenario, workspace_dir, errors)
    await _run_setup(scenario, workspace_dir, errors)
    workspace = Workspace(
        workspace_dir, link_targets=scenario.links.values(), command_timeout_s=config.command_timeout_s
    )
    judge = feedback if config.judge and not config.no_mcp else None
    limits = AgentLimits(
        max_turns=scenario.max_turns or config.max_turns,
        max_budget_usd=scenario.max_budget_usd or config.max_budget_usd,
        price=price,
    )
    on_event = config.on_event(scenario) if config.on_event is not None else None
    async with AsyncExitStack() as stack:
        docs = None
        if not config.no_mcp:
            command = _server_command(scenario, config, judge)
            docs = await stack.enter_async_context(
                open_docs_server(
                    command,
                    scenario.server_name,
                    startup_timeout_s=config.startup_timeout_s,
                    request_timeout_s=config.request_timeout_s,
                )
            )
        toolbox = Toolbox(workspace, docs, judge)
        provider = config.make_provider(model)
        stack.push_async_callback(provider.aclose)
        system = system_prompt(
            scenario.system_prompt or config.system_prompt or suite.system_prompt,
            server_instructions=docs.instructions if docs is not None else None,
            server_name=scenario.server_name,
            feedback=toolbox.feedback,
        )
        run = await run_agent(
            provider, system=system, prompt=scenario.prompt, toolbox=toolbox, limits=limits, on_event=on_event
        )
        if docs is not None:
            errors.extend(docs.failures)
    errors.extend(run.errors)
    checks = await evaluate_assertions(run.final_answer, scenario.assertions, workspace_dir)
    result = _scenario_result(scenario, config, run, checks, toolbox, workspace, workspace_dir, errors)
    if config.clean_workspace:
        shutil.rmtree(workspace_dir, ignore_errors=True)
    return result


async def _run_setup(scenario: Scenario, workspace_dir: Path, errors: list[str]) -> None:
    """Run the scenario's ``setup`` command in its workspace; a failure is a warning, not the end."""
    if not scenario.setup:
        return
    outcome = await run_shell(scenario.setup, cwd=workspace_dir, env=os.environ, timeout_s=SETUP_TIMEOUT_S)
    if outcome.timed_out or outcome.exit_code != 0:
        how = (
            f"timed out after {SETUP_TIMEOUT_S:g} s"
            if outcome.timed_out
            else f"exit code {outcome.exit_code}"
        )
        errors.append(f"Setup warning: {how}: {outcome.output.strip()[-500:]}".rstrip(": "))


def _scenario_result(
    scenario: Scenario,
    config: AgentEvalConfig,
    run: AgentRun,
    checks: list[AssertionResult],
    toolbox: Toolbox,
    workspace: Workspace,
    workspace_dir: Path,
    errors: list[str],
) -> ScenarioResult:
    """What one scenario's run, checks and workspace add up to."""
    skipped = run.infrastructure_failure or any(is_infrastructure_error(e) for e in run.errors)
    return ScenarioResult(
        id=scenario.id,
        name=scenario.name,
        category=scenario.category,
        activated=any(toolbox.is_docs_tool(name) for name in run.tools_called),
        passed=not skipped and scenario_passed(checks),
        skipped=skipped,
        assertion_results=checks,
        num_turns=run.num_turns,
        total_cost_usd=run.cost_usd,
        duration_ms=run.duration_ms,
        duration_api_ms=run.duration_api_ms,
        tools_called=run.tools_called,
        tool_call_trace=run.trace,
        usage=run.usage,
        mcp_tool_calls=sum(n for name, n in run.tools_called.items() if toolbox.is_docs_tool(name)),
        mcp_tool_result_chars=sum(len(r.result) for r in run.trace if toolbox.is_docs_tool(r.name)),
        workspace_files=workspace.recorded_files(),
        final_answer=run.final_answer,
        result_subtype=run.result_subtype,
        workspace_dir=None if config.clean_workspace else str(workspace_dir),
        errors=errors,
        feedback=_feedback(run.trace, toolbox),
    )


def system_prompt(
    custom: str | None,
    *,
    server_instructions: str | None,
    server_name: str,
    feedback: FeedbackToolConfig | None,
) -> str:
    parts = [BASE_SYSTEM_PROMPT]
    if server_instructions:
        parts.append(f"Instructions from the {server_name} documentation server:\n{server_instructions}")
    if custom:
        parts.append(custom.strip())
    if feedback is not None:
        parts.append(feedback.instruction)
    return "\n\n".join(parts)


def _server_command(
    scenario: Scenario, config: AgentEvalConfig, judge: FeedbackToolConfig | None
) -> CommandSpec:
    index = config.indexes.get(scenario.id)
    if index is not None:
        args = ["--index-dir", str(index)]
        if judge is not None:
            args += ["--custom-tools-json", judge.custom_tools_json()]
        return CommandSpec(command=config.server_program, args=tuple(args), env=dict(config.server_env))
    if config.server is None:
        raise WorkspaceError(f"scenario {scenario.id!r} has no docs index and no --server-command was given")
    return config.server


def _feedback(trace: Sequence[Any], toolbox: Toolbox) -> FeedbackResult | None:
    if toolbox.feedback is None or toolbox.feedback_name is None:
        return None
    for record in trace:
        if record.name == toolbox.feedback_name and not record.is_error:
            parsed = parse_feedback(record.args, toolbox.feedback)
            if parsed is not None:
                return parsed
    return None


def _link(scenario: Scenario, workspace: Path, errors: list[str]) -> None:
    for destination, source in scenario.links.items():
        link = Path(os.path.normpath(workspace / destination))
        try:
            if not link.is_relative_to(workspace) or link == workspace:
                raise OSError(f"{destination!r} is not a path inside the workspace")
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(source)
        except OSError as exc:
            errors.append(f"Link warning: cannot link {source} -> {destination}: {exc}")


def workspace_folder_name(scenario_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", scenario_id).strip(".-") or "scenario"


def prepare_workspace(base: Path | None, scenario_id: str) -> Path:
    """A fresh, empty folder for one scenario run.

    Under ``--workspace-dir`` the folder is ``<base>/<id>``; one left by an earlier run is emptied, but a
    folder this tool did not create (the base has no marker file) is never touched.
    """
    if base is None:
        return Path(tempfile.mkdtemp(prefix="agent-eval-")).resolve()
    base = base.resolve()
    target = base / workspace_folder_name(scenario_id)
    marker = base / WORKSPACE_MARKER
    try:
        if target.exists() or target.is_symlink():
            if not marker.is_file():
                raise WorkspaceError(
                    f"workspace {target} already exists and was not made by agent-eval; "
                    "remove it or choose another --workspace-dir"
                )
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            else:
                target.unlink()
        base.mkdir(parents=True, exist_ok=True)
        marker.write_text(
            "workspaces of docs-mcp-eval agent-eval; each run replaces them\n", encoding="utf-8"
        )
        target.mkdir()
    except OSError as exc:
        raise WorkspaceError(f"cannot prepare workspace {target}: {exc.strerror or exc}") from None
    return target
