"""Query-term coverage: how many of the question's words a chunk holds, among the best rows.

The default ranking multiplies each of the :data:`COVERAGE_DEPTH` best-scored rows that the match
leg found by :func:`coverage_factor`: the square root of the share of the query's coverage terms
(:attr:`~docs_mcp_core.search.query.Query.coverage_terms`) found at the start of a word of the row's
heading, breadcrumb, path and the start of its text (:func:`coverage_texts`), smoothed so that it
is never 0. A chunk that answers the whole question outranks one that repeats one of its words.

Two more multipliers read the names of the same best rows against the query's words: the rows a
contrast names (:func:`neighbour_factors`: ``..., not the pending applications``) are damped, and
for a query that asks for one environment variable the rows headed by a variable's name are
raised (:func:`variable_factors`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from docs_mcp_core.anchors import is_constant_name
from docs_mcp_core.search.intent import is_action_word
from docs_mcp_core.search.row_catalog import members
from docs_mcp_core.search.rows import RowReader

__all__ = [
    "COVERAGE_DEPTH",
    "COVERAGE_TEXT_CHARS",
    "asks_for_variable",
    "best_chunk_ids",
    "best_rows",
    "coverage_factor",
    "coverage_rows",
    "coverage_texts",
    "neighbour_factors",
    "variable_factors",
    "weigh_neighbours",
    "weigh_variables",
]

COVERAGE_DEPTH = 50  # rows (best fused scores first) whose query-term coverage is measured
COVERAGE_TEXT_CHARS = 3000  # of a chunk's text: what a chunk is about comes first
COVERAGE_EXPONENT = 0.5
COVERAGE_SMOOTHING = 0.5
_COVERAGE_COLUMNS = ("heading", "breadcrumb", "filepath")  # and the text (RowReader.text_column)
BEST_ROWS_PARTITION = 8  # best_rows sorts every score up to this many times the depth, else partitions


def coverage_rows(rows: np.ndarray, score: np.ndarray, match_positions: np.ndarray, depth: int) -> np.ndarray:
    """Indices (into ``rows``) of the ``depth`` best-scored rows that the match leg found: the rows
    whose query-term coverage is measured (rows found by the vector leg alone keep their score)."""
    lexical = np.flatnonzero(members(rows, match_positions))
    return lexical[best_rows(score[lexical], depth)]


def best_rows(score: np.ndarray, depth: int) -> np.ndarray:
    """Indices of the ``depth`` best ``score`` values, best first (equal scores in index order): the
    rows a multiplier of the best rows looks at.

    A long ``score`` (the deep pool: thousands of rows) is cut first at its ``depth``-th best value
    by a partition, and only the values at or above it are sorted: the same indices as sorting
    every value, since they all reach that value and keep their index order among equals."""
    if len(score) > BEST_ROWS_PARTITION * depth > 0:
        cut = len(score) - depth
        at_least = np.flatnonzero(score >= np.partition(score, cut)[cut])
        return at_least[np.argsort(-score[at_least], kind="stable")[:depth]]
    return np.argsort(-score, kind="stable")[:depth]


def best_chunk_ids(
    rows: np.ndarray, score: np.ndarray, chunk_ids: Sequence[str], depth: int
) -> tuple[np.ndarray, list[str]]:
    """:func:`best_rows` of ``score`` (of catalog positions ``rows``) and their chunk ids: what a
    multiplier that reads the best rows' names looks at."""
    top = best_rows(score, depth)
    return top, [chunk_ids[int(p)] for p in rows[top].tolist()]


def coverage_factor(text: str, terms: Sequence[str], undo: bool = False) -> float:
    """Multiplier of a chunk whose lower-cased heading, breadcrumb, path and text are ``text``: the
    square root of the share of ``terms`` found at the start of a word (smoothed: never 0); with
    ``undo`` (a query that wants an operation undone), also after ``un`` (``snooze`` in ``unsnooze``)."""
    if not terms:
        return 1.0
    found = sum(1 for t in terms if _starts_a_word(text, t) or (undo and _starts_a_word(text, "un" + t)))
    share = (found + COVERAGE_SMOOTHING) / (len(terms) + COVERAGE_SMOOTHING)
    return float(share**COVERAGE_EXPONENT)


def _starts_a_word(text: str, term: str) -> bool:
    """Whether ``term`` occurs in ``text`` after a character that is not a letter or digit (or
    at the start): ``tag`` is in ``tags`` and ``list_tags``, not in ``stage``."""
    at = text.find(term)
    while at >= 0:
        if at == 0 or not text[at - 1].isalnum():
            return True
        at = text.find(term, at + 1)
    return False


