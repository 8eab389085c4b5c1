"""Token budgets: answers that fit the ``max_tokens`` an agent asked for.

An agent pays for every token a tool returns. With ``max_tokens``, the whole text of an answer
stays within that many tokens, and a cut always says so. Tokens are counted with the engine's
encoding (``o200k_base`` unless configured otherwise) and with every other tiktoken encoding the
project ships (:data:`docs_mcp_core.tokens.ENCODINGS`), the largest count deciding: the budget
holds whichever of them the client counts with (``cl100k_base``, the default of
:func:`~docs_mcp_core.tokens.count_tokens`, counts some answers a few percent longer):

* ``get_doc``: the answer is a sequence of :class:`Piece` s, delimiter lines and blocks of
  markdown cut only where :func:`docs_mcp_core.markdown.cut_points` allows (never inside a code
  block, a paragraph, a list item or a table row). :func:`fit` keeps as many pieces as fit and
  ends the answer with a notice carrying a cursor for the rest; the next part starts by naming the
  chunk or section it continues (and repeats a table's header rows when it starts inside a table).
* ``search_docs``: :func:`fit_page` renders the result as compact JSON (indentation is tokens spent
  on nothing); if that is not enough, it leaves out the fields that repeat others (``filepath``,
  ``heading``, the breadcrumb's file path, ``score``: see :class:`~.hits.SearchHit`), then shortens
  the snippets down to :data:`MIN_SNIPPET` characters, then leaves hits out from the end (so
  ``next_cursor`` continues with the first hit left out), and only when not even one hit with such
  a snippet fits does it give hits without snippets; a ``cut`` field says what was done.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from docs_mcp_core.errors import SearchError
from docs_mcp_core.search.hits import SearchResult
from docs_mcp_core.search.options import MAX_MAX_TOKENS, MIN_MAX_TOKENS, check_max_tokens
from docs_mcp_core.tokens import ENCODINGS, get_encoding

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "DELIMITER",
    "MAX_MAX_TOKENS",
    "MIN_MAX_TOKENS",
    "MIN_SNIPPET",
    "SNIPPET_CAPS",
    "Fitted",
    "KeptPieces",
    "Piece",
    "TokenBudget",
    "check_max_tokens",
    "fit",
    "fit_page",
    "markdown_pieces",
]

DELIMITER = "delimiter"  # the kind of a piece that only introduces a chunk or a section
SNIPPET_CAPS = (160, 100, 60, 0)  # characters a snippet is shortened to, tried in this order
MIN_SNIPPET = 60  # a page drops hits before it shortens their snippets below this
MAX_TOKEN_BYTES = 128  # the longest token of every shipped encoding, in UTF-8 bytes
EXACT_REST = 1 << 16  # characters after a cut answer counted exactly; past them "about" is estimated
_SLICE = 1 << 20  # characters of a large block tokenized at a time
# a line break between two letters or digits: every shipped encoding ends a token before it and
# starts one after it, so a text cut there counts as its two parts do
_SAFE_CUT = re.compile(r"(?<=[^\W_]\n)(?=[^\W_])")
_KIND_NAMES = {
    "fence": "code block",
    "code": "code block",
    "html": "HTML block",
    "blockquote": "quote",
    "hr": "rule",
    "definition": "definition",
}


class TokenBudget:
    """``max_tokens`` and the encodings its tokens are counted with: ``encoding`` and the other
    shipped ones, the largest count deciding (see the module docstring)."""

    def __init__(self, max_tokens: int, encoding: str) -> None:
        self.max_tokens = max_tokens
        self._names = [encoding, *(name for name in ENCODINGS if name != encoding)]

    @functools.cached_property
    def _encodings(self) -> list[tiktoken.Encoding]:
        # loaded when a text is first counted: building the encodings takes a good part of a
        # second and about 60 MB, which an answer that fits by its bytes alone never needs
        return [get_encoding(name) for name in self._names]

    def count(self, text: str) -> int:
        return max(len(encoding.encode_ordinary(text)) for encoding in self._encodings)

    def count_up_to(self, text: str, most: int) -> int | None:
        """:meth:`count`, or ``None`` as soon as the count is sure to exceed ``most``: ``text`` is
        counted a slice at a time, cut where no token can span (a line break between two letters
        or digits), so the slices' counts add up to the whole's."""
        totals = [0] * len(self._encodings)
        start = 0
        while start < len(text):
            cut = _SAFE_CUT.search(text, start + _SLICE) if len(text) - start > _SLICE else None
            end = cut.start() if cut is not None else len(text)
            for k, encoding in enumerate(self._encodings):
                totals[k] += len(encoding.encode_ordinary(text[start:end]))
            if max(totals) > most:
                return None
            start = end
        return max(totals)

    def fits(self, text: str) -> bool:
        # every token covers at least one UTF-8 byte and at most MAX_TOKEN_BYTES of them (a
        # character is at least one byte): short texts and very long ones need no tokenizing, and
        # a long one is tokenized only until it is past the budget
        if len(text) > self.max_tokens * MAX_TOKEN_BYTES:
            return False
        if len(text.encode("utf-8")) <= self.max_tokens:
            return True
        return self.count_up_to(text, self.max_tokens) is not None


# ── get_doc: pieces of markdown ─────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class Piece:
    """A part of an answer that is never split. Joined, an answer's pieces are its whole text."""

    text: str
    resume: str = ""  # what an answer that starts with this piece puts before it
    kind: str = "block"  # what the piece starts with, to name it when it alone is too large


