"""A type named exactly: ``components.DomainSchema`` asks for the section that lists its fields.

Why, for documentation in general: a reference documents a data type on a page of its own, named
after it (``domainschema.md``), with a title, an example and the section that defines it: the
table of its fields (``Fields``, ``Properties``, ``Attributes``). A reader who writes the type's
name exactly, alone or with some of its fields (``operations.TrackLeadRequestBody clickId
eventName``), asks for that definition; but the title is the shortest section of the page (the
name and nothing else) and the example repeats the field names as often as the table, and both,
like the table, have headings every type's page repeats (damped as generic), so they rank first.

A query's **type names** are its words that are a type's name as code writes it: a dotted name's
last part when it starts with a capital (``errors.NotFound``, ``components.Agent``) and a word of
two capitalised parts or more (``DomainSchema``); a single capitalised word alone is prose. Among
the best-scored rows (:data:`TYPE_DEPTH`), those whose file is named after one of them (its name
without separators and case) and whose own section is its fields' (the chunk id's last anchor is
one of :data:`DEFINITION_ANCHORS`) are multiplied by ``1 + weight``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from docs_mcp_core.search.coverage import best_chunk_ids

__all__ = ["DEFINITION_ANCHORS", "TYPE_DEPTH", "definition_factors", "type_names", "weigh_type_definitions"]

TYPE_DEPTH = 50  # best-scored rows looked at
DEFINITION_ANCHORS = frozenset({"fields", "properties", "attributes"})
_DOTTED_TYPE_RE = re.compile(r"[A-Za-z_][\w]*\.([A-Z][A-Za-z0-9]*)")  # errors.NotFound
_CAMEL_TYPE_RE = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+")  # DomainSchema, TrackLeadRequestBody
_SEPARATORS_RE = re.compile(r"[^a-z0-9]")


def type_names(text: str) -> frozenset[str]:
    """The type names of a query (see the module's docstring), lower-cased without separators."""
    names = {m.group(1) for m in _DOTTED_TYPE_RE.finditer(text)}
    names.update(w for w in re.findall(r"[A-Za-z0-9]+", text) if _CAMEL_TYPE_RE.fullmatch(w))
    return frozenset(_SEPARATORS_RE.sub("", n.lower()) for n in names)


def definition_factors(chunk_ids: Sequence[str], names: frozenset[str], weight: float) -> np.ndarray:
    """Per chunk id (of the best rows): ``1 + weight`` for the fields section of a page named after
    one of ``names``, else 1."""
    factors = np.ones(len(chunk_ids), dtype=np.float64)
    if not names:
        return factors
    for i, chunk_id in enumerate(chunk_ids):
        file, _, anchor = chunk_id.partition("#")
        if anchor.rsplit("/", 1)[-1] not in DEFINITION_ANCHORS:
            continue
        stem = file.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        if _SEPARATORS_RE.sub("", stem.lower()) in names:
            factors[i] = 1.0 + weight
    return factors


def weigh_type_definitions(
    rows: np.ndarray, score: np.ndarray, chunk_ids: Sequence[str], text: str, weight: float
) -> None:
    """Multiply ``score`` (of catalog positions ``rows``) in place by :func:`definition_factors` of
    the :data:`TYPE_DEPTH` best rows, for the query ``text``."""
    names = type_names(text)
    if not names or not len(rows):
        return
    top, ids = best_chunk_ids(rows, score, chunk_ids, TYPE_DEPTH)
    score[top] *= definition_factors(ids, names, weight)
