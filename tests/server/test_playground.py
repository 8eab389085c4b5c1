"""The playground's HTTP side against real ``docs-mcp-server`` processes: routes, assets, login.

(What the page does in a browser is in ``tests/browser``.)
"""

from __future__ import annotations

import http.client
import json
import re
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from docs_mcp_server.options import BuildInfo
from docs_mcp_server.playground import CONTENT_SECURITY_POLICY, COOKIE_NAME, Playground
from tests.support.programs import server_env
from tests.support.server_process import ServerProcess, run_server

pytestmark = pytest.mark.integration  # starts processes or listens on ports

PASSWORD = "correct horse battery staple"
TOKEN = "agent-token-123"
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def playground_env() -> dict[str, str]:
    env = server_env()
    env.pop("PLAYGROUND_PASSWORD", None)
    return env


class Running:
    """A server process and its port."""

    def __init__(self, index: Path, *extra: str) -> None:
        self.process = ServerProcess(
            ["--index-dir", str(index), "--transport", "http", "--port", "0", *extra], env=playground_env()
        )
        try:
            started = self.process.wait_for_log(lambda record: record.get("message") == "started mcp server")
        except BaseException:
            self.process.stop()
            raise
        self.port = int(started["properties"]["port"])
        self.started = started

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, http.client.HTTPMessage, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, response.headers, response.read()
        finally:
            conn.close()

    def login(self, password: str) -> tuple[int, http.client.HTTPMessage, bytes]:
        return self.request(
            "POST",
            "/login",
            urlencode({"password": password}).encode(),
            {"Content-Type": "application/x-www-form-urlencoded"},
        )

    def initialize(self, headers: dict[str, str] | None = None) -> int:
        status, _, _ = self.request(
            "POST", "/mcp", json.dumps(INITIALIZE).encode(), {**MCP_HEADERS, **(headers or {})}
        )
        return status

    def stop(self) -> None:
        self.process.proc.send_signal(signal.SIGTERM)
        try:
            assert self.process.wait() == 0, self.process.stderr_text()
        finally:
            self.process.stop()


@pytest.fixture(scope="module")
def plain_server(built_index: Path) -> Iterator[Running]:
    server = Running(built_index)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def playground(built_index: Path) -> Iterator[Running]:
    server = Running(built_index, "--playground")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def protected(built_index: Path) -> Iterator[Running]:
    server = Running(
        built_index,
        "--playground",
        "--playground-password",
        PASSWORD,
        "--auth-token",
        TOKEN,
        "--name",
        "acme <docs> & co",
    )
    yield server
    server.stop()


def cookie_from(headers: http.client.HTTPMessage) -> str:
    set_cookie = headers["Set-Cookie"]
    assert set_cookie is not None
    return set_cookie.split(";", 1)[0]


# -- off by default ------------------------------------------------------------------------------


def test_no_playground_without_the_flag(plain_server: Running) -> None:
    for method, path in [("GET", "/"), ("GET", "/static/playground.js"), ("POST", "/login")]:
        status, _, body = plain_server.request(method, path)
        assert status == 404, (method, path)
        assert json.loads(body) == {"error": "Not Found", "path": path}
    assert plain_server.started["properties"]["playground"] is None


def test_password_without_playground_is_a_usage_error(built_index: Path) -> None:
    env = {**playground_env(), "PLAYGROUND_PASSWORD": "secret"}
    result = run_server(["--index-dir", str(built_index), "--transport", "http", "--port", "0"], env=env)
    assert result.returncode == 2
    assert "--playground" in result.stderr and "--auth-token" in result.stderr
    assert "Traceback" not in result.stderr


# -- the page and its assets -----------------------------------------------------------------------


