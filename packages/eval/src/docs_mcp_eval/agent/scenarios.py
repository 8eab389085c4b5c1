"""Agent scenario suites: YAML (or JSON) files in the original's format, read as they are.

A suite is a mapping from scenario id to scenario. Top-level keys that start with ``_`` are not
scenarios: they hold YAML anchors for shared values (``<<: *defaults``) and the suite settings under
``_config`` (``feedback_tool``, ``system_prompt``). The original's older list format (a list of
scenarios, ids made from their names) is read too.

Scenario fields (camelCase, as in the original): ``name``, ``prompt`` (required), ``assertions``,
``category``, ``maxTurns``, ``maxBudgetUsd``, ``systemPrompt``, ``setup``, ``docsDir`` (relative to
the scenario file), ``docsSpec`` (``url``, ``ref``, ``docsPath``, ``docsConfig``), ``description``,
``toolDescriptions``, ``mcpServerInstructions``, ``mcpServerName``, ``models`` (per provider) and
``links`` (file -> workspace path). Unknown fields are ignored, as the original does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from docs_mcp_eval.agent.assertions import ASSERTION_TYPES, Assertion, compile_pattern
from docs_mcp_eval.agent.feedback import FeedbackToolConfig, parse_feedback_tool
from docs_mcp_eval.cases import read_json_text
from docs_mcp_eval.errors import ScenarioFileError

DEFAULT_SERVER_NAME = "docs-mcp"
_SERVER_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


@dataclass(frozen=True, kw_only=True)
class DocsRepoSpec:
    """Docs cloned from git: ``url`` at ``ref``, the corpus in ``docs_path``."""

    url: str
    ref: str = "main"
    docs_path: str = "."
    docs_config: Mapping[str, Any] | None = None
    """A ``.docs-mcp.json`` manifest written into the docs folder when the repository has none."""


@dataclass(frozen=True, kw_only=True)
class IndexConfig:
    """Build settings that shape what the agent sees of the index (they go into the cache key)."""

    description: str | None = None
    tool_descriptions: Mapping[str, str] = field(default_factory=dict)
    mcp_server_instructions: str | None = None

    def build_args(self) -> list[str]:
        args: list[str] = []
        if self.description:
            args += ["--description", self.description]
        if self.tool_descriptions.get("search_docs"):
            args += ["--tool-description-search", self.tool_descriptions["search_docs"]]
        if self.tool_descriptions.get("get_doc"):
            args += ["--tool-description-get-doc", self.tool_descriptions["get_doc"]]
        if self.mcp_server_instructions:
            args += ["--mcp-server-instructions", self.mcp_server_instructions]
        return args


@dataclass(kw_only=True)
class Scenario:
    id: str
    name: str
    prompt: str
    assertions: list[Assertion] = field(default_factory=list)
    category: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    system_prompt: str | None = None
    setup: str | None = None
    docs_dir: Path | None = None
    """Absolute; a relative ``docsDir`` is resolved against the scenario file's folder."""
    docs_spec: DocsRepoSpec | None = None
    index_config: IndexConfig = field(default_factory=IndexConfig)
    server_name: str = DEFAULT_SERVER_NAME
    models: dict[str, str] = field(default_factory=dict)
    links: dict[str, Path] = field(default_factory=dict)
    """Workspace path -> absolute source, symlinked into the workspace before ``setup`` runs."""


@dataclass(kw_only=True)
class Suite:
    name: str
    """Used for the results folder (``.eval-results/<name>/``)."""
    scenarios: list[Scenario]
    path: Path | None = None
    feedback_tool: FeedbackToolConfig | None = None
    """The suite's own feedback tool; ``None`` means the default one."""
    system_prompt: str | None = None


def load_suite(path: Path, name: str | None = None) -> Suite:
    """Read and validate a scenario file; every problem is a :class:`ScenarioFileError` naming the file."""
    try:
        text = read_json_text(path, "scenario file")  # --scenarios /dev/zero was read without end
    except FileNotFoundError:
        raise ScenarioFileError(f"scenario file not found: {path}") from None
    except IsADirectoryError:
        raise ScenarioFileError(f"scenario file {path} is a directory") from None
    except OSError as exc:
        raise ScenarioFileError(f"cannot read scenario file {path}: {exc}") from None
    except ValueError as exc:
        raise ScenarioFileError(str(exc)) from None
    return parse_suite(text, path=path.resolve(), name=name or path.stem)


