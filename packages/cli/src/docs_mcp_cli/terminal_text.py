"""What ``docs-mcp search`` and ``docs-mcp get`` print of a document, made safe for a terminal.

The documents are someone else's, and markdown may hold control characters: ESC starts the
sequences a terminal obeys (``ESC ] 0 ;`` sets its title, ``ESC ] 52 ;`` writes the clipboard,
others move the cursor or hide the text that follows), and so does a C1 control such as U+009B. A
command that prints a hit's heading or a chunk's text raw lets a document drive the reader's
terminal. When standard output is a terminal, every control character but tab and newline is
printed as its escape (``\\x1b``, ``\\x9b``); piped or redirected output is the text itself,
unchanged, for the programs that read it.
"""

from __future__ import annotations

import re
import sys

__all__ = ["for_terminal", "shown"]

_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def shown(text: str, *, json_text: bool = False) -> str:
    """``text`` with every control character but tab and newline written as its escape: ``\\x1b``,
    or for JSON text (``--json``) ``\\u001b``, which keeps it valid JSON (JSON writes the others
    escaped already, and a control character can only be inside one of its strings)."""
    form = "\\u{:04x}" if json_text else "\\x{:02x}"
    return _CONTROLS.sub(lambda m: form.format(ord(m.group())), text)


def for_terminal(text: str, *, json_text: bool = False) -> str:
    """``text`` as :func:`shown` gives it when standard output is a terminal, else unchanged."""
    try:
        terminal = sys.stdout.isatty()
    except (AttributeError, ValueError):  # replaced or closed
        terminal = False
    return shown(text, json_text=json_text) if terminal else text
