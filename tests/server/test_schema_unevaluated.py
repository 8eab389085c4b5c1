"""A custom tool's ``unevaluatedItems`` and ``unevaluatedProperties`` are checked in time linear in
the argument's size, their property-name patterns within the pattern time limit.

jsonschema looked each index or key up in a list of the evaluated ones: 64,000 items (a few
hundred KB of arguments) held the server's event loop for 16-21 s, and every client with it. It
matched ``patternProperties`` for them with Python's ``re``, so a backtracking pattern held it for
hours whatever the time limit of ``patternProperties`` itself.
"""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.support.schema_errors import errors_within

pytestmark = pytest.mark.integration  # each validation runs in a child process

BACKTRACKS = "^(a|a)*$"


def test_a_long_array_and_a_large_object_are_checked_at_once() -> None:
    items = {"type": "array", "contains": {"type": "integer"}, "unevaluatedItems": {"type": "integer"}}
    keys = {"type": "object", "anyOf": [{"properties": {"q": {}}}, {"additionalProperties": True}]}
    schema = {
        "type": "object",
        "properties": {"a": items, "b": {**keys, "unevaluatedProperties": {"type": "integer"}}},
    }
    n = 200_000
    assert errors_within(schema, {"a": list(range(n)), "b": {f"k{i}": i for i in range(n)}}) == []


def test_a_property_name_a_pattern_backtracks_on_is_refused_in_bounded_time() -> None:
    schema = {"type": "object", "patternProperties": {BACKTRACKS: True}, "unevaluatedProperties": False}
    errors = errors_within(schema, {"a" * 40 + "!": 1})
    assert errors and all("a property name of 41 characters could not be matched" in e for e in errors)


CASES: list[tuple[dict[str, Any], Any]] = [
    ({"type": "array", "prefixItems": [{}], "unevaluatedItems": False}, [1, 2, 3]),
    ({"type": "array", "contains": {"type": "string"}, "unevaluatedItems": False}, ["a", 1, "b", 2]),
    ({"type": "array", "anyOf": [{"prefixItems": [{}, {}]}, {"items": {"type": "string"}}], "unevaluatedItems": False}, [1, 2, 3]),
    ({"type": "array", "if": {"prefixItems": [{"const": 1}]}, "then": {"prefixItems": [{}, {}]}, "else": {"items": True}, "unevaluatedItems": False}, [1, 2, 3]),
    ({"type": "object", "properties": {"a": {}}, "unevaluatedProperties": False}, {"a": 1, "b": 2, "c": 3}),
    ({"type": "object", "patternProperties": {"^x-": {}}, "unevaluatedProperties": {"type": "string"}}, {"x-a": 1, "b": 2, "c": "s"}),
    ({"type": "object", "unevaluatedProperties": {"type": "string", "minLength": 3, "pattern": "^a"}}, {"b": "b"}),
    ({"type": "object", "allOf": [{"properties": {"a": {}}}], "dependentSchemas": {"a": {"properties": {"b": {}}}}, "unevaluatedProperties": False}, {"a": 1, "b": 2, "c": 3}),
    ({"type": "object", "$defs": {"d": {"properties": {"a": {}}}}, "$ref": "#/$defs/d", "unevaluatedProperties": False}, {"a": 1, "z": 2}),
    ({"type": "object", "if": {"required": ["a"]}, "then": {"properties": {"b": {}}}, "else": {"properties": {"c": {}}}, "unevaluatedProperties": False}, {"a": 1, "b": 2, "c": 3}),
    ({"type": "object", "oneOf": [{"properties": {"a": {"type": "string"}}}, {"properties": {"a": {"type": "integer"}}}], "unevaluatedProperties": False}, {"a": 1, "d": 2}),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "instance"), CASES)
def test_other_values_are_judged_as_jsonschema_judges_them(schema: dict[str, Any], instance: Any) -> None:
    expected = sorted(e.message for e in Draft202012Validator(schema).iter_errors(instance))
    assert sorted(errors_within(schema, instance)) == expected