def markdown_pieces(content: str, resume: str) -> list[Piece]:
    """``content`` cut at every block boundary. ``resume`` is the line that introduces a part
    starting inside it (a delimiter saying which chunk continues)."""
    from docs_mcp_core.markdown import cut_points  # the markdown parser: not needed by a search

    points = cut_points(content)
    if not points:
        return [Piece(content, resume)] if content else []
    offsets = [0, *(p.offset for p in points[1:]), len(content)]
    pieces = []
    for i, point in enumerate(points):
        text = content[offsets[i] : offsets[i + 1]]
        pieces.append(Piece(text, resume + point.repeat, _KIND_NAMES.get(point.kind, point.kind)))
    return pieces


KEPT_PIECES_CHARS = 48 * 1024 * 1024  # what the answers kept may hold, counted in characters
_PIECE_OVERHEAD = 96  # what a piece costs beyond its text, counted as characters


class KeptPieces:
    """Answers cut into pieces, kept by a key for the next parts of the same answer: the most
    recently used, up to ``chars`` characters in all (a piece's text and its overhead), thread-safe.

    An agent reads a section of megabytes part after part with the cursors: cutting it again
    (parsing all its markdown) for every part made reading it cost its length times its parts."""

    def __init__(self, chars: int = KEPT_PIECES_CHARS) -> None:
        self.chars = chars
        self._kept: OrderedDict[Hashable, tuple[list[Piece], int]] = OrderedDict()
        self._held = 0  # characters of everything kept
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> list[Piece] | None:
        """A copy of the pieces kept under ``key`` (the caller may change its list)."""
        with self._lock:
            kept = self._kept.pop(key, None)
            if kept is None:
                return None
            self._kept[key] = kept  # the most recently used last
            return list(kept[0])

    def put(self, key: Hashable, pieces: Sequence[Piece]) -> None:
        size = sum(len(p.text) + _PIECE_OVERHEAD for p in pieces)
        if size > self.chars:
            return
        with self._lock:
            replaced = self._kept.pop(key, None)
            self._held += size - (replaced[1] if replaced is not None else 0)
            self._kept[key] = (list(pieces), size)
            while self._held > self.chars:
                _, (_, dropped) = self._kept.popitem(last=False)
                self._held -= dropped


@dataclass(frozen=True)
class Fitted:
    """An answer and where the rest of it starts (``None``: nothing was left out)."""

    text: str
    rest: int | None


