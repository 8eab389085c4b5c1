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

    def render(self) -> str:
        """One line, whatever the path or message holds: control characters (a newline in a file
        name) are written as escapes (``\\n``, ``\\t``, ``\\x1b``)."""
        path = _one_line(self.path)
        where = f"{path}:{self.line}" if self.line else path
        return f"{where}: {self.severity}: {_one_line(self.message)}"

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "severity": self.severity, "message": self.message}


_CONTROL = {c: c.encode("unicode_escape").decode("ascii") for c in map(chr, [*range(32), 127])}


def _one_line(text: str) -> str:
    if text.isprintable():
        return text
    return "".join(_CONTROL.get(c, c) for c in text)
