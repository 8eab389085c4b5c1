"""Stateless cursors, signed with HMAC-SHA256: search pages, and the rest of a cut ``get_doc``.

A search cursor carries the next offset and the page size, plus a signature over offset, limit, the
trimmed query and the filters, keyed by a secret. Any replica that knows the secret can verify a
cursor minted by another; a cursor cannot be forged, replayed against another query or filter set,
or edited to jump elsewhere. The wire shape is the original's: base64url JSON
``{"offset": N, "limit": N, "v": 1, "sig": "..."}``, about 100 characters; a cursor longer than
:data:`MAX_CURSOR_CHARS` is refused before it is decoded, so checking one costs little whatever is sent.

A ``get_doc`` answer cut to a token budget ends with a shorter cursor, since the agent reads it:
``<part>.<sig>``, the piece where the rest starts and an HMAC-SHA256 (its first 128 bits, base64url)
over that part and the request it continues (chunk id, scope, context).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from docs_mcp_core.errors import SearchError

CURSOR_VERSION = 1
MAX_CURSOR_OFFSET = 5000
MAX_CURSOR_CHARS = 512  # far above the longest cursor encode_cursor makes


@dataclass(frozen=True)
class CursorPosition:
    offset: int
    limit: int


_BASE64URL = re.compile(r"[A-Za-z0-9_-]*={0,2}")


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    """``text``'s bytes; ValueError for a character outside the base64url alphabet (which the
    standard library would skip, decoding ``!!!`` as nothing)."""
    if not _BASE64URL.fullmatch(text):
        raise ValueError("not base64url")
    padded = text + "=" * (-len(text) % 4)
    return base64.urlsafe_b64decode(padded.encode("ascii"))


def _signature(secret: bytes, offset: int, limit: int, query: str, filters: Mapping[str, str]) -> str:
    payload = json.dumps(
        {"offset": offset, "limit": limit, "query": query.strip(), "filters": sorted(filters.items())},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    # surrogatepass: a query may hold a lone surrogate (argv bytes that are not UTF-8, a client's
    # "\ud800"), which made signing the next page's cursor fail the whole search
    return _b64encode(hmac.new(secret, payload.encode("utf-8", "surrogatepass"), hashlib.sha256).digest())


def encode_cursor(position: CursorPosition, *, query: str, filters: Mapping[str, str], secret: bytes) -> str:
    sig = _signature(secret, position.offset, position.limit, query, filters)
    body = {"offset": position.offset, "limit": position.limit, "v": CURSOR_VERSION, "sig": sig}
    return _b64encode(json.dumps(body, separators=(",", ":")).encode("utf-8"))


def _payload(cursor: str) -> dict[str, object]:
    """The JSON object inside ``cursor`` (stripped), or the :class:`SearchError` that says what is wrong."""
    try:
        raw = _b64decode(cursor)
    except (ValueError, UnicodeEncodeError):
        raise SearchError("Invalid cursor: not valid base64url") from None
    try:
        body = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # not UTF-8 or not JSON, nested deep, numbers too long
        raise SearchError("Invalid cursor: malformed JSON payload") from None
    if not isinstance(body, dict):
        raise SearchError("Invalid cursor: expected a search cursor payload")
    return body


def decode_cursor(cursor: str, *, query: str, filters: Mapping[str, str], secret: bytes) -> CursorPosition:
    """Verify ``cursor`` for this query and filter set. Raises :class:`SearchError` when invalid."""
    cursor = cursor.strip()
    if len(cursor) > MAX_CURSOR_CHARS:
        raise SearchError(f"Invalid cursor: longer than {MAX_CURSOR_CHARS} characters")
    body = _payload(cursor)
    offset, limit, version, sig = body.get("offset"), body.get("limit"), body.get("v"), body.get("sig")
    if (
        type(offset) is not int
        or type(limit) is not int
        or offset < 0
        or limit <= 0
        or version != CURSOR_VERSION
        or not isinstance(sig, str)
        or not sig
    ):
        raise SearchError("Invalid cursor: expected a search cursor payload")
    expected = _signature(secret, offset, limit, query, filters)
    if not hmac.compare_digest(expected, sig):
        raise SearchError("Invalid cursor: does not match current query or filters")
    if offset > MAX_CURSOR_OFFSET:
        raise SearchError(
            f"Invalid cursor: offset {offset} is beyond the {MAX_CURSOR_OFFSET} results a search can page through"
        )
    return CursorPosition(offset, limit)


@dataclass(frozen=True)
class DocRequest:
    """The ``get_doc`` request a cursor continues."""

    chunk_id: str
    scope: str
    context: int


def _doc_signature(secret: bytes, part: int, request: DocRequest) -> str:
    payload = json.dumps(
        {"part": part, "chunk_id": request.chunk_id, "scope": request.scope, "context": request.context},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    digest = hmac.new(
        secret, b"get_doc\0" + payload.encode("utf-8", "surrogatepass"), hashlib.sha256
    ).digest()
    return _b64encode(digest[:16])


def encode_doc_cursor(part: int, request: DocRequest, *, secret: bytes) -> str:
    """The cursor that fetches a ``get_doc`` answer from its ``part``-th piece on."""
    return f"{part}.{_doc_signature(secret, part, request)}"


def decode_doc_cursor(cursor: str, request: DocRequest, *, secret: bytes) -> int:
    """The part a ``get_doc`` cursor continues from, verified for ``request``."""
    cursor = cursor.strip()
    if len(cursor) > MAX_CURSOR_CHARS:
        raise SearchError(f"Invalid cursor: longer than {MAX_CURSOR_CHARS} characters")
    number, _, sig = cursor.partition(".")
    if not number.isascii() or not number.isdigit() or len(number) > 9 or not sig:
        raise SearchError("Invalid cursor: expected a get_doc cursor (<part>.<signature>)")
    part = int(number)
    if not hmac.compare_digest(_doc_signature(secret, part, request), sig):
        raise SearchError("Invalid cursor: does not match this chunk_id, scope and context")
    return part


def default_cursor_secret(index_identity: bytes) -> bytes:
    """The secret used when none is configured: derived from the index itself (its metadata.json),
    so every replica serving the same index accepts the others' cursors."""
    digest = hashlib.sha256(b"docs-mcp cursor v1\0")
    digest.update(index_identity)  # not prefix + identity: a copy of metadata.json (5 MB at 10x)
    return digest.digest()
