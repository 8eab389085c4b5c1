"""A search against one plain LanceDB query on the same index: ``uv run python
benchmarks/vs_lancedb.py --index-dir DIR [--index-dir DIR2 ...]``.

What a docs-mcp search costs, as a ratio to the cheapest thing a LanceDB user would run instead:
one full-text query of the table, ``table.search(query, query_type="fts", fts_columns=
"content_text").limit(limit)``, with the case's filters as a prefilter ``WHERE`` clause, the rows'
``chunk_id`` and ``heading`` returned. Both run in this process on the same index: the plain query
through LanceDB's synchronous API, the search through :meth:`SearchEngine.search` (legs, ranking,
snippets, the page of hits: everything but the MCP transport). Every development case (both sdk-docs
sets by default) runs both ways, one after the other, the order swapped each round; a first
round is timed apart (each query's first sight: the heading leg's model embeds it, where
later rounds find its vector among the last 256 queries'); ``--rounds`` more rounds. Printed per
index and per kind of round: p50 / p95 of the wall time and of the process's
CPU time per query (LanceDB's own threads included), requests per second per core, and the ratios
of the search to the plain query. Ratios taken in one run hold across machines; the milliseconds do
not.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server_stdio import DEFAULT_CASES, percentile

from docs_mcp_core.search import SearchEngine

DEV2_CASES = DEFAULT_CASES.with_name("sdk-docs-dev2-cases.json")


def _where(filters: dict[str, str]) -> str | None:
    """The case's filters as a SQL prefilter (values from the case files, quotes doubled)."""
    if not filters:
        return None
    return " AND ".join(
        f"{key} = '{value.replace(chr(39), chr(39) * 2)}'" for key, value in sorted(filters.items())
    )


def _plain(table: Any, case: dict[str, Any]) -> int:
    query = table.search(case["query"], query_type="fts", fts_columns="content_text")
    where = _where(case.get("filters") or {})
    if where:
        query = query.where(where, prefilter=True)
    rows = query.limit(case.get("limit") or 5).select(["chunk_id", "heading", "_score"]).to_list()
    return len(rows)


def _ours(engine: SearchEngine, case: dict[str, Any]) -> int:
    return len(
        engine.search(case["query"], limit=case.get("limit") or 5, filters=case.get("filters") or None).hits
    )


def _timed(run: Any) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def measure(index: Path, cases: list[dict[str, Any]], rounds: int) -> None:
    import lancedb

    engine = SearchEngine.open(index)
    table = lancedb.connect(str(index / engine.metadata.index.path)).open_table(engine.metadata.index.table)
    try:
        engine.warm()
        times: dict[str, list[tuple[float, float]]] = {
            "plain": [],
            "search": [],
            "plain 1st": [],
            "search 1st": [],
        }
        for round_ in range(rounds + 1):
            for case in cases:
                order = ("plain", "search") if round_ % 2 else ("search", "plain")
                for name in order:
                    run = (
                        (lambda c=case: _plain(table, c))
                        if name == "plain"
                        else (lambda c=case: _ours(engine, c))
                    )
                    # the first round is each query's first sight: the heading leg's model embeds it,
                    # where later rounds find its vector among the last 256 queries'
                    times[name if round_ else f"{name} 1st"].append(_timed(run))
    finally:
        engine.close()
    print(f"{index}: {len(cases)} cases, a first round and {rounds} more, interleaved")
    figures: dict[str, tuple[float, float, float, float]] = {}
    labels = (
        ("plain 1st", "LanceDB query, first round"),
        ("search 1st", "docs-mcp search, first round"),
        ("plain", "one LanceDB full-text query"),
        ("search", "docs-mcp search"),
    )
    for name, label in labels:
        wall = [w for w, _ in times[name]]
        cpu = [c for _, c in times[name]]
        figures[name] = (
            percentile(wall, 0.5),
            percentile(wall, 0.95),
            percentile(cpu, 0.5),
            percentile(cpu, 0.95),
        )
        per_core = 1000.0 / statistics.fmean(cpu) if statistics.fmean(cpu) else 0.0
        p50, p95, c50, c95 = figures[name]
        print(
            f"  {label:<28} wall p50 {p50:6.2f} ms  p95 {p95:6.2f} ms   cpu p50 {c50:6.2f} ms  p95 {c95:6.2f} ms"
            f"   {per_core:5.0f} req/s/core"
        )
    for suffix, what in (("", "repeated queries"), (" 1st", "first round")):
        ours, plain = figures[f"search{suffix}"], figures[f"plain{suffix}"]
        print(
            f"  search / plain query, {what}: wall p50 x{ours[0] / plain[0]:.2f}  p95 x{ours[1] / plain[1]:.2f}"
            f"   cpu p50 x{ours[2] / plain[2]:.2f}  p95 x{ours[3] / plain[3]:.2f}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description="A docs-mcp search against one plain LanceDB query.")
    parser.add_argument("--index-dir", type=Path, action="append", required=True, help="an index folder")
    parser.add_argument(
        "--cases", type=Path, action="append", help="case files (default: sdk-docs dev and dev2)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds over the cases (default 3)")
    args = parser.parse_args()
    cases: list[dict[str, Any]] = []
    for path in args.cases or [DEFAULT_CASES, DEV2_CASES]:
        cases.extend(json.loads(path.read_text(encoding="utf-8")))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} cores, load {load:.1f}")
    for index in args.index_dir:
        measure(index, cases, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
