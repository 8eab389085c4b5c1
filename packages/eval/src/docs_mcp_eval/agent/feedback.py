"""The feedback tool: the agent grades the documentation it used, and the scores are averaged.

By default the agent gets a ``docs_feedback`` tool with three 0-100 integer scores
(``confidence_score``, ``docs_relevance``, ``docs_utilization``) and a ``reasoning`` text, and the
system prompt asks it to call the tool once the task is done. A suite may declare its own tool under
``_config.feedback_tool`` (``name``, ``description``, ``instruction``, ``input_schema``, ``metrics``
[``field``, ``label``, ``direction``], ``reasoning_field``, ``headline_field``).

The tool is registered on the docs server itself through ``docs-mcp-server --custom-tools-json`` (an
echo tool), so it appears beside ``search_docs`` and ``get_doc``; a server started with
``--server-command`` that does not offer it gets it from the harness instead. Runs without the docs
server (``--no-mcp``) and ``--no-judge`` runs get no feedback tool.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Direction = Literal["higher", "lower"]


@dataclass(frozen=True)
class FeedbackMetric:
    field: str
    label: str
    direction: Direction = "higher"

    def to_json(self) -> dict[str, Any]:
        return {"field": self.field, "label": self.label, "direction": self.direction}


@dataclass(frozen=True, kw_only=True)
class FeedbackToolConfig:
    name: str
    description: str
    instruction: str
    """Appended to the system prompt so the agent knows to call the tool."""
    input_schema: Mapping[str, Any]
    metrics: Sequence[FeedbackMetric]
    reasoning_field: str | None = None
    headline_field: str | None = None

    def custom_tools_json(self) -> str:
        """The ``--custom-tools-json`` value that registers this tool on ``docs-mcp-server``."""
        return json.dumps(
            [{"name": self.name, "description": self.description, "inputSchema": dict(self.input_schema)}],
            ensure_ascii=False,
        )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "metrics": [m.to_json() for m in self.metrics],
        }
        if self.reasoning_field:
            data["reasoningField"] = self.reasoning_field
        if self.headline_field:
            data["headlineField"] = self.headline_field
        return data


def _score(description: str) -> dict[str, Any]:
    return {"type": "integer", "minimum": 0, "maximum": 100, "description": description}


DEFAULT_FEEDBACK_TOOL = FeedbackToolConfig(
    name="docs_feedback",
    description=(
        "Report how useful the documentation tools were for this task. Call it once, after you have "
        "finished with search_docs/get_doc and completed the task."
    ),
    instruction="When the task is done, call the docs_feedback tool once to rate the documentation you used.",
    input_schema={
        "type": "object",
        "properties": {
            "confidence_score": _score(
                "How confident you are that the documentation led you to a correct solution (0 = not at all, 100 = fully)."
            ),
            "docs_relevance": _score("How relevant the retrieved documentation was to the task (0-100)."),
            "docs_utilization": _score("How much of your solution came from the documentation (0-100)."),
            "reasoning": {"type": "string", "description": "One or two sentences explaining the scores."},
        },
        "required": ["confidence_score", "docs_relevance", "docs_utilization", "reasoning"],
    },
    metrics=(
        FeedbackMetric("confidence_score", "Confidence"),
        FeedbackMetric("docs_relevance", "Relevance"),
        FeedbackMetric("docs_utilization", "Utilization"),
    ),
    reasoning_field="reasoning",
    headline_field="confidence_score",
)


@dataclass(frozen=True)
class FeedbackResult:
    scores: dict[str, float] = field(default_factory=dict)
    reasoning: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"scores": dict(self.scores)}
        if self.reasoning is not None:
            data["reasoning"] = self.reasoning
        return data


def parse_feedback(arguments: Mapping[str, Any], config: FeedbackToolConfig) -> FeedbackResult | None:
    """Scores and reasoning from one feedback call; metric fields that are missing or not numbers are
    left out. ``None`` when the call carried nothing usable at all."""
    scores: dict[str, float] = {}
    for metric in config.metrics:
        number = _as_number(arguments.get(metric.field))
        if number is not None:
            scores[metric.field] = number
    reasoning = None
    if config.reasoning_field is not None:
        value = arguments.get(config.reasoning_field)
        reasoning = value if isinstance(value, str) else None
    if not scores and reasoning is None:
        return None
    return FeedbackResult(scores=scores, reasoning=reasoning)


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def parse_feedback_tool(raw: Any, where: str) -> FeedbackToolConfig:
    """Read ``_config.feedback_tool`` (snake_case keys, as in the original's files).

    Raises ``ValueError`` with a message naming ``where`` and the field at fault.
    """
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where} must be a mapping")
    texts: dict[str, str] = {}
    for key in ("name", "description", "instruction"):
        value = raw.get(key)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{where}.{key} must be a non-empty string")
        texts[key] = value.strip()
    schema = raw.get("input_schema")
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise ValueError(f'{where}.input_schema must be a JSON schema mapping with "type: object"')
    raw_metrics = raw.get("metrics", [])
    if not isinstance(raw_metrics, list):
        raise ValueError(f"{where}.metrics must be a list of {{field, label, direction}}")
    metrics: list[FeedbackMetric] = []
    for index, entry in enumerate(raw_metrics):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("field"), str):
            raise ValueError(f"{where}.metrics[{index}] must be a mapping with a 'field' string")
        direction = entry.get("direction", "higher")
        if direction not in ("higher", "lower"):
            raise ValueError(f"{where}.metrics[{index}].direction must be 'higher' or 'lower'")
        metric_field = str(entry["field"])
        metrics.append(FeedbackMetric(metric_field, str(entry.get("label") or metric_field), direction))
    optional: dict[str, str | None] = {}
    for key in ("reasoning_field", "headline_field"):
        value = raw.get(key)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{where}.{key} must be a string")
        optional[key] = value
    return FeedbackToolConfig(
        name=texts["name"],
        description=texts["description"],
        instruction=texts["instruction"],
        input_schema=dict(schema),
        metrics=tuple(metrics),
        reasoning_field=optional["reasoning_field"],
        headline_field=optional["headline_field"],
    )
