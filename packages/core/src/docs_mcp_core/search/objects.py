"""The object of the action: which resource's operation a question asks for.

Why, for documentation in general: a reference documents an operation on its resource's page
(``libraries`` → ``delete``, ``documents`` → ``delete``), and a reader names the resource as the
object of the verb (``delete an entire library together with all of its documents``). The other
nouns of the question (``documents``) name related resources that the lexical legs and coverage
count alike, so the neighbour's operation of the same name ties with the one wanted. For a query
that names an action (:mod:`.intent`'s verb table), the operations among the best rows whose page
the object names are multiplied by ``1 + weight``.

The object is read without a parser: after the query's first word of the verb table (not a
quantifier such as ``many``; the verb words right after it are skipped: ``bulk delete``), the words
up to the first that ends a noun phrase (a preposition other than ``of``, a conjunction, a pronoun,
a relative word), a clause mark (``,;:()``) or another verb; determiners and quantifiers are
skipped. A gerund right after the verb (``stop logging``) is an action, and gives no object. A run of
one to three adjacent words of the phrase, joined and stemmed, names a page when a stemmed name of
the page (:func:`~docs_mcp_core.search.topics.page_names`: its file or folder name, its title, the
title's last dotted part) is that stem or, for a stem of four letters or more, starts with it (a
compound page name: ``translationsmaster`` for ``translations``); when no page is so named, a
compound page name that ends with it names it too (``timeshift`` for ``shift``, both parts of four
letters or more: references name a resource by a compound whose last word is the reader's). The runs that end at the
phrase's last word, its head noun, come first: ``fetch one calendar event`` wants the ``event``
page's operation, not the ``calendar`` page's same operation; the other runs count only when no
operation among the best rows is on a page the head names. An operation is a section whose
own heading is an operation's name: one word that starts in lower case (``delete``, ``createMany``),
not prose or a title (``Usage``, ``Setup``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

import numpy as np

from docs_mcp_core.search.analyzer import analyze_words
from docs_mcp_core.search.coverage import COVERAGE_DEPTH, best_rows
from docs_mcp_core.search.intent import PHRASAL_VERBS, VERB_GROUPS
from docs_mcp_core.search.query import STOP_WORDS
from docs_mcp_core.search.rows import RowReader
from docs_mcp_core.search.subsections import is_operation_heading
from docs_mcp_core.search.topics import page_names

__all__ = ["OBJECT_MAX_WORDS", "PREFIX_MIN_CHARS", "object_factors", "object_names", "weigh_objects"]

OBJECT_MAX_WORDS = 6  # words of an object phrase looked at
PREFIX_MIN_CHARS = 4  # letters of a name that may name a compound page name by its start
_RUN = 3  # words of a run that may name a page
_VERBS = frozenset().union(*VERB_GROUPS)
_PARTICLES = frozenset({"up", "rid", "down"})  # of phrasal verbs: ``set up``, ``get rid of``
# Words that end a noun phrase: prepositions (``of`` continues it: ``all of their commissions``),
# conjunctions, pronouns, relative and subordinating words.
_ENDS = frozenset(
    "to from in into for with by on at under over without through via as across between inside "  # noqa: SIM905
    "onto per within about after before during until since while when where whenever if unless "
    "so because and or but then that which who whose whom than like using including together out off "
    "away i you we they he she it".split()
)
# Determiners and quantifiers inside an object phrase (``an entire library``, ``all of their
# commissions``), and the tails of contractions (``I've``): skipped.
_QUANTIFIERS = frozenset({"all", "every", "many", "multiple", "several", "new", "single", "one"})
_SKIP = _QUANTIFIERS | frozenset(
    "its our their his her any some each entire whole both another other own ve ll re".split()  # noqa: SIM905
)
_TOKEN_RE = re.compile(r"[a-z0-9]+|[,;:()\[\]!?]")


def object_names(focus: str) -> list[list[str]]:
    """Stems of the page names the object of ``focus``'s first action may be (runs of one to
    three adjacent words of the object phrase, joined), most specific first: the runs that end at
    the phrase's last word (its head noun: ``calendar event`` is an event), then every run; empty
    when it names no action."""
    tokens = _TOKEN_RE.findall(focus.lower())
    start = next((i for i, t in enumerate(tokens) if t in _VERBS and t not in _QUANTIFIERS), None)
    if start is None:
        return []
    i = start + 1
    while i < len(tokens) and (
        tokens[i] in _VERBS or (tokens[i] in _PARTICLES and (tokens[i - 1], tokens[i]) in PHRASAL_VERBS)
    ):
        i += 1
    if i < len(tokens) and tokens[i] == "of" and tokens[i - 1] == "rid":  # get rid of
        i += 1
    if i < len(tokens) and tokens[i].endswith("ing"):  # ``stop logging``: an action, not a thing
        return []
    runs: set[str] = set()
    run: list[str] = []
    for count, token in enumerate(tokens[i:]):
        if not token.isalnum() or token in _ENDS or count >= OBJECT_MAX_WORDS:
            break
        if token in _VERBS and token not in _QUANTIFIERS:
            break
        if token in STOP_WORDS or token in _SKIP:  # a determiner, a quantifier: the run starts again
            run = []
            continue
        run.append(token)
        runs.update(_ending_runs(run))
    every = _stems(runs)
    head = _stems(_ending_runs(run))
    return [head, every] if head and head != every else [every] if every else []


def _ending_runs(run: Sequence[str]) -> set[str]:
    """The runs of one to three words of ``run`` that end at its last word, each joined."""
    return {"".join(run[a:]) for a in range(max(0, len(run) - _RUN), len(run))}


def _stems(runs: set[str]) -> list[str]:
    return sorted({stem for stem in analyze_words(sorted(runs)) if stem})


@functools.lru_cache(maxsize=1 << 14)
def _page_stems(filepath: str, breadcrumb: str) -> tuple[str, ...]:
    """The stems of a page's names (:func:`~docs_mcp_core.search.topics.page_names`)."""
    return tuple(analyze_words(sorted(page_names(filepath, breadcrumb))))


