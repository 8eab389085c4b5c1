"""What a run produces, and its JSON form.

The JSON keeps the original harness's camelCase layout (``summary``, ``metadata``, ``rankedCases``,
``stats``, optional ``deltaMarkdown``) so result files are interchangeable: a file written by either
harness works as the other's ``--baseline``. Our additions sit beside the original keys and are ignored
by the original: ``summary.filterLeakRate``, ``stats.returnedHits``/``stats.leakedHits``,
``categoryBreakdown``, ``misses`` and a few per-case fields (``query``, ``filters``, ``returnedHits``,
``leakedChunkIds``).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TOP_K = 5
"""Cut-off of every quality metric (MRR@5, NDCG@5, facet precision)."""


@dataclass(kw_only=True)
class RankedCase:
    """The outcome of one case: every distinct chunk id the server returned, in order."""

    expected_chunk_id: str
    ranked_chunk_ids: list[str]
    """Distinct chunk ids over all rounds, in the order the server returned them."""
    rounds_to_right_doc: int
    """Rounds used when the expected chunk was found, else the round budget + 1."""
    name: str | None = None
    category: str | None = None
    query: str | None = None
    filters: dict[str, str] = field(default_factory=dict)
    returned_hits: int = 0
    """Hits returned over all rounds (duplicates included); the denominator of the leak rate."""
    leaked_chunk_ids: list[str] = field(default_factory=list)
    """Returned hits whose metadata violates the case's filters (one entry per leaking hit)."""
    tokens_read: int | None = None
    """``o200k_base`` tokens of every answer the case read: its search pages up to the one with the
    expected chunk, and the ``get_doc`` answer (all its pages when the chunk never came)."""
    doc_cut: bool | None = None
    """Whether the ``get_doc`` answer was cut to the budget (it ends with the cursor of the rest);
    ``None`` when the case never called ``get_doc``."""
    section_whole: bool | None = None
    """With ``scope: "section"``: whether ``get_doc`` returned the chunk's section in one call
    (not cut to the budget); ``None`` otherwise."""

    def label(self, index: int) -> str:
        """The case's name, or ``case-<index>`` like the original."""
        return self.name if self.name is not None else f"case-{index}"

    @property
    def passed(self) -> bool:
        """Whether the expected chunk is in the top :data:`TOP_K`."""
        return self.expected_chunk_id in self.ranked_chunk_ids[:TOP_K]

    @property
    def rank(self) -> int | None:
        """1-based position of the expected chunk among all returned ids, ``None`` if never returned."""
        try:
            return self.ranked_chunk_ids.index(self.expected_chunk_id) + 1
        except ValueError:
            return None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "expectedChunkId": self.expected_chunk_id,
            "rankedChunkIds": list(self.ranked_chunk_ids),
            "roundsToRightDoc": self.rounds_to_right_doc,
        }
        if self.name is not None:
            data["name"] = self.name
        if self.category is not None:
            data["category"] = self.category
        if self.query is not None:
            data["query"] = self.query
        data["filters"] = dict(self.filters)
        data["returnedHits"] = self.returned_hits
        data["leakedChunkIds"] = list(self.leaked_chunk_ids)
        if self.tokens_read is not None:
            data["tokensRead"] = self.tokens_read
        if self.doc_cut is not None:
            data["docCut"] = self.doc_cut
        if self.section_whole is not None:
            data["sectionWhole"] = self.section_whole
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RankedCase:
        """Read a case written by either harness; raise ``ValueError`` on a wrong shape."""
        expected = data.get("expectedChunkId")
        ranked = data.get("rankedChunkIds")
        if not isinstance(expected, str):
            raise ValueError("expectedChunkId must be a string")
        if not isinstance(ranked, list) or not all(isinstance(item, str) for item in ranked):
            raise ValueError("rankedChunkIds must be an array of strings")
        rounds = data.get("roundsToRightDoc", 0)
        name = data.get("name")
        category = data.get("category")
        query = data.get("query")
        filters = data.get("filters")
        leaked = data.get("leakedChunkIds")
        returned = data.get("returnedHits", 0)
        tokens = data.get("tokensRead")
        whole = data.get("sectionWhole")
        doc_cut = data.get("docCut")
        return cls(
            expected_chunk_id=expected,
            ranked_chunk_ids=list(ranked),
            rounds_to_right_doc=rounds if isinstance(rounds, int) else 0,
            name=name if isinstance(name, str) else None,
            category=category if isinstance(category, str) else None,
            query=query if isinstance(query, str) else None,
            filters={str(k): str(v) for k, v in filters.items()} if isinstance(filters, dict) else {},
            returned_hits=returned if isinstance(returned, int) else 0,
            leaked_chunk_ids=[str(item) for item in leaked] if isinstance(leaked, list) else [],
            tokens_read=tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None,
            doc_cut=doc_cut if isinstance(doc_cut, bool) else None,
            section_whole=whole if isinstance(whole, bool) else None,
        )


