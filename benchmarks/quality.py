"""In-process retrieval quality: ``uv run python benchmarks/quality.py --index-dir DIR --cases FILE``.

Runs every case the way the original eval harness does, but against
:class:`~docs_mcp_core.search.SearchEngine` directly: ``search(query, limit, filters)``, then follow
``next_cursor`` for up to ``maxRounds`` pages, stopping at the page that holds the expected chunk.
The distinct chunk ids seen, in order, are the case's ranking; MRR@5, NDCG@5 and "facet precision"
(share of cases whose expected chunk is among the first five of them, which is the first page at
the usual ``limit`` 5) are computed by ``docs_mcp_eval.metrics`` with the original's definitions,
overall and per category, together with the average rounds to the right chunk and the filter leak
rate (hits that violate the case's filters; must be 0).

``--ranking original`` measures the upstream recipe; ``--misses`` lists the cases not in the top 5.

Target (issue 3): MRR@5 within the original's range on the sdk-docs dev set (0.469-0.483).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from docs_mcp_core.search import RANKINGS, SearchEngine, SearchOptions
from docs_mcp_core.search.filters import matches_filters
from docs_mcp_eval.cases import EvalCase, load_cases
from docs_mcp_eval.metrics import (
    avg_rounds_to_right_doc,
    category_breakdown,
    facet_precision,
    mrr_at_k,
    ndcg_at_k,
    rounds_to_right_doc,
)
from docs_mcp_eval.results import RankedCase

ORIGINAL = {"MRR@5": 0.474, "NDCG@5": 0.526, "facet precision": 0.683, "avg rounds": 1.57}
ORIGINAL_MRR_BY_CATEGORY = {
    "clarification": 0.44,
    "cross-service": 0.62,
    "distractor": 0.40,
    "exact-name": 0.65,
    "natural-language": 0.28,
    "workflow": 0.45,
}


def run_case(engine: SearchEngine, case: EvalCase) -> RankedCase:
    """Walk up to ``max_rounds`` pages like the original harness; record every distinct id seen."""
    filters = dict(case.filters)
    keys = list(engine.metadata.taxonomy)
    ranked: list[str] = []
    seen: set[str] = set()
    returned = 0
    leaked: list[str] = []
    cursor: str | None = None
    rounds = 0
    found = False
    while rounds < case.max_rounds:
        rounds += 1
        result = engine.search(case.query, limit=case.limit, filters=filters, cursor=cursor)
        returned += len(result.hits)
        for hit in result.hits:
            if not matches_filters(hit.metadata, filters, keys):
                leaked.append(hit.chunk_id)
            if hit.chunk_id not in seen:
                seen.add(hit.chunk_id)
                ranked.append(hit.chunk_id)
        if any(hit.chunk_id == case.expected_chunk_id for hit in result.hits):
            found = True
            break
        cursor = result.next_cursor
        if cursor is None:
            break
    return RankedCase(
        expected_chunk_id=case.expected_chunk_id,
        ranked_chunk_ids=ranked,
        rounds_to_right_doc=rounds_to_right_doc(
            found=found, rounds_executed=rounds, max_rounds=case.max_rounds
        ),
        name=case.name,
        category=case.category,
        query=case.query,
        filters=filters,
        returned_hits=returned,
        leaked_chunk_ids=leaked,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Measure retrieval quality in process over an eval case file."
    )
    parser.add_argument("--index-dir", type=Path, required=True, help="folder written by docs-mcp build")
    parser.add_argument("--cases", type=Path, required=True, help="eval cases (cases.json format)")
    parser.add_argument(
        "--ranking", choices=RANKINGS, default="default", help="ranking recipe (default: default)"
    )
    parser.add_argument(
        "--misses", action="store_true", help="list the cases whose chunk is not in the top 5"
    )
    args = parser.parse_args(argv)

    engine = SearchEngine.open(args.index_dir, options=SearchOptions(ranking=args.ranking))
    cases = load_cases(args.cases)
    if not cases:
        print("error: no cases", file=sys.stderr)
        return 2
    ranked = [run_case(engine, case) for case in cases]
    returned = sum(c.returned_hits for c in ranked)
    leaks = sum(len(c.leaked_chunk_ids) for c in ranked)
    figures = {
        "MRR@5": mrr_at_k(ranked),
        "NDCG@5": ndcg_at_k(ranked),
        "facet precision": facet_precision(ranked),
        "avg rounds": avg_rounds_to_right_doc(ranked),
    }
    print(f"index: {args.index_dir} ({engine.metadata.stats.total_chunks:,} chunks), ranking {args.ranking}")
    print(f"cases: {args.cases} ({len(cases)})\n")
    print(f"| {'metric':<16} | {'this run':>8} | {'original':>8} |")
    print(f"| {'-' * 16} | {'-' * 7}: | {'-' * 7}: |")
    for name, value in figures.items():
        print(f"| {name:<16} | {value:>8.3f} | {ORIGINAL[name]:>8.3f} |")
    print(f"| {'filter leak rate':<16} | {leaks / returned if returned else 0.0:>8.3f} | {'-':>8} |")
    print()
    print(
        f"| {'category':<16} | {'cases':>5} | {'MRR@5':>6} | {'NDCG@5':>6} | {'top 5':>6} | {'orig MRR':>8} |"
    )
    print(f"| {'-' * 16} | {'-' * 4}: | {'-' * 5}: | {'-' * 5}: | {'-' * 5}: | {'-' * 7}: |")
    for row in category_breakdown(ranked):
        orig = ORIGINAL_MRR_BY_CATEGORY.get(row.category)
        print(
            f"| {row.category:<16} | {row.case_count:>5} | {row.mrr_at_5:>6.3f} | {row.ndcg_at_5:>6.3f} | "
            f"{row.facet_precision:>6.3f} | {f'{orig:.2f}' if orig is not None else '-':>8} |"
        )
    if args.misses:
        print("\nnot in the top 5:")
        for index, (case, result) in enumerate(zip(cases, ranked, strict=True)):
            if not result.passed:
                rank = result.rank
                print(
                    f"- {case.label(index)} [{case.category}] rank {rank or 'N/F'}: expected {case.expected_chunk_id}"
                )
                print(f"    got {', '.join(result.ranked_chunk_ids[:3])}")
    engine.close()
    return 0 if leaks == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
