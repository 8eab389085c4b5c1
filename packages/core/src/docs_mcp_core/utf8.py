"""Text that cannot be written as UTF-8: a Python string holding a lone surrogate.

Such strings reach docs-mcp from outside: argv and environment bytes that are not UTF-8 (decoded
with ``surrogateescape``) and ``\\ud800``-style escapes in a client's JSON. Anything that encodes
them strictly (a JSON file, an HTTP header, a tokenizer, LanceDB's paths) fails, so each entry
point either refuses them with a clear message (:func:`is_utf8`) or replaces them (:func:`utf8_safe`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["LoneSurrogate", "first_lone_surrogate", "is_utf8", "utf8_safe"]


def is_utf8(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8 (holds no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def utf8_safe(text: str) -> str:
    """``text`` with each lone surrogate as ``?`` (``text`` itself when there is none)."""
    return text if is_utf8(text) else text.encode("utf-8", "replace").decode("utf-8")


class LoneSurrogate:
    """Where a JSON or YAML value holds a lone surrogate (a ``\\ud800`` escape, half of a UTF-16
    pair): the keys and indexes down to it (``in_key``: the last one's key itself holds it)."""

    __slots__ = ("escape", "in_key", "path")

    NOT_TEXT = (
        "half of a UTF-16 surrogate pair, which is not a character; write the character itself or remove it"
    )

    def __init__(self, path: tuple[str | int, ...], text: str, in_key: bool) -> None:
        first = next(c for c in text if 0xD800 <= ord(c) <= 0xDFFF)
        self.path, self.in_key, self.escape = path, in_key, f"'\\u{ord(first):04x}'"


def first_lone_surrogate(value: Any) -> LoneSurrogate | None:
    """The first key or string of a parsed JSON or YAML ``value`` that holds a lone surrogate (which
    no UTF-8 file, table or answer can hold), depth first, without recursion; None when all are text."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str) and not is_utf8(item):
            return LoneSurrogate(path, item, in_key=False)
        if isinstance(item, dict):
            for key, inner in reversed(list(item.items())):  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType, reportUnknownVariableType]
                if isinstance(key, str) and not is_utf8(key):
                    return LoneSurrogate(path, key, in_key=True)
                stack.append(((*path, str(key)), inner))  # pyright: ignore[reportUnknownArgumentType]
        elif isinstance(item, list):
            stack.extend(((*path, i), inner) for i, inner in reversed(list(enumerate(item))))  # pyright: ignore[reportUnknownArgumentType]
    return None
