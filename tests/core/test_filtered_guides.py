"""Under a language filter, a guide for every language answers when that language's own rows do not.

The auto-include rule admits every ``global-guide`` chunk into a ``language``-filtered search; a
reader who filters by language asks about that language's SDK, so a guide that says the same
words ranks below the SDK's own section, and still answers what the SDK's pages do not.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from docs_mcp_core.metadata import ORIGINAL_AUTO_INCLUDE
from docs_mcp_core.search import SearchEngine
from docs_mcp_core.search.filters import admitted_by_rule
from tests.support.tiny_corpus import build_pages, ranking_weights


def _manifest(metadata: dict[str, str]) -> str:
    return json.dumps({"version": "1", "strategy": {"chunk_by": "h2"}, "metadata": metadata})


GUIDE = """# Batch processing

## Create a batch job

Create a batch job from an uploaded requests file: the job runs every request offline, at a lower
price, and returns the job's id to poll until it completes.

## Poll a batch job

Read the job's status until it says it completed, then download its results.
"""

SDK = """# Batch jobs

## create

Create a batch job.

```{language}
client.batch.jobs.create(input_files=["requests.jsonl"], model="small")
```

## get

Get a batch job by its id.
"""


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pages = {
        "guides/.docs-mcp.json": _manifest({"scope": "global-guide"}),
        "guides/batch.md": GUIDE,
        "guides/models.md": "# Models\n\n## Choosing a model\n\nPick the smallest model that answers well.\n",
    }
    for language in ("python", "typescript"):
        pages[f"sdks/{language}/.docs-mcp.json"] = _manifest({"language": language, "scope": "sdk-specific"})
        pages[f"sdks/{language}/jobs.md"] = SDK.format(language=language)
    return build_pages(tmp_path_factory, "filtered-guides", pages)


def test_the_filtered_languages_section_ranks_above_a_guide_saying_the_same(index: Path) -> None:
    engine = SearchEngine.open(index)
    query, filters = "create a batch job from my requests file", {"language": "python"}
    hits = engine.search(query, limit=3, filters=filters).hits
    assert hits[0].chunk_id == "sdks/python/jobs.md#batch-jobs/create"
    assert "guides/batch.md#batch-processing/create-a-batch-job" in [h.chunk_id for h in hits]
    with ranking_weights(engine, included=1.0):  # the signal off: the guide's words win
        hits = engine.search(query, limit=3, filters=filters).hits
        assert hits[0].chunk_id == "guides/batch.md#batch-processing/create-a-batch-job"


def test_a_guide_still_answers_what_the_languages_pages_do_not(index: Path) -> None:
    engine = SearchEngine.open(index)
    hits = engine.search("choosing a model", limit=3, filters={"language": "typescript"}).hits
    assert hits[0].chunk_id == "guides/models.md#models/choosing-a-model"


def test_rows_pass_only_by_the_rule_when_their_value_is_not_the_filtered_one() -> None:
    values = ["go", "python"]
    codes = np.array([0, 1, -1, 1], dtype=np.int32)  # go, python, no language, python

    def code_of(key: str, value: str) -> tuple[np.ndarray, int] | None:
        return (codes, values.index(value) if value in values else -2) if key == "language" else None

    keys = ["language", "scope"]
    rows = np.array([0, 1, 2, 3])
    included = admitted_by_rule(rows, {"language": "python"}, keys, code_of, ORIGINAL_AUTO_INCLUDE)
    assert included is not None
    assert included.tolist() == [True, False, True, False]
    # the rule does not apply: the scope is filtered too, no rule, or no scope key in the taxonomy
    assert (
        admitted_by_rule(rows, {"language": "python", "scope": "x"}, keys, code_of, ORIGINAL_AUTO_INCLUDE)
        is None
    )
    assert admitted_by_rule(rows, {"language": "python"}, keys, code_of, None) is None
    assert (
        admitted_by_rule(rows, {"language": "python"}, ["language"], code_of, ORIGINAL_AUTO_INCLUDE) is None
    )
