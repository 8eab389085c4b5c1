"""Taxonomy filters: which filters a request may use, and the rule they apply, in three forms.

:func:`active_filters` is the one place that decides which filters of a request apply and refuses
unknown keys (:func:`check_filter_values` also refuses values no chunk has, for front ends that
want that). The rule itself has three forms here: SQL for LanceDB, a test of one chunk's metadata,
and a vectorised mask over every row. The auto-include rule
(:class:`~docs_mcp_core.metadata.AutoInclude`) is the original's unless the index's manifest
declared another or none: when ``language`` is filtered and ``scope`` is not, ``sdk-specific``
chunks of that language, every ``global-guide`` chunk, and chunks of any other scope that are
language-neutral or in that language all match.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np

from docs_mcp_core.errors import SearchError, shown
from docs_mcp_core.index.table import quote_identifier, quote_string
from docs_mcp_core.metadata import ORIGINAL_AUTO_INCLUDE, AutoInclude


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
            raise SearchError(
                f"Unknown filter '{shown(key)}'. Valid filters: {', '.join(taxonomy_keys) or 'none'}"
            )
    return active


def check_filter_values(filters: Mapping[str, str], taxonomy: Mapping[str, Sequence[str]]) -> None:
    """Raise :class:`SearchError` for a filter value that no chunk of the index carries."""
    for key, value in filters.items():
        allowed = taxonomy.get(key)
        if allowed is not None and value not in allowed:
            raise SearchError(
                f"Invalid value '{value}' for filter '{key}'. Valid values: {', '.join(allowed)}"
            )


def _auto_include(
    filters: Mapping[str, str], taxonomy_keys: Sequence[str] | None, rule: AutoInclude | None
) -> AutoInclude | None:
    """``rule`` when it applies to ``filters``: its key filtered, its scope key not, both keys in the
    taxonomy (``None`` taxonomy: assumed)."""
    if rule is None:
        return None
    keys = (rule.key, rule.scope_key)
    if taxonomy_keys is not None and not all(k in taxonomy_keys for k in keys):
        return None
    return rule if filters.get(rule.key) and not filters.get(rule.scope_key) else None


def _first_keys(rule: AutoInclude | None) -> tuple[str, ...]:
    """The keys the rule is about, tested first (the original's order: language, then scope)."""
    return (rule.key, rule.scope_key) if rule is not None else ()


def where_clause(
    filters: Mapping[str, str],
    taxonomy_keys: Sequence[str] | None = None,
    rule: AutoInclude | None = ORIGINAL_AUTO_INCLUDE,
) -> str | None:
    """SQL WHERE clause for ``filters`` (None when there is nothing to filter)."""
    clauses: list[str] = []
    auto = _auto_include(filters, taxonomy_keys, rule)
    first = _first_keys(rule)
    if auto is not None:
        value = quote_string(filters[auto.key])
        s, k = quote_identifier(auto.scope_key), quote_identifier(auto.key)
        specific, shared = quote_string(auto.specific), quote_string(auto.shared)
        clauses.append(
            f"(({s} = {specific} AND {k} = {value}) OR {s} = {shared} OR "
            f"({s} <> {specific} AND {s} <> {shared} AND ({k} = '' OR {k} = {value})))"
        )
    else:
        clauses.extend(f"{quote_identifier(k)} = {quote_string(filters[k])}" for k in first if filters.get(k))
    for key, value in filters.items():
        if key not in first:
            clauses.append(f"{quote_identifier(key)} = {quote_string(value)}")
    return " AND ".join(clauses) if clauses else None


def matches_filters(
    metadata: Mapping[str, str],
    filters: Mapping[str, str],
    taxonomy_keys: Sequence[str] | None = None,
    rule: AutoInclude | None = ORIGINAL_AUTO_INCLUDE,
) -> bool:
    """Whether a chunk with ``metadata`` passes ``filters`` (same semantics as :func:`where_clause`)."""
    auto = _auto_include(filters, taxonomy_keys, rule)
    first = _first_keys(rule)
    if auto is not None:
        s, have, value = metadata.get(auto.scope_key, ""), metadata.get(auto.key, ""), filters[auto.key]
        ok = (
            (s == auto.specific and have == value)
            or s == auto.shared
            or (s not in (auto.specific, auto.shared) and have in ("", value))
        )
        if not ok:
            return False
    elif any(filters.get(k) and metadata.get(k, "") != filters[k] for k in first):
        return False
    return all(metadata.get(k, "") == v for k, v in filters.items() if k not in first)


def filter_mask(
    filters: Mapping[str, str],
    taxonomy_keys: Sequence[str] | None,
    equals: Callable[[str, str], np.ndarray],
    rule: AutoInclude | None = ORIGINAL_AUTO_INCLUDE,
) -> np.ndarray | None:
    """Boolean mask of the rows passing ``filters`` (same semantics as :func:`where_clause`).

    ``equals(key, value)`` is the mask of rows whose ``key`` is ``value`` (``""``: no value).
    None when nothing is filtered.
    """
    masks: list[np.ndarray] = []
    auto = _auto_include(filters, taxonomy_keys, rule)
    first = _first_keys(rule)
    if auto is not None:
        specific, shared = equals(auto.scope_key, auto.specific), equals(auto.scope_key, auto.shared)
        in_value = equals(auto.key, filters[auto.key])
        neutral = equals(auto.key, "")
        masks.append((specific & in_value) | shared | (~specific & ~shared & (neutral | in_value)))
    else:
        masks.extend(equals(k, filters[k]) for k in first if filters.get(k))
    masks.extend(equals(k, v) for k, v in filters.items() if k not in first)
    if not masks:
        return None
    mask = masks[0]
    for other in masks[1:]:
        mask = mask & other
    return mask


def admitted_by_rule(
    rows: np.ndarray,
    filters: Mapping[str, str],
    taxonomy_keys: Sequence[str],
    codes: Callable[[str, str], tuple[np.ndarray, int] | None],
    rule: AutoInclude | None,
) -> np.ndarray | None:
    """Which of ``rows`` (that pass ``filters``) pass only by the auto-include rule: their value
    for the rule's key is not the filtered one (a ``global-guide`` chunk, or one of no language,
    under a ``language`` filter). None when the rule does not apply to ``filters``.

    ``codes(key, value)`` is every row's code for ``key`` and the code of ``value``
    (:meth:`~docs_mcp_core.search.row_catalog.RowCatalog.codes`)."""
    auto = _auto_include(filters, taxonomy_keys, rule)
    found = codes(auto.key, filters[auto.key]) if auto is not None else None
    if found is None:
        return None
    all_codes, code = found
    return all_codes[rows] != code


@dataclass(frozen=True, eq=False)  # compared as objects: its arrays have no one truth value
class KeptRows:
    """The rows a filter's mask keeps, also as runs of adjacent rows (``edges``: each run's first
    row, then the row after its last). A filter keeps a file's rows together and the rows are in
    path order, so the runs are few (30 for ``language`` on ten copies of ``sdk-docs``, 10 for
    ``language`` + ``service``), and whether any of a term's ascending postings is kept takes one
    binary search per edge instead of a look at each posting (2.4 million for a product's name
    over the three match columns at ten copies)."""

    mask: np.ndarray
    edges: np.ndarray
    # answers about the filter's rows remembered by whoever asks them, under its own keys
    answers: dict[tuple[object, ...], bool] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, mask: np.ndarray) -> KeptRows:
        return cls(mask, np.flatnonzero(np.diff(mask.view(np.int8), prepend=0, append=0)))

    def any_of(self, rows: np.ndarray) -> bool:
        """Whether the filter keeps any of ``rows`` (ascending)."""
        if len(self.edges) * len(rows).bit_length() >= 2 * len(rows):  # few rows: look at each
            return bool(self.mask[rows].any())
        at = np.searchsorted(rows, self.edges)  # a run holds a row when its end lies past its start
        return bool((at[1::2] > at[0::2]).any())


T = TypeVar("T")


class MaskMemo(Generic[T]):
    """What is derived from a filter's mask, made once per mask array: a filter is one array for
    all its searches (:meth:`~docs_mcp_core.search.retrieval.Retrieval.prefilter` memoises it).
    Kept by the array's identity, with the array held so that its id is not reused, for at most
    ``size`` masks, then forgotten at once."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._found: dict[int, tuple[np.ndarray, T]] = {}

    def get(self, mask: np.ndarray, make: Callable[[np.ndarray], T]) -> T:
        found = self._found.get(id(mask))
        if found is not None and found[0] is mask:
            return found[1]
        if len(self._found) >= self._size:
            self._found.clear()
        value = make(mask)
        self._found[id(mask)] = (mask, value)
        return value


_KEPT: MaskMemo[KeptRows] = MaskMemo(32)  # runs (and answers, see prefixes.written) of 32 masks


def kept_rows(mask: np.ndarray) -> KeptRows:
    """The :class:`KeptRows` of ``mask``, made once per mask array (:class:`MaskMemo`)."""
    return _KEPT.get(mask, KeptRows.of)
