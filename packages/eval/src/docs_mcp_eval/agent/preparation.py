"""Turning command-line choices into a runnable evaluation: suite, provider, model, prices, indexes.

Kept apart from the command itself so each decision (which suite file, which provider, which index
for which scenario) can be read and tested on its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import docs_mcp_eval
from docs_mcp_eval.agent.index_cache import ensure_index, ensure_repo
from docs_mcp_eval.agent.provider import ModelProvider, ProviderName
from docs_mcp_eval.agent.scenarios import Suite, load_suite
from docs_mcp_eval.errors import AgentProviderError, EvalError, ScenarioFileError

SUITES_DIR = Path(docs_mcp_eval.__file__).resolve().parents[2] / "scenarios"
"""``packages/eval/scenarios``: the suites ``--suite NAME`` finds (a source checkout of the project)."""


def suite_file(name: str, folder: Path = SUITES_DIR) -> Path:
    """``<folder>/<name>.yaml`` or ``.yml``; a clear error listing the available suites otherwise."""
    for extension in (".yaml", ".yml"):
        candidate = folder / f"{name}{extension}"
        if candidate.is_file():
            return candidate
    available = sorted(p.stem for p in folder.glob("*.y*ml")) if folder.is_dir() else []
    listing = f" (available: {', '.join(available)})" if available else ""
    raise ScenarioFileError(
        f"no suite named {name!r} in {folder}{listing}; use --scenarios FILE for a suite file elsewhere"
    )


def load_named_suite(name: str) -> Suite:
    return load_suite(suite_file(name), name=name)


@dataclass(frozen=True)
class ProviderChoice:
    name: ProviderName
    api_key: str | None
    base_url: str | None
    warning: str | None = None

    def factory(self) -> Callable[[str], ModelProvider]:
        def make(model: str) -> ModelProvider:
            # imported here: each SDK takes about half a second to import
            if self.name == "anthropic":
                from docs_mcp_eval.agent.anthropic_messages import AnthropicMessagesProvider

                return AnthropicMessagesProvider(model=model, api_key=self.api_key, base_url=self.base_url)
            from docs_mcp_eval.agent.openai_chat import OpenAIChatProvider

            return OpenAIChatProvider(model=model, api_key=self.api_key, base_url=self.base_url)

        return make


def choose_provider(
    choice: str, base_url: str | None, env: Mapping[str, str] | None = None
) -> ProviderChoice:
    """``--provider auto|anthropic|openai`` and ``--base-url`` -> provider, key and URL.

    ``auto`` picks the provider whose key is set (Anthropic when both are, with a warning). A provider
    reached through ``--base-url`` (or ``ANTHROPIC_BASE_URL``/``OPENAI_BASE_URL``) may run without a key,
    as local OpenAI-compatible servers do.
    """
    environ = os.environ if env is None else env
    anthropic_key = environ.get("ANTHROPIC_API_KEY") or environ.get("ANTHROPIC_AUTH_TOKEN") or None
    openai_key = environ.get("OPENAI_API_KEY") or None
    warning = None
    if choice == "auto":
        if anthropic_key and openai_key:
            name: ProviderName = "anthropic"
            warning = (
                "both ANTHROPIC_API_KEY and OPENAI_API_KEY are set; using anthropic (choose with --provider)"
            )
        elif openai_key:
            name = "openai"
        elif anthropic_key:
            name = "anthropic"
        elif base_url or environ.get("OPENAI_BASE_URL"):
            name = "openai"
        else:
            raise AgentProviderError(
                "no model API key: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or use --provider openai "
                "--base-url URL for a local OpenAI-compatible server"
            )
    elif choice in ("anthropic", "openai"):
        name = choice  # pyright: ignore[reportAssignmentType]
    else:
        raise AgentProviderError(f"--provider must be auto, anthropic or openai, got {choice!r}")
    key = anthropic_key if name == "anthropic" else openai_key
    url_variable = "ANTHROPIC_BASE_URL" if name == "anthropic" else "OPENAI_BASE_URL"
    url = base_url or environ.get(url_variable) or None
    if key is None and url is None:
        variable = "ANTHROPIC_API_KEY" if name == "anthropic" else "OPENAI_API_KEY"
        raise AgentProviderError(f"{variable} is not set (a server given with --base-url may need no key)")
    if key is None and name == "anthropic":
        key = "not-needed"
    return ProviderChoice(name=name, api_key=key, base_url=url, warning=warning)


def prepare_indexes(
    suite: Suite,
    *,
    default_docs: Path | None,
    cache_dir: Path,
    build_program: str,
    log: Callable[[str], None],
) -> dict[str, Path]:
    """Scenario id -> cached index for every scenario with docs (``docsSpec``, ``docsDir`` or
    ``--docs-dir``); scenarios without docs are left out (they need ``--server-command``)."""
    indexes: dict[str, Path] = {}
    for scenario in suite.scenarios:
        if scenario.docs_spec is not None:
            docs = ensure_repo(scenario.docs_spec, cache_dir=cache_dir, log=log)
        else:
            docs = scenario.docs_dir or default_docs
        if docs is None:
            continue
        if not docs.is_dir():
            raise EvalError(
                f"scenario {scenario.id!r}: the docs folder {docs} does not exist "
                "(a relative docsDir is resolved against the scenario file's folder)"
            )
        indexes[scenario.id] = ensure_index(
            docs, scenario.index_config, cache_dir=cache_dir, build_program=build_program, log=log
        )
    return indexes