def _names(page: str, name: str) -> bool:
    """Whether the stem of a page's name is ``name`` or starts with it (a compound page name:
    ``translationsmaster`` for ``translations``), when ``name`` has four letters or more."""
    return page == name or (len(name) >= PREFIX_MIN_CHARS and page.startswith(name))


def _ends(page: str, name: str) -> bool:
    """Whether the stem of a page's name is a compound that ends with ``name`` (``timeshift`` for
    ``shift``), both parts of four letters or more."""
    return len(name) >= 4 and page.endswith(name) and len(page) - len(name) >= 4


async def object_factors(
    reader: RowReader, positions: np.ndarray, names: Sequence[Sequence[str]], weight: float
) -> np.ndarray:
    """``1 + weight`` for the rows at ``positions`` that are an operation (their own heading is an
    operation's name) on a page a name of ``names`` (:func:`object_names`) names, else 1: the names
    of the first group that names the page of one of those operations."""
    factors = np.ones(len(positions), dtype=np.float64)
    if not names or not len(positions):
        return factors
    heads, crumbs, paths = await reader.values(positions, ("heading", "breadcrumb", "filepath"))
    # prose, a title: not an operation's name
    operations = [i for i, head in enumerate(heads) if is_operation_heading(head)]
    for group in names:
        for named in (_names, _ends):  # a compound that ends with a name only when none names a page
            for i in operations:
                if any(named(stem, name) for stem in _page_stems(paths[i], crumbs[i]) for name in group):
                    factors[i] = 1.0 + weight
            if (factors > 1.0).any():
                return factors
    return factors


async def weigh_objects(
    reader: RowReader, rows: np.ndarray, score: np.ndarray, focus: str, weight: float
) -> None:
    """Multiply ``score`` (of catalog positions ``rows``) in place by :func:`object_factors` of the
    best rows, for the object the query's ``focus`` names (nothing when it names none)."""
    names = object_names(focus)
    if names:
        top = best_rows(score, COVERAGE_DEPTH)
        score[top] *= await object_factors(reader, rows[top], names, weight)
