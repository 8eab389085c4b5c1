"""A manifest's JSON read and written back by ``docs-mcp fix`` without changing what the author wrote
beyond the change: numbers with a fraction or an exponent as written (a float would turn ``1e999``
into ``Infinity``, which is not JSON), and a key given twice in one object refused rather than
collapsed (a dict keeps only the last value, so rewriting would drop the first unseen)."""

from __future__ import annotations

import json
import os
import re
from typing import Any

from docs_mcp_core.errors import DuplicateKeyError

__all__ = ["dump_manifest_text", "indent_of", "load_manifest_text"]


class _Number:
    """A number with a fraction or exponent as the author wrote it: read as a float, ``1e999``
    became ``Infinity`` (not JSON) and ``12345678901234567890.5`` ``1.2345678901234567e+19``."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(key)
        out[key] = value
    return out


def load_manifest_text(text: str) -> Any:
    """A manifest's JSON as :func:`dump_manifest_text` writes it back: numbers with a fraction or an
    exponent kept as written; raises :class:`DuplicateKeyError` for a key given twice in one object."""
    return json.loads(text, parse_float=_Number, object_pairs_hook=_unique_keys)


def indent_of(text: str) -> str:
    """The indentation of one level in a manifest's ``text`` (that of its first indented line; two
    spaces when none is)."""
    match = re.search(r"\n([ \t]+)\S", text)
    return match.group(1) if match else "  "


def dump_manifest_text(data: Any, indent: str = "  ") -> str:
    """``data`` as a manifest's text: JSON indented by ``indent``, non-ASCII as is, numbers as the
    author wrote them."""
    numbers: list[str] = []
    tag = os.urandom(8).hex()

    def placeholder(value: object) -> str:
        if not isinstance(value, _Number):
            raise TypeError(f"cannot write {type(value).__name__} to a manifest")
        numbers.append(value.text)
        return f"\0{tag}:{len(numbers) - 1}\0"

    text = json.dumps(data, indent=indent, ensure_ascii=False, default=placeholder) + "\n"
    if not numbers:
        return text
    return re.sub(rf'"\\u0000{tag}:(\d+)\\u0000"', lambda m: numbers[int(m.group(1))], text)
