"""The human-readable report of one run (Markdown).

Sections: a summary table (quality, filter leaks, latency, memory, build time), quality per category,
the misses with the ids that came back instead, any filter leaks, and the delta against a baseline
when one was given. Quality figures print with 4 decimals, latencies and memory with 1, build time
with 0, like the benchmark report; the JSON result keeps 6.
"""

from __future__ import annotations

from collections.abc import Mapping

from docs_mcp_eval.formatting import to_fixed
from docs_mcp_eval.results import EvalResult

QUALITY_DECIMALS = 4
LATENCY_DECIMALS = 1


def cell(text: str) -> str:
    """Make ``text`` safe inside a Markdown table cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def code(text: str) -> str:
    return f"`{cell(text)}`" if text else ""


def format_filters(filters: Mapping[str, str]) -> str:
    return ", ".join(f"{key}={value}" for key, value in filters.items()) if filters else "-"


def render_run_markdown(result: EvalResult, *, title: str = "docs-mcp eval") -> str:
    """Render ``result`` (and its ``delta_markdown``, if any) as a Markdown report."""
    measured = any(case.tokens_read is not None for case in result.ranked_cases)
    lines = [f"# {title}", "", *_summary_lines(result, measured=measured)]
    lines += _category_lines(result)
    lines += _miss_lines(result)
    lines += _leak_lines(result)
    if measured:
        lines += _token_lines(result)
    if result.delta_markdown:
        lines += ["", "## Delta vs Baseline", "", result.delta_markdown]
    return "\n".join(lines) + "\n"


def _summary_lines(result: EvalResult, *, measured: bool) -> list[str]:
    s = result.summary
    stats = result.stats
    q = QUALITY_DECIMALS
    lines = [
        "| Metric | Value |",
        "| --- | ---: |",
        f"| Cases | {len(result.ranked_cases)} |",
        f"| MRR@5 | {to_fixed(s.mrr_at_5, q)} |",
        f"| NDCG@5 | {to_fixed(s.ndcg_at_5, q)} |",
        f"| Facet Precision | {to_fixed(s.facet_precision, q)} |",
        f"| Avg Rounds to Right Doc | {to_fixed(s.avg_rounds_to_right_doc, 2)} |",
        f"| Filter Leak Rate | {to_fixed(s.filter_leak_rate, q)} ({stats.leaked_hits} of {stats.returned_hits} hits) |",
        f"| Search p50 (ms) | {to_fixed(s.search_p50_ms, LATENCY_DECIMALS)} |",
        f"| Search p95 (ms) | {to_fixed(s.search_p95_ms, LATENCY_DECIMALS)} |",
        f"| Get Doc p50 (ms) | {to_fixed(s.get_doc_p50_ms, LATENCY_DECIMALS)} |",
        f"| Build Time (ms) | {to_fixed(s.build_time_ms, 0)} |",
        f"| Peak RSS (MB) | {to_fixed(s.peak_rss_mb, LATENCY_DECIMALS)} |",
        f"| Spawn to Handshake (ms) | {to_fixed(s.startup_ms, 0)} |",
        f"| Spawn to First Search (ms) | {to_fixed(s.first_search_ms, 0)} |",
    ]
    if measured:
        lines += [
            f"| Tokens to Right Doc p50 | {to_fixed(s.tokens_to_right_doc_p50, 0)} |",
            f"| Tokens Read (total) | {to_fixed(s.tokens_read_total, 0)} |",
            f"| Get Doc Answers Cut | {to_fixed(s.get_doc_cut_rate, q)} |",
        ]
    if s.section_whole_rate is not None:
        lines.append(f"| Whole Section in One Call | {to_fixed(s.section_whole_rate, q)} |")
    return lines


def _category_lines(result: EvalResult) -> list[str]:
    q = QUALITY_DECIMALS
    lines: list[str] = []
    if result.category_breakdown:
        lines += [
            "",
            "## Per-Category",
            "",
            "| Category | Cases | Facet Precision | MRR@5 | NDCG@5 |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        lines += [
            f"| {cell(row.category)} | {row.case_count} | {to_fixed(row.facet_precision, q)}"
            f" | {to_fixed(row.mrr_at_5, q)} | {to_fixed(row.ndcg_at_5, q)} |"
            for row in result.category_breakdown
        ]
    return lines


def _miss_lines(result: EvalResult) -> list[str]:
    lines: list[str] = []
    lines += ["", "## Misses", ""]
    if result.misses:
        lines += [
            "| Case | Category | Query | Expected | Rank | Returned instead (top 3) |",
            "| --- | --- | --- | --- | ---: | --- |",
        ]
        for miss in result.misses:
            returned = "<br>".join(code(chunk_id) for chunk_id in miss.top_chunk_ids) or "(nothing)"
            rank = str(miss.rank) if miss.rank is not None else "N/F"
            lines.append(
                f"| {cell(miss.name)} | {cell(miss.category or '-')} | {cell(miss.query or '')}"
                f" | {code(miss.expected_chunk_id)} | {rank} | {returned} |"
            )
    else:
        lines.append("None: every expected chunk was in the top 5.")
    return lines


def _leak_lines(result: EvalResult) -> list[str]:
    lines: list[str] = []
    leaking = [(i, case) for i, case in enumerate(result.ranked_cases) if case.leaked_chunk_ids]
    if leaking:
        lines += [
            "",
            "## Filter Leaks",
            "",
            "| Case | Filters | Leaked hits |",
            "| --- | --- | --- |",
        ]
        for index, case in leaking:
            leaked = "<br>".join(code(chunk_id) for chunk_id in dict.fromkeys(case.leaked_chunk_ids))
            lines.append(f"| {cell(case.label(index))} | {cell(format_filters(case.filters))} | {leaked} |")
    return lines


def _token_lines(result: EvalResult) -> list[str]:
    lines: list[str] = []
    lines += [
        "",
        "## Tokens Read per Case",
        "",
        "| Case | Found | Rounds | Tokens | Get doc cut | Whole section |",
        "| --- | --- | ---: | ---: | --- | --- |",
    ]
    for index, case in enumerate(result.ranked_cases):
        if case.tokens_read is None:
            continue
        verdict = {None: "-", True: "yes", False: "no"}
        whole, cut = verdict[case.section_whole], verdict[case.doc_cut]
        found = "yes" if case.expected_chunk_id in case.ranked_chunk_ids else "no"
        lines.append(
            f"| {cell(case.label(index))} | {found} | {case.rounds_to_right_doc} | {case.tokens_read} | {cut} | {whole} |"
        )
    return lines
