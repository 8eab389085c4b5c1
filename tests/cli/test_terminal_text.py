"""What ``docs-mcp search`` and ``get`` print of a document reaches a terminal with its control
characters escaped, and a pipe unchanged."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import time
from pathlib import Path

import pytest

from docs_mcp_cli.terminal_text import shown
from tests.support.programs import cli_env, docs_mcp_command
from tests.support.tiny_corpus import build_pages

pytestmark = pytest.mark.integration  # starts processes

# a heading that sets the terminal's title, and text with a C1 control sequence introducer
HOSTILE = {
    "guide.md": "# Tides \x1b]0;pwned\x07 guide\n\nThe tide table \u009b31m lists high water.\n",
}


def _on_a_terminal(*args: str | Path) -> bytes:
    """The command's output as a terminal receives it (its stdout a pseudo-terminal)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [*docs_mcp_command(), *map(str, args)],
        stdout=follower,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env=cli_env(),
    )
    os.close(follower)
    out = b""
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the follower side closed: the command has exited
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(leader)
        proc.wait(timeout=30)
    assert proc.returncode == 0
    return out


def test_control_characters_reach_a_terminal_escaped_and_a_pipe_as_they_are(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    index = build_pages(tmp_path_factory, "hostile-terminal", HOSTILE)
    for args in (
        ("search", "--index-dir", index, "tide table"),
        ("get", "--index-dir", index, "guide.md#_preamble"),
        ("search", "--index-dir", index, "tide table", "--json"),
    ):
        # no escape sequence but the bold the command itself asks for around a hit's id
        shown_on_terminal = _on_a_terminal(*args).replace(b"\x1b[1m", b"").replace(b"\x1b[0m", b"")
        assert b"\x1b" not in shown_on_terminal and "\u009b".encode() not in shown_on_terminal
        assert b"]0;pwned" in shown_on_terminal and b"31m" in shown_on_terminal  # the text, escaped
        if "--json" in args:  # still JSON, of the same strings
            hits = json.loads(shown_on_terminal.replace(b"\r\n", b"\n"))["hits"]
            assert "\u009b31m" in hits[0]["snippet"]
        piped = subprocess.run(
            [*docs_mcp_command(), *map(str, args)],
            capture_output=True,
            env=cli_env(),
            timeout=120,
            check=True,
        ).stdout
        assert b"\x1b]0;pwned\x07" in piped or "\u009b31m".encode() in piped  # the text itself


def test_every_control_character_but_tab_and_newline_is_escaped() -> None:
    assert shown("a\tb\nc") == "a\tb\nc"
    assert shown("\x00\x07\x1b[31m\x7f\u0085\u009b é") == "\\x00\\x07\\x1b[31m\\x7f\\x85\\x9b é"
    # JSON text stays JSON: its strings hold the same characters
    document = json.dumps({"heading": "a\u009b31m\x7f b\x1b"}, ensure_ascii=False)
    assert json.loads(shown(document, json_text=True)) == json.loads(document)
    assert "\u009b" not in shown(document, json_text=True)
