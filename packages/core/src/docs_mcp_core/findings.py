"""A problem found in a corpus, as every command prints it: ``path:line: severity: message``.

Its own module because the errors that carry findings (:class:`~docs_mcp_core.errors.FindingError`)
and the corpus code that finds them both need it, and neither should import the other for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True, order=True)
class Finding:
    """One problem found in a corpus, printed as ``path:line: severity: message``."""

    path: str
    line: int | None
    severity: Literal["error", "warning"]
    message: str

    def __post_init__(self) -> None:
        # a message repeating a value of a megabyte (a directive's name, a front matter value) was a
        # line of a megabyte: its middle is left out, its start (what) and end (what to do) kept
        if len(self.message) > _MAX_MESSAGE:
            left_out = len(self.message) - _KEEP_START - _KEEP_END
            cut = (
                f"{self.message[:_KEEP_START]} [... {left_out:,} characters ...] {self.message[-_KEEP_END:]}"
            )
            object.__setattr__(self, "message", cut)

    def render(self) -> str:
        """One line, whatever the path or message holds: control characters (a newline in a file
        name) are written as escapes (``\\n``, ``\\t``, ``\\x1b``), and so are the bytes of a file
        name that are not UTF-8 (``\\xff``)."""
        path = _one_line(self.path)
        where = f"{path}:{self.line}" if self.line else path
        return f"{where}: {self.severity}: {_one_line(self.message)}"

    def to_dict(self) -> dict[str, Any]:
        """The finding as JSON values; a file name's bytes that are not UTF-8 are written as
        ``\\xff`` (JSON text must be Unicode)."""
        path = _bytes_escaped(self.path)
        return {"path": path, "line": self.line, "severity": self.severity, "message": self.message}


_MAX_MESSAGE, _KEEP_START, _KEEP_END = 1_500, 1_000, 300
_CONTROL = {c: c.encode("unicode_escape").decode("ascii") for c in map(chr, [*range(32), 127])}
# os.fsdecode turns each byte of a file name that is not UTF-8 into a lone surrogate U+DC80-U+DCFF
_UNDECODED = {c: f"\\x{ord(c) - 0xDC00:02x}" for c in map(chr, range(0xDC80, 0xDD00))}


def _bytes_escaped(text: str) -> str:
    return "".join(_UNDECODED.get(c, c) for c in text) if any(c in _UNDECODED for c in text) else text


def _one_line(text: str) -> str:
    if text.isprintable():
        return text
    return "".join(_CONTROL.get(c) or _UNDECODED.get(c, c) for c in text)