def parse_suite(text: str, *, path: Path | None, name: str) -> Suite:
    where = str(path) if path else "<scenarios>"
    try:
        data = yaml.load(text, Loader=_Loader)  # a SafeLoader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ScenarioFileError(f"{where}{at}: not valid YAML: {problem}") from None
    base = path.parent if path else Path.cwd()
    lines = _key_lines(text)
    suite = Suite(name=name, scenarios=[], path=path)
    if isinstance(data, list):
        for index, raw in enumerate(data):
            label = f"{where}: scenario [{index}]"
            if not isinstance(raw, Mapping):
                raise ScenarioFileError(f"{label} must be a mapping")
            scenario_id = raw.get("id") or _slugify(str(raw.get("name") or ""))
            if not isinstance(scenario_id, str) or not scenario_id:
                raise ScenarioFileError(f"{label} needs an 'id' or a 'name'")
            suite.scenarios.append(_scenario(scenario_id, raw, base, label))
    elif isinstance(data, Mapping):
        for key, raw in data.items():
            scenario_id = str(key)
            line = lines.get(scenario_id)
            label = (
                f"{where}:{line}: scenario {_shown(scenario_id)}"
                if line
                else f"{where}: scenario {_shown(scenario_id)}"
            )
            if scenario_id == "_config":
                _apply_config(suite, raw, f"{where}: _config")
            elif not scenario_id.startswith("_"):
                if not isinstance(raw, Mapping):
                    raise ScenarioFileError(f"{label} must be a mapping of scenario fields")
                suite.scenarios.append(_scenario(scenario_id, raw, base, label))
    elif data is None:
        raise ScenarioFileError(f"{where} is empty: expected scenarios keyed by id")
    else:
        raise ScenarioFileError(f"{where} must be a mapping of scenario id -> scenario")
    if not suite.scenarios:
        raise ScenarioFileError(f"{where} defines no scenarios (keys starting with '_' are not scenarios)")
    return suite


def adhoc_suite(prompt: str, docs_dir: Path) -> Suite:
    """``--prompt``: one scenario ``ad-hoc`` with no assertions, served from ``--docs-dir``."""
    scenario = Scenario(id="ad-hoc", name="ad-hoc", prompt=prompt, docs_dir=docs_dir.resolve())
    return Suite(name="ad-hoc", scenarios=[scenario])


def _apply_config(suite: Suite, raw: Any, where: str) -> None:
    if raw is None:
        return
    if not isinstance(raw, Mapping):
        raise ScenarioFileError(f"{where} must be a mapping")
    if raw.get("feedback_tool") is not None:
        try:
            suite.feedback_tool = parse_feedback_tool(raw["feedback_tool"], f"{where}.feedback_tool")
        except ValueError as exc:
            raise ScenarioFileError(str(exc)) from None
        _check_size(suite.feedback_tool.input_schema, f"{where}.feedback_tool.input_schema")
    prompt = raw.get("system_prompt")
    if prompt is not None:
        if not isinstance(prompt, str):
            raise ScenarioFileError(f"{where}.system_prompt must be a string")
        suite.system_prompt = prompt.strip() or None