def test_page_is_served_at_root(playground: Running) -> None:
    status, headers, body = playground.request("GET", "/")
    assert status == 200
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert headers["X-Frame-Options"] == "DENY"
    html = body.decode()
    assert '<html lang="en" data-auth="none">' in html
    assert "<title>docs-mcp-server · docs playground</title>" in html
    assert playground.started["properties"]["playground"] == f"http://127.0.0.1:{playground.port}/"
    head_status, head_headers, head_body = playground.request("HEAD", "/")
    assert (head_status, head_body) == (200, b"")
    assert head_headers["Content-Length"] == str(len(body))
    assert playground.request("POST", "/")[0] == 405


def test_page_references_no_external_host(playground: Running) -> None:
    _, _, body = playground.request("GET", "/")
    html = body.decode()
    assert not re.search(r"https?://", html), "the page must not reference other hosts (no CDN)"
    assert not re.search(r"(?<![\w-])//[\w.-]+\.[a-z]{2,}", html), "no protocol-relative URLs either"
    refs = re.findall(r'(?:src|href|action)="([^"]*)"', html)
    assert refs, "the page loads its scripts and styles from this server"
    for ref in refs:
        assert ref.startswith("/") or ref.startswith("data:"), ref
    for ref in (r for r in refs if r.startswith("/static/")):
        status, headers, asset = playground.request("GET", ref)
        assert status == 200, ref
        text = asset.decode()
        if ref.endswith(".css"):
            assert headers["Content-Type"] == "text/css; charset=utf-8"
            assert "@import" not in text
            assert not re.search(r"url\(\s*['\"]?(?!data:)", text), "the stylesheet loads nothing"
        else:
            assert headers["Content-Type"] == "text/javascript; charset=utf-8"


def test_scripts_name_no_external_host(playground: Running) -> None:
    for name in ("playground.js", "mcp-client.js", "markdown.js"):
        status, _, body = playground.request("GET", f"/static/{name}")
        assert status == 200, name
        assert not re.search(r"https?://", body.decode()), name
    status, _, body = playground.request("GET", "/static/vendor/markdown-it.min.js")
    assert status == 200
    # The renderer's only URL literals are linkify's `http://${…}` templates (linkify is off).
    for match in re.finditer(r"https?://(.{0,2})", body.decode()):
        assert match.group(1) == "${", match.group(0)
    status, headers, licence = playground.request("GET", "/static/vendor/markdown-it.LICENSE.txt")
    assert status == 200 and headers["Content-Type"] == "text/plain; charset=utf-8"
    assert b"Permission is hereby granted" in licence and b"entities" in licence


def test_templates_and_unknown_files_are_not_served_as_assets(playground: Running) -> None:
    for path in ("/static/index.html", "/static/login.html", "/static/nope.js", "/static/../playground.py"):
        status, _, _ = playground.request("GET", path)
        assert status == 404, path
    assert playground.request("POST", "/static/playground.js")[0] == 405


def test_assets_are_revalidated_with_etags(playground: Running) -> None:
    status, headers, _ = playground.request("GET", "/static/playground.css")
    assert status == 200
    etag = headers["ETag"]
    assert etag and headers["Cache-Control"] == "no-cache"
    status, _, body = playground.request("GET", "/static/playground.css", headers={"If-None-Match": etag})
    assert (status, body) == (304, b"")


def test_without_password_login_redirects_and_mcp_stays_open(playground: Running) -> None:
    status, headers, _ = playground.login("anything")
    assert status == 303 and headers["Location"] == "/"
    assert headers["Set-Cookie"] is None
    assert playground.initialize() == 200
    status, _, body = playground.request("GET", "/healthz")
    assert status == 200 and json.loads(body)["build"]["name"] == "docs-mcp-server"


# -- the page's highlighting API -------------------------------------------------------------------


