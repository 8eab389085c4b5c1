"""Intent signals of the default ranking: what a reader's own words say about the section wanted.

Agents describe what they want in their own words. Three signals read those words against the
shape every API reference and guide shares, none against a particular corpus:

* **Topic → introduction.** A query that is only the name of a page's topic ("subscribers", "environment
  variables", "QR codes"; stop words and named taxonomy values aside) asks for the section that introduces
  the topic: the first section of that page with text of its own (a resource's overview, a guide's opening;
  a data-model page, below, introduces no topic). The page's name is its file name (the folder's for a
  ``README``/``index``), its title, or the title's last dotted part, compared as one lower-case word without
  a plural ``s`` (so a folder ``environmentvariables`` names "environment variables"). Such a section is
  multiplied by ``1 + weight`` with its static prior undone: an overview is often a list of links to its
  operations, which the link-list prior damps. An introduction that only lists a link to one section of its
  page (a resource with one operation) introduces that section; a key of :data:`TOPIC_PREFIX_MIN_CHARS`
  letters that names no page names the one page whose name starts with it; and when the request leaves a
  taxonomy key open, the introductions that carry no value for it are preferred
  (:func:`~.topics.neutral_introductions`: the guide, not one language's page).
* **Action → operation.** Generated references name an operation's section by the operation (``create``,
  ``createBulk``, ``delete_by_transaction_id``), verb first. When the query says an action in any of the
  common words for it (:data:`VERB_GROUPS`: remove ↔ delete, fetch ↔ get ↔ retrieve, many ↔ bulk ↔
  batch...), the best rows whose own heading is such a name and starts with a verb of the same group (or,
  for the batch group, holds one anywhere) are multiplied by ``1 + weight``. A heading with a space is
  prose, not an operation name, and is left alone. An operation named ``un`` + a verb undoes it (the undo
  group, :func:`undoes`); a query about one thing (:data:`SINGLE`) divides the batch operations' factor
  instead.
* **Action → not a data model.** A page whose every section carries one of the corpus's generic headings
  ("Fields", "Supported Types", "Values"), none of them an operation verb, documents a data type. An action
  query wants the operation, not the type its nouns name: such sections are multiplied by ``1 - weight``. So
  are they for a **description** (:func:`describes`): a question of at least :data:`DESCRIPTION_MIN_TERMS`
  words of the reader's own that names no identifier ("a checkout completed: report the sale for that
  customer") asks how to do something, where a type's field table answers a question that names the type.

The per-row attributes (:class:`IntentIndex`) are derived from the headings, breadcrumbs and paths
(and the text of each file's first sections) by the build, into the derived files, or else when the
first default-ranked search needs them.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from docs_mcp_core.index.derived_files import Part, arrays_from_strings, strings_from_arrays
from docs_mcp_core.ranking import generic_headings, identifier_parts
from docs_mcp_core.search.analyzer import analyze_words
from docs_mcp_core.search.command_pages import command_names, is_man_header, tool_prefixes
from docs_mcp_core.search.cues import LANGUAGE_ALIASES
from docs_mcp_core.search.introductions import introductions, page_name
from docs_mcp_core.search.query import STOP_WORDS
from docs_mcp_core.search.row_catalog import RowCatalog, members
from docs_mcp_core.search.rows import RowReader
from docs_mcp_core.search.shared_sections import shared_sections
from docs_mcp_core.search.topics import TOPIC_QUALIFIERS, page_names

__all__ = [
    "DESCRIPTION_MIN_TERMS",
    "INTENT_VERSION",
    "SINGLE",
    "TOPIC_PREFIX_MIN_CHARS",
    "UNDOING_GROUPS",
    "UNDO_GROUP",
    "VERB_GROUPS",
    "IntentIndex",
    "describes",
    "heading_verbs",
    "is_action_word",
    "lists_things",
    "load_intent",
    "model_factors",
    "query_verbs",
    "undoes",
    "verb_factors",
]

# General API vocabulary: the words readers and references use for the same operation. Each group
# is one action; a query word of a group counts for every word of it.
VERB_GROUPS: tuple[frozenset[str], ...] = tuple(
    frozenset(words.split())
    for words in (
        "get fetch retrieve read look lookup view show see",
        "list all every browse enumerate",
        "create add new make register sign insert issue book enroll submit place",
        "update change edit modify rename set patch replace",
        "delete remove erase destroy drop purge disconnect detach",
        "batch bulk many multiple several once",
        "search find query lookup filter",
        "trigger start run launch kick execute fire invoke",
        "cancel stop abort void terminate revoke halt",
        "copy duplicate clone",
        "count total",
        "undo reverse revert restore back",
        "has exists whether",
    )
)
# Two-word verbs, read as another group's word (``set up`` creates, ``get rid of`` deletes, ``get all
# links`` lists them, unless an aspect of one thing follows: ``get all the details of a link``)
PHRASAL_VERBS: dict[tuple[str, str], str] = {
    ("set", "up"): "create",
    ("get", "rid"): "delete",
    ("clean", "up"): "delete",
    ("tear", "down"): "delete",
    ("shut", "down"): "stop",
    ("get", "back"): "restore",
}
# ``get back`` after another action is what that action returns (``start a run and get back its
# id``), no operation of its own; first, it restores (``get back a deleted link``).
_RESULT_PHRASES = frozenset({("get", "back")})
PHRASAL_VERBS.update({(verb, every): "list" for verb in VERB_GROUPS[0] for every in ("all", "every")})
_ASPECTS = frozenset({"detail", "details", "info", "information", "data", "fields", "properties", "metadata"})


def _group_bit(word: str) -> int:
    """The bit of the :data:`VERB_GROUPS` group that holds ``word``."""
    return next(1 << bit for bit, group in enumerate(VERB_GROUPS) if word in group)


# Bumped whenever what IntentIndex.build derives changes (2: operations that undo another, ``unsnooze``; 3:
# an introduction linking to one section introduces it; 4: a page's title from its sections' breadcrumbs;
# 5: a command's page named without its tool's name, a man page's description as its introduction;
# 6: sections a folder's pages share counted as a data model's; 7: more verbs of creating; 8:
# replace updates; 9: a page named by its title in metadata.json, which may be its front matter's;
# 10: a title's words each once; 11: not a first section's heading as the title of a page without an H1).
INTENT_VERSION = 11
# versions read as they are: deriving again costs a start 0.7 s (7 s at ten copies of sdk-docs)
_STILL_READ = (3, 4, 5, 8, 9, 10)
_BATCH = 5  # the batch group's words may stand anywhere in an operation name (createMany, bulkUpdate)
_COUNT = 10
# "a single link": the operation on one thing, not its batch form ("in one call": the batch form)
SINGLE = 1 << len(VERB_GROUPS)  # above every group's bit
_SINGLE_WORDS = frozenset({"single", "one", "individual"})
_AT_ONCE = frozenset({"in", "with"})
# An operation whose name starts with ``un`` + a verb (unsnooze, unarchiveWorkflow, unsubscribe)
# undoes that verb's operation: the undo group's action. A reader also asks for it by removing or
# cancelling the state the verb sets ("remove a workflow's schedule", "stop sharing"): a delete or
# cancel query that names a word some operation undoes wants the undo group as well.
UNDO_GROUP = _group_bit("undo")
UNDOING_GROUPS = _group_bit("delete") | _group_bit("cancel") | UNDO_GROUP
_NOT_UNDOING = frozenset(
    [
        "under",
        "understand",
        "undergo",
        "unicode",
        "unify",
        "unified",
        "uniform",
        "union",
        "unique",
        "unit",
        "units",
        "universal",
        "unix",
        "unknown",
        "unless",
        "unlike",
        "unlikely",
        "unlimited",
        "unmarshal",
        "unpack",
        "unread",
        "unreachable",
        "unsafe",
        "until",
        "unused",
        "unwrap",
    ]
)
_VERBS = frozenset().union(*VERB_GROUPS)
TOPIC_PREFIX_MIN_CHARS = 8  # letters of a topic key that may name a page by the start of its name
DESCRIPTION_MIN_TERMS = 3  # content words (coverage terms) that make a query a description


def query_verbs(terms: Sequence[str]) -> int:
    """Bit mask of the :data:`VERB_GROUPS` the query's lower-case ``terms`` name ("how many" counts)."""
    mask = 0
    previous = ""
    single = False
    words = list(terms)
    for i, term in enumerate(words):
        phrasal = PHRASAL_VERBS.get((term, words[i + 1])) if i + 1 < len(words) else None
        if phrasal == "list" and _ASPECTS.intersection(words[i + 2 : i + 4]):
            phrasal = None  # get all the details of a link
        if phrasal is not None and mask and (term, words[i + 1]) in _RESULT_PHRASES:
            phrasal = ""  # what the action before returns
        if phrasal is not None or (previous, term) in PHRASAL_VERBS:
            term = phrasal or ""  # the phrase counts once, as its group's word
        for bit, group in enumerate(VERB_GROUPS):
            if term in group:
                mask |= 1 << (_COUNT if term == "many" and previous == "how" else bit)
        if term in _SINGLE_WORDS:
            before = words[i - 2 : i]  # "in one call", "in a single request": many at once
            if previous in _AT_ONCE or (previous == "a" and before[:1] and before[0] in _AT_ONCE):
                mask |= 1 << _BATCH
            else:
                single = True
        previous = words[i]
    return mask | SINGLE if single and mask else mask


