"""The LanceDB of the original docs-mcp (``@lancedb/lancedb`` 0.26.2 for Node), run from the tests
(``tests/compat``): the scripts in ``tests/compat/node`` and what they answer."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import REPO_ROOT

NODE_DIR = REPO_ROOT / "tests" / "compat" / "node"
LANCEDB_NODE_VERSION = "0.26.2"
NODE_SECONDS = 300


def run_node(node: str, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run one of the scripts of ``tests/compat/node``; LanceDB's warnings go to stderr."""
    env = {**os.environ, "LANCEDB_LOG": "warn", "RUST_BACKTRACE": "0"}
    return subprocess.run(
        [node, str(NODE_DIR / script), *args],
        capture_output=True,
        text=True,
        timeout=NODE_SECONDS,
        env=env,
        check=False,
    )


def lance_complaints(stderr: str) -> list[str]:
    """LanceDB's warnings, errors and panics in a Node script's stderr."""
    return [line for line in stderr.splitlines() if any(w in line for w in (" WARN ", " ERROR ", "panicked"))]


def original_answers(node: str, db: Path, queries: list[dict[str, Any]], work: Path) -> dict[str, Any]:
    """The answers of LanceDB 0.26.2 to ``queries`` (see ``original_queries.mjs``) on the table in ``db``.

    Fails the test when the script fails (a panic ends it) or LanceDB complains on the way (an
    index it cannot read is skipped with a warning).
    """
    work.mkdir(parents=True, exist_ok=True)
    plan = work / "plan.json"
    plan.write_text(json.dumps({"db": str(db), "table": "chunks", "queries": queries}), encoding="utf-8")
    result = run_node(node, "original_queries.mjs", str(plan))
    if result.returncode != 0:
        pytest.fail(
            f"LanceDB {LANCEDB_NODE_VERSION} failed on {db} ({result.returncode}):\n{result.stderr[-4000:]}"
        )
    complaints = lance_complaints(result.stderr)
    assert not complaints, f"LanceDB {LANCEDB_NODE_VERSION} complained about {db}:\n" + "\n".join(complaints)
    answers = json.loads(result.stdout)
    assert answers["lancedb"] == LANCEDB_NODE_VERSION
    return answers