@dataclass(kw_only=True)
class EvalSummary:
    """The headline numbers of a run, each rounded to 6 decimals."""

    mrr_at_5: float
    ndcg_at_5: float
    avg_rounds_to_right_doc: float
    facet_precision: float
    """Share of cases whose expected chunk is in the top 5 (a hit rate, as in the original)."""
    search_p50_ms: float
    search_p95_ms: float
    get_doc_p50_ms: float
    build_time_ms: float
    peak_rss_mb: float
    filter_leak_rate: float = 0.0
    """Share of returned hits that violate their case's filters; a correct server scores 0."""
    tokens_to_right_doc_p50: float = 0.0
    """Median of the tokens read until the expected chunk arrived, over the cases that found it."""
    tokens_read_total: float = 0.0
    """Tokens of every answer read in the run."""
    get_doc_cut_rate: float = 0.0
    """Share of ``get_doc`` answers cut to the budget (0 without one)."""
    section_whole_rate: float | None = None
    """With ``scope: "section"``: share of found cases whose section came whole in one call."""
    startup_ms: float = 0.0
    """From spawning the server to the end of the MCP handshake."""
    first_search_ms: float = 0.0
    """From spawning the server to its first search answer (what an agent that spawns a server
    per session waits for its first question)."""

    def to_json(self) -> dict[str, float]:
        data = {
            "mrrAt5": self.mrr_at_5,
            "ndcgAt5": self.ndcg_at_5,
            "avgRoundsToRightDoc": self.avg_rounds_to_right_doc,
            "facetPrecision": self.facet_precision,
            "searchP50Ms": self.search_p50_ms,
            "searchP95Ms": self.search_p95_ms,
            "getDocP50Ms": self.get_doc_p50_ms,
            "buildTimeMs": self.build_time_ms,
            "peakRssMb": self.peak_rss_mb,
            "filterLeakRate": self.filter_leak_rate,
            "tokensToRightDocP50": self.tokens_to_right_doc_p50,
            "tokensReadTotal": self.tokens_read_total,
            "getDocCutRate": self.get_doc_cut_rate,
            "startupMs": self.startup_ms,
            "firstSearchMs": self.first_search_ms,
        }
        if self.section_whole_rate is not None:
            data["sectionWholeRate"] = self.section_whole_rate
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EvalSummary:
        """Read a summary leniently: missing or non-numeric values become 0 (as the original does)."""

        def num(key: str) -> float:
            value = data.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return 0.0
            try:
                number = float(value)  # an integer of 400 digits is no float: OverflowError
            except OverflowError:
                return 0.0
            return number if math.isfinite(number) else 0.0

        return cls(
            mrr_at_5=num("mrrAt5"),
            ndcg_at_5=num("ndcgAt5"),
            avg_rounds_to_right_doc=num("avgRoundsToRightDoc"),
            facet_precision=num("facetPrecision"),
            search_p50_ms=num("searchP50Ms"),
            search_p95_ms=num("searchP95Ms"),
            get_doc_p50_ms=num("getDocP50Ms"),
            build_time_ms=num("buildTimeMs"),
            peak_rss_mb=num("peakRssMb"),
            filter_leak_rate=num("filterLeakRate"),
            tokens_to_right_doc_p50=num("tokensToRightDocP50"),
            tokens_read_total=num("tokensReadTotal"),
            get_doc_cut_rate=num("getDocCutRate"),
            section_whole_rate=num("sectionWholeRate") if "sectionWholeRate" in data else None,
            startup_ms=num("startupMs"),
            first_search_ms=num("firstSearchMs"),
        )


