"""The provider comparison report of ``docs-mcp-eval benchmark`` (Markdown).

The original's layout: a ``## Summary`` table with one column per provider (MRR@5, NDCG@5 and facet
precision with 4 decimals, search p50/p95 and peak RSS with 1, build time with 0, index size as
``X.XMB``/``NKB`` with the corpus size in the row label, embedding and query cost estimates), then
``## Per-Category Facet Precision`` and ``## Per-Category MRR@5`` (``-`` where a provider has no case of
that category). Three rows of ours follow the original's: the index size as a multiple of the corpus,
get_doc p50 and the filter leak rate.
"""

from __future__ import annotations

from collections.abc import Callable

from docs_mcp_eval.benchmark import CHARS_PER_TOKEN, QUERY_TOKENS, BenchmarkEntry, BenchmarkResult
from docs_mcp_eval.formatting import format_size, to_fixed
from docs_mcp_eval.metrics import category_sort_key
from docs_mcp_eval.report import cell

NO_RESULTS = "No benchmark results available."


def embed_cost(entry: BenchmarkEntry) -> str:
    if entry.cost_per_million_tokens == 0:
        return "$0"
    tokens = entry.corpus_size_bytes / CHARS_PER_TOKEN
    return f"${to_fixed(tokens / 1_000_000 * entry.cost_per_million_tokens, 4)}"


def query_cost(entry: BenchmarkEntry) -> str:
    if entry.cost_per_million_tokens == 0:
        return "$0"
    return f"${to_fixed(QUERY_TOKENS / 1_000_000 * entry.cost_per_million_tokens, 6)}"


def render_benchmark_markdown(result: BenchmarkResult) -> str:
    """Render the comparison tables, or :data:`NO_RESULTS` when no provider produced a result."""
    entries = result.embeddings
    if not entries:
        return NO_RESULTS
    labels = [cell(entry.embedding.label) for entry in entries]
    header = [f"| Metric | {' | '.join(labels)} |", f"| --- | {' | '.join('---:' for _ in labels)} |"]

    def row(label: str, render: Callable[[BenchmarkEntry], str]) -> str:
        return f"| {label} | {' | '.join(render(entry) for entry in entries)} |"

    lines = ["## Summary", "", *header]
    lines += [
        row("MRR@5", lambda e: to_fixed(e.output.summary.mrr_at_5, 4)),
        row("NDCG@5", lambda e: to_fixed(e.output.summary.ndcg_at_5, 4)),
        row("Facet Precision", lambda e: to_fixed(e.output.summary.facet_precision, 4)),
        row("Search p50 (ms)", lambda e: to_fixed(e.output.summary.search_p50_ms, 1)),
        row("Search p95 (ms)", lambda e: to_fixed(e.output.summary.search_p95_ms, 1)),
        row("Build Time (ms)", lambda e: to_fixed(e.output.summary.build_time_ms, 0)),
        row("Peak RSS (MB)", lambda e: to_fixed(e.output.summary.peak_rss_mb, 1)),
        row(
            f"Index Size (corpus {format_size(entries[0].corpus_size_bytes)})",
            lambda e: format_size(e.index_size_bytes),
        ),
        row("Embed Cost (est.)", embed_cost),
        row("Query Cost (est.)", query_cost),
        row("Index Size / Corpus", lambda e: f"{to_fixed(e.index_size_multiple, 2)}x"),
        row("Get Doc p50 (ms)", lambda e: to_fixed(e.output.summary.get_doc_p50_ms, 1)),
        row("Filter Leak Rate", lambda e: to_fixed(e.output.summary.filter_leak_rate, 4)),
    ]

    categories = sorted(
        {row.category for entry in entries for row in entry.category_breakdown}, key=category_sort_key
    )
    if categories:
        for title, attr in (
            ("Per-Category Facet Precision", "facet_precision"),
            ("Per-Category MRR@5", "mrr_at_5"),
        ):
            lines += [
                "",
                f"## {title}",
                "",
                f"| Category | {' | '.join(labels)} |",
                header[1].replace("Metric", "Category"),
            ]
            for category in categories:
                values: list[str] = []
                for entry in entries:
                    match = next((r for r in entry.category_breakdown if r.category == category), None)
                    values.append(to_fixed(float(getattr(match, attr)), 4) if match is not None else "-")
                lines.append(f"| {cell(category)} | {' | '.join(values)} |")
    return "\n".join(lines)