async def coverage_texts(reader: RowReader, positions: np.ndarray) -> list[str]:
    """Lower-cased heading, breadcrumb, path and start of the text of the rows at ``positions``
    (what query-term coverage looks in)."""
    head, crumbs, path, text = await reader.values(positions, (*_COVERAGE_COLUMNS, reader.text_column))
    return [
        f"{h} {c} {p} {t[:COVERAGE_TEXT_CHARS]}".lower()
        for h, c, p, t in zip(head, crumbs, path, text, strict=True)
    ]


CONTRAST_INSIDE_CHARS = 6  # letters of a contrast word also looked for inside a compound name


async def neighbour_factors(
    reader: RowReader, positions: np.ndarray, contrast_terms: Sequence[str], weight: float
) -> np.ndarray:
    """``1 / (1 + weight)`` for the rows at ``positions`` whose heading, breadcrumb or path names a
    word of the contrast the query draws (``rename a folder, not a tag``: ``tags``; ``list the
    partners, not the pending applications``: ``partnerapplications``), else 1: the reader named
    that neighbour to rule it out. The words of the verb table are left to it: an action the
    reader rules out (``not a bulk update``, ``instead of updating each one``) is what the
    operation wanted is often named after (``updateMany``)."""
    factors = np.ones(len(positions), dtype=np.float64)
    contrast_terms = [t for t in contrast_terms if not is_action_word(t)]
    if not contrast_terms or not len(positions):
        return factors
    head, crumbs, path = await reader.values(positions, _COVERAGE_COLUMNS)
    for i, names in enumerate(f"{h} {c} {p}".lower() for h, c, p in zip(head, crumbs, path, strict=True)):
        if any(_names(names, t) for t in contrast_terms):
            factors[i] = 1.0 / (1.0 + weight)
    return factors


def _names(names: str, term: str) -> bool:
    """Whether ``term`` starts a word of ``names``, or, when it is long, stands inside one (a
    compound folder name: ``application`` in ``partnerapplications``)."""
    return _starts_a_word(names, term) or (len(term) >= CONTRAST_INSIDE_CHARS and term in names)


# one variable: "the environment variables uv reads" asks for the page that lists them
_ENV_WORDS = (("environment", "variable"), ("env", "var"))


def asks_for_variable(terms: Sequence[str]) -> bool:
    """Whether a query's lower-case ``terms`` ask for one environment variable (``environment
    variable for the cache directory``, ``env var to skip syncing``)."""
    pairs = set(itertools.pairwise(terms))
    return any(pair in pairs for pair in _ENV_WORDS) or "envvar" in terms


async def variable_factors(reader: RowReader, positions: np.ndarray, weight: float) -> np.ndarray:
    """``1 + weight`` for the rows at ``positions`` whose own heading is an environment variable's
    name (``UV_CACHE_DIR``), else 1: a reader who asks for the variable wants its definition, not
    the option or the guide that the rest of the question names as well."""
    factors = np.ones(len(positions), dtype=np.float64)
    if not len(positions):
        return factors
    (heads,) = await reader.values(positions, ("heading",))
    for i, heading in enumerate(heads):
        if is_constant_name(heading.strip().strip("`")):
            factors[i] = 1.0 + weight
    return factors


async def weigh_neighbours(
    reader: RowReader,
    rows: np.ndarray,
    score: np.ndarray,
    matched: np.ndarray,
    contrast_terms: Sequence[str],
    weight: float,
) -> None:
    """Multiply ``score`` (of catalog positions ``rows``) in place by :func:`neighbour_factors` of
    the best rows with a full-text match (``matched``), for the query's ``contrast_terms``."""
    top = coverage_rows(rows, score, matched, COVERAGE_DEPTH)
    score[top] *= await neighbour_factors(reader, rows[top], contrast_terms, weight)


async def weigh_variables(
    reader: RowReader, rows: np.ndarray, score: np.ndarray, matched: np.ndarray, weight: float
) -> None:
    """Multiply ``score`` (of catalog positions ``rows``) in place by :func:`variable_factors` of
    the best rows with a full-text match (``matched``)."""
    top = coverage_rows(rows, score, matched, COVERAGE_DEPTH)
    score[top] *= await variable_factors(reader, rows[top], weight)
