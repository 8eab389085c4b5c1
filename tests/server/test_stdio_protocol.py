"""Malformed JSON-RPC over stdio: every bad message gets the answer JSON-RPC 2.0 prescribes (or,
for a malformed response, none), the session goes on, and nothing is left waiting at shutdown.

The messages are raw bytes written to a real ``docs-mcp-server`` subprocess; one server serves the
module's tests, so a message that ended the session would fail every test after it (the test that
ends a session on purpose starts its own server).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.protocol import INITIALIZE, INITIALIZED
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.integration

PARSE_ERROR, INVALID_REQUEST = -32700, -32600
_ping_ids = itertools.count(1000)


def request(request_id: Any, method: str = "tools/list", **extra: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, **extra}).encode()


def search_call(request_id: int, arguments: str) -> bytes:
    """A search_docs call whose arguments are the raw JSON text ``arguments``."""
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
        f'"params":{{"name":"search_docs","arguments":{arguments}}}}}'
    ).encode()


DEPTH = 100_000
ANSWERED = [
    ("object id", request({"a": 1}), INVALID_REQUEST, None),
    ("array id", request([1, 2]), INVALID_REQUEST, None),
    ("null id", request(None), INVALID_REQUEST, None),
    ("boolean id", request(True), INVALID_REQUEST, None),
    ("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":5,"method":"tools/list"}', INVALID_REQUEST, 5),
    ("no jsonrpc member", b'{"id":"six","method":"tools/list"}', INVALID_REQUEST, "six"),
    ("params not an object", request(13, params=[1, 2]), INVALID_REQUEST, 13),
    ("method not a string", b'{"jsonrpc":"2.0","id":14,"method":7}', INVALID_REQUEST, 14),
    ("not JSON", b"hello there", PARSE_ERROR, None),
    ("invalid UTF-8", b"\xff\xfe\xfd", PARSE_ERROR, None),
    ("truncated JSON", b'{"jsonrpc":"2.0","id":8,"method":"tools/list"', PARSE_ERROR, 8),
    ("a JSON number", b"42", INVALID_REQUEST, None),
    ("empty batch", b"[]", INVALID_REQUEST, None),
    ("lone surrogate", search_call(11, '{"query":"\\ud800"}'), PARSE_ERROR, 11),
    ("nested 100,000 deep", search_call(12, '{"query":' + "[" * DEPTH + "]" * DEPTH + "}"), PARSE_ERROR, 12),
]


@pytest.mark.parametrize(
    ("line", "code", "request_id"), [c[1:] for c in ANSWERED], ids=[c[0] for c in ANSWERED]
)
def test_a_malformed_message_is_answered_and_the_session_goes_on(
    stdio_session: Any, line: bytes, code: int, request_id: Any
) -> None:
    stdio_session.send_raw(line)
    reply = stdio_session.receive()
    assert reply["jsonrpc"] == "2.0" and "result" not in reply
    assert reply["id"] == request_id
    assert reply["error"]["code"] == code
    assert reply["error"]["message"].startswith(
        "Parse error: " if code == PARSE_ERROR else "Invalid Request: "
    )
    assert_still_serving(stdio_session)


def test_bytes_that_are_not_utf8_are_named_not_replaced(stdio_session: Any) -> None:
    # a Latin-1 é in a query: read as U+FFFD, the search ran for another query than the one meant
    line = search_call(17, '{"query":"caf\u00e9 retry"}').replace(b"\xc3\xa9", b"\xe9")
    stdio_session.send_raw(line)
    reply = stdio_session.receive()
    offset = line.index(b"\xe9")
    assert reply == {"jsonrpc": "2.0", "id": 17, "error": {"code": PARSE_ERROR, "message": (
        f"Parse error: the message is not valid UTF-8 (byte 0xe9 at offset {offset}); encode it as UTF-8")}}  # fmt: skip
    assert_still_serving(stdio_session)


def test_a_batch_gets_an_error_for_each_request_in_it(stdio_session: Any) -> None:
    stdio_session.send_raw(b"[" + request(9) + b"," + request("ten") + b"," + b"7]")
    replies = stdio_session.receive_any()
    assert isinstance(replies, list)
    assert [(r["id"], r["error"]["code"]) for r in replies] == [
        (9, INVALID_REQUEST),
        ("ten", INVALID_REQUEST),
        (None, INVALID_REQUEST),
    ]
    assert "batches are not supported" in replies[0]["error"]["message"]
    assert_still_serving(stdio_session)


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"a":1}}}',
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}',
        b'{"jsonrpc":"2.0","id":15,"result":5}',  # a malformed response: JSON-RPC never answers those
    ],
    ids=["cancel with object id", "cancel with array id", "malformed response"],
)
def test_messages_that_want_no_answer_get_none_and_end_nothing(stdio_session: Any, line: bytes) -> None:
    stdio_session.send_raw(line)
    assert_still_serving(stdio_session)  # the very next line out is the ping's answer


NOT_AN_OBJECT = [[1], [], "query", 7, True]


@pytest.mark.parametrize("arguments", NOT_AN_OBJECT, ids=repr)
def test_tool_arguments_that_are_not_an_object_get_the_documented_answer(
    stdio_session: Any, arguments: object
) -> None:
    for tool in ("search_docs", "get_doc"):
        stdio_session.send({"jsonrpc": "2.0", "id": 901, "method": "tools/call",
                            "params": {"name": tool, "arguments": arguments}})  # fmt: skip
        assert stdio_session.receive() == tool_error(901, f"{tool} input must be an object")
    assert_still_serving(stdio_session)


WRONG_PARAMS = [
    ("resources/read", {"uri": 5}, "resources/read: params.uri: Input should be a valid string"),
    ("resources/read", {}, "resources/read: params.uri: Field required"),
    ("prompts/get", {"name": "prompts/debug-webhook", "arguments": {"event_type": ["payment.failed"]}},
     "prompts/get: params.arguments.event_type: Input should be a valid string"),
    ("prompts/get", {"name": 7}, "prompts/get: params.name: Input should be a valid string"),
]  # fmt: skip


@pytest.mark.parametrize(("method", "params", "named"), WRONG_PARAMS, ids=[repr(c[1]) for c in WRONG_PARAMS])
def test_params_of_the_wrong_shape_are_named(
    stdio_session: Any, method: str, params: dict[str, Any], named: str
) -> None:
    # the SDK answered every one "Invalid request parameters" with empty data: nothing to correct by
    stdio_session.send_raw(request(903, method, params=params))
    error = {"code": -32602, "message": f"Invalid request parameters for {named}"}
    assert stdio_session.receive() == {"jsonrpc": "2.0", "id": 903, "error": error}
    assert_still_serving(stdio_session)


def test_an_unknown_method_is_repeated_only_in_part(stdio_session: Any) -> None:
    # the SDK's "Method not found" carried the whole method name as its data: 1 MB sent back
    stdio_session.send_raw(request(904, "m" * 1_000_000))
    error = stdio_session.receive()["error"]
    assert (error["code"], error["message"]) == (-32601, "Method not found")
    assert error["data"] == "m" * 200 + "... (1,000,000 characters)"
    assert_still_serving(stdio_session)


def test_null_tool_arguments_are_no_arguments(stdio_session: Any) -> None:
    stdio_session.send({"jsonrpc": "2.0", "id": 902, "method": "tools/call",
                        "params": {"name": "search_docs", "arguments": None}})  # fmt: skip
    assert stdio_session.receive() == tool_error(902, "query must be a non-empty string")
    assert_still_serving(stdio_session)


def test_rejections_are_logged_and_nothing_is_left_in_flight_at_the_end(built_index: Path) -> None:
    server = ServerProcess(["--index-dir", str(built_index), "--log-level", "warning"])  # its own: it ends it
    try:
        server.send(INITIALIZE)
        assert server.receive()["id"] == INITIALIZE["id"]
        server.send(INITIALIZED)
        server.send_raw(b'{"jsonrpc":"1.0","id":77,"method":"tools/list"}')
        assert server.receive()["id"] == 77
        server.close_stdin()
        assert server.wait() == 0
    finally:
        server.stop()
    records = [json.loads(line) for line in server.stderr_lines]
    rejected = [r for r in records if r["message"] == "rejected a malformed JSON-RPC message"]
    assert rejected and all(r["level"] == "WARN" for r in rejected)
    assert any(r["properties"]["id"] == 77 and r["properties"]["code"] == INVALID_REQUEST for r in rejected)
    assert not any("still running" in r["message"] for r in records), records
    assert not any(r["level"] == "ERROR" for r in records), records


def tool_error(request_id: int, message: str) -> dict[str, Any]:
    """A tools/call answer that is the tool's ``isError`` result ``message``."""
    result = {"content": [{"type": "text", "text": message}], "isError": True}
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def assert_still_serving(server: Any) -> None:
    ping_id = next(_ping_ids)
    server.send_raw(request(ping_id, "ping"))
    assert server.receive() == {"jsonrpc": "2.0", "id": ping_id, "result": {}}


