"""The playground: a web page, served next to ``/mcp``, for exploring an index in the browser.

``docs-mcp-server --transport http --playground`` adds these routes to the HTTP server:

- ``GET /`` — the page (``static/index.html``). It is plain HTML, CSS and JavaScript (no build step,
  no external requests) and searches and reads through ``POST /mcp`` only, with the same
  ``initialize`` / ``tools/list`` / ``tools/call`` messages an agent sends, so what a person sees
  there is exactly what agents get. It folds a result whose heading and snippet repeat a card
  above it under that card.
- ``GET /static/<file>`` — the page's scripts and styles (the same for every installation, so they
  are served without login; HTML templates are never served from here).
- ``POST /login`` / ``POST /logout`` — only when a password is set.
- ``POST /api/highlight`` — ``{"query": str, "texts": [str, ...]}`` → ``{"spans": [[[start, end],
  ...], ...]}``: for each text the page shows (a hit's heading and snippet, the text nodes of an
  opened chunk), the spans the search for ``query`` matched, computed by
  :func:`docs_mcp_core.search.match_spans` over the served index's reading of the query and counted
  in UTF-16 code units as JavaScript indexes strings. The page marks exactly these and guesses
  nothing; the MCP tools' answers are unchanged. It needs what ``/mcp`` needs (see
  :mod:`docs_mcp_server.http`).

With a password (``--playground-password`` or ``PLAYGROUND_PASSWORD``) the page **and** ``/mcp`` need
one of: the login cookie (set by ``POST /login``: an HMAC of the password under a key drawn at
process start, so a restart signs everybody out and the password itself never sits in a cookie),
or ``Authorization: Bearer <password>``. ``--auth-token`` keeps working for ``/mcp``: either
credential opens it. ``/healthz`` stays open.

Password guessing is throttled: after :data:`~docs_mcp_server.auth.LOGIN_ATTEMPTS` wrong passwords from one client
address within :data:`~docs_mcp_server.auth.LOGIN_WINDOW_SECONDS`, ``POST /login`` answers 429 with ``Retry-After``
until the oldest failure leaves the window (behind a proxy every client shares its address, so the
limit then applies to all of them together). Wrong credentials on ``/mcp`` count against the same
budget (see :mod:`docs_mcp_server.http`, which lets the auth token and the login cookie in before
looking at the throttle).
"""

from __future__ import annotations

import hashlib
import hmac
import html
import itertools
import json
import math
import re
import secrets
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

import anyio
from starlette.types import Receive, Scope, Send

from docs_mcp_server.auth import LoginThrottle, bearer_credential, client_address, secret_matches
from docs_mcp_server.errors import IndexUnavailableError
from docs_mcp_server.options import BuildInfo

if TYPE_CHECKING:
    from docs_mcp_core.search import Query

COOKIE_NAME = "docs_mcp_playground"
COOKIE_MAX_AGE = 24 * 60 * 60
STATIC_PREFIX = "/static/"
PAGE_PATHS = ("/", "/index.html")
LOGIN_PATH = "/login"
LOGOUT_PATH = "/logout"
HIGHLIGHT_PATH = "/api/highlight"
MAX_LOGIN_BODY = 16 * 1024
MAX_HIGHLIGHT_BODY = 4 * 1024 * 1024  # the texts of one opened document, with room to spare
MAX_HIGHLIGHT_TEXTS = 20_000
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")  # characters JavaScript counts as two
_PUBLIC_SUFFIXES = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".txt": "text/plain",
    ".svg": "image/svg+xml",
}

# The page loads nothing from anywhere but this server; the browser enforces it too.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
_PAGE_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]

AUTH_NONE, AUTH_PASSWORD, AUTH_TOKEN = "none", "password", "token"


@dataclass(frozen=True)
class StaticFile:
    """One asset of the page, held in memory (the whole folder is a few hundred KiB)."""

    body: bytes
    content_type: str
    etag: str


def _walk(folder: Traversable, prefix: str = "") -> Iterator[tuple[str, Traversable]]:
    for entry in folder.iterdir():
        name = f"{prefix}{entry.name}"
        if entry.is_dir():
            yield from _walk(entry, f"{name}/")
        else:
            yield name, entry


