"""The text analyzer of LanceDB's default full-text index, reproduced in Python.

:mod:`docs_mcp_core.search.lexical_index` scores the ranked search columns in memory. Its scores must
agree with the full-text indexes the build writes, so it analyzes text exactly as those indexes do
(LanceDB's ``FTS()`` defaults, the ``simple`` tokenizer for English):

1. split on every character that is not a letter or a digit;
2. lower-case;
3. drop tokens of 40 bytes or more;
4. stem with Snowball's English (Porter 2) stemmer;
5. drop stop words, compared with the *stem* ("does" becomes "doe" and survives): NLTK's English
   list in LanceDB 0.40 (:data:`LANCEDB_STOP_WORDS`), Lucene's shorter one in 0.26
   (:data:`LANCEDB_0_26_STOP_WORDS`), which the indexes of ``content_text`` and ``heading`` drop in
   every table docs-mcp builds (:data:`ORIGINAL_TEXT_STOP_WORDS`);
6. fold accents to ASCII ("résumé" stems to "résumé", then folds to "resume").

``tests/core/test_analyzer.py`` checks this against LanceDB's own analysis of every word of the
example corpus and of the SDK corpus when it is present.

The two stop-word lists here are LanceDB's, copied so that scores can be reproduced; they are not
a judgement of which words matter (that list is :data:`docs_mcp_core.search.query.STOP_WORDS`) and
must stay exactly as the LanceDB versions have them.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import Stemmer

if TYPE_CHECKING:
    import pyarrow as pa


class _Compute:
    """``pyarrow.compute``, imported on first use: only deriving from a table's columns needs it,
    and importing it takes longer than the rest of PyArrow, which a server opening an index from
    its derived files would pay before its first answer."""

    def __getattr__(self, name: str) -> Any:
        import pyarrow.compute

        return getattr(pyarrow.compute, name)


pc: Any = _Compute()  # typed Any: the stubs lack most compute functions

MAX_TOKEN_BYTES = 40  # tokens of this many UTF-8 bytes or more are dropped
MAX_PHRASE_SPAN = 4096  # words a phrase may span (keys of neighbouring rows never meet below it)

# Any run of characters that are neither letters nor digits separates tokens. Columns are split by
# pyarrow (RE2 syntax); a single query by Python's ``re``, where ``[^\W_]`` is exactly the letters
# and digits (``str.isalnum``) too, without RE2's cost of compiling the pattern on every call.
SEPARATOR = r"[^\p{L}\p{N}]+"
WORD = re.compile(r"[^\W_]+")  # one token, before lower-casing

# The English stop words of LanceDB 0.40's analyzer (NLTK's list), matched against stems.
LANCEDB_STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "ain",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "aren",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "couldn",
        "d",
        "did",
        "didn",
        "do",
        "does",
        "doesn",
        "doing",
        "don",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "hadn",
        "has",
        "hasn",
        "have",
        "haven",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "isn",
        "it",
        "its",
        "itself",
        "just",
        "ll",
        "m",
        "ma",
        "me",
        "mightn",
        "more",
        "most",
        "mustn",
        "my",
        "myself",
        "needn",
        "no",
        "nor",
        "not",
        "now",
        "o",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "re",
        "s",
        "same",
        "shan",
        "she",
        "should",
        "shouldn",
        "so",
        "some",
        "such",
        "t",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "ve",
        "very",
        "was",
        "wasn",
        "we",
        "were",
        "weren",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "won",
        "wouldn",
        "y",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
    ]
)

# The English stop words of the LanceDB the original docs-mcp indexed with (@lancedb/lancedb 0.26.2):
# Lucene's list. Measured against that library: with these and LanceDB's other defaults, the
# document lengths and scores of its full-text index are reproduced exactly (lexical_index.py).
LANCEDB_0_26_STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)

# The table's full-text indexes of the two columns the original's queries read drop the original's
# stop words (the build passes them as the indexes' custom stop words), so that its LanceDB finds
# and scores on an index we build what it finds on its own build; the search columns, which only
# docs-mcp reads, keep LanceDB 0.40's. The default ranking still drops LanceDB 0.40's words from a
# query (docs/ranking.md).
ORIGINAL_TEXT_COLUMNS = ("content_text", "heading")
ORIGINAL_TEXT_STOP_WORDS = LANCEDB_0_26_STOP_WORDS

_local = threading.local()  # a PyStemmer instance must not be shared between threads


def _stemmer() -> Any:
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return stemmer


def analyze_words(words: Sequence[str], stop_words: frozenset[str] = LANCEDB_STOP_WORDS) -> list[str]:
    """The index term of each lower-cased word, ``""`` for a word the index drops."""
    stems = _stemmer().stemWords(list(words))
    terms: list[str] = []
    for word, stem in zip(words, stems, strict=True):
        if len(word.encode("utf-8")) >= MAX_TOKEN_BYTES or stem in stop_words:
            terms.append("")
        elif stem.isascii():
            terms.append(stem)
        else:
            terms.append(_fold(stem))
    return terms


def split_words(texts: pa.Array | pa.ChunkedArray) -> pa.ListArray:
    """Lower-cased words of every text, one list per text (null texts give empty lists)."""
    import pyarrow as pa

    column = texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else texts
    column = pc.fill_null(column, "")
    words = pc.split_pattern_regex(pc.utf8_lower(column), pattern=SEPARATOR)
    return words  # type: ignore[no-any-return]


def analyze(text: str, stop_words: frozenset[str] = LANCEDB_STOP_WORDS) -> list[str]:
    """The index terms of ``text``, in order (dropped tokens left out)."""
    return [t for t in analyze_words(WORD.findall(text.lower()), stop_words) if t]


def analyze_positions(text: str, stop_words: frozenset[str] = LANCEDB_STOP_WORDS) -> list[tuple[str, int]]:
    """The index terms of ``text`` with their word positions, counted from the first term as
    LanceDB counts them: words dropped after it leave gaps (a phrase's terms must keep them)."""
    terms = analyze_words(WORD.findall(text.lower()), stop_words)
    found = [(t, i) for i, t in enumerate(terms) if t]
    return [(t, i - found[0][1]) for t, i in found] if found else []


# letters that have no decomposition but that ASCII folding still maps
_FOLDED = {"ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i"}


def _fold(stem: str) -> str:
    """Accented letters to their ASCII base; characters with no ASCII form (CJK...) stay as they are."""
    out: list[str] = []
    for char in stem:
        if char.isascii():
            out.append(char)
            continue
        base = "".join(c for c in unicodedata.normalize("NFKD", char) if c.isascii())
        out.append(base or _FOLDED.get(char, char))
    return "".join(out)


__all__ = [
    "LANCEDB_0_26_STOP_WORDS",
    "LANCEDB_STOP_WORDS",
    "MAX_PHRASE_SPAN",
    "MAX_TOKEN_BYTES",
    "ORIGINAL_TEXT_COLUMNS",
    "ORIGINAL_TEXT_STOP_WORDS",
    "SEPARATOR",
    "WORD",
    "analyze",
    "analyze_positions",
    "analyze_words",
    "split_words",
]
