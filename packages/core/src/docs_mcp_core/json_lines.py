"""The lines of a manifest's keys and override patterns, for findings that point at them; and
JSON read with the keys its objects give twice (:func:`loads_noting_repeats`), which JSON itself
keeps silently, the last value winning.

Best effort (a key is found by its text, not by parsing), but in one pass over the file: looking
each finding's key up by searching the whole text made a manifest of 20,000 overrides that match
nothing take 22 s to validate (and 50,000 over two minutes), the time growing with the square of
its size.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from typing import Any

# possessive (a string is read once, never backtracked into): a repeated group that can backtrack
# keeps a frame per character, so a 10 MB string value took 1.4 GB to scan
_KEY = re.compile(r'"((?:[^"\\]++|\\.)*+)"\s*:')
_PATTERN = re.compile(r'"pattern"\s*:\s*("(?:[^"\\]++|\\.)*+")')


def loads_noting_repeats(text: str) -> tuple[Any, list[str]]:
    """``json.loads(text)`` (an object's last value of a key wins, as JSON has it) and the keys some
    object gives twice, each once, in the order they are found. Raises what ``json.loads`` raises."""
    twice: dict[str, None] = {}

    def keep_last(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                twice[key] = None
            out[key] = value
        return out

    return json.loads(text, object_pairs_hook=keep_last), list(twice)


def _decoded(quoted: str) -> str | None:
    try:
        value = json.loads(quoted)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


class JsonLines:
    """Where the keys and ``"pattern"`` values of one JSON text are (1-based lines)."""

    def __init__(self, text: str) -> None:
        self._newlines = [m.start() for m in re.finditer("\n", text)]
        self._keys: dict[str, list[tuple[int, int]]] = {}
        for m in _KEY.finditer(text):
            key = _decoded(f'"{m.group(1)}"')
            if key is not None:
                self._keys.setdefault(key, []).append((m.start(), m.end()))
        self._patterns: dict[str, int] = {}
        for m in _PATTERN.finditer(text):
            value = _decoded(m.group(1))
            if value is not None:
                self._patterns.setdefault(value, m.start())

    def _line(self, offset: int) -> int:
        return bisect_left(self._newlines, offset) + 1

    def key_line(self, key: str, after: str | None = None) -> int | None:
        """The line of the first ``"key":`` (after the first ``"after":`` when given)."""
        start = 0
        if after is not None:
            anchors = self._keys.get(after)
            if not anchors:
                return None
            start = anchors[0][1]
        places = self._keys.get(key, [])
        i = bisect_left(places, (start, -1))
        return self._line(places[i][0]) if i < len(places) else None

    def pattern_line(self, value: str) -> int | None:
        """The line of the first ``"pattern": <value>``."""
        offset = self._patterns.get(value)
        return None if offset is None else self._line(offset)