def load_static_files() -> tuple[dict[str, StaticFile], dict[str, str]]:
    """The public assets (``/static/<relpath>`` → file) and the HTML templates (name → text)."""
    public: dict[str, StaticFile] = {}
    templates: dict[str, str] = {}
    for name, entry in _walk(resources.files("docs_mcp_server") / "static"):
        suffix = "." + name.rsplit(".", 1)[-1] if "." in name else ""
        if suffix == ".html":
            templates[name] = entry.read_text(encoding="utf-8")
        elif suffix in _PUBLIC_SUFFIXES:
            body = entry.read_bytes()
            content_type = _PUBLIC_SUFFIXES[suffix]
            if content_type.startswith("text/"):
                content_type += "; charset=utf-8"
            etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
            public[STATIC_PREFIX + name] = StaticFile(body, content_type, etag)
    return public, templates


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return None


def _cookies(scope: Scope) -> dict[str, str]:
    jar: dict[str, str] = {}
    for key, value in scope.get("headers", []):
        if key != b"cookie":
            continue
        for part in value.decode("latin-1").split(";"):
            name, sep, val = part.strip().partition("=")
            if sep and name not in jar:
                jar[name] = val.strip().strip('"')
    return jar


class Playground:
    """Routes and login of the playground page (mounted by :mod:`docs_mcp_server.http`).

    ``password`` protects the page and ``/mcp``; ``auth_token`` is the ``--auth-token`` of the
    server, only used here to tell the page that ``/mcp`` wants a token it must ask the user for.
    ``read_query`` reads a query as the served index's search does (for ``/api/highlight``).
    """

    def __init__(
        self,
        build_info: BuildInfo,
        *,
        password: str | None = None,
        auth_token: str | None = None,
        throttle: LoginThrottle | None = None,
        read_query: Callable[[str], Awaitable[Query]] | None = None,
    ):
        self.build_info = build_info
        self.read_query = read_query
        self.password = password or None
        self.throttle = throttle or LoginThrottle()
        self._key = secrets.token_bytes(32)
        self._cookie_value = (
            hmac.new(self._key, self.password.encode(), hashlib.sha256).hexdigest() if self.password else ""
        )
        if self.password:
            self.auth_mode = AUTH_PASSWORD
        elif auth_token:
            self.auth_mode = AUTH_TOKEN
        else:
            self.auth_mode = AUTH_NONE
        self.static, templates = load_static_files()
        self._page = self._render_page(templates["index.html"])
        self._login_template = templates["login.html"]

    # -- credentials ---------------------------------------------------------------------------

    @property
    def protects_mcp(self) -> bool:
        """Whether ``/mcp`` needs the playground password (cookie or bearer)."""
        return self.password is not None

    def cookie_value(self) -> str:
        """What the login cookie holds: HMAC-SHA256 of the password under this process's key."""
        return self._cookie_value

    def authorized(self, scope: Scope) -> bool:
        """Whether the request carries the password: the login cookie or ``Bearer <password>``."""
        if self.password is None:
            return True
        return self.has_login_cookie(scope) or self.bearer_is_password(scope)

    def has_login_cookie(self, scope: Scope) -> bool:
        """Whether the request carries a valid login cookie (which no one can guess)."""
        cookie = _cookies(scope).get(COOKIE_NAME)
        return (
            self.password is not None
            and cookie is not None
            and hmac.compare_digest(cookie.encode(), self._cookie_value.encode())
        )

    def bearer_is_password(self, scope: Scope) -> bool:
        """Whether the request's ``Authorization: Bearer`` credential is the password."""
        sent = bearer_credential(scope)
        return self.password is not None and sent is not None and secret_matches(sent, self.password)

    def password_matches(self, candidate: str) -> bool:
        assert self.password is not None
        return hmac.compare_digest(candidate.encode(), self.password.encode())

    # -- routing -------------------------------------------------------------------------------

    def serves(self, path: str) -> bool:
        """Whether ``path`` is one of the playground's routes."""
        return path in PAGE_PATHS or path in (LOGIN_PATH, LOGOUT_PATH) or path.startswith(STATIC_PREFIX)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method: str = scope["method"]
        path: str = scope["path"]
        if path.startswith(STATIC_PREFIX):
            await self._static(scope, send, method, path)
        elif path in PAGE_PATHS:
            if method not in ("GET", "HEAD"):
                await _respond(
                    send, 405, b"text/plain; charset=utf-8", b"Method Not Allowed", [(b"allow", b"GET")]
                )
            elif not self.authorized(scope):
                await self._login_page(send, 401, method=method)
            else:
                await _respond(
                    send, 200, b"text/html; charset=utf-8", self._page, _PAGE_HEADERS, method=method
                )
        elif path == LOGIN_PATH:
            await self._login(scope, receive, send, method)
        else:
            await self._logout(scope, send, method)

    async def highlight(self, receive: Receive, send: Send, method: str) -> None:
        """``POST /api/highlight`` (the caller has checked the credentials ``/mcp`` needs)."""
        if method != "POST":
            await _json(send, 405, {"error": "Method Not Allowed"}, [(b"allow", b"POST")])
            return
        body = await _read_body(receive, MAX_HIGHLIGHT_BODY)
        if body is None:
            await _json(send, 413, {"error": f"the request is larger than {MAX_HIGHLIGHT_BODY} bytes"})
            return
        try:
            text, texts = highlight_request(body)
        except ValueError as exc:
            await _json(send, 400, {"error": str(exc)})
            return
        if self.read_query is None:
            await _json(send, 503, {"error": "no index is served"})
            return
        from docs_mcp_core.errors import SearchError

        try:
            query = await self.read_query(text)
        except SearchError as exc:
            await _json(send, 400, {"error": str(exc)})
            return
        except IndexUnavailableError as exc:
            await _json(send, 503, {"error": str(exc)})
            return
        spans = await anyio.to_thread.run_sync(_spans_of, query, texts)
        await _json(send, 200, {"spans": spans})

    async def _static(self, scope: Scope, send: Send, method: str, path: str) -> None:
        asset = self.static.get(path)
        if asset is None:
            await _respond(send, 404, b"text/plain; charset=utf-8", b"Not Found")
        elif method not in ("GET", "HEAD"):
            await _respond(
                send, 405, b"text/plain; charset=utf-8", b"Method Not Allowed", [(b"allow", b"GET")]
            )
        else:
            headers = [
                (b"etag", asset.etag.encode()),
                (b"cache-control", b"no-cache"),
                (b"x-content-type-options", b"nosniff"),
            ]
            if _header(scope, b"if-none-match") == asset.etag:
                await _respond(send, 304, None, b"", headers)
            else:
                await _respond(send, 200, asset.content_type.encode(), asset.body, headers, method=method)

    async def _login(self, scope: Scope, receive: Receive, send: Send, method: str) -> None:
        if self.password is None:
            await _redirect(send, "/")
            return
        if method in ("GET", "HEAD"):
            if self.authorized(scope):
                await _redirect(send, "/")
            else:
                await self._login_page(send, 200, method=method)
            return
        if method != "POST":
            await _respond(
                send, 405, b"text/plain; charset=utf-8", b"Method Not Allowed", [(b"allow", b"GET, POST")]
            )
            return
        body = await _read_body(receive, MAX_LOGIN_BODY)
        if body is None:
            await self._login_page(send, 413, error="That request was too large.")
            return
        client = client_address(scope)
        wait = self.throttle.retry_after(client)
        if wait > 0:
            seconds = max(1, math.ceil(wait))
            await self._login_page(
                send,
                429,
                error=f"Too many wrong passwords. Try again in {seconds} seconds.",
                extra=[(b"retry-after", str(seconds).encode())],
            )
            return
        fields = parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)
        candidate = (fields.get("password") or [""])[0]
        if not self.password_matches(candidate):
            self.throttle.failed(client)
            await self._login_page(send, 401, error="Wrong password. Try again.")
            return
        self.throttle.succeeded(client)
        cookie = (
            f"{COOKIE_NAME}={self._cookie_value}; Path=/; Max-Age={COOKIE_MAX_AGE}; HttpOnly; SameSite=Lax"
        )
        if scope.get("scheme") == "https":
            cookie += "; Secure"
        await _redirect(send, "/", [(b"set-cookie", cookie.encode())])

    async def _logout(self, scope: Scope, send: Send, method: str) -> None:
        if method != "POST":
            await _respond(
                send, 405, b"text/plain; charset=utf-8", b"Method Not Allowed", [(b"allow", b"POST")]
            )
            return
        cookie = f"{COOKIE_NAME}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"
        await _redirect(send, "/", [(b"set-cookie", cookie.encode())])

    # -- pages ---------------------------------------------------------------------------------

    def _render_page(self, template: str) -> bytes:
        values = {
            "{{AUTH_MODE}}": self.auth_mode,
            "{{SERVER_NAME}}": html.escape(self.build_info.name),
        }
        for placeholder, value in values.items():
            template = template.replace(placeholder, value)
        return template.encode()

    async def _login_page(
        self,
        send: Send,
        status: int,
        *,
        error: str = "",
        method: str = "GET",
        extra: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        text = (
            self._login_template.replace("{{SERVER_NAME}}", html.escape(self.build_info.name))
            .replace("{{ERROR_HIDDEN}}", "" if error else "hidden")
            .replace("{{ERROR}}", html.escape(error))
        )
        headers = [*_PAGE_HEADERS, *(extra or [])]
        await _respond(send, status, b"text/html; charset=utf-8", text.encode(), headers, method=method)


def highlight_request(body: bytes) -> tuple[str, list[str]]:
    """The query and texts of a ``/api/highlight`` body; ``ValueError`` says what is wrong with it."""
    try:
        request = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"the body is not JSON: {exc}") from None
    except (RecursionError, ValueError) as exc:  # was a 500 (logged as an unhandled error)
        from docs_mcp_core.errors import json_limit

        raise ValueError(f"the body cannot be read: {json_limit(exc, advice=False)}") from None
    if not isinstance(request, dict):
        raise ValueError('the body must be a JSON object: {"query": "...", "texts": ["..."]}')
    query, texts = request.get("query"), request.get("texts")
    if not isinstance(query, str):
        raise ValueError('"query" must be a string')
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise ValueError('"texts" must be a list of strings')
    if len(texts) > MAX_HIGHLIGHT_TEXTS:
        raise ValueError(f'"texts" has {len(texts)} items; at most {MAX_HIGHLIGHT_TEXTS} are accepted')
    return query, texts