@dataclass(kw_only=True)
class CategoryBreakdown:
    """Quality metrics of the cases sharing one category."""

    category: str
    case_count: int
    facet_precision: float
    mrr_at_5: float
    ndcg_at_5: float

    def to_json(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "caseCount": self.case_count,
            "facetPrecision": self.facet_precision,
            "mrrAt5": self.mrr_at_5,
            "ndcgAt5": self.ndcg_at_5,
        }


@dataclass(kw_only=True)
class EvalStats:
    """The raw measurements behind the summary."""

    search_latencies_ms: list[float] = field(default_factory=list)
    get_doc_latencies_ms: list[float] = field(default_factory=list)
    build_time_ms: float = 0.0
    peak_rss_mb: float = 0.0
    returned_hits: int = 0
    leaked_hits: int = 0
    startup_ms: float = 0.0
    first_search_ms: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "searchLatenciesMs": list(self.search_latencies_ms),
            "getDocLatenciesMs": list(self.get_doc_latencies_ms),
            "buildTimeMs": self.build_time_ms,
            "peakRssMb": self.peak_rss_mb,
            "startupMs": self.startup_ms,
            "firstSearchMs": self.first_search_ms,
            "returnedHits": self.returned_hits,
            "leakedHits": self.leaked_hits,
        }


@dataclass(kw_only=True)
class Miss:
    """A case whose expected chunk was not in the top 5, with what came back instead."""

    name: str
    category: str | None
    query: str | None
    expected_chunk_id: str
    rank: int | None
    """Where the expected chunk eventually showed up (beyond 5, on a later page), or ``None``."""
    top_chunk_ids: list[str]
    """The first three ids the server returned."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "category": self.category,
            "query": self.query,
            "expectedChunkId": self.expected_chunk_id,
            "rank": self.rank,
            "topChunkIds": list(self.top_chunk_ids),
        }


@dataclass(kw_only=True)
class EvalResult:
    """Everything one run measured, ready to render or to save as JSON."""

    summary: EvalSummary
    ranked_cases: list[RankedCase]
    stats: EvalStats
    category_breakdown: list[CategoryBreakdown]
    misses: list[Miss]
    metadata: dict[str, Any] = field(
        default_factory=lambda: {"deterministic": True, "provider": None, "model": None}
    )
    delta_markdown: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "summary": self.summary.to_json(),
            "metadata": dict(self.metadata),
            "rankedCases": [case.to_json() for case in self.ranked_cases],
            "stats": self.stats.to_json(),
            "categoryBreakdown": [row.to_json() for row in self.category_breakdown],
            "misses": [miss.to_json() for miss in self.misses],
        }
        if self.delta_markdown is not None:
            data["deltaMarkdown"] = self.delta_markdown
        return data


def unwritable(path: Path) -> str | None:
    """Why no file can ever be written at ``path`` (a name too long, a loop of symbolic links, a file
    on its path), or None: checked before a run, as ``Path.is_dir`` raised the first (a traceback)
    and the others were said only once every case had run."""
    try:
        path.stat()
    except FileNotFoundError:
        return None  # a new file
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def write_json_file(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON to ``path``, whole or not at all: into a new file beside it
    (created as any new file is, 0666 less the umask), flushed to disk, then renamed over it. A
    file already there (a result kept as a baseline) stays as it was when the write fails: written
    in place, a full disk left half of the new result over it. Raises ``OSError``."""
    target = Path(os.path.realpath(path))  # a link is written through, as before
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    partial = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
    with os.fdopen(os.open(partial, flags, 0o666), "w", encoding="utf-8") as handle:
        try:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        except BaseException:
            with contextlib.suppress(OSError):
                partial.unlink()
            raise
    try:
        os.replace(partial, target)
    except BaseException:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise
