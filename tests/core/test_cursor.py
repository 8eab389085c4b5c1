"""Pagination cursors: round trip, wire shape, and every way a cursor must be refused."""

from __future__ import annotations

import base64
import hashlib
import hmac
import inspect
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from docs_mcp_core.errors import SearchError
from docs_mcp_core.search import SearchEngine, SearchOptions
from docs_mcp_core.search.cursor import (
    MAX_CURSOR_CHARS,
    MAX_CURSOR_OFFSET,
    CursorPosition,
    decode_cursor,
    default_cursor_secret,
    encode_cursor,
)

SECRET = b"0123456789abcdef0123456789abcdef"
QUERY = "retry configuration"
FILTERS = {"language": "python", "scope": "sdk-specific"}


def _encode(offset: int = 10, limit: int = 10, **kw: object) -> str:
    query = kw.get("query", QUERY)
    filters = kw.get("filters", FILTERS)
    secret = kw.get("secret", SECRET)
    assert isinstance(query, str) and isinstance(filters, dict) and isinstance(secret, bytes)
    return encode_cursor(CursorPosition(offset, limit), query=query, filters=filters, secret=secret)


def _body(cursor: str) -> dict[str, object]:
    return json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))


def _wrap(body: object) -> str:
    raw = json.dumps(body, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _decode(cursor: str, **kw: object) -> CursorPosition:
    query = kw.get("query", QUERY)
    filters = kw.get("filters", FILTERS)
    secret = kw.get("secret", SECRET)
    assert isinstance(query, str) and isinstance(filters, dict) and isinstance(secret, bytes)
    return decode_cursor(cursor, query=query, filters=filters, secret=secret)


def test_round_trip() -> None:
    assert _decode(_encode(30, 7)) == CursorPosition(30, 7)


def test_wire_shape_is_unpadded_base64url_json_in_the_originals_key_order() -> None:
    cursor = _encode(20, 10)
    assert "=" not in cursor and "+" not in cursor and "/" not in cursor
    body = _body(cursor)
    assert list(body) == ["offset", "limit", "v", "sig"]
    assert body["offset"] == 20 and body["limit"] == 10 and body["v"] == 1
    assert isinstance(body["sig"], str) and body["sig"]


def test_query_is_trimmed_and_filter_order_is_irrelevant() -> None:
    cursor = _encode(query=f"  {QUERY}\n")
    reordered = dict(reversed(list(FILTERS.items())))
    assert _decode(cursor, filters=reordered) == CursorPosition(10, 10)


@pytest.mark.parametrize(
    ("query", "filters"),
    [
        ("retry configurations", FILTERS),
        ("Retry configuration", FILTERS),
        (QUERY, {"language": "go", "scope": "sdk-specific"}),
        (QUERY, {"language": "python"}),
        (QUERY, {**FILTERS, "service": "dub"}),
        (QUERY, {}),
    ],
)
def test_rejected_for_another_query_or_other_filters(query: str, filters: dict[str, str]) -> None:
    with pytest.raises(SearchError, match=r"^Invalid cursor: does not match current query or filters$"):
        _decode(_encode(), query=query, filters=filters)


def test_rejected_with_another_secret() -> None:
    with pytest.raises(SearchError, match=r"^Invalid cursor"):
        _decode(_encode(), secret=b"another secret")


def test_forged_offset_keeps_the_signature_but_is_rejected() -> None:
    body = _body(_encode(10, 10))
    body["offset"] = 40
    with pytest.raises(SearchError, match=r"^Invalid cursor: does not match"):
        _decode(_wrap(body))


def test_unkeyed_signature_of_the_original_is_rejected() -> None:
    payload = json.dumps({"query": QUERY, "filters": sorted(FILTERS.items())}, separators=(",", ":"))
    sig = base64.urlsafe_b64encode(hashlib.sha1(payload.encode()).digest()).rstrip(b"=").decode()
    with pytest.raises(SearchError, match=r"^Invalid cursor"):
        _decode(_wrap({"offset": 10, "limit": 10, "v": 1, "sig": sig}))


@pytest.mark.parametrize("cut", [1, 2, 5, 20])
def test_truncated_cursor_is_rejected(cut: int) -> None:
    cursor = _encode()
    with pytest.raises(SearchError, match=r"^Invalid cursor"):
        _decode(cursor[:-cut])


@pytest.mark.parametrize(
    "cursor",
    [
        "bad-cursor",
        "!!!!",
        "é",
        "\0",
        "e30",  # {}
        _wrap([1, 2]),
        _wrap("text"),
        _wrap(None),
        _wrap({"offset": -1, "limit": 10, "v": 1, "sig": "x"}),
        _wrap({"offset": 1, "limit": 0, "v": 1, "sig": "x"}),
        _wrap({"offset": 1.5, "limit": 10, "v": 1, "sig": "x"}),
        _wrap({"offset": True, "limit": 10, "v": 1, "sig": "x"}),
        _wrap({"offset": "1", "limit": 10, "v": 1, "sig": "x"}),
        _wrap({"offset": 1, "limit": 10, "v": 2, "sig": "x"}),
        _wrap({"offset": 1, "limit": 10, "v": 1, "sig": ""}),
        _wrap({"offset": 1, "limit": 10, "v": 1}),
    ],
)
def test_malformed_cursors_are_rejected_with_an_invalid_cursor_message(cursor: str) -> None:
    with pytest.raises(SearchError) as info:
        _decode(cursor)
    assert str(info.value).startswith("Invalid cursor")


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"[" * 300, "malformed JSON payload"),  # nested deeper than json reads without a limit
        (b'{"offset": ' + b"9" * 360 + b"}", "expected a search cursor payload"),
        (b"[" * 100_000, f"longer than {MAX_CURSOR_CHARS} characters"),
        (b'{"offset": ' + b"9" * 5_000 + b"}", f"longer than {MAX_CURSOR_CHARS} characters"),
    ],
)
def test_hostile_cursors_are_refused_as_invalid_cursors(payload: bytes, reason: str) -> None:
    cursor = base64.urlsafe_b64encode(payload).decode("ascii")
    with pytest.raises(SearchError) as info, _shallow_stack():
        _decode(cursor)
    assert str(info.value) == f"Invalid cursor: {reason}"