def highlight(server: Running, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    status, _, answer = server.request(
        "POST", "/api/highlight", raw, {"Content-Type": "application/json", **(headers or {})}
    )
    return status, json.loads(answer)


def test_highlight_returns_the_matched_spans_of_each_text(playground: Running) -> None:
    texts = [
        "However, endpoints retry in a single call: pass a RetryConfig.",
        "😀 retries",  # offsets in UTF-16 code units, as the page's strings count them
        "nothing to see",
        "",
    ]
    status, answer = highlight(playground, {"query": "how do I retry in the SDK", "texts": texts})
    assert status == 200
    spans = answer["spans"]
    assert len(spans) == len(texts)
    assert [texts[0][start:end] for start, end in spans[0]] == ["retry", "Retry"]
    assert spans[1] == [[3, 10]]
    assert spans[2] == [] and spans[3] == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "the body is not JSON"),
        ([1, 2], "the body must be a JSON object"),
        ({"texts": ["a"]}, '"query" must be a string'),
        ({"query": "retry", "texts": "a"}, '"texts" must be a list of strings'),
        ({"query": "retry", "texts": ["a", 1]}, '"texts" must be a list of strings'),
        ({"query": "  ", "texts": ["a"]}, "query is required"),
    ],
)
def test_highlight_refuses_a_bad_request_saying_what_is_wrong(
    playground: Running, body: Any, message: str
) -> None:
    status, answer = highlight(playground, body)
    assert status == 400
    assert answer["error"].startswith(message)


def test_highlight_is_post_only_bounded_and_absent_without_the_playground(
    playground: Running, plain_server: Running
) -> None:
    status, headers, _ = playground.request("GET", "/api/highlight")
    assert status == 405 and headers["Allow"] == "POST"
    status, answer = highlight(playground, {"query": "retry", "texts": ["x" * (4 * 1024 * 1024)]})
    assert status == 413 and "larger than" in answer["error"]
    assert highlight(plain_server, {"query": "retry", "texts": ["retry"]})[0] == 404


def test_highlight_needs_what_mcp_needs(protected: Running) -> None:
    body = {"query": "retry", "texts": ["retry"]}
    assert highlight(protected, body)[0] == 401
    assert highlight(protected, body, {"Authorization": "Bearer nope"})[0] == 401
    cookie = cookie_from(protected.login(PASSWORD)[1])
    for headers in (
        {"Cookie": cookie},
        {"Authorization": f"Bearer {PASSWORD}"},
        {"Authorization": f"Bearer {TOKEN}"},
    ):
        assert highlight(protected, body, headers) == (200, {"spans": [[[0, 5]]]}), headers


# -- password protection ---------------------------------------------------------------------------


def test_protected_page_shows_the_login_form(protected: Running) -> None:
    status, headers, body = protected.request("GET", "/")
    assert status == 401
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert headers["Set-Cookie"] is None
    html = body.decode()
    assert '<form id="login-form" method="post" action="/login">' in html
    assert "acme &lt;docs&gt; &amp; co" in html and "<docs>" not in html
    assert 'id="login-error" class="error" role="alert" hidden>' in html
    status, _, body = protected.request("GET", "/login")
    assert status == 200 and b'name="password"' in body


def test_wrong_password_gets_a_401_page(protected: Running) -> None:
    for attempt in ("wrong", "", PASSWORD + " "):
        status, headers, body = protected.login(attempt)
        assert status == 401, attempt
        assert headers["Content-Type"] == "text/html; charset=utf-8"
        assert headers["Set-Cookie"] is None
        html = body.decode()
        assert "Wrong password. Try again." in html
        assert "Traceback" not in html
    status, _, _ = protected.request("POST", "/login", b"password=" + b"x" * 20000)
    assert status == 413


def test_right_password_sets_an_httponly_cookie(protected: Running) -> None:
    status, headers, _ = protected.login(PASSWORD)
    assert status == 303 and headers["Location"] == "/"
    set_cookie = headers["Set-Cookie"]
    assert set_cookie is not None
    attributes = [part.strip() for part in set_cookie.split(";")]
    assert "HttpOnly" in attributes and "SameSite=Lax" in attributes and "Path=/" in attributes
    name, value = attributes[0].split("=", 1)
    assert name == COOKIE_NAME
    assert re.fullmatch(r"[0-9a-f]{64}", value), "an HMAC-SHA256, not the password"
    cookie = cookie_from(headers)
    status, _, body = protected.request("GET", "/", headers={"Cookie": f"other=1; {cookie}"})
    assert status == 200 and b'data-auth="password"' in body
    status, headers, _ = protected.request("GET", "/login", headers={"Cookie": cookie})
    assert status == 303 and headers["Location"] == "/"


