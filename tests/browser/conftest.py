"""Browser fixtures: the real playground in headless Chromium (Debian's), driven by Playwright.

Everything here skips cleanly when ``/usr/bin/chromium`` (or ``DOCS_MCP_CHROMIUM``) or the
``playwright`` package is missing; Playwright never downloads a browser of its own here.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.playground import (
    CHROMIUM,
    CHROMIUM_ARGS,
    DESKTOP,
    PASSWORD,
    STEP_TIMEOUT_MS,
    TOKEN,
    OpenPage,
    PlaygroundServer,
)
from tests.support.programs import server_env
from tests.support.server_process import ServerProcess

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, ViewportSize


def _browser_missing() -> str | None:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} not found (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed"
    return None


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    """Module-scoped: Playwright's sync API keeps an event loop marked running in this thread while
    it lives, which would break later tests that start their own asyncio loop."""
    reason = _browser_missing()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True, timeout=60_000
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def playground_index(chromium: Browser, built_index: Path) -> Path:
    """The session's ``examples/docs`` index (requested only once a browser is known to exist)."""
    return built_index


def _start(index: Path, *extra: str) -> Iterator[PlaygroundServer]:
    env = server_env()
    env.pop("PLAYGROUND_PASSWORD", None)
    process = ServerProcess(
        ["--index-dir", str(index), "--transport", "http", "--port", "0", "--playground", *extra], env=env
    )
    try:
        started = process.wait_for_log(lambda record: record.get("message") == "started mcp server")
        yield PlaygroundServer(process, int(started["properties"]["port"]))
        process.proc.send_signal(signal.SIGTERM)
        process.wait()
    finally:
        process.stop()


@pytest.fixture(scope="module")
def open_server(playground_index: Path) -> Iterator[PlaygroundServer]:
    """Stateful, no credentials."""
    yield from _start(playground_index)


@pytest.fixture(scope="module")
def protected_server(playground_index: Path) -> Iterator[PlaygroundServer]:
    """Password-protected playground; ``--auth-token`` also set."""
    yield from _start(playground_index, "--playground-password", PASSWORD, "--auth-token", TOKEN)


@pytest.fixture(scope="module")
def token_server(playground_index: Path) -> Iterator[PlaygroundServer]:
    """Stateless, ``/mcp`` behind ``--auth-token`` only: the page asks for the token."""
    yield from _start(playground_index, "--stateless", "--auth-token", TOKEN)


@pytest.fixture(scope="session")
def artifacts(repo_root: Path) -> Path:
    folder = repo_root / ".artifacts" / "playground"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@dataclass
class Watch:
    """What a page did that it must not: requests to other hosts, script errors, CSP violations."""

    origin: str
    foreign_requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def on_request(self, request: Any) -> None:
        url: str = request.url
        if not (url.startswith(self.origin + "/") or url.startswith("data:")):
            self.foreign_requests.append(url)

    def on_console(self, message: Any) -> None:
        # A 401 page load is reported as a failed resource; anything else (CSP refusals included) counts.
        if message.type == "error" and "Failed to load resource" not in message.text:
            self.errors.append(f"console: {message.text}")

    def on_page_error(self, error: Any) -> None:
        self.errors.append(f"page error: {error}")


@pytest.fixture
def open_page(chromium: Browser) -> Iterator[OpenPage]:
    """``open_page(server, viewport=DESKTOP, ready=True)``: a fresh browser context on the playground."""
    contexts: list[Any] = []
    watches: list[Watch] = []

    def open_(server: PlaygroundServer, *, viewport: ViewportSize | None = None, ready: bool = True) -> Page:
        context = chromium.new_context(viewport=viewport or DESKTOP)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(STEP_TIMEOUT_MS)
        watch = Watch(server.origin)
        watches.append(watch)
        page.on("request", watch.on_request)
        page.on("console", watch.on_console)
        page.on("pageerror", watch.on_page_error)
        if ready:
            page.goto(server.url)
            page.wait_for_selector("body[data-ready='true']", state="attached")
        return page

    yield open_
    for context in contexts:
        context.close()
    for watch in watches:
        assert watch.foreign_requests == [], "the playground must not contact other hosts"
        assert watch.errors == []
