"""One search request's query, read once: the text each leg searches, its words and its terms.

:meth:`Query.parse` makes the value once per request; every retrieval leg, the ranking signals and
the snippet take what they need from it, so the whole request agrees on what the query says:

* ``text``: the query as asked, trimmed. A cursor is signed for it and a zero-result hint quotes it.
* ``focus``: what the query asks for: ``text`` without the quotes around the whole of it
  (:func:`unquoted`), without a contrast it draws (``rename a folder, not a tag``, ``delete a batch
  job rather than cancel it``: :func:`drop_contrasts`) and without the section numbers of the
  manual pages it cites (``cargo-build(1)``: :func:`drop_man_sections`) when the ranking is the
  default one, else ``text``. Everything below is read from it.
* ``embedded``: what the vector legs embed: ``focus`` without the punctuation that closes it and
  the backticks of code spans.
* ``lexical``: what the full-text legs search: ``focus`` with NUL characters as spaces.
* ``match``: what the match leg searches: ``lexical`` without the quantifier of ``how many`` and
  ``how much``, followed by the parts of its compound identifiers (``createMany`` → ``create many``)
  when the ranking searches the identifier-aware columns (see :mod:`docs_mcp_core.ranking`), else
  ``lexical`` itself.
* ``expanded``: whether the match leg also searches identifiers by their parts, on both sides: the
  query's in ``match`` and the chunks' in the identifier-aware columns (so ``retry`` finds
  ``RetryConfig``).
* ``match_terms`` and ``phrase``: ``match`` and ``lexical`` as LanceDB's full-text analyzer reads
  them (:mod:`.analyzer`, with the stop words of the LanceDB version whose scores are reproduced):
  the terms the in-memory match and phrase legs look up.
* ``words``: the runs of ASCII letters and digits of ``text`` as written, ``C#`` and ``C++`` kept
  whole (taxonomy cues tell ``Go`` the language from ``go`` the verb).
* ``terms``: the runs of ASCII letters and digits of the lower-cased ``text``, each once, in order.
  :attr:`Query.key_terms` are the ones that say what is wanted (no :data:`STOP_WORDS`, no single
  letters: the snippet looks for them) and :attr:`Query.coverage_terms` the ones the coverage signal
  counts.

A query is refused (:class:`~docs_mcp_core.errors.SearchError`, the text a client sees) when it is
empty, longer than :data:`MAX_QUERY_CHARS` characters or has more than :data:`MAX_QUERY_TERMS` words
(runs of letters and digits, in any script). The checks come first and cost time linear in the
query's length, so a huge query is turned away before anything above reads it, and every part of a
search that reads a query reads at most that many words.

:data:`STOP_WORDS` is the one list of words that carry no meaning for ranking and snippets. The
full-text analyzer keeps its own lists (:mod:`.analyzer`): they are part of reproducing LanceDB's
scores and must stay exactly as LanceDB has them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from docs_mcp_core.anchors import (
    ANCHOR_MARK,
    PAGE_MARK,
    query_constants,
    query_key_in_bare_file,
    query_option_names,
    query_writes_a_key_shape,
)
from docs_mcp_core.errors import SearchError
from docs_mcp_core.ranking import expand_identifiers, identifier_parts
from docs_mcp_core.search.analyzer import LANCEDB_STOP_WORDS, WORD, analyze, analyze_positions, analyze_words
from docs_mcp_core.spellings import query_spellings

__all__ = [
    "COVERAGE_ENDINGS",
    "MAX_QUERY_CHARS",
    "MAX_QUERY_TERMS",
    "STOP_WORDS",
    "Query",
    "check_query",
    "contrast_pattern",
    "drop_contrasts",
    "drop_man_sections",
    "unquoted",
]

MAX_QUERY_CHARS = 2000  # characters of a query, after trimming
MAX_QUERY_TERMS = 64  # words of a query: runs of letters and digits (and their combining marks)
_QUERY_ADVICE = "search for the names and words that matter"
# Words that say nothing about which chunk is wanted (LanceDB's full-text search drops them too).
# Coverage also leaves out every word of one or two letters; snippets keep those that are not here
# (``go``, ``v2``, ``qr``).
STOP_WORDS = frozenset(
    "a an and are as at be by can do does for from how i if in is it me my of on or so the this "  # noqa: SIM905
    "that to we what when which with you your".split()
)
COVERAGE_ENDINGS = ("ing", "es", "ed", "s")  # cut from coverage terms: "tags" and "tag" are one word
_CASED_WORD_RE = re.compile(r"[A-Za-z0-9]+(?:#|\+\+)?")  # C# and C++ are words
_WORD_RE = re.compile(r"[a-z0-9]+")
_ANY_WORD_RE = re.compile(r"[^\W_]+")  # letters and digits of any script, as the analyzer splits words
# A contrast the reader draws with what they do not want: from its marker to the end of its clause.
_CONTRAST_MARKERS_RE = r"[,;(]\s*(?:but\s+)?not|\s+-+\s*not|\brather\s+than|\binstead\s+of"
# ``, not just the messages`` rules out the narrower neighbour and goes; ``not just X but also Y``
# adds to what is wanted and stays.
_NARROWER_GOES = r"(?!\s+(?:just|only)\b[^,;.)]*\b(?:but|also|as\s+well)\b)"
_NOT_JUST_STAYS = r"(?!\s+(?:just|only)\b)"


def contrast_pattern(*, narrower: bool = True) -> re.Pattern[str]:
    """The contrasts :func:`drop_contrasts` cuts; with ``narrower=False`` every ``not just X``
    clause stays (how contrasts were read before narrower neighbours: for the ablation)."""
    stays = _NARROWER_GOES if narrower else _NOT_JUST_STAYS
    return re.compile(rf"(?:{_CONTRAST_MARKERS_RE})\b{stays}[^,;.)]*", re.IGNORECASE)


_CONTRAST_RE = contrast_pattern()


# ``how many`` and ``how much`` ask for a count: the quantifier is no word of what is asked about
# (in references ``many`` names the batch operations, ``createMany``), so the match leg and coverage
# leave it out; the verb table still reads ``how many`` as a count (:func:`.intent.query_verbs`).
_HOW_MANY_RE = re.compile(r"\b(how\s+)(?:many|much)\b", re.IGNORECASE)
_CONTRAST_MARKERS = frozenset({"not", "rather", "than", "instead", "just", "only"})


def _cut_words(words: Iterable[str]) -> list[str]:
    """``words`` as coverage terms: no stop words, none of one or two characters, common English
    endings cut, each once."""
    found: dict[str, None] = {}
    for word in words:
        if len(word) <= 2 or word in STOP_WORDS:
            continue
        for ending in COVERAGE_ENDINGS:
            if word.endswith(ending) and len(word) - len(ending) >= 3:
                word = word[: -len(ending)]
                break
        found.setdefault(word, None)
    return list(found)


def drop_contrasts(text: str) -> str:
    """``text`` without the contrasts it draws with what is not wanted (``, not a tag``, ``rather
    than cancel it``, ``instead of listing links``), each cut from its marker to the end of its
    clause; ``text`` itself when nothing would be left. ``, not just the messages`` rules out the
    narrower neighbour and goes too; ``not just X but also Y`` asks for more and stays."""
    focus = _CONTRAST_RE.sub("", text).strip()  # read at call time: the ablation swaps it
    return focus if _ANY_WORD_RE.search(focus) else text


# A manual page cited with its section, ``cargo-build(1)`` or ``printf(3)``, names the page: the
# section number is no word of it (read as one, ``cargo-build(1)`` would spell a key ``cargo.build.1``).
_MAN_SECTION_RE = re.compile(r"(?<=[A-Za-z0-9_])\([1-9][a-z]{0,2}\)(?![\w(])")


def drop_man_sections(text: str) -> str:
    """``text`` without the section numbers of the manual pages it cites (``cargo-build(1)``:
    ``cargo-build``)."""
    return _MAN_SECTION_RE.sub("", text) if "(" in text else text


_CLOSING_PUNCTUATION = "?!.…"
_QUOTE_PAIRS = {'"': '"', "'": "'", "`": "`", "\u201c": "\u201d", "\u2018": "\u2019"}


def unquoted(text: str) -> str:
    """``text`` without the quotes around the whole of it (``"rename a tag, not a folder"``: its
    contrast is still one); ``text`` itself when it is not quoted whole."""
    bare = text.strip()
    core = bare.rstrip(_CLOSING_PUNCTUATION).rstrip()  # "vendoring"?
    if len(core) >= 2 and _QUOTE_PAIRS.get(core[0]) == core[-1] and core[1:-1].strip():
        return core[1:-1].strip()
    return text


def check_query(query: str | None) -> str:
    """``query`` trimmed; raises :class:`SearchError` when it is empty, longer than
    :data:`MAX_QUERY_CHARS` characters or has more than :data:`MAX_QUERY_TERMS` words."""
    text = (query or "").strip()
    if not text:
        raise SearchError("query is required")
    if len(text) > MAX_QUERY_CHARS:
        raise SearchError(
            f"query is too long: {len(text):,} characters, at most {MAX_QUERY_CHARS:,}; {_QUERY_ADVICE}"
        )
    words = _word_count(text)
    if words > MAX_QUERY_TERMS:
        raise SearchError(f"query has too many words: {words:,}, at most {MAX_QUERY_TERMS}; {_QUERY_ADVICE}")
    return text


def _word_count(text: str) -> int:
    """The words of ``text`` as its reader counts them: runs of letters, digits and combining marks
    (a Hindi vowel sign, an Arabic vowel mark, an accent written apart), in any script. Counted as
    the analyzer splits words, each mark split its word in two or three."""
    if text.isascii():
        return sum(1 for _ in _ANY_WORD_RE.finditer(text))
    import unicodedata

    count, in_word = 0, False
    for char in text:
        part = char.isalnum() or unicodedata.category(char).startswith("M")
        count += part and not in_word
        in_word = part
    return count


@dataclass(frozen=True)
class Query:
    """A search query, analysed for every part of the search that reads it (see the module docstring)."""

    text: str
    focus: str
    lexical: str
    match: str
    words: tuple[str, ...]
    terms: tuple[str, ...]
    analyzer_stop_words: frozenset[str] = LANCEDB_STOP_WORDS
    expanded: bool = True
    phrase_gaps: bool = True

    @classmethod
    def parse(
        cls,
        query: str | None,
        *,
        expand: bool = True,
        analyzer_stop_words: frozenset[str] = LANCEDB_STOP_WORDS,
        phrase_gaps: bool = True,
    ) -> Query:
        """The query of a request. ``expand`` adds identifier parts to :attr:`match`;
        ``analyzer_stop_words`` are the full-text analyzer's (the scored LanceDB version's), and
        ``phrase_gaps`` whether its phrase query keeps the gaps of the stop words it drops.

        Raises :class:`SearchError` when the query is empty, too long or has too many words
        (:func:`check_query`).
        """
        text = check_query(query)
        focus = drop_contrasts(drop_man_sections(unquoted(text))) if expand else text
        lexical = focus.replace("\0", " ")
        return cls(
            text=text,
            focus=focus,
            lexical=lexical,
            match=expand_identifiers(_HOW_MANY_RE.sub(r"\1", lexical)) if expand else lexical,
            words=tuple(_CASED_WORD_RE.findall(focus)),
            terms=tuple(dict.fromkeys(_WORD_RE.findall(focus.lower()))),
            analyzer_stop_words=analyzer_stop_words,
            expanded=expand,
            phrase_gaps=phrase_gaps,
        )

    @cached_property
    def match_terms(self) -> list[str]:
        """The index terms of :attr:`match`, in order (a repeated term repeats)."""
        return analyze(self.match, self.analyzer_stop_words)

    @cached_property
    def phrase(self) -> list[tuple[str, int]]:
        """The index terms of :attr:`lexical` with their word positions, counted from the first term
        (without :attr:`phrase_gaps`, one after the other)."""
        found = analyze_positions(self.lexical, self.analyzer_stop_words)
        return found if self.phrase_gaps else [(term, at) for at, (term, _) in enumerate(found)]

    def phrase_text(self, index_stop_words: frozenset[str]) -> str:
        """:attr:`lexical` written for LanceDB's phrase query on an index that drops
        ``index_stop_words``: each word this query's analyzer drops becomes one that both drop, so
        that the index reads :attr:`phrase`'s terms at its distances ("upgrade my SDK" is "upgrade
        a SDK" for the table's ``content_text`` index, which keeps "my")."""
        if self.analyzer_stop_words <= index_stop_words:
            return self.lexical
        filler = min(self.analyzer_stop_words & index_stop_words)
        words = WORD.findall(self.lexical)
        terms = analyze_words([w.lower() for w in words], self.analyzer_stop_words)
        return " ".join(word if term else filler for word, term in zip(words, terms, strict=True))

    @cached_property
    def spellings(self) -> list[list[str]]:
        """The compound identifiers of :attr:`lexical` as written, each with its dotted suffixes (most
        specific first): what the spelling leg looks up (:mod:`docs_mcp_core.spellings`)."""
        return query_spellings(self.lexical)

    @cached_property
    def verb_terms(self) -> tuple[str, ...]:
        """:attr:`terms` without the words of a function's own name written without an object path
        (``get_execution_id()``, ``createMany``): the name says what the function does, not an
        action the reader asks for; a method written with its path (``dub.links.list``) keeps them."""
        named = {
            part.lower()
            for group in self.spellings
            for form in group[:1]
            if form[:1] not in "=~" and "." not in form
            for part in identifier_parts(form)
        }
        return tuple(t for t in self.terms if t not in named) if named else self.terms

    @cached_property
    def option_names(self) -> list[str]:
        """The options the query names with their command (``uv sync --frozen``): the option leg's
        lookups (:func:`~docs_mcp_core.anchors.query_option_names`)."""
        return query_option_names(self.lexical)

    @cached_property
    def names_a_definition(self) -> bool:
        """Whether the query writes a flag- or key-shaped name (``--frozen``, ``[cache] dir``,
        ``project.requires-python``): the anchor cue's lookups (:func:`~docs_mcp_core.anchors.query_anchors`)."""
        return bool(self.anchor_spellings)

    @cached_property
    def anchor_spellings(self) -> list[list[str]]:
        """The anchor lookups of the query's flag- and key-shaped words, one list per word, most
        specific first (what :attr:`names_a_definition` is about)."""
        return [group for group in self.spellings if group and group[0].startswith(ANCHOR_MARK)]

    @cached_property
    def key_in_bare_file(self) -> tuple[list[str], list[str]] | None:
        """A key of one word in a file named by its stem (``managed in pyproject``): the key's
        anchor lookups and the file names the stem may stand for
        (:func:`~docs_mcp_core.anchors.query_key_in_bare_file`)."""
        return query_key_in_bare_file(self.lexical)

    @cached_property
    def constants(self) -> list[str]:
        """The names the query writes as an environment variable or a constant is (``UV_CACHE_DIR``:
        :func:`~docs_mcp_core.anchors.query_constants`)."""
        return query_constants(self.lexical)

    @cached_property
    def writes_a_key_shape(self) -> bool:
        """Whether a name of the query has a shape prose never takes (:func:`~docs_mcp_core.anchors.query_writes_a_key_shape`):
        a flag, a bracketed table, a dotted name, not only a hyphenated word."""
        return query_writes_a_key_shape(self.lexical)

    @cached_property
    def names_identifier(self) -> bool:
        """Whether the query writes a compound identifier (``createMany``, ``links.list``,
        ``create_many``) or a flag or key (:attr:`writes_a_key_shape`): a name copied from code or
        a reference rather than words of the reader's own."""
        copied = any(group and not group[0].startswith((ANCHOR_MARK, PAGE_MARK)) for group in self.spellings)
        return copied or self.writes_a_key_shape

    @cached_property
    def key_terms(self) -> list[str]:
        """The terms that say what is wanted: stop words and single letters only when nothing else is left."""
        every = self.terms
        return (
            [t for t in every if len(t) > 1 and t not in STOP_WORDS]
            or [t for t in every if len(t) > 1]
            or list(every)
        )

    @cached_property
    def coverage_terms(self) -> list[str]:
        """The terms query-term coverage counts: no stop words, none of one or two characters, common
        English endings cut (``tags`` and ``tag`` are one word: a term matches the start of a word
        of the chunk's lower-cased text)."""
        words = _WORD_RE.findall(_HOW_MANY_RE.sub(r"\1", self.focus.lower()))  # no ``many`` of ``how many``
        return _cut_words(dict.fromkeys(words))

    @cached_property
    def embedded(self) -> str:
        """What the vector legs embed: :attr:`focus` without the punctuation that closes it and
        without the backticks of code spans, when the ranking is the default one (the original
        recipe embeds ``text`` as asked). A question mark says nothing about which section is
        wanted, but it moves the model's vector: ``vendoring?`` ranked another page first than
        ``vendoring``."""
        if not self.expanded:
            return self.focus
        bare = self.focus.replace("`", " ") if "`" in self.focus else self.focus  # code spans
        return bare.rstrip().rstrip(_CLOSING_PUNCTUATION).rstrip() or self.focus

    @cached_property
    def contrast_terms(self) -> list[str]:
        """The words of the contrasts the query draws (:func:`drop_contrasts`), as coverage terms,
        without those the rest of the query says: they name the neighbour that is not wanted."""
        if self.focus == self.text:
            return []
        kept = set(self.coverage_terms)
        dropped = _cut_words(dict.fromkeys(_WORD_RE.findall(self.text.lower())))
        return [t for t in dropped if t not in kept and t not in _CONTRAST_MARKERS]