def lists_things(terms: Sequence[str], named_values: Collection[str]) -> int:
    """The list group's bit for a question that names no action and starts with things in the
    plural (``comments on a task``, ``which topics does a user belong to``): a list of them; else 0.
    Stop words, taxonomy ``named_values``, language aliases and :data:`TOPIC_QUALIFIERS` are skipped."""
    skip = {v.lower() for v in named_values}
    for term in terms:
        if term in STOP_WORDS or term in TOPIC_QUALIFIERS or term in skip or term in LANGUAGE_ALIASES:
            continue
        plural = term.isalpha() and term.endswith("s") and not term.endswith(("ss", "us", "is"))
        return _group_bit("list") if plural else 0
    return 0


def is_action_word(term: str) -> bool:
    """Whether a coverage term (``updat`` for updating) is a word of :data:`VERB_GROUPS`."""
    return term in _VERBS or (len(term) >= 4 and any(word.startswith(term) for word in _VERBS))


def describes(coverage_terms: Sequence[str], names_identifier: bool) -> bool:
    """Whether a query describes what it wants in its own words: at least
    :data:`DESCRIPTION_MIN_TERMS` content words and no compound identifier copied from code."""
    return len(coverage_terms) >= DESCRIPTION_MIN_TERMS and not names_identifier


