"""The highlighting API's own logic: reading a request, counting spans as JavaScript counts."""

from __future__ import annotations

import json
import re

import pytest

from docs_mcp_server.playground import MAX_HIGHLIGHT_TEXTS, highlight_request, utf16_spans
from tests.support.hostile_json import HUGE_NUMBER, TOO_DEEP


def test_spans_are_recounted_in_utf16_code_units_only_past_astral_characters() -> None:
    assert utf16_spans("retry it", [(0, 5)]) == [(0, 5)]
    assert utf16_spans("café retry", [(5, 10)]) == [(5, 10)]  # é is one unit
    assert utf16_spans("retry 😀", [(0, 5)]) == [(0, 5)]  # the emoji comes after the span
    text = "😀 retry 𝄞 retry"
    spans = [(2, 7), (10, 15)]
    assert [text[s:e] for s, e in spans] == ["retry", "retry"]
    units = text.encode("utf-16-le")
    assert [units[2 * s : 2 * e].decode("utf-16-le") for s, e in utf16_spans(text, spans)] == [
        "retry",
        "retry",
    ]
    assert utf16_spans(text, []) == []


def test_a_request_is_a_query_and_a_list_of_texts() -> None:
    body = json.dumps({"query": "retry", "texts": ["a", "b"]}).encode()
    assert highlight_request(body) == ("retry", ["a", "b"])
    too_many = json.dumps({"query": "retry", "texts": [""] * (MAX_HIGHLIGHT_TEXTS + 1)}).encode()
    with pytest.raises(ValueError, match=f"at most {MAX_HIGHLIGHT_TEXTS}"):
        highlight_request(too_many)
    with pytest.raises(ValueError, match="not JSON"):
        highlight_request(b"\xff\xfe")


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (TOO_DEEP.encode(), "it nests arrays or objects too deeply to read"),
        (
            ('{"query": "retry", "texts": [], "n": ' + HUGE_NUMBER + "}").encode(),
            "it holds a number too long to read",
        ),
    ],
)
def test_a_body_too_deep_or_with_a_huge_number_is_a_bad_request(body: bytes, reason: str) -> None:
    # RecursionError escaped: the server answered 500 and logged an unhandled error
    with pytest.raises(ValueError, match=f"^the body cannot be read: {re.escape(reason)}"):
        highlight_request(body)
