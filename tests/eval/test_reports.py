"""Markdown reports: the run report and the benchmark comparison (the original's layout)."""

from __future__ import annotations

from typing import Any

from docs_mcp_eval.benchmark import BenchmarkEntry, BenchmarkResult, EmbeddingSpec, parse_embedding_specs
from docs_mcp_eval.benchmark_report import NO_RESULTS, render_benchmark_markdown
from docs_mcp_eval.metrics import build_result
from docs_mcp_eval.report import render_run_markdown
from docs_mcp_eval.results import EvalResult, EvalStats, RankedCase

MB = 1024 * 1024


def run_result(cases: list[RankedCase], **stats: Any) -> EvalResult:
    return build_result(cases, EvalStats(**stats))


def entry(
    label: str,
    cases: list[RankedCase],
    *,
    p50: float,
    p95: float,
    build: float,
    rss: float,
    index: int,
    corpus: int,
) -> BenchmarkEntry:
    spec = EmbeddingSpec.parse(label)
    output = run_result(
        cases,
        search_latencies_ms=[p50, p95],
        get_doc_latencies_ms=[1.0],
        build_time_ms=build,
        peak_rss_mb=rss,
    )
    return BenchmarkEntry(
        embedding=spec,
        output=output,
        category_breakdown=output.category_breakdown,
        corpus_size_bytes=corpus,
        index_size_bytes=index,
        index_size_multiple=index / corpus,
        cost_per_million_tokens=spec.cost_per_million_tokens,
    )


def rc(expected: str, ids: list[str], category: str | None = None, name: str | None = None) -> RankedCase:
    return RankedCase(
        expected_chunk_id=expected, ranked_chunk_ids=ids, rounds_to_right_doc=1, category=category, name=name
    )


def test_embedding_specs() -> None:
    none, hashed, openai = parse_embedding_specs(" none, hash ,,openai/text-embedding-3-small")
    assert (none.provider, none.model, none.label) == ("none", None, "none")
    assert hashed.label == "hash"
    assert (openai.provider, openai.model, openai.label) == (
        "openai",
        "text-embedding-3-small",
        "openai/text-embedding-3-small",
    )
    assert openai.cost_per_million_tokens == 0.02
    assert EmbeddingSpec.parse("openai").cost_per_million_tokens == 0.13  # default model 3-large
    assert EmbeddingSpec.parse("openai/unknown").cost_per_million_tokens == 0.0
    assert none.cost_per_million_tokens == 0.0


def test_benchmark_report_layout() -> None:
    corpus = int(28.8 * MB)
    none = entry(
        "none",
        [rc("a", ["a"], "exact-name"), rc("b", ["x", "b"], "workflow")],
        p50=5.2,
        p95=6.5,
        build=6022.4,
        rss=221.1,
        index=int(104.9 * MB),
        corpus=corpus,
    )
    openai = entry(
        "openai/text-embedding-3-large",
        [rc("a", ["x", "a"], "exact-name"), rc("c", ["c"], "clarification")],
        p50=258.44,
        p95=11101.1,
        build=1569703,
        rss=283.8,
        index=int(356.9 * MB),
        corpus=corpus,
    )
    text = render_benchmark_markdown(BenchmarkResult(embeddings=[none, openai]))
    assert text == "\n".join(
        [
            "## Summary",
            "",
            "| Metric | none | openai/text-embedding-3-large |",
            "| --- | ---: | ---: |",
            "| MRR@5 | 0.7500 | 0.7500 |",
            "| NDCG@5 | 0.8155 | 0.8155 |",
            "| Facet Precision | 1.0000 | 1.0000 |",
            "| Search p50 (ms) | 5.2 | 258.4 |",
            "| Search p95 (ms) | 6.5 | 11101.1 |",
            "| Build Time (ms) | 6022 | 1569703 |",
            "| Peak RSS (MB) | 221.1 | 283.8 |",
            "| Index Size (corpus 28.8MB) | 104.9MB | 356.9MB |",
            "| Embed Cost (est.) | $0 | $0.9815 |",
            "| Query Cost (est.) | $0 | $0.000003 |",
            "| Index Size / Corpus | 3.64x | 12.39x |",
            "| Get Doc p50 (ms) | 1.0 | 1.0 |",
            "| Filter Leak Rate | 0.0000 | 0.0000 |",
            "",
            "## Per-Category Facet Precision",
            "",
            "| Category | none | openai/text-embedding-3-large |",
            "| --- | ---: | ---: |",
            "| clarification | - | 1.0000 |",
            "| exact-name | 1.0000 | 1.0000 |",
            "| workflow | 1.0000 | - |",
            "",
            "## Per-Category MRR@5",
            "",
            "| Category | none | openai/text-embedding-3-large |",
            "| --- | ---: | ---: |",
            "| clarification | - | 1.0000 |",
            "| exact-name | 1.0000 | 0.5000 |",
            "| workflow | 0.5000 | - |",
        ]
    )


def test_benchmark_report_without_results() -> None:
    assert render_benchmark_markdown(BenchmarkResult()) == NO_RESULTS


def test_run_report_sections() -> None:
    cases = [
        rc("a.md#x", ["a.md#x"], "exact-name", "found"),
        RankedCase(
            expected_chunk_id="b.md#y",
            ranked_chunk_ids=["c.md#1", "c.md#2|pipe", "c.md#3", "c.md#4"],
            rounds_to_right_doc=4,
            name="missed",
            query="find b",
            filters={"language": "python"},
            returned_hits=4,
            leaked_chunk_ids=["c.md#2|pipe"],
        ),
    ]
    result = run_result(cases, search_latencies_ms=[1.0, 3.0], peak_rss_mb=12.34)
    result.delta_markdown = "| Metric | Baseline | Current | Delta |"
    text = render_run_markdown(result)
    assert "| MRR@5 | 0.5000 |" in text
    assert "| Avg Rounds to Right Doc | 2.50 |" in text
    assert "| Filter Leak Rate | 0.2500 (1 of 4 hits) |" in text
    assert "| Peak RSS (MB) | 12.3 |" in text
    assert "| exact-name | 1 | 1.0000 | 1.0000 | 1.0000 |" in text
    assert "| uncategorized | 1 | 0.0000 | 0.0000 | 0.0000 |" in text
    assert "| missed | - | find b | `b.md#y` | N/F | `c.md#1`<br>`c.md#2\\|pipe`<br>`c.md#3` |" in text
    assert "## Filter Leaks" in text
    assert "| missed | language=python | `c.md#2\\|pipe` |" in text
    assert text.rstrip().endswith("## Delta vs Baseline\n\n| Metric | Baseline | Current | Delta |")


def test_run_report_without_misses() -> None:
    text = render_run_markdown(run_result([rc("a", ["a"])]))
    assert "None: every expected chunk was in the top 5." in text
    assert "## Filter Leaks" not in text
    assert "## Delta" not in text
