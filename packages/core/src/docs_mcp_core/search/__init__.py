"""Search over a docs-mcp index: the engine front and the parts a request goes through.

:class:`SearchEngine` (:mod:`.engine`) opens an index and answers ``search`` and ``get_doc``.
The parts, in the order a search uses them:

* :mod:`.query`: the query, read once per request (:class:`Query`);
* :mod:`.filters`: which filters apply, and the filter rule as SQL, per chunk and as a row mask;
* :mod:`.cursor`: signed pagination cursors;
* :mod:`.retrieval`, :mod:`.legs`, :mod:`.vector_leg`: the match, phrase and vector legs;
* :mod:`.lexical_index` with :mod:`.analyzer`: BM25 in memory, scoring as LanceDB does;
* :mod:`.vector_matrix`: exact nearest neighbours in memory;
* :mod:`.row_catalog`: every row's ranking attributes (and display text) as arrays;
* :mod:`.ranker`: the legs ranked into the ordered rows (contributions, multipliers, order);
* :mod:`.rows`: the display columns of rows, by position (from memory or the table);
* :mod:`.facets`: how the top candidates spread over the taxonomy values;
* :mod:`.hits` with :mod:`.snippet`: the page of hits, or the zero-result hint;
* :mod:`.budget`: an answer fitted to a token budget;
* :mod:`.documents`: a chunk with its neighbours, a whole file;
* :mod:`.highlight`: which characters of a shown text the search matched (:func:`match_spans`).

:mod:`.options` holds :class:`SearchOptions` and a request's limits. The ranking features the build
computes from the text are in :mod:`docs_mcp_core.ranking`.
"""

from typing import TYPE_CHECKING

from docs_mcp_core.lazy_exports import lazy_exports
from docs_mcp_core.search.engine import SearchEngine
from docs_mcp_core.search.hits import SearchHit, SearchResult
from docs_mcp_core.search.options import (
    DEFAULT_POOL,
    MATCH_RETRIEVERS,
    MAX_FETCH,
    RANKINGS,
    SearchOptions,
    clamp_limit,
)
from docs_mcp_core.search.query import MAX_QUERY_CHARS, MAX_QUERY_TERMS, Query, check_query
from docs_mcp_core.search.ranker import RRF_K

if TYPE_CHECKING:
    from docs_mcp_core.search.documents import is_chunk_id_format
    from docs_mcp_core.search.highlight import match_spans

# imported on first use: answering a search needs neither module
_LAZY = {
    "is_chunk_id_format": "docs_mcp_core.search.documents",
    "match_spans": "docs_mcp_core.search.highlight",
}

__all__ = [
    "DEFAULT_POOL",
    "MATCH_RETRIEVERS",
    "MAX_FETCH",
    "MAX_QUERY_CHARS",
    "MAX_QUERY_TERMS",
    "RANKINGS",
    "RRF_K",
    "Query",
    "SearchEngine",
    "SearchHit",
    "SearchOptions",
    "SearchResult",
    "check_query",
    "clamp_limit",
    "is_chunk_id_format",
    "match_spans",
]


__getattr__ = lazy_exports(__name__, _LAZY)
