"""Filter leaks: hits that a filtered search should not have returned.

The original's "facet precision" only says whether the expected chunk was found; it never looks at the
other hits. This module checks every returned hit's ``metadata`` against the case's filters, with the
docs-mcp auto-include rule honoured: when ``language`` is filtered and ``scope`` is not, a search for
``language=L`` legitimately returns

* SDK pages of that language (``scope=sdk-specific``, ``language=L``),
* every global guide (``scope=global-guide``, whatever its language), and
* pages outside both scopes whose language is empty or ``L`` (legacy corpora without a scope).

Every other filter key must match exactly. A key missing from a hit's metadata counts as ``""``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

LANGUAGE_KEY = "language"
SCOPE_KEY = "scope"
SDK_SPECIFIC = "sdk-specific"
GLOBAL_GUIDE = "global-guide"


def hit_violates_filters(metadata: Mapping[str, Any] | None, filters: Mapping[str, str]) -> bool:
    """True when a hit with ``metadata`` should have been excluded by ``filters``."""
    meta = metadata or {}
    auto_include = LANGUAGE_KEY in filters and SCOPE_KEY not in filters
    for key, wanted in filters.items():
        if auto_include and key == LANGUAGE_KEY:
            if not _language_allowed(meta, wanted):
                return True
        elif _value(meta, key) != wanted:
            return True
    return False


def _language_allowed(meta: Mapping[str, Any], language: str) -> bool:
    scope = _value(meta, SCOPE_KEY)
    hit_language = _value(meta, LANGUAGE_KEY)
    if scope == SDK_SPECIFIC:
        return hit_language == language
    if scope == GLOBAL_GUIDE:
        return True
    return hit_language in ("", language)


def _value(meta: Mapping[str, Any], key: str) -> str:
    value = meta.get(key)
    return "" if value is None else str(value)