@pytest.mark.parametrize("cursor", ["!!!", "abc!", "a b", "eyJ9.x", "éé"])
def test_a_cursor_with_characters_outside_base64url_says_so(cursor: str) -> None:
    # the standard library skips such characters: "!!!" decoded as nothing, "malformed JSON"
    with pytest.raises(SearchError) as info:
        _decode(cursor)
    assert str(info.value) == "Invalid cursor: not valid base64url"


def test_the_longest_cursor_a_search_returns_is_well_within_the_length_limit() -> None:
    longest = _encode(MAX_CURSOR_OFFSET, 50, query="q" * 2000, filters={"k" * 100: "v" * 100})
    assert len(longest) * 4 < MAX_CURSOR_CHARS  # only the signature of query and filters is kept


@contextmanager
def _shallow_stack() -> Iterator[None]:
    """A recursion limit close to the current depth, as deep in a server's call stack."""
    depth = len(inspect.stack(0))
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 100)
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def test_offset_beyond_what_can_be_served_is_rejected_even_when_signed() -> None:
    assert _decode(_encode(MAX_CURSOR_OFFSET, 10)).offset == MAX_CURSOR_OFFSET
    with pytest.raises(SearchError, match=rf"^Invalid cursor: offset {MAX_CURSOR_OFFSET + 1} is beyond"):
        _decode(_encode(MAX_CURSOR_OFFSET + 1, 10))


def test_default_secret_is_derived_from_the_index_identity() -> None:
    a = default_cursor_secret(b'{"metadata_version": "1.1.0", "a": 1}')
    assert a == default_cursor_secret(b'{"metadata_version": "1.1.0", "a": 1}')
    assert a != default_cursor_secret(b'{"metadata_version": "1.1.0", "a": 2}')
    assert len(a) == 32
    # the derivation every version uses: replicas of two versions accept each other's cursors
    assert a == hashlib.sha256(b'docs-mcp cursor v1\0{"metadata_version": "1.1.0", "a": 1}').digest()


def test_a_query_holding_a_lone_surrogate_pages_on(built_index: Path) -> None:
    # argv bytes that are not UTF-8 (docs-mcp search) or a client's "\udcff" reach the query as a
    # lone surrogate: signing the next page's cursor raised UnicodeEncodeError, failing the search
    engine = SearchEngine.open(built_index, options=SearchOptions())
    try:
        first = engine.search("retry\udcff", limit=2)
        assert len(first.hits) == 2 and first.next_cursor is not None
        second = engine.search("retry\udcff", limit=2, cursor=first.next_cursor)
        with pytest.raises(SearchError, match="does not match current query"):
            engine.search("retry", limit=2, cursor=first.next_cursor)
    finally:
        engine.close()
    assert second.hits and {h.chunk_id for h in second.hits}.isdisjoint(h.chunk_id for h in first.hits)


def test_a_cursor_secret_that_is_not_utf8_signs_and_verifies(built_index: Path) -> None:
    # a secret given as argv bytes that are not UTF-8 reaches the engine with a lone surrogate:
    # encoding it strictly failed every search's cursor
    options = SearchOptions(cursor_secret="s3cret\udcff")
    engine = SearchEngine.open(built_index, options=options)
    other = SearchEngine.open(built_index, options=SearchOptions(cursor_secret="s3cret"))
    try:
        first = engine.search("retry", limit=2)
        assert first.next_cursor is not None
        assert engine.search("retry", limit=2, cursor=first.next_cursor).hits
        with pytest.raises(SearchError):
            other.search("retry", limit=2, cursor=first.next_cursor)
    finally:
        engine.close()
        other.close()


def test_signatures_of_valid_queries_are_unchanged() -> None:
    # cursors issued before lone surrogates were signed still verify
    payload = json.dumps(
        {"offset": 10, "limit": 10, "query": "é retry", "filters": sorted(FILTERS.items())},
        separators=(",", ":"),
        ensure_ascii=False,
    ).encode("utf-8")
    sig = base64.urlsafe_b64encode(hmac.new(SECRET, payload, hashlib.sha256).digest()).rstrip(b"=").decode()
    assert _body(_encode(query="é retry"))["sig"] == sig