def fit(
    pieces: Sequence[Piece],
    start: int,
    budget: TokenBudget | None,
    notice: Callable[[int, int], str],
    too_large: Callable[[Piece, int | None, int], str],
) -> Fitted:
    """The answer made of ``pieces[start:]``, or of as many of them as fit ``budget``.

    ``notice(rest, tokens_left)`` is the line that ends a cut answer (it carries the cursor for
    ``pieces[rest:]``); ``too_large(piece, tokens, at)`` is the line that stands in for
    ``pieces[at]`` when not even that first block fits (after the delimiter lines before it);
    ``tokens`` is ``None`` when no ``max_tokens`` can hold it (over :data:`MAX_MAX_TOKENS`, found
    without tokenizing all of a block of megabytes).
    Raises :class:`SearchError` when not even that line fits.

    Only the pieces the answer may hold are tokenized, and the rest's first :data:`EXACT_REST`
    characters for the notice's count (the tokens beyond them are estimated from those): a
    budgeted part of a section of megabytes costs what the part costs, not what the section does.
    """
    head = pieces[start].resume if 0 < start < len(pieces) else ""
    if budget is None or sum(len(p.text) for p in pieces[start:]) <= budget.max_tokens * MAX_TOKEN_BYTES:
        whole = head + "".join(p.text for p in pieces[start:])
        if budget is None or budget.fits(whole):
            return Fitted(whole, None)
    assert budget is not None
    counts = _PieceCounts(pieces, start, budget)
    # the notice's count is not known yet: its length is bounded with the most tokens it can say
    most = 4 * sum(len(p.text) for p in pieces[start:])
    room = budget.max_tokens - budget.count(head) - budget.count(notice(len(pieces) - 1, most)) - 2
    end, used = start, 0
    while end < len(pieces) and _may_fit(pieces[end].text, room - used):
        tokens = counts.at_most(end, room - used)
        if tokens is None:
            break
        used += tokens
        end += 1
    while end > start and any(p.kind != DELIMITER for p in pieces[start:end]):
        body = (head + "".join(p.text for p in pieces[start:end])).rstrip()
        text = f"{body}\n\n{notice(end, counts.after(end))}"
        over = budget.count(text) - budget.max_tokens
        if over <= 0:
            return Fitted(text, end)
        # leave out at least the pieces whose tokens make up the excess (one at a time was
        # quadratic when joined pieces count more than their parts)
        end -= 1
        over -= counts.of(end)
        while over > 0 and end > start:
            end -= 1
            over -= counts.of(end)
    # not even one block fits: the delimiters before it, and what it would take to read it
    at = start
    while at < len(pieces) - 1 and pieces[at].kind == DELIMITER:
        at += 1
    lines = head + "".join(p.text for p in pieces[start:at])
    block = pieces[at].text
    alone_tokens = counts.of(at) if len(block) <= _SLICE else budget.count_up_to(block, MAX_MAX_TOKENS)
    needed = None if alone_tokens is None else budget.count(lines) + alone_tokens
    alone = f"{lines}{too_large(pieces[at], needed, at)}"
    if not budget.fits(alone):
        raise SearchError(
            f"max_tokens {budget.max_tokens} is too small for this answer: its first block needs "
            f"{budget.count(alone)} tokens"
        )
    return Fitted(alone, at)


def _may_fit(text: str, tokens: int) -> bool:
    """Whether ``text`` may have at most ``tokens`` tokens (a token holds at most
    :data:`MAX_TOKEN_BYTES` bytes, a character at least one byte): a block far too large for the
    room left is not tokenized."""
    return len(text) <= tokens * MAX_TOKEN_BYTES


