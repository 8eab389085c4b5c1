"""Ranking signals beyond the original recipe (``--ranking default``).

Each signal is general — none knows about a particular corpus, file or query set:

* **Identifier-aware text.** ``createMany``, ``create_many``, ``links.create_many`` and
  ``s.Links.Upsert`` stay searchable as written and also by their parts (``create many``,
  ``links upsert``), in extra full-text columns ``search_heading`` and ``search_text``.
* **Path field.** The file path and ancestor headings as words (``sdks dub python docs sdks links
  README``), column ``search_path``: in generated SDK docs the path names the resource.
* **Score fusion.** BM25 scores of the multi-field match are normalised by the best score and
  summed with smaller proximity (phrase) and vector contributions, so identical text in different
  places gets identical scores and the static priors can break the tie.
* **Static priors** (column ``search_prior``, computed at build time): chunks that are mostly lists
  of links (tables of contents, "available operations") and chunks whose heading is a generic
  section name repeated all over the corpus ("Fields", "Example Usage") are damped; deeper paths
  are damped very slightly, so a canonical page outranks its copies in sub-packages.
* **Query-term coverage.** The best-scored rows with a full-text match are multiplied by the
  square root of the share of the query's words found in their heading, breadcrumb, path and
  first 3,000 characters of text (smoothed: never zero): a chunk that says every word of the
  question outranks one that repeats a single word often. Rows found by the vector retriever
  alone are left as they are. The words counted are the query's
  :attr:`~docs_mcp_core.search.query.Query.coverage_terms`.
* **Taxonomy cues.** An unfiltered query that names a taxonomy value ("... in the Go SDK",
  "Dub TypeScript") boosts chunks carrying that value and damps chunks carrying another one.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[.:/][A-Za-z_][A-Za-z0-9_]*)*")
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_SPLIT_RE = re.compile(r"[._:/]+")
_SEGMENT_RE = re.compile(r"[^._:/]+")  # what _SPLIT_RE leaves between separators
_LINK_LINE_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s*\[[^\]]+\]\([^)]*\)")
_WORD_RE = re.compile(r"[A-Za-z0-9]+")

NAV_RATIO_THRESHOLD = 0.5
NAV_PENALTY = 0.5
GENERIC_HEADING_PENALTY = 0.2
COVERAGE_DEPTH = 50  # rows (best fused scores first) whose query-term coverage is measured
COVERAGE_TEXT_CHARS = 3000  # of a chunk's text: what a chunk is about comes first
COVERAGE_EXPONENT = 0.5
COVERAGE_SMOOTHING = 0.5
GENERIC_HEADING_MIN_COUNT = 20
GENERIC_HEADING_SHARE = 0.005
DEPTH_DAMPING = 0.02

# Common spellings of language values. Only used when the target value is in the taxonomy.
LANGUAGE_ALIASES = {
    "ts": "typescript",
    "javascript": "typescript",
    "js": "typescript",
    "node": "typescript",
    "nodejs": "typescript",
    "golang": "go",
    "py": "python",
    "python3": "python",
    "csharp": "csharp",
    "c#": "csharp",
    "dotnet": "csharp",
}


@dataclass(frozen=True)
class RankingWeights:
    """Weights of the default ranking (documented in docs/ranking.md with what each bought)."""

    heading: float = 3.0
    text: float = 1.0
    path: float = 2.0
    phrase: float = 0.25
    vector: float = 0.5
    cue: float = 0.5
    spelling: float = 0.6


def identifier_parts(token: str) -> list[str]:
    """``links.createMany`` → ``['links', 'create', 'many']``; a plain word gives ``[word]``."""
    return [p.lower() for seg in _SPLIT_RE.split(token) for p in _CAMEL_RE.findall(seg)]


def expand_identifiers(text: str) -> str:
    """``text`` followed by the parts of every compound identifier in it (kept whole as well)."""
    extra: list[str] = []
    for tok in _IDENT_RE.findall(text):
        # Compound: a separator (the only non-alphanumerics a token can hold) or a capital after
        # the first letter. Tokens are ASCII, so lower() changes exactly the capitals.
        if tok.isalnum() and tok[1:] == tok[1:].lower():
            continue
        joined = _joined_parts(tok)
        if joined is not None:
            extra.append(joined)
    return text + ("\n" + " ".join(extra) if extra else "")


def identifier_part_spans(text: str) -> list[tuple[int, int]]:
    """Where the parts :func:`expand_identifiers` adds for ``text`` stand in it: the ``(start, end)``
    character span of every part of every compound identifier, in order (``RetryConfig`` gives the
    spans of ``Retry`` and ``Config``; plain words give nothing)."""
    spans: list[tuple[int, int]] = []
    for ident in _IDENT_RE.finditer(text):
        tok = ident.group()
        if tok.isalnum() and tok[1:] == tok[1:].lower():
            continue
        parts = [
            (ident.start() + seg.start() + part.start(), ident.start() + seg.start() + part.end())
            for seg in _SEGMENT_RE.finditer(tok)
            for part in _CAMEL_RE.finditer(seg.group())
        ]
        if len(parts) > 1:
            spans.extend(parts)
    return spans


@functools.lru_cache(maxsize=1 << 16)
def _joined_parts(token: str) -> str | None:
    """The parts of a compound identifier joined by spaces (None when it has only one part).

    Generated docs repeat the same identifiers thousands of times (sdk-docs: 107k compound tokens,
    13k distinct), so the split is memoised.
    """
    parts = identifier_parts(token)
    return " ".join(parts) if len(parts) > 1 else None


def coverage_factor(text: str, terms: Sequence[str]) -> float:
    """Multiplier of a chunk whose lower-cased heading, breadcrumb, path and text are ``text``."""
    if not terms:
        return 1.0
    found = sum(1 for term in terms if _starts_a_word(text, term))
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


def path_words(filepath: str, breadcrumb: str) -> str:
    """The path (without extension) and ancestor headings of a chunk, as plain words."""
    stem = filepath.rsplit(".", 1)[0]
    words = re.sub(r"[/_\-]+", " ", stem)
    crumbs = breadcrumb.split(" > ")
    ancestors = " ".join(crumbs[1:-1]) if len(crumbs) > 2 else ""
    # Ancestors are kept as written: splitting "Beta.Libraries.Documents" into words made every
    # method of a resource match the resource's words and drowned the method that was asked for.
    return f"{words} {ancestors}".strip()


def nav_ratio(content: str) -> float:
    """Share of a chunk's non-heading lines that are list items holding a link."""
    lines = [ln for ln in content.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        return 0.0
    return sum(1 for ln in lines if _LINK_LINE_RE.match(ln)) / len(lines)


def generic_headings(headings: Iterable[str]) -> set[str]:
    """Normalised headings repeated so often in the corpus that they say nothing on their own."""
    counts = Counter(h.strip().lower() for h in headings if h.strip())
    total = sum(counts.values())
    floor = max(GENERIC_HEADING_MIN_COUNT, GENERIC_HEADING_SHARE * total)
    return {h for h, n in counts.items() if n >= floor}


def static_prior(filepath: str, heading: str, content: str, generic: set[str]) -> float:
    """Multiplicative prior of a chunk (1.0 = neutral)."""
    prior = 1.0
    if nav_ratio(content) >= NAV_RATIO_THRESHOLD:
        prior *= 1 - NAV_PENALTY
    if heading.strip().lower() in generic:
        prior *= 1 - GENERIC_HEADING_PENALTY
    prior *= (1 - DEPTH_DAMPING) ** filepath.count("/")
    return prior


def query_cues(
    words: Sequence[str], taxonomy: Mapping[str, Sequence[str]], filtered: Iterable[str]
) -> dict[str, str]:
    """Taxonomy values named by a query for keys that are not filtered; ``words`` are the query's
    runs of ASCII letters and digits as written (:attr:`docs_mcp_core.search.query.Query.words`).

    Values of one or two letters (``go``) only count when written with a capital (``Go``), so that
    ordinary words are not mistaken for them.
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
            target = word
            if word not in value_set and key == "language":
                target = LANGUAGE_ALIASES.get(word, word)
            if target in value_set:
                if len(target) <= 2 and not raw[:1].isupper():
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


def cue_factor(metadata: Mapping[str, str], cues: Mapping[str, str], weight: float) -> float:
    factor = 1.0
    for key, value in cues.items():
        have = metadata.get(key, "")
        if have == value:
            factor *= 1 + weight
        elif have:
            factor /= 1 + weight
    return factor
