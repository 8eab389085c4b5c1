"""The one deterministic string order used everywhere (files, taxonomy values, overrides, tie-breaks).

The original sorts with JavaScript's ``localeCompare`` (ICU collation), which is neither portable nor
stable across ICU versions. We order case-insensitively first and by code point second, which gives
the original's order on every corpus we have measured and never depends on the machine's locale.
"""

from __future__ import annotations

from collections.abc import Iterable


def sort_key(value: str) -> tuple[str, str]:
    """Key for :func:`sorted`: case-folded text first, exact code points to break ties."""
    return (value.casefold(), value)


def sorted_strings(values: Iterable[str]) -> list[str]:
    """Return ``values`` in the project's deterministic order."""
    return sorted(values, key=sort_key)