@functools.lru_cache(maxsize=1 << 14)
def heading_verbs(heading: str) -> int:
    """Bit mask of the :data:`VERB_GROUPS` an operation-name ``heading`` starts with (0 for prose)."""
    parts = _operation_parts(heading)
    if not parts:
        return 0
    mask = 0
    for bit, group in enumerate(VERB_GROUPS):
        if (parts and parts[0] in group) or (bit == _BATCH and not group.isdisjoint(parts)):
            mask |= 1 << bit
    if parts and undoes(parts[0]):
        mask |= UNDO_GROUP
    return mask


def _operation_parts(heading: str) -> list[str]:
    """The words of an operation-name heading (``createMany`` → ``create``, ``many``; none for prose)."""
    text = heading.strip()
    return identifier_parts(text) if text and " " not in text else []


def undoes(word: str) -> bool:
    """Whether an operation name's first word says it undoes another verb (``unsnooze``)."""
    return len(word) >= 5 and word.startswith("un") and word.isalpha() and word not in _NOT_UNDOING


@dataclass(frozen=True)
class IntentIndex:
    """Per-row attributes of the intent signals, in catalog order."""

    verbs: np.ndarray  # int32: verb-group bits of an operation-name heading
    model: np.ndarray  # bool: a section of a data-model page
    lead: np.ndarray  # bool: the section that introduces its page
    topics: dict[str, np.ndarray]  # page name -> positions of the introductions of pages so named
    undone: frozenset[str] = frozenset()  # index terms of the verbs that operations undo (snooz)

    @classmethod
    def build(
        cls,
        headings: Sequence[str],
        breadcrumbs: Sequence[str],
        filepaths: Sequence[str],
        file_codes: np.ndarray,
        lead: np.ndarray,
        shared: np.ndarray | None = None,
        files: Mapping[str, Mapping[str, str]] | None = None,
    ) -> IntentIndex:
        """From every row's heading, breadcrumb, path and file code; ``lead`` marks introductions,
        ``shared`` the sections a folder's pages share (:mod:`.shared_sections`), counted as a data
        model's; ``files``: each file's entry of ``metadata.json``, whose title names its page as well (a
        title only the front matter states is in no breadcrumb)."""
        size = len(headings)
        verbs = np.fromiter((heading_verbs(h) for h in headings), np.int32, size)
        generic = generic_headings(headings)
        not_model: set[int] = set()
        sections: Counter[int] = Counter()
        for code, heading in zip(file_codes.tolist(), headings, strict=True):
            name = heading.strip().lower()
            if not name:  # a preamble
                continue
            sections[code] += 1
            if name not in generic or name in _VERBS or is_man_header(name):  # a command's man page
                not_model.add(code)
        model_files = [code for code, n in sections.items() if n and code not in not_model]
        model = members(file_codes, np.asarray(model_files, dtype=file_codes.dtype))
        if shared is not None:
            model = model | shared
        # a page's title is in its sections' breadcrumbs (file > Title > Section), not a preamble's
        # and in its metadata title, which a title only its front matter states is in alone
        titles: dict[int, set[str]] = {}
        crumbed: set[int] = set()
        tops = _top_headings(file_codes, breadcrumbs)
        for code, path, crumb in zip(file_codes.tolist(), filepaths, breadcrumbs, strict=True):
            title = (files or {}).get(path, {}).get("title")
            if code not in titles:
                titles[code] = page_names(path, f"{path} > {title}") if title else set()
            if code not in crumbed and " > " in crumb:
                crumbed.add(code)
                # the first heading of the breadcrumbs is a title over the page's sections, not the
                # first of its sections (a page without an H1: "Installing global packages")
                top = crumb.split(" > ")[1]
                if not files or tops[code] == 1 or (title and page_name(top) == page_name(title)):
                    titles[code] |= page_names(path, crumb)
        by_name: dict[str, list[int]] = {}
        prefixes = tool_prefixes(filepaths)
        for position in np.flatnonzero(lead & ~model).tolist():  # a type's fields introduce no topic
            names = page_names(filepaths[position], breadcrumbs[position])
            names |= {page_name(n) for n in command_names(filepaths[position], prefixes)}
            for name in names | titles.get(int(file_codes[position]), set()):
                by_name.setdefault(name, []).append(position)
        topics = {name: np.asarray(rows, dtype=np.int64) for name, rows in by_name.items()}
        # the verbs the operations of the undo group undo (unsnooze: snooze), from those rows only
        undone = {_operation_parts(headings[i])[0][2:] for i in np.flatnonzero(verbs & UNDO_GROUP).tolist()}
        return cls(
            verbs=verbs,
            model=model,
            lead=np.asarray(lead, dtype=bool),
            topics=topics,
            undone=frozenset(t for t in analyze_words(sorted(undone)) if t),
        )

    def wanted(self, verbs: int, terms: Sequence[str]) -> int:
        """The verb groups of a query (``verbs``: :func:`query_verbs` of its lower-case ``terms``),
        with the undo group when it removes or cancels a state that an operation undoes, and
        without it when no operation undoes another."""
        if not self.undone:
            return verbs & ~UNDO_GROUP
        if verbs & UNDOING_GROUPS and not self.undone.isdisjoint(analyze_words(terms)):
            verbs |= UNDO_GROUP
        return verbs

    def to_part(self) -> Part:
        """The attributes as named arrays, for the derived files (topics: their names, and the
        positions of each name's introductions end to end)."""
        names = sorted(self.topics)
        rows = [self.topics[name] for name in names]
        bounds = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in rows], out=bounds[1:])
        positions = np.concatenate(rows).astype(np.int64) if rows else _NONE
        arrays = {"verbs": self.verbs, "model": self.model, "lead": self.lead}
        arrays |= {"topics.bounds": bounds, "topics.rows": positions}
        arrays |= arrays_from_strings("topics.names", names) | arrays_from_strings(
            "undone", sorted(self.undone)
        )
        return Part(arrays, {"version": INTENT_VERSION})

    @staticmethod
    def current(part: Part) -> bool:
        """Whether a stored part can be read by this code (an older one is derived again on use)."""
        return part.meta.get("version") in (INTENT_VERSION, *_STILL_READ)

    @classmethod
    def from_part(cls, part: Part) -> IntentIndex:
        """The attributes :meth:`to_part` stored (read-only views: nothing is copied)."""
        a = part.arrays
        bounds, positions = a["topics.bounds"].tolist(), a["topics.rows"]
        names = strings_from_arrays(a, "topics.names")
        topics = {name: positions[bounds[n] : bounds[n + 1]] for n, name in enumerate(names)}
        undone = frozenset(strings_from_arrays(a, "undone"))
        return cls(verbs=a["verbs"], model=a["model"], lead=a["lead"], topics=topics, undone=undone)

    def topic_rows(self, key: str | None) -> np.ndarray:
        """Positions of the introductions of the pages named ``key``, or else of the pages of the
        one name that starts with it (``ingestion pipelines`` names ``ingestionpipelineconfigurations``:
        a reader names a resource by the start of its name), when the key has
        :data:`TOPIC_PREFIX_MIN_CHARS` letters or more, or else of the one shorter name with the
        key's stem (``enrichment`` names ``enrich``)."""
        if not key:
            return _NONE
        found = self.topics.get(key)
        if found is not None:
            return found
        if len(key) >= TOPIC_PREFIX_MIN_CHARS:
            names = self._names
            at = bisect.bisect_left(names, key)
            longer = list(itertools.takewhile(lambda n: n.startswith(key), names[at : at + 2]))
            if len(longer) == 1:
                return self.topics[longer[0]]
        # a word derived from the one page name of its stem (enrichment: Enrich, scheduling:
        # Schedule); not a shorter word of a longer name (install is an action, not Installation)
        stem = analyze_words([key], frozenset())[0]
        # a name with the key's stem starts with it, but for its last letter (company: compani)
        start = stem[:-1]
        names = self._names
        at = bisect.bisect_left(names, start)
        shorter = [
            n for n in itertools.takewhile(lambda n: n.startswith(start), names[at:]) if len(n) < len(key)
        ]
        same = [n for n, s in zip(shorter, analyze_words(shorter, frozenset()), strict=True) if s == stem]
        return self.topics[same[0]] if len(same) == 1 else _NONE

    @functools.cached_property
    def _names(self) -> list[str]:
        return sorted(self.topics)


