"""Taxonomy cues: the language or product a query names in its words instead of a filter.

Readers name the language or the product in the question (``retries in Go``, ``dub python create a
link``) rather than setting a filter. :func:`query_cues` finds the taxonomy values a query names for
the keys it does not filter on, and :func:`cue_factors` turns them into per-row multipliers: rows
that carry the named value gain, rows with another value of that key lose, rows without one are
left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

__all__ = ["CAPITALISED_ALIASES", "LANGUAGE_ALIASES", "cue_factors", "query_cues"]

# Other spellings of taxonomy values (programming languages), each with the values it may stand
# for, most likely first. A word that is not itself a value of a key names the first of these
# values that the key has, for any taxonomy key (a key without any of them: no cue), so ``js``
# names ``javascript`` where the index has it and ``typescript`` only where it has no javascript.
LANGUAGE_ALIASES: dict[str, tuple[str, ...]] = {
    "ts": ("typescript",),
    "javascript": ("typescript",),
    "js": ("javascript", "typescript"),
    "node": ("javascript", "typescript"),
    "nodejs": ("javascript", "typescript"),
    "golang": ("go",),
    "py": ("python",),
    "python3": ("python",),
    "csharp": ("c#", "dotnet"),
    "c#": ("csharp", "dotnet"),
    "dotnet": ("csharp", "c#"),
    # web frameworks name the language they are written in (``from my Django app``)
    "django": ("python",),
    "fastapi": ("python",),
    "flask": ("python",),
    "express": ("javascript", "typescript"),
    "expressjs": ("javascript", "typescript"),
    "react": ("javascript", "typescript"),
    "nextjs": ("javascript", "typescript"),
    "nestjs": ("typescript", "javascript"),
    "rails": ("ruby",),
    "laravel": ("php",),
}
# aliases that are also ordinary words ("delete a node"): they count only when capitalised ("Node")
CAPITALISED_ALIASES = frozenset({"node", "flask", "express", "react", "rails"})

_WORD_RE = re.compile(r"[A-Za-z0-9]+")


def query_cues(
    words: Sequence[str], taxonomy: Mapping[str, Sequence[str]], filtered: Iterable[str]
) -> dict[str, str]:
    """Taxonomy values named by a query for keys that are not filtered; ``words`` are the query's
    words as written (:attr:`docs_mcp_core.search.query.Query.words`: runs of ASCII letters and
    digits, ``C#`` and ``C++`` kept whole).

    A word names a value it spells (case-insensitively) or, through :data:`LANGUAGE_ALIASES`, the
    first of its alias's values that the key has. Values of one or two letters and digits (``go``)
    and the aliases in :data:`CAPITALISED_ALIASES` (``node``) only count when written with a
    capital (``Go``, ``Node``), so that ordinary words are not mistaken for them.
    """
    skip = set(filtered)
    raw_words = list(words)
    lower_words = [w.lower() for w in raw_words]
    lowered = " ".join(lower_words)
    cues: dict[str, str] = {}
    for key, values in taxonomy.items():
        if key in skip:
            continue
        value_set = {v.lower(): v for v in values}
        found: str | None = None
        for raw, word in zip(raw_words, lower_words, strict=True):
            target = word if word in value_set else _alias_target(word, value_set)
            if target is None:
                continue
            capital = raw[:1].isupper()
            if not capital and (
                (len(target) <= 2 and target.isalnum()) or (target != word and word in CAPITALISED_ALIASES)
            ):
                continue
            found = value_set[target]
            break
        if found is None:
            for low, original in value_set.items():
                if ("-" in low or " " in low) and " ".join(_WORD_RE.findall(low)) in lowered:
                    found = original
                    break
        if found is not None:
            cues[key] = found
    return cues


def _alias_target(word: str, value_set: Mapping[str, str]) -> str | None:
    """The first value ``word`` may stand for (:data:`LANGUAGE_ALIASES`) that ``value_set`` has."""
    return next((v for v in LANGUAGE_ALIASES.get(word, ()) if v in value_set), None)


def cue_factors(
    rows: np.ndarray,
    cues: Mapping[str, str],
    codes: Callable[[str, str], tuple[np.ndarray, int] | None],
    weight: float,
) -> np.ndarray:
    """Per-row multiplier of the query's taxonomy ``cues``: ``1 + weight`` for each cue a row
    carries, ``1 / (1 + weight)`` for each cue whose key the row has another value for, 1 for a
    row without a value for the key. ``codes(key, value)`` is every row's code for ``key`` and the
    code of ``value`` (``None`` when the key is not in the catalog; a code below 0 is no value)."""
    up = 1 + weight
    factor = np.ones(len(rows), dtype=np.float64)
    for key, value in cues.items():
        found = codes(key, value)
        if found is None:
            continue
        all_codes, code = found
        have = all_codes[rows]
        factor = np.where(have == code, factor * up, np.where(have >= 0, factor / up, factor))
    return factor
