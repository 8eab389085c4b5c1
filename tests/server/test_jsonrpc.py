"""The JSON-RPC 2.0 answers to messages a server cannot accept (no server needed)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from docs_mcp_server.jsonrpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    envelope_problem,
    reject,
    top_level_id,
)
from tests.support.hostile_json import HUGE_NUMBER


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"jsonrpc":"2.0","id":7,"method":"x"', 7),
        ('{"id" : "abc" , "method": [[[[', "abc"),
        ('{"a":"id","b":{"id":1},"c":["id"],"id":-3}', -3),  # only the top-level key counts
        ('{"s":"a \\" quote and } brace","id":4}', 4),  # brackets and quotes inside strings are skipped
        ('{"id":null}', None),
        ('{"id":true}', None),
        ('{"id":1.5}', None),
        ('{"id":{"a":1}}', None),
        ('[{"id":1}]', None),
        ('{"unterminated": "abc', None),
        ("not json at all", None),
        ('{"x":' + "[" * 50_000 + ',"id":2', None),  # the "id" is nested, not top-level
        ('{"id":9,"x":' + "[" * 50_000, 9),
    ],
)
def test_the_top_level_id_is_found_without_parsing(text: str, expected: object) -> None:
    assert top_level_id(text) == expected


def test_reading_the_id_is_linear_in_the_text() -> None:
    """Unterminated strings and escaped quotes are the inputs a naive string pattern rescans."""
    hostile = '{"x":"' + '\\"' * 200_000
    assert top_level_id(hostile) is None
    assert top_level_id('{"' + "a" * 400_000) is None


def test_text_that_is_not_json_is_a_parse_error_with_the_id_when_one_is_readable() -> None:
    rejection = reject('{"jsonrpc":"2.0","id":"q1","method":"tools/list",')
    assert rejection.code == PARSE_ERROR and rejection.request_id == "q1"
    assert rejection.answer == {
        "jsonrpc": "2.0",
        "id": "q1",
        "error": {"code": PARSE_ERROR, "message": rejection.answer["error"]["message"]},  # type: ignore[index]
    }
    assert rejection.answer["error"]["message"].startswith("Parse error: the message is not valid JSON")  # type: ignore[index]


def test_json_a_stricter_parser_refused_is_a_parse_error() -> None:
    text = '{"jsonrpc":"2.0","id":3,"method":"x","params":{"q":"\\ud800"}}'
    rejection = reject(text, json_problem="Invalid JSON: unexpected end of hex escape at line 1 column 50")
    assert rejection.code == PARSE_ERROR and rejection.request_id == 3
    assert "unpaired surrogate" in rejection.reason


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "x"}, None),
        ({"jsonrpc": "2.0", "method": "x", "params": None}, None),
        ({"jsonrpc": "2.0", "id": 1}, 'a request needs a "method" member'),
        ({"jsonrpc": 2.0, "id": 1, "method": "x"}, 'the "jsonrpc" member must be exactly "2.0"'),
        ({"jsonrpc": "2.0", "id": False, "method": "x"}, 'the "id" member must be a string or an integer'),
        ({"jsonrpc": "2.0", "id": 1, "method": "x", "params": "p"}, 'the "params" member must be an object'),
    ],
)
def test_envelope_problems_are_named(message: dict[str, object], problem: str | None) -> None:
    found = envelope_problem(message)
    assert found == problem if problem is None else found is not None and found.startswith(problem)


def test_a_malformed_response_is_never_answered() -> None:
    rejection = reject('{"jsonrpc":"2.0","id":4,"result":"not an object"}')
    assert rejection.answer is None and rejection.code == INVALID_REQUEST


def test_a_batch_of_responses_and_requests_answers_only_the_requests() -> None:
    rejection = reject('[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"method":"ping"}]')
    assert isinstance(rejection.answer, list)
    assert [answer["id"] for answer in rejection.answer] == [2]


def test_a_batch_of_two_million_items_gets_one_answer_per_distinct_id_and_one_for_the_rest() -> None:
    items = ",".join(["1"] * 2_000_000 + ['{"jsonrpc":"2.0","id":3,"method":"ping"}'] * 2)
    rejection = reject(f'[{items},{{"jsonrpc":"2.0","method":"notifications/initialized"}}]')
    assert isinstance(rejection.answer, list)
    assert [answer["id"] for answer in rejection.answer] == [3, None]


_SCREEN_A_BATCH = """
import resource
from docs_mcp_server.jsonrpc import screen
text = "[" + ",".join(["1"] * 2_000_000) + "]"
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
message, rejection = screen(text)
assert message is None and rejection is not None
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


@pytest.mark.integration
def test_a_4_mb_batch_is_screened_in_memory_of_its_size() -> None:
    # in a process of its own: its peak memory is the screen's (the SDK's parser took 300 MB)
    done = subprocess.run(
        [sys.executable, "-c", _SCREEN_A_BATCH], capture_output=True, text=True, timeout=120, check=True
    )
    assert int(done.stdout) < 64 * 1024, f"{int(done.stdout)} kB more at peak to screen a 4 MB batch"


def test_a_number_too_long_to_read_is_named_without_python_advice() -> None:
    rejection = reject('{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"n":' + HUGE_NUMBER + "}}")
    assert isinstance(rejection.answer, dict) and rejection.code == PARSE_ERROR
    assert rejection.answer["id"] == 4
    message = rejection.answer["error"]["message"]
    assert "5000 digits" in message and "send it as a string" in message
    assert "sys." not in message, message  # the client cannot change the server's interpreter