_NONE = np.empty(0, dtype=np.int64)


def _top_headings(file_codes: np.ndarray, breadcrumbs: Sequence[str]) -> Counter[int]:
    """How many different first headings the breadcrumbs of each file's sections have: one when a
    title stands over them all, as many as its sections when the page has none (0 for a file without
    sections)."""
    tops = {
        (code, crumb.split(" > ")[1])
        for code, crumb in zip(file_codes.tolist(), breadcrumbs, strict=True)
        if " > " in crumb
    }
    return Counter(code for code, _ in tops)


_NAME_COLUMNS = ("heading", "breadcrumb", "filepath")


async def load_intent(
    catalog: RowCatalog, reader: RowReader, files: Mapping[str, Mapping[str, str]] | None = None
) -> IntentIndex | None:
    """The :class:`IntentIndex` of an open index (None when the catalog does not know the files);
    ``files``: the entries of ``metadata.json``'s ``files`` (the pages' titles)."""
    if catalog.file_codes is None or catalog.chunk_index is None:
        return None
    everything = np.arange(len(catalog.row_ids), dtype=np.int64)
    heads, crumbs, paths = await reader.values(everything, _NAME_COLUMNS)
    lead = await introductions(catalog.file_codes, catalog.chunk_index, heads, crumbs, reader)
    shared = await shared_sections(catalog.file_codes, paths, heads, lead, reader)
    return IntentIndex.build(heads, crumbs, paths, catalog.file_codes, lead, shared, files)


def verb_factors(verbs: np.ndarray, wanted: int, weight: float) -> np.ndarray:
    """``1 + weight`` for rows whose operation name says an action of the ``wanted`` groups, else 1;
    for a query about one thing (:data:`SINGLE`, no batch word), a batch operation's factor is
    divided by ``1 + weight``."""
    factors = np.where((verbs & wanted) != 0, 1.0 + weight, 1.0)
    if wanted & SINGLE and not wanted & (1 << _BATCH):
        factors = np.where((verbs & (1 << _BATCH)) != 0, factors / (1.0 + weight), factors)
    return factors


def model_factors(model: np.ndarray, weight: float) -> np.ndarray:
    """``1 - weight`` for sections of data-model pages, else 1 (for queries that name an action)."""
    return np.where(model, 1.0 - weight, 1.0)
