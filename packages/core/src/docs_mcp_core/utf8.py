"""Text that cannot be written as UTF-8: a Python string holding a lone surrogate.

Such strings reach docs-mcp from outside: argv and environment bytes that are not UTF-8 (decoded
with ``surrogateescape``) and ``\\ud800``-style escapes in a client's JSON. Anything that encodes
them strictly (a JSON file, an HTTP header, a tokenizer, LanceDB's paths) fails, so each entry
point either refuses them with a clear message (:func:`is_utf8`) or replaces them (:func:`utf8_safe`).
"""

from __future__ import annotations

__all__ = ["is_utf8", "utf8_safe"]


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