def test_a_request_before_initialize_is_told_to_initialize_and_the_session_goes_on(built_index: Path) -> None:
    server = ServerProcess(["--index-dir", str(built_index), "--log-level", "warning"])
    try:
        server.send_raw(search_call(5, '{"query":"retry"}'))
        error = server.receive()["error"]  # the SDK said only "Invalid request parameters"
        assert error["code"] == -32602
        assert "not initialized" in error["message"] and "send initialize" in error["message"]
        server.send(INITIALIZE)
        assert server.receive()["id"] == INITIALIZE["id"]
        server.send(INITIALIZED)
        server.send_raw(search_call(6, '{"query":"retry"}'))
        assert "result" in server.receive()
    finally:
        server.stop()


def test_an_opening_request_after_a_byte_order_mark_gets_one_answer(built_index: Path) -> None:
    """Read early (before the MCP SDK was imported) by a parser that skips a UTF-8 byte-order mark,
    an ``initialize`` written after one was answered with a result, and then, by the SDK, which does
    not skip it, with a parse error as well: two answers for one message. It gets the parse error
    alone, as over HTTP."""
    server = ServerProcess(["--index-dir", str(built_index), "--log-level", "error"])
    try:
        server.send_raw(b"\xef\xbb\xbf" + json.dumps(INITIALIZE).encode())
        server.send({**INITIALIZE, "id": 9})
        # the second is answered early, the first once the SDK runs: by id, not in order
        answers = {answer["id"]: answer for answer in (server.receive(), server.receive())}
        assert sorted(answers, key=str) == [9, None], answers
        assert answers[None]["error"]["code"] == PARSE_ERROR and "BOM" in answers[None]["error"]["message"]
        assert "result" in answers[9]
        assert_still_serving(server)  # and nothing more for id 1 before the ping's answer
    finally:
        server.stop()


