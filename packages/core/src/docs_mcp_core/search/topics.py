"""The topic signal's names: which page a short query names, and how its introduction is raised.

A reader who types only a topic's name (``webhooks``, ``TLS certificates``, ``HMR API``) wants the page
about it from its start. A page is named by its file (the folder for ``README``/``index``) and its title
(:func:`page_names`); a query names one when its words, without stop words and the taxonomy values it
says, join into such a name (:func:`topic_key`). :class:`~.intent.IntentIndex` keeps each name's
introductions; :func:`neutral_introductions` keeps those a request without a language wants and
:func:`topic_boost` raises them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence

import numpy as np

from docs_mcp_core.search.cues import LANGUAGE_ALIASES
from docs_mcp_core.search.introductions import page_name
from docs_mcp_core.search.query import STOP_WORDS
from docs_mcp_core.search.row_catalog import members

__all__ = [
    "TOPIC_MAX_WORDS",
    "TOPIC_QUALIFIERS",
    "neutral_introductions",
    "page_names",
    "topic_boost",
    "topic_key",
]

TOPIC_MAX_WORDS = 3  # a topic query names a page in at most this many words
TITLE_MAX_WORDS = 8  # ... or in more, up to this many, when they are a page's whole name
_WORD_RE = re.compile(r"[A-Za-z0-9]+")
_INDEX_STEMS = frozenset({"readme", "index", "_index"})


def page_names(filepath: str, breadcrumb: str) -> set[str]:
    """The names of a chunk's page: file stem (the folder for ``README``/``index``), title, and the
    title's last dotted part, each as one lower-case word without a plural ``s``."""
    parts = filepath.split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    names = {parts[-2] if stem.lower() in _INDEX_STEMS and len(parts) > 1 else stem}
    crumbs = breadcrumb.split(" > ")
    if len(crumbs) > 1 and crumbs[1].strip():  # the first crumb is the file's path
        title = crumbs[1]
        words = [w.lower() for w in _WORD_RE.findall(title) if w.lower() not in STOP_WORDS]
        names.update((title, re.split(r"[.:/]", title)[-1], "".join(words)))  # "Text to Speech": textspeech
        names.add("".join(dict.fromkeys(words)))  # each word once, as a query's: "pip and pip-tools"
    return {name for name in map(page_name, names) if name}


# Words that say what kind of answer is wanted, not which page: "folders docs", "the tools page",
# "about hooks", "subscribers overview", "how does caching work", "workspaces explained", "in the
# Python SDK" (which SDK, as a filter says)
TOPIC_QUALIFIERS = frozenset(
    "sdk sdks docs doc documentation overview about page pages intro introduction work works explain "  # noqa: SIM905
    "explained explanation guide tutorial info information".split()
)


def topic_key(
    terms: Sequence[str],
    named_values: Sequence[str],
    leave_out: Callable[[str], bool] | None = None,
    max_words: int = TOPIC_MAX_WORDS,
) -> str | None:
    """The page name a topic query asks for: its words (no stop words, none of the taxonomy
    ``named_values``, the query's cues and its filters' values, nor a language's alias of one:
    ``Node: webhooks`` under ``language=typescript``; nor those ``leave_out`` says, unless no
    other word is left) joined, without a plural ``s``; None when the query has more than
    ``max_words`` of them."""
    skip = {v.lower() for v in named_values}
    words = [
        t
        for t in terms
        if t not in STOP_WORDS and t not in skip and skip.isdisjoint(LANGUAGE_ALIASES.get(t, ()))
    ]
    if leave_out is not None:
        words = [t for t in words if not leave_out(t)] or words
    if not 1 <= len(words) <= max_words:
        return None
    return page_name("".join(words)) or None


def neutral_introductions(
    topic: np.ndarray, taxonomy: Mapping[str, tuple[np.ndarray, list[str]]], named: Collection[str]
) -> np.ndarray:
    """The introductions (catalog positions ``topic``) a topic query wants, given the taxonomy keys
    its request filters on or names a value of (``named``): for every other key, when some of the
    introductions carry a value for it and some carry none, those that carry none. A reader who
    names a topic without a language wants the page about it that is not one language's (a guide),
    not the reference of whichever language ranks first."""
    for key, (codes, _) in taxonomy.items():
        if len(topic) < 2 or key in named:
            continue
        valued = codes[topic] >= 0
        if valued.any() and not valued.all():
            topic = topic[~valued]
    return topic


def topic_boost(
    rows: np.ndarray,
    score: np.ndarray,
    prior: np.ndarray,
    topic: np.ndarray,
    weight: float,
    file_codes: np.ndarray | None = None,
) -> None:
    """Multiply, in place, the introductions (catalog positions ``topic``) among ``rows`` by
    ``1 + weight``, their static ``prior`` undone, each first raised to the best score among its page's
    ``rows`` (``file_codes``, by catalog position): the reader named the page, whose sections all say
    its name in their breadcrumbs and so outscore its opening, which says it once."""
    at = np.flatnonzero(members(rows, topic))
    if not len(at):
        return
    base = score[at] / prior[rows[at]]
    if file_codes is not None:
        pages, page_of = np.unique(file_codes[rows], return_inverse=True)
        best = np.full(len(pages), -np.inf)
        np.maximum.at(best, page_of, score)
        base = np.maximum(base, best[page_of[at]])
    score[at] = base * (1.0 + weight)
