"""A custom tool's schema patterns are matched in bounded time.

Python's ``re`` backtracks: an operator's ``^(a|a)*$`` against forty ``a`` and a ``!``
takes hours. A client controls the values and the property names of its arguments, so every
pattern the schema applies to them (``pattern``, and the property-name patterns of
``patternProperties``, which ``additionalProperties`` reads as well) gives up after
:data:`~docs_mcp_server.custom_tools.PATTERN_SECONDS` with an error naming what it could not
match, and otherwise says what jsonschema says.
"""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.support.schema_errors import errors_within

pytestmark = pytest.mark.integration  # each validation runs in a child process

BACKTRACKS = "^(a|a)*$"
HOSTILE = "a" * 40 + "!"


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "patternProperties": {BACKTRACKS: {"type": "string"}}},
        {
            "type": "object",
            "patternProperties": {BACKTRACKS: {"type": "string"}},
            "additionalProperties": False,
        },
        {
            "type": "object",
            "patternProperties": {BACKTRACKS: True},
            "additionalProperties": {"type": "integer"},
        },
    ],
    ids=["patternProperties", "no additional properties", "additional properties of a type"],
)
def test_a_property_name_a_pattern_backtracks_on_is_refused_in_bounded_time(schema: dict[str, Any]) -> None:
    errors = errors_within(schema, {HOSTILE: "x"})
    assert any(
        f"a property name of 41 characters could not be matched against '{BACKTRACKS}'" in e for e in errors
    ), errors


CASES: list[tuple[dict[str, Any], Any]] = [
    ({"type": "string", "pattern": "^[a-z]+$"}, "abc"),
    ({"type": "string", "pattern": "^[a-z]+$"}, "ABC"),
    ({"type": "object", "patternProperties": {"^x-": {"type": "integer"}}}, {"x-a": 1, "x-b": "no", "y": 2}),
    (
        {
            "type": "object",
            "properties": {"a": {}},
            "patternProperties": {"^x-": {}},
            "additionalProperties": False,
        },
        {"a": 1, "x-b": 2, "c": 3, "d": 4},
    ),
    ({"type": "object", "properties": {"a": {}}, "additionalProperties": False}, {"a": 1, "b": 2}),
    ({"type": "object", "additionalProperties": {"type": "string"}}, {"a": "x", "b": 2}),
    ({"type": "object", "patternProperties": {"^x": {}}, "additionalProperties": False}, {"xa": 1}),
]


@pytest.mark.parametrize(("schema", "instance"), CASES)
def test_other_values_are_judged_as_jsonschema_judges_them(schema: dict[str, Any], instance: Any) -> None:
    expected = sorted(e.message for e in Draft202012Validator(schema).iter_errors(instance))
    assert sorted(errors_within(schema, instance)) == expected
