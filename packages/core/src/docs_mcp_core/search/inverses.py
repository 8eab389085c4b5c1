"""Inverse operations: a reader who wants to undo a state names the state, the docs name its undoing.

API references pair an operation with the one that undoes it and name the second with ``un``
(``snooze`` and ``unsnooze``, ``archiveWorkflow`` and ``unarchiveWorkflow``, ``subscribe`` and
``unsubscribe``); readers say what they want undone in their own words: "bring a snoozed item
back", "remove a workflow's schedule". When the default ranking reads an undoing action in the
query (the undo, delete or cancel groups of :data:`~docs_mcp_core.search.intent.VERB_GROUPS`), each
other word of the query whose ``un`` form is a term that an admitted row writes in a match column
is also searched as that term, as an alternative to the word (:meth:`.Compounds.alternatives`: a
row that writes ``unsnooze`` scores what ``snoozed`` would score there). The intent signal then
prefers the operations whose name undoes (:func:`~docs_mcp_core.search.intent.heading_verbs`).
Linear in the query's words; only terms are looked up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from docs_mcp_core.search.analyzer import LANCEDB_STOP_WORDS, analyze_words
from docs_mcp_core.search.compounds import Join
from docs_mcp_core.search.intent import UNDOING_GROUPS, query_verbs
from docs_mcp_core.search.lexical_index import FieldIndex
from docs_mcp_core.search.prefixes import written
from docs_mcp_core.search.query import STOP_WORDS

__all__ = ["INVERSE_MIN_CHARS", "inverse_joins"]

INVERSE_MIN_CHARS = 3  # letters of a word whose ``un`` form is looked up


def inverse_joins(
    words: Sequence[str],
    fields: Mapping[str, FieldIndex],
    mask: np.ndarray | None,
    stop_words: frozenset[str] = LANCEDB_STOP_WORDS,
) -> list[Join]:
    """The ``un`` forms of the query's lower-case ``words`` that admitted rows write, as
    alternatives to the words, when the query says an undoing action (else none)."""
    if not query_verbs(words) & UNDOING_GROUPS:
        return []
    plain = [
        w
        for w in dict.fromkeys(words)
        if len(w) >= INVERSE_MIN_CHARS and w.isalpha() and w not in STOP_WORDS and not w.startswith("un")
    ]
    if not plain:
        return []
    own = analyze_words(plain, stop_words)
    # the stemmer reads "un" + a word apart from the word (unarchive -> unarch, archived -> archiv),
    # so the ``un`` form is looked for written from the word, its stem and its stem + e
    forms = [
        (part, f"un{form}")
        for w, part in zip(plain, own, strict=True)
        if part
        for form in (w, part, part + "e")
    ]
    undone = analyze_words([form for _, form in forms], stop_words)
    found: dict[str, Join] = {}
    for (part, _), term in zip(forms, undone, strict=True):
        if term and term not in found and written(fields.values(), term, mask):
            found[term] = Join(term, (part,))
    return list(found.values())
