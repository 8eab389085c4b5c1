"""What a process imports to answer searches: only what answering needs, so a starting server's
first answer does not wait for modules it never uses."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from docs_mcp_core.search.row_catalog import members, sorted_unique

# modules a search answered from memory has no use for: heavy ones, PyYAML (prompt templates are
# parsed at build time) and tiktoken (token budgets only); and the project's own that only a build,
# get_doc, a token budget, a highlight, an index with embeddings or one of over 20,000 pages uses
NOT_NEEDED = (
    "numpy.ma",
    "markdown_it",
    "pyarrow",
    "lancedb",
    "yaml",
    "tiktoken",
    "docs_mcp_core.search.postings_builder",
    "docs_mcp_core.search.documents",
    "docs_mcp_core.search.budget",
    "docs_mcp_core.search.sections",
    "docs_mcp_core.search.highlight",
    "docs_mcp_core.embedding.factory",
    "docs_mcp_core.embedding.openai",
    "docs_mcp_core.search.heading_clusters",
)


@pytest.mark.integration  # starts a process
def test_answering_searches_imports_none_of_the_modules_it_does_not_need(built_index: Path) -> None:
    code = textwrap.dedent(
        f"""
        import json, sys
        from docs_mcp_core.search import SearchEngine
        engine = SearchEngine.open({str(built_index)!r})
        engine.warm()
        for query in ("retry configuration", "create a payment", "webhook signature verify",
                      "pagination", "idempotency key header"):
            hits = engine.search(query, limit=5).hits
            assert hits, query
        print(json.dumps([name for name in {NOT_NEEDED!r} if name in sys.modules]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("seed", range(5))
def test_members_and_sorted_unique_answer_as_numpy_does(seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 50, size=int(rng.integers(0, 200)), dtype=np.int64)
    within = rng.integers(0, 50, size=int(rng.integers(0, 60)), dtype=np.int32)
    assert np.array_equal(members(values, within), np.isin(values, within))
    unique = sorted_unique(values)
    assert np.array_equal(unique, np.unique(values)) and unique.dtype == values.dtype
