"""Run history: every run saved as JSON under ``<results-dir>/<suite>/``, and the trend over them.

Files are named after the run's start time (``2026-12-03T10-15-42.123Z.json``), so they sort in run
order. The trend table shows the latest earlier runs next to the current one; below it, the scenarios
whose outcome changed since the previous run. Earlier files are read leniently (missing fields show as
``-``), so results written by the original tool fit in the same table; unreadable files are skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from docs_mcp_eval.agent.report_format import cost, number, percent, table
from docs_mcp_eval.errors import EvalError

DEFAULT_RESULTS_DIR = Path(".eval-results")
TREND_RUNS = 5


def suite_folder(results_dir: Path, suite: str) -> Path:
    name = re.sub(r"[^a-z0-9_-]+", "-", suite.lower()).strip("-")[:80] or "suite"
    return results_dir / name


def save_run(document: Mapping[str, Any], results_dir: Path, suite: str) -> Path:
    """Write ``document`` to a new file of the suite's folder and return its path."""
    folder = suite_folder(results_dir, suite)
    started = str(document.get("metadata", {}).get("startedAt") or "run")
    stem = re.sub(r"[^0-9A-Za-z._-]+", "-", started)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{stem}.json"
        counter = 1
        while path.exists():
            path = folder / f"{stem}-{counter}.json"
            counter += 1
        temporary = path.with_suffix(".json.tmp")
        temporary.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        temporary.replace(path)
    except OSError as exc:
        raise EvalError(f"cannot save the run under {folder}: {exc.strerror or exc}") from None
    return path


def load_runs(results_dir: Path, suite: str, limit: int = TREND_RUNS) -> list[dict[str, Any]]:
    """The suite's latest ``limit`` saved runs, oldest first."""
    folder = suite_folder(results_dir, suite)
    if not folder.is_dir():
        return []
    runs: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.json"), reverse=True):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            continue  # ValueError: not JSON, or an integer of over 4,300 digits; RecursionError: too deep
        if isinstance(data, dict) and isinstance(data.get("summary"), dict):
            if not isinstance(data.get("metadata"), dict):
                data["metadata"] = {}
            data["metadata"].setdefault("file", path.name)
            runs.append(data)
        if len(runs) >= limit:
            break
    runs.reverse()
    return runs


def _get(run: Mapping[str, Any], key: str) -> float | None:
    value = run.get("summary", {}).get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _label(run: Mapping[str, Any]) -> str:
    metadata = run.get("metadata", {})
    return str(metadata.get("startedAt") or metadata.get("file") or "?")


def trend_markdown(current: Mapping[str, Any], earlier: Sequence[Mapping[str, Any]]) -> str:
    """``## Trend`` with one row per earlier run plus the current one, and the outcome changes."""
    if not earlier:
        return ""
    rows = []
    for run in [*earlier, current]:
        name = _label(run) + (" (this run)" if run is current else "")
        scenarios = _get(run, "totalScenarios")
        skipped = _get(run, "skippedScenarios") or 0
        rows.append(
            [
                name,
                number(scenarios, 0) if scenarios is not None else "-",
                number(skipped, 0),
                percent(_get(run, "passRate")),
                percent(_get(run, "activationRate")),
                number(_get(run, "avgTurns"), 1),
                cost(_get(run, "avgCostUsd")),
                cost(_get(run, "totalCostUsd")),
                number(_get(run, "avgMcpToolCalls"), 1),
            ]
        )
    lines = [
        "## Trend",
        "",
        table(
            [
                "Run",
                "Scenarios",
                "Skipped",
                "Pass rate",
                "Activation",
                "Avg turns",
                "Avg cost",
                "Total cost",
                "Docs calls",
            ],
            rows,
            align="lrrrrrrrr",
        ),
    ]
    previous = earlier[-1]
    changes = _changes(previous, current)
    lines += ["", f"Compared with the previous run ({_label(previous)}):", ""]
    lines += changes or ["- no scenario changed outcome"]
    return "\n".join(lines) + "\n"


def _outcomes(run: Mapping[str, Any]) -> dict[str, str]:
    outcomes: dict[str, str] = {}
    for result in run.get("results", []) or []:
        if not isinstance(result, dict):
            continue
        key = str(result.get("id") or result.get("name") or "")
        if key:
            outcomes[key] = "SKIP" if result.get("skipped") else ("PASS" if result.get("passed") else "FAIL")
    return outcomes


def _changes(previous: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    before, after = _outcomes(previous), _outcomes(current)
    lines = []
    for scenario, now in after.items():
        was = before.get(scenario)
        if was is None or was == now or "SKIP" in (was, now):
            continue
        kind = "improvement" if now == "PASS" else "regression"
        lines.append(f"- **{scenario}**: {kind}, was {was}, now {now}")
    return lines