def _scenario(scenario_id: str, raw: Mapping[str, Any], base: Path, label: str) -> Scenario:
    fields = _Fields(raw, label)
    prompt = fields.text("prompt", required=True)
    assert prompt is not None
    server_name = fields.text("mcpServerName") or DEFAULT_SERVER_NAME
    if not _SERVER_NAME_RE.match(server_name):
        raise ScenarioFileError(f"{label}: 'mcpServerName' must be 1-40 letters, digits, '_' or '-'")
    docs_dir = fields.text("docsDir")
    return Scenario(
        id=scenario_id,
        name=fields.text("name") or scenario_id,
        prompt=prompt,
        assertions=_assertions(raw.get("assertions"), label),
        category=fields.text("category"),
        max_turns=fields.positive_int("maxTurns"),
        max_budget_usd=fields.positive_number("maxBudgetUsd"),
        system_prompt=fields.text("systemPrompt"),
        setup=fields.text("setup"),
        docs_dir=(base / docs_dir).resolve() if docs_dir else None,
        docs_spec=_docs_spec(raw.get("docsSpec"), label),
        index_config=IndexConfig(
            description=fields.text("description"),
            tool_descriptions=fields.string_map("toolDescriptions"),
            mcp_server_instructions=fields.text("mcpServerInstructions"),
        ),
        server_name=server_name,
        models=fields.string_map("models"),
        links={dest: (base / src).resolve() for src, dest in fields.string_map("links").items()},
    )


class _Fields:
    """Typed access to a scenario's fields, with errors that name the scenario and the field."""

    def __init__(self, raw: Mapping[str, Any], label: str) -> None:
        self.raw = raw
        self.label = label

    def text(self, key: str, *, required: bool = False) -> str | None:
        value = self.raw.get(key)
        if value is None:
            if required:
                raise ScenarioFileError(f"{self.label}: '{key}' is required")
            return None
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ScenarioFileError(f"{self.label}: '{key}' must be a string")
        text = str(value).strip()
        if required and not text:
            raise ScenarioFileError(f"{self.label}: '{key}' must not be empty")
        return text or None

    def positive_int(self, key: str) -> int | None:
        value = self.raw.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ScenarioFileError(f"{self.label}: '{key}' must be a positive integer, got {_shown(value)}")
        return value

    def positive_number(self, key: str) -> float | None:
        value = self.raw.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ScenarioFileError(f"{self.label}: '{key}' must be a positive number, got {_shown(value)}")
        return float(value)

    def string_map(self, key: str) -> dict[str, str]:
        value = self.raw.get(key)
        if value is None:
            return {}
        if not isinstance(value, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            raise ScenarioFileError(f"{self.label}: '{key}' must be a mapping of strings")
        return {str(k): str(v) for k, v in value.items()}


def _assertions(raw: Any, label: str) -> list[Assertion]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ScenarioFileError(f"{label}: 'assertions' must be a list")
    return [_assertion(entry, f"{label}: assertions[{index}]") for index, entry in enumerate(raw)]


_REQUIRED: Mapping[str, Sequence[str]] = {
    "contains": ("value",),
    "not_contains": ("value",),
    "matches": ("pattern",),
    "file_contains": ("path", "value"),
    "file_matches": ("path", "pattern"),
    "script": ("command", "name"),
}


def _assertion(raw: Any, label: str) -> Assertion:
    if not isinstance(raw, Mapping):
        raise ScenarioFileError(f"{label} must be a mapping with a 'type'")
    kind = raw.get("type")
    if kind not in ASSERTION_TYPES:
        raise ScenarioFileError(
            f"{label}: 'type' must be one of {', '.join(ASSERTION_TYPES)}; got {_shown(kind)}"
        )
    values: dict[str, str] = {}
    for key in _REQUIRED[kind]:
        value = raw.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)  # `value: 429` in YAML is a number; the original compares its text
        if not isinstance(value, str) or (key != "value" and not value.strip()):
            raise ScenarioFileError(f"{label}: a {kind} assertion needs a '{key}' string")
        values[key] = value
    flags = raw.get("flags") or ""
    if not isinstance(flags, str):
        raise ScenarioFileError(f"{label}: 'flags' must be a string such as \"i\"")
    if "pattern" in values:
        try:
            compile_pattern(values["pattern"], flags)
        except ValueError as exc:
            raise ScenarioFileError(f"{label}: {exc}") from None
    soft = raw.get("soft", False)
    if not isinstance(soft, bool):
        raise ScenarioFileError(f"{label}: 'soft' must be true or false")
    when_env = raw.get("when_env")
    if when_env is not None and (not isinstance(when_env, str) or not when_env.strip()):
        raise ScenarioFileError(f"{label}: 'when_env' must be the name of an environment variable")
    return Assertion(type=kind, soft=soft, flags=flags, when_env=when_env, **values)


