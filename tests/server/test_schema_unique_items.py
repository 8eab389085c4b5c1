"""A custom tool's ``uniqueItems`` is checked in time linear in the array's size.

jsonschema compares every pair of items it cannot sort (objects, or items of several types): an
array of 8,000 small objects, 80 KB of arguments, held the server's event loop for 49 s, and
every other request of every client with it.
"""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.support.schema_errors import errors_within

pytestmark = pytest.mark.integration  # each validation runs in a child process

SCHEMA = {"type": "object", "properties": {"tags": {"type": "array", "uniqueItems": True}}}


def test_many_distinct_objects_are_checked_at_once() -> None:
    tags = [{"id": i} for i in range(40_000)]
    assert errors_within(SCHEMA, {"tags": tags}) == []
    repeated = [*tags, {"id": 7}]
    assert errors_within(SCHEMA, {"tags": repeated}) == [f"{repeated!r} has non-unique elements"]


@pytest.mark.parametrize(
    "tags",
    [
        [1, 1.0],  # equal numbers
        [1, True],  # a boolean is not a number
        [0, False, None, ""],
        [{"a": 1}, {"a": 1.0}],
        [{"a": [1, {"b": True}]}, {"a": [1, {"b": 1}]}],
        [{"a": 1, "b": 2}, {"b": 2, "a": 1}],  # key order does not count
        [[1, 2], [2, 1]],  # item order does
        [[1, [True]], [1, [True]], "x"],
        ["1", 1, [1], {"1": 1}],
    ],
)
def test_items_are_judged_equal_as_jsonschema_judges_them(tags: list[Any]) -> None:
    expected = [e.message for e in Draft202012Validator(SCHEMA).iter_errors({"tags": tags})]
    assert errors_within(SCHEMA, {"tags": tags}) == expected
