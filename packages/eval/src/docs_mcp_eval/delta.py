"""Comparing a run against a baseline: the metric delta table plus per-case regressions and improvements.

The layout is the original's, byte for byte::

    | Metric | Baseline | Current | Delta |
    | --- | ---: | ---: | ---: |
    | MRR@5 | 0.500000 | 0.550000 | +0.050000 |
    ...

    ### Regressions

    - **<name>**: was rank 2, now rank N/F

    ### Improvements

    - **<name>**: now found at rank 1

Values use JavaScript ``toFixed(6)``; deltas are ``current - baseline`` with ``+`` when >= 0. The case
sections appear only when both sides carry case data; cases are matched by name (``case-<i>`` for
unnamed ones), a case passes when its expected chunk is in the top 5, and ranks count over every id
the server returned (so a chunk found on page 2 shows rank 6 or more).

A baseline file may be a run result of this harness or of the original (``{"summary", "rankedCases",
...}``), or a bare summary object.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docs_mcp_eval.cases import read_json_file
from docs_mcp_eval.errors import BaselineError
from docs_mcp_eval.formatting import signed_fixed, to_fixed
from docs_mcp_eval.results import TOP_K, EvalResult, EvalSummary, RankedCase

DELTA_DECIMALS = 6


@dataclass(frozen=True, kw_only=True)
class DeltaCase:
    """One case as the delta report sees it."""

    name: str
    passed: bool
    expected_chunk_id: str
    ranked_chunk_ids: Sequence[str]

    @property
    def rank_label(self) -> str:
        if self.expected_chunk_id in self.ranked_chunk_ids:
            return str(list(self.ranked_chunk_ids).index(self.expected_chunk_id) + 1)
        return "N/F"


@dataclass(frozen=True, kw_only=True)
class DeltaInput:
    """A summary plus (optionally) its cases: one side of the comparison."""

    summary: EvalSummary
    cases: Sequence[DeltaCase] = field(default_factory=tuple)


def to_delta_cases(cases: Sequence[RankedCase]) -> list[DeltaCase]:
    """Name cases like the original (``name`` or ``case-<i>``) and decide pass/fail at top 5."""
    return [
        DeltaCase(
            name=case.label(index),
            passed=case.expected_chunk_id in case.ranked_chunk_ids[:TOP_K],
            expected_chunk_id=case.expected_chunk_id,
            ranked_chunk_ids=list(case.ranked_chunk_ids),
        )
        for index, case in enumerate(cases)
    ]


def delta_input_from_result(result: EvalResult) -> DeltaInput:
    return DeltaInput(summary=result.summary, cases=to_delta_cases(result.ranked_cases))


_ROWS: tuple[tuple[str, str], ...] = (
    ("MRR@5", "mrr_at_5"),
    ("NDCG@5", "ndcg_at_5"),
    ("Avg Rounds to Right Doc", "avg_rounds_to_right_doc"),
    ("Facet Precision", "facet_precision"),
    ("Search p50 (ms)", "search_p50_ms"),
    ("Search p95 (ms)", "search_p95_ms"),
    ("Get Doc p50 (ms)", "get_doc_p50_ms"),
    ("Build Time (ms)", "build_time_ms"),
    ("Peak RSS (MB)", "peak_rss_mb"),
)


def render_delta_markdown(current: DeltaInput, baseline: DeltaInput) -> str:
    """The delta table (and regression/improvement lists) of ``current`` against ``baseline``."""
    lines = ["| Metric | Baseline | Current | Delta |", "| --- | ---: | ---: | ---: |"]
    for label, attr in _ROWS:
        before = float(getattr(baseline.summary, attr))
        after = float(getattr(current.summary, attr))
        lines.append(
            f"| {label} | {to_fixed(before, DELTA_DECIMALS)} | {to_fixed(after, DELTA_DECIMALS)}"
            f" | {signed_fixed(after - before, DELTA_DECIMALS)} |"
        )

    if current.cases and baseline.cases:
        by_name: dict[str, DeltaCase] = {}
        for case in baseline.cases:
            by_name[case.name] = case  # the last case of a repeated name wins, as in the original
        regressions = [
            c for c in current.cases if c.name in by_name and by_name[c.name].passed and not c.passed
        ]
        improvements = [
            c for c in current.cases if c.name in by_name and not by_name[c.name].passed and c.passed
        ]
        if regressions:
            lines += ["", "### Regressions", ""]
            lines += [
                f"- **{c.name}**: was rank {by_name[c.name].rank_label}, now rank {c.rank_label}"
                for c in regressions
            ]
        if improvements:
            lines += ["", "### Improvements", ""]
            lines += [f"- **{c.name}**: now found at rank {c.rank_label}" for c in improvements]
    return "\n".join(lines)


def load_baseline(path: str | Path) -> DeltaInput:
    """Read a baseline file (run result of either harness, or a bare summary)."""
    file = Path(path)
    data = read_json_file(
        file, "baseline", BaselineError, missing="baseline file not found", label=f"baseline {file}"
    )
    return parse_baseline(data, source=str(file))


def parse_baseline(data: Any, *, source: str = "<baseline>") -> DeltaInput:
    """Interpret decoded baseline JSON; raise :class:`BaselineError` when it is not an eval result."""
    if not isinstance(data, dict):
        raise BaselineError(
            f"baseline {source}: expected a JSON object with a 'summary', got {type(data).__name__}"
        )
    if "summary" in data:
        summary = data["summary"]
        if not isinstance(summary, dict):
            raise BaselineError(f"baseline {source}: 'summary' must be an object")
        raw_cases = data.get("rankedCases", [])
        if raw_cases is None:
            raw_cases = []
        if not isinstance(raw_cases, list):
            raise BaselineError(f"baseline {source}: 'rankedCases' must be an array")
        cases: list[RankedCase] = []
        for index, raw in enumerate(raw_cases):
            if not isinstance(raw, dict):
                raise BaselineError(f"baseline {source}: rankedCases[{index}] must be an object")
            try:
                cases.append(RankedCase.from_json(raw))
            except ValueError as exc:
                raise BaselineError(f"baseline {source}: rankedCases[{index}]: {exc}") from None
        return DeltaInput(summary=EvalSummary.from_json(summary), cases=to_delta_cases(cases))
    if "mrrAt5" in data:
        return DeltaInput(summary=EvalSummary.from_json(data))
    raise BaselineError(
        f"baseline {source}: not an eval result (expected a 'summary' object as written by"
        " 'docs-mcp-eval run --out', or a bare summary with 'mrrAt5')"
    )
