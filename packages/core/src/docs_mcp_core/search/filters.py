"""Taxonomy filters: which filters a request may use, and the rule they apply, in three forms.

:func:`active_filters` is the one place that decides which filters of a request apply and refuses
unknown keys (:func:`check_filter_values` also refuses values no chunk has, for front ends that
want that). The rule itself has three forms here: SQL for LanceDB, a test of one chunk's metadata,
and a vectorised mask over every row. The ``language``/``scope`` auto-include rule is the original's: when ``language`` is filtered and
``scope`` is not, SDK-specific chunks of that language, every ``global-guide`` chunk, and chunks of
any other scope that are language-neutral or in that language all match.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

import numpy as np

from docs_mcp_core.errors import SearchError
from docs_mcp_core.index.table import quote_identifier, quote_string

SDK_SPECIFIC = "sdk-specific"
GLOBAL_GUIDE = "global-guide"


def active_filters(
    filters: Mapping[str, str] | None, taxonomy_keys: Sequence[str], columns: Collection[str]
) -> dict[str, str]:
    """The filters a request applies: empty values left out, NUL characters removed.

    Raises :class:`SearchError` for a key that is not a taxonomy key of the index (or has no column).
    """
    active = {k: v for k, v in (filters or {}).items() if v}
    active = {k: v.replace("\0", "") for k, v in active.items()}
    for key in active:
        if key not in taxonomy_keys or key not in columns:
            raise SearchError(f"Unknown filter '{key}'. Valid filters: {', '.join(taxonomy_keys) or 'none'}")
    return active


def check_filter_values(filters: Mapping[str, str], taxonomy: Mapping[str, Sequence[str]]) -> None:
    """Raise :class:`SearchError` for a filter value that no chunk of the index carries."""
    for key, value in filters.items():
        allowed = taxonomy.get(key)
        if allowed is not None and value not in allowed:
            raise SearchError(
                f"Invalid value '{value}' for filter '{key}'. Valid values: {', '.join(allowed)}"
            )


def _auto_include(filters: Mapping[str, str], taxonomy_keys: Sequence[str] | None) -> bool:
    has_scope = taxonomy_keys is None or "scope" in taxonomy_keys
    has_language = taxonomy_keys is None or "language" in taxonomy_keys
    return has_scope and has_language and bool(filters.get("language")) and not filters.get("scope")


def where_clause(filters: Mapping[str, str], taxonomy_keys: Sequence[str] | None = None) -> str | None:
    """SQL WHERE clause for ``filters`` (None when there is nothing to filter)."""
    clauses: list[str] = []
    language, scope = filters.get("language"), filters.get("scope")
    if _auto_include(filters, taxonomy_keys):
        lang = quote_string(language or "")
        s, lcol = quote_identifier("scope"), quote_identifier("language")
        clauses.append(
            f"(({s} = '{SDK_SPECIFIC}' AND {lcol} = {lang}) OR {s} = '{GLOBAL_GUIDE}' OR "
            f"({s} <> '{SDK_SPECIFIC}' AND {s} <> '{GLOBAL_GUIDE}' AND ({lcol} = '' OR {lcol} = {lang})))"
        )
    else:
        if language:
            clauses.append(f"{quote_identifier('language')} = {quote_string(language)}")
        if scope:
            clauses.append(f"{quote_identifier('scope')} = {quote_string(scope)}")
    for key, value in filters.items():
        if key in ("language", "scope"):
            continue
        clauses.append(f"{quote_identifier(key)} = {quote_string(value)}")
    return " AND ".join(clauses) if clauses else None


def matches_filters(
    metadata: Mapping[str, str], filters: Mapping[str, str], taxonomy_keys: Sequence[str] | None = None
) -> bool:
    """Whether a chunk with ``metadata`` passes ``filters`` (same semantics as :func:`where_clause`)."""
    language, scope = filters.get("language"), filters.get("scope")
    if _auto_include(filters, taxonomy_keys):
        s, lang = metadata.get("scope", ""), metadata.get("language", "")
        ok = (
            (s == SDK_SPECIFIC and lang == language)
            or s == GLOBAL_GUIDE
            or (s not in (SDK_SPECIFIC, GLOBAL_GUIDE) and lang in ("", language))
        )
        if not ok:
            return False
    else:
        if language and metadata.get("language", "") != language:
            return False
        if scope and metadata.get("scope", "") != scope:
            return False
    return all(metadata.get(k, "") == v for k, v in filters.items() if k not in ("language", "scope"))


def filter_mask(
    filters: Mapping[str, str],
    taxonomy_keys: Sequence[str] | None,
    equals: Callable[[str, str], np.ndarray],
) -> np.ndarray | None:
    """Boolean mask of the rows passing ``filters`` (same semantics as :func:`where_clause`).

    ``equals(key, value)`` is the mask of rows whose ``key`` is ``value`` (``""``: no value).
    None when nothing is filtered.
    """
    masks: list[np.ndarray] = []
    language, scope = filters.get("language"), filters.get("scope")
    if _auto_include(filters, taxonomy_keys):
        sdk, guide = equals("scope", SDK_SPECIFIC), equals("scope", GLOBAL_GUIDE)
        in_language = equals("language", language or "")
        neutral = equals("language", "")
        masks.append((sdk & in_language) | guide | (~sdk & ~guide & (neutral | in_language)))
    else:
        if language:
            masks.append(equals("language", language))
        if scope:
            masks.append(equals("scope", scope))
    masks.extend(equals(k, v) for k, v in filters.items() if k not in ("language", "scope"))
    if not masks:
        return None
    mask = masks[0]
    for other in masks[1:]:
        mask = mask & other
    return mask