class _PieceCounts:
    """The tokens of ``pieces[start:]``, each counted when first asked for."""

    def __init__(self, pieces: Sequence[Piece], start: int, budget: TokenBudget) -> None:
        self.pieces, self.start, self.budget = pieces, start, budget
        self.counts: list[int] = []

    def of(self, index: int) -> int:
        while len(self.counts) <= index - self.start:
            self.counts.append(self.budget.count(self.pieces[self.start + len(self.counts)].text))
        return self.counts[index - self.start]

    def at_most(self, index: int, most: int) -> int | None:
        """:meth:`of` the next piece not counted yet, or ``None`` (and it stays uncounted) once it
        is sure to hold more than ``most`` tokens."""
        if index - self.start < len(self.counts):
            tokens = self.counts[index - self.start]
            return tokens if tokens <= most else None
        assert index - self.start == len(self.counts), "pieces are counted in order"
        tokens = self.budget.count_up_to(self.pieces[index].text, most)
        if tokens is not None:
            self.counts.append(tokens)
        return tokens

    def after(self, index: int) -> int:
        """About how many tokens ``pieces[index:]`` hold: the pieces within :data:`EXACT_REST`
        characters exactly, the others in proportion to the tokens of their first characters."""
        total, chars, at = 0, 0, index
        while at < len(self.pieces) and chars + len(self.pieces[at].text) <= EXACT_REST:
            total += self.of(at)
            chars += len(self.pieces[at].text)
            at += 1
        rest = [p.text for p in self.pieces[at:] if p.text]
        if not rest:
            return total
        sample, size = [], 0
        for text in rest:
            sample.append(text[: EXACT_REST - size])
            size += len(sample[-1])
            if size >= EXACT_REST:
                break
        rest_chars = sum(map(len, rest))
        return total + -(-rest_chars * self.budget.count("".join(sample)) // size)


# ── search_docs: a page of hits ────────────────────────────────────────────────────────────────


def _shorten(snippet: str, cap: int) -> str:
    """``snippet`` cut at a word boundary to at most ``cap`` characters, ``...`` marking the cut."""
    if len(snippet) <= cap:
        return snippet
    if cap <= 0:
        return ""
    cut = snippet[: cap - 3].rsplit(" ", 1)[0].rstrip(" .,;:")
    return f"{cut}..."


def _cut_message(max_tokens: int, shortened: bool, left_out: int, lean: bool = True) -> str:
    done = []
    if lean:
        done.append("filepath, heading and score left out (chunk_id and breadcrumb carry them)")
    if shortened:
        done.append("snippets shortened")
    if left_out:
        done.append(f"{left_out} hit{'s' if left_out != 1 else ''} left out (next_cursor starts with them)")
    return f"Fitted to max_tokens {max_tokens}: {', '.join(done)}."


def fit_page(
    result: SearchResult, budget: TokenBudget, cursor_after: Callable[[int], str | None]
) -> SearchResult:
    """``result`` as compact JSON within ``budget``: the fields that repeat others left out first,
    then snippets shortened, then hits left out from the end (``cursor_after(k)`` is the cursor of
    the page that starts after its first ``k`` hits). Raises :class:`SearchError` when not even an
    answer without hits fits."""
    compact = replace(result, compact=True)
    if budget.fits(compact.text()):
        return compact
    hits = [replace(h, lean=True) for h in result.hits]
    envelope = budget.count(replace(compact, hits=[], cut=_cut_message(budget.max_tokens, True, 99)).text())
    # Each hit is tokenized once, and its snippet once; a shortened snippet's tokens are estimated
    # in proportion to its length. Every candidate page is then counted exactly before it is chosen,
    # so an estimate can only cost a snippet some characters, never the budget.
    lean_costs = [budget.count(_compact_json(h.to_dict())) + 1 for h in hits]
    snippet_costs = [budget.count(h.snippet) if h.snippet else 0 for h in hits]

    def shortened_hit(i: int, cap: int | None) -> Any:
        return hits[i] if cap is None else replace(hits[i], snippet=_shorten(hits[i].snippet, cap))

    def cost(i: int, cap: int | None) -> int:
        snippet = hits[i].snippet
        if cap is None or len(snippet) <= cap:
            return lean_costs[i]
        kept = len(_shorten(snippet, cap))
        return lean_costs[i] - snippet_costs[i] + -(-snippet_costs[i] * kept // len(snippet))

    # Fewer hits an agent can judge by their snippets beat more hits it cannot: hits are left out
    # before snippets go below MIN_SNIPPET characters, and snippets are dropped only when not even
    # one hit with such a snippet fits.
    useful = tuple(c for c in SNIPPET_CAPS if c >= MIN_SNIPPET)
    for caps in ((None, *useful), tuple(c for c in SNIPPET_CAPS if c < MIN_SNIPPET)):
        for kept in range(len(hits), 0, -1):
            for cap in caps:
                if envelope + sum(cost(i, cap) for i in range(kept)) > budget.max_tokens + 8:
                    continue
                shortened = cap is not None and any(len(h.snippet) > cap for h in hits[:kept])
                candidate = replace(
                    compact,
                    hits=[shortened_hit(i, cap) for i in range(kept)],
                    next_cursor=result.next_cursor if kept == len(hits) else cursor_after(kept),
                    cut=_cut_message(budget.max_tokens, shortened, len(hits) - kept),
                )
                if budget.fits(candidate.text()):
                    return candidate
    empty = replace(
        compact,
        hits=[],
        next_cursor=cursor_after(0) if hits else result.next_cursor,
        cut=_cut_message(budget.max_tokens, False, len(hits), lean=False) if hits else None,
    )
    if not hits and not budget.fits(empty.text()) and result.hint:
        empty = replace(empty, hint={**result.hint, "suggested_filters": {}})
    if not budget.fits(empty.text()):
        raise SearchError(
            f"max_tokens {budget.max_tokens} is too small for this search_docs answer: it needs at least "
            f"{budget.count(empty.text())} tokens"
        )
    return empty


def _compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
