"""Bad tool arguments get the original server's isError texts, in the original's order of checks."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from docs_mcp_core.metadata import normalize_metadata
from docs_mcp_server.arguments import (
    ToolArguments,
    check_custom_arguments,
    parse_get_doc_request,
    parse_search_request,
)
from docs_mcp_server.errors import ArgumentError
from docs_mcp_server.metadata_view import MetadataView
from docs_mcp_server.schemas import get_doc_schema, search_docs_schema
from tests.support.index_stubs import metadata_document

META = MetadataView.from_metadata(normalize_metadata(metadata_document()))
SEARCH = ToolArguments("search_docs", search_docs_schema(META))
GET_DOC = ToolArguments("get_doc", get_doc_schema())
KEYS = list(META.taxonomy)


def search_error(arguments: Any) -> str:
    with pytest.raises(ArgumentError) as info:
        parse_search_request(SEARCH, arguments, KEYS)
    return str(info.value)


def get_doc_error(arguments: Any) -> str:
    with pytest.raises(ArgumentError) as info:
        parse_get_doc_request(GET_DOC, arguments)
    return str(info.value)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ([], "search_docs input must be an object"),
        ("retry", "search_docs input must be an object"),
        ({"query": "retry", "unsupported": "x"}, "Unexpected field 'unsupported'"),
        ({"zzz": 1, "aaa": 2}, "Unexpected field 'zzz'"),
        ({}, "query must be a non-empty string"),
        (None, "query must be a non-empty string"),
        ({"query": "   "}, "query must be a non-empty string"),
        ({"query": 3}, "query must be a non-empty string"),
        ({"query": "retry", "limit": "5"}, "limit must be an integer"),
        ({"query": "retry", "limit": 2.5}, "limit must be an integer"),
        ({"query": "retry", "limit": True}, "limit must be an integer"),
        ({"query": "retry", "limit": 0}, "limit must be between 1 and 50"),
        ({"query": "retry", "limit": 51}, "limit must be between 1 and 50"),
        ({"query": "retry", "cursor": ""}, "cursor must be a non-empty string"),
        ({"query": "retry", "cursor": 7}, "cursor must be a non-empty string"),
        ({"query": "retry", "language": ""}, "language must be a non-empty string"),
        ({"query": "retry", "language": ["go"]}, "language must be a non-empty string"),
        (
            {"query": "retry", "language": "cobol"},
            "Invalid taxonomy value for 'language': 'cobol'. Allowed values: go, python, typescript",
        ),
        # order of checks: unexpected fields first, then query, limit, cursor, taxonomy (metadata order)
        ({"query": "", "limit": 0, "bogus": 1}, "Unexpected field 'bogus'"),
        ({"query": "", "limit": 0}, "query must be a non-empty string"),
        ({"query": "q", "limit": 0, "language": "cobol"}, "limit must be between 1 and 50"),
        (
            {"query": "q", "scope": "x", "language": "cobol"},
            "Invalid taxonomy value for 'language': 'cobol'. Allowed values: go, python, typescript",
        ),
    ],
)
def test_search_argument_errors(arguments: Any, message: str) -> None:
    assert search_error(arguments) == message


def test_search_request_is_trimmed_and_filters_follow_taxonomy_order() -> None:
    request = parse_search_request(
        SEARCH, {"scope": " sdk-specific ", "query": "  retry  ", "language": "go", "limit": 5.0}, KEYS
    )
    assert request.query == "retry"
    assert request.limit == 5 and isinstance(request.limit, int)
    assert list(request.filters.items()) == [("language", "go"), ("scope", "sdk-specific")]
    assert request.cursor is None
    assert parse_search_request(SEARCH, {"query": "x"}, KEYS).limit == 10


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["a"], "get_doc input must be an object"),
        ({"chunk_id": "a.md", "extra": 1}, "Unexpected field 'extra'"),
        ({}, "chunk_id must be a non-empty string"),
        ({"chunk_id": " "}, "chunk_id must be a non-empty string"),
        ({"chunk_id": "a.md", "context": "1"}, "context must be an integer"),
        ({"chunk_id": "a.md", "context": -1}, "context must be between 0 and 5"),
        ({"chunk_id": "a.md", "context": 6}, "context must be between 0 and 5"),
    ],
)
def test_get_doc_argument_errors(arguments: Any, message: str) -> None:
    assert get_doc_error(arguments) == message


def test_get_doc_request_defaults_and_trims() -> None:
    request = parse_get_doc_request(GET_DOC, {"chunk_id": " guides/retries.md#backoff "})
    assert (request.chunk_id, request.context) == ("guides/retries.md#backoff", 0)
    assert parse_get_doc_request(GET_DOC, {"chunk_id": "x.md", "context": 3}).context == 3


def test_custom_tool_arguments_are_checked_against_their_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"score": {"type": "integer", "minimum": 0}},
        "required": ["score"],
    }
    validator = Draft202012Validator(schema)
    assert check_custom_arguments("docs_feedback", validator, {"score": 3}) == {"score": 3}
    with pytest.raises(ArgumentError, match=r"Invalid arguments for 'docs_feedback' at 'score': -1 is less"):
        check_custom_arguments("docs_feedback", validator, {"score": -1})
    with pytest.raises(ArgumentError, match="'score' is a required property"):
        check_custom_arguments("docs_feedback", validator, None)


PLAIN_CASES: list[Any] = [
    {"query": "retry"},
    {"query": "retry", "limit": 5, "language": "go", "facets": True, "max_tokens": 2000},
    {"query": "retry", "limit": 5.0},
    {"query": "retry", "limit": 51},
    {"query": "retry", "limit": True},
    {"query": "retry", "language": "cobol"},
    {"query": "retry", "language": "Go"},
    {"query": "retry", "facets": 1},
    {"query": "retry", "cursor": ""},
    {"query": "retry", "unsupported": "x"},
    {"query": "   "},
    {"limit": 5},
    {"query": ["retry"]},
]


@pytest.mark.parametrize("arguments", PLAIN_CASES)
def test_the_plain_check_accepts_only_what_the_schema_accepts(arguments: dict[str, Any]) -> None:
    """Arguments accepted without jsonschema are valid by jsonschema; ambiguous ones are left to it."""
    normalised, blank = SEARCH._normalise(arguments)
    schema_valid = not blank and not list(Draft202012Validator(SEARCH.schema).iter_errors(normalised))
    plain = SEARCH.plainly_valid(normalised, blank)
    assert not plain or schema_valid
    simple = arguments in PLAIN_CASES[:2]
    assert plain == simple  # the shapes agents send are judged without jsonschema; 5.0 is left to it
    assert (SEARCH.check(arguments) == normalised) if schema_valid else True


def test_a_schema_with_other_keywords_is_always_left_to_jsonschema() -> None:
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"query": {"type": "string", "pattern": "^[a-z]+$"}},
        "required": ["query"],
    }
    checker = ToolArguments("search_docs", schema)
    assert not checker.plainly_valid({"query": "retry"}, [])
    with pytest.raises(ArgumentError):
        checker.check({"query": "Retry!"})
