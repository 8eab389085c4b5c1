"""Running the installed programs (``docs-mcp``, ``docs-mcp-server``) as child processes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BIN_DIR = Path(sys.executable).parent
SERVER_COMMAND = str(BIN_DIR / "docs-mcp-server")
BUILD_COMMAND = str(BIN_DIR / "docs-mcp")
# variables that change a server's defaults: a test sets the ones it means to
_SERVER_DEFAULTS = {
    "SERVER_NAME",
    "SERVER_VERSION",
    "STATELESS",
    "LOG_LEVEL",
    "LOG_PRETTY",
    "GIT_COMMIT",
    "BUILD_DATE",
    "DOCS_MCP_AUTH_TOKEN",
    "DOCS_MCP_CURSOR_SECRET",
    "DOCS_MCP_WORKERS",
    "DOCS_MCP_HTTP_WORKER",
}


def server_env(**extra: str) -> dict[str, str]:
    """Environment for server subprocesses: the parent's, minus variables that change defaults."""
    env = {k: v for k, v in os.environ.items() if k not in _SERVER_DEFAULTS}
    env["LANCEDB_LOG"] = "error"
    env.update(extra)
    return env


def docs_mcp_command() -> list[str]:
    """How to start the installed ``docs-mcp`` command (the console script of this environment)."""
    script = BIN_DIR / "docs-mcp"
    if script.exists():
        return [str(script)]
    found = shutil.which("docs-mcp")
    if found:
        return [found]
    return [sys.executable, "-c", "from docs_mcp_cli.entry import main; main()"]


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("LANCEDB_LOG", "error")
    env["COLUMNS"] = "400"  # no wrapping of long tmp paths in messages
    return env


def run_docs_mcp(*args: str | Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """Run ``docs-mcp ARGS`` to completion and capture its output."""
    return subprocess.run(
        [*docs_mcp_command(), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=cli_env(),
    )


def build_with_cli(docs: Path, out: Path, *extra: str, timeout: float = 300) -> Path:
    """Run the real ``docs-mcp build`` (no embeddings unless ``extra`` flags ask for them); fail the
    test with its stderr if it fails."""
    result = subprocess.run(
        [BUILD_COMMAND, "build", "--docs-dir", str(docs), "--out", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=server_env(),
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"docs-mcp build failed ({result.returncode}):\n{result.stderr[-4000:]}")
    return out


def permissions_enforced() -> list[str]:
    """A command prefix under which file permissions apply to the command: none for a user other
    than root; for root, ``setpriv`` without the two capabilities that let it read anything (skips
    the test where that cannot be done)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: file permissions cannot be made to apply")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search"]


def run_in_private_mount(script: list[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``sh -c SCRIPT ARGS...`` in a private user and mount namespace (where a test may mount a
    small or read-only tmpfs); skips the test where such a namespace cannot be made."""
    done = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", *script],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=cli_env(),
    )
    if done.returncode == 77 or "unshare:" in done.stderr:
        pytest.skip(f"cannot mount a private tmpfs here: {done.stderr.strip()}")
    return done