def test_bearer_password_opens_the_page_but_the_token_does_not(protected: Running) -> None:
    assert protected.request("GET", "/", headers={"Authorization": f"Bearer {PASSWORD}"})[0] == 200
    assert protected.request("GET", "/", headers={"Authorization": f"Bearer {TOKEN}"})[0] == 401


def test_mcp_accepts_the_cookie_the_password_or_the_auth_token(protected: Running) -> None:
    cookie = cookie_from(protected.login(PASSWORD)[1])
    assert protected.initialize() == 401
    assert protected.initialize({"Authorization": "Bearer nope"}) == 401
    assert protected.initialize({"Cookie": f"{COOKIE_NAME}={'0' * 64}"}) == 401
    assert protected.initialize({"Cookie": cookie}) == 200
    assert protected.initialize({"Authorization": f"Bearer {PASSWORD}"}) == 200
    assert protected.initialize({"Authorization": f"Bearer {TOKEN}"}) == 200
    status, _, body = protected.request("GET", "/healthz")
    assert status == 200 and json.loads(body)["build"]["name"] == "acme <docs> & co"


def test_logout_clears_the_cookie(protected: Running) -> None:
    assert protected.request("GET", "/logout")[0] == 405
    status, headers, _ = protected.request("POST", "/logout")
    assert status == 303 and headers["Location"] == "/"
    assert headers["Set-Cookie"] == f"{COOKIE_NAME}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"


# -- the credential logic itself -------------------------------------------------------------------


def scope_with(*headers: tuple[str, str]) -> dict[str, Any]:
    return {"type": "http", "headers": [(k.lower().encode(), v.encode()) for k, v in headers]}


def test_cookie_is_keyed_per_process() -> None:
    build = BuildInfo(name="n", version="1")
    first = Playground(build, password=PASSWORD)
    second = Playground(build, password=PASSWORD)
    assert first.cookie_value() != second.cookie_value()
    assert PASSWORD not in first.cookie_value()
    own = scope_with(("Cookie", f"{COOKIE_NAME}={first.cookie_value()}"))
    assert first.authorized(own)
    assert not second.authorized(own), "a restarted server signs everybody out"
    assert first.authorized(scope_with(("Authorization", f"bearer {PASSWORD}")))
    assert not first.authorized(scope_with(("Authorization", f"Basic {PASSWORD}")))
    assert not first.authorized(scope_with())
    assert first.protects_mcp and first.auth_mode == "password"


def test_auth_modes_tell_the_page_what_to_ask_for() -> None:
    build = BuildInfo(name="n", version="1")
    assert Playground(build).auth_mode == "none"
    assert Playground(build, password="").auth_mode == "none"
    token_only = Playground(build, auth_token="t")
    assert token_only.auth_mode == "token" and not token_only.protects_mcp
    assert token_only.authorized(scope_with())


def test_a_non_ascii_password_matches_as_a_bearer_credential_in_utf8_or_latin1() -> None:
    page = Playground(BuildInfo(name="n", version="1"), password="pässwörd")

    def sent(credential: bytes) -> dict[str, Any]:
        return {"type": "http", "headers": [(b"authorization", b"Bearer " + credential)]}

    assert page.bearer_is_password(sent("pässwörd".encode()))
    assert page.bearer_is_password(sent("pässwörd".encode("latin-1")))  # what browsers send
    assert not page.bearer_is_password(sent(b"passwoerd"))
    assert not page.bearer_is_password(sent("pässwörd".encode().decode("latin-1").encode()))
    assert page.authorized(sent("pässwörd".encode()))