def test_a_custom_tool_pattern_that_backtracks_gives_up_and_the_server_goes_on(built_index: Path) -> None:
    """Matched by Python's ``re``, an operator's ``^(a|a)*$`` against 40 ``a`` and a ``!`` takes
    hours, and held every other request of the server meanwhile. The value is refused once
    :data:`~docs_mcp_server.custom_tools.PATTERN_SECONDS` have passed."""
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(a|a)*$"}}}
    tools = [{"name": "docs_feedback", "description": "Feedback.", "inputSchema": schema}]
    server = ServerProcess(
        ["--index-dir", str(built_index), "--log-level", "error", "--custom-tools-json", json.dumps(tools)]
    )
    try:
        server.send(INITIALIZE)
        assert "result" in server.receive()
        server.send(INITIALIZED)
        call = {"name": "docs_feedback", "arguments": {"code": "a" * 40 + "!"}}
        server.send_raw(request(7, "tools/call", params=call))
        answer = server.receive(timeout=20)
        assert answer["id"] == 7 and answer["result"]["isError"] is True
        text = answer["result"]["content"][0]["text"]
        assert text.startswith("Invalid arguments for 'docs_feedback' at 'code': a value of 41 characters")
        assert "could not be matched against '^(a|a)*$'" in text
        server.send_raw(request(8, "tools/call", params={**call, "arguments": {"code": "aaa"}}))
        assert server.receive()["result"]["content"][0]["text"] == '{"code":"aaa"}'
        assert_still_serving(server)
    finally:
        server.stop()
