"""The engine's knobs (:class:`SearchOptions`) and the limits of a request.

Server flags map onto :class:`SearchOptions`; :func:`clamp_limit` and :func:`fetch_depth` say how
many hits a page holds and how many rows each retriever returns for it, :func:`check_max_tokens`
which token budgets a request may ask for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from docs_mcp_core.errors import SearchError, SearchOptionsError
from docs_mcp_core.tokens import BUDGET_ENCODING, ENCODINGS, TokenEncoding

__all__ = [
    "DEFAULT_POOL",
    "MATCH_RETRIEVERS",
    "MAX_FETCH",
    "MAX_MAX_TOKENS",
    "MIN_MAX_TOKENS",
    "QUERY_EMBEDDING_MAX_RETRIES",
    "QUERY_EMBEDDING_TIMEOUT_SECONDS",
    "RANKINGS",
    "VECTOR_COOLDOWN_SECONDS",
    "MatchRetriever",
    "Ranking",
    "SearchOptions",
    "check_max_tokens",
    "clamp_limit",
    "fetch_depth",
]

Ranking = Literal["default", "original"]  # ours (docs/ranking.md) or the upstream recipe
# the match and phrase retrievers: "memory" (lexical_index.py, the scores of the ranking's LanceDB
# without a LanceDB query) or "lancedb" (the table's full-text indexes)
MatchRetriever = Literal["memory", "lancedb"]
RANKINGS: tuple[Ranking, ...] = get_args(Ranking)
MATCH_RETRIEVERS: tuple[MatchRetriever, ...] = get_args(MatchRetriever)
MAX_FETCH = 5000
DEFAULT_POOL = 200  # rows per retriever of the default ranking's first pool (docs/ranking.md)
VECTOR_COOLDOWN_SECONDS = 60.0
QUERY_EMBEDDING_TIMEOUT_SECONDS = 5.0  # per request; a query never waits on a slow embedding API for long
QUERY_EMBEDDING_MAX_RETRIES = 1
MIN_MAX_TOKENS = 200  # room for a delimiter, a block and the notice, or one hit and a cursor
MAX_MAX_TOKENS = 1_000_000


@dataclass(frozen=True)
class SearchOptions:
    """Ranking and runtime knobs of the engine (server flags map onto these)."""

    proximity_weight: float = 1.25
    phrase_slop: int = 0
    vector_weight: float = 1.0
    match_weight: float = 1.0
    cursor_secret: str | None = None
    ranking: Ranking = "default"
    query_embedding_api_key: str | None = None
    query_embedding_base_url: str | None = None
    vector_cooldown_seconds: float = VECTOR_COOLDOWN_SECONDS
    query_embedding_timeout_seconds: float = QUERY_EMBEDDING_TIMEOUT_SECONDS
    match_retriever: MatchRetriever = "memory"
    # the tokenizer that counts max_tokens budgets (docs_mcp_core.tokens.ENCODINGS)
    token_encoding: TokenEncoding = BUDGET_ENCODING

    def check(self) -> None:
        """Raise :class:`~docs_mcp_core.errors.SearchOptionsError` for a ranking, match retriever or
        token encoding that does not exist (the types say which values exist; a caller that does
        not check types still gets a clear message)."""
        if self.ranking not in RANKINGS:
            raise SearchOptionsError(
                f"unknown ranking '{self.ranking}'. Valid rankings: {', '.join(RANKINGS)}"
            )
        if self.match_retriever not in MATCH_RETRIEVERS:
            raise SearchOptionsError(
                f"unknown match retriever '{self.match_retriever}'. "
                f"Valid retrievers: {', '.join(MATCH_RETRIEVERS)}"
            )
        if self.token_encoding not in ENCODINGS:
            raise SearchOptionsError(
                f"unknown token encoding '{self.token_encoding}'. Valid encodings: {', '.join(ENCODINGS)}"
            )


def clamp_limit(limit: Any) -> int:
    """A page size between 1 and 50 (10 when ``limit`` is not an integer)."""
    if not isinstance(limit, int) or isinstance(limit, bool):
        return 10
    return max(1, min(50, limit))


def check_max_tokens(max_tokens: int | None) -> int | None:
    """``max_tokens`` when it is ``None`` or within the allowed range, else a :class:`SearchError`
    (the budget itself is :mod:`~docs_mcp_core.search.budget`'s, imported only when one is asked for)."""
    if max_tokens is None:
        return None
    if type(max_tokens) is not int or not MIN_MAX_TOKENS <= max_tokens <= MAX_MAX_TOKENS:
        raise SearchError(f"max_tokens must be between {MIN_MAX_TOKENS} and {MAX_MAX_TOKENS}")
    return max_tokens


def fetch_depth(offset: int, page_size: int, *, rescored: bool) -> int:
    """How many rows each retriever returns for the page at ``offset``.

    The original recipe fetches ``max(offset + limit + 200, 5 * limit)``, as the original does.
    The default ranking re-scores the pool with priors and cues (``rescored``), which can lift a row
    from deep in BM25 order to the top; a pool that grew with the offset would then let pages repeat
    or skip hits. It therefore ranks every page from the same pool of :data:`DEFAULT_POOL` rows,
    continued, for a page beyond that ranking's end, by a ranking of :data:`MAX_FETCH` rows per leg
    (:meth:`~docs_mcp_core.search.ranker.Ranker.extend`).
    """
    if not rescored:
        return min(max(offset + page_size + 200, page_size * 5), MAX_FETCH)
    return DEFAULT_POOL
