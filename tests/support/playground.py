"""The playground in a browser: the server processes its tests start and what a page needs."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tests.support.server_process import ServerProcess

if TYPE_CHECKING:
    from playwright.sync_api import Page, ViewportSize

CHROMIUM = Path(os.environ.get("DOCS_MCP_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DESKTOP: ViewportSize = {"width": 1280, "height": 860}
PHONE: ViewportSize = {"width": 390, "height": 844}
PASSWORD = "open sesame 42"
TOKEN = "agent-token-7"
STEP_TIMEOUT_MS = 15_000


@dataclass
class PlaygroundServer:
    """A ``docs-mcp-server --transport http --playground`` process on 127.0.0.1."""

    process: ServerProcess
    port: int

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.origin}/"


OpenPage = Callable[..., "Page"]
