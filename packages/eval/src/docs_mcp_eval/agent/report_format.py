"""Number and table formatting for the agent-eval reports (Markdown, readable as plain text)."""

from __future__ import annotations

from collections.abc import Sequence

from docs_mcp_eval.formatting import to_fixed

MISSING = "-"


def percent(value: float | None) -> str:
    return MISSING if value is None else f"{to_fixed(value * 100, 1)}%"


def cost(value: float | None) -> str:
    return MISSING if value is None else f"${to_fixed(value, 4)}"


def number(value: float | None, digits: int) -> str:
    return MISSING if value is None else to_fixed(value, digits)


def seconds(milliseconds: float | None) -> str:
    return MISSING if milliseconds is None else f"{to_fixed(milliseconds / 1000, 1)} s"


def signed(value: float, digits: int, suffix: str = "") -> str:
    text = to_fixed(value, digits)
    return (f"+{text}" if value >= 0 else text) + suffix


def signed_cost(value: float) -> str:
    return f"+${to_fixed(value, 4)}" if value >= 0 else f"-${to_fixed(-value, 4)}"


def cell(text: str) -> str:
    """Text made safe for a Markdown table cell (pipes escaped, one line)."""
    return " ".join(text.replace("|", "\\|").split())


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], align: str = "") -> str:
    """A Markdown table; ``align`` has one ``l`` or ``r`` per column (default left)."""
    marks = ["---:" if (align[i : i + 1] == "r") else "---" for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