def _spans_of(query: Query, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
    from docs_mcp_core.search import match_spans

    return [utf16_spans(text, match_spans(query, text)) for text in texts]


def utf16_spans(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` of ``text`` counted in characters, counted in UTF-16 code units instead (the
    offsets of a JavaScript string: a character beyond U+FFFF counts twice)."""
    if not spans or text.isascii() or not _ASTRAL.search(text, 0, spans[-1][1]):
        return list(spans)
    offsets = [0, *itertools.accumulate(2 if ord(c) > 0xFFFF else 1 for c in text)]
    return [(offsets[start], offsets[end]) for start, end in spans]


async def _json(
    send: Send, status: int, body: dict[str, Any], extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    payload = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    await _respond(
        send, status, b"application/json", payload, [(b"cache-control", b"no-store"), *(extra or [])]
    )


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The request body, or None once it grows past ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _redirect(send: Send, location: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    await _respond(
        send,
        303,
        None,
        b"",
        [(b"location", location.encode()), (b"cache-control", b"no-store"), *(extra or [])],
    )


async def _respond(
    send: Send,
    status: int,
    content_type: bytes | None,
    body: bytes,
    extra: list[tuple[bytes, bytes]] | None = None,
    *,
    method: str = "GET",
) -> None:
    headers = [(b"content-length", str(len(body)).encode())]
    if content_type is not None:
        headers.append((b"content-type", content_type))
    headers.extend(extra or [])
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if method == "HEAD" else body})
