"""Ranking stability under harmless rewordings: ``uv run python benchmarks/query_variants.py
--index-dir DIR --cases FILE [--cases FILE ...]``.

Agents do not ask the way evaluation cases are written: they end a question with a question mark,
quote it, put names in backticks, name the product or language they also filter on, or start with
``how do I``. Each variant below rewrites every
case's query (``--variants`` picks some) and searches again, in process, with the case's filters;
the script prints MRR@5 of the plain queries and of each variant, and how many cases ranked their
expected chunk lower or higher than the plain query did, with the first few that moved. A variant
that changes nothing a reader meant should move no case; one that adds words (``how do I``,
``I want to``) may.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

from docs_mcp_core.search import SearchEngine, SearchOptions
from docs_mcp_eval.cases import EvalCase, load_cases

_ASKING = re.compile(r"(how|what|where|which|why|when|is|are|can|does|do|i|my|we)\b", re.IGNORECASE)
_NAME = re.compile(r"\S*(?:[._/]|[a-z][A-Z])\S*")


def _ticks(query: str) -> str:
    """Names (dotted, slashed, camelCase) in backticks."""
    return _NAME.sub(lambda m: f"`{m.group(0)}`", query)


def _asked(prefix: str) -> Callable[[str], str]:
    """``prefix`` before a query of three words or more that does not already ask (``how do I`` +
    ``rename a tag``; a topic, ``lockfile``, is no action to want)."""
    return lambda query: query if _ASKING.match(query) or len(query.split()) < 3 else f"{prefix} {query}"


def _restated(query: str, case: EvalCase) -> str:
    """The case's filter values named before its query (``Python, Dub: folders``), as a reader
    who filters also says what they filter on; the query itself when the case has no filter."""
    values = [v[:1].upper() + v[1:] for v in dict(case.filters).values() if v]
    return f"{', '.join(values)}: {query}" if values else query


def _plain(rewrite: Callable[[str], str]) -> Callable[[str, EvalCase], str]:
    return lambda query, _case: rewrite(query)


VARIANTS: dict[str, Callable[[str, EvalCase], str]] = {
    "question-mark": _plain(lambda q: q.rstrip("?.! ") + "?"),
    "quoted": _plain(lambda q: f'"{q}"'),
    "backticks": _plain(_ticks),
    "capitalised": _plain(lambda q: q[:1].upper() + q[1:]),
    "filters-named": _restated,
    "how-do-i": _plain(_asked("how do I")),
    "how-to": _plain(_asked("how to")),
    "i-want-to": _plain(_asked("I want to")),
}
MOVED_SHOWN = 3


def rank_of(engine: SearchEngine, case: EvalCase, query: str) -> int | None:
    """1-based rank of the case's expected chunk in the first five hits for ``query``."""
    hits = engine.search(query, limit=5, filters=dict(case.filters)).hits
    ids = [hit.chunk_id for hit in hits]
    return ids.index(case.expected_chunk_id) + 1 if case.expected_chunk_id in ids else None


def mrr(ranks: list[int | None]) -> float:
    return sum(1 / r for r in ranks if r) / len(ranks) if ranks else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Ranking stability under harmless rewordings of the queries."
    )
    parser.add_argument("--index-dir", type=Path, required=True, help="folder written by docs-mcp build")
    parser.add_argument("--cases", type=Path, action="append", required=True, help="eval cases (repeat)")
    parser.add_argument(
        "--variants",
        default=",".join(VARIANTS),
        help=f"comma-separated, of: {', '.join(VARIANTS)} (default: all)",
    )
    args = parser.parse_args(argv)
    chosen = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in chosen if v not in VARIANTS]
    if unknown:
        print(
            f"error: unknown variant(s) {', '.join(unknown)}; choose from {', '.join(VARIANTS)}",
            file=sys.stderr,
        )
        return 2
    cases = [case for path in args.cases for case in load_cases(path)]
    if not cases:
        print("error: no cases", file=sys.stderr)
        return 2
    engine = SearchEngine.open(args.index_dir, options=SearchOptions())
    plain = [rank_of(engine, case, case.query) for case in cases]
    print(f"index: {args.index_dir}; {len(cases)} cases; plain queries MRR@5 {mrr(plain):.3f}\n")
    print(f"| {'variant':<13} | {'MRR@5':>6} | {'lower':>5} | {'higher':>6} |")
    print(f"| {'-' * 13} | {'-' * 5}: | {'-' * 4}: | {'-' * 5}: |")
    moved: dict[str, list[str]] = {}
    for name in chosen:
        rewrite = VARIANTS[name]
        ranks = [rank_of(engine, case, rewrite(case.query, case)) for case in cases]
        lower = [i for i, (a, b) in enumerate(zip(plain, ranks, strict=True)) if (b or 6) > (a or 6)]
        higher = sum((b or 6) < (a or 6) for a, b in zip(plain, ranks, strict=True))
        print(f"| {name:<13} | {mrr(ranks):>6.3f} | {len(lower):>5} | {higher:>6} |")
        moved[name] = [
            f"{rewrite(cases[i].query, cases[i])!r}: {plain[i] or '-'} -> {ranks[i] or '-'}"
            for i in lower[:MOVED_SHOWN]
        ]
    for name, lines in moved.items():
        if lines:
            print(
                f"\n{name}, ranked lower (rank of the plain query -> of the variant; - : not in the top 5):"
            )
            for line in lines:
                print(f"  {line}")
    engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