def _docs_spec(raw: Any, label: str) -> DocsRepoSpec | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping) or not isinstance(raw.get("url"), str) or not raw["url"].strip():
        raise ScenarioFileError(f"{label}: 'docsSpec' must be a mapping with a 'url'")
    config = raw.get("docsConfig")
    if config is not None and not isinstance(config, Mapping):
        raise ScenarioFileError(
            f"{label}: 'docsSpec.docsConfig' must be a mapping (a .docs-mcp.json manifest)"
        )
    if config is not None:
        _check_size(config, f"{label}: 'docsSpec.docsConfig'")
    docs_path = str(raw.get("docsPath") or ".")
    if Path(docs_path).is_absolute() or ".." in Path(docs_path).parts:
        raise ScenarioFileError(f"{label}: 'docsSpec.docsPath' must be a folder inside the repository")
    return DocsRepoSpec(
        url=raw["url"].strip(),
        ref=str(raw.get("ref") or "main"),
        docs_path=docs_path,
        docs_config=dict(config) if config is not None else None,
    )


class _Loader(yaml.SafeLoader):
    """``yaml.SafeLoader`` with numbers read in time linear in their length, or refused at their line.
    YAML 1.1 reads ``1:30`` as 90 (base 60) with a loop over growing integers: 100,000 parts took
    2 s, in time growing with the square of their number. A scenario has no use for base 60, so such
    a value is text, as in YAML 1.2. An integer of over 4,300 digits (Python's limit) ended the
    command with a traceback."""


_MAX_DIGITS = 4_300


def _construct_number(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int | float | str:
    value = str(loader.construct_scalar(node))
    if ":" in value:
        return value
    integer = node.tag.endswith(":int")
    if integer and (digits := sum(c.isdigit() for c in value)) > _MAX_DIGITS:
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"a number of {digits:,} digits is too long to read (at most {_MAX_DIGITS:,})",
            node.start_mark,
        )
    return loader.construct_yaml_int(node) if integer else loader.construct_yaml_float(node)


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_number)
_Loader.add_constructor("tag:yaml.org,2002:float", _construct_number)


_MAX_VALUES = 100_000  # in a value that is sent on as JSON (a manifest, a tool's input schema)


def _check_size(value: Any, where: str) -> None:
    """Refuse a value that, written out as JSON, holds more than :data:`_MAX_VALUES` values. YAML
    aliases (*name) stand for whole earlier values: a few lines of aliases of aliases made a
    manifest of billions of values for ``json.dumps``, and an alias inside its own value an endless
    one. Counting stops at the limit, so this takes time bounded by it."""
    todo: list[Any] = [value]
    seen = 0
    while todo:
        item = todo.pop()
        seen += 1
        if seen > _MAX_VALUES:
            raise ScenarioFileError(
                f"{where} holds more than {_MAX_VALUES:,} values once its YAML aliases (*name) are "
                "written out, or contains itself; write it out without aliases"
            )
        if isinstance(item, Mapping):
            todo.extend(item.keys())  # pyright: ignore[reportUnknownArgumentType,reportUnknownMemberType]
            todo.extend(item.values())  # pyright: ignore[reportUnknownArgumentType,reportUnknownMemberType]
        elif isinstance(item, list):
            todo.extend(item)  # pyright: ignore[reportUnknownArgumentType]


def _key_lines(text: str) -> dict[str, int]:
    """1-based line of each top-level key, for error messages (empty when the file is not a mapping)."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return {}
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {
        str(key.value): key.start_mark.line + 1 for key, _ in node.value if isinstance(key, yaml.ScalarNode)
    }


def _shown(value: object, limit: int = 200) -> str:
    """``repr(value)`` for a message, cut in its middle beyond ``limit`` characters (a value of
    800 KB was repeated whole)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}...({len(text) - 2 * half:,} characters)...{text[-half:]}"


def _slugify(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:50]
