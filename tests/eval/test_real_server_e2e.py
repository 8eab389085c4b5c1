"""``docs-mcp-eval run`` against the project's real stack: ``docs-mcp build`` of examples/docs, served by
``docs-mcp-server`` over stdio, with tests/eval/cases/examples-cases.json.

Skipped while the server cannot serve yet (its ``--help`` fails or the core search engine is still a
stub). Ranking is not pinned here (the engine owns it); what must hold for any correct engine: the
build is timed, no hit violates its filters, the expected chunk ids exist in the built index, and the
plain lexical queries of the case file mostly land in the top 5.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration  # starts processes or listens on ports

HERE = Path(__file__).parent
EXAMPLE_CASES = HERE / "cases" / "examples-cases.json"
BIN = Path(sys.executable).parent


@cache
def unavailable_reason() -> str | None:
    server, cli = BIN / "docs-mcp-server", BIN / "docs-mcp"
    if not server.is_file() or not cli.is_file():
        return "docs-mcp-server / docs-mcp are not installed in this environment"
    try:
        completed = subprocess.run([str(server), "--help"], capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"docs-mcp-server --help failed: {exc}"
    if completed.returncode != 0:
        return "docs-mcp-server --help failed"
    try:
        from docs_mcp_core.search import SearchEngine

        SearchEngine.open(HERE / "no-such-index")
    except NotImplementedError:
        return "docs_mcp_core.search.SearchEngine is not implemented yet"
    except Exception:  # noqa: BLE001 - a real engine refuses a missing index with its own error: fine
        pass
    return None


def chunk_ids_in(data: Any) -> Iterator[str]:
    """Every ``chunk_id`` value anywhere in a decoded ``chunks.json``."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key == "chunk_id" and isinstance(value, str):
                yield value
            else:
                yield from chunk_ids_in(value)
    elif isinstance(data, list):
        for item in data:
            yield from chunk_ids_in(item)


@pytest.mark.slow
def test_examples_corpus_end_to_end(examples_docs: Path, tmp_path: Path) -> None:
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    index, out = tmp_path / "index", tmp_path / "result.json"
    build = shlex.join(
        [str(BIN / "docs-mcp"), "build", "--docs-dir", str(examples_docs), "--out", str(index)]
    )
    server = shlex.join([str(BIN / "docs-mcp-server"), "--index-dir", str(index)])
    completed = subprocess.run(
        [
            str(BIN / "docs-mcp-eval"),
            "run",
            "--cases",
            str(EXAMPLE_CASES),
            "--build-command",
            build,
            "--server-command",
            server,
            "--warmup-queries",
            "2",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    assert "| MRR@5 |" in completed.stdout

    result = json.loads(out.read_text(encoding="utf-8"))
    summary = result["summary"]
    cases = json.loads(EXAMPLE_CASES.read_text(encoding="utf-8"))
    assert len(result["rankedCases"]) == len(cases)
    assert summary["filterLeakRate"] == 0, result["rankedCases"]
    assert summary["buildTimeMs"] > 0
    assert summary["peakRssMb"] > 0
    assert summary["facetPrecision"] >= 0.5, result["misses"]

    built = set(chunk_ids_in(json.loads((index / "chunks.json").read_text(encoding="utf-8"))))
    expected = {case.get("expectedChunkId") or case.get("expected_chunk_id") for case in cases}
    assert expected <= built, sorted(expected - built)
    returned = {chunk_id for case in result["rankedCases"] for chunk_id in case["rankedChunkIds"]}
    assert returned <= built


@pytest.mark.slow
def test_budgets_and_sections_against_the_real_server(examples_docs: Path, tmp_path: Path) -> None:
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    index = tmp_path / "index"
    built = subprocess.run(
        [str(BIN / "docs-mcp"), "build", "--docs-dir", str(examples_docs), "--out", str(index)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-4000:]
    server = shlex.join([str(BIN / "docs-mcp-server"), "--index-dir", str(index)])

    def run(*extra: str) -> dict[str, Any]:
        out = tmp_path / f"result{len(extra)}.json"
        completed = subprocess.run(
            [
                *(str(BIN / "docs-mcp-eval"), "run", "--cases", str(EXAMPLE_CASES)),
                *("--server-command", server, "--out", str(out), *extra),
            ],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert completed.returncode == 0, completed.stderr[-4000:]
        return json.loads(out.read_text(encoding="utf-8"))

    plain = run()
    budgeted = run("--max-tokens", "250", "--scope", "section")
    meta = budgeted["metadata"]
    assert (meta["maxTokensSupported"], meta["scopeSupported"]) == (True, True)
    assert budgeted["summary"]["mrrAt5"] == plain["summary"]["mrrAt5"]
    assert budgeted["summary"]["tokensReadTotal"] < plain["summary"]["tokensReadTotal"]
    found = [c for c in budgeted["rankedCases"] if c["expectedChunkId"] in c["rankedChunkIds"]]
    assert found and all(isinstance(c["sectionWhole"], bool) for c in found)
    assert all(c["sectionWhole"] is not c["docCut"] for c in found)
    # a budget of 250 tokens per answer: no case read more than that per call it made
    for case in budgeted["rankedCases"]:
        calls = case["roundsToRightDoc"] + 1 if case in found else case["roundsToRightDoc"]
        assert case["tokensRead"] <= 250 * calls, case
    roomy = run("--max-tokens", "100000", "--scope", "section")
    assert roomy["summary"]["sectionWholeRate"] == 1.0
